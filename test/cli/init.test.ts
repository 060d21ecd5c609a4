/** `rl-design init` without a terminal: the built binary, stdin a closed pipe (not a TTY). */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';
import { PREVIOUS, PREVIOUS_TEXT } from '../questionnaire/support/previous.js';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'projects');
/** The installed package's schema, from an answers file at the project root. */
const LOCAL_SCHEMA = './node_modules/rl-design/schemas/answers.schema.json';

function project(name: string): string {
  const dir = tempDir(`rl-init-${name}-`);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** stdin is a pipe that is closed at once: no TTY, and anything that read from it would get EOF, not hang. */
function init(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'init', ...args], {
    cwd,
    input: '',
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SOURCE_DATE_EPOCH: '1767225600' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

const answersOf = (dir: string, file = 'rate-limit.answers.json') => JSON.parse(readFileSync(path.join(dir, file), 'utf8'));

describe('rl-design init --yes, no TTY (built binary)', () => {
  it('express + ioredis: detected facts become answers; answers file and document written', () => {
    const dir = project('express-ioredis');
    const r = init(dir, ['--yes', '--format', 'markdown', '--goals', 'overload,abuse']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('framework: express (package.json');
    expect(r.stdout).toContain('existing limiter: express-rate-limit 100 per minute (src/app.js');
    const a = answersOf(dir);
    expect(a.$schema).toBe(LOCAL_SCHEMA);
    expect(a).toMatchObject({
      project: { name: 'shop-api' },
      output: { format: 'markdown', path: 'docs/rate-limit-design.md' },
      goals: ['overload', 'abuse'],
      stack: { framework: 'express', language: 'JavaScript', store: 'redis' },
    });
    expect(a.unknown).toBeUndefined();
    expect(readFileSync(path.join(dir, 'docs/rate-limit-design.md'), 'utf8')).toContain('2026-01-01');
    expect(r.stdout).toMatch(/docs\/rate-limit-design\.md\s+the design document/);
  });

  it('fastify + OpenAPI: endpoints and identities from openapi.yaml', () => {
    const dir = project('fastify-openapi');
    const r = init(dir, ['--yes', '--format', 'md']);
    expect(r.code, r.stderr).toBe(0);
    const a = answersOf(dir);
    expect(a.stack).toEqual({ framework: 'fastify', language: 'TypeScript' });
    expect(a.identities).toEqual(['user']);
    expect(a.endpoints.map((e: { name: string }) => e.name)).toContain('login');
    expect(a.endpoints).toHaveLength(14);
    // auto layout: one file, or a linked folder once the document is large (the migration table of its two limiters adds to it)
    expect(existsSync(path.join(dir, 'docs/rate-limit-design.md')) || existsSync(path.join(dir, 'docs/rate-limit-design/README.md'))).toBe(
      true,
    );
    expect(r.stdout).toMatch(/auth-login-per-ip\s+\S+/);
  });

  it("with a code folder, the summary names the OpenAPI Overlay written for the project's openapi.yaml", () => {
    const dir = project('fastify-openapi');
    const r = init(dir, ['--yes', '--format', 'md', '--code-dir', 'src/limits']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'src/limits/openapi/rate-limits.overlay.yaml'))).toBe(true);
    expect(r.stdout).toMatch(/src\/limits\s+enforcement code: \d+ files \(Lua scripts, Fastify middleware/);
    expect(r.stdout).toMatch(/src\/limits\/openapi\/rate-limits\.overlay\.yaml\s+the OpenAPI Overlay of the API's own document/);
  });

  it('nginx only: gateway and trusted proxies from nginx.conf', () => {
    const dir = project('nginx-only');
    const r = init(dir, ['--yes', '--format', 'markdown']);
    expect(r.code, r.stderr).toBe(0);
    expect(answersOf(dir).stack).toEqual({ gateway: 'nginx', trustedProxies: ['10.0.0.0/8'] });
  });

  it('empty folder, no flags, no --yes: it says there is no terminal, never blocks, and writes the generic design as HTML', () => {
    const dir = project('empty');
    const r = init(dir, []);
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('No terminal on standard input');
    expect(r.stdout).toContain('no package.json, OpenAPI file, nginx, Envoy or Kong configuration found');
    expect(answersOf(dir)).toEqual({ $schema: LOCAL_SCHEMA, output: { format: 'html', path: 'docs/rate-limit-design.html' } });
    expect(existsSync(path.join(dir, 'docs/rate-limit-design.html'))).toBe(true);
    expect(r.stdout).toContain('generic design');
  });

  it('writes the document where the answers say, as one file for a file path, even for a design long enough to split', () => {
    const dir = project('fastify-openapi');
    const r = init(dir, ['--yes', '--plan', 'free:60/minute:10000', '--plan', 'pro:600/minute', '--outbound', 'stripe:100/second']);
    expect(r.code, r.stderr).toBe(0);
    const a = answersOf(dir);
    expect(a.output).toEqual({ format: 'html', path: 'docs/rate-limit-design.html' });
    // the answers keep the path that was written: the file, not a folder beside it
    expect(statSync(path.join(dir, 'docs/rate-limit-design.html')).isFile()).toBe(true);
    expect(existsSync(path.join(dir, 'docs/rate-limit-design'))).toBe(false);
  });

  it('points $schema at the installed package from wherever the answers file is', () => {
    const dir = project('empty');
    mkdirSync(path.join(dir, 'config'));
    const r = init(dir, ['--yes', '--answers-file', 'config/limits.answers.json']);
    expect(r.code, r.stderr).toBe(0);
    const a = answersOf(dir, 'config/limits.answers.json');
    expect(a.$schema).toBe('../node_modules/rl-design/schemas/answers.schema.json');
    // the path resolves once the package is installed (test/cli/pack.test.ts installs the tarball)
    expect(path.resolve(dir, 'config', a.$schema)).toBe(path.join(dir, 'node_modules/rl-design/schemas/answers.schema.json'));
  });

  it('every question has a flag: a complete answers file from flags alone', () => {
    const dir = project('empty');
    const r = init(dir, [
      '--yes',
      '--name',
      'Payments API',
      '--format',
      'markdown',
      '--out',
      'design/limits.md',
      '--layout',
      'single',
      '--code-dir',
      'src/limits',
      '--goals',
      'overload,abuse,fairness,quotas',
      '--language',
      'TypeScript',
      '--framework',
      'fastify',
      '--topology',
      'horizontal',
      '--instances',
      '6',
      '--gateway',
      'envoy',
      '--store',
      'redis-cluster',
      '--trusted-proxies',
      '10.0.0.0/8',
      '--identities',
      'api-key,tenant,ip',
      '--endpoint',
      'login=POST /v1/login auth',
      '--endpoint',
      'GET /v1/search search',
      '--typical-rps',
      '200',
      '--peak-rps',
      '800',
      '--capacity-rps',
      '2000',
      '--burstiness',
      'high',
      '--clients',
      '500',
      '--tenants',
      '100',
      '--users',
      '20000',
      '--plan',
      'free:60/minute:10000',
      '--plan',
      'pro:600/minute:1000000',
      '--quota-reset',
      'calendar-month',
      '--quota-time-zone',
      'America/New_York',
      '--exhaustion',
      'soft-warning',
      '--fail-mode',
      'auth=closed,search=closed',
      '--outbound',
      'stripe:100/second',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const a = answersOf(dir);
    expect(a).toMatchObject({
      project: { name: 'Payments API' },
      output: { format: 'markdown', layout: 'single', path: 'design/limits.md', codeDir: 'src/limits' },
      goals: ['overload', 'abuse', 'fairness', 'quotas'],
      stack: {
        language: 'TypeScript',
        framework: 'fastify',
        topology: 'horizontal',
        instances: 6,
        gateway: 'envoy',
        store: 'redis-cluster',
        trustedProxies: ['10.0.0.0/8'],
      },
      identities: ['api-key', 'tenant', 'ip'],
      traffic: {
        typicalRps: 200,
        peakRps: 800,
        capacityRps: 2000,
        burstiness: 'high',
        distinctClients: 500,
        distinctTenants: 100,
        distinctUsers: 20000,
      },
      quotas: { reset: { kind: 'calendar', period: 'month', timeZone: 'America/New_York' }, exhaustion: 'soft-warning' },
      failure: { byClass: { auth: 'closed', search: 'closed' } },
      outbound: [{ name: 'stripe', limit: { requests: 100, per: 'second' } }],
    });
    expect(a.endpoints).toHaveLength(2);
    expect(a.plans).toHaveLength(2);
    expect(existsSync(path.join(dir, 'design/limits.md'))).toBe(true);
    expect(existsSync(path.join(dir, 'src/limits/middleware/fastify.ts'))).toBe(true);
    expect(existsSync(path.join(dir, 'src/limits/gateway/envoy-local-ratelimit.yaml'))).toBe(true);
    expect(r.stdout).toMatch(/src\/limits\s+enforcement code: \d+ files/);
  });

  it('previous answers become the defaults with --yes: every answer kept over detected facts, the file not rewritten (same bytes, inode and mtime)', () => {
    const dir = project('fastify-openapi');
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, PREVIOUS_TEXT);
    const before = statSync(file);
    const r = init(dir, ['--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Read the previous answers in rate-limit.answers.json: every one is kept unless a flag changes it');
    expect(r.stdout).toContain('rate-limit.answers.json: no answer changed; the file is left as it was.');
    expect(readFileSync(file, 'utf8')).toBe(PREVIOUS_TEXT);
    const after = statSync(file);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    // The document and the code follow the previous answers, not the project's fastify + OpenAPI.
    expect(readFileSync(path.join(dir, 'docs/limits.md'), 'utf8')).toContain('Acme Orders API');
    expect(existsSync(path.join(dir, 'ratelimit/middleware/express.ts'))).toBe(true);
    expect(existsSync(path.join(dir, 'ratelimit/middleware/fastify.ts'))).toBe(false);
  });

  it('a flag changes exactly one answer: everything else kept, the file rewritten without --force', () => {
    const dir = project('fastify-openapi');
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, PREVIOUS_TEXT);
    const r = init(dir, ['--yes', '--peak-rps', '3000']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('rate-limit.answers.json: changed traffic.peakRps; every other answer kept.');
    const expected = Answers.parse(PREVIOUS) as Record<string, unknown>;
    expect(answersOf(dir)).toEqual({ ...expected, traffic: { ...(expected.traffic as object), peakRps: 3000 } });
    // and run again with the same flag: nothing left to change
    const text = readFileSync(file, 'utf8');
    const ino = statSync(file).ino;
    const again = init(dir, ['--yes', '--peak-rps', '3000']);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(statSync(file).ino).toBe(ino);
  });

  it('an answers file that does not load: exit 2 naming the file and the problem, nothing written; --force starts from scratch', () => {
    const dir = project('empty');
    for (const [name, text, problem] of [
      ['rate-limit.answers.json', '{ "goals": ["quotas"], }\n', 'rl-design: Answers file rate-limit.answers.json is not valid JSON: '],
      [
        'config/limits.json',
        '{ "goals": ["quotas"], "stack": { "framework": "rails" } }\n',
        'rl-design: Answers file config/limits.json has 1 problem(s):\n  $.stack.framework: must be one of "express"',
      ],
      [
        'rate-limit.answers.json',
        '{ "goals": ["quotas"], "limits": 5 }\n',
        'rl-design: Answers file rate-limit.answers.json has 1 problem(s):\n  $: has unknown field(s) "limits"',
      ],
    ] as const) {
      const file = path.join(dir, name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      const args = name === 'rate-limit.answers.json' ? ['--yes'] : ['--yes', '--answers-file', name];
      const r = init(dir, args);
      expect(r.code).toBe(2);
      expect(r.stderr.startsWith(problem), r.stderr).toBe(true);
      expect(r.stderr).toMatch(
        /\nrl-design: init reuses an existing answers file as its defaults, and will not replace one it cannot load: nothing was written\. Fix it, or re-run with --force to start from scratch and replace it\.\n$/,
      );
      expect(r.stdout).toBe('');
      expect(readFileSync(file, 'utf8')).toBe(text);
      expect(existsSync(path.join(dir, 'docs'))).toBe(false);
      rmSync(file);
    }

    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, '{ "goals": ["speed"] }\n');
    const forced = init(dir, ['--yes', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('Answers file rate-limit.answers.json has 1 problem(s):');
    expect(forced.stdout).toContain('--force: starting from scratch; rate-limit.answers.json will be replaced.');
    // From scratch: exactly what a first run in this empty folder writes.
    expect(answersOf(dir)).toEqual({ $schema: LOCAL_SCHEMA, output: { format: 'html', path: 'docs/rate-limit-design.html' } });
    expect(existsSync(path.join(dir, 'docs/rate-limit-design.html'))).toBe(true);
  });

  it('bad flag values: exit 2 with one message naming the flag and what is allowed', () => {
    const dir = project('empty');
    for (const [args, message] of [
      [
        ['--trusted-proxies', '10.0.0.0/33'],
        'Option --trusted-proxies: "10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8',
      ],
      [
        ['--quota-time-zone', 'Mars/Olympus'],
        'Option --quota-time-zone: "Mars/Olympus" must be an IANA time zone such as UTC, Europe/Berlin or America/New_York',
      ],
      [['--peak-rps', '-5'], 'Option --peak-rps: -5 must be greater than 0, e.g. 600'],
      [['--endpoint', 'GET orders read'], 'Option --endpoint: "orders" must start with "/", e.g. /v1/orders/:id'],
    ] as const) {
      const r = init(dir, ['--yes', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`rl-design: ${message}\n`);
    }
    expect(existsSync(path.join(dir, 'rate-limit.answers.json'))).toBe(false);
  });

  it('documents its flags in --help', () => {
    const r = init(ROOT, ['--help']);
    expect(r.code).toBe(0);
    for (const flag of [
      '--format',
      '--out',
      '--code-dir',
      '--goals',
      '--framework',
      '--trusted-proxies',
      '--peak-rps',
      '--plan',
      '--fail-mode',
      '--outbound',
      '--yes',
      '--answers-file',
    ]) {
      expect(r.stdout).toContain(flag);
    }
    const help = r.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('ask nothing: use flags, then the previous answers, detected facts and defaults');
    expect(help).toContain('when it exists, its answers are the defaults, and it is rewritten only if one changed');
    expect(help).toContain('replace an answers file that is not valid, starting from scratch');
    // plain words: the numbers are the interview's questions, said so; no internal phase names
    expect(help).not.toMatch(/Phase \d/);
    expect(help).toContain('Q1-Q7 in front of a flag: the interview question it answers');
    expect(help).toMatch(/--goals <list>\s+Q1 what to protect against/);
  });
});

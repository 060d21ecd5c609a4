/** `rl-design init` without a terminal: the built binary, stdin a closed pipe (not a TTY). */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_URL } from '../../src/answers/schema.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'projects');

function project(name: string): string {
  const dir = tempDir(`rl-init-${name}-`);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** stdin is a pipe that is closed at once: no TTY, and anything that read from it would get EOF, not hang. */
function init(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'init', ...args], { cwd, input: '', encoding: 'utf8', timeout: 60_000, env: { ...process.env, SOURCE_DATE_EPOCH: '1767225600' } });
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
    expect(a.$schema).toBe(SCHEMA_URL);
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
    expect(existsSync(path.join(dir, 'docs/rate-limit-design.md'))).toBe(true);
    expect(r.stdout).toMatch(/auth-login-per-ip\s+\S+/);
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
    expect(answersOf(dir)).toEqual({ $schema: SCHEMA_URL, output: { format: 'html', path: 'docs/rate-limit-design.html' } });
    expect(existsSync(path.join(dir, 'docs/rate-limit-design.html'))).toBe(true);
    expect(r.stdout).toContain('generic design');
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
      stack: { language: 'TypeScript', framework: 'fastify', topology: 'horizontal', instances: 6, gateway: 'envoy', store: 'redis-cluster', trustedProxies: ['10.0.0.0/8'] },
      identities: ['api-key', 'tenant', 'ip'],
      traffic: { typicalRps: 200, peakRps: 800, capacityRps: 2000, burstiness: 'high', distinctClients: 500, distinctTenants: 100, distinctUsers: 20000 },
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

  it('a different answers file already there: exit 2 without --force, replaced with it', () => {
    const dir = project('empty');
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, '{ "goals": ["quotas"] }\n');
    const refused = init(dir, ['--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'rl-design: Refusing to replace rate-limit.answers.json: it exists and differs from these answers. Re-run with --force to replace it, or with --answers-file to write somewhere else.\n',
    );
    expect(readFileSync(file, 'utf8')).toBe('{ "goals": ["quotas"] }\n');
    expect(existsSync(path.join(dir, 'docs'))).toBe(false);
    const forced = init(dir, ['--yes', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(answersOf(dir).goals).toBeUndefined();
    const same = init(dir, ['--yes']);
    expect(same.code, same.stderr).toBe(0);
  });

  it('bad flag values: exit 2 with one message naming the flag and what is allowed', () => {
    const dir = project('empty');
    for (const [args, message] of [
      [['--trusted-proxies', '10.0.0.0/33'], 'Option --trusted-proxies: "10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8'],
      [['--quota-time-zone', 'Mars/Olympus'], 'Option --quota-time-zone: "Mars/Olympus" must be an IANA time zone such as UTC, Europe/Berlin or America/New_York'],
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
    for (const flag of ['--format', '--out', '--code-dir', '--goals', '--framework', '--trusted-proxies', '--peak-rps', '--plan', '--fail-mode', '--outbound', '--yes', '--answers-file']) {
      expect(r.stdout).toContain(flag);
    }
  });
});

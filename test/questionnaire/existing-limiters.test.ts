/**
 * An Express app with express-rate-limit (100 per 15 min on /api/, 5 per minute on POST
 * /api/login) behind nginx with two limit_req zones (20r/s burst 40 at server level, 10r/m
 * burst 5 in location /api/login): `init` carries all four into the answers, the document
 * sets each beside its replacement route by route, the login limit per IP is not loosened,
 * and the generated nginx, included in the app's own nginx.conf, passes a real `nginx -t`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { buildDesign } from '../../src/design/build.js';
import { nodeProjectFs } from '../../src/io/project-fs.js';
import { detectProject, factsToAnswers } from '../../src/questionnaire/detect/index.js';
import { nginxBinary } from '../codegen/support/nginx.js';
import { CLI, tempDir } from '../helpers/cli.js';

const FIXTURE = new URL('./fixtures/express-limiters/', import.meta.url).pathname;

function project(): string {
  const dir = tempDir('rl-existing-');
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const ENDPOINTS = [
  'login=POST /api/login auth',
  'list-products=GET /api/products read anonymous',
  'get-product=GET /api/products/:id read anonymous',
  'create-order=POST /api/orders write anonymous',
  'healthz=GET /healthz health anonymous',
];

function init(dir: string) {
  const args = [
    'init',
    '--yes',
    '--format',
    'markdown',
    '--layout',
    'single',
    '--goals',
    'overload,abuse',
    '--identities',
    'ip',
    '--code-dir',
    'rl',
  ];
  for (const e of ENDPOINTS) args.push('--endpoint', e);
  const r = spawnSync(process.execPath, [CLI, ...args, '--date', '2026-12-03'], { cwd: dir, input: '', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The scanned nginx.conf with the generated files included where their headers say. */
function withGenerated(dir: string, codeDir: string): string {
  const conf = readFileSync(path.join(dir, 'nginx.conf'), 'utf8')
    .replace('pid /tmp/rl-fixture-nginx.pid;', `pid ${path.join(dir, 'nginx.pid')};`)
    .replace('    access_log off;', `    access_log off;\n    include ${path.join(codeDir, 'gateway', 'nginx.conf')};`)
    .replace(
      '        limit_req zone=api burst=40;',
      `        limit_req zone=api burst=40;\n        include ${path.join(codeDir, 'gateway', 'nginx-server.conf')};`,
    );
  const file = path.join(dir, 'nginx-with-ratelimit.conf');
  writeFileSync(file, conf);
  return file;
}

function nginxT(dir: string, conf: string): { ok: boolean; output: string } {
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const r = spawnSync(nginxBinary(), ['-t', '-p', dir, '-c', conf, '-e', path.join(dir, 'logs', 'error.log')], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

describe('existing limiters found by init enter the answers and the design', () => {
  it('detects all four with file and line and maps them onto the answers', async () => {
    const dir = project();
    const existing = factsToAnswers((await detectProject(nodeProjectFs(dir))).facts).existing;
    expect(existing?.limiters).toEqual([
      {
        kind: 'express-rate-limit',
        name: 'apiLimiter',
        source: 'src/app.js:8',
        path: '/api/',
        match: 'prefix',
        keyedOn: 'ip',
        limit: 100,
        windowSeconds: 900,
        algorithm: 'fixed-window',
      },
      {
        kind: 'express-rate-limit',
        name: 'loginLimiter',
        source: 'src/app.js:12',
        method: 'POST',
        path: '/api/login',
        match: 'exact',
        keyedOn: 'ip',
        limit: 5,
        windowSeconds: 60,
        algorithm: 'fixed-window',
      },
      {
        kind: 'nginx',
        name: 'api',
        source: 'nginx.conf:26',
        keyedOn: 'ip',
        limit: 20,
        windowSeconds: 1,
        burst: 40,
        algorithm: 'leaky-bucket',
      },
      {
        kind: 'nginx',
        name: 'login',
        source: 'nginx.conf:29',
        path: '/api/login',
        match: 'prefix',
        location: true,
        keyedOn: 'ip',
        limit: 10,
        windowSeconds: 60,
        burst: 5,
        algorithm: 'leaky-bucket',
      },
    ]);
    expect(existing?.nginx?.map((d) => `${d.name} ${d.value} (${d.context})`)).toEqual([
      'limit_req_status 429 (http)',
      'set_real_ip_from 10.0.0.0/8 (http)',
      'real_ip_header X-Forwarded-For (http)',
      'real_ip_recursive on (http)',
    ]);
  });

  it('init writes them into the answers file; the document has the current -> new table per route, and login per IP stays 5 per minute', () => {
    const dir = project();
    const r = init(dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Existing limiters (4) go into the answers as existing.limiters');
    expect(r.stdout).toMatch(
      /Existing limiters: 4 set beside their replacements, route by route \(\d+ looser, \d+ tighter, 1 kept, 1 nginx location\(s\) hiding the edge rules\)/,
    );
    const answers = Answers.parse(JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8')));
    expect(answers.existing?.limiters).toHaveLength(4);

    const design = buildDesign(answers, { date: '2026-12-03' });
    // not silently loosened from 5/min to the 100 per 15 min default
    expect(design.rules.find((x) => x.id === 'auth-login-per-ip')).toMatchObject({
      rate: { requests: 5, periodSeconds: 60 },
      keptFrom: 'express-rate-limit loginLimiter (src/app.js:12)',
    });

    const md = readFileSync(path.join(dir, 'docs', 'rate-limit-design.md'), 'utf8');
    expect(md).toContain('Migration from the existing limiters');
    // taken over, and tighter: the old fixed window, in the memory of each of the 3 instances (express-rate-limit's
    // default store), let 5 per window through at each, 10 across a reset, 30 for the fleet; the new rule 5 for the fleet
    expect(md).toContain(
      '| express-rate-limit loginLimiter (src/app.js:12) | POST /api/login (login) | ip | 5 per 1 min (fixed window) | 30 across a reset (15 per window): 10 at each of 3 instances | auth-login-per-ip: 5 per 1 min (5) | 5 | kept (taken over), WARNING: tighter |',
    );
    expect(md).toContain('Warning, tighter: before, one ip could send 5 requests within one of its 1 min windows');
    // express-rate-limit counts in fixed windows: 100 at the end of one 15 min window and 100 more at the start of the next, in each instance
    expect(md).toContain(
      '| express-rate-limit apiLimiter (src/app.js:8) | GET /api/products (list-products) | ip | 100 per 15 min (fixed window) | 600 across a reset (300 per window): 200 at each of 3 instances |',
    );
    // nginx's limit_req drains at its rate: one request plus the burst of 5 at once, then 10 a
    // minute, whatever the minute, at each of the 3 nginx nodes assumed (one per instance)
    expect(md).toMatch(
      /\| nginx login \(nginx\.conf:29\) \| POST \/api\/login \(login\) \| ip \| 10r\/m, burst 5 \(leaky bucket\) \| 48: 16 at each of 3 nginx nodes \|/,
    );
    expect(md).toMatch(
      /\| express-rate-limit apiLimiter \(src\/app\.js:8\) \| GET \/api\/products \(list-products\) \|[^\n]*\| WARNING: looser \|/,
    );
    expect(md).toMatch(/\| nginx login \(nginx\.conf:29\) \| POST \/api\/login \(login\) \|[^\n]*\| WARNING: tighter \|/);
    // the server-level zone does not reach /api/login, whose location has its own limit_req
    expect(md).not.toMatch(/\| nginx api \(nginx\.conf:26\) \| POST \/api\/login/);
    expect(md).toContain(
      'location /api/login (nginx.conf:29) has its own limit_req (zone login): nginx then ignores every limit_req of the server level inside it',
    );
    expect(md).toMatch(
      /Retire the existing limiters\*\*: [^\n]*express-rate-limit apiLimiter \(src\/app\.js:8\) \(only after its warnings/,
    );
  });

  it('the generated nginx included in the scanned nginx.conf passes nginx -t; without the existing settings in the answers it fails on a duplicate', () => {
    const dir = project();
    expect(init(dir).code).toBe(0);
    const http = readFileSync(path.join(dir, 'rl', 'gateway', 'nginx.conf'), 'utf8');
    expect(http).toContain(
      '# real_ip_header X-Forwarded-For; left out: nginx.conf:16 already sets real_ip_header X-Forwarded-For in http {}',
    );
    expect(http).toContain('# limit_req_status 429; left out: nginx.conf:13 already sets limit_req_status 429 in http {}');
    const ok = nginxT(dir, withGenerated(dir, path.join(dir, 'rl')));
    expect(ok.output).toContain('test is successful');
    expect(ok.ok).toBe(true);

    // the same design without what init found about the scanned config: nginx refuses it
    const answers = Answers.parse(JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8')));
    const { nginx: _found, ...rest } = answers.existing ?? {};
    const blind = buildDesign({ ...answers, existing: rest }, { date: '2026-12-03' });
    const other = path.join(dir, 'blind');
    mkdirSync(path.join(other, 'gateway'), { recursive: true });
    for (const f of generateNginx(blind)) writeFileSync(path.join(other, f.path), f.content);
    const bad = nginxT(dir, withGenerated(dir, other));
    expect(bad.ok).toBe(false);
    expect(bad.output).toMatch(/"(?:limit_req_status|real_ip_header)" directive is duplicate/);
  });
});

describe('a limiter whose routes or key the scan cannot name', () => {
  it('one row for a limiter keyed on something the scan could not read, never one warning per route', () => {
    const design = buildDesign(
      Answers.parse({
        goals: ['overload'],
        stack: { store: 'redis' },
        endpoints: [
          { name: 'a', method: 'GET', route: '/v1/a', class: 'read' },
          { name: 'b', method: 'GET', route: '/v1/b', class: 'read' },
        ],
        existing: {
          limiters: [{ kind: 'rate-limiter-flexible', source: 'src/limits.ts:3', keyedOn: 'other', limit: 10, windowSeconds: 1 }],
        },
      }),
      { date: '2026-12-03' },
    );
    expect(design.migration?.items).toHaveLength(1);
    expect(design.migration?.items[0]).toMatchObject({ verdict: 'uncovered', keyedOn: 'other' });
    expect(design.migration?.items[0]?.note).toContain('Counts per a key the scan could not read');
  });

  it('is kept with where it applies, and the migration says to compare it by hand instead of guessing', async () => {
    const { fixture } = await import('./detect/fixtures.js');
    const existing = factsToAnswers((await detectProject(fixture('kong'))).facts).existing;
    const unnamed = existing?.limiters?.find((l) => l.kind === 'kong:rate-limiting-advanced');
    expect(unnamed).toMatchObject({ match: 'unknown', scope: 'route login', limit: 5, windowSeconds: 60 });
    const design = buildDesign(
      Answers.parse({
        goals: ['overload'],
        stack: { gateway: 'kong', store: 'redis' },
        endpoints: [{ name: 'list', method: 'GET', route: '/v1/items', class: 'read' }],
        existing,
      }),
      { date: '2026-12-03' },
    );
    const row = design.migration?.items.find((i) => i.kind === 'kong:rate-limiting-advanced');
    expect(row).toMatchObject({ verdict: 'uncovered', covers: 'route login' });
    expect(row?.note).toContain('compare it with the rules on those routes by hand');
  });
});

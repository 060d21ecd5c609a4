/**
 * `rl-design verify` against real redis-servers: the built binary on every example, --write
 * into the document (both formats, both layouts), broken Lua fixtures that must fail the
 * right scenario, an eviction policy that must be warned about, a replica that must be
 * refused, and a user's Redis whose other keys must survive untouched.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runVerify, type VerifyIo } from '../../src/commands/verify.js';
import type { CommandContext } from '../../src/commands/context.js';
import { checkDesign } from '../../src/constraints/index.js';
import { sha256 } from '../../src/io/write.js';
import { UserError } from '../../src/messages.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { openStore, startRedisServer } from '../../src/verify/redis.js';
import { applyResults, resultsOf } from '../../src/verify/results.js';
import type { VerifyReport } from '../../src/verify/types.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { EXAMPLES, exampleDesign, exampleNames, ROOT } from '../helpers/examples.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'verify');
const DATE = '2026-12-02';
const EPOCH = String(Date.parse(`${DATE}T12:00:00Z`) / 1000);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built binary, asynchronously (so several runs can overlap). */
function cli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: options.cwd ?? ROOT,
        env: { ...process.env, SOURCE_DATE_EPOCH: EPOCH, ...options.env },
        timeout: 60_000,
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

function capture(cwd: string): { ctx: CommandContext; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    ctx: { cwd, stdout: (t) => (out += t), stderr: (t) => (err += t), today: () => DATE },
    out: () => out,
    err: () => err,
  };
}

function io(over: Partial<VerifyIo> = {}): VerifyIo {
  return { stderrIsTTY: false, startServer: () => startRedisServer(), openStore: (t, s) => openStore(t, s), ...over };
}

function copyExample(name: string, edit?: (answers: Record<string, unknown>) => void): { dir: string; file: string } {
  const dir = tempDir('rl-verify-write-');
  const file = path.join(dir, `${name}.answers.json`);
  if (edit) {
    const answers = JSON.parse(readFileSync(path.join(EXAMPLES, `${name}.answers.json`), 'utf8')) as Record<string, unknown>;
    edit(answers);
    writeFileSync(file, `${JSON.stringify(answers, null, 2)}\n`);
  } else {
    copyFileSync(path.join(EXAMPLES, `${name}.answers.json`), file);
  }
  // the example's OpenAPI document (openapi.path is relative to the answers file)
  for (const f of readdirSync(EXAMPLES).filter((n) => n.startsWith(`${name}.openapi.`)))
    copyFileSync(path.join(EXAMPLES, f), path.join(dir, f));
  return { dir, file };
}

/** The verifiable rules of a report must each have run these scenarios and passed them. */
function expectAllPassed(report: VerifyReport): void {
  const failed = report.results.filter((r) => r.status === 'failed');
  expect(failed.map((r) => `${r.ruleId} ${r.scenario}: ${r.measured} ${r.detail}`)).toEqual([]);
  expect(report.passed).toBe(true);
}

/** The test-scenario section of a Markdown document. */
function scenarioSection(markdown: string): string {
  const start = markdown.search(/^## \d+\. Test scenarios$/m);
  expect(start).toBeGreaterThanOrEqual(0);
  const rest = markdown.slice(start);
  const end = rest.slice(3).search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end + 3);
}

describe('rl-design verify on every example (built binary, a redis-server it starts)', () => {
  const json = new Map<string, Run>();
  let table: Run;
  beforeAll(async () => {
    // JSON for the numbers on every example, the table for the largest: four runs at once.
    await Promise.all([
      ...exampleNames().map(async (name) => json.set(name, await cli(['verify', '--example', name, '--json']))),
      cli(['verify', '--example', 'saas-platform']).then((r) => (table = r)),
    ]);
  }, 60_000);

  for (const name of exampleNames()) {
    it(`${name}: every scenario that applies passes, exit 0`, () => {
      const run = json.get(name)!;
      const report = JSON.parse(run.stdout) as VerifyReport;
      expectAllPassed(report);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe(''); // --json: no progress line; noeviction: no warning
      expect(report.server).toMatchObject({ product: 'Redis', spawned: true, role: 'master', maxmemoryPolicy: 'noeviction' });
      expect(report.date).toBe(DATE);
      expect(report.keyPrefix).toMatch(/^rl-verify:[0-9a-f]{16}:$/);
      expect(report.keysDeleted).toBeGreaterThan(0);
      expect(report.checks.find((c) => c.id === 'scripts')?.level).toBe('ok');

      const design = exampleDesign(name);
      for (const rule of design.rules) {
        const summary = report.rules.find((r) => r.ruleId === rule.id)!;
        const rows = report.results.filter((r) => r.ruleId === rule.id);
        if (rule.layer === 'edge') {
          expect(summary.verifiable).toBe(false);
          expect(summary.reason).toMatch(/^not verifiable here: enforced by /);
          expect(rows).toEqual([]);
          continue;
        }
        expect(summary.verifiable, rule.id).toBe(true);
        const ran = rows.map((r) => r.scenario);
        expect(ran, rule.id).toEqual(expect.arrayContaining(['burst-at-boundary', 'concurrent-race', 'key-ttl', 'store-outage']));
        // The race: exactly the tokens left, never more.
        const race = rows.find((r) => r.scenario === 'concurrent-race')!;
        expect(race.numbers!.admitted, rule.id).toBe(race.numbers!.expected);
        expect(race.numbers!.requests).toBe(200);
        expect(race.latency!.calls).toBeGreaterThanOrEqual(200);
        // Burst: the whole burst, then a refusal.
        const burst = rows.find((r) => r.scenario === 'burst-at-boundary')!;
        expect(burst.numbers!.admitted).toBe(burst.numbers!.expected);
        expect(burst.numbers!.refused).toBe(1);
        if (rule.algorithm !== 'fixed-window') {
          const recovery = rows.find((r) => r.scenario === 'throttled-recovery')!;
          expect(recovery.numbers!.waitedMs).toBeGreaterThanOrEqual(recovery.numbers!.retryAfterMs!);
          expect(recovery.numbers!.admittedAfter).toBe(1);
        }
        if ((rule.cost?.byEndpoint.length ?? 0) > 0 && rule.layer === 'middleware') expect(ran).toContain('cost-weighted-exhaustion');
        const outage = rows.find((r) => r.scenario === 'store-outage')!;
        // the middleware applies the rule's fail mode; the outbound client always fails closed
        expect(outage.measured).toMatch(
          rule.layer === 'outbound-client'
            ? /^store down: refused, the provider not called \(STORE_UNAVAILABLE, fail closed\)/
            : rule.failMode === 'open'
              ? /^store down: admitted \(fail open, 1 fail-open event counted\)/
              : /^store down: 503 with Retry-After 5 s/,
        );
      }
      // Dual-key auth ran for every auth pair, in both directions.
      const dual = report.results.filter((r) => r.scenario === 'dual-key-auth');
      expect(dual).toHaveLength(design.rules.filter((r) => r.tier === 'security' && r.identity === 'username').length);
      for (const d of dual)
        expect(d.measured).toMatch(
          /one username: \d+ admitted, then refused by .*-per-identity; one IP: \d+ admitted, then refused by .*-per-ip/,
        );
    });
  }

  it('prints a table per rule: gateway rules named, PASS rows with latency, the totals', () => {
    expect(table.stdout).not.toMatch(/^ {2}FAIL/m);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stderr).toBe(''); // no TTY: no progress line
    for (const rule of exampleDesign('saas-platform').rules) expect(table.stdout).toContain(`\n${rule.id}  (`);
    expect(table.stdout).toMatch(/^global-ceiling {2}\(leaky-bucket, edge, fail open\).*\n {2}not verifiable here: enforced by nginx/m);
    expect(table.stdout).toMatch(/^ {2}PASS {2}race for the last tokens +\d+(\.\d+)? +\d+(\.\d+)? +10 admitted, 190 refused/m);
    expect(table.stdout).toMatch(/^ {2}PASS {2}dual-key auth .*\[with auth-login-per-ip\]$/m);
    expect(table.stdout).toMatch(/Latency of \d+ limiter calls made one at a time: p50 [\d.]+ ms, p99 [\d.]+ ms\./);
    expect(table.stdout).toContain('Verification passed.');
  });

  it('the saas-platform quotas count in the calendar month of Europe/Berlin', () => {
    const report = JSON.parse(json.get('saas-platform')!.stdout) as VerifyReport;
    const burst = report.results.find((r) => r.ruleId === 'quota-free' && r.scenario === 'burst-at-boundary')!;
    expect(burst.measured).toMatch(/the end of calendar month \d{4}-\d{2} in Europe\/Berlin/);
    expect(report.results.find((r) => r.ruleId === 'quota-free' && r.scenario === 'throttled-recovery')!.status).toBe('skipped');
    const slots = report.checks.filter((c) => c.id === 'hash-slots');
    expect(slots.map((c) => c.level)).toEqual(['ok', 'ok', 'ok']);
  });
});

describe('verify --write', () => {
  it('records the results beside the answers and in the Markdown document (single file)', async () => {
    const { dir, file } = copyExample('consumer-auth');
    const r = await cli(['verify', '-a', path.basename(file), '--write', '--json'], { cwd: dir });
    const report = JSON.parse(r.stdout) as VerifyReport & { written: string[] };
    expectAllPassed(report);
    expect(r.code, r.stderr).toBe(0);
    expect(report.written).toEqual(['consumer-auth.answers.verify.json', path.join('docs', 'rate-limit-design.md')]);

    const sidecar = JSON.parse(readFileSync(path.join(dir, 'consumer-auth.answers.verify.json'), 'utf8'));
    expect(sidecar.answersSha256).toBe(sha256(readFileSync(file, 'utf8')));
    expect(sidecar.results.date).toBe(DATE);
    expect(sidecar.results.redisVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(sidecar.report.results).toEqual(report.results);

    const section = scenarioSection(readFileSync(path.join(dir, 'docs', 'rate-limit-design.md'), 'utf8'));
    expect(section).not.toContain('not run yet');
    expect(section).toMatch(/\| Burst at the limit boundary \| `fairness-per-user` \| passed \|/);
    const results = section.match(/^Result: \*\*passed\*\* on Redis \d+\.\d+\.\d+, 2026-12-02\. .+$/gm) ?? [];
    expect(results).toHaveLength(6);
    expect(section).toMatch(/Result: \*\*passed\*\*.*Ran on all \d+ rules it applies to\. fairness-per-user: 10 admitted, 190 refused/);
    expect(section).toMatch(/auth-login-per-identity \\?\+ auth-login-per-ip: one username: 10 admitted/);
    expect(section).toMatch(/Limiter calls: \d+, latency p50 [\d.]+ ms, p99 [\d.]+ ms/);
  }, 60_000);

  it('writes HTML in the folder layout, and the same results render in both formats and layouts', async () => {
    const { dir, file } = copyExample('minimal-generic', (a) => {
      (a.output as Record<string, unknown>).format = 'html';
      (a.output as Record<string, unknown>).layout = 'folder';
    });
    const c = capture(dir);
    const code = await runVerify(c.ctx, { answers: file, write: true, json: true }, io());
    expect(code, c.err()).toBe(0);
    const report = JSON.parse(c.out()) as VerifyReport & { written: string[] };
    expectAllPassed(report);
    const pages = report.written.filter((w) => w.endsWith('.html'));
    expect(pages.length, report.written.join(', ')).toBeGreaterThan(1);
    const html = pages.map((p) => readFileSync(path.join(dir, p), 'utf8')).join('\n');
    const applicable = exampleDesign('minimal-generic').scenarios.filter((s) => s.applicable).length;
    expect(html.match(/Result: <strong>passed<\/strong> on Redis \d+\.\d+\.\d+, 2026-12-02\./g)).toHaveLength(applicable);

    // The same results through the renderers: Markdown single and folder carry them too.
    const design = applyResults(exampleDesign('minimal-generic'), resultsOf(report));
    for (const layout of ['single', 'folder'] as const) {
      const files = renderMarkdown({ design, checks: checkDesign(design) }, { layout });
      const all = files.map((f) => f.content).join('\n');
      expect(all.match(/^Result: \*\*passed\*\* on Redis/gm), layout).toHaveLength(applicable);
    }
  }, 60_000);

  it('refuses --write with --example: the results belong beside an answers file', async () => {
    const c = capture(tempDir());
    await expect(runVerify(c.ctx, { example: 'minimal-generic', write: true }, io())).rejects.toMatchObject({
      messageId: 'badOption',
      exitCode: 2,
    });
  });
});

describe('a broken limiter fails the scenario that catches it', () => {
  it('the TTL removed from gcra.lua: "TTL on every key" fails, and with it every limit, whose state the TTL is (RL_DESIGN_LUA_DIR, built binary)', async () => {
    // The broken script is the shipped gcra.lua with exactly the TTL taken out (SET without PX).
    // gcra.lua keeps the bucket's time in the key's expiry: without it every bucket reads as full.
    const shipped = readFileSync(path.join(ROOT, 'lua', 'gcra.lua'), 'utf8');
    const withTtl = ", 'PX', string.format('%d', (new_ahead + v) / 1000))";
    expect(shipped.split(withTtl)).toHaveLength(2);
    const noTtlDir = tempDir('rl-verify-lua-no-ttl-');
    writeFileSync(path.join(noTtlDir, 'gcra.lua'), shipped.replace(withTtl, ')'));

    const r = await cli(['verify', '--example', 'minimal-generic', '--json'], { env: { RL_DESIGN_LUA_DIR: noTtlDir } });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as VerifyReport;
    const failed = report.results.filter((x) => x.status === 'failed');
    const names = failed.map((x) => `${x.ruleId} ${x.scenario}`);
    expect(names).toContain('global-ceiling key-ttl');
    expect(names).toContain('fairness-per-api-key key-ttl');
    expect(names).toContain('fairness-per-api-key concurrent-race');
    const ttl = failed.find((x) => x.scenario === 'key-ttl')!;
    expect(ttl.measured).toMatch(/WITHOUT TTL/);
    expect(ttl.detail).toMatch(/key\(s\) without a TTL, e\.g\. rl-verify:[0-9a-f]{16}:r1:/);
    expect(report.passed).toBe(false);
    // The run still cleaned up after itself.
    expect(report.keysDeleted).toBeGreaterThan(0);
  });

  it('check and consume split into two script calls: the race fails, the one-at-a-time scenarios pass', async () => {
    const c = capture(ROOT);
    const code = await runVerify(
      c.ctx,
      { example: 'minimal-generic' },
      io({ luaDir: path.join(FIXTURES, 'lua-split'), stderrIsTTY: true }),
    );
    expect(code).toBe(1);
    const out = c.out();
    expect(out).toMatch(/^ {2}FAIL {2}race for the last tokens .* (\d+) admitted/m);
    expect(out).toMatch(/the check and the consume are not one atomic step/);
    for (const s of ['burst at the boundary', 'throttled-client recovery', 'worst case in a period', 'store outage']) {
      expect(out.match(new RegExp(`^  PASS  ${s}`, 'gm')), s).toHaveLength(2);
    }
    const raceAdmitted = [...out.matchAll(/FAIL {2}race for the last tokens +[\d.]+ +[\d.]+ +(\d+) admitted/g)].map((m) => Number(m[1]));
    expect(raceAdmitted).toHaveLength(2);
    for (const n of raceAdmitted) expect(n).toBeGreaterThan(10);
    expect(out).toContain('Verification FAILED.');
    // On a TTY, one progress line on stderr, redrawn per scenario and cleared at the end.
    expect(c.err()).toMatch(/^\r\x1b\[2K\[1\/12\] global-ceiling: burst at the boundary \.\.\./);
    expect(c.err()).toContain('[12/12] fairness-per-api-key: store outage');
    expect(c.err().endsWith('\r\x1b[2K')).toBe(true);
  });
});

describe('a script that does not load', () => {
  it('fails the scripts check and every scenario of the rules that need it, naming the error', async () => {
    const c = capture(ROOT);
    const code = await runVerify(c.ctx, { example: 'minimal-generic', json: true }, io({ luaDir: path.join(FIXTURES, 'lua-syntax') }));
    expect(code).toBe(1);
    const report = JSON.parse(c.out()) as VerifyReport;
    expect(report.checks.find((x) => x.id === 'scripts')).toMatchObject({
      level: 'fail',
      message: expect.stringMatching(/^gcra\.lua does not load: ERR .*compil/i),
    });
    expect(report.results.length).toBeGreaterThan(0);
    for (const r of report.results) expect(r).toMatchObject({ status: 'failed', measured: 'not run: the script did not load' });
  });
});

describe('verify on a Redis the user names', () => {
  let lru: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    // A shared, badly configured Redis: allkeys-lru, and the commands verify must never use disabled.
    lru = await startRedis([
      '--maxmemory-policy',
      'allkeys-lru',
      '--rename-command',
      'FLUSHALL',
      '',
      '--rename-command',
      'FLUSHDB',
      '',
      '--rename-command',
      'KEYS',
      '',
    ]);
    client = new Redis(lru.port, lru.host, { maxRetriesPerRequest: 1 });
    await client.set('user:42:profile', 'keep me');
    await client.set('rl:{ak:1}:req', '123');
    await client.set('rl-verify:not-ours:x', 'another run');
  });
  afterAll(async () => {
    await client?.quit();
    await lru?.stop();
  });

  it('warns loudly about an eviction policy, skips the outage, and leaves every other key alone', async () => {
    const before = await client.dbsize();
    const r = await cli(['verify', '--example', 'minimal-generic', '--redis', lru.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^WARNING: EVICTION POLICY allkeys-lru: .*limits silently reset/m);
    expect(r.stdout).toMatch(/^ {2}WARN {2}eviction +EVICTION POLICY allkeys-lru/m);
    expect(r.stdout).toMatch(/^ {2}SKIP {2}store outage .*not run: rl-design stops only a Redis it started/m);
    // the reason is said once; the other rules point at it
    expect(r.stdout.match(/not run: rl-design stops only a Redis it started/g)).toHaveLength(1);
    expect(r.stdout).toMatch(/^ {2}SKIP {2}store outage .*as for global-ceiling$/m);
    expect(r.stdout).not.toMatch(/^ {2}FAIL/m);
    expect(await client.dbsize()).toBe(before);
    expect(await client.get('user:42:profile')).toBe('keep me');
    expect(await client.get('rl:{ak:1}:req')).toBe('123');
    expect(await client.get('rl-verify:not-ours:x')).toBe('another run');
    expect(await client.ttl('user:42:profile')).toBe(-1);
  });

  it('refuses a replica (exit 2) and writes nothing', async () => {
    const replica = await startRedis(['--replicaof', lru.host, String(lru.port)]);
    try {
      const before = await client.dbsize();
      const c = capture(ROOT);
      const run = runVerify(c.ctx, { example: 'minimal-generic', redis: replica.url }, io());
      await expect(run).rejects.toMatchObject({ messageId: 'redisReplica', exitCode: 2 });
      await expect(run).rejects.toThrow(`Refusing to verify against ${replica.url}: it is a replica.`);
      expect(c.out()).toBe('');
      expect(await client.dbsize()).toBe(before);
    } finally {
      await replica.stop();
    }
  });

  it('bad input is exit 2 with one clear message: a bad URL, nothing listening, no redis-server on PATH', async () => {
    const c = capture(ROOT);
    await expect(runVerify(c.ctx, { example: 'minimal-generic', redis: 'http://localhost:6379' }, io())).rejects.toMatchObject({
      messageId: 'badOption',
      exitCode: 2,
    });
    const port = await freePort();
    const refused = runVerify(c.ctx, { example: 'minimal-generic', redis: `redis://127.0.0.1:${port}` }, io());
    await expect(refused).rejects.toBeInstanceOf(UserError);
    await expect(refused).rejects.toMatchObject({ messageId: 'redisConnectFailed', exitCode: 2 });

    const missing = runVerify(
      c.ctx,
      { example: 'minimal-generic' },
      io({ startServer: () => startRedisServer({ command: 'redis-server-not-installed' }) }),
    );
    await expect(missing).rejects.toMatchObject({ messageId: 'redisServerMissing', exitCode: 2 });
    await expect(missing).rejects.toThrow(
      'redis-server was not found on PATH, and verify needs a Redis. Install it (apt-get install redis-server, brew install redis) or point verify at a running server with --redis redis://host:port.',
    );
    expect(c.out()).toBe('');
  });
});

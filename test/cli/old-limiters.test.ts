/**
 * The migration section of a generated document, read from the file the built CLI writes: an
 * Express API whose express-rate-limit limiter counts in fixed windows (twice its limit across a
 * reset), whose nginx limit_req drains at its rate plus a burst, and whose hand-written Redis
 * counter (INCR then EXPIRE) carries hazards of its own. Each row compares the old limiter's
 * worst case, as it counts, with the new rule's.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';

const FIXTURE = path.join(ROOT, 'test', 'design', 'fixtures', 'old-limiters.answers.json');

/** The document generate writes for these answers, its migration section only. */
function migrationSection(answers: unknown): string {
  const dir = tempDir('rl-old-limiters-');
  const file = path.join(dir, 'answers.json');
  writeFileSync(file, JSON.stringify(answers));
  const out = path.join(dir, 'design.md');
  const r = runCli(['generate', '--answers', file, '--out', out, '--format', 'markdown', '--layout', 'single', '--date', '2026-12-03']);
  expect(r.code, r.stderr).toBe(0);
  const md = readFileSync(out, 'utf8');
  const start = md.indexOf('Migration from the existing limiters\n');
  expect(start).toBeGreaterThan(0);
  return md.slice(start, md.indexOf('\n## ', start));
}

const base = JSON.parse(readFileSync(FIXTURE, 'utf8'));
delete base.$schema;

const row = (section: string, existing: string, route: string): string =>
  section.split('\n').find((l) => l.startsWith(`| ${existing} | ${route} |`)) ?? '';
const note = (section: string, existing: string, route: string): string =>
  section.split('\n').find((l) => l.startsWith(`- ${existing}: ${route}:`)) ?? '';

describe('the migration section compares worst cases, each limiter as it counts', () => {
  let section = '';
  beforeAll(() => {
    section = migrationSection(base);
  });
  const erl = 'express-rate-limit apiLimiter (src/app.ts:12)';
  const nginx = 'nginx api (nginx.conf:20)';
  const incr = 'redis INCR+EXPIRE orderCounter (src/orders.ts:30)';

  it('an express-rate-limit fixed window admits twice its limit across a reset: 162 a minute is tighter only there, not looser', () => {
    expect(row(section, erl, 'POST /api/orders (create-order)')).toBe(
      `| ${erl} | POST /api/orders (create-order) | ip | 100 per 1 min (fixed window) | 200 across a reset (100 per window) | fairness-per-ip: 5 per 1 s, burst 25 (162) | 162 | WARNING: tighter across a reset only |`,
    );
    expect(note(section, erl, 'POST /api/orders')).toContain(
      'Before, one ip could send 100 requests within one of its 1 min windows, and 200 within 1 min across a reset',
    );
    expect(note(section, erl, 'POST /api/orders')).toContain("no fewer than one old window held, but not two windows' worth back to back");
    // 325 a minute is more than even the reset lets through
    expect(row(section, erl, 'GET /api/orders (list-orders)')).toMatch(
      /\| 200 across a reset \(100 per window\) \| [^|]+ \| 325 \| WARNING: looser \|$/,
    );
  });

  it('nginx limit_req is a leaky bucket: one request and its burst at once, then its rate, at each nginx node; compared across the fleet', () => {
    // 16 a second at each of the 3 nginx nodes assumed (one per instance), each counting on its
    // own, against one count in Redis: the new rule is tighter for the fleet
    expect(row(section, nginx, 'POST /api/orders (create-order)')).toBe(
      `| ${nginx} | POST /api/orders (create-order) | ip | 5r/s, burst 10 (leaky bucket) | 48: 16 at each of 3 nginx nodes | fairness-per-ip: 5 per 1 s, burst 25 (15) | 15 | WARNING: tighter |`,
    );
    expect(note(section, nginx, 'GET /api/orders')).toContain(
      'Before, one ip could send 16 requests within any 1 s (leaky bucket: one request and a burst of 10 at once, then its rate) at each nginx node, 48 across the 3 nginx nodes assumed (stack.gatewayNodes not given), each counting on its own; the new rules admit 30 within any 1 s for the whole fleet (fairness-per-ip)',
    );
  });

  it("a hand-written INCR and EXPIRE counter: its fixed window's worst case, and its own hazards, one line each", () => {
    expect(row(section, incr, 'POST /api/orders (create-order)')).toContain(
      '| 20 per 1 min (fixed window) | 40 across a reset (20 per window) |',
    );
    const hazards = section.split('\n').filter((l) => l.startsWith(`- ${incr}: `) && !l.includes('POST /api/orders'));
    expect(hazards).toHaveLength(2);
    expect(hazards[0]).toContain('the counter is left without an expiry');
    expect(hazards[0]).toContain('refused until someone deletes the key');
    expect(hazards[1]).toContain('(GET) before it counts (INCR)');
    // the other limiters are not hand-written counters
    expect(section).not.toMatch(new RegExp(`- ${erl.replace(/[()]/g, '\\$&')}: INCR`));
  });

  it('an algorithm the answers state wins over the kind: the same limiter as a sliding window makes 162 a minute looser', () => {
    const sliding = structuredClone(base);
    sliding.existing.limiters[0].algorithm = 'sliding-window';
    const s = migrationSection(sliding);
    expect(row(s, erl, 'POST /api/orders (create-order)')).toBe(
      `| ${erl} | POST /api/orders (create-order) | ip | 100 per 1 min (sliding window) | 100 | fairness-per-ip: 5 per 1 s, burst 25 (162) | 162 | WARNING: looser |`,
    );
  });

  it('a kind that names no known counting is taken as a fixed window, and the document says it is assumed', () => {
    const custom = structuredClone(base);
    custom.existing.limiters[0].kind = 'in-house limiter';
    const s = migrationSection(custom);
    expect(row(s, 'in-house limiter apiLimiter (src/app.ts:12)', 'POST /api/orders (create-order)')).toContain(
      '| 100 per 1 min (fixed window, assumed) | 200 across a reset (100 per window) |',
    );
  });
});

describe('init finds a hand-written INCR and EXPIRE counter and the document flags it', () => {
  it('scans it into the answers as a fixed window, compares its worst case, and lists its hazards', () => {
    const dir = tempDir('rl-incr-');
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders', dependencies: { express: '5.1.0', ioredis: '5.6.1' } }));
    writeFileSync(
      path.join(dir, 'src', 'app.js'),
      [
        "import express from 'express';",
        "import Redis from 'ioredis';",
        'const redis = new Redis();',
        'const app = express();',
        'async function orderLimit(req, res, next) {',
        '  const count = await redis.incr(`orders:${req.ip}`);',
        '  if (count === 1) await redis.expire(`orders:${req.ip}`, 60);',
        '  if (count > 20) return res.status(429).end();',
        '  next();',
        '}',
        "app.post('/api/orders', orderLimit, (req, res) => res.status(201).json({}));",
        "app.get('/api/orders', (req, res) => res.json([]));",
        'app.listen(3000);',
      ].join('\n'),
    );
    const args = [
      'init',
      '--yes',
      '--format',
      'markdown',
      '--layout',
      'single',
      '--goals',
      'overload',
      '--identities',
      'ip',
      '--date',
      '2026-12-03',
    ];
    for (const e of ['list-orders=GET /api/orders read', 'create-order=POST /api/orders write']) args.push('--endpoint', e);
    const r = runCli(args, { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.existing.limiters).toEqual([
      {
        kind: 'redis INCR+EXPIRE',
        name: 'orderLimit',
        source: 'src/app.js:6',
        method: 'POST',
        path: '/api/orders',
        match: 'exact',
        keyedOn: 'ip',
        limit: 20,
        windowSeconds: 60,
        algorithm: 'fixed-window',
      },
    ]);
    const md = readFileSync(path.join(dir, 'docs', 'rate-limit-design.md'), 'utf8');
    const name = 'redis INCR+EXPIRE orderLimit (src/app.js:6)';
    expect(md).toContain(
      `| ${name} | POST /api/orders (create-order) | ip | 20 per 1 min (fixed window) | 40 across a reset (20 per window) |`,
    );
    expect(md).toContain(`- ${name}: INCR and EXPIRE are two commands`);
    expect(md).toContain(`- ${name}: Where it reads the count (GET) before it counts (INCR)`);
  });
});

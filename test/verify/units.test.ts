/** The pure parts of verify: slots, time-zone windows, statistics, server checks, scaling, results. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Design } from '../../src/design/model.js';
import { checkServer, dualKeyPairs, evictionCheck, pairSlot, versionCheck } from '../../src/verify/config.js';
import { factsFromInfo, parseInfo, parseRedisUrl, type ServerFacts } from '../../src/verify/redis.js';
import { applyResults, loadResultsFor, sidecarPath, sidecarText } from '../../src/verify/results.js';
import { classifyRule, EXACT_INTERVAL_MS, MAX_EXACT, RECOVERY_MS, shapeFor } from '../../src/verify/shapes.js';
import { crc16, hashTag, keySlot } from '../../src/verify/slots.js';
import { latencyOf, percentile } from '../../src/verify/stats.js';
import type { ScenarioResult, VerifyReport } from '../../src/verify/types.js';
import { calendarPeriod } from '../../src/runtime/middleware/calendar.js';
import { exampleDesign } from '../helpers/examples.js';

const facts = (over: Partial<ServerFacts> = {}): ServerFacts => ({
  product: 'Redis',
  version: '7.2.4',
  redisVersion: '7.2.4',
  mode: 'standalone',
  role: 'master',
  clusterEnabled: false,
  maxmemoryPolicy: 'noeviction',
  ...over,
});

describe('CRC16 and cluster slots', () => {
  it('is CRC16-XMODEM: the reference vector "123456789" -> 0x31C3', () => {
    expect(crc16('123456789')).toBe(0x31c3);
    expect(crc16('')).toBe(0);
  });

  it('hashes keys to the slots Redis Cluster uses', () => {
    // Values from the Redis Cluster specification and CLUSTER KEYSLOT.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
  });

  it('takes the hash tag like Redis: first { to the first } after it, never empty', () => {
    expect(hashTag('rl:{auth:login}:ip:1.2.3.4')).toBe('auth:login');
    expect(hashTag('foo{}{bar}')).toBeUndefined();
    expect(keySlot('foo{}{bar}')).toBe(crc16('foo{}{bar}') % 16384);
    expect(hashTag('foo{{bar}}zap')).toBe('{bar');
    expect(keySlot('foo{{bar}}zap')).toBe(crc16('{bar') % 16384);
    expect(hashTag('no-tag')).toBeUndefined();
  });

  it('keeps the run prefix out of the slot: the rule tag decides', () => {
    expect(keySlot('rl-verify:0123456789abcdef:r4:dual:rl:{auth:login}:un:abc')).toBe(keySlot('rl:{auth:login}:ip:198.51.0.1'));
  });
});

describe("calendar windows in the plan time zone (the runtime's calendarPeriod, which verify uses)", () => {
  it('ends a Berlin month at local midnight (CEST)', () => {
    const w = calendarPeriod(Date.parse('2026-03-15T12:00:00Z'), 'month', 'Europe/Berlin');
    expect(w.id).toBe('2026-03');
    expect(new Date(w.start).toISOString()).toBe('2026-02-28T23:00:00.000Z');
    expect(new Date(w.end).toISOString()).toBe('2026-03-31T22:00:00.000Z');
  });

  it('has a 25-hour day when the clocks go back', () => {
    const w = calendarPeriod(Date.parse('2026-10-24T23:30:00Z'), 'day', 'Europe/Berlin');
    expect(w.id).toBe('2026-10-25');
    expect(w.end - w.start).toBe(25 * 3_600_000);
  });

  it('names the local period, not the UTC one', () => {
    // 23:30 UTC on 31 December is still December in New York.
    const w = calendarPeriod(Date.parse('2026-12-31T23:30:00Z'), 'month', 'America/New_York');
    expect(w.id).toBe('2026-12');
    expect(new Date(w.end).toISOString()).toBe('2027-01-01T05:00:00.000Z');
  });
});

describe('latency statistics', () => {
  it('uses nearest-rank percentiles', () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 99)).toBe(99);
    expect(latencyOf([])).toBeUndefined();
    expect(latencyOf([0.123, 0.456])).toEqual({ calls: 2, p50Ms: 0.12, p99Ms: 0.46 });
  });
});

describe('server facts and checks', () => {
  it('reads INFO, with CONFIG GET winning for the policy', () => {
    const info = parseInfo(
      '# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\r\n# Replication\r\nrole:slave\r\n# Memory\r\nmaxmemory_policy:allkeys-lru\r\n',
    );
    const f = factsFromInfo(info);
    expect(f).toMatchObject({ product: 'Redis', version: '7.0.15', role: 'replica', mode: 'standalone', maxmemoryPolicy: 'allkeys-lru' });
    expect(factsFromInfo(info, 'noeviction').maxmemoryPolicy).toBe('noeviction');
    expect(factsFromInfo({ redis_version: '7.2.4', valkey_version: '8.0.1', server_mode: 'cluster', cluster_enabled: '1' })).toMatchObject({
      product: 'Valkey',
      version: '8.0.1',
      mode: 'cluster',
      clusterEnabled: true,
    });
  });

  it('warns loudly on every eviction policy, volatile ones included', () => {
    expect(evictionCheck(facts()).level).toBe('ok');
    for (const policy of ['allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-ttl']) {
      const c = evictionCheck(facts({ maxmemoryPolicy: policy }));
      expect(c.level).toBe('warn');
      expect(c.message).toContain(`EVICTION POLICY ${policy}`);
      expect(c.message).toMatch(/silently reset/);
    }
    expect(evictionCheck(facts({ maxmemoryPolicy: 'volatile-lru' })).message).toMatch(/volatile-\* policies evict them too/);
    const { maxmemoryPolicy: _p, ...unknown } = facts();
    expect(evictionCheck(unknown).level).toBe('warn');
  });

  it('needs Redis 5 or newer for effect replication', () => {
    expect(versionCheck(facts({ version: '4.0.14', redisVersion: '4.0.14' })).level).toBe('fail');
    expect(versionCheck(facts({ version: '5.0.0', redisVersion: '5.0.0' })).level).toBe('ok');
    expect(versionCheck(facts({ product: 'Valkey', version: '8.0.1', redisVersion: '7.2.4' })).message).toContain('Valkey 8.0.1');
  });

  it('checks that the dual-key auth scripts keep their keys in one slot', () => {
    const design = exampleDesign('saas-platform');
    expect(dualKeyPairs(design.rules).map((p) => [p.identity.id, p.ip.id])).toEqual([
      ['auth-login-per-identity', 'auth-login-per-ip'],
      ['auth-password-reset-per-identity', 'auth-password-reset-per-ip'],
      ['auth-token-per-identity', 'auth-token-per-ip'],
    ]);
    const slots = checkServer(facts(), design).filter((c) => c.id === 'hash-slots');
    expect(slots).toHaveLength(3);
    expect(slots.every((c) => c.level === 'ok')).toBe(true);
    expect(slots[0]!.message).toContain(`slot ${keySlot('{auth:login}')}`);

    // A hand-made pair whose tags differ: a CROSSSLOT error on a cluster.
    expect(pairSlot('rl:{un:<u>}:login', 'rl:{ip:<ip>}:login').sameSlot).toBe(false);
    const broken: Design = {
      ...design,
      rules: design.rules.map((r) => (r.id === 'auth-login-per-ip' ? { ...r, key: 'rl:{ip:<client-ip>}:login' } : r)),
    };
    const bad = checkServer(facts(), broken).find((c) => c.id === 'hash-slots' && c.message.startsWith('auth-login'))!;
    expect(bad.level).toBe('fail'); // the design targets a Redis Cluster
    expect(bad.message).toMatch(/CROSSSLOT/);
  });
});

describe('Redis URLs', () => {
  it('parses redis:// and rediss:// and never shows the password', () => {
    const t = parseRedisUrl('redis://app:s3cret@cache.internal:6380/2');
    expect(t).toMatchObject({ host: 'cache.internal', port: 6380, username: 'app', password: 's3cret', db: 2, tls: false });
    expect('display' in t && t.display).toBe('redis://app:***@cache.internal:6380/2');
    expect(parseRedisUrl('rediss://h')).toMatchObject({ port: 6379, tls: true, db: 0 });
    expect(parseRedisUrl('http://h:1')).toHaveProperty('error');
    expect(parseRedisUrl('not a url')).toHaveProperty('error');
  });

  it('an error about a URL never holds its password, whatever the password holds', () => {
    // Qx, Zk, Vw: pieces of each password that must never be printed.
    for (const url of [
      'redis://app:Qx@Zk/Vw@host:6379',
      'redis://app:Qx#Zk@host',
      'redis://:Qx?Zk=Vw@host',
      'redis://app:Qx%E0%A4%AZk@host',
      'redis://u:QxZk@host/Vw1',
    ]) {
      const r = parseRedisUrl(url);
      const text = 'error' in r ? r.error : r.display;
      expect(text, url).not.toMatch(/Qx|Zk|Vw/);
    }
    expect(parseRedisUrl('redis://h/99')).toMatchObject({ db: 99 });
    expect(parseRedisUrl('redis://h/-1')).toHaveProperty('error');
  });
});

describe('which rules run, and with what parameters', () => {
  const design = exampleDesign('saas-platform');
  const rule = (id: string) => design.rules.find((r) => r.id === id)!;

  it('reports gateway rules as enforced elsewhere', () => {
    expect(classifyRule(rule('global-ceiling'), design)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^not verifiable here: enforced by nginx/),
    });
    expect(classifyRule(rule('fairness-free'), design)).toEqual({ ok: true, driver: 'gcra' });
    expect(classifyRule(rule('outbound-stripe'), design)).toEqual({ ok: true, driver: 'outbound' });
    expect(classifyRule(rule('quota-pro'), design)).toEqual({ ok: true, driver: 'fixed-window' });
  });

  it('scales big bursts down proportionally and slows the refill for exact counts, and says so', () => {
    const s = shapeFor('gcra', rule('webhooks-per-source'), design, 'exact', Date.now());
    expect(s.capacity).toBe(MAX_EXACT);
    expect({ burst: s.burst, limit: s.limit, periodMs: s.periodMs }).toEqual({ burst: MAX_EXACT, limit: 1, periodMs: EXACT_INTERVAL_MS });
    // the webhook burst is capped at the ceiling's own burst (4,800), not 10 s of rate (5,000)
    expect(s.scaling).toMatch(/burst scaled down from 4,800 to 500/);
  });

  it('compresses time for recovery, keeping burst and rate per period', () => {
    const s = shapeFor('gcra', rule('fairness-free'), design, 'recovery', Date.now());
    // 60 per minute: one token every second, run as one every RECOVERY_MS.
    expect({ burst: s.burst, limit: s.limit, periodMs: s.periodMs }).toEqual({ burst: 25, limit: 60, periodMs: 60 * RECOVERY_MS });
    expect(s.recoverMs).toBe(RECOVERY_MS);
    expect(s.scaling).toMatch(/time scaled/);
  });

  it('places a quota in the calendar month of the plan time zone', () => {
    const now = Date.parse('2026-05-31T22:30:00Z'); // already June in Berlin
    const s = shapeFor('fixed-window', rule('quota-free'), design, 'exact', now);
    expect(s.period).toMatchObject({ id: '2026-06', endMs: Date.parse('2026-06-30T22:00:00Z') });
    expect({ window: s.window, limit: s.limit, capacity: s.capacity }).toEqual({ window: 'calendar', limit: 10000, capacity: 10000 });
  });
});

describe('results in the document', () => {
  const design = exampleDesign('minimal-generic');
  const row = (over: Partial<ScenarioResult>): ScenarioResult => ({
    ruleId: 'fairness-per-api-key',
    ruleIds: ['fairness-per-api-key'],
    scenario: 'burst-at-boundary',
    status: 'passed',
    expected: '100 admitted',
    measured: '100/100 admitted',
    detail: '',
    durationMs: 1,
    latency: { calls: 101, p50Ms: 0.1, p99Ms: 0.4 },
    ...over,
  });
  const results = {
    redisVersion: '7.0.15',
    date: '2026-12-02',
    results: [
      row({}),
      row({ ruleId: 'global-ceiling', ruleIds: ['global-ceiling'], measured: '225/225 admitted' }),
      row({
        scenario: 'concurrent-race',
        status: 'failed',
        measured: '57 admitted, 143 refused',
        detail: '47 requests over the limit were admitted',
      }),
      row({ scenario: 'store-outage', status: 'skipped', measured: 'not run' }),
    ],
  };

  it('is pure: a new design, the input untouched', () => {
    const before = JSON.stringify(design);
    const out = applyResults(design, results);
    expect(JSON.stringify(design)).toBe(before);
    expect(out).not.toBe(design);
    expect(out.rules).toBe(design.rules);
  });

  it('puts pass, fail and measured numbers on the scenarios that ran, and nothing on the others', () => {
    const out = applyResults(design, results);
    const burst = out.scenarios.find((s) => s.id === 'burst-at-boundary')!.result!;
    expect(burst).toMatchObject({
      passed: true,
      redisVersion: '7.0.15',
      date: '2026-12-02',
      latency: { calls: 202, p50Ms: 0.1, p99Ms: 0.4 },
    });
    expect(burst.detail).toContain('Ran on all 2 rules it applies to.');
    expect(burst.detail).toContain('fairness-per-api-key: 100/100 admitted.');
    expect(burst.runs).toHaveLength(2);
    const race = out.scenarios.find((s) => s.id === 'concurrent-race')!.result!;
    expect(race.passed).toBe(false);
    expect(race.detail).toContain(
      'Failed on 1 of 1 rule: fairness-per-api-key: 57 admitted, 143 refused (47 requests over the limit were admitted).',
    );
    expect(out.scenarios.find((s) => s.id === 'store-outage')!.result).toBeUndefined();
    expect(out.scenarios.find((s) => s.id === 'dual-key-auth')!.result).toBeUndefined();
  });

  it('fails a scenario in the document when a key its rules wrote has no TTL', () => {
    const out = applyResults(design, {
      ...results,
      results: [
        row({}),
        row({ scenario: 'key-ttl', status: 'failed', measured: '3 live key(s): 3 WITHOUT TTL', detail: '3 key(s) without a TTL' }),
      ],
    });
    const burst = out.scenarios.find((s) => s.id === 'burst-at-boundary')!.result!;
    expect(burst.passed).toBe(false);
    expect(burst.detail).toContain('Keys written for fairness-per-api-key break the TTL rule: 3 key(s) without a TTL.');
  });

  it('keeps results beside the answers and only for the same answers text', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-verify-sidecar-'));
    const answers = path.join(dir, 'rate-limit.answers.json');
    expect(sidecarPath(answers)).toBe(path.join(dir, 'rate-limit.answers.verify.json'));
    writeFileSync(answers, '{"a":1}\n');
    expect(await loadResultsFor(answers)).toBeUndefined();
    const report = {
      tool: 'rl-design',
      date: '2026-12-02',
      server: { product: 'Redis', version: '7.0.15', redisVersion: '7.0.15' },
      results: results.results,
    } as unknown as VerifyReport;
    writeFileSync(sidecarPath(answers), sidecarText(report, answers, '{"a":1}\n'));
    expect(await loadResultsFor(answers)).toEqual({ redisVersion: '7.0.15', date: '2026-12-02', results: results.results });
    expect(await loadResultsFor(answers, '{"a":1}\n')).toBeDefined();
    expect(await loadResultsFor(answers, '{"a":2}\n')).toBeUndefined();
    writeFileSync(sidecarPath(answers), 'not json');
    expect(await loadResultsFor(answers)).toBeUndefined();
  });
});

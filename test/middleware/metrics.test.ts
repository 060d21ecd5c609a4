/**
 * What the generated middleware really exports, compiled and run over real HTTP against a real
 * redis-server, checked against what the design's monitoring section and alert rules read:
 * - every counter series exists at 0 as soon as the limiter is created, one per rule of the
 *   design and outcome, and requests never add series (labels come from the design only);
 * - every metric the design credits to the middleware is exported;
 * - ratelimit_near_limit_total counts the admitted decisions that left less than 20% of the
 *   rule's capacity (the numerator of RateLimitNearLimit);
 * - a store at maxmemory with noeviction refuses the scripts' writes: fail-open rules admit and
 *   count ratelimit_fail_open_events_total, fail-closed rules answer 503 (what §8.3 says);
 * - the keys the middleware writes for the largest identities are no longer than the rule's
 *   keyChars, the length the memory bound prices in.
 */
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { luaScript, type LuaScriptName } from '../../src/lua.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign } from '../helpers/examples.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { MAIN, PLANS } from './designs.js';
import {
  allFiles,
  compileScratch,
  counter,
  designFrom,
  freshPrefix,
  hit,
  serve,
  type Scratch,
  type Served,
  TENANT_FROM_HEADER,
  type TestOptions,
} from './harness.js';

type Mod = Record<string, (...args: never[]) => unknown>;
type RuleSpec = { id: string; tier: string; plan: string | null };

let scratch: Scratch;
let server: RedisServer;
let redis: Redis;
const mods: Record<string, Mod> = {};
const rulesOf: Record<string, RuleSpec[]> = {};
const designs: Record<string, Design> = {};
const open: Served[] = [];

beforeAll(async () => {
  designs.main = designFrom(MAIN);
  designs.plans = designFrom(PLANS);
  // read and export endpoints fail closed here: a token-bucket (gcra) rule that fails closed; the
  // anonymous endpoint is a search, answered open, so its per-IP rule fails open
  designs.closed = designFrom({
    ...MAIN,
    project: { name: 'closed reads API' },
    endpoints: (MAIN.endpoints ?? []).map((e) => (e.name === 'public' ? { ...e, class: 'search' as const, cost: 1 } : e)),
    failure: { byClass: { auth: 'closed', read: 'closed', export: 'closed', search: 'open' } },
  });
  designs.saas = exampleDesign('saas-platform');
  const [s, r] = await Promise.all([
    compileScratch({
      main: allFiles(designs.main),
      plans: allFiles(designs.plans),
      saas: allFiles(designs.saas),
      closed: allFiles(designs.closed),
    }),
    startRedis(),
  ]);
  scratch = s;
  server = r;
  expect(scratch.ok, scratch.output).toBe(true);
  for (const name of ['main', 'plans', 'saas', 'closed']) {
    mods[name] = await scratch.load<Mod>(name, 'express');
    rulesOf[name] = (await scratch.load<{ RULES: RuleSpec[] }>(name, 'ratelimit-core')).RULES;
  }
  redis = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await redis?.quit();
  await server?.stop();
  scratch?.remove();
});

async function start(design: string, options: TestOptions = {}, client: unknown = redis): Promise<Served> {
  const s = await serve('express', mods[design] as Mod, { redis: client, keyPrefix: freshPrefix('m'), ...options });
  open.push(s);
  return s;
}

/** The series of one metric in the exposition text, as label strings. */
function seriesOf(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}

async function expositionOf(registry: Registry): Promise<string> {
  return registry.metrics();
}

describe('every counter series exists at 0 from the start, bounded by the design', () => {
  for (const design of ['main', 'plans'] as const) {
    it(`${design}: one series per rule and outcome before any request, and requests add none`, async () => {
      const s = await start(design);
      const rules = rulesOf[design] as RuleSpec[];
      expect(rules.length).toBeGreaterThan(0);
      const text = await expositionOf(s.registry);
      for (const r of rules) {
        for (const result of ['allowed', 'throttled', 'shadow_throttled']) {
          expect(text).toContain(`ratelimit_decisions_total{rule="${r.id}",result="${result}"} 0`);
        }
        for (const mode of ['enforce', 'shadow']) expect(text).toContain(`ratelimit_throttled_total{rule="${r.id}",mode="${mode}"} 0`);
        for (const reason of ['timeout', 'connection', 'script'])
          expect(text).toContain(`ratelimit_store_failures_total{rule="${r.id}",reason="${reason}"} 0`);
        expect(text).toContain(`ratelimit_fail_open_events_total{rule="${r.id}"} 0`);
        expect(text).toContain(`ratelimit_near_limit_total{rule="${r.id}"} 0`);
        if (r.tier === 'quota') expect(text).toContain(`ratelimit_quota_exhausted_total{rule="${r.id}",plan="${r.plan ?? ''}"} 0`);
      }
      const counts = (t: string): Record<string, number> =>
        Object.fromEntries(
          [
            'ratelimit_decisions_total',
            'ratelimit_throttled_total',
            'ratelimit_store_failures_total',
            'ratelimit_fail_open_events_total',
            'ratelimit_near_limit_total',
            'ratelimit_quota_exhausted_total',
          ].map((n) => [n, seriesOf(t, n).length]),
        );
      const before = counts(text);
      expect(before.ratelimit_decisions_total).toBe(rules.length * 3);
      expect(before.ratelimit_fail_open_events_total).toBe(rules.length);
      expect(before.ratelimit_quota_exhausted_total).toBe(rules.filter((r) => r.tier === 'quota').length);
      // many identities, plans nobody designed, hostile names: no new series
      for (let i = 0; i < 30; i++) {
        const headers = { 'x-test-key': `k${i}`, 'x-test-tenant': `t${i}`, 'x-test-plan': i % 3 === 0 ? `plan-${i}` : 'Free' };
        await hit(s.url, 'GET', design === 'main' ? '/v1/items' : '/v1/orders', headers);
      }
      await hit(s.url, 'POST', '/v1/login', {}, { username: 'a"}\n{evil' });
      expect(counts(await expositionOf(s.registry))).toEqual(before);
    });
  }

  it('every metric the design credits to the middleware is exported (the histogram after its first call)', async () => {
    for (const name of ['main', 'plans', 'saas'] as const) {
      const s = await start(name, name === 'saas' ? { trustedProxies: ['127.0.0.0/8'], identities: TENANT_FROM_HEADER } : {});
      await hit(s.url, 'GET', name === 'plans' ? '/v1/orders' : name === 'saas' ? '/v1/orders' : '/v1/items', {
        'x-test-key': 'k',
        'x-test-tenant': 't',
        'x-test-plan': 'Free',
      });
      const text = await expositionOf(s.registry);
      const credited = (designs[name] as Design).monitoring.metrics.filter((m) => m.emittedBy?.includes('middleware'));
      expect(credited.length).toBeGreaterThan(5);
      for (const m of credited) {
        const exported = m.type === 'histogram' ? `${m.name}_bucket` : m.name;
        expect(seriesOf(text, exported).length, `${name}: ${m.name}`).toBeGreaterThan(0);
        expect(text).toContain(`# TYPE ${m.name} ${m.type}`);
      }
      await Promise.all(open.splice(0).map((x) => x.close()));
    }
  });
});

describe('ratelimit_near_limit_total', () => {
  it('counts the admitted decisions that left less than 20% of the burst, per rule', async () => {
    const s = await start('main', { defaultMode: 'enforce' });
    // fairness-per-api-key: burst 12, 1/min. After each call 11, 10, ..., 0 tokens are left:
    // under 20% of 12 (2.4) are the calls leaving 2, 1 and 0; the 13th is refused, not counted
    for (let i = 0; i < 13; i++) await hit(s.url, 'GET', '/v1/items', { 'x-test-key': 'near' });
    expect(await counter(s.registry, 'ratelimit_near_limit_total', { rule: 'fairness-per-api-key' })).toBe(3);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'fairness-per-api-key', result: 'allowed' })).toBe(12);
    // the ceiling (1,000s of tokens) was nowhere near
    expect(await counter(s.registry, 'ratelimit_near_limit_total', { rule: 'global-ceiling' })).toBe(0);
  });

  it('counts in shadow mode too (the capacity signal before enforcement)', async () => {
    const s = await start('main', { defaultMode: 'shadow' });
    for (let i = 0; i < 12; i++) await hit(s.url, 'GET', '/v1/items', { 'x-test-key': 'near-shadow' });
    expect(await counter(s.registry, 'ratelimit_near_limit_total', { rule: 'fairness-per-api-key' })).toBe(3);
  });
});

describe('a store past maxmemory (noeviction) refuses writes: the fail modes the document states', () => {
  it('token-bucket rules fail by their fail mode (open: admit and count; closed: 503); the auth log keeps enforcing', async () => {
    const full = await startRedis(['--maxmemory-policy', 'noeviction']);
    const client = new Redis(full.port, full.host, { maxRetriesPerRequest: 1 });
    try {
      const s = await start('closed', { defaultMode: 'enforce' }, client);
      expect((await hit(s.url, 'GET', '/v1/items', { 'x-test-key': 'before' })).status).toBe(200);
      // the store is past its maxmemory (as when the bound was wrong): writes that grow memory are refused
      const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
      await client.config('SET', 'maxmemory', String(Math.floor(used / 2)));
      await expect(client.set('one-more', 'x')).rejects.toThrow(/OOM/);
      // the API key's fairness row (gcra) fails closed on the reads: 503 with Retry-After (its
      // fail-open half covers the anonymous search, where an API key is counted too)
      const closed = await hit(s.url, 'GET', '/v1/items', { 'x-test-key': 'after' });
      expect(closed.status).toBe(503);
      expect(closed.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(
        await counter(s.registry, 'ratelimit_store_failures_total', { rule: 'fairness-per-api-key-fail-closed', reason: 'script' }),
      ).toBe(1);
      // anonymous-per-ip (gcra) fails open: admitted unchecked, counted for RateLimitFailOpen
      const opened = await hit(s.url, 'GET', '/v1/public');
      expect(opened.status).toBe(200);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'anonymous-per-ip' })).toBe(1);
      // the sliding-window log starts with a trim (a write that frees memory), after which Redis
      // lets the script finish: the login limits are still enforced (3 per username)
      const logins: number[] = [];
      for (let i = 0; i < 4; i++) logins.push((await hit(s.url, 'POST', '/v1/login', {}, { username: 'oom' })).status);
      expect(logins).toEqual([200, 200, 200, 429]);
      expect(await counter(s.registry, 'ratelimit_store_failures_total', { rule: 'auth-login-per-identity' })).toBe(0);
    } finally {
      await client.quit();
      await full.stop();
    }
  });
});

describe('the memory bound prices in the longest keys the middleware really writes', () => {
  it("bytesPerKey bounds what Redis really uses for a rule's longest keys (used_memory over 50,000 keys)", async () => {
    const design = designs.saas as Design;
    const own = await startRedis();
    const client = new Redis(own.port, own.host, { maxRetriesPerRequest: 1 });
    const N = 50_000;
    const windowEnd = Date.now() + 31 * 86_400_000;
    // a tenant's hash at its largest: every field it can hold (each plan's bucket, from before a
    // plan change, and the quota), which is what bytesPerKey of each of its rules prices
    const bucket = (field: string) => [field, 'g', 12 * 60_000_000, 60_000_000];
    const cases: { id: string; script: LuaScriptName; args: (string | number)[] }[] = [
      { id: 'auth-password-reset-per-identity', script: 'sliding-window-log', args: [3, 3_600_000, 1] },
      { id: 'auth-password-reset-per-ip', script: 'sliding-window-log', args: [20, 3_600_000, 1] },
      {
        id: 'fairness-pro',
        script: 'identity-limits',
        args: [...bucket('req:free'), ...bucket('req:pro'), ...bucket('req:enterprise'), 'quota', 'w', 100000, windowEnd, 1],
      },
    ];
    try {
      for (const c of cases) {
        const r = design.rules.find((x) => x.id === c.id) as Design['rules'][number];
        if (r.field) {
          const hash = design.monitoring.store.hashes?.find((h) => h.key === r.key);
          expect(hash?.bytesPerKey).toBe(r.bytesPerKey);
          expect(design.rules.filter((x) => x.key === r.key).map((x) => x.field)).toEqual(
            expect.arrayContaining(['req:free', 'req:pro', 'req:enterprise', 'quota']),
          );
        }
        const chars = r.keyChars as number;
        const sha = (await client.script('LOAD', luaScript(c.script).source)) as string;
        // twice, the second on a warmed-up server (as the bench measures): the first fill of a
        // fresh server also pays for the allocator's own bookkeeping
        let perKey = 0;
        for (let pass = 0; pass < 2; pass++) {
          await client.flushall('SYNC');
          const before = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
          for (let i = 0; i < N; i += 1000) {
            const pipeline = client.pipeline();
            for (let j = i; j < i + 1000; j++)
              pipeline.evalsha(sha, 1, `rl:{${j.toString(16).padStart(8, '0')}}`.padEnd(chars, 'x'), ...c.args);
            for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
          }
          const after = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
          expect(await client.dbsize()).toBe(N);
          perKey = (after - before) / N;
        }
        expect(perKey, `${c.id}: ${chars}-character keys`).toBeLessThanOrEqual((r.bytesPerKey as number) + 1);
        // and not wildly above it either: the bound is the real cost, not a guess
        expect(perKey, c.id).toBeGreaterThan((r.bytesPerKey as number) * 0.8);
      }
    } finally {
      await client.quit();
      await own.stop();
    }
  });

  it("saas-platform: keys for the largest identities are at most each rule's keyChars long", async () => {
    const design = designs.saas as Design;
    const own = await startRedis();
    const client = new Redis(own.port, own.host, { maxRetriesPerRequest: 1 });
    // every key the middleware sends with a script call: a key of a fast rule (webhooks, 500 a
    // second) expires a few milliseconds after its call, before a KEYS could list it
    const sent = new Set<string>();
    // (the Buffer variant the middleware calls is not in ioredis's types)
    const calls = client as unknown as { evalshaBuffer: (sha: string, numKeys: number, ...args: unknown[]) => Promise<unknown> };
    const evalshaBuffer = calls.evalshaBuffer.bind(client);
    calls.evalshaBuffer = (sha, numKeys, ...args) => {
      for (let i = 0; i < Number(numKeys); i++) sent.add(String(args[i]));
      return evalshaBuffer(sha, numKeys, ...args);
    };
    try {
      // keyPrefix "rl", as deployed; loopback plays the trusted proxy so an IPv6 client can be named
      const s = await serve('express', mods.saas as Mod, {
        redis: client,
        keyPrefix: 'rl',
        defaultMode: 'enforce',
        trustedProxies: ['127.0.0.0/8'],
        identities: TENANT_FROM_HEADER,
        // the keys must be written: a loaded test machine must not time the calls out (fail open, no key)
        timeoutMs: 5000,
      });
      open.push(s);
      const ipv6 = 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
      const tenant = 't'.repeat(128);
      for (const plan of ['Free', 'Pro', 'Enterprise']) {
        await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': tenant, 'x-test-plan': plan, 'x-forwarded-for': ipv6 });
        await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': 'x'.repeat(400), 'x-test-plan': plan, 'x-forwarded-for': ipv6 });
      }
      for (const path of ['/v1/auth/login', '/v1/auth/password-reset', '/v1/oauth/token']) {
        await hit(
          s.url,
          'POST',
          path,
          { 'x-forwarded-for': ipv6 },
          { username: 'u'.repeat(300), email: 'e'.repeat(300), client_id: 'c'.repeat(300) },
        );
      }
      await hit(s.url, 'POST', '/v1/webhooks/stripe', { 'x-forwarded-for': ipv6 }, {});
      const stored = await client.keys('rl:*');
      // what Redis holds was sent; what was sent is what is checked
      for (const key of stored) expect(sent.has(key), key).toBe(true);
      const keys = [...sent];
      // (each tenant's fairness bucket and quota: one hash; the webhook source's bucket)
      expect(keys.length).toBeGreaterThanOrEqual(9);
      expect(keys.some((k) => k.endsWith(':webhook'))).toBe(true);
      const patterns = design.rules
        .filter((r) => r.keyChars !== undefined && r.key?.startsWith('rl:'))
        .map((r) => ({
          rule: r,
          re: new RegExp(
            `^${(r.key as string)
              .split(/(?:[A-Za-z0-9_-]+:)?<[^<>]*>/)
              .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
              .join('.+')}(?::.+)?$`,
          ),
        }));
      for (const key of keys) {
        const matching = patterns.filter((p) => p.re.test(key));
        expect(matching.length, `no rule writes ${key}`).toBeGreaterThan(0);
        const allowed = Math.max(...matching.map((p) => p.rule.keyChars as number));
        expect(key.length, `${key} (${matching.map((p) => p.rule.id).join(', ')})`).toBeLessThanOrEqual(allowed);
      }
      // the longest ones are exactly the bound: a sha256 key and a 128-character tenant
      expect(keys.some((k) => k.startsWith('rl:{auth:password-reset}:un:') && k.length === 92)).toBe(true);
      expect(keys.some((k) => k.startsWith('rl:{auth:password-reset}:ip:') && k.length === 52)).toBe(true);
    } finally {
      await Promise.all(open.splice(0).map((x) => x.close()));
      await client.quit();
      await own.stop();
    }
  });
});

/**
 * The generated outbound client, compiled with `tsc --strict` in a scratch project and run
 * against a real redis-server: two instances sharing one bucket never exceed the rate
 * together, a provider 429 pauses both, the circuit moves closed -> open -> half-open ->
 * closed (or back to open), the store being down fails closed, NOSCRIPT falls back to EVAL.
 * The design's hostile provider names (`__proto__`, quotes, `*\/`, `${`) are in the file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { luaScript } from '../../src/lua.js';
import { generateOutbound, outboundProviders } from '../../src/codegen/outbound/index.js';
import { exampleDesign, exampleNames, reviewDesign, ROOT } from '../helpers/examples.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { expectEveryKeyHasTtl } from '../lua/harness.js';
import { EVIL, hostileDesign } from './support/hostile.js';
import { compileClient, type Compiled } from './support/outbound.js';

const PROTO = '__proto__'; // 20 calls/s, burst 2, shared in Redis
const LOCAL = 'local-only'; // 20 calls/s, burst 2, in-process
const INTERVAL = 50;

type Client = {
  schedule<T>(provider: string, fn: () => T | Promise<T>, options?: Record<string, unknown>): Promise<T>;
  circuitState(provider: string): string;
};
type Event = { type: string; provider: string; [k: string]: unknown };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * GCRA at `rate` per second with `burst`, every call scheduled at `started`: the k-th call
 * (counting from 1, in the order they ran) has its slot (k - burst) intervals after the
 * first reservation, and a call never runs before its slot. Checked against the time each
 * call ran, measured from before the first reservation, so a stalled event loop (a busy CI
 * machine) can only make calls late and never fails this; two unshared instances would run
 * at twice the rate and miss whole intervals. The slack covers Node timers firing up to a
 * few ms early against Date.now() (libuv's cached loop time).
 */
function expectNeverEarly(times: number[], started: number, burst: number, intervalMs: number, slackMs = 10): void {
  const t = [...times].sort((a, b) => a - b);
  t.forEach((ran, j) => {
    const slot = Math.max(0, j + 1 - burst) * intervalMs;
    expect(ran - started + slackMs, `call ${j + 1} ran ${ran - started} ms after the start, its slot is at ${slot}`).toBeGreaterThanOrEqual(
      slot,
    );
  });
}

describe('generated outbound client: source', () => {
  it('is generated only for designs that call providers', () => {
    for (const name of exampleNames()) {
      const design = exampleDesign(name);
      expect(generateOutbound(design).length).toBe((design.outbound?.providers.length ?? 0) > 0 ? 3 : 0);
    }
  });

  it("uses each provider's rule numbers and shared key", () => {
    const design = exampleDesign('saas-platform');
    const providers = outboundProviders(design);
    expect(providers).toEqual([
      // burst + rate per period stays within Stripe's 100/s: 10 + 90 = 100
      {
        name: 'Stripe',
        ruleId: 'outbound-stripe',
        key: 'rl:{out:stripe}:bucket',
        shared: true,
        rate: 90,
        periodMs: 1000,
        burst: 10,
        killSwitchFlag: 'ratelimit.outbound-stripe.mode',
      },
      {
        name: 'SendGrid',
        ruleId: 'outbound-sendgrid',
        key: 'rl:{out:sendgrid}:bucket',
        shared: true,
        rate: 480,
        periodMs: 60000,
        burst: 8,
        killSwitchFlag: 'ratelimit.outbound-sendgrid.mode',
      },
    ]);
    const source = generateOutbound(design)
      .map((f) => f.content)
      .join('\n');
    expect(source).toContain("export const DEFAULT_MODE: Mode = 'shadow';");
    expect(source).toMatch(/Without a mode hook \(or when it returns undefined\) a provider runs in SHADOW mode/);
    expect(source).not.toMatch(/from 'rl-design|from '\.\.\//);
    expect(source).toContain('OUTBOUND_BUCKET_SHA1 = "f2777fb97e1116f3e13b415445b9eedf1dd4336b"');
  });
});

describe('generated outbound client: a design without a store', () => {
  const design = reviewDesign('nestjs-memory-quotas');
  const files = generateOutbound(design);

  it("the client's header describes the in-process bucket as the code keeps it, beside the shared one", () => {
    const source = files.find((f) => f.path === 'outbound/client.ts')?.content ?? '';
    const header = source.slice(0, source.indexOf('*/'));
    expect(header).toContain('- shared: true: one bucket in Redis (outbound-bucket.lua');
    expect(header).toContain('- shared: false: an in-process bucket, the same GCRA in plain code, kept in this client');
    expect(header).toContain("object's own Map under the provider's name (PROVIDERS[p].name); no Redis is called for it.");
    expect(header).toContain('An in-process bucket calls no store, so it never throws STORE_UNAVAILABLE.');
    expect(header).not.toMatch(/one bucket per third-party provider, shared by every instance/);
    // what the header says is what the code does: the in-process bucket's Map is read under limit.name
    expect(source).toContain('const tat = Math.max(this.local.get(limit.name) ?? 0, now);');
  });

  it('runs without Redis and keeps the bucket under the key the document states', async () => {
    const compiled = await compileClient(files);
    try {
      const rule = design.rules.find((r) => r.tier === 'outbound');
      const client = new compiled.module.OutboundClient({ mode: () => 'enforce' });
      expect(await client.schedule('Stripe', () => 'called')).toBe('called');
      expect([...(client as { local: Map<string, number> }).local.keys()]).toEqual([rule?.key]);
      expect(rule?.key).toBe('Stripe');
    } finally {
      compiled.remove();
    }
  });
});

describe('generated outbound client: compiled and run against Redis', () => {
  const design = hostileDesign();
  let compiled: Compiled;
  let server: RedisServer;
  let redisA: Redis;
  let redisB: Redis;
  let admin: Redis;
  let mod: Record<string, any>;
  const events: Event[] = [];

  // Enforcing explicitly: without a mode hook the client starts in shadow, like the rollout.
  const client = (redis: Redis, options: Record<string, unknown> = {}): Client =>
    new mod.OutboundClient({ redis, mode: () => 'enforce', onEvent: (e: Event) => events.push(e), ...options }) as Client;

  beforeAll(async () => {
    compiled = await compileClient(generateOutbound(design));
    mod = compiled.module;
    server = await startRedis();
    redisA = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
    redisB = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
    admin = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
  });
  beforeEach(async () => {
    await admin.flushall();
    events.length = 0;
  });
  afterAll(async () => {
    if (admin) await expectEveryKeyHasTtl(admin);
    await Promise.all([redisA, redisB, admin].filter(Boolean).map((c) => c.quit()));
    await server?.stop();
    compiled?.remove();
  });

  it('embeds lua/outbound-bucket.lua byte for byte, with its pinned SHA1', () => {
    const file = readFileSync(join(ROOT, 'lua', 'outbound-bucket.lua'), 'utf8');
    expect(mod.OUTBOUND_BUCKET_LUA).toBe(file);
    expect(mod.OUTBOUND_BUCKET_SHA1).toBe(luaScript('outbound-bucket').sha1);
    expect(createHash('sha1').update(mod.OUTBOUND_BUCKET_LUA).digest('hex')).toBe(mod.OUTBOUND_BUCKET_SHA1);
  });

  it('keeps hostile provider names as plain own keys', () => {
    expect(Object.keys(mod.PROVIDERS)).toEqual([PROTO, EVIL, LOCAL]);
    expect(Object.hasOwn(mod.PROVIDERS, PROTO)).toBe(true);
    expect(mod.PROVIDERS[PROTO]).toMatchObject({
      name: PROTO,
      shared: true,
      rate: 20,
      periodMs: 1000,
      burst: 2,
      key: 'rl:{out:proto}:bucket',
    });
    expect(mod.PROVIDERS[LOCAL]).toMatchObject({ shared: false, key: '' });
    expect(mod.CIRCUIT).toEqual({ failureThreshold: 3, windowMs: 30_000, openMs: 30_000, halfOpenProbes: 1 });
  });

  it('two instances sharing one bucket never exceed the rate together', async () => {
    const a = client(redisA);
    const b = client(redisB);
    const times: number[] = [];
    const started = Date.now();
    const calls = Array.from({ length: 30 }, (_, i) =>
      (i % 2 === 0 ? a : b).schedule(PROTO, () => {
        times.push(Date.now());
        return i;
      }),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expectNeverEarly(times, started, 2, INTERVAL);
    // and they did not wait longer than the rate requires: 28 intervals after the burst
    expect(Math.max(...times) - started).toBeLessThan(28 * INTERVAL + 1000);
    const waits = events.filter((e) => e.type === 'reserved').map((e) => e.waitMs as number);
    expect(waits).toHaveLength(30);
    expect(waits.filter((w) => w === 0)).toHaveLength(2);
  });

  it('refuses with WAIT_TOO_LONG (fn not called) when the slot is further away than maxWaitMs', async () => {
    const a = client(redisA);
    // the bucket is empty for ~5 s (a provider asked for that)
    await a.schedule(PROTO, () => ({ status: 429, headers: { 'retry-after': '5' } }));
    let called = false;
    const error = await a.schedule(PROTO, () => (called = true), { maxWaitMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(mod.OutboundLimitError);
    expect(error).toMatchObject({ code: 'WAIT_TOO_LONG', provider: PROTO });
    expect((error as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(4000);
    expect(called).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'refused', code: 'WAIT_TOO_LONG' });
    // a cost above the burst can never fit
    await expect(a.schedule(PROTO, () => 0, { cost: 3 })).rejects.toMatchObject({ code: 'COST_TOO_HIGH' });
  });

  it('a provider 429 seen by one instance pauses the other until its Retry-After', async () => {
    const a = client(redisA);
    const b = client(redisB);
    const throttled = { status: 429, headers: { 'Retry-After': '1' } };
    // the 429 is returned to the caller unchanged
    expect(await a.schedule(PROTO, () => throttled)).toBe(throttled);
    const pausedAt = Date.now();
    expect(events).toContainEqual({ type: 'provider_429', provider: PROTO, retryAfterMs: 1000 });
    // B with a short budget is refused without calling
    await expect(b.schedule(PROTO, () => 'no', { maxWaitMs: 200 })).rejects.toMatchObject({ code: 'WAIT_TOO_LONG' });
    // B with room to wait is queued behind the pause
    let calledAt = 0;
    await b.schedule(PROTO, () => (calledAt = Date.now()), { maxWaitMs: 3000 });
    expect(calledAt - pausedAt).toBeGreaterThanOrEqual(950);
    expect(calledAt - pausedAt).toBeLessThan(1600);
    // the pause key expires by itself
    expect(await admin.pttl(mod.PROVIDERS[PROTO].key)).toBeGreaterThan(0);
  });

  it('retries after a provider 429 when asked, waiting for the shared pause', async () => {
    const a = client(redisA);
    let n = 0;
    const started = Date.now();
    const result = await a.schedule(PROTO, () => (++n === 1 ? { status: 429, headers: { 'retry-after': '0.3' } } : { status: 200 }), {
      retries: 1,
    });
    expect(result).toEqual({ status: 200 });
    expect(n).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('circuit: closed -> open after the threshold -> half-open probe -> closed', async () => {
    const a = client(redisA, { circuit: { openMs: 300 } });
    const failing = { status: 503 };
    for (let i = 0; i < 3; i++) expect(await a.schedule(PROTO, () => failing, { maxWaitMs: 2000 })).toBe(failing);
    expect(a.circuitState(PROTO)).toBe('open');
    let called = false;
    const open = await a.schedule(PROTO, () => (called = true)).catch((e: unknown) => e);
    expect(open).toMatchObject({ code: 'CIRCUIT_OPEN', provider: PROTO });
    expect((open as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    expect(called).toBe(false);
    await sleep(320);
    // the first call after openMs is the probe; while it runs, others are still refused
    let release: (v: { status: number }) => void = () => undefined;
    const probe = a.schedule(PROTO, () => new Promise<{ status: number }>((r) => (release = r)), { maxWaitMs: 2000 });
    await sleep(120);
    expect(a.circuitState(PROTO)).toBe('half-open');
    await expect(a.schedule(PROTO, () => 'second')).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
    release({ status: 200 });
    expect(await probe).toEqual({ status: 200 });
    expect(a.circuitState(PROTO)).toBe('closed');
    expect(events.filter((e) => e.type === 'circuit').map((e) => e.state)).toEqual(['open', 'half-open', 'closed']);
  });

  it('circuit: a failed probe opens it again; a long Retry-After keeps it open longer', async () => {
    const a = client(redisA, { circuit: { openMs: 200, failureThreshold: 2 } });
    // thrown network errors count as failures
    for (let i = 0; i < 2; i++) {
      await expect(a.schedule(PROTO, () => Promise.reject(new Error('ECONNRESET')), { maxWaitMs: 2000 })).rejects.toThrow('ECONNRESET');
    }
    expect(a.circuitState(PROTO)).toBe('open');
    await sleep(220);
    // the probe gets a 429 asking for 0.6 s: open again, for the Retry-After (> openMs)
    await a.schedule(PROTO, () => ({ status: 429, headers: { 'retry-after': '0.6' } }), { maxWaitMs: 2000 });
    expect(a.circuitState(PROTO)).toBe('open');
    await sleep(300);
    await expect(a.schedule(PROTO, () => 'x')).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
    await sleep(400);
    expect(await a.schedule(PROTO, () => 'ok', { maxWaitMs: 2000 })).toBe('ok');
    expect(a.circuitState(PROTO)).toBe('closed');
  });

  it('falls back to EVAL on NOSCRIPT, loading the script for the next EVALSHA', async () => {
    await admin.script('FLUSH');
    expect(await admin.script('EXISTS', mod.OUTBOUND_BUCKET_SHA1)).toEqual([0]);
    expect(await client(redisA).schedule(PROTO, () => 'ok')).toBe('ok');
    expect(await admin.script('EXISTS', mod.OUTBOUND_BUCKET_SHA1)).toEqual([1]);
  });

  it('shadow mode books and records but never waits or refuses; off bypasses the bucket', async () => {
    const shadow = client(redisA, {
      mode: (_p: string, flag: string) => (flag === 'ratelimit.outbound-proto.mode' ? 'shadow' : 'enforce'),
    });
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => shadow.schedule(PROTO, () => i)));
    expect(results).toHaveLength(20);
    // enforced, the last call would wait 18 intervals (900 ms)
    expect(Date.now() - started).toBeLessThan(450);
    expect(events.filter((e) => e.type === 'shadow').length).toBeGreaterThanOrEqual(10);
    await admin.flushall();
    const off = client(redisA, { mode: () => 'off' });
    expect(await off.schedule(PROTO, () => 'direct')).toBe('direct');
    expect(await admin.dbsize()).toBe(0);
  });

  it('runs in shadow mode when no mode hook decides, as the rollout starts every rule; defaultMode and the hook switch it', async () => {
    expect(mod.DEFAULT_MODE).toBe('shadow');
    const bare = new mod.OutboundClient({ redis: redisA, onEvent: (e: Event) => events.push(e) }) as Client;
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => bare.schedule(PROTO, () => i)));
    expect(results).toHaveLength(20);
    // enforced, the last call would wait 18 intervals (900 ms); in shadow none waits
    expect(Date.now() - started).toBeLessThan(450);
    expect(events.filter((e) => e.type === 'shadow').length).toBeGreaterThanOrEqual(10);
    expect(events.some((e) => e.type === 'reserved')).toBe(false);

    await admin.flushall();
    events.length = 0;
    // a hook that says nothing (undefined) falls back to defaultMode
    const enforcing = new mod.OutboundClient({
      redis: redisA,
      mode: () => undefined,
      defaultMode: 'enforce',
      onEvent: (e: Event) => events.push(e),
    }) as Client;
    await Promise.all(Array.from({ length: 3 }, () => enforcing.schedule(PROTO, () => 1)));
    expect(events.filter((e) => e.type === 'reserved')).toHaveLength(3);
    expect(events.some((e) => e.type === 'shadow')).toBe(false);
  });

  it('an in-process provider keeps the same bucket semantics in the process', async () => {
    const a = client(redisA);
    const times: number[] = [];
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, () => a.schedule(LOCAL, () => times.push(Date.now()))));
    expectNeverEarly(times, started, 2, INTERVAL);
    expect(await admin.dbsize()).toBe(0);
  });

  it('the default classifier reads fetch Responses, axios-style errors and Retry-After dates', () => {
    const classify = mod.defaultClassify as (r: unknown) => unknown;
    expect(classify({ ok: true, value: new Response('', { status: 429, headers: { 'Retry-After': '2' } }) })).toEqual({
      kind: 'throttled',
      retryAfterMs: 2000,
    });
    expect(classify({ ok: true, value: new Response('', { status: 429 }) })).toEqual({ kind: 'throttled' });
    expect(classify({ ok: true, value: new Response('', { status: 502 }) })).toEqual({ kind: 'failure' });
    expect(classify({ ok: true, value: new Response('', { status: 404 }) })).toEqual({ kind: 'ok' });
    expect(classify({ ok: false, error: { response: { status: 429, headers: { 'retry-after': '3' } } } })).toEqual({
      kind: 'throttled',
      retryAfterMs: 3000,
    });
    expect(classify({ ok: false, error: Object.assign(new Error('bad request'), { statusCode: 400 }) })).toEqual({ kind: 'ok' });
    expect(classify({ ok: false, error: new Error('ECONNREFUSED') })).toEqual({ kind: 'failure' });
    const parse = mod.parseRetryAfter as (v: unknown, now?: number) => number | undefined;
    const now = Date.UTC(2026, 11, 2, 12, 0, 0);
    expect(parse('Wed, 02 Dec 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parse('1.5')).toBe(1500);
    expect(parse(['7'])).toBe(7000);
    expect(parse('soon')).toBeUndefined();
  });
});

describe('generated outbound client: store down', () => {
  it('fails closed: no reservation, no provider call, STORE_UNAVAILABLE after maxWaitMs', async () => {
    const compiled = await compileClient(generateOutbound(hostileDesign()));
    const server = await startRedis();
    const redis = new Redis(server.port, server.host);
    redis.on('error', () => undefined);
    try {
      const events: Event[] = [];
      const client = new compiled.module.OutboundClient({
        redis,
        storeTimeoutMs: 100,
        defaultMode: 'enforce',
        onEvent: (e: Event) => events.push(e),
      }) as Client;
      expect(await client.schedule(PROTO, () => 'up')).toBe('up');
      await server.stop();
      let called = false;
      const started = Date.now();
      const error = await client.schedule(PROTO, () => (called = true), { maxWaitMs: 400 }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(called).toBe(false);
      expect(error).toBeInstanceOf(compiled.module.OutboundLimitError);
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', provider: PROTO });
      expect((error as { storeError: unknown }).storeError).toBeInstanceOf(Error);
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(elapsed).toBeLessThan(1500);
      expect(events.filter((e) => e.type === 'store_failure').length).toBeGreaterThanOrEqual(2);
      expect(events.at(-1)).toMatchObject({ type: 'refused', code: 'STORE_UNAVAILABLE' });
    } finally {
      redis.disconnect();
      await server.stop();
      compiled.remove();
    }
  });

  it('refuses to start without Redis when a provider bucket is shared', async () => {
    const compiled = await compileClient(generateOutbound(hostileDesign()));
    try {
      expect(() => new compiled.module.OutboundClient({})).toThrow(/shared bucket/);
    } finally {
      compiled.remove();
    }
  });
});

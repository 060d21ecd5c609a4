/**
 * The design's test scenarios for the generated middleware, over real HTTP, for Express and
 * Fastify, against a real redis-server started here: burst at the boundary, the race for
 * the last tokens, store outage in both fail modes (and a store that hangs), throttled-client
 * recovery, dual-key auth, cost-weighted exhaustion, shadow mode, kill switch, forged
 * X-Forwarded-For, silent rules, quotas, the hybrid local bucket, NOSCRIPT fallback.
 * After every scenario, every key under the scenario's prefix must carry a TTL.
 */
import { createServer, type Server, type Socket } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { calendarPeriodFor } from './period.js';
import { DOCS, HYBRID, MAIN, PLANS, ROLLING } from './designs.js';
import { counter, designFrom, freshPrefix, hit, sleep, useServedMiddleware, type Framework } from './harness.js';
import { startRedis } from '../helpers/redis.js';
import { luaScript } from '../../src/lua.js';

const mw = useServedMiddleware({
  main: designFrom(MAIN),
  plans: designFrom(PLANS),
  hybrid: designFrom(HYBRID),
  rolling: designFrom(ROLLING),
});
/** A server for one scenario, with its own key prefix (checked for TTLs afterwards). */
const { start } = mw;

const key = (k: string): Record<string, string> => ({ 'x-test-key': k });

/** A TCP server that accepts connections and never answers: a hung store. */
async function hungStore(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const silent: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (silent.address() as { port: number }).port,
    close: async () => {
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    },
  };
}

describe('the Express adapter', () => {
  it('a response that can no longer take headers goes to the error handler, once, and the process lives on', async () => {
    const { rateLimit } = mw.adapter('main', 'express') as unknown as {
      rateLimit(o: Record<string, unknown>): express.RequestHandler & { limiter: { close(): void } };
    };
    const limiter = rateLimit({
      redis: mw.redis,
      keyPrefix: freshPrefix(),
      defaultMode: 'enforce',
      identify: (req: express.Request) => ({ apiKey: req.get('x-test-key') }),
    });
    const errors: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const app = express();
    // an earlier middleware that has already sent the status line and headers
    app.use((_req, res, next) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      next();
    });
    app.use(limiter);
    app.get('/v1/items', (_req, res) => {
      res.end('not reached');
    });
    app.use((error: Error & { code?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(error.code ?? error.message);
      res.end('handled');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const port = (server.address() as { port: number }).port;
      const res = await fetch(`http://127.0.0.1:${port}/v1/items`, { headers: key('sent-early') });
      expect(await res.text()).toBe('handled');
      await sleep(50);
      expect(errors).toEqual(['ERR_HTTP_HEADERS_SENT']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      limiter.limiter.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe.each<Framework>(['express', 'fastify'])('%s middleware', (fw) => {
  it('burst exactly at the limit boundary: burst requests pass, the next is refused with a full 429', async () => {
    const s = await start(fw, 'main');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 12; i++) {
      last = await hit(s.url, 'GET', '/v1/items', key('burst'));
      statuses.push(last.status);
      // the most constraining client-facing rule (fairness, burst 12) on every response:
      // 12 tokens per the 720 s a drained bucket takes to refill at 1 per minute
      expect(last.headers.get('ratelimit-policy')).toBe('"fairness-per-api-key";q=12;w=720');
      expect(last.headers.get('ratelimit')).toMatch(new RegExp(`^"fairness-per-api-key";r=${11 - i};t=\\d+$`));
      expect(last.headers.get('retry-after')).toBeNull();
    }
    expect(statuses).toEqual(Array(12).fill(200));
    const refused = await hit(s.url, 'GET', '/v1/items/42', key('burst'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    // 1 token per minute: the next one is about a minute away
    expect(Number.isInteger(retryAfter) && retryAfter >= 55 && retryAfter <= 60).toBe(true);
    expect(refused.headers.get('ratelimit')).toMatch(/^"fairness-per-api-key";r=0;t=\d+$/);
    expect(refused.body).toMatchObject({
      type: `${DOCS}#rate-limited`,
      status: 429,
      code: 'RATE_LIMITED',
      limit: { rule: 'fairness-per-api-key', quota: 12, windowSeconds: 720 },
      retryAfterSeconds: retryAfter,
      documentation: DOCS,
    });
    expect(typeof refused.body?.resetSeconds).toBe('number');
    // another API key has its own bucket
    expect((await hit(s.url, 'GET', '/v1/items', key('burst-other'))).status).toBe(200);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-per-api-key', mode: 'enforce' })).toBe(1);
  });

  it('the protective ceiling covers routes the answers do not list (404s, other methods); health checks stay exempt', async () => {
    const s = await start(fw, 'main');
    const unlisted = await hit(s.url, 'GET', '/v1/not-in-the-design', key('unlisted'));
    expect(unlisted.status).toBe(404);
    expect((await hit(s.url, 'DELETE', '/v1/items/1', key('unlisted'))).status).toBe(404);
    expect((await hit(s.url, 'GET', '/healthz')).status).toBe(200);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'global-ceiling', result: 'allowed' })).toBe(2);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'fairness-per-api-key' })).toBe(0);
  });

  it('200 concurrent requests racing for the last 10 tokens admit exactly 10', async () => {
    // a generous store timeout: 200 requests in this one process can delay a reply past the
    // 50 ms default, and a timed-out call fails open (that path has its own tests)
    const s = await start(fw, 'main', { timeoutMs: 5000 });
    expect((await hit(s.url, 'GET', '/v1/items', key('race'))).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/items', key('race'))).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 200 }, () => hit(s.url, 'GET', '/v1/items', key('race'))));
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429).length;
    expect(ok).toBe(10);
    expect(refused).toBe(190);
    expect(await counter(s.registry, 'ratelimit_fail_open_events_total')).toBe(0);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'fairness-per-api-key', result: 'allowed' })).toBe(12);
    expect(results.filter((r) => r.status === 429).every((r) => Number(r.headers.get('retry-after')) >= 1)).toBe(true);
  });

  it('store outage (redis-server stopped mid-test): fail-open admits and counts, fail-closed answers 503 + Retry-After', async () => {
    const own = await startRedis();
    const client = new Redis(own.port, own.host, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    client.on('error', () => undefined);
    try {
      const s = await start(fw, 'main', { timeoutMs: 100 }, client);
      expect((await hit(s.url, 'GET', '/v1/items', key('outage'))).status).toBe(200);
      expect((await hit(s.url, 'POST', '/v1/login', {}, { username: 'outage' })).status).toBe(200);
      await own.stop();
      // fail-open rules (ceiling, fairness): admitted, unchecked, counted
      const open1 = await hit(s.url, 'GET', '/v1/items', key('outage'));
      const open2 = await hit(s.url, 'GET', '/v1/public');
      expect(open1.status).toBe(200);
      expect(open2.status).toBe(200);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'fairness-per-api-key' })).toBe(1);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'anonymous-per-ip' })).toBe(1);
      expect(await counter(s.registry, 'ratelimit_store_failures_total', { rule: 'fairness-per-api-key' })).toBe(1);
      // fail-closed (login): 503 with Retry-After and a problem+json body
      const closed = await hit(s.url, 'POST', '/v1/login', {}, { username: 'outage' });
      expect(closed.status).toBe(503);
      expect(closed.headers.get('retry-after')).toBe('5');
      expect(closed.body).toMatchObject({ status: 503, code: 'RATE_LIMITER_UNAVAILABLE', documentation: DOCS });
      expect(await counter(s.registry, 'ratelimit_store_failures_total', { rule: 'auth-login-per-ip' })).toBe(1);
      // the ceiling failed open on the login request before the auth rows failed closed
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'global-ceiling' })).toBe(3);
    } finally {
      client.disconnect();
      await own.stop();
    }
  });

  it('a store that accepts connections but never answers: the per-call timeout applies the fail mode', async () => {
    const hung = await hungStore();
    const client = new Redis(hung.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    try {
      const s = await start(fw, 'main', { timeoutMs: 40 }, client);
      const t0 = Date.now();
      const admitted = await hit(s.url, 'GET', '/v1/items', key('hung'));
      const refused = await hit(s.url, 'POST', '/v1/login', {}, { username: 'hung' });
      expect(admitted.status).toBe(200);
      expect(refused.status).toBe(503);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(await counter(s.registry, 'ratelimit_store_failures_total', { reason: 'timeout' })).toBeGreaterThanOrEqual(3);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'fairness-per-api-key' })).toBe(1);
    } finally {
      client.disconnect();
      await hung.close();
    }
  });

  it('hybrid rules fail the same way: one failure counted, the rule fails open', async () => {
    const hung = await hungStore();
    const client = new Redis(hung.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    try {
      const s = await start(fw, 'plans', { timeoutMs: 40 }, client);
      const r = await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': 'hung', 'x-test-plan': 'Pro' });
      expect(r.status).toBe(200);
      expect(await counter(s.registry, 'ratelimit_store_failures_total', { rule: 'fairness-pro' })).toBe(1);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total', { rule: 'fairness-pro' })).toBe(1);
    } finally {
      client.disconnect();
      await hung.close();
    }
  });

  it('a throttled client that waits Retry-After is admitted again', async () => {
    const s = await start(fw, 'main');
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(200);
    const refused = await hit(s.url, 'GET', '/v1/public');
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    // one token comes back within a second; gcra.lua's answer may run up to 2 ms over (its
    // documented bound), which whole seconds round up to 2
    expect([1, 2]).toContain(wait);
    await sleep(wait * 1000);
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(200);
  });

  it('dual-key auth: many IPs against one username are stopped by the username row', async () => {
    const s = await start(fw, 'main');
    const attempts = [];
    for (let i = 1; i <= 4; i++) {
      // loopback is a trusted proxy here: the entry it appended is the client
      attempts.push(await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': `203.0.113.${i}` }, { username: 'Alice' }));
    }
    expect(attempts.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    // the same account in another spelling is the same key (hashed after normalising)
    expect((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': '203.0.113.9' }, { username: ' alice ' })).status).toBe(429);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'auth-login-per-identity' })).toBe(2);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'auth-login-per-ip' })).toBe(0);
    // silent rules: no rate-limit headers on success or refusal, but Retry-After on the 429
    const refused = attempts[3]!;
    for (const a of attempts) {
      expect(a.headers.get('ratelimit')).toBeNull();
      expect(a.headers.get('ratelimit-policy')).toBeNull();
    }
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // a generic body: no counts, no rule name
    expect(refused.body).toMatchObject({ status: 429, code: 'RATE_LIMITED', documentation: DOCS });
    expect(refused.body).not.toHaveProperty('limit');
    expect(JSON.stringify(refused.body)).not.toContain('auth-login');
    // the username is stored only as a hash
    const keys = await mw.redis.keys(`${s.prefix}:*`);
    expect(keys.some((k) => k.includes('{auth:login}:un:') && /[0-9a-f]{64}$/.test(k))).toBe(true);
    expect(keys.join(' ')).not.toMatch(/alice/i);
  });

  it('dual-key auth: an account name sent as an array or a number meets the same username row, never skips it', async () => {
    const s = await start(fw, 'main');
    const shapes: unknown[] = [['victim@x'], 'victim@x', ['victim@x'], ['victim@x']];
    const statuses = [];
    for (const [i, username] of shapes.entries()) {
      // a new address each time: only the username row can stop them
      statuses.push((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': `203.0.113.${40 + i}` }, { username })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const numbers = [];
    for (let i = 0; i < 4; i++)
      numbers.push(
        (await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': `203.0.113.${60 + i}` }, { username: i % 2 ? '42' : 42 })).status,
      );
    expect(numbers).toEqual([200, 200, 200, 429]);
  });

  it('dual-key auth: one IP against many usernames is stopped by the IP row', async () => {
    const s = await start(fw, 'main');
    const statuses = [];
    for (let i = 1; i <= 6; i++) {
      statuses.push((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': '198.51.100.7' }, { username: `user${i}` })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'auth-login-per-ip' })).toBe(1);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'auth-login-per-identity' })).toBe(0);
    // another address still gets in with a fresh username
    expect((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': '198.51.100.8' }, { username: 'user7' })).status).toBe(200);
  });

  it('a forged X-Forwarded-For does not escape the per-IP limit', async () => {
    // (a) the TCP peer is not a trusted proxy: the header is ignored altogether
    const direct = await start(fw, 'main', { trustedProxies: [] });
    const a = [];
    for (let i = 1; i <= 7; i++) {
      a.push((await hit(direct.url, 'POST', '/v1/login', { 'x-forwarded-for': `192.0.2.${i}` }, { username: `forge-a${i}` })).status);
    }
    expect(a).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(direct.limiter.clientIp('127.0.0.1', '192.0.2.1')).toBe('127.0.0.1');
    // (b) behind our proxy: the client prepends rotating entries, the proxy appends the real address
    const proxied = await start(fw, 'main');
    const b = [];
    for (let i = 1; i <= 7; i++) {
      b.push(
        (
          await hit(
            proxied.url,
            'POST',
            '/v1/login',
            { 'x-forwarded-for': `10.9.9.${i}, 8.8.8.${i}, 198.51.100.20` },
            { username: `forge-b${i}` },
          )
        ).status,
      );
    }
    expect(b).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // and anonymous traffic (per-IP token bucket) the same way
    const c = [];
    for (let i = 1; i <= 3; i++)
      c.push((await hit(proxied.url, 'GET', '/v1/public', { 'x-forwarded-for': `1.1.1.${i}, 198.51.100.21` })).status);
    expect(c).toEqual([200, 200, 429]);
  });

  it('cost-weighted exhaustion: an export takes 5 tokens from the same bucket as reads', async () => {
    const s = await start(fw, 'main');
    expect((await hit(s.url, 'POST', '/v1/exports', key('cost'), {})).status).toBe(200);
    const second = await hit(s.url, 'POST', '/v1/exports', key('cost'), {});
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit')).toMatch(/;r=2;/);
    const third = await hit(s.url, 'POST', '/v1/exports', key('cost'), {});
    expect(third.status).toBe(429);
    expect((await hit(s.url, 'GET', '/v1/items', key('cost'))).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/items/7', key('cost'))).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/items', key('cost'))).status).toBe(429);
  });

  it('shadow mode evaluates and records but never rejects', async () => {
    const s = await start(fw, 'main', { mode: () => 'shadow' });
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await hit(s.url, 'GET', '/v1/items', key('shadow'))).status);
    expect(statuses).toEqual(Array(20).fill(200));
    for (let i = 0; i < 8; i++) {
      expect((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': `203.0.113.${i}` }, { username: 'shadowed' })).status).toBe(200);
    }
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-per-api-key', mode: 'shadow' })).toBe(8);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'fairness-per-api-key', result: 'shadow_throttled' })).toBe(8);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'auth-login-per-identity', mode: 'shadow' })).toBe(5);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { mode: 'enforce' })).toBe(0);
  });

  it('the per-rule kill switch: a rule set to off is skipped, the others still enforce; exempt endpoints pass untouched', async () => {
    const flags: string[] = [];
    const s = await start(fw, 'main', {
      mode: (ruleId, flag) => {
        if (flag) flags.push(flag);
        return ruleId === 'fairness-per-api-key' ? 'off' : undefined;
      },
    });
    for (let i = 0; i < 15; i++) expect((await hit(s.url, 'GET', '/v1/items', key('killed'))).status).toBe(200);
    expect(flags).toContain('ratelimit.fairness-per-api-key.mode');
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(200);
    expect((await hit(s.url, 'GET', '/v1/public')).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      const h = await hit(s.url, 'GET', '/healthz');
      expect(h.status).toBe(200);
      expect(h.headers.get('ratelimit')).toBeNull();
    }
  });

  it('EVALSHA falls back to EVAL on NOSCRIPT, after which the script is cached again', async () => {
    const s = await start(fw, 'main');
    await mw.redis.script('FLUSH');
    const gcra = luaScript('gcra').sha1;
    expect(await mw.redis.script('EXISTS', gcra)).toEqual([0]);
    expect((await hit(s.url, 'GET', '/v1/items', key('noscript'))).status).toBe(200);
    expect(await mw.redis.script('EXISTS', gcra)).toEqual([1]);
    expect((await hit(s.url, 'GET', '/v1/items', key('noscript'))).status).toBe(200);
  });

  it('quota: a calendar month in the plan time zone, QUOTA_EXCEEDED distinct from RATE_LIMITED', async () => {
    const s = await start(fw, 'plans');
    const tenant = { 'x-test-tenant': 'acme', 'x-test-plan': 'Free' };
    for (let i = 0; i < 5; i++) {
      const ok = await hit(s.url, 'GET', '/v1/orders', tenant);
      expect(ok.status).toBe(200);
      // x-ratelimit convention: the most constraining rule is the quota (5 - i - 1 left)
      expect(ok.headers.get('x-ratelimit-limit')).toBe('5');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
      expect(ok.headers.get('ratelimit')).toBeNull();
    }
    const refused = await hit(s.url, 'GET', '/v1/orders', tenant);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      code: 'QUOTA_EXCEEDED',
      'violated-policies': ['quota-free'],
      documentation: DOCS,
    });
    const period = calendarPeriodFor(Date.now(), 'Europe/Berlin');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(retryAfter - (period.end - Date.now()) / 1000)).toBeLessThan(5);
    // the quota is a field of the tenant's hash: the period's end, then the count
    const hash = `${s.prefix}:{t:acme}`;
    expect(await mw.redis.hget(hash, 'quota')).toBe(`${Math.floor(period.end / 1000)}000000005`);
    const pttl = await mw.redis.pttl(hash);
    expect(Math.abs(pttl - (period.end + 60_000 - Date.now()))).toBeLessThan(5000);
    expect(await counter(s.registry, 'ratelimit_quota_exhausted_total', { rule: 'quota-free', plan: 'Free' })).toBe(1);
    // the fairness rule of the plan still had room: the refusal was the quota's
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-free' })).toBe(0);
    // a Pro tenant is not under the Free quota; a caller with no account has no quota at all
    expect((await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': 'bigco', 'x-test-plan': 'Pro' })).status).toBe(200);
    for (let i = 0; i < 8; i++) expect((await hit(s.url, 'GET', '/v1/orders')).status).toBe(200);
  });

  it("one call per identity: a tenant's fairness bucket and quota in one identity-limits call, nothing charged when one refuses", async () => {
    // the client as the limiter sees it, noting the keys of every script call
    const calls: string[][] = [];
    const noting = new Proxy(mw.redis, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof prop !== 'string' || !prop.startsWith('eval') || typeof value !== 'function') return value;
        return (script: string, numKeys: number, ...args: (string | number)[]) => {
          calls.push(args.slice(0, numKeys).map(String));
          return value.call(target, script, numKeys, ...args);
        };
      },
    });
    const s = await start(fw, 'plans', { hybrid: false }, noting);
    const tenant = { 'x-test-tenant': 'acme', 'x-test-plan': 'Free' };
    await mw.redis.script('FLUSH');
    for (let i = 0; i < 5; i++) {
      const ok = await hit(s.url, 'GET', '/v1/orders', tenant);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('5');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    // per request, one call per identity: the tenant's fairness bucket and quota, two fields of its hash
    // (the first call also went again as EVAL: the server did not have the script yet)
    const tenantCalls = calls.filter((keys) => keys.some((k) => k.includes('{t:acme}')));
    expect(tenantCalls.length).toBe(6);
    const period = calendarPeriodFor(Date.now(), 'Europe/Berlin');
    const hash = `${s.prefix}:{t:acme}`;
    for (const keys of tenantCalls) expect(keys).toEqual([hash]);
    expect(await mw.redis.script('EXISTS', luaScript('identity-limits').sha1)).toEqual([1]);
    const before = await mw.redis.hgetall(hash);
    expect(Object.keys(before).sort()).toEqual(['quota', 'req:free']);
    expect(before.quota).toBe(`${Math.floor(period.end / 1000)}000000005`);
    const pttl = await mw.redis.pttl(hash);
    expect(pttl).toBeGreaterThan(period.end - Date.now());
    const refused = await hit(s.url, 'GET', '/v1/orders', tenant);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'QUOTA_EXCEEDED', 'violated-policies': ['quota-free'] });
    expect(Math.abs(Number(refused.headers.get('retry-after')) - (period.end - Date.now()) / 1000)).toBeLessThan(5);
    // the quota refused: the fairness bucket was not charged for the refused request
    expect(await mw.redis.hgetall(hash)).toEqual(before);
    expect(await mw.redis.pttl(hash)).toBeLessThanOrEqual(pttl);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-free' })).toBe(0);
  });

  it("a rolling 30-day quota: today's count a field of the tenant's hash beside its fairness bucket, one call per request, nothing charged on a refusal", async () => {
    const calls: string[][] = [];
    const noting = new Proxy(mw.redis, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof prop !== 'string' || !prop.startsWith('eval') || typeof value !== 'function') return value;
        return (script: string, numKeys: number, ...args: (string | number)[]) => {
          calls.push(args.slice(0, numKeys).map(String));
          return value.call(target, script, numKeys, ...args);
        };
      },
    });
    const s = await start(fw, 'rolling', {}, noting);
    const tenant = { 'x-test-tenant': 'acme', 'x-test-plan': 'Free' };
    for (let i = 0; i < 5; i++) {
      const ok = await hit(s.url, 'GET', '/v1/orders', tenant);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('5');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    const hash = `${s.prefix}:{t:acme}`;
    // one identity-limits call per request (the first again as EVAL if the server lacked the script)
    const tenantCalls = calls.filter((keys) => keys.some((k) => k.includes('{t:acme}')));
    expect(tenantCalls.length).toBeGreaterThanOrEqual(5);
    expect(tenantCalls.length).toBeLessThanOrEqual(6);
    for (const keys of tenantCalls) expect(keys).toEqual([hash]);
    const [sec] = await mw.redis.time();
    const today = Math.floor(Number(sec) / 86_400);
    const before = await mw.redis.hgetall(hash);
    // today's count, the window's running total (its first day, then 9 digits) and the bucket
    expect(Object.keys(before).sort()).toEqual(['quota', `quota:${today}`, 'req:free']);
    expect(before[`quota:${today}`]).toBe('5');
    expect(before.quota).toBe(`${today - 29}000000005`);
    // the hash lives until today's bucket leaves the 30-day window
    expect(await mw.redis.pexpiretime(hash)).toBe((today + 30) * 86_400_000 + 1);
    const refused = await hit(s.url, 'GET', '/v1/orders', tenant);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'QUOTA_EXCEEDED', 'violated-policies': ['quota-free'] });
    // Retry-After: when today's 5 units leave the window, never before
    const leaves = ((today + 30) * 86_400_000 - Date.now()) / 1000;
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(leaves));
    expect(retryAfter).toBeLessThan(leaves + 5);
    // the quota refused: the fairness bucket was not charged, nothing was written
    expect(await mw.redis.hgetall(hash)).toEqual(before);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-free' })).toBe(0);
    expect(await counter(s.registry, 'ratelimit_quota_exhausted_total', { rule: 'quota-free', plan: 'Free' })).toBe(1);
  });

  it('hybrid: the in-process bucket admits at most localBurst extra per instance, across two instances', async () => {
    const prefix = freshPrefix('hy');
    // a generous store timeout: a timed-out call fails open, which is not what this measures
    const errs: string[] = [];
    const options = { keyPrefix: prefix, timeoutMs: 5000, onStoreError: (e: unknown) => errs.push(String(e)) };
    const a = await start(fw, 'hybrid', options);
    const b = await start(fw, 'hybrid', options);
    const tenant = { 'x-test-tenant': 'hybrid', 'x-test-plan': 'Pro' };
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => hit(i % 2 === 0 ? a.url : b.url, 'GET', '/v1/orders', tenant)));
    const admitted = results.filter((r) => r.status === 200).length;
    expect(errs, `admitted ${admitted}`).toEqual([]);
    // burst 20; local burst 2 per instance: at most 2 x 2 = 4 over
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(24);
    // sequential traffic on one instance: served locally in part, still never more than burst + localBurst
    const single = await start(fw, 'hybrid', { timeoutMs: 5000, onStoreError: (e: unknown) => errs.push(String(e)) });
    const tenant2 = { 'x-test-tenant': 'hybrid-seq', 'x-test-plan': 'Pro' };
    let ok = 0;
    for (let i = 0; i < 30; i++) if ((await hit(single.url, 'GET', '/v1/orders', tenant2)).status === 200) ok++;
    expect(ok).toBeGreaterThanOrEqual(20);
    expect(ok).toBeLessThanOrEqual(22);
    await sleep(50); // let the last local charges reach Redis before the TTL check
    const local = await counter(single.registry, 'ratelimit_decisions_total', { rule: 'fairness-pro', result: 'allowed' });
    expect(local).toBe(ok);
    expect(errs).toEqual([]);
  });
});

/**
 * The access features over real HTTP against a real redis-server, in every adapter (Express,
 * Fastify, Koa, Hono): the files generated for one design with an allowlist (CIDR, identity,
 * route), a deny list, a penalty box on the auth rows, a custom identity function and the memory
 * fallback, compiled under --strict and mounted in real servers. Loopback is a trusted proxy,
 * so each test plays the proxy and names the client address in X-Forwarded-For.
 */
import { request as httpRequest } from 'node:http';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateMiddleware } from '../../src/codegen/middleware/index.js';
import { freePort, useRedisServer } from '../helpers/redis.js';
import { ACCESS } from './designs.js';
import { type AdapterFramework, type App, FRAMEWORKS, mountAdapter } from './apps.js';
import { designFrom, expectTtlsUnder, freshPrefix, useCompiledMiddleware } from './harness.js';

type Framework = AdapterFramework;

type Factory = (app: unknown, options: Record<string, unknown>) => { close(): void };
const store = useRedisServer();
const scratch = useCompiledMiddleware(() => ({
  ...Object.fromEntries(
    FRAMEWORKS.map((f) => [f, generateMiddleware(designFrom({ ...ACCESS, stack: { ...ACCESS.stack, framework: f } }))]),
  ),
  // the same design with no shared store: the penalty box keeps its state in the process
  memory: generateMiddleware(designFrom({ ...ACCESS, stack: { ...ACCESS.stack, framework: 'express', store: 'none' } })),
}));
const modules: Partial<Record<Framework, Record<string, unknown>>> = {};
let memoryModule: Record<string, unknown>;

beforeAll(async () => {
  for (const f of FRAMEWORKS) modules[f] = await scratch.load(f, f);
  memoryModule = await scratch.load('memory', 'express');
});

/** A request header in any framework's request object (Express, Fastify, Koa context, Hono context). */
function header(req: unknown, name: string): string | undefined {
  const r = req as { headers?: Record<string, unknown>; req?: { header?: (n: string) => string | undefined } };
  const value = r.headers?.[name] ?? (typeof r.req?.header === 'function' ? r.req.header(name) : undefined);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** identify() from the test headers; x-test-user is the account name (Hono parses no body for the limiter). */
function identify(req: unknown): Record<string, string | undefined> {
  return { apiKey: header(req, 'x-test-key'), username: header(req, 'x-test-user') };
}

/**
 * A header as Node's headersDistinct gives it: every value it was sent with, an array (from the
 * IncomingMessage of Express, Fastify's request.raw, Koa's ctx.req, Hono's c.env.incoming).
 */
function distinct(req: unknown, name: string): string[] | undefined {
  type Msg = { headersDistinct?: Record<string, string[] | undefined> };
  const r = req as Msg & { raw?: Msg; req?: Msg; env?: { incoming?: Msg } };
  const message = r.headersDistinct ? r : (r.raw ?? r.env?.incoming ?? r.req);
  return message?.headersDistinct?.[name];
}

/**
 * identify() as applications write it when they pass values on as they come: a user id parsed to
 * a number (x-test-uid), or every value of a header (x-test-uids, an array).
 */
function identifyRaw(req: unknown): Record<string, unknown> {
  const uid = header(req, 'x-test-uid');
  return { ...identify(req), userId: uid !== undefined ? Number(uid) : distinct(req, 'x-test-uids') };
}

/** Options whose identities come raw: identifyRaw, and the api-key function giving every x-custom-key value. */
function rawOptions(prefix: string): Record<string, unknown> {
  return { ...baseOptions(prefix), identify: identifyRaw, identities: { 'api-key': (req: unknown) => distinct(req, 'x-custom-key') } };
}

/** A GET whose headers may be sent more than once (an array value: one header line each), with Node's own client. */
function getRaw(app: App, path: string, headers: Record<string, string | string[]>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${app.url}${path}`, { method: 'GET', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

function baseOptions(prefix: string, client: Redis = store.redis): Record<string, unknown> {
  return {
    redis: client,
    keyPrefix: prefix,
    defaultMode: 'enforce',
    timeoutMs: 2000,
    registry: new Registry(),
    identify,
    identities: { 'api-key': (req: unknown) => header(req, 'x-custom-key') },
  };
}

function mount(framework: Framework, options: Record<string, unknown>, mod = modules[framework] as Record<string, unknown>): Promise<App> {
  return mountAdapter(framework, mod, options);
}

async function get(app: App, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const r = await fetch(app.url + path, { headers });
  return r;
}

/** Status codes of n calls in a row (bodies drained). */
async function statuses(n: number, call: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await call();
    await r.arrayBuffer();
    out.push(r.status);
  }
  return out;
}

/** The value of ratelimit_access_total{outcome} in a registry's exposition (undefined: no such series). */
async function accessCount(options: Record<string, unknown>, outcome: string): Promise<number | undefined> {
  const text = await (options.registry as Registry).metrics();
  const line = text.split('\n').find((l) => l.startsWith(`ratelimit_access_total{outcome="${outcome}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function keysUnder(prefix: string): Promise<string[]> {
  return store.redis.keys(`${prefix}:*`);
}

describe.each(FRAMEWORKS)('%s adapter', (framework) => {
  it('allowlists by identity, address and route: their requests skip the fairness rules, others are refused after the burst', async () => {
    const prefix = freshPrefix('al');
    const app = await mount(framework, baseOptions(prefix));
    try {
      // by identity (from the custom api-key function): 14 calls on a bucket of 12, never refused
      expect(await statuses(14, () => get(app, '/v1/items', { 'x-custom-key': 'svc-monitor' }))).not.toContain(429);
      // the same calls by another key: refused after 12
      const other = await statuses(14, () => get(app, '/v1/items', { 'x-custom-key': 'k1' }));
      expect(other.slice(0, 12)).toEqual(new Array(12).fill(200));
      expect(other.slice(12)).toEqual([429, 429]);
      // by address: the anonymous per-IP bucket holds 2
      expect(await statuses(5, () => get(app, '/v1/public', { 'x-forwarded-for': '198.51.100.7' }))).toEqual([200, 200, 200, 200, 200]);
      expect(await statuses(4, () => get(app, '/v1/public', { 'x-forwarded-for': '192.0.2.9' }))).toContain(429);
      // by route: GET /v1/items/:id skips the fairness rule, GET /v1/items of the same key does not
      expect(await statuses(14, () => get(app, '/v1/items/7', { 'x-custom-key': 'k2' }))).not.toContain(429);
      expect(await statuses(13, () => get(app, '/v1/items', { 'x-custom-key': 'k2' }))).toContain(429);
      // the allowlisted identity left no fairness key behind
      expect((await keysUnder(prefix)).filter((k) => k.includes('svc-monitor'))).toEqual([]);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('answers the deny list with 403 problem+json before any rule, without touching the store; health checks stay exempt', async () => {
    const prefix = freshPrefix('dn');
    const options = baseOptions(prefix);
    const app = await mount(framework, options);
    try {
      // each list's series exists at 0 before any request
      expect(await accessCount(options, 'denied')).toBe(0);
      expect(await accessCount(options, 'penalty_box')).toBe(0);
      expect(await accessCount(options, 'allowlisted')).toBe(0);
      const denied: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.50' }, { 'x-custom-key': 'revoked' }];
      for (const headers of denied) {
        const r = await get(app, '/v1/items', headers);
        expect(r.status).toBe(403);
        expect(r.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
        expect(r.headers.get('ratelimit')).toBeNull();
        expect(r.headers.get('retry-after')).toBeNull();
        expect(await r.json()).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
      }
      // a denied address that is also allowlisted by identity is still denied
      expect((await get(app, '/v1/items', { 'x-forwarded-for': '203.0.113.50', 'x-custom-key': 'svc-monitor' })).status).toBe(403);
      // three refusals by the deny list, counted as such; the allowlist never got to decide
      expect(await accessCount(options, 'denied')).toBe(3);
      expect(await accessCount(options, 'allowlisted')).toBe(0);
      expect(await accessCount(options, 'penalty_box')).toBe(0);
      expect(await keysUnder(prefix)).toEqual([]);
      expect((await get(app, '/healthz', { 'x-forwarded-for': '203.0.113.50' })).status).toBe(200);
      // a request the allowlist lets skip rules is counted too
      await (await get(app, '/v1/items', { 'x-custom-key': 'svc-monitor' })).arrayBuffer();
      expect(await accessCount(options, 'allowlisted')).toBe(1);
      expect(await accessCount(options, 'denied')).toBe(3);
    } finally {
      await app.close();
    }
  });

  it('reads identity values as the rules do: a numeric user id on the deny list is denied, a header given twice is denied by any listed value', async () => {
    const prefix = freshPrefix('nv');
    const app = await mount(framework, rawOptions(prefix));
    try {
      // identify() gives the user id as the number 42; the deny list holds "42"
      expect((await getRaw(app, '/v1/items', { 'x-test-uid': '42' })).status).toBe(403);
      expect((await getRaw(app, '/v1/items', { 'x-test-uid': '43' })).status).toBe(200);
      // the custom api-key function gives every value of the header: once, and twice
      expect((await getRaw(app, '/v1/items', { 'x-custom-key': 'revoked' })).status).toBe(403);
      expect((await getRaw(app, '/v1/items', { 'x-custom-key': ['k5', 'revoked'] })).status).toBe(403);
      // a user id given twice, one of them denied
      expect((await getRaw(app, '/v1/items', { 'x-test-uids': ['7', '42'] })).status).toBe(403);
      // the allowlist matches the value as the rules key it: once, the listed key; twice, another key
      const calls = async (n: number, headers: Record<string, string | string[]>): Promise<number[]> => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await getRaw(app, '/v1/items', headers)).status);
        return out;
      };
      expect(await calls(14, { 'x-custom-key': 'svc-monitor' })).not.toContain(429);
      expect((await calls(13, { 'x-custom-key': ['svc-monitor', 'k6'] })).slice(12)).toEqual([429]);
      const keys = await keysUnder(prefix);
      // the fairness bucket of the value as given twice, none of the allowlisted key alone
      expect(keys.filter((k) => k.includes('svc-monitor'))).toEqual([expect.stringContaining('ak:svc-monitor,k6')]);
    } finally {
      await app.close();
    }
  });

  it('works out the client address once per request, for the address lists, the penalty box and the rules alike', async () => {
    const prefix = freshPrefix('ip');
    let calls = 0;
    const clientIp = (req: unknown): string | undefined => {
      calls++;
      return header(req, 'x-test-ip');
    };
    const app = await mount(framework, { ...baseOptions(prefix), clientIp });
    const login = (ip: string): Promise<Response> =>
      fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': 'dora', 'x-test-ip': ip },
        body: JSON.stringify({ username: 'dora', password: 'x' }),
      });
    try {
      // the deny list (by address), the penalty box (keyed on the address) and the per-IP auth row: one call
      expect((await login('100.64.3.9')).status).toBe(200);
      expect(calls).toBe(1);
      // the address the application names is the one the deny list sees
      expect((await login('203.0.113.8')).status).toBe(403);
      expect(calls).toBe(2);
      expect((await keysUnder(prefix)).some((k) => k.includes('100.64.3.9'))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('keeps the deny list when every rule is switched off', async () => {
    const app = await mount(framework, { ...baseOptions(freshPrefix('do')), mode: () => 'off' });
    try {
      expect((await get(app, '/v1/items', { 'x-forwarded-for': '203.0.113.50' })).status).toBe(403);
      expect(await statuses(14, () => get(app, '/v1/items', { 'x-custom-key': 'k1' }))).not.toContain(429);
    } finally {
      await app.close();
    }
  });

  it('puts a caller refused twice by the auth rows in the penalty box: a silent 429 for every account, with the time left', async () => {
    const prefix = freshPrefix('pb');
    const options = baseOptions(prefix);
    const app = await mount(framework, options);
    const login = (user: string, ip: string): Promise<Response> =>
      fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': user, 'x-forwarded-for': ip },
        body: JSON.stringify({ username: user, password: 'x' }),
      });
    try {
      // 3 tries per account, then 2 refusals shut the box for 100.64.0.9
      expect(await statuses(5, () => login('alice', '100.64.0.9'))).toEqual([200, 200, 200, 429, 429]);
      // the two refusals that shut the box were the rules'; the box has refused nobody yet
      expect(await accessCount(options, 'penalty_box')).toBe(0);
      const boxed = await login('bob', '100.64.0.9');
      expect(boxed.status).toBe(429);
      expect(await accessCount(options, 'penalty_box')).toBe(1);
      expect(await accessCount(options, 'denied')).toBe(0);
      const retryAfter = Number(boxed.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(20);
      expect(retryAfter).toBeLessThanOrEqual(30);
      expect(boxed.headers.get('ratelimit')).toBeNull();
      expect(await boxed.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      // another address is not in the box
      expect((await login('bob', '100.64.0.10')).status).toBe(200);
      const box = `${prefix}:{pb:ip:100.64.0.9}:box`;
      const pttl = await store.redis.pttl(box);
      expect(pttl).toBeGreaterThan(20_000);
      expect(pttl).toBeLessThanOrEqual(30_000);
      // the counter went when the box shut
      expect(await store.redis.exists(`${prefix}:{pb:ip:100.64.0.9}:strikes`)).toBe(0);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('keys the penalty box on the client text a custom client-IP function gives, escaped once, as the rules key it', async () => {
    const prefix = freshPrefix('pc');
    // not an address: the text is made safe for a key (space, %, braces) exactly once
    const clientIp = (req: unknown): string | undefined => header(req, 'x-test-ip');
    const app = await mount(framework, { ...baseOptions(prefix), clientIp });
    const login = (user: string): Promise<Response> =>
      fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': user, 'x-test-ip': 'edge 7%{a}' },
        body: JSON.stringify({ username: user, password: 'x' }),
      });
    try {
      expect(await statuses(5, () => login('alice'))).toEqual([200, 200, 200, 429, 429]);
      expect((await login('bob')).status).toBe(429);
      const client = 'edge%207%25%7ba%7d';
      expect(await store.redis.pttl(`${prefix}:{pb:ip:${client}}:box`)).toBeGreaterThan(20_000);
      // the per-IP auth row keys the same text
      expect((await keysUnder(prefix)).some((k) => k.includes(`ip:${client}`) && !k.includes('{pb:'))).toBe(true);
      expect((await keysUnder(prefix)).some((k) => k.includes('%25'.repeat(2)) || k.includes('%2520'))).toBe(false);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('boxes a caller known by a user id given as a number or as a repeated header: one caller, keyed as text', async () => {
    const prefix = freshPrefix('pn');
    const app = await mount(framework, rawOptions(prefix));
    const login = (user: string, ip: string, uid: Record<string, string | string[]>): Promise<Response> =>
      fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': user, 'x-forwarded-for': ip, ...(uid as Record<string, string>) },
        body: JSON.stringify({ username: user, password: 'x' }),
      });
    try {
      // the user id as every value of x-test-uids (an array of one): 3 tries per account, then 2 refusals shut the box
      expect(await statuses(5, () => login('alice', '100.64.2.9', { 'x-test-uids': '77' }))).toEqual([200, 200, 200, 429, 429]);
      // the same caller from another address, its id now the number 77: in the box
      const boxed = await login('bob', '100.64.2.10', { 'x-test-uid': '77' });
      expect(boxed.status).toBe(429);
      expect(await boxed.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      expect(Number(boxed.headers.get('retry-after'))).toBeGreaterThan(20);
      expect(await store.redis.pttl(`${prefix}:{pb:u:77}:box`)).toBeGreaterThan(20_000);
      // another user id from that address is not
      expect((await login('bob', '100.64.2.10', { 'x-test-uid': '78' })).status).toBe(200);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('keys rules on the custom identity function, and refuses to start without it', async () => {
    const prefix = freshPrefix('ci');
    const mod = modules[framework] as Record<string, unknown>;
    const { identities: _omit, ...without } = baseOptions(prefix);
    const create = (): unknown =>
      framework === 'fastify'
        ? (mod.registerRateLimit as Factory)(Fastify(), without)
        : (mod.rateLimit as (o: unknown) => unknown)(without);
    expect(create).toThrow(/options\.identities\['api-key'\]/);
    const app = await mount(framework, baseOptions(prefix));
    try {
      // identify() says the same key for both; the custom function tells them apart
      const a = await statuses(13, () => get(app, '/v1/items', { 'x-test-key': 'same', 'x-custom-key': 'c1' }));
      expect(a[12]).toBe(429);
      expect((await get(app, '/v1/items', { 'x-test-key': 'same', 'x-custom-key': 'c2' })).status).toBe(200);
      expect((await keysUnder(prefix)).some((k) => k.includes('ak:c1'))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('counts fail-open rules in memory while the store is down (429 after the burst), fail-closed rules answer 503', async () => {
    const prefix = freshPrefix('fb');
    const port = await freePort();
    const dead = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    dead.on('error', () => {});
    const errors: string[][] = [];
    const app = await mount(framework, {
      ...baseOptions(prefix, dead),
      timeoutMs: 200,
      onStoreError: (_e: unknown, ids: readonly string[]) => errors.push([...ids]),
    });
    try {
      const calls = await statuses(14, () => get(app, '/v1/items', { 'x-custom-key': 'k-outage' }));
      expect(calls.slice(0, 12)).toEqual(new Array(12).fill(200));
      expect(calls.slice(12)).toEqual([429, 429]);
      const refused = await get(app, '/v1/items', { 'x-custom-key': 'k-outage' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', limit: { rule: 'fairness-per-api-key' } });
      expect(errors.some((ids) => ids.includes('fairness-per-api-key'))).toBe(true);
      const login = await fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': 'carol' },
        body: JSON.stringify({ username: 'carol', password: 'x' }),
      });
      expect(login.status).toBe(503);
    } finally {
      await app.close();
      dead.disconnect();
    }
  });
});

describe('a design without a shared store', () => {
  it('keeps the penalty box in the process: the same refusals shut it, and Redis holds nothing', async () => {
    const prefix = freshPrefix('pm');
    const { redis: _none, ...options } = baseOptions(prefix);
    const app = await mount('express', options, memoryModule);
    const login = (user: string, ip: string): Promise<Response> =>
      fetch(`${app.url}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ username: user, password: 'x' }),
      });
    try {
      expect(await statuses(5, () => login('alice', '100.64.1.9'))).toEqual([200, 200, 200, 429, 429]);
      const boxed = await login('bob', '100.64.1.9');
      expect(boxed.status).toBe(429);
      expect(await accessCount(options, 'penalty_box')).toBe(1);
      expect(Number(boxed.headers.get('retry-after'))).toBeGreaterThan(20);
      expect((await login('bob', '100.64.1.10')).status).toBe(200);
      expect(await keysUnder(prefix)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

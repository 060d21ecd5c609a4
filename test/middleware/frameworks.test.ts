/**
 * The Koa and Hono adapters over real HTTP against a real redis-server: the files generated for
 * a Koa and a Hono design, compiled under --strict, mounted in real servers. Headers on an
 * admitted response, a refusal with Retry-After and problem+json, silent auth rules read the
 * account name from the parsed body (Koa; Hono reads it for auth routes) or from identify(), exempt health checks.
 */
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import { Hono } from 'hono';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateMiddleware } from '../../src/codegen/middleware/index.js';
import { useRedisServer } from '../helpers/redis.js';
import { MAIN } from './designs.js';
import { type App, serveHono } from './apps.js';
import { designFrom, expectTtlsUnder, freshPrefix, useCompiledMiddleware } from './harness.js';

type RateLimitFactory = (options: Record<string, unknown>) => unknown & { limiter: { close(): void } };

const store = useRedisServer();
const scratch = useCompiledMiddleware(() => ({
  koa: generateMiddleware(designFrom({ ...MAIN, stack: { ...MAIN.stack, framework: 'koa' } })),
  hono: generateMiddleware(designFrom({ ...MAIN, stack: { ...MAIN.stack, framework: 'hono' } })),
}));
const factories: Record<string, RateLimitFactory> = {};

beforeAll(async () => {
  factories.koa = (await scratch.load<{ rateLimit: RateLimitFactory }>('koa', 'koa')).rateLimit;
  factories.hono = (await scratch.load<{ rateLimit: RateLimitFactory }>('hono', 'hono')).rateLimit;
});

function options(prefix: string, identify: (req: unknown) => Record<string, string | undefined>): Record<string, unknown> {
  return { redis: store.redis, keyPrefix: prefix, defaultMode: 'enforce', timeoutMs: 2000, registry: new Registry(), identify };
}

async function koaApp(prefix: string): Promise<App> {
  const app = new Koa();
  app.use(bodyParser());
  const mw = factories.koa?.(
    options(prefix, (ctx) => {
      const h = (ctx as Koa.Context).get('x-test-key');
      return { apiKey: h || undefined };
    }),
  ) as Koa.Middleware & { limiter: { close(): void } };
  app.use(mw);
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const http = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      mw.limiter.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function honoApp(prefix: string): Promise<App> {
  const app = new Hono();
  // Hono parses bodies lazily: the account name of the auth rules comes from identify()
  const mw = factories.hono?.(
    options(prefix, (c) => {
      const ctx = c as import('hono').Context;
      return { apiKey: ctx.req.header('x-test-key') || undefined, username: ctx.req.header('x-test-user') || undefined };
    }),
  ) as import('hono').MiddlewareHandler & { limiter: { close(): void } };
  app.use(mw);
  app.all('*', (c) => c.json({ ok: true }));
  return serveHono(app, mw);
}

/** A Hono app whose identify() gives no account name: the auth rows read it from the JSON body, which the handler reads too. */
async function honoBodyApp(prefix: string): Promise<App> {
  const app = new Hono();
  const mw = factories.hono?.(options(prefix, () => ({}))) as import('hono').MiddlewareHandler & { limiter: { close(): void } };
  app.use(mw);
  app.post('/v1/login', async (c) => c.json({ ok: true, user: ((await c.req.json()) as { username?: string }).username }));
  return serveHono(app, mw);
}

describe('hono adapter without a username from identify()', () => {
  it('reads the account name from the JSON body for the auth rows (3 tries per account), and the handler still reads the body', async () => {
    const prefix = freshPrefix();
    const app = await honoBodyApp(prefix);
    try {
      const login = (user: string, ip: string): Promise<Response> =>
        fetch(`${app.url}/v1/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
          body: JSON.stringify({ username: user, password: 'x' }),
        });
      const first = await login('carol', '100.64.9.1');
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ ok: true, user: 'carol' });
      // the per-account row counts carol whatever address she comes from
      expect((await login('carol', '100.64.9.2')).status).toBe(200);
      expect((await login('carol', '100.64.9.3')).status).toBe(200);
      expect((await login('carol', '100.64.9.4')).status).toBe(429);
      expect((await login('dave', '100.64.9.5')).status).toBe(200);
      const keys = await store.redis.keys(`${prefix}:*`);
      expect(keys.some((k) => k.includes(':un:'))).toBe(true);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });
});

const apps = { koa: koaApp, hono: honoApp };

describe.each(['koa', 'hono'] as const)('%s adapter', (framework) => {
  it('sends the convention headers on admitted responses and a 429 with Retry-After and problem+json after the burst', async () => {
    const prefix = freshPrefix();
    const app = await apps[framework](prefix);
    try {
      const first = await fetch(`${app.url}/v1/items`, { headers: { 'x-test-key': 'k1' } });
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ ok: true });
      expect(first.headers.get('ratelimit-policy')).toBe('"fairness-per-api-key";q=12;w=720');
      expect(first.headers.get('ratelimit')).toMatch(/^"fairness-per-api-key";r=11;t=\d+$/);
      let refused: Response | undefined;
      for (let i = 0; i < 12 && !refused; i++) {
        const r = await fetch(`${app.url}/v1/items`, { headers: { 'x-test-key': 'k1' } });
        if (r.status === 429) refused = r;
        else await r.arrayBuffer();
      }
      expect(refused?.status).toBe(429);
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused?.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      const body = (await refused?.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        status: 429,
        code: 'RATE_LIMITED',
        limit: { rule: 'fairness-per-api-key', quota: 12, windowSeconds: 720 },
      });
      // another key is not affected
      expect((await fetch(`${app.url}/v1/items`, { headers: { 'x-test-key': 'k2' } })).status).toBe(200);
      // health checks are exempt: no headers, never refused
      const health = await fetch(`${app.url}/healthz`);
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit')).toBeNull();
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('keys the silent login rule on the account name: 3 tries per account, then a silent 429', async () => {
    const prefix = freshPrefix();
    const app = await apps[framework](prefix);
    try {
      const login = (user: string): Promise<Response> =>
        fetch(`${app.url}/v1/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-test-user': user },
          body: JSON.stringify({ username: user, password: 'x' }),
        });
      for (let i = 0; i < 3; i++) {
        const r = await login('alice');
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toBeNull();
        await r.arrayBuffer();
      }
      const refused = await login('alice');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect(refused.headers.get('ratelimit')).toBeNull();
      expect(await refused.json()).not.toHaveProperty('limit');
      // another account from the same address still passes (per-IP limit is 5)
      expect((await login('bob')).status).toBe(200);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });
});

/**
 * The four adapters mounted in real servers on loopback ports, each the way its framework's
 * applications mount it: Express (JSON and form bodies parsed first), Fastify (with a form body
 * parser, which it lacks of its own), Koa (@koa/bodyparser first) and Hono (on @hono/node-server,
 * which parses bodies lazily). Every route answers { ok: true } unless the limiter refuses.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve as honoServe, type ServerType } from '@hono/node-server';
import { bodyParser } from '@koa/bodyparser';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';

export const FRAMEWORKS = ['express', 'fastify', 'koa', 'hono'] as const;
export type AdapterFramework = (typeof FRAMEWORKS)[number];

export interface App {
  url: string;
  close(): Promise<void>;
}

type Closable = { limiter: { close(): void } };

/** Closes a Node server the adapter's limiter serves (its connections first). */
async function closeServer(http: Server, mw: Closable): Promise<void> {
  mw.limiter.close();
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}

const urlOf = (http: Server): string => `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

/** A server with the compiled adapter module `mod` of a framework mounted with `options`. */
export async function mountAdapter(
  framework: AdapterFramework,
  mod: Record<string, unknown>,
  options: Record<string, unknown>,
): Promise<App> {
  if (framework === 'express') {
    const app = express();
    app.use(express.json());
    app.use(express.urlencoded({ extended: false }));
    const mw = (mod.rateLimit as (o: unknown) => express.RequestHandler & Closable)(options);
    app.use(mw);
    app.use((_req, res) => {
      res.json({ ok: true });
    });
    const http = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    return { url: urlOf(http), close: () => closeServer(http, mw) };
  }
  if (framework === 'fastify') {
    const app = Fastify();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    (mod.registerRateLimit as (app: unknown, o: unknown) => unknown)(app, options);
    app.route({ method: ['GET', 'POST'], url: '/*', handler: async () => ({ ok: true }) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      url: urlOf(app.server),
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  }
  if (framework === 'koa') {
    const app = new Koa();
    app.use(bodyParser());
    const mw = (mod.rateLimit as (o: unknown) => Koa.Middleware & Closable)(options);
    app.use(mw);
    app.use((ctx) => {
      ctx.body = { ok: true };
    });
    const http = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => http.once('listening', () => resolve()));
    return { url: urlOf(http), close: () => closeServer(http, mw) };
  }
  const app = new Hono();
  const mw = (mod.rateLimit as (o: unknown) => import('hono').MiddlewareHandler & Closable)(options);
  app.use(mw);
  app.all('*', (c) => c.json({ ok: true }));
  return serveHono(app, mw);
}

/** A Hono app on a free loopback port (@hono/node-server); close() stops the limiter and the server. */
export async function serveHono(app: Hono, mw: Closable): Promise<App> {
  const http: ServerType = await new Promise((resolve) => {
    const s = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      mw.limiter.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

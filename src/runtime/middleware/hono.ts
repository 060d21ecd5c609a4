/**
 * Hono adapter: mounts the limiter of this design (DESIGN, from design.ts) as Hono middleware.
 *
 * Usage (Node, with @hono/node-server):
 *   import { Hono } from 'hono';
 *   import { Redis } from 'ioredis';
 *   import { rateLimit } from './middleware/hono.js';
 *   const app = new Hono();
 *   app.use(rateLimit({
 *     redis: new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true, enableOfflineQueue: false }),
 *     identify: (c) => ({ apiKey: c.get('keyId'), tenantId: c.get('tenantId'), plan: c.get('plan') }),
 *     mode: (ruleId, flag) => flags.get(flag), // 'enforce' | 'shadow' | 'off': the per-rule kill switch
 *   }));
 *
 * The client address: on Node the TCP peer of c.env.incoming (@hono/node-server); on other
 * runtimes pass remoteAddress(c) (e.g. from hono/conninfo's getConnInfo). Hono parses bodies
 * lazily: on a route whose auth rules key on the account name, the adapter reads a JSON or form
 * body through Hono's own cached readers (the handler's c.req.json() gets the same parse), and
 * the rules take the username from it, else from an HTTP Basic Authorization header, unless
 * identify() returns { username }. Options: LimiterOptions in types.ts, plus remoteAddress.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { DESIGN } from './design.js';
import { createLimiter } from './limiter.js';
import { PROBLEM_JSON } from './responses.js';
import type { LimiterOptions, RateLimiter } from './types.js';

export * from './types.js';
export { createLimiter } from './limiter.js';
export { DESIGN } from './design.js';

export interface HonoRateLimitOptions extends LimiterOptions<Context> {
  /** The TCP peer address (default: c.env.incoming.socket.remoteAddress, as @hono/node-server sets it). */
  readonly remoteAddress?: ((c: Context) => string | undefined) | undefined;
}

export interface HonoRateLimit extends MiddlewareHandler {
  /** The limiter behind the middleware (check(), clientIp(), close()). */
  readonly limiter: RateLimiter<Context>;
}

function nodePeer(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/** A JSON or form body, parsed by Hono's cached readers (the handler reads the same parse); undefined for any other. */
async function bodyOf(c: Context): Promise<unknown> {
  const type = c.req.header('content-type') ?? '';
  try {
    if (/\bjson\b/i.test(type)) return await c.req.json();
    if (/application\/x-www-form-urlencoded/i.test(type)) return await c.req.parseBody();
  } catch {
    // a body that does not parse carries no account name
  }
  return undefined;
}

/** The rate-limit middleware. Mount it once, before the routes. */
export function rateLimit(options: HonoRateLimitOptions): HonoRateLimit {
  const limiter = createLimiter<Context>(DESIGN, options);
  const peer = options.remoteAddress ?? nodePeer;
  const middleware: MiddlewareHandler = async (c, next) => {
    const url = new URL(c.req.url);
    const path = url.pathname + url.search;
    const account = limiter.needsUsername(c.req.method, path);
    const decision = await limiter.check({
      method: c.req.method,
      url: path,
      remoteAddress: peer(c),
      forwardedFor: c.req.header('x-forwarded-for'),
      req: c,
      body: account ? await bodyOf(c) : undefined,
      headers: account ? c.req.raw.headers : undefined,
    });
    if (decision.status !== 200) {
      const headers = new Headers();
      for (const [name, value] of decision.headers) headers.set(name, value);
      headers.set('Content-Type', decision.contentType ?? PROBLEM_JSON);
      return new Response(decision.body ?? '', { status: decision.status, headers });
    }
    await next();
    for (const [name, value] of decision.headers) c.res.headers.set(name, value);
    return undefined;
  };
  return Object.assign(middleware, { limiter });
}

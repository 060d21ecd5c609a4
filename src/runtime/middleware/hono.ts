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
 * lazily, so auth rules get the account name from identify() (return { username }), never
 * from the body. Options: LimiterOptions in types.ts, plus remoteAddress.
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

/** The rate-limit middleware. Mount it once, before the routes. */
export function rateLimit(options: HonoRateLimitOptions): HonoRateLimit {
  const limiter = createLimiter<Context>(DESIGN, options);
  const peer = options.remoteAddress ?? nodePeer;
  const middleware: MiddlewareHandler = async (c, next) => {
    const url = new URL(c.req.url);
    const decision = await limiter.check({
      method: c.req.method,
      url: url.pathname + url.search,
      remoteAddress: peer(c),
      forwardedFor: c.req.header('x-forwarded-for'),
      req: c,
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

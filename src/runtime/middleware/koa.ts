/**
 * Koa adapter: mounts the limiter of this design (DESIGN, from design.ts) as Koa middleware.
 *
 * Usage:
 *   import Koa from 'koa';
 *   import { bodyParser } from '@koa/bodyparser';
 *   import { Redis } from 'ioredis';
 *   import { rateLimit } from './middleware/koa.js';
 *   const app = new Koa();
 *   app.use(bodyParser()); // first, when auth rules must read the username from the body
 *   app.use(rateLimit({
 *     redis: new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true, enableOfflineQueue: false }),
 *     identify: (ctx) => ({ apiKey: ctx.state.auth?.keyId, tenantId: ctx.state.auth?.tenantId, plan: ctx.state.auth?.plan }),
 *     mode: (ruleId, flag) => flags.get(flag), // 'enforce' | 'shadow' | 'off': the per-rule kill switch
 *   }));
 *
 * Options: LimiterOptions in types.ts (identify() and clientIp() receive the Koa context).
 * Rules start in the mode the design's rollout gives (DESIGN.defaultMode); switch each rule
 * through its flag in mode(), or all at once with defaultMode: 'enforce'.
 */
import type { Context, Middleware, Next } from 'koa';
import { DESIGN } from './design.js';
import { createLimiter } from './limiter.js';
import { PROBLEM_JSON } from './responses.js';
import type { LimiterOptions, RateLimiter } from './types.js';

export * from './types.js';
export { createLimiter } from './limiter.js';
export { DESIGN } from './design.js';

export type KoaRateLimitOptions = LimiterOptions<Context>;

export interface KoaRateLimit extends Middleware {
  /** The limiter behind the middleware (check(), clientIp(), close()). */
  readonly limiter: RateLimiter<Context>;
}

/**
 * The rate-limit middleware. Mount it once, before the routes (after the body parser when the
 * design has auth rules: unless identify() gives it, they read the username from the body,
 * else from an HTTP Basic Authorization header).
 */
export function rateLimit(options: KoaRateLimitOptions): KoaRateLimit {
  const limiter = createLimiter<Context>(DESIGN, options);
  const middleware = async (ctx: Context, next: Next): Promise<void> => {
    const decision = await limiter.check({
      method: ctx.method,
      url: ctx.originalUrl || ctx.url,
      remoteAddress: ctx.req.socket.remoteAddress,
      forwardedFor: ctx.req.headers['x-forwarded-for'],
      req: ctx,
      body: (ctx.request as { body?: unknown }).body,
      headers: ctx.req.headers,
    });
    const headers = decision.headers;
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      ctx.set(header[0], header[1]);
    }
    if (decision.status !== 200) {
      ctx.status = decision.status;
      ctx.type = decision.contentType ?? PROBLEM_JSON;
      ctx.body = decision.body ?? '';
      return;
    }
    await next();
  };
  return Object.assign(middleware, { limiter });
}

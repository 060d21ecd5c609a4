// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Fastify adapter: registers the limiter of this design (DESIGN, from design.ts) as a hook.
 *
 * Usage:
 *   import Fastify from 'fastify';
 *   import { Redis } from 'ioredis';
 *   import { registerRateLimit } from './middleware/fastify.js';
 *   const app = Fastify();
 *   registerRateLimit(app, {
 *     redis: new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true, enableOfflineQueue: false }),
 *     identify: (request) => ({ apiKey: request.auth?.keyId, tenantId: request.auth?.tenantId, plan: request.auth?.plan }),
 *     mode: (ruleId, flag) => flags.get(flag), // 'enforce' | 'shadow' | 'off': the per-rule kill switch
 *   });
 *   // then register the routes
 *
 * Options: LimiterOptions in types.ts, plus `hook`. Rules start in the mode the design's
 * rollout gives (DESIGN.defaultMode); switch each rule through its flag in mode(), or all at
 * once with defaultMode: 'enforce'.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DESIGN } from './design.js';
import { createLimiter } from './limiter.js';
import { PROBLEM_JSON } from './responses.js';
import type { LimiterOptions, RateLimiter } from './types.js';

export * from './types.js';
export { createLimiter } from './limiter.js';
export { DESIGN } from './design.js';

export interface FastifyRateLimitOptions extends LimiterOptions<FastifyRequest> {
  /**
   * Where the check runs. Default 'preValidation': the body is parsed (auth rules read the
   * username from it, else from an HTTP Basic Authorization header) and nothing has been
   * validated or handled yet. 'onRequest' is cheaper when no rule needs the body.
   */
  readonly hook?: 'onRequest' | 'preValidation' | 'preHandler' | undefined;
}

/**
 * Adds the rate-limit hook to the instance (call it on the root instance before the
 * routes are registered, or inside the plugin whose routes it should cover).
 */
export function registerRateLimit(app: FastifyInstance, options: FastifyRateLimitOptions): RateLimiter<FastifyRequest> {
  const limiter = createLimiter<FastifyRequest>(DESIGN, options);
  const hook = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const decision = await limiter.check({
      method: request.method,
      url: request.url,
      remoteAddress: request.raw.socket.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
      req: request,
      headers: request.headers,
    });
    const headers = decision.headers;
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      reply.header(header[0], header[1]);
    }
    if (decision.status === 200) return undefined;
    reply
      .code(decision.status)
      .type(decision.contentType ?? PROBLEM_JSON)
      .send(decision.body ?? '');
    return reply;
  };
  const where = options.hook ?? 'preValidation';
  if (where === 'onRequest') app.addHook('onRequest', hook);
  else if (where === 'preHandler') app.addHook('preHandler', hook);
  else app.addHook('preValidation', hook);
  app.addHook('onClose', async () => limiter.close());
  return limiter;
}

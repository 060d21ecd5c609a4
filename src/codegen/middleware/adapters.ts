/**
 * The framework adapters: thin, framework-specific glue around the shared core (each maps
 * a request onto LimiterInput and a Decision onto the response). Everything else lives in
 * the one core template (runtime.ts). Same rule as there: no backticks, no dollar-brace.
 */
export const CORE_MODULE = './ratelimit-core.js';

export const EXPRESS_ADAPTER = String.raw`import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createLimiter } from './ratelimit-core.js';
import type { Decision, LimiterOptions, RateLimiter } from './ratelimit-core.js';

export * from './ratelimit-core.js';

export type ExpressRateLimitOptions = LimiterOptions<Request>;

export interface ExpressRateLimit extends RequestHandler {
  /** The limiter behind the middleware (check(), clientIp(), close()). */
  readonly limiter: RateLimiter<Request>;
}

/** Writes the decision's headers; ends the response when the request is refused. */
function respond(res: Response, decision: Decision): boolean {
  const headers = decision.headers;
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as readonly [string, string];
    res.setHeader(header[0], header[1]);
  }
  if (decision.status === 200) return false;
  res.statusCode = decision.status;
  res.setHeader('Content-Type', decision.contentType ?? 'application/problem+json; charset=utf-8');
  res.end(decision.body ?? '');
  return true;
}

/**
 * The rate-limit middleware. Mount it once, before the routes, after body parsing when the
 * design has auth rules (they read the username from the body unless identify() gives it).
 */
export function rateLimit(options: ExpressRateLimitOptions): ExpressRateLimit {
  const limiter = createLimiter<Request>(options);
  const handler = (req: Request, res: Response, next: NextFunction): void => {
    limiter
      .check({
        method: req.method,
        url: req.originalUrl || req.url,
        remoteAddress: req.socket.remoteAddress,
        forwardedFor: req.headers['x-forwarded-for'],
        req,
      })
      .then(
        (decision) => {
          if (!respond(res, decision)) next();
        },
        (error: unknown) => next(error),
      );
  };
  return Object.assign(handler, { limiter });
}
`;

export const FASTIFY_ADAPTER = String.raw`import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createLimiter } from './ratelimit-core.js';
import type { LimiterOptions, RateLimiter } from './ratelimit-core.js';

export * from './ratelimit-core.js';

export interface FastifyRateLimitOptions extends LimiterOptions<FastifyRequest> {
  /**
   * Where the check runs. Default 'preValidation': the body is parsed (auth rules read the
   * username from it) and nothing has been validated or handled yet. 'onRequest' is
   * cheaper when no rule needs the body.
   */
  readonly hook?: 'onRequest' | 'preValidation' | 'preHandler' | undefined;
}

/**
 * Adds the rate-limit hook to the instance (call it on the root instance before the
 * routes are registered, or inside the plugin whose routes it should cover).
 */
export function registerRateLimit(app: FastifyInstance, options: FastifyRateLimitOptions): RateLimiter<FastifyRequest> {
  const limiter = createLimiter<FastifyRequest>(options);
  const hook = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const decision = await limiter.check({
      method: request.method,
      url: request.url,
      remoteAddress: request.raw.socket.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
      req: request,
    });
    const headers = decision.headers;
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      reply.header(header[0], header[1]);
    }
    if (decision.status === 200) return undefined;
    reply
      .code(decision.status)
      .type(decision.contentType ?? 'application/problem+json; charset=utf-8')
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
`;

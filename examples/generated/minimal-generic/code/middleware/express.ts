// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Express adapter: mounts the limiter of this design (DESIGN, from design.ts) as middleware.
 *
 * Usage:
 *   import express from 'express';
 *   import { Redis } from 'ioredis';
 *   import { rateLimit } from './middleware/express.js';
 *   const app = express();
 *   app.use(express.json()); // first, when auth rules must read the username from the body
 *   app.use(rateLimit({
 *     redis: new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true, enableOfflineQueue: false }),
 *     identify: (req) => ({ apiKey: req.auth?.keyId, tenantId: req.auth?.tenantId, plan: req.auth?.plan }),
 *     mode: (ruleId, flag) => flags.get(flag), // 'enforce' | 'shadow' | 'off': the per-rule kill switch
 *   }));
 *
 * NestJS on its Express platform mounts the same middleware with app.use().
 * Options: LimiterOptions in types.ts. Rules start in the mode the design's rollout gives
 * (DESIGN.defaultMode); switch each rule through its flag in mode(), or all at once with
 * defaultMode: 'enforce'.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { DESIGN } from './design.js';
import { createLimiter } from './limiter.js';
import { PROBLEM_JSON } from './responses.js';
import type { Decision, DecisionSink, LimiterOptions, RateLimiter } from './types.js';

export * from './types.js';
export { createLimiter } from './limiter.js';
export { DESIGN } from './design.js';

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
  res.setHeader('Content-Type', decision.contentType ?? PROBLEM_JSON);
  res.end(decision.body ?? '');
  return true;
}

/**
 * Where a request's decision goes: onto the response, then on to the next handler. A sink
 * rather than a promise: the decision reaches the response in the callback that read Redis's
 * reply, not one microtask later, and with no promise allocated for it.
 */
class ResponseSink implements DecisionSink {
  private readonly res: Response;
  private readonly next: NextFunction;

  constructor(res: Response, next: NextFunction) {
    this.res = res;
    this.next = next;
  }

  decided(decision: Decision): void {
    let ended: boolean;
    try {
      ended = respond(this.res, decision);
    } catch (error) {
      // e.g. headers already sent by an earlier middleware: Express's error handling, not a crash
      this.next(error);
      return;
    }
    if (!ended) this.next();
  }

  failed(error: unknown): void {
    this.next(error);
  }
}

/**
 * The rate-limit middleware. Mount it once, before the routes, after body parsing when the
 * design has auth rules (unless identify() gives it, they read the username from the body,
 * else from an HTTP Basic Authorization header: account-name.ts).
 */
export function rateLimit(options: ExpressRateLimitOptions): ExpressRateLimit {
  const limiter = createLimiter<Request>(DESIGN, options);
  const handler = (req: Request, res: Response, next: NextFunction): void => {
    limiter.decide(
      {
        method: req.method,
        url: req.originalUrl || req.url,
        remoteAddress: req.socket.remoteAddress,
        forwardedFor: req.headers['x-forwarded-for'],
        req,
        headers: req.headers,
      },
      new ResponseSink(res, next),
    );
  };
  return Object.assign(handler, { limiter });
}

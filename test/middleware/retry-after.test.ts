/**
 * Retry-After against a real redis-server, through the shipped runtime (src/runtime, what
 * generation copies verbatim): never early (a client that waits exactly the seconds it was told
 * is admitted) and never a whole second late where the real wait is a whole second (a drained
 * bucket of 1 per second always says 1). The seconds are the wait the scripts return in ms,
 * rounded up; for a bucket of one token per second that wait is at most 1,000 ms (the key's
 * expiry, in whole ms, is the moment the token is back), so the header reads 1 at every moment
 * of the second, including the refusal that lands in the same millisecond as the admission.
 * The same holds for the identity-limits call (two limits of one identity checked together) and
 * for the in-process twin of the scripts.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { compileDesign, designData } from '../../src/codegen/middleware/index.js';
import { createLimiter } from '../../src/runtime/middleware/limiter.js';
import { retryAfterSeconds } from '../../src/runtime/middleware/responses.js';
import { gcraNumbers, gcraReply } from '../../src/runtime/middleware/store.js';
import type { DesignData, RuleSpec } from '../../src/runtime/middleware/types.js';
import { exampleDesign } from '../helpers/examples.js';
import { useRedisServer } from '../helpers/redis.js';
import { freshPrefix, sleep } from './harness.js';

const redisServer = useRedisServer();
const base = designData(compileDesign(exampleDesign('saas-platform')));
const template = base.rules.find((r) => r.id === 'fairness-pro')!;
const routeIndex = base.routes.findIndex((r) => r.method === 'GET' && !r.route.includes('*') && !r.exempt);
const route = base.routes[routeIndex]!;
const url = route.route.replace(/:[^/]+/g, '1');

/** A bucket rule on the test route, keyed on the API key (inHash: a field of the key's hash, checked by identity-limits). */
function bucket(
  id: string,
  limit: number,
  periodSeconds: number,
  burst: number,
  store: 'redis' | 'memory' = 'redis',
  inHash = false,
): RuleSpec {
  return {
    ...template,
    id,
    plan: null,
    key: inHash ? '{ak:<api-key>}' : `{ak:<api-key>}:${id}`,
    field: inHash ? id : null,
    identity: 'api-key',
    routes: [routeIndex],
    limit,
    periodSeconds,
    burst,
    store,
    hybrid: false,
    quota: null,
    costByEndpoint: [],
    costDefault: 1,
  };
}

function limiterOf(rules: RuleSpec[]) {
  const { access: _none, ...rest } = base;
  const data: DesignData = { ...rest, defaultMode: 'enforce', hybrid: null, rules };
  return createLimiter(data, {
    redis: redisServer.redis,
    registry: new Registry(),
    keyPrefix: freshPrefix('ra'),
    identify: () => ({ apiKey: 'client-1' }),
  });
}

type Limiter = ReturnType<typeof limiterOf>;

async function call(limiter: Limiter): Promise<{ status: number; retryAfter: number | null; at: number }> {
  const d = await limiter.check({ method: 'GET', url, remoteAddress: '10.0.0.1', forwardedFor: undefined, req: {} });
  const header = d.headers.find(([name]) => name === 'Retry-After');
  return { status: d.status, retryAfter: header ? Number(header[1]) : null, at: performance.now() };
}

/**
 * Drains the bucket, then for `rounds` rounds: refusals at spread moments of the wait (each one's
 * Retry-After recorded), then a wait of exactly the last Retry-After from the last refusal, and
 * one request that must be admitted.
 */
async function pace(limiter: Limiter, burst: number, rounds: number): Promise<{ seen: number[]; admittedAfterWait: number[] }> {
  for (let i = 0; i < burst; i++) expect((await call(limiter)).status).toBe(200);
  const seen: number[] = [];
  const admittedAfterWait: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let last = await call(limiter);
    expect(last.status).toBe(429);
    seen.push(last.retryAfter!);
    // more refusals later in the wait (the header is read at different moments of the second)
    for (const ms of [round * 97, 150]) {
      await sleep(ms % 400);
      const r = await call(limiter);
      if (r.status !== 429) break;
      last = r;
      seen.push(r.retryAfter!);
    }
    const waitMs = last.retryAfter! * 1000 - (performance.now() - last.at);
    if (waitMs > 0) await sleep(waitMs);
    admittedAfterWait.push((await call(limiter)).status);
  }
  return { seen, admittedAfterWait };
}

describe('Retry-After of a drained bucket', () => {
  it("is the wait rounded up: a wait of exactly one token of 1 per second (the refusal in the admission's millisecond) reads 1", () => {
    // gcra.lua's reply for a refusal when the bucket (burst 1, 1 per second) is a whole interval ahead
    const { interval: T, tolerance } = gcraNumbers(1, 1, 1000);
    expect(tolerance).toBe(T);
    expect(T).toBe(1_000_000);
    const exact = gcraReply(-1_000_000 - 1, T, T, T);
    expect(exact[2]).toBe(1000);
    expect(retryAfterSeconds({ periodSeconds: 1 }, { retryAfterMs: exact[2]! })).toBe(1);
    // a microsecond less ahead still waits a whole ms (the key's expiry is whole ms): 1 s, not 0
    expect(retryAfterSeconds({ periodSeconds: 1 }, { retryAfterMs: gcraReply(-1 - 1, T, T, T)[2]! })).toBe(1);
    // a whole interval and one ms more is past one second: 2 (never early)
    expect(retryAfterSeconds({ periodSeconds: 2 }, { retryAfterMs: gcraReply(-1_001_000 - 1, T, T, T)[2]! })).toBe(2);
  });

  it.each<[string, 'redis' | 'memory', number]>([
    ['gcra.lua, burst 1', 'redis', 1],
    ['gcra.lua, burst 3', 'redis', 3],
    ['the in-process twin, burst 1', 'memory', 1],
  ])('1 per second (%s): always 1, and waiting exactly that long is admitted', async (_name, store, burst) => {
    const limiter = limiterOf([bucket('one-per-second', 1, 1, burst, store)]);
    try {
      // a refusal in the same millisecond as the admission that drained the bucket: the wait is 1,000 ms exactly
      const { seen, admittedAfterWait } = await pace(limiter, burst, 3);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(new Set(seen)).toEqual(new Set([1]));
      expect(admittedAfterWait).toEqual([200, 200, 200]);
    } finally {
      limiter.close();
    }
  });

  it('60 per minute is the same bucket: 1', async () => {
    const limiter = limiterOf([bucket('sixty-per-minute', 60, 60, 1)]);
    try {
      const { seen, admittedAfterWait } = await pace(limiter, 1, 2);
      expect(new Set(seen)).toEqual(new Set([1]));
      expect(admittedAfterWait).toEqual([200, 200]);
    } finally {
      limiter.close();
    }
  });

  it('1 per 2 seconds: 2 at most, never 3, and never early', async () => {
    const limiter = limiterOf([bucket('one-per-two-seconds', 1, 2, 1)]);
    try {
      const { seen, admittedAfterWait } = await pace(limiter, 1, 1);
      expect(Math.max(...seen)).toBe(2);
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(1);
      expect(admittedAfterWait).toEqual([200]);
    } finally {
      limiter.close();
    }
  });

  it('identity-limits (two limits of one identity in one call): the 1 per second limit that binds says 1', async () => {
    const limiter = limiterOf([bucket('one-per-second', 1, 1, 1, 'redis', true), bucket('five-per-second', 5, 1, 5, 'redis', true)]);
    try {
      const { seen, admittedAfterWait } = await pace(limiter, 1, 2);
      expect(new Set(seen)).toEqual(new Set([1]));
      expect(admittedAfterWait).toEqual([200, 200]);
    } finally {
      limiter.close();
    }
  });
});

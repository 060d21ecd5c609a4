/**
 * The in-process bucket in front of Redis (the local + store hybrid) under sustained contention,
 * through the shipped runtime (src/runtime, what generation copies verbatim) against a real
 * redis-server: several limiters (the instances) share one Redis bucket, many requests at once
 * on each, in waves that leave a few tokens for the local buckets to learn and then take them
 * back before the local charges land. However often a charge is refused, the fleet admits no
 * more within the period than the document's figure (the shared bucket's worst case plus each
 * instance's local burst), and once the contention stops every admitted request has been
 * charged to Redis exactly once.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { compileDesign, designData } from '../../src/codegen/middleware/index.js';
import { withLocalBuckets } from '../../src/design/worst-case.js';
import { createLimiter } from '../../src/runtime/middleware/limiter.js';
import type { DesignData, RedisClientLike, RuleSpec } from '../../src/runtime/middleware/types.js';
import { exampleDesign } from '../helpers/examples.js';
import { useRedisServer } from '../helpers/redis.js';
import { freshPrefix, sleep } from './harness.js';

const redisServer = useRedisServer();
const base = designData(compileDesign(exampleDesign('saas-platform')));
const template = base.rules.find((r) => r.id === 'fairness-pro')!;
const routeIndex = base.routes.findIndex((r) => r.method === 'GET' && !r.route.includes('*') && !r.exempt);
const url = base.routes[routeIndex]!.route.replace(/:[^/]+/g, '1');

/** A GCRA bucket behind the in-process bucket, keyed on the API key. */
function hybridBucket(limit: number, periodSeconds: number, burst: number): RuleSpec {
  return {
    ...template,
    id: 'contended',
    plan: null,
    key: '{ak:<api-key>}:contended',
    field: null,
    identity: 'api-key',
    routes: [routeIndex],
    limit,
    periodSeconds,
    burst,
    store: 'redis',
    hybrid: true,
    quota: null,
    costByEndpoint: [],
    costDefault: 1,
  };
}

/**
 * The Redis client the instances share, counting the tokens gcra.lua took (an admission
 * replies > 0; ARGV after the key: tolerance, increment = tokens x interval, interval).
 */
function countingClient(): { client: RedisClientLike; charged: () => number; fail: (on: boolean) => void } {
  let charged = 0;
  let failing = false;
  const count = (args: (string | number)[], reply: unknown): unknown => {
    if (Number(reply) > 0) charged += Number(args[2]) / Number(args[3]);
    return reply;
  };
  const down = (): Promise<never> => Promise.reject(new Error('connection lost'));
  return {
    client: {
      evalsha: (sha, numKeys, ...args) => (failing ? down() : redisServer.redis.evalsha(sha, numKeys, ...args).then((r) => count(args, r))),
      eval: (script, numKeys, ...args) => (failing ? down() : redisServer.redis.eval(script, numKeys, ...args).then((r) => count(args, r))),
    },
    charged: () => charged,
    fail: (on) => {
      failing = on;
    },
  };
}

/** The design data of one hybrid bucket rule, with the in-process buckets on. */
function hybridData(rule: RuleSpec, localBurst: number, instances: number): DesignData {
  const { access: _none, ...rest } = base;
  return { ...rest, defaultMode: 'enforce', hybrid: { localBurst, instances, overAdmission: localBurst * instances }, rules: [rule] };
}

const request = { method: 'GET', url, remoteAddress: '10.0.0.1', forwardedFor: undefined, req: {} };

describe('the in-process bucket under sustained contention', () => {
  it('several instances on one Redis never admit more within the period than the shared worst case plus each local burst', async () => {
    // 200 per 4 s (one token every 20 ms), burst 10; 4 instances with a local burst of 3
    const limit = 200;
    const periodSeconds = 4;
    const burst = 20;
    const localBurst = 3;
    const instances = 4;
    const perInstance = 6;
    const stated = withLocalBuckets({ worstCase: burst + limit, formula: `${burst} + ${limit}`, basis: '' }, instances, localBurst);
    expect(stated.worstCase).toBe(232);

    const data = hybridData(hybridBucket(limit, periodSeconds, burst), localBurst, instances);
    const counting = countingClient();
    const errors: unknown[] = [];
    const keyPrefix = freshPrefix('lb');
    const limiters = Array.from({ length: instances }, () =>
      createLimiter(data, {
        redis: counting.client,
        registry: new Registry(),
        keyPrefix,
        // a generous store timeout: a timed-out call fails open, which is not what this measures
        timeoutMs: 5000,
        onStoreError: (e) => errors.push(e),
        identify: () => ({ apiKey: 'contended-client' }),
      }),
    );
    try {
      const periodMs = periodSeconds * 1000;
      let admitted = 0;
      let admittedAll = 0;
      let local = 0;
      let refusedLocally = 0;
      const t0 = performance.now();
      const end = t0 + periodMs;
      // waves: 400 ms of every client at once, then 300 ms quiet (15 tokens come back)
      const quiet = (now: number): boolean => (now - t0) % 700 >= 400;
      const client = async (limiter: (typeof limiters)[number]): Promise<void> => {
        while (performance.now() < end) {
          if (quiet(performance.now())) {
            await sleep(5);
            continue;
          }
          const d = await limiter.check(request);
          const outcome = d.outcomes[0];
          const fromLocal = outcome?.source === 'local';
          // only what was decided within the period counts (a reply after it may be Redis's next token)
          if (performance.now() <= end && d.status === 200) {
            admitted++;
            if (fromLocal) local++;
          }
          if (d.status === 200) admittedAll++;
          if (d.status === 429 && fromLocal) refusedLocally++;
          await sleep(1);
        }
      };
      await Promise.all(limiters.flatMap((limiter) => Array.from({ length: perInstance }, () => client(limiter))));
      expect(errors).toEqual([]);
      // the scenario did what it is about: local admissions, and local charges Redis refused
      expect(local).toBeGreaterThan(0);
      expect(refusedLocally).toBeGreaterThan(0);
      expect(admitted, `${admitted} admitted within ${periodMs} ms (${local} locally), at most ${stated.formula}`).toBeLessThanOrEqual(
        stated.worstCase,
      );
      // with the contention over, every owed charge lands: Redis counted each admitted request once
      const settled = performance.now() + 3000;
      while (counting.charged() < admittedAll && performance.now() < settled) await sleep(20);
      await sleep(100);
      expect(counting.charged()).toBe(admittedAll);
    } finally {
      for (const limiter of limiters) limiter.close();
    }
  });

  it('a local charge whose call failed stays owed: no local admission meanwhile, and it is charged once Redis answers', async () => {
    const counting = countingClient();
    const errors: unknown[] = [];
    const limiter = createLimiter(hybridData(hybridBucket(200, 4, 20), 3, 1), {
      redis: counting.client,
      registry: new Registry(),
      keyPrefix: freshPrefix('lbf'),
      timeoutMs: 5000,
      onStoreError: (e) => errors.push(e),
      identify: () => ({ apiKey: 'flaky-store-client' }),
    });
    const source = async (): Promise<string> => {
      const d = await limiter.check(request);
      expect(d.status).toBe(200);
      return d.outcomes[0]?.source ?? 'none';
    };
    try {
      // Redis admits and reports 19 left: the instance may admit 3 on its own
      expect(await source()).toBe('store');
      counting.fail(true);
      expect([await source(), await source(), await source()]).toEqual(['local', 'local', 'local']);
      await sleep(20);
      // their charge failed: reported, and owed
      expect(errors.length).toBe(1);
      expect(counting.charged()).toBe(1);
      counting.fail(false);
      // owed: the next request asks Redis, not the local credit, and the owed 3 follow it
      expect(await source()).toBe('store');
      await sleep(50);
      expect(counting.charged()).toBe(5);
      // paid: local credit again
      expect(await source()).toBe('local');
      await sleep(20);
      expect(counting.charged()).toBe(6);
      expect(errors.length).toBe(1);
    } finally {
      limiter.close();
    }
  });
});

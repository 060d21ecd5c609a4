/**
 * A provider limit below one call per period after its safety fraction (Slack's 1/second at
 * 90%): the shipped bucket runs at 0.9 calls per second, as the document's outbound table
 * states, never rounded up to the provider's own limit. Proven on a real redis-server with
 * outbound-bucket.lua called exactly as the generated client calls it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { outboundProviders } from '../../src/codegen/outbound/index.js';
import { buildDesign } from '../../src/design/build.js';
import { luaScript } from '../../src/lua.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const design = buildDesign(
  Answers.parse({
    stack: { framework: 'express', topology: 'horizontal', instances: 3, store: 'redis' },
    goals: ['overload'],
    outbound: [{ name: 'Slack', limit: { requests: 1, per: 'second' } }],
  }),
  { date: '2026-12-03' },
);

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await redis.connect();
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

describe('outbound bucket below one call per period', () => {
  it('ships the safety fraction of the limit (0.9 per second), the rate the document states', () => {
    const [slack] = outboundProviders(design);
    expect(slack).toMatchObject({ name: 'Slack', rate: 0.9, periodMs: 1000, burst: 1 });
    const provider = design.outbound!.providers[0]!;
    expect(provider.bucketPerSecond).toBe(0.9);
    const rule = design.rules.find((r) => r.id === 'outbound-slack')!;
    expect(rule.rate).toEqual({ requests: 0.9, periodSeconds: 1 });
  });

  it('on a real Redis, the second call waits 1/0.9 s (1,112 ms), not the 1 s of the provider limit', async () => {
    const [slack] = outboundProviders(design);
    const script = luaScript('outbound-bucket');
    const reserve = async (): Promise<number[]> =>
      (await redis.eval(
        script.source,
        1,
        'rl:{out:slack}:bucket',
        'reserve',
        slack!.burst,
        slack!.rate,
        slack!.periodMs,
        1,
        0,
      )) as number[];
    expect((await reserve())[0]).toBe(1);
    const [reserved, waitMs] = await reserve();
    expect(reserved).toBe(0);
    // T = ceil(1000 * 1000 / 0.9) us = 1,111,112 us; a rate of 1/s would say at most 1,000 ms
    expect(waitMs).toBeGreaterThan(1050);
    expect(waitMs).toBeLessThanOrEqual(1112);
  });
});

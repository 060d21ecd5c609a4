/**
 * The generated middleware on a real 3-master Redis Cluster (loopback): the race for the
 * last tokens admits exactly 10, for Express and Fastify; dual-key auth (two keys, one
 * script call) works because both keys share a hash tag; every key on every master has a TTL.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCode } from '../../src/codegen/index.js';
import { useRedisCluster } from '../helpers/redis.js';
import { MAIN } from './designs.js';
import {
  allFiles,
  counter,
  designFrom,
  expectTtlsUnder,
  freshPrefix,
  hit,
  serve,
  useCompiledMiddleware,
  type Framework,
} from './harness.js';

type Mod = Record<string, (...args: never[]) => unknown>;

const design = designFrom({ ...MAIN, stack: { ...MAIN.stack, store: 'redis-cluster' } });

const store = useRedisCluster();
const scratch = useCompiledMiddleware(() => ({ cluster: allFiles(design) }));
const mods: Record<string, Mod> = {};

beforeAll(async () => {
  for (const fw of ['express', 'fastify']) mods[fw] = await scratch.load<Mod>('cluster', fw);
});

describe.each<Framework>(['express', 'fastify'])('%s middleware on a 3-master Redis Cluster', (fw) => {
  it('200 concurrent requests racing for the last 10 tokens admit exactly 10; dual-key auth works in one slot', async () => {
    const prefix = freshPrefix('cl');
    const s = await serve(fw, mods[fw] as Mod, { redis: store.client, keyPrefix: prefix, timeoutMs: 5000 });
    try {
      const k = { 'x-test-key': 'cluster-race' };
      expect((await hit(s.url, 'GET', '/v1/items', k)).status).toBe(200);
      expect((await hit(s.url, 'GET', '/v1/items', k)).status).toBe(200);
      const results = await Promise.all(Array.from({ length: 200 }, () => hit(s.url, 'GET', '/v1/items', k)));
      expect(results.filter((r) => r.status === 200).length).toBe(10);
      expect(results.filter((r) => r.status === 429).length).toBe(190);
      expect(await counter(s.registry, 'ratelimit_fail_open_events_total')).toBe(0);

      const statuses = [];
      for (let i = 1; i <= 4; i++) {
        statuses.push((await hit(s.url, 'POST', '/v1/login', { 'x-forwarded-for': `203.0.113.${i}` }, { username: 'carol' })).status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(await counter(s.registry, 'ratelimit_store_failures_total')).toBe(0);

      // every key on every master carries a TTL (the fairness bucket and both auth logs at least)
      let checked = 0;
      for (const m of store.masters) checked += await expectTtlsUnder(m, prefix);
      expect(checked).toBeGreaterThanOrEqual(3);
    } finally {
      await s.close();
    }
  });
});

describe('the Redis client the code README asks for on a Redis Cluster', () => {
  it('names the Cluster client, and a client of one node does fail as it says: MOVED, counted as store failures', async () => {
    const readme = generateCode(design).find((f) => f.path === 'README.md')?.content ?? '';
    expect(readme).toContain("This design's store is a Redis Cluster: give the limiter an ioredis `Cluster` where the usage");
    expect(readme).toContain('A client of one node gets a MOVED error for every key another master');
    const errors: string[] = [];
    const prefix = freshPrefix('cl1');
    const s = await serve('fastify', mods.fastify as Mod, {
      redis: store.masters[0],
      keyPrefix: prefix,
      timeoutMs: 5000,
      onStoreError: (error) => errors.push(String((error as Error).message ?? error)),
    });
    try {
      // sixteen API keys spread over the three masters' slots
      for (let i = 0; i < 16; i++) await hit(s.url, 'GET', '/v1/items', { 'x-test-key': `one-node-${i}` });
      expect(await counter(s.registry, 'ratelimit_store_failures_total')).toBeGreaterThan(0);
      expect(errors.some((m) => m.includes('MOVED'))).toBe(true);
    } finally {
      await s.close();
    }
  });
});

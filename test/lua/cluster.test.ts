/**
 * The race scenario on a real 3-master Redis Cluster: each script's keys hash to one slot,
 * the scripts stay atomic there, and every key they write carries a TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterHandle } from '../helpers/redis.js';
import { expectEveryKeyHasTtl, gcraArgv, race, run, type Client } from './harness.js';

const HOUR = 3_600_000;
let cluster: RedisClusterHandle;
let clients: Cluster[];
let masters: Redis[];

beforeAll(async () => {
  cluster = await startRedisCluster();
  const startup = cluster.nodes.map((n) => ({ host: n.host, port: n.port }));
  clients = Array.from({ length: 4 }, () => new Cluster(startup, { redisOptions: { maxRetriesPerRequest: 1 } }));
  masters = cluster.nodes.map((n) => new Redis(n.port, n.host, { maxRetriesPerRequest: 1 }));
}, 60_000);

afterAll(async () => {
  await Promise.all([...(clients ?? []), ...(masters ?? [])].map((c) => c.quit().catch(() => undefined)));
  await cluster?.stop();
});

/** The master that serves a key's slot. */
async function ownerOf(key: string): Promise<number> {
  const slot = await masters[0]!.cluster('KEYSLOT', key);
  const slots = await masters[0]!.cluster('SLOTS');
  const range = slots.find(([from, to]) => slot >= from && slot <= to)!;
  return range[2]![1];
}

/** Ten tags spread over the masters, so the races run on more than one node. */
const TAGS = Array.from({ length: 10 }, (_, i) => `tenant${i}`);

describe('on a 3-master Redis Cluster', () => {
  it('has three masters sharing the slots, and our tags land on more than one', async () => {
    const owners = new Set(await Promise.all(TAGS.map((t) => ownerOf(`rl:{${t}}:api`))));
    expect(owners.size).toBeGreaterThan(1);
  });

  it('gcra: 200 concurrent calls for the last 10 tokens admit exactly 10, per key', async () => {
    for (const tag of TAGS.slice(0, 3)) {
      const key = `rl:{${tag}}:api`;
      await run(clients[0]!, 'gcra', [key], gcraArgv(110, 1, HOUR, 100));
      const replies = (await race(clients, 200, (c: Client) => run(c, 'gcra', [key], gcraArgv(110, 1, HOUR, 1)))) as unknown as number[];
      // one integer per call: positive when admitted
      expect(replies.filter((r) => r > 0)).toHaveLength(10);
    }
  });

  it('identity-limits: a GCRA bucket and a quota of one tenant, two fields of its hash, race as one, 200 calls for the last 10', async () => {
    const HOUR_US = HOUR * 1000;
    for (const tag of TAGS.slice(3, 6)) {
      const hash = `rl:{${tag}}`;
      const end = Date.now() + HOUR;
      // the bucket has room for 1000 (one token an hour), the quota for 110: the quota binds
      const args = (cost: number) => ['req', 'g', 1000 * HOUR_US, cost * HOUR_US, 'quota', 'w', 110, end, cost];
      await run(clients[0]!, 'identity-limits', [hash], args(100));
      const replies = await race(clients, 200, (c: Client) => run(c, 'identity-limits', [hash], args(1)));
      expect(replies.filter((r) => r[0] === 0)).toHaveLength(10);
      expect((await clients[0]!.hget(hash, 'quota'))?.slice(-9)).toBe('000000110');
      // the bucket was charged for exactly the admitted calls: 100 + 10 tokens of an hour each
      const [sec] = await clients[0]!.time();
      expect(Math.round((Number(await clients[0]!.hget(hash, 'req')) / 1e6 - Number(sec)) / 3600)).toBe(110);
      // and the hash's TTL covers the bucket: full again in 110 hours
      expect(Math.round((await clients[0]!.pttl(hash)) / HOUR)).toBe(110);
    }
  });

  it('identity-limits: a GCRA bucket and a rolling 30-day quota of one tenant race as one, 200 calls for the last 10', async () => {
    const HOUR_US = HOUR * 1000;
    const DAY = 86_400_000;
    for (const tag of TAGS.slice(6, 9)) {
      const hash = `rl:{${tag}}:r`;
      const args = (cost: number) => ['req', 'g', 1000 * HOUR_US, cost * HOUR_US, 'quota', 'r', 110, DAY, 30, cost];
      await run(clients[0]!, 'identity-limits', [hash], args(100));
      const replies = await race(clients, 200, (c: Client) => run(c, 'identity-limits', [hash], args(1)));
      expect(replies.filter((r) => r[0] === 0)).toHaveLength(10);
      expect(replies.filter((r) => r[0] === 2)).toHaveLength(190);
      const [sec] = await clients[0]!.time();
      const today = Math.floor(Number(sec) / 86_400);
      expect(await clients[0]!.hget(hash, `quota:${today}`)).toBe('110');
      expect(Math.round((Number(await clients[0]!.hget(hash, 'req')) / 1e6 - Number(sec)) / 3600)).toBe(110);
      // the TTL: the bucket's 110 hours are within the window, whose newest bucket leaves in 29 to 30 days
      expect(await clients[0]!.pexpiretime(hash)).toBe((today + 30) * DAY + 1);
    }
  });

  it('sliding-window-log: dual keys in one slot race atomically', async () => {
    for (const tag of ['auth:login', 'auth:reset']) {
      const user = `rl:{${tag}}:user:alice`;
      const ip = `rl:{${tag}}:ip:203.0.113.9`;
      await run(clients[0]!, 'sliding-window-log', [user, ip], [110, HOUR, 1000, HOUR, 100]);
      const replies = await race(clients, 200, (c: Client) => run(c, 'sliding-window-log', [user, ip], [110, HOUR, 1000, HOUR, 1]));
      expect(replies.filter((r) => r[0] === 1)).toHaveLength(10);
      expect(await clients[0]!.zcard(user)).toBe(110);
      expect(await clients[0]!.zcard(ip)).toBe(110);
    }
  });

  it('sliding-window-log: keys without a shared hash tag are refused (CROSSSLOT), never split', async () => {
    // find two untagged keys on different slots
    const a = 'rl:auth:user:alice';
    let b = 'rl:auth:ip:1';
    for (let i = 2; (await masters[0]!.cluster('KEYSLOT', b)) === (await masters[0]!.cluster('KEYSLOT', a)); i++) {
      b = `rl:auth:ip:${i}`;
    }
    await expect(run(clients[0]!, 'sliding-window-log', [a, b], [5, HOUR, 5, HOUR, 1])).rejects.toThrow(/CROSSSLOT|slot/i);
  });

  it('fixed-window: 200 concurrent calls for the last 10 units admit exactly 10', async () => {
    const [sec] = await masters[0]!.time();
    const end = Number(sec) * 1000 + HOUR;
    for (const tag of TAGS.slice(3, 6)) {
      const key = `rl:{q:${tag}}:month:2026-01`;
      await run(clients[0]!, 'fixed-window', [key], ['calendar', 110, 100, end, 60_000]);
      const replies = await race(clients, 200, (c: Client) => run(c, 'fixed-window', [key], ['calendar', 110, 1, end, 60_000]));
      expect(replies.filter((r) => r[0] === 1)).toHaveLength(10);
    }
  });

  it('outbound-bucket: 200 concurrent reservations get 200 distinct slots', async () => {
    const key = 'rl:{out:stripe}:bucket';
    const replies = await race(clients, 200, (c: Client) => run(c, 'outbound-bucket', [key], ['reserve', 5, 10, 1000, 1, 60_000]));
    expect(replies.every((r) => r[0] === 1)).toBe(true);
    const waits = replies.map((r) => r[1]!).sort((x, y) => x - y);
    expect(waits.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    // 195 slots after the burst, one every 100 ms: the next free slot is ~19.6 s out
    expect(waits.at(-1)).toBeGreaterThan(18_000);
    const [, next] = await run(clients[0]!, 'outbound-bucket', [key], ['reserve', 5, 10, 1000, 1, 0]);
    expect(next).toBeGreaterThan(18_000);
    expect(next).toBeLessThanOrEqual(19_600);
  });

  it('penalty: the counter and the box share a slot; 50 concurrent refusals shut the box once', async () => {
    for (const tag of TAGS.slice(6, 9)) {
      const keys = [`rl:{pb:ip:${tag}}:strikes`, `rl:{pb:ip:${tag}}:box`];
      const replies = await race(clients, 50, (c: Client) => run(c, 'penalty', keys, ['strike', 20, HOUR, HOUR]));
      // the 20th refusal shuts the box; the 30 after it find it shut
      expect(replies.filter((r) => r[0] === 1)).toHaveLength(31);
      expect(await clients[0]!.pttl(keys[1]!)).toBeGreaterThan(HOUR - 60_000);
    }
  });

  it('every key on every master has a TTL', async () => {
    let checked = 0;
    for (const m of masters) checked += await expectEveryKeyHasTtl(m);
    expect(checked).toBeGreaterThanOrEqual(3 + 4 + 3 + 3 + 1);
  });
});

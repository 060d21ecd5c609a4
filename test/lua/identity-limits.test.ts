import { describe, expect, it } from 'vitest';
import { freshTag, race, run, sleep, useRedis } from './harness.js';

const s = useRedis();
const HOUR = 3_600_000;
const MINUTE_US = 60_000_000;

/** KEYS: the identity's hash; ARGV per limit: field, 'g', tolerance, increment | field, 'w', limit, window_end_ms, cost. */
const limits = (hash: string, args: (string | number)[]) => run(s.redis, 'identity-limits', [hash], args);
/** A bucket of `burst` tokens refilled one per minute, a request taking `cost`. */
const bucket = (field: string, burst: number, cost = 1) => [field, 'g', burst * MINUTE_US, cost * MINUTE_US];
const counter = (field: string, limit: number, end: number, cost = 1) => [field, 'w', limit, end, cost];
const hashOf = () => freshTag().slice(0, -1);

describe('identity-limits.lua: one hash per identity', () => {
  it('charges every limit of one identity in one call, each a field of one hash key', async () => {
    const hash = hashOf();
    const end = Date.now() + HOUR;
    const reply = await limits(hash, [...bucket('req', 5), ...counter('quota', 100, end, 3)]);
    expect(reply[0]).toBe(0);
    // the bucket is one interval (60 s) ahead, the quota has used 3
    expect(reply[1]).toBe(MINUTE_US);
    expect(reply[2]).toBe(3);
    expect(await s.redis.type(hash)).toBe('hash');
    expect(await s.redis.object('ENCODING', hash)).toBe('listpack');
    const fields = await s.redis.hgetall(hash);
    expect(Object.keys(fields).sort()).toEqual(['quota', 'req']);
    // the quota: the window's end in seconds, then the count in 9 digits
    expect(fields.quota).toBe(`${Math.floor(end / 1000)}000000003`);
    // the bucket: its TAT in microseconds, one interval past the server's now
    const [sec, usec] = await s.redis.time();
    const now = Number(sec) * 1e6 + Number(usec);
    expect(Number(fields.req) - now).toBeGreaterThan(MINUTE_US - 1_000_000);
    expect(Number(fields.req) - now).toBeLessThanOrEqual(MINUTE_US);
    // the TTL covers the longest: the quota's window end + 60 s of slack
    const pttl = await s.redis.pttl(hash);
    expect(pttl).toBeGreaterThan(HOUR + 59_000);
    expect(pttl).toBeLessThanOrEqual(HOUR + 60_001);
  });

  it('all or nothing: when one limit refuses, no field is written and each state is the one before', async () => {
    const hash = hashOf();
    const end = Date.now() + HOUR;
    expect((await limits(hash, [...bucket('req', 5), ...counter('quota', 2, end, 2)]))[0]).toBe(0);
    const before = await s.redis.hgetall(hash);
    const ttlBefore = await s.redis.pttl(hash);
    // the quota is spent: it refuses (limit 2), the bucket is not charged
    const reply = await limits(hash, [...bucket('req', 5), ...counter('quota', 2, end, 1)]);
    expect(reply[0]).toBe(2);
    expect(reply[2]).toBe(2);
    expect(await s.redis.hgetall(hash)).toEqual(before);
    // the bucket refuses (cost 5 on 4 tokens left): a new field is not written either
    const denied = await limits(hash, [...bucket('req', 5, 5), ...counter('other', 10, end)]);
    expect(denied[0]).toBe(1);
    expect(await s.redis.hgetall(hash)).toEqual(before);
    expect(await s.redis.pttl(hash)).toBeLessThanOrEqual(ttlBefore);
  });

  it('200 concurrent calls racing for the last 10 units admit exactly 10, with both limits charged alike', async () => {
    const hash = hashOf();
    const end = Date.now() + HOUR;
    await limits(hash, [...bucket('req', 110, 100), ...counter('quota', 1000, end, 100)]);
    const replies = await race(s.pool, 200, (c) =>
      run(c, 'identity-limits', [hash], [...bucket('req', 110), ...counter('quota', 1000, end)]),
    );
    expect(replies.filter((r) => r[0] === 0)).toHaveLength(10);
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(190);
    expect((await s.redis.hget(hash, 'quota'))?.slice(-9)).toBe('000000110');
  });

  it('a new window starts from 0 in the same field, overwriting the last window count', async () => {
    const hash = hashOf();
    const first = Date.now() + HOUR;
    const next = first + HOUR;
    expect((await limits(hash, counter('quota', 3, first, 3)))[1]).toBe(3);
    expect((await limits(hash, counter('quota', 3, first)))[0]).toBe(1);
    // the next window: 0 used, whatever the field held
    const reply = await limits(hash, counter('quota', 3, next));
    expect(reply).toEqual([0, 1]);
    expect(await s.redis.hget(hash, 'quota')).toBe(`${Math.floor(next / 1000)}000000001`);
    expect(await s.redis.hlen(hash)).toBe(1);
  });

  it('the TTL is only ever extended: a call touching one limit never cuts the others short', async () => {
    const hash = hashOf();
    const end = Date.now() + HOUR;
    await limits(hash, [...bucket('req', 5), ...counter('quota', 100, end)]);
    const long = await s.redis.pttl(hash);
    expect(long).toBeGreaterThan(HOUR);
    // a route carrying the bucket alone: its own state would need 2 minutes, the hash keeps its hour
    expect((await limits(hash, bucket('req', 5)))[0]).toBe(0);
    expect(await s.redis.pttl(hash)).toBeGreaterThan(long - 1000);
    // a bucket alone in a hash: the TTL is when it is full again, and grows with each token
    const alone = hashOf();
    await limits(alone, bucket('req', 5, 2));
    const two = await s.redis.pttl(alone);
    expect(two).toBeGreaterThan(2 * 60_000 - 1000);
    expect(two).toBeLessThanOrEqual(2 * 60_000 + 2);
    await limits(alone, bucket('req', 5));
    expect(await s.redis.pttl(alone)).toBeGreaterThan(3 * 60_000 - 1000);
    // a counter of an ended window still gets a TTL in the future
    const old = hashOf();
    expect((await limits(old, counter('quota', 5, Date.now() - HOUR)))[0]).toBe(0);
    const pttl = await s.redis.pttl(old);
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_001);
  });

  it("reads the TTL only when the new state reaches past what the fields held (a bucket beside its quota's month: never)", async () => {
    const hash = hashOf();
    const end = Date.now() + HOUR;
    const both = [...bucket('req', 50), ...counter('quota', 100, end)];
    await limits(hash, both);
    const info = async () => ((await s.redis.info('commandstats')).match(/cmdstat_(pttl|pexpireat):calls=(\d+)/g) ?? []).sort();
    await s.redis.config('RESETSTAT');
    for (let i = 0; i < 5; i++) expect((await limits(hash, both))[0]).toBe(0);
    expect(await info()).toEqual([]);
    // a bucket alone reaches further with every token: its TTL is extended each time
    const alone = hashOf();
    await s.redis.config('RESETSTAT');
    for (let i = 0; i < 3; i++) await limits(alone, bucket('req', 5));
    expect(await info()).toEqual(['cmdstat_pexpireat:calls=3', 'cmdstat_pttl:calls=3']);
    expect(await s.redis.pttl(alone)).toBeGreaterThan(3 * 60_000 - 1000);
  });

  it('a refused bucket asks for a wait that is never early', async () => {
    const hash = hashOf();
    // 2 tokens, one every 200 ms
    const args = ['req', 'g', 400_000, 200_000];
    expect((await limits(hash, args))[0]).toBe(0);
    expect((await limits(hash, args))[0]).toBe(0);
    const denied = await limits(hash, args);
    expect(denied[0]).toBe(1);
    const retryMs = Math.ceil(((denied[1] ?? 0) + 200_000 - 400_000) / 1000);
    expect(retryMs).toBeGreaterThan(0);
    expect(retryMs).toBeLessThanOrEqual(200);
    await sleep(retryMs);
    expect((await limits(hash, args))[0]).toBe(0);
  });

  it('rejects malformed arguments with a clear error', async () => {
    const hash = hashOf();
    await expect(run(s.redis, 'identity-limits', [hash, `${hash}:x`], bucket('req', 5))).rejects.toThrow(/want 1 key/);
    await expect(limits(hash, ['req', 'g', 5])).rejects.toThrow(/tolerance>=1/);
    await expect(limits(hash, ['req', 'x', 5, 1])).rejects.toThrow(/kind must be/);
    await expect(limits(hash, ['req', 'g', 0, 1])).rejects.toThrow(/tolerance>=1/);
    await expect(limits(hash, ['quota', 'w', 0, 1, 1])).rejects.toThrow(/limit<1e9/);
    await expect(limits(hash, ['quota', 'w', 1e9, 1, 1])).rejects.toThrow(/limit<1e9/);
    expect(await s.redis.exists(hash)).toBe(0);
  });
});

describe("identity-limits: the runtime's in-process twin", () => {
  it('takes the same decisions, replies with the same limit states and writes the same fields', async () => {
    const { MemoryStore } = await import('../../src/runtime/middleware/memory-store.js');
    const memory = new MemoryStore();
    const hash = hashOf();
    const end = Date.now() + HOUR;
    // a bucket of 4 (1 per minute), a quota of 6; costs 1, 2, 1, 3, 1, 1, 1
    const shape = (r: readonly number[]) => [r[0], Math.floor((4 * MINUTE_US - (r[1] ?? 0)) / MINUTE_US), r[2]];
    for (const cost of [1, 2, 1, 3, 1, 1, 1]) {
      const args = [...bucket('req', 4, cost), ...counter('quota', 6, end, cost)];
      const fromRedis = await limits(hash, args);
      const fromMemory = memory.run('identity-limits', [hash], args);
      expect(shape(fromMemory)).toEqual(shape(fromRedis));
    }
    // a new window: both start from 0
    const next = [...bucket('other', 4), ...counter('quota', 6, end + HOUR)];
    expect(memory.run('identity-limits', [hash], next)).toEqual([0, MINUTE_US, 1]);
    expect((await limits(hash, next)).slice(2)).toEqual([1]);
    memory.clear();
  });
});

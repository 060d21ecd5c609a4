import { describe, expect, it } from 'vitest';
import { freshTag, race, run, sleep, useRedis } from './harness.js';

const s = useRedis();
const HOUR = 3_600_000;
const MINUTE_US = 60_000_000;

/**
 * KEYS: the identity's hash; ARGV per limit: field, 'g', tolerance, increment | field, 'w', limit, window_end_ms, cost |
 * field, 'r', limit, bucket_ms, buckets, cost.
 */
const limits = (hash: string, args: (string | number)[]) => run(s.redis, 'identity-limits', [hash], args);
/** A bucket of `burst` tokens refilled one per minute, a request taking `cost`. */
const bucket = (field: string, burst: number, cost = 1) => [field, 'g', burst * MINUTE_US, cost * MINUTE_US];
const counter = (field: string, limit: number, end: number, cost = 1) => [field, 'w', limit, end, cost];
const rolling = (field: string, limit: number, bucketMs: number, buckets: number, cost = 1) => [field, 'r', limit, bucketMs, buckets, cost];
const hashOf = () => freshTag().slice(0, -1);
const DAY = 86_400_000;
async function redisNowMs(): Promise<number> {
  const [sec, usec] = await s.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

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
    await expect(limits(hash, ['req', 'x', 5, 1])).rejects.toThrow(/kind must be 'g', 'w' or 'r'/);
    await expect(limits(hash, ['quota', 'r', 0, DAY, 30, 1])).rejects.toThrow(/1<=limit<1e9, bucket_ms>=1, whole buckets>=1/);
    // (its running total keeps the units in 9 digits)
    await expect(limits(hash, ['quota', 'r', 1e9, DAY, 30, 1])).rejects.toThrow(/1<=limit<1e9/);
    await expect(limits(hash, ['quota', 'r', 5, DAY, 1.5, 1])).rejects.toThrow(/whole buckets>=1/);
    await expect(limits(hash, ['quota', 'r', 5, DAY, 30])).rejects.toThrow(/want 1\+ limits|wants 1<=limit/);
    await expect(limits(hash, ['req', 'g', 0, 1])).rejects.toThrow(/tolerance>=1/);
    await expect(limits(hash, ['quota', 'w', 0, 1, 1])).rejects.toThrow(/limit<1e9/);
    await expect(limits(hash, ['quota', 'w', 1e9, 1, 1])).rejects.toThrow(/limit<1e9/);
    expect(await s.redis.exists(hash)).toBe(0);
  });
});

describe('identity-limits.lua: a rolling window of daily buckets as fields of the hash', () => {
  it("counts a rolling 30-day quota in today's bucket field, beside a GCRA bucket, with the TTL at the newest bucket's exit", async () => {
    const hash = hashOf();
    const reply = await limits(hash, [...bucket('req', 5), ...rolling('quota', 100, DAY, 30, 3)]);
    const now = await redisNowMs();
    const today = Math.floor(now / DAY);
    const exit = (today + 30) * DAY;
    // denied_by, the bucket's one value, then the window's three: used, wait, reset
    expect(reply.slice(0, 4)).toEqual([0, MINUTE_US, 3, 0]);
    expect(Math.abs(reply[4]! - (exit - now))).toBeLessThan(1000);
    // the day's bucket, and the window's running total: its first day, then the units in 9 digits
    expect(await s.redis.hgetall(hash)).toEqual({ req: expect.any(String), [`quota:${today}`]: '3', quota: `${today - 29}000000003` });
    expect(await s.redis.object('ENCODING', hash)).toBe('listpack');
    expect(await s.redis.pexpiretime(hash)).toBe(exit + 1);
    // the same bucket grows: no new field
    const again = await limits(hash, [...bucket('req', 5), ...rolling('quota', 100, DAY, 30, 2)]);
    expect([again[0], again[2], again[3]]).toEqual([0, 5, 0]);
    expect(again[1]).toBeGreaterThan(2 * MINUTE_US - 1_000_000);
    expect(await s.redis.hget(hash, `quota:${today}`)).toBe('5');
    expect(await s.redis.hget(hash, 'quota')).toBe(`${today - 29}000000005`);
    expect(await s.redis.hlen(hash)).toBe(3);
  });

  it('a hash without a running total (kept before there was one) is summed field by field, its stale buckets deleted when charged (not when it refuses), and keeps 30 + 2 fields a listpack', async () => {
    const hash = hashOf();
    const today = Math.floor((await redisNowMs()) / DAY);
    // 29 earlier days still in the window, 3 that left it, and another limit's field that looks alike
    const seeded: Record<string, string> = {};
    for (let d = 1; d <= 29; d++) seeded[`quota:${today - d}`] = '10';
    for (const d of [30, 31, 400]) seeded[`quota:${today - d}`] = '500';
    seeded['quota:x'] = '7';
    seeded['other:20000'] = '9';
    await s.redis.hset(hash, seeded);
    // 29 x 10 = 290 used: a cost of 711 does not fit (1,001), and nothing changes
    const before = await s.redis.hgetall(hash);
    const refused = await limits(hash, rolling('quota', 1000, DAY, 30, 711));
    expect(refused.slice(0, 2)).toEqual([1, 290]);
    expect(await s.redis.hgetall(hash)).toEqual(before);
    // a cost of 710 does: the stale buckets go, the others stay, and the total is written
    const admitted = await limits(hash, [...bucket('req', 5), ...rolling('quota', 1000, DAY, 30, 710)]);
    expect(admitted.slice(0, 5)).toEqual([0, MINUTE_US, 1000, 0, expect.any(Number)]);
    const after = await s.redis.hgetall(hash);
    for (const d of [30, 31, 400]) expect(after[`quota:${today - d}`]).toBeUndefined();
    expect(after[`quota:${today}`]).toBe('710');
    expect(after.quota).toBe(`${today - 29}000001000`);
    expect(after['quota:x']).toBe('7');
    expect(after['other:20000']).toBe('9');
    // 30 buckets, the total, the bucket and the two other fields
    expect(await s.redis.hlen(hash)).toBe(34);
    expect(await s.redis.object('ENCODING', hash)).toBe('listpack');
    // from now on the total decides: the window is full
    expect((await limits(hash, rolling('quota', 1000, DAY, 30, 1))).slice(0, 2)).toEqual([1, 1000]);
  });

  it('rolls the running total forward as buckets leave the window: their units freed, their fields deleted on the next charge', async () => {
    const hash = hashOf();
    // 4 buckets of 250 ms; start just after a bucket begins
    const now = await redisNowMs();
    await sleep(250 - (now % 250) + 5);
    const first = Math.floor((await redisNowMs()) / 250);
    expect((await limits(hash, rolling('quota', 10, 250, 4, 6)))[0]).toBe(0);
    await sleep(250);
    expect((await limits(hash, rolling('quota', 10, 250, 4, 3))).slice(0, 2)).toEqual([0, 9]);
    expect((await limits(hash, rolling('quota', 10, 250, 4, 2))).slice(0, 2)).toEqual([1, 9]);
    // the first bucket (6 units) leaves 1 s after it began: 3 used, the total rolled, the field gone
    await sleep(800);
    const later = await limits(hash, rolling('quota', 10, 250, 4, 2));
    expect(later.slice(0, 2)).toEqual([0, 5]);
    const fields = await s.redis.hgetall(hash);
    expect(fields[`quota:${first}`]).toBeUndefined();
    expect(fields[`quota:${first + 1}`]).toBe('3');
    const current = Math.floor((await redisNowMs()) / 250);
    expect(fields.quota).toBe(`${current - 3}000000005`);
    // every bucket leaves: the window is empty again, one field left besides the total
    await sleep(1100);
    expect((await limits(hash, rolling('quota', 10, 250, 4, 10))).slice(0, 2)).toEqual([0, 10]);
    expect(await s.redis.hlen(hash)).toBe(2);
  });

  it('all or nothing with a GCRA field: a refused quota leaves the bucket uncharged, a refused bucket leaves the quota uncounted', async () => {
    const hash = hashOf();
    expect((await limits(hash, [...bucket('req', 5), ...rolling('quota', 2, DAY, 30, 2)]))[0]).toBe(0);
    const before = await s.redis.hgetall(hash);
    const ttl = await s.redis.pexpiretime(hash);
    const byQuota = await limits(hash, [...bucket('req', 5), ...rolling('quota', 2, DAY, 30)]);
    // the bucket's state before (not charged: less than a minute ahead), the quota's 2 used
    expect([byQuota[0], byQuota[2]]).toEqual([2, 2]);
    expect(byQuota[1]).toBeLessThanOrEqual(MINUTE_US);
    expect(await s.redis.hgetall(hash)).toEqual(before);
    // the bucket refuses (cost 5 on 4 left) while the quota, in another window, would fit
    const byBucket = await limits(hash, [...bucket('req', 5, 5), ...rolling('other', 10, DAY, 30)]);
    expect([byBucket[0], ...byBucket.slice(2)]).toEqual([1, 0, 0, 0]);
    expect(await s.redis.hgetall(hash)).toEqual(before);
    expect(await s.redis.pexpiretime(hash)).toBe(ttl);
  });

  it('the TTL is only ever extended: a long bucket keeps its expiry beside the window, and the window extends a short one', async () => {
    const hash = hashOf();
    // a bucket 40 days ahead (1 token a day, burst 100, cost 40): longer than the 30-day window
    const DAY_US = DAY * 1000;
    const long = ['req', 'g', 100 * DAY_US, 40 * DAY_US];
    await limits(hash, long);
    const far = await s.redis.pexpiretime(hash);
    expect((await limits(hash, rolling('quota', 10, DAY, 30)))[0]).toBe(0);
    expect(await s.redis.pexpiretime(hash)).toBe(far);
    // a short bucket, then the window: the expiry moves out to the newest bucket's exit
    const short = hashOf();
    await limits(short, bucket('req', 5));
    expect(await s.redis.pttl(short)).toBeLessThanOrEqual(60_002);
    await limits(short, rolling('quota', 10, DAY, 30));
    const today = Math.floor((await redisNowMs()) / DAY);
    expect(await s.redis.pexpiretime(short)).toBe((today + 30) * DAY + 1);
    // the bucket alone again: the window's expiry stays
    await limits(short, bucket('req', 5));
    expect(await s.redis.pexpiretime(short)).toBe((today + 30) * DAY + 1);
  });

  it('200 concurrent calls racing for the last 10 units admit exactly 10, the bucket charged for exactly those', async () => {
    const hash = hashOf();
    await limits(hash, [...bucket('req', 1000, 100), ...rolling('quota', 110, DAY, 30, 100)]);
    const replies = await race(s.pool, 200, (c) =>
      run(c, 'identity-limits', [hash], [...bucket('req', 1000), ...rolling('quota', 110, DAY, 30)]),
    );
    expect(replies.filter((r) => r[0] === 0)).toHaveLength(10);
    expect(replies.filter((r) => r[0] === 2)).toHaveLength(190);
    const today = Math.floor((await redisNowMs()) / DAY);
    expect(await s.redis.hget(hash, `quota:${today}`)).toBe('110');
    const [sec] = await s.redis.time();
    expect(Math.round((Number(await s.redis.hget(hash, 'req')) / 1e6 - Number(sec)) / 60)).toBe(110);
  });

  it("a refusal's wait is when the oldest buckets free enough, never early, and matches fixed-window.lua's rolling mode", async () => {
    const hash = hashOf();
    const own = `${freshTag('q')}rolling`;
    // 3 buckets of 300 ms; start just after a bucket begins
    const now = await redisNowMs();
    await sleep(300 - (now % 300) + 5);
    const both = async (cost: number) => {
      const combined = await limits(hash, rolling('quota', 4, 300, 3, cost));
      const alone = await run(s.redis, 'fixed-window', [own], ['rolling', 4, cost, 900, 300]);
      // same decision, used (fixed-window: remaining), wait; resets a few ms apart (two calls)
      expect(combined[0] === 0).toBe(alone[0] === 1);
      expect(Math.max(0, 4 - combined[1]!)).toBe(alone[1]);
      expect(Math.abs(combined[2]! - alone[2]!)).toBeLessThanOrEqual(5);
      expect(Math.abs(combined[3]! - alone[3]!)).toBeLessThanOrEqual(5);
      return combined;
    };
    expect((await both(3)).slice(0, 3)).toEqual([0, 3, 0]);
    await sleep(300);
    expect((await both(1)).slice(0, 3)).toEqual([0, 4, 0]);
    const sent = await redisNowMs();
    const refused = await both(2);
    const answered = await redisNowMs();
    expect(refused.slice(0, 2)).toEqual([1, 4]);
    // the first bucket (3 units) leaves the window 900 ms after it began: ~600 ms from now
    const wait = refused[2]!;
    expect(wait).toBeGreaterThan(400);
    expect(wait).toBeLessThanOrEqual(600);
    expect(refused[3]).toBeGreaterThan(wait);
    // asked again every 10 ms (a refusal writes nothing): admitted once the wait has passed, not before
    let admitted: number[] = [1];
    let at = 0;
    while (admitted[0] !== 0) {
      await sleep(10);
      at = await redisNowMs();
      admitted = await limits(hash, rolling('quota', 4, 300, 3, 2));
    }
    expect(admitted.slice(0, 3)).toEqual([0, 3, 0]);
    expect(at + 2).toBeGreaterThanOrEqual(sent + wait);
    expect(at).toBeLessThanOrEqual(answered + wait + 10);
    // cost > limit never fits
    expect((await limits(hash, rolling('quota', 4, 300, 3, 5))).slice(0, 3)).toEqual([1, 3, -1]);
    expect(await s.redis.hlen(hash)).toBeLessThanOrEqual(3);
  });
});

describe('identity-limits: a rolling refusal reads the oldest buckets only as far as it must', () => {
  // 12 buckets of an hour: the time does not cross a bucket during the test. Each case writes a
  // hash as the script keeps it (the buckets and the running total), then asks for one more unit
  // than the window has room for: nothing is written, and the wait is when enough has left.
  const HOUR_MS = 3_600_000;
  const COUNT = 12;
  async function refusal(counts: Record<number, number>, limit: number, cost: number) {
    const hash = hashOf();
    const current = Math.floor((await redisNowMs()) / HOUR_MS);
    const oldest = current - COUNT + 1;
    const used = Object.values(counts).reduce((a, b) => a + b, 0);
    const fields: string[] = ['quota', `${oldest}${String(used).padStart(9, '0')}`];
    for (const [offset, c] of Object.entries(counts)) fields.push(`quota:${oldest + Number(offset)}`, String(c));
    await s.redis.hset(hash, ...fields);
    await s.redis.pexpire(hash, DAY);
    const before = await s.redis.hgetall(hash);
    const sent = await redisNowMs();
    const reply = await limits(hash, rolling('quota', limit, HOUR_MS, COUNT, cost));
    expect(await s.redis.hgetall(hash)).toEqual(before);
    expect(reply.slice(0, 2)).toEqual([1, used]);
    // wait and reset, in ms from the server's now: the bucket's end, a few ms either side
    const at = (id: number) => (id + COUNT) * HOUR_MS - sent;
    return { wait: reply[2]!, reset: reply[3]!, at, oldest, current };
  }

  it('finds the bucket that frees enough beyond the first 8 read, with today counted', async () => {
    const r = await refusal({ 9: 2, 11: 3 }, 5, 1);
    expect(Math.abs(r.wait - r.at(r.oldest + 9))).toBeLessThanOrEqual(5);
    expect(Math.abs(r.reset - r.at(r.current))).toBeLessThanOrEqual(5);
  });

  it('stops at the oldest bucket when it frees enough', async () => {
    const r = await refusal({ 0: 4, 11: 1 }, 5, 1);
    expect(Math.abs(r.wait - r.at(r.oldest))).toBeLessThanOrEqual(5);
    expect(Math.abs(r.reset - r.at(r.current))).toBeLessThanOrEqual(5);
  });

  it("waits for today's bucket when the older ones free too little", async () => {
    const r = await refusal({ 3: 1, 11: 4 }, 5, 2);
    expect(Math.abs(r.wait - r.at(r.current))).toBeLessThanOrEqual(5);
  });

  it('reads every live bucket when today has not counted: the newest sets the reset', async () => {
    const r = await refusal({ 2: 3, 10: 2 }, 5, 1);
    expect(Math.abs(r.wait - r.at(r.oldest + 2))).toBeLessThanOrEqual(5);
    expect(Math.abs(r.reset - r.at(r.oldest + 10))).toBeLessThanOrEqual(5);
  });

  it('a cost above the limit never fits', async () => {
    const r = await refusal({ 5: 1, 11: 1 }, 5, 6);
    expect(r.wait).toBe(-1);
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

  it('takes the same decisions as the script for a rolling window beside a bucket: used, wait and reset, stale buckets deleted', async () => {
    const { MemoryStore } = await import('../../src/runtime/middleware/memory-store.js');
    const memory = new MemoryStore();
    const hash = hashOf();
    const now = await redisNowMs();
    // buckets of 400 ms, a window of 3; start just after a bucket begins
    await sleep(400 - (now % 400) + 5);
    const args = (cost: number) => [...bucket('req', 20, cost), ...rolling('quota', 5, 400, 3, cost)];
    const compare = async (cost: number) => {
      const sent = performance.now();
      const fromRedis = await limits(hash, args(cost));
      const fromMemory = memory.run('identity-limits', [hash], args(cost));
      // decision, used and the sign of the wait exactly; the times within the ms between the two
      // calls: 5, or the measured gap when a loaded machine made it longer (it failed once so)
      const gap = Math.max(5, Math.ceil(performance.now() - sent));
      expect([fromMemory[0], fromMemory[2], Math.sign(fromMemory[3]!)]).toEqual([fromRedis[0], fromRedis[2], Math.sign(fromRedis[3]!)]);
      expect(Math.abs(fromMemory[3]! - fromRedis[3]!)).toBeLessThanOrEqual(gap);
      expect(Math.abs(fromMemory[4]! - fromRedis[4]!)).toBeLessThanOrEqual(gap);
      return fromRedis;
    };
    for (const cost of [2, 2, 2, 6]) await compare(cost);
    await sleep(400);
    for (const cost of [1, 1]) await compare(cost);
    // the first bucket leaves: both free its 4 units, and both delete it on the next charge
    await sleep(800);
    expect((await compare(3))[0]).toBe(0);
    expect((await compare(1))[0]).toBe(0);
    expect((await compare(1))[0]).toBe(2);
    // the bucket, two live daily fields and the running total
    expect(await s.redis.hlen(hash)).toBe(4);
    expect(memory.run('identity-limits', [hash], args(1))[0]).toBe(2);
    memory.clear();
  });
});

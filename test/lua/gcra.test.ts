import { describe, expect, it } from 'vitest';
import { gcraNumbers, gcraReply } from '../../src/runtime/middleware/store.js';
import { freshTag, gcraArgv, race, run, sleep, useRedis } from './harness.js';

const s = useRedis();
const HOUR = 3_600_000;

/**
 * ARGV as the runtime sends them: tolerance (burst x T), increment (cost x T), interval T, in
 * microseconds (gcraArgv). The script replies with one integer (how far the bucket is ahead,
 * its sign the decision); the runtime's decoder turns it into
 * [allowed, remaining, retry_after_ms, reset_ms].
 */
const gcra = async (key: string, burst: number, rate: number, periodMs: number, cost = 1): Promise<number[]> => {
  const args = gcraArgv(burst, rate, periodMs, cost);
  const raw = (await run(s.redis, 'gcra', [key], args)) as unknown;
  expect(typeof raw).toBe('number');
  return [...gcraReply(raw as number, args[0]!, args[1]!, args[2]!)];
};

describe('gcra.lua', () => {
  it('admits exactly burst, then denies with retry-after of one emission interval', async () => {
    const key = `${freshTag()}api`;
    // 5 burst, 1 token per minute: no measurable refill during the test
    for (let i = 4; i >= 0; i--) {
      const [allowed, remaining, retry, reset] = await gcra(key, 5, 1, 60_000);
      expect([allowed, remaining, retry]).toEqual([1, i, 0]);
      expect(reset).toBeGreaterThan((5 - i) * 60_000 - 1000);
      expect(reset).toBeLessThanOrEqual((5 - i) * 60_000);
    }
    const [allowed, remaining, retry, reset] = await gcra(key, 5, 1, 60_000);
    expect([allowed, remaining]).toEqual([0, 0]);
    expect(retry).toBeGreaterThan(59_000);
    expect(retry).toBeLessThanOrEqual(60_004); // + up to 4 ms: a fast denial rounds up
    expect(reset).toBeGreaterThan(299_000);
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(299_000);
    expect(pttl).toBeLessThanOrEqual(300_000);
  });

  /** How many times each Redis command ran since CONFIG RESETSTAT (scripts' redis.call included). */
  async function commandCalls(): Promise<Record<string, number>> {
    const info = await s.redis.info('commandstats');
    return Object.fromEntries([...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map((m) => [m[1] as string, Number(m[2])]));
  }

  it('a key far past its limit is denied from its TTL alone: PTTL, no TIME, no GET', async () => {
    const key = `${freshTag()}api`;
    for (let i = 0; i < 5; i++) expect((await gcra(key, 5, 1, 60_000))[0]).toBe(1);
    await s.redis.config('RESETSTAT');
    const [allowed, remaining, retry, reset] = await gcra(key, 5, 1, 60_000);
    const calls = await commandCalls();
    expect(calls.pttl).toBe(1);
    expect(calls.time).toBeUndefined();
    expect(calls.get).toBeUndefined();
    // the same answer the clock gives, to the millisecond: one emission interval to wait
    expect([allowed, remaining]).toEqual([0, 0]);
    expect(retry).toBeGreaterThan(59_000);
    expect(retry).toBeLessThanOrEqual(60_004); // + up to 4 ms: a fast denial rounds up
    expect(reset).toBeGreaterThan(299_000);
    expect(reset).toBeLessThanOrEqual(300_004);
  });

  it('a fast denial never tells the client to come back too early', async () => {
    // The expiry clock is whole milliseconds and a fast denial does not read the
    // sub-millisecond part; the retry-after built from them must still cover the exact wait. Checked against the clock read right
    // after the call (later than the script's own clock, so this bound is the weaker one).
    const early: number[] = [];
    for (let i = 0; i < 60; i++) {
      const key = `${freshTag()}api`;
      // burst 2, 10 per second: after two admissions the bucket is 200 ms ahead, so a third
      // request is a fast denial with about 100 ms to wait
      await gcra(key, 2, 10, 1000);
      await gcra(key, 2, 10, 1000);
      const [bs, bus] = (await s.redis.time()) as unknown as [string, string];
      const before = Number(bs) * 1e6 + Number(bus);
      const [allowed, , retry, reset] = await gcra(key, 2, 10, 1000);
      const [[, time], [, pttl], [, v]] = (await s.redis.multi().time().pttl(key).get(key).exec()) as [
        [null, [string, string]],
        [null, number],
        [null, string],
      ];
      const after = Number(time[0]) * 1e6 + Number(time[1]);
      // TAT from the layout: the key expires at TAT rounded up to a millisecond, v short of it
      const tat = (Math.floor(after / 1000) + pttl) * 1000 - Number(v);
      const exactWaitUs = Number(tat) + 100_000 - 200_000 - after;
      expect(allowed).toBe(0);
      if (retry! * 1000 < exactWaitUs || reset! * 1000 < Number(tat) - after) early.push(exactWaitUs - retry! * 1000);
      // and never far too late either: measured from the clock read just before the call
      // (earlier than the script's, so a slow machine only makes this bound looser)
      const waitBeforeUs = Number(tat) + 100_000 - 200_000 - before;
      expect(retry! * 1000 - waitBeforeUs).toBeLessThan(5_000);
      await sleep(Math.random() * 2);
    }
    expect(early, 'microseconds short of the exact wait').toEqual([]);
  });

  it('a request that fits takes the exact path and is admitted, however close the TTL comes', async () => {
    const key = `${freshTag()}api`;
    // 10 burst, 1 per hour: after 9, one token is left and the TTL is about 9 h
    for (let i = 0; i < 9; i++) await gcra(key, 10, 1, HOUR);
    await s.redis.config('RESETSTAT');
    // cost 2 can not fit: a fast denial; cost 1 fits to within 1 ms of the TTL's bound: admitted
    expect((await gcra(key, 10, 1, HOUR, 2)).slice(0, 2)).toEqual([0, 1]);
    expect((await commandCalls()).time).toBeUndefined();
    expect((await gcra(key, 10, 1, HOUR, 1)).slice(0, 3)).toEqual([1, 0, 0]);
    const calls = await commandCalls();
    // (an interval of whole milliseconds, one hour: the value is always 0 and never read)
    expect([calls.pttl, calls.time, calls.get, calls.set]).toEqual([2, undefined, undefined, 1]);
  });

  it('a first request (no key: a full bucket) reads no value and no clock: PTTL, SET', async () => {
    const key = `${freshTag()}api`;
    await s.redis.config('RESETSTAT');
    expect((await gcra(key, 5, 1, 60_000)).slice(0, 3)).toEqual([1, 4, 0]);
    const calls = await commandCalls();
    expect([calls.pttl, calls.time, calls.get, calls.set]).toEqual([1, undefined, undefined, 1]);
  });

  it('keeps TAT in the expiry and its sub-millisecond part (0-999, a shared integer) as the value', async () => {
    const key = `${freshTag()}api`;
    // 3 per 1000 ms: one token is 333,334 us, so the key expires in 334 ms, 666 us past TAT
    await gcra(key, 3, 3, 1000);
    expect(await s.redis.type(key)).toBe('string');
    expect(await s.redis.get(key)).toBe('666');
    expect(await s.redis.object('ENCODING', key)).toBe('int');
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(300);
    expect(pttl).toBeLessThanOrEqual(334);
    // a second token: 666,668 us ahead, expiring in 667 ms, 332 us past TAT
    expect((await gcra(key, 3, 3, 1000)).slice(0, 2)).toEqual([1, 1]);
    expect(Number(await s.redis.get(key))).toBeGreaterThanOrEqual(0);
    expect(Number(await s.redis.get(key))).toBeLessThan(1000);
    // an interval that is not whole milliseconds reads the value back: PTTL, GET, SET
    await s.redis.config('RESETSTAT');
    await gcra(key, 3, 3, 1000);
    const calls = await commandCalls();
    expect([calls.pttl, calls.time, calls.get, calls.set]).toEqual([1, undefined, 1, 1]);
  });

  it('reads the sub-millisecond part for a cost whose increment is whole milliseconds when the interval is not', async () => {
    const key = `${freshTag()}api`;
    // T = 1,000,500 us, tolerance 10 T: a cost-1 request leaves TAT 500 us short of a whole ms (value 500)
    expect(await run(s.redis, 'gcra', [key], [10_005_000, 1_000_500, 1_000_500])).toBe(1_000_500);
    expect(await s.redis.get(key)).toBe('500');
    // cost 2 takes 2,001,000 us, whole ms: the script still parses T, sees it is not, and reads the
    // value, so TAT stays exact (500 us short of a whole ms); skipping the read would have written 0
    await s.redis.config('RESETSTAT');
    const r = (await run(s.redis, 'gcra', [key], [10_005_000, 2_001_000, 1_000_500])) as unknown as number;
    expect(r % 1000).toBe(500);
    expect(r).toBeGreaterThan(2_900_000);
    expect(r).toBeLessThanOrEqual(3_001_500);
    expect((await commandCalls()).get).toBe(1);
    expect(await s.redis.get(key)).toBe('500');
  });

  it('a value that is not a number is an error when it is read, and overwritten when it is not', async () => {
    const key = `${freshTag()}api`;
    await s.redis.set(key, 'not-a-number', 'PX', 60_000);
    await expect(run(s.redis, 'gcra', [key], [5e9, 1, 1])).rejects.toThrow(/arithmetic/);
    // a whole-millisecond interval never reads the value
    expect(await run(s.redis, 'gcra', [key], [5e9, 1_000, 1_000])).toBeGreaterThan(0);
    expect(await s.redis.get(key)).toBe('0');
  });

  it('a key found without a TTL counts as a full bucket and is written back with one', async () => {
    const key = `${freshTag()}api`;
    await s.redis.set(key, '1712345678901234');
    expect((await gcra(key, 5, 1, 60_000)).slice(0, 3)).toEqual([1, 4, 0]);
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
  });

  it('admits a throttled client again after waiting retry_after_ms', async () => {
    const key = `${freshTag()}api`;
    // 10 per second: one token every 100 ms
    expect((await gcra(key, 2, 10, 1000))[0]).toBe(1);
    expect((await gcra(key, 2, 10, 1000))[0]).toBe(1);
    const [allowed, , retry] = await gcra(key, 2, 10, 1000);
    const deniedAt = performance.now();
    expect(allowed).toBe(0);
    expect(retry).toBeGreaterThan(0);
    // one interval (100 ms), plus at most 4 ms when the fast denial rounds the TTL up
    expect(retry).toBeLessThanOrEqual(104);
    // a timer can fire early by the event loop's stale cached time (under load, several ms):
    // wait until retry_after_ms have really passed since the reply arrived
    while (performance.now() - deniedAt < retry!) await sleep(Math.max(1, Math.ceil(retry! - (performance.now() - deniedAt))));
    const [again, remaining] = await gcra(key, 2, 10, 1000);
    expect([again, remaining]).toEqual([1, 0]);
  });

  it('the key vanishes once the bucket is full again', async () => {
    const key = `${freshTag()}api`;
    await gcra(key, 3, 20, 1000); // one token spent, refills in 50 ms
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(50);
    await sleep(80);
    expect(await s.redis.exists(key)).toBe(0);
    const [allowed, remaining] = await gcra(key, 3, 20, 1000);
    expect([allowed, remaining]).toEqual([1, 2]);
  });

  it('weights requests by cost: cost 5 on burst 10 admits 2', async () => {
    const key = `${freshTag()}search`;
    expect(await gcra(key, 10, 1, HOUR, 5)).toEqual([1, 5, 0, expect.any(Number)]);
    expect((await gcra(key, 10, 1, HOUR, 5)).slice(0, 3)).toEqual([1, 0, 0]);
    const [allowed, remaining, retry] = await gcra(key, 10, 1, HOUR, 5);
    expect([allowed, remaining]).toEqual([0, 0]);
    expect(retry).toBeGreaterThan(5 * HOUR - 2000);
    // a cheap request does not fit either, and a denial takes nothing
    expect((await gcra(key, 10, 1, HOUR, 1))[0]).toBe(0);
  });

  it('denies cost > burst with retry_after -1 (never fits) and writes nothing', async () => {
    const key = `${freshTag()}export`;
    const [allowed, remaining, retry] = await gcra(key, 10, 5, 1000, 11);
    expect([allowed, remaining, retry]).toEqual([0, 10, -1]);
    expect(await s.redis.exists(key)).toBe(0);
  });

  it('counts whole tokens exactly for rates that are not a whole number of microseconds', async () => {
    const key = `${freshTag()}api`;
    // 3 per second: interval 333,334 us
    const remaining: number[] = [];
    for (let i = 0; i < 11; i++) remaining.push((await gcra(key, 10, 3, 1000))[1]!);
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]);
  });

  it('200 concurrent calls racing for the last 10 tokens admit exactly 10', async () => {
    const key = `${freshTag()}api`;
    expect((await gcra(key, 110, 1, HOUR, 100))[1]).toBe(10);
    const replies = (await race(s.pool, 200, (c) => run(c, 'gcra', [key], gcraArgv(110, 1, HOUR, 1)))) as unknown as number[];
    expect(replies.filter((r) => r > 0)).toHaveLength(10);
    expect(replies.filter((r) => r < 0)).toHaveLength(190);
    expect((await gcra(key, 110, 1, HOUR))[0]).toBe(0);
  });

  it('rejects malformed arguments with a clear error', async () => {
    const key = `${freshTag()}api`;
    await expect(run(s.redis, 'gcra', [key], [0, 1000, 1000])).rejects.toThrow(/gcra\.lua: want ARGV/);
    await expect(run(s.redis, 'gcra', [key], [5000, 0, 1000])).rejects.toThrow(/gcra\.lua: want ARGV/);
    // the interval is read only when the sub-millisecond part matters, and then must be a number
    await run(s.redis, 'gcra', [key], [5e9, 1e9, 1e9]);
    await expect(run(s.redis, 'gcra', [key], [5e9, 1e9, 'x'])).rejects.toThrow(/arithmetic/);
    await expect(run(s.redis, 'gcra', [key], [])).rejects.toThrow(/gcra\.lua: want 3 ARGV/);
    await expect(run(s.redis, 'gcra', [key], [5000, 1000])).rejects.toThrow(/gcra\.lua: want 3 ARGV/);
    await expect(run(s.redis, 'gcra', [key], ['x', 1000, 1000])).rejects.toThrow(/arithmetic/);
    // the runtime refuses a rule whose bucket has no whole-microsecond form before any call
    expect(() => gcraNumbers(0, 1, 1000)).toThrow(RangeError);
    expect(() => gcraNumbers(5, 0, 1000)).toThrow(RangeError);
  });
});

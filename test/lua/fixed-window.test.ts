import { describe, expect, it } from 'vitest';
import { calendarPeriod } from '../../src/runtime/middleware/calendar.js';
import { freshTag, race, run, sleep, useRedis, type Client } from './harness.js';

const s = useRedis();
const DAY = 86_400_000;

/** Calendar mode. ARGV: 'calendar', limit, cost, window_end_ms, slack_ms. */
const calendar = (key: string, limit: number, cost: number, endMs: number, client: Client = s.redis) =>
  run(client, 'fixed-window', [key], ['calendar', limit, cost, endMs, 60_000]);

/** Rolling mode. ARGV: 'rolling', limit, cost, window_ms, bucket_ms. */
const rolling = (key: string, limit: number, cost: number, windowMs: number, bucketMs: number) =>
  run(s.redis, 'fixed-window', [key], ['rolling', limit, cost, windowMs, bucketMs]);

/** Wall-clock parts of an instant in an IANA time zone: an independent check of the window end. */
function zonedParts(epochMs: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(epochMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

/** What the caller of fixed-window.lua (the runtime's limiter) does for a calendar month in the plan's time zone. */
function calendarMonth(nowMs: number, timeZone: string): { id: string; endMs: number } {
  const p = calendarPeriod(nowMs, 'month', timeZone);
  return { id: p.id, endMs: p.end };
}

async function redisNowMs(): Promise<number> {
  const [sec, usec] = await s.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

describe('fixed-window.lua, calendar mode', () => {
  it('admits exactly the limit in the period, then denies until the period ends', async () => {
    const now = await redisNowMs();
    const end = now + DAY;
    const key = `${freshTag('q')}day:1`;
    for (let i = 2; i >= 0; i--) expect((await calendar(key, 3, 1, end)).slice(0, 3)).toEqual([1, i, 0]);
    const [allowed, remaining, retry, reset] = await calendar(key, 3, 1, end);
    expect([allowed, remaining]).toEqual([0, 0]);
    expect(retry).toBeGreaterThan(DAY - 2000);
    expect(retry).toBeLessThanOrEqual(DAY);
    expect(reset).toBe(retry);
    expect(await s.redis.get(key)).toBe('3');
  });

  it('follows the calendar month of the plan time zone (period id in the key, expiry at its end)', async () => {
    for (const timeZone of ['America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe']) {
      const now = await redisNowMs();
      const month = calendarMonth(now, timeZone);
      // the helper's end really is local midnight on the 1st
      expect(zonedParts(month.endMs, timeZone)).toMatchObject({ day: 1, hour: 0, minute: 0 });
      expect(month.endMs).toBeGreaterThan(now);
      const key = `${freshTag('q:tenant42')}month:${month.id}`;
      const [allowed, remaining, retry, reset] = await calendar(key, 1000, 10, month.endMs);
      expect([allowed, remaining, retry]).toEqual([1, 990, 0]);
      expect(Math.abs(reset! - (month.endMs - now))).toBeLessThan(1000);
      const pexpireAt = await s.redis.pexpiretime(key);
      expect(pexpireAt).toBe(month.endMs + 60_000);
    }
  });

  it('starts a fresh counter when the caller moves to the next period', async () => {
    const tag = freshTag('q');
    const end = (await redisNowMs()) + 400;
    expect((await calendar(`${tag}p:1`, 2, 1, end))[0]).toBe(1);
    expect((await calendar(`${tag}p:1`, 2, 1, end))[0]).toBe(1);
    const [allowed, , retry] = await calendar(`${tag}p:1`, 2, 1, end);
    expect(allowed).toBe(0);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(400);
    await sleep(retry! + 5);
    // the caller now computes period 2
    expect(await calendar(`${tag}p:2`, 2, 1, end + 400)).toEqual([1, 1, 0, expect.any(Number)]);
  });

  it('never sets an expiry in the past when the caller is behind the Redis clock', async () => {
    const key = `${freshTag('q')}p:old`;
    const stale = (await redisNowMs()) - 5000;
    const [allowed, , , reset] = await calendar(key, 5, 1, stale);
    expect([allowed, reset]).toEqual([1, 0]);
    expect(await s.redis.pttl(key)).toBeGreaterThan(59_000);
  });

  it('weights by cost: cost 5 on a quota of 10 admits 2; cost > limit never fits', async () => {
    const end = (await redisNowMs()) + DAY;
    const key = `${freshTag('q')}p:1`;
    expect((await calendar(key, 10, 5, end)).slice(0, 2)).toEqual([1, 5]);
    expect((await calendar(key, 10, 5, end)).slice(0, 2)).toEqual([1, 0]);
    expect((await calendar(key, 10, 5, end)).slice(0, 2)).toEqual([0, 0]);
    expect(await s.redis.get(key)).toBe('10');
    const fresh = `${freshTag('q')}p:1`;
    expect((await calendar(fresh, 10, 11, end)).slice(0, 3)).toEqual([0, 10, -1]);
    expect(await s.redis.exists(fresh)).toBe(0);
  });

  it('200 concurrent calls racing for the last 10 units admit exactly 10', async () => {
    const end = (await redisNowMs()) + DAY;
    const key = `${freshTag('q')}p:1`;
    expect((await calendar(key, 110, 100, end))[1]).toBe(10);
    const replies = await race(s.pool, 200, (c) => calendar(key, 110, 1, end, c));
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(10);
    expect(await s.redis.get(key)).toBe('110');
  });
});

describe('fixed-window.lua, rolling mode', () => {
  it('counts usage per bucket and frees it as buckets leave the window', async () => {
    const key = `${freshTag('q')}rolling`;
    // window of 3 buckets of 300 ms; wait for the start of a bucket to keep timings clear
    const now = await redisNowMs();
    await sleep(300 - (now % 300) + 5);
    expect((await rolling(key, 4, 3, 900, 300)).slice(0, 3)).toEqual([1, 1, 0]);
    await sleep(300);
    expect((await rolling(key, 4, 1, 900, 300)).slice(0, 3)).toEqual([1, 0, 0]);
    const [allowed, remaining, retry, reset] = await rolling(key, 4, 2, 900, 300);
    expect([allowed, remaining]).toEqual([0, 0]);
    // the first bucket (3 units) leaves the window 900 ms after it began, ~600 ms from now
    expect(retry).toBeGreaterThan(400);
    expect(retry).toBeLessThanOrEqual(600);
    expect(reset).toBeGreaterThan(retry!);
    expect(await s.redis.hlen(key)).toBe(2);
    await sleep(retry! + 5);
    expect((await rolling(key, 4, 2, 900, 300)).slice(0, 3)).toEqual([1, 1, 0]);
    // the stale bucket was deleted; at most window/bucket fields are ever kept
    expect(await s.redis.hlen(key)).toBeLessThanOrEqual(2);
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(600);
    expect(pttl).toBeLessThanOrEqual(900);
  });

  it('denies cost > limit with -1 and supports day buckets over 30 days', async () => {
    const key = `${freshTag('q')}rolling30d`;
    expect((await rolling(key, 1000, 1001, 30 * DAY, DAY)).slice(0, 3)).toEqual([0, 1000, -1]);
    const [allowed, remaining, retry, reset] = await rolling(key, 1000, 250, 30 * DAY, DAY);
    expect([allowed, remaining, retry]).toEqual([1, 750, 0]);
    expect(reset).toBeGreaterThan(29 * DAY);
    expect(reset).toBeLessThanOrEqual(30 * DAY);
    expect(await s.redis.pttl(key)).toBeGreaterThan(29 * DAY);
  });

  it('rejects a bad mode with a clear error', async () => {
    await expect(run(s.redis, 'fixed-window', ['rl:{q}:x'], ['weekly', 1, 1])).rejects.toThrow(/must be 'calendar' or 'rolling'/);
  });
});

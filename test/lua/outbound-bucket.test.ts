import { describe, expect, it } from 'vitest';
import { freshTag, race, run, sleep, useRedis, type Client } from './harness.js';

const s = useRedis();

// the provider allows 10 calls per second; we share 10 per second at burst 2 in these tests
const BURST = 2;
const RATE = 10;
const PERIOD = 1000;

/** ARGV: 'reserve', burst, rate, period_ms, cost, max_wait_ms. */
const reserve = (key: string, maxWaitMs: number, cost = 1, client: Client = s.redis) =>
  run(client, 'outbound-bucket', [key], ['reserve', BURST, RATE, PERIOD, cost, maxWaitMs]);

/** ARGV: 'pause', burst, rate, period_ms, pause_ms. */
const pause = (key: string, pauseMs: number) => run(s.redis, 'outbound-bucket', [key], ['pause', BURST, RATE, PERIOD, pauseMs]);

describe('outbound-bucket.lua', () => {
  it('books slots in order: the burst now, then one per interval', async () => {
    const key = `${freshTag('out:stripe')}bucket`;
    expect((await reserve(key, 1000)).slice(0, 3)).toEqual([1, 0, 1]);
    expect((await reserve(key, 1000)).slice(0, 3)).toEqual([1, 0, 0]);
    const third = await reserve(key, 1000);
    expect(third[0]).toBe(1);
    expect(third[1]).toBeGreaterThan(50);
    expect(third[1]).toBeLessThanOrEqual(100);
    // the next slot is one interval later (less the time between the two calls)
    const fourth = await reserve(key, 1000);
    expect(fourth[1]! - third[1]!).toBeGreaterThan(50);
    expect(fourth[1]! - third[1]!).toBeLessThanOrEqual(101);
  });

  it('refuses (and books nothing) when the wait would pass max_wait_ms', async () => {
    const key = `${freshTag('out:stripe')}bucket`;
    await reserve(key, 0);
    await reserve(key, 0);
    const before = await s.redis.get(key);
    const [reserved, wait] = await reserve(key, 50);
    expect(reserved).toBe(0);
    expect(wait).toBeGreaterThan(50);
    expect(await s.redis.get(key)).toBe(before);
    // waiting that long really frees a slot
    await sleep(wait! + 5);
    expect((await reserve(key, 0)).slice(0, 2)).toEqual([1, 0]);
  });

  it('queues concurrent callers into distinct slots, one interval apart', async () => {
    const key = `${freshTag('out:mail')}bucket`;
    const replies = await race(s.pool, 20, (c) => reserve(key, 60_000, 1, c));
    expect(replies.every((r) => r[0] === 1)).toBe(true);
    const waits = replies.map((r) => r[1]!).sort((a, b) => a - b);
    expect(waits.slice(0, BURST + 1)).toEqual([0, 0, expect.any(Number)]);
    expect(waits[BURST]).toBeGreaterThan(50);
    // 18 slots after the burst: the last one ~1.8 s out, the next free one ~1.9 s out
    expect(waits.at(-1)).toBeGreaterThan(1700);
    expect(waits.at(-1)).toBeLessThanOrEqual(1800);
    const [, next] = await reserve(key, 0);
    expect(next).toBeGreaterThan(1800);
    expect(next).toBeLessThanOrEqual(1900);
  });

  it('pauses on a provider 429 until its Retry-After, then restarts without a burst', async () => {
    const key = `${freshTag('out:stripe')}bucket`;
    const [ok, paused] = await pause(key, 300);
    expect(ok).toBe(1);
    expect(paused).toBeGreaterThan(250);
    expect(paused).toBeLessThanOrEqual(300);
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    // nothing before the pause ends
    const [reserved, wait] = await reserve(key, 0);
    expect(reserved).toBe(0);
    expect(wait).toBeGreaterThan(250);
    // a queued caller gets the first slot at the end of the pause, the next one interval later
    const first = await reserve(key, 1000);
    const second = await reserve(key, 1000);
    expect(first[0]).toBe(1);
    expect(Math.abs(first[1]! - wait!)).toBeLessThanOrEqual(50);
    expect(second[1]! - first[1]!).toBeGreaterThan(50);
    expect(second[1]! - first[1]!).toBeLessThanOrEqual(101);
    await sleep(first[1]! + 5);
    // bucket is empty after the pause: the next free slot is the third, not a burst
    const [now, nextWait] = await reserve(key, 0);
    expect(now).toBe(0);
    expect(nextWait).toBeGreaterThan(100);
  });

  it('a shorter pause never shortens a longer one', async () => {
    const key = `${freshTag('out:stripe')}bucket`;
    await pause(key, 2000);
    const [, wait] = await pause(key, 100);
    expect(wait).toBeGreaterThan(1900);
  });

  it('weights by cost and reports -1 when cost > burst', async () => {
    const key = `${freshTag('out:batch')}bucket`;
    expect((await reserve(key, 0, 2)).slice(0, 3)).toEqual([1, 0, 0]);
    const [reserved, wait] = await reserve(key, 0, 2);
    expect(reserved).toBe(0);
    expect(wait).toBeGreaterThan(150);
    expect(wait).toBeLessThanOrEqual(200);
    expect((await reserve(`${freshTag('out:batch')}bucket`, 0, 3)).slice(0, 2)).toEqual([0, -1]);
  });

  it('rejects a bad mode with a clear error', async () => {
    await expect(run(s.redis, 'outbound-bucket', ['rl:{out:x}:bucket'], ['wait', BURST, RATE, PERIOD])).rejects.toThrow(
      /must be 'reserve' or 'pause'/,
    );
  });
});

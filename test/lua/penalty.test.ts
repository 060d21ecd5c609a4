import { describe, expect, it } from 'vitest';
import { freshTag, race, run, sleep, useRedis } from './harness.js';

const s = useRedis();

/** KEYS: counter, box; ARGV: op, refusals, window_ms, block_ms. */
const penalty = (tag: string, op: 'check' | 'strike', refusals: number, windowMs: number, blockMs: number) =>
  run(s.redis, 'penalty', [`${tag}strikes`, `${tag}box`], [op, refusals, windowMs, blockMs]);

describe('penalty.lua', () => {
  it('shuts the box at the nth refusal, reports the time left, and deletes the counter', async () => {
    const tag = freshTag();
    expect(await penalty(tag, 'check', 3, 60_000, 30_000)).toEqual([0, 0]);
    expect(await penalty(tag, 'strike', 3, 60_000, 30_000)).toEqual([0, 0]);
    const counterTtl = await s.redis.pttl(`${tag}strikes`);
    expect(counterTtl).toBeGreaterThan(59_000);
    expect(counterTtl).toBeLessThanOrEqual(60_000);
    expect(await penalty(tag, 'strike', 3, 60_000, 30_000)).toEqual([0, 0]);
    expect(await penalty(tag, 'strike', 3, 60_000, 30_000)).toEqual([1, 30_000]);
    expect(await s.redis.exists(`${tag}strikes`)).toBe(0);
    const [boxed, left] = await penalty(tag, 'check', 3, 60_000, 30_000);
    expect(boxed).toBe(1);
    expect(left).toBeGreaterThan(29_000);
    expect(left).toBeLessThanOrEqual(30_000);
    // a refusal while in the box counts nothing: it reports the box
    expect((await penalty(tag, 'strike', 3, 60_000, 30_000))[0]).toBe(1);
    expect(await s.redis.exists(`${tag}strikes`)).toBe(0);
  });

  it('opens the box when its time is up, and forgets refusals older than the window', async () => {
    const tag = freshTag();
    expect(await penalty(tag, 'strike', 1, 1_000, 50)).toEqual([1, 50]);
    await sleep(80);
    expect(await penalty(tag, 'check', 1, 1_000, 50)).toEqual([0, 0]);
    const slow = freshTag();
    expect(await penalty(slow, 'strike', 2, 50, 10_000)).toEqual([0, 0]);
    await sleep(80);
    expect(await penalty(slow, 'strike', 2, 50, 10_000)).toEqual([0, 0]);
  });

  it('counts concurrent refusals exactly: n at once shut the box once', async () => {
    const tag = freshTag();
    const replies = await race(s.pool, 10, (client) =>
      run(client, 'penalty', [`${tag}strikes`, `${tag}box`], ['strike', 10, 60_000, 30_000]),
    );
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(1);
    expect(await s.redis.exists(`${tag}box`)).toBe(1);
  });
});

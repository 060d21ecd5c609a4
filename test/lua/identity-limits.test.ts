import { describe, expect, it } from 'vitest';
import { freshTag, race, run, useRedis } from './harness.js';

const s = useRedis();
const HOUR = 3_600_000;

/** ARGV per key: 'g', burst, rate, period_ms, cost | 'w', limit, window_end_ms, slack_ms, cost. */
const limits = (keys: string[], args: (string | number)[]) => run(s.redis, 'identity-limits', keys, args);

describe('identity-limits.lua', () => {
  it('charges every limit of one identity in one call and replies with each limit state', async () => {
    const tag = freshTag();
    const bucket = `${tag}req`;
    const quota = `${tag}quota:2026-03`;
    const end = Date.now() + HOUR;
    const reply = await limits([bucket, quota], ['g', 5, 1, 60_000, 1, 'w', 100, end, 60_000, 3]);
    expect(reply[0]).toBe(0);
    // the bucket is one interval (60 s) ahead, the quota has used 3
    expect(reply[1]).toBeGreaterThan(59_000_000);
    expect(reply[1]).toBeLessThanOrEqual(60_000_000);
    expect(reply[2]).toBe(3);
    expect(await s.redis.get(quota)).toBe('3');
    const pttl = await s.redis.pttl(bucket);
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    const quotaTtl = await s.redis.pttl(quota);
    expect(quotaTtl).toBeGreaterThan(HOUR + 59_000);
    expect(quotaTtl).toBeLessThanOrEqual(HOUR + 60_000);
  });

  it('all or nothing: when one limit refuses, no limit is charged, and each state is the one before', async () => {
    const tag = freshTag();
    const bucket = `${tag}req`;
    const quota = `${tag}quota:2026-03`;
    const end = Date.now() + HOUR;
    expect((await limits([bucket, quota], ['g', 5, 1, 60_000, 1, 'w', 2, end, 60_000, 2]))[0]).toBe(0);
    const before = await s.redis.get(bucket);
    // the quota is spent: it refuses (index 2), the bucket is not charged
    const reply = await limits([bucket, quota], ['g', 5, 1, 60_000, 1, 'w', 2, end, 60_000, 1]);
    expect(reply[0]).toBe(2);
    expect(reply[2]).toBe(2);
    expect(reply[1]).toBeLessThanOrEqual(60_000_000);
    expect(await s.redis.get(bucket)).toBe(before);
    expect(await s.redis.get(quota)).toBe('2');
    // the bucket refuses (cost 5 on 4 tokens left): the quota is not charged either
    const other = `${tag}quota:2026-04`;
    const denied = await limits([bucket, other], ['g', 5, 1, 60_000, 5, 'w', 10, end, 60_000, 1]);
    expect(denied[0]).toBe(1);
    expect(await s.redis.exists(other)).toBe(0);
  });

  it('200 concurrent calls racing for the last 10 units admit exactly 10, with both limits charged alike', async () => {
    const tag = freshTag();
    const bucket = `${tag}req`;
    const quota = `${tag}quota:2026-03`;
    const end = Date.now() + HOUR;
    await limits([bucket, quota], ['g', 110, 1, HOUR, 100, 'w', 1000, end, 60_000, 100]);
    const replies = await race(s.pool, 200, (c) =>
      run(c, 'identity-limits', [bucket, quota], ['g', 110, 1, HOUR, 1, 'w', 1000, end, 60_000, 1]),
    );
    expect(replies.filter((r) => r[0] === 0)).toHaveLength(10);
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(190);
    expect(await s.redis.get(quota)).toBe('110');
  });

  it('a calendar window that has ended still gets a TTL in the future', async () => {
    const key = `${freshTag()}quota:old`;
    expect((await limits([key], ['w', 5, Date.now() - HOUR, 60_000, 1]))[0]).toBe(0);
    const pttl = await s.redis.pttl(key);
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
  });

  it('rejects malformed arguments with a clear error', async () => {
    const key = `${freshTag()}x`;
    await expect(limits([key], ['g', 5, 1, 60_000])).rejects.toThrow(/5 ARGV per key/);
    await expect(limits([key], ['x', 5, 1, 60_000, 1])).rejects.toThrow(/kind must be/);
    await expect(limits([key], ['g', 0, 1, 60_000, 1])).rejects.toThrow(/burst>=1/);
    await expect(limits([key], ['w', 0, 1, 60_000, 1])).rejects.toThrow(/limit>=1/);
  });
});

describe("identity-limits: the runtime's in-process twin", () => {
  it('takes the same decisions and replies with the same limit states', async () => {
    const { MemoryStore } = await import('../../src/runtime/middleware/memory-store.js');
    const memory = new MemoryStore();
    const tag = freshTag();
    const keys = [`${tag}req`, `${tag}quota:2026-03`];
    const end = Date.now() + HOUR;
    const interval = 60_000_000;
    // a bucket of 4 (1 per minute), a quota of 6; costs 1, 2, 1, 3, 1, 1, 1
    const shape = (r: readonly number[]) => [r[0], Math.floor((4 * interval - (r[1] ?? 0)) / interval), r[2]];
    for (const cost of [1, 2, 1, 3, 1, 1, 1]) {
      const args = ['g', 4, 1, 60_000, cost, 'w', 6, end, 60_000, cost];
      const fromRedis = await limits(keys, args);
      const fromMemory = memory.run('identity-limits', keys, args);
      expect(shape(fromMemory)).toEqual(shape(fromRedis));
    }
    memory.clear();
  });
});

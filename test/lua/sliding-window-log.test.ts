import { describe, expect, it } from 'vitest';
import { freshTag, race, run, sleep, useRedis, type Client } from './harness.js';

const s = useRedis();
const MINUTE = 60_000;

interface Log {
  key: string;
  limit: number;
  windowMs: number;
}

/** KEYS = the logs; ARGV = limit, window_ms per log, then cost. */
const attempt = (logs: readonly Log[], cost = 1, client: Client = s.redis) =>
  run(
    client,
    'sliding-window-log',
    logs.map((l) => l.key),
    [...logs.flatMap((l) => [l.limit, l.windowMs]), cost],
  );

describe('sliding-window-log.lua, one key', () => {
  it('admits exactly the limit, then denies; the denial names the key', async () => {
    const log = { key: `${freshTag('auth')}user:alice`, limit: 3, windowMs: MINUTE };
    for (let i = 2; i >= 0; i--) {
      expect(await attempt([log])).toEqual([1, i, 0, MINUTE, 0]);
    }
    const [allowed, remaining, retry, reset, deniedBy] = await attempt([log]);
    expect([allowed, remaining, deniedBy]).toEqual([0, 0, 1]);
    expect(retry).toBeGreaterThan(MINUTE - 1000);
    expect(retry).toBeLessThanOrEqual(MINUTE);
    expect(reset).toBeGreaterThanOrEqual(retry!);
    expect(await s.redis.zcard(log.key)).toBe(3);
    const pttl = await s.redis.pttl(log.key);
    expect(pttl).toBeGreaterThan(MINUTE - 1000);
    expect(pttl).toBeLessThanOrEqual(MINUTE);
  });

  it('admits again once the oldest attempt leaves the window (retry_after_ms is exact)', async () => {
    const log = { key: `${freshTag('auth')}user:bob`, limit: 2, windowMs: 300 };
    expect((await attempt([log]))[0]).toBe(1);
    await sleep(100);
    expect((await attempt([log]))[0]).toBe(1);
    const [allowed, , retry] = await attempt([log]);
    expect(allowed).toBe(0);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(200);
    await sleep(retry! + 5);
    const [again, remaining] = await attempt([log]);
    expect([again, remaining]).toEqual([1, 0]);
    // only the first attempt has left; the second still counts
    expect(await s.redis.zcard(log.key)).toBe(2);
  });

  it('does not record denied attempts, so hammering does not extend the lockout', async () => {
    const log = { key: `${freshTag('auth')}user:carol`, limit: 2, windowMs: 400 };
    await attempt([log]);
    await attempt([log]);
    const first = await attempt([log]);
    expect(first[0]).toBe(0);
    for (let i = 0; i < 30; i++) expect((await attempt([log]))[0]).toBe(0);
    expect(await s.redis.zcard(log.key)).toBe(2);
    await sleep(first[2]! + 5);
    expect((await attempt([log]))[0]).toBe(1);
  });

  it('weights by cost: cost 5 on a limit of 10 admits 2; cost > limit never fits', async () => {
    const log = { key: `${freshTag('auth')}ip:10.0.0.1`, limit: 10, windowMs: MINUTE };
    expect((await attempt([log], 5)).slice(0, 3)).toEqual([1, 5, 0]);
    expect((await attempt([log], 5)).slice(0, 3)).toEqual([1, 0, 0]);
    expect((await attempt([log], 5)).slice(0, 2)).toEqual([0, 0]);
    expect(await s.redis.zcard(log.key)).toBe(10);
    const other = { key: `${freshTag('auth')}ip:10.0.0.2`, limit: 10, windowMs: MINUTE };
    expect(await attempt([other], 11)).toEqual([0, 10, -1, 0, 1]);
    expect(await s.redis.exists(other.key)).toBe(0);
  });

  it('keeps attempts made in the same microsecond apart', async () => {
    const log = { key: `${freshTag('auth')}user:dave`, limit: 50, windowMs: MINUTE };
    expect((await attempt([log], 7))[0]).toBe(1);
    expect(await s.redis.zcard(log.key)).toBe(7);
    const members = await s.redis.zrange(log.key, '0', '-1');
    expect(new Set(members).size).toBe(7);
  });

  it('200 concurrent attempts racing for the last 10 slots admit exactly 10', async () => {
    const log = { key: `${freshTag('auth')}ip:10.0.0.3`, limit: 110, windowMs: MINUTE };
    expect((await attempt([log], 100))[1]).toBe(10);
    const replies = await race(s.pool, 200, (c) => attempt([log], 1, c));
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(10);
    expect(await s.redis.zcard(log.key)).toBe(110);
  });

  it('rejects malformed arguments with a clear error', async () => {
    const key = `${freshTag('auth')}user:eve`;
    await expect(run(s.redis, 'sliding-window-log', [key], [0, 1000, 1])).rejects.toThrow(
      /sliding-window-log\.lua: bad limit\/window for key 1/,
    );
    await expect(run(s.redis, 'sliding-window-log', [], [1])).rejects.toThrow(/want 1\+ keys/);
  });
});

describe('sliding-window-log.lua, dual keys (per-username + per-IP, one hash tag)', () => {
  it('stops many usernames from one IP with the IP key', async () => {
    const tag = freshTag('auth:login');
    const ip = { key: `${tag}ip:203.0.113.7`, limit: 20, windowMs: MINUTE };
    const results = [];
    for (let i = 0; i < 30; i++) {
      const user = { key: `${tag}user:victim${i}`, limit: 5, windowMs: MINUTE };
      results.push(await attempt([user, ip]));
    }
    expect(results.slice(0, 20).every((r) => r[0] === 1)).toBe(true);
    for (const r of results.slice(20)) {
      expect(r[0]).toBe(0);
      expect(r[4]).toBe(2); // the IP key denied
    }
    expect(await s.redis.zcard(ip.key)).toBe(20);
    // denied attempts spent nothing on the usernames they targeted
    expect(await s.redis.exists(`${tag}user:victim25`)).toBe(0);
  });

  it('stops one username attacked from many IPs with the username key', async () => {
    const tag = freshTag('auth:login');
    const user = { key: `${tag}user:admin`, limit: 5, windowMs: MINUTE };
    const results = [];
    for (let i = 0; i < 12; i++) {
      const ip = { key: `${tag}ip:198.51.100.${i}`, limit: 20, windowMs: MINUTE };
      results.push(await attempt([user, ip]));
    }
    expect(results.slice(0, 5).every((r) => r[0] === 1)).toBe(true);
    for (const r of results.slice(5)) expect([r[0], r[4]]).toEqual([0, 1]);
    expect(await s.redis.zcard(user.key)).toBe(5);
    // the IPs whose attempts were denied were not charged
    expect(await s.redis.exists(`${tag}ip:198.51.100.7`)).toBe(0);
  });

  it('reports the minimum remaining and the binding key', async () => {
    const tag = freshTag('auth:login');
    const user = { key: `${tag}user:frank`, limit: 3, windowMs: MINUTE };
    const ip = { key: `${tag}ip:192.0.2.1`, limit: 2, windowMs: 500 };
    expect(await attempt([user, ip])).toEqual([1, 1, 0, MINUTE, 0]);
    expect(await attempt([user, ip])).toEqual([1, 0, 0, MINUTE, 0]);
    const [allowed, , retry, , deniedBy] = await attempt([user, ip]);
    expect([allowed, deniedBy]).toEqual([0, 2]);
    expect(retry).toBeLessThanOrEqual(500);
    await sleep(retry! + 5);
    // the IP window has passed; the username still has one attempt left
    expect(await attempt([user, ip])).toEqual([1, 0, 0, MINUTE, 0]);
    const [, , retryUser, , deniedByUser] = await attempt([user, ip]);
    expect(deniedByUser).toBe(1);
    expect(retryUser).toBeGreaterThan(MINUTE - 2000);
  });

  it('works with the IP key alone when there is no username', async () => {
    const tag = freshTag('auth:login');
    const ip = { key: `${tag}ip:192.0.2.9`, limit: 1, windowMs: MINUTE };
    expect((await attempt([ip])).slice(0, 2)).toEqual([1, 0]);
    expect((await attempt([ip]))[4]).toBe(1);
  });

  it('200 concurrent attempts on both keys admit exactly 10', async () => {
    const tag = freshTag('auth:login');
    const user = { key: `${tag}user:race`, limit: 110, windowMs: MINUTE };
    const ip = { key: `${tag}ip:192.0.2.50`, limit: 500, windowMs: MINUTE };
    await attempt([user, ip], 100);
    const replies = await race(s.pool, 200, (c) => attempt([user, ip], 1, c));
    expect(replies.filter((r) => r[0] === 1)).toHaveLength(10);
    expect(await s.redis.zcard(user.key)).toBe(110);
    expect(await s.redis.zcard(ip.key)).toBe(110);
  });
});

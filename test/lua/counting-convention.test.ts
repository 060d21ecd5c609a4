/**
 * The one way every count in the document takes a stretch of time (the worst-case table, the
 * migration from existing limiters): from one moment up to, not including, the moment one period
 * later. Checked against the shipped scripts on a real Redis, on the Redis clock itself (TIME, in
 * microseconds): the sliding log admits its limit and no more within such a stretch (the next
 * attempt passes exactly one window after the first), and a GCRA bucket passes its burst plus the
 * rate times the period (the token due one period after the first request comes back up to 1 ms
 * early, since the bucket keeps time in whole milliseconds), never more: admittedWithin's figures.
 */
import { describe, expect, it } from 'vitest';
import { admittedWithin } from '../../src/design/algorithms.js';
import { luaScript } from '../../src/lua.js';
import { freshTag, gcraArgv, run, useRedis } from './harness.js';

const s = useRedis();

/** The script run as a function, then TIME: its reply and when Redis ran it, in microseconds. */
function timed(name: 'gcra'): string {
  return `local function script()\n${luaScript(name).source}\nend\nlocal r = script()\nlocal t = redis.call('TIME')\nreturn {r, t[1] * 1000000 + t[2]}`;
}

describe('a stretch of one period: from a moment up to, not including, one period later', () => {
  it('the sliding log: its limit within the stretch, the next attempt exactly one window after the first', async () => {
    const [limit, windowMs] = [3, 300];
    const figure = admittedWithin(
      { algorithm: 'sliding-window-log', rate: { requests: limit, periodSeconds: windowMs / 1000 }, layer: 'middleware', burst: null },
      windowMs / 1000,
    );
    expect(figure).toBe(limit);
    const key = `${freshTag('conv')}log`;
    const scoresOf = async (): Promise<number[]> =>
      (await s.redis.zrange(key, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    for (let i = 0; i < limit; i++) expect((await run(s.redis, 'sliding-window-log', [key], [limit, windowMs, 1]))[0]).toBe(1);
    // the log's members are its admissions, scored by the Redis time in microseconds
    const first = Math.min(...(await scoresOf()));
    let allowed = 0;
    while (allowed !== 1) [allowed = 0] = await run(s.redis, 'sliding-window-log', [key], [limit, windowMs, 1]);
    const next = Math.max(...(await scoresOf()));
    // the next attempt passes no sooner than one window after the first: within the stretch, the limit
    expect(next - first).toBeGreaterThanOrEqual(windowMs * 1000);
    expect(next - first).toBeLessThan((windowMs + 50) * 1000);
  });

  it('a GCRA bucket: at most burst + rate x period within the stretch, and that many seen', async () => {
    const [burst, rate, periodMs] = [3, 4, 200];
    const figure = admittedWithin(
      { algorithm: 'gcra', rate: { requests: rate, periodSeconds: periodMs / 1000 }, layer: 'middleware', burst },
      periodMs / 1000,
    ) as number;
    expect(figure).toBe(burst + rate);
    const script = timed('gcra');
    const argv = gcraArgv(burst, rate, periodMs);
    let most = 0;
    for (let trial = 0; trial < 60 && most < figure; trial++) {
      const key = `${freshTag('conv')}gcra`;
      const times: number[] = [];
      while (times.length < figure + 1) {
        const [r, t] = (await s.redis.eval(script, 1, key, ...argv)) as [number, number];
        if (r > 0) times.push(t);
      }
      const first = times[0] as number;
      const within = times.filter((t) => t - first < periodMs * 1000).length;
      expect(within).toBeLessThanOrEqual(figure);
      // the next token after those is a whole interval later: past the stretch
      expect((times[figure] as number) - first).toBeGreaterThanOrEqual(periodMs * 1000);
      most = Math.max(most, within);
    }
    // the figure is what the script passes, not one over it
    expect(most).toBe(figure);
  }, 60_000);
});

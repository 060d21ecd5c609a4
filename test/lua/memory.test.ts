/**
 * The bytes per key the design document's memory estimate uses (design/matrix.ts,
 * BYTES_PER_KEY) are what a key written by each script really costs on this Redis:
 * used_memory per key over 100,000 keys with 15-character names, as bench/lua measures it.
 */
import { describe, expect, it } from 'vitest';
import { luaScript, type LuaScriptName } from '../../src/codegen/lua.js';
import { BYTES_PER_KEY } from '../../src/design/matrix.js';
import { useRedis } from './harness.js';

const s = useRedis();
const HOUR = 3_600_000;
const DAY = 86_400_000;

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await s.redis.info('memory'))?.[1]);
}

/** Average used_memory per key after running `calls` script calls on each of `keys` keys. */
async function bytesPerKey(name: LuaScriptName, args: (i: number) => (string | number)[], keys = 100_000, calls = 1): Promise<number> {
  const script = luaScript(name);
  await s.redis.script('LOAD', script.source);
  await s.redis.flushall();
  const before = await usedMemory();
  for (let k = 0; k < keys; k += 1000) {
    for (let c = 0; c < calls; c++) {
      const p = s.redis.pipeline();
      for (let i = k; i < k + 1000; i++) p.evalsha(script.sha1, 1, `rl:{k:${String(i).padStart(8, '0')}}`, ...args(c));
      const replies = await p.exec();
      for (const [error] of replies ?? []) expect(error).toBeNull();
    }
  }
  expect(await s.redis.dbsize()).toBe(keys);
  const after = await usedMemory();
  await s.redis.flushall();
  return (after - before) / keys;
}

const near = (measured: number, stated: number, tolerance = 0.1): void => {
  expect(measured, `measured ${measured.toFixed(1)} B, stated ${stated} B`).toBeGreaterThan(stated * (1 - tolerance));
  expect(measured, `measured ${measured.toFixed(1)} B, stated ${stated} B`).toBeLessThan(stated * (1 + tolerance));
};

describe('bytes per key in the memory estimate', () => {
  it('gcra.lua: one integer key', async () => {
    near(await bytesPerKey('gcra', () => [10, 1, 60_000, 1]), BYTES_PER_KEY.gcra);
  });

  it('fixed-window.lua, calendar: one counter past the shared small integers', async () => {
    near(await bytesPerKey('fixed-window', () => ['calendar', 1e9, 12_345, Date.now() + HOUR]), BYTES_PER_KEY['fixed-window']);
  });

  it('fixed-window.lua, rolling: a hash with one day bucket', async () => {
    near(await bytesPerKey('fixed-window', () => ['rolling', 1e9, 1, 30 * DAY, DAY]), BYTES_PER_KEY['fixed-window-rolling-base']);
  });

  it('sliding-window-log.lua: a log with one attempt, and about 29 B per further attempt', async () => {
    const one = await bytesPerKey('sliding-window-log', () => [100, HOUR, 1], 20_000);
    const ten = await bytesPerKey('sliding-window-log', () => [100, HOUR, 1], 20_000, 10);
    near((ten - one) / 9, BYTES_PER_KEY['sliding-window-log-entry'], 0.25);
    near(await bytesPerKey('sliding-window-log', () => [100, HOUR, 1]), BYTES_PER_KEY['sliding-window-log-base'] + BYTES_PER_KEY['sliding-window-log-entry']);
  });
}, 120_000);

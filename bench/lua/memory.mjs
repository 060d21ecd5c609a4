#!/usr/bin/env node
/**
 * Bytes per key of each shipped script against the figures the design document's memory
 * estimate uses (design/matrix.ts, BYTES_PER_KEY): used_memory per key over 100,000 keys with
 * 15-character names on a throwaway redis-server, as bench/lua/run.mjs measures it. Prints a
 * table and exits 1 when a measurement is off by more than the tolerance (10 %, 25 % for the
 * per-attempt cost of the log), so a Redis upgrade that changes the encodings is noticed.
 *
 * Usage: npm run build && node bench/lua/memory.mjs   (needs redis-server; about a minute)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { startRedis } from '../redis.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (f) => import(pathToFileURL(join(root, 'dist', f)).href);
const { luaScript } = await dist('lua.js');
const { BYTES_PER_KEY, identityHashBytes } = await dist('design/matrix.js');

const HOUR = 3_600_000;
const DAY = 86_400_000;

const server = await startRedis();
const redis = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });

async function usedMemory() {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

/** Average used_memory per key after `calls` script calls on each of `keys` keys. */
async function bytesPerKey(name, args, keys = 100_000, calls = 1, seed = null) {
  const script = luaScript(name);
  await redis.script('LOAD', script.source);
  await redis.flushall();
  const before = await usedMemory();
  for (let k = 0; k < keys; k += 1000) {
    if (seed) {
      const p = redis.pipeline();
      for (let i = k; i < k + 1000; i++) seed(p, `rl:{k:${String(i).padStart(8, '0')}}`);
      for (const [error] of (await p.exec()) ?? []) if (error) throw error;
    }
    for (let c = 0; c < calls; c++) {
      const p = redis.pipeline();
      for (let i = k; i < k + 1000; i++) p.evalsha(script.sha1, 1, `rl:{k:${String(i).padStart(8, '0')}}`, ...args(c));
      for (const [error] of (await p.exec()) ?? []) if (error) throw error;
    }
  }
  const size = await redis.dbsize();
  if (size !== keys) throw new Error(`${name}: ${size} keys, expected ${keys}`);
  const after = await usedMemory();
  await redis.flushall();
  return (after - before) / keys;
}

const rows = [];
const compare = (what, measured, stated, tolerance = 0.1) =>
  rows.push({ what, measured, stated, ok: measured > stated * (1 - tolerance) && measured < stated * (1 + tolerance), tolerance });

try {
  compare(
    'gcra.lua: TAT in the expiry, a shared integer as the value',
    await bytesPerKey('gcra', () => [10 * 60_000_000, 60_000_000, 60_000_000]), // burst 10, 1 per minute
    BYTES_PER_KEY.gcra,
  );
  compare(
    'fixed-window.lua, calendar: one counter',
    await bytesPerKey('fixed-window', () => ['calendar', 1e9, 12_345, Date.now() + HOUR]),
    BYTES_PER_KEY['fixed-window'],
  );
  compare(
    'fixed-window.lua, rolling: a hash with one day bucket',
    await bytesPerKey('fixed-window', () => ['rolling', 1e9, 1, 30 * DAY, DAY]),
    BYTES_PER_KEY['fixed-window-rolling-base'],
  );
  // identity-limits.lua: one hash per identity, a field per limit (identityHashBytes: the base and the
  // listpack in the allocator's class, whose steps are 16 B: hence the tighter tolerance)
  const end = Date.now() + HOUR;
  const bucket = (field) => [field, 'g', 10 * 60_000_000, 60_000_000]; // burst 10, 1 per minute
  const quota = (field) => [field, 'w', 999_999_999, end, 12_345];
  for (const fields of [
    [bucket('req')],
    [bucket('req:pro'), quota('quota')],
    [bucket('req:pro'), quota('quota'), bucket('search')],
    [bucket('req:pro'), quota('quota'), bucket('search'), bucket('export')],
  ]) {
    const names = fields.map((f) => f[0]);
    compare(
      `identity-limits.lua: a hash of ${names.length} field${names.length === 1 ? '' : 's'} (${names.join(', ')})`,
      await bytesPerKey('identity-limits', () => fields.flat()),
      identityHashBytes(names),
      0.03,
    );
  }
  // a bucket beside a rolling 30-day quota with every day of the window counted (29 earlier days of
  // 100 units, as a hash kept before the running total leaves them; the call sums them into it)
  const today = Math.floor(Date.now() / DAY);
  const days = {};
  for (let d = 1; d <= 29; d++) days[`quota:${today - d}`] = '100';
  compare(
    'identity-limits.lua: a hash of a bucket and a rolling 30-day quota (req, quota, quota:<day> x 30)',
    await bytesPerKey(
      'identity-limits',
      () => [...bucket('req'), 'quota', 'r', 3000, DAY, 30, 100],
      100_000,
      1,
      (p, key) => p.hset(key, days),
    ),
    identityHashBytes(['req', { name: 'quota', buckets: 30, maxCount: 100 }]),
    0.03,
  );
  const one = await bytesPerKey('sliding-window-log', () => [100, HOUR, 1], 20_000);
  const ten = await bytesPerKey('sliding-window-log', () => [100, HOUR, 1], 20_000, 10);
  compare('sliding-window-log.lua: each further attempt', (ten - one) / 9, BYTES_PER_KEY['sliding-window-log-entry'], 0.25);
  compare(
    'sliding-window-log.lua: a log with one attempt',
    await bytesPerKey('sliding-window-log', () => [100, HOUR, 1]),
    BYTES_PER_KEY['sliding-window-log-base'] + BYTES_PER_KEY['sliding-window-log-entry'],
  );
  console.log(`Redis ${server.version}; used_memory per key, 100,000 keys (20,000 for the log's per-attempt cost)\n`);
  console.log('| key | measured | BYTES_PER_KEY | within |');
  console.log('| --- | ---: | ---: | --- |');
  for (const r of rows)
    console.log(`| ${r.what} | ${r.measured.toFixed(1)} B | ${r.stated} B | ${r.ok ? 'yes' : 'NO'} (±${r.tolerance * 100} %) |`);
} finally {
  redis.disconnect();
  await server.stop();
}
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;

#!/usr/bin/env node
/**
 * The layout the memory target (at most 100 B per limit for a single-limit identity) would need,
 * beside the one shipped, on a throwaway redis-server:
 * - one key per identity with a TTL (gcra.lua's layout): the floor of any key with a TTL;
 * - identities as fields of shared hashes (bucket = identity mod B, ~64 to 128 fields each, so
 *   the hash stays a listpack), the bucket's TTL refreshed on each write.
 * Memory: used_memory per identity over 100,000 identities. Redis CPU per call (used_cpu_user +
 * used_cpu_sys over 200,000 pipelined calls, 5 rounds, median): a skeleton of each layout's read
 * and write (PTTL + SET against HGET + HSET + PEXPIRE on a 100-field hash, its middle field and
 * its last), so the difference is the layout's, not the algorithm's.
 *
 * Usage: node bench/lua/shared-hash.mjs   (needs redis-server; about a minute)
 */
import { Redis } from 'ioredis';
import { startRedis } from '../redis.mjs';

const N = 100_000;
const server = await startRedis();
const redis = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
const id = (i) => `k:${String(i).padStart(8, '0')}`;
// a GCRA state: a theoretical arrival time in microseconds
const tat = (i) => String(1_765_000_000_000_000 + i * 7919);

async function usedMemory() {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

async function bytesPerIdentity(put) {
  await redis.flushall();
  const before = await usedMemory();
  for (let k = 0; k < N; k += 1000) {
    const p = redis.pipeline();
    for (let i = k; i < k + 1000; i++) put(p, i);
    await p.exec();
  }
  return ((await usedMemory()) - before) / N;
}

async function redisCpuSeconds() {
  const info = await redis.info('cpu');
  return Number(/used_cpu_user:([0-9.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([0-9.]+)/.exec(info)?.[1]);
}

async function usPerCall(call, n = 200_000) {
  const before = await redisCpuSeconds();
  for (let k = 0; k < n; k += 2000) {
    const p = redis.pipeline();
    for (let i = 0; i < 2000; i++) call(p);
    await p.exec();
  }
  return (((await redisCpuSeconds()) - before) * 1e6) / n;
}

try {
  const memory = [
    [
      'one key per identity (SET PX, the value a shared integer, as gcra.lua keeps it)',
      (p, i) => p.set(`rl:{${id(i)}}`, '0', 'PX', 60_000),
    ],
    ['one key per identity, the value a TAT', (p, i) => p.set(`rl:{${id(i)}}`, tat(i), 'PX', 60_000)],
    ...[64, 100, 128].map((per) => {
      const buckets = Math.ceil(N / per);
      return [
        `shared hashes: ${buckets} buckets of ~${per} identities (field = identity, value = TAT)`,
        (p, i) => {
          const key = `rl:{b:${i % buckets}}`;
          p.hset(key, id(i), tat(i));
          p.pexpire(key, 60_000);
        },
      ];
    }),
  ];
  console.log(`Redis ${server.version}: bytes per identity over ${N.toLocaleString('en-US')} identities\n`);
  console.log('| layout | bytes per identity |\n| --- | ---: |');
  for (const [name, put] of memory) console.log(`| ${name} | ${(await bytesPerIdentity(put)).toFixed(1)} |`);

  await redis.flushall();
  const own = await redis.script(
    'LOAD',
    "local t = redis.call('PTTL', KEYS[1]) if t < 0 then t = 0 end redis.call('SET', KEYS[1], '0', 'PX', t + 1) return t",
  );
  const shared = await redis.script(
    'LOAD',
    "local t = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') redis.call('HSET', KEYS[1], ARGV[1], t + 1) redis.call('PEXPIRE', KEYS[1], 60000) return t",
  );
  for (let i = 0; i < 100; i++) await redis.hset('rl:{b:1}', id(i), tat(i));
  const calls = {
    'own key: PTTL + SET': (p) => p.evalsha(own, 1, `rl:{${id(50)}}`),
    'shared 100-field hash, middle field: HGET + HSET + PEXPIRE': (p) => p.evalsha(shared, 1, 'rl:{b:1}', id(50)),
    'shared 100-field hash, last field': (p) => p.evalsha(shared, 1, 'rl:{b:1}', id(99)),
  };
  const rounds = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  for (let r = 0; r < 5; r++) for (const [name, call] of Object.entries(calls)) rounds[name].push(await usPerCall(call));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(rounds['own key: PTTL + SET']);
  console.log('\n| skeleton | Redis CPU us/call (median of 5) | x own key | rounds |\n| --- | ---: | ---: | --- |');
  for (const [name, xs] of Object.entries(rounds)) {
    console.log(`| ${name} | ${median(xs).toFixed(2)} | ${(median(xs) / base).toFixed(2)} | ${xs.map((x) => x.toFixed(2)).join(', ')} |`);
  }
} finally {
  await redis.quit();
  await server.stop();
}

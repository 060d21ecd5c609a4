#!/usr/bin/env node
/**
 * Redis cost of each Lua script, side by side on one redis-server that this script starts
 * (free loopback port, no persistence) and stops.
 *
 * - Redis CPU per decision: CONFIG RESETSTAT, redis-benchmark drives EVALSHA on one hot key,
 *   then INFO commandstats gives evalsha's usec_per_call (the whole script, nested calls
 *   included). Two paths per script: every call admitted, and the key throttled (calls
 *   denied). Rounds are interleaved across scripts, so background load hits every script
 *   alike; the table gives the median and the best round (the least disturbed one).
 * - Memory per key: used_memory before and after EVALSHA on N distinct keys, divided by N.
 *
 * - With --instructions: instead of time, the instructions Redis executes inside EVALSHA per call,
 *   counted by valgrind's callgrind (one redis-server under valgrind per script and path, the
 *   calls of evalShaCommand and everything it calls counted). The same on a busy machine as on a
 *   quiet one, so small changes show; a count, not a time (cache misses and the like not in it).
 *
 * Usage: node bench/lua/run.mjs [--rounds 5] [--requests 50000] [--keys 100000]
 *        node bench/lua/run.mjs --instructions [--requests 5000]
 * Needs redis-server and redis-benchmark (apt-get install -y redis-server redis-tools); for
 * --instructions also valgrind (apt-get install -y valgrind).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { callgrindWrapper, counting } from '../callgrind.mjs';
import { redisInfo, startRedis } from '../redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const exec = promisify(execFile);

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = option('rounds', 5);
const INSTRUCTIONS = process.argv.includes('--instructions');
const REQUESTS = option('requests', INSTRUCTIONS ? 5_000 : 50_000);
const KEYS = option('keys', 100_000);
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The least any Redis-clocked single-key limiter script does: read time and state, write
 * state with a TTL, reply with four integers. A floor for CPU, not a limiter. */
const SKELETON = `local t = redis.call('TIME')
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], '1712345678901234', 'PX', '3600000')
return {1, 2, 3, 4}
`;

const read = (path) => readFileSync(join(root, path), 'utf8');

/**
 * rate-limiter-flexible's own script (RateLimiterRedis, the peer users would pick instead), read
 * from the installed package so it stays the one that runs: SET NX EX, INCRBY, PTTL, a fixed
 * window counted in one key, with a two-integer reply. Its template literal joins lines with a
 * backslash, which JavaScript drops.
 */
function rlfScript() {
  const file = read('node_modules/rate-limiter-flexible/lib/RateLimiterRedis.js');
  const m = /const incrTtlLuaScript = `([\s\S]*?)`;/.exec(file);
  if (!m) throw new Error('rate-limiter-flexible: incrTtlLuaScript not found in lib/RateLimiterRedis.js');
  return m[1].replace(/\\\n/g, '');
}

if (!existsSync(join(root, 'dist', 'runtime', 'middleware', 'store.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}
const { gcraNumbers } = await import(pathToFileURL(join(root, 'dist', 'runtime', 'middleware', 'store.js')).href);

/** gcra.lua's ARGV for a bucket, by the runtime's own function: tolerance, increment, interval (us). */
const gcraArgs = (burst, rate, periodMs, cost = 1) => {
  const { interval, tolerance } = gcraNumbers(burst, rate, periodMs);
  return [tolerance, cost * interval, interval];
};

/** identity-limits.lua's arguments for a GCRA field: its name, 'g', tolerance and increment (us). */
const bucketField = (field, burst, rate, periodMs, cost = 1) => [field, 'g', ...gcraArgs(burst, rate, periodMs, cost).slice(0, 2)];
/** ...and for a calendar counter: its name, 'w', limit, the window's end (epoch ms), cost. */
const quotaField = (field, limit, endMs, cost = 1) => [field, 'w', limit, endMs, cost];
/** ...and for a rolling window of daily buckets: its name, 'r', limit, the bucket (one day), the buckets, cost. */
const rollingField = (field, limit, days, cost = 1) => [field, 'r', limit, DAY, days, cost];
/** A hot key's hash with 29 earlier days of a rolling quota counted (10 each), as a month of use leaves it. */
const seedDays = (key, field, today) => async (client) => {
  const days = {};
  for (let d = 1; d <= 29; d++) days[`${field}:${today - d}`] = '10';
  await client.hset(key, days);
  await client.pexpire(key, 30 * DAY);
};

/**
 * One row per script. `admit` and `throttle` are [keys, args] for the hot-key runs (null:
 * not applicable); `memory(i)` gives [keys, args] for the i-th distinct key.
 */
function cases(nowMs) {
  const dayEnd = nowMs + DAY;
  // what gcra.lua's admitted runs pass: the floors of its layout get the same three arguments
  const GCRA_ARGS = gcraArgs(1e9, 1e9, 1000);
  return [
    {
      name: '(a) no-op EVALSHA (floor)',
      source: 'return 0\n',
      admit: [['rl:{hot}'], []],
      throttle: null,
      memory: (i) => [[key(i)], []],
    },
    {
      name: '(a2) skeleton: TIME, GET, SET int PX, 4-int reply, no logic',
      source: SKELETON,
      admit: [['rl:{hot}'], []],
      throttle: null,
      memory: (i) => [[key(i)], []],
    },
    {
      name: "(a2') skeleton of gcra.lua's layout: PTTL, SET small int PX, one-integer reply, no logic (its 3 arguments passed, unread)",
      source: "local p = redis.call('PTTL', KEYS[1])\nredis.call('SET', KEYS[1], '1', 'PX', '3600000')\nreturn p\n",
      admit: [['rl:{hot}'], GCRA_ARGS],
      throttle: null,
      memory: (i) => [[key(i)], []],
    },
    {
      name: "(a2''') the same with the sub-millisecond part: PTTL, GET, SET small int PX, one-integer reply, no logic",
      source:
        "local p = redis.call('PTTL', KEYS[1])\nlocal v = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], '1', 'PX', '3600000')\nreturn p\n",
      admit: [['rl:{hot}'], GCRA_ARGS],
      throttle: null,
      memory: null,
    },
    {
      name: "(a2'') its denial: PTTL, one-integer reply",
      source: "return redis.call('PTTL', KEYS[1])\n",
      admit: [['rl:{hot}'], GCRA_ARGS],
      throttle: null,
      memory: null,
    },
    {
      name: '(a3) smallest key with a TTL: SET k 1 PX',
      source: "redis.call('SET', KEYS[1], '1', 'PX', '3600000')\nreturn 0\n",
      admit: null,
      throttle: null,
      memory: (i) => [[key(i)], []],
    },
    {
      name: '(b) reference token bucket (hash, fractional tokens)',
      source: read('bench/lua/reference-token-bucket.lua'),
      reference: true,
      admit: [['rl:{hot}'], [1e9, 1e9, 1]],
      throttle: [['rl:{hot}'], [10, 0.0001, 1]],
      memory: (i) => [[key(i)], [100, 10, 1]],
    },
    {
      name: 'gcra.lua',
      source: read('lua/gcra.lua'),
      admit: [['rl:{hot}'], gcraArgs(1e9, 1e9, 1000)],
      throttle: [['rl:{hot}'], gcraArgs(10, 1, HOUR)],
      memory: (i) => [[key(i)], gcraArgs(100, 1, HOUR)],
    },
    {
      name: "peer: rate-limiter-flexible's script (SET NX EX, INCRBY, PTTL: a fixed window; it counts a refused call too, and its caller decides)",
      source: rlfScript(),
      // consume(key) passes the points and the duration in seconds; over the limit the script runs the same
      admit: [['rlf:{hot}'], [1, 60]],
      throttle: [['rlf:{hot}'], [1, 60]],
      memory: (i) => [[key(i)], [1, 3600]],
    },
    {
      name: 'gcra.lua, an interval of whole milliseconds (1,000 per second: no GET)',
      source: read('lua/gcra.lua'),
      admit: [['rl:{hot}'], gcraArgs(1e9, 1000, 1000)],
      throttle: null,
      memory: null,
    },
    {
      name: 'identity-limits.lua, a hash of 1 GCRA field',
      source: read('lua/identity-limits.lua'),
      admit: [['rl:{hot}'], bucketField('req', 1e9, 1e9, 1000)],
      throttle: [['rl:{hot}'], bucketField('req', 10, 1, HOUR)],
      memory: (i) => [[key(i)], bucketField('req', 100, 1, HOUR)],
    },
    {
      name: "identity-limits.lua, a tenant's GCRA + calendar quota (2 fields of one hash, one call)",
      source: read('lua/identity-limits.lua'),
      admit: [['rl:{hot}'], [...bucketField('req:pro', 1e9, 1e9, 1000), ...quotaField('quota', 999_999_999, dayEnd)]],
      throttle: [['rl:{hot}'], [...bucketField('req:pro', 1e9, 1e9, 1000), ...quotaField('quota', 10, dayEnd)]],
      memory: (i) => [[key(i)], [...bucketField('req:pro', 100, 1, HOUR), ...quotaField('quota', 1000, dayEnd)]],
    },
    {
      name: "identity-limits.lua, a tenant's GCRA + rolling 30-day quota (the bucket, the window's total and 30 daily fields of one hash, one call)",
      source: read('lua/identity-limits.lua'),
      // 29 earlier days already counted, and one call today that summed them into the window's running
      // total: every call then reads the total and today's field (HMGET), not the 30 days
      seed: async (client) => {
        await seedDays('rl:{hot}', 'quota', Math.floor(nowMs / DAY))(client);
        await client.eval(read('lua/identity-limits.lua'), 1, 'rl:{hot}', ...rollingField('quota', 291, 30));
      },
      admit: [['rl:{hot}'], [...bucketField('req:pro', 1e9, 1e9, 1000), ...rollingField('quota', 999_999_999, 30)]],
      // the 291 units counted fill the quota: refused, the wait worked out from the oldest days (read only then, until enough would leave)
      throttle: [['rl:{hot}'], [...bucketField('req:pro', 1e9, 1e9, 1000), ...rollingField('quota', 291, 30)]],
      memory: (i) => [[key(i)], [...bucketField('req:pro', 100, 1, HOUR), ...rollingField('quota', 1000, 30)]],
    },
    {
      name: 'identity-limits.lua, 2 GCRA + a calendar quota (3 fields, one call)',
      source: read('lua/identity-limits.lua'),
      admit: [
        ['rl:{hot}'],
        [...bucketField('req:pro', 1e9, 1e9, 1000), ...quotaField('quota', 999_999_999, dayEnd), ...bucketField('search', 1e9, 1e9, 1000)],
      ],
      throttle: [
        ['rl:{hot}'],
        [...bucketField('req:pro', 1e9, 1e9, 1000), ...quotaField('quota', 999_999_999, dayEnd), ...bucketField('search', 10, 1, HOUR)],
      ],
      memory: (i) => [
        [key(i)],
        [...bucketField('req:pro', 100, 1, HOUR), ...quotaField('quota', 1000, dayEnd), ...bucketField('search', 100, 1, HOUR)],
      ],
    },
    {
      name: 'sliding-window-log.lua, 1 key',
      source: read('lua/sliding-window-log.lua'),
      admit: [['rl:{hot}:ip'], [1e9, 1000, 1]],
      throttle: [['rl:{hot}:ip'], [10, HOUR, 1]],
      memory: (i) => [[key(i)], [10, HOUR, 1]],
    },
    {
      name: 'sliding-window-log.lua, user + IP',
      source: read('lua/sliding-window-log.lua'),
      admit: [
        ['rl:{hot}:user', 'rl:{hot}:ip'],
        [1e9, 1000, 1e9, 1000, 1],
      ],
      throttle: [
        ['rl:{hot}:user', 'rl:{hot}:ip'],
        [10, HOUR, 100, HOUR, 1],
      ],
      memory: null,
    },
    {
      name: 'fixed-window.lua, calendar',
      source: read('lua/fixed-window.lua'),
      admit: [['rl:{hot}:2026-01'], ['calendar', 1e15, 1, dayEnd, 60_000]],
      throttle: [['rl:{hot}:2026-01'], ['calendar', 10, 1, dayEnd, 60_000]],
      memory: (i) => [[key(i)], ['calendar', 1000, 1, dayEnd, 60_000]],
    },
    {
      name: 'fixed-window.lua, rolling 30 d',
      source: read('lua/fixed-window.lua'),
      admit: [['rl:{hot}:30d'], ['rolling', 1e15, 1, 30 * DAY, DAY]],
      throttle: [['rl:{hot}:30d'], ['rolling', 10, 1, 30 * DAY, DAY]],
      memory: (i) => [[key(i)], ['rolling', 1000, 1, 30 * DAY, DAY]],
    },
    {
      name: 'fixed-window.lua, rolling 30 d, 29 earlier days counted (its own key: the call apart it was)',
      source: read('lua/fixed-window.lua'),
      seed: async (client) => {
        const today = Math.floor(nowMs / DAY);
        const days = {};
        for (let d = 1; d <= 29; d++) days[String(today - d)] = '10';
        await client.hset('rl:{hot}:30d', days);
        await client.pexpire('rl:{hot}:30d', 30 * DAY);
      },
      admit: [['rl:{hot}:30d'], ['rolling', 1e15, 1, 30 * DAY, DAY]],
      throttle: [['rl:{hot}:30d'], ['rolling', 290, 1, 30 * DAY, DAY]],
      memory: null,
    },
    {
      name: 'outbound-bucket.lua, reserve',
      source: read('lua/outbound-bucket.lua'),
      admit: [['rl:{hot}'], ['reserve', 1e9, 1e9, 1000, 1, 0]],
      throttle: [['rl:{hot}'], ['reserve', 1, 1, HOUR, 1, 0]],
      memory: (i) => [[key(i)], ['reserve', 100, 1, HOUR, 1, 0]],
    },
  ];
}

/** Distinct keys of one length (16 characters), one hash tag each, like real limiter keys. */
const key = (i) => `rl:{k:${String(i).padStart(8, '0')}}`;

/** The bench's redis-server and one ioredis client on it. */
async function startBenchRedis() {
  const server = await startRedis();
  const client = new Redis(server.port, server.host);
  return {
    port: server.port,
    client,
    async stop() {
      client.disconnect();
      await server.stop();
    },
  };
}

const info = redisInfo;

/**
 * redis-benchmark sends REQUESTS EVALSHA of `sha` (16 pipelined per connection) from `connections`
 * connections; returns evalsha's line of INFO commandstats, after failing on any failed call.
 */
async function drive(client, port, connections, sha, keys, args) {
  await exec('redis-benchmark', [
    ...['-h', '127.0.0.1', '-p', String(port), '-n', String(REQUESTS), '-c', String(connections), '-P', '16', '-q'],
    ...['EVALSHA', sha, String(keys.length), ...keys, ...args.map(String)],
  ]);
  const stats = (await info(client, 'commandstats')).cmdstat_evalsha ?? '';
  const failed = Number(/failed_calls=(\d+)/.exec(stats)?.[1] ?? 0);
  if (failed > 0) throw new Error(`script failed ${failed} times: ${stats}`);
  return stats;
}

/** evalsha's usec_per_call while redis-benchmark hammers one key (after the row's seed, if any, wrote its state). */
async function cpu(redis, sha, [keys, args], seed) {
  await redis.client.flushall();
  if (seed) await seed(redis.client);
  await redis.client.config('RESETSTAT');
  const stats = await drive(redis.client, redis.port, 10, sha, keys, args);
  return Number(/usec_per_call=([\d.]+)/.exec(stats)?.[1]);
}

/**
 * Instructions per EVALSHA call: a fresh redis-server under callgrind (bench/callgrind.mjs),
 * counting only inside evalShaCommand (the script and the commands it calls) and only while
 * redis-benchmark sends the REQUESTS calls, after the row's seed (the one-time costs of a first
 * call spread over them).
 */
async function instructions(source, [keys, args], seed) {
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-callgrind-'));
  const outFile = join(dir, 'callgrind.out');
  const server = await startRedis({ wrapper: callgrindWrapper(outFile, ['evalShaCommand']), readyMs: 60_000 });
  const client = new Redis(server.port, server.host);
  try {
    const sha = await client.script('LOAD', source);
    if (seed) await seed(client);
    const {
      result: stats,
      instructions: [total],
    } = await counting([{ pid: server.pid, outFile }], () => drive(client, server.port, 1, sha, keys, args));
    const calls = Number(/calls=(\d+)/.exec(stats)?.[1]);
    if (!(total > 0) || !(calls > 0)) throw new Error('callgrind counted no EVALSHA calls');
    return total / calls;
  } finally {
    client.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The --instructions table: instructions per call, admitted and throttled, and against the reference. */
async function instructionsTable(rows) {
  for (const row of rows) {
    row.admitIr = row.admit ? await instructions(row.source, row.admit, row.seed) : null;
    row.throttleIr = row.throttle ? await instructions(row.source, row.throttle, row.seed) : null;
    process.stderr.write(`${row.name}: done\n`);
  }
  const ref = rows.find((r) => r.reference);
  const cell = (ir, refIr) => (ir === null ? ['-', '-'] : [Math.round(ir).toLocaleString('en-US'), (ir / refIr).toFixed(3)]);
  const lines = [
    `Instructions per EVALSHA (valgrind callgrind, inside evalShaCommand), ${REQUESTS} calls per script and path on one hot key, one redis-server each.`,
    '',
    '| script | admitted: instructions/call | x ref | throttled: instructions/call | x ref |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows)
    lines.push(`| ${row.name} | ${[...cell(row.admitIr, ref.admitIr), ...cell(row.throttleIr, ref.throttleIr)].join(' | ')} |`);
  return lines.join('\n');
}

/** used_memory growth per key over KEYS distinct keys. */
async function memory(redis, sha, memoryArgs) {
  const { client } = redis;
  await client.flushall('SYNC');
  const before = Number((await info(client, 'memory')).used_memory);
  const batch = 1000;
  for (let i = 0; i < KEYS; i += batch) {
    const pipeline = client.pipeline();
    for (let j = i; j < Math.min(KEYS, i + batch); j++) {
      const [keys, args] = memoryArgs(j);
      pipeline.evalsha(sha, keys.length, ...keys, ...args);
    }
    for (const [error] of await pipeline.exec()) if (error) throw error;
  }
  const after = Number((await info(client, 'memory')).used_memory);
  const size = await client.dbsize();
  await client.flushall('SYNC');
  return { perKey: size ? (after - before) / size : 0, keys: size };
}

/**
 * Bytes per limit of one identity with `n` limits (a tenant's fairness bucket, its calendar quota, then
 * more buckets), over KEYS identities: all of them fields of one hash (identity-limits.lua, the design's
 * field names, or one-character ones), or one key per limit (gcra.lua's keys and fixed-window.lua's
 * counter, named as the design names them). `id(i)` is the i-th identity's value: Redis allocates a key
 * name in the allocator's steps (Debian's package: 16 B up to 14 characters, 32 B up to 30, 48 B and up
 * beyond; Redis's own build: 8-byte steps up to 60 characters), so the figures depend on how long the
 * identities are.
 */
const LIMIT_NAMES = ['req:pro', 'quota', 'search', 'export'];
const IDENTITIES = [
  { label: 'short ids', id: (i) => i.toString(36).padStart(5, '0') },
  { label: 'IPv4 addresses', id: (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
  {
    label: 'UUIDs',
    id: (i) =>
      createHash('md5')
        .update(String(i))
        .digest('hex')
        .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
  },
];
/** The hash's key for the i-th identity, and how the table names the kind: "IPv4 addresses (rl:{t:10.1.134.160}, 19 characters)". */
const identityKey = (id, i) => `rl:{t:${id(i)}}`;
const identityLabel = ({ label, id }) => `${label} (\`${identityKey(id, 99_999)}\`, ${identityKey(id, 99_999).length} characters)`;
async function memoryPerLimit(redis, shas, n, layout, dayEnd, id) {
  const { client } = redis;
  await client.flushall('SYNC');
  const before = Number((await info(client, 'memory')).used_memory);
  const names = layout === 'short' ? ['r', 'q', 's', 'e'] : LIMIT_NAMES;
  for (let i = 0; i < KEYS; i += 1000) {
    const pipeline = client.pipeline();
    for (let j = i; j < Math.min(KEYS, i + 1000); j++) {
      const identity = identityKey(id, j);
      if (layout === 'keys') {
        for (let l = 0; l < n; l++) {
          if (l === 1) pipeline.evalsha(shas.window, 1, `${identity}:quota:2026-12`, 'calendar', 1000, 1, dayEnd, 60_000);
          else pipeline.evalsha(shas.gcra, 1, `${identity}:${LIMIT_NAMES[l]}`, ...gcraArgs(100, 1, HOUR));
        }
      } else {
        const args = [];
        for (let l = 0; l < n; l++) args.push(...(l === 1 ? quotaField(names[l], 1000, dayEnd) : bucketField(names[l], 100, 1, HOUR)));
        pipeline.evalsha(shas.identity, 1, identity, ...args);
      }
    }
    for (const [error] of await pipeline.exec()) if (error) throw error;
  }
  const after = Number((await info(client, 'memory')).used_memory);
  const size = await client.dbsize();
  await client.flushall('SYNC');
  if (size !== KEYS * (layout === 'keys' ? n : 1))
    throw new Error(`memory: ${size} keys left, expected ${KEYS * (layout === 'keys' ? n : 1)}`);
  return (after - before) / KEYS / n;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

async function main() {
  if (INSTRUCTIONS) {
    console.log(await instructionsTable(cases(Date.now())));
    return;
  }
  const redis = await startBenchRedis();
  try {
    const server = await info(redis.client, 'server');
    const [sec] = await redis.client.time();
    const rows = cases(Number(sec) * 1000);
    for (const row of rows) {
      row.sha = createHash('sha1').update(row.source).digest('hex');
      const loaded = await redis.client.script('LOAD', row.source);
      if (loaded !== row.sha) throw new Error(`${row.name}: SHA1 mismatch`);
      row.admitRuns = [];
      row.throttleRuns = [];
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const row of rows) {
        if (row.admit) row.admitRuns.push(await cpu(redis, row.sha, row.admit, row.seed));
        if (row.throttle) row.throttleRuns.push(await cpu(redis, row.sha, row.throttle, row.seed));
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    for (const row of rows) row.mem = row.memory ? await memory(redis, row.sha, row.memory) : null;

    const ref = rows.find((r) => r.reference);
    const fmt = (x) => x.toFixed(2);
    /** "median (best)" in us and, against the reference's figure of the same kind, x ratio. */
    const cell = (runs, refRuns) => {
      if (runs.length === 0) return ['-', '-'];
      const [m, b] = [median(runs), Math.min(...runs)];
      return [`${fmt(m)} (${fmt(b)})`, `${fmt(m / median(refRuns))} (${fmt(b / Math.min(...refRuns))})`];
    };
    const bytes = (mem) => {
      if (mem === null) return '-';
      if (mem.keys === 0) return '0 (no key)';
      const note = mem.keys < KEYS ? ` (${mem.keys} keys left)` : '';
      return `${Math.round(mem.perKey)}${note}`;
    };
    // the allocator's size classes move every byte figure: Debian's package links the system jemalloc
    // (16-byte classes), Redis's own build its bundled one (8-byte classes below 64 B)
    const allocator = (await info(redis.client, 'memory')).mem_allocator;
    const lines = [
      `Redis ${server.redis_version}, ${server.arch_bits}-bit, ${allocator}; CPU: redis-benchmark -c 10 -P 16, ${REQUESTS} EVALSHA ` +
        `per run on one hot key, ${ROUNDS} rounds interleaved across scripts, "median (best)" of the rounds; ` +
        `memory: used_memory delta over ${KEYS} distinct keys like "${key(0)}" (${key(0).length} chars).`,
      '',
      '| script | admitted: us/call | x ref | throttled: us/call | x ref | bytes per key |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const row of rows) {
      const [a, ar] = cell(row.admitRuns, ref.admitRuns);
      const [t, tr] = cell(row.throttleRuns, ref.throttleRuns);
      lines.push(`| ${row.name} | ${a} | ${ar} | ${t} | ${tr} | ${bytes(row.mem)} |`);
    }
    const shas = {
      gcra: rows.find((r) => r.name === 'gcra.lua').sha,
      window: rows.find((r) => r.name === 'fixed-window.lua, calendar').sha,
      identity: rows.find((r) => r.name.startsWith('identity-limits.lua')).sha,
    };
    const dayEnd = Number(sec) * 1000 + DAY;
    lines.push(
      '',
      `Bytes per limit of one identity, used_memory delta over ${KEYS} identities (limits: a GCRA bucket, a calendar quota, ` +
        `then more buckets; field names as the design gives them: ${LIMIT_NAMES.join(', ')}; one key per limit: the ` +
        "identity's key with the field name as its tail):",
      '',
      '| identities | limits per identity | one hash (design field names) | one hash (1-character field names) | one key per limit |',
      '| --- | ---: | ---: | ---: | ---: |',
    );
    for (const kind of IDENTITIES) {
      for (let n = 1; n <= 4; n++) {
        const cells = [];
        for (const layout of ['hash', 'short', 'keys'])
          cells.push((await memoryPerLimit(redis, shas, n, layout, dayEnd, kind.id)).toFixed(1));
        lines.push(`| ${n === 1 ? identityLabel(kind) : ''} | ${n} | ${cells.join(' | ')} |`);
      }
    }
    console.log(lines.join('\n'));
  } finally {
    await redis.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

#!/usr/bin/env node
/**
 * What the generated middleware costs, on one redis-server this script starts (free loopback
 * port, no persistence) and stops. Run by hand, never from the tests:
 *
 *   npm run build && node bench/middleware/run.mjs [--decisions 100000] [--rounds 5] [--seconds 8] [--rate 2000] [--only node|http]
 *     [--middleware-dir DIR]   (a compiled middleware to measure instead: DIR holds express.js and limiter.js + design.js, or an older ratelimit-core.js)
 *   npm run build && node bench/middleware/run.mjs --instructions [--only node|http] [--requests 10000] [--apps bare,limited,rlf,...]
 *     [--counted 20000] [--calls raw,rlf,ours,rlfSaas,saas] [--clients defaults,pipelining]
 *     (5. and 6. only: needs valgrind; about 2 minutes per HTTP app, 1 per Node call)
 *
 * 1. Node decision throughput: 50 calls in flight, over 10,000 keys and 1,000 distinct URLs
 *    (/v1/items/<n>), every call admitted:
 *    - ours: limiter.check() of the generated core (route match, identity, key, EVALSHA of
 *      gcra.lua with timeout and NOSCRIPT fallback, metrics, header choice),
 *    - rate-limiter-flexible: RateLimiterRedis.consume() (its own Lua script via EVALSHA),
 *    - raw: ioredis evalsha of gcra.lua and nothing else (the floor for any Node caller).
 *    The three share ONE ioredis connection per client configuration (defaults, then
 *    enableAutoPipelining); rounds are interleaved (the order rotates every round); each
 *    cell is the median of the rounds.
 * 2. Latency of one limiter call on loopback: p50/p99 with 1 call in flight (the cost a
 *    request pays) and with 50 in flight (queueing included).
 * 3. The limiter's own code: Node CPU per decision with clients that answer at once (no
 *    socket, no Redis), so machine load and syscalls do not blur it.
 * 4. HTTP throughput of an Express 5 app, each in its own process, started and warmed once:
 *    bare; the one-rule design with the generated middleware, with rate-limiter-flexible as
 *    its README mounts it, with express-rate-limit + rate-limit-redis, and with a bare
 *    EVALSHA per request (the floor for any Redis-backed limiter); the saas-platform example
 *    (a tenant's fairness bucket and monthly quota) with the generated middleware (one call
 *    per tenant, and as generated with its in-process bucket), and the same two limits with
 *    each peer. All on ioredis with enableAutoPipelining. autocannon, 50 connections, rounds
 *    interleaved; median req/s, p99, CPU per request (app + Redis). Then, unless --rate 0,
 *    the same apps at one fixed load (--rate req/s, below saturation).
 *
 * 5. --instructions: the HTTP apps of 4., each counted by valgrind's callgrind instead of
 *    timed: the instructions the app's process and redis-server's request handling execute per
 *    request, over one connection. A count does not move with the machine's load, which swings
 *    the timed HTTP rounds by 30 points and more; it does not see the kernel (syscalls, the
 *    loopback) or how requests batch under concurrency, which the timed rows do.
 * 6. --instructions, the Node half: each call of 1. (node-calls.mjs) in its own process
 *    (node-child.mjs) under callgrind, on a Redis that is not: instructions per decision of the
 *    Node process at 50 calls in flight and at 1 (see nodeInstructionsBench).
 *
 * The machine runs everything (Redis, the app, the load generator) on the same cores, so
 * the HTTP rows include Redis's CPU: it is the cost of the limiter as deployed on one box.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { callgrindWrapper, counting, REDIS_REQUEST_WORK } from '../callgrind.mjs';
import { redisCpuUs, startRedis } from '../redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const exec = promisify(execFile);

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DECISIONS = Number(option('decisions', 100_000));
const ROUNDS = Number(option('rounds', 5));
const SECONDS = Number(option('seconds', 8));
/** The fixed load of the second HTTP measurement (requests per second, every app alike). */
const RATE = Number(option('rate', 2000));
const ONLY = option('only', 'all');
/** --instructions: count instructions per HTTP request instead of timing (valgrind; see instructionsBench). */
const INSTRUCTIONS = process.argv.includes('--instructions');
/** Requests counted per app by --instructions (and as many before, uncounted, to warm it). */
const REQUESTS = Number(option('requests', 10_000));
/** --apps limited,rlf,...: count only these apps of the table (its modes, see server.mjs), and the bare app. */
const APPS = option('apps', null)?.split(',') ?? null;
/** A compiled middleware to measure instead of generating one (e.g. an older runtime, for a before/after). */
const MIDDLEWARE_DIR = option('middleware-dir', null);
/**
 * --rule-rate N: the one rule's rate per second, its burst 10^6 either way (every call admitted).
 * The default, 10^6 per second, gives an emission interval of 1 us: below a millisecond, so
 * gcra.lua reads the key's value (GET) as well as its expiry. A rate whose interval is whole
 * milliseconds (1,000 per second, 100, 10...) skips that read, as most stated rates do.
 */
const RULE_RATE = Number(option('rule-rate', 1_000_000));
const IN_FLIGHT = 50;

const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
if (!existsSync(join(root, 'dist', 'codegen', 'middleware', 'index.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}
const { Answers } = await import(dist('answers/schema.js'));
const { buildDesign } = await import(dist('design/build.js'));
const { generateExpressMiddleware } = await import(dist('codegen/middleware/index.js'));
// the Node bench's calls (they load dist, so only once it is known to be built)
const { admittedDecision, clientOptions, KEY_NAMES, KEYS, nodeCalls, ORDER_URLS, PATHS, run, URLS, VERIFIED } = await import(
  './node-calls.mjs'
);

/** One middleware rule: GCRA per API key (the ceiling sits at the edge), every call admitted. */
const ANSWERS = {
  project: { name: 'bench' },
  stack: { framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis', trustedProxies: [] },
  identities: ['api-key'],
  endpoints: [{ name: 'get-item', method: 'GET', route: '/v1/items/:id', class: 'read' }],
  traffic: { peakRps: 100_000 },
  rules: [{ id: 'fairness-per-api-key', rate: { requests: RULE_RATE, per: 'second' }, burst: 1_000_000 }],
};

// ---------------------------------------------------------------------------

/** The saas-platform example: per tenant, a fairness bucket and a monthly quota (and more rules on other routes). */
const SAAS_ANSWERS = JSON.parse(readFileSync(join(root, 'examples', 'saas-platform.answers.json'), 'utf8'));

async function compileMiddleware(answers) {
  const design = buildDesign(Answers.parse(answers), { date: '2026-01-01' });
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-mw-'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        rootDir: 'src',
        outDir: 'dist',
        types: ['node'],
      },
      include: ['src/**/*.ts'],
    }),
  );
  for (const f of generateExpressMiddleware(design)) {
    const target = join(dir, 'src', f.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content);
  }
  await exec(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')]);
  return { dir, out: join(dir, 'dist', 'middleware') };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
/** Round r runs the variants in a rotated order, so no variant always goes first or last. */
const rotated = (names, r) => names.map((_, i) => names[(i + r) % names.length]);

/**
 * Runs `total` calls with `inFlight` workers; returns ops/s, per-call latencies (ms), and CPU
 * per call in microseconds: this process (user + system) and, given an admin connection, Redis.
 * CPU time, unlike wall-clock throughput, holds up when other work shares the machine.
 */
async function drive(call, total, inFlight, admin, verify) {
  const latencies = new Float64Array(total);
  const redisBefore = admin ? await redisCpuUs(admin) : 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run(call, total, inFlight, verify, (i, ms) => {
    latencies[i] = ms;
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisCpu = admin ? (await redisCpuUs(admin)) - redisBefore : 0;
  latencies.sort();
  const q = (p) => latencies[Math.min(total - 1, Math.floor(p * total))];
  return {
    opsPerSec: total / seconds,
    p50: q(0.5),
    p99: q(0.99),
    nodeCpuUs: (cpu.user + cpu.system) / total,
    redisCpuUs: redisCpu / total,
  };
}

async function nodeBench(redisPort, out, saasOut, autoPipelining) {
  // ONE connection for the five calls, with the same options
  const client = new Redis(redisPort, '127.0.0.1', clientOptions(autoPipelining));
  const admin = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  const { calls, close } = await nodeCalls(client, out, saasOut, RULE_RATE);
  const rows = Object.fromEntries(Object.keys(calls).map((name) => [name, []]));
  // warm-up (JIT, script cache, connections)
  for (const f of Object.values(calls)) await drive(f, 20_000, IN_FLIGHT);
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of rotated(Object.keys(calls), r)) {
      const f = calls[name];
      await admin.flushall();
      const verify = VERIFIED.has(name) ? admittedDecision : undefined;
      const thr = await drive(f, DECISIONS, IN_FLIGHT, admin, verify);
      const one = await drive(f, Math.floor(DECISIONS / 5), 1, undefined, verify);
      rows[name].push({ ...thr, p50one: one.p50, p99one: one.p99 });
    }
    process.stderr.write(`node (${autoPipelining ? 'enableAutoPipelining' : 'defaults'}): round ${r + 1}/${ROUNDS} done, load ${load()}\n`);
  }
  close();
  await client.quit();
  await admin.quit();
  const summary = (name) => {
    const xs = rows[name];
    return {
      opsPerSec: median(xs.map((x) => x.opsPerSec)),
      all: xs.map((x) => x.opsPerSec),
      // ours against rate-limiter-flexible in the same round (saas-platform: against its two limiters)
      vsRlf: xs.map((x, i) => x.opsPerSec / rows[name === 'saas' ? 'rlfSaas' : 'rlf'][i].opsPerSec),
      p99at50: median(xs.map((x) => x.p99)),
      p50one: median(xs.map((x) => x.p50one)),
      p99one: median(xs.map((x) => x.p99one)),
      nodeCpuUs: median(xs.map((x) => x.nodeCpuUs)),
      redisCpuUs: median(xs.map((x) => x.redisCpuUs)),
    };
  };
  return { ours: summary('ours'), rlf: summary('rlf'), raw: summary('raw'), saas: summary('saas'), rlfSaas: summary('rlfSaas') };
}

/** The limiter's own JS (instant.mjs, in a fresh process): ns of Node CPU per decision, by round. */
async function instantBench(out) {
  const { stdout } = await exec(process.execPath, [join(here, 'instant.mjs'), out, String(DECISIONS * 5), String(ROUNDS)]);
  const rows = JSON.parse(stdout);
  return Object.fromEntries(Object.entries(rows).map(([k, xs]) => [k, { median: median(xs), all: xs }]));
}

// ---------------------------------------------------------------------------

/** One app of the HTTP table in its own process (under `wrapper`, e.g. callgrind, when given). */
async function startApp(mode, out, redisPort, saasOut, wrapper = []) {
  const command = [...wrapper, process.execPath, join(here, 'server.mjs'), mode, out, String(redisPort), saasOut];
  const child = spawn(command[0], command.slice(1), {
    stdio: ['pipe', 'pipe', wrapper.length > 0 ? 'ignore' : 'inherit'],
  });
  // the app answers "listening <port>" once, then "mark <cpu us> <served>" for each mark
  const line = lineReader(child.stdout, (l) => /^(listening|mark) /.test(l));
  const next = async () => {
    const words = (await line()).split(' ');
    return words[0] === 'listening' ? Number(words[1]) : { cpuUs: Number(words[1]), served: Number(words[2]) };
  };
  const port = await next();
  return {
    port,
    pid: child.pid,
    /** The app's CPU time (us) and requests served so far. */
    mark: () => {
      const p = next();
      child.stdin.write('mark\n');
      return p;
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('close', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** autocannon on an app: for `seconds` (at `rate` req/s when given), or `amount` requests over `connections`. */
async function loadApp(port, seconds, rate, urls = URLS, { amount = 0, connections = 50 } = {}) {
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    ...(amount > 0 ? { amount, timeout: 120 } : { duration: seconds }),
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => {
          const i = n++;
          return { ...req, path: urls[i % PATHS], headers: { ...req.headers, 'x-api-key': KEY_NAMES[i % KEYS] } };
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** The apps of the HTTP table, in its order (server.mjs knows each mode). */
const HTTP_ROWS = [
  ['bare', 'bare'],
  ['limited', 'one rule: the generated middleware (RateLimit headers)'],
  ['rlf', 'one rule: rate-limiter-flexible `consume()` as in its README (no headers)'],
  ['rlf-headers', 'one rule: rate-limiter-flexible `consume()`, plus the same two RateLimit headers set from its result'],
  ['erl', 'one rule: express-rate-limit + rate-limit-redis (draft-7 headers)'],
  ['floor', 'one rule, floor: a bare `evalsha` of gcra.lua per request, then next()'],
  ['saas-one', 'saas-platform: the generated middleware, one call per tenant (hybrid off)'],
  ['saas', 'saas-platform: the generated middleware as generated (in-process bucket, then the quota)'],
  ['rlf-saas', 'saas-platform: rate-limiter-flexible, rate then quota'],
  ['erl-saas', 'saas-platform: express-rate-limit + rate-limit-redis, rate and quota'],
];
/** The saas-platform apps serve its order route. */
const urlsOf = (mode) => (mode.includes('saas') ? ORDER_URLS : URLS);

async function httpBench(out, saasOut, redisPort) {
  const admin = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  const modes = HTTP_ROWS.map(([m]) => m);
  const rows = Object.fromEntries(modes.map((m) => [m, []]));
  // one process per app, started and warmed once; every round measures only its own requests
  const apps = {};
  for (const mode of modes) {
    apps[mode] = await startApp(mode, out, redisPort, saasOut);
    await loadApp(apps[mode].port, 3, 0, urlsOf(mode));
  }
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of rotated(modes, r)) {
        const app = apps[mode];
        const measure = async (seconds, rate) => {
          const before = await app.mark();
          const redisBefore = await redisCpuUs(admin);
          const result = await loadApp(app.port, seconds, rate, urlsOf(mode));
          const redisCpu = (await redisCpuUs(admin)) - redisBefore;
          const after = await app.mark();
          const served = after.served - before.served;
          return { ...result, appCpuUs: (after.cpuUs - before.cpuUs) / served, redisCpuUs: redisCpu / served };
        };
        const saturated = await measure(SECONDS, 0);
        const fixed = RATE > 0 ? await measure(Math.max(2, SECONDS / 2), RATE) : { rps: 0, p99: 0, appCpuUs: 0, redisCpuUs: 0 };
        rows[mode].push({ ...saturated, fixed });
      }
      process.stderr.write(`http: round ${r + 1}/${ROUNDS} done, load ${load()}\n`);
    }
  } finally {
    for (const app of Object.values(apps)) await app.stop();
    await admin.quit();
  }
  return Object.fromEntries(
    modes.map((m) => [
      m,
      {
        rps: median(rows[m].map((x) => x.rps)),
        p99: median(rows[m].map((x) => x.p99)),
        all: rows[m].map((x) => x.rps),
        // against the bare app in the same round
        costs: rows[m].map((x, i) => 1 - x.rps / rows.bare[i].rps),
        appCpuUs: median(rows[m].map((x) => x.appCpuUs)),
        redisCpuUs: median(rows[m].map((x) => x.redisCpuUs)),
        fixed: {
          rps: median(rows[m].map((x) => x.fixed.rps)),
          appCpuUs: median(rows[m].map((x) => x.fixed.appCpuUs)),
          redisCpuUs: median(rows[m].map((x) => x.fixed.redisCpuUs)),
          // (app + Redis) CPU per request against the bare app's in the same round
          costs: rows[m].map(
            (x, i) => 1 - (rows.bare[i].fixed.appCpuUs + rows.bare[i].fixed.redisCpuUs) / (x.fixed.appCpuUs + x.fixed.redisCpuUs),
          ),
          p99: median(rows[m].map((x) => x.fixed.p99)),
        },
      },
    ]),
  );
}

/** The apps counted by --instructions: the HTTP table's, and the floor with the generated headers. */
const INSTRUCTION_ROWS = [
  ...HTTP_ROWS.slice(0, 6),
  ['floor-headers', 'one rule, floor with headers: the bare `evalsha`, plus the two RateLimit headers the middleware sends'],
  ...HTTP_ROWS.slice(6),
];

/**
 * --instructions: instructions per request, counted by callgrind in the app's process and in
 * redis-server's (both run under valgrind), for each app of the HTTP table. One connection, so
 * every app sees the same requests in the same order, one at a time: no batching that depends on
 * timing. Each app is warmed with REQUESTS requests uncounted, then REQUESTS are counted.
 */
async function instructionsBench(out, saasOut) {
  const work = mkdtempSync(join(tmpdir(), 'rl-bench-callgrind-'));
  const redisOut = join(work, 'redis');
  const server = await startRedis({
    extraArgs: ['--maxmemory-policy', 'noeviction'],
    wrapper: callgrindWrapper(redisOut, REDIS_REQUEST_WORK),
    readyMs: 60_000,
  });
  const admin = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
  const rows = {};
  try {
    for (const [mode] of INSTRUCTION_ROWS.filter(([m]) => APPS === null || m === 'bare' || APPS.includes(m))) {
      await admin.flushall();
      const appOut = join(work, mode);
      const app = await startApp(mode, out, server.port, saasOut, callgrindWrapper(appOut));
      try {
        const requests = { amount: REQUESTS, connections: 1 };
        await loadApp(app.port, 0, 0, urlsOf(mode), requests);
        const { instructions } = await counting(
          [
            { pid: app.pid, outFile: appOut },
            { pid: server.pid, outFile: redisOut },
          ],
          () => loadApp(app.port, 0, 0, urlsOf(mode), requests),
        );
        rows[mode] = { app: instructions[0] / REQUESTS, redis: instructions[1] / REQUESTS };
      } finally {
        await app.stop();
      }
      process.stderr.write(`instructions: ${mode} ${fmt(rows[mode].app)} + ${fmt(rows[mode].redis)} per request, load ${load()}\n`);
    }
  } finally {
    await admin.quit();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** Decisions counted per call by --instructions --only node, at 50 in flight (a quarter of it at 1). */
const COUNTED = Number(option('counted', 20_000));
/** --calls ours,rlf,...: count only these calls of node-calls.mjs (--instructions --only node). */
const CALLS = option('calls', 'raw,rlf,ours,rlfSaas,saas').split(',');
/** --clients defaults,pipelining: the ioredis configurations counted. */
const CLIENTS = option('clients', 'defaults,pipelining')
  .split(',')
  .map((c) => (c === 'pipelining' ? '1' : '0'));

/**
 * --instructions, the Node half: each call of node-calls.mjs in a process of its own under
 * callgrind (started uninstrumented), on a redis-server that is not; per client configuration,
 * the instructions the Node process executes per decision, counted over COUNTED decisions at 50
 * in flight after as many uncounted, and over COUNTED / 4 at 1 in flight. At 1 in flight every
 * decision is one write and one read; at 50 how replies batch per read depends on timing, so
 * that column moves from run to run by a few percent. Neither sees the kernel's time (write(2),
 * the loopback), which the timed rows do.
 */
async function nodeInstructionsBench(out, saasOut) {
  const work = mkdtempSync(join(tmpdir(), 'rl-bench-callgrind-node-'));
  const server = await startRedis({ extraArgs: ['--maxmemory-policy', 'noeviction'] });
  const admin = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
  const rows = {};
  try {
    for (const pipelining of CLIENTS) {
      for (const name of CALLS) {
        const outFile = join(work, `${name}-${pipelining}`);
        const command = [
          ...callgrindWrapper(outFile),
          process.execPath,
          join(here, 'node-child.mjs'),
          out,
          saasOut,
          String(server.port),
          name,
          pipelining,
          String(RULE_RATE),
        ];
        const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
        const next = lineReader(child.stdout);
        const ask = (line) => {
          const answer = next();
          child.stdin.write(`${line}\n`);
          return answer;
        };
        try {
          if ((await next()) !== 'ready') throw new Error(`node-child ${name} did not start`);
          await admin.flushall();
          await ask(`${COUNTED} ${IN_FLIGHT}`);
          await admin.flushall();
          const processes = [{ pid: child.pid, outFile }];
          const at50 = await counting(processes, () => ask(`${COUNTED} ${IN_FLIGHT}`));
          const at1 = await counting(processes, () => ask(`${COUNTED / 4} 1`));
          rows[`${name}-${pipelining}`] = { at50: at50.instructions[0] / COUNTED, at1: at1.instructions[0] / (COUNTED / 4) };
          await ask('quit').catch(() => undefined);
        } finally {
          child.kill();
        }
        const r = rows[`${name}-${pipelining}`];
        process.stderr.write(
          `instructions: ${name} (${pipelining === '1' ? 'auto-pipelining' : 'defaults'}) ${fmt(r.at50)} at 50, ${fmt(r.at1)} at 1, load ${load()}\n`,
        );
      }
    }
  } finally {
    await admin.quit();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** Lines a child writes (those `accept` takes, when given), one promise each; 'closed' once it has ended. */
function lineReader(stream, accept = () => true) {
  let text = '';
  const waiters = [];
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    text += chunk;
    let nl;
    while ((nl = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      if (accept(line)) waiters.shift()?.(line);
    }
  });
  stream.on('close', () => {
    for (const w of waiters.splice(0)) w('closed');
  });
  return () => new Promise((resolve) => waiters.push(resolve));
}

/** The Node half's --instructions table and its summary line. */
function nodeInstructionsTable(rows) {
  const LABELS = [
    ['ours', 'generated middleware `limiter.check()`', 'rlf'],
    ['rlf', 'rate-limiter-flexible `RateLimiterRedis.consume()`', 'rlf'],
    ['raw', 'floor: bare `evalsha` of gcra.lua', 'rlf'],
    ['saas', 'saas-platform tenant (fairness + quota): generated `limiter.check()`, one call', 'rlfSaas'],
    ['rlfSaas', 'saas-platform tenant: rate-limiter-flexible, rate then quota', 'rlfSaas'],
  ];
  const clients = [
    ['0', 'defaults'],
    ['1', 'enableAutoPipelining'],
  ];
  // "x rlf" as in the timed table: above 1 when ours does less (rlf's count over ours)
  const x = (name, ref, p, at) => (rows[`${ref}-${p}`] ? fmt(rows[`${ref}-${p}`][at] / rows[`${name}-${p}`][at], 2) : '-');
  return [
    `#### Node decisions by instructions: the Node process alone, each call in its own process (valgrind callgrind; ${fmt(COUNTED)} decisions at ${IN_FLIGHT} in flight after as many uncounted, ${fmt(COUNTED / 4)} at 1)`,
    '',
    `| ioredis client | limiter call | instructions/decision, ${IN_FLIGHT} in flight | x rlf | instructions/decision, 1 in flight | x rlf |`,
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...clients.flatMap(([p, client]) =>
      LABELS.filter(([name]) => rows[`${name}-${p}`] !== undefined).map(
        ([name, label, ref]) =>
          `| ${client} | ${label} | ${fmt(rows[`${name}-${p}`].at50)} | ${x(name, ref, p, 'at50')} | ${fmt(rows[`${name}-${p}`].at1)} | ${x(name, ref, p, 'at1')} |`,
      ),
    ),
    ...(rows['ours-0'] && rows['rlf-0'] && rows['raw-0']
      ? [
          '',
          `Above the bare evalsha (defaults, 1 in flight): the middleware ${fmt(rows['ours-0'].at1 - rows['raw-0'].at1)}, rate-limiter-flexible ${fmt(rows['rlf-0'].at1 - rows['raw-0'].at1)} instructions per decision.`,
        ]
      : []),
  ];
}

/** The --instructions table and its summary lines. */
function instructionsTable(rows) {
  const total = (m) => rows[m].app + rows[m].redis;
  const pct = (x) => `${fmt(x * 100, 1)}%`;
  const cost = (m) => total(m) / total('bare') - 1;
  const over = (m) => total(m) - total('bare');
  const vs = (m, peer) => `${fmt(over(m) / over(peer), 2)}x ${peer}'s`;
  const have = (...modes) => modes.every((m) => rows[m] !== undefined);
  return [
    `#### HTTP by instructions: Express 5 app, one connection, ${fmt(REQUESTS)} requests counted after ${fmt(REQUESTS)} uncounted (valgrind callgrind, app and redis-server)`,
    '',
    '| app | app instructions/request | Redis instructions/request | both | more than bare |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...INSTRUCTION_ROWS.filter(([m]) => have(m)).map(([m, label]) => {
      const r = rows[m];
      return `| ${label} | ${fmt(r.app)} | ${fmt(r.redis)} | ${fmt(total(m))} | ${m === 'bare' ? '-' : `${fmt(over(m))} (${pct(cost(m))})`} |`;
    }),
    '',
    ...(have('bare', 'limited', 'rlf', 'erl', 'floor', 'floor-headers')
      ? [
          `One rule, instructions a request costs over the bare app (app + Redis): the middleware ${fmt(over('limited'))}, ${vs('limited', 'rlf')} (${fmt(over('rlf'))}) and ${vs('limited', 'erl')} (${fmt(over('erl'))}); the floor ${fmt(over('floor'))}, with headers ${fmt(over('floor-headers'))}.`,
        ]
      : []),
    ...(have('bare', 'limited', 'rlf-headers')
      ? [`With the same two headers on both sides: the middleware ${vs('limited', 'rlf-headers')} (${fmt(over('rlf-headers'))}).`]
      : []),
    ...(have('bare', 'saas-one', 'saas', 'rlf-saas', 'erl-saas')
      ? [
          `saas-platform: one call per tenant ${fmt(over('saas-one'))}, as generated ${fmt(over('saas'))}; ${vs('saas-one', 'rlf-saas')} (${fmt(over('rlf-saas'))}), ${vs('saas-one', 'erl-saas')} (${fmt(over('erl-saas'))}).`,
        ]
      : []),
  ];
}

// ---------------------------------------------------------------------------

const { dir, out } = MIDDLEWARE_DIR ? { dir: null, out: MIDDLEWARE_DIR } : await compileMiddleware(ANSWERS);
const saas = await compileMiddleware(SAAS_ANSWERS);
if (INSTRUCTIONS) {
  try {
    const tables = [];
    if (ONLY === 'all' || ONLY === 'node') tables.push(...nodeInstructionsTable(await nodeInstructionsBench(out, saas.out)), '');
    if (ONLY === 'all' || ONLY === 'http') tables.push(...instructionsTable(await instructionsBench(out, saas.out)));
    console.log(
      [`Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'CPU'}. Load average at the end: ${load()}.`, '', ...tables].join(
        '\n',
      ),
    );
  } finally {
    rmSync(saas.dir, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
const redis = await startRedis({ extraArgs: ['--maxmemory-policy', 'noeviction'] });
const startLoad = load();
const lines = [];
const ms = (x) => fmt(x, 3);
const ratio = (x) => fmt(x, 2);
try {
  lines.push(
    `Node ${process.version}, Redis ${redis.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'CPU'}; ioredis over loopback; the one rule ${fmt(RULE_RATE)} per second (burst 1,000,000); ${ROUNDS} rounds interleaved, median. Load average at start: ${startLoad}.`,
    '',
  );
  const summary = [];
  if (ONLY === 'all' || ONLY === 'node') {
    const plain = await nodeBench(redis.port, out, saas.out, false);
    const piped = await nodeBench(redis.port, out, saas.out, true);
    const instant = await instantBench(out);
    const nodeRow = (client, name, r, ref) =>
      `| ${client} | ${name} | ${fmt(r.opsPerSec)} | ${ratio(r.opsPerSec / ref.opsPerSec)} | ${r.all.map((x) => fmt(x)).join(', ')} | ${fmt(r.nodeCpuUs, 1)} | ${fmt(r.redisCpuUs, 1)} | ${ratio(ref.nodeCpuUs / r.nodeCpuUs)} | ${ms(r.p50one)} / ${ms(r.p99one)} | ${ms(r.p99at50)} |`;
    lines.push(
      `#### Node decision throughput (${IN_FLIGHT} calls in flight, ${fmt(KEYS)} keys, ${fmt(PATHS)} URLs, ${fmt(DECISIONS)} decisions per round, all admitted)`,
      '',
      '| ioredis client | limiter call | decisions/s | x rlf | rounds | Node CPU us/decision | Redis CPU us/decision | x rlf by Node CPU | p50 / p99, 1 in flight (ms) | p99, 50 in flight (ms) |',
      '| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
      ...[
        ['defaults', plain],
        ['enableAutoPipelining', piped],
      ].flatMap(([client, r]) => [
        nodeRow(client, 'generated middleware `limiter.check()`', r.ours, r.rlf),
        nodeRow(client, 'rate-limiter-flexible `RateLimiterRedis.consume()`', r.rlf, r.rlf),
        nodeRow(client, 'floor: bare `evalsha` of gcra.lua', r.raw, r.rlf),
        nodeRow(client, 'saas-platform tenant (fairness + quota): generated `limiter.check()`, one call', r.saas, r.rlfSaas),
        nodeRow(client, 'saas-platform tenant: rate-limiter-flexible, rate then quota', r.rlfSaas, r.rlfSaas),
      ]),
      '',
      `Ours / rate-limiter-flexible by round (back to back in the same round): ${plain.ours.vsRlf.map(ratio).join(', ')} (defaults); ${piped.ours.vsRlf.map(ratio).join(', ')} (enableAutoPipelining). saas-platform: ${plain.saas.vsRlf.map(ratio).join(', ')} (defaults); ${piped.saas.vsRlf.map(ratio).join(', ')} (enableAutoPipelining).`,
      '',
      `#### The limiter's own code: Node CPU per decision with a client that answers at once (${fmt(DECISIONS * 5)} decisions per round)`,
      '',
      '| limiter call | ns/decision (median) | rounds |',
      '| --- | ---: | --- |',
      `| generated middleware \`limiter.check()\` | ${fmt(instant.ours.median)} | ${instant.ours.all.map((x) => fmt(x)).join(', ')} |`,
      `| rate-limiter-flexible \`consume()\` | ${fmt(instant.rlf.median)} | ${instant.rlf.all.map((x) => fmt(x)).join(', ')} |`,
      `| floor: the client call alone | ${fmt(instant.floor.median)} | ${instant.floor.all.map((x) => fmt(x)).join(', ')} |`,
      '',
    );
    const x = (r) => r.ours.opsPerSec / r.rlf.opsPerSec;
    const xs = (r) => r.saas.opsPerSec / r.rlfSaas.opsPerSec;
    summary.push(
      `Node throughput vs rate-limiter-flexible, same client: ${ratio(x(plain))}x (defaults), ${ratio(x(piped))}x (auto-pipelining); the median of each round's own ratio (both measured in the same round, so a change in the host's speed from one round to the next does not skew it) ${ratio(median(plain.ours.vsRlf))}x / ${ratio(median(piped.ours.vsRlf))}x; by Node CPU per decision ${ratio(plain.rlf.nodeCpuUs / plain.ours.nodeCpuUs)}x / ${ratio(piped.rlf.nodeCpuUs / piped.ours.nodeCpuUs)}x (target: at least 1x: ${x(plain) >= 1 && x(piped) >= 1 ? 'met' : 'not met'}). saas-platform tenant vs rate-limiter-flexible's two limiters: ${ratio(xs(plain))}x / ${ratio(xs(piped))}x.`,
      `p99 of one limiter call, 1 in flight: ${ms(plain.ours.p99one)} ms (defaults), ${ms(piped.ours.p99one)} ms (auto-pipelining) (target: under 1 ms: ${Math.max(plain.ours.p99one, piped.ours.p99one) < 1 ? 'met' : 'not met'}).`,
    );
  }
  if (ONLY === 'all' || ONLY === 'http') {
    const http = await httpBench(out, saas.out, redis.port);
    const cost = (m) => 1 - http[m].rps / http.bare.rps;
    // throughput a CPU-bound box keeps: bare CPU per request over CPU per request with the limiter
    const cpuPerReq = (m) => http[m].appCpuUs + http[m].redisCpuUs;
    const cpuCost = (m) => 1 - cpuPerReq('bare') / cpuPerReq(m);
    const fixedCpu = (m) => http[m].fixed.appCpuUs + http[m].fixed.redisCpuUs;
    const fixedCost = (m) => 1 - fixedCpu('bare') / fixedCpu(m);
    const pct = (x) => `${fmt(x * 100, 1)}%`;
    lines.push(
      `#### HTTP: Express 5 app, one route, ${fmt(PATHS)} URLs, 10,000 API keys (autocannon, 50 connections, ${SECONDS} s per round)`,
      '',
      '| app | req/s (median) | rounds | cost vs bare (req/s) | cost by round | app CPU us/req | Redis CPU us/req | cost vs bare (CPU per request) | p99 latency (ms) |',
      '| --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |',
      ...HTTP_ROWS.map(([m, label]) => {
        const r = http[m];
        const bare = m === 'bare';
        return `| ${label} | ${fmt(r.rps)} | ${r.all.map((v) => fmt(v)).join(', ')} | ${bare ? '-' : pct(cost(m))} | ${bare ? '-' : r.costs.map(pct).join(', ')} | ${fmt(r.appCpuUs, 1)} | ${fmt(r.redisCpuUs, 1)} | ${bare ? '-' : pct(cpuCost(m))} | ${r.p99} |`;
      }),
      '',
      ...(RATE > 0
        ? [
            `#### HTTP at a fixed load: ${fmt(RATE)} req/s for every app (${fmt(Math.max(2, SECONDS / 2))} s per round, same rounds)`,
            '',
            '| app | req/s served | app CPU us/req | Redis CPU us/req | cost vs bare (CPU per request) | cost by round | p99 latency (ms) |',
            '| --- | ---: | ---: | ---: | ---: | --- | ---: |',
            ...HTTP_ROWS.map(([m, label]) => {
              const f = http[m].fixed;
              const bare = m === 'bare';
              return `| ${label} | ${fmt(f.rps)} | ${fmt(f.appCpuUs, 1)} | ${fmt(f.redisCpuUs, 1)} | ${bare ? '-' : pct(fixedCost(m))} | ${bare ? '-' : f.costs.map(pct).join(', ')} | ${f.p99} |`;
            }),
            '',
          ]
        : ['(No fixed-load table: --rate 0.)', '']),
    );
    const vs = (m, peer) =>
      `${cost(m) <= cost(peer) ? 'at most' : 'more than'} ${peer} by req/s, ${cpuCost(m) <= cpuCost(peer) ? 'at most' : 'more than'} by CPU`;
    summary.unshift(
      `One rule, cost vs bare (req/s / CPU per request, app + Redis): the middleware ${pct(cost('limited'))} / ${pct(cpuCost('limited'))}; rate-limiter-flexible ${pct(cost('rlf'))} / ${pct(cpuCost('rlf'))}, with the same two headers ${pct(cost('rlf-headers'))} / ${pct(cpuCost('rlf-headers'))}; express-rate-limit + rate-limit-redis ${pct(cost('erl'))} / ${pct(cpuCost('erl'))}; a bare EVALSHA (floor) ${pct(cost('floor'))} / ${pct(cpuCost('floor'))}. Ours: ${vs('limited', 'rlf')}; ${vs('limited', 'rlf-headers')}; ${vs('limited', 'erl')}.`,
      `saas-platform, cost vs bare: the middleware with one call per tenant ${pct(cost('saas-one'))} / ${pct(cpuCost('saas-one'))}, as generated ${pct(cost('saas'))} / ${pct(cpuCost('saas'))}; rate-limiter-flexible ${pct(cost('rlf-saas'))} / ${pct(cpuCost('rlf-saas'))}; express-rate-limit + rate-limit-redis ${pct(cost('erl-saas'))} / ${pct(cpuCost('erl-saas'))}. One call per tenant: ${vs('saas-one', 'rlf-saas')}; ${vs('saas-one', 'erl-saas')}.`,
      ...(RATE > 0
        ? [
            `At a fixed ${fmt(RATE)} req/s, by CPU per request: the middleware ${pct(fixedCost('limited'))}; rate-limiter-flexible ${pct(fixedCost('rlf'))}; express-rate-limit ${pct(fixedCost('erl'))}; a bare EVALSHA ${pct(fixedCost('floor'))}; saas-platform one call ${pct(fixedCost('saas-one'))}, rlf ${pct(fixedCost('rlf-saas'))}, erl ${pct(fixedCost('erl-saas'))}.`,
          ]
        : []),
    );
  }
  lines.push(...summary, '', `Load average at the end: ${load()}.`);
  console.log(lines.join('\n'));
} finally {
  await redis.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

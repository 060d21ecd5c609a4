#!/usr/bin/env node
/**
 * What the generated middleware costs, on one redis-server this script starts (free loopback
 * port, no persistence) and stops. Run by hand, never from the tests:
 *
 *   npm run build && node bench/middleware/run.mjs [--decisions 100000] [--rounds 3] [--seconds 8]
 *
 * 1. Node decision throughput: 50 calls in flight, over 10,000 keys, all admitted:
 *    - ours: limiter.check() of the generated core (route match, identity, key, EVALSHA of
 *      gcra.lua with timeout, metrics, header choice),
 *    - rate-limiter-flexible: RateLimiterRedis.consume() (its own Lua script via EVALSHA),
 *    - raw: ioredis evalsha of gcra.lua and nothing else (the floor for any Node caller).
 *    Same ioredis connection options for all three; rounds interleaved; median of rounds.
 * 2. Latency of one limiter call on loopback: p50/p99 with 1 call in flight (the cost a
 *    request pays) and with 50 in flight (queueing included).
 * 3. HTTP throughput of an Express app with and without the middleware: autocannon, 50
 *    connections, the app in a child process, rounds interleaved; median req/s.
 *
 * The machine runs everything (Redis, the app, the load generator) on the same cores, so
 * the HTTP row includes Redis's CPU: it is the cost of the limiter as deployed on one box.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { RateLimiterRedis } from 'rate-limiter-flexible';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const exec = promisify(execFile);

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DECISIONS = option('decisions', 100_000);
const ROUNDS = option('rounds', 3);
const SECONDS = option('seconds', 8);
const IN_FLIGHT = 50;
const KEYS = 10_000;

const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
if (!existsSync(join(root, 'dist', 'codegen', 'middleware', 'index.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}
const { Answers } = await import(dist('answers/schema.js'));
const { buildDesign } = await import(dist('design/build.js'));
const { generateExpressMiddleware } = await import(dist('codegen/middleware/index.js'));
const { luaScript } = await import(dist('codegen/lua.js'));

/** One middleware rule: GCRA per API key (the ceiling sits at the edge), every call admitted. */
const ANSWERS = {
  project: { name: 'bench' },
  stack: { framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis', trustedProxies: [] },
  identities: ['api-key'],
  endpoints: [{ name: 'get-item', method: 'GET', route: '/v1/items/:id', class: 'read' }],
  traffic: { peakRps: 100_000 },
  rules: [{ id: 'fairness-per-api-key', rate: { requests: 1_000_000, per: 'second' }, burst: 1_000_000 }],
};

// ---------------------------------------------------------------------------

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-mw-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (let i = 0; ; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      if (i > 200) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  probe.disconnect();
  const { stdout } = await exec('redis-server', ['--version']);
  return {
    port,
    version: /v=(\S+)/.exec(stdout)?.[1] ?? '?',
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function compileMiddleware() {
  const design = buildDesign(Answers.parse(ANSWERS), { date: '2026-01-01' });
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-mw-'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, rootDir: 'src', outDir: 'dist', types: ['node'] },
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

// ---------------------------------------------------------------------------

/** Redis's own CPU time so far (user + system), in microseconds. */
async function redisCpuUs(admin) {
  const info = await admin.info('cpu');
  const get = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return (get('used_cpu_user') + get('used_cpu_sys')) * 1e6;
}

/**
 * Runs `total` calls with `inFlight` workers; returns ops/s, per-call latencies (ms), and CPU
 * per call in microseconds: this process (user + system) and, given an admin connection, Redis.
 * CPU time, unlike wall-clock throughput, holds up when other work shares the machine.
 */
async function drive(call, total, inFlight, admin) {
  const latencies = new Float64Array(total);
  let next = 0;
  const redisBefore = admin ? await redisCpuUs(admin) : 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = performance.now();
        await call(i);
        latencies[i] = performance.now() - t0;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisCpu = admin ? (await redisCpuUs(admin)) - redisBefore : 0;
  latencies.sort();
  const q = (p) => latencies[Math.min(total - 1, Math.floor(p * total))];
  return { opsPerSec: total / seconds, p50: q(0.5), p99: q(0.99), nodeCpuUs: (cpu.user + cpu.system) / total, redisCpuUs: redisCpu / total };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

async function nodeBench(redisPort, out, autoPipelining) {
  const core = await import(pathToFileURL(join(out, 'ratelimit-core.js')).href);
  const client = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1, enableAutoPipelining: autoPipelining });
  const admin = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  const limiter = core.createLimiter({
    redis: client,
    registry: new Registry(),
    defaultMode: 'enforce',
    identify: (req) => ({ apiKey: req.k }),
  });
  const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  const reqs = keys.map((k) => ({ k }));
  const ours = (i) =>
    limiter.check({ method: 'GET', url: '/v1/items/42', remoteAddress: '127.0.0.1', forwardedFor: undefined, req: reqs[i % KEYS] }).then((d) => {
      if (d.status !== 200) throw new Error(`ours refused: ${d.status}`);
    });
  const rlf = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
  const theirs = (i) => rlf.consume(keys[i % KEYS]);
  const gcra = luaScript('gcra');
  await client.script('LOAD', gcra.source);
  const raw = (i) => client.evalsha(gcra.sha1, 1, `raw:{${keys[i % KEYS]}}`, 1_000_000, 1_000_000, 1000, 1);

  const rows = { ours: [], rlf: [], raw: [] };
  const calls = { ours, rlf: theirs, raw };
  // warm-up (JIT, script cache, connections)
  for (const f of Object.values(calls)) await drive(f, 20_000, IN_FLIGHT);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, f] of Object.entries(calls)) {
      await admin.flushall();
      const thr = await drive(f, DECISIONS, IN_FLIGHT, admin);
      const one = await drive(f, Math.floor(DECISIONS / 5), 1);
      rows[name].push({ ...thr, p50one: one.p50, p99one: one.p99 });
    }
  }
  limiter.close();
  await client.quit();
  await admin.quit();
  const summary = (name) => {
    const xs = rows[name];
    return {
      opsPerSec: median(xs.map((x) => x.opsPerSec)),
      all: xs.map((x) => x.opsPerSec),
      p99at50: median(xs.map((x) => x.p99)),
      p50one: median(xs.map((x) => x.p50one)),
      p99one: median(xs.map((x) => x.p99one)),
      nodeCpuUs: median(xs.map((x) => x.nodeCpuUs)),
      redisCpuUs: median(xs.map((x) => x.redisCpuUs)),
    };
  };
  return { ours: summary('ours'), rlf: summary('rlf'), raw: summary('raw') };
}

async function startApp(mode, out, redisPort) {
  const child = spawn(process.execPath, [join(here, 'server.mjs'), mode, out, String(redisPort)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let text = '';
  const waiters = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    text += chunk;
    let nl;
    while ((nl = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      const m = /^mark (\d+) (\d+)$/.exec(line);
      if (m) waiters.shift()?.({ cpuUs: Number(m[1]), served: Number(m[2]) });
      const l = /^listening (\d+)$/.exec(line);
      if (l) waiters.shift()?.(Number(l[1]));
    }
  });
  const next = () => new Promise((resolve) => waiters.push(resolve));
  const port = await next();
  return {
    port,
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

async function load(port, seconds) {
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 50,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path: '/v1/items/42',
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-api-key': `key-${n++ % KEYS}` } }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

const MODES = ['bare', 'limited', 'limited-plain'];

async function httpBench(out, redisPort) {
  const admin = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  const rows = Object.fromEntries(MODES.map((m) => [m, []]));
  // one process per variant, started and warmed once; every round measures only its own requests
  const apps = {};
  for (const mode of MODES) {
    apps[mode] = await startApp(mode, out, redisPort);
    await load(apps[mode].port, 3);
  }
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) {
        const app = apps[mode];
        const before = await app.mark();
        const redisBefore = await redisCpuUs(admin);
        const result = await load(app.port, SECONDS);
        const redisCpu = (await redisCpuUs(admin)) - redisBefore;
        const after = await app.mark();
        const served = after.served - before.served;
        rows[mode].push({ ...result, appCpuUs: (after.cpuUs - before.cpuUs) / served, redisCpuUs: redisCpu / served });
      }
    }
  } finally {
    for (const app of Object.values(apps)) await app.stop();
    await admin.quit();
  }
  return Object.fromEntries(
    MODES.map((m) => [
      m,
      {
        rps: median(rows[m].map((x) => x.rps)),
        p99: median(rows[m].map((x) => x.p99)),
        all: rows[m].map((x) => x.rps),
        appCpuUs: median(rows[m].map((x) => x.appCpuUs)),
        redisCpuUs: median(rows[m].map((x) => x.redisCpuUs)),
      },
    ]),
  );
}

// ---------------------------------------------------------------------------

const { dir, out } = await compileMiddleware();
const redis = await startRedis();
try {
  const plain = await nodeBench(redis.port, out, false);
  const piped = await nodeBench(redis.port, out, true);
  const http = await httpBench(out, redis.port);
  const cost = (m) => 1 - http[m].rps / http.bare.rps;
  // throughput a CPU-bound box keeps: bare CPU per request over CPU per request with the limiter
  const cpuPerReq = (m) => http[m].appCpuUs + http[m].redisCpuUs;
  const cpuCost = (m) => 1 - cpuPerReq('bare') / cpuPerReq(m);
  const ms = (x) => fmt(x, 3);
  const nodeRow = (client, name, r, ref) =>
    `| ${client} | ${name} | ${fmt(r.opsPerSec)} | ${fmt(r.opsPerSec / ref.opsPerSec, 2)} | ${r.all.map((x) => fmt(x)).join(', ')} | ${fmt(r.nodeCpuUs, 1)} | ${fmt(r.redisCpuUs, 1)} | ${fmt(ref.nodeCpuUs / r.nodeCpuUs, 2)} | ${ms(r.p50one)} / ${ms(r.p99one)} | ${ms(r.p99at50)} |`;
  const lines = [
    `Node ${process.version}, Redis ${redis.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'CPU'}, load average at start ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ioredis over loopback; ${ROUNDS} rounds interleaved, median.`,
    '',
    `### Node decision throughput (${IN_FLIGHT} calls in flight, ${fmt(KEYS)} keys, ${fmt(DECISIONS)} decisions per round, all admitted)`,
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
    ]),
    '',
    `### HTTP: Express 5 app, one route, with and without the middleware (autocannon, 50 connections, ${SECONDS} s per round)`,
    '',
    '| app | req/s (median) | rounds | cost vs bare (req/s) | app CPU us/req | Redis CPU us/req | cost vs bare (CPU per request) | p99 latency (ms) |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    ...[
      ['bare', 'bare'],
      ['with the middleware (ioredis enableAutoPipelining, as recommended)', 'limited'],
      ['with the middleware (ioredis defaults)', 'limited-plain'],
    ].map(
      ([label, m]) =>
        `| ${label} | ${fmt(http[m].rps)} | ${http[m].all.map((x) => fmt(x)).join(', ')} | ${m === 'bare' ? '-' : fmt(cost(m) * 100, 1) + '%'} | ${fmt(http[m].appCpuUs, 1)} | ${fmt(http[m].redisCpuUs, 1)} | ${m === 'bare' ? '-' : fmt(cpuCost(m) * 100, 1) + '%'} | ${http[m].p99} |`,
    ),
    '',
    `Middleware cost (recommended client): ${fmt(cost('limited') * 100, 1)}% of the bare app's req/s; ${fmt(cpuCost('limited') * 100, 1)}% by CPU per request (target: at most 15%).`,
    `Node throughput vs rate-limiter-flexible, same client: ${fmt(plain.ours.opsPerSec / plain.rlf.opsPerSec, 2)}x (defaults), ${fmt(piped.ours.opsPerSec / piped.rlf.opsPerSec, 2)}x (auto-pipelining); by Node CPU per decision ${fmt(plain.rlf.nodeCpuUs / plain.ours.nodeCpuUs, 2)}x / ${fmt(piped.rlf.nodeCpuUs / piped.ours.nodeCpuUs, 2)}x (target: at least 1x).`,
    `p99 of one limiter call, 1 in flight: ${ms(plain.ours.p99one)} ms (target: under 1 ms).`,
  ];
  console.log(lines.join('\n'));
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}

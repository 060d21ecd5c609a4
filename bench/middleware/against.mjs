/**
 * This build's one-rule limiter beside another build's, in ONE process, on one ioredis client,
 * rounds alternated, with rate-limiter-flexible as the yardstick: for measuring a change of the
 * runtime side by side under the same load (a shared machine's noise hits both alike).
 *
 *   npm run build                                   # here, and in the other checkout:
 *   git worktree add --detach /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
 *   node bench/middleware/against.mjs --against /tmp/before [--pipelining] [--second-limiter]
 *     [--rounds 7] [--decisions 50000]
 *
 * --second-limiter also runs a saas-platform limiter of each build beside its one-rule limiter
 * (as bench/middleware/run.mjs does, and as an application with two designs would): code shared
 * by two limiters must not slow either down. Prints decisions/s and Node CPU per decision, and each
 * build's ratio to rate-limiter-flexible by round and at the median.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { startRedis } from '../redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const against = arg('against', undefined);
if (!against) {
  console.error('usage: node bench/middleware/against.mjs --against <other checkout, built> [--pipelining] [--second-limiter]');
  process.exit(2);
}
const ROUNDS = Number(arg('rounds', 7));
const N = Number(arg('decisions', 50_000));
const pipelining = process.argv.includes('--pipelining');
const roots = { this: join(here, '..', '..', 'dist'), other: join(resolve(against), 'dist') };
const ANSWERS = {
  project: { name: 'bench' },
  stack: { framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis', trustedProxies: [] },
  identities: ['api-key'],
  endpoints: [{ name: 'get-item', method: 'GET', route: '/v1/items/:id', class: 'read' }],
  traffic: { peakRps: 100_000 },
  rules: [{ id: 'fairness-per-api-key', rate: { requests: 1_000_000_000, per: 'minute' }, burst: 1_000_000_000 }],
};
const server = await startRedis();
const client = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1, enableAutoPipelining: pipelining });
const KEYS = Array.from({ length: 10_000 }, (_, i) => `key-${i}`);
const REQS = KEYS.map((k) => ({ k }));
const URLS = Array.from({ length: 1000 }, (_, i) => `/v1/items/${i}`);
const ORDER_URLS = Array.from({ length: 1000 }, (_, i) => `/v1/orders/${i}`);
const calls = {};
for (const [name, dist] of Object.entries(roots)) {
  const load = (file) => import(pathToFileURL(join(dist, file)).href);
  const { Answers } = await load('answers/schema.js');
  const { buildDesign } = await load('design/build.js');
  const { compileDesign, designData } = await load('codegen/middleware/index.js');
  const { createLimiter } = await load('runtime/middleware/limiter.js');
  const limiterOf = (answers, identify) =>
    createLimiter(designData(compileDesign(buildDesign(Answers.parse(answers), { date: '2026-01-01' }))), {
      redis: client,
      registry: new Registry(),
      defaultMode: 'enforce',
      keyPrefix: `rl-${name}`,
      hybrid: false,
      identify,
    });
  const limiter = limiterOf(ANSWERS, (req) => ({ apiKey: req.k }));
  calls[name] = (i) =>
    limiter.check({ method: 'GET', url: URLS[i % 1000], remoteAddress: '127.0.0.1', forwardedFor: undefined, req: REQS[i % 10_000] });
  if (process.argv.includes('--second-limiter')) {
    const saasAnswers = JSON.parse(readFileSync(join(here, '..', '..', 'examples', 'saas-platform.answers.json'), 'utf8'));
    const saas = limiterOf(saasAnswers, (req) => ({ tenantId: req.k, plan: 'Enterprise' }));
    calls[`${name}, saas-platform`] = (i) =>
      saas.check({ method: 'GET', url: ORDER_URLS[i % 1000], remoteAddress: '127.0.0.1', forwardedFor: undefined, req: REQS[i % 10_000] });
  }
}
const rlf = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
calls.rlf = (i) => rlf.consume(KEYS[i % 10_000]);

async function drive(call, total) {
  let next = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const r = await call(i);
        if (r && r.status !== undefined && r.status !== 200) throw new Error(`refused: ${r.status}`);
      }
    }),
  );
  const c = process.cpuUsage(c0);
  return { ops: total / ((performance.now() - t0) / 1000), cpu: (c.user + c.system) / total };
}
for (const f of Object.values(calls)) await drive(f, 30_000);
const rows = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = Object.keys(calls);
  if (r % 2) order.reverse();
  for (const k of order) rows[k].push(await drive(calls[k], N));
  process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`ioredis ${pipelining ? 'enableAutoPipelining' : 'defaults'}, ${ROUNDS} rounds of ${N} decisions, 50 in flight`);
console.log('| limiter | decisions/s | Node CPU us/decision | x rlf by round | x rlf (median) | x rlf by Node CPU (median) |');
console.log('| --- | ---: | ---: | --- | ---: | ---: |');
for (const [k, xs] of Object.entries(rows)) {
  const vs = xs.map((x, i) => x.ops / rows.rlf[i].ops);
  const byCpu = xs.map((x, i) => rows.rlf[i].cpu / x.cpu);
  console.log(
    `| ${k} | ${Math.round(median(xs.map((x) => x.ops)))} | ${median(xs.map((x) => x.cpu)).toFixed(2)} | ${vs.map((v) => v.toFixed(2)).join(', ')} | ${median(vs).toFixed(2)} | ${median(byCpu).toFixed(2)} |`,
  );
}
client.disconnect();
await server.stop();

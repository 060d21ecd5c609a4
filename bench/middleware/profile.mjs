/**
 * Where the one-rule middleware's Node CPU goes under ioredis auto-pipelining, beside a bare
 * EVALSHA of gcra.lua: 50 calls in flight on a redis-server this script starts, 50,000 warm-up
 * decisions, then 3 x 200,000, printing decisions/s and Node CPU per decision. Run it under the
 * profiler and read the .cpuprofile in Chrome's DevTools (or any cpuprofile viewer):
 *
 *   npm run build
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof-ours bench/middleware/profile.mjs ours
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof-raw bench/middleware/profile.mjs raw
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof-rlf bench/middleware/profile.mjs rlf   (rate-limiter-flexible)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = pathToFileURL(join(here, '..', '..', 'dist')).href + '/';
const { Answers } = await import(root + 'answers/schema.js');
const { buildDesign } = await import(root + 'design/build.js');
const { compileDesign, designData } = await import(root + 'codegen/middleware/index.js');
const { createLimiter } = await import(root + 'runtime/middleware/limiter.js');
const { luaScript } = await import(root + 'lua.js');
const { Redis } = await import('ioredis');
const { Registry } = await import('prom-client');
const { startRedis } = await import('../redis.mjs');
const ANSWERS = {
  project: { name: 'bench' },
  stack: { framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis', trustedProxies: [] },
  identities: ['api-key'],
  endpoints: [{ name: 'get-item', method: 'GET', route: '/v1/items/:id', class: 'read' }],
  traffic: { peakRps: 100_000 },
  rules: [{ id: 'fairness-per-api-key', rate: { requests: 1_000_000, per: 'second' }, burst: 1_000_000 }],
};
const design = buildDesign(Answers.parse(ANSWERS), { date: '2026-01-01' });
const server = await startRedis();
const client = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1, enableAutoPipelining: true });
const limiter = createLimiter(designData(compileDesign(design)), {
  redis: client,
  registry: new Registry(),
  defaultMode: 'enforce',
  identify: (req) => ({ apiKey: req.k }),
});
const KEYS = Array.from({ length: 10000 }, (_, i) => `key-${i}`);
const REQS = KEYS.map((k) => ({ k }));
const URLS = Array.from({ length: 1000 }, (_, i) => `/v1/items/${i}`);
const gcra = luaScript('gcra');
await client.script('LOAD', gcra.source);
const ours = (i) =>
  limiter.check({ method: 'GET', url: URLS[i % 1000], remoteAddress: '127.0.0.1', forwardedFor: undefined, req: REQS[i % 10000] });
const raw = (i) => client.evalsha(gcra.sha1, 1, `raw:{${KEYS[i % 10000]}}`, '1000000', '1', '1');
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
        if (r && r.status !== undefined && r.status !== 200) throw new Error('refused');
      }
    }),
  );
  const c = process.cpuUsage(c0);
  return { ops: Math.round(total / ((performance.now() - t0) / 1000)), cpuUs: ((c.user + c.system) / total).toFixed(2) };
}
const { RateLimiterRedis } = await import('rate-limiter-flexible');
const rlfLimiter = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
const rlf = (i) => rlfLimiter.consume(KEYS[i % 10000]);
const which = process.argv[2];
const f = which === 'raw' ? raw : which === 'rlf' ? rlf : ours;
await drive(f, 50000);
for (let r = 0; r < 3; r++) console.log(which, await drive(f, 200000));
client.disconnect();
await server.stop();

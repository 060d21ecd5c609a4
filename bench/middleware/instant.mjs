#!/usr/bin/env node
/**
 * The limiter's own code, with clients that answer at once (run.mjs, 3.). ioredis is loaded
 * although no call reaches it: every process that runs the limiter has it loaded, and loading
 * it changes how V8 runs string code (src/runtime/middleware/strings.ts).
 */
import 'ioredis';
import { Registry } from 'prom-client';
import { loadCore } from './load-core.mjs';
import { RateLimiterRedis } from 'rate-limiter-flexible';

const [out, decisionsArg, roundsArg] = process.argv.slice(2);
const DECISIONS = Number(decisionsArg);
const ROUNDS = Number(roundsArg);
const IN_FLIGHT = 50;
const KEYS = Array.from({ length: 10_000 }, (_, i) => `key-${i}`);
const REQS = KEYS.map((k) => ({ k }));
const URLS = Array.from({ length: 1_000 }, (_, i) => `/v1/items/${i}`);

const core = await loadCore(out);
// gcra.lua's reply: one integer, microseconds the bucket is ahead (positive: admitted)
const reply = 1;
const client = { evalsha: () => Promise.resolve(reply), eval: () => Promise.resolve(reply) };
// rate-limiter-flexible defines its script as an ioredis command: answer it the same way
const rlfClient = {
  defineCommand(name) {
    this[name] = () => Promise.resolve([1, 60_000]);
  },
};
const limiter = core.createLimiter({
  redis: client,
  registry: new Registry(),
  defaultMode: 'enforce',
  identify: (req) => ({ apiKey: req.k }),
});
const rlf = new RateLimiterRedis({ storeClient: rlfClient, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
const calls = {
  ours: (i) =>
    limiter.check({
      method: 'GET',
      url: URLS[i % URLS.length],
      remoteAddress: '127.0.0.1',
      forwardedFor: undefined,
      req: REQS[i % REQS.length],
    }),
  rlf: (i) => rlf.consume(KEYS[i % KEYS.length]),
  floor: (i) => client.evalsha('sha', 1, KEYS[i % KEYS.length], '1', '1', '1'),
};

/** Node CPU (user + system) per call, in ns, with IN_FLIGHT calls in flight. */
async function drive(call, total) {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        await call(i);
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  return ((cpu.user + cpu.system) * 1000) / total;
}

const names = Object.keys(calls);
const rows = Object.fromEntries(names.map((n) => [n, []]));
for (const n of names) await drive(calls[n], 100_000);
for (let r = 0; r < ROUNDS; r++) {
  for (let j = 0; j < names.length; j++) {
    const n = names[(j + r) % names.length];
    rows[n].push(await drive(calls[n], DECISIONS));
  }
}
limiter.close();
process.stdout.write(JSON.stringify(rows) + '\n');

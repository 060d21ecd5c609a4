#!/usr/bin/env node
/**
 * An Express app bench/middleware/run.mjs loads with autocannon, in its own process:
 *   node bench/middleware/server.mjs <mode> <compiled middleware dir> <redis port>
 * Prints "listening <port>" once it accepts connections. Every mode but `bare` keys on the
 * x-api-key header (the bench treats it as an already verified API key id). Modes:
 * - bare: the route alone;
 * - limited: the generated middleware (one GCRA rule per API key, enforced, metrics on the
 *   global prom-client registry), ioredis with the recommended enableAutoPipelining;
 * - limited-plain: the same with ioredis defaults;
 * - rlf: rate-limiter-flexible's RateLimiterRedis.consume(), mounted as its README's Express
 *   example does (429 on refusal, no headers), on the same ioredis options as `limited`;
 * - floor: one bare EVALSHA of gcra.lua per request, then next(): what any Redis-backed
 *   limiter pays at least, on the same ioredis options as `limited`;
 * - floor-headers: the same, plus the two RateLimit headers the generated middleware sends
 *   (the response contract's share of the cost).
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import express from 'express';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

const [mode, dir, redisPort] = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const app = express();
const redis =
  mode === 'bare'
    ? null
    : new Redis(Number(redisPort), '127.0.0.1', { enableAutoPipelining: mode !== 'limited-plain', maxRetriesPerRequest: 1 });
const apiKey = (req) => req.headers['x-api-key'];

if (mode === 'limited' || mode === 'limited-plain') {
  const { rateLimit } = await import(pathToFileURL(join(dir, 'express.js')).href);
  app.use(rateLimit({ redis, defaultMode: 'enforce', identify: (req) => ({ apiKey: apiKey(req) }) }));
} else if (mode === 'rlf') {
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
  app.use((req, res, next) => {
    limiter
      .consume(apiKey(req))
      .then(() => next())
      .catch(() => res.status(429).send('Too Many Requests'));
  });
} else if (mode === 'floor' || mode === 'floor-headers') {
  const source = readFileSync(join(root, 'lua', 'gcra.lua'), 'utf8');
  const sha1 = createHash('sha1').update(source).digest('hex');
  await redis.script('LOAD', source);
  const headers = mode === 'floor-headers';
  app.use((req, res, next) => {
    redis.evalsha(sha1, 1, `raw:{${apiKey(req)}}`, '1000000', '1000000', '1000', '1').then((reply) => {
      if (headers) {
        // the two headers the generated middleware sends on every admitted response
        res.setHeader('RateLimit-Policy', '"fairness-per-api-key";q=1000000;w=1');
        res.setHeader('RateLimit', `"fairness-per-api-key";r=${reply[1]};t=${Math.ceil(reply[3] / 1000)}`);
      }
      next();
    }, next);
  });
} else if (mode !== 'bare') {
  throw new Error(`unknown mode ${mode}`);
}
app.get('/v1/items/:id', (req, res) => {
  res.json({ id: req.params.id, ok: true });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
// On each line "mark" read from stdin, reports the process's CPU time so far (user + system,
// microseconds) and the requests served so far: the bench takes differences between marks.
let served = 0;
server.on('request', () => served++);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  for (const line of chunk.split('\n')) {
    if (line.trim() !== 'mark') continue;
    const cpu = process.cpuUsage();
    process.stdout.write(`mark ${cpu.user + cpu.system} ${served}\n`);
  }
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

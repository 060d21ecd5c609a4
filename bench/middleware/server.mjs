#!/usr/bin/env node
/**
 * An Express app bench/middleware/run.mjs loads with autocannon, in its own process:
 *   node bench/middleware/server.mjs <mode> <compiled one-rule middleware dir> <redis port> <compiled saas-platform middleware dir>
 * Prints "listening <port>" once it accepts connections. Every mode but `bare` keys on the
 * x-api-key header (the bench treats it as an already verified API key id, or tenant id).
 * Every Redis client has ioredis's enableAutoPipelining unless the mode says otherwise. Modes:
 * - bare: the route alone;
 * - limited: the generated middleware of the one-rule design (one GCRA rule per API key,
 *   enforced, RateLimit headers, metrics on the global prom-client registry);
 * - limited-plain: the same with ioredis defaults;
 * - rlf: rate-limiter-flexible's RateLimiterRedis.consume(), mounted as its README's Express
 *   example does (429 on refusal, no headers);
 * - rlf-headers: the same, plus the two RateLimit headers the generated middleware sends, made
 *   from consume()'s result the way rate-limiter-flexible's README sets its example headers:
 *   what a user of rate-limiter-flexible writes to keep the same response contract;
 * - erl: express-rate-limit with rate-limit-redis's RedisStore (its fixed window, draft-7
 *   RateLimit headers), the store's commands through ioredis as its README shows;
 * - floor: one bare EVALSHA of gcra.lua per request, then next(): what any Redis-backed
 *   limiter pays at least;
 * - floor-headers: the same, plus the two RateLimit headers the generated middleware sends;
 * - saas: the generated middleware of the saas-platform example on its busiest route, the
 *   caller an Enterprise tenant (a fairness bucket and a monthly quota per tenant) as
 *   generated: the fairness rule behind the in-process bucket, then the quota;
 * - saas-one: the same with the in-process bucket off (hybrid: false): the tenant's two
 *   limits in ONE identity-limits call;
 * - rlf-saas: the same two limits with rate-limiter-flexible: two RateLimiterRedis, the
 *   quota consumed once the rate has admitted (two round trips, as ours did before);
 * - erl-saas: the same two limits with express-rate-limit: two middlewares, each with its
 *   RedisStore (headers of both).
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { RedisStore } from 'rate-limit-redis';

const [mode, dir, redisPort, saasDir] = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const app = express();
const redis =
  mode === 'bare'
    ? null
    : new Redis(Number(redisPort), '127.0.0.1', { enableAutoPipelining: mode !== 'limited-plain', maxRetriesPerRequest: 1 });
const apiKey = (req) => req.headers['x-api-key'];
const MONTH = 31 * 86_400_000;

/** express-rate-limit with its Redis store, every call admitted, headers on. */
const erl = (prefix, windowMs) =>
  expressRateLimit({
    windowMs,
    limit: 1_000_000_000,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: apiKey,
    validate: false,
    store: new RedisStore({ prefix, sendCommand: (command, ...args) => redis.call(command, ...args) }),
  });

if (mode === 'limited' || mode === 'limited-plain') {
  const { rateLimit } = await import(pathToFileURL(join(dir, 'express.js')).href);
  app.use(rateLimit({ redis, defaultMode: 'enforce', identify: (req) => ({ apiKey: apiKey(req) }) }));
} else if (mode === 'saas' || mode === 'saas-one') {
  const { rateLimit } = await import(pathToFileURL(join(saasDir, 'express.js')).href);
  app.use(
    rateLimit({
      redis,
      defaultMode: 'enforce',
      identify: (req) => ({ tenantId: apiKey(req), plan: 'Enterprise' }),
      ...(mode === 'saas-one' ? { hybrid: false } : {}),
    }),
  );
} else if (mode === 'rlf') {
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
  app.use((req, res, next) => {
    limiter
      .consume(apiKey(req))
      .then(() => next())
      .catch(() => res.status(429).send('Too Many Requests'));
  });
} else if (mode === 'rlf-headers') {
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
  const policy = '"fairness-per-api-key";q=1000000000;w=60';
  const state = (r) => `"fairness-per-api-key";r=${r.remainingPoints};t=${Math.ceil(r.msBeforeNext / 1000)}`;
  app.use((req, res, next) => {
    limiter
      .consume(apiKey(req))
      .then((r) => {
        res.setHeader('RateLimit-Policy', policy);
        res.setHeader('RateLimit', state(r));
        next();
      })
      .catch((r) => {
        if (r instanceof Error) return next(r);
        res.setHeader('Retry-After', String(Math.ceil(r.msBeforeNext / 1000)));
        res.setHeader('RateLimit-Policy', policy);
        res.setHeader('RateLimit', state(r));
        res.status(429).send('Too Many Requests');
      });
  });
} else if (mode === 'rlf-saas') {
  const rate = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf-rate', points: 1_000_000_000, duration: 60 });
  const quota = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf-quota', points: 1_000_000_000, duration: MONTH / 1000 });
  app.use((req, res, next) => {
    const key = apiKey(req);
    rate
      .consume(key)
      .then(() => quota.consume(key))
      .then(() => next())
      .catch(() => res.status(429).send('Too Many Requests'));
  });
} else if (mode === 'erl') {
  app.use(erl('erl:', 60_000));
} else if (mode === 'erl-saas') {
  app.use(erl('erl-rate:', 60_000));
  app.use(erl('erl-quota:', MONTH));
} else if (mode === 'floor' || mode === 'floor-headers') {
  const source = readFileSync(join(root, 'lua', 'gcra.lua'), 'utf8');
  const sha1 = createHash('sha1').update(source).digest('hex');
  await redis.script('LOAD', source);
  const headers = mode === 'floor-headers';
  app.use((req, res, next) => {
    // tolerance 1,000,000 us, increment 1 us, interval 1 us: 10^6 per second, burst 10^6
    redis.evalsha(sha1, 1, `raw:{${apiKey(req)}}`, '1000000', '1', '1').then((reply) => {
      if (headers) {
        // the two headers the generated middleware sends on every admitted response
        res.setHeader('RateLimit-Policy', '"fairness-per-api-key";q=1000000;w=1');
        // gcra.lua's one integer: microseconds ahead (1,000,000 per second, one token = 1 us)
        res.setHeader('RateLimit', `"fairness-per-api-key";r=${1_000_000 - reply};t=${Math.ceil(reply / 1000)}`);
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
// the saas-platform example's route for reading an order
app.get('/v1/orders/:id', (req, res) => {
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

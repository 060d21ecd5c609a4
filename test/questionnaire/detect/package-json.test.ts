import { describe, expect, test } from 'vitest';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { detect } from '../../../src/questionnaire/detect/package-json.js';
import { factsToAnswers } from '../../../src/questionnaire/detect/to-answers.js';
import type { ExistingLimiter, Fact } from '../../../src/questionnaire/detect/types.js';
import { fixture, warnings } from './fixtures.js';

const pkg = (deps: Record<string, string>, dev: Record<string, string> = {}): string =>
  JSON.stringify({ name: 'x', dependencies: deps, devDependencies: dev });

const limiters = (facts: Fact[]): ExistingLimiter[] =>
  facts.filter((f) => f.field === 'existingLimiters').map((f) => f.value as ExistingLimiter);

describe('package.json detector', () => {
  test('express-ioredis: framework, language, store and both express-rate-limit limiters', async () => {
    const w = warnings();
    const facts = await detect(fixture('express-ioredis'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      {
        field: 'stack.framework',
        value: 'express',
        source: 'package.json',
        detail: 'express ^5.1.0 in dependencies, 5.1.0 in package-lock.json',
      },
      {
        field: 'stack.language',
        value: 'JavaScript',
        source: 'package.json',
        detail: 'no typescript dependency and no tsconfig.json',
      },
      {
        field: 'stack.store',
        value: 'redis',
        source: 'package.json',
        detail: 'ioredis ^5.6.1 in dependencies, 5.6.1 in package-lock.json',
      },
      {
        field: 'existingLimiters',
        source: 'src/app.js',
        value: {
          kind: 'express-rate-limit',
          version: '7.5.0',
          name: 'limiter',
          scope: 'all routes',
          limit: 100,
          windowSeconds: 60,
          rate: { requests: 100, per: 'minute' },
          settings: { windowMs: 60000, max: 100 },
          line: 12,
        },
        detail: 'express-rate-limit 7.5.0: limiter = rateLimit({ windowMs: 60000, max: 100 }) at line 12: 100 per minute; on all routes',
      },
      {
        field: 'existingLimiters',
        source: 'src/app.js',
        value: {
          kind: 'express-rate-limit',
          version: '7.5.0',
          name: 'loginLimiter',
          scope: 'POST /login',
          limit: 5,
          windowSeconds: 900,
          rate: { requests: 20, per: 'hour' },
          settings: { windowMs: 900000, limit: 5, standardHeaders: 'draft-7', legacyHeaders: false },
          otherOptions: ['keyGenerator'],
          line: 16,
        },
        detail:
          "express-rate-limit 7.5.0: loginLimiter = rateLimit({ windowMs: 900000, limit: 5, standardHeaders: 'draft-7', legacyHeaders: false, keyGenerator: … }) at line 16: 5 per 15 minutes; on POST /login",
      },
    ]);
  });

  test('fastify-openapi: TypeScript from the typescript devDependency, pnpm lock versions, plugin and route limits', async () => {
    const w = warnings();
    const facts = await detect(fixture('fastify-openapi'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      {
        field: 'stack.framework',
        value: 'fastify',
        source: 'package.json',
        detail: 'fastify ^5.4.0 in dependencies, 5.4.0 in pnpm-lock.yaml',
      },
      {
        field: 'stack.language',
        value: 'TypeScript',
        source: 'package.json',
        detail: 'typescript ^5.8.3 in devDependencies, 5.8.3 in pnpm-lock.yaml',
      },
      {
        field: 'existingLimiters',
        source: 'src/server.ts',
        value: {
          kind: '@fastify/rate-limit',
          version: '10.3.0',
          scope: 'all routes',
          limit: 100,
          windowSeconds: 60,
          rate: { requests: 100, per: 'minute' },
          settings: { max: 100, timeWindow: '1 minute' },
          line: 6,
        },
        detail:
          "@fastify/rate-limit 10.3.0: .register(rateLimit, { max: 100, timeWindow: '1 minute' }) at line 6: 100 per minute; on all routes",
      },
      {
        field: 'existingLimiters',
        source: 'src/server.ts',
        value: {
          kind: '@fastify/rate-limit',
          version: '10.3.0',
          scope: 'POST /v1/auth/login',
          limit: 5,
          windowSeconds: 900,
          rate: { requests: 20, per: 'hour' },
          settings: { max: 5, timeWindow: '15 minutes' },
          line: 13,
        },
        detail:
          "@fastify/rate-limit 10.3.0: rateLimit: { max: 5, timeWindow: '15 minutes' } at line 13: 5 per 15 minutes; on POST /v1/auth/login",
      },
    ]);
  });

  test('nginx-only and empty folders have nothing for it', async () => {
    expect(await detect(fixture('nginx-only'))).toEqual([]);
    expect(await detect(fixture('empty'))).toEqual([]);
  });

  test('a malformed package.json is a warning naming the file, not an error', async () => {
    const w = warnings();
    expect(await detect(fixture('malformed'), w.warn)).toEqual([]);
    expect(w.list).toHaveLength(1);
    expect(w.list[0]?.source).toBe('package.json');
    expect(w.list[0]?.message).toMatch(/^not valid JSON/);
  });

  test('NestJS wins over the express it runs on; tsconfig.json alone means TypeScript', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ '@nestjs/core': '^11.0.0', express: '^5.0.0', redis: '^4.7.0' }),
        'tsconfig.json': '{}',
      }),
    );
    expect(facts).toEqual([
      {
        field: 'stack.framework',
        value: 'nestjs',
        source: 'package.json',
        detail: '@nestjs/core ^11.0.0 in dependencies (also: express)',
      },
      { field: 'stack.language', value: 'TypeScript', source: 'tsconfig.json', detail: 'tsconfig.json present' },
      { field: 'stack.store', value: 'redis', source: 'package.json', detail: 'redis ^4.7.0 in dependencies' },
    ]);
  });

  test.each([
    ['koa', 'koa'],
    ['hono', 'hono'],
    ['@nestjs/core', 'nestjs'],
  ])('%s -> stack.framework %s', async (dep, framework) => {
    const facts = await detect(memoryProjectFs({ 'package.json': pkg({ [dep]: '1.0.0' }) }));
    expect(facts[0]).toMatchObject({ field: 'stack.framework', value: framework });
  });

  test('yarn.lock, classic and berry, confirms versions', async () => {
    const classic = await detect(
      memoryProjectFs({
        'package.json': pkg({ koa: '^2.15.0' }),
        'yarn.lock': '# yarn lockfile v1\n\n"koa@^2.15.0", koa@^2.0.0:\n  version "2.15.3"\n  resolved "x"\n',
      }),
    );
    expect(classic[0]?.detail).toBe('koa ^2.15.0 in dependencies, 2.15.3 in yarn.lock');
    const berry = await detect(
      memoryProjectFs({
        'package.json': pkg({ hono: '^4.6.0' }),
        'yarn.lock': '__metadata:\n  version: 8\n\n"hono@npm:^4.6.0":\n  version: 4.6.14\n  resolution: "hono@npm:4.6.14"\n',
      }),
    );
    expect(berry[0]?.detail).toBe('hono ^4.6.0 in dependencies, 4.6.14 in yarn.lock');
  });

  test('rate-limiter-flexible: points/duration, the store class, the variable', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ express: '5.1.0', 'rate-limiter-flexible': '7.1.1', ioredis: '5.6.1' }),
        'src/limits.ts': [
          "import Redis from 'ioredis';",
          "import { RateLimiterRedis } from 'rate-limiter-flexible';",
          'const storeClient = new Redis();',
          'export const apiLimiter = new RateLimiterRedis({',
          '  storeClient,',
          "  keyPrefix: 'api',",
          '  points: 10, // requests',
          '  duration: 1, // per second',
          '  blockDuration: 60,',
          '});',
        ].join('\n'),
      }),
    );
    expect(limiters(facts)).toEqual([
      {
        kind: 'rate-limiter-flexible',
        version: '7.1.1',
        name: 'apiLimiter',
        limit: 10,
        windowSeconds: 1,
        rate: { requests: 10, per: 'second' },
        settings: { class: 'RateLimiterRedis', keyPrefix: 'api', points: 10, duration: 1, blockDuration: 60 },
        otherOptions: ['storeClient'],
        line: 4,
      },
    ]);
  });

  test('a Redis counter written by hand (INCR, then EXPIRE): its window, its limit, what it counts per, where it is mounted', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ express: '5.1.0', ioredis: '5.6.1' }),
        'src/limit.ts': [
          "import Redis from 'ioredis';",
          'const redis = new Redis();',
          'const MAX_ORDERS = 20;',
          'export async function orderLimit(req, res, next) {',
          '  const key = `orders:${req.ip}`;',
          '  const count = await redis.incr(`orders:${req.ip}`);',
          '  if (count === 1) await redis.expire(`orders:${req.ip}`, 60);',
          '  if (count > MAX_ORDERS) return res.status(429).end();',
          '  next();',
          '}',
          'const perKey = async (req, res, next) => {',
          "  const hits = await redis.incr('k:' + req.headers['x-api-key']);",
          "  await redis.pexpire('k:' + req.headers['x-api-key'], 15 * 60 * 1000);",
          '  if (hits >= 1_000) return res.status(429).end();',
          '  next();',
          '};',
          "app.post('/orders', orderLimit, createOrder);",
          "app.use('/api', perKey);",
          // a counter with no expiry nearby is no rate limit
          "export const views = () => redis.incr('views');",
        ].join('\n'),
      }),
    );
    const found = limiters(facts);
    expect(found).toEqual([
      {
        kind: 'redis INCR+EXPIRE',
        name: 'orderLimit',
        scope: 'POST /orders',
        key: '`orders:${req.ip}`',
        limit: 20,
        windowSeconds: 60,
        rate: { requests: 20, per: 'minute' },
        algorithm: 'fixed-window',
        settings: {},
        line: 6,
      },
      {
        kind: 'redis INCR+EXPIRE',
        name: 'perKey',
        scope: 'routes under /api',
        key: "'k:' + req.headers['x-api-key']",
        limit: 999,
        windowSeconds: 900,
        rate: { requests: 3996, per: 'hour' },
        algorithm: 'fixed-window',
        settings: {},
        line: 12,
      },
    ]);
    expect(facts.find((f) => (f.value as ExistingLimiter).name === 'orderLimit')?.detail).toContain(
      'a Redis counter written by hand (INCR `orders:${req.ip}`, then EXPIRE) in orderLimit at line 6: 20 per minute; on POST /orders',
    );
    // and into the answers: what each counts per, and how (the migration compares its fixed window and lists its hazards)
    const existing = factsToAnswers(facts).existing?.limiters;
    expect(existing?.map((l) => [l.name, l.keyedOn, l.method, l.path, l.match, l.limit, l.windowSeconds, l.algorithm])).toEqual([
      ['orderLimit', 'ip', 'POST', '/orders', 'exact', 20, 60, 'fixed-window'],
      ['perKey', 'api-key', undefined, '/api', 'prefix', 999, 900, 'fixed-window'],
    ]);
  });

  test('ESM default import, aliases, inline app.use, and routes under a prefix', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ express: '5.1.0', 'express-rate-limit': '8.0.0' }),
        'index.mjs': [
          "import express from 'express';",
          "import limit from 'express-rate-limit';",
          'const app = express();',
          "app.use('/api', limit({ windowMs: 10 * 1000, limit: 20 }));",
          'const slow = limit({ max: 3 });',
          "app.use('/admin', slow);",
        ].join('\n'),
      }),
    );
    const found = limiters(facts);
    expect(found.map((l) => [l.scope, l.limit, l.windowSeconds, l.rate])).toEqual([
      ['routes under /api', 20, 10, { requests: 120, per: 'minute' }],
      ['routes under /admin', 3, 60, { requests: 3, per: 'minute' }],
    ]);
    expect(facts.find((f) => (f.value as ExistingLimiter).name === 'slow')?.detail).toContain('windowMs defaults to 60000');
  });

  test('imports without semicolons, named aliases and namespaces', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ 'express-rate-limit': '7.5.0' }),
        'a.ts': "import express from 'express'\nimport throttle from 'express-rate-limit'\nexport const a = throttle({ max: 1 })\n",
        'b.ts': "import {\n  rateLimit as rl,\n} from 'express-rate-limit'\nexport const b = rl({ max: 2 })\n",
        'c.ts': "import * as erl from 'express-rate-limit'\nexport const c = erl.rateLimit({ max: 3 })\n",
      }),
    );
    expect(limiters(facts).map((l) => [l.name, l.limit])).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
  });

  test('a limiter in dependencies with no literal call is still reported, from package.json', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ express: '5.1.0', 'express-rate-limit': '7.5.0' }),
        'src/app.js': "const { rateLimit } = require('express-rate-limit');\nconst opts = load();\napp.use(rateLimit(opts));\n",
      }),
    );
    expect(facts.at(-1)).toEqual({
      field: 'existingLimiters',
      value: { kind: 'express-rate-limit', version: '7.5.0', settings: {} },
      source: 'package.json',
      detail: 'express-rate-limit 7.5.0 in dependencies; no literal settings found in source',
    });
  });

  test('non-literal settings are named, not guessed; tests and comments are ignored', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ 'express-rate-limit': '7.5.0' }),
        'src/a.js': [
          "const rateLimit = require('express-rate-limit');",
          '// rateLimit({ windowMs: 1, max: 1 })',
          'module.exports = rateLimit({ windowMs: minutes(5), max: process.env.MAX });',
        ].join('\n'),
        'src/a.test.js': "const rateLimit = require('express-rate-limit');\nrateLimit({ max: 999 });\n",
      }),
    );
    expect(limiters(facts)).toEqual([
      { kind: 'express-rate-limit', version: '7.5.0', settings: {}, otherOptions: ['windowMs', 'max'], line: 3 },
    ]);
  });

  test('an ioredis Cluster client makes the store redis-cluster, ahead of plain redis', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': pkg({ ioredis: '5.6.1' }),
        'src/redis.ts': "import Redis from 'ioredis';\nexport const redis = new Redis.Cluster([{ host: 'a' }]);\n",
      }),
    );
    expect(facts.filter((f) => f.field === 'stack.store')).toEqual([
      { field: 'stack.store', value: 'redis-cluster', source: 'src/redis.ts', detail: 'ioredis Cluster client at line 2' },
      { field: 'stack.store', value: 'redis', source: 'package.json', detail: 'ioredis 5.6.1 in dependencies' },
    ]);
  });

  test('workspaces: the root comes first, the package reads the root lockfile, a call is counted once', async () => {
    const facts = await detect(
      memoryProjectFs({
        'package.json': JSON.stringify({
          name: 'mono',
          private: true,
          workspaces: ['apps/*'],
          devDependencies: { typescript: '5.8.3', '@fastify/rate-limit': '^10.0.0' },
        }),
        'package-lock.json': JSON.stringify({
          lockfileVersion: 3,
          packages: { 'node_modules/fastify': { version: '5.4.0' }, 'apps/api/node_modules/ioredis': { version: '5.6.1' } },
        }),
        'apps/api/package.json': pkg({ fastify: '^5.0.0', ioredis: '^5.0.0', '@fastify/rate-limit': '^10.0.0' }),
        'apps/api/src/main.ts': "import rl from '@fastify/rate-limit';\nawait app.register(rl, { max: 50, timeWindow: 1000 });\n",
        'test/fixtures/other/package.json': pkg({ koa: '1.0.0' }),
      }),
    );
    expect(facts.map((f) => [f.field, f.value instanceof Object ? (f.value as ExistingLimiter).kind : f.value, f.source])).toEqual([
      ['stack.language', 'TypeScript', 'package.json'],
      ['existingLimiters', '@fastify/rate-limit', 'apps/api/src/main.ts'],
      ['stack.framework', 'fastify', 'apps/api/package.json'],
      ['stack.language', 'TypeScript', 'package.json'],
      ['stack.store', 'redis', 'apps/api/package.json'],
    ]);
    expect(facts[2]?.detail).toBe('fastify ^5.0.0 in dependencies, 5.4.0 in package-lock.json');
    expect(facts[4]?.detail).toBe('ioredis ^5.0.0 in dependencies, 5.6.1 in package-lock.json');
    expect(limiters(facts)[0]).toMatchObject({ limit: 50, windowSeconds: 1, rate: { requests: 50, per: 'second' } });
  });
});

import { describe, expect, test } from 'vitest';
import { Answers } from '../../../src/answers/schema.js';
import {
  DETECTORS,
  detectProject,
  factsToAnswers,
  formatWarning,
  memoryProjectFs,
  printable,
  type Fact,
  type ProjectFs,
} from '../../../src/questionnaire/detect/index.js';
import { fixture } from './fixtures.js';

const FIXTURES = ['express-ioredis', 'fastify-openapi', 'nginx-only', 'envoy', 'kong', 'empty', 'malformed'];

describe('detectProject', () => {
  test('express-ioredis: one summary line per fact, first fact per field', async () => {
    const result = await detectProject(fixture('express-ioredis'));
    expect(result.warnings).toEqual([]);
    expect(result.summary).toEqual([
      'framework: express (package.json: express ^5.1.0 in dependencies, 5.1.0 in package-lock.json)',
      'language: JavaScript (package.json: no typescript dependency and no tsconfig.json)',
      'store: redis (package.json: ioredis ^5.6.1 in dependencies, 5.6.1 in package-lock.json)',
      'existing limiter: express-rate-limit 100 per minute (src/app.js: express-rate-limit 7.5.0: limiter = rateLimit({ windowMs: 60000, max: 100 }) at line 12: 100 per minute; on all routes)',
      "existing limiter: express-rate-limit 5 per 15 minutes (src/app.js: express-rate-limit 7.5.0: loginLimiter = rateLimit({ windowMs: 900000, limit: 5, standardHeaders: 'draft-7', legacyHeaders: false, keyGenerator: … }) at line 16: 5 per 15 minutes; on POST /login)",
    ]);
    expect(Object.keys(result.byField)).toEqual(['stack.framework', 'stack.language', 'stack.store', 'existingLimiters']);
    expect(result.byField.existingLimiters?.value).toMatchObject({ name: 'limiter' });
  });

  test('fastify-openapi and nginx-only summaries', async () => {
    expect((await detectProject(fixture('fastify-openapi'))).summary).toEqual([
      'framework: fastify (package.json: fastify ^5.4.0 in dependencies, 5.4.0 in pnpm-lock.yaml)',
      'language: TypeScript (package.json: typescript ^5.8.3 in devDependencies, 5.8.3 in pnpm-lock.yaml)',
      "existing limiter: @fastify/rate-limit 100 per minute (src/server.ts: @fastify/rate-limit 10.3.0: .register(rateLimit, { max: 100, timeWindow: '1 minute' }) at line 6: 100 per minute; on all routes)",
      "existing limiter: @fastify/rate-limit 5 per 15 minutes (src/server.ts: @fastify/rate-limit 10.3.0: rateLimit: { max: 5, timeWindow: '15 minutes' } at line 13: 5 per 15 minutes; on POST /v1/auth/login)",
      'endpoints: 14 endpoints (openapi.yaml: OpenAPI 3.0.3 "Orders API": 14 operations (auth 4, search 1, export 1, expensive 1, health 1, read 2, write 3, webhook 1))',
      'identities: user (openapi.yaml: security schemes: bearerAuth (http bearer) -> user)',
      'OpenAPI document: openapi.yaml (openapi.yaml: OpenAPI 3.0.3 "Orders API")',
    ]);
    expect((await detectProject(fixture('nginx-only'))).summary).toEqual([
      'gateway: nginx (nginx.conf: nginx config with limit_req_zone api)',
      'existing limiter: nginx 10 per second (nginx.conf: limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s; limit_req zone=api burst=20 nodelay in location /api/ = 10 per second, burst 20)',
      'trusted proxies: 10.0.0.0/8 (nginx.conf: set_real_ip_from 10.0.0.0/8)',
      'client IP header: X-Forwarded-For (nginx.conf: real_ip_header X-Forwarded-For; real_ip_recursive on)',
    ]);
  });

  test('an empty folder: no facts, no warnings, no throw', async () => {
    expect(await detectProject(fixture('empty'))).toEqual({ facts: [], byField: {}, summary: [], warnings: [] });
  });

  test('a missing folder: nothing, no throw', async () => {
    expect(await detectProject(fixture('does-not-exist'))).toEqual({ facts: [], byField: {}, summary: [], warnings: [] });
  });

  test('malformed files: one warning naming each, the rest still detected', async () => {
    const result = await detectProject(fixture('malformed'));
    expect(result.warnings.map((w) => w.source)).toEqual(['package.json', 'openapi.yaml', 'nginx.conf']);
    expect(result.warnings.map(formatWarning)[0]).toMatch(/^warning: package\.json: not valid JSON/);
    expect(result.facts.map((f) => f.field)).toEqual(['stack.gateway', 'existingLimiters']);
  });

  test('precedence: package.json before gateways for the store, Kong before nginx for the gateway', async () => {
    const result = await detectProject(
      memoryProjectFs({
        'package.json': JSON.stringify({ dependencies: { koa: '2.15.3', ioredis: '5.6.1' } }),
        'nginx.conf': 'http { server { listen 80; } }',
        'kong.yaml': '_format_version: "3.0"\nplugins:\n  - name: rate-limiting\n    config: { minute: 5, policy: redis }\n',
      }),
    );
    expect(result.facts.filter((f) => f.field === 'stack.gateway').map((f) => f.value)).toEqual(['kong', 'nginx']);
    expect(result.byField['stack.gateway']?.value).toBe('kong');
    expect(result.byField['stack.store']).toMatchObject({ value: 'redis', source: 'package.json' });
    expect(factsToAnswers(result.facts)).toEqual({
      stack: { framework: 'koa', language: 'JavaScript', gateway: 'kong', store: 'redis' },
      existing: {
        limiters: [
          { kind: 'kong:rate-limiting', source: 'kong.yaml', keyedOn: 'api-key', limit: 5, windowSeconds: 60, algorithm: 'fixed-window' },
        ],
      }, // Kong counts per consumer unless limit_by says otherwise
    });
  });

  test('a detector that throws becomes a warning naming it; the others still run', async () => {
    const boom = { id: 'boom', detect: async (): Promise<Fact[]> => Promise.reject(new Error('kaput')) };
    const result = await detectProject(fixture('nginx-only'), [boom, ...DETECTORS]);
    expect(result.warnings).toEqual([{ source: '(boom detector)', message: 'stopped early: kaput' }]);
    expect(result.byField['stack.gateway']?.value).toBe('nginx');
  });

  test('a file system that fails is a warning, not a crash', async () => {
    const broken: ProjectFs = {
      list: async () => Promise.reject(new Error('EACCES')),
      read: async () => Promise.reject(new Error('EACCES')),
    };
    expect(await detectProject(broken)).toEqual({
      facts: [],
      byField: {},
      summary: [],
      warnings: [{ source: '.', message: 'the project folder could not be listed: EACCES' }],
    });
    const unreadable: ProjectFs = {
      list: async () => ['package.json', 'openapi.yaml'],
      read: async () => Promise.reject(new Error('EIO')),
    };
    const result = await detectProject(unreadable);
    expect(result.facts).toEqual([]);
    expect(result.warnings.map((w) => w.source)).toEqual(['package.json', 'openapi.yaml']);
  });

  test('a YAML alias bomb is refused with a warning, not expanded', async () => {
    const bomb = [
      'openapi: 3.0.0',
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      'paths: { /x: { get: {} } }',
    ].join('\n');
    const result = await detectProject(memoryProjectFs({ 'openapi.yaml': bomb }));
    expect(result.facts).toEqual([]);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]?.source).toBe('openapi.yaml');
  });

  test('summary lines are safe to print: control and bidi characters from files are removed', async () => {
    const spec = { openapi: '3.0.0', info: { title: 'Evil\u001b[2J\u202e' }, paths: { '/x': { get: {} } } };
    const result = await detectProject(memoryProjectFs({ 'openapi.json': JSON.stringify(spec) }));
    expect(result.summary).toHaveLength(2);
    // eslint-disable-next-line no-control-regex
    for (const line of result.summary) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(printable('a'.repeat(400))).toHaveLength(300);
  });
});

describe('factsToAnswers', () => {
  test.each(FIXTURES)('%s: the answers it gives pass the Answers schema', async (name) => {
    const { facts } = await detectProject(fixture(name));
    const answers = factsToAnswers(facts);
    const parsed = Answers.safeParse(answers);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });

  test('what each fixture answers', async () => {
    const answers = async (name: string): Promise<unknown> => factsToAnswers((await detectProject(fixture(name))).facts);
    const stackOf = async (name: string): Promise<unknown> => ((await answers(name)) as { stack?: unknown }).stack;
    expect(await stackOf('express-ioredis')).toEqual({ framework: 'express', language: 'JavaScript', store: 'redis' });
    expect(await stackOf('nginx-only')).toEqual({ gateway: 'nginx', trustedProxies: ['10.0.0.0/8'] });
    expect(await stackOf('envoy')).toEqual({ gateway: 'envoy' });
    expect(await stackOf('kong')).toEqual({ gateway: 'kong', store: 'redis', trustedProxies: ['10.0.0.0/8', '192.168.0.0/16'] });
    // limiters already in place become answers: where each applies, what it counts per, its numbers
    expect(((await answers('express-ioredis')) as { existing: unknown }).existing).toEqual({
      limiters: [
        {
          kind: 'express-rate-limit',
          name: 'limiter',
          source: 'src/app.js:12',
          keyedOn: 'ip',
          limit: 100,
          windowSeconds: 60,
          store: 'in-process',
          algorithm: 'fixed-window',
        },
        {
          kind: 'express-rate-limit',
          name: 'loginLimiter',
          source: 'src/app.js:16',
          method: 'POST',
          path: '/login',
          match: 'exact',
          keyedOn: 'other',
          limit: 5,
          windowSeconds: 900,
          store: 'in-process',
          algorithm: 'fixed-window',
        },
      ],
    });
    expect(((await answers('nginx-only')) as { existing: unknown }).existing).toEqual({
      limiters: [
        {
          kind: 'nginx',
          name: 'api',
          source: 'nginx.conf:25',
          path: '/api/',
          match: 'prefix',
          location: true,
          keyedOn: 'ip',
          limit: 10,
          windowSeconds: 1,
          burst: 20,
          algorithm: 'leaky-bucket',
        },
      ],
      nginx: [
        { name: 'limit_req_status', value: '429', context: 'http', source: 'nginx.conf:10' },
        { name: 'set_real_ip_from', value: '10.0.0.0/8', context: 'http', source: 'nginx.conf:12' },
        { name: 'real_ip_header', value: 'X-Forwarded-For', context: 'http', source: 'nginx.conf:13' },
        { name: 'real_ip_recursive', value: 'on', context: 'http', source: 'nginx.conf:14' },
      ],
    });
    expect(await answers('empty')).toEqual({});
    expect(await answers('malformed')).toEqual({ stack: { gateway: 'nginx' } });
    const fastify = (await answers('fastify-openapi')) as { stack: unknown; identities: unknown; endpoints: unknown[] };
    expect(fastify.stack).toEqual({ framework: 'fastify', language: 'TypeScript' });
    expect(fastify.identities).toEqual(['user']);
    expect(fastify.endpoints).toHaveLength(14);
    expect(fastify.endpoints[0]).toEqual({
      name: 'login',
      method: 'POST',
      route: '/v1/auth/login',
      class: 'auth',
      authKind: 'login',
      anonymous: true,
    });
  });

  test('invalid values are skipped for the next valid fact; invalid items are dropped', () => {
    const fact = (field: string, value: unknown): Fact => ({ field, value, source: 'x', detail: 'x' });
    const answers = factsToAnswers([
      fact('stack.framework', 'rails'),
      fact('stack.framework', 'hono'),
      fact('stack.language', ''),
      fact('stack.trustedProxies', ['10.0.0.0/8', 'not-a-cidr', '10.0.0.0/8']),
      fact('endpoints', [
        { name: '', method: 'GET', route: '/a', class: 'read', anonymous: false },
        { name: 'ok', method: 'GET', route: 'no-slash', class: 'read', anonymous: false },
        { name: 'good', method: 'GET', route: '/good', class: 'read', anonymous: false },
      ]),
      fact('identities', ['robot', 'user']),
      fact('existingLimiters', { kind: 'nginx', settings: {} }),
    ]);
    expect(answers).toEqual({
      stack: { framework: 'hono', trustedProxies: ['10.0.0.0/8'] },
      endpoints: [{ name: 'good', method: 'GET', route: '/good', class: 'read', anonymous: false }],
      identities: ['user'],
    });
    expect(Answers.safeParse(answers).success).toBe(true);
  });
});

describe('another language at the project root', () => {
  test('go.mod: Go, no framework adapter (the TypeScript runtime is the reference to port), the web framework named', async () => {
    const fs = memoryProjectFs({ 'go.mod': 'module example.com/fleet\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.10.0\n' });
    const result = await detectProject(fs);
    expect(result.byField['stack.language']?.value).toBe('Go');
    expect(result.byField['stack.framework']?.value).toBe('other');
    expect(result.summary[0]).toBe('language: Go (go.mod: at the project root, names Gin)');
    const answers = factsToAnswers(result.facts);
    expect(answers.stack).toMatchObject({ language: 'Go', framework: 'other' });
  });

  test('Python, Java and C# manifests; a root package.json keeps its Node.js answers; a docs/ requirements file is not the application', async () => {
    const language = async (files: Record<string, string>) =>
      (await detectProject(memoryProjectFs(files))).byField['stack.language']?.value;
    expect(await language({ 'pyproject.toml': '[project]\ndependencies = ["fastapi>=0.110"]\n' })).toBe('Python');
    expect(await language({ 'pom.xml': '<project><artifactId>spring-boot-starter-web</artifactId></project>' })).toBe('Java');
    expect(await language({ 'Api.csproj': '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>' })).toBe('C#');
    expect(await language({ 'docs/requirements.txt': 'mkdocs\n' })).toBeUndefined();
    expect(await language({ 'package.json': '{"dependencies":{"express":"5.1.0"}}', 'requirements.txt': 'flask\n' })).toBe('JavaScript');
  });
});

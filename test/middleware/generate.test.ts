/** The middleware generator as a pure function: which files, shared core, escaping, ownership of rules. */
import { describe, expect, it } from 'vitest';
import {
  EXPRESS_PATH,
  FASTIFY_PATH,
  MIDDLEWARE_CORE_PATH,
  compileDesign,
  generateExpressMiddleware,
  generateFastifyMiddleware,
  generateMiddleware,
  tsComment,
  tsString,
  tsValue,
} from '../../src/codegen/middleware/index.js';
import { CORE_RUNTIME } from '../../src/codegen/middleware/runtime.js';
import { EXPRESS_ADAPTER, FASTIFY_ADAPTER } from '../../src/codegen/middleware/adapters.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';
import { designFrom } from './harness.js';
import { HOSTILE, HOSTILE_TEXT, MAIN } from './designs.js';

const HOSTILE_STRINGS = ['*/', '`', '${', '"', "'", '\n', '</script>', '\u2028', '\\', '/*'];

describe('escaping helpers', () => {
  it('tsString gives a literal holding exactly the input, inert in HTML', () => {
    for (const s of [HOSTILE_TEXT, ...HOSTILE_STRINGS, '__proto__', 'é ü 漢字 😀']) {
      const lit = tsString(s);
      expect(lit.startsWith('"') && lit.endsWith('"')).toBe(true);
      expect(JSON.parse(lit)).toBe(s);
      // eslint-disable-next-line no-new-func
      expect(new Function(`return ${lit};`)()).toBe(s);
      expect(lit).not.toMatch(/[<>\u2028\u2029\n\r]/);
    }
  });

  it('tsComment can not end a // line or close a block comment', () => {
    for (const s of [HOSTILE_TEXT, ...HOSTILE_STRINGS, 'a\r\nb\u2029c\u0085d']) {
      const c = tsComment(s);
      expect(c).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
      expect(c).not.toContain('*/');
      expect(c).not.toContain('/*');
      // eslint-disable-next-line no-new-func
      expect(new Function(`/* ${c} */\n// ${c}\nreturn 1;`)()).toBe(1);
    }
    expect(tsComment('x'.repeat(500), 50).length).toBeLessThanOrEqual(50);
  });

  it('tsValue writes plain data, strings through tsString, and refuses user text as object keys', () => {
    const value = { a: [1, 'x */ y', null, true], b: { c: HOSTILE_TEXT } };
    // eslint-disable-next-line no-new-func
    expect(new Function(`return ${tsValue(value)};`)()).toEqual(value);
    expect(() => tsValue({ ['bad key']: 1 })).toThrow(/identifier/);
    expect(() => tsValue({ ['__proto__']: 1 } as Record<string, number>)).toThrow();
    expect(() => tsValue(Number.NaN)).toThrow();
  });
});

describe('generated files', () => {
  it.each(exampleNames())('%s: the design framework gets the core plus its adapter; both adapters share one core', (name) => {
    const design = exampleDesign(name);
    const files = generateMiddleware(design);
    const adapter = design.scope.framework === 'fastify' ? FASTIFY_PATH : EXPRESS_PATH;
    expect(files.map((f) => f.path)).toEqual([MIDDLEWARE_CORE_PATH, adapter]);
    for (const f of files) {
      expect(f.language).toBe('typescript');
      expect(f.description.length).toBeGreaterThan(10);
    }
    const express = generateExpressMiddleware(design);
    const fastify = generateFastifyMiddleware(design);
    expect(express.map((f) => f.path)).toEqual([MIDDLEWARE_CORE_PATH, EXPRESS_PATH]);
    expect(fastify.map((f) => f.path)).toEqual([MIDDLEWARE_CORE_PATH, FASTIFY_PATH]);
    expect(express[0]?.content).toBe(fastify[0]?.content);
    // deterministic
    expect(generateMiddleware(exampleDesign(name))).toEqual(files);
  });

  it('the runtime is written once: in the core, never in an adapter', () => {
    const design = exampleDesign('saas-platform');
    const [core, express] = generateExpressMiddleware(design);
    const [, fastify] = generateFastifyMiddleware(design);
    expect(core?.content).toContain(CORE_RUNTIME);
    expect(core?.content.split('function resolveClientIp(').length).toBe(2);
    expect(express?.content.endsWith(EXPRESS_ADAPTER)).toBe(true);
    expect(fastify?.content.endsWith(FASTIFY_ADAPTER)).toBe(true);
    for (const adapter of [express, fastify]) {
      expect(adapter?.content).not.toContain('function resolveClientIp');
      expect(adapter?.content).toContain("from './ratelimit-core.js'");
    }
  });

  it('imports nothing but node:crypto, prom-client, the framework and the core (never rl-design)', () => {
    for (const name of exampleNames()) {
      const design = exampleDesign(name);
      for (const f of [...generateExpressMiddleware(design), ...generateFastifyMiddleware(design).slice(1)]) {
        const specifiers = [...f.content.matchAll(/^(?:import|export)[^'"\n]*from '([^']+)'/gm)].map((m) => m[1]);
        expect(specifiers.length).toBeGreaterThan(0);
        for (const s of specifiers) expect(['node:crypto', 'prom-client', 'express', 'fastify', './ratelimit-core.js']).toContain(s);
      }
    }
  });

  it('koa, hono, nestjs and other get the Express adapter, saying so', () => {
    for (const framework of ['koa', 'hono', 'nestjs', 'other'] as const) {
      const design = designFrom({ ...MAIN, stack: { ...MAIN.stack, framework } });
      const files = generateMiddleware(design);
      expect(files.map((f) => f.path)).toEqual([MIDDLEWARE_CORE_PATH, EXPRESS_PATH]);
      expect(files[1]?.content).toContain(`The design's framework is ${framework}, which has no adapter of its own yet`);
    }
    expect(generateMiddleware(designFrom(MAIN))[1]?.content).not.toContain('no adapter of its own');
  });
});

describe('which rules the middleware owns', () => {
  it('edge and outbound rules are left to the gateway and the outbound client, and named as such', () => {
    const design = exampleDesign('saas-platform');
    const c = compileDesign(design);
    const edge = design.rules.filter((r) => r.layer === 'edge').map((r) => r.id);
    const outbound = design.rules.filter((r) => r.tier === 'outbound').map((r) => r.id);
    expect(edge.length).toBeGreaterThan(0);
    expect(outbound.length).toBeGreaterThan(0);
    const owned = c.rules.map((r) => r.id);
    for (const id of [...edge, ...outbound]) {
      expect(owned).not.toContain(id);
      expect(c.skipped.map((s) => s.id)).toContain(id);
    }
    expect(owned.sort()).toEqual(design.rules.filter((r) => r.layer === 'middleware').map((r) => r.id).sort());
    const core = generateMiddleware(design)[0]?.content ?? '';
    expect(core).toMatch(/global-ceiling: edge rule: enforced by the gateway/);
    expect(core).toMatch(/outbound-stripe: outbound limit/);
  });

  it('evaluates ceiling first, then security, fairness and quota', () => {
    const order = { ceiling: 0, security: 1, fairness: 2, quota: 3 };
    for (const name of exampleNames()) {
      const tiers = compileDesign(exampleDesign(name)).rules.map((r) => order[r.tier]);
      expect(tiers).toEqual([...tiers].sort((a, b) => a - b));
    }
    expect(compileDesign(exampleDesign('consumer-auth')).rules[0]?.id).toBe('global-ceiling');
  });

  it('carries the design numbers, routes, costs, fail modes, headers, error codes, flags and hybrid marks', () => {
    const c = compileDesign(exampleDesign('saas-platform'));
    const free = c.rules.find((r) => r.id === 'fairness-free');
    expect(free).toMatchObject({
      tier: 'fairness',
      identity: 'tenant',
      plan: 'Free',
      script: 'gcra',
      store: 'redis',
      key: '{t:<tenant-id>}:req:free',
      limit: 60,
      periodSeconds: 60,
      burst: 25,
      failMode: 'open',
      headers: 'full',
      errorCode: 'RATE_LIMITED',
      flag: 'ratelimit.fairness-free.mode',
      hybrid: true,
    });
    expect(free?.costByEndpoint).toContainEqual(['export-orders', 25]);
    expect(free?.routes.map((i) => c.routes[i]?.route)).toContain('/v1/orders/:id');
    const pro = c.rules.find((r) => r.id === 'quota-pro');
    expect(pro).toMatchObject({ errorCode: 'QUOTA_EXCEEDED', script: 'fixed-window', window: 'calendar', limit: 1_200_000, quota: 1_000_000 });
    const login = c.rules.filter((r) => r.id.startsWith('auth-login'));
    expect(login.map((r) => r.key)).toEqual(['{auth:login}:un:<sha256(username)>', '{auth:login}:ip:<client-ip>']);
    expect(login.every((r) => r.headers === 'silent' && r.failMode === 'closed')).toBe(true);
    expect(c.routes.find((r) => r.route === '/healthz')).toMatchObject({ exempt: true });
    expect(c.quotaPeriod).toEqual({ kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' });
    expect(c.hybrid).toEqual({ localBurst: 2, instances: 6, overAdmission: 12 });
    expect(c.defaultMode).toBe('shadow');
  });

  it('hostile names reach the core only as escaped literals and sanitised comments', () => {
    const files = generateMiddleware(designFrom(HOSTILE));
    const templates = [CORE_RUNTIME, EXPRESS_ADAPTER];
    for (const [i, f] of files.entries()) {
      // the only block comments are the template's own JSDoc: user text opens none
      expect(f.content.split('/**').length).toBe((templates[i] ?? '').split('/**').length);
      for (const line of f.content.split('\n')) {
        if (line.trimStart().startsWith('//')) {
          expect(line).not.toContain('*/');
          expect(line).not.toContain('/*');
        }
      }
      expect(f.content).not.toContain('</script>');
      expect(f.content).not.toMatch(/[\u2028\u2029]/);
    }
  });
});

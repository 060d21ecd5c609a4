/**
 * Kong: the declarative config against Kong's plugin schemas, and which plugin instances run
 * per request under Kong's plugin resolution (one instance per plugin name, the most specific).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { edgeRoute, edgeRules, exemptRoutes } from '../../src/codegen/gateway/edge.js';
import { Redis } from 'ioredis';
import {
  generateKong,
  kongConfig,
  kongCoverage,
  kongRetryAfterLua,
  KONG_CEILING_PLUGIN,
  KONG_RETRY_AFTER_PLUGIN,
  KONG_RULE_PLUGIN,
} from '../../src/codegen/gateway/kong.js';
import { startRedis } from '../helpers/redis.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { hostileDesign } from './support/hostile.js';
import { checkKongFile, checkRateLimitingConfig, kongPluginsFor, kongRoute } from './support/kong-schema.js';

type Obj = Record<string, any>;

function kongDesign(): Design {
  const base = exampleAnswers('saas-platform');
  return buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway: 'kong' } }), { date: DATE });
}

function withEdgeRules(design: Design, edit: (edge: MatrixRule[]) => MatrixRule[]): Design {
  const edge = design.rules.filter((r) => r.layer === 'edge');
  return { ...design, rules: [...design.rules.filter((r) => r.layer !== 'edge'), ...edit(edge)] };
}

/** A request path the route matches. */
function sampleFor(route: string): string {
  const s = route.replace(/:([A-Za-z0-9_]+)\??/g, 'abc').replace(/\*[A-Za-z0-9_]*/g, 'x/y');
  return s.length > 1 && s.endsWith('/') ? s.slice(0, -1) : s;
}

function variants(): [string, Design][] {
  const d = kongDesign();
  const perIp = d.rules.find((r) => r.id === 'anonymous-per-ip')!;
  return [
    ['saas-platform on kong', d],
    [
      'per-client rule over every endpoint beside a routed one',
      withEdgeRules(d, (e) => [...e, { ...perIp, id: 'everyone-per-ip', routes: [] }]),
    ],
    ['two rules on one endpoint', withEdgeRules(d, (e) => [...e, { ...perIp, id: 'catalog-per-key', identity: 'api-key' }])],
    ['no ceiling', withEdgeRules(d, (e) => e.filter((r) => r.id !== 'global-ceiling'))],
    [
      'per-IP rule over two GET endpoints and a POST one',
      withEdgeRules(d, (e) =>
        e.map((r) =>
          r.id === perIp.id
            ? { ...r, routes: [...r.routes, { method: 'GET', route: '/v1/orders' }, { method: 'POST', route: '/v1/orders' }] }
            : r,
        ),
      ),
    ],
    ['hostile', hostileDesign()],
    ...exampleNames().map((n) => [`example ${n}`, exampleDesign(n)] as [string, Design]),
  ];
}

/** Rule ids of the plugin instances that run for one request. */
function rulesRun(doc: Obj, method: string, path: string): string[] {
  return kongPluginsFor(doc, method, path)
    .flatMap((p) => (p.tags as string[]).filter((t) => t.startsWith('rule-')))
    .map((t) => t.slice('rule-'.length))
    .sort();
}

describe('Kong declarative config', () => {
  for (const [name, design] of variants()) {
    it(`${name}: fields as Kong's schemas define them`, () => {
      const doc = parseYaml(generateKong(design)[0]!.content) as Obj;
      expect(checkKongFile(doc)).toEqual([]);
    });

    it(`${name}: every rule of every endpoint runs, or the file says it cannot`, () => {
      const doc = kongConfig(design) as Obj;
      const content = generateKong(design)[0]!.content;
      const rules = edgeRules(design).filter((r) => r.key !== 'unsupported');
      const exempt = new Set(exemptRoutes(design).map((r) => `${r.method} ${r.route}`));
      const coverage = kongCoverage(design);
      for (const e of design.scope.endpoints) {
        const method = e.method === 'ANY' ? 'GET' : e.method.toUpperCase();
        const run = rulesRun(doc, method, sampleFor(e.route));
        if (exempt.has(`${e.method} ${e.route}`)) {
          expect(run, `${e.method} ${e.route} is exempt`).toEqual([]);
          continue;
        }
        const here = edgeRoute(e.method, e.route);
        const applies = rules
          .filter(
            (r) =>
              r.routes.length === 0 || r.routes.some((x) => x.pathBody === here.pathBody && String(x.methods) === String(here.methods)),
          )
          .map((r) => r.id);
        const c = coverage.find((x) => x.method === e.method && x.route === e.route)!;
        // what the model of Kong runs is what the generator says runs
        expect(run, `${e.method} ${e.route}`).toEqual(c.runs.map((id) => id.replace(/[^A-Za-z0-9._~-]/g, '_')).sort());
        // every rule that covers the endpoint runs, or is named in the file as not counted there
        expect([...c.runs, ...c.replaced].sort()).toEqual([...applies].sort());
        for (const _id of c.replaced) expect(content).toContain(`${e.method} ${e.route}: `);
        // the ceiling always runs
        for (const r of rules.filter((x) => x.key === 'global' && x.routes.length === 0)) expect(c.runs).toContain(r.id);
      }
    });
  }

  it('on saas-platform the ceiling and the per-IP rule both count GET /v1/catalog', () => {
    const doc = kongConfig(kongDesign()) as Obj;
    expect(rulesRun(doc, 'GET', '/v1/catalog')).toEqual(['anonymous-per-ip', 'global-ceiling']);
    expect(rulesRun(doc, 'POST', '/v1/orders')).toEqual(['global-ceiling']);
    expect(kongRoute(doc, 'GET', '/healthz')?.service.name).toMatch(/-health$/);
    const plugins = kongPluginsFor(doc, 'GET', '/v1/catalog')
      .map((p) => p.name)
      .sort();
    expect(plugins).toEqual([KONG_RULE_PLUGIN, KONG_CEILING_PLUGIN, KONG_RETRY_AFTER_PLUGIN].sort());
    expect(kongPluginsFor(doc, 'GET', '/healthz')).toEqual([]);
  });

  it('a rule keeps one counter over endpoints that share their methods', () => {
    const design = variants().find(([n]) => n.startsWith('per-IP rule over two GET'))![1];
    const doc = kongConfig(design) as Obj;
    const routes = (doc.services[0].routes as Obj[]).filter((r) => r.plugins?.some((p: Obj) => p.tags.includes('rule-anonymous-per-ip')));
    expect(routes.map((r) => [r.methods, r.paths.length])).toEqual([
      [['GET', 'HEAD'], 2],
      [['POST'], 1],
    ]);
    expect(rulesRun(doc, 'GET', '/v1/orders')).toEqual(['anonymous-per-ip', 'global-ceiling']);
    expect(rulesRun(doc, 'POST', '/v1/orders')).toEqual(['anonymous-per-ip', 'global-ceiling']);
    expect(rulesRun(doc, 'GET', '/v1/orders/42')).toEqual(['global-ceiling']);
    expect(generateKong(design)[0]!.content).toMatch(/anonymous-per-ip: .*on 2 Kong routes/);
  });

  it("each rule's note says where its counters live, as its plugin's policy does: Redis with a store, each node without", () => {
    const base = exampleAnswers('saas-platform');
    const noStore = buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway: 'kong', store: 'none', topology: 'single' } }), {
      date: DATE,
    });
    for (const [design, policy] of [
      [kongDesign(), 'redis'],
      [noStore, 'local'],
    ] as const) {
      const doc = kongConfig(design) as Obj;
      const plugin = kongPluginsFor(doc, 'GET', '/v1/catalog').find((p) => p.tags.includes('rule-anonymous-per-ip'))!;
      expect(plugin.config.policy).toBe(policy);
      const note = generateKong(design)[0]!
        .content.split('\n')
        .find((l) => l.startsWith('# anonymous-per-ip: '))!;
      expect(note).toContain(policy === 'redis' ? 'counters shared through Redis' : 'policy local: one counter per Kong node');
      expect(note).not.toContain(policy === 'redis' ? 'policy local' : 'Redis');
      // and the header asks for a Redis host only when a plugin uses one
      const content = generateKong(design)[0]!.content;
      const header = content.slice(0, content.indexOf('\n_format_version'));
      if (policy === 'redis') expect(header).toContain('redis.internal');
      else expect(header).not.toMatch(/redis\.internal|redis_host/);
      expect(content.includes('redis.internal')).toBe(policy === 'redis');
    }
  });

  it('the model catches the old layout: one rate-limiting on the service, another on the route', () => {
    const doc = kongConfig(kongDesign()) as Obj;
    const ceiling = doc.services[0].plugins.find((p: Obj) => p.name === KONG_CEILING_PLUGIN);
    ceiling.name = KONG_RULE_PLUGIN; // as generated before: both instances named rate-limiting
    expect(rulesRun(doc, 'GET', '/v1/catalog')).toEqual(['anonymous-per-ip']);
    expect(rulesRun(doc, 'POST', '/v1/orders')).toEqual(['global-ceiling']);
  });

  it("rate-limiting's schema refuses what Kong refuses", () => {
    const errs = (c: Obj): string => {
      const e: string[] = [];
      checkRateLimitingConfig('config', c, true, e);
      return e.join('\n');
    };
    expect(errs({ second: 5, policy: 'redis' })).toMatch(/redis.host: required/);
    expect(errs({ second: 5, limit_by: 'header' })).toMatch(/header_name: required/);
    expect(errs({ limit_by: 'ip' })).toMatch(/at least one of/);
    expect(errs({ second: 10, minute: 5 })).toMatch(/minute cannot be lower/);
    expect(errs({ second: 5, policy: 'cluster' })).toMatch(/policy: cluster/);
    expect(errs({ second: 5, sync_rate: 1 })).toMatch(/sync_rate can only be used with the redis policy/);
    expect(errs({ second: 5, burst: 3 })).toMatch(/unknown field "burst"/);
    expect(errs({ second: 0 })).toMatch(/second: a number > 0/);
    const doc = parseYaml(generateKong(kongDesign())[0]!.content) as Obj;
    doc.services[0].routes[0].plugins.push(structuredClone(doc.services[0].routes[0].plugins[0]));
    expect(checkKongFile(doc).join('\n')).toMatch(/a second rate-limiting on the same route|not unique/);
  });
});

describe("Kong's Retry-After post-function", () => {
  let server: Awaited<ReturnType<typeof startRedis>>;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** Compiles a chunk with Lua 5.1's loadstring (redis-server's Lua; Kong's LuaJIT reads 5.1 syntax). */
  const compile = (code: string): Promise<unknown> =>
    redis.eval('local f, err = loadstring(ARGV[1]) if f then return "ok" end return err', 0, code);

  it('is Lua that compiles, and only touches 429s without Retry-After', async () => {
    for (const [, design] of variants()) {
      const doc = kongConfig(design) as Obj;
      for (const p of doc.services.flatMap((s: Obj) => s.plugins ?? []).filter((p: Obj) => p.name === KONG_RETRY_AFTER_PLUGIN)) {
        for (const chunk of p.config.header_filter) expect(await compile(chunk)).toBe('ok');
      }
    }
    expect(await compile('if then')).not.toBe('ok');
    const code = kongRetryAfterLua(60);
    expect(code).toContain('kong.response.get_status() == 429');
    expect(code).toContain('not kong.response.get_header("Retry-After")');
    expect(code).toContain('kong.response.set_header("Retry-After", "60")');
  });

  it('says the longest wait: one window of the slowest rule Kong runs', () => {
    const d = kongDesign();
    const slow = withEdgeRules(d, (e) =>
      e.map((r) => (r.id === 'anonymous-per-ip' ? { ...r, rate: { requests: 30, periodSeconds: 60 } } : r)),
    );
    const code = (kongConfig(slow) as Obj).services[0].plugins.find((p: Obj) => p.name === KONG_RETRY_AFTER_PLUGIN).config.header_filter[0];
    expect(code).toContain('"Retry-After", "60"');
  });
});

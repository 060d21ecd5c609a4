/**
 * What the document states about an edge rule is what the shipped gateway file does: the Envoy
 * local buckets never admit more than the matrix states, a rule Kong replaces on a route is not
 * stated as counted there, Cloudflare's ceiling is stated per data centre over the period the
 * shipped rule counts, and a rule that keeps its count in the gateway node states the fail mode
 * the answers ask for. Each design is built from answers and read back from the generated files
 * and the rendered document.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { edgeRoute } from '../../src/codegen/gateway/edge.js';
import { kongRoutePath } from '../../src/codegen/gateway/kong.js';
import { generateCode } from '../../src/codegen/index.js';
import { shippedDesign } from '../../src/constraints/artefacts.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { fleetAdmission } from '../../src/design/gateway-behaviour.js';
import type { MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';

const DATE = '2026-12-03';

function build(raw: unknown) {
  const design = buildDesign(Answers.parse(raw), { date: DATE });
  const files = generateCode(design);
  const checks = checkDesign(design, files);
  const doc = renderMarkdown({ design, checks, codeFiles: files }, { layout: 'single' })[0]?.content ?? '';
  const file = (path: string): string => {
    const f = files.find((x) => x.path === path);
    if (!f) throw new Error(`no ${path} among ${files.map((x) => x.path).join(', ')}`);
    return f.content;
  };
  const rule = (id: string): MatrixRule => {
    const r = design.rules.find((x) => x.id === id);
    if (!r) throw new Error(`no rule ${id}`);
    return r;
  };
  return { design, files, checks, doc, file, rule };
}

/** The text of a document section from its heading to the next heading of the same or a higher level. */
function section(doc: string, heading: string): string {
  const at = doc.indexOf(`\n${heading}`);
  if (at < 0) throw new Error(`no section ${heading}`);
  const level = heading.split(' ')[0] as string;
  const rest = doc.slice(at + 1 + heading.length);
  const next = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return heading + (next < 0 ? rest : rest.slice(0, next));
}

/** The matrix table's row of a rule, as its cells. */
function matrixRow(doc: string, id: string): string[] {
  const line = doc.split('\n').find((l) => l.startsWith(`| [\`${id}\`]`));
  if (!line) throw new Error(`no matrix row for ${id}`);
  return line.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
}

const seconds = (d: string): number => Number(String(d).replace(/s$/, ''));

function envoyAnswers(capacityRps: number, rules: unknown[]) {
  return {
    project: { name: 'Odd Ceiling Feed' },
    goals: ['overload', 'abuse'],
    stack: {
      language: 'TypeScript',
      framework: 'fastify',
      topology: 'horizontal',
      instances: 3,
      gateway: 'envoy',
      store: 'valkey',
      trustedProxies: ['10.0.0.0/8'],
    },
    identities: ['ip'],
    endpoints: [
      { name: 'current', method: 'GET', route: '/v2/current', class: 'read', anonymous: true },
      { name: 'report', method: 'POST', route: '/v2/reports', class: 'write', anonymous: true },
      { name: 'health', method: 'GET', route: '/health', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 3, peakRps: 5, capacityRps, burstiness: 'moderate', distinctClients: 400 },
    failure: { byClass: { read: 'open', write: 'closed' } },
    rules,
  };
}

describe('Envoy local buckets admit no more than the document states', () => {
  const cases: [string, number, unknown[]][] = [
    [
      'a 7 req/s ceiling (1 s fills) with descriptors of 10/s burst 5 and 3/min burst 2',
      7,
      [
        { id: 'report-global', endpoints: ['report'], identity: 'global', layer: 'edge', rate: { requests: 10, per: 'second' }, burst: 5 },
        { id: 'current-global', endpoints: ['current'], identity: 'global', layer: 'edge', rate: { requests: 3, per: 'minute' }, burst: 2 },
      ],
    ],
    [
      'a 13 req/s ceiling with a descriptor of 40/s burst 1',
      13,
      [{ id: 'report-global', endpoints: ['report'], identity: 'global', layer: 'edge', rate: { requests: 40, per: 'second' }, burst: 1 }],
    ],
    [
      'a 1,000 req/s ceiling (50 ms fills) with a descriptor of 7/s burst 3',
      1000,
      [{ id: 'report-global', endpoints: ['report'], identity: 'global', layer: 'edge', rate: { requests: 7, per: 'second' }, burst: 3 }],
    ],
  ];
  for (const [name, capacity, rules] of cases) {
    it(name, () => {
      const { file, rule, doc } = build(envoyAnswers(capacity, rules));
      const yaml = parseYaml(file('gateway/envoy-local-ratelimit.yaml'));
      const filters: any[] = yaml.http_connection_manager.http_filters;
      const local = filters.find((f) => f.name === 'envoy.filters.http.local_ratelimit').typed_config;
      const buckets: [string, any][] = [
        ['global-ceiling', local.token_bucket],
        ...local.descriptors.map((d: any) => [d.entries[0].value, d.token_bucket] as [string, any]),
      ];
      expect(buckets.length).toBeGreaterThan(1);
      const baseMs = Math.round(seconds(local.token_bucket.fill_interval) * 1000);
      for (const [id, bucket] of buckets) {
        const r = rule(id);
        const stated = { rate: r.rate!.requests / r.rate!.periodSeconds, burst: r.burst as number };
        expect(bucket.max_tokens, `${id}: max_tokens against the stated burst`).toBeLessThanOrEqual(stated.burst);
        expect(bucket.tokens_per_fill / seconds(bucket.fill_interval), `${id}: refill against the stated rate`).toBeLessThanOrEqual(
          stated.rate + 1e-9,
        );
        // a descriptor fills at a multiple of the filter-wide interval (Envoy refuses the file otherwise)
        expect(Math.round(seconds(bucket.fill_interval) * 1000) % baseMs).toBe(0);
        // the document's matrix row states the same burst
        expect(matrixRow(doc, id)[3]).toContain(`burst ${stated.burst.toLocaleString('en-US')}`);
      }
    });
  }
});

describe("Cloudflare's ceiling is stated per data centre, over the period the shipped rule counts", () => {
  const raw = JSON.parse(readFileSync(new URL('../fixtures/review/express-cloudflare.answers.json', import.meta.url), 'utf8'));
  const { file, rule, doc, design } = build(raw);
  const shipped = JSON.parse(file('gateway/cloudflare-ratelimit.json'));
  const cfRule = shipped.rules.find((r: any) => String(r.description).startsWith('global-ceiling:'));

  it('the shipped rule counts per data centre over the period the matrix states', () => {
    expect(cfRule.ratelimit.characteristics).toContain('cf.colo.id');
    const ceiling = rule('global-ceiling');
    expect(cfRule.ratelimit.period).toBe(ceiling.rate!.periodSeconds);
    expect(cfRule.ratelimit.requests_per_period).toBe(ceiling.rate!.requests);
    // a count lives the period and the previous one Cloudflare weighs in, not a fixed 60 s
    expect(ceiling.ttlSeconds).toBe(2 * cfRule.ratelimit.period);
    expect(ceiling.cardinality?.basis).toContain('one counter in each data centre');
  });

  it('the document says so in the rule details and in the worst-case row', () => {
    const details = section(doc, '#### Rule `global-ceiling`');
    expect(details).toContain(`**TTL:** ${2 * cfRule.ratelimit.period} s`);
    expect(details).toContain(`over the rule's ${cfRule.ratelimit.period} s period`);
    expect(details).toMatch(/1 key: one counter in each data centre \(the bound is per data centre\)/);
    const row = doc.split('\n').find((l) => l.startsWith('| `global-ceiling` | edge |'));
    expect(row).toBeDefined();
    const per = cfRule.ratelimit.requests_per_period.toLocaleString('en-US');
    expect(row).toContain(`| ${per} per ${cfRule.ratelimit.period} s in each data centre |`);
    expect(row).toContain(`| ${(2 * cfRule.ratelimit.requests_per_period).toLocaleString('en-US')} per data centre |`);
    expect(row).toContain(`period ${cfRule.ratelimit.period} in gateway/cloudflare-ratelimit.json`);
    expect(row).toContain('D x it');
    expect(design.scope.gateway).toBe('cloudflare');
  });
});

/**
 * A keyless Koa API behind nginx only, whose answers make two classes fail closed; every call
 * costs 1 unless `costly` (then the trip plan costs 10 and a report the write class's 2, so the
 * edge gives each cost a rule of its own).
 */
function keyless(gateway: string, store = 'redis', costly = false) {
  return {
    project: { name: 'Open Transit Feed' },
    goals: ['overload', 'abuse'],
    stack: {
      language: 'TypeScript',
      framework: 'koa',
      topology: 'horizontal',
      instances: 2,
      gateway,
      store,
      trustedProxies: ['10.0.0.0/8'],
    },
    identities: ['ip'],
    endpoints: [
      { name: 'departures', method: 'GET', route: '/v1/stops/:id/departures', class: 'read', anonymous: true },
      { name: 'trip-plan', method: 'POST', route: '/v1/plan', class: 'expensive', anonymous: true, cost: costly ? 10 : 1 },
      { name: 'report', method: 'POST', route: '/v1/reports', class: 'write', anonymous: true, ...(costly ? {} : { cost: 1 }) },
      { name: 'health', method: 'GET', route: '/healthz', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 400, peakRps: 1500, burstiness: 'high', distinctClients: 200000 },
    failure: { byClass: { read: 'open', expensive: 'closed', write: 'closed' }, fallback: 'memory' },
    headers: { convention: 'x-ratelimit' },
  };
}

describe('an edge rule counted in the gateway node states the fail mode the answers give its classes', () => {
  const { design, file, rule, doc } = build(keyless('nginx'));

  it('the per-client rule states the strictest of its classes (closed), the ceiling open, in the matrix and in nginx.conf', () => {
    expect(rule('anonymous-per-ip').failMode).toBe('closed');
    expect(rule('global-ceiling').failMode).toBe('open');
    expect(matrixRow(doc, 'anonymous-per-ip')[4]).toBe('fail closed');
    const conf = file('gateway/nginx.conf');
    for (const r of design.rules) {
      const at = conf.indexOf(`# ${r.id}: `);
      expect(at, r.id).toBeGreaterThanOrEqual(0);
      const comment = conf.slice(at, conf.indexOf('\nmap ', at));
      expect(comment).toContain(
        `fail ${r.failMode} if its count moves to a shared store (here each nginx node counts it: no store to fail)`,
      );
    }
  });

  it('the fail-mode section says why there is no store to fail and what the answered modes mean, class by class', () => {
    const text = section(doc, '### 2.2');
    expect(text).not.toContain('applies if its\nstate moves to a shared store.');
    expect(text).toContain('have no store to fail on');
    expect(text).toContain('the strictest where they differ');
    expect(text).toContain('The ceiling states fail open');
    expect(text).toContain('| read | fail open | global-ceiling (open), anonymous-per-ip (closed) |');
    expect(text).toContain('| expensive | fail closed | global-ceiling (open), anonymous-per-ip (closed) |');
    expect(text).toContain('| write | fail closed | global-ceiling (open), anonymous-per-ip (closed) |');
    expect(text).toMatch(/\*\*Stricter than answered:\*\* read is answered open/);
    // no 503 is promised for a rule that cannot fail
    expect(doc).not.toMatch(/Fail-closed rules: `anonymous-per-ip`/);
  });

  it('split by cost at the edge, each part states the mode of the classes it keeps, in the matrix, section 2.2 and nginx.conf', () => {
    const split = build(keyless('nginx', 'redis', true));
    expect(split.rule('anonymous-per-ip').failMode).toBe('open');
    expect(split.rule('anonymous-per-ip-cost-10').failMode).toBe('closed');
    expect(split.rule('anonymous-per-ip-cost-2').failMode).toBe('closed');
    const text = section(split.doc, '### 2.2');
    expect(text).toContain('| read | fail open | global-ceiling (open), anonymous-per-ip (open) |');
    expect(text).toContain('| expensive | fail closed | global-ceiling (open), anonymous-per-ip-cost-10 (closed) |');
    expect(text).not.toContain('Stricter than answered');
    const conf = split.file('gateway/nginx.conf');
    for (const r of split.design.rules) {
      const at = conf.indexOf(`# ${r.id}: `);
      expect(at, r.id).toBeGreaterThanOrEqual(0);
      expect(conf.slice(at, conf.indexOf('\nmap ', at))).toContain(`fail ${r.failMode} if its count moves to a shared store`);
    }
  });

  it('moved into the middleware with a store, the rules fail per class as the answers say, and so does the shipped design module', () => {
    const mw = build(keyless('none'));
    for (const f of mw.design.failModes ?? []) expect(f.effective, f.endpointClass).toBe(f.answered);
    const shipped = shippedDesign(mw.files);
    expect(shipped).toBeDefined();
    for (const r of mw.design.rules.filter((x) => x.layer === 'middleware')) {
      expect(shipped!.rules.find((x) => x.id === r.id)?.failMode, r.id).toBe(r.failMode);
    }
    // every class the answers make fail closed is covered at the edge by a rule stating closed
    for (const c of ['expensive', 'write'] as const) {
      const eps = design.scope.endpoints.filter((e) => e.class === c).map((e) => e.name);
      expect(
        design.rules.some((r) => r.failMode === 'closed' && r.endpoints.some((n) => eps.includes(n))),
        c,
      ).toBe(true);
    }
  });

  it("Kong's local policy ships fault_tolerant as the rule's stated mode", () => {
    const raw = keyless('kong', 'none');
    // one node without a store: Kong counts each rule in its own memory (policy local)
    const kong = build({ ...raw, stack: { ...raw.stack, topology: 'single', instances: 1 } });
    const yaml = parseYaml(kong.file('gateway/kong.yaml'));
    const plugins: any[] = [...(yaml.services[0].plugins ?? []), ...yaml.services[0].routes.flatMap((r: any) => r.plugins ?? [])].filter(
      (p) => p.name === 'rate-limiting',
    );
    expect(plugins.length).toBeGreaterThan(0);
    for (const p of plugins) {
      const id = (p.tags as string[]).find((t) => t.startsWith('rule-'))?.slice('rule-'.length) ?? '';
      const r = kong.rule(id);
      expect(p.config.policy).toBe('local');
      expect(r.failMode).toBe('closed');
      expect(p.config.fault_tolerant, id).toBe(r.failMode === 'open');
    }
    expect(kong.file('gateway/kong.yaml')).toContain(
      'Fail closed (fault_tolerant false) if its policy moves to redis; policy local has no store to fail.',
    );
  });
});

describe("Kong's one rate-limiting instance per route: the document counts a rule only where kong.yaml does", () => {
  const raw = {
    project: { name: 'Two Rules Kong' },
    goals: ['overload', 'abuse'],
    stack: { language: 'TypeScript', framework: 'express', topology: 'horizontal', instances: 2, gateway: 'kong', store: 'redis' },
    identities: ['ip'],
    endpoints: [
      { name: 'search', method: 'GET', route: '/v1/search', class: 'read', anonymous: true },
      { name: 'report', method: 'POST', route: '/v1/reports', class: 'write', anonymous: true },
      { name: 'health', method: 'GET', route: '/healthz', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 100, peakRps: 400, burstiness: 'moderate', distinctClients: 5000 },
    failure: { byClass: { read: 'open', write: 'closed' } },
    rules: [
      // the same key as anonymous-per-ip on the search route: merged, the stricter count enforced
      { id: 'search-per-ip', endpoints: ['search'], identity: 'ip', layer: 'edge', rate: { requests: 5, per: 'second' } },
      // another key: one instance cannot carry it beside the per-IP rules
      { id: 'search-global', endpoints: ['search'], identity: 'global', layer: 'edge', rate: { requests: 100, per: 'second' } },
    ],
  };
  const { design, file, doc, rule } = build(raw);
  const yaml = parseYaml(file('gateway/kong.yaml'));
  const routes: any[] = yaml.services[0].routes;
  const carriers = (id: string) =>
    routes.flatMap((r) =>
      (r.plugins ?? []).filter((p: any) => p.name === 'rate-limiting' && p.tags.includes(`rule-${id}`)).map((p: any) => ({ route: r, p })),
    );
  const worstRows = doc.split('\n').filter((l) => /^\| `[a-z0-9-]+` \| edge /.test(l));

  it('the rule of the same key is merged into the route instance, which enforces the stricter count', () => {
    const search = carriers('search-per-ip');
    expect(search).toHaveLength(1);
    expect(search[0].p.tags).toContain('rule-anonymous-per-ip');
    expect(search[0].p.config.second).toBe(Math.min(rule('search-per-ip').rate!.requests, rule('anonymous-per-ip').rate!.requests));
    expect(rule('search-per-ip').notEnforced).toBeUndefined();
    expect(worstRows.some((l) => l.startsWith('| `search-per-ip` |'))).toBe(true);
  });

  it('the rule of another key, which kong.yaml does not carry, is stated as not enforced in the matrix, the placement and the worst case', () => {
    expect(carriers('search-global')).toHaveLength(0);
    expect(file('gateway/kong.yaml')).toContain('GET /v1/search: search-global');
    const r = rule('search-global');
    expect(r.notEnforced?.all).toBe(true);
    expect(matrixRow(doc, 'search-global')[5]).toBe('edge: not enforced (Kong counts another rule in its place)');
    expect(section(doc, '#### Rule `search-global`')).toContain('Not enforced anywhere: Kong runs one rate-limiting instance per route');
    expect(worstRows.some((l) => l.startsWith('| `search-global` |'))).toBe(false);
    expect(doc).toContain('`search-global` has no row: nothing counts it.');
    const edgeLayer = design.enforcement.layers.find((l) => l.layer === 'edge');
    expect(edgeLayer?.why).toContain('search-global is not enforced');
  });

  it('every edge rule the document counts is carried by a kong.yaml instance on each of its routes, at no more than its count', () => {
    for (const r of design.rules.filter((x) => x.layer === 'edge' && x.routes.length > 0 && !x.notEnforced)) {
      const on = carriers(r.id);
      expect(on.length, r.id).toBeGreaterThan(0);
      for (const { p } of on) expect(p.config.second, r.id).toBeLessThanOrEqual(r.rate!.requests);
      const paths = on.flatMap(({ route }) => route.paths as string[]);
      for (const route of r.routes)
        expect(paths.includes(kongRoutePath(edgeRoute(route.method, route.route))), `${r.id} ${route.route}`).toBe(true);
    }
  });
});

describe("Kong's one instance on the service: a second rule over every endpoint is stated as not enforced", () => {
  const raw = {
    project: { name: 'Service Rule Kong' },
    goals: ['overload', 'abuse'],
    stack: { language: 'TypeScript', framework: 'express', topology: 'horizontal', instances: 2, gateway: 'kong', store: 'redis' },
    identities: ['ip'],
    endpoints: [
      { name: 'search', method: 'GET', route: '/v1/search', class: 'read', anonymous: true },
      { name: 'health', method: 'GET', route: '/healthz', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 100, peakRps: 400, burstiness: 'moderate', distinctClients: 5000 },
    failure: { byClass: { read: 'open' } },
    rules: [
      { id: 'all-per-ip', endpointClass: 'all', identity: 'ip', layer: 'edge', rate: { requests: 20, per: 'second' } },
      { id: 'all-per-ip-minute', endpointClass: 'all', identity: 'ip', layer: 'edge', rate: { requests: 600, per: 'minute' } },
    ],
  };
  const { file, doc, rule } = build(raw);
  const yaml = parseYaml(file('gateway/kong.yaml'));
  const plugins: any[] = [...(yaml.services[0].plugins ?? []), ...yaml.services[0].routes.flatMap((r: any) => r.plugins ?? [])];

  it('kong.yaml carries the first on the service and the second nowhere; the document says which', () => {
    const tagged = (id: string) => plugins.filter((p) => p.name === 'rate-limiting' && p.tags.includes(`rule-${id}`));
    expect(tagged('all-per-ip')).toHaveLength(1);
    expect(tagged('all-per-ip-minute')).toHaveLength(0);
    expect(rule('all-per-ip-minute').notEnforced?.all).toBe(true);
    expect(matrixRow(doc, 'all-per-ip-minute')[5]).toBe('edge: not enforced (Kong counts another rule in its place)');
    expect(doc).toContain('`all-per-ip-minute` has no row: nothing counts it.');
    // the route of anonymous-per-ip replaces the service's instance on GET /v1/search
    expect(rule('all-per-ip').notEnforced).toMatchObject({ all: false, routes: ['GET /v1/search'] });
    expect(matrixRow(doc, 'all-per-ip')[5]).toBe('edge, not on GET /v1/search');
    expect(file('gateway/kong.yaml')).toContain('all-per-ip-minute: 600 per minute');
    expect(file('gateway/kong.yaml')).toMatch(
      /all-per-ip-minute: .* Not counted: the service holds one rate-limiting instance, which carries all-per-ip/,
    );
  });
});

describe("a rules entry that sets the ceiling's rate: the document's figures are the ones that ship", () => {
  const saas = JSON.parse(readFileSync(new URL('../../examples/saas-platform.answers.json', import.meta.url), 'utf8'));
  const consumer = JSON.parse(readFileSync(new URL('../../examples/consumer-auth.answers.json', import.meta.url), 'utf8'));
  const withCeiling = (answers: any, rate: { requests: number; per: string }) => ({
    ...answers,
    openapi: undefined,
    rules: [{ id: 'global-ceiling', rate }],
  });

  it('nginx ships 500r/s on each of the 2 nodes, and the rule, its derivation and every key bound say 1,000 req/s', () => {
    const { design, doc, file, rule } = build(withCeiling(saas, { requests: 1000, per: 'second' }));
    const ceiling = rule('global-ceiling');
    expect(ceiling.rate).toMatchObject({ requests: 1000, periodSeconds: 1 });
    expect(file('gateway/nginx.conf')).toContain('zone=rl_global_ceiling:1m rate=500r/s;');
    const fleet = fleetAdmission(design.scope, ceiling);
    expect(fleet).toMatchObject({ rps: 1000, nodeRps: 500 });
    // the rule's own text: the rate and each node's share that nginx.conf ships, and where 1,000 comes from
    const details = section(doc, '#### Rule `global-ceiling`');
    expect(details).toContain(
      "1,000 req/s, set by its rules entry (the answers' traffic alone gives 4,800 req/s from peak 2,400 req/s x 2 headroom)",
    );
    expect(details).toContain(
      // the burst is one second of the rate set (1,000), not of the traffic's 4,800
      '1,000 req/s for the fleet is 500 per 1 s, burst 500 on each of the 2 nodes (stack.gatewayNodes), which the gateway files ship',
    );
    expect(doc).toContain(
      '- `global-ceiling`: 1,000 req/s = stated in its rules entry, in place of 4,800 req/s = peak 2,400 req/s x headroom 2',
    );
    expect(doc).not.toMatch(/4,800 req\/s for the fleet|the ceiling admits 4,800/);
    // every bound sized from admitted traffic: the shipped ceiling's 1,000 req/s x the key's TTL
    const byTraffic = design.rules.filter((r) => r.cardinality?.byTraffic);
    expect(byTraffic.length).toBeGreaterThan(5);
    for (const r of byTraffic) {
      expect(r.cardinality?.basis, r.id).toContain(fleet.text);
      expect(r.cardinality?.bound, r.id).toBeLessThanOrEqual(Math.ceil(fleet.rps * (r.ttlSeconds ?? 0)));
    }
    expect(rule('auth-login-per-ip').cardinality?.bound).toBe(900_000);
    // the worst-case row of the ceiling is the shipped per-node bucket, times the nodes
    expect(doc).toContain('| `global-ceiling` | edge | leaky bucket | 1,000 per 1 s | 2,002 | (1 + 500 + 500/s x 1 s) x 2 nodes |');
  });

  it('without a gateway, the ceiling the middleware runs (600 per minute) bounds the keys', () => {
    const { design, doc, rule } = build(withCeiling(consumer, { requests: 600, per: 'minute' }));
    const ceiling = rule('global-ceiling');
    expect(ceiling).toMatchObject({ layer: 'middleware', rate: { requests: 600, periodSeconds: 60 } });
    expect(section(doc, '#### Rule `global-ceiling`')).toContain('10 req/s, set by its rules entry');
    const byTraffic = design.rules.filter((r) => r.cardinality?.byTraffic);
    expect(byTraffic.length).toBeGreaterThan(0);
    for (const r of byTraffic) {
      expect(r.cardinality?.basis, r.id).toContain('the ceiling admits 10 req/s');
      expect(r.cardinality?.bound, r.id).toBeLessThanOrEqual(Math.ceil(10 * (r.ttlSeconds ?? 0)));
    }
  });
});

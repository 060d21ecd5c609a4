/**
 * A design whose every rule runs at the gateway: what the document states about each rule (its
 * algorithm, burst, where it counts, how it fails), its monitoring, its response contract and
 * its rollout must be what the generated gateway files and alert rules do. The answers are a
 * public, keyless API (identities: ip only) on three instances with mixed fail modes.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { GATEWAYS } from '../../src/answers/choices.js';
import { type CodeFile, generateCode } from '../../src/codegen/index.js';
import { shippedEdgeLimits } from '../../src/codegen/gateway/shipped.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { edgeCounter } from '../../src/design/gateway-behaviour.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { checkEnvoyFilterFile, checkRatelimitServiceFile } from '../codegen/support/envoy-api.js';

const DATE = '2026-12-03';

function answers(gateway: string): Answers {
  return Answers.parse({
    project: { name: 'Open Weather Feed', description: 'Public, keyless weather API.' },
    output: { format: 'markdown', layout: 'single', path: 'out/design', codeDir: 'out/code' },
    goals: ['overload', 'abuse'],
    stack: {
      language: 'TypeScript',
      framework: 'fastify',
      topology: 'horizontal',
      instances: 3,
      gateway,
      store: 'valkey',
      trustedProxies: ['10.0.0.0/8'],
    },
    identities: ['ip'],
    endpoints: [
      { name: 'current', method: 'GET', route: '/v2/current', class: 'read', anonymous: true },
      { name: 'forecast', method: 'GET', route: '/v2/forecast/:city', class: 'read', anonymous: true },
      { name: 'history', method: 'GET', route: '/v2/history', class: 'expensive', anonymous: true, cost: 5 },
      { name: 'report', method: 'POST', route: '/v2/reports', class: 'write', anonymous: true },
      { name: 'health', method: 'GET', route: '/health', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 150, peakRps: 600, burstiness: 'moderate', distinctClients: 40000 },
    failure: { byClass: { read: 'open', expensive: 'closed', write: 'closed', health: 'open' } },
    headers: { convention: 'ietf-trio' },
    rollout: { shadowDays: 7 },
    existing: {
      limiters: [{ kind: '@fastify/rate-limit', name: 'globalLimit', source: 'src/server.ts:40', limit: 100, windowSeconds: 60 }],
    },
  });
}

function build(gateway: string) {
  const design = buildDesign(answers(gateway), { date: DATE });
  const files = generateCode(design);
  const checks = checkDesign(design, files);
  const doc = renderMarkdown({ design, checks, codeFiles: files }, { layout: 'single' })[0]?.content ?? '';
  return { design, files, checks, doc };
}

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};

/** The text of one section of the document, from its heading to the next heading of its level or above. */
function section(doc: string, heading: string): string {
  const start = doc.indexOf(heading);
  if (start < 0) throw new Error(`no section ${heading}`);
  const level = heading.match(/^#+/)?.[0].length ?? 2;
  const rest = doc.slice(start + heading.length);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

const GATEWAY_CHOICES = GATEWAYS.filter((g) => g !== 'none');

describe('edge-only design on Envoy: the document states what the shipped files do', () => {
  const { design, files, doc } = build('envoy');
  const filter = parseYaml(files.find((f) => f.path === 'gateway/envoy-local-ratelimit.yaml')!.content);
  const service = parseYaml(files.find((f) => f.path === 'gateway/ratelimit-service.yaml')!.content);
  const hcm = filter.http_connection_manager;
  const globalFilter = hcm.http_filters.find((f: any) => f.name === 'envoy.filters.http.ratelimit').typed_config;
  const localFilter = hcm.http_filters.find((f: any) => f.name === 'envoy.filters.http.local_ratelimit').typed_config;

  it('every rule runs at the edge, and the files are valid Envoy and rate limit service config', () => {
    // history (cost 5) and report (write, cost 2 by its class) count in edge rules of their own: the gateway counts requests
    expect(design.rules.map((r) => [r.id, r.layer])).toEqual([
      ['global-ceiling', 'edge'],
      ['anonymous-per-ip', 'edge'],
      ['anonymous-per-ip-cost-2', 'edge'],
      ['anonymous-per-ip-cost-5', 'edge'],
    ]);
    expect(checkEnvoyFilterFile(filter)).toEqual([]);
    expect(checkRatelimitServiceFile(service)).toEqual([]);
  });

  it('the per-client rule is the rate limit service: a fixed window, no burst, one count for every node', () => {
    const anon = rule(design, 'anonymous-per-ip');
    // the service config: a fixed window of the rule's rate on the remote_address descriptor
    const d = service.descriptors.find((x: any) => x.value === 'anonymous-per-ip');
    expect(d.descriptors[0].key).toBe('remote_address');
    expect(d.descriptors[0].rate_limit).toEqual({ unit: 'second', requests_per_unit: anon.rate!.requests });
    expect(anon.algorithm).toBe('fixed-window');
    expect(anon.burst).toBeNull();
    expect(anon.key).toContain('remote_address');
    expect(anon.key).not.toContain('$binary_remote_addr');
    // the service's key expires with its window
    expect(anon.ttlSeconds).toBe(anon.rate!.periodSeconds);
    // and the document says so, nowhere a burst or a count in each node
    const details = section(doc, '#### Rule `anonymous-per-ip`');
    expect(details).toContain('**Algorithm:** fixed window');
    expect(details).toContain('**Burst:** none');
    expect(details).toContain('one count that every Envoy node shares');
    expect(details).not.toContain('a store outage does not touch it');
    expect(doc).not.toContain('burst 250');
  });

  it('the store-outage scenario says there is no limiter store to stop, not that processes count', () => {
    const outage = design.scenarios.find((x) => x.id === 'store-outage');
    expect(outage?.applicable).toBe(false);
    expect(outage?.setup).toContain('no limiter store to stop');
    expect(doc).not.toContain('each process holds its own counters');
  });

  it("each rule's kill switch is the one its counter has: the local filter's runtime key, or the rule's rate_limits entries", () => {
    const { design, files } = build('envoy');
    const how = (id: string): string => design.rollout.killSwitches.find((k) => k.ruleId === id)?.how ?? '';
    expect(how('global-ceiling')).toContain('ratelimit.edge_local.enabled to 0');
    expect(how('global-ceiling')).not.toContain('rl_rule=');
    expect(how('anonymous-per-ip')).toContain('rl_rule=anonymous-per-ip');
    expect(how('anonymous-per-ip')).not.toContain('token_bucket');
    // the runtime key the switch names is the one the shipped filter reads
    const yaml = files.find((f) => f.path === 'gateway/envoy-local-ratelimit.yaml')?.content ?? '';
    expect(yaml).toContain('runtime_key: ratelimit.edge_local.enabled');
    for (const id of ['global-ceiling', 'anonymous-per-ip']) expect(yaml).toContain(`# ${id} (kill switch: ${how(id)})`);
  });

  it('the worst case counts the service once for the fleet: 2 x limit, not x K nodes', () => {
    const row = section(doc, '### 3.2')
      .split('\n')
      .find((l) => l.startsWith('| `anonymous-per-ip`'))!;
    expect(row).toContain('| 100 | 2 x 50 |');
    expect(row).not.toContain('nodes |');
    // the ceiling stays in each node's local token bucket: x 3 nodes
    expect(localFilter.token_bucket.max_tokens).toBe(rule(design, 'global-ceiling').burst);
    const ceiling = section(doc, '### 3.2')
      .split('\n')
      .find((l) => l.startsWith('| `global-ceiling`'))!;
    expect(ceiling).toContain('x 3 nodes');
  });

  it('failure_mode_deny is the strictest mode the rules the service counts ask for (closed), and the document names the open class that then fails closed', () => {
    // write and expensive are answered closed, read open: Envoy's one setting refuses for all of them
    expect(globalFilter.failure_mode_deny).toBe(true);
    expect(globalFilter.status_on_error).toEqual({ code: 'ServiceUnavailable' });
    expect(design.scope.envoyDenyRules?.slice().sort()).toEqual(['anonymous-per-ip-cost-2', 'anonymous-per-ip-cost-5']);
    for (const id of ['anonymous-per-ip', 'anonymous-per-ip-cost-2', 'anonymous-per-ip-cost-5'])
      expect(rule(design, id).failMode).toBe('closed');
    const failModes = section(doc, '### 2.2');
    expect(failModes).toContain('failure_mode_deny true');
    expect(failModes).toContain('refuses every request it covers');
    expect(failModes).toMatch(
      /`anonymous-per-ip`: [^\n]*The answers ask read to fail open: the generated configuration does not honour that, because Envoy's failure_mode_deny is one setting of the rate limit filter, not of a route, and it is true because anonymous-per-ip-cost-\d and anonymous-per-ip-cost-\d are asked to fail closed/,
    );
    expect(failModes).not.toMatch(/`anonymous-per-ip-cost-5`: [^\n]*does not honour/);
    expect(section(doc, '### 5.6')).toContain('failure_mode_deny true');
    // the shipped file says the same, rule by rule
    const yaml = files.find((f) => f.path === 'gateway/envoy-local-ratelimit.yaml')!.content;
    expect(yaml).toContain(
      '# anonymous-per-ip: fail closed: while the rate limit service is unreachable, Envoy refuses its requests with 503 (failure_mode_deny true).',
    );
    expect(yaml).toMatch(
      /#\s+The answers ask it to fail open; failure_mode_deny is one setting for every rule the service counts, true because/,
    );
  });

  it('the alerts read what Envoy and its rate limit service export, and validate passes', () => {
    const alerts = parseYaml(files.find((f) => f.path === 'monitoring/ratelimit-alerts.yaml')!.content);
    const exprs: string[] = alerts.groups[0].rules.map((r: any) => r.expr);
    expect(exprs.join('\n')).not.toContain('ratelimit_throttled_total');
    expect(
      exprs.some((e) =>
        e.includes(`envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="${localFilter.stat_prefix}"}`),
      ),
    ).toBe(true);
    const appCluster = hcm.route_config.virtual_hosts[0].routes.at(-1).route.cluster;
    // failure_mode_deny true: Envoy refuses while the service is unreachable, and counts each failed call as an error
    expect(exprs.some((e) => e.includes(`envoy_cluster_ratelimit_error{envoy_cluster_name="${appCluster}"}`))).toBe(true);
    expect(exprs.join('\n')).not.toContain('envoy_cluster_ratelimit_failure_mode_allowed');
    expect(exprs.some((e) => e.includes('envoy_cluster_ratelimit_over_limit'))).toBe(true);
    // the metrics table has rows, one per series an alert reads
    const metrics = section(doc, '### 6.1');
    for (const name of ['envoy_http_local_rate_limit_rate_limited', 'envoy_cluster_ratelimit_error']) {
      expect(metrics).toContain(`| \`${name}\` | counter |`);
    }
  });

  it('the response contract, client advice, rollout and shadow counters are those of a gateway-only design', () => {
    const headers = section(doc, '### 5.1');
    expect(headers).not.toContain('One convention on every response');
    expect(headers).not.toContain('appear on successful responses');
    expect(headers).toContain('No rule in\nthis design sends it');
    expect(globalFilter.enable_x_ratelimit_headers).toBe('OFF');
    const advice = section(doc, '### 5.7');
    expect(advice).not.toContain('Read the rate-limit headers');
    expect(advice).not.toContain('QUOTA_EXCEEDED');
    // Envoy fails closed here (failure_mode_deny true): its 503 carries Retry-After, and the advice says to honour it
    expect(advice).toContain('On 503 from a fail-closed limit, retry after Retry-After like any 503.');
    expect(section(doc, '### 5.6')).not.toContain('each process counts in its own memory');
    const rollout = section(doc, '### 7.1');
    expect(rollout).not.toContain('ratelimit_throttled_total');
    expect(rollout).not.toContain('the middleware then skips');
    expect(rollout).toContain('ratelimit_service_rate_limit_shadow_mode');
    // the shadow counters named are those the shadow config feeds: the local filter enforces 0%, the service runs shadow_mode
    expect(localFilter.filter_enforced.default_value.numerator).toBe(0);
    expect(service.descriptors[0].descriptors[0].shadow_mode).toBe(true);
  });

  it("sizes the rate limit service's own Redis, which the store estimate leaves out, in the memory estimate and the store section", () => {
    const anon = rule(design, 'anonymous-per-ip');
    const note = design.monitoring.store.edgeServiceRedis;
    expect(note).toBeDefined();
    expect(note).toContain('keeps anonymous-per-ip, anonymous-per-ip-cost-2 and anonymous-per-ip-cost-5 in its own Redis');
    const bounds = ['anonymous-per-ip', 'anonymous-per-ip-cost-2', 'anonymous-per-ip-cost-5'].map(
      (id) => rule(design, id).cardinality!.bound!,
    );
    expect(bounds[0]).toBe(anon.cardinality!.bound);
    expect(note).toContain(`at most ${bounds.reduce((a, b) => a + b, 0).toLocaleString('en-US')} live`);
    expect(note).toContain('maxmemory-policy noeviction');
    expect(section(doc, '### 2.4')).toContain(note!.slice(0, 80));
    expect(doc.split(note!.slice(0, 80)).length - 1).toBe(2);
  });

  it('places the per-client rule on the rate limit service, not the local filter, and says its count is shared', () => {
    const edge = design.enforcement.layers.find((l) => l.layer === 'edge')!;
    expect(edge.component).toBe(
      'Envoy local rate limit filter for global-ceiling; Envoy global rate limit filter and the rate limit service (envoyproxy/ratelimit) for anonymous-per-ip, anonymous-per-ip-cost-2, anonymous-per-ip-cost-5',
    );
    expect(section(doc, '### 4.2')).not.toContain('Envoy (local rate limit filter)');
    expect(design.enforcement.atomicityNote).toContain(
      "anonymous-per-ip, anonymous-per-ip-cost-2 and anonymous-per-ip-cost-5 keep their counts in the rate limit service's own Redis (not the design's store), one count that every Envoy node shares",
    );
    expect(design.enforcement.atomicityNote).not.toContain('no shared store is involved');
  });
});

/**
 * A rule's count as the shipped file of each gateway states it, read here from the file itself,
 * and the same file with that count changed (`set`): what a reader of the file sees.
 */
function shippedCount(
  gateway: string,
  files: readonly CodeFile[],
  id: string,
  set?: number,
): { count: { requests: number; periodSeconds: number }; files: CodeFile[] } {
  const file = (path: string) => files.find((f) => f.path === path)!;
  const swap = (path: string, content: string) => files.map((f) => (f.path === path ? { ...f, content } : f));
  const units: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };
  switch (gateway) {
    case 'nginx': {
      const f = file('gateway/nginx.conf');
      const re = new RegExp(`(zone=rl_${id.replace(/-/g, '_')}:\\d+m rate=)(\\d+)r/([sm]);`);
      const m = re.exec(f.content)!;
      return {
        count: { requests: Number(m[2]), periodSeconds: m[3] === 's' ? 1 : 60 },
        files: swap(f.path, f.content.replace(re, `$1${set}r/$3;`)),
      };
    }
    case 'envoy': {
      const f = file('gateway/ratelimit-service.yaml');
      const doc = parseYaml(f.content);
      const limit = doc.descriptors.find((d: any) => d.value === id).descriptors[0].rate_limit;
      const count = { requests: limit.requests_per_unit, periodSeconds: units[limit.unit]! };
      limit.requests_per_unit = set;
      return { count, files: swap(f.path, stringifyYaml(doc)) };
    }
    case 'kong': {
      const f = file('gateway/kong.yaml');
      const doc = parseYaml(f.content);
      const plugin = doc.services[0].routes.flatMap((r: any) => r.plugins ?? []).find((p: any) => p.tags.includes(`rule-${id}`));
      const unit = Object.keys(units).find((u) => plugin.config[u] !== undefined)!;
      const count = { requests: plugin.config[unit], periodSeconds: units[unit]! };
      // edited as text: the file's comments carry the kill switches
      const at = f.content.indexOf(`- rule-${id}\n`);
      const tail = f.content.slice(at).replace(new RegExp(`${unit}: \\d+`), `${unit}: ${set}`);
      return { count, files: swap(f.path, f.content.slice(0, at) + tail) };
    }
    case 'aws-api-gateway': {
      const f = file('gateway/aws-api-gateway.json');
      const doc = JSON.parse(f.content);
      const s = doc.wafRateBasedRules.find((w: any) => w.VisibilityConfig.MetricName === `rl_${id}`).Statement.RateBasedStatement;
      const count = { requests: s.Limit, periodSeconds: s.EvaluationWindowSec };
      s.Limit = set;
      return { count, files: swap(f.path, JSON.stringify(doc, null, 2)) };
    }
    default: {
      const f = file('gateway/cloudflare-ratelimit.json');
      const doc = JSON.parse(f.content);
      const l = doc.rules.find((r: any) => r.description.startsWith(`${id}: `)).ratelimit;
      const count = { requests: l.requests_per_period, periodSeconds: l.period };
      l.requests_per_period = set;
      return { count, files: swap(f.path, JSON.stringify(doc, null, 2)) };
    }
  }
}

describe.each(GATEWAY_CHOICES)('edge-only design on %s', (gateway) => {
  const { design, checks, files, doc } = build(gateway);

  it('counts history (cost 5) in requests at the per-IP rate divided by 5, rounded down, as the document states and the file enforces', () => {
    const base = rule(design, 'anonymous-per-ip');
    const costly = rule(design, 'anonymous-per-ip-cost-5');
    expect(costly.endpoints).toEqual(['history']);
    expect(base.endpoints).toEqual(['current', 'forecast']);
    // every edge rule counts one per request, which is what the gateway does
    for (const r of design.rules) expect(r.cost, r.id).toEqual({ default: 1, byEndpoint: [] });
    expect(costly.edgeCost).toMatchObject({ units: 5, of: 'anonymous-per-ip' });
    // the file, read on its own: the costly rule's count is the per-IP count / 5, rounded down, over the same window
    const b = shippedCount(gateway, files, 'anonymous-per-ip').count;
    const c = shippedCount(gateway, files, 'anonymous-per-ip-cost-5').count;
    expect(c.periodSeconds).toBe(b.periodSeconds);
    expect(c.requests).toBe(Math.floor(b.requests / 5));
    // and they are the numbers the matrix row states
    expect(c).toEqual({ requests: costly.rate!.requests, periodSeconds: costly.rate!.periodSeconds });
    expect(b).toEqual({ requests: base.rate!.requests, periodSeconds: base.rate!.periodSeconds });
    const row = doc.split('\n').find((l) => l.startsWith('| [`anonymous-per-ip-cost-5`]'))!;
    expect(row).toContain(`${costly.rate!.requests.toLocaleString('en-US')} / `);
    expect(row).toContain('(requests of cost 5)');
    expect(section(doc, '#### Rule `anonymous-per-ip-cost-5`')).toContain(
      '**Cost:** 1 per request (the gateway counts requests): each call costs 5 units',
    );
    expect(section(doc, '## 2. Limit matrix')).toContain('Gateways count requests, not cost:');
    // every number of every edge rule in the file is the document's
    const shipped = shippedEdgeLimits(design, files);
    for (const r of design.rules) expect(shipped.filter((x) => x.ruleId === r.id).length, r.id).toBeGreaterThan(0);
  });

  it('validate refuses the file once the costly rule counts at the unit rate again', () => {
    const b = shippedCount(gateway, files, 'anonymous-per-ip').count;
    const broken = shippedCount(gateway, files, 'anonymous-per-ip-cost-5', b.requests).files;
    const failed = checkDesign(design, broken).filter((c) => !c.passed);
    expect(failed.map((c) => c.id)).toEqual(['complete-rules']);
    expect(failed[0]!.findings).toEqual([expect.objectContaining({ messageId: 'edgeNumbersDiffer', ruleId: 'anonymous-per-ip-cost-5' })]);
  });

  it('passes every constraint on its own generated files', () => {
    expect(checks).toHaveLength(9);
    expect(checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.messages.join('; ')}`)).toEqual([]);
  });

  it('never renders an empty metrics or alerts table, and no alert reads a metric nothing exports', () => {
    for (const heading of ['### 6.1', '### 6.2']) {
      const text = section(doc, heading);
      const rows = text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| ---'));
      // a header row alone is an empty table
      expect(rows.length === 0 || rows.length > 1, heading).toBe(true);
    }
    const alerts = parseYaml(files.find((f) => f.path === 'monitoring/ratelimit-alerts.yaml')!.content);
    const exported = new Set(design.monitoring.metrics.map((m) => m.name));
    for (const r of alerts.groups[0].rules ?? []) {
      const names = String(r.expr).match(/[a-z_:][a-z0-9_:]*(?=\{|\[)/g) ?? [];
      for (const n of names.filter((x) => !['rate', 'increase', 'sum', 'by', 'offset'].includes(x))) {
        expect(exported.has(n.replace(/_bucket$/, '')), `${r.alert} reads ${n}`).toBe(true);
      }
    }
  });

  it('names the component that runs each edge rule, and where each keeps its count, in the placement section', () => {
    const edge = design.enforcement.layers.find((l) => l.layer === 'edge')!;
    const placement = section(doc, '### 4.2');
    const components = new Map<string, string[]>();
    for (const r of design.rules.filter((x) => x.layer === 'edge')) {
      const c = edgeCounter(r, design.scope);
      components.set(c.component, [...(components.get(c.component) ?? []), r.id]);
      expect(edge.component, r.id).toContain(c.component);
      expect(design.enforcement.atomicityNote, r.id).toContain(c.where);
    }
    if (components.size > 1) {
      for (const [c, ids] of components) expect(edge.component).toContain(`${c} for ${ids.join(', ')}`);
    }
    expect(placement).toContain(edge.component.split(';')[0]!);
  });

  it('names no nginx variable outside nginx, and no middleware step in the rollout', () => {
    if (gateway !== 'nginx') expect(doc).not.toContain('$binary_remote_addr');
    expect(section(doc, '### 7.1')).not.toContain('the middleware then skips');
    expect(section(doc, '### 5.7')).not.toContain('QUOTA_EXCEEDED');
  });
});

describe('the nginx nodes the answers give size the per-node worst case', () => {
  it('stack.gatewayNodes reaches the worst-case row of every rule nginx counts in each node', () => {
    const a = answers('nginx');
    const design = buildDesign({ ...a, stack: { ...a.stack, gatewayNodes: 2 } }, { date: DATE });
    expect(design.scope.instances).toBe(3);
    expect(design.scope.gatewayNodes).toBe(2);
    const doc = renderMarkdown({ design, checks: checkDesign(design, generateCode(design)), codeFiles: [] }, { layout: 'single' })[0]!
      .content;
    const rows = section(doc, '### 3.2')
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(design.rules.length);
    for (const row of rows) {
      expect(row).toContain(') x 2 nodes |');
      expect(row).toContain('K = 2 nginx nodes, as the answers give them (stack.gatewayNodes).');
    }
    // without it, the row says what it assumed
    expect(section(build('nginx').doc, '### 3.2')).toContain(
      'The answers do not say how many nginx nodes run (stack.gatewayNodes): K = 3 is assumed',
    );
  });
});

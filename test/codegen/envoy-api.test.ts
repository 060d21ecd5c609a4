/**
 * Every Envoy file rl-design writes is checked against Envoy's v3 API definitions and the
 * load-time rules of the rate limit filters (support/envoy-api.ts): for each example, the
 * hostile design and designs that exercise each branch of the generator (no ceiling, only
 * local descriptors, only per-client rules, rates whose natural refill intervals disagree).
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseDocument, visit } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { edgeRules } from '../../src/codegen/gateway/edge.js';
import {
  durationMs,
  envoyFilterConfig,
  envoyTokenBucket,
  generateEnvoy,
  GLOBAL_FILTER,
  LOCAL_FILTER,
} from '../../src/codegen/gateway/envoy.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { checkEnvoyFilterFile, checkRatelimitServiceFile, ms } from './support/envoy-api.js';
import { hostileDesign } from './support/hostile.js';

type Obj = Record<string, any>;

function envoyDesign(): Design {
  const base = exampleAnswers('saas-platform');
  return buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway: 'envoy' } }), { date: DATE });
}

function withEdgeRules(design: Design, edit: (edge: MatrixRule[]) => MatrixRule[]): Design {
  const edge = design.rules.filter((r) => r.layer === 'edge');
  return { ...design, rules: [...design.rules.filter((r) => r.layer !== 'edge'), ...edit(edge)] };
}

function rule(base: MatrixRule, over: Partial<MatrixRule>): MatrixRule {
  return { ...base, ...over };
}

/** Designs that reach every branch of the generator. */
function variants(): [string, Design][] {
  const d = envoyDesign();
  const [ceiling, perIp] = [d.rules.find((r) => r.id === 'global-ceiling')!, d.rules.find((r) => r.id === 'anonymous-per-ip')!];
  const catalog = perIp.routes;
  return [
    ['saas-platform on envoy', d],
    ['enforcing (no shadow)', { ...d, rollout: { ...d.rollout, startsInShadow: false } }],
    ['failing closed (failure_mode_deny true, the 503 mapper)', { ...d, scope: { ...d.scope, envoyDenyRules: [perIp.id] } }],
    ['only per-client rules', withEdgeRules(d, (e) => e.filter((r) => r.identity !== 'global'))],
    ['only the ceiling', withEdgeRules(d, (e) => e.filter((r) => r.identity === 'global'))],
    [
      'no ceiling, a route-scoped global rule (local descriptor) of 5/s',
      withEdgeRules(d, () => [
        rule(ceiling, { id: 'catalog-global', routes: catalog, rate: { requests: 5, periodSeconds: 1 }, burst: 10 }),
      ]),
    ],
    [
      'ceiling of 333/s (1 s refill) with descriptors of 8/s and 10 per 15 min',
      withEdgeRules(d, () => [
        rule(ceiling, { rate: { requests: 333, periodSeconds: 1 }, burst: 333 }),
        rule(ceiling, { id: 'catalog-global', routes: catalog, rate: { requests: 8, periodSeconds: 1 }, burst: 1 }),
        rule(ceiling, {
          id: 'slow-global',
          routes: [{ method: 'POST', route: '/v1/slow' }],
          rate: { requests: 10, periodSeconds: 900 },
          burst: 10,
        }),
        perIp,
      ]),
    ],
    ['per-client rule over every endpoint', withEdgeRules(d, (e) => e.map((r) => (r.id === perIp.id ? { ...r, routes: [] } : r)))],
    ['hostile', { ...hostileDesign(), scope: { ...hostileDesign().scope, gateway: 'envoy' } }],
    ...exampleNames().map((n) => [`example ${n}`, exampleDesign(n)] as [string, Design]),
  ];
}

describe('Envoy files against the API definitions and load-time rules', () => {
  for (const [name, design] of variants()) {
    it(name, () => {
      const files = generateEnvoy(design);
      const filter = parseYaml(files[0]!.content) as Obj;
      // no YAML aliases: every node written out in full
      let aliases = 0;
      visit(parseDocument(files[0]!.content), { Alias: () => void aliases++ });
      expect(aliases).toBe(0);
      expect(checkEnvoyFilterFile(filter)).toEqual([]);
      const service = files.find((f) => f.path === 'gateway/ratelimit-service.yaml');
      if (service) expect(checkRatelimitServiceFile(parseYaml(service.content))).toEqual([]);
      // every local descriptor is produced by an action of the local filter's stage
      const hcm = filter.http_connection_manager;
      const local = hcm.http_filters.find((f: Obj) => f.name === LOCAL_FILTER)?.typed_config;
      const vh = hcm.route_config.virtual_hosts[0];
      for (const desc of local?.descriptors ?? []) {
        const made = (vh.rate_limits ?? []).filter(
          (l: Obj) =>
            (l.stage ?? 0) === local.stage &&
            l.actions.some((a: Obj) => (a.header_value_match ?? a.generic_key)?.descriptor_value === desc.entries[0].value),
        );
        expect(made.length).toBeGreaterThan(0);
      }
      // each local bucket refills at the rule's rate
      for (const r of edgeRules(design).filter((x) => x.key === 'global')) {
        const bucket =
          r.routes.length === 0 ? local.token_bucket : local.descriptors.find((x: Obj) => x.entries[0].value === r.id).token_bucket;
        expect((bucket.tokens_per_fill / ms(bucket.fill_interval)) * 1000).toBeCloseTo(r.rate.requests / r.rate.periodSeconds, 9);
        expect(bucket.max_tokens).toBeGreaterThanOrEqual(r.burst ?? 1);
      }
    });
  }

  it('the exempt routes are neither counted nor refused by either filter', () => {
    for (const [name, design] of variants()) {
      const cfg = envoyFilterConfig(design) as Obj;
      const hcm = cfg.http_connection_manager;
      const names = hcm.http_filters.map((f: Obj) => f.name);
      const exempt = hcm.route_config.virtual_hosts[0].routes.filter((r: Obj) => r.typed_per_filter_config);
      if (design.enforcement.exempt.endpoints.length === 0 || !names.some((n: string) => n !== 'envoy.filters.http.router')) continue;
      expect(exempt.length, name).toBeGreaterThan(0);
      for (const route of exempt) {
        const per = route.typed_per_filter_config;
        // a local filter present: its per-route config replaces the filter-wide one and is 0% enabled
        if (names.includes(LOCAL_FILTER)) {
          expect(per[LOCAL_FILTER].filter_enabled.default_value.numerator, name).toBe(0);
          expect(per[LOCAL_FILTER].token_bucket, name).toBeDefined();
        }
        // the global filter: the route has no actions of its own and ignores the virtual host's
        if (names.includes(GLOBAL_FILTER)) {
          expect(per[GLOBAL_FILTER].vh_rate_limits, name).toBe('IGNORE');
          expect(route.route.rate_limits, name).toBeUndefined();
        }
      }
    }
  });

  it('refuses what Envoy refuses', () => {
    const good = envoyFilterConfig(envoyDesign()) as Obj;
    const mutate = (edit: (c: Obj) => void): string[] => {
      const c = structuredClone(good);
      edit(c);
      return checkEnvoyFilterFile(c);
    };
    const exempt = (c: Obj): Obj => c.http_connection_manager.route_config.virtual_hosts[0].routes[0].typed_per_filter_config[LOCAL_FILTER];
    const localCfg = (c: Obj): Obj => c.http_connection_manager.http_filters[0].typed_config;
    // the exemption as it used to be generated: a per-route config without a token bucket
    expect(mutate((c) => delete exempt(c).token_bucket).join('\n')).toMatch(/token bucket must be set for per filter configs/);
    expect(mutate((c) => (localCfg(c).token_bucket.fill_interval = '0.02s')).join('\n')).toMatch(/>= 50ms/);
    expect(mutate((c) => (localCfg(c).token_bucket.fill_interval = '0s')).join('\n')).toMatch(/must be > 0/);
    expect(mutate((c) => (localCfg(c).token_bucket.max_tokens = 1)).join('\n')).toMatch(/max_tokens 1 < tokens_per_fill/);
    expect(mutate((c) => (localCfg(c).filter_enforced.default_value.denominator = 'PERCENT')).join('\n')).toMatch(/enum value "PERCENT"/);
    expect(mutate((c) => (localCfg(c).token_bucket.burst = 5)).join('\n')).toMatch(/unknown field "burst"/);
    expect(mutate((c) => (localCfg(c).stage = 11)).join('\n')).toMatch(/must be <= 10/);
    expect(mutate((c) => (c.http_connection_manager.http_filters[1].typed_config.stage = 0)).join('\n')).toMatch(/stage 0 is also used/);
    expect(mutate((c) => c.http_connection_manager.http_filters.reverse()).join('\n')).toMatch(/router must be the last/);
    expect(mutate((c) => (c.clusters[0].name = 'elsewhere')).join('\n')).toMatch(/rate limit service cluster "ratelimit" is not defined/);
    expect(
      mutate((c) => (exempt(c)['@type'] = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute')).join('\n'),
    ).toMatch(/needs @type LocalRateLimit/);
    expect(mutate((c) => delete c.http_connection_manager.route_config.virtual_hosts[0].routes[1].match.prefix).join('\n')).toMatch(
      /one of path_specifier is required/,
    );
    // the fail-closed 503's mapper: a response flag Envoy does not know, or no filter at all
    const closed = envoyFilterConfig({ ...envoyDesign(), scope: { ...envoyDesign().scope, envoyDenyRules: ['anonymous-per-ip'] } }) as Obj;
    expect(checkEnvoyFilterFile(closed)).toEqual([]);
    const mapper = (c: Obj): Obj => c.http_connection_manager.local_reply_config.mappers[1];
    const editClosed = (edit: (c: Obj) => void): string => {
      const c = structuredClone(closed);
      edit(c);
      return checkEnvoyFilterFile(c).join('\n');
    };
    expect(mapper(closed).filter).toEqual({ response_flag_filter: { flags: ['RLSE'] } });
    expect(editClosed((c) => (mapper(c).filter.response_flag_filter.flags = ['RateLimitServiceError']))).toMatch(
      /"RateLimitServiceError" is not one of/,
    );
    expect(editClosed((c) => delete mapper(c).filter)).toMatch(/required field "filter" missing in ResponseMapper/);
    expect(editClosed((c) => (mapper(c).filter.status_code_filter = mapper(c).filter.response_flag_filter))).toMatch(
      /oneof filter_specifier set more than once/,
    );
    // a descriptor whose refill interval is not a multiple of the filter-wide one
    const d = withEdgeRules(envoyDesign(), (e) => [
      ...e,
      rule(e[0]!, { id: 'odd', routes: [{ method: 'GET', route: '/x' }], rate: { requests: 8, periodSeconds: 1 }, burst: 8 }),
    ]);
    const odd = envoyFilterConfig(d) as Obj;
    odd.http_connection_manager.http_filters[0].typed_config.descriptors[0].token_bucket.fill_interval = '0.125s';
    expect(checkEnvoyFilterFile(odd).join('\n')).toMatch(/not a multiple of token bucket fill timer/);
  });

  it('refill intervals: multiples of the base, at least 50 ms, exact rate', () => {
    for (const [rate, base] of [
      [{ requests: 8, periodSeconds: 1 }, 50],
      [{ requests: 5, periodSeconds: 1 }, 1000],
      [{ requests: 3, periodSeconds: 1 }, 50],
      [{ requests: 2.5, periodSeconds: 1 }, 200],
      [{ requests: 7, periodSeconds: 60 }, 250],
      [{ requests: 1000, periodSeconds: 86400 }, 50],
    ] as const) {
      const b = envoyTokenBucket(rate, null, base);
      const fill = durationMs(b.fill_interval);
      expect(fill % base).toBe(0);
      expect(fill).toBeGreaterThanOrEqual(50);
      expect((b.tokens_per_fill * 1000) / fill).toBeCloseTo(rate.requests / rate.periodSeconds, 9);
      expect(b.max_tokens).toBeGreaterThanOrEqual(b.tokens_per_fill);
    }
  });
});

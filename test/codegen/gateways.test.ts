/**
 * Envoy, Kong, AWS API Gateway and Cloudflare config: parses (YAML 1.1 and 1.2 alike, JSON),
 * has the structure each gateway expects, carries the design's numbers, and stays inert
 * with hostile names and routes. (nginx runs for real in nginx.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import {
  apiGatewayPath,
  awsConfig,
  awsEdgeRefusals,
  cfRoutesExpr,
  cfRulePlan,
  cfStaticPaths,
  cloudflareConfig,
  generateAws,
  generateCloudflare,
} from '../../src/codegen/gateway/cloud.js';
import { cfExpressionTerms } from '../../src/codegen/gateway/shipped.js';
import { edgeProblemBody, edgeRetryAfter, edgeRoute, edgeRules, type EdgeRule } from '../../src/codegen/gateway/edge.js';
import { unitWindow } from '../../src/design/gateway-behaviour.js';
import { envoyTokenBucket, generateEnvoy, RULE_DESCRIPTOR_KEY } from '../../src/codegen/gateway/envoy.js';
import { GATEWAY_GENERATORS, generateGateway } from '../../src/codegen/gateway/index.js';
import { generateKong } from '../../src/codegen/gateway/kong.js';
import { kongRegex } from '../../src/codegen/gateway/kong-router.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { apiGatewayTemplateRead, envoyJsonFormatRead } from '../../src/codegen/gateway/reading.js';
import { EVIL_ROUTE, META_ROUTE, TEMPLATE_DOCS_URL, hostileAnswers, hostileDesign } from './support/hostile.js';

type Obj = Record<string, any>;

function designWith(gateway: Gateway, hostile = false): Design {
  const base = hostile ? hostileAnswers() : exampleAnswers('saas-platform');
  const answers = Answers.parse({ ...base, stack: { ...base.stack, gateway } });
  return buildDesign(answers, { date: DATE });
}

function yamlOf(content: string): Obj {
  const doc = parseYaml(content) as Obj;
  // a YAML 1.1 parser (on/off/yes/no are booleans there) reads the same data
  expect(parseYaml(content, { version: '1.1' })).toEqual(doc);
  return doc;
}

/** A request path that the route matches (parameters and wildcards filled in). */
function sampleFor(route: string): string {
  const s = route.replace(/:([A-Za-z0-9_]+)\??/g, 'abc').replace(/\*[A-Za-z0-9_]*/g, 'x/y');
  return s.length > 1 && s.endsWith('/') ? s.slice(0, -1) : s;
}

/** A gateway regex (PCRE/RE2 syntax, maybe with a leading (?i)) as a JS RegExp. */
function jsRegex(pattern: string): RegExp {
  const insensitive = pattern.startsWith('(?i)');
  return new RegExp(insensitive ? pattern.slice(4) : pattern, insensitive ? 'iu' : 'u');
}

const GATEWAYS = Object.keys(GATEWAY_GENERATORS) as Exclude<Gateway, 'none'>[];

describe('routes at the edge', () => {
  it('match the route, parameters as one segment, trailing slash optional, nothing else', () => {
    const r = edgeRoute('GET', '/v1/orders/:id');
    const re = jsRegex(r.pathRegex);
    expect(re.test('/v1/orders/42')).toBe(true);
    expect(re.test('/v1/orders/42/')).toBe(true);
    expect(re.test('/v1/orders/42/items')).toBe(false);
    expect(re.test('/v1/orders/')).toBe(false);
    expect(r.methods).toEqual(['GET', 'HEAD']);
    expect(edgeRoute('ANY', '/x').methods).toBeNull();
    expect(jsRegex(edgeRoute('GET', '/').pathRegex).test('/')).toBe(true);
    for (const route of [META_ROUTE, EVIL_ROUTE]) {
      expect(jsRegex(edgeRoute('POST', route).pathRegex).test(sampleFor(route))).toBe(true);
    }
    expect(jsRegex(edgeRoute('GET', META_ROUTE).pathRegex).test('/v1/aXb$c(d)+')).toBe(false);
  });

  it('read {param} routes (OpenAPI, Go, Spring) as one segment and {*rest} as the rest, as the shipped route matcher does', () => {
    const one = jsRegex(edgeRoute('GET', '/v2/datasets/{datasetId}/records/{recordId}').pathRegex);
    expect(one.test('/v2/datasets/ds-42/records/7')).toBe(true);
    expect(one.test('/v2/datasets/ds-42/records/7/')).toBe(true);
    expect(one.test('/v2/datasets/ds-42/records')).toBe(false);
    expect(one.test('/v2/datasets/a/b/records/7')).toBe(false);
    expect(edgeRoute('GET', '/v2/datasets/{datasetId}').literal).toBe(false);
    expect(jsRegex(edgeRoute('GET', '/files/{*rest}').pathRegex).test('/files/a/b/c')).toBe(true);
    expect(apiGatewayPath('/files/{*rest}')).toBe('/files/{proxy+}');
    expect(apiGatewayPath('/v2/datasets/{datasetId}')).toBe('/v2/datasets/{datasetId}');
  });

  it('the Envoy file of a Go API with {param} routes counts real request paths in its per-IP descriptors', () => {
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/go-envoy-anonymous.answers.json', import.meta.url), 'utf8'));
    const design = buildDesign(Answers.parse(raw), { date: DATE });
    const file = generateEnvoy(design).find((f) => f.path.endsWith('envoy-local-ratelimit.yaml'));
    const hcm = yamlOf(file!.content).http_connection_manager;
    const pathRegexes = (hcm.route_config.virtual_hosts[0].rate_limits as Obj[])
      .filter((l) => l.actions[0].header_value_match.descriptor_value === 'anonymous-per-ip')
      .map((l) => jsRegex(l.actions[0].header_value_match.headers.find((h: Obj) => h.name === ':path').string_match.safe_regex.regex));
    const counted = (path: string) => pathRegexes.some((re) => re.test(path));
    expect(counted('/v2/datasets')).toBe(true);
    expect(counted('/v2/datasets/ds-42')).toBe(true);
    expect(counted('/v2/datasets/ds-42/records/7?fields=a')).toBe(true);
    expect(counted('/v2/datasets/ds-42/other')).toBe(false);
    expect(file!.content).not.toContain('datasetId');
  });

  it('the Envoy file keys remote_address on the TCP peer, not on an X-Forwarded-For a client writes', () => {
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/go-envoy-anonymous.answers.json', import.meta.url), 'utf8'));
    const file = generateEnvoy(buildDesign(Answers.parse(raw), { date: DATE })).find((f) => f.path.endsWith('envoy-local-ratelimit.yaml'));
    const hcm = yamlOf(file!.content).http_connection_manager;
    expect(hcm.use_remote_address).toBe(true);
    expect(hcm.xff_num_trusted_hops).toBe(0);
    expect(file!.content).toContain('set xff_num_trusted_hops to their number of hops');
  });

  it('window conversions are exact when they can be, and say so when not', () => {
    const unit = (requests: number, periodSeconds: number, burst: number | null = null) =>
      unitWindow({ requests, periodSeconds }, burst, 'the plugin');
    // the rule's own unit is kept; else the longest unit within its period that counts a request, rounded down
    expect(unit(5, 1)).toEqual({ requests: 5, periodSeconds: 1, burst: null });
    expect(unit(600, 60)).toEqual({ requests: 600, periodSeconds: 60, burst: null });
    expect(unit(100, 10)).toMatchObject({ requests: 10, periodSeconds: 1 });
    expect(unit(20, 900)).toMatchObject({ requests: 1, periodSeconds: 60 });
    expect(unit(20, 900).fitted).toContain('1.33 per minute rounded down');
    expect(unit(10, 900)).toMatchObject({ requests: 40, periodSeconds: 3600 });
    expect(unit(10, 900).fitted).not.toContain('rounded');
    // slower than one a minute: the next unit that counts one, never more generous than the rule
    expect(unit(7, 1000)).toMatchObject({ requests: 25, periodSeconds: 3600 });
    expect(unit(0.5, 86400)).toMatchObject({ requests: 1, periodSeconds: 86400 });
    expect(unit(0.5, 86400).fitted).toContain('rounded up to 1');
    expect(unit(5, 1, 20).fitted).toContain('the stated burst (20) does not apply');
    // idempotent: the design states the window, the generator reads it again
    for (const [r, p] of [
      [7, 1000],
      [10, 900],
      [100, 10],
    ] as const) {
      const w = unit(r, p);
      expect(unit(w.requests, w.periodSeconds)).toEqual({ requests: w.requests, periodSeconds: w.periodSeconds, burst: null });
    }
    expect(envoyTokenBucket({ requests: 4800, periodSeconds: 1 }, 4800)).toEqual({
      max_tokens: 4800,
      tokens_per_fill: 240,
      fill_interval: '0.05s',
    });
    expect(envoyTokenBucket({ requests: 5, periodSeconds: 1 }, 50)).toEqual({ max_tokens: 50, tokens_per_fill: 1, fill_interval: '0.2s' });
    expect(envoyTokenBucket({ requests: 600, periodSeconds: 60 }, 20)).toEqual({
      max_tokens: 20,
      tokens_per_fill: 1,
      fill_interval: '0.1s',
    });
    expect(envoyTokenBucket({ requests: 333, periodSeconds: 1 }, 333)).toEqual({
      max_tokens: 333,
      tokens_per_fill: 333,
      fill_interval: '1s',
    });
    expect(envoyTokenBucket({ requests: 2.5, periodSeconds: 1 }, null)).toEqual({
      max_tokens: 1,
      tokens_per_fill: 1,
      fill_interval: '0.4s',
    });
    expect(envoyTokenBucket({ requests: 10, periodSeconds: 900 }, 10)).toEqual({
      max_tokens: 10,
      tokens_per_fill: 1,
      fill_interval: '90s',
    });
  });
});

describe('Envoy', () => {
  for (const hostile of [false, true]) {
    it(`local + global rate limit config${hostile ? ' (hostile design)' : ''}`, () => {
      const design = designWith('envoy', hostile);
      const rules = edgeRules(design);
      const files = generateEnvoy(design);
      expect(files.map((f) => f.path)).toEqual(['gateway/envoy-local-ratelimit.yaml', 'gateway/ratelimit-service.yaml']);
      const filter = yamlOf(files[0]!.content);
      const service = yamlOf(files[1]!.content);

      const hcm = filter.http_connection_manager;
      expect(hcm.http_filters.map((f: Obj) => f.name)).toEqual([
        'envoy.filters.http.local_ratelimit',
        'envoy.filters.http.ratelimit',
        'envoy.filters.http.router',
      ]);
      const local = hcm.http_filters[0].typed_config;
      expect(local['@type']).toBe('type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit');
      const ceiling = rules.find((r) => r.id === 'global-ceiling') as EdgeRule;
      expect(ceiling.key).toBe('global');
      expect(local.token_bucket).toEqual(envoyTokenBucket(ceiling.rate, ceiling.burst));
      expect(local.token_bucket.max_tokens).toBe(ceiling.burst);
      // tokens per fill over the fill interval is the ceiling's rate
      const fillSeconds = Number(String(local.token_bucket.fill_interval).replace(/s$/, ''));
      expect(local.token_bucket.tokens_per_fill / fillSeconds).toBeCloseTo(ceiling.rate.requests / ceiling.rate.periodSeconds, 6);
      // rollout starts in shadow: enabled (counted) but not enforced
      expect(local.filter_enabled.default_value.numerator).toBe(100);
      expect(local.filter_enforced.default_value.numerator).toBe(0);

      const global = hcm.http_filters[1].typed_config;
      expect(global['@type']).toBe('type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit');
      expect(global.domain).toBe(service.domain);
      expect(global.failure_mode_deny).toBe(false);
      expect(global.rate_limit_service.grpc_service.envoy_grpc.cluster_name).toBe(filter.clusters[0].name);
      expect(global.enable_x_ratelimit_headers).toBe('OFF');

      // every 429 carries Retry-After and the problem body
      const mapper = hcm.local_reply_config.mappers[0];
      expect(mapper.filter.status_code_filter.comparison.value.default_value).toBe(429);
      expect(mapper.headers_to_add[0].header).toEqual({ key: 'retry-after', value: String(edgeRetryAfter(rules)) });
      expect(mapper.body_format_override.content_type).toBe('application/problem+json');
      expect(envoyJsonFormatRead(mapper.body_format_override.json_format)).toEqual(edgeProblemBody(design, rules, edgeRetryAfter(rules)));

      // actions and service descriptors pair up, and each route regex matches its route
      const vh = hcm.route_config.virtual_hosts[0];
      const anon = rules.find((r) => r.id === 'anonymous-per-ip') as EdgeRule;
      const actions = vh.rate_limits.filter((l: Obj) => l.actions[0].header_value_match?.descriptor_value === anon.id);
      expect(actions).toHaveLength(anon.routes.length);
      actions.forEach((l: Obj, i: number) => {
        expect(l.stage).toBe(global.stage);
        const match = l.actions[0].header_value_match;
        expect(match.descriptor_key).toBe(RULE_DESCRIPTOR_KEY);
        expect(l.actions[1]).toEqual({ remote_address: {} });
        const path = match.headers.find((h: Obj) => h.name === ':path').string_match.safe_regex.regex;
        expect(jsRegex(path).test(sampleFor(anon.routes[i]!.route))).toBe(true);
        expect(jsRegex(path).test(`${sampleFor(anon.routes[i]!.route)}?page=2`)).toBe(true);
        expect(jsRegex(path).test('/somewhere/else')).toBe(false);
      });
      const descriptor = service.descriptors.find((d: Obj) => d.value === anon.id);
      expect(descriptor.key).toBe(RULE_DESCRIPTOR_KEY);
      expect(anon.rate.periodSeconds).toBe(1);
      expect(descriptor.descriptors[0]).toEqual({
        key: 'remote_address',
        rate_limit: { unit: 'second', requests_per_unit: anon.rate.requests },
        shadow_mode: true,
      });

      // the exempt health route switches the local filter off
      const exempt = vh.routes.find((r: Obj) => r.typed_per_filter_config);
      expect(exempt.typed_per_filter_config['envoy.filters.http.local_ratelimit'].filter_enabled.default_value.numerator).toBe(0);
      expect(vh.routes.at(-1).match).toEqual({ prefix: '/' });
    });
  }

  it("no x-ratelimit headers of Envoy's own, even where that is the design convention (the middleware sends them)", () => {
    const base = designWith('envoy');
    const design: Design = { ...base, contract: { ...base.contract, convention: 'x-ratelimit' } };
    const filter = yamlOf(generateEnvoy(design)[0]!.content);
    expect(filter.http_connection_manager.http_filters[1].typed_config.enable_x_ratelimit_headers).toBe('OFF');
  });
});

describe('Kong', () => {
  for (const hostile of [false, true]) {
    it(`declarative config with the rate limit plugins${hostile ? ' (hostile design)' : ''}`, () => {
      const design = designWith('kong', hostile);
      const rules = edgeRules(design);
      const [file] = generateKong(design);
      expect(file?.path).toBe('gateway/kong.yaml');
      const config = yamlOf(file!.content);
      expect(config._format_version).toBe('3.0');
      const [service, health] = config.services as Obj[];
      expect(service!.url).toMatch(/^http:\/\//);

      const ceiling = rules.find((r) => r.id === 'global-ceiling') as EdgeRule;
      // the ceiling: a plugin no route-level rate-limiting replaces, on the service
      const ceilingPlugin = service!.plugins[0];
      expect(ceilingPlugin.name).toBe('rate-limiting-advanced');
      expect(ceilingPlugin.config).toMatchObject({
        limit: [ceiling.rate.requests],
        window_size: [ceiling.rate.periodSeconds],
        identifier: 'service',
        strategy: 'local',
        sync_rate: -1,
        hide_client_headers: true,
        error_code: 429,
      });

      const anon = rules.find((r) => r.id === 'anonymous-per-ip') as EdgeRule;
      const anonRoutes = (service!.routes as Obj[]).filter((r) => r.plugins?.[0]?.tags.includes(`rule-${anon.id}`));
      expect(anonRoutes).toHaveLength(anon.routes.length);
      anonRoutes.forEach((route, i) => {
        expect(anon.rate.periodSeconds).toBe(1);
        expect(route.plugins[0].config).toMatchObject({
          second: anon.rate.requests,
          limit_by: 'ip',
          policy: 'redis',
          fault_tolerant: true,
          hide_client_headers: true,
        });
        expect(route.paths).toHaveLength(1);
        expect(route.paths[0].startsWith('~/')).toBe(true);
        // matched as Kong matches it: at the start of the normalized path (kong-router.ts)
        expect(kongRegex(route.paths[0])?.test(sampleFor(anon.routes[i]!.route))).toBe(true);
        expect(route.methods).toEqual(anon.routes[i]!.methods ?? undefined);
      });
      // client headers hidden (one convention): the post-function on the service adds Retry-After to 429s
      const retry = service!.plugins.find((p: Obj) => p.name === 'post-function');
      expect(retry.config.header_filter[0]).toMatch(/get_status\(\) == 429 .*set_header\("Retry-After", "1"\)/);
      // a catch-all route keeps the rest of the API behind the service plugin
      expect((service!.routes as Obj[]).some((r) => r.paths[0] === '/')).toBe(true);
      // health probes: their own service, no plugin
      expect(health!.plugins).toBeUndefined();
      expect(health!.routes.every((r: Obj) => r.plugins === undefined)).toBe(true);
      // names, instance names and tags: unique where Kong wants them unique, in Kong's charset
      const names = config.services.flatMap((s: Obj) => s.routes.map((r: Obj) => r.name));
      expect(new Set(names).size).toBe(names.length);
      const plugins = config.services.flatMap((s: Obj) => [...(s.plugins ?? []), ...s.routes.flatMap((r: Obj) => r.plugins ?? [])]);
      const instances = plugins.map((p: Obj) => p.instance_name);
      expect(new Set(instances).size).toBe(instances.length);
      for (const n of [...names, ...instances, ...plugins.flatMap((p: Obj) => p.tags)]) expect(n).toMatch(/^[A-Za-z0-9._~-]{1,128}$/);
    });
  }
});

describe('Kong and AWS names stay in their charsets with hostile rule ids', () => {
  it('route, plugin instance and WAF rule names', () => {
    const design = hostileDesign();
    expect(design.rules.some((r) => r.layer === 'edge' && /[";{}$#*/]/.test(r.id))).toBe(true);
    const kong = yamlOf(generateKong(design)[0]!.content);
    const routes = kong.services.flatMap((s: Obj) => s.routes);
    const plugins = kong.services.flatMap((s: Obj) => [...(s.plugins ?? []), ...s.routes.flatMap((r: Obj) => r.plugins ?? [])]);
    expect(plugins.length).toBeGreaterThanOrEqual(3);
    for (const n of [
      ...routes.map((r: Obj) => r.name),
      ...plugins.map((p: Obj) => p.instance_name),
      ...plugins.flatMap((p: Obj) => p.tags),
    ]) {
      expect(n).toMatch(/^[A-Za-z0-9._~-]{1,128}$/);
    }
    const header = plugins.find((p: Obj) => p.config.limit_by === 'header');
    expect(header.config.header_name).toBe('x-api-key');
    const aws = awsConfig(design) as Obj;
    for (const rule of aws.wafRateBasedRules as Obj[]) expect(rule.Name).toMatch(/^[\w-]{1,128}$/);
    expect(aws.usagePlans).toHaveLength(1);
  });
});

describe('AWS API Gateway and Cloudflare: labelled examples to adapt', () => {
  for (const hostile of [false, true]) {
    it(`AWS${hostile ? ' (hostile design)' : ''}`, () => {
      const design = designWith('aws-api-gateway', hostile);
      const [file] = generateAws(design);
      expect(file?.path).toBe('gateway/aws-api-gateway.json');
      const json = JSON.parse(file!.content) as Obj;
      expect(json).toEqual(awsConfig(design));
      expect(json._comment[0]).toMatch(/^EXAMPLE TO ADAPT/);
      const ceiling = edgeRules(design).find((r) => r.id === 'global-ceiling') as EdgeRule;
      expect(json.stageMethodSettings[0]).toMatchObject({
        ResourcePath: '/*',
        HttpMethod: '*',
        ThrottlingRateLimit: ceiling.rate.requests,
        ThrottlingBurstLimit: ceiling.burst,
      });
      const waf = json.wafRateBasedRules[0];
      expect(waf.Action.Block.CustomResponse.ResponseCode).toBe(429);
      expect(waf.Action.Block.CustomResponse.ResponseHeaders[0].Name).toBe('Retry-After');
      expect(waf.Statement.RateBasedStatement.AggregateKeyType).toBe('IP');
      for (const rule of json.wafRateBasedRules as Obj[]) {
        expect(rule.Name).toMatch(/^[\w-]{1,128}$/);
        expect(rule.VisibilityConfig.MetricName).toMatch(/^[\w-]{1,128}$/);
      }
      expect(JSON.parse(json.wafCustomResponseBodies['rl-too-many-requests'].Content).status).toBe(429);
      // each 429 body names only the rules that can send it: API Gateway's throttles, or the WAF rules
      const wafIds = edgeRules(design)
        .filter((r) => r.key === 'ip')
        .map((r) => r.id);
      expect(wafIds.length).toBeGreaterThan(0);
      expect(JSON.parse(json.wafCustomResponseBodies['rl-too-many-requests'].Content).limit.rules).toEqual(wafIds);
      for (const response of json.gatewayResponses as Obj[]) {
        const named = JSON.parse(response.Properties.ResponseTemplates['application/json']).limit.rules as string[];
        expect(named).toContain('global-ceiling');
        for (const id of wafIds) expect(named).not.toContain(id);
      }
    });

    it(`Cloudflare${hostile ? ' (hostile design)' : ''}`, () => {
      const design = designWith('cloudflare', hostile);
      const [file] = generateCloudflare(design);
      const json = JSON.parse(file!.content) as Obj;
      expect(json).toEqual(cloudflareConfig(design));
      expect(json._comment[0]).toMatch(/^EXAMPLE TO ADAPT/);
      expect(json.phase).toBe('http_ratelimit');
      const rules = edgeRules(design);
      expect(json.rules).toHaveLength(rules.length);
      for (const rule of json.rules as Obj[]) {
        expect(rule.action).toBe('block');
        expect(rule.action_parameters.response.status_code).toBe(429);
        expect(JSON.parse(rule.action_parameters.response.content).code).toBe('RATE_LIMITED');
        expect(rule.ratelimit.characteristics).toContain('cf.colo.id');
        expect([10, 60, 120, 300, 600, 3600]).toContain(rule.ratelimit.period);
        // every string literal in the expression is closed: quotes pair up outside escapes
        const unescaped = rule.expression.replace(/\\\\/g, '').replace(/\\"/g, '');
        expect((unescaped.match(/"/g) ?? []).length % 2).toBe(0);
      }
      const anon = json.rules.find((r: Obj) => r.description.startsWith('anonymous-per-ip'));
      expect(anon.ratelimit.characteristics).toEqual(['ip.src', 'cf.colo.id']);
    });
  }

  it('Cloudflare: a route with spaces or percent escapes is compared as normalization hands the request path to the rule', () => {
    // a client sends a space as %20 (a request line cannot hold one); Cloudflare's URL
    // normalization decodes escaped unreserved characters (%7E is ~), writes other escapes in
    // upper case (which lower() then lowers) and leaves reserved characters as written
    expect(cfRoutesExpr([edgeRoute('GET', '/v1/my  files')])).toBe(
      '(http.request.method in {"GET" "HEAD"} and lower(http.request.uri.path) in {"/v1/my%20%20files" "/v1/my%20%20files/"})',
    );
    for (const route of ['/v1/Café', '/v1/caf%C3%A9', '/v1/caf%c3%a9'])
      expect(cfStaticPaths(edgeRoute('ANY', route)), route).toEqual(['/v1/caf%c3%a9', '/v1/caf%c3%a9/']);
    expect(cfStaticPaths(edgeRoute('ANY', '/v1/%7Euser/a%2Fb/x@y'))).toEqual(['/v1/~user/a%2fb/x@y', '/v1/~user/a%2fb/x@y/']);
    expect(cfStaticPaths(edgeRoute('ANY', '/v1/50%'))).toEqual(['/v1/50%25', '/v1/50%25/']);
    const param = cfRoutesExpr([edgeRoute('ANY', '/v1/my files/:id')]);
    // regexLiteral writes % as \x25, and the string literal doubles the backslash
    expect(param).toBe('(http.request.uri.path matches "(?i)^/v1/my\\\\x2520files/[^/]+/?$")');
    // the request the middleware counts under the route is the one the rule counts
    const regex = new RegExp(/"\(\?i\)(.*)"\)$/.exec(param)![1]!.replace(/\\\\/g, '\\'), 'i');
    expect(regex.test(encodeURI('/v1/my files/42'))).toBe(true);
    expect(regex.test('/v1/my files/42')).toBe(false);
  });

  it('Cloudflare: static routes compare the lowercased path with eq / in (every plan), routes with parameters use matches', () => {
    expect(cfRoutesExpr([edgeRoute('ANY', '/v1/Status')])).toBe('(lower(http.request.uri.path) in {"/v1/status" "/v1/status/"})');
    expect(cfRoutesExpr([edgeRoute('ANY', '/')])).toBe('(lower(http.request.uri.path) eq "/")');
    // static routes with the same methods share one set; each parameterised route is a regex
    expect(cfRoutesExpr([edgeRoute('GET', '/a'), edgeRoute('POST', '/c'), edgeRoute('GET', '/b/'), edgeRoute('GET', '/a/:id')])).toBe(
      '(http.request.method in {"GET" "HEAD"} and lower(http.request.uri.path) in {"/a" "/a/" "/b" "/b/"}) or ' +
        '(http.request.method in {"POST"} and lower(http.request.uri.path) in {"/c" "/c/"}) or ' +
        '(http.request.method in {"GET" "HEAD"} and http.request.uri.path matches "(?i)^/a/[^/]+/?$")',
    );
    // the set holds exactly the paths the route's own regex admits, as lower() sees them
    for (const route of ['/v1/Orders', '/v1/a.b$c(d)+', '/', '/x/']) {
      const r = edgeRoute('ANY', route);
      const re = new RegExp(r.pathRegex, 'i');
      for (const p of cfStaticPaths(r)) expect(re.test(p), `${route} ${p}`).toBe(true);
      expect(cfStaticPaths(r)).toContain(sampleFor(route).replace(/[A-Z]/g, (c) => c.toLowerCase()));
    }
  });

  it("Cloudflare: each rule's lowest plan follows from what it uses", () => {
    const free = {
      expression: '(lower(http.request.uri.path) eq "/login")',
      characteristics: ['ip.src', 'cf.colo.id'],
      period: 10,
      mitigation: 10,
    };
    expect(cfRulePlan(free)).toEqual({ plan: 'Free', needs: [] });
    expect(cfRulePlan({ ...free, period: 60, mitigation: 60 })).toEqual({
      plan: 'Pro',
      needs: ['a 60 s period (Pro)', 'a 60 s mitigation timeout (Pro)'],
    });
    expect(cfRulePlan({ ...free, expression: '(http.request.uri.path matches "(?i)^/a/[^/]+/?$")' }).plan).toBe('Business');
    expect(cfRulePlan({ ...free, expression: '(http.request.method in {"POST"} and lower(http.request.uri.path) eq "/a")' }).plan).toBe(
      'Business',
    );
    expect(cfRulePlan({ ...free, characteristics: ['http.request.headers["x-api-key"]', 'cf.colo.id'] }).plan).toBe('Enterprise');
    expect(cfRulePlan({ ...free, period: 3600 }).plan).toBe('Enterprise');
  });

  it('Cloudflare: the file names the plan each rule needs, and matches only where a route has parameters', () => {
    for (const hostile of [false, true]) {
      const design = designWith('cloudflare', hostile);
      const json = cloudflareConfig(design) as Obj;
      const comment = (json._comment as string[]).join('\n');
      expect(comment).not.toContain('"matches" (regex) needs a Business or\nEnterprise plan, and');
      for (const rule of json.rules as Obj[]) {
        const id = rule.description.split(':')[0];
        const r = edgeRules(design).find((x) => x.id === id)!;
        const hasParams = r.routes.some((x) => !x.literal);
        if (r.routes.length > 0) expect(rule.expression.includes(' matches '), id).toBe(hasParams);
        const plan = cfRulePlan({
          expression: rule.expression,
          characteristics: rule.ratelimit.characteristics,
          period: rule.ratelimit.period,
          mitigation: rule.ratelimit.mitigation_timeout,
        });
        const line = (json._comment as string[]).find((l) => l.startsWith(`${id}: `));
        expect(line, id).toContain(`${id}: ${plan.plan} plan or above`);
        for (const need of plan.needs) expect(line).toContain(need);
        // the read-back sees the same routes in the file as in the design
        expect(cfExpressionTerms(rule.expression).length, id).toBeGreaterThan(0);
      }
    }
  });

  it("Cloudflare: the zone's plan line speaks of one rule as one, and of several as all of them together", () => {
    const planLine = (name: string): { rules: number; line: string | undefined } => {
      const base = exampleAnswers(name);
      const json = cloudflareConfig(
        buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway: 'cloudflare' } }), { date: DATE }),
      ) as Obj;
      return {
        rules: (json.rules as Obj[]).length,
        line: (json._comment as string[]).find((l) => l.includes(' plan or above (a zone holds ')),
      };
    };
    const one = planLine('minimal-generic');
    expect(one.rules).toBe(1);
    expect(one.line).toBe("The file's one rule: Free plan or above (a zone holds 1 rate limiting rule on Free, 2 on Pro, 5 on Business).");
    const two = planLine('saas-platform');
    expect(two.rules).toBe(2);
    expect(two.line).toBe(
      'All 2 rules together: Business plan or above (a zone holds 1 rate limiting rule on Free, 2 on Pro, 5 on Business).',
    );
  });

  it('API Gateway resource paths use {param}', () => {
    expect(apiGatewayPath('/v1/orders/:id')).toBe('/v1/orders/{id}');
    expect(apiGatewayPath('/files/*path')).toBe('/files/{proxy+}');
  });
});

describe('AWS: a documentation URL with template syntax in it reaches the client as written', () => {
  it('every gateway response template (THROTTLED, QUOTA_EXCEEDED) and the WAF body', () => {
    const base = hostileAnswers({ headers: { docsUrl: TEMPLATE_DOCS_URL } });
    const design = buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway: 'aws-api-gateway' } }), { date: DATE });
    expect(design.contract.docsUrl).toBe(TEMPLATE_DOCS_URL);
    const json = JSON.parse(generateAws(design)[0]!.content) as Obj;
    const responses = json.gatewayResponses as Obj[];
    expect(responses.map((r) => r.Properties.ResponseType)).toEqual(['THROTTLED', 'QUOTA_EXCEEDED']);
    for (const r of responses) {
      const templates = Object.values(r.Properties.ResponseTemplates) as string[];
      expect(templates).toHaveLength(1);
      const body = apiGatewayTemplateRead(templates[0]!) as Obj;
      expect(body.documentation).toBe(TEMPLATE_DOCS_URL);
      expect(body.type).toBe(`${TEMPLATE_DOCS_URL}#rate-limited`);
    }
    // the document says why the template's text differs from the body it shows
    expect(awsEdgeRefusals(design)[0]!.notes).toContain(
      'API Gateway substitutes $ references in a gateway response template (and # would open VTL comments and directives, were it read as VTL), so the file writes $ as \\u0024 and # as \\u0023 (JSON escapes): a JSON parser reads the body shown here.',
    );
    // a WAF custom response body is no template: sent as written, JSON as it stands
    const waf = JSON.parse(json.wafCustomResponseBodies['rl-too-many-requests'].Content);
    expect(waf.documentation).toBe(TEMPLATE_DOCS_URL);
  });
});

describe('generateGateway', () => {
  it("generates only the design's own gateway, and nothing without edge rules", () => {
    for (const name of exampleNames()) {
      const design = exampleDesign(name);
      const files = generateGateway(design);
      if (design.rules.some((r) => r.layer === 'edge')) expect(files.length).toBeGreaterThan(0);
      else expect(files).toEqual([]);
    }
    expect(generateGateway(exampleDesign('saas-platform')).map((f) => f.path)).toEqual(['gateway/nginx.conf', 'gateway/nginx-server.conf']);
    for (const gateway of GATEWAYS) {
      const design = designWith(gateway);
      const paths = generateGateway(design).map((f) => f.path);
      expect(paths.length).toBeGreaterThan(0);
      expect(paths.every((p) => p.startsWith('gateway/'))).toBe(true);
    }
  });

  it('every gateway generator runs on every example and on the hostile design', () => {
    for (const design of [...exampleNames().map(exampleDesign), hostileDesign()]) {
      for (const gateway of GATEWAYS) {
        for (const f of GATEWAY_GENERATORS[gateway](design)) {
          if (f.language === 'yaml') yamlOf(f.content);
          if (f.language === 'json') JSON.parse(f.content);
          expect(f.content.endsWith('\n')).toBe(true);
        }
      }
    }
  });
});

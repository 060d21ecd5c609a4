/**
 * Kong declarative configuration (decK / DB-less `kong.yml`) for the design's edge rules.
 *
 * Kong runs at most ONE instance of a plugin per request: the most specific one (consumer +
 * route + service first, the global instance last), so a route-level `rate-limiting` replaces
 * the service-level one. Two plugins therefore carry the rules:
 * - the global ceiling: `rate-limiting-advanced` on the service (every route of the service,
 *   whatever route plugins they have; counters per Kong node, identifier "service");
 * - each per-client or route-scoped rule: `rate-limiting` on Kong routes for its endpoints (a
 *   per-client rule over every endpoint: on the service, for the routes without their own).
 * An endpoint that two rules of the second kind cover can run only one of them at Kong; the
 * file header names every such gap, and `kongCoverage` states, per endpoint, what runs.
 */
import {
  type EdgeWindow,
  edgeCounter,
  edgeShadowHow,
  fixedWindowUnit,
  KONG_BASE_PRIORITY,
  kongEndpointKey,
  kongPolicy,
  kongRouteOrder,
  kongRoutePlan,
} from '../../design/gateway-behaviour.js';
import type { Design } from '../../design/model.js';
import { slug } from '../../design/naming.js';
import { parse as parseYaml } from 'yaml';
import { TOOL_VERSION } from '../../version.js';
import { gatewayName, toYaml } from '../../escape/index.js';
import type { CodeFile } from '../types.js';
import {
  API_KEY_HEADER,
  edgeRoute,
  edgeRules,
  exemptRoutes,
  rateText,
  type EdgeRefusal,
  type EdgeRoute,
  type EdgeRule,
  type RetryAfterFinding,
  killSwitchNote,
  perNodeNote,
} from './edge.js';

export const KONG_PATH = 'gateway/kong.yaml';

const UPSTREAM_URL = 'http://app.internal:3000';
/** The plugin that carries the global ceiling (a different name, so route plugins never replace it). */
export const KONG_CEILING_PLUGIN = 'rate-limiting-advanced';
/** The plugin that carries per-client and route-scoped rules. */
export const KONG_RULE_PLUGIN = 'rate-limiting';

const ERROR_MESSAGE = 'Too many requests: retry after the time in Retry-After, with jitter.';

/** Adds Retry-After to 429s that lack it: the rate limit plugins run with their client headers hidden. */
export const KONG_RETRY_AFTER_PLUGIN = 'post-function';

/** The header_filter code of the Retry-After plugin (Lua, run by Kong's sandbox). */
export function kongRetryAfterLua(seconds: number): string {
  return `if kong.response.get_status() == 429 and not kong.response.get_header("Retry-After") then kong.response.set_header("Retry-After", "${Math.max(1, Math.ceil(seconds))}") end`;
}

/** What the file enforces for a rule: the window the design states for it (edgeCounter's window, its matrix row). */
// (this file's gateway: the same as the design's, except where a design is written for another gateway)
const windowOf = (design: Design, r: EdgeRule): EdgeWindow =>
  edgeCounter(r.rule, { ...design.scope, gateway: 'kong' }).window(r.rate, r.burst);

/** The longest a Kong refusal lasts: the window of the slowest rule (its counter resets then). */
function kongRetryAfterSeconds(design: Design, rules: EdgeRule[]): number {
  return Math.max(1, ...rules.map((r) => windowOf(design, r).periodSeconds));
}

function retryAfterPlugin(seconds: number, instance: string): Record<string, unknown> {
  return {
    name: KONG_RETRY_AFTER_PLUGIN,
    instance_name: gatewayName(instance, 120),
    tags: ['rl-design', 'retry-after'],
    enabled: true,
    config: { header_filter: [kongRetryAfterLua(seconds)] },
  };
}

/**
 * rate-limiting's windows: a whole count per unit (the design's window for the plugin is one),
 * for each rule the instance carries; rules in the same unit keep the lowest count (the stricter).
 */
function windowConfig(design: Design, rules: readonly EdgeRule[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const rule of rules) {
    const w = windowOf(design, rule);
    const unit = fixedWindowUnit(w.periodSeconds);
    if (unit === undefined || !Number.isInteger(w.requests)) {
      throw new Error(`edge rule ${rule.id}: ${w.requests} per ${w.periodSeconds} s is not a whole count per second, minute, hour or day`);
    }
    out[unit] = Math.min(out[unit] ?? Number.POSITIVE_INFINITY, w.requests);
  }
  return out;
}

function ruleTag(rule: EdgeRule): string {
  return gatewayName(`rule-${rule.id}`, 120);
}

/**
 * `rate-limiting` for one rule, or for the rules merged into a route's one instance (the same
 * key and fail mode: kongRoutePlan). Kong wants instance names unique across all plugins.
 */
function rulePlugin(design: Design, rules: readonly EdgeRule[], policy: 'local' | 'redis', instance: string): Record<string, unknown> {
  const rule = rules[0] as EdgeRule;
  const limitBy = rule.key === 'global' ? 'service' : rule.key === 'ip' ? 'ip' : 'header';
  return {
    name: KONG_RULE_PLUGIN,
    instance_name: gatewayName(instance, 120),
    tags: ['rl-design', ...rules.map(ruleTag)],
    enabled: true,
    config: {
      ...windowConfig(design, rules),
      limit_by: limitBy,
      ...(limitBy === 'header' ? { header_name: API_KEY_HEADER } : {}),
      policy,
      ...(policy === 'redis' ? { redis: { host: 'redis.internal', port: 6379, database: 0, timeout: 50 } } : {}),
      // fault_tolerant true = admit while the counter store is unreachable (fail open)
      fault_tolerant: rule.failMode === 'open',
      // Kong's own RateLimit-* and X-RateLimit-*-<window> headers would be a second convention
      // (the application sends the documented one); the post-function adds Retry-After instead
      hide_client_headers: true,
      error_code: 429,
      error_message: ERROR_MESSAGE,
    },
  };
}

/** `rate-limiting-advanced` for the ceilings (one instance, one limit/window pair per ceiling). */
function ceilingPlugin(design: Design, ceilings: EdgeRule[], instance: string): Record<string, unknown> {
  return {
    name: KONG_CEILING_PLUGIN,
    instance_name: gatewayName(instance, 120),
    tags: ['rl-design', ...ceilings.map(ruleTag)],
    enabled: true,
    config: {
      limit: ceilings.map((r) => windowOf(design, r).requests),
      window_size: ceilings.map((r) => windowOf(design, r).periodSeconds),
      window_type: 'fixed',
      identifier: 'service',
      // counters in each node's memory, never synced: per node, like the design's ceiling
      strategy: 'local',
      sync_rate: -1,
      namespace: gatewayName(`rl-design-${slug(design.scope.projectName)}-ceiling`, 120),
      hide_client_headers: true,
      error_code: 429,
      error_message: ERROR_MESSAGE,
    },
  };
}

/** One Kong route per endpoint: same methods and path regex. */
function endpointKey(r: EdgeRoute): string {
  return kongEndpointKey(r.method, r.route);
}

/**
 * A route's Kong regex path. Kong 3 takes a regex path only as `~/...` (typedefs.lua
 * router_path: "should start with: / (fixed path) or ~/ (regex path)"; it refuses the whole
 * file otherwise) and anchors it at the start itself (transform.lua path_val_transform puts `^`
 * first); `(?i)` after the leading slash, as the middleware matches paths in any letter case
 * (Rust's regex crate and PCRE take an inline flag anywhere: it holds for the rest); `$` at the end.
 */
export function kongRoutePath(r: Pick<EdgeRoute, 'pathBody'>): string {
  const rest = r.pathBody.replace(/^\//, '');
  return rest === '' ? '~/$' : `~/(?i)${rest}$`;
}

/** One Kong route for endpoints that share their methods (Kong matches any listed method with any path). */
function routeEntry(name: string, group: EdgeRoute[], plugins: Record<string, unknown>[], priority: number): Record<string, unknown> {
  const first = group[0] as EdgeRoute;
  return {
    name,
    ...(first.methods ? { methods: first.methods } : {}),
    paths: group.map(kongRoutePath),
    // above every route whose requests it owns (a static segment beats a parameter): kongRouteOrder
    regex_priority: priority,
    strip_path: false,
    ...(plugins.length > 0 ? { plugins } : {}),
  };
}

/** What runs at Kong for one endpoint, and which of its rules cannot run there. */
interface KongCoverage {
  method: string;
  route: string;
  /** Rule ids whose plugin instance runs on this endpoint. */
  runs: string[];
  /** Rule ids that cover the endpoint but whose instance Kong replaces with another one. */
  replaced: string[];
}

interface Plan {
  ceilings: EdgeRule[];
  /** The per-client rule over every endpoint that sits on the service (the first one). */
  serviceRule?: EdgeRule;
  /**
   * Kong routes: endpoints with the same methods and the same rules share one (so a rule over
   * several endpoints keeps one counter where it can), and the rule whose instance sits on it.
   */
  endpoints: { routes: EdgeRoute[]; rule: EdgeRule; runs: EdgeRule[]; others: EdgeRule[] }[];
  /** How many Kong routes carry each rule (each keeps its own counter). */
  routesPerRule: Map<string, number>;
  coverage: KongCoverage[];
}

function plan(design: Design): Plan {
  const rules = edgeRules(design).filter((r) => r.key !== 'unsupported');
  const ceilings = rules.filter((r) => r.key === 'global' && r.routes.length === 0);
  const everywhere = rules.filter((r) => r.key !== 'global' && r.routes.length === 0);
  // the Kong routes the design counts the rules' worst case over
  const layout = kongRoutePlan(design.rules);
  const byId = new Map(rules.map((r) => [r.id, r]));
  const ruleOf = (id: string): EdgeRule => byId.get(id) as EdgeRule;
  const byEndpoint = new Map(
    [...layout.byEndpoint].map(([k, e]) => [k, { route: edgeRoute(e.method, e.route), rules: e.ruleIds.map(ruleOf) }] as const),
  );
  const serviceRule = everywhere[0];
  const endpoints = layout.groups.map((g) => {
    const runs = g.runs.map(ruleOf);
    return { routes: g.routes.map((x) => edgeRoute(x.method, x.route)), rule: runs[0] as EdgeRule, runs, others: g.replaced.map(ruleOf) };
  });
  const runsOn = new Map(
    layout.groups.flatMap((g) => g.routes.map((x) => [kongEndpointKey(x.method, x.route), g.runs.map(ruleOf)] as const)),
  );
  const routesPerRule = layout.routesPerRule;
  const exempt = new Set(exemptRoutes(design).map(endpointKey));
  const coverage: KongCoverage[] = design.scope.endpoints
    .filter((e) => !exempt.has(endpointKey(edgeRoute(e.method, e.route))))
    .map((e) => {
      const own = byEndpoint.get(endpointKey(edgeRoute(e.method, e.route)));
      const perRequest = own ? (runsOn.get(endpointKey(edgeRoute(e.method, e.route))) ?? []) : serviceRule ? [serviceRule] : [];
      const applies = [...(own?.rules ?? []), ...everywhere];
      return {
        method: e.method,
        route: e.route,
        runs: [...ceilings, ...perRequest].map((r) => r.id),
        replaced: applies.filter((r) => !perRequest.includes(r)).map((r) => r.id),
      };
    });
  return { ceilings, ...(serviceRule ? { serviceRule } : {}), endpoints, routesPerRule, coverage };
}

/**
 * The rules each of Kong's two plugins counts (rate-limiting-advanced the ceilings, rate-limiting
 * the others that a route or the service runs) and the Retry-After the post-function adds to
 * their 429s: the file's plugins and its header comment, and the document's examples, read it.
 */
function kongAnswer(design: Design, p: Plan): { advanced: EdgeRule[]; basic: EdgeRule[]; retryAfter: number } {
  const basic = [...new Set([...(p.serviceRule ? [p.serviceRule] : []), ...p.endpoints.flatMap((e) => e.runs)])];
  return { advanced: p.ceilings, basic, retryAfter: kongRetryAfterSeconds(design, [...p.ceilings, ...basic]) };
}

/** Kong's Content-Type for the JSON it writes itself. */
const KONG_JSON = 'application/json; charset=utf-8';

/**
 * The 429s of the Kong file, one per plugin that counts a rule: Kong writes each body itself
 * (its own JSON, not problem+json) from the plugin's error_message; the post-function adds
 * Retry-After. rate-limiting answers through kong.response.error, whose form follows the
 * request's Accept header; rate-limiting-advanced through kong.response.exit, always JSON.
 */
export function kongEdgeRefusals(design: Design): EdgeRefusal[] {
  const { advanced, basic, retryAfter } = kongAnswer(design, plan(design));
  const retry = { name: 'Retry-After', value: String(retryAfter) };
  const why = `Retry-After comes from the ${KONG_RETRY_AFTER_PLUGIN} plugin on the service: one window of the slowest rule Kong counts, since Kong's windows reset on the clock; the rate limit plugins' own headers are hidden.`;
  return [
    ...(advanced.length > 0
      ? [
          {
            by: `Kong's ${KONG_CEILING_PLUGIN} plugin (Kong Enterprise)`,
            writtenBy: 'kong-rate-limiting-advanced' as const,
            ruleIds: advanced.map((r) => r.id),
            headers: [
              { name: 'Content-Type', value: KONG_JSON, byGateway: 'kong.response.exit writes a table body as JSON' },
              { ...retry },
            ],
            body: { message: ERROR_MESSAGE },
            notes: ["The plugin answers with its error_message in Kong's own JSON (not problem+json), whatever the client accepts.", why],
          },
        ]
      : []),
    ...(basic.length > 0
      ? [
          {
            by: `Kong's ${KONG_RULE_PLUGIN} plugin`,
            writtenBy: 'kong-rate-limiting' as const,
            ruleIds: basic.map((r) => r.id),
            headers: [
              {
                name: 'Content-Type',
                value: KONG_JSON,
                byGateway:
                  "kong.response.error picks it from the request's Accept header (JSON unless the client asks for HTML, XML or plain text)",
              },
              { ...retry },
            ],
            body: { message: ERROR_MESSAGE, request_id: '<request id>' },
            notes: [
              "The plugin answers through Kong's error handler, in Kong's own JSON (not problem+json) as shown unless the client's Accept header asks for HTML, XML or plain text, which get the same message in that form. request_id is Kong's id for the request (Kong 3.5 and later; earlier 3.x releases send the message alone).",
              why,
            ],
          },
        ]
      : []),
  ];
}

/** Per endpoint of the design (exempt ones aside): the rules Kong runs and those it cannot. */
export function kongCoverage(design: Design): KongCoverage[] {
  return plan(design).coverage;
}

/** The declarative config as data (exported for tests). */
export function kongConfig(design: Design): Record<string, unknown> {
  const p = plan(design);
  const service = slug(design.scope.projectName);
  const used = new Set<string>();
  // route and plugin instance names: Kong's charset, unique
  const uniqueName = (base: string): string => {
    const b = gatewayName(base, 100);
    let n = b;
    for (let i = 2; used.has(n); i++) n = `${b}-${i}`;
    used.add(n);
    return n;
  };
  const policyOf = (r: EdgeRule): 'local' | 'redis' => kongPolicy(r, design.scope);
  const order = kongRouteOrder(kongRoutePlan(design.rules), design.scope.endpoints);
  const priorityOf = (r: EdgeRoute): number =>
    order.routes.find((x) => x.routes.some((y) => kongEndpointKey(y.method, y.route) === endpointKey(r)))?.priority ?? KONG_BASE_PRIORITY;
  const routes: Record<string, unknown>[] = p.endpoints.map((e, i) => {
    const name = uniqueName(`${e.rule.id}-${i + 1}`);
    return routeEntry(name, e.routes, [rulePlugin(design, e.runs, policyOf(e.rule), `rl-${name}`)], priorityOf(e.routes[0] as EdgeRoute));
  });
  // endpoints that own requests a rule's route also matches, with no route-scoped rule of their
  // own: a route without a rate limit, tried first, so the rule's route never counts them
  for (const o of order.routes.filter((x) => x.kind === 'owner')) {
    const r = edgeRoute((o.routes[0] as { method: string }).method, (o.routes[0] as { route: string }).route);
    const name = design.scope.endpoints.find((e) => e.method === r.method && e.route === r.route)?.name ?? 'endpoint';
    routes.push(routeEntry(uniqueName(`${service}-${name}`), [r], [], o.priority));
  }
  routes.push({ name: uniqueName(`${service}-all`), paths: ['/'], strip_path: false });
  const answer = kongAnswer(design, p);
  const servicePlugins = [
    ...(p.ceilings.length > 0 ? [ceilingPlugin(design, p.ceilings, uniqueName(`rl-${p.ceilings.map((r) => r.id).join('-')}`))] : []),
    ...(p.serviceRule ? [rulePlugin(design, [p.serviceRule], policyOf(p.serviceRule), uniqueName(`rl-${p.serviceRule.id}`))] : []),
    ...(answer.advanced.length + answer.basic.length > 0 ? [retryAfterPlugin(answer.retryAfter, uniqueName('rl-retry-after'))] : []),
  ];
  const exempt = exemptRoutes(design);
  return {
    _format_version: '3.0',
    _transform: true,
    services: [
      {
        name: service,
        url: UPSTREAM_URL,
        tags: ['rl-design'],
        routes,
        ...(servicePlugins.length > 0 ? { plugins: servicePlugins } : {}),
      },
      ...(exempt.length > 0
        ? [
            {
              name: `${service}-health`,
              url: UPSTREAM_URL,
              tags: ['rl-design', 'exempt'],
              routes: exempt.map((e, i) => routeEntry(uniqueName(`${service}-health-${i + 1}`), [e], [], priorityOf(e))),
            },
          ]
        : []),
    ],
  };
}

function kongRouteNote(routes: number, merged: string[]): string {
  const shared =
    merged.length > 0
      ? ` On a route it shares with ${merged.join(', ')} (the same key), one instance carries both, the lowest count per window unit: Kong enforces the stricter.`
      : '';
  if (routes === 0)
    return ' No Kong route runs it: on each of its endpoints another rule, keyed on something else, holds the one rate-limiting instance (listed below); the document states it as not enforced.';
  if (routes === 1) return ` One Kong route carries all its endpoints: one counter.${shared}`;
  return ` Its endpoints sit on ${routes} Kong routes (different methods or rules), each with its own counter: a client can reach up to ${routes} x the limit.${shared}`;
}

function header(design: Design): string[] {
  const rules = edgeRules(design);
  const p = plan(design);
  const usesRedis = rules.some((r) => kongPolicy(r, design.scope) === 'redis');
  const lines = [
    `Generated by rl-design ${TOOL_VERSION} for ${design.scope.projectName}: edge rate limits for Kong (3.x declarative config).`,
    'Regenerate from the answers file rather than editing by hand. Apply with `deck gateway sync` or load',
    ...(usesRedis
      ? [
          `it DB-less; replace ${UPSTREAM_URL} and redis.internal with your upstream and limiter Redis (dedicated, noeviction).`,
          'Kong before 3.6 spells the Redis settings redis_host / redis_port / redis_database / redis_timeout.',
        ]
      : [`it DB-less; replace ${UPSTREAM_URL} with your upstream. No plugin here uses Redis: each counts on its own Kong node.`]),
    '',
    'Kong runs one instance of each plugin per request, the most specific (a route instance replaces the',
    `service one). So the global ceiling uses ${KONG_CEILING_PLUGIN} on the service, which no route plugin replaces,`,
    `and the other rules use ${KONG_RULE_PLUGIN} on their endpoints' routes. ${KONG_CEILING_PLUGIN} is a Kong Enterprise`,
    'plugin: on Kong OSS, Kong refuses this file until you delete that plugin entry, and the ceiling then',
    'needs another home (the nginx config this tool writes for gateway nginx, or the application middleware).',
    '',
  ];
  for (const r of rules) {
    if (r.key === 'unsupported') {
      lines.push(`${r.id}: keyed on ${r.identity ?? 'an unstated identity'}, which Kong cannot see here: enforce it in the middleware.`);
      continue;
    }
    const w = windowOf(design, r);
    if (p.ceilings.some((c) => c.id === r.id)) {
      lines.push(
        `${r.id}: ${rateText(w)} as ${w.requests} per ${w.periodSeconds} s, fixed window, no burst, counted in each Kong node's memory` +
          `; ${perNodeNote(design, r)} Fail ${r.failMode} if its count moves to a shared store (here each Kong node counts it: no store to fail).` +
          ` ${killSwitchNote(design, r) ?? 'No kill switch'}.`,
      );
      continue;
    }
    lines.push(
      `${r.id}: ${w.requests} per ${fixedWindowUnit(w.periodSeconds) ?? `${w.periodSeconds} s`}, fixed window, no burst; ` +
        (r.key === 'global' ? '' : `keyed on ${r.key === 'ip' ? 'the client IP' : `the ${API_KEY_HEADER} header`}, `) +
        (kongPolicy(r, design.scope) === 'local'
          ? r.key === 'global'
            ? `policy local: one counter per Kong node. ${perNodeNote(design, r)}`
            : 'policy local: one counter per Kong node, so a client whose requests spread over K nodes passes up to K times it.'
          : 'counters shared through Redis.') +
        (r.routes.length === 0
          ? r === p.serviceRule
            ? ' On the service: one counter for all its routes that have no rate-limiting of their own.'
            : ` Not counted: the service holds one rate-limiting instance, which carries ${p.serviceRule?.id ?? 'another rule'}; the document states it as not enforced.`
          : kongRouteNote(
              p.routesPerRule.get(r.id) ?? 0,
              [...new Set(p.endpoints.filter((e) => e.runs.includes(r) && e.runs.length > 1).flatMap((e) => e.runs))]
                .filter((x) => x !== r)
                .map((x) => x.id),
            )) +
        (kongPolicy(r, design.scope) === 'local'
          ? ` Fail ${r.failMode} (fault_tolerant ${r.failMode === 'open'}) if its policy moves to redis; policy local has no store to fail.`
          : ` Fail ${r.failMode} (fault_tolerant ${r.failMode === 'open'}).`) +
        ` ${killSwitchNote(design, r) ?? 'No kill switch'}.`,
    );
  }
  const gaps = p.coverage.filter((c) => c.replaced.length > 0);
  if (gaps.length > 0) {
    lines.push(
      '',
      'Not counted at Kong (another rule holds the one rate-limiting instance of the endpoint);',
      'the document states each as not enforced there: enforce it in the middleware or give it a route of its own:',
    );
    for (const g of gaps) lines.push(`  ${g.method} ${g.route}: ${g.replaced.join(', ')}`);
  }
  const retryAfter = kongAnswer(design, p).retryAfter;
  lines.push(
    '',
    "Client IP: set trusted_ips to your proxies' ranges" +
      (design.enforcement.clientIp.trustedProxies.length > 0 ? ` (${design.enforcement.clientIp.trustedProxies.join(', ')})` : '') +
      ', real_ip_header X-Forwarded-For and real_ip_recursive on in kong.conf, so a client-written header never picks the key.',
    'Health probes sit on their own service without plugins: never limited.',
    "The rate limit plugins hide their client headers: Kong's RateLimit-* and X-RateLimit-*-<window> headers would",
    'be a second convention beside the one the application sends, and hiding them also drops their Retry-After.',
    `So ${KONG_RETRY_AFTER_PLUGIN} on the service (Kong's sandboxed Lua) adds Retry-After: ${retryAfter} to every 429 that has none:`,
    "the longest wait, one window of the slowest rule (Kong's windows reset on the clock). It needs untrusted_lua",
    'on or sandbox (the default) in kong.conf. The 429 body is Kong\'s {"message": ...}, not problem+json.',
    ...(design.rollout.startsInShadow ? [`Rollout step 1 (shadow): ${edgeShadowHow('kong')}.`] : []),
  );
  return lines;
}

export function generateKong(design: Design): CodeFile[] {
  return [
    {
      path: KONG_PATH,
      language: 'yaml',
      content: toYaml(kongConfig(design), header(design)),
      description:
        'Kong declarative config: rate-limiting-advanced for the global ceiling on the service, rate-limiting per edge rule on its routes',
    },
  ];
}

/** True when a post-function's header_filter adds a positive Retry-After to 429s. */
function addsRetryAfter(plugin: any): boolean {
  if (plugin?.name !== KONG_RETRY_AFTER_PLUGIN || plugin?.enabled === false) return false;
  const code: unknown[] = Array.isArray(plugin?.config?.header_filter) ? plugin.config.header_filter : [];
  return code.some(
    (c) => typeof c === 'string' && /get_status\(\)\s*==\s*429/.test(c) && /set_header\(\s*"Retry-After"\s*,\s*"[1-9]\d*"\s*\)/.test(c),
  );
}

/**
 * Kong's rate limit plugins send Retry-After on their 429 only with client headers on; with
 * them hidden, the post-function Kong resolves for the same request (the route's own, else the
 * service's, else a global one) must add it. One finding per plugin instance whose 429 would
 * lack it, or that would not answer 429.
 */
export function kongRetryAfterFindings(files: CodeFile[]): RetryAfterFinding[] {
  const out: RetryAfterFinding[] = [];
  for (const f of files.filter((x) => x.path === KONG_PATH)) {
    let doc: any;
    try {
      doc = parseYaml(f.content);
    } catch {
      out.push({ file: f.path, layer: 'kong', missing: 'a readable YAML file' });
      continue;
    }
    const global: any[] = Array.isArray(doc?.plugins) ? doc.plugins : [];
    const resolve = (scopes: any[][]): any =>
      scopes.map((list) => list.find((p) => p?.name === KONG_RETRY_AFTER_PLUGIN)).find((p) => p !== undefined);
    const check = (plugin: any, postFunction: any): void => {
      if (plugin?.name !== KONG_RULE_PLUGIN && plugin?.name !== KONG_CEILING_PLUGIN) return;
      const layer = `kong ${plugin.name} ${plugin.instance_name ?? ''}`.trim();
      if ((plugin.config?.error_code ?? 429) !== 429) out.push({ file: f.path, layer, missing: 'status 429 (error_code)' });
      if (plugin.config?.hide_client_headers === true && !addsRetryAfter(postFunction)) {
        out.push({ file: f.path, layer, missing: `Retry-After (client headers hidden and no ${KONG_RETRY_AFTER_PLUGIN} adds it)` });
      }
    };
    for (const service of Array.isArray(doc?.services) ? doc.services : []) {
      const servicePlugins: any[] = Array.isArray(service?.plugins) ? service.plugins : [];
      const routes: any[] = Array.isArray(service?.routes) ? service.routes : [];
      // a service-level limit runs on the routes without their own; each may resolve a different post-function
      for (const p of servicePlugins) {
        const onRoutes = routes.length > 0 ? routes : [{}];
        for (const r of onRoutes) check(p, resolve([Array.isArray(r?.plugins) ? r.plugins : [], servicePlugins, global]));
      }
      for (const r of routes) {
        const own: any[] = Array.isArray(r?.plugins) ? r.plugins : [];
        for (const p of own) check(p, resolve([own, servicePlugins, global]));
      }
    }
    for (const p of global) check(p, resolve([global]));
  }
  // one finding per layer and file
  const seen = new Set<string>();
  return out.filter((x) => {
    const k = `${x.file}\u0000${x.layer}\u0000${x.missing}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

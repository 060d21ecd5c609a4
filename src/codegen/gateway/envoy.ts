/**
 * Envoy configuration for the design's edge rules.
 *
 * - gateway/envoy-local-ratelimit.yaml: the pieces to merge into the HTTP connection
 *   manager: the local rate limit filter (a token bucket per Envoy instance: the global
 *   ceiling, and any route-scoped global-identity rule as a local descriptor), the global
 *   rate limit filter (per-client rules, counted across every Envoy by the rate limit
 *   service), a local reply mapper that gives every 429 Retry-After and a problem+json
 *   body, one that does the same for the 503 the global filter answers while the rate limit
 *   service is unreachable (only when it fails closed), the virtual host's rate_limits
 *   actions, and the rate limit service cluster.
 * - gateway/ratelimit-service.yaml: the envoyproxy/ratelimit service's descriptor config
 *   (one domain; one descriptor per per-client rule).
 *
 * Both are YAML written by the `yaml` package, so every user string is a quoted scalar.
 */
import type { Design } from '../../design/model.js';
import {
  ENVOY_APP_CLUSTER,
  envoyFailureModeDeny,
  ENVOY_LOCAL_STAT_PREFIX,
  envoyUnavailableReply,
  type EdgeWindow,
  edgeCounter,
  envoyCounter,
  envoyTokenBucket,
  fixedWindowUnit,
} from '../../design/gateway-behaviour.js';
import { slug } from '../../design/naming.js';
import { parse as parseYaml } from 'yaml';
import { TOOL_VERSION } from '../../version.js';
import { envoyJsonFormat, regexLiteral, toYaml } from '../../escape/index.js';
import { unavailableFields } from '../../runtime/middleware/responses.js';
import type { CodeFile } from '../types.js';
import {
  API_KEY_HEADER,
  bySpecificity,
  edgeProblemBody,
  edgeRetryAfter,
  edgeRules,
  exemptRoutes,
  killSwitchNote,
  rateText,
  type EdgeRefusal,
  type EdgeRoute,
  type EdgeRule,
  type RetryAfterFinding,
  failStatement,
  perNodeNote,
} from './edge.js';

export const ENVOY_FILTER_PATH = 'gateway/envoy-local-ratelimit.yaml';
export const ENVOY_SERVICE_PATH = 'gateway/ratelimit-service.yaml';

/** Descriptor key that names the matrix rule in every descriptor. */
export const RULE_DESCRIPTOR_KEY = 'rl_rule';
const RATE_LIMIT_CLUSTER = 'ratelimit';
const APP_CLUSTER = ENVOY_APP_CLUSTER;

const LOCAL_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const GLOBAL_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit';
const GLOBAL_PER_ROUTE_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute';
export const LOCAL_FILTER = 'envoy.filters.http.local_ratelimit';
export const GLOBAL_FILTER = 'envoy.filters.http.ratelimit';

/**
 * The response flag Envoy's global rate limit filter sets on the stream before it sends its
 * local reply for a failed call to the rate limit service (failure_mode_deny true): RLSE, long
 * form RateLimitServiceError. Checked against envoy/config/accesslog/v3/accesslog.proto
 * (AccessLogFilter.response_flag_filter, field 9 of the filter_specifier oneof;
 * ResponseFlagFilter.flags, a repeated string whose validate rule lists "RLSE") and
 * envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
 * (LocalReplyConfig.mappers, tried in order until one matches; ResponseMapper.filter, required,
 * headers_to_add, body_format_override), and source/extensions/filters/http/ratelimit/ratelimit.cc:
 * the flag is set before sendLocalReply(status_on_error), so the local reply mapper sees it. (Early
 * releases set it after the reply; they also predate status_on_error, which this file sets, so
 * an Envoy that loads this file is one that flags first.)
 */
export const RLS_ERROR_FLAG = 'RLSE';

/** Stage numbers keep the local and the global filter's descriptors apart. */
const LOCAL_STAGE = 0;
const GLOBAL_STAGE = 1;

/** The token bucket the design states for Envoy's local filter (re-exported for the generator's readers). */
export { envoyTokenBucket };

/** What the file enforces for a rule: the window and burst the design states for it (edgeCounter's window, its matrix row). */
// (this file's gateway: the same as the design's, except where a design is written for another gateway)
const windowOf = (design: Design, r: EdgeRule): EdgeWindow =>
  edgeCounter(r.rule, { ...design.scope, gateway: 'envoy' }).window(r.rate, r.burst);

/** A rule of the rate limit service as the service states it: a whole count per unit (the design's window is one). */
function serviceLimit(design: Design, r: EdgeRule): { unit: string; requests_per_unit: number } {
  const w = windowOf(design, r);
  const unit = fixedWindowUnit(w.periodSeconds);
  if (unit === undefined || !Number.isInteger(w.requests)) {
    throw new Error(`edge rule ${r.id}: ${w.requests} per ${w.periodSeconds} s is not a whole count per second, minute, hour or day`);
  }
  return { unit, requests_per_unit: w.requests };
}

/** A protobuf Duration string ("0.05s") in milliseconds. */
export function durationMs(d: string): number {
  return Math.round(Number(String(d).replace(/s$/, '')) * 1000);
}

/**
 * The filter-wide bucket when no ceiling runs at Envoy: large enough never to refuse
 * (a million requests a second per instance); only the descriptors limit.
 */
const UNLIMITED_BUCKET = { max_tokens: 1_000_000, tokens_per_fill: 50_000, fill_interval: '0.05s' };

/** A local descriptor's bucket: the design's window and burst, filled at a multiple of the filter-wide interval. */
function localBucket(design: Design, r: EdgeRule, baseMs: number): { max_tokens: number; tokens_per_fill: number; fill_interval: string } {
  const w = windowOf(design, r);
  return envoyTokenBucket(w, w.burst, baseMs);
}

function filterBucket(
  design: Design,
  ceiling: EdgeRule | undefined,
): { max_tokens: number; tokens_per_fill: number; fill_interval: string } {
  if (!ceiling) return { ...UNLIMITED_BUCKET };
  const w = windowOf(design, ceiling);
  return envoyTokenBucket(w, w.burst);
}

function percent(n: number): { numerator: number; denominator: 'HUNDRED' } {
  return { numerator: n, denominator: 'HUNDRED' };
}

/** A :path matcher for route patterns (pathBody), the query string allowed after them. */
function pathMatcher(bodies: readonly string[], invert = false): Record<string, unknown> {
  // :path carries the query string; normalize_path/merge_slashes on the connection manager keep it canonical
  const body = bodies.length === 1 ? (bodies[0] as string) : `(?:${bodies.join('|')})`;
  return { name: ':path', string_match: { safe_regex: { regex: `(?i)^${body}(?:\\?.*)?$` } }, ...(invert ? { invert_match: true } : {}) };
}

function methodMatcher(methods: readonly string[], invert = false): Record<string, unknown> {
  return {
    name: ':method',
    string_match: { safe_regex: { regex: `^(?:${methods.map(regexLiteral).join('|')})$` } },
    ...(invert ? { invert_match: true } : {}),
  };
}

/**
 * A route's match as the middleware matches it, for the exempt routes and the routes that own
 * some of their requests: its methods (GET also HEAD) and its path in any letter case with an
 * optional trailing slash (a safe_regex matches the path without its query string; case_sensitive
 * does not apply to it, so the regex says (?i)). An exempt GET /healthz leaves POST /healthz to
 * the catch-all, where the edge rules count it.
 */
function routeMatch(e: EdgeRoute): Record<string, unknown> {
  return { safe_regex: { regex: `(?i)${e.pathRegex}` }, ...(e.methods ? { headers: [methodMatcher(e.methods)] } : {}) };
}

/**
 * Header matcher sets, one per rate_limits entry, that together fire exactly for the requests a
 * route owns: its pattern, but none that a more specific route of another endpoint takes
 * (EdgeRoute.excluding, as an inverted :path matcher). Envoy ANDs one entry's matchers, so
 * where an excluded route names fewer methods than this one, the methods split the entries
 * (each method with the paths left out for it; the sets never overlap, so no request is counted
 * twice).
 */
export function ownedMatcherSets(r: EdgeRoute): Record<string, unknown>[][] {
  const path = pathMatcher([r.pathBody]);
  if (r.excluding.length === 0) return [[path, ...(r.methods ? [methodMatcher(r.methods)] : [])]];
  const leftOut = (m: string | null): EdgeRoute[] => r.excluding.filter((e) => e.methods === null || (m !== null && e.methods.includes(m)));
  const atoms = r.methods ?? [...new Set(r.excluding.flatMap((e) => e.methods ?? []))];
  // per set of paths left out: the methods it holds for (null: any method the others do not name)
  const groups = new Map<string, { methods: (string | null)[]; excluded: EdgeRoute[] }>();
  for (const m of [...atoms, ...(r.methods === null ? [null] : [])]) {
    const excluded = leftOut(m);
    const k = excluded.map((e) => `${e.method} ${e.route}`).join('\u0000');
    const g = groups.get(k) ?? { methods: [], excluded };
    g.methods.push(m);
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => {
    const named = g.methods.filter((m): m is string => m !== null);
    const method = g.methods.includes(null)
      ? atoms.filter((m) => !named.includes(m)).length > 0
        ? [
            methodMatcher(
              atoms.filter((m) => !named.includes(m)),
              true,
            ),
          ]
        : []
      : [methodMatcher(named)];
    return [
      path,
      ...method,
      ...(g.excluded.length > 0
        ? [
            pathMatcher(
              g.excluded.map((e) => e.pathBody),
              true,
            ),
          ]
        : []),
    ];
  });
}

function identityAction(rule: EdgeRule): Record<string, unknown> {
  if (rule.key === 'ip') return { remote_address: {} };
  return { request_headers: { header_name: API_KEY_HEADER, descriptor_key: 'api_key' } };
}

function identityDescriptorKey(rule: EdgeRule): string {
  return rule.key === 'ip' ? 'remote_address' : 'api_key';
}

/** One rate_limits entry per (rule, route); a rule for every route uses a generic key. */
function ruleActions(rule: EdgeRule, stage: number, withIdentity: boolean): Record<string, unknown>[] {
  // a fresh object each time: a shared one would be written as a YAML alias
  const tail = (): Record<string, unknown>[] => (withIdentity ? [identityAction(rule)] : []);
  if (rule.routes.length === 0) {
    return [{ stage, actions: [{ generic_key: { descriptor_key: RULE_DESCRIPTOR_KEY, descriptor_value: rule.id } }, ...tail()] }];
  }
  return rule.routes.flatMap((route) =>
    ownedMatcherSets(route).map((headers) => ({
      stage,
      actions: [
        {
          header_value_match: {
            descriptor_key: RULE_DESCRIPTOR_KEY,
            descriptor_value: rule.id,
            expect_match: true,
            headers,
          },
        },
        ...tail(),
      ],
    })),
  );
}

/** Each edge rule where the design says Envoy counts it (envoyCounter): the local filter or the rate limit service. */
function split(design: Design): { ceiling?: EdgeRule; local: EdgeRule[]; global: EdgeRule[]; unsupported: EdgeRule[] } {
  const rules = edgeRules(design);
  const supported = rules.filter((r) => r.key !== 'unsupported');
  const localRules = supported.filter((r) => envoyCounter(r.rule) === 'local');
  const ceiling = localRules.find((r) => r.routes.length === 0);
  return {
    ...(ceiling ? { ceiling } : {}),
    local: localRules.filter((r) => r !== ceiling),
    global: supported.filter((r) => envoyCounter(r.rule) === 'service'),
    unsupported: rules.filter((r) => r.key === 'unsupported'),
  };
}

function domainOf(design: Design): string {
  return slug(design.scope.projectName);
}

/**
 * The 429s the Envoy file answers: one local reply mapper gives every 429 of either filter its
 * Retry-After, Content-Type and body, so the two differ only in what Envoy adds of its own (the
 * global filter's x-envoy-ratelimited). One per filter that runs, local first. Envoy writes
 * header names in lower case on HTTP/1.1, as shown. envoyFilterConfig writes the mapper and the
 * local filter's response_headers_to_add from these.
 */
export function envoyEdgeRefusals(design: Design): EdgeRefusal[] {
  const { ceiling, local, global } = split(design);
  const localRules = [...(ceiling ? [ceiling] : []), ...local];
  if (localRules.length + global.length === 0) return [];
  const { headers, body } = envoyAnswer(design);
  const order =
    'Envoy sends header names in lower case, and writes the body from the json_format of its local reply mapper with the fields in an order of its own.';
  const wait =
    global.length > 0
      ? 'Retry-After is the longest wait any of them can need: a whole window of the slowest rule the rate limit service counts (its fixed windows reset on the clock, and a key over its count is refused until then), or one emission interval of the slowest local bucket if that is longer.'
      : 'Retry-After is one emission interval of the slowest.';
  const names =
    localRules.length > 0 && global.length > 0
      ? `One local reply mapper answers the 429s of both filters, so the body names every edge rule. ${wait}`
      : `Envoy cannot tell the client which rule refused, so the body names them all. ${wait}`;
  return [
    ...(localRules.length > 0
      ? [
          {
            by: "Envoy's local rate limit filter",
            writtenBy: 'envoy-local-reply' as const,
            ruleIds: localRules.map((r) => r.id),
            headers: headers.map((h) => ({ ...h })),
            body,
            notes: [names, order],
          },
        ]
      : []),
    ...(global.length > 0
      ? [
          {
            by: "Envoy's global rate limit filter (on the rate limit service's verdict)",
            writtenBy: 'envoy-local-reply' as const,
            ruleIds: global.map((r) => r.id),
            headers: [
              ...headers.map((h) => ({ ...h })),
              {
                name: 'x-envoy-ratelimited',
                value: 'true',
                byGateway: 'the global rate limit filter adds it to every refusal (disable_x_envoy_ratelimited_header is not set)',
              },
            ],
            body,
            notes: [names, 'The global filter adds x-envoy-ratelimited: true of its own.', order],
          },
        ]
      : []),
  ];
}

/** What the 429 local reply mapper writes: the headers (Content-Type first) and the body, for every edge rule Envoy counts. */
function envoyAnswer(design: Design): { headers: { name: string; value: string }[]; body: Record<string, unknown> } {
  const { ceiling, local, global } = split(design);
  const all = [...(ceiling ? [ceiling] : []), ...local, ...global];
  // the local filter's buckets refill one token per emission interval; the rate limit service
  // counts fixed windows, and a key over its count stays refused until its window ends
  const retryAfter = Math.max(edgeRetryAfter(all), ...global.map((r) => windowOf(design, r).periodSeconds));
  return {
    headers: [
      { name: 'content-type', value: 'application/problem+json' },
      { name: 'retry-after', value: String(retryAfter) },
    ],
    body: edgeProblemBody(design, all, retryAfter),
  };
}

/** A header the Envoy file writes (not one Envoy adds of its own), as a HeaderValueOption. */
function headerOption(h: { name: string; value: string }): Record<string, unknown> {
  return { append_action: 'OVERWRITE_IF_EXISTS_OR_ADD', header: { key: h.name, value: h.value } };
}

/** The filter-side YAML as data (exported for tests). */
export function envoyFilterConfig(design: Design): Record<string, unknown> {
  const { ceiling, local, global } = split(design);
  const shadow = design.rollout.startsInShadow;
  // every refusal carries the same headers the file writes and the same body (one mapper)
  const answer = envoyAnswer(design);
  const written = answer.headers.filter((h) => h.name !== 'content-type');
  const deny = global.length > 0 && envoyFailureModeDeny(design.scope);
  const filters: Record<string, unknown>[] = [];
  if (ceiling || local.length > 0) {
    const bucket = filterBucket(design, ceiling);
    const baseMs = durationMs(bucket.fill_interval);
    filters.push({
      name: LOCAL_FILTER,
      typed_config: {
        '@type': LOCAL_TYPE,
        stat_prefix: ENVOY_LOCAL_STAT_PREFIX,
        stage: LOCAL_STAGE,
        token_bucket: bucket,
        filter_enabled: { runtime_key: 'ratelimit.edge_local.enabled', default_value: percent(100) },
        // shadow mode: counted (stats *.rate_limited) but not enforced until the runtime key says 100
        filter_enforced: { runtime_key: 'ratelimit.edge_local.enforced', default_value: percent(shadow ? 0 : 100) },
        local_rate_limit_per_downstream_connection: false,
        ...(local.length > 0
          ? {
              descriptors: local.map((r) => ({
                entries: [{ key: RULE_DESCRIPTOR_KEY, value: r.id }],
                token_bucket: localBucket(design, r, baseMs),
              })),
            }
          : {}),
        response_headers_to_add: written.map(headerOption),
      },
    });
  }
  if (global.length > 0) {
    filters.push({
      name: GLOBAL_FILTER,
      typed_config: {
        '@type': GLOBAL_TYPE,
        domain: domainOf(design),
        stage: GLOBAL_STAGE,
        request_type: 'both',
        timeout: '0.02s',
        // fail mode: true refuses requests while the rate limit service is unreachable; one
        // setting for every route, as the design states it
        failure_mode_deny: deny,
        // refused because the service could not be asked: 503 (a store outage), not Envoy's default 500
        ...(deny ? { status_on_error: { code: 'ServiceUnavailable' } } : {}),
        // no headers of Envoy's own: it would append its draft-03 X-RateLimit-* values to the
        // application's (two of each on a call both count), and the document states the edge
        // sends none; the application's middleware sends the design's convention
        enable_x_ratelimit_headers: 'OFF',
        rate_limit_service: {
          grpc_service: { envoy_grpc: { cluster_name: RATE_LIMIT_CLUSTER } },
          transport_api_version: 'V3',
        },
      },
    });
  }
  filters.push({
    name: 'envoy.filters.http.router',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
  });

  const rateLimits = [
    ...local.flatMap((r) => ruleActions(r, LOCAL_STAGE, false)),
    ...global.flatMap((r) => ruleActions(r, GLOBAL_STAGE, true)),
  ];
  const exempt = exemptRoutes(design);
  // A per-route config replaces the filter-wide one on its route. Envoy refuses a per-route
  // local rate limit without a token bucket, so the exempt routes carry one and switch the
  // filter off there (0% enabled: never counted, never refused); the global filter ignores the
  // virtual host's actions on them, so nothing reaches the rate limit service either.
  // (a fresh object per route: a shared one would be written as a YAML alias)
  const exemptPerFilter = (): Record<string, unknown> => ({
    ...(ceiling || local.length > 0
      ? {
          [LOCAL_FILTER]: {
            '@type': LOCAL_TYPE,
            stat_prefix: 'rl_exempt',
            token_bucket: filterBucket(design, ceiling),
            filter_enabled: { runtime_key: 'ratelimit.exempt.enabled', default_value: percent(0) },
            filter_enforced: { runtime_key: 'ratelimit.exempt.enforced', default_value: percent(0) },
          },
        }
      : {}),
    ...(global.length > 0 ? { [GLOBAL_FILTER]: { '@type': GLOBAL_PER_ROUTE_TYPE, vh_rate_limits: 'IGNORE' } } : {}),
  });
  // Envoy takes the first route that matches: a route of another endpoint that owns some of an
  // exempt route's requests (more specific) comes before it, and is counted as usual
  const exemptKeys = new Set(exempt.map((e) => `${e.method} ${e.route}`));
  const owners = exempt
    .flatMap((e) => e.excluding)
    .filter(
      (o, i, all) => !exemptKeys.has(`${o.method} ${o.route}`) && all.findIndex((x) => x.method === o.method && x.route === o.route) === i,
    );
  const routes: Record<string, unknown>[] = [
    ...bySpecificity([...owners, ...exempt]).map((e) => ({
      match: routeMatch(e),
      route: { cluster: APP_CLUSTER },
      ...(exemptKeys.has(`${e.method} ${e.route}`) && Object.keys(exemptPerFilter()).length > 0
        ? { typed_per_filter_config: exemptPerFilter() }
        : {}),
    })),
    { match: { prefix: '/' }, route: { cluster: APP_CLUSTER } },
  ];
  return {
    http_connection_manager: {
      // remote_address (the per-client descriptors' key) is the TCP peer, or the entry the
      // trusted hops in front of Envoy appended; left false, Envoy would take it from an
      // X-Forwarded-For header a client reaching it directly writes itself
      use_remote_address: true,
      xff_num_trusted_hops: 0,
      normalize_path: true,
      merge_slashes: true,
      http_filters: filters,
      local_reply_config: {
        mappers: [
          {
            filter: {
              status_code_filter: { comparison: { op: 'EQ', value: { default_value: 429, runtime_key: 'ratelimit.local_reply.status' } } },
            },
            headers_to_add: written.map(headerOption),
            body_format_override: {
              // every string of a json_format is a format string: a % in it goes as %%
              json_format: envoyJsonFormat(answer.body),
              content_type: answer.headers.find((h) => h.name === 'content-type')?.value,
            },
          },
          // failing closed, the 503 for want of the rate limit service is the response contract's
          // limiter-unavailable 503: its Retry-After and problem+json body, as the middleware sends it
          ...(deny ? [envoyUnavailableMapper(design)] : []),
        ],
      },
      route_config: {
        name: 'api',
        virtual_hosts: [
          {
            name: 'api',
            domains: ['*'],
            ...(rateLimits.length > 0 ? { rate_limits: rateLimits } : {}),
            routes,
          },
        ],
      },
    },
    ...(global.length > 0
      ? {
          clusters: [
            {
              name: RATE_LIMIT_CLUSTER,
              type: 'STRICT_DNS',
              connect_timeout: '0.25s',
              typed_extension_protocol_options: {
                'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
                  '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
                  explicit_http_config: { http2_protocol_options: {} },
                },
              },
              load_assignment: {
                cluster_name: RATE_LIMIT_CLUSTER,
                endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'ratelimit', port_value: 8081 } } } }] }],
              },
            },
          ],
        }
      : {}),
  };
}

/**
 * The local reply mapper for the 503 the global filter answers while the rate limit service is
 * unreachable (matched by its response flag, so no other 503 of Envoy's changes): Retry-After
 * and the body of the design's limiter-unavailable 503.
 */
function envoyUnavailableMapper(design: Design): Record<string, unknown> {
  const seconds = design.contract.storeUnavailable.retryAfterSeconds;
  return {
    filter: { response_flag_filter: { flags: [RLS_ERROR_FLAG] } },
    headers_to_add: [{ append_action: 'OVERWRITE_IF_EXISTS_OR_ADD', header: { key: 'retry-after', value: String(seconds) } }],
    body_format_override: {
      json_format: envoyJsonFormat(unavailableFields(design.contract.docsUrl, seconds)),
      content_type: 'application/problem+json',
    },
  };
}

/** The envoyproxy/ratelimit service config as data. */
function ratelimitServiceConfig(design: Design): Record<string, unknown> {
  const { global } = split(design);
  const shadow = design.rollout.startsInShadow;
  return {
    domain: domainOf(design),
    descriptors: global.map((r) => {
      return {
        key: RULE_DESCRIPTOR_KEY,
        value: r.id,
        descriptors: [
          {
            key: identityDescriptorKey(r),
            rate_limit: serviceLimit(design, r),
            ...(shadow ? { shadow_mode: true } : {}),
          },
        ],
      };
    }),
  };
}

/**
 * What a rule the rate limit service counts does while the service is unreachable: the global
 * filter's one failure_mode_deny setting decides for every such rule.
 */
export function envoyServiceFailText(deny: boolean): string {
  return deny
    ? 'fail closed: while the rate limit service is unreachable, Envoy refuses its requests with 503 (failure_mode_deny true)'
    : 'fail open: while the rate limit service is unreachable, Envoy lets its requests through uncounted (failure_mode_deny false)';
}

function filterHeader(design: Design): string[] {
  const { ceiling, local, global, unsupported } = split(design);
  const lines = [
    `Generated by rl-design ${TOOL_VERSION} for ${design.scope.projectName}: edge rate limits for Envoy.`,
    'Regenerate from the answers file rather than editing by hand.',
    // source/common/formatter/substitution_formatter.cc: number values in a json_format came with
    // toFormatNumberValue (envoyproxy/envoy#22396, released in 1.24); before it Envoy refused them
    'Needs Envoy 1.24 or later: the local reply body (json_format) holds numbers (status, retryAfterSeconds),',
    'which earlier releases refuse.',
    '',
    'Merge into your listener: http_connection_manager.http_filters (before the router, in this order),',
    'local_reply_config, and the virtual host rate_limits plus the exempt routes; add the clusters',
    `(the rate limit service at ratelimit:8081, gRPC) and point "${APP_CLUSTER}" at your application cluster.`,
    '',
  ];
  // each rule's line states its fail mode as the document's fail-mode section does: a local
  // bucket has no store to fail; the rate limit service's rules fail as failure_mode_deny says
  const local_ = (r: EdgeRule) => failStatement(r, 'each Envoy node counts it in its local rate limit filter');
  if (ceiling) {
    const w = windowOf(design, ceiling);
    lines.push(
      `${ceiling.id}: ${rateText(w)}${w.burst ? `, burst ${w.burst}` : ''}, the local token bucket of EACH Envoy instance; ${local_(ceiling)}.`,
      `  ${perNodeNote(design, ceiling)}`,
    );
  }
  for (const r of local) {
    const w = windowOf(design, r);
    lines.push(`${r.id}: local descriptor (per Envoy instance), ${rateText(w)}${w.burst ? `, burst ${w.burst}` : ''}; ${local_(r)}.`);
  }
  for (const r of global) {
    const l = serviceLimit(design, r);
    lines.push(
      `${r.id}: ${envoyServiceFailText(envoyFailureModeDeny(design.scope))}.`,
      ...(envoyFailureModeDeny(design.scope) && !(design.scope.envoyDenyRules ?? []).includes(r.id)
        ? [
            `  The answers ask it to fail open; failure_mode_deny is one setting for every rule the service counts, true because ${(design.scope.envoyDenyRules ?? []).join(', ')} asked to fail closed.`,
          ]
        : []),
      `  Counted by the rate limit service across all instances, keyed on ${r.key === 'ip' ? 'the client IP (remote_address)' : `the ${API_KEY_HEADER} header`}:`,
      `  ${l.requests_per_unit} per ${l.unit}, fixed window, no burst (the service has none).`,
    );
  }
  for (const r of unsupported)
    lines.push(`${r.id}: keyed on ${r.identity ?? 'an unstated identity'}, which Envoy cannot see: enforce it in the middleware.`);
  lines.push(
    '',
    'Client IP: use_remote_address true makes remote_address the TCP peer of Envoy. Behind proxies of your own',
    `that append X-Forwarded-For in front of Envoy${design.enforcement.clientIp.trustedProxies.length > 0 ? ` (those of the trusted ranges ${design.enforcement.clientIp.trustedProxies.join(', ')} that sit before Envoy)` : ''}, set xff_num_trusted_hops to their number of hops;`,
    'never turn use_remote_address off: Envoy would then read the address from an X-Forwarded-For a client writes.',
    'Exempt endpoints keep their own routes, placed before the catch-all and matched on their methods (GET also HEAD)',
    'and their path in any letter case, as the middleware matches them: a per-route config switches the local filter',
    "off there (it carries a token bucket because Envoy requires one) and the global filter ignores the virtual host's",
    'actions, so health probes are never counted or refused; another method on their path is counted as usual.',
    'Shadow mode: filter_enforced at 0% counts without refusing (rollout step 1); raise the runtime key',
    'ratelimit.edge_local.enforced to 100 to enforce. Every 429 carries Retry-After and a problem+json body.',
  );
  if (global.length > 0 && envoyFailureModeDeny(design.scope))
    lines.push(
      `While the rate limit service is unreachable (failure_mode_deny true), the refusal is ${envoyUnavailableReply(design.contract.storeUnavailable.retryAfterSeconds)}: the second local reply mapper.`,
    );
  const switches = [ceiling, ...local, ...global].filter((r): r is EdgeRule => r !== undefined && killSwitchNote(design, r) !== undefined);
  if (switches.length > 0) {
    lines.push('', 'Kill switches (Envoy has no per-descriptor runtime flag; filter_enabled switches the whole local filter):');
    for (const r of switches) lines.push(`  ${r.id} (${killSwitchNote(design, r)}).`);
  }
  if (design.contract.convention !== 'x-ratelimit') {
    lines.push(
      design.rules.some((r) => r.layer !== 'edge')
        ? 'Rate-limit headers stay off here: the application emits the one documented convention.'
        : 'Rate-limit headers stay off: no rule in this design sends them, and every 429 carries Retry-After.',
    );
  }
  return lines;
}

export function generateEnvoy(design: Design): CodeFile[] {
  const { global } = split(design);
  const files: CodeFile[] = [
    {
      path: ENVOY_FILTER_PATH,
      language: 'yaml',
      content: toYaml(envoyFilterConfig(design), filterHeader(design)),
      description:
        'Envoy local rate limit filter, global rate limit filter, local replies for its 429 and fail-closed 503, and route rate_limits to merge into the listener',
    },
  ];
  if (global.length > 0) {
    files.push({
      path: ENVOY_SERVICE_PATH,
      language: 'yaml',
      content: toYaml(ratelimitServiceConfig(design), [
        `Generated by rl-design ${TOOL_VERSION} for ${design.scope.projectName}: envoyproxy/ratelimit descriptors.`,
        'Load it as the service config (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/); it pairs with the',
        `rate_limits actions in ${ENVOY_FILTER_PATH.replace('gateway/', '')}. Back the service with a dedicated Redis (noeviction).`,
        ...(design.rollout.startsInShadow
          ? ['shadow_mode: counted and reported, never refused (rollout step 1); remove it to enforce.']
          : []),
      ]),
      description: 'envoyproxy/ratelimit service descriptor config for the per-client edge limits',
    });
  }
  return files;
}

const RETRY_AFTER_VALUE = /^[1-9]\d*$/;

function hasRetryAfter(headers: unknown): boolean {
  return (
    Array.isArray(headers) &&
    headers.some((h) => String(h?.header?.key).toLowerCase() === 'retry-after' && RETRY_AFTER_VALUE.test(String(h?.header?.value)))
  );
}

/**
 * Each rate limit filter in the Envoy file answers 429 through a local reply; it carries
 * Retry-After when the local reply mapper for status 429 adds it, or the filter's own
 * response_headers_to_add does. One finding per filter without it.
 */
export function envoyRetryAfterFindings(files: CodeFile[]): RetryAfterFinding[] {
  const out: RetryAfterFinding[] = [];
  for (const f of files.filter((x) => x.path === ENVOY_FILTER_PATH)) {
    let doc: any;
    try {
      doc = parseYaml(f.content);
    } catch {
      out.push({ file: f.path, layer: 'envoy', missing: 'a readable YAML file' });
      continue;
    }
    const hcm = doc?.http_connection_manager;
    const mapperAdds = ((hcm?.local_reply_config?.mappers as any[]) ?? []).some((m) => {
      const cmp = m?.filter?.status_code_filter?.comparison;
      return (cmp?.op ?? 'EQ') === 'EQ' && Number(cmp?.value?.default_value) === 429 && hasRetryAfter(m?.headers_to_add);
    });
    for (const filter of (hcm?.http_filters as any[]) ?? []) {
      if (filter?.name !== LOCAL_FILTER && filter?.name !== GLOBAL_FILTER) continue;
      if (mapperAdds || hasRetryAfter(filter?.typed_config?.response_headers_to_add)) continue;
      out.push({
        file: f.path,
        layer: `envoy ${filter.name}`,
        missing: 'Retry-After on its 429 (local reply mapper or response_headers_to_add)',
      });
    }
  }
  return out;
}

/**
 * A checker for the Envoy configuration rl-design writes, written from Envoy's v3 API
 * definitions (the .proto files of the envoy/ API tree: field names, types, enums and their
 * validate rules) for the messages the generated files use, plus the rules Envoy applies
 * when it loads a config that the definitions do not state (the local rate limit filter's
 * token bucket checks, per-route config types, cluster references).
 *
 * Like Envoy's own loader it refuses unknown fields, values of the wrong type, enum names that
 * do not exist, missing required fields and oneofs, and out-of-range numbers. Messages not
 * listed here are refused as unknown, so a new field or message in the generator needs its
 * definition added here first.
 */

type Scalar = 'string' | 'bool' | 'uint32' | 'duration' | 'BoolValue' | 'UInt32Value' | 'Any' | 'Struct' | 'Empty';

interface Field {
  /** A scalar, an enum (list of names) or a message name. */
  t: Scalar | readonly string[] | `.${string}`;
  rep?: boolean;
  map?: boolean;
  req?: boolean;
  minLen?: number;
  lte?: number;
  gte?: number;
  lt?: number;
  gt?: number;
  minItems?: number;
  maxItems?: number;
  oneof?: string;
  in?: readonly string[];
}

interface Message {
  fields: Record<string, Field>;
  /** Oneof groups that must have exactly one member set. */
  requiredOneofs?: string[];
}

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;

const M: Record<string, Message> = {
  // envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
  HttpConnectionManager: {
    fields: {
      codec_type: { t: ['AUTO', 'HTTP1', 'HTTP2', 'HTTP3'] },
      stat_prefix: { t: 'string', minLen: 1 },
      rds: { t: '.Unsupported', oneof: 'route_specifier' },
      route_config: { t: '.RouteConfiguration', oneof: 'route_specifier' },
      http_filters: { t: '.HttpFilter', rep: true },
      use_remote_address: { t: 'BoolValue' },
      xff_num_trusted_hops: { t: 'uint32' },
      normalize_path: { t: 'BoolValue' },
      merge_slashes: { t: 'bool' },
      local_reply_config: { t: '.LocalReplyConfig' },
    },
    requiredOneofs: ['route_specifier'],
  },
  HttpFilter: {
    fields: {
      name: { t: 'string', minLen: 1 },
      typed_config: { t: 'Any', oneof: 'config_type' },
      is_optional: { t: 'bool' },
      disabled: { t: 'bool' },
    },
  },
  LocalReplyConfig: { fields: { mappers: { t: '.ResponseMapper', rep: true } } },
  ResponseMapper: {
    fields: {
      filter: { t: '.AccessLogFilter', req: true },
      status_code: { t: 'UInt32Value', gte: 200, lt: 600 },
      body_format_override: { t: '.SubstitutionFormatString' },
      headers_to_add: { t: '.HeaderValueOption', rep: true, maxItems: 1000 },
    },
  },
  // envoy/config/accesslog/v3/accesslog.proto
  AccessLogFilter: {
    fields: {
      status_code_filter: { t: '.StatusCodeFilter', oneof: 'filter_specifier' },
      response_flag_filter: { t: '.ResponseFlagFilter', oneof: 'filter_specifier' },
    },
    requiredOneofs: ['filter_specifier'],
  },
  // flags: the short names its validate rule allows (RLSE: RateLimitServiceError)
  ResponseFlagFilter: {
    fields: {
      flags: {
        t: 'string',
        rep: true,
        in: [
          'LH',
          'UH',
          'UT',
          'LR',
          'UR',
          'UF',
          'UC',
          'UO',
          'NR',
          'DI',
          'FI',
          'RL',
          'UAEX',
          'RLSE',
          'DC',
          'URX',
          'SI',
          'IH',
          'DPE',
          'UMSDR',
          'RFCF',
          'NFCF',
          'DT',
          'UPE',
          'NC',
          'OM',
          'DF',
          'DO',
          'DR',
          'UDO',
        ],
      },
    },
  },
  StatusCodeFilter: { fields: { comparison: { t: '.ComparisonFilter', req: true } } },
  ComparisonFilter: { fields: { op: { t: ['EQ', 'GE', 'LE', 'NE'] }, value: { t: '.RuntimeUInt32', req: true } } },
  // envoy/config/core/v3/base.proto
  RuntimeUInt32: { fields: { default_value: { t: 'uint32' }, runtime_key: { t: 'string' } } },
  RuntimeFractionalPercent: { fields: { default_value: { t: '.FractionalPercent', req: true }, runtime_key: { t: 'string' } } },
  HeaderValueOption: {
    fields: {
      header: { t: '.HeaderValue', req: true },
      append_action: { t: ['APPEND_IF_EXISTS_OR_ADD', 'ADD_IF_ABSENT', 'OVERWRITE_IF_EXISTS_OR_ADD', 'OVERWRITE_IF_EXISTS'] },
      keep_empty_value: { t: 'bool' },
    },
  },
  HeaderValue: { fields: { key: { t: 'string', minLen: 1 }, value: { t: 'string' } } },
  // envoy/type/v3/percent.proto
  FractionalPercent: { fields: { numerator: { t: 'uint32' }, denominator: { t: ['HUNDRED', 'TEN_THOUSAND', 'MILLION'] } } },
  // envoy/config/core/v3/substitution_format_string.proto
  SubstitutionFormatString: {
    fields: {
      json_format: { t: 'Struct', oneof: 'format' },
      omit_empty_values: { t: 'bool' },
      content_type: { t: 'string' },
    },
    requiredOneofs: ['format'],
  },
  // envoy/config/route/v3/route.proto and route_components.proto
  RouteConfiguration: { fields: { name: { t: 'string' }, virtual_hosts: { t: '.VirtualHost', rep: true } } },
  VirtualHost: {
    fields: {
      name: { t: 'string', minLen: 1 },
      domains: { t: 'string', rep: true, minItems: 1 },
      routes: { t: '.Route', rep: true },
      rate_limits: { t: '.RateLimit', rep: true },
      typed_per_filter_config: { t: 'Any', map: true },
    },
  },
  Route: {
    fields: {
      name: { t: 'string' },
      match: { t: '.RouteMatch', req: true },
      route: { t: '.RouteAction', oneof: 'action' },
      typed_per_filter_config: { t: 'Any', map: true },
    },
    requiredOneofs: ['action'],
  },
  RouteMatch: {
    fields: {
      prefix: { t: 'string', oneof: 'path_specifier' },
      path: { t: 'string', oneof: 'path_specifier' },
      safe_regex: { t: '.RegexMatcher', oneof: 'path_specifier' },
      case_sensitive: { t: 'BoolValue' },
      headers: { t: '.HeaderMatcher', rep: true },
    },
    requiredOneofs: ['path_specifier'],
  },
  RouteAction: {
    fields: {
      cluster: { t: 'string', minLen: 1, oneof: 'cluster_specifier' },
      rate_limits: { t: '.RateLimit', rep: true },
      include_vh_rate_limits: { t: 'BoolValue' },
    },
    requiredOneofs: ['cluster_specifier'],
  },
  RateLimit: {
    fields: {
      stage: { t: 'UInt32Value', lte: 10 },
      disable_key: { t: 'string' },
      actions: { t: '.RateLimitAction', rep: true, minItems: 1 },
    },
  },
  RateLimitAction: {
    fields: {
      request_headers: { t: '.RequestHeadersAction', oneof: 'action_specifier' },
      remote_address: { t: 'Empty', oneof: 'action_specifier' },
      generic_key: { t: '.GenericKeyAction', oneof: 'action_specifier' },
      header_value_match: { t: '.HeaderValueMatchAction', oneof: 'action_specifier' },
    },
    requiredOneofs: ['action_specifier'],
  },
  RequestHeadersAction: {
    fields: { header_name: { t: 'string', minLen: 1 }, descriptor_key: { t: 'string', minLen: 1 }, skip_if_absent: { t: 'bool' } },
  },
  GenericKeyAction: {
    fields: { descriptor_value: { t: 'string', minLen: 1 }, default_value: { t: 'string' }, descriptor_key: { t: 'string' } },
  },
  HeaderValueMatchAction: {
    fields: {
      descriptor_value: { t: 'string', minLen: 1 },
      default_value: { t: 'string' },
      descriptor_key: { t: 'string' },
      expect_match: { t: 'BoolValue' },
      headers: { t: '.HeaderMatcher', rep: true, minItems: 1 },
    },
  },
  HeaderMatcher: {
    fields: {
      name: { t: 'string', minLen: 1 },
      exact_match: { t: 'string', oneof: 'header_match_specifier' },
      present_match: { t: 'bool', oneof: 'header_match_specifier' },
      string_match: { t: '.StringMatcher', oneof: 'header_match_specifier' },
      invert_match: { t: 'bool' },
      treat_missing_header_as_empty: { t: 'bool' },
    },
  },
  // envoy/type/matcher/v3/string.proto, regex.proto
  StringMatcher: {
    fields: {
      exact: { t: 'string', oneof: 'match_pattern' },
      prefix: { t: 'string', minLen: 1, oneof: 'match_pattern' },
      suffix: { t: 'string', minLen: 1, oneof: 'match_pattern' },
      safe_regex: { t: '.RegexMatcher', oneof: 'match_pattern' },
      contains: { t: 'string', minLen: 1, oneof: 'match_pattern' },
      ignore_case: { t: 'bool' },
    },
    requiredOneofs: ['match_pattern'],
  },
  RegexMatcher: { fields: { regex: { t: 'string', minLen: 1 } } },
  // envoy/type/v3/token_bucket.proto
  TokenBucket: {
    fields: {
      max_tokens: { t: 'uint32', gt: 0 },
      tokens_per_fill: { t: 'UInt32Value', gt: 0 },
      fill_interval: { t: 'duration', req: true, gt: 0 },
    },
  },
  // envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto
  LocalRateLimit: {
    fields: {
      stat_prefix: { t: 'string', minLen: 1 },
      token_bucket: { t: '.TokenBucket' },
      filter_enabled: { t: '.RuntimeFractionalPercent' },
      filter_enforced: { t: '.RuntimeFractionalPercent' },
      request_headers_to_add_when_not_enforced: { t: '.HeaderValueOption', rep: true, maxItems: 10 },
      response_headers_to_add: { t: '.HeaderValueOption', rep: true, maxItems: 10 },
      descriptors: { t: '.LocalRateLimitDescriptor', rep: true },
      stage: { t: 'uint32', lte: 10 },
      local_rate_limit_per_downstream_connection: { t: 'bool' },
      enable_x_ratelimit_headers: { t: ['OFF', 'DRAFT_VERSION_03'] },
      vh_rate_limits: { t: ['OVERRIDE', 'INCLUDE', 'IGNORE'] },
      always_consume_default_token_bucket: { t: 'BoolValue' },
    },
  },
  // envoy/extensions/common/ratelimit/v3/ratelimit.proto
  LocalRateLimitDescriptor: {
    fields: {
      entries: { t: '.DescriptorEntry', rep: true, minItems: 1 },
      token_bucket: { t: '.TokenBucket', req: true },
      shadow_mode: { t: 'bool' },
    },
  },
  // envoy/type/v3/http_status.proto (code: the StatusCode enum's names)
  HttpStatus: { fields: { code: { t: ['TooManyRequests', 'InternalServerError', 'ServiceUnavailable'], req: true } } },
  DescriptorEntry: { fields: { key: { t: 'string', minLen: 1 }, value: { t: 'string' } } },
  // envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto
  RateLimitFilter: {
    fields: {
      domain: { t: 'string', minLen: 1 },
      stage: { t: 'uint32', lte: 10 },
      request_type: { t: 'string', in: ['internal', 'external', 'both', ''] },
      timeout: { t: 'duration' },
      failure_mode_deny: { t: 'bool' },
      status_on_error: { t: '.HttpStatus' },
      rate_limited_as_resource_exhausted: { t: 'bool' },
      rate_limit_service: { t: '.RateLimitServiceConfig', req: true },
      enable_x_ratelimit_headers: { t: ['OFF', 'DRAFT_VERSION_03'] },
      disable_x_envoy_ratelimited_header: { t: 'bool' },
      response_headers_to_add: { t: '.HeaderValueOption', rep: true, maxItems: 10 },
      stat_prefix: { t: 'string' },
    },
  },
  RateLimitPerRoute: {
    fields: {
      vh_rate_limits: { t: ['OVERRIDE', 'INCLUDE', 'IGNORE'] },
      override_option: { t: ['DEFAULT', 'OVERRIDE_POLICY', 'INCLUDE_POLICY', 'IGNORE_POLICY'] },
      rate_limits: { t: '.RateLimit', rep: true },
      domain: { t: 'string' },
    },
  },
  // envoy/config/ratelimit/v3/rls.proto, envoy/config/core/v3/grpc_service.proto
  RateLimitServiceConfig: {
    fields: { grpc_service: { t: '.GrpcService', req: true }, transport_api_version: { t: ['AUTO', 'V2', 'V3'] } },
  },
  GrpcService: {
    fields: { envoy_grpc: { t: '.EnvoyGrpc', oneof: 'target_specifier' }, timeout: { t: 'duration' } },
    requiredOneofs: ['target_specifier'],
  },
  EnvoyGrpc: { fields: { cluster_name: { t: 'string', minLen: 1 }, authority: { t: 'string' } } },
  Router: { fields: {} },
  // envoy/config/cluster/v3/cluster.proto, endpoint.proto, address.proto
  Cluster: {
    fields: {
      name: { t: 'string', minLen: 1 },
      type: { t: ['STATIC', 'STRICT_DNS', 'LOGICAL_DNS', 'EDS', 'ORIGINAL_DST'], oneof: 'cluster_discovery_type' },
      connect_timeout: { t: 'duration', gt: 0 },
      typed_extension_protocol_options: { t: 'Any', map: true },
      load_assignment: { t: '.ClusterLoadAssignment' },
    },
  },
  HttpProtocolOptions: { fields: { explicit_http_config: { t: '.ExplicitHttpConfig', oneof: 'upstream_protocol_options' } } },
  ExplicitHttpConfig: {
    fields: {
      http_protocol_options: { t: 'Empty', oneof: 'protocol_config' },
      http2_protocol_options: { t: 'Empty', oneof: 'protocol_config' },
    },
    requiredOneofs: ['protocol_config'],
  },
  ClusterLoadAssignment: { fields: { cluster_name: { t: 'string', minLen: 1 }, endpoints: { t: '.LocalityLbEndpoints', rep: true } } },
  LocalityLbEndpoints: { fields: { lb_endpoints: { t: '.LbEndpoint', rep: true } } },
  LbEndpoint: { fields: { endpoint: { t: '.Endpoint', oneof: 'host_identifier' } } },
  Endpoint: { fields: { address: { t: '.Address' } } },
  Address: { fields: { socket_address: { t: '.SocketAddress', oneof: 'address' } }, requiredOneofs: ['address'] },
  SocketAddress: {
    fields: {
      address: { t: 'string', minLen: 1 },
      port_value: { t: 'uint32', lte: 65535, oneof: 'port_specifier' },
      protocol: { t: ['TCP', 'UDP'] },
    },
  },
};

/** The messages an `@type` may name, with the HTTP filter each is the config of. */
export const TYPE_URLS: Record<string, string> = {
  'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit': 'LocalRateLimit',
  'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit': 'RateLimitFilter',
  'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute': 'RateLimitPerRoute',
  'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router': 'Router',
  'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions': 'HttpProtocolOptions',
};

/** Filter name -> [filter config message, per-route config message] (what Envoy accepts for each). */
const FILTERS: Record<string, [string, string | null]> = {
  'envoy.filters.http.local_ratelimit': ['LocalRateLimit', 'LocalRateLimit'],
  'envoy.filters.http.ratelimit': ['RateLimitFilter', 'RateLimitPerRoute'],
  'envoy.filters.http.router': ['Router', null],
};

const DURATION = /^-?\d+(\.\d{1,9})?s$/;

/** Milliseconds of a JSON-form Duration ("0.05s"). */
export function ms(d: string): number {
  return Math.round(Number(d.slice(0, -1)) * 1000);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkNumber(path: string, v: number, f: Field, errors: string[]): void {
  if (f.gt !== undefined && !(v > f.gt)) errors.push(`${path}: must be > ${f.gt}, is ${v}`);
  if (f.gte !== undefined && !(v >= f.gte)) errors.push(`${path}: must be >= ${f.gte}, is ${v}`);
  if (f.lt !== undefined && !(v < f.lt)) errors.push(`${path}: must be < ${f.lt}, is ${v}`);
  if (f.lte !== undefined && !(v <= f.lte)) errors.push(`${path}: must be <= ${f.lte}, is ${v}`);
}

function checkValue(path: string, v: unknown, f: Field, errors: string[]): void {
  const t = f.t;
  if (Array.isArray(t)) {
    if (typeof v !== 'string' || !t.includes(v)) errors.push(`${path}: enum value ${JSON.stringify(v)} is not one of ${t.join(', ')}`);
    return;
  }
  switch (t) {
    case 'string':
      if (typeof v !== 'string') return void errors.push(`${path}: expected a string`);
      if (f.minLen !== undefined && v.length < f.minLen) errors.push(`${path}: shorter than ${f.minLen}`);
      if (f.in && !f.in.includes(v)) errors.push(`${path}: ${JSON.stringify(v)} is not one of ${f.in.join(', ')}`);
      if (path.endsWith('.key') || path.endsWith('.header_name') || /\.headers\[\d+\]\.name$/.test(path)) {
        if (!HEADER_NAME.test(v)) errors.push(`${path}: not a valid header name`);
      }
      return;
    case 'bool':
    case 'BoolValue':
      if (typeof v !== 'boolean') errors.push(`${path}: expected a boolean`);
      return;
    case 'uint32':
    case 'UInt32Value':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
        return void errors.push(`${path}: expected a uint32, got ${JSON.stringify(v)}`);
      checkNumber(path, v, f, errors);
      return;
    case 'duration':
      if (typeof v !== 'string' || !DURATION.test(v)) return void errors.push(`${path}: expected a duration like "0.05s"`);
      checkNumber(path, ms(v), f, errors);
      return;
    case 'Struct':
      if (!isObj(v)) errors.push(`${path}: expected an object (google.protobuf.Struct)`);
      return;
    case 'Empty':
      if (!isObj(v) || Object.keys(v).length > 0) errors.push(`${path}: expected an empty object`);
      return;
    case 'Any': {
      if (!isObj(v) || typeof v['@type'] !== 'string') return void errors.push(`${path}: an Any needs "@type"`);
      const name = TYPE_URLS[v['@type']];
      if (!name) return void errors.push(`${path}: unknown @type ${v['@type']}`);
      const { '@type': _t, ...rest } = v;
      checkMessage(path, rest, name, errors);
      return;
    }
    default:
      checkMessage(path, v, (t as string).slice(1), errors);
  }
}

function checkMessage(path: string, v: unknown, name: string, errors: string[]): void {
  const m = M[name];
  if (!m) return void errors.push(`${path}: message ${name} is not supported by this checker`);
  if (!isObj(v)) return void errors.push(`${path}: expected a ${name} object`);
  const oneofs = new Map<string, string[]>();
  for (const [k, val] of Object.entries(v)) {
    const f = m.fields[k];
    if (!f) {
      errors.push(`${path}: unknown field "${k}" in ${name}`);
      continue;
    }
    if (f.oneof) oneofs.set(f.oneof, [...(oneofs.get(f.oneof) ?? []), k]);
    const at = `${path}.${k}`;
    if (f.rep) {
      if (!Array.isArray(val)) {
        errors.push(`${at}: expected a list`);
        continue;
      }
      if (f.minItems !== undefined && val.length < f.minItems) errors.push(`${at}: needs at least ${f.minItems} item(s)`);
      if (f.maxItems !== undefined && val.length > f.maxItems) errors.push(`${at}: at most ${f.maxItems} item(s)`);
      val.forEach((item, i) => checkValue(`${at}[${i}]`, item, f, errors));
    } else if (f.map) {
      if (!isObj(val)) {
        errors.push(`${at}: expected a map`);
        continue;
      }
      for (const [mk, mv] of Object.entries(val)) checkValue(`${at}.${mk}`, mv, f, errors);
    } else {
      checkValue(at, val, f, errors);
    }
  }
  for (const [k, f] of Object.entries(m.fields)) {
    if (f.req && !(k in v)) errors.push(`${path}: required field "${k}" missing in ${name}`);
    if (f.rep && f.minItems && !(k in v) && name !== 'VirtualHost') errors.push(`${path}: "${k}" needs at least ${f.minItems} item(s)`);
  }
  if (name === 'VirtualHost' && !('domains' in v)) errors.push(`${path}: "domains" needs at least 1 item`);
  for (const [group, members] of oneofs)
    if (members.length > 1) errors.push(`${path}: oneof ${group} set more than once (${members.join(', ')})`);
  for (const group of m.requiredOneofs ?? []) if (!oneofs.has(group)) errors.push(`${path}: one of ${group} is required in ${name}`);
}

function bucketOf(v: unknown): { max: number; perFill: number; fillMs: number } | null {
  if (!isObj(v)) return null;
  return { max: Number(v.max_tokens), perFill: Number(v.tokens_per_fill ?? 1), fillMs: ms(String(v.fill_interval)) };
}

function localFilterRules(path: string, cfg: Record<string, unknown>, perRoute: boolean, errors: string[]): void {
  const bucket = bucketOf(cfg.token_bucket);
  if (perRoute && !bucket) errors.push(`${path}: local rate limit token bucket must be set for per filter configs`);
  if (bucket) {
    if (bucket.fillMs < 50) errors.push(`${path}.token_bucket: local rate limit token bucket fill timer must be >= 50ms`);
    if (bucket.max < bucket.perFill)
      errors.push(
        `${path}.token_bucket: max_tokens ${bucket.max} < tokens_per_fill ${bucket.perFill}: the bucket caps the refill and the rate`,
      );
  }
  const seen = new Set<string>();
  ((cfg.descriptors as unknown[]) ?? []).forEach((d, i) => {
    if (!isObj(d)) return;
    const key = JSON.stringify(d.entries);
    if (seen.has(key)) errors.push(`${path}.descriptors[${i}]: duplicate descriptor in the local rate descriptor`);
    seen.add(key);
    const b = bucketOf(d.token_bucket);
    if (!b) return;
    const base = bucket?.fillMs ?? 0;
    if (base > 0 && b.fillMs % base !== 0) {
      errors.push(
        `${path}.descriptors[${i}]: local rate descriptor limit is not a multiple of token bucket fill timer (${b.fillMs} ms vs ${base} ms)`,
      );
    }
    if (b.max < b.perFill) errors.push(`${path}.descriptors[${i}].token_bucket: max_tokens < tokens_per_fill`);
  });
}

/**
 * Check the generated filter file: `http_connection_manager` (as merged into a listener, so
 * stat_prefix is the listener's own and may be absent here) and `clusters`.
 * `appClusters` are clusters the user supplies (the application's). Returns every problem.
 */
export function checkEnvoyFilterFile(doc: unknown, appClusters: string[] = ['app']): string[] {
  const errors: string[] = [];
  if (!isObj(doc)) return ['file: expected a mapping'];
  const { http_connection_manager: hcm, clusters, ...rest } = doc;
  for (const k of Object.keys(rest)) errors.push(`file: unexpected top-level key "${k}"`);
  checkMessage('http_connection_manager', { stat_prefix: 'ingress_http', ...(hcm as object) }, 'HttpConnectionManager', errors);
  ((clusters as unknown[]) ?? []).forEach((c, i) => checkMessage(`clusters[${i}]`, c, 'Cluster', errors));
  if (!isObj(hcm)) return errors;

  // load-time rules the definitions do not state
  const filters = (hcm.http_filters as Record<string, unknown>[]) ?? [];
  const names = filters.map((f) => String(f.name));
  if (names.at(-1) !== 'envoy.filters.http.router') errors.push('http_filters: the router must be the last filter');
  if (new Set(names).size !== names.length) errors.push('http_filters: duplicate filter names');
  const clusterNames = new Set([...appClusters, ...((clusters as Record<string, unknown>[]) ?? []).map((c) => String(c.name))]);
  const stages = new Map<number, string>();
  filters.forEach((f, i) => {
    const cfg = f.typed_config as Record<string, unknown> | undefined;
    const name = String(f.name);
    const expected = FILTERS[name];
    if (!expected) return void errors.push(`http_filters[${i}]: filter ${name} is not one this checker knows`);
    if (!cfg || TYPE_URLS[String(cfg['@type'])] !== expected[0])
      errors.push(`http_filters[${i}]: ${name} needs a ${expected[0]} typed_config`);
    if (!cfg) return;
    if (name === 'envoy.filters.http.local_ratelimit') localFilterRules(`http_filters[${i}].typed_config`, cfg, false, errors);
    if (name === 'envoy.filters.http.ratelimit') {
      const cluster = (cfg.rate_limit_service as any)?.grpc_service?.envoy_grpc?.cluster_name;
      if (!clusterNames.has(cluster)) errors.push(`http_filters[${i}]: rate limit service cluster "${cluster}" is not defined`);
    }
    if (name !== 'envoy.filters.http.router') {
      const stage = Number(cfg.stage ?? 0);
      if (stages.has(stage))
        errors.push(`http_filters[${i}]: stage ${stage} is also used by ${stages.get(stage)}: their descriptors would mix`);
      stages.set(stage, name);
    }
  });
  const vhosts = ((hcm.route_config as any)?.virtual_hosts as Record<string, unknown>[]) ?? [];
  vhosts.forEach((vh, v) => {
    for (const [rl, r] of ((vh.rate_limits as Record<string, unknown>[]) ?? []).entries()) {
      if (!stages.has(Number(r.stage ?? 0)))
        errors.push(`virtual_hosts[${v}].rate_limits[${rl}]: stage ${r.stage ?? 0} matches no rate limit filter`);
    }
    ((vh.routes as Record<string, unknown>[]) ?? []).forEach((route, r) => {
      const at = `virtual_hosts[${v}].routes[${r}]`;
      const cluster = (route.route as any)?.cluster;
      if (cluster !== undefined && !clusterNames.has(cluster)) errors.push(`${at}: cluster "${cluster}" is not defined`);
      for (const [filter, cfg] of Object.entries((route.typed_per_filter_config as Record<string, Record<string, unknown>>) ?? {})) {
        const expected = FILTERS[filter];
        if (!names.includes(filter)) errors.push(`${at}.typed_per_filter_config: ${filter} is not in http_filters`);
        if (!expected?.[1]) {
          errors.push(`${at}.typed_per_filter_config: ${filter} takes no per-route config`);
          continue;
        }
        if (TYPE_URLS[String(cfg['@type'])] !== expected[1])
          errors.push(`${at}.typed_per_filter_config.${filter}: needs @type ${expected[1]}`);
        if (filter === 'envoy.filters.http.local_ratelimit') localFilterRules(`${at}.typed_per_filter_config.${filter}`, cfg, true, errors);
      }
    });
  });
  return errors;
}

const SERVICE_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'];

/**
 * envoyproxy/ratelimit's service config (it refuses unknown keys): domain, and descriptors of
 * key, value, rate_limit {unit, requests_per_unit, unlimited, name}, shadow_mode, descriptors.
 */
export function checkRatelimitServiceFile(doc: unknown): string[] {
  const errors: string[] = [];
  if (!isObj(doc)) return ['file: expected a mapping'];
  for (const k of Object.keys(doc)) if (!['domain', 'descriptors'].includes(k)) errors.push(`file: unknown key "${k}"`);
  if (typeof doc.domain !== 'string' || doc.domain === '') errors.push('domain: required, non-empty');
  const walk = (list: unknown, path: string): void => {
    if (!Array.isArray(list)) return void errors.push(`${path}: expected a list`);
    const seen = new Set<string>();
    list.forEach((d, i) => {
      const at = `${path}[${i}]`;
      if (!isObj(d)) return void errors.push(`${at}: expected a mapping`);
      for (const k of Object.keys(d)) {
        if (!['key', 'value', 'rate_limit', 'descriptors', 'shadow_mode', 'detailed_metric'].includes(k))
          errors.push(`${at}: unknown key "${k}"`);
      }
      if (typeof d.key !== 'string' || d.key === '') errors.push(`${at}.key: required`);
      const id = `${String(d.key)}_${String(d.value ?? '')}`;
      if (seen.has(id)) errors.push(`${at}: duplicate descriptor composite key ${id}`);
      seen.add(id);
      if (d.rate_limit !== undefined) {
        const rl = d.rate_limit;
        if (!isObj(rl)) errors.push(`${at}.rate_limit: expected a mapping`);
        else {
          for (const k of Object.keys(rl))
            if (!['unit', 'requests_per_unit', 'unlimited', 'name'].includes(k)) errors.push(`${at}.rate_limit: unknown key "${k}"`);
          if (!SERVICE_UNITS.includes(String(rl.unit).toLowerCase()))
            errors.push(`${at}.rate_limit.unit: ${String(rl.unit)} is not a unit`);
          if (!Number.isInteger(rl.requests_per_unit) || Number(rl.requests_per_unit) < 0)
            errors.push(`${at}.rate_limit.requests_per_unit: a whole number`);
        }
      }
      if (d.shadow_mode !== undefined && typeof d.shadow_mode !== 'boolean') errors.push(`${at}.shadow_mode: a boolean`);
      if (d.descriptors !== undefined) walk(d.descriptors, `${at}.descriptors`);
    });
  };
  walk(doc.descriptors ?? [], 'descriptors');
  return errors;
}

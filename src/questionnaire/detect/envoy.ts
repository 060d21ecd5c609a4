/**
 * Envoy detector: Envoy configuration (bootstrap YAML/JSON, or filters embedded in Istio /
 * Kubernetes manifests) means the gateway is Envoy. Reported limits:
 *  - envoy.filters.http.local_ratelimit token buckets (filter level, per route, per descriptor),
 *  - the envoy.filters.http.ratelimit (global) filter: domain, failure mode, the route actions
 *    that build its descriptors,
 *  - envoyproxy/ratelimit service configuration (domain + descriptors with rate_limit).
 */
import { asNumber, asString, describeLimit, isRecord, isTestPath, listAll, toRate, walk } from './shared.js';
import { parseStructured } from '../../io/text.js';
import { FIELDS, type ExistingLimiter, type Fact, type ProjectFs, type SettingValue, type Warn } from './types.js';

const GLOBAL = 'envoy.filters.http.ratelimit';
const GLOBAL_TYPE = /envoy\.extensions\.filters\.http\.ratelimit\.v3\.RateLimit$/;
const ENVOY_TEXT = /envoy\.(?:filters|extensions|config)\.|static_resources\s*[:"]|type\.googleapis\.com\/envoy\./;
const SERVICE_TEXT = /requests_per_unit/;

const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86400,
  week: 604800,
  month: 2592000,
  year: 31536000,
};

export async function detect(fs: ProjectFs, warn: Warn = () => {}): Promise<Fact[]> {
  const files = (await listAll(fs)).filter((f) => /\.(?:ya?ml|json)$/i.test(f) && !isTestPath(f));
  const facts: Fact[] = [];
  for (const file of files) {
    const text = await fs.read(file);
    if (text === undefined) continue;
    const envoy = ENVOY_TEXT.test(text);
    const service = SERVICE_TEXT.test(text) && /\bdomain\b/.test(text) && /\bdescriptors\b/.test(text);
    if (!envoy && !service) continue;
    const parsed = parseStructured(text, file);
    if (!parsed.ok) {
      warn({ source: file, message: `looks like Envoy configuration but is ${parsed.error}` });
      continue;
    }
    const found: Fact[] = [];
    let serviceDomain: string | undefined;
    for (const doc of parsed.docs) {
      if (envoy) found.push(...filterFacts(doc, file));
      if (service && isRecord(doc) && typeof doc.domain === 'string' && Array.isArray(doc.descriptors)) {
        serviceDomain = doc.domain;
        found.push(...serviceFacts(doc.domain, doc.descriptors, file));
      }
    }
    if (!envoy && serviceDomain === undefined) continue;
    const kinds = [...new Set(found.map((f) => (f.value as ExistingLimiter).kind))];
    facts.push({
      field: FIELDS.gateway,
      value: 'envoy',
      source: file,
      detail:
        serviceDomain !== undefined && !envoy
          ? `envoyproxy/ratelimit service config for domain ${serviceDomain}`
          : `Envoy config${kinds.length ? ` with ${kinds.map(kindLabel).join(', ')}` : ''}`,
    });
    facts.push(...found);
  }
  return facts;
}

function kindLabel(kind: string): string {
  return kind === 'envoy-local' ? 'local_ratelimit' : kind === 'envoy-global' ? 'ratelimit (global)' : 'ratelimit service descriptors';
}

function filterFacts(doc: unknown, file: string): Fact[] {
  const facts: Fact[] = [];
  const globals = new Set<unknown>();
  const actions = collectActions(doc);
  walk(doc, (node, ancestors) => {
    if (isRecord(node.token_bucket)) facts.push(localFact(node, ancestors, file));
    const typed = isRecord(node.typed_config) ? node.typed_config : undefined;
    const isGlobalByName = node.name === GLOBAL;
    const isGlobalByType = typeof node['@type'] === 'string' && GLOBAL_TYPE.test(node['@type']);
    if (isGlobalByName && typed) {
      globals.add(typed);
      facts.push(globalFact(typed, actions, file));
    } else if (isGlobalByType && !globals.has(node) && ('domain' in node || 'rate_limit_service' in node)) {
      globals.add(node);
      facts.push(globalFact(node, actions, file));
    }
  });
  return facts;
}

function seconds(value: unknown): number | undefined {
  if (isRecord(value)) {
    const s = asNumber(value.seconds) ?? 0;
    const n = asNumber(value.nanos) ?? 0;
    return s + n / 1e9 || undefined;
  }
  const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(asString(value) ?? '');
  return m ? Number(m[1]) : undefined;
}

function percent(value: unknown): number | undefined {
  if (!isRecord(value) || !isRecord(value.default_value)) return undefined;
  const numerator = asNumber(value.default_value.numerator) ?? 0;
  const denominator = asString(value.default_value.denominator) ?? 'HUNDRED';
  const scale = denominator === 'TEN_THOUSAND' ? 100 : denominator === 'MILLION' ? 10000 : 1;
  return numerator / scale;
}

function localScope(node: Record<string, unknown>, ancestors: readonly unknown[]): string {
  const parts: string[] = [];
  if (Array.isArray(node.entries)) parts.push(`descriptor ${descriptorEntries(node.entries)}`);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i];
    if (!isRecord(a)) continue;
    if (isRecord(a.match)) {
      const m = a.match;
      const path =
        asString(m.prefix) ??
        asString(m.path) ??
        asString(m.path_separated_prefix) ??
        (isRecord(m.safe_regex) ? asString(m.safe_regex.regex) : undefined) ??
        '?';
      parts.push(`route ${path}`);
      break;
    }
    if (Array.isArray(a.domains)) {
      parts.push(`virtual host ${asString(a.name) ?? a.domains.join(',')}`);
      break;
    }
    if (Array.isArray(a.http_filters)) {
      parts.push('all routes');
      break;
    }
  }
  return parts.length ? parts.join(', ') : 'filter';
}

function descriptorEntries(entries: unknown[]): string {
  return entries
    .filter(isRecord)
    .map((e) => `${asString(e.key) ?? '?'}${e.value !== undefined ? `=${String(e.value)}` : ''}`)
    .join(',');
}

function localFact(node: Record<string, unknown>, ancestors: readonly unknown[], file: string): Fact {
  // The token bucket may sit in the filter's typed_config, per route, or in a descriptor whose
  // enable/enforce percentages live in the enclosing config.
  const bucket = node.token_bucket as Record<string, unknown>;
  const config = Array.isArray(node.entries)
    ? (([...ancestors].reverse().find((a) => isRecord(a) && 'stat_prefix' in a) as Record<string, unknown> | undefined) ?? node)
    : node;
  const maxTokens = asNumber(bucket.max_tokens);
  const perFill = asNumber(bucket.tokens_per_fill) ?? 1;
  const interval = seconds(bucket.fill_interval);
  const enabled = percent(config.filter_enabled);
  const enforced = percent(config.filter_enforced);
  const statPrefix = asString(config.stat_prefix);
  const scope = localScope(node, ancestors);
  const rate = toRate(perFill, interval);
  const settings: Record<string, SettingValue> = {
    ...(statPrefix ? { stat_prefix: statPrefix } : {}),
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    tokens_per_fill: perFill,
    ...(typeof bucket.fill_interval === 'string'
      ? { fill_interval: bucket.fill_interval }
      : interval
        ? { fill_interval: `${interval}s` }
        : {}),
    ...(enabled !== undefined ? { filter_enabled_percent: enabled } : {}),
    ...(enforced !== undefined ? { filter_enforced_percent: enforced } : {}),
  };
  const value: ExistingLimiter = {
    kind: 'envoy-local',
    ...(statPrefix ? { name: statPrefix } : {}),
    scope,
    ...(Array.isArray(node.entries) ? { key: descriptorEntries(node.entries) } : {}),
    limit: perFill,
    ...(interval ? { windowSeconds: interval } : {}),
    ...(rate ? { rate } : {}),
    ...(maxTokens !== undefined ? { burst: maxTokens } : {}),
    settings,
  };
  const notes: string[] = [];
  if (!Array.isArray(node.entries) && (enforced ?? 0) === 0) notes.push('not enforced (filter_enforced unset or 0%)');
  return {
    field: FIELDS.existingLimiters,
    value,
    source: file,
    detail:
      `local_ratelimit token_bucket max_tokens=${maxTokens ?? '?'} tokens_per_fill=${perFill} fill_interval=${settings.fill_interval ?? '?'} on ${scope}` +
      (rate ? ` = ${describeLimit(perFill, interval, rate)}` : '') +
      (notes.length ? `; ${notes.join('; ')}` : ''),
  };
}

/** Descriptor actions of every `rate_limits` entry (what the global limiter keys on). */
function collectActions(doc: unknown): string[] {
  const out: string[] = [];
  walk(doc, (node) => {
    if (!Array.isArray(node.rate_limits)) return;
    for (const limit of node.rate_limits) {
      if (!isRecord(limit) || !Array.isArray(limit.actions)) continue;
      const parts = limit.actions.filter(isRecord).map((action) => {
        const [kind, cfg] = Object.entries(action)[0] ?? ['?', undefined];
        const detail = isRecord(cfg)
          ? (asString(cfg.header_name) ?? asString(cfg.descriptor_value) ?? asString(cfg.descriptor_key))
          : undefined;
        return detail ? `${kind}:${detail}` : kind;
      });
      const joined = parts.join(' + ');
      if (joined && !out.includes(joined)) out.push(joined);
    }
  });
  return out;
}

function globalFact(config: Record<string, unknown>, actions: readonly string[], file: string): Fact {
  const domain = asString(config.domain);
  const failClosed = config.failure_mode_deny === true;
  const service = isRecord(config.rate_limit_service) ? config.rate_limit_service : {};
  const grpc = isRecord(service.grpc_service) ? service.grpc_service : {};
  const cluster = isRecord(grpc.envoy_grpc) ? asString(grpc.envoy_grpc.cluster_name) : undefined;
  const timeout = asString(config.timeout);
  const settings: Record<string, SettingValue> = {
    ...(domain ? { domain } : {}),
    failure_mode_deny: failClosed,
    ...(timeout ? { timeout } : {}),
    ...(cluster ? { rate_limit_service: cluster } : {}),
    ...(actions.length ? { actions: [...actions] } : {}),
  };
  const value: ExistingLimiter = {
    kind: 'envoy-global',
    ...(domain ? { name: domain } : {}),
    scope: 'routes with rate_limits actions',
    ...(actions.length ? { key: actions.join(' | ') } : {}),
    settings,
  };
  return {
    field: FIELDS.existingLimiters,
    value,
    source: file,
    detail:
      `ratelimit filter, domain ${domain ?? '?'}, ${failClosed ? 'fails closed (failure_mode_deny: true)' : 'fails open'}` +
      (cluster ? `, service cluster ${cluster}` : '') +
      (actions.length ? `, descriptors from ${actions.join(' | ')}` : ''),
  };
}

function serviceFacts(domain: string, descriptors: unknown[], file: string, path: string[] = []): Fact[] {
  const facts: Fact[] = [];
  for (const d of descriptors) {
    if (!isRecord(d)) continue;
    const key = `${asString(d.key) ?? '?'}${d.value !== undefined ? `=${String(d.value)}` : ''}`;
    const here = [...path, key];
    const limit = isRecord(d.rate_limit) ? d.rate_limit : undefined;
    if (limit) {
      const unit = (asString(limit.unit) ?? '').toLowerCase();
      const requests = asNumber(limit.requests_per_unit);
      const windowSeconds = UNIT_SECONDS[unit];
      const rate = toRate(requests, windowSeconds);
      const value: ExistingLimiter = {
        kind: 'envoy-ratelimit-service',
        name: domain,
        key: here.join(' > '),
        ...(requests !== undefined ? { limit: requests } : {}),
        ...(windowSeconds ? { windowSeconds } : {}),
        ...(rate ? { rate } : {}),
        settings: {
          domain,
          ...(requests !== undefined ? { requests_per_unit: requests } : {}),
          ...(unit ? { unit } : {}),
          ...(d.shadow_mode === true ? { shadow_mode: true } : {}),
        },
      };
      facts.push({
        field: FIELDS.existingLimiters,
        value,
        source: file,
        detail: `ratelimit service domain ${domain}, descriptor ${here.join(' > ')}: ${requests ?? '?'} per ${unit || '?'}${d.shadow_mode === true ? ' (shadow mode)' : ''}`,
      });
    }
    if (Array.isArray(d.descriptors)) facts.push(...serviceFacts(domain, d.descriptors, file, here));
  }
  return facts;
}

/**
 * Kong detector: declarative configuration (kong.yml, kong.yaml, or any YAML/JSON file with a
 * top-level `_format_version`, as decK writes) means the gateway is Kong. Reports the
 * `rate-limiting` and `rate-limiting-advanced` plugins wherever they are attached (global,
 * service, route, consumer, consumer group) with their configuration; `policy: redis` (or
 * `strategy: redis`) also says the store is Redis. kong.conf gives `trusted_ips` and
 * `real_ip_header`.
 */
import { Cidr } from '../../answers/schema.js';
import { asNumber, asString, basename, describeLimit, isRecord, isTestPath, listAll, toRate } from './shared.js';
import { parseStructured } from '../../io/text.js';
import { FIELDS, type ExistingLimiter, type Fact, type ProjectFs, type SettingValue, type Warn } from './types.js';

const PLUGINS = new Set(['rate-limiting', 'rate-limiting-advanced']);
const WINDOWS: Array<[string, number]> = [
  ['second', 1],
  ['minute', 60],
  ['hour', 3600],
  ['day', 86400],
  ['month', 2592000],
  ['year', 31536000],
];

export async function detect(fs: ProjectFs, warn: Warn = () => {}): Promise<Fact[]> {
  const files = (await listAll(fs)).filter((f) => !isTestPath(f));
  const facts: Fact[] = [];
  for (const file of files) {
    if (basename(file) === 'kong.conf' || basename(file) === 'kong.conf.default') {
      const text = await fs.read(file);
      if (text !== undefined) facts.push(...kongConfFacts(text, file));
      continue;
    }
    if (!/\.(?:ya?ml|json)$/i.test(file)) continue;
    const named = /^kong\.ya?ml$/i.test(basename(file));
    const text = await fs.read(file);
    if (text === undefined || !/_format_version/.test(text)) continue;
    const parsed = parseStructured(text, file);
    if (!parsed.ok) {
      warn({ source: file, message: `looks like Kong declarative config but is ${parsed.error}` });
      continue;
    }
    const doc = parsed.docs.find((d) => isRecord(d) && '_format_version' in d);
    if (!isRecord(doc)) {
      if (named) warn({ source: file, message: 'no top-level _format_version: not read as Kong declarative config' });
      continue;
    }
    const plugins = attachedPlugins(doc);
    const limiters = plugins.filter((p) => PLUGINS.has(asString(p.plugin.name) ?? ''));
    facts.push({
      field: FIELDS.gateway,
      value: 'kong',
      source: file,
      detail:
        `Kong declarative config (_format_version ${String(doc._format_version)})` +
        (limiters.length ? ` with ${limiters.length} rate limiting plugin${limiters.length > 1 ? 's' : ''}` : ''),
    });
    const redis = limiters.find((p) => usesRedis(p.plugin));
    if (redis) {
      facts.push({
        field: FIELDS.store,
        value: 'redis',
        source: file,
        detail: `${String(redis.plugin.name)} plugin on ${redis.scope} uses the redis policy`,
      });
    }
    for (const p of limiters) facts.push(pluginFact(p, file));
  }
  return facts;
}

interface Attached {
  plugin: Record<string, unknown>;
  scope: string;
}

function nameOf(entity: unknown): string {
  if (typeof entity === 'string') return entity;
  if (!isRecord(entity)) return '?';
  return asString(entity.name) ?? asString(entity.username) ?? asString(entity.id) ?? '?';
}

/** Every plugin in the file with the entity it is attached to. */
function attachedPlugins(doc: Record<string, unknown>): Attached[] {
  const out: Attached[] = [];
  const add = (plugins: unknown, scope: string): void => {
    if (!Array.isArray(plugins)) return;
    for (const plugin of plugins) if (isRecord(plugin)) out.push({ plugin, scope: pluginScope(plugin, scope) });
  };
  add(doc.plugins, 'global');
  for (const service of list(doc.services)) {
    add(service.plugins, `service ${nameOf(service)}`);
    for (const route of list(service.routes)) add(route.plugins, `route ${nameOf(route)}`);
  }
  for (const route of list(doc.routes)) add(route.plugins, `route ${nameOf(route)}`);
  for (const consumer of list(doc.consumers)) add(consumer.plugins, `consumer ${nameOf(consumer)}`);
  for (const group of list(doc.consumer_groups)) add(group.plugins, `consumer group ${nameOf(group)}`);
  return out;
}

/** A top-level plugin may still name its service/route/consumer. */
function pluginScope(plugin: Record<string, unknown>, scope: string): string {
  if (scope !== 'global') return scope;
  for (const key of ['route', 'service', 'consumer', 'consumer_group']) {
    if (plugin[key] !== undefined && plugin[key] !== null) return `${key.replace('_', ' ')} ${nameOf(plugin[key])}`;
  }
  return scope;
}

function list(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function usesRedis(plugin: Record<string, unknown>): boolean {
  const config = isRecord(plugin.config) ? plugin.config : {};
  return config.policy === 'redis' || config.strategy === 'redis';
}

function pluginFact({ plugin, scope }: Attached, file: string): Fact {
  const name = asString(plugin.name) ?? 'rate-limiting';
  const config = isRecord(plugin.config) ? plugin.config : {};
  const settings: Record<string, SettingValue> = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
      settings[key] = value;
    } else if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
      settings[key] = value as Array<string | number>;
    } else if (key === 'redis' && isRecord(value)) {
      for (const [k, v] of Object.entries(value)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') settings[`redis.${k}`] = v;
      }
    }
  }
  if (plugin.enabled === false) settings.enabled = false;

  let limit: number | undefined;
  let windowSeconds: number | undefined;
  let key: string;
  let shown: string;
  if (name === 'rate-limiting-advanced') {
    const limits = Array.isArray(config.limit) ? config.limit.map(asNumber) : [asNumber(config.limit)];
    const windows = Array.isArray(config.window_size) ? config.window_size.map(asNumber) : [asNumber(config.window_size)];
    limit = limits[0];
    windowSeconds = windows[0];
    key = asString(config.identifier) ?? 'consumer';
    shown = limits.map((l, i) => describeLimit(l, windows[i]) || `${l ?? '?'} per ${windows[i] ?? '?'}s`).join(', ');
    if (config.window_type) shown += ` (${String(config.window_type)} window)`;
  } else {
    const windows = WINDOWS.filter(([w]) => asNumber(config[w]) !== undefined);
    const first = windows[0];
    if (first) {
      limit = asNumber(config[first[0]]);
      windowSeconds = first[1];
    }
    key = asString(config.limit_by) ?? 'consumer';
    if (key === 'header' && typeof config.header_name === 'string') key = `header ${config.header_name}`;
    if (key === 'path' && typeof config.path === 'string') key = `path ${config.path}`;
    shown = windows.map(([w]) => `${String(config[w])} per ${w}`).join(', ') || 'no limits set';
  }
  const rate = toRate(limit, windowSeconds);
  const policy = asString(config.policy) ?? asString(config.strategy);
  const value: ExistingLimiter = {
    kind: `kong:${name}`,
    ...(typeof plugin.instance_name === 'string' ? { name: plugin.instance_name } : {}),
    scope,
    key,
    ...(limit !== undefined ? { limit } : {}),
    ...(windowSeconds !== undefined ? { windowSeconds } : {}),
    ...(rate ? { rate } : {}),
    settings,
  };
  return {
    field: FIELDS.existingLimiters,
    value,
    source: file,
    detail:
      `${name} plugin ${scope === 'global' ? 'applied globally' : `on ${scope}`}: ${shown}, by ${key}` +
      (policy ? `, policy ${policy}` : '') +
      (plugin.enabled === false ? ', disabled' : ''),
  };
}

/** kong.conf: `trusted_ips = 10.0.0.0/8, 172.16.0.0/12` and `real_ip_header = X-Forwarded-For`. */
function kongConfFacts(text: string, file: string): Fact[] {
  const facts: Fact[] = [];
  const values = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([a-z_]+)\s*=\s*([^#]*?)\s*(?:#.*)?$/.exec(line);
    if (m?.[1] && m[2] !== undefined) values.set(m[1], m[2]);
  }
  const trusted = (values.get('trusted_ips') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && Cidr.safeParse(s).success);
  if (trusted.length) {
    facts.push({ field: FIELDS.trustedProxies, value: trusted, source: file, detail: `trusted_ips = ${trusted.join(', ')}` });
  }
  const header = values.get('real_ip_header');
  if (header) facts.push({ field: FIELDS.realIpHeader, value: header, source: file, detail: `real_ip_header = ${header}` });
  return facts;
}

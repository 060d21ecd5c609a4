/**
 * Checks for the Kong declarative config rl-design writes:
 * - the fields of services, routes and plugin entities, and the `rate-limiting` plugin's
 *   config as Kong's schema for it defines them (kong/plugins/rate-limiting/schema.lua and
 *   kong/tools/redis/schema.lua in Kong 3.x: field names and types, one_of sets, gt bounds,
 *   and its entity checks), and the documented config of `rate-limiting-advanced`;
 * - a model of Kong's plugin resolution: per request, the router picks one route (the port of
 *   Kong's router in src/codegen/gateway/kong-router.ts); for each plugin name one instance
 *   runs, the most specific of route+service > route > service > global (consumers aside: the
 *   file configures none).
 */

import { kongRouterPathError, kongSelect } from '../../../src/codegen/gateway/kong-router.js';

type Obj = Record<string, any>;

const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isName = (v: unknown): boolean => typeof v === 'string' && /^[A-Za-z0-9._~-]{1,128}$/.test(v);

function unknownKeys(path: string, v: Obj, allowed: string[], errors: string[]): void {
  for (const k of Object.keys(v)) if (!allowed.includes(k)) errors.push(`${path}: unknown field "${k}"`);
}

/** rate-limiting's config record (schema.lua), with its custom validator and entity checks. */
export function checkRateLimitingConfig(path: string, c: unknown, dbless: boolean, errors: string[]): void {
  if (!isObj(c)) return void errors.push(`${path}: config must be a record`);
  unknownKeys(
    path,
    c,
    [
      ...PERIODS,
      'limit_by',
      'header_name',
      'path',
      'policy',
      'fault_tolerant',
      'redis',
      'hide_client_headers',
      'error_code',
      'error_message',
      'sync_rate',
    ],
    errors,
  );
  for (const p of PERIODS) {
    if (c[p] !== undefined && !(typeof c[p] === 'number' && c[p] > 0)) errors.push(`${path}.${p}: a number > 0`);
  }
  if (!PERIODS.some((p) => typeof c[p] === 'number')) errors.push(`${path}: at least one of ${PERIODS.join(', ')} is required`);
  // the limit of a longer period cannot be lower than a shorter one's
  PERIODS.forEach((lower, i) => {
    for (const upper of PERIODS.slice(i + 1)) {
      if (typeof c[lower] === 'number' && typeof c[upper] === 'number' && c[upper] < c[lower])
        errors.push(`${path}: the limit for ${upper} cannot be lower than the limit for ${lower}`);
    }
  });
  const limitBy = c.limit_by ?? 'consumer';
  if (!['consumer', 'credential', 'ip', 'service', 'header', 'path'].includes(limitBy))
    errors.push(`${path}.limit_by: ${limitBy} is not allowed`);
  if (limitBy === 'header' && (typeof c.header_name !== 'string' || c.header_name === ''))
    errors.push(`${path}.header_name: required when limit_by is header`);
  if (limitBy === 'path' && typeof c.path !== 'string') errors.push(`${path}.path: required when limit_by is path`);
  const policy = c.policy ?? 'local';
  const policies = dbless ? ['local', 'redis'] : ['local', 'cluster', 'redis'];
  if (!policies.includes(policy)) errors.push(`${path}.policy: ${policy} is not one of ${policies.join(', ')}`);
  for (const b of ['fault_tolerant', 'hide_client_headers'])
    if (c[b] !== undefined && typeof c[b] !== 'boolean') errors.push(`${path}.${b}: a boolean`);
  if (c.error_code !== undefined && !(typeof c.error_code === 'number' && c.error_code > 0))
    errors.push(`${path}.error_code: a number > 0`);
  if (c.error_message !== undefined && typeof c.error_message !== 'string') errors.push(`${path}.error_message: a string`);
  const syncRate = c.sync_rate ?? -1;
  if (policy !== 'redis' && syncRate !== -1) errors.push(`${path}: sync_rate can only be used with the redis policy`);
  if (policy === 'redis' && syncRate !== -1 && syncRate < 0.02)
    errors.push(`${path}: sync_rate must be greater than 0.02, or -1 to disable`);
  if (c.redis !== undefined) {
    if (!isObj(c.redis)) errors.push(`${path}.redis: a record`);
    else {
      unknownKeys(
        `${path}.redis`,
        c.redis,
        ['host', 'port', 'timeout', 'username', 'password', 'database', 'ssl', 'ssl_verify', 'server_name'],
        errors,
      );
      const r = c.redis;
      if (r.port !== undefined && !(Number.isInteger(r.port) && r.port >= 0 && r.port <= 65535)) errors.push(`${path}.redis.port: a port`);
      if (r.timeout !== undefined && !(Number.isInteger(r.timeout) && r.timeout >= 0))
        errors.push(`${path}.redis.timeout: a whole number of ms`);
      if (r.database !== undefined && !Number.isInteger(r.database)) errors.push(`${path}.redis.database: an integer`);
    }
  }
  if (policy === 'redis') {
    for (const k of ['host', 'port', 'timeout'])
      if (c.redis?.[k] === undefined) errors.push(`${path}.redis.${k}: required when policy is redis`);
  }
}

/** rate-limiting-advanced's config, as Kong documents it (the plugin ships with Kong Enterprise). */
export function checkRateLimitingAdvancedConfig(path: string, c: unknown, errors: string[]): void {
  if (!isObj(c)) return void errors.push(`${path}: config must be a record`);
  unknownKeys(
    path,
    c,
    [
      'limit',
      'window_size',
      'window_type',
      'identifier',
      'header_name',
      'path',
      'strategy',
      'sync_rate',
      'namespace',
      'dictionary_name',
      'redis',
      'hide_client_headers',
      'error_code',
      'error_message',
      'retry_after_jitter_max',
      'disable_penalty',
      'consumer_groups',
      'enforce_consumer_groups',
    ],
    errors,
  );
  const nums = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((n) => typeof n === 'number' && n > 0);
  if (!nums(c.limit)) errors.push(`${path}.limit: a non-empty list of numbers > 0`);
  if (!nums(c.window_size)) errors.push(`${path}.window_size: a non-empty list of numbers > 0`);
  if (nums(c.limit) && nums(c.window_size) && c.limit.length !== c.window_size.length)
    errors.push(`${path}: limit and window_size must have the same length`);
  if (c.window_type !== undefined && !['fixed', 'sliding'].includes(c.window_type)) errors.push(`${path}.window_type: fixed or sliding`);
  if (!['consumer', 'consumer-group', 'credential', 'ip', 'service', 'header', 'path'].includes(c.identifier ?? 'consumer'))
    errors.push(`${path}.identifier: ${c.identifier} is not allowed`);
  if (c.identifier === 'header' && !c.header_name) errors.push(`${path}.header_name: required when identifier is header`);
  if (!['local', 'redis', 'cluster'].includes(c.strategy ?? 'local')) errors.push(`${path}.strategy: local, redis or cluster`);
  if (typeof c.sync_rate !== 'number') errors.push(`${path}.sync_rate: required`);
  if ((c.strategy ?? 'local') === 'local' && c.sync_rate !== -1)
    errors.push(`${path}.sync_rate: -1 with the local strategy (counters stay in node memory)`);
  for (const b of ['hide_client_headers', 'disable_penalty'])
    if (c[b] !== undefined && typeof c[b] !== 'boolean') errors.push(`${path}.${b}: a boolean`);
  if (c.error_code !== undefined && !(typeof c.error_code === 'number' && c.error_code > 0))
    errors.push(`${path}.error_code: a number > 0`);
}

const PHASES = ['certificate', 'rewrite', 'access', 'header_filter', 'body_filter', 'log'];

/** pre-function / post-function (kong/plugins/pre-function/_schema.lua): phase -> list of Lua chunks. */
export function checkFunctionConfig(path: string, c: unknown, errors: string[]): void {
  if (!isObj(c)) return void errors.push(`${path}: config must be a record`);
  unknownKeys(path, c, PHASES, errors);
  if (!PHASES.some((ph) => c[ph] !== undefined)) errors.push(`${path}: at least one of ${PHASES.join(', ')} is required`);
  for (const ph of PHASES) {
    if (c[ph] === undefined) continue;
    if (!Array.isArray(c[ph]) || !c[ph].every((x: unknown) => typeof x === 'string')) errors.push(`${path}.${ph}: a list of Lua chunks`);
  }
}

function checkPlugin(path: string, p: unknown, names: Set<string>, errors: string[]): void {
  if (!isObj(p)) return void errors.push(`${path}: a plugin record`);
  unknownKeys(path, p, ['name', 'instance_name', 'config', 'enabled', 'protocols', 'tags', 'ordering'], errors);
  if (p.instance_name !== undefined) {
    if (!isName(p.instance_name)) errors.push(`${path}.instance_name: not in Kong's name charset`);
    if (names.has(p.instance_name)) errors.push(`${path}.instance_name: ${p.instance_name} is not unique`);
    names.add(p.instance_name);
  }
  if (p.enabled !== undefined && typeof p.enabled !== 'boolean') errors.push(`${path}.enabled: a boolean`);
  for (const t of p.tags ?? []) if (!isName(t)) errors.push(`${path}.tags: ${t} is not a valid tag`);
  if (p.name === 'rate-limiting') checkRateLimitingConfig(`${path}.config`, p.config, true, errors);
  else if (p.name === 'rate-limiting-advanced') checkRateLimitingAdvancedConfig(`${path}.config`, p.config, errors);
  else if (p.name === 'post-function') checkFunctionConfig(`${path}.config`, p.config, errors);
  else errors.push(`${path}.name: ${String(p.name)} is not a plugin this checker knows`);
}

function checkRoute(path: string, r: unknown, names: Set<string>, pluginNames: Set<string>, errors: string[]): void {
  if (!isObj(r)) return void errors.push(`${path}: a route record`);
  unknownKeys(
    path,
    r,
    [
      'name',
      'protocols',
      'methods',
      'hosts',
      'paths',
      'headers',
      'regex_priority',
      'strip_path',
      'preserve_host',
      'path_handling',
      'tags',
      'plugins',
      'request_buffering',
      'response_buffering',
      'https_redirect_status_code',
    ],
    errors,
  );
  if (!isName(r.name)) errors.push(`${path}.name: not in Kong's name charset`);
  if (names.has(r.name)) errors.push(`${path}.name: ${r.name} is not unique`);
  names.add(r.name);
  if (!Array.isArray(r.paths) || r.paths.length === 0) errors.push(`${path}: a route needs paths (or hosts or methods)`);
  for (const p of r.paths ?? []) {
    // kong/db/schema/typedefs.lua router_path (Kong 3.0 to 3.10)
    const why = kongRouterPathError(p);
    if (why) errors.push(`${path}.paths: ${String(p)}: ${why}`);
  }
  for (const m of r.methods ?? []) if (!/^[A-Z]+$/.test(m)) errors.push(`${path}.methods: ${m} is not an uppercase method`);
  if (r.regex_priority !== undefined && !Number.isInteger(r.regex_priority)) errors.push(`${path}.regex_priority: an integer`);
  const seen = new Set<string>();
  (r.plugins ?? []).forEach((p: unknown, i: number) => {
    checkPlugin(`${path}.plugins[${i}]`, p, pluginNames, errors);
    const n = (p as Obj)?.name;
    if (seen.has(n)) errors.push(`${path}.plugins[${i}]: a second ${n} on the same route (Kong allows one per scope)`);
    seen.add(n);
  });
}

/** The declarative config file: `_format_version`, services with routes and plugins. */
export function checkKongFile(doc: unknown): string[] {
  const errors: string[] = [];
  if (!isObj(doc)) return ['file: a mapping'];
  unknownKeys('file', doc, ['_format_version', '_transform', 'services', 'routes', 'plugins', 'consumers', 'upstreams'], errors);
  if (doc._format_version !== '3.0') errors.push('_format_version: "3.0" for Kong 3.x');
  const routeNames = new Set<string>();
  const pluginNames = new Set<string>();
  const serviceNames = new Set<string>();
  (doc.services ?? []).forEach((s: unknown, i: number) => {
    const at = `services[${i}]`;
    if (!isObj(s)) return void errors.push(`${at}: a service record`);
    unknownKeys(
      at,
      s,
      [
        'name',
        'url',
        'host',
        'port',
        'protocol',
        'path',
        'retries',
        'connect_timeout',
        'read_timeout',
        'write_timeout',
        'tags',
        'routes',
        'plugins',
        'enabled',
      ],
      errors,
    );
    if (!isName(s.name) || serviceNames.has(s.name)) errors.push(`${at}.name: missing, not unique or not in Kong's charset`);
    serviceNames.add(s.name);
    if (typeof s.url !== 'string' || !/^https?:\/\/[^\s/]+/.test(s.url)) errors.push(`${at}.url: an http(s) URL`);
    (s.routes ?? []).forEach((r: unknown, j: number) => checkRoute(`${at}.routes[${j}]`, r, routeNames, pluginNames, errors));
    const seen = new Set<string>();
    (s.plugins ?? []).forEach((p: unknown, j: number) => {
      checkPlugin(`${at}.plugins[${j}]`, p, pluginNames, errors);
      const n = (p as Obj)?.name;
      if (seen.has(n)) errors.push(`${at}.plugins[${j}]: a second ${n} on the same service (Kong allows one per scope)`);
      seen.add(n);
    });
  });
  return errors;
}

// ------------------------------------------------------------ plugin resolution

interface RouteRef {
  service: Obj;
  route: Obj;
}

/**
 * The route Kong's router picks for a request (src/codegen/gateway/kong-router.ts, a port of
 * kong/router/transform.lua get_priority and the ATC router's order); undefined when none
 * matches or when several tie at the top (then Kong's pick depends on route ids).
 */
export function kongRoute(doc: Obj, method: string, path: string): RouteRef | undefined {
  const refs: RouteRef[] = [];
  for (const service of doc.services ?? []) for (const route of service.routes ?? []) refs.push({ service, route });
  const top = kongSelect(
    refs.map((r) => r.route),
    { method, uri: path },
  );
  if (top.length !== 1) return undefined;
  return refs.find((r) => r.route === top[0]?.route);
}

/**
 * The plugin instances that run for a request: one per plugin name, the route's own over the
 * service's over a global one; disabled instances run nothing.
 */
export function kongPluginsFor(doc: Obj, method: string, path: string): Obj[] {
  const hit = kongRoute(doc, method, path);
  const byName = new Map<string, Obj>();
  const scopes: Obj[][] = [hit?.route.plugins ?? [], hit?.service.plugins ?? [], doc.plugins ?? []];
  for (const scope of scopes) for (const p of scope) if (!byName.has(p.name)) byName.set(p.name, p);
  return [...byName.values()].filter((p) => p.enabled !== false);
}

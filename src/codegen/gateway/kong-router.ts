/**
 * Kong 3.x's HTTP router, as far as the routes in kong.yaml use it, ported from Kong's source
 * (github.com/Kong/kong, kong/router/*.lua; the same code in 3.0 to 3.10) so that `validate` and
 * the tests read a shipped file the way Kong would:
 *
 * - the default router_flavor is traditional_compatible (kong/templates/kong_defaults.lua,
 *   `router_flavor = traditional_compatible`; kong.conf.default documents it); that flavor and
 *   `expressions` turn a route's fields into an ATC expression and a priority with the same two
 *   functions (kong/router/compat.lua get_exp_and_priority, kong/router/expressions.lua, both
 *   calling kong/router/transform.lua get_expression and get_priority);
 * - the ATC router tries the routes by that priority, highest first, and on a tie by route id
 *   (Kong/atc-router src/router.rs: a BTreeMap keyed on (priority, uuid), walked in reverse), so
 *   the winner of a tie depends on ids Kong generates: not something a config can rely on;
 * - the path it matches is the request URI without its query, normalized (kong/router/utils.lua
 *   strip_uri_args, kong/tools/uri.lua normalize: %-escapes of unreserved and other characters
 *   decoded, reserved ones kept and upper-cased, dot segments removed, `//` merged);
 * - a path starting with `~` is a regex matched at the start of that path (transform.lua
 *   path_val_transform prepends `^`), any other a plain prefix (`^=`), both case-sensitive: a
 *   regex says `(?i)` itself to ignore letter case;
 * - a route path must start with `/` or `~/` and hold no `//` (kong/db/schema/typedefs.lua
 *   router_path): Kong refuses the whole declarative file otherwise.
 */

/** A route entity's fields the HTTP router reads. */
export interface KongRouteFields {
  methods?: unknown;
  hosts?: unknown;
  paths?: unknown;
  headers?: unknown;
  snis?: unknown;
  sources?: unknown;
  destinations?: unknown;
  regex_priority?: unknown;
  expression?: unknown;
  /** An expression route's own priority. */
  priority?: unknown;
}

const isEmptyField = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0);

const isRegexPath = (p: string): boolean => p.startsWith('~');

/**
 * Why Kong refuses a route path, or undefined when it takes it (typedefs.lua router_path and
 * validate_path_with_regexes: `^/` or `^~/`, no `//`, a prefix path in normalized form, a regex
 * that compiles; the regex is tried here as JavaScript reads it, see kongRegex).
 */
export function kongRouterPathError(path: unknown): string | undefined {
  if (typeof path !== 'string') return 'a route path must be a string';
  if (!/^\//.test(path) && !/^~\//.test(path)) return 'should start with: / (fixed path) or ~/ (regex path)';
  if (path.includes('//')) return 'must not have empty segments';
  if (!isRegexPath(path)) {
    const normalized = kongNormalizePath(path);
    return path === normalized ? undefined : `non-normalized path, consider use '${normalized}' instead`;
  }
  return kongRegex(path) ? undefined : `invalid regex: '${path.slice(1)}'`;
}

/** Characters Kong keeps %-encoded when it normalizes a path (kong/tools/uri.lua RESERVED_CHARS). */
const RESERVED = new Set([..."!*'();:@&=+$,/?%#[]"].map((c) => c.charCodeAt(0)));

/**
 * The path Kong's router matches for a request URI: the query cut off at the first `?` after
 * the first character, then kong/tools/uri.lua normalize(uri, true), step for step.
 */
export function kongNormalizePath(requestUri: string): string {
  const q = requestUri.indexOf('?', 1);
  let uri = q >= 0 ? requestUri.slice(0, q) : requestUri;
  if (uri === '' || uri === '/') return uri;
  if (uri.includes('%')) {
    uri = uri.replace(/%([0-9A-Fa-f]{2})/g, (m, hex: string) => {
      const n = parseInt(hex, 16);
      return RESERVED.has(n) ? m.toUpperCase() : String.fromCharCode(n);
    });
  }
  if (!uri.includes('.') && !uri.includes('//')) return uri;
  const out: string[] = [];
  while (uri.length > 0) {
    if (uri === '/.') uri = '/';
    else if (uri === '/..') {
      uri = '/';
      out.pop();
    } else if (uri === '.' || uri === '..') uri = '';
    else if (uri.startsWith('../')) uri = uri.slice(3);
    else if (uri.startsWith('./')) uri = uri.slice(2);
    else if (uri.startsWith('/./')) uri = uri.slice(2);
    else if (uri.startsWith('/../')) {
      uri = uri.slice(3);
      out.pop();
    } else if (uri.startsWith('//')) uri = uri.slice(1);
    else {
      const i = uri.indexOf('/', 1);
      out.push(i >= 0 ? uri.slice(0, i) : uri);
      uri = i >= 0 ? uri.slice(i) : '';
    }
  }
  return out.join('');
}

/**
 * A route's regex path as JavaScript runs it, anchored at the start as Kong anchors it: `~`
 * dropped, `^` put first (transform.lua path_val_transform). Kong runs it with Rust's regex
 * crate; JavaScript reads the same syntax for what kong.yaml writes, except an inline `(?i)`,
 * taken here as the `i` flag when nothing before it is a letter (before it, case cannot matter).
 * Undefined when JavaScript cannot read it that way.
 */
export function kongRegex(path: string): RegExp | undefined {
  let source = `^${path.slice(1)}`.replace(/\?P?<(?=[A-Za-z_])/g, '?<');
  let flags = 'u';
  const at = source.indexOf('(?i)');
  if (at >= 0) {
    if (/[A-Za-z]/.test(source.slice(0, at).replace(/\\x[0-9A-Fa-f]{2}/g, ''))) return undefined;
    source = source.slice(0, at) + source.slice(at + 4);
    flags += 'i';
  }
  // other inline flags (JavaScript has none) and lookarounds (Rust's regex crate has none): unread
  if (/\(\?(?:[a-zA-Z-]+[):]|<?[=!])/.test(source)) return undefined;
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

/**
 * LuaJIT's bit operations, which transform.lua get_priority uses: on two Lua numbers a 32-bit
 * signed operation (a shift count taken mod 32, as JavaScript's `<<` does), and 64-bit once one
 * operand is a uint64 cdata (the `0x01ULL` constants). A value here: a number (a Lua number) or
 * a bigint (a uint64 cdata).
 */
type LuaInt = number | bigint;
const u64 = (v: LuaInt): bigint => BigInt.asUintN(64, typeof v === 'bigint' ? v : BigInt(Math.trunc(v)));
function lshift(v: LuaInt, n: number): LuaInt {
  return typeof v === 'bigint' ? BigInt.asUintN(64, v << BigInt(n & 63)) : v << n;
}
function bor(...vs: LuaInt[]): LuaInt {
  if (vs.some((v) => typeof v === 'bigint')) return vs.reduce<bigint>((a, v) => a | u64(v), 0n);
  return (vs as number[]).reduce((a, v) => a | v, 0);
}

/**
 * transform.lua get_priority for an HTTP route without an `expression`, as Kong computes it.
 * Its comment draws a 64-bit layout (match weight in bits 61-63, headers 52-59, regex_priority
 * 19-50), but lshift_uint64 rebinds its cdata local to the Lua number it is given, so the shifts
 * of the match weight, the header count and regex_priority are 32-bit: the weight lands in bits
 * 29-31 and regex_priority in bits 19-31, OR-ed over it. Only PLAIN_HOST_ONLY_BIT (60) and
 * REGEX_URL_BIT (51) are 64-bit. So among regex routes one more matched field (methods, hosts,
 * headers, paths, ...) is worth 1024 of regex_priority (OR-ed, not added): it decides while
 * regex_priority values differ by less; and any regex route beats any prefix route. (Checked by running Kong's
 * get_priority under LuaJIT: routes with methods and a regex at regex_priority 100 and 101 get
 * 2251800939855872 and 2251800940380160, the same regex without methods at 100 gets
 * 2251800402984960, the prefix route `/` 536870913.)
 */
export function kongRoutePriority(route: KongRouteFields): bigint {
  const PLAIN_HOST_ONLY_BIT = 1n << 60n;
  const REGEX_URL_BIT = 1n << 51n;
  if (!isEmptyField(route.expression)) return (0xffn << 56n) | u64(Number(route.priority ?? 0));
  let weight = 0;
  for (const f of [route.sources, route.destinations, route.methods, route.hosts]) if (!isEmptyField(f)) weight++;
  let headers = isEmptyField(route.headers) ? 0 : Object.keys(route.headers as object).length;
  if (headers > 0) {
    weight++;
    headers = Math.min(headers, 255);
  }
  if (!isEmptyField(route.snis)) weight++;
  const hosts = route.hosts;
  const plainHostOnly = Array.isArray(hosts) && !hosts.some((h) => String(h).includes('*'));
  let uriLength = 0;
  let regexUrl = false;
  const paths = Array.isArray(route.paths) ? (route.paths as string[]) : [];
  if (paths.length > 0) {
    weight++;
    if (isRegexPath(paths[0] as string)) regexUrl = true;
    else uriLength = (paths[0] as string).length;
  }
  const regexPriority = regexUrl ? Number(route.regex_priority ?? 0) : 0;
  return u64(
    bor(
      lshift(weight, 61),
      plainHostOnly ? PLAIN_HOST_ONLY_BIT : 0,
      regexUrl ? REGEX_URL_BIT : 0,
      lshift(headers, 52),
      lshift(regexPriority, 19),
      uriLength & 0x7ffff,
    ),
  );
}

/**
 * transform.lua split_routes_and_services_by_path: a route whose paths mix regexes and prefixes
 * of different lengths becomes one ATC route per group (the regexes, and the prefixes of each
 * length), each with its own priority.
 */
function splitByPath<T extends KongRouteFields>(route: T): T[] {
  const paths = Array.isArray(route.paths) ? (route.paths as string[]) : [];
  if (paths.length <= 1 || !isEmptyField(route.expression)) return [route];
  const groups = new Map<number, string[]>();
  for (const p of paths) {
    const k = isRegexPath(p) ? 0 : p.length;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  return groups.size === 1 ? [route] : [...groups.values()].map((g) => ({ ...route, paths: g }));
}

/** A request as the router sees it: the method and the request URI (path and query). */
export interface KongRequest {
  method: string;
  uri: string;
}

/**
 * Whether a route's expression (transform.lua get_expression) matches a request that carries no
 * Host, header, SNI or address Kong routes on: a route naming any of those never does here.
 */
function matches(route: KongRouteFields, method: string, path: string): boolean {
  if (!isEmptyField(route.expression)) return false;
  for (const f of [route.hosts, route.headers, route.snis, route.sources, route.destinations]) if (!isEmptyField(f)) return false;
  if (!isEmptyField(route.methods) && !(route.methods as unknown[]).includes(method)) return false;
  const paths = Array.isArray(route.paths) ? (route.paths as unknown[]) : [];
  if (paths.length === 0) return true;
  return paths.some((p) => {
    if (typeof p !== 'string') return false;
    if (!isRegexPath(p)) return path.startsWith(p);
    return kongRegex(p)?.test(path) ?? false;
  });
}

/**
 * The routes Kong's router picks for a request: every route at the highest priority among those
 * that match (one when the config decides; several when the winner depends on route ids).
 */
export function kongSelect<T extends KongRouteFields>(routes: readonly T[], request: KongRequest): { route: T; priority: bigint }[] {
  const path = kongNormalizePath(request.uri);
  const hits = routes.flatMap((route) =>
    splitByPath(route)
      .filter((part) => matches(part, request.method, path))
      .map((part) => ({ route, priority: kongRoutePriority(part) })),
  );
  if (hits.length === 0) return [];
  // bigints: Math.max takes none
  let top = 0n;
  for (const h of hits) if (h.priority > top) top = h.priority;
  const seen = new Set<T>();
  return hits.filter((h) => h.priority === top && !seen.has(h.route) && seen.add(h.route));
}

/**
 * The framework-independent runtime of the generated middleware: ONE template, the same
 * text for every design and both frameworks. The generator puts the design's data (rules,
 * routes, scripts, contract, metric names) in front of it; the framework adapters import it.
 *
 * Written without backticks and without the dollar-brace sequence, so that it can live in
 * a String.raw literal here (index.ts checks this). Everything in it is type-checked when
 * the generated file is compiled (test/middleware/compile.test.ts runs tsc --strict on it).
 */
export const CORE_IMPORTS = String.raw`import { createHash } from 'node:crypto';
import { Counter, register as defaultRegistry } from 'prom-client';
import type { Histogram, Registry } from 'prom-client';
`;

export const CORE_RUNTIME = String.raw`
// ===========================================================================
// Runtime: the same for every design. Nothing below reads the design except
// through the constants above.
// ===========================================================================

export type RuleMode = 'enforce' | 'shadow' | 'off';
export type HeaderConvention = 'ietf-structured' | 'ietf-trio' | 'x-ratelimit';
export type ScriptName = 'gcra' | 'sliding-window-log' | 'fixed-window';
export type IdentityKind = 'global' | 'api-key' | 'user' | 'tenant' | 'session' | 'ip' | 'username';
export type RuleTier = 'ceiling' | 'security' | 'fairness' | 'quota';

export interface RouteSpec {
  readonly method: string;
  readonly route: string;
  /** The design endpoint this route belongs to (its name picks the weighted cost). */
  readonly endpoint: string | null;
  /** Exempt endpoints (health checks) are never limited. */
  readonly exempt: boolean;
}

export interface RuleSpec {
  readonly id: string;
  readonly title: string;
  readonly tier: RuleTier;
  readonly identity: IdentityKind;
  /** Only requests of this plan are checked by the rule (null: every plan). */
  readonly plan: string | null;
  readonly script: ScriptName;
  /** redis: the Lua script; memory: the same algorithm in this process (no shared store). */
  readonly store: 'redis' | 'memory';
  /** Key pattern after the key prefix; <...> placeholders are filled per request. */
  readonly key: string;
  /** Indexes into ROUTES. */
  readonly routes: readonly number[];
  readonly limit: number;
  readonly periodSeconds: number;
  readonly burst: number | null;
  readonly costDefault: number;
  readonly costByEndpoint: readonly (readonly [string, number])[];
  readonly failMode: 'open' | 'closed';
  readonly headers: 'full' | 'silent';
  readonly errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
  /** Kill-switch feature flag name, handed to the mode() hook. */
  readonly flag: string | null;
  readonly window: 'calendar' | 'rolling' | 'fixed' | null;
  /** Plan quota shown to clients when the hard stop sits above it (soft overage). */
  readonly quota: number | null;
  readonly hybrid: boolean;
}

export interface ScriptSpec {
  readonly name: ScriptName;
  readonly file: string;
  readonly sha1: string;
  readonly source: string;
}

export type QuotaPeriod =
  | { readonly kind: 'calendar'; readonly period: 'day' | 'month'; readonly timeZone: string }
  | { readonly kind: 'rolling'; readonly days: number };

export interface HybridSpec {
  readonly localBurst: number;
  readonly instances: number;
  readonly overAdmission: number;
}

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
}

/**
 * What the application knows about the caller, from the identify() hook. Return only
 * what your authentication has VERIFIED: an API key id from a key you looked up, the
 * user and tenant of a valid session or token. Never pass raw client-supplied header
 * values here: anyone could rotate them to get fresh buckets.
 */
export interface RequestIdentity {
  /** Id of the authenticated API key (an id, not the secret). */
  readonly apiKey?: string | undefined;
  readonly userId?: string | undefined;
  readonly tenantId?: string | undefined;
  readonly sessionId?: string | undefined;
  /** The caller's plan name, exactly as in the design (plan rules only check their plan). */
  readonly plan?: string | undefined;
  /**
   * Auth endpoints: the account name being tried (login name, e-mail, client id). Stored
   * only as sha256 of its trimmed, NFKC-normalised, lower-cased form. When identify()
   * leaves it out, it is read from the parsed body (username, email, login, client_id);
   * return it here when your form names the field otherwise. Steps that carry no account
   * name (MFA code, reset confirmation) are keyed on userId, else sessionId: return the
   * account or the pending sign-in's session for them. With none of these, only the per-IP
   * row of the flow applies.
   */
  readonly username?: string | undefined;
}

/**
 * The two commands the middleware needs. An ioredis Redis or Cluster client fits as it is.
 * Recommended ioredis options: enableAutoPipelining: true (the decisions of one event-loop
 * turn go out in one write; see bench/middleware in rl-design for what it saves) and
 * enableOfflineQueue: false (calls fail at once while the store is down, instead of
 * queueing until the timeout).
 */
export interface RedisClientLike {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /**
   * ioredis's variants that leave the reply undecoded. The scripts reply with integers only,
   * so the reply is the same, without the pass that copies it to turn bulk strings into
   * text; used when the client has them.
   */
  evalshaBuffer?(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalBuffer?(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface LimiterOptions<TReq> {
  /** Required when any rule keeps its state in Redis (ioredis Redis or Cluster). */
  readonly redis?: RedisClientLike | undefined;
  /**
   * Who is calling. Resolution order for a rule keyed on a client identity:
   * the rule's own identity if known, else API key > user > tenant > session > client IP.
   */
  readonly identify?: ((req: TReq) => RequestIdentity | undefined | Promise<RequestIdentity | undefined>) | undefined;
  /**
   * Per-rule kill switch / rollout flag: 'enforce', 'shadow' (evaluate and record, never
   * reject) or 'off' (skip). Called on every request with the rule id and its flag name
   * (e.g. ratelimit.<rule>.mode); return undefined to use defaultMode.
   */
  readonly mode?: ((ruleId: string, flag: string | null) => RuleMode | undefined) | undefined;
  /** Mode of a rule the mode() hook says nothing about. Default: DEFAULT_MODE (from the design's rollout). */
  readonly defaultMode?: RuleMode | undefined;
  /** CIDRs of proxies you run. Default: TRUSTED_PROXIES from the design. */
  readonly trustedProxies?: readonly string[] | undefined;
  /** Replaces the trusted-hop walk entirely (e.g. a header your own edge sets and clients can not). */
  readonly clientIp?: ((req: TReq) => string | undefined) | undefined;
  /** IPv6 clients are keyed per network of this length (default 64: one customer's subnet). */
  readonly ipv6PrefixLength?: number | undefined;
  /** First segment of every key the middleware writes (default 'rl'). */
  readonly keyPrefix?: string | undefined;
  /** Per store call; a slower store counts as failed (default 50 ms). */
  readonly timeoutMs?: number | undefined;
  /**
   * prom-client registry (default: prom-client's global one); null turns metrics off.
   * Counts and the latency histogram are kept in plain fields on the request path and
   * handed to prom-client when it collects them (every scrape, or metric.get()), which
   * keeps label validation and hashing off the hot path. The latency histogram is this
   * module's own metric object, registered in the registry like any prom-client metric.
   */
  readonly registry?: Registry | null | undefined;
  /** Plan of callers whose identity names none (default: DEFAULT_PLAN). */
  readonly defaultPlan?: string | undefined;
  /** The in-process bucket in front of Redis, when the design has one (default true). */
  readonly hybrid?: boolean | undefined;
  /** Clock for calendar quota periods (epoch ms; default Date.now). */
  readonly now?: (() => number) | undefined;
  /** Told about every failed store call (the request is then handled by the rule's fail mode). */
  readonly onStoreError?: ((error: unknown, ruleIds: readonly string[]) => void) | undefined;
}

export interface LimiterInput<TReq> {
  readonly method: string;
  /** Path and query as received (origin-form), e.g. /v1/orders/42?x=1. */
  readonly url: string;
  /** The TCP peer address. */
  readonly remoteAddress: string | undefined;
  /** X-Forwarded-For as received (used only when the TCP peer is a trusted proxy). */
  readonly forwardedFor: string | readonly string[] | undefined;
  readonly req: TReq;
}

export interface RuleOutcome {
  readonly ruleId: string;
  readonly mode: 'enforce' | 'shadow';
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  /** store: decided by the store; local: by the in-process bucket; store-failed: fail mode applied. */
  readonly source: 'store' | 'local' | 'store-failed';
}

export interface Decision {
  readonly status: 200 | 429 | 503;
  /** Set these on the response, whatever the status. */
  readonly headers: readonly (readonly [string, string])[];
  /** problem+json body for a 429 or 503; null when the request goes on. */
  readonly body: string | null;
  readonly contentType: string | null;
  /** The rule that rejected the request (429) or whose store failed closed (503). */
  readonly ruleId: string | null;
  readonly exempt: boolean;
  readonly outcomes: readonly RuleOutcome[];
}

export interface RateLimiter<TReq> {
  check(input: LimiterInput<TReq>): Promise<Decision>;
  /** The client address the limiter keys on, for a peer address and X-Forwarded-For. */
  clientIp(remoteAddress: string | undefined, forwardedFor: string | readonly string[] | undefined): string;
  readonly rules: readonly RuleSpec[];
  /** Forgets in-process state and stops its timers. */
  close(): void;
}

const MODES: readonly RuleMode[] = ['enforce', 'shadow', 'off'];
const IDENTITY_LABEL: Readonly<Record<IdentityKind, string>> = {
  global: '',
  'api-key': 'ak:',
  user: 'u:',
  tenant: 't:',
  session: 's:',
  ip: 'ip:',
  username: 'un:',
};
/** Client identities, best first: API key > user > tenant > session > IP. */
const FALLBACK_ORDER: readonly IdentityKind[] = ['api-key', 'user', 'tenant', 'session', 'ip'];
const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function sha1Hex(value: string): string {
  return createHash('sha1').update(value).digest('hex');
}

/**
 * An identity value inside a Redis key: braces (hash-tag delimiters), '%', '~', spaces and
 * control characters are percent-encoded, so a value can never end or open a hash tag; a
 * very long value is replaced by its sha256, so keys stay small.
 */
const KEY_UNSAFE = /[\u0000-\u0020\u007f{}%~]/;

export function keyPart(value: string): string {
  const safe = KEY_UNSAFE.test(value)
    ? value.replace(/[\u0000-\u0020\u007f{}%~]/g, (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0'))
    : value;
  return safe.length > 128 ? '~' + sha256Hex(value) : safe;
}

/** sha256 of the normalised account name: case, width and surrounding spaces never make a new key. */
export function usernameKey(username: string): string {
  return sha256Hex(username.normalize('NFKC').trim().toLowerCase());
}

// ---------------------------------------------------------------------------
// Client IP: the trusted hop only
// ---------------------------------------------------------------------------

/** 4 bytes (IPv4) or 16 bytes (IPv6). */
type IpBytes = Uint8Array;

function parseIPv4(text: string): IpBytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] ?? '';
    // no leading zeros: "010" is octal to some parsers and decimal to others
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseGroups(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const group of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    out.push(parseInt(group, 16));
  }
  return out;
}

function parseIPv6(input: string): IpBytes | null {
  let text = input;
  let tail: IpBytes | null = null;
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  if (text.indexOf('.', lastColon) > lastColon) {
    // an embedded IPv4 tail (::ffff:192.0.2.1) stands for the last two groups
    tail = parseIPv4(text.slice(lastColon + 1));
    if (!tail) return null;
    text = text.slice(0, lastColon + 1) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] ?? '');
  if (!head) return null;
  let groups: number[];
  if (halves.length === 2) {
    const rest = parseGroups(halves[1] ?? '');
    if (!rest) return null;
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = head.concat(new Array<number>(missing).fill(0), rest);
  } else {
    if (head.length !== 8) return null;
    groups = head;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/**
 * Parses one address as it appears in a socket or an X-Forwarded-For entry: IPv4, IPv6,
 * [IPv6]:port, IPv4:port, with an optional zone (%eth0). IPv4-mapped IPv6 (::ffff:a.b.c.d)
 * becomes the IPv4 address, so one client never has two keys.
 */
export function parseIp(input: string): IpBytes | null {
  let text = input.trim();
  if (text.length === 0 || text.length > 64) return null;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return null;
    text = text.slice(1, end);
  } else if (text.indexOf(':') >= 0 && text.indexOf(':') === text.lastIndexOf(':') && text.indexOf('.') >= 0) {
    text = text.slice(0, text.indexOf(':'));
  }
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const bytes = text.indexOf(':') >= 0 ? parseIPv6(text) : parseIPv4(text);
  if (bytes && bytes.length === 16) {
    let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
    for (let i = 0; i < 10 && mapped; i++) if (bytes[i] !== 0) mapped = false;
    if (mapped) return bytes.slice(12);
  }
  return bytes;
}

export interface Cidr {
  readonly bytes: IpBytes;
  readonly bits: number;
}

/** An IPv4 or IPv6 CIDR (a bare address is a /32 or /128). Throws on anything else. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const address = slash >= 0 ? text.slice(0, slash) : text;
  const bytes = parseIp(address);
  if (!bytes) throw new Error('rate limiter: not an IP address or CIDR: ' + JSON.stringify(text));
  const isV6Text = address.indexOf(':') >= 0;
  let bits = bytes.length * 8;
  if (slash >= 0) {
    const raw = text.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(raw)) throw new Error('rate limiter: bad prefix length in ' + JSON.stringify(text));
    bits = Number(raw);
    // an IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range 10.0.0.0/8
    if (isV6Text && bytes.length === 4) bits -= 96;
    if (bits < 0 || bits > bytes.length * 8) throw new Error('rate limiter: bad prefix length in ' + JSON.stringify(text));
  }
  return { bytes, bits };
}

export function inCidr(ip: IpBytes, cidr: Cidr): boolean {
  if (ip.length !== cidr.bytes.length) return false;
  const whole = cidr.bits >> 3;
  for (let i = 0; i < whole; i++) if (ip[i] !== cidr.bytes[i]) return false;
  const rest = cidr.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((ip[whole] ?? 0) & mask) === ((cidr.bytes[whole] ?? 0) & mask);
}

/** Key text for an address: dotted IPv4, or the IPv6 network of prefixLength bits. */
export function formatIp(ip: IpBytes, ipv6PrefixLength = 128): string {
  if (ip.length === 4) return ip.join('.');
  const bytes = ip.slice();
  const bits = Math.max(0, Math.min(128, ipv6PrefixLength));
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = (bytes[i] ?? 0) & ((0xff << (8 - keep)) & 0xff);
  }
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
  // RFC 5952: compress the longest run (two or more) of zero groups
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  const text =
    bestStart < 0
      ? hex.join(':')
      : hex.slice(0, bestStart).join(':') + '::' + hex.slice(bestStart + bestLength).join(':');
  return bits < 128 ? text + '/' + bits : text;
}

/**
 * The client address: the TCP peer, unless the peer is one of our trusted proxies. Then
 * X-Forwarded-For is walked from the right (each entry was appended by the hop to its
 * right), skipping trusted proxies; the first untrusted entry is the client. Entries left
 * of it were written by the client and never matter, so rotating them changes nothing.
 * An unparsable entry stops the walk at the last address we can vouch for.
 */
export function resolveClientIp(
  remoteAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: readonly Cidr[],
  ipv6PrefixLength = 64,
): string {
  const peer = remoteAddress === undefined ? null : parseIp(remoteAddress);
  if (!peer) return 'unknown';
  const isTrusted = (ip: IpBytes): boolean => trusted.some((c) => inCidr(ip, c));
  let client = peer;
  if (isTrusted(peer) && forwardedFor !== undefined) {
    const header = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
    const entries = header.split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const hop = parseIp(entries[i] ?? '');
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
  }
  return formatIp(client, ipv6PrefixLength);
}

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

interface Segment {
  /** 2 static, 1 parameter: a static segment is more specific. */
  readonly rank: 1 | 2;
  readonly text: string;
}

interface CompiledRoute {
  readonly index: number;
  readonly spec: RouteSpec;
  readonly method: string;
  readonly segments: readonly Segment[];
  /** Ends in a catch-all (/*): matches the prefix and anything below it. */
  readonly wildcard: boolean;
}

interface RouteMatch {
  /** The most specific non-wildcard route, as a router would pick it. */
  readonly best: CompiledRoute | null;
  readonly wildcards: readonly CompiledRoute[];
  readonly endpoint: string | null;
  readonly exempt: boolean;
}

function decodeSegment(segment: string): string {
  if (segment.indexOf('%') < 0) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Path segments of a request URL, decoded and lower-cased, without empty segments: the
 * matching is deliberately looser than any router (case, //, trailing /, %-encoding), so a
 * request can not dodge a limit by spelling the path another way.
 */
export function pathSegments(url: string): string[] {
  let path = url;
  if (!path.startsWith('/')) {
    const scheme = path.indexOf('://');
    if (scheme >= 0) {
      const slash = path.indexOf('/', scheme + 3);
      path = slash >= 0 ? path.slice(slash) : '/';
    }
  }
  let end = path.length;
  const query = path.indexOf('?');
  if (query >= 0) end = query;
  const hash = path.indexOf('#');
  if (hash >= 0 && hash < end) end = hash;
  const out: string[] = [];
  for (const raw of path.slice(0, end).split('/')) {
    if (raw !== '') out.push(decodeSegment(raw).toLowerCase());
  }
  return out;
}

function compileRoute(spec: RouteSpec, index: number): CompiledRoute {
  const parts = (spec.route.split('?')[0] ?? '').split('/').filter((p) => p !== '');
  const segments: Segment[] = [];
  let wildcard = false;
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    if (last && (part.startsWith('*') || part === '(.*)' || /^\{\*.*\}$/.test(part) || /^:.*[*+]$/.test(part))) {
      wildcard = true;
    } else if (part.startsWith(':') || part.startsWith('*') || (part.startsWith('{') && part.endsWith('}'))) {
      segments.push({ rank: 1, text: '' });
    } else {
      segments.push({ rank: 2, text: decodeSegment(part).toLowerCase() });
    }
  });
  return { index, spec, method: spec.method.toUpperCase(), segments, wildcard };
}

function methodMatches(routeMethod: string, method: string): boolean {
  return routeMethod === 'ANY' || routeMethod === method || (routeMethod === 'GET' && method === 'HEAD');
}

function segmentsMatch(route: readonly Segment[], path: readonly string[]): boolean {
  for (let i = 0; i < route.length; i++) {
    const s = route[i] as Segment;
    if (s.rank === 2 && s.text !== path[i]) return false;
  }
  return true;
}

function moreSpecific(a: CompiledRoute, b: CompiledRoute): boolean {
  for (let i = 0; i < a.segments.length; i++) {
    const x = (a.segments[i] as Segment).rank;
    const y = (b.segments[i] as Segment).rank;
    if (x !== y) return x > y;
  }
  return a.method !== 'ANY' && b.method === 'ANY';
}

function matchRoutes(routes: readonly CompiledRoute[], method: string, path: readonly string[]): RouteMatch {
  let best: CompiledRoute | null = null;
  const wildcards: CompiledRoute[] = [];
  for (const route of routes) {
    if (!methodMatches(route.method, method)) continue;
    if (route.wildcard) {
      if (path.length >= route.segments.length && segmentsMatch(route.segments, path)) wildcards.push(route);
    } else if (route.segments.length === path.length && segmentsMatch(route.segments, path)) {
      if (best === null || moreSpecific(route, best)) best = route;
    }
  }
  let widest: CompiledRoute | null = null;
  for (const w of wildcards) if (widest === null || w.segments.length > widest.segments.length) widest = w;
  const owner = best ?? widest;
  return {
    best,
    wildcards,
    endpoint: owner ? owner.spec.endpoint : null,
    exempt: owner ? owner.spec.exempt : false,
  };
}

/**
 * The request path as the matcher reads it: the segments pathSegments() gives, as bounds
 * into one string, so that matching allocates nothing. A plain path (lower-case ASCII, no
 * %-escapes: nearly every request) is read in one pass over the URL itself; anything else
 * goes through pathSegments() and its decoded segments are joined.
 */
class PathView {
  text = '';
  count = 0;
  /** Segment i is text.slice(starts[i], ends[i]) (plain arrays, reused: no allocation per request). */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  read(url: string): void {
    this.count = 0;
    this.text = url;
    let start = 0;
    if (url.charCodeAt(0) !== 47 /* / */) {
      const scheme = url.indexOf('://');
      if (scheme >= 0) {
        start = url.indexOf('/', scheme + 3);
        if (start < 0) return;
      }
    }
    let segment = start;
    let plain = true;
    let i = start;
    for (; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 47 /* / */) {
        if (i > segment) this.push(segment, i);
        segment = i + 1;
      } else if (c === 63 /* ? */ || c === 35 /* # */) {
        break;
      } else if (c === 37 /* % */ || (c >= 65 && c <= 90) /* A-Z */ || c > 127) {
        plain = false;
      }
    }
    if (i > segment) this.push(segment, i);
    if (plain) return;
    this.count = 0;
    let text = '';
    for (const decoded of pathSegments(url)) {
      this.push(text.length, text.length + decoded.length);
      text += decoded;
    }
    this.text = text;
  }

  private push(start: number, end: number): void {
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.count++;
  }

  /** Whether the route's static segments are those of the path (lengths checked by the caller). */
  matches(route: readonly Segment[]): boolean {
    for (let i = 0; i < route.length; i++) {
      const s = route[i] as Segment;
      if (s.rank !== 2) continue;
      const start = this.starts[i] as number;
      if ((this.ends[i] as number) - start !== s.text.length) return false;
      // a plain loop: startsWith(text, position) costs more for segments this short
      for (let j = 0; j < s.text.length; j++) if (this.text.charCodeAt(start + j) !== s.text.charCodeAt(j)) return false;
    }
    return true;
  }
}

interface MatchNode<T> {
  value: T | undefined;
  readonly next: (MatchNode<T> | undefined)[];
}

/**
 * Route matching with the answer cached per combination of matched routes. What applies to
 * a request depends only on which routes it matches (the most specific plain route and the
 * catch-alls), so the answer is worked out once per combination (by matchRoutes) and kept
 * in a small tree, walked one step per matched catch-all and one for the plain route: a
 * request whose combination is known allocates nothing here.
 */
class RouteTable<T> {
  private readonly routes: readonly CompiledRoute[];
  private readonly build: (match: RouteMatch) => T;
  private readonly root: MatchNode<T> = { value: undefined, next: [] };
  private readonly view = new PathView();

  constructor(routes: readonly CompiledRoute[], build: (match: RouteMatch) => T) {
    this.routes = routes;
    this.build = build;
  }

  /** method: upper case. */
  lookup(method: string, url: string): T {
    const view = this.view;
    view.read(url);
    let node = this.root;
    let best: CompiledRoute | null = null;
    for (const route of this.routes) {
      if (!methodMatches(route.method, method)) continue;
      const length = route.segments.length;
      if ((route.wildcard ? view.count < length : view.count !== length) || !view.matches(route.segments)) continue;
      if (route.wildcard) node = step(node, route.index);
      else if (best === null || moreSpecific(route, best)) best = route;
    }
    // the last step: the plain route (index), or none (one past the last index)
    node = step(node, best === null ? this.routes.length : best.index);
    if (node.value === undefined) node.value = this.build(matchRoutes(this.routes, method, pathSegments(url)));
    return node.value;
  }
}

function step<T>(node: MatchNode<T>, index: number): MatchNode<T> {
  let next = node.next[index];
  if (next === undefined) {
    next = { value: undefined, next: [] };
    node.next[index] = next;
  }
  return next;
}

// ---------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------

type KeyPiece = string | { readonly slot: 'identity' | 'period'; readonly label: string };

/** Splits a key pattern such as {t:<tenant-id>}:quota:<yyyy-mm> into text and slots. */
function parseKeyPattern(pattern: string): KeyPiece[] {
  const out: KeyPiece[] = [];
  const re = /([A-Za-z0-9_-]+:)?<([^<>]*)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(pattern)) !== null) {
    if (m.index > last) out.push(pattern.slice(last, m.index));
    const name = (m[2] ?? '').toLowerCase();
    out.push({ slot: name.indexOf('yyyy') >= 0 ? 'period' : 'identity', label: m[1] ?? '' });
    last = re.lastIndex;
  }
  if (last < pattern.length) out.push(pattern.slice(last));
  return out;
}

interface Slot {
  /** null keeps the pattern's own label (e.g. t:); a fallback identity brings its own. */
  readonly label: string | null;
  readonly value: string;
}

function renderKey(prefix: string, pieces: readonly KeyPiece[], slot: Slot | null, period: string): string {
  let out = prefix + ':';
  let placed = slot === null;
  for (const piece of pieces) {
    if (typeof piece === 'string') out += piece;
    else if (piece.slot === 'period') out += piece.label + period;
    else if (slot !== null) {
      out += (slot.label ?? piece.label) + slot.value;
      placed = true;
    }
  }
  // a pattern without an identity placeholder still gets one key per identity
  if (!placed && slot !== null) out += ':' + (slot.label ?? '') + slot.value;
  return out;
}

/**
 * A key pattern with one identity slot and no window slot, split for the per-request
 * concatenation head + label + identity value + tail (what renderKey gives for it).
 * Null for the patterns renderKey handles: no identity slot, a window slot, several slots.
 */
interface KeyShape {
  readonly head: string;
  /** The pattern's own label (e.g. t:); a fallback identity brings its own. */
  readonly label: string;
  readonly tail: string;
}

function keyShape(prefix: string, pieces: readonly KeyPiece[]): KeyShape | null {
  let head = prefix + ':';
  let label: string | null = null;
  let tail = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      if (label === null) head += piece;
      else tail += piece;
    } else if (piece.slot === 'period' || label !== null) {
      return null;
    } else {
      label = piece.label;
    }
  }
  return label === null ? null : { head, label, tail };
}

/** The Redis Cluster hash tag of a key: the text inside the first {...}, or null. */
function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : null;
}

// ---------------------------------------------------------------------------
// Calendar periods in an IANA time zone (quota windows)
// ---------------------------------------------------------------------------

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zonedFields(ms: number, timeZone: string): number[] {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneFormats.set(timeZone, format);
  }
  const fields: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(ms))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return [fields.year ?? 1970, fields.month ?? 1, fields.day ?? 1, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0];
}

function zoneOffsetMs(ms: number, timeZone: string): number {
  const f = zonedFields(ms, timeZone);
  const asUtc = Date.UTC(f[0] ?? 1970, (f[1] ?? 1) - 1, f[2] ?? 1, f[3] ?? 0, f[4] ?? 0, f[5] ?? 0);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/** Epoch ms of local midnight starting (year, month, day) in the zone (DST-aware). */
function zonedMidnight(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  const first = guess - zoneOffsetMs(guess, timeZone);
  return guess - zoneOffsetMs(first, timeZone);
}

function pad2(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

/** The calendar day or month containing ms, in the zone: its id (2026-03 / 2026-03-29) and bounds. */
export function calendarPeriod(
  ms: number,
  period: 'day' | 'month',
  timeZone: string,
): { id: string; start: number; end: number } {
  const f = zonedFields(ms, timeZone);
  const y = f[0] ?? 1970;
  const m = f[1] ?? 1;
  const d = f[2] ?? 1;
  if (period === 'month') {
    return {
      id: y + '-' + pad2(m),
      start: zonedMidnight(y, m, 1, timeZone),
      end: m === 12 ? zonedMidnight(y + 1, 1, 1, timeZone) : zonedMidnight(y, m + 1, 1, timeZone),
    };
  }
  const next = new Date(Date.UTC(y, m - 1, d + 1));
  return {
    id: y + '-' + pad2(m) + '-' + pad2(d),
    start: zonedMidnight(y, m, d, timeZone),
    end: zonedMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}

// ---------------------------------------------------------------------------
// Stores: Redis (EVALSHA, NOSCRIPT -> EVAL) and the in-process twin of each script
// ---------------------------------------------------------------------------

/** Every script returns {allowed, remaining, retry_after_ms, reset_ms[, denied_by]}. */
type Reply = readonly number[];

export class StoreError extends Error {
  readonly reason: 'timeout' | 'connection' | 'script';

  constructor(reason: 'timeout' | 'connection' | 'script', message: string) {
    super(message);
    this.name = 'StoreError';
    this.reason = reason;
  }
}

function failureReason(error: unknown): 'timeout' | 'connection' | 'script' {
  if (error instanceof StoreError) return error.reason;
  const e = error as { name?: unknown; message?: unknown } | null;
  const name = e && typeof e.name === 'string' ? e.name : '';
  const message = e && typeof e.message === 'string' ? e.message : '';
  if (name === 'ReplyError' || /^(ERR|CROSSSLOT|WRONGTYPE|NOSCRIPT)\b/.test(message)) return 'script';
  return 'connection';
}

/** Who hears how a store call ended. */
interface StoreListener {
  stored(reply: Reply): void;
  failed(error: unknown): void;
}

/**
 * One store call in flight. It settles once: with the reply, with the client's error, or
 * with StoreError('timeout') when its deadline passes first; its listener hears which.
 */
class StoreCall {
  settled = false;
  readonly script: BoundScript;
  readonly numKeys: number;
  /** The keys, then the arguments (kept for the EVAL retry on NOSCRIPT). */
  readonly argv: readonly (string | number)[];
  readonly listener: StoreListener;
  /** performance.now() when sent, and when it times out. */
  readonly started: number;
  readonly deadline: number;
  /** Neighbours in the Deadlines queue while pending. */
  prev: StoreCall | null = null;
  next: StoreCall | null = null;
  queued = false;

  constructor(script: BoundScript, numKeys: number, argv: readonly (string | number)[], listener: StoreListener, started: number, deadline: number) {
    this.script = script;
    this.numKeys = numKeys;
    this.argv = argv;
    this.listener = listener;
    this.started = started;
    this.deadline = deadline;
  }
}

let replyClock = -1;

function clearReplyClock(): void {
  replyClock = -1;
}

/**
 * When replies arrived (performance.now()), read once per microtask checkpoint: the client
 * settles all the replies of one socket read together, so their calls settle in the same
 * checkpoint and one clock reading, the one taken closest to their arrival, serves them all.
 * The reading is dropped once the tasks queued before it have run. (Calls are stamped with a
 * fresh reading when they are sent.)
 */
function replyTime(): number {
  if (replyClock < 0) {
    replyClock = performance.now();
    queueMicrotask(clearReplyClock);
  }
  return replyClock;
}

/**
 * Per-call timeouts with ONE timer instead of a setTimeout per call. Every call of a limiter
 * has the same timeout, so deadlines come due in the order the calls were sent: pending
 * calls wait in a doubly linked list in that order (no allocation, no hashing), a call that
 * settles is unlinked at once (nothing stays referenced once it has answered), and the
 * timer only ever waits for the oldest pending call.
 * An expired call is failed from setImmediate, which runs after the poll phase of the same
 * loop turn: when the event loop itself was stalled, a reply already sitting in the socket
 * still wins, and only a store that really did not answer counts as timed out.
 */
class Deadlines {
  private head: StoreCall | null = null;
  private tail: StoreCall | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly expire: (call: StoreCall) => void;

  constructor(expire: (call: StoreCall) => void) {
    this.expire = expire;
  }

  add(call: StoreCall): void {
    call.prev = this.tail;
    if (this.tail !== null) this.tail.next = call;
    else this.head = call;
    this.tail = call;
    call.queued = true;
    if (this.timer === null) this.arm(call.deadline);
  }

  remove(call: StoreCall): void {
    if (!call.queued) return;
    call.queued = false;
    if (call.prev !== null) call.prev.next = call.next;
    else this.head = call.next;
    if (call.next !== null) call.next.prev = call.prev;
    else this.tail = call.prev;
    call.prev = null;
    call.next = null;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(at - performance.now())));
  }

  private readonly fire = (): void => {
    this.timer = null;
    const now = performance.now();
    for (let call = this.head; call !== null; call = this.head) {
      if (call.deadline > now) {
        this.arm(call.deadline);
        return;
      }
      this.remove(call);
      setImmediate(this.expire, call);
    }
  };

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    while (this.head !== null) this.remove(this.head);
  }
}

function toReply(raw: unknown): Reply {
  if (!Array.isArray(raw) || raw.length < 4) throw new StoreError('script', 'rate limiter script returned an unexpected reply');
  for (const v of raw) if (typeof v !== 'number') return raw.map((x) => Number(x));
  return raw as number[];
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

function nowUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

interface MemoryEntry {
  value: number | number[] | Map<number, number>;
  expiresAt: number;
}

/**
 * The scripts' algorithms for state kept in this process (rules whose primitive is
 * in-process). Same arguments, same replies; node runs each call to completion, so a
 * decision is atomic here too. Only correct for one instance: the state is not shared.
 */
class MemoryStore {
  private readonly data = new Map<string, MemoryEntry>();
  private writes = 0;

  run(script: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const a = args.map((x) => x);
    if (script === 'gcra') return this.gcra(keys[0] ?? '', Number(a[0]), Number(a[1]), Number(a[2]), Number(a[3]));
    if (script === 'sliding-window-log') return this.log(keys, a);
    return this.window(keys[0] ?? '', a);
  }

  private get(key: string, nowMs: number): MemoryEntry | undefined {
    const entry = this.data.get(key);
    if (entry && entry.expiresAt <= nowMs) {
      this.data.delete(key);
      return undefined;
    }
    return entry;
  }

  private set(key: string, value: MemoryEntry['value'], expiresAt: number): void {
    this.data.set(key, { value, expiresAt });
    if (++this.writes % 1000 === 0) {
      const now = Date.now();
      for (const [k, e] of this.data) if (e.expiresAt <= now) this.data.delete(k);
    }
  }

  private gcra(key: string, burst: number, rate: number, periodMs: number, cost: number): Reply {
    const interval = Math.ceil((periodMs * 1000) / rate);
    const tolerance = burst * interval;
    const now = nowUs();
    const entry = this.get(key, now / 1000);
    let tat = typeof entry?.value === 'number' ? entry.value : 0;
    if (tat < now) tat = now;
    const ahead = tat + cost * interval - now;
    if (ahead > tolerance) {
      return [0, Math.floor((tolerance - tat + now) / interval), cost <= burst ? Math.ceil((ahead - tolerance) / 1000) : -1, Math.ceil((tat - now) / 1000)];
    }
    const reset = Math.ceil(ahead / 1000);
    this.set(key, tat + cost * interval, now / 1000 + reset);
    return [1, Math.floor((tolerance - ahead) / interval), 0, reset];
  }

  private log(keys: readonly string[], args: readonly (string | number)[]): Reply {
    const n = keys.length;
    const cost = Number(args[2 * n]) || 1;
    const now = nowUs();
    const logs: number[][] = [];
    let remaining = Infinity;
    let retry = 0;
    let deniedBy = 0;
    for (let i = 0; i < n; i++) {
      const limit = Number(args[2 * i]);
      const window = Number(args[2 * i + 1]) * 1000;
      const entry = this.get(keys[i] ?? '', now / 1000);
      const live = (Array.isArray(entry?.value) ? entry.value : []).filter((t) => t > now - window);
      logs.push(live);
      remaining = Math.min(remaining, limit - live.length);
      if (live.length + cost > limit) {
        let wait = -1;
        if (cost <= limit) wait = Math.ceil(((live[live.length + cost - limit - 1] ?? now) + window - now) / 1000);
        if (deniedBy === 0 || (retry !== -1 && (wait === -1 || wait > retry))) {
          retry = wait;
          deniedBy = i + 1;
        }
      }
    }
    remaining = Math.max(0, remaining);
    if (deniedBy > 0) {
      let reset = 0;
      logs.forEach((live, i) => {
        const newest = live[live.length - 1];
        if (newest !== undefined) reset = Math.max(reset, Math.ceil((newest + Number(args[2 * i + 1]) * 1000 - now) / 1000));
      });
      return [0, remaining, retry, reset, deniedBy];
    }
    let windowMax = 0;
    logs.forEach((live, i) => {
      const windowMs = Number(args[2 * i + 1]);
      for (let c = 0; c < cost; c++) live.push(now);
      this.set(keys[i] ?? '', live, now / 1000 + windowMs);
      windowMax = Math.max(windowMax, windowMs);
    });
    return [1, remaining - cost, 0, windowMax, 0];
  }

  private window(key: string, args: readonly (string | number)[]): Reply {
    const limit = Number(args[1]);
    const cost = Number(args[2]) || 1;
    const now = Math.floor(nowUs() / 1000);
    if (args[0] === 'calendar') {
      const end = Number(args[3]);
      const slack = Number(args[4] ?? 60000);
      const reset = Math.max(0, end - now);
      const entry = this.get(key, now);
      const used = typeof entry?.value === 'number' ? entry.value : 0;
      if (used + cost > limit) return [0, Math.max(0, limit - used), cost <= limit ? Math.max(1, reset) : -1, reset];
      this.set(key, used + cost, entry ? entry.expiresAt : Math.max(end, now) + slack);
      return [1, limit - used - cost, 0, reset];
    }
    const windowMs = Number(args[3]);
    const bucketMs = Number(args[4]);
    const buckets = Math.floor(windowMs / bucketMs);
    const current = Math.floor(now / bucketMs);
    const oldest = current - buckets + 1;
    const entry = this.get(key, now);
    const counts = entry?.value instanceof Map ? entry.value : new Map<number, number>();
    let used = 0;
    const live: number[] = [];
    for (const [id, count] of counts) {
      if (id < oldest) counts.delete(id);
      else {
        used += count;
        live.push(id);
      }
    }
    live.sort((x, y) => x - y);
    const reset = live.length > 0 ? ((live[live.length - 1] ?? current) + buckets) * bucketMs - now : 0;
    if (used + cost > limit) {
      let retry = -1;
      if (cost <= limit) {
        let freed = 0;
        for (const id of live) {
          freed += counts.get(id) ?? 0;
          if (freed >= used + cost - limit) {
            retry = (id + buckets) * bucketMs - now;
            break;
          }
        }
      }
      return [0, Math.max(0, limit - used), retry, reset];
    }
    counts.set(current, (counts.get(current) ?? 0) + cost);
    const expireAt = (current + buckets) * bucketMs;
    this.set(key, counts, expireAt);
    return [1, limit - used - cost, 0, expireAt - now];
  }

  clear(): void {
    this.data.clear();
  }
}

// ---------------------------------------------------------------------------
// Metrics (prom-client, with the design's metric names)
// ---------------------------------------------------------------------------

/** A counter series bound to its label values once: inc() is all a request pays. */
interface CounterCell {
  inc(): void;
}

/**
 * A count waiting to be handed to prom-client. prom-client validates and hashes the labels
 * on every inc(), which would cost more than the rest of a decision; each series is counted
 * in a plain field here instead, and added to the prom-client counter when it is collected
 * (at every scrape, and by metric.get()).
 */
class PendingCell implements CounterCell {
  n = 0;
  readonly labels: Record<string, string>;

  constructor(labels: Record<string, string>) {
    this.labels = labels;
  }

  inc(): void {
    this.n++;
  }
}

/** A series of a counter someone else registered under the design's name: counted into directly. */
class DirectCell implements CounterCell {
  private readonly counter: Counter<string>;
  private readonly labels: Record<string, string>;

  constructor(counter: Counter<string>, labels: Record<string, string>) {
    this.counter = counter;
    this.labels = labels;
    // the series exists at 0 from the start (see counterFor)
    counter.inc(labels, 0);
  }

  inc(): void {
    this.counter.inc(this.labels);
  }
}

const NO_CELL: CounterCell = { inc: () => undefined };

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((name, i) => (labels[name] = values[i] ?? ''));
  return labels;
}

/** Pending cells per registry and metric name, so several limiters on one registry add up. */
const sinks = new WeakMap<Registry, Map<string, Map<string, PendingCell>>>();

/**
 * The cell of one series of a counter (call it once per series, not per request). Every cell
 * is exported from the first collection on, at 0 until it counts: a series that appeared only
 * with its first event would make that event invisible to rate() and increase() (nothing to
 * compare it with), so a single fail-open after a restart would never page. The label values
 * come from the design (rule ids, outcomes, plans), never from a request, so the series are
 * bounded: rules x outcomes.
 */
function counterFor(registry: Registry, spec: MetricSpec, labelNames: readonly string[]): (values: readonly string[]) => CounterCell {
  let byName = sinks.get(registry);
  if (!byName) {
    byName = new Map();
    sinks.set(registry, byName);
  }
  let pending = byName.get(spec.name);
  const existing = registry.getSingleMetric(spec.name) as Counter<string> | undefined;
  if (!pending && existing) return (values) => new DirectCell(existing, labelsOf(labelNames, values));
  if (!pending) {
    const cells = new Map<string, PendingCell>();
    pending = cells;
    byName.set(spec.name, cells);
    new Counter({
      name: spec.name,
      help: spec.help,
      labelNames: labelNames.slice(),
      registers: [registry],
      collect() {
        for (const cell of cells.values()) {
          // inc(labels, 0) creates the series at 0, as prom-client users pre-initialise them
          this.inc(cell.labels, cell.n);
          cell.n = 0;
        }
      },
    });
  }
  const cells = pending;
  return (values) => {
    const id = values.join('\u0000');
    let cell = cells.get(id);
    if (!cell) {
      cell = new PendingCell(labelsOf(labelNames, values));
      cells.set(id, cell);
    }
    return cell;
  };
}

interface LatencyObserver {
  observe(ms: number): void;
}

const LATENCY_BUCKETS: readonly number[] = [0.25, 0.5, 1, 2, 5, 10, 25, 50, 100];

/** One series of the latency histogram: a count per bucket (the last one: above every bound), sum, count. */
class LatencySeries implements LatencyObserver {
  readonly labels: Record<string, string>;
  readonly counts: number[] = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  constructor(labels: Record<string, string>) {
    this.labels = labels;
  }

  observe(ms: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && ms > (LATENCY_BUCKETS[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += ms;
    this.count++;
  }
}

interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * The store-latency histogram, with the series of a prom-client histogram
 * (<name>_bucket{le, script}, <name>_sum, <name>_count). prom-client's own Histogram
 * validates and hashes the labels and finds the bucket through an object keyed by the bound
 * as a string on every observe(), which costs more than the rest of a decision; this one
 * counts into plain arrays and builds the series only when the registry collects it. It is
 * registered in the registry like any prom-client metric (get(), reset()), and several
 * limiters on one registry share it.
 */
class LatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[] = ['script'];
  private readonly series = new Map<string, LatencySeries>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  labels(script: string): LatencySeries {
    let series = this.series.get(script);
    if (!series) {
      series = new LatencySeries({ script });
      this.series.set(script, series);
    }
    return series;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: HistogramValue[] }> {
    const values: HistogramValue[] = [];
    for (const s of this.series.values()) {
      if (s.count === 0) continue;
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: this.name + '_bucket' });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: this.name + '_bucket' });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: this.name + '_sum' });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: this.name + '_count' });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** The latency series of one script (call it once per script, not per request). */
function latencyFor(registry: Registry, spec: MetricSpec): (script: string) => LatencyObserver {
  const existing: unknown = registry.getSingleMetric(spec.name);
  if (existing instanceof LatencyHistogram) return (script) => existing.labels(script);
  // a histogram someone else registered under the design's name (prom-client's, or another core's)
  if (existing) return (script) => (existing as Histogram<string>).labels(script);
  const histogram = new LatencyHistogram(spec.name, spec.help);
  // prom-client's types only name its own classes; the registry needs name, get() and reset()
  registry.registerMetric(histogram as unknown as Histogram<string>);
  return (script) => histogram.labels(script);
}

/** The counters of one rule, bound once when the limiter is created. */
interface RuleMetrics {
  /** ratelimit_decisions_total{result=allowed | throttled | shadow_throttled} */
  readonly allowed: CounterCell;
  readonly throttled: CounterCell;
  readonly shadowThrottled: CounterCell;
  /** ratelimit_throttled_total{mode=enforce | shadow} */
  readonly throttledEnforce: CounterCell;
  readonly throttledShadow: CounterCell;
  readonly failOpen: CounterCell;
  readonly failures: Readonly<Record<'timeout' | 'connection' | 'script', CounterCell>>;
  /** ratelimit_near_limit_total: admitted with fewer than nearBelow units left. */
  readonly nearLimit: CounterCell;
  readonly nearBelow: number;
}

/**
 * An admitted decision is near the limit when it leaves fewer than this share of the rule's
 * capacity (its burst, or the window's limit): the design's RateLimitNearLimit alert divides
 * ratelimit_near_limit_total by the allowed decisions.
 */
const NEAR_LIMIT_FRACTION = 0.2;

function nearBelow(spec: RuleSpec): number {
  return NEAR_LIMIT_FRACTION * (spec.burst ?? spec.limit);
}

interface Metrics {
  rule(spec: RuleSpec): RuleMetrics;
  quotaExhausted(rule: string, plan: string): void;
  latency(script: string): LatencyObserver;
}

const NO_LATENCY: LatencyObserver = { observe: () => undefined };

const NO_METRICS: Metrics = {
  rule: () => ({
    nearLimit: NO_CELL,
    nearBelow: 0,
    allowed: NO_CELL,
    throttled: NO_CELL,
    shadowThrottled: NO_CELL,
    throttledEnforce: NO_CELL,
    throttledShadow: NO_CELL,
    failOpen: NO_CELL,
    failures: { timeout: NO_CELL, connection: NO_CELL, script: NO_CELL },
  }),
  quotaExhausted: () => undefined,
  latency: () => NO_LATENCY,
};

function createMetrics(registry: Registry | null): Metrics {
  if (registry === null) return NO_METRICS;
  const decisions = counterFor(registry, METRICS.decisions, ['rule', 'result']);
  const throttled = counterFor(registry, METRICS.throttled, ['rule', 'mode']);
  const failures = counterFor(registry, METRICS.failures, ['rule', 'reason']);
  const failOpen = counterFor(registry, METRICS.failOpen, ['rule']);
  const nearLimit = counterFor(registry, METRICS.nearLimit, ['rule']);
  const quota = METRICS.quotaExhausted ? counterFor(registry, METRICS.quotaExhausted, ['rule', 'plan']) : null;
  // the plan label: a plan of the design, else '' (never free text from a request)
  const planLabel = (plan: string): string => (PLANS.indexOf(plan) >= 0 ? plan : '');
  if (quota) {
    for (const r of RULES) if (r.tier === 'quota') quota([r.id, planLabel(r.plan ?? '')]);
  }
  return {
    rule: (spec) => ({
      nearLimit: nearLimit([spec.id]),
      nearBelow: nearBelow(spec),
      allowed: decisions([spec.id, 'allowed']),
      throttled: decisions([spec.id, 'throttled']),
      shadowThrottled: decisions([spec.id, 'shadow_throttled']),
      throttledEnforce: throttled([spec.id, 'enforce']),
      throttledShadow: throttled([spec.id, 'shadow']),
      failOpen: failOpen([spec.id]),
      failures: { timeout: failures([spec.id, 'timeout']), connection: failures([spec.id, 'connection']), script: failures([spec.id, 'script']) },
    }),
    quotaExhausted: (rule, plan) => quota?.([rule, planLabel(plan)]).inc(),
    latency: latencyFor(registry, METRICS.latency),
  };
}

// ---------------------------------------------------------------------------
// The optional in-process bucket in front of Redis (design.enforcement.hybrid)
// ---------------------------------------------------------------------------

/** Replies the in-process bucket gave without asking Redis. */
const localReplies = new WeakSet<Reply>();

function markLocal(reply: Reply): Reply {
  localReplies.add(reply);
  return reply;
}

interface LocalState {
  /** Tokens this instance may still admit without asking Redis. */
  credit: number;
  /** Tokens admitted locally and not yet charged to Redis. */
  pending: number;
  flushing: boolean;
  scheduled: boolean;
  /** While a charge is refused, requests for the key are refused here until it is paid. */
  blockedUntil: number;
  attempts: number;
  remaining: number;
  resetMs: number;
}

/**
 * Absorbs micro-bursts without a network hop: after Redis admits a request and reports
 * R tokens left, this instance may admit up to min(localBurst, R) more on its own, and
 * charges them to Redis in one call right after (same tick batch). The credit is backed
 * by what Redis reported, so one instance alone never over-admits; with N instances each
 * holding credit for the same identity at once, the fleet can admit at most
 * N x localBurst requests beyond the limit (the design's stated over-admission) before
 * the charges land. At any moment one instance holds at most localBurst uncharged
 * admissions per key: credit + pending never exceeds localBurst. A refused charge is a
 * debt: the key is refused on this instance until the debt is paid (retried after the
 * Retry-After Redis returns), so locally admitted requests are still counted and the
 * long-run rate stays the configured one. A debt still unpaid after five tries is dropped.
 */
class LocalBuckets {
  private readonly states = new Map<string, LocalState>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly localBurst: number;
  private readonly maxKeys: number;

  constructor(localBurst: number, maxKeys: number) {
    this.localBurst = localBurst;
    this.maxKeys = maxKeys;
  }

  /**
   * call(cost) asks Redis; a failed synchronous call rejects to the caller (whose fail mode
   * applies), a failed background charge is reported to onFlushError.
   */
  decide(key: string, cost: number, call: (cost: number) => Promise<Reply>, onFlushError: (error: unknown) => void): Reply | Promise<Reply> {
    const state = this.state(key);
    const now = Date.now();
    if (state.pending > 0 && state.blockedUntil > now) {
      const wait = state.blockedUntil - now;
      return markLocal([0, 0, wait, Math.max(wait, state.resetMs)]);
    }
    if (state.credit >= cost) {
      state.credit -= cost;
      state.pending += cost;
      this.schedule(state, call, onFlushError);
      return markLocal([1, Math.max(0, state.remaining - state.pending), 0, state.resetMs]);
    }
    return call(cost).then((reply) => {
      if (reply[0] === 1) this.learn(state, reply);
      return reply;
    });
  }

  private learn(state: LocalState, reply: Reply): void {
    state.remaining = reply[1] ?? 0;
    state.resetMs = reply[3] ?? 0;
    state.credit = Math.max(0, Math.min(this.localBurst - state.pending, state.remaining - state.pending));
  }

  private schedule(state: LocalState, call: (cost: number) => Promise<Reply>, onError: (error: unknown) => void): void {
    if (state.flushing || state.scheduled) return;
    state.scheduled = true;
    setImmediate(() => {
      state.scheduled = false;
      this.flush(state, call, onError);
    });
  }

  private flush(state: LocalState, call: (cost: number) => Promise<Reply>, onError: (error: unknown) => void): void {
    if (state.flushing || state.pending === 0) return;
    state.flushing = true;
    const amount = state.pending;
    call(amount).then(
      (reply) => {
        state.flushing = false;
        if (reply[0] === 1) {
          state.pending -= amount;
          state.attempts = 0;
          this.learn(state, reply);
          if (state.pending > 0) this.schedule(state, call, onError);
          return;
        }
        state.credit = 0;
        const wait = reply[2] ?? -1;
        if (wait < 0 || ++state.attempts > 5) {
          state.pending = 0;
          state.attempts = 0;
          return;
        }
        state.blockedUntil = Date.now() + wait;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.flush(state, call, onError);
        }, wait);
        timer.unref?.();
        this.timers.add(timer);
      },
      (error: unknown) => {
        // the store failed: the charge is lost (at most localBurst), and the next request asks Redis
        state.flushing = false;
        state.credit = 0;
        state.pending = 0;
        onError(error);
      },
    );
  }

  private state(key: string): LocalState {
    let state = this.states.get(key);
    if (!state) {
      if (this.states.size >= this.maxKeys) this.evict();
      state = { credit: 0, pending: 0, flushing: false, scheduled: false, blockedUntil: 0, attempts: 0, remaining: 0, resetMs: 0 };
      this.states.set(key, state);
    }
    return state;
  }

  private evict(): void {
    let drop = Math.max(1, Math.floor(this.maxKeys / 10));
    for (const [key, state] of this.states) {
      if (drop === 0) break;
      if (state.pending === 0 && !state.flushing && !state.scheduled) {
        this.states.delete(key);
        drop--;
      }
    }
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.states.clear();
  }
}

// ---------------------------------------------------------------------------
// Responses: headers in the design's one convention, problem+json bodies
// ---------------------------------------------------------------------------

const sfStrings = new Map<string, string>();

/** A Structured Fields string (rule ids are plain, but nothing unescaped gets through). */
function sfString(text: string): string {
  let out = sfStrings.get(text);
  if (out === undefined) {
    out = '"' + text.replace(/[\\"]/g, (c) => '\\' + c).replace(/[^\u0020-\u007e]/g, '') + '"';
    sfStrings.set(text, out);
  }
  return out;
}

/** What one response states about a rule. */
export interface Shown {
  /** q / the Limit header: a soft quota's plan quota, a bucket's burst, a window's limit. */
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the bucket is full again, or the window (quota period) resets. */
  readonly resetSeconds: number;
  /** w / windowSeconds: see policyWindowSeconds; a calendar quota's current period length. */
  readonly windowSeconds: number;
  /** Units used past a soft plan quota in this period (0 within the quota). */
  readonly overQuota: number;
}

/**
 * The window a rule's policy states (w, and windowSeconds in bodies), in whole seconds.
 * Token-bucket (GCRA) rules: the time a drained bucket takes to refill completely, burst /
 * rate, so q = burst per w is the rule's real sustained rate, and the reset (t) counts down
 * to a full bucket. Window rules: the window. Calendar quotas use their current period's
 * real length instead (a month is 28 to 31 days; see windowSecondsOf in createLimiter).
 */
export function policyWindowSeconds(rule: { readonly limit: number; readonly periodSeconds: number; readonly burst: number | null }): number {
  if (rule.burst === null) return Math.max(1, Math.round(rule.periodSeconds));
  return Math.max(1, Math.ceil((rule.burst * rule.periodSeconds) / rule.limit - 1e-9));
}

function shown(rule: RuleSpec, outcome: RuleOutcome, windowSeconds: number): Shown {
  const limit = rule.quota ?? rule.burst ?? rule.limit;
  const over = rule.quota === null ? 0 : rule.limit - rule.quota;
  return {
    limit,
    remaining: Math.max(0, Math.min(limit, outcome.remaining - over)),
    resetSeconds: Math.max(0, Math.ceil(outcome.resetMs / 1000)),
    windowSeconds,
    overQuota: outcome.allowed ? Math.max(0, over - outcome.remaining) : 0,
  };
}

/** The header that states a rule's limit (structured fields: its policy item, q per w). */
function limitHeader(rule: RuleSpec, windowSeconds: number): readonly [string, string] {
  const limit = rule.quota ?? rule.burst ?? rule.limit;
  switch (HEADER_CONVENTION) {
    case 'ietf-structured':
      return ['RateLimit-Policy', sfString(rule.id) + ';q=' + limit + ';w=' + windowSeconds];
    case 'ietf-trio':
      return ['RateLimit-Limit', String(limit)];
    case 'x-ratelimit':
      return ['X-RateLimit-Limit', String(limit)];
  }
}

/** The same on every response of a window length, so kept per rule (calendar quotas: per period). */
function limitHeaderOf(rule: ActiveRule, windowSeconds: number): readonly [string, string] {
  if (rule.limitWindow !== windowSeconds) {
    rule.limitHeader = limitHeader(rule.spec, windowSeconds);
    rule.limitWindow = windowSeconds;
  }
  return rule.limitHeader;
}

/** The quota trio of the single-value conventions, beside their own trio (which states the tightest rule). */
const QUOTA_HEADERS: readonly [string, string, string] =
  HEADER_CONVENTION === 'x-ratelimit'
    ? ['X-RateLimit-Quota-Limit', 'X-RateLimit-Quota-Remaining', 'X-RateLimit-Quota-Reset']
    : ['RateLimit-Quota-Limit', 'RateLimit-Quota-Remaining', 'RateLimit-Quota-Reset'];

/**
 * The rate-limit headers of a response: the convention's headers for the rule, and the plan
 * quota that counted the call (when one did). Structured fields list the quota as a second
 * item of RateLimit-Policy and RateLimit; the single-value conventions add their quota trio.
 */
function rateLimitHeaders(rule: ActiveRule, s: Shown, quota: ActiveRule | null, q: Shown | null): (readonly [string, string])[] {
  const policy = limitHeaderOf(rule, s.windowSeconds);
  switch (HEADER_CONVENTION) {
    case 'ietf-structured': {
      const state = rule.sfId + ';r=' + s.remaining + ';t=' + s.resetSeconds;
      if (quota === null || q === null || quota === rule) return [policy, ['RateLimit', state]];
      return [
        ['RateLimit-Policy', policy[1] + ', ' + limitHeaderOf(quota, q.windowSeconds)[1]],
        ['RateLimit', state + ', ' + quota.sfId + ';r=' + q.remaining + ';t=' + q.resetSeconds],
      ];
    }
    case 'ietf-trio':
    case 'x-ratelimit': {
      const x = HEADER_CONVENTION === 'x-ratelimit';
      const headers: (readonly [string, string])[] = [
        policy,
        [x ? 'X-RateLimit-Remaining' : 'RateLimit-Remaining', String(s.remaining)],
        [x ? 'X-RateLimit-Reset' : 'RateLimit-Reset', String(s.resetSeconds)],
      ];
      if (quota !== null && q !== null) {
        headers.push([QUOTA_HEADERS[0], String(q.limit)], [QUOTA_HEADERS[1], String(q.remaining)], [QUOTA_HEADERS[2], String(q.resetSeconds)]);
      }
      return headers;
    }
  }
}

/** Whether a rule's state is more constraining than the best so far (fewer left, then a later reset). */
function tighter(values: Shown, best: Shown | null): boolean {
  return best === null || values.remaining < best.remaining || (values.remaining === best.remaining && values.resetSeconds > best.resetSeconds);
}

/** Whole seconds, rounded up, at least 1; a request that can never fit waits one period. */
function retryAfterSeconds(rule: RuleSpec, outcome: RuleOutcome): number {
  if (outcome.retryAfterMs < 0) return Math.max(1, Math.ceil(rule.periodSeconds));
  return Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
}

/**
 * The problem+json body of a 429 (exported for checks: rl-design's document shows the bodies
 * this function builds, for the same numbers).
 */
export function problemBody(
  rule: { readonly id: string; readonly headers: 'full' | 'silent'; readonly errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED' },
  s: { readonly limit: number; readonly resetSeconds: number; readonly windowSeconds: number },
  retryAfter: number,
): string {
  if (rule.headers === 'silent') {
    // security limits: a generic answer, no counts and no rule internals
    return JSON.stringify({
      type: DOCS_URL + '#rate-limited',
      title: 'Too many requests',
      status: 429,
      code: 'RATE_LIMITED',
      detail: 'Too many attempts. Retry after the time in Retry-After.',
      retryAfterSeconds: retryAfter,
      documentation: DOCS_URL,
    });
  }
  if (rule.errorCode === 'QUOTA_EXCEEDED') {
    return JSON.stringify({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota exceeded',
      status: 429,
      code: 'QUOTA_EXCEEDED',
      detail: 'The quota ' + rule.id + ' for this period is used up; it resets in ' + s.resetSeconds + ' s.',
      'violated-policies': [rule.id],
      limit: { rule: rule.id, quota: s.limit, windowSeconds: s.windowSeconds },
      retryAfterSeconds: retryAfter,
      resetSeconds: s.resetSeconds,
      documentation: DOCS_URL,
    });
  }
  return JSON.stringify({
    type: DOCS_URL + '#rate-limited',
    title: 'Too many requests',
    status: 429,
    code: 'RATE_LIMITED',
    detail: 'Limit ' + rule.id + ' exceeded; retry after the time in Retry-After, plus random jitter.',
    limit: { rule: rule.id, quota: s.limit, windowSeconds: s.windowSeconds },
    retryAfterSeconds: retryAfter,
    resetSeconds: s.resetSeconds,
    documentation: DOCS_URL,
  });
}

function unavailableBody(): string {
  return JSON.stringify({
    type: DOCS_URL + '#limiter-unavailable',
    title: 'Service unavailable',
    status: 503,
    code: 'RATE_LIMITER_UNAVAILABLE',
    detail: 'The rate limiter can not check this request right now. Retry after the time in Retry-After.',
    retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_SECONDS,
    documentation: DOCS_URL,
  });
}

// ---------------------------------------------------------------------------
// The limiter
// ---------------------------------------------------------------------------

interface ActiveRule {
  readonly spec: RuleSpec;
  readonly index: number;
  readonly routes: ReadonlySet<number>;
  readonly key: readonly KeyPiece[];
  /** Whether the key pattern names the window (<yyyy-mm>); if not, the window id is appended. */
  readonly periodSlot: boolean;
  /** The key split around its identity slot, for rules without a window (see keyShape). */
  readonly shape: KeyShape | null;
  /** The key of a global rule without a window: the same for every request. */
  readonly fixedKey: string | null;
  readonly costs: ReadonlyMap<string, number>;
  readonly script: BoundScript | null;
  /** GCRA: burst, rate and period as the strings EVALSHA sends (the cost follows per request). */
  readonly gcraArgs: readonly [string, string, string];
  readonly metrics: RuleMetrics;
  /** The rule id as a Structured Fields string. */
  readonly sfId: string;
  /** The window its policy states (policyWindowSeconds); calendar quotas measure their period instead. */
  readonly policyWindow: number;
  /** The header stating its limit, for the window limitWindow (rebuilt when a calendar period changes length). */
  limitHeader: readonly [string, string];
  limitWindow: number;
}

/** A script of the design with its latency series. */
interface BoundScript {
  readonly spec: ScriptSpec;
  readonly latency: LatencyObserver;
}

/** A rule that applies to a route, with the cost a request on that route takes. */
interface AppliedRule {
  readonly rule: ActiveRule;
  readonly cost: number;
  /** The cost as the string EVALSHA sends. */
  readonly costArg: string;
}

/** What applies to one combination of matched routes, worked out once per combination. */
interface Applicable {
  readonly exempt: boolean;
  readonly rules: readonly AppliedRule[];
  readonly needsUsername: boolean;
}

/** Per request: who is calling, and the client IP once a rule has needed it. */
interface RequestState<TReq> {
  readonly input: LimiterInput<TReq>;
  readonly identity: RequestIdentity;
  readonly plan: string | null;
  ip: string | null;
}

/** A window a window rule counts in: its id (in the key) and its end (epoch ms). */
interface Window {
  readonly id: string;
  readonly end: number;
}

interface Step {
  readonly rules: ActiveRule[];
  readonly keys: string[];
  readonly mode: 'enforce' | 'shadow';
  readonly cost: number;
  readonly costArg: string;
  readonly tag: string | null;
  /** Window rules: end of the window the key names (epoch ms), from the same clock reading. */
  readonly windowEnd: number;
}

/** The body fields the auth username is read from when identify() gives none. */
const USERNAME_FIELDS: readonly string[] = ['username', 'email', 'login', 'client_id'];

function usernameFromBody(req: unknown): string | undefined {
  const body = req !== null && typeof req === 'object' ? (req as { body?: unknown }).body : undefined;
  if (body === null || typeof body !== 'object') return undefined;
  for (const field of USERNAME_FIELDS) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  return undefined;
}

function identityValue(kind: IdentityKind, identity: RequestIdentity): string | undefined {
  switch (kind) {
    case 'api-key':
      return identity.apiKey || undefined;
    case 'user':
      return identity.userId || undefined;
    case 'tenant':
      return identity.tenantId || undefined;
    case 'session':
      return identity.sessionId || undefined;
    default:
      return undefined;
  }
}

/** The method in upper case (it nearly always is: no call, no new string then). */
function upperCase(method: string): string {
  for (let i = 0; i < method.length; i++) {
    const c = method.charCodeAt(i);
    if (c >= 97 && c <= 122) return method.toUpperCase();
  }
  return method;
}

function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/** Checks the embedded scripts against their SHA1s (the EVALSHA ids). */
function verifyScripts(): void {
  for (const script of SCRIPTS) {
    if (sha1Hex(script.source) !== script.sha1) {
      throw new Error('rate limiter: embedded script ' + script.file + ' does not match its SHA1');
    }
  }
}

const NO_IDENTITY: RequestIdentity = {};

export function createLimiter<TReq>(options: LimiterOptions<TReq>): RateLimiter<TReq> {
  verifyScripts();
  const redis = options.redis;
  if (!redis && RULES.some((r) => r.store === 'redis')) {
    throw new Error('rate limiter: this design keeps limiter state in Redis; pass options.redis (an ioredis client)');
  }
  const prefix = options.keyPrefix ?? 'rl';
  const timeoutMs = options.timeoutMs ?? 50;
  const trusted = (options.trustedProxies ?? TRUSTED_PROXIES).map(parseCidr);
  const ipv6Prefix = options.ipv6PrefixLength ?? 64;
  const fallbackMode: RuleMode =
    options.defaultMode !== undefined && MODES.indexOf(options.defaultMode) >= 0 ? options.defaultMode : DEFAULT_MODE;
  const defaultPlan = options.defaultPlan ?? DEFAULT_PLAN;
  const clock = options.now ?? Date.now;
  const identify = options.identify;
  const modeHook = options.mode;
  const metrics = createMetrics(options.registry === undefined ? defaultRegistry : options.registry);
  const scripts = new Map<ScriptName, BoundScript>(SCRIPTS.map((s) => [s.name, { spec: s, latency: metrics.latency(s.name) }]));
  // everything a request would otherwise work out again: keys, arguments, metric series
  const rules: ActiveRule[] = RULES.map((spec, index) => {
    const key = parseKeyPattern(spec.key);
    const periodSlot = key.some((p) => typeof p !== 'string' && p.slot === 'period');
    return {
      spec,
      index,
      routes: new Set(spec.routes),
      key,
      periodSlot,
      shape: spec.window === null ? keyShape(prefix, key) : null,
      fixedKey: spec.identity === 'global' && spec.window === null ? renderKey(prefix, key, null, '') : null,
      costs: new Map(spec.costByEndpoint),
      script: spec.store === 'redis' ? (scripts.get(spec.script) ?? null) : null,
      gcraArgs: [String(spec.burst ?? spec.limit), String(spec.limit), String(spec.periodSeconds * 1000)],
      metrics: metrics.rule(spec),
      sfId: sfString(spec.id),
      policyWindow: policyWindowSeconds(spec),
      limitHeader: limitHeader(spec, policyWindowSeconds(spec)),
      limitWindow: policyWindowSeconds(spec),
    };
  });
  const routeTable = new RouteTable<Applicable>(ROUTES.map(compileRoute), (match) => {
    const owner = match.best ?? null;
    const endpoint = match.endpoint;
    const applied: AppliedRule[] = rules
      .filter((r) => (owner !== null && r.routes.has(owner.index)) || match.wildcards.some((w) => r.routes.has(w.index)))
      .map((rule) => {
        const cost = (endpoint !== null ? rule.costs.get(endpoint) : undefined) ?? rule.spec.costDefault;
        return { rule, cost, costArg: String(cost) };
      });
    return { exempt: match.exempt, rules: applied, needsUsername: applied.some((a) => a.rule.spec.identity === 'username') };
  });
  // the integer-reply variants when the client has them (see RedisClientLike)
  const evalsha = redis ? (redis.evalshaBuffer ?? redis.evalsha).bind(redis) : null;
  const evalScript = redis ? (redis.evalBuffer ?? redis.eval).bind(redis) : null;
  const memory = new MemoryStore();
  const deadlines = new Deadlines(expire);
  const local = HYBRID !== null && options.hybrid !== false ? new LocalBuckets(Math.max(1, HYBRID.localBurst), 100000) : null;
  let period: { id: string; start: number; end: number } | null = null;

  /**
   * The window a window rule counts in: the calendar period of the plan's zone (quotas), a
   * plain fixed window aligned on the epoch (id = its index), or none for rolling windows
   * (the script buckets those itself). One clock reading gives both the id and the end.
   */
  function windowOf(spec: RuleSpec): Window {
    const now = clock();
    if (spec.window === 'calendar' && QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'calendar') {
      if (period === null || now < period.start || now >= period.end) {
        period = calendarPeriod(now, QUOTA_PERIOD.period, QUOTA_PERIOD.timeZone);
      }
      return period;
    }
    if (spec.window === 'rolling') return { id: 'rolling', end: 0 };
    const periodMs = spec.periodSeconds * 1000;
    const index = Math.floor(now / periodMs);
    return { id: 'w' + index, end: (index + 1) * periodMs };
  }

  /**
   * The window a rule's headers and bodies state: a calendar quota's current period, measured
   * (a month is 28 to 31 days, a day 23 to 25 hours across a daylight-saving change), from the
   * end of the window the step counted in; every other rule's policy window.
   */
  function windowSecondsOf(rule: ActiveRule, windowEnd: number): number {
    if (rule.spec.window !== 'calendar' || windowEnd <= 0) return rule.policyWindow;
    let p = period;
    if ((p === null || p.end !== windowEnd) && QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'calendar') {
      p = calendarPeriod(windowEnd - 1, QUOTA_PERIOD.period, QUOTA_PERIOD.timeZone);
    }
    return p === null ? rule.policyWindow : Math.round((p.end - p.start) / 1000);
  }

  function modeOf(spec: RuleSpec): RuleMode {
    const chosen = modeHook ? modeHook(spec.id, spec.flag) : undefined;
    return chosen !== undefined && MODES.indexOf(chosen) >= 0 ? chosen : fallbackMode;
  }

  /**
   * The key of a rule for this request, or null when the rule does not apply to the caller
   * (no usable identity). Own identity: the rule's identity if known, else API key > user >
   * tenant > session > client IP (a fallback identity brings its own label).
   */
  function keyFor(rule: ActiveRule, request: RequestState<TReq>, win: Window | null): string | null {
    const spec = rule.spec;
    if (rule.fixedKey !== null) return rule.fixedKey;
    const identity = request.identity;
    let label: string | null = null;
    let value: string;
    switch (spec.identity) {
      case 'global':
        return windowKey(rule, null, win);
      case 'ip':
        value = ipOf(request);
        break;
      case 'username':
        if (identity.username) value = usernameKey(identity.username);
        else if (identity.userId) {
          // no account name in the request (an MFA or reset-confirm step): the account the
          // session already belongs to, from identify()
          label = IDENTITY_LABEL.user;
          value = usernameKey(identity.userId);
        } else if (identity.sessionId) {
          label = IDENTITY_LABEL.session;
          value = usernameKey(identity.sessionId);
        } else return null;
        break;
      default: {
        const own = identityValue(spec.identity, identity);
        if (own !== undefined) {
          value = keyPart(own);
          break;
        }
        let found: string | null = null;
        for (const kind of FALLBACK_ORDER) {
          if (kind === 'ip') {
            // a quota belongs to an account: a caller known only by address has none
            if (spec.tier === 'quota') return null;
            label = IDENTITY_LABEL.ip;
            found = ipOf(request);
            break;
          }
          const v = identityValue(kind, identity);
          if (v !== undefined) {
            label = IDENTITY_LABEL[kind];
            found = keyPart(v);
            break;
          }
        }
        if (found === null) return null;
        value = found;
      }
    }
    const shape = rule.shape;
    if (shape !== null) return shape.head + (label ?? shape.label) + value + shape.tail;
    return windowKey(rule, { label, value }, win);
  }

  /** renderKey for the patterns keyShape leaves alone, window id included. */
  function windowKey(rule: ActiveRule, slot: Slot | null, win: Window | null): string {
    if (win === null) return renderKey(prefix, rule.key, slot, '');
    const key = renderKey(prefix, rule.key, slot, win.id);
    return rule.periodSlot ? key : key + ':' + win.id;
  }

  /** The client IP, worked out at most once per request (only rules keyed on it need it). */
  function ipOf(request: RequestState<TReq>): string {
    if (request.ip === null) request.ip = clientIpOf(request.input);
    return request.ip;
  }

  function scriptArgs(step: Step): (string | number)[] {
    const first = step.rules[0] as ActiveRule;
    const spec = first.spec;
    if (spec.script === 'gcra') {
      const g = first.gcraArgs;
      return [step.keys[0] ?? '', g[0], g[1], g[2], step.costArg];
    }
    // (the other scripts take per-request windows and key counts)
    const args: (string | number)[] = step.keys.slice();
    if (spec.script === 'sliding-window-log') {
      for (const r of step.rules) args.push(r.spec.limit, r.spec.periodSeconds * 1000);
      args.push(step.cost);
      return args;
    }
    if (spec.window === 'rolling') {
      const windowMs = QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'rolling' ? QUOTA_PERIOD.days * 86400000 : spec.periodSeconds * 1000;
      args.push('rolling', spec.limit, step.cost, Math.max(86400000, Math.ceil(windowMs / 86400000) * 86400000), 86400000);
      return args;
    }
    args.push('calendar', spec.limit, step.cost, step.windowEnd, 60000);
    return args;
  }

  /**
   * One script call: EVALSHA; on NOSCRIPT (first call on this server, or after SCRIPT FLUSH
   * or a failover) EVAL with the source, which Redis then caches for the next EVALSHA.
   * Fails with StoreError('timeout') when no reply came within timeoutMs.
   * argv: the keys, then the arguments. The listener hears the outcome, once.
   */
  function callRedis(script: BoundScript, numKeys: number, argv: readonly (string | number)[], listener: StoreListener): void {
    const started = performance.now();
    // the command goes out first, the bookkeeping after: a promise settles no earlier than
    // the next microtask, so nothing is missed, and calls made back to back reach the store
    // back to back
    const sent = (evalsha as NonNullable<typeof evalsha>)(script.spec.sha1, numKeys, ...argv);
    const call = new StoreCall(script, numKeys, argv, listener, started, started + timeoutMs);
    deadlines.add(call);
    sent.then(
      (raw) => replied(call, raw),
      (error: unknown) => failed(call, error),
    );
  }

  /** The same call for code that wants a promise (the in-process bucket's charges). */
  function callRedisPromise(script: BoundScript, numKeys: number, argv: readonly (string | number)[]): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => callRedis(script, numKeys, argv, { stored: resolve, failed: reject }));
  }

  /** Marks the call settled and records its latency; false when it had settled already. */
  function settle(call: StoreCall): boolean {
    if (call.settled) return false;
    call.settled = true;
    deadlines.remove(call);
    // a call sent and answered within one checkpoint may predate the shared reading: 0 ms
    call.script.latency.observe(Math.max(0, replyTime() - call.started));
    return true;
  }

  function replied(call: StoreCall, raw: unknown): void {
    if (!settle(call)) return;
    let reply: Reply;
    try {
      reply = toReply(raw);
    } catch (error) {
      call.listener.failed(error);
      return;
    }
    call.listener.stored(reply);
  }

  function failed(call: StoreCall, error: unknown): void {
    if (call.settled) return;
    if (isNoScript(error)) {
      (evalScript as NonNullable<typeof evalScript>)(call.script.spec.source, call.numKeys, ...call.argv).then(
        (raw) => replied(call, raw),
        (again: unknown) => {
          if (settle(call)) call.listener.failed(again);
        },
      );
      return;
    }
    if (settle(call)) call.listener.failed(error);
  }

  function expire(call: StoreCall): void {
    if (settle(call)) call.listener.failed(new StoreError('timeout', 'rate limiter store did not answer within ' + timeoutMs + ' ms'));
  }

  /**
   * Runs one step's script: the reply at once (state in this process, or the in-process
   * bucket answering), a promise of it (the in-process bucket asking Redis), or null when
   * Redis was asked and the listener will hear the reply.
   */
  function execute(step: Step, listener: StoreListener): Reply | Promise<Reply> | null {
    const first = step.rules[0] as ActiveRule;
    const argv = scriptArgs(step);
    const numKeys = step.keys.length;
    if (first.spec.store === 'memory') return memory.run(first.spec.script, step.keys, argv.slice(numKeys));
    const script = first.script;
    if (!script) throw new StoreError('script', 'rate limiter: no script for rule ' + first.spec.id);
    if (local && first.spec.hybrid && numKeys === 1) {
      return local.decide(
        step.keys[0] ?? '',
        step.cost,
        (cost) => {
          const withCost = argv.slice();
          withCost[withCost.length - 1] = cost;
          return callRedisPromise(script, 1, withCost);
        },
        (error) => {
          first.metrics.failures[failureReason(error)].inc();
          options.onStoreError?.(error, [first.spec.id]);
        },
      );
    }
    callRedis(script, numKeys, argv, listener);
    return null;
  }

  /**
   * One request's decision in the making: its steps run one after another (a quota unit is
   * only spent once every rate limit has admitted the request), and each can end the request
   * (429, or 503 when a fail-closed rule's store failed). Driven by callbacks rather than
   * async/await: a request then costs one promise, not one per store call plus the async
   * function's own, which shows at tens of thousands of decisions per second.
   */
  class Evaluation implements StoreListener {
    private readonly steps: readonly Step[];
    private readonly silent: boolean;
    private readonly plan: string | null;
    private readonly resolve: (decision: Decision) => void;
    private readonly reject: (error: unknown) => void;
    /** The step in progress. */
    private at = 0;
    private readonly outcomes: RuleOutcome[] = [];
    /** The most constraining client-facing rate rule so far: its headers go on an admitted response. */
    private shownRule: ActiveRule | null = null;
    private shownValues: Shown | null = null;
    /** The plan quota that counted the call, shown beside it. */
    private quotaRule: ActiveRule | null = null;
    private quotaValues: Shown | null = null;

    constructor(steps: readonly Step[], silent: boolean, plan: string | null, resolve: (decision: Decision) => void, reject: (error: unknown) => void) {
      this.steps = steps;
      this.silent = silent;
      this.plan = plan;
      this.resolve = resolve;
      this.reject = reject;
    }

    /** Runs steps until one waits for the store, or the decision is made. */
    run(): void {
      try {
        while (this.at < this.steps.length) {
          const step = this.steps[this.at] as Step;
          let reply: Reply | Promise<Reply> | null;
          try {
            reply = execute(step, this);
          } catch (error) {
            if (this.failure(step, error)) return;
            continue;
          }
          if (reply === null) return;
          if (isPromiseLike(reply)) {
            reply.then(
              (r) => this.stored(r),
              (error: unknown) => this.failed(error),
            );
            return;
          }
          if (this.result(step, reply)) return;
        }
        this.resolve(this.admitted());
      } catch (error) {
        this.reject(error);
      }
    }

    stored(reply: Reply): void {
      try {
        if (!this.result(this.steps[this.at] as Step, reply)) this.run();
      } catch (error) {
        this.reject(error);
      }
    }

    failed(error: unknown): void {
      try {
        if (!this.failure(this.steps[this.at] as Step, error)) this.run();
      } catch (again) {
        this.reject(again);
      }
    }

    /** A step's reply: outcomes and metrics. True when it decided the request (429). */
    private result(step: Step, reply: Reply): boolean {
      this.at++;
      const source = local !== null && localReplies.has(reply) ? 'local' : 'store';
      const allowed = reply[0] === 1;
      const binding = allowed ? -1 : Math.max(0, (step.rules.length > 1 ? (reply[4] ?? 1) : 1) - 1);
      const remaining = Math.max(0, reply[1] ?? 0);
      const resetMs = Math.max(0, reply[3] ?? 0);
      let denied: RuleOutcome | null = null;
      for (let i = 0; i < step.rules.length; i++) {
        const r = step.rules[i] as ActiveRule;
        const isBinding = i === binding;
        const outcome: RuleOutcome = {
          ruleId: r.spec.id,
          mode: step.mode,
          allowed: !isBinding,
          remaining,
          resetMs,
          retryAfterMs: isBinding ? (reply[2] ?? 0) : 0,
          source,
        };
        this.outcomes.push(outcome);
        if (!this.silent && r.spec.headers === 'full') {
          const values = shown(r.spec, outcome, windowSecondsOf(r, step.windowEnd));
          if (r.spec.tier === 'quota') {
            if (tighter(values, this.quotaValues)) {
              this.quotaRule = r;
              this.quotaValues = values;
            }
          } else if (tighter(values, this.shownValues)) {
            this.shownRule = r;
            this.shownValues = values;
          }
        }
        if (!isBinding) {
          r.metrics.allowed.inc();
          if (remaining < r.metrics.nearBelow) r.metrics.nearLimit.inc();
        } else {
          denied = outcome;
          if (step.mode === 'enforce') r.metrics.throttled.inc();
          else r.metrics.shadowThrottled.inc();
        }
      }
      if (denied === null) return false;
      const binder = step.rules[binding] as ActiveRule;
      const rule = binder.spec;
      if (step.mode === 'enforce') binder.metrics.throttledEnforce.inc();
      else binder.metrics.throttledShadow.inc();
      if (rule.tier === 'quota') metrics.quotaExhausted(rule.id, rule.plan ?? this.plan ?? '');
      if (step.mode === 'shadow') return false;
      const retryAfter = retryAfterSeconds(rule, denied);
      const s = shown(rule, denied, windowSecondsOf(binder, step.windowEnd));
      // a quota's own refusal states the quota (the single-value conventions: in the quota trio too)
      const quota = rule.tier === 'quota' ? binder : null;
      const headers: (readonly [string, string])[] =
        this.silent || rule.headers === 'silent' ? [] : rateLimitHeaders(binder, s, quota, quota === null ? null : s);
      headers.push(['Retry-After', String(retryAfter)]);
      this.resolve({
        status: 429,
        headers,
        body: problemBody(rule, s, retryAfter),
        contentType: PROBLEM_JSON,
        ruleId: rule.id,
        exempt: false,
        outcomes: this.outcomes,
      });
      return true;
    }

    /** A step whose store failed: its rules' fail mode. True when it decided the request (503). */
    private failure(step: Step, error: unknown): boolean {
      this.at++;
      const reason = failureReason(error);
      for (const r of step.rules) r.metrics.failures[reason].inc();
      options.onStoreError?.(error, step.rules.map((r) => r.spec.id));
      const closed = step.mode === 'enforce' ? step.rules.find((r) => r.spec.failMode === 'closed') : undefined;
      if (closed) {
        this.resolve({
          status: 503,
          headers: [['Retry-After', String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS)]],
          body: unavailableBody(),
          contentType: PROBLEM_JSON,
          ruleId: closed.spec.id,
          exempt: false,
          outcomes: this.outcomes,
        });
        return true;
      }
      for (const r of step.rules) {
        // availability over enforcement: admitted unchecked, and counted (an alert pages on it)
        if (step.mode === 'enforce') r.metrics.failOpen.inc();
        this.outcomes.push({ ruleId: r.spec.id, mode: step.mode, allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0, source: 'store-failed' });
      }
      return false;
    }

    /** Every step admitted the request: the headers of the most constraining client-facing rule. */
    private admitted(): Decision {
      let rule = this.shownRule;
      let values = this.shownValues;
      const quota = this.quotaRule;
      const q = this.quotaValues;
      // the single-value conventions state the tightest rule, the quota included; structured
      // fields list the rate rule and the quota as two items
      if (quota !== null && q !== null && (values === null || (HEADER_CONVENTION !== 'ietf-structured' && tighter(q, values)))) {
        rule = quota;
        values = q;
      }
      if (rule === null || values === null) return { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: false, outcomes: this.outcomes };
      const headers = rateLimitHeaders(rule, values, quota, q);
      // past a soft plan quota the call still passes: say so
      if (quota !== null && q !== null && q.overQuota > 0) headers.push(['Quota-Exceeded', quota.sfId + ';over=' + q.overQuota]);
      return { status: 200, headers, body: null, contentType: null, ruleId: null, exempt: false, outcomes: this.outcomes };
    }
  }

  function clientIpOf(input: LimiterInput<TReq>): string {
    if (options.clientIp) {
      const given = options.clientIp(input.req);
      if (given) {
        const bytes = parseIp(given);
        return bytes ? formatIp(bytes, ipv6Prefix) : keyPart(given);
      }
    }
    return resolveClientIp(input.remoteAddress, input.forwardedFor, trusted, ipv6Prefix);
  }

  const EXEMPT: Decision = { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: true, outcomes: [] };
  const NOTHING: Decision = { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: false, outcomes: [] };
  // settled promises can be handed to any number of callers
  const EXEMPT_DONE = Promise.resolve(EXEMPT);
  const NOTHING_DONE = Promise.resolve(NOTHING);

  function check(input: LimiterInput<TReq>): Promise<Decision> {
    try {
      const applicable = routeTable.lookup(upperCase(input.method), input.url);
      if (applicable.exempt) return EXEMPT_DONE;
      const applied = applicable.rules;
      // the kill switch of each rule; identify() is only asked when some rule is on
      const modes: RuleMode[] = [];
      let on = false;
      for (const a of applied) {
        const mode = modeOf(a.rule.spec);
        modes.push(mode);
        if (mode !== 'off') on = true;
      }
      if (!on) return NOTHING_DONE;
      if (!identify) return evaluate(input, applicable, modes, NO_IDENTITY);
      const given = identify(input.req);
      if (isPromiseLike(given)) return given.then((identity) => evaluate(input, applicable, modes, identity ?? NO_IDENTITY));
      return evaluate(input, applicable, modes, given ?? NO_IDENTITY);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The steps of a request (each rule's key; dual-key auth rows joined), then their evaluation. */
  function evaluate(input: LimiterInput<TReq>, applicable: Applicable, modes: readonly RuleMode[], given: RequestIdentity): Promise<Decision> {
    let identity = given;
    if (applicable.needsUsername && !identity.username) {
      identity = { ...identity, username: usernameFromBody(input.req) };
    }
    const plan = identity.plan ?? defaultPlan;
    const request: RequestState<TReq> = { input, identity, plan, ip: null };
    const applied = applicable.rules;
    // security rules stay silent: when one applies, no rate-limit headers at all
    let silent = false;
    const steps: Step[] = [];
    for (let i = 0; i < applied.length; i++) {
      const mode = modes[i];
      if (mode === 'off' || mode === undefined) continue;
      const { rule, cost, costArg } = applied[i] as AppliedRule;
      const spec = rule.spec;
      if (spec.headers === 'silent') silent = true;
      if (spec.plan !== null && spec.plan !== plan) continue;
      const win = spec.window === null ? null : windowOf(spec);
      const key = keyFor(rule, request, win);
      if (key === null) continue;
      const windowEnd = win === null ? 0 : win.end;
      if (spec.script === 'sliding-window-log') {
        // dual-key auth: the logs of one flow share a hash tag and are checked in ONE call
        const tag = hashTag(key);
        const partner =
          tag === null
            ? undefined
            : steps.find((s) => {
                const other = (s.rules[0] as ActiveRule).spec;
                return s.tag === tag && s.mode === mode && s.cost === cost && other.script === 'sliding-window-log' && other.store === spec.store;
              });
        if (partner) {
          partner.rules.push(rule);
          partner.keys.push(key);
        } else {
          steps.push({ rules: [rule], keys: [key], mode, cost, costArg, tag, windowEnd });
        }
      } else {
        steps.push({ rules: [rule], keys: [key], mode, cost, costArg, tag: null, windowEnd });
      }
    }
    return new Promise<Decision>((resolve, reject) => new Evaluation(steps, silent, plan, resolve, reject).run());
  }

  return {
    check,
    clientIp: (remoteAddress, forwardedFor) => resolveClientIp(remoteAddress, forwardedFor, trusted, ipv6Prefix),
    rules: RULES,
    close: () => {
      local?.clear();
      memory.clear();
      deadlines.clear();
    },
  };
}
`;

/**
 * The limit matrix: one row per (endpoint class x identity dimension), layered as a
 * global protective ceiling, per-identity fairness limits, security limits for auth,
 * business quotas and outbound buckets. The layers are never merged into one number.
 */
import {
  outboundPeak,
  outboundRate,
  outboundRateText,
  outboundRefillText,
  outboundSumText,
  PERIOD_SECONDS,
  QUOTA_BACKSTOP,
  quotaStop,
} from './scope.js';
import { formatNumber, joinAnd, rateFigure, ratePer, rpsText, secondsWords } from '../format.js';
import type { ExistingLimiterT, HandRule, QuotaResetT } from '../answers/schema.js';
import type { AuthKind, EndpointClass, MatrixRule, Primitive, ResolvedEndpoint, RuleIdentity, Scope } from './model.js';
import { inProcessOutbound } from './model.js';
import { admittedWithin, algorithmLabel, luaScriptFor, runBurst } from './algorithms.js';
import { existingCounters, existingLimitText, existingName, existingWorstText, tighterExisting } from './migration.js';
import {
  awsKeyPlan,
  awsKeyPlanText,
  type EdgeCounter,
  ENVOY_MIN_FILL_MS,
  edgeCounter,
  fleetOverStated,
  fleetRaisedWarning,
  overTimeRatio,
  windowLaxerBy,
  answeredEdgeMode,
  edgeStateNote,
  envoyCounter,
  envoyFailureModeDeny,
  envoyFilterFillMs,
  envoyLocalWindow,
  countedPerNode,
  type FleetAdmission,
  ceilingsAdmission,
  fleetAdmission,
  gatewayNodeName,
  gatewayNodes,
  kongCountsNowhere,
  perNodeShare,
  awsPerMethod,
  awsRuleMethods,
  UNEVEN_BALANCE_TEXT,
  kongNotCountedText,
  kongOrderText,
  kongRouteOrder,
  kongRoutePlan,
} from './gateway-behaviour.js';
import { IdAllocator, identityLabel, KEY_PREFIX, killSwitchFlag, slug } from './naming.js';
import { identityHashes, renderedPattern } from './placement.js';

/**
 * Bytes one key takes in Redis 7.0 (used_memory per key over 100,000 keys with 15-character
 * names: dict and expires entries, key name, value, bucket arrays), measured for our scripts
 * by bench/lua and checked by a scratch run for the per-entry figures. These are the figures
 * for MEASURED_KEY_CHARS-character names; a rule's real keys are longer, and keyNameExtraBytes
 * gives what its longest key adds (bytesPerKey of a rule = these + that).
 */
export const BYTES_PER_KEY = {
  /** gcra.lua: TAT in the key's expiry, a shared small integer as the value. */
  gcra: 117,
  /**
   * identity-limits.lua: one hash per identity holding each of its limits as a field. The key, its
   * TTL and the hash object, before the hash's listpack (measured: 165 B with one field of a
   * one-character name, whose listpack takes 32 B); the listpack is identityHashBytes' arithmetic.
   */
  'identity-hash-base': 133,
  /** outbound-bucket.lua: one integer in a string key. */
  'outbound-bucket': 133,
  /** fixed-window.lua, calendar: one counter per period (past Redis's shared small integers). */
  'fixed-window': 133,
  /** fixed-window.lua, rolling: a hash of day buckets; each live bucket past the first adds 7 B. */
  'fixed-window-rolling-base': 149,
  'fixed-window-rolling-bucket': 7,
  /** sliding-window-log.lua: a sorted set; each logged attempt past the first adds about 29 B. */
  'sliding-window-log-base': 153,
  'sliding-window-log-entry': 29,
} as const;

/**
 * Bytes one key of the in-process store (memory-store.ts, a design without a store) takes in the
 * process's heap: its Map entry, the key string, the entry object and its value. Measured on Node
 * 20 (V8 11.3) as heapUsed after a full gc, over 65,600 to 131,000 keys of 15 characters, the
 * largest figure of those runs rounded up, with a few percent to spare (the Map's table grows in steps, so the figure per key
 * moves with the count). A log is priced with one attempt, as in Redis.
 */
export const IN_PROCESS_BYTES_PER_KEY = {
  gcra: 210,
  'sliding-window-log': 380,
  'fixed-window': 190,
  /** identity-limits: a Map per identity; at most 390 B measured with one field, 490 B with three. */
  'identity-hash-base': 350,
  'identity-hash-field': 55,
  /**
   * The outbound client's in-process bucket (outbound/client.ts): its Map entry and the number it
   * holds, the key being the provider's name that providers.ts already holds; measured at 54 B.
   */
  'outbound-bucket': 60,
} as const;

/**
 * What a key of `chars` characters adds in the heap beyond a MEASURED_KEY_CHARS-character one: the
 * measured slope was about 1.3 B a character (the flat string and the concatenation it was built
 * from), rounded up to 1.5.
 */
export function inProcessKeyExtraBytes(chars: number): number {
  return Math.ceil(1.5 * Math.max(0, chars - MEASURED_KEY_CHARS));
}

/** Length of the key names BYTES_PER_KEY was measured with ("rl:{k:00000000}"). */
export const MEASURED_KEY_CHARS = 15;

/**
 * Longest text the runtime puts in each kind of key placeholder: the assumptions behind the
 * memory bound (test/middleware/metrics.test.ts checks them against the keys the generated middleware writes, and bytesPerKey against used_memory of a real Redis).
 */
export const KEY_VALUE_CHARS = {
  /** sha256 hex of a username or e-mail address. */
  sha256: 64,
  /**
   * The client IP as the key holds it: an IPv6 /64 network ("ffff:ffff:ffff:ffff::/64", the
   * default ipv6PrefixLength) is 24 characters; dotted IPv4 at most 15.
   */
  ip: 24,
  /**
   * An opaque identity (API key id, tenant, user, session): the runtime keeps at most 128
   * characters of it (a longer value is replaced by "~" + its sha256, 65 characters).
   */
  opaque: 128,
  /** A fixed window's id suffix (":w" + the window index, 13 digits at most). */
  windowSuffix: 15,
  /**
   * The longest label of an identity a caller is counted by ("ak:", "ip:", "un:"); in the key of a
   * rule keyed on an account identity it follows the rule's own label and a "~" ("t~ak:", fallbackLabel).
   */
  label: 3,
} as const;

/** The identities whose rules count a caller without them under another identity (see identity-fallback.ts). */
const FALLS_BACK: ReadonlySet<string | undefined> = new Set(['api-key', 'user', 'tenant', 'session']);

/**
 * The longest key a rule writes, in characters, from its pattern: each <...> placeholder
 * filled with the longest value of its kind (KEY_VALUE_CHARS), its label with the longest
 * label, and the window suffix a fixed window without a period placeholder gets.
 */
export function maxKeyChars(rule: Pick<MatrixRule, 'key' | 'algorithm' | 'tier' | 'id' | 'identity'>): number {
  const pattern = rule.key ?? `${KEY_PREFIX}:{xx:<${rule.identity ?? 'id'}>}:${rule.id}`;
  let chars = 0;
  let last = 0;
  let period = false;
  const re = /([A-Za-z0-9_-]+:)?<([^<>]*)>/g;
  for (let m = re.exec(pattern); m !== null; m = re.exec(pattern)) {
    chars += m.index - last;
    last = re.lastIndex;
    const name = (m[2] ?? '').toLowerCase();
    if (name.includes('yyyy')) {
      period = true;
      chars += (m[1] ?? '').length + name.length;
      continue;
    }
    const own = (m[1] ?? '').length;
    // a caller without the rule's own identity: "t:" becomes "t~ak:" (its stem, "~" and the other label)
    chars += FALLS_BACK.has(rule.identity) ? Math.max(own, 1) + KEY_VALUE_CHARS.label : Math.max(own, KEY_VALUE_CHARS.label);
    chars += name.includes('sha256')
      ? KEY_VALUE_CHARS.sha256
      : /(^|[^a-z])ip([^a-z]|$)/.test(name)
        ? KEY_VALUE_CHARS.ip
        : KEY_VALUE_CHARS.opaque;
  }
  chars += pattern.length - last;
  // a fixed window whose pattern names no period gets ":<window id>" appended
  if (rule.algorithm === 'fixed-window' && !period) chars += rule.tier === 'quota' ? ':rolling'.length : KEY_VALUE_CHARS.windowSuffix;
  return chars;
}

/**
 * Bytes Redis allocates for a key name of `chars` characters: its sds string (header, text,
 * NUL) rounded up to jemalloc's size class (16-byte quantum, as Debian's redis-server and any
 * build on the system jemalloc; Redis's bundled jemalloc uses finer classes, so this is the
 * larger of the two). A 92-character key takes 96 B, a 15-character one 32 B.
 */
export function keyNameBytes(chars: number): number {
  return allocatedBytes((chars < 32 ? 1 : chars < 256 ? 3 : chars < 65536 ? 5 : 9) + chars + 1);
}

/** What the allocator hands out for `size` bytes (jemalloc's size classes, 16-byte quantum). */
function allocatedBytes(size: number): number {
  if (size <= 8) return 8;
  if (size <= 128) return Math.ceil(size / 16) * 16;
  // four classes per doubling above 128
  const step = 2 ** (Math.ceil(Math.log2(size)) - 3);
  return Math.ceil(size / step) * step;
}

/** A rolling window's field in an identity's hash: its name, its daily buckets, the most one bucket counts. */
export interface RollingFieldSize {
  name: string;
  buckets: number;
  maxCount: number;
}

/** Bytes a listpack takes for an integer value (its encoding and its back-length byte). */
function listpackIntBytes(value: number): number {
  return value < 128 ? 2 : value < 4096 ? 3 : value < 32768 ? 4 : value < 8388608 ? 5 : value < 2147483648 ? 6 : 10;
}

/**
 * Bytes one identity's hash takes in Redis 7.0 (identity-limits.lua), key name of
 * MEASURED_KEY_CHARS characters: the base, plus its listpack rounded up to the allocator's class:
 * 7 B of header and end, and per field its name (2 B + one per character) and its value (an
 * integer above 32 bits, 10 B: a TAT in microseconds, or a window's end and a 9-digit count);
 * a rolling window takes its running total (a field named after it, the window's first day then
 * a 9-digit count: 10 B) and a field per daily bucket, named field:<epoch-day> (6 more characters
 * until the year 2243), holding that day's count (an integer of 2 to 10 B by its size).
 */
export function identityHashBytes(fields: readonly (string | RollingFieldSize)[]): number {
  const listpack = fields.reduce(
    (n, f) =>
      n +
      (typeof f === 'string'
        ? 2 + f.length + 10
        : 2 + f.name.length + 10 + f.buckets * (2 + f.name.length + 6 + listpackIntBytes(f.maxCount))),
    0,
  );
  return BYTES_PER_KEY['identity-hash-base'] + allocatedBytes(7 + listpack);
}

/** What a key of `chars` characters costs beyond the measured MEASURED_KEY_CHARS-character one. */
export function keyNameExtraBytes(chars: number): number {
  return Math.max(0, keyNameBytes(chars) - keyNameBytes(MEASURED_KEY_CHARS));
}

/**
 * A rule in the store with its key length priced in: bytesPerKey as measured plus what its
 * longest key name adds, and keyChars (that length) for the memory table.
 */
function withKeyLength(rule: MatrixRule): MatrixRule {
  if (rule.bytesPerKey === undefined || rule.layer === 'edge') return rule;
  const keyChars = maxKeyChars(rule);
  const extra = rule.primitive === 'in-process' ? inProcessKeyExtraBytes(keyChars) : keyNameExtraBytes(keyChars);
  return { ...rule, keyChars, bytesPerKey: rule.bytesPerKey + extra };
}

/**
 * The rules the design keeps in one hash per identity (identityHashes): the hash's key pattern
 * and the rule's field, one field per identity (a counter's new window overwrites the old one's
 * count, so a quota no longer holds a key per live window), and bytesPerKey the whole hash of one
 * identity with its longest key name: every field it can hold, the rules of no plan and those of
 * each plan (an identity is on one plan at a time, but a plan change leaves the old plan's field
 * in the hash until the hash expires). Its rules share that hash: the memory estimate counts it
 * once per identity (storeBound), not once per rule.
 */
function inIdentityHashes(rules: MatrixRule[]): MatrixRule[] {
  const out = rules.slice();
  const hashes = identityHashes(rules);
  for (const hash of hashes) {
    const ruleOf = (id: string): MatrixRule => rules.find((r) => r.id === id) as MatrixRule;
    // every field the hash can hold (a rolling window: a field per daily bucket, each counting at most its limit)
    const sizes: (string | RollingFieldSize)[] = hash.fields.map((f) =>
      f.buckets === undefined
        ? f.field
        : { name: f.field, buckets: f.buckets, maxCount: Math.max(...f.ruleIds.map((id) => ruleOf(id).rate?.requests ?? 0)) },
    );
    const fields = hash.fields.map((f) => (f.buckets === undefined ? f.field : `${f.field} (total), ${f.field}:<epoch-day>`));
    const keyChars = maxKeyChars({
      key: hash.key,
      algorithm: 'gcra',
      tier: 'fairness',
      id: '',
      identity: ruleOf(hash.fields[0]?.ruleIds[0] ?? '').identity,
    });
    // a hash kept in the process (no store) is a Map per identity, priced as measured in the heap
    const inProcess = ruleOf(hash.fields[0]?.ruleIds[0] ?? '').primitive === 'in-process';
    const bytes = inProcess
      ? IN_PROCESS_BYTES_PER_KEY['identity-hash-base'] +
        sizes.reduce((n, f) => n + IN_PROCESS_BYTES_PER_KEY['identity-hash-field'] * (typeof f === 'string' ? 1 : 1 + f.buckets), 0) +
        inProcessKeyExtraBytes(keyChars)
      : identityHashBytes(sizes) + keyNameExtraBytes(keyChars);
    const planned = hash.fields.some((f) => f.ruleIds.some((id) => ruleOf(id).plan !== undefined));
    const holds = `${joinNames(fields)}${planned ? " at most (its plan's fields, and an earlier plan's until the hash expires)" : ''}`;
    for (const f of hash.fields) {
      for (const id of f.ruleIds) {
        const i = out.findIndex((r) => r.id === id);
        const rule = out[i] as MatrixRule;
        const windows = f.kind === 'window' && rule.tier === 'quota' && rule.source === 'generated' && rule.cardinality?.bound ? 2 : 1;
        const bound = rule.cardinality?.bound === undefined ? undefined : Math.ceil(rule.cardinality.bound / windows);
        // the population, not the population per plan row: the hash is one per identity whatever its plan
        const basis = (rule.cardinality?.basis ?? 'not stated').replace(
          / \(the whole .* population is counted for each plan, an upper bound\)$/,
          '',
        );
        out[i] = {
          ...rule,
          key: hash.key,
          field: f.field,
          keyChars,
          bytesPerKey: bytes,
          cardinality: {
            ...rule.cardinality,
            ...(bound !== undefined ? { bound } : {}),
            basis: `${windows > 1 ? `one field per identity in its hash (a new window's count overwrites the last one's), ${formatNumber(bound ?? 0)} hashes` : f.buckets !== undefined ? `${formatNumber(bound ?? 0)} hashes, one per identity, holding the window's running total (${f.field}) and a field per UTC day of the window (${f.field}:<epoch-day>, up to ${formatNumber(f.buckets)})` : basis}; the hash holds ${holds}, ${formatNumber(bytes)} B, counted once per identity in the memory estimate`,
          },
        };
      }
    }
  }
  return apartFromHashes(out, hashes);
}

/**
 * A store rule outside an identity's hash whose key would be that hash's key once filled in (a
 * hand-written rule keyed rl:{t:<tenant>} beside the tenant's hash rl:{t:<tenant-id>}) would meet
 * the hash with a command for another type (WRONGTYPE) or read its fields as its own state: it
 * takes a key of its own, the hash's key with its id after it, and its derivation says so. A
 * counter in a fixed window never meets the hash (its key ends in the window).
 */
function apartFromHashes(rules: MatrixRule[], hashes: ReturnType<typeof identityHashes>): MatrixRule[] {
  const taken = new Map<string, string>();
  for (const hash of hashes) {
    const member = rules.find((r) => r.id === hash.fields[0]?.ruleIds[0]);
    if (member) taken.set(`${member.primitive} ${renderedPattern(hash.key, member.identity)}`, hash.key);
  }
  if (taken.size === 0) return rules;
  return rules.map((r) => {
    if (r.field !== undefined || r.key === undefined || r.layer !== 'middleware' || r.tier === 'outbound') return r;
    if (luaScriptFor(r.algorithm) === 'fixed-window') return r;
    const hashKey = taken.get(`${r.primitive} ${renderedPattern(r.key, r.identity)}`);
    if (hashKey === undefined) return r;
    const key = `${r.key}:${r.id}`;
    const note = `key ${key}, not ${r.key}: that is the key of the identity's hash ${hashKey}, which holds other limits' fields`;
    const moved = { ...r, key, derivation: r.derivation ? `${r.derivation}; ${note}` : note };
    if (r.bytesPerKey === undefined || r.keyChars === undefined) return moved;
    // the longer key name, priced as withKeyLength priced the old one
    const keyChars = maxKeyChars(moved);
    return { ...moved, keyChars, bytesPerKey: r.bytesPerKey - keyNameExtraBytes(r.keyChars) + keyNameExtraBytes(keyChars) };
  });
}

/**
 * Auth limits per flow: per-identity and per-IP attempts per window, and what each row stops
 * (the per-IP row's threat may end with a sentence on why only that row can stop it).
 */
const AUTH_LIMITS: Record<
  AuthKind,
  { perIdentity: number; perIp: number; windowSeconds: number; identityLabel: string; threat: string; ipThreat: string }
> = {
  login: {
    perIdentity: 10,
    perIp: 100,
    windowSeconds: 900,
    identityLabel: 'username',
    threat: "a botnet guessing one account's password from many addresses",
    ipThreat: 'credential stuffing',
  },
  mfa: {
    perIdentity: 5,
    perIp: 50,
    windowSeconds: 900,
    identityLabel: 'account',
    threat: "guessing one account's one-time codes from many addresses",
    ipThreat: 'abuse spread over many targets',
  },
  signup: {
    perIdentity: 3,
    perIp: 20,
    windowSeconds: 3600,
    identityLabel: 'e-mail address',
    threat: 'repeated sign-ups for one e-mail address (verification-mail bombing of a victim)',
    ipThreat: 'bulk fake sign-ups',
  },
  'password-reset': {
    perIdentity: 3,
    perIp: 20,
    windowSeconds: 3600,
    identityLabel: 'e-mail address',
    threat: "flooding one person's inbox with reset mails",
    ipThreat: 'probing which e-mail addresses have accounts, and reset mails sent in bulk',
  },
  token: {
    perIdentity: 60,
    perIp: 300,
    windowSeconds: 60,
    identityLabel: 'client id',
    threat: "guessing one client's secret from many addresses",
    ipThreat: 'abuse spread over many targets',
  },
  other: {
    perIdentity: 10,
    perIp: 100,
    windowSeconds: 900,
    identityLabel: 'username',
    threat: "guessing one account's credentials from many addresses",
    ipThreat: 'credential stuffing',
  },
};

/** The attempt limits of the auth flows in use, in words, for the assumption that states them. */
export function authDefaultsText(kinds: readonly AuthKind[]): string {
  return kinds
    .map((k) => {
      const l = AUTH_LIMITS[k];
      const w = l.windowSeconds >= 3600 ? `${l.windowSeconds / 3600} h` : `${l.windowSeconds / 60} min`;
      return `${k} ${l.perIdentity} per ${l.identityLabel} and ${l.perIp} per IP per ${w}`;
    })
    .join('; ');
}

/** Why only the per-IP row stops a flow's threat, when the per-identity row cannot. */
const AUTH_IP_ONLY: Partial<Record<AuthKind, string>> = {
  'password-reset': ' Probing needs only one request per address, which the per-address row never counts twice: only this row limits it.',
};

/** Seconds an edge gateway keeps an idle counter (nginx drops idle limit_req states after ~60 s). */
const EDGE_STATE_TTL = 60;

/**
 * How long an edge rule's state lives, by the window the gateway enforces (edgeCounter's
 * window): the window itself where the count expires with it; else the gateway's idle state,
 * never shorter than the rule's decision needs (a bucket's full refill, a counter's two windows).
 */
function edgeStateTtl(edge: EdgeCounter, rate: { requests: number; periodSeconds: number }, burst: number | null): number {
  const w = edge.window(rate, burst);
  if (edge.keyLivesForWindow) return w.periodSeconds;
  if (edge.stateSeconds) return edge.stateSeconds(w);
  const needed =
    edge.algorithm === 'token-bucket' || edge.algorithm === 'leaky-bucket' || edge.algorithm === 'gcra'
      ? ((w.burst ?? 0) * w.periodSeconds) / w.requests
      : edge.algorithm === 'sliding-window-counter'
        ? 2 * w.periodSeconds
        : w.periodSeconds;
  return Math.max(EDGE_STATE_TTL, Math.ceil(needed - 1e-9));
}

/** What the ceiling's one counter is, where it lives and, for a count per location, over which period the shipped rule counts. */
function edgeCeilingBasis(edge: EdgeCounter, rate: { requests: number; periodSeconds: number }, burst: number | null, ttl: number): string {
  if (edge.perLocation) {
    const w = edge.window(rate, burst);
    return `one counter in each ${edge.perLocation} (the bound is per ${edge.perLocation}), which counts its own traffic over the rule's ${secondsWords(w.periodSeconds)} period and admits the stated limit; a count lives ${secondsWords(ttl)}${ttl === 2 * w.periodSeconds ? ', two periods, as the previous one is weighed in' : ''}`;
  }
  return edge.shared ? 'one counter' : 'one counter per edge node';
}

/** The largest "nice" number (1, 2, 2.5, 5 x 10^k) not above x; at least 1. */
export function niceFloor(x: number): number {
  if (x <= 1) return 1;
  const exp = Math.floor(Math.log10(x));
  const base = 10 ** exp;
  for (const m of [10, 5, 2.5, 2, 1]) {
    if (m * base <= x) return m * base;
  }
  return base;
}

/** A rate as requests per period, choosing the period that keeps the count whole and readable. */
export function rateOf(perSecond: number): { requests: number; periodSeconds: number } {
  if (perSecond >= 1 && Number.isInteger(perSecond)) return { requests: perSecond, periodSeconds: 1 };
  const perMinute = perSecond * 60;
  if (perMinute >= 1 && Math.abs(perMinute - Math.round(perMinute)) < 1e-9) return { requests: Math.round(perMinute), periodSeconds: 60 };
  return { requests: Math.max(1, Math.round(perSecond * 3600)), periodSeconds: 3600 };
}

export function perSecond(rate: { requests: number; periodSeconds: number }): number {
  return rate.requests / rate.periodSeconds;
}

/** A provider period in words: "minute", "hour", "day", else "N s". */
function formatDurationWords(seconds: number): string {
  if (seconds === 60) return 'minute';
  if (seconds === 3600) return 'hour';
  if (seconds === 86400) return 'day';
  return `${formatNumber(seconds)} s`;
}

/** Seconds until an idle token bucket is full again, when its key can be dropped: at least 1. */
export function bucketTtl(burst: number, ratePerSecond: number): number {
  return Math.max(1, Math.ceil(burst / ratePerSecond));
}

export interface MatrixContext {
  scope: Scope;
  ceilingRps: number;
  quotaReset?: QuotaResetT;
  burstSeconds: number;
  /** Answers fields that were assumed (each has a line in the assumptions). */
  assumed?: ReadonlySet<string>;
  /** Limiters already in place (answers existing.limiters). */
  existing?: readonly ExistingLimiterT[];
  /**
   * The ceiling as it ships when a rules entry names it (its rate, burst, layer and per-node
   * share after the entry): what its own text states and every bound sized from the traffic it
   * admits reads, instead of the figures the answers' traffic alone gives (buildMatrix).
   */
  ceiling?: CeilingShape;
  /** Every ceiling row as it ships (the one ceiling above, or several): what admitted() sums. */
  ceilings?: readonly (CeilingShape & Pick<MatrixRule, 'id'>)[];
  /** ceilingRps is the rate a rules entry sets for the ceiling: the rules sized from it say so (theCeiling). */
  ceilingByHand?: boolean;
}

/** "the 4,800 req/s ceiling", marked when a rules entry set it by hand. */
function theCeiling(ctx: MatrixContext): string {
  return `the ${rpsText(ctx.ceilingRps)} ceiling${ctx.ceilingByHand ? ' (set by hand in its rules entry)' : ''}`;
}

type CeilingShape = Pick<MatrixRule, 'identity' | 'routes' | 'layer' | 'rate' | 'burst' | 'perNode'>;

/**
 * The ceiling as it ships (identity, layer, rate, burst, the per-node share), for what the
 * fleet admits before the rules exist: the one its rules entry makes (ctx.ceiling), else the
 * one addCeiling writes from the answers' traffic.
 */
function ceilingShape(ctx: MatrixContext): CeilingShape {
  if (ctx.ceiling) return ctx.ceiling;
  const { scope, ceilingRps } = ctx;
  const rate = { requests: ceilingRps, periodSeconds: 1 };
  if (scope.gateway === 'none')
    return { identity: 'global', routes: [], layer: 'middleware', rate, burst: Math.max(1, Math.ceil(ceilingRps)) };
  const edge = edgeCounter({ identity: 'global' }, scope);
  const shape = {
    identity: 'global' as const,
    routes: [],
    layer: 'edge' as const,
    rate,
    burst: edge.hasBurst ? Math.ceil(ceilingRps) : null,
  };
  const perNode = perNodeShare(shape, scope);
  return { ...shape, ...(perNode ? { perNode } : {}) };
}

/**
 * What the gateway fleet admits under the ceiling rows (ceilingsAdmission, as build and placement
 * read it): the traffic every key-count bound is sized from.
 */
function admitted(ctx: MatrixContext, on?: readonly ResolvedEndpoint[]): FleetAdmission {
  const fleet = ceilingsAdmission(ctx.scope, ctx.ceilings ?? []) ?? fleetAdmission(ctx.scope, ceilingShape(ctx));
  const uncapped = uncappedBy(ctx, on);
  if (uncapped) return { ...fleet, uncapped };
  if (!on || on.length === 0 || ctx.scope.gateway !== 'aws-api-gateway') return fleet;
  // API Gateway's throttles count per method: a rule's endpoints get their own methods' buckets, no more
  const mine = ceilingsAdmission(ctx.scope, ctx.ceilings ?? [], on) ?? fleetAdmission(ctx.scope, ceilingShape(ctx), [], on);
  return mine.rps > 0 && mine.rps < fleet.rps ? mine : fleet;
}

/**
 * The endpoints of `on` that no ceiling counts, in words, when a rules entry limits the ceilings to
 * other endpoints (their routes): the traffic that reaches these is capped by none of them, so
 * what the ceilings admit bounds no key count made there. Undefined when every endpoint of `on` is
 * under a ceiling (a ceiling without routes covers every endpoint).
 */
function uncappedBy(ctx: MatrixContext, on?: readonly ResolvedEndpoint[]): string | undefined {
  const ceilings = ctx.ceilings ?? (ctx.ceiling ? [{ ...ctx.ceiling, id: 'the ceiling' }] : []);
  if (!on || on.length === 0 || ceilings.length === 0) return undefined;
  const covers = (c: (typeof ceilings)[number], e: ResolvedEndpoint): boolean =>
    (c.routes ?? []).length === 0 ||
    (c.routes ?? []).some((r) => r.route === e.route && (r.method === e.method || r.method === 'ANY' || e.method === 'ANY'));
  const outside = on.filter((e) => !ceilings.some((c) => covers(c, e)));
  if (outside.length === 0) return undefined;
  const counted = ceilings.map((c) => `${c.id} counts only ${joinAnd((c.routes ?? []).map((r) => `${r.method} ${r.route}`))}`);
  return `no ceiling counts ${joinAnd(outside.map((e) => e.name))} (${joinAnd(counted)}, as its rules entry's endpoints say), so nothing caps the traffic that reaches ${outside.length > 1 ? 'them' : 'it'}`;
}

/** "2 req/s per client (assumed)": a value, marked when the answers field behind it was assumed. */
function given(ctx: MatrixContext, text: string, ...fields: string[]): string {
  return fields.some((f) => ctx.assumed?.has(f)) ? `${text} (assumed)` : text;
}

/** The answers fields the ceiling comes from: its rules entry when that sets its rate (ctx.ceilingByHand), else the traffic. */
function ceilingInputs(ctx: Pick<MatrixContext, 'scope' | 'ceilingByHand'>): string[] {
  const { scope } = ctx;
  if (ctx.ceilingByHand) return ['rules'];
  return scope.traffic.capacityRps !== undefined ? ['traffic.capacityRps'] : ['traffic.peakRps', 'traffic.typicalRps', 'traffic.headroom'];
}

/** The answers field a population comes from, for the rules keyed on it. */
function populationField(identity: RuleIdentity): string[] {
  switch (identity) {
    case 'api-key':
      return ['traffic.distinctClients'];
    case 'tenant':
      return ['traffic.distinctTenants'];
    case 'user':
    case 'session':
      return ['traffic.distinctUsers'];
    default:
      return [];
  }
}

/** Endpoints grouped by the fail mode their class was answered with (open first); one group when they agree. */
function byFailMode(scope: Scope, endpoints: ResolvedEndpoint[]): { mode: 'open' | 'closed'; endpoints: ResolvedEndpoint[] }[] {
  return (['open', 'closed'] as const)
    .map((mode) => ({ mode, endpoints: endpoints.filter((e) => scope.failureByClass[e.class] === mode) }))
    .filter((g) => g.endpoints.length > 0);
}

/** What the rule id and rationale say when a rule is split by fail mode. */
function splitNote(groups: { mode: string; endpoints: ResolvedEndpoint[] }[], mode: string): string {
  if (groups.length < 2) return '';
  const other = groups.find((g) => g.mode !== mode) as { mode: string; endpoints: ResolvedEndpoint[] };
  return ` Split by fail mode: the answers make ${joinNames(other.endpoints.map((e) => e.class))} fail ${other.mode} and these endpoints fail ${mode}, so this row covers only the fail-${mode} ones; both rows use the same key, so a client still has one bucket and its rate is not doubled.`;
}

function joinNames(items: readonly string[]): string {
  const u = [...new Set(items)];
  if (u.length <= 1) return u.join('');
  return `${u.slice(0, -1).join(', ')} and ${u[u.length - 1]}`;
}

/** Largest share of one client address (per-IP limits keyed on an address) in the ceiling. */
export const ADDRESS_CEILING_SHARE = 0.1;

/** A rate sized as a share of the ceiling: what it ships, and the steps that made it (after the product or the share). */
interface CeilingShare {
  rps: number;
  rate: { requests: number; periodSeconds: number };
  /** The share came out above the ceiling, raised by a floor, and is held at the ceiling's own rate (withinCeiling). */
  held: boolean;
}

/**
 * A share of the ceiling that a floor raised (one client's rate, the least a limit is sized at)
 * can come out above the ceiling itself: no one caller can be let through more than the ceiling
 * lets through for all of them, so it is held at the ceiling's own rate, as the ceiling ships it.
 */
function withinCeiling(ctx: MatrixContext, rps: number): CeilingShare & { text: string } {
  if (rps <= ctx.ceilingRps) return { rps, rate: rateOf(rps), held: false, text: '' };
  const shipped = ctx.ceiling?.rate;
  const rate =
    shipped && perSecond(shipped) === ctx.ceilingRps
      ? { requests: shipped.requests, periodSeconds: shipped.periodSeconds }
      : { requests: ctx.ceilingRps, periodSeconds: 1 };
  return {
    rps: ctx.ceilingRps,
    rate,
    held: true,
    text: `, then held at the ceiling's own ${rpsText(ctx.ceilingRps)}: one caller's share cannot be more than the ceiling it is a share of`,
  };
}

/**
 * The rate one client IP gets: what one client sends at its busiest times how many clients can
 * be behind one address at once, capped at a tenth of the ceiling so that no one address can
 * take a large share of it, rounded down to a readable figure; raised where that would refuse one
 * client alone (to its rate) or fall below 1 req/s (the least the design sizes a per-address limit
 * at), and never above the ceiling itself (withinCeiling). The derivation states each step taken.
 */
export function perAddressRate(ctx: MatrixContext): CeilingShare & { derivation: string } {
  const { scope, ceilingRps } = ctx;
  const per = scope.traffic.clientPeakRps;
  const n = scope.traffic.clientsPerAddress;
  const want = per * n;
  const cap = ceilingRps * ADDRESS_CEILING_SHARE;
  const product = `${rpsText(per)} per client${ctx.assumed?.has('traffic.clientPeakRps') ? ' (assumed)' : ''} x ${formatNumber(n)} clients behind one address${ctx.assumed?.has('traffic.clientsPerAddress') ? ' (assumed)' : ''} = ${rpsText(want)}`;
  if (want <= cap) return { ...withinCeiling(ctx, want), derivation: product };
  const rounded = niceFloor(cap);
  const lone = Math.min(per, want);
  const raised = Math.max(lone, rounded);
  const step =
    lone > rounded
      ? `, raised to one client's ${rpsText(lone)}, so that a client alone behind its address is never refused by it`
      : rounded > cap
        ? `, raised to ${rpsText(rounded)}, the least the design sizes a per-address limit at`
        : rounded !== cap
          ? `, rounded down to ${rpsText(rounded)}`
          : '';
  const share = withinCeiling(ctx, raised);
  return { ...share, derivation: `${product}, capped at a tenth of ${theCeiling(ctx)} (${rpsText(cap)})${step}${share.text}` };
}

/** What a per-address rate lets through from the clients behind one address, at their busiest. */
function behindOneAddress(ctx: MatrixContext, rps: number): string {
  const per = ctx.scope.traffic.clientPeakRps;
  const n = ctx.scope.traffic.clientsPerAddress;
  if (rps >= per * n) return 'so an office or a carrier-grade NAT address with that many people active at once still gets through';
  const fit = Math.floor(rps / per + 1e-9);
  if (fit < 1) return "so not even one client at its busiest gets through from one address: that is the ceiling's doing, not this rule's";
  return `so ${formatNumber(fit)} of the ${formatNumber(n)} clients behind one address get through at their busiest at once, not all of them`;
}

/**
 * The rate each client gets where no plan promises one and the clients are known by more than
 * their address: a tenth of the ceiling, so about ten at their full rate are needed to reach it,
 * rounded down to a readable figure; raised to 1 req/s, the least the design sizes a per-client
 * limit at, and never above the ceiling itself (withinCeiling). `step` states what was done to
 * the tenth, after it.
 */
function perClientShare(ctx: MatrixContext): CeilingShare & { step: string; derivationStep: string } {
  const tenth = ctx.ceilingRps * 0.1;
  const rounded = niceFloor(tenth);
  const share = withinCeiling(ctx, rounded);
  const step =
    rounded > tenth
      ? `, raised to ${rpsText(rounded)}, the least the design sizes a per-client limit at`
      : rounded !== tenth
        ? `, rounded down to ${rpsText(rounded)}`
        : '';
  const short = rounded > tenth ? `, raised to ${rpsText(rounded)}` : rounded !== tenth ? ', rounded down' : '';
  return { ...share, step: `${step}${share.text}`, derivationStep: `${short}${share.held ? ", held at the ceiling's own rate" : ''}` };
}

/**
 * What the ceiling lets through at once, as it ships: its burst, or one second of its rate where
 * it runs with none (a window without a burst at the edge).
 */
function ceilingBurst(ctx: MatrixContext): number {
  const burst = ceilingShape(ctx).burst;
  return typeof burst === 'number' && burst > 0 ? burst : Math.max(1, Math.ceil(ctx.ceilingRps));
}

/** The burst of a rate sized as a share of the ceiling (shareBurst), and what it is in words. */
interface ShareBurst {
  burst: number;
  /** `burstSeconds` of the share's rate, before the ceiling and the costliest call. */
  wanted: number;
  /** Held below `wanted` at what the ceiling lets through at once. */
  held: boolean;
  /** What the ceiling lets through at once (ceilingBurst). */
  ceiling: number;
  /** The derivation's step: "burst 5 = 10 s of rate (10), held at ..." */
  derivation: string;
}

/**
 * The burst of a share of the ceiling (per address, per client, per webhook sender): `burstSeconds`
 * of its rate, never more than the ceiling lets through at once (ceilingBurst), as its rate is
 * never more than the ceiling's (withinCeiling): no one caller's share can let through more at
 * once than the limit it is a share of. Raised again where the costliest call would not fit.
 */
function shareBurst(ctx: MatrixContext, rps: number, maxCost: number): ShareBurst {
  const { burstSeconds } = ctx;
  const wanted = Math.ceil(rps * burstSeconds);
  const ceiling = ceilingBurst(ctx);
  const burst = Math.max(Math.min(wanted, ceiling), maxCost);
  const held = burst < wanted;
  const seconds = `${burstSeconds} s of rate${ctx.assumed?.has('traffic.burstiness') ? ' (assumed)' : ''}`;
  const derivation = held
    ? `burst ${formatNumber(burst)} = ${
        burst > ceiling
          ? `the costliest call (${maxCost} tokens), above the ceiling's own burst (${formatNumber(ceiling)})`
          : "the ceiling's own burst"
      }, not ${seconds} (${formatNumber(wanted)}): a share cannot let through more at once than the ceiling it is a share of`
    : burst > wanted
      ? `burst ${formatNumber(burst)} = the costliest call (${maxCost} tokens), above ${seconds} (${formatNumber(wanted)})`
      : `burst ${formatNumber(burst)} = ${seconds}`;
  return { burst, wanted, held, ceiling, derivation };
}

interface Builder {
  ids: IdAllocator;
  rules: MatrixRule[];
  /** Each generated row's rationale in its parts (said), for a rules entry that replaces some of its numbers (handSet). */
  said: Map<string, readonly Said[]>;
}

/** A number a rules entry can set by hand on a generated row. */
type HandNumber = 'rate' | 'burst' | 'cost';

/**
 * One part of a generated row's rationale: `about` names the rules-entry fields it reasons
 * about (its numbers, or its fail mode, key, layer...); a part about no field an entry sets
 * (where the row is enforced, its key, its fail mode, a split) stays true and is kept.
 */
interface Said {
  text: string;
  about?: readonly (keyof HandRule)[];
  /** What the part says when the parts before it about the numbers are gone (it refers to them). */
  alone?: string;
}

/** A generated row's rationale from its parts, kept by the row's id for handSet. */
function said(b: Builder, id: string, parts: readonly Said[]): string {
  const kept = parts.map((p) => ({ ...p, text: p.text.trim() })).filter((p) => p.text.length > 0);
  b.said.set(id, kept);
  return kept.map((p) => p.text).join(' ');
}

function routesOf(endpoints: ResolvedEndpoint[]): { method: string; route: string }[] {
  return endpoints.map((e) => ({ method: e.method, route: e.route }));
}

function storePrimitive(scope: Scope): Primitive {
  return scope.store === 'none' ? 'in-process' : 'redis-lua';
}

/** Live keys are bounded by the population and by what the ceiling can create within one TTL. */
function bound(
  population: number | undefined,
  admission: FleetAdmission,
  ttlSeconds: number,
  populationLabel: string,
): { bound?: number; basis: string; byTraffic?: true } {
  if (admission.uncapped) {
    // no ceiling caps the traffic there: a population still bounds its keys, an attacker's key nothing
    return population !== undefined && population > 0
      ? { bound: population, basis: `one key per ${populationLabel} (${formatNumber(population)}); ${admission.uncapped}` }
      : {
          basis: `attacker-controlled key, and ${admission.uncapped}: no bound. Add these endpoints to the ceiling's rules entry (endpoints), or state cardinalityBound in a rules entry for this row`,
        };
  }
  const rps = admission.rps;
  const byTraffic = Math.ceil(rps * ttlSeconds);
  if (population === undefined || population <= 0) {
    return {
      bound: byTraffic,
      byTraffic: true,
      basis: `attacker-controlled key: each live key needs a request within its ${formatNumber(ttlSeconds)} s TTL, and ${admission.text}`,
    };
  }
  if (population <= byTraffic) return { bound: population, basis: `one key per ${populationLabel} (${formatNumber(population)})` };
  return {
    bound: byTraffic,
    byTraffic: true,
    basis: `${formatNumber(population)} ${populationLabel}s, but at most admitted traffic x TTL = ${formatNumber(rps)} x ${formatNumber(ttlSeconds)} s can be live at once (${admission.text})`,
  };
}

function populationOf(identity: RuleIdentity, scope: Scope): { population?: number; label: string } {
  const label = identityLabel(identity);
  switch (identity) {
    case 'api-key':
      return { population: scope.traffic.distinctClients, label };
    case 'tenant':
      return { population: scope.traffic.distinctTenants, label };
    case 'user':
      return { population: scope.traffic.distinctUsers, label };
    case 'session':
      return { population: scope.traffic.distinctUsers * 2, label };
    case 'global':
      return { population: 1, label };
    default:
      return { label };
  }
}

const KEY_TAG: Record<RuleIdentity, string> = {
  global: 'global',
  'api-key': 'ak:<api-key-id>',
  tenant: 't:<tenant-id>',
  user: 'u:<user-id>',
  session: 's:<session-id>',
  ip: 'ip:<client-ip>',
  username: 'un:<sha256(username)>',
  provider: 'out:<provider>',
};

/** The identity per-client fairness limits are keyed on. */
export function fairnessIdentity(scope: Scope, forPlans: boolean): RuleIdentity {
  const ids = scope.identities;
  if (forPlans && ids.includes('tenant')) return 'tenant';
  if (ids.includes('api-key')) return 'api-key';
  if (ids.includes('tenant')) return 'tenant';
  if (ids.includes('user')) return 'user';
  if (ids.includes('session')) return 'session';
  return 'ip';
}

function costTable(endpoints: ResolvedEndpoint[]): { default: number; byEndpoint: { endpoint: string; cost: number }[] } {
  return {
    default: 1,
    byEndpoint: endpoints.filter((e) => e.cost !== 1).map((e) => ({ endpoint: e.name, cost: e.cost })),
  };
}

/**
 * Why the ceiling states fail open although the answers make a class it covers fail closed: a
 * ceiling that failed closed would refuse every class at once, so it fails open in every design
 * and the closed classes get their mode from the per-client rules covering them.
 */
function ceilingModeNote(scope: Scope, limited: ResolvedEndpoint[]): string {
  const closed = [...new Set(limited.map((e) => e.class))].filter((c) => scope.failureByClass[c] === 'closed');
  if (closed.length === 0) return '';
  return ` Nothing can make its count unreachable now; it states fail open, as a ceiling does in every design (failing it closed would refuse every class at once if its count moved to a shared store), and ${joinNames(closed)}, answered closed, ${closed.length > 1 ? 'take' : 'takes'} that mode from the per-client rules that cover ${closed.length > 1 ? 'them' : 'it'}.`;
}

/** Where a ceiling counted in each gateway node stands: the fleet figure, each node's share, and what the fleet admits. */
function ceilingNodesText(ctx: MatrixContext): string {
  const shape = ceilingShape(ctx);
  const name = gatewayNodeName(ctx.scope.gateway);
  const fleet = admitted(ctx);
  const rps = shape.rate ? perSecond(shape.rate) : ctx.ceilingRps;
  if (shape.perNode) {
    const p = shape.perNode;
    return `Its counter lives in each ${name} node: ${rpsText(rps)} for the fleet is ${ratePer(p.rate)}${p.burst !== null ? `, burst ${formatNumber(p.burst)}` : ''} on each of the ${formatNumber(p.nodes)} nodes (stack.gatewayNodes), which the gateway files ship; ${fleet.text}${fleetOverStated(shape) ? '' : `; ${UNEVEN_BALANCE_TEXT}`}.`;
  }
  const { k, stated } = gatewayNodes(ctx.scope);
  if (stated || k <= 1)
    return `Its counter lives in each ${name} node${stated ? ` (${formatNumber(k)}, stack.gatewayNodes)` : ''}: ${fleet.text}.`;
  return `Its counter lives in each ${name} node, and the answers do not say how many run (stack.gatewayNodes): each node ships the full ${rpsText(rps)}, so ${fleet.text}; key counts and memory are sized for that. Give stack.gatewayNodes to ship ${formatNumber(rps)}/K per node instead.`;
}

/**
 * A ceiling a rules entry sets below the traffic's stated peak: at that peak it refuses the rest
 * of the traffic, where a ceiling is a rule that should almost never fire (RateLimitRareRuleFiring
 * tickets when it does). rps: what ships; byHand: a rules entry set it (a ceiling from measured
 * capacity below the peak is the capacity's own statement, not a slip).
 */
export function ceilingBelowPeakWarning(rps: number, byHand: boolean, scope: Pick<Scope, 'traffic'>): string | null {
  const peak = scope.traffic.peakRps;
  if (!byHand || rps >= peak) return null;
  return `Warning: the ceiling's rules entry sets ${rpsText(rps)}, below the stated peak of ${rpsText(peak)} (traffic.peakRps): at that peak it refuses about ${rpsText(peak - rps)} of the traffic, and RateLimitRareRuleFiring, which expects the ceiling almost never to fire, will ticket for as long as the peak lasts. Raise the rate in the rules entry to the peak or above, or correct traffic.peakRps.`;
}

function addCeiling(b: Builder, ctx: MatrixContext, limited: ResolvedEndpoint[]): void {
  const { scope, ceilingRps } = ctx;
  const id = b.ids.take('global-ceiling');
  const fromTraffic =
    scope.traffic.capacityRps !== undefined
      ? `the measured backend capacity of ${rpsText(scope.traffic.capacityRps)}`
      : `peak ${rpsText(scope.traffic.peakRps)} x ${scope.traffic.headroom} headroom`;
  // a rules entry that sets another rate: the text states the rate that ships, and where it comes from
  const set = ctx.ceiling?.rate && perSecond(ctx.ceiling.rate) !== ceilingRps ? perSecond(ctx.ceiling.rate) : undefined;
  const figure =
    set === undefined
      ? `${rpsText(ceilingRps)} from ${fromTraffic}`
      : `${rpsText(set)}, set by its rules entry (the answers' traffic alone gives ${rpsText(ceilingRps)} from ${fromTraffic})`;
  const belowPeak = set === undefined ? '' : ` ${ceilingBelowPeakWarning(set, true, scope) ?? ''}`.trimEnd();
  const generatedDerivation =
    scope.traffic.capacityRps !== undefined
      ? `${rpsText(ceilingRps)} = ${given(ctx, 'measured backend capacity', 'traffic.capacityRps')} ${rpsText(scope.traffic.capacityRps)}`
      : `${rpsText(ceilingRps)} = ${given(ctx, `peak ${rpsText(scope.traffic.peakRps)}`, 'traffic.peakRps')} x ${given(ctx, `headroom ${formatNumber(scope.traffic.headroom)}`, 'traffic.headroom')}`;
  const common = {
    id,
    source: 'generated' as const,
    tier: 'ceiling' as const,
    title: 'Global protective ceiling',
    endpointClass: 'all' as const,
    endpoints: [],
    routes: [],
    identity: 'global' as const,
    rate: { requests: ceilingRps, periodSeconds: 1 },
    cost: { default: 1, byEndpoint: [] },
    failMode: 'open' as const,
    headers: 'full' as const,
    errorCode: 'RATE_LIMITED' as const,
    killSwitch: { flag: killSwitchFlag(id) },
    derivation:
      set === undefined
        ? generatedDerivation
        : `${rpsText(set)} = stated in its rules entry, in place of ${generatedDerivation}${
            ctx.ceiling?.burst === Math.max(1, Math.ceil(set)) ? `; burst ${formatNumber(ctx.ceiling.burst)} = 1 s of that rate` : ''
          }`,
    inputs: ceilingInputs({ scope, ceilingByHand: set !== undefined }),
  };
  // at the edge where a gateway exists, unless its rules entry keeps it in the middleware (layer):
  // the row is then the middleware's, with its primitive, key and algorithm, as the files ship it
  const kept = scope.gateway !== 'none' && ctx.ceiling?.layer === 'middleware';
  if (scope.gateway !== 'none' && !kept) {
    const edge = edgeCounter({ identity: 'global' }, scope);
    const burst = edge.hasBurst ? Math.ceil(ceilingRps) : null;
    // its state lifetime and what its counter is follow the numbers that ship
    const rate = ctx.ceiling?.rate ?? common.rate;
    const shipped = ctx.ceiling ? (ctx.ceiling.burst ?? null) : burst;
    const ttl = edgeStateTtl(edge, rate, shipped);
    b.rules.push({
      ...common,
      algorithm: edge.algorithm,
      primitive: 'gateway-native',
      key: edge.key,
      burst,
      layer: 'edge',
      ttlSeconds: ttl,
      cardinality: { bound: 1, basis: edgeCeilingBasis(edge, rate, shipped, ttl) },
      rationale: `Protects the infrastructure, not any one client: ${figure}. Enforced by ${edge.component}, the cheapest place to reject. ${
        edge.shared ? `Its counter lives ${edge.where}.` : ceilingNodesText(ctx)
      }${edge.unreachable ? '' : ceilingModeNote(scope, limited)}${belowPeak}`,
    });
    return;
  }
  const burst = Math.max(1, Math.ceil(ceilingRps));
  const ttl = bucketTtl(burst, ceilingRps);
  b.rules.push({
    ...common,
    routes: routesOf(limited),
    algorithm: 'gcra',
    primitive: storePrimitive(scope),
    key: `${KEY_PREFIX}:{global}:ceiling`,
    burst,
    layer: 'middleware',
    ttlSeconds: ttl,
    cardinality: { bound: 1, basis: 'a single key for the whole deployment' },
    rationale: `Protects the infrastructure, not any one client: ${figure}. ${
      kept
        ? `Its rules entry keeps it in the middleware (layer), so the first middleware check enforces it, not ${edgeCounter({ identity: 'global' }, scope).component}`
        : 'No gateway exists, so the first middleware check enforces it'
    }; ${
      storePrimitive(scope) === 'in-process'
        ? 'one bucket in the process, checked on every request'
        : 'one hot key is cheap for Redis at this rate'
    }.${belowPeak}`,
  });
}

function addFairness(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  const { scope, ceilingRps, burstSeconds } = ctx;
  if (endpoints.length === 0) return;
  const primitive = storePrimitive(scope);
  const groups = byFailMode(scope, endpoints);

  if (scope.plans.length > 0) {
    const identity = fairnessIdentity(scope, true);
    for (const plan of scope.plans) {
      const baseId = `fairness-${slug(plan.name)}`;
      for (const group of groups) {
        const eps = group.endpoints;
        const id = b.ids.take(groups.length > 1 ? `${baseId}-fail-${group.mode}` : baseId);
        const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
        const cost = costTable(eps);
        const weighted =
          cost.byEndpoint.length > 0
            ? ` Costlier calls draw more tokens from the same bucket (${cost.byEndpoint.map((c) => `${c.endpoint} = ${c.cost}`).join(', ')}) instead of each getting a bucket of its own.`
            : '';
        const burst = Math.max(plan.burst, maxCost);
        const raised =
          burst > plan.burst ? ` Burst raised from ${plan.burst} to ${burst} so the costliest call (${maxCost} tokens) can ever pass.` : '';
        const ttl = bucketTtl(burst, plan.ratePerSecond);
        const pop = populationOf(identity, scope);
        const share = scope.plans.length > 1 ? ` (the whole ${pop.label} population is counted for each plan, an upper bound)` : '';
        const card = bound(pop.population, admitted(ctx, eps), ttl, pop.label);
        const classes = [...new Set(eps.map((e) => e.class))];
        b.rules.push({
          id,
          source: 'generated',
          tier: 'fairness',
          title: `Per-${pop.label} fairness, plan ${plan.name}${groups.length > 1 ? ` (fail ${group.mode})` : ''}`,
          endpointClass: classes.length === 1 ? (classes[0] as EndpointClass) : 'all',
          endpoints: eps.map((e) => e.name),
          routes: routesOf(eps),
          identity,
          plan: plan.name,
          algorithm: 'gcra',
          primitive,
          key: `${KEY_PREFIX}:{${KEY_TAG[identity]}}:req:${slug(plan.name)}`,
          rate: { ...plan.rate },
          burst,
          cost,
          failMode: group.mode,
          layer: 'middleware',
          ttlSeconds: ttl,
          cardinality: { ...card, basis: card.basis + share },
          headers: 'full',
          errorCode: 'RATE_LIMITED',
          killSwitch: { flag: killSwitchFlag(id) },
          rationale: said(b, id, [
            {
              text: `The ${plan.rateText} promised to plan ${plan.name}, per ${pop.label}, so one noisy ${pop.label} cannot degrade the others.`,
              about: ['rate'],
            },
            { text: weighted, about: ['cost'] },
            { text: raised, about: ['burst', 'cost'] },
            { text: splitNote(groups, group.mode), about: ['failMode', 'endpoints'] },
          ]),
          derivation: `${plan.rateText} = plan ${plan.name}'s promised rate; burst ${formatNumber(burst)} = ${burst > plan.burst ? `the costliest call (${maxCost} tokens)` : plan.assumed?.includes('burst') ? `${burstSeconds} s of the rate (assumed)` : "the plan's stated burst"}`,
          inputs: [
            `plans`,
            ...(plan.assumed?.includes('burst') ? ['plans.burst', 'traffic.burstiness'] : []),
            'failure.byClass',
            ...populationField(identity),
          ],
        });
      }
    }
    return;
  }

  const identity = fairnessIdentity(scope, false);
  const baseId = `fairness-per-${identity}`;
  const byAddress = identity === 'ip';
  const perAddress = byAddress ? perAddressRate(ctx) : undefined;
  const perClient = perClientShare(ctx);
  const { rps, rate } = perAddress ?? perClient;
  for (const group of groups) {
    const eps = group.endpoints;
    const id = b.ids.take(groups.length > 1 ? `${baseId}-fail-${group.mode}` : baseId);
    const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
    const cost = costTable(eps);
    const weighted =
      cost.byEndpoint.length > 0
        ? ` Costlier calls draw more tokens from the same bucket (${cost.byEndpoint.map((c) => `${c.endpoint} = ${c.cost}`).join(', ')}) instead of each getting a bucket of its own.`
        : '';
    const sized = shareBurst(ctx, rps, maxCost);
    const { burst } = sized;
    const ttl = bucketTtl(burst, rps);
    const pop = populationOf(identity, scope);
    const card = bound(pop.population, admitted(ctx, eps), ttl, pop.label);
    const classes = [...new Set(eps.map((e) => e.class))];
    const burstWhy = sized.held
      ? `The bucket holds ${formatNumber(burst)} tokens, ${burst > sized.ceiling ? `the costliest call (${maxCost} tokens), above ` : ''}the ceiling's own burst${burst > sized.ceiling ? ` (${formatNumber(sized.ceiling)})` : ''}: ${burstSeconds} s of rate would be ${formatNumber(sized.wanted)}, more than the whole ceiling lets through at once.`
      : burst > sized.wanted
        ? `The bucket holds ${formatNumber(burst)} tokens, raised from ${burstSeconds} s of rate (${formatNumber(sized.wanted)}) so the costliest call (${maxCost} tokens) can ever pass.`
        : `The bucket holds ${burstSeconds} s of rate (${formatNumber(burst)} tokens) for legitimate bursts.`;
    const why = perAddress
      ? `The API knows its callers only by address, so the limit is sized per address, not per person: ${perAddress.derivation}. One address can then take at most ${addressShare(ctx, rps)}.`
      : `No plan promises a rate, so each ${pop.label} may use ${rps <= ceilingRps * 0.1 ? 'at most about ' : ''}a tenth of ${theCeiling(ctx)} (${rpsText(ceilingRps * 0.1)}${perClient.step}): ${formatNumber(Math.ceil(ceilingRps / rps))} ${pop.label}${Math.ceil(ceilingRps / rps) === 1 ? '' : 's'} at ${Math.ceil(ceilingRps / rps) === 1 ? 'its' : 'their'} full rate at once ${Math.ceil(ceilingRps / rps) === 1 ? 'is' : 'are'} needed to reach the ceiling (${formatNumber(ceilingRps)} / ${formatNumber(rps)}, rounded up).`;
    b.rules.push({
      id,
      source: 'generated',
      tier: 'fairness',
      title: `Per-${pop.label} fairness${groups.length > 1 ? ` (fail ${group.mode})` : ''}`,
      endpointClass: classes.length === 1 ? (classes[0] as EndpointClass) : 'all',
      endpoints: eps.map((e) => e.name),
      routes: routesOf(eps),
      identity,
      algorithm: 'gcra',
      primitive,
      key: `${KEY_PREFIX}:{${KEY_TAG[identity]}}:req`,
      rate,
      burst,
      cost,
      failMode: group.mode,
      layer: 'middleware',
      ttlSeconds: ttl,
      cardinality: card,
      headers: 'full',
      errorCode: 'RATE_LIMITED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: said(b, id, [
        { text: why, about: ['rate'] },
        { text: burstWhy, about: ['rate', 'burst', 'cost'] },
        { text: weighted, about: ['cost'] },
        { text: splitNote(groups, group.mode), about: ['failMode', 'endpoints'] },
      ]),
      derivation: perAddress
        ? `${perAddress.derivation}; ${sized.derivation}`
        : `${rpsText(rps)} = a tenth of the ceiling (${rpsText(ceilingRps)}${ctx.ceilingByHand ? ', set by hand in its rules entry' : ''})${perClient.derivationStep}; ${sized.derivation}`,
      inputs: [
        ...(perAddress ? ['traffic.clientPeakRps', 'traffic.clientsPerAddress'] : ['plans']),
        ...ceilingInputs(ctx),
        'traffic.burstiness',
        'failure.byClass',
        ...populationField(identity),
      ],
    });
  }
}

/**
 * "5% of the 2,400 req/s peak": the share of the traffic one address's rate can take. A ceiling
 * that admits less than the peak (set by hand, or a measured capacity) caps what there is to
 * share: the share is then of what it admits (admitted: the gateway fleet as its files ship it).
 */
function addressShare(ctx: MatrixContext, rps: number): string {
  const peak = ctx.scope.traffic.peakRps;
  const fleet = admitted(ctx).rps;
  if (fleet >= peak) return `${formatPercentOf(rps, peak)} of the ${rpsText(peak)} peak`;
  return `${formatPercentOf(rps, fleet)} of the ${rpsText(fleet)} the ceiling admits${ctx.ceilingByHand ? ' (set by hand in its rules entry)' : ''}, which caps the ${rpsText(peak)} peak`;
}

/** "0.25%": what share of `total` a rate is. */
function formatPercentOf(part: number, total: number): string {
  const pct = (part / total) * 100;
  return `${pct >= 10 ? formatNumber(Math.round(pct)) : formatNumber(Math.round(pct * 100) / 100)}%`;
}

/**
 * The per-IP row of the endpoints that allow anonymous callers. `perAccount`: the rows keyed on
 * an account identity cover them too (buildMatrix), which its rationale says.
 */
function addAnonymous(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[], perAccount: boolean): void {
  if (endpoints.length === 0) return;
  const { scope } = ctx;
  const { rps, rate, derivation } = perAddressRate(ctx);
  const atEdge = scope.gateway !== 'none';
  const edge = atEdge ? edgeCounter({ identity: 'ip' }, scope) : undefined;
  const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
  const sized = edge && !edge.hasBurst ? null : shareBurst(ctx, rps, maxCost);
  const burst = sized ? sized.burst : null;
  // a shared fixed window's key lives for its window; a node's counter as long as the gateway keeps idle state
  const ttl = edge ? edgeStateTtl(edge, rate, burst) : bucketTtl(burst ?? 1, rps);
  const card = bound(undefined, admitted(ctx, endpoints), ttl, 'IP');
  // At the edge a shared count fails as the gateway's setting says, one setting for every route;
  // a count in the node (or the provider's) has nothing to lose and states the answers' mode for
  // its classes, the strictest where they differ (one count is not split by class), the mode it
  // keeps if it moves to a shared store. In the middleware the rule fails as the answers say for
  // each class (split when they differ).
  const groups = edge
    ? [
        {
          mode:
            edge.unreachable?.mode ??
            answeredEdgeMode(
              scope,
              endpoints.map((e) => e.class),
            ),
          endpoints,
        },
      ]
    : byFailMode(scope, endpoints);
  for (const group of groups) {
    const eps = group.endpoints;
    const id = b.ids.take(groups.length > 1 ? `anonymous-per-ip-fail-${group.mode}` : 'anonymous-per-ip');
    const classes = [...new Set(eps.map((e) => e.class))];
    const account = fairnessIdentity(scope, scope.plans.length > 0);
    const kinds = [account, ...scope.identities.filter((i) => i !== account && i !== 'ip')].map((i) => populationOf(i, scope).label);
    const identified = perAccount
      ? ` It counts identified callers too, by their address; a caller with ${kinds.map((k) => `${/^[AEIOU]/.test(k) ? 'an' : 'a'} ${k}`).join(' or ')} is also counted by ${scope.plans.length === 0 ? 'the fairness row of its identity' : ctx.quotaReset && scope.plans.some((p) => p.quota !== undefined) ? "its plan's fairness and quota rows" : "its plan's fairness row"} there, as on every other endpoint.`
      : '';
    const nat: Said[] = [
      { text: `Keyed on the trusted client IP, the only identity an anonymous caller has.${identified}`, about: ['key', 'identity'] },
      {
        text: `It is sized per address, not per person: ${derivation}, ${behindOneAddress(ctx, rps)}. One address can take at most ${addressShare(ctx, rps)}${
          rps <= ctx.ceilingRps * ADDRESS_CEILING_SHARE
            ? ', so scraping from one address stays a small share'
            : `, more than the tenth of the ceiling the design keeps an address to: a tenth of a ceiling this low is no usable per-address rate (the derivation says how it was raised)${rps >= ctx.ceilingRps ? ', so only the ceiling itself bounds what one address takes' : ''}`
        }.`,
        about: ['rate'],
      },
      { text: perNodeAddressNote(scope, edge, 'That share'), alone: perNodeAddressNote(scope, edge, 'Its rate'), about: ['layer', 'key'] },
    ];
    b.rules.push({
      id,
      source: 'generated',
      tier: 'fairness',
      title: `Anonymous traffic per client IP${groups.length > 1 ? ` (fail ${group.mode})` : ''}`,
      endpointClass: classes.length === 1 ? (classes[0] as EndpointClass) : 'all',
      endpoints: eps.map((e) => e.name),
      routes: routesOf(eps),
      identity: 'ip',
      algorithm: edge ? edge.algorithm : 'gcra',
      primitive: edge ? 'gateway-native' : storePrimitive(scope),
      key: edge ? edge.key.replace('<rule id>', id) : `${KEY_PREFIX}:{${KEY_TAG.ip}}:anon`,
      rate,
      burst,
      cost: costTable(eps),
      failMode: group.mode,
      layer: edge ? 'edge' : 'middleware',
      ttlSeconds: ttl,
      cardinality: card,
      headers: 'full',
      errorCode: 'RATE_LIMITED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: said(b, id, [
        ...nat,
        {
          text: edge
            ? `Enforced at the edge (${edge.component}), where the client address is first known and rejection is cheapest. ${edgeStateNote(
                edge,
                scope,
                eps.map((e) => e.class),
              )}`
            : splitNote(groups, group.mode),
          about: ['layer', 'failMode', 'endpoints'],
        },
      ]),
      derivation: `${derivation}${sized ? `; ${sized.derivation}` : ''}`,
      inputs: [
        'traffic.clientPeakRps',
        'traffic.clientsPerAddress',
        ...ceilingInputs(ctx),
        'traffic.burstiness',
        ...(edge?.unreachable ? [] : ['failure.byClass']),
      ],
    });
  }
}

/**
 * An old limit taken over that was counted in several places on its own (an nginx limit_req on
 * each nginx node, an in-process store in each instance); the new row counts it once for the whole
 * fleet in the store (or once per instance, `rowCounters`, where it counts in each process), with
 * the same numbers: tighter by the ratio of the two counts, said so.
 */
function takenOverTighter(scope: Scope, kept: ExistingLimiterT, rowCounters: number): string {
  const counters = existingCounters(scope, kept);
  if (!counters || counters.k <= rowCounters) return '';
  const where =
    counters.unit === 'instance'
      ? `each of the ${formatNumber(counters.k)} instances counted it in its own memory`
      : `each of the ${formatNumber(counters.k)} nginx nodes counted it on its own`;
  const now = rowCounters > 1 ? `on each of ${formatNumber(rowCounters)} instances` : 'once for the whole fleet';
  return ` It is tighter than before, though: ${where}, while this row counts it ${now}, so an address whose requests were spread over them could pass up to ${formatNumber(counters.k)} times the limit and now passes it ${rowCounters > 1 ? `${formatNumber(rowCounters)} times` : 'once'}.`;
}

/** Where an auth row counts, in words: "for the whole fleet", "across the 3 instances, each in its own memory". */
function rowCountersText(rowCounters: number): string {
  return rowCounters > 1 ? `across the ${formatNumber(rowCounters)} instances, each counting in its own memory` : 'for the whole fleet';
}

function addAuth(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  const { scope } = ctx;
  const byKind = new Map<AuthKind, ResolvedEndpoint[]>();
  for (const e of endpoints) {
    const kind = e.authKind ?? 'login';
    byKind.set(kind, [...(byKind.get(kind) ?? []), e]);
  }
  for (const [kind, eps] of [...byKind.entries()].sort(([a], [b2]) => a.localeCompare(b2))) {
    const limits = AUTH_LIMITS[kind];
    const failMode = scope.failureByClass.auth;
    const tag = `auth:${kind}`;
    const window = limits.windowSeconds;
    const windowText = window >= 3600 ? `${window / 3600} h` : `${window / 60} min`;
    const common = {
      source: 'generated' as const,
      tier: 'security' as const,
      endpointClass: 'auth' as const,
      endpoints: eps.map((e) => e.name),
      routes: routesOf(eps),
      algorithm: 'sliding-window-log' as const,
      primitive: storePrimitive(scope),
      burst: null,
      cost: { default: 1, byEndpoint: [] },
      failMode,
      layer: 'middleware' as const,
      ttlSeconds: window,
      headers: 'silent' as const,
      errorCode: 'RATE_LIMITED' as const,
    };
    const userId = b.ids.take(`auth-${kind}-per-identity`);
    const ipId = b.ids.take(`auth-${kind}-per-ip`);
    const userCard = bound(undefined, admitted(ctx, eps), window, 'username');
    // the row counts in each process with no store: the fleet admits it once per instance
    const rowCounters = common.primitive === 'in-process' && scope.topology === 'horizontal' ? scope.instances : 1;
    const kept = tighterExisting(scope, ctx.existing ?? [], eps, { requests: limits.perIp, periodSeconds: window }, rowCounters);
    const ipRate = kept
      ? { requests: kept.limit, periodSeconds: Math.max(1, Math.round(kept.windowSeconds)) }
      : { requests: limits.perIp, periodSeconds: window };
    const ipWindowText =
      ipRate.periodSeconds >= 3600 && ipRate.periodSeconds % 3600 === 0
        ? `${ipRate.periodSeconds / 3600} h`
        : ipRate.periodSeconds % 60 === 0
          ? `${ipRate.periodSeconds / 60} min`
          : `${ipRate.periodSeconds} s`;
    const ipCard = bound(undefined, admitted(ctx, eps), ipRate.periodSeconds, 'IP');
    const keptText = kept
      ? ` Taken over from the limiter already in place, ${existingName(kept)}: ${existingLimitText(kept)} per IP, which lets one address send ${existingWorstText(kept, existingCounters(scope, kept))}; that is tighter than this flow's default of ${limits.perIp} per ${windowText} (which would admit ${formatNumber((admittedWithin({ ...common, rate: { requests: limits.perIp, periodSeconds: window } }, kept.windowSeconds) ?? 0) * rowCounters)} within its ${formatNumber(kept.windowSeconds)} s ${rowCountersText(rowCounters)}). A limit in force is not loosened without a decision: replace it with a rules entry for this id if the default is wanted.${takenOverTighter(scope, kept, rowCounters)}`
      : '';
    b.rules.push({
      ...common,
      id: userId,
      title: `${kind} attempts per ${limits.identityLabel}`,
      identity: 'username',
      key: `${KEY_PREFIX}:{${tag}}:un:<sha256(${limits.identityLabel.replace(/ /g, '-')})>`,
      rate: { requests: limits.perIdentity, periodSeconds: window },
      ttlSeconds: window,
      cardinality: userCard,
      killSwitch: { flag: killSwitchFlag(userId) },
      derivation: `${limits.perIdentity} per ${windowText} = the ${kind} flow's per-${limits.identityLabel} default, not derived from traffic`,
      inputs: [
        'failure.byClass',
        'rules.auth',
        ...(eps.some((e) => e.assumed?.includes('authKind'))
          ? [...eps.filter((e) => e.assumed?.includes('authKind')).map((e) => `endpoints.${e.name}.authKind`)]
          : []),
      ],
      rationale: said(b, userId, [
        {
          text: `Stops ${limits.threat}: ${limits.perIdentity} attempts per ${windowText}, counted exactly (sliding log).`,
          about: ['rate', 'algorithm'],
        },
        {
          text:
            failMode === 'closed'
              ? 'Fails closed: admitting unlimited attempts during a store outage is itself the incident.'
              : 'Fails open, as the answers ask; consider closed, since unlimited attempts during a store outage is itself an incident.',
          about: ['failMode'],
        },
        { text: 'Silent: no remaining-count headers for attackers.', about: ['headers'] },
      ]),
    });
    b.rules.push({
      ...common,
      id: ipId,
      title: `${kind} attempts per client IP`,
      identity: 'ip',
      key: `${KEY_PREFIX}:{${tag}}:ip:<client-ip>`,
      rate: ipRate,
      ttlSeconds: ipRate.periodSeconds,
      cardinality: ipCard,
      killSwitch: { flag: killSwitchFlag(ipId) },
      rationale: said(b, ipId, [
        {
          text: `Stops ${limits.ipThreat} (one address, many ${limits.identityLabel}${limits.identityLabel.endsWith('s') ? 'es' : 's'}): ${ipRate.requests} attempts per ${ipWindowText} from the trusted client IP${kept ? '' : ', high enough for a shared NAT address'}.`,
          about: ['rate'],
        },
        { text: AUTH_IP_ONLY[kind] ?? '' },
        { text: 'Each of the two rows alone has a known bypass; together they close both.' },
        { text: keptText, about: ['rate'] },
      ]),
      derivation: kept
        ? `${formatNumber(ipRate.requests)} per ${ipWindowText} = the existing limiter ${existingName(kept)} (tighter than the ${limits.perIp} per ${windowText} default)`
        : `${limits.perIp} per ${windowText} = the ${kind} flow's per-address default (attempts a shared address needs), not derived from traffic`,
      inputs: ['failure.byClass', ...(kept ? [] : ['rules.auth'])],
      ...(kept ? { keptFrom: existingName(kept) } : {}),
    });
  }
}

function addWebhooks(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  if (endpoints.length === 0) return;
  const { scope, ceilingRps, burstSeconds } = ctx;
  const id = b.ids.take('webhooks-per-source');
  const fifth = ceilingRps * 0.2;
  const share = withinCeiling(ctx, niceFloor(Math.max(10, fifth)));
  const { rps } = share;
  const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
  // One sender's burst never exceeds what the ceiling itself admits at once (its burst, as it ships).
  const { burst, wanted, held, ceiling } = shareBurst(ctx, rps, maxCost);
  const rateWhy =
    fifth >= 10
      ? `a fifth of ${theCeiling(ctx)} (${rpsText(fifth)})${rps !== fifth ? `, rounded down to ${formatNumber(rps)}` : ''}, so one sender's storm leaves most of the ceiling to customers`
      : share.held
        ? `the floor of 10 req/s (a fifth of ${theCeiling(ctx)} would be ${formatNumber(fifth)})${share.text}, so one sender can take the whole ceiling`
        : `the floor of 10 req/s (a fifth of ${theCeiling(ctx)} would be ${formatNumber(fifth)})`;
  const burstWhy = held
    ? `burst ${formatNumber(burst)}, ${burst > ceiling ? `the costliest call (${maxCost} tokens), above the ceiling's own burst (${formatNumber(ceiling)})` : "the ceiling's own burst"}: ${burstSeconds} s of rate would be ${formatNumber(wanted)}, more than the whole ceiling admits at once`
    : burst > wanted
      ? `burst ${formatNumber(burst)}, raised from ${burstSeconds} s of rate so the costliest call (${maxCost} tokens) can pass`
      : `burst ${formatNumber(burst)} (${burstSeconds} s of rate)`;
  const ttl = bucketTtl(burst, rps);
  b.rules.push({
    id,
    source: 'generated',
    tier: 'fairness',
    title: 'Inbound webhooks per sending address',
    endpointClass: 'webhook',
    endpoints: endpoints.map((e) => e.name),
    routes: routesOf(endpoints),
    identity: 'ip',
    algorithm: 'gcra',
    primitive: storePrimitive(scope),
    key: `${KEY_PREFIX}:{${KEY_TAG.ip}}:webhook`,
    rate: share.rate,
    burst,
    cost: costTable(endpoints),
    failMode: scope.failureByClass.webhook,
    layer: 'middleware',
    ttlSeconds: ttl,
    cardinality: bound(undefined, admitted(ctx, endpoints), ttl, 'IP'),
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    killSwitch: { flag: killSwitchFlag(id) },
    rationale: said(b, id, [
      {
        text: "Webhook senders retry on 429, so shedding a storm loses nothing; they are kept out of customers' fairness buckets so a provider's retry storm never spends a customer's budget.",
      },
      { text: `${rpsText(rps)} per sending address: ${rateWhy}; ${burstWhy}.`, about: ['rate', 'burst', 'cost'] },
    ]),
    derivation: `${rpsText(rps)} = ${fifth >= 10 ? `a fifth of ${theCeiling(ctx)}${rps !== fifth ? ', rounded down' : ''}` : `the 10 req/s floor${share.held ? ", held at the ceiling's own rate" : ''}`}; burst ${formatNumber(burst)}`,
    inputs: [...ceilingInputs(ctx), 'traffic.burstiness'],
  });
}

function periodSecondsOf(reset: QuotaResetT): { seconds: number; text: string; ttl: number; windows: number } {
  if (reset.kind === 'rolling') {
    return {
      seconds: reset.days * 86400,
      text: `rolling ${reset.days} days`,
      // the key expires when its newest daily bucket leaves the window: at most the window itself
      ttl: reset.days * 86400,
      windows: reset.days + 1,
    };
  }
  if (reset.period === 'day') {
    return { seconds: 86400, text: `calendar day (${reset.timeZone})`, ttl: 86400 + 3600, windows: 2 };
  }
  return { seconds: 31 * 86400, text: `calendar month (${reset.timeZone})`, ttl: 31 * 86400 + 86400, windows: 2 };
}

function addQuotas(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  const { scope, quotaReset } = ctx;
  if (!quotaReset) return;
  const identity = fairnessIdentity(scope, true);
  const pop = populationOf(identity, scope);
  const period = periodSecondsOf(quotaReset);
  for (const plan of scope.plans) {
    if (plan.quota === undefined) continue;
    const id = b.ids.take(`quota-${slug(plan.name)}`);
    const cutoff = quotaStop(plan.quota, plan.exhaustion, plan.overageCap);
    const capAssumed = plan.exhaustion !== 'hard' && plan.overageCap === undefined;
    const capText = `${formatNumber(cutoff)} (${capAssumed ? `${plan.exhaustion === 'soft-warning' ? '120% of the quota' : `${formatNumber(QUOTA_BACKSTOP['pay-per-overage'])}x the quota`}, an assumed cap: an open product decision the answers did not make` : 'the overage cap the answers set'})`;
    const rolling = quotaReset.kind === 'rolling';
    const population = pop.population ?? scope.traffic.distinctClients;
    const until = rolling ? 'enough old usage ages out' : 'the reset';
    const behaviour =
      plan.exhaustion === 'hard'
        ? `requests past ${formatNumber(plan.quota)} get 429 QUOTA_EXCEEDED until ${until}`
        : plan.exhaustion === 'soft-warning'
          ? `past ${formatNumber(plan.quota)} requests still pass with a warning; at ${capText} they get 429 QUOTA_EXCEEDED until ${until}`
          : `past ${formatNumber(plan.quota)} requests pass and are billed as overage by the metering system; at ${capText} they get 429 QUOTA_EXCEEDED until ${until}`;
    b.rules.push({
      id,
      source: 'generated',
      tier: 'quota',
      title: `Plan ${plan.name} quota`,
      endpointClass: 'all',
      endpoints: endpoints.map((e) => e.name),
      routes: routesOf(endpoints),
      identity,
      plan: plan.name,
      algorithm: 'fixed-window',
      primitive: storePrimitive(scope),
      key:
        quotaReset.kind === 'rolling'
          ? `${KEY_PREFIX}:{${KEY_TAG[identity]}}:quota:rolling`
          : `${KEY_PREFIX}:{${KEY_TAG[identity]}}:quota:<${quotaReset.period === 'month' ? 'yyyy-mm' : 'yyyy-mm-dd'}>`,
      rate: { requests: cutoff, periodSeconds: period.seconds, periodText: period.text },
      ...(plan.exhaustion !== 'hard' ? { quotaBackstop: { quota: plan.quota, factor: cutoff / plan.quota, assumed: capAssumed } } : {}),
      burst: null,
      cost: { default: 1, byEndpoint: [] },
      failMode: 'open',
      layer: 'middleware',
      ttlSeconds: period.ttl,
      cardinality: {
        bound: quotaReset.kind === 'rolling' ? population : population * period.windows,
        basis:
          quotaReset.kind === 'rolling'
            ? `${formatNumber(population)} ${pop.label}s, one hash of daily buckets each`
            : `${formatNumber(population)} ${pop.label}s x ${period.windows} live window keys`,
      },
      headers: 'full',
      errorCode: 'QUOTA_EXCEEDED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: said(b, id, [
        {
          text: `Business quota of ${formatNumber(plan.quota)} calls per ${period.text} for plan ${plan.name}: ${behaviour}.`,
          about: ['rate'],
        },
        {
          text: rolling
            ? `Counted in one bucket per UTC day, summed over the last ${quotaReset.days} days: usage ages out a day at a time, so the quota never renews all at once (at worst, what was spent on the window's oldest day is spent again the moment that day ages out: see the worst-case table).`
            : 'A fixed window is right at this length: a boundary burst is negligible against a month of traffic.',
          about: ['rate', 'algorithm'],
        },
        {
          text: 'Fails open: a few uncounted calls during an outage cost less than refusing paying customers (every endpoint it covers is also counted by a fairness row that fails as its class was answered).',
          about: ['failMode'],
        },
      ]),
      derivation: `${formatNumber(plan.quota)} per ${period.text} = plan ${plan.name}'s quota${plan.exhaustion !== 'hard' ? `; refused past ${formatNumber(cutoff)} = ${capAssumed ? 'assumed cap' : 'stated overage cap'}` : ''}${ctx.assumed?.has('quotas.reset') ? ' (reset assumed)' : ''}`,
      inputs: ['plans', 'quotas.reset', 'quotas.exhaustion', ...(capAssumed ? ['plans.overageCap'] : []), ...populationField(identity)],
    });
  }
}

function addOutbound(b: Builder, ctx: MatrixContext): void {
  const { scope } = ctx;
  for (const p of scope.outbound) {
    const id = b.ids.take(`outbound-${slug(p.name)}`);
    const shared = p.bucket === 'shared' && scope.store !== 'none';
    const rate = { requests: outboundRate(p.limit.requests, p.safetyFraction), periodSeconds: p.limit.periodSeconds };
    const ttl = bucketTtl(p.burst, perSecond(rate));
    const per = p.limit.periodSeconds === 1 ? 'second' : formatDurationWords(p.limit.periodSeconds);
    const pct = `${Math.round(p.safetyFraction * 100)}%`;
    const { peak, over } = outboundPeak(p);
    const sharing = shared
      ? `shared by all ${scope.instances} instance(s) through the store (${scope.instances} instances each running their own ${pct} would send ${formatNumber(scope.instances * p.safetyFraction)}x the limit)`
      : scope.instances > 1
        ? `kept in each instance, so ${scope.instances} instances together can send ${formatNumber(scope.instances * p.safetyFraction)}x the limit: move it into the shared store`
        : 'kept in the one instance';
    const burstText =
      over > 0
        ? ` Warning: burst ${formatNumber(p.burst)} plus ${outboundRefillText(rate)} lets up to ${formatNumber(peak)} calls through in one ${per}, ${formatNumber(over)} over the provider's ${p.limitText}; lower the burst to at most ${formatNumber(Math.max(1, p.limit.requests - rate.requests))}.`
        : ` Burst ${formatNumber(p.burst)}: a full bucket plus one ${per} of refill sends at most ${outboundSumText(p.burst, rate.requests, peak)} in a ${per}, ${peak === p.limit.requests ? 'exactly' : 'within'} ${p.name}'s ${p.limitText}.`;
    b.rules.push({
      id,
      source: 'generated',
      tier: 'outbound',
      title: `Calls to ${p.name}`,
      endpointClass: 'all',
      endpoints: [],
      routes: [],
      identity: 'provider',
      algorithm: 'gcra',
      primitive: shared ? 'redis-lua' : 'in-process',
      // in-process: the outbound client's own Map of buckets is keyed by the provider's name (client.ts)
      key: shared ? `${KEY_PREFIX}:{out:${slug(p.name)}}:bucket` : p.name,
      rate,
      burst: p.burst,
      cost: { default: 1, byEndpoint: [] },
      failMode: 'closed',
      layer: 'outbound-client',
      // in-process: no TTL; the client keeps the entry while it lives, one per provider (the bound)
      ...(shared ? { ttlSeconds: ttl } : {}),
      cardinality: {
        bound: 1,
        basis: shared
          ? `one key for this provider: outbound-bucket.lua keeps a provider pause in the same key as the bucket. Its TTL is the time the bucket takes to refill (${formatNumber(ttl)} s), longer while calls are booked ahead (by up to the wait a caller accepts) or a provider pause is in force (the provider's Retry-After plus the refill time)`
          : `one bucket for this provider in the outbound client's memory, an entry of the client object's own Map under the provider's name (${p.name}): one number, the time its next slot frees, which a provider pause moves later; it has no TTL: the client keeps it as long as the client object lives and never drops it, which bounds it by the providers (one entry each), not by time; a stale entry lets a call through as a full bucket would. Make one client per process and share it (a second client keeps a second bucket)`,
      },
      headers: 'none',
      errorCode: 'RATE_LIMITED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: said(b, id, [
        {
          text: `${p.name} documents ${p.limitText}; the bucket admits ${pct} of it to absorb accounting differences, ${sharing}.`,
          about: ['rate'],
        },
        { text: burstText, about: ['rate', 'burst'] },
        {
          text: shared
            ? 'Fails closed: when the store is unreachable, calls wait rather than risk a provider ban.'
            : 'Fails closed: no call goes out without a slot in the bucket; kept in-process, the bucket has no store that could fail.',
          about: ['failMode'],
        },
      ]),
      derivation: `${ratePer(rate, true)} = ${outboundRateText(p)}${p.assumed?.includes('safetyFraction') ? ' (assumed)' : ''}; burst ${formatNumber(p.burst)}${p.assumed?.includes('burst') ? ' (assumed, see the assumptions)' : ' (stated)'}`,
      inputs: [
        'outbound',
        ...(p.assumed?.includes('safetyFraction') ? ['outbound.safetyFraction'] : []),
        ...(p.assumed?.includes('burst') ? ['outbound.burst'] : []),
      ],
    });
  }
}

/** Applies hand-written rules: override by id, remove, or add. */
export function applyHandRules(
  rules: MatrixRule[],
  hand: HandRule[],
  scope: Scope,
  said: ReadonlyMap<string, readonly Said[]> = new Map(),
): MatrixRule[] {
  let out = rules.slice();
  for (const h0 of hand) {
    // a rule split by fail mode keeps its hand-written overrides: the base id names both halves
    const halves = out.some((r) => r.id === h0.id)
      ? []
      : out.filter((r) => r.id === `${h0.id}-fail-open` || r.id === `${h0.id}-fail-closed`);
    const targets = halves.length > 0 ? halves.map((r) => ({ ...h0, id: r.id })) : [h0];
    for (const h of targets) {
      const idx = out.findIndex((r) => r.id === h.id);
      if (h.remove) {
        out = out.filter((r) => r.id !== h.id);
        continue;
      }
      const endpoints = h.endpoints ?? (idx >= 0 ? (out[idx] as MatrixRule).endpoints : []);
      const eps = scope.endpoints.filter((e) => endpoints.includes(e.name));
      const patch: Partial<MatrixRule> = {
        ...(h.description ? { title: h.description } : {}),
        ...(h.endpointClass ? { endpointClass: h.endpointClass } : {}),
        ...(h.endpoints ? { endpoints: h.endpoints, routes: routesOf(eps) } : {}),
        ...(h.identity ? { identity: h.identity } : {}),
        ...(h.algorithm ? { algorithm: h.algorithm } : {}),
        ...(h.primitive ? { primitive: h.primitive } : {}),
        ...(h.key ? { key: storeKeyOf(h.key, h.layer ?? (idx >= 0 ? (out[idx] as MatrixRule).layer : undefined)) } : {}),
        ...(h.rate ? { rate: { requests: h.rate.requests, periodSeconds: PERIOD_SECONDS[h.rate.per] } } : {}),
        ...(h.burst !== undefined ? { burst: h.burst } : {}),
        ...(h.cost !== undefined ? { cost: { default: h.cost, byEndpoint: [] } } : {}),
        ...(h.failMode ? { failMode: h.failMode } : {}),
        ...(h.layer ? { layer: h.layer } : {}),
        ...(h.ttlSeconds !== undefined ? { ttlSeconds: h.ttlSeconds } : {}),
        ...(h.cardinalityBound !== undefined ? { cardinality: { bound: h.cardinalityBound, basis: 'stated in a hand-written rule' } } : {}),
        ...(h.headers ? { headers: h.headers } : {}),
        ...(h.rationale ? { rationale: h.rationale } : {}),
      };
      if (idx >= 0) {
        const base = out[idx] as MatrixRule;
        const moved = movedOffEdge(base, h, scope);
        const merged: MatrixRule = {
          ...base,
          ...patch,
          ...moved,
          source: 'overridden',
          ...ceilingBurstFollows(base, h),
          ...handSet(base, h, said.get(base.id) ?? said.get(h0.id)),
        };
        // new numbers, same state lifetime rule: the TTL follows them unless the answers set it
        if (h.ttlSeconds === undefined && (h.rate || h.burst !== undefined || h.algorithm || moved.primitive)) {
          const ttl = stateTtl(merged);
          if (ttl !== undefined) merged.ttlSeconds = ttl;
        }
        if (h.killSwitch === false) delete merged.killSwitch;
        out[idx] = merged;
      } else {
        const identity = h.identity ?? identityOfKey(h.key) ?? 'ip';
        const layer = h.layer;
        const key = h.key ? storeKeyOf(h.key, layer) : defaultKey(h.id, identity, layer, scope);
        const cost = h.cost === undefined ? costFromEndpoints(h, scope) : undefined;
        // an auth rule: its class says so, or every endpoint it covers is an auth endpoint (an MFA
        // step, a login): a security rule, silent, as the generated auth rows are
        const covered = scope.endpoints.filter((e) => (h.endpoints ?? []).includes(e.name));
        const auth =
          h.endpointClass === 'auth' || (h.endpointClass === undefined && covered.length > 0 && covered.every((e) => e.class === 'auth'));
        const defaulted = [
          ...(h.identity === undefined ? [`identity ${identity} (${h.key ? 'read from its key' : 'none stated: the client IP'})`] : []),
          ...(auth && h.endpointClass === undefined ? ['a security rule, silent (every endpoint it covers is an auth endpoint)'] : []),
          ...(h.key === undefined ? [`key ${key} (the design's pattern for its identity)`] : []),
          ...(cost ? [`cost from the costs its endpoints state (${cost.text})`] : []),
        ];
        const rule: MatrixRule = {
          id: h.id,
          source: 'hand-written',
          tier: auth ? 'security' : 'fairness',
          title: h.description ?? h.id,
          endpointClass: h.endpointClass ?? (auth ? 'auth' : 'all'),
          endpoints: [],
          routes: [],
          headers: auth ? 'silent' : 'full',
          errorCode: 'RATE_LIMITED',
          rationale: 'Hand-written rule from the answers file.',
          ...(h.killSwitch === false ? {} : { killSwitch: { flag: killSwitchFlag(h.id) } }),
          ...patch,
          identity,
          key,
          ...(cost ? { cost: cost.table } : {}),
          ...(defaulted.length > 0 ? { derivation: `stated in a hand-written rule; ${defaulted.join('; ')}` } : {}),
        };
        out.push(rule);
      }
    }
  }
  return out;
}

/**
 * A row a rules entry moves off the edge (layer "middleware") without naming a primitive or a
 * key: it takes what the design gives a middleware row, as the ceiling does when its entry keeps
 * it in the middleware (addCeiling): the store's primitive and the key pattern for its identity,
 * in place of the gateway's limiter and key, which the middleware does not run; the derivation
 * says so. An entry that names them keeps its own (an explicit gateway-native is refused).
 */
function movedOffEdge(base: MatrixRule, h: HandRule, scope: Scope): Partial<MatrixRule> {
  if (base.layer !== 'edge' || h.layer !== 'middleware' || base.primitive !== 'gateway-native') return {};
  const primitive = h.primitive ?? storePrimitive(scope);
  const key = h.key ? undefined : defaultKey(base.id, base.identity ?? 'global', 'middleware', scope);
  const set = [...(h.primitive ? [] : [`primitive ${primitive}`]), ...(key ? [`key ${key}`] : [])];
  return {
    primitive,
    ...(key ? { key } : {}),
    ...(set.length > 0
      ? {
          derivation: `${base.derivation ? `${base.derivation}; ` : ''}moved to the middleware by its rules entry (layer), so ${joinAnd(set)}, the design's for a middleware row, in place of the gateway's`,
        }
      : {}),
  };
}

/**
 * The ceiling's generated burst is one second of its rate: a rules entry that sets its rate and
 * no burst gets one second of the rate it sets, not of the rate the traffic gives.
 */
function ceilingBurstFollows(base: MatrixRule, h: HandRule): Partial<MatrixRule> {
  if (base.tier !== 'ceiling' || !h.rate || h.burst !== undefined || typeof base.burst !== 'number') return {};
  return { burst: Math.max(1, Math.ceil(h.rate.requests / PERIOD_SECONDS[h.rate.per])) };
}

/**
 * What an overridden row says about the numbers its rules entry sets by hand (when the entry
 * writes no rationale of its own): the generated reasoning for the figures it replaces is no
 * longer true, so it goes, and each replaced step of the derivation names the entry; the parts
 * of the generated text about no replaced number (its key, where it is enforced, its fail mode)
 * stay, and other fields set by hand are named after them. The ceiling states its own entry's
 * figures (addCeiling), and is left as it is.
 */
function handSet(base: MatrixRule, h: HandRule, parts: readonly Said[] | undefined): Partial<MatrixRule> {
  if (base.tier === 'ceiling') return {};
  const numbers: { field: HandNumber; text: string }[] = [
    ...(h.rate
      ? [{ field: 'rate' as const, text: `rate ${rateFigure({ requests: h.rate.requests, periodSeconds: PERIOD_SECONDS[h.rate.per] })}` }]
      : []),
    ...(h.burst !== undefined ? [{ field: 'burst' as const, text: `burst ${formatNumber(h.burst)}` }] : []),
    ...(h.cost !== undefined ? [{ field: 'cost' as const, text: `cost ${formatNumber(h.cost)}` }] : []),
  ];
  const set = new Set(numbers.map((n) => n.field));
  const fields = Object.keys(h).filter((k) => !['id', 'rate', 'burst', 'cost', 'rationale', 'description'].includes(k));
  const derivation = numbers.length > 0 ? { derivation: handDerivation(base.derivation, numbers) } : {};
  if (h.rationale) return derivation;
  if (numbers.length === 0 && fields.length === 0) return {};
  // the generated parts about no field the entry sets; one that leans on a dropped part says so alone
  const kept: string[] = [];
  let dropped = false;
  // a field set to what the row already had leaves the text about it true
  const changed = fields.filter((k) => JSON.stringify(h[k as keyof HandRule]) !== JSON.stringify(base[k as keyof MatrixRule]));
  for (const p of parts ?? [{ text: base.rationale ?? '' }]) {
    if (p.about?.some((f) => set.has(f as HandNumber) || changed.includes(f))) dropped = true;
    else kept.push(dropped && p.alone ? p.alone.trim() : p.text);
  }
  if (numbers.length === 0) return { rationale: [...kept, `Its rules entry in the answers sets ${joinAnd(fields)} by hand.`].join(' ') };
  return {
    ...derivation,
    rationale: [
      `${base.title}: set by hand in the answers (its rules entry states ${joinAnd(numbers.map((n) => n.text))}${fields.length > 0 ? `, and ${joinAnd(fields)}` : ''}), in place of the figures the design derives; the generated reasoning for those figures no longer applies.`,
      ...kept,
    ].join(' '),
  };
}

/**
 * A generated derivation with the steps for the numbers a rules entry sets replaced, each by
 * the entry's figure: its steps are "; "-separated, a "burst ..." step for the burst and the
 * others for the rate; a number with no step of its own is added at the end.
 */
function handDerivation(generated: string | undefined, numbers: readonly { field: HandNumber; text: string }[]): string {
  const steps = generated ? generated.split('; ') : [];
  const stepOf = (step: string): HandNumber => (step.startsWith('burst ') ? 'burst' : 'rate');
  const stated = (n: { text: string }, was: readonly string[]) =>
    `${n.text} = stated in its rules entry${was.length > 0 ? `, in place of ${was.join('; ')}` : ''}`;
  const out: string[] = [];
  const placed = new Set<HandNumber>();
  const rate = numbers.find((n) => n.field === 'rate');
  for (const step of steps) {
    const n = numbers.find((x) => x.field === stepOf(step));
    // a burst kept from the design, reckoned from the rate the entry replaces, says so
    if (!n && rate && stepOf(step) === 'burst' && / of (the )?rate\b/.test(step))
      out.push(`${step} (the rate the design derives, not the one stated)`);
    else if (!n) out.push(step);
    else if (!placed.has(n.field)) {
      placed.add(n.field);
      out.push(
        stated(
          n,
          steps.filter((s) => stepOf(s) === n.field),
        ),
      );
    }
  }
  return [...out, ...numbers.filter((n) => !placed.has(n.field)).map((n) => stated(n, []))].join('; ');
}

/** The identity a key pattern names in its hash tag ({u:<user-id>} is a user), as the middleware reads it; undefined when it names none. */
export function identityOfKey(key: string | undefined): Exclude<RuleIdentity, 'global' | 'provider'> | undefined {
  const k = (key ?? '').toLowerCase();
  if (k === '') return undefined;
  if (/<[^>]*sha256/.test(k)) return 'username';
  if (/<[^>]*ip[^>]*>/.test(k)) return 'ip';
  if (/<[^>]*tenant/.test(k)) return 'tenant';
  if (/<[^>]*user/.test(k)) return 'user';
  if (/<[^>]*session/.test(k)) return 'session';
  if (/<[^>]*key/.test(k)) return 'api-key';
  return undefined;
}

/**
 * The key of a hand-written rule that states none: the design's pattern for its identity, with
 * the rule id as the rest (rl:{u:<user-id>}:<rule id>), so it sits beside the generated rules of
 * that identity and shares their hash where the design keeps one; a global rule its own hash tag
 * (rl:{<rule id>}); an edge rule the counter its gateway keeps.
 */
/**
 * A hand-written key as the store holds it: the runtime puts its key prefix (rl:) before every
 * pattern, so a store rule's key written without it is stated with it, as Redis will show it. An
 * edge rule's key is the gateway's own and stays as written.
 */
function storeKeyOf(key: string, layer: MatrixRule['layer'] | undefined): string {
  return layer === 'edge' || key.startsWith(`${KEY_PREFIX}:`) ? key : `${KEY_PREFIX}:${key}`;
}

function defaultKey(id: string, identity: RuleIdentity, layer: MatrixRule['layer'] | undefined, scope: Scope): string {
  if (layer === 'edge' && scope.gateway !== 'none') return edgeCounter({ identity }, scope).key.replace('<rule id>', id);
  if (identity === 'global') return `${KEY_PREFIX}:{${id}}`;
  return `${KEY_PREFIX}:{${KEY_TAG[identity]}}:${id}`;
}

/** The endpoints a rule covers: those it names, else those of its class (every class for 'all'), health checks aside. */
export function coveredEndpoints(
  rule: { endpoints?: readonly string[] | undefined; endpointClass?: string | undefined },
  scope: Pick<Scope, 'endpoints'>,
): ResolvedEndpoint[] {
  const named = rule.endpoints && rule.endpoints.length > 0 ? rule.endpoints : undefined;
  return scope.endpoints.filter((e) =>
    named
      ? named.includes(e.name)
      : e.class !== 'health' && (!rule.endpointClass || rule.endpointClass === 'all' || e.class === rule.endpointClass),
  );
}

/**
 * The cost of a hand-written rule that states none, from the endpoints it covers, as the
 * generated rows take theirs: only when every one of them states its cost in the answers (a
 * class's default weight is an assumption, not a statement), so a rule nothing prices keeps
 * failing constraint 1.
 */
function costFromEndpoints(h: HandRule, scope: Scope): { table: NonNullable<MatrixRule['cost']>; text: string } | undefined {
  const covered = coveredEndpoints(h, scope);
  if (covered.length === 0 || covered.some((e) => e.assumed?.includes('cost'))) return undefined;
  return { table: costTable(covered), text: covered.map((e) => `${e.name} = ${formatNumber(e.cost)}`).join(', ') };
}

/**
 * What one key of a rule costs in the store, by the script that keeps it (MEASURED_KEY_CHARS-character
 * names; withKeyLength adds the rule's own key length): the one pricing of generated and
 * hand-written rules alike. A log is priced with one attempt (each further one adds
 * sliding-window-log-entry), a rolling quota with a bucket per day of its window; in the process's
 * heap for the state a design without a store keeps there (the middleware's, and with
 * `storeless` the outbound client's bucket). Undefined for a gateway's own counter, an outbound
 * bucket kept in each instance beside a store (not in it), or without an algorithm.
 */
export function storeBytesPerKey(
  rule: Pick<MatrixRule, 'layer' | 'algorithm' | 'primitive' | 'tier' | 'rate'>,
  storeless = false,
): number | undefined {
  // the middleware keeps its state in the process only where the design has no store: the estimate is then of the heap
  if (rule.algorithm && rule.primitive === 'in-process' && rule.layer === 'middleware') {
    switch (luaScriptFor(rule.algorithm)) {
      case 'gcra':
        return IN_PROCESS_BYTES_PER_KEY.gcra;
      case 'sliding-window-log':
        return IN_PROCESS_BYTES_PER_KEY['sliding-window-log'];
      case 'fixed-window': {
        const days = algorithmLabel(rule) !== undefined ? Math.max(1, Math.round((rule.rate?.periodSeconds ?? 86400) / 86400)) : 1;
        return IN_PROCESS_BYTES_PER_KEY['fixed-window'] + IN_PROCESS_BYTES_PER_KEY['identity-hash-field'] * (days - 1);
      }
    }
  }
  // the outbound client's in-process bucket: one number in its own Map, in the process's heap,
  // which the estimate is of only where the design has no store (`storeless`)
  if (storeless && rule.algorithm && inProcessOutbound(rule)) return IN_PROCESS_BYTES_PER_KEY['outbound-bucket'];
  if (!rule.algorithm || rule.primitive === 'in-process' || rule.primitive === 'gateway-native') return undefined;
  if (rule.layer === 'outbound-client') return BYTES_PER_KEY['outbound-bucket'];
  if (rule.layer !== 'middleware') return undefined;
  switch (luaScriptFor(rule.algorithm)) {
    case 'gcra':
      return BYTES_PER_KEY.gcra;
    case 'sliding-window-log':
      return BYTES_PER_KEY['sliding-window-log-base'] + BYTES_PER_KEY['sliding-window-log-entry'];
    case 'fixed-window':
      if (algorithmLabel(rule) !== undefined) {
        const days = Math.max(1, Math.round((rule.rate?.periodSeconds ?? 86400) / 86400));
        return BYTES_PER_KEY['fixed-window-rolling-base'] + BYTES_PER_KEY['fixed-window-rolling-bucket'] * (days - 1);
      }
      return BYTES_PER_KEY['fixed-window'];
  }
}

/**
 * What an outbound bucket kept in each instance beside a store costs in that instance's heap,
 * priced as a design without a store prices it (storeBytesPerKey, withKeyLength): the store's
 * estimate leaves it out, the memory table shows it as the heap's. Undefined for any other rule.
 */
export function outboundHeapBytes(rule: MatrixRule): { bytesPerKey: number; keyChars?: number } | undefined {
  if (!inProcessOutbound(rule)) return undefined;
  const bytes = storeBytesPerKey(rule, true);
  if (bytes === undefined) return undefined;
  const sized = withKeyLength({ ...rule, bytesPerKey: bytes });
  return { bytesPerKey: sized.bytesPerKey ?? bytes, ...(sized.keyChars !== undefined ? { keyChars: sized.keyChars } : {}) };
}

/** A rule with what one of its keys costs in the store (storeBytesPerKey), or without a figure when the store does not hold it. */
function withStoreBytes(rule: MatrixRule, scope: Scope): MatrixRule {
  const { bytesPerKey: _, ...rest } = rule;
  const bytes = storeBytesPerKey(rule, scope.store === 'none');
  return bytes === undefined ? rest : { ...rest, bytesPerKey: bytes };
}

/**
 * The TTL a rule's state needs: a full refill for what runs as a GCRA bucket (the burst it runs
 * with / rate; a sliding window counter too), the window for logs and fixed windows; whole
 * seconds, at least 1. Edge rules keep the gateway's own state lifetime, and an in-process
 * outbound bucket has none (inProcessOutbound). Undefined without numbers.
 */
function stateTtl(rule: MatrixRule): number | undefined {
  if (rule.layer === 'edge' || inProcessOutbound(rule) || !rule.rate || !(rule.rate.requests > 0)) return undefined;
  const period = rule.rate.periodSeconds;
  switch (rule.algorithm) {
    case 'token-bucket':
    case 'leaky-bucket':
    case 'gcra':
    case 'sliding-window-counter':
      return bucketTtl(runBurst(rule) ?? rule.rate.requests, rule.rate.requests / period);
    case 'sliding-window-log':
    case 'fixed-window':
      return Math.max(1, Math.ceil(period));
    default:
      return undefined;
  }
}

export interface MatrixResult {
  rules: MatrixRule[];
  exempt: ResolvedEndpoint[];
}

export function buildMatrix(ctx: MatrixContext, hand: HandRule[]): MatrixResult {
  const result = matrixOf(ctx, hand);
  // a rules entry that changes the ceiling's numbers or where it runs: the matrix again, with
  // the ceiling as it ships, so that its own text and every key bound sized from the traffic it
  // admits state the figures the shipped files enforce, not the ones the answers' traffic gives
  if (ctx.ceiling !== undefined) return result;
  const ceilings = result.rules.filter((r) => r.tier === 'ceiling');
  const ceiling = ceilings.find((r) => r.source !== 'hand-written') ?? ceilings[0];
  const changed = hand.some(
    (h) =>
      ceiling !== undefined &&
      h.id === ceiling.id &&
      !h.remove &&
      (h.rate || h.burst !== undefined || h.layer || h.identity || h.endpoints),
  );
  if (!ceiling || (!changed && ceilings.length < 2)) return result;
  const shape = ({ id, identity, routes, layer, rate, burst, perNode }: MatrixRule): CeilingShape & Pick<MatrixRule, 'id'> => ({
    id,
    identity,
    routes,
    layer,
    rate,
    burst,
    ...(perNode ? { perNode } : {}),
  });
  return matrixOf({ ...ctx, ceiling: shape(ceiling), ceilings: ceilings.map(shape) }, hand);
}

function matrixOf(ctx: MatrixContext, hand: HandRule[]): MatrixResult {
  const { scope } = ctx;
  const b: Builder = { ids: new IdAllocator(), rules: [], said: new Map() };
  const exempt = scope.endpoints.filter((e) => e.class === 'health');
  const limited = scope.endpoints.filter((e) => e.class !== 'health');
  const auth = limited.filter((e) => e.class === 'auth');
  const webhooks = limited.filter((e) => e.class === 'webhook');
  const rest = limited.filter((e) => e.class !== 'auth' && e.class !== 'webhook');
  const anonymous = rest.filter((e) => e.anonymous);
  // An endpoint that allows anonymous callers serves identified ones too: rows keyed on an
  // account identity (a plan's fairness and quota) count them there as on any other endpoint,
  // and the per-IP row counts the anonymous ones (the middleware counts no caller without an
  // account identity by address under those rows there: RouteSpec.anonymous). Rows keyed on
  // the address itself stay off them, which the per-IP row already counts.
  const accountKeyed = fairnessIdentity(scope, scope.plans.length > 0) !== 'ip';
  const perAccount = accountKeyed ? rest : rest.filter((e) => !e.anonymous);

  // a ceiling a rules entry sets: the rules sized from it (a share of it) follow the rate it ships
  const setRps = ctx.ceiling?.rate ? perSecond(ctx.ceiling.rate) : ctx.ceilingRps;
  const sized = setRps !== ctx.ceilingRps ? { ...ctx, ceilingRps: setRps, ceilingByHand: true } : ctx;
  addCeiling(b, ctx, limited);
  addFairness(b, sized, perAccount);
  addAnonymous(b, sized, anonymous, accountKeyed);
  addAuth(b, ctx, auth);
  addWebhooks(b, sized, webhooks);
  addQuotas(b, ctx, perAccount);
  addOutbound(b, ctx);
  const before = new Map(b.rules.map((r) => [r.id, r]));
  const windowed = applyHandRules(b.rules, hand, scope, b.said)
    .map((r) => resizedOffEdge(r, before.get(r.id), ctx))
    .map((r) => edgeCompleted(r, ctx))
    .flatMap((r, _i, all) => edgeCosted(r, all, ctx))
    .map((r) => edgeWindowed(r, scope))
    .map((r) => nodeShared(r, scope))
    .map((r, _i, all) => methodsCounted(r, all, scope, limited));
  return {
    rules: inIdentityHashes(
      awsKeyPlanned(kongUncounted(envoyFailModeSettled(envoyDescriptorsFitted(windowed, scope), scope), scope), scope)
        .map(edgeHeaders)
        .map((r) => withStoreBytes(r, scope))
        .map(withKeyLength),
    ),
    exempt,
  };
}

/**
 * A row its rules entry moved off the edge (movedOffEdge) keeps its key bound from the traffic,
 * taken again over the state lifetime it has in the middleware (its TTL), not the gateway's,
 * unless the entry states the bound.
 */
function resizedOffEdge(rule: MatrixRule, generated: MatrixRule | undefined, ctx: MatrixContext): MatrixRule {
  if (generated?.layer !== 'edge' || rule.layer !== 'middleware' || !rule.identity || rule.identity === 'global') return rule;
  if (rule.cardinality !== generated.cardinality || !rule.cardinality?.byTraffic) return rule;
  if (rule.ttlSeconds === undefined || rule.ttlSeconds === generated.ttlSeconds) return rule;
  const pop = populationOf(rule.identity, ctx.scope);
  return { ...rule, cardinality: bound(pop.population, admitted(ctx, coveredEndpoints(rule, ctx.scope)), rule.ttlSeconds, pop.label) };
}

/**
 * An edge rule the answers wrote by hand (or moved to the edge) states what its gateway does, as
 * a generated one does (edgeCounter): the algorithm the gateway runs and its native primitive
 * always, and where the answers leave them out its key, cost, fail mode, state TTL and
 * cardinality bound. A stated algorithm the gateway does not run is named in the rationale.
 */
function edgeCompleted(rule: MatrixRule, ctx: MatrixContext): MatrixRule {
  const { scope } = ctx;
  if (rule.layer !== 'edge' || scope.gateway === 'none') return rule;
  const edge = edgeCounter(rule, scope);
  if (rule.source === 'generated') return rule;
  const rate = rule.rate && rule.rate.requests > 0 && rule.rate.periodSeconds > 0 ? rule.rate : undefined;
  const stated = typeof rule.burst === 'number' && rule.burst > 0 ? rule.burst : null;
  // a bucket the answers give no burst holds one period's count of the rate the gateway runs
  const w = rate ? edge.window(rate, stated) : undefined;
  const burst = edge.hasBurst && w && w.burst === null ? Math.max(1, Math.ceil(w.requests - 1e-9)) : stated;
  const ttl = rule.ttlSeconds ?? (rate ? edgeStateTtl(edge, rate, burst) : EDGE_STATE_TTL);
  const pop = rule.identity ? populationOf(rule.identity, scope) : undefined;
  const cardinality =
    rule.cardinality ??
    (rule.identity === 'global'
      ? { bound: 1, basis: rate ? edgeCeilingBasis(edge, rate, burst, ttl) : edge.shared ? 'one counter' : 'one counter per edge node' }
      : pop
        ? bound(pop.population, admitted(ctx), ttl, pop.label)
        : undefined);
  const asked =
    rule.algorithm !== undefined && rule.algorithm !== edge.algorithm
      ? ` The answers name ${rule.algorithm}, but ${edge.component} runs ${edge.algorithm}: the matrix states what runs.`
      : '';
  const named = scope.endpoints.filter((e) => rule.endpoints.includes(e.name)).map((e) => e.class);
  const classes = named.length > 0 ? named : rule.endpointClass === 'all' ? scope.endpoints.map((e) => e.class) : [rule.endpointClass];
  return {
    ...rule,
    algorithm: edge.algorithm,
    primitive: 'gateway-native',
    key: rule.key ?? edge.key.replace('<rule id>', rule.id),
    cost: rule.cost ?? { default: 1, byEndpoint: [] },
    failMode: rule.failMode ?? edge.unreachable?.mode ?? answeredEdgeMode(scope, classes),
    ...(burst !== stated && w
      ? {
          burst,
          derivation: `${rule.derivation ? `${rule.derivation}; ` : ''}burst ${formatNumber(burst ?? 0)}: none stated, so ${edge.component}'s bucket holds one period's count (${formatNumber(w.requests)} per ${secondsWords(w.periodSeconds)})`,
        }
      : {}),
    ttlSeconds: ttl,
    ...(cardinality ? { cardinality } : {}),
    rationale: (rule.rationale ?? '').includes(edge.component)
      ? `${rule.rationale ?? ''}${asked}`
      : `${rule.rationale ?? ''}${asked} Enforced at the edge by ${edge.component}. ${edgeStateNote(edge, scope, classes, rule.failMode)}`.trim(),
  };
}

/** "5 per 1 s": a rate in the derivation's words. */
function perText(rate: { requests: number; periodSeconds: number }, what: string): string {
  return `${formatNumber(rate.requests)} ${what} per ${secondsWords(rate.periodSeconds)}`;
}

/**
 * A rate in cost units as requests of `units` each, rounded down so it never admits more units:
 * the whole number of requests per the same period, else one request per the shortest whole
 * number of seconds that keeps within the rate.
 */
export function requestsOfCost(
  rate: { requests: number; periodSeconds: number },
  units: number,
): { requests: number; periodSeconds: number } {
  const whole = Math.floor(rate.requests / units + 1e-9);
  if (whole >= 1) return { requests: whole, periodSeconds: rate.periodSeconds };
  return { requests: 1, periodSeconds: Math.ceil((units * rate.periodSeconds) / rate.requests - 1e-9) };
}

/**
 * A gateway counts requests, not cost: an edge rule whose endpoints cost more than 1 unit a call
 * would admit each of them at the rate stated in units. So the endpoints of each cost above 1
 * get an edge rule of their own (`<id>-cost-<units>`) that counts requests at the rule's rate
 * and burst divided by the cost, rounded down (edgeCost says from what); the rule keeps its
 * cost-1 endpoints, or, when every endpoint costs the same, is itself divided. Each rule then
 * states cost 1, which is what the gateway counts.
 */
function edgeCosted(rule: MatrixRule, all: readonly MatrixRule[], ctx: MatrixContext): MatrixRule[] {
  const { scope } = ctx;
  if (rule.layer !== 'edge' || scope.gateway === 'none' || !rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0))
    return [rule];
  const table = rule.cost ?? { default: 1, byEndpoint: [] };
  const unitsOf = (name: string): number => table.byEndpoint.find((w) => w.endpoint === name)?.cost ?? table.default;
  const covered = coveredEndpoints(rule, scope).filter((e) => e.class !== 'health');
  const costs = [...new Set(covered.length > 0 ? covered.map((e) => unitsOf(e.name)) : [table.default])].sort((a, b) => a - b);
  const plain = { ...rule, cost: { default: 1, byEndpoint: [] } };
  if (costs.length === 1 && costs[0] === 1) return [plain];
  const edge = edgeCounter(rule, scope);
  const unitRate = { requests: rule.rate.requests, periodSeconds: rule.rate.periodSeconds };
  const unitBurst = typeof rule.burst === 'number' && rule.burst > 0 ? rule.burst : null;
  const taken = new Set(all.map((r) => r.id));
  // the first (cheapest) group keeps the rule's id, and with it its kill switch and references
  const ids = costs.map((units, i) => {
    if (i === 0) return rule.id;
    let id = `${rule.id}-cost-${units}`;
    for (let n = 2; taken.has(id); n++) id = `${rule.id}-cost-${units}-${n}`;
    taken.add(id);
    return id;
  });
  const out: MatrixRule[] = [];
  costs.forEach((units, i) => {
    const eps = covered.filter((e) => unitsOf(e.name) === units);
    const names = joinNames(eps.map((e) => e.name));
    const id = ids[i] as string;
    // a rule that covered a class names its endpoints once some of them leave it
    const named = costs.length > 1 || rule.endpoints.length > 0;
    const scoped: Partial<MatrixRule> = named
      ? {
          endpoints: eps.map((e) => e.name),
          routes: routesOf(eps),
          endpointClass: new Set(eps.map((e) => e.class)).size === 1 ? (eps[0]?.class ?? rule.endpointClass) : 'all',
        }
      : {};
    // a mode taken from the answers for the classes covered follows the classes each part keeps
    // (a stated mode, the ceiling's, and a shared count's gateway setting stay as they are)
    // and so does the rationale's statement of it, which named the classes of the whole rule
    let rationale = rule.rationale ?? '';
    if (
      costs.length > 1 &&
      edge.unreachable === undefined &&
      rule.identity !== 'global' &&
      rule.source === 'generated' &&
      rule.failMode ===
        answeredEdgeMode(
          scope,
          covered.map((e) => e.class),
        )
    ) {
      scoped.failMode = answeredEdgeMode(
        scope,
        eps.map((e) => e.class),
      );
      rationale = rationale.replace(
        edgeStateNote(
          edge,
          scope,
          covered.map((e) => e.class),
        ),
        edgeStateNote(
          edge,
          scope,
          eps.map((e) => e.class),
        ),
      );
    }
    if (units === 1) {
      const away = costs.slice(1).map((c, j) => {
        const them = covered.filter((e) => unitsOf(e.name) === c).map((e) => e.name);
        return `${joinNames(them)} (cost ${c}) by ${ids[j + 1]}`;
      });
      out.push({
        ...plain,
        ...scoped,
        rationale: `${rationale} ${edge.component} counts requests, not cost, so the endpoints that cost more count in edge rules of their own, at this rate divided by their cost: ${away.join('; ')}.`,
      });
      return;
    }
    const rate = requestsOfCost(unitRate, units);
    const burst = unitBurst === null ? null : Math.max(1, Math.floor(unitBurst / units + 1e-9));
    const burstText =
      unitBurst === null
        ? ''
        : `, burst ${formatNumber(unitBurst)} / ${units} = ${formatNumber(burst ?? 0)}${Math.floor(unitBurst / units + 1e-9) < 1 ? ' (raised to 1: one call at least must pass, so a burst admits up to one call of this cost)' : ''}`;
    const how = `${perText(unitRate, 'units')} / cost ${units} = ${perText(rate, 'requests')}${burstText}, rounded down`;
    const own = edgeCounter({ identity: rule.identity }, scope).key;
    const key = rule.key === own.replace('<rule id>', rule.id) ? own.replace('<rule id>', id) : rule.key;
    const ttl =
      rule.ttlSeconds === edgeStateTtl(edge, unitRate, unitBurst) || rule.ttlSeconds === undefined
        ? edgeStateTtl(edge, rate, burst)
        : rule.ttlSeconds;
    const pop = rule.identity && rule.identity !== 'global' ? populationOf(rule.identity, scope) : undefined;
    const cardinality =
      rule.cardinality?.byTraffic && pop && (ttl !== rule.ttlSeconds || ctx.scope.gateway === 'aws-api-gateway')
        ? bound(pop.population, admitted(ctx, eps), ttl, pop.label)
        : rule.cardinality;
    const why = `${names} cost${eps.length === 1 ? 's' : ''} ${units} units a call, and ${edge.component} counts requests, not cost: ${
      id === rule.id
        ? 'the rule counts'
        : `${eps.length === 1 ? 'it has an edge rule of its own' : 'they have an edge rule of their own'}, counting`
    } requests at ${rule.id}'s ${perText(unitRate, 'units')}${unitBurst !== null ? ` (burst ${formatNumber(unitBurst)})` : ''} divided by ${units}, rounded down, so ${eps.length === 1 ? 'it' : 'they'} never pass${eps.length === 1 ? 'es' : ''} more units than ${rule.id} states.${
      id === rule.id ? '' : ` It counts apart from ${rule.id}: one client can spend both allowances in the same period.`
    }`;
    out.push({
      ...plain,
      ...scoped,
      id,
      ...(id === rule.id ? {} : { title: `${rule.title}: ${names} (cost ${units})` }),
      ...(key !== undefined ? { key } : {}),
      rate,
      burst,
      edgeCost: { units, of: rule.id, unitRate, unitBurst },
      ...(ttl !== undefined ? { ttlSeconds: ttl } : {}),
      ...(cardinality ? { cardinality } : {}),
      ...(rule.killSwitch ? { killSwitch: { flag: killSwitchFlag(id) } } : {}),
      rationale: `${why} ${rationale}`,
      derivation: `${rule.derivation ? `${rule.derivation}; ` : ''}at the edge ${how}`,
    });
  });
  return out;
}

/**
 * An edge rule states what its gateway's file enforces: the window and burst the product accepts
 * nearest the rule's numbers (edgeCounter's window); the derivation says how it was fitted.
 */
function edgeWindowed(rule: MatrixRule, scope: Scope): MatrixRule {
  if (rule.layer !== 'edge' || !rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return rule;
  const burst = typeof rule.burst === 'number' && rule.burst > 0 ? rule.burst : null;
  const edge = edgeCounter(rule, scope);
  const w = edge.window(rule.rate, burst);
  if (w.requests === rule.rate.requests && w.periodSeconds === rule.rate.periodSeconds && w.burst === burst) return rule;
  // a period of its own words ("1 min") only while the period stays the rule's own
  const { periodText, ...rate } = rule.rate;
  // the rate alone, as a rules entry's check weighs it: does the product's window admit more?
  const rateOnly = edge.window(rate, null);
  const times = windowLaxerBy(rate, rateOnly);
  return {
    ...rule,
    ...(times !== undefined
      ? {
          edgeLaxer: {
            stated: { requests: rate.requests, periodSeconds: rate.periodSeconds },
            shipped: { requests: rateOnly.requests, periodSeconds: rateOnly.periodSeconds },
            times,
            overTime: overTimeRatio(rate, rateOnly),
            ...(rateOnly.fitted ? { fitted: rateOnly.fitted } : {}),
          },
        }
      : {}),
    rate: {
      ...rate,
      requests: w.requests,
      periodSeconds: w.periodSeconds,
      ...(periodText && w.periodSeconds === rate.periodSeconds ? { periodText } : {}),
    },
    burst: w.burst,
    ...(w.fitted
      ? {
          derivation: `${rule.derivation ? `${rule.derivation}; ` : ''}enforced as ${formatNumber(w.requests)} per ${secondsWords(w.periodSeconds)}${w.burst !== null ? `, burst ${formatNumber(w.burst)}` : ''}, because ${w.fitted}`,
        }
      : {}),
  };
}

/**
 * A per-address edge rule each gateway node counts on its own: one address whose requests the
 * load balancer spreads over K nodes passes up to K times its rate, which the share just stated
 * does not include. Empty when one count serves the fleet.
 */
function perNodeAddressNote(scope: Scope, edge: EdgeCounter | undefined, what: string): string {
  if (!edge || !countedPerNode({ identity: 'ip' }, scope)) return '';
  const { k, stated } = gatewayNodes(scope);
  if (k <= 1) return '';
  return ` ${what} is per ${gatewayNodeName(scope.gateway)} node: each of the ${formatNumber(k)} nodes${stated ? '' : ' (assumed, stack.gatewayNodes not given)'} counts an address on its own, so an address whose requests are spread over all of them passes up to ${formatNumber(k)} times it.`;
}

/**
 * Envoy's rate limit filter has one failure_mode_deny for every rule its service counts: once a
 * rule asks to fail closed (scope.envoyDenyRules) it is true, and a rule stated open fails closed
 * at Envoy too. The row states the mode Envoy gives it, and says which rule made it so.
 */
function envoyFailModeSettled(rules: MatrixRule[], scope: Scope): MatrixRule[] {
  if (scope.gateway !== 'envoy' || !envoyFailureModeDeny(scope)) return rules;
  const closed = scope.envoyDenyRules ?? [];
  return rules.map((rule) => {
    if (rule.layer !== 'edge' || envoyCounter(rule) !== 'service' || rule.failMode !== 'open') return rule;
    return {
      ...rule,
      failMode: 'closed',
      rationale:
        `${rule.rationale ?? ''} It is stated open, but fails closed at Envoy: failure_mode_deny is one setting of the rate limit filter for every rule the service counts, and it is true because ${joinNames(closed)} ${closed.length === 1 ? 'is' : 'are'} asked to fail closed (the strictest mode asked for wins). To keep it open, count it in the middleware instead.`.trim(),
    };
  });
}

/**
 * An edge rule of no identity counted in each gateway node, with K given: what each node's file
 * ships (perNodeShare), beside the rule's fleet-wide numbers.
 */
function nodeShared(rule: MatrixRule, scope: Scope): MatrixRule {
  const perNode = perNodeShare(rule, scope);
  if (!perNode) return rule;
  // a share raised to what one node admits: the fleet admits more than stated, which the rule says
  const warning = fleetRaisedWarning({ ...rule, perNode }, scope.gateway);
  return { ...rule, perNode, ...(warning ? { rationale: `${rule.rationale} ${warning}`.trim() } : {}) };
}

/**
 * An AWS API Gateway throttle of no identity over several API methods: each method counts the
 * full rate in a bucket of its own, so the rule says what that lets through in total, and for
 * the ceiling how to cap the total (awsPerMethod).
 */
function methodsCounted(rule: MatrixRule, all: readonly MatrixRule[], scope: Scope, limited: readonly ResolvedEndpoint[]): MatrixRule {
  if (scope.gateway !== 'aws-api-gateway' || rule.layer !== 'edge' || rule.identity !== 'global') return rule;
  const per = awsPerMethod(rule, awsRuleMethods(rule, all, limited));
  return per ? { ...rule, rationale: `${rule.rationale ?? ''} ${per.total} ${per.remedy}`.trim() } : rule;
}

/**
 * Kong runs one rate-limiting instance per route: a rule that another rule, keyed on something
 * else, displaces on a route is not counted there (kongRoutePlan). The rule states it, so the
 * matrix, the placement and the worst case do not count it where Kong does not.
 */
function kongUncounted(rules: MatrixRule[], scope: Scope): MatrixRule[] {
  if (scope.gateway !== 'kong') return rules;
  const plan = kongRoutePlan(rules);
  const order = kongRouteOrder(plan, scope.endpoints);
  return rules.map((rule) => {
    const missed = plan.notCounted.get(rule.id);
    const unordered = rule.layer === 'edge' ? kongOrderText(rule, order) : '';
    if (unordered) rule = { ...rule, rationale: `${rule.rationale} ${unordered}`.trim() };
    if (!missed || missed.length === 0) return rule;
    const text = kongNotCountedText(rule, plan);
    return {
      ...rule,
      rationale: `${rule.rationale} ${text}`.trim(),
      notEnforced: { routes: missed.map((m) => `${m.method} ${m.route}`), all: kongCountsNowhere(rule.id, plan), text },
    };
  });
}

/**
 * On AWS every API-key edge rule sits in one usage plan (awsKeyPlan): each rule says where
 * gateway/aws-api-gateway.json ships it, and one whose methods (or the plan's one Throttle)
 * another rule holds is stated as not enforced there.
 */
function awsKeyPlanned(rules: MatrixRule[], scope: Scope): MatrixRule[] {
  if (scope.gateway !== 'aws-api-gateway') return rules;
  const plan = awsKeyPlan(rules);
  // a part of a rule over every endpoint that the cost split scoped to endpoints runs as method throttles
  const planWhere = edgeCounter({ identity: 'api-key', routes: [] }, scope).where;
  const methodWhere = edgeCounter({ identity: 'api-key', routes: [{ method: 'GET', route: '/' }] }, scope).where;
  return rules.map((rule) => {
    if (!plan.keysOf.has(rule.id) && plan.planLevel !== rule.id && !plan.notCounted.has(rule.id)) return rule;
    const text = awsKeyPlanText(rule, plan);
    const missed = plan.notCounted.get(rule.id) ?? [];
    const rationale = rule.routes.length > 0 ? rule.rationale.replaceAll(planWhere, methodWhere) : rule.rationale;
    return {
      ...rule,
      rationale: `${rationale} ${text}`.trim(),
      ...(missed.length > 0
        ? {
            notEnforced: {
              routes: missed.map((m) => `${m.method} ${m.route}`),
              all: (plan.keysOf.get(rule.id) ?? []).length === 0 && plan.planLevel !== rule.id,
              text,
            },
          }
        : {}),
    };
  });
}

/**
 * Envoy fills each local descriptor at a multiple of the filter-wide bucket's interval (the
 * ceiling's): a rule Envoy counts locally on some routes states the max_tokens its descriptor
 * ships at that interval, so the file never admits a larger burst than the matrix states.
 */
function envoyDescriptorsFitted(rules: MatrixRule[], scope: Scope): MatrixRule[] {
  if (scope.gateway !== 'envoy') return rules;
  const baseMs = envoyFilterFillMs(rules);
  if (baseMs <= ENVOY_MIN_FILL_MS) return rules;
  return rules.map((rule) => {
    if (rule.layer !== 'edge' || envoyCounter(rule) !== 'local' || rule.routes.length === 0) return rule;
    if (!rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return rule;
    const burst = typeof rule.burst === 'number' && rule.burst > 0 ? Math.ceil(rule.burst) : null;
    const w = envoyLocalWindow(rule.rate, burst, baseMs);
    // each node's share fills at the same interval: its bucket is fitted the same way
    const node = rule.perNode ? envoyLocalWindow(rule.perNode.rate, rule.perNode.burst, baseMs) : undefined;
    const perNode = rule.perNode && node ? { perNode: { ...rule.perNode, burst: node.burst } } : {};
    if (w.burst === burst) return { ...rule, ...perNode };
    return {
      ...rule,
      ...perNode,
      burst: w.burst,
      ...(w.fitted
        ? { derivation: `${rule.derivation ? `${rule.derivation}; ` : ''}burst ${formatNumber(w.burst ?? 0)}, because ${w.fitted}` }
        : {}),
    };
  });
}

/**
 * A client-facing rule enforced only at the edge: the gateway's 429 carries Retry-After and a
 * problem body, but no gateway exposes a remaining count, so the rule sends no rate-limit
 * headers (security rules there stay silent, as everywhere).
 */
function edgeHeaders(rule: MatrixRule): MatrixRule {
  return rule.layer === 'edge' && rule.headers === 'full' ? { ...rule, headers: 'edge' } : rule;
}

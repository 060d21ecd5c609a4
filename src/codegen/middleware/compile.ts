/**
 * Design -> the data the generated middleware compiles in: the rules it enforces (with
 * their routes, identity, script, numbers, fail mode, header policy, error code, kill
 * switch flag), the route table, the response contract, metric names, the quota period,
 * the hybrid local bucket and the Lua scripts. Pure: no file system beyond the Lua files
 * that src/lua.ts loads, no clock.
 *
 * Which rules the middleware owns: every rule whose layer is `middleware` (or unstated:
 * a limit nobody enforces is worse than one the application enforces). Edge rules are the
 * gateway's and outbound rules the outbound client's, so no rule is counted twice; both are
 * listed in the generated header as not enforced here.
 */
import { KEY_PREFIX } from '../../design/naming.js';
import { luaScriptFor, runBurst } from '../../design/algorithms.js';
import type { Design, MatrixRule, RuleIdentity } from '../../design/model.js';
import { luaScript, type LuaScriptName } from '../../lua.js';
import { identityOfKey } from '../../design/matrix.js';
import { defaultPlanOf } from '../../design/identity-fallback.js';
import { softPlanQuota } from '../../design/quotas.js';
import type { AccessSpec, CustomIdentityKind } from '../../runtime/middleware/types.js';

export type ScriptName = 'gcra' | 'sliding-window-log' | 'fixed-window' | 'penalty';
export type CompiledIdentity = Exclude<RuleIdentity, 'provider'>;
export type CompiledTier = 'ceiling' | 'security' | 'fairness' | 'quota';

export interface CompiledRoute {
  method: string;
  route: string;
  /** The design endpoint this route belongs to (null for a route only a rule names). */
  endpoint: string | null;
  /** Health checks and other endpoints the design exempts from every limit. */
  exempt: boolean;
  /** The endpoint allows anonymous callers: account-keyed rules count no caller by address there (RouteSpec.anonymous). */
  anonymous: boolean;
}

export interface CompiledRule {
  id: string;
  title: string;
  tier: CompiledTier;
  identity: CompiledIdentity;
  plan: string | null;
  /** The Lua script (or its in-process twin) that decides. */
  script: ScriptName;
  store: 'redis' | 'memory';
  /** The design's key pattern without the leading `rl:` (the runtime puts its keyPrefix there). */
  key: string;
  /** Its field in its identity's hash, when the design keeps it there (key is then the hash's pattern). */
  field: string | null;
  /** Indexes into the route table. */
  routes: number[];
  /** Requests (tokens) per period: the rate, or the window's limit. */
  limit: number;
  periodSeconds: number;
  /** Bucket capacity (token bucket / GCRA); null for windows. */
  burst: number | null;
  costDefault: number;
  /** [endpoint name, cost] pairs. */
  costByEndpoint: [string, number][];
  failMode: 'open' | 'closed';
  headers: 'full' | 'silent';
  errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
  /** The kill-switch feature flag (null when the design removed it). */
  flag: string | null;
  /** Fixed-window rules: calendar period (quota), rolling window (quota), or plain fixed window. */
  window: 'calendar' | 'rolling' | 'fixed' | null;
  /** The plan quota when the hard stop (limit) sits above it (soft overage): stated in the 429 body and Quota-Exceeded. */
  quota: number | null;
  /** Whether the in-process bucket sits in front of Redis for this rule. */
  hybrid: boolean;
  /** Original algorithm, when the script is a stand-in (e.g. token-bucket runs on GCRA). */
  algorithmNote: string | null;
}

export interface SkippedRule {
  id: string;
  reason: string;
}

export interface CompiledMetric {
  name: string;
  help: string;
}

export interface CompiledDesign {
  project: string;
  date: string;
  toolVersion: string;
  framework: string;
  convention: Design['contract']['convention'];
  docsUrl: string;
  trustedProxies: string[];
  clientIpSource: Design['enforcement']['clientIp']['source'];
  defaultMode: 'shadow' | 'enforce';
  storeUnavailableRetryAfter: number;
  quotaPeriod: { kind: 'calendar'; period: 'day' | 'month'; timeZone: string } | { kind: 'rolling'; days: number } | null;
  hybrid: { localBurst: number; instances: number; overAdmission: number } | null;
  metrics: {
    decisions: CompiledMetric;
    throttled: CompiledMetric;
    latency: CompiledMetric;
    failures: CompiledMetric;
    failOpen: CompiledMetric;
    nearLimit: CompiledMetric;
    quotaExhausted: CompiledMetric | null;
    /** Absent without an allowlist, deny list or penalty box. */
    access?: CompiledMetric;
  };
  scripts: { name: ScriptName | 'identity-limits'; file: string; sha1: string; source: string }[];
  routes: CompiledRoute[];
  rules: CompiledRule[];
  plans: string[];
  defaultPlan: string | null;
  skipped: SkippedRule[];
  /** Allowlist, deny list, penalty box, custom identities and memory fallback (null: none). */
  access: AccessSpec | null;
}

const TIER_ORDER: Record<CompiledTier, number> = { ceiling: 0, security: 1, fairness: 2, quota: 3 };

const DEFAULT_METRICS = {
  decisions: { name: 'ratelimit_decisions_total', help: 'Every limiter decision, by rule and result.' },
  throttled: { name: 'ratelimit_throttled_total', help: 'Requests rejected (mode=enforce) or that would have been (mode=shadow).' },
  latency: { name: 'ratelimit_store_latency_ms', help: 'Round trip of one limiter call to the store, in milliseconds.' },
  failures: { name: 'ratelimit_store_failures_total', help: 'Limiter calls that failed (timeout, connection, script error).' },
  failOpen: {
    name: 'ratelimit_fail_open_events_total',
    help: 'Requests admitted without a check because the store failed and the rule fails open.',
  },
  nearLimit: { name: 'ratelimit_near_limit_total', help: "Admitted decisions that left the caller under 20% of the rule's capacity." },
  quotaExhausted: { name: 'ratelimit_quota_exhausted_total', help: 'Calls refused or flagged because a plan quota was used up.' },
};

function metricFor(design: Design, pattern: RegExp, type: string, fallback: CompiledMetric): CompiledMetric {
  const m = design.monitoring.metrics.find((x) => x.type === type && pattern.test(x.name));
  return m ? { name: m.name, help: m.help } : fallback;
}

/** The access lists' counter, when the monitoring counts it and the runtime has lists to count. */
function accessMetricOf(design: Design, access: AccessSpec | null): { access?: CompiledMetric } {
  if (access === null || (access.allow === null && access.deny === null && access.penalty === null)) return {};
  const m = design.monitoring.metrics.find((x) => x.type === 'counter' && /access_total/.test(x.name));
  return m ? { access: { name: m.name, help: m.help } } : {};
}

/** The script a rule runs (the design's choice) and, where its algorithm runs as another, a note saying so. */
function scriptOf(rule: MatrixRule): { script: ScriptName; note: string | null } {
  const script = luaScriptFor(rule.algorithm);
  const RUN_AS_GCRA: Partial<Record<NonNullable<MatrixRule['algorithm']>, string>> = {
    'token-bucket': 'token bucket, run as GCRA (the same decisions: rate + burst)',
    'leaky-bucket': 'leaky bucket, run as GCRA (a leaky bucket as a meter)',
    'sliding-window-counter': 'sliding window counter, run as GCRA (smooth, no boundary burst)',
  };
  return { script, note: (rule.algorithm && RUN_AS_GCRA[rule.algorithm]) ?? null };
}

/** The identity a rule is keyed on, as the design states it (a hand-written rule's default is the design's, identityOfKey). */
function identityOf(rule: MatrixRule): CompiledIdentity {
  if (rule.identity && rule.identity !== 'provider') return rule.identity;
  return identityOfKey(rule.key) ?? 'ip';
}

/** The rule's key pattern without the key prefix (the runtime adds its own); the design gives every rule one. */
function keyOf(rule: MatrixRule & { key: string }): string {
  return rule.key.startsWith(`${KEY_PREFIX}:`) ? rule.key.slice(KEY_PREFIX.length + 1) : rule.key;
}

function tierOf(rule: MatrixRule): CompiledTier | null {
  return rule.tier === 'outbound' ? null : rule.tier;
}

/** Why the middleware leaves a rule alone, or null when it enforces it. */
function skipReason(rule: MatrixRule): string | null {
  if (rule.tier === 'outbound' || rule.layer === 'outbound-client' || rule.identity === 'provider') {
    return 'outbound limit: enforced by the outbound client, not on incoming requests';
  }
  if (rule.layer === 'edge') return 'edge rule: enforced by the gateway (counting it here too would count it twice)';
  if (!rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return 'no rate stated: nothing to enforce';
  if (!rule.key) return 'no key stated: nothing to count in';
  return null;
}

export function compileDesign(design: Design): CompiledDesign {
  const exempt = new Set(design.enforcement.exempt.endpoints);
  const routes: CompiledRoute[] = [];
  const routeIndex = new Map<string, number>();
  const addRoute = (method: string, route: string, endpoint: string | null, isExempt: boolean, anonymous: boolean): number => {
    const id = `${method.toUpperCase()} ${route}`;
    const found = routeIndex.get(id);
    if (found !== undefined) return found;
    routes.push({ method: method.toUpperCase(), route, endpoint, exempt: isExempt, anonymous });
    routeIndex.set(id, routes.length - 1);
    return routes.length - 1;
  };
  for (const e of design.scope.endpoints) addRoute(e.method, e.route, e.name, exempt.has(e.name), e.anonymous);

  const quotaPeriod: CompiledDesign['quotaPeriod'] = design.quotas
    ? design.quotas.reset.kind === 'calendar'
      ? { kind: 'calendar', period: design.quotas.reset.period, timeZone: design.quotas.reset.timeZone }
      : { kind: 'rolling', days: design.quotas.reset.days }
    : null;
  const hybridIds = new Set(design.enforcement.hybrid?.ruleIds ?? []);

  const rules: CompiledRule[] = [];
  const skipped: SkippedRule[] = [];
  for (const rule of design.rules) {
    const reason = skipReason(rule);
    const tier = tierOf(rule);
    if (reason || !tier || !rule.rate || !rule.key) {
      skipped.push({ id: rule.id, reason: reason ?? 'not an inbound limit' });
      continue;
    }
    const identity = identityOf(rule);
    const { script, note } = scriptOf(rule);
    const store = rule.primitive === 'in-process' || design.scope.store === 'none' ? 'memory' : 'redis';
    let ruleRoutes = rule.routes;
    if (tier === 'ceiling' && rule.endpointClass === 'all') {
      // The protective ceiling covers every request, not only the routes the answers list
      // (unlisted routes, 404 probes, OPTIONS): the catch-all route. Exempt endpoints stay
      // exempt, as their own (more specific) routes own the requests they match.
      ruleRoutes = [{ method: 'ANY', route: '/*' }];
    } else if (ruleRoutes.length === 0) {
      const eps = design.scope.endpoints.filter(
        (e) => !exempt.has(e.name) && (rule.endpointClass === 'all' || e.class === rule.endpointClass),
      );
      ruleRoutes = eps.length > 0 ? eps.map((e) => ({ method: e.method, route: e.route })) : [{ method: 'ANY', route: '/*' }];
    }
    const window = script !== 'fixed-window' ? null : tier === 'quota' && quotaPeriod ? quotaPeriod.kind : 'fixed';
    rules.push({
      id: rule.id,
      title: rule.title,
      tier,
      identity,
      plan: rule.plan ?? null,
      script,
      store,
      key: keyOf({ ...rule, key: rule.key }),
      field: rule.field ?? null,
      routes: ruleRoutes.map((r) => addRoute(r.method, r.route, null, false, false)),
      limit: rule.rate.requests,
      periodSeconds: rule.rate.periodSeconds,
      burst: runBurst(rule),
      costDefault: rule.cost?.default ?? 1,
      costByEndpoint: (rule.cost?.byEndpoint ?? []).map((c) => [c.endpoint, c.cost]),
      failMode: rule.failMode ?? 'open',
      headers: rule.headers === 'silent' ? 'silent' : 'full',
      errorCode: rule.errorCode,
      flag: rule.killSwitch?.flag ?? null,
      window,
      quota: softPlanQuota(rule, design.quotas),
      hybrid: hybridIds.has(rule.id) && script === 'gcra' && store === 'redis' && rule.field === undefined,
      algorithmNote: note,
    });
  }
  // Stable tier order: ceiling, security, fairness, quota (design order within a tier).
  const ordered = rules
    .map((r, i) => ({ r, i }))
    .sort((a, b) => TIER_ORDER[a.r.tier] - TIER_ORDER[b.r.tier] || a.i - b.i)
    .map((x) => x.r);

  // each rule's own script, except for the fields of an identity's hash: identity-limits runs those
  const used = new Set<ScriptName | 'identity-limits'>(ordered.filter((r) => r.store === 'redis' && r.field === null).map((r) => r.script));
  if (ordered.some((r) => r.store === 'redis' && r.field !== null)) used.add('identity-limits');
  const access = accessOf(design, ordered.length > 0);
  if (access?.penalty && used.size > 0) used.add('penalty');
  const scripts = (['gcra', 'sliding-window-log', 'fixed-window', 'identity-limits', 'penalty'] as const)
    .filter((name) => used.has(name))
    .map((name) => {
      const s = luaScript(name as LuaScriptName);
      return { name, file: `lua/${s.file}`, sha1: s.sha1, source: s.source };
    });

  const hybrid = design.enforcement.hybrid;
  return {
    project: design.scope.projectName,
    date: design.meta.date,
    toolVersion: design.meta.toolVersion,
    framework: design.scope.framework,
    convention: design.contract.convention,
    docsUrl: design.contract.docsUrl,
    trustedProxies: [...design.enforcement.clientIp.trustedProxies],
    clientIpSource: design.enforcement.clientIp.source,
    defaultMode: design.rollout.startsInShadow ? 'shadow' : 'enforce',
    storeUnavailableRetryAfter: design.contract.storeUnavailable.retryAfterSeconds,
    quotaPeriod,
    hybrid:
      hybrid && ordered.some((r) => r.hybrid)
        ? { localBurst: hybrid.localBurst, instances: hybrid.instances, overAdmission: hybrid.overAdmission }
        : null,
    metrics: {
      decisions: metricFor(design, /decisions/, 'counter', DEFAULT_METRICS.decisions),
      throttled: metricFor(design, /throttled/, 'counter', DEFAULT_METRICS.throttled),
      latency: metricFor(design, /store_latency/, 'histogram', DEFAULT_METRICS.latency),
      failures: metricFor(design, /store_failures/, 'counter', DEFAULT_METRICS.failures),
      failOpen: metricFor(design, /fail_open/, 'counter', DEFAULT_METRICS.failOpen),
      nearLimit: metricFor(design, /near_limit/, 'counter', DEFAULT_METRICS.nearLimit),
      quotaExhausted: ordered.some((r) => r.tier === 'quota')
        ? metricFor(design, /quota_exhausted/, 'counter', DEFAULT_METRICS.quotaExhausted)
        : null,
      ...accessMetricOf(design, access),
    },
    scripts,
    routes,
    rules: ordered,
    plans: design.scope.plans.map((p) => p.name),
    defaultPlan: defaultPlanOf(design.scope) ?? null,
    skipped,
    access,
  };
}

/** The design's access lists and outage fallback as the runtime reads them, or null when it has none. */
function accessOf(design: Design, anyRule: boolean): AccessSpec | null {
  const a = design.access;
  const memoryFallback = (design.enforcement.fallback?.ruleIds.length ?? 0) > 0;
  if (!anyRule || (!a && !memoryFallback)) return null;
  return {
    allow: a?.allow
      ? {
          cidrs: a.allow.cidrs,
          identities: a.allow.identities,
          routes: a.allow.routes.map((r) => ({ method: r.method.toUpperCase(), route: r.route })),
          tiers: a.allow.tiers.filter((t) => t !== 'outbound'),
        }
      : null,
    deny: a?.deny ? { cidrs: a.deny.cidrs, identities: a.deny.identities, status: a.deny.status } : null,
    penalty: a?.penalty
      ? {
          tiers: a.penalty.tiers.filter((t) => t !== 'outbound'),
          refusals: a.penalty.refusals,
          withinSeconds: a.penalty.withinSeconds,
          blockSeconds: a.penalty.blockSeconds,
        }
      : null,
    customIdentities: (a?.customIdentities ?? []).map((c) => c.kind as CustomIdentityKind),
    memoryFallback,
  };
}

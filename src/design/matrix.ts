/**
 * The limit matrix: one row per (endpoint class x identity dimension), layered as a
 * global protective ceiling, per-identity fairness limits, security limits for auth,
 * business quotas and outbound buckets. The layers are never merged into one number.
 */
import { PERIOD_SECONDS } from '../answers/defaults.js';
import { formatNumber } from '../format.js';
import type { HandRule, QuotaResetT } from '../answers/schema.js';
import type {
  Algorithm,
  AuthKind,
  EndpointClass,
  Gateway,
  MatrixRule,
  Primitive,
  ResolvedEndpoint,
  RuleIdentity,
  Scope,
} from './model.js';
import { IdAllocator, KEY_PREFIX, killSwitchFlag, slug } from './naming.js';

/**
 * Bytes one key takes in Redis 7.0 (used_memory per key over 100,000 keys with 15-character
 * names: dict and expires entries, key name, value, bucket arrays), measured for our scripts
 * by bench/lua and checked by a scratch run for the per-entry figures. Longer key names cost
 * about one byte more per character.
 */
export const BYTES_PER_KEY = {
  /** gcra.lua and outbound-bucket.lua: one integer in a string key. */
  gcra: 133,
  /** fixed-window.lua, calendar: one counter per period (past Redis's shared small integers). */
  'fixed-window': 133,
  /** fixed-window.lua, rolling: a hash of day buckets; each live bucket past the first adds 7 B. */
  'fixed-window-rolling-base': 149,
  'fixed-window-rolling-bucket': 7,
  /** sliding-window-log.lua: a sorted set; each logged attempt past the first adds about 29 B. */
  'sliding-window-log-base': 153,
  'sliding-window-log-entry': 29,
} as const;

/** Auth limits per flow: [per-identity attempts, per-IP attempts, window seconds]. */
const AUTH_LIMITS: Record<AuthKind, { perIdentity: number; perIp: number; windowSeconds: number; identityLabel: string; threat: string }> = {
  login: { perIdentity: 10, perIp: 100, windowSeconds: 900, identityLabel: 'username', threat: "a botnet guessing one account's password from many addresses" },
  mfa: { perIdentity: 5, perIp: 50, windowSeconds: 900, identityLabel: 'account', threat: 'guessing one account\'s one-time codes from many addresses' },
  signup: { perIdentity: 3, perIp: 20, windowSeconds: 3600, identityLabel: 'e-mail address', threat: 'repeated sign-ups for one e-mail address (verification-mail bombing of a victim)' },
  'password-reset': { perIdentity: 3, perIp: 20, windowSeconds: 3600, identityLabel: 'e-mail address', threat: 'flooding one person\'s inbox with reset mails, and probing which addresses have accounts' },
  token: { perIdentity: 60, perIp: 300, windowSeconds: 60, identityLabel: 'client id', threat: 'guessing one client\'s secret from many addresses' },
  other: { perIdentity: 10, perIp: 100, windowSeconds: 900, identityLabel: 'username', threat: 'guessing one account\'s credentials from many addresses' },
};

const EDGE_ALGORITHM: Record<Exclude<Gateway, 'none'>, { algorithm: Algorithm; component: string; hasBurst: boolean }> = {
  nginx: { algorithm: 'leaky-bucket', component: 'nginx limit_req', hasBurst: true },
  envoy: { algorithm: 'token-bucket', component: 'Envoy local rate limit filter', hasBurst: true },
  kong: { algorithm: 'fixed-window', component: 'Kong rate-limiting plugin', hasBurst: false },
  'aws-api-gateway': { algorithm: 'token-bucket', component: 'AWS API Gateway throttling', hasBurst: true },
  cloudflare: { algorithm: 'sliding-window-counter', component: 'Cloudflare rate limiting rule', hasBurst: false },
};

/** Seconds an edge gateway keeps an idle counter (nginx drops idle limit_req states after ~60 s). */
const EDGE_STATE_TTL = 60;

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

/** Seconds until an idle token bucket is full again, when its key can be dropped: at least 1. */
export function bucketTtl(burst: number, ratePerSecond: number): number {
  return Math.max(1, Math.ceil(burst / ratePerSecond));
}

export interface MatrixContext {
  scope: Scope;
  ceilingRps: number;
  quotaReset?: QuotaResetT;
  burstSeconds: number;
}

interface Builder {
  ids: IdAllocator;
  rules: MatrixRule[];
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
  ceilingRps: number,
  ttlSeconds: number,
  populationLabel: string,
): { bound: number; basis: string; byTraffic?: true } {
  const byTraffic = Math.ceil(ceilingRps * ttlSeconds);
  if (population === undefined || population <= 0) {
    return {
      bound: byTraffic,
      byTraffic: true,
      basis: `attacker-controlled key: each live key needs a request within its ${formatNumber(ttlSeconds)} s TTL, and the ceiling admits ${formatNumber(ceilingRps)} req/s`,
    };
  }
  if (population <= byTraffic) return { bound: population, basis: `one key per ${populationLabel} (${formatNumber(population)})` };
  return {
    bound: byTraffic,
    byTraffic: true,
    basis: `${formatNumber(population)} ${populationLabel}s, but at most ceiling x TTL = ${formatNumber(ceilingRps)} x ${formatNumber(ttlSeconds)} s can be live at once`,
  };
}

function populationOf(identity: RuleIdentity, scope: Scope): { population?: number; label: string } {
  switch (identity) {
    case 'api-key':
      return { population: scope.traffic.distinctClients, label: 'API key' };
    case 'tenant':
      return { population: scope.traffic.distinctTenants, label: 'tenant' };
    case 'user':
      return { population: scope.traffic.distinctUsers, label: 'user' };
    case 'session':
      return { population: scope.traffic.distinctUsers * 2, label: 'session' };
    case 'global':
      return { population: 1, label: 'deployment' };
    default:
      return { label: identity };
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

function addCeiling(b: Builder, ctx: MatrixContext, limited: ResolvedEndpoint[]): void {
  const { scope, ceilingRps } = ctx;
  const id = b.ids.take('global-ceiling');
  const derivation =
    scope.traffic.capacityRps !== undefined
      ? `the measured backend capacity of ${formatNumber(scope.traffic.capacityRps)} req/s`
      : `peak ${formatNumber(scope.traffic.peakRps)} req/s x ${scope.traffic.headroom} headroom`;
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
  };
  if (scope.gateway !== 'none') {
    const edge = EDGE_ALGORITHM[scope.gateway];
    const burst = edge.hasBurst ? Math.ceil(ceilingRps) : null;
    b.rules.push({
      ...common,
      algorithm: edge.algorithm,
      primitive: 'gateway-native',
      key: `${scope.gateway}:global (one counter per ${scope.gateway} node)`,
      burst,
      layer: 'edge',
      ttlSeconds: EDGE_STATE_TTL,
      cardinality: { bound: 1, basis: 'one counter per edge node' },
      rationale: `Protects the infrastructure, not any one client: ${formatNumber(ceilingRps)} req/s from ${derivation}. Enforced by ${edge.component}, the cheapest place to reject. Its counter lives in each edge node: with K nodes, configure ${formatNumber(ceilingRps)}/K per node.`,
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
    bytesPerKey: BYTES_PER_KEY.gcra,
    rationale: `Protects the infrastructure, not any one client: ${formatNumber(ceilingRps)} req/s from ${derivation}. No gateway exists, so the first middleware check enforces it; one hot key is cheap for Redis at this rate.`,
  });
}

function addFairness(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  const { scope, ceilingRps, burstSeconds } = ctx;
  if (endpoints.length === 0) return;
  const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
  const cost = costTable(endpoints);
  const weighted = cost.byEndpoint.length > 0
    ? ` Expensive calls draw more tokens from the same bucket (${cost.byEndpoint.map((c) => `${c.endpoint} = ${c.cost}`).join(', ')}) instead of each getting a bucket of its own.`
    : '';
  const primitive = storePrimitive(scope);
  const failMode = endpoints.some((e) => scope.failureByClass[e.class] === 'closed') ? 'closed' : 'open';
  const classes = [...new Set(endpoints.map((e) => e.class))];
  const endpointClass: EndpointClass | 'all' = classes.length === 1 ? (classes[0] as EndpointClass) : 'all';

  if (scope.plans.length > 0) {
    const identity = fairnessIdentity(scope, true);
    for (const plan of scope.plans) {
      const id = b.ids.take(`fairness-${slug(plan.name)}`);
      const burst = Math.max(plan.burst, maxCost);
      const raised = burst > plan.burst ? ` Burst raised from ${plan.burst} to ${burst} so the costliest call (${maxCost} tokens) can ever pass.` : '';
      const ttl = bucketTtl(burst, plan.ratePerSecond);
      const pop = populationOf(identity, scope);
      const share = scope.plans.length > 1 ? ` (the whole ${pop.label} population is counted for each plan, an upper bound)` : '';
      const card = bound(pop.population, ceilingRps, ttl, pop.label);
      b.rules.push({
        id,
        source: 'generated',
        tier: 'fairness',
        title: `Per-${pop.label} fairness, plan ${plan.name}`,
        endpointClass,
        endpoints: endpoints.map((e) => e.name),
        routes: routesOf(endpoints),
        identity,
        plan: plan.name,
        algorithm: 'gcra',
        primitive,
        key: `${KEY_PREFIX}:{${KEY_TAG[identity]}}:req:${slug(plan.name)}`,
        rate: { ...plan.rate },
        burst,
        cost,
        failMode,
        layer: 'middleware',
        ttlSeconds: ttl,
        cardinality: { ...card, basis: card.basis + share },
        bytesPerKey: BYTES_PER_KEY.gcra,
        headers: 'full',
        errorCode: 'RATE_LIMITED',
        killSwitch: { flag: killSwitchFlag(id) },
        rationale: `The ${plan.rateText} promised to plan ${plan.name}, per ${pop.label}, so one noisy ${pop.label} cannot degrade the others.${weighted}${raised}`,
      });
    }
    return;
  }

  const identity = fairnessIdentity(scope, false);
  const id = b.ids.take(`fairness-per-${identity}`);
  const rps = niceFloor(Math.max(1, ceilingRps * 0.1));
  const burst = Math.max(Math.ceil(rps * burstSeconds), maxCost);
  const ttl = bucketTtl(burst, rps);
  const pop = populationOf(identity, scope);
  const card = bound(pop.population, ceilingRps, ttl, pop.label);
  b.rules.push({
    id,
    source: 'generated',
    tier: 'fairness',
    title: `Per-${pop.label} fairness`,
    endpointClass,
    endpoints: endpoints.map((e) => e.name),
    routes: routesOf(endpoints),
    identity,
    algorithm: 'gcra',
    primitive,
    key: `${KEY_PREFIX}:{${KEY_TAG[identity]}}:req`,
    rate: rateOf(rps),
    burst,
    cost,
    failMode,
    layer: 'middleware',
    ttlSeconds: ttl,
    cardinality: card,
    bytesPerKey: BYTES_PER_KEY.gcra,
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    killSwitch: { flag: killSwitchFlag(id) },
    rationale: `No plan promises a rate, so each ${pop.label} may use at most about a tenth of the ${formatNumber(ceilingRps)} req/s ceiling (${formatNumber(rps)} req/s, rounded down): ten clients misbehaving at once are needed to reach the ceiling. The bucket holds ${burstSeconds} s of rate for legitimate bursts.${weighted}`,
  });
}

function addAnonymous(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[], baseRps: number): void {
  if (endpoints.length === 0) return;
  const { scope, ceilingRps, burstSeconds } = ctx;
  const id = b.ids.take('anonymous-per-ip');
  const rps = niceFloor(Math.min(Math.max(5, baseRps * 2), Math.max(1, ceilingRps / 4)));
  const atEdge = scope.gateway !== 'none';
  const edge = atEdge ? EDGE_ALGORITHM[scope.gateway as Exclude<Gateway, 'none'>] : undefined;
  const maxCost = Math.max(1, ...endpoints.map((e) => e.cost));
  const burst = edge && !edge.hasBurst ? null : Math.max(Math.ceil(rps * burstSeconds), maxCost);
  const ttl = edge ? EDGE_STATE_TTL : bucketTtl(burst ?? 1, rps);
  const card = bound(undefined, ceilingRps, ttl, 'IP');
  const classes = [...new Set(endpoints.map((e) => e.class))];
  const nat =
    'Keyed on the trusted client IP, the only identity an anonymous caller has. One office, campus or carrier-grade NAT address can carry thousands of people, so the limit is set generously (twice a single client\'s fairness rate) and is a scraping brake, not a per-person limit.';
  b.rules.push({
    id,
    source: 'generated',
    tier: 'fairness',
    title: 'Anonymous traffic per client IP',
    endpointClass: classes.length === 1 ? (classes[0] as EndpointClass) : 'all',
    endpoints: endpoints.map((e) => e.name),
    routes: routesOf(endpoints),
    identity: 'ip',
    algorithm: edge ? edge.algorithm : 'gcra',
    primitive: edge ? 'gateway-native' : storePrimitive(scope),
    key: edge ? `${scope.gateway}:client-ip ($binary_remote_addr after real-IP)` : `${KEY_PREFIX}:{${KEY_TAG.ip}}:anon`,
    rate: rateOf(rps),
    burst,
    cost: edge ? { default: 1, byEndpoint: [] } : costTable(endpoints),
    failMode: 'open',
    layer: edge ? 'edge' : 'middleware',
    ttlSeconds: ttl,
    cardinality: card,
    ...(edge ? {} : { bytesPerKey: BYTES_PER_KEY.gcra }),
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    killSwitch: { flag: killSwitchFlag(id) },
    rationale: `${nat}${edge ? ` Enforced at the edge (${edge.component}), where the client address is first known and rejection is cheapest.` : ''}`,
  });
}

function addAuth(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  const { scope, ceilingRps } = ctx;
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
    const userCard = bound(undefined, ceilingRps, window, 'username');
    const ipCard = bound(undefined, ceilingRps, window, 'IP');
    b.rules.push({
      ...common,
      id: userId,
      title: `${kind} attempts per ${limits.identityLabel}`,
      identity: 'username',
      key: `${KEY_PREFIX}:{${tag}}:un:<sha256(${limits.identityLabel.replace(/ /g, '-')})>`,
      rate: { requests: limits.perIdentity, periodSeconds: window },
      ttlSeconds: window,
      cardinality: userCard,
      bytesPerKey: BYTES_PER_KEY['sliding-window-log-base'] + BYTES_PER_KEY['sliding-window-log-entry'],
      killSwitch: { flag: killSwitchFlag(userId) },
      rationale: `Stops ${limits.threat}: ${limits.perIdentity} attempts per ${windowText}, counted exactly (sliding log). ${failMode === 'closed' ? 'Fails closed: admitting unlimited attempts during a store outage is itself the incident.' : 'Fails open, as the answers ask; consider closed, since unlimited attempts during a store outage is itself an incident.'} Silent: no remaining-count headers for attackers.`,
    });
    b.rules.push({
      ...common,
      id: ipId,
      title: `${kind} attempts per client IP`,
      identity: 'ip',
      key: `${KEY_PREFIX}:{${tag}}:ip:<client-ip>`,
      rate: { requests: limits.perIp, periodSeconds: window },
      ttlSeconds: window,
      cardinality: ipCard,
      bytesPerKey: BYTES_PER_KEY['sliding-window-log-base'] + BYTES_PER_KEY['sliding-window-log-entry'],
      killSwitch: { flag: killSwitchFlag(ipId) },
      rationale: `Stops ${kind === 'login' || kind === 'other' ? 'credential stuffing' : 'abuse spread over many targets'} (one address, many ${limits.identityLabel}${limits.identityLabel.endsWith('s') ? 'es' : 's'}): ${limits.perIp} attempts per ${windowText} from the trusted client IP, high enough for a shared NAT address. Each of the two rows alone has a known bypass; together they close both.`,
    });
  }
}

function addWebhooks(b: Builder, ctx: MatrixContext, endpoints: ResolvedEndpoint[]): void {
  if (endpoints.length === 0) return;
  const { scope, ceilingRps, burstSeconds } = ctx;
  const id = b.ids.take('webhooks-per-source');
  const rps = niceFloor(Math.max(10, ceilingRps * 0.2));
  const burst = Math.ceil(rps * burstSeconds);
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
    rate: rateOf(rps),
    burst,
    cost: costTable(endpoints),
    failMode: scope.failureByClass.webhook,
    layer: 'middleware',
    ttlSeconds: ttl,
    cardinality: bound(undefined, ceilingRps, ttl, 'IP'),
    bytesPerKey: BYTES_PER_KEY.gcra,
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    killSwitch: { flag: killSwitchFlag(id) },
    rationale: `Webhook senders retry on 429, so shedding a storm loses nothing; they are kept out of customers' fairness buckets so a provider's retry storm never spends a customer's budget. ${formatNumber(rps)} req/s per sending address.`,
  });
}

function periodSecondsOf(reset: QuotaResetT): { seconds: number; text: string; ttl: number; windows: number } {
  if (reset.kind === 'rolling') {
    return {
      seconds: reset.days * 86400,
      text: `rolling ${reset.days} days`,
      ttl: (reset.days + 1) * 86400,
      windows: reset.days + 1,
    };
  }
  if (reset.period === 'day') {
    return { seconds: 86400, text: `calendar day (${reset.timeZone})`, ttl: 86400 + 3600, windows: 2 };
  }
  return { seconds: 31 * 86400, text: `calendar month (${reset.timeZone})`, ttl: 31 * 86400 + 86400, windows: 2 };
}

/** Where the quota cut-off sits for each exhaustion behaviour. */
export function quotaCutoff(quota: number, exhaustion: 'hard' | 'soft-warning' | 'pay-per-overage'): number {
  if (exhaustion === 'soft-warning') return Math.ceil(quota * 1.2);
  if (exhaustion === 'pay-per-overage') return quota * 3;
  return quota;
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
    const cutoff = quotaCutoff(plan.quota, plan.exhaustion);
    const population = pop.population ?? scope.traffic.distinctClients;
    const behaviour =
      plan.exhaustion === 'hard'
        ? `requests past ${formatNumber(plan.quota)} get 429 QUOTA_EXCEEDED until the reset`
        : plan.exhaustion === 'soft-warning'
          ? `past ${formatNumber(plan.quota)} requests still pass with a warning, and stop at ${formatNumber(cutoff)} (120%)`
          : `past ${formatNumber(plan.quota)} requests pass and are billed as overage by the metering system; ${formatNumber(cutoff)} (3x) is a runaway-spend guard`;
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
      bytesPerKey:
        quotaReset.kind === 'rolling'
          ? BYTES_PER_KEY['fixed-window-rolling-base'] + BYTES_PER_KEY['fixed-window-rolling-bucket'] * (quotaReset.days - 1)
          : BYTES_PER_KEY['fixed-window'],
      headers: 'full',
      errorCode: 'QUOTA_EXCEEDED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: `Business quota of ${formatNumber(plan.quota)} calls per ${period.text} for plan ${plan.name}: ${behaviour}. A fixed window is right at this length: a boundary burst is negligible against a month of traffic. Fails open: a few uncounted calls during an outage cost less than refusing paying customers.`,
    });
  }
}

function addOutbound(b: Builder, ctx: MatrixContext): void {
  const { scope } = ctx;
  for (const p of scope.outbound) {
    const id = b.ids.take(`outbound-${slug(p.name)}`);
    const shared = p.bucket === 'shared' && scope.store !== 'none';
    const rate = { requests: Math.max(1, Math.floor(p.limit.requests * p.safetyFraction)), periodSeconds: p.limit.periodSeconds };
    const ttl = bucketTtl(p.burst, perSecond(rate));
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
      key: shared ? `${KEY_PREFIX}:{out:${slug(p.name)}}:bucket` : `in-process bucket for ${p.name}`,
      rate,
      burst: p.burst,
      cost: { default: 1, byEndpoint: [] },
      failMode: 'closed',
      layer: 'outbound-client',
      ttlSeconds: ttl,
      cardinality: { bound: 2, basis: 'one bucket key and one pause key for this provider' },
      bytesPerKey: BYTES_PER_KEY.gcra,
      headers: 'none',
      errorCode: 'RATE_LIMITED',
      killSwitch: { flag: killSwitchFlag(id) },
      rationale: `${p.name} documents ${p.limitText}; the bucket admits ${Math.round(p.safetyFraction * 100)}% of it to absorb accounting differences, shared by all ${scope.instances} instance(s) through the store (${scope.instances} instances each running their own ${Math.round(p.safetyFraction * 100)}% would send ${formatNumber(scope.instances * p.safetyFraction)}x the limit). Fails closed: when the store is unreachable, calls wait rather than risk a provider ban.`,
    });
  }
}

/** Applies hand-written rules: override by id, remove, or add. */
export function applyHandRules(rules: MatrixRule[], hand: HandRule[], scope: Scope): MatrixRule[] {
  let out = rules.slice();
  for (const h of hand) {
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
      ...(h.key ? { key: h.key } : {}),
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
      const merged: MatrixRule = { ...base, ...patch, source: 'overridden' };
      if (h.killSwitch === false) delete merged.killSwitch;
      out[idx] = merged;
    } else {
      const rule: MatrixRule = {
        id: h.id,
        source: 'hand-written',
        tier: h.endpointClass === 'auth' ? 'security' : 'fairness',
        title: h.description ?? h.id,
        endpointClass: h.endpointClass ?? 'all',
        endpoints: [],
        routes: [],
        headers: h.endpointClass === 'auth' ? 'silent' : 'full',
        errorCode: 'RATE_LIMITED',
        rationale: 'Hand-written rule from the answers file.',
        ...(h.killSwitch === false ? {} : { killSwitch: { flag: killSwitchFlag(h.id) } }),
        ...patch,
      };
      out.push(rule);
    }
  }
  return out;
}

export interface MatrixResult {
  rules: MatrixRule[];
  exempt: ResolvedEndpoint[];
}

export function buildMatrix(ctx: MatrixContext, hand: HandRule[]): MatrixResult {
  const { scope } = ctx;
  const b: Builder = { ids: new IdAllocator(), rules: [] };
  const exempt = scope.endpoints.filter((e) => e.class === 'health');
  const limited = scope.endpoints.filter((e) => e.class !== 'health');
  const auth = limited.filter((e) => e.class === 'auth');
  const webhooks = limited.filter((e) => e.class === 'webhook');
  const rest = limited.filter((e) => e.class !== 'auth' && e.class !== 'webhook');
  const anonymous = rest.filter((e) => e.anonymous);
  const identified = rest.filter((e) => !e.anonymous);

  addCeiling(b, ctx, limited);
  addFairness(b, ctx, identified);
  const base = b.rules.find((r) => r.tier === 'fairness');
  const baseRps = base?.rate ? perSecond(base.rate) : niceFloor(ctx.ceilingRps * 0.1);
  addAnonymous(b, ctx, anonymous, baseRps);
  addAuth(b, ctx, auth);
  addWebhooks(b, ctx, webhooks);
  addQuotas(b, ctx, identified);
  addOutbound(b, ctx);
  return { rules: applyHandRules(b.rules, hand, scope), exempt };
}

/**
 * Defaults and the partial-context protocol: turns validated Answers into a fully
 * resolved Scope, recording one Assumption for every answer that was unknown.
 *
 * Generic design: when the goals or the stack are unknown, the design is a
 * token bucket per API key in middleware backed by Redis, and says so.
 */
import type { Answers, Endpoint, QuotaResetT, Rate } from '../answers/schema.js';
import type {
  Assumption,
  EndpointClass,
  Exhaustion,
  FailMode,
  HeaderConvention,
  ResolvedEndpoint,
  ResolvedPlan,
  ResolvedProvider,
  Scope,
} from './model.js';
import { slug } from './naming.js';
import { formatNumber, joinAnd, periodName, ratePer, shownRate } from '../format.js';

export const PERIOD_SECONDS = { second: 1, minute: 60, hour: 3600, day: 86400 } as const;

/** Tokens an endpoint class takes from the shared per-identity bucket, unless stated. */
const DEFAULT_CLASS_COST: Record<EndpointClass, number> = {
  auth: 1,
  read: 1,
  write: 2,
  search: 5,
  expensive: 10,
  export: 20,
  webhook: 1,
  health: 0,
};

/** How many seconds of sustained rate a bucket may spend at once, by burstiness. */
export const BURST_SECONDS = { low: 2, moderate: 5, high: 10 } as const;

const PRIVATE_PROXY_RANGES = ['127.0.0.1/32', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];

const DEFAULT_DOCS_URL = 'https://api.example.com/docs/rate-limits';

/** What one client is assumed to send at its busiest, when the answers do not say (requests/s). */
const DEFAULT_CLIENT_PEAK_RPS = 2;
/** Clients assumed active at once behind one address (office, carrier-grade NAT), when not stated. */
const DEFAULT_CLIENTS_PER_ADDRESS = 25;

interface ResolvedAnswers {
  scope: Scope;
  assumptions: Assumption[];
  generic: boolean;
  headers: { convention: HeaderConvention; docsUrl: string };
  quotaReset?: QuotaResetT;
  billingSource: 'metering-system' | 'limiter-counters';
  shadowDays: number;
  output: {
    format: 'html' | 'markdown';
    layout: 'auto' | 'single' | 'folder';
    path?: string;
    codeDir?: string;
  };
}

export function ratePerSecond(rate: Rate): number {
  return rate.requests / PERIOD_SECONDS[rate.per];
}

export function rateText(rate: Rate): string {
  return limitText({ requests: rate.requests, periodSeconds: PERIOD_SECONDS[rate.per] });
}

/** A provider's limit, or a bucket's rate, as rateText writes it: "100/second", "1 per 1,000 s" (shownRate). */
function limitText(rate: { requests: number; periodSeconds: number }): string {
  const shown = shownRate(rate.requests, rate.periodSeconds);
  return shown.periodSeconds === rate.periodSeconds
    ? `${formatNumber(rate.requests)}/${periodName(rate.periodSeconds)}`
    : ratePer(shown, true);
}

/**
 * What an outbound bucket adds within one period of its rate: "the 90 the bucket refills per
 * second", or for less than one call a period "the bucket's refill of 1 per 1,000 s".
 */
export function outboundRefillText(rate: { requests: number; periodSeconds: number }): string {
  return rate.requests >= 1
    ? `the ${formatNumber(rate.requests)} the bucket refills per ${periodName(rate.periodSeconds)}`
    : `the bucket's refill of ${ratePer(rate, true)}`;
}

/**
 * Where a plan that lets calls pass past its quota stops them (429 QUOTA_EXCEEDED): the
 * answers have no field for it, so these factors are an assumption the document states.
 */
export const QUOTA_BACKSTOP = { 'soft-warning': 1.2, 'pay-per-overage': 3 } as const;

/** The count at which the limiter refuses: the quota itself when hard, else the stated cap or the assumed backstop. */
export function quotaStop(quota: number, exhaustion: Exhaustion, overageCap?: number): number {
  if (exhaustion === 'hard') return quota;
  return overageCap ?? Math.ceil(quota * QUOTA_BACKSTOP[exhaustion]);
}

const PERIOD_NAME: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour', 86400: 'day' };

/**
 * Calls per provider period the outbound bucket admits: the safety fraction of the limit,
 * rounded down to whole calls, or below one call per period to thousandths (0.9 of 1/second
 * is 0.9, never rounded up to the limit itself); at least 0.001, the smallest rate a rule takes.
 */
export function outboundRate(limitRequests: number, safetyFraction: number): number {
  const rate = limitRequests * safetyFraction;
  if (rate >= 1) return Math.floor(rate + 1e-9);
  return Math.max(0.001, Math.floor(rate * 1000 + 1e-9) / 1000);
}

/**
 * GCRA sends a full bucket's burst at once and then one call per interval, so within one
 * provider period it lets through burst + rate x period calls. The default burst is one
 * second of the bucket rate, lowered so that sum stays within the provider's limit; at least 1.
 */
export function defaultOutboundBurst(limitRequests: number, periodSeconds: number, safetyFraction: number): number {
  const rate = outboundRate(limitRequests, safetyFraction);
  const oneSecond = Math.floor((rate / periodSeconds) * Math.min(periodSeconds, 1));
  return Math.max(1, Math.min(oneSecond, limitRequests - rate));
}

/** Calls a full outbound bucket can send within one provider period, and by how many that passes the limit (0: within it). */
export function outboundPeak(p: Pick<ResolvedProvider, 'limit' | 'safetyFraction' | 'burst'>): {
  peak: number;
  over: number;
  rate: number;
} {
  const rate = outboundRate(p.limit.requests, p.safetyFraction);
  // the burst at once, then one call per 1/rate of the period: floor(rate) more within it
  const peak = p.burst + Math.floor(rate);
  return { peak, over: Math.max(0, peak - p.limit.requests), rate };
}

/**
 * "burst + refill = peak calls": what a full bucket sends within one provider period. The refill
 * counts whole calls (the next one is due only after the period), so a bucket rate that is not
 * whole is shown with its floor, as the worst-case table shows it.
 */
export function outboundSumText(burst: number, rate: number, peak: number): string {
  // a bucket rate is whole calls or thousandths (outboundRate): three decimals show it exactly
  const refill = Number.isInteger(rate) ? formatNumber(rate) : `floor(${formatNumber(rate, 3)})`;
  return `${formatNumber(burst)} + ${refill} = ${formatNumber(peak)} call${peak === 1 ? '' : 's'}`;
}

/**
 * How the bucket rate follows from the provider's limit: "Stripe's 100/second x 90%", with the
 * exact product and the rounding when outboundRate rounded it down ("x 85% (8.5), rounded down").
 */
export function outboundRateText(p: Pick<ResolvedProvider, 'name' | 'limit' | 'limitText' | 'safetyFraction'>): string {
  const product = p.limit.requests * p.safetyFraction;
  const rate = outboundRate(p.limit.requests, p.safetyFraction);
  const base = `${p.name}'s ${p.limitText} x ${formatNumber(Math.round(p.safetyFraction * 10000) / 100)}%`;
  if (Math.abs(product - rate) < 1e-9) return base;
  const exact = formatNumber(Math.round(product * 1e6) / 1e6, 6);
  // below a thousandth the bucket runs at its least rate, 0.001 calls a period: raised, not rounded down
  if (rate > product) return `${base} (${exact}), raised to the least bucket rate, 0.001 a period`;
  return `${base} (${exact}), rounded down to ${rate >= 1 ? 'whole calls' : 'thousandths'}`;
}

function outboundBurstText(p: ResolvedProvider): string {
  const { peak, over, rate } = outboundPeak(p);
  const per = PERIOD_NAME[p.limit.periodSeconds] ?? `${formatNumber(p.limit.periodSeconds)} s`;
  const sum = `${outboundSumText(p.burst, rate, peak)} per ${per}`;
  if (over > 0)
    return `${p.name} ${formatNumber(p.burst)}, the minimum (${sum}, over the limit of ${p.limitText}: lower the safety fraction)`;
  if (peak === p.limit.requests) return `${p.name} ${formatNumber(p.burst)} (${sum}, exactly the limit of ${p.limitText})`;
  const why =
    p.burst === Math.floor((rate / p.limit.periodSeconds) * Math.min(p.limit.periodSeconds, 1))
      ? `one second of its ${formatNumber(rate / p.limit.periodSeconds)}/s rate`
      : 'the minimum';
  return `${p.name} ${formatNumber(p.burst)} (${why}; ${sum}, within ${p.limitText})`;
}

export function resolveAnswers(answers: Answers): ResolvedAnswers {
  const assumptions: Assumption[] = [];
  /** field: the answers field the assumption stands in for; several are joined with ", ". */
  const assume = (field: string, text: string, id: string = field) => {
    assumptions.push({ id, field, text });
  };

  const unknownCritical = new Set(answers.unknown ?? []);
  const goalsUnknown = unknownCritical.has('goals') || answers.goals === undefined || answers.goals.length === 0;
  const stackUnknown = unknownCritical.has('stack') || answers.stack === undefined;
  const generic = goalsUnknown || stackUnknown;
  if (generic) {
    assume(
      'generic',
      `${[goalsUnknown ? 'What the limiter protects (question 1)' : '', stackUnknown ? 'the stack and topology (question 2)' : '']
        .filter(Boolean)
        .join(
          ' and ',
        )} could not be answered, so this is the generic design: a token bucket per API key, enforced in application middleware, with state in Redis. Revisit it once those answers are known.`,
    );
  }

  // Goals.
  const goals = goalsUnknown ? (['overload', 'fairness'] as const).slice() : [...new Set(answers.goals)];
  if (goalsUnknown) assume('goals', 'Protection goals unknown: assumed overload protection and per-client fairness.');

  // Stack and topology.
  const stack = answers.stack ?? {};
  const language = stack.language ?? 'TypeScript';
  if (!stack.language) assume('stack.language', 'Language unknown: assumed TypeScript on Node.js.');
  const framework = stack.framework ?? 'express';
  if (!stack.framework) assume('stack.framework', 'Framework unknown: assumed Express; the middleware contract is the same for others.');
  let topology = stack.topology;
  if (!topology) {
    topology = stack.instances && stack.instances > 1 ? 'horizontal' : 'single';
    if (!stack.instances) {
      topology = 'horizontal';
      assume(
        'stack.topology',
        'Topology unknown: assumed horizontally scaled (3 instances), the safe assumption, since every limit then has to live in a shared store.',
      );
    }
  }
  let instances = stack.instances ?? (topology === 'single' ? 1 : 3);
  if (topology === 'horizontal' && stack.instances === undefined && stack.topology) {
    assume('stack.instances', 'Instance count unknown: assumed 3 for the over-admission and memory estimates.');
  }
  if (topology === 'single') instances = 1;
  const gateway = stack.gateway ?? 'none';
  if (!stack.gateway)
    assume('stack.gateway', 'No gateway or reverse proxy named: assumed none, so every rule is enforced in application middleware.');
  let store = stack.store;
  if (!store) {
    store = 'redis';
    assume('stack.store', 'Store unknown: assumed a dedicated Redis (7.x) for limiter state.');
  } else if (store === 'none' && topology === 'horizontal') {
    store = 'redis';
    assume(
      'stack.store',
      'No shared store exists but the API runs on several instances: per-instance counters would admit N times every limit, so the design adds a dedicated Redis.',
    );
  }
  let trustedProxies = stack.trustedProxies ?? [];
  if (!stack.trustedProxies) {
    if (gateway !== 'none') {
      trustedProxies = PRIVATE_PROXY_RANGES;
      assume(
        'stack.trustedProxies',
        `Trusted proxy ranges unknown: assumed the ${gateway} tier sits in loopback/private ranges (${PRIVATE_PROXY_RANGES.join(', ')}). Narrow this to your proxies' real addresses: every range listed is allowed to name the client IP.`,
      );
    } else {
      assume(
        'stack.trustedProxies',
        'Trusted proxies not given: assumed no proxy or load balancer sits in front of the application, so the client IP is the TCP peer address and X-Forwarded-For is ignored. If one does, list its address ranges: otherwise every client behind it shares its address, and one IP limit.',
      );
    }
  }

  // Identities.
  let identities = answers.identities ? [...new Set(answers.identities)] : undefined;
  if (!identities || identities.length === 0) {
    identities = ['api-key', 'ip'];
    assume(
      'identities',
      'Identity dimensions unknown: assumed an API key on authenticated calls and the trusted client IP for anonymous ones.',
    );
  }
  if (!identities.includes('ip')) {
    identities.push('ip');
    assume(
      'identities.ip',
      'The trusted client IP was not listed as an identity: added, because anonymous calls and the per-IP auth limits can be keyed on nothing else.',
    );
  }

  // Endpoints.
  let endpoints: ResolvedEndpoint[];
  if (!answers.endpoints || answers.endpoints.length === 0) {
    endpoints = [
      { name: 'all-endpoints', method: 'ANY', route: '/*', class: 'read', anonymous: false, cost: 1, assumed: ['anonymous', 'cost'] },
    ];
    assume('endpoints', 'Endpoints unknown: every route is treated as one class of ordinary authenticated calls with cost 1.');
  } else {
    endpoints = answers.endpoints.map((e: Endpoint) => {
      const authKind = e.class === 'auth' ? (e.authKind ?? 'login') : e.authKind;
      // A caller of a login, sign-up, reset or token endpoint has no credentials yet; an MFA
      // step is called with the session of the first factor, so it keeps the stated flag.
      const anonymousByKind = e.class === 'auth' && authKind !== 'mfa' && !e.anonymous;
      const assumed: NonNullable<ResolvedEndpoint['assumed']> = [
        ...(e.class === 'auth' && !e.authKind ? (['authKind'] as const) : []),
        ...(anonymousByKind ? (['anonymous'] as const) : []),
        ...(e.cost === undefined ? (['cost'] as const) : []),
      ];
      return {
        name: e.name,
        method: e.method,
        route: e.route,
        class: e.class,
        ...(authKind ? { authKind } : {}),
        anonymous: e.anonymous || anonymousByKind,
        cost: e.cost ?? DEFAULT_CLASS_COST[e.class],
        ...(assumed.length > 0 ? { assumed } : {}),
      };
    });
    for (const e of answers.endpoints) {
      if (e.class === 'auth' && !e.authKind) {
        assume(`endpoints.${e.name}.authKind`, `Endpoint "${e.name}" is an auth endpoint of unstated kind: treated as a login.`);
      }
    }
    const byKind = endpoints.filter((e) => e.assumed?.includes('anonymous')).map((e) => e.name);
    if (byKind.length > 0) {
      assume(
        'endpoints.anonymous',
        `${joinAnd(byKind)} ${byKind.length === 1 ? 'is an auth endpoint' : 'are auth endpoints'} not marked anonymous: treated as anonymous, since a caller of a login, sign-up, password-reset or token endpoint has no credentials yet. ${byKind.length === 1 ? 'It is' : 'They are'} limited by the per-identity and per-IP auth rows, not by the anonymous per-IP bucket. An MFA step keeps its stated flag: its caller already holds the first factor's session.`,
      );
    }
    const defaulted = endpoints.filter((e) => e.assumed?.includes('cost'));
    if (defaulted.length > 0) {
      const limited = defaulted.filter((e) => e.class !== 'health');
      const heavy = limited.filter((e) => e.cost !== 1);
      const ones = limited.length - heavy.length;
      const given = endpoints.filter((e) => !e.assumed?.includes('cost'));
      const weights = [
        ...(heavy.length > 0 ? [joinAnd(heavy.map((e) => `${e.name} (${e.class}) ${formatNumber(e.cost)}`)) + ' tokens'] : []),
        ...(ones > 0
          ? [
              `${heavy.length > 0 ? 'the other ' : ''}${formatNumber(ones)} ${ones === 1 ? 'endpoint' : 'endpoints'} 1 token${ones === 1 ? '' : ' each'}`,
            ]
          : []),
      ];
      const exempt = defaulted.length - limited.length;
      assume(
        'endpoints.cost',
        `Costs not stated for ${given.length === 0 ? `any of the ${formatNumber(endpoints.length)} endpoints` : `${formatNumber(defaulted.length)} of the ${formatNumber(endpoints.length)} endpoints (${joinAnd(given.map((e) => `${e.name} states ${formatNumber(e.cost)}`))})`}: each takes the weight of its class: ${weights.join('; ')}${exempt > 0 ? `; health checks are exempt and cost nothing` : ''}.`,
      );
    }
  }

  // Traffic.
  const t = answers.traffic ?? {};
  const burstiness = t.burstiness ?? 'moderate';
  if (!t.burstiness) {
    assume(
      'traffic.burstiness',
      `Burstiness unknown: assumed moderate, so the per-client buckets (fairness, anonymous and webhook limits, and plans whose burst is not stated) hold ${BURST_SECONDS.moderate} seconds of their sustained rate. The global ceiling's bucket holds 1 second of its rate; outbound buckets are sized to their provider's limit.`,
    );
  }
  let typicalRps = t.typicalRps;
  let peakRps = t.peakRps;
  if (typicalRps === undefined && peakRps === undefined) {
    typicalRps = 50;
    peakRps = 150;
    assume(
      'traffic.typicalRps, traffic.peakRps',
      'Traffic unknown: assumed 50 requests/s typical and 150 requests/s peak, a placeholder the size of one small instance, not a measurement. Every rate derived from the peak (the ceiling, and the rules sized from it, named here) is a placeholder too: measure the peak during shadow mode and regenerate before enforcing.',
      'traffic.peakRps',
    );
  } else if (peakRps === undefined) {
    peakRps = (typicalRps as number) * 3;
    assume('traffic.peakRps', `Peak rate unknown: assumed 3x typical (${formatNumber(peakRps)} requests/s).`);
  } else if (typicalRps === undefined) {
    typicalRps = Math.max(1, Math.round(peakRps / 3));
    assume('traffic.typicalRps', `Typical rate unknown: assumed a third of peak (${formatNumber(typicalRps)} requests/s).`);
  }
  const headroom = t.headroom ?? (burstiness === 'high' ? 2 : 1.5);
  if (t.headroom === undefined && t.capacityRps === undefined) {
    assume('traffic.headroom', `Backend capacity unknown: the global ceiling is peak x ${headroom} headroom.`);
  }
  // Populations: only the identities the API has are counted; a missing count is derived from
  // a stated one where it can be, and assumed (with its value and why) only where it must.
  const usesApiKey = identities.includes('api-key');
  const usesTenant = identities.includes('tenant');
  // Only user and session keys are counted per account; auth keys are bounded by traffic.
  const usesUsers = identities.includes('user') || identities.includes('session');
  let distinctClients = t.distinctClients ?? 0;
  if (t.distinctClients === undefined && usesApiKey) {
    if (t.distinctTenants !== undefined) {
      distinctClients = t.distinctTenants;
      assume(
        'traffic.distinctClients',
        `Number of API keys unknown: assumed one per stated tenant (${formatNumber(distinctClients)}), since every tenant needs at least one key to call the API. It sizes the per-API-key key bound and memory; a tenant with several keys adds to it.`,
      );
    } else {
      distinctClients = 1000;
      assume(
        'traffic.distinctClients',
        'Number of API keys unknown: assumed 1,000 for the key bound and memory estimate of the per-API-key rules (a placeholder: no answer gives a population; the bound never caps traffic, only the memory sizing).',
      );
    }
  }
  // what distinctClients counts here: API keys where the API has them, else the clients the answers state
  const perClients = (n: number): string =>
    usesApiKey
      ? n === 1
        ? 'API key'
        : `${n} API keys`
      : n === 1
        ? `client of the ${formatNumber(distinctClients)} stated in traffic.distinctClients`
        : `${n} of the ${formatNumber(distinctClients)} clients stated in traffic.distinctClients`;
  let distinctTenants = t.distinctTenants ?? 0;
  if (t.distinctTenants === undefined && usesTenant) {
    distinctTenants = Math.max(1, Math.ceil((distinctClients || 1000) / 5));
    assume(
      'traffic.distinctTenants',
      distinctClients > 0
        ? `Number of tenants unknown: assumed one per ${perClients(5)} (${formatNumber(distinctTenants)}), for the key bound and memory estimate of the per-tenant rules.`
        : `Number of tenants unknown: assumed ${formatNumber(distinctTenants)} for the key bound and memory estimate of the per-tenant rules (a placeholder: no answer gives a population).`,
    );
  }
  let distinctUsers = t.distinctUsers ?? 0;
  if (t.distinctUsers === undefined && usesUsers) {
    const base = distinctClients || distinctTenants;
    distinctUsers = base > 0 ? base * 10 : 10_000;
    assume(
      'traffic.distinctUsers',
      base > 0
        ? `Number of user accounts unknown: assumed 10 per ${distinctClients > 0 ? perClients(1) : 'tenant'} (${formatNumber(distinctUsers)}), for the key bound and memory estimate of the per-user rules.`
        : `Number of user accounts unknown: assumed ${formatNumber(distinctUsers)} for the key bound and memory estimate of the per-user rules (a placeholder: no answer gives a population).`,
    );
  }

  // Limits keyed on an address: what one client sends, and how many clients share an address.
  const anonymousEndpoints = endpoints.some((e) => e.anonymous && e.class !== 'auth' && e.class !== 'webhook' && e.class !== 'health');
  const ipFairness = !identities.some((i) => i !== 'ip');
  const perAddress = anonymousEndpoints || ipFairness;
  const clientPeakRps = t.clientPeakRps ?? DEFAULT_CLIENT_PEAK_RPS;
  const clientsPerAddress = t.clientsPerAddress ?? DEFAULT_CLIENTS_PER_ADDRESS;
  if (perAddress && t.clientPeakRps === undefined) {
    assume(
      'traffic.clientPeakRps',
      `What one client sends at its busiest is unknown: assumed ${formatNumber(DEFAULT_CLIENT_PEAK_RPS)} requests/s, about what an app or a browser tab sustains while someone is actively using it (a page load's burst above it is what the bucket's burst absorbs). It sizes every limit keyed on a client IP.`,
    );
  }
  if (perAddress && t.clientsPerAddress === undefined) {
    assume(
      'traffic.clientsPerAddress',
      `How many clients can be active at once behind one address is unknown: assumed ${formatNumber(DEFAULT_CLIENTS_PER_ADDRESS)}, an office or a mobile carrier's NAT (carrier-grade NAT puts many subscribers on one public IPv4 address, of whom only some use this API at the same moment). It sizes every limit keyed on a client IP.`,
    );
  }

  // Plans.
  const burstSeconds = BURST_SECONDS[burstiness];
  const quotasAnswers = answers.quotas ?? {};
  const defaultExhaustion = quotasAnswers.exhaustion ?? 'hard';
  const plans: ResolvedPlan[] = (answers.plans ?? []).map((p) => {
    const rps = ratePerSecond(p.rate);
    const assumed: NonNullable<ResolvedPlan['assumed']> = [
      ...(p.burst === undefined ? (['burst'] as const) : []),
      ...(p.quota !== undefined && !p.exhaustion && !quotasAnswers.exhaustion ? (['exhaustion'] as const) : []),
      ...(p.quota !== undefined && (p.exhaustion ?? defaultExhaustion) !== 'hard' && p.overageCap === undefined
        ? (['overageCap'] as const)
        : []),
    ];
    return {
      name: p.name,
      ratePerSecond: rps,
      rate: { requests: p.rate.requests, periodSeconds: PERIOD_SECONDS[p.rate.per] },
      rateText: rateText(p.rate),
      burst: p.burst ?? Math.max(1, Math.ceil(rps * burstSeconds)),
      ...(p.quota !== undefined ? { quota: p.quota } : {}),
      exhaustion: p.quota === undefined ? 'hard' : (p.exhaustion ?? defaultExhaustion),
      ...(p.quota !== undefined && p.overageCap !== undefined ? { overageCap: p.overageCap } : {}),
      ...(assumed.length > 0 ? { assumed } : {}),
    };
  });
  if (!answers.plans || answers.plans.length === 0) {
    assume(
      'plans',
      'No plan tiers or promised limits: per-client limits are derived from capacity, not from a contract (each client may use about a tenth of the global ceiling, so about ten clients at full rate are needed to reach it).',
    );
  } else {
    const noBurst = plans.filter((p) => p.assumed?.includes('burst'));
    if (noBurst.length > 0) {
      assume(
        'plans.burst',
        `Burst not stated for ${joinAnd(noBurst.map((p) => p.name))}: set to ${burstSeconds} seconds of the plan rate (${joinAnd(noBurst.map((p) => `${p.name}: ${p.rateText} x ${burstSeconds} s = ${formatNumber(p.burst)} tokens`))}).`,
      );
    }
  }
  const hasQuota = plans.some((p) => p.quota !== undefined);
  let quotaReset = quotasAnswers.reset;
  if (hasQuota && !quotaReset) {
    quotaReset = { kind: 'calendar', period: 'month', timeZone: 'UTC' };
    assume('quotas.reset', 'Quota reset unknown: assumed the calendar month in UTC.');
  }
  if (hasQuota && !quotasAnswers.exhaustion && (answers.plans ?? []).some((p) => p.quota !== undefined && !p.exhaustion)) {
    assume(
      'quotas.exhaustion',
      'What happens when a quota runs out is a product decision that was not answered: assumed a hard cut-off (429 QUOTA_EXCEEDED). Confirm with product before enforcing.',
    );
  }
  const backstopped = plans.filter((p) => p.quota !== undefined && p.exhaustion !== 'hard' && p.overageCap === undefined);
  if (hasQuota && backstopped.length > 0) {
    const stops = backstopped.map((p) => {
      const quota = p.quota as number;
      const factor = QUOTA_BACKSTOP[p.exhaustion as Exclude<Exhaustion, 'hard'>];
      return `${p.name} (${p.exhaustion}) is refused past ${formatNumber(quotaStop(quota, p.exhaustion))} calls (${factor < 2 ? `${formatNumber(Math.round(factor * 100))}% of` : `${formatNumber(factor)}x`} its ${formatNumber(quota)} quota)`;
    });
    const ids = backstopped.map((p) => `"quota-${slug(p.name)}"`);
    assume(
      'plans.overageCap',
      `Open product decision: ${joinAnd(backstopped.map((p) => p.name))} ${backstopped.length === 1 ? 'lets' : 'let'} calls pass past the quota, and the answers do not say where that stops. Until product decides, the design assumes a cap where the limiter refuses with 429 QUOTA_EXCEEDED until the reset, so a runaway client's overage stays bounded: ${stops.join('; ')}. Set each plan's overageCap to the count product chooses, its exhaustion to "hard" to stop at the quota itself, or remove its quota row (a rules entry with "id": ${ids.join(' or ')} and "remove": true) to have no stop in the limiter at all (billing is unaffected).`,
    );
  }
  const billingSource = quotasAnswers.billingSource ?? 'metering-system';

  // Failure posture.
  const failureByClass = {} as Record<EndpointClass, FailMode>;
  const stated = answers.failure?.byClass ?? {};
  for (const c of ['auth', 'read', 'write', 'search', 'expensive', 'export', 'webhook', 'health'] as const) {
    failureByClass[c] = stated[c] ?? (c === 'auth' ? 'closed' : 'open');
  }
  if (!answers.failure?.byClass) {
    assume(
      'failure.byClass',
      'Failure posture unknown: auth endpoints fail closed (a limiter outage must not open the door to brute force); everything else fails open (a limiter outage must not become an API outage), with an alert on every fail-open event.',
    );
  } else {
    // classes the endpoints use that the stated posture leaves out take the same rule of thumb
    const used = [...new Set(endpoints.map((e) => e.class))];
    const unstated = used.filter((c) => stated[c] === undefined);
    if (unstated.length > 0) {
      const named = used.filter((c) => stated[c] !== undefined);
      assume(
        unstated.map((c) => `failure.byClass.${c}`).join(', '),
        `Fail mode not stated for ${joinAnd(unstated)} (failure.byClass names ${named.length > 0 ? joinAnd(named) : 'no class these endpoints use'}): ${joinAnd(unstated.map((c) => `${c} fails ${failureByClass[c]}`))}, by the rule of thumb: auth fails closed (a limiter outage must not open the door to brute force), everything else fails open (a limiter outage must not become an API outage), with an alert on every fail-open event.${unstated.includes('health') ? ' Health checks are exempt, so their mode never applies.' : ''} Add the class to failure.byClass to decide it.`,
        'failure.byClass.unstated',
      );
    }
  }

  // Outbound.
  const outbound: ResolvedProvider[] = (answers.outbound ?? []).map((o) => {
    const limitPerSecond = ratePerSecond(o.limit);
    const safetyFraction = o.safetyFraction ?? 0.9;
    // what the shipped bucket runs at (outboundRate), not the unrounded fraction of the limit
    const bucketPerSecond = outboundRate(o.limit.requests, safetyFraction) / PERIOD_SECONDS[o.limit.per];
    const assumed: NonNullable<ResolvedProvider['assumed']> = [
      ...(o.burst === undefined ? (['burst'] as const) : []),
      ...(o.safetyFraction === undefined ? (['safetyFraction'] as const) : []),
    ];
    return {
      name: o.name,
      limitPerSecond,
      limit: { requests: o.limit.requests, periodSeconds: PERIOD_SECONDS[o.limit.per] },
      limitText: rateText(o.limit),
      safetyFraction,
      bucketPerSecond,
      burst: o.burst ?? defaultOutboundBurst(o.limit.requests, PERIOD_SECONDS[o.limit.per], safetyFraction),
      bucket: o.bucket ?? 'shared',
      ...(assumed.length > 0 ? { assumed } : {}),
    };
  });
  const noFraction = outbound.filter((p) => p.assumed?.includes('safetyFraction'));
  if (noFraction.length > 0) {
    assume(
      'outbound.safetyFraction',
      `Outbound safety margin not stated for ${joinAnd(noFraction.map((p) => p.name))}: the bucket runs at 90% of the provider's limit (${joinAnd(noFraction.map((p) => `${p.name}: ${limitText({ requests: outboundRate(p.limit.requests, p.safetyFraction), periodSeconds: p.limit.periodSeconds })} of ${p.limitText}`))}).`,
    );
  }
  const noBurst = outbound.filter((p) => p.assumed?.includes('burst'));
  if (noBurst.length > 0) {
    assume(
      'outbound.burst',
      `Outbound burst not stated for ${joinAnd(noBurst.map((p) => p.name))}. A full bucket sends its burst at once and then refills at the bucket rate, so within one provider period it can send burst + rate x period calls. The burst is set to the smaller of one second of the bucket rate and the largest value that keeps that sum within the provider's limit, and at least 1: ${joinAnd(noBurst.map(outboundBurstText))}.`,
    );
  }
  if (answers.outbound === undefined) assume('outbound', 'No third-party APIs with their own limits were named: no outbound limiter.');

  // Headers and docs.
  const convention = answers.headers?.convention ?? 'ietf-structured';
  if (!answers.headers?.convention) {
    assume('headers.convention', 'Header convention not chosen: the current IETF draft fields RateLimit and RateLimit-Policy.');
  }
  const docsUrl = answers.headers?.docsUrl ?? DEFAULT_DOCS_URL;
  if (!answers.headers?.docsUrl)
    assume('headers.docsUrl', `Documentation link for 429 bodies not given: ${DEFAULT_DOCS_URL} stands in; replace it.`);

  const scope: Scope = {
    projectName: answers.project?.name ?? 'The API',
    ...(answers.project?.description ? { description: answers.project.description } : {}),
    goals: goals as Scope['goals'],
    language,
    framework,
    topology,
    instances,
    gateway,
    ...(stack.gatewayNodes !== undefined && gateway !== 'none' ? { gatewayNodes: stack.gatewayNodes } : {}),
    store,
    trustedProxies,
    identities,
    endpoints,
    traffic: {
      typicalRps: typicalRps as number,
      peakRps: peakRps as number,
      ...(t.capacityRps !== undefined ? { capacityRps: t.capacityRps } : {}),
      headroom,
      burstiness,
      burstSources: t.burstSources ?? [],
      distinctClients,
      distinctTenants,
      distinctUsers,
      clientPeakRps,
      clientsPerAddress,
    },
    plans,
    failureByClass,
    outbound,
  };

  return {
    scope,
    assumptions,
    generic,
    headers: { convention, docsUrl },
    ...(quotaReset ? { quotaReset } : {}),
    billingSource,
    shadowDays: answers.rollout?.shadowDays ?? 7,
    output: {
      format: answers.output?.format ?? 'html',
      layout: answers.output?.layout ?? 'auto',
      ...(answers.output?.path ? { path: answers.output.path } : {}),
      ...(answers.output?.codeDir ? { codeDir: answers.output.codeDir } : {}),
    },
  };
}

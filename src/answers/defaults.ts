/**
 * Defaults and the partial-context protocol: turns validated Answers into a fully
 * resolved Scope, recording one Assumption for every answer that was unknown.
 *
 * Generic design: when item 1 (goals) or item 2 (stack) is unknown, the design is a
 * token bucket per API key in middleware backed by Redis, and says so.
 */
import type { Answers, Endpoint, QuotaResetT, Rate } from './schema.js';
import type {
  Assumption,
  EndpointClass,
  FailMode,
  HeaderConvention,
  ResolvedEndpoint,
  ResolvedPlan,
  ResolvedProvider,
  Scope,
} from '../design/model.js';

export const PERIOD_SECONDS = { second: 1, minute: 60, hour: 3600, day: 86400 } as const;

/** Tokens an endpoint class takes from the shared per-identity bucket, unless stated. */
export const DEFAULT_CLASS_COST: Record<EndpointClass, number> = {
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

export const PRIVATE_PROXY_RANGES = ['127.0.0.1/32', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];

export const DEFAULT_DOCS_URL = 'https://api.example.com/docs/rate-limits';

export interface ResolvedAnswers {
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
  return `${formatNumber(rate.requests)}/${rate.per}`;
}

import { formatNumber } from '../format.js';

export function resolveAnswers(answers: Answers): ResolvedAnswers {
  const assumptions: Assumption[] = [];
  const assume = (field: string, text: string) => {
    assumptions.push({ id: field, field, text });
  };

  const unknownCritical = new Set(answers.unknown ?? []);
  const goalsUnknown = unknownCritical.has('goals') || answers.goals === undefined || answers.goals.length === 0;
  const stackUnknown = unknownCritical.has('stack') || answers.stack === undefined;
  const generic = goalsUnknown || stackUnknown;
  if (generic) {
    assume(
      'generic',
      `${[goalsUnknown ? 'What the limiter protects (item 1)' : '', stackUnknown ? 'the stack and topology (item 2)' : '']
        .filter(Boolean)
        .join(' and ')} could not be answered, so this is the generic design: a token bucket per API key, enforced in application middleware, with state in Redis. Revisit it once those answers are known.`,
    );
  }

  // Item 1: goals.
  const goals = goalsUnknown ? (['overload', 'fairness'] as const).slice() : [...new Set(answers.goals)];
  if (goalsUnknown) assume('goals', 'Protection goals unknown: assumed overload protection and per-client fairness.');

  // Item 2: stack and topology.
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
  if (!stack.gateway) assume('stack.gateway', 'No gateway or reverse proxy named: every rule is enforced in application middleware.');
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
      assume('stack.trustedProxies', 'No trusted proxies: the client IP is the TCP peer address and X-Forwarded-For is ignored.');
    }
  }

  // Item 3: identities.
  let identities = answers.identities ? [...new Set(answers.identities)] : undefined;
  if (!identities || identities.length === 0) {
    identities = ['api-key', 'ip'];
    assume('identities', 'Identity dimensions unknown: assumed an API key on authenticated calls and the trusted client IP for anonymous ones.');
  }
  if (!identities.includes('ip')) identities.push('ip');

  // Endpoints.
  let endpoints: ResolvedEndpoint[];
  if (!answers.endpoints || answers.endpoints.length === 0) {
    endpoints = [{ name: 'all-endpoints', method: 'ANY', route: '/*', class: 'read', anonymous: false, cost: 1 }];
    assume('endpoints', 'Endpoints unknown: every route is treated as one class of ordinary authenticated calls with cost 1.');
  } else {
    endpoints = answers.endpoints.map((e: Endpoint) => ({
      name: e.name,
      method: e.method,
      route: e.route,
      class: e.class,
      ...(e.authKind ? { authKind: e.authKind } : e.class === 'auth' ? { authKind: 'login' as const } : {}),
      anonymous: e.class === 'auth' ? true : e.anonymous,
      cost: e.cost ?? DEFAULT_CLASS_COST[e.class],
    }));
    for (const e of answers.endpoints) {
      if (e.class === 'auth' && !e.authKind) {
        assume(`endpoints.${e.name}.authKind`, `Endpoint "${e.name}" is an auth endpoint of unstated kind: treated as a login.`);
      }
    }
    const defaulted = answers.endpoints.filter((e) => e.cost === undefined && DEFAULT_CLASS_COST[e.class] > 1);
    if (defaulted.length > 0) {
      assume(
        'endpoints.cost',
        `Costs not stated for ${defaulted.length} endpoint(s): weighted by class (write 2, search 5, expensive 10, export 20 tokens).`,
      );
    }
  }

  // Item 4: traffic.
  const t = answers.traffic ?? {};
  const burstiness = t.burstiness ?? 'moderate';
  if (!t.burstiness) assume('traffic.burstiness', 'Burstiness unknown: assumed moderate (buckets hold 5 seconds of sustained rate).');
  let typicalRps = t.typicalRps;
  let peakRps = t.peakRps;
  if (typicalRps === undefined && peakRps === undefined) {
    typicalRps = 50;
    peakRps = 150;
    assume('traffic.peakRps', 'Traffic unknown: assumed 50 requests/s typical and 150 requests/s peak. Replace with measured numbers before enforcing.');
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
  const distinctClients = t.distinctClients ?? 1000;
  if (t.distinctClients === undefined) assume('traffic.distinctClients', 'Number of distinct clients (API keys) unknown: assumed 1,000.');
  const usesTenant = identities.includes('tenant');
  const distinctTenants = t.distinctTenants ?? (usesTenant ? Math.max(1, Math.ceil(distinctClients / 5)) : 0);
  if (t.distinctTenants === undefined && usesTenant) {
    assume('traffic.distinctTenants', `Number of tenants unknown: assumed one per 5 clients (${formatNumber(distinctTenants)}).`);
  }
  const distinctUsers = t.distinctUsers ?? distinctClients * 10;
  if (t.distinctUsers === undefined && (identities.includes('user') || endpoints.some((e) => e.class === 'auth'))) {
    assume('traffic.distinctUsers', `Number of user accounts unknown: assumed 10 per client (${formatNumber(distinctUsers)}).`);
  }

  // Item 5: plans.
  const burstSeconds = BURST_SECONDS[burstiness];
  const quotasAnswers = answers.quotas ?? {};
  const defaultExhaustion = quotasAnswers.exhaustion ?? 'hard';
  const plans: ResolvedPlan[] = (answers.plans ?? []).map((p) => {
    const rps = ratePerSecond(p.rate);
    return {
      name: p.name,
      ratePerSecond: rps,
      rate: { requests: p.rate.requests, periodSeconds: PERIOD_SECONDS[p.rate.per] },
      rateText: rateText(p.rate),
      burst: p.burst ?? Math.max(1, Math.ceil(rps * burstSeconds)),
      ...(p.quota !== undefined ? { quota: p.quota } : {}),
      exhaustion: p.exhaustion ?? defaultExhaustion,
    };
  });
  if (!answers.plans || answers.plans.length === 0) {
    assume('plans', 'No plan tiers or promised limits: per-client limits are derived from capacity, not from a contract.');
  } else {
    const noBurst = (answers.plans ?? []).filter((p) => p.burst === undefined);
    if (noBurst.length > 0) {
      assume('plans.burst', `Burst not stated for ${noBurst.map((p) => p.name).join(', ')}: set to ${burstSeconds} seconds of the plan rate.`);
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
  const billingSource = quotasAnswers.billingSource ?? 'metering-system';

  // Item 6: failure posture.
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
  }

  // Item 7: outbound.
  const outbound: ResolvedProvider[] = (answers.outbound ?? []).map((o) => {
    const limitPerSecond = ratePerSecond(o.limit);
    const safetyFraction = o.safetyFraction ?? 0.9;
    const bucketPerSecond = limitPerSecond * safetyFraction;
    return {
      name: o.name,
      limitPerSecond,
      limit: { requests: o.limit.requests, periodSeconds: PERIOD_SECONDS[o.limit.per] },
      limitText: rateText(o.limit),
      safetyFraction,
      bucketPerSecond,
      burst: o.burst ?? Math.max(1, Math.floor(bucketPerSecond * Math.min(PERIOD_SECONDS[o.limit.per], 1))),
      bucket: o.bucket ?? 'shared',
    };
  });
  if ((answers.outbound ?? []).some((o) => o.safetyFraction === undefined)) {
    assume('outbound.safetyFraction', 'Outbound safety margin not stated: buckets run at 90% of each provider limit.');
  }
  if (answers.outbound === undefined) assume('outbound', 'No third-party APIs with their own limits were named: no outbound limiter.');

  // Headers and docs.
  const convention = answers.headers?.convention ?? 'ietf-structured';
  if (!answers.headers?.convention) {
    assume('headers.convention', 'Header convention not chosen: the current IETF draft fields RateLimit and RateLimit-Policy.');
  }
  const docsUrl = answers.headers?.docsUrl ?? DEFAULT_DOCS_URL;
  if (!answers.headers?.docsUrl) assume('headers.docsUrl', `Documentation link for 429 bodies not given: ${DEFAULT_DOCS_URL} stands in; replace it.`);

  const scope: Scope = {
    projectName: answers.project?.name ?? 'The API',
    ...(answers.project?.description ? { description: answers.project.description } : {}),
    goals: goals as Scope['goals'],
    language,
    framework,
    topology,
    instances,
    gateway,
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

/** Metrics, alert thresholds and store configuration. */
import { formatNumber } from '../format.js';
import type { AlertSpec, MatrixRule, MetricSpec, Monitoring, Scope } from './model.js';

export const METRICS: MetricSpec[] = [
  { name: 'ratelimit_decisions_total', type: 'counter', labels: ['rule', 'result'], help: 'Every limiter decision, by rule and result (allowed, throttled, shadow_throttled).' },
  { name: 'ratelimit_throttled_total', type: 'counter', labels: ['rule', 'mode'], help: 'Requests rejected (mode=enforce) or that would have been (mode=shadow).' },
  { name: 'ratelimit_near_limit_ratio', type: 'gauge', labels: ['rule'], help: 'Share of active identities above 80% of their limit: the capacity-planning signal.' },
  { name: 'ratelimit_store_latency_ms', type: 'histogram', labels: ['script'], help: 'Round trip of one limiter call to the store, in milliseconds.' },
  { name: 'ratelimit_store_failures_total', type: 'counter', labels: ['rule', 'reason'], help: 'Limiter calls that failed (timeout, connection, script error).' },
  { name: 'ratelimit_fail_open_events_total', type: 'counter', labels: ['rule'], help: 'Requests admitted without a check because the store failed and the rule fails open.' },
  { name: 'ratelimit_key_cardinality', type: 'gauge', labels: ['rule'], help: 'Live limiter keys per rule (sampled with SCAN on a replica or from the script count).' },
];

const OUTBOUND_METRICS: MetricSpec[] = [
  { name: 'ratelimit_outbound_wait_ms', type: 'histogram', labels: ['provider'], help: 'Time outbound calls waited for a slot in the shared bucket.' },
  { name: 'ratelimit_outbound_provider_429_total', type: 'counter', labels: ['provider'], help: '429 responses received from a provider despite the bucket.' },
  { name: 'ratelimit_outbound_circuit_open', type: 'gauge', labels: ['provider'], help: '1 while the circuit for a provider is open.' },
];

const QUOTA_METRICS: MetricSpec[] = [
  { name: 'ratelimit_quota_exhausted_total', type: 'counter', labels: ['rule', 'plan'], help: 'Calls refused or flagged because a plan quota was used up.' },
];

type SharedCeiling = NonNullable<Monitoring['store']['sharedCeiling']>;

/**
 * Live keys and bytes of every rule in the store, at most. A rule bounded by population
 * counts its own bound. Rules bounded by the ceiling (ceiling x TTL each) share it: a request
 * adds at most one key to each rule it matches, so their keys together are at most the
 * ceiling's traffic times the summed TTLs of the rules on one endpoint, for the worst endpoint
 * (all traffic there). Keys and bytes take their worst endpoint each.
 */
export function storeBound(rules: readonly MatrixRule[]): { keys: number; bytes: number; shared?: SharedCeiling } {
  const inStore = rules.filter((r) => r.layer !== 'edge' && r.cardinality?.bound);
  const keysOf = (r: MatrixRule): number => r.cardinality?.bound ?? 0;
  const bytesOf = (r: MatrixRule): number => keysOf(r) * (r.bytesPerKey ?? 0);
  const sum = (rs: readonly MatrixRule[], f: (r: MatrixRule) => number): number => rs.reduce((n, r) => n + f(r), 0);
  const byTraffic = inStore.filter((r) => r.cardinality?.byTraffic);
  const byPopulation = inStore.filter((r) => !r.cardinality?.byTraffic);
  const rowKeys = sum(byTraffic, keysOf);
  let shared: SharedCeiling | undefined;
  if (byTraffic.length > 1) {
    // A rule naming no endpoint applies to all of them.
    const endpoints = [...new Set(byTraffic.flatMap((r) => r.endpoints ?? []))].sort();
    const perEndpoint = endpoints.map((endpoint) => {
      const on = byTraffic.filter((r) => !r.endpoints?.length || r.endpoints.includes(endpoint));
      return { endpoint, keys: sum(on, keysOf), bytes: sum(on, bytesOf) };
    });
    const worst = perEndpoint.reduce<(typeof perEndpoint)[number] | undefined>((a, b) => (a && a.keys >= b.keys ? a : b), undefined);
    if (worst && worst.keys < rowKeys) {
      const bytes = Math.max(...perEndpoint.map((p) => p.bytes));
      shared = { rules: byTraffic.map((r) => r.id), rowKeys, keys: worst.keys, bytes, endpoint: worst.endpoint };
    }
  }
  return {
    keys: sum(byPopulation, keysOf) + (shared ? shared.keys : rowKeys),
    bytes: sum(byPopulation, bytesOf) + (shared ? shared.bytes : sum(byTraffic, bytesOf)),
    ...(shared ? { shared } : {}),
  };
}

export function buildMonitoring(scope: Scope, rules: MatrixRule[]): Monitoring {
  const rare = rules.filter((r) => r.tier === 'ceiling' || r.tier === 'outbound').map((r) => r.id);
  const security = rules.filter((r) => r.tier === 'security').map((r) => r.id);
  const { keys: totalBound, bytes: estimatedBytes, shared } = storeBound(rules);
  const alerts: AlertSpec[] = [
    {
      name: 'RateLimitThrottleSpike',
      metric: 'ratelimit_throttled_total',
      condition: 'throttling on a rule triples against the same hour yesterday and exceeds 1 req/s',
      expr: 'sum by (rule) (rate(ratelimit_throttled_total{mode="enforce"}[5m])) > 3 * sum by (rule) (rate(ratelimit_throttled_total{mode="enforce"}[5m] offset 1d)) and sum by (rule) (rate(ratelimit_throttled_total{mode="enforce"}[5m])) > 1',
      for: '10m',
      severity: security.length > 0 ? 'page' : 'ticket',
      why: 'A sudden spike is an attack or a broken client release; either needs a person.',
    },
    ...(rare.length > 0
      ? [
          {
            name: 'RateLimitRareRuleFiring',
            metric: 'ratelimit_throttled_total',
            condition: `a rule that should almost never fire (${rare.join(', ')}) throttles continuously`,
            expr: `sum by (rule) (rate(ratelimit_throttled_total{rule=~"${rare.join('|')}"}[15m])) > 0`,
            for: '30m',
            severity: 'ticket' as const,
            why: 'The ceiling or an outbound bucket firing for half an hour means capacity or the limit is wrong.',
          },
        ]
      : []),
    {
      name: 'RateLimitNearLimit',
      metric: 'ratelimit_near_limit_ratio',
      condition: 'more than 20% of active identities sit above 80% of their limit',
      expr: 'max by (rule) (ratelimit_near_limit_ratio) > 0.2',
      for: '1h',
      severity: 'ticket',
      why: 'Raise limits or capacity before customers start hitting them.',
    },
    {
      name: 'RateLimitStoreSlow',
      metric: 'ratelimit_store_latency_ms',
      condition: 'p99 limiter round trip above 5 ms',
      expr: 'histogram_quantile(0.99, sum by (le) (rate(ratelimit_store_latency_ms_bucket[5m]))) > 5',
      for: '10m',
      severity: 'ticket',
      why: 'The limiter adds this latency to every request; the budget is 1-5 ms at p99.',
    },
    {
      name: 'RateLimitStoreFailures',
      metric: 'ratelimit_store_failures_total',
      condition: 'any limiter store failure sustained for 5 minutes',
      expr: 'sum(rate(ratelimit_store_failures_total[5m])) > 0',
      for: '5m',
      severity: 'page',
      why: 'Fail-closed rules are refusing traffic and fail-open rules are unprotected.',
    },
    {
      name: 'RateLimitFailOpen',
      metric: 'ratelimit_fail_open_events_total',
      condition: 'any fail-open event',
      expr: 'sum by (rule) (increase(ratelimit_fail_open_events_total[5m])) > 0',
      for: '1m',
      severity: 'page',
      why: 'While a rule fails open the backend has no protection from it.',
    },
    {
      name: 'RateLimitKeyCardinality',
      metric: 'ratelimit_key_cardinality',
      condition: `live keys above 80% of the stated bound (${formatNumber(totalBound)} in all)`,
      expr: `sum(ratelimit_key_cardinality) > ${Math.ceil(totalBound * 0.8)}`,
      for: '30m',
      severity: 'ticket',
      why: 'Unbounded key growth is a memory leak in the store; the bound in the matrix is being exceeded.',
    },
  ];
  const hasQuota = rules.some((r) => r.tier === 'quota');
  const hasOutbound = rules.some((r) => r.tier === 'outbound');
  if (hasOutbound) {
    alerts.push({
      name: 'RateLimitProviderThrottling',
      metric: 'ratelimit_outbound_provider_429_total',
      condition: 'a provider returns 429 despite the shared bucket',
      expr: 'sum by (provider) (increase(ratelimit_outbound_provider_429_total[10m])) > 0',
      for: '1m',
      severity: 'ticket',
      why: 'The bucket and the provider disagree about the limit; repeated 429s risk a ban.',
    });
  }
  return {
    metrics: [...METRICS, ...(hasQuota ? QUOTA_METRICS : []), ...(hasOutbound ? OUTBOUND_METRICS : [])],
    alerts,
    store: {
      dedicated: true,
      maxmemoryPolicy: 'noeviction',
      estimatedKeys: totalBound,
      estimatedBytes,
      ...(shared ? { sharedCeiling: shared } : {}),
      recommendation: `Run limiter state on a dedicated ${({ redis: 'Redis', 'redis-cluster': 'Redis Cluster', valkey: 'Valkey', none: 'Redis' } as Record<string, string>)[scope.store] ?? scope.store} (or at least a dedicated logical database) with maxmemory-policy noeviction. Under an LRU policy, memory pressure silently evicts limiter keys, which resets limits: a fail-open no metric sees. The TTLs on every key bound memory; eviction must never be the bound. Persistence is optional: losing counters on restart only resets limits.`,
    },
    latencyBudgetMs: { p99: 5 },
  };
}

/** Metrics, alert thresholds and store configuration. */
import { formatNumber, joinAnd, rpsText } from '../format.js';
import { ACCESS_OUTCOMES } from '../runtime/middleware/metrics.js';
import {
  ENVOY_APP_CLUSTER,
  ENVOY_LOCAL_STAT_PREFIX,
  edgeCounter,
  envoyCounter,
  envoyFailureModeDeny,
  wafMetricName,
} from './gateway-behaviour.js';
import { BYTES_PER_KEY, KEY_VALUE_CHARS, keyNameExtraBytes, maxKeyChars } from './matrix.js';
import { algorithmLabel } from './algorithms.js';
import { identityLabel, slug, storeConfFile, storeServerName } from './naming.js';
import type { AccessDesign, AlertSpec, MatrixRule, MetricSource, MetricSpec, Monitoring, QuotaDesign, Scope } from './model.js';
import { softPlanQuota } from './quotas.js';

/** Share of a rule's capacity below which an admitted decision counts as near the limit. */
export const NEAR_LIMIT_FRACTION = 0.2;

/** The Prometheus job that scrapes redis_exporter for the limiter's store (the store alerts select it). */
export const REDIS_EXPORTER_JOB = 'ratelimit-redis';

const MW: MetricSource[] = ['middleware'];

export const METRICS: MetricSpec[] = [
  {
    name: 'ratelimit_decisions_total',
    type: 'counter',
    labels: ['rule', 'result'],
    help: 'Every limiter decision, by rule and result (allowed, throttled, shadow_throttled).',
    emittedBy: MW,
  },
  {
    name: 'ratelimit_throttled_total',
    type: 'counter',
    labels: ['rule', 'mode'],
    help: 'Requests rejected (mode=enforce) or that would have been (mode=shadow).',
    emittedBy: MW,
  },
  {
    name: 'ratelimit_near_limit_total',
    type: 'counter',
    labels: ['rule'],
    help: `Admitted decisions that left the caller under ${NEAR_LIMIT_FRACTION * 100}% of the rule's capacity (its burst, or the window's limit). Over ratelimit_decisions_total{result="allowed"} it is the share of admitted traffic near its limit: the capacity-planning signal. (Both auth rows of a flow are checked in one call that reports the smaller remaining count, so for them it can over-count.)`,
    emittedBy: MW,
  },
];

/**
 * The middleware's metrics of its calls to a shared store: in the table only when a rule makes
 * such calls. Without one the runtime still registers them, and they stay at 0.
 */
const STORE_CALL_METRICS: MetricSpec[] = [
  {
    name: 'ratelimit_store_latency_ms',
    type: 'histogram',
    labels: ['script'],
    help: 'Round trip of one limiter call to the store, in milliseconds.',
    emittedBy: MW,
  },
  {
    name: 'ratelimit_store_failures_total',
    type: 'counter',
    labels: ['rule', 'reason'],
    help: 'Limiter calls that failed (timeout, connection, script error).',
    emittedBy: MW,
  },
  {
    name: 'ratelimit_fail_open_events_total',
    type: 'counter',
    labels: ['rule'],
    help: 'Requests admitted without a check because the store failed and the rule fails open.',
    emittedBy: MW,
  },
];

/** The store's own gauges, from oliver006/redis_exporter (job REDIS_EXPORTER_JOB). */
const STORE_METRICS: MetricSpec[] = [
  {
    name: 'redis_db_keys',
    type: 'gauge',
    labels: ['db'],
    help: 'Keys in each database of the store, from oliver006/redis_exporter: the key-cardinality signal (the store is dedicated, so every key in db0 is a limiter key; summed over the masters of a cluster).',
    emittedBy: ['redis-exporter'],
  },
  {
    name: 'redis_memory_used_bytes',
    type: 'gauge',
    labels: [],
    help: 'Memory the store uses (INFO used_memory), from redis_exporter.',
    emittedBy: ['redis-exporter'],
  },
  {
    name: 'redis_memory_max_bytes',
    type: 'gauge',
    labels: [],
    help: "The store's maxmemory (0: none set), from redis_exporter.",
    emittedBy: ['redis-exporter'],
  },
  {
    name: 'redis_instance_info',
    type: 'gauge',
    labels: ['role', 'maxmemory_policy'],
    help: 'Always 1; its labels tell masters from replicas and show the eviction policy, from redis_exporter.',
    emittedBy: ['redis-exporter'],
  },
];

const OUTBOUND_METRICS: MetricSpec[] = [
  {
    name: 'ratelimit_outbound_wait_ms',
    type: 'histogram',
    labels: ['provider'],
    help: "Time outbound calls waited for a slot in their provider's bucket.",
    emittedBy: ['outbound-client'],
  },
  {
    name: 'ratelimit_outbound_provider_429_total',
    type: 'counter',
    labels: ['provider'],
    help: '429 responses received from a provider despite the bucket.',
    emittedBy: ['outbound-client'],
  },
  {
    name: 'ratelimit_outbound_circuit_open',
    type: 'gauge',
    labels: ['provider'],
    help: '1 while the circuit for a provider is open.',
    emittedBy: ['outbound-client'],
  },
];

const QUOTA_METRICS: MetricSpec[] = [
  {
    name: 'ratelimit_quota_exhausted_total',
    type: 'counter',
    labels: ['rule', 'plan'],
    help: 'Calls refused or flagged because a plan quota was used up.',
    emittedBy: MW,
  },
];

/** What each access list does to the requests it counts, by the answers part that makes it (the label value is the runtime's). */
const ACCESS_OUTCOME_TEXT = {
  deny: 'refused by the deny list',
  penalty: 'refused while their caller is in the penalty box',
  allow: 'let skip rules by the allowlist',
} as const satisfies Record<keyof typeof ACCESS_OUTCOMES, string>;

/** The middleware's counter of what the access lists did, with the outcomes this design has (null: no list). */
function accessMetric(access: AccessDesign | undefined): MetricSpec | null {
  const parts = (Object.keys(ACCESS_OUTCOME_TEXT) as (keyof typeof ACCESS_OUTCOMES)[]).filter((part) => access?.[part] !== undefined);
  if (parts.length === 0) return null;
  return {
    name: 'ratelimit_access_total',
    type: 'counter',
    labels: ['outcome'],
    help: `Requests the access lists decided before any rule: ${parts.map((part) => `${ACCESS_OUTCOME_TEXT[part]} (outcome=${ACCESS_OUTCOMES[part]})`).join(', ')}. The outcome is the only label; each series exists at 0 from the start.`,
    emittedBy: MW,
  };
}

/**
 * The penalty box's keys in the store: a refusal counter per caller refused within the window,
 * and a box per caller shut in it. Each counter needs a refused request within its lifetime;
 * each box `refusals` of them, all within the window before it shut plus the time it stays
 * shut. A refusal counts toward one key only (the counter it creates, or the box it helps shut,
 * which deletes the counter), so together they are at most ceiling x (window + block /
 * refusals), less than the two rows added up (every request, hostile or not, is under the
 * ceiling).
 */
/** How the memory bound counts the penalty box's keys, for the line that states them. */
const SHARES =
  " They share the ceiling's traffic with the rules' keys (a request the box's rules refuse writes nothing in the rule that refused it), so the estimate counts them together with those, not on top.";

function penaltyKeys(
  penalty: NonNullable<AccessDesign['penalty']>,
  ceilingRps: number,
): { store: NonNullable<Monitoring['store']['penalty']>; traffic: PenaltyTraffic } {
  const counters = penalty.refusals > 1;
  const strikes = counters ? Math.ceil(ceilingRps * penalty.withinSeconds) : 0;
  const boxWindow = penalty.blockSeconds + (counters ? penalty.withinSeconds : 0);
  const boxes = Math.ceil((ceilingRps * boxWindow) / penalty.refusals);
  // the caller in the hash tag is a label and a value ("{pb:ak:<key id>}"); the pattern names only the value
  const row = (key: string, count: number) => {
    const keyChars = maxKeyChars({ key: key.replace('<identity>', 'xx:<identity>'), id: 'penalty', tier: 'security' });
    return { key, keys: count, keyChars, bytesPerKey: BYTES_PER_KEY['fixed-window'] + keyNameExtraBytes(keyChars) };
  };
  const strikeRow = row(penalty.keys.strikes, strikes);
  const boxRow = row(penalty.keys.box, boxes);
  const rows = counters ? [strikeRow, boxRow] : [boxRow];
  const counter: Trace[] = counters ? [{ keys: 1, bytes: strikeRow.bytesPerKey, width: ceilingRps * penalty.withinSeconds }] : [];
  const box: Trace = { keys: 1 / penalty.refusals, bytes: boxRow.bytesPerKey, width: ceilingRps * boxWindow };
  const alone = [counter, [box]];
  const keys = envelope(alone, (t) => t.keys);
  const bytes = envelope(alone, (t) => t.keys * t.bytes);
  const w = (s: number) => formatNumber(s);
  const text = counters
    ? `Penalty box: at most ${formatNumber(strikes)} refusal counters (the ${rpsText(ceilingRps)} the ceiling admits x their ${w(penalty.withinSeconds)} s lifetime: each needs a refusal within it) and ${formatNumber(boxes)} boxes (each needs ${formatNumber(penalty.refusals)} refusals, all within the ${w(penalty.withinSeconds)} s before it shut and the ${w(penalty.blockSeconds)} s it stays shut: ceiling x ${w(boxWindow)} s / ${formatNumber(penalty.refusals)}), but ${formatNumber(keys)} keys together: a refusal counts toward one key only (the counter it creates, or the box it helps shut, which deletes the counter), so ceiling x (${w(penalty.withinSeconds)} s + ${w(penalty.blockSeconds)} s / ${formatNumber(penalty.refusals)}).${SHARES}`
    : `Penalty box: at most ${formatNumber(boxes)} boxes (the ${rpsText(ceilingRps)} the ceiling admits x their ${w(penalty.blockSeconds)} s lifetime: each is shut by a refusal within it).${SHARES}`;
  return {
    store: { keys, bytes, rows, text },
    traffic: {
      ruleIds: penalty.ruleIds,
      refusals: penalty.refusals,
      withinSeconds: penalty.withinSeconds,
      blockSeconds: penalty.blockSeconds,
      ceilingRps,
      strikeBytes: strikeRow.bytesPerKey,
      boxBytes: boxRow.bytesPerKey,
      keys,
      bytes,
    },
  };
}

const MIB = 1024 * 1024;
/** maxmemory = the bound x this, plus MAXMEMORY_BASE for Redis itself. */
const MAXMEMORY_HEADROOM = 1.5;
const MAXMEMORY_BASE = 64 * MIB;

/** The store's maxmemory: the memory bound plus 50% headroom plus 64 MiB, in whole MiB. */
export function maxmemoryFor(boundBytes: number): number {
  return Math.ceil((boundBytes * MAXMEMORY_HEADROOM + MAXMEMORY_BASE) / MIB) * MIB;
}

const mib = (bytes: number): string => `${formatNumber(Math.ceil(bytes / MIB))} MiB`;

const STORE_NAME: Record<Scope['store'], string> = { redis: 'Redis', 'redis-cluster': 'Redis Cluster', valkey: 'Valkey', none: 'Redis' };

type SharedCeiling = NonNullable<Monitoring['store']['sharedCeiling']>;

/**
 * The penalty box as the memory bound sees it: the rules it follows, and the keys a refusal by
 * one of them leaves (penaltyKeys' rows, with their lifetimes).
 */
export interface PenaltyTraffic {
  ruleIds: readonly string[];
  refusals: number;
  withinSeconds: number;
  blockSeconds: number;
  ceilingRps: number;
  strikeBytes: number;
  boxBytes: number;
  /** The rows as the table shows them (each counted alone, all traffic refused). */
  keys: number;
  bytes: number;
}

/** A key a request can leave behind: `keys` of them (a share, for a box) of `bytes` B each, live while the ceiling admits `width` more requests (ceiling x lifetime). */
interface Trace {
  keys: number;
  bytes: number;
  width: number;
}

/**
 * The most a stream of requests at the ceiling's rate leaves live at once, when each request
 * leaves the traces of one of `outcomes` (its choice): a request `w` requests old still holds
 * the traces of width above w, so the bound is the integral over w of the largest sum any
 * outcome holds at w (each request may take the outcome heaviest at its age).
 */
function envelope(outcomes: readonly (readonly Trace[])[], of: (t: Trace) => number): number {
  const cuts = [...new Set(outcomes.flat().map((t) => t.width))].sort((a, b) => a - b);
  let total = 0;
  let prev = 0;
  for (const cut of cuts) {
    const height = Math.max(0, ...outcomes.map((o) => o.reduce((n, t) => n + (t.width >= cut ? of(t) : 0), 0)));
    total += (cut - prev) * height;
    prev = cut;
  }
  return Math.ceil(total);
}

/**
 * Live keys and bytes of every rule in the store, at most. A rule bounded by population
 * counts its own bound. Rules bounded by the ceiling (ceiling x TTL each) share it: a request
 * adds at most one key to each rule it matches, so their keys together are at most what the
 * ceiling's traffic leaves when every request goes where it leaves the most (the integral over
 * a request's age of the largest sum of keys still live at that age, over the endpoints).
 * The penalty box's keys share the same traffic: a request refused by a rule the box follows
 * writes nothing in that rule (no script writes on a refusal) and leaves one penalty key at most
 * (penalty.lua: the refusal counter it creates, or, as one of the `refusals` refusals that shut a
 * box, a share of that box; the counter is deleted when the box shuts). Keys and bytes take
 * their worst mix each.
 */
export function storeBound(
  rules: readonly MatrixRule[],
  penalty?: PenaltyTraffic,
  /** No endpoint can take all the admitted traffic (API Gateway's throttle holds each method to the ceiling's own rate): the rows add up. */
  endpointsCapped = false,
): {
  keys: number;
  bytes: number;
  shared?: SharedCeiling;
  hashes?: IdentityHashRow[];
  sameKey?: { ruleId: string; keptWith: string }[];
} {
  const keysOf = (r: MatrixRule): number => r.cardinality?.bound ?? 0;
  const bytesOf = (r: MatrixRule): number => keysOf(r) * (r.bytesPerKey ?? 0);
  // rules on one key pattern keep one key per identity between them (the two halves of a rule
  // split by fail mode, the plans' quotas on one key: an identity is on one plan at a time):
  // counted once, as the largest of their rows
  const sameKey: { ruleId: string; keptWith: string }[] = [];
  const byKey = new Map<string, MatrixRule>();
  const inStore: MatrixRule[] = [];
  for (const r of rules) {
    if (r.layer === 'edge' || !r.cardinality?.bound) continue;
    if (r.field !== undefined || !r.key) {
      inStore.push(r);
      continue;
    }
    const group = `${r.layer} ${r.primitive} ${r.key}`;
    const first = byKey.get(group);
    if (!first) {
      byKey.set(group, r);
      inStore.push(r);
    } else if (bytesOf(r) > bytesOf(first)) {
      inStore[inStore.indexOf(first)] = r;
      byKey.set(group, r);
      sameKey.push({ ruleId: first.id, keptWith: r.id });
    } else sameKey.push({ ruleId: r.id, keptWith: first.id });
  }
  const sum = (rs: readonly MatrixRule[], f: (r: MatrixRule) => number): number => rs.reduce((n, r) => n + f(r), 0);
  // the rules kept in one hash per identity hold one key per identity between them: the hash,
  // counted once, for the most identities any of them bounds, at the most it can hold
  // (every rule of a hash names its fields, those without a bound too: constraint 6 reports them)
  const inHash = rules.filter((r) => r.layer !== 'edge' && r.field !== undefined);
  const hashes = [...new Set(inHash.map((r) => r.key ?? ''))].map((key) =>
    identityHashRow(
      key,
      inHash.filter((r) => (r.key ?? '') === key),
    ),
  );
  const own = inStore.filter((r) => r.field === undefined);
  const byTraffic = own.filter((r) => r.cardinality?.byTraffic);
  const byPopulation = own.filter((r) => !r.cardinality?.byTraffic);
  const rowKeys = sum(byTraffic, keysOf) + (penalty?.keys ?? 0);
  const rowBytes = sum(byTraffic, bytesOf) + (penalty?.bytes ?? 0);
  let shared: SharedCeiling | undefined;
  // (where no endpoint can take all the admitted traffic, each row is bounded by what its own
  // endpoints admit, and the rows add up: the envelope would send all of it to one endpoint)
  if (!endpointsCapped && byTraffic.length + (penalty ? 1 : 0) > 1) {
    const trace = (r: MatrixRule): Trace => ({ keys: 1, bytes: r.bytesPerKey ?? 0, width: keysOf(r) });
    // A rule naming no endpoint applies to all of them.
    const covers = (r: MatrixRule, endpoint: string | null): boolean =>
      !r.endpoints?.length || endpoint === null || r.endpoints.includes(endpoint);
    const followed = penalty ? rules.filter((r) => penalty.ruleIds.includes(r.id)) : [];
    const named = [...new Set([...byTraffic, ...followed].flatMap((r) => r.endpoints ?? []))].sort();
    const endpoints: (string | null)[] = named.length > 0 ? named : [null];
    const perEndpoint = endpoints.map((endpoint) => {
      const on = byTraffic.filter((r) => covers(r, endpoint));
      return { endpoint, on, keys: sum(on, keysOf), bytes: sum(on, bytesOf) };
    });
    const outcomes: Trace[][] = perEndpoint.map((p) => p.on.map(trace));
    if (penalty) {
      const R = penalty.ceilingRps;
      const counter: Trace[] = penalty.refusals > 1 ? [{ keys: 1, bytes: penalty.strikeBytes, width: R * penalty.withinSeconds }] : [];
      const box: Trace = {
        keys: 1 / penalty.refusals,
        bytes: penalty.boxBytes,
        width: R * (penalty.blockSeconds + (penalty.refusals > 1 ? penalty.withinSeconds : 0)),
      };
      for (const p of perEndpoint) {
        for (const refusing of followed.filter((r) => covers(r, p.endpoint))) {
          const rest = p.on.filter((r) => r.id !== refusing.id).map(trace);
          if (counter.length > 0) outcomes.push([...rest, ...counter]);
          outcomes.push([...rest, box]);
        }
      }
    }
    const keys = envelope(outcomes, (t) => t.keys);
    const bytes = envelope(outcomes, (t) => t.keys * t.bytes);
    if (keys < rowKeys || bytes < rowBytes) {
      const worst = perEndpoint.reduce<(typeof perEndpoint)[number] | undefined>((a, b) => (a && a.keys >= b.keys ? a : b), undefined);
      // all traffic on one endpoint, admitted, is the worst case when nothing else reaches it
      const one = worst && worst.endpoint !== null && worst.keys === keys && worst.bytes === bytes ? worst.endpoint : undefined;
      shared = {
        rules: byTraffic.map((r) => r.id),
        rowKeys,
        keys: Math.min(keys, rowKeys),
        bytes: Math.min(bytes, rowBytes),
        ...(one ? { endpoint: one } : {}),
        ...(penalty ? { penalty: true } : {}),
      };
    }
  }
  return {
    keys: sum(byPopulation, keysOf) + hashes.reduce((n, h) => n + h.keys, 0) + (shared ? shared.keys : rowKeys),
    bytes: sum(byPopulation, bytesOf) + hashes.reduce((n, h) => n + h.keys * h.bytesPerKey, 0) + (shared ? shared.bytes : rowBytes),
    ...(shared ? { shared } : {}),
    ...(hashes.length > 0 ? { hashes } : {}),
    ...(sameKey.length > 0 ? { sameKey } : {}),
  };
}

type IdentityHashRow = NonNullable<Monitoring['store']['hashes']>[number];

/** One identity's hash in the memory estimate: its rules' fields, one hash per identity at the largest it can be. */
function identityHashRow(key: string, members: readonly MatrixRule[]): IdentityHashRow {
  const keys = Math.max(...members.map((r) => r.cardinality?.bound ?? 0));
  const bytesPerKey = Math.max(...members.map((r) => r.bytesPerKey ?? 0));
  const keyChars = Math.max(...members.map((r) => r.keyChars ?? 0));
  // (a rolling quota keeps a field per UTC day of its window)
  const fields = [
    ...new Set(
      members.map((r) =>
        algorithmLabel(r) !== undefined
          ? `${r.field ?? ''} (the window's total), ${r.field ?? ''}:<epoch-day> (one per day of its window)`
          : (r.field ?? ''),
      ),
    ),
  ];
  const identity = members[0]?.identity;
  const who = identity === 'api-key' ? 'API key' : (identity ?? 'identity');
  const article = /^[AEIOUaeio]/.test(who) ? 'An' : 'A';
  const planned = members.some((r) => r.plan !== undefined);
  return {
    key,
    ruleIds: members.map((r) => r.id),
    keys,
    keyChars,
    bytesPerKey,
    text: `one per ${who}, at most ${formatNumber(keys)}, each holding the fields of ${joinAnd(members.map((r) => r.id))} (${joinAnd(fields)}): ${formatNumber(bytesPerKey)} B with every field.${planned ? ` ${article} ${who} is on one plan at a time and keeps another plan's field only from before a plan change, until the hash expires, so the` : ' The'} hash is counted once per ${who}, not once per rule.`,
  };
}

/** A regex alternation of rule ids for a PromQL label matcher (ids are slugs; dots and the like escaped anyway). */
function idsRegex(ids: readonly string[]): string {
  return ids.map((id) => id.replace(/[\\.^$|?*+()[\]{}]/g, (c) => `\\\\${c}`).replace(/"/g, '\\"')).join('|');
}

/**
 * Where AWS counts the refusals of the edge rules: API Gateway's throttles in its 4XXError metric,
 * AWS WAF's rate-based rules in BlockedRequests under each rule's metric name (the MetricName the
 * AWS file gives it, rl_<id>).
 */
function awsEdgeSignals(rules: readonly MatrixRule[]): string {
  const edge = rules.filter((r) => r.layer === 'edge');
  const waf = edge.filter((r) => r.identity === 'ip');
  const throttles = edge.filter((r) => r.identity !== 'ip');
  const parts = [
    ...(throttles.length > 0
      ? [
          `AWS API Gateway counts the refusals of its throttles (${throttles.map((r) => r.id).join(', ')}) in CloudWatch's AWS/ApiGateway 4XXError metric, with every other 4xx`,
        ]
      : []),
    ...(waf.length > 0
      ? [
          `AWS WAF counts the blocks of its rate-based rules (${waf.map((r) => r.id).join(', ')}) in AWS/WAFV2 BlockedRequests, one series per rule by its metric name (${waf.map((r) => wafMetricName(r.id)).join(', ')})`,
        ]
      : []),
  ];
  return `${parts.join('; ')}; none of it reaches Prometheus`;
}

/** Where an edge rule's refusals are counted, and what the user wires for them. */
function edgeCounting(scope: Scope, rules: readonly MatrixRule[], middleware: boolean): Monitoring['edge'] | undefined {
  const edgeIds = rules.filter((r) => r.layer === 'edge').map((r) => r.id);
  if (edgeIds.length === 0) return undefined;
  const list = edgeIds.join(', ');
  if (scope.gateway === 'nginx') {
    return {
      ruleIds: [...edgeIds],
      countedBy: 'nginx-log',
      text: `nginx exports no limit_req counter (nginx-prometheus-exporter reads stub_status, which has none), but it logs every refusal to its error log with the zone's name ("limiting requests[, dry run], excess: ... by zone ..."). The generated monitoring/nginx-ratelimit.mtail turns those lines into ratelimit_throttled_total{rule, mode} for the edge rules (${list}): run mtail on each nginx node with --progs pointing at it and --logs at nginx's error log (at warn level or more verbose, as nginx.conf sets), and scrape it (port 3903) like the application. Without it the alerts below never see the edge rules.`,
    };
  }
  const where: Record<Scope['gateway'], string> = {
    envoy: '',
    kong: 'Kong counts responses by status in its Prometheus plugin (kong_http_requests_total{code="429"}), which also counts 429s the application sends',
    'aws-api-gateway': awsEdgeSignals(rules),
    cloudflare: 'Cloudflare reports rate-limiting rule actions in its analytics (Security Events), not in Prometheus',
    nginx: '',
    none: 'the gateway keeps its own counters',
  };
  if (scope.gateway === 'envoy') {
    const local = rules.filter((r) => r.layer === 'edge' && envoyCounter(r) === 'local').map((r) => r.id);
    const service = rules.filter((r) => r.layer === 'edge' && envoyCounter(r) === 'service').map((r) => r.id);
    const parts = [
      ...(local.length > 0
        ? [
            `the local rate limit filter (${local.join(', ')}) counts every request it finds no token for in envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="${ENVOY_LOCAL_STAT_PREFIX}"}, refused or not (in shadow mode nothing is refused, and the counter still rises; envoy_http_local_rate_limit_enforced counts the 429s)`,
          ]
        : []),
      ...(service.length > 0
        ? [
            `the rate limit filter (${service.join(', ')}) counts the service's refusals in envoy_cluster_ratelimit_over_limit{envoy_cluster_name="${ENVOY_APP_CLUSTER}"} and ${envoyFailureModeDeny(scope) ? 'its failed calls to the service (each refused with 503, failure_mode_deny true) in envoy_cluster_ratelimit_error' : 'the requests it let through while the service was unreachable in envoy_cluster_ratelimit_failure_mode_allowed'}; in shadow mode the service answers OK, so Envoy counts nothing over the limit and only the service's own stats show the would-be refusals: ratelimit.service.rate_limit.<domain>.<descriptor>.shadow_mode, which prom/statsd-exporter with the mapping from the envoyproxy/ratelimit README publishes as ratelimit_service_rate_limit_shadow_mode{domain, key1, key2}`,
          ]
        : []),
    ];
    return {
      ruleIds: [...edgeIds],
      countedBy: 'gateway',
      text: `The edge rules are counted by Envoy itself, on its admin endpoint's /stats/prometheus (scrape every Envoy node): ${parts.join('; ')}. The alerts below read those series.${middleware ? " ratelimit_throttled_total counts only the middleware's and the outbound client's rules." : ''}`,
    };
  }
  return {
    ruleIds: [...edgeIds],
    countedBy: 'gateway',
    text: `The edge rules (${list}) are enforced by the gateway, which the alert rules here cannot see: ${where[scope.gateway]}. Alert on that signal where it lives (a sustained non-zero rate for the ceiling, a spike for the rest)${
      middleware
        ? "; ratelimit_throttled_total counts only the middleware's and the outbound client's rules"
        : ': no rule here runs in the application, so no alert rule is generated for them'
    }.`,
  };
}

/** Envoy's own series for its edge rules (its stats on /stats/prometheus, the rate limit service's through statsd_exporter). */
function envoyMetrics(rules: readonly MatrixRule[], deny: boolean): MetricSpec[] {
  const edge = rules.filter((r) => r.layer === 'edge');
  const local = edge.some((r) => envoyCounter(r) === 'local');
  const service = edge.some((r) => envoyCounter(r) === 'service');
  return [
    ...(local
      ? [
          {
            name: 'envoy_http_local_rate_limit_rate_limited',
            type: 'counter' as const,
            labels: ['envoy_local_http_ratelimit_prefix'],
            help: `Requests the local rate limit filter found no token for, refused or not (shadow mode included); its filter is ${ENVOY_LOCAL_STAT_PREFIX}.`,
            emittedBy: ['envoy' as const],
          },
        ]
      : []),
    ...(service
      ? [
          {
            name: 'envoy_cluster_ratelimit_over_limit',
            type: 'counter' as const,
            labels: ['envoy_cluster_name'],
            help: 'Requests the rate limit service answered over the limit (refused, outside shadow mode).',
            emittedBy: ['envoy' as const],
          },
          deny
            ? {
                name: 'envoy_cluster_ratelimit_error',
                type: 'counter' as const,
                labels: ['envoy_cluster_name'],
                help: 'Errors asking the rate limit service (unreachable or failed); with failure_mode_deny true each refused its request with 503: the edge fail-closed signal.',
                emittedBy: ['envoy' as const],
              }
            : {
                name: 'envoy_cluster_ratelimit_failure_mode_allowed',
                type: 'counter' as const,
                labels: ['envoy_cluster_name'],
                help: 'Requests let through uncounted because the rate limit service was unreachable or failed (failure_mode_deny false): the edge fail-open signal.',
                emittedBy: ['envoy' as const],
              },
          {
            name: 'ratelimit_service_rate_limit_shadow_mode',
            type: 'counter' as const,
            labels: ['domain', 'key1', 'key2'],
            help: "Requests over a descriptor's limit that shadow_mode let through: the would-be refusals of the rollout's shadow step.",
            emittedBy: ['envoy-ratelimit-service' as const],
          },
        ]
      : []),
  ];
}

/** Alerts on Envoy's own series: the ceiling firing, a spike of refusals, requests let through while the service is unreachable. */
function envoyAlerts(rules: readonly MatrixRule[], deny: boolean): AlertSpec[] {
  const edge = rules.filter((r) => r.layer === 'edge');
  const ceiling = edge.filter((r) => envoyCounter(r) === 'local').map((r) => r.id);
  const service = edge.filter((r) => envoyCounter(r) === 'service').map((r) => r.id);
  const over = `envoy_cluster_ratelimit_over_limit{envoy_cluster_name="${ENVOY_APP_CLUSTER}"}[5m]`;
  const now = `sum(rate(${over}))`;
  const dayAgo = `sum(rate(${over} offset 1d))`;
  return [
    ...(ceiling.length > 0
      ? [
          {
            name: 'RateLimitEdgeCeilingFiring',
            metric: 'envoy_http_local_rate_limit_rate_limited',
            condition: `Envoy's local rate limit filter (${ceiling.join(', ')}) finds no token continuously`,
            expr: `sum(rate(envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="${ENVOY_LOCAL_STAT_PREFIX}"}[15m])) > 0`,
            for: '30m',
            severity: 'ticket' as const,
            why: 'The ceiling firing for half an hour means capacity or the limit is wrong.',
          },
        ]
      : []),
    ...(service.length > 0
      ? [
          {
            name: 'RateLimitEdgeThrottleSpike',
            metric: 'envoy_cluster_ratelimit_over_limit',
            condition: `refusals by the rate limit service (${service.join(', ')}) triple against the same hour yesterday (or start where yesterday had none) and exceed 1 req/s`,
            expr: `${now} > 1 and (${now} > 3 * ${dayAgo} or ${now} unless ${dayAgo})`,
            for: '10m',
            severity: 'ticket' as const,
            why: 'A sudden spike is an attack or a broken client release; either needs a person.',
          },
          deny
            ? {
                name: 'RateLimitEdgeFailClosed',
                metric: 'envoy_cluster_ratelimit_error',
                condition: `Envoy cannot reach the rate limit service and refuses with 503 every request it covers (${service.join(', ')} fail closed: failure_mode_deny true)`,
                expr: `sum(rate(envoy_cluster_ratelimit_error{envoy_cluster_name="${ENVOY_APP_CLUSTER}"}[5m])) > 0`,
                for: '1m',
                severity: 'page' as const,
                why: 'While the rate limit service is down every request the per-client edge rules cover is refused.',
              }
            : {
                name: 'RateLimitEdgeFailOpen',
                metric: 'envoy_cluster_ratelimit_failure_mode_allowed',
                condition: `Envoy lets requests through uncounted because the rate limit service is unreachable (${service.join(', ')} fail open)`,
                expr: `sum(rate(envoy_cluster_ratelimit_failure_mode_allowed{envoy_cluster_name="${ENVOY_APP_CLUSTER}"}[5m])) > 0`,
                for: '1m',
                severity: 'page' as const,
                why: 'While the rate limit service is down the per-client edge limits protect nothing.',
              },
        ]
      : []),
  ];
}

/** Persistence advice: quota counters must survive a restart; short windows need not. */
function persistenceOf(rules: readonly MatrixRule[], inStore: readonly MatrixRule[]): NonNullable<Monitoring['store']['persistence']> {
  const quotas = inStore.filter((r) => r.tier === 'quota').map((r) => r.id);
  if (quotas.length > 0) {
    return {
      mode: 'aof-everysec',
      text: `Persistence is required: the quota counters (${quotas.join(', ')}) live in this store, and a restart without persistence hands every customer a fresh quota for the rest of the period. Turn on the append-only file with an fsync every second (appendonly yes, appendfsync everysec: a crash loses at most about a second of counts), or keep the quota counters in a separate, persistent store. An AOF rewrite forks the server: leave the host free memory beyond maxmemory for its copy-on-write pages.`,
    };
  }
  const longest = Math.max(0, ...inStore.map((r) => r.ttlSeconds ?? 0));
  const security = rules.some((r) => r.tier === 'security' && r.layer !== 'edge');
  return {
    mode: 'optional',
    text: `Persistence is optional: no quota lives here, and the longest window any key holds is ${formatNumber(longest)} s. A restart without persistence resets every limit once${security ? ' (an attacker guessing passwords gets a fresh window of attempts, so restart the store rarely and never on demand)' : ''}; with persistence off (save "", appendonly no) the store never pauses to fork.`,
  };
}

/** The p99 round trip a limiter call to the store may add to a request, in milliseconds. */
const LATENCY_BUDGET_P99_MS = 5;

/** Alerts on the middleware's calls to a shared store: nothing to watch when no rule makes one (every rule at the edge, or state in each process). */
const STORE_CALL_ALERTS: AlertSpec[] = [
  {
    name: 'RateLimitStoreSlow',
    metric: 'ratelimit_store_latency_ms',
    condition: `p99 limiter round trip above ${LATENCY_BUDGET_P99_MS} ms`,
    expr: `histogram_quantile(0.99, sum by (le) (rate(ratelimit_store_latency_ms_bucket[5m]))) > ${LATENCY_BUDGET_P99_MS}`,
    for: '10m',
    severity: 'ticket',
    why: `The limiter adds this latency to every request; the budget is ${LATENCY_BUDGET_P99_MS} ms at p99.`,
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
    condition: 'any fail-open event (also in a process whose first scrape already shows one)',
    expr: 'sum by (rule) (increase(ratelimit_fail_open_events_total[5m])) > 0 or sum by (rule) (ratelimit_fail_open_events_total unless ratelimit_fail_open_events_total offset 5m) > 0',
    for: '1m',
    severity: 'page',
    why: 'While a rule fails open the backend has no protection from it. Every series exists at 0 from the start, so the first event is an increase.',
  },
];

/** What the monitoring needs beyond the rules: the access lists (their counter, alert and keys) and the ceiling's rate. */
interface MonitoringContext {
  access?: AccessDesign | undefined;
  ceilingRps?: number | undefined;
  /** The fail-open rules the in-memory fallback decides while the store fails (answers failure.fallback = memory). */
  fallbackRuleIds?: readonly string[] | undefined;
  /** The plans' quotas: which quota rules let calls pass past the plan quota, up to a hard stop. */
  quotas?: QuotaDesign | undefined;
}

/**
 * Callers refused by the penalty box, against the same hour yesterday: a burst of them is
 * someone guessing credentials (or many people behind one address shut out together).
 */
function penaltyAlert(ruleIds: readonly string[]): AlertSpec {
  const boxed = `ratelimit_access_total{outcome="${ACCESS_OUTCOMES.penalty}"}[5m]`;
  const now = `sum(rate(${boxed}))`;
  const dayAgo = `sum(rate(${boxed} offset 1d))`;
  return {
    name: 'RateLimitPenaltyBoxSpike',
    metric: 'ratelimit_access_total',
    condition: 'refusals by the penalty box triple against the same hour yesterday (or start where yesterday had none) and exceed 1 req/s',
    expr: `${now} > 1 and (${now} > 3 * ${dayAgo} or ${now} unless ${dayAgo})`,
    for: '10m',
    severity: 'page',
    why: `Callers refused again and again by ${ruleIds.length > 0 ? ruleIds.join(', ') : 'the rules the box follows'} keep trying while boxed: credential guessing, or a shared address shutting out everyone behind it.`,
  };
}

/**
 * Callers of a plan that lets calls pass past its quota (soft-warning, pay-per-overage) are in
 * overage: the middleware counts each call it admits past the plan quota (flagged with
 * Quota-Exceeded) in ratelimit_quota_exhausted_total{rule, plan}, and each refusal at the hard
 * stop too. Allowed and billed, so a ticket, not a page: someone tells the customer before the
 * hard stop refuses them.
 */
function overageAlert(soft: readonly MatrixRule[], quotas: QuotaDesign | undefined): AlertSpec {
  const ids = soft.map((r) => r.id);
  const selector = `rule=~"${idsRegex(ids)}"`;
  const kinds = new Set(soft.map((r) => quotas?.plans.find((p) => p.ruleId === r.id)?.exhaustion));
  const terms = [
    ...(kinds.has('soft-warning') ? ['on a soft-warning plan they pass with a Quota-Exceeded warning'] : []),
    ...(kinds.has('pay-per-overage') ? ['on a pay-per-overage plan the metering system bills each one'] : []),
  ];
  // the quotas count per the design's account identity: name that, not a tenant the design may not have
  const counted = [...new Set(soft.map((r) => identityLabel(r.identity ?? 'tenant')))];
  const who = joinAnd(counted.map((l) => `${l}s`));
  return {
    name: 'RateLimitQuotaOverage',
    metric: 'ratelimit_quota_exhausted_total',
    condition: `callers of a plan went past its plan quota in the last hour: ${soft
      .map(
        (r) =>
          `${r.id} (plan ${r.plan ?? r.id}: quota ${formatNumber(softPlanQuota(r, quotas) ?? 0)}, refused past ${formatNumber(r.rate?.requests ?? 0)})`,
      )
      .join(', ')}`,
    expr: `sum by (rule, plan) (increase(ratelimit_quota_exhausted_total{${selector}}[1h])) > 0`,
    for: '5m',
    severity: 'ticket',
    why: `Calls past the plan quota are allowed${terms.length > 0 ? ` (${terms.join('; ')})` : ''}, so nothing is broken and nobody is paged, but these callers are in overage, and at the hard stop they get 429 QUOTA_EXCEEDED until the period resets. The counter has no ${counted.join(' or ')} label (its labels come from the design, never from requests): find the ${who} in overage in the usage records the invoices come from (or by the Quota-Exceeded header, where the access log records it), and have their account owner contact them before the hard stop: an upgrade, a higher overageCap for the plan, or a warning. The counter also counts the calls refused at the hard stop; ratelimit_throttled_total{${selector},mode="enforce"} shows whether some callers already reach it.`,
  };
}

/**
 * The Redis behind Envoy's rate limit service: each per-client edge rule keeps one counter per
 * client and window there (a string key "<domain>_rl_rule_<rule id>_<descriptor key>_<value>_<window
 * start>" with an integer, expiring with its window), at most its cardinality bound live. Not the
 * design's store: the paragraph says what it holds and what to run and watch.
 */
function edgeServiceRedis(scope: Scope, rules: readonly MatrixRule[]): string | undefined {
  if (scope.gateway !== 'envoy') return undefined;
  const held = rules.filter((r) => r.layer === 'edge' && envoyCounter(r) === 'service' && edgeCounter(r, scope).keyLivesForWindow);
  if (held.length === 0) return undefined;
  const domain = slug(scope.projectName);
  const rows = held.map((r) => {
    const value = r.identity === 'ip' ? ENVOY_ADDRESS_CHARS : KEY_VALUE_CHARS.opaque;
    const descriptor = r.identity === 'ip' ? 'remote_address' : 'api_key';
    const chars = `${domain}_rl_rule_${r.id}_${descriptor}_`.length + value + 1 + UNIX_SECONDS_CHARS;
    const keys = r.cardinality?.bound ?? 0;
    return { id: r.id, keys, bytes: keys * (BYTES_PER_KEY['fixed-window'] + keyNameExtraBytes(chars)) };
  });
  const keys = rows.reduce((n, r) => n + r.keys, 0);
  const bytes = rows.reduce((n, r) => n + r.bytes, 0);
  const ids = rows.map((r) => r.id);
  return `The rate limit service (envoyproxy/ratelimit) keeps ${joinAnd(ids)} in its own Redis, which this design's memory estimate does not size and whose memory no alert here watches: one counter per client and window, expiring with its window, at most ${formatNumber(keys)} live (${rows.map((r) => `${r.id} ${formatNumber(r.keys)}`).join(', ')}, the rules' cardinality bounds), about ${mib(bytes)} at ${formatNumber(BYTES_PER_KEY['fixed-window'])} B a counter plus its key name (domain, rule, client address and window start). Run that Redis on a dedicated instance with maxmemory-policy noeviction and at least that much memory (an evicted counter resets a limit), and scrape it with redis_exporter as you would a limiter store: while it is unreachable the service cannot count and Envoy ${envoyFailureModeDeny(scope) ? 'refuses' : 'lets through uncounted'} every request these rules cover.`;
}

/** Longest client address envoyproxy/ratelimit writes into a key: IPv6 in full text. */
const ENVOY_ADDRESS_CHARS = 39;
/** The window start in a key: Unix seconds. */
const UNIX_SECONDS_CHARS = 10;

/**
 * What the shipped code registers of the store metrics the table leaves out (no rule calls a
 * store): the series it creates at 0, which nothing can move, and no alert reads.
 */
function storeMetricsLeftOut(hasMiddleware: boolean, hasOutbound: boolean): Pick<Monitoring, 'storeMetricsLeftOut'> {
  const [latency, failures, failOpen] = STORE_CALL_METRICS.map((m) => m.name);
  const parts = [
    ...(hasMiddleware ? [`the middleware: ${failures} and ${failOpen}, a series per rule, and the histogram ${latency}`] : []),
    ...(hasOutbound ? [`the outbound client's outboundMetrics: ${failures}, a series per provider`] : []),
  ];
  if (parts.length === 0) return {};
  return {
    storeMetricsLeftOut: `No rule keeps its state in a store, so this table leaves out the metrics of store calls, and no alert reads them. The shipped code still registers them (${parts.join('; ')}), every counter series at 0, and with no store call to fail or to time they stay at 0.`,
  };
}

export function buildMonitoring(scope: Scope, rules: MatrixRule[], context: MonitoringContext = {}): Monitoring {
  // a store the answers name but no rule keeps state in (every rule at the edge) needs no sizing or alerts
  const storeUnused = scope.store !== 'none' && !rules.some((r) => r.layer !== 'edge' && r.primitive === 'redis-lua');
  const hasStore = scope.store !== 'none' && !storeUnused;
  // edge rules whose gateway keeps their counts in the design's store (Kong's policy redis)
  const serviceRedis = edgeServiceRedis(scope, rules);
  const gatewayStoreRules = rules.filter((r) => r.layer === 'edge' && edgeCounter(r, scope).inDesignStore).map((r) => r.id);
  const edgeIds = rules.filter((r) => r.layer === 'edge').map((r) => r.id);
  const edge = edgeCounting(scope, rules, rules.some((r) => r.layer === 'middleware') || rules.some((r) => r.tier === 'outbound'));
  const envoyEdge = scope.gateway === 'envoy' && edgeIds.length > 0;
  // the rules ratelimit_throttled_total counts: the middleware's, the outbound client's (its
  // metrics adapter), and the edge's only when the mtail program counts them
  const counted = (r: MatrixRule): boolean => r.layer !== 'edge' || edge?.countedBy === 'nginx-log';
  const rare = rules.filter((r) => (r.tier === 'ceiling' || r.tier === 'outbound') && counted(r)).map((r) => r.id);
  const security = rules.filter((r) => r.tier === 'security').map((r) => r.id);
  // near the limit is a capacity signal for the limits customers live with, not for brute force
  const nearLimit = rules.filter((r) => r.layer === 'middleware' && r.tier !== 'security').map((r) => r.id);
  const hasQuota = rules.some((r) => r.tier === 'quota');
  // the middleware's quota rules that pass calls past the plan quota up to a hard stop
  const soft = rules.filter((r) => r.layer === 'middleware' && r.tier === 'quota' && softPlanQuota(r, context.quotas) !== null);
  const hasOutbound = rules.some((r) => r.tier === 'outbound');
  // the middleware exports its metrics only where it runs: a design with no middleware rule ships none
  const hasMiddleware = rules.some((r) => r.layer === 'middleware');
  // the penalty box keeps its keys in the store beside the rules' (penalty.lua), when the rules use one
  const penaltyBound =
    hasStore && context.access?.penalty && context.ceilingRps ? penaltyKeys(context.access.penalty, context.ceilingRps) : undefined;
  const penalty = penaltyBound?.store;
  // (its keys share the ceiling's traffic with the rules', so the bound counts them together)
  // API Gateway admits the ceiling's rate on each method: the fleet admits more than any one endpoint can take
  const endpointsCapped =
    scope.gateway === 'aws-api-gateway' &&
    context.ceilingRps !== undefined &&
    rules.some(
      (r) => r.layer === 'edge' && r.tier === 'ceiling' && r.rate && context.ceilingRps! > r.rate.requests / r.rate.periodSeconds + 1e-9,
    );
  const bound = storeBound(rules, penaltyBound?.traffic, endpointsCapped);
  const { shared } = bound;
  const totalBound = bound.keys;
  const estimatedBytes = bound.bytes;
  const inStore = rules.filter((r) => r.layer !== 'edge' && r.primitive === 'redis-lua');
  const maxmemory = maxmemoryFor(estimatedBytes);
  const job = REDIS_EXPORTER_JOB;
  // outbound buckets make calls wait whenever a batch runs: RateLimitRareRuleFiring watches them, not the spike alert
  const outboundIds = rules.filter((r) => r.tier === 'outbound').map((r) => r.id);
  const throttled = `ratelimit_throttled_total{mode="enforce"${outboundIds.length > 0 ? `,rule!~"${idsRegex(outboundIds)}"` : ''}}`;
  const now = `sum by (rule) (rate(${throttled}[5m]))`;
  const dayAgo = `sum by (rule) (rate(${throttled}[5m] offset 1d))`;
  // ratelimit_throttled_total exists only where something counts into it: the middleware, the outbound client, nginx's mtail
  const throttleCounted = hasMiddleware || hasOutbound || edge?.countedBy === 'nginx-log';
  const alerts: AlertSpec[] = [...(envoyEdge ? envoyAlerts(rules, envoyFailureModeDeny(scope)) : [])];
  if (throttleCounted)
    alerts.push({
      name: 'RateLimitThrottleSpike',
      metric: 'ratelimit_throttled_total',
      condition: 'throttling on a rule triples against the same hour yesterday (or starts where yesterday had none) and exceeds 1 req/s',
      expr: `${now} > 1 and (${now} > 3 * ${dayAgo} or ${now} unless ${dayAgo})`,
      for: '10m',
      severity: security.length > 0 ? 'page' : 'ticket',
      why: 'A sudden spike is an attack or a broken client release; either needs a person.',
    });
  alerts.push(
    ...(rare.length > 0
      ? [
          {
            name: 'RateLimitRareRuleFiring',
            metric: 'ratelimit_throttled_total',
            condition: `a rule that should almost never fire (${rare.join(', ')}) throttles continuously`,
            expr: `sum by (rule) (rate(ratelimit_throttled_total{rule=~"${idsRegex(rare)}"}[15m])) > 0`,
            for: '30m',
            severity: 'ticket' as const,
            why: `The ceiling or an outbound bucket firing for half an hour means capacity or the limit is wrong.${
              rare.some((id) => edgeIds.includes(id))
                ? " The edge rules are counted by monitoring/nginx-ratelimit.mtail from nginx's error log."
                : ''
            }${hasOutbound ? " Outbound buckets are counted by the outbound client's outboundMetrics adapter." : ''}`,
          },
        ]
      : []),
    ...(nearLimit.length > 0
      ? [
          {
            name: 'RateLimitNearLimit',
            metric: 'ratelimit_near_limit_total',
            condition: `more than 20% of the calls a rule admits leave their caller under ${NEAR_LIMIT_FRACTION * 100}% of its capacity, for an hour`,
            expr: `sum by (rule) (rate(ratelimit_near_limit_total{rule=~"${idsRegex(nearLimit)}"}[1h])) / sum by (rule) (rate(ratelimit_decisions_total{rule=~"${idsRegex(nearLimit)}",result="allowed"}[1h])) > 0.2`,
            for: '1h',
            severity: 'ticket' as const,
            why: 'Raise limits or capacity before customers start hitting them.',
          },
        ]
      : []),
    ...(soft.length > 0 ? [overageAlert(soft, context.quotas)] : []),
    ...(hasStore
      ? STORE_CALL_ALERTS.map((a) =>
          // the memory fallback decides the fail-open rules it covers: those are not unprotected
          a.name === 'RateLimitStoreFailures' && (context.fallbackRuleIds ?? []).length > 0
            ? {
                ...a,
                why: "Fail-closed rules are refusing traffic; fail-open rules count only in each instance's memory (the memory fallback), so one identity can get a full limit from each instance.",
              }
            : a,
        )
      : []),
    ...(context.access?.penalty && hasMiddleware ? [penaltyAlert(context.access.penalty.ruleIds)] : []),
  );
  if (hasStore) {
    const masters = `on (instance) redis_instance_info{job="${job}",role="master"}`;
    alerts.push(
      {
        name: 'RateLimitKeyCardinality',
        metric: 'redis_db_keys',
        condition: `live keys in the limiter's store above 80% of the stated bound (${formatNumber(totalBound)} in all)`,
        expr: `sum(redis_db_keys{job="${job}",db="db0"} and ${masters}) > ${Math.ceil(totalBound * 0.8)}`,
        for: '30m',
        severity: 'ticket',
        why:
          'Unbounded key growth is a memory leak in the store; the bound in the matrix is being exceeded. (redis_exporter, job ' +
          job +
          '; masters only, so replicas are not counted twice.)',
      },
      {
        name: 'RateLimitStoreMemoryHigh',
        metric: 'redis_memory_used_bytes',
        condition: 'the limiter store uses more than 80% of its maxmemory',
        expr: `max by (instance) (redis_memory_used_bytes{job="${job}"} / (redis_memory_max_bytes{job="${job}"} > 0)) > 0.8`,
        for: '15m',
        severity: 'page',
        why:
          (context.fallbackRuleIds ?? []).length > 0
            ? "At maxmemory the store refuses writes: fail-open rules count only in each instance's memory (the memory fallback), and fail-closed rules answer 503."
            : 'At maxmemory the store refuses writes: fail-open rules stop limiting and fail-closed rules answer 503.',
      },
      {
        name: 'RateLimitStoreMisconfigured',
        metric: 'redis_instance_info',
        condition: 'a limiter store node has no maxmemory or an eviction policy other than noeviction',
        expr: `max by (instance) (redis_memory_max_bytes{job="${job}"}) == 0 or max by (instance) (redis_instance_info{job="${job}",maxmemory_policy!="noeviction"})`,
        for: '10m',
        severity: 'ticket',
        why: 'Without maxmemory the host runs out of memory instead; an evicting policy silently drops limiter keys, which resets limits.',
      },
    );
  }
  if (hasOutbound) {
    alerts.push({
      name: 'RateLimitProviderThrottling',
      metric: 'ratelimit_outbound_provider_429_total',
      condition: `a provider returns 429 despite the ${rules.some((r) => r.tier === 'outbound' && r.primitive === 'redis-lua') ? 'shared bucket' : 'in-process bucket'}`,
      expr: 'sum by (provider) (increase(ratelimit_outbound_provider_429_total[10m])) > 0',
      for: '1m',
      severity: 'ticket',
      why: 'The bucket and the provider disagree about the limit; repeated 429s risk a ban.',
    });
  }
  const metrics = [...METRICS, ...(hasStore ? STORE_CALL_METRICS : [])].flatMap((m): MetricSpec[] => {
    const by: MetricSource[] = [...(m.emittedBy ?? MW)].filter((s) => hasMiddleware || s !== 'middleware');
    if (hasOutbound && (m.name === 'ratelimit_throttled_total' || m.name === 'ratelimit_store_failures_total')) by.push('outbound-client');
    if (edge?.countedBy === 'nginx-log' && m.name === 'ratelimit_throttled_total') by.push('nginx-log');
    return by.length > 0 ? [{ ...m, emittedBy: by }] : [];
  });
  const access = accessMetric(context.access);
  const storeName = STORE_NAME[scope.store] ?? scope.store;
  // the server the user runs (Valkey or Redis), where the text is about it rather than the protocol
  const server = storeServerName(scope.store);
  const cluster = scope.store === 'redis-cluster';
  // Redis refuses a script's first write that can grow memory (SET, INCRBY, ZADD...) when past
  // maxmemory, but lets a script finish once it has written: the sliding-window log trims first
  const refusable = inStore.filter((r) => r.layer === 'middleware' && r.algorithm !== 'sliding-window-log');
  // a fail-open rule the memory fallback covers is decided in each instance's memory, not admitted unchecked
  const fallbackIds = new Set(context.fallbackRuleIds ?? []);
  const open = refusable.filter((r) => r.failMode !== 'closed' && !fallbackIds.has(r.id)).map((r) => r.id);
  const inMemory = refusable.filter((r) => r.failMode !== 'closed' && fallbackIds.has(r.id)).map((r) => r.id);
  const closed = refusable.filter((r) => r.failMode === 'closed').map((r) => r.id);
  const logs = inStore.filter((r) => r.layer === 'middleware' && r.algorithm === 'sliding-window-log').map((r) => r.id);
  const outboundShared = inStore.filter((r) => r.tier === 'outbound').map((r) => r.id);
  const sharedTags = rules.some((r) => r.tier === 'security' && r.layer === 'middleware');
  const persistence = persistenceOf(rules, inStore);
  const recommendation = `Run limiter state on a dedicated ${storeName}${cluster ? ' (its own cluster)' : ' instance'} with maxmemory-policy noeviction. Under an LRU policy, memory pressure silently evicts limiter keys, which resets limits: a fail-open no metric sees. maxmemory and its policy belong to the whole instance, so a separate logical database (SELECT n) on a shared allkeys-lru instance is evicted like any other data: a logical database only keeps key names apart, it does not protect from eviction${cluster ? ' (and Redis Cluster has only database 0)' : ''}. The TTLs on every key bound memory; eviction must never be the bound.`;
  const memoryText = `maxmemory ${mib(maxmemory)}: the memory bound above (${mib(estimatedBytes)}) plus ${formatNumber((MAXMEMORY_HEADROOM - 1) * 100)}% headroom, plus 64 MiB for ${server} itself (client buffers, replication backlog, scripts).${
    cluster
      ? ` Set it on every node${sharedTags ? ': keys that share a hash tag live on one node, and all keys of one auth flow do, so one node can hold almost all of them' : ''}.`
      : ''
  } Reaching it means the bound was wrong or keys leak. With noeviction ${server} then refuses, with an OOM error, every command that would grow memory as a script's first write, and the limiter counts that as a store failure: ${
    open.length > 0
      ? `the fail-open rules (${open.join(', ')}) admit requests unchecked and count ratelimit_fail_open_events_total`
      : inMemory.length > 0
        ? ''
        : 'no token-bucket or quota rule fails open'
  }${
    inMemory.length > 0
      ? `${open.length > 0 ? '; ' : ''}the fail-open rules with the memory fallback (${inMemory.join(', ')}) count in each instance's memory instead, each instance from zero (see the fail mode per endpoint class), and count no fail-open event`
      : ''
  }; ${closed.length > 0 ? `the fail-closed ones (${closed.join(', ')}) answer 503 with Retry-After` : 'no token-bucket or quota rule fails closed'}${
    logs.length > 0
      ? `; the sliding-window logs (${logs.join(', ')}) trim before they add, and Redis lets a script that has already written finish, so they keep enforcing and keep growing past maxmemory (up to their bound)`
      : ''
  }${
    outboundShared.length > 0
      ? `; the outbound client (${outboundShared.join(', ')}) books no slot, so it calls no provider and refuses with STORE_UNAVAILABLE once maxWaitMs has passed`
      : ''
  }. RateLimitStoreMemoryHigh pages at 80% of maxmemory, well before that, and RateLimitStoreMisconfigured opens a ticket when a node has no maxmemory or another policy.`;
  const config = [
    `# ${storeConfFile(scope.store)} of the limiter's dedicated store${cluster ? ' (every node of the cluster)' : ''}`,
    `# the memory bound (${mib(estimatedBytes)}) + ${formatNumber((MAXMEMORY_HEADROOM - 1) * 100)}% + 64 MiB; past it ${server} refuses writes that grow memory (OOM) and never evicts`,
    `maxmemory ${Math.round(maxmemory / MIB)}mb`,
    'maxmemory-policy noeviction',
    ...(persistence.mode === 'aof-everysec'
      ? ['# quota counters live here: keep them across restarts', 'appendonly yes', 'appendfsync everysec']
      : ['# no quota counters here: persistence optional (off: no fork pauses)', 'save ""', 'appendonly no']),
    '',
  ].join('\n');
  const scrapeConfig = [
    '# prometheus.yml: oliver006/redis_exporter in front of each node of the limiter store',
    'scrape_configs:',
    `  - job_name: ${job}`,
    '    static_configs:',
    "      - targets: ['ratelimit-redis-exporter:9121']",
    '',
  ].join('\n');
  return {
    metrics: [
      ...metrics,
      ...(hasQuota ? QUOTA_METRICS : []),
      ...(access && hasMiddleware ? [access] : []),
      ...(hasOutbound ? OUTBOUND_METRICS : []),
      ...(hasStore ? STORE_METRICS : []),
      ...(envoyEdge ? envoyMetrics(rules, envoyFailureModeDeny(scope)) : []),
    ],
    alerts,
    store: {
      dedicated: true,
      maxmemoryPolicy: 'noeviction',
      estimatedKeys: totalBound,
      estimatedBytes,
      ...(shared ? { sharedCeiling: shared } : {}),
      ...(bound.hashes ? { hashes: bound.hashes } : {}),
      ...(bound.sameKey ? { sameKey: bound.sameKey } : {}),
      ...(penalty ? { penalty } : {}),
      ...(serviceRedis ? { edgeServiceRedis: serviceRedis } : {}),
      recommendation: hasStore
        ? recommendation
        : storeUnused && gatewayStoreRules.length > 0
          ? `No rule in the application keeps its state in ${storeName}, but the gateway does: ${gatewayStoreRules.join(', ')} ${gatewayStoreRules.length > 1 ? 'keep their' : 'keeps its'} counts in it (Kong's policy redis). Run ${storeName} for them on a dedicated instance with maxmemory-policy noeviction: an evicted counter resets a limit. Kong's keys are not sized or monitored here.`
          : storeUnused
            ? `No rule keeps its state in the store: every limit here is counted by the gateway itself, so the rate limits need no ${storeName} and none is sized or monitored for them. Should a rule move into the middleware, run ${storeName} for it on a dedicated instance with maxmemory-policy noeviction.`
            : `No shared store: limiter state lives in the memory of the one process, sized below as the process's heap; nothing here configures or calls a store. Should the state move to ${storeName} (several instances, or quotas that must outlive a restart, need it), run it on a dedicated instance with maxmemory-policy noeviction: a logical database on a shared instance is evicted like any other data.`,
      ...(hasStore
        ? {
            maxmemoryBytes: maxmemory,
            memoryText,
            persistence,
            config,
            exporter: {
              job,
              text: `Key count and memory come from oliver006/redis_exporter (Debian: prometheus-redis-exporter), one per store node, scraped as job ${job}: redis_db_keys{db="db0"} is the key count (every key in the dedicated store is a limiter key), redis_memory_used_bytes and redis_memory_max_bytes the memory, redis_instance_info the role and eviction policy. The store alerts select that job; rename it in both places if yours differs.`,
              scrapeConfig,
            },
          }
        : {}),
    },
    ...(edge ? { edge } : {}),
    ...(hasStore ? {} : storeMetricsLeftOut(hasMiddleware, hasOutbound)),
    latencyBudgetMs: { p99: LATENCY_BUDGET_P99_MS },
  };
}

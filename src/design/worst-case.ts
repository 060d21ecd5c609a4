/**
 * The worst case per rule and layer: the most one identity (one key of the rule) can get
 * admitted within any stretch of time as long as the rule's period, with the formula that gives
 * it. The stated limit is what the matrix promises per period; the worst case is what the
 * algorithm and the place it runs allow at their most generous moment:
 *
 * - a fixed window admits its limit at the end of one window and again at the start of the
 *   next: 2 x limit within a moment (quotas are fixed windows over their reset period);
 * - a sliding-window log counts every admission in the trailing period: exactly the limit;
 * - a sliding-window counter weighs the previous window as if its requests were spread evenly:
 *   when they came at its very end, nearly 2 x limit passes within one period;
 * - a bucket (token bucket, leaky bucket as nginx runs it with nodelay, GCRA) admits its burst
 *   at once and then refills at its rate: burst + rate x period. The application runs every
 *   algorithm but the two windows as GCRA (a sliding window counter too), with the burst
 *   runBurst gives (the stated one, else the rate's count per period), so its rules are sized
 *   as that bucket, not as their algorithm's name would have it;
 * - a gateway whose counters live in each node (nginx, Envoy's local filter, Kong's local
 *   policy) or each location (Cloudflare) admits that much per node: x K;
 * - the local + Redis hybrid adds each instance's local bucket: N x local burst;
 * - an outbound bucket kept per instance admits its share on each of N instances.
 *
 * One row kind per source of extra admissions (WORST_CASE_KINDS): a new one (for example an
 * in-memory fallback that admits per instance while the store is down) is one more entry there,
 * whose rows the table, the document and verify take as they are.
 */
import { formatNumber as fmt, rateWords, secondsWords } from '../format.js';
import { admittedWithin, algorithmLabel, limitReqAdmittedWithin, luaScriptFor, runAsGcraLabel, runBurst } from './algorithms.js';
import {
  AWS_ACCOUNT_LIMIT_TEXT,
  AWS_ACCOUNT_THROTTLE,
  awsKeyPlan,
  awsThrottleMethods,
  WAF_DETECTION_TEXT,
  edgeCounter,
  fleetOverStated,
  gatewayNodes,
  kongPolicy,
  kongRoutePlan,
} from './gateway-behaviour.js';
import type { Algorithm, Design, Layer, MatrixRule } from './model.js';
import { storeServerName } from './naming.js';

/** One row of the table: a rule at one layer (or one source of extra admissions on top of it). */
export interface WorstCaseRow {
  ruleId: string;
  /** Which entry of WORST_CASE_KINDS produced the row. */
  kind: string;
  /** Where the admissions happen: the rule's layer, or the extra layer in front of it (the hybrid's local buckets). */
  layer: Layer | 'middleware (local + store)' | 'middleware (in-memory fallback)';
  algorithm?: Algorithm;
  /** What the algorithm is called where its name alone would mislead (a rolling quota's daily counters). */
  algorithmLabel?: string;
  /** The period the rule states its limit over, in seconds; the worst case is for any stretch this long. */
  periodSeconds: number;
  /** The rule's period in words ("1 s", "1 min", "calendar month (Europe/Berlin)"). */
  periodText: string;
  /** What the matrix states per period (requests of cost 1). */
  stated: number;
  /** The most admitted within any stretch of one period (whole requests of cost 1). */
  worstCase: number;
  /**
   * Where the gateway counts per location (Cloudflare: per data centre), the location: stated
   * and worstCase are then per location, and the basis says how many a client reaches.
   */
  perLocation?: string;
  /** How worstCase follows from the rule's numbers, e.g. "2 x 100" or "200 + 10/s x 1 s". */
  formula: string;
  /** What the formula rests on, in one sentence. */
  basis: string;
  /** Whether verify measures this row on a real Redis with the shipped runtime. */
  measurable: boolean;
}

/** A source of rows: every rule it concerns, with its worst case. */
export interface WorstCaseKind {
  kind: string;
  rows(design: Design): WorstCaseRow[];
}

/** Whole requests: floors a count that is whole up to rounding noise. */
export function wholeRequests(x: number): number {
  return Math.floor(x + 1e-9);
}

/** A rule's period in words ("1 s", "10 min", "1 d"). */
export const periodWords = secondsWords;

/** A rule with the numbers a worst case needs. */
function sized(rule: MatrixRule): rule is MatrixRule & { rate: { requests: number; periodSeconds: number }; algorithm: Algorithm } {
  return rule.rate !== undefined && rule.rate.requests > 0 && rule.rate.periodSeconds > 0 && rule.algorithm !== undefined;
}

const BUCKETS: readonly Algorithm[] = ['gcra', 'token-bucket', 'leaky-bucket'];

/** A worst case with how it follows from the rule's numbers and what that rests on. */
export interface WorstCaseFigure {
  worstCase: number;
  formula: string;
  basis: string;
}

/**
 * Whether verify measures a rule's worst case on the store: what the store runs as GCRA, and a
 * plain fixed window (a rolling quota's daily counters are not what verify's fixed-window run measures).
 */
function measuredOnStore(rule: MatrixRule): boolean {
  return luaScriptFor(rule.algorithm) === 'gcra' || (rule.algorithm === 'fixed-window' && !algorithmLabel(rule));
}

/**
 * The most one key of a rule admits within any stretch of one period at one counter, by the
 * algorithm that counts it (where its counter lives is the caller's concern). A rule the
 * application runs (any layer but the edge) is counted by the scripts: every algorithm but the
 * two windows as a GCRA bucket with the burst runBurst gives. An edge rule by the gateway's own
 * algorithm, with its burst as stated.
 */
export function perCounter(
  rule: MatrixRule & { rate: { requests: number; periodSeconds: number }; algorithm: Algorithm },
): WorstCaseFigure {
  const limit = rule.rate.requests;
  // the count itself is algorithms.ts's (the migration table reads the same function)
  const worstCase = admittedWithin(rule, rule.rate.periodSeconds) as number;
  const period = periodWords(rule.rate.periodSeconds);
  const rate = rateWords(limit, rule.rate.periodSeconds);
  // the refill within one period counts whole requests: a rate whose period holds a fraction of
  // one (an outbound bucket at 0.9/s) shows the floor the count takes
  const refill = Number.isInteger(limit) ? `${rate} x ${period}` : `floor(${rate.includes(' per ') ? `(${rate})` : rate} x ${period})`;
  const run = rule.layer === 'edge' ? null : runBurst(rule);
  if (run !== null) {
    const at =
      typeof rule.burst === 'number'
        ? 'The full burst'
        : `No burst is stated, so the bucket holds its rate's count per period (${fmt(run)}): all of it`;
    return {
      worstCase,
      formula: `${fmt(run)} + ${refill}`,
      basis: `${runAsGcraLabel(rule) ? 'The runtime runs it as a GCRA bucket. ' : ''}${at} at once, then the refill at the rate for the rest of the period.`,
    };
  }
  const burst = typeof rule.burst === 'number' ? rule.burst : undefined;
  if (BUCKETS.includes(rule.algorithm)) {
    if (burst === undefined) {
      return {
        worstCase,
        formula: Number.isInteger(limit) ? `${fmt(limit)}` : `floor(${fmt(limit)})`,
        basis: 'A bucket without a stated burst admits its rate.',
      };
    }
    return {
      worstCase,
      formula: `${fmt(burst)} + ${refill}`,
      basis: 'The full burst at once, then the refill at the rate for the rest of the period.',
    };
  }
  switch (rule.algorithm) {
    case 'fixed-window':
      return {
        worstCase,
        formula: Number.isInteger(limit) ? `2 x ${fmt(limit)}` : `floor(2 x ${fmt(limit)})`,
        basis: algorithmLabel(rule)
          ? // daily counters summed over the trailing days: a day's count leaves at once when the day ages out
            "The trailing window counts whole days: a day's usage leaves all at once when that day ages out, so what was spent at the end of the oldest day can be spent again right after."
          : `The limit at the end of one window and again at the start of the next, moments apart.${rule.layer === 'middleware' && rule.tier !== 'quota' ? ` ${epochWindowsText(rule.rate.periodSeconds)}` : ''}`,
      };
    case 'sliding-window-counter':
      return {
        worstCase,
        formula: Number.isInteger(limit) ? `2 x ${fmt(limit)}` : `floor(2 x ${fmt(limit)})`,
        basis:
          "The previous window's count is weighed as if spread evenly: when it came at its very end, nearly the limit passes again before the period is over.",
      };
    default:
      return {
        worstCase,
        formula: Number.isInteger(limit) ? `${fmt(limit)}` : `floor(${fmt(limit)})`,
        basis: 'Every admission of the trailing period is logged and counted: never more than the limit.',
      };
  }
}

/** The hybrid: a shared counter's worst case, plus each instance's local bucket admitting before Redis has counted. */
export function withLocalBuckets(base: WorstCaseFigure, instances: number, localBurst: number, server = 'Redis'): WorstCaseFigure {
  return {
    worstCase: base.worstCase + instances * localBurst,
    formula: `${base.formula} + ${fmt(instances)} x ${fmt(localBurst)}`,
    basis: `The shared bucket's worst case, plus the local bucket (${fmt(localBurst)}) of each of the ${fmt(instances)} instances admitting before ${server} has counted; a local charge ${server} refuses stays owed until paid, so this holds under sustained contention too.`,
  };
}

/** The in-memory fallback while the store is down: each of `instances` counts from zero on its own. */
export function inMemoryFallback(base: WorstCaseFigure, instances: number): WorstCaseFigure {
  const n = instances;
  return {
    worstCase: base.worstCase * n,
    formula: n > 1 ? `(${base.formula}) x ${fmt(n)} instances` : base.formula,
    basis: `Only while the store is unreachable: ${n > 1 ? `each of the ${fmt(n)} instances counts` : 'the instance counts'} from zero in its own memory. ${base.basis}`,
  };
}

/**
 * How many separate counters an edge rule has for one identity, and why (`k`: nodes or
 * locations; `routes`: Kong routes or API Gateway methods, each with its own counter, named by
 * `routesUnit`; `cap`: what AWS's account limit lets through in `seconds` (the rule's period
 * unless given), above which nothing passes).
 */
function edgeCounters(
  design: FleetDesign,
  rule: MatrixRule,
  seconds: number = rule.rate?.periodSeconds ?? 1,
): {
  k: number;
  routes: number;
  routesUnit?: string;
  cap?: { worstCase: number; formula: string };
  perLocation?: string;
  text: string;
  /** The counter estimates the rate instead of logging each request: `text` replaces the algorithm's own account of its worst case. */
  estimated?: boolean;
} {
  // the gateway's own nodes when the answers give them; else one per application instance, said so in the row
  const { k: nodes, stated: known } = gatewayNodes(design.scope);
  const stated = known ? nodes : undefined;
  const counter = edgeCounter(rule, design.scope);
  switch (design.scope.gateway) {
    case 'cloudflare': {
      const w = counter.window(rule.rate ?? { requests: 1, periodSeconds: 1 }, typeof rule.burst === 'number' ? rule.burst : null);
      const over = `Cloudflare counts over the rule's ${periodWords(w.periodSeconds)} period (period ${fmt(w.periodSeconds)} in gateway/cloudflare-ratelimit.json) and keeps one count per data centre (characteristic cf.colo.id)`;
      return {
        k: 1,
        routes: 1,
        ...(counter.perLocation ? { perLocation: counter.perLocation } : {}),
        text:
          rule.identity === 'global'
            ? `${over}: this figure is one data centre's, and the deployment as a whole admits D x it, D being the data centres its traffic reaches (every one of Cloudflare's that clients are routed to).`
            : `${over}: one client's requests normally land in one data centre, so one counter; a client whose requests land in D data centres (anycast moving it, or one address used from several places) gets D x this.`,
      };
    }
    case 'aws-api-gateway':
      return rule.identity === 'ip'
        ? {
            k: 1,
            routes: 1,
            estimated: true,
            text: `AWS WAF keeps one count per client IP over its trailing evaluation window across its fleet, an estimate that weighs recent requests more, not a log of each request. ${WAF_DETECTION_TEXT}.`,
          }
        : awsThrottleCounters(design, rule, seconds);
    case 'none':
      return { k: 1, routes: 1, text: 'One counter.' };
  }
  // Kong runs one rate-limiting instance per route: a rule on several routes counts on each
  const routes = design.scope.gateway === 'kong' ? Math.max(1, kongRoutePlan(design.rules).routesPerRule.get(rule.id) ?? 1) : 1;
  const onRoutes =
    routes > 1
      ? ` Its endpoints sit on ${fmt(routes)} Kong routes in gateway/kong.yaml (different methods or rules), each with its own counter: R = ${fmt(routes)}.`
      : '';
  // a shared count (Envoy's rate limit service, Kong's policy redis) is one for the whole fleet
  if (counter.shared) {
    return {
      k: 1,
      routes,
      text:
        (design.scope.gateway === 'kong'
          ? `${counter.component} keeps the counter in Redis (policy redis): one counter for all nodes.`
          : 'The rate limit service (envoyproxy/ratelimit) keeps the count in its own Redis for every Envoy node: one counter for all nodes.') +
        onRoutes,
    };
  }
  const what =
    design.scope.gateway === 'kong'
      ? `${counter.component} (policy ${kongPolicy(rule, design.scope)})`
      : design.scope.gateway === 'envoy'
        ? "Envoy's local rate limit filter"
        : counter.component;
  const gatewayName = design.scope.gateway === 'nginx' ? 'nginx' : design.scope.gateway === 'envoy' ? 'Envoy' : 'Kong';
  const kText =
    stated !== undefined
      ? `; K = ${fmt(nodes)} ${gatewayName} node${nodes === 1 ? '' : 's'}, as the answers give them (stack.gatewayNodes).`
      : `. The answers do not say how many ${gatewayName} nodes run (stack.gatewayNodes): K = ${fmt(nodes)} is assumed, one per application instance (stack.instances); each further ${gatewayName} node admits this much again.`;
  const share = rule.perNode
    ? ` Each node ships its share of the stated ${fmt(rule.rate?.requests ?? 0)}: ${fmt(rule.perNode.rate.requests)} per ${periodWords(rule.perNode.rate.periodSeconds)}${rule.perNode.burst !== null ? `, burst ${fmt(rule.perNode.burst)}` : ''} (the stated figures divided by K, rounded down${fleetOverStated(rule) ? ', but never below what one node admits, so K x the share is more than the stated figure' : ''}).`
    : '';
  return { k: nodes, routes, text: `${what} keeps its counter in each node${kText}${share}${onRoutes}` };
}

/**
 * An API Gateway throttle: a usage plan's is one token bucket per API key; a stage's (or a
 * method's) applies to each API method on its own, so its methods multiply it. Every throttle
 * sits under the account's Regional limit, which caps what passes in the period.
 */
function awsThrottleCounters(
  design: FleetDesign,
  rule: MatrixRule,
  period: number,
): { k: number; routes: number; routesUnit: string; cap: { worstCase: number; formula: string }; text: string } {
  const cap = {
    worstCase: wholeRequests(AWS_ACCOUNT_THROTTLE.burst + AWS_ACCOUNT_THROTTLE.rps * period),
    formula: `${fmt(AWS_ACCOUNT_THROTTLE.burst)} + ${fmt(AWS_ACCOUNT_THROTTLE.rps)}/s x ${periodWords(period)}`,
  };
  const best = 'AWS applies throttles on a best-effort basis, as targets rather than exact ceilings.';
  if (rule.identity === 'api-key') {
    // the design's one usage plan: its own Throttle (every method counts against one bucket per
    // key), or method throttles, each a bucket per key and method
    const plan = awsKeyPlan(design.rules);
    const keys = plan.keysOf.get(rule.id) ?? [];
    const m = Math.max(1, keys.length);
    return {
      k: 1,
      routes: plan.planLevel === rule.id ? 1 : m,
      routesUnit: 'API methods',
      cap,
      text:
        plan.planLevel === rule.id || keys.length === 0
          ? `AWS API Gateway throttles each API key with a token bucket across its fleet (the usage plan's own Throttle): one counter, under ${AWS_ACCOUNT_LIMIT_TEXT}. ${best}`
          : `AWS API Gateway throttles each API key on each method the usage plan names with a token bucket of its own (method throttles${keys.length > 1 ? `: ${fmt(keys.length)} methods here, so one key passes up to ${fmt(keys.length)} x it` : ': one method here, one counter'}), under ${AWS_ACCOUNT_LIMIT_TEXT}. ${best}`,
    };
  }
  // a throttle on routes: one method setting per route and method (GET counts HEAD too); the
  // stage's own: every method of the API but the exempt endpoints
  // a method's own setting overrides the stage's on that method: the endpoints of route-scoped
  // throttles leave the stage's count
  const own = design.rules.filter((r) => r.layer === 'edge' && r.identity === 'global' && r.routes.length > 0 && r.id !== rule.id);
  const ownOf = (e: { method: string; route: string }) =>
    own.filter((r) => r.routes.some((x) => x.method === e.method && x.route === e.route));
  const overridden = rule.routes.length > 0 ? [] : design.scope.endpoints.filter((e) => ownOf(e).length > 0);
  const m = awsThrottleMethods(
    rule,
    rule.routes.length > 0 ? [] : design.scope.endpoints.filter((e) => !design.enforcement.exempt.endpoints.includes(e.name)),
    own,
  );
  const elsewhere =
    overridden.length > 0
      ? ` ${overridden.map((e) => `${e.method} ${e.route}`).join(', ')} ${overridden.length > 1 ? 'have' : 'has'} a method override of its own (${[
          ...new Set(overridden.flatMap((e) => ownOf(e).map((r) => r.id))),
        ].join(', ')}), which replaces the stage's setting there: this rule does not count ${overridden.length > 1 ? 'them' : 'it'}.`
      : '';
  // what one method's bucket admits in the rule's period
  const one = sized(rule) ? perCounter(rule).worstCase : 0;
  return {
    k: 1,
    routes: m,
    routesUnit: 'API methods',
    cap,
    text: `API Gateway applies a stage's throttle to each method on its own (per-API, per-stage limits apply at the method level): ${
      m > 1
        ? `${fmt(m)} methods here, each with its own token bucket at the full rate (API Gateway has no throttle on a stage's total), so a flood spread over them passes up to ${fmt(m)} x it, ${fmt(m)} x ${fmt(one)} = ${fmt(m * one)} in ${periodWords(rule.rate?.periodSeconds ?? period)}`
        : 'one method here, one token bucket'
    }.${elsewhere} All of it sits under ${AWS_ACCOUNT_LIMIT_TEXT}. ${best}`,
  };
}

/**
 * Where the middleware's plain fixed windows start (limiter.ts windowOf: the application's clock
 * divided by the period), so the reader knows when the limit comes back.
 */
function epochWindowsText(periodSeconds: number): string {
  const starts =
    periodSeconds === 86400
      ? 'each day at 00:00 UTC'
      : periodSeconds === 3600
        ? 'at the top of each UTC hour'
        : periodSeconds === 60
          ? 'at each whole minute'
          : `every ${fmt(periodSeconds)} s counted from the Unix epoch`;
  return `The windows are counted from the Unix epoch on the application's clock, so a new one starts ${starts}, whatever the caller's time zone.`;
}

/** What the count of a rule across the deployment reads of the design (a whole Design will do). */
export type FleetDesign = Pick<Design, 'scope' | 'rules'> & { enforcement: Pick<Design['enforcement'], 'exempt'> };

/** Whether a rule's edge counter is nginx's limit_req (a bucket at an nginx gateway): one request more at once than its burst. */
function limitReq(design: FleetDesign, rule: MatrixRule): boolean {
  return rule.layer === 'edge' && design.scope.gateway === 'nginx' && rule.algorithm !== undefined && BUCKETS.includes(rule.algorithm);
}

/**
 * The most one key of a rule gets through within any stretch of `seconds` across the whole
 * deployment: `each` at one counter (an edge rule's share where each node ships one, nginx's
 * limit_req one request over its burst), times the `counters` one key meets (gateway nodes
 * counting on their own, Kong routes or API Gateway methods, application instances counting in
 * their own memory), under AWS's account limit. The worst-case table's figure over one period;
 * the migration section's over the old limiter's window. Undefined without a rate.
 */
export function fleetAdmittedWithin(
  design: FleetDesign,
  rule: MatrixRule,
  seconds: number,
): { total: number; each: number; counters: number; nodes?: number } | undefined {
  if (!sized(rule)) return undefined;
  if (rule.layer === 'edge') {
    const counted = rule.perNode ? { ...rule, rate: rule.perNode.rate, burst: rule.perNode.burst } : rule;
    const each = limitReq(design, rule)
      ? limitReqAdmittedWithin(counted.rate, typeof counted.burst === 'number' ? counted.burst : 0, seconds)
      : (admittedWithin(counted, seconds) as number);
    const { k, routes, cap } = edgeCounters(design, rule, seconds);
    const total = Math.min(each * k * routes, cap?.worstCase ?? Number.POSITIVE_INFINITY);
    return { total, each, counters: k * routes, ...(k > 1 ? { nodes: k } : {}) };
  }
  const each = admittedWithin(rule, seconds) as number;
  const n = rule.primitive === 'in-process' && design.scope.topology === 'horizontal' ? design.scope.instances : 1;
  return { total: each * Math.max(1, n), each, counters: Math.max(1, n) };
}

/** Every store-backed or in-process rule of the middleware and the outbound client, and every edge rule. */
const byRule: WorstCaseKind = {
  kind: 'rule',
  rows(design) {
    const rows: WorstCaseRow[] = [];
    for (const rule of design.rules) {
      if (!sized(rule) || rule.layer === undefined) continue;
      // a rule its gateway counts nowhere admits nothing less than the other rules do: no row (the table says why)
      if (rule.notEnforced?.all) continue;
      // a rule each node counts with K given: each node's share (perNode) is what one counter admits
      const base =
        rule.layer === 'edge' && rule.perNode
          ? perCounter({ ...rule, rate: rule.perNode.rate, burst: rule.perNode.burst })
          : perCounter(rule);
      const periodText = rule.rate.periodText ?? periodWords(rule.rate.periodSeconds);
      // the count is fleetAdmittedWithin's (the migration section reads the same function); the formula says how
      const fleet = fleetAdmittedWithin(design, rule, rule.rate.periodSeconds) as { total: number; each: number; nodes?: number };
      const worstCase = fleet.total;
      let formula = base.formula;
      let basis = base.basis;
      let location: string | undefined;
      const perProcess = rule.primitive === 'in-process';
      if (rule.layer === 'edge') {
        const { k, routes, routesUnit, cap, perLocation, text, estimated } = edgeCounters(design, rule);
        if (perLocation) location = perLocation;
        if (limitReq(design, rule)) {
          // limit_req admits the request that finds the key's state empty and burst more behind it
          const burst = rule.perNode ? rule.perNode.burst : rule.burst;
          formula = `1 + ${base.formula}`;
          basis =
            typeof burst === 'number'
              ? 'nginx admits one request plus its burst at once (burst counts the excess), then one per interval at the rate.'
              : 'nginx admits the first request at once (no burst), then one per interval at the rate.';
        }
        if (k > 1) {
          formula = `(${formula}) x ${fmt(k)} nodes`;
        }
        if (routes > 1) {
          formula = `${k > 1 ? formula : `(${formula})`} x ${fmt(routes)} ${routesUnit ?? 'Kong routes'}`;
        }
        basis = estimated ? text : `${basis} ${text}`;
        // the figure is the fleet's: say what one node admits, the number the node's own file holds to
        if (fleet.nodes !== undefined && !cap) basis = `${basis} One node admits ${fmt(fleet.each)} of the ${fmt(worstCase)}.`;
        if (rule.notEnforced)
          basis = `${basis} Not counted on ${rule.notEnforced.routes.join(', ')}: there only the other rules limit a client.`;
        if (cap && worstCase === cap.worstCase && cap.worstCase < base.worstCase * k * routes) {
          formula = `min(${formula}, ${cap.formula})`;
          basis = `${basis} Here the account limit is the lower figure: AWS passes no more than ${fmt(cap.worstCase)} in ${periodWords(rule.rate.periodSeconds)}.`;
        }
      } else if (perProcess && design.scope.topology === 'horizontal' && design.scope.instances > 1) {
        const n = design.scope.instances;
        formula = `(${base.formula}) x ${fmt(n)} instances`;
        basis = `${base.basis} The counter lives in each process, so each of the ${fmt(n)} instances admits it.`;
      } else if (rule.primitive === 'incr-then-expire' || rule.primitive === 'get-then-set') {
        basis = `${base.basis} Only if the check and the consume were one step: with ${rule.primitive}, concurrent requests read the same count and pass together beyond it.`;
      }
      const label = algorithmLabel(rule);
      const shownAs = label ?? runAsGcraLabel(rule);
      if (rule.tier === 'quota') {
        basis = `${basis} The quota ${label ? 'rolls by whole days' : 'resets on its period'}${rule.quotaBackstop ? `; ${fmt(rule.rate.requests)} is where the limiter refuses (the quota of ${fmt(rule.quotaBackstop.quota)} only warns or bills past it)` : ''}.`;
      }
      rows.push({
        ruleId: rule.id,
        kind: 'rule',
        layer: rule.layer,
        algorithm: rule.algorithm,
        ...(shownAs ? { algorithmLabel: shownAs } : {}),
        periodSeconds: rule.rate.periodSeconds,
        periodText,
        stated: rule.rate.requests,
        worstCase,
        formula: location ? `${formula} per ${location}` : formula,
        ...(location ? { perLocation: location } : {}),
        basis,
        measurable: rule.layer === 'middleware' && rule.primitive === 'redis-lua' && measuredOnStore(rule),
      });
    }
    return rows;
  },
};

/** The local + Redis hybrid: each instance's local bucket admits before Redis has counted. */
const hybrid: WorstCaseKind = {
  kind: 'hybrid',
  rows(design) {
    const h = design.enforcement.hybrid;
    if (!h) return [];
    return design.rules.filter(sized).flatMap((rule) => {
      if (!h.ruleIds.includes(rule.id)) return [];
      const label = runAsGcraLabel(rule);
      return [
        {
          ruleId: rule.id,
          kind: 'hybrid',
          layer: 'middleware (local + store)' as const,
          algorithm: rule.algorithm,
          ...(label ? { algorithmLabel: label } : {}),
          periodSeconds: rule.rate.periodSeconds,
          periodText: rule.rate.periodText ?? periodWords(rule.rate.periodSeconds),
          stated: rule.rate.requests,
          ...withLocalBuckets(perCounter(rule), h.instances, h.localBurst, storeServerName(design.scope.store)),
          measurable: true,
        },
      ];
    });
  },
};

/** The in-memory fallback: while the store is down, each instance counts a fail-open rule on its own. */
const memoryFallback: WorstCaseKind = {
  kind: 'memory-fallback',
  rows(design) {
    const f = design.enforcement.fallback;
    if (!f) return [];
    return design.rules.filter(sized).flatMap((rule) => {
      if (!f.ruleIds.includes(rule.id)) return [];
      // the same per-counter figure design/access.ts gives the fallback table, times the instances
      const label = algorithmLabel(rule) ?? runAsGcraLabel(rule);
      return [
        {
          ruleId: rule.id,
          kind: 'memory-fallback',
          layer: 'middleware (in-memory fallback)' as const,
          algorithm: rule.algorithm,
          ...(label ? { algorithmLabel: label } : {}),
          periodSeconds: rule.rate.periodSeconds,
          periodText: rule.rate.periodText ?? periodWords(rule.rate.periodSeconds),
          stated: rule.rate.requests,
          ...inMemoryFallback(perCounter(rule), f.instances),
          // verify stops a Redis it started and runs N limiters with the fallback against it (the
          // algorithms it measures at the store, the same in memory)
          measurable: rule.primitive === 'redis-lua' && measuredOnStore(rule),
        },
      ];
    });
  },
};

/**
 * The sources of rows, in table order. Add a kind here (and nothing else) to show more extra
 * admissions: its rows sort under their rule with the others.
 */
export const WORST_CASE_KINDS: readonly WorstCaseKind[] = [byRule, hybrid, memoryFallback];

/** The worst-case table of a design: rows by rule (matrix order), each rule's kinds in WORST_CASE_KINDS order. */
export function worstCaseTable(design: Design, kinds: readonly WorstCaseKind[] = WORST_CASE_KINDS): WorstCaseRow[] {
  const rows = kinds.flatMap((k) => k.rows(design));
  const order = new Map(design.rules.map((r, i) => [r.id, i]));
  const kindOrder = new Map(kinds.map((k, i) => [k.kind, i]));
  return rows
    .map((row, i) => ({ row, i }))
    .sort(
      (a, b) =>
        (order.get(a.row.ruleId) ?? Number.MAX_SAFE_INTEGER) - (order.get(b.row.ruleId) ?? Number.MAX_SAFE_INTEGER) ||
        (kindOrder.get(a.row.kind) ?? 0) - (kindOrder.get(b.row.kind) ?? 0) ||
        a.i - b.i,
    )
    .map(({ row }) => row);
}

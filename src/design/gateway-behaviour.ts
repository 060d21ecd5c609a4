/**
 * What each gateway's generated configuration does with the edge rules, stated once: how a rule
 * is switched off, how the rules run during the shadow step, what body a refusal carries, and
 * where Kong keeps a rule's counters.
 * The rollout and the response contract say it to the reader; the gateway files quote it.
 */
import { gatewayName, regexLiteral } from '../escape/index.js';
import { formatNumber, joinAnd, periodName, ratePer, rpsText, wholeRate } from '../format.js';
import { type CompiledRoute, compileRoute, moreSpecific, routesOverlap } from '../runtime/middleware/routes.js';
import type { Algorithm, EndpointClass, FailMode, Gateway, MatrixRule, Scope } from './model.js';

/**
 * Where Kong's rate-limiting plugin keeps an edge rule's counters (its `policy`): the global
 * ceiling in each node's memory (local), a per-caller rule in the limiter's Redis when the
 * design has a store (redis), else in each node too.
 */
export function kongPolicy(rule: Pick<MatrixRule, 'identity'>, scope: Pick<Scope, 'store'>): 'local' | 'redis' {
  return rule.identity === 'global' || scope.store === 'none' ? 'local' : 'redis';
}

/** Whether Kong carries an edge rule as the ceiling (rate-limiting-advanced on the service): no identity, every route. */
export function kongCeiling(rule: Pick<MatrixRule, 'identity'> & Partial<Pick<MatrixRule, 'routes'>>): boolean {
  return rule.identity === 'global' && (rule.routes?.length ?? 0) === 0;
}

/** What turning an edge rule off takes on its gateway. */
export function edgeKillSwitchHow(rule: Pick<MatrixRule, 'id' | 'identity'>, gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'comment out its limit_req line in gateway/nginx-server.conf and reload nginx (a reload, no application deploy)';
    case 'envoy':
      return envoyCounter(rule) === 'local'
        ? 'set the runtime key ratelimit.edge_local.enabled to 0 (a runtime change: no reload, no application deploy); it switches off the local rate limit filter, which counts every edge rule of no identity'
        : `remove its rate_limits entries (descriptor rl_rule=${rule.id}) from the Envoy configuration and push it (xDS or a reload; no application deploy)`;
    case 'kong':
      return "set its plugin's enabled to false and apply the configuration (no application deploy)";
    case 'cloudflare':
      return "set its rule's enabled to false (a Rulesets API update, no application deploy)";
    case 'aws-api-gateway':
      return rule.identity === 'ip'
        ? "set its WAF rule's action to Count (counts, refuses nothing) and deploy the template (no application deploy)"
        : 'remove its throttle from the stage method settings or usage plan and deploy the template (no application deploy)';
    default:
      return `remove it from the ${gateway} configuration and apply it (a gateway change, no application deploy)`;
  }
}

/** How the edge rules run during the shadow step (`middleware`: while the middleware rules are in shadow mode beside them). */
export function edgeShadowHow(gateway: Gateway, middleware = true): string {
  switch (gateway) {
    case 'nginx':
      return 'the generated nginx configuration runs them with limit_req_dry_run on, which counts and logs the would-be refusals and refuses none; set it to off to enforce them';
    case 'envoy':
      return 'the generated Envoy configuration counts them without refusing (the local filter enforced at 0% under the runtime key ratelimit.edge_local.enforced, the rate limit service in shadow_mode); raise the key to 100 and remove shadow_mode to enforce them';
    case 'kong':
      return middleware
        ? "Kong's rate limit plugins have no report-only mode: deploy the generated kong.yaml with each rule's plugin enabled: false until this step is over, or keep the edge rules on while the middleware rules run in shadow (they are coarse and protect capacity)"
        : "Kong's rate limit plugins have no report-only mode, so there is no shadow step at the edge: deploy the generated kong.yaml with each rule's plugin enabled: false (nothing is counted) until this step is over, or enforce the rules from the start (they are coarse and protect capacity)";
    case 'cloudflare':
      return 'set each rule\'s action to "log" (Enterprise plans) or its enabled to false until this step is over; the generated rules block';
    case 'aws-api-gateway':
      return "set the WAF rules' action to Count until this step is over; stage and usage-plan throttles have no report-only mode, so keep their current values (or none) until then";
    default:
      return 'leave them out of the gateway configuration until this step is over';
  }
}

/**
 * How the edge rules leave the shadow step once the middleware's rules enforce (they have no
 * flag): undoing what edgeShadowHow held back. nginx's words are the rollout's own (one
 * limit_req_dry_run for every edge rule).
 */
export function edgeEnforceHow(gateway: Exclude<Gateway, 'nginx' | 'none'>): string {
  switch (gateway) {
    case 'envoy':
      return 'raise the runtime key ratelimit.edge_local.enforced to 100 and remove shadow_mode from the rate limit service';
    case 'kong':
      return "set enabled: true on each rule's plugin the shadow step held back in gateway/kong.yaml and apply the configuration";
    case 'cloudflare':
      return 'set each rule the shadow step held back to the action "block" (or enabled true) with a Rulesets API update';
    case 'aws-api-gateway':
      return "set the WAF rules' action back to Block and add the stage throttle the shadow step held back (stageMethodSettings in gateway/aws-api-gateway.json), then deploy the template";
  }
}

/**
 * Retry-After, in seconds, on the 503 a fail-closed limit answers because the place it counts
 * in cannot be reached: the middleware's store, or Envoy's rate limit service (failure_mode_deny
 * true). One value for both, so the response contract gives clients one rule for that 503.
 */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** What the 503 of Envoy's rate limit filter carries while the service is unreachable and it fails closed. */
export function envoyUnavailableReply(retryAfterSeconds: number = STORE_UNAVAILABLE_RETRY_AFTER_SECONDS): string {
  return `503 Service Unavailable with Retry-After: ${retryAfterSeconds} and the problem+json body of the limiter-unavailable 503 (code RATE_LIMITER_UNAVAILABLE)`;
}

/** What the body of the gateway's 429 for an edge rule is ("its body is ..."). */
export function edgeRefusalBody(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
    case 'envoy':
      return 'problem+json (application/problem+json)';
    case 'kong':
      return 'Kong\'s own JSON ({"message": ...}), not problem+json';
    case 'cloudflare':
    case 'aws-api-gateway':
      return 'JSON in the problem+json shape, served as application/json (the gateway offers no other JSON type)';
    default:
      return "the gateway's own";
  }
}

/**
 * How a gateway counts one edge rule: the algorithm its limiter runs, the component, whether the
 * rule has a burst, and where the count lives. `shared` is one count for every gateway node (a
 * service or a store they all ask); otherwise each node counts on its own. `unreachable` says
 * what the rule does while the thing that keeps its shared count cannot be reached (absent: the
 * count is in the node itself and nothing can be unreachable).
 */
export interface EdgeCounter {
  algorithm: Algorithm;
  component: string;
  hasBurst: boolean;
  shared: boolean;
  /** How the rule's key is formed, in the gateway's own terms. */
  key: string;
  /** Where the count lives, for "its counter lives ..." sentences. */
  where: string;
  /** The count lives in the design's own store (Kong's policy redis). */
  inDesignStore?: boolean;
  unreachable?: {
    mode: FailMode;
    text: string;
    /** Why the answers' per-class fail modes are not applied, and the one switch that would fail every route the other way. */
    whyNotPerClass: string;
    flip: string;
  };
  /**
   * A client's count lives as long as the rule's window, not as long as the gateway keeps idle
   * state: envoyproxy/ratelimit and Kong set each counter's expiry to its window, AWS WAF counts
   * an address over its evaluation window. Its state's TTL (and so its cardinality bound) is
   * the window edgeCounter's `window` gives.
   */
  keyLivesForWindow?: boolean;
  /**
   * The product keeps one count per location, not per client: Cloudflare counts a rule in each
   * data centre (cf.colo.id), so what the matrix states is admitted in each one. The location's
   * name ("data centre"); absent when the count is one for the whole deployment or per node.
   */
  perLocation?: string;
  /**
   * How long the product keeps a count, by the window its file enforces, where the product's
   * counting fixes it (Cloudflare weighs the previous period's count: two periods).
   */
  stateSeconds?(w: EdgeWindow): number;
  /**
   * The rate and burst the gateway's file enforces for a rule stated at `rate` with `burst`: the
   * window the product accepts nearest the statement (AWS WAF's evaluation windows, Cloudflare's
   * periods), the burst it applies. The matrix states this, the generators write it.
   */
  window(rate: { requests: number; periodSeconds: number }, burst: number | null): EdgeWindow;
}

/** What a gateway's file enforces for one edge rule, and how it was fitted to the product (absent when it is the rule as stated). */
export interface EdgeWindow {
  requests: number;
  periodSeconds: number;
  burst: number | null;
  fitted?: string;
}

/**
 * How many times what a gateway's window admits is what the rule it was fitted from admits, when
 * it admits more: over time (nginx's 1 per minute for 5 per hour: 12), or within one of the rule's
 * periods, when the window is longer and its whole count may arrive in one of them (a fixed hour
 * of 6 for 1 per 10 minutes: 6); undefined when it admits no more.
 */
export function windowLaxerBy(rate: { requests: number; periodSeconds: number }, w: EdgeWindow): number | undefined {
  const overTime = overTimeRatio(rate, w);
  // (one of its periods admits at least one request, however slow the rate)
  const inOnePeriod = w.periodSeconds > rate.periodSeconds ? w.requests / Math.max(1, rate.requests) : 1;
  const times = Math.max(overTime, inOnePeriod);
  return times > 1 + 1e-9 ? times : undefined;
}

/** How many times the rate a gateway's window admits over time is the rate it was fitted from (12 for nginx's 1 per minute for 5 per hour). */
export function overTimeRatio(rate: { requests: number; periodSeconds: number }, w: { requests: number; periodSeconds: number }): number {
  return w.requests / w.periodSeconds / (rate.requests / rate.periodSeconds);
}

/**
 * The slowest rate a gateway's limiter counts as stated, in words; a rule slower than it runs in
 * the application, since the gateway's file would admit more than the rule. Undefined without a gateway.
 */
export function edgeSlowestText(gateway: Gateway): string | undefined {
  switch (gateway) {
    case 'nginx':
      return "nginx's limit_req counts no fewer than 1 request per minute";
    case 'envoy':
      return "Envoy's rate limit service (its per-client rules) counts a fixed second, minute, hour or day, no fewer than 1 request per day";
    case 'kong':
      return "Kong's rate-limiting plugin (its per-client rules) counts a fixed second, minute, hour or day, no fewer than 1 request per day";
    case 'cloudflare':
      return 'a Cloudflare rule counts no fewer than 1 request in its longest period (1 hour on Enterprise, 10 minutes on Business, 1 minute on Pro, 10 s on Free)';
    case 'aws-api-gateway':
      return 'an AWS WAF rate-based rule counts no fewer than 10 requests per 10 minutes';
    default:
      return undefined;
  }
}

/** The CloudWatch metric name of an edge rule's AWS WAF rate-based rule (its VisibilityConfig.MetricName). */
export function wafMetricName(ruleId: string): string {
  return gatewayName(`rl_${ruleId}`).replace(/[.~]/g, '_');
}

/** The evaluation windows (seconds) an AWS WAF rate-based rule accepts. */
export const WAF_EVALUATION_WINDOWS = [60, 120, 300, 600] as const;
/** The lowest limit an AWS WAF rate-based rule accepts (requests per evaluation window). */
export const WAF_MIN_LIMIT = 10;
/**
 * How long AWS WAF may keep blocking after the rate over its evaluation window has fallen below
 * the limit: it re-estimates the rate periodically, and AWS's rate-based rule caveats say the
 * delay before it notices the decrease is usually below 30 s. A Retry-After of the window alone
 * would send the client back while WAF still blocks it.
 */
export const WAF_UNBLOCK_DELAY_SECONDS = 30;
/**
 * How far an AWS WAF rate-based rule lets a client past its limit, in AWS's terms (the
 * rate-based rule caveats of the AWS WAF Developer Guide): the limit is applied near the set
 * value, not exactly, and between its rate estimates and propagation delays requests can come in
 * above it for up to several minutes before WAF blocks them.
 */
export const WAF_DETECTION_TEXT =
  'WAF applies the limit near the set value, not exactly, and AWS says that requests can keep coming in above it for up to several minutes before WAF detects the rate and blocks them (it re-estimates the rate periodically, and its action takes time to propagate): until then a client passes at whatever rate it sends, so the figure here is what WAF aims at, not a bound';
/** The periods (seconds) a Cloudflare rate limiting rule accepts; plans allow a subset (Free: 10; Pro: 10, 60; Business: 10, 60, 600). */
export const CF_PERIODS = [10, 60, 120, 300, 600, 3600] as const;

const asStated = (rate: { requests: number; periodSeconds: number }, burst: number | null): EdgeWindow => ({ ...rate, burst });

/**
 * An AWS WAF rate-based rule: the rule's own period when WAF accepts it (and its limit is at least
 * the minimum), else the shortest evaluation window whose count reaches the minimum; no burst.
 */
export function wafWindow(rate: { requests: number; periodSeconds: number }): EdgeWindow {
  const rps = rate.requests / rate.periodSeconds;
  if ((WAF_EVALUATION_WINDOWS as readonly number[]).includes(rate.periodSeconds) && rate.requests >= WAF_MIN_LIMIT) {
    return { requests: rate.requests, periodSeconds: rate.periodSeconds, burst: null };
  }
  const period = WAF_EVALUATION_WINDOWS.find((w) => rps * w >= WAF_MIN_LIMIT - 1e-9) ?? 600;
  const requests = Math.max(WAF_MIN_LIMIT, Math.floor(rps * period + 1e-9));
  return {
    requests,
    periodSeconds: period,
    burst: null,
    fitted: `an AWS WAF rate-based rule counts over an evaluation window of 60, 120, 300 or 600 s, with a limit of at least ${WAF_MIN_LIMIT}, and has no burst${requests > rps * period + 1e-9 ? ` (${WAF_MIN_LIMIT} is above the rate's ${ratePer({ requests: rps * period, periodSeconds: period })})` : ''}`,
  };
}

/**
 * A Cloudflare rate limiting rule: the rule's own period when Cloudflare accepts it, else the
 * shortest period that counts at least one request; a stated burst is folded into the count.
 */
export function cloudflareWindow(rate: { requests: number; periodSeconds: number }, burst: number | null): EdgeWindow {
  const rps = rate.requests / rate.periodSeconds;
  const own = (CF_PERIODS as readonly number[]).includes(rate.periodSeconds);
  const period = own ? rate.periodSeconds : (CF_PERIODS.find((p) => rps * p >= 1 - 1e-9) ?? 3600);
  const requests = Math.max(1, Math.floor(rps * period + 1e-9), burst ?? 0);
  if (own && requests === rate.requests) return { requests, periodSeconds: period, burst: null };
  return {
    requests,
    periodSeconds: period,
    burst: null,
    fitted: `a Cloudflare rate limiting rule counts over a period of 10, 60, 120, 300, 600 or 3,600 s (the plan allows a subset: Free 10 s only) and has no burst${burst !== null && requests === burst && requests > Math.floor(rps * period + 1e-9) ? '; the stated burst is the count, so it fits in one period' : ''}`,
  };
}

/**
 * AWS API Gateway's default account-level throttle per Region (its Service Quotas; some Regions
 * default lower): every stage, method and usage-plan throttle of the account sits under it, and
 * AWS caps a setting above it there.
 */
export const AWS_ACCOUNT_THROTTLE = { rps: 10_000, burst: 5_000 } as const;

/** The account limit in words, for the sentences that say a throttle sits under it. */
export const AWS_ACCOUNT_LIMIT_TEXT = `the account's Regional limit (by default ${rpsText(AWS_ACCOUNT_THROTTLE.rps)} with a burst of ${formatNumber(AWS_ACCOUNT_THROTTLE.burst)}, lower in some Regions), which caps any throttle set above it`;

/**
 * The API methods an API Gateway throttle of the global identity counts, each in a token bucket
 * of its own: a route-scoped rule its routes' methods (GET with HEAD); the stage's own every
 * limited endpoint's method but those a route-scoped throttle of `others` overrides there.
 */
export function awsThrottleMethods(
  rule: { routes?: readonly { method: string; route: string }[] | undefined },
  limited: readonly { method: string; route: string }[],
  others: readonly { routes?: readonly { method: string; route: string }[] | undefined }[],
): number {
  const routes = rule.routes ?? [];
  if (routes.length > 0)
    return Math.max(
      1,
      routes.reduce((n, r) => n + (edgeMethods(r.method)?.length ?? 1), 0),
    );
  const overridden = (e: { method: string; route: string }) =>
    others.some((o) => (o.routes ?? []).some((x) => x.method === e.method && x.route === e.route));
  return Math.max(1, limited.filter((e) => !overridden(e)).length);
}

/**
 * The API methods an API Gateway throttle of no identity counts among the design's rules
 * (awsThrottleMethods): the route-scoped global edge rules of `rules` override the stage's own.
 */
export function awsRuleMethods(
  rule: Pick<MatrixRule, 'id' | 'routes'>,
  rules: readonly MatrixRule[],
  limited: readonly { method: string; route: string }[],
): number {
  const others = rules.filter((o) => o.id !== rule.id && o.layer === 'edge' && o.identity === 'global' && o.routes.length > 0);
  return awsThrottleMethods(rule, rule.routes.length > 0 ? [] : limited, others);
}

/**
 * What an API Gateway throttle of no identity over `m` API methods lets through: API Gateway has
 * no throttle on a stage's total, so each method counts the rule's full rate in a bucket of its
 * own (no method is refused below it) and the methods together pass up to m x it, under the
 * account's limit. `total` is that sentence; `remedy`, for the ceiling, how to cap the total.
 * Undefined for one method.
 */
export function awsPerMethod(rule: Pick<MatrixRule, 'id' | 'tier' | 'rate'>, m: number): { total: string; remedy: string } | undefined {
  const rate = rule.rate;
  if (m <= 1 || !rate || !(rate.requests > 0) || !(rate.periodSeconds > 0)) return undefined;
  const rps = rate.requests / rate.periodSeconds;
  const capped =
    m * rps > AWS_ACCOUNT_THROTTLE.rps
      ? ` (the account's Regional limit, by default ${rpsText(AWS_ACCOUNT_THROTTLE.rps)}, caps it there)`
      : '';
  return {
    total: `API Gateway counts ${rule.id}'s rate per API method and has no throttle on a stage's total: each of the ${formatNumber(m)} methods it throttles gets ${rpsText(rps)} of its own, so no method is refused below that, and a flood spread over all of them can pass up to ${formatNumber(m)} x ${rpsText(rps)} = ${rpsText(m * rps)} in total${capped}.`,
    remedy:
      rule.tier === 'ceiling'
        ? `For a true total cap, keep the ceiling in the middleware (a rules entry {"id": "${rule.id}", "layer": "middleware"}: one count in the store for the whole API, in place of the stage throttle), or lower the methods' rates by hand in stageMethodSettings of gateway/aws-api-gateway.json, knowing a hot endpoint is then refused below the ceiling's rate.`
        : '',
  };
}

/** An AWS API Gateway throttle (stage, method or usage plan): a token bucket per second that always has a burst, at least one second of rate. */
export function awsThrottleWindow(rate: { requests: number; periodSeconds: number }, burst: number | null): EdgeWindow {
  // (a rate below one a second is stated as whole requests: 7 per 1,000 s, which the file writes as 0.007 per second)
  const whole = rate.requests / rate.periodSeconds < 1 ? wholeRate(rate) : rate;
  if (burst !== null) return asStated(whole, burst);
  const b = Math.max(1, Math.ceil(rate.requests / rate.periodSeconds));
  return {
    ...whole,
    burst: b,
    fitted: `an API Gateway throttle always has a burst (BurstLimit), here one second of rate`,
  };
}

/** A count that is whole up to rounding noise. */
const isWhole = (n: number): boolean => Math.abs(n - Math.round(n)) < 1e-9;

/** The fixed windows Kong's rate-limiting plugin and envoyproxy/ratelimit count over: a whole count per unit. */
export const FIXED_WINDOW_UNITS = [
  { unit: 'second', seconds: 1 },
  { unit: 'minute', seconds: 60 },
  { unit: 'hour', seconds: 3600 },
  { unit: 'day', seconds: 86400 },
] as const;

export type FixedWindowUnit = (typeof FIXED_WINDOW_UNITS)[number]['unit'];

/** The unit of a period that is one (60 -> minute); undefined for any other period. */
export function fixedWindowUnit(periodSeconds: number): FixedWindowUnit | undefined {
  return FIXED_WINDOW_UNITS.find((u) => u.seconds === periodSeconds)?.unit;
}

/**
 * A fixed window of one unit (second, minute, hour or day) with a whole count, no burst: the
 * rule's own period when it is a unit and its count is whole, else the longest unit not longer
 * than the period that counts at least one request (the shortest that does, for a rate slower
 * than one per period), the count rounded down. `product` names what counts ("Kong's
 * rate-limiting plugin").
 */
export function unitWindow(rate: { requests: number; periodSeconds: number }, burst: number | null, product: string): EdgeWindow {
  const rps = rate.requests / rate.periodSeconds;
  const noBurst = burst !== null ? `; the stated burst (${formatNumber(burst)}) does not apply` : '';
  if (fixedWindowUnit(rate.periodSeconds) !== undefined && rate.requests >= 1 && isWhole(rate.requests)) {
    const same = { requests: Math.round(rate.requests), periodSeconds: rate.periodSeconds, burst: null };
    return burst === null ? same : { ...same, fitted: `${product} counts a fixed window and has no burst${noBurst}` };
  }
  const fits = FIXED_WINDOW_UNITS.filter((u) => rps * u.seconds >= 1 - 1e-9);
  const unit = [...fits].reverse().find((u) => u.seconds <= rate.periodSeconds) ?? fits[0] ?? FIXED_WINDOW_UNITS[3];
  const exact = rps * unit.seconds;
  const requests = Math.max(1, Math.floor(exact + 1e-9));
  return {
    requests,
    periodSeconds: unit.seconds,
    burst: null,
    fitted: `${product} counts a whole number of requests per second, minute, hour or day (a fixed window) and has no burst${
      isWhole(exact)
        ? ''
        : ` (${ratePer({ requests: exact, periodSeconds: unit.seconds }, true)} rounded ${requests > exact ? `up to 1 per ${unit.unit}` : 'down'})`
    }${noBurst}`,
  };
}

/**
 * nginx's limit_req: a rate of whole requests per second or per minute (the leaky bucket drains
 * at it), the stated burst kept. A rate that is one of these is kept as stated; else the count
 * per second rounded down (from one a second), or per minute rounded down, at least 1.
 */
export function nginxWindow(rate: { requests: number; periodSeconds: number }, burst: number | null): EdgeWindow {
  const rps = rate.requests / rate.periodSeconds;
  if ((rps >= 1 && isWhole(rps)) || (rps * 60 >= 1 && isWhole(rps * 60))) return { ...rate, burst };
  const perSecond = rps >= 1;
  const exact = perSecond ? rps : rps * 60;
  const requests = Math.max(1, Math.floor(exact + 1e-9));
  return {
    requests,
    periodSeconds: perSecond ? 1 : 60,
    burst,
    fitted: `nginx's limit_req counts a whole number of requests per second or per minute (${ratePer({ requests: exact, periodSeconds: perSecond ? 1 : 60 }, true)} rounded ${requests > exact ? `up to 1 per ${perSecond ? 'second' : 'minute'}` : 'down'})`,
  };
}

/**
 * A fixed window of any whole number of seconds with a whole count, no burst (Kong's
 * rate-limiting-advanced): the rule's numbers made whole (wholeRate).
 */
export function secondsWindow(rate: { requests: number; periodSeconds: number }, burst: number | null, product: string): EdgeWindow {
  const w = wholeRate(rate);
  const requests = Math.max(1, Math.floor(w.requests + 1e-9));
  const periodSeconds = Math.max(1, Math.round(w.periodSeconds));
  const out = { requests, periodSeconds, burst: null };
  const changed = requests !== w.requests || periodSeconds !== w.periodSeconds;
  if (!changed && burst === null) return out;
  return {
    ...out,
    fitted: `${product} counts a whole number of requests over a whole number of seconds (a fixed window) and has no burst${
      burst !== null ? `; the stated burst (${formatNumber(burst)}) does not apply` : ''
    }`,
  };
}

/** Envoy refuses a local rate limit fill interval shorter than this. */
export const ENVOY_MIN_FILL_MS = 50;

/**
 * Envoy token bucket for a rate and burst: `tokens_per_fill` every `fill_interval`, refilled
 * as smoothly as Envoy allows while keeping the average rate exact: the shortest interval that
 * is a whole multiple of `baseMs` and holds a whole number of tokens. Envoy wants every
 * descriptor's interval to be a multiple of the filter-wide bucket's, so descriptors pass
 * that interval as `baseMs`. max_tokens is the burst, never below tokens_per_fill (a smaller
 * bucket would cap the refill and lower the rate).
 */
export function envoyTokenBucket(
  rate: { requests: number; periodSeconds: number },
  burst: number | null,
  baseMs: number = ENVOY_MIN_FILL_MS,
): {
  max_tokens: number;
  tokens_per_fill: number;
  fill_interval: string;
} {
  const base = Math.max(ENVOY_MIN_FILL_MS, Math.round(baseMs));
  const periodMs = Math.round(rate.periodSeconds * 1000);
  const whole = (n: number): boolean => n >= 1 && isWhole(n);
  // a multiple of both the period and the base always holds rate.requests x k tokens
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const lcm = (periodMs / gcd(periodMs, base)) * base;
  let intervalMs = lcm;
  let tokens = (rate.requests * lcm) / periodMs;
  for (let f = base; f <= Math.max(lcm, periodMs) * 4; f += base) {
    const n = (rate.requests * f) / periodMs;
    if (whole(n)) {
      tokens = n;
      intervalMs = f;
      break;
    }
  }
  // (whole by construction; rounded down, never up past the stated rate, should a rate not be)
  const perFill = Math.max(1, Math.floor(tokens + 1e-9));
  return {
    max_tokens: Math.max(perFill, burst ?? perFill),
    tokens_per_fill: perFill,
    fill_interval: `${Number((intervalMs / 1000).toFixed(3))}s`,
  };
}

/**
 * An Envoy local rate limit token bucket: the rule's rate as a whole count over whole seconds
 * (wholeRate, so the bucket's fill keeps it exact), its burst the bucket's max_tokens, which is
 * never below one fill (envoyTokenBucket). A descriptor fills at a multiple of the filter-wide
 * bucket's interval (`baseMs`, envoyFilterFillMs): one fill then holds more tokens, and the burst
 * the design states is the max_tokens the file ships.
 */
export function envoyLocalWindow(
  rate: { requests: number; periodSeconds: number },
  burst: number | null,
  baseMs: number = ENVOY_MIN_FILL_MS,
): EdgeWindow {
  const w = wholeRate(rate);
  const bucket = envoyTokenBucket(w, burst, baseMs);
  if (bucket.max_tokens === burst) return { ...w, burst };
  const filterWide =
    Math.round(baseMs) > ENVOY_MIN_FILL_MS
      ? `, as a descriptor fills at a multiple of the filter-wide bucket's ${Number((Math.round(baseMs) / 1000).toFixed(3))} s interval (the ceiling's)`
      : '';
  return {
    ...w,
    burst: bucket.max_tokens,
    fitted: `Envoy's local token bucket always holds at least one fill (${formatNumber(bucket.tokens_per_fill)} token${bucket.tokens_per_fill === 1 ? '' : 's'} every ${bucket.fill_interval}${filterWide}): max_tokens ${formatNumber(bucket.max_tokens)}${burst !== null ? `, not the stated ${formatNumber(burst)}` : ''}`,
  };
}

/**
 * The fill interval (ms) of the Envoy local filter's own bucket, which every descriptor's
 * interval must be a multiple of: the ceiling's (the first edge rule Envoy counts locally on
 * every route), else the shortest Envoy accepts.
 */
export function envoyFilterFillMs(rules: readonly MatrixRule[]): number {
  const ceiling = rules.find(
    (r) =>
      r.layer === 'edge' &&
      envoyCounter(r) === 'local' &&
      r.routes.length === 0 &&
      r.rate !== undefined &&
      r.rate.requests > 0 &&
      r.rate.periodSeconds > 0,
  );
  if (!ceiling?.rate) return ENVOY_MIN_FILL_MS;
  // the bucket each node ships: its share of the ceiling when the answers give K
  const rate = ceiling.perNode?.rate ?? ceiling.rate;
  const given = ceiling.perNode ? ceiling.perNode.burst : ceiling.burst;
  const burst = typeof given === 'number' && given > 0 ? Math.ceil(given) : null;
  const w = envoyLocalWindow(rate, burst);
  const fill = envoyTokenBucket(w, w.burst).fill_interval;
  return Math.round(Number(fill.replace(/s$/, '')) * 1000);
}

/**
 * Where Envoy counts an edge rule: a global-identity rule (the ceiling, or a route-scoped one)
 * in each node's local rate limit filter, a per-client rule in the global rate limit service
 * (envoyproxy/ratelimit), whose fixed windows in its own Redis every Envoy node shares.
 */
export function envoyCounter(rule: Pick<MatrixRule, 'identity'>): 'local' | 'service' {
  return rule.identity === 'global' || rule.identity === undefined ? 'local' : 'service';
}

/** stat_prefix of the generated Envoy local rate limit filter (its stats carry it as a Prometheus label). */
export const ENVOY_LOCAL_STAT_PREFIX = 'rl_edge_local';

/** The Envoy cluster the generated routes send the application's requests to (the rate limit filter's stats carry it). */
export const ENVOY_APP_CLUSTER = 'app';

/**
 * Whether Envoy's rate limit filter refuses requests while the rate limit service is unreachable
 * (failure_mode_deny). It is one setting of the filter, for every rule the service counts, so it
 * cannot follow the answers rule by rule: true when any of them asks to fail closed (the
 * strictest asked for, scope.envoyDenyRules), else false.
 */
export function envoyFailureModeDeny(scope: Partial<Pick<Scope, 'envoyDenyRules'>>): boolean {
  return (scope.envoyDenyRules?.length ?? 0) > 0;
}

/**
 * The rules Envoy's rate limit service counts whose answers ask them to fail closed: a
 * hand-written rule's stated failMode (its id, or the id it was split from by cost), else the
 * answers' modes for the classes its endpoints belong to, the strictest where they differ.
 */
export function envoyClosedRules(
  scope: Pick<Scope, 'gateway' | 'failureByClass' | 'endpoints'>,
  rules: readonly MatrixRule[],
  stated: readonly { id: string; failMode?: FailMode | undefined }[],
): string[] {
  if (scope.gateway !== 'envoy') return [];
  return rules
    .filter((r) => r.layer === 'edge' && envoyCounter(r) === 'service' && r.rate !== undefined)
    .filter((r) => {
      const own = stated.find((h) => h.failMode !== undefined && (h.id === r.id || r.id.startsWith(`${h.id}-cost-`)));
      if (own?.failMode) return own.failMode === 'closed';
      const named = scope.endpoints.filter((e) => r.endpoints.includes(e.name)).map((e) => e.class);
      const classes = named.length > 0 ? named : r.endpointClass === 'all' ? scope.endpoints.map((e) => e.class) : [r.endpointClass];
      return answeredEdgeMode(scope, classes) === 'closed';
    })
    .map((r) => r.id);
}

/** What the rules Envoy's rate limit service counts do while it is unreachable: failure_mode_deny decides for all of them. */
function envoyUnreachable(scope: Partial<Pick<Scope, 'envoyDenyRules'>>): NonNullable<EdgeCounter['unreachable']> {
  const deny = envoyFailureModeDeny(scope);
  const closed = scope.envoyDenyRules ?? [];
  return {
    mode: deny ? 'closed' : 'open',
    text: `while the rate limit service is unreachable Envoy ${deny ? 'refuses every request it covers' : 'lets every request through uncounted'} (failure_mode_deny ${deny})${deny ? `, answering ${envoyUnavailableReply()}` : ''}`,
    whyNotPerClass: deny
      ? `Envoy's failure_mode_deny is one setting of the rate limit filter, not of a route, and it is true because ${formatList(closed)} ${closed.length === 1 ? 'is' : 'are'} asked to fail closed (the strictest mode the answers ask for wins)`
      : "Envoy's failure_mode_deny is one setting of the rate limit filter, not of a route",
    flip: `failure_mode_deny ${!deny} in gateway/envoy-local-ratelimit.yaml`,
  };
}

function formatList(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** How the design's gateway counts one edge rule (the matrix states it, codegen and the worst case follow it). */
export function edgeCounter(
  rule: Pick<MatrixRule, 'identity'> & Partial<Pick<MatrixRule, 'routes'>>,
  scope: Pick<Scope, 'gateway' | 'store'> & Partial<Pick<Scope, 'envoyDenyRules'>>,
): EdgeCounter {
  const perNode = (where: string) => ({ shared: false, where });
  switch (scope.gateway) {
    case 'nginx':
      return {
        algorithm: 'leaky-bucket',
        component: 'nginx limit_req',
        hasBurst: true,
        key:
          rule.identity === 'global' ? 'nginx:global (one counter per nginx node)' : 'nginx:client-ip ($binary_remote_addr after real-IP)',
        ...perNode('in each nginx node (its limit_req zone)'),
        window: nginxWindow,
      };
    case 'envoy':
      if (envoyCounter(rule) === 'local') {
        return {
          algorithm: 'token-bucket',
          component: 'Envoy local rate limit filter',
          hasBurst: true,
          key: 'envoy:global (one token bucket per Envoy node)',
          ...perNode('in each Envoy node (its local rate limit filter)'),
          window: envoyLocalWindow,
        };
      }
      return {
        algorithm: 'fixed-window',
        component: 'Envoy global rate limit filter and the rate limit service (envoyproxy/ratelimit)',
        hasBurst: false,
        shared: true,
        key: `envoy ratelimit service: descriptor rl_rule=<rule id>, ${rule.identity === 'ip' ? 'remote_address (the client IP)' : 'the API key header'}`,
        where: "in the rate limit service's own Redis (not the design's store), one count that every Envoy node shares",
        keyLivesForWindow: true,
        window: (rate, burst) => unitWindow(rate, burst, 'the rate limit service (envoyproxy/ratelimit)'),
        unreachable: envoyUnreachable(scope),
      };
    case 'kong': {
      const redis = kongPolicy(rule, scope) === 'redis';
      // the ceiling (no identity, every route) sits on the service in rate-limiting-advanced,
      // which counts any whole number of seconds; the other rules in rate-limiting, per unit
      const ceiling = kongCeiling(rule);
      return {
        algorithm: 'fixed-window',
        component: ceiling ? "Kong's rate-limiting-advanced plugin" : "Kong's rate-limiting plugin",
        hasBurst: false,
        key: rule.identity === 'global' ? 'kong:global (limit_by service)' : 'kong:client-ip (limit_by ip)',
        ...(redis
          ? {
              shared: true,
              where: "in the design's store (Kong's policy redis), one count that every Kong node shares",
              inDesignStore: true,
              unreachable: {
                mode: 'open' as const,
                text: "while Redis is unreachable Kong's plugin lets requests through (fault_tolerant true)",
                whyNotPerClass: 'the edge rule covers every class with one fault_tolerant setting',
                flip: 'fault_tolerant false on its plugins in gateway/kong.yaml',
              },
            }
          : perNode('in each Kong node (policy local)')),
        keyLivesForWindow: true,
        window: ceiling
          ? (rate, burst) => secondsWindow(rate, burst, "Kong's rate-limiting-advanced plugin")
          : (rate, burst) => unitWindow(rate, burst, "Kong's rate-limiting plugin"),
      };
    }
    case 'aws-api-gateway':
      if (rule.identity === 'ip') {
        // API Gateway cannot key on the client address: a WAF rate-based rule counts the
        // requests of the trailing evaluation window per IP
        return {
          algorithm: 'sliding-window-log',
          component: 'AWS WAF rate-based rule',
          hasBurst: false,
          shared: true,
          key: 'aws:WAF rate-based rule per client IP (AggregateKeyType IP)',
          where: 'in AWS WAF, one count per client IP across its fleet',
          keyLivesForWindow: true,
          window: (rate) => wafWindow(rate),
        };
      }
      return {
        algorithm: 'token-bucket',
        component: rule.identity === 'api-key' ? 'AWS API Gateway usage plan throttle' : 'AWS API Gateway stage throttling',
        hasBurst: true,
        shared: true,
        key: rule.identity === 'api-key' ? 'aws:usage plan throttle per API key' : 'aws:stage throttle',
        where:
          rule.identity === 'api-key'
            ? (rule.routes?.length ?? 0) > 0
              ? `in AWS's own fleet-wide counters, one token bucket per API key and method (method throttles of the design's one usage plan), under ${AWS_ACCOUNT_LIMIT_TEXT}`
              : `in AWS's own fleet-wide counters, one token bucket per API key (the Throttle of the design's one usage plan), under ${AWS_ACCOUNT_LIMIT_TEXT}`
            : `in AWS's own fleet-wide counters, one token bucket per API method (API Gateway applies a stage's throttle to each method on its own), under ${AWS_ACCOUNT_LIMIT_TEXT}`,
        window: awsThrottleWindow,
      };
    case 'cloudflare':
      return {
        algorithm: 'sliding-window-counter',
        component: 'Cloudflare rate limiting rule',
        hasBurst: false,
        shared: true,
        key: rule.identity === 'global' ? 'cloudflare:rule (counted per data centre)' : 'cloudflare:ip.src (counted per data centre)',
        where: "in Cloudflare's counters, per data centre",
        perLocation: 'data centre',
        // the sliding window counter weighs the previous period's count: a count lives two periods
        stateSeconds: (w) => 2 * w.periodSeconds,
        window: cloudflareWindow,
      };
    default:
      return {
        algorithm: 'fixed-window',
        component: 'the gateway',
        hasBurst: false,
        key: 'gateway',
        ...perNode('in the gateway'),
        window: (rate) => asStated(rate, null),
      };
  }
}

/**
 * How many gateway nodes keep their own counters: the answers' stack.gatewayNodes, else one per
 * application instance (stack.instances on a horizontal topology), which the document states
 * as an assumption wherever it uses it.
 */
export function gatewayNodes(scope: Pick<Scope, 'gatewayNodes' | 'topology' | 'instances'>): { k: number; stated: boolean } {
  if (scope.gatewayNodes !== undefined) return { k: scope.gatewayNodes, stated: true };
  return { k: scope.topology === 'horizontal' ? scope.instances : 1, stated: false };
}

/** The gateway's name in "K Envoy nodes" sentences. */
export function gatewayNodeName(gateway: Gateway): string {
  return gateway === 'envoy' ? 'Envoy' : gateway === 'kong' ? 'Kong' : gateway;
}

/** Whether an edge rule is counted in each gateway node on its own (nginx, Envoy's local filter, Kong's local policy). */
export function countedPerNode(
  rule: Pick<MatrixRule, 'identity'> & Partial<Pick<MatrixRule, 'routes'>>,
  scope: Pick<Scope, 'gateway' | 'store'>,
): boolean {
  return (scope.gateway === 'nginx' || scope.gateway === 'envoy' || scope.gateway === 'kong') && !edgeCounter(rule, scope).shared;
}

/** A fleet-wide count shared out over K nodes: rounded down, never below one (one node must admit one request). */
function share(n: number, k: number): number {
  return Math.max(1, Math.floor(n / k + 1e-9));
}

/**
 * What each node's file configures for an edge rule of no identity (the ceiling, or a
 * route-scoped ceiling) counted in each node, when the answers give K (stack.gatewayNodes) and
 * it is more than one: the rule's rate and burst divided by K, each through the product's window
 * (`window`: what its file can express). Absent otherwise: a per-client rule keeps its numbers
 * per node (one client's requests may all reach one node), and with K unknown each node keeps
 * the fleet figure and the downstream sizing takes the assumed K (fleetAdmission).
 */
export function perNodeShare(
  rule: Pick<MatrixRule, 'identity' | 'rate' | 'burst' | 'layer'> & Partial<Pick<MatrixRule, 'routes'>>,
  scope: Pick<Scope, 'gateway' | 'store' | 'gatewayNodes'>,
): MatrixRule['perNode'] {
  const k = scope.gatewayNodes;
  if (k === undefined || k <= 1 || rule.layer !== 'edge' || rule.identity !== 'global' || !countedPerNode(rule, scope)) return undefined;
  if (!rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return undefined;
  const burst = typeof rule.burst === 'number' && rule.burst > 0 ? share(rule.burst, k) : null;
  const w = edgeCounter(rule, scope).window({ requests: share(rule.rate.requests, k), periodSeconds: rule.rate.periodSeconds }, burst);
  return { nodes: k, rate: { requests: w.requests, periodSeconds: w.periodSeconds }, burst: w.burst };
}

/**
 * A fleet-wide rule whose share per node was raised to what one node admits at the least (the
 * stated figure divided by K is below it): what the K nodes then admit together, and how many
 * times the stated figure that is (windowLaxerBy); undefined when they admit no more than stated.
 */
export function fleetRaised(
  rule: Partial<Pick<MatrixRule, 'rate' | 'perNode'>>,
): { requests: number; periodSeconds: number; times: number } | undefined {
  const p = rule.perNode;
  if (!p || !rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return undefined;
  const fleet = { requests: p.rate.requests * p.nodes, periodSeconds: p.rate.periodSeconds };
  const times = windowLaxerBy(rule.rate, { ...fleet, burst: null });
  return times === undefined ? undefined : { ...fleet, times };
}

/**
 * Above this many times its stated figure, a fleet-wide rule whose per-node share was raised
 * (fleetRaised) is refused naming stack.gatewayNodes; up to it, the document states the true
 * fleet-wide figure with a warning (fleetRaisedWarning).
 */
export const FLEET_RAISED_LIMIT = 2;

/**
 * A fleet-wide rule's burst as its K nodes admit it together, when each node's share of it was
 * raised to what one node holds at the least (a stated burst below K rounds up to 1 a node, or
 * the product's window holds more): undefined when K x the share is within the stated burst.
 */
export function fleetRaisedBurst(rule: Partial<Pick<MatrixRule, 'burst' | 'perNode'>>): number | undefined {
  const p = rule.perNode;
  if (!p || p.burst === null || typeof rule.burst !== 'number' || !(rule.burst > 0)) return undefined;
  const fleet = p.burst * p.nodes;
  return fleet > rule.burst ? fleet : undefined;
}

/** Whether a fleet-wide rule's K nodes together admit more than it states: its rate (fleetRaised) or its burst (fleetRaisedBurst). */
export function fleetOverStated(rule: Partial<Pick<MatrixRule, 'rate' | 'burst' | 'perNode'>>): boolean {
  return fleetRaised(rule) !== undefined || fleetRaisedBurst(rule) !== undefined;
}

/**
 * The warning a fleet-wide rule gives when its per-node share was raised, so the K nodes admit
 * more than the stated figure (its rate, its burst or both): the figures that are raised, stated
 * and fleet-wide, and what keeps within them; '' when they admit no more than stated.
 */
export function fleetRaisedWarning(
  rule: Pick<MatrixRule, 'id'> & Partial<Pick<MatrixRule, 'rate' | 'burst' | 'perNode'>>,
  gateway: Gateway,
): string {
  const raised = fleetRaised(rule);
  const burst = fleetRaisedBurst(rule);
  const p = rule.perNode;
  if ((!raised && burst === undefined) || !p || !rule.rate) return '';
  const statedBurst = typeof rule.burst === 'number' ? rule.burst : 0;
  const times = (n: number): string => formatNumber(Math.round(n * 10) / 10);
  const stated = joinAnd([
    ...(raised ? [ratePer(rule.rate, true)] : []),
    ...(burst !== undefined ? [`burst ${formatNumber(statedBurst)}`] : []),
  ]);
  const admits = [
    ...(raised ? [`up to ${ratePer(raised, true)}, ${times(raised.times)} times the stated figure`] : []),
    ...(burst !== undefined
      ? [`a burst of up to ${formatNumber(burst)}, ${times(burst / statedBurst)} times the stated ${formatNumber(statedBurst)}`]
      : []),
  ].join(', and ');
  return `Warning: ${rule.id}'s ${stated} divided by the ${formatNumber(p.nodes)} ${gatewayNodeName(gateway)} nodes (stack.gatewayNodes) ${raised && burst !== undefined ? 'are' : 'is'} less than one node admits at the least, so each node ships ${ratePer(p.rate, true)}${p.burst !== null ? `, burst ${formatNumber(p.burst)}` : ''} and the fleet admits ${admits} (uneven load balancing only lowers that). Fewer nodes or a higher figure keep the fleet within it.`;
}

/** A period in words: "second", "minute", "hour", "day", else "N s". */
export function secondsText(s: number): string {
  return periodName(s);
}

/** One line on what uneven load balancing does to a fleet figure shared out per node. */
export const UNEVEN_BALANCE_TEXT =
  'with uneven load balancing a node that gets more than its share refuses early, so the fleet admits less than the ceiling, never more';

/** What the gateway fleet admits per second under the ceiling, and how that follows from the shipped files. */
export interface FleetAdmission {
  /** Requests per second the whole fleet admits at the ceiling's rate (its burst aside). */
  rps: number;
  /** The ceiling's own figure, the promise (requests per second). */
  ceilingRps: number;
  /** What one gateway node admits (its state, such as an nginx zone, holds no more keys than this x TTL); rps when counted in one place. */
  nodeRps: number;
  /** "the ceiling admits 3,000 req/s, 1,000 req/s on each of the 3 Envoy nodes". */
  text: string;
  /**
   * Set where no ceiling counts the endpoints asked about (a rules entry limits the ceiling to
   * others): nothing caps their traffic, so rps bounds no key count there; says which and why.
   */
  uncapped?: string;
}

/**
 * What the ceiling lets through across the whole gateway fleet, as the shipped files configure
 * it: every figure sized from admitted traffic (key counts, memory, maxmemory, the hot shard,
 * the penalty box) takes its rate from here. A ceiling counted in one place (a shared store,
 * the application) admits its rate; one counted in each node admits the per-node rate K times:
 * the answers' K with the per-node share (perNodeShare), else the fleet figure on each of the
 * assumed K nodes (gatewayNodes).
 */
export function fleetAdmission(
  scope: Pick<Scope, 'gateway' | 'store' | 'gatewayNodes' | 'topology' | 'instances'> & Partial<Pick<Scope, 'endpoints'>>,
  ceiling: Pick<MatrixRule, 'identity' | 'rate' | 'layer'> & Partial<Pick<MatrixRule, 'routes' | 'perNode'>>,
  others: readonly { routes?: readonly { method: string; route: string }[] | undefined }[] = [],
  on?: readonly { name: string; method: string; route: string }[],
): FleetAdmission {
  const rate = ceiling.rate ?? { requests: 0, periodSeconds: 1 };
  const ceilingRps = rate.requests / rate.periodSeconds;
  if (ceiling.layer === 'edge' && scope.gateway === 'aws-api-gateway' && ceiling.identity === 'global' && scope.endpoints) {
    // a stage (or method) throttle is a token bucket per API method: its methods multiply it, up to the account's limit
    const limited = scope.endpoints.filter((e) => e.class !== 'health');
    const m = awsThrottleMethods(ceiling, limited, others);
    const rps = Math.min(ceilingRps * m, AWS_ACCOUNT_THROTTLE.rps);
    if (on) {
      // what reaches the endpoints of one rule: the buckets of their own methods, no more
      const routes = ceiling.routes ?? [];
      const counted =
        routes.length > 0
          ? routes
              .filter((r) => on.some((e) => e.method === r.method && e.route === r.route))
              .reduce((n, r) => n + (edgeMethods(r.method)?.length ?? 1), 0)
          : on.filter(
              (e) =>
                limited.some((l) => l.name === e.name) &&
                !others.some((o) => (o.routes ?? []).some((x) => x.method === e.method && x.route === e.route)),
            ).length;
      const to = Math.min(ceilingRps * counted, rps);
      return {
        rps: to,
        ceilingRps,
        nodeRps: to,
        text: `API Gateway admits up to ${rpsText(to)} to ${joinAnd(on.map((e) => e.name))}: the ceiling's ${rpsText(ceilingRps)} on ${counted === 1 ? 'its one API method' : `each of their ${formatNumber(counted)} API methods`} (a stage's throttle counts each method on its own)${to < ceilingRps * counted ? `, capped at the ${rpsText(rps)} the API admits` : ''}`,
      };
    }
    if (m > 1)
      return {
        rps,
        ceilingRps,
        nodeRps: rps,
        text: `API Gateway admits up to ${rpsText(rps)} under the ceiling: its ${rpsText(ceilingRps)} on each of the ${formatNumber(m)} API methods it throttles (a stage's throttle counts each method on its own)${rps < ceilingRps * m ? `, capped by the account's Regional limit of ${rpsText(AWS_ACCOUNT_THROTTLE.rps)}` : ''}`,
      };
  }
  if (ceiling.layer !== 'edge' || !countedPerNode(ceiling, scope)) {
    return { rps: ceilingRps, ceilingRps, nodeRps: ceilingRps, text: `the ceiling admits ${rpsText(ceilingRps)}` };
  }
  const name = gatewayNodeName(scope.gateway);
  if (ceiling.perNode) {
    const node = ceiling.perNode.rate.requests / ceiling.perNode.rate.periodSeconds;
    const k = ceiling.perNode.nodes;
    return {
      rps: node * k,
      ceilingRps,
      nodeRps: node,
      text: `the ceiling admits ${rpsText(node * k)}, ${rpsText(node)} on each of the ${formatNumber(k)} ${name} nodes`,
    };
  }
  const { k, stated } = gatewayNodes(scope);
  if (k <= 1) return { rps: ceilingRps, ceilingRps, nodeRps: ceilingRps, text: `the ceiling admits ${rpsText(ceilingRps)}` };
  return {
    rps: ceilingRps * k,
    ceilingRps,
    nodeRps: ceilingRps,
    text: stated
      ? `the ceiling admits ${rpsText(ceilingRps * k)}, ${rpsText(ceilingRps)} on each of the ${formatNumber(k)} ${name} nodes`
      : `the ${name} fleet admits up to ${rpsText(ceilingRps * k)} under the ceiling, ${rpsText(ceilingRps)} on each of K = ${formatNumber(k)} nodes, assumed one per application instance as stack.gatewayNodes is not given`,
  };
}

/**
 * What the ceiling rows together admit across the fleet (fleetAdmission of each): one row's
 * admission, or with several, each counting the requests it covers, their sum, which bounds what
 * passes whether they cover disjoint endpoints (then it is exact) or overlap. Undefined when no
 * row has a rate. The one reading of "admitted" for the key-count bounds, the monitoring and the
 * hybrid's choice.
 */
export function ceilingsAdmission(
  scope: Pick<Scope, 'gateway' | 'store' | 'gatewayNodes' | 'topology' | 'instances'> & Partial<Pick<Scope, 'endpoints'>>,
  ceilings: readonly (Pick<MatrixRule, 'identity' | 'rate' | 'layer'> & Partial<Pick<MatrixRule, 'id' | 'routes' | 'perNode'>>)[],
  on?: readonly { name: string; method: string; route: string }[],
): FleetAdmission | undefined {
  const rated = ceilings.filter((c) => c.rate);
  const each = rated.map((c) =>
    fleetAdmission(
      scope,
      c,
      rated.filter((o) => o !== c && o.identity === 'global' && o.layer === 'edge'),
      on,
    ),
  );
  if (each.length <= 1) return each[0];
  const sum = (f: (a: FleetAdmission) => number): number => each.reduce((n, a) => n + f(a), 0);
  const rps = sum((a) => a.rps);
  return {
    rps,
    ceilingRps: sum((a) => a.ceilingRps),
    nodeRps: sum((a) => a.nodeRps),
    text: `the ${each.length} ceilings admit ${rpsText(rps)} together (${rated.map((c, i) => `${c.id ?? `ceiling ${i + 1}`}: ${rpsText(each[i]?.rps ?? 0)}`).join(', ')})`,
  };
}

/**
 * The fail mode of an edge rule whose count nothing can make unreachable (each node's own count,
 * or the provider's): the answers' mode for the classes it covers, the strictest where they
 * differ (closed when any is closed), since one count at the gateway is not split by class.
 */
export function answeredEdgeMode(scope: Pick<Scope, 'failureByClass'>, classes: readonly EndpointClass[]): FailMode {
  return classes.some((c) => scope.failureByClass[c] === 'closed') ? 'closed' : 'open';
}

function joinWords(items: readonly string[]): string {
  const u = [...new Set(items)];
  return u.length <= 1 ? u.join('') : `${u.slice(0, -1).join(', ')} and ${u[u.length - 1]}`;
}

/**
 * What the stated fail mode of an edge rule without a store means: nothing to fail now, and the
 * mode it keeps if its count moves to a shared store, from the answers (the strictest of its
 * classes') or from its own rule in the answers.
 */
function localModeText(scope: Pick<Scope, 'failureByClass'>, classes: readonly EndpointClass[], stated?: FailMode): string {
  const used = [...new Set(classes)].filter((c) => scope.failureByClass[c] !== undefined);
  const answered = answeredEdgeMode(scope, used);
  const mode = stated ?? answered;
  const keeps = 'the mode it keeps if its count moves to a shared store (the middleware with a store, or a gateway count its nodes share)';
  if (mode !== answered) return `It states fail ${mode}, as its rule in the answers says: ${keeps}.`;
  const closed = used.filter((c) => scope.failureByClass[c] === 'closed');
  const open = used.filter((c) => scope.failureByClass[c] !== 'closed');
  if (closed.length === 0 || open.length === 0) {
    return `It states fail ${mode}, the answers' mode for ${used.length > 0 ? joinWords(used) : 'its classes'}: ${keeps}.`;
  }
  return `It states fail closed, the strictest of the answers' modes for its classes (${joinWords(closed)} closed, ${joinWords(open)} open), since one count at the gateway is not split by class: ${keeps}; split it by class there, as rl-design splits a middleware rule, to keep ${joinWords(open)} open.`;
}

/**
 * Where an edge rule's count lives and what a failure there does: a count in each node (or the
 * provider's) has nothing to lose, and its stated mode is the one it keeps if the count moves to
 * a shared store; a shared one fails as the gateway's setting says, for every class alike, so
 * the classes the answers want to fail the other way are named when the gateway does not honour them.
 */
export function edgeStateNote(
  edge: EdgeCounter,
  scope: Pick<Scope, 'failureByClass'>,
  classes: readonly EndpointClass[],
  stated?: FailMode,
): string {
  if (!edge.unreachable)
    return `It keeps its counters ${edge.where}, so no store outage can touch it: it counts throughout. ${localModeText(scope, classes, stated)}`;
  const mode = edge.unreachable.mode;
  const other = [...new Set(classes)].filter((c) => scope.failureByClass[c] !== undefined && scope.failureByClass[c] !== mode);
  const unmet =
    other.length > 0
      ? ` The answers ask ${other.join(' and ')} to fail ${mode === 'open' ? 'closed' : 'open'}: the generated configuration does not honour that, because ${edge.unreachable.whyNotPerClass}. To fail ${mode === 'open' ? 'closed' : 'open'}, set ${edge.unreachable.flip} (for every route the rule covers, whatever its class), or enforce ${other.length > 1 ? 'those classes' : 'that class'} in the middleware.`
      : '';
  return `It keeps its count ${edge.where}; ${edge.unreachable.text}.${unmet}`;
}

/** Where the edge rules' would-be refusals show during the shadow step, in Prometheus or the gateway's own reports. */
export function edgeShadowSignal(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'ratelimit_throttled_total{mode="shadow"} from monitoring/nginx-ratelimit.mtail (limit_req_dry_run logs each would-be refusal)';
    case 'envoy':
      return `envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="${ENVOY_LOCAL_STAT_PREFIX}"} for the local filter and the rate limit service's ratelimit_service_rate_limit_shadow_mode for the rules it counts`;
    case 'kong':
      return 'Kong\'s 429 responses (kong_http_requests_total{code="429"} where its Prometheus plugin runs) once a rule is enabled';
    case 'cloudflare':
      return "the rules' log actions in Cloudflare's Security Events";
    case 'aws-api-gateway':
      return "the WAF rules' CountedRequests in CloudWatch";
    default:
      return "the gateway's own logs";
  }
}

/** How to let a legitimate offender through the edge rules: the gateway's configuration, not the answers' access lists (which the middleware applies). */
export function edgeAllowlistHow(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return "map the offender's trusted address to an empty key in nginx, which limit_req does not count";
    case 'envoy':
      return 'give the offender a route of its own ahead of the catch-all that skips the rate limits, as the generated exempt routes do, matched on a header your own proxy sets or on the trusted address';
    case 'kong':
      return 'give its traffic a Kong route of its own without the rate limit plugins, matched on a header your own proxy sets';
    case 'cloudflare':
      return "add a skip rule for the offender's addresses ahead of the rate limiting rules";
    case 'aws-api-gateway':
      return "add an allow rule for a WAF IP set of the offender's addresses ahead of the rate-based rules; stage and usage-plan throttles cannot exempt an address";
    default:
      return 'exempt the offender in the gateway configuration';
  }
}

/**
 * A route parameter: `:id` (`:id?` optional), `{id}` (the OpenAPI form, and Go's, Spring's,
 * ASP.NET's), or a rest wildcard: `*`, `*rest` or `{*rest}`. The shipped route matcher reads
 * the same forms.
 */
const ROUTE_PARAM = /:([A-Za-z0-9_]+)(\?)?|\*[A-Za-z0-9_]*|\{\*[A-Za-z0-9_]*\}|\{[A-Za-z0-9_]+\}/g;

/**
 * The optional leading path segment an AWS WAF path pattern allows before a route. A web ACL on
 * a REST API stage inspects the URI path API Gateway received: on the default endpoint
 * (https://{api-id}.execute-api.{region}.amazonaws.com/{stage}/...) it starts with the stage
 * name (AWS WAF's own log example for a stage named CanaryTest shows the uri /CanaryTest), on a
 * custom domain it is the path the client sent, a base path mapping's base path first. One
 * optional segment counts both forms without the stage name, which the answers do not hold.
 */
export const WAF_STAGE_SEGMENT = '(?:/[^/]+)?';

/** A route's lowercased path regex (anchored, as EdgeRoute.lowerPathRegex) as an AWS WAF scope-down writes it: one optional leading segment first (WAF_STAGE_SEGMENT). */
export function wafPathRegex(lowerPathRegex: string): string {
  return `^${WAF_STAGE_SEGMENT}${lowerPathRegex.replace(/^\^/, '')}`;
}

/**
 * Which paths AWS WAF sees and how the generated path patterns take them, in one line for the
 * document and the gateway file; undefined where no WAF rule matches a path.
 */
export function wafPathNote(
  gateway: Gateway,
  rules: readonly (Pick<MatrixRule, 'layer' | 'identity'> & { routes?: readonly { route: string }[] | undefined })[],
): string | undefined {
  const waf = rules.filter((r) => r.layer === 'edge' && r.identity === 'ip');
  if (gateway !== 'aws-api-gateway' || waf.length === 0) return undefined;
  // a route of the design's own for the example, lowercased, when one has no parameter
  const own = waf.flatMap((r) => r.routes ?? []).find((r) => /^\/[A-Za-z0-9/_.-]+$/.test(r.route) && r.route.length > 1);
  const route = own ? own.route.toLowerCase().replace(/\/$/, '') : '/orders';
  const pattern = wafPathRegex(`^${route}/?$`);
  return `AWS WAF matches the URI path API Gateway received, not the resource path: on the default endpoint (https://{api-id}.execute-api.{region}.amazonaws.com/{stage}${route}) it starts with the stage name, /prod${route}; on a custom domain it is the path the client sent, a base path mapping's base path first (/v1${route}), or ${route} with no base path. So each WAF path pattern allows one optional leading segment before the route (${pattern}), which counts all three. A path with one more leading segment than a route counts as that route (/x${route} as ${route}); to count only your stage, write its name for [^/]+ (^(?:/prod)?${route}/?$); a base path of two or more segments needs one optional segment per level`;
}

/**
 * Where a gateway's generated configuration matches requests otherwise than the middleware does
 * (by method, GET also HEAD, and by path in any letter case), in one line for the document and
 * the gateway file; undefined where it matches as the middleware does. Only API Gateway's own
 * throttles fall short: a resource is picked by its path as spelled.
 */
export function edgeMatchingGap(gateway: Gateway, rules: readonly Pick<MatrixRule, 'layer' | 'identity'>[]): string | undefined {
  if (gateway !== 'aws-api-gateway' || !rules.some((r) => r.layer === 'edge' && r.identity !== 'ip')) return undefined;
  return "API Gateway picks a resource by its path as spelled, letter case included, where the middleware ignores case: a request for /V1/Orders reaches no /v1/orders method, so that method's stage and usage plan throttles do not count it (API Gateway answers it 403 itself, or a {proxy+} resource passes it on uncounted by them); the WAF rate-based rules lowercase the path and count it";
}

/** The methods a route's method matches at the edge (GET also matches HEAD, as the frameworks do); null = any method. */
export function edgeMethods(method: string): string[] | null {
  const m = String(method).toUpperCase();
  if (m === 'ANY' || m === '*' || m === '') return null;
  return m === 'GET' ? ['GET', 'HEAD'] : [m];
}

/**
 * The path part of a route as a regex body (no anchors): `:param` and `{param}` are one segment,
 * `*` and `{*rest}` anything. `spell` rewrites the route's literal text first, for a gateway that
 * compares a path spelled otherwise (Cloudflare's normalized path: cfNormalizedPath).
 */
export function edgePathBody(route: string, spell: (text: string) => string = (t) => t): string {
  let r = String(route);
  if (r.length > 1 && r.endsWith('/')) r = r.slice(0, -1);
  let out = '';
  let last = 0;
  for (const m of r.matchAll(ROUTE_PARAM)) {
    const at = m.index ?? 0;
    out += regexLiteral(spell(r.slice(last, at)));
    if (m[0].startsWith('*') || m[0].startsWith('{*')) out += '.*';
    else out += m[2] ? '[^/]*' : '[^/]+';
    last = at + m[0].length;
  }
  out += regexLiteral(spell(r.slice(last)));
  return out;
}

function compiled(method: string, route: string): CompiledRoute {
  return compileRoute({ method, route, endpoint: null, exempt: false }, 0);
}

/**
 * A sort key that puts the more specific of two overlapping routes first (descending): the
 * segments' ranks (static 2, parameter 1) in order, then a named method before any method.
 */
export function specificityKey(r: { method: string; route: string }): string {
  const c = compiled(r.method, r.route);
  return `${c.segments.map((x) => x.rank).join('')}|${c.method === 'ANY' ? 0 : 1}`;
}

/** Routes most specific first (specificityKey, descending); routes of equal rank keep their order. */
export function bySpecificity<T extends { method: string; route: string }>(routes: readonly T[]): T[] {
  const keyed = routes.map((r, i) => ({ r, i, k: specificityKey(r) }));
  keyed.sort((a, b) => (a.k === b.k ? a.i - b.i : a.k < b.k ? 1 : -1));
  return keyed.map((x) => x.r);
}

/**
 * Whether `a` owns requests `b`'s pattern also matches: both match some request and `a` is
 * more specific (the middleware's routes.ts decides both, so the edge splits requests as it does).
 */
export function owns(a: { method: string; route: string }, b: { method: string; route: string }): boolean {
  const x = compiled(a.method, a.route);
  const y = compiled(b.method, b.route);
  return routesOverlap(x, y) && moreSpecific(x, y);
}

/** One endpoint as a Kong route matches it: its methods and its path regex. */
export function kongEndpointKey(method: string, route: string): string {
  const body = edgePathBody(route);
  const pathBody = body === '/' || body === '' ? '/' : `${body}/?`;
  return `${(edgeMethods(method) ?? ['*']).join(',')} ${pathBody}`;
}

/** The Kong routes the generated kong.yaml gives the route-scoped edge rules. */
export interface KongRoutePlan {
  /**
   * One Kong route per group: endpoints with the same methods and the same rules. Its one
   * rate-limiting instance carries `runs` (the first rule, and every other with the same key
   * and fail mode, merged: per window unit the lowest count); `replaced` are the group's rules
   * Kong does not count there (another key, which one instance cannot carry beside it).
   */
  groups: { routes: { method: string; route: string }[]; ruleIds: string[]; runs: string[]; replaced: string[] }[];
  /** Per rule id: how many Kong routes carry its plugin, each with its own counter. */
  routesPerRule: Map<string, number>;
  /** Per endpoint key (kongEndpointKey): the rules scoped to it, in matrix order. */
  byEndpoint: Map<string, { method: string; route: string; ruleIds: string[] }>;
  /** Per rule id: the endpoints where Kong does not count it (another rule holds the route's instance). */
  notCounted: Map<string, { method: string; route: string }[]>;
  /** Per rule id: what its instance counts (limit_by: service, ip or header). */
  keyOf: Map<string, string>;
  /** The per-client rule over every endpoint whose instance sits on the service. */
  onService?: string;
}

/** Whether Kong counts a rule nowhere: no route carries it and it is not the one on the service. */
export function kongCountsNowhere(id: string, plan: KongRoutePlan): boolean {
  return (plan.notCounted.get(id)?.length ?? 0) > 0 && (plan.routesPerRule.get(id) ?? 0) === 0 && plan.onService !== id;
}

/** What one rate-limiting instance keys on for a rule (its limit_by): rules merge into one instance only when it is the same. */
function kongLimitBy(rule: Pick<MatrixRule, 'identity'>): string {
  return rule.identity === 'global' ? 'service' : rule.identity === 'ip' ? 'ip' : 'header';
}

/** Whether Kong's one rate-limiting instance on a route can carry `other` beside `first`: the same key, policy and fail mode. */
function kongMerges(first: MatrixRule, other: MatrixRule): boolean {
  return kongLimitBy(first) === kongLimitBy(other) && (first.failMode ?? 'open') === (other.failMode ?? 'open');
}

/**
 * How kong.yaml lays out the edge rules scoped to routes: Kong runs one rate-limiting instance
 * per route, so endpoints that share their methods and their rules share one route (one
 * counter), and a rule whose endpoints differ in methods or rules sits on several routes, each
 * counting on its own. The instance of a route carries its first rule and every other that keys
 * on the same thing (merged, the lowest count per window unit: Kong enforces the stricter); a
 * rule keyed on something else is not counted there. The generator writes these routes; the
 * matrix, the placement and the worst case say what they count.
 */
export function kongRoutePlan(rules: readonly MatrixRule[]): KongRoutePlan {
  // an edge rule with a rate Kong can count, keyed on what its plugins key on
  const counted = (r: MatrixRule, identities: readonly (string | undefined)[]): boolean =>
    r.layer === 'edge' && r.rate !== undefined && r.rate.requests > 0 && r.rate.periodSeconds > 0 && identities.includes(r.identity);
  const routed = rules.filter((r) => counted(r, ['global', 'ip', 'api-key']) && r.routes.length > 0);
  const byId = new Map(routed.map((r) => [r.id, r]));
  const byEndpoint = new Map<string, { method: string; route: string; ruleIds: string[] }>();
  for (const r of routed) {
    for (const route of r.routes) {
      const k = kongEndpointKey(route.method, route.route);
      const entry = byEndpoint.get(k) ?? { method: route.method, route: route.route, ruleIds: [] };
      if (!entry.ruleIds.includes(r.id)) entry.ruleIds.push(r.id);
      byEndpoint.set(k, entry);
    }
  }
  const groups = new Map<string, { routes: { method: string; route: string }[]; ruleIds: string[]; runs: string[]; replaced: string[] }>();
  for (const e of byEndpoint.values()) {
    const k = `${(edgeMethods(e.method) ?? ['*']).join(',')}\u0000${e.ruleIds.join('\u0000')}`;
    const first = byId.get(e.ruleIds[0] as string) as MatrixRule;
    const runs = e.ruleIds.filter((id) => kongMerges(first, byId.get(id) as MatrixRule));
    const g = groups.get(k) ?? { routes: [], ruleIds: e.ruleIds, runs, replaced: e.ruleIds.filter((id) => !runs.includes(id)) };
    g.routes.push({ method: e.method, route: e.route });
    groups.set(k, g);
  }
  const routesPerRule = new Map<string, number>();
  const notCounted = new Map<string, { method: string; route: string }[]>();
  for (const g of groups.values()) {
    for (const id of g.runs) routesPerRule.set(id, (routesPerRule.get(id) ?? 0) + 1);
    for (const id of g.replaced) notCounted.set(id, [...(notCounted.get(id) ?? []), ...g.routes]);
  }
  // a per-client rule over every endpoint sits on the service (the first one; Kong holds one
  // instance there too): a route with an instance of its own replaces it, and a second such
  // rule is counted nowhere
  const everywhere = rules.filter((r) => counted(r, ['ip', 'api-key']) && r.routes.length === 0);
  const onService = everywhere[0]?.id;
  if (onService !== undefined && byEndpoint.size > 0) {
    notCounted.set(
      onService,
      [...byEndpoint.values()].map((e) => ({ method: e.method, route: e.route })),
    );
  }
  for (const r of everywhere.slice(1)) notCounted.set(r.id, [{ method: 'every', route: 'endpoint' }]);
  return {
    groups: [...groups.values()],
    routesPerRule,
    byEndpoint,
    notCounted,
    keyOf: new Map([...routed, ...everywhere].map((r) => [r.id, kongLimitBy(r)])),
    ...(onService !== undefined ? { onService } : {}),
  };
}

/** A Kong route with a regex path, and the regex_priority that orders it before the routes it must beat. */
export interface KongRegexRoute {
  /** group: a route of kongRoutePlan's groups (by index); exempt: a health probe's; owner: an endpoint with no rule of its own there. */
  kind: 'group' | 'exempt' | 'owner';
  group?: number;
  routes: { method: string; route: string }[];
  methods: string[] | null;
  priority: number;
}

/** The Kong routes of a design in the order Kong must try them, and the pairs it cannot order. */
export interface KongRouteOrder {
  routes: KongRegexRoute[];
  /** `owner` owns requests `taken` also matches, but Kong would try `taken`'s route first (or either). */
  unordered: { owner: { method: string; route: string }; taken: { method: string; route: string }; why: string }[];
}

/** The lowest regex_priority kong.yaml gives; a route that must beat others gets one more than the highest of them. */
export const KONG_BASE_PRIORITY = 100;

/**
 * Kong tries regex routes by regex_priority, highest first, and a route that names methods before
 * one that does not (kong/router/transform.lua get_priority, Kong's default traditional_compatible
 * router: one more matched field outweighs 1024 of regex_priority, and these priorities stay far
 * closer; src/codegen/gateway/kong-router.ts ports it); with equal priorities the winner depends
 * on Kong's route ids (atc-router), which no config sets. So each Kong
 * route gets a priority above every route whose requests it owns (a static segment beats a
 * parameter, as the middleware picks). An endpoint that owns requests of a rule's route but has
 * no route-scoped rule gets a route of its own without a rate limit (the service's applies), so
 * the rule's route never counts its requests. Pairs Kong cannot order are listed.
 */
export function kongRouteOrder(
  plan: KongRoutePlan,
  endpoints: readonly { method: string; route: string; class: string }[],
): KongRouteOrder {
  const key = (r: { method: string; route: string }): string => kongEndpointKey(r.method, r.route);
  const routes: KongRegexRoute[] = plan.groups.map((g, i) => ({
    kind: 'group',
    group: i,
    routes: g.routes,
    methods: edgeMethods((g.routes[0] as { method: string }).method),
    priority: KONG_BASE_PRIORITY,
  }));
  const seen = new Set(plan.groups.flatMap((g) => g.routes.map(key)));
  /** A Kong route of one endpoint of its own, once per endpoint. */
  const single = (kind: 'exempt' | 'owner', e: { method: string; route: string }): void => {
    if (seen.has(key(e))) return;
    seen.add(key(e));
    routes.push({ kind, routes: [{ method: e.method, route: e.route }], methods: edgeMethods(e.method), priority: KONG_BASE_PRIORITY });
  };
  for (const e of endpoints) if (e.class === 'health') single('exempt', e);
  const taken = routes.flatMap((r) => r.routes);
  for (const e of endpoints) if (taken.some((t) => owns(e, t))) single('owner', e);
  // beats[i]: the routes route i must be tried before
  const unordered: KongRouteOrder['unordered'] = [];
  const beats = routes.map((a, i) =>
    routes
      .map((b, j) => ({ b, j }))
      .filter(({ b, j }) => {
        if (i === j) return false;
        const pair = a.routes.flatMap((x) => b.routes.filter((y) => owns(x, y)).map((y) => ({ owner: x, taken: y })))[0];
        if (!pair) return false;
        if (a.methods === null && b.methods !== null) {
          unordered.push({
            ...pair,
            why: 'Kong tries a route that names methods before one that takes any, whatever their regex_priority',
          });
          return false;
        }
        return true;
      })
      .map(({ j }) => j),
  );
  const level = new Array<number | undefined>(routes.length).fill(undefined);
  const visiting = new Set<number>();
  const depth = (i: number): number => {
    const known = level[i];
    if (known !== undefined) return known;
    visiting.add(i);
    let d = 0;
    for (const j of beats[i] ?? []) {
      if (visiting.has(j)) {
        const a = routes[i] as KongRegexRoute;
        const b = routes[j] as KongRegexRoute;
        const pair = a.routes.flatMap((x) => b.routes.filter((y) => owns(x, y)).map((y) => ({ owner: x, taken: y })))[0];
        if (pair)
          unordered.push({
            ...pair,
            why: 'one Kong route holds endpoints that must be tried both before and after those of another (they share one counter)',
          });
        continue;
      }
      d = Math.max(d, depth(j) + 1);
    }
    visiting.delete(i);
    level[i] = d;
    return d;
  };
  routes.forEach((r, i) => {
    r.priority = KONG_BASE_PRIORITY + depth(i);
  });
  return { routes, unordered };
}

/** The document's line for a rule whose endpoints Kong cannot order (kongRouteOrder's unordered pairs); '' when none. */
export function kongOrderText(rule: Pick<MatrixRule, 'routes'>, order: KongRouteOrder): string {
  const mine = (r: { method: string; route: string }): boolean => rule.routes.some((x) => x.method === r.method && x.route === r.route);
  const pairs = order.unordered.filter((p) => mine(p.owner) || mine(p.taken));
  if (pairs.length === 0) return '';
  return `Kong cannot count ${pairs.map((p) => `${p.owner.method} ${p.owner.route} apart from ${p.taken.method} ${p.taken.route}`).join('; ')} (${[...new Set(pairs.map((p) => p.why))].join('; ')}): such a request may count under the other endpoint's rules, and validate reports it.`;
}

/**
 * What the document says of an edge rule Kong does not count on some of its endpoints (another
 * rule, keyed on something else, holds the route's one rate-limiting instance); '' when Kong
 * counts it everywhere it applies.
 */
export function kongNotCountedText(rule: Pick<MatrixRule, 'id' | 'routes'>, plan: KongRoutePlan): string {
  const missed = plan.notCounted.get(rule.id) ?? [];
  if (missed.length === 0) return '';
  const holders = [
    ...new Set(
      missed.flatMap((m) => {
        const e = plan.byEndpoint.get(kongEndpointKey(m.method, m.route));
        const g = plan.groups.find((x) => x.routes.some((r) => r.method === m.method && r.route === m.route));
        return (g?.runs ?? e?.ruleIds.slice(0, 1) ?? []).filter((id) => id !== rule.id);
      }),
    ),
  ];
  const all = kongCountsNowhere(rule.id, plan);
  if (all && rule.routes.length === 0) {
    return `Not enforced anywhere: Kong runs one rate-limiting instance per route or service, and the service's carries ${plan.onService ?? 'another rule'}, the first rule over every endpoint, so nothing counts this rule. Enforce it in the middleware (layer middleware in its rules entry) or scope it to endpoints of its own.`;
  }
  const where = missed.map((m) => `${m.method} ${m.route}`).join(', ');
  if (plan.onService === rule.id) {
    return `Not enforced on ${where}: its instance sits on the service, and Kong runs one rate-limiting instance per request, so the instance of a route of its own replaces it there and nothing counts this rule on ${missed.length > 1 ? 'those endpoints' : 'that endpoint'}. Enforce it in the middleware (layer middleware in its rules entry) to count it there too.`;
  }
  const keyWords: Record<string, string> = { service: 'all requests together', ip: 'the client IP', header: 'the API key header' };
  const holderKey = plan.keyOf.get(holders[0] as string);
  const ownKey = plan.keyOf.get(rule.id);
  return `Not enforced ${all ? 'anywhere' : `on ${where}`}: Kong runs one rate-limiting instance per route, and on ${all ? `its endpoint${missed.length > 1 ? 's' : ''} (${where})` : missed.length > 1 ? 'those routes' : 'that route'} that instance carries ${joinWords(holders)}, counting ${keyWords[holderKey ?? ''] ?? 'another key'}, while this rule counts ${keyWords[ownKey ?? ''] ?? 'another key'}; one instance counts one key, so nothing counts this rule there. Enforce it in the middleware (layer middleware in its rules entry) or give it a Kong route of its own.`;
}

/** A route in API Gateway's resource path syntax (`:id` becomes `{id}`, a rest wildcard `*` or `{*rest}` `{proxy+}`). */
export function apiGatewayPath(route: string): string {
  return route
    .replace(/\{\*[A-Za-z0-9_]*\}/g, '{proxy+}')
    .replace(/:([A-Za-z0-9_]+)\??/g, '{$1}')
    .replace(/\*[A-Za-z0-9_]*/g, '{proxy+}');
}

/**
 * The key of a method throttle in a usage plan's API stage: the resource path and the method
 * ("/pets/GET", "/GET" for the root); ANY for a route of any method.
 */
export function awsMethodThrottleKey(path: string, method: string): string {
  return `${path === '/' ? '' : path}/${method}`;
}

/** The usage plan method throttle keys of one route: one per method it matches (GET counts HEAD too, as the stage's settings do). */
export function awsRouteThrottleKeys(route: { method: string; route: string }): string[] {
  const path = apiGatewayPath(route.route);
  return (edgeMethods(route.method) ?? ['ANY']).map((m) => awsMethodThrottleKey(path, m));
}

/**
 * How gateway/aws-api-gateway.json carries the API-key edge rules. An API key joins one usage
 * plan per API stage, so every API-key rule sits in ONE usage plan: a rule over every endpoint
 * is the plan's own Throttle (one token bucket per key for every method of the stage; the
 * stricter, by rate then burst, when several rules would be), a rule naming endpoints is a
 * method throttle of the plan's API stage on each of its methods (a token bucket per key and
 * method). One method holds one throttle: where two rules name the same method, the stricter
 * is shipped there and the other is not counted on it.
 */
export interface AwsKeyPlan {
  /** The rule shipped as the plan's own Throttle. */
  planLevel?: string;
  /** Method throttle key ("/path/METHOD") -> the rule shipped there, in matrix order of first use. */
  methods: Map<string, string>;
  /** Per rule id: the method keys it ships on. */
  keysOf: Map<string, string[]>;
  /** Per rule id: the endpoints (method and route) where another rule holds the throttle, with that rule's id. */
  notCounted: Map<string, { method: string; route: string; holder: string }[]>;
}

type KeyRule = Pick<MatrixRule, 'id' | 'layer' | 'identity' | 'rate' | 'burst' | 'routes'>;

/** Whether a rule is an API-key edge rule with a rate API Gateway can throttle. */
function awsKeyRule(r: KeyRule): boolean {
  return r.layer === 'edge' && r.identity === 'api-key' && r.rate !== undefined && r.rate.requests > 0 && r.rate.periodSeconds > 0;
}

/** The stricter of two token buckets: the lower rate, then the lower burst; the first on a tie. */
function stricter<T extends KeyRule>(a: T, b: T): T {
  const ra = (a.rate?.requests ?? 0) / (a.rate?.periodSeconds ?? 1);
  const rb = (b.rate?.requests ?? 0) / (b.rate?.periodSeconds ?? 1);
  if (Math.abs(ra - rb) > 1e-12) return rb < ra ? b : a;
  return (b.burst ?? Number.POSITIVE_INFINITY) < (a.burst ?? Number.POSITIVE_INFINITY) ? b : a;
}

export function awsKeyPlan(rules: readonly KeyRule[]): AwsKeyPlan {
  const keyed = rules.filter(awsKeyRule);
  const everywhere = keyed.filter((r) => r.routes.length === 0);
  const plan = everywhere.reduce<KeyRule | undefined>((a, b) => (a ? stricter(a, b) : b), undefined);
  const holder = new Map<string, KeyRule>();
  for (const r of keyed.filter((x) => x.routes.length > 0)) {
    for (const route of r.routes) {
      for (const k of awsRouteThrottleKeys(route)) {
        const h = holder.get(k);
        holder.set(k, h ? stricter(h, r) : r);
      }
    }
  }
  const keysOf = new Map<string, string[]>();
  const notCounted = new Map<string, { method: string; route: string; holder: string }[]>();
  for (const r of keyed.filter((x) => x.routes.length > 0)) {
    const own: string[] = [];
    for (const route of r.routes) {
      const keys = awsRouteThrottleKeys(route);
      const held = keys.map((k) => holder.get(k) as KeyRule);
      own.push(...keys.filter((_k, i) => held[i] === r));
      const other = held.find((h) => h !== r);
      if (other) notCounted.set(r.id, [...(notCounted.get(r.id) ?? []), { ...route, holder: other.id }]);
    }
    keysOf.set(r.id, [...new Set(own)]);
  }
  for (const r of everywhere) {
    if (r === plan) continue;
    notCounted.set(r.id, [{ method: 'every', route: 'endpoint', holder: plan?.id ?? '' }]);
  }
  return {
    ...(plan ? { planLevel: plan.id } : {}),
    methods: new Map([...holder].map(([k, r]) => [k, r.id])),
    keysOf,
    notCounted,
  };
}

/**
 * What the document says of an API-key edge rule on AWS: where gateway/aws-api-gateway.json
 * ships it in the one usage plan (its own Throttle, or method throttles, each a bucket per key
 * and method), and where another rule holds the throttle instead.
 */
export function awsKeyPlanText(rule: Pick<MatrixRule, 'id' | 'routes'>, plan: AwsKeyPlan): string {
  const missed = plan.notCounted.get(rule.id) ?? [];
  if (plan.planLevel === rule.id) {
    return "gateway/aws-api-gateway.json ships it as the Throttle of the design's one usage plan (an API key joins one usage plan per stage): one token bucket per API key that every method of the stage counts against, beside any method throttle of the plan.";
  }
  if (rule.routes.length === 0) {
    return `Not enforced anywhere: an API key joins one usage plan per stage, and that plan has one Throttle for every method, which carries ${missed[0]?.holder || 'another rule'} (the stricter), so nothing counts this rule. Enforce it in the middleware (layer middleware in its rules entry) or scope it to endpoints of its own.`;
  }
  const keys = plan.keysOf.get(rule.id) ?? [];
  const shipped =
    keys.length > 0
      ? `gateway/aws-api-gateway.json ships it as ${keys.length === 1 ? 'a method throttle' : 'method throttles'} of the design's one usage plan (an API key joins one usage plan per stage) on ${keys.join(', ')}: ${keys.length === 1 ? 'a token bucket per API key on that method' : `each a token bucket per API key and method, so one key can pass its rate on each of the ${formatNumber(keys.length)} methods`}; no other method of the stage counts against it.`
      : '';
  if (missed.length === 0) return shipped;
  const where = missed.map((m) => `${m.method} ${m.route}`).join(', ');
  const holders = [...new Set(missed.map((m) => m.holder))].join(', ');
  return `${shipped}${shipped ? ' ' : ''}Not enforced ${keys.length === 0 ? 'anywhere' : `on ${where}`}: a usage plan holds one throttle per method, and there it carries ${holders} (the stricter), so nothing counts this rule on ${missed.length > 1 ? 'those endpoints' : 'that endpoint'}. Enforce it in the middleware (layer middleware in its rules entry) to count it there too.`;
}

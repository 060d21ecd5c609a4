/**
 * Responses: the rate-limit headers in the design's one convention, and the problem+json
 * bodies of a 429 and a 503. This is the one definition of the header conventions: rl-design's
 * document, its response-contract check and its interview summary read the same functions
 * and names, so what they state is what a response carries.
 */
import type { HeaderConvention, RuleOutcome } from './types.js';

/** The content type of every 429 and 503 body. */
export const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

/** Sent on a call admitted past a soft plan quota: the quota rule and the units used beyond it. */
export const QUOTA_EXCEEDED_HEADER = 'Quota-Exceeded';

/** The header names of each convention: the state of one rule, and (single-value conventions) the quota trio. */
export const HEADER_NAMES: {
  readonly [C in HeaderConvention]: C extends 'ietf-structured'
    ? { readonly policy: 'RateLimit-Policy'; readonly state: 'RateLimit' }
    : { readonly limit: string; readonly remaining: string; readonly reset: string; readonly quota: readonly [string, string, string] };
} = {
  'ietf-structured': { policy: 'RateLimit-Policy', state: 'RateLimit' },
  'ietf-trio': {
    limit: 'RateLimit-Limit',
    remaining: 'RateLimit-Remaining',
    reset: 'RateLimit-Reset',
    quota: ['RateLimit-Quota-Limit', 'RateLimit-Quota-Remaining', 'RateLimit-Quota-Reset'],
  },
  'x-ratelimit': {
    limit: 'X-RateLimit-Limit',
    remaining: 'X-RateLimit-Remaining',
    reset: 'X-RateLimit-Reset',
    quota: ['X-RateLimit-Quota-Limit', 'X-RateLimit-Quota-Remaining', 'X-RateLimit-Quota-Reset'],
  },
};

/** Every rate-limit header name a convention can send (Retry-After aside). */
export function headerNamesOf(convention: HeaderConvention): readonly string[] {
  if (convention === 'ietf-structured') return [HEADER_NAMES[convention].policy, HEADER_NAMES[convention].state];
  const n = HEADER_NAMES[convention];
  return [n.limit, n.remaining, n.reset, ...n.quota, QUOTA_EXCEEDED_HEADER];
}

const sfStrings = new Map<string, string>();

/** A Structured Fields string (rule ids are plain, but nothing unescaped gets through). */
export function sfString(text: string): string {
  let out = sfStrings.get(text);
  if (out === undefined) {
    out = '"' + text.replace(/[\\"]/g, (c) => '\\' + c).replace(/[^\u0020-\u007e]/g, '') + '"';
    sfStrings.set(text, out);
  }
  return out;
}

/** The numbers of a rule that its headers state. */
export interface StatedRule {
  readonly id: string;
  /** Requests (tokens) per period: the rate, or the window's limit (a soft quota's hard stop, where it refuses). */
  readonly limit: number;
  readonly periodSeconds: number;
  /** Bucket capacity (token bucket / GCRA); null for windows. */
  readonly burst: number | null;
  /**
   * The plan quota when the hard stop (`limit`) sits above it (soft overage): calls past it
   * pass flagged (Quota-Exceeded) until the hard stop refuses them; else null. The headers
   * state the hard stop, the count that refuses; the 429 body states both numbers.
   */
  readonly quota: number | null;
}

/** What one response states about a rule. */
export interface Shown {
  /** q / the Limit header: a bucket's burst, a window's limit (a soft quota's hard stop). */
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the bucket is full again, or the window (quota period) resets. */
  readonly resetSeconds: number;
  /** w / windowSeconds: see policyWindowSeconds; a calendar quota's current period length. */
  readonly windowSeconds: number;
  /** Units used past a soft plan quota in this period (0 within the quota). */
  readonly overQuota: number;
}

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/**
 * The policy a rule states: q units per w seconds, whole numbers, with q / w the rule's rate
 * exactly (never less than promised, never more), so a client that spaces its calls by w / q
 * is never refused. Window rules: their limit per window. Token-bucket (GCRA) rules: the
 * largest such q within the burst (a client may also send q at once); when even the smallest
 * exact q exceeds the burst (a burst under one period's worth), q is that smallest exact
 * count: its pace is still the rate, but only the burst can go at once.
 */
export function policyOf(rule: Pick<StatedRule, 'limit' | 'periodSeconds' | 'burst'>): { readonly q: number; readonly w: number } {
  if (rule.burst === null) return { q: rule.limit, w: Math.max(1, Math.round(rule.periodSeconds)) };
  const whole = Number.isInteger(rule.limit) && Number.isInteger(rule.periodSeconds) && rule.limit > 0 && rule.periodSeconds > 0;
  if (!whole) {
    // a fractional rate: the refill time of the burst, rounded up (q / w at most the rate)
    return { q: rule.burst, w: Math.max(1, Math.ceil((rule.burst * rule.periodSeconds) / rule.limit - 1e-9)) };
  }
  const g = gcd(rule.limit, rule.periodSeconds);
  const q0 = rule.limit / g;
  const w0 = rule.periodSeconds / g;
  const m = Math.floor(rule.burst / q0);
  return m >= 1 ? { q: m * q0, w: m * w0 } : { q: q0, w: w0 };
}

/** w: the window of the rule's policy (calendar quotas state their current period instead). */
export function policyWindowSeconds(rule: Pick<StatedRule, 'limit' | 'periodSeconds' | 'burst'>): number {
  return policyOf(rule).w;
}

/**
 * q / the Limit header: the policy's q (a window's limit). A soft quota states its hard stop,
 * not its plan quota: the remaining count then reaches 0 exactly where the next call is
 * refused, never while calls still pass (the plan quota is in Quota-Exceeded and the 429 body).
 */
export function statedLimit(rule: Pick<StatedRule, 'limit' | 'periodSeconds' | 'burst'>): number {
  return policyOf(rule).q;
}

/** What a response states about a rule, from the store's outcome. */
export function shown(rule: StatedRule, outcome: Pick<RuleOutcome, 'allowed' | 'remaining' | 'resetMs'>, windowSeconds: number): Shown {
  const limit = statedLimit(rule);
  const over = rule.quota === null ? 0 : rule.limit - rule.quota;
  return {
    limit,
    remaining: Math.max(0, Math.min(limit, outcome.remaining)),
    resetSeconds: Math.max(0, Math.ceil(outcome.resetMs / 1000)),
    windowSeconds,
    overQuota: outcome.allowed ? Math.max(0, over - outcome.remaining) : 0,
  };
}

/** The header that states a rule's limit (structured fields: its policy item, q per w). */
export function limitHeader(
  convention: HeaderConvention,
  rule: Pick<StatedRule, 'id' | 'limit' | 'periodSeconds' | 'burst'>,
  windowSeconds: number,
): readonly [string, string] {
  const limit = statedLimit(rule);
  switch (convention) {
    case 'ietf-structured':
      return [HEADER_NAMES[convention].policy, sfString(rule.id) + ';q=' + limit + ';w=' + windowSeconds];
    case 'ietf-trio':
    case 'x-ratelimit':
      return [HEADER_NAMES[convention].limit, String(limit)];
  }
}

/** A rule as a response states it: its limit header (for its current window) and its values. */
export interface StatedState {
  readonly id: string;
  readonly limitHeader: readonly [string, string];
  readonly s: Shown;
}

/**
 * The rate-limit headers of a response: the convention's headers for the rule, and the plan
 * quota that counted the call (when one did). Structured fields list the quota as a second
 * item of RateLimit-Policy and RateLimit; the single-value conventions add their quota trio.
 */
export function rateLimitHeaders(
  convention: HeaderConvention,
  main: StatedState,
  quota: StatedState | null,
): (readonly [string, string])[] {
  const s = main.s;
  switch (convention) {
    case 'ietf-structured': {
      const names = HEADER_NAMES[convention];
      const state = sfString(main.id) + ';r=' + s.remaining + ';t=' + s.resetSeconds;
      if (quota === null || quota.id === main.id) return [main.limitHeader, [names.state, state]];
      return [
        [names.policy, main.limitHeader[1] + ', ' + quota.limitHeader[1]],
        [names.state, state + ', ' + sfString(quota.id) + ';r=' + quota.s.remaining + ';t=' + quota.s.resetSeconds],
      ];
    }
    case 'ietf-trio':
    case 'x-ratelimit': {
      const names = HEADER_NAMES[convention];
      const headers: (readonly [string, string])[] = [
        main.limitHeader,
        [names.remaining, String(s.remaining)],
        [names.reset, String(s.resetSeconds)],
      ];
      if (quota !== null) {
        headers.push(
          [names.quota[0], String(quota.s.limit)],
          [names.quota[1], String(quota.s.remaining)],
          [names.quota[2], String(quota.s.resetSeconds)],
        );
      }
      return headers;
    }
  }
}

/** The header a call admitted past a soft plan quota carries (the units used beyond the plan quota). */
export function quotaExceededHeader(quotaId: string, overQuota: number): readonly [string, string] {
  return [QUOTA_EXCEEDED_HEADER, sfString(quotaId) + ';over=' + overQuota];
}

/** Whether a rule's state is more constraining than the best so far (fewer left, then a later reset). */
export function tighter(values: Shown, best: Shown | null): boolean {
  return (
    best === null || values.remaining < best.remaining || (values.remaining === best.remaining && values.resetSeconds > best.resetSeconds)
  );
}

/** Whole seconds, rounded up, at least 1; a request that can never fit waits one period. */
export function retryAfterSeconds(rule: Pick<StatedRule, 'periodSeconds'>, outcome: Pick<RuleOutcome, 'retryAfterMs'>): number {
  if (outcome.retryAfterMs < 0) return Math.max(1, Math.ceil(rule.periodSeconds));
  return Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
}

/**
 * The fields of a silent 429's problem+json body: a generic answer with no counts and no rule
 * internals. A security rule refuses with it (problemFields), and so does the penalty box.
 */
export function silentProblemFields(docsUrl: string, retryAfter: number): Record<string, unknown> {
  return {
    type: docsUrl + '#rate-limited',
    title: 'Too many requests',
    status: 429,
    code: 'RATE_LIMITED',
    detail: 'Too many attempts. Retry after the time in Retry-After.',
    retryAfterSeconds: retryAfter,
    documentation: docsUrl,
  };
}

/**
 * The fields of a 429's problem+json body (a silent rule's: silentProblemFields). `s.limit` is
 * the count the rule refused at. A soft quota's refusal (its plan quota below that hard stop)
 * states both numbers: `limit.quota` the plan quota, `limit.hardStop` where calls are refused,
 * `limit.overageAllowance` the calls past the quota admitted before it; its detail says the
 * overage allowance is used up, not the quota.
 */
export function problemFields(
  docsUrl: string,
  rule: {
    readonly id: string;
    readonly headers: 'full' | 'silent';
    readonly errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
    readonly quota?: number | null;
  },
  s: Pick<Shown, 'limit' | 'resetSeconds' | 'windowSeconds'>,
  retryAfter: number,
): Record<string, unknown> {
  if (rule.headers === 'silent') return silentProblemFields(docsUrl, retryAfter);
  if (rule.errorCode === 'QUOTA_EXCEEDED') {
    const planQuota = rule.quota ?? null;
    const soft = planQuota !== null && planQuota < s.limit;
    return {
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota exceeded',
      status: 429,
      code: 'QUOTA_EXCEEDED',
      detail: soft
        ? 'The overage allowance of the quota ' +
          rule.id +
          ' for this period is used up: the plan quota is ' +
          planQuota +
          ', calls past it pass up to the hard stop at ' +
          s.limit +
          ', and this call was refused at that hard stop; it resets in ' +
          s.resetSeconds +
          ' s.'
        : 'The quota ' + rule.id + ' for this period is used up; it resets in ' + s.resetSeconds + ' s.',
      'violated-policies': [rule.id],
      limit: soft
        ? { rule: rule.id, quota: planQuota, hardStop: s.limit, overageAllowance: s.limit - planQuota, windowSeconds: s.windowSeconds }
        : { rule: rule.id, quota: s.limit, windowSeconds: s.windowSeconds },
      retryAfterSeconds: retryAfter,
      resetSeconds: s.resetSeconds,
      documentation: docsUrl,
    };
  }
  return {
    type: docsUrl + '#rate-limited',
    title: 'Too many requests',
    status: 429,
    code: 'RATE_LIMITED',
    detail: 'Limit ' + rule.id + ' exceeded; retry after the time in Retry-After, plus random jitter.',
    limit: { rule: rule.id, quota: s.limit, windowSeconds: s.windowSeconds },
    retryAfterSeconds: retryAfter,
    resetSeconds: s.resetSeconds,
    documentation: docsUrl,
  };
}

/** The fields of the 503 a fail-closed rule answers while the store is unavailable. */
export function unavailableFields(docsUrl: string, retryAfter: number): Record<string, unknown> {
  return {
    type: docsUrl + '#limiter-unavailable',
    title: 'Service unavailable',
    status: 503,
    code: 'RATE_LIMITER_UNAVAILABLE',
    detail: 'The rate limiter can not check this request right now. Retry after the time in Retry-After.',
    retryAfterSeconds: retryAfter,
    documentation: docsUrl,
  };
}

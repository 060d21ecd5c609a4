/** The response contract: one header convention, Retry-After on every 429, silent security limits. */
import type { QuotaResetT } from '../answers/schema.js';
import { formatNumber } from '../format.js';
import {
  HEADER_NAMES,
  limitHeader,
  problemFields,
  rateLimitHeaders as runtimeHeaders,
  statedLimit,
  type Shown,
  type StatedRule,
  type StatedState,
} from '../runtime/middleware/responses.js';
import { policyWindowSeconds, sfString, PROBLEM_JSON, QUOTA_EXCEEDED_HEADER } from '../runtime/middleware/responses.js';
import { runBurst } from './algorithms.js';
import { edgeRefusalBody, envoyCounter, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS } from './gateway-behaviour.js';
import type {
  Diagram,
  ExampleResponse,
  Gateway,
  HeaderConvention,
  HeaderSpec,
  MatrixRule,
  ResolvedEndpoint,
  ResponseContract,
} from './model.js';
import { keepsStateInStore } from './model.js';
import { ACCOUNT_IDENTITIES } from './identity-fallback.js';

const IETF_DRAFT = 'draft-ietf-httpapi-ratelimit-headers-11';

export { QUOTA_EXCEEDED_HEADER, policyWindowSeconds } from '../runtime/middleware/responses.js';

// ---------------------------------------------------------------------------------------
// What a response states about a rule: the runtime's own functions (src/runtime/middleware/
// responses.ts), fed with the numbers the middleware compiles in for the rule. The document
// shows what these return, so it states what the shipped code sends.

/** A rule as the middleware holds it (codegen/middleware/compile.ts): the numbers behind its headers. */
export interface ShownRule extends StatedRule {
  headers: 'full' | 'silent';
  errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
}

/** What one response states about a rule. */
type ShownValues = Omit<Shown, 'overQuota'>;

/** The numbers the middleware compiles in for a matrix rule (as compile.ts does), or undefined without a rate. */
export function shownRuleOf(rule: MatrixRule): ShownRule | undefined {
  if (!rule.rate || !(rule.rate.requests > 0) || !(rule.rate.periodSeconds > 0)) return undefined;
  const planQuota = rule.quotaBackstop?.quota;
  return {
    id: rule.id,
    headers: rule.headers === 'silent' ? 'silent' : 'full',
    errorCode: rule.errorCode,
    limit: rule.rate.requests,
    periodSeconds: rule.rate.periodSeconds,
    burst: runBurst(rule),
    quota: planQuota !== undefined && planQuota < rule.rate.requests ? planQuota : null,
  };
}

/** Whole seconds, rounded up; the float noise of an exact division does not add a second. */
function ceilSeconds(seconds: number): number {
  return Math.ceil(seconds - 1e-9);
}

/** The problem+json body of a 429, as the runtime builds it. */
export function problemBody(
  docsUrl: string,
  rule: Pick<ShownRule, 'id' | 'headers' | 'errorCode'> & Partial<Pick<ShownRule, 'quota'>>,
  s: Pick<ShownValues, 'limit' | 'resetSeconds' | 'windowSeconds'>,
  retryAfter: number,
): Record<string, unknown> {
  return problemFields(docsUrl, rule, s, retryAfter);
}

/** A header convention by name, with the runtime's own header names. */
export function conventionName(convention: HeaderConvention, short = false): string {
  switch (convention) {
    case 'ietf-structured': {
      const n = HEADER_NAMES[convention];
      return short ? 'IETF draft structured fields' : `IETF structured fields (${n.state} and ${n.policy})`;
    }
    case 'ietf-trio': {
      const n = HEADER_NAMES[convention];
      return short ? `IETF draft ${n.limit}/-Remaining/-Reset` : `IETF draft header trio (${n.limit}, ${n.remaining}, ${n.reset})`;
    }
    case 'x-ratelimit': {
      const n = HEADER_NAMES[convention];
      return short ? 'X-RateLimit-* (de facto)' : `legacy X-RateLimit-* headers (${n.limit}, ${n.remaining}, ${n.reset})`;
    }
  }
}

/** A rule and what a response states about it. */
export interface Stated {
  rule: ShownRule;
  s: ShownValues;
}

/** The quota header trio of the single-value conventions (beside the convention's own trio). */
export const QUOTA_HEADER_NAMES: Record<Exclude<HeaderConvention, 'ietf-structured'>, readonly [string, string, string]> = {
  'ietf-trio': HEADER_NAMES['ietf-trio'].quota,
  'x-ratelimit': HEADER_NAMES['x-ratelimit'].quota,
};

function statedState(convention: HeaderConvention, { rule, s }: Stated): StatedState {
  return { id: rule.id, limitHeader: limitHeader(convention, rule, s.windowSeconds), s: { ...s, overQuota: 0 } };
}

/**
 * The rate-limit headers of one response, as the runtime builds them: `main` is the rule the
 * convention's headers state; `quota` the plan quota that counted the call, when one did.
 */
export function rateLimitHeaders(convention: HeaderConvention, main: Stated, quota?: Stated): [string, string][] {
  return runtimeHeaders(convention, statedState(convention, main), quota ? statedState(convention, quota) : null).map(([name, value]) => [
    name,
    value,
  ]);
}

// ---------------------------------------------------------------------------------------
// The examples: real rules of the design, in situations that occur as described

/** The quota period a rule counts in, when it is a plan quota window. */
type QuotaWindow = 'month' | 'day' | 'rolling' | null;

function quotaWindowOf(rule: MatrixRule, reset: QuotaResetT | undefined): QuotaWindow {
  if (rule.tier !== 'quota' || rule.algorithm !== 'fixed-window' || !reset) return null;
  return reset.kind === 'rolling' ? 'rolling' : reset.period;
}

/** Example length of a calendar month: 30 days without a daylight-saving change. */
const EXAMPLE_MONTH_SECONDS = 30 * 86400;

/** w of a rule in the examples: a calendar month is shown as a 30-day month. */
function exampleWindow(rule: MatrixRule, shown: ShownRule, reset: QuotaResetT | undefined): number {
  const kind = quotaWindowOf(rule, reset);
  if (kind === 'month') return EXAMPLE_MONTH_SECONDS;
  if (kind === 'day') return 86400;
  return policyWindowSeconds(shown);
}

/**
 * The call the examples make on a rule: its cheapest endpoint (a rule whose every endpoint
 * is weighted is never called at cost 1), and that endpoint's name when its cost is not 1.
 */
function exampleCall(rule: MatrixRule): { cost: number; endpoint?: string } {
  const cost = rule.cost;
  if (!cost) return { cost: 1 };
  const calls = rule.endpoints.map((endpoint) => ({
    endpoint,
    cost: cost.byEndpoint.find((w) => w.endpoint === endpoint)?.cost ?? cost.default,
  }));
  const cheapest = calls.reduce<{ endpoint: string; cost: number } | undefined>(
    (a, c) => (a === undefined || c.cost < a.cost ? c : a),
    undefined,
  );
  if (!cheapest) return { cost: cost.default };
  return cheapest.cost === 1 ? { cost: 1 } : cheapest;
}

/** "a call", or "a call to export (cost 5)". */
function callText(call: { cost: number; endpoint?: string }): string {
  return call.endpoint ? `a call to ${call.endpoint} (cost ${formatNumber(call.cost)})` : 'a call';
}

/**
 * The first call of a client: a full bucket, or the start of the window (quota: of the period).
 * A bucket has its burst less the call's cost left, stated as at most q (statedLimit), and is
 * full again once those tokens are back.
 */
function firstCall(rule: MatrixRule, shown: ShownRule, reset: QuotaResetT | undefined): ShownValues {
  const w = exampleWindow(rule, shown, reset);
  const limit = statedLimit(shown);
  const { cost } = exampleCall(rule);
  const bucket = shown.burst !== null && quotaWindowOf(rule, reset) === null;
  return {
    limit,
    remaining: bucket ? Math.max(0, Math.min(limit, (shown.burst as number) - cost)) : Math.max(0, limit - cost),
    // a bucket is full again once the call's tokens are back; a window resets at its end
    resetSeconds: bucket ? ceilSeconds((cost * shown.periodSeconds) / shown.limit) : w,
    windowSeconds: w,
  };
}

/** What states a calendar quota's window in a refusal: the body always, RateLimit-Policy's w too. */
function windowNamed(convention: HeaderConvention): string {
  return convention === 'ietf-structured' ? "w (and the body's limit.windowSeconds) is" : "the body's limit.windowSeconds is";
}

/** A refusal that occurs as described, with its Retry-After; `situation` says when. */
function refusal(
  convention: HeaderConvention,
  rule: MatrixRule,
  shown: ShownRule,
  reset: QuotaResetT | undefined,
): { s: ShownValues; retryAfter: number; situation: string } {
  const w = exampleWindow(rule, shown, reset);
  const limit = statedLimit(shown);
  const at = (resetSeconds: number, retryAfter: number, situation: string) => ({
    s: { limit, remaining: 0, resetSeconds, windowSeconds: w },
    retryAfter,
    situation,
  });
  // a soft quota refuses at its hard stop, once the overage allowance past its plan quota is used up
  const usedUp =
    shown.quota !== null
      ? `the overage allowance used up (${formatNumber(shown.limit)} calls, the hard stop above the plan quota of ${formatNumber(shown.quota)})`
      : 'the quota used up';
  switch (quotaWindowOf(rule, reset)) {
    case 'month':
      return at(
        86400,
        86400,
        `${usedUp} one day before the end of a 30-day month: Retry-After and the reset both point at the first moment of the next month; ${windowNamed(convention)} the length of the current month (28 to 31 days, one hour more or less in a month with a daylight-saving change).`,
      );
    case 'day':
      return at(3600, 3600, `${usedUp} one hour before local midnight: Retry-After and the reset both point at the next day.`);
    case 'rolling':
      return at(
        w,
        86400,
        `${usedUp}, asked at 00:00 UTC with calls on every day of the window: the oldest day's calls leave the window in one day (Retry-After); all of them have left it after the whole window (the reset).`,
      );
    case null:
      break;
  }
  if (shown.burst !== null) {
    const interval = shown.periodSeconds / shown.limit;
    const call = exampleCall(rule);
    const burst = shown.burst;
    // back-to-back calls of this cost leave burst mod cost tokens, fewer than one more call takes
    const left = burst % call.cost;
    const wait = (call.cost - left) * interval;
    const s = at(
      ceilSeconds((burst - left) * interval),
      Math.max(1, ceilSeconds(wait)),
      call.cost === 1
        ? `burst ${formatNumber(burst)}, ${formatNumber(shown.limit)} per ${formatNumber(shown.periodSeconds)} s; the bucket drained by back-to-back calls, one more arrives. Retry-After is the time one token takes to come back (${formatNumber(interval)} s), rounded up to whole seconds; the reset is the time until the bucket is full again (burst / rate).`
        : `burst ${formatNumber(burst)}, ${formatNumber(shown.limit)} per ${formatNumber(shown.periodSeconds)} s; ${callText(call)}, its cheapest endpoint: the bucket drained by back-to-back such calls${left > 0 ? ` (${formatNumber(left)} ${left === 1 ? 'token' : 'tokens'} left, fewer than one call takes)` : ''}, one more arrives. Retry-After is the time the ${formatNumber(call.cost - left)} missing tokens take to come back (${formatNumber(wait)} s), rounded up to whole seconds; the reset is the time until the bucket is full again.`,
    );
    return { ...s, s: { ...s.s, remaining: Math.min(s.s.limit, left) } };
  }
  return at(
    w,
    w,
    `${formatNumber(shown.limit)} per ${formatNumber(shown.periodSeconds)} s window; the whole limit used at the start of the window, one more call arrives.`,
  );
}

/** A stand-in when no client-facing middleware rule exists: a window of 100 per 60 s. */
const DEFAULT_EXAMPLE: MatrixRule = {
  id: 'default',
  source: 'generated',
  tier: 'fairness',
  title: 'default',
  endpointClass: 'all',
  endpoints: [],
  routes: [],
  algorithm: 'fixed-window',
  rate: { requests: 100, periodSeconds: 60 },
  burst: null,
  headers: 'full',
  errorCode: 'RATE_LIMITED',
  rationale: '',
};

/** Client-facing rules the middleware enforces (edge rules send no rate-limit headers). */
function middlewareFull(rules: MatrixRule[]): MatrixRule[] {
  return rules.filter((r) => r.headers === 'full' && r.layer !== 'edge' && r.tier !== 'outbound' && shownRuleOf(r) !== undefined);
}

function exampleRule(rules: MatrixRule[]): MatrixRule | undefined {
  const candidates = middlewareFull(rules).filter((r) => r.tier !== 'quota');
  return candidates.find((r) => r.tier === 'fairness') ?? candidates[0];
}

const MEANING: Record<string, string> = {
  'RateLimit-Policy':
    "The policy that applies, named after the matrix rule: q units per w seconds, with q / w exactly the rule's rate, so a client that spaces its calls w / q seconds apart is never refused. Token-bucket rules: q is the largest such count within the burst, so q calls may also go at once, then none until w has passed (where the burst is smaller than the smallest such q, q states the pace and only the burst can go at once). Window rules: q per window of w seconds.",
  RateLimit:
    'What is left now: r units remaining, and t seconds until the bucket is full again (token-bucket rules) or the window resets (window rules).',
  'RateLimit-Limit':
    'Units allowed per window of the rule: for a token bucket the largest count within its burst that its rate refills in whole seconds, for a window rule its limit.',
  'RateLimit-Remaining': 'Units left now.',
  'RateLimit-Reset': 'Seconds until the bucket is full again or the window resets (delta seconds, not a timestamp).',
  'X-RateLimit-Limit':
    'Units allowed per window of the rule: for a token bucket the largest count within its burst that its rate refills in whole seconds, for a window rule its limit.',
  'X-RateLimit-Remaining': 'Units left now.',
  'X-RateLimit-Reset': 'Seconds until the bucket is full again or the window resets.',
};

/**
 * The headers a client reads on every response, as the middleware sends them: for `example`,
 * the first call of a client (a full bucket). One rule per response: the most constraining one.
 */
function headerSpecs(convention: HeaderConvention, example: MatrixRule | undefined, reset?: QuotaResetT): HeaderSpec[] {
  const rule = example ?? DEFAULT_EXAMPLE;
  const shown = shownRuleOf(rule) ?? (shownRuleOf(DEFAULT_EXAMPLE) as ShownRule);
  return rateLimitHeaders(convention, { rule: shown, s: firstCall(rule, shown, reset) }).map(([name, value]) => ({
    name,
    example: value,
    meaning: MEANING[name] ?? '',
  }));
}

/** What changes on responses to calls a plan quota counts (empty without middleware quota rules). */
function quotaHeaderSpecs(
  convention: HeaderConvention,
  rules: MatrixRule[],
  example: MatrixRule | undefined,
  reset: QuotaResetT | undefined,
): HeaderSpec[] {
  const quotas = middlewareFull(rules).filter((r) => r.tier === 'quota');
  const quotaRule = quotas.find((r) => example?.plan !== undefined && r.plan === example.plan) ?? quotas[0];
  if (!quotaRule) return [];
  const quotaShown = shownRuleOf(quotaRule) as ShownRule;
  const quota = { rule: quotaShown, s: firstCall(quotaRule, quotaShown, reset) };
  // only RateLimit-Policy states the period (w); the single-value conventions leave it to the body
  const structured = convention === 'ietf-structured';
  const periodNote =
    quotaWindowOf(quotaRule, reset) === 'month'
      ? structured
        ? ' w is the length of the current calendar month in seconds (28 to 31 days; one hour more or less in a month with a daylight-saving change): 2592000 in a 30-day month.'
        : ' The period is the current calendar month (28 to 31 days; one hour more or less in a month with a daylight-saving change).'
      : quotaWindowOf(quotaRule, reset) === 'day'
        ? structured
          ? ' w is the length of the current calendar day in seconds (86400; one hour more or less on a daylight-saving day).'
          : ' The period is the current calendar day (one hour more or less on a daylight-saving day).'
        : '';
  // a rolling quota has no period that resets: its calls age out of a trailing window
  const rolling = reset?.kind === 'rolling';
  const inPeriod = rolling ? `in the trailing ${reset.days}-day window` : 'in the current period';
  const resetMeaning = rolling
    ? 'Seconds until every call counted in the window has aged out and the quota is whole again (calls age out a day at a time before that).'
    : 'Seconds until the period resets and the quota is whole again.';
  // a soft quota states its hard stop (the count that refuses), not its plan quota
  const soft = quotas.find((r) => shownRuleOf(r)?.quota !== null);
  const hardStopNote = soft
    ? ` For a plan that lets calls pass past its quota (${soft.plan ?? soft.id}: quota ${formatNumber(soft.quotaBackstop?.quota ?? 0)}, refused at ${formatNumber(soft.rate?.requests ?? 0)}) the count is the hard stop, where calls are refused, so the remaining count reaches 0 only when the next call would be refused; ${QUOTA_EXCEEDED_HEADER} marks the calls past the plan quota.`
    : '';
  const out: HeaderSpec[] = [];
  if (convention === 'ietf-structured') {
    const rule = example ?? quotaRule;
    const shown = shownRuleOf(rule) as ShownRule;
    const [policy, state] = rateLimitHeaders(convention, { rule: shown, s: firstCall(rule, shown, reset) }, quota);
    out.push(
      {
        name: 'RateLimit-Policy',
        example: policy?.[1] ?? '',
        meaning: `The plan quota as a second policy, next to the request-rate one: q calls per period of w seconds.${periodNote}${hardStopNote}`,
      },
      {
        name: 'RateLimit',
        example: state?.[1] ?? '',
        meaning: rolling
          ? `The quota's item: r calls left ${inPeriod}, t seconds until every call in it has aged out (here: the first call of the window).`
          : "The quota's item: r calls left in this period, t seconds until it resets (here: the first call of the period).",
      },
    );
  } else {
    const [limit, remaining, reset_] = QUOTA_HEADER_NAMES[convention];
    out.push(
      { name: limit, example: String(quota.s.limit), meaning: `Calls the plan quota allows ${inPeriod}.${periodNote}${hardStopNote}` },
      {
        name: remaining,
        example: String(quota.s.remaining),
        meaning: `Calls left ${inPeriod} before calls are refused (here: after its first call).`,
      },
      { name: reset_, example: String(quota.s.resetSeconds), meaning: resetMeaning },
    );
  }
  if (soft) {
    out.push({
      name: QUOTA_EXCEEDED_HEADER,
      example: `${sfString(soft.id)};over=1`,
      meaning:
        "Only on a call admitted past a soft plan quota (soft-warning, pay-per-overage): the quota rule and how many units this period has used beyond the quota. The call succeeded and the plan's overage terms apply; the quota's remaining count is what is left of the overage allowance before the hard stop refuses. This header is the design's own, not one of the IETF RateLimit draft's, so a generic client ignores it; it reads the same for a soft-warning and a pay-per-overage plan (which terms apply is the plan's, not the response's).",
    });
  }
  return out;
}

/** Whether a rule counts calls to an endpoint (the middleware's route match, by design names). */
function covers(rule: MatrixRule, endpoint: ResolvedEndpoint): boolean {
  if (rule.tier === 'outbound') return false;
  if (rule.endpoints.length > 0) return rule.endpoints.includes(endpoint.name);
  return rule.endpointClass === 'all' || rule.endpointClass === endpoint.class;
}

/**
 * Endpoints counted only by edge rules: no response on them carries rate-limit headers. For
 * anonymous callers: the endpoints that allow them where every application rule is keyed on an
 * account identity, which counts no anonymous caller there (RouteSpec.anonymous).
 */
function edgeOnlyEndpoints(rules: MatrixRule[], endpoints: ResolvedEndpoint[], callers: 'all' | 'anonymous' = 'all'): string[] {
  const edge = rules.filter((r) => r.layer === 'edge' && r.tier !== 'outbound');
  const app = rules.filter(
    (r) =>
      r.layer !== 'edge' &&
      r.tier !== 'outbound' &&
      r.headers !== 'none' &&
      (callers === 'all' || r.identity === undefined || !ACCOUNT_IDENTITIES.includes(r.identity)),
  );
  return endpoints
    .filter(
      (e) => e.class !== 'health' && (callers === 'all' || e.anonymous) && edge.some((r) => covers(r, e)) && !app.some((r) => covers(r, e)),
    )
    .map((e) => e.name);
}

const SPEC_REFERENCE: Record<HeaderConvention, string> = {
  'ietf-structured': `${IETF_DRAFT} (the RateLimit and RateLimit-Policy structured fields introduced in -08; unchanged in syntax through -11)`,
  'ietf-trio':
    'draft-ietf-httpapi-ratelimit-headers-07 and earlier (RateLimit-Limit / -Remaining / -Reset), kept for clients that already parse it',
  'x-ratelimit':
    "the de-facto X-RateLimit-* names; no specification, and users of the names disagree on the reset: here X-RateLimit-Reset counts seconds from now, not the Unix time GitHub's API sends in it, so a client written for GitHub's must read it as a delay",
};

/**
 * The exchange a throttled client goes through: the refusal with Retry-After and the
 * convention's headers, the wait with jitter, and the retry that passes. The limiter store
 * appears when a rule keeps its state there. `wait` is the example 429's Retry-After.
 */
function sequenceDiagram(rules: MatrixRule[], wait: number): Diagram | undefined {
  const clientFacing = middlewareFull(rules);
  if (clientFacing.length === 0) return undefined;
  const usesStore = clientFacing.some((r) => r.primitive === 'redis-lua');
  // Messages stay short: one line each (the headers are listed in the table above the diagram).
  const check = (allowed: boolean): Diagram['edges'] =>
    usesStore
      ? [
          { from: 'api', to: 'store', label: 'check and consume' },
          { from: 'store', to: 'api', label: allowed ? 'allowed' : `denied, retry in ${wait} s`, dashed: true },
        ]
      : [];
  return {
    kind: 'sequence',
    title: 'A throttled request and its retry',
    nodes: [
      { id: 'client', label: ['API client'], shape: 'box' },
      { id: 'api', label: ['API and limiter'], shape: 'box' },
      ...(usesStore ? [{ id: 'store', label: ['limiter store'], shape: 'store' as const }] : []),
    ],
    edges: [
      { from: 'client', to: 'api', label: 'request' },
      ...check(false),
      { from: 'api', to: 'client', label: `429, Retry-After: ${wait}`, dashed: true },
      { from: 'client', to: 'client', label: `wait ${wait} s + jitter` },
      { from: 'client', to: 'api', label: 'retry' },
      ...check(true),
      { from: 'api', to: 'client', label: '200 OK, limit headers', dashed: true },
    ],
  };
}

/** The example 429 of a rule: its headers in the middleware's order, and its body. */
function example429(
  convention: HeaderConvention,
  docsUrl: string,
  rule: MatrixRule,
  reset: QuotaResetT | undefined,
): { example: ExampleResponse; body: Record<string, unknown>; retryAfter: number } {
  const shown = shownRuleOf(rule) as ShownRule;
  const { s, retryAfter, situation } = refusal(convention, rule, shown, reset);
  const stated = { rule: shown, s };
  // a quota's own refusal also fills the single-value conventions' quota trio
  const quota = rule.tier === 'quota' && convention !== 'ietf-structured' ? stated : undefined;
  const headers = [['Content-Type', PROBLEM_JSON], ...rateLimitHeaders(convention, stated, quota), ['Retry-After', String(retryAfter)]].map(
    ([name, value]) => ({ name: name as string, value: value as string }),
  );
  return {
    example: { ruleId: rule.id, situation, status: 429, headers },
    body: problemBody(docsUrl, shown, s, retryAfter),
    retryAfter,
  };
}

interface ContractOptions {
  /** The quota reset of the answers (calendar month or day, rolling days), when quotas exist. */
  quotaReset?: QuotaResetT;
  /** The design's endpoints (to name those only edge rules count). */
  endpoints?: ResolvedEndpoint[];
  /** The gateway that enforces the edge rules (what its refusals carry). */
  gateway?: Gateway;
}

export function buildContract(
  rules: MatrixRule[],
  convention: HeaderConvention,
  docsUrl: string,
  options: ContractOptions = {},
): ResponseContract {
  const reset = options.quotaReset;
  const example = exampleRule(rules);
  const silent = rules.filter((r) => r.headers === 'silent').map((r) => r.id);
  const quota = middlewareFull(rules).find((r) => r.errorCode === 'QUOTA_EXCEEDED');
  const limited = example429(convention, docsUrl, example ?? DEFAULT_EXAMPLE, reset);
  const headers = headerSpecs(convention, example, reset);
  const quotaHeaders = quotaHeaderSpecs(convention, rules, example, reset);
  const sequence = sequenceDiagram(rules, limited.retryAfter);
  const edgeOnly = edgeOnlyEndpoints(rules, options.endpoints ?? []);
  const contract: ResponseContract = {
    convention,
    specReference: SPEC_REFERENCE[convention],
    headers,
    quotaHeaders,
    retryAfter: {
      onEvery429: true,
      unit: 'seconds',
      jitterGuidance:
        'Retry-After is the earliest moment a retry can pass. Clients wait that long plus a random 0-50% of it (or full jitter on exponential backoff for repeated 429s): a fleet that retries at exactly Retry-After arrives as one synchronized wave and trips the limit again.',
      clockGuidance:
        'Time the wait by the clock, not by one timer alone: on a busy event loop a timer can fire a few milliseconds early, and a retry sent before Retry-After has fully passed is refused once more. When the timer fires, check the time elapsed since the 429 and wait out any remainder.',
    },
    silentRuleIds: silent,
    edgeRuleIds: rules.filter((r) => r.headers === 'edge').map((r) => r.id),
    edgeRefusalBody: edgeRefusalBody(options.gateway ?? 'none'),
    edgeOnlyEndpoints: edgeOnly,
    edgeOnlyAnonymous: edgeOnlyEndpoints(rules, options.endpoints ?? [], 'anonymous').filter((e) => !edgeOnly.includes(e)),
    rateLimitedBody: limited.body,
    ...(example ? { rateLimitedExample: limited.example } : {}),
    storeUnavailable: { status: 503, retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_SECONDS },
    docsUrl,
    clientBehaviour: [
      ...(middlewareFull(rules).length > 0
        ? ['Read the rate-limit headers on every response and slow down before the remaining count reaches zero.']
        : ['No response carries rate-limit headers: pace requests below the published limits rather than probing for them.']),
      ...(quotaHeaders.length > 0
        ? [
            'Where a plan quota counts the call, read its own remaining count and reset as well, and plan the rest of the period around them.',
          ]
        : []),
      'On 429, wait at least Retry-After seconds, plus random jitter; never retry immediately.',
      'On repeated 429s, back off exponentially (doubling, capped, with full jitter).',
      ...(rules.some((r) => r.errorCode === 'QUOTA_EXCEEDED')
        ? ['Treat QUOTA_EXCEEDED as "stop until the reset", not as "retry soon".']
        : []),
      // a 503 comes only from a fail-closed rule whose state is in the store, or in Envoy's rate
      // limit service (a rule it counts fails closed only when failure_mode_deny is true)
      ...(rules.some(
        (r) =>
          r.failMode === 'closed' &&
          (keepsStateInStore(r) || (options.gateway === 'envoy' && r.layer === 'edge' && envoyCounter(r) === 'service')),
      )
        ? ['On 503 from a fail-closed limit, retry after Retry-After like any 503.']
        : []),
    ],
    ...(sequence ? { sequenceDiagram: sequence } : {}),
  };
  if (quota) {
    const refused = example429(convention, docsUrl, quota, reset);
    contract.quotaExceededBody = refused.body;
    contract.quotaExceededExample = refused.example;
  }
  // a plan that passes calls past its quota refuses at its hard stop, with both numbers in the body
  const overage = middlewareFull(rules).find((r) => r.errorCode === 'QUOTA_EXCEEDED' && shownRuleOf(r)?.quota !== null);
  if (overage && overage !== quota) {
    const refused = example429(convention, docsUrl, overage, reset);
    contract.overageExceededBody = refused.body;
    contract.overageExceededExample = refused.example;
  }
  return contract;
}

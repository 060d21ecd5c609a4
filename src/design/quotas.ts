/** Quota design: reset semantics, exhaustion behaviour, enforcement kept apart from billing. */
import type { QuotaResetT } from '../answers/schema.js';
import { formatNumber, joinAnd } from '../format.js';
import { QUOTA_EXCEEDED_HEADER, QUOTA_HEADER_NAMES } from './contract.js';
import type { HeaderConvention, MatrixRule, QuotaDesign, Scope } from './model.js';

/** Where a client reads its remaining quota, in the design's one header convention. */
function quotaHeadersText(convention: HeaderConvention): string {
  if (convention === 'ietf-structured') {
    return 'the RateLimit-Policy and RateLimit fields carry the plan quota as a second item (q, w; r, t) next to the request-rate policy';
  }
  const [limit, remaining, reset] = QUOTA_HEADER_NAMES[convention];
  return `${limit}, ${remaining} and ${reset} carry the plan quota beside the ${convention === 'x-ratelimit' ? 'X-RateLimit-*' : 'RateLimit-*'} headers (which state the tightest limit of the call)`;
}

/** Where each plan of an exhaustion kind is refused after all, with whether the answers set it. */
function capsText(quotaRules: MatrixRule[], plans: Scope['plans'], kind: 'soft-warning' | 'pay-per-overage'): string {
  const capped = quotaRules.filter((r) => r.quotaBackstop && r.rate && plans.some((p) => p.name === r.plan && p.exhaustion === kind));
  if (capped.length === 0) return '';
  return `The limiter refuses calls past ${capped
    .map(
      (r) =>
        `${formatNumber(r.rate?.requests ?? 0)} for ${r.plan} (${r.quotaBackstop?.assumed ? 'an assumed cap, an open product decision: see the assumptions' : 'the overage cap the answers set'})`,
    )
    .join('; ')}.`;
}

/**
 * The plan quota a quota rule lets calls pass past (soft-warning, pay-per-overage), when its
 * hard stop (rate.requests, where the limiter refuses) sits above it; null for a hard quota.
 * The middleware flags the calls in between (Quota-Exceeded) and counts them in
 * ratelimit_quota_exhausted_total, and RateLimitQuotaOverage alerts on them.
 */
export function softPlanQuota(rule: Pick<MatrixRule, 'id' | 'rate'>, quotas: Pick<QuotaDesign, 'plans'> | undefined): number | null {
  const planQuota = quotas?.plans.find((p) => p.ruleId === rule.id)?.quota;
  return planQuota !== undefined && rule.rate !== undefined && planQuota < rule.rate.requests ? planQuota : null;
}

/**
 * The warning for quotas counted in the process's memory (a design without a store): every
 * restart or deploy sets them back to 0, so a long quota is not enforced. The document's quota
 * section and generate's stderr state this one text.
 */
export function inProcessQuotaWarning(rules: readonly MatrixRule[]): string | null {
  const local = rules.filter((r) => r.tier === 'quota' && r.layer === 'middleware' && r.primitive === 'in-process');
  if (local.length === 0) return null;
  const ids = joinAnd(local.map((r) => r.id));
  return `Warning: the quotas (${ids}) are counted in the process's memory, since the design has no store (stack.store none): every restart, crash or deploy sets every caller's usage back to 0, so each one opens a fresh quota period (a process deployed weekly grants about four monthly quotas a month), and nothing in the limiter holds the count across it. Until the quota counts move to a store (stack.store redis or valkey; the design then keeps them in it, persisted), treat these rows as a cap per process lifetime, and enforce the plan quota from the metering system, which keeps every call.`;
}

export function buildQuotas(
  scope: Scope,
  rules: MatrixRule[],
  reset: QuotaResetT | undefined,
  billingSource: 'metering-system' | 'limiter-counters',
  convention: HeaderConvention = 'ietf-structured',
): QuotaDesign | undefined {
  const quotaRules = rules.filter((r) => r.tier === 'quota');
  if (!reset || (quotaRules.length === 0 && !scope.plans.some((p) => p.quota !== undefined))) return undefined;
  const resetDesign: QuotaDesign['reset'] =
    reset.kind === 'calendar'
      ? {
          kind: 'calendar',
          period: reset.period,
          timeZone: reset.timeZone,
          description: `Quotas reset at 00:00 on the first ${reset.period === 'month' ? 'day of each calendar month' : 'moment of each calendar day'} in ${reset.timeZone}. The middleware computes the window id (e.g. ${reset.period === 'month' ? '2026-12' : '2026-12-02'}) and the window end in that zone, so daylight-saving changes move the reset with local midnight; the counter key expires shortly after the window ends.`,
        }
      : {
          kind: 'rolling',
          days: reset.days,
          description: `A rolling ${reset.days}-day window: usage is counted in one bucket per day (UTC), and a request is admitted when the sum over the last ${reset.days} days is under the quota. A day's bucket stops counting once it is ${reset.days} days old and is deleted at the next call that counts, so usage ages out one day at a time rather than all at once.`,
        };
  const inProcess = inProcessQuotaWarning(rules);
  return {
    reset: resetDesign,
    plans: scope.plans
      .filter((p) => p.quota !== undefined)
      .map((p) => ({
        name: p.name,
        quota: p.quota as number,
        exhaustion: p.exhaustion,
        ruleId: quotaRules.find((r) => r.plan === p.name)?.id ?? '',
      })),
    exhaustionText: {
      hard: `Hard cut-off: at the quota every call gets 429 with code QUOTA_EXCEEDED and Retry-After pointing at ${reset.kind === 'rolling' ? "the moment enough of the oldest day's usage ages out" : 'the reset'}.`,
      'soft-warning': `Soft overage: past the quota calls still succeed and carry a warning: a ${QUOTA_EXCEEDED_HEADER} header names the quota and the calls used beyond it, and the quota's remaining count is what is left before the hard stop, where calls get 429 QUOTA_EXCEEDED with both the plan quota and the hard stop in the body. ${capsText(quotaRules, scope.plans, 'soft-warning')}`,
      'pay-per-overage': `Pay per overage: past the quota calls succeed (with the ${QUOTA_EXCEEDED_HEADER} header, as for a soft overage) and the metering system bills each one. ${capsText(quotaRules, scope.plans, 'pay-per-overage')}`,
    },
    billingSource,
    separation:
      billingSource === 'metering-system'
        ? `The limiter counters decide admission only: they are fast, ${inProcess ? 'start at 0 again whenever the process restarts' : 'may lose a few counts when the store fails open'}, and expire. Invoices come from the metering system (an append-only usage log written after the response), which is exact and auditable. The two are reconciled by reports, never by reading limiter keys.`
        : 'The answers say invoices are computed from the limiter counters. Those counters are approximate by design (they fail open, expire, and are reset by kill switches), so they must not be a billing source.',
    ...(inProcess ? { inProcess } : {}),
    remainingExposure: `Remaining quota is visible in the headers of every response to a call the quota counts (its QUOTA_EXCEEDED refusals included; never on silent security responses): ${quotaHeadersText(convention)}. A 429 from a rate limit does not show it (rate limits are checked before the quota counts the call). No usage endpoint is generated: if clients need their usage outside API calls, serve it from the metering system (recommended; yours to build, not part of this design). Largest quota in the design: ${formatNumber(Math.max(0, ...scope.plans.map((p) => p.quota ?? 0)))} calls.`,
  };
}

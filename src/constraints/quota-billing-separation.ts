/**
 * Constraint 8: when plans carry quotas, enforcement and billing are separate systems: the
 * limiter's counters may be approximate, invoices come from an exact, auditable meter.
 */
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, objects, rulesOf, show } from './guards.js';

export default defineConstraint({
  meta: {
    id: 'quota-billing-separation',
    number: 8,
    title: 'Quota enforcement is separate from billing',
    description:
      'When plan quotas exist, the design has a quota section that bills from the metering system, never from the limiter counters, and says how the two are kept apart.',
    messages: {
      missingQuotaDesign: 'Plans carry quotas, but the design has no quota section.',
      billingFromLimiter: 'Invoices come from {{billingSource}}; bill from the metering system, never from the rate limiter counters.',
      separationNotStated: 'The quota section does not say how enforcement and billing are kept apart.',
    },
  },
  applies: (design) =>
    design?.quotas !== undefined ||
    objects(design?.scope?.plans).some((p) => isPositiveNumber(p.quota)) ||
    rulesOf(design).some((r) => r.tier === 'quota'),
  check(design, report) {
    const quotas = design?.quotas;
    if (quotas === undefined || quotas === null) {
      report({ messageId: 'missingQuotaDesign' });
      return;
    }
    if (quotas.billingSource !== 'metering-system') {
      report({ messageId: 'billingFromLimiter', data: { billingSource: show(quotas.billingSource ?? 'an unnamed source') } });
    }
    if (!isNonEmptyString(quotas.separation)) report({ messageId: 'separationNotStated' });
  },
});

/**
 * Design question 5: limits already promised. Plan tiers with a rate and an optional quota;
 * when a quota exists, how it resets (calendar day/month in a named IANA time zone, or
 * a rolling window of N days) and what happens when it runs out. Previous answers are
 * offered together ("Keep the promised limits: ...?"); rejected, each question offers its
 * previous value as the default, plan by plan.
 */
import type { AnswersInput, QuotaResetT } from '../../answers/schema.js';
import { UserError } from '../../messages.js';
import { type Step, type StepContext, UNKNOWN } from '../context.js';
import { Q, type QuotaResetChoice, resetText } from '../questions.js';
import { askEach, askList, askText, defaultNote, given, offerKnown, resolve } from '../resolve.js';
import { RATE_HELP } from '../spec-help.js';

type PlanT = NonNullable<AnswersInput['plans']>[number];

const MAX_PLANS = 10;

const EXAMPLES = ['free', 'pro', 'enterprise'];

function resetChoiceOf(r: QuotaResetT | undefined): QuotaResetChoice | undefined {
  if (!r) return undefined;
  return r.kind === 'rolling' ? 'rolling' : r.period === 'day' ? 'calendar-day' : 'calendar-month';
}

/**
 * Plans typed in one by one; `before` (the previous ones) gives each its defaults: name, rate
 * and quota of the plan at the same place. One kept under the same name keeps what was written
 * by hand (burst, its own exhaustion).
 */
function askPlans(ctx: StepContext, before: readonly PlanT[] = []): Promise<PlanT[]> {
  return askEach(ctx, 'plan', MAX_PLANS, before, async (earlier, plans) => {
    const name = await askText<string>(ctx, {
      read: { kind: 'text', max: 120 },
      message: `Name of plan ${plans.length + 1} (e.g. ${EXAMPLES[plans.length] ?? 'partner'})${earlier ? defaultNote(ctx.known, 'plans') : ''}:`,
      default: earlier?.name,
      refusal: 'The name {problem}.',
      check: (v) => (plans.some((p) => p.name.toLowerCase() === v.toLowerCase()) ? `There is already a plan called "${v}".` : undefined),
    });
    const same = earlier && earlier.name.toLowerCase() === name.toLowerCase() ? earlier : undefined;
    const rate = await askText<PlanT['rate']>(ctx, {
      read: { kind: 'rate' },
      message: `Rate promised on ${name}, as ${RATE_HELP}:`,
      default: same && `${same.rate.requests}/${same.rate.per}`,
    });
    const quota = await askText<number | undefined>(ctx, {
      read: { kind: 'number', example: '10000' },
      message: `Quota on ${name}: requests per quota period (e.g. 10000; {hint}):`,
      default: same?.quota,
      blank: 'none',
      field: 'plans.quota',
    });
    return {
      name,
      rate,
      ...(same?.burst !== undefined ? { burst: same.burst } : {}),
      ...(quota !== undefined ? { quota } : {}),
      ...(same?.exhaustion !== undefined ? { exhaustion: same.exhaustion } : {}),
    };
  });
}

function badFlag(option: string, reason: string): never {
  throw new UserError('badOption', { option, reason });
}

/**
 * The reset: its kind is a question; so are the length of a rolling window and the time zone of
 * a calendar one, answered by the known reset when the kind was (a flag for the other kind is
 * refused), else asked with it as their default.
 */
async function resolveReset(
  ctx: StepContext,
  mode: { use: boolean; ask: boolean },
  earlier?: QuotaResetT,
): Promise<QuotaResetT | undefined> {
  const { value: choice, source } = await resolve(ctx, Q.quotaReset, {
    ...mode,
    known: resetChoiceOf(earlier),
    ...(earlier ? { shown: resetText(earlier) } : {}),
  });
  if (choice === undefined || choice === UNKNOWN) return undefined;
  const kept = source === 'previous' || source === 'detected' ? earlier : undefined;
  const o = { ask: mode.ask && !kept, use: !!kept || !mode.ask, from: 'quotas.reset' };
  if (choice === 'rolling') {
    if (kept && ctx.flags.quotaTimeZone !== undefined)
      badFlag(
        '--quota-time-zone',
        `only applies to calendar resets, and the quota resets on a rolling window (${resetText(kept)}); add --quota-reset calendar-month or calendar-day`,
      );
    const { value: days } = await resolve(ctx, Q.quotaDays, { ...o, known: earlier?.kind === 'rolling' ? earlier.days : undefined });
    return { kind: 'rolling', days: days as number };
  }
  if (kept && ctx.flags.quotaDays !== undefined)
    badFlag('--quota-days', `only applies to rolling resets, and the quota resets ${resetText(kept)}; add --quota-reset rolling`);
  const { value: timeZone } = await resolve(ctx, Q.quotaTimeZone, {
    ...o,
    known: earlier?.kind === 'calendar' ? earlier.timeZone : undefined,
  });
  return { kind: 'calendar', period: choice === 'calendar-day' ? 'day' : 'month', timeZone: timeZone as string };
}

export const plans: Step = {
  id: 'plans',
  item: 5,
  fields: ['plans', 'quotas.reset', 'quotas.exhaustion'],
  async run(ctx) {
    const f = ctx.flags;
    const known = ctx.known.answers.quotas ?? {};
    const mode = await offerKnown(ctx, (list) => `Keep the promised limits: ${list}?`, [
      { q: Q.plans },
      ...(known.reset ? [{ q: Q.quotaReset, value: known.reset, shown: resetText(known.reset) }] : []),
      { q: Q.exhaustion },
    ]);
    const { value: list } = await resolve(ctx, Q.plans, {
      ...mode,
      prompt: {
        kind: 'custom',
        ask: (known) =>
          askList(
            ctx,
            'plans',
            known,
            {
              message: 'Have limits been promised to customers (plan tiers, SLAs, documented limits)?',
              yes: 'e.g. Free 60 requests/minute and 10,000 a month; Pro 600/minute.',
            },
            (before) => askPlans(ctx, before),
          ),
      },
    });
    const hasQuota = (given(list) ?? []).some((p) => p.quota !== undefined);
    const reset =
      hasQuota || f.quotaReset !== undefined || (mode.use && known.reset) ? await resolveReset(ctx, mode, known.reset) : undefined;
    const exhaustion =
      hasQuota || f.exhaustion !== undefined || (mode.use && known.exhaustion)
        ? given((await resolve(ctx, Q.exhaustion, { ...mode })).value)
        : undefined;
    const quotas = { ...(reset ? { reset } : {}), ...(exhaustion ? { exhaustion } : {}) };
    return { ...(given(list) === undefined ? {} : { plans: list as PlanT[] }), ...(Object.keys(quotas).length > 0 ? { quotas } : {}) };
  },
};

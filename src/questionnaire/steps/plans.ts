/**
 * Design question 5: limits already promised. Plan tiers with a rate and an optional quota;
 * when a quota exists, how it resets (calendar day/month in a named IANA time zone, or
 * a rolling window of N days) and what happens when it runs out. Previous answers are
 * offered together ("Keep the promised limits: ...?"); rejected, each question offers its
 * previous value as the default, plan by plan.
 */
import { type EXHAUSTION, Plan, type AnswersInput, type QuotaResetT } from '../../answers/schema.js';
import { formatNumber } from '../../format.js';
import { UserError } from '../../messages.js';
import { defaultNote, DONT_KNOW_NAME, keepKnown, UNKNOWN, type KnownItem, type Step, type StepContext, type Unknown } from '../context.js';
import { nonEmpty, type QuotaResetChoice } from '../flags.js';
import { must, parseNumber, parseRate, parseRollingDays, parseTimeZone, validatorOf } from '../parse.js';
import { RATE_HELP } from '../spec-help.js';

type PlanT = NonNullable<AnswersInput['plans']>[number];
type Exhaustion = (typeof EXHAUSTION)[number];

export const MAX_PLANS = 10;
export const DEFAULT_ROLLING_DAYS = 30;

const isNone = (t: string): boolean => t.trim().toLowerCase() === 'none';

/** 'Free 60/minute, quota 10,000' */
export function planText(p: PlanT): string {
  return `${p.name} ${formatNumber(p.rate.requests)}/${p.rate.per}${p.quota !== undefined ? `, quota ${formatNumber(p.quota)}` : ''}`;
}

/** 'each calendar month (Europe/Berlin)', 'rolling 30 days' */
export function resetText(r: QuotaResetT): string {
  return r.kind === 'rolling' ? `rolling ${r.days} days` : `each calendar ${r.period} (${r.timeZone})`;
}

function resetChoiceOf(r: QuotaResetT | undefined): QuotaResetChoice | undefined {
  if (!r) return undefined;
  return r.kind === 'rolling' ? 'rolling' : r.period === 'day' ? 'calendar-day' : 'calendar-month';
}

/**
 * Plans typed in one by one; `before` (the previous ones) gives each its defaults: name, rate
 * and quota of the plan at the same place. One kept under the same name keeps what was written
 * by hand (burst, its own exhaustion).
 */
async function askPlans(ctx: StepContext, before: readonly PlanT[] = []): Promise<PlanT[]> {
  const plans: PlanT[] = [];
  for (;;) {
    const n = plans.length + 1;
    const earlier = before[plans.length];
    const note = earlier ? defaultNote(ctx.known, 'plans') : '';
    const name = await ctx.prompt.input({
      message: `Name of plan ${n} (e.g. ${['free', 'pro', 'enterprise'][plans.length] ?? 'partner'})${note}:`,
      ...(earlier ? { default: earlier.name } : {}),
      validate: (t) => {
        const r = nonEmpty(t, 120);
        if (!r.ok) return `The name ${r.message}.`;
        return plans.some((p) => p.name.toLowerCase() === r.value.toLowerCase()) ? `There is already a plan called "${r.value}".` : true;
      },
    });
    const same = earlier && earlier.name.toLowerCase() === name.toLowerCase() ? earlier : undefined;
    const rate = must(
      parseRate(
        await ctx.prompt.input({
          message: `Rate promised on ${name}, as ${RATE_HELP}:`,
          ...(same ? { default: `${same.rate.requests}/${same.rate.per}` } : {}),
          validate: validatorOf(parseRate),
        }),
      ),
    );
    const quotaDefault = same?.quota !== undefined ? String(same.quota) : undefined;
    const quotaText = await ctx.prompt.input({
      message: `Quota on ${name}: requests per quota period (e.g. 10000; ${quotaDefault ? '"none"' : 'empty'} for none):`,
      ...(quotaDefault ? { default: quotaDefault } : {}),
      validate: (t) => (isNone(t) ? true : validatorOf((x) => parseNumber(x, Plan.shape.quota, '10000'), true)(t)),
    });
    const quota = quotaText === '' || isNone(quotaText) ? undefined : must(parseNumber(quotaText, Plan.shape.quota, '10000'));
    plans.push({
      name,
      rate,
      ...(same?.burst !== undefined ? { burst: same.burst } : {}),
      ...(quota !== undefined ? { quota } : {}),
      ...(same?.exhaustion !== undefined ? { exhaustion: same.exhaustion } : {}),
    });
    if (plans.length >= MAX_PLANS) {
      ctx.say(`That is ${MAX_PLANS} plans; add more to the answers file by hand if needed.`);
      break;
    }
    if (!(await ctx.prompt.confirm({ message: 'Add another plan?', default: plans.length < before.length }))) break;
  }
  return plans;
}

async function askTimeZone(ctx: StepContext, earlier?: string): Promise<string> {
  const def = earlier ?? 'UTC';
  const text = await ctx.prompt.input({
    message: `Time zone the quota period follows (IANA name, e.g. UTC, Europe/Berlin, America/New_York)${earlier ? defaultNote(ctx.known, 'quotas.reset') : ''}:`,
    default: def,
    validate: (t) => validatorOf(parseTimeZone)(t === '' ? def : t),
  });
  return text === '' ? def : must(parseTimeZone(text));
}

async function askDays(ctx: StepContext, earlier?: number): Promise<number> {
  const def = String(earlier ?? DEFAULT_ROLLING_DAYS);
  const text = await ctx.prompt.input({
    message: `Length of the rolling window in days (1-366)${earlier !== undefined ? defaultNote(ctx.known, 'quotas.reset') : ''}:`,
    default: def,
    validate: (t) => validatorOf(parseRollingDays)(t === '' ? def : t),
  });
  return must(parseRollingDays(text === '' ? def : text));
}

function badFlag(option: string, reason: string): never {
  throw new UserError('badOption', { option, reason });
}

/**
 * The reset: --quota-reset, else the kept one (with --quota-time-zone or --quota-days applied),
 * else asked (`ask`) with the known one (`earlier`) as the default.
 */
async function resolveReset(
  ctx: StepContext,
  opts: { ask: boolean; kept?: QuotaResetT; earlier?: QuotaResetT },
): Promise<QuotaResetT | undefined> {
  const f = ctx.flags;
  const { kept, earlier } = opts;
  if (f.quotaReset === undefined && kept) {
    if (kept.kind === 'rolling') {
      if (f.quotaTimeZone !== undefined)
        badFlag(
          '--quota-time-zone',
          `only applies to calendar resets, and the quota resets on a rolling window (${resetText(kept)}); add --quota-reset calendar-month or calendar-day`,
        );
      return { kind: 'rolling', days: f.quotaDays ?? kept.days };
    }
    if (f.quotaDays !== undefined)
      badFlag('--quota-days', `only applies to rolling resets, and the quota resets ${resetText(kept)}; add --quota-reset rolling`);
    return { ...kept, timeZone: f.quotaTimeZone ?? kept.timeZone };
  }
  let choice: QuotaResetChoice | Unknown | undefined = f.quotaReset;
  if (choice === undefined && opts.ask) {
    const def = resetChoiceOf(earlier);
    choice = await ctx.prompt.select<QuotaResetChoice | Unknown>({
      message: `When do quotas reset?${earlier ? defaultNote(ctx.known, 'quotas.reset', resetText(earlier)) : ''}`,
      choices: [
        { value: 'calendar-month', name: 'Each calendar month', description: 'On the 1st, at midnight in a time zone you name.' },
        { value: 'calendar-day', name: 'Each calendar day', description: 'At midnight in a time zone you name.' },
        { value: 'rolling', name: 'Rolling window', description: 'The last N days, sliding; no reset-day stampede.' },
        { value: UNKNOWN, name: DONT_KNOW_NAME },
      ],
      ...(def ? { default: def } : {}),
    });
  }
  if (choice === undefined || choice === UNKNOWN) return undefined;
  if (choice === 'rolling') {
    const days =
      f.quotaDays ?? (opts.ask ? await askDays(ctx, earlier?.kind === 'rolling' ? earlier.days : undefined) : DEFAULT_ROLLING_DAYS);
    return { kind: 'rolling', days };
  }
  const earlierZone = earlier?.kind === 'calendar' ? earlier.timeZone : undefined;
  const timeZone = f.quotaTimeZone ?? (opts.ask ? await askTimeZone(ctx, earlierZone) : (earlierZone ?? 'UTC'));
  return { kind: 'calendar', period: choice === 'calendar-day' ? 'day' : 'month', timeZone };
}

async function resolveExhaustion(
  ctx: StepContext,
  opts: { ask: boolean; kept?: Exhaustion; earlier?: Exhaustion },
): Promise<Exhaustion | undefined> {
  const flag = ctx.flags.exhaustion;
  if (flag !== undefined) return flag === UNKNOWN ? undefined : flag;
  if (opts.kept) return opts.kept;
  if (!opts.ask) return undefined;
  const e = await ctx.prompt.select<Exhaustion | Unknown>({
    message: `When a customer uses up the quota:${opts.earlier ? defaultNote(ctx.known, 'quotas.exhaustion', opts.earlier) : ''}`,
    choices: [
      { value: 'hard', name: 'Stop', description: 'Reject with 429 QUOTA_EXCEEDED until the reset.' },
      { value: 'soft-warning', name: 'Warn', description: 'Keep serving and tell the customer.' },
      { value: 'pay-per-overage', name: 'Charge overage', description: 'Keep serving; billing counts the extra calls.' },
      { value: UNKNOWN, name: DONT_KNOW_NAME },
    ],
    ...(opts.earlier ? { default: opts.earlier } : {}),
  });
  return e === UNKNOWN ? undefined : e;
}

export const plans: Step = {
  id: 'plans',
  item: 5,
  fields: ['plans', 'quotas.reset', 'quotas.exhaustion'],
  async run(ctx) {
    const f = ctx.flags;
    const known = {
      plans: ctx.known.answers.plans as PlanT[] | undefined,
      reset: ctx.known.answers.quotas?.reset,
      exhaustion: ctx.known.answers.quotas?.exhaustion,
    };
    const items: KnownItem[] = [];
    if (f.plans === undefined && known.plans !== undefined) {
      items.push({
        field: 'plans',
        label: 'plans',
        value: known.plans,
        shown: known.plans.length === 0 ? 'none' : known.plans.map(planText).join('; '),
      });
    }
    if (f.quotaReset === undefined && known.reset)
      items.push({ field: 'quotas.reset', label: 'quotas reset', value: known.reset, shown: resetText(known.reset) });
    if (f.exhaustion === undefined && known.exhaustion)
      items.push({ field: 'quotas.exhaustion', label: 'when used up', value: known.exhaustion });
    const { kept, finished } = await keepKnown(ctx, (list) => `Keep the promised limits: ${list}?`, items);
    const useKnown = !ctx.interactive || kept;
    const ask = ctx.interactive && !finished;

    let list: PlanT[] | undefined;
    if (f.plans !== undefined) {
      list = f.plans === UNKNOWN ? undefined : f.plans;
    } else if (useKnown && known.plans !== undefined) {
      list = known.plans;
    } else if (ask) {
      const earlier = known.plans;
      const def = earlier === undefined ? undefined : earlier.length > 0 ? 'yes' : 'no';
      const has = await ctx.prompt.select<'yes' | 'no' | Unknown>({
        message: `Have limits been promised to customers (plan tiers, SLAs, documented limits)?${def ? defaultNote(ctx.known, 'plans', def) : ''}`,
        // No first: Enter on a question not yet thought about opens no sub-questions.
        choices: [
          { value: 'no', name: 'No' },
          { value: 'yes', name: 'Yes', description: 'e.g. Free 60 requests/minute and 10,000 a month; Pro 600/minute.' },
          { value: UNKNOWN, name: DONT_KNOW_NAME },
        ],
        ...(def ? { default: def } : {}),
      });
      list = has === 'yes' ? await askPlans(ctx, earlier) : has === 'no' ? [] : undefined;
    }
    const hasQuota = (list ?? []).some((p) => p.quota !== undefined);
    const keptReset = useKnown ? known.reset : undefined;
    const keptExhaustion = useKnown ? known.exhaustion : undefined;
    const reset =
      hasQuota || f.quotaReset !== undefined || keptReset
        ? await resolveReset(ctx, { ask, ...(keptReset ? { kept: keptReset } : {}), ...(known.reset ? { earlier: known.reset } : {}) })
        : undefined;
    const exhaustion =
      hasQuota || f.exhaustion !== undefined || keptExhaustion
        ? await resolveExhaustion(ctx, {
            ask,
            ...(keptExhaustion ? { kept: keptExhaustion } : {}),
            ...(known.exhaustion ? { earlier: known.exhaustion } : {}),
          })
        : undefined;
    const quotas = { ...(reset ? { reset } : {}), ...(exhaustion ? { exhaustion } : {}) };
    return { ...(list === undefined ? {} : { plans: list }), ...(Object.keys(quotas).length > 0 ? { quotas } : {}) };
  },
};

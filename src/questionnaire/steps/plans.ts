/**
 * Phase 1 item 5: limits already promised. Plan tiers with a rate and an optional quota;
 * when a quota exists, how it resets (calendar day/month in a named IANA time zone, or
 * a rolling window of N days) and what happens when it runs out.
 */
import { EXHAUSTION, Plan, type AnswersInput, type QuotaResetT } from '../../answers/schema.js';
import { DONT_KNOW_NAME, UNKNOWN, type Step, type StepContext, type Unknown } from '../context.js';
import { nonEmpty, type QuotaResetChoice } from '../flags.js';
import { must, parseNumber, parseRate, parseRollingDays, parseTimeZone, validatorOf } from '../parse.js';
import { RATE_HELP } from '../spec-help.js';

type PlanT = NonNullable<AnswersInput['plans']>[number];
type Exhaustion = (typeof EXHAUSTION)[number];

export const MAX_PLANS = 10;
export const DEFAULT_ROLLING_DAYS = 30;

async function askPlans(ctx: StepContext): Promise<PlanT[]> {
  const plans: PlanT[] = [];
  for (;;) {
    const n = plans.length + 1;
    const name = await ctx.prompt.input({
      message: `Name of plan ${n} (e.g. ${['free', 'pro', 'enterprise'][plans.length] ?? 'partner'}):`,
      validate: (t) => {
        const r = nonEmpty(t, 120);
        if (!r.ok) return `The name ${r.message}.`;
        return plans.some((p) => p.name.toLowerCase() === r.value.toLowerCase()) ? `There is already a plan called "${r.value}".` : true;
      },
    });
    const rate = must(
      parseRate(
        await ctx.prompt.input({ message: `Rate promised on ${name}, as ${RATE_HELP}:`, validate: validatorOf(parseRate) }),
      ),
    );
    const quotaText = await ctx.prompt.input({
      message: `Quota on ${name}: requests per quota period (e.g. 10000; empty for none):`,
      validate: validatorOf((t) => parseNumber(t, Plan.shape.quota, '10000'), true),
    });
    plans.push({ name, rate, ...(quotaText === '' ? {} : { quota: must(parseNumber(quotaText, Plan.shape.quota, '10000')) }) });
    if (plans.length >= MAX_PLANS) {
      ctx.say(`That is ${MAX_PLANS} plans; add more to the answers file by hand if needed.`);
      break;
    }
    if (!(await ctx.prompt.confirm({ message: 'Add another plan?', default: false }))) break;
  }
  return plans;
}

async function askTimeZone(ctx: StepContext): Promise<string> {
  const text = await ctx.prompt.input({
    message: 'Time zone the quota period follows (IANA name, e.g. UTC, Europe/Berlin, America/New_York):',
    default: 'UTC',
    validate: (t) => validatorOf(parseTimeZone)(t === '' ? 'UTC' : t),
  });
  return text === '' ? 'UTC' : must(parseTimeZone(text));
}

async function askDays(ctx: StepContext): Promise<number> {
  const text = await ctx.prompt.input({
    message: 'Length of the rolling window in days (1-366):',
    default: String(DEFAULT_ROLLING_DAYS),
    validate: (t) => validatorOf(parseRollingDays)(t === '' ? String(DEFAULT_ROLLING_DAYS) : t),
  });
  return text === '' ? DEFAULT_ROLLING_DAYS : must(parseRollingDays(text));
}

async function resolveReset(ctx: StepContext): Promise<QuotaResetT | undefined> {
  const f = ctx.flags;
  let choice: QuotaResetChoice | Unknown | undefined = f.quotaReset;
  if (choice === undefined && ctx.interactive) {
    choice = await ctx.prompt.select<QuotaResetChoice | Unknown>({
      message: 'When do quotas reset?',
      choices: [
        { value: 'calendar-month', name: 'Each calendar month', description: 'On the 1st, at midnight in a time zone you name.' },
        { value: 'calendar-day', name: 'Each calendar day', description: 'At midnight in a time zone you name.' },
        { value: 'rolling', name: 'Rolling window', description: 'The last N days, sliding; no reset-day stampede.' },
        { value: UNKNOWN, name: DONT_KNOW_NAME },
      ],
    });
  }
  if (choice === undefined || choice === UNKNOWN) return undefined;
  if (choice === 'rolling') {
    const days = f.quotaDays ?? (ctx.interactive ? await askDays(ctx) : DEFAULT_ROLLING_DAYS);
    return { kind: 'rolling', days };
  }
  const timeZone = f.quotaTimeZone ?? (ctx.interactive ? await askTimeZone(ctx) : 'UTC');
  return { kind: 'calendar', period: choice === 'calendar-day' ? 'day' : 'month', timeZone };
}

async function resolveExhaustion(ctx: StepContext): Promise<Exhaustion | undefined> {
  const flag = ctx.flags.exhaustion;
  if (flag !== undefined) return flag === UNKNOWN ? undefined : flag;
  if (!ctx.interactive) return undefined;
  const e = await ctx.prompt.select<Exhaustion | Unknown>({
    message: 'When a customer uses up the quota:',
    choices: [
      { value: 'hard', name: 'Stop', description: 'Reject with 429 QUOTA_EXCEEDED until the reset.' },
      { value: 'soft-warning', name: 'Warn', description: 'Keep serving and tell the customer.' },
      { value: 'pay-per-overage', name: 'Charge overage', description: 'Keep serving; billing counts the extra calls.' },
      { value: UNKNOWN, name: DONT_KNOW_NAME },
    ],
  });
  return e === UNKNOWN ? undefined : e;
}

export const plans: Step = {
  id: 'plans',
  item: 5,
  async run(ctx) {
    const flag = ctx.flags.plans;
    let list: PlanT[] | undefined;
    if (flag !== undefined) {
      list = flag === UNKNOWN ? undefined : flag;
    } else if (ctx.interactive) {
      const has = await ctx.prompt.select<'yes' | 'no' | Unknown>({
        message: 'Have limits been promised to customers (plan tiers, SLAs, documented limits)?',
        choices: [
          { value: 'yes', name: 'Yes', description: 'e.g. Free 60 requests/minute and 10,000 a month; Pro 600/minute.' },
          { value: 'no', name: 'No' },
          { value: UNKNOWN, name: DONT_KNOW_NAME },
        ],
      });
      list = has === 'yes' ? await askPlans(ctx) : has === 'no' ? [] : undefined;
    }
    const hasQuota = (list ?? []).some((p) => p.quota !== undefined);
    const quotaFlags = ctx.flags.quotaReset !== undefined || ctx.flags.exhaustion !== undefined;
    if (!hasQuota && !quotaFlags) return list === undefined ? {} : { plans: list };
    const reset = hasQuota || ctx.flags.quotaReset !== undefined ? await resolveReset(ctx) : undefined;
    const exhaustion = hasQuota || ctx.flags.exhaustion !== undefined ? await resolveExhaustion(ctx) : undefined;
    const quotas = { ...(reset ? { reset } : {}), ...(exhaustion ? { exhaustion } : {}) };
    return { ...(list === undefined ? {} : { plans: list }), ...(Object.keys(quotas).length > 0 ? { quotas } : {}) };
  },
};

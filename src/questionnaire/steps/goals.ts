/**
 * Design question 1: what rate limiting protects, and from what. Critical: on "don't know"
 * it is asked once more with concrete examples; a second "don't know" is recorded in
 * `unknown` and the design falls back to the generic one. A previous answer (goals, or
 * that recorded "don't know") comes pre-picked; keeping a previous "don't know" does not
 * ask again.
 */
import type { GOALS } from '../../answers/schema.js';
import {
  defaultNote,
  DONT_KNOW_NAME,
  keepOrder,
  knownValue,
  previousUnknown,
  shownValue,
  UNKNOWN,
  type Step,
  type StepContext,
  type Unknown,
} from '../context.js';
import type { PromptChoice } from '../prompt.js';

type Goal = (typeof GOALS)[number];

const CHOICES: PromptChoice<Goal | Unknown>[] = [
  {
    value: 'overload',
    name: 'Overload',
    description: 'Keep total traffic under what the backend can serve: runaway clients, retry storms.',
  },
  { value: 'abuse', name: 'Abuse', description: 'Password guessing on login, credential stuffing, scraping.' },
  { value: 'fairness', name: 'Fairness', description: 'One client or tenant must not slow everyone else down (noisy neighbour).' },
  { value: 'quotas', name: 'Business quotas', description: 'Plan tiers such as "10,000 calls a month on Free".' },
  { value: UNKNOWN, name: DONT_KNOW_NAME },
];

export const GOALS_EXAMPLES = [
  'Examples, to help decide:',
  "  - a partner's buggy retry loop once took the whole API down        -> Overload",
  '  - thousands of failed logins arrive from one address range           -> Abuse',
  "  - the largest customer's nightly sync makes everyone else slow       -> Fairness",
  '  - the pricing page promises a number of calls per month on each plan -> Business quotas',
];

export function validateGoals(chosen: readonly (Goal | Unknown)[]): true | string {
  if (chosen.length === 0) return `Pick at least one with space, or pick "${DONT_KNOW_NAME}".`;
  if (chosen.includes(UNKNOWN) && chosen.length > 1)
    return `"${DONT_KNOW_NAME}" cannot be combined with other choices: unpick one of them.`;
  return true;
}

async function ask(ctx: StepContext, attempt: 1 | 2, checked: readonly (Goal | Unknown)[] = [], note = ''): Promise<Goal[] | Unknown> {
  if (attempt === 2) for (const line of GOALS_EXAMPLES) ctx.say(line);
  const chosen = await ctx.prompt.checkbox<Goal | Unknown>({
    message:
      attempt === 1
        ? `What should rate limiting protect against? (space to pick, enter when done)${note}`
        : 'Asking once more: what should rate limiting protect against?',
    choices: CHOICES.map((c) => (checked.includes(c.value) ? { ...c, checked: true } : c)),
    validate: validateGoals,
  });
  return chosen.includes(UNKNOWN) ? UNKNOWN : (chosen as Goal[]);
}

export const goals: Step = {
  id: 'goals',
  item: 1,
  fields: ['goals', 'unknown'],
  async run(ctx) {
    const flag = ctx.flags.goals;
    if (flag === UNKNOWN) return { unknown: ['goals'] };
    if (flag !== undefined) return { goals: flag };
    const known = knownValue<Goal[]>(ctx.known, 'goals');
    const wasUnknown = known === undefined && previousUnknown(ctx.known, 'goals');
    if (!ctx.interactive) return known !== undefined ? { goals: known } : wasUnknown ? { unknown: ['goals'] } : {};
    const checked = known ?? (wasUnknown ? [UNKNOWN] : []);
    const note =
      known !== undefined
        ? defaultNote(ctx.known, 'goals', shownValue(known))
        : wasUnknown
          ? defaultNote(ctx.known, 'unknown', shownValue(UNKNOWN))
          : '';
    const first = await ask(ctx, 1, checked, note);
    // The examples were shown when "don't know" was answered the first time.
    const answer = first === UNKNOWN && !wasUnknown ? await ask(ctx, 2) : first;
    return answer === UNKNOWN ? { unknown: ['goals'] } : { goals: keepOrder(answer, known) };
  },
};

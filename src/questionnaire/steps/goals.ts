/**
 * Design question 1: what rate limiting protects, and from what. Critical: on "don't know"
 * it is asked once more with concrete examples; a second "don't know" is recorded in
 * `unknown` and the design falls back to the generic one. A previous answer (goals, or
 * that recorded "don't know") comes pre-picked; keeping a previous "don't know" does not
 * ask again.
 */
import { knownValue, previousUnknown, type Step, UNKNOWN } from '../context.js';
import { Q } from '../questions.js';
import { resolve } from '../resolve.js';

export { GOALS_EXAMPLES } from '../questions.js';

export const goals: Step = {
  id: 'goals',
  item: 1,
  fields: ['goals', 'unknown'],
  async run(ctx) {
    const wasUnknown = knownValue(ctx.known, 'goals') === undefined && previousUnknown(ctx.known, 'goals');
    const { value } = await resolve(ctx, Q.goals, wasUnknown ? { known: UNKNOWN, from: 'unknown' } : {});
    return value === UNKNOWN ? { unknown: ['goals'] } : value ? { goals: value } : {};
  },
};

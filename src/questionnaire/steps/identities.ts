/**
 * Design question 3: what requests can be keyed on. Not critical: "don't know" leaves it
 * out of the answers and the design states its assumption. Known identities (previous
 * answers, or found in the project) are confirmed, or come pre-picked.
 */
import { knownValue, type Step } from '../context.js';
import { Q } from '../questions.js';
import { given, offerKnown, resolve } from '../resolve.js';

export const identities: Step = {
  id: 'identities',
  item: 3,
  fields: ['identities'],
  async run(ctx) {
    const known = knownValue<unknown[]>(ctx.known, 'identities');
    const mode = await offerKnown(
      ctx,
      (list) => `Keep the identities found: ${list}? (No to choose them yourself)`,
      known?.length ? [{ q: Q.identities }] : [],
    );
    const value = given((await resolve(ctx, Q.identities, mode)).value);
    return value ? { identities: value } : {};
  },
};

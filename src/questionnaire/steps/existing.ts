/**
 * Limiters already in place: what the detectors found (or a previous answers file listed)
 * enters the answers as `existing`, so the design can set each beside its replacement and
 * plan its retirement. Nothing is asked: the list is what the code and configuration say.
 */
import type { AnswersInput } from '../../answers/schema.js';
import { knownValue, type Step } from '../context.js';

type Existing = NonNullable<AnswersInput['existing']>;

export const existing: Step = {
  id: 'existing',
  fields: ['existing'],
  async run(ctx) {
    const known = knownValue<Existing>(ctx.known, 'existing');
    if (known === undefined) return {};
    const limiters = known.limiters ?? [];
    const nginx = known.nginx ?? [];
    if (limiters.length === 0 && nginx.length === 0) return {};
    if (limiters.length > 0) {
      ctx.say(
        `Existing limiters (${limiters.length}) go into the answers as existing.limiters: the design sets each beside the rules that replace it and retires it after the shadow period.`,
      );
    }
    return { existing: known };
  },
};

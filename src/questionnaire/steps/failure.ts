/**
 * Design question 6: failure posture per endpoint class, when the limiter's store is down.
 * The rule of thumb (auth fails closed, everything else fails open) is the default; a
 * previous posture is offered first ("Keep the failure posture: ...?") and, rejected,
 * gives each class its default.
 */
import { isDeepStrictEqual } from 'node:util';
import { ENDPOINT_CLASSES, type EndpointClassT, type FailModeT } from '../../answers/schema.js';
import { type Draft, type Step, UNKNOWN, type Unknown } from '../context.js';
import { type ByClass, DONT_KNOW_NAME, Q } from '../questions.js';
import { defaultNote, given, offerKnown, resolve } from '../resolve.js';

function ruleOfThumb(cls: EndpointClassT): FailModeT {
  return cls === 'auth' ? 'closed' : 'open';
}

/**
 * The endpoint classes the answers mention, or every class when no endpoints are known.
 * Health checks are never limited, so they have no fail mode to choose.
 */
function classesOf(draft: Draft): EndpointClassT[] {
  const present = new Set((draft.endpoints ?? []).map((e) => e.class));
  return ENDPOINT_CLASSES.filter((c) => c !== 'health' && (present.size === 0 || present.has(c)));
}

function thumb(classes: readonly EndpointClassT[]): ByClass {
  return Object.fromEntries(classes.map((c) => [c, ruleOfThumb(c)]));
}

export const failure: Step = {
  id: 'failure',
  item: 6,
  fields: ['failure.byClass'],
  async run(ctx, draft) {
    const classes = classesOf(draft);
    const mode = await offerKnown(ctx, (list) => `Keep the failure posture (when the store is down): ${list}?`, [{ q: Q.failure }]);
    const { value } = await resolve(ctx, Q.failure, {
      ...mode,
      prompt: {
        kind: 'custom',
        async ask(earlier) {
          const known = earlier === UNKNOWN || earlier === 'rule-of-thumb' ? undefined : earlier;
          const own = known !== undefined && !isDeepStrictEqual(known, thumb(classes));
          const how = await ctx.prompt.select<'thumb' | 'choose' | Unknown>({
            message: `If the limiter's store (e.g. Redis) is down, what should happen to requests?${own ? defaultNote(ctx.known, 'failure.byClass', 'choose per kind') : ''}`,
            choices: [
              {
                value: 'thumb',
                name: 'Rule of thumb (recommended)',
                description:
                  'Auth endpoints reject (fail closed: no brute force during an outage); everything else is served (fail open), with an alert.',
              },
              { value: 'choose', name: 'Choose per kind of endpoint' },
              { value: UNKNOWN, name: DONT_KNOW_NAME },
            ],
            default: own ? 'choose' : 'thumb',
          });
          if (how !== 'choose') return how === 'thumb' ? 'rule-of-thumb' : UNKNOWN;
          const byClass: ByClass = {};
          for (const c of classes) {
            const before = known?.[c];
            byClass[c] = await ctx.prompt.select<FailModeT>({
              message: `${c} endpoints, while the store is down:${before ? defaultNote(ctx.known, 'failure.byClass', before) : ''}`,
              choices: [
                { value: 'open', name: 'Fail open', description: 'Serve the request without a limit (protects availability).' },
                { value: 'closed', name: 'Fail closed', description: 'Reject with 503 (protects the backend and the accounts).' },
              ],
              default: before ?? ruleOfThumb(c),
            });
          }
          return byClass;
        },
      },
    });
    const byClass = given(value);
    return byClass ? { failure: { byClass: byClass === 'rule-of-thumb' ? thumb(classes) : byClass } } : {};
  },
};

/**
 * Design question 6: failure posture per endpoint class, when the limiter's store is down.
 * The rule of thumb (auth fails closed, everything else fails open) is the default; a
 * previous posture is offered first ("Keep the failure posture: ...?") and, rejected,
 * gives each class its default.
 */
import { isDeepStrictEqual } from 'node:util';
import { ENDPOINT_CLASSES, type EndpointClassT, type FailModeT } from '../../answers/schema.js';
import { defaultNote, DONT_KNOW_NAME, keepKnown, UNKNOWN, type Draft, type Step, type Unknown } from '../context.js';

export function ruleOfThumb(cls: EndpointClassT): FailModeT {
  return cls === 'auth' ? 'closed' : 'open';
}

/**
 * The endpoint classes the answers mention, or every class when no endpoints are known.
 * Health checks are never limited, so they have no fail mode to choose.
 */
export function classesOf(draft: Draft): EndpointClassT[] {
  const present = new Set((draft.endpoints ?? []).map((e) => e.class));
  return ENDPOINT_CLASSES.filter((c) => c !== 'health' && (present.size === 0 || present.has(c)));
}

function thumb(classes: readonly EndpointClassT[]): Partial<Record<EndpointClassT, FailModeT>> {
  return Object.fromEntries(classes.map((c) => [c, ruleOfThumb(c)]));
}

type ByClass = Partial<Record<EndpointClassT, FailModeT>>;

/** 'auth closed, read open' */
export function byClassText(byClass: ByClass): string {
  const entries = Object.entries(byClass);
  return entries.length === 0 ? 'none' : entries.map(([c, m]) => `${c} ${m}`).join(', ');
}

export const failure: Step = {
  id: 'failure',
  item: 6,
  fields: ['failure.byClass'],
  async run(ctx, draft) {
    const flag = ctx.flags.failure;
    const classes = classesOf(draft);
    if (flag === UNKNOWN) return {};
    if (flag === 'rule-of-thumb') return { failure: { byClass: thumb(classes) } };
    if (flag !== undefined) return { failure: { byClass: flag } };
    const known = ctx.known.answers.failure?.byClass as ByClass | undefined;
    if (!ctx.interactive) return known ? { failure: { byClass: known } } : {};
    if (known) {
      const { kept } = await keepKnown(ctx, (list) => `Keep the failure posture (when the store is down): ${list}?`, [
        { field: 'failure.byClass', label: '', value: known, shown: byClassText(known) },
      ]);
      if (kept) return { failure: { byClass: known } };
    }
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
    if (how === UNKNOWN) return {};
    if (how === 'thumb') return { failure: { byClass: thumb(classes) } };
    const byClass: Partial<Record<EndpointClassT, FailModeT>> = {};
    for (const c of classes) {
      const earlier = known?.[c];
      byClass[c] = await ctx.prompt.select<FailModeT>({
        message: `${c} endpoints, while the store is down:${earlier ? defaultNote(ctx.known, 'failure.byClass', earlier) : ''}`,
        choices: [
          { value: 'open', name: 'Fail open', description: 'Serve the request without a limit (protects availability).' },
          { value: 'closed', name: 'Fail closed', description: 'Reject with 503 (protects the backend and the accounts).' },
        ],
        default: earlier ?? ruleOfThumb(c),
      });
    }
    return { failure: { byClass } };
  },
};

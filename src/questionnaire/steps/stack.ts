/**
 * Design question 2: language, framework, topology and instances, gateway, store and the
 * proxies trusted to name the client IP. Critical: the framework, topology, gateway and
 * store questions offer "don't know" and are asked once more with examples; a second
 * "don't know" on the framework records `unknown: ['stack']` (generic design) and the
 * remaining stack questions are not asked. Known values (previous answers, detected facts)
 * are shown with their source and, once confirmed, not asked again; when some are previous
 * answers, confirming them finishes the step (what they left open was left open then).
 * Rejected, each question offers its known value as the default.
 */
import type { AnswersInput } from '../../answers/schema.js';
import { fromPrevious, previousUnknown, type Step, UNKNOWN, valueAt } from '../context.js';
import { DONT_KNOW_NAME, type Prompt, Q, type Question } from '../questions.js';
import { given, offerKnown, put, resolve, type ResolveOptions } from '../resolve.js';

export { STACK_EXAMPLES } from '../questions.js';

const NODE_FRAMEWORKS: readonly unknown[] = ['express', 'fastify', 'koa', 'hono', 'nestjs'];
const QUESTIONS = [Q.framework, Q.language, Q.topology, Q.instances, Q.gateway, Q.gatewayNodes, Q.store, Q.trustedProxies] as const;

/**
 * The gateways whose nodes each keep their own counters, so the ceiling is shared out over them
 * (stack.gatewayNodes): nginx, and Envoy's local filter and Kong's local policy, which carry
 * the ceiling whatever else those two count in a shared service or store. Cloudflare and AWS
 * API Gateway count for the whole fleet.
 */
export const PER_NODE_GATEWAYS: readonly unknown[] = ['nginx', 'envoy', 'kong'];

/**
 * The node count the design assumes when the answers do not give one: one per application
 * instance, as many as the design takes (1 on one instance, 3 when the count is not known).
 */
export function assumedGatewayNodes(topology: unknown, instances: unknown): number {
  if (topology === 'single') return 1;
  return typeof instances === 'number' ? instances : 3;
}

/** The language of a Node framework is one of two. */
const TS_OR_JS: Prompt<string> = {
  kind: 'select',
  message: 'TypeScript or JavaScript?',
  choices: [
    { value: 'TypeScript', name: 'TypeScript' },
    { value: 'JavaScript', name: 'JavaScript' },
    { value: UNKNOWN, name: DONT_KNOW_NAME },
  ],
};

export const stack: Step = {
  id: 'stack',
  item: 2,
  fields: [...QUESTIONS.map((q) => q.field), 'unknown'],
  async run(ctx) {
    const f = ctx.flags;
    // A previous "don't know" on the stack (generic design) is known too: it wins over every
    // detected stack fact, unless a --framework flag answers it now.
    const frameworkUnknown = previousUnknown(ctx.known, 'stack') && !fromPrevious(ctx.known, 'stack.framework');
    const onlyPrevious = frameworkUnknown && f.framework === undefined;
    const knownOf = (q: Question): Pick<ResolveOptions<never>, 'known' | 'from'> =>
      q === Q.framework && frameworkUnknown
        ? { known: UNKNOWN, from: 'unknown' }
        : { known: onlyPrevious && !fromPrevious(ctx.known, q.field) ? undefined : (valueAt(ctx.known.answers, q.field) as never) };
    const offers = QUESTIONS.map((q) => ({ q, ...knownOf(q), value: knownOf(q).known }));
    const mode = await offerKnown(ctx, (list) => `Keep what was found for the stack: ${list}?`, offers);
    const answer = async <T>(q: Question<T>, o: ResolveOptions<T> = {}) =>
      (await resolve(ctx, q, { ...mode, ...(knownOf(q) as ResolveOptions<T>), ...o })).value;

    const framework = await answer(Q.framework);
    // A second "don't know" on the framework: the generic design, nothing more is asked.
    const ask = mode.ask && framework !== UNKNOWN;
    const language = await answer(Q.language, {
      ask: ask && (framework === 'other' || NODE_FRAMEWORKS.includes(framework)),
      ...(framework !== 'other' ? { prompt: TS_OR_JS } : {}),
    });
    // An --instances flag implies the topology, over a known one.
    const instancesFlag = f.instances;
    const topology =
      f.topology === undefined && typeof instancesFlag === 'number'
        ? instancesFlag > 1
          ? 'horizontal'
          : 'single'
        : await answer(Q.topology, { ask });
    // A known count that contradicts a --topology single is dropped.
    const contradicted = f.topology === 'single' && Number(knownOf(Q.instances).known ?? 0) > 1;
    const instances = await answer(Q.instances, { ask: ask && topology === 'horizontal', ...(contradicted ? { known: undefined } : {}) });
    const gateway = given(await answer(Q.gateway, { ask }));
    // Only a gateway whose nodes count on their own shares the ceiling out; elsewhere a known count is dropped.
    const perNode = gateway !== undefined && PER_NODE_GATEWAYS.includes(gateway);
    if (!perNode && f.gatewayNodes !== undefined && f.gatewayNodes !== UNKNOWN) {
      ctx.say(
        `--gateway-nodes is not used: only nginx, Envoy and Kong nodes share the ceiling out, and the gateway is ${gateway ?? 'not known'}.`,
      );
    }
    // The default is the count the design assumes without one (one node per instance), unless
    // the stack was answered before: left open then, Enter leaves it open (the design assumes it).
    const answeredBefore = QUESTIONS.some((q) => fromPrevious(ctx.known, q.field));
    const offerAssumed = ask && knownOf(Q.gatewayNodes).known === undefined && !answeredBefore;
    const gatewayNodes = perNode
      ? await answer(Q.gatewayNodes, {
          ask,
          ...(offerAssumed ? { fallback: assumedGatewayNodes(given(topology), given(instances)) } : { fallback: undefined }),
          words: {
            gateway: gateway === 'envoy' ? 'Envoy' : gateway === 'kong' ? 'Kong' : 'nginx',
            assumed: offerAssumed ? ' (one per application instance by default):' : ':',
          },
        })
      : undefined;
    const store = await answer(Q.store, { ask });
    const trustedProxies = await answer(Q.trustedProxies, {
      ask: ask && gateway !== undefined && gateway !== 'none',
      words: { gateway: gateway ?? '' },
    });

    const out: Record<string, unknown> = {};
    const values = [framework, language, topology, instances, gateway, gatewayNodes, store, trustedProxies];
    QUESTIONS.forEach((q, i) => put(out, q.field, values[i]));
    return { ...(out as Pick<AnswersInput, 'stack'>), ...(framework === UNKNOWN ? { unknown: ['stack' as const] } : {}) };
  },
};

/**
 * Design question 7: third-party APIs the service calls, with the limits they impose. Previous
 * ones are offered first ("Keep the third-party APIs: ...?"); rejected, they are the
 * defaults, provider by provider.
 */
import { type AnswersInput, OutboundProvider } from '../../answers/schema.js';
import { defaultNote, type Step, type StepContext, UNKNOWN, type Unknown } from '../context.js';
import { DONT_KNOW_NAME, Q } from '../questions.js';
import { askText, given, offerKnown, resolve } from '../resolve.js';
import { RATE_HELP } from '../spec-help.js';

type Provider = NonNullable<AnswersInput['outbound']>[number];

export const MAX_PROVIDERS = 10;

/**
 * Providers typed in one by one; `before` (the previous ones) gives each its defaults. One kept
 * under the same name keeps what was written by hand (burst, safety fraction, bucket).
 */
async function askProviders(ctx: StepContext, before: readonly Provider[] = []): Promise<Provider[]> {
  const out: Provider[] = [];
  for (;;) {
    const earlier = before[out.length];
    const note = earlier ? defaultNote(ctx.known, 'outbound') : '';
    const name = (await askText<string>(
      ctx,
      { kind: 'text', max: 120 },
      `Name of provider ${out.length + 1} (e.g. stripe, twilio, openai)${note}:`,
      {
        default: earlier?.name,
        refusal: 'The name {problem}.',
        check: (v) => (out.some((p) => p.name.toLowerCase() === v.toLowerCase()) ? `"${v}" is already listed.` : undefined),
      },
    )) as string;
    const same = earlier && earlier.name.toLowerCase() === name.toLowerCase() ? earlier : undefined;
    const limit = await askText(ctx, { kind: 'rate' }, `The limit ${name} sets for your account, as ${RATE_HELP}:`, {
      default: same && `${same.limit.requests}/${same.limit.per}`,
    });
    const provider = OutboundProvider.parse({ ...(same ?? {}), name, limit });
    out.push(provider);
    if (out.length >= MAX_PROVIDERS) {
      ctx.say(`That is ${MAX_PROVIDERS} providers; add more to the answers file by hand if needed.`);
      break;
    }
    if (!(await ctx.prompt.confirm({ message: 'Add another provider?', default: out.length < before.length }))) break;
  }
  return out;
}

export const outbound: Step = {
  id: 'outbound',
  item: 7,
  fields: ['outbound'],
  async run(ctx) {
    const mode = await offerKnown(ctx, (list) => `Keep the third-party APIs: ${list}?`, [{ q: Q.outbound }]);
    const { value } = await resolve(ctx, Q.outbound, {
      ...mode,
      prompt: {
        kind: 'custom',
        async ask(earlier) {
          const before = Array.isArray(earlier) ? earlier : undefined;
          const def = before === undefined ? undefined : before.length > 0 ? 'yes' : 'no';
          const has = await ctx.prompt.select<'yes' | 'no' | Unknown>({
            message: `Does the API call third-party APIs that limit you (payments, SMS, AI, GitHub...)?${def ? defaultNote(ctx.known, 'outbound', def) : ''}`,
            // No first: Enter on a question not yet thought about opens no sub-questions.
            choices: [
              { value: 'no', name: 'No' },
              { value: 'yes', name: 'Yes' },
              { value: UNKNOWN, name: DONT_KNOW_NAME },
            ],
            ...(def ? { default: def } : {}),
          });
          return has === 'yes' ? await askProviders(ctx, before) : has === 'no' ? [] : UNKNOWN;
        },
      },
    });
    const providers = given(value);
    return providers ? { outbound: providers } : {};
  },
};

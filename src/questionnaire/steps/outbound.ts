/**
 * Design question 7: third-party APIs the service calls, with the limits they impose. Previous
 * ones are offered first ("Keep the third-party APIs: ...?"); rejected, they are the
 * defaults, provider by provider.
 */
import { type AnswersInput, OutboundProvider } from '../../answers/schema.js';
import type { Step, StepContext } from '../context.js';
import { Q } from '../questions.js';
import { askEach, askList, askText, defaultNote, given, offerKnown, resolve } from '../resolve.js';
import { RATE_HELP } from '../spec-help.js';

type Provider = NonNullable<AnswersInput['outbound']>[number];

const MAX_PROVIDERS = 10;

/**
 * Providers typed in one by one; `before` (the previous ones) gives each its defaults. One kept
 * under the same name keeps what was written by hand (burst, safety fraction, bucket).
 */
function askProviders(ctx: StepContext, before: readonly Provider[] = []): Promise<Provider[]> {
  return askEach(ctx, 'provider', MAX_PROVIDERS, before, async (earlier, out) => {
    const name = await askText<string>(ctx, {
      read: { kind: 'text', max: 120 },
      message: `Name of provider ${out.length + 1} (e.g. stripe, twilio, openai)${earlier ? defaultNote(ctx.known, 'outbound') : ''}:`,
      default: earlier?.name,
      refusal: 'The name {problem}.',
      check: (v) => (out.some((p) => p.name.toLowerCase() === v.toLowerCase()) ? `"${v}" is already listed.` : undefined),
    });
    const same = earlier && earlier.name.toLowerCase() === name.toLowerCase() ? earlier : undefined;
    const limit = await askText(ctx, {
      read: { kind: 'rate' },
      message: `The limit ${name} sets for your account, as ${RATE_HELP}:`,
      default: same && `${same.limit.requests}/${same.limit.per}`,
    });
    return OutboundProvider.parse({ ...(same ?? {}), name, limit });
  });
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
        ask: (known) =>
          askList(
            ctx,
            'outbound',
            known,
            { message: 'Does the API call third-party APIs that limit you (payments, SMS, AI, GitHub...)?' },
            (b) => askProviders(ctx, b),
          ),
      },
    });
    const providers = given(value);
    return providers ? { outbound: providers } : {};
  },
};

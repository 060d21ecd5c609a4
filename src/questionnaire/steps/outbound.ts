/** Phase 1 item 7: third-party APIs the service calls, with the limits they impose. */
import { OutboundProvider, type AnswersInput } from '../../answers/schema.js';
import { DONT_KNOW_NAME, UNKNOWN, type Step, type StepContext, type Unknown } from '../context.js';
import { nonEmpty } from '../flags.js';
import { must, parseRate, validatorOf } from '../parse.js';
import { RATE_HELP } from '../spec-help.js';

type Provider = NonNullable<AnswersInput['outbound']>[number];

export const MAX_PROVIDERS = 10;

async function askProviders(ctx: StepContext): Promise<Provider[]> {
  const out: Provider[] = [];
  for (;;) {
    const name = await ctx.prompt.input({
      message: `Name of provider ${out.length + 1} (e.g. stripe, twilio, openai):`,
      validate: (t) => {
        const r = nonEmpty(t, 120);
        if (!r.ok) return `The name ${r.message}.`;
        return out.some((p) => p.name.toLowerCase() === r.value.toLowerCase()) ? `"${r.value}" is already listed.` : true;
      },
    });
    const limit = must(
      parseRate(
        await ctx.prompt.input({
          message: `The limit ${name} sets for your account, as ${RATE_HELP}:`,
          validate: validatorOf(parseRate),
        }),
      ),
    );
    const provider = OutboundProvider.parse({ name, limit });
    out.push(provider);
    if (out.length >= MAX_PROVIDERS) {
      ctx.say(`That is ${MAX_PROVIDERS} providers; add more to the answers file by hand if needed.`);
      break;
    }
    if (!(await ctx.prompt.confirm({ message: 'Add another provider?', default: false }))) break;
  }
  return out;
}

export const outbound: Step = {
  id: 'outbound',
  item: 7,
  async run(ctx) {
    const flag = ctx.flags.outbound;
    if (flag === UNKNOWN) return {};
    if (flag !== undefined) return { outbound: flag };
    if (!ctx.interactive) return {};
    const has = await ctx.prompt.select<'yes' | 'no' | Unknown>({
      message: 'Does the API call third-party APIs that limit you (payments, SMS, AI, GitHub...)?',
      choices: [
        { value: 'yes', name: 'Yes' },
        { value: 'no', name: 'No' },
        { value: UNKNOWN, name: DONT_KNOW_NAME },
      ],
    });
    if (has === UNKNOWN) return {};
    return { outbound: has === 'yes' ? await askProviders(ctx) : [] };
  },
};

/**
 * Design question 7: third-party APIs the service calls, with the limits they impose. Previous
 * ones are offered first ("Keep the third-party APIs: ...?"); rejected, they are the
 * defaults, provider by provider.
 */
import { OutboundProvider, type AnswersInput } from '../../answers/schema.js';
import { formatNumber } from '../../format.js';
import { defaultNote, DONT_KNOW_NAME, keepKnown, UNKNOWN, type Step, type StepContext, type Unknown } from '../context.js';
import { nonEmpty } from '../flags.js';
import { must, parseRate, validatorOf } from '../parse.js';
import { RATE_HELP } from '../spec-help.js';

type Provider = NonNullable<AnswersInput['outbound']>[number];

export const MAX_PROVIDERS = 10;

/** 'stripe 100/second' */
export function providerText(p: Provider): string {
  return `${p.name} ${formatNumber(p.limit.requests)}/${p.limit.per}`;
}

/**
 * Providers typed in one by one; `before` (the previous ones) gives each its defaults. One kept
 * under the same name keeps what was written by hand (burst, safety fraction, bucket).
 */
async function askProviders(ctx: StepContext, before: readonly Provider[] = []): Promise<Provider[]> {
  const out: Provider[] = [];
  for (;;) {
    const earlier = before[out.length];
    const name = await ctx.prompt.input({
      message: `Name of provider ${out.length + 1} (e.g. stripe, twilio, openai)${earlier ? defaultNote(ctx.known, 'outbound') : ''}:`,
      ...(earlier ? { default: earlier.name } : {}),
      validate: (t) => {
        const r = nonEmpty(t, 120);
        if (!r.ok) return `The name ${r.message}.`;
        return out.some((p) => p.name.toLowerCase() === r.value.toLowerCase()) ? `"${r.value}" is already listed.` : true;
      },
    });
    const same = earlier && earlier.name.toLowerCase() === name.toLowerCase() ? earlier : undefined;
    const limit = must(
      parseRate(
        await ctx.prompt.input({
          message: `The limit ${name} sets for your account, as ${RATE_HELP}:`,
          ...(same ? { default: `${same.limit.requests}/${same.limit.per}` } : {}),
          validate: validatorOf(parseRate),
        }),
      ),
    );
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
    const flag = ctx.flags.outbound;
    if (flag === UNKNOWN) return {};
    if (flag !== undefined) return { outbound: flag };
    const known = ctx.known.answers.outbound as Provider[] | undefined;
    if (!ctx.interactive) return known !== undefined ? { outbound: known } : {};
    if (known !== undefined) {
      const { kept } = await keepKnown(ctx, (list) => `Keep the third-party APIs: ${list}?`, [
        { field: 'outbound', label: '', value: known, shown: known.length === 0 ? 'none' : known.map(providerText).join(', ') },
      ]);
      if (kept) return { outbound: known };
    }
    const def = known === undefined ? undefined : known.length > 0 ? 'yes' : 'no';
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
    if (has === UNKNOWN) return {};
    return { outbound: has === 'yes' ? await askProviders(ctx, known) : [] };
  },
};

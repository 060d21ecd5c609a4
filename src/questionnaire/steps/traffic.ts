/**
 * Phase 1 item 4: traffic shape. Every number may be left empty ("don't know"); the
 * design then states what it assumed.
 */
import { BURSTINESS, Traffic, type AnswersInput } from '../../answers/schema.js';
import { DONT_KNOW_NAME, UNKNOWN, type Step, type StepContext, type Unknown } from '../context.js';
import type { Flag } from '../flags.js';
import { must, parseNumber, validatorOf } from '../parse.js';

type TrafficInput = NonNullable<AnswersInput['traffic']>;
type NumberField = 'typicalRps' | 'peakRps' | 'capacityRps' | 'distinctClients' | 'distinctTenants' | 'distinctUsers';

async function askNumber(
  ctx: StepContext,
  field: NumberField,
  message: string,
  example: string,
  extra?: (n: number) => string | undefined,
): Promise<number | undefined> {
  const schema = Traffic.shape[field];
  const parse = (t: string) => {
    const r = parseNumber(t, schema, example);
    if (!r.ok || !extra) return r;
    const problem = extra(r.value);
    return problem ? ({ ok: false, message: problem } as const) : r;
  };
  const text = await ctx.prompt.input({ message: `${message} (e.g. ${example}; empty if unknown)`, validate: validatorOf(parse, true) });
  return text === '' ? undefined : must(parse(text));
}

const value = <T>(flag: Flag<T>): T | undefined => (flag === UNKNOWN ? undefined : flag);

export const traffic: Step = {
  id: 'traffic',
  item: 4,
  async run(ctx, draft) {
    const f = ctx.flags;
    const out: TrafficInput = {};
    const ask = ctx.interactive;
    const num = async (flag: Flag<number>, field: NumberField, question: string, example: string, extra?: (n: number) => string | undefined) => {
      if (flag !== undefined) {
        const v = value(flag);
        if (v !== undefined) out[field] = v;
        return;
      }
      if (!ask) return;
      const v = await askNumber(ctx, field, question, example, extra);
      if (v !== undefined) out[field] = v;
    };
    await num(f.typicalRps, 'typicalRps', 'Typical requests per second, across the whole API?', '120');
    await num(f.peakRps, 'peakRps', 'Peak requests per second?', '600', (n) =>
      out.typicalRps !== undefined && n < out.typicalRps ? `The peak (${n}) cannot be below the typical rate (${out.typicalRps}).` : undefined,
    );
    await num(f.capacityRps, 'capacityRps', 'Requests per second the backend can safely serve, if measured?', '1500');

    if (f.burstiness !== undefined) {
      const v = value(f.burstiness);
      if (v !== undefined) out.burstiness = v;
    } else if (ask) {
      const b = await ctx.prompt.select<(typeof BURSTINESS)[number] | Unknown>({
        message: 'How bursty is the traffic?',
        choices: [
          { value: 'low', name: 'Low', description: 'Steady: server-to-server calls, dashboards.' },
          { value: 'moderate', name: 'Moderate', description: 'Daytime peaks, the odd batch job.' },
          { value: 'high', name: 'High', description: 'Mobile apps syncing at once, cron jobs on the hour, campaign launches.' },
          { value: UNKNOWN, name: DONT_KNOW_NAME },
        ],
      });
      if (b !== UNKNOWN) out.burstiness = b;
    }

    await num(f.clients, 'distinctClients', 'How many distinct clients (API keys or apps)?', '2000');
    const ids = draft.identities ?? [];
    if (f.tenants !== undefined || ids.includes('tenant')) await num(f.tenants, 'distinctTenants', 'How many tenants / organisations?', '300');
    const hasAuth = (draft.endpoints ?? []).some((e) => e.class === 'auth');
    if (f.users !== undefined || ids.includes('user') || hasAuth) await num(f.users, 'distinctUsers', 'How many user accounts?', '50000');

    if (out.typicalRps !== undefined && out.peakRps !== undefined && out.peakRps < out.typicalRps) {
      ctx.say(`Note: the peak (${out.peakRps}/s) is below the typical rate (${out.typicalRps}/s); check --peak-rps and --typical-rps.`);
    }
    return Object.keys(out).length > 0 ? { traffic: out } : {};
  },
};

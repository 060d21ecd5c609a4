/**
 * Design question 4: traffic shape. Every number may be left empty ("don't know"); the
 * design then states what it assumed. Previous answers are offered together ("Keep the
 * traffic: ...?"); rejected, each question offers its previous value as the default.
 */
import { type BURSTINESS, Traffic, type AnswersInput } from '../../answers/schema.js';
import { formatNumber } from '../../format.js';
import {
  defaultNote,
  DONT_KNOW_NAME,
  emptyHint,
  isUnknownText,
  keepKnown,
  UNKNOWN,
  type KnownItem,
  type Step,
  type StepContext,
  type Unknown,
} from '../context.js';
import type { Flag } from '../flags.js';
import { must, parseNumber, validatorOf } from '../parse.js';

type TrafficInput = NonNullable<AnswersInput['traffic']>;
type NumberField =
  | 'typicalRps'
  | 'peakRps'
  | 'capacityRps'
  | 'distinctClients'
  | 'distinctTenants'
  | 'distinctUsers'
  | 'clientPeakRps'
  | 'clientsPerAddress';
type Field = NumberField | 'burstiness';

const ORDER: readonly Field[] = [
  'typicalRps',
  'peakRps',
  'capacityRps',
  'burstiness',
  'distinctClients',
  'distinctTenants',
  'distinctUsers',
  'clientPeakRps',
  'clientsPerAddress',
];
const LABELS: Record<Field, string> = {
  typicalRps: 'typical rps',
  peakRps: 'peak rps',
  capacityRps: 'capacity rps',
  burstiness: 'burstiness',
  distinctClients: 'clients',
  distinctTenants: 'tenants',
  distinctUsers: 'users',
  clientPeakRps: 'rps per client',
  clientsPerAddress: 'clients per address',
};

async function askNumber(
  ctx: StepContext,
  field: NumberField,
  message: string,
  example: string,
  extra?: (n: number) => string | undefined,
  earlier?: number,
): Promise<number | undefined> {
  const schema = Traffic.shape[field];
  // With a previous value as the default, an empty answer keeps it: "unknown" clears it.
  const hint = emptyHint(earlier !== undefined, 'empty if unknown');
  // A refusal says how to give no number at all, as the prompt does.
  const orNone = earlier === undefined ? 'or leave it empty if unknown' : 'or type unknown to clear it';
  const parse = (t: string) => {
    const r = parseNumber(t, schema, example);
    if (!r.ok) return { ok: false, message: `${r.message}, ${orNone}` } as const;
    if (!extra) return r;
    const problem = extra(r.value);
    return problem ? ({ ok: false, message: problem } as const) : r;
  };
  const text = await ctx.prompt.input({
    message: `${message} (e.g. ${example}; ${hint})${earlier === undefined ? '' : defaultNote(ctx.known, `traffic.${field}`)}`,
    ...(earlier !== undefined ? { default: String(earlier) } : {}),
    validate: (t) => (isUnknownText(t) ? true : validatorOf(parse, true)(t)),
  });
  return text === '' || isUnknownText(text) ? undefined : must(parse(text));
}

const value = <T>(flag: Flag<T>): T | undefined => (flag === UNKNOWN ? undefined : flag);

export const traffic: Step = {
  id: 'traffic',
  item: 4,
  fields: ORDER.map((f) => `traffic.${f}`),
  async run(ctx, draft) {
    const f = ctx.flags;
    const flagOf: Record<Field, Flag<unknown>> = {
      typicalRps: f.typicalRps,
      peakRps: f.peakRps,
      capacityRps: f.capacityRps,
      burstiness: f.burstiness,
      distinctClients: f.clients,
      distinctTenants: f.tenants,
      distinctUsers: f.users,
      clientPeakRps: f.clientRps,
      clientsPerAddress: f.clientsPerAddress,
    };
    const known: TrafficInput = ctx.known.answers.traffic ?? {};
    const items: KnownItem[] = ORDER.filter((k) => known[k] !== undefined && flagOf[k] === undefined).map((k) => ({
      field: `traffic.${k}`,
      label: LABELS[k],
      value: known[k],
      shown: typeof known[k] === 'number' ? formatNumber(known[k]) : undefined,
    }));
    const { kept, finished } = await keepKnown(ctx, (list) => `Keep the traffic: ${list}?`, items);
    const useKnown = !ctx.interactive || kept;
    const ask = ctx.interactive && !finished;
    const out: TrafficInput = {};
    /** Flag, else the known value (kept, or without a TTY), else the question (when `askable`) with the known value as its default. */
    const num = async (
      flag: Flag<number>,
      field: NumberField,
      question: string,
      example: string,
      askable = true,
      extra?: (n: number) => string | undefined,
    ) => {
      if (flag !== undefined) {
        const v = value(flag);
        if (v !== undefined) out[field] = v;
        return;
      }
      if (useKnown && known[field] !== undefined) {
        out[field] = known[field];
        return;
      }
      if (!ask || !askable) return;
      const v = await askNumber(ctx, field, question, example, extra, known[field]);
      if (v !== undefined) out[field] = v;
    };
    await num(f.typicalRps, 'typicalRps', 'Typical requests per second, across the whole API?', '120');
    await num(f.peakRps, 'peakRps', 'Peak requests per second?', '600', true, (n) =>
      out.typicalRps !== undefined && n < out.typicalRps
        ? `The peak (${n}) cannot be below the typical rate (${out.typicalRps}).`
        : undefined,
    );
    await num(f.capacityRps, 'capacityRps', 'Requests per second the backend can safely serve, if measured?', '1500');

    if (f.burstiness !== undefined) {
      const v = value(f.burstiness);
      if (v !== undefined) out.burstiness = v;
    } else if (useKnown && known.burstiness !== undefined) {
      out.burstiness = known.burstiness;
    } else if (ask) {
      const b = await ctx.prompt.select<(typeof BURSTINESS)[number] | Unknown>({
        message: `How bursty is the traffic?${known.burstiness ? defaultNote(ctx.known, 'traffic.burstiness', known.burstiness) : ''}`,
        choices: [
          { value: 'low', name: 'Low', description: 'Steady: server-to-server calls, dashboards.' },
          { value: 'moderate', name: 'Moderate', description: 'Daytime peaks, the odd batch job.' },
          { value: 'high', name: 'High', description: 'Mobile apps syncing at once, cron jobs on the hour, campaign launches.' },
          { value: UNKNOWN, name: DONT_KNOW_NAME },
        ],
        ...(known.burstiness ? { default: known.burstiness } : {}),
      });
      if (b !== UNKNOWN) out.burstiness = b;
    }

    const ids = draft.identities ?? [];
    // Clients are counted by API key: asked when requests are keyed on one (or the identities are not known, when the design assumes it).
    await num(
      f.clients,
      'distinctClients',
      'How many distinct clients (API keys or apps)?',
      '2000',
      draft.identities === undefined || ids.includes('api-key'),
    );
    await num(f.tenants, 'distinctTenants', 'How many tenants / organisations?', '300', ids.includes('tenant'));
    const hasAuth = (draft.endpoints ?? []).some((e) => e.class === 'auth');
    await num(f.users, 'distinctUsers', 'How many user accounts?', '50000', ids.includes('user') || hasAuth);
    // limits keyed on an address are sized per address: asked when anonymous calls or IP-only identities need them
    const anonymous = (draft.endpoints ?? []).some((e) => e.anonymous && !['auth', 'webhook', 'health'].includes(e.class));
    const perAddress = anonymous || (ids.length > 0 && ids.every((i) => i === 'ip'));
    await num(f.clientRps, 'clientPeakRps', 'Requests per second one client (a person, a device) sends at its busiest?', '2', perAddress);
    await num(
      f.clientsPerAddress,
      'clientsPerAddress',
      'How many clients can be active at once behind one IP address (an office, a carrier-grade NAT)?',
      '25',
      perAddress,
    );

    if (out.typicalRps !== undefined && out.peakRps !== undefined && out.peakRps < out.typicalRps) {
      ctx.say(`Note: the peak (${out.peakRps}/s) is below the typical rate (${out.typicalRps}/s); check --peak-rps and --typical-rps.`);
    }
    return Object.keys(out).length > 0 ? { traffic: out } : {};
  },
};

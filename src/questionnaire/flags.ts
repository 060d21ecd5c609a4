/**
 * The init flags, read with the question table: each question's flag is parsed by the
 * question's own reading (the same rules its prompt uses) into a typed value; a bad value is a
 * UserError (exit 2) naming the flag and what is allowed.
 *
 * Every flag of a question that may stay open also takes `unknown`: "don't know, don't ask".
 * Those with a `none` value (plans, outbound providers, trusted proxies, endpoints, code dir)
 * take `none`.
 */
import { Plan, Stack, Traffic } from '../answers/schema.js';
import { UserError } from '../messages.js';
import {
  type Parsed,
  parseChoice,
  parseChoiceList,
  parseCidrList,
  parseEndpointSpec,
  parseFailModes,
  parseNumber,
  parseOutboundSpec,
  parsePlanSpec,
  parseRate,
  parseRollingDays,
  parseRoute,
  parseTimeZone,
} from './parse.js';
import { QUESTIONS, type Question, type Reading } from './questions.js';
import { UNKNOWN } from './unknown.js';

/** The options commander hands over: strings as typed, repeatable ones as arrays. */
export interface InitRawOptions {
  yes?: boolean;
  force?: boolean;
  debug?: boolean;
  date?: string;
  answersFile?: string;
  name?: string;
  [option: string]: string | string[] | boolean | undefined;
}

/** The parsed flags, by question id (what steps read through resolve.ts), and the project name. */
export interface InitFlags {
  readonly [id: string]: unknown;
  readonly name?: string;
  readonly out?: string;
  /** null: no code wanted. */
  readonly codeDir?: string | null;
}

function bad(option: string, reason: string): never {
  throw new UserError('badOption', { option, reason });
}

function take<T>(option: string, r: Parsed<T>): T {
  return r.ok ? r.value : bad(option, r.message);
}

/** The schemas whose number fields bound the number questions. */
const NUMBERS: Record<string, { shape: Record<string, unknown> }> = { stack: Stack, traffic: Traffic, plans: Plan };

const READERS: { [K in Reading['kind']]: (text: string, read: Extract<Reading, { kind: K }>, field: string) => Parsed<unknown> } = {
  choice: (text, read) => parseChoice(text, read.allowed, read.aliases),
  choices: (text, read) => parseChoiceList(text, read.allowed),
  text: (text, read) => nonEmpty(text, read.max),
  number: (text, read, field) => {
    const [section = '', key = ''] = field.split('.');
    return parseNumber(text, NUMBERS[section]?.shape[key] as Parameters<typeof parseNumber>[1], read.example);
  },
  path: pathText,
  cidrs: parseCidrList,
  timeZone: parseTimeZone,
  days: parseRollingDays,
  rate: parseRate,
  route: parseRoute,
  endpoint: parseEndpointSpec,
  plan: parsePlanSpec,
  outbound: parseOutboundSpec,
  failModes: (text) => (text.trim().toLowerCase() === 'rule-of-thumb' ? { ok: true, value: 'rule-of-thumb' } : parseFailModes(text)),
};

/** Text read the way a question reads it; `field` names the answers field (a number's bounds). */
export const readText = (read: Reading, text: string, field: string): Parsed<unknown> =>
  (READERS[read.kind] as (t: string, r: Reading, f: string) => Parsed<unknown>)(text, read, field);

/** '--trusted-proxies <cidrs>' -> 'trustedProxies', as commander names the option. */
export const optionKey = (q: Question): string =>
  (/--([a-z-]+)/.exec(q.flag)?.[1] ?? q.id).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const optionName = (q: Question): string => q.flag.split(' ')[0] as string;

function flagValue(q: Question, raw: string | string[]): unknown {
  const items = Array.isArray(raw) ? raw : [raw];
  const word = items.length === 1 ? items[0]?.trim().toLowerCase() : undefined;
  if (word === UNKNOWN && q.unknown !== false) return UNKNOWN;
  if (word === 'none' && q.none !== undefined) return q.none;
  const values = items.map((text) => take(optionName(q), readText(q.read, text, q.field)));
  return q.repeatable ? values : values[0];
}

/** Parses and checks every init flag; throws a UserError naming the first bad one. */
export function parseInitFlags(raw: InitRawOptions): InitFlags {
  const flags: Record<string, unknown> = {};
  for (const q of QUESTIONS) {
    const text = raw[optionKey(q)];
    if (typeof text === 'string' || (Array.isArray(text) && text.length > 0)) flags[q.id] = flagValue(q, text);
  }
  if (raw.name !== undefined) flags.name = take('--name', nonEmpty(raw.name, 120));
  const { quotaReset, quotaDays, quotaTimeZone, topology, instances } = flags;
  if (quotaDays !== undefined && quotaReset !== undefined && quotaReset !== 'rolling' && quotaReset !== UNKNOWN) {
    bad('--quota-days', 'only applies with --quota-reset rolling');
  }
  if (quotaTimeZone !== undefined && quotaReset === 'rolling') {
    bad('--quota-time-zone', 'only applies to calendar resets (--quota-reset calendar-month or calendar-day)');
  }
  if (typeof instances === 'number' && topology === 'single' && instances > 1) {
    bad('--instances', `${instances} instances contradicts --topology single`);
  }
  return flags;
}

function nonEmpty(text: string, max: number): Parsed<string> {
  const t = text.trim();
  if (t === '') return { ok: false, message: 'must not be empty' };
  if (t.length > max) return { ok: false, message: `must be at most ${max} characters` };
  return { ok: true, value: t };
}

/** A file or folder path as typed: not empty, no control characters. */
export function pathText(text: string): Parsed<string> {
  const t = text.trim();
  if (t === '') return { ok: false, message: 'must not be empty' };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(t)) return { ok: false, message: 'must not contain control characters' };
  return { ok: true, value: t };
}

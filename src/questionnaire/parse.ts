/**
 * Parsing and validating what a person types, at a prompt or in a flag.
 *
 * The rules themselves live in the answers schema (Cidr, Route, TimeZone, the number
 * fields...); this module only turns text into values and the schema's complaint into a
 * sentence that says what is allowed. Prompts and flags share it, so a rule is written once.
 */
import type { z } from 'zod';
import { answersProblems } from '../answers/load.js';
import { RATE_HELP, ENDPOINT_SPEC_HELP, PLAN_SPEC_HELP, OUTBOUND_SPEC_HELP, FAIL_MODE_HELP } from './spec-help.js';
import {
  TrustedProxy,
  Endpoint,
  ENDPOINT_CLASSES,
  FAIL_MODES,
  METHODS,
  OutboundProvider,
  type PERIODS,
  Plan,
  QuotaReset,
  Rate,
  Route,
  TimeZone,
  type EndpointClassT,
  type FailModeT,
} from '../answers/schema.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (message: string): Parsed<never> => ({ ok: false, message });

function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  // A type problem on a value that is present (e.g. int() on 2.5) carries the schema's own words.
  if (issue?.code === 'invalid_type' && !issue.message.startsWith('Invalid input')) return issue.message;
  return answersProblems(error)[0]?.message ?? 'is not allowed';
}

/** The first problem the schema reports, as 'must ...' text. */
function schemaProblem(schema: z.ZodType, value: unknown): string | undefined {
  const r = schema.safeParse(value);
  return r.success ? undefined : firstProblem(r.error);
}

/** Validates with a schema; the message starts with what was typed. */
export function check<T>(schema: z.ZodType<T>, value: unknown, shown: string = String(value)): Parsed<T> {
  const r = schema.safeParse(value);
  if (r.success) return ok(r.data);
  return fail(`"${shown}" ${firstProblem(r.error)}`);
}

/** A number checked by a schema field (e.g. Traffic.shape.peakRps). */
export function parseNumber(text: string, schema: z.ZodType<number | undefined> | undefined, example: string): Parsed<number> {
  const t = text.trim().replace(/[_,](?=\d{3}\b)/g, '');
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i.test(t)) {
    return fail(`"${text.trim()}" is not a number: type digits only, e.g. ${example}`);
  }
  const n = Number(t);
  const problem = schema ? schemaProblem(schema, n) : undefined;
  return problem ? fail(`${text.trim()} ${problem}, e.g. ${example}`) : ok(n);
}

/** Splits a comma (or space) separated list, dropping empty items. */
function splitList(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** One value of a fixed set; `aliases` maps extra spellings onto it. */
export function parseChoice<T extends string>(text: string, allowed: readonly T[], aliases: Record<string, T> = {}): Parsed<T> {
  const t = text.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(t)) return ok(t as T);
  if (Object.hasOwn(aliases, t)) return ok(aliases[t] as T);
  return fail(`"${text.trim()}" is not one of ${allowed.join(', ')}`);
}

export function parseChoiceList<T extends string>(text: string, allowed: readonly T[]): Parsed<T[]> {
  const out: T[] = [];
  const items = splitList(text);
  if (items.length === 0) return fail(`give at least one of ${allowed.join(', ')}`);
  for (const item of items) {
    const r = parseChoice(item, allowed);
    if (!r.ok) return r;
    if (!out.includes(r.value)) out.push(r.value);
  }
  return ok(out);
}

export function parseCidrList(text: string): Parsed<string[]> {
  const items = splitList(text);
  if (items.length === 0) return fail('give at least one address range, e.g. 10.0.0.0/8');
  for (const item of items) {
    const problem = schemaProblem(TrustedProxy, item);
    if (problem) return fail(`"${item}" ${problem}`);
  }
  return ok([...new Set(items)]);
}

/** Days of a rolling quota window, checked by the QuotaReset schema. */
export function parseRollingDays(text: string): Parsed<number> {
  const n = parseNumber(text, undefined, '30');
  if (!n.ok) return n;
  const problem = schemaProblem(QuotaReset, { kind: 'rolling', days: n.value });
  return problem ? fail(`${text.trim()} ${problem}, e.g. 30`) : n;
}

export function parseRoute(text: string): Parsed<string> {
  return check(Route, text.trim());
}

export function parseTimeZone(text: string): Parsed<string> {
  return check(TimeZone, text.trim());
}

const PERIOD_ALIASES: Record<string, (typeof PERIODS)[number]> = {
  s: 'second',
  sec: 'second',
  secs: 'second',
  second: 'second',
  seconds: 'second',
  m: 'minute',
  min: 'minute',
  mins: 'minute',
  minute: 'minute',
  minutes: 'minute',
  h: 'hour',
  hr: 'hour',
  hour: 'hour',
  hours: 'hour',
  d: 'day',
  day: 'day',
  days: 'day',
};

/** '600/minute', '600 per minute', '10/s'. */
export function parseRate(text: string): Parsed<z.infer<typeof Rate>> {
  const m = /^\s*([0-9][0-9_,.]*)\s*(?:\/|per\s+|a\s+|an\s+)\s*([a-z]+)\s*$/i.exec(text);
  if (!m) return fail(`"${text.trim()}" is not a rate: write ${RATE_HELP}`);
  const per = PERIOD_ALIASES[(m[2] ?? '').toLowerCase()];
  if (!per) return fail(`"${m[2]}" is not a period: use second, minute, hour or day`);
  const requests = Number((m[1] ?? '').replace(/[_,]/g, ''));
  if (!Number.isFinite(requests)) return fail(`"${text.trim()}" is not a rate: write ${RATE_HELP}`);
  return check(Rate, { requests, per }, text.trim());
}

export function parseEndpointSpec(text: string): Parsed<z.infer<typeof Endpoint>> {
  let rest = text.trim();
  let name: string | undefined;
  const eq = /^([^=\s/][^=]*?)=\s*(.*)$/.exec(rest);
  if (eq) {
    name = (eq[1] ?? '').trim();
    rest = eq[2] ?? '';
  }
  const parts = rest.split(/\s+/).filter(Boolean);
  if (parts.length < 3 || parts.length > 4) return fail(`"${text.trim()}" should be ${ENDPOINT_SPEC_HELP}`);
  const upper = (parts[0] ?? '').toUpperCase();
  if (!(METHODS as readonly string[]).includes(upper)) return fail(`method "${parts[0]}" is not one of ${METHODS.join(', ')}`);
  const route = parseRoute(parts[1] ?? '');
  if (!route.ok) return route;
  const cls = parseChoice(parts[2] ?? '', ENDPOINT_CLASSES);
  if (!cls.ok) return fail(`endpoint class ${cls.message}`);
  if (parts[3] !== undefined && parts[3].toLowerCase() !== 'anonymous')
    return fail(`"${parts[3]}" is not understood: the only word allowed after the class is "anonymous"`);
  return check(
    Endpoint,
    {
      name: name ?? `${upper} ${route.value}`,
      method: upper,
      route: route.value,
      class: cls.value,
      anonymous: cls.value === 'auth' || parts[3] !== undefined,
    },
    text.trim(),
  );
}

export function parsePlanSpec(text: string): Parsed<z.infer<typeof Plan>> {
  const parts = text.split(':').map((s) => s.trim());
  if (parts.length < 2 || parts.length > 3 || !parts[0]) return fail(`"${text.trim()}" should be ${PLAN_SPEC_HELP}`);
  const rate = parseRate(parts[1] ?? '');
  if (!rate.ok) return rate;
  let quota: number | undefined;
  if (parts[2] !== undefined && parts[2] !== '') {
    const q = parseNumber(parts[2], Plan.shape.quota, '10000');
    if (!q.ok) return fail(`quota ${q.message}`);
    quota = q.value;
  }
  return check(Plan, { name: parts[0], rate: rate.value, ...(quota !== undefined ? { quota } : {}) }, text.trim());
}

export function parseOutboundSpec(text: string): Parsed<z.infer<typeof OutboundProvider>> {
  const i = text.lastIndexOf(':');
  if (i <= 0) return fail(`"${text.trim()}" should be ${OUTBOUND_SPEC_HELP}`);
  const limit = parseRate(text.slice(i + 1));
  if (!limit.ok) return limit;
  return check(OutboundProvider, { name: text.slice(0, i).trim(), limit: limit.value }, text.trim());
}

export function parseFailModes(text: string): Parsed<Partial<Record<EndpointClassT, FailModeT>>> {
  const out: Partial<Record<EndpointClassT, FailModeT>> = {};
  const items = splitList(text);
  if (items.length === 0) return fail(`give ${FAIL_MODE_HELP}`);
  for (const item of items) {
    const [c, m, extra] = item.split('=');
    if (c === undefined || m === undefined || extra !== undefined) return fail(`"${item}" should be CLASS=open or CLASS=closed`);
    const cls = parseChoice(c, ENDPOINT_CLASSES);
    if (!cls.ok) return fail(`endpoint class ${cls.message}`);
    const mode = parseChoice(m, FAIL_MODES);
    if (!mode.ok) return fail(`fail mode ${mode.message}`);
    out[cls.value] = mode.value;
  }
  return ok(out);
}

/** A prompt validator from a parser: true, or the parser's message. */
export function validatorOf<T>(parse: (text: string) => Parsed<T>, allowEmpty = false): (text: string) => true | string {
  return (text) => {
    if (allowEmpty && text.trim() === '') return true;
    const r = parse(text);
    return r.ok ? true : r.message;
  };
}

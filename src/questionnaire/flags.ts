/**
 * One flag per interview question. The raw strings from the command line are parsed here,
 * with the same rules the prompts use, into typed values; a bad value is a UserError
 * (exit 2) naming the flag and what is allowed.
 *
 * Every choice flag also accepts `unknown`: "don't know, don't ask". List flags that can
 * be empty (plans, outbound providers, trusted proxies, endpoints, code dir) accept `none`.
 */
import {
  BURSTINESS,
  EXHAUSTION,
  FRAMEWORKS,
  GATEWAYS,
  GOALS,
  IDENTITIES,
  Stack,
  STORES,
  Traffic,
  type Endpoint,
  type EndpointClassT,
  type FailModeT,
  type OutboundProvider,
  type Plan,
} from '../answers/schema.js';
import { UserError } from '../messages.js';
import { QUOTA_RESETS } from './options.js';
import { UNKNOWN, type Unknown } from './unknown.js';
import {
  parseChoice,
  parseChoiceList,
  parseCidrList,
  parseEndpointSpec,
  parseFailModes,
  parseNumber,
  parseOutboundSpec,
  parsePlanSpec,
  parseRollingDays,
  parseTimeZone,
  type Parsed,
} from './parse.js';

type Goal = (typeof GOALS)[number];
type Framework = (typeof FRAMEWORKS)[number];
type Gateway = (typeof GATEWAYS)[number];
type Store = (typeof STORES)[number];
type Identity = (typeof IDENTITIES)[number];

export type QuotaResetChoice = (typeof QUOTA_RESETS)[number];

/** The options commander hands over (strings as typed; repeatable ones as arrays). */
export interface InitRawOptions {
  yes?: boolean;
  force?: boolean;
  debug?: boolean;
  date?: string;
  answersFile?: string;
  name?: string;
  format?: string;
  out?: string;
  layout?: string;
  codeDir?: string;
  goals?: string;
  language?: string;
  framework?: string;
  topology?: string;
  instances?: string;
  gateway?: string;
  store?: string;
  trustedProxies?: string;
  identities?: string;
  endpoint?: string[];
  typicalRps?: string;
  peakRps?: string;
  capacityRps?: string;
  burstiness?: string;
  clientRps?: string;
  clientsPerAddress?: string;
  clients?: string;
  tenants?: string;
  users?: string;
  plan?: string[];
  quotaReset?: string;
  quotaTimeZone?: string;
  quotaDays?: string;
  exhaustion?: string;
  failMode?: string;
  outbound?: string[];
}

/** A flag's value: absent (undefined), a value, or "don't know". */
export type Flag<T> = T | Unknown | undefined;

export interface InitFlags {
  name?: string;
  format?: 'html' | 'markdown';
  out?: string;
  layout?: 'auto' | 'single' | 'folder';
  /** null: no code wanted. */
  codeDir?: string | null;
  goals: Flag<Goal[]>;
  language: Flag<string>;
  framework: Flag<Framework>;
  topology: Flag<'single' | 'horizontal'>;
  instances: Flag<number>;
  gateway: Flag<Gateway>;
  store: Flag<Store>;
  trustedProxies: Flag<string[]>;
  identities: Flag<Identity[]>;
  /** [] with `--endpoint none`. */
  endpoints: Flag<Endpoint[]>;
  typicalRps: Flag<number>;
  peakRps: Flag<number>;
  capacityRps: Flag<number>;
  burstiness: Flag<(typeof BURSTINESS)[number]>;
  clients: Flag<number>;
  tenants: Flag<number>;
  users: Flag<number>;
  clientRps: Flag<number>;
  clientsPerAddress: Flag<number>;
  plans: Flag<Plan[]>;
  quotaReset: Flag<QuotaResetChoice>;
  quotaTimeZone?: string;
  quotaDays?: number;
  exhaustion: Flag<(typeof EXHAUSTION)[number]>;
  failure: Flag<Partial<Record<EndpointClassT, FailModeT>> | 'rule-of-thumb'>;
  outbound: Flag<OutboundProvider[]>;
}

function bad(option: string, reason: string): never {
  throw new UserError('badOption', { option, reason });
}

function take<T>(option: string, r: Parsed<T>): T {
  return r.ok ? r.value : bad(option, r.message);
}

const isUnknown = (v: string | undefined): boolean => v !== undefined && v.trim().toLowerCase() === UNKNOWN;
const isNone = (v: string | undefined): boolean => v !== undefined && v.trim().toLowerCase() === 'none';

function choiceFlag<T extends string>(
  option: string,
  raw: string | undefined,
  allowed: readonly T[],
  aliases: Record<string, T> = {},
): Flag<T> {
  if (raw === undefined) return undefined;
  if (isUnknown(raw)) return UNKNOWN;
  return take(option, parseChoice(raw, allowed, aliases));
}

function numberFlag(option: string, raw: string | undefined, schema: Parameters<typeof parseNumber>[1], example: string): Flag<number> {
  if (raw === undefined) return undefined;
  if (isUnknown(raw)) return UNKNOWN;
  return take(option, parseNumber(raw, schema, example));
}

function specsFlag<T>(option: string, raw: string[] | undefined, parse: (s: string) => Parsed<T>): Flag<T[]> {
  if (raw === undefined || raw.length === 0) return undefined;
  if (raw.length === 1 && isUnknown(raw[0])) return UNKNOWN;
  if (raw.length === 1 && isNone(raw[0])) return [];
  return raw.map((s) => take(option, parse(s)));
}

/** Parses and checks every init flag; throws a UserError naming the first bad one. */
export function parseInitFlags(raw: InitRawOptions): InitFlags {
  const flags: InitFlags = {
    goals: raw.goals === undefined ? undefined : isUnknown(raw.goals) ? UNKNOWN : take('--goals', parseChoiceList(raw.goals, GOALS)),
    language: raw.language === undefined ? undefined : isUnknown(raw.language) ? UNKNOWN : take('--language', nonEmpty(raw.language, 60)),
    framework: choiceFlag('--framework', raw.framework, FRAMEWORKS, { nest: 'nestjs', '@nestjs/core': 'nestjs' }),
    topology: choiceFlag('--topology', raw.topology, ['single', 'horizontal'] as const, { scaled: 'horizontal', multi: 'horizontal' }),
    instances: numberFlag('--instances', raw.instances, Stack.shape.instances, '6'),
    gateway: choiceFlag('--gateway', raw.gateway, GATEWAYS),
    store: choiceFlag('--store', raw.store, STORES),
    trustedProxies:
      raw.trustedProxies === undefined
        ? undefined
        : isUnknown(raw.trustedProxies)
          ? UNKNOWN
          : isNone(raw.trustedProxies)
            ? []
            : take('--trusted-proxies', parseCidrList(raw.trustedProxies)),
    identities:
      raw.identities === undefined
        ? undefined
        : isUnknown(raw.identities)
          ? UNKNOWN
          : take('--identities', parseChoiceList(raw.identities, IDENTITIES)),
    endpoints: specsFlag('--endpoint', raw.endpoint, parseEndpointSpec),
    typicalRps: numberFlag('--typical-rps', raw.typicalRps, Traffic.shape.typicalRps, '120'),
    peakRps: numberFlag('--peak-rps', raw.peakRps, Traffic.shape.peakRps, '600'),
    capacityRps: numberFlag('--capacity-rps', raw.capacityRps, Traffic.shape.capacityRps, '1500'),
    burstiness: choiceFlag('--burstiness', raw.burstiness, BURSTINESS),
    clients: numberFlag('--clients', raw.clients, Traffic.shape.distinctClients, '2000'),
    tenants: numberFlag('--tenants', raw.tenants, Traffic.shape.distinctTenants, '300'),
    users: numberFlag('--users', raw.users, Traffic.shape.distinctUsers, '50000'),
    clientRps: numberFlag('--client-rps', raw.clientRps, Traffic.shape.clientPeakRps, '2'),
    clientsPerAddress: numberFlag('--clients-per-address', raw.clientsPerAddress, Traffic.shape.clientsPerAddress, '25'),
    plans: specsFlag('--plan', raw.plan, parsePlanSpec),
    quotaReset: choiceFlag('--quota-reset', raw.quotaReset, QUOTA_RESETS, { month: 'calendar-month', day: 'calendar-day' }),
    exhaustion: choiceFlag('--exhaustion', raw.exhaustion, EXHAUSTION),
    failure:
      raw.failMode === undefined
        ? undefined
        : isUnknown(raw.failMode)
          ? UNKNOWN
          : raw.failMode.trim().toLowerCase() === 'rule-of-thumb'
            ? 'rule-of-thumb'
            : take('--fail-mode', parseFailModes(raw.failMode)),
    outbound: specsFlag('--outbound', raw.outbound, parseOutboundSpec),
  };
  if (raw.name !== undefined) flags.name = take('--name', nonEmpty(raw.name, 120));
  if (raw.format !== undefined) {
    flags.format = take(
      '--format',
      parseChoice<'html' | 'markdown'>(raw.format, ['html', 'markdown'] as const, { md: 'markdown', htm: 'html' }),
    );
  }
  if (raw.out !== undefined) flags.out = take('--out', pathText(raw.out));
  if (raw.layout !== undefined) flags.layout = take('--layout', parseChoice(raw.layout, ['auto', 'single', 'folder'] as const));
  if (raw.codeDir !== undefined) flags.codeDir = isNone(raw.codeDir) ? null : take('--code-dir', pathText(raw.codeDir));
  if (raw.quotaTimeZone !== undefined) flags.quotaTimeZone = take('--quota-time-zone', parseTimeZone(raw.quotaTimeZone));
  if (raw.quotaDays !== undefined) {
    flags.quotaDays = take('--quota-days', parseRollingDays(raw.quotaDays));
  }
  if (flags.quotaDays !== undefined && flags.quotaReset !== undefined && flags.quotaReset !== 'rolling' && flags.quotaReset !== UNKNOWN) {
    bad('--quota-days', 'only applies with --quota-reset rolling');
  }
  if (flags.quotaTimeZone !== undefined && flags.quotaReset === 'rolling') {
    bad('--quota-time-zone', 'only applies to calendar resets (--quota-reset calendar-month or calendar-day)');
  }
  if (typeof flags.instances === 'number' && flags.topology === 'single' && flags.instances > 1) {
    bad('--instances', `${flags.instances} instances contradicts --topology single`);
  }
  return flags;
}

export function nonEmpty(text: string, max: number): Parsed<string> {
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

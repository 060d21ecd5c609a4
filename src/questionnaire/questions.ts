/**
 * The interview's questions as data. Each names the `rl-design init` flag that answers it, the
 * answers field it fills, how its text is read (the same rules for the flag and for what is
 * typed at the prompt), its help and its prompt. The steps (steps/) put them in order and
 * answer each through resolve.ts; options.ts turns the table into init's options. Nothing here
 * loads the answers schema, so the CLI lists the flags at start-up at no cost.
 */
import { BURSTINESS, EXHAUSTION, FRAMEWORKS, GATEWAYS, GOALS, IDENTITIES, STORES } from '../answers/choices.js';
import type { AnswersInput, Endpoint, EndpointClassT, FailModeT, OutboundProvider, Plan } from '../answers/schema.js';
import { formatNumber } from '../format.js';
import type { PromptChoice } from './prompt.js';
import { ENDPOINT_SPEC_HELP, FAIL_MODE_HELP, OUTBOUND_SPEC_HELP, PLAN_SPEC_HELP } from './spec-help.js';
import { UNKNOWN, type Unknown } from './unknown.js';

export const DONT_KNOW_NAME = "Don't know";
const QUOTA_RESETS = ['calendar-month', 'calendar-day', 'rolling'] as const;
export type QuotaResetChoice = (typeof QUOTA_RESETS)[number];
type QuotaResetT = NonNullable<NonNullable<AnswersInput['quotas']>['reset']>;
export type ByClass = Partial<Record<EndpointClassT, FailModeT>>;

/** How text, a flag's value or what is typed at an input, becomes a value (flags.ts reads it). */
export type Reading =
  | { kind: 'choice'; allowed: readonly string[]; aliases?: Record<string, string> }
  | { kind: 'choices'; allowed: readonly string[] }
  | { kind: 'text'; max: number }
  /** Bounds from the answers schema at the question's field; `example` is shown when it is refused. */
  | { kind: 'number'; example: string }
  | { kind: 'path' | 'cidrs' | 'timeZone' | 'days' | 'rate' | 'route' | 'endpoint' | 'plan' | 'outbound' | 'failModes' };

/** Asked once more, after examples, when the first answer is "don't know". */
interface Again {
  message: string;
  examples: readonly string[];
}

export type Prompt<T> =
  | { kind: 'select' | 'checkbox'; message: string; choices: readonly PromptChoice<string>[]; again?: Again }
  /**
   * `blank`: what an empty answer means: "none" (the question's `none` value), or "don't know",
   * hinted as "empty if unknown" / "empty if unsure". `{hint}` in the message says so; `{name}`
   * words come from the step. `refusal` frames the reading's complaint ('The folder {problem}.').
   */
  | { kind: 'input'; message: string; blank?: 'none' | 'unknown' | 'unsure'; refusal?: string }
  /** Asked by the step's own code (lists, follow-up questions): gets the default, returns the answer. */
  | { kind: 'custom'; ask(def: T | Unknown | undefined): Promise<T | Unknown> };

export interface Question<T = unknown> {
  /** Its key among the parsed flags. */
  id: string;
  /** The flag as commander declares it: '--framework <name>'. */
  flag: string;
  /** --help text. */
  help: string;
  /** The design question it belongs to (Q1-Q7 in --help). */
  item?: number;
  /** The answers field it fills ('stack.framework'), where the previous answers and detection are read. */
  field: string;
  read: Reading;
  /** False: the flag does not take "unknown" (don't know). */
  unknown?: false;
  /** What the word "none" means (an empty list, no folder); without it "none" is read like any text. */
  none?: T;
  /** The flag may be given several times; each is read. */
  repeatable?: true;
  /** Its name where known values are listed ("Keep the traffic: peak rps 600?"). */
  label?: string;
  /** A value as text, where it is listed or named as a default. */
  show?(value: T): string;
  /** The answer when nothing else gives one. */
  fallback?: T;
  /** Without one the question is answered by its flag, the previous answers or detection, never asked. */
  prompt?: Prompt<T>;
}

const question = <T>(q: Question<T>): Question<T> => q;
const dontKnow = { value: UNKNOWN, name: DONT_KNOW_NAME } as const;
const AGAIN = 'Asking once more: ';
const EXAMPLES = 'Examples, to help decide:';

export const GOALS_EXAMPLES = [
  EXAMPLES,
  "  - a partner's buggy retry loop once took the whole API down        -> Overload",
  '  - thousands of failed logins arrive from one address range           -> Abuse',
  "  - the largest customer's nightly sync makes everyone else slow       -> Fairness",
  '  - the pricing page promises a number of calls per month on each plan -> Business quotas',
];

export const STACK_EXAMPLES = {
  framework: [
    EXAMPLES,
    '  - package.json lists "express" -> Express; "fastify" -> Fastify; "@nestjs/core" -> NestJS',
    '  - the API is Python (Django, FastAPI), Java (Spring Boot), Go or Ruby -> Other',
  ],
  topology: [
    EXAMPLES,
    '  - a Kubernetes Deployment with replicas: 3, an autoscaling group, PM2 cluster mode -> several instances',
    '  - one VM, one container, one long-running process                              -> one instance',
  ],
  gateway: [
    EXAMPLES,
    '  - an nginx.conf with proxy_pass in front of the app -> nginx; an Istio sidecar -> Envoy',
    '  - requests arrive through AWS API Gateway, Kong routes or a Cloudflare proxy -> pick that one',
    '  - only a cloud load balancer, or nothing                                    -> None',
  ],
  store: [
    EXAMPLES,
    '  - REDIS_URL in the environment, ElastiCache or Memorystore, ioredis/redis in package.json -> Redis',
    '  - a Redis with several shards (cluster mode enabled)                                    -> Redis Cluster',
  ],
} as const;

/** 'Free 60/minute, quota 10,000' */
function planText(p: Plan): string {
  return `${p.name} ${formatNumber(p.rate.requests)}/${p.rate.per}${p.quota !== undefined ? `, quota ${formatNumber(p.quota)}` : ''}`;
}

/** 'each calendar month (Europe/Berlin)', 'rolling 30 days' */
export function resetText(r: QuotaResetT): string {
  return r.kind === 'rolling' ? `rolling ${r.days} days` : `each calendar ${r.period} (${r.timeZone})`;
}

/** 'stripe 100/second' */
function providerText(p: OutboundProvider): string {
  return `${p.name} ${formatNumber(p.limit.requests)}/${p.limit.per}`;
}

/** 'auth closed, read open' */
function byClassText(byClass: ByClass): string {
  const entries = Object.entries(byClass);
  return entries.length === 0 ? 'none' : entries.map(([c, m]) => `${c} ${m}`).join(', ');
}

const listText =
  <T>(text: (item: T) => string, join: string) =>
  (items: readonly T[]): string =>
    items.length === 0 ? 'none' : items.map(text).join(join);

/** A count of Q2 or Q4: its flag is its id in kebab case; empty or "unknown" at the prompt leaves it open. */
const count = (id: string, field: string, help: string, label: string, message: string, example: string) =>
  question<number>({
    id,
    flag: `--${id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} <n>`,
    help,
    item: field.startsWith('traffic.') ? 4 : 2,
    field,
    read: { kind: 'number', example },
    label,
    show: formatNumber,
    prompt: { kind: 'input', message: `${message} (e.g. ${example}; {hint})`, blank: field.startsWith('traffic.') ? 'unknown' : 'unsure' },
  });

/** Every question, in the order --help lists their flags. */
export const Q = {
  format: question<'html' | 'markdown'>({
    id: 'format',
    flag: '--format <format>',
    help: 'document format: html (default) or markdown',
    field: 'output.format',
    read: { kind: 'choice', allowed: ['html', 'markdown'], aliases: { md: 'markdown', htm: 'html' } },
    unknown: false,
    show: (f) => (f === 'markdown' ? 'Markdown' : 'HTML'),
    fallback: 'html',
    prompt: {
      kind: 'select',
      message: 'Format of the design document?',
      choices: [
        {
          value: 'html',
          name: 'HTML (default)',
          description: 'One self-contained page: styled tables, inline SVG diagrams, no scripts; opens from disk in any browser.',
        },
        {
          value: 'markdown',
          name: 'Markdown',
          description: 'One .md file with mermaid diagram blocks, rendered by GitHub, GitLab and VS Code.',
        },
      ],
    },
  }),
  out: question<string>({
    id: 'out',
    flag: '--out <path>',
    help: 'document path: a file, written as one file (default: docs/rate-limit-design.html, or .md), or a folder ending in /',
    field: 'output.path',
    read: { kind: 'path' },
    unknown: false,
    prompt: { kind: 'input', message: 'Write the document to', refusal: 'The path {problem}.' },
  }),
  layout: question<'auto' | 'single' | 'folder'>({
    id: 'layout',
    flag: '--layout <layout>',
    help: 'single, folder or auto (default: one file when --out names a file, else by length)',
    field: 'output.layout',
    read: { kind: 'choice', allowed: ['auto', 'single', 'folder'] },
    unknown: false,
  }),
  codeDir: question<string | null>({
    id: 'codeDir',
    flag: '--code-dir <dir>',
    help: 'where generated code should go, or none (default: none); the document prints its rules, Lua and gateway files and links the rest',
    field: 'output.codeDir',
    read: { kind: 'path' },
    unknown: false,
    none: null,
    prompt: {
      kind: 'input',
      message: 'Folder for the generated code (Lua scripts, middleware, gateway config), e.g. src/rate-limit; {hint}:',
      blank: 'none',
      refusal: 'The folder {problem}.',
    },
  }),
  goals: question<(typeof GOALS)[number][]>({
    id: 'goals',
    flag: '--goals <list>',
    help: `what to protect against: ${GOALS.join(',')} (comma list) or unknown`,
    item: 1,
    field: 'goals',
    read: { kind: 'choices', allowed: GOALS },
    prompt: {
      kind: 'checkbox',
      message: 'What should rate limiting protect against? (space to pick, enter when done)',
      choices: [
        {
          value: 'overload',
          name: 'Overload',
          description: 'Keep total traffic under what the backend can serve: runaway clients, retry storms.',
        },
        { value: 'abuse', name: 'Abuse', description: 'Password guessing on login, credential stuffing, scraping.' },
        { value: 'fairness', name: 'Fairness', description: 'One client or tenant must not slow everyone else down (noisy neighbour).' },
        { value: 'quotas', name: 'Business quotas', description: 'Plan tiers such as "10,000 calls a month on Free".' },
        dontKnow,
      ],
      again: { message: `${AGAIN}what should rate limiting protect against?`, examples: GOALS_EXAMPLES },
    },
  }),
  language: question<string>({
    id: 'language',
    flag: '--language <name>',
    help: 'language, e.g. TypeScript, JavaScript, Go',
    item: 2,
    field: 'stack.language',
    read: { kind: 'text', max: 60 },
    label: 'language',
    prompt: { kind: 'input', message: 'Which language is the API written in? (e.g. Go, Python, Java; {hint})', blank: 'unsure' },
  }),
  framework: question<(typeof FRAMEWORKS)[number]>({
    id: 'framework',
    flag: '--framework <name>',
    help: `framework: ${FRAMEWORKS.join(', ')} or unknown`,
    item: 2,
    field: 'stack.framework',
    read: { kind: 'choice', allowed: FRAMEWORKS, aliases: { nest: 'nestjs', '@nestjs/core': 'nestjs' } },
    label: 'framework',
    prompt: {
      kind: 'select',
      message: 'Which web framework serves the API?',
      choices: [
        { value: 'express', name: 'Express' },
        { value: 'fastify', name: 'Fastify' },
        { value: 'koa', name: 'Koa' },
        { value: 'hono', name: 'Hono' },
        { value: 'nestjs', name: 'NestJS' },
        { value: 'other', name: 'Other', description: 'Another framework or language (Django, Spring Boot, Go net/http, Rails...).' },
        dontKnow,
      ],
      again: { message: `${AGAIN}which web framework serves the API?`, examples: STACK_EXAMPLES.framework },
    },
  }),
  topology: question<'single' | 'horizontal'>({
    id: 'topology',
    flag: '--topology <kind>',
    help: 'single or horizontal (several instances)',
    item: 2,
    field: 'stack.topology',
    read: { kind: 'choice', allowed: ['single', 'horizontal'], aliases: { scaled: 'horizontal', multi: 'horizontal' } },
    label: 'topology',
    prompt: {
      kind: 'select',
      message: 'How does the API run in production?',
      choices: [
        { value: 'single', name: 'One instance', description: 'One process, VM or container serves all traffic.' },
        {
          value: 'horizontal',
          name: 'Several instances',
          description: 'Replicas behind a load balancer; limits must live in a shared store.',
        },
        dontKnow,
      ],
      again: { message: `${AGAIN}does the API run as one instance or several?`, examples: STACK_EXAMPLES.topology },
    },
  }),
  instances: count('instances', 'stack.instances', 'number of instances at peak', 'instances', 'How many instances at peak?', '6'),
  gateway: question<(typeof GATEWAYS)[number]>({
    id: 'gateway',
    flag: '--gateway <name>',
    help: `gateway / reverse proxy: ${GATEWAYS.join(', ')}`,
    item: 2,
    field: 'stack.gateway',
    read: { kind: 'choice', allowed: GATEWAYS },
    label: 'gateway',
    prompt: {
      kind: 'select',
      message: 'Is there an API gateway or reverse proxy in front of the API?',
      choices: [
        { value: 'nginx', name: 'nginx' },
        { value: 'envoy', name: 'Envoy', description: 'Also Istio and other Envoy-based meshes.' },
        { value: 'kong', name: 'Kong' },
        { value: 'aws-api-gateway', name: 'AWS API Gateway' },
        { value: 'cloudflare', name: 'Cloudflare' },
        { value: 'none', name: 'None', description: 'Clients reach the application directly (a plain load balancer counts as none).' },
        dontKnow,
      ],
      again: { message: `${AGAIN}is there an API gateway or reverse proxy in front of the API?`, examples: STACK_EXAMPLES.gateway },
    },
  }),
  gatewayNodes: question<number>({
    id: 'gatewayNodes',
    flag: '--gateway-nodes <n>',
    help: 'number of nginx, Envoy or Kong nodes sharing the gateway ceiling (each ships ceiling / n), a whole number >= 1 (default: one per instance)',
    item: 2,
    field: 'stack.gatewayNodes',
    read: { kind: 'number', example: '3' },
    label: 'gateway nodes',
    show: formatNumber,
    prompt: {
      kind: 'input',
      message: 'How many {gateway} nodes serve the API? Each counts on its own and gets ceiling / nodes (e.g. 3; {hint}){assumed}',
      blank: 'unsure',
    },
  }),
  store: question<(typeof STORES)[number]>({
    id: 'store',
    flag: '--store <name>',
    help: `limiter store: ${STORES.join(', ')}`,
    item: 2,
    field: 'stack.store',
    read: { kind: 'choice', allowed: STORES },
    label: 'store',
    prompt: {
      kind: 'select',
      message: 'Is Redis (or a compatible store) available for limiter state?',
      choices: [
        { value: 'redis', name: 'Redis' },
        { value: 'redis-cluster', name: 'Redis Cluster' },
        { value: 'valkey', name: 'Valkey' },
        { value: 'none', name: 'None', description: 'No shared store today.' },
        dontKnow,
      ],
      again: { message: `${AGAIN}is Redis (or a compatible store) available?`, examples: STACK_EXAMPLES.store },
    },
  }),
  trustedProxies: question<string[]>({
    id: 'trustedProxies',
    flag: '--trusted-proxies <cidrs>',
    help: 'proxy address ranges allowed to name the client IP, e.g. 10.0.0.0/8,192.168.0.0/16, or none',
    item: 2,
    field: 'stack.trustedProxies',
    read: { kind: 'cidrs' },
    none: [],
    label: 'trusted proxies',
    prompt: {
      kind: 'input',
      message: 'Address ranges your {gateway} tier sends from (trusted to name the client IP), e.g. 10.0.0.0/8, 192.168.0.0/16; {hint}:',
      blank: 'unsure',
    },
  }),
  identities: question<(typeof IDENTITIES)[number][]>({
    id: 'identities',
    flag: '--identities <list>',
    help: `what requests are keyed on: ${IDENTITIES.join(',')} (comma list)`,
    item: 3,
    field: 'identities',
    read: { kind: 'choices', allowed: IDENTITIES },
    label: '',
    prompt: {
      kind: 'checkbox',
      message: 'What can requests be keyed on? (space to pick, enter when done)',
      choices: [
        { value: 'api-key', name: 'API key', description: 'Server-to-server clients send a key with every call.' },
        { value: 'user', name: 'User id', description: 'From a session cookie or a bearer token.' },
        { value: 'tenant', name: 'Tenant / organisation id', description: 'B2B accounts with several users each.' },
        { value: 'ip', name: 'Client IP', description: 'For anonymous calls; many people can share one address behind NAT or CGNAT.' },
        { value: 'session', name: 'Session id', description: 'Browser sessions before or without sign-in.' },
        dontKnow,
      ],
    },
  }),
  endpoints: question<Endpoint[]>({
    id: 'endpoints',
    flag: '--endpoint <spec>',
    help: `an endpoint (repeat for more; replaces detected ones), or none: ${ENDPOINT_SPEC_HELP}`,
    item: 3,
    field: 'endpoints',
    read: { kind: 'endpoint' },
    none: [],
    repeatable: true,
  }),
  typicalRps: count(
    'typicalRps',
    'traffic.typicalRps',
    'typical requests per second',
    'typical rps',
    'Typical requests per second, across the whole API?',
    '120',
  ),
  peakRps: count('peakRps', 'traffic.peakRps', 'peak requests per second', 'peak rps', 'Peak requests per second?', '600'),
  capacityRps: count(
    'capacityRps',
    'traffic.capacityRps',
    'requests per second the backend can safely serve, if measured',
    'capacity rps',
    'Requests per second the backend can safely serve, if measured?',
    '1500',
  ),
  burstiness: question<(typeof BURSTINESS)[number]>({
    id: 'burstiness',
    flag: '--burstiness <level>',
    help: BURSTINESS.join(', '),
    item: 4,
    field: 'traffic.burstiness',
    read: { kind: 'choice', allowed: BURSTINESS },
    label: 'burstiness',
    prompt: {
      kind: 'select',
      message: 'How bursty is the traffic?',
      choices: [
        { value: 'low', name: 'Low', description: 'Steady: server-to-server calls, dashboards.' },
        { value: 'moderate', name: 'Moderate', description: 'Daytime peaks, the odd batch job.' },
        { value: 'high', name: 'High', description: 'Mobile apps syncing at once, cron jobs on the hour, campaign launches.' },
        dontKnow,
      ],
    },
  }),
  clients: count(
    'clients',
    'traffic.distinctClients',
    'distinct clients (API keys or apps)',
    'clients',
    'How many distinct clients (API keys or apps)?',
    '2000',
  ),
  tenants: count(
    'tenants',
    'traffic.distinctTenants',
    'distinct tenants / organisations',
    'tenants',
    'How many tenants / organisations?',
    '300',
  ),
  users: count('users', 'traffic.distinctUsers', 'distinct user accounts', 'users', 'How many user accounts?', '50000'),
  clientRps: count(
    'clientRps',
    'traffic.clientPeakRps',
    'requests per second one client sends at its busiest (sizes per-IP limits)',
    'rps per client',
    'Requests per second one client (a person, a device) sends at its busiest?',
    '2',
  ),
  clientsPerAddress: count(
    'clientsPerAddress',
    'traffic.clientsPerAddress',
    'clients active at once behind one IP address, e.g. carrier-grade NAT (sizes per-IP limits)',
    'clients per address',
    'How many clients can be active at once behind one IP address (an office, a carrier-grade NAT)?',
    '25',
  ),
  plans: question<Plan[]>({
    id: 'plans',
    flag: '--plan <spec>',
    help: `a plan tier (repeat for more), or none: ${PLAN_SPEC_HELP}`,
    item: 5,
    field: 'plans',
    read: { kind: 'plan' },
    none: [],
    repeatable: true,
    label: 'plans',
    show: listText(planText, '; '),
  }),
  quotaReset: question<QuotaResetChoice>({
    id: 'quotaReset',
    flag: '--quota-reset <kind>',
    help: QUOTA_RESETS.join(', '),
    item: 5,
    field: 'quotas.reset',
    read: { kind: 'choice', allowed: QUOTA_RESETS, aliases: { month: 'calendar-month', day: 'calendar-day' } },
    label: 'quotas reset',
    prompt: {
      kind: 'select',
      message: 'When do quotas reset?',
      choices: [
        { value: 'calendar-month', name: 'Each calendar month', description: 'On the 1st, at midnight in a time zone you name.' },
        { value: 'calendar-day', name: 'Each calendar day', description: 'At midnight in a time zone you name.' },
        { value: 'rolling', name: 'Rolling window', description: 'The last N days, sliding; no reset-day stampede.' },
        dontKnow,
      ],
    },
  }),
  quotaTimeZone: question<string>({
    id: 'quotaTimeZone',
    flag: '--quota-time-zone <zone>',
    help: 'IANA time zone of calendar resets, e.g. Europe/Berlin (default: UTC)',
    item: 5,
    field: 'quotas.reset.timeZone',
    read: { kind: 'timeZone' },
    unknown: false,
    fallback: 'UTC',
    prompt: { kind: 'input', message: 'Time zone the quota period follows (IANA name, e.g. UTC, Europe/Berlin, America/New_York):' },
  }),
  quotaDays: question<number>({
    id: 'quotaDays',
    flag: '--quota-days <n>',
    help: 'length of a rolling quota window in days, 1-366 (default: 30)',
    item: 5,
    field: 'quotas.reset.days',
    read: { kind: 'days' },
    unknown: false,
    fallback: 30,
    prompt: { kind: 'input', message: 'Length of the rolling window in days (1-366):' },
  }),
  exhaustion: question<(typeof EXHAUSTION)[number]>({
    id: 'exhaustion',
    flag: '--exhaustion <kind>',
    help: `when a quota runs out: ${EXHAUSTION.join(', ')}`,
    item: 5,
    field: 'quotas.exhaustion',
    read: { kind: 'choice', allowed: EXHAUSTION },
    label: 'when used up',
    prompt: {
      kind: 'select',
      message: 'When a customer uses up the quota:',
      choices: [
        { value: 'hard', name: 'Stop', description: 'Reject with 429 QUOTA_EXCEEDED until the reset.' },
        { value: 'soft-warning', name: 'Warn', description: 'Keep serving and tell the customer.' },
        { value: 'pay-per-overage', name: 'Charge overage', description: 'Keep serving; billing counts the extra calls.' },
        dontKnow,
      ],
    },
  }),
  failure: question<ByClass | 'rule-of-thumb'>({
    id: 'failure',
    flag: '--fail-mode <spec>',
    help: `when the store is down: rule-of-thumb, or ${FAIL_MODE_HELP}`,
    item: 6,
    field: 'failure.byClass',
    read: { kind: 'failModes' },
    label: '',
    show: (v) => (v === 'rule-of-thumb' ? v : byClassText(v)),
  }),
  outbound: question<OutboundProvider[]>({
    id: 'outbound',
    flag: '--outbound <spec>',
    help: `a third-party API with its own limit (repeat for more), or none: ${OUTBOUND_SPEC_HELP}`,
    item: 7,
    field: 'outbound',
    read: { kind: 'outbound' },
    none: [],
    repeatable: true,
    label: '',
    show: listText(providerText, ', '),
  }),
};

export const QUESTIONS: readonly Question[] = Object.values(Q) as Question[];

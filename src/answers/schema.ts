/**
 * The answers schema: the single definition of what an answers file may contain.
 *
 * Every field is optional except where a value makes no sense without it; an absent
 * field means "unknown" and is filled by answers/defaults.ts with a stated assumption.
 * Types come from z.infer; schemas/answers.schema.json is generated from this file.
 */
import { z } from 'zod';
import { PERIODS, GOALS, FRAMEWORKS, GATEWAYS, STORES, IDENTITIES, ENDPOINT_CLASSES, AUTH_KINDS, METHODS, FAIL_MODES, HEADER_CONVENTIONS, BURSTINESS, EXHAUSTION, ALGORITHMS, LAYERS, PRIMITIVES, RULE_IDENTITIES } from './choices.js';

export { PERIODS, GOALS, FRAMEWORKS, GATEWAYS, STORES, IDENTITIES, ENDPOINT_CLASSES, AUTH_KINDS, METHODS, FAIL_MODES, HEADER_CONVENTIONS, BURSTINESS, EXHAUSTION, ALGORITHMS, LAYERS, PRIMITIVES, RULE_IDENTITIES } from './choices.js';

export const SCHEMA_URL = 'https://unpkg.com/rl-design/schemas/answers.schema.json';

const name = z
  .string()
  .min(1, 'must not be empty')
  .max(120, 'must be at most 120 characters');

const positiveInt = z.number().int('must be a whole number').positive('must be greater than 0');
const positiveNumber = z.number().positive('must be greater than 0');

export const Period = z.enum(PERIODS);

/** A rate: `requests` per `per`. */
export const Rate = z
  .object({
    requests: positiveNumber.describe('How many requests (or tokens) are admitted per period.'),
    per: Period.describe('The period the count applies to.'),
  })
  .strict();


export const Goal = z.enum(GOALS);
export const Framework = z.enum(FRAMEWORKS);
export const Gateway = z.enum(GATEWAYS);
export const Store = z.enum(STORES);
export const Identity = z.enum(IDENTITIES);
export const EndpointClass = z.enum(ENDPOINT_CLASSES);
export const FailMode = z.enum(FAIL_MODES);
export const HeaderConvention = z.enum(HEADER_CONVENTIONS);

/** IPv4 or IPv6 CIDR (a bare address counts as /32 or /128). */
const CIDR_RE =
  /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?:\/(?:3[0-2]|[12]?\d))?|[0-9a-fA-F:]*:[0-9a-fA-F:.]*(?:\/(?:12[0-8]|1[01]\d|[1-9]?\d))?)$/;
export const Cidr = z
  .string()
  .regex(CIDR_RE, 'must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8');

export function isIanaTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

export const TimeZone = z
  .string()
  .refine(isIanaTimeZone, 'must be an IANA time zone such as UTC, Europe/Berlin or America/New_York');

export const Route = z
  .string()
  .min(1)
  .max(300)
  .regex(/^\//, 'must start with "/", e.g. /v1/orders/:id');

export const Output = z
  .object({
    format: z.enum(['html', 'markdown']).optional().describe('Document format; html is the default.'),
    layout: z
      .enum(['auto', 'single', 'folder'])
      .optional()
      .describe('One file, a linked folder, or auto (folder when the document is large).'),
    path: z.string().min(1).optional().describe('Where the document is written.'),
    codeDir: z.string().min(1).optional().describe('Where generated enforcement code is written, if anywhere.'),
  })
  .strict();

export const Stack = z
  .object({
    language: z.string().min(1).max(60).optional(),
    framework: Framework.optional(),
    topology: z.enum(['single', 'horizontal']).optional(),
    instances: positiveInt.optional().describe('Number of application instances (horizontal topology).'),
    gateway: Gateway.optional(),
    store: Store.optional(),
    trustedProxies: z.array(Cidr).optional().describe('CIDRs of proxies you run, whose X-Forwarded-For entries are trusted.'),
  })
  .strict();

export const Endpoint = z
  .object({
    name,
    method: z.enum(METHODS).default('ANY'),
    route: Route,
    class: EndpointClass,
    authKind: z.enum(AUTH_KINDS).optional().describe('For class auth: which kind of auth flow.'),
    anonymous: z.boolean().default(false),
    cost: positiveInt.max(1000).optional().describe('Tokens one call consumes from the shared bucket.'),
  })
  .strict();

export const Traffic = z
  .object({
    typicalRps: positiveNumber.optional(),
    peakRps: positiveNumber.optional(),
    capacityRps: positiveNumber.optional().describe('What the backend can safely serve, if measured.'),
    headroom: z.number().min(1).max(10).optional().describe('Ceiling = peak x headroom when capacity is unknown.'),
    burstiness: z.enum(BURSTINESS).optional(),
    burstSources: z.array(z.string().min(1).max(200)).optional(),
    distinctClients: positiveInt.optional(),
    distinctTenants: positiveInt.optional(),
    distinctUsers: positiveInt.optional(),
  })
  .strict();

export const QuotaReset = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('calendar'),
      period: z.enum(['day', 'month']),
      timeZone: TimeZone,
    })
    .strict(),
  z
    .object({
      kind: z.literal('rolling'),
      days: positiveInt.max(366),
    })
    .strict(),
]);

export const Plan = z
  .object({
    name,
    rate: Rate.describe('The promised request rate per identity on this plan.'),
    burst: positiveInt.optional(),
    quota: positiveInt.optional().describe('Requests per quota period (see quotas.reset).'),
    exhaustion: z.enum(EXHAUSTION).optional().describe('Overrides quotas.exhaustion for this plan.'),
  })
  .strict();

export const Quotas = z
  .object({
    reset: QuotaReset.optional(),
    exhaustion: z.enum(EXHAUSTION).optional(),
    billingSource: z
      .enum(['metering-system', 'limiter-counters'])
      .optional()
      .describe('Where invoices are computed from. limiter-counters breaks constraint 8.'),
  })
  .strict();

export const OutboundProvider = z
  .object({
    name,
    limit: Rate.describe("The provider's documented limit for your account."),
    burst: positiveInt.optional(),
    safetyFraction: z.number().gt(0).max(1).optional(),
    bucket: z
      .enum(['shared', 'per-instance'])
      .optional()
      .describe('shared (default) keeps the bucket in the store; per-instance breaks constraint 9 when scaled out.'),
  })
  .strict();

export const Headers = z
  .object({
    convention: HeaderConvention.optional(),
    docsUrl: z.url().optional().describe('Documentation link used in 429 bodies.'),
  })
  .strict();


/** A hand-written rule: adds a matrix row, or overrides / removes a generated one with the same id. */
export const HandRule = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,79}$/, 'must be lowercase letters, digits and dashes, e.g. search-per-tenant'),
    remove: z.boolean().optional().describe('Drop the generated row with this id.'),
    description: z.string().max(300).optional(),
    endpointClass: z.union([EndpointClass, z.literal('all')]).optional(),
    endpoints: z.array(name).optional(),
    identity: z.enum(RULE_IDENTITIES).optional(),
    algorithm: z.enum(ALGORITHMS).optional(),
    primitive: z.enum(PRIMITIVES).optional(),
    key: z.string().min(1).max(200).optional(),
    rate: Rate.optional(),
    burst: positiveInt.optional(),
    cost: positiveInt.optional(),
    failMode: FailMode.optional(),
    layer: z.enum(LAYERS).optional(),
    ttlSeconds: positiveInt.optional(),
    cardinalityBound: positiveInt.optional(),
    headers: z.enum(['full', 'silent']).optional(),
    killSwitch: z.boolean().optional().describe('false removes the per-rule kill switch (breaks constraint 7).'),
    rationale: z.string().max(500).optional(),
  })
  .strict();

export const Answers = z
  .object({
    $schema: z.string().optional(),
    project: z.object({ name: name.optional(), description: z.string().max(500).optional() }).strict().optional(),
    output: Output.optional(),
    goals: z.array(Goal).optional().describe('Phase 1 item 1: what the limiter protects against.'),
    stack: Stack.optional(),
    identities: z.array(Identity).optional(),
    endpoints: z.array(Endpoint).optional(),
    traffic: Traffic.optional(),
    plans: z.array(Plan).optional(),
    quotas: Quotas.optional(),
    failure: z
      .object({
        byClass: z.partialRecord(EndpointClass, FailMode).optional(),
      })
      .strict()
      .optional(),
    outbound: z.array(OutboundProvider).optional(),
    headers: Headers.optional(),
    rollout: z
      .object({ shadowMode: z.boolean().optional(), shadowDays: positiveInt.max(90).optional() })
      .strict()
      .optional(),
    rules: z.array(HandRule).optional(),
    unknown: z
      .array(z.enum(['goals', 'stack']))
      .optional()
      .describe('Critical items the user could not answer after being asked twice.'),
  })
  .strict();

export type Answers = z.infer<typeof Answers>;
export type AnswersInput = z.input<typeof Answers>;
export type Endpoint = z.infer<typeof Endpoint>;
export type Plan = z.infer<typeof Plan>;
export type OutboundProvider = z.infer<typeof OutboundProvider>;
export type HandRule = z.infer<typeof HandRule>;
export type Rate = z.infer<typeof Rate>;
export type GoalT = z.infer<typeof Goal>;
export type EndpointClassT = z.infer<typeof EndpointClass>;
export type FailModeT = z.infer<typeof FailMode>;
export type HeaderConventionT = z.infer<typeof HeaderConvention>;
export type QuotaResetT = z.infer<typeof QuotaReset>;

/** The JSON Schema published in schemas/, generated from the zod schema. */
export function answersJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(Answers, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: SCHEMA_URL,
    title: 'rl-design answers',
    description: 'Answers to the rl-design interview; the source of truth for a rate-limiting design.',
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema')),
  };
}

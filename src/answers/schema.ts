/**
 * The answers schema: the single definition of what an answers file may contain.
 *
 * Every field is optional except where a value makes no sense without it; an absent
 * field means "unknown" and is filled by design/scope.ts with a stated assumption.
 * Types come from z.infer; schemas/answers.schema.json is generated from this file.
 */
import { z } from 'zod';
import {
  PERIODS,
  GOALS,
  FRAMEWORKS,
  GATEWAYS,
  STORES,
  IDENTITIES,
  ENDPOINT_CLASSES,
  AUTH_KINDS,
  METHODS,
  FAIL_MODES,
  HEADER_CONVENTIONS,
  BURSTINESS,
  EXHAUSTION,
  ALGORITHMS,
  LAYERS,
  PRIMITIVES,
  RULE_IDENTITIES,
} from './choices.js';

export {
  PERIODS,
  GOALS,
  FRAMEWORKS,
  GATEWAYS,
  STORES,
  IDENTITIES,
  ENDPOINT_CLASSES,
  AUTH_KINDS,
  METHODS,
  FAIL_MODES,
  HEADER_CONVENTIONS,
  BURSTINESS,
  EXHAUSTION,
  ALGORITHMS,
  LAYERS,
  PRIMITIVES,
  RULE_IDENTITIES,
} from './choices.js';

export const SCHEMA_URL = 'https://unpkg.com/rl-design/schemas/answers.schema.json';

const name = z.string().min(1, 'must not be empty').max(120, 'must be at most 120 characters');

/**
 * The largest count the limiter scripts take: Lua keeps numbers as doubles, and counts,
 * bursts and timestamps in milliseconds stay exact below 2^53. Rates are bounded so that
 * one request's emission interval is at least a microsecond and at most a year of
 * milliseconds, which every script computes without overflow or underflow.
 */
const MAX_COUNT = 1_000_000_000;
const positiveInt = z
  .number()
  .int('must be a whole number')
  .positive('must be greater than 0')
  .max(MAX_COUNT, `must be at most ${MAX_COUNT.toLocaleString('en-US')}`);
const positiveNumber = z
  .number()
  .positive('must be greater than 0')
  .max(MAX_COUNT, `must be at most ${MAX_COUNT.toLocaleString('en-US')}`);
/** A request count per period: at least one thousandth (one call per 1,000 periods) and at most MAX_COUNT. */
const rateCount = z
  .number()
  .min(0.001, 'must be at least 0.001 (one call per 1,000 periods)')
  .max(MAX_COUNT, `must be at most ${MAX_COUNT.toLocaleString('en-US')}`);

const Period = z.enum(PERIODS);

/** A rate: `requests` per `per`. */
export const Rate = z
  .object({
    requests: rateCount.describe('How many requests (or tokens) are admitted per period.'),
    per: Period.describe('The period the count applies to.'),
  })
  .strict();

const PERIOD_SECONDS_OF = { second: 1, minute: 60, hour: 3600, day: 86400 } as const;
/** The longest an empty bucket may take to refill: its key lives that long, in milliseconds. */
const MAX_REFILL_SECONDS = 10 * 365 * 86400;
function refillSeconds(burst: number, rate: { requests: number; per: keyof typeof PERIOD_SECONDS_OF }): number {
  return (burst * PERIOD_SECONDS_OF[rate.per]) / rate.requests;
}

export const Goal = z.enum(GOALS);
export const Framework = z.enum(FRAMEWORKS);
export const Gateway = z.enum(GATEWAYS);
export const Store = z.enum(STORES);
export const Identity = z.enum(IDENTITIES);
export const EndpointClass = z.enum(ENDPOINT_CLASSES);
export const FailMode = z.enum(FAIL_MODES);
export const HeaderConvention = z.enum(HEADER_CONVENTIONS);

/** Parses an IPv4 address into its 4 bytes, or undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const p of parts) {
    if (!/^(?:0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

/** Parses an IPv6 address (with at most one "::" and an optional dotted IPv4 tail) into 16 bytes, or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] as string;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = ipv4Bytes(p);
        if (!v4) return undefined;
        out.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (!head || !tail) return undefined;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const all = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  return all.flatMap((g) => [g >> 8, g & 255]);
}

/**
 * An IPv4 or IPv6 address, or a CIDR: the address bytes and the prefix length (a bare address
 * is /32 or /128); undefined when the text is not one.
 */
export function parseCidr(text: string): { version: 4 | 6; bytes: number[]; prefix: number } | undefined {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1);
  const v4 = ipv4Bytes(addr);
  const bytes = v4 ?? (addr.includes(':') ? ipv6Bytes(addr) : undefined);
  if (!bytes) return undefined;
  const max = v4 ? 32 : 128;
  if (prefixText !== undefined && !/^(?:0|[1-9]\d{0,2})$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { version: v4 ? 4 : 6, bytes, prefix };
}

export const Cidr = z
  .string()
  .refine((s) => parseCidr(s) !== undefined, 'must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8');

/**
 * A trusted proxy range: a CIDR narrow enough that not every client falls inside it. A range
 * of /0 (0.0.0.0/0, ::/0) would trust every address, so any client could name its own IP.
 */
export const TrustedProxy = Cidr.refine(
  (s) => (parseCidr(s)?.prefix ?? 1) > 0,
  "must not trust every address (a /0 range lets any client choose its own IP through X-Forwarded-For); list your proxies' ranges, e.g. 10.0.0.0/8",
);

/** An http(s) URL. */
const HttpUrl = z
  .string()
  .max(2000, 'must be at most 2,000 characters')
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname.length > 0;
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL, e.g. https://api.example.com/docs/rate-limits');

function isIanaTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

export const TimeZone = z.string().refine(isIanaTimeZone, 'must be an IANA time zone such as UTC, Europe/Berlin or America/New_York');

export const Route = z.string().min(1).max(300).regex(/^\//, 'must start with "/", e.g. /v1/orders/:id');

export const Output = z
  .object({
    format: z.enum(['html', 'markdown']).optional().describe('Document format; html is the default.'),
    layout: z
      .enum(['auto', 'single', 'folder'])
      .optional()
      .describe('One file, a linked folder, or auto (folder when the document is large).'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Where the document is written, relative to this answers file's folder (default docs/rate-limit-design there); it must stay inside that folder or the current one. generate --out overrides it, relative to the current folder.",
      ),
    codeDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Where the generated enforcement code is written, if anywhere (none: nowhere), relative to this answers file's folder whatever --out says; it must stay inside that folder or the current one. generate --code-dir overrides it, relative to the current folder.",
      ),
  })
  .strict();

export const Stack = z
  .object({
    language: z.string().min(1).max(60).optional(),
    framework: Framework.optional(),
    topology: z.enum(['single', 'horizontal']).optional(),
    instances: positiveInt.optional().describe('Number of application instances (horizontal topology).'),
    gateway: Gateway.optional(),
    gatewayNodes: positiveInt
      .optional()
      .describe(
        'Number of gateway nodes (nginx, Envoy or Kong instances) that each keep their own counters; without it the worst case assumes one per application instance.',
      ),
    store: Store.optional(),
    trustedProxies: z.array(TrustedProxy).optional().describe('CIDRs of proxies you run, whose X-Forwarded-For entries are trusted.'),
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
    clientPeakRps: positiveNumber
      .optional()
      .describe(
        'Requests per second one client (a person, a device, an integration) sends at its busiest: sizes limits keyed on an address.',
      ),
    clientsPerAddress: positiveInt
      .optional()
      .describe("Clients that can be active at once behind one IP address (an office, a campus, a mobile carrier's NAT)."),
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
    overageCap: positiveInt
      .optional()
      .describe('For soft-warning or pay-per-overage: the count per quota period at which calls are refused after all (above the quota).'),
  })
  .strict()
  .refine((p) => p.overageCap === undefined || p.quota === undefined || p.overageCap > p.quota, {
    message: 'must be greater than the quota (the cap is where calls past the quota stop)',
    path: ['overageCap'],
  })
  .refine((p) => p.burst === undefined || refillSeconds(p.burst, p.rate) <= MAX_REFILL_SECONDS, {
    message:
      'takes longer than 10 years to refill at the plan rate (burst / rate); the scripts keep key lifetimes in milliseconds below that',
    path: ['burst'],
  });

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
    docsUrl: HttpUrl.optional().describe('Documentation link used in 429 bodies.'),
  })
  .strict();

/** What keys an existing limiter counts on. */
const EXISTING_KEYS = ['ip', 'api-key', 'user', 'tenant', 'global', 'other'] as const;

/** How an existing limiter counts: what decides how much it lets through across its window's end. */
export const EXISTING_ALGORITHMS = ['fixed-window', 'sliding-window', 'token-bucket', 'leaky-bucket', 'unknown'] as const;

/** Where an existing limiter keeps its counts: in each application instance, or in one store they share. */
export const EXISTING_STORES = ['in-process', 'shared'] as const;

/** A rate limit the project already enforces (found by `init` or written by hand). */
export const ExistingLimiter = z
  .object({
    kind: z
      .string()
      .min(1)
      .max(80)
      .describe('What enforces it: express-rate-limit, rate-limiter-flexible, @fastify/rate-limit, nginx, envoy, kong, ...'),
    name: z.string().max(120).optional().describe('Its name where it has one: the variable, the nginx zone.'),
    source: z.string().max(300).optional().describe('Where it is configured, e.g. src/app.js:12 or nginx.conf:30.'),
    method: z.enum(METHODS).optional().describe('The method it applies to; absent: every method.'),
    path: Route.optional().describe('The route or path prefix it covers; absent: every route.'),
    match: z
      .enum(['exact', 'prefix', 'unknown'])
      .optional()
      .describe('exact: only this route; prefix (default): everything under it; unknown: some routes the scan could not name (see scope).'),
    scope: z.string().max(300).optional().describe('Where it applies, as found (e.g. "route login", "service orders").'),
    location: z.boolean().optional().describe('nginx: set inside a location block of its own (which hides server-level limit_req).'),
    keyedOn: z.enum(EXISTING_KEYS).optional().describe('What it counts per; absent: the client IP.'),
    limit: positiveNumber.describe('Requests admitted per window.'),
    windowSeconds: z
      .number()
      .min(0.001)
      .max(366 * 86400)
      .describe('The window (nginx: 1 for r/s, 60 for r/m).'),
    burst: z.number().int().min(0).max(MAX_COUNT).optional().describe('Extra requests admitted at once (nginx burst).'),
    store: z
      .enum(EXISTING_STORES)
      .optional()
      .describe(
        "Where it keeps its counts. in-process: in each application instance's memory (express-rate-limit's default MemoryStore, @fastify/rate-limit's default store, RateLimiterMemory), so every instance admits the limit on its own; shared: one store every instance uses (Redis, Memcached, a database). Absent: in-process for express-rate-limit, express-slow-down, hono-rate-limiter, @fastify/rate-limit and @nestjs/throttler (their default stores) and for RateLimiterMemory, else shared. Not read for nginx, which counts in each nginx node.",
      ),
    algorithm: z
      .enum(EXISTING_ALGORITHMS)
      .optional()
      .describe(
        'How it counts. fixed-window: a count reset at each window end (express-rate-limit, rate-limiter-flexible, @fastify/rate-limit, a Redis INCR and EXPIRE), which lets up to twice the limit through across a reset; sliding-window: the limit in any stretch of the window (@nestjs/throttler); token-bucket; leaky-bucket (nginx limit_req: the rate plus the burst); unknown. Absent: read from kind, else taken as fixed-window, the most permissive.',
      ),
  })
  .strict();

/** A directive the scanned nginx configuration already sets, which generated nginx may also set. */
export const ExistingNginxDirective = z
  .object({
    name: z.string().regex(/^[a-z_]{1,60}$/, 'must be an nginx directive name, e.g. real_ip_header'),
    value: z.string().max(300),
    context: z.enum(['main', 'http', 'server', 'location', 'other']),
    source: z.string().max(300).optional(),
  })
  .strict();

export const Existing = z
  .object({
    limiters: z.array(ExistingLimiter).max(200).optional(),
    nginx: z
      .array(ExistingNginxDirective)
      .max(200)
      .optional()
      .describe('Real-IP and limit_req settings of the scanned nginx configuration.'),
  })
  .strict();

/** Identity kinds an allow or deny entry can name (an address goes in cidrs). */
const ACCESS_IDENTITIES = ['api-key', 'user', 'tenant', 'session'] as const;
/** Identity kinds the application may supply through a function of its own. */
const CUSTOM_IDENTITIES = ['api-key', 'user', 'tenant', 'session', 'ip', 'username'] as const;
/** Rule tiers an allowlist can skip or a penalty box can follow. */
const ACCESS_TIERS = ['ceiling', 'security', 'fairness', 'quota'] as const;

/** One verified identity value: an API key id, user, tenant or session id, exactly as identify() returns it. */
const IdentityValue = z
  .object({
    kind: z.enum(ACCESS_IDENTITIES),
    value: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  })
  .strict();

const AccessRoute = z
  .object({
    method: z.enum(METHODS).default('ANY'),
    route: Route,
  })
  .strict();

export const Access = z
  .object({
    allow: z
      .object({
        cidrs: z.array(Cidr).max(200).optional().describe('Client addresses (after the trusted-proxy walk) that skip the rules.'),
        identities: z.array(IdentityValue).max(1000).optional().describe('Verified identities (from identify()) that skip the rules.'),
        routes: z.array(AccessRoute).max(200).optional().describe('Routes no rule of the listed tiers counts.'),
        tiers: z
          .array(z.enum(ACCESS_TIERS))
          .min(1)
          .optional()
          .describe(
            'The rule tiers an allowlisted request skips; default fairness and quota (the ceiling and the auth rows still count it).',
          ),
        reason: z.string().max(300).optional().describe('Why these callers are trusted (shown in the document).'),
      })
      .strict()
      .optional()
      .describe('Allowlist: requests that skip rules without a store call.'),
    deny: z
      .object({
        cidrs: z.array(Cidr).max(1000).optional().describe('Client addresses refused outright.'),
        identities: z.array(IdentityValue).max(1000).optional().describe('Verified identities refused outright.'),
        status: z
          .number()
          .int('must be a whole number')
          .min(400, 'must be a 4xx status, e.g. 403')
          .max(499, 'must be a 4xx status, e.g. 403')
          .optional()
          .describe('The status a denied request gets; default 403.'),
      })
      .strict()
      .optional()
      .describe('Deny list: requests refused before any rule, without touching the store.'),
    penalty: z
      .object({
        refusals: positiveInt.max(1000).describe('Refusals within the window that put the caller in the box.'),
        withinSeconds: positiveInt.max(86400).describe('The window the refusals are counted in.'),
        blockSeconds: positiveInt.max(7 * 86400).describe('How long the caller stays blocked.'),
        tiers: z
          .array(z.enum(ACCESS_TIERS))
          .min(1)
          .optional()
          .describe('The rule tiers whose refusals count and whose routes the box blocks; default security (the auth rows).'),
      })
      .strict()
      .optional()
      .describe('Penalty box: block a caller for a while after repeated refusals.'),
    customIdentities: z
      .array(
        z
          .object({
            kind: z.enum(CUSTOM_IDENTITIES),
            from: z.string().min(1).max(200).describe('Where your function reads it, e.g. "the tenant claim of the verified JWT".'),
          })
          .strict(),
      )
      .max(6)
      .optional()
      .describe('Identities the application computes with a function of its own (options.identities.<kind>).'),
  })
  .strict()
  .refine((a) => new Set((a.customIdentities ?? []).map((c) => c.kind)).size === (a.customIdentities ?? []).length, {
    message: 'names an identity kind twice; give each kind one function',
    path: ['customIdentities'],
  });

/** The API's own OpenAPI document, which `generate` writes its rate-limit overlay for. */
export const OpenApiSource = z
  .object({
    path: z
      .string()
      .min(1, 'must not be empty')
      .max(500, 'must be at most 500 characters')
      .regex(/\.(?:ya?ml|json)$/i, 'must name a .yaml, .yml or .json file, e.g. openapi.yaml')
      .describe(
        "The OpenAPI 3.x document (YAML or JSON), relative to this answers file's folder; the files it references by $ref are read too. It must stay inside that folder or the current one.",
      ),
  })
  .strict();

/** A hand-written rule: adds a matrix row, or overrides / removes a generated one with the same id. */
export const HandRule = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,79}$/, 'must be lowercase letters, digits and dashes, e.g. search-per-tenant')
      .describe(
        "A generated row's id overrides that row (a row split by fail mode by its base id too); any other id adds a row. An edge row's <id>-cost-<n> split, which follows <id> and the endpoints' costs, cannot be named.",
      ),
    remove: z.boolean().optional().describe('Drop the generated row with this id (one the design generates).'),
    description: z.string().max(300).optional(),
    endpointClass: z.union([EndpointClass, z.literal('all')]).optional(),
    endpoints: z.array(name).optional(),
    identity: z.enum(RULE_IDENTITIES).optional(),
    algorithm: z.enum(ALGORITHMS).optional(),
    primitive: z.enum(PRIMITIVES).optional(),
    key: z
      .string()
      .min(1)
      .max(200)
      .regex(
        /^[^~]*$/,
        "must not contain '~': the middleware marks the key of a caller counted by another identity with it (rl:{u~ak:<api-key-id>})",
      )
      .optional()
      .describe(
        "The Redis key pattern, e.g. {u:<user-id>}:search. Label the identity slot (u:, ak:, t:, s:, ip:) as the design's keys do: a key that can name the same Redis key as another rule's (another identity's, or the same key under another script or other numbers) is refused.",
      ),
    rate: Rate.optional(),
    burst: positiveInt.optional(),
    cost: positiveInt.optional(),
    failMode: FailMode.optional(),
    layer: z
      .enum(LAYERS)
      .optional()
      .describe(
        'Where the row is counted: edge (the gateway in stack.gateway), middleware (the application; a row moved there from the edge takes the store primitive and key pattern the design gives the middleware, unless the entry names them), or outbound-client (only the outbound rows, one per outbound provider).',
      ),
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
    project: z
      .object({ name: name.optional(), description: z.string().max(500).optional() })
      .strict()
      .optional(),
    output: Output.optional(),
    goals: z.array(Goal).optional().describe('What the limiter protects against.'),
    stack: Stack.optional(),
    identities: z.array(Identity).optional(),
    endpoints: z.array(Endpoint).optional(),
    traffic: Traffic.optional(),
    plans: z.array(Plan).optional(),
    quotas: Quotas.optional(),
    failure: z
      .object({
        byClass: z.partialRecord(EndpointClass, FailMode).optional(),
        fallback: z
          .enum(['memory', 'none'])
          .optional()
          .describe(
            "While the store is down, fail-open rules count in each instance's memory (memory) instead of admitting unchecked (none, the default).",
          ),
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
    access: Access.optional().describe('Allowlist, deny list, penalty box and custom identities.'),
    existing: Existing.optional().describe('Rate limiters and proxy settings already in place, which the design replaces.'),
    openapi: OpenApiSource.optional().describe(
      "The API's OpenAPI document: generate writes an overlay adding each operation's rate-limit responses and headers.",
    ),
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
export type EndpointClassT = z.infer<typeof EndpointClass>;
export type FailModeT = z.infer<typeof FailMode>;
export type QuotaResetT = z.infer<typeof QuotaReset>;
export type ExistingLimiterT = z.infer<typeof ExistingLimiter>;
export type ExistingNginxDirectiveT = z.infer<typeof ExistingNginxDirective>;

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

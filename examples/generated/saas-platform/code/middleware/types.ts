// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The types of the rate-limit runtime: what a design holds (rules, routes, scripts, the
 * response contract, metric names) and what the limiter takes and returns.
 */
import type { Registry } from 'prom-client';

export type RuleMode = 'enforce' | 'shadow' | 'off';
export type HeaderConvention = 'ietf-structured' | 'ietf-trio' | 'x-ratelimit';
export type ScriptName = 'gcra' | 'sliding-window-log' | 'fixed-window' | 'identity-limits' | 'penalty';
export type IdentityKind = 'global' | 'api-key' | 'user' | 'tenant' | 'session' | 'ip' | 'username';
export type RuleTier = 'ceiling' | 'security' | 'fairness' | 'quota';

export interface RouteSpec {
  readonly method: string;
  readonly route: string;
  /** The design endpoint this route belongs to (its name picks the weighted cost). */
  readonly endpoint: string | null;
  /** Exempt endpoints (health checks) are never limited. */
  readonly exempt: boolean;
  /**
   * The endpoint allows anonymous callers: a rule keyed on an account identity (API key, user,
   * tenant, session) does not count a caller that has none by its address here, as it does
   * elsewhere; the per-IP row for anonymous traffic counts such callers. Absent: false.
   */
  readonly anonymous?: boolean;
}

export interface RuleSpec {
  readonly id: string;
  readonly title: string;
  readonly tier: RuleTier;
  readonly identity: IdentityKind;
  /** Only requests of this plan are checked by the rule (null: every plan). */
  readonly plan: string | null;
  readonly script: ScriptName;
  /** redis: the Lua script; memory: the same algorithm in this process (no shared store). */
  readonly store: 'redis' | 'memory';
  /** Key pattern after the key prefix; <...> placeholders are filled per request. */
  readonly key: string;
  /**
   * The rule's field in its identity's hash (key is then the hash's pattern, e.g. {t:<tenant-id>}):
   * every limit the design keeps there is checked by identity-limits, in one call per identity.
   * Null: the rule keeps a key of its own.
   */
  readonly field: string | null;
  /** Indexes into the design's routes. */
  readonly routes: readonly number[];
  readonly limit: number;
  readonly periodSeconds: number;
  readonly burst: number | null;
  readonly costDefault: number;
  readonly costByEndpoint: readonly (readonly [string, number])[];
  readonly failMode: 'open' | 'closed';
  readonly headers: 'full' | 'silent';
  readonly errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
  /** Kill-switch feature flag name, handed to the mode() hook. */
  readonly flag: string | null;
  readonly window: 'calendar' | 'rolling' | 'fixed' | null;
  /** The plan quota when the hard stop (`limit`) sits above it (soft overage): stated in the 429 body and Quota-Exceeded. */
  readonly quota: number | null;
  readonly hybrid: boolean;
}

export interface ScriptSpec {
  readonly name: ScriptName;
  readonly file: string;
  readonly sha1: string;
  readonly source: string;
}

export type QuotaPeriod =
  | { readonly kind: 'calendar'; readonly period: 'day' | 'month'; readonly timeZone: string }
  | { readonly kind: 'rolling'; readonly days: number };

export interface HybridSpec {
  readonly localBurst: number;
  readonly instances: number;
  readonly overAdmission: number;
}

/** An identity value an allow or deny entry names, compared with what identify() returns. */
export interface AccessIdentitySpec {
  readonly kind: 'api-key' | 'user' | 'tenant' | 'session';
  readonly value: string;
}

/** Identity kinds the application may compute with its own function (options.identities). */
export type CustomIdentityKind = 'api-key' | 'user' | 'tenant' | 'session' | 'ip' | 'username';

/**
 * Who skips rules, who is refused outright, who is blocked after repeated refusals, which
 * identities come from the application's own functions, and whether fail-open rules count in
 * memory while the store is down. Checked before any store call (access.ts, penalty.ts).
 */
export interface AccessSpec {
  /** Allowlist: matching requests skip the rules of these tiers. */
  readonly allow: {
    readonly cidrs: readonly string[];
    readonly identities: readonly AccessIdentitySpec[];
    /** Method and route patterns, as in RouteSpec. */
    readonly routes: readonly { readonly method: string; readonly route: string }[];
    readonly tiers: readonly RuleTier[];
  } | null;
  /** Deny list: matching requests get this status before any rule. */
  readonly deny: {
    readonly cidrs: readonly string[];
    readonly identities: readonly AccessIdentitySpec[];
    readonly status: number;
  } | null;
  /** Penalty box: refusals by rules of these tiers counted per caller; at refusals within withinSeconds, blocked blockSeconds. */
  readonly penalty: {
    readonly tiers: readonly RuleTier[];
    readonly refusals: number;
    readonly withinSeconds: number;
    readonly blockSeconds: number;
  } | null;
  /** The identity kinds the options must supply a function for (options.identities). */
  readonly customIdentities: readonly CustomIdentityKind[];
  /** Fail-open rules count in this process's memory while the store is down. */
  readonly memoryFallback: boolean;
}

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
}

/**
 * What the application knows about the caller, from the identify() hook. Return only
 * what your authentication has VERIFIED: an API key id from a key you looked up, the
 * user and tenant of a valid session or token. Never pass raw client-supplied header
 * values here: anyone could rotate them to get fresh buckets.
 */
export interface RequestIdentity {
  /** Id of the authenticated API key (an id, not the secret). */
  readonly apiKey?: string | undefined;
  readonly userId?: string | undefined;
  readonly tenantId?: string | undefined;
  readonly sessionId?: string | undefined;
  /** The caller's plan name, exactly as in the design (plan rules only check their plan). */
  readonly plan?: string | undefined;
  /**
   * Auth endpoints: the account name being tried (login name, e-mail, client id). Stored
   * only as sha256 of its trimmed, NFKC-normalised, lower-cased form. When identify()
   * leaves it out, it is read from the parsed body (username, email, login, client_id:
   * USERNAME_FIELDS in account-name.ts), else from an HTTP Basic Authorization header (its
   * user-id: the client_id of an OAuth client authenticating to a token endpoint);
   * return it here when your form names the field otherwise. Steps that carry no account
   * name (MFA code, reset confirmation) are keyed on userId, else sessionId: return the
   * account or the pending sign-in's session for them. With none of these, only the per-IP
   * row of the flow applies.
   */
  readonly username?: string | undefined;
}

/**
 * The two commands the middleware needs. An ioredis Redis or Cluster client fits as it is.
 * Recommended ioredis options: enableAutoPipelining: true (the decisions of one event-loop
 * turn go out in one write; see bench/middleware in rl-design for what it saves) and
 * enableOfflineQueue: false (calls fail at once while the store is down, instead of
 * queueing until the timeout).
 */
export interface RedisClientLike {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /**
   * ioredis's variants that leave the reply undecoded. The scripts reply with integers only,
   * so the reply is the same, without the pass that copies it to turn bulk strings into
   * text; used when the client has them.
   */
  evalshaBuffer?(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalBuffer?(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface LimiterOptions<TReq> {
  /** Required when any rule keeps its state in Redis (ioredis Redis or Cluster). */
  readonly redis?: RedisClientLike | undefined;
  /**
   * Who is calling. Resolution order for a rule keyed on a client identity:
   * the rule's own identity if known, else API key > user > tenant > session > client IP
   * (never the client IP for a quota, nor on a route that allows anonymous callers).
   */
  readonly identify?: ((req: TReq) => RequestIdentity | undefined | Promise<RequestIdentity | undefined>) | undefined;
  /**
   * Per-rule kill switch / rollout flag: 'enforce', 'shadow' (evaluate and record, never
   * reject) or 'off' (skip). Called on every request with the rule id and its flag name
   * (e.g. ratelimit.<rule>.mode); return undefined to use defaultMode.
   */
  readonly mode?: ((ruleId: string, flag: string | null) => RuleMode | undefined) | undefined;
  /** Mode of a rule the mode() hook says nothing about. Default: the design's defaultMode (its rollout). */
  readonly defaultMode?: RuleMode | undefined;
  /** CIDRs of proxies you run. Default: the design's trustedProxies. */
  readonly trustedProxies?: readonly string[] | undefined;
  /** Replaces the trusted-hop walk entirely (e.g. a header your own edge sets and clients can not). */
  readonly clientIp?: ((req: TReq) => string | undefined) | undefined;
  /** IPv6 clients are keyed per network of this length (default 64: one customer's subnet). */
  readonly ipv6PrefixLength?: number | undefined;
  /** First segment of every key the middleware writes (default 'rl'). */
  readonly keyPrefix?: string | undefined;
  /** Per store call; a slower store counts as failed (default 50 ms). */
  readonly timeoutMs?: number | undefined;
  /**
   * prom-client registry (default: prom-client's global one); null turns metrics off.
   * Counts and the latency histogram are kept in plain fields on the request path and
   * handed to prom-client when it collects them (every scrape, or metric.get()), which
   * keeps label validation and hashing off the hot path. The latency histogram is this
   * module's own metric object, registered in the registry like any prom-client metric.
   */
  readonly registry?: Registry | null | undefined;
  /** Plan of callers whose identity names none (default: the design's defaultPlan). */
  readonly defaultPlan?: string | undefined;
  /** The in-process bucket in front of Redis, when the design has one (default true). */
  readonly hybrid?: boolean | undefined;
  /** Clock for calendar quota periods (epoch ms; default Date.now). */
  readonly now?: (() => number) | undefined;
  /** Told about every failed store call (the request is then handled by the rule's fail mode). */
  readonly onStoreError?: ((error: unknown, ruleIds: readonly string[]) => void) | undefined;
  /**
   * Your own function per identity kind: its answer replaces what identify() gives for that
   * kind (ip: the client address, replacing the trusted-proxy walk). Required for every kind
   * the design lists in DESIGN.access.customIdentities. Return only verified values.
   */
  readonly identities?: { readonly [K in CustomIdentityKind]?: ((req: TReq) => string | undefined) | undefined } | undefined;
}

export interface LimiterInput<TReq> {
  readonly method: string;
  /** Path and query as received (origin-form), e.g. /v1/orders/42?x=1. */
  readonly url: string;
  /** The TCP peer address. */
  readonly remoteAddress: string | undefined;
  /** X-Forwarded-For as received (used only when the TCP peer is a trusted proxy). */
  readonly forwardedFor: string | readonly string[] | undefined;
  readonly req: TReq;
  /**
   * The parsed request body, for frameworks that keep it elsewhere than req.body (Koa's
   * ctx.request.body): auth rules read the account name from it when identify() gives none.
   */
  readonly body?: unknown;
  /**
   * The request's headers, passed as they are (no header is read for it): auth rules read the
   * Authorization header only when neither identify() nor the body names the account, and
   * take the user-id of an HTTP Basic header (an OAuth client's client_id, RFC 6749 2.3.1).
   */
  readonly headers?: RequestHeaders | undefined;
}

/** A request's headers: Node's (IncomingHttpHeaders, lower-case names) or a fetch Headers. */
export type RequestHeaders = { readonly [name: string]: string | readonly string[] | undefined } | { get(name: string): string | null };

export interface RuleOutcome {
  readonly ruleId: string;
  readonly mode: 'enforce' | 'shadow';
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  /**
   * store: decided by the store; local: by the in-process bucket; store-failed: fail mode
   * applied; fallback: the store failed and the rule counted in this process's memory.
   */
  readonly source: 'store' | 'local' | 'store-failed' | 'fallback';
}

export interface Decision {
  /** 200 goes on; 429 refused by a rule or the penalty box; 503 store down (fail closed); 4xx deny list. */
  readonly status: number;
  /** Set these on the response, whatever the status. */
  readonly headers: readonly (readonly [string, string])[];
  /** problem+json body for a 429 or 503; null when the request goes on. */
  readonly body: string | null;
  readonly contentType: string | null;
  /** The rule that rejected the request (429) or whose store failed closed (503). */
  readonly ruleId: string | null;
  readonly exempt: boolean;
  readonly outcomes: readonly RuleOutcome[];
  /** Decided by the access lists: allowlisted (some rules skipped), denied, or in the penalty box. */
  readonly access?: 'allowed' | 'denied' | 'penalty-box' | undefined;
}

/** Who hears a request's decision from decide(): exactly one of the two, once. */
export interface DecisionSink {
  decided(decision: Decision): void;
  failed(error: unknown): void;
}

export interface RateLimiter<TReq> {
  check(input: LimiterInput<TReq>): Promise<Decision>;
  /**
   * check() for adapters whose framework takes a callback (Express's next): the decision goes
   * to the sink with no promise in between. It may arrive before decide() returns (an exempt
   * route, in-process state). A sink that throws is not called again.
   */
  decide(input: LimiterInput<TReq>, sink: DecisionSink): void;
  /**
   * Whether a rule of this route keys on the account name (an auth row), which check() takes from
   * identify()'s username, else from the parsed body, else from an HTTP Basic Authorization
   * header: an adapter whose framework parses bodies lazily reads the body for these routes only.
   */
  needsUsername(method: string, url: string): boolean;
  /** The client address the limiter keys on, for a peer address and X-Forwarded-For. */
  clientIp(remoteAddress: string | undefined, forwardedFor: string | readonly string[] | undefined): string;
  readonly rules: readonly RuleSpec[];
  /** Forgets in-process state and stops its timers. */
  close(): void;
}

/**
 * The metrics the limiter exports, under the design's names (quotaExhausted: null without
 * quotas; access: null without an allowlist, deny list or penalty box).
 */
export interface MetricNames {
  readonly decisions: MetricSpec;
  readonly throttled: MetricSpec;
  readonly latency: MetricSpec;
  readonly failures: MetricSpec;
  readonly failOpen: MetricSpec;
  readonly nearLimit: MetricSpec;
  readonly quotaExhausted: MetricSpec | null;
  /** Requests the access lists decided or let skip rules, by outcome (denied, penalty_box, allowlisted). */
  readonly access?: MetricSpec | null | undefined;
}

/**
 * One design, as data: the generated design.ts exports it as DESIGN. Everything the limiter
 * knows about the design comes from here; nothing else in the runtime differs between designs.
 */
export interface DesignData {
  /** The project the design was made for. */
  readonly project: string;
  /** The one header convention of the response contract (on every response but silent ones). */
  readonly headerConvention: HeaderConvention;
  /** Documentation link in every 429 and 503 body. */
  readonly docsUrl: string;
  /** Proxies we run: X-Forwarded-For is only read when the TCP peer is one of them. */
  readonly trustedProxies: readonly string[];
  /** The mode of every rule the mode() hook says nothing about (the rollout starts in shadow). */
  readonly defaultMode: RuleMode;
  /** Retry-After on the 503 a fail-closed rule answers while the store is unavailable. */
  readonly storeUnavailableRetryAfterSeconds: number;
  /** The plan quotas' period (null: no plan quotas). */
  readonly quotaPeriod: QuotaPeriod | null;
  /** The in-process bucket in front of Redis (null: every decision is the store's). */
  readonly hybrid: HybridSpec | null;
  readonly metrics: MetricNames;
  /** Plan names, as in the design. */
  readonly plans: readonly string[];
  /** Plan of callers whose identity names none. */
  readonly defaultPlan: string | null;
  /** The Lua scripts (exact bytes of lua/) and the SHA1 EVALSHA calls them by. */
  readonly scripts: readonly ScriptSpec[];
  /** Routes of the design: endpoints (weighted costs, exemptions) and the routes rules name. */
  readonly routes: readonly RouteSpec[];
  /** The rules this middleware enforces, in evaluation order. */
  readonly rules: readonly RuleSpec[];
  /** Allowlist, deny list, penalty box, custom identities, memory fallback (absent: none of them). */
  readonly access?: AccessSpec | undefined;
}

/**
 * The Design: plain, read-only data produced by design/build.ts from the Answers.
 * Renderers, constraint checks, code generators and verify read only this.
 *
 * Fields a hand-written rule may leave out are optional here on purpose: the
 * constraint checks must be able to see a design that is incomplete.
 */
import type {
  ALGORITHMS,
  BURSTINESS,
  ENDPOINT_CLASSES,
  EXHAUSTION,
  FRAMEWORKS,
  GATEWAYS,
  GOALS,
  HEADER_CONVENTIONS,
  IDENTITIES,
  LAYERS,
  PRIMITIVES,
  RULE_IDENTITIES,
  STORES,
  AUTH_KINDS,
} from '../answers/schema.js';

export type Algorithm = (typeof ALGORITHMS)[number];
export type Layer = (typeof LAYERS)[number];
export type Primitive = (typeof PRIMITIVES)[number];

/**
 * Whether the rule keeps its state in the shared store (so a store outage meets its fail mode):
 * a middleware rule, unless its counters live in each process or in the gateway.
 */
export function keepsStateInStore(rule: Pick<MatrixRule, 'layer' | 'primitive'>): boolean {
  return rule.layer === 'middleware' && rule.primitive !== 'in-process' && rule.primitive !== 'gateway-native';
}

/**
 * Whether the rule is an outbound bucket kept in the process (outbound/client.ts, no store): one
 * entry of the client's own Map per provider, kept while the client lives and never dropped, so
 * it has no TTL; the number of providers bounds it, not time.
 */
export function inProcessOutbound(rule: Pick<MatrixRule, 'layer' | 'primitive'>): boolean {
  return rule.layer === 'outbound-client' && rule.primitive === 'in-process';
}
export type RuleIdentity = (typeof RULE_IDENTITIES)[number];
export type EndpointClass = (typeof ENDPOINT_CLASSES)[number];
export type Goal = (typeof GOALS)[number];
export type Gateway = (typeof GATEWAYS)[number];
export type Store = (typeof STORES)[number];
export type Framework = (typeof FRAMEWORKS)[number];
export type IdentityKind = (typeof IDENTITIES)[number];
export type HeaderConvention = (typeof HEADER_CONVENTIONS)[number];
export type Exhaustion = (typeof EXHAUSTION)[number];
export type Burstiness = (typeof BURSTINESS)[number];
export type AuthKind = (typeof AUTH_KINDS)[number];
export type FailMode = 'open' | 'closed';

/** What a rule is for; the matrix keeps these layers apart. */
export type RuleTier = 'ceiling' | 'fairness' | 'security' | 'quota' | 'outbound';

export interface Assumption {
  /** Stable id, e.g. `traffic.peakRps`. */
  id: string;
  /** The answers field the assumption stands in for (JSON path). */
  field: string;
  /** Plain sentence: what was assumed and why. */
  text: string;
  /** The matrix rules whose numbers or behaviour rest on this assumption (filled by the builder). */
  ruleIds?: string[];
}

export interface ResolvedEndpoint {
  name: string;
  method: string;
  route: string;
  class: EndpointClass;
  authKind?: AuthKind;
  anonymous: boolean;
  /** Tokens one call takes from the shared bucket. */
  cost: number;
  /** Fields the answers did not give, filled by a default (each has a line in the assumptions). */
  assumed?: ('anonymous' | 'authKind' | 'cost')[];
}

export interface ResolvedPlan {
  name: string;
  /** Promised requests per second, normalised. */
  ratePerSecond: number;
  /** The promised rate as stated. */
  rate: { requests: number; periodSeconds: number };
  /** As the user stated it, e.g. "600/minute". */
  rateText: string;
  burst: number;
  quota?: number;
  /** Plans without a quota have nothing to exhaust: 'hard' is a placeholder there, never shown. */
  exhaustion: Exhaustion;
  /** The stated count where a soft or pay-per-overage plan is refused after all. */
  overageCap?: number;
  /** Fields the answers did not give, filled by a default (each has a line in the assumptions). */
  assumed?: ('burst' | 'exhaustion' | 'overageCap')[];
}

export interface ResolvedProvider {
  name: string;
  limitPerSecond: number;
  limit: { requests: number; periodSeconds: number };
  limitText: string;
  safetyFraction: number;
  /** Effective rate our shared bucket admits (limit x fraction). */
  bucketPerSecond: number;
  burst: number;
  bucket: 'shared' | 'per-instance';
  /** Fields the answers did not give, filled by a default (each has a line in the assumptions). */
  assumed?: ('burst' | 'safetyFraction')[];
}

/** The context section: answers after defaults, each unknown replaced by an assumption. */
export interface Scope {
  projectName: string;
  description?: string;
  goals: Goal[];
  language: string;
  framework: Framework;
  topology: 'single' | 'horizontal';
  instances: number;
  gateway: Gateway;
  /** Gateway nodes that each keep their own counters, when the answers give them (stack.gatewayNodes). */
  gatewayNodes?: number;
  /**
   * Envoy: the rules counted by the rate limit service whose answers ask them to fail closed.
   * Envoy's rate limit filter has one failure_mode_deny for all of them: true when any does (the
   * strictest asked for), and the open ones then fail closed too. Absent or empty: false.
   */
  envoyDenyRules?: string[];
  store: Store;
  trustedProxies: string[];
  identities: IdentityKind[];
  endpoints: ResolvedEndpoint[];
  traffic: {
    typicalRps: number;
    peakRps: number;
    capacityRps?: number;
    headroom: number;
    burstiness: Burstiness;
    burstSources: string[];
    distinctClients: number;
    distinctTenants: number;
    distinctUsers: number;
    /** Requests per second one client sends at its busiest (stated or assumed). */
    clientPeakRps: number;
    /** Clients active at once behind one address (stated or assumed). */
    clientsPerAddress: number;
  };
  plans: ResolvedPlan[];
  failureByClass: Record<EndpointClass, FailMode>;
  outbound: ResolvedProvider[];
}

export interface MatrixRule {
  /** Stable kebab id, e.g. `auth-login-per-ip`. */
  id: string;
  source: 'generated' | 'hand-written' | 'overridden';
  tier: RuleTier;
  title: string;
  /** Endpoint class the rule covers, or 'all'. */
  endpointClass: EndpointClass | 'all';
  /** Names of endpoints the rule applies to (empty = every endpoint of the class). */
  endpoints: string[];
  /** Method + route of those endpoints, for matching in middleware and gateways. */
  routes: { method: string; route: string }[];
  identity?: RuleIdentity;
  plan?: string;
  algorithm?: Algorithm;
  /** The atomic check-and-consume primitive. */
  primitive?: Primitive;
  /** Key pattern, with a Redis Cluster hash tag, e.g. `rl:{t:<tenant>}:api`. */
  key?: string;
  /**
   * When the design keeps this rule's state in its identity's hash (identity-limits.lua), its
   * field there; key is then the hash's pattern (the prefix and the hash tag, `rl:{t:<tenant>}`).
   */
  field?: string;
  /** Sustained rate, as requests (tokens) per period. */
  rate?: { requests: number; periodSeconds: number; periodText?: string };
  /**
   * Quota rules whose plan lets calls pass past the quota (soft-warning, pay-per-overage): the
   * plan's quota, while rate.requests is the backstop where the limiter refuses. Absent when
   * the quota is a hard stop (rate.requests is the quota itself).
   */
  quotaBackstop?: { quota: number; factor: number; assumed: boolean };
  /** Bucket capacity; null when the algorithm has no burst (windows). */
  burst?: number | null;
  /**
   * An edge rule of no identity (the ceiling) counted in each gateway node, when the answers give
   * the node count K (stack.gatewayNodes): what each node's file configures, the stated rate and
   * burst divided by K (rounded down, at least what one node needs to admit one request). The
   * rule's own rate and burst stay the fleet-wide promise.
   */
  perNode?: { nodes: number; rate: { requests: number; periodSeconds: number }; burst: number | null };
  /** Default cost per request, plus per-endpoint weights against this bucket. */
  cost?: { default: number; byEndpoint: { endpoint: string; cost: number }[] };
  /**
   * An edge rule for endpoints that cost more than 1 unit a call. A gateway counts requests, not
   * cost, so the rule counts requests (cost 1) at the rate and burst of `of` (in units) divided by
   * `units`, rounded down: it never admits more units than `of` states. `of` is the rule the
   * endpoints belong to (this rule's own id when it kept them all).
   */
  edgeCost?: { units: number; of: string; unitRate: { requests: number; periodSeconds: number }; unitBurst: number | null };
  /**
   * An edge rule whose gateway's window admits more than the rule states: the rate before the
   * product's window was fitted, the window's requests and period, how many times what the rule
   * states its file would admit (windowLaxerBy: over time, or within one of the rule's periods
   * when the window is longer), how many times over time alone (overTimeRatio: a rate slower than
   * the gateway counts, such as nginx's 1 per minute for 5 per hour) and why. edgeRateProblems
   * refuses a rules entry's rate by `times`, a rule the design derives by `overTime` (a fast rate
   * in a product's longer window is how that product counts, and the matrix states it).
   */
  edgeLaxer?: {
    stated: { requests: number; periodSeconds: number };
    shipped: { requests: number; periodSeconds: number };
    times: number;
    overTime: number;
    fitted?: string;
  };
  failMode?: FailMode;
  layer?: Layer;
  /** Idle key lifetime; every key the rule writes carries it. */
  ttlSeconds?: number;
  /**
   * How many keys the rule can hold at once, and why. `byTraffic`: the bound is the global
   * ceiling x the TTL (the client chooses the key, or there are more identities than the
   * ceiling can keep live); such rules share the ceiling (see Monitoring.store.sharedCeiling).
   */
  cardinality?: { bound?: number; basis: string; byTraffic?: boolean };
  /**
   * Estimated bytes per key in the store (used for the memory estimate): the measured size of
   * the rule's data structure plus what its longest key name (keyChars) adds.
   */
  bytesPerKey?: number;
  /** Characters of the longest key the rule writes (its pattern with every placeholder at its longest). */
  keyChars?: number;
  /**
   * full: headers on every response; silent: security rule, no counts; edge: enforced only by
   * the gateway, whose 429 carries Retry-After and a problem body but no rate-limit headers;
   * none: not client-facing (outbound).
   */
  headers: 'full' | 'silent' | 'edge' | 'none';
  errorCode: 'RATE_LIMITED' | 'QUOTA_EXCEEDED';
  killSwitch?: { flag: string };
  rationale: string;
  /**
   * An edge rule its gateway does not count on some of its endpoints (Kong: another rule, keyed
   * on something else, holds the route's one rate-limiting instance): those endpoints (method
   * and route), whether that is all of them (the rule is enforced nowhere), and the sentence
   * saying so.
   */
  notEnforced?: { routes: string[]; all: boolean; text: string };
  /** How the rule's numbers follow from the answers, in one line (e.g. "100 req/s = 2 req/s per client x 50 clients per address"). */
  derivation?: string;
  /** The answers fields the rule's numbers are derived from (matched against Assumption.field). */
  inputs?: string[];
  /** The existing limiter (its name as the migration lists it) whose tighter limit this rule took over. */
  keptFrom?: string;
}

export interface AlgorithmDecision {
  /** Which class of limit the decision is for. */
  limitClass: RuleTier;
  algorithm: Algorithm;
  /** Shown instead of the algorithm's name when that alone would mislead. */
  label?: string;
  ruleIds: string[];
  why: string;
  tradeoff: string;
  alternatives: { algorithm: Algorithm; whyNot: string }[];
}

export interface LayerAssignment {
  layer: Layer;
  component: string;
  ruleIds: string[];
  why: string;
}

export interface Enforcement {
  /** The atomic primitive, named exactly. */
  primitive: string;
  atomicityNote: string;
  layers: LayerAssignment[];
  /** Rule ids counted at more than one layer (must be empty). */
  doubleCounted: string[];
  clientIp: {
    source: 'connection' | 'x-forwarded-for' | 'gateway-header';
    trustedProxies: string[];
    explanation: string;
  };
  hybrid?: {
    ruleIds: string[];
    localBurst: number;
    instances: number;
    /** N x localBurst: worst-case extra admissions across the fleet. */
    overAdmission: number;
    explanation: string;
  };
  /**
   * Fail-open rules that count in each instance's memory while the store is down, instead of
   * admitting unchecked: during an outage each instance counts on its own, so the fleet admits
   * up to instances x what one bucket admits per window (normalMost) for one identity.
   */
  fallback?: {
    ruleIds: string[];
    instances: number;
    rules: { ruleId: string; window: string; normalMost: number; outageMost: number }[];
    explanation: string;
  };
  /** The request path through each enforcing layer, when more than one layer enforces. */
  placementDiagram?: Diagram;
  /** Endpoints no rule limits (health checks), and why. */
  exempt: { endpoints: string[]; why: string };
  /** label: what the script does where an algorithm name would not say it (the penalty box). */
  scripts: { name: string; file: string; algorithm: Algorithm; label?: string; ruleIds: string[] }[];
  dualKeyAuth?: string;
}

/**
 * A diagram as data; render/diagrams turns it into Mermaid (the source of truth in
 * both output formats) and escapes every label there.
 */
export interface Diagram {
  kind: 'flowchart' | 'state' | 'sequence';
  direction?: 'LR' | 'TB';
  title: string;
  nodes: { id: string; label: string[]; shape: 'box' | 'round' | 'store' | 'state' | 'actor' }[];
  edges: { from: string; to: string; label?: string; dashed?: boolean }[];
}

export interface HeaderSpec {
  name: string;
  example: string;
  meaning: string;
}

/** The situation an example response shows, and its headers (the body is beside it in the contract). */
export interface ExampleResponse {
  ruleId: string;
  situation: string;
  status: 429;
  headers: { name: string; value: string }[];
}

export interface ResponseContract {
  convention: HeaderConvention;
  /** e.g. "draft-ietf-httpapi-ratelimit-headers-10". */
  specReference: string;
  headers: HeaderSpec[];
  /**
   * Extra header values on responses to calls a plan quota counts (never on silent rules): the
   * quota as a second policy (structured fields) or its own header trio, and the overage warning.
   */
  quotaHeaders: HeaderSpec[];
  /** clockGuidance: for client authors, why the wait is measured by the clock rather than trusted to one timer. */
  retryAfter: { onEvery429: boolean; unit: 'seconds'; jitterGuidance: string; clockGuidance: string };
  silentRuleIds: string[];
  /** Rules enforced only at the edge: their 429 carries Retry-After and the gateway's body, no rate-limit headers. */
  edgeRuleIds: string[];
  /** What the gateway's 429 body is ("problem+json (application/problem+json)", "Kong's own JSON ..."). */
  edgeRefusalBody: string;
  /** Endpoints only edge rules count: their responses carry no rate-limit headers at all. */
  edgeOnlyEndpoints: string[];
  /** Endpoints allowing anonymous callers where only edge rules count those: their responses carry no rate-limit headers. */
  edgeOnlyAnonymous?: string[];
  /** Exactly what the generated middleware sends for the example rule (same numbers as the example headers). */
  rateLimitedBody: Record<string, unknown>;
  rateLimitedExample?: ExampleResponse;
  quotaExceededBody?: Record<string, unknown>;
  quotaExceededExample?: ExampleResponse;
  /** A soft quota's refusal at its hard stop (when quotaExceeded shows another quota): both numbers in the body. */
  overageExceededBody?: Record<string, unknown>;
  overageExceededExample?: ExampleResponse;
  storeUnavailable: { status: 503; retryAfterSeconds: number };
  docsUrl: string;
  clientBehaviour: string[];
  /** A refused request, Retry-After with jitter, and the retry that passes (when a client-facing rule exists). */
  sequenceDiagram?: Diagram;
}

export interface QuotaDesign {
  reset:
    | { kind: 'calendar'; period: 'day' | 'month'; timeZone: string; description: string }
    | { kind: 'rolling'; days: number; description: string };
  plans: { name: string; quota: number; exhaustion: Exhaustion; ruleId: string }[];
  exhaustionText: Record<Exhaustion, string>;
  /** Where invoices come from; `limiter-counters` breaks constraint 8. */
  billingSource: 'metering-system' | 'limiter-counters';
  separation: string;
  remainingExposure: string;
  /** Set when the quota counts live in the process (no store): they restart at 0 with it. */
  inProcess?: string;
}

export interface OutboundDesign {
  /** Where the buckets live (the shared store, or this process's memory): the section's first sentence. */
  intro: string;
  providers: (ResolvedProvider & { ruleId: string; key: string })[];
  on429: string[];
  circuit: { failureThreshold: number; windowSeconds: number; openSeconds: number; halfOpenProbes: number; description: string };
  /** States of the per-provider circuit. */
  circuitDiagram?: Diagram;
}

/**
 * What produces a metric: the generated middleware, the generated outbound client (through its
 * outboundMetrics adapter), the generated mtail program over nginx's error log, or
 * oliver006/redis_exporter scraping the limiter's store (job REDIS_EXPORTER_JOB), Envoy's own
 * stats (/stats/prometheus), or the Envoy rate limit service's stats (through statsd_exporter).
 */
export type MetricSource = 'middleware' | 'outbound-client' | 'nginx-log' | 'redis-exporter' | 'envoy' | 'envoy-ratelimit-service';

/** Sources that are not generated files: a program the design names and says how to scrape. */
export const EXTERNAL_METRIC_SOURCES: readonly MetricSource[] = ['redis-exporter', 'envoy', 'envoy-ratelimit-service'];

export interface MetricSpec {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  help: string;
  /** Who emits it (absent: the generated middleware). Every metric an alert reads is emitted by one of these. */
  emittedBy?: MetricSource[];
}

export interface AlertSpec {
  name: string;
  metric: string;
  condition: string;
  /** PromQL expression. */
  expr: string;
  for: string;
  severity: 'page' | 'ticket';
  why: string;
}

export interface Monitoring {
  metrics: MetricSpec[];
  alerts: AlertSpec[];
  store: {
    dedicated: true;
    maxmemoryPolicy: 'noeviction';
    /** Upper bound of live keys and of their memory, all rules in the store together. */
    estimatedKeys: number;
    estimatedBytes: number;
    /**
     * The rules bounded by the ceiling (cardinality.byTraffic), when there are several: a
     * request adds at most one key to each rule it matches, so together they hold at most what
     * the ceiling's traffic makes on the endpoint whose rules keep keys longest, less than the
     * sum of their rows. estimatedKeys and estimatedBytes count them this way.
     */
    sharedCeiling?: {
      rules: string[];
      rowKeys: number;
      keys: number;
      bytes: number;
      /** The endpoint all traffic goes to in the worst case, when one does (else the worst is a mix). */
      endpoint?: string;
      /** The penalty box's keys share the traffic too (a refusal writes no key of the rule that refused). */
      penalty?: true;
    };
    /**
     * The hashes that keep several rules of one identity as fields (identity-limits.lua): one row
     * each in the memory table, in place of its rules' rows, since the hash is one key per
     * identity whatever rules and plan it serves; the bound in one line (text).
     */
    hashes?: { key: string; ruleIds: string[]; keys: number; keyChars: number; bytesPerKey: number; text: string }[];
    /** Rules whose keys another rule's row counts: the same key pattern, one key per identity between them. */
    sameKey?: { ruleId: string; keptWith: string }[];
    /**
     * The penalty box's refusal counters and boxes in the store (in estimatedKeys and
     * estimatedBytes): a row per key kind, as the memory table shows it, and the bound in one line.
     */
    penalty?: {
      keys: number;
      bytes: number;
      rows: { key: string; keys: number; keyChars: number; bytesPerKey: number }[];
      text: string;
    };
    recommendation: string;
    /**
     * The Redis of Envoy's rate limit service (envoyproxy/ratelimit), which keeps the per-client
     * edge rules' counts: not the design's store, so not in its estimate or its alerts; its
     * bound and what to run and watch, in one paragraph (absent when no rule counts there).
     */
    edgeServiceRedis?: string;
    /** maxmemory for redis.conf: the memory bound with headroom (absent without a shared store). */
    maxmemoryBytes?: number;
    /** What maxmemory is made of, and what happens when it is reached. */
    memoryText?: string;
    /** aof: quota counters live in the store, so it must survive a restart; optional otherwise. */
    persistence?: { mode: 'aof-everysec' | 'optional'; text: string };
    /** The redis.conf lines for the limiter's store (absent without a shared store). */
    config?: string;
    /** How the store's keys and memory reach Prometheus (redis_exporter), and its scrape job. */
    exporter?: { job: string; text: string; scrapeConfig: string };
  };
  /**
   * Edge rules and where their refusals are counted: by the generated mtail program over nginx's
   * error log (into ratelimit_throttled_total), or by the gateway's own telemetry, which the
   * alert rules here do not read (text says what to wire).
   */
  edge?: { ruleIds: string[]; countedBy: 'nginx-log' | 'gateway'; text: string };
  /**
   * When no rule keeps its state in a store: the store metrics the table leaves out, which the
   * shipped code still exports, at 0 for good (one paragraph).
   */
  storeMetricsLeftOut?: string;
  latencyBudgetMs: { p99: number };
}

interface RolloutStep {
  order: number;
  title: string;
  detail: string;
  ruleIds: string[];
}

export interface Rollout {
  startsInShadow: boolean;
  shadowDays: number;
  /**
   * Edge rules the generated gateway configuration enforces from its first deploy (the gateway
   * has no report-only mode the generated file uses), with why: the shadow period does not cover them.
   */
  edgeEnforcing?: { ruleIds: string[]; why: string };
  steps: RolloutStep[];
  /** how: what turning the rule off takes, as the generated artefact that enforces it allows. */
  killSwitches: { ruleId: string; flag: string; how?: string }[];
}

/** How an endpoint class behaves when the limiter's store is unreachable. */
export interface ClassFailMode {
  endpointClass: EndpointClass;
  /** What the answers (or the default) say for the class. */
  answered: FailMode;
  /** What the rules covering the class's endpoints do together: closed when any of them fails closed. */
  effective: FailMode;
  /** The store-backed rules covering the class, with their own fail modes. */
  rules: { id: string; failMode: FailMode }[];
}

/**
 * The separate counters one key of an old limiter meets, each admitting its limit on its own
 * (existingCounters in migration.ts):
 * - an nginx limit_req counts in each nginx node: the design's nginx nodes (stack.gatewayNodes,
 *   else assumed as the worst-case table assumes them); when the design's gateway is not nginx
 *   the answers give no count of them, and one node is counted (`known` false, said so in the text);
 * - a limiter with an in-process store counts in each application instance: stack.instances.
 */
export interface ExistingCounters {
  k: number;
  unit: 'nginx node' | 'instance';
  /** Whether the answers give k (stack.gatewayNodes for nginx). */
  stated: boolean;
  /** false: an nginx limiter whose node count nothing in the answers gives (counted as one). */
  known: boolean;
  /** An in-process store read from the library's default, not stated in the answers. */
  storeAssumed?: boolean;
}

/** One existing limiter on one route, set beside the new rules on that route. */
export interface MigrationItem {
  /** e.g. "express-rate-limit loginLimiter (src/app.js:14)". */
  existing: string;
  kind: string;
  source?: string;
  /** What the limiter covers, in words ("POST /api/login", "every route under /api/"). */
  covers: string;
  /** The design endpoint this row is about (absent: the limiter covers no endpoint of the design). */
  endpoint?: { name: string; method: string; route: string };
  keyedOn: string;
  /** Its limit as written: "5 per 1 min", "20r/s, burst 40". */
  limitText: string;
  /** How it counts, in words: "fixed window", "leaky bucket", "fixed window (assumed)" when neither the answers nor its kind say. */
  algorithm: string;
  /** The new rules on the endpoint keyed on the same thing, with the most each admits within the old window. */
  replacements: { ruleId: string; limitText: string; withinWindow: number; nodes?: { k: number; each: number } }[];
  /** The most the old limiter admits within one of its own windows (limit + burst). */
  oldPerWindow: number;
  /**
   * The most the old limiter lets one key through within any stretch as long as its window, as it
   * counts: a fixed window twice its limit (plus burst) across a reset; a sliding window or a
   * bucket its limit plus burst.
   */
  oldWithinWindow: number;
  /**
   * An old limiter counted on K > 1 separate counters, each admitting on its own (an nginx
   * limit_req at each nginx node, an in-process store in each application instance): K, what one
   * admits and where (oldPerWindow and oldWithinWindow are the fleet's, K times it, as the new
   * rules' counts are). known false: an nginx limiter whose node count the answers do not give
   * (the design's gateway is not nginx), counted as one node.
   */
  oldNodes?: { k: number; each: number; unit: ExistingCounters['unit']; known: boolean };
  /**
   * The most the new rules together admit on the endpoint within that window: the tightest of
   * them; where they differ by plan (a caller meets only its plan's), the largest of the plans' tightest.
   */
  newWithinWindow?: number;
  /** looser: the new rules admit more within the old window; tighter: fewer; kept: the design took the old limit over. */
  verdict: 'same' | 'looser' | 'tighter' | 'kept' | 'uncovered';
  /** A kept limit that the new rule counts differently (once for the fleet where the old one counted on each node): which way. */
  keptMove?: 'tighter' | 'looser';
  /** Tighter only against the old fixed window's two windows back to back: the new rules still admit one old window's worth. */
  acrossResetOnly?: true;
  note: string;
}

export interface Migration {
  items: MigrationItem[];
  /** The hand-written Redis counters (INCR then EXPIRE) among the old limiters, and what each gets wrong that the generated scripts do not. */
  handWritten: { existing: string; hazards: string[] }[];
  /** Lines of the scanned nginx configuration that clash with the generated nginx files, and what to do. */
  nginxConflicts: string[];
  /** nginx locations with their own limit_req, which hide the generated server-level rules. */
  shadowedLocations: string[];
  /** nginx limit_req lines already in place that the generated limit_req_dry_run puts in dry run too, and what to do. */
  dryRun: string[];
  /**
   * The nginx limit_req zones already in place, beside generated nginx files: their refusals go
   * through the generated error_page 429 too, so its Retry-After must cover the wait each needs
   * (one emission interval of its rate, whole seconds).
   */
  nginxLimits: { existing: string; zone: string; limitText: string; retryAfterSeconds: number }[];
  /** The scanned configuration's directives the generated nginx files leave out (they would be duplicates). */
  nginxDirectives: { name: string; value: string; context: string; source?: string }[];
}

export type ScenarioId =
  | 'burst-at-boundary'
  | 'concurrent-race'
  | 'store-outage'
  | 'throttled-recovery'
  | 'dual-key-auth'
  | 'cost-weighted-exhaustion';

export interface Scenario {
  id: ScenarioId;
  title: string;
  ruleIds: string[];
  /** False when the design has nothing for the scenario to exercise (e.g. no auth endpoints). */
  applicable: boolean;
  setup: string;
  steps: string[];
  expected: string;
  /** Filled by `verify --write`. */
  result?: {
    passed: boolean;
    detail: string;
    redisVersion: string;
    date: string;
    /** Each rule the scenario ran on (verify runs a scenario on every rule it applies to). */
    runs?: { ruleId: string; passed: boolean; expected: string; measured: string; scaling?: string }[];
    /** Latency of the scenario's limiter calls against that Redis, ms. */
    latency?: { calls: number; p50Ms: number; p99Ms: number };
  };
}

/** An identity value an allow or deny entry names. */
interface AccessIdentity {
  kind: 'api-key' | 'user' | 'tenant' | 'session';
  value: string;
}

/**
 * Who skips rules, who is refused outright, who is blocked after repeated refusals, and which
 * identities the application computes itself. Each part is absent when the answers leave it out.
 */
export interface AccessDesign {
  allow?: {
    cidrs: string[];
    identities: AccessIdentity[];
    routes: { method: string; route: string }[];
    tiers: RuleTier[];
    /** The middleware rules an allowlisted request skips (edge rules still count it). */
    ruleIds: string[];
    reason?: string;
    text: string;
  };
  /** body: exactly what the middleware sends a denied request (problem+json). */
  deny?: { cidrs: string[]; identities: AccessIdentity[]; status: number; text: string; body: Record<string, unknown> };
  penalty?: {
    tiers: RuleTier[];
    /** The middleware rules whose refusals count, and whose routes the box blocks. */
    ruleIds: string[];
    refusals: number;
    withinSeconds: number;
    blockSeconds: number;
    /** Key patterns, each with its TTL: the refusal counter lives withinSeconds, the box blockSeconds. */
    keys: { strikes: string; box: string };
    text: string;
    /** What the middleware sends a caller in the box (a silent 429), with Retry-After the time left. */
    body: Record<string, unknown>;
  };
  /** Identity kinds the application supplies through its own function (options.identities.<kind>). */
  customIdentities: { kind: string; from: string; option: string }[];
  /** Where the functions plug in, for the document. */
  customText?: string;
}

/** One row of the worst-case table as verify measured it (filled by `verify --write`). */
export interface WorstCaseMeasurement {
  ruleId: string;
  /** The row kind (design/worst-case.ts) the measurement is for. */
  kind: string;
  /** The worst case the formula gives for the numbers verify ran with (scaled when the rule's own would be slow). */
  stated: number;
  /** The most verify saw admitted within one period of those numbers; never above `stated` when it passed. */
  measured: number;
  passed: boolean;
  /** The numbers it ran with, and how they differ from the rule's. */
  params: string;
  scaling?: string;
}

/** Who the rules keyed on an account identity count when a caller lacks it, and the plan of a caller identify() names none. */
export interface IdentityFallback {
  /** Middleware rules keyed on an API key, user, tenant or session. */
  ruleIds: string[];
  /** The plan a caller without one counts as (present when a rule is a plan's). */
  defaultPlan?: string;
  /** The keys such a caller is counted under, as the runtime writes them (a port must write the same). */
  keys: string;
  /**
   * Endpoints these rules cover that allow anonymous callers: there a caller with no account
   * identity is counted by none of these rules (not by its address), only by the per-IP rows.
   */
  anonymousEndpoints: { name: string; method: string; route: string }[];
  explanation: string;
}

export interface Design {
  meta: {
    tool: 'rl-design';
    toolVersion: string;
    /** YYYY-MM-DD, an input: never read from the clock inside the builder. */
    date: string;
    generic: boolean;
  };
  output: {
    format: 'html' | 'markdown';
    layout: 'auto' | 'single' | 'folder';
    path?: string;
    codeDir?: string;
  };
  scope: Scope;
  assumptions: Assumption[];
  rules: MatrixRule[];
  algorithms: AlgorithmDecision[];
  enforcement: Enforcement;
  contract: ResponseContract;
  quotas?: QuotaDesign;
  outbound?: OutboundDesign;
  monitoring: Monitoring;
  rollout: Rollout;
  scenarios: Scenario[];
  /** Each endpoint class in use: answered and effective fail mode. */
  failModes?: ClassFailMode[];
  /** Present when a middleware rule is keyed on an account identity (API key, user, tenant, session). */
  identityFallback?: IdentityFallback;
  /** Present when the answers list limiters already in place. */
  migration?: Migration;
  /** Present when the answers set an allowlist, deny list, penalty box or custom identities. */
  access?: AccessDesign;
  /** What verify measured of the worst-case table (present after `verify --write`). */
  worstCaseMeasured?: WorstCaseMeasurement[];
}

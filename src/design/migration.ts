/**
 * Migration from the limiters already in place: each one beside the rules that replace it,
 * the numbers side by side within the old limiter's own window, a warning wherever the new
 * limit is looser or tighter, and the clashes the generated nginx files would have with the
 * scanned nginx configuration.
 */
import type { EXISTING_ALGORITHMS, ExistingLimiterT, ExistingNginxDirectiveT } from '../answers/schema.js';
import { formatNumber, secondsWords } from '../format.js';
import { admittedWithin, limitReqAdmittedWithin } from './algorithms.js';
import { gatewayNodeName, gatewayNodes } from './gateway-behaviour.js';
import type {
  Enforcement,
  ExistingCounters,
  MatrixRule,
  Migration,
  MigrationItem,
  ResolvedEndpoint,
  RuleIdentity,
  Scope,
} from './model.js';
import { fleetAdmittedWithin } from './worst-case.js';

/** A route with its parameters made comparable: /v1/orders/:id and /v1/orders/{id} read the same. */
function normaliseRoute(route: string): string {
  return route.replace(/\{[^}/]+\}|:[A-Za-z_][\w]*/g, ':p').replace(/\/+$/, '') || '/';
}

/** Whether an existing limiter covers an endpoint (method and path; no path covers every route). */
function coversEndpoint(l: ExistingLimiterT, e: ResolvedEndpoint): boolean {
  if (l.match === 'unknown') return false;
  if (l.method && l.method !== 'ANY' && e.method !== 'ANY' && l.method !== e.method) return false;
  if (!l.path) return true;
  const path = normaliseRoute(l.path);
  const route = normaliseRoute(e.route.replace(/\*$/, ''));
  if (l.match === 'exact') return route === path;
  return path === '/' || route === path || route.startsWith(`${path}/`);
}

/** What an existing limiter counts per, as the rule identities that count the same thing. */
const SAME_KEY: Record<NonNullable<ExistingLimiterT['keyedOn']>, RuleIdentity[]> = {
  ip: ['ip'],
  'api-key': ['api-key'],
  user: ['user', 'username', 'session'],
  tenant: ['tenant'],
  global: ['global'],
  other: [],
};

type ExistingAlgorithm = Exclude<(typeof EXISTING_ALGORITHMS)[number], 'unknown'>;

/** How the libraries and servers the detectors name count, by the limiter's kind as written. */
const ALGORITHM_OF_KIND: readonly (readonly [RegExp, ExistingAlgorithm])[] = [
  // a count per window, reset when the window ends (their default stores, and the Redis ones)
  [/^(?:express-rate-limit|rate-limit-redis|rate-limiter-flexible|@fastify\/rate-limit|hono-rate-limiter)$/i, 'fixed-window'],
  // every hit expires on its own, a window after it came: the limit in any stretch of the window
  [/^@nestjs\/throttler$/i, 'sliding-window'],
  // limit_req: a rate drained continuously, plus the burst it queues or lets through
  [/^nginx\b/i, 'leaky-bucket'],
  [/^kong:rate-limiting$/i, 'fixed-window'],
  [/^kong:rate-limiting-advanced$/i, 'sliding-window'],
  [/^envoy-local$/i, 'token-bucket'],
  // the rate limit service counts per unit of time, reset at each unit's end
  [/^envoy-(?:global|ratelimit-service)$/i, 'fixed-window'],
  // a counter written by hand: INCR, then EXPIRE on the first hit
  [/incr/i, 'fixed-window'],
];

/** Whether a limiter is a Redis counter written by hand (INCR then EXPIRE), as detected or as the answers name it. */
export function isIncrExpire(l: Pick<ExistingLimiterT, 'kind'>): boolean {
  return /incr/i.test(l.kind);
}

/**
 * How an existing limiter counts: as the answers state it, else as its kind is known to count,
 * else (a kind we do not know, or "unknown") as a fixed window, the counting that lets the most
 * through across its window's end, so a new limit is never called tighter than it is.
 */
export function existingAlgorithm(l: Pick<ExistingLimiterT, 'kind' | 'algorithm'>): { algorithm: ExistingAlgorithm; assumed: boolean } {
  if (l.algorithm !== undefined && l.algorithm !== 'unknown') return { algorithm: l.algorithm, assumed: false };
  const known = l.algorithm === undefined ? ALGORITHM_OF_KIND.find(([re]) => re.test(l.kind.trim()))?.[1] : undefined;
  return known !== undefined ? { algorithm: known, assumed: false } : { algorithm: 'fixed-window', assumed: true };
}

/** The algorithm the detectors record for a limiter of this kind (undefined: not known from the kind). */
export function algorithmOfKind(kind: string): ExistingAlgorithm | undefined {
  return ALGORITHM_OF_KIND.find(([re]) => re.test(kind.trim()))?.[1];
}

const ALGORITHM_WORDS: Record<ExistingAlgorithm, string> = {
  'fixed-window': 'fixed window',
  'sliding-window': 'sliding window',
  'token-bucket': 'token bucket',
  'leaky-bucket': 'leaky bucket',
};

/** How the old limiter counts, in words: "fixed window", "fixed window, assumed". */
export function existingAlgorithmText(l: Pick<ExistingLimiterT, 'kind' | 'algorithm'>): string {
  const a = existingAlgorithm(l);
  return `${ALGORITHM_WORDS[a.algorithm]}${a.assumed ? ', assumed' : ''}`;
}

/** The most an existing limiter admits within one of its own windows: its limit plus any burst. */
function existingWithin(l: ExistingLimiterT): number {
  return Math.floor(l.limit + (l.burst ?? 0));
}

/**
 * The most an existing limiter lets one key through within any stretch of `seconds`, as it counts,
 * at one counter (an nginx limit_req: at one nginx node): a fixed window its limit in every window
 * the stretch touches (one more than it spans: the end of one and the start of the next), a
 * sliding window its limit per window spanned, a bucket its burst plus what drains or refills
 * meanwhile (nginx's limit_req one request more at once).
 */
export function existingAdmittedWithin(l: ExistingLimiterT, seconds: number): number {
  const whole = (x: number): number => Math.floor(x + 1e-9);
  const burst = l.burst ?? 0;
  const spans = Math.max(1, Math.ceil(seconds / l.windowSeconds - 1e-9));
  const algorithm = existingAlgorithm(l).algorithm;
  // nginx's limit_req: one request more at once than its burst (limitReqAdmittedWithin)
  if (algorithm === 'leaky-bucket' && isNginxLimiter(l))
    return limitReqAdmittedWithin({ requests: l.limit, periodSeconds: l.windowSeconds }, burst, seconds);
  switch (algorithm) {
    case 'fixed-window':
      return whole(l.limit * (spans + 1) + burst);
    case 'sliding-window':
      return whole(l.limit * spans + burst);
    default:
      return whole(burst + (l.limit / l.windowSeconds) * seconds);
  }
}

/**
 * Libraries (and rate-limiter-flexible's memory class) whose default store keeps the counts in
 * each process's memory: behind a load balancer each application instance counts a key on its own.
 */
const IN_PROCESS_BY_DEFAULT =
  /^(?:express-rate-limit|express-slow-down|hono-rate-limiter|@fastify\/rate-limit|@nestjs\/throttler|RateLimiterMemory)$/i;

/**
 * Where an existing limiter keeps its counts: as the answers state it, else in each process for
 * a library whose default store is in memory (assumed: the answers do not say), else shared.
 */
export function existingStore(l: Pick<ExistingLimiterT, 'kind' | 'store'>): { store: 'in-process' | 'shared'; assumed: boolean } {
  if (l.store !== undefined) return { store: l.store, assumed: false };
  return IN_PROCESS_BY_DEFAULT.test(l.kind.trim()) ? { store: 'in-process', assumed: true } : { store: 'shared', assumed: false };
}

/**
 * The separate counters one key of an old limiter meets, each admitting its limit on its own
 * (ExistingCounters): an nginx limit_req's nginx nodes, an in-process store's application
 * instances; undefined for a limiter with a shared store (one count for the fleet).
 */
export function existingCounters(
  scope: Pick<Scope, 'gateway' | 'gatewayNodes' | 'topology' | 'instances'>,
  l: ExistingLimiterT,
): ExistingCounters | undefined {
  if (isNginxLimiter(l)) {
    return scope.gateway === 'nginx'
      ? { ...gatewayNodes(scope), unit: 'nginx node', known: true }
      : { k: 1, stated: false, unit: 'nginx node', known: false };
  }
  const store = existingStore(l);
  if (store.store !== 'in-process') return undefined;
  return {
    k: scope.topology === 'horizontal' ? scope.instances : 1,
    stated: true,
    unit: 'instance',
    known: true,
    ...(store.assumed ? { storeAssumed: true } : {}),
  };
}

/** "2 nginx nodes", "1 instance". */
function countersWords(c: Pick<ExistingCounters, 'k' | 'unit'>): string {
  return `${formatNumber(c.k)} ${c.unit === 'instance' ? 'application instance' : c.unit}${c.k === 1 ? '' : 's'}`;
}

/**
 * The most one key gets through an existing limiter within its window, in words, as it counts
 * (existingAdmittedWithin): a fixed window states one window's count and the worst case across a
 * reset, the end of one window and the start of the next; then where it counts (counters): at
 * each nginx node or in each instance's memory, and the fleet's K times it.
 */
export function existingWorstText(l: ExistingLimiterT, counters?: ExistingCounters): string {
  const one = existingWithin(l);
  const worst = existingAdmittedWithin(l, l.windowSeconds);
  const w = secondsWords(l.windowSeconds);
  const counting = existingAlgorithm(l);
  const algorithmText = existingAlgorithmText(l);
  const limitReq = counting.algorithm === 'leaky-bucket' && isNginxLimiter(l);
  const how = limitReq
    ? `: one request${l.burst ? ` and a burst of ${formatNumber(l.burst)}` : ''} at once, then its rate`
    : counting.algorithm.endsWith('bucket') && l.burst
      ? `: its rate plus a burst of ${formatNumber(l.burst)}`
      : '';
  const text =
    counting.algorithm === 'fixed-window' && worst > one
      ? `${formatNumber(one)} requests within one of its ${w} windows, and ${formatNumber(worst)} within ${w} across a reset, the end of one window and the start of the next (${algorithmText})`
      : `${formatNumber(worst)} requests within any ${w} (${algorithmText}${how})`;
  if (!counters) return text;
  if (counters.unit === 'nginx node') {
    // each nginx node keeps its own zone: the count is per node, the fleet's K times it
    if (!counters.known)
      return `${text} at each nginx node that runs it, each counting on its own; the design's gateway is not nginx, so the answers give no count of those nodes and this figure is one node's: with K nodes, K times it passes`;
    if (counters.k <= 1) return `${text} at its one nginx node`;
    return `${text} at each nginx node, ${formatNumber(worst * counters.k)} across the ${countersWords(counters)}${counters.stated ? '' : ' assumed (stack.gatewayNodes not given)'}, each counting on its own`;
  }
  // one instance: its memory is the only count, nothing to add
  if (counters.k <= 1) return text;
  const store = counters.storeAssumed ? ` (its default in-memory store: set store to shared in the answers if it uses a shared one)` : '';
  return `${text} in each application instance's memory${store}, ${formatNumber(worst * counters.k)} across the ${countersWords(counters)} (stack.instances), each counting on its own`;
}

/**
 * What a hand-written Redis counter gets wrong on its own, which the generated scripts do not
 * (each checks and counts in one atomic call and sets the expiry in the same call).
 */
export function incrExpireHazards(l: ExistingLimiterT): string[] {
  if (!isIncrExpire(l)) return [];
  return [
    'INCR and EXPIRE are two commands: if the process stops or the connection drops between them, the counter is left without an expiry, keeps its count for good, and that client is refused until someone deletes the key.',
    'Where it reads the count (GET) before it counts (INCR), parallel requests all read a count under the limit and all pass: a burst of them gets more through than the limit.',
  ];
}

export function existingLimitText(l: ExistingLimiterT): string {
  if (l.kind === 'nginx' && (l.windowSeconds === 1 || l.windowSeconds === 60)) {
    return `${formatNumber(l.limit)}r/${l.windowSeconds === 1 ? 's' : 'm'}${l.burst !== undefined ? `, burst ${formatNumber(l.burst)}` : ''}`;
  }
  return `${formatNumber(l.limit)} per ${secondsWords(l.windowSeconds)}${l.burst !== undefined ? `, burst ${formatNumber(l.burst)}` : ''}`;
}

export function existingName(l: ExistingLimiterT): string {
  return `${l.kind}${l.name ? ` ${l.name}` : ''}${l.source ? ` (${l.source})` : ''}`;
}

/** Which way the worst case within the old window moves; tighter-across-reset: below the old fixed window's two windows back to back, not below one. */
type Move = 'same' | 'looser' | 'tighter' | 'tighter-across-reset';

const MOVE_WORDS: Record<Move, string> = {
  same: 'the same',
  looser: 'looser',
  tighter: 'tighter',
  'tighter-across-reset': 'tighter across a reset only',
};

/** The item's verdict for the moves its plans make: looser wins, then tighter. */
function verdictOf(moves: readonly Move[]): Pick<MigrationItem, 'verdict' | 'acrossResetOnly'> {
  if (moves.includes('looser')) return { verdict: 'looser' };
  if (moves.includes('tighter')) return { verdict: 'tighter' };
  if (moves.includes('tighter-across-reset')) return { verdict: 'tighter', acrossResetOnly: true };
  return { verdict: 'same' };
}

/** What the tightest new rule admits within the old window, and where it counts: "the new rules admit 902 within any 1 s across the 2 nginx nodes (anonymous-per-ip: 451 at each)". */
function admitsText(
  x: { ruleId: string; withinWindow: number; nodes?: { k: number; each: number } },
  w: string,
  scope: Pick<Scope, 'gateway'>,
): string {
  return `the new rules admit ${formatNumber(x.withinWindow)} within any ${w} ${
    x.nodes
      ? `across the ${formatNumber(x.nodes.k)} ${gatewayNodeName(scope.gateway)} nodes (${x.ruleId}: ${formatNumber(x.nodes.each)} at each)`
      : `for the whole fleet (${x.ruleId})`
  }`;
}

function joinWords(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function coversText(l: ExistingLimiterT): string {
  if (l.match === 'unknown') return l.scope ?? 'routes the scan could not name';
  const method = l.method && l.method !== 'ANY' ? `${l.method} ` : '';
  if (!l.path) return method ? `every ${method.trim()} request` : 'every request';
  return l.match === 'exact' ? `${method}${l.path}` : `${method ? `${method}requests` : 'every route'} under ${l.path}`;
}

/** The local + store hybrid: the rules whose instances admit from a local bucket before the store has counted, and how many tokens the fleet can add. */
type Hybrid = Pick<NonNullable<Enforcement['hybrid']>, 'ruleIds' | 'overAdmission'> | undefined;

function ruleLimitText(r: MatrixRule, hybrid: Hybrid): string {
  if (!r.rate) return 'no rate';
  const per = r.rate.periodText ?? secondsWords(r.rate.periodSeconds);
  const local = hybrid?.ruleIds.includes(r.id) ? `, + ${formatNumber(hybrid.overAdmission)} from the instances' local buckets` : '';
  return `${formatNumber(r.rate.requests)} per ${per}${typeof r.burst === 'number' ? `, burst ${formatNumber(r.burst)}` : ''}${local}`;
}

/** Whether a rule counts the endpoint (an empty endpoint list covers every endpoint of its class). */
function ruleCovers(r: MatrixRule, e: ResolvedEndpoint): boolean {
  if (r.tier === 'outbound' || r.layer === 'outbound-client') return false;
  if (r.endpoints.length > 0) return r.endpoints.includes(e.name);
  return r.endpointClass === 'all' ? e.class !== 'health' : r.endpointClass === e.class;
}

/**
 * Requests to one endpoint a rule admits within a stretch: what it admits in tokens, over the
 * tokens one call to that endpoint takes (a rule counting cost 5 per call admits a fifth as many
 * calls), so an old limiter counting requests is compared with calls, not tokens.
 */
function requestsWithin(
  fleet: FleetInput,
  r: MatrixRule,
  e: ResolvedEndpoint,
  seconds: number,
  hybrid: Hybrid,
): { total: number; nodes?: { k: number; each: number } } | undefined {
  // across the deployment, as the worst-case table counts it (gateway nodes, in-process instances)
  const counted = fleetAdmittedWithin(fleet, r, seconds);
  if (counted === undefined) return undefined;
  // a hybrid rule's instances admit up to their local buckets more before the store has counted
  const tokens = counted.total + (hybrid?.ruleIds.includes(r.id) ? hybrid.overAdmission : 0);
  const cost = Math.max(1, r.cost ? (r.cost.byEndpoint.find((w) => w.endpoint === e.name)?.cost ?? r.cost.default) : 1);
  return {
    total: Math.floor(tokens / cost),
    ...(counted.nodes !== undefined ? { nodes: { k: counted.nodes, each: Math.floor(counted.each / cost) } } : {}),
  };
}

/** What the migration's counts read of the design: its scope, rules and exempt endpoints (fleetAdmittedWithin). */
type FleetInput = Parameters<typeof fleetAdmittedWithin>[0];

/**
 * The tighter existing limit an auth flow's per-IP row (a sliding log) takes over, so a limit
 * already in force is never loosened silently: the limiters keyed on the client IP that cover one
 * of the flow's endpoints and admit fewer within their window than the new row would, and no more
 * within the row's own window. Both sides are counted for the whole fleet: the old one times the
 * nginx nodes or instances that each count it on their own (existingCounters), the row times
 * `rowCounters` (the instances, where it counts in each process's memory).
 */
export function tighterExisting(
  scope: Pick<Scope, 'gateway' | 'gatewayNodes' | 'topology' | 'instances'>,
  existing: readonly ExistingLimiterT[],
  endpoints: readonly ResolvedEndpoint[],
  row: { requests: number; periodSeconds: number },
  rowCounters = 1,
): ExistingLimiterT | undefined {
  let best: { l: ExistingLimiterT; perSecond: number } | undefined;
  const rowWithin = (seconds: number): number =>
    (admittedWithin({ algorithm: 'sliding-window-log', rate: row, layer: 'middleware', burst: null }, seconds) ?? 0) * rowCounters;
  for (const l of existing) {
    if ((l.keyedOn ?? 'ip') !== 'ip') continue;
    if (!endpoints.some((e) => coversEndpoint(l, e))) continue;
    const k = existingCounters(scope, l)?.k ?? 1;
    // compared at its worst, as the migration table compares it: a fixed window of 60 admits 120
    // across a reset, which is not tighter than a row admitting 100
    if (existingAdmittedWithin(l, l.windowSeconds) * k >= rowWithin(l.windowSeconds)) continue;
    // tighter within its own window is not enough: over the row's longer window the old limit
    // must not admit more either (30 per second is 27,000 per 15 min against the row's 300);
    // when neither is tighter over both, the row stays and the migration table warns
    if (existingAdmittedWithin(l, row.periodSeconds) * k > rowWithin(row.periodSeconds)) continue;
    const perSecond = (l.limit * k) / l.windowSeconds;
    if (!best || perSecond < best.perSecond) best = { l, perSecond };
  }
  return best?.l;
}

/** Whether an existing limiter is an nginx limit_req (the scan names them kind nginx). */
export function isNginxLimiter(l: Pick<ExistingLimiterT, 'kind'>): boolean {
  return l.kind.trim().toLowerCase() === 'nginx';
}

/**
 * What the generated server-level limit_req_dry_run does to an nginx limit_req already in place:
 * nginx has one dry-run switch per context, not per zone, so in a server that includes
 * nginx-server.conf every limit_req runs dry while it is on, the old ones included, and so does
 * a location with a limit_req of its own unless it sets limit_req_dry_run itself.
 */
function dryRunNote(l: ExistingLimiterT): string {
  const name = existingName(l);
  if (l.location) {
    return `${name}: location ${l.path ?? '(unnamed)'} inherits the limit_req_dry_run on of gateway/nginx-server.conf unless it sets limit_req_dry_run itself, so while the edge rules are in shadow mode its limit_req (zone ${l.name ?? 'unnamed'}) only logs what it would refuse and refuses nothing. To keep it refusing through the shadow period, add limit_req_dry_run off; to that location; the generated limit_req lines copied into it then refuse there at once, so copy them in when the edge rules are enforced.`;
  }
  return `${name}: its limit_req shares the limit_req_dry_run on of gateway/nginx-server.conf in the server that includes it (nginx has one dry-run switch per server or location, not per zone), so while the edge rules are in shadow mode it only logs what it would refuse and refuses nothing, in that server and in its locations that set no limit_req_dry_run of their own. Either accept that its routes have no such limit for the shadow period, or set limit_req_dry_run off from the start, which enforces the edge rules at once, without a shadow period.`;
}

/**
 * An nginx limit_req already in place, as the generated error_page 429 answers for it: a refused
 * client passes again once one request has drained from its zone, one emission interval of its
 * rate (6r/m: 10 s), whatever its burst (a refusal leaves the zone's excess at most the burst).
 */
function nginxLimitOf(l: ExistingLimiterT): Migration['nginxLimits'][number] {
  return {
    existing: existingName(l),
    zone: l.name ?? existingName(l),
    limitText: existingLimitText(l),
    retryAfterSeconds: Math.max(1, Math.ceil(l.windowSeconds / l.limit - 1e-9)),
  };
}

/** Directives the generated http-level nginx file sets, and those of the server-level file. */
const GENERATED_NGINX_HTTP = ['real_ip_header', 'real_ip_recursive', 'limit_req_status', 'limit_req_log_level'] as const;
const GENERATED_NGINX_SERVER = ['limit_req_dry_run'] as const;

/** Directives of the scanned configuration that the generated files would set a second time at the same level. */
function nginxDuplicates(directives: readonly ExistingNginxDirectiveT[]): ExistingNginxDirectiveT[] {
  return directives.filter(
    (d) =>
      (d.context === 'http' && (GENERATED_NGINX_HTTP as readonly string[]).includes(d.name)) ||
      (d.context === 'server' && (GENERATED_NGINX_SERVER as readonly string[]).includes(d.name)),
  );
}

export function buildMigration(
  scope: Scope,
  rules: readonly MatrixRule[],
  existing: readonly ExistingLimiterT[],
  nginx: readonly ExistingNginxDirectiveT[],
  hybrid?: Hybrid,
  exempt: readonly string[] = [],
): Migration | undefined {
  if (existing.length === 0 && nginx.length === 0) return undefined;
  // the new rules are counted across the deployment, as the worst-case table counts them
  const fleet: FleetInput = { scope, rules: [...rules], enforcement: { exempt: { endpoints: [...exempt], why: '' } } };
  // nginx: a location with a limit_req of its own does not inherit the server's limit_req lines
  const locations = existing.filter((x) => x.kind === 'nginx' && x.location && x.path);
  const hiddenFrom = (l: ExistingLimiterT, e: ResolvedEndpoint): boolean =>
    l.kind === 'nginx' && !l.location && locations.some((x) => coversEndpoint(x, e));
  const items: MigrationItem[] = existing.flatMap((l) => {
    const endpoints = scope.endpoints.filter((e) => e.class !== 'health' && coversEndpoint(l, e) && !hiddenFrom(l, e));
    const keyedOn = l.keyedOn ?? 'ip';
    const same = SAME_KEY[keyedOn];
    // an old nginx limit_req counts on each nginx node on its own, an in-process store in each
    // instance: compared across the fleet, as the new rules are
    const counters = existingCounters(scope, l);
    const k = counters?.k ?? 1;
    const counting = existingAlgorithm(l);
    const w = secondsWords(l.windowSeconds);
    // what one key gets through within any stretch of the old window, as the old limiter counts
    const oldWorst = existingAdmittedWithin(l, l.windowSeconds) * k;
    // within one window: a fixed window's limit plus burst; any other counting has no reset to tell apart
    const oldOne = counting.algorithm === 'fixed-window' ? existingWithin(l) * k : oldWorst;
    const algorithmText = existingAlgorithmText(l);
    const oldText = existingWorstText(l, counters);
    /** Which way a new worst case within the old window moves from the old one. */
    const moveOf = (within: number): Move =>
      within === oldWorst
        ? 'same'
        : within > oldWorst
          ? 'looser'
          : counting.algorithm === 'fixed-window' && within >= oldOne
            ? 'tighter-across-reset'
            : 'tighter';
    const base = {
      existing: existingName(l),
      kind: l.kind,
      ...(l.source ? { source: l.source } : {}),
      covers: coversText(l),
      keyedOn,
      limitText: existingLimitText(l),
      algorithm: algorithmText,
      oldPerWindow: oldOne,
      oldWithinWindow: oldWorst,
      ...(counters && (k > 1 || !counters.known)
        ? { oldNodes: { k, each: oldWorst / k, unit: counters.unit, known: counters.known } }
        : {}),
    };
    if (keyedOn === 'other') {
      return [
        {
          ...base,
          replacements: [],
          verdict: 'uncovered' as const,
          note: `Counts per a key the scan could not read (a key generator, or a key chosen in code)${endpoints.length > 0 ? ` on ${endpoints.map((e) => e.name).join(', ')}` : ''}: no rule can be set beside it automatically. Compare it with the rules on those routes by hand before retiring it.`,
        },
      ];
    }
    if (endpoints.length === 0) {
      return [
        {
          ...base,
          replacements: [],
          verdict: 'uncovered' as const,
          note:
            l.match === 'unknown'
              ? `Applies to ${l.scope ?? 'routes the scan could not name'}, which the design cannot match to its endpoints: compare it with the rules on those routes by hand before retiring it.`
              : 'Covers no endpoint of this design: list its routes as endpoints, or confirm they need no limit before retiring it.',
        },
      ];
    }
    return endpoints.map((e): MigrationItem => {
      const candidates = rules.filter((r) => r.identity && same.includes(r.identity) && ruleCovers(r, e));
      const replacements = candidates.flatMap((r) => {
        const n = requestsWithin(fleet, r, e, l.windowSeconds, hybrid);
        return n === undefined
          ? []
          : [{ ruleId: r.id, limitText: ruleLimitText(r, hybrid), withinWindow: n.total, ...(n.nodes ? { nodes: n.nodes } : {}) }];
      });
      const kept = candidates.find((r) => r.keptFrom === existingName(l));
      // a request must pass every rule on the route that counts it, so the tightest one decides
      const tightest = replacements.reduce<(typeof replacements)[number] | undefined>(
        (a, b) => (a && a.withinWindow <= b.withinWindow ? a : b),
        undefined,
      );
      const endpoint = { name: e.name, method: e.method, route: e.route };
      const at = `${e.method} ${e.route}`;
      const tighterNote = `Clients that live near the old limit will be refused: check shadow mode's would-be refusals for them before enforcing.`;
      if (kept) {
        // taken over with the old numbers, but counted across the fleet: where the old one counted on each node it is tighter
        const move = tightest ? moveOf(tightest.withinWindow) : 'same';
        const took = `${at}: the new rule ${kept.id} takes over this limit (${existingLimitText(l)}); the design's default would have admitted more, and a limit in force is not loosened without a decision.`;
        return {
          ...base,
          endpoint,
          replacements,
          ...(tightest ? { newWithinWindow: tightest.withinWindow } : {}),
          verdict: 'kept',
          ...(move === 'same' ? {} : { keptMove: move === 'looser' ? 'looser' : 'tighter' }),
          note:
            move === 'same' || !tightest
              ? took
              : `${took} Warning, ${MOVE_WORDS[move]}: before, one ${keyedOn} could send ${oldText}; ${admitsText(tightest, w, scope)}. ${move === 'looser' ? 'Confirm the looser limit is wanted.' : tighterNote}`,
        };
      }
      if (!tightest) {
        // the route may still have rules keyed on something else (an anonymous auth flow's per-IP
        // and per-account rows): retiring the old limiter removes its per-key limit, not every limit
        const others = rules.filter((r) => r.layer !== 'edge' && ruleCovers(r, e) && r.identity && !same.includes(r.identity));
        const kept =
          others.length > 0
            ? ` The route keeps the new rules counting per ${joinWords([...new Set(others.map((r) => r.identity as string))])} (${others.map((r) => r.id).join(', ')})${e.anonymous && keyedOn !== 'ip' && keyedOn !== 'global' ? `; its callers are anonymous, so they bring no ${keyedOn} to count` : ''}.`
            : '';
        return {
          ...base,
          endpoint,
          replacements,
          verdict: 'uncovered',
          note: `${at}: warning, no new rule counts per ${keyedOn} here. Retiring this limiter removes ${others.length > 0 ? `its per-${keyedOn} limit` : 'the limit'} on this route; keep it, or add a rule keyed on ${keyedOn} (a rules entry) first.${kept}`,
        };
      }
      const looserNote = `Confirm the looser limit is wanted before retiring this limiter, or keep it, or add a rules entry with the old numbers.`;
      const resetNote = `Only a client that spent a whole window's allowance on each side of a reset meets the difference: check shadow mode's would-be refusals before enforcing.`;
      const noteOf = (m: Move): string => (m === 'looser' ? looserNote : m === 'tighter' ? tighterNote : resetNote);
      // rules of different plans never count the same caller: within each plan the tightest of
      // its rules (and of the rules every plan meets) decides, and the plans can differ
      const plans = [...new Set(candidates.flatMap((r) => (r.plan === undefined ? [] : [r.plan])))];
      if (plans.length > 1) {
        const planOf = new Map(candidates.map((r) => [r.id, r.plan]));
        const perPlan = plans.flatMap((plan) => {
          const own = replacements.filter((x) => {
            const p = planOf.get(x.ruleId);
            return p === undefined || p === plan;
          });
          const t = own.reduce<(typeof own)[number] | undefined>((a, b) => (a && a.withinWindow <= b.withinWindow ? a : b), undefined);
          if (!t) return [];
          return [{ plan, tightest: t, move: moveOf(t.withinWindow) }];
        });
        const most = Math.max(...perPlan.map((p) => p.tightest.withinWindow));
        const moves = (['looser', 'tighter', 'tighter-across-reset'] as const).filter((k) => perPlan.some((p) => p.move === k));
        const common = { ...base, endpoint, replacements, newWithinWindow: most };
        if (moves.length === 0) {
          return {
            ...common,
            verdict: 'same',
            note: `${at}: the same on every plan. Before, one ${keyedOn} could send ${oldText}; on every plan the new rules admit the same ${formatNumber(oldWorst)} within any ${w}.`,
          };
        }
        const each = perPlan
          .map((p) => `plan ${p.plan} ${formatNumber(p.tightest.withinWindow)} (${p.tightest.ruleId}, ${MOVE_WORDS[p.move]})`)
          .join('; ');
        return {
          ...common,
          ...verdictOf(moves),
          note: `${at}: warning, ${moves.map((k) => MOVE_WORDS[k]).join(' and ')}. Before, whatever its plan, one ${keyedOn} could send ${oldText}; a caller meets only its own plan's rules, and per plan the new rules admit within any ${w}: ${each}. ${moves.map(noteOf).join(' ')}`,
        };
      }
      const common = { ...base, endpoint, replacements, newWithinWindow: tightest.withinWindow };
      const move = moveOf(tightest.withinWindow);
      if (move === 'same') {
        return {
          ...common,
          verdict: 'same',
          note: `${at}: the same. Before, one ${keyedOn} could send ${oldText}; the new rules admit the same ${formatNumber(oldWorst)} within any ${w} (${tightest.ruleId}).`,
        };
      }
      const admits = admitsText(tightest, w, scope);
      return {
        ...common,
        ...verdictOf([move]),
        note:
          move === 'tighter-across-reset'
            ? `${at}: warning, tighter across a reset only. Before, one ${keyedOn} could send ${oldText}; ${admits}: no fewer than one old window held, but not two windows' worth back to back. ${resetNote}`
            : `${at}: warning, ${move}. Before, one ${keyedOn} could send ${oldText}; ${admits}. ${noteOf(move)}`,
      };
    });
  });

  const handWritten = existing.flatMap((l) => {
    const hazards = incrExpireHazards(l);
    return hazards.length > 0 ? [{ existing: existingName(l), hazards }] : [];
  });

  const hasEdge = rules.some((r) => r.layer === 'edge') && scope.gateway === 'nginx';
  const duplicates = hasEdge ? nginxDuplicates(nginx) : [];
  const nginxConflicts = duplicates.map(
    (d) =>
      `${d.source ?? 'your nginx configuration'} sets "${d.name} ${d.value}" in the ${d.context} block; the generated ${d.context === 'http' ? 'gateway/nginx.conf' : 'gateway/nginx-server.conf'} would set it a second time at the same level, which nginx -t refuses ("${d.name}" directive is duplicate). The generated file leaves its own line commented out, so yours stays in force${d.name === 'real_ip_header' ? ': check that it names the header your trusted proxies set' : ''}${d.name === 'limit_req_status' && d.value.trim() !== '429' ? `: with it the edge rules refuse with ${d.value}, not 429, and never reach the error_page 429 that adds Retry-After and the problem+json body; change it to limit_req_status 429` : ''}.`,
  );
  const shadowedLocations = hasEdge
    ? existing
        .filter((l) => l.kind === 'nginx' && l.location)
        .map(
          (l) =>
            `location ${l.path ?? '(unnamed)'}${l.source ? ` (${l.source})` : ''} has its own limit_req (zone ${l.name ?? 'unnamed'}): nginx then ignores every limit_req of the server level inside it, the generated edge rules included. Copy the limit_req lines of gateway/nginx-server.conf into that location next to its own, or the location stays unprotected by them.`,
        )
    : [];
  const dryRun = hasEdge ? existing.filter(isNginxLimiter).map(dryRunNote) : [];
  const nginxLimits = hasEdge ? existing.filter(isNginxLimiter).map(nginxLimitOf) : [];
  return { items, handWritten, nginxConflicts, shadowedLocations, dryRun, nginxLimits, nginxDirectives: duplicates };
}

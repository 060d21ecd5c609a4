// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The limiter: a request in, a decision out. Every rule of the design that applies to the
 * route is checked, in the order ceiling, security, fairness, quota.
 */
import { createHash } from 'node:crypto';
import { usernameOfRequest } from './account-name.js';
import { createGate, withCustomIdentities } from './access.js';
import { register as defaultRegistry } from 'prom-client';
import { calendarPeriod } from './calendar.js';
import { type Client, type ClientMemo, clientOfRequest, parseCidr, resolveClientIp } from './client-ip.js';
import { Evaluation, isPromiseLike, newStep } from './evaluation.js';
import type { ActiveRule, EvaluationContext, Step } from './evaluation.js';
import { MemoryFallback } from './fallback.js';
import {
  fallbackLabel,
  hashTag,
  IDENTITY_LABEL,
  identityLabelOf,
  identityValue,
  keyPart,
  keyShape,
  parseKeyPattern,
  renderKey,
  textOf,
  usernameKey,
} from './keys.js';
import type { Slot } from './keys.js';
import { LocalBuckets } from './local-bucket.js';
import { MemoryStore } from './memory-store.js';
import { createMetrics } from './metrics.js';
import { createPenaltyBox } from './penalty.js';
import { limitHeader, policyWindowSeconds, unavailableFields } from './responses.js';
import type { Shown, StatedState } from './responses.js';
import { compileRoute, RouteTable } from './routes.js';
import { Deadlines, failureReason, gcraNumbers, isNoScript, replyTime, StoreCall, StoreError, toReply } from './store.js';
import type { BoundScript, Reply, StoreListener } from './store.js';
import type {
  DesignData,
  IdentityKind,
  LimiterInput,
  LimiterOptions,
  RateLimiter,
  RequestIdentity,
  RuleMode,
  RuleOutcome,
  RuleSpec,
  ScriptName,
  ScriptSpec,
  Decision,
  DecisionSink,
} from './types.js';
import { charCodeAt } from './strings.js';

const MODES: readonly RuleMode[] = ['enforce', 'shadow', 'off'];
/** A rolling window's bucket: one UTC day. */
const DAY_MS = 86400000;
/** Client identities, best first: API key > user > tenant > session > IP. */
const FALLBACK_ORDER: readonly IdentityKind[] = ['api-key', 'user', 'tenant', 'session', 'ip'];
/** fallbackLabel of a rule's own label for every identity kind, worked out once per rule. */
function fallbackLabelsOf(own: string): Readonly<Record<IdentityKind, string>> {
  const out = {} as Record<IdentityKind, string>;
  for (const kind of Object.keys(IDENTITY_LABEL) as IdentityKind[]) out[kind] = fallbackLabel(own, kind);
  return out;
}

function sha1Hex(value: string): string {
  return createHash('sha1').update(value).digest('hex');
}

/** A rule that applies to a route, with the cost a request on that route takes. */
interface AppliedRule {
  readonly rule: ActiveRule;
  readonly cost: number;
  /** GCRA: what the request takes, cost x interval, as the string gcra.lua takes ('' for the other scripts). */
  readonly incrementArg: string;
}

/** What applies to one combination of matched routes, worked out once per combination. */
interface Applicable {
  readonly exempt: boolean;
  /** The route's endpoint allows anonymous callers (RouteSpec.anonymous). */
  readonly anonymous: boolean;
  readonly rules: readonly AppliedRule[];
  /** The specs of those rules, for the access lists. */
  readonly specs: readonly RuleSpec[];
  /** Each rule's mode when no mode hook is given (the default mode, for every request). */
  readonly fallbackModes: readonly RuleMode[];
  readonly needsUsername: boolean;
}

/** Per request: who is calling, and the client IP once a rule has needed it. */
interface RequestState<TReq> extends ClientMemo<TReq> {
  readonly identity: RequestIdentity;
  readonly plan: string | null;
  /** The route's endpoint allows anonymous callers: account rules count no caller by address there. */
  readonly anonymousRoute: boolean;
}

/** A window a window rule counts in: its id (in the key) and its end (epoch ms). */
interface Window {
  readonly id: string;
  readonly end: number;
}

/** A GCRA rule's bucket in microseconds (gcraNumbers), and as the strings gcra.lua takes; zeros for the other scripts. */
function gcraOf(spec: RuleSpec): { interval: number; tolerance: number; toleranceArg: string; intervalArg: string } {
  if (spec.script !== 'gcra') return { interval: 0, tolerance: 0, toleranceArg: '', intervalArg: '' };
  const { interval, tolerance } = gcraNumbers(spec.burst ?? spec.limit, spec.limit, spec.periodSeconds * 1000);
  return { interval, tolerance, toleranceArg: String(tolerance), intervalArg: String(interval) };
}

/** The method in upper case (it nearly always is: no call, no new string then). */
function upperCase(method: string): string {
  for (let i = 0; i < method.length; i++) {
    const c = charCodeAt(method, i);
    if (c >= 97 && c <= 122) return method.toUpperCase();
  }
  return method;
}

/** Checks the embedded scripts against their SHA1s (the EVALSHA ids). */
function verifyScripts(scripts: readonly ScriptSpec[]): void {
  for (const script of scripts) {
    if (sha1Hex(script.source) !== script.sha1) {
      throw new Error('rate limiter: embedded script ' + script.file + ' does not match its SHA1');
    }
  }
}

const NO_IDENTITY: RequestIdentity = {};

export function createLimiter<TReq>(design: DesignData, options: LimiterOptions<TReq>): RateLimiter<TReq> {
  verifyScripts(design.scripts);
  const RULES = design.rules;
  const QUOTA_PERIOD = design.quotaPeriod;
  const HYBRID = design.hybrid;
  const convention = design.headerConvention;
  const redis = options.redis;
  if (!redis && RULES.some((r) => r.store === 'redis')) {
    throw new Error('rate limiter: this design keeps limiter state in Redis; pass options.redis (an ioredis client)');
  }
  const prefix = options.keyPrefix ?? 'rl';
  const timeoutMs = options.timeoutMs ?? 50;
  const trusted = (options.trustedProxies ?? design.trustedProxies).map(parseCidr);
  const ipv6Prefix = options.ipv6PrefixLength ?? 64;
  const fallbackMode: RuleMode =
    options.defaultMode !== undefined && MODES.indexOf(options.defaultMode) >= 0 ? options.defaultMode : design.defaultMode;
  const defaultPlan = options.defaultPlan ?? design.defaultPlan;
  const clock = options.now ?? Date.now;
  const identify = withCustomIdentities(design.access, options);
  // the client of a request, worked out once for the access lists, the penalty box and the rules
  const clientOf = clientOfRequest<TReq>(trusted, ipv6Prefix, options.identities?.ip ?? options.clientIp);
  const modeHook = options.mode;
  const metrics = createMetrics(design, options.registry === undefined ? defaultRegistry : options.registry);
  const scripts = new Map<ScriptName, BoundScript>(design.scripts.map((s) => [s.name, { spec: s, latency: metrics.latency(s.name) }]));
  const identityScript = scripts.get('identity-limits') ?? null;
  // everything a request would otherwise work out again: keys, arguments, metric series
  const rules: ActiveRule[] = RULES.map((spec, index) => {
    const key = parseKeyPattern(spec.key);
    const periodSlot = key.some((p) => typeof p !== 'string' && p.slot === 'period');
    return {
      spec,
      index,
      routes: new Set(spec.routes),
      key,
      periodSlot,
      // a field of an identity hash counts its window in the value: its key names none
      shape: spec.window === null || spec.field !== null ? keyShape(prefix, key) : null,
      fixedKey: spec.identity === 'global' && (spec.window === null || spec.field !== null) ? renderKey(prefix, key, null, '') : null,
      fallbackLabels: fallbackLabelsOf(identityLabelOf(key)),
      costs: new Map(spec.costByEndpoint),
      script: spec.store === 'redis' ? (scripts.get(spec.script) ?? null) : null,
      ...gcraOf(spec),
      joins: spec.field !== null,
      metrics: metrics.rule(spec),
      policyWindow: policyWindowSeconds(spec),
      limitHeader: limitHeader(design.headerConvention, spec, policyWindowSeconds(spec)),
      limitWindow: policyWindowSeconds(spec),
    };
  });
  const routeTable = new RouteTable<Applicable>(design.routes.map(compileRoute), (match) => {
    const owner = match.best ?? null;
    const endpoint = match.endpoint;
    const applied: AppliedRule[] = rules
      .filter((r) => (owner !== null && r.routes.has(owner.index)) || match.wildcards.some((w) => r.routes.has(w.index)))
      .map((rule) => {
        const cost = (endpoint !== null ? rule.costs.get(endpoint) : undefined) ?? rule.spec.costDefault;
        return { rule, cost, incrementArg: rule.spec.script === 'gcra' ? String(cost * rule.interval) : '' };
      });
    return {
      exempt: match.exempt,
      anonymous: match.anonymous,
      rules: applied,
      fallbackModes: applied.map(() => fallbackMode),
      specs: applied.map((a) => a.rule.spec),
      needsUsername: applied.some((a) => a.rule.spec.identity === 'username'),
    };
  });
  // the integer-reply variants when the client has them (see RedisClientLike)
  const evalsha = redis ? (redis.evalshaBuffer ?? redis.evalsha).bind(redis) : null;
  const evalScript = redis ? (redis.evalBuffer ?? redis.eval).bind(redis) : null;
  const memory = new MemoryStore();
  const deadlines = new Deadlines(expire);
  const local = HYBRID !== null && options.hybrid !== false ? new LocalBuckets(Math.max(1, HYBRID.localBurst), 100000) : null;
  let period: { id: string; start: number; end: number } | null = null;
  // allowlist, deny list and penalty box: checked before any rule (access.ts, penalty.ts)
  const penalty = createPenaltyBox(design, redis ?? null, prefix, timeoutMs, options.onStoreError, metrics.access.penaltyBox);
  const gate = createGate(design.access, design.docsUrl, clientOf, penalty, metrics.access);
  const fallback = design.access?.memoryFallback === true ? new MemoryFallback() : null;

  /**
   * The window a window rule counts in: the calendar period of the plan's zone (quotas), a
   * plain fixed window aligned on the epoch (id = its index), or none for rolling windows
   * (the script buckets those itself). One clock reading gives both the id and the end.
   */
  function windowOf(spec: RuleSpec): Window {
    const now = clock();
    if (spec.window === 'calendar' && QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'calendar') {
      if (period === null || now < period.start || now >= period.end) {
        period = calendarPeriod(now, QUOTA_PERIOD.period, QUOTA_PERIOD.timeZone);
      }
      return period;
    }
    if (spec.window === 'rolling') return { id: 'rolling', end: 0 };
    const periodMs = spec.periodSeconds * 1000;
    const index = Math.floor(now / periodMs);
    return { id: 'w' + index, end: (index + 1) * periodMs };
  }

  /**
   * The window a rule's headers and bodies state: a calendar quota's current period, measured
   * (a month is 28 to 31 days, a day 23 to 25 hours across a daylight-saving change), from the
   * end of the window the step counted in; every other rule's policy window.
   */
  function windowSecondsOf(rule: ActiveRule, windowEnd: number): number {
    if (rule.spec.window !== 'calendar' || windowEnd <= 0) return rule.policyWindow;
    let p = period;
    if ((p === null || p.end !== windowEnd) && QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'calendar') {
      p = calendarPeriod(windowEnd - 1, QUOTA_PERIOD.period, QUOTA_PERIOD.timeZone);
    }
    return p === null ? rule.policyWindow : Math.round((p.end - p.start) / 1000);
  }

  /** The limit header of a rule for a window length: kept per rule (calendar quotas: per period). */
  function limitHeaderOf(rule: ActiveRule, windowSeconds: number): readonly [string, string] {
    if (rule.limitWindow !== windowSeconds) {
      rule.limitHeader = limitHeader(convention, rule.spec, windowSeconds);
      rule.limitWindow = windowSeconds;
    }
    return rule.limitHeader;
  }

  function stated(rule: ActiveRule, s: Shown): StatedState {
    return { id: rule.spec.id, limitHeader: limitHeaderOf(rule, s.windowSeconds), s };
  }

  const unavailableBody = JSON.stringify(unavailableFields(design.docsUrl, design.storeUnavailableRetryAfterSeconds));

  function modeOf(spec: RuleSpec): RuleMode {
    const chosen = modeHook ? modeHook(spec.id, spec.flag) : undefined;
    return chosen !== undefined && MODES.indexOf(chosen) >= 0 ? chosen : fallbackMode;
  }

  /**
   * The key of a rule for this request, or null when the rule does not apply to the caller
   * (no usable identity). Own identity: the rule's identity if known, else API key > user >
   * tenant > session > client IP (a fallback identity brings its own label). Never the client
   * IP for a quota, nor on a route whose endpoint allows anonymous callers: an anonymous
   * caller there is the per-IP row's, sized for a shared address, not a plan's.
   */
  function keyFor(rule: ActiveRule, request: RequestState<TReq>, win: Window | null): string | null {
    const spec = rule.spec;
    if (rule.fixedKey !== null) return rule.fixedKey;
    const identity = request.identity;
    let label: string | null = null;
    let value: string;
    switch (spec.identity) {
      case 'global':
        return windowKey(rule, null, rule.joins ? null : win);
      case 'ip':
        value = ipOf(request);
        break;
      case 'username': {
        const username = textOf(identity.username);
        const userId = textOf(identity.userId);
        const sessionId = textOf(identity.sessionId);
        if (username !== undefined) value = usernameKey(username);
        else if (userId !== undefined) {
          // no account name in the request (an MFA or reset-confirm step): the account the
          // session already belongs to, from identify()
          label = IDENTITY_LABEL.user;
          value = usernameKey(userId);
        } else if (sessionId !== undefined) {
          label = IDENTITY_LABEL.session;
          value = usernameKey(sessionId);
        } else return null;
        break;
      }
      default: {
        const own = identityValue(spec.identity, identity);
        if (own !== undefined) {
          value = keyPart(own);
          break;
        }
        // counted by another identity: under the rule's own label and that identity's (fallbackLabel),
        // never under a key a rule keyed on that identity uses
        let found: string | null = null;
        for (const kind of FALLBACK_ORDER) {
          if (kind === 'ip') {
            // a quota belongs to an account: a caller known only by address has none; where the
            // endpoint allows anonymous callers, the per-IP row counts them
            if (spec.tier === 'quota' || request.anonymousRoute) return null;
            label = rule.fallbackLabels.ip;
            found = ipOf(request);
            break;
          }
          const v = identityValue(kind, identity);
          if (v !== undefined) {
            label = rule.fallbackLabels[kind];
            found = keyPart(v);
            break;
          }
        }
        if (found === null) return null;
        value = found;
      }
    }
    const shape = rule.shape;
    if (shape !== null) return shape.head + (label ?? shape.label) + value + shape.tail;
    return windowKey(rule, { label, value }, rule.joins ? null : win);
  }

  /** renderKey for the patterns keyShape leaves alone, window id included. */
  function windowKey(rule: ActiveRule, slot: Slot | null, win: Window | null): string {
    if (win === null) return renderKey(prefix, rule.key, slot, '');
    const key = renderKey(prefix, rule.key, slot, win.id);
    return rule.periodSlot ? key : key + ':' + win.id;
  }

  /** The client IP, worked out at most once per request (only rules keyed on it, and the access lists, need it). */
  function ipOf(request: RequestState<TReq>): string {
    return clientOf(request).key;
  }

  /** A rolling window's length in whole days (one bucket per UTC day), at least one. */
  function rollingDays(spec: RuleSpec): number {
    const windowMs = QUOTA_PERIOD !== null && QUOTA_PERIOD.kind === 'rolling' ? QUOTA_PERIOD.days * DAY_MS : spec.periodSeconds * 1000;
    return Math.max(1, Math.ceil(windowMs / DAY_MS));
  }

  function scriptArgs(step: Step): (string | number)[] {
    const first = step.rules[0] as ActiveRule;
    const spec = first.spec;
    if (step.combined) {
      // identity-limits.lua: the identity's hash, then per limit its field, kind and numbers
      const args: (string | number)[] = [step.keys[0] ?? ''];
      for (let i = 0; i < step.rules.length; i++) {
        const r = step.rules[i] as ActiveRule;
        const cost = (step.costs as number[])[i] ?? 1;
        if (r.spec.script === 'gcra') args.push(r.spec.field as string, 'g', r.tolerance, cost * r.interval);
        else if (r.spec.window === 'rolling') args.push(r.spec.field as string, 'r', r.spec.limit, DAY_MS, rollingDays(r.spec), cost);
        else args.push(r.spec.field as string, 'w', r.spec.limit, (step.windowEnds as number[])[i] ?? 0, cost);
      }
      return args;
    }
    if (spec.script === 'gcra') return [step.keys[0] ?? '', first.toleranceArg, step.incrementArg, first.intervalArg];
    // (the other scripts take per-request windows and key counts)
    const args: (string | number)[] = step.keys.slice();
    if (spec.script === 'sliding-window-log') {
      for (const r of step.rules) args.push(r.spec.limit, r.spec.periodSeconds * 1000);
      args.push(step.cost);
      return args;
    }
    if (spec.window === 'rolling') {
      args.push('rolling', spec.limit, step.cost, rollingDays(spec) * DAY_MS, DAY_MS);
      return args;
    }
    args.push('calendar', spec.limit, step.cost, step.windowEnd, 60000);
    return args;
  }

  /**
   * One script call: EVALSHA; on NOSCRIPT (first call on this server, or after SCRIPT FLUSH
   * or a failover) EVAL with the source, which Redis then caches for the next EVALSHA.
   * Fails with StoreError('timeout') when no reply came within timeoutMs.
   * argv: the keys, then the arguments. The listener hears the outcome, once.
   */
  function callRedis(script: BoundScript, numKeys: number, argv: readonly (string | number)[], listener: StoreListener): void {
    const started = performance.now();
    // the command goes out first, the bookkeeping after: a promise settles no earlier than
    // the next microtask, so nothing is missed, and calls made back to back reach the store
    // back to back
    const sent = (evalsha as NonNullable<typeof evalsha>)(script.spec.sha1, numKeys, ...argv);
    const call = new StoreCall(script, numKeys, argv, listener, started, started + timeoutMs);
    deadlines.add(call);
    sent.then(
      (raw) => replied(call, raw),
      (error: unknown) => failed(call, error),
    );
  }

  /** The same call for code that wants a promise (the in-process bucket's charges). */
  function callRedisPromise(script: BoundScript, numKeys: number, argv: readonly (string | number)[]): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => callRedis(script, numKeys, argv, { stored: resolve, failed: reject }));
  }

  /** Marks the call settled and records its latency; false when it had settled already. */
  function settle(call: StoreCall): boolean {
    if (call.settled) return false;
    call.settled = true;
    deadlines.remove(call);
    // a call sent and answered within one checkpoint may predate the shared reading: 0 ms
    call.script.latency.observe(Math.max(0, replyTime() - call.started));
    return true;
  }

  function replied(call: StoreCall, raw: unknown): void {
    if (!settle(call)) return;
    let reply: Reply;
    try {
      reply = toReply(raw, call.script.spec.name === 'gcra' ? call.argv : undefined);
    } catch (error) {
      call.listener.failed(error);
      return;
    }
    call.listener.stored(reply);
  }

  function failed(call: StoreCall, error: unknown): void {
    if (call.settled) return;
    if (isNoScript(error)) {
      (evalScript as NonNullable<typeof evalScript>)(call.script.spec.source, call.numKeys, ...call.argv).then(
        (raw) => replied(call, raw),
        (again: unknown) => {
          if (settle(call)) call.listener.failed(again);
        },
      );
      return;
    }
    if (settle(call)) call.listener.failed(error);
  }

  function expire(call: StoreCall): void {
    if (settle(call)) call.listener.failed(new StoreError('timeout', 'rate limiter store did not answer within ' + timeoutMs + ' ms'));
  }

  /**
   * Runs one step's script: the reply at once (state in this process, or the in-process
   * bucket answering), a promise of it (the in-process bucket asking Redis), or null when
   * Redis was asked and the listener will hear the reply.
   */
  function execute(step: Step, listener: StoreListener): Reply | Promise<Reply> | null {
    const first = step.rules[0] as ActiveRule;
    const argv = scriptArgs(step);
    const numKeys = step.keys.length;
    if (first.spec.store === 'memory') {
      return memory.run(step.combined ? 'identity-limits' : first.spec.script, step.keys, argv.slice(numKeys));
    }
    const script = step.combined ? identityScript : first.script;
    if (!script) throw new StoreError('script', 'rate limiter: no script for rule ' + first.spec.id);
    if (local && first.spec.hybrid && !step.combined) {
      return local.decide(
        step.keys[0] ?? '',
        step.cost,
        (cost) => {
          // gcra.lua's increment for the tokens the local bucket charges (key, tolerance, increment, interval)
          const withCost = argv.slice();
          withCost[2] = String(cost * first.interval);
          return callRedisPromise(script, 1, withCost);
        },
        (error) => {
          first.metrics.failures[failureReason(error)].inc();
          options.onStoreError?.(error, [first.spec.id]);
        },
      );
    }
    callRedis(script, numKeys, argv, listener);
    return null;
  }

  /** identity-limits: ms until a window rule's window ends, on this process's clock (which named the window). */
  function windowReset(step: Step, i: number): number {
    return Math.max(0, ((step.windowEnds as number[])[i] ?? 0) - clock());
  }

  /**
   * identity-limits: where limit i's values start in a reply ({denied_by, then per limit its
   * values}: one for a bucket or a counter, three for a rolling window: used, wait, reset).
   */
  function valueIndex(step: Step, i: number): number {
    let at = 1;
    for (let j = 0; j < i; j++) at += (step.rules[j] as ActiveRule).spec.window === 'rolling' ? 3 : 1;
    return at;
  }

  /**
   * identity-limits: how long limit i of a reply asks the request to wait, in ms: 0 when it
   * has room, -1 when the cost can never fit. The script replies with each limit's state (v),
   * and the rule's numbers give the rest, by gcra.lua's and fixed-window.lua's own formulas;
   * a rolling window's wait is the script's own (the server's clock names its buckets).
   */
  function combinedWait(step: Step, reply: Reply, i: number): number {
    const r = step.rules[i] as ActiveRule;
    const at = valueIndex(step, i);
    const v = reply[at] ?? 0;
    const cost = (step.costs as number[])[i] ?? 1;
    if (r.spec.window === 'rolling') return reply[at + 1] ?? 0;
    if (r.spec.script === 'gcra') {
      const over = v + cost * r.interval - r.tolerance;
      if (over <= 0) return 0;
      return cost > (r.spec.burst ?? r.spec.limit) ? -1 : Math.ceil(over / 1000);
    }
    if (v + cost <= r.spec.limit) return 0;
    return cost > r.spec.limit ? -1 : Math.max(1, windowReset(step, i));
  }

  /** identity-limits: the refusing limit that binds (the longest wait; never = longest), or -1 when admitted. */
  function combinedBinding(step: Step, reply: Reply): number {
    if (reply[0] === 0) return -1;
    let binding = -1;
    let longest = 0;
    for (let i = 0; i < step.rules.length; i++) {
      const wait = combinedWait(step, reply, i);
      if (wait === 0) continue;
      if (binding < 0 || (longest !== -1 && (wait === -1 || wait > longest))) {
        binding = i;
        longest = wait;
      }
    }
    return binding < 0 ? Math.max(0, (reply[0] ?? 1) - 1) : binding;
  }

  /** identity-limits: the outcome of limit i, from its state in the reply. */
  function combinedOutcome(step: Step, reply: Reply, i: number, isBinding: boolean, source: RuleOutcome['source']): RuleOutcome {
    const r = step.rules[i] as ActiveRule;
    const at = valueIndex(step, i);
    const v = Math.max(0, reply[at] ?? 0);
    const gcra = r.spec.script === 'gcra';
    return {
      ruleId: r.spec.id,
      mode: step.mode,
      allowed: !isBinding,
      remaining: gcra ? Math.max(0, Math.floor((r.tolerance - v) / r.interval)) : Math.max(0, r.spec.limit - v),
      resetMs: gcra ? Math.ceil(v / 1000) : r.spec.window === 'rolling' ? Math.max(0, reply[at + 2] ?? 0) : windowReset(step, i),
      retryAfterMs: isBinding ? combinedWait(step, reply, i) : 0,
      source,
    };
  }

  /** What this limiter's evaluations read (evaluation.ts): one object, the same shape for every limiter. */
  const context: EvaluationContext = {
    convention,
    docsUrl: design.docsUrl,
    storeUnavailableRetryAfterSeconds: design.storeUnavailableRetryAfterSeconds,
    unavailableBody,
    hasLocal: local !== null,
    fallback,
    metrics,
    onStoreError: (error, ruleIds) => options.onStoreError?.(error, ruleIds),
    execute,
    scriptArgs,
    combinedBinding,
    combinedOutcome,
    windowSecondsOf,
    stated,
  };

  const EXEMPT: Decision = { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: true, outcomes: [] };
  const NO_MODES: readonly RuleMode[] = [];
  const NOTHING: Decision = { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: false, outcomes: [] };

  /**
   * A request's decision, to the sink. What the request needs is worked out inside a try; the
   * sink is called outside it, so a sink that throws is never called a second time.
   */
  function decide(input: LimiterInput<TReq>, sink: DecisionSink): void {
    let applicable: Applicable;
    let modes: readonly RuleMode[] = NO_MODES;
    // set when the request needs no evaluation (an exempt route, every rule off)
    let ready: Decision | null = null;
    let given: RequestIdentity | Promise<RequestIdentity | undefined> | undefined;
    try {
      applicable = routeTable.lookup(upperCase(input.method), input.url);
      if (applicable.exempt) ready = EXEMPT;
      else {
        const applied = applicable.rules;
        // the kill switch of each rule; identify() is only asked when some rule is on
        let on = false;
        if (modeHook) {
          const chosen: RuleMode[] = [];
          for (const a of applied) {
            const mode = modeOf(a.rule.spec);
            chosen.push(mode);
            if (mode !== 'off') on = true;
          }
          modes = chosen;
        } else {
          // no hook: every rule runs in the default mode, the same array for every request
          modes = applicable.fallbackModes;
          on = applied.length > 0 && fallbackMode !== 'off';
        }
        if (!on && gate === null) ready = NOTHING;
        else if (identify) given = identify(input.req);
      }
    } catch (error) {
      sink.failed(error);
      return;
    }
    if (ready !== null) sink.decided(ready);
    else if (isPromiseLike(given)) {
      given.then(
        (identity) => evaluate(input, applicable, modes, identity ?? NO_IDENTITY, sink),
        (error: unknown) => sink.failed(error),
      );
    } else evaluate(input, applicable, modes, given ?? NO_IDENTITY, sink);
  }

  /** What a sink would hear, as a promise (check(), and the access lists, which take promises). */
  function promised(run: (sink: DecisionSink) => void): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => run({ decided: resolve, failed: reject }));
  }

  function check(input: LimiterInput<TReq>): Promise<Decision> {
    return promised((sink) => decide(input, sink));
  }

  /** The steps of a request (each rule's key; dual-key auth rows joined), then their evaluation. */
  function evaluate(
    input: LimiterInput<TReq>,
    applicable: Applicable,
    modes: readonly RuleMode[],
    given: RequestIdentity,
    sink: DecisionSink,
  ): void {
    if (gate === null) {
      evaluateRules(input, null, applicable, modes, given, sink);
      return;
    }
    // the access lists and the rules share the request's client (worked out at most once)
    const memo: ClientMemo<TReq> = { input, client: null };
    let decided: Promise<Decision>;
    try {
      decided = gate.run(memo, given, applicable.specs, modes, (m) =>
        promised((rules) => evaluateRules(input, memo.client, applicable, m, given, rules)),
      );
    } catch (error) {
      sink.failed(error);
      return;
    }
    decided.then(
      (decision) => sink.decided(decision),
      (error: unknown) => sink.failed(error),
    );
  }

  function evaluateRules(
    input: LimiterInput<TReq>,
    client: Client | null,
    applicable: Applicable,
    modes: readonly RuleMode[],
    given: RequestIdentity,
    sink: DecisionSink,
  ): void {
    let evaluation: Evaluation;
    try {
      evaluation = evaluationOf(input, client, applicable, modes, given, sink);
    } catch (error) {
      sink.failed(error);
      return;
    }
    evaluation.run();
  }

  /** The steps of a request (each rule's key; dual-key auth rows joined), as an Evaluation that tells the sink. */
  function evaluationOf(
    input: LimiterInput<TReq>,
    client: Client | null,
    applicable: Applicable,
    modes: readonly RuleMode[],
    given: RequestIdentity,
    sink: DecisionSink,
  ): Evaluation {
    let identity = given;
    if (applicable.needsUsername && textOf(identity.username) === undefined) {
      identity = { ...identity, username: usernameOfRequest(input) };
    }
    const plan = identity.plan ?? defaultPlan;
    const request: RequestState<TReq> = { input, identity, plan, client, anonymousRoute: applicable.anonymous };
    const applied = applicable.rules;
    // security rules stay silent: when one applies, no rate-limit headers at all
    let silent = false;
    const steps: Step[] = [];
    for (let i = 0; i < applied.length; i++) {
      const mode = modes[i];
      if (mode === 'off' || mode === undefined) continue;
      const { rule, cost, incrementArg } = applied[i] as AppliedRule;
      const spec = rule.spec;
      if (spec.headers === 'silent') silent = true;
      if (spec.plan !== null && spec.plan !== plan) continue;
      const win = spec.window === null ? null : windowOf(spec);
      const key = keyFor(rule, request, win);
      if (key === null) continue;
      const windowEnd = win === null ? 0 : win.end;
      if (spec.script === 'sliding-window-log') {
        // dual-key auth: the logs of one flow share a hash tag and are checked in ONE call
        const tag = hashTag(key);
        const partner =
          tag === null
            ? undefined
            : steps.find((s) => {
                const other = (s.rules[0] as ActiveRule).spec;
                return (
                  s.tag === tag && s.mode === mode && s.cost === cost && other.script === 'sliding-window-log' && other.store === spec.store
                );
              });
        if (partner) {
          partner.rules.push(rule);
          partner.keys.push(key);
        } else {
          steps.push(newStep(rule, key, mode, cost, incrementArg, tag, windowEnd, false, 0));
        }
        continue;
      }
      const wave = spec.tier === 'quota' ? 1 : 0;
      // the limits of one identity kept in its hash: one identity-limits call, all or nothing
      const partner = rule.joins
        ? steps.find((s) => s.combined && s.keys[0] === key && s.mode === mode && (s.rules[0] as ActiveRule).spec.store === spec.store)
        : undefined;
      if (partner) {
        partner.rules.push(rule);
        (partner.costs as number[]).push(cost);
        (partner.windowEnds as number[]).push(windowEnd);
        if (wave > partner.wave) partner.wave = wave;
      } else {
        steps.push(newStep(rule, key, mode, cost, incrementArg, null, windowEnd, rule.joins, wave));
      }
    }
    // the checks of different identities go out together; a quota's only once every rate limit has admitted
    if (steps.length > 1 && steps.some((s) => s.wave > 0)) steps.sort((a, b) => a.wave - b.wave);
    return new Evaluation(context, steps, silent, plan, sink);
  }

  return {
    check,
    decide,
    needsUsername: (method, url) => routeTable.lookup(upperCase(method), url).needsUsername,
    clientIp: (remoteAddress, forwardedFor) => resolveClientIp(remoteAddress, forwardedFor, trusted, ipv6Prefix),
    rules: RULES,
    close: () => {
      local?.clear();
      memory.clear();
      fallback?.clear();
      penalty?.clear();
      deadlines.clear();
    },
  };
}

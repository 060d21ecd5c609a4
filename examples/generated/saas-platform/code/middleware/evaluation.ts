// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * One request's evaluation: its steps sent to the store, their replies read into a decision.
 * The classes live at module level, not inside createLimiter, so every limiter of a process
 * shares them: two limiters (two designs, or a test's many) would otherwise each make their
 * own class, and the code they share would see objects of several shapes and run slower.
 * What a limiter knows (its header convention, its scripts, its metrics) comes in the
 * EvaluationContext it passes.
 */
import type { MemoryFallback } from './fallback.js';
import { fallbackReplies } from './fallback.js';
import type { KeyPiece, KeyShape } from './keys.js';
import { localReplies } from './local-bucket.js';
import type { Metrics, RuleMetrics } from './metrics.js';
import { PROBLEM_JSON, problemFields, quotaExceededHeader, rateLimitHeaders, retryAfterSeconds, shown, tighter } from './responses.js';
import type { Shown, StatedState } from './responses.js';
import { failureReason } from './store.js';
import type { BoundScript, Reply, StoreListener } from './store.js';
import type { Decision, DecisionSink, HeaderConvention, IdentityKind, RuleOutcome, RuleSpec } from './types.js';

/** A rule of the design, with what a request would otherwise work out again. */
export interface ActiveRule {
  readonly spec: RuleSpec;
  readonly index: number;
  readonly routes: ReadonlySet<number>;
  readonly key: readonly KeyPiece[];
  /** Whether the key pattern names the window (<yyyy-mm>); if not, the window id is appended. */
  readonly periodSlot: boolean;
  /** The key split around its identity slot, for rules without a window (see keyShape). */
  readonly shape: KeyShape | null;
  /** The key of a global rule without a window: the same for every request. */
  readonly fixedKey: string | null;
  /** The label each identity a caller may be counted by instead takes in this rule's key (fallbackLabel). */
  readonly fallbackLabels: Readonly<Record<IdentityKind, string>>;
  readonly costs: ReadonlyMap<string, number>;
  readonly script: BoundScript | null;
  /** GCRA: the emission interval and the bucket's depth (burst intervals), microseconds (gcraNumbers). */
  readonly interval: number;
  readonly tolerance: number;
  /** The same two as the strings gcra.lua takes. */
  readonly toleranceArg: string;
  readonly intervalArg: string;
  /** Whether its state is a field of its identity's hash (the design's choice): checked by identity-limits. */
  readonly joins: boolean;
  readonly metrics: RuleMetrics;
  /** The window its policy states (policyWindowSeconds); calendar quotas measure their period instead. */
  readonly policyWindow: number;
  /** The header stating its limit, for the window limitWindow (rebuilt when a calendar period changes length). */
  limitHeader: readonly [string, string];
  limitWindow: number;
}

export interface Step {
  readonly rules: ActiveRule[];
  readonly keys: string[];
  readonly mode: 'enforce' | 'shadow';
  readonly cost: number;
  /** gcra.lua's increment (AppliedRule.incrementArg). */
  readonly incrementArg: string;
  readonly tag: string | null;
  /** Window rules: end of the window the key names (epoch ms), from the same clock reading. */
  readonly windowEnd: number;
  /** identity-limits: every limit of one identity in one call; then, per rule, its cost and window end. */
  combined: boolean;
  costs: number[] | null;
  windowEnds: number[] | null;
  /** 1 for a step that holds a quota (it goes once every rate limit has admitted), else 0. */
  wave: number;
}

/**
 * A request's step for its first rule, every Step built here so all have one shape; rules of the
 * same call join it later (a dual-key flow's second log, an identity's other limits).
 */
export function newStep(
  rule: ActiveRule,
  key: string,
  mode: 'enforce' | 'shadow',
  cost: number,
  incrementArg: string,
  tag: string | null,
  windowEnd: number,
  combined: boolean,
  wave: number,
): Step {
  return {
    rules: [rule],
    keys: [key],
    mode,
    cost,
    incrementArg,
    tag,
    windowEnd,
    combined,
    costs: combined ? [cost] : null,
    windowEnds: combined ? [windowEnd] : null,
    wave,
  };
}

/** What an evaluation needs from its limiter. */
export interface EvaluationContext {
  readonly convention: HeaderConvention;
  readonly docsUrl: string;
  readonly storeUnavailableRetryAfterSeconds: number;
  /** The 503 body when a fail-closed rule's store failed. */
  readonly unavailableBody: string;
  /** Whether the in-process bucket is on (its replies are marked 'local'). */
  readonly hasLocal: boolean;
  readonly fallback: MemoryFallback | null;
  readonly metrics: Metrics;
  readonly onStoreError: ((error: unknown, ruleIds: readonly string[]) => void) | undefined;
  /** Runs a step's script: the reply now, a promise of it, or null when the listener will hear it. */
  execute(step: Step, listener: StoreListener): Reply | Promise<Reply> | null;
  scriptArgs(step: Step): (string | number)[];
  combinedBinding(step: Step, reply: Reply): number;
  combinedOutcome(step: Step, reply: Reply, i: number, isBinding: boolean, source: RuleOutcome['source']): RuleOutcome;
  windowSecondsOf(rule: ActiveRule, windowEnd: number): number;
  stated(rule: ActiveRule, s: Shown): StatedState;
}

export function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * One request's decision in the making. Its steps (one per identity: every limit of an
 * identity is one script call) go out together, in at most two waves: the steps that hold
 * a quota only once every rate limit has admitted the request, so a quota unit is never
 * spent on a request a rate limit refuses. The replies of a wave are read in step order,
 * and each can end the request (429, or 503 when a fail-closed rule's store failed).
 * Driven by callbacks rather than async/await: a request costs no promise of its own (check()
 * wraps the sink in one; Express's adapter takes the decision straight from the sink), not one
 * per store call plus the async function's own, which shows at tens of thousands of decisions
 * per second.
 */
export class Evaluation implements StoreListener {
  private readonly ctx: EvaluationContext;
  private readonly steps: readonly Step[];
  private readonly silent: boolean;
  private readonly plan: string | null;
  private readonly sink: DecisionSink;
  /** The 429 or 503 a step's reply decided (result, failure). */
  private decision: Decision | null = null;
  /** The first step of the wave in progress, and the end of that wave. */
  private at = 0;
  private end = 0;
  /** Steps of the wave still waiting for the store (plus one while the wave is being sent). */
  private pending = 0;
  /** Each step's reply, or its failure (a request of one step keeps them in the fields below). */
  private readonly replies: (Reply | null)[] | null;
  private errors: unknown[] | null = null;
  private reply: Reply | null = null;
  private error: unknown = null;
  private readonly outcomes: RuleOutcome[] = [];
  /** The most constraining client-facing rate rule so far: its headers go on an admitted response. */
  private shownRule: ActiveRule | null = null;
  private shownValues: Shown | null = null;
  /** The plan quota that counted the call, shown beside it. */
  private quotaRule: ActiveRule | null = null;
  private quotaValues: Shown | null = null;

  constructor(ctx: EvaluationContext, steps: readonly Step[], silent: boolean, plan: string | null, sink: DecisionSink) {
    this.ctx = ctx;
    this.steps = steps;
    this.silent = silent;
    this.plan = plan;
    this.sink = sink;
    this.replies = steps.length > 1 ? new Array<Reply | null>(steps.length).fill(null) : null;
  }

  /** Starts the evaluation: the sink hears the decision now or once the store has answered. */
  run(): void {
    this.proceed(false);
  }

  /**
   * Goes on (reading the wave's replies first when they are in) and tells the sink once the
   * request is decided. The sink is called outside the try: a sink that throws is not called again.
   */
  private proceed(replied: boolean): void {
    let decision: Decision | null;
    try {
      decision = replied && this.read() ? this.decision : this.advance();
    } catch (error) {
      this.sink.failed(error);
      return;
    }
    if (decision !== null) this.sink.decided(decision);
  }

  /** Sends each wave's steps together: the decision, or null while a step waits for the store. */
  private advance(): Decision | null {
    const steps = this.steps;
    while (this.at < steps.length) {
      const wave = (steps[this.at] as Step).wave;
      let end = this.at;
      while (end < steps.length && (steps[end] as Step).wave === wave) end++;
      this.end = end;
      this.pending = end - this.at + 1;
      for (let i = this.at; i < end; i++) this.send(i);
      if (--this.pending > 0) return null;
      if (this.read()) return this.decision;
    }
    return this.admitted();
  }

  /** Sends one step: its reply now (in-process state), later (a promise), or to its listener. */
  private send(i: number): void {
    const step = this.steps[i] as Step;
    let reply: Reply | Promise<Reply> | null;
    try {
      reply = this.ctx.execute(step, i === this.at ? this : new StepListener(this, i));
    } catch (error) {
      this.done(i, null, error);
      return;
    }
    if (reply === null) return;
    if (isPromiseLike(reply)) {
      reply.then(
        (r) => this.done(i, r, null),
        (error: unknown) => this.done(i, null, error),
      );
      return;
    }
    this.done(i, reply, null);
  }

  /** A step's reply or failure; the last of its wave reads them all and goes on. */
  done(i: number, reply: Reply | null, error: unknown): void {
    if (this.replies === null) {
      this.reply = reply;
      this.error = error;
    } else if (reply !== null) this.replies[i] = reply;
    else (this.errors ??= [])[i] = error;
    if (--this.pending > 0) return;
    this.proceed(true);
  }

  stored(reply: Reply): void {
    this.done(this.at, reply, null);
  }

  failed(error: unknown): void {
    this.done(this.at, null, error);
  }

  /** The wave's replies in step order. True when one decided the request. */
  private read(): boolean {
    const end = this.end;
    for (let i = this.at; i < end; i++) {
      const step = this.steps[i] as Step;
      const reply = this.replies === null ? this.reply : this.replies[i];
      const decided = reply != null ? this.result(step, reply) : this.failure(step, this.replies === null ? this.error : this.errors?.[i]);
      if (decided) return true;
    }
    this.at = end;
    return false;
  }

  /** A step's reply: outcomes and metrics. True when it decided the request (429). */
  private result(step: Step, reply: Reply): boolean {
    const source = fallbackReplies.has(reply) ? 'fallback' : this.ctx.hasLocal && localReplies.has(reply) ? 'local' : 'store';
    const combined = step.combined;
    const allowed = reply[0] === 1;
    const binding = combined
      ? this.ctx.combinedBinding(step, reply)
      : allowed
        ? -1
        : Math.max(0, (step.rules.length > 1 ? (reply[4] ?? 1) : 1) - 1);
    const remaining = Math.max(0, reply[1] ?? 0);
    const resetMs = Math.max(0, reply[3] ?? 0);
    let denied: RuleOutcome | null = null;
    for (let i = 0; i < step.rules.length; i++) {
      const r = step.rules[i] as ActiveRule;
      const isBinding = i === binding;
      const outcome: RuleOutcome = combined
        ? this.ctx.combinedOutcome(step, reply, i, isBinding, source)
        : {
            ruleId: r.spec.id,
            mode: step.mode,
            allowed: !isBinding,
            remaining,
            resetMs,
            retryAfterMs: isBinding ? (reply[2] ?? 0) : 0,
            source,
          };
      this.outcomes.push(outcome);
      if (!this.silent && r.spec.headers === 'full') {
        const values = shown(r.spec, outcome, this.ctx.windowSecondsOf(r, step.windowEnds?.[i] ?? step.windowEnd));
        if (r.spec.tier === 'quota') {
          if (tighter(values, this.quotaValues)) {
            this.quotaRule = r;
            this.quotaValues = values;
          }
        } else if (tighter(values, this.shownValues)) {
          this.shownRule = r;
          this.shownValues = values;
        }
      }
      if (!isBinding) {
        r.metrics.allowed.inc();
        if (outcome.remaining < r.metrics.nearBelow) r.metrics.nearLimit.inc();
        // past a soft plan quota the call passes flagged (Quota-Exceeded): counted as its refusal is
        const soft = r.spec.quota;
        if (soft !== null && outcome.remaining < r.spec.limit - soft)
          this.ctx.metrics.quotaExhausted(r.spec.id, r.spec.plan ?? this.plan ?? '');
      } else {
        denied = outcome;
        if (step.mode === 'enforce') r.metrics.throttled.inc();
        else r.metrics.shadowThrottled.inc();
      }
    }
    if (denied === null) return false;
    const binder = step.rules[binding] as ActiveRule;
    const rule = binder.spec;
    if (step.mode === 'enforce') binder.metrics.throttledEnforce.inc();
    else binder.metrics.throttledShadow.inc();
    if (rule.tier === 'quota') this.ctx.metrics.quotaExhausted(rule.id, rule.plan ?? this.plan ?? '');
    if (step.mode === 'shadow') return false;
    const retryAfter = retryAfterSeconds(rule, denied);
    const s = shown(rule, denied, this.ctx.windowSecondsOf(binder, step.windowEnds?.[binding] ?? step.windowEnd));
    // a quota's own refusal states the quota (the single-value conventions: in the quota trio too)
    const quota = rule.tier === 'quota' ? binder : null;
    const headers: (readonly [string, string])[] =
      this.silent || rule.headers === 'silent'
        ? []
        : rateLimitHeaders(this.ctx.convention, this.ctx.stated(binder, s), quota === null ? null : this.ctx.stated(quota, s));
    headers.push(['Retry-After', String(retryAfter)]);
    this.decision = {
      status: 429,
      headers,
      body: JSON.stringify(problemFields(this.ctx.docsUrl, rule, s, retryAfter)),
      contentType: PROBLEM_JSON,
      ruleId: rule.id,
      exempt: false,
      outcomes: this.outcomes,
    };
    return true;
  }

  /** A step whose store failed: its rules' fail mode. True when it decided the request (503). */
  private failure(step: Step, error: unknown): boolean {
    const reason = failureReason(error);
    for (const r of step.rules) r.metrics.failures[reason].inc();
    this.ctx.onStoreError?.(
      error,
      step.rules.map((r) => r.spec.id),
    );
    const closed = step.mode === 'enforce' ? step.rules.find((r) => r.spec.failMode === 'closed') : undefined;
    if (this.ctx.fallback?.covers(step.rules)) {
      // fail-open rules with the memory fallback: decided in this process (fallback.ts)
      const script = step.combined ? 'identity-limits' : (step.rules[0] as ActiveRule).spec.script;
      return this.result(step, this.ctx.fallback.run(script, step.keys.length, this.ctx.scriptArgs(step)));
    }
    if (closed) {
      this.decision = {
        status: 503,
        headers: [['Retry-After', String(this.ctx.storeUnavailableRetryAfterSeconds)]],
        body: this.ctx.unavailableBody,
        contentType: PROBLEM_JSON,
        ruleId: closed.spec.id,
        exempt: false,
        outcomes: this.outcomes,
      };
      return true;
    }
    for (const r of step.rules) {
      // availability over enforcement: admitted unchecked, and counted (an alert pages on it)
      if (step.mode === 'enforce') r.metrics.failOpen.inc();
      this.outcomes.push({
        ruleId: r.spec.id,
        mode: step.mode,
        allowed: true,
        remaining: 0,
        resetMs: 0,
        retryAfterMs: 0,
        source: 'store-failed',
      });
    }
    return false;
  }

  /** Every step admitted the request: the headers of the most constraining client-facing rule. */
  private admitted(): Decision {
    let rule = this.shownRule;
    let values = this.shownValues;
    const quota = this.quotaRule;
    const q = this.quotaValues;
    // the single-value conventions state the tightest rule, the quota included; structured
    // fields list the rate rule and the quota as two items
    if (quota !== null && q !== null && (values === null || (this.ctx.convention !== 'ietf-structured' && tighter(q, values)))) {
      rule = quota;
      values = q;
    }
    if (rule === null || values === null)
      return { status: 200, headers: [], body: null, contentType: null, ruleId: null, exempt: false, outcomes: this.outcomes };
    const headers = rateLimitHeaders(
      this.ctx.convention,
      this.ctx.stated(rule, values),
      quota === null || q === null ? null : this.ctx.stated(quota, q),
    );
    // past a soft plan quota the call still passes: say so
    if (quota !== null && q !== null && q.overQuota > 0) headers.push(quotaExceededHeader(quota.spec.id, q.overQuota));
    return { status: 200, headers, body: null, contentType: null, ruleId: null, exempt: false, outcomes: this.outcomes };
  }
}

/** Hears the store call of a step other than the first of its wave. */
export class StepListener implements StoreListener {
  private readonly evaluation: Evaluation;
  private readonly index: number;

  constructor(evaluation: Evaluation, index: number) {
    this.evaluation = evaluation;
    this.index = index;
  }

  stored(reply: Reply): void {
    this.evaluation.done(this.index, reply, null);
  }

  failed(error: unknown): void {
    this.evaluation.done(this.index, null, error);
  }
}

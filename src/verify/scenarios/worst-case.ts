/**
 * The worst case, measured: the most one identity gets admitted within one period, sent as
 * fast as the shipped runtime answers, against the formula of the worst-case table for the
 * numbers run. Four cases run here:
 *  - a GCRA bucket (every algorithm the middleware runs as GCRA, with the burst it runs with):
 *    the whole burst at once, then every token as soon as it comes back (each refusal waits its
 *    Retry-After), for one period: at most burst + rate x period;
 *  - a fixed window: the limit just before a window boundary and again just after it, then
 *    more until one window length has passed since the first request: at most 2 x limit;
 *  - the local + Redis hybrid: the same as the bucket, from several instances at once (one
 *    limiter with its own local buckets per connection): at most burst + rate x period + N x
 *    local burst;
 *  - the memory fallback (fallbackCase, run by the store outage while the server is down): the
 *    bucket or the window from N instances at once, each counting in its own memory: at most N x
 *    the per-counter worst case.
 * Numbers are scaled down (a period of WORST_CASE_PERIOD_MS, at most MAX_WORST_CASE units) so
 * a run takes about a second a case; time is never faked: every wait is real and every count
 * comes from the scripts on the store's clock. A request counts when it was sent within the
 * period of the first, so what is measured can only err towards more, never less. What a case
 * is held to is the design's own figure (design/worst-case.ts) for the rule with the numbers
 * run, never a formula of verify's.
 */
import { performance } from 'node:perf_hooks';
import { runBurst } from '../../design/algorithms.js';
import type { Algorithm, MatrixRule, WorstCaseMeasurement } from '../../design/model.js';
import { inMemoryFallback, perCounter, periodWords, type WorstCaseFigure, withLocalBuckets } from '../../design/worst-case.js';
import type { HybridSpec } from '../../runtime/middleware/types.js';
import type { Verdict } from '../runtime.js';
import { bucketShape, CALENDAR_SLACK_MS, formatMs, type Shape } from '../shapes.js';
import { errorOf, type Outcome, plural, type RuleContext, sleep } from './context.js';

/** The period every case runs in, ms. */
export const WORST_CASE_PERIOD_MS = 1000;
/** The largest burst, rate or window limit a case runs with. */
export const MAX_WORST_CASE = 10;
/** How long before a window boundary the fixed-window case starts, ms. */
const BEFORE_BOUNDARY_MS = 200;

function n(x: number): string {
  return x.toLocaleString('en-US');
}

/** The per-counter figure of a rule: the design's (perCounter), or another to hold the measurement to. */
export type FigureOf = (rule: MatrixRule & { rate: { requests: number; periodSeconds: number }; algorithm: Algorithm }) => WorstCaseFigure;

/** The rule with the numbers a case runs (its algorithm and layer kept), for the design's figure. */
function ruleRun(rule: RuleContext['rule'], shape: Shape): Parameters<FigureOf>[0] {
  return {
    ...rule,
    algorithm: rule.algorithm as Algorithm,
    rate: { requests: shape.limit, periodSeconds: shape.periodMs / 1000 },
    burst: shape.burst,
  };
}

/** The bucket a rule's worst case runs with: its own when small and fast, else scaled. */
export function worstCaseBucket(rule: RuleContext['rule']): Shape {
  const burst = runBurst(rule) as number;
  const rate = rule.rate!.requests;
  const periodMs = rule.rate!.periodSeconds * 1000;
  const own = `burst ${n(burst)}, ${n(rate)} per ${formatMs(periodMs)}`;
  if (burst <= MAX_WORST_CASE && rate <= MAX_WORST_CASE && Number.isInteger(rate) && periodMs <= WORST_CASE_PERIOD_MS)
    return bucketShape('gcra', { burst, rate, periodMs });
  const b = Math.min(burst, MAX_WORST_CASE);
  const r = Math.max(1, Math.min(MAX_WORST_CASE, Math.round((rate * b) / burst)));
  return bucketShape(
    'gcra',
    { burst: b, rate: r, periodMs: WORST_CASE_PERIOD_MS },
    `scaled to burst ${n(b)}, ${n(r)} per ${formatMs(WORST_CASE_PERIOD_MS)} (the rule: ${own})`,
  );
}

/** The fixed window a rule's worst case runs with: an aligned window of WORST_CASE_PERIOD_MS, the limit at most MAX_WORST_CASE. */
export function worstCaseWindow(rule: RuleContext['rule']): Shape {
  const limit = Math.min(Math.floor(rule.rate!.requests), MAX_WORST_CASE);
  const own = `${n(rule.rate!.requests)} per ${rule.rate!.periodText ?? periodWords(rule.rate!.periodSeconds)}`;
  const scaled = limit !== rule.rate!.requests || rule.rate!.periodSeconds * 1000 !== WORST_CASE_PERIOD_MS || rule.tier === 'quota';
  return {
    driver: 'fixed-window',
    script: 'fixed-window',
    capacity: limit,
    limit,
    periodMs: WORST_CASE_PERIOD_MS,
    burst: null,
    window: 'fixed',
    maxTtlMs: WORST_CASE_PERIOD_MS + CALENDAR_SLACK_MS,
    recoverMs: WORST_CASE_PERIOD_MS,
    params: `${n(limit)} per aligned ${formatMs(WORST_CASE_PERIOD_MS)} window`,
    ...(scaled ? { scaling: `scaled to ${n(limit)} per aligned ${formatMs(WORST_CASE_PERIOD_MS)} window (the rule: ${own})` } : {}),
  };
}

interface Count {
  admitted: number;
  error?: string;
}

/**
 * Sends rounds (each round: one request per sender, at once) until `periodMs` has passed since
 * `t0`, counting admissions; after a round refused entirely, waits the shortest Retry-After.
 */
async function sendFor(t0: number, periodMs: number, round: () => Promise<Verdict[]>, start: Count = { admitted: 0 }): Promise<Count> {
  let admitted = start.admitted;
  while (performance.now() - t0 < periodMs) {
    const verdicts = await round();
    const failed = verdicts.find((v) => v.error !== undefined);
    if (failed) return { admitted, error: `a limiter call failed: ${failed.error}` };
    // a round answered after the period may have been decided after it (a slow round trip on a
    // loaded machine): only what was decided within one period from the start counts
    if (performance.now() - t0 > periodMs) break;
    const ok = verdicts.filter((v) => v.allowed).length;
    admitted += ok;
    if (ok === 0) {
      const waits = verdicts.map((v) => v.retryAfterMs).filter((w) => w > 0);
      const left = t0 + periodMs - performance.now();
      if (left <= 0) break;
      await sleep(Math.max(1, Math.min(left, waits.length ? Math.min(...waits) : 1)));
    }
  }
  return { admitted };
}

function measurement(
  ctx: RuleContext,
  kind: string,
  stated: number,
  count: Count,
  shape: Shape,
  params: string,
): { m: WorstCaseMeasurement; text: string; problem?: string } {
  const passed = count.error === undefined && count.admitted <= stated;
  const m: WorstCaseMeasurement = {
    ruleId: ctx.rule.id,
    kind,
    stated,
    measured: count.admitted,
    passed,
    params,
    ...(shape.scaling ? { scaling: shape.scaling } : {}),
  };
  const label = kind === 'hybrid' ? 'hybrid: ' : kind === 'memory-fallback' ? 'memory fallback: ' : '';
  const text = `${label}${plural(count.admitted, 'request')} admitted within ${formatMs(shape.periodMs)}, at most ${n(stated)} stated`;
  const problem =
    count.error ?? (count.admitted > stated ? `${label}${n(count.admitted)} admitted, more than the ${n(stated)} stated` : undefined);
  return { m, text, ...(problem ? { problem } : {}) };
}

/** A GCRA bucket: held to the design's figure for the bucket run (burst + rate x period). */
async function bucketCase(ctx: RuleContext, shape: Shape, figure: WorstCaseFigure): Promise<ReturnType<typeof measurement>> {
  const probe = ctx.probe(shape, 'worst-case');
  const t0 = performance.now();
  const count = await sendFor(t0, shape.periodMs, async () => [await probe.call(1)]);
  return measurement(ctx, 'rule', figure.worstCase, count, shape, `${shape.params}: ${figure.formula}`);
}

/** The hybrid: the bucket from `instances` limiters at once, each with its local buckets. */
async function hybridCase(
  ctx: RuleContext,
  shape: Shape,
  base: WorstCaseFigure,
  localBurst: number,
): Promise<ReturnType<typeof measurement>> {
  const instances = ctx.store.pool.length;
  const lb = Math.max(1, Math.min(localBurst, shape.capacity));
  const hybrid: HybridSpec = { localBurst: lb, instances, overAdmission: lb * instances };
  const probe = ctx.probe(shape, 'worst-case-hybrid', { pool: true, hybrid });
  const figure = withLocalBuckets(base, instances, lb);
  const t0 = performance.now();
  const count = await sendFor(t0, shape.periodMs, () => Promise.all(Array.from({ length: probe.connections }, (_, c) => probe.call(1, c))));
  return measurement(
    ctx,
    'hybrid',
    figure.worstCase,
    count,
    shape,
    `${shape.params}, ${n(instances)} instances x local burst ${n(lb)}: ${figure.formula}`,
  );
}

/**
 * Waits until shortly before a boundary of the aligned windows of length w the runtime counts in
 * (its clock: Date.now), and returns that boundary (epoch ms) and the start time.
 */
async function beforeBoundary(w: number): Promise<{ boundary: number; t0: number }> {
  const pos = Date.now() % w;
  if (pos < w - BEFORE_BOUNDARY_MS) await sleep(w - BEFORE_BOUNDARY_MS - pos);
  const t0 = performance.now();
  return { boundary: Date.now() - (Date.now() % w) + w, t0 };
}

/**
 * Waits until just past `boundary` (a few ms of slack for the clock's granularity), never a later
 * one: on a loaded machine the first burst may already have crossed it, and waiting for the next
 * would count a third window, more than one window length.
 */
async function pastBoundary(boundary: number): Promise<void> {
  const wait = boundary + 5 - Date.now();
  if (wait > 0) await sleep(wait);
}

/** A fixed window: the limit on both sides of a boundary, within one window length; held to the design's figure (2 x limit). */
async function windowCase(ctx: RuleContext, shape: Shape, figure: WorstCaseFigure): Promise<ReturnType<typeof measurement>> {
  const probe = ctx.probe(shape, 'worst-case');
  const w = shape.periodMs;
  const { boundary, t0 } = await beforeBoundary(w);
  const burst = async (): Promise<Count> => {
    let admitted = 0;
    for (let i = 0; i <= shape.limit; i++) {
      const v = await probe.call(1);
      if (v.error) return { admitted, error: `a limiter call failed: ${v.error}` };
      if (!v.allowed) break;
      admitted++;
    }
    return { admitted };
  };
  const before = await burst();
  let count: Count = before;
  if (!before.error) {
    // past the boundary, the next window's limit
    await pastBoundary(boundary);
    const after = await burst();
    count = { admitted: before.admitted + after.admitted, ...(after.error ? { error: after.error } : {}) };
    // and whatever else passes until one window length has gone by since the first request
    if (!count.error) count = await sendFor(t0, w, async () => [await probe.call(1)], count);
  }
  return measurement(ctx, 'rule', figure.worstCase, count, shape, `${shape.params}: ${figure.formula}`);
}

export type CaseResult = ReturnType<typeof measurement>;

/**
 * The memory fallback, measured while the store is down (the caller stops it and starts it
 * again): `instances` limiters, each an app instance with the fallback on, send one identity's
 * requests in rounds (one request per instance, at once). Each counts from zero in its own
 * memory with the rule's algorithm, so together they admit at most instances x the per-counter
 * worst case: burst + rate x period for a bucket, 2 x limit across a boundary for a fixed
 * window. Every decision must come from the fallback (none admitted unchecked).
 */
export async function fallbackCase(ctx: RuleContext, instances: number, figureOf: FigureOf = perCounter): Promise<CaseResult> {
  const fixed = ctx.driver === 'fixed-window';
  const shape = fixed ? worstCaseWindow(ctx.rule) : worstCaseBucket(ctx.rule);
  const probe = ctx.probe(shape, 'worst-case-fallback', { instances, memoryFallback: true });
  const figure = inMemoryFallback(figureOf(ruleRun(ctx.rule, shape)), instances);
  let unchecked = 0;
  const round = async (): Promise<Verdict[]> => {
    const verdicts = await Promise.all(Array.from({ length: probe.connections }, (_, c) => probe.call(1, c)));
    for (const v of verdicts) if (v.error === undefined && !v.fallback) unchecked++;
    return verdicts;
  };
  let count: Count;
  if (fixed) {
    const w = shape.periodMs;
    // rounds until every instance refuses (each admits its limit at most)
    const fill = async (start: Count): Promise<Count> => {
      let admitted = start.admitted;
      for (let i = 0; i <= shape.limit; i++) {
        const verdicts = await round();
        const error = errorOf(verdicts);
        if (error) return { admitted, error };
        const ok = verdicts.filter((v) => v.allowed).length;
        admitted += ok;
        if (ok === 0) break;
      }
      return { admitted };
    };
    const { boundary, t0 } = await beforeBoundary(w);
    count = await fill({ admitted: 0 });
    if (!count.error) {
      await pastBoundary(boundary);
      count = await fill(count);
      if (!count.error) count = await sendFor(t0, w, round, count);
    }
  } else {
    count = await sendFor(performance.now(), shape.periodMs, round);
  }
  if (!count.error && unchecked > 0) count = { ...count, error: `${plural(unchecked, 'decision')} did not come from the memory fallback` };
  if (!count.error && count.admitted === 0) count = { ...count, error: 'the memory fallback admitted nothing' };
  return measurement(
    ctx,
    'memory-fallback',
    figure.worstCase,
    count,
    shape,
    `${shape.params}, ${n(instances)} instances, store down: ${figure.formula}`,
  );
}

/**
 * Runs the measurable rows of the worst-case table for one rule, each held to the design's figure
 * for the numbers run (figureOf: perCounter, the table's own; another only to show what a
 * different statement would be held to).
 */
export async function worstCase(
  ctx: RuleContext,
  kinds: readonly string[],
  figureOf: FigureOf = perCounter,
): Promise<Outcome & { measurements: WorstCaseMeasurement[] }> {
  const parts: ReturnType<typeof measurement>[] = [];
  const shape = ctx.driver === 'fixed-window' ? worstCaseWindow(ctx.rule) : worstCaseBucket(ctx.rule);
  const figure = figureOf(ruleRun(ctx.rule, shape));
  if (ctx.driver === 'fixed-window') {
    if (kinds.includes('rule')) parts.push(await windowCase(ctx, shape, figure));
  } else {
    if (kinds.includes('rule')) parts.push(await bucketCase(ctx, shape, figure));
    const h = ctx.design.enforcement.hybrid;
    if (kinds.includes('hybrid') && h) {
      ctx.closeProbes();
      parts.push(await hybridCase(ctx, shape, figure, h.localBurst));
    }
  }
  const problems = parts.map((p) => p.problem).filter((p): p is string => p !== undefined);
  const expected =
    ctx.driver === 'fixed-window'
      ? `at most ${figure.formula} = ${n(figure.worstCase)} admitted within one ${formatMs(shape.periodMs)} window length across a boundary`
      : `at most ${parts.map((p) => n(p.m.stated)).join(' (bucket) and ')}${parts.length > 1 ? ' (hybrid)' : ''} admitted within ${formatMs(shape.periodMs)}`;
  const numbers: Record<string, number> = {};
  for (const p of parts) {
    numbers[`${p.m.kind}Stated`] = p.m.stated;
    numbers[`${p.m.kind}Measured`] = p.m.measured;
  }
  return {
    passed: problems.length === 0 && parts.length > 0,
    expected,
    measured: parts.map((p) => p.text).join('; '),
    ...(problems.length ? { detail: problems.join('; ') } : {}),
    numbers,
    params: parts.map((p) => p.m.params).join('; '),
    ...(shape.scaling ? { scaling: shape.scaling } : {}),
    measurements: parts.map((p) => p.m),
  };
}

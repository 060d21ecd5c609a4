/**
 * Throttled-client recovery: exhaust a fresh key, read the Retry-After of the refusal, wait
 * it for real, and send one more (admitted). Halfway through, a request for an identical
 * twin key is refused: a request before Retry-After does not get in. For an outbound bucket,
 * also a provider 429: `pause` for a Retry-After, and the bucket yields nothing before it
 * ends and restarts empty after it.
 */
import { performance } from 'node:perf_hooks';
import { RECOVERY_MS, shapeFor } from '../shapes.js';
import type { Decision } from '../limiter.js';
import { sendUntilRefused, waitSince, type Outcome, type RuleContext } from './context.js';

/** Below this Retry-After the halfway probe is not meaningful (timer resolution). */
const PROBE_MIN_MS = 20;

export async function throttledRecovery(ctx: RuleContext): Promise<Outcome> {
  const nowMs = await ctx.store.time();
  const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'recovery', nowMs);
  // Two identical identities: the client that waits, and a twin probed halfway through its
  // own wait (a probe that gets in spends a token, so it must not be the client's own key).
  const key = ctx.keys.make(ctx.rule, ctx.number, 'recover', shape);
  const twin = ctx.keys.make(ctx.rule, ctx.number, 'recover', shape);
  const on = (k: string) => (cost: number) => ctx.limiter.call(shape.script, [k], shape.args(cost));
  const call = on(key);
  const probeCall = on(twin);
  const base = { params: shape.params, ...(shape.scaling ? { scaling: shape.scaling } : {}) };
  const expected = 'refused until Retry-After has passed, admitted right after';
  const fail = (measured: string, detail?: string): Outcome => ({ ...base, passed: false, expected, measured, ...(detail ? { detail } : {}) });

  for (const exhaust of [await probeCall(shape.capacity), await call(shape.capacity)]) {
    if (!exhaust.allowed) return fail(exhaust.storeError ? `a limiter call failed: ${exhaust.storeError}` : `a call of cost ${shape.capacity} on a fresh key was refused`);
  }
  // Keep sending until refused: on a slow machine a token may come back in between.
  const untilRefused = async (c: (cost: number) => Promise<Decision>) => {
    const sent = performance.now();
    const r = await sendUntilRefused(() => c(1), shape.capacity + 1);
    return { ...r, sent, at: performance.now() };
  };
  const twinRun = await untilRefused(probeCall);
  const run = await untilRefused(call);
  for (const r of [twinRun, run]) {
    if (r.error) return fail(r.error);
    if (!r.refused) return fail('the key was never refused after being exhausted');
  }
  const twinRefused = twinRun.refused!;
  const twinSent = twinRun.sent;
  const refused = run.refused!;
  const refusedAt = run.at;
  const wait = refused.retryAfterMs;
  if (wait < 1) return fail(`the refusal carried Retry-After ${wait} ms`);
  const steps: string[] = [`exhausted, refused with Retry-After ${wait} ms`];
  let early: boolean | undefined;
  const twinWait = twinRefused.retryAfterMs;
  if (twinWait >= PROBE_MIN_MS) {
    await waitSince(twinSent, Math.floor(twinWait / 2));
    const probe = await probeCall(1);
    const probeDone = performance.now();
    if (probe.storeError) return fail(`a limiter call failed: ${probe.storeError}`);
    // Redis saw the probe at most (probeDone - twinSent) after the twin's refusal. Only when
    // that bound is under its Retry-After was the probe certainly early; a stall on this side
    // (GC, a busy machine) can make it late, and then its answer proves nothing.
    if (probeDone - twinSent < twinWait) {
      early = probe.allowed;
      steps.push(`a request at half the wait ${probe.allowed ? 'ADMITTED' : 'refused'}`);
    } else {
      steps.push(`(the halfway probe came too late to count: ${Math.round(probeDone - twinSent)} ms)`);
    }
  }
  await waitSince(refusedAt, wait);
  const waited = Math.round(performance.now() - refusedAt);
  const after = await call(1);
  if (after.storeError) return fail(`a limiter call failed: ${after.storeError}`);
  steps.push(`after waiting ${waited} ms ${after.allowed ? 'admitted' : 'STILL REFUSED'}`);
  const problems: string[] = [];
  if (early) problems.push('a request sent before Retry-After had passed was admitted');
  if (!after.allowed) problems.push(`the request sent after the Retry-After (${wait} ms) was refused (new Retry-After ${after.retryAfterMs} ms)`);

  if (ctx.driver === 'outbound') {
    const pause = await providerPause(ctx, shape.args(1).slice(1, 4) as number[], shape.recoverMs);
    steps.push(pause.measured);
    if (pause.problem) problems.push(pause.problem);
  }
  return {
    ...base,
    passed: problems.length === 0,
    expected: ctx.driver === 'outbound' ? `${expected}; after a provider 429 nothing before its Retry-After, then one call` : expected,
    measured: steps.join(', '),
    ...(problems.length ? { detail: problems.join('; ') } : {}),
    numbers: { retryAfterMs: wait, waitedMs: waited, admittedEarly: early ? 1 : 0, admittedAfter: after.allowed ? 1 : 0 },
  };
}

/**
 * outbound-bucket.lua 'pause': the provider said 429 with a Retry-After. Redis time between two
 * calls is bounded by local time from sending the first to the reply of the second, so an
 * answer that depends on "still within the pause" counts only when that bound proves it.
 */
async function providerPause(ctx: RuleContext, [burst, rate, periodMs]: number[], intervalMs: number): Promise<{ measured: string; problem?: string }> {
  const pauseMs = RECOVERY_MS;
  const key = ctx.keys.make(ctx.rule, ctx.number, 'pause', { maxTtlMs: pauseMs + Math.ceil(((burst ?? 1) * (periodMs ?? 1000)) / (rate ?? 1)) + 1 });
  const reserve = () => ctx.limiter.call('outbound-bucket', [key], ['reserve', burst!, rate!, periodMs!, 1, 0]);
  const pauseSent = performance.now();
  const paused = await ctx.limiter.call('outbound-bucket', [key], ['pause', burst!, rate!, periodMs!, pauseMs]);
  const pausedAt = performance.now();
  if (paused.storeError) return { measured: 'provider pause failed', problem: `a limiter call failed: ${paused.storeError}` };
  const during = await reserve();
  const duringInPause = performance.now() - pauseSent < pauseMs;
  await waitSince(pausedAt, pauseMs);
  const after = await reserve();
  const next = await reserve();
  const nextInInterval = performance.now() - pauseSent < pauseMs + intervalMs;
  const measured =
    `provider 429 with Retry-After ${pauseMs} ms: ${during.allowed ? 'a call was ADMITTED during the pause' : `nothing during it (wait ${during.retryAfterMs} ms)`}, ` +
    `then ${after.allowed ? 'one call' : 'NO call'}${next.allowed ? ' and ANOTHER at once' : ', then wait again'}`;
  const problem =
    during.allowed && duringInPause
      ? 'the outbound bucket admitted a call during the provider pause'
      : !after.allowed
        ? 'the outbound bucket still refused after the provider pause'
        : next.allowed && nextInInterval
          ? 'the outbound bucket did not restart empty after the provider pause'
          : undefined;
  return { measured, ...(problem ? { problem } : {}) };
}

/**
 * Throttled-client recovery: exhaust a fresh key, read the Retry-After of the refusal, wait
 * it for real, and send one more (admitted). Halfway through, a request for an identical
 * twin key is refused: a request before Retry-After does not get in. For an outbound bucket,
 * also a provider 429 answered to a call the outbound client made: the client pauses the
 * shared bucket for its Retry-After, which yields nothing before it ends and restarts empty
 * after it.
 */
import { performance } from 'node:perf_hooks';
import { RECOVERY_MS, shapeFor, type Shape } from '../shapes.js';
import type { OutboundProbe, Verdict } from '../runtime.js';
import { sendUntilRefused, waitSince, type Outcome, type Probe, type RuleContext } from './context.js';

/** Below this Retry-After the halfway probe is not meaningful (timer resolution). */
const PROBE_MIN_MS = 20;

export async function throttledRecovery(ctx: RuleContext): Promise<Outcome> {
  const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'recovery', Date.now());
  // Two identical identities: the client that waits, and a twin probed halfway through its
  // own wait (a probe that gets in spends a token, so it must not be the client's own key).
  const on = (p: Probe) => (cost: number) => p.call(cost);
  const options = { costs: [shape.capacity] };
  const call = on(ctx.probe(shape, 'recover', options));
  const probeCall = on(ctx.probe(shape, 'recover', options));
  const base = { params: shape.params, ...(shape.scaling ? { scaling: shape.scaling } : {}) };
  const expected = 'refused until Retry-After has passed, admitted right after';
  const fail = (measured: string, detail?: string): Outcome => ({
    ...base,
    passed: false,
    expected,
    measured,
    ...(detail ? { detail } : {}),
  });

  for (const exhaust of [await probeCall(shape.capacity), await call(shape.capacity)]) {
    if (!exhaust.allowed)
      return fail(
        exhaust.error ? `a limiter call failed: ${exhaust.error}` : `a call of cost ${shape.capacity} on a fresh key was refused`,
      );
  }
  // Keep sending until refused: on a slow machine a token may come back in between.
  const untilRefused = async (c: (cost: number) => Promise<Verdict>) => {
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
    if (probe.error) return fail(`a limiter call failed: ${probe.error}`);
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
  if (after.error) return fail(`a limiter call failed: ${after.error}`);
  steps.push(`after waiting ${waited} ms ${after.allowed ? 'admitted' : 'STILL REFUSED'}`);
  const problems: string[] = [];
  if (early) problems.push('a request sent before Retry-After had passed was admitted');
  if (!after.allowed)
    problems.push(`the request sent after the Retry-After (${wait} ms) was refused (new Retry-After ${after.retryAfterMs} ms)`);

  if (ctx.driver === 'outbound') {
    const pause = await providerPause(ctx, shape);
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
 * A provider 429 through the outbound client: it pauses the shared bucket (outbound-bucket.lua
 * 'pause') for the Retry-After. Redis time between two calls is bounded by local time from
 * sending the first to the reply of the second, so an answer that depends on "still within the
 * pause" counts only when that bound proves it.
 */
async function providerPause(ctx: RuleContext, shape: Shape): Promise<{ measured: string; problem?: string }> {
  const pauseMs = RECOVERY_MS;
  const intervalMs = shape.recoverMs;
  const probe = ctx.probe(shape, 'pause', { maxTtlMs: pauseMs + Math.ceil(shape.capacity * intervalMs) + 1 }) as OutboundProbe;
  const reserve = () => probe.call(1);
  const pauseSent = performance.now();
  const paused = await probe.provider429(pauseMs);
  const pausedAt = performance.now();
  if (paused.error) return { measured: 'provider pause failed', problem: `a limiter call failed: ${paused.error}` };
  if (!paused.allowed)
    return {
      measured: 'the call that met the provider 429 was not made',
      problem: 'the outbound client did not call the provider on a fresh bucket',
    };
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

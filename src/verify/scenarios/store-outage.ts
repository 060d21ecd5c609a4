/**
 * Store outage in both fail modes: with traffic flowing, the redis-server rl-design started is
 * stopped. Each rule's limiter client then applies the rule's fail mode: `open` admits and
 * counts a fail-open event, `closed` refuses with 503 and the contract's Retry-After, never a
 * silent pass. The server is started again (empty: no persistence, no scripts loaded), and
 * every rule decides for real again without restarting the client: EVALSHA gets NOSCRIPT and
 * the client loads the script with EVAL.
 *
 * Only ever run against a server this process started.
 */
import { performance } from 'node:perf_hooks';
import type { SpawnedRedis, Store } from '../redis.js';
import { shapeFor } from '../shapes.js';
import type { Outcome, RuleContext } from './context.js';

export async function storeOutage(rules: readonly RuleContext[], store: Store, server: SpawnedRedis, retryAfterSeconds: number): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  const problems = new Map<string, string[]>(rules.map((r) => [r.rule.id, []]));
  const during = new Map<string, string>();
  const expected = new Map<string, string>();

  const shapes = new Map<string, ReturnType<typeof shapeFor>>();
  for (const ctx of rules) {
    const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'exact', await store.time());
    shapes.set(ctx.rule.id, shape);
    const mode = ctx.failMode;
    expected.set(
      ctx.rule.id,
      mode === 'open'
        ? 'store down: admitted, fail-open event counted; store back: limits apply again'
        : mode === 'closed'
          ? `store down: 503 with Retry-After ${retryAfterSeconds} s; store back: limits apply again`
          : 'a stated fail mode',
    );
    if (!mode) problems.get(ctx.rule.id)!.push('the rule states no fail mode, so the limiter can not know what to do while the store is down');
    // Traffic before the outage: a normal decision.
    const key = ctx.keys.make(ctx.rule, ctx.number, 'outage', shape);
    const d = await ctx.limiter.call(shape.script, [key], shape.args(1), mode);
    if (!d.allowed || d.failOpen) problems.get(ctx.rule.id)!.push(`before the outage the request was not admitted normally (${d.storeError ?? `status ${d.status}`})`);
  }

  const haltStart = performance.now();
  await server.halt();
  const haltMs = performance.now() - haltStart;

  for (const ctx of rules) {
    const shape = shapes.get(ctx.rule.id)!;
    const key = ctx.keys.make(ctx.rule, ctx.number, 'outage', shape);
    const eventsBefore = ctx.limiter.failOpenEvents;
    const d = await ctx.limiter.call(shape.script, [key], shape.args(1), ctx.failMode);
    const took = `${d.latencyMs.toFixed(2)} ms`;
    const list = problems.get(ctx.rule.id)!;
    if (!d.storeError) list.push('the call succeeded although the store was stopped');
    if (ctx.failMode === 'open') {
      const counted = ctx.limiter.failOpenEvents - eventsBefore;
      during.set(ctx.rule.id, `store down: ${d.allowed ? 'admitted' : 'REFUSED'} (fail open, ${counted} fail-open event counted) in ${took}`);
      if (!d.allowed || !d.failOpen) list.push('failing open, the request was not admitted');
      if (counted !== 1) list.push(`${counted} fail-open events were counted, expected 1`);
    } else if (ctx.failMode === 'closed') {
      during.set(ctx.rule.id, `store down: ${d.status}${d.status === 503 ? ` with Retry-After ${d.retryAfterMs / 1000} s` : ''} (fail closed) in ${took}`);
      if (d.allowed) list.push('failing closed, the request was admitted');
      if (d.status !== 503) list.push(`failing closed, the answer was ${d.status}, expected 503`);
      if (d.retryAfterMs !== retryAfterSeconds * 1000) list.push(`the 503 carried Retry-After ${d.retryAfterMs / 1000} s, expected ${retryAfterSeconds} s`);
    } else {
      during.set(ctx.rule.id, `store down: ${d.status} (no fail mode)`);
    }
  }

  const restartStart = performance.now();
  await server.restart();
  await store.waitReady(10_000);
  const downMs = performance.now() - haltStart;

  for (const ctx of rules) {
    const shape = shapes.get(ctx.rule.id)!;
    const key = ctx.keys.make(ctx.rule, ctx.number, 'outage', shape);
    const list = problems.get(ctx.rule.id)!;
    const fill = await ctx.limiter.call(shape.script, [key], shape.args(shape.capacity), ctx.failMode);
    const next = await ctx.limiter.call(shape.script, [key], shape.args(1), ctx.failMode);
    const real = !fill.storeError && !next.storeError;
    if (!real) list.push(`after the restart the store still failed: ${fill.storeError ?? next.storeError}`);
    else if (!fill.allowed || next.allowed) list.push('after the restart the limit did not apply again');
    const back = real ? `store back: ${fill.allowed ? `${shape.capacity.toLocaleString('en-US')} admitted` : 'REFUSED'}, then ${next.allowed ? 'ADMITTED' : 'refused'}` : 'store back: still failing';
    const ps = list;
    out.set(ctx.rule.id, {
      passed: ps.length === 0,
      expected: expected.get(ctx.rule.id)!,
      measured: `${during.get(ctx.rule.id)}; ${back}`,
      detail: ps.length ? ps.join('; ') : `The store was down ${Math.round(downMs)} ms (stop ${Math.round(haltMs)} ms, restart ${Math.round(performance.now() - restartStart)} ms); after it came back the scripts were loaded again through the NOSCRIPT fallback.`,
      numbers: { failOpenEvents: ctx.limiter.failOpenEvents, storeFailures: ctx.limiter.storeFailures },
    });
  }
  return out;
}

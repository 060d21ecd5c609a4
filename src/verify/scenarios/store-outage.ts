/**
 * Store outage in both fail modes: with traffic flowing, the redis-server rl-design started is
 * stopped. Each rule's runtime limiter then applies the fail mode of the rule's spec: `open`
 * admits and counts a fail-open event in the metric the alerts read, `closed` refuses with 503
 * and the contract's Retry-After, never a silent pass. The outbound client always fails closed:
 * the provider is not called without a reservation. While the server is down, the rules with
 * the memory fallback are measured too: N limiters with the fallback on (the design's instance
 * count) admit one identity at most N x the per-counter worst case (worst-case.ts, the
 * 'memory-fallback' rows of the table). The server is started again (empty: no
 * persistence, no scripts loaded), and the same limiters decide for real again: EVALSHA gets
 * NOSCRIPT and the runtime loads the script with EVAL.
 *
 * Only ever run against a server this process started.
 */
import { performance } from 'node:perf_hooks';
import type { SpawnedRedis, Store } from '../redis.js';
import { counted, OutboundProbe } from '../runtime.js';
import { shapeFor, type Shape } from '../shapes.js';
import type { Outcome, Probe, RuleContext } from './context.js';
import { type CaseResult, fallbackCase } from './worst-case.js';

export async function storeOutage(
  rules: readonly RuleContext[],
  store: Store,
  server: SpawnedRedis,
  retryAfterSeconds: number,
  /** Rules whose memory fallback is measured while the store is down, with the instances it runs. */
  fallbacks: ReadonlyMap<string, number> = new Map(),
): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  const problems = new Map<string, string[]>(rules.map((r) => [r.rule.id, []]));
  const during = new Map<string, string>();
  const expected = new Map<string, string>();
  const probes = new Map<string, { shape: Shape; probe: Probe }>();

  const failOpenEvents = (ctx: RuleContext): Promise<number> => counted(ctx.registry, ctx.data.base.metrics.failOpen.name, ctx.rule.id);
  const storeFailures = async (ctx: RuleContext, probe: Probe): Promise<number> =>
    probe instanceof OutboundProbe ? probe.storeFailures : counted(ctx.registry, ctx.data.base.metrics.failures.name, ctx.rule.id);

  for (const ctx of rules) {
    const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'exact', Date.now());
    // One limiter per rule for the whole outage: it rides through it, as an app instance would.
    const probe = ctx.probe(shape, 'outage', { costs: [shape.capacity] });
    probes.set(ctx.rule.id, { shape, probe });
    const mode = ctx.failMode;
    const list = problems.get(ctx.rule.id)!;
    if (ctx.driver === 'outbound') {
      expected.set(
        ctx.rule.id,
        'store down: refused without calling the provider (the outbound client fails closed); store back: limits apply again',
      );
      if (mode === 'open')
        list.push('the rule says fail open, but the outbound client fails closed: it never calls a provider without a reservation');
    } else {
      expected.set(
        ctx.rule.id,
        mode === 'open'
          ? 'store down: admitted, fail-open event counted; store back: limits apply again'
          : mode === 'closed'
            ? `store down: 503 with Retry-After ${retryAfterSeconds} s; store back: limits apply again`
            : 'a stated fail mode',
      );
      if (!mode)
        list.push(
          `the rule states no fail mode, so the runtime applies its default (${ctx.spec?.failMode ?? 'open'}) while the store is down`,
        );
    }
    // Traffic before the outage: a normal decision.
    const d = await probe.call(1);
    if (!d.allowed || d.failOpen || d.error)
      list.push(`before the outage the request was not admitted normally (${d.error ?? `status ${d.status}`})`);
  }

  const haltStart = performance.now();
  await server.halt();
  const haltMs = performance.now() - haltStart;

  for (const ctx of rules) {
    const { probe } = probes.get(ctx.rule.id)!;
    const eventsBefore = await failOpenEvents(ctx);
    const d = await probe.call(1);
    const took = `${d.latencyMs.toFixed(2)} ms`;
    const list = problems.get(ctx.rule.id)!;
    if (!d.error) list.push('the call succeeded although the store was stopped');
    if (ctx.driver === 'outbound') {
      during.set(
        ctx.rule.id,
        `store down: ${d.allowed ? 'the provider was CALLED' : 'refused, the provider not called'} (${d.error?.split(':')[0] ?? 'no error'}, fail closed) in ${took}`,
      );
      if (d.allowed) list.push('the outbound client called the provider without a reservation');
    } else if (ctx.spec?.failMode === 'open') {
      const events = (await failOpenEvents(ctx)) - eventsBefore;
      during.set(
        ctx.rule.id,
        `store down: ${d.allowed ? 'admitted' : 'REFUSED'} (fail open, ${events} fail-open event counted) in ${took}`,
      );
      if (!d.allowed || !d.failOpen) list.push('failing open, the request was not admitted');
      if (events !== 1) list.push(`${events} fail-open events were counted, expected 1`);
    } else {
      during.set(
        ctx.rule.id,
        `store down: ${d.status}${d.status === 503 ? ` with Retry-After ${d.retryAfterMs / 1000} s` : ''} (fail closed) in ${took}`,
      );
      if (d.allowed) list.push('failing closed, the request was admitted');
      if (d.status !== 503) list.push(`failing closed, the answer was ${d.status}, expected 503`);
      if (d.retryAfterMs !== retryAfterSeconds * 1000)
        list.push(`the 503 carried Retry-After ${d.retryAfterMs / 1000} s, expected ${retryAfterSeconds} s`);
    }
  }

  // The memory fallback, while the store is still down: N instances, each counting on its own.
  const fallbackResults = new Map<string, CaseResult>();
  for (const ctx of rules) {
    const instances = fallbacks.get(ctx.rule.id);
    if (instances === undefined) continue;
    const f = await fallbackCase(ctx, instances);
    fallbackResults.set(ctx.rule.id, f);
    if (f.problem) problems.get(ctx.rule.id)!.push(f.problem);
  }

  const restartStart = performance.now();
  await server.restart();
  await store.waitReady(10_000);
  const downMs = performance.now() - haltStart;

  for (const ctx of rules) {
    const { shape, probe } = probes.get(ctx.rule.id)!;
    const list = problems.get(ctx.rule.id)!;
    // The restarted server is empty: the key the limiter used before the outage starts afresh.
    const fill = await probe.call(shape.capacity);
    const next = await probe.call(1);
    const real = !fill.error && !next.error;
    if (!real) list.push(`after the restart the store still failed: ${fill.error ?? next.error}`);
    else if (!fill.allowed || next.allowed) list.push('after the restart the limit did not apply again');
    const back = real
      ? `store back: ${fill.allowed ? `${shape.capacity.toLocaleString('en-US')} admitted` : 'REFUSED'}, then ${next.allowed ? 'ADMITTED' : 'refused'}`
      : 'store back: still failing';
    const f = fallbackResults.get(ctx.rule.id);
    out.set(ctx.rule.id, {
      passed: list.length === 0,
      expected: `${expected.get(ctx.rule.id)!}${f ? `; memory fallback: at most ${f.m.stated.toLocaleString('en-US')} admitted by ${fallbacks.get(ctx.rule.id)} instances within one period` : ''}`,
      measured: `${during.get(ctx.rule.id)}; ${f ? `${f.text}; ` : ''}${back}`,
      ...(f ? { measurements: [f.m] } : {}),
      detail: list.length
        ? list.join('; ')
        : `The store was down ${Math.round(downMs)} ms (stop ${Math.round(haltMs)} ms, restart ${Math.round(performance.now() - restartStart)} ms); after it came back the scripts were loaded again through the NOSCRIPT fallback.`,
      numbers: { failOpenEvents: await failOpenEvents(ctx), storeFailures: await storeFailures(ctx, probe) },
    });
  }
  return out;
}

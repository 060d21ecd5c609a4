/**
 * The worst case, measured against a real redis-server through the shipped runtime: GCRA's
 * burst plus rate, the fixed window's double burst at a boundary and the hybrid's extra
 * admissions never exceed what the worst-case table states for the numbers run, and a script
 * that admits more than it should is caught. Results reach the document with verify --write.
 */
import { createHash } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shippedScripts } from '../../src/commands/verify.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { perCounter, worstCaseTable } from '../../src/design/worst-case.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { openStore, parseRedisUrl, type RedisTarget, startRedisServer, type Store } from '../../src/verify/redis.js';
import { applyResults } from '../../src/verify/results.js';
import { verifyData } from '../../src/verify/runtime.js';
import { ruleContext, RunKeys } from '../../src/verify/scenarios/context.js';
import { storeOutage } from '../../src/verify/scenarios/store-outage.js';
import { MAX_WORST_CASE, WORST_CASE_PERIOD_MS, worstCase } from '../../src/verify/scenarios/worst-case.js';
import { type ScriptSet, scriptSet } from '../../src/verify/scripts.js';
import { classifyRule } from '../../src/verify/shapes.js';
import type { ScenarioResult } from '../../src/verify/types.js';
import { exampleDesign } from '../helpers/examples.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const design = exampleDesign('saas-platform');
let server: RedisServer;
let store: Store;
let runs = 0;

beforeAll(async () => {
  server = await startRedis();
  store = await openStore(parseRedisUrl(server.url) as RedisTarget);
});

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

function contextOf(d: Design, ruleId: string, on: Store, scripts: ScriptSet = shippedScripts()) {
  const index = d.rules.findIndex((r) => r.id === ruleId);
  const rule = d.rules[index]!;
  const c = classifyRule(rule, d);
  if (!c.ok) throw new Error(c.reason);
  const data = verifyData(d, scripts);
  const prefix = `rl-verify:${(++runs).toString(16).padStart(16, '0')}:`;
  return ruleContext(
    {
      rule,
      number: index + 1,
      design: d,
      driver: c.driver,
      ...(rule.failMode ? { failMode: rule.failMode } : {}),
      spec: data.specs.get(rule.id)!,
      registry: new Registry(),
      data,
      keys: new RunKeys(prefix),
      store: on,
      runKeys: () => on.scan(`${prefix}*`),
    },
    scripts,
  );
}

/** The example with one rule's numbers replaced (a field given as undefined is left out: burst: undefined states none). */
function withRule(id: string, over: Partial<MatrixRule>): Design {
  const replaced = (r: MatrixRule): MatrixRule =>
    Object.fromEntries(Object.entries({ ...r, ...over }).filter(([, v]) => v !== undefined)) as unknown as MatrixRule;
  return { ...design, rules: design.rules.map((r) => (r.id === id ? replaced(r) : r)) };
}

async function measure(d: Design, ruleId: string, scripts: ScriptSet = shippedScripts()) {
  const index = d.rules.findIndex((r) => r.id === ruleId);
  const rule = d.rules[index]!;
  const c = classifyRule(rule, d);
  if (!c.ok) throw new Error(c.reason);
  const data = verifyData(d, scripts);
  const prefix = `rl-verify:${(++runs).toString(16).padStart(16, '0')}:`;
  const ctx = ruleContext(
    {
      rule,
      number: index + 1,
      design: d,
      driver: c.driver,
      spec: data.specs.get(rule.id)!,
      registry: new Registry(),
      data,
      keys: new RunKeys(prefix),
      store,
      runKeys: () => store.scan(`${prefix}*`),
    },
    scripts,
  );
  const kinds = worstCaseTable(d)
    .filter((r) => r.ruleId === ruleId && r.measurable)
    .map((r) => r.kind);
  const t0 = performance.now();
  try {
    return { outcome: await worstCase(ctx, kinds), ms: performance.now() - t0 };
  } finally {
    ctx.closeProbes();
  }
}

describe('the worst case, measured', () => {
  it('GCRA and the hybrid: burst + rate x period, plus N x local burst, never more (scaled, in real time)', async () => {
    // (the tenants' fairness buckets share a hash with their quotas: the webhook senders' bucket is the hybrid one)
    const { outcome, ms } = await measure(design, 'webhooks-per-source');
    expect(outcome.passed, `${outcome.measured} ${outcome.detail ?? ''}`).toBe(true);
    const [bucket, hybrid] = outcome.measurements;
    // scaled to a burst of MAX_WORST_CASE: the webhook bucket refills one token in the period
    expect(bucket).toMatchObject({ ruleId: 'webhooks-per-source', kind: 'rule', stated: MAX_WORST_CASE + 1, passed: true });
    expect(outcome.scaling).toMatch(/the rule: burst 4,800, 500 per 1 s/);
    // the whole burst passed, yet never past the formula
    expect(bucket!.measured).toBeGreaterThanOrEqual(MAX_WORST_CASE);
    expect(bucket!.measured).toBeLessThanOrEqual(bucket!.stated);
    const h = design.enforcement.hybrid!;
    const instances = store.pool.length;
    // (the local burst scaled down with the bucket: at most the scaled burst)
    const local = Math.min(h.localBurst, MAX_WORST_CASE);
    expect(hybrid).toMatchObject({ kind: 'hybrid', stated: MAX_WORST_CASE + 1 + instances * local, passed: true });
    expect(hybrid!.measured).toBeGreaterThanOrEqual(MAX_WORST_CASE);
    expect(hybrid!.measured).toBeLessThanOrEqual(hybrid!.stated);
    // time was not faked: each case took its period
    expect(ms).toBeGreaterThanOrEqual(2 * WORST_CASE_PERIOD_MS - 5);
  });

  it('a fixed window (a quota, scaled to an aligned window): twice the limit across a boundary, and no more', async () => {
    const { outcome } = await measure(design, 'quota-free');
    expect(outcome.passed, `${outcome.measured} ${outcome.detail ?? ''}`).toBe(true);
    expect(outcome.measurements).toHaveLength(1);
    const [m] = outcome.measurements;
    expect(m).toMatchObject({ ruleId: 'quota-free', kind: 'rule', stated: 2 * MAX_WORST_CASE, passed: true });
    // the double burst is real: both windows' limits passed within one window length
    expect(m!.measured).toBe(2 * MAX_WORST_CASE);
    expect(outcome.scaling).toContain('calendar month');
  });

  it('fails when the script admits more than the formula allows', async () => {
    const shipped = shippedScripts();
    // (the tenant's quota is a field of its hash: identity-limits.lua counts it)
    const fixed = shipped.get('identity-limits')!;
    const source = fixed.source.replace('before[i], after[i] = used, used + z[i]', 'before[i], after[i] = used, used + z[i] - 1');
    expect(source).not.toBe(fixed.source);
    const generous = scriptSet([
      ...[...shipped.values()].filter((s) => s.name !== 'identity-limits'),
      { ...fixed, source, sha1: createHash('sha1').update(source).digest('hex') },
    ]);
    for (const s of generous.values()) await store.scriptLoad(s.source);
    const { outcome } = await measure(design, 'quota-free', generous);
    expect(outcome.passed).toBe(false);
    expect(outcome.measurements[0]!.measured).toBeGreaterThan(outcome.measurements[0]!.stated);
    expect(outcome.detail).toContain('more than the 20 stated');
  });

  it('the memory fallback, on a Redis it stops itself: N instances admit at most N x the per-counter worst case, each from zero', async () => {
    const rows = worstCaseTable(design).filter((r) => r.kind === 'memory-fallback');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.measurable).map((r) => r.ruleId)).toEqual(expect.arrayContaining(['fairness-pro', 'quota-free']));
    const instances = design.enforcement.fallback!.instances;
    expect(instances).toBe(6);
    const own = await startRedisServer();
    const outageStore = await openStore(parseRedisUrl(own.url) as RedisTarget, own);
    try {
      const ctxs = [contextOf(design, 'fairness-pro', outageStore), contextOf(design, 'quota-free', outageStore)];
      const fallbacks = new Map(ctxs.map((c) => [c.rule.id, instances]));
      const outcomes = await storeOutage(ctxs, outageStore, own, design.contract.storeUnavailable.retryAfterSeconds, fallbacks);
      for (const ctx of ctxs) ctx.closeProbes();
      const bucket = outcomes.get('fairness-pro')!;
      expect(bucket.passed, `${bucket.measured} ${bucket.detail ?? ''}`).toBe(true);
      const [b] = bucket.measurements!;
      // the bucket scaled to burst 10, 10 per second: 6 x (10 + 10)
      expect(b).toMatchObject({ ruleId: 'fairness-pro', kind: 'memory-fallback', stated: instances * 2 * MAX_WORST_CASE, passed: true });
      // every instance admitted its whole burst on its own: more than one counter ever could
      expect(b!.measured).toBeGreaterThanOrEqual(instances * MAX_WORST_CASE);
      expect(b!.measured).toBeLessThanOrEqual(b!.stated);
      expect(bucket.measured, bucket.measured).toMatch(/memory fallback: \d+ requests admitted within 1 s, at most 120 stated/);
      const window = outcomes.get('quota-free')!;
      expect(window.passed, `${window.measured} ${window.detail ?? ''}`).toBe(true);
      const [w] = window.measurements!;
      // a fixed window on each instance: its limit on both sides of a boundary, 6 x 2 x 10
      expect(w).toMatchObject({
        kind: 'memory-fallback',
        stated: instances * 2 * MAX_WORST_CASE,
        measured: instances * 2 * MAX_WORST_CASE,
      });
      // verify --write: the measurement lands in the memory-fallback row of the table
      const result: ScenarioResult = {
        ruleId: 'fairness-pro',
        ruleIds: ['fairness-pro'],
        scenario: 'store-outage',
        status: 'passed',
        expected: bucket.expected,
        measured: bucket.measured,
        detail: '',
        durationMs: 0,
        measurements: bucket.measurements!,
      };
      const measured = applyResults(design, { redisVersion: '7', date: '2026-12-03', results: [result] });
      expect(measured.worstCaseMeasured).toEqual([b]);
      const md = renderMarkdown({ design: measured, checks: [] }, { layout: 'single' })[0]!.content;
      const row = md.split('\n').find((l) => l.startsWith('| `fairness-pro` | middleware (in-memory fallback) |'))!;
      expect(row).toContain(`| ${b!.measured} of at most ${b!.stated} (`);
    } finally {
      await outageStore.close();
      await own.stop();
    }
  });

  it.each<[string, Partial<MatrixRule>, { stated: number; formula: string; label: string; before: number }]>([
    [
      'a token bucket without a stated burst: its rate at once, then the refill',
      { algorithm: 'token-bucket', burst: undefined, rate: { requests: 5, periodSeconds: 1 } },
      { stated: 10, formula: '5 + 5/s x 1 s', label: 'token bucket, run as GCRA', before: 5 },
    ],
    [
      'a sliding-window counter without a burst: run as GCRA, its rate at once',
      { algorithm: 'sliding-window-counter', burst: undefined, rate: { requests: 5, periodSeconds: 1 } },
      { stated: 10, formula: '5 + 5/s x 1 s', label: 'sliding window counter, run as GCRA', before: 10 },
    ],
    [
      'a sliding-window counter with a burst: that burst at once, then the refill',
      { algorithm: 'sliding-window-counter', burst: 8, rate: { requests: 4, periodSeconds: 1 } },
      { stated: 12, formula: '8 + 4/s x 1 s', label: 'sliding window counter, run as GCRA', before: 8 },
    ],
  ])('%s: the document states what the generated Lua admits', async (_name, over, want) => {
    const d = withRule('fairness-pro', over);
    // the middleware runs the rule with the burst the document states (its own numbers: no scaling)
    const data = verifyData(d, shippedScripts());
    expect(data.specs.get('fairness-pro')).toMatchObject({ script: 'gcra', burst: want.stated - over.rate!.requests });
    const row = worstCaseTable(d).find((r) => r.ruleId === 'fairness-pro' && r.kind === 'rule')!;
    expect(row).toMatchObject({ worstCase: want.stated, formula: want.formula, algorithmLabel: want.label, measurable: true });
    const { outcome } = await measure(d, 'fairness-pro');
    expect(outcome.passed, `${outcome.measured} ${outcome.detail ?? ''}`).toBe(true);
    expect(outcome.scaling).toBeUndefined();
    const m = outcome.measurements.find((x) => x.kind === 'rule')!;
    // held to the document's own figure, which the Lua reaches: the whole burst at once and each
    // token as it comes back (the last one can fall on the period's closing instant)
    expect(m.stated).toBe(row.worstCase);
    expect(m.measured).toBeGreaterThanOrEqual(want.stated - 1);
    expect(m.measured).toBeLessThanOrEqual(want.stated);
    expect(m.params).toContain(want.formula);
    // what the document stated before the burst was decided in one place
    if (want.before < want.stated - 1) expect(m.measured).toBeGreaterThan(want.before);
  });

  it('fails a worst case stated below what the Lua admits (a bucket without a burst stated as its rate alone)', async () => {
    const d = withRule('fairness-pro', { algorithm: 'token-bucket', burst: undefined, rate: { requests: 5, periodSeconds: 1 } });
    const ctx = contextOf(d, 'fairness-pro', store);
    try {
      const understated = (r: Parameters<typeof perCounter>[0]) => ({
        ...perCounter(r),
        worstCase: r.rate.requests,
        formula: `${r.rate.requests}`,
      });
      const outcome = await worstCase(ctx, ['rule'], understated);
      expect(outcome.passed).toBe(false);
      expect(outcome.measurements[0]!.measured).toBeGreaterThan(5);
      expect(outcome.detail).toContain('more than the 5 stated');
    } finally {
      ctx.closeProbes();
    }
  });

  it('puts the measurements beside the stated worst case in the document (verify --write)', async () => {
    const { outcome } = await measure(design, 'webhooks-per-source');
    const result: ScenarioResult = {
      ruleId: 'webhooks-per-source',
      ruleIds: ['webhooks-per-source'],
      scenario: 'worst-case',
      status: outcome.passed ? 'passed' : 'failed',
      expected: outcome.expected,
      measured: outcome.measured,
      detail: '',
      durationMs: 0,
      measurements: outcome.measurements,
    };
    const measured = applyResults(design, { redisVersion: '7', date: '2026-12-03', results: [result] });
    expect(measured.worstCaseMeasured).toEqual(outcome.measurements);
    const md = renderMarkdown({ design: measured, checks: [] }, { layout: 'single' })[0]!.content;
    const row = md.split('\n').find((l) => l.startsWith('| `webhooks-per-source` | middleware (local + store) |'))!;
    const h = outcome.measurements.find((m) => m.kind === 'hybrid')!;
    expect(row).toContain(`| ${h.measured} of at most ${h.stated} (`);
    // a run without the scenario leaves no measurements behind
    expect(applyResults(measured, { redisVersion: '7', date: '2026-12-03', results: [] }).worstCaseMeasured).toBeUndefined();
  });
});

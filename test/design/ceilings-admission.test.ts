/**
 * "Admitted" with several ceiling rows: each counts the requests it covers, so what passes is at
 * most their sum. The key-count bounds (buildMatrix), the monitoring and the hybrid's choice read
 * it through one function, ceilingsAdmission, and none stops at the first row.
 */
import { describe, expect, it } from 'vitest';
import { ceilingsAdmission, fleetAdmission } from '../../src/design/gateway-behaviour.js';
import { buildMatrix } from '../../src/design/matrix.js';
import type { MatrixRule } from '../../src/design/model.js';
import { exampleDesign } from '../helpers/examples.js';

const scope = exampleDesign('consumer-auth').scope;
const row = (id: string, requests: number): Pick<MatrixRule, 'id' | 'identity' | 'routes' | 'layer' | 'rate' | 'burst'> => ({
  id,
  identity: 'global',
  routes: [],
  layer: 'middleware',
  rate: { requests, periodSeconds: 1 },
  burst: requests,
});

describe('what several ceiling rows admit', () => {
  it('is the sum of what each admits, one row its own admission, none undefined', () => {
    const a = row('global-ceiling', 600);
    const b = row('reads-ceiling', 200);
    expect(ceilingsAdmission(scope, [a])).toEqual(fleetAdmission(scope, a));
    const both = ceilingsAdmission(scope, [a, b]);
    expect(both?.rps).toBe(800);
    expect(both?.text).toBe('the 2 ceilings admit 800 req/s together (global-ceiling: 600 req/s, reads-ceiling: 200 req/s)');
    expect(ceilingsAdmission(scope, [])).toBeUndefined();
  });

  it('sizes the key-count bounds of the matrix from every ceiling row, not the first', () => {
    const a = row('global-ceiling', 600);
    const b = row('reads-ceiling', 200);
    const ctx = { scope, ceilingRps: 600, burstSeconds: 5, ceiling: a, ceilings: [a, b] };
    const anon = buildMatrix(ctx, []).rules.find((r) => r.id === 'anonymous-per-ip');
    expect(anon?.cardinality?.basis).toContain('the 2 ceilings admit 800 req/s together');
    expect(anon?.cardinality?.bound).toBe(800 * (anon?.ttlSeconds ?? 0));
  });
});

describe('a ceiling its rules entry limits to some endpoints caps only those', () => {
  async function design(endpoints: string[]) {
    const { readFileSync } = await import('node:fs');
    const { parseAnswers } = await import('../../src/answers/load.js');
    const { buildDesign } = await import('../../src/design/build.js');
    const base = parseAnswers(
      readFileSync(new URL('../fixtures/review/koa-existing-nginx-mixed.answers.json', import.meta.url), 'utf8'),
      'koa-existing-nginx-mixed.answers.json',
    );
    return buildDesign({ ...base, rules: [{ id: 'global-ceiling', endpoints }] }, { date: '2026-12-03' });
  }

  it('a rule on endpoints outside it gets no bound from its traffic: a population bounds it, an attacker-controlled key nothing, and constraint 6 says so', async () => {
    const { checkDesign } = await import('../../src/constraints/index.js');
    const d = await design(['search']);
    const ip = d.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(ip?.cardinality?.bound).toBeUndefined();
    expect(ip?.cardinality?.basis).toBe(
      "attacker-controlled key, and no ceiling counts login (global-ceiling counts only GET /api/search, as its rules entry's endpoints say), so nothing caps the traffic that reaches it: no bound. Add these endpoints to the ceiling's rules entry (endpoints), or state cardinalityBound in a rules entry for this row",
    );
    const fair = d.rules.find((r) => r.id === 'fairness-free-fail-open');
    expect(fair?.cardinality?.bound).toBe(90_000);
    expect(fair?.cardinality?.basis).toContain('one key per user (90,000); no ceiling counts');
    const keys = checkDesign(d).find((c) => c.id === 'bounded-keys');
    expect(keys?.passed).toBe(false);
    expect(keys?.messages.join('\n')).toContain('auth-login-per-ip');
  });

  it('a rule on endpoints it counts keeps the bound its traffic gives', async () => {
    const d = await design(['search', 'login']);
    const ip = d.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(ip?.cardinality?.bound).toBe(1_620_000);
    expect(ip?.cardinality?.basis).toContain('the ceiling admits 1,800 req/s');
  });
});

/**
 * A gateway counts requests, not cost: what the design does with an edge rule whose endpoints
 * cost more than 1 unit a call, for the generated per-IP rule and for hand-written edge rules,
 * and the rounding that keeps the edge from admitting more units than the rule states.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { requestsOfCost } from '../../src/design/matrix.js';
import type { Design, MatrixRule } from '../../src/design/model.js';

const DATE = '2026-12-03';

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};

function fixture(name: string): Design {
  const text = readFileSync(new URL(`../fixtures/edge-cost/${name}.answers.json`, import.meta.url), 'utf8');
  return buildDesign(parseAnswers(text, `${name}.answers.json`), { date: DATE });
}

function passes(design: Design): string[] {
  return checkDesign(design, generateCode(design))
    .filter((c) => !c.passed)
    .map((c) => c.id);
}

describe('requestsOfCost: a rate in units as requests of one cost, never more units', () => {
  it.each([
    [{ requests: 50, periodSeconds: 1 }, 10, { requests: 5, periodSeconds: 1 }],
    [{ requests: 250, periodSeconds: 1 }, 2, { requests: 125, periodSeconds: 1 }],
    [{ requests: 10, periodSeconds: 1 }, 3, { requests: 3, periodSeconds: 1 }],
    [{ requests: 5, periodSeconds: 1 }, 10, { requests: 1, periodSeconds: 2 }],
    [{ requests: 3, periodSeconds: 60 }, 7, { requests: 1, periodSeconds: 140 }],
  ])('%o at cost %d is %o', (rate, units, out) => {
    expect(requestsOfCost(rate, units)).toEqual(out);
  });

  it('never admits more units per second than the rate, and keeps at least one request', () => {
    for (const requests of [1, 2, 3, 7, 30, 50, 99, 1000])
      for (const periodSeconds of [1, 10, 60, 3600])
        for (const units of [2, 3, 5, 7, 10, 100, 1000]) {
          const r = requestsOfCost({ requests, periodSeconds }, units);
          expect(r.requests).toBeGreaterThanOrEqual(1);
          expect((r.requests * units) / r.periodSeconds).toBeLessThanOrEqual(requests / periodSeconds + 1e-12);
        }
  });
});

describe('the generated per-IP rule at the edge', () => {
  it('keeps its id when all its endpoints cost the same, and divides its own numbers (graphql-public, cost 2)', () => {
    const text = readFileSync(new URL('../fixtures/review/graphql-hono.answers.json', import.meta.url), 'utf8');
    const design = buildDesign(parseAnswers(text, 'graphql-hono.answers.json'), { date: DATE });
    const anon = rule(design, 'anonymous-per-ip');
    expect(anon.endpoints).toEqual(['graphql-public']);
    expect(anon.edgeCost).toEqual({ units: 2, of: 'anonymous-per-ip', unitRate: { requests: 250, periodSeconds: 1 }, unitBurst: 2500 });
    expect(anon.rate).toEqual({ requests: 125, periodSeconds: 1 });
    expect(anon.burst).toBe(1250);
    expect(anon.cost).toEqual({ default: 1, byEndpoint: [] });
    expect(design.rules.some((r) => r.id.startsWith('anonymous-per-ip-cost-'))).toBe(false);
    expect(anon.derivation).toContain(
      'at the edge 250 units per 1 s / cost 2 = 125 requests per 1 s, burst 2,500 / 2 = 1,250, rounded down',
    );
    expect(passes(design)).toEqual([]);
  });

  it('splits the costly endpoints off, each cost its own rule, the cheap ones keeping the id (trip-plan, cost 10)', () => {
    const design = fixture('keyless-nginx');
    expect(design.rules.map((r) => [r.id, r.endpoints.join(','), r.rate?.requests, r.burst])).toEqual([
      ['global-ceiling', '', 3000, 3000],
      ['anonymous-per-ip', 'departures', 50, 500],
      // report is a write endpoint: its class weighs it 2 (an assumption the scope lists)
      ['anonymous-per-ip-cost-2', 'report', 25, 250],
      ['anonymous-per-ip-cost-10', 'trip-plan', 5, 50],
    ]);
    expect(rule(design, 'anonymous-per-ip-cost-10').killSwitch?.flag).not.toBe(rule(design, 'anonymous-per-ip').killSwitch?.flag);
    expect(design.rollout.killSwitches.map((k) => k.ruleId)).toContain('anonymous-per-ip-cost-10');
    expect(rule(design, 'anonymous-per-ip').rationale).toContain('trip-plan (cost 10) by anonymous-per-ip-cost-10');
    expect(passes(design)).toEqual([]);
  });

  it('a middleware rule keeps weighing its calls by cost (the Kong catalogue: order costs 2 and search 3 in the dealer bucket)', () => {
    const design = fixture('kong-search');
    // the dealer's bucket covers the anonymous catalogue too (a dealer's key counts there), split by fail mode
    expect(rule(design, 'fairness-dealer-fail-closed').layer).toBe('middleware');
    expect(rule(design, 'fairness-dealer-fail-closed').cost).toEqual({ default: 1, byEndpoint: [{ endpoint: 'order', cost: 2 }] });
    expect(rule(design, 'fairness-dealer-fail-open').cost).toEqual({ default: 1, byEndpoint: [{ endpoint: 'search', cost: 3 }] });
    expect(rule(design, 'anonymous-per-ip-cost-3')).toMatchObject({ endpoints: ['search'], rate: { requests: 3, periodSeconds: 1 } });
    expect(passes(design)).toEqual([]);
  });
});

describe('hand-written edge rules', () => {
  const base = (rules: unknown[]): Answers =>
    Answers.parse({
      project: { name: 'Edge Costs' },
      stack: { language: 'TypeScript', framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis' },
      identities: ['ip'],
      endpoints: [
        { name: 'list', method: 'GET', route: '/items', class: 'read', anonymous: true, cost: 1 },
        { name: 'render', method: 'POST', route: '/render', class: 'expensive', anonymous: true, cost: 4 },
      ],
      traffic: { typicalRps: 20, peakRps: 100 },
      failure: { byClass: { read: 'open', expensive: 'open' } },
      rules,
    });

  it('a stated cost divides the whole rule in place', () => {
    const design = buildDesign(
      base([
        { id: 'render-cap', layer: 'edge', identity: 'global', endpoints: ['render'], rate: { requests: 30, per: 'minute' }, cost: 3 },
      ]),
      { date: DATE },
    );
    const r = rule(design, 'render-cap');
    expect(r.rate).toEqual({ requests: 10, periodSeconds: 60 });
    expect(r.cost).toEqual({ default: 1, byEndpoint: [] });
    expect(r.edgeCost).toMatchObject({ units: 3, of: 'render-cap', unitRate: { requests: 30, periodSeconds: 60 } });
    expect(generateCode(design).find((f) => f.path === 'gateway/nginx.conf')?.content).toContain('zone=rl_render_cap:1m rate=10r/m;');
    expect(passes(design)).toEqual([]);
  });

  it('without a stated cost, the costs its endpoints state apply: a class-wide rule names its endpoints once it is split', () => {
    const design = buildDesign(
      base([{ id: 'per-ip-all', layer: 'edge', identity: 'ip', endpointClass: 'all', rate: { requests: 40, per: 'second' }, burst: 80 }]),
      { date: DATE },
    );
    expect(rule(design, 'per-ip-all')).toMatchObject({ endpoints: ['list'], rate: { requests: 40, periodSeconds: 1 }, burst: 80 });
    expect(rule(design, 'per-ip-all-cost-4')).toMatchObject({ endpoints: ['render'], rate: { requests: 10, periodSeconds: 1 }, burst: 20 });
    expect(passes(design)).toEqual([]);
  });
});

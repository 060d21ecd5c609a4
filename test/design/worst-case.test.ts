/** The worst-case table: one formula per algorithm and place, table-tested, and its extension point. */
import { describe, expect, it } from 'vitest';
import { compileDesign } from '../../src/codegen/middleware/compile.js';
import { runBurst } from '../../src/design/algorithms.js';
import { shownRuleOf } from '../../src/design/contract.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { WORST_CASE_KINDS, type WorstCaseKind, worstCaseTable } from '../../src/design/worst-case.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';

function rule(over: Partial<MatrixRule>): MatrixRule {
  return {
    id: 'r',
    source: 'generated',
    tier: 'fairness',
    title: 'r',
    endpointClass: 'all',
    endpoints: [],
    routes: [],
    identity: 'api-key',
    algorithm: 'gcra',
    primitive: 'redis-lua',
    rate: { requests: 60, periodSeconds: 60 },
    burst: 25,
    layer: 'middleware',
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    rationale: '',
    ...over,
  };
}

interface Stack {
  gateway?: Design['scope']['gateway'];
  topology?: 'single' | 'horizontal';
  instances?: number;
  gatewayNodes?: number;
  store?: Design['scope']['store'];
  hybrid?: { ruleIds: string[]; localBurst: number; instances: number };
}

function design(rules: MatrixRule[], s: Stack = {}): Design {
  return {
    rules,
    scope: {
      gateway: s.gateway ?? 'none',
      topology: s.topology ?? 'single',
      instances: s.instances ?? 1,
      ...(s.gatewayNodes !== undefined ? { gatewayNodes: s.gatewayNodes } : {}),
      store: s.store ?? 'redis',
    },
    enforcement: s.hybrid ? { hybrid: { ...s.hybrid, overAdmission: s.hybrid.localBurst * s.hybrid.instances, explanation: '' } } : {},
  } as unknown as Design;
}

const H6 = { topology: 'horizontal', instances: 6 } as const;

describe('an nginx ceiling counted on each nginx node: K is the gateway nodes, not the application instances', () => {
  const ceiling = rule({
    id: 'global-ceiling',
    tier: 'ceiling',
    identity: 'global',
    layer: 'edge',
    algorithm: 'leaky-bucket',
    primitive: 'gateway-native',
    burst: 3000,
    rate: { requests: 3000, periodSeconds: 1 },
  });
  const row = (s: Stack) => worstCaseTable(design([ceiling], { gateway: 'nginx', ...s })).find((r) => r.ruleId === 'global-ceiling')!;

  it('takes K from the nginx nodes the answers give, whatever the application instances', () => {
    const r = row({ topology: 'horizontal', instances: 2, gatewayNodes: 5 });
    expect(r.worstCase).toBe(5 * 6001);
    expect(r.formula).toBe('(1 + 3,000 + 3,000/s x 1 s) x 5 nodes');
    expect(r.basis).toContain('K = 5 nginx nodes, as the answers give them (stack.gatewayNodes).');
    expect(r.basis).not.toContain('stack.instances');
    // one nginx node in front of many instances: one counter
    const one = row({ topology: 'horizontal', instances: 8, gatewayNodes: 1 });
    expect(one.worstCase).toBe(6001);
    expect(one.formula).toBe('1 + 3,000 + 3,000/s x 1 s');
    expect(one.basis).toContain('K = 1 nginx node, as the answers give them');
  });

  it('says so in the row when the answers do not give the nginx nodes, instead of taking the instances silently', () => {
    const r = row({ topology: 'horizontal', instances: 4 });
    expect(r.worstCase).toBe(4 * 6001);
    expect(r.basis).toContain(
      'The answers do not say how many nginx nodes run (stack.gatewayNodes): K = 4 is assumed, one per application instance (stack.instances)',
    );
  });
});

describe('worst case per rule and layer', () => {
  it.each<
    [
      string,
      MatrixRule,
      Stack,
      { worstCase: number; formula: string; layer?: string; basis?: unknown; algorithmLabel?: string; perLocation?: string },
    ]
  >([
    [
      'fixed window: the limit at both sides of a boundary',
      rule({ algorithm: 'fixed-window', burst: null, rate: { requests: 100, periodSeconds: 60 } }),
      {},
      { worstCase: 200, formula: '2 x 100' },
    ],
    [
      'sliding-window log: exactly the limit',
      rule({ algorithm: 'sliding-window-log', burst: null, rate: { requests: 10, periodSeconds: 900 } }),
      {},
      { worstCase: 10, formula: '10' },
    ],
    ['GCRA: burst plus rate x period', rule({}), {}, { worstCase: 85, formula: '25 + 60/min x 1 min' }],
    [
      'GCRA per second',
      rule({ burst: 500, rate: { requests: 50, periodSeconds: 1 } }),
      {},
      { worstCase: 550, formula: '500 + 50/s x 1 s' },
    ],
    [
      'a token bucket without a stated burst: run as GCRA with its rate as burst, so twice the rate',
      rule({ algorithm: 'token-bucket', burst: undefined }),
      {},
      {
        worstCase: 120,
        formula: '60 + 60/min x 1 min',
        algorithmLabel: 'token bucket, run as GCRA',
        basis: expect.stringContaining("No burst is stated, so the bucket holds its rate's count per period (60)"),
      },
    ],
    [
      'a sliding-window counter in the middleware, without a burst: run as GCRA, no window boundary',
      rule({ algorithm: 'sliding-window-counter', burst: null, rate: { requests: 50, periodSeconds: 10 } }),
      {},
      {
        worstCase: 100,
        formula: '50 + 50 per 10 s x 10 s',
        algorithmLabel: 'sliding window counter, run as GCRA',
        basis: expect.stringMatching(/^The runtime runs it as a GCRA bucket\. No burst is stated/),
      },
    ],
    [
      'a sliding-window counter in the middleware with a burst: that burst plus the refill',
      rule({ algorithm: 'sliding-window-counter', burst: 120, rate: { requests: 50, periodSeconds: 10 } }),
      {},
      { worstCase: 170, formula: '120 + 50 per 10 s x 10 s', algorithmLabel: 'sliding window counter, run as GCRA' },
    ],
    [
      'a leaky bucket in the middleware: run as GCRA (a meter)',
      rule({ algorithm: 'leaky-bucket', burst: 5, rate: { requests: 10, periodSeconds: 1 } }),
      {},
      { worstCase: 15, formula: '5 + 10/s x 1 s', algorithmLabel: 'leaky bucket, run as GCRA' },
    ],
    [
      'an nginx bucket without a burst: limit_req admits the first request, then its rate',
      rule({
        layer: 'edge',
        algorithm: 'leaky-bucket',
        primitive: 'gateway-native',
        burst: null,
        rate: { requests: 10, periodSeconds: 1 },
      }),
      { gateway: 'nginx' },
      { worstCase: 11, formula: '1 + 10' },
    ],
    [
      'nginx limit_req on 6 nodes: (1 + burst + rate) per node x K',
      rule({
        layer: 'edge',
        algorithm: 'leaky-bucket',
        primitive: 'gateway-native',
        identity: 'ip',
        burst: 500,
        rate: { requests: 50, periodSeconds: 1 },
      }),
      { gateway: 'nginx', ...H6 },
      { worstCase: 6 * 551, formula: '(1 + 500 + 50/s x 1 s) x 6 nodes', layer: 'edge' },
    ],
    [
      'nginx on one node',
      rule({
        layer: 'edge',
        algorithm: 'leaky-bucket',
        primitive: 'gateway-native',
        identity: 'global',
        burst: 10,
        rate: { requests: 10, periodSeconds: 1 },
      }),
      { gateway: 'nginx' },
      { worstCase: 21, formula: '1 + 10 + 10/s x 1 s' },
    ],
    [
      "Envoy's local filter (a global-identity rule): a token bucket per node",
      rule({
        layer: 'edge',
        algorithm: 'token-bucket',
        primitive: 'gateway-native',
        identity: 'global',
        burst: 10,
        rate: { requests: 10, periodSeconds: 1 },
      }),
      { gateway: 'envoy', topology: 'horizontal', instances: 3 },
      { worstCase: 60, formula: '(10 + 10/s x 1 s) x 3 nodes' },
    ],
    [
      "Envoy, per client: the rate limit service's fixed window, one count for every node",
      rule({
        layer: 'edge',
        algorithm: 'fixed-window',
        primitive: 'gateway-native',
        identity: 'ip',
        burst: null,
        rate: { requests: 50, periodSeconds: 1 },
      }),
      { gateway: 'envoy', topology: 'horizontal', instances: 3 },
      { worstCase: 100, formula: '2 x 50' },
    ],
    [
      'Kong, global ceiling: policy local, a fixed window per node',
      rule({
        layer: 'edge',
        algorithm: 'fixed-window',
        primitive: 'gateway-native',
        identity: 'global',
        burst: null,
        rate: { requests: 100, periodSeconds: 1 },
      }),
      { gateway: 'kong', topology: 'horizontal', instances: 4 },
      // (the ceiling runs in rate-limiting-advanced, as kong.yaml ships it)
      { worstCase: 800, formula: '(2 x 100) x 4 nodes', basis: expect.stringContaining("Kong's rate-limiting-advanced plugin (policy") },
    ],
    [
      'Kong, per client with a store: policy redis, one counter',
      rule({
        layer: 'edge',
        algorithm: 'fixed-window',
        primitive: 'gateway-native',
        identity: 'ip',
        burst: null,
        rate: { requests: 100, periodSeconds: 1 },
      }),
      { gateway: 'kong', topology: 'horizontal', instances: 4 },
      { worstCase: 200, formula: '2 x 100', basis: expect.stringContaining("Kong's rate-limiting plugin keeps the counter in Redis") },
    ],
    [
      'Cloudflare: a sliding-window counter per data centre',
      rule({
        layer: 'edge',
        algorithm: 'sliding-window-counter',
        primitive: 'gateway-native',
        identity: 'ip',
        burst: null,
        rate: { requests: 50, periodSeconds: 10 },
      }),
      { gateway: 'cloudflare', ...H6 },
      { worstCase: 100, formula: '2 x 50 per data centre', perLocation: 'data centre' },
    ],
    [
      "AWS API Gateway, one method's throttle: one token bucket for the fleet",
      rule({
        layer: 'edge',
        algorithm: 'token-bucket',
        primitive: 'gateway-native',
        identity: 'global',
        routes: [{ method: 'POST', route: '/v1/reports' }],
        burst: 100,
        rate: { requests: 50, periodSeconds: 1 },
      }),
      { gateway: 'aws-api-gateway', ...H6 },
      { worstCase: 150, formula: '100 + 50/s x 1 s' },
    ],
    [
      'AWS API Gateway, a throttle on two methods (GET counts HEAD too): a token bucket per method',
      rule({
        layer: 'edge',
        algorithm: 'token-bucket',
        primitive: 'gateway-native',
        identity: 'global',
        routes: [{ method: 'GET', route: '/v1/items' }],
        burst: 100,
        rate: { requests: 50, periodSeconds: 1 },
      }),
      { gateway: 'aws-api-gateway', ...H6 },
      { worstCase: 300, formula: '(100 + 50/s x 1 s) x 2 API methods', basis: expect.stringContaining('to each method on its own') },
    ],
    [
      "AWS API Gateway, a throttle above the account's limit: capped there",
      rule({
        layer: 'edge',
        algorithm: 'token-bucket',
        primitive: 'gateway-native',
        identity: 'global',
        routes: [{ method: 'GET', route: '/v1/items' }],
        burst: 8000,
        rate: { requests: 12000, periodSeconds: 1 },
      }),
      { gateway: 'aws-api-gateway', ...H6 },
      {
        worstCase: 15_000,
        formula: 'min((8,000 + 12,000/s x 1 s) x 2 API methods, 5,000 + 10,000/s x 1 s)',
        basis: expect.stringContaining('the account limit is the lower figure'),
      },
    ],
    [
      'an in-process bucket on 3 instances: each admits it',
      rule({ primitive: 'in-process' }),
      { topology: 'horizontal', instances: 3 },
      { worstCase: 255, formula: '(25 + 60/min x 1 min) x 3 instances' },
    ],
    [
      'a racy store primitive: the formula holds only for one request at a time (no multiple)',
      rule({ algorithm: 'fixed-window', burst: null, primitive: 'incr-then-expire', rate: { requests: 100, periodSeconds: 60 } }),
      H6,
      { worstCase: 200, formula: '2 x 100', basis: expect.stringContaining('concurrent requests read the same count') },
    ],
    [
      'a quota: a fixed window over its reset period, at the backstop',
      rule({
        tier: 'quota',
        algorithm: 'fixed-window',
        burst: null,
        rate: { requests: 1_200_000, periodSeconds: 31 * 86400, periodText: 'calendar month (UTC)' },
        quotaBackstop: { quota: 1_000_000, factor: 1.2, assumed: true },
      }),
      {},
      { worstCase: 2_400_000, formula: '2 x 1,200,000' },
    ],
    [
      'a shared outbound bucket',
      rule({ tier: 'outbound', layer: 'outbound-client', identity: 'provider', burst: 10, rate: { requests: 90, periodSeconds: 1 } }),
      H6,
      { worstCase: 100, formula: '10 + 90/s x 1 s', layer: 'outbound-client' },
    ],
    [
      'an outbound bucket kept per instance',
      rule({
        tier: 'outbound',
        layer: 'outbound-client',
        identity: 'provider',
        primitive: 'in-process',
        burst: 10,
        rate: { requests: 90, periodSeconds: 1 },
      }),
      H6,
      { worstCase: 600, formula: '(10 + 90/s x 1 s) x 6 instances' },
    ],
  ])('%s', (_name, r, stack, want) => {
    const rows = worstCaseTable(design([r], stack));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ruleId: 'r', kind: 'rule', stated: r.rate!.requests, ...want });
  });

  it('adds the hybrid row under its rule: the shared bucket plus N x local burst', () => {
    const rows = worstCaseTable(
      design([rule({ id: 'a' }), rule({ id: 'b', algorithm: 'sliding-window-log', burst: null })], {
        ...H6,
        hybrid: { ruleIds: ['a'], localBurst: 2, instances: 6 },
      }),
    );
    expect(rows.map((r) => [r.ruleId, r.kind, r.worstCase, r.formula])).toEqual([
      ['a', 'rule', 85, '25 + 60/min x 1 min'],
      ['a', 'hybrid', 97, '25 + 60/min x 1 min + 6 x 2'],
      ['b', 'rule', 60, '60'],
    ]);
    expect(rows[1]!.layer).toBe('middleware (local + store)');
  });

  it('marks as measurable what verify can run: what the store runs as GCRA (token buckets, sliding-window counters) and fixed windows in the middleware, and the hybrid', () => {
    const rows = worstCaseTable(
      design(
        [
          rule({ id: 'g' }),
          rule({ id: 'f', algorithm: 'fixed-window', burst: null }),
          rule({ id: 't', algorithm: 'token-bucket' }),
          rule({ id: 'c', algorithm: 'sliding-window-counter', burst: undefined }),
          rule({ id: 'l', algorithm: 'sliding-window-log', burst: null }),
          rule({ id: 'e', layer: 'edge', algorithm: 'leaky-bucket', primitive: 'gateway-native' }),
          rule({ id: 'o', tier: 'outbound', layer: 'outbound-client' }),
        ],
        { gateway: 'nginx', ...H6, hybrid: { ruleIds: ['g'], localBurst: 1, instances: 6 } },
      ),
    );
    expect(rows.filter((r) => r.measurable).map((r) => `${r.ruleId}/${r.kind}`)).toEqual([
      'g/rule',
      'g/hybrid',
      'f/rule',
      't/rule',
      'c/rule',
    ]);
  });

  it('marks the memory fallback measurable for the algorithms verify runs (it stops its own Redis for them), not a sliding log', () => {
    const d = design([
      rule({ id: 'g' }),
      rule({ id: 'f', algorithm: 'fixed-window', burst: null }),
      rule({ id: 'l', algorithm: 'sliding-window-log', burst: null }),
    ]);
    (d as { enforcement: Design['enforcement'] }).enforcement = {
      fallback: { ruleIds: ['g', 'f', 'l'], instances: 6, rules: [], explanation: '' },
    } as unknown as Design['enforcement'];
    const rows = worstCaseTable(d).filter((r) => r.kind === 'memory-fallback');
    expect(rows.map((r) => [r.ruleId, r.worstCase, r.measurable])).toEqual([
      ['g', 6 * 85, true],
      ['f', 6 * 2 * 60, true],
      ['l', 6 * 60, false],
    ]);
  });

  it('states the one burst the middleware runs: compiled, shown in headers, and in the worst case, alike for every bucket-like rule', () => {
    const base = exampleDesign('saas-platform');
    const variants: Partial<MatrixRule>[] = [
      { algorithm: 'token-bucket', burst: undefined },
      { algorithm: 'sliding-window-counter', burst: null },
      { algorithm: 'sliding-window-counter', burst: 40 },
      { algorithm: 'leaky-bucket', burst: 12.4 },
      { algorithm: 'gcra', burst: 200 },
    ];
    for (const over of variants) {
      const d = {
        ...base,
        rules: base.rules.map((r) =>
          r.id === 'fairness-pro'
            ? (Object.fromEntries(Object.entries({ ...r, ...over }).filter(([, v]) => v !== undefined)) as unknown as MatrixRule)
            : r,
        ),
      };
      const r = d.rules.find((x) => x.id === 'fairness-pro')!;
      const burst = runBurst(r)!;
      expect(burst, JSON.stringify(over)).toBe(Math.max(1, Math.round(typeof over.burst === 'number' ? over.burst : 600)));
      expect(compileDesign(d).rules.find((x) => x.id === 'fairness-pro')!.burst).toBe(burst);
      expect(shownRuleOf(r)!.burst).toBe(burst);
      const row = worstCaseTable(d).find((x) => x.ruleId === 'fairness-pro' && x.kind === 'rule')!;
      expect(row.worstCase).toBe(burst + 600);
      expect(row.formula).toBe(`${burst.toLocaleString('en-US')} + 600/min x 1 min`);
    }
  });

  it('leaves out rules without numbers', () => {
    expect(worstCaseTable(design([rule({ rate: undefined }), rule({ id: 'x', algorithm: undefined })]))).toEqual([]);
  });

  it('takes one more row kind as it is, sorted under its rule', () => {
    const fallback: WorstCaseKind = {
      kind: 'memory-fallback',
      rows: (d) =>
        d.rules.map((r) => ({
          ruleId: r.id,
          kind: 'memory-fallback',
          layer: 'middleware (in-memory fallback)' as const,
          periodSeconds: 60,
          periodText: '1 min',
          stated: 60,
          worstCase: 6 * 85,
          formula: '6 x (25 + 60/min x 1 min)',
          basis: 'each instance admits its own bucket while the store is down',
          measurable: false,
        })),
    };
    const rows = worstCaseTable(design([rule({ id: 'a' }), rule({ id: 'b' })]), [...WORST_CASE_KINDS, fallback]);
    expect(rows.map((r) => `${r.ruleId}/${r.kind}`)).toEqual(['a/rule', 'a/memory-fallback', 'b/rule', 'b/memory-fallback']);
  });

  it.each(exampleNames())('never states less than the limit, for every rule of example %s', (name) => {
    const d = exampleDesign(name);
    const rows = worstCaseTable(d);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.worstCase, `${r.ruleId}/${r.kind}`).toBeGreaterThanOrEqual(Math.floor(r.stated));
      expect(Number.isInteger(r.worstCase)).toBe(true);
    }
    // every sized rule has a row
    const sized = d.rules.filter((r) => r.rate && r.algorithm && r.layer).map((r) => r.id);
    expect([...new Set(rows.map((r) => r.ruleId))]).toEqual(sized);
  });
});

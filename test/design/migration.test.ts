/**
 * The migration table and the worst-case table count one rule's admissions with one function
 * (admittedWithin): over the rule's own period it is the worst-case figure, over an old
 * limiter's window what the migration compares.
 */
import { describe, expect, it } from 'vitest';
import { admittedWithin } from '../../src/design/algorithms.js';
import { buildMigration, existingAdmittedWithin, existingAlgorithm } from '../../src/design/migration.js';
import type { Algorithm, MatrixRule, Scope } from '../../src/design/model.js';
import { perCounter } from '../../src/design/worst-case.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';

const ALGORITHMS: Algorithm[] = ['gcra', 'token-bucket', 'leaky-bucket', 'sliding-window-counter', 'sliding-window-log', 'fixed-window'];

const rule = (algorithm: Algorithm, layer: MatrixRule['layer'], burst: number | null, requests = 100, periodSeconds = 60): MatrixRule =>
  ({
    id: `r-${algorithm}`,
    source: 'hand-written',
    tier: 'fairness',
    title: 't',
    endpointClass: 'all',
    endpoints: ['login'],
    routes: [],
    identity: 'ip',
    algorithm,
    layer,
    burst,
    rate: { requests, periodSeconds },
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    rationale: 'r',
  }) as MatrixRule;

type Sized = Parameters<typeof perCounter>[0];

describe('one count of what a rule admits', () => {
  it("over the rule's period, admittedWithin is the worst-case table's figure, for every algorithm, layer and burst", () => {
    for (const algorithm of ALGORITHMS) {
      for (const layer of ['edge', 'middleware'] as const) {
        for (const burst of [null, 40]) {
          const r = rule(algorithm, layer, burst);
          expect(admittedWithin(r, 60), `${algorithm} ${layer} ${burst}`).toBe(perCounter(r as Sized).worstCase);
        }
      }
    }
    for (const name of exampleNames()) {
      for (const r of exampleDesign(name).rules) {
        if (!r.rate || !r.algorithm || !(r.rate.requests > 0)) continue;
        expect(admittedWithin(r, r.rate.periodSeconds), r.id).toBe(perCounter(r as Sized).worstCase);
      }
    }
  });

  it('a window admits its limit in every window a stretch touches: one more than it spans; a log its limit per period', () => {
    // a stretch shorter than the window can still hold the end of one and the start of the next
    expect(admittedWithin(rule('fixed-window', 'edge', null), 1)).toBe(200);
    expect(admittedWithin(rule('sliding-window-counter', 'edge', null), 60)).toBe(200);
    expect(admittedWithin(rule('sliding-window-counter', 'edge', null), 120)).toBe(300);
    expect(admittedWithin(rule('sliding-window-log', 'edge', null), 1)).toBe(100);
    expect(admittedWithin(rule('sliding-window-log', 'edge', null), 61)).toBe(200);
    // what the application runs as GCRA: the burst (else the rate's count) at once, then the refill
    expect(admittedWithin(rule('sliding-window-counter', 'middleware', null), 60)).toBe(200);
    expect(admittedWithin(rule('token-bucket', 'middleware', 40), 30)).toBe(90);
  });

  it('the migration table compares an edge sliding window counter at nearly 2x its limit, as the worst-case table does', () => {
    const scope = {
      endpoints: [{ name: 'login', method: 'POST', route: '/login', class: 'auth', cost: 1 }],
      gateway: 'cloudflare',
    } as unknown as Scope;
    const edge = { ...rule('sliding-window-counter', 'edge', null), endpointClass: 'auth' } as MatrixRule;
    const migration = buildMigration(scope, [edge], [{ kind: 'nginx', name: 'z', path: '/login', limit: 100, windowSeconds: 60 }], []);
    const item = migration?.items[0];
    // (it counted limit x windows, 100: "the same" as the old 100 per minute)
    expect(item?.newWithinWindow).toBe(perCounter(edge as Sized).worstCase);
    expect(item?.newWithinWindow).toBe(200);
    expect(item?.verdict).toBe('looser');
    // a fixed window against an old limiter of a shorter window: both windows' limits (was one)
    const fixed = { ...rule('fixed-window', 'edge', null), endpointClass: 'auth' } as MatrixRule;
    const short = buildMigration(scope, [fixed], [{ kind: 'nginx', name: 'z', path: '/login', limit: 100, windowSeconds: 1 }], []);
    expect(short?.items[0]?.newWithinWindow).toBe(200);
  });
});

/** The reviewer's GraphQL-style API (test/fixtures/review): an old per-key limiter, cost-weighted rules, an old per-IP limiter on the token flow. */
async function graphqlReviewDesign() {
  const { readFileSync } = await import('node:fs');
  const { Answers } = await import('../../src/answers/schema.js');
  const { buildDesign } = await import('../../src/design/build.js');
  const raw = JSON.parse(readFileSync(new URL('../fixtures/review/graphql-hono.answers.json', import.meta.url), 'utf8'));
  delete raw.$schema;
  return buildDesign(Answers.parse(raw), { date: '2026-12-03' });
}

describe('an old limiter counting requests against a rule counting tokens', () => {
  it('compares calls: a rule of cost 5 admits a fifth as many calls to that endpoint', async () => {
    const d = await graphqlReviewDesign();
    const items = d.migration?.items ?? [];
    const query = items.find((m) => m.endpoint?.name === 'graphql-query' && m.verdict !== 'uncovered');
    const rule = d.rules.find((r) => r.id === query?.replacements[0]?.ruleId);
    const cost = rule?.cost?.byEndpoint.find((w) => w.endpoint === 'graphql-query')?.cost ?? rule?.cost?.default ?? 1;
    expect(cost).toBeGreaterThan(1);
    // 600 per minute before; Starter's bucket admits 1,400 tokens in a minute, 280 calls of cost 5
    // (Growth's and Scale's admit more than the old limit: the plans differ, so the row is looser)
    expect(query?.note).toContain('plan Starter 280 (fairness-starter-fail-open, tighter)');
    expect(query?.verdict).toBe('looser');
  });
});

describe("an auth flow's per-IP row and an old per-IP limiter over a shorter window", () => {
  it('takes the old numbers over only when they are no looser over its own window either (30 per second is not)', async () => {
    const d = await graphqlReviewDesign();
    const row = d.rules.find((r) => r.id === 'auth-token-per-ip');
    // the flow's own row stays (300 per minute), not 30 per second (1,800 per minute)
    expect(row?.rate).toEqual({ requests: 300, periodSeconds: 60 });
    expect(row?.keptFrom).toBeUndefined();
    const token = d.migration?.items.find((m) => m.endpoint?.name === 'token');
    expect(token?.verdict).toBe('looser');
    expect(token?.note).toContain(
      'Before, one ip could send 30 requests within one of its 1 s windows, and 60 within 1 s across a reset, the end of one window and the start of the next (fixed window)',
    );
  });
});

/** The reviewer's Fastify API behind Kong (test/fixtures/review): an old per-key INCR+EXPIRE limiter over /api/v1, two plans. */
async function fastifyKongReviewDesign() {
  const { readFileSync } = await import('node:fs');
  const { Answers } = await import('../../src/answers/schema.js');
  const { buildDesign } = await import('../../src/design/build.js');
  const raw = JSON.parse(readFileSync(new URL('../fixtures/review/fastify-kong.answers.json', import.meta.url), 'utf8'));
  delete raw.$schema;
  return buildDesign(Answers.parse(raw), { date: '2026-12-03' });
}

describe('an old limiter the same for every plan, against rules that differ by plan', () => {
  it("compares each plan's own rules with the old fixed window's worst case: Team gets less than one old window, Partner less only across a reset", async () => {
    const d = await fastifyKongReviewDesign();
    const list = d.migration?.items.find((m) => m.existing.includes('hitCounter') && m.endpoint?.name === 'list-projects');
    // before: 1,000 a minute per key; Team's bucket admits 360 in a minute, Partner's 100 + 20 x 60 = 1,300
    expect(list?.replacements.map((r) => [r.ruleId, r.withinWindow])).toEqual(
      expect.arrayContaining([
        ['fairness-team-fail-open', 360],
        ['fairness-partner-fail-open', 1_300],
      ]),
    );
    // the old counter is a fixed window: 1,000 at the end of one minute and 1,000 more at the start
    // of the next, 2,000 within a minute; Partner's 1,300 is less than that, though no less than one window
    expect(list?.oldPerWindow).toBe(1_000);
    expect(list?.oldWithinWindow).toBe(2_000);
    expect(list?.verdict).toBe('tighter');
    expect(list?.newWithinWindow).toBe(1_300);
    expect(list?.note).toContain('warning, tighter and tighter across a reset only');
    expect(list?.note).toContain(
      'plan Team 360 (fairness-team-fail-open, tighter); plan Partner 1,300 (fairness-partner-fail-open, tighter across a reset only)',
    );
    // both plans tighter (writes cost 2): tighter, the best-treated plan's count in the table
    const create = d.migration?.items.find((m) => m.existing.includes('hitCounter') && m.endpoint?.name === 'create-project');
    expect(create?.verdict).toBe('tighter');
    expect(create?.newWithinWindow).toBe(650);
    expect(create?.note).not.toContain('looser');
  });
});

describe('an old per-key limiter on a route the new rules count per something else', () => {
  it('says what the route keeps instead of claiming retiring it leaves the route without a limit', async () => {
    const d = await fastifyKongReviewDesign();
    const signIn = d.migration?.items.find((m) => m.existing.includes('hitCounter') && m.endpoint?.name === 'sign-in');
    expect(signIn?.verdict).toBe('uncovered');
    expect(signIn?.note).toContain('Retiring this limiter removes its per-api-key limit on this route');
    expect(signIn?.note).not.toContain('removes the limit on this route');
    expect(signIn?.note).toContain(
      'The route keeps the new rules counting per username and ip (auth-login-per-identity, auth-login-per-ip); its callers are anonymous, so they bring no api-key to count.',
    );
  });
});

describe('how an existing limiter counts', () => {
  it('reads it from the answers, else from the kind, else takes the fixed window (the most it could have let through)', () => {
    const kinds: [string, string][] = [
      ['express-rate-limit', 'fixed-window'],
      ['rate-limiter-flexible', 'fixed-window'],
      ['@fastify/rate-limit', 'fixed-window'],
      ['@nestjs/throttler', 'sliding-window'],
      ['nginx', 'leaky-bucket'],
      ['kong:rate-limiting', 'fixed-window'],
      ['kong:rate-limiting-advanced', 'sliding-window'],
      ['envoy-local', 'token-bucket'],
      ['redis INCR+EXPIRE', 'fixed-window'],
      ['incr-expire', 'fixed-window'],
    ];
    for (const [kind, algorithm] of kinds) expect(existingAlgorithm({ kind }), kind).toEqual({ algorithm, assumed: false });
    expect(existingAlgorithm({ kind: 'in-house' })).toEqual({ algorithm: 'fixed-window', assumed: true });
    expect(existingAlgorithm({ kind: 'nginx', algorithm: 'unknown' })).toEqual({ algorithm: 'fixed-window', assumed: true });
    expect(existingAlgorithm({ kind: 'express-rate-limit', algorithm: 'sliding-window' })).toEqual({
      algorithm: 'sliding-window',
      assumed: false,
    });
  });

  it('a fixed window lets one more window through than a stretch spans; a sliding window one per window; a bucket its burst and its rate', () => {
    const l = { kind: 'x', limit: 100, windowSeconds: 60 };
    expect(existingAdmittedWithin({ ...l, algorithm: 'fixed-window' }, 60)).toBe(200);
    expect(existingAdmittedWithin({ ...l, algorithm: 'fixed-window' }, 1)).toBe(200);
    expect(existingAdmittedWithin({ ...l, algorithm: 'fixed-window' }, 61)).toBe(300);
    expect(existingAdmittedWithin({ ...l, algorithm: 'sliding-window' }, 60)).toBe(100);
    expect(existingAdmittedWithin({ ...l, algorithm: 'sliding-window', burst: 5 }, 120)).toBe(205);
    // nginx's limit_req: the first request and its burst at once, then its rate (measured in test/codegen/existing-nginx-limiters.test.ts)
    expect(existingAdmittedWithin({ kind: 'nginx', limit: 10, windowSeconds: 1, burst: 20 }, 1)).toBe(31);
    expect(existingAdmittedWithin({ kind: 'nginx', limit: 10, windowSeconds: 1, burst: 20 }, 60)).toBe(621);
    expect(existingAdmittedWithin({ kind: 'nginx', limit: 6, windowSeconds: 60 }, 60)).toBe(7);
    // a leaky bucket of another kind: its burst and its rate
    expect(existingAdmittedWithin({ kind: 'x', algorithm: 'leaky-bucket', limit: 10, windowSeconds: 1, burst: 20 }, 1)).toBe(30);
  });
});

describe("an auth flow's per-IP row takes over an old limiter only when it is tighter at its worst", () => {
  async function loginDesign(limiter: Record<string, unknown>) {
    const { Answers } = await import('../../src/answers/schema.js');
    const { buildDesign } = await import('../../src/design/build.js');
    const answers = Answers.parse({
      stack: { topology: 'single', language: 'TypeScript', framework: 'express' },
      endpoints: [{ name: 'login', method: 'POST', route: '/login', class: 'auth', authKind: 'login' }],
      existing: { limiters: [{ kind: 'express-rate-limit', name: 'loginLimiter', path: '/login', keyedOn: 'ip', ...limiter }] },
    });
    const d = buildDesign(answers, { date: '2026-12-03' });
    return d.rules.find((r) => r.id === 'auth-login-per-ip');
  }

  it('keeps the default 100 per 15 min against a fixed window of 60 per 15 min: 120 across a reset is not tighter', async () => {
    const row = await loginDesign({ limit: 60, windowSeconds: 900, algorithm: 'fixed-window' });
    expect(row?.keptFrom).toBeUndefined();
    expect(row?.rate).toEqual({ requests: 100, periodSeconds: 900 });
  });

  it('takes over the same 60 per 15 min counted in a sliding window (60 at worst)', async () => {
    const row = await loginDesign({ limit: 60, windowSeconds: 900, algorithm: 'sliding-window' });
    expect(row?.keptFrom).toBe('express-rate-limit loginLimiter');
    expect(row?.rate).toEqual({ requests: 60, periodSeconds: 900 });
  });

  it('counts a fixed window’s burst too, and states the worst case when it takes one over', async () => {
    // 40 + 15 burst = 55 a window, 95 across a reset: under 100, taken over
    const kept = await loginDesign({ limit: 40, windowSeconds: 900, burst: 15, algorithm: 'fixed-window' });
    expect(kept?.keptFrom).toBe('express-rate-limit loginLimiter');
    expect(kept?.rationale).toContain(
      'express-rate-limit loginLimiter: 40 per 15 min, burst 15 per IP, which lets one address send 55 requests within one of its 15 min windows, and 95 within 15 min across a reset, the end of one window and the start of the next (fixed window); that is tighter than',
    );
    // 45 + 15: 105 across a reset, not under 100
    const looser = await loginDesign({ limit: 45, windowSeconds: 900, burst: 15, algorithm: 'fixed-window' });
    expect(looser?.keptFrom).toBeUndefined();
  });

  it("over the row's longer window too: a fixed window of 10 per 90 s admits 10 x 11 = 110 within 15 min at worst, not 100", async () => {
    const row = await loginDesign({ limit: 10, windowSeconds: 90, algorithm: 'fixed-window' });
    expect(row?.keptFrom).toBeUndefined();
    // counted in a sliding window, 10 x 10 = 100 within 15 min: no looser over either window
    const sliding = await loginDesign({ limit: 10, windowSeconds: 90, algorithm: 'sliding-window' });
    expect(sliding?.keptFrom).toBe('express-rate-limit loginLimiter');
  });
});

describe('an old limiter counting in each instance: compared for the whole fleet, as the new rules are', () => {
  async function design(limiter: Record<string, unknown>, stack: Record<string, unknown> = { topology: 'horizontal', instances: 3 }) {
    const { Answers } = await import('../../src/answers/schema.js');
    const { buildDesign } = await import('../../src/design/build.js');
    const answers = Answers.parse({
      stack: { language: 'TypeScript', framework: 'express', store: 'redis', ...stack },
      endpoints: [{ name: 'login', method: 'POST', route: '/login', class: 'auth', authKind: 'login' }],
      existing: { limiters: [{ kind: 'express-rate-limit', name: 'loginLimiter', path: '/login', keyedOn: 'ip', ...limiter }] },
    });
    return buildDesign(answers, { date: '2026-12-03' });
  }

  it("express-rate-limit's default MemoryStore on 3 instances admits 3 x 60 = 180 within 15 min: not tighter than the flow's 100, so not taken over", async () => {
    const d = await design({ limit: 60, windowSeconds: 900, algorithm: 'sliding-window' });
    const row = d.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(row?.keptFrom).toBeUndefined();
    expect(row?.rate).toEqual({ requests: 100, periodSeconds: 900 });
    const item = d.migration?.items.find((i) => i.endpoint?.name === 'login');
    expect(item).toMatchObject({
      oldWithinWindow: 180,
      oldNodes: { k: 3, each: 60, unit: 'instance' },
      newWithinWindow: 100,
      verdict: 'tighter',
    });
    expect(item?.note).toContain(
      "Before, one ip could send 60 requests within any 15 min (sliding window) in each application instance's memory (its default in-memory store: set store to shared in the answers if it uses a shared one), 180 across the 3 application instances (stack.instances), each counting on its own; the new rules admit 100 within any 15 min for the whole fleet (auth-login-per-ip)",
    );
  });

  it('the same limiter with a shared store counts once: 60 within 15 min, tighter, taken over; the reason gives both figures with their scope', async () => {
    const d = await design({ limit: 60, windowSeconds: 900, algorithm: 'sliding-window', store: 'shared' });
    const row = d.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(row?.keptFrom).toBe('express-rate-limit loginLimiter');
    expect(row?.rationale).toContain(
      "which lets one address send 60 requests within any 15 min (sliding window); that is tighter than this flow's default of 100 per 15 min (which would admit 100 within its 900 s for the whole fleet)",
    );
    expect(d.migration?.items[0]).toMatchObject({ oldWithinWindow: 60, verdict: 'kept' });
    expect(d.migration?.items[0]?.oldNodes).toBeUndefined();
  });

  it('an in-process limiter taken over on a store-backed row is tighter than before, and says so', async () => {
    // 20 per 15 min in each of 3 instances: 60 for the fleet, still under 100
    const d = await design({ limit: 20, windowSeconds: 900, algorithm: 'sliding-window', store: 'in-process' });
    const row = d.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(row?.keptFrom).toBe('express-rate-limit loginLimiter');
    expect(row?.rationale).toContain(
      "20 requests within any 15 min (sliding window) in each application instance's memory, 60 across the 3 application instances (stack.instances), each counting on its own; that is tighter than this flow's default of 100 per 15 min (which would admit 100 within its 900 s for the whole fleet)",
    );
    expect(row?.rationale).toContain(
      'each of the 3 instances counted it in its own memory, while this row counts it once for the whole fleet',
    );
  });

  it('an old nginx zone when the gateway is not nginx: counted as one node, and the text says the node count is not known', async () => {
    const d = await design({ kind: 'nginx', name: 'perip', limit: 10, windowSeconds: 1, burst: 20 });
    const item = d.migration?.items[0];
    expect(item).toMatchObject({ oldWithinWindow: 31, oldNodes: { k: 1, known: false, unit: 'nginx node' } });
    expect(item?.note).toContain(
      "at each nginx node that runs it, each counting on its own; the design's gateway is not nginx, so the answers give no count of those nodes and this figure is one node's: with K nodes, K times it passes",
    );
  });
});

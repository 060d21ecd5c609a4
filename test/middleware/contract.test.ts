/**
 * The response contract of the document against the generated middleware: the compiled core's
 * body builder and policy window are the ones src/design/contract.ts puts in the document, and
 * over real HTTP (Express and Fastify, a real redis-server) the 429 a drained bucket gets is
 * byte for byte the document's example, RateLimit-Policy states burst per refill time, a
 * calendar quota states its month's real length and shows up beside the rate limit on every
 * response it counts, and a call admitted past a soft quota carries Quota-Exceeded; the series
 * the middleware exports for those calls are what the design's overage alert reads (promtool).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AnswersInput } from '../../src/answers/schema.js';
import { policyWindowSeconds, problemBody, type ShownRule } from '../../src/design/contract.js';
import type { Design } from '../../src/design/model.js';
import { generateAlerts } from '../../src/codegen/alerts.js';
import { expectPromtoolPasses, firesAt, minuteTest, quietAt } from '../helpers/promtool.js';
import { DOCS, MAIN } from './designs.js';
import { counter, designFrom, hit, sleep, useServedMiddleware, type Framework, type Served, type TestOptions } from './harness.js';

/** Plans with tiny quotas: Free hard at 3, Pro soft-warning at 5 (backstop 6), structured fields. */
const QUOTA: AnswersInput = {
  project: { name: 'quota headers API' },
  goals: ['fairness', 'quotas'],
  stack: { language: 'TypeScript', framework: 'express', topology: 'single', gateway: 'none', store: 'redis', trustedProxies: [] },
  identities: ['tenant', 'ip'],
  endpoints: [{ name: 'orders', method: 'GET', route: '/v1/orders', class: 'read' }],
  traffic: { typicalRps: 10, peakRps: 100, burstiness: 'moderate' },
  plans: [
    { name: 'Free', rate: { requests: 1, per: 'minute' }, burst: 20, quota: 3, exhaustion: 'hard' },
    { name: 'Pro', rate: { requests: 1, per: 'minute' }, burst: 20, quota: 5, exhaustion: 'soft-warning' },
  ],
  quotas: { reset: { kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' }, billingSource: 'metering-system' },
  headers: { convention: 'ietf-structured', docsUrl: DOCS },
};
const QUOTA_TRIO: AnswersInput = { ...QUOTA, project: { name: 'quota trio API' }, headers: { convention: 'ietf-trio', docsUrl: DOCS } };
const QUOTA_IN_PROCESS: AnswersInput = { ...QUOTA, project: { name: 'quota in process' }, stack: { ...QUOTA.stack, store: 'none' } };

interface RuleSpec extends ShownRule {
  window: 'calendar' | 'rolling' | 'fixed' | null;
}
interface Core {
  RULES: readonly RuleSpec[];
  DOCS_URL: string;
  problemFields(
    docsUrl: string,
    rule: RuleSpec,
    s: { limit: number; resetSeconds: number; windowSeconds: number },
    retryAfter: number,
  ): Record<string, unknown>;
  policyWindowSeconds(rule: RuleSpec): number;
  calendarPeriod(ms: number, period: 'day' | 'month', tz: string): { id: string; start: number; end: number };
  createLimiter(options: Record<string, unknown>): {
    check(input: Record<string, unknown>): Promise<{ status: number; headers: [string, string][]; body: string | null }>;
    close(): void;
  };
}

const designs: Record<string, Design> = {
  main: designFrom(MAIN),
  quota: designFrom(QUOTA),
  trio: designFrom(QUOTA_TRIO),
  inproc: designFrom(QUOTA_IN_PROCESS),
};

const mw = useServedMiddleware(designs, { label: 'ct' });
const cores: Record<string, Core> = {};

beforeAll(async () => {
  for (const name of Object.keys(designs)) cores[name] = await mw.scratch.load<Core>(name, 'ratelimit-core');
});

const start = (fw: Framework, design: string, options: TestOptions = {}): Promise<Served> => mw.start(fw, design, options);

const core = (name: string): Core => cores[name] as Core;

/** Seconds in the Europe/Berlin month containing now, by the generated core's own calendar. */
function monthSeconds(c: Core, ms = Date.now()): number {
  const p = c.calendarPeriod(ms, 'month', 'Europe/Berlin');
  return Math.round((p.end - p.start) / 1000);
}

describe('one builder: the document shows what the compiled middleware sends', () => {
  it("the core's problemBody equals the document's for every rule, in every variant", () => {
    for (const [name, design] of Object.entries(designs)) {
      const c = core(name);
      expect(c.DOCS_URL).toBe(design.contract.docsUrl);
      for (const rule of c.RULES) {
        for (const s of [
          { limit: 12, resetSeconds: 720, windowSeconds: 720 },
          { limit: 3, resetSeconds: 86400, windowSeconds: 2592000 },
        ]) {
          expect(c.problemFields(c.DOCS_URL, rule, s, 60), `${name} ${rule.id}`).toEqual(problemBody(DOCS, rule, s, 60));
        }
        expect(c.policyWindowSeconds(rule), `${name} ${rule.id}`).toBe(policyWindowSeconds(rule));
      }
    }
  });

  it('burst 12 at 1 per minute states 12 per 720 s, not 12 per 60 s', () => {
    const rule = core('main').RULES.find((r) => r.id === 'fairness-per-api-key') as RuleSpec;
    expect(core('main').policyWindowSeconds(rule)).toBe(720);
    expect(designs.main?.contract.headers.find((h) => h.name === 'RateLimit-Policy')?.example).toBe('"fairness-per-api-key";q=12;w=720');
  });

  it("a calendar quota states its current month's real length (28 days, 31 days plus the DST hour), in process", async () => {
    const c = core('inproc');
    for (const [at, seconds] of [
      [Date.UTC(2026, 1, 10, 12), 28 * 86400],
      [Date.UTC(2026, 3, 10, 12), 30 * 86400],
      [Date.UTC(2026, 9, 10, 12), 31 * 86400 + 3600],
    ] as const) {
      const limiter = c.createLimiter({
        registry: null,
        defaultMode: 'enforce',
        now: () => at,
        identify: () => ({ tenantId: `t${at}`, plan: 'Free' }),
      });
      const d = await limiter.check({ method: 'GET', url: '/v1/orders', remoteAddress: '192.0.2.1', forwardedFor: undefined, req: {} });
      limiter.close();
      expect(d.status).toBe(200);
      const policy = d.headers.find(([n]) => n === 'RateLimit-Policy')?.[1];
      expect(policy).toBe(`"fairness-free";q=20;w=1200, "quota-free";q=3;w=${seconds}`);
      expect(monthSeconds(c, at)).toBe(seconds);
    }
  });
});

describe.each<Framework>(['express', 'fastify'])('%s middleware', (fw) => {
  it("a drained bucket's 429 is the document's example, headers and body, to the byte", async () => {
    const design = designs.main as Design;
    const example = design.contract.rateLimitedExample;
    expect(example?.ruleId).toBe('fairness-per-api-key');
    const s = await start(fw, 'main');
    const key = { 'x-test-key': `drain-${fw}` };
    for (let i = 0; i < 12; i++) {
      const ok = await hit(s.url, 'GET', '/v1/items', key);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toBe('"fairness-per-api-key";q=12;w=720');
    }
    await sleep(5);
    const res = await fetch(`${s.url}/v1/items`, { headers: key });
    const body = await res.text();
    expect(res.status).toBe(429);
    for (const h of example?.headers ?? []) expect(res.headers.get(h.name), h.name).toBe(h.value);
    expect(body).toBe(JSON.stringify(design.contract.rateLimitedBody));
  });

  it('a plan quota shows beside the rate limit on every response it counts, and its 429 is built as documented', async () => {
    const c = core('quota');
    const s = await start(fw, 'quota');
    const tenant = { 'x-test-tenant': `free-${fw}`, 'x-test-plan': 'Free' };
    const w = monthSeconds(c);
    const end = c.calendarPeriod(Date.now(), 'month', 'Europe/Berlin').end;
    for (let i = 0; i < 3; i++) {
      const ok = await hit(s.url, 'GET', '/v1/orders', tenant);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toBe(`"fairness-free";q=20;w=1200, "quota-free";q=3;w=${w}`);
      const state = ok.headers.get('ratelimit') ?? '';
      const m = /^"fairness-free";r=(\d+);t=(\d+), "quota-free";r=(\d+);t=(\d+)$/.exec(state);
      expect(m, state).not.toBeNull();
      expect(Number(m?.[1])).toBe(19 - i);
      expect(Number(m?.[3])).toBe(2 - i);
      expect(Math.abs(Number(m?.[4]) - (end - Date.now()) / 1000)).toBeLessThan(5);
      expect(ok.headers.get('quota-exceeded')).toBeNull();
    }
    const refused = await fetch(`${s.url}/v1/orders`, { headers: tenant });
    const text = await refused.text();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    const reset = Number(/;t=(\d+)$/.exec(refused.headers.get('ratelimit') ?? '')?.[1]);
    expect(refused.headers.get('ratelimit-policy')).toBe(`"quota-free";q=3;w=${w}`);
    expect(refused.headers.get('ratelimit')).toBe(`"quota-free";r=0;t=${reset}`);
    const rule = c.RULES.find((r) => r.id === 'quota-free') as RuleSpec;
    expect(text).toBe(JSON.stringify(problemBody(DOCS, rule, { limit: 3, resetSeconds: reset, windowSeconds: w }, retryAfter)));
    // the document's example is the same builder, in its stated situation
    expect(designs.quota?.contract.quotaExceededBody).toEqual(
      problemBody(DOCS, rule, { limit: 3, resetSeconds: 86400, windowSeconds: 30 * 86400 }, 86400),
    );
  });

  it('past a soft quota the call passes with Quota-Exceeded, until the hard stop refuses; remaining reaches 0 only there', async () => {
    const s = await start(fw, 'quota');
    const tenant = { 'x-test-tenant': `pro-${fw}`, 'x-test-plan': 'Pro' };
    const seen: { status: number; quota: string | undefined; warning: string | null }[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await hit(s.url, 'GET', '/v1/orders', tenant);
      seen.push({
        status: r.status,
        quota: /"quota-pro";r=\d+/.exec(r.headers.get('ratelimit') ?? '')?.[0],
        warning: r.headers.get('quota-exceeded'),
      });
    }
    // plan quota 5, hard stop 6: the remaining count counts down to the refusal, not to the quota
    expect(seen).toEqual([
      { status: 200, quota: '"quota-pro";r=5', warning: null },
      { status: 200, quota: '"quota-pro";r=4', warning: null },
      { status: 200, quota: '"quota-pro";r=3', warning: null },
      { status: 200, quota: '"quota-pro";r=2', warning: null },
      { status: 200, quota: '"quota-pro";r=1', warning: null },
      { status: 200, quota: '"quota-pro";r=0', warning: '"quota-pro";over=1' },
      { status: 429, quota: '"quota-pro";r=0', warning: null },
    ]);
    // the metric the document describes as "calls refused or flagged because a plan quota was
    // used up" counts the flagged call past the quota and the hard stop's refusal
    const metric = designs.quota?.monitoring.metrics.find((m) => m.name === 'ratelimit_quota_exhausted_total');
    expect(metric?.help).toMatch(/^Calls refused or flagged because a plan quota was used up/);
    expect(await counter(s.registry, 'ratelimit_quota_exhausted_total', { rule: 'quota-pro', plan: 'Pro' })).toBe(2);
  });

  it.each(['quota', 'trio'])("a soft quota's 429 at its hard stop states the plan quota and the hard stop (%s)", async (name) => {
    const c = core(name);
    const design = designs[name] as Design;
    const s = await start(fw, name);
    const tenant = { 'x-test-tenant': `stop-${name}-${fw}`, 'x-test-plan': 'Pro' };
    for (let i = 0; i < 6; i++) expect((await hit(s.url, 'GET', '/v1/orders', tenant)).status).toBe(200);
    const refused = await fetch(`${s.url}/v1/orders`, { headers: tenant });
    const text = await refused.text();
    expect(refused.status).toBe(429);
    const body = JSON.parse(text) as { code: string; detail: string; limit: Record<string, unknown>; resetSeconds: number };
    const w = monthSeconds(c);
    expect(body.code).toBe('QUOTA_EXCEEDED');
    expect(body.limit).toEqual({ rule: 'quota-pro', quota: 5, hardStop: 6, overageAllowance: 1, windowSeconds: w });
    expect(body.detail).toMatch(/^The overage allowance of the quota quota-pro for this period is used up: the plan quota is 5, /);
    expect(body.detail).toContain('refused at that hard stop');
    expect(body.detail).toContain('hard stop at 6');
    // the same builder as the document's example
    const rule = c.RULES.find((r) => r.id === 'quota-pro') as RuleSpec;
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(text).toBe(JSON.stringify(problemBody(DOCS, rule, { limit: 6, resetSeconds: body.resetSeconds, windowSeconds: w }, retryAfter)));
    // the headers state the hard stop, with nothing left: consistent with the refusal
    if (name === 'quota') {
      expect(refused.headers.get('ratelimit-policy')).toBe(`"quota-pro";q=6;w=${w}`);
      expect(refused.headers.get('ratelimit')).toMatch(/^"quota-pro";r=0;t=\d+$/);
    } else {
      for (const [limit, remaining] of [
        ['ratelimit-limit', 'ratelimit-remaining'],
        ['ratelimit-quota-limit', 'ratelimit-quota-remaining'],
      ] as const) {
        expect(refused.headers.get(limit), limit).toBe('6');
        expect(refused.headers.get(remaining), remaining).toBe('0');
      }
    }
    expect(refused.headers.get('quota-exceeded')).toBeNull();
    // the document's example of this refusal carries the same fields, with its own numbers
    const documented = (design.contract.overageExceededBody ?? {}) as { limit?: Record<string, unknown> };
    expect(documented.limit).toEqual({ rule: 'quota-pro', quota: 5, hardStop: 6, overageAllowance: 1, windowSeconds: 30 * 86400 });
    for (const h of design.contract.overageExceededExample?.headers ?? []) expect(refused.headers.get(h.name), h.name).not.toBeNull();
  });

  it('the trio convention: the quota trio beside the tightest rule, named as the document lists it', async () => {
    const s = await start(fw, 'trio');
    const documented = designs.trio?.contract.quotaHeaders.map((h) => h.name) ?? [];
    expect(documented).toEqual(['RateLimit-Quota-Limit', 'RateLimit-Quota-Remaining', 'RateLimit-Quota-Reset', 'Quota-Exceeded']);
    const ok = await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': `trio-${fw}`, 'x-test-plan': 'Free' });
    expect(ok.headers.get('ratelimit-limit')).toBe('3');
    expect(ok.headers.get('ratelimit-remaining')).toBe('2');
    expect(ok.headers.get('ratelimit-quota-limit')).toBe('3');
    expect(ok.headers.get('ratelimit-quota-remaining')).toBe('2');
    expect(Number(ok.headers.get('ratelimit-quota-reset'))).toBeGreaterThan(0);
    // the quota's own 429 fills both trios, as the document's example lists them
    await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': `trio-${fw}`, 'x-test-plan': 'Free' });
    await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': `trio-${fw}`, 'x-test-plan': 'Free' });
    const refused = await hit(s.url, 'GET', '/v1/orders', { 'x-test-tenant': `trio-${fw}`, 'x-test-plan': 'Free' });
    expect(refused.status).toBe(429);
    for (const h of designs.trio?.contract.quotaExceededExample?.headers ?? []) expect(refused.headers.get(h.name), h.name).not.toBeNull();
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-quota-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-quota-reset')).toBe(refused.headers.get('ratelimit-reset'));
    // a caller the quota does not count (no account): no quota headers
    const anon = await hit(s.url, 'GET', '/v1/orders');
    expect(anon.headers.get('ratelimit-quota-limit')).toBeNull();
    expect(anon.headers.get('ratelimit-limit')).not.toBeNull();
  });
});

describe('the overage alert reads what the middleware exports', () => {
  it('calls past the soft quota make RateLimitQuotaOverage fire for quota-pro; refusals at the hard quota do not', async () => {
    const design = designs.quota as Design;
    const alert = design.monitoring.alerts.find((a) => a.name === 'RateLimitQuotaOverage');
    expect(alert, 'the design has a soft quota (Pro), so it has the overage alert').toBeDefined();
    const s = await start('express', 'quota');
    /** The quota counter's series as the registry exposes them to a scrape. */
    const scrape = async (): Promise<Map<string, number>> => {
      const text = await s.registry.metrics();
      const series = [...text.matchAll(/^(ratelimit_quota_exhausted_total\{[^}]*\}) (\S+)$/gm)];
      return new Map(series.map((m) => [m[1] as string, Number(m[2])]));
    };
    const before = await scrape();
    // Free (hard at 3): three calls and a refusal; Pro (quota 5, hard stop 6): five calls and one past its quota
    const free = { 'x-test-tenant': 'overage-free', 'x-test-plan': 'Free' };
    const pro = { 'x-test-tenant': 'overage-pro', 'x-test-plan': 'Pro' };
    for (let i = 0; i < 4; i++) expect((await hit(s.url, 'GET', '/v1/orders', free)).status).toBe(i < 3 ? 200 : 429);
    for (let i = 0; i < 6; i++) expect((await hit(s.url, 'GET', '/v1/orders', pro)).status).toBe(200);
    const after = await scrape();
    expect(Object.fromEntries(after)).toEqual({
      'ratelimit_quota_exhausted_total{rule="quota-free",plan="Free"}': 1,
      'ratelimit_quota_exhausted_total{rule="quota-pro",plan="Pro"}': 1,
    });
    // each series as Prometheus would scrape it: its value before the calls for ten minutes, after them from then on
    const overage = alert as NonNullable<typeof alert>;
    await expectPromtoolPasses(generateAlerts(design).content, [
      minuteTest(
        [...after].map(([series, value]) => ({
          series: series.replace(/\}$/, ',instance="a"}'),
          values: `${before.get(series) ?? 0}x9 ${value}x30`,
        })),
        [quietAt('9m', overage), firesAt('20m', overage, { rule: 'quota-pro', plan: 'Pro' })],
      ),
    ]);
  });
});

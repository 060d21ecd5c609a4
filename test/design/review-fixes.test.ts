/**
 * What the design states must follow from its numbers: outbound bursts within the provider
 * limit, rationale arithmetic, assumed backstops and defaults named as assumptions, and test
 * scenarios that say what the limiter really guarantees.
 */
import { describe, expect, it } from 'vitest';
import { defaultOutboundBurst, outboundPeak, resolveAnswers } from '../../src/design/scope.js';
import { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { worstCaseTable } from '../../src/design/worst-case.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { DATE, exampleAnswers, exampleDesign } from '../helpers/examples.js';

const build = (a: unknown) => buildDesign(Answers.parse(a), { date: DATE });
const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};
const assumption = (d: Design, id: string): string => {
  const a = d.assumptions.find((x) => x.id === id);
  if (!a) throw new Error(`no assumption ${id} in ${d.assumptions.map((x) => x.id).join(', ')}`);
  return a.text;
};
const scenario = (d: Design, id: string) => d.scenarios.find((s) => s.id === id)!;

const saas = exampleDesign('saas-platform');
const consumer = exampleDesign('consumer-auth');
const minimal = exampleDesign('minimal-generic');

describe('outbound burst stays within the provider limit', () => {
  it('defaults the burst so burst + rate x period <= the provider limit (Stripe 10, SendGrid 8)', () => {
    const [stripe, sendgrid] = saas.scope.outbound;
    expect(stripe).toMatchObject({ name: 'Stripe', burst: 10, assumed: ['burst', 'safetyFraction'] });
    expect(sendgrid).toMatchObject({ name: 'SendGrid', burst: 8, assumed: ['burst'] });
    expect(rule(saas, 'outbound-stripe')).toMatchObject({ burst: 10, rate: { requests: 90, periodSeconds: 1 } });
    for (const p of saas.scope.outbound) {
      const { peak, over } = outboundPeak(p);
      expect(over, p.name).toBe(0);
      expect(peak, p.name).toBeLessThanOrEqual(p.limit.requests);
    }
    // one second of rate when that is already within the limit; at least 1
    expect(defaultOutboundBurst(600, 60, 0.8)).toBe(8);
    expect(defaultOutboundBurst(100, 1, 0.9)).toBe(10);
    expect(defaultOutboundBurst(100, 1, 1)).toBe(1);
    expect(defaultOutboundBurst(1000, 3600, 0.9)).toBe(1);
  });

  it('states the default and its arithmetic in the assumptions', () => {
    const text = assumption(saas, 'outbound.burst');
    expect(text).toContain('Stripe 10 (10 + 90 = 100 calls per second, exactly the limit of 100/second)');
    expect(text).toContain('SendGrid 8 (one second of its 8/s rate; 8 + 480 = 488 calls per minute, within 600/minute)');
    expect(rule(saas, 'outbound-stripe').rationale).toContain(
      'Burst 10: a full bucket plus one second of refill sends at most 10 + 90 = 100 calls in a second',
    );
  });

  it('warns when a stated burst lets burst + rate pass the provider limit', () => {
    const a = exampleAnswers('saas-platform');
    const d = buildDesign({ ...a, outbound: [{ name: 'Stripe', limit: { requests: 100, per: 'second' }, burst: 90 }] }, { date: DATE });
    expect(d.scope.outbound[0]?.assumed).toEqual(['safetyFraction']);
    expect(d.assumptions.find((x) => x.id === 'outbound.burst')).toBeUndefined();
    const r = rule(d, 'outbound-stripe');
    expect(r.burst).toBe(90);
    expect(r.rationale).toContain(
      "Warning: burst 90 plus the 90 the bucket refills per second lets up to 180 calls through in one second, 80 over the provider's 100/second; lower the burst to at most 10.",
    );
  });
});

describe('matrix rationale arithmetic', () => {
  it('computes how many clients reach the ceiling instead of saying ten', () => {
    const c = rule(consumer, 'fairness-per-user').rationale;
    expect(c).toContain(
      '(60 req/s, rounded down to 50 req/s): 12 users at their full rate at once are needed to reach the ceiling (600 / 50, rounded up)',
    );
    expect(c).not.toMatch(/ten clients/);
    expect(rule(minimal, 'fairness-per-api-key').rationale).toContain(
      '12 API keys at their full rate at once are needed to reach the ceiling (225 / 20, rounded up)',
    );
  });

  it('states what the anonymous limit really is: per client times clients per address', () => {
    const s = rule(saas, 'anonymous-per-ip');
    expect(s.rate).toEqual({ requests: 50, periodSeconds: 1 });
    expect(s.rationale).toContain('2 req/s per client (assumed) x 25 clients behind one address (assumed) = 50 req/s');
    expect(s.derivation).toBe(
      '2 req/s per client (assumed) x 25 clients behind one address (assumed) = 50 req/s; burst 500 = 10 s of rate',
    );
    expect(s.rationale).not.toMatch(/twice/);
  });

  it('derives the webhook limit and caps its burst at the ceiling burst', () => {
    const w = rule(saas, 'webhooks-per-source');
    const ceiling = rule(saas, 'global-ceiling');
    expect(w.rate).toEqual({ requests: 500, periodSeconds: 1 });
    expect(w.burst).toBe(4800);
    expect(w.burst).toBeLessThanOrEqual(ceiling.burst as number);
    expect(w.rationale).toContain('a fifth of the 4,800 req/s ceiling (960 req/s), rounded down to 500');
    expect(w.rationale).toContain("burst 4,800, the ceiling's own burst: 10 s of rate would be 5,000");
  });

  it('credits the per-IP row, not the per-address row, with stopping account probing', () => {
    expect(rule(saas, 'auth-password-reset-per-identity').rationale).not.toMatch(/probing/);
    const ip = rule(saas, 'auth-password-reset-per-ip').rationale;
    expect(ip).toMatch(/^Stops probing which e-mail addresses have accounts/);
    expect(ip).toContain('Probing needs only one request per address');
  });

  it('counts one key per outbound provider (the pause shares the bucket key)', () => {
    const r = rule(saas, 'outbound-sendgrid');
    expect(r.cardinality?.bound).toBe(1);
    expect(r.cardinality?.basis).toMatch(/same key as the bucket/);
    expect(r.cardinality?.basis).toMatch(/Retry-After/);
  });
});

describe('quota backstops are assumptions, shown apart from the quota', () => {
  it('keeps the quota and the backstop as distinct numbers on the rule', () => {
    expect(rule(saas, 'quota-pro')).toMatchObject({ rate: { requests: 1_200_000 }, quotaBackstop: { quota: 1_000_000, factor: 1.2 } });
    expect(rule(saas, 'quota-enterprise')).toMatchObject({
      rate: { requests: 60_000_000 },
      quotaBackstop: { quota: 20_000_000, factor: 3 },
    });
    expect(rule(saas, 'quota-free').quotaBackstop).toBeUndefined();
  });

  it('lists the assumed overage caps as an open product decision, with how to change them and the rules they feed', () => {
    const a = saas.assumptions.find((x) => x.id === 'plans.overageCap')!;
    expect(a.text).toMatch(/^Open product decision/);
    expect(a.text).toContain('Pro (soft-warning) is refused past 1,200,000 calls (120% of its 1,000,000 quota)');
    expect(a.text).toContain('Enterprise (pay-per-overage) is refused past 60,000,000 calls (3x its 20,000,000 quota)');
    expect(a.text).toMatch(/exhaustion to "hard"/);
    expect(a.text).toContain('"quota-pro" or "quota-enterprise"');
    expect(a.ruleIds).toEqual(['quota-pro', 'quota-enterprise']);
    expect(rule(saas, 'quota-pro').rationale).toMatch(/an assumed cap: an open product decision/);
  });

  it('records no cap assumption when every quota is a hard stop or states its cap', () => {
    const d = build({
      goals: ['quotas'],
      stack: { topology: 'single' },
      plans: [{ name: 'Free', rate: { requests: 1, per: 'second' }, quota: 100, exhaustion: 'hard' }],
    });
    expect(d.assumptions.find((a) => a.id === 'plans.overageCap')).toBeUndefined();
    const capped = build({
      goals: ['quotas'],
      stack: { topology: 'single' },
      plans: [{ name: 'Pro', rate: { requests: 1, per: 'second' }, quota: 100, exhaustion: 'soft-warning', overageCap: 150 }],
    });
    expect(capped.assumptions.find((a) => a.id === 'plans.overageCap')).toBeUndefined();
    expect(rule(capped, 'quota-pro')).toMatchObject({ rate: { requests: 150 }, quotaBackstop: { quota: 100, assumed: false } });
    expect(rule(capped, 'quota-pro').rationale).toContain('150 (the overage cap the answers set)');
  });
});

describe('defaults are stated as assumptions', () => {
  it('does not invent a user population nobody uses', () => {
    expect(minimal.scope.traffic.distinctUsers).toBe(0);
    expect(minimal.assumptions.find((a) => a.id === 'traffic.distinctUsers')).toBeUndefined();
    const d = build({ goals: ['fairness'], stack: { topology: 'single' }, identities: ['user'] });
    expect(d.scope.traffic.distinctUsers).toBe(10_000);
    expect(assumption(d, 'traffic.distinctUsers')).toMatch(/10,000/);
  });

  it('says the trusted-proxy default is an assumption', () => {
    expect(assumption(minimal, 'stack.trustedProxies')).toMatch(/assumed no proxy or load balancer sits in front/);
    expect(minimal.enforcement.clientIp.explanation).not.toMatch(/no proxy sits in front/);
  });

  it('does not force an MFA step to anonymous, and names the auth endpoints it treats as anonymous', () => {
    const byName = new Map(consumer.scope.endpoints.map((e) => [e.name, e]));
    expect(byName.get('verify-otp')).toMatchObject({ anonymous: false });
    expect(byName.get('verify-otp')?.assumed).not.toContain('anonymous');
    expect(byName.get('login')).toMatchObject({ anonymous: true, assumed: ['anonymous', 'cost'] });
    expect(assumption(consumer, 'endpoints.anonymous')).toMatch(
      /^login, signup and forgot-password are auth endpoints not marked anonymous/,
    );
  });

  it('names the endpoints whose cost is a class default, never a stated one', () => {
    expect(assumption(consumer, 'endpoints.cost')).toBe(
      'Costs not stated for any of the 8 endpoints: each takes the weight of its class: post (write) 2 tokens; the other 7 endpoints 1 token each.',
    );
    const s = assumption(saas, 'endpoints.cost');
    expect(s).toContain('11 of the 12 endpoints (export-orders states 25)');
    expect(s).toContain('create-order (write) 2, search-orders (search) 5 and sales-report (expensive) 10 tokens');
    expect(s).not.toMatch(/export 20/);
  });

  it('says which buckets hold the burstiness seconds (not the ceiling)', () => {
    const text = assumption(minimal, 'traffic.burstiness');
    expect(text).toMatch(/per-client buckets .* hold 5 seconds/);
    expect(text).toMatch(/global ceiling's bucket holds 1 second/);
    expect(rule(minimal, 'global-ceiling').burst).toBe(225);
  });

  it('marks the fields of a both-unknown traffic assumption', () => {
    expect(minimal.assumptions.find((a) => a.id === 'traffic.peakRps')?.field).toBe('traffic.typicalRps, traffic.peakRps');
  });

  it('adds the client IP identity with an assumption when it was not listed', () => {
    const r = resolveAnswers(Answers.parse({ goals: ['fairness'], stack: { topology: 'single' }, identities: ['api-key'] }));
    expect(r.scope.identities).toEqual(['api-key', 'ip']);
    expect(r.assumptions.some((a) => a.id === 'identities.ip')).toBe(true);
  });
});

describe('test scenarios say what is really guaranteed', () => {
  it('recovery: Retry-After is rounded up; only a request before the first refill is certainly refused', () => {
    const e = scenario(consumer, 'throttled-recovery').expected;
    expect(e).toContain(
      'The real wait is until the next token comes back, at most 20 ms after the refusal (one token comes back every 20 ms at 50/s)',
    );
    expect(e).toContain(
      'Retry-After is that wait rounded up to whole seconds (1 s here), so a request sent before Retry-After has passed may be admitted too',
    );
    expect(e).toContain('a request sent after Retry-After is admitted, and one sent before the first token refills is refused');
    expect(e).not.toMatch(/would be refused/);
    // a 1 s interval: the wait after a refusal is at most 1 s, so Retry-After 1 s is still a rounding up
    expect(scenario(saas, 'throttled-recovery').expected).toContain(
      'at most 1 s after the refusal (one token comes back every 1 s at 60/min)',
    );
    const slow = build({ goals: ['quotas'], stack: { topology: 'single' }, plans: [{ name: 'p', rate: { requests: 2, per: 'minute' } }] });
    expect(scenario(slow, 'throttled-recovery').expected).toContain('at most 30 s after the refusal');
    expect(scenario(slow, 'throttled-recovery').expected).toContain('(at most 30 s here)');
  });

  it('cost-weighted: a cost-1 call after the refusal is refused only if nothing refilled', () => {
    const e = scenario(consumer, 'cost-weighted-exhaustion').expected;
    expect(e).toMatch(
      /^125 calls to post pass \(burst 250 \/ cost 2\) and the next is refused; a cost-1 call sent right after is refused too/,
    );
    expect(e).toContain('unless a token has come back in the meantime');
    expect(scenario(saas, 'cost-weighted-exhaustion').expected).toMatch(/^1 call to export-orders passes/);
  });

  it('exact counts state their no-refill condition and how verify meets it', () => {
    for (const id of ['burst-at-boundary', 'concurrent-race'] as const) {
      const e = scenario(consumer, id).expected;
      expect(e, id).toMatch(/no token refills/);
      expect(e, id).toMatch(/rl-design verify runs it with a refill slow enough that none comes back/);
    }
    expect(scenario(consumer, 'burst-at-boundary').expected).toContain('request 251 gets 429');
  });

  it('uses the topology: a single instance races within itself', () => {
    const s = scenario(minimal, 'concurrent-race');
    expect(s.setup).not.toMatch(/two or more/);
    expect(s.setup).toMatch(/single instance/);
    expect(s.steps.join(' ')).not.toMatch(/spread over the instances/);
    expect(scenario(consumer, 'concurrent-race').setup).toMatch(/from both app instances/);
  });

  it('states the bound the hybrid in-process buckets give through the middleware', () => {
    // (saas: the tenants' fairness rules share a hash with their quotas, checked on the store: not hybrid)
    expect(saas.enforcement.hybrid?.ruleIds).toEqual(['webhooks-per-source']);
    expect(scenario(saas, 'concurrent-race').expected).toMatch(/^Exactly 10 are admitted/);
    // the same plans without quotas: each tenant's fairness rule alone, in a key of its own, hybrid
    const answers = exampleAnswers('saas-platform');
    const plans = answers.plans?.map(({ quota: _quota, ...p }) => p);
    const noQuota = buildDesign(Answers.parse({ ...answers, plans, quotas: undefined }), { date: DATE });
    const h = noQuota.enforcement.hybrid!;
    expect(h.ruleIds).toContain('fairness-free');
    const e = scenario(noQuota, 'concurrent-race').expected;
    expect(e).toContain(`at most 10 + ${h.instances} x ${h.localBurst} = ${10 + h.overAdmission} are admitted`);
    expect(e).toMatch(/hybrid: false \(the in-process buckets off, as rl-design verify runs it\), exactly 10/);
    expect(scenario(consumer, 'concurrent-race').expected).not.toMatch(/in-process/);
  });
});

describe('rollout names only the rule kinds the design has', () => {
  it('mentions outbound rules only when there are some', () => {
    const general = (d: Design) => d.rollout.steps.find((s) => s.title === 'Enforce general limits')!.detail;
    expect(general(minimal)).toMatch(/^Switch the ceiling and fairness rules to "enforce"/);
    expect(general(consumer)).not.toMatch(/outbound/);
    expect(general(saas)).toMatch(/^Switch the ceiling, fairness and outbound rules/);
  });
});

describe('one call per identity: the design says which limits of an identity take a call apart', () => {
  const rolling = (days: number) => {
    const a = structuredClone(exampleAnswers('saas-platform')) as Record<string, unknown> & { quotas: Record<string, unknown> };
    a.quotas = { ...a.quotas, reset: { kind: 'rolling', days } };
    return build(a);
  };
  const rollingQuota = rolling(30);

  it("keeps a rolling 30-day quota in the tenant's hash beside its fairness bucket: one call, no sentence of a call apart", () => {
    const quotas = rollingQuota.rules.filter((r) => r.tier === 'quota');
    expect(quotas.length).toBe(3);
    const fairness = rollingQuota.rules.filter((r) => r.tier === 'fairness' && r.key === 'rl:{t:<tenant-id>}');
    expect(fairness.map((r) => r.field)).toEqual(['req:free', 'req:pro', 'req:enterprise']);
    // one hash per tenant, the quota a field of it (its daily counts: quota:<epoch-day>)
    for (const q of quotas) expect(q).toMatchObject({ key: 'rl:{t:<tenant-id>}', field: 'quota' });
    const note = rollingQuota.enforcement.atomicityNote;
    expect(note).not.toContain('except');
    expect(note).not.toContain('a second call');
    expect(note).toContain(
      "keeps one field per UTC day it counted and the window's running total beside them (quota (total), quota:<epoch-day> (up to 30))",
    );
    // (what a call reads: the total and today's field, as identity-limits.lua does)
    expect(note).toContain("a call reads the total and today's field, not the whole window");
    // identity-limits.lua runs them; nothing runs fixed-window.lua any more
    const scripts = rollingQuota.enforcement.scripts;
    expect(scripts.map((x) => x.name)).not.toContain('fixed-window');
    const combined = scripts.find((x) => x.name === 'identity-limits')!;
    expect(combined.ruleIds).toEqual(expect.arrayContaining(quotas.map((q) => q.id)));
    expect(combined.label).toContain('rolling windows of daily counters');
    expect(combined.label).toContain('quota:<epoch-day> (up to 30)');
    // the rollout says how the old rolling hash's days move into the tenant's hash
    expect(rollingQuota.rollout.steps.map((x) => x.detail).join(' ')).toContain(
      "copy each day of its old hash (field <epoch-day>, its count) into the identity's hash as the field quota:<epoch-day>",
    );
    // the memory estimate prices 30 daily fields beside the bucket: one hash per tenant
    for (const q of quotas) {
      expect(q.cardinality?.bound).toBe(1200);
      expect(q.cardinality?.basis).toContain(
        "holding the window's running total (quota) and a field per UTC day of the window (quota:<epoch-day>, up to 30)",
      );
      // 30 buckets of about 17-19 B, the total's 17 B and the bucket's field: a listpack of 554 to 620 B, in a 640 B class
      expect(q.bytesPerKey! * 2).toBeGreaterThanOrEqual(133 + 640);
    }
  });

  it("counts the rolling window's running total among the hash's fields: 126 days join the plan's bucket (128 fields), 127 keep their own key", () => {
    for (const q of rolling(126).rules.filter((r) => r.tier === 'quota')) expect(q.field).toBe('quota');
    for (const q of rolling(127).rules.filter((r) => r.tier === 'quota')) expect(q.field).toBeUndefined();
  });

  it('keeps a rolling window whose daily fields would pass the listpack (200 days) in a key of its own, and says so', () => {
    const long = rolling(200);
    const quotas = long.rules.filter((r) => r.tier === 'quota');
    for (const q of quotas) expect(q.field).toBeUndefined();
    // the fairness buckets alone: one field each per tenant, so they keep their own keys too
    const note = long.enforcement.atomicityNote;
    expect(note).toContain(`except ${quotas.map((q) => q.id).join(', ')} (rolling window of daily counters)`);
    expect(note).toContain("sent once the identity's rate limits have admitted, so a quota refusal there leaves those rate limits charged");
    expect(note).not.toMatch(/except [^(]*fairness/);
    expect(long.enforcement.scripts.map((x) => x.name)).toContain('fixed-window');
  });

  it("prices the rolling quota's day fields in its identity's hash, and names them so", () => {
    const hash = rollingQuota.monitoring.store.hashes?.find((h) => h.key === 'rl:{t:<tenant-id>}');
    expect(hash?.text).toContain("quota (the window's total), quota:<epoch-day> (one per day of its window)");
    expect(hash?.text).toContain('A tenant is on one plan at a time');
  });

  it('says nothing of the kind when every limit of an identity is in its hash (calendar quota)', () => {
    expect(saas.rules.filter((r) => r.tier === 'quota').every((q) => q.field !== undefined)).toBe(true);
    expect(saas.enforcement.atomicityNote).not.toContain('except');
    expect(minimal.enforcement.atomicityNote).not.toContain('except');
  });

  it("explains a rolling quota's worst case by its daily counters, in the memory fallback's row too", () => {
    const rows = worstCaseTable(rollingQuota).filter((r) => rollingQuota.rules.some((q) => q.id === r.ruleId && q.tier === 'quota'));
    expect(rows.some((r) => r.layer === 'middleware (in-memory fallback)')).toBe(true);
    for (const r of rows) {
      expect(r.basis, r.layer).toContain('The trailing window counts whole days');
      expect(r.basis, r.layer).not.toContain('the start of the next');
    }
  });

  it('never promises a rolling quota has no boundary burst (its worst case is twice the quota)', () => {
    for (const q of rollingQuota.rules.filter((r) => r.tier === 'quota')) {
      expect(q.rationale).not.toMatch(/no boundary burst|until the reset/);
      expect(q.rationale).toContain('never renews all at once');
    }
  });
});

describe('an application that does not run on Node.js', () => {
  const saasAnswers = exampleAnswers('saas-platform') as Record<string, unknown> & { stack: Record<string, unknown> };
  const goApi = build({ ...saasAnswers, stack: { ...saasAnswers.stack, language: 'Go', framework: 'other' } });

  it('is told the TypeScript runtime is the reference to port, not a limiter its process can call', () => {
    const mw = goApi.enforcement.layers.find((l) => l.layer === 'middleware');
    expect(mw?.component).toMatch(/^a Go port of the shipped limiter/);
    expect(mw?.component).not.toContain('called from the application');
    expect(JSON.stringify(goApi.enforcement.placementDiagram)).toContain('app middleware (Go port)');
    // the outbound buckets too run in a port: outbound/client.ts is TypeScript
    const out = goApi.enforcement.layers.find((l) => l.layer === 'outbound-client');
    expect(out?.component).toMatch(/^a Go port of the shipped outbound client/);
    expect(out?.component).toContain('lua/outbound-bucket.lua runs unchanged');
    expect(goApi.outbound?.on429.join(' ')).toContain('The generated client (TypeScript: in this Go service, its port');
    expect(build(saasAnswers).outbound?.on429.join(' ')).toContain('The generated client waits');
  });

  it('is not promised a shadow step or kill switches no generated file runs in Go', () => {
    const shadow = goApi.rollout.steps[0]!.detail;
    expect(shadow).toContain('in this Go service');
    expect(shadow).toContain('no generated file runs them in Go');
    const how = goApi.rollout.killSwitches.filter((k) => goApi.rules.find((r) => r.id === k.ruleId)?.layer !== 'edge');
    expect(how.length).toBeGreaterThan(0);
    for (const k of how) expect(k.how).toContain('the Go port reads it');
    // a Node design keeps the shipped runtime's wording
    const node = build(saasAnswers);
    expect(node.rollout.steps[0]!.detail).not.toContain(' port ');
  });

  it('ships a code README that says so, and the design still passes every constraint on its files', () => {
    const files = generateCode(goApi);
    const readme = files.find((f) => f.path === 'README.md')?.content ?? '';
    expect(readme).toContain('can not be mounted in a Go process');
    expect(readme).not.toContain("import { createLimiter } from './middleware/limiter.js'");
    expect(
      checkDesign(goApi, files)
        .filter((c) => !c.passed)
        .map((c) => c.messages),
    ).toEqual([]);
  });

  it('keeps the framework-neutral call for TypeScript or JavaScript on a framework without an adapter', () => {
    for (const language of ['TypeScript', 'javascript', 'Node.js']) {
      const d = build({ ...(exampleAnswers('minimal-generic') as Record<string, unknown>), stack: { language, framework: 'other' } });
      expect(d.enforcement.layers.find((l) => l.layer === 'middleware')?.component).toContain('createLimiter(DESIGN)');
    }
  });
});

describe('the quota headers of a rolling quota', () => {
  it('speak of a trailing window whose calls age out, not of a period that resets', () => {
    const a = structuredClone(exampleAnswers('saas-platform')) as Record<string, unknown> & {
      quotas: Record<string, unknown>;
      headers: Record<string, unknown>;
    };
    a.quotas = { ...a.quotas, reset: { kind: 'rolling', days: 30 } };
    for (const convention of ['ietf-trio', 'ietf-structured', 'x-ratelimit']) {
      a.headers = { ...a.headers, convention };
      const d = build(a);
      const text = JSON.stringify(d.contract);
      expect(text).not.toMatch(/period resets|until it resets|in this period|current period/);
      expect(text).toContain('aged out');
    }
  });
});

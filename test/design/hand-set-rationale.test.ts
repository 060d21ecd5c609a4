/**
 * A rules entry that sets a generated row's numbers by hand: the row no longer explains them
 * from the traffic figures, and the rows sized from a ceiling set by hand say they follow it.
 */
import { describe, expect, it } from 'vitest';
import type { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { buildDesign } from '../../src/design/build.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generatedFiles, runCli, tempDir } from '../helpers/cli.js';
import { exampleAnswers } from '../helpers/examples.js';

const DATE = '2026-12-02';
const rule = (a: Answers, id: string) => buildDesign(a, { date: DATE }).rules.find((r) => r.id === id);
const withRules = (rules: object[]) => ({ ...exampleAnswers('saas-platform'), rules }) as Answers;

describe('a rules entry that overrides a generated row', () => {
  it("replaces the row's generated reasoning for the numbers it sets, and names the entry in the derivation", () => {
    const a = {
      ...exampleAnswers('saas-platform'),
      rules: [{ id: 'webhooks-per-source', rate: { requests: 40, per: 'second' } }],
    } as Answers;
    const generated = rule(exampleAnswers('saas-platform'), 'webhooks-per-source');
    const r = rule(a, 'webhooks-per-source');
    expect(r?.rate).toMatchObject({ requests: 40, periodSeconds: 1 });
    expect(r?.rationale).toContain('set by hand in the answers (its rules entry states rate 40 / 1 s)');
    expect(generated?.rationale).toContain('500 req/s per sending address');
    expect(r?.rationale).not.toContain('500 req/s per sending address');
    expect(r?.rationale).not.toContain('a fifth of the');
    // what the row is for stays true whatever its numbers
    expect(r?.rationale).toContain('Webhook senders retry on 429, so shedding a storm loses nothing;');
    expect(r?.derivation).toMatch(/^rate 40 \/ 1 s = stated in its rules entry, in place of 500 req\/s = a fifth/);
  });

  it('keeps the generated reasoning when the entry sets no number, naming what it sets', () => {
    const a = { ...exampleAnswers('saas-platform'), rules: [{ id: 'webhooks-per-source', failMode: 'closed' }] } as Answers;
    const generated = rule(exampleAnswers('saas-platform'), 'webhooks-per-source');
    const r = rule(a, 'webhooks-per-source');
    expect(r?.rationale?.startsWith(generated?.rationale?.split(' Enforced')[0] ?? '?')).toBe(true);
    expect(r?.rationale).toContain('Its rules entry in the answers sets failMode by hand.');
  });
});

describe('a ceiling set by hand', () => {
  it('sizes the rows derived from it from the hand-set rate, and they say so', () => {
    const a = { ...exampleAnswers('saas-platform'), rules: [{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }] } as Answers;
    const webhooks = rule(a, 'webhooks-per-source');
    // a fifth of the 300 req/s ceiling set by hand: 60 req/s, rounded down to 50, not a fifth of the 4,800 the traffic gives
    expect(webhooks?.rate).toMatchObject({ requests: 50, periodSeconds: 1 });
    expect(webhooks?.rationale).toContain('a fifth of the 300 req/s ceiling (set by hand in its rules entry)');
    expect(webhooks?.derivation).toContain('a fifth of the 300 req/s ceiling (set by hand in its rules entry)');
    expect(rule(a, 'anonymous-per-ip')?.derivation).toContain(
      'capped at a tenth of the 300 req/s ceiling (set by hand in its rules entry)',
    );
    // the traffic figures still give the ceiling's own "in place of" text
    expect(rule(a, 'global-ceiling')?.derivation).toContain('300 req/s = stated in its rules entry, in place of 4,800 req/s');
  });
});

describe('an overridden row keeps the generated notes its rules entry leaves true', () => {
  it('keeps the key and per-node remarks of a per-IP row whose rate is set, and drops only the sizing', () => {
    const r = rule(withRules([{ id: 'anonymous-per-ip', rate: { requests: 20, per: 'second' } }]), 'anonymous-per-ip');
    expect(r?.rationale).toContain('Keyed on the trusted client IP, the only identity an anonymous caller has.');
    expect(r?.rationale).toContain("counted by its plan's fairness and quota rows there");
    // the per-node remark stands on its own once the share it followed is gone
    expect(r?.rationale).toContain('Its rate is per nginx node: each of the 2 nodes counts an address on its own');
    expect(r?.rationale).not.toContain('That share');
    expect(r?.rationale).not.toContain('It is sized per address');
    // the burst kept from the design was reckoned from the rate the entry replaces
    expect(r?.derivation).toContain('burst 500 = 10 s of rate (the rate the design derives, not the one stated)');
  });

  it("keeps a plan row's rate reasoning when only its burst is set, and replaces only the burst step of the derivation", () => {
    const r = rule(withRules([{ id: 'fairness-pro', burst: 300 }]), 'fairness-pro');
    expect(r?.rationale).toContain('The 600/minute promised to plan Pro, per tenant, so one noisy tenant cannot degrade the others.');
    expect(r?.rationale).toContain('Costlier calls draw more tokens from the same bucket');
    expect(r?.derivation).toBe(
      "600/minute = plan Pro's promised rate; burst 300 = stated in its rules entry, in place of burst 200 = the plan's stated burst",
    );
  });

  it('keeps the fail-mode remark when numbers are set, and drops it when the entry sets another fail mode', () => {
    const stripe = rule(withRules([{ id: 'outbound-stripe', burst: 5 }]), 'outbound-stripe');
    expect(stripe?.rationale).toContain('Fails closed: when the store is unreachable, calls wait rather than risk a provider ban.');
    const quota = rule(withRules([{ id: 'quota-pro', failMode: 'closed', rate: { requests: 5000, per: 'day' } }]), 'quota-pro');
    expect(quota?.failMode).toBe('closed');
    expect(quota?.rationale).not.toContain('Fails open: a few uncounted calls');
    const login = rule(withRules([{ id: 'auth-login-per-identity', failMode: 'open' }]), 'auth-login-per-identity');
    expect(login?.rationale).not.toContain('Fails closed');
    expect(login?.rationale).toContain('Silent: no remaining-count headers for attackers.');
    expect(login?.rationale).toContain('Its rules entry in the answers sets failMode by hand.');
  });
});

describe('a ceiling whose rate is set by hand: every number sized from it follows the rate that ships', () => {
  const a = withRules([{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }]);
  const design = buildDesign(a, { date: DATE });
  const byId = (id: string) => design.rules.find((r) => r.id === id);

  it("holds one second of the rate set, in the matrix and in each nginx node's file", () => {
    expect(byId('global-ceiling')?.burst).toBe(300);
    expect(byId('global-ceiling')?.derivation).toContain('; burst 300 = 1 s of that rate');
    const conf = generateCode(design).find((f) => f.path === 'gateway/nginx-server.conf')?.content ?? '';
    // 300 req/s, burst 300 for the fleet: 150 and 150 on each of the 2 nodes, not the 2,400 of the traffic's 4,800
    expect(conf).toContain('limit_req zone=rl_global_ceiling burst=150 nodelay;');
  });

  it("caps a webhook sender's burst at the burst the ceiling ships", () => {
    const set = withRules([{ id: 'global-ceiling', rate: { requests: 300, per: 'second' }, burst: 1000 }]);
    const webhooks = buildDesign(set, { date: DATE }).rules.find((r) => r.id === 'webhooks-per-source');
    // 10 s of 50 req/s is 500, under the ceiling's 1,000: not cut to one second of its rate
    expect(webhooks?.burst).toBe(500);
  });

  it('names the rules entry, not the traffic, as what the rows sized from it rest on', () => {
    for (const id of ['global-ceiling', 'anonymous-per-ip', 'webhooks-per-source']) {
      expect(byId(id)?.inputs).toContain('rules');
      expect(byId(id)?.inputs).not.toContain('traffic.headroom');
    }
    const headroom = design.assumptions.find((x) => x.field === 'traffic.headroom');
    expect(headroom?.ruleIds).toBeUndefined();
    expect(headroom?.text).toContain('the rules entry for global-ceiling sets 300 req/s');
  });
});

describe('a ceiling set by hand below the stated peak', () => {
  it('warns in the ceiling row that it refuses the peak and its rare-rule alert will ticket; at or above the peak, no warning', () => {
    const low = rule(withRules([{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }]), 'global-ceiling');
    expect(low?.rationale).toContain(
      "Warning: the ceiling's rules entry sets 300 req/s, below the stated peak of 2,400 req/s (traffic.peakRps): at that peak it refuses about 2,100 req/s",
    );
    expect(low?.rationale).toContain('RateLimitRareRuleFiring');
    const design = buildDesign(withRules([{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }]), { date: DATE });
    expect(design.monitoring.alerts.map((a) => a.name)).toContain('RateLimitRareRuleFiring');
    for (const rps of [2400, 3000]) {
      const fine = rule(withRules([{ id: 'global-ceiling', rate: { requests: rps, per: 'second' } }]), 'global-ceiling');
      expect(fine?.rationale, `${rps}`).not.toContain('Warning');
    }
    // the ceiling the traffic gives is never warned about
    expect(rule(exampleAnswers('saas-platform'), 'global-ceiling')?.rationale).not.toContain('Warning');
  });

  it('generate says so on stderr, and still writes the design', () => {
    const dir = tempDir();
    const { openapi: _openapi, ...answers } = withRules([{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }]) as Answers & {
      openapi?: unknown;
    };
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, JSON.stringify(answers));
    const r = runCli(['generate', '-a', file, '--format', 'markdown', '--out', path.join(dir, 'out') + '/', '--date', DATE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("warning: the ceiling's rules entry sets 300 req/s, below the stated peak of 2,400 req/s (traffic.peakRps)");
  });
});

describe('a ceiling set by hand below the peak caps what the middleware meets and what one address can take', () => {
  const ceiling = (requests: number, more: object = {}) => ({ id: 'global-ceiling', rate: { requests, per: 'second' }, ...more });
  const hybridOf = (a: Answers) => buildDesign(a, { date: DATE }).enforcement.hybrid;

  it('keeps no in-process bucket when the ceiling at the edge lets the middleware see less than the hybrid threshold', () => {
    // the 2,400 req/s peak alone asks for the hybrid; nginx's ceiling of 300 req/s in front of the middleware lets through no more
    expect(hybridOf(exampleAnswers('saas-platform'))?.explanation).toMatch(/^At 2,400 req\/s peak on 6 instances, /);
    expect(hybridOf(withRules([ceiling(300)]))).toBeUndefined();
    // above the threshold it stays, sized and explained from what the edge lets through
    expect(hybridOf(withRules([ceiling(1500)]))?.explanation).toMatch(
      /^At the 1,500 req\/s that the edge's ceiling \(global-ceiling\) lets through to the middleware at the 2,400 req\/s peak on 6 instances, /,
    );
  });

  it('keeps it at the peak when the ceiling runs in the middleware: its check meets every request it refuses', () => {
    // (plans without quotas: each tenant's fairness rule in a key of its own, which the hybrid serves)
    const a = exampleAnswers('saas-platform');
    const plans = (a.plans ?? []).map(({ quota: _q, exhaustion: _e, ...p }) => p);
    const none = { ...a, plans, quotas: undefined, stack: { ...a.stack, gateway: 'none' }, rules: [ceiling(300)] } as Answers;
    expect(buildDesign(none, { date: DATE }).rules.find((r) => r.id === 'global-ceiling')?.layer).toBe('middleware');
    expect(hybridOf(none)?.explanation).toMatch(/^At 2,400 req\/s peak on 6 instances, /);
  });

  it("states one address's share of what the ceiling admits, not of the peak it refuses", () => {
    const share = (a: Answers, id: string) =>
      rule(a, id)
        ?.rationale?.split('. ')
        .find((x) => x.startsWith('One address'));
    expect(share(exampleAnswers('saas-platform'), 'anonymous-per-ip')).toBe(
      'One address can take at most 2.08% of the 2,400 req/s peak, so scraping from one address stays a small share',
    );
    // 25 req/s of the 300 the two nginx nodes admit together: 8.33%, not the 1.04% of the 2,400 peak
    expect(share(withRules([ceiling(300)]), 'anonymous-per-ip')).toBe(
      'One address can take at most 8.33% of the 300 req/s the ceiling admits (set by hand in its rules entry), which caps the 2,400 req/s peak, so scraping from one address stays a small share',
    );
    // the fairness row of an API that knows its callers only by address says the same
    const a = exampleAnswers('saas-platform');
    const byAddress = {
      ...a,
      identities: ['ip'],
      plans: undefined,
      quotas: undefined,
      access: undefined,
      rules: [ceiling(300)],
    } as unknown as Answers;
    expect(share(byAddress, 'fairness-per-ip')).toBe(
      'One address can then take at most 8.33% of the 300 req/s the ceiling admits (set by hand in its rules entry), which caps the 2,400 req/s peak',
    );
  });

  it('generate: the document, the middleware it ships and the nginx file agree on the ceiling that caps the peak', () => {
    const dir = tempDir();
    const { openapi: _openapi, ...answers } = withRules([ceiling(300)]) as Answers & { openapi?: unknown };
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, JSON.stringify(answers));
    const { doc, files } = generatedFiles(file, DATE);
    const design = files.find((f) => f.path === 'middleware/design.ts')?.content ?? '';
    const server = files.find((f) => f.path === 'gateway/nginx-server.conf')?.content ?? '';
    const http = files.find((f) => f.path === 'gateway/nginx.conf')?.content ?? '';
    // no in-process bucket in the document or in the middleware: the 300 req/s nginx lets through is under the threshold
    expect(doc).not.toContain('Local and distributed hybrid');
    expect(design).toContain('  hybrid: null,');
    // 150 req/s on each of the 2 nodes: the 300 req/s the document's share is of
    expect(http).toMatch(/zone=rl_global_ceiling:\S+ rate=150r\/s;/);
    expect(server).toContain('limit_req zone=rl_global_ceiling burst=150 nodelay;');
    expect(doc).toContain('the ceiling admits 300 req/s, 150 req/s on each of the 2 nginx nodes');
    expect(doc).toContain('One address can take at most 8.33% of the 300 req/s the ceiling admits (set by hand in its rules entry)');
    expect(http).toMatch(/zone=rl_anonymous_per_ip:\S+ rate=25r\/s;/);
    expect(doc).not.toMatch(/of the 2,400 req\/s peak|At 2,400 req\/s peak/);
  });
});

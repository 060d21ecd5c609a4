/**
 * A rate placed at the edge that the gateway can only count more leniently (nginx's limit_req
 * counts no fewer than 1 per minute) is refused, naming the field and what is allowed, rather
 * than shipped as a laxer rule; the same rule kept in the application is designed as stated.
 */
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateNginx, nginxRate } from '../../src/codegen/gateway/nginx.js';
import { buildDesign } from '../../src/design/build.js';
import { cloudflareWindow, nginxWindow, unitWindow, wafWindow, windowLaxerBy } from '../../src/design/gateway-behaviour.js';
import { edgeRateProblems, handRuleProblems } from '../../src/design/hand-rule-checks.js';
import { exampleAnswers } from '../helpers/examples.js';

const DATE = '2026-12-03';
const FIVE_PER_HOUR = { requests: 5, periodSeconds: 3600 };

function withRule(rule: Record<string, unknown>, gateway = 'nginx'): Answers {
  const a = exampleAnswers('saas-platform');
  return { ...a, stack: { ...a.stack, gateway }, rules: [rule] } as Answers;
}

const signup = { id: 'signup-per-ip', identity: 'ip', endpoints: ['login'], rate: { requests: 5, per: 'hour' }, layer: 'edge' };
const inApp = {
  ...signup,
  layer: 'middleware',
  algorithm: 'sliding-window-log',
  primitive: 'redis-lua',
  cost: 1,
  failMode: 'closed',
  ttlSeconds: 3600,
  cardinalityBound: 100_000,
};

function problems(answers: Answers): string[] {
  const design = buildDesign(answers, { date: DATE });
  return [...handRuleProblems(answers, design), ...edgeRateProblems(answers, design)];
}

describe('a window that admits more than the rule', () => {
  it('nginx fits 5 per hour as 1 per minute: 12 times the rate', () => {
    const w = nginxWindow(FIVE_PER_HOUR, null);
    expect(w).toMatchObject({ requests: 1, periodSeconds: 60 });
    expect(windowLaxerBy(FIVE_PER_HOUR, w)).toBeCloseTo(12);
    expect(nginxRate(w)).toEqual({ text: '1r/m', exact: true });
    // 1 per 10 minutes likewise: 10 times
    expect(windowLaxerBy({ requests: 1, periodSeconds: 600 }, nginxWindow({ requests: 1, periodSeconds: 600 }, null))).toBeCloseTo(10);
  });

  it('a rate nginx counts, or one it rounds down, is never laxer', () => {
    expect(windowLaxerBy({ requests: 2, periodSeconds: 60 }, nginxWindow({ requests: 2, periodSeconds: 60 }, null))).toBeUndefined();
    // 1.5 per second rounds down to 1r/s: stricter, not laxer
    expect(windowLaxerBy({ requests: 3, periodSeconds: 2 }, nginxWindow({ requests: 3, periodSeconds: 2 }, null))).toBeUndefined();
  });

  it('the other products: AWS WAF below 10 per 10 minutes, Cloudflare below 1 per hour, a fixed window below 1 per day', () => {
    expect(windowLaxerBy(FIVE_PER_HOUR, wafWindow(FIVE_PER_HOUR))).toBeCloseTo(12);
    const tenPerDay = { requests: 10, periodSeconds: 86400 };
    expect(cloudflareWindow(tenPerDay, null)).toMatchObject({ requests: 1, periodSeconds: 3600 });
    expect(windowLaxerBy(tenPerDay, cloudflareWindow(tenPerDay, null))).toBeCloseTo(2.4);
    expect(windowLaxerBy(FIVE_PER_HOUR, cloudflareWindow(FIVE_PER_HOUR, null))).toBeUndefined();
    const onePerTwoDays = { requests: 1, periodSeconds: 172800 };
    expect(windowLaxerBy(onePerTwoDays, unitWindow(onePerTwoDays, null, "Kong's rate-limiting plugin"))).toBeCloseTo(2);
    // 1 per 10 minutes as a fixed hour of 6: the same rate over time, but all 6 may come in one 10 minutes
    const onePerTen = { requests: 1, periodSeconds: 600 };
    expect(unitWindow(onePerTen, null, 'envoyproxy/ratelimit')).toMatchObject({ requests: 6, periodSeconds: 3600 });
    expect(windowLaxerBy(onePerTen, unitWindow(onePerTen, null, 'envoyproxy/ratelimit'))).toBeCloseTo(6);
    // 5 per hour in a fixed hour: as stated
    expect(windowLaxerBy(FIVE_PER_HOUR, unitWindow(FIVE_PER_HOUR, null, "Kong's rate-limiting plugin"))).toBeUndefined();
  });
});

describe('a rules entry at the edge that the gateway would count laxer', () => {
  it('5 per hour at nginx is refused, naming the field, the rate nginx would run and what is allowed', () => {
    const found = problems(withRule(signup));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('$.rules[0].rate: 5 per hour at the edge cannot be counted by nginx limit_req');
    expect(found[0]).toContain('would admit 1 per minute, 12 times what the entry asks');
    expect(found[0]).toContain('layer "middleware"');
  });

  it('moving a generated auth row (100 per 15 minutes) to the edge is kept: nginx rounds it down to 6r/m, never up', () => {
    const answers = withRule({ id: 'auth-login-per-ip', layer: 'edge' });
    expect(problems(answers)).toEqual([]);
    const design = buildDesign(answers, { date: DATE });
    expect(design.rules.find((r) => r.id === 'auth-login-per-ip')).toMatchObject({
      layer: 'edge',
      rate: { requests: 6, periodSeconds: 60 },
    });
  });

  it('5 per hour at AWS WAF is refused too; at Cloudflare (a 1-hour period) it is not', () => {
    expect(problems(withRule(signup, 'aws-api-gateway'))).toEqual([expect.stringContaining('AWS WAF')]);
    expect(problems(withRule(signup, 'cloudflare'))).toEqual([]);
  });

  it('1 per 10 minutes per API key at Envoy is refused: its rate limit service counts a fixed hour of 6', () => {
    const found = problems(withRule({ ...signup, identity: 'api-key', rate: { requests: 0.1, per: 'minute' } }, 'envoy'));
    expect(found).toEqual([expect.stringContaining('$.rules[0].rate: 0.1 per minute at the edge cannot be counted by')]);
    expect(found[0]).toContain('would admit 6 per hour (all of them may come within one minute), 6 times what the entry asks');
  });

  it('a rate nginx can count is kept at the edge and shipped as stated', () => {
    const answers = withRule({ ...signup, rate: { requests: 2, per: 'minute' } });
    expect(problems(answers)).toEqual([]);
    const design = buildDesign(answers, { date: DATE });
    expect(design.rules.find((r) => r.id === 'signup-per-ip')).toMatchObject({ layer: 'edge', rate: { requests: 2, periodSeconds: 60 } });
    expect(generateNginx(design)[0]!.content).toMatch(/zone=rl_signup_per_ip:\d+m rate=2r\/m;/);
  });

  it('5 per hour kept in the application: designed as stated, and nginx has no zone for it', () => {
    const answers = withRule(inApp);
    expect(problems(answers)).toEqual([]);
    const design = buildDesign(answers, { date: DATE });
    expect(design.rules.find((r) => r.id === 'signup-per-ip')).toMatchObject({
      layer: 'middleware',
      rate: { requests: 5, periodSeconds: 3600 },
    });
    // the placement section says why a rule this slow belongs in the application
    const middleware = design.enforcement.layers.find((l) => l.layer === 'middleware');
    expect(middleware?.ruleIds).toContain('signup-per-ip');
    expect(middleware?.why).toContain(
      "Also any limit slower than the edge counts (nginx's limit_req counts no fewer than 1 request per minute): at the edge it would run more leniently than stated",
    );
    const [http, server] = generateNginx(design);
    expect(http!.content).not.toContain('rl_signup_per_ip');
    expect(server!.content).not.toContain('signup-per-ip');
  });
});

describe('a rule the design derives for the edge', () => {
  const slowIp = (gateway: string): Answers => {
    const a = exampleAnswers('saas-platform');
    return { ...a, traffic: { ...a.traffic, clientPeakRps: 0.001, clientsPerAddress: 5 }, stack: { ...a.stack, gateway } } as Answers;
  };

  it('a per-IP rate slower than the gateway counts is refused at nginx and AWS WAF, naming the traffic field', () => {
    const nginx = problems(slowIp('nginx'));
    expect(nginx).toEqual([expect.stringContaining("$.traffic.clientPeakRps: the design's edge rule anonymous-per-ip states 18 per hour")]);
    expect(nginx[0]).toContain('so its file would admit 1 per minute, 3.3 times the rate the design states');
    // AWS WAF: 18 per hour is 3 per 10 minutes, below its limit of 10
    const waf = problems(slowIp('aws-api-gateway'));
    expect(waf).toEqual([expect.stringContaining('cannot be counted by AWS WAF')]);
    expect(waf[0]).toContain('would admit 10 per 600 s');
  });

  it('a rules entry that changes only its burst leaves the rate the design derived: reported once, as the derived rule', () => {
    const found = problems({ ...slowIp('nginx'), rules: [{ id: 'anonymous-per-ip', burst: 2 }] } as Answers);
    expect(found).toEqual([expect.stringContaining("$.traffic.clientPeakRps: the design's edge rule anonymous-per-ip")]);
  });

  it('fast rules in a longer window are how Cloudflare and AWS WAF count, stated in the matrix: not refused', () => {
    for (const gateway of ['cloudflare', 'aws-api-gateway', 'envoy', 'kong', 'nginx']) {
      const a = exampleAnswers('saas-platform');
      expect(problems({ ...a, stack: { ...a.stack, gateway } } as Answers), gateway).toEqual([]);
    }
  });

  it('a ceiling whose per-node share is raised: up to twice the figure stated with a warning, beyond it refused naming stack.gatewayNodes', () => {
    const a = exampleAnswers('saas-platform');
    const tiny = (k: number): Answers =>
      ({ ...a, traffic: { ...a.traffic, peakRps: 1, typicalRps: 0.5, headroom: 2 }, stack: { ...a.stack, gatewayNodes: k } }) as Answers;
    const three = buildDesign(tiny(3), { date: DATE });
    expect(problems(tiny(3))).toEqual([]);
    const ceiling = three.rules.find((r) => r.id === 'global-ceiling');
    expect(ceiling?.perNode).toMatchObject({ nodes: 3, rate: { requests: 1, periodSeconds: 1 } });
    expect(ceiling?.rationale).toContain('the fleet admits up to 3 per second, 1.5 times the stated figure');
    expect(ceiling?.rationale).not.toContain('never more');
    // 2 nodes: 1 per second each, exactly the figure: no warning
    expect(buildDesign(tiny(2), { date: DATE }).rules.find((r) => r.id === 'global-ceiling')?.rationale).not.toContain('Warning');
    expect(problems(tiny(5))).toEqual([expect.stringContaining('$.stack.gatewayNodes: 5 nginx nodes each count global-ceiling')]);
  });
});

describe('a refusal about rows sized from a ceiling a rules entry sets', () => {
  const a = exampleAnswers('saas-platform');
  // the anonymous endpoint made so costly (the most an endpoint may cost) that its share of the
  // per-IP rate (a tenth of the ceiling set by hand, 10 req/s) is 1 per 100 s at nginx, below the
  // 1 per minute it counts
  const costly = Answers.parse({
    ...a,
    endpoints: (a.endpoints ?? []).map((e) => (e.name === 'public-catalog' ? { ...e, cost: 1000 } : e)),
    rules: [
      { id: 'export-per-user', identity: 'user', endpoints: ['export-orders'], rate: { requests: 5, per: 'minute' } },
      { id: 'global-ceiling', rate: { requests: 100, per: 'second' } },
    ],
  });

  it("names the entry that sets the ceiling's rate (rules[1].rate), not the rules list, among what to change", () => {
    const found = problems(costly);
    expect(found).toEqual([expect.stringContaining("$.endpoints[3].cost: the design's edge rule anonymous-per-ip counts public-catalog")]);
    expect(found[0]).toContain(
      'a higher rate for anonymous-per-ip (traffic.clientPeakRps, traffic.clientsPerAddress, rules[1].rate, traffic.burstiness, failure.byClass)',
    );
    expect(found[0]).not.toMatch(/[(,] rules[,)]/);
  });

  it("names it in the refusal of a ceiling too many gateway nodes each count (the figure's source)", () => {
    const nodes = {
      ...a,
      stack: { ...a.stack, gatewayNodes: 3 },
      rules: [{ id: 'global-ceiling', rate: { requests: 1, per: 'minute' } }],
    } as Answers;
    const found = problems(nodes);
    expect(found).toEqual([expect.stringContaining('$.stack.gatewayNodes: 3 nginx nodes each count global-ceiling')]);
    expect(found[0]).toContain('a figure for global-ceiling of at least 3 per minute (from rules[0].rate)');
  });
});

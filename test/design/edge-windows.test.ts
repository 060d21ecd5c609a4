/**
 * The numbers the document states for an edge rule on AWS API Gateway, Cloudflare and Kong (its
 * matrix rate and burst, its worst case, its migration row) are the numbers the generated gateway
 * file enforces, read back from that file; and the file's window is one the product accepts.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { cloudflareWindow, edgeCounter, wafWindow } from '../../src/design/gateway-behaviour.js';
import { worstCaseTable } from '../../src/design/worst-case.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';

const DATE = '2026-12-03';

/** From AWS's documentation of rate-based rules: the evaluation windows and the lowest limit it accepts. */
const WAF_WINDOWS = [60, 120, 300, 600];
const WAF_LOWEST_LIMIT = 10;
/** From Cloudflare's documentation of rate limiting rules: the periods it accepts (by plan). */
const CLOUDFLARE_PERIODS = [10, 60, 120, 300, 600, 3600];

function answers(gateway: string, identities: string[], extra: Record<string, unknown> = {}): Answers {
  const anonymous = identities.includes('ip');
  return Answers.parse({
    project: { name: 'Open Weather Feed', description: 'Public weather API.' },
    output: { format: 'markdown', layout: 'single', path: 'out/design', codeDir: 'out/code' },
    goals: ['overload', 'abuse'],
    stack: {
      language: 'TypeScript',
      framework: 'fastify',
      topology: 'horizontal',
      instances: 3,
      gateway,
      store: 'valkey',
      trustedProxies: ['10.0.0.0/8'],
    },
    identities,
    endpoints: [
      { name: 'current', method: 'GET', route: '/v2/current', class: 'read', anonymous },
      { name: 'forecast', method: 'GET', route: '/v2/forecast/:city', class: 'read', anonymous },
      { name: 'history', method: 'GET', route: '/v2/history', class: 'expensive', anonymous, cost: 5 },
      { name: 'report', method: 'POST', route: '/v2/reports', class: 'write', anonymous },
      { name: 'health', method: 'GET', route: '/health', class: 'health', anonymous: true },
    ],
    traffic: { typicalRps: 150, peakRps: 600, burstiness: 'moderate', distinctClients: 40000 },
    failure: { byClass: { read: 'open', expensive: 'closed', write: 'closed', health: 'open' } },
    headers: { convention: 'ietf-trio' },
    rollout: { shadowDays: 7 },
    existing: {
      limiters: [
        {
          kind: '@fastify/rate-limit',
          name: 'globalLimit',
          source: 'src/server.ts:40',
          limit: 100,
          windowSeconds: 60,
          keyedOn: identities.includes('ip') ? 'ip' : 'api-key',
        },
      ],
    },
    ...extra,
  });
}

function build(a: Answers) {
  const design = buildDesign(a, { date: DATE });
  const files = generateCode(design);
  const checks = checkDesign(design, files);
  const doc = renderMarkdown({ design, checks, codeFiles: files }, { layout: 'single' })[0]?.content ?? '';
  const file = (path: string): string => files.find((f) => f.path === path)?.content ?? '';
  return { design, files, checks, doc, file };
}

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};

/** The cells of one table row of the document whose first cell names the rule. */
function rowOf(doc: string, heading: string, ruleCell: string): string[] {
  const start = doc.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const line = doc
    .slice(start)
    .split('\n')
    .find((l) => l.startsWith(`| ${ruleCell}`));
  expect(line, `${heading} ${ruleCell}`).toBeDefined();
  return line!.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
}

const n = (x: number): string => x.toLocaleString('en-US');

/** The worst-case row (section 3.2) of a rule: stated, worst case, formula. */
function worstRow(doc: string, id: string): { stated: string; worst: string; formula: string; basis: string } {
  const cells = rowOf(doc, '### 3.2', `\`${id}\``);
  return { stated: cells[3]!, worst: cells[4]!, formula: cells[5]!, basis: cells[6]! };
}

const passes = (checks: ReturnType<typeof checkDesign>): string[] =>
  checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.messages.join('; ')}`);

describe('AWS API Gateway: the document states what the template enforces', () => {
  const { design, checks, doc, file } = build(answers('aws-api-gateway', ['ip']));
  const aws = JSON.parse(file('gateway/aws-api-gateway.json'));

  it('the per-IP rule is the WAF rate-based rule: its limit per evaluation window, no burst, a window WAF accepts', () => {
    const anon = rule(design, 'anonymous-per-ip');
    const [waf] = aws.wafRateBasedRules;
    const stmt = waf.Statement.RateBasedStatement;
    expect(WAF_WINDOWS).toContain(stmt.EvaluationWindowSec);
    expect(stmt.Limit).toBeGreaterThanOrEqual(WAF_LOWEST_LIMIT);
    expect(Number.isInteger(stmt.Limit)).toBe(true);
    expect(anon.rate).toMatchObject({ requests: stmt.Limit, periodSeconds: stmt.EvaluationWindowSec });
    expect(anon.burst).toBeNull();
    expect(anon.algorithm).toBe('sliding-window-log');
    // the matrix row, the worst case and the migration table state the file's numbers
    expect(rowOf(doc, '## 2. Limit matrix', '[`anonymous-per-ip`]')[3]).toBe(
      `${n(stmt.Limit)} / ${stmt.EvaluationWindowSec} s, no burst (window)`,
    );
    const w = worstRow(doc, 'anonymous-per-ip');
    expect(w.stated).toBe(`${n(stmt.Limit)} per 1 min`);
    expect(w.worst).toBe(n(stmt.Limit));
    // AWS: requests can come in above the limit for up to several minutes before WAF blocks them
    expect(w.basis).toContain('for up to several minutes before WAF detects the rate and blocks them');
    expect(w.basis).toContain('not a bound');
    expect(w.basis).not.toContain('never more than the limit');
    expect(w.basis).not.toContain('every 10 s');
    expect(doc).toContain(`anonymous-per-ip: ${n(stmt.Limit)} per 1 min`);
    expect(doc).not.toContain('burst 250');
    // Retry-After covers the evaluation window and the time WAF takes to notice the rate fell (AWS: usually under 30 s)
    expect(waf.Action.Block.CustomResponse.ResponseHeaders[0].Value).toBe(String(stmt.EvaluationWindowSec + 30));
  });

  it('the ceiling is the stage throttle: rate per second and burst as API Gateway applies them, burst + rate per method as its worst case', () => {
    const ceiling = rule(design, 'global-ceiling');
    const [setting] = aws.stageMethodSettings;
    expect(setting.ThrottlingRateLimit).toBe(ceiling.rate!.requests / ceiling.rate!.periodSeconds);
    expect(setting.ThrottlingBurstLimit).toBe(ceiling.burst);
    expect(Number.isInteger(setting.ThrottlingBurstLimit)).toBe(true);
    expect(rowOf(doc, '## 2. Limit matrix', '[`global-ceiling`]')[3]).toBe(
      `${n(setting.ThrottlingRateLimit)} / 1 s, burst ${n(setting.ThrottlingBurstLimit)}`,
    );
    // the stage's throttle (every method: /* and *) is a token bucket per method: the four limited endpoints
    expect(setting).toMatchObject({ ResourcePath: '/*', HttpMethod: '*' });
    const w = worstRow(doc, 'global-ceiling');
    expect(w.worst).toBe(n(4 * (setting.ThrottlingBurstLimit + setting.ThrottlingRateLimit)));
    expect(w.formula).toBe(`(${n(setting.ThrottlingBurstLimit)} + ${n(setting.ThrottlingRateLimit)}/s x 1 s) x 4 API methods`);
    // each method's bucket holds the row's full figures: the total a flood spread over them passes
    const one = setting.ThrottlingBurstLimit + setting.ThrottlingRateLimit;
    expect(w.basis).toContain(`so a flood spread over them passes up to 4 x it, 4 x ${n(one)} = ${n(4 * one)} in 1 s`);
    expect(ceiling.rationale).toContain(
      `each of the 4 methods it throttles gets ${n(setting.ThrottlingRateLimit)} req/s of its own, so no method is refused below that`,
    );
    expect(w.basis).toContain('applies a stage');
    expect(w.basis).toContain("under the account's Regional limit (by default 10,000 req/s with a burst of 5,000");
  });

  it('passes validate', () => {
    expect(passes(checks)).toEqual([]);
  });

  it('api-key identities: a usage plan throttle states the rate and the burst the usage plan carries (a burst even when none is stated)', () => {
    const { design, checks, doc, file } = build(
      answers('aws-api-gateway', ['api-key'], {
        rules: [
          {
            id: 'partner-keys',
            identity: 'api-key',
            layer: 'edge',
            algorithm: 'token-bucket',
            primitive: 'gateway-native',
            endpoints: ['current', 'forecast'],
            rate: { requests: 600, per: 'minute' },
            key: 'aws:usage plan throttle per API key',
            cost: 1,
            failMode: 'open',
            ttlSeconds: 60,
            cardinalityBound: 1000,
          },
        ],
      }),
    );
    const aws = JSON.parse(file('gateway/aws-api-gateway.json'));
    // the rule names two endpoints: method throttles of the one usage plan on their methods, no plan-wide Throttle
    expect(aws.usagePlans).toHaveLength(1);
    const [plan] = aws.usagePlans;
    expect(plan.Throttle).toBeUndefined();
    const throttles = plan.ApiStages[0].Throttle;
    expect(Object.keys(throttles)).toEqual(['/v2/current/GET', '/v2/current/HEAD', '/v2/forecast/{city}/GET', '/v2/forecast/{city}/HEAD']);
    const r = rule(design, 'partner-keys');
    for (const t of Object.values(throttles) as any[]) {
      expect(t.RateLimit).toBe(r.rate!.requests / r.rate!.periodSeconds);
      expect(t.BurstLimit).toBe(r.burst);
      expect(t.BurstLimit).toBe(10);
    }
    expect(rowOf(doc, '## 2. Limit matrix', '[`partner-keys`]')[3]).toBe('600 / 60 s, burst 10');
    // a bucket per key and method: four methods, each passes the burst and a period's refill
    expect(worstRow(doc, 'partner-keys').worst).toBe(n(4 * (10 + 600)));
    // the ceiling's stage throttle too
    const ceiling = rule(design, 'global-ceiling');
    expect(aws.stageMethodSettings[0].ThrottlingBurstLimit).toBe(ceiling.burst);
    expect(passes(checks)).toEqual([]);
  });

  it("a slow per-IP rule on a 600 s WAF window keeps each address's state for that window: its TTL and cardinality bound", () => {
    const slow = answers('aws-api-gateway', ['ip']);
    const { design, doc, file } = build(
      Answers.parse({ ...slow, traffic: { ...slow.traffic, clientPeakRps: 0.01, clientsPerAddress: 1 } }),
    );
    const stmt = JSON.parse(file('gateway/aws-api-gateway.json')).wafRateBasedRules[0].Statement.RateBasedStatement;
    expect(stmt.EvaluationWindowSec).toBe(600);
    const anon = rule(design, 'anonymous-per-ip');
    expect(anon.rate!.periodSeconds).toBe(600);
    expect(anon.ttlSeconds).toBe(600);
    const ceiling = rule(design, 'global-ceiling');
    // the stage throttle is a bucket per API method: the API admits the ceiling on each limited method (under the account's 10,000/s)
    const methods = design.scope.endpoints.filter((e) => e.class !== 'health').length;
    expect(methods).toBeGreaterThan(1);
    const admitted = Math.min((ceiling.rate!.requests / ceiling.rate!.periodSeconds) * methods, 10_000);
    expect(anon.cardinality?.bound).toBe(Math.ceil(admitted * 600));
    expect(doc).toContain('each live key needs a request within its 600 s TTL');
    expect(doc).toContain(`on each of the ${methods} API methods it throttles`);
  });

  it("a method throttle of its own overrides the stage's: the ceiling's worst case counts the other methods only, and says so", () => {
    const { design, doc, file } = build(
      answers('aws-api-gateway', ['ip'], {
        rules: [{ id: 'report-cap', identity: 'global', layer: 'edge', endpoints: ['report'], rate: { requests: 20, per: 'minute' } }],
      }),
    );
    const settings = JSON.parse(file('gateway/aws-api-gateway.json')).stageMethodSettings;
    // CloudFormation's MethodSettings encode the slashes of a resource path after the first as ~1
    expect(settings.map((x: any) => `${x.HttpMethod} ${x.ResourcePath}`)).toEqual(['* /*', 'POST /~1v2~1reports']);
    const ceiling = rule(design, 'global-ceiling');
    const w = worstRow(doc, 'global-ceiling');
    expect(w.formula).toBe(`(${n(ceiling.burst!)} + ${n(ceiling.rate!.requests)}/s x 1 s) x 3 API methods`);
    expect(w.basis).toContain("POST /v2/reports has a method override of its own (report-cap), which replaces the stage's setting there");
  });

  it('every rate fits a WAF rule: a window WAF accepts, a limit at least its minimum, never below the stated rate', () => {
    for (const [requests, periodSeconds] of [
      [50, 1],
      [1, 1],
      [5, 60],
      [100, 60],
      [1, 3600],
      [7, 900],
      [2000, 300],
      [3, 86400],
    ] as const) {
      const w = wafWindow({ requests, periodSeconds });
      expect(WAF_WINDOWS).toContain(w.periodSeconds);
      expect(w.requests).toBeGreaterThanOrEqual(WAF_LOWEST_LIMIT);
      expect(Number.isInteger(w.requests)).toBe(true);
      expect(w.burst).toBeNull();
      // a rate WAF can carry as it is is kept
      if (WAF_WINDOWS.includes(periodSeconds) && requests >= WAF_LOWEST_LIMIT) expect(w).toEqual({ requests, periodSeconds, burst: null });
      else expect(w.fitted).toBeDefined();
      // idempotent: the design states the window, the generator reads it again
      expect(wafWindow(w)).toEqual({ requests: w.requests, periodSeconds: w.periodSeconds, burst: null });
    }
    expect(wafWindow({ requests: 5, periodSeconds: 60 })).toMatchObject({ requests: 10, periodSeconds: 120 });
    expect(wafWindow({ requests: 1, periodSeconds: 3600 })).toMatchObject({ requests: 10, periodSeconds: 600 });
  });
});

describe('Cloudflare: the document states what the rules enforce, per data centre', () => {
  const { design, checks, doc, file } = build(answers('cloudflare', ['ip']));
  const cf = JSON.parse(file('gateway/cloudflare-ratelimit.json'));
  const ruleFor = (id: string) => cf.rules.find((r: any) => String(r.description).startsWith(`${id}:`));

  it('each rule states the period and count the rule carries, a period Cloudflare accepts, no burst', () => {
    for (const id of ['global-ceiling', 'anonymous-per-ip']) {
      const { ratelimit } = ruleFor(id);
      expect(CLOUDFLARE_PERIODS).toContain(ratelimit.period);
      expect(Number.isInteger(ratelimit.requests_per_period)).toBe(true);
      const r = rule(design, id);
      expect(r.rate).toMatchObject({ requests: ratelimit.requests_per_period, periodSeconds: ratelimit.period });
      expect(r.burst).toBeNull();
      expect(rowOf(doc, '## 2. Limit matrix', `[\`${id}\`]`)[3]).toBe(
        `${n(ratelimit.requests_per_period)} / ${ratelimit.period} s, no burst (window)`,
      );
      const w = worstRow(doc, id);
      // Cloudflare counts in each data centre: the row is one data centre's
      expect(w.stated).toBe(`${n(ratelimit.requests_per_period)} per ${ratelimit.period} s in each data centre`);
      expect(w.worst).toBe(`${n(2 * ratelimit.requests_per_period)} per data centre`);
      expect(w.formula).toBe(`2 x ${n(ratelimit.requests_per_period)} per data centre`);
      expect(w.basis).toContain('per data centre');
    }
    const anon = ruleFor('anonymous-per-ip').ratelimit;
    expect(anon.characteristics).toEqual(['ip.src', 'cf.colo.id']);
    // what a per-data-centre count means for one client
    expect(worstRow(doc, 'anonymous-per-ip').basis).toContain('a client whose requests land in D data centres');
    expect(doc).toContain(`anonymous-per-ip: ${n(anon.requests_per_period)} per ${anon.period} s`);
    expect(doc).not.toContain('| 100 | 2 x 50 |');
  });

  it('passes validate', () => {
    expect(passes(checks)).toEqual([]);
  });

  it('every rate fits a Cloudflare period, keeps a period Cloudflare accepts, folds a burst into the count', () => {
    for (const [requests, periodSeconds, burst] of [
      [50, 1, null],
      [100, 60, null],
      [1, 3600, null],
      [5, 1, 20],
      [3, 86400, null],
      [10, 900, null],
    ] as const) {
      const w = cloudflareWindow({ requests, periodSeconds }, burst);
      expect(CLOUDFLARE_PERIODS).toContain(w.periodSeconds);
      expect(w.requests).toBeGreaterThanOrEqual(Math.max(1, burst ?? 0));
      expect(w.burst).toBeNull();
      expect(cloudflareWindow(w, null)).toEqual({ requests: w.requests, periodSeconds: w.periodSeconds, burst: null });
    }
    expect(cloudflareWindow({ requests: 100, periodSeconds: 60 }, null)).toEqual({ requests: 100, periodSeconds: 60, burst: null });
    expect(cloudflareWindow({ requests: 5, periodSeconds: 1 }, 20)).toMatchObject({ requests: 50, periodSeconds: 10 });
  });
});

describe('Kong: the worst case counts every Kong route a rule sits on', () => {
  // report costs 1 here, so the per-IP rule keeps a GET and a POST endpoint (history, cost 5, counts in a rule of its own)
  const { design, checks, doc, file } = build(
    answers('kong', ['ip'], {
      endpoints: [
        { name: 'current', method: 'GET', route: '/v2/current', class: 'read', anonymous: true },
        { name: 'forecast', method: 'GET', route: '/v2/forecast/:city', class: 'read', anonymous: true },
        { name: 'history', method: 'GET', route: '/v2/history', class: 'expensive', anonymous: true, cost: 5 },
        { name: 'report', method: 'POST', route: '/v2/reports', class: 'write', anonymous: true, cost: 1 },
        { name: 'health', method: 'GET', route: '/health', class: 'health', anonymous: true },
      ],
    }),
  );
  const kong = parseYaml(file('gateway/kong.yaml'));

  it('the per-IP rule is a fixed window on each of its routes: the worst case is 2 x limit x routes', () => {
    const anon = rule(design, 'anonymous-per-ip');
    const service = kong.services[0];
    const plugins = service.routes.flatMap((r: any) =>
      (r.plugins ?? []).filter((p: any) => p.name === 'rate-limiting' && p.tags.includes('rule-anonymous-per-ip')),
    );
    const routes = plugins.length;
    expect(routes).toBeGreaterThan(1);
    for (const p of plugins) expect(p.config.second).toBe(anon.rate!.requests);
    expect(anon.rate!.periodSeconds).toBe(1);
    // Kong expires each counter with its window: that is how long an address's state lives
    expect(anon.ttlSeconds).toBe(1);
    // the file's header says the same count
    expect(file('gateway/kong.yaml')).toContain(`sit on ${routes} Kong routes`);
    const w = worstRow(doc, 'anonymous-per-ip');
    expect(w.stated).toBe(`${anon.rate!.requests} per 1 s`);
    expect(w.worst).toBe(n(2 * anon.rate!.requests * routes));
    expect(w.formula).toBe(`(2 x ${anon.rate!.requests}) x ${routes} Kong routes`);
    expect(w.basis).toContain(`sit on ${routes} Kong routes`);
  });

  it('a route-scoped rule whose endpoints another rule already holds is said to run on no Kong route', () => {
    const { file: f } = build(
      answers('kong', ['ip'], {
        rules: [{ id: 'report-cap', identity: 'global', layer: 'edge', endpoints: ['report'], rate: { requests: 20, per: 'minute' } }],
      }),
    );
    const yaml = f('gateway/kong.yaml');
    const plugins = parseYaml(yaml).services[0].routes.flatMap((r: any) => r.plugins ?? []);
    expect(plugins.some((p: any) => p.tags.includes('rule-report-cap'))).toBe(false);
    const line = yaml.split('\n').find((l) => l.startsWith('# report-cap:'));
    expect(line).toContain('No Kong route runs it');
    expect(line).not.toContain('One Kong route carries');
  });

  it('the ceiling stays on the service, one route: counted per node only', () => {
    const w = worstRow(doc, 'global-ceiling');
    expect(w.formula).toBe(`(2 x ${n(rule(design, 'global-ceiling').rate!.requests)}) x 3 nodes`);
  });

  it('passes validate', () => {
    expect(passes(checks)).toEqual([]);
  });
});

describe('Kong and Envoy: an odd hand-written edge rate is stated as the gateway files enforce it', () => {
  // 7 requests per 1,000 s: no whole count per second, minute, hour or day
  const odd = { requests: 0.007, per: 'second' };
  const handRules = [
    { id: 'slow-ip', description: 'Slow per-IP limit', identity: 'ip', layer: 'edge', rate: odd },
    { id: 'odd-report', description: 'Reports from everyone', identity: 'global', layer: 'edge', endpoints: ['report'], rate: odd },
  ];
  const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };
  const periodText = (s: number): string => (s % 3600 === 0 ? `${n(s / 3600)} h` : s % 60 === 0 ? `${n(s / 60)} min` : `${n(s)} s`);
  const matrixCell = (doc: string, id: string): string => rowOf(doc, '## 2. Limit matrix', `[\`${id}\`]`)[3]!;
  const durationSeconds = (d: string): number => Number(String(d).replace(/s$/, ''));

  it('Envoy: the rate limit service descriptor and the local token bucket are the matrix numbers', () => {
    const { design, doc, file } = build(answers('envoy', ['api-key'], { rules: handRules }));
    const service = parseYaml(file('gateway/ratelimit-service.yaml'));
    const filter = parseYaml(file('gateway/envoy-local-ratelimit.yaml'));
    // the per-IP rule: one whole count per unit, as the matrix states it
    const slow = rule(design, 'slow-ip');
    const limit = service.descriptors.find((d: any) => d.value === 'slow-ip').descriptors[0].rate_limit;
    expect(Number.isInteger(limit.requests_per_unit)).toBe(true);
    expect(slow.rate).toMatchObject({ requests: limit.requests_per_unit, periodSeconds: UNIT_SECONDS[limit.unit] });
    expect(slow.burst).toBeNull();
    expect(matrixCell(doc, 'slow-ip')).toBe(`${n(limit.requests_per_unit)} / ${periodText(UNIT_SECONDS[limit.unit]!)}, no burst (window)`);
    // never more generous than the rule asked: 7 per 1,000 s is 25.2 per hour
    expect(limit.requests_per_unit / UNIT_SECONDS[limit.unit]!).toBeLessThanOrEqual(0.007);
    expect(file('gateway/envoy-local-ratelimit.yaml')).toContain(`${limit.requests_per_unit} per ${limit.unit}, fixed window`);
    // the route-scoped global rule: the local descriptor's bucket refills at the matrix rate, holds its burst
    const report = rule(design, 'odd-report');
    const local = filter.http_connection_manager.http_filters.find((f: any) => f.name === 'envoy.filters.http.local_ratelimit');
    const bucket = local.typed_config.descriptors.find((d: any) => d.entries[0].value === 'odd-report').token_bucket;
    expect(bucket.tokens_per_fill / durationSeconds(bucket.fill_interval)).toBeCloseTo(
      report.rate!.requests / report.rate!.periodSeconds,
      12,
    );
    expect(bucket.tokens_per_fill / durationSeconds(bucket.fill_interval)).toBeCloseTo(0.007, 12);
    expect(bucket.max_tokens).toBe(report.burst);
    expect(matrixCell(doc, 'odd-report')).toBe(
      `${n(report.rate!.requests)} / ${n(report.rate!.periodSeconds)} s, burst ${n(bucket.max_tokens)}`,
    );
  });

  it('Kong: each plugin counts the matrix numbers (rate-limiting per unit, rate-limiting-advanced any whole window)', () => {
    const { design, doc, file } = build(
      answers('kong', ['api-key'], { rules: [...handRules, { id: 'global-ceiling', rate: { requests: 0.5, per: 'second' } }] }),
    );
    const kong = parseYaml(file('gateway/kong.yaml'));
    const service = kong.services[0];
    const plugins = [...(service.plugins ?? []), ...service.routes.flatMap((r: any) => r.plugins ?? [])];
    const pluginOf = (id: string) => plugins.find((p: any) => p.tags.includes(`rule-${id}`));
    for (const id of ['slow-ip', 'odd-report']) {
      const cfg = pluginOf(id).config;
      const [unit] = Object.keys(UNIT_SECONDS).filter((u) => cfg[u] !== undefined);
      expect(unit, id).toBeDefined();
      expect(Number.isInteger(cfg[unit!])).toBe(true);
      const r = rule(design, id);
      expect(r.rate, id).toMatchObject({ requests: cfg[unit!], periodSeconds: UNIT_SECONDS[unit!] });
      expect(r.burst).toBeNull();
      expect(cfg[unit!] / UNIT_SECONDS[unit!]!).toBeLessThanOrEqual(0.007);
      expect(matrixCell(doc, id)).toBe(`${n(cfg[unit!])} / ${periodText(UNIT_SECONDS[unit!]!)}, no burst (window)`);
    }
    // the ceiling, overridden to half a request a second: rate-limiting-advanced counts 1 per 2 s
    const ceiling = rule(design, 'global-ceiling');
    const adv = pluginOf('global-ceiling').config;
    expect(adv.limit).toEqual([1]);
    expect(adv.window_size).toEqual([2]);
    expect(ceiling.rate).toMatchObject({ requests: 1, periodSeconds: 2 });
    expect(matrixCell(doc, 'global-ceiling')).toBe('1 / 2 s, no burst (window)');
  });
});

describe.each(['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare'])('hand-written edge rules on %s', (gateway) => {
  // stated with a rate and a layer only, one of them naming an algorithm no gateway here runs as named
  const { design, checks, doc } = build(
    answers(gateway, ['api-key'], {
      rules: [
        { id: 'slow-ip', description: 'Slow per-IP limit', identity: 'ip', layer: 'edge', rate: { requests: 0.007, per: 'second' } },
        {
          id: 'report-cap',
          description: 'Reports from everyone',
          identity: 'global',
          layer: 'edge',
          endpoints: ['report'],
          algorithm: 'gcra',
          rate: { requests: 20, per: 'minute' },
        },
      ],
    }),
  );

  it("get the gateway's algorithm, its primitive and the rest of a rule from what the gateway does, and pass validate", () => {
    for (const id of ['slow-ip', 'report-cap']) {
      const r = rule(design, id);
      const edge = edgeCounter(r, design.scope);
      expect(r.algorithm, id).toBe(edge.algorithm);
      expect(r.primitive, id).toBe('gateway-native');
      expect(r.key, id).toBeDefined();
      expect(r.failMode, id).toBeDefined();
      expect(r.ttlSeconds, id).toBeGreaterThan(0);
      expect(r.cardinality?.bound, id).toBeGreaterThan(0);
      expect(r.rationale, id).toContain(edge.component);
    }
    expect(rule(design, 'report-cap').rationale).toContain(
      `The answers name gcra, but ${edgeCounter(rule(design, 'report-cap'), design.scope).component} runs`,
    );
    expect(passes(checks)).toEqual([]);
  });

  it('each has a worst-case row, counted as its gateway counts it', () => {
    const rows = worstCaseTable(design);
    for (const id of ['slow-ip', 'report-cap']) {
      const r = rule(design, id);
      const row = rows.find((x) => x.ruleId === id);
      expect(row, id).toBeDefined();
      expect(row!.layer).toBe('edge');
      expect(row!.algorithm).toBe(r.algorithm);
      expect(row!.stated).toBe(r.rate!.requests);
      expect(row!.worstCase).toBeGreaterThanOrEqual(Math.floor(r.rate!.requests));
      const cells = worstRow(doc, id);
      const where = row!.perLocation ? ` in each ${row!.perLocation}` : '';
      expect(cells.stated).toBe(`${n(r.rate!.requests)} per ${row!.periodText}${where}`);
      expect(cells.worst).toBe(`${n(row!.worstCase)}${row!.perLocation ? ` per ${row!.perLocation}` : ''}`);
    }
  });
});

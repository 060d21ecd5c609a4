import { describe, expect, it } from 'vitest';
import { HandRule } from '../../src/answers/schema.js';
import completeRules from '../../src/constraints/complete-rules.js';
import { checkDesign, formatFinding } from '../../src/constraints/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { awsKeys, awsSessions, edit, editJson, main, saas } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(completeRules, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'a window rule that leaves burst out',
      design: mutate(design, (d) => {
        delete getRule(d, 'auth-login-per-ip').burst;
      }),
    },
    {
      name: 'a GCRA rule with a burst',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').algorithm = 'gcra';
      }),
    },
    {
      name: 'a sliding window counter in the middleware with the burst it runs with (a GCRA bucket)',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.algorithm = 'sliding-window-counter';
        rule.layer = 'middleware';
        rule.burst = 20;
      }),
    },
    {
      name: 'a sliding window counter at the edge (Cloudflare) without a burst',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.algorithm = 'sliding-window-counter';
        rule.layer = 'edge';
        rule.burst = null;
      }),
    },
  ],
  invalid: [
    {
      name: 'a rule without an algorithm',
      design: mutate(design, (d) => {
        delete getRule(d, 'api-per-api-key').algorithm;
      }),
      expect: [{ messageId: 'missingField', ruleId: 'api-per-api-key', data: { field: 'algorithm' } }],
    },
    {
      name: 'a leaky bucket (nginx) without a burst',
      design: mutate(design, (d) => {
        getRule(d, 'global-ceiling').burst = null;
      }),
      expect: [{ messageId: 'missingField', ruleId: 'global-ceiling', data: { field: 'burst' } }],
    },
    {
      name: 'a hand-written rule with only a rate, one finding per missing field',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'quota-free-monthly');
        delete rule.key;
        delete rule.cost;
        delete rule.failMode;
        delete rule.layer;
      }),
      expect: ['key', 'cost', 'failMode', 'layer'].map((field) => ({
        messageId: 'missingField',
        ruleId: 'quota-free-monthly',
        data: { field },
      })),
    },
    {
      name: 'a rule without a cost on an endpoint that states none (its class weight is an assumption)',
      design: mutate(design, (d) => {
        delete getRule(d, 'auth-login-per-ip').cost;
        const login = d.scope.endpoints.find((e) => e.name === 'login');
        if (login) login.assumed = ['cost'];
      }),
      expect: [{ messageId: 'missingCost', ruleId: 'auth-login-per-ip', data: { endpoints: 'login has' } }],
    },
    {
      name: 'a zero rate and a zero endpoint weight',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.rate = { requests: 0, periodSeconds: 1 };
        rule.cost = { default: 1, byEndpoint: [{ endpoint: 'export-orders', cost: 0 }] };
      }),
      expect: [
        { messageId: 'invalidField', ruleId: 'api-per-api-key', data: { field: 'rate' } },
        { messageId: 'invalidField', ruleId: 'api-per-api-key', data: { field: 'cost' } },
      ],
    },
    {
      name: 'an algorithm the tool does not know',
      design: mutate(design, (d) => {
        forceField(getRule(d, 'global-ceiling'), 'algorithm', 'adaptive-window');
      }),
      expect: [{ messageId: 'invalidField', ruleId: 'global-ceiling', data: { field: 'algorithm', value: 'adaptive-window' } }],
    },
    {
      name: 'a sliding window log that claims a burst',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-username').burst = 10;
      }),
      expect: [{ messageId: 'burstNotApplicable', ruleId: 'auth-login-per-username', data: { algorithm: 'sliding-window-log' } }],
    },
    {
      name: 'a sliding window counter in the middleware without a burst: it runs as a GCRA bucket, whose capacity is unstated',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.algorithm = 'sliding-window-counter';
        rule.layer = 'middleware';
        rule.burst = null;
      }),
      expect: [{ messageId: 'missingField', ruleId: 'api-per-api-key', data: { field: 'burst' } }],
    },
    {
      name: 'a sliding window counter at the edge that claims a burst',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.algorithm = 'sliding-window-counter';
        rule.layer = 'edge';
        rule.burst = 20;
      }),
      expect: [{ messageId: 'burstNotApplicable', ruleId: 'api-per-api-key', data: { algorithm: 'sliding-window-counter' } }],
    },
    {
      name: 'an empty matrix',
      design: mutate(design, (d) => {
        d.rules = [];
      }),
      expect: [{ messageId: 'emptyMatrix' }],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(completeRules, {
  valid: [
    { name: 'the files generated for saas-platform', ...saas() },
    { name: 'the files generated for a small Express API', ...main() },
  ],
  invalid: [
    {
      name: 'a middleware rule missing from middleware/design.ts',
      design: saas().design,
      files: edit(saas(), 'middleware/design.ts', (c) => c.replace('id: "fairness-pro"', 'id: "fairness-pro-renamed"')),
      expect: [
        { messageId: 'notShipped', ruleId: 'fairness-pro', data: { file: 'middleware/design.ts' } },
        // the renamed entry is also a value of DESIGN the design does not give
        {
          messageId: 'middlewareDataDiffers',
          ruleId: 'fairness-pro-renamed',
          data: { file: 'middleware/design.ts', shipped: '"fairness-pro-renamed"', stated: '"fairness-pro"' },
        },
      ],
    },
    {
      name: 'a middleware rule whose limit was edited by hand in middleware/design.ts',
      design: saas().design,
      files: edit(saas(), 'middleware/design.ts', (c) => c.replace(/(id: "fairness-pro",[\s\S]*?\n\s+limit: )\d+,/, '$19999,')),
      expect: [
        {
          messageId: 'middlewareDataDiffers',
          ruleId: 'fairness-pro',
          data: { file: 'middleware/design.ts', shipped: '9999', stated: '600' },
        },
      ],
    },
    {
      name: 'a fail mode edited by hand in middleware/design.ts',
      design: main().design,
      files: edit(main(), 'middleware/design.ts', (c) => c.replace(/failMode: "closed"/, 'failMode: "open"')),
      expect: [
        {
          messageId: 'middlewareDataDiffers',
          ruleId: 'auth-login-per-identity',
          data: { file: 'middleware/design.ts', shipped: '"open"', stated: '"closed"' },
        },
      ],
    },
    {
      name: 'an outbound provider missing from outbound/providers.ts',
      design: saas().design,
      files: edit(saas(), 'outbound/providers.ts', (c) => c.replace(/^ {2}\["SendGrid"\].*\n/m, '')),
      expect: [{ messageId: 'notShipped', ruleId: 'outbound-sendgrid', data: { file: 'outbound/providers.ts' } }],
    },
    {
      name: 'an edge rule the gateway config does not hold',
      design: saas().design,
      files: saas().files.map((f) =>
        f.path.startsWith('gateway/') ? { ...f, content: f.content.replaceAll('anonymous-per-ip', 'anon') } : f,
      ),
      expect: [{ messageId: 'notShipped', ruleId: 'anonymous-per-ip' }],
    },
    {
      name: "an nginx zone whose rate is not the edge rule's",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx.conf', (c) => c.replace(/(zone=rl_anonymous_per_ip:\d+m rate=)50r\/s/, '$1500r/s')),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'anonymous-per-ip',
          data: { stated: '50 / 1 s, burst 500', file: 'gateway/nginx.conf', shipped: 'limit_req_zone rate=500r/s, limit_req burst=500' },
        },
      ],
    },
    {
      name: 'a document stating 5 per hour at the edge while nginx ships its lowest rate, 1r/m (12 times laxer)',
      design: mutate(saas().design, (d) => {
        const r = getRule(d, 'anonymous-per-ip');
        r.rate = { requests: 5, periodSeconds: 3600 };
        r.burst = 1;
      }),
      files: edit(
        { ...saas(), files: edit(saas(), 'gateway/nginx.conf', (c) => c.replace(/(zone=rl_anonymous_per_ip:\d+m rate=)50r\/s/, '$11r/m')) },
        'gateway/nginx-server.conf',
        (c) => c.replace('zone=rl_anonymous_per_ip burst=500', 'zone=rl_anonymous_per_ip burst=1'),
      ),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'anonymous-per-ip',
          data: { stated: '5 / 1 h, burst 1', file: 'gateway/nginx.conf', shipped: 'limit_req_zone rate=1r/m, limit_req burst=1' },
        },
      ],
    },
    {
      name: "an nginx limit_req whose burst is not the edge rule's",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) =>
        c.replace('zone=rl_anonymous_per_ip burst=500', 'zone=rl_anonymous_per_ip burst=5000'),
      ),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'anonymous-per-ip',
          data: { shipped: 'limit_req_zone rate=50r/s, limit_req burst=5000' },
        },
      ],
    },
    {
      name: 'an edge rule that weighs a call by cost, which the gateway counts as one request',
      design: mutate(saas().design, (d) => {
        getRule(d, 'anonymous-per-ip').cost = { default: 1, byEndpoint: [{ endpoint: 'search', cost: 10 }] };
      }),
      files: saas().files,
      expect: [
        {
          messageId: 'edgeCostNotCounted',
          ruleId: 'anonymous-per-ip',
          data: { cost: '1 (search = 10)', file: 'gateway/nginx-server.conf' },
        },
      ],
    },
  ],
});

// AWS API Gateway: every API-key edge rule in one usage plan, as method throttles on the methods it names
const AWS = 'gateway/aws-api-gateway.json';
runConstraintTests(completeRules, {
  valid: [{ name: 'the files generated for two API-key edge rules on AWS, one split by cost', ...awsKeys() }],
  invalid: [
    {
      name: 'the usage plan given a Throttle of its own, which would limit every route of the stage',
      design: awsKeys().design,
      files: editJson(awsKeys(), AWS, (d) => {
        d.usagePlans[0].Throttle = { RateLimit: 20, BurstLimit: 40 };
      }),
      expect: [
        {
          messageId: 'edgeScopeDiffers',
          data: {
            stated: expect.stringContaining(
              'that no rule keyed on the API key covers every endpoint (reads-per-key limits /v1/stations/{id}/GET',
            ),
            shipped: 'gives usage plan tide-tables-api-api-keys a Throttle of its own, which every method of the stage counts against',
          },
        },
      ],
    },
    {
      name: "the cost-3 export's method throttle left out",
      design: awsKeys().design,
      files: editJson(awsKeys(), AWS, (d) => {
        delete d.usagePlans[0].ApiStages[0].Throttle['/v1/exports/POST'];
      }),
      expect: [
        { messageId: 'edgeScopeDiffers', ruleId: 'bulk-per-key-cost-3', data: { shipped: 'has no method throttle on /v1/exports/POST' } },
      ],
    },
    {
      name: 'a method throttle on a method no rule names',
      design: awsKeys().design,
      files: editJson(awsKeys(), AWS, (d) => {
        d.usagePlans[0].ApiStages[0].Throttle['/v1/subscriptions/DELETE'] = { RateLimit: 6, BurstLimit: 12 };
      }),
      expect: [{ messageId: 'edgeScopeDiffers', data: { stated: 'no rule keyed on the API key on /v1/subscriptions/DELETE' } }],
    },
    {
      name: 'the cost-3 export throttled at the unit rate of the rule it was split from',
      design: awsKeys().design,
      files: editJson(awsKeys(), AWS, (d) => {
        d.usagePlans[0].ApiStages[0].Throttle['/v1/exports/POST'] = { RateLimit: 6, BurstLimit: 12 };
      }),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'bulk-per-key-cost-3',
          data: { stated: '2 / 1 s, burst 4', shipped: 'usage plan method throttle /v1/exports/POST: RateLimit 6, BurstLimit 12' },
        },
      ],
    },
    {
      name: 'one stage-wide usage plan per rule, as the generator once wrote them',
      design: awsKeys().design,
      files: editJson(awsKeys(), AWS, (d) => {
        const rates: Record<string, [number, number]> = {
          'reads-per-key': [20, 40],
          'bulk-per-key': [6, 12],
          'bulk-per-key-cost-3': [2, 4],
        };
        d.usagePlans = Object.entries(rates).map(([id, [rate, burst]]) => ({
          UsagePlanName: `tide-tables-api-${id}`,
          Description: `${id}: per API key`,
          Throttle: { RateLimit: rate, BurstLimit: burst },
          ApiStages: [{ ApiId: '<rest-api-id>', Stage: '<stage>' }],
        }));
      }),
      expect: [
        { messageId: 'edgeScopeDiffers', data: { shipped: expect.stringContaining('has 3 usage plans') } },
        { messageId: 'edgeScopeDiffers', data: { shipped: expect.stringContaining('Throttles of their own') } },
        { messageId: 'edgeScopeDiffers', ruleId: 'reads-per-key' },
        { messageId: 'edgeScopeDiffers', ruleId: 'bulk-per-key' },
        { messageId: 'edgeScopeDiffers', ruleId: 'bulk-per-key-cost-3' },
      ],
    },
  ],
});

// AWS API Gateway: the ceiling's stage throttle is a bucket per API method, each at the row's full rate
const methodThrottle = (rate: number, burst: number, path = '/~1api~1feed', method = 'GET') => ({
  ResourcePath: path,
  HttpMethod: method,
  ThrottlingRateLimit: rate,
  ThrottlingBurstLimit: burst,
  _rule: 'global-ceiling',
});
runConstraintTests(completeRules, {
  valid: [
    {
      name: "a method throttle of its own for the hot endpoint at the row's full rate and burst",
      design: awsSessions().design,
      files: editJson(awsSessions(), AWS, (d) => {
        d.stageMethodSettings.push(methodThrottle(2100, 2100));
      }),
    },
    {
      name: "the stage's methods lowered by hand, as the document allows (the hot endpoint keeps the full rate)",
      design: awsSessions().design,
      files: editJson(awsSessions(), AWS, (d) => {
        d.stageMethodSettings[0].ThrottlingRateLimit = 500;
        d.stageMethodSettings[0].ThrottlingBurstLimit = 500;
        d.stageMethodSettings.push(methodThrottle(2100, 2100));
      }),
    },
  ],
  invalid: [
    {
      name: "one method's throttle above the row's rate, beside the hot endpoint's at it",
      design: awsSessions().design,
      files: editJson(awsSessions(), AWS, (d) => {
        d.stageMethodSettings.push(methodThrottle(2100, 2100), methodThrottle(2100.5, 2100, '/~1api~1search'));
      }),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'global-ceiling',
          data: {
            stated: '2,100 / 1 s, burst 2,100',
            shipped: 'stage throttle GET /~1api~1search: ThrottlingRateLimit 2100.5, ThrottlingBurstLimit 2100',
          },
        },
      ],
    },
    {
      name: "the stage's burst above the row's",
      design: awsSessions().design,
      files: editJson(awsSessions(), AWS, (d) => {
        d.stageMethodSettings[0].ThrottlingBurstLimit = 4200;
      }),
      expect: [
        {
          messageId: 'edgeNumbersDiffer',
          ruleId: 'global-ceiling',
          data: { shipped: 'stage throttle * /*: ThrottlingRateLimit 2100, ThrottlingBurstLimit 4200' },
        },
      ],
    },
  ],
});

describe('the advice for a burst on a window algorithm', () => {
  it('is what the answers schema accepts: leave burst out (a null burst is refused)', () => {
    expect(completeRules.meta.messages.burstNotApplicable).toContain('leave burst out');
    expect(HandRule.safeParse({ id: 'x' }).success).toBe(true);
    expect(HandRule.safeParse({ id: 'x', burst: null }).success).toBe(false);
  });
});

describe('the rates in its findings', () => {
  it("are written as the document's limit matrix writes them (5 / 1 h, not 5 per 3600 s)", () => {
    const stated = mutate(saas().design, (d) => {
      const r = getRule(d, 'anonymous-per-ip');
      r.rate = { requests: 5, periodSeconds: 3600 };
      r.burst = 1;
    });
    const files = edit(saas(), 'gateway/nginx.conf', (c) => c.replace(/(zone=rl_anonymous_per_ip:\d+m rate=)50r\/s/, '$11r/m'));
    const finding = checkDesign(stated, files)
      .flatMap((r) => r.findings)
      .find((f) => f.messageId === 'edgeNumbersDiffer' && f.ruleId === 'anonymous-per-ip');
    expect(finding).toBeDefined();
    const message = formatFinding(finding!);
    expect(message).toContain('The document states 5 / 1 h, burst 1 for the rule');
    // the same figure the document's matrix row shows for the rule
    const doc = renderMarkdown({ design: stated, checks: [], codeFiles: [] }, { layout: 'single' })[0]?.content ?? '';
    expect(doc).toMatch(/\| \[`anonymous-per-ip`\]\(#rule-anonymous-per-ip\) \|[^\n]*\| 5 \/ 1 h, burst 1 \|/);
  });
});

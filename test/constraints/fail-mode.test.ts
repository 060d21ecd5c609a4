import failMode from '../../src/constraints/fail-mode.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { awsKeys, edit, editJson, keyless, main, saas, without } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(failMode, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'every rule in the gateway: no store to fail, so no store alerts are needed',
      design: mutate(design, (d) => {
        for (const r of d.rules) r.primitive = 'gateway-native';
        d.monitoring.alerts = d.monitoring.alerts.filter((a) => !/store_failures|fail_open/.test(`${a.metric ?? ''} ${a.expr ?? ''}`));
      }),
    },
    {
      name: "the seed's dotted metric names, alerts found through their expressions",
      design: mutate(design, (d) => {
        d.monitoring.metrics = [
          { name: 'ratelimit.store_failures', type: 'counter', labels: [], help: 'Store calls that failed.' },
          { name: 'ratelimit.fail_open_events', type: 'counter', labels: [], help: 'Requests admitted unchecked.' },
        ];
        for (const alert of d.monitoring.alerts) alert.metric = '';
      }),
    },
  ],
  invalid: [
    {
      name: 'a rule with no fail mode',
      design: mutate(design, (d) => {
        delete getRule(d, 'api-per-api-key').failMode;
      }),
      expect: [{ messageId: 'missingFailMode', ruleId: 'api-per-api-key', data: { value: 'none' } }],
    },
    {
      name: 'a fail mode that is neither open nor closed',
      design: mutate(design, (d) => {
        forceField(getRule(d, 'auth-login-per-ip'), 'failMode', 'degrade');
      }),
      expect: [{ messageId: 'missingFailMode', ruleId: 'auth-login-per-ip', data: { value: 'degrade' } }],
    },
    {
      name: 'store failures not counted, so not alerted on',
      design: mutate(design, (d) => {
        d.monitoring.metrics = d.monitoring.metrics.filter((m) => !m.name.includes('store_failures'));
        d.monitoring.alerts = d.monitoring.alerts.filter((a) => !a.metric.includes('store_failures'));
      }),
      expect: [
        { messageId: 'missingMetric', data: { signal: 'store_failures' } },
        { messageId: 'missingAlert', data: { signal: 'store_failures' } },
      ],
    },
    {
      name: 'fail-open events as a gauge with no alert',
      design: mutate(design, (d) => {
        const metric = d.monitoring.metrics.find((m) => m.name.includes('fail_open'));
        if (metric) metric.type = 'gauge';
        d.monitoring.alerts = d.monitoring.alerts.filter((a) => !a.metric.includes('fail_open'));
      }),
      expect: [
        { messageId: 'metricNotCounter', data: { signal: 'fail_open', metric: 'ratelimit_fail_open_events_total', type: 'gauge' } },
        { messageId: 'missingAlert', data: { signal: 'fail_open' } },
      ],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(failMode, {
  valid: [
    { name: 'the files generated for saas-platform', ...saas() },
    { name: 'the files generated for a small Express API', ...main() },
    { name: 'the files generated for two API-key edge rules on AWS', ...awsKeys() },
    ...(['envoy', 'cloudflare', 'aws-api-gateway', 'kong', 'nginx'] as const).map((g) => ({
      name: `the files generated for a keyless API behind ${g}`,
      ...keyless(g),
    })),
  ],
  invalid: [
    {
      name: 'design.ts fails open a rule the matrix fails closed',
      design: main().design,
      files: edit(main(), 'middleware/design.ts', (c) => c.replace(/(id: "auth-login-per-ip",[\s\S]*?failMode: )"closed"/, '$1"open"')),
      expect: [{ messageId: 'failModeNotShipped', ruleId: 'auth-login-per-ip', data: { shipped: 'open', failMode: 'closed' } }],
    },
    {
      name: 'an alert on a metric no component emits',
      design: saas().design,
      files: edit(saas(), 'monitoring/ratelimit-alerts.yaml', (c) =>
        c.replaceAll('ratelimit_fail_open_events_total', 'ratelimit_fail_open_total'),
      ),
      expect: [
        // the file no longer says what the document's table does
        { messageId: 'alertNotShipped', data: { alert: 'RateLimitFailOpen', file: 'monitoring/ratelimit-alerts.yaml' } },
        {
          messageId: 'alertOnSilentMetric',
          data: { alert: 'RateLimitFailOpen', metric: 'ratelimit_fail_open_total', file: 'monitoring/ratelimit-alerts.yaml' },
        },
      ],
    },
    {
      name: "the soft-quota overage alert of the document's table left out of the rules file",
      design: saas().design,
      files: edit(saas(), 'monitoring/ratelimit-alerts.yaml', (c) =>
        c.replace(/ {6}- alert: RateLimitQuotaOverage\n[\s\S]*?(?= {6}- alert: )/, ''),
      ),
      expect: [
        {
          messageId: 'alertNotShipped',
          data: { alert: 'RateLimitQuotaOverage', file: 'monitoring/ratelimit-alerts.yaml', shipped: 'has no rule of that name' },
        },
      ],
    },
    {
      name: 'the overage alert shipped paging where the table opens a ticket',
      design: saas().design,
      files: edit(saas(), 'monitoring/ratelimit-alerts.yaml', (c) =>
        c.replace(/(- alert: RateLimitQuotaOverage\n(?:.*\n){3} {10}severity: )ticket/, '$1page'),
      ),
      expect: [
        {
          messageId: 'alertNotShipped',
          data: { alert: 'RateLimitQuotaOverage', shipped: 'gives it severity page where the table says ticket' },
        },
      ],
    },
    {
      name: 'the overage alert held for another time',
      design: saas().design,
      files: edit(saas(), 'monitoring/ratelimit-alerts.yaml', (c) =>
        c.replace(/(- alert: RateLimitQuotaOverage\n.*\n {8}for: )5m/, '$11h'),
      ),
      expect: [
        { messageId: 'alertNotShipped', data: { alert: 'RateLimitQuotaOverage', shipped: 'holds it for 1h where the table says 5m' } },
      ],
    },
    {
      name: 'the nginx mtail program and the outbound client removed: nothing exports the throttle counter the middleware no longer names',
      design: saas().design,
      files: without(
        edit(saas(), 'middleware/design.ts', (c) => c.replace('name: "ratelimit_throttled_total"', 'name: "ratelimit_refused_total"')),
        'monitoring/nginx-ratelimit.mtail',
        'outbound/providers.ts',
      ),
      expect: [
        { messageId: 'alertOnSilentMetric', data: { alert: 'RateLimitThrottleSpike', metric: 'ratelimit_throttled_total' } },
        { messageId: 'alertOnSilentMetric', data: { alert: 'RateLimitRareRuleFiring', metric: 'ratelimit_throttled_total' } },
        // and the providers' own 429 counter, which only the outbound client exports
        { messageId: 'alertOnSilentMetric', data: { metric: 'ratelimit_outbound_provider_429_total' } },
      ],
    },
    {
      name: 'metrics.ts that no longer registers the access counter: design.ts names it, but the penalty-box alert could never fire',
      design: saas().design,
      files: edit(saas(), 'middleware/metrics.ts', (c) =>
        c.replace('METRICS.access ? counterFor(registry, METRICS.access,', 'METRICS.access ? counterFor(registry, { ...METRICS.access },'),
      ),
      expect: [{ messageId: 'alertOnSilentMetric', data: { alert: 'RateLimitPenaltyBoxSpike', metric: 'ratelimit_access_total' } }],
    },
    {
      name: "nginx.conf's comment states another fail mode than the matrix",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx.conf', (c) => c.replace('fail open if its count moves', 'fail closed if its count moves')),
      expect: [
        {
          messageId: 'failModeNotShipped',
          ruleId: 'global-ceiling',
          data: { file: 'gateway/nginx.conf (comment)', shipped: 'closed', failMode: 'open' },
        },
      ],
    },
    {
      name: "Envoy's rate limit filter set to refuse while its service is unreachable, the matrix saying fail open",
      design: keyless('envoy').design,
      files: edit(keyless('envoy'), 'gateway/envoy-local-ratelimit.yaml', (c) =>
        c.replace('failure_mode_deny: false', 'failure_mode_deny: true'),
      ),
      expect: [
        {
          messageId: 'failModeNotShipped',
          ruleId: 'anonymous-per-ip',
          data: { file: 'gateway/envoy-local-ratelimit.yaml (failure_mode_deny true)', shipped: 'closed', failMode: 'open' },
        },
        { messageId: 'failModeNotShipped', ruleId: 'anonymous-per-ip-cost-5', data: { shipped: 'closed' } },
      ],
    },
    {
      name: "the Envoy ceiling's comment without its fail mode",
      design: keyless('envoy').design,
      files: edit(keyless('envoy'), 'gateway/envoy-local-ratelimit.yaml', (c) =>
        c.replace(/(# global-ceiling: .*?); fail open if [^\n]*/, '$1.'),
      ),
      expect: [
        {
          messageId: 'edgeFailModeNotStated',
          ruleId: 'global-ceiling',
          data: { file: 'gateway/envoy-local-ratelimit.yaml', failMode: 'open' },
        },
      ],
    },
    {
      name: "a Cloudflare rule's description states another fail mode",
      design: keyless('cloudflare').design,
      files: editJson(keyless('cloudflare'), 'gateway/cloudflare-ratelimit.json', (d) => {
        const r = d.rules.find((x: any) => x.description.startsWith('anonymous-per-ip: '));
        r.description = r.description.replace('fail open if', 'fail closed if');
      }),
      expect: [
        {
          messageId: 'failModeNotShipped',
          ruleId: 'anonymous-per-ip',
          data: { file: 'gateway/cloudflare-ratelimit.json (description)', shipped: 'closed', failMode: 'open' },
        },
      ],
    },
    {
      name: "the AWS usage plan's note fails open a rule the matrix fails closed",
      design: awsKeys().design,
      files: editJson(awsKeys(), 'gateway/aws-api-gateway.json', (d) => {
        d.usagePlans[0]._rules['bulk-per-key'] = d.usagePlans[0]._rules['bulk-per-key'].replace('fail closed', 'fail open');
      }),
      expect: [
        {
          messageId: 'failModeNotShipped',
          ruleId: 'bulk-per-key',
          data: { file: 'gateway/aws-api-gateway.json (note)', shipped: 'open', failMode: 'closed' },
        },
      ],
    },
    {
      name: "the AWS stage throttle's note left out",
      design: awsKeys().design,
      files: editJson(awsKeys(), 'gateway/aws-api-gateway.json', (d) => {
        delete d.stageMethodSettings[0]._note;
      }),
      expect: [
        { messageId: 'edgeFailModeNotStated', ruleId: 'global-ceiling', data: { file: 'gateway/aws-api-gateway.json', failMode: 'open' } },
      ],
    },
    {
      name: 'no alerting rules shipped',
      design: main().design,
      files: without(main(), 'monitoring/ratelimit-alerts.yaml'),
      expect: [{ messageId: 'alertsNotShipped', data: { file: 'monitoring/ratelimit-alerts.yaml' } }],
    },
  ],
});

import failMode from '../../src/constraints/fail-mode.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(failMode, {
  valid: [
    { name: 'the reference design', design },
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

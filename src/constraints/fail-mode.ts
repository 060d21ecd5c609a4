/**
 * Constraint 5: each rule states whether it fails open or closed when the store is down,
 * and store failures and fail-open events are counted and alerted on.
 */
import { FAIL_MODES } from '../answers/choices.js';
import { defineConstraint } from './define.js';
import { objects, ruleIdOf, rulesOf, show } from './guards.js';

/** Name fragments of the two counters the constraint asks for. */
const SIGNALS = ['store_failures', 'fail_open'] as const;

export default defineConstraint({
  meta: {
    id: 'fail-mode',
    number: 5,
    title: 'Fail mode per rule, with alerts on store failure and fail-open',
    description:
      'Every rule fails open or closed by decision, and the monitoring counts store failures and fail-open events and alerts on both.',
    messages: {
      missingFailMode: 'The rule does not state its fail mode (open or closed); found {{value}}.',
      missingMetric: 'Monitoring has no counter for {{signal}} (a metric whose name contains "{{signal}}").',
      metricNotCounter: 'Metric {{metric}} counts {{signal}} events, so it must be a counter, not a {{type}}.',
      missingAlert: 'No alert fires on {{signal}}; while the limiter fails open the backend is unprotected.',
    },
  },
  check(design, report) {
    for (const rule of rulesOf(design)) {
      if (!FAIL_MODES.some((m) => m === rule.failMode)) {
        report({ messageId: 'missingFailMode', ruleId: ruleIdOf(rule), data: { value: show(rule.failMode ?? 'none') } });
      }
    }

    const metrics = objects(design?.monitoring?.metrics);
    const alerts = objects(design?.monitoring?.alerts);
    const mentions = (text: unknown, signal: string) => typeof text === 'string' && text.includes(signal);
    for (const signal of SIGNALS) {
      const named = metrics.filter((m) => mentions(m.name, signal));
      const metric = named[0];
      if (metric === undefined) {
        report({ messageId: 'missingMetric', data: { signal } });
      } else if (!named.some((m) => m.type === 'counter')) {
        report({ messageId: 'metricNotCounter', data: { signal, metric: metric.name, type: show(metric.type ?? 'none') } });
      }
      if (!alerts.some((a) => mentions(a.metric, signal) || mentions(a.expr, signal))) {
        report({ messageId: 'missingAlert', data: { signal } });
      }
    }
  },
});

/**
 * Constraint 5: each rule states whether it fails open or closed when the store is down,
 * and store failures and fail-open events are counted and alerted on. Against the shipped
 * files: the rules file holds every alert of the document's table (name, expression, hold
 * time, severity), and every metric an alert reads is exported by someone.
 */
import { FAIL_MODES } from '../answers/choices.js';
import { EXTERNAL_METRIC_SOURCES } from '../design/model.js';
import { defineConstraint } from './define.js';
import { objects, ruleIdOf, rulesOf, show } from './guards.js';
import { ALERTS_FILE, alertMetrics, DESIGN_DATA_FILE, emittedMetrics, fileOf, shippedAlerts, shippedDesign } from './artefacts.js';
import { type ShippedFailMode, shippedEdgeFailModes } from '../codegen/gateway/shipped.js';
import { alertRuleFor, alertRuleNames } from '../codegen/alerts.js';

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
      failModeNotShipped: '{{file}} makes the rule fail {{shipped}} while the matrix says fail {{failMode}}.',
      edgeFailModeNotStated:
        "{{file}} carries the edge rule but does not say how it fails; the matrix says fail {{failMode}}, and the file must state the same, as the document's fail-mode section does.",
      alertsNotShipped: 'The code folder has no {{file}}: store failures and fail-open events alert nobody.',
      alertNotShipped: "The document's alerts table lists {{alert}}, but {{file}} {{shipped}}: Prometheus runs the file, not the table.",
      alertOnSilentMetric:
        'Alert {{alert}} in {{file}} reads {{metric}}, which no generated component exports (nor an exporter the design names): it can never fire.',
    },
  },
  check(design, report) {
    for (const rule of rulesOf(design)) {
      if (!FAIL_MODES.some((m) => m === rule.failMode)) {
        report({ messageId: 'missingFailMode', ruleId: ruleIdOf(rule), data: { value: show(rule.failMode ?? 'none') } });
      }
    }

    // a design whose every rule keeps its counters in the gateway or the process has no store to fail
    const storeBacked = rulesOf(design).some((r) => r.primitive !== 'gateway-native' && r.primitive !== 'in-process');
    if (!storeBacked) return;
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
  checkFiles(design, files, report) {
    const data = shippedDesign(files);
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      const shipped = data?.rules.find((r) => r.id === ruleId);
      if (ruleId === undefined || !shipped || rule.layer !== 'middleware') continue;
      if (rule.failMode !== undefined && shipped.failMode !== rule.failMode) {
        report({
          messageId: 'failModeNotShipped',
          ruleId,
          data: { file: DESIGN_DATA_FILE, shipped: show(shipped.failMode), failMode: rule.failMode },
        });
      }
    }
    // an edge rule's fail mode, as each gateway file that carries it states it (a comment, a
    // description, or the setting itself: Kong's fault_tolerant, Envoy's failure_mode_deny)
    const gateway = files.filter((f) => f.path.startsWith('gateway/'));
    let edge: ShippedFailMode[] = [];
    try {
      edge = gateway.length > 0 && design.scope?.gateway !== 'none' ? shippedEdgeFailModes(design, gateway) : [];
    } catch {
      // a design too malformed to read its gateway files against: constraint 1 reports what it lacks
    }
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      if (ruleId === undefined || rule.layer !== 'edge' || rule.failMode === undefined) continue;
      const mine = edge.filter((s) => s.ruleId === ruleId);
      // a setting (fault_tolerant, failure_mode_deny) is what the product does: named before a comment
      const said = (s: ShippedFailMode): boolean => ['comment', 'description', 'note'].includes(s.where);
      const wrong = [...mine.filter((s) => !said(s)), ...mine.filter(said)].find(
        (s) => s.failMode !== null && s.failMode !== rule.failMode,
      );
      const silent = mine.find((s) => s.failMode === null);
      if (wrong) {
        report({
          messageId: 'failModeNotShipped',
          ruleId,
          data: { file: `${wrong.file} (${wrong.where})`, shipped: wrong.failMode as string, failMode: rule.failMode },
        });
      } else if (silent) {
        report({ messageId: 'edgeFailModeNotStated', ruleId, data: { file: silent.file, failMode: rule.failMode } });
      }
    }
    if (fileOf(files, ALERTS_FILE) === undefined) {
      report({ messageId: 'alertsNotShipped', data: { file: ALERTS_FILE } });
      return;
    }
    // every alert of the document's table is a rule of the file, as the table states it
    const shipped = new Map(shippedAlerts(files).map((r) => [r.alert, r]));
    const stated = objects(design.monitoring?.alerts);
    const names = alertRuleNames(stated);
    stated.forEach((a, i) => {
      const alert = names[i] as string;
      const rule = shipped.get(alert);
      const hold = alertRuleFor(a.for);
      const differs =
        rule === undefined
          ? 'has no rule of that name'
          : rule.expr !== a.expr
            ? `gives it another expression (${show(rule.expr)})`
            : rule.severity !== a.severity
              ? `gives it severity ${show(rule.severity ?? 'none')} where the table says ${show(a.severity)}`
              : rule.for !== hold
                ? `holds it for ${show(rule.for ?? 'no time')} where the table says ${show(a.for)}`
                : null;
      if (differs !== null) report({ messageId: 'alertNotShipped', data: { alert, file: ALERTS_FILE, shipped: differs } });
    });
    const emitted = emittedMetrics(files);
    // metrics of programs the design names and says how to scrape: redis_exporter for the store's
    // own gauges, Envoy's stats and its rate limit service's for the edge rules
    const external = new Set(
      objects(design.monitoring?.metrics)
        .filter((m) => (m.emittedBy ?? []).some((s: string) => (EXTERNAL_METRIC_SOURCES as readonly string[]).includes(s)))
        .map((m) => m.name),
    );
    for (const { alert, metrics } of alertMetrics(files)) {
      for (const metric of metrics) {
        if (!emitted.has(metric) && !external.has(metric))
          report({ messageId: 'alertOnSilentMetric', data: { alert, file: ALERTS_FILE, metric } });
      }
    }
  },
});

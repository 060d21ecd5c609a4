/**
 * Constraint 1: every limit in the matrix names its algorithm, key, rate, burst (where the
 * algorithm has one), cost, fail mode and enforcement layer.
 */
import { ALGORITHMS, FAIL_MODES, LAYERS } from '../answers/choices.js';
import type { Algorithm, MatrixRule } from '../design/model.js';
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, ruleIdOf, rulesOf, show } from './guards.js';

/** Algorithms with a bucket capacity; window algorithms carry `burst: null`. */
const BURST_ALGORITHMS: readonly Algorithm[] = ['token-bucket', 'leaky-bucket', 'gcra'];

type Field = 'algorithm' | 'key' | 'rate' | 'burst' | 'cost' | 'failMode' | 'layer';
type Verdict = 'ok' | 'missing' | 'invalid';

function verdict(value: unknown, valid: (v: unknown) => boolean): Verdict {
  if (value === undefined || value === null) return 'missing';
  return valid(value) ? 'ok' : 'invalid';
}

function oneOf(allowed: readonly string[]): (v: unknown) => boolean {
  return (v) => typeof v === 'string' && allowed.includes(v);
}

function validRate(v: unknown): boolean {
  const rate = v as MatrixRule['rate'];
  return isPositiveNumber(rate?.requests) && isPositiveNumber(rate?.periodSeconds);
}

function validCost(v: unknown): boolean {
  const cost = v as MatrixRule['cost'];
  return (
    isPositiveNumber(cost?.default) &&
    (cost.byEndpoint === undefined ||
      (Array.isArray(cost.byEndpoint) &&
        cost.byEndpoint.every((w) => isNonEmptyString(w?.endpoint) && isPositiveNumber(w.cost))))
  );
}

export default defineConstraint({
  meta: {
    id: 'complete-rules',
    number: 1,
    title: 'Every limit is fully specified',
    description:
      'Each matrix rule names its algorithm, key pattern, rate, burst (for the bucket algorithms and GCRA), cost, fail mode and enforcement layer.',
    messages: {
      emptyMatrix: 'The limit matrix has no rules.',
      missingField: 'The rule does not state its {{field}}.',
      invalidField: 'The rule states an invalid {{field}}: {{value}}.',
      burstNotApplicable: '{{algorithm}} has no burst; state burst as null for a window algorithm.',
    },
  },
  check(design, report) {
    const rules = rulesOf(design);
    if (rules.length === 0) report({ messageId: 'emptyMatrix' });

    for (const rule of rules) {
      const ruleId = ruleIdOf(rule);
      const algorithm = ALGORITHMS.find((a) => a === rule.algorithm);
      const hasBurst = algorithm !== undefined && BURST_ALGORITHMS.includes(algorithm);

      const fields: [Field, Verdict][] = [
        ['algorithm', verdict(rule.algorithm, oneOf(ALGORITHMS))],
        ['key', verdict(rule.key, isNonEmptyString)],
        ['rate', verdict(rule.rate, validRate)],
        ['burst', hasBurst ? verdict(rule.burst, isPositiveNumber) : 'ok'],
        ['cost', verdict(rule.cost, validCost)],
        ['failMode', verdict(rule.failMode, oneOf(FAIL_MODES))],
        ['layer', verdict(rule.layer, oneOf(LAYERS))],
      ];
      for (const [field, state] of fields) {
        if (state === 'missing') report({ messageId: 'missingField', ruleId, data: { field } });
        if (state === 'invalid') {
          report({ messageId: 'invalidField', ruleId, data: { field, value: show(rule[field]) } });
        }
      }

      if (algorithm !== undefined && !hasBurst && rule.burst !== null && rule.burst !== undefined) {
        report({ messageId: 'burstNotApplicable', ruleId, data: { algorithm } });
      }
    }
  },
});


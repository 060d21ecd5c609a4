/**
 * Constraint 1: every limit in the matrix names its algorithm, key, rate, burst (where the
 * algorithm has one), cost, fail mode and enforcement layer.
 */
import { ALGORITHMS, FAIL_MODES, LAYERS } from '../answers/choices.js';
import type { Algorithm, MatrixRule } from '../design/model.js';
import { luaScriptFor } from '../design/algorithms.js';
import { coveredEndpoints } from '../design/matrix.js';
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, ruleIdOf, rulesOf, show } from './guards.js';
import { DESIGN_DATA_FILE, PROVIDERS_FILE, shippedDesign, shippedProviders } from './artefacts.js';

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
      (Array.isArray(cost.byEndpoint) && cost.byEndpoint.every((w) => isNonEmptyString(w?.endpoint) && isPositiveNumber(w.cost))))
  );
}

export default defineConstraint({
  meta: {
    id: 'complete-rules',
    number: 1,
    title: 'Every limit is fully specified',
    description:
      'Each matrix rule names its algorithm, key pattern, rate, burst (for the bucket algorithms and GCRA, and for a sliding window counter the application runs as a GCRA bucket), cost, fail mode and enforcement layer.',
    messages: {
      emptyMatrix: 'The limit matrix has no rules.',
      missingField: 'The rule does not state its {{field}}.',
      missingCost:
        "The rule does not state its cost, and not every endpoint it covers states one ({{endpoints}} only its class weight, an assumption): state cost in its rules entry, or each endpoint's cost.",
      invalidField: 'The rule states an invalid {{field}}: {{value}}.',
      burstNotApplicable: '{{algorithm}} has no burst: leave burst out of the rule (its rules entry in the answers).',
      notShipped: 'The rule runs at the {{layer}}, but {{file}} does not enforce it: the shipped code has no {{what}}.',
    },
  },
  check(design, report) {
    const rules = rulesOf(design);
    if (rules.length === 0) report({ messageId: 'emptyMatrix' });

    for (const rule of rules) {
      const ruleId = ruleIdOf(rule);
      const algorithm = ALGORITHMS.find((a) => a === rule.algorithm);
      // a bucket, or a rule the application runs as a GCRA bucket (a sliding window counter in the middleware)
      const hasBurst =
        algorithm !== undefined && (BURST_ALGORITHMS.includes(algorithm) || (rule.layer !== 'edge' && luaScriptFor(algorithm) === 'gcra'));

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
        // a hand-written rule's cost comes from its endpoints when each states one (the design's default)
        const unpriced =
          field === 'cost' && state === 'missing' && Array.isArray(design.scope?.endpoints)
            ? coveredEndpoints(
                { endpoints: Array.isArray(rule.endpoints) ? rule.endpoints : [], endpointClass: rule.endpointClass },
                { endpoints: design.scope.endpoints.filter((e) => typeof e === 'object' && e !== null && typeof e.name === 'string') },
              ).filter((e) => Array.isArray(e.assumed) && e.assumed.includes('cost'))
            : [];
        if (unpriced.length > 0) {
          const names = unpriced.map((e) => e.name);
          const endpoints = `${names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)} have` : `${names[0]} has`}`;
          report({ messageId: 'missingCost', ruleId, data: { endpoints } });
          continue;
        }
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
  checkFiles(design, files, report) {
    const data = shippedDesign(files);
    const middleware = new Set((data?.rules ?? []).map((r) => r.id));
    const providers = new Set(shippedProviders(files).map((p) => p.ruleId));
    const gateway = files.filter((f) => f.path.startsWith('gateway/'));
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      if (ruleId === undefined || !rule.rate) continue;
      if (rule.tier === 'outbound' || rule.layer === 'outbound-client') {
        if (!providers.has(ruleId))
          report({
            messageId: 'notShipped',
            ruleId,
            data: { layer: 'outbound client', file: PROVIDERS_FILE, what: 'provider bucket for it' },
          });
      } else if (rule.layer === 'edge') {
        if (design.scope?.gateway === 'none') continue;
        const named = gateway.some((f) => f.content.includes(ruleId));
        if (!named)
          report({ messageId: 'notShipped', ruleId, data: { layer: 'edge', file: gateway[0]?.path ?? 'gateway/', what: 'limit for it' } });
      } else if (!middleware.has(ruleId)) {
        report({ messageId: 'notShipped', ruleId, data: { layer: 'middleware', file: DESIGN_DATA_FILE, what: 'rule entry for it' } });
      }
    }
  },
});

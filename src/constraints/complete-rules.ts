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
import { type ShippedEdgeLimit, type ShippedScopeMismatch, shippedEdgeLimits, shippedEdgeScope } from '../codegen/gateway/shipped.js';
import type { CodeFile } from '../codegen/types.js';
import type { Report } from './define.js';
import { formatNumber, rateFigure } from '../format.js';
import { compileDesign } from '../codegen/middleware/compile.js';
import { designData } from '../codegen/middleware/index.js';
import type { Design } from '../design/model.js';

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

/** "5 / 1 h, burst 50": an edge rule's numbers as the document's matrix states them (rateFigure). */
function statedText(rule: MatrixRule): string {
  const p = rule.perNode;
  const rate = (p?.rate ?? rule.rate) as { requests: number; periodSeconds: number; periodText?: string };
  const burst = p ? p.burst : rule.burst;
  return `${rateFigure(rate)}, ${typeof burst === 'number' && burst > 0 ? `burst ${formatNumber(burst)}` : 'no burst'}${p ? ` on each of ${formatNumber(p.nodes)} gateway nodes` : ''}`;
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * An edge rule's numbers are what every gateway file that configures it enforces (a count per
 * window where the product counts windows, the rate where it runs a bucket, and the burst), and
 * its cost is what the gateway counts: one per request.
 */
function edgeAgrees(
  rule: MatrixRule,
  ruleId: string,
  gateway: readonly CodeFile[],
  shipped: readonly ShippedEdgeLimit[],
  report: Report<'edgeCostNotCounted' | 'edgeNumbersDiffer'>,
): void {
  const cost = rule.cost;
  if (cost && (cost.default !== 1 || (cost.byEndpoint ?? []).some((w) => w.cost !== 1))) {
    const weights = (cost.byEndpoint ?? []).map((w) => `${w.endpoint} = ${w.cost}`);
    report({
      messageId: 'edgeCostNotCounted',
      ruleId,
      data: {
        cost: weights.length > 0 ? `${cost.default} (${weights.join(', ')})` : String(cost.default),
        file: gateway[0]?.path ?? 'gateway/',
      },
    });
  }
  // a rule each node counts with K given ships each node's share, which the document states beside it
  const rate = rule.perNode?.rate ?? rule.rate;
  if (!rate || !(rate.requests > 0) || !(rate.periodSeconds > 0)) return;
  const given = rule.perNode ? rule.perNode.burst : rule.burst;
  const burst = typeof given === 'number' && given > 0 ? given : null;
  for (const s of shipped.filter((x) => x.ruleId === ruleId)) {
    // an API Gateway method's bucket counts the rule's full rate: a hand-lowered one agrees, one above it does not
    const shippedRps = s.requests / s.periodSeconds;
    const statedRps = rate.requests / rate.periodSeconds;
    const sameRate = s.window
      ? close(s.requests, rate.requests) && close(s.periodSeconds, rate.periodSeconds)
      : close(shippedRps, statedRps) || (s.atMost === true && shippedRps < statedRps);
    const sameBurst =
      s.burst === (s.burstFloor !== undefined ? (burst ?? s.burstFloor) : burst) ||
      (s.atMost === true && s.burst !== null && burst !== null && s.burst <= burst);
    if (!sameRate || !sameBurst) {
      report({ messageId: 'edgeNumbersDiffer', ruleId, data: { stated: statedText(rule), file: s.file, shipped: s.text } });
      return;
    }
  }
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
      edgeCostNotCounted:
        'The rule runs at the edge with cost {{cost}}, but {{file}} counts requests, not cost: each call passes as one. Give the endpoints that cost more an edge rule of their own at the rate divided by their cost, or enforce the rule in the middleware.',
      edgeNumbersDiffer: 'The document states {{stated}} for the rule, but {{file}} enforces {{shipped}}.',
      edgeScopeDiffers: 'The document states {{stated}}, but {{file}} {{shipped}}.',
      middlewareDataDiffers:
        '{{file}} holds {{path}} = {{shipped}}, where this design gives {{stated}}: the middleware enforces the file, so generate it again (or change the answers, not the file).',
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
    let shipped: ShippedEdgeLimit[] = [];
    let scope: ShippedScopeMismatch[] = [];
    try {
      shipped = gateway.length > 0 ? shippedEdgeLimits(design, gateway) : [];
      scope = gateway.length > 0 && design.scope?.gateway !== 'none' ? shippedEdgeScope(design, gateway) : [];
    } catch {
      // a design too malformed to name its zones: the checks above report what it lacks
    }
    // which endpoints a gateway file limits is what the document says (an AWS usage plan's throttles)
    for (const m of scope) {
      report({
        messageId: 'edgeScopeDiffers',
        ...(m.ruleId ? { ruleId: m.ruleId } : {}),
        data: { stated: m.stated, file: m.file, shipped: m.shipped },
      });
    }
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
        else edgeAgrees(rule, ruleId, gateway, shipped, report);
      } else if (!middleware.has(ruleId)) {
        report({ messageId: 'notShipped', ruleId, data: { layer: 'middleware', file: DESIGN_DATA_FILE, what: 'rule entry for it' } });
      }
    }
    // every value of the shipped DESIGN as this design gives it: a hand-edited limit, route, key or
    // fail mode in middleware/design.ts is what the middleware enforces
    if (data !== undefined) {
      let expected: unknown;
      try {
        expected = designData(compileDesign(design as Design));
      } catch {
        // a design too malformed to compile: the checks above report what it lacks
      }
      if (expected !== undefined) {
        for (const d of dataDifferences(expected, data, 'DESIGN', MAX_DATA_DIFFERENCES)) {
          const rule = /^DESIGN\.rules\[(\d+)\]/.exec(d.path);
          const id = rule ? (data.rules[Number(rule[1])] as { id?: unknown } | undefined)?.id : undefined;
          report({
            messageId: 'middlewareDataDiffers',
            ...(typeof id === 'string' ? { ruleId: id } : {}),
            data: { file: DESIGN_DATA_FILE, path: d.path, shipped: d.shipped, stated: d.stated },
          });
        }
      }
    }
  },
});

/** At most this many differences of the shipped DESIGN are reported (the first ones, in file order). */
const MAX_DATA_DIFFERENCES = 5;

/** A value as the finding quotes it: JSON, cut short. */
function quoted(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Where two plain-data values differ (path, shipped, stated), depth first, at most `max`. */
function dataDifferences(
  stated: unknown,
  shipped: unknown,
  path: string,
  max: number,
  out: { path: string; shipped: string; stated: string }[] = [],
): { path: string; shipped: string; stated: string }[] {
  if (out.length >= max) return out;
  const bothArrays = Array.isArray(stated) && Array.isArray(shipped);
  const bothObjects =
    !bothArrays &&
    stated !== null &&
    shipped !== null &&
    typeof stated === 'object' &&
    typeof shipped === 'object' &&
    !Array.isArray(stated) &&
    !Array.isArray(shipped);
  if (bothArrays) {
    const a = stated as unknown[];
    const b = shipped as unknown[];
    if (a.length !== b.length) out.push({ path: `${path}.length`, shipped: String(b.length), stated: String(a.length) });
    for (let i = 0; i < Math.min(a.length, b.length) && out.length < max; i++) dataDifferences(a[i], b[i], `${path}[${i}]`, max, out);
  } else if (bothObjects) {
    const a = stated as Record<string, unknown>;
    const b = shipped as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (out.length >= max) break;
      dataDifferences(a[key], b[key], `${path}.${key}`, max, out);
    }
  } else if (!Object.is(stated, shipped)) {
    out.push({ path, shipped: quoted(shipped), stated: quoted(stated) });
  }
  return out;
}

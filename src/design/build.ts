/**
 * The design builder: a pure function from validated Answers (and a date) to a Design.
 * No clock, no file system, no terminal: the date is an input.
 */
import { BURST_SECONDS, resolveAnswers } from '../answers/defaults.js';
import type { Answers } from '../answers/schema.js';
import { TOOL_VERSION } from '../version.js';
import { buildAlgorithms } from './algorithms.js';
import { buildContract } from './contract.js';
import { buildMatrix } from './matrix.js';
import type { Design } from './model.js';
import { buildMonitoring } from './monitoring.js';
import { buildOutbound } from './outbound.js';
import { buildEnforcement } from './placement.js';
import { buildQuotas } from './quotas.js';
import { buildRollout } from './rollout.js';
import { buildScenarios } from './scenarios.js';

export interface BuildOptions {
  /** YYYY-MM-DD: the generation date shown in the document. */
  date: string;
}

/** The global protective ceiling in requests per second. */
export function ceilingOf(traffic: { capacityRps?: number; peakRps: number; headroom: number }): number {
  return Math.ceil(traffic.capacityRps ?? traffic.peakRps * traffic.headroom);
}

export function buildDesign(answers: Answers, options: BuildOptions): Design {
  const resolved = resolveAnswers(answers);
  const { scope } = resolved;
  const ceilingRps = ceilingOf(scope.traffic);
  const { rules, exempt } = buildMatrix(
    {
      scope,
      ceilingRps,
      ...(resolved.quotaReset ? { quotaReset: resolved.quotaReset } : {}),
      burstSeconds: BURST_SECONDS[scope.traffic.burstiness],
    },
    answers.rules ?? [],
  );
  const quotas = buildQuotas(scope, rules, resolved.quotaReset, resolved.billingSource, resolved.headers.convention);
  const outbound = buildOutbound(scope, rules);
  const enforcement = buildEnforcement(scope, rules, exempt);
  return {
    meta: { tool: 'rl-design', toolVersion: TOOL_VERSION, date: options.date, generic: resolved.generic },
    output: resolved.output,
    scope,
    assumptions: resolved.assumptions,
    rules,
    algorithms: buildAlgorithms(rules),
    enforcement,
    contract: buildContract(rules, resolved.headers.convention, resolved.headers.docsUrl, {
      ...(resolved.quotaReset ? { quotaReset: resolved.quotaReset } : {}),
      endpoints: scope.endpoints,
    }),
    ...(quotas ? { quotas } : {}),
    ...(outbound ? { outbound } : {}),
    monitoring: buildMonitoring(scope, rules),
    rollout: buildRollout(rules, resolved.shadowDays),
    scenarios: buildScenarios(rules, {
      topology: scope.topology,
      instances: scope.instances,
      ...(enforcement.hybrid ? { hybrid: enforcement.hybrid } : {}),
    }),
  };
}

/**
 * The registry of the nine testable constraints, and the functions the CLI uses to run
 * them and print their findings.
 */
import type { CodeFile } from '../codegen/types.js';
import type { Design } from '../design/model.js';
import atomicCheck from './atomic-check.js';
import authDualKey from './auth-dual-key.js';
import boundedKeys from './bounded-keys.js';
import completeRules from './complete-rules.js';
import { fillTemplate } from './define.js';
import failMode from './fail-mode.js';
import quotaBillingSeparation from './quota-billing-separation.js';
import responseContract from './response-contract.js';
import shadowRollout from './shadow-rollout.js';
import sharedOutbound from './shared-outbound.js';
import type { ConstraintModule, ConstraintResult, Finding } from './types.js';

export type { ConstraintResult } from './types.js';

/** The nine constraints, in their numbered order (meta.number 1..9). */
export const CONSTRAINTS: readonly ConstraintModule[] = [
  completeRules,
  atomicCheck,
  responseContract,
  authDualKey,
  failMode,
  boundedKeys,
  shadowRollout,
  quotaBillingSeparation,
  sharedOutbound,
];

/**
 * Runs every constraint against the design, in order; with the generated files, each
 * constraint that concerns an artefact also checks what ships.
 */
export function checkDesign(design: Design, files?: readonly CodeFile[]): ConstraintResult[] {
  return CONSTRAINTS.map(({ meta, applies, check, passNote }) => {
    const findings = check(design, files);
    const note = findings.length === 0 ? passNote(design) : undefined;
    return {
      id: meta.id,
      number: meta.number,
      title: meta.title,
      passed: findings.length === 0,
      applicable: applies(design),
      findings,
      messages: findings.map(formatFinding),
      ...(note !== undefined ? { note } : {}),
    };
  });
}

/** A finding as one line of text: `rule <id>: <message>`, or just the message. */
export function formatFinding(finding: Finding): string {
  const messages = CONSTRAINTS.find((c) => c.meta.id === finding.constraintId)?.meta.messages ?? {};
  const template = Object.hasOwn(messages, finding.messageId) ? messages[finding.messageId] : undefined;
  const text =
    template === undefined
      ? `${finding.constraintId}/${finding.messageId} ${JSON.stringify(finding.data)}`
      : fillTemplate(template, finding.data);
  return finding.ruleId === undefined ? text : `rule ${finding.ruleId}: ${text}`;
}

/** How many constraints passed (including those that do not apply) and how many failed. */
export function summarise(results: readonly ConstraintResult[]): { passed: number; failed: number } {
  const passed = results.filter((r) => r.passed).length;
  return { passed, failed: results.length - passed };
}

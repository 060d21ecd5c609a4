/**
 * defineConstraint: builds a ConstraintModule from its meta and a body that reports
 * findings. Message ids are checked against `meta.messages` at compile time.
 */
import type { Design } from '../design/model.js';
import type { ConstraintMeta, ConstraintModule, Finding, FindingData } from './types.js';

export interface Report<M extends string> {
  (finding: { messageId: M; data?: FindingData; ruleId?: string }): void;
}

export interface ConstraintDefinition<M extends string> {
  meta: ConstraintMeta<M>;
  /** Defaults to always applicable. */
  applies?: (design: Design) => boolean;
  check: (design: Design, report: Report<M>) => void;
}

export function defineConstraint<M extends string>(def: ConstraintDefinition<M>): ConstraintModule {
  const applies = def.applies ?? (() => true);
  return {
    meta: def.meta,
    applies,
    check(design) {
      const findings: Finding[] = [];
      if (!applies(design)) return findings;
      def.check(design, ({ messageId, data = {}, ruleId }) => {
        findings.push(
          ruleId === undefined
            ? { constraintId: def.meta.id, messageId, data }
            : { constraintId: def.meta.id, messageId, data, ruleId },
        );
      });
      return findings;
    },
  };
}

/** Fills `{{name}}` placeholders from data; unknown placeholders are left as they are. */
export function fillTemplate(template: string, data: FindingData): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) =>
    Object.hasOwn(data, name) ? String(data[name]) : whole,
  );
}

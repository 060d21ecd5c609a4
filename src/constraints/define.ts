/**
 * defineConstraint: builds a ConstraintModule from its meta and a body that reports
 * findings. Message ids are checked against `meta.messages` at compile time.
 */
import type { CodeFile } from '../codegen/types.js';
import type { Design } from '../design/model.js';
import type { ConstraintMeta, ConstraintModule, Finding, FindingData } from './types.js';

export interface Report<M extends string> {
  (finding: { messageId: M; data?: FindingData; ruleId?: string }): void;
}

interface ConstraintDefinition<M extends string> {
  meta: ConstraintMeta<M>;
  /** Defaults to always applicable. */
  applies?: (design: Design) => boolean;
  check: (design: Design, report: Report<M>) => void;
  /**
   * The same constraint checked on the generated files (when the caller has them): what ships
   * must do what the design says. Findings name the file in their data (`file`).
   */
  checkFiles?: (design: Design, files: readonly CodeFile[], report: Report<M>) => void;
  /** Why the design passes, where the title alone would not say; asked only when it applies. */
  passNote?: (design: Design) => string | undefined;
}

export function defineConstraint<M extends string>(def: ConstraintDefinition<M>): ConstraintModule {
  const applies = def.applies ?? (() => true);
  return {
    meta: def.meta,
    applies,
    checksFiles: def.checkFiles !== undefined,
    passNote: (design) => {
      try {
        return applies(design) ? def.passNote?.(design) : undefined;
      } catch {
        // a note never breaks a check; a design too broken to read has findings instead
        return undefined;
      }
    },
    check(design, files) {
      const findings: Finding[] = [];
      if (!applies(design)) return findings;
      const report: Report<M> = ({ messageId, data = {}, ruleId }) => {
        findings.push(
          ruleId === undefined ? { constraintId: def.meta.id, messageId, data } : { constraintId: def.meta.id, messageId, data, ruleId },
        );
      };
      def.check(design, report);
      if (files !== undefined && def.checkFiles !== undefined) {
        try {
          def.checkFiles(design, files, report);
        } catch {
          // a check never throws; a design too broken to read is reported by check()
        }
      }
      return findings;
    },
  };
}

/** Fills `{{name}}` placeholders from data; unknown placeholders are left as they are. */
export function fillTemplate(template: string, data: FindingData): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => (Object.hasOwn(data, name) ? String(data[name]) : whole));
}

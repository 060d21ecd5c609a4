/**
 * Shapes shared by the nine constraint checks (one module per constraint, as ESLint rules).
 * A finding is data, never free text: the message is rendered from the module's template.
 */
import type { CodeFile } from '../codegen/types.js';
import type { Design } from '../design/model.js';

type ConstraintNumber = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;

export type FindingData = Record<string, string | number>;

export interface Finding {
  constraintId: string;
  /** Key into the module's `meta.messages`. */
  messageId: string;
  /** Values for the `{{placeholders}}` of the message template. */
  data: FindingData;
  /** The matrix rule that breaks the constraint, when one does. */
  ruleId?: string;
}

export interface ConstraintMeta<M extends string = string> {
  /** Kebab id; the module lives in `src/constraints/<id>.ts`. */
  id: string;
  /** Position in the numbered list of constraints (1..9), as the document and validate show it. */
  number: ConstraintNumber;
  title: string;
  description: string;
  /** Message templates by id, with `{{placeholders}}` filled from `Finding.data`. */
  messages: Record<M, string>;
}

export interface ConstraintModule {
  meta: ConstraintMeta;
  /** False when the constraint does not concern this design (e.g. no plan quotas). */
  applies(design: Design): boolean;
  /** Whether the constraint also checks the generated files. */
  readonly checksFiles: boolean;
  /**
   * Why a design that gives no finding passes, where the title alone would not say (one
   * instance holds the only in-process outbound bucket): a short phrase, or undefined.
   */
  passNote(design: Design): string | undefined;
  /**
   * Never throws, even on a partial or malformed design. Empty when the design passes. With
   * `files` (the generated code), the constraint also checks that what ships does what the
   * design says.
   */
  check(design: Design, files?: readonly CodeFile[]): Finding[];
}

export interface ConstraintResult {
  id: string;
  number: ConstraintNumber;
  title: string;
  /** True when there are no findings (a constraint that does not apply passes). */
  passed: boolean;
  applicable: boolean;
  findings: Finding[];
  /** The findings rendered as text, in the same order. */
  messages: string[];
  /** Why it passes, when the module says (passNote) and nothing was found. */
  note?: string;
}

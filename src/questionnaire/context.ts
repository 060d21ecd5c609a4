/**
 * What every interview step is given, and the helpers that read the known layer (resolve.ts
 * decides each answer: command-line flag, then the previous answers file, then a detected
 * fact, then the default, then a prompt).
 *
 * The previous answers and the detected facts reach the steps as one layer, `known`
 * (built in previous.ts: a field's previous value wins over the fact detected for it),
 * with the source of every value, so each step offers what is known the same way
 * whatever it came from: as the default of its question, or in a "Keep ...?" confirm
 * listing the values and where they came from.
 */
import type { AnswersInput } from '../answers/schema.js';
import type { Fact } from './detect/index.js';
import type { InitFlags } from './flags.js';
import type { Prompter } from './prompt.js';
import { UNKNOWN, type Unknown } from './unknown.js';

// Re-exported for the steps. flags.ts imports them from unknown.ts: this module imports flags.ts.
export { UNKNOWN, type Unknown };

/** What is known before asking, already mapped onto the answers schema. */
export interface Known {
  answers: Partial<AnswersInput>;
  /** Where each value came from (by JSON path, e.g. 'stack.framework'), to name its file. */
  byField: Readonly<Record<string, Fact>>;
}

/** What the codebase answered: the known layer before the previous answers are laid over it. */
export type Detected = Known;

/** `Fact.detail` of a value taken from the previous answers file. */
export const PREVIOUS_DETAIL = 'previous answers';

export interface StepContext {
  prompt: Prompter;
  /** False with --yes or without a TTY: nothing is asked. */
  interactive: boolean;
  flags: InitFlags;
  /** The previous answers over the detected facts. */
  known: Known;
  /** Prints a line for the person (examples before a second ask, lists of detected endpoints...). */
  say: (line: string) => void;
}

/** The answers gathered so far, read-only for steps. */
export type Draft = Readonly<AnswersInput>;

/** What one step adds to the answers. `output` parts are merged, `unknown` lists concatenated. */
type Patch = Partial<AnswersInput>;

export interface Step {
  id: string;
  /** The question's number among the design questions (goals 1 ... outbound 7); the output steps have none. */
  item?: number;
  /**
   * The answers fields (JSON paths) this step answers. Their previous values are offered by
   * the step; every other field of a previous answers file is carried over as it was.
   */
  fields: readonly string[];
  run(ctx: StepContext, draft: Draft): Promise<Patch>;
}

/** The value at a JSON path ('stack.framework') of an object, or undefined. */
export function valueAt(obj: unknown, field: string): unknown {
  let cur: unknown = obj;
  for (const key of field.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The known value of a field (previous answer, else detected fact), if any. */
export function knownValue<T>(known: Known, field: string): T | undefined {
  return valueAt(known.answers, field) as T | undefined;
}

export function sourceOf(known: Known, field: string): string | undefined {
  return known.byField[field]?.source;
}

/** Whether the known value of a field comes from the previous answers file. */
export function fromPrevious(known: Known, field: string): boolean {
  return known.byField[field]?.detail === PREVIOUS_DETAIL;
}

/** Whether the previous answers recorded "don't know" (asked twice) for the goals or the stack. */
export function previousUnknown(known: Known, item: 'goals' | 'stack'): boolean {
  return fromPrevious(known, 'unknown') && (known.answers.unknown ?? []).includes(item);
}

export function mergePatch(draft: AnswersInput, patch: Patch): AnswersInput {
  const next: AnswersInput = { ...draft };
  for (const [key, value] of Object.entries(patch) as [keyof AnswersInput, unknown][]) {
    if (value === undefined) continue;
    if (key === 'output' || key === 'stack' || key === 'traffic' || key === 'quotas' || key === 'project') {
      (next as Record<string, unknown>)[key] = { ...((draft[key] as object | undefined) ?? {}), ...(value as object) };
    } else if (key === 'unknown') {
      next.unknown = [...new Set([...(draft.unknown ?? []), ...(value as NonNullable<AnswersInput['unknown']>)])];
    } else {
      (next as Record<string, unknown>)[key] = value;
    }
  }
  return next;
}

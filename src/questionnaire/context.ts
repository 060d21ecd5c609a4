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
export type Patch = Partial<AnswersInput>;

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

/** A known value as text: lists joined, an empty list as none, "don't know" spelled out. */
export function shownValue(value: unknown): string {
  if (value === UNKNOWN) return "don't know";
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(shownValue).join(', ');
  return String(value);
}

/** What a person types for "I don't know" at a text prompt ("unknown", "don't know", "not sure", "?"...). */
const UNKNOWN_WORDS = new Set([UNKNOWN, "don't know", 'dont know', 'do not know', 'not sure', 'unsure', 'no idea', 'n/a', '?']);

export function isUnknownText(text: string): boolean {
  return UNKNOWN_WORDS.has(
    text
      .trim()
      .toLowerCase()
      .replace(/\u2019/g, "'")
      .replace(/\s+/g, ' '),
  );
}

/** The known list when `chosen` holds the same items (a checkbox returns them in its own order), else `chosen`. */
export function keepOrder<T>(chosen: T[], known: readonly T[] | undefined): T[] {
  return known && chosen.length === known.length && chosen.every((c) => known.includes(c)) ? [...known] : chosen;
}

/** One known value offered in a "Keep ...?" confirm. */
export interface KnownItem {
  /** Whose source is named (a JSON path of `known.byField`). */
  field: string;
  /** What the value is, e.g. 'framework'; '' for none. */
  label: string;
  value: unknown;
  /** The value as text, when shownValue would not say it well. */
  shown?: string;
}

/**
 * 'framework express, store redis (package.json), topology horizontal (previous answers in
 * rate-limit.answers.json)': the values, each run of values from one source followed by it.
 */
export function describeKnown(known: Known, items: readonly KnownItem[]): string {
  const parts: string[] = [];
  let run: string[] = [];
  let runSource: string | undefined;
  const flush = (): void => {
    if (run.length > 0) parts.push(`${run.join(', ')}${runSource ? ` (${runSource})` : ''}`);
    run = [];
  };
  for (const item of items) {
    const source = sourceOf(known, item.field);
    if (run.length > 0 && source !== runSource) flush();
    runSource = source;
    const shown = item.shown ?? shownValue(item.value);
    run.push(item.label ? `${item.label} ${shown}` : shown);
  }
  flush();
  return parts.join(', ');
}

/**
 * The note a question carries when its default is a known value: ' (default: markdown, from
 * previous answers in rate-limit.answers.json)', or without `shown` (inputs show their default
 * themselves) ' (default from package.json)'. Empty when the value has no source.
 */
export function defaultNote(known: Known, field: string, shown?: string): string {
  const source = sourceOf(known, field);
  if (!source) return '';
  return shown === undefined ? ` (default from ${source})` : ` (default: ${shown}, from ${source})`;
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

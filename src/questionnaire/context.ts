/**
 * What every interview step is given, and the small helpers that make each answer
 * resolve the same way: command-line flag, then detected fact, then the non-interactive
 * default, then a prompt.
 */
import type { AnswersInput } from '../answers/schema.js';
import type { Fact } from './detect/index.js';
import type { InitFlags } from './flags.js';
import type { Prompter } from './prompt.js';

/** "Don't know": a choice at the prompt, and a value every choice flag accepts. */
export const UNKNOWN = 'unknown' as const;
export type Unknown = typeof UNKNOWN;

export const DONT_KNOW_NAME = "Don't know";

/** What the codebase answered, already mapped onto the answers schema. */
export interface Detected {
  answers: Partial<AnswersInput>;
  /** The winning fact per field, to name the file each value came from. */
  byField: Readonly<Record<string, Fact>>;
}

export interface StepContext {
  prompt: Prompter;
  /** False with --yes or without a TTY: nothing is asked. */
  interactive: boolean;
  flags: InitFlags;
  detected: Detected;
  /** Prints a line for the person (examples before a second ask, lists of detected endpoints...). */
  say: (line: string) => void;
}

/** The answers gathered so far, read-only for steps. */
export type Draft = Readonly<AnswersInput>;

/** What one step adds to the answers. `output` parts are merged, `unknown` lists concatenated. */
export type Patch = Partial<AnswersInput>;

export interface Step {
  id: string;
  /** Phase 1 item number, when the step is one (Phase 0 steps have none). */
  item?: number;
  run(ctx: StepContext, draft: Draft): Promise<Patch>;
}

/**
 * The partial-context protocol for items 1-2: ask; on "don't know" ask once more
 * (`attempt` 2 shows examples); never a third time.
 */
export async function askTwice<T>(ask: (attempt: 1 | 2) => Promise<T | Unknown>): Promise<T | Unknown> {
  const first = await ask(1);
  if (first !== UNKNOWN) return first;
  return ask(2);
}

/** 'store redis (package.json)' for a confirm message. */
export function describeDetected(detected: Detected, field: string, label: string, value: unknown): string {
  const source = detected.byField[field]?.source;
  const shown = Array.isArray(value) ? value.join(', ') : String(value);
  return `${label} ${shown}${source ? ` (${source})` : ''}`;
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

/** Drops undefined members so the answers file only holds what is known. */
export function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The previous answers file as a layer of the interview. When `init` runs where an answers
 * file already is (and it loads), every answer in it is the default of its question:
 *
 * - the fields the steps answer (each step lists them in `Step.fields`) are laid over the
 *   detected facts, field by field, to make the `known` layer the steps offer from, each
 *   value with its source: "previous answers in <file>";
 * - every other field (hand-written rules, headers, rollout, the project, traffic headroom,
 *   plan bursts...) is not asked about and is carried over as it was.
 *
 * So the order is: flag, previous answer, detected fact, default.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Answers, AnswersInput } from '../answers/schema.js';
import { PREVIOUS_DETAIL, valueAt, type Detected, type Known, type Step } from './context.js';
import type { Fact } from './detect/index.js';

/** How a previous answer's source is named wherever a value's source is shown. */
function previousSource(file: string): string {
  return `previous answers in ${file}`;
}

/** Every field some step answers, once each, in step order. */
export function stepFields(steps: readonly Step[]): string[] {
  return [...new Set(steps.flatMap((s) => s.fields))];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function setAt(obj: Obj, field: string, value: unknown): void {
  const keys = field.split('.');
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    cur[key] = isObj(next) ? { ...next } : {};
    cur = cur[key] as Obj;
  }
  cur[keys[keys.length - 1] as string] = value;
}

function deleteAt(obj: Obj, field: string): void {
  const keys = field.split('.');
  let cur: unknown = obj;
  for (const key of keys.slice(0, -1)) {
    if (!isObj(cur)) return;
    cur = cur[key];
  }
  if (isObj(cur)) delete cur[keys[keys.length - 1] as string];
}

/** Removes objects left empty (at any depth), so a carried-over `failure: {}` is not written. */
function pruneEmpty(obj: Obj): Obj {
  for (const [key, value] of Object.entries(obj)) {
    if (isObj(value)) {
      pruneEmpty(value);
      if (Object.keys(value).length === 0) delete obj[key];
    }
  }
  return obj;
}

/** The known layer: each field's previous value over the fact detected for it. */
export function withPrevious(detected: Detected, previous: Answers, file: string, fields: readonly string[]): Known {
  const answers = structuredClone(detected.answers) as Obj;
  const byField: Record<string, Fact> = { ...detected.byField };
  for (const field of fields) {
    const value = valueAt(previous, field);
    if (value === undefined) continue;
    setAt(answers, field, structuredClone(value));
    byField[field] = { field, value, source: previousSource(file), detail: PREVIOUS_DETAIL };
  }
  return { answers: answers as Partial<AnswersInput>, byField };
}

/** The previous answers without the fields the steps answer: what the interview starts from. */
export function carriedOver(previous: Answers, fields: readonly string[]): AnswersInput {
  const copy = structuredClone(previous) as Obj;
  for (const field of fields) deleteAt(copy, field);
  return pruneEmpty(copy) as AnswersInput;
}

/**
 * The answers fields whose values differ ('stack.instances', 'plans'), objects compared member by
 * member, lists as a whole, in the order of `after`. `$schema` is not an answer and is not compared.
 */
export function changedFields(before: Answers, after: Answers): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (isObj(a) && isObj(b)) {
      for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
        if (at === '' && key === '$schema') continue;
        walk(a[key], b[key], at ? `${at}.${key}` : key);
      }
    } else if (!isDeepStrictEqual(a, b)) {
      out.push(at);
    }
  };
  // Compared as written: a member set to undefined is no member.
  walk(JSON.parse(JSON.stringify(before)), JSON.parse(JSON.stringify(after)), '');
  return out;
}

/**
 * A Prompter that answers from a script, for unit tests of the interview steps.
 *
 * Each entry names the kind of question and a piece of its message, so a test also pins
 * the order of the questions. Inputs and checkboxes run the step's validator on the
 * scripted answer like the terminal would: a rejected answer records the message and the
 * next entry (for the same question) is taken as the retyped answer.
 */
import type { CheckboxQuestion, ConfirmQuestion, InputQuestion, Prompter, SelectQuestion } from '../../../src/questionnaire/prompt.js';

export const DEFAULT = Symbol('default');

export type Entry =
  | { select: string | RegExp; answer: unknown }
  | { checkbox: string | RegExp; answer: unknown[] | typeof DEFAULT }
  | { input: string | RegExp; answer: string | typeof DEFAULT }
  | { confirm: string | RegExp; answer: boolean | typeof DEFAULT };

export interface Asked {
  kind: 'select' | 'checkbox' | 'input' | 'confirm';
  message: string;
  default?: unknown;
  choices?: unknown[];
}

export interface ScriptedPrompter extends Prompter {
  asked: Asked[];
  /** Validation messages shown, in order. */
  rejected: string[];
  /** Entries not used yet. */
  remaining(): Entry[];
}

function matches(message: string, pattern: string | RegExp): boolean {
  return typeof pattern === 'string' ? message.includes(pattern) : pattern.test(message);
}

export function scripted(script: Entry[]): ScriptedPrompter {
  const queue = [...script];
  const asked: Asked[] = [];
  const rejected: string[] = [];

  function next(kind: Asked['kind'], message: string): Entry {
    const entry = queue.shift();
    if (!entry) throw new Error(`unscripted ${kind} question: "${message}"`);
    const pattern = (entry as Record<string, unknown>)[kind] as string | RegExp | undefined;
    if (pattern === undefined) throw new Error(`expected ${Object.keys(entry)[0]} but a ${kind} was asked: "${message}"`);
    if (!matches(message, pattern)) throw new Error(`expected a ${kind} matching ${String(pattern)} but got "${message}"`);
    return entry;
  }

  return {
    asked,
    rejected,
    remaining: () => [...queue],
    async select<T>(q: SelectQuestion<T>) {
      asked.push({ kind: 'select', message: q.message, default: q.default, choices: q.choices.map((c) => c.value) });
      const e = next('select', q.message) as { answer: unknown };
      const answer = e.answer === DEFAULT ? (q.default ?? q.choices[0]?.value) : e.answer;
      if (!q.choices.some((c) => c.value === answer)) throw new Error(`"${String(answer)}" is not a choice of "${q.message}"`);
      return answer as T;
    },
    async checkbox<T>(q: CheckboxQuestion<T>) {
      for (;;) {
        asked.push({
          kind: 'checkbox',
          message: q.message,
          choices: q.choices.map((c) => c.value),
          default: q.choices.filter((c) => c.checked).map((c) => c.value),
        });
        const e = next('checkbox', q.message) as { answer: T[] | typeof DEFAULT };
        // DEFAULT: Enter on the pre-picked choices, returned in the order of the list.
        const answer = e.answer === DEFAULT ? q.choices.filter((c) => c.checked).map((c) => c.value) : e.answer;
        for (const v of answer)
          if (!q.choices.some((c) => c.value === v)) throw new Error(`"${String(v)}" is not a choice of "${q.message}"`);
        const verdict = q.validate ? q.validate(answer) : true;
        if (verdict === true) return answer;
        rejected.push(verdict);
      }
    },
    async input(q: InputQuestion) {
      for (;;) {
        asked.push({ kind: 'input', message: q.message, default: q.default });
        const e = next('input', q.message) as { answer: string | typeof DEFAULT };
        const typed = e.answer === DEFAULT ? '' : e.answer.trim();
        const value = typed === '' && q.default !== undefined ? q.default : typed;
        const verdict = q.validate ? q.validate(value) : true;
        if (verdict === true) return value;
        rejected.push(verdict);
      }
    },
    async confirm(q: ConfirmQuestion) {
      asked.push({ kind: 'confirm', message: q.message, default: q.default });
      const e = next('confirm', q.message) as { answer: boolean | typeof DEFAULT };
      return e.answer === DEFAULT ? (q.default ?? false) : e.answer;
    },
  };
}

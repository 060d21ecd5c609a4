/** Builds a StepContext for unit tests: scripted prompts, captured output, no terminal. */
import type { AnswersInput } from '../../../src/answers/schema.js';
import type { Detected, StepContext } from '../../../src/questionnaire/context.js';
import type { Fact } from '../../../src/questionnaire/detect/index.js';
import { parseInitFlags, type InitRawOptions } from '../../../src/questionnaire/flags.js';
import { refusingPrompter } from '../../../src/questionnaire/prompt.js';
import { scripted, type Entry, type ScriptedPrompter } from './scripted.js';

export interface TestContext {
  ctx: StepContext;
  prompt: ScriptedPrompter;
  said: string[];
}

export function detectedOf(answers: Partial<AnswersInput> = {}, sources: Record<string, string> = {}): Detected {
  const byField: Record<string, Fact> = {};
  for (const [field, source] of Object.entries(sources)) byField[field] = { field, value: null, source, detail: 'test' };
  return { answers, byField };
}

export function stepContext(options: { script?: Entry[]; flags?: InitRawOptions; detected?: Detected; interactive?: boolean } = {}): TestContext {
  const prompt = scripted(options.script ?? []);
  const said: string[] = [];
  const interactive = options.interactive ?? true;
  return {
    prompt,
    said,
    ctx: {
      prompt: interactive ? prompt : refusingPrompter(),
      interactive,
      flags: parseInitFlags(options.flags ?? {}),
      detected: options.detected ?? detectedOf(),
      say: (line) => said.push(line),
    },
  };
}

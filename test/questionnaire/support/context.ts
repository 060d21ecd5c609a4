/** Builds a StepContext for unit tests: scripted prompts, captured output, no terminal. */
import { Answers, type AnswersInput } from '../../../src/answers/schema.js';
import type { Detected, StepContext } from '../../../src/questionnaire/context.js';
import type { Fact } from '../../../src/questionnaire/detect/index.js';
import { parseInitFlags, type InitRawOptions } from '../../../src/questionnaire/flags.js';
import { stepFields, withPrevious } from '../../../src/questionnaire/previous.js';
import { refusingPrompter } from '../../../src/questionnaire/prompt.js';
import { STEPS } from '../../../src/questionnaire/steps/index.js';
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

export const PREVIOUS_FILE = 'rate-limit.answers.json';

export function stepContext(
  options: { script?: Entry[]; flags?: InitRawOptions; detected?: Detected; previous?: AnswersInput; interactive?: boolean } = {},
): TestContext {
  const prompt = scripted(options.script ?? []);
  const said: string[] = [];
  const interactive = options.interactive ?? true;
  const detected = options.detected ?? detectedOf();
  return {
    prompt,
    said,
    ctx: {
      prompt: interactive ? prompt : refusingPrompter(),
      interactive,
      flags: parseInitFlags(options.flags ?? {}),
      known: options.previous ? withPrevious(detected, Answers.parse(options.previous), PREVIOUS_FILE, stepFields(STEPS)) : detected,
      say: (line) => said.push(line),
    },
  };
}

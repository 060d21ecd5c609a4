/**
 * Runs the interview: reports what the codebase answered, then each step in order, and
 * assembles the answers. No file system, no terminal of its own: detection results, the
 * prompt adapter and the output function come in.
 */
import { Answers, SCHEMA_URL, type AnswersInput } from '../answers/schema.js';
import { mergePatch, type Detected, type Step, type StepContext } from './context.js';
import { factsToAnswers, formatWarning, type ProjectDetection } from './detect/index.js';
import type { InitFlags } from './flags.js';
import type { Prompter } from './prompt.js';
import { STEPS } from './steps/index.js';

export function detectedFrom(detection: ProjectDetection): Detected {
  return { answers: factsToAnswers(detection.facts), byField: detection.byField };
}

/** What is printed before the first question: every fact with the file it came from. */
export function detectionReport(detection: ProjectDetection, interactive: boolean): string[] {
  const lines: string[] = [];
  if (detection.summary.length === 0) {
    lines.push('Looked at this folder first: no package.json, OpenAPI file, nginx, Envoy or Kong configuration found.');
  } else {
    lines.push('Looked at this folder first. Found:');
    for (const line of detection.summary) lines.push(`  ${line}`);
    lines.push(
      interactive
        ? 'These are offered as answers below; confirm or change them.'
        : 'These are used as answers (a flag such as --framework or --store overrides one).',
    );
  }
  for (const w of detection.warnings) lines.push(`  ${formatWarning(w)}`);
  return lines;
}

export interface InterviewOptions {
  prompt: Prompter;
  interactive: boolean;
  flags: InitFlags;
  detected: Detected;
  say: (line: string) => void;
  steps?: readonly Step[];
}

/** Every step in order; each sees the answers gathered before it. */
export async function runInterview(options: InterviewOptions): Promise<AnswersInput> {
  const ctx: StepContext = {
    prompt: options.prompt,
    interactive: options.interactive,
    flags: options.flags,
    detected: options.detected,
    say: options.say,
  };
  let draft: AnswersInput = {};
  for (const step of options.steps ?? STEPS) {
    draft = mergePatch(draft, await step.run(ctx, draft));
  }
  return draft;
}

/** The answers as written to disk: `$schema` first, validated by the schema (a failure is a bug). */
export function finishAnswers(draft: AnswersInput, projectName?: string): Answers {
  const { project, $schema: _ignored, ...rest } = draft;
  const named = projectName ? { ...project, name: projectName } : project;
  return Answers.parse({ $schema: SCHEMA_URL, ...(named ? { project: named } : {}), ...rest });
}

export function answersText(answers: Answers): string {
  return `${JSON.stringify(answers, null, 2)}\n`;
}

/**
 * Runs the interview: reports what the codebase answered, then each step in order, and
 * assembles the answers. No file system, no terminal of its own: detection results, the
 * previous answers, the prompt adapter and the output function come in.
 */
import path from 'node:path';
import { Answers, SCHEMA_URL, type AnswersInput } from '../answers/schema.js';
import { mergePatch, type Detected, type Step, type StepContext } from './context.js';
import { factsToAnswers, formatWarning, type ProjectDetection } from './detect/index.js';
import type { InitFlags } from './flags.js';
import { carriedOver, stepFields, withPrevious } from './previous.js';
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

/** What is printed, after the detection report, when a previous answers file was read. */
export function previousReport(file: string, interactive: boolean): string[] {
  return [
    interactive
      ? `Read the previous answers in ${file}: each question offers its previous answer as the default (Enter keeps it); detected facts only fill what they leave open.`
      : `Read the previous answers in ${file}: every one is kept unless a flag changes it; detected facts only fill what they leave open.`,
  ];
}

/** An answers file that loaded: its answers, and its path as shown to the person. */
export interface PreviousAnswers {
  answers: Answers;
  file: string;
}

interface InterviewOptions {
  prompt: Prompter;
  interactive: boolean;
  flags: InitFlags;
  detected: Detected;
  /** The answers file found where the answers go: its answers are the defaults. */
  previous?: PreviousAnswers;
  say: (line: string) => void;
  steps?: readonly Step[];
}

/**
 * Every step in order; each sees the answers gathered before it. With previous answers, the
 * steps offer them (over the detected facts) and the interview starts from the part of them
 * no step asks about, so nothing in the file is lost.
 */
export async function runInterview(options: InterviewOptions): Promise<AnswersInput> {
  const steps = options.steps ?? STEPS;
  const fields = stepFields(steps);
  const { previous } = options;
  const ctx: StepContext = {
    prompt: options.prompt,
    interactive: options.interactive,
    flags: options.flags,
    known: previous ? withPrevious(options.detected, previous.answers, previous.file, fields) : options.detected,
    say: options.say,
  };
  let draft: AnswersInput = previous ? carriedOver(previous.answers, fields) : {};
  for (const step of steps) {
    draft = mergePatch(draft, await step.run(ctx, draft));
  }
  return draft;
}

/** Where an installed rl-design's schema is, from the project's root: `npm install` of the package or its tarball puts it there. */
const LOCAL_SCHEMA_PATH = 'node_modules/rl-design/schemas/answers.schema.json';

/**
 * The `$schema` of a new answers file: the installed package's schema, relative to the
 * answers file (`./node_modules/...` beside it at the project root, `../node_modules/...`
 * one folder down), so an editor finds it without the package being published anywhere.
 */
export function schemaRefFor(projectRoot: string, answersFile: string): string {
  const rel = path
    .relative(path.dirname(path.resolve(projectRoot, answersFile)), path.join(path.resolve(projectRoot), LOCAL_SCHEMA_PATH))
    .split(path.sep)
    .join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * The answers as written to disk: `$schema` first (the one a previous file had, else
 * `schemaRef`, else the published one), validated by the schema (a failure is a bug).
 */
export function finishAnswers(draft: AnswersInput, projectName?: string, schemaRef?: string): Answers {
  const { project, $schema, ...rest } = draft;
  const named = projectName ? { ...project, name: projectName } : project;
  return Answers.parse({ $schema: $schema ?? schemaRef ?? SCHEMA_URL, ...(named ? { project: named } : {}), ...rest });
}

export function answersText(answers: Answers): string {
  return `${JSON.stringify(answers, null, 2)}\n`;
}

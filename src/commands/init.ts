/**
 * `rl-design init`: inspect the project, run the interview, then write the answers file
 * and the design document (through the generate code path) and print a short summary.
 *
 * An answers file already there is read first: when it loads, its answers are the
 * interview's defaults (flag > previous answer > detected fact > default), everything in
 * it that no question asks about is kept, and it is rewritten only if an answer changed.
 * One that does not load (not JSON, or not valid answers) is never replaced silently: init
 * stops (exit 2, nothing written) unless --force, which starts from scratch and replaces it.
 *
 * Nothing is written until every question has been answered, so Ctrl-C at any prompt
 * (or between prompts) leaves no file behind and exits 130. A file that changed on disk
 * during the interview is only replaced after a yes at the prompt, or with --force.
 */
import path from 'node:path';
import { displayPath, expandHome, isInside } from '../io/safe-fs.js';
import { readTextFile, type PlannedFile } from '../io/write.js';
import type { Answers as AnswersT } from '../answers/schema.js';
import type { ConstraintResult } from '../constraints/index.js';
import type { Design } from '../design/model.js';
import { nodeProjectFs } from '../io/project-fs.js';
import { parseAnswers } from '../answers/load.js';
import { formatMessage, UserError } from '../messages.js';
import { detectProject, projectName, withDetectedOpenApi, type ProjectFs } from '../questionnaire/detect/index.js';
import { parseInitFlags, type InitRawOptions } from '../questionnaire/flags.js';
import {
  answersText,
  detectedFrom,
  detectionReport,
  finishAnswers,
  previousReport,
  runInterview,
  schemaRefFor,
  type PreviousAnswers,
} from '../questionnaire/interview.js';
import { changedFields } from '../questionnaire/previous.js';
import { inquirerPrompter, PromptCancelled, refusingPrompter, type Prompter } from '../questionnaire/prompt.js';
import { codeFiles, documentFiles, summaryLines, type SummaryFile } from './init-summary.js';
import { wrapLine } from '../questionnaire/wrap.js';
import type { CommandContext } from './context.js';
import { generateFiles } from './generate.js';
import { validDate } from './load-design.js';

const DEFAULT_ANSWERS_FILE = 'rate-limit.answers.json';
const EXIT_CANCELLED = 130;

/** The terminal side of init, injected so tests can run it without one. */
export interface InitIo {
  /** Whether standard input is a terminal (process.stdin.isTTY). */
  stdinIsTTY: boolean;
  /** The prompt adapter for interactive runs. */
  prompter: () => Prompter;
  /** Routes Ctrl-C outside a prompt (SIGINT) to `handler`; returns the function that stops it. */
  onInterrupt: (handler: () => void) => () => void;
  /** Ends the process (only used on SIGINT between prompts). */
  exit: (code: number) => never;
  /** The project folder the detectors read. */
  projectFs: (root: string) => ProjectFs;
  /** Width of the terminal standard output goes to; unset when it is not a terminal (nothing is wrapped). */
  columns?: number;
}

function nodeInitIo(): InitIo {
  return {
    stdinIsTTY: process.stdin.isTTY === true,
    prompter: () => inquirerPrompter(),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => {
        process.off('SIGINT', handler);
      };
    },
    exit: (code) => process.exit(code),
    projectFs: (root) => nodeProjectFs(root),
    ...(process.stdout.isTTY && process.stdout.columns > 0 ? { columns: process.stdout.columns } : {}),
  };
}

type OutputPaths = { output?: { path?: string | undefined; codeDir?: string | undefined } | undefined };

/**
 * The answers with output.path and output.codeDir read from `from` and written relative to
 * `to`. The interview takes paths relative to the current folder, as every other command-line
 * path; the answers file keeps them relative to its own folder, as generate reads them. An
 * absolute path, one in the home folder (~) and `none` stay as they are; a trailing slash (a
 * folder) is kept. Where `keep` names the same place, its spelling is kept.
 */
function movePaths<A extends OutputPaths>(answers: A, from: string, to: string, keep?: OutputPaths): A {
  if (from === to || answers.output === undefined) return answers;
  const output = { ...answers.output };
  for (const field of ['path', 'codeDir'] as const) {
    const value = output[field];
    if (value === undefined || value === 'none' || path.isAbsolute(value) || /^~(?:[\\/]|$)/.test(value)) continue;
    const folder = /[\\/]$/.test(value);
    const rel = (path.relative(to, path.resolve(from, value)) || '.').split(path.sep).join('/');
    const moved = folder && !rel.endsWith('/') ? `${rel}/` : rel;
    const old = keep?.output?.[field];
    const same = old !== undefined && path.resolve(to, old) === path.resolve(to, moved) && /[\\/]$/.test(old) === /[\\/]$/.test(moved);
    output[field] = same ? old : moved;
  }
  return { ...answers, output };
}

async function existingText(file: string, shown: string): Promise<string | undefined> {
  try {
    return await readTextFile(file, 'answersNotFound');
  } catch (e) {
    if (e instanceof UserError && e.messageId === 'answersNotFound') return undefined;
    if (e instanceof UserError && e.messageId === 'answersUnreadable' && e.data.reason === 'it is a folder')
      throw new UserError('answersPathIsDirectory', { file: shown });
    if (e instanceof UserError) throw new UserError(e.messageId, { ...e.data, file: shown });
    throw e;
  }
}

/** Runs generate's code path on the written answers: the document, and the code when a code folder is set. */
async function generateDocument(
  ctx: CommandContext,
  answersFile: string,
  opts: { force: boolean; date?: string; out?: string; codeDir?: string; format?: string; answersText?: string; alsoWrite: PlannedFile[] },
): Promise<{ design: Design; checks: ConstraintResult[]; documents: string[]; code: string[]; codeDir?: string }> {
  const run = await generateFiles(ctx, {
    answers: answersFile,
    ...(opts.answersText !== undefined ? { answersText: opts.answersText } : {}),
    alsoWrite: opts.alsoWrite,
    force: opts.force,
    ...(opts.date ? { date: opts.date } : {}),
    ...(opts.out ? { out: opts.out } : {}),
    ...(opts.format ? { format: opts.format } : {}),
    ...(opts.codeDir ? { codeDir: opts.codeDir } : {}),
  });
  const rel = (p: string): string => displayPath(ctx.cwd, p);
  return {
    design: run.design,
    checks: run.plan.checks,
    documents: run.plan.documentPaths.map(rel),
    code: run.plan.codePaths.map(rel),
    ...(run.plan.codeDir ? { codeDir: rel(run.plan.codeDir) } : {}),
  };
}

export async function runInit(ctx: CommandContext, raw: InitRawOptions, io: InitIo = nodeInitIo()): Promise<number> {
  const flags = parseInitFlags(raw);
  if (raw.date !== undefined && !validDate(raw.date)) {
    throw new UserError('badOption', { option: '--date', reason: `"${raw.date}" is not a calendar date in the form YYYY-MM-DD` });
  }
  const interactive = !raw.yes && io.stdinIsTTY;
  // Lines longer than the terminal are wrapped at spaces, under their own text.
  const say = (line: string): void => {
    for (const l of wrapLine(line, io.columns))
      ctx.stdout(`${l}
`);
  };
  const answersPath = path.resolve(ctx.cwd, expandHome(raw.answersFile ?? DEFAULT_ANSWERS_FILE));
  const answersDir = path.dirname(answersPath);
  const shown = (p: string): string => displayPath(ctx.cwd, p);

  // Until the writing starts, Ctrl-C outside a prompt ends the run with nothing written.
  let stopTrap = io.onInterrupt(() => {
    ctx.stderr(`rl-design: ${formatMessage('initCancelled')}\n`);
    io.exit(EXIT_CANCELLED);
  });
  try {
    let answers: AnswersT;
    let text: string;
    let write: boolean;
    try {
      // The answers file first: its answers are the defaults, and one that does not load stops the run before any question.
      const existing = await existingText(answersPath, shown(answersPath));
      let previous: PreviousAnswers | undefined;
      let previousOutput: OutputPaths | undefined;
      if (existing !== undefined) {
        try {
          const read = parseAnswers(existing, shown(answersPath));
          previousOutput = read;
          // The interview offers a previous path as the user would type it: relative to the current folder.
          previous = { answers: movePaths(read, answersDir, ctx.cwd), file: shown(answersPath) };
        } catch (e) {
          if (!(e instanceof UserError)) throw e;
          if (!raw.force) {
            ctx.stderr(`rl-design: ${e.message}\nrl-design: ${formatMessage('initPreviousInvalid')}\n`);
            return e.exitCode;
          }
          say(e.message);
          say(`--force: starting from scratch; ${shown(answersPath)} will be replaced.`);
        }
      }

      if (!raw.yes && !io.stdinIsTTY) say('No terminal on standard input: using flags, detected facts and defaults, as with --yes.');
      const fs = io.projectFs(ctx.cwd);
      const detection = await detectProject(fs);
      for (const line of detectionReport(detection, interactive)) say(line);
      if (previous) for (const line of previousReport(previous.file, interactive)) say(line);
      if (interactive) say('');

      const prompt = interactive ? io.prompter() : refusingPrompter();
      const draft = await runInterview({
        prompt,
        interactive,
        flags,
        detected: detectedFrom(detection),
        ...(previous ? { previous } : {}),
        say,
      });
      answers = finishAnswers(
        draft,
        flags.name ?? previous?.answers.project?.name ?? (await projectName(fs)),
        schemaRefFor(ctx.cwd, answersPath),
      );
      answers = movePaths(answers, ctx.cwd, answersDir, previousOutput);
      // the API's OpenAPI document (no question asks for it): found on a first run; a previous file is kept as it is
      if (!previous) answers = withDetectedOpenApi(answers, detection.facts, ctx.cwd, answersPath);
      text = answersText(answers);

      const changed = previous ? changedFields(previous.answers, answers) : [];
      write = previous ? changed.length > 0 : existing !== text;

      // A file that changed on disk since it was read (or appeared) is not replaced without a yes or --force.
      const now = await existingText(answersPath, shown(answersPath));
      if (now !== existing && now !== undefined && now !== text && !raw.force) {
        if (!interactive) throw new UserError('answersFileExists', { file: shown(answersPath) });
        const replace = await prompt.confirm({
          message: `${shown(answersPath)} exists and differs from these answers. Replace it?`,
          default: false,
        });
        if (!replace) {
          say(`Kept ${shown(answersPath)} as it was; nothing was written.`);
          return 0;
        }
      }
      if (now !== existing) write = now !== text;
      else if (previous) {
        say(
          write
            ? `${shown(answersPath)}: changed ${changed.join(', ')}; every other answer kept.`
            : `${shown(answersPath)}: no answer changed; the file is left as it was.`,
        );
      }
    } catch (e) {
      if (e instanceof PromptCancelled) {
        ctx.stderr(`rl-design: ${formatMessage('initCancelled')}\n`);
        return EXIT_CANCELLED;
      }
      throw e;
    }

    // Writing: a Ctrl-C now waits for the (atomic, short) writes to finish.
    stopTrap();
    stopTrap = io.onInterrupt(() => {
      ctx.stderr('rl-design: finishing the files being written...\n');
    });
    // The answers file and the document are written in one all-or-nothing step.
    const answersFile: PlannedFile[] = write
      ? [
          {
            path: answersPath,
            content: text,
            root: path.dirname(answersPath),
            anchor: isInside(ctx.cwd, answersPath) ? ctx.cwd : path.dirname(answersPath),
            unmanaged: true,
          },
        ]
      : [];

    let doc: Awaited<ReturnType<typeof generateDocument>>;
    try {
      // Paths typed on this command line are the user's own choice, as they are for generate.
      doc = await generateDocument(ctx, answersPath, {
        // What generate reads: these answers when they are about to be written, else the file as it is.
        ...(write ? { answersText: text } : {}),
        alsoWrite: answersFile,
        force: raw.force ?? false,
        ...(raw.date ? { date: raw.date } : {}),
        ...(flags.out ? { out: flags.out, ...(answers.output?.format ? { format: answers.output.format } : {}) } : {}),
        ...(flags.codeDir ? { codeDir: flags.codeDir } : {}),
      });
    } catch (e) {
      if (e instanceof UserError) {
        ctx.stderr(`rl-design: ${formatMessage('initDocumentFailed', { reason: e.message })}\n`);
        return e.exitCode;
      }
      throw e;
    }
    const { design, checks } = doc;
    const files: SummaryFile[] = [
      { path: shown(answersPath), phrase: 'the answers: the source of truth; edit it and run `rl-design generate` again' },
      ...documentFiles(doc.documents, answers.output?.format === 'markdown' ? 'Markdown' : 'HTML'),
    ];
    const notes: string[] = [];
    if (doc.codeDir) files.push(...codeFiles(doc.codeDir, doc.code, design));
    for (const line of summaryLines(
      design,
      files,
      { passed: checks.filter((c) => c.passed).length, total: checks.length },
      notes,
      io.columns,
    ))
      say(line);
    return 0;
  } finally {
    stopTrap();
  }
}

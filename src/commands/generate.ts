/** `rl-design generate`: answers -> design -> document and enforcement code on disk. */
import { fleetRaisedWarning } from '../design/gateway-behaviour.js';
import { ceilingBelowPeakWarning, perSecond } from '../design/matrix.js';
import { inProcessQuotaWarning } from '../design/quotas.js';
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { checkDesign, CONSTRAINTS, type ConstraintResult } from '../constraints/index.js';
import type { Answers } from '../answers/schema.js';
import type { OpenApiInput } from '../codegen/index.js';
import type { Design } from '../design/model.js';
import { bundleSpec, folderSpecReader, SpecReadError } from '../io/openapi-source.js';
import { type Leftover, writeOutputs, type PlannedFile } from '../io/write.js';
import { displayPath, expandHome, isInside, refuseSystemPath } from '../io/safe-fs.js';
import { applyResults, loadResultsFor } from '../verify/results.js';
import { UserError } from '../messages.js';
import { drawBeautifulMermaid, startDrawingEarly } from '../render/diagrams/beautiful-job.js';
import { DIAGRAM_RENDERERS, diagramSources, type DiagramRendererName, type RawDiagramRenderer } from '../render/diagrams/index.js';
import { loadMermaidCli, MermaidCliFailedError, MermaidCliMissingError } from '../render/diagrams/mermaid-cli.js';
import { UnsafeSvgError } from '../render/diagrams/svg.js';
import { DeadLinkError } from '../render/errors.js';
import type { OutputFile, RenderInput } from '../render/types.js';
import type { CommandContext } from './context.js';
import type { SourceOptions } from './load-design.js';

interface GenerateOptions extends SourceOptions {
  format?: string;
  layout?: string;
  /** HTML diagrams: `beautiful-mermaid` (default, in-process) or `mermaid-cli` (optional peer dependency). */
  diagrams?: string;
  out?: string;
  codeDir?: string;
  force?: boolean;
  dryRun?: boolean;
  /** Remove files an earlier run for the same answers wrote and this run no longer generates. */
  prune?: boolean;
  /** Files written in the same all-or-nothing step as the document (init's answers file). */
  alsoWrite?: PlannedFile[];
  /** Also write the answers' OpenAPI document with the rate-limit overlay applied, and its Spectral ruleset (into the code folder). */
  openapiMerged?: boolean;
}

/**
 * The answers' OpenAPI document (openapi.path, relative to the answers file's folder), read
 * whole: the files its $refs name are bundled in. The document and every file it references
 * must be inside the answers file's folder or the current folder (the one that holds the
 * document), reached without a symbolic link, each at most 8 MB; references to URLs are refused.
 */
export async function loadOpenApi(
  ctx: CommandContext,
  answers: Answers,
  answersFile: string,
  merged = false,
): Promise<OpenApiInput | undefined> {
  const raw = answers.openapi?.path;
  if (raw === undefined) return undefined;
  const answersDir = path.dirname(answersFile);
  const abs = path.resolve(answersDir, raw);
  const fail = (reason: string): UserError =>
    new UserError('openapiUnreadable', { file: displayPath(ctx.cwd, answersFile), value: JSON.stringify(raw), reason });
  const folder = isInside(answersDir, abs) ? answersDir : isInside(ctx.cwd, abs) ? ctx.cwd : undefined;
  if (folder === undefined) {
    throw fail(
      `outside ${displayPath(ctx.cwd, answersDir)} and the current folder; an answers file may only name a document inside its own folder or the current one`,
    );
  }
  const entry = path.relative(folder, abs).split(path.sep).join('/');
  try {
    const { document, files } = await bundleSpec(entry, folderSpecReader(folder));
    if (typeof document.openapi !== 'string' || !/^3\./.test(document.openapi)) {
      throw fail('not an OpenAPI 3.x document (its top-level openapi field must be 3.0.x or 3.1.x; Swagger 2.0 is not supported)');
    }
    return { document, source: raw, ...(files.length > 1 ? { split: true } : {}), ...(merged ? { merged: true } : {}) };
  } catch (e) {
    if (e instanceof SpecReadError) throw fail(`${e.file === entry ? 'the document' : e.file} ${e.reason}`);
    throw e;
  }
}

const FORMATS = ['html', 'markdown', 'md'] as const;
const LAYOUTS = ['auto', 'single', 'folder'] as const;

/**
 * The diagram renderer for an HTML document. beautiful-mermaid's layout engine (the most
 * expensive step of a run) is loaded only when the document has a diagram that the
 * drawn-diagram cache does not hold. Like the renderers and the code generator below, the
 * HTML side is imported on first use, so a Markdown run never loads it and a document-only
 * run never loads the code generator.
 */
async function diagramRenderer(ctx: CommandContext, design: Design, name: DiagramRendererName): Promise<RawDiagramRenderer> {
  const sources = diagramSources(design).map((d) => d.source);
  try {
    if (name === 'mermaid-cli') return await loadMermaidCli(sources, { cwd: ctx.cwd, env: process.env });
    if (sources.length === 0) {
      return () => {
        throw new Error('rl-design: a diagram that the design does not list');
      };
    }
    return await drawBeautifulMermaid(sources);
  } catch (e) {
    if (e instanceof MermaidCliMissingError || e instanceof MermaidCliFailedError) {
      throw new UserError('badOption', { option: '--diagrams', reason: e.message.replace(/^--diagrams /, '') });
    }
    throw e;
  }
}

/** Renders the document in the chosen format; a dead link is bad input (exit 2), nothing written. */
async function renderDocument(
  ctx: CommandContext,
  input: RenderInput,
  options: { format: 'html' | 'markdown'; layout: 'auto' | 'single' | 'folder'; diagrams: DiagramRendererName },
): Promise<OutputFile[]> {
  try {
    if (options.format === 'html') {
      // The pages are converted while the diagrams are drawn (in a worker thread: see
      // render/diagrams/beautiful-job.ts); the SVGs go in last.
      const drawing = diagramRenderer(ctx, input.design, options.diagrams);
      drawing.catch(() => undefined); // awaited below; an error while drafting must not leave it unhandled
      const { draftHtml, finishHtml } = await import('../render/html/index.js');
      const draft = draftHtml(input, { layout: options.layout });
      return finishHtml(draft, await drawing);
    }
    const { renderMarkdown } = await import('../render/markdown/index.js');
    return renderMarkdown(input, { layout: options.layout });
  } catch (e) {
    if (e instanceof DeadLinkError) throw new UserError('deadLink', { detail: e.message });
    if (e instanceof UnsafeSvgError)
      throw new UserError('badOption', { option: '--diagrams', reason: e.message.replace(/^rl-design: /, '') });
    throw e;
  }
}

/** The format a document path names by its extension (.html or .md), if any. */
function formatOfPath(out: string | undefined): 'html' | 'markdown' | undefined {
  if (out === undefined || /[\\/]$/.test(out)) return undefined;
  if (/\.html$/.test(out)) return 'html';
  if (/\.md$/.test(out)) return 'markdown';
  return undefined;
}

/**
 * Where the document goes (a relative path read from `base`): a file for the single layout, a folder for the folder layout. A
 * path ending in the other format's extension is taken without it.
 */
function resolveTarget(base: string, out: string | undefined, layout: 'single' | 'folder', ext: string): { dir: string; single?: string } {
  const defaultBase = path.join('docs', 'rate-limit-design');
  const raw = out ?? defaultBase;
  // A path named for the other format (docs/design.md while writing HTML) takes this format's extension.
  const other = ext === '.html' ? '.md' : '.html';
  const resolved = path.resolve(base, raw);
  const abs = resolved.endsWith(other) && !/[\\/]$/.test(raw) ? resolved.slice(0, -other.length) : resolved;
  const trailing = /[\\/]$/.test(raw);
  const isDir = existsSync(abs) && statSync(abs).isDirectory();
  if (layout === 'folder') {
    return { dir: abs.endsWith(ext) ? abs.slice(0, -ext.length) : abs };
  }
  if (abs.endsWith(ext)) return { dir: path.dirname(abs), single: path.basename(abs) };
  if (trailing || isDir) return { dir: abs, single: `rate-limit-design${ext}` };
  return { dir: path.dirname(abs), single: `${path.basename(abs)}${ext}` };
}

/** `auto` becomes `single` when the document path ends in .html or .md: the user named a file. */
function singleFileLayout(layout: 'auto' | 'single' | 'folder', out: string | undefined): 'auto' | 'single' | 'folder' {
  return layout === 'auto' && out !== undefined && /\.(?:html?|md|markdown)$/i.test(out) ? 'single' : layout;
}

interface PlanOptions {
  format?: 'html' | 'markdown';
  layout?: 'auto' | 'single' | 'folder';
  diagrams?: DiagramRendererName;
  out?: string;
  codeDir?: string;
  /** The answers file the design came from: paths it names must stay inside its folder or the current one. */
  answersFile?: string;
  /** The API's OpenAPI document (loadOpenApi): the code folder gets its rate-limit overlay. */
  openapi?: OpenApiInput;
}

/**
 * The folder a relative output path is read from: the current folder for a path named on the
 * command line, the answers file's folder for one the answers name (as for openapi.path), so
 * the same answers write to the same place whatever folder generate runs in.
 */
function baseFor(ctx: CommandContext, source: 'cli' | 'answers', answersFile: string | undefined): string {
  return source === 'answers' && answersFile !== undefined ? path.dirname(answersFile) : ctx.cwd;
}

/**
 * Where one output folder may be written. A path named on the command line is the user's
 * choice; one from the answers file (which a repository ships) is read from the answers
 * file's folder and must stay inside it or the current folder. `anchor` is the trusted folder
 * below which no folder on the way may be a symbolic link.
 */
async function placeOutput(
  ctx: CommandContext,
  raw: string,
  source: 'cli' | 'answers',
  field: { name: string; option: string },
  answersFile: string | undefined,
): Promise<{ abs: string; anchorFor: (root: string) => string }> {
  const abs = path.resolve(baseFor(ctx, source, answersFile), expandHome(raw));
  const show = (p: string): string => displayPath(ctx.cwd, p);
  await refuseSystemPath(abs, show(abs));
  const answersDir = answersFile ? path.dirname(answersFile) : undefined;
  const inCwd = isInside(ctx.cwd, abs);
  const inAnswers = answersDir !== undefined && isInside(answersDir, abs);
  if (source === 'answers' && !inCwd && !inAnswers) {
    throw new UserError('outputOutsideProject', {
      field: field.name,
      file: answersFile ? show(answersFile) : 'the answers',
      value: JSON.stringify(raw),
      base: answersDir && answersDir !== ctx.cwd ? `${show(answersDir)} and the current folder` : 'the current folder',
      option: field.option,
    });
  }
  const anchorFor = (root: string): string => {
    if (isInside(ctx.cwd, root)) return ctx.cwd;
    if (answersDir !== undefined && isInside(answersDir, root)) return answersDir;
    // Elsewhere, a folder named on the command line is taken as the user named it (their home
    // may well be reached through a link); only what is below it is checked.
    let anchor = root;
    while (!existsSync(anchor) && path.dirname(anchor) !== anchor) anchor = path.dirname(anchor);
    return anchor;
  };
  return { abs, anchorFor };
}

/**
 * The code folder generate writes for these options (--code-dir, else output.codeDir of the
 * answers, read from the answers file's folder), placed as generate places it; undefined for none.
 */
export async function codeFolder(
  ctx: CommandContext,
  design: Design,
  opts: { codeDir?: string; answersFile?: string },
): Promise<string | undefined> {
  const raw = opts.codeDir ?? design.output.codeDir;
  if (!raw || raw === 'none') return undefined;
  const source = opts.codeDir !== undefined ? 'cli' : 'answers';
  return (await placeOutput(ctx, raw, source, { name: 'output.codeDir', option: '--code-dir' }, opts.answersFile)).abs;
}

/**
 * Whether two output folders would write into each other: the same folder, or one inside the
 * other where the outer one writes a file or folder of that name (`docs/` holding the
 * document with `docs/code/` for the code is fine; `--out X --code-dir X` is not).
 */
export function overlapping(a: { root: string; files: string[] }, b: { root: string; files: string[] }): boolean {
  if (a.root === b.root) return true;
  const claims = (outer: { root: string; files: string[] }, inner: string): boolean => {
    const first = path.relative(outer.root, inner).split(path.sep)[0];
    return outer.files.some((f) => path.relative(outer.root, f).split(path.sep)[0] === first);
  };
  if (isInside(a.root, b.root)) return claims(a, b.root);
  if (isInside(b.root, a.root)) return claims(b, a.root);
  return false;
}

interface OutputPlan {
  format: 'html' | 'markdown';
  layout: 'single' | 'folder';
  /** Document files, then code files (when a code directory is set). */
  planned: PlannedFile[];
  documentPaths: string[];
  codePaths: string[];
  codeDir?: string;
  /** The nine constraint checks of the design, as the document reports them. */
  checks: ConstraintResult[];
}

/**
 * Everything one run writes: the document (with the generated code embedded, the same
 * bytes as the code files) and, when a code directory is set, the code files. Shared by
 * generate, init and verify --write so they always produce the same output.
 */
export async function planOutputs(ctx: CommandContext, design: Design, opts: PlanOptions = {}): Promise<OutputPlan> {
  const format = opts.format ?? design.output.format;
  const out = opts.out ?? design.output.path;
  const ext = format === 'html' ? '.html' : '.md';
  // A document path that names a file (`docs/design.html`) is written as that one file.
  const layout = singleFileLayout(opts.layout ?? design.output.layout, out);
  const codeDirRaw = opts.codeDir ?? design.output.codeDir;
  const codePlace =
    codeDirRaw && codeDirRaw !== 'none'
      ? await placeOutput(
          ctx,
          codeDirRaw,
          opts.codeDir !== undefined ? 'cli' : 'answers',
          { name: 'output.codeDir', option: '--code-dir' },
          opts.answersFile,
        )
      : undefined;
  const codeDir = codePlace?.abs;
  const outRaw = opts.out ?? design.output.path;
  const outPlace =
    outRaw !== undefined
      ? await placeOutput(
          ctx,
          outRaw,
          opts.out !== undefined ? 'cli' : 'answers',
          { name: 'output.path', option: '--out' },
          opts.answersFile,
        )
      : undefined;
  // The code is embedded when it is written too: the document then holds the same bytes as the files.
  // The checks read the generated files too (what ships must do what the document says), so
  // the code is generated on every run; it is embedded and written only with a code folder.
  const generated = (await import('../codegen/index.js')).generateCode(design, opts.openapi ? { openapi: opts.openapi } : {});
  const code = codeDir ? generated : [];
  const checks = checkDesign(design, generated);
  // The code folder as the document's pages see it, for each layout the renderer may choose.
  const outExpanded = out !== undefined ? expandHome(out) : undefined;
  const outBase = baseFor(ctx, opts.out !== undefined ? 'cli' : 'answers', opts.answersFile);
  const codeHref = (layoutName: 'single' | 'folder', dir: string): string =>
    path
      .relative(resolveTarget(outBase, outExpanded, layoutName, ext).dir, dir)
      .split(path.sep)
      .join('/') || '.';
  const input = {
    design,
    checks,
    ...(code.length > 0 ? { codeFiles: code } : {}),
    ...(codeDir ? { codeHref: { single: codeHref('single', codeDir), folder: codeHref('folder', codeDir) } } : {}),
  };
  const files = await renderDocument(ctx, input, {
    format,
    layout,
    diagrams: opts.diagrams ?? 'beautiful-mermaid',
  });
  const chosen = files.filter((f) => f.path.endsWith(ext)).length > 1 ? 'folder' : 'single';
  const target = resolveTarget(outBase, outRaw !== undefined ? expandHome(outRaw) : undefined, chosen, ext);
  const docAnchor = outPlace ? outPlace.anchorFor(target.dir) : ctx.cwd;
  const documents: PlannedFile[] = files.map((f) => ({
    path: chosen === 'single' ? path.join(target.dir, target.single as string) : path.join(target.dir, ...f.path.split('/')),
    content: f.content,
    root: target.dir,
    anchor: docAnchor,
  }));
  const codeFiles: PlannedFile[] =
    codeDir && codePlace
      ? code.map((c) => ({
          path: path.join(codeDir, ...c.path.split('/')),
          content: c.content,
          root: codeDir,
          anchor: codePlace.anchorFor(codeDir),
        }))
      : [];
  if (codeDir) {
    const show = (p: string): string => displayPath(ctx.cwd, p);
    if (overlapping({ root: target.dir, files: documents.map((d) => d.path) }, { root: codeDir, files: codeFiles.map((c) => c.path) })) {
      throw new UserError('outputsOverlap', {
        doc: show(chosen === 'single' ? (documents[0]?.path ?? target.dir) : target.dir),
        code: show(codeDir),
      });
    }
  }
  return {
    format,
    layout: chosen,
    planned: [...documents, ...codeFiles],
    documentPaths: documents.map((d) => d.path),
    codePaths: codeFiles.map((c) => c.path),
    ...(codeDir ? { codeDir } : {}),
    checks,
  };
}

interface GenerateRun {
  design: Design;
  plan: OutputPlan;
  /** Absolute paths written or already up to date. */
  written: string[];
  unchanged: string[];
  /** Files an earlier run for the same answers wrote that this run does not (kept, each marked when edited since), and those removed by --prune. */
  leftover: Leftover[];
  removed: string[];
  checksFailed: string[];
}

/** generate without printing: validates options, builds, renders, writes. */
export async function generateFiles(ctx: CommandContext, opts: GenerateOptions): Promise<GenerateRun> {
  for (const [option, value] of [
    ['--out', opts.out],
    ['--code-dir', opts.codeDir],
  ] as const) {
    if (value !== undefined && value.trim() === '') throw new UserError('badOption', { option, reason: 'is empty; give a path' });
  }
  if (opts.format !== undefined && !(FORMATS as readonly string[]).includes(opts.format)) {
    throw new UserError('badOption', { option: '--format', reason: `"${opts.format}" is not a format; use html or markdown` });
  }
  if (opts.layout !== undefined && !(LAYOUTS as readonly string[]).includes(opts.layout)) {
    throw new UserError('badOption', { option: '--layout', reason: `"${opts.layout}" is not a layout; use auto, single or folder` });
  }
  if (opts.diagrams !== undefined && !(DIAGRAM_RENDERERS as readonly string[]).includes(opts.diagrams)) {
    throw new UserError('badOption', {
      option: '--diagrams',
      reason: `"${opts.diagrams}" is not a diagram renderer; use ${DIAGRAM_RENDERERS.join(' or ')}`,
    });
  }
  // Unless the flags rule HTML out, a first run's diagram worker starts now (see startDrawingEarly).
  const markdownOnly =
    opts.format === 'markdown' || opts.format === 'md' || (opts.format === undefined && formatOfPath(opts.out) === 'markdown');
  if (!markdownOnly && opts.diagrams !== 'mermaid-cli') startDrawingEarly();
  // Imported on use: the answers' schema is a large module.
  const { loadDesign } = await import('./load-design.js');
  const { design: built, file, answers } = await loadDesign(ctx, opts);
  const openapi = await loadOpenApi(ctx, answers, file, opts.openapiMerged === true);
  if (opts.openapiMerged && !openapi) {
    throw new UserError('badOption', {
      option: '--openapi-merged',
      reason: "needs the API's OpenAPI document: set openapi.path in the answers",
    });
  }
  // Results of an earlier `verify --write` on these exact answers appear in the test-scenario section.
  const results = opts.example ? undefined : await loadResultsFor(file, opts.answersText);
  const withResults = results ? applyResults(built, results) : built;
  // A built-in example's paths are illustrative: its files go where the flags say (or the defaults), not into the cwd's ratelimit/.
  // A built-in example is written as HTML, the default format, unless --format (or --out x.md) says otherwise.
  const design: Design = opts.example ? { ...withResults, output: { format: 'html', layout: withResults.output.layout } } : withResults;
  // The format: --format, else the extension of --out (`--out design.html` means HTML whatever
  // the answers say), else the answers' output.format.
  const format = opts.format ? (opts.format === 'md' ? 'markdown' : (opts.format as 'html' | 'markdown')) : formatOfPath(opts.out);
  const plan = await planOutputs(ctx, design, {
    ...(format ? { format } : {}),
    ...(opts.layout ? { layout: opts.layout as 'auto' | 'single' | 'folder' } : {}),
    ...(opts.diagrams ? { diagrams: opts.diagrams as DiagramRendererName } : {}),
    ...(opts.out ? { out: opts.out } : {}),
    ...(opts.codeDir ? { codeDir: opts.codeDir } : {}),
    ...(opts.example ? {} : { answersFile: file }),
    ...(openapi ? { openapi } : {}),
  });
  if (opts.openapiMerged && !plan.codeDir) {
    throw new UserError('badOption', {
      option: '--openapi-merged',
      reason: 'writes into the code folder: pass --code-dir DIR (or set output.codeDir)',
    });
  }
  const checksFailed = plan.checks.filter((c) => !c.passed).map((c) => `${c.number} ${c.id}`);
  if (opts.dryRun) return { design, plan, written: [], unchanged: [], leftover: [], removed: [], checksFailed };
  const rel = (p: string): string => displayPath(ctx.cwd, p);
  const result = await writeOutputs([...(opts.alsoWrite ?? []), ...plan.planned], {
    force: opts.force ?? false,
    display: rel,
    owner: { command: 'generate', source: opts.example ? `example:${opts.example}` : file },
    prune: opts.prune ?? false,
  });
  return { design, plan, ...result, checksFailed };
}

export async function runGenerate(ctx: CommandContext, opts: GenerateOptions): Promise<number> {
  const run = await generateFiles(ctx, opts);
  const rel = (p: string): string => displayPath(ctx.cwd, p);
  const { plan, design } = run;
  if (opts.dryRun) {
    for (const p of plan.planned) ctx.stdout(`would write ${rel(p.path)} (${Buffer.byteLength(p.content)} bytes)\n`);
    return 0;
  }
  ctx.stdout(
    `Design for ${design.scope.projectName}: ${design.rules.length} rules, ${plan.layout} ${plan.format === 'html' ? 'HTML' : 'Markdown'} document.\n`,
  );
  for (const p of plan.planned) {
    const state = run.unchanged.includes(p.path) ? 'unchanged' : 'wrote';
    ctx.stdout(`  ${state} ${rel(p.path)}\n`);
  }
  for (const p of run.removed) ctx.stdout(`  removed ${rel(p)} (no longer generated)\n`);
  if (run.leftover.length > 0) {
    ctx.stdout(
      `  ${run.leftover.length} file(s) an earlier run wrote are no longer generated${opts.prune ? '' : ' (--prune removes the unedited ones)'}:\n`,
    );
    for (const l of run.leftover) ctx.stdout(`    ${rel(l.file)}${l.edited ? ' (edited since; kept)' : ''}\n`);
  }
  if (!plan.codeDir)
    ctx.stdout(
      '  (pass --code-dir DIR to also write the enforcement code as source files; the document then prints its rules, Lua and gateway files and links the rest)\n',
    );
  ctx.stdout(`Constraints: ${CONSTRAINTS.length - run.checksFailed.length} of ${CONSTRAINTS.length} pass.\n`);
  if (run.checksFailed.length > 0) {
    ctx.stderr(`warning: ${run.checksFailed.join(', ')} failed; run \`rl-design validate\` for details.\n`);
  }
  const volatileQuota = inProcessQuotaWarning(design.rules);
  if (volatileQuota) ctx.stderr(`warning: ${volatileQuota.replace(/^Warning: /, '')}\n`);
  // a fleet-wide edge rule the gateway nodes together admit more of than stated (the document says so too)
  for (const r of design.rules) {
    const raised = fleetRaisedWarning(r, design.scope.gateway);
    if (raised) ctx.stderr(`warning: ${raised.replace(/^Warning: /, '')}\n`);
    const low =
      r.tier === 'ceiling' && r.rate
        ? ceilingBelowPeakWarning(perSecond(r.rate), r.inputs?.includes('rules') ?? false, design.scope)
        : null;
    if (low) ctx.stderr(`warning: ${low.replace(/^Warning: /, '')}\n`);
  }
  return 0;
}

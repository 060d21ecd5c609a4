/** `rl-design generate`: answers -> design -> document and enforcement code on disk. */
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { checkDesign, CONSTRAINTS, type ConstraintResult } from '../constraints/index.js';
import type { Design } from '../design/model.js';
import { writeOutputs, type PlannedFile } from '../io/write.js';
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

export interface GenerateOptions extends SourceOptions {
  format?: string;
  layout?: string;
  /** HTML diagrams: `beautiful-mermaid` (default, in-process) or `mermaid-cli` (optional peer dependency). */
  diagrams?: string;
  out?: string;
  codeDir?: string;
  force?: boolean;
  dryRun?: boolean;
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
export async function diagramRenderer(ctx: CommandContext, design: Design, name: DiagramRendererName): Promise<RawDiagramRenderer> {
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
export async function renderDocument(
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
    if (e instanceof UnsafeSvgError) throw new UserError('badOption', { option: '--diagrams', reason: e.message.replace(/^rl-design: /, '') });
    throw e;
  }
}

/** The format a document path names by its extension (.html or .md), if any. */
export function formatOfPath(out: string | undefined): 'html' | 'markdown' | undefined {
  if (out === undefined || /[\\/]$/.test(out)) return undefined;
  if (/\.html$/.test(out)) return 'html';
  if (/\.md$/.test(out)) return 'markdown';
  return undefined;
}

/**
 * Where the document goes: a file for the single layout, a folder for the folder layout. A
 * path ending in the other format's extension is taken without it.
 */
export function resolveTarget(cwd: string, out: string | undefined, layout: 'single' | 'folder', ext: string): { dir: string; single?: string } {
  const defaultBase = path.join('docs', 'rate-limit-design');
  const raw = out ?? defaultBase;
  // A path named for the other format (docs/design.md while writing HTML) takes this format's extension.
  const other = ext === '.html' ? '.md' : '.html';
  const resolved = path.resolve(cwd, raw);
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

export interface PlanOptions {
  format?: 'html' | 'markdown';
  layout?: 'auto' | 'single' | 'folder';
  diagrams?: DiagramRendererName;
  out?: string;
  codeDir?: string;
}

export interface OutputPlan {
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
  const layout = opts.layout ?? design.output.layout;
  const codeDirRaw = opts.codeDir ?? design.output.codeDir;
  const codeDir = codeDirRaw && codeDirRaw !== 'none' ? path.resolve(ctx.cwd, codeDirRaw) : undefined;
  // The code is embedded when it is written too: the document then holds the same bytes as the files.
  const code = codeDir ? (await import('../codegen/index.js')).generateCode(design) : [];
  const checks = checkDesign(design);
  const input = { design, checks, ...(code.length > 0 ? { codeFiles: code } : {}) };
  const files = await renderDocument(ctx, input, {
    format,
    layout,
    diagrams: opts.diagrams ?? 'beautiful-mermaid',
  });
  const ext = format === 'html' ? '.html' : '.md';
  const chosen = files.filter((f) => f.path.endsWith(ext)).length > 1 ? 'folder' : 'single';
  const target = resolveTarget(ctx.cwd, opts.out ?? design.output.path, chosen, ext);
  const documents = files.map((f) =>
    chosen === 'single' ? { path: path.join(target.dir, target.single as string), content: f.content } : { path: path.join(target.dir, ...f.path.split('/')), content: f.content },
  );
  const codeFiles = codeDir ? code.map((c) => ({ path: path.join(codeDir, ...c.path.split('/')), content: c.content })) : [];
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

export interface GenerateRun {
  design: Design;
  plan: OutputPlan;
  /** Absolute paths written or already up to date. */
  written: string[];
  unchanged: string[];
  checksFailed: string[];
}

/** generate without printing: validates options, builds, renders, writes. */
export async function generateFiles(ctx: CommandContext, opts: GenerateOptions): Promise<GenerateRun> {
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
  const markdownOnly = opts.format === 'markdown' || opts.format === 'md' || (opts.format === undefined && formatOfPath(opts.out) === 'markdown');
  if (!markdownOnly && opts.diagrams !== 'mermaid-cli') startDrawingEarly();
  // Imported on use: the answers' schema is a large module.
  const { loadDesign } = await import('./load-design.js');
  const { design: built, file } = await loadDesign(ctx, opts);
  // Results of an earlier `verify --write` on these exact answers appear in the test-scenario section.
  const results = opts.example ? undefined : await loadResultsFor(file);
  const withResults = results ? applyResults(built, results) : built;
  // A built-in example's paths are illustrative: its files go where the flags say (or the defaults), not into the cwd's ratelimit/.
  const design: Design = opts.example ? { ...withResults, output: { format: withResults.output.format, layout: withResults.output.layout } } : withResults;
  // The format: --format, else the extension of --out (`--out design.html` means HTML whatever
  // the answers say), else the answers' output.format.
  const format = opts.format ? (opts.format === 'md' ? 'markdown' : (opts.format as 'html' | 'markdown')) : formatOfPath(opts.out);
  const plan = await planOutputs(ctx, design, {
    ...(format ? { format } : {}),
    ...(opts.layout ? { layout: opts.layout as 'auto' | 'single' | 'folder' } : {}),
    ...(opts.diagrams ? { diagrams: opts.diagrams as DiagramRendererName } : {}),
    ...(opts.out ? { out: opts.out } : {}),
    ...(opts.codeDir ? { codeDir: opts.codeDir } : {}),
  });
  const checksFailed = plan.checks
    .filter((c) => !c.passed)
    .map((c) => `${c.number} ${c.id}`);
  if (opts.dryRun) return { design, plan, written: [], unchanged: [], checksFailed };
  const rel = (p: string) => path.relative(ctx.cwd, p) || p;
  const result = await writeOutputs(plan.planned, { force: opts.force ?? false, display: rel });
  return { design, plan, written: result.written, unchanged: result.unchanged, checksFailed };
}

export async function runGenerate(ctx: CommandContext, opts: GenerateOptions): Promise<number> {
  const run = await generateFiles(ctx, opts);
  const rel = (p: string) => path.relative(ctx.cwd, p) || p;
  const { plan, design } = run;
  if (opts.dryRun) {
    for (const p of plan.planned) ctx.stdout(`would write ${rel(p.path)} (${Buffer.byteLength(p.content)} bytes)\n`);
    return 0;
  }
  ctx.stdout(`Design for ${design.scope.projectName}: ${design.rules.length} rules, ${plan.layout} ${plan.format === 'html' ? 'HTML' : 'Markdown'} document.\n`);
  for (const p of plan.planned) {
    const state = run.unchanged.includes(p.path) ? 'unchanged' : 'wrote';
    ctx.stdout(`  ${state} ${rel(p.path)}\n`);
  }
  if (!plan.codeDir) ctx.stdout('  (pass --code-dir DIR to also write the enforcement code as source files, embedded in the document)\n');
  ctx.stdout(`Constraints: ${CONSTRAINTS.length - run.checksFailed.length} of ${CONSTRAINTS.length} pass.\n`);
  if (run.checksFailed.length > 0) {
    ctx.stderr(`warning: ${run.checksFailed.join(', ')} failed; run \`rl-design validate\` for details.\n`);
  }
  return 0;
}

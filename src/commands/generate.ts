/** `rl-design generate`: answers -> design -> document (and later code) on disk. */
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { checkDesign } from '../constraints/index.js';
import { writeOutputs } from '../io/write.js';
import { UserError } from '../messages.js';
import { DeadLinkError, renderMarkdown } from '../render/markdown/index.js';
import type { CommandContext } from './context.js';
import { loadDesign, type SourceOptions } from './load-design.js';

export interface GenerateOptions extends SourceOptions {
  format?: string;
  layout?: string;
  out?: string;
  force?: boolean;
  dryRun?: boolean;
}

const FORMATS = ['html', 'markdown', 'md'] as const;
const LAYOUTS = ['auto', 'single', 'folder'] as const;

/** Where the document goes: a file for the single layout, a folder for the folder layout. */
export function resolveTarget(cwd: string, out: string | undefined, layout: 'single' | 'folder', ext: string): { dir: string; single?: string } {
  const defaultBase = path.join('docs', 'rate-limit-design');
  const raw = out ?? defaultBase;
  const abs = path.resolve(cwd, raw);
  const trailing = /[\\/]$/.test(raw);
  const isDir = existsSync(abs) && statSync(abs).isDirectory();
  if (layout === 'folder') {
    return { dir: abs.endsWith(ext) ? abs.slice(0, -ext.length) : abs };
  }
  if (abs.endsWith(ext)) return { dir: path.dirname(abs), single: path.basename(abs) };
  if (trailing || isDir) return { dir: abs, single: `rate-limit-design${ext}` };
  return { dir: path.dirname(abs), single: `${path.basename(abs)}${ext}` };
}

export async function runGenerate(ctx: CommandContext, opts: GenerateOptions): Promise<number> {
  if (opts.format !== undefined && !(FORMATS as readonly string[]).includes(opts.format)) {
    throw new UserError('badOption', { option: '--format', reason: `"${opts.format}" is not a format; use html or markdown` });
  }
  if (opts.layout !== undefined && !(LAYOUTS as readonly string[]).includes(opts.layout)) {
    throw new UserError('badOption', { option: '--layout', reason: `"${opts.layout}" is not a layout; use auto, single or folder` });
  }
  const { design } = await loadDesign(ctx, opts);
  const format = opts.format === 'md' ? 'markdown' : (opts.format ?? design.output.format);
  if (format === 'html') {
    throw new UserError('badOption', {
      option: '--format',
      reason: 'HTML output is not available in this version yet; use --format markdown',
    });
  }
  const layout = (opts.layout ?? design.output.layout) as 'auto' | 'single' | 'folder';
  const checks = checkDesign(design);
  let files;
  try {
    files = renderMarkdown({ design, checks }, { layout });
  } catch (e) {
    if (e instanceof DeadLinkError) throw new UserError('deadLink', { detail: e.message });
    throw e;
  }
  const chosen = files.length > 1 ? 'folder' : 'single';
  const target = resolveTarget(ctx.cwd, opts.out ?? design.output.path, chosen, '.md');
  const planned = files.map((f) =>
    chosen === 'single' ? { path: path.join(target.dir, target.single as string), content: f.content } : { path: path.join(target.dir, ...f.path.split('/')), content: f.content },
  );
  const rel = (p: string) => path.relative(ctx.cwd, p) || p;
  if (opts.dryRun) {
    for (const p of planned) ctx.stdout(`would write ${rel(p.path)} (${Buffer.byteLength(p.content)} bytes)\n`);
    return 0;
  }
  const result = await writeOutputs(planned, { force: opts.force ?? false, display: rel });
  const failed = checks.filter((c) => !c.passed);
  ctx.stdout(`Design for ${design.scope.projectName}: ${design.rules.length} rules, ${chosen} Markdown document.\n`);
  for (const p of planned) {
    const state = result.unchanged.includes(p.path) ? 'unchanged' : 'wrote';
    ctx.stdout(`  ${state} ${rel(p.path)}\n`);
  }
  ctx.stdout(`Constraints: ${checks.length - failed.length} of ${checks.length} pass.\n`);
  if (failed.length > 0) {
    ctx.stderr(`warning: ${failed.map((c) => `${c.number} ${c.id}`).join(', ')} failed; run \`rl-design validate\` for details.\n`);
  }
  return 0;
}

/** Phase 0: where the document goes, suggested from the format and confirmed or changed (and the --layout flag). */
import path from 'node:path';
import type { Step } from '../context.js';
import { pathText } from '../flags.js';

export function defaultDocumentPath(format: 'html' | 'markdown'): string {
  return `docs/rate-limit-design.${format === 'markdown' ? 'md' : 'html'}`;
}

/** A path that names a file of the other format is refused; a folder path (no extension) is fine. */
export function documentPathProblem(text: string, format: 'html' | 'markdown'): string | undefined {
  const p = pathText(text);
  if (!p.ok) return `The path ${p.message}.`;
  const ext = path.extname(p.value).toLowerCase();
  const wanted = format === 'markdown' ? '.md' : '.html';
  if (ext === '.md' || ext === '.markdown' || ext === '.html' || ext === '.htm') {
    if ((format === 'markdown') !== (ext === '.md' || ext === '.markdown')) {
      return `"${p.value}" is a ${ext} name but the document is ${format === 'markdown' ? 'Markdown' : 'HTML'}: end it in ${wanted}, or give a folder.`;
    }
  }
  return undefined;
}

export const outputPath: Step = {
  id: 'output-path',
  async run(ctx, draft) {
    const format = draft.output?.format ?? 'html';
    // One file or a linked folder: auto (folder when the document is large) unless --layout says.
    const layout = ctx.flags.layout ? { layout: ctx.flags.layout } : {};
    if (ctx.flags.out !== undefined) return { output: { ...layout, path: ctx.flags.out } };
    const suggested = defaultDocumentPath(format);
    if (!ctx.interactive) return { output: { ...layout, path: suggested } };
    const answer = await ctx.prompt.input({
      message: 'Write the document to',
      default: suggested,
      validate: (text) => documentPathProblem(text === '' ? suggested : text, format) ?? true,
    });
    return { output: { ...layout, path: answer === '' ? suggested : answer } };
  },
};

/** Output: where the document goes, suggested from the format (or the previous answers) and confirmed or changed (and the --layout flag). */
import path from 'node:path';
import { knownValue, type Step } from '../context.js';
import { pathText } from '../flags.js';
import { Q } from '../questions.js';
import { given, resolve } from '../resolve.js';

type Format = 'html' | 'markdown';

function defaultDocumentPath(format: Format): string {
  return `docs/rate-limit-design.${format === 'markdown' ? 'md' : 'html'}`;
}

const DOCUMENT_EXTENSIONS = ['.md', '.markdown', '.html', '.htm'];

/** A path that names a file of the other format is refused; a folder path (no extension) is fine. */
function documentPathProblem(text: string, format: Format): string | undefined {
  const p = pathText(text);
  if (!p.ok) return `The path ${p.message}.`;
  const ext = path.extname(p.value).toLowerCase();
  const wanted = format === 'markdown' ? '.md' : '.html';
  if (DOCUMENT_EXTENSIONS.includes(ext)) {
    if ((format === 'markdown') !== (ext === '.md' || ext === '.markdown')) {
      return `"${p.value}" is a ${ext} name but the document is ${format === 'markdown' ? 'Markdown' : 'HTML'}: end it in ${wanted}, or give a folder.`;
    }
  }
  return undefined;
}

/**
 * An earlier document path for this format: as it was, or with the other format's extension
 * swapped for this one's (the format changed); undefined when it cannot be used.
 */
function pathForFormat(earlier: string, format: Format): string | undefined {
  if (!documentPathProblem(earlier, format)) return earlier;
  const ext = path.extname(earlier);
  if (!DOCUMENT_EXTENSIONS.includes(ext.toLowerCase())) return undefined;
  const swapped = `${earlier.slice(0, -ext.length)}${format === 'markdown' ? '.md' : '.html'}`;
  return documentPathProblem(swapped, format) ? undefined : swapped;
}

export const outputPath: Step = {
  id: 'output-path',
  fields: ['output.path', 'output.layout'],
  async run(ctx, draft) {
    const format = draft.output?.format ?? 'html';
    // One file or a linked folder: a file path is one file, a folder path is split by length, unless --layout says.
    const layout = given((await resolve(ctx, Q.layout)).value);
    const known = knownValue<string>(ctx.known, 'output.path');
    const { value } = await resolve(ctx, Q.out, {
      known: known === undefined ? undefined : pathForFormat(known, format),
      fallback: defaultDocumentPath(format),
      check: (text) => documentPathProblem(text, format),
    });
    return { output: { ...(layout ? { layout } : {}), ...(value ? { path: value } : {}) } };
  },
};

/**
 * Markdown output: the sections assembled into one file, or into a linked folder (README.md
 * index + numbered pages). Layouts differ only in how links resolve and how sections are
 * grouped into files (render/document.ts plans both, for every format); the section
 * templates are the same. Every relative link and anchor is checked before anything is
 * returned.
 */
import { checkLinks } from '../links.js';
import { planDocument, type DocumentOptions } from '../document.js';
import type { OutputFile, RenderInput } from '../types.js';

export { DeadLinkError } from '../links.js';
export {
  chooseLayout,
  DEFAULT_BASE_NAME,
  documentStats,
  groupPages,
  INDEX_FILE,
  LAYOUT_THRESHOLDS,
  type DocumentStats,
} from '../document.js';

type MarkdownOptions = DocumentOptions;

/**
 * Renders the design as Markdown. Paths are relative POSIX paths: for `single`, the one
 * file `<baseName>.md`; for `folder`, the files inside the folder (`README.md`,
 * `01-....md`, ...). Throws DeadLinkError (links.ts) when a link would not resolve.
 */
export function renderMarkdown(input: RenderInput, options: MarkdownOptions): OutputFile[] {
  const doc = planDocument(input, options);
  const files: OutputFile[] =
    doc.layout === 'single' ? [{ path: doc.path, content: doc.markdown }] : doc.pages.map((p) => ({ path: p.path, content: p.markdown }));
  checkLinks(files, doc.codeLinks);
  return files;
}

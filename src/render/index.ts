/**
 * The renderers, registered by output name: each turns a
 * RenderInput into OutputFile[] and differs from the others only in format, never in the
 * sections it writes (both come from render/document.ts and the same section templates).
 * HTML additionally needs a diagram renderer (render/diagrams), loaded by the caller.
 */
import { renderHtml, type HtmlOptions } from './html/index.js';
import { renderMarkdown, type MarkdownOptions } from './markdown/index.js';
import type { OutputFile, RenderInput } from './types.js';

export type Renderer<O> = (input: RenderInput, options: O) => OutputFile[];

export const RENDERERS: { readonly markdown: Renderer<MarkdownOptions>; readonly html: Renderer<HtmlOptions> } = {
  markdown: renderMarkdown,
  html: renderHtml,
};

export { chooseLayout, documentStats, renderMarkdown, LAYOUT_THRESHOLDS, type MarkdownOptions } from './markdown/index.js';
export { renderHtml, HTML_INDEX_FILE, STYLESHEET_FILE, type HtmlOptions } from './html/index.js';
export { DIAGRAM_RENDERERS, diagramSources, type DiagramRendererName, type RawDiagramRenderer } from './diagrams/index.js';
export { loadBeautifulMermaid } from './diagrams/beautiful.js';
export { loadMermaidCli, MermaidCliFailedError, MermaidCliMissingError } from './diagrams/mermaid-cli.js';
export { UnsafeSvgError } from './diagrams/svg.js';
export { checkLinks, DeadLinkError, findDeadLinks, headings } from './links.js';
export type { CodeFile, ConstraintResult, Layout, OutputFile, RenderInput } from './types.js';

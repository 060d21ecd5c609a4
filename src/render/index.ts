/**
 * The renderers: renderMarkdown and renderHtml each turn a RenderInput into OutputFile[] and
 * differ only in format, never in the sections they write (both come from render/document.ts and
 * the same section templates). There is no registry: generate imports the one it needs when it
 * needs it, so a Markdown run never loads the HTML side. HTML also needs a diagram renderer
 * (render/diagrams), loaded by the caller.
 */

export { chooseLayout, documentStats, renderMarkdown, LAYOUT_THRESHOLDS, type MarkdownOptions } from './markdown/index.js';
export { renderHtml, HTML_INDEX_FILE, STYLESHEET_FILE, type HtmlOptions } from './html/index.js';
export { DIAGRAM_RENDERERS, diagramSources, type DiagramRendererName, type RawDiagramRenderer } from './diagrams/index.js';
export { loadBeautifulMermaid } from './diagrams/beautiful.js';
export { loadMermaidCli, MermaidCliFailedError, MermaidCliMissingError } from './diagrams/mermaid-cli.js';
export { UnsafeSvgError } from './diagrams/svg.js';
export { checkLinks, DeadLinkError, findDeadLinks, headings } from './links.js';
export type { CodeFile, ConstraintResult, Layout, OutputFile, RenderInput } from './types.js';

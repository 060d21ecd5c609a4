/**
 * The renderers, registered by output name (ARCHITECTURE.md convention 3): each turns a
 * RenderInput into OutputFile[] and differs from the others only in format, never in the
 * sections it writes. HTML joins this registry with its own issue.
 */
import { renderMarkdown, type MarkdownOptions } from './markdown/index.js';
import type { OutputFile, RenderInput } from './types.js';

export type Renderer = (input: RenderInput, options: MarkdownOptions) => OutputFile[];

export const RENDERERS: Readonly<Record<'markdown', Renderer>> = {
  markdown: renderMarkdown,
};

export { chooseLayout, documentStats, renderMarkdown, LAYOUT_THRESHOLDS, type MarkdownOptions } from './markdown/index.js';
export { checkLinks, DeadLinkError, findDeadLinks, headings } from './links.js';
export type { CodeFile, ConstraintResult, Layout, OutputFile, RenderInput } from './types.js';

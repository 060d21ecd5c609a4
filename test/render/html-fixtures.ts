/** Shared by the HTML tests: the real diagram renderer, and HTML documents of the fixtures. */
import { Lexer, marked, type Tokens } from 'marked';
import { loadBeautifulMermaid } from '../../src/render/diagrams/beautiful.js';
import type { RawDiagramRenderer } from '../../src/render/diagrams/index.js';
import { renderHtml } from '../../src/render/html/index.js';
import type { Layout, OutputFile, RenderInput } from '../../src/render/types.js';

let renderer: RawDiagramRenderer | undefined;

/** beautiful-mermaid, loaded once per test file. */
export async function diagrams(): Promise<RawDiagramRenderer> {
  renderer ??= await loadBeautifulMermaid();
  return renderer;
}

export async function html(input: RenderInput, layout: Layout | 'auto'): Promise<OutputFile[]> {
  return renderHtml(input, { layout, diagrams: await diagrams() });
}

/** The Mermaid sources of every ```mermaid fence in Markdown files. */
export function mermaidBlocks(files: readonly OutputFile[]): string[] {
  const blocks: string[] = [];
  for (const f of files) {
    marked.walkTokens(Lexer.lex(f.content, { gfm: true }), (t) => {
      if (t.type === 'code' && (t as Tokens.Code).lang === 'mermaid') blocks.push((t as Tokens.Code).text);
    });
  }
  return blocks;
}

/** Every `<svg>...</svg>` element of an HTML text (they never nest in our output). */
export function svgElements(htmlText: string): string[] {
  return [...htmlText.matchAll(/<svg\b[\s\S]*?<\/svg>/g)].map((m) => m[0]);
}

/** The bodies of every HTML comment. */
export function comments(htmlText: string): string[] {
  return [...htmlText.matchAll(/<!--([\s\S]*?)-->/g)].map((m) => m[1] ?? '');
}

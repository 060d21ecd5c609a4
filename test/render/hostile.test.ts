/**
 * Hostile strings in every user-supplied name and route (project, endpoints, routes, plans,
 * providers, burst sources, a hand-written rule's key and rationale) must leave the
 * Markdown well formed and inert, in both layouts.
 */
import { Lexer, marked, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { findDeadLinks, headings } from '../../src/render/links.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { hostileAnswers, inputFromAnswers } from './fixtures.js';

const input = inputFromAnswers(hostileAnswers());
const { design } = input;
const oneLine = (s: string): string =>
  s
    .replace(/[\r\n]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

function allTokens(markdown: string): Token[] {
  const all: Token[] = [];
  marked.walkTokens(Lexer.lex(markdown, { gfm: true }), (t) => {
    all.push(t);
  });
  return all;
}

/** Cells in one table row, split the way cmark-gfm (any `\|` is escaped) or marked (odd run of `\`) does. */
function cellCount(line: string, parser: 'cmark-gfm' | 'marked'): number {
  let body = line.trim();
  if (body.startsWith('|')) body = body.slice(1);
  let count = 1;
  for (let i = 0; i < body.length; i += 1) {
    if (body[i] !== '|') continue;
    let slashes = 0;
    for (let j = i - 1; j >= 0 && body[j] === '\\'; j -= 1) slashes += 1;
    const escaped = parser === 'marked' ? slashes % 2 === 1 : slashes > 0;
    if (!escaped && i !== body.length - 1) count += 1;
  }
  return count;
}

describe.each(['single', 'folder'] as const)('hostile names, %s layout', (layout) => {
  const files = renderMarkdown(input, { layout });
  const everything = files.map((f) => f.content).join('\n');

  it('renders, with every link resolving', () => {
    expect(findDeadLinks(files)).toEqual([]);
  });

  it.each(files.map((f) => f.path))('%s: no raw HTML survives, and nothing becomes a dangerous link', (path) => {
    const content = files.find((f) => f.path === path)?.content ?? '';
    const tokens = allTokens(content);
    expect(tokens.filter((t) => t.type === 'html')).toEqual([]);
    expect(tokens.filter((t) => t.type === 'image')).toEqual([]);
    for (const link of tokens.filter((t): t is Tokens.Link => t.type === 'link')) {
      expect(link.href).toMatch(/^(?:https?:\/\/|#|[0-9A-Za-z-]+\.md)/);
    }
    const html = marked.parse(content, { async: false, gfm: true });
    expect(html).not.toMatch(/<script|<img|<!--|href="javascript/i);
    const tags = new Set(html.match(/<[a-z][a-z0-9]*/g));
    expect(
      [...tags].filter((tag) => !/^<(h[1-6]|p|a|ul|ol|li|table|thead|tbody|tr|th|td|code|pre|strong|em|hr|blockquote)$/.test(tag)),
    ).toEqual([]);
  });

  it.each(files.map((f) => f.path))('%s: every table row keeps its column count in both GFM parsers', (path) => {
    const content = files.find((f) => f.path === path)?.content ?? '';
    const tables = allTokens(content).filter((t): t is Tokens.Table => t.type === 'table');
    for (const table of tables) {
      const [head, , ...rows] = table.raw.trimEnd().split('\n');
      for (const parser of ['cmark-gfm', 'marked'] as const) {
        const width = cellCount(head ?? '', parser);
        expect(width).toBe(table.header.length);
        for (const row of rows) expect(cellCount(row, parser), `${parser}: ${row}`).toBe(width);
      }
    }
  });

  it('keeps routes and key patterns as intact code spans', () => {
    const spans = new Set(
      allTokens(everything)
        .filter((t): t is Tokens.Codespan => t.type === 'codespan')
        .map((t) => t.text),
    );
    for (const e of design.scope.endpoints) expect(spans, e.route).toContain(oneLine(e.route));
    for (const r of design.rules) {
      if (r.key && !/\\\|/.test(r.key)) expect(spans, r.key).toContain(oneLine(r.key));
    }
  });

  it('keeps names as literal text (a heading stays one heading, a cell stays one cell)', () => {
    const first = files[0]?.content ?? '';
    expect(headings(first)[0]?.text).toBe(`Rate-limit design: ${oneLine(design.scope.projectName)}`);
    if (layout === 'single') {
      const endpoints = Lexer.lex(first, { gfm: true }).find(
        (t): t is Tokens.Table => t.type === 'table' && t.header[0]?.text === 'Endpoint',
      );
      const rendered = endpoints?.rows.map((r) => marked.parseInline(r[0]?.text ?? '', { async: false })) ?? [];
      const decode = (s: string) =>
        s
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&amp;/g, '&');
      expect(rendered.map(decode)).toEqual(design.scope.endpoints.map((e) => oneLine(e.name)));
    }
    // No template syntax was evaluated: the braces are still there, escaped.
    expect(everything).toContain('\\{\\{handlebars\\}\\}');
  });

  it('keeps mermaid blocks free of user text that could break them', () => {
    const blocks = allTokens(everything).filter((t): t is Tokens.Code => t.type === 'code' && t.lang === 'mermaid');
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(block.text).not.toMatch(/<script|\r/);
      for (const line of block.text.split('\n').slice(1)) {
        const quotes = (line.match(/"/g) ?? []).length;
        expect(quotes % 2, line).toBe(0);
      }
    }
  });
});

/**
 * Heading anchors and the link checker for produced Markdown and HTML files. Pure: works on
 * OutputFile[] only. Every relative link (`[x](page.md#anchor)`, `<a href="page.html#id">`,
 * an SVG's `url(#marker)`) must resolve to a produced file and to an anchor that exists in
 * it; anything else is a dead link and an error, raised before any file is returned (so
 * nothing is written).
 */
import { Lexer, marked, type Token, type Tokens } from 'marked';
import { Slugger } from '../escape/markup.js';
import { DeadLinkError, type DeadLink } from './errors.js';
import type { OutputFile } from './types.js';

export { DeadLinkError };

export interface Heading {
  level: number;
  /** Plain text as a reader sees it (escapes resolved, markup removed). */
  text: string;
  /** GitHub-style anchor, numbered when repeated. */
  anchor: string;
}

export function plainText(tokens: readonly Token[] | undefined): string {
  let text = '';
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'html':
      case 'br':
        break;
      case 'escape':
      case 'codespan':
        text += (token as Tokens.Escape | Tokens.Codespan).text;
        break;
      default: {
        const nested = (token as { tokens?: Token[] }).tokens;
        text += nested ? plainText(nested) : String((token as { text?: string }).text ?? '');
      }
    }
  }
  return text;
}

/** The headings and link destinations of a Markdown text, from one pass of the lexer. */
function scanMarkdown(markdown: string): { headings: Heading[]; links: string[] } {
  const slugger = new Slugger();
  const found: Heading[] = [];
  const links: string[] = [];
  marked.walkTokens(Lexer.lex(markdown, { gfm: true }), (token) => {
    if (token.type === 'link') links.push((token as Tokens.Link).href);
    if (token.type !== 'heading') return;
    const heading = token as Tokens.Heading;
    const text = plainText(heading.tokens);
    found.push({ level: heading.depth, text, anchor: slugger.slug(text) });
  });
  return { headings: found, links };
}

/** Every heading of a Markdown text, in order, with the anchor GitHub would give it. */
export function headings(markdown: string): Heading[] {
  return scanMarkdown(markdown).headings;
}

/** Every link destination in a Markdown text (inline links, including inside tables and lists). */
export function linkTargets(markdown: string): string[] {
  return scanMarkdown(markdown).links;
}

function isExternal(href: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(href) || href.startsWith('//');
}

function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** Joins a relative href to a directory; undefined when it climbs out of the root. */
function resolvePath(dir: string, relative: string): string | undefined {
  const parts = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------
// HTML (the renderer's own output: every attribute is double-quoted and escaped)

/** HTML without its comments (a comment's text is not markup). */
function withoutComments(html: string): string {
  return html.replace(/<!--[\s\S]*?-->/g, '');
}

function decodeAttribute(value: string): string {
  return value.replace(
    /&(?:amp|lt|gt|quot|#39);/g,
    (e) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" })[e] ?? e,
  );
}

/** Every element id of an HTML page, in order (repeats included). */
function htmlIds(html: string): string[] {
  return [...withoutComments(html).matchAll(/<[a-zA-Z][^>]*?\sid="([^"]*)"/g)].map((m) => decodeAttribute(m[1] ?? ''));
}

/** Every link destination of an HTML page: href of <a> and <link>, and SVG references. */
function htmlLinkTargets(html: string): string[] {
  const text = withoutComments(html);
  const hrefs = [...text.matchAll(/<(?:a|link|use|image)\b[^>]*?\s(?:xlink:)?href="([^"]*)"/g)].map((m) => decodeAttribute(m[1] ?? ''));
  const urls = [...text.matchAll(/url\(\s*['"]?(#[^)'"\s]+)['"]?\s*\)/g)].map((m) => m[1] ?? '');
  return [...hrefs, ...urls];
}

const isHtml = (path: string): boolean => path.endsWith('.html');
const isMarkdown = (path: string): boolean => path.endsWith('.md');

/**
 * All dead relative links in a set of produced files: Markdown files (links to headings)
 * and HTML files (links and SVG references to element ids; a repeated id is reported too,
 * since a link to it is ambiguous).
 */
export function findDeadLinks(files: readonly OutputFile[], outside: readonly string[] = []): DeadLink[] {
  const allowed = new Set(outside);
  const byPath = new Map(files.map((f) => [f.path, f]));
  // Each file is scanned once, for its own links and for the anchors others link to.
  const scans = new Map<string, { anchors: Set<string>; links: string[] }>();
  const scanOf = (path: string): { anchors: Set<string>; links: string[] } => {
    let scan = scans.get(path);
    if (!scan) {
      const file = byPath.get(path);
      if (file && isMarkdown(file.path)) {
        const { headings: found, links } = scanMarkdown(file.content);
        scan = { anchors: new Set(found.map((h) => h.anchor)), links };
      } else if (file && isHtml(file.path)) {
        scan = { anchors: new Set(htmlIds(file.content)), links: htmlLinkTargets(file.content) };
      } else scan = { anchors: new Set(), links: [] };
      scans.set(path, scan);
    }
    return scan;
  };
  const anchorsOf = (path: string): Set<string> => scanOf(path).anchors;
  const dead: DeadLink[] = [];
  for (const file of files) {
    if (!isMarkdown(file.path) && !isHtml(file.path)) continue;
    if (isHtml(file.path)) {
      const seen = new Set<string>();
      for (const id of htmlIds(file.content)) {
        if (seen.has(id)) dead.push({ file: file.path, href: `#${id}`, reason: 'the id is used more than once' });
        seen.add(id);
      }
    }
    for (const href of scanOf(file.path).links) {
      if (isExternal(href) || allowed.has(href)) continue;
      if (href === '') {
        dead.push({ file: file.path, href, reason: 'empty link' });
        continue;
      }
      const hash = href.indexOf('#');
      const pathPart = decode(hash < 0 ? href : href.slice(0, hash));
      const fragment = hash < 0 ? undefined : decode(href.slice(hash + 1));
      const target = pathPart === '' ? file.path : resolvePath(dirname(file.path), pathPart);
      if (target === undefined || !byPath.has(target)) {
        dead.push({ file: file.path, href, reason: 'no such file in the document' });
        continue;
      }
      if (fragment !== undefined && !anchorsOf(target).has(fragment)) {
        dead.push({
          file: file.path,
          href,
          reason: `no ${isHtml(target) ? 'element with id' : 'heading with anchor'} #${fragment} in ${target}`,
        });
      }
    }
  }
  return dead;
}

/**
 * Throws DeadLinkError when any relative link in the files resolves to nothing. `outside`:
 * links the renderer made to files written beside the document (the code folder's).
 */
export function checkLinks(files: readonly OutputFile[], outside: readonly string[] = []): void {
  const dead = findDeadLinks(files, outside);
  if (dead.length > 0) throw new DeadLinkError(dead);
}

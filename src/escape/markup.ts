/**
 * One escaping helper per output target. Every template that writes into a target uses
 * that target's helper (they are registered as handlebars helpers in render/helpers.ts),
 * and handlebars' own HTML escaping is off: Markdown, not HTML, is the target here.
 *
 * Targets:
 * - mdText      inline Markdown text (paragraphs, list items, headings)
 * - mdCell      a GFM table cell
 * - mdLinkText  the text of a link
 * - mdCode      an inline code span outside tables
 * - mdCellCode  an inline code span inside a table cell
 * - mdFence     a fenced code block
 * - mermaidLabel a label inside a quoted Mermaid string (or an unquoted edge/message text)
 * - slugAnchor  a GitHub-style heading anchor
 *
 * All helpers are pure, locale-independent and total: any input (including undefined and
 * non-strings) gives a string.
 */

/** Anything a template may hand to a helper. */
export type Printable = string | number | boolean | null | undefined;

/** Collapses every line break (and other control characters) into one space. */
function oneLine(value: Printable): string {
  if (value === null || value === undefined) return '';
  return (
    String(value)
      // CR, LF, NEL, LS, PS and every other C0/C1 control except tab become spaces.
      .replace(/[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]+/g, ' ')
      .replace(/\t/g, ' ')
      .replace(/ {2,}/g, ' ')
      .trim()
  );
}

/**
 * ASCII punctuation that means something to CommonMark/GFM (or to common extensions such
 * as GitHub's `$` math): each is backslash-escaped, which CommonMark defines for every
 * ASCII punctuation character, so the escape always renders as the character itself.
 */
const MD_SPECIAL = /[\\`*_[\]<>#|&~$!{}]/g;

const INTRAWORD = /^[\p{L}\p{N}]$/u;

/** An http(s) URL in running text, without the trailing punctuation GFM also leaves out. */
const URL_RE = /https?:\/\/[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]+/g;

function escapeInline(text: string, lineStart = true): string {
  let out = text.replace(MD_SPECIAL, (c, offset: number, whole: string) =>
    // An underscore between two letters or digits can neither open nor close emphasis
    // (CommonMark's flanking rules), so snake_case names stay readable.
    c === '_' && INTRAWORD.test(whole.charAt(offset - 1)) && INTRAWORD.test(whole.charAt(offset + 1)) ? c : `\\${c}`,
  );
  if (!lineStart) return out;
  // Text that starts like a block construct: list marker, ordered list, setext/thematic
  // break. (Headings, quotes and HTML start with escaped characters.)
  out = out.replace(/^([-+=])/, '\\$1').replace(/^(\d{1,9})([.)])(?=[ \t]|$)/, '$1\\$2');
  return out;
}

/**
 * Inline Markdown text. Escapes every character that could open a code span, emphasis,
 * a link, an HTML tag, a heading, a table cell or an entity, and collapses line breaks,
 * so a hostile name stays one run of literal text. http(s) URLs become explicit
 * `<autolinks>` (their characters are all URL-safe, so nothing can escape the brackets).
 */
export function mdText(value: Printable): string {
  return inline(value, true, true);
}

/**
 * The text of a link (`[text](href)`): as mdText, but never at the start of a line (so a
 * leading "2." or "-" needs no escape), without autolinks (a link cannot hold one), and
 * with parentheses escaped.
 */
export function mdLinkText(value: Printable): string {
  // Parentheses too: marked (the HTML engine) misreads `\[x\](y)` inside a link text.
  return inline(value, false, false).replace(/[()]/g, (c) => `\\${c}`);
}

function inline(value: Printable, lineStart: boolean, autolink: boolean): string {
  const text = oneLine(value);
  if (!autolink) return escapeInline(text, lineStart);
  let out = '';
  let last = 0;
  for (const match of text.matchAll(URL_RE)) {
    let url = match[0];
    // Trailing punctuation belongs to the sentence, not the URL (as GFM autolinks do).
    while (/[.,:;!?'*)]$/.test(url) && !(url.endsWith(')') && balancedParens(url))) url = url.slice(0, -1);
    if (url.length <= 'https://'.length) continue;
    const start = match.index;
    out += escapeInline(text.slice(last, start), lineStart && last === 0) + `<${url}>`;
    last = start + url.length;
  }
  return out + escapeInline(text.slice(last), lineStart && last === 0);
}

function balancedParens(url: string): boolean {
  let depth = 0;
  for (const c of url) {
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
  }
  return depth === 0;
}

/**
 * A GFM table cell: inline text with `|` escaped (mdText already does) and never empty,
 * so a row always keeps its column count.
 */
export function mdCell(value: Printable): string {
  const text = mdText(value);
  return text === '' ? '-' : text.replace(/(?<!\\)\|/g, '\\|');
}

/**
 * An inline code span. The fence is one backtick longer than the longest backtick run
 * inside; content that starts or ends with a backtick or a space is padded so the span
 * keeps it. Line breaks collapse to spaces. Empty input gives an empty string.
 */
export function mdCode(value: Printable): string {
  const text = oneLine(value);
  if (text === '') return '';
  const fence = '`'.repeat(longestRun(text, '`') + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * An inline code span inside a GFM table cell. GFM splits cells before it parses code
 * spans, so every `|` in the code is written `\|` (the table parser removes the
 * backslash again). A backslash right before a pipe cannot be written unambiguously for
 * every parser; such content falls back to escaped text.
 */
export function mdCellCode(value: Printable): string {
  const text = oneLine(value);
  if (text === '') return '-';
  if (/\\\|/.test(text)) return mdCell(text);
  return mdCode(text).replace(/\|/g, '\\|');
}

/** Info strings are limited to a conservative language name. */
function fenceInfo(language: Printable): string {
  const lang = oneLine(language).toLowerCase();
  return /^[a-z0-9][a-z0-9_+.#-]{0,31}$/.test(lang) ? lang : '';
}

/**
 * A fenced code block: a backtick fence longer than any backtick run in the content (and
 * at least three), the language as info string, content kept verbatim (line endings
 * normalised to \n, a final newline ensured).
 */
export function mdFence(content: Printable, language?: Printable): string {
  let body = content === null || content === undefined ? '' : String(content).replace(/\r\n?/g, '\n');
  if (!body.endsWith('\n')) body += '\n';
  const fence = '`'.repeat(Math.max(3, longestRun(body, '`') + 1));
  return `${fence}${fenceInfo(language)}\n${body}${fence}`;
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/**
 * Mermaid entity codes for characters that can end a quoted label, start a comment or a
 * directive, open HTML, or split a statement. Mermaid turns `#name;` / `#NN;` back into
 * the character after parsing.
 */
const MERMAID_ENTITIES: Record<string, string> = {
  '#': '#35;',
  '"': '#quot;',
  '<': '#lt;',
  '>': '#gt;',
  '&': '#amp;',
  '`': '#96;',
  ';': '#59;',
  '%': '#37;',
  '{': '#123;',
  '}': '#125;',
  '|': '#124;',
  '[': '#91;',
  ']': '#93;',
  '\\': '#92;',
  // Not Mermaid syntax, but in-process renderers read **bold**, *italic* and ~~strike~~
  // inside labels: the codes keep user text literal there too.
  '*': '#42;',
  '~': '#126;',
};

/**
 * A Mermaid label (for use inside double quotes, or as edge / message text): line breaks
 * are removed and every character in MERMAID_ENTITIES is written as its entity code, so
 * no label can close its quotes, open HTML or a comment, or end the statement. Runs of
 * hyphens are encoded too, so user text never forms an arrow (or `--` in an HTML comment
 * that carries the source).
 */
export function mermaidLabel(value: Printable): string {
  return oneLine(value)
    .replace(/[#"<>&`;%{}|[\]\\*~]/g, (c) => MERMAID_ENTITIES[c] ?? c)
    .replace(/-{2,}/g, (run) => '#45;'.repeat(run.length));
}

/**
 * A GitHub-style heading anchor for one heading's plain text: lower-cased, punctuation
 * and symbols removed, each space turned into a hyphen (github-slugger's rule). Use a
 * Slugger to number repeated headings the way GitHub does.
 */
export function slugAnchor(text: Printable): string {
  return oneLine(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Assigns anchors to a document's headings in order: repeats get `-1`, `-2`, ... */
export class Slugger {
  private readonly seen = new Map<string, number>();

  slug(text: Printable): string {
    const base = slugAnchor(text);
    let slug = base;
    let n = this.seen.get(base) ?? 0;
    while (this.seen.has(slug)) {
      n += 1;
      slug = `${base}-${n}`;
    }
    this.seen.set(base, n);
    this.seen.set(slug, 0);
    return slug;
  }
}

// ---------------------------------------------------------------------------------------
// HTML and SVG (the HTML output; Markdown text reaches HTML through marked, which escapes)

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text or a double-quoted attribute value in HTML or XML (SVG): the five markup characters
 * become entities, so nothing can open a tag, an entity, a comment or end the attribute.
 * Control characters other than tab and line feed are dropped (XML forbids most of them).
 */
export function htmlText(value: Printable): string {
  if (value === null || value === undefined) return '';
  return String(value)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '')
    .replace(/[&<>"']/g, (c) => HTML_ENTITIES[c] ?? c);
}

/** Inverse of htmlText for the entities an XML or HTML serializer writes. */
export function decodeXmlEntities(text: string): string {
  return text.replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g, (whole, dec?: string, hex?: string, name?: string) => {
    if (name) return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name] ?? whole;
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
    return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/**
 * An HTML comment (`<!-- ... -->`) that carries text verbatim but reversibly: `&` is written
 * `&amp;`, and every `-` that follows another `-` is written `&#45;`. The body then holds no
 * `--` at all, so nothing in it can end the comment (`-->`, `--!>`), nest one (`<!--`) or
 * break it in XML; the spaces around the body keep it from starting with `>` or ending
 * with `-`. Decode the body with decodeHtmlComment. An optional preface (fixed text of
 * ours, e.g. how to decode) is written first, as is, on its own line.
 */
export function htmlComment(value: Printable, preface = ''): string {
  const text = value === null || value === undefined ? '' : String(value);
  if (/--|^-?>|[<>]/.test(preface)) throw new Error('rl-design: a comment preface may not hold "--", "<" or ">"');
  return `<!-- ${preface ? `${preface}\n` : ''}${text.replace(/&/g, '&amp;').replace(/(?<=-)-/g, '&#45;')} -->`;
}

/** The text an htmlComment body carries: `&#45;` -> `-`, then `&amp;` -> `&`. */
export function decodeHtmlComment(text: string): string {
  return text.replace(/&#45;/g, '-').replace(/&amp;/g, '&');
}

/**
 * Markdown -> HTML for the document's own Markdown (the section templates' output), with
 * marked and a renderer of our own:
 * - headings get ids, given by the same Slugger rule as the Markdown anchors, so every
 *   `#anchor` of the Markdown form exists in the HTML form too;
 * - tables sit in a wrapper that scrolls sideways, so a wide table never widens the page;
 *   column alignment is a class, not the obsolete `align` attribute; every body cell
 *   carries its column's name (`data-label`), which a narrow screen shows beside the value
 *   when it stacks a table of three or more columns into one card per row;
 * - code is `<pre><code>`, escaped; a ```mermaid fence becomes the diagram (inline SVG with
 *   its source in a comment), rendered by the caller's diagram function;
 * - relative links to `.md` pages point at the `.html` pages (`README.md` -> `index.html`);
 *   only http(s), mailto and relative links stay links;
 * - raw HTML and images never pass through: they are printed as text.
 */
import { Marked, Renderer, type Tokens } from 'marked';
import { htmlText, type Slugger } from '../../escape/markup.js';
import { plainText } from '../links.js';

export interface ConvertContext {
  /** The page's heading slugger, already fed with the headings that precede this part. */
  slugger: Slugger;
  /** A ```mermaid fence's source -> the complete figure HTML. */
  diagram: (source: string) => string;
}

/** `README.md` -> `index.html`, `02-x.md#a` -> `02-x.html#a`; anything else unchanged. */
export function htmlHref(href: string): string {
  const m = /^((?:[^:/?#]*\/)*)([^:/?#]+)\.md((?:#.*)?)$/.exec(href);
  if (!m || href.includes('://')) return href;
  const [, dir = '', name = '', hash = ''] = m;
  return `${dir}${name === 'README' ? 'index' : name}.html${hash}`;
}

/** Links that may stay links: relative ones, fragments, http(s) and mailto. */
function safeHref(href: string): boolean {
  if (/^(?:https?:|mailto:)/i.test(href)) return true;
  return !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(href) && !href.startsWith('//');
}

/** Tables with at least this many columns are stacked into cards on a phone. */
const STACK_COLUMNS = 3;

function alignClass(align: Tokens.TableCell['align']): string {
  return align ? ` class="align-${align}"` : '';
}

export function markdownToHtml(markdown: string, ctx: ConvertContext): string {
  const renderer = new Renderer();
  renderer.heading = function heading({ tokens, depth }: Tokens.Heading): string {
    const id = ctx.slugger.slug(plainText(tokens));
    return `<h${depth} id="${htmlText(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
  };
  renderer.code = function code({ text, lang }: Tokens.Code): string {
    const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
    if (language === 'mermaid') return `${ctx.diagram(text)}\n`;
    const cls = /^[a-z0-9][a-z0-9_+.#-]*$/i.test(language) ? ` class="language-${htmlText(language)}"` : '';
    return `<pre><code${cls}>${htmlText(text.endsWith('\n') ? text : `${text}\n`)}</code></pre>\n`;
  };
  renderer.table = function table(token: Tokens.Table): string {
    const labels = token.header.map((h) => plainText(h.tokens));
    const cell = (c: Tokens.TableCell, i: number): string => {
      const tag = c.header ? 'th' : 'td';
      const attrs = c.header ? ' scope="col"' : ` data-label="${htmlText(labels[i] ?? '')}"`;
      return `<${tag}${attrs}${alignClass(c.align)}>${this.parser.parseInline(c.tokens)}</${tag}>`;
    };
    const head = `<tr>${token.header.map(cell).join('')}</tr>`;
    const rows = token.rows.map((r) => `<tr>${r.map(cell).join('')}</tr>`).join('\n');
    // A table of three or more columns becomes one card per row on a narrow screen (styles.css).
    const cls = token.header.length >= STACK_COLUMNS ? ' class="stack"' : '';
    return (
      `<div class="table-wrap">\n<table${cls}>\n<thead>\n${head}\n</thead>\n` +
      (rows ? `<tbody>\n${rows}\n</tbody>\n` : '') +
      `</table>\n</div>\n`
    );
  };
  renderer.link = function link({ href, tokens }: Tokens.Link): string {
    const inner = this.parser.parseInline(tokens);
    if (!safeHref(href)) return inner;
    return `<a href="${htmlText(htmlHref(href))}">${inner}</a>`;
  };
  renderer.html = ({ text }: Tokens.HTML | Tokens.Tag): string => htmlText(text);
  renderer.image = ({ text }: Tokens.Image): string => htmlText(text);
  renderer.checkbox = (): string => '';

  const marked = new Marked({ gfm: true, async: false, renderer });
  return marked.parse(markdown, { async: false });
}

/**
 * HTML output: the same document plan and the same Markdown sections as the Markdown output
 * (render/document.ts), converted with marked (convert.ts) and wrapped in one page layout
 * (templates/html/layouts/page.html.hbs).
 *
 * - single: one self-contained file, the stylesheet inline, no script, nothing fetched;
 * - folder: index.html + the numbered pages (the Markdown folder's pages, same split) +
 *   assets/styles.css, with the same header, page list, footer and date on every page.
 *
 * Every ```mermaid fence becomes a figure: the diagram as inline SVG (drawn by the given
 * renderer, then made safe and scoped by diagrams/svg.ts) beside its Mermaid source in an
 * HTML comment. Links and anchors (and the SVGs' internal references) are checked before
 * anything is returned.
 */
import { planDocument, type DocumentOptions, type FolderPage, type PageLink } from '../document.js';
import { htmlComment, htmlText, Slugger } from '../../escape/markup.js';
import { diagramSources, type RawDiagramRenderer } from '../diagrams/index.js';
import { prepareSvg } from '../diagrams/svg.js';
import { checkLinks } from '../links.js';
import type { OutputFile, RenderInput } from '../types.js';
import { htmlHref, markdownToHtml, type ConvertContext } from './convert.js';
import { htmlTemplate, stylesheet } from './templates.js';

interface HtmlOptions extends DocumentOptions {
  /** Draws a Mermaid source as SVG (see render/diagrams). */
  diagrams: RawDiagramRenderer;
}

export const HTML_INDEX_FILE = 'index.html';
export const STYLESHEET_FILE = 'assets/styles.css';

/** The note that opens each diagram's source comment (written as is: no hyphen pairs, no angle brackets). */
const SOURCE_NOTE =
  'Mermaid source of the diagram below. To get it back, replace each &#45; with a hyphen, then each &amp; with an ampersand.';

/** `02-x.md` -> `02-x.html`, `README.md` -> `index.html`. */
function htmlFileName(markdownPath: string): string {
  return htmlHref(markdownPath);
}

/**
 * A diagram waiting for its SVG. The pages are converted first with a slot where each SVG
 * goes, and the SVGs are put in last (finishHtml), so the conversion does not wait for the
 * diagram renderer (generate draws the diagrams in a worker thread meanwhile).
 */
interface DiagramSlot {
  slot: string;
  source: string;
  id: string;
  title: string;
}

/** Pages converted to HTML, each diagram's SVG still a slot. */
interface HtmlDraft {
  files: OutputFile[];
  slots: DiagramSlot[];
  /** Links to the code folder's files (outside the document, so not checked against it). */
  codeLinks: string[];
}

/**
 * A slot is an element name no output contains: every `<` of user text is escaped, and the
 * renderer writes no such element; finishHtml checks each slot is filled exactly once.
 */
const slotMarkup = (n: number): string => `<rl-diagram-slot-${n}></rl-diagram-slot-${n}>`;

interface PageContext {
  convert: ConvertContext;
}

function pageContext(input: RenderInput, slots: DiagramSlot[]): PageContext {
  const titles = new Map(diagramSources(input.design).map((d) => [d.source, d.title]));
  let count = 0;
  const convert: ConvertContext = {
    slugger: new Slugger(),
    diagram: (source) => {
      count += 1;
      const id = `rl-diagram-${count}`;
      const title = titles.get(source) ?? 'Diagram';
      const slot = slotMarkup(slots.length + 1);
      slots.push({ slot, source, id, title });
      return [
        `<figure class="diagram">`,
        htmlComment(`${source}\n`, SOURCE_NOTE),
        slot,
        `<figcaption>${htmlText(title)}</figcaption>`,
        `</figure>`,
      ].join('\n');
    },
  };
  return { convert };
}

/** Wraps the "Contents" heading and its list (the end of the single file's head) in a nav. */
function wrapContents(headHtml: string): string {
  const at = headHtml.indexOf('<h2 id="contents">');
  if (at < 0) return headHtml;
  return `${headHtml.slice(0, at)}<nav class="toc" aria-labelledby="contents">\n${headHtml.slice(at).trimEnd()}\n</nav>\n`;
}

interface PagerItem {
  kind: string;
  label: string;
  title: string;
  href: string;
  rel: string;
}

function pager(links: readonly PageLink[]): PagerItem[] {
  return links.map((l) => ({
    kind: l.label === 'Previous' ? 'prev' : l.label === 'Next' ? 'next' : 'home',
    label: l.label,
    title: l.title,
    href: htmlHref(l.href),
    rel: l.label === 'Previous' ? 'prev' : l.label === 'Next' ? 'next' : '',
  }));
}

/**
 * Renders the design as HTML. Paths are relative POSIX paths: `<baseName>.html` for the
 * single file; `index.html`, `01-....html`, ... and `assets/styles.css` for the folder.
 * Throws DeadLinkError (links.ts) when a link, anchor or diagram reference would not
 * resolve, and UnsafeSvgError (diagrams/svg.ts) when a diagram cannot be inlined safely.
 */
export function renderHtml(input: RenderInput, options: HtmlOptions): OutputFile[] {
  return finishHtml(draftHtml(input, options), options.diagrams);
}

/** The HTML pages with a slot for each diagram's SVG: the first half of renderHtml. */
export function draftHtml(input: RenderInput, options: DocumentOptions): HtmlDraft {
  const doc = planDocument(input, options);
  const slots: DiagramSlot[] = [];
  const { projectName, toolVersion, date } = doc.meta;
  const layout = htmlTemplate('page.html.hbs');
  const common = { projectName, toolVersion, date };
  let files: OutputFile[];

  if (doc.layout === 'single') {
    const { convert } = pageContext(input, slots);
    const headHtml = wrapContents(markdownToHtml(doc.head, convert));
    const bodyHtml = markdownToHtml(doc.sections.map((s) => s.markdown).join('\n'), convert);
    files = [
      {
        path: htmlFileName(doc.path),
        content: layout({
          ...common,
          layout: 'single',
          pageTitle: `Rate-limit design: ${projectName}`,
          inlineCss: stylesheet(),
          stylesheet: '',
          homeHref: '',
          nav: [],
          pager: [],
          headHtml,
          bodyHtml,
        }),
      },
    ];
  } else {
    const page = (p: FolderPage): OutputFile => {
      const { convert } = pageContext(input, slots);
      const headHtml = markdownToHtml(p.head, convert);
      const bodyHtml = p.body.map((md) => markdownToHtml(md, convert)).join('\n');
      return {
        path: htmlFileName(p.path),
        content: layout({
          ...common,
          layout: p.kind === 'index' ? 'folder folder-index' : 'folder',
          pageTitle: p.kind === 'index' ? p.title : `${p.title} · Rate-limit design: ${projectName}`,
          inlineCss: '',
          stylesheet: STYLESHEET_FILE,
          homeHref: HTML_INDEX_FILE,
          nav: p.nav.map((n) => ({ label: n.label, href: htmlHref(n.href), current: n.current })),
          pager: pager(p.links),
          headHtml,
          bodyHtml,
        }),
      };
    };
    files = [...doc.pages.map(page), { path: STYLESHEET_FILE, content: stylesheet() }];
  }
  return { files, slots, codeLinks: doc.codeLinks };
}

/**
 * Puts each diagram's SVG (drawn by `diagrams`, made safe and unique by prepareSvg) into
 * its slot, then checks every link: the second half of renderHtml.
 */
export function finishHtml(draft: HtmlDraft, diagrams: RawDiagramRenderer): OutputFile[] {
  const svgs = new Map(draft.slots.map((s) => [s.slot, prepareSvg(diagrams(s.source), { id: s.id, label: s.title })]));
  const filled = new Set<string>();
  const files = draft.files.map((f) => ({
    path: f.path,
    content: f.content.replace(/<rl-diagram-slot-\d+><\/rl-diagram-slot-\d+>/g, (slot) => {
      const svg = svgs.get(slot);
      if (svg === undefined || filled.has(slot)) throw new Error(`rl-design: diagram slot ${slot} is not the renderer's`);
      filled.add(slot);
      return svg;
    }),
  }));
  if (filled.size !== svgs.size) throw new Error('rl-design: a diagram slot went missing from the pages');
  checkLinks(files, draft.codeLinks);
  return files;
}

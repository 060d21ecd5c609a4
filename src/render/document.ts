/**
 * The document plan shared by every output format: which sections exist, in which layout,
 * how they are grouped into pages, what each page's navigation and previous/next links are,
 * and the Markdown of every part. Markdown output writes the assembled Markdown; HTML output
 * converts the same parts (one source, two formats), so both
 * formats choose the same layout and split into the same pages.
 */
import { slugAnchor } from '../escape/markup.js';
import { joinAnd, lineCount } from './format.js';
import type { SectionLinkResolver } from './helpers.js';
import { headings, type Heading } from './links.js';
import { normalizeMarkdown } from './normalize.js';
import { planSections, renderSections, type PlannedSection, type RenderedSection, type SectionId } from './sections/index.js';
import { codeLinks, ruleRow, scopeView } from './sections/views.js';
import { template } from './templates.js';
import type { Layout, RenderInput } from './types.js';

export const DEFAULT_BASE_NAME = 'rate-limit-design';
/** The folder layout's entry page (Markdown name; HTML writes index.html). */
export const INDEX_FILE = 'README.md';

/**
 * When `auto` picks the folder layout: past ~1,500 lines or ~100 KB, or with more than about
 * six top-level sections a reader navigates between; a short design scattered across pages
 * is worse than one page. Every design here has 9-11 top-level sections, so the section
 * count alone would always split; it only counts once the single file is long enough that a
 * reader navigates rather than scrolls: more than 750 lines (about ten screens of running
 * text plus the per-rule details of the limit matrix and the worst-case table, eleven lines a
 * rule; a linked table of contents already heads the single file). Lower, the two-rule
 * generic design (about 500 lines, most of it fixed monitoring, rollout and scenario text)
 * would be cut into pages.
 *
 * The measure is always the single Markdown document without the embedded code, whatever
 * the output format: an HTML page is bigger in bytes (inline SVG, CSS) but not longer to
 * read, and measuring the same source keeps both formats, with or without code, in the
 * same layout.
 */
export const LAYOUT_THRESHOLDS = {
  maxLines: 1500,
  maxBytes: 100_000,
  maxSections: 6,
  minLinesForSections: 750,
} as const;

/** The page-count bounds of the folder layout, and the size under which a page is merged. */
const MIN_PAGES = 4;
const MAX_PAGES = 8;
const MIN_PAGE_LINES = 40;

export interface DocumentStats {
  /** Lines of the single-file document. */
  lines: number;
  /** Its size in UTF-8 bytes. */
  bytes: number;
  /** Its number of top-level (numbered) sections. */
  sections: number;
}

/**
 * The layout `auto` resolves to: folder when the single document passes 1,500 lines or
 * 100,000 bytes, or has more than six top-level sections and more than 750 lines; single
 * otherwise.
 */
export function chooseLayout(stats: DocumentStats): Layout {
  const t = LAYOUT_THRESHOLDS;
  if (stats.lines > t.maxLines || stats.bytes > t.maxBytes) return 'folder';
  if (stats.sections > t.maxSections && stats.lines > t.minLinesForSections) return 'folder';
  return 'single';
}

export function documentStats(content: string, sections: number): DocumentStats {
  return { lines: lineCount(content), bytes: Buffer.byteLength(content, 'utf8'), sections };
}

export interface DocumentOptions {
  layout: Layout | 'auto';
  /** File name (without extension) of the single-file layout; default `rate-limit-design`. */
  baseName?: string;
}

/** An item of the folder layout's page list. */
interface NavItem {
  label: string;
  /** Markdown file name of the page. */
  href: string;
  current: boolean;
}

/** A previous / next / home link at the foot of a folder page (`label` empty for home). */
export interface PageLink {
  label: string;
  title: string;
  href: string;
}

interface DocumentMeta {
  projectName: string;
  toolVersion: string;
  date: string;
}

interface SingleDocument {
  layout: 'single';
  meta: DocumentMeta;
  /** Links out of the document to the code folder's files (the link checker accepts exactly these). */
  codeLinks: string[];
  /** `<baseName>.md`. */
  path: string;
  /** Title, intro and the linked table of contents (Markdown). */
  head: string;
  sections: RenderedSection[];
  /** The whole Markdown file. */
  markdown: string;
}

export interface FolderPage {
  kind: 'index' | 'section';
  /** Markdown file name (`README.md`, `01-....md`). */
  path: string;
  title: string;
  /** The page's title heading (Markdown). */
  head: string;
  /** The page's content (Markdown): its sections, or the index body. */
  body: string[];
  sections: PlannedSection[];
  /** The page list, identical on every page except for which item is current. */
  nav: NavItem[];
  /** Previous, next and home. */
  links: PageLink[];
  /** The whole Markdown file. */
  markdown: string;
}

interface FolderDocument {
  layout: 'folder';
  meta: DocumentMeta;
  /** Links out of the document to the code folder's files (the link checker accepts exactly these). */
  codeLinks: string[];
  /** The index first, then the numbered pages. */
  pages: FolderPage[];
}

type DocumentPlan = SingleDocument | FolderDocument;

function checkBaseName(name: string, ext = '.md'): string {
  const base = name.endsWith(ext) ? name.slice(0, -ext.length) : name;
  if (base === '' || base === '.' || base === '..' || /[/\\\u0000-\u001f]/.test(base)) {
    throw new Error(`rl-design: "${name}" cannot be a document file name`);
  }
  return base;
}

/** Plans the document in the requested layout (`auto` measures the single Markdown file). */
export function planDocument(input: RenderInput, options: DocumentOptions): DocumentPlan {
  const baseName = checkBaseName(options.baseName ?? DEFAULT_BASE_NAME);
  const plan = planSections(input);
  // The layout and the page split are measured on the document without the embedded code,
  // so writing the code too (--code-dir) never changes which pages there are.
  const measured = input.codeFiles?.length ? planSingle(withoutCode(input), plan, baseName) : undefined;
  const folderInput = { ...input, ...(input.codeHref ? { codeBase: input.codeHref.folder } : {}) };
  if (options.layout === 'folder') return planFolder(folderInput, plan, measured?.sections);
  const single = planSingle({ ...input, ...(input.codeHref ? { codeBase: input.codeHref.single } : {}) }, plan, baseName);
  const reference = measured ?? single;
  if (options.layout === 'auto' && chooseLayout(documentStats(reference.markdown, plan.length)) === 'folder') {
    return planFolder(folderInput, plan, reference.sections);
  }
  return single;
}

function withoutCode(input: RenderInput): RenderInput {
  const { codeFiles: _code, codeBase: _base, ...rest } = input;
  return rest;
}

function meta(input: RenderInput): DocumentMeta {
  return {
    projectName: input.design.scope.projectName,
    toolVersion: input.design.meta.toolVersion,
    date: input.design.meta.date,
  };
}

// ---------------------------------------------------------------------------------------
// Single file

function planSingle(input: RenderInput, plan: PlannedSection[], baseName: string): SingleDocument {
  const links: SectionLinkResolver = (id) => {
    const s = plan.find((p) => p.id === id);
    return s ? { label: s.heading, href: `#${s.anchor}` } : undefined;
  };
  const sections = renderSections(input, plan, links);
  const body = sections.map((s) => s.markdown).join('\n');
  // Anchors as the finished file will have them: the title and "Contents" come first.
  const headOf = (toc: TocEntry[]): string => template('layouts/single-head.md.hbs')({ ...meta(input), toc }, links);
  const all = headings(`${headOf([])}\n${body}`).slice(2);
  const head = headOf(tableOfContents(all));
  return {
    layout: 'single',
    meta: meta(input),
    codeLinks: codeLinks(input),
    path: `${baseName}.md`,
    head,
    sections,
    markdown: normalizeMarkdown(`${head}\n${body}`),
  };
}

interface TocEntry {
  label: string;
  href: string;
  children: { label: string; href: string }[];
}

/** Level-2 headings with their level-3 children, linked within the same file. */
function tableOfContents(list: Heading[], file = ''): TocEntry[] {
  const toc: TocEntry[] = [];
  for (const h of list) {
    if (h.level === 2) toc.push({ label: h.text, href: `${file}#${h.anchor}`, children: [] });
    else if (h.level === 3) toc[toc.length - 1]?.children.push({ label: h.text, href: `${file}#${h.anchor}` });
  }
  return toc;
}

// ---------------------------------------------------------------------------------------
// Folder

/** The default grouping of sections into pages (on top-level section boundaries only). */
const GROUPS: readonly SectionId[][] = [
  ['scope', 'matrix'],
  ['algorithms', 'enforcement'],
  ['contract'],
  ['quotas', 'outbound'],
  ['monitoring', 'rollout'],
  ['scenarios', 'constraints'],
];

export interface Page {
  file: string;
  title: string;
  /** The section numbers the page holds: "4", or "1-2". */
  numbers: string;
  sections: PlannedSection[];
}

/**
 * Groups the present sections into 4-8 pages: the default groups without the absent
 * sections, a page shorter than a screenful merged into its shorter neighbour (while more
 * than four pages remain), and a page of several sections that would still pass the line
 * threshold split into one page per section (while fewer than eight pages exist).
 */
export function groupPages(plan: PlannedSection[], linesOf: (id: SectionId) => number): Page[] {
  let groups = GROUPS.map((ids) => plan.filter((p) => ids.includes(p.id))).filter((g) => g.length > 0);
  const size = (g: PlannedSection[]): number => g.reduce((n, s) => n + linesOf(s.id), 0);

  for (;;) {
    if (groups.length <= MIN_PAGES) break;
    let smallest = -1;
    groups.forEach((g, i) => {
      if (size(g) < MIN_PAGE_LINES && (smallest < 0 || size(g) < size(groups[smallest] ?? []))) smallest = i;
    });
    if (smallest < 0) break;
    const prev = groups[smallest - 1];
    const next = groups[smallest + 1];
    const intoPrev = prev !== undefined && (next === undefined || size(prev) <= size(next));
    const target = intoPrev ? smallest - 1 : smallest + 1;
    const merged = intoPrev
      ? [...(groups[target] ?? []), ...(groups[smallest] ?? [])]
      : [...(groups[smallest] ?? []), ...(groups[target] ?? [])];
    groups = groups.flatMap((g, i) => (i === smallest ? [] : i === target ? [merged] : [g]));
  }

  for (let i = 0; i < groups.length && groups.length < MAX_PAGES; i += 1) {
    const g = groups[i] ?? [];
    if (g.length > 1 && size(g) > LAYOUT_THRESHOLDS.maxLines) {
      const parts = g.map((s) => [s]).slice(0, MAX_PAGES - groups.length + 1);
      const rest = g.slice(parts.length);
      if (rest.length > 0) parts[parts.length - 1] = [...(parts[parts.length - 1] ?? []), ...rest];
      groups.splice(i, 1, ...parts);
      i += parts.length - 1;
    }
  }

  // A page is numbered by the first section it holds, so `04-enforcement.md` opens with "4. Enforcement".
  return groups.map((g) => {
    const name = joinAnd(g.map((s) => s.short));
    const first = g[0]?.num ?? 0;
    const last = g[g.length - 1]?.num ?? first;
    const nn = String(first).padStart(2, '0');
    return {
      file: `${nn}-${slugAnchor(name)}.md`,
      title: name.charAt(0).toUpperCase() + name.slice(1),
      numbers: first === last ? String(first) : `${first}-${last}`,
      sections: g,
    };
  });
}

function planFolder(input: RenderInput, plan: PlannedSection[], rendered?: readonly RenderedSection[]): FolderDocument {
  // Measure each section once (links do not change its length), without the embedded code, to group the pages.
  const measured = rendered ?? renderSections(withoutCode(input), plan, () => undefined);
  const pages = groupPages(plan, (id) => lineCount(measured.find((s) => s.id === id)?.markdown ?? ''));
  const pageOf = (id: string): Page | undefined => pages.find((p) => p.sections.some((s) => s.id === id));
  const resolverFor =
    (from: Page | undefined): SectionLinkResolver =>
    (id) => {
      const page = pageOf(id);
      const s = plan.find((p) => p.id === id);
      if (!page || !s) return undefined;
      return { label: s.heading, href: `${page === from ? '' : page.file}#${s.anchor}` };
    };

  const navItems = (current: string): NavItem[] => [
    { label: 'Home', href: INDEX_FILE, current: current === INDEX_FILE },
    ...pages.map((p) => ({ label: `${p.numbers}. ${p.title}`, href: p.file, current: current === p.file })),
  ];
  const navMarkdown = (nav: NavItem[]): string => template('layouts/nav.md.hbs')({ nav }, undefined);
  const footMarkdown = (links: PageLink[]): string => template('layouts/page-foot.md.hbs')({ ...meta(input), links }, undefined);
  const headMarkdown = (title: string): string => template('layouts/page-head.md.hbs')({ title }, undefined);

  const out: FolderPage[] = [];
  pages.forEach((page, i) => {
    const sections = renderSections(input, page.sections, resolverFor(page));
    const prev = i === 0 ? { label: 'Previous', title: 'Home', href: INDEX_FILE } : pageLink('Previous', pages[i - 1]);
    const next = pageLink('Next', pages[i + 1]);
    const links = [prev, ...(next ? [next] : []), ...(i === 0 ? [] : [{ label: '', title: 'Home', href: INDEX_FILE }])].filter(
      (l): l is PageLink => l !== undefined,
    );
    const head = headMarkdown(page.title);
    const nav = navItems(page.file);
    const body = sections.map((s) => s.markdown);
    out.push({
      kind: 'section',
      path: page.file,
      title: page.title,
      head,
      body,
      sections: page.sections,
      nav,
      links,
      markdown: normalizeMarkdown([head, navMarkdown(nav), ...body, footMarkdown(links)].join('\n\n')),
    });
  });

  const title = `Rate-limit design: ${input.design.scope.projectName}`;
  const index = indexPage(input, pages, resolverFor(undefined));
  const first = pageLink('Next', pages[0]);
  const links = first ? [first] : [];
  const head = headMarkdown(title);
  const nav = navItems(INDEX_FILE);
  out.unshift({
    kind: 'index',
    path: INDEX_FILE,
    title,
    head,
    body: [index],
    sections: [],
    nav,
    links,
    markdown: normalizeMarkdown([head, navMarkdown(nav), index, footMarkdown(links)].join('\n\n')),
  });
  return { layout: 'folder', meta: meta(input), codeLinks: codeLinks(input), pages: out };
}

function pageLink(label: string, page: Page | undefined): PageLink | undefined {
  return page ? { label, title: page.title, href: page.file } : undefined;
}

const GLANCE_FACTS = ['Protects against', 'Stack', 'Topology', 'Gateway / reverse proxy', 'Limiter store', 'Traffic'];

function indexPage(input: RenderInput, pages: Page[], links: SectionLinkResolver): string {
  const d = input.design;
  const facts = (scopeView(input).facts as { what: string; answer: string }[]).filter((f) => GLANCE_FACTS.includes(f.what));
  const at = (id: SectionId): { label: string; href?: string } => {
    const target = links(id);
    return target ? { label: target.label, href: target.href } : { label: 'not part of this design' };
  };
  const codeDir = d.output.codeDir;
  // The page holding the matrix, where each rule's details are.
  const matrixPage = (links('matrix')?.href ?? '').split('#')[0] ?? '';
  const deliverables = [
    { what: 'Limit matrix', ...at('matrix') },
    { what: 'Algorithm decisions', ...at('algorithms') },
    {
      what: 'Enforcement code and placement',
      ...at('enforcement'),
      codeDir: codeDir ?? '',
    },
    { what: 'Response contract', ...at('contract') },
    { what: 'Quota design', ...(d.quotas ? at('quotas') : { label: 'none: no plan quotas' }) },
    { what: 'Outbound limiter design', ...(d.outbound ? at('outbound') : { label: 'none: no third-party APIs' }) },
    { what: 'Monitoring configuration', ...at('monitoring') },
    { what: 'Rollout plan', ...at('rollout') },
    { what: 'Test scenarios', ...at('scenarios') },
    { what: 'Constraint check', ...at('constraints') },
  ];
  return template('layouts/index-body.md.hbs')(
    {
      generic: d.meta.generic,
      description: d.scope.description ?? '',
      scopeFacts: facts,
      rules: d.rules.map((r) => ({ ...ruleRow(r), detailsHref: `${matrixPage}#rule-${r.id}` })),
      pageCount: pages.length,
      pages: pages.map((p) => ({
        title: p.title,
        href: p.file,
        sections: p.sections.map((s) => ({ label: s.heading, href: `${p.file}#${s.anchor}`, summary: s.summary })),
      })),
      deliverables,
    },
    links,
  );
}

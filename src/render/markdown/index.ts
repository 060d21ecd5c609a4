/**
 * Markdown output: the sections assembled into one file, or into a linked folder (README.md
 * index + numbered pages). Layouts differ only in how links resolve and how sections are
 * grouped into files; the section templates are the same. Every relative link and anchor
 * is checked before anything is returned.
 */
import { slugAnchor } from '../escape.js';
import { joinAnd } from '../format.js';
import type { SectionLinkResolver } from '../helpers.js';
import { checkLinks, headings, type Heading } from '../links.js';

export { DeadLinkError } from '../links.js';
import { normalizeMarkdown } from '../normalize.js';
import { planSections, renderSections, type PlannedSection, type SectionId } from '../sections/index.js';
import { ruleRow, scopeView } from '../sections/views.js';
import { template } from '../templates.js';
import type { Layout, OutputFile, RenderInput } from '../types.js';

export interface MarkdownOptions {
  layout: Layout | 'auto';
  /** File name (without .md) of the single-file layout; default `rate-limit-design`. */
  baseName?: string;
}

export const DEFAULT_BASE_NAME = 'rate-limit-design';
/** The folder layout's entry page. */
export const INDEX_FILE = 'README.md';

/**
 * When `auto` picks the folder layout. The seed (Phase 0) asks for a folder past ~1,500
 * lines or ~100 KB, or with more than about six top-level sections a reader navigates
 * between, and warns that a short design scattered across pages is worse than one page.
 * Every design here has 9-11 top-level sections, so the section count alone would always
 * split; it only counts once the single file is long enough that a reader navigates rather
 * than scrolls: more than 600 lines (about ten screens; a linked table of contents already
 * heads the single file). At 400, the two-rule generic design (about 410 lines, most of it
 * fixed monitoring, rollout and scenario text) would be cut into five pages.
 */
export const LAYOUT_THRESHOLDS = {
  maxLines: 1500,
  maxBytes: 100_000,
  maxSections: 6,
  minLinesForSections: 600,
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
 * 100,000 bytes, or has more than six top-level sections and more than 600 lines; single
 * otherwise.
 */
export function chooseLayout(stats: DocumentStats): Layout {
  const t = LAYOUT_THRESHOLDS;
  if (stats.lines > t.maxLines || stats.bytes > t.maxBytes) return 'folder';
  if (stats.sections > t.maxSections && stats.lines > t.minLinesForSections) return 'folder';
  return 'single';
}

export function documentStats(content: string, sections: number): DocumentStats {
  const lines = content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
  return { lines, bytes: Buffer.byteLength(content, 'utf8'), sections };
}

/**
 * Renders the design as Markdown. Paths are relative POSIX paths: for `single`, the one
 * file `<baseName>.md`; for `folder`, the files inside the folder (`README.md`,
 * `01-....md`, ...). Throws DeadLinkError (links.ts) when a link would not resolve.
 */
export function renderMarkdown(input: RenderInput, options: MarkdownOptions): OutputFile[] {
  const baseName = checkBaseName(options.baseName ?? DEFAULT_BASE_NAME);
  const plan = planSections(input);
  let files: OutputFile[];
  if (options.layout === 'folder') {
    files = renderFolder(input, plan);
  } else {
    const single = renderSingle(input, plan, baseName);
    files =
      options.layout === 'auto' && chooseLayout(documentStats(single.content, plan.length)) === 'folder'
        ? renderFolder(input, plan)
        : [single];
  }
  checkLinks(files);
  return files;
}

function checkBaseName(name: string): string {
  const base = name.endsWith('.md') ? name.slice(0, -3) : name;
  if (base === '' || base === '.' || base === '..' || /[/\\\u0000-\u001f]/.test(base)) {
    throw new Error(`rl-design: "${name}" cannot be a document file name`);
  }
  return base;
}

const common = (input: RenderInput) => ({
  projectName: input.design.scope.projectName,
  toolVersion: input.design.meta.toolVersion,
  date: input.design.meta.date,
});

// ---------------------------------------------------------------------------------------
// Single file

function renderSingle(input: RenderInput, plan: PlannedSection[], baseName: string): OutputFile {
  const links: SectionLinkResolver = (id) => {
    const s = plan.find((p) => p.id === id);
    return s ? { label: s.heading, href: `#${s.anchor}` } : undefined;
  };
  const sections = renderSections(input, plan, links);
  const body = sections.map((s) => s.markdown).join('\n');
  // Anchors as the finished file will have them: the title and "Contents" come first.
  const head = (toc: TocEntry[]): string => template('layouts/single-head.md.hbs')({ ...common(input), toc }, links);
  const all = headings(`${head([])}\n${body}`).slice(2);
  return { path: `${baseName}.md`, content: normalizeMarkdown(`${head(tableOfContents(all))}\n${body}`) };
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

interface Page {
  file: string;
  title: string;
  sections: PlannedSection[];
}

function lineCount(text: string): number {
  return text.split('\n').length;
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

  return groups.map((g, i) => {
    const name = joinAnd(g.map((s) => s.short));
    const nn = String(i + 1).padStart(2, '0');
    return { file: `${nn}-${slugAnchor(name)}.md`, title: name.charAt(0).toUpperCase() + name.slice(1), sections: g };
  });
}

function renderFolder(input: RenderInput, plan: PlannedSection[]): OutputFile[] {
  // Measure each section once (links do not change its length) to group the pages.
  const measured = renderSections(input, plan, () => undefined);
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

  const nav = (current: string): string =>
    template('layouts/nav.md.hbs')(
      {
        nav: [
          { label: 'Home', href: INDEX_FILE, current: current === INDEX_FILE },
          ...pages.map((p) => ({ label: p.title, href: p.file, current: current === p.file })),
        ],
      },
      undefined,
    );
  const foot = (links: { label: string; title: string; href: string }[]): string =>
    template('layouts/page-foot.md.hbs')({ ...common(input), links }, undefined);

  const files: OutputFile[] = [];
  pages.forEach((page, i) => {
    const sections = renderSections(input, page.sections, resolverFor(page));
    const prev = i === 0 ? { label: 'Previous', title: 'Home', href: INDEX_FILE } : pageLink('Previous', pages[i - 1]);
    const next = pageLink('Next', pages[i + 1]);
    const links = [prev, ...(next ? [next] : []), ...(i === 0 ? [] : [{ label: '', title: 'Home', href: INDEX_FILE }])].filter(
      (l): l is { label: string; title: string; href: string } => l !== undefined,
    );
    const head = template('layouts/page-head.md.hbs')({ title: page.title }, undefined);
    files.push({
      path: page.file,
      content: normalizeMarkdown([head, nav(page.file), ...sections.map((s) => s.markdown), foot(links)].join('\n\n')),
    });
  });

  const index = indexPage(input, pages, resolverFor(undefined));
  const first = pageLink('Next', pages[0]);
  files.unshift({
    path: INDEX_FILE,
    content: normalizeMarkdown(
      [
        template('layouts/page-head.md.hbs')({ title: `Rate-limit design: ${input.design.scope.projectName}` }, undefined),
        nav(INDEX_FILE),
        index,
        foot(first ? [first] : []),
      ].join('\n\n'),
    ),
  });
  return files;
}

function pageLink(label: string, page: Page | undefined): { label: string; title: string; href: string } | undefined {
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
      rules: d.rules.map(ruleRow),
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

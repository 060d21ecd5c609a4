/**
 * The HTML documents in a real browser: Debian's Chromium (/usr/bin/chromium, installed by
 * scripts/setup.sh; never a browser download), headless, driven by playwright-core. Every
 * example in both layouts is opened from file:// and must:
 * - make no request other than file:// (any other is aborted and fails the test), and no
 *   file request may fail (a missing stylesheet would);
 * - log no console error and throw no page error;
 * - draw every SVG with a non-zero box, no label outside its node or the drawing;
 * - have every table of contents, page-list, pager and in-text link resolve to an element
 *   on an existing page;
 * - never scroll the page sideways (wide tables and diagrams scroll inside themselves), at
 *   desktop and phone widths, in light and dark schemes.
 * Screenshots go to test-artifacts/browser/ (gitignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBeautifulMermaid } from '../../src/render/diagrams/beautiful.js';
import { Slugger } from '../../src/escape/index.js';
import { markdownToHtml } from '../../src/render/html/convert.js';
import { renderHtml } from '../../src/render/html/index.js';
import { stylesheet } from '../../src/render/html/templates.js';
import type { OutputFile } from '../../src/render/types.js';
import { EXAMPLES, exampleInput } from '../render/fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/browser');
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Document {
  name: string;
  dir: string;
  files: OutputFile[];
  pages: string[];
}

let context: BrowserContext;
let profile: string;
let root: string;
const documents: Document[] = [];
const foreignRequests: string[] = [];
const failedRequests: string[] = [];

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/setup.sh (apt-get install chromium)`).toBe(true);
  mkdirSync(ARTIFACTS, { recursive: true });
  root = mkdtempSync(path.join(tmpdir(), 'rl-design-browser-'));
  const diagrams = await loadBeautifulMermaid();
  for (const name of EXAMPLES) {
    for (const layout of ['single', 'folder'] as const) {
      const files = renderHtml(exampleInput(name), { layout, diagrams });
      const dir = path.join(root, `${name}-${layout}`);
      for (const f of files) {
        const target = path.join(dir, ...f.path.split('/'));
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, f.content);
      }
      documents.push({ name: `${name}-${layout}`, dir, files, pages: files.filter((f) => f.path.endsWith('.html')).map((f) => f.path) });
    }
  }
  profile = mkdtempSync(path.join(tmpdir(), 'rl-design-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    // scrollbars as a reader's browser draws them (playwright hides them by default)
    ignoreDefaultArgs: ['--hide-scrollbars'],
    viewport: { width: 1280, height: 900 },
    offline: false,
  });
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) await route.continue();
    else {
      foreignRequests.push(url);
      await route.abort();
    }
  });
  context.on('request', (r) => {
    if (!r.url().startsWith('file:')) foreignRequests.push(r.url());
  });
  context.on('requestfailed', (r) => failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? ''}`));
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  if (root) rmSync(root, { recursive: true, force: true });
});

interface PageReport {
  ids: string[];
  links: { href: string; where: string }[];
  svgs: { id: string; width: number; height: number; overflow: string[] }[];
  horizontalOverflow: number;
  fontFamily: string;
  background: string;
}

/** Everything the checks need, measured in the page. */
async function inspect(page: Page): Promise<PageReport> {
  return page.evaluate(() => {
    const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
    const links = [...document.querySelectorAll('a[href]')].map((a) => ({
      href: a.getAttribute('href') ?? '',
      where: a.closest('nav.toc') ? 'toc' : a.closest('nav.pages') ? 'nav' : a.closest('nav.pager') ? 'pager' : 'text',
    }));
    const TOLERANCE = 0.5;
    const inside = (inner: DOMRect, outer: DOMRect): boolean =>
      inner.x >= outer.x - TOLERANCE &&
      inner.y >= outer.y - TOLERANCE &&
      inner.x + inner.width <= outer.x + outer.width + TOLERANCE &&
      inner.y + inner.height <= outer.y + outer.height + TOLERANCE;
    const svgs = [...document.querySelectorAll('svg')].map((svg) => {
      const box = svg.getBoundingClientRect();
      const view = svg.viewBox.baseVal;
      const drawing = new DOMRect(view.x, view.y, view.width, view.height);
      const overflow: string[] = [];
      for (const text of svg.querySelectorAll('text')) {
        const t = text.getBBox();
        if (t.width === 0) continue;
        const group = text.parentElement;
        const shape = group && group !== (svg as Element) ? group.querySelector(':scope > rect') : null;
        const container = shape ? (shape as SVGGraphicsElement).getBBox() : drawing;
        if (!inside(t, container)) overflow.push(`"${text.textContent}" (${shape ? 'its box' : 'the drawing'})`);
      }
      return { id: svg.id, width: box.width, height: box.height, overflow };
    });
    return {
      ids,
      links,
      svgs,
      horizontalOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      fontFamily: getComputedStyle(document.body).fontFamily,
      background: getComputedStyle(document.body).backgroundColor,
    };
  });
}

async function open(file: string, options: { width?: number; scheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewportSize({ width: options.width ?? 1280, height: 900 });
  await page.emulateMedia({ colorScheme: options.scheme ?? 'light' });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, errors };
}

describe.each(EXAMPLES.flatMap((name) => (['single', 'folder'] as const).map((layout) => `${name}-${layout}`)))(
  '%s in Chromium',
  (docName) => {
    const reports = new Map<string, PageReport>();
    const doc = (): Document => documents.find((d) => d.name === docName) as Document;

    it('loads every page from disk with no network request, no failed request and no console error', async () => {
      for (const file of doc().pages) {
        const before = { foreign: foreignRequests.length, failed: failedRequests.length };
        const { page, errors } = await open(path.join(doc().dir, file));
        reports.set(file, await inspect(page));
        const shot = path.join(ARTIFACTS, `${docName}-${file.replace(/\.html$/, '')}.png`);
        await page.screenshot({ path: shot });
        let n = 0;
        for (const figure of await page.locator('figure.diagram').all()) {
          n += 1;
          await figure.screenshot({ path: shot.replace(/\.png$/, `-diagram-${n}.png`) });
        }
        await page.close();
        expect(errors, file).toEqual([]);
        expect(foreignRequests.slice(before.foreign), file).toEqual([]);
        expect(failedRequests.slice(before.failed), file).toEqual([]);
      }
    });

    it('uses its stylesheet (inline, or the folder one)', () => {
      for (const [file, report] of reports) {
        expect(report.fontFamily, file).toContain('system-ui');
        expect(report.background, file).toBe('rgb(255, 255, 255)');
      }
    });

    it('draws every diagram with a box, and no label outside its node or the drawing', () => {
      const all = [...reports.entries()].flatMap(([file, r]) => r.svgs.map((s) => ({ file, ...s })));
      const { design } = exampleInput(docName.replace(/-(single|folder)$/, ''));
      const expected = [design.enforcement.placementDiagram, design.contract.sequenceDiagram, design.outbound?.circuitDiagram].filter(
        Boolean,
      ).length;
      expect(all).toHaveLength(expected);
      for (const svg of all) {
        expect(svg.width, `${svg.file} #${svg.id}`).toBeGreaterThan(50);
        expect(svg.height, `${svg.file} #${svg.id}`).toBeGreaterThan(50);
        expect(svg.overflow, `${svg.file} #${svg.id}`).toEqual([]);
      }
    });

    it('resolves every contents, page-list, pager and in-text link to an element on an existing page', () => {
      const pages = doc().pages;
      let checked = 0;
      for (const [file, report] of reports) {
        expect(new Set(report.ids).size, `${file}: ids are unique`).toBe(report.ids.length);
        for (const { href, where } of report.links) {
          if (/^https?:/.test(href)) continue;
          const [target = '', anchor] = href.split('#');
          const page = target === '' ? file : target;
          expect(pages, `${file} (${where}): ${href}`).toContain(page);
          if (anchor !== undefined) expect(reports.get(page)?.ids, `${file} (${where}): ${href}`).toContain(decodeURIComponent(anchor));
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThan(10);
      const wheres = new Set([...reports.values()].flatMap((r) => r.links.map((l) => l.where)));
      expect([...wheres].sort()).toEqual(docName.endsWith('-single') ? ['text', 'toc'] : ['nav', 'pager', 'text']);
    });

    it('never scrolls the page sideways: tables and diagrams scroll inside themselves', () => {
      for (const [file, report] of reports) expect(report.horizontalOverflow, file).toBeLessThanOrEqual(0);
    });

    it('fits a phone screen and follows the dark scheme', async () => {
      const first = path.join(doc().dir, doc().pages[doc().pages.length > 1 ? 1 : 0] ?? '');
      const { page, errors } = await open(first, { width: 390, scheme: 'dark' });
      const report = await inspect(page);
      await page.screenshot({ path: path.join(ARTIFACTS, `${docName}-phone-dark.png`) });
      await page.close();
      expect(errors).toEqual([]);
      expect(report.horizontalOverflow).toBeLessThanOrEqual(0);
      expect(report.background).toBe('rgb(13, 17, 23)');
      for (const svg of report.svgs) expect(svg.width).toBeGreaterThan(50);
    });
  },
);

interface ReaderReport {
  /** Tables and diagrams wider than their frame, and what shows that they scroll. */
  scrolling: { table: string; overflow: number; scrollbar: number; shadow: boolean }[];
  /** Cells whose content is wider than the cell (cut off, or spilling over the next one). */
  clippedCells: string[];
  /** The limit matrix: how far its last column ends past the frame's right edge (<= 0: all visible). */
  matrix?: { columns: string[]; hiddenRight: number; stacked: boolean };
  /** Every diagram label's size as drawn, in CSS pixels. */
  diagramText: { text: string; px: number }[];
}

/** What a reader sees of the tables and diagrams of a page. */
async function readerView(page: Page): Promise<ReaderReport> {
  return page.evaluate(() => {
    const name = (t: Element): string => [...t.querySelectorAll('thead th')].map((th) => th.textContent?.trim()).join(' | ');
    const scrolling = [...document.querySelectorAll('.table-wrap')]
      .filter((w) => w.scrollWidth > w.clientWidth + 1)
      .map((w) => {
        const el = w as HTMLElement;
        const style = getComputedStyle(el);
        const borders = Number.parseFloat(style.borderTopWidth) + Number.parseFloat(style.borderBottomWidth);
        return {
          table: name(w.querySelector('table') as Element),
          overflow: w.scrollWidth - w.clientWidth,
          scrollbar: el.offsetHeight - el.clientHeight - borders,
          shadow: /radial-gradient/.test(style.backgroundImage) && style.backgroundAttachment.includes('local'),
        };
      });
    // (a stacked table's header row is hidden: each cell shows its column's name instead)
    const clippedCells = [...document.querySelectorAll('td, th')]
      .filter((c) => !(c.tagName === 'TH' && getComputedStyle(c.closest('table') as Element).display === 'block'))
      .filter((c) => c.scrollWidth > c.clientWidth + 1)
      .map((c) => `${name(c.closest('table') as Element)}: "${c.textContent?.slice(0, 60)}"`);
    const matrixTable = [...document.querySelectorAll('table')].find((t) => name(t).startsWith('Rule | Applies to | Identity'));
    let matrix: ReaderReport['matrix'];
    if (matrixTable) {
      const wrap = matrixTable.closest('.table-wrap') as HTMLElement;
      const frame = wrap.getBoundingClientRect();
      const cells = [...matrixTable.querySelectorAll('tbody tr:first-child td')].map((td) => td.getBoundingClientRect());
      matrix = {
        columns: [...matrixTable.querySelectorAll('thead th')].map((th) => th.textContent ?? ''),
        hiddenRight: Math.max(...cells.map((r) => r.right)) - frame.right,
        stacked: getComputedStyle(matrixTable).display === 'block',
      };
    }
    for (const f of document.querySelectorAll('figure.diagram')) {
      if (f.scrollWidth <= f.clientWidth + 1) continue;
      const el = f as HTMLElement;
      const style = getComputedStyle(el);
      const borders = Number.parseFloat(style.borderTopWidth) + Number.parseFloat(style.borderBottomWidth);
      scrolling.push({
        table: `diagram ${f.querySelector('figcaption')?.textContent ?? ''}`,
        overflow: f.scrollWidth - f.clientWidth,
        scrollbar: el.offsetHeight - el.clientHeight - borders,
        shadow: /radial-gradient/.test(style.backgroundImage) && style.backgroundAttachment.includes('local'),
      });
    }
    const diagramText = [...document.querySelectorAll('figure.diagram svg')].flatMap((svg) => {
      const scale = svg.getBoundingClientRect().width / (svg as SVGSVGElement).viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')]
        .filter((t) => (t.textContent ?? '').trim() !== '')
        .map((t) => ({ text: t.textContent ?? '', px: Number.parseFloat(getComputedStyle(t).fontSize) * scale }));
    });
    return { scrolling, clippedCells, diagramText, ...(matrix ? { matrix } : {}) };
  });
}

const VIEWS = [
  { width: 1280, scheme: 'light' },
  { width: 1280, scheme: 'dark' },
  { width: 390, scheme: 'light' },
  { width: 390, scheme: 'dark' },
] as const;

describe.each(EXAMPLES)('%s as a reader sees it', (name) => {
  const pagesOf = (layout: 'single' | 'folder'): { file: string; dir: string }[] => {
    const doc = documents.find((d) => d.name === `${name}-${layout}`) as Document;
    return doc.pages.map((file) => ({ file, dir: doc.dir }));
  };

  it.each(VIEWS)(
    'at $width px, $scheme: no table cut off without a visible scroll cue, the matrix whole, diagram labels >= 12 px on a phone',
    async ({ width, scheme }) => {
      let matrices = 0;
      let scrolled = 0;
      for (const { file, dir } of [...pagesOf('single'), ...pagesOf('folder')]) {
        const { page, errors } = await open(path.join(dir, file), { width, scheme });
        const view = await readerView(page);
        const where = `${name} ${file} ${width} ${scheme}`;
        if (view.matrix) {
          matrices += 1;
          expect(view.matrix.columns, where).toEqual(['Rule', 'Applies to', 'Identity', 'Rate and burst', 'Fail mode', 'Layer']);
          // every key column in view without scrolling: the whole row inside the frame
          expect(view.matrix.hiddenRight, where).toBeLessThanOrEqual(1);
          // a phone stacks the matrix into one card per rule
          expect(view.matrix.stacked, where).toBe(width < 640);
          const shot = path.join(ARTIFACTS, `reader-${name}-${file.replace(/\.html$/, '')}-matrix-${width}-${scheme}.png`);
          await page.evaluate(() =>
            [...document.querySelectorAll('table')]
              .find(
                (t) =>
                  t.querySelector('thead th')?.textContent === 'Rule' && t.querySelectorAll('thead th')[1]?.textContent === 'Applies to',
              )
              ?.closest('.table-wrap')
              ?.previousElementSibling?.scrollIntoView(),
          );
          await page.screenshot({ path: shot });
        }
        // a table or diagram that scrolls shows it: a scrollbar that stays visible, and the edge shadow
        scrolled += view.scrolling.length;
        for (const t of view.scrolling) {
          expect(t.scrollbar, `${where}: ${t.table} scrolls by ${t.overflow}px`).toBeGreaterThan(0);
          expect(t.shadow, `${where}: ${t.table}`).toBe(true);
        }
        expect(view.clippedCells, where).toEqual([]);
        if (width === 390) {
          const small = view.diagramText.filter((t) => t.px < 11.95);
          expect(small, where).toEqual([]);
          let n = 0;
          for (const figure of await page.locator('figure.diagram').all()) {
            n += 1;
            await figure.scrollIntoViewIfNeeded();
            await page.screenshot({
              path: path.join(ARTIFACTS, `reader-${name}-${file.replace(/\.html$/, '')}-diagram-${n}-${width}-${scheme}.png`),
            });
          }
        }
        await page.close();
        expect(errors, where).toEqual([]);
      }
      expect(matrices).toBe(2); // once in the single file, once on the folder's matrix page
      // on a phone the diagrams keep a readable size and scroll, so the cue was checked above
      if (width === 390) expect(scrolled).toBeGreaterThan(0);
    },
  );
});

describe('a table too wide for its column', () => {
  it.each([1280, 390])('at %i px scrolls inside its frame with a visible scrollbar and edge shadow, never the page', async (width) => {
    const long = `\`${'rl:{tenant}:'.repeat(20)}\``;
    const body = markdownToHtml(`| Key | What |\n| --- | --- |\n| ${long} | a key pattern far wider than any screen |\n`, {
      slugger: new Slugger(),
      diagram: () => '',
    });
    const file = path.join(root, `wide-table-${width}.html`);
    writeFileSync(
      file,
      `<!DOCTYPE html><html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1"><style>${stylesheet()}</style></head><body><div class="page"><main>${body}</main></div></body></html>`,
    );
    const { page, errors } = await open(file, { width });
    const view = await readerView(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.screenshot({ path: path.join(ARTIFACTS, `reader-wide-table-${width}.png`) });
    await page.close();
    expect(errors).toEqual([]);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(view.scrolling).toHaveLength(1);
    expect(view.scrolling[0]?.scrollbar).toBeGreaterThan(0);
    expect(view.scrolling[0]?.shadow).toBe(true);
  });
});

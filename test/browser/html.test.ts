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
import { renderHtml } from '../../src/render/html/index.js';
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

describe.each(EXAMPLES.flatMap((name) => (['single', 'folder'] as const).map((layout) => `${name}-${layout}`)))('%s in Chromium', (docName) => {
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
    const expected = [design.enforcement.placementDiagram, design.contract.sequenceDiagram, design.outbound?.circuitDiagram].filter(Boolean).length;
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
});

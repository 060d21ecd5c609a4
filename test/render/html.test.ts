/**
 * The HTML output: the same sections and the same split as the Markdown output, turned into
 * self-contained pages (single) or a linked folder, with inline SVG diagrams.
 */
import { JSDOM } from 'jsdom';
import { Lexer, marked, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { decodeHtmlComment } from '../../src/escape/index.js';
import { checkLinks, DeadLinkError, findDeadLinks, headings } from '../../src/render/links.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { HTML_INDEX_FILE, renderHtml, STYLESHEET_FILE } from '../../src/render/html/index.js';
import { UnsafeSvgError } from '../../src/render/diagrams/svg.js';
import { htmlHref } from '../../src/render/html/convert.js';
import { planSections } from '../../src/render/sections/index.js';
import type { OutputFile } from '../../src/render/types.js';
import { EXAMPLES, exampleInput } from './fixtures.js';
import { comments, html, mermaidBlocks, svgElements } from './html-fixtures.js';

const LAYOUTS = ['single', 'folder'] as const;

function dom(content: string): Document {
  return new JSDOM(content).window.document;
}

const pagesOf = (files: OutputFile[]): OutputFile[] => files.filter((f) => f.path.endsWith('.html'));

describe.each(EXAMPLES.flatMap((name) => LAYOUTS.map((layout) => [name, layout] as const)))('%s, %s', async (name, layout) => {
  const input = exampleInput(name);
  const markdown = renderMarkdown(input, { layout });
  const files = await html(input, layout);
  const pages = pagesOf(files);

  it('has the pages of the Markdown form, .md -> .html and README.md -> index.html', () => {
    const expected = markdown.map((f) => htmlHref(f.path));
    expect(pages.map((p) => p.path)).toEqual(expected);
    if (layout === 'single') {
      expect(files.map((f) => f.path)).toEqual(['rate-limit-design.html']);
    } else {
      expect(pages[0]?.path).toBe(HTML_INDEX_FILE);
      expect(files.map((f) => f.path)).toContain(STYLESHEET_FILE);
      expect(files.filter((f) => !f.path.endsWith('.html')).map((f) => f.path)).toEqual([STYLESHEET_FILE]);
    }
  });

  it('gives every heading the id its Markdown anchor has, in the same order', () => {
    markdown.forEach((md, i) => {
      const page = pages[i]?.content ?? '';
      const ids = [...dom(page).querySelectorAll('main h1, main h2, main h3, main h4')].map((h) => h.id);
      expect(ids, md.path).toEqual(headings(md.content).map((h) => h.anchor));
    });
  });

  it('has every link and anchor resolving, relative links only', () => {
    expect(findDeadLinks(files)).toEqual([]);
    for (const page of pages) {
      for (const a of dom(page.content).querySelectorAll('a[href]')) {
        const href = a.getAttribute('href') ?? '';
        if (/^https:\/\//.test(href)) continue;
        expect(href, `${page.path}: ${href}`).toMatch(/^(?:[0-9a-z-]+\.html)?(?:#[^#/]+)?$/);
      }
    }
  });

  it('runs nothing and fetches nothing: no script, no event handler, no external resource', () => {
    for (const page of pages) {
      const doc = dom(page.content);
      expect(doc.querySelectorAll('script, iframe, object, embed, img, audio, video, source, base, form').length, page.path).toBe(0);
      for (const el of doc.querySelectorAll('*')) {
        for (const attr of el.getAttributeNames()) expect(attr, `${page.path} <${el.tagName}>`).not.toMatch(/^on/i);
        expect(el.getAttribute('src')).toBeNull();
      }
      const links = [...doc.querySelectorAll('link')].map((l) => `${l.getAttribute('rel')} ${l.getAttribute('href')}`);
      expect(links).toEqual(layout === 'single' ? [] : [`stylesheet ${STYLESHEET_FILE}`]);
      expect(page.content).not.toMatch(/@import|@font-face|url\(\s*['"]?(?!#)/i);
    }
  });

  it('inlines the stylesheet in the single file, shares one in the folder', () => {
    for (const page of pages) {
      const head = dom(page.content).head;
      expect(head.querySelectorAll('style').length, page.path).toBe(layout === 'single' ? 1 : 0);
    }
    if (layout === 'single') expect(pages[0]?.content).toContain('@media (prefers-color-scheme: dark)');
    else expect(files.find((f) => f.path === STYLESHEET_FILE)?.content).toContain('@media print');
  });

  it('wraps every table so it scrolls inside, marks alignment with classes and keeps code in <pre><code>', () => {
    let fences = 0;
    for (const f of markdown) {
      marked.walkTokens(Lexer.lex(f.content, { gfm: true }), (t) => {
        if (t.type === 'code' && (t as Tokens.Code).lang !== 'mermaid') fences += 1;
      });
    }
    let pre = 0;
    for (const page of pages) {
      const doc = dom(page.content);
      for (const table of doc.querySelectorAll('table')) expect(table.parentElement?.className).toBe('table-wrap');
      expect(doc.querySelectorAll('[align]').length).toBe(0);
      for (const p of doc.querySelectorAll('pre')) {
        expect(p.children.length).toBe(1);
        expect(p.firstElementChild?.tagName).toBe('CODE');
        pre += 1;
      }
    }
    expect(pre).toBe(fences);
  });

  it('draws every Mermaid block as inline SVG, its source beside it in a comment', () => {
    const blocks = mermaidBlocks(markdown);
    const all = pages.map((p) => p.content).join('\n');
    const figures = [...all.matchAll(/<figure class="diagram">\n<!--([\s\S]*?)-->\n(<svg[\s\S]*?<\/svg>)\n<figcaption>/g)];
    expect(figures).toHaveLength(blocks.length);
    figures.forEach((m, i) => {
      const body = m[1] ?? '';
      expect(body).not.toContain('--');
      expect(decodeHtmlComment(body)).toContain(`\n${blocks[i]}\n`);
      const svg = m[2] ?? '';
      expect(svg).toMatch(
        /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" id="rl-diagram-\d+" class="diagram-svg" role="img" aria-label="[^"]+" viewBox="0 0 [\d.]+ [\d.]+"/,
      );
      expect(svg).toMatch(/style="[^"]*width:100%;max-width:\d+px;min-width:\d+px;height:auto"/);
    });
    expect(comments(all).length).toBe(blocks.length);
  });

  it('keeps several diagrams on one page apart: unique ids, scoped style rules', () => {
    for (const page of pages) {
      const svgs = svgElements(page.content);
      const ids = svgs.flatMap((s) => [...s.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
      expect(new Set(ids).size, page.path).toBe(ids.length);
      for (const svg of svgs) {
        const own = /^<svg[^>]*\sid="([^"]+)"/.exec(svg)?.[1] ?? '';
        for (const m of svg.matchAll(/url\(#([^)]+)\)/g)) expect(m[1]?.startsWith(`${own}-`), m[0]).toBe(true);
        for (const style of svg.matchAll(/<style>([\s\S]*?)<\/style>/g)) {
          const selectors = (style[1] ?? '')
            .split('}')
            .map((r) => r.split('{')[0]?.trim() ?? '')
            .filter(Boolean);
          expect(selectors.length).toBeGreaterThan(0);
          for (const list of selectors) for (const sel of list.split(',')) expect(sel.trim().startsWith(`#${own}`), sel).toBe(true);
        }
      }
    }
  });

  it('prints the generation date in the footer of every page', () => {
    for (const page of pages) {
      const footer = dom(page.content).querySelector('footer');
      expect(footer?.textContent?.trim()).toBe(
        `${input.design.scope.projectName} rate-limit design, generated by rl-design ${input.design.meta.toolVersion} on ${input.design.meta.date}.`,
      );
      expect(footer?.querySelector('time')?.getAttribute('datetime')).toBe(input.design.meta.date);
    }
  });

  it('is deterministic', async () => {
    expect(await html(input, layout)).toEqual(files);
  });

  if (layout === 'single') {
    it('opens with a linked table of contents of every section and subsection', () => {
      const doc = dom(pages[0]?.content ?? '');
      const toc = doc.querySelector('nav.toc');
      expect(toc?.querySelector('h2')?.id).toBe('contents');
      const targets = [...(toc?.querySelectorAll('a') ?? [])].map((a) => a.getAttribute('href') ?? '');
      const plan = planSections(input);
      for (const p of plan) expect(targets).toContain(`#${p.anchor}`);
      for (const t of targets) expect(doc.getElementById(t.slice(1)), t).not.toBeNull();
    });
  } else {
    it('has the same header, page list, footer and date on every page, the current page as plain text', () => {
      const normalized = pages.map((p) => {
        const doc = dom(p.content);
        const header = doc.querySelector('header.doc-header');
        const current = [...(header?.querySelectorAll('[aria-current="page"]') ?? [])];
        expect(current, p.path).toHaveLength(1);
        expect(current[0]?.tagName).toBe('SPAN');
        const items = [...(header?.querySelectorAll('nav.pages li') ?? [])].map((li) => {
          const a = li.querySelector('a');
          return a ? `${a.textContent}|${a.getAttribute('href')}` : `current:${li.textContent}`;
        });
        expect(items).toHaveLength(pages.length);
        const i = pages.indexOf(p);
        expect(items[i]).toMatch(/^current:/);
        return {
          brand: header?.querySelector('.doc-name')?.outerHTML,
          items: items.map((item, j) => (j === i ? `${item.slice('current:'.length)}|${p.path}` : item)),
          footer: doc.querySelector('footer')?.outerHTML,
        };
      });
      expect(new Set(normalized.map((n) => JSON.stringify(n))).size).toBe(1);
      expect(normalized[0]?.items.map((i) => i.split('|')[1])).toEqual(pages.map((p) => p.path));
    });

    it('links each page to the previous and next one, and home', () => {
      pages.forEach((p, i) => {
        const pager = [...dom(p.content).querySelectorAll('nav.pager a')].map(
          (a) => `${a.getAttribute('rel') ?? ''}:${a.getAttribute('href')}`,
        );
        if (i === 0) expect(pager).toEqual([`next:${pages[1]?.path}`]);
        else {
          expect(pager[0]).toBe(`prev:${pages[i - 1]?.path}`);
          if (i < pages.length - 1) expect(pager[1]).toBe(`next:${pages[i + 1]?.path}`);
          // The first page's previous page is home already; the others add a home link.
          expect(i === 1 ? pager[0] : pager.at(-1)).toBe(i === 1 ? `prev:${HTML_INDEX_FILE}` : `:${HTML_INDEX_FILE}`);
        }
      });
    });

    it('keeps the index: scope, the matrix at a glance, contents with summaries, deliverables', () => {
      const doc = dom(pages[0]?.content ?? '');
      expect([...doc.querySelectorAll('main h2')].map((h) => h.textContent)).toEqual([
        'Scope',
        'Limit matrix at a glance',
        'Contents',
        'Deliverables',
      ]);
      const plan = planSections(input);
      const text = doc.querySelector('main')?.textContent ?? '';
      for (const p of plan) expect(text).toContain(p.summary);
    });
  }
});

describe('layout', () => {
  it.each(EXAMPLES)('auto picks the same layout for HTML as for Markdown (%s)', async (name) => {
    const input = exampleInput(name);
    const md = renderMarkdown(input, { layout: 'auto' });
    const out = await html(input, 'auto');
    expect(pagesOf(out).map((f) => f.path)).toEqual(md.map((f) => htmlHref(f.path)));
  });
});

describe('the link checker on HTML', () => {
  const page = (path: string, body: string): OutputFile => ({
    path,
    content: `<!DOCTYPE html><html><head><title>t</title></head><body>${body}</body></html>`,
  });

  it('catches a dead page, a dead anchor, a missing stylesheet and a repeated id', () => {
    const files = [
      page('index.html', '<link rel="stylesheet" href="assets/styles.css"><h1 id="home">x</h1><a href="01-a.html#a">a</a>'),
      page('01-a.html', '<h2 id="a">a</h2><h2 id="a">again</h2><a href="02-b.html">b</a><a href="index.html#nowhere">c</a>'),
    ];
    expect(findDeadLinks(files).map((d) => `${d.file} ${d.href}`)).toEqual([
      'index.html assets/styles.css',
      '01-a.html #a',
      '01-a.html 02-b.html',
      '01-a.html index.html#nowhere',
    ]);
    expect(() => checkLinks(files)).toThrow(DeadLinkError);
  });

  it('checks SVG references, and ignores comments', () => {
    const ok = page('a.html', '<svg><defs><marker id="m"></marker></defs><path marker-end="url(#m)"/></svg><!-- <a href="gone.html"> -->');
    expect(findDeadLinks([ok])).toEqual([]);
    const bad = page('a.html', '<svg><path marker-end="url(#other)"/></svg>');
    expect(findDeadLinks([bad]).map((d) => d.href)).toEqual(['#other']);
  });
});

describe('htmlHref', () => {
  it.each([
    ['README.md', 'index.html'],
    ['02-algorithms.md#4-enforcement', '02-algorithms.html#4-enforcement'],
    ['#local', '#local'],
    ['https://example.com/x.md', 'https://example.com/x.md'],
    ['docs/README.md#a', 'docs/index.html#a'],
  ])('%s -> %s', (from, to) => {
    expect(htmlHref(from)).toBe(to);
  });
});

describe('nothing is returned when the output would be broken', () => {
  const input = exampleInput('saas-platform');

  it('a diagram that references something missing is a dead link', () => {
    expect(() =>
      renderHtml(input, { layout: 'single', diagrams: () => '<svg viewBox="0 0 10 10"><path marker-end="url(#missing)"/></svg>' }),
    ).toThrow(DeadLinkError);
  });

  it('a diagram that would run or fetch something is refused', () => {
    expect(() =>
      renderHtml(input, { layout: 'folder', diagrams: () => '<svg viewBox="0 0 10 10"><script>alert(1)</script></svg>' }),
    ).toThrow(UnsafeSvgError);
  });
});

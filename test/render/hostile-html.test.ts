/**
 * Hostile strings in every user-supplied name and route (project, description, endpoints,
 * routes, plans, providers, burst sources, a hand-written rule's key, description and
 * rationale) leave the HTML (pages, SVG, comments) well formed and inert, in both layouts.
 */
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { decodeHtmlComment } from '../../src/escape/index.js';
import { findDeadLinks } from '../../src/render/links.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { hostileAnswers, HOSTILE, inputFromAnswers } from './fixtures.js';
import { comments, html, mermaidBlocks, svgElements } from './html-fixtures.js';

const input = inputFromAnswers(hostileAnswers());
const { design } = input;
const oneLine = (s: string): string =>
  s
    .replace(/[\r\n]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

const HTML_TAGS = new Set(
  'html head meta title style link body a div main header nav footer ul ol li p h1 h2 h3 h4 h5 h6 table thead tbody tr th td code pre strong em del blockquote hr br figure figcaption span time'.split(
    ' ',
  ),
);
const SVG_TAGS = new Set('svg style defs marker polygon polyline path g rect text tspan line circle ellipse'.split(' '));

describe.each(['single', 'folder'] as const)('hostile names, HTML %s layout', async (layout) => {
  const files = await html(input, layout);
  const pages = files.filter((f) => f.path.endsWith('.html'));
  const markdown = renderMarkdown(input, { layout });

  it('renders, with every link and anchor resolving', () => {
    expect(findDeadLinks(files)).toEqual([]);
  });

  it.each(pages.map((p) => p.path))('%s: only the expected elements, no script, no handler, no dangerous link', (path) => {
    const content = pages.find((p) => p.path === path)?.content ?? '';
    const doc = new JSDOM(content).window.document;
    for (const el of doc.querySelectorAll('*')) {
      const svg = el.namespaceURI === 'http://www.w3.org/2000/svg';
      expect(svg ? SVG_TAGS : HTML_TAGS, `<${el.localName}> in ${path}`).toContain(el.localName);
      for (const attr of el.getAttributeNames()) expect(attr, `${el.localName} in ${path}`).not.toMatch(/^on/i);
    }
    for (const a of doc.querySelectorAll('[href]')) {
      expect(a.getAttribute('href')).toMatch(/^(?:https:\/\/|#|[0-9a-z-]+\.html(?:#|$)|assets\/styles\.css$)/);
    }
  });

  it('keeps names as literal text: the title, headings and table cells read as written', () => {
    const first = new JSDOM(pages[0]?.content ?? '').window.document;
    const title = `Rate-limit design: ${oneLine(design.scope.projectName)}`;
    expect(first.querySelector('h1')?.textContent).toBe(title);
    expect(first.title).toBe(title);
    const text = pages.map((p) => new JSDOM(p.content).window.document.body.textContent ?? '').join('\n');
    for (const e of design.scope.endpoints) {
      expect(text).toContain(oneLine(e.name));
      expect(text).toContain(oneLine(e.route));
    }
    for (const p of design.scope.plans) expect(text).toContain(oneLine(p.name));
    for (const p of design.scope.outbound) expect(text).toContain(oneLine(p.name));
    // No template syntax was evaluated.
    expect(text).toContain('{{handlebars}} {{{raw}}}');
  });

  it('keeps every comment a comment: diagram sources only, no "--" inside, decodable to the source', () => {
    const all = pages.map((p) => p.content).join('\n');
    const bodies = comments(all);
    const blocks = mermaidBlocks(markdown);
    expect(bodies).toHaveLength(blocks.length);
    bodies.forEach((body, i) => {
      expect(body).not.toContain('--');
      expect(decodeHtmlComment(body)).toContain(blocks[i]);
    });
  });

  it('keeps every SVG well-formed XML', () => {
    const { DOMParser } = new JSDOM('').window;
    const svgs = pages.flatMap((p) => svgElements(p.content));
    expect(svgs.length).toBeGreaterThan(0);
    for (const svg of svgs) {
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      expect(doc.getElementsByTagName('parsererror')).toHaveLength(0);
    }
  });

  it('never lets a hostile string with markup in it through raw', () => {
    const all = pages.map((p) => p.content).join('\n');
    for (const h of HOSTILE.filter((x) => /[<>"]/.test(x))) expect(all).not.toContain(h);
    expect(all).not.toMatch(/<script|href="javascript|<img|<!-- -->/i);
  });
});

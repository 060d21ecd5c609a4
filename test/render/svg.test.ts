/** Diagram SVGs: made safe, responsive and scoped before they go inline; hostile labels stay text. */
import { JSDOM } from 'jsdom';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Diagram } from '../../src/design/model.js';
import { decodeLabels, decodeMermaidEntities, fitLabels, worstCaseWidth } from '../../src/render/diagrams/beautiful.js';
import type { RawDiagramRenderer } from '../../src/render/diagrams/index.js';
import { toMermaid, wrapLine } from '../../src/render/diagrams/mermaid.js';
import { FONT_STACK, MIN_TEXT_PX, prepareSvg, scopeCss, smallestFontSize, UnsafeSvgError } from '../../src/render/diagrams/svg.js';
import { decodeHtmlComment, htmlComment, htmlText } from '../../src/escape/index.js';
import { HOSTILE } from './fixtures.js';
import { diagrams } from './html-fixtures.js';

const oneLine = (s: string): string =>
  s
    .replace(/[\r\n]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const window = new JSDOM('').window;

/** Parses an SVG as XML: throws when it is not well formed. */
function parseSvg(svg: string): Document {
  const doc = new window.DOMParser().parseFromString(svg, 'image/svg+xml');
  const error = doc.getElementsByTagName('parsererror')[0];
  if (error) throw new Error(`not well-formed XML: ${error.textContent}`);
  return doc;
}

let render: RawDiagramRenderer;
beforeAll(async () => {
  render = await diagrams();
});

const FLOW: Diagram = {
  kind: 'flowchart',
  direction: 'LR',
  title: 'flow',
  nodes: [
    { id: 'a', label: ['client'], shape: 'round' },
    { id: 'b', label: ['middleware', 'rule-a (fail open)'], shape: 'box' },
    { id: 's', label: ['Redis'], shape: 'store' },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 's', label: 'EVALSHA', dashed: true },
  ],
};

describe('prepareSvg on beautiful-mermaid output', () => {
  it('removes the web font import, sets the system font stack and keeps nothing external', () => {
    const raw = render(toMermaid(FLOW));
    expect(raw).toContain('fonts.googleapis.com');
    const svg = prepareSvg(raw, { id: 'd1', label: 'Flow' });
    expect(svg).not.toMatch(/@import|googleapis|https?:\/\/(?!www\.w3\.org\/2000\/svg")/);
    expect(svg).not.toContain('Inter');
    expect(svg).toContain(`font-family: ${FONT_STACK}`);
    parseSvg(svg);
  });

  it('is responsive: width 100%, never drawn so small that a label is under 12 px, viewBox kept', () => {
    const raw = render(toMermaid(FLOW));
    const width = Math.ceil(Number(/viewBox="0 0 ([\d.]+)/.exec(raw)?.[1]));
    const svg = prepareSvg(raw, { id: 'd1', label: 'Flow' });
    const smallest = smallestFontSize(raw) ?? NaN;
    expect(smallest).toBeLessThan(MIN_TEXT_PX); // beautiful-mermaid's edge labels are 11 px
    const min = Math.ceil((width * MIN_TEXT_PX) / smallest);
    expect(svg).toMatch(
      new RegExp(
        `^<svg [^>]*viewBox="0 0 [\\d.]+ [\\d.]+" width="${width}" height="\\d+" style="[^"]*width:100%;max-width:${min}px;min-width:${min}px;height:auto"`,
      ),
    );
    expect(svg).toMatch(/^<svg [^>]*role="img" aria-label="Flow"/);
  });

  it('takes its colours from the document CSS variables', () => {
    const svg = prepareSvg(render(toMermaid(FLOW)), { id: 'd1', label: 'Flow' });
    const style = /^<svg [^>]*style="([^"]*)"/.exec(svg)?.[1] ?? '';
    for (const v of ['--bg:var(--rl-bg)', '--fg:var(--rl-fg)', '--line:var(--rl-diagram-line)', '--surface:var(--rl-diagram-fill)'])
      expect(style).toContain(v);
    expect(style).not.toMatch(/#[0-9a-f]{3,6}|background/i);
  });

  it('gives two diagrams on one page disjoint ids, references and style rules', () => {
    const source = toMermaid(FLOW);
    const one = prepareSvg(render(source), { id: 'rl-diagram-1', label: 'a' });
    const two = prepareSvg(render(source), { id: 'rl-diagram-2', label: 'b' });
    const ids = (svg: string): string[] => [...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(ids(one).length).toBeGreaterThan(1);
    for (const id of ids(one)) expect(ids(two)).not.toContain(id);
    for (const [svg, own] of [
      [one, 'rl-diagram-1'],
      [two, 'rl-diagram-2'],
    ] as const) {
      const refs = [...svg.matchAll(/url\(#([^)]+)\)/g)].map((m) => m[1] ?? '');
      expect(refs.length).toBeGreaterThan(0);
      for (const r of refs) expect(ids(svg)).toContain(r);
      for (const r of refs) expect(r.startsWith(`${own}-`)).toBe(true);
    }
  });
});

describe('scopeCss', () => {
  it('prefixes every selector, keeps @media scoped and drops imports and font faces', () => {
    const css = `@import url('https://x.example/f.css');
      @font-face { font-family: X; src: url(https://x.example/x.woff2); }
      text { font-family: 'Inter', sans-serif; }
      svg { --a: 1; }
      .node rect, .edge { fill: red; }
      #old .label { color: blue; }
      @media (max-width: 10px) { .node { stroke: none; } }`;
    const out = scopeCss(css, 'd9', ['old']);
    expect(out).not.toMatch(/@import|@font-face|https?:/);
    expect(out).toContain(`#d9 text { font-family: ${FONT_STACK}; }`);
    expect(out).toContain('#d9 { --a: 1; }');
    expect(out).toContain('#d9 .node rect, #d9 .edge { fill: red; }');
    expect(out).toContain('#d9 .label { color: blue; }');
    expect(out).toContain('@media (max-width: 10px) { #d9 .node { stroke: none; } }');
  });
});

describe('prepareSvg on a Mermaid (mermaid-cli) style SVG', () => {
  const raw = `<svg id="mermaid-1" width="100%" xmlns="http://www.w3.org/2000/svg" style="max-width: 300.5px; background-color: white;" viewBox="0 0 300.5 120.25" role="graphics-document document"><style>#mermaid-1{font-family:"trebuchet ms",verdana,arial;font-size:16px;}#mermaid-1 .node rect{fill:#ECECFF;}@keyframes dash{to{stroke-dashoffset:0;}}</style><g><marker id="mermaid-1_flowchart-v2-pointEnd"><path d="M 0 0 L 10 5 z"/></marker><path marker-end="url(#mermaid-1_flowchart-v2-pointEnd)" d="M1.123456,2 L3,4"/><text font-family="Inter">A &amp; B</text></g></svg>`;
  const svg = prepareSvg(raw, { id: 'rl-diagram-3', label: 'Placement' });

  it('renames the root and re-points the rules that named it', () => {
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" id="rl-diagram-3"/);
    expect(svg).toContain(`#rl-diagram-3 { font-family: ${FONT_STACK};font-size:16px; }`);
    expect(svg).toContain('#rl-diagram-3 .node rect { fill:#ECECFF; }');
    expect(svg).not.toMatch(/mermaid-1[{ .]/);
  });

  it('prefixes inner ids and their references, rounds coordinates, drops the background', () => {
    expect(svg).toContain('id="rl-diagram-3-mermaid-1_flowchart-v2-pointEnd"');
    expect(svg).toContain('marker-end="url(#rl-diagram-3-mermaid-1_flowchart-v2-pointEnd)"');
    expect(svg).toContain('d="M1.12,2 L3,4"');
    expect(svg).toContain(`font-family="${htmlText(FONT_STACK)}"`);
    expect(svg).not.toMatch(/background/);
    parseSvg(svg);
  });
});

describe('prepareSvg refuses what cannot be inlined safely', () => {
  it.each([
    ['a script', '<svg viewBox="0 0 1 1"><script>alert(1)</script></svg>'],
    ['an event handler', '<svg viewBox="0 0 1 1"><rect onclick="alert(1)"/></svg>'],
    ['an external image', '<svg viewBox="0 0 1 1"><image href="https://x.example/i.png"/></svg>'],
    ['an external url() reference', '<svg viewBox="0 0 1 1"><rect fill="url(https://x.example/#g)"/></svg>'],
    ['HTML inside', '<svg viewBox="0 0 1 1"><foreignObject><div>x</div></foreignObject></svg>'],
    ['no viewBox', '<svg><rect/></svg>'],
    ['not an SVG', '<div>x</div>'],
  ])('%s', (_, raw) => {
    expect(() => prepareSvg(raw, { id: 'd', label: 'x' })).toThrow(UnsafeSvgError);
  });

  it('accepts event-handler-like text as text', () => {
    expect(() => prepareSvg('<svg viewBox="0 0 1 1"><text>x onload=y</text></svg>', { id: 'd', label: 'x' })).not.toThrow();
  });
});

describe('labels', () => {
  it('decodes Mermaid entity codes as Mermaid does, then escapes for XML', () => {
    expect(decodeMermaidEntities('#quot;a#quot; #lt;b#gt; #35;35#59; #amp; #42;x#42; #126;')).toBe('"a" <b> #35; & *x* ~');
    expect(decodeLabels('<svg><style>a > b { }</style><text>#lt;script#gt;</text></svg>')).toBe(
      '<svg><style>a > b { }</style><text>&lt;script&gt;</text></svg>',
    );
  });

  it('wraps long labels at spaces', () => {
    expect(wrapLine('3 provider 429s or 5xx in 30 s', 24)).toEqual(['3 provider 429s or 5xx', 'in 30 s']);
    expect(wrapLine('averyveryverylongwordthatcannotbreak x', 10)).toEqual(['averyveryverylongwordthatcannotbreak', 'x']);
  });

  it('shrinks a label that would overflow its box in a wide font, and leaves the others', () => {
    const svg =
      '<svg viewBox="0 0 400 100"><g class="node"><rect x="10" y="10" width="60" height="30"/><text x="40" y="25" text-anchor="middle" font-size="13">a rather long label</text></g>' +
      '<g class="node"><rect x="100" y="10" width="200" height="30"/><text x="200" y="25" text-anchor="middle" font-size="13">short</text></g></svg>';
    const out = fitLabels(svg);
    const sizes = [...out.matchAll(/font-size="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(sizes[1]).toBe(13);
    expect(sizes[0]).toBeLessThan(13);
    expect(worstCaseWidth('a rather long label', sizes[0] ?? 0)).toBeLessThanOrEqual(60 - 6);
  });
});

describe('hostile labels in every kind of diagram', () => {
  const hostile: Diagram[] = [
    {
      kind: 'flowchart',
      direction: 'LR',
      title: 'f',
      nodes: HOSTILE.map((h, i) => ({ id: `n${i}`, label: [h], shape: 'box' as const })),
      edges: HOSTILE.slice(1).map((h, i) => ({ from: `n${i}`, to: `n${i + 1}`, label: h })),
    },
    {
      kind: 'state',
      title: 's',
      nodes: HOSTILE.slice(0, 4).map((h, i) => ({ id: `s${i}`, label: [h], shape: 'state' as const })),
      edges: [{ from: '[*]', to: 's0' }, ...HOSTILE.slice(0, 3).map((h, i) => ({ from: `s${i}`, to: `s${i + 1}`, label: h }))],
    },
    {
      kind: 'sequence',
      title: 'q',
      nodes: [
        { id: 'c', label: [HOSTILE[0] ?? ''], shape: 'box' },
        { id: 'a', label: [HOSTILE[3] ?? ''], shape: 'box' },
      ],
      edges: HOSTILE.map((h, i) => ({ from: i % 2 ? 'a' : 'c', to: i % 2 ? 'c' : 'a', label: h })),
    },
  ];

  it.each(hostile.map((d) => [d.kind, d] as const))('%s: well-formed, inert SVG whose text is the labels', (_, diagram) => {
    const svg = prepareSvg(render(toMermaid(diagram)), { id: 'h1', label: HOSTILE.join(' ') });
    const doc = parseSvg(svg);
    expect(doc.getElementsByTagName('script')).toHaveLength(0);
    for (const el of doc.getElementsByTagName('*')) {
      for (const attr of el.getAttributeNames()) expect(attr).not.toMatch(/^on/i);
      expect(el.namespaceURI).toBe('http://www.w3.org/2000/svg');
    }
    const texts = [...doc.getElementsByTagName('text')].map((t) => {
      const spans = [...t.getElementsByTagName('tspan')];
      return oneLine(spans.length > 0 ? spans.map((s) => s.textContent ?? '').join(' ') : (t.textContent ?? ''));
    });
    const labels = [...diagram.nodes.flatMap((n) => n.label), ...diagram.edges.flatMap((e) => (e.label ? [e.label] : []))].map(oneLine);
    for (const label of labels) expect(texts, label).toContain(label);
  });
});

describe('htmlComment', () => {
  it.each(['a --> b', '<!-- x -->', '--!>', '---', 'ends with -', '->start', '&#45; & &amp;', ']]> {{x}} <script>', ...HOSTILE])(
    'keeps %j verbatim and reversibly, with no "--" inside',
    (text) => {
      const comment = htmlComment(text);
      expect(comment.startsWith('<!-- ') && comment.endsWith(' -->')).toBe(true);
      const body = comment.slice(5, -4);
      const data = comment.slice(4, -3); // what the HTML parser sees as the comment's text
      expect(data).not.toContain('--');
      expect(/^->?>/.test(data) || data.endsWith('-') || data.endsWith('<!-')).toBe(false);
      expect(decodeHtmlComment(body)).toBe(text);
      const doc = new JSDOM(`<!DOCTYPE html><p>${comment}</p>`).window.document;
      const p = doc.querySelector('p');
      expect(p?.childNodes).toHaveLength(1);
      expect(p?.firstChild?.nodeType).toBe(8); // one comment, nothing leaked out of it
    },
  );
});

describe('htmlComment preface', () => {
  it('is written as is, on its own line, and may not open or close anything', () => {
    expect(htmlComment('a --> b', 'Decode &#45; to a hyphen.')).toBe('<!-- Decode &#45; to a hyphen.\na -&#45;> b -->');
    for (const bad of ['x -- y', '> start', 'a <b>']) expect(() => htmlComment('x', bad)).toThrow();
  });
});

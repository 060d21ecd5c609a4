/**
 * Every Mermaid block the documents contain parses with the real Mermaid parser (the
 * `mermaid` package, under jsdom): stricter than the in-process renderer, and what GitHub,
 * GitLab and editors run on the Markdown form.
 */
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagram } from '../../src/design/model.js';
import { documentDiagrams } from '../../src/render/diagrams/index.js';
import { toMermaid } from '../../src/render/diagrams/mermaid.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { EXAMPLES, exampleInput, hostileAnswers, HOSTILE, inputFromAnswers } from './fixtures.js';
import { mermaidBlocks } from './html-fixtures.js';

interface Mermaid {
  initialize: (config: object) => void;
  parse: (text: string) => Promise<{ diagramType: string } | false>;
}

let mermaid: Mermaid;
/** The globals this file gives jsdom's values: removed afterwards, since the unit tier shares one context (a global window makes libraries think they run in a browser). */
const defined: string[] = [];
const saved = new Map<string, PropertyDescriptor | undefined>();

beforeAll(async () => {
  const { window } = new JSDOM('<!DOCTYPE html><html><body></body></html>', { pretendToBeVisual: true });
  const g = globalThis as Record<string, unknown>;
  for (const key of ['window', 'document', 'DOMParser', 'Element', 'HTMLElement', 'SVGElement', 'Node', 'navigator']) {
    if (!(key in g) || key === 'window' || key === 'document') {
      defined.push(key);
      saved.set(key, Object.getOwnPropertyDescriptor(g, key));
      Object.defineProperty(g, key, {
        value: key === 'window' ? window : (window as unknown as Record<string, unknown>)[key],
        configurable: true,
        writable: true,
      });
    }
  }
  mermaid = (await import('mermaid')).default as unknown as Mermaid;
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
});

afterAll(() => {
  const g = globalThis as Record<string, unknown>;
  for (const key of defined) {
    const before = saved.get(key);
    if (before) Object.defineProperty(g, key, before);
    else delete g[key];
  }
});

const KIND: Record<Diagram['kind'], string> = { flowchart: 'flowchart-v2', state: 'stateDiagram', sequence: 'sequence' };

describe('the real Mermaid parser', () => {
  it('rejects what is not Mermaid (the parser is really checking)', async () => {
    await expect(mermaid.parse('flowchart LR\n    a["unclosed]\n')).rejects.toThrow();
    await expect(mermaid.parse('sequenceDiagram\n    a->>: no target\n')).rejects.toThrow();
  });

  it.each(EXAMPLES)('parses every diagram of %s, as its own kind', async (name) => {
    const input = exampleInput(name);
    const diagrams = documentDiagrams(input.design);
    const blocks = mermaidBlocks(renderMarkdown(input, { layout: 'single' }));
    expect(blocks).toEqual(diagrams.map(toMermaid));
    expect(blocks.length).toBeGreaterThan(0);
    for (const d of diagrams) {
      const result = await mermaid.parse(toMermaid(d));
      expect(result === false ? undefined : result.diagramType, d.title).toBe(KIND[d.kind]);
    }
  });

  it('parses every diagram of the hostile design', async () => {
    const blocks = mermaidBlocks(renderMarkdown(inputFromAnswers(hostileAnswers()), { layout: 'single' }));
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(await mermaid.parse(block)).toBeTruthy();
  });

  it.each(['flowchart', 'state', 'sequence'] as const)('parses a %s whose every label is hostile', async (kind) => {
    const nodes = HOSTILE.map((h, i) => ({
      id: `${h} ${i}`,
      label: [h, `end ${h}`],
      shape: (kind === 'sequence' ? 'box' : 'state') as 'box',
    }));
    const edges = HOSTILE.map((h, i) => ({
      from: nodes[i]?.id ?? '',
      to: nodes[(i + 1) % nodes.length]?.id ?? '',
      label: h,
      dashed: i % 2 === 0,
    }));
    const diagram: Diagram = {
      kind,
      title: 'hostile',
      nodes,
      edges: kind === 'state' ? [{ from: '[*]', to: nodes[0]?.id ?? '' }, ...edges] : edges,
    };
    const result = await mermaid.parse(toMermaid(diagram));
    expect(result === false ? undefined : result.diagramType).toBe(KIND[kind]);
  });
});

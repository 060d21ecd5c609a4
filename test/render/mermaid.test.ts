import { describe, expect, it } from 'vitest';
import type { Diagram } from '../../src/design/model.js';
import { documentDiagrams } from '../../src/render/diagrams/index.js';
import { longestChain, MAX_LR_CHAIN, toMermaid } from '../../src/render/diagrams/mermaid.js';
import { EXAMPLES, exampleInput, HOSTILE } from './fixtures.js';

const hostileLabel = HOSTILE.join(' ');

/** Labels with their entity codes removed: what must not contain raw syntax. */
const bare = (s: string): string => s.replace(/#(?:[0-9]+|quot|lt|gt|amp);/g, '');

const NODE = /^ {4}[A-Za-z][A-Za-z0-9_]* ?(\[\(|\[|\()"[^"\n]*"(\)\]|\]|\))$/;
const EDGE = /^ {4}[A-Za-z][A-Za-z0-9_]* (-->|-\.->)(\|"[^"\n]*"\|)? [A-Za-z][A-Za-z0-9_]*$/;

describe('flowchart', () => {
  const diagram: Diagram = {
    kind: 'flowchart',
    direction: 'LR',
    title: 'placement',
    nodes: [
      { id: 'client', label: ['client'], shape: 'round' },
      { id: 'edge gateway', label: ['edge', hostileLabel], shape: 'box' },
      { id: 'end', label: ['reserved id'], shape: 'box' },
      { id: 'store', label: ['Redis'], shape: 'store' },
    ],
    edges: [
      { from: 'client', to: 'edge gateway' },
      { from: 'edge gateway', to: 'end', label: hostileLabel },
      { from: 'end', to: 'store', label: 'EVALSHA', dashed: true },
      { from: 'end', to: 'forgotten' },
    ],
  };
  const source = toMermaid(diagram);
  const lines = source.split('\n');

  it('declares every node before any edge, with safe ids and quoted labels', () => {
    expect(lines[0]).toBe('flowchart LR');
    const firstEdge = lines.findIndex((l) => l.includes('-->') || l.includes('-.->'));
    const nodes = lines.slice(1, firstEdge);
    const edges = lines.slice(firstEdge);
    expect(nodes).toHaveLength(5);
    for (const line of nodes) expect(line).toMatch(NODE);
    for (const line of edges) expect(line).toMatch(EDGE);
  });

  it('uses the store and round shapes, <br/> between label lines', () => {
    expect(source).toContain('    store[("Redis")]');
    expect(source).toContain('    client("client")');
    expect(source).toMatch(/edge_gateway\["edge<br\/>pipe/);
    expect(source).toContain('    n_end["reserved id"]');
    expect(source).toContain('    n_end -.->|"EVALSHA"| store');
  });

  it('escapes hostile labels into entity codes', () => {
    for (const line of lines.slice(1)) {
      const labels = [...line.matchAll(/"([^"]*)"/g)].map((m) => bare(m[1] ?? '').replace(/<br\/>/g, ''));
      for (const label of labels) {
        expect(label).not.toMatch(/[<>`;%{}|[\]\\#]/);
        expect(label).not.toContain('--');
      }
    }
    expect(source).not.toContain('<script');
  });
});

describe('stateDiagram-v2', () => {
  it('declares states, then transitions from [*]', () => {
    const source = toMermaid({
      kind: 'state',
      title: 'circuit',
      nodes: [
        { id: 'Closed', label: ['Closed'], shape: 'state' },
        { id: 'Half open', label: ['Half-open', hostileLabel], shape: 'state' },
      ],
      edges: [
        { from: '[*]', to: 'Closed' },
        { from: 'Closed', to: 'Half open', label: hostileLabel },
      ],
    });
    const lines = source.split('\n');
    expect(lines[0]).toBe('stateDiagram-v2');
    // left to right, so a cycle's return edges do not cross the forward ones
    expect(lines[1]).toBe('    direction LR');
    expect(lines[2]).toBe('    state "Closed" as Closed');
    expect(lines[3]).toMatch(/^ {4}state "[^"\n]*" as Half_open$/);
    expect(lines[4]).toBe('    [*] --> Closed');
    expect(lines[5]).toMatch(/^ {4}Closed --> Half_open : [^"\n]+$/);
    expect(bare(lines[5]?.split(' : ')[1] ?? '').replace(/<br\/>/g, '')).not.toMatch(/[<>`;%{}|[\]\\#"]/);
  });
});

describe('sequenceDiagram', () => {
  it('declares participants, then messages', () => {
    const source = toMermaid({
      kind: 'sequence',
      title: '429',
      nodes: [
        { id: 'client', label: ['client'], shape: 'actor' },
        { id: 'api', label: [hostileLabel], shape: 'box' },
      ],
      edges: [
        { from: 'client', to: 'api', label: 'GET /orders' },
        { from: 'api', to: 'client', label: '429; Retry-After: 3', dashed: true },
      ],
    });
    const lines = source.split('\n');
    expect(lines[0]).toBe('sequenceDiagram');
    expect(lines[1]).toBe('    actor client as client');
    expect(lines[2]).toMatch(/^ {4}participant api as /);
    expect(bare(lines[2] ?? '')).not.toMatch(/[<>`;%{}|[\]\\#"]/);
    expect(lines[3]).toBe('    client->>api: GET /orders');
    expect(lines[4]).toBe('    api-->>client: 429#59; Retry-After: 3');
  });
});

describe('the examples', () => {
  it.each(EXAMPLES)('%s: diagrams are conservative flowcharts, state and sequence diagrams', (name) => {
    const { design } = exampleInput(name);
    const diagrams = documentDiagrams(design);
    expect(diagrams.length).toBeGreaterThan(0);
    for (const d of diagrams) {
      const source = toMermaid(d);
      expect(source).not.toMatch(/\n\s*\n/);
      if (d.kind === 'flowchart') {
        for (const line of source.split('\n').slice(1)) expect(line).toSatisfy((l: string) => NODE.test(l) || EDGE.test(l));
      }
      if (d.kind === 'sequence') {
        // One line per message: a multi-line message overlaps the next one in some renderers.
        for (const line of source.split('\n').slice(1)) expect(line).not.toContain('<br/>');
      }
    }
  });

  it('shows the 429 / Retry-After exchange wherever a client sees rate-limit headers', () => {
    for (const name of EXAMPLES) {
      const { design } = exampleInput(name);
      const seq = design.contract.sequenceDiagram;
      expect(seq?.kind, name).toBe('sequence');
      const labels = seq?.edges.map((e) => e.label).join(' | ') ?? '';
      // the wait is the example 429's own Retry-After, the one its body and headers state
      const retryAfter = design.contract.rateLimitedExample?.headers.find((h) => h.name === 'Retry-After')?.value;
      expect(retryAfter, name).toBe(String(design.contract.rateLimitedBody.retryAfterSeconds));
      expect(labels).toContain(`429, Retry-After: ${retryAfter}`);
      expect(labels).toContain(`wait ${retryAfter} s + jitter`);
    }
  });
});

describe('flowchart direction', () => {
  const chain = (n: number, direction: 'LR' | 'TB' = 'LR'): Diagram => ({
    kind: 'flowchart',
    direction,
    title: 'chain',
    nodes: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, label: [`n${i}`], shape: 'box' as const })),
    edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
  });

  it('measures the longest chain, cycles included once', () => {
    expect(longestChain(chain(5))).toBe(5);
    const cyclic = chain(3);
    expect(longestChain({ ...cyclic, edges: [...cyclic.edges, { from: 'n2', to: 'n0' }] })).toBe(3);
  });

  it(`keeps left-to-right up to ${MAX_LR_CHAIN} nodes in a row, then draws top to bottom`, () => {
    expect(toMermaid(chain(MAX_LR_CHAIN)).split('\n')[0]).toBe('flowchart LR');
    expect(toMermaid(chain(MAX_LR_CHAIN + 1)).split('\n')[0]).toBe('flowchart TB');
    expect(toMermaid(chain(2, 'TB')).split('\n')[0]).toBe('flowchart TB');
  });

  it('breaks long node and edge labels into lines', () => {
    const source = toMermaid({
      kind: 'flowchart',
      title: 'wrap',
      nodes: [{ id: 'a', label: ['one two three four five six seven eight nine ten eleven twelve'], shape: 'box' }],
      edges: [{ from: 'a', to: 'b', label: 'a label that is clearly longer than twenty-four characters' }],
    });
    expect(source).toContain('a["one two three four five six seven eight nine ten<br/>eleven twelve"]');
    expect(source).toContain('|"a label that is clearly<br/>longer than twenty-four<br/>characters"|');
  });
});

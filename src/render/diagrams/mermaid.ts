/**
 * Diagram (design data) -> Mermaid source, the source of truth for every diagram in both
 * output formats. Conservative Mermaid only: every node is declared before any edge, every
 * label is quoted and escaped with mermaidLabel, long labels are broken into lines, ids are
 * plain identifiers, and no styling, directives or HTML other than `<br/>` line breaks are
 * emitted. Sequence messages stay on one line (a multi-line message would overlap the next
 * one in some renderers), so they are written short.
 */
import type { Diagram } from '../../design/model.js';
import { mermaidLabel } from '../../escape/markup.js';

/** Words Mermaid parses as keywords when used as a bare id. */
const RESERVED = new Set([
  'end',
  'graph',
  'flowchart',
  'subgraph',
  'direction',
  'style',
  'class',
  'classdef',
  'click',
  'linkstyle',
  'default',
  'state',
  'note',
  'participant',
  'actor',
  'loop',
  'alt',
  'else',
  'opt',
  'par',
  'and',
  'rect',
  'critical',
  'break',
  'activate',
  'deactivate',
  'autonumber',
  'title',
  'as',
  'over',
  'left',
  'right',
  'of',
  'box',
  'create',
  'destroy',
]);

/** The pseudo-state Mermaid uses for a state diagram's start and end. */
const START_END = '[*]';

/** Maps diagram ids to safe, unique Mermaid identifiers (stable for a given diagram). */
function idMapper(ids: readonly string[]): (id: string) => string {
  const map = new Map<string, string>();
  const used = new Set<string>();
  for (const id of ids) {
    if (map.has(id) || id === START_END) continue;
    let safe = id.replace(/[^A-Za-z0-9_]/g, '_');
    if (safe === '' || /^[0-9_]/.test(safe) || RESERVED.has(safe.toLowerCase())) safe = `n_${safe}`;
    let candidate = safe;
    for (let i = 2; used.has(candidate); i += 1) candidate = `${safe}_${i}`;
    used.add(candidate);
    map.set(id, candidate);
  }
  return (id) => (id === START_END ? START_END : (map.get(id) ?? 'unknown'));
}

function allIds(diagram: Diagram): string[] {
  return [...diagram.nodes.map((n) => n.id), ...diagram.edges.flatMap((e) => [e.from, e.to])];
}

/** Longest label line (in characters) before it is broken at a space: node labels, edge labels. */
const WRAP = { node: 48, edge: 24 } as const;

/**
 * Breaks a line at spaces into lines of at most `max` characters (a longer word stays whole),
 * so a long name makes a taller box instead of a diagram too wide to read.
 */
export function wrapLine(line: string, max: number): string[] {
  const words = line.replace(/\s+/g, ' ').trim().split(' ');
  const out: string[] = [];
  let current = '';
  for (const word of words) {
    if (current !== '' && current.length + 1 + word.length > max) {
      out.push(current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  if (current !== '') out.push(current);
  return out;
}

/** Lines of a label, wrapped at `max` characters (0: never), escaped and joined with Mermaid's line break. */
function labelText(lines: readonly string[], max = 0): string {
  const wrapped = max > 0 ? lines.flatMap((l) => wrapLine(l, max)) : lines;
  const parts = wrapped.map(mermaidLabel).filter((l) => l !== '');
  return parts.length === 0 ? ' ' : parts.join('<br/>');
}

/**
 * Node declarations first (the diagram's own nodes, then any node an edge names that the
 * list forgot, labelled with its id), then edges.
 */
function declarations(
  diagram: Diagram,
  id: (raw: string) => string,
  declare: (nid: string, label: readonly string[], node?: Diagram['nodes'][number]) => string,
): string[] {
  const lines: string[] = [];
  const declared = new Set<string>();
  for (const node of diagram.nodes) {
    const nid = id(node.id);
    if (nid === START_END || declared.has(nid)) continue;
    declared.add(nid);
    lines.push(declare(nid, node.label, node));
  }
  for (const end of diagram.edges.flatMap((e) => [e.from, e.to])) {
    const nid = id(end);
    if (nid === START_END || declared.has(nid)) continue;
    declared.add(nid);
    lines.push(declare(nid, [end]));
  }
  return lines;
}

/**
 * The longest chain of a flowchart drawn left to right: past it, the drawing is wider than a
 * document column can show at a legible size, so the chart is drawn top to bottom instead
 * (in both formats: the Mermaid source is the same for Markdown and HTML).
 */
export const MAX_LR_CHAIN = 4;

/** Nodes on the longest path along the edges (cycles are not followed twice). */
export function longestChain(diagram: Diagram): number {
  const next = new Map<string, string[]>();
  for (const e of diagram.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const walk = (node: string, seen: Set<string>): number => {
    let best = 0;
    for (const to of next.get(node) ?? []) {
      if (seen.has(to)) continue;
      seen.add(to);
      best = Math.max(best, walk(to, seen));
      seen.delete(to);
    }
    return best + 1;
  };
  const starts = new Set([...diagram.nodes.map((n) => n.id), ...diagram.edges.map((e) => e.from)]);
  return Math.max(0, ...[...starts].map((n) => walk(n, new Set([n]))));
}

function flowDirection(diagram: Diagram): 'LR' | 'TB' {
  if (diagram.direction === 'TB') return 'TB';
  return longestChain(diagram) > MAX_LR_CHAIN ? 'TB' : 'LR';
}

function flowchart(diagram: Diagram): string {
  const id = idMapper(allIds(diagram));
  const nodes = declarations(diagram, id, (nid, label, node) => {
    const text = `"${labelText(label, WRAP.node)}"`;
    switch (node?.shape) {
      case 'store':
        return `    ${nid}[(${text})]`;
      case 'round':
      case 'actor':
        return `    ${nid}(${text})`;
      default:
        return `    ${nid}[${text}]`;
    }
  });
  const edges = diagram.edges.map((edge) => {
    const arrow = edge.dashed ? '-.->' : '-->';
    const label = edge.label ? `|"${labelText([edge.label], WRAP.edge)}"|` : '';
    return `    ${id(edge.from)} ${arrow}${label} ${id(edge.to)}`;
  });
  return [`flowchart ${flowDirection(diagram)}`, ...nodes, ...edges].join('\n');
}

function stateDiagram(diagram: Diagram): string {
  const id = idMapper(allIds(diagram));
  // Left to right unless the diagram asks otherwise: drawn top to bottom, a cycle's return
  // edges cross the forward ones and the start dot lands beside a transition.
  const head = ['stateDiagram-v2', `    direction ${diagram.direction ?? 'LR'}`];
  const states = declarations(diagram, id, (nid, label) => `    state "${labelText(label, WRAP.node)}" as ${nid}`);
  const edges = diagram.edges.map((edge) => {
    const label = edge.label ? ` : ${labelText([edge.label], WRAP.edge)}` : '';
    return `    ${id(edge.from)} --> ${id(edge.to)}${label}`;
  });
  return [...head, ...states, ...edges].join('\n');
}

function sequenceDiagram(diagram: Diagram): string {
  const id = idMapper(allIds(diagram));
  const participants = declarations(
    diagram,
    id,
    (nid, label, node) => `    ${node?.shape === 'actor' ? 'actor' : 'participant'} ${nid} as ${labelText(label)}`,
  );
  const messages = diagram.edges.map((edge) => {
    const arrow = edge.dashed ? '-->>' : '->>';
    return `    ${id(edge.from)}${arrow}${id(edge.to)}: ${labelText([edge.label ?? edge.to])}`;
  });
  return ['sequenceDiagram', ...participants, ...messages].join('\n');
}

/** The Mermaid source for a diagram (no fence; see render/helpers for the ```mermaid block). */
export function toMermaid(diagram: Diagram): string {
  switch (diagram.kind) {
    case 'state':
      return stateDiagram(diagram);
    case 'sequence':
      return sequenceDiagram(diagram);
    default:
      return flowchart(diagram);
  }
}

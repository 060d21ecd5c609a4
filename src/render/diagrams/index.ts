/**
 * Diagrams: the Design's diagrams (data) -> Mermaid source (mermaid.ts, the source of truth in
 * both formats) -> SVG for the HTML output, by a renderer chosen by name:
 * - `beautiful-mermaid` (default): in-process, no browser (beautiful.ts);
 * - `mermaid-cli`: Mermaid itself in a headless Chromium, when the user has installed
 *   @mermaid-js/mermaid-cli (mermaid-cli.ts).
 * Whatever draws it, svg.ts post-processes the SVG before it goes inline.
 */
import type { Design, Diagram } from '../../design/model.js';
import { toMermaid } from './mermaid.js';

/** Mermaid source -> SVG text, synchronously (asynchronous renderers render ahead). */
export type RawDiagramRenderer = (source: string) => string;

export const DIAGRAM_RENDERERS = ['beautiful-mermaid', 'mermaid-cli'] as const;
export type DiagramRendererName = (typeof DIAGRAM_RENDERERS)[number];

/** Every diagram the document shows, in document order. */
export function documentDiagrams(design: Design): Diagram[] {
  return [design.enforcement.placementDiagram, design.contract.sequenceDiagram, design.outbound?.circuitDiagram].filter(
    (d): d is Diagram => d !== undefined,
  );
}

/** The Mermaid source of each of the document's diagrams, with its title. */
export function diagramSources(design: Design): { source: string; title: string }[] {
  return documentDiagrams(design).map((d) => ({ source: toMermaid(d), title: d.title }));
}

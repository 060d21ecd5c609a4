/**
 * The default diagram renderer: beautiful-mermaid draws Mermaid as SVG in-process (no
 * browser), synchronously once loaded. It is loaded lazily, only when a document with
 * diagrams is rendered as HTML, because loading its layout engine costs more than the rest
 * of the renderer.
 *
 * Two things it does differently from Mermaid are corrected here: it prints Mermaid's
 * entity codes (`#quot;`, `#59;`) literally instead of decoding them, so every label is
 * decoded (and escaped again for XML); and it asks for the document's colours by CSS
 * variable, so a diagram follows the page's light or dark scheme.
 */
import { decodeXmlEntities, htmlText } from '../../escape/markup.js';
import type { RawDiagramRenderer } from './index.js';

/** The page's colours (templates/html/styles.css), passed as CSS variables. */
const DIAGRAM_COLOURS = {
  bg: 'var(--rl-bg)',
  fg: 'var(--rl-fg)',
  line: 'var(--rl-diagram-line)',
  accent: 'var(--rl-diagram-arrow)',
  muted: 'var(--rl-muted)',
  surface: 'var(--rl-diagram-fill)',
  border: 'var(--rl-diagram-stroke)',
} as const;

const NAMED: Record<string, string> = { quot: '"', lt: '<', gt: '>', amp: '&', apos: "'", nbsp: '\u00a0' };

/** Mermaid's entity codes (`#35;`, `#quot;`) -> characters, as Mermaid itself decodes them. */
export function decodeMermaidEntities(text: string): string {
  return text.replace(/#(\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, code: string) => {
    if (/^\d+$/.test(code)) {
      const n = Number.parseInt(code, 10);
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
    }
    return NAMED[code] ?? whole;
  });
}

/** Decodes Mermaid entity codes in every text node of an SVG (style sheets untouched). */
export function decodeLabels(svg: string): string {
  return svg
    .split(/(<style\b[^>]*>[\s\S]*?<\/style>)/i)
    .map((part, i) =>
      i % 2 === 1 ? part : part.replace(/>([^<]+)</g, (_, text: string) => `>${htmlText(decodeMermaidEntities(decodeXmlEntities(text)))}<`),
    )
    .join('');
}

/**
 * Advance widths (thousandths of an em) of DejaVu Sans for ASCII 32-126: the widest face in
 * the page's font stack, and the sans-serif a Linux reader often ends up with. beautiful-
 * mermaid sizes its boxes for Inter, which is narrower; fitLabels uses these widths as the
 * worst case.
 */
const WIDE_SANS = [
  318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337,
  337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732,
  684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635,
  635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];

/** Worst-case width of a line of text at a font size, in px. */
export function worstCaseWidth(text: string, fontSize: number, fontWeight = 400): number {
  let em = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    const ascii = code >= 32 && code <= 126 ? WIDE_SANS[code - 32] : undefined;
    em += ascii !== undefined ? ascii / 1000 : code >= 0x1100 ? 1 : 0.7;
  }
  return em * fontSize * (fontWeight >= 600 ? 1.1 : 1);
}

/** Space kept between a label and the edge of its box, in px. */
const LABEL_PADDING = 3;

const attrOf = (attrs: string, name: string): string | undefined => new RegExp(`\\s${name}="([^"]*)"`).exec(attrs)?.[1];
const numOf = (attrs: string, name: string): number | undefined => {
  const v = attrOf(attrs, name);
  return v === undefined ? undefined : Number(v);
};

/**
 * Shrinks the font of any label that would not fit its box (or the drawing) in the widest
 * font of the stack, so no label overflows its node whatever font the reader has. A label
 * is fitted to the first rectangle of its group (node, edge label, participant), else to
 * the viewBox.
 */
export function fitLabels(svg: string): string {
  const viewBox =
    /^<svg\b[^>]*\sviewBox="([^"]*)"/
      .exec(svg)?.[1]
      ?.split(/[\s,]+/)
      .map(Number) ?? [];
  const [vx = 0, , vw = 0] = viewBox;
  const groups: { rect?: { x: number; width: number } }[] = [{}];
  const pattern = /<text\b([^>]*)>([\s\S]*?)<\/text>|<(\/?)(g|rect)\b([^>]*)>/g;
  return svg.replace(pattern, (whole, textAttrs?: string, body?: string, close?: string, tag?: string, attrs = '') => {
    if (tag === 'g') {
      if (close) groups.pop();
      else if (!attrs.endsWith('/')) groups.push({});
      return whole;
    }
    if (tag === 'rect') {
      const group = groups[groups.length - 1];
      const x = numOf(attrs, 'x');
      const width = numOf(attrs, 'width');
      if (group && !group.rect && x !== undefined && width !== undefined) group.rect = { x, width };
      return whole;
    }
    if (textAttrs === undefined || body === undefined) return whole;
    const size = numOf(textAttrs, 'font-size');
    const x = numOf(textAttrs, 'x');
    if (size === undefined || x === undefined) return whole;
    const weight = numOf(textAttrs, 'font-weight') ?? 400;
    const lines = /<tspan\b/.test(body)
      ? [...body.matchAll(/<tspan\b[^>]*>([^<]*)<\/tspan>/g)].map((m) => m[1] ?? '')
      : [body.replace(/<[^>]*>/g, '')];
    const widest = Math.max(0, ...lines.map((l) => worstCaseWidth(decodeXmlEntities(l), size, weight)));
    if (widest === 0) return whole;
    const box = groups[groups.length - 1]?.rect;
    const [left, right] = box ? [box.x + LABEL_PADDING, box.x + box.width - LABEL_PADDING] : [vx + 1, vx + vw - 1];
    const anchor = attrOf(textAttrs, 'text-anchor') ?? 'start';
    const room = anchor === 'middle' ? 2 * Math.min(x - left, right - x) : anchor === 'end' ? x - left : right - x;
    if (room <= 0 || widest <= room) return whole;
    const fitted = Math.floor(((size * room) / widest) * 10) / 10;
    return `<text${textAttrs.replace(/\sfont-size="[^"]*"/, ` font-size="${fitted}"`)}>${body}</text>`;
  });
}

export async function loadBeautifulMermaid(): Promise<RawDiagramRenderer> {
  const { renderMermaidSVG } = await import('beautiful-mermaid');
  return (source) => fitLabels(decodeLabels(renderMermaidSVG(source, { ...DIAGRAM_COLOURS, transparent: true })));
}

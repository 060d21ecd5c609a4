/**
 * Post-processing of a rendered diagram's SVG before it goes inline into an HTML page,
 * whichever renderer drew it:
 * - nothing is fetched: `@import` and `@font-face` rules are removed, and an SVG that still
 *   references anything outside itself (other than XML namespace names) is refused;
 * - no script: `<script>` and `<foreignObject>` elements and `on*` attributes are refused;
 * - one system sans-serif font stack for every label;
 * - responsive: `width:100%`, `height:auto`, viewBox kept, and a `min-width` at which its
 *   smallest label is 12 px (a wide diagram scrolls in its figure rather than shrinking its
 *   labels); `max-width` is the intrinsic width, or that minimum when it is larger;
 * - unique ids: every id gets the diagram's prefix (the root `<svg>` carries the prefix
 *   itself) and every reference (`url(#…)`, `href="#…"`, CSS `#…`) follows, so several
 *   diagrams on one page cannot take each other's arrowheads;
 * - scoped styles: every rule of the SVG's `<style>` is prefixed with `#<prefix>`, so it
 *   cannot restyle the page or another diagram;
 * - `data-*` attributes (copies of the labels) are dropped and coordinates are rounded to
 *   two decimals, which keeps the page small and the output the same on every platform.
 */
import { htmlText } from '../../escape/markup.js';

/** The document's sans-serif stack (the same as body text in the HTML stylesheet). */
export const FONT_STACK =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Liberation Sans", "DejaVu Sans", sans-serif';

/** The smallest scale a diagram is drawn at when its labels say nothing smaller (see minDrawScale). */
const MIN_SCALE = 0.7;

/** The smallest label size, in CSS pixels, a diagram is ever drawn with (on a phone too). */
export const MIN_TEXT_PX = 12;

/** The smallest font size an SVG's text uses (attributes and style rules), if it states one. */
export function smallestFontSize(svg: string): number | undefined {
  const sizes = [
    ...[...svg.matchAll(/\sfont-size="([\d.]+)(?:px)?"/g)].map((m) => Number(m[1])),
    ...[...svg.matchAll(/font-size\s*:\s*([\d.]+)px/g)].map((m) => Number(m[1])),
  ].filter((n) => Number.isFinite(n) && n > 0);
  return sizes.length > 0 ? Math.min(...sizes) : undefined;
}

/** The scale below which the smallest label would be under MIN_TEXT_PX (MIN_SCALE when no size is stated). */
function minDrawScale(svg: string): number {
  const smallest = smallestFontSize(svg);
  return smallest === undefined ? MIN_SCALE : MIN_TEXT_PX / smallest;
}

interface SvgOptions {
  /** The diagram's unique id on its page; also the prefix of every id inside. */
  id: string;
  /** Accessible name of the diagram. */
  label: string;
}

/** Thrown when a renderer's SVG cannot be made safe to inline. */
export class UnsafeSvgError extends Error {
  constructor(reason: string) {
    super(`rl-design: refusing to inline a diagram SVG: ${reason}`);
    this.name = 'UnsafeSvgError';
  }
}

const GEOMETRY_ATTRIBUTES = new Set([
  'x',
  'y',
  'x1',
  'x2',
  'y1',
  'y2',
  'cx',
  'cy',
  'r',
  'rx',
  'ry',
  'dx',
  'dy',
  'width',
  'height',
  'points',
  'd',
  'transform',
  'viewBox',
  'refX',
  'refY',
  'markerWidth',
  'markerHeight',
  'stroke-width',
  'font-size',
]);

/** Rounds every decimal number in a geometry value to two places. */
function roundNumbers(value: string): string {
  return value.replace(/-?\d*\.\d+(?:e-?\d+)?/gi, (n) => {
    const r = Math.round(Number(n) * 100) / 100;
    return Object.is(r, -0) ? '0' : String(r);
  });
}

/** Splits an SVG into text outside `<style>` elements and the style elements' CSS. */
function splitStyles(svg: string): { parts: { css: boolean; text: string }[] } {
  const parts: { css: boolean; text: string }[] = [];
  const re = /(<style\b[^>]*>)([\s\S]*?)(<\/style>)/gi;
  let last = 0;
  for (const m of svg.matchAll(re)) {
    parts.push({ css: false, text: svg.slice(last, m.index) + (m[1] ?? '') });
    parts.push({ css: true, text: m[2] ?? '' });
    parts.push({ css: false, text: m[3] ?? '' });
    last = m.index + m[0].length;
  }
  parts.push({ css: false, text: svg.slice(last) });
  return { parts };
}

/** CSS inside an SVG `<style>` may be wrapped in CDATA; unwrap it. */
function unwrapCdata(css: string): string {
  return css.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1');
}

interface CssBlock {
  prelude: string;
  body: string;
}

/** Top-level `prelude { body }` blocks and `@rule ...;` statements of a style sheet. */
function cssBlocks(css: string): (CssBlock | { statement: string })[] {
  const out: (CssBlock | { statement: string })[] = [];
  let i = 0;
  while (i < css.length) {
    const open = css.indexOf('{', i);
    const semi = css.indexOf(';', i);
    if (semi >= 0 && (open < 0 || semi < open) && css.slice(i, semi).trim().startsWith('@')) {
      out.push({ statement: css.slice(i, semi + 1).trim() });
      i = semi + 1;
      continue;
    }
    if (open < 0) break;
    let depth = 1;
    let j = open + 1;
    while (j < css.length && depth > 0) {
      if (css[j] === '{') depth += 1;
      else if (css[j] === '}') depth -= 1;
      j += 1;
    }
    out.push({ prelude: css.slice(i, open).trim(), body: css.slice(open + 1, j - 1) });
    i = j;
  }
  return out;
}

function scopeSelector(selector: string, scope: string, rootIds: readonly string[]): string {
  let s = selector.trim();
  for (const root of rootIds) {
    if (s === `#${root}` || s.startsWith(`#${root} `) || s.startsWith(`#${root}.`) || s.startsWith(`#${root}:`)) {
      return `#${scope}${s.slice(root.length + 1)}`;
    }
  }
  if (s.startsWith(`#${scope}`)) return s;
  if (/^(?:svg|:root|:host)(?![\w-])/.test(s)) return s.replace(/^(?:svg|:root|:host)/, `#${scope}`);
  if (s === '*') return `#${scope} *`;
  s = `#${scope} ${s}`;
  return s;
}

/** Scopes every rule of a style sheet to `#scope` and drops what would fetch or leak. */
export function scopeCss(css: string, scope: string, rootIds: readonly string[] = []): string {
  const out: string[] = [];
  for (const block of cssBlocks(unwrapCdata(css).replace(/\/\*[\s\S]*?\*\//g, ''))) {
    if ('statement' in block) continue; // @import, @charset, @namespace: nothing to keep
    const prelude = block.prelude;
    if (/^@font-face\b/i.test(prelude)) continue;
    if (/^@keyframes\b|^@-webkit-keyframes\b/i.test(prelude)) {
      out.push(`${prelude} {${block.body}}`);
      continue;
    }
    if (/^@(?:media|supports)\b/i.test(prelude)) {
      out.push(`${prelude} { ${scopeCss(block.body, scope, rootIds)} }`);
      continue;
    }
    if (prelude.startsWith('@')) continue;
    const selectors = prelude.split(',').map((s) => scopeSelector(s, scope, rootIds));
    const body = block.body.replace(/font-family\s*:[^;}]*/gi, `font-family: ${FONT_STACK}`).trim();
    out.push(`${selectors.join(', ')} { ${body.replace(/\s*\n\s*/g, ' ')} }`);
  }
  return out.join('\n');
}

/**
 * Makes a rendered SVG safe and well-behaved inline (see the module comment). Throws
 * UnsafeSvgError when the input is not an SVG, or scripts or external references remain.
 */
export function prepareSvg(raw: string, options: SvgOptions): string {
  const scope = options.id;
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(scope)) throw new UnsafeSvgError(`"${scope}" is not a usable id`);
  let svg = raw
    .replace(/\sdata-[\w-]+="[^"]*"/g, '')
    .replace(/<\?xml[\s\S]*?\?>/g, '')
    .replace(/<!DOCTYPE[^>]*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .trim();
  if (!/^<svg[\s>]/.test(svg) || !/<\/svg>$/.test(svg)) throw new UnsafeSvgError('the renderer did not return one <svg> element');
  if (/<script\b|<foreignObject\b|<iframe\b|<object\b|<embed\b/i.test(svg))
    throw new UnsafeSvgError('it contains script or embedded content');
  if (/\son[a-z]+\s*=/i.test(svg.replace(/>[^<]*</g, '><'))) throw new UnsafeSvgError('it has an event-handler attribute');

  // The root element and its attributes.
  const rootMatch = /^<svg\b([^>]*)>/.exec(svg);
  const rootAttrs = rootMatch?.[1] ?? '';
  const attr = (name: string): string | undefined => new RegExp(`\\s${name}="([^"]*)"`).exec(rootAttrs)?.[1];
  const viewBox = attr('viewBox');
  const box = viewBox
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (box?.length !== 4 || box.some((n) => !Number.isFinite(n)) || (box[2] ?? 0) <= 0 || (box[3] ?? 0) <= 0) {
    throw new UnsafeSvgError('it has no usable viewBox');
  }
  const width = Math.ceil(box[2] ?? 0);
  const height = Math.ceil(box[3] ?? 0);
  const oldRootId = attr('id');
  const customProperties = (attr('style') ?? '')
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d.startsWith('--'));
  // Never drawn so small that its smallest label is under MIN_TEXT_PX (its figure scrolls
  // instead); a drawing whose labels are smaller than that is drawn larger than its size.
  const scale = minDrawScale(svg);
  const style = [
    ...customProperties,
    `width:100%`,
    `max-width:${Math.max(width, Math.ceil(width * scale))}px`,
    `min-width:${Math.ceil(width * scale)}px`,
    `height:auto`,
  ].join(';');
  const root =
    `<svg xmlns="http://www.w3.org/2000/svg" id="${scope}" class="diagram-svg" role="img" aria-label="${htmlText(options.label)}"` +
    ` viewBox="${roundNumbers(viewBox ?? '')}" width="${width}" height="${height}" style="${htmlText(style)}">`;
  svg = root + svg.slice(rootMatch?.[0].length ?? 0);

  // Ids: prefix each inner id, then point every reference at the new names.
  const ids = new Map<string, string>();
  svg = svg.replace(/(<[^>]*?\s)id="([^"]+)"/g, (whole, before: string, id: string) => {
    if (id === scope && before.startsWith('<svg')) return whole;
    const renamed = id.startsWith(`${scope}-`) ? id : `${scope}-${id}`;
    ids.set(id, renamed);
    return `${before}id="${renamed}"`;
  });
  const ref = (id: string): string => (oldRootId !== undefined && id === oldRootId ? scope : (ids.get(id) ?? id));
  const { parts } = splitStyles(svg);
  svg = parts
    .map((part) => {
      if (part.css) {
        const roots = oldRootId ? [oldRootId] : [];
        let css = scopeCss(part.text, scope, roots);
        css = css.replace(/url\(\s*(['"]?)#([^)'"]+)\1\s*\)/g, (_, q: string, id: string) => `url(${q}#${ref(id)}${q})`);
        for (const [from, to] of ids) css = css.split(`#${from} `).join(`#${to} `).split(`#${from}{`).join(`#${to}{`);
        return `\n${css.replace(/</g, '\\3C ')}\n`;
      }
      return part.text
        .replace(/url\(\s*(['"]?)#([^)'"]+)\1\s*\)/g, (_, q: string, id: string) => `url(${q}#${ref(id)}${q})`)
        .replace(/(\s(?:xlink:)?href=")#([^"]+)"/g, (_, pre: string, id: string) => `${pre}#${ref(id)}"`)
        .replace(/\sfont-family="[^"]*"/g, ` font-family="${htmlText(FONT_STACK)}"`)
        .replace(/\s([\w:-]+)="([^"]*)"/g, (whole, name: string, value: string) =>
          GEOMETRY_ATTRIBUTES.has(name) ? ` ${name}="${roundNumbers(value)}"` : whole,
        );
    })
    .join('');

  // Nothing may point outside the SVG (namespace names are identifiers, not fetched).
  const withoutNamespaces = svg.replace(/\sxmlns(?::\w+)?="[^"]*"/g, '');
  if (/url\(\s*['"]?(?!#)|(?:href|src)="(?!#)|@import/i.test(withoutNamespaces)) {
    throw new UnsafeSvgError('it references something outside itself');
  }
  return svg;
}

/**
 * The handlebars environment for Markdown templates: a private instance with HTML escaping
 * off (`noEscape`: Markdown, not HTML, is the target) and only the helpers below. Every
 * helper returns Markdown that is safe where its name says it goes, so templates never
 * print a value without one (test/render/templates-lint.test.ts enforces it).
 */
import Handlebars from 'handlebars';
import type { Diagram } from '../design/model.js';
import { toMermaid } from './diagrams/mermaid.js';
import { mdCell, mdCellCode, mdCode, mdFence, mdLinkText, mdText, type Printable } from '../escape/markup.js';
import { fmtNumber } from './format.js';

/** How a template links to another section: resolved per layout (same file or another page). */
export type SectionLinkResolver = (sectionId: string) => { label: string; href: string } | undefined;

type HelperOptions = Handlebars.HelperOptions;

function isOptions(value: unknown): value is HelperOptions {
  return typeof value === 'object' && value !== null && 'hash' in value && 'data' in value;
}

/** The positional arguments of a helper call, without handlebars' trailing options object. */
function args(list: unknown[]): unknown[] {
  return isOptions(list[list.length - 1]) ? list.slice(0, -1) : list;
}

function printable(value: unknown): Printable {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}

function list(value: unknown): Printable[] {
  return Array.isArray(value) ? value.map(printable) : value === undefined || value === null ? [] : [printable(value)];
}

/** A number with thousands separators; anything else is escaped as text. */
function num(value: unknown): string {
  return typeof value === 'number' ? fmtNumber(value) : mdText(printable(value));
}

/**
 * A link destination made of characters that need no escaping: our own relative paths and
 * anchors pass unchanged; anything else is percent-encoded.
 */
export function mdHref(value: Printable): string {
  return String(value ?? '').replace(/[^A-Za-z0-9._~/#-]/g, (c) =>
    Array.from(new TextEncoder().encode(c), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** Names of every helper registered below (the template lint accepts only these). */
export const HELPER_NAMES = [
  'mdText',
  'mdLinkText',
  'mdCell',
  'mdCode',
  'mdCellCode',
  'mdFence',
  'mdHref',
  'mermaid',
  'n',
  'codeList',
  'cellCodeList',
  'textList',
  'sub',
  'sectionLink',
] as const;

/** Block helpers from handlebars itself that templates may use for structure. */
export const BUILTIN_BLOCK_HELPERS = ['if', 'unless', 'each', 'with'] as const;

export function createMarkdownEnvironment(): typeof Handlebars {
  const hb = Handlebars.create();
  const reg = (name: (typeof HELPER_NAMES)[number], fn: (...a: unknown[]) => unknown): void => {
    hb.registerHelper(name, fn as Handlebars.HelperDelegate);
  };

  reg('mdText', (...a) => mdText(printable(args(a)[0])));
  reg('mdLinkText', (...a) => mdLinkText(printable(args(a)[0])));
  reg('mdCell', (...a) => mdCell(printable(args(a)[0])));
  reg('mdCode', (...a) => mdCode(printable(args(a)[0])));
  reg('mdCellCode', (...a) => mdCellCode(printable(args(a)[0])));
  reg('mdFence', (...a) => {
    const [content, language] = args(a);
    return mdFence(printable(content), printable(language));
  });
  reg('mdHref', (...a) => mdHref(printable(args(a)[0])));
  reg('mermaid', (...a) => mdFence(toMermaid(args(a)[0] as Diagram), 'mermaid'));
  reg('n', (...a) => num(args(a)[0]));
  /** Array -> `a`, `b`, `c` (code spans, for running text). */
  reg('codeList', (...a) => list(args(a)[0]).map(mdCode).filter(Boolean).join(', '));
  /** Array -> `a`, `b` for a table cell ("-" when empty). */
  reg('cellCodeList', (...a) => list(args(a)[0]).map(mdCellCode).join(', ') || '-');
  reg('textList', (...a) => list(args(a)[0]).map(mdText).filter(Boolean).join(', '));
  /** The next subsection number of the current section: "4.1", "4.2", ... */
  reg('sub', (...a) => {
    const options = a[a.length - 1] as HelperOptions;
    const root = options.data.root as { num: number; __sub?: number };
    root.__sub = (root.__sub ?? 0) + 1;
    return `${fmtNumber(root.num)}.${fmtNumber(root.__sub)}`;
  });
  /** A link to another section, by id; empty when the section is not in the document. */
  reg('sectionLink', (...a) => {
    const options = a[a.length - 1] as HelperOptions;
    const id = String(args(a)[0]);
    const resolve = (options.data as { links?: SectionLinkResolver }).links;
    const target = resolve?.(id);
    return target ? `[${mdLinkText(target.label)}](${mdHref(target.href)})` : '';
  });
  return hb;
}

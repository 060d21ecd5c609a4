/**
 * The two sets of handlebars templates shipped in templates/, with the options each is
 * compiled with. Plain data, shared by the run-time compiler (compiled-templates.ts) and
 * the build's precompiler (scripts/bundle.mjs), so both compile the same files the same way.
 */
export interface TemplateSet {
  /** Folders under templates/, e.g. `markdown/sections`. */
  dirs: readonly string[];
  /** Template file suffix in those folders. */
  suffix: string;
  options: CompileOptions;
}

/** The subset of handlebars' compile options the templates use. */
export interface CompileOptions {
  noEscape?: boolean;
  strict?: boolean;
  knownHelpersOnly?: boolean;
  knownHelpers?: Record<string, boolean>;
}

export type TemplateSetName = 'markdown' | 'html';

export const TEMPLATE_SETS: Readonly<Record<TemplateSetName, TemplateSet>> = {
  // Markdown, not HTML, is the target: escaping is done by the helpers (noEscape), and a
  // misspelt field in a template is an error, not an empty string (strict).
  markdown: { dirs: ['markdown/sections', 'markdown/layouts'], suffix: '.md.hbs', options: { noEscape: true, strict: true } },
  // HTML page layouts: handlebars' escaping on, no helpers beyond the structural ones.
  html: {
    dirs: ['html/layouts'],
    suffix: '.html.hbs',
    options: { strict: true, knownHelpersOnly: true, knownHelpers: { if: true, each: true, unless: true } },
  },
};

/** A template's key: its path under the set's root folder, e.g. `sections/02-matrix.md.hbs`. */
export function templateKey(set: TemplateSetName, dir: string, file: string): string {
  return `${dir.slice(set.length + 1)}/${file}`;
}

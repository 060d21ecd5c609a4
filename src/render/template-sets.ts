/**
 * The two sets of handlebars templates shipped in templates/, the options each is compiled
 * with, and their sources. Shared by the run-time compiler (compiled-templates.ts) and the
 * build's precompiler (scripts/bundle.mjs), so both compile the same files the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TEMPLATES_DIR } from '../paths.js';

interface TemplateSet {
  /** Folders under templates/, e.g. `markdown/sections`. */
  dirs: readonly string[];
  /** Template file suffix in those folders. */
  suffix: string;
  options: CompileOptions;
}

/** The subset of handlebars' compile options the templates use. */
interface CompileOptions {
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

/**
 * Every template of a set, in a stable order, keyed by its path under the set's folder
 * (e.g. `sections/02-matrix.md.hbs`), with line endings normalised.
 */
export function templateSources(set: TemplateSetName): { key: string; source: string }[] {
  const { dirs, suffix } = TEMPLATE_SETS[set];
  return dirs.flatMap((dir) =>
    readdirSync(path.join(TEMPLATES_DIR, dir))
      .filter((file) => file.endsWith(suffix))
      .sort()
      .map((file) => ({
        key: `${dir.slice(set.length + 1)}/${file}`,
        source: readFileSync(path.join(TEMPLATES_DIR, dir, file), 'utf8').replace(/\r\n?/g, '\n'),
      })),
  );
}

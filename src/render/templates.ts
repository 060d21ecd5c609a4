/**
 * Loads and compiles the Markdown templates shipped in templates/markdown/ (package
 * assets, like lua/: read once, never written). Compiled with `noEscape` (Markdown, not
 * HTML, is the target: escaping is done by the helpers) and `strict` (a misspelt field in a
 * template is an error, not an empty string).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createMarkdownEnvironment, type SectionLinkResolver } from './helpers.js';

/** templates/ at the package root: three levels up from src/render/ or dist/render/. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url));
export const MARKDOWN_TEMPLATES_DIR = `${TEMPLATES_DIR}markdown/`;

export type CompiledTemplate = (view: object, links?: SectionLinkResolver) => string;

let cache: Map<string, CompiledTemplate> | undefined;

function load(): Map<string, CompiledTemplate> {
  const hb = createMarkdownEnvironment();
  const map = new Map<string, CompiledTemplate>();
  for (const sub of ['sections', 'layouts']) {
    const dir = `${MARKDOWN_TEMPLATES_DIR}${sub}/`;
    for (const file of readdirSync(dir).sort()) {
      if (!file.endsWith('.md.hbs')) continue;
      const source = readFileSync(`${dir}${file}`, 'utf8').replace(/\r\n?/g, '\n');
      const compiled = hb.compile(source, { noEscape: true, strict: true });
      map.set(`${sub}/${file}`, (view, links) => compiled({ ...view }, { data: { links } }));
    }
  }
  return map;
}

/** A compiled template by its path under templates/markdown/, e.g. `sections/02-matrix.md.hbs`. */
export function template(name: string): CompiledTemplate {
  cache ??= load();
  const found = cache.get(name);
  if (!found) throw new Error(`rl-design: missing template templates/markdown/${name}`);
  return found;
}

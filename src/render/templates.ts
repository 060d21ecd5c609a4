/**
 * The Markdown templates shipped in templates/markdown/ (package assets, like lua/: read
 * once, never written), compiled into the Markdown helpers' environment. Options are in
 * template-sets.ts.
 */
import { compiledTemplates } from './compiled-templates.js';
import { createMarkdownEnvironment, type SectionLinkResolver } from './helpers.js';
import { TEMPLATES_DIR } from '../paths.js';

export const MARKDOWN_TEMPLATES_DIR = `${TEMPLATES_DIR}/markdown/`;

type CompiledTemplate = (view: object, links?: SectionLinkResolver) => string;

let cache: Map<string, CompiledTemplate> | undefined;

function load(): Map<string, CompiledTemplate> {
  const map = new Map<string, CompiledTemplate>();
  for (const [key, compiled] of compiledTemplates('markdown', createMarkdownEnvironment())) {
    map.set(key, (view, links) => compiled({ ...view }, { data: { links } }));
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

/**
 * The handlebars templates of one set (template-sets.ts), compiled into the given
 * environment. From source (the tests, dist/) each file under templates/ is read and
 * compiled here; the published bundle replaces this module with the same templates
 * precompiled at build time (scripts/bundle.mjs), so the CLI never loads or runs
 * handlebars' compiler. Keep the two in step: same keys, same options.
 */
import type Handlebars from 'handlebars';
import { TEMPLATE_SETS, templateSources, type TemplateSetName } from './template-sets.js';

export function compiledTemplates(set: TemplateSetName, hb: typeof Handlebars): Map<string, Handlebars.TemplateDelegate> {
  const { options } = TEMPLATE_SETS[set];
  return new Map(templateSources(set).map(({ key, source }) => [key, hb.compile(source, options)]));
}

/**
 * The handlebars templates of one set (template-sets.ts), compiled into the given
 * environment. From source (the tests, dist/) each file under templates/ is read and
 * compiled here; the published bundle replaces this module with the same templates
 * precompiled at build time (scripts/bundle.mjs), so the CLI never loads or runs
 * handlebars' compiler. Keep the two in step: same keys, same options.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Handlebars from 'handlebars';
import { TEMPLATES_DIR } from '../paths.js';
import { TEMPLATE_SETS, templateKey, type TemplateSetName } from './template-sets.js';

export function compiledTemplates(set: TemplateSetName, hb: typeof Handlebars): Map<string, Handlebars.TemplateDelegate> {
  const { dirs, suffix, options } = TEMPLATE_SETS[set];
  const map = new Map<string, Handlebars.TemplateDelegate>();
  for (const dir of dirs) {
    for (const file of readdirSync(path.join(TEMPLATES_DIR, dir)).sort()) {
      if (!file.endsWith(suffix)) continue;
      const source = readFileSync(path.join(TEMPLATES_DIR, dir, file), 'utf8').replace(/\r\n?/g, '\n');
      map.set(templateKey(set, dir, file), hb.compile(source, options));
    }
  }
  return map;
}

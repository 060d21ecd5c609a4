/**
 * The HTML page layouts (templates/html/layouts/*.html.hbs) and the stylesheet
 * (templates/html/styles.css): package assets, read once. The layouts run in their own
 * handlebars environment with HTML escaping on: `{{x}}` is always escaped, and only the
 * renderer's finished HTML (fields named `...Html`) and the stylesheet (`inlineCss`) are
 * printed raw (`{{{...}}}`; test/render/html-templates.test.ts enforces it). Sections are
 * not written here: they are the Markdown sections, converted (convert.ts).
 */
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { TEMPLATES_DIR } from '../../paths.js';
import { compiledTemplates } from '../compiled-templates.js';

export const HTML_TEMPLATES_DIR = `${TEMPLATES_DIR}/html/`;

type HtmlTemplate = (view: object) => string;

let layouts: Map<string, HtmlTemplate> | undefined;
let css: string | undefined;

function load(): Map<string, HtmlTemplate> {
  const map = new Map<string, HtmlTemplate>();
  for (const [key, compiled] of compiledTemplates('html', Handlebars.create()))
    map.set(key.replace(/^layouts\//, ''), (view) => compiled(view));
  return map;
}

/** A compiled page layout by file name, e.g. `page.html.hbs`. */
export function htmlTemplate(name: string): HtmlTemplate {
  layouts ??= load();
  const found = layouts.get(name);
  if (!found) throw new Error(`rl-design: missing template templates/html/layouts/${name}`);
  return found;
}

/** The document stylesheet: inlined by the single file, assets/styles.css in the folder. */
export function stylesheet(): string {
  css ??= readFileSync(`${HTML_TEMPLATES_DIR}styles.css`, 'utf8').replace(/\r\n?/g, '\n');
  if (/<\/style|@import|url\(/i.test(css)) throw new Error('rl-design: the stylesheet may not fetch anything or close <style>');
  return css;
}

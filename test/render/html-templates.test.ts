/**
 * The HTML page layouts print every value escaped (`{{x}}`, handlebars' HTML escaping):
 * only the renderer's finished HTML (`...Html` fields) and the stylesheet (`inlineCss`) may be
 * printed raw, no partials, no helpers beyond if / each / unless.
 */
import { readdirSync, readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { HTML_TEMPLATES_DIR, htmlTemplate, stylesheet } from '../../src/render/html/templates.js';

type Node = hbs.AST.Node & Record<string, unknown>;

function lint(source: string): string[] {
  const problems: string[] = [];
  const visit = (node: Node | undefined): void => {
    if (!node || typeof node !== 'object') return;
    switch (node.type) {
      case 'MustacheStatement': {
        const m = node as unknown as hbs.AST.MustacheStatement;
        const name = (m.path as hbs.AST.PathExpression).original;
        if (m.params.length > 0) problems.push(`{{${name} ...}}: no helpers`);
        if (!m.escaped && !/Html$|^inlineCss$/.test(name)) problems.push(`{{{${name}}}} prints raw text`);
        break;
      }
      case 'BlockStatement': {
        const b = node as unknown as hbs.AST.BlockStatement;
        const name = (b.path as hbs.AST.PathExpression).original;
        if (!['if', 'each', 'unless'].includes(name)) problems.push(`block helper #${name}`);
        visit(b.program as unknown as Node);
        visit(b.inverse as unknown as Node);
        break;
      }
      case 'Program':
        (node as unknown as hbs.AST.Program).body.forEach((n) => visit(n as Node));
        break;
      case 'PartialStatement':
      case 'PartialBlockStatement':
      case 'DecoratorBlock':
      case 'Decorator':
        problems.push(`${node.type} is not allowed`);
        break;
      default:
        break;
    }
  };
  visit(Handlebars.parse(source) as unknown as Node);
  if (/<script|\son[a-z]+=|https?:\/\//i.test(source)) problems.push('script, handler or absolute URL in the layout');
  return problems;
}

const layouts = readdirSync(`${HTML_TEMPLATES_DIR}layouts`).filter((f) => f.endsWith('.html.hbs'));

describe('HTML layouts', () => {
  it('exist', () => {
    expect(layouts).toContain('page.html.hbs');
  });

  it.each(layouts)('%s prints nothing raw but finished HTML', (name) => {
    expect(lint(readFileSync(`${HTML_TEMPLATES_DIR}layouts/${name}`, 'utf8'))).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    for (const bad of [
      '{{{projectName}}}',
      '{{> nav}}',
      '{{#with x}}{{/with}}',
      '{{lookup a b}}',
      '<a onclick="x">',
      '<link href="https://x.example/">',
    ]) {
      expect(lint(bad), bad).not.toEqual([]);
    }
    expect(lint('<p>{{projectName}}</p>{{{bodyHtml}}}<style>{{{inlineCss}}}</style>')).toEqual([]);
  });

  it('escapes every value it prints', () => {
    const out = htmlTemplate('page.html.hbs')({
      projectName: '<script>"x"</script> & \'y\'',
      toolVersion: '0',
      date: '2026-01-01',
      layout: 'folder',
      pageTitle: '</title><script>',
      inlineCss: '',
      stylesheet: 'assets/styles.css',
      homeHref: 'index.html',
      nav: [{ label: '<b>', href: '"x', current: false }],
      pager: [],
      headHtml: '<h1 id="t">t</h1>',
      bodyHtml: '',
    });
    expect(out).not.toMatch(/<script|<b>|<\/title><script/);
    expect(out).toContain('&lt;script&gt;&quot;x&quot;&lt;/script&gt; &amp; &#x27;y&#x27;');
    expect(out).toContain('<a href="&quot;x">&lt;b&gt;</a>');
  });

  it('has a stylesheet that fetches nothing and covers dark mode and print', () => {
    const css = stylesheet();
    expect(css).not.toMatch(/@import|url\(|@font-face|https?:/);
    expect(css).toContain('@media (prefers-color-scheme: dark)');
    expect(css).toContain('@media print');
  });
});

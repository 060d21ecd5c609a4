/**
 * The template lint: no template can print a value without the escaping helper of the
 * place it prints into. Every `{{...}}` must be a call to one of our helpers (no bare
 * field, no triple-stash, no partials); inside a table row only cell helpers are allowed,
 * and cell helpers only there; no helper output lands inside a literal code span.
 */
import { readdirSync, readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { BUILTIN_BLOCK_HELPERS, createMarkdownEnvironment, HELPER_NAMES } from '../../src/render/helpers.js';
import { MARKDOWN_TEMPLATES_DIR } from '../../src/render/templates.js';

type Node = hbs.AST.Node & Record<string, unknown>;

const NO_ARGUMENT_HELPERS = new Set(['sub']);
/** Helpers whose output is safe inside a GFM table cell. */
const CELL_HELPERS = new Set(['mdCell', 'mdCellCode', 'cellCodeList', 'mdLinkText', 'mdHref', 'n']);
/** Helpers that are only for table cells. */
const CELL_ONLY = new Set(['mdCell', 'mdCellCode', 'cellCodeList']);
/** Helpers that produce blocks (fences) and must stand on their own line. */
const BLOCK_HELPERS = new Set(['mdFence', 'mermaid']);

const templates = ['sections', 'layouts'].flatMap((dir) =>
  readdirSync(`${MARKDOWN_TEMPLATES_DIR}${dir}`)
    .filter((f) => f.endsWith('.md.hbs'))
    .map((f) => `${dir}/${f}`),
);

interface Problem {
  line: number;
  message: string;
}

function lint(source: string): Problem[] {
  const problems: Problem[] = [];
  const lines = source.split('\n');
  const helpers = new Set<string>(HELPER_NAMES);
  const visit = (node: Node | undefined): void => {
    if (!node || typeof node !== 'object') return;
    const line = node.loc?.start.line ?? 0;
    const column = node.loc?.start.column ?? 0;
    const text = lines[line - 1] ?? '';
    switch (node.type) {
      case 'MustacheStatement': {
        const m = node as unknown as hbs.AST.MustacheStatement;
        const name = (m.path as hbs.AST.PathExpression).original;
        if (!m.escaped) problems.push({ line, message: `triple-stash {{{${name}}}}` });
        if (m.path.type !== 'PathExpression' || !helpers.has(name)) {
          problems.push({ line, message: `{{${name}}} prints a value without an escaping helper` });
          break;
        }
        if (m.params.length === 0 && !NO_ARGUMENT_HELPERS.has(name))
          problems.push({ line, message: `{{${name}}} without an argument reads a field` });
        const inTable = text.trimStart().startsWith('|');
        if (inTable && !CELL_HELPERS.has(name)) problems.push({ line, message: `${name} in a table row; use a cell helper` });
        if (!inTable && CELL_ONLY.has(name)) problems.push({ line, message: `${name} outside a table row` });
        if (BLOCK_HELPERS.has(name) && text.trim() !== text.slice(column, m.loc.end.column).trim()) {
          problems.push({ line, message: `${name} must stand alone on its line` });
        }
        const before = text.slice(0, column).replace(/\{\{[^}]*\}\}/g, '');
        if ((before.match(/`/g) ?? []).length % 2 === 1) problems.push({ line, message: `${name} inside a literal code span` });
        m.params.forEach((p) => visit(p as Node));
        break;
      }
      case 'SubExpression': {
        const s = node as unknown as hbs.AST.SubExpression;
        const name = (s.path as hbs.AST.PathExpression).original;
        if (!helpers.has(name)) problems.push({ line, message: `subexpression (${name}) is not a helper` });
        s.params.forEach((p) => visit(p as Node));
        break;
      }
      case 'BlockStatement': {
        const b = node as unknown as hbs.AST.BlockStatement;
        const name = (b.path as hbs.AST.PathExpression).original;
        if (!(BUILTIN_BLOCK_HELPERS as readonly string[]).includes(name)) problems.push({ line, message: `block helper #${name}` });
        b.params.forEach((p) => visit(p as Node));
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
        problems.push({ line, message: `${node.type} is not allowed` });
        break;
      default:
        break;
    }
  };
  visit(Handlebars.parse(source) as unknown as Node);
  if (/^\s*(```|~~~)/m.test(source)) problems.push({ line: 0, message: 'literal code fence: use mdFence or mermaid' });
  return problems;
}

describe('template lint', () => {
  it('finds the templates', () => {
    expect(templates.filter((t) => t.startsWith('sections/'))).toHaveLength(11);
  });

  it.each(templates)('%s prints nothing without its escaping helper', (name) => {
    const source = readFileSync(`${MARKDOWN_TEMPLATES_DIR}${name}`, 'utf8');
    expect(lint(source)).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    const bad = [
      '{{projectName}}',
      '{{{mdText x}}}',
      '{{> partial}}',
      '| {{mdText x}} |',
      '| {{mdCode x}} |',
      'Text {{mdCell x}}',
      'In `code {{mdText x}}` span',
      'Before {{mermaid d}}',
      '{{#custom x}}y{{/custom}}',
      '```\nfence\n```',
    ];
    for (const source of bad) expect(lint(source), source).not.toEqual([]);
    expect(
      lint('| {{mdCell a}} | {{mdCellCode b}} | {{n c}} |\n\nSee {{mdText a}} and {{mdCode b}} in {{sub}}.\n\n{{mermaid d}}\n'),
    ).toEqual([]);
  });

  it('registers every helper it allows', () => {
    const hb = createMarkdownEnvironment();
    for (const name of HELPER_NAMES) expect(hb.helpers[name], name).toBeTypeOf('function');
  });
});

import { Lexer, marked, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { mdCell, mdCellCode, mdCode, mdFence, mdLinkText, mdText, mermaidLabel, Slugger, slugAnchor } from '../../src/escape/index.js';
import { HOSTILE } from './fixtures.js';

/** The inline tokens of a one-paragraph Markdown text. */
function inlineTokens(markdown: string): Token[] {
  const [para] = Lexer.lex(markdown, { gfm: true });
  expect(para?.type).toBe('paragraph');
  return (para as Tokens.Paragraph).tokens;
}

/** What a reader sees: the text of every inline token, escapes resolved. */
function seen(tokens: Token[]): string {
  return tokens
    .map((t) => {
      const nested = (t as { tokens?: Token[] }).tokens;
      return nested && t.type !== 'codespan' ? seen(nested) : ((t as { text?: string }).text ?? '');
    })
    .join('');
}

function decodeHtml(html: string): string {
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
  return html.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => entities[e] ?? e);
}

const oneLine = (s: string): string =>
  s
    .replace(/[\r\n]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

describe('mdText', () => {
  it.each(HOSTILE)('keeps %j one run of literal text', (hostile) => {
    const out = mdText(hostile);
    expect(out).not.toMatch(/[\r\n]/);
    const tokens = inlineTokens(`x ${out}`);
    expect(tokens.every((t) => ['text', 'escape'].includes(t.type))).toBe(true);
    const html = marked.parseInline(`x ${out}`, { async: false });
    expect(html).not.toMatch(/</);
    expect(decodeHtml(html)).toBe(`x ${oneLine(hostile)}`);
  });

  it('cannot start a block construct at the start of a line', () => {
    for (const start of ['# h', '- item', '+ item', '1. item', '2) item', '> quote', '<div>', '=== ', '    code']) {
      const [block] = Lexer.lex(mdText(start), { gfm: true });
      expect(block?.type, start).toBe('paragraph');
    }
  });

  it('leaves plain names, numbers and snake_case alone', () => {
    expect(mdText('Acme Orders API')).toBe('Acme Orders API');
    expect(mdText('10.20.0.0/16 and 0.1.0')).toBe('10.20.0.0/16 and 0.1.0');
    expect(mdText('QUOTA_EXCEEDED limit_req')).toBe('QUOTA_EXCEEDED limit_req');
    expect(mdText('_lead trail_')).toBe('\\_lead trail\\_');
  });

  it('turns http(s) URLs into autolinks, leaving sentence punctuation outside', () => {
    expect(mdText('see https://x.example/docs#a_b.')).toBe('see <https://x.example/docs#a_b>.');
    expect(mdText('javascript:alert(1)')).toBe('javascript:alert(1)');
  });

  it('handles non-strings', () => {
    expect(mdText(undefined)).toBe('');
    expect(mdText(null)).toBe('');
    expect(mdText(42)).toBe('42');
  });
});

describe('mdLinkText', () => {
  it('escapes link syntax and keeps leading numbers readable', () => {
    expect(mdLinkText('2. Limit matrix')).toBe('2. Limit matrix');
    for (const hostile of HOSTILE) {
      const [para] = Lexer.lex(`[${mdLinkText(hostile)}](#a)`, { gfm: true });
      const tokens = (para as Tokens.Paragraph).tokens;
      expect(tokens, hostile).toHaveLength(1);
      expect(tokens[0]?.type).toBe('link');
      expect((tokens[0] as Tokens.Link).href).toBe('#a');
      const html = marked.parseInline(`[${mdLinkText(hostile)}](#a)`, { async: false });
      expect(html.startsWith('<a href="#a">') && html.endsWith('</a>')).toBe(true);
      expect(decodeHtml(html.slice('<a href="#a">'.length, -'</a>'.length))).toBe(oneLine(hostile));
    }
  });
});

describe('mdCode', () => {
  it.each([
    ['plain', '`plain`'],
    ['a`b', '``a`b``'],
    ['`start', '`` `start ``'],
    ['end`', '`` end` ``'],
    [' spaced ', '`spaced`'],
    ['x ``` y', '````x ``` y````'],
  ])('%j -> %j', (input, expected) => {
    expect(mdCode(input)).toBe(expected);
  });

  it.each(HOSTILE)('keeps %j as one intact code span', (hostile) => {
    const tokens = inlineTokens(`x ${mdCode(hostile)} y`);
    const spans = tokens.filter((t) => t.type === 'codespan') as Tokens.Codespan[];
    expect(spans).toHaveLength(1);
    expect(spans[0]?.text).toBe(oneLine(hostile));
  });
});

describe('table cells', () => {
  function cells(row: string): string[] {
    const table = Lexer.lex(`| a | b |\n| --- | --- |\n| ${row} | end |\n`, { gfm: true })[0] as Tokens.Table;
    expect(table.type).toBe('table');
    // The last cell must still be "end": no pipe leaked and shifted the columns.
    expect(table.rows[0]?.[1]?.text).toBe('end');
    return (table.rows[0] ?? []).map((c) => c.text);
  }

  it.each(HOSTILE)('mdCell keeps %j inside its cell', (hostile) => {
    cells(mdCell(hostile));
  });

  it.each([...HOSTILE, 'a|b', 'a\\|b', '|', '`|`'])('mdCellCode keeps %j inside its cell as code', (hostile) => {
    const out = mdCellCode(hostile);
    cells(out);
    const table = Lexer.lex(`| a |\n| --- |\n| ${out} |\n`, { gfm: true })[0] as Tokens.Table;
    const tokens = table.rows[0]?.[0]?.tokens ?? [];
    if (hostile.includes('\\|')) {
      expect(decodeHtml(seen(tokens))).toBe(oneLine(hostile));
    } else {
      expect(tokens.map((t) => t.type)).toEqual(['codespan']);
      expect((tokens[0] as Tokens.Codespan).text).toBe(oneLine(hostile));
    }
  });

  it('never leaves a cell empty', () => {
    expect(mdCell('')).toBe('-');
    expect(mdCellCode(undefined)).toBe('-');
  });
});

describe('mdFence', () => {
  it('uses a fence longer than any backtick run and keeps the content verbatim', () => {
    const content = 'a ```` b\n\n\nlast';
    const out = mdFence(content, 'lua');
    expect(out.startsWith('`````lua\n')).toBe(true);
    const [code] = Lexer.lex(out, { gfm: true });
    expect(code?.type).toBe('code');
    expect((code as Tokens.Code).lang).toBe('lua');
    expect((code as Tokens.Code).text).toBe(content);
  });

  it('drops an unsafe language', () => {
    expect(mdFence('x', 'js` onload')).toBe('```\nx\n```');
  });
});

describe('mermaidLabel', () => {
  it.each(HOSTILE)('leaves no quote, bracket, newline or arrow in %j', (hostile) => {
    const out = mermaidLabel(hostile);
    const withoutEntities = out.replace(/#(?:[0-9]+|quot|lt|gt|amp);/g, '');
    expect(withoutEntities).not.toMatch(/["<>\r\n`;%{}|[\]\\#]/);
    expect(withoutEntities).not.toContain('--');
  });

  it('uses Mermaid entity codes', () => {
    expect(mermaidLabel('a "b" <c> #d')).toBe('a #quot;b#quot; #lt;c#gt; #35;d');
  });
});

describe('slugAnchor and Slugger', () => {
  it('follows GitHub', () => {
    expect(slugAnchor('1. Scope and context')).toBe('1-scope-and-context');
    expect(slugAnchor('4.1 Atomic check-and-consume')).toBe('41-atomic-check-and-consume');
    expect(slugAnchor('Rate-limit design: Acme <x> & "y"')).toBe('rate-limit-design-acme-x--y');
    expect(slugAnchor('Ünïcode Straße')).toBe('ünïcode-straße');
  });

  it('numbers repeats', () => {
    const s = new Slugger();
    expect([s.slug('A'), s.slug('A'), s.slug('A-1'), s.slug('A')]).toEqual(['a', 'a-1', 'a-1-1', 'a-2']);
  });

  it('agrees with the anchors marked-rendered HTML would link to', () => {
    expect(marked.parse('## 2. Limit matrix', { async: false })).toContain('2. Limit matrix');
  });
});

import { describe, expect, it } from 'vitest';
import { firstLine, lineColumn, parseStructured } from '../../src/io/text.js';

describe('lineColumn', () => {
  it('counts lines from 1 and columns from 1 within the line, in UTF-16 code units', () => {
    const text = 'ab\ncd\r\n\u{1F600}x';
    expect(lineColumn(text, 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn(text, 2)).toEqual({ line: 1, column: 3 }); // the newline itself ends line 1
    expect(lineColumn(text, 3)).toEqual({ line: 2, column: 1 });
    expect(lineColumn(text, 5)).toEqual({ line: 2, column: 3 }); // a CR is a character of its line
    expect(lineColumn(text, 9)).toEqual({ line: 3, column: 3 }); // the emoji is two code units
    expect(lineColumn(text, text.length)).toEqual({ line: 3, column: 4 });
  });
});

describe('parseStructured', () => {
  it('reads JSON by the file name and YAML otherwise, every YAML document, a byte order mark allowed', () => {
    expect(parseStructured('\uFEFF{"a": 1}', 'x.JSON')).toEqual({ ok: true, docs: [{ a: 1 }] });
    expect(parseStructured('a: 1\n---\nb: 2\n', 'x.yaml')).toEqual({ ok: true, docs: [{ a: 1 }, { b: 2 }] });
  });

  it('never throws: a broken document, in any place of the file, or an alias bomb is a one-line reason', () => {
    expect(parseStructured('{"a": ', 'x.json')).toMatchObject({ ok: false, error: expect.stringMatching(/^not valid JSON: [^\n]+$/) });
    expect(parseStructured('a: 1\n---\nb: [\n', 'x.yaml')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^not valid YAML: [^\n]+$/),
    });
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...'bcdefghij'.split('').map((k, i) => `${k}: &${k} [${`*${'abcdefghij'[i]}, `.repeat(10)}]`),
    ].join('\n');
    expect(parseStructured(bomb, 'x.yml')).toMatchObject({ ok: false, error: expect.stringMatching(/^not valid YAML: /) });
  });

  it('firstLine keeps the first line of a message, at most 200 characters', () => {
    expect(firstLine(new Error('one\ntwo'))).toBe('one');
    expect(firstLine('x'.repeat(300))).toHaveLength(200);
  });
});

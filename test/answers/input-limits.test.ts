/**
 * Answers files as found in someone else's repository: a device instead of a file, huge lists,
 * terminal control characters, broken JSON, a byte order mark, numbers beyond any bound.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIST_CAPS, parseAnswers } from '../../src/answers/load.js';
import { UserError } from '../../src/messages.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { snapshot } from '../helpers/tree.js';

function problem(text: string): string {
  try {
    parseAnswers(text, 'a.json');
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as UserError).message;
  }
  throw new Error('parsed');
}

describe('answers file input', () => {
  it('a JSON syntax error gives the line and column, and no raw bytes of the file', () => {
    const msg = problem('{\n  "project": { "name": "x" },\n  "goals": ["overload",]\n}\n');
    expect(msg).toBe("Answers file a.json is not valid JSON: line 3, column 24: a comma before ']': JSON allows no trailing comma");
    const esc = problem('{\n "project": \x1b[31m\x07 }');
    expect(esc).toContain('line 2, column 13: expected a value');
    expect(esc).toContain('found U+001B');
    expect(esc).not.toMatch(/[\x00-\x08\x0b-\x1f]/);
    expect(problem('{"goals": [')).toContain('line 1, column 12: the file ends where a value was expected');
  });

  it('accepts a UTF-8 byte order mark', () => {
    expect(parseAnswers('\uFEFF{"project":{"name":"bom"}}', 'a.json').project?.name).toBe('bom');
  });

  it('refuses control characters (ESC, BEL) in names and text, naming the field', () => {
    const msg = problem(
      JSON.stringify({ project: { name: 'shop\x1b[2J', description: 'ring\x07' }, endpoints: [{ name: 'a\nb', route: '/a' }] }),
    );
    expect(msg).toContain('$.project.name: must not contain control characters (found U+001B, ESC)');
    expect(msg).toContain('$.project.description: must not contain control characters (found U+0007, BEL)');
    expect(msg).toContain('$.endpoints[0].name: must not contain control characters (found U+000A)');
    // a newline in free text is fine
    expect(parseAnswers(JSON.stringify({ project: { name: 'x', description: 'two\nlines' } }), 'a.json').project?.description).toBe(
      'two\nlines',
    );
  });

  it('caps the lists, naming the bound, before validating the items', () => {
    const rules = Array.from({ length: 20_000 }, (_, i) => ({ id: `r${i}` }));
    const t0 = Date.now();
    expect(problem(JSON.stringify({ rules }))).toContain(`$.rules: has 20000 items; at most ${LIST_CAPS.rules} are allowed`);
    expect(Date.now() - t0).toBeLessThan(2000);
    const endpoints = Array.from({ length: LIST_CAPS.endpoints + 1 }, (_, i) => ({ name: `e${i}`, route: `/e${i}` }));
    expect(problem(JSON.stringify({ endpoints }))).toContain(
      `$.endpoints: has ${LIST_CAPS.endpoints + 1} items; at most ${LIST_CAPS.endpoints}`,
    );
  });

  it('number messages name the bound, and the grammar is right', () => {
    expect(problem('{"traffic":{"peakRps":1e309}}')).toContain('$.traffic.peakRps: must be a finite number');
    expect(problem('{"traffic":{"peakRps":1e309}}')).toContain('1.8e308');
    expect(problem('{"rollout":{"shadowDays":1000}}')).toContain('$.rollout.shadowDays: must be at most 90');
    expect(problem('{"project":"x"}')).toContain('$.project: must be an object');
    expect(problem('{"project":"x"}')).not.toMatch(/\ba (int|object|array)\b/);
    expect(problem('{"rollout":{"shadowDays":"x"}}')).toMatch(/shadowDays: must be (a number|an integer)/);
  });
});

describe('answers file input (built binary)', () => {
  it('/dev/urandom as the answers file: exit 2 at the size cap, quickly, with bounded memory', () => {
    const t0 = Date.now();
    const r = runCli(['validate', '-a', '/dev/urandom']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('Answers file /dev/urandom is larger than 1 MB');
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  it('a 20,000-rule answers file is refused with one line; generate writes nothing', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'repo'));
    const file = path.join(dir, 'repo', 'rate-limit.answers.json');
    writeFileSync(file, JSON.stringify({ rules: Array.from({ length: 20_000 }, (_, i) => ({ id: `r${i}` })) }));
    const before = snapshot(dir);
    const r = runCli(['generate'], { cwd: path.join(dir, 'repo') });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('$.rules: has 20000 items; at most 200 are allowed');
    expect(snapshot(dir)).toEqual(before);
  });
});

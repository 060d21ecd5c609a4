/**
 * The design layer holds no dead figures: every top-level function and constant of src/design is
 * used somewhere in src (an export nothing reads is a second, unchecked copy of a decision the
 * document may state differently).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? tsFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

describe('src/design', () => {
  it('every top-level function and constant is used in src', () => {
    // how often each word occurs in src
    const words = new Map<string, number>();
    for (const f of tsFiles(SRC))
      for (const [w] of readFileSync(f, 'utf8').matchAll(/[A-Za-z_$][\w$]*/g)) words.set(w, (words.get(w) ?? 0) + 1);
    const design = tsFiles(join(SRC, 'design'));
    const unused: string[] = [];
    for (const file of design) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^(?:export )?(?:function|const) ([A-Za-z_$][\w$]*)/gm)) {
        const name = m[1] as string;
        if ((words.get(name) ?? 0) <= 1) unused.push(`${file.slice(SRC.length + 1)}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });
});

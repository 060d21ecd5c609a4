/**
 * The import rules of docs/architecture.md, checked on every module of src/:
 * - a module imports only its own layer and the layers below it (LAYERS, lowest first), and
 *   two folders of one layer do not import each other;
 * - there is no import cycle between modules.
 * Type-only and dynamic imports count like the others: they tie the code together just the same.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/examples.js';

const SRC = path.join(ROOT, 'src');

/**
 * Lowest first. An entry is a folder of src/ or a single file. The base layer is shared
 * plumbing that knows nothing of the pipeline (its modules may import each other); io/ is
 * where the pipeline's output ends up, and any stage may use it.
 */
const LAYERS: readonly (readonly string[])[] = [
  // the code users run, copied verbatim into their projects: it imports nothing of rl-design
  ['runtime'],
  ['messages.ts', 'format.ts', 'version.ts', 'paths.ts', 'lua.ts', 'escape', 'io'],
  ['answers'],
  ['design'],
  ['codegen'],
  // the checks read the design and the files generated from it
  ['constraints'],
  ['verify'],
  ['render'],
  ['questionnaire'],
  ['commands'],
  ['cli.ts'],
  ['bin.ts'],
];

/** The shared plumbing: its modules may import each other. */
const SHARED_LAYER = LAYERS.findIndex((l) => l.includes('io'));

/**
 * Imports that run against the rules today, each to be removed by moving code to its one home.
 * An entry that no longer occurs fails the test: take it off the list.
 */
const ALLOWED: readonly string[] = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.test.ts'))
    .map((d) => path.relative(SRC, path.join(d.parentPath, d.name)).split(path.sep).join('/'))
    .sort();
}

/**
 * The source with comments, template literals and the insides of strings blanked out, except
 * the strings that name a module (after `from`, `import` or `import(`): so that code shown in
 * a string or a comment (generated code, examples) is not taken for an import.
 */
function codeOnly(source: string): string {
  let out = '';
  let i = 0;
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end === -1 ? source.length : end;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const stop = source.indexOf('*/', i + 2) + 2;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      const literal = source.slice(i, j + 1);
      out += /(?:\bfrom|\bimport\s*\(?)\s*$/.test(out) ? literal : c + blank(literal.slice(1, -1)) + c;
      i = j + 1;
    } else if (c === '`') {
      // a template literal, ${...} included (no module is named in one)
      let j = i + 1;
      let depth = 0;
      while (j < source.length && !(source[j] === '`' && depth === 0)) {
        if (source[j] === '\\') j += 1;
        else if (source[j] === '$' && source[j + 1] === '{') depth += 1;
        else if (source[j] === '}' && depth > 0) depth -= 1;
        j += 1;
      }
      out += blank(source.slice(i, j + 1));
      i = j + 1;
    } else if (c === '/' && /(?:^|[(,=:[!&|?{};]|\breturn)\s*$/.test(out)) {
      // a regular expression literal: skip to its closing slash (outside a character class)
      let j = i + 1;
      let inClass = false;
      while (j < source.length && !(source[j] === '/' && !inClass) && source[j] !== '\n') {
        if (source[j] === '\\') j += 1;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j += 1;
      }
      out += blank(source.slice(i, j + 1));
      i = j + 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

const IMPORT = /\b(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]*?\bfrom\s*)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The modules of src/ that `file` imports (relative specifiers resolved; packages left out). */
function importsOf(file: string, files: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  for (const m of codeOnly(readFileSync(path.join(SRC, file), 'utf8')).matchAll(IMPORT)) {
    const specifier = (m[1] ?? m[2]) as string;
    if (!specifier.startsWith('.')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
    if (!files.has(target)) throw new Error(`${file}: cannot resolve ${specifier}`);
    found.add(target);
  }
  return [...found].sort();
}

const FILES = sourceFiles(SRC);
const GRAPH = new Map(FILES.map((f) => [f, importsOf(f, new Set(FILES))]));

/** [layer index, entry] of a module. */
function placeOf(file: string): [number, string] {
  const entry = file.includes('/') ? file.slice(0, file.indexOf('/')) : file;
  const layer = LAYERS.findIndex((l) => l.includes(entry));
  if (layer === -1) throw new Error(`src/${file} is in no layer: add "${entry}" to LAYERS (and to docs/architecture.md)`);
  return [layer, entry];
}

/** The imports that break the layer rule, as "from -> to". */
function againstTheLayers(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const [fromLayer, fromEntry] = placeOf(from);
    for (const to of targets) {
      const [toLayer, toEntry] = placeOf(to);
      const peers = toLayer === fromLayer && toEntry !== fromEntry && fromLayer !== SHARED_LAYER;
      if (toLayer > fromLayer || peers) wrong.push(`${from} -> ${to}`);
    }
  }
  return wrong.sort();
}

/** Every import cycle, as its modules (Tarjan's strongly connected components, plus self-imports). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import rules of docs/architecture.md', () => {
  it('reads every kind of import, and nothing written in a string or a comment', () => {
    const probe = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "import * as d from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "type G = typeof import('./g.js');",
      'import {\n  h,\n  type H,\n} from "./h.js";',
      'const text = "import { x } from \'./not-1.js\';";',
      "const code = `import { y } from './not-2.js';\\n${\"import('./not-3.js')\"}`;",
      "// import { z } from './not-4.js';",
      "/* export * from './not-5.js' */",
      "const re = /['\"]/; const s = 'from';",
    ].join('\n');
    const found = [...codeOnly(probe).matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
    expect(found).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', './g.js', './h.js']);
  });

  it('every module is in a layer, and the layers are the ones the document lists', () => {
    for (const f of FILES) expect(() => placeOf(f)).not.toThrow();
    const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
    for (const entry of LAYERS.flat()) expect(doc, entry).toContain(entry.endsWith('.ts') ? `\`${entry}\`` : `\`${entry}/\``);
  });

  it('no import runs against the pipeline: each goes to its own layer or one below, never to a peer folder', () => {
    const wrong = againstTheLayers(GRAPH);
    expect(wrong.filter((w) => !ALLOWED.includes(w))).toEqual([]);
    // the list of exceptions only shrinks
    expect(ALLOWED.filter((a) => !wrong.includes(a))).toEqual([]);
  });

  it('no import cycle in src/', () => {
    expect(cycles(GRAPH)).toEqual([]);
  });

  it('the checks catch what they are meant to catch', () => {
    const graph = new Map<string, string[]>([
      ['design/build.ts', ['render/index.ts', 'answers/schema.ts']],
      ['render/index.ts', ['design/build.ts']],
      ['codegen/index.ts', ['constraints/index.ts']],
      ['constraints/index.ts', []],
      ['answers/schema.ts', ['messages.ts']],
      ['messages.ts', []],
      ['io/write.ts', ['format.ts']],
      ['format.ts', []],
    ]);
    expect(againstTheLayers(graph)).toEqual(['codegen/index.ts -> constraints/index.ts', 'design/build.ts -> render/index.ts']);
    expect(cycles(graph)).toEqual([['design/build.ts', 'render/index.ts']]);
    expect(cycles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
  });
});

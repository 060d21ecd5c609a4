/**
 * rl-design's caches, through the published CLI: Node's compile cache for the CLI and the
 * diagram engine (src/io/compile-cache.ts, Node 22.1+) and the drawn diagrams
 * (src/render/diagrams/svg-cache.ts). Each is only a speed-up: the output never depends on them.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { diagramSources } from '../../src/render/diagrams/index.js';
import { DATE, ROOT, exampleDesign } from '../helpers/examples.js';
import { CLI, runCli, tempDir } from '../helpers/cli.js';

/** The largest example as one HTML file, by the CLI at `cli` (the built one by default). */
function html(env: Record<string, string>, cli = CLI): string {
  const out = path.join(tempDir(), 'doc');
  const args = ['generate', '--example', 'saas-platform', '--format', 'html', '--layout', 'single', '--out', out, '--date', DATE];
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(`${out}.html`, 'utf8');
}

const identity = (file: string) => {
  const s = statSync(file);
  return [s.ino, s.mtimeMs];
};

/** Every file under `dir`, recursively, relative to it. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
        .sort()
    : [];

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

describe.skipIf(!hasCompileCache)("Node's compile cache", () => {
  it('the first run writes entries for the CLI and the diagram engine under compile/; the next uses them as they are; both give the same bytes', () => {
    const dir = path.join(tempDir(), 'cache');
    const first = html({ RL_DESIGN_CACHE_DIR: dir });
    const compiled = filesUnder(path.join(dir, 'compile'));
    // cli.cjs and diagram-engine.cjs, each large enough to hold compiled code
    expect(compiled.length).toBeGreaterThanOrEqual(2);
    const big = compiled.filter((f) => statSync(path.join(dir, 'compile', f)).size > 50_000);
    expect(big.length).toBeGreaterThanOrEqual(2);
    const before = compiled.map((f) => identity(path.join(dir, 'compile', f)));

    // the drawn diagrams removed, so that the engine runs again, from the compile cache
    for (const f of filesUnder(path.join(dir, 'svg'))) writeFileSync(path.join(dir, 'svg', f), '{}');
    const second = html({ RL_DESIGN_CACHE_DIR: dir });
    expect(second).toBe(first);
    expect(first.match(/<svg\b/g)?.length).toBe(diagramSources(exampleDesign('saas-platform')).length);
    expect(filesUnder(path.join(dir, 'compile'))).toEqual(compiled);
    expect(compiled.map((f) => identity(path.join(dir, 'compile', f)))).toEqual(before);
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 writes no compiled code and gives the same document; RL_DESIGN_CACHE=off writes no cache at all', () => {
    const dir = path.join(tempDir(), 'cache');
    const off = html({ RL_DESIGN_CACHE_DIR: dir, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(readdirSync(dir)).toEqual(['svg']);
    const none = path.join(tempDir(), 'cache');
    expect(html({ RL_DESIGN_CACHE_DIR: none, RL_DESIGN_CACHE: 'off' })).toBe(off);
    expect(existsSync(none)).toBe(false);
    expect(off).toBe(html({ RL_DESIGN_CACHE_DIR: path.join(tempDir(), 'cache') }));
  });
});

describe('the cache folder', () => {
  it('an unwritable cache folder changes nothing the user sees', () => {
    const work = tempDir();
    // a file where the folder should be
    const file = path.join(work, 'file');
    writeFileSync(file, 'x');
    const r = runCli(['validate', '--example', 'saas-platform'], { env: { RL_DESIGN_CACHE_DIR: file } });
    expect([r.code, r.stderr]).toEqual([0, '']);
    const out = path.join(work, 'doc');
    const g = runCli(['generate', '--example', 'saas-platform', '--format', 'html', '--layout', 'single', '--out', out, '--date', DATE], {
      env: { RL_DESIGN_CACHE_DIR: file },
    });
    expect([g.code, g.stderr]).toEqual([0, '']);
    expect(readFileSync(file, 'utf8')).toBe('x');
    expect(readFileSync(`${out}.html`, 'utf8')).toBe(html({ RL_DESIGN_CACHE: 'off' }));
  });
});

describe('the drawn-diagram cache', () => {
  const svgFiles = (dir: string): string[] => {
    const [engine, ...others] = readdirSync(path.join(dir, 'svg'));
    expect(others).toEqual([]);
    return readdirSync(path.join(dir, 'svg', engine!)).map((f) => path.join(dir, 'svg', engine!, f));
  };

  /** A copy of the installed CLI without the diagram engine and its worker: it cannot draw. */
  function cliWithoutEngine(): string {
    const pkg = tempDir('rl-design-no-engine-');
    for (const f of ['package.json', 'lua', 'templates', 'examples', 'schemas']) symlinkSync(path.join(ROOT, f), path.join(pkg, f));
    // the shipped runtime, which generation copies (the package's files list has it)
    mkdirSync(path.join(pkg, 'src'));
    symlinkSync(path.join(ROOT, 'src', 'runtime'), path.join(pkg, 'src', 'runtime'));
    const bin = path.join(pkg, 'dist', 'bin');
    mkdirSync(bin, { recursive: true });
    for (const f of ['rl-design.js', 'cli.cjs']) copyFileSync(path.join(ROOT, 'dist', 'bin', f), path.join(bin, f));
    return path.join(bin, 'rl-design.js');
  }

  it('a repeat run takes every diagram from it and starts no diagram engine: the same bytes', () => {
    const dir = path.join(tempDir(), 'cache');
    const first = html({ RL_DESIGN_CACHE_DIR: dir });
    const files = svgFiles(dir);
    expect(files).toHaveLength(diagramSources(exampleDesign('saas-platform')).length);
    const before = files.map(identity);
    // a CLI with no engine at all gives the same document from the cache
    const noEngine = cliWithoutEngine();
    expect(html({ RL_DESIGN_CACHE_DIR: dir }, noEngine)).toBe(first);
    expect(files.map(identity)).toEqual(before);
    // ... and fails only when a diagram is missing from it, which proves it drew nothing above
    writeFileSync(files[0]!, '{}');
    const out = path.join(tempDir(), 'doc');
    const r = spawnSync(
      process.execPath,
      [noEngine, 'generate', '--example', 'saas-platform', '--format', 'html', '--layout', 'single', '--out', out, '--date', DATE],
      {
        env: { ...process.env, RL_DESIGN_CACHE_DIR: dir },
        encoding: 'utf8',
      },
    );
    expect(r.status).not.toBe(0);
    expect(existsSync(`${out}.html`)).toBe(false);
  });

  it('a damaged or foreign entry is drawn again and replaced: the same bytes', () => {
    const dir = path.join(tempDir(), 'cache');
    const first = html({ RL_DESIGN_CACHE_DIR: dir });
    const [a, b, c] = svgFiles(dir).sort();
    const entry = JSON.parse(readFileSync(a!, 'utf8')) as { source: string; svg: string; sha256: string };
    writeFileSync(a!, JSON.stringify({ ...entry, svg: entry.svg.replace('<svg', '<svg data-x="1"') })); // digest no longer fits
    writeFileSync(b!, '{"source": "flowchart TB');
    writeFileSync(c!, JSON.stringify(entry)); // another source's entry under this name
    expect(html({ RL_DESIGN_CACHE_DIR: dir })).toBe(first);
    // each replaced: its own source (named by its hash), and an SVG that fits its digest
    const hash = (t: string) => createHash('sha256').update(t).digest('hex');
    for (const f of [a!, b!, c!]) {
      const fixed = JSON.parse(readFileSync(f, 'utf8')) as { source: string; svg: string; sha256: string };
      expect(`${hash(fixed.source)}.json`).toBe(path.basename(f));
      expect(fixed.sha256).toBe(hash(fixed.svg));
    }
  });
});

describe('packages loaded at run time by the bundled CLI', () => {
  it('--diagrams mermaid-cli imports the package installed in the project, with and without the compile cache', () => {
    // A stand-in for @mermaid-js/mermaid-cli and puppeteer (ES modules, as the real ones are):
    // the real ones need a browser; this proves the CLI can import them at all.
    const project = tempDir();
    const pkg = (name: string, body: string) => {
      const dir = path.join(project, 'node_modules', ...name.split('/'));
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '0.0.0', type: 'module', exports: './index.js' }));
      writeFileSync(path.join(dir, 'index.js'), body);
    };
    pkg(
      '@mermaid-js/mermaid-cli',
      'let n = 0;\nexport async function renderMermaid(browser, source, format, options) {\n' +
        '  n += 1;\n' +
        '  return { data: new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg" id="${options.svgId}" viewBox="0 0 200 40" width="200" height="40"><g><rect x="0" y="0" width="200" height="40"/><text x="8" y="24" font-size="12">stand-in ${n}</text></g></svg>`) };\n' +
        '}\n',
    );
    pkg('puppeteer', 'export default { launch: async () => ({ close: async () => {} }) };\n');
    const cache = path.join(tempDir(), 'cache');
    for (const run of ['no cache yet', 'cache']) {
      const out = path.join(project, `doc-${run.replace(/ /g, '-')}.html`);
      const r = runCli(
        [
          'generate',
          '--example',
          'saas-platform',
          '--format',
          'html',
          '--layout',
          'single',
          '--diagrams',
          'mermaid-cli',
          '--out',
          out,
          '--date',
          DATE,
        ],
        {
          cwd: project,
          env: { RL_DESIGN_CACHE_DIR: cache },
        },
      );
      expect(r.code, `${run}: ${r.stderr}`).toBe(0);
      const page = readFileSync(out, 'utf8');
      expect(page).toContain('stand-in 1');
      expect(page.match(/<svg\b/g)?.length).toBe(diagramSources(exampleDesign('saas-platform')).length);
    }
    if (hasCompileCache) expect(filesUnder(path.join(cache, 'compile')).length).toBeGreaterThan(0);
  });
});

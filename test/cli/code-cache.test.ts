/**
 * The published CLI compiles its two large files (cli.cjs and the diagram engine) through the
 * V8 code cache (src/io/code-cache.ts, src/bin.ts): the first run of a command writes the
 * caches, later runs use them as they are, and the output never depends on them.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagramSources } from '../../src/render/diagrams/index.js';
import { DATE, exampleDesign } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

function html(env: Record<string, string>): string {
  const out = path.join(tempDir(), 'doc');
  const r = runCli(['generate', '--example', 'saas-platform', '--format', 'html', '--layout', 'single', '--out', out, '--date', DATE], { env });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(`${out}.html`, 'utf8');
}

const identity = (file: string) => {
  const s = statSync(file);
  return [s.ino, s.mtimeMs];
};

describe('the V8 code cache of the published CLI', () => {
  it('the first run writes a cache for the CLI (per command) and the diagram engine; the next uses them as they are; both draw the same bytes', () => {
    const dir = path.join(tempDir(), 'cache');
    const first = html({ RL_DESIGN_CACHE_DIR: dir });
    const written = readdirSync(dir).sort();
    expect(written).toHaveLength(3);
    expect(written[0]).toMatch(/^cli\.cjs-[0-9a-f]{16}-generate-v8-.*\.cache$/);
    expect(written[1]).toMatch(/^diagram-engine\.cjs-[0-9a-f]{16}-v8-.*\.cache$/);
    expect(written[2]).toBe('svg');
    const caches = written.slice(0, 2);
    const before = caches.map((f) => identity(path.join(dir, f)));
    for (const f of caches) expect(statSync(path.join(dir, f)).size).toBeGreaterThan(100_000);

    // without the drawn diagrams, so that the engine runs again, from its code cache
    rmSync(path.join(dir, 'svg'), { recursive: true });
    const second = html({ RL_DESIGN_CACHE_DIR: dir });
    expect(second).toBe(first);
    expect(first.match(/<svg\b/g)?.length).toBe(diagramSources(exampleDesign('saas-platform')).length);
    // accepted, so not written again (an atomic rewrite would be a new file)
    expect(caches.map((f) => identity(path.join(dir, f)))).toEqual(before);

    // another command gets a cache of its own
    expect(runCli(['validate', '--example', 'saas-platform'], { env: { RL_DESIGN_CACHE_DIR: dir } }).code).toBe(0);
    expect(readdirSync(dir).filter((f) => f.includes('-validate-v8-'))).toHaveLength(1);
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 writes no code cache and gives the same document; RL_DESIGN_CACHE=off writes no cache at all', () => {
    const dir = path.join(tempDir(), 'cache');
    const off = html({ RL_DESIGN_CACHE_DIR: dir, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(readdirSync(dir)).toEqual(['svg']);
    const none = path.join(tempDir(), 'cache');
    expect(html({ RL_DESIGN_CACHE_DIR: none, RL_DESIGN_CACHE: 'off' })).toBe(off);
    expect(existsSync(none)).toBe(false);
    expect(off).toBe(html({ RL_DESIGN_CACHE_DIR: path.join(tempDir(), 'cache') }));
  });

  it('an unwritable cache folder changes nothing the user sees', () => {
    const work = tempDir();
    // a file where the folder should be
    const file = path.join(work, 'file');
    writeFileSync(file, 'x');
    const r2 = runCli(['validate', '--example', 'saas-platform'], { env: { RL_DESIGN_CACHE_DIR: file } });
    expect([r2.code, r2.stderr]).toEqual([0, '']);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('the drawn-diagram cache', () => {
  const svgFiles = (dir: string): string[] => {
    const [engine, ...others] = readdirSync(path.join(dir, 'svg'));
    expect(others).toEqual([]);
    return readdirSync(path.join(dir, 'svg', engine!)).map((f) => path.join(dir, 'svg', engine!, f));
  };

  it('a repeat run takes every diagram from it and never draws: the same bytes', () => {
    const dir = path.join(tempDir(), 'cache');
    const first = html({ RL_DESIGN_CACHE_DIR: dir });
    const files = svgFiles(dir);
    expect(files).toHaveLength(diagramSources(exampleDesign('saas-platform')).length);
    const before = files.map(identity);
    // no engine code cache: a run that drew anything would write one again
    for (const f of readdirSync(dir).filter((f) => f.startsWith('diagram-engine.cjs-'))) rmSync(path.join(dir, f));
    expect(html({ RL_DESIGN_CACHE_DIR: dir })).toBe(first);
    expect(readdirSync(dir).filter((f) => f.startsWith('diagram-engine.cjs-'))).toEqual([]);
    expect(files.map(identity)).toEqual(before);
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

describe('packages loaded at run time from the code-cached CLI', () => {
  it('--diagrams mermaid-cli imports the package installed in the project, with and without the cache', () => {
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
      const r = runCli(['generate', '--example', 'saas-platform', '--format', 'html', '--layout', 'single', '--diagrams', 'mermaid-cli', '--out', out, '--date', DATE], {
        cwd: project,
        env: { RL_DESIGN_CACHE_DIR: cache },
      });
      expect(r.code, `${run}: ${r.stderr}`).toBe(0);
      const page = readFileSync(out, 'utf8');
      expect(page).toContain('stand-in 1');
      expect(page.match(/<svg\b/g)?.length).toBe(diagramSources(exampleDesign('saas-platform')).length);
    }
    expect(readdirSync(cache).some((f) => f.startsWith('cli.cjs-'))).toBe(true);
  });
});

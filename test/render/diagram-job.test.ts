/**
 * The two ways an HTML document is drawn give the same bytes: the published bundle
 * (templates precompiled, diagrams drawn in a worker thread while the pages are converted)
 * and the TypeScript sources in-process (templates compiled at run time, diagrams drawn on
 * the main thread). Also the worker job itself, from tsc's dist/ (a real worker thread),
 * and the slots the pages keep for the SVGs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateFiles } from '../../src/commands/generate.js';
import { loadBeautifulMermaid } from '../../src/render/diagrams/beautiful.js';
import { diagramSources } from '../../src/render/diagrams/index.js';
import { draftHtml, finishHtml } from '../../src/render/html/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { DATE, ROOT, exampleDesign, exampleNames } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const ctx = (cwd: string) => ({ cwd, stdout: () => undefined, stderr: () => undefined, today: () => DATE });

function files(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (d.isFile() && !d.name.startsWith('.'))
      found.set(path.relative(dir, path.join(d.parentPath, d.name)), readFileSync(path.join(d.parentPath, d.name), 'utf8'));
  }
  return found;
}

describe('bundle with a diagram worker = sources in-process', () => {
  for (const name of exampleNames()) {
    for (const layout of ['single', 'folder'] as const) {
      it(`${name}, ${layout}: the CLI's HTML is byte for byte the in-process rendering`, async () => {
        const dir = tempDir();
        const out = path.join(dir, 'cli');
        const r = runCli(['generate', '--example', name, '--format', 'html', '--layout', layout, '--out', out, '--date', DATE]);
        expect(r.code, r.stderr).toBe(0);
        const fromCli = layout === 'single' ? new Map([['cli.html', readFileSync(`${out}.html`, 'utf8')]]) : files(out);

        const run = await generateFiles(ctx(dir), { example: name, format: 'html', layout, out, date: DATE, dryRun: true });
        const inProcess = new Map(run.plan.planned.map((p) => [layout === 'single' ? 'cli.html' : path.relative(out, p.path), p.content]));
        expect([...fromCli.keys()].sort()).toEqual([...inProcess.keys()].sort());
        for (const [file, content] of inProcess) expect(fromCli.get(file), file).toBe(content);
        // the drawings are really there: one inline SVG per diagram of the design
        const svgs = [...fromCli.values()].join('\n').match(/<svg\b/g) ?? [];
        expect(svgs.length).toBe(diagramSources(exampleDesign(name)).length);
      });
    }
  }
});

describe('the diagram worker (tsc dist/, a real worker thread)', () => {
  const jobModule = pathToFileURL(path.join(ROOT, 'dist', 'render', 'diagrams', 'beautiful-job.js')).href;

  it('draws exactly what the in-process renderer draws', async () => {
    const { drawBeautifulMermaid, WORKER_FILE } = (await import(jobModule)) as typeof import('../../src/render/diagrams/beautiful-job.js');
    expect(WORKER_FILE).toMatch(/beautiful-worker\.c?js$/);
    const sources = diagramSources(exampleDesign('saas-platform')).map((d) => d.source);
    expect(sources.length).toBeGreaterThan(1);
    const drawn = await drawBeautifulMermaid(sources, { cache: null });
    const direct = await loadBeautifulMermaid();
    for (const s of sources) expect(drawn(s)).toBe(direct(s));
    // it answers for the sources it was given, and only those
    expect(() => drawn('flowchart TB\n    a --> b')).toThrow(/not drawn ahead/);
  });

  it('draws only what the cache lacks, and caches what it drew; with every diagram cached it starts no worker', async () => {
    const { drawBeautifulMermaid } = (await import(jobModule)) as typeof import('../../src/render/diagrams/beautiful-job.js');
    const direct = await loadBeautifulMermaid();
    const [a, b] = diagramSources(exampleDesign('saas-platform')).map((d) => d.source);
    const held = new Map([[a!, direct(a!)]]);
    const asked: string[] = [];
    const cache = {
      get: (s: string) => (asked.push(s), held.get(s)),
      put: (s: string, svg: string) => void held.set(s, svg),
      isEmpty: () => held.size === 0,
    };
    const drawn = await drawBeautifulMermaid([a!, b!, a!], { cache });
    expect([drawn(a!), drawn(b!)]).toEqual([direct(a!), direct(b!)]);
    expect(asked).toEqual([a, b]);
    expect(held.get(b!)).toBe(direct(b!));
    // a worker file that does not exist would fail any drawing: none is started
    const again = await drawBeautifulMermaid([b!, a!], { cache, workerFile: path.join(ROOT, 'no-such-worker.js') });
    expect(again(b!)).toBe(direct(b!));
    await expect(
      drawBeautifulMermaid(['flowchart TB\n    x --> y'], { cache, workerFile: path.join(ROOT, 'no-such-worker.js') }),
    ).rejects.toThrow();
  });
});

describe('diagram slots', () => {
  it('the pages hold one slot per diagram until finishHtml puts the SVGs in', async () => {
    const design = exampleDesign('saas-platform');
    const draft = draftHtml({ design, checks: checkDesign(design) }, { layout: 'single' });
    const page = draft.files[0]?.content ?? '';
    expect(draft.slots.length).toBe(diagramSources(design).length);
    expect(page).not.toContain('<svg');
    for (const s of draft.slots) expect(page.split(s.slot).length).toBe(2);
    const done = finishHtml(draft, await loadBeautifulMermaid());
    expect(done[0]?.content).not.toMatch(/rl-diagram-slot/);
    expect(done[0]?.content.match(/<svg\b/g)?.length).toBe(draft.slots.length);
  });

  it('a name that spells a slot stays text: escaped, never replaced by a drawing', async () => {
    const design = exampleDesign('saas-platform');
    const hostile = '<rl-diagram-slot-1></rl-diagram-slot-1>';
    const named = { ...design, scope: { ...design.scope, projectName: hostile } };
    const done = finishHtml(draftHtml({ design: named, checks: checkDesign(named) }, { layout: 'single' }), await loadBeautifulMermaid());
    const page = done[0]?.content ?? '';
    expect(page).not.toContain(hostile);
    expect(page).toContain('&lt;rl-diagram-slot-1&gt;&lt;/rl-diagram-slot-1&gt;');
    expect(page.match(/<svg\b/g)?.length).toBe(diagramSources(design).length);
  });
});

#!/usr/bin/env node
/**
 * Cold-process cost of generating the largest example's HTML (saas-platform: three diagrams),
 * single file and folder. Each run is a fresh `node` process:
 * - "CLI": `rl-design generate --format html --layout <layout>` end to end (argument
 *   parsing, answers, design, constraint checks, rendering, diagrams, atomic writes), with the
 *   caches warm, with the drawn diagrams removed, empty (a first run) and off (see CACHE below);
 * - "unbundled render": the same document rendered in-process by bench/html/render-once.mjs
 *   from tsc's module tree in dist/ (no bundle, no worker thread, no compile cache: how the CLI
 *   ran before it was bundled; no CLI, no writes): what the renderer itself costs;
 * - the same document as Markdown through the CLI, for scale.
 * Wall time is measured around the child process; CPU time (user + system) and peak memory
 * (maxRSS) are the child's own (process.resourceUsage, reported at exit by report-usage.mjs).
 * CPU time is the steadier number on a busy machine, where wall time includes waiting for a
 * core. Prints a Markdown table of the median and the best of the runs, and the load average.
 *
 * --against DIR adds the CLI cases of another built checkout (e.g. a `git worktree` of the
 * previous commit, after `npm run build` there), interleaved with this one's, so that a change
 * is measured side by side under the same load.
 *
 * Usage: npm run build && node bench/html/run.mjs [--runs 7] [--example saas-platform] [--against DIR]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const runs = Number(option('runs', '7'));
const example = option('example', 'saas-platform');
const against = option('against', undefined);
const preload = pathToFileURL(path.join(here, 'report-usage.mjs')).href;

function measure(args, env = () => ({})) {
  const work = mkdtempSync(path.join(tmpdir(), 'rl-bench-html-'));
  const report = path.join(work, 'usage.json');
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', preload, ...args.map((a) => a.replace('{out}', path.join(work, 'out')))], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, RL_BENCH_REPORT: report, ...env(work) },
  });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const usage = JSON.parse(readFileSync(report, 'utf8'));
  rmSync(work, { recursive: true, force: true });
  return { wallMs, cpuMs: usage.cpuMs, maxRssMiB: usage.maxRssKiB / 1024 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// rl-design's caches (README, "Caches"): "cached" runs share one folder, written by the
// warm-up, so compiled code (Node's compile cache, Node 22.1+) and drawn diagrams are both
// there (a repeat run of an unchanged design); "compile cache only" has its drawn diagrams
// removed before each run (a design whose diagrams changed; "one diagram redrawn" removes only
// one of them); "first run" gets an empty folder
// each time (it compiles and draws everything and writes both caches, as a user's very first
// run does); "cache off" is RL_DESIGN_CACHE=off.
const CACHE = {
  cached: (_work, warm) => ({ RL_DESIGN_CACHE_DIR: warm }),
  'compile cache only': (_work, warm) => {
    rmSync(path.join(warm, 'svg'), { recursive: true, force: true });
    return { RL_DESIGN_CACHE_DIR: warm };
  },
  'one diagram redrawn': (_work, warm) => {
    // the others stay cached: the design changed in one diagram
    for (const engine of existsSync(path.join(warm, 'svg')) ? readdirSync(path.join(warm, 'svg')) : []) {
      const [first] = readdirSync(path.join(warm, 'svg', engine)).sort();
      if (first) rmSync(path.join(warm, 'svg', engine, first));
    }
    return { RL_DESIGN_CACHE_DIR: warm };
  },
  'first run': (work) => ({ RL_DESIGN_CACHE_DIR: path.join(work, 'cache') }),
  'cache off': () => ({ RL_DESIGN_CACHE: 'off' }),
};
const cases = [];
// [name suffix, checkout, its warm cache folder]
const checkouts = [['', root, mkdtempSync(path.join(tmpdir(), 'rl-bench-html-cache-'))]];
if (against)
  checkouts.push([
    ` (${path.basename(path.resolve(against))})`,
    path.resolve(against),
    mkdtempSync(path.join(tmpdir(), 'rl-bench-html-cache-')),
  ]);
for (const layout of ['single', 'folder']) {
  for (const [cache, env] of Object.entries(CACHE)) {
    if (layout === 'folder' && cache !== 'cached' && cache !== 'first run') continue;
    for (const [suffix, dir, warm] of checkouts) {
      cases.push({
        name: `CLI, ${layout}, ${cache}${suffix}`,
        env: (work) => env(work, warm),
        args: [
          path.join(dir, 'dist/bin/rl-design.js'),
          'generate',
          '--example',
          example,
          '--format',
          'html',
          '--layout',
          layout,
          '--out',
          '{out}',
          '--date',
          '2026-12-02',
          '--force',
        ],
      });
    }
  }
  cases.push({ name: `unbundled render, ${layout}`, args: [path.join(here, 'render-once.mjs'), example, layout] });
}
// For scale: the same document as Markdown, which loads no diagram renderer.
cases.push({
  name: 'CLI, Markdown single (baseline)',
  args: [
    path.join(root, 'dist/bin/rl-design.js'),
    'generate',
    '--example',
    example,
    '--format',
    'markdown',
    '--layout',
    'single',
    '--out',
    '{out}',
    '--date',
    '2026-12-02',
    '--force',
  ],
});
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
// One warm-up of each (file system cache), then the measured runs interleaved.
for (const c of cases) measure(c.args, c.env);
const results = new Map(cases.map((c) => [c.name, []]));
for (let i = 0; i < runs; i += 1) for (const c of cases) results.get(c.name).push(measure(c.args, c.env));
for (const [, , warm] of checkouts) rmSync(warm, { recursive: true, force: true });

console.log(`${example}, ${runs} cold runs each, node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}\n`);
console.log(
  `load average before: ${loadBefore}, after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
console.log('| case | wall time, median (best) | CPU time, median (best) | peak RSS, median (max) |');
console.log('| --- | ---: | ---: | ---: |');
for (const c of cases) {
  const rs = results.get(c.name);
  const wall = rs.map((r) => r.wallMs);
  const cpu = rs.map((r) => r.cpuMs);
  const rss = rs.map((r) => r.maxRssMiB);
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  console.log(
    `| ${c.name} | ${s(median(wall))} (${s(Math.min(...wall))}) | ${s(median(cpu))} (${s(Math.min(...cpu))}) | ${median(rss).toFixed(0)} MiB (${Math.max(...rss).toFixed(0)} MiB) |`,
  );
}

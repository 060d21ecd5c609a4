/**
 * Draws a document's diagrams with beautiful-mermaid. Diagrams an earlier run drew come from
 * the drawn-diagram cache (svg-cache.ts); only when some are missing is the engine loaded. Where
 * the compiled worker (beautiful-worker.cjs or .js) sits beside this module (the published
 * bundle, or tsc's dist/), the engine loads and draws in a worker thread, on the other core,
 * while the main thread converts the pages; from the TypeScript sources (the tests) it runs
 * in-process. Both draw with loadDiagramEngine() (engine.ts), so the SVG is the same bytes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DrawReply, DrawRequest } from './beautiful-worker.js';
import { loadDiagramEngine } from './engine.js';
import { openSvgCache, type SvgCache } from './svg-cache.js';
import type { RawDiagramRenderer } from './index.js';

/**
 * The compiled worker: CommonJS in the published bundle (a CommonJS worker starts about 30 ms
 * sooner than an ES module one), the ES module in tsc's dist/. Absent beside the sources.
 */
export const WORKER_FILE = ['./beautiful-worker.cjs', './beautiful-worker.js']
  .map((f) => fileURLToPath(new URL(f, import.meta.url)))
  .find((f) => existsSync(f));

function lookup(sources: readonly string[], svgs: readonly string[]): RawDiagramRenderer {
  const bySource = new Map(sources.map((s, i) => [s, svgs[i] as string]));
  return (source) => {
    const svg = bySource.get(source);
    if (svg === undefined) throw new Error('rl-design: a diagram that was not drawn ahead');
    return svg;
  };
}

/** A worker thread loading the engine; never keeps the process alive (an error elsewhere exits at once). */
function spawnWorker(file: string): { worker: Worker; exited: () => boolean } {
  const worker = new Worker(file);
  worker.unref();
  let exited = false;
  worker.once('exit', () => {
    exited = true;
  });
  // reported to the draw that uses it (or never, if none does)
  worker.on('error', () => undefined);
  return { worker, exited: () => exited };
}

/** The worker startDrawingEarly() started, until a drawing takes it. */
let early: ReturnType<typeof spawnWorker> | undefined;

/**
 * Starts the worker before the design is known, when the drawn-diagram cache is empty (a first
 * run, a new engine) or off: then every diagram will be drawn, and loading the engine can
 * overlap reading the answers and building the design. With drawings in the cache it does
 * nothing, and the worker starts only if the design has a diagram the cache lacks.
 */
export function startDrawingEarly(): void {
  if (early !== undefined || WORKER_FILE === undefined) return;
  const cache = openSvgCache();
  if (cache === undefined || cache.isEmpty()) early = spawnWorker(WORKER_FILE);
}

/** Draws the sources in a worker thread (the early one if it is still there), which exits once it has replied. */
function drawInWorker(file: string, sources: readonly string[]): Promise<string[]> {
  const taken = early !== undefined && !early.exited() && file === WORKER_FILE ? early.worker : undefined;
  if (taken) early = undefined;
  return new Promise<string[]>((resolve, reject) => {
    const worker = taken ?? spawnWorker(file).worker;
    let settled = false;
    const settle = (f: () => void): void => {
      if (!settled) f();
      settled = true;
    };
    worker.once('error', (e) => settle(() => reject(e)));
    worker.once('exit', (code) => settle(() => reject(new Error(`rl-design: the diagram worker stopped (exit code ${code})`))));
    worker.once('message', (reply: DrawReply) => {
      settle(() => ('error' in reply ? reject(new Error(`rl-design: drawing a diagram failed: ${reply.error}`)) : resolve(reply.svgs)));
      void worker.terminate();
    });
    worker.postMessage({ sources: [...sources] } satisfies DrawRequest);
  });
}

async function drawFresh(sources: readonly string[], workerFile: string | undefined): Promise<string[]> {
  if (workerFile) return drawInWorker(workerFile, sources);
  const draw = await loadDiagramEngine();
  return sources.map((s) => draw(s));
}

/**
 * Draws `sources` and returns a renderer that answers for them (and only them): each from the
 * cache when it holds it, the others drawn (and cached). The engine is loaded only when some
 * diagram is missing. By default the cache is the drawn-diagram cache and the drawing is done
 * by the compiled worker, when there are such; null means none.
 */
export async function drawBeautifulMermaid(
  sources: readonly string[],
  options: { cache?: SvgCache | null; workerFile?: string | null } = {},
): Promise<RawDiagramRenderer> {
  const cache = options.cache === undefined ? openSvgCache() : (options.cache ?? undefined);
  const workerFile = options.workerFile === undefined ? WORKER_FILE : (options.workerFile ?? undefined);
  const svgs = new Map<string, string>();
  const missing: string[] = [];
  for (const s of new Set(sources)) {
    const svg = cache?.get(s);
    if (svg === undefined) missing.push(s);
    else svgs.set(s, svg);
  }
  if (missing.length > 0) {
    const drawn = await drawFresh(missing, workerFile);
    missing.forEach((s, i) => {
      const svg = drawn[i] as string;
      cache?.put(s, svg);
      svgs.set(s, svg);
    });
  }
  return lookup(
    sources,
    sources.map((s) => svgs.get(s) as string),
  );
}

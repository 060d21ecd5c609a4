/**
 * beautiful-mermaid, started early. Loading its layout engine (ELK) and laying out the first
 * diagram cost more than the rest of an HTML run together, and none of it depends on the
 * design. So `generate` starts a job before it reads the answers: where the compiled worker
 * (beautiful-worker.cjs or .js) sits beside this module (the published bundle, or tsc's dist/), the
 * engine loads in a worker thread on the other core while the main thread builds the design
 * and renders the sections; from the TypeScript sources (the tests) it loads in-process
 * when asked. Both draw with loadDiagramEngine() (engine.ts), so the SVG is the same bytes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DrawReply, DrawRequest } from './beautiful-worker.js';
import { loadDiagramEngine } from './engine.js';
import { openSvgCache, type SvgCache } from './svg-cache.js';
import type { RawDiagramRenderer } from './index.js';

export interface DiagramJob {
  /** Draws these sources and returns a renderer that answers for them (and only them). */
  draw(sources: readonly string[]): Promise<RawDiagramRenderer>;
  /** Not needed after all (Markdown, no diagrams, another renderer): stop loading. */
  cancel(): void;
}

/**
 * The compiled worker: CommonJS in the published bundle (a CommonJS worker starts about 30 ms
 * sooner than an ES module one), the ES module in tsc's dist/. Absent beside the sources.
 */
const WORKER_FILE = ['./beautiful-worker.cjs', './beautiful-worker.js']
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

function inProcessJob(): DiagramJob {
  return { draw: () => loadDiagramEngine().then((e) => e.draw), cancel: () => undefined };
}

function workerJob(file: string): DiagramJob {
  const worker = new Worker(file);
  // Never keeps the process alive: an early error exits without waiting for the engine.
  worker.unref();
  let stopped: Error | undefined;
  let savingCache = false;
  const stop = (why: Error): void => {
    stopped ??= why;
    void worker.terminate();
  };
  worker.once('exit', (code) => {
    stopped ??= new Error(`rl-design: the diagram worker stopped (exit code ${code})`);
  });
  return {
    draw(sources) {
      if (stopped) return Promise.reject(stopped);
      return new Promise<RawDiagramRenderer>((resolve, reject) => {
        let settled = false;
        const settle = (f: () => void): void => {
          if (!settled) f();
          settled = true;
        };
        worker.once('error', (e) => settle(() => reject(e)));
        worker.once('exit', () => settle(() => reject(stopped)));
        worker.once('message', (reply: DrawReply) => {
          settle(() => ('error' in reply ? reject(new Error(`rl-design: drawing a diagram failed: ${reply.error}`)) : resolve(lookup(sources, reply.svgs))));
          const done = new Error('rl-design: the diagram worker has drawn its diagrams');
          if ('svgs' in reply && reply.savingCache) {
            // It writes the code cache, then exits by itself: the process waits for that, and
            // cancel() leaves it be. Only the first run (or the first after an upgrade) waits.
            stopped ??= done;
            savingCache = true;
            worker.ref();
          } else stop(done);
        });
        worker.postMessage({ sources: [...sources] } satisfies DrawRequest);
      });
    },
    cancel() {
      if (!savingCache) stop(new Error('rl-design: the diagram worker stopped (cancelled)'));
    },
  };
}

/**
 * Diagrams an earlier run drew are taken from the cache (svg-cache.ts); the job draws only
 * the others, and when there are none it is stopped without waiting for the engine.
 */
function cachedJob(job: DiagramJob, cache: SvgCache): DiagramJob {
  return {
    async draw(sources) {
      const svgs = new Map<string, string>();
      const missing: string[] = [];
      for (const s of new Set(sources)) {
        const svg = cache.get(s);
        if (svg === undefined) missing.push(s);
        else svgs.set(s, svg);
      }
      if (missing.length === 0) job.cancel();
      else {
        const drawn = await job.draw(missing);
        for (const s of missing) {
          const svg = drawn(s);
          cache.put(s, svg);
          svgs.set(s, svg);
        }
      }
      return lookup(sources, sources.map((s) => svgs.get(s) as string));
    },
    cancel: () => job.cancel(),
  };
}

/** Starts loading beautiful-mermaid: in a worker thread when the compiled worker exists. */
export function startBeautifulMermaid(): DiagramJob {
  const job = WORKER_FILE ? workerJob(WORKER_FILE) : inProcessJob();
  const cache = openSvgCache();
  return cache ? cachedJob(job, cache) : job;
}

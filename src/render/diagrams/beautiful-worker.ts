/**
 * A worker thread that draws diagrams with beautiful-mermaid (see beautiful-job.ts). It starts
 * loading the engine as soon as it is spawned, so loading the layout engine overlaps the main
 * thread's work; then it draws the sources it is sent, once, writes what it compiled to Node's
 * compile cache (the main thread stops it after the reply, before Node would write it at exit),
 * replies and exits.
 */
import { parentPort } from 'node:worker_threads';
import { enableCompileCache, flushCompileCache } from '../../io/compile-cache.js';
import { loadDiagramEngine } from './engine.js';

export interface DrawRequest {
  sources: string[];
}
export type DrawReply = { svgs: string[] } | { error: string };

const port = parentPort;
if (port) {
  enableCompileCache();
  const engine = loadDiagramEngine();
  // A failed load is reported with the request it fails, not as an unhandled rejection.
  engine.catch(() => undefined);
  port.once('message', (request: DrawRequest) => {
    engine
      .then((draw) => {
        const svgs = request.sources.map((s) => draw(s));
        flushCompileCache();
        port.postMessage({ svgs } satisfies DrawReply);
      })
      .catch((e: unknown) => port.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies DrawReply))
      .finally(() => port.close());
  });
}

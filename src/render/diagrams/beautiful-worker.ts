/**
 * A worker thread that draws diagrams with beautiful-mermaid (see beautiful-job.ts). It
 * starts loading the engine as soon as it is spawned, so loading the layout engine overlaps
 * the main thread's work; then it draws the sources it is sent, once, and replies. When the
 * run had no usable code cache it writes one after replying (`savingCache` tells the job to
 * let it finish), then exits.
 */
import { parentPort } from 'node:worker_threads';
import { loadDiagramEngine } from './engine.js';

export interface DrawRequest {
  sources: string[];
}
export type DrawReply = { svgs: string[]; savingCache: boolean } | { error: string };

const port = parentPort;
if (port) {
  const engine = loadDiagramEngine();
  // A failed load is reported with the request it fails, not as an unhandled rejection.
  engine.catch(() => undefined);
  port.once('message', (request: DrawRequest) => {
    engine
      .then((e) => {
        const svgs = request.sources.map((s) => e.draw(s));
        port.postMessage({ svgs, savingCache: e.cacheWanted } satisfies DrawReply);
        if (e.cacheWanted) e.saveCache();
      })
      .catch((e: unknown) => port.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies DrawReply))
      .finally(() => port.close());
  });
}

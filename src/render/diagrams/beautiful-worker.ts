/**
 * A worker thread that draws diagrams with beautiful-mermaid (see beautiful-job.ts). It
 * starts loading the renderer as soon as it is spawned, so loading the layout engine
 * overlaps the main thread's work; then it draws the sources it is sent, once, and replies.
 */
import { parentPort } from 'node:worker_threads';
import { loadBeautifulMermaid } from './beautiful.js';

export interface DrawRequest {
  sources: string[];
}
export type DrawReply = { svgs: string[] } | { error: string };

const port = parentPort;
if (port) {
  const renderer = loadBeautifulMermaid();
  // A failed load is reported with the request it fails, not as an unhandled rejection.
  renderer.catch(() => undefined);
  port.once('message', (request: DrawRequest) => {
    renderer
      .then((draw) => ({ svgs: request.sources.map((s) => draw(s)) }))
      .catch((e: unknown) => ({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) }))
      .then((reply: DrawReply) => port.postMessage(reply));
  });
}

/**
 * Node's own compile cache (module.enableCompileCache, Node 22.1+) for the published CLI's
 * large files: the CLI (dist/bin/cli.cjs) and the diagram engine (diagram-engine.cjs). From
 * the second run on, V8 takes their compiled code from disk instead of compiling them again.
 *
 * Kept in rl-design's cache folder (io/cache-dir.ts) under compile/, so RL_DESIGN_CACHE=off
 * and RL_DESIGN_CACHE_DIR apply to it as to the drawn diagrams; NODE_DISABLE_COMPILE_CACHE=1,
 * Node's own switch, turns this one off alone. Node names the entries by its version and checks
 * each one against its source and a checksum before using it. On Node 20 there is no such
 * cache and nothing happens.
 */
import { mkdirSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { cacheDir } from './cache-dir.js';

type CompileCacheApi = { enableCompileCache?: (dir?: string) => unknown; flushCompileCache?: () => void };

/** Turns the cache on for this thread (a worker thread calls it too); best effort. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const api = module as CompileCacheApi;
  const root = cacheDir(env);
  if (root === null || api.enableCompileCache === undefined) return;
  try {
    // the folder is the user's alone, as the rest of the cache folder
    mkdirSync(root, { recursive: true, mode: 0o700 });
    api.enableCompileCache(path.join(root, 'compile'));
  } catch {
    // an unwritable cache folder: run uncached
  }
}

/** Writes what this thread compiled so far (Node writes it at exit otherwise); best effort. */
export function flushCompileCache(): void {
  try {
    (module as CompileCacheApi).flushCompileCache?.();
  } catch {
    // best effort
  }
}

/**
 * Diagrams drawn on an earlier run, by Mermaid source. Drawing is the slowest part of an
 * HTML run (loading beautiful-mermaid and ELK, then a cold first layout), and the same
 * engine draws the same source to the same bytes, so a repeat run of a design whose diagrams
 * did not change takes them from here and never waits for the engine.
 *
 * Kept in rl-design's cache folder (io/cache-dir.ts) under svg/<engine>/, where <engine> is a
 * hash of the bundled engine (diagram-engine.cjs, set at build time by scripts/bundle.mjs): a
 * new engine, or a change to how its SVG is corrected, starts an empty folder and the old
 * ones are removed. Without a bundled engine (tsc's dist/, the sources) there is no cache. Each
 * file holds its source and a digest of its SVG, both checked on reading; anything that does
 * not match is drawn again. What comes from here still goes through the same checks
 * (svg.ts) as a fresh drawing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cacheDir, pruneCache, writeCacheFile } from '../../io/cache-dir.js';
import { sha256 } from '../../io/write.js';

/** The bundled engine's content hash; scripts/bundle.mjs defines it (undeclared elsewhere). */
declare const __RL_DIAGRAM_ENGINE_HASH__: string | undefined;

export interface SvgCache {
  get(source: string): string | undefined;
  put(source: string, svg: string): void;
  /** Whether it holds no drawing at all (a first run, or a new engine). */
  isEmpty(): boolean;
}

/** The engine the bundle was built with, or undefined when not bundled. */
function bundledEngineKey(): string | undefined {
  return typeof __RL_DIAGRAM_ENGINE_HASH__ === 'string' ? __RL_DIAGRAM_ENGINE_HASH__ : undefined;
}

/** The cache for one engine, or undefined when caching is off or there is no engine key. */
export function openSvgCache(engine: string | undefined = bundledEngineKey(), root: string | null = cacheDir()): SvgCache | undefined {
  if (engine === undefined || root === null || !/^[0-9a-f]{8,64}$/.test(engine)) return undefined;
  const base = path.join(root, 'svg');
  const dir = path.join(base, engine);
  const file = (source: string) => path.join(dir, `${sha256(source)}.json`);
  let pruned = false;
  return {
    get(source) {
      try {
        const entry = JSON.parse(readFileSync(file(source), 'utf8')) as { source?: unknown; svg?: unknown; sha256?: unknown };
        if (entry.source === source && typeof entry.svg === 'string' && entry.sha256 === sha256(entry.svg)) return entry.svg;
      } catch {
        // missing, unreadable or damaged: draw it again
      }
      return undefined;
    },
    isEmpty() {
      try {
        return !readdirSync(dir).some((f) => f.endsWith('.json'));
      } catch {
        return true;
      }
    },
    put(source, svg) {
      if (!writeCacheFile(file(source), JSON.stringify({ source, svg, sha256: sha256(svg) }))) return;
      // drawings of other engines are of no further use
      if (!pruned) pruneCache(base, (other) => other !== engine);
      pruned = true;
    },
  };
}

/**
 * Where the diagram engine (beautiful.ts: beautiful-mermaid and its ELK layout engine) comes
 * from. In the published bundle it is a CommonJS file of its own, diagram-engine.cjs beside
 * this module, loaded through the V8 code cache (io/code-cache.ts): compiling it is the
 * slowest step of an HTML run, and a cache saves most of it from the second run on. From
 * tsc's dist/ or the TypeScript sources it is the ES module, imported. Either way it is the
 * same code, so the same SVG.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireWithCodeCache } from '../../io/code-cache.js';
import type { RawDiagramRenderer } from './index.js';

export interface DiagramEngine {
  draw: RawDiagramRenderer;
  /** Writes the code cache when this run had none it could use (after drawing: see code-cache.ts). */
  saveCache(): void;
  /** Whether saveCache() would write anything. */
  readonly cacheWanted: boolean;
}

type EngineModule = typeof import('./beautiful.js');

/** The bundled engine, beside this module in dist/bin/ (scripts/bundle.mjs builds it). */
export const ENGINE_FILE = fileURLToPath(new URL('./diagram-engine.cjs', import.meta.url));

export async function loadDiagramEngine(): Promise<DiagramEngine> {
  if (existsSync(ENGINE_FILE)) {
    const loaded = requireWithCodeCache<EngineModule>(ENGINE_FILE);
    const draw = await loaded.exports.loadBeautifulMermaid();
    return { draw, cacheWanted: loaded.needsSave, saveCache: () => loaded.save() };
  }
  // Not bundled: scripts/bundle.mjs keeps this import out of the ES module bundle.
  const { loadBeautifulMermaid } = await import('./beautiful.js');
  return { draw: await loadBeautifulMermaid(), cacheWanted: false, saveCache: () => undefined };
}

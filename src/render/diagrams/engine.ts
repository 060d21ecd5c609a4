/**
 * Where the diagram engine (beautiful.ts: beautiful-mermaid and its ELK layout engine) comes
 * from. In the published bundle it is a CommonJS file of its own, diagram-engine.cjs beside
 * this module, required (and so compiled through Node's compile cache when that is on: see
 * io/compile-cache.ts). From tsc's dist/ or the TypeScript sources it is the ES module,
 * imported. Either way it is the same code, so the same SVG.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { RawDiagramRenderer } from './index.js';

type EngineModule = typeof import('./beautiful.js');

/** The bundled engine, beside this module in dist/bin/ (scripts/bundle.mjs builds it). */
const ENGINE_FILE = fileURLToPath(new URL('./diagram-engine.cjs', import.meta.url));

export async function loadDiagramEngine(): Promise<RawDiagramRenderer> {
  if (existsSync(ENGINE_FILE)) return (createRequire(import.meta.url)(ENGINE_FILE) as EngineModule).loadBeautifulMermaid();
  // Not bundled: scripts/bundle.mjs keeps this import out of the bundles.
  const { loadBeautifulMermaid } = await import('./beautiful.js');
  return loadBeautifulMermaid();
}

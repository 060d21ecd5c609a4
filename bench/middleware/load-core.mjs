/**
 * The compiled middleware's limiter factory, from either layout: the runtime as copied modules
 * (limiter.js + design.js, today) or the single generated ratelimit-core.js of earlier versions
 * (for a before/after with --middleware-dir).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function loadCore(out) {
  const load = (file) => import(pathToFileURL(join(out, file)).href);
  if (existsSync(join(out, 'ratelimit-core.js'))) return load('ratelimit-core.js');
  const [{ createLimiter }, { DESIGN }] = await Promise.all([load('limiter.js'), load('design.js')]);
  return { createLimiter: (options) => createLimiter(DESIGN, options) };
}

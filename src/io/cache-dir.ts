/**
 * rl-design's cache folder: compiled code (io/code-cache.ts) and drawn diagrams
 * (render/diagrams/svg-cache.ts), each only ever a speed-up.
 *
 * $RL_DESIGN_CACHE_DIR, else $XDG_CACHE_HOME/rl-design, else ~/.cache/rl-design: a folder of
 * the user's own, never a shared temporary one (V8 runs what the code cache holds).
 * RL_DESIGN_CACHE=off turns every cache off.
 */
import { homedir } from 'node:os';
import path from 'node:path';

/** The cache folder, or null when caching is off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.RL_DESIGN_CACHE === 'off') return null;
  if (env.RL_DESIGN_CACHE_DIR) return path.resolve(env.RL_DESIGN_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : path.join(homedir(), '.cache');
  return path.join(base, 'rl-design');
}

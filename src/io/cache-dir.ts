/**
 * rl-design's cache folder: compiled code (Node's compile cache, io/compile-cache.ts) and drawn
 * diagrams (render/diagrams/svg-cache.ts), each only ever a speed-up.
 *
 * $RL_DESIGN_CACHE_DIR, else $XDG_CACHE_HOME/rl-design, else ~/.cache/rl-design: a folder of
 * the user's own, never a shared temporary one (V8 runs the compiled code it holds).
 * RL_DESIGN_CACHE=off turns every cache off.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** The cache folder, or null when caching is off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.RL_DESIGN_CACHE === 'off') return null;
  if (env.RL_DESIGN_CACHE_DIR) return path.resolve(env.RL_DESIGN_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : path.join(homedir(), '.cache');
  return path.join(base, 'rl-design');
}

/**
 * Writes one cache entry, best effort: its folder made private (0700), the file written
 * atomically (temporary file + rename, so a reader never sees half of it) and readable by the
 * user alone (0600), without fsync (losing it to a crash costs one slower run). Returns false
 * when it could not be written (read-only home, full disk): the caller carries on uncached.
 */
export function writeCacheFile(file: string, data: string | Buffer): boolean {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    return true;
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // nothing was written
    }
    return false;
  }
}

/** Removes, best effort, the entries of `dir` (files or folders) that `isStale` picks by name. */
export function pruneCache(dir: string, isStale: (name: string) => boolean): void {
  try {
    for (const name of readdirSync(dir)) if (isStale(name)) rmSync(path.join(dir, name), { recursive: true, force: true });
  } catch {
    // nothing to prune, or not ours to prune: the stale entries only take space
  }
}

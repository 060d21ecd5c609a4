/**
 * V8 code cache for the large CommonJS files of the published CLI: the CLI itself
 * (dist/bin/cli.cjs, loaded by bin.ts) and the diagram engine (diagram-engine.cjs, 1.9 MB, most
 * of it the ELK layout engine, loaded by render/diagrams/engine.ts).
 *
 * Compiling them, and compiling the engine's functions while the first diagram is laid out,
 * cost more than everything else in a run. Node 22.1+ caches compiled ES modules itself
 * (module.enableCompileCache, which bin.ts turns on), Node 20 caches nothing, and neither
 * caches code compiled through vm. So they are compiled here with vm.Script, given the data V8
 * produced on an earlier run, and after a run that had no usable cache the data is produced
 * again (after the code has done its work, so it holds the functions compiled meanwhile too)
 * and written for the next run.
 *
 * Where: rl-design's cache folder (io/cache-dir.ts). NODE_DISABLE_COMPILE_CACHE=1, Node's own
 * switch for its cache, turns this one off too (RL_DESIGN_CACHE=off turns off all of them).
 * A file's cache is named by a hash of its content and by V8's version, so an upgrade never
 * meets a stale cache; V8 also checks and rejects data that does not fit. The cache is only
 * ever a speed-up: any failure to read or write it is ignored and the file is compiled as usual.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { cacheDir, pruneCache, writeCacheFile } from './cache-dir.js';

/** How the cached data was used: accepted by V8, rejected (stale), missing, or caching off. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'missing' | 'off';

export interface CachedModule<T> {
  exports: T;
  cache: CodeCacheUse;
  /** Whether save() would write: the cache was missing or rejected. */
  needsSave: boolean;
  /** When the cache was not accepted: writes a new one (call after the code has done its work). */
  save(): void;
}

/** The code cache's folder (rl-design's cache folder), or null when it is off. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const disabled = env.NODE_DISABLE_COMPILE_CACHE;
  if (disabled !== undefined && disabled !== '' && disabled !== '0') return null;
  return cacheDir(env);
}

/** `<name>-<content hash>`: what the name of every cache of this very content starts with. */
function contentPrefix(file: string, bytes: Uint8Array): string {
  return `${path.basename(file)}-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
}

/** `<name>-<content hash>[-<variant>]-v8-<version>-<arch>.cache`: one per content, variant and V8 build. */
function cacheFileName(prefix: string, variant: string | undefined): string {
  const v = variant ? `-${variant.replace(/[^\w.-]/g, '_')}` : '';
  return `${prefix}${v}-v8-${process.versions.v8.replace(/[^\w.-]/g, '_')}-${process.arch}.cache`;
}

/**
 * A cache file is a SHA-256 of the data, then the data. V8 checks that data fits its version,
 * flags and the source's length, but not (in release builds) that the bytes are intact, and
 * it would run damaged code: so the digest is checked before V8 sees anything.
 */
const DIGEST_BYTES = 32;
const digest = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

function readCache(file: string): Buffer | 'damaged' | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const data = bytes.subarray(DIGEST_BYTES);
  return bytes.length > DIGEST_BYTES && digest(data).equals(bytes.subarray(0, DIGEST_BYTES)) ? data : 'damaged';
}

/**
 * Runs a CommonJS file as `require` would (its own module, exports, require and __filename)
 * and returns its exports, compiled with the cached code when there is some. `variant` keeps
 * separate caches of one file for runs that use different parts of it (the CLI's commands):
 * a cache holds the functions its first run compiled.
 */
export function requireWithCodeCache<T>(file: string, dir: string | null = codeCacheDir(), variant?: string): CachedModule<T> {
  // The hash is taken of the bytes: of the string it would cost three times as much.
  const bytes = readFileSync(file);
  const prefix = contentPrefix(file, bytes);
  const source = bytes.toString('utf8');
  const name = cacheFileName(prefix, variant);
  const cacheFile = dir === null ? undefined : path.join(dir, name);
  const cached = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cached instanceof Buffer ? { cachedData: cached } : {}),
  });
  const cache: CodeCacheUse =
    cacheFile === undefined ? 'off' : cached === undefined ? 'missing' : cached === 'damaged' || script.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
  const needsSave = cache === 'missing' || cache === 'rejected';
  return {
    exports: module.exports,
    cache,
    needsSave,
    save() {
      if (!needsSave || cacheFile === undefined || dir === null) return;
      let data: Buffer;
      try {
        data = script.createCachedData();
      } catch {
        return;
      }
      if (!writeCacheFile(cacheFile, Buffer.concat([digest(data), data]))) return;
      // caches of other contents of this file (earlier versions) are of no further use;
      // those of other Node versions stay, for a user who switches between them
      const sameFile = `${path.basename(file)}-`;
      pruneCache(dir, (old) => old.startsWith(sameFile) && !old.startsWith(prefix) && old.endsWith('.cache'));
    },
  };
}

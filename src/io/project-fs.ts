/**
 * The Node implementation of the detectors' read-only ProjectFs port.
 *
 * - list: breadth first from the project root, skipping SKIPPED_DIRS, never following symbolic
 *   links, at most `maxDepth` folders deep and `maxFiles` files; paths come back relative to the
 *   root with '/' separators, shallower first, then in code unit order.
 * - read: UTF-8 text of a regular file inside the root (no absolute paths, no '..' escapes, no
 *   symbolic links out of it), or undefined when missing, unreadable or over the size cap.
 */
import { lstat, readFile, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';

export interface ReadOptions {
  /** Larger files read as undefined. Implementations have a default cap (1 MB for nodeProjectFs). */
  maxBytes?: number;
}

/** A read-only view of a project folder. Paths are relative to the project root, with '/' separators. */
export interface ProjectFs {
  /**
   * Every file under `dir` ('' or '.' for the project root), recursively, as paths relative to the
   * project root (not to `dir`), shallower files first, then alphabetically. Skips dependency, VCS and
   * build folders (node_modules, .git, dist, build, ...) and is capped (nodeProjectFs: 5,000 files,
   * 6 directory levels). A missing folder lists as [].
   */
  list(dir: string): Promise<string[]>;
  /** The file as UTF-8 text, or undefined when it is missing, not a regular file, outside the root or over the size cap. */
  read(path: string, options?: ReadOptions): Promise<string | undefined>;
}

/** Folders a ProjectFs never lists: dependencies, version control, build output, caches. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'dist',
  'build',
  'coverage',
  '.next',
  '.nuxt',
  '.svelte-kit',
  '.turbo',
  '.cache',
  '.venv',
  'venv',
  '__pycache__',
]);

/** Default size cap for ProjectFs.read. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

interface NodeProjectFsOptions {
  /** Files listed at most (default 5,000). */
  maxFiles?: number;
  /** Folder levels below the root that are listed (default 6). */
  maxDepth?: number;
  /** Default read cap in bytes (default 1 MB); a read may ask for more with `maxBytes`. */
  maxBytes?: number;
}

function comparePaths(a: string, b: string): number {
  const d = a.split('/').length - b.split('/').length;
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function nodeProjectFs(root: string, options: NodeProjectFsOptions = {}): ProjectFs {
  const base = path.resolve(root);
  const maxFiles = options.maxFiles ?? 5000;
  const maxDepth = options.maxDepth ?? 6;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let realBase: Promise<string> | undefined;

  /** Absolute path of `rel` when it stays inside the root; undefined otherwise. */
  function inside(rel: string): string | undefined {
    if (rel.includes('\0') || path.isAbsolute(rel) || /^[a-zA-Z]:/.test(rel)) return undefined;
    const abs = path.resolve(base, rel === '' ? '.' : rel);
    const r = path.relative(base, abs);
    if (r === '..' || r.startsWith(`..${path.sep}`) || path.isAbsolute(r)) return undefined;
    return abs;
  }

  function toRel(abs: string): string {
    return path.relative(base, abs).split(path.sep).join('/');
  }

  return {
    async list(dir) {
      const start = inside(dir === '.' ? '' : dir);
      if (start === undefined) return [];
      const out: string[] = [];
      const startDepth = start === base ? 0 : toRel(start).split('/').length;
      const queue: Array<{ abs: string; depth: number }> = [{ abs: start, depth: startDepth }];
      while (queue.length > 0 && out.length < maxFiles) {
        const { abs, depth } = queue.shift() as { abs: string; depth: number };
        let entries;
        try {
          entries = await readdir(abs, { withFileTypes: true });
        } catch {
          continue;
        }
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const entry of entries) {
          const child = path.join(abs, entry.name);
          if (entry.isDirectory()) {
            if (!SKIPPED_DIRS.has(entry.name) && depth < maxDepth) queue.push({ abs: child, depth: depth + 1 });
          } else if (entry.isFile()) {
            out.push(toRel(child));
            if (out.length >= maxFiles) break;
          }
        }
      }
      return out.sort(comparePaths);
    },

    async read(rel, readOptions) {
      const abs = inside(rel);
      if (abs === undefined || abs === base) return undefined;
      try {
        const stat = await lstat(abs);
        if (!stat.isFile() || stat.size > (readOptions?.maxBytes ?? maxBytes)) return undefined;
        realBase ??= realpath(base);
        const [real, rootReal] = await Promise.all([realpath(abs), realBase]);
        const r = path.relative(rootReal, real);
        if (r === '..' || r.startsWith(`..${path.sep}`) || path.isAbsolute(r)) return undefined;
        return await readFile(abs, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * An in-memory ProjectFs, for tests and for running detection on files that are not on disk.
 * Follows the same rules as nodeProjectFs: skipped folders, '/'-separated root-relative paths,
 * shallow-first order, a size cap (1 MB unless the caller asks for more).
 */
import { comparePaths } from './shared.js';
import { DEFAULT_MAX_BYTES, SKIPPED_DIRS, type ProjectFs } from './types.js';

export function memoryProjectFs(files: Readonly<Record<string, string>>, maxBytes = DEFAULT_MAX_BYTES): ProjectFs {
  const normalise = (p: string): string => p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
  const table = new Map(Object.entries(files).map(([p, text]) => [normalise(p), text]));
  return {
    async list(dir) {
      const d = normalise(dir === '.' ? '' : dir);
      return [...table.keys()]
        .filter(
          (p) =>
            (d === '' || p.startsWith(`${d}/`)) &&
            !p
              .split('/')
              .slice(0, -1)
              .some((s) => SKIPPED_DIRS.has(s)),
        )
        .sort(comparePaths);
    },
    async read(path, options) {
      const text = table.get(normalise(path));
      if (text === undefined) return undefined;
      return Buffer.byteLength(text, 'utf8') > (options?.maxBytes ?? maxBytes) ? undefined : text;
    },
  };
}

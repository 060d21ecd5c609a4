/**
 * Installed versions from lockfiles (package-lock.json / npm-shrinkwrap.json, pnpm-lock.yaml,
 * yarn.lock, classic and berry), to confirm what package.json declares.
 */
import { BIG_FILE_BYTES, isRecord, joinPath } from './shared.js';
import { parseStructured } from '../../io/text.js';
import type { ProjectFs, Warn } from './types.js';

interface LockedVersion {
  version: string;
  /** The lockfile, relative to the project root. */
  file: string;
}

export type LockLookup = (name: string) => LockedVersion | undefined;

const LOCKFILES = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock'] as const;

/**
 * A lookup for the package in `pkgDir`: the nearest lockfile in that folder or above it
 * (workspaces keep one at the root). Unreadable lockfiles give a warning and no versions.
 */
export async function lockLookup(fs: ProjectFs, files: ReadonlySet<string>, pkgDir: string, warn: Warn): Promise<LockLookup> {
  for (let dir: string | undefined = pkgDir; dir !== undefined; dir = parent(dir)) {
    for (const name of LOCKFILES) {
      const file = joinPath(dir, name);
      if (!files.has(file)) continue;
      const text = await fs.read(file, { maxBytes: BIG_FILE_BYTES });
      if (text === undefined) continue;
      const importer = relative(dir, pkgDir);
      try {
        const lookup =
          name === 'yarn.lock'
            ? yarnLookup(text)
            : name === 'pnpm-lock.yaml'
              ? pnpmLookup(text, file, importer, warn)
              : npmLookup(text, file, importer, warn);
        return (dep) => {
          const version = lookup(dep);
          return version ? { version, file } : undefined;
        };
      } catch {
        warn({ source: file, message: 'lockfile could not be read; versions not confirmed' });
        return () => undefined;
      }
    }
  }
  return () => undefined;
}

function parent(dir: string): string | undefined {
  if (dir === '') return undefined;
  const i = dir.lastIndexOf('/');
  return i < 0 ? '' : dir.slice(0, i);
}

function relative(from: string, to: string): string {
  if (from === '') return to;
  return to === from ? '' : to.slice(from.length + 1);
}

type Lookup = (name: string) => string | undefined;

function npmLookup(text: string, file: string, importer: string, warn: Warn): Lookup {
  const parsed = parseStructured(text, file);
  const doc = parsed.ok ? parsed.docs[0] : undefined;
  if (!isRecord(doc)) {
    warn({ source: file, message: parsed.ok ? 'not an npm lockfile' : parsed.error });
    return () => undefined;
  }
  const packages = isRecord(doc.packages) ? doc.packages : {};
  const deps = isRecord(doc.dependencies) ? doc.dependencies : {};
  return (name) => {
    const candidates = [importer ? `${importer}/node_modules/${name}` : '', `node_modules/${name}`];
    for (const key of candidates) {
      const entry = key ? packages[key] : undefined;
      if (isRecord(entry) && typeof entry.version === 'string') return entry.version;
    }
    const v1 = deps[name];
    return isRecord(v1) && typeof v1.version === 'string' ? v1.version : undefined;
  };
}

function pnpmLookup(text: string, file: string, importer: string, warn: Warn): Lookup {
  const parsed = parseStructured(text, file);
  const doc = parsed.ok ? parsed.docs[0] : undefined;
  if (!isRecord(doc)) {
    warn({ source: file, message: parsed.ok ? 'not a pnpm lockfile' : parsed.error });
    return () => undefined;
  }
  const importers = isRecord(doc.importers) ? doc.importers : {};
  const scope = importers[importer || '.'] ?? (importer ? undefined : doc);
  return (name) => {
    if (!isRecord(scope)) return undefined;
    for (const section of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      const deps = scope[section];
      const entry = isRecord(deps) ? deps[name] : undefined;
      const raw = isRecord(entry) ? entry.version : entry;
      const version = typeof raw === 'string' || typeof raw === 'number' ? cleanPnpmVersion(String(raw)) : undefined;
      if (version) return version;
    }
    return undefined;
  };
}

/** '5.1.0(typescript@5.6.3)' -> '5.1.0'; '/5.1.0' -> '5.1.0'; 'link:../x' -> undefined. */
function cleanPnpmVersion(raw: string): string | undefined {
  const v = raw.replace(/\(.*$/, '').replace(/^\//, '').trim();
  return /^\d+\.\d+\.\d+\S*$/.test(v) ? v : undefined;
}

function yarnLookup(text: string): Lookup {
  const entries: Array<{ descriptors: string[]; version: string }> = [];
  let current: string[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    if (!/^\s/.test(line) && line.trimEnd().endsWith(':')) {
      current = line
        .trimEnd()
        .slice(0, -1)
        .split(',')
        .map((d) => d.trim().replace(/^"|"$/g, ''));
      continue;
    }
    const v = /^\s+version:?\s+"?([^"\s]+)"?\s*$/.exec(line);
    if (v && current) {
      entries.push({ descriptors: current, version: v[1] ?? '' });
      current = undefined;
    }
  }
  return (name) => entries.find((e) => e.descriptors.some((d) => d.startsWith(`${name}@`)))?.version;
}

/**
 * Writing outputs safely.
 *
 * - Plan, then check, then write: every file of every output folder is checked (no symbolic
 *   link at it or on the way to it, not edited by the user, not someone else's) before the
 *   first byte is written; then every file is staged as a temporary file beside its target
 *   (written and flushed); only when all are staged are they renamed into place. A failure
 *   before that point removes the temporary files and the folders this run created: an error
 *   means nothing was written.
 * - One writer per output folder (io/lock.ts), so two runs never interleave their files.
 * - One manifest per output folder, `<folder>/.rl-design-manifest.json`, records what
 *   rl-design wrote (sha256 per file, by path relative to the folder), so a file the user
 *   edited since is never overwritten without --force. A symbolic link is never followed,
 *   with or without --force.
 * - A run that names its owner (generate: the answers file) is recorded in the manifest with
 *   the files it wrote. A file an earlier run of the same owner wrote and this run no longer
 *   generates is reported as left over; with `prune` it is removed, unless the user edited it
 *   (or another owner also wrote it), and folders it leaves empty go too.
 * - Temporary files are named `.<name>.<pid>.<random>.rl-design-tmp`; the next run in the
 *   folder removes any a killed run left behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, open, readdir, rename, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../messages.js';
import { acquireLock, type Lock } from './lock.js';
import {
  checkChain,
  isInside,
  type PathState,
  makeFolders,
  readCapped,
  refuseSystemPath,
  removeFolders,
  TooLargeError,
} from './safe-fs.js';

const MANIFEST_NAME = '.rl-design-manifest.json';
const TEMP_RE = /^\..+\.\d+\.[0-9a-f]+\.rl-design-tmp$/;
/** An existing file larger than this is not one rl-design wrote. */
const MAX_EXISTING_BYTES = 64 * 1024 * 1024;

interface Manifest {
  tool: 'rl-design';
  files: Record<string, string>;
  /** Per owner (a run's source, e.g. `generate:answers.json`), the files its last run wrote (and leftovers it kept). */
  owners?: Record<string, string[]>;
}

interface ManifestData {
  files: Record<string, string>;
  owners: Record<string, string[]>;
}

export interface PlannedFile {
  /** Absolute path. */
  path: string;
  content: string;
  /** The output folder the file belongs to (its manifest and lock live there); default: the file's folder. */
  root?: string;
  /**
   * A trusted folder at or above `root`: no folder between it and the file may be a symbolic
   * link. Default: the parent of `root`.
   */
  anchor?: string;
  /**
   * Not tracked by the manifest (the answers file `init` writes): the caller has decided it may
   * be replaced; it is still checked for links, staged and written with the others.
   */
  unmanaged?: boolean;
}

interface WriteResult {
  written: string[];
  unchanged: string[];
  /** Files an earlier run of the same owner wrote that this run no longer generates, kept, and whether the user edited each since (kept even with `prune`). */
  leftover: Leftover[];
  /** Leftovers removed (`prune`). */
  removed: string[];
}

/** A file an earlier run wrote that this run does not. */
export interface Leftover {
  file: string;
  /** Changed since that run wrote it. */
  edited: boolean;
}

interface WriteOptions {
  force?: boolean;
  display?: (abs: string) => string;
  /** How long to wait for another run writing the same folder (default 30 s). */
  lockWaitMs?: number;
  /**
   * Who is writing: the command and its source (an absolute answers path, recorded relative to each
   * output folder, or a name such as `example:saas-platform`). Recorded in the manifest with the
   * files written, so that files this owner wrote before and no longer generates are found.
   */
  owner?: { command: string; source: string };
  /** Remove those leftover files (never one the user edited). Needs `owner`. */
  prune?: boolean;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

function tempName(file: string): string {
  // The name is kept short enough for any file system, whatever the target's length.
  return path.join(
    path.dirname(file),
    `.${path.basename(file).slice(0, 100)}.${process.pid}.${randomBytes(4).toString('hex')}.rl-design-tmp`,
  );
}

/** Reads a regular file that the chain check has vetted (never through a symbolic link). */
async function readExisting(file: string, show: (abs: string) => string): Promise<Buffer> {
  try {
    return await readCapped(file, MAX_EXISTING_BYTES, { noFollow: true });
  } catch (e) {
    if (e instanceof TooLargeError) throw new UserError('foreignFile', { file: show(file) });
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new UserError('symlinkRefused', { file: show(file) });
    throw new UserError('writeFailed', { file: show(file), reason: (e as Error).message });
  }
}

async function readManifestAt(file: string, anchor: string, show: (abs: string) => string): Promise<ManifestData> {
  const none: ManifestData = { files: {}, owners: {} };
  if ((await checkChain(anchor, file, show)) !== 'file') return none;
  try {
    const parsed = JSON.parse((await readCapped(file, 4 * 1024 * 1024, { noFollow: true })).toString('utf8')) as Manifest;
    if (parsed && typeof parsed.files === 'object' && parsed.files !== null) {
      const files = Object.fromEntries(Object.entries(parsed.files).filter(([, v]) => typeof v === 'string'));
      const owners: Record<string, string[]> = {};
      if (parsed.owners && typeof parsed.owners === 'object') {
        for (const [owner, list] of Object.entries(parsed.owners)) {
          // Only names the manifest vouches for, and only plain relative paths below the folder.
          if (Array.isArray(list)) owners[owner] = list.filter((k): k is string => typeof k === 'string' && k in files && isPlainKey(k));
        }
      }
      return { files, owners };
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new UserError('symlinkRefused', { file: show(file) });
    // unreadable or not ours: nothing in it is known to be ours
  }
  return none;
}

/** A manifest key that names a file below its folder (no `..`, not absolute, no empty part). */
function isPlainKey(k: string): boolean {
  return k.split('/').every((part) => part !== '' && part !== '.' && part !== '..') && !path.isAbsolute(k) && !k.includes('\\');
}

const sortedKeys = <T>(o: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const key = (root: string, file: string): string => path.relative(root, file).split(path.sep).join('/');

interface RootPlan {
  root: string;
  anchor: string;
  files: PlannedFile[];
  manifest: Record<string, string>;
  owners: Record<string, string[]>;
  /** Leftovers of this owner's earlier run: manifest keys, and whether each is still as written. */
  leftovers: (Leftover & { key: string })[];
  /** Older versions kept one manifest per folder; those below the root are read, then removed. */
  legacy: string[];
  created: string[];
  lock?: Lock;
}

interface Staged {
  temp: string;
  target: string;
}

/** Stages one file: a new temporary file beside the target, written and flushed, never through a link. */
async function stage(
  target: string,
  content: string,
  mode: number | undefined,
  show: (abs: string) => string,
  staged: Staged[],
): Promise<void> {
  const temp = tempName(target);
  let handle;
  try {
    handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
    staged.push({ temp, target });
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (e) {
    throw new UserError('writeFailed', { file: show(target), reason: (e as Error).message });
  } finally {
    await handle?.close();
  }
  if (mode !== undefined) await chmod(temp, mode & 0o7777).catch(() => undefined);
}

/** Removes temporary files of rl-design's naming (and of the older `<name>.<digits>` naming for `names`) in `dir`. */
async function removeStaleTemps(dir: string, names: ReadonlySet<string>): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const legacy = /^(.+)\.\d{5,}$/.exec(entry);
    if (TEMP_RE.test(entry) || (legacy && names.has(legacy[1] as string))) {
      const p = path.join(dir, entry);
      const s = await lstat(p).catch(() => undefined);
      if (s && (s.isFile() || s.isSymbolicLink())) await unlink(p).catch(() => undefined);
    }
  }
}

/**
 * Checks every planned file, then writes them all or none. Throws a UserError (exit 2) before
 * writing anything when a target was edited by the user, was not written by rl-design, is or
 * lies behind a symbolic link, or cannot be written.
 */
export async function writeOutputs(files: PlannedFile[], options: WriteOptions = {}): Promise<WriteResult> {
  const show = options.display ?? ((p: string) => p);
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new UserError('outputsCollide', { file: show(f.path) });
    seen.add(f.path);
  }
  const byRoot = new Map<string, RootPlan>();
  for (const f of files) {
    const root = f.root ?? path.dirname(f.path);
    const anchor = f.anchor ?? path.dirname(root);
    if (!isInside(root, f.path) || !isInside(anchor, root)) throw new Error(`rl-design: ${f.path} is outside its output folder ${root}`);
    let plan = byRoot.get(root);
    if (!plan) byRoot.set(root, (plan = { root, anchor, files: [], manifest: {}, owners: {}, leftovers: [], legacy: [], created: [] }));
    plan.files.push(f);
  }
  const plans = [...byRoot.values()].sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : 0));
  const staged: Staged[] = [];
  const toWrite: PlannedFile[] = [];
  const unchanged: string[] = [];
  const removed: string[] = [];
  let committed = false;
  try {
    // 1. Each output folder: not a system path, no link on the way, created, locked.
    for (const plan of plans) {
      await refuseSystemPath(plan.root, show(plan.root));
      await checkChain(plan.anchor, plan.root, show, true);
      plan.created = await makeFolders(plan.anchor, plan.root, show);
      plan.lock = await acquireLock(plan.root, show(plan.root), options.lockWaitMs !== undefined ? { waitMs: options.lockWaitMs } : {});
    }
    // 2. Every file checked before any is written.
    const modes = new Map<string, number>();
    for (const plan of plans) {
      ({ files: plan.manifest, owners: plan.owners } = await readManifestAt(path.join(plan.root, MANIFEST_NAME), plan.anchor, show));
      const dirs = new Set(plan.files.map((f) => path.dirname(f.path)).filter((d) => d !== plan.root));
      for (const dir of [...dirs].sort()) {
        const legacyFile = path.join(dir, MANIFEST_NAME);
        if ((await checkChain(plan.anchor, dir, show, true)) !== 'dir') continue;
        const { files: entries } = await readManifestAt(legacyFile, plan.anchor, show);
        if (Object.keys(entries).length === 0) continue;
        plan.legacy.push(legacyFile);
        for (const [name, hash] of Object.entries(entries)) {
          const k = key(plan.root, path.join(dir, name));
          if (!(k in plan.manifest)) plan.manifest[k] = hash;
        }
      }
      for (const f of plan.files) {
        const state = await checkChain(plan.anchor, f.path, show);
        if (state === 'missing') {
          toWrite.push(f);
          continue;
        }
        const existing = await readExisting(f.path, show);
        if (existing.equals(Buffer.from(f.content, 'utf8'))) {
          unchanged.push(f.path);
          continue;
        }
        if (!options.force && !f.unmanaged) {
          const recorded = plan.manifest[key(plan.root, f.path)];
          if (recorded === undefined) throw new UserError('foreignFile', { file: show(f.path) });
          if (recorded !== sha256(existing)) throw new UserError('editedFile', { file: show(f.path) });
        }
        const s = await lstat(f.path);
        modes.set(f.path, s.mode);
        toWrite.push(f);
      }
      const manifestPath = path.join(plan.root, MANIFEST_NAME);
      const state = await checkChain(plan.anchor, manifestPath, show);
      if (state === 'file') modes.set(manifestPath, (await lstat(manifestPath)).mode);
      if (options.owner !== undefined) await findLeftovers(plan, ownerName(plan.root, options.owner), show);
    }
    // 3. Stale temporary files of earlier, killed runs go (the lock says no other run is writing here).
    for (const plan of plans) {
      const dirs = new Set([plan.root, ...plan.files.map((f) => path.dirname(f.path))]);
      const names = new Set([MANIFEST_NAME, ...plan.files.map((f) => path.basename(f.path))]);
      for (const dir of dirs) await removeStaleTemps(dir, names);
    }
    // 4. Stage every file and every manifest.
    const manifestTexts = new Map<string, string>();
    const removing = new Set<string>();
    for (const plan of plans) {
      const next: Record<string, string> = { ...plan.manifest };
      const managed = plan.files.filter((f) => !f.unmanaged);
      if (managed.length === 0) continue;
      for (const f of managed) next[key(plan.root, f.path)] = sha256(f.content);
      const owners = { ...plan.owners };
      if (options.owner !== undefined) {
        const kept: string[] = [];
        for (const l of plan.leftovers) {
          if (options.prune && !l.edited) {
            removing.add(l.file);
            delete next[l.key];
          } else kept.push(l.key);
        }
        owners[ownerName(plan.root, options.owner)] = [...managed.map((f) => key(plan.root, f.path)), ...kept].sort();
      }
      const manifest: Manifest = { tool: 'rl-design', files: sortedKeys(next) };
      if (Object.keys(owners).length > 0) manifest.owners = sortedKeys(owners);
      manifestTexts.set(plan.root, `${JSON.stringify(manifest, null, 2)}\n`);
    }
    for (const f of toWrite) {
      const plan = byRoot.get(f.root ?? path.dirname(f.path)) as RootPlan;
      plan.created.push(...(await makeFolders(plan.anchor, path.dirname(f.path), show)));
      await stage(f.path, f.content, modes.get(f.path), show, staged);
    }
    const manifestStages: Staged[] = [];
    for (const plan of plans) {
      const manifestPath = path.join(plan.root, MANIFEST_NAME);
      const text = manifestTexts.get(plan.root);
      if (text === undefined) continue;
      const current = (await checkChain(plan.anchor, manifestPath, show)) === 'file' ? await readExisting(manifestPath, show) : undefined;
      if (current?.toString('utf8') === text) continue;
      await stage(manifestPath, text, modes.get(manifestPath), show, manifestStages);
      staged.push(...manifestStages.splice(0));
    }
    // 5. Still ours? Then rename everything into place: the files first, the manifests last,
    // so an interrupted run leaves files the old manifest does not vouch for (which the next
    // run refuses to overwrite without --force), never the reverse.
    for (const plan of plans) {
      if (!(await plan.lock?.held()))
        throw new UserError('outputLocked', { folder: show(plan.root), pid: 'another run', lock: show(plan.lock?.file ?? plan.root) });
    }
    const isManifest = (s: Staged): boolean => path.basename(s.target) === MANIFEST_NAME;
    for (const s of [...staged.filter((x) => !isManifest(x)), ...staged.filter(isManifest)]) {
      const plan = plans.find((p) => isInside(p.root, s.target)) as RootPlan;
      await checkChain(plan.anchor, path.dirname(s.target), show, true);
      try {
        await rename(s.temp, s.target);
      } catch (e) {
        throw new UserError('writeFailed', { file: show(s.target), reason: (e as Error).message });
      }
      committed = true;
    }
    staged.length = 0;
    for (const plan of plans) for (const legacy of plan.legacy) await unlink(legacy).catch(() => undefined);
    for (const plan of plans) {
      for (const l of plan.leftovers) {
        if (!removing.has(l.file)) continue;
        await checkChain(plan.anchor, path.dirname(l.file), show, true);
        await unlink(l.file).catch(() => undefined);
        removed.push(l.file);
        await removeEmptyFolders(plan.root, path.dirname(l.file));
      }
    }
  } finally {
    for (const s of staged) await unlink(s.temp).catch(() => undefined);
    for (const plan of plans) await plan.lock?.release();
    if (!committed) for (const plan of [...plans].reverse()) await removeFolders(plan.created);
  }
  const gone = new Set(removed);
  return {
    written: toWrite.map((f) => f.path),
    unchanged,
    leftover: plans.flatMap((p) => p.leftovers).flatMap(({ file, edited }) => (gone.has(file) ? [] : [{ file, edited }])),
    removed,
  };
}

/**
 * The files `owner` wrote last time that this run does not write: still present, recorded by
 * no other owner. A file the user removed is forgotten; one the user edited is kept whatever happens.
 */
async function findLeftovers(plan: RootPlan, owner: string, show: (abs: string) => string): Promise<void> {
  const now = new Set(plan.files.map((f) => key(plan.root, f.path)));
  const others = new Set(
    Object.entries(plan.owners)
      .filter(([o]) => o !== owner)
      .flatMap(([, list]) => list),
  );
  for (const k of plan.owners[owner] ?? []) {
    if (now.has(k) || others.has(k)) continue;
    const file = path.join(plan.root, ...k.split('/'));
    if (!isInside(plan.root, file)) continue;
    let state: PathState;
    try {
      state = await checkChain(plan.anchor, file, show);
    } catch {
      continue; // a link or a folder where the file was: not ours to judge or touch
    }
    if (state !== 'file') {
      if (state === 'missing') delete plan.manifest[k];
      continue;
    }
    const existing = await readExisting(file, show);
    plan.leftovers.push({ key: k, file, edited: plan.manifest[k] !== sha256(existing) });
  }
}

const ownerName = (root: string, owner: { command: string; source: string }): string =>
  `${owner.command}:${path.isAbsolute(owner.source) ? key(root, owner.source) : owner.source}`;

/** Removes `dir` and its parents up to (not including) `root` while they are empty. */
async function removeEmptyFolders(root: string, dir: string): Promise<void> {
  let d = dir;
  while (d !== root && isInside(root, d)) {
    try {
      await rmdir(d);
    } catch {
      return;
    }
    d = path.dirname(d);
  }
}

/** The largest answers file rl-design reads. */
const MAX_ANSWERS_BYTES = 1024 * 1024;

/** Reads a text file for the commands (at most MAX_ANSWERS_BYTES), mapping errors to clear messages. */
export async function readTextFile(file: string, notFound: 'answersNotFound'): Promise<string> {
  let bytes: Buffer;
  try {
    const s = await lstat(file).catch(() => undefined);
    if (s?.isDirectory()) throw new UserError('answersUnreadable', { file, reason: 'it is a folder' });
    bytes = await readCapped(file, MAX_ANSWERS_BYTES);
  } catch (e) {
    if (e instanceof UserError) throw e;
    if (e instanceof TooLargeError) throw new UserError('answersTooLarge', { file, limit: '1 MB' });
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(notFound, { file });
    throw new UserError('answersUnreadable', { file, reason: (e as Error).message });
  }
  return bytes.toString('utf8');
}

/**
 * File-system steps that never follow a symbolic link and never leave the folder they were
 * given: the checks behind every write (io/write.ts), the answers file of `init`, and the
 * bounded reads of files a repository may have planted (the answers file, a manifest).
 *
 * An "anchor" is a folder the caller trusts (the project folder, the folder of the answers
 * file, or the parent of a path named on the command line). Below it, every folder on the way
 * to a file must be a real folder, not a symbolic link, and the file itself must be a regular
 * file or absent: then the file's real path is the anchor's real path plus the relative path.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rmdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { UserError } from '../messages.js';

/** Folders no output may go to: the kernel's views and device files. */
const SYSTEM_ROOTS = ['/proc', '/sys', '/dev'];

/** Whether `child` is `parent` or inside it (both absolute, normalised). */
export function isInside(parent: string, child: string): boolean {
  const r = path.relative(parent, child);
  return r === '' || (!r.startsWith(`..${path.sep}`) && r !== '..' && !path.isAbsolute(r));
}

/**
 * How a path is shown: relative to the current folder when inside it, `~/...` when inside the
 * home folder, else absolute. Never a long `../../..` chain that hides where it points.
 */
export function displayPath(cwd: string, abs: string): string {
  if (isInside(cwd, abs)) return path.relative(cwd, abs) || '.';
  const home = homedir();
  if (home && home !== '/' && isInside(home, abs)) return `~${path.sep}${path.relative(home, abs)}`;
  return abs;
}

/** `~` and `~/x` as the shell would expand them; anything else unchanged. */
export function expandHome(p: string): string {
  if (p === '~') return homedir();
  if (p.startsWith('~/') || (path.sep === '\\' && p.startsWith('~\\'))) return path.join(homedir(), p.slice(2));
  return p;
}

/** The real path of the nearest folder of `abs` (or `abs` itself) that exists. */
async function realNearest(abs: string): Promise<string> {
  let p = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(p), ...rest);
    } catch {
      const up = path.dirname(p);
      if (up === p) return abs;
      rest.unshift(path.basename(p));
      p = up;
    }
  }
}

/** Refuses a path under /proc, /sys or /dev, by its text or by its real path. */
export async function refuseSystemPath(abs: string, shown: string): Promise<void> {
  const under = (p: string): boolean => SYSTEM_ROOTS.some((root) => isInside(root, p));
  if (path.sep === '/' && (under(abs) || under(await realNearest(abs)))) {
    throw new UserError('systemPath', { file: shown });
  }
}

export type PathState = 'missing' | 'file' | 'dir';

/**
 * Checks every component from below `anchor` to `target`: each folder must be a real folder
 * (a symbolic link or a file in the way is an error), and the target itself a regular file,
 * a folder (when `targetIsDir`) or absent. Returns what the target is.
 */
export async function checkChain(anchor: string, target: string, show: (abs: string) => string, targetIsDir = false): Promise<PathState> {
  if (!isInside(anchor, target)) throw new Error(`rl-design: ${target} is not inside ${anchor}`);
  const parts = path
    .relative(anchor, target)
    .split(path.sep)
    .filter((p) => p !== '');
  let current = anchor;
  for (let i = 0; i < parts.length; i++) {
    current = path.join(current, parts[i] as string);
    const last = i === parts.length - 1;
    let s;
    try {
      s = await lstat(current);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'missing';
      if (code === 'ENOTDIR') throw new UserError('notAFolder', { file: show(path.dirname(current)) });
      throw new UserError('writeFailed', { file: show(current), reason: (e as Error).message });
    }
    if (s.isSymbolicLink()) throw new UserError('symlinkRefused', { file: show(current) });
    if (last && !targetIsDir) {
      if (s.isDirectory()) throw new UserError('outputIsDirectory', { file: show(current) });
      if (!s.isFile()) throw new UserError('notRegularFile', { file: show(current) });
      return 'file';
    }
    if (!s.isDirectory()) throw new UserError('notAFolder', { file: show(current) });
  }
  return targetIsDir || parts.length === 0 ? 'dir' : 'missing';
}

/**
 * Creates the folders from below `anchor` down to `dir`, one at a time, each checked: a
 * symbolic link on the way is an error. Returns the folders it created, outermost first (so
 * a failed run can remove them again, innermost first).
 */
export async function makeFolders(anchor: string, dir: string, show: (abs: string) => string): Promise<string[]> {
  const created: string[] = [];
  const parts = path
    .relative(anchor, dir)
    .split(path.sep)
    .filter((p) => p !== '');
  let current = anchor;
  for (const part of parts) {
    current = path.join(current, part);
    try {
      await mkdir(current);
      created.push(current);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new UserError('writeFailed', { file: show(current), reason: (e as Error).message });
      const s = await lstat(current);
      if (s.isSymbolicLink()) throw new UserError('symlinkRefused', { file: show(current) });
      if (!s.isDirectory()) throw new UserError('notAFolder', { file: show(current) });
    }
  }
  return created;
}

/** Removes folders `makeFolders` created, innermost first, where they are still empty. */
export async function removeFolders(created: readonly string[]): Promise<void> {
  for (const dir of [...created].reverse()) await rmdir(dir).catch(() => undefined);
}

/** The file is larger than the cap (`readCapped`). */
export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`);
    this.name = 'TooLargeError';
  }
}

/**
 * Reads at most `maxBytes` bytes of a file, without following a symbolic link at `file`
 * when `noFollow`; throws TooLargeError when there is more. A device or a pipe (/dev/urandom,
 * a FIFO) is read only up to the cap, never to its end.
 */
export async function readCapped(file: string, maxBytes: number, options: { noFollow?: boolean } = {}): Promise<Buffer> {
  const flags = constants.O_RDONLY | (options.noFollow ? constants.O_NOFOLLOW : 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await open(file, flags);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, buffer.length, null));
      } catch (e) {
        // A FIFO opened without a writer: nothing to read.
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw e;
      }
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new TooLargeError(maxBytes);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks);
  } finally {
    await handle.close();
  }
}

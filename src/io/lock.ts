/**
 * One writer per output folder: `<folder>/.rl-design.lock`, created exclusively (O_EXCL, never
 * through a symbolic link), holding the writer's process id, host name and a random token.
 *
 * A run that crashed (SIGKILL, power loss) cannot leave the folder stuck: a lock whose process
 * no longer runs on this host, an empty one older than a few seconds (a crash between creating
 * and filling it), or any older than five minutes (its process id since reused), is stale and
 * is taken over. A run that finds a live lock waits for it, up to `waitMs`, then stops with an
 * error naming the folder and the process.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { UserError } from '../messages.js';

export const LOCK_NAME = '.rl-design.lock';
/** Longer than any run holds a lock. */
const MAX_HOLD_MS = 5 * 60_000;

interface LockInfo {
  pid: number;
  host: string;
  token: string;
}

export interface Lock {
  readonly file: string;
  /** Whether the lock file still holds this run's token. */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(file: string): Promise<{ info?: LockInfo; ageMs: number } | undefined> {
  try {
    const s = await lstat(file);
    if (s.isSymbolicLink() || !s.isFile()) return { ageMs: Date.now() - s.mtimeMs };
    const text = s.size > 4096 ? '' : await readFile(file, 'utf8');
    try {
      const info = JSON.parse(text) as LockInfo;
      if (typeof info.pid === 'number' && typeof info.host === 'string' && typeof info.token === 'string')
        return { info, ageMs: Date.now() - s.mtimeMs };
    } catch {
      // being written, or garbage
    }
    return { ageMs: Date.now() - s.mtimeMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** A lock nobody holds any more: its process is gone (same host), or it is an old empty file. */
function stale(found: { info?: LockInfo; ageMs: number }): boolean {
  if (!found.info) return found.ageMs > 5000;
  // A run holds the lock only while it checks and writes its files, a few seconds: an old lock
  // whose process id is alive belongs to a process that reused the id.
  if (found.ageMs > MAX_HOLD_MS) return true;
  if (found.info.host === hostname()) return !alive(found.info.pid);
  return false;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Takes the lock of `dir` (which must exist), waiting up to `waitMs` for another run to finish. */
export async function acquireLock(dir: string, shown: string, options: { waitMs?: number } = {}): Promise<Lock> {
  const file = path.join(dir, LOCK_NAME);
  const info: LockInfo = { pid: process.pid, host: hostname(), token: randomBytes(12).toString('hex') };
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  for (;;) {
    try {
      const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
      try {
        await handle.writeFile(`${JSON.stringify(info)}\n`);
      } finally {
        await handle.close();
      }
      const lock: Lock = {
        file,
        async held() {
          const now = await readLock(file).catch(() => undefined);
          return now?.info?.token === info.token;
        },
        async release() {
          if (await lock.held()) await unlink(file).catch(() => undefined);
        },
      };
      return lock;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A folder nobody may write (a read-only checkout): no other run can write it either.
      // The run goes on unlocked; if it has anything to write, writing it fails with the reason.
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
        return { file, held: async () => true, release: async () => undefined };
      if (code !== 'EEXIST' && code !== 'ELOOP')
        throw new UserError('writeFailed', { file: path.join(shown, LOCK_NAME), reason: (e as Error).message });
    }
    const found = await readLock(file);
    if (found === undefined) continue;
    const s = await lstat(file).catch(() => undefined);
    if (s?.isSymbolicLink()) throw new UserError('symlinkRefused', { file: path.join(shown, LOCK_NAME) });
    if (stale(found)) {
      // Taken over: removed only if it is still the same stale lock.
      const again = await readLock(file);
      if (again && again.info?.token === found.info?.token) await unlink(file).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new UserError('outputLocked', { folder: shown, pid: found.info?.pid ?? 'unknown', lock: path.join(shown, LOCK_NAME) });
    }
    await sleep(50 + Math.floor(Math.random() * 50));
  }
}

/** The output-folder lock against real processes: a live holder is waited for, then named; a dead one is taken over. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, LOCK_NAME } from '../../src/io/lock.js';
import { UserError } from '../../src/messages.js';
import { tempDir } from '../helpers/cli.js';

describe('output folder lock', () => {
  it('a live second process holding it: waited for, then refused naming the process; once it is gone, taken over', async () => {
    const dir = tempDir();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(path.join(dir, LOCK_NAME), JSON.stringify({ pid: holder.pid, host: hostname(), token: 'theirs' }));
      const t0 = Date.now();
      const err = await acquireLock(dir, 'docs', { waitMs: 400 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).message).toBe(
        `Another rl-design run (process ${holder.pid}) is writing to docs; try again when it has finished. A run that crashed leaves no lock behind; if none is running, delete docs/${LOCK_NAME}.`,
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(readFileSync(path.join(dir, LOCK_NAME), 'utf8')).token).toBe('theirs');
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.on('close', r));
    }
    const lock = await acquireLock(dir, 'docs', { waitMs: 400 });
    expect(await lock.held()).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_NAME), 'utf8')).pid).toBe(process.pid);
    await lock.release();
    expect(existsSync(path.join(dir, LOCK_NAME))).toBe(false);
  });

  it('an old lock whose process id is alive (reused by another process) is taken over', async () => {
    const dir = tempDir();
    const file = path.join(dir, LOCK_NAME);
    writeFileSync(file, JSON.stringify({ pid: process.ppid, host: hostname(), token: 'old' }));
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(file, old, old);
    const lock = await acquireLock(dir, 'docs', { waitMs: 200 });
    expect(await lock.held()).toBe(true);
    await lock.release();
  });

  it('a second taker waits for the first to release, then gets it', async () => {
    const dir = tempDir();
    const first = await acquireLock(dir, 'docs');
    const second = acquireLock(dir, 'docs', { waitMs: 5000 });
    await new Promise((r) => setTimeout(r, 200));
    await first.release();
    const lock = await second;
    expect(await lock.held()).toBe(true);
    expect(await first.held()).toBe(false);
    await lock.release();
  });
});

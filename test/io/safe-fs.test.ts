/** The path helpers behind every write: how paths are shown, `~`, containment, system folders, bounded reads. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkChain, displayPath, expandHome, isInside, readCapped, refuseSystemPath, TooLargeError } from '../../src/io/safe-fs.js';
import { UserError } from '../../src/messages.js';
import { tempDir } from '../helpers/cli.js';

const show = (p: string): string => p;

describe('safe-fs', () => {
  it('shows paths as a user would type them: relative inside the current folder, ~/ in the home folder, else absolute', () => {
    expect(displayPath('/work/repo', '/work/repo/docs/a.md')).toBe('docs/a.md');
    expect(displayPath('/work/repo', '/work/repo')).toBe('.');
    expect(displayPath('/work/repo', '/etc/passwd')).toBe('/etc/passwd');
    expect(displayPath('/work/repo', path.join(homedir(), 'x', 'y.md'))).toBe(homedir() === '/' ? '/x/y.md' : '~/x/y.md');
  });

  it('expands ~ and ~/ only', () => {
    expect(expandHome('~')).toBe(homedir());
    expect(expandHome('~/docs')).toBe(path.join(homedir(), 'docs'));
    expect(expandHome('~other/docs')).toBe('~other/docs');
    expect(expandHome('docs/~')).toBe('docs/~');
  });

  it('containment is by path components, not string prefixes', () => {
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
  });

  it('refuses /proc, /sys, /dev by text and by real path (a link into /proc)', async () => {
    for (const p of ['/proc/self/x', '/sys', '/dev/shm/x'])
      await expect(refuseSystemPath(p, p)).rejects.toMatchObject({ messageId: 'systemPath' });
    const dir = tempDir();
    symlinkSync('/proc/self', path.join(dir, 'proc-link'));
    await expect(refuseSystemPath(path.join(dir, 'proc-link', 'x'), 'x')).rejects.toBeInstanceOf(UserError);
    await expect(refuseSystemPath(path.join(dir, 'fine'), 'fine')).resolves.toBeUndefined();
  });

  it('checkChain names the first link, a file in the way, or a device', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'a'));
    symlinkSync(dir, path.join(dir, 'a', 'loop'));
    writeFileSync(path.join(dir, 'file'), 'x');
    await expect(checkChain(dir, path.join(dir, 'a', 'loop', 'x', 'y.md'), show)).rejects.toMatchObject({
      messageId: 'symlinkRefused',
      data: { file: path.join(dir, 'a', 'loop') },
    });
    await expect(checkChain(dir, path.join(dir, 'file', 'y.md'), show)).rejects.toMatchObject({ messageId: 'notAFolder' });
    expect(spawnSync('mkfifo', [path.join(dir, 'a', 'pipe')]).status).toBe(0);
    await expect(checkChain(dir, path.join(dir, 'a', 'pipe'), show)).rejects.toMatchObject({ messageId: 'notRegularFile' });
    await expect(checkChain(dir, path.join(dir, 'a', 'new.md'), show)).resolves.toBe('missing');
    await expect(checkChain(dir, path.join(dir, 'file'), show)).resolves.toBe('file');
  });

  it('reads a device only up to the cap, and a pipe without a writer without blocking', async () => {
    await expect(readCapped('/dev/zero', 1000)).rejects.toBeInstanceOf(TooLargeError);
    const dir = tempDir();
    const fifo = path.join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect((await readCapped(fifo, 1000)).length).toBe(0);
  });
});

import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nodeProjectFs } from '../../../src/io/project-fs.js';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { FIXTURES } from './fixtures.js';

let root: string;
let outside: string;

async function put(rel: string, text = 'x'): Promise<void> {
  const abs = path.join(root, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, text);
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rl-design-projectfs-'));
  outside = await mkdtemp(path.join(tmpdir(), 'rl-design-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await put('package.json', '{}');
  await put('src/app.js', 'app');
  await put('src/a/b/c/d/e/six.js');
  await put('src/a/b/c/d/e/f/seven.js');
  await put('node_modules/express/package.json');
  await put('.git/config');
  await put('dist/app.js');
  await put('build/out.js');
  await put('big.json', 'x'.repeat(2048));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
  await symlink(outside, path.join(root, 'linkdir'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('nodeProjectFs', () => {
  test('lists root-relative paths, shallow first, skipping dependency/VCS/build folders and symlinks', async () => {
    const fs = nodeProjectFs(root);
    expect(await fs.list('')).toEqual(['big.json', 'package.json', 'src/app.js', 'src/a/b/c/d/e/six.js']);
    expect(await fs.list('src/a')).toEqual(['src/a/b/c/d/e/six.js']);
    expect(await fs.list('nope')).toEqual([]);
    expect(await fs.list('../')).toEqual([]);
  });

  test('caps the number of files and the depth', async () => {
    expect(await nodeProjectFs(root, { maxFiles: 2 }).list('')).toEqual(['big.json', 'package.json']);
    expect(await nodeProjectFs(root, { maxDepth: 1 }).list('')).toEqual(['big.json', 'package.json', 'src/app.js']);
    expect(await nodeProjectFs(root, { maxDepth: 7 }).list('')).toContain('src/a/b/c/d/e/f/seven.js');
  });

  test('reads UTF-8 inside the root only, within the size cap', async () => {
    const fs = nodeProjectFs(root, { maxBytes: 1024 });
    expect(await fs.read('src/app.js')).toBe('app');
    expect(await fs.read('./src/../src/app.js')).toBe('app');
    expect(await fs.read('big.json')).toBeUndefined();
    expect(await fs.read('big.json', { maxBytes: 4096 })).toHaveLength(2048);
    expect(await fs.read('missing.txt')).toBeUndefined();
    expect(await fs.read('src')).toBeUndefined();
    expect(await fs.read('')).toBeUndefined();
    expect(await fs.read(`../${path.basename(outside)}/secret.txt`)).toBeUndefined();
    expect(await fs.read(path.join(outside, 'secret.txt'))).toBeUndefined();
    expect(await fs.read('link.txt')).toBeUndefined();
    expect(await fs.read('linkdir/secret.txt')).toBeUndefined();
  });

  test('the fixtures list as expected', async () => {
    expect(await nodeProjectFs(path.join(FIXTURES, 'express-ioredis')).list('')).toEqual([
      'package-lock.json',
      'package.json',
      'src/app.js',
    ]);
    expect(await nodeProjectFs(path.join(FIXTURES, 'empty')).list('')).toEqual(['.gitkeep']);
  });
});

describe('memoryProjectFs', () => {
  test('follows the same listing rules and size cap', async () => {
    const fs = memoryProjectFs({ 'b/x.js': '1', 'a.js': '2', 'node_modules/y/package.json': '{}', 'src/big.txt': 'x'.repeat(20) }, 10);
    expect(await fs.list('')).toEqual(['a.js', 'b/x.js', 'src/big.txt']);
    expect(await fs.list('b')).toEqual(['b/x.js']);
    expect(await fs.read('./a.js')).toBe('2');
    expect(await fs.read('src/big.txt')).toBeUndefined();
    expect(await fs.read('src/big.txt', { maxBytes: 100 })).toHaveLength(20);
  });
});

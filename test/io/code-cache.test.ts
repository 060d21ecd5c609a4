/**
 * The V8 code cache for the diagram engine. Each load runs in a fresh node process (tsc's
 * dist/ module): in one process V8 keeps compiled scripts in memory and would never consult
 * the cached data, so only a new process shows whether V8 accepted it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeCacheDir } from '../../src/io/code-cache.js';
import { ROOT } from '../helpers/examples.js';
import { tempDir } from '../helpers/cli.js';

const MODULE = pathToFileURL(path.join(ROOT, 'dist', 'io', 'code-cache.js')).href;

/** A CommonJS file with enough functions for V8 to have something to cache. */
function moduleFile(dir: string, version: number): string {
  const file = path.join(dir, 'engine.cjs');
  const n = 50;
  const fns = Array.from({ length: n }, (_, i) => `function f${i}(x) { return x * ${i} + ${version}; }`).join('\n');
  writeFileSync(
    file,
    `'use strict';\nconst path = require('node:path');\n${fns}\n` +
      `exports.sum = (x) => [${Array.from({ length: n }, (_, i) => `f${i}`).join(', ')}].reduce((a, f) => a + f(x), 0);\n` +
      `exports.where = path.basename(__filename) + ' in ' + path.basename(__dirname);\n` +
      `module.exports.version = ${version};\n`,
  );
  return file;
}

interface Loaded {
  cache: string;
  sum: number;
  where: string;
  version: number;
}

/** Loads `file` with requireWithCodeCache in a new process, then calls save(). */
function load(file: string, dir: string | null, variant?: string): Loaded {
  const script = [
    `import { requireWithCodeCache } from ${JSON.stringify(MODULE)};`,
    `const m = requireWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(dir)}, ${JSON.stringify(variant)});`,
    `const out = { cache: m.cache, sum: m.exports.sum(2), where: m.exports.where, version: m.exports.version };`,
    'm.save();',
    'console.log(JSON.stringify(out));',
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Loaded;
}

const caches = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

describe('codeCacheDir', () => {
  it('is the user’s own cache folder unless told otherwise, and off with Node’s switch', () => {
    expect(codeCacheDir({ HOME: '/home/u' })).toMatch(/[\\/]\.cache[\\/]rl-design$/);
    expect(codeCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe(path.join('/x/cache', 'rl-design'));
    expect(codeCacheDir({ XDG_CACHE_HOME: '/x/cache', RL_DESIGN_CACHE_DIR: '/y/here' })).toBe(path.resolve('/y/here'));
    expect(codeCacheDir({ RL_DESIGN_CACHE_DIR: '/y/here', NODE_DISABLE_COMPILE_CACHE: '1' })).toBeNull();
    expect(codeCacheDir({ RL_DESIGN_CACHE_DIR: '/y/here', NODE_DISABLE_COMPILE_CACHE: '0' })).toBe(path.resolve('/y/here'));
    expect(codeCacheDir({ RL_DESIGN_CACHE_DIR: '/y/here', RL_DESIGN_CACHE: 'off' })).toBeNull();
  });
});

describe('requireWithCodeCache', () => {
  it('runs the file as require would, writes a cache V8 accepts in the next process, and behaves the same with it', () => {
    const work = tempDir();
    const dir = path.join(work, 'cache');
    const file = moduleFile(work, 1);
    const expected = { sum: 2 * 1225 + 50, where: `engine.cjs in ${path.basename(work)}`, version: 1 };
    expect(load(file, dir)).toEqual({ cache: 'missing', ...expected });
    const [name] = caches(dir);
    expect(name).toMatch(new RegExp(`^engine\\.cjs-[0-9a-f]{16}-v8-.+-${process.arch}\\.cache$`));
    expect(statSync(path.join(dir, name!)).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(path.join(dir, name!));

    expect(load(file, dir)).toEqual({ cache: 'accepted', ...expected });
    // accepted: nothing rewritten
    expect(caches(dir)).toEqual([name]);
    expect(readFileSync(path.join(dir, name!)).equals(bytes)).toBe(true);
  });

  it('variants of one file keep caches of their own, each accepted next time', () => {
    const work = tempDir();
    const dir = path.join(work, 'cache');
    const file = moduleFile(work, 5);
    expect(load(file, dir, 'generate').cache).toBe('missing');
    expect(load(file, dir, 'validate').cache).toBe('missing');
    const names = caches(dir);
    expect(names).toHaveLength(2);
    expect(names.some((n) => n.includes('-generate-v8-'))).toBe(true);
    expect(names.some((n) => n.includes('-validate-v8-'))).toBe(true);
    expect(load(file, dir, 'generate').cache).toBe('accepted');
    expect(load(file, dir, 'validate').cache).toBe('accepted');
    expect(caches(dir)).toEqual(names);
  });

  it('a changed file gets a cache of its own, and the old content’s caches are removed', () => {
    const work = tempDir();
    const dir = path.join(work, 'cache');
    load(moduleFile(work, 1), dir);
    const [old] = caches(dir);
    // the same old content cached by another V8 build goes too; another file's cache stays
    const oldOtherV8 = old!.replace(/-v8-.*$/, '-v8-0.0.0-other.cache');
    writeFileSync(path.join(dir, oldOtherV8), 'from another node');
    writeFileSync(path.join(dir, 'other.cjs-0123456789abcdef-v8-1-x.cache'), 'another file');
    const changed = load(moduleFile(work, 2), dir);
    expect([changed.cache, changed.version]).toEqual(['missing', 2]);
    const now = caches(dir);
    expect(now).toHaveLength(2);
    expect(now).toContain('other.cjs-0123456789abcdef-v8-1-x.cache');
    expect(now).not.toContain(old);
    expect(now).not.toContain(oldOtherV8);
    expect(load(moduleFile(work, 2), dir).cache).toBe('accepted');
  });

  it('a damaged or foreign cache is never handed to V8: the file still runs and the cache is written again', () => {
    const work = tempDir();
    const dir = path.join(work, 'cache');
    const file = moduleFile(work, 3);
    load(file, dir);
    const [name] = caches(dir);
    const cacheFile = path.join(dir, name!);
    const good = readFileSync(cacheFile);
    // one flipped bit in V8's data (V8 itself would not notice in a release build)
    const flipped = Buffer.from(good);
    flipped[flipped.length - 100]! ^= 0x10;
    for (const damaged of [flipped, good.subarray(0, 10), Buffer.alloc(0)]) {
      writeFileSync(cacheFile, damaged);
      expect(load(file, dir)).toMatchObject({ cache: 'rejected', version: 3 });
      expect(load(file, dir).cache).toBe('accepted');
    }
  });

  it('off (null): nothing is read or written; an unwritable folder is not an error', () => {
    const work = tempDir();
    const file = moduleFile(work, 4);
    expect(load(file, null)).toMatchObject({ cache: 'off', version: 4 });
    expect(readdirSync(work)).toEqual(['engine.cjs']);

    // a file where the folder should be: mkdir fails, save() says nothing
    const blocked = path.join(work, 'blocked');
    writeFileSync(blocked, '');
    expect(load(file, blocked)).toMatchObject({ cache: 'missing', version: 4 });

    if (process.getuid?.() !== 0) {
      const readOnly = path.join(work, 'ro');
      mkdirSync(readOnly);
      chmodSync(readOnly, 0o500);
      expect(load(file, readOnly)).toMatchObject({ cache: 'missing', version: 4 });
      expect(readdirSync(readOnly)).toEqual([]);
    }
  });
});

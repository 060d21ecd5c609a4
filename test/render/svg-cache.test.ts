import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSvgCache } from '../../src/render/diagrams/svg-cache.js';
import { tempDir } from '../helpers/cli.js';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text>a</text></svg>';

describe('openSvgCache', () => {
  it('returns what was put, by exact source, for the same engine only', () => {
    const root = tempDir();
    const cache = openSvgCache('aaaa1111bbbb2222', root)!;
    expect(cache.isEmpty()).toBe(true);
    expect(cache.get('flowchart TB\n    a --> b')).toBeUndefined();
    cache.put('flowchart TB\n    a --> b', SVG);
    expect(cache.isEmpty()).toBe(false);
    expect(cache.get('flowchart TB\n    a --> b')).toBe(SVG);
    expect(cache.get('flowchart TB\n    a --> c')).toBeUndefined();
    expect(openSvgCache('aaaa1111bbbb2222', root)!.get('flowchart TB\n    a --> b')).toBe(SVG);
    // another engine sees nothing, and its first drawing removes the old engine's
    const next = openSvgCache('cccc3333dddd4444', root)!;
    expect(next.isEmpty()).toBe(true);
    expect(next.get('flowchart TB\n    a --> b')).toBeUndefined();
    next.put('x', SVG);
    expect(readdirSync(path.join(root, 'svg'))).toEqual(['cccc3333dddd4444']);
  });

  it('an entry whose digest or source does not fit is a miss', () => {
    const root = tempDir();
    const cache = openSvgCache('aaaa1111bbbb2222', root)!;
    cache.put('s', SVG);
    const [file] = readdirSync(path.join(root, 'svg', 'aaaa1111bbbb2222'));
    const full = path.join(root, 'svg', 'aaaa1111bbbb2222', file!);
    const entry = JSON.parse(readFileSync(full, 'utf8'));
    writeFileSync(full, JSON.stringify({ ...entry, svg: `${SVG} ` }));
    expect(cache.get('s')).toBeUndefined();
    writeFileSync(full, JSON.stringify({ ...entry, source: 't' }));
    expect(cache.get('s')).toBeUndefined();
    writeFileSync(full, '');
    expect(cache.get('s')).toBeUndefined();
    cache.put('s', SVG);
    expect(cache.get('s')).toBe(SVG);
  });

  it('none without an engine key, with caching off, or with a key that is not a hash; an unwritable folder is not an error', () => {
    const root = tempDir();
    expect(openSvgCache(undefined, root)).toBeUndefined();
    expect(openSvgCache('aaaa1111bbbb2222', null)).toBeUndefined();
    expect(openSvgCache('../../etc', root)).toBeUndefined();
    // not bundled (these tests run from the sources): no key, so no cache
    expect(openSvgCache(undefined)).toBeUndefined();
    const blocked = path.join(root, 'blocked');
    writeFileSync(blocked, '');
    const cache = openSvgCache('aaaa1111bbbb2222', blocked)!;
    expect(() => cache.put('s', SVG)).not.toThrow();
    expect(cache.get('s')).toBeUndefined();
    mkdirSync(path.join(root, 'ok'));
    expect(existsSync(path.join(root, 'ok', 'svg'))).toBe(false);
  });
});

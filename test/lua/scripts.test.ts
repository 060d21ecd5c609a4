import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LUA_DIR, LUA_SCRIPTS, loadLuaScripts, luaScript, luaSha1 } from '../../src/lua.js';
import { useRedis } from './harness.js';

/**
 * The EVALSHA ids the generated middleware relies on. A script change must update its line
 * here on purpose (and every generated file that embeds the script changes with it).
 */
const PINNED_SHA1: Record<string, string> = {
  gcra: 'a1a5b65b9bb8afd664e85e1523ccea2d60938924',
  'sliding-window-log': 'c0bbaa6b8476cbddd0f49efc41b42c28e92da4a2',
  'fixed-window': 'e0179e694c18c50e34c937efc85c6b710f04b02c',
  'outbound-bucket': 'f2777fb97e1116f3e13b415445b9eedf1dd4336b',
  penalty: '3fbf1a4117d76eca7a177d54fc292f89d5109f4a',
  'identity-limits': '85d199b962b91bd20ef24a7a850337a43b93f601',
};

const s = useRedis();

describe('lua/ scripts', () => {
  it('ships one file per algorithm, and every .lua file in lua/ is registered', () => {
    expect(existsSync(LUA_DIR)).toBe(true);
    const files = readdirSync(LUA_DIR)
      .filter((f) => f.endsWith('.lua'))
      .sort();
    expect(files).toEqual(LUA_SCRIPTS.map((m) => m.file).sort());
    expect(LUA_SCRIPTS.map((m) => m.algorithm).sort()).toEqual([
      'fixed-window',
      'gcra',
      'identity-limits',
      'outbound',
      'penalty',
      'sliding-window-log',
    ]);
  });

  it('pins the SHA1 of every script', () => {
    const actual = Object.fromEntries(loadLuaScripts().map((x) => [x.name, x.sha1]));
    expect(actual).toEqual(PINNED_SHA1);
  });

  it('hashes the exact bytes of the file, and Redis computes the same id', async () => {
    for (const script of loadLuaScripts()) {
      const bytes = readFileSync(join(LUA_DIR, script.file));
      expect(script.source).toBe(bytes.toString('utf8'));
      expect(script.sha1).toBe(luaSha1(bytes));
      expect(await s.redis.script('LOAD', script.source)).toBe(script.sha1);
    }
  });

  it('keeps the files ASCII with LF line endings (so the bytes, and the SHA1, never drift)', () => {
    for (const script of loadLuaScripts()) {
      expect(script.source, script.file).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
      expect(script.source.endsWith('\n')).toBe(true);
    }
  });

  it('documents KEYS, ARGV, the return value and the TTL in each header', () => {
    for (const script of loadLuaScripts()) {
      const header = script.source.slice(0, script.source.indexOf(']]'));
      for (const word of ['KEYS[1]', 'ARGV[', 'Returns', 'TTL', "redis.call('TIME')"]) {
        expect(header, `${script.file} header lacks ${word}`).toContain(word);
      }
    }
  });

  it('reads the files once and returns the same frozen objects', () => {
    const first = loadLuaScripts();
    expect(loadLuaScripts()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(luaScript('gcra')).toBe(first.find((x) => x.name === 'gcra'));
    expect(() => luaScript('nope' as never)).toThrow(/unknown Lua script/);
  });
});

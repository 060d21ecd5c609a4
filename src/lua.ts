/**
 * The Redis Lua scripts that enforce the limits.
 *
 * The scripts are real files in `lua/` at the package root (one per algorithm), read once
 * and cached. Each comes with the SHA1 of its exact bytes: the id that EVALSHA uses, which
 * Redis computes the same way on SCRIPT LOAD. The SHA1s are pinned by a test, so a script
 * never changes by accident.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type LuaAlgorithm = 'gcra' | 'sliding-window-log' | 'fixed-window' | 'outbound' | 'identity-limits' | 'penalty';
export type LuaScriptName = 'gcra' | 'sliding-window-log' | 'fixed-window' | 'outbound-bucket' | 'identity-limits' | 'penalty';

interface LuaScriptMeta {
  readonly name: LuaScriptName;
  /** File name inside the lua/ folder. */
  readonly file: string;
  readonly algorithm: LuaAlgorithm;
}

interface LuaScript extends LuaScriptMeta {
  /** The script text, exactly as in the file. */
  readonly source: string;
  /** Lowercase hex SHA1 of the file's bytes: the EVALSHA id. */
  readonly sha1: string;
}

/** The scripts rl-design ships, in a stable order. */
export const LUA_SCRIPTS: readonly LuaScriptMeta[] = Object.freeze([
  { name: 'gcra', file: 'gcra.lua', algorithm: 'gcra' },
  { name: 'sliding-window-log', file: 'sliding-window-log.lua', algorithm: 'sliding-window-log' },
  { name: 'fixed-window', file: 'fixed-window.lua', algorithm: 'fixed-window' },
  { name: 'outbound-bucket', file: 'outbound-bucket.lua', algorithm: 'outbound' },
  { name: 'identity-limits', file: 'identity-limits.lua', algorithm: 'identity-limits' },
  { name: 'penalty', file: 'penalty.lua', algorithm: 'penalty' },
] as const);

import { LUA_DIR } from './paths.js';

export { LUA_DIR };

/** SHA1 (lowercase hex) of a script, as Redis computes it for EVALSHA. */
export function luaSha1(source: string | Uint8Array): string {
  return createHash('sha1').update(source).digest('hex');
}

let cache: readonly LuaScript[] | undefined;

/** Reads every script once (later calls return the cached, frozen list). */
export function loadLuaScripts(): readonly LuaScript[] {
  cache ??= Object.freeze(
    LUA_SCRIPTS.map((meta) => {
      const bytes = readFileSync(join(LUA_DIR, meta.file));
      return Object.freeze({ ...meta, source: bytes.toString('utf8'), sha1: luaSha1(bytes) });
    }),
  );
  return cache;
}

/** One script by name. */
export function luaScript(name: LuaScriptName): LuaScript {
  const script = loadLuaScripts().find((s) => s.name === name);
  if (!script) throw new Error(`unknown Lua script: ${String(name)}`);
  return script;
}

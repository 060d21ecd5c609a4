/**
 * The Lua scripts a verify run loads and hands the runtime: the shipped ones (lua/, exactly as
 * codegen embeds them), or the testing hook's replacements (see commands/verify.ts).
 */
import type { LuaScriptName } from '../lua.js';

/** One script as verify runs it. */
export interface VerifyScript {
  name: LuaScriptName;
  file: string;
  /** Exact text (from src/lua.ts, or the test hook's folder). */
  source: string;
  sha1: string;
  /**
   * Testing hook only (see commands/verify.ts): a second script run after an admitting call,
   * which models a limiter whose check and consume are two separate script calls.
   */
  consume?: { file: string; source: string; sha1: string };
}

export type ScriptSet = ReadonlyMap<LuaScriptName, VerifyScript>;

export function scriptSet(scripts: Iterable<VerifyScript>): ScriptSet {
  return new Map([...scripts].map((s) => [s.name, s]));
}

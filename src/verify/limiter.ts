/**
 * A small limiter client, the way the generated middleware calls the scripts: EVALSHA, EVAL
 * on NOSCRIPT, one decision object per call (never a throw on a denial), and the rule's fail
 * mode when the store does not answer: `open` admits and counts a fail-open event, `closed`
 * refuses with 503 semantics and the contract's Retry-After. Every call's latency is kept.
 */
import { performance } from 'node:perf_hooks';
import type { LuaScriptName } from '../codegen/lua.js';
import type { FailMode } from '../design/model.js';
import type { ScriptClient } from './redis.js';

/** One script as verify runs it. */
export interface VerifyScript {
  name: LuaScriptName;
  file: string;
  /** Exact text (from src/codegen/lua.ts, or the test hook's folder). */
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

export interface Decision {
  allowed: boolean;
  /** 200 admitted, 429 refused by the limit, 503 refused because the store failed (fail closed). */
  status: 200 | 429 | 503;
  remaining: number;
  /** ms; 0 when admitted; -1 "never" (the request can not fit). */
  retryAfterMs: number;
  resetMs: number;
  /** sliding-window-log: the 1-based key that refused. */
  deniedBy?: number;
  /** Admitted only because the store failed and the rule fails open. */
  failOpen: boolean;
  /** The store error, when the call did not reach a decision. */
  storeError?: string;
  latencyMs: number;
}

type Reply = (number | string)[];

/** EVALSHA, and EVAL when the server does not have the script (after a restart, a failover). */
export async function evalScript(client: ScriptClient, script: { sha1: string; source: string }, keys: readonly string[], args: readonly (string | number)[]): Promise<Reply> {
  try {
    return (await client.evalsha(script.sha1, keys.length, ...keys, ...args)) as Reply;
  } catch (error) {
    if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
    return (await client.eval(script.source, keys.length, ...keys, ...args)) as Reply;
  }
}

function decisionOf(name: LuaScriptName, reply: Reply, latencyMs: number): Decision {
  const n = (i: number): number => Number(reply[i] ?? 0);
  if (name === 'outbound-bucket') {
    // {reserved, wait_ms, remaining, reset_ms}; with max_wait 0 a reservation is "call now".
    const allowed = n(0) === 1;
    return { allowed, status: allowed ? 200 : 429, remaining: n(2), retryAfterMs: allowed ? 0 : n(1), resetMs: n(3), failOpen: false, latencyMs };
  }
  const allowed = n(0) === 1;
  return {
    allowed,
    status: allowed ? 200 : 429,
    remaining: n(1),
    retryAfterMs: n(2),
    resetMs: n(3),
    ...(name === 'sliding-window-log' && !allowed ? { deniedBy: n(4) } : {}),
    failOpen: false,
    latencyMs,
  };
}

export class Limiter {
  /** Latency of every call since the last takeSamples(), ms. */
  private samples: number[] = [];
  /** ratelimit_fail_open_events_total, as the middleware would count it. */
  failOpenEvents = 0;
  /** ratelimit_store_failures_total. */
  storeFailures = 0;

  constructor(
    readonly client: ScriptClient,
    private readonly scripts: ScriptSet,
    /** 503 Retry-After from the response contract, ms. */
    private readonly storeUnavailableRetryMs: number,
  ) {}

  takeSamples(): number[] {
    const s = this.samples;
    this.samples = [];
    return s;
  }

  /**
   * One limiter decision. Store failures become the fail mode's answer (never a throw);
   * without a fail mode a failure is reported as a refusal carrying the error.
   */
  async call(name: LuaScriptName, keys: readonly string[], args: readonly (string | number)[], failMode?: FailMode): Promise<Decision> {
    const script = this.scripts.get(name);
    if (!script) throw new Error(`script ${name} is not loaded`);
    const t0 = performance.now();
    try {
      const reply = await evalScript(this.client, script, keys, args);
      if (script.consume && Number(reply[0]) === 1) await evalScript(this.client, script.consume, keys, args);
      const latency = performance.now() - t0;
      this.samples.push(latency);
      return decisionOf(name, reply, latency);
    } catch (error) {
      const latencyMs = performance.now() - t0;
      this.samples.push(latencyMs);
      this.storeFailures++;
      const storeError = (error as Error).message;
      if (failMode === 'open') {
        this.failOpenEvents++;
        return { allowed: true, status: 200, remaining: 0, retryAfterMs: 0, resetMs: 0, failOpen: true, storeError, latencyMs };
      }
      return {
        allowed: false,
        status: 503,
        remaining: 0,
        retryAfterMs: failMode === 'closed' ? this.storeUnavailableRetryMs : 0,
        resetMs: 0,
        failOpen: false,
        storeError,
        latencyMs,
      };
    }
  }
}

// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The in-memory fallback of fail-open rules: while the store fails, such a rule counts in this
 * process with the same algorithm (memory-store.ts) instead of admitting unchecked. Each
 * instance counts on its own, so during an outage a fleet of N admits up to N times what one
 * bucket admits per window; the design document states that number per rule.
 */
import { MemoryStore } from './memory-store.js';
import type { Reply } from './store.js';
import type { RuleSpec, ScriptName } from './types.js';

/** Replies the fallback gave (their outcomes carry source 'fallback'). */
export const fallbackReplies = new WeakSet<Reply>();

export class MemoryFallback {
  private readonly store = new MemoryStore();

  /** Whether a failed step of these rules is decided here: every rule fails open and keeps its state in Redis. */
  covers(rules: readonly { readonly spec: RuleSpec }[]): boolean {
    for (const r of rules) if (r.spec.failMode !== 'open' || r.spec.store !== 'redis' || r.spec.script === 'penalty') return false;
    return rules.length > 0;
  }

  /** The step's decision in this process: argv as the script takes it (the keys, then the arguments). */
  run(script: ScriptName, numKeys: number, argv: readonly (string | number)[]): Reply {
    const reply = this.store.run(script, argv.slice(0, numKeys) as string[], argv.slice(numKeys));
    fallbackReplies.add(reply);
    return reply;
  }

  clear(): void {
    this.store.clear();
  }
}

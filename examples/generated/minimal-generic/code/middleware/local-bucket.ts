// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The optional in-process bucket in front of Redis, with its stated over-admission.
 */
import type { Reply } from './store.js';

/** Replies the in-process bucket gave without asking Redis. */
export const localReplies = new WeakSet<Reply>();

function markLocal(reply: Reply): Reply {
  localReplies.add(reply);
  return reply;
}

interface LocalState {
  /** Tokens this instance may still admit without asking Redis. */
  credit: number;
  /** Tokens admitted locally and not yet charged to Redis. */
  pending: number;
  flushing: boolean;
  scheduled: boolean;
  /** While a charge is refused, requests for the key are refused here until it is paid. */
  blockedUntil: number;
  attempts: number;
  remaining: number;
  resetMs: number;
}

/**
 * Absorbs micro-bursts without a network hop: after Redis admits a request and reports
 * R tokens left, this instance may admit up to min(localBurst, R) more on its own, and
 * charges them to Redis in one call right after (same tick batch). The credit is backed
 * by what Redis reported, so one instance alone never over-admits; with N instances each
 * holding credit for the same identity at once, the fleet can admit at most
 * N x localBurst requests beyond the limit (the design's stated over-admission) before
 * the charges land. At any moment one instance holds at most localBurst uncharged
 * admissions per key: credit + pending never exceeds localBurst. A refused charge is a
 * debt: the key is refused on this instance until the debt is paid (retried after the
 * Retry-After Redis returns), so locally admitted requests are still counted and the
 * long-run rate stays the configured one. A debt still unpaid after five tries is dropped.
 */
export class LocalBuckets {
  private readonly states = new Map<string, LocalState>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly localBurst: number;
  private readonly maxKeys: number;

  constructor(localBurst: number, maxKeys: number) {
    this.localBurst = localBurst;
    this.maxKeys = maxKeys;
  }

  /**
   * call(cost) asks Redis; a failed synchronous call rejects to the caller (whose fail mode
   * applies), a failed background charge is reported to onFlushError.
   */
  decide(
    key: string,
    cost: number,
    call: (cost: number) => Promise<Reply>,
    onFlushError: (error: unknown) => void,
  ): Reply | Promise<Reply> {
    const state = this.state(key);
    const now = Date.now();
    if (state.pending > 0 && state.blockedUntil > now) {
      const wait = state.blockedUntil - now;
      return markLocal([0, 0, wait, Math.max(wait, state.resetMs)]);
    }
    if (state.credit >= cost) {
      state.credit -= cost;
      state.pending += cost;
      this.schedule(state, call, onFlushError);
      return markLocal([1, Math.max(0, state.remaining - state.pending), 0, state.resetMs]);
    }
    return call(cost).then((reply) => {
      if (reply[0] === 1) this.learn(state, reply);
      return reply;
    });
  }

  private learn(state: LocalState, reply: Reply): void {
    state.remaining = reply[1] ?? 0;
    state.resetMs = reply[3] ?? 0;
    state.credit = Math.max(0, Math.min(this.localBurst - state.pending, state.remaining - state.pending));
  }

  private schedule(state: LocalState, call: (cost: number) => Promise<Reply>, onError: (error: unknown) => void): void {
    if (state.flushing || state.scheduled) return;
    state.scheduled = true;
    setImmediate(() => {
      state.scheduled = false;
      this.flush(state, call, onError);
    });
  }

  private flush(state: LocalState, call: (cost: number) => Promise<Reply>, onError: (error: unknown) => void): void {
    if (state.flushing || state.pending === 0) return;
    state.flushing = true;
    const amount = state.pending;
    call(amount).then(
      (reply) => {
        state.flushing = false;
        if (reply[0] === 1) {
          state.pending -= amount;
          state.attempts = 0;
          this.learn(state, reply);
          if (state.pending > 0) this.schedule(state, call, onError);
          return;
        }
        state.credit = 0;
        const wait = reply[2] ?? -1;
        if (wait < 0 || ++state.attempts > 5) {
          state.pending = 0;
          state.attempts = 0;
          return;
        }
        state.blockedUntil = Date.now() + wait;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.flush(state, call, onError);
        }, wait);
        timer.unref?.();
        this.timers.add(timer);
      },
      (error: unknown) => {
        // the store failed: the charge is lost (at most localBurst), and the next request asks Redis
        state.flushing = false;
        state.credit = 0;
        state.pending = 0;
        onError(error);
      },
    );
  }

  private state(key: string): LocalState {
    let state = this.states.get(key);
    if (!state) {
      if (this.states.size >= this.maxKeys) this.evict();
      state = { credit: 0, pending: 0, flushing: false, scheduled: false, blockedUntil: 0, attempts: 0, remaining: 0, resetMs: 0 };
      this.states.set(key, state);
    }
    return state;
  }

  private evict(): void {
    let drop = Math.max(1, Math.floor(this.maxKeys / 10));
    for (const [key, state] of this.states) {
      if (drop === 0) break;
      if (state.pending === 0 && !state.flushing && !state.scheduled) {
        this.states.delete(key);
        drop--;
      }
    }
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.states.clear();
  }
}

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
  /**
   * Redis refused the charge of `pending`, or the call failed: owed until Redis takes it, and
   * meanwhile nothing is admitted here without asking Redis.
   */
  owed: boolean;
  /** While a refused charge waits for Redis's Retry-After, requests for the key are refused here. */
  blockedUntil: number;
  /** The retry of a refused charge, due at its Retry-After. */
  retry: ReturnType<typeof setTimeout> | null;
  remaining: number;
  resetMs: number;
}

/**
 * Absorbs micro-bursts without a network hop: after Redis admits a request and reports
 * R tokens left, this instance may admit up to min(localBurst, R) more on its own, and
 * charges them to Redis in one call right after (same tick batch). The credit is backed
 * by what Redis reported, so one instance alone never over-admits. At any moment one
 * instance holds at most localBurst admissions Redis has not counted per key (credit +
 * pending never exceeds localBurst), so with N instances the fleet admits at most
 * N x localBurst beyond what Redis admits in any stretch of time (the design's stated
 * over-admission), however long contention lasts. No charge is ever forgotten: a charge
 * Redis refuses stays owed, the key is refused on this instance until the Retry-After Redis
 * returned, the charge is retried then (and again after each refusal), and until it is
 * paid the instance admits nothing locally (every request asks Redis). A charge whose call
 * failed stays owed too, and is retried once Redis answers this instance again (a reply
 * that was lost with the charge applied counts it twice: fewer admissions, never more).
 */
export class LocalBuckets {
  private readonly states = new Map<string, LocalState>();
  /** Counts clear() calls: a charge answered after one is not retried. */
  private epoch = 0;
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
    if (state.owed && state.blockedUntil > now) {
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
      // Redis answers again after a failed charge: the charge is sent again
      if (state.owed && state.retry === null) this.schedule(state, call, onFlushError);
      return reply;
    });
  }

  private learn(state: LocalState, reply: Reply): void {
    state.remaining = reply[1] ?? 0;
    state.resetMs = reply[3] ?? 0;
    state.credit = state.owed ? 0 : Math.max(0, Math.min(this.localBurst - state.pending, state.remaining - state.pending));
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
    const epoch = this.epoch;
    call(amount).then(
      (reply) => {
        state.flushing = false;
        if (epoch !== this.epoch) return;
        if (reply[0] === 1) {
          state.pending -= amount;
          state.owed = false;
          this.learn(state, reply);
          if (state.pending > 0) this.schedule(state, call, onError);
          return;
        }
        // refused: owed, retried at Redis's Retry-After (a charge within the bucket's burst, as
        // every local charge is, always fits then; one that never fits is retried when the
        // bucket is full again)
        state.owed = true;
        state.credit = 0;
        const wait = reply[2] ?? -1;
        const delay = wait >= 0 ? wait : Math.max(1000, reply[3] ?? 0);
        state.blockedUntil = Date.now() + delay;
        if (state.retry !== null) clearTimeout(state.retry);
        state.retry = setTimeout(() => {
          state.retry = null;
          this.flush(state, call, onError);
        }, delay);
        state.retry.unref?.();
      },
      (error: unknown) => {
        // the store failed: still owed, retried after the next reply Redis gives this instance
        // for the key; meanwhile requests ask Redis, whose fail mode applies
        state.flushing = false;
        state.owed = true;
        state.credit = 0;
        onError(error);
      },
    );
  }

  private state(key: string): LocalState {
    let state = this.states.get(key);
    if (!state) {
      if (this.states.size >= this.maxKeys) this.evict();
      state = {
        credit: 0,
        pending: 0,
        flushing: false,
        scheduled: false,
        owed: false,
        blockedUntil: 0,
        retry: null,
        remaining: 0,
        resetMs: 0,
      };
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
    this.epoch++;
    for (const state of this.states.values()) {
      if (state.retry !== null) clearTimeout(state.retry);
      state.retry = null;
    }
    this.states.clear();
  }
}

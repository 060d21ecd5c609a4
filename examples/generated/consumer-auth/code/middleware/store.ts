// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The store: one script call to Redis (EVALSHA, EVAL after NOSCRIPT), its reply, its
 * deadline, and what a failure was (timeout, connection, script).
 */
import type { LatencyObserver } from './metrics.js';
import type { ScriptSpec } from './types.js';

/**
 * A decision as {allowed, remaining, retry_after_ms, reset_ms[, denied_by]}: what
 * fixed-window and sliding-window-log return, and what gcra's one integer becomes
 * (gcraReply); identity-limits returns {denied_by, v1, ..., vn}.
 */
export type Reply = readonly number[];

/** A script of the design with its latency series. */
export interface BoundScript {
  readonly spec: ScriptSpec;
  readonly latency: LatencyObserver;
}

export class StoreError extends Error {
  readonly reason: 'timeout' | 'connection' | 'script';

  constructor(reason: 'timeout' | 'connection' | 'script', message: string) {
    super(message);
    this.name = 'StoreError';
    this.reason = reason;
  }
}

export function failureReason(error: unknown): 'timeout' | 'connection' | 'script' {
  if (error instanceof StoreError) return error.reason;
  const e = error as { name?: unknown; message?: unknown } | null;
  const name = e && typeof e.name === 'string' ? e.name : '';
  const message = e && typeof e.message === 'string' ? e.message : '';
  if (name === 'ReplyError' || /^(ERR|CROSSSLOT|WRONGTYPE|NOSCRIPT)\b/.test(message)) return 'script';
  return 'connection';
}

/** Who hears how a store call ended. */
export interface StoreListener {
  stored(reply: Reply): void;
  failed(error: unknown): void;
}

/**
 * One store call in flight. It settles once: with the reply, with the client's error, or
 * with StoreError('timeout') when its deadline passes first; its listener hears which.
 */
export class StoreCall {
  settled = false;
  readonly script: BoundScript;
  readonly numKeys: number;
  /** The keys, then the arguments (kept for the EVAL retry on NOSCRIPT). */
  readonly argv: readonly (string | number)[];
  readonly listener: StoreListener;
  /** performance.now() when sent, and when it times out. */
  readonly started: number;
  readonly deadline: number;
  /** Neighbours in the Deadlines queue while pending. */
  prev: StoreCall | null = null;
  next: StoreCall | null = null;
  queued = false;

  constructor(
    script: BoundScript,
    numKeys: number,
    argv: readonly (string | number)[],
    listener: StoreListener,
    started: number,
    deadline: number,
  ) {
    this.script = script;
    this.numKeys = numKeys;
    this.argv = argv;
    this.listener = listener;
    this.started = started;
    this.deadline = deadline;
  }
}

let replyClock = -1;

function clearReplyClock(): void {
  replyClock = -1;
}

/**
 * When replies arrived (performance.now()), read once per microtask checkpoint: the client
 * settles all the replies of one socket read together, so their calls settle in the same
 * checkpoint and one clock reading, the one taken closest to their arrival, serves them all.
 * The reading is dropped once the tasks queued before it have run. (Calls are stamped with a
 * fresh reading when they are sent.)
 */
export function replyTime(): number {
  if (replyClock < 0) {
    replyClock = performance.now();
    queueMicrotask(clearReplyClock);
  }
  return replyClock;
}

/**
 * Per-call timeouts with ONE timer instead of a setTimeout per call. Every call of a limiter
 * has the same timeout, so deadlines come due in the order the calls were sent: pending
 * calls wait in a doubly linked list in that order (no allocation, no hashing), a call that
 * settles is unlinked at once (nothing stays referenced once it has answered), and the
 * timer only ever waits for the oldest pending call.
 * An expired call is failed from setImmediate, which runs after the poll phase of the same
 * loop turn: when the event loop itself was stalled, a reply already sitting in the socket
 * still wins, and only a store that really did not answer counts as timed out.
 */
export class Deadlines {
  private head: StoreCall | null = null;
  private tail: StoreCall | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly expire: (call: StoreCall) => void;

  constructor(expire: (call: StoreCall) => void) {
    this.expire = expire;
  }

  add(call: StoreCall): void {
    call.prev = this.tail;
    if (this.tail !== null) this.tail.next = call;
    else this.head = call;
    this.tail = call;
    call.queued = true;
    if (this.timer === null) this.arm(call.deadline);
  }

  remove(call: StoreCall): void {
    if (!call.queued) return;
    call.queued = false;
    if (call.prev !== null) call.prev.next = call.next;
    else this.head = call.next;
    if (call.next !== null) call.next.prev = call.prev;
    else this.tail = call.prev;
    call.prev = null;
    call.next = null;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(at - performance.now())));
  }

  private readonly fire = (): void => {
    this.timer = null;
    const now = performance.now();
    for (let call = this.head; call !== null; call = this.head) {
      if (call.deadline > now) {
        this.arm(call.deadline);
        return;
      }
      this.remove(call);
      setImmediate(this.expire, call);
    }
  };

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    while (this.head !== null) this.remove(this.head);
  }
}

/**
 * A bucket's numbers as gcra.lua takes them, whole microseconds: the emission interval
 * T = ceil(period_ms * 1000 / rate) (rounded up, so the sustained rate is never above the
 * rule's) and the tolerance burst x T; a request of cost c adds the increment c x T.
 * Worked out once per rule, so the script parses two numbers and divides nothing.
 */
export function gcraNumbers(burst: number, rate: number, periodMs: number): { interval: number; tolerance: number } {
  const interval = Math.ceil((periodMs * 1000) / rate);
  const tolerance = burst * interval;
  if (!(burst >= 1 && interval >= 1 && Number.isSafeInteger(tolerance))) {
    throw new RangeError(`gcra: burst ${burst}, rate ${rate} per ${periodMs} ms give no whole-microsecond bucket below 2^53`);
  }
  return { interval, tolerance };
}

/**
 * gcra.lua's one integer r (how far the bucket is ahead of now, in microseconds: r > 0
 * admitted, r < 0 denied with -r - 1 ahead) as {allowed, remaining, retry_after_ms, reset_ms},
 * by the script's own arithmetic on its arguments (tolerance, increment, interval).
 */
export function gcraReply(r: number, tolerance: number, increment: number, interval: number): Reply {
  if (r > 0) return [1, Math.floor((tolerance - r) / interval), 0, Math.ceil(r / 1000)];
  const ahead = -r - 1;
  return [
    0,
    Math.max(0, Math.floor((tolerance - ahead) / interval)),
    increment <= tolerance ? Math.ceil((ahead + increment - tolerance) / 1000) : -1,
    Math.ceil(ahead / 1000),
  ];
}

/** A script's raw reply as a Reply; argv (the key, then gcra's three arguments) decodes gcra's one integer. */
export function toReply(raw: unknown, argv?: readonly (string | number)[]): Reply {
  if (typeof raw === 'number' && argv !== undefined && argv.length === 4) {
    return gcraReply(raw, Number(argv[1]), Number(argv[2]), Number(argv[3]));
  }
  if (!Array.isArray(raw) || raw.length < 2) throw new StoreError('script', 'rate limiter script returned an unexpected reply');
  for (const v of raw) if (typeof v !== 'number') return raw.map((x) => Number(x));
  return raw as number[];
}

export function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

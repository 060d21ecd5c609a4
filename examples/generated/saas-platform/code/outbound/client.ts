// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Outbound rate limiting: one bucket per third-party provider, each a GCRA bucket kept in one
 * of two places, as providers.ts says for the provider (generated for the design; this file is
 * the same for every design):
 * - shared: true: one bucket in Redis (outbound-bucket.lua, at the provider's key), shared by
 *   every instance, so N instances together stay under the rate. Pass an ioredis Redis or
 *   Cluster (any client with evalsha/eval) as options.redis; the constructor throws without one.
 * - shared: false: an in-process bucket, the same GCRA in plain code, kept in this client
 *   object's own Map under the provider's name (PROVIDERS[p].name); no Redis is called for it.
 *   It holds the budget of this one client: make one client per process and share it, and
 *   know that N processes (or N clients) each spend the provider's whole budget.
 * Standalone: no rl-design import.
 *
 * A call through schedule(provider, fn):
 * 1. Circuit: while the provider's circuit is open, OutboundLimitError CIRCUIT_OPEN, fn not called.
 * 2. Reserve: book the next free slot in the provider's bucket: EVALSHA outbound-bucket.lua
 *    (EVAL on NOSCRIPT) for a shared bucket, the in-process bucket otherwise. The answer is how
 *    long to wait; over maxWaitMs nothing is booked and WAIT_TOO_LONG is thrown (queue the
 *    work, or shed it).
 * 3. Wait, then call fn. Its result is returned (or its error rethrown) unchanged.
 * 4. A provider 429 pauses the bucket until its Retry-After (a shared bucket: every instance
 *    stops; an in-process one: this client), restarting without a burst, and counts towards
 *    the circuit, as do 5xx and unreachable provider errors: CIRCUIT.failureThreshold of them
 *    within CIRCUIT.windowMs open it for CIRCUIT.openMs (or the Retry-After, if longer); then
 *    CIRCUIT.halfOpenProbes probe call(s) decide: success closes it, failure opens it again.
 *    The circuit is always kept in this process, per provider.
 *
 * Fail closed (shared buckets): when Redis is unreachable or slower than storeTimeoutMs, the
 * reservation is retried with backoff until maxWaitMs has passed, then STORE_UNAVAILABLE is
 * thrown. fn is never called without a reservation: calling a provider blindly during a store
 * outage risks a ban. An in-process bucket calls no store, so it never throws STORE_UNAVAILABLE.
 *
 * Kill switch and shadow mode: options.mode reads each provider's flag (off | shadow | enforce).
 * Without a mode hook (or when it returns undefined) a provider runs in SHADOW mode, as the
 * middleware does and the rollout asks: reservations are booked and recorded, but no call waits
 * and none is refused. Set the provider's flag to enforce (or options.defaultMode) to limit.
 * Metrics: options.onEvent receives every decision. outboundMetrics(promClient) (at the end of this
 * file) is such a handler: it counts them in Prometheus metrics, ratelimit_throttled_total and
 * ratelimit_store_failures_total (shared with the middleware; it stays at 0 for in-process
 * buckets) and the ratelimit_outbound_* series, which the alert rules read:
 * new OutboundClient({ redis, onEvent: outboundMetrics(promClient) }).
 *
 * Usage:
 *   import { Redis } from 'ioredis';
 *   import { OutboundClient } from './outbound/client.js';
 *   // flags: your feature-flag store; each flag reads off | shadow | enforce
 *   const outbound = new OutboundClient({
 *     redis: new Redis(process.env.RATELIMIT_REDIS_URL!), // leave out when no bucket is shared
 *     mode: (_provider, flag) => (flag ? flags.get(flag) : undefined),
 *   });
 *   const res = await outbound.schedule('provider-name', () => fetch(url, init));
 */
import { CIRCUIT, OUTBOUND_BUCKET_LUA, OUTBOUND_BUCKET_SHA1, PROVIDERS } from './providers.js';
import type { ProviderName } from './providers.js';
import type { CircuitSettings, ProviderLimit } from './types.js';

export type { CircuitSettings, ProviderLimit } from './types.js';
export { CIRCUIT, OUTBOUND_BUCKET_LUA, OUTBOUND_BUCKET_SHA1, PROVIDERS } from './providers.js';
export type { ProviderName } from './providers.js';

export type CircuitState = 'closed' | 'open' | 'half-open';

/**
 * What the client needs from Redis: ioredis's Redis and Cluster both fit. Replies are
 * checked at run time.
 */
export interface ScriptClient {
  evalsha(sha1: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export type OutboundErrorCode = 'WAIT_TOO_LONG' | 'CIRCUIT_OPEN' | 'STORE_UNAVAILABLE' | 'COST_TOO_HIGH' | 'UNKNOWN_PROVIDER';

/**
 * Thrown when the client decides not to call the provider. fn was NOT called: queue the
 * work and try again after retryAfterMs, or shed it.
 */
export class OutboundLimitError extends Error {
  readonly code: OutboundErrorCode;
  readonly provider: string;
  /** When a new attempt can succeed, when known (ms). */
  readonly retryAfterMs: number | undefined;
  /** The store error behind STORE_UNAVAILABLE. */
  readonly storeError: unknown;

  constructor(code: OutboundErrorCode, provider: string, message: string, retryAfterMs?: number, storeError?: unknown) {
    super(message);
    Object.setPrototypeOf(this, OutboundLimitError.prototype);
    this.name = 'OutboundLimitError';
    this.code = code;
    this.provider = provider;
    this.retryAfterMs = retryAfterMs;
    this.storeError = storeError;
  }
}

/** How a finished call went, for the pause and the circuit. */
export type Outcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'throttled'; readonly retryAfterMs?: number }
  | { readonly kind: 'failure' };

export type CallResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export type Classifier = (result: CallResult) => Outcome;

export type OutboundEvent =
  | { readonly type: 'reserved'; readonly provider: string; readonly waitMs: number }
  | { readonly type: 'shadow'; readonly provider: string; readonly waitMs: number }
  | { readonly type: 'provider_429'; readonly provider: string; readonly retryAfterMs: number }
  | { readonly type: 'circuit'; readonly provider: string; readonly state: CircuitState }
  | { readonly type: 'store_failure'; readonly provider: string; readonly error: unknown }
  | { readonly type: 'refused'; readonly provider: string; readonly code: OutboundErrorCode };

/** enforce: wait for a slot; shadow: book and record, never wait or refuse; off: bypass. */
export type Mode = 'enforce' | 'shadow' | 'off';

/**
 * The mode of a provider no mode hook decides: shadow, like the middleware, because the
 * design's rollout starts every rule in shadow. Switch a provider to enforce through its
 * flag (the mode hook) or for the whole client with options.defaultMode.
 */
export const DEFAULT_MODE: Mode = 'shadow';

export interface OutboundClientOptions {
  /** Required when any provider's bucket is shared: an ioredis Redis or Cluster. */
  readonly redis?: ScriptClient;
  /** Longest a call may wait for its slot (default 10 000 ms). */
  readonly maxWaitMs?: number;
  /** A store call slower than this counts as a store failure (default 250 ms). */
  readonly storeTimeoutMs?: number;
  /** Pause after a provider 429 without a usable Retry-After (default 1 000 ms). */
  readonly defaultRetryAfterMs?: number;
  /** Upper bound on any pause a provider asks for (default 1 h). */
  readonly maxPauseMs?: number;
  /** Overrides of the designed circuit settings. */
  readonly circuit?: Partial<CircuitSettings>;
  /** Tells a provider 429 and a failure from success; see defaultClassify. */
  readonly classify?: Classifier;
  /**
   * The kill switch: read the provider's flag (PROVIDERS[p].killSwitchFlag) and return its
   * mode, or undefined to use defaultMode.
   */
  readonly mode?: (provider: ProviderName, flag: string | undefined) => Mode | undefined;
  /** Mode of a provider the mode hook says nothing about (default DEFAULT_MODE: shadow). */
  readonly defaultMode?: Mode;
  /** Metrics and logs hook; exceptions it throws are ignored. */
  readonly onEvent?: (event: OutboundEvent) => void;
}

export interface ScheduleOptions {
  /** Overrides the client's maxWaitMs for this call. */
  readonly maxWaitMs?: number;
  /** Slots this call takes (default 1). */
  readonly cost?: number;
  /** Extra attempts after a provider 429, each waiting out the bucket's pause (default 0). */
  readonly retries?: number;
}

const DEFAULT_MAX_WAIT_MS = 10_000;
const DEFAULT_STORE_TIMEOUT_MS = 250;
const DEFAULT_RETRY_AFTER_MS = 1_000;
const DEFAULT_MAX_PAUSE_MS = 3_600_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function field(value: unknown, name: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
    return (value as Record<string, unknown>)[name];
  }
  return undefined;
}

function statusOf(value: unknown): number | undefined {
  for (const candidate of [
    field(value, 'status'),
    field(value, 'statusCode'),
    field(field(value, 'response'), 'status'),
    field(field(value, 'response'), 'statusCode'),
  ]) {
    if (typeof candidate === 'number') return candidate;
  }
  return undefined;
}

function headerOf(value: unknown, name: string): unknown {
  for (const headers of [field(value, 'headers'), field(field(value, 'response'), 'headers')]) {
    const get = field(headers, 'get');
    if (typeof get === 'function') {
      const v: unknown = get.call(headers, name);
      if (v !== null && v !== undefined) return v;
      continue;
    }
    if (typeof headers === 'object' && headers !== null) {
      for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
    }
  }
  return undefined;
}

/** Retry-After (delta seconds or an HTTP date) in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return Math.ceil(raw * 1000);
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The default classifier. Works with fetch Responses, Node/axios/got style errors and any
 * value with a numeric status (or statusCode, or response.status):
 * 429 is a provider throttle (Retry-After read from the headers); 5xx, or a thrown error
 * with no status (the provider unreachable), is a failure; anything else is ok.
 */
export function defaultClassify(result: CallResult): Outcome {
  const subject = result.ok ? result.value : result.error;
  const status = statusOf(subject);
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headerOf(subject, 'retry-after'));
    return retryAfterMs === undefined ? { kind: 'throttled' } : { kind: 'throttled', retryAfterMs };
  }
  if (status !== undefined && status >= 500) return { kind: 'failure' };
  if (!result.ok && status === undefined) return { kind: 'failure' };
  return { kind: 'ok' };
}

function isNoScript(error: unknown): boolean {
  const message = field(error, 'message');
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  promise.catch(() => undefined);
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('limiter store timeout after ' + ms + ' ms')), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Per-provider circuit, in this process: closed -> open -> half-open -> closed or open. */
class Circuit {
  state: CircuitState = 'closed';
  private failures: number[] = [];
  private openUntil = 0;
  private probes = 0;

  constructor(
    private readonly settings: CircuitSettings,
    private readonly changed: (state: CircuitState) => void,
  ) {}

  /** 'pass', 'probe', or the ms until a call may be tried again. */
  enter(now: number): 'pass' | 'probe' | number {
    if (this.state === 'open') {
      if (now < this.openUntil) return this.openUntil - now;
      this.move('half-open');
      this.probes = 0;
    }
    if (this.state === 'half-open') {
      if (this.probes >= this.settings.halfOpenProbes) return Math.max(1, Math.min(1000, this.settings.openMs));
      this.probes++;
      return 'probe';
    }
    return 'pass';
  }

  /** A probe that never reached the provider gives its place back. */
  release(probe: boolean): void {
    if (probe && this.state === 'half-open' && this.probes > 0) this.probes--;
  }

  success(probe: boolean): void {
    if (this.state === 'half-open' && probe) {
      this.failures = [];
      this.move('closed');
    }
  }

  failure(now: number, probe: boolean, retryAfterMs: number): void {
    if (this.state === 'half-open') {
      if (probe) this.open(now, retryAfterMs);
      return;
    }
    if (this.state === 'open') return;
    this.failures = this.failures.filter((t) => now - t < this.settings.windowMs);
    this.failures.push(now);
    if (this.failures.length >= this.settings.failureThreshold) this.open(now, retryAfterMs);
  }

  private open(now: number, retryAfterMs: number): void {
    this.openUntil = now + Math.max(this.settings.openMs, retryAfterMs);
    this.failures = [];
    this.move('open');
  }

  private move(state: CircuitState): void {
    if (this.state === state) return;
    this.state = state;
    this.changed(state);
  }
}

/**
 * What a client enforces: the design's providers, circuit and bucket script. Every client
 * reads providers.ts, unless it is handed other data (rl-design verify runs this client on
 * its test buckets that way).
 */
export interface OutboundData {
  readonly providers: Readonly<Record<string, ProviderLimit>>;
  readonly circuit: CircuitSettings;
  readonly script: { readonly sha1: string; readonly source: string };
}

function hasProvider(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

const DESIGNED: OutboundData = {
  providers: PROVIDERS,
  circuit: CIRCUIT,
  script: { sha1: OUTBOUND_BUCKET_SHA1, source: OUTBOUND_BUCKET_LUA },
};

/**
 * Schedules calls to third-party APIs through their providers' buckets. Make one per process
 * and share it: its in-process buckets are its own; every instance of the service uses the
 * same Redis for the shared ones.
 */
export class OutboundClient {
  private readonly circuits = new Map<string, Circuit>();
  /**
   * In-process buckets (providers with shared: false), by provider name: theoretical arrival time,
   * ms. An entry is never deleted (no TTL): one per provider at most, kept while this client
   * lives; a stale one (in the past) reads as a full bucket, as an absent one would.
   */
  private readonly local = new Map<string, number>();
  private readonly circuitSettings: CircuitSettings;

  constructor(
    private readonly options: OutboundClientOptions = {},
    private readonly data: OutboundData = DESIGNED,
  ) {
    this.circuitSettings = { ...data.circuit, ...(options.circuit ?? {}) };
    for (const limit of Object.values(data.providers)) {
      if (limit.shared && !options.redis) {
        throw new Error('OutboundClient: provider ' + JSON.stringify(limit.name) + ' uses a shared bucket; pass options.redis');
      }
    }
  }

  /** The circuit state for a provider in this process. */
  circuitState(provider: ProviderName): CircuitState {
    return this.circuit(provider).state;
  }

  /**
   * Calls fn once the provider's bucket has a slot for it. Returns what fn returns (or throws
   * what it throws), after recording a provider 429 (a pause of the bucket) or failure
   * (circuit). Throws OutboundLimitError, without calling fn, when the wait would pass
   * maxWaitMs, the circuit is open, or a shared bucket's store cannot be reached in time
   * (fail closed).
   */
  async schedule<T>(provider: ProviderName, fn: () => T | Promise<T>, options: ScheduleOptions = {}): Promise<T> {
    const limit = Object.hasOwn(this.data.providers, provider) ? this.data.providers[provider] : undefined;
    if (limit === undefined) {
      throw new OutboundLimitError('UNKNOWN_PROVIDER', String(provider), 'unknown provider ' + JSON.stringify(provider));
    }
    const asked = this.options.mode?.(provider, limit.killSwitchFlag);
    const mode: Mode = asked === 'enforce' || asked === 'shadow' || asked === 'off' ? asked : (this.options.defaultMode ?? DEFAULT_MODE);
    if (mode === 'off') return await fn();
    const maxWaitMs = Math.max(0, options.maxWaitMs ?? this.options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
    const cost = Math.max(1, Math.ceil(options.cost ?? 1));
    const deadline = Date.now() + maxWaitMs;
    const circuit = this.circuit(provider);
    let retries = Math.max(0, options.retries ?? 0);
    for (;;) {
      const entry = circuit.enter(Date.now());
      if (typeof entry === 'number' && mode === 'enforce') {
        this.emit({ type: 'refused', provider, code: 'CIRCUIT_OPEN' });
        throw new OutboundLimitError('CIRCUIT_OPEN', provider, 'circuit for ' + provider + ' is open', entry);
      }
      const probe = entry === 'probe';
      try {
        if (mode === 'shadow') await this.shadowReserve(limit, cost);
        else {
          const waitMs = await this.reserve(limit, cost, deadline);
          if (waitMs > 0) await sleep(waitMs);
        }
      } catch (error) {
        circuit.release(probe);
        throw error;
      }
      let result: CallResult;
      try {
        result = { ok: true, value: await fn() };
      } catch (error) {
        result = { ok: false, error };
      }
      const outcome = (this.options.classify ?? defaultClassify)(result);
      if (outcome.kind === 'throttled') {
        const maxPause = this.options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
        const pauseMs = Math.min(
          maxPause,
          Math.max(0, Math.ceil(outcome.retryAfterMs ?? this.options.defaultRetryAfterMs ?? DEFAULT_RETRY_AFTER_MS)),
        );
        this.emit({ type: 'provider_429', provider, retryAfterMs: pauseMs });
        await this.pause(limit, pauseMs);
        circuit.failure(Date.now(), probe, pauseMs);
        if (retries > 0 && mode === 'enforce' && circuit.state === 'closed') {
          retries--;
          continue;
        }
      } else if (outcome.kind === 'failure') {
        circuit.failure(Date.now(), probe, 0);
      } else {
        circuit.success(probe);
      }
      if (result.ok) return result.value as T;
      throw result.error;
    }
  }

  private circuit(provider: string): Circuit {
    let circuit = this.circuits.get(provider);
    if (!circuit) {
      circuit = new Circuit(this.circuitSettings, (state) => this.emit({ type: 'circuit', provider, state }));
      this.circuits.set(provider, circuit);
    }
    return circuit;
  }

  /** Books a slot and returns the ms to wait for it; fails closed. */
  private async reserve(limit: ProviderLimit, cost: number, deadline: number): Promise<number> {
    let backoff = 25;
    for (;;) {
      const budget = Math.max(0, deadline - Date.now());
      let reply: number[];
      try {
        reply = limit.shared
          ? await this.script(limit, ['reserve', limit.burst, limit.rate, limit.periodMs, cost, Math.floor(budget)])
          : this.localReserve(limit, cost, budget);
      } catch (error) {
        this.emit({ type: 'store_failure', provider: limit.name, error });
        const left = deadline - Date.now();
        if (left <= 0) {
          this.emit({ type: 'refused', provider: limit.name, code: 'STORE_UNAVAILABLE' });
          throw new OutboundLimitError(
            'STORE_UNAVAILABLE',
            limit.name,
            'limiter store unavailable: not calling ' + limit.name + ' without a reservation',
            undefined,
            error,
          );
        }
        await sleep(Math.min(backoff, left));
        backoff = Math.min(backoff * 2, 1000);
        continue;
      }
      const reserved = reply[0];
      const wait = reply[1] ?? 0;
      if (reserved === 1) {
        this.emit({ type: 'reserved', provider: limit.name, waitMs: wait });
        return wait;
      }
      if (wait < 0) {
        this.emit({ type: 'refused', provider: limit.name, code: 'COST_TOO_HIGH' });
        throw new OutboundLimitError('COST_TOO_HIGH', limit.name, 'cost ' + cost + ' exceeds the burst of ' + limit.burst);
      }
      this.emit({ type: 'refused', provider: limit.name, code: 'WAIT_TOO_LONG' });
      throw new OutboundLimitError(
        'WAIT_TOO_LONG',
        limit.name,
        'next slot for ' + limit.name + ' in ' + wait + ' ms, over the ' + Math.floor(budget) + ' ms allowed',
        wait,
      );
    }
  }

  /** Shadow mode: book a slot if one is free now, record the wait it would have taken. */
  private async shadowReserve(limit: ProviderLimit, cost: number): Promise<void> {
    try {
      const reply = limit.shared
        ? await this.script(limit, ['reserve', limit.burst, limit.rate, limit.periodMs, cost, 0])
        : this.localReserve(limit, cost, 0);
      if (reply[0] !== 1) this.emit({ type: 'shadow', provider: limit.name, waitMs: reply[1] ?? 0 });
    } catch (error) {
      this.emit({ type: 'store_failure', provider: limit.name, error });
    }
  }

  /** Pauses the provider's bucket: for every instance when shared (best effort: the circuit still opens). */
  private async pause(limit: ProviderLimit, pauseMs: number): Promise<void> {
    try {
      if (limit.shared) await this.script(limit, ['pause', limit.burst, limit.rate, limit.periodMs, pauseMs]);
      else this.localPause(limit, pauseMs);
    } catch (error) {
      this.emit({ type: 'store_failure', provider: limit.name, error });
    }
  }

  /** EVALSHA outbound-bucket.lua, loading it with EVAL on NOSCRIPT, within storeTimeoutMs. */
  private async script(limit: ProviderLimit, args: (string | number)[]): Promise<number[]> {
    const redis = this.options.redis;
    if (!redis) throw new Error('no Redis client');
    const call = async (): Promise<unknown> => {
      try {
        return await redis.evalsha(this.data.script.sha1, 1, limit.key, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return await redis.eval(this.data.script.source, 1, limit.key, ...args);
      }
    };
    const reply = await withTimeout(call(), this.options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS);
    if (!Array.isArray(reply) || reply.length < 2) throw new Error('unexpected reply from outbound-bucket.lua');
    return reply.map((v) => Number(v));
  }

  /** The same GCRA as outbound-bucket.lua, for a bucket kept in this process. */
  private localReserve(limit: ProviderLimit, cost: number, maxWaitMs: number): number[] {
    const interval = limit.periodMs / limit.rate;
    const tolerance = limit.burst * interval;
    const now = Date.now();
    const tat = Math.max(this.local.get(limit.name) ?? 0, now);
    if (cost > limit.burst) return [0, -1];
    const next = tat + cost * interval;
    const wait = Math.max(0, Math.ceil(next - tolerance - now));
    if (wait > maxWaitMs) return [0, wait];
    this.local.set(limit.name, next);
    return [1, wait];
  }

  private localPause(limit: ProviderLimit, pauseMs: number): void {
    const interval = limit.periodMs / limit.rate;
    const now = Date.now();
    const paused = now + pauseMs + limit.burst * interval - interval;
    if (paused > (this.local.get(limit.name) ?? 0)) this.local.set(limit.name, paused);
  }

  private emit(event: OutboundEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // a metrics hook must never break a call
    }
  }
}

// ---------------------------------------------------------------------------- metrics

/** The labels of one series. */
export type MetricLabels = Record<string, string>;

/**
 * What outboundMetrics needs of prom-client (its module fits: import * as promClient from
 * 'prom-client'); R is its Registry.
 */
export interface PromClientLike<R extends RegistryLike> {
  readonly Counter: new (config: { name: string; help: string; labelNames: string[]; registers: R[] }) => CounterLike;
  readonly Gauge: new (config: { name: string; help: string; labelNames: string[]; registers: R[] }) => GaugeLike;
  readonly Histogram: new (config: {
    name: string;
    help: string;
    labelNames: string[];
    buckets: number[];
    registers: R[];
  }) => HistogramLike;
  readonly register: R;
}

export interface RegistryLike {
  getSingleMetric(name: string): unknown;
}

export interface CounterLike {
  inc(labels: MetricLabels, value?: number): void;
}

export interface GaugeLike {
  set(labels: MetricLabels, value: number): void;
}

export interface HistogramLike {
  observe(labels: MetricLabels, value: number): void;
  zero?(labels: MetricLabels): void;
}

/**
 * The metric names of the design's monitoring section. The first two are shared with the
 * middleware: on one registry both count into the same counters (whichever registers first).
 */
export const OUTBOUND_METRIC_NAMES = {
  throttled: 'ratelimit_throttled_total',
  storeFailures: 'ratelimit_store_failures_total',
  wait: 'ratelimit_outbound_wait_ms',
  provider429: 'ratelimit_outbound_provider_429_total',
  circuitOpen: 'ratelimit_outbound_circuit_open',
} as const;

const WAIT_BUCKETS_MS = [1, 5, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

function metricOf<T>(registry: RegistryLike, name: string, make: () => T): T {
  const existing = registry.getSingleMetric(name);
  return existing ? (existing as T) : make();
}

function storeFailureReason(error: unknown): 'timeout' | 'connection' | 'script' {
  const message = field(error, 'message');
  const text = typeof message === 'string' ? message : String(error);
  if (/timeout/i.test(text)) return 'timeout';
  if (/^(?:ERR|NOSCRIPT|WRONGTYPE)|unexpected reply/.test(text)) return 'script';
  return 'connection';
}

/**
 * The outbound client's events as the design's Prometheus metrics: pass the result as
 * options.onEvent (call it from your own handler if you have one).
 *
 *   import * as promClient from 'prom-client';
 *   const outbound = new OutboundClient({ redis, onEvent: outboundMetrics(promClient) });
 *
 * - ratelimit_throttled_total{rule, mode}: calls the provider's bucket held back. mode=enforce:
 *   a call that had to wait for its slot, or was refused because the wait was too long or its
 *   cost too high; mode=shadow: a call that would have had to wait. (Circuit and store
 *   refusals are not throttling: see the circuit gauge and the store failures.)
 * - ratelimit_store_failures_total{rule, reason}: failed calls to the shared bucket in Redis.
 * - ratelimit_outbound_wait_ms{provider}: how long calls waited for their slot.
 * - ratelimit_outbound_provider_429_total{provider}: 429s from the provider despite the bucket.
 * - ratelimit_outbound_circuit_open{provider}: 1 while the provider's circuit is open.
 *
 * Every series of every provider exists at 0 from the start, so a first event is an increase
 * that rate() and increase() see; the labels come from PROVIDERS only.
 */
export function outboundMetrics<R extends RegistryLike>(
  prom: PromClientLike<R>,
  registry: R = prom.register,
): (event: OutboundEvent) => void {
  const names = OUTBOUND_METRIC_NAMES;
  const throttled = metricOf<CounterLike>(
    registry,
    names.throttled,
    () =>
      new prom.Counter({
        name: names.throttled,
        help: 'Requests rejected (mode=enforce) or that would have been (mode=shadow); outbound: calls the bucket made wait or refused.',
        labelNames: ['rule', 'mode'],
        registers: [registry],
      }),
  );
  const failures = metricOf<CounterLike>(
    registry,
    names.storeFailures,
    () =>
      new prom.Counter({
        name: names.storeFailures,
        help: 'Limiter calls that failed (timeout, connection, script error).',
        labelNames: ['rule', 'reason'],
        registers: [registry],
      }),
  );
  const wait = metricOf<HistogramLike>(
    registry,
    names.wait,
    () =>
      new prom.Histogram({
        name: names.wait,
        help: "Time outbound calls waited for a slot in their provider's bucket.",
        labelNames: ['provider'],
        buckets: WAIT_BUCKETS_MS,
        registers: [registry],
      }),
  );
  const provider429 = metricOf<CounterLike>(
    registry,
    names.provider429,
    () =>
      new prom.Counter({
        name: names.provider429,
        help: '429 responses received from a provider despite the bucket.',
        labelNames: ['provider'],
        registers: [registry],
      }),
  );
  const circuitOpen = metricOf<GaugeLike>(
    registry,
    names.circuitOpen,
    () =>
      new prom.Gauge({
        name: names.circuitOpen,
        help: '1 while the circuit for a provider is open.',
        labelNames: ['provider'],
        registers: [registry],
      }),
  );
  const ruleOf = (provider: string): string | undefined =>
    hasProvider(provider) ? (PROVIDERS[provider] as ProviderLimit).ruleId : undefined;
  for (const limit of Object.values(PROVIDERS) as ProviderLimit[]) {
    const provider = { provider: limit.name };
    throttled.inc({ rule: limit.ruleId, mode: 'enforce' }, 0);
    throttled.inc({ rule: limit.ruleId, mode: 'shadow' }, 0);
    for (const reason of ['timeout', 'connection', 'script']) failures.inc({ rule: limit.ruleId, reason }, 0);
    provider429.inc(provider, 0);
    circuitOpen.set(provider, 0);
    wait.zero?.(provider);
  }
  return (event) => {
    const rule = ruleOf(event.provider);
    if (rule === undefined) return;
    const provider = { provider: event.provider };
    switch (event.type) {
      case 'reserved':
        wait.observe(provider, event.waitMs);
        if (event.waitMs > 0) throttled.inc({ rule, mode: 'enforce' }, 1);
        break;
      case 'shadow':
        throttled.inc({ rule, mode: 'shadow' }, 1);
        break;
      case 'refused':
        if (event.code === 'WAIT_TOO_LONG' || event.code === 'COST_TOO_HIGH') throttled.inc({ rule, mode: 'enforce' }, 1);
        break;
      case 'provider_429':
        provider429.inc(provider, 1);
        break;
      case 'circuit':
        circuitOpen.set(provider, event.state === 'open' ? 1 : 0);
        break;
      case 'store_failure':
        failures.inc({ rule, reason: storeFailureReason(event.error) }, 1);
        break;
    }
  };
}

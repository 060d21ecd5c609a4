/**
 * The store verify runs against: the connections (a Redis or a Redis Cluster client), the
 * facts read on connect, the key housekeeping, a deadline on every step, connection errors in
 * words (refused, unknown host, auth, TLS, no reply, no such database), and the loss of the
 * server outside a planned outage.
 */
import { performance } from 'node:perf_hooks';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { readServerFacts, type ServerFacts } from './info.js';
import type { SpawnedRedis } from './server.js';
import type { RedisTarget } from './url.js';

function baseOptions(target: RedisTarget): RedisOptions {
  return {
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
  };
}

/** A connection the scripts run on: a Redis or a Redis Cluster client. */
export type ScriptClient = Redis | Cluster;

/** The open store: connections, the facts read on connect, and the key housekeeping verify needs. */
export interface Store {
  readonly facts: ServerFacts;
  /** Where it is, for printing (no password). */
  readonly address: string;
  /** Present when rl-design started the server: only then may it be stopped mid-run. */
  readonly spawned?: SpawnedRedis;
  /** The main connection. */
  readonly main: ScriptClient;
  /** Separate connections, so concurrent calls really arrive on different sockets. */
  readonly pool: readonly ScriptClient[];
  /** Redis server time in ms (TIME). */
  time(): Promise<number>;
  pttl(key: string): Promise<number>;
  /** Every key matching a SCAN pattern (on every master of a cluster). Never KEYS. */
  scan(match: string): Promise<string[]>;
  /** UNLINKs the keys (one slot at a time on a cluster); returns how many existed. */
  unlink(keys: readonly string[]): Promise<number>;
  /** SCRIPT LOAD on every node; returns the SHA1 each node answered. */
  scriptLoad(source: string): Promise<string[]>;
  /** Resolves when every connection is ready again (after a restart). */
  waitReady(timeoutMs: number): Promise<void>;
  /** Why a connection dropped outside a planned outage, if one did. */
  lost(): string | undefined;
  /** Calls `listener` once, when a connection drops (or the server stops answering, `stalled`) outside a planned outage. */
  onLoss(listener: (reason: string, stalled: boolean) => void): void;
  close(): Promise<void>;
}

/** What went wrong when connecting, as verify tells the user. */
export type ConnectProblem = 'refused' | 'unknown-host' | 'auth' | 'tls' | 'timeout' | 'no-database' | 'other';

/** Connection failures verify reports as bad input (exit 2). The reason never holds the password. */
export class RedisConnectError extends Error {
  constructor(
    readonly address: string,
    reason: string,
    readonly kind: ConnectProblem = 'other',
  ) {
    super(reason);
    this.name = 'RedisConnectError';
  }
}

export interface OpenOptions {
  /** Connections in the pool for concurrent calls (default 4). */
  poolSize?: number;
  /** Per-command timeout of every connection, ms (default 5000). */
  commandTimeoutMs?: number;
  /** The whole connect (TCP, TLS, AUTH, SELECT, INFO, the pool), ms (default 10000). */
  connectTimeoutMs?: number;
}

/** Takes the password (and its URL-encoded form) out of a text. */
function scrub(text: string, target: RedisTarget): string {
  let out = text;
  for (const secret of [target.password, target.password ? encodeURIComponent(target.password) : undefined]) {
    if (secret && secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}

/** A connection error in words, by what went wrong. */
export function describeConnectError(e: unknown, target: RedisTarget): { kind: ConnectProblem; reason: string } {
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  const message = scrub(String(err?.message ?? e), target);
  const where = `${target.host}:${target.port}`;
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message))
    return { kind: 'refused', reason: `connection refused: nothing is listening on ${where}` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || /ENOTFOUND|EAI_AGAIN/.test(message)) {
    return { kind: 'unknown-host', reason: `unknown host "${target.host}": the name does not resolve` };
  }
  if (/NOAUTH/.test(message))
    return {
      kind: 'auth',
      reason: 'authentication required: the server wants a password; put it in the URL (redis://:PASSWORD@host:port)',
    };
  if (/WRONGPASS|invalid password|invalid username-password|AUTH failed|called without any password configured|ERR AUTH/i.test(message)) {
    return { kind: 'auth', reason: 'authentication failed: the server refused the user name or password' };
  }
  if (
    /^ERR_SSL|^ERR_TLS|EPROTO|CERT|UNABLE_TO_|SELF_SIGNED/.test(code) ||
    /SSL|TLS|certificate|wrong version number|self[- ]signed/i.test(message)
  ) {
    return {
      kind: 'tls',
      reason: `TLS failed: ${message}${target.tls ? ' (rediss:// needs a server that speaks TLS; use redis:// for a plain one)' : ''}`,
    };
  }
  if (target.tls && (code === 'ECONNRESET' || /ECONNRESET|socket disconnected before secure/i.test(message))) {
    return {
      kind: 'tls',
      reason: 'TLS failed: the server closed the connection during the TLS handshake (does it speak TLS? use redis:// for a plain server)',
    };
  }
  if (target.tls && /connect ETIMEDOUT/.test(message)) {
    return { kind: 'tls', reason: 'TLS failed: no TLS handshake from the server (does it speak TLS? use redis:// for a plain server)' };
  }
  if (code === 'ETIMEDOUT' || /timed? ?out/i.test(message)) return { kind: 'timeout', reason: message };
  return { kind: 'other', reason: message };
}

/** Rejects with `message` when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function waitFor(client: ScriptClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(Object.assign(new Error(`not ready after ${timeoutMs} ms (status ${client.status})`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/**
 * Connects to the target, reads the server facts, and opens the limiter connections (Redis
 * Cluster clients when the server runs in cluster mode). The limiter connections never queue
 * commands while disconnected and never retry a command: during an outage a call fails at
 * once, and the limiter applies the rule's fail mode. Every step has a deadline: a server
 * that accepts the connection and never answers is a timeout, not a hang.
 */
export async function openStore(target: RedisTarget, spawned?: SpawnedRedis, options: OpenOptions = {}): Promise<Store> {
  const commandTimeout = options.commandTimeoutMs ?? 5000;
  const connectTimeout = options.connectTimeoutMs ?? 10_000;
  const fail = (e: unknown): never => {
    const { kind, reason } = describeConnectError(e, target);
    throw new RedisConnectError(target.display, reason, kind);
  };
  const probe = new Redis({
    ...baseOptions(target),
    db: 0,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    retryStrategy: () => null,
    connectTimeout: Math.min(5000, connectTimeout),
    commandTimeout,
  });
  let lastError: Error | undefined;
  probe.on('error', (e: Error) => (lastError ??= e));
  let facts: ServerFacts;
  try {
    facts = await withTimeout(
      (async () => {
        await probe.connect();
        try {
          await probe.ping();
        } catch (e) {
          if (/timed? ?out/i.test((e as Error).message)) {
            throw Object.assign(
              new Error(`connected, but no reply within ${commandTimeout} ms: is it a Redis server? (a TLS server needs rediss://)`),
              { code: 'ETIMEDOUT' },
            );
          }
          throw e;
        }
        const read = await readServerFacts(probe);
        if (target.db !== 0) {
          if (read.clusterEnabled)
            throw Object.assign(new Error(`a Redis Cluster has only database 0, and the URL names database ${target.db}`), {
              code: 'ENODB',
            });
          try {
            await probe.select(target.db);
          } catch (e) {
            if (!/out of range|invalid DB index/i.test((e as Error).message)) throw e;
            let count: string | undefined;
            try {
              count = ((await probe.config('GET', 'databases')) as string[])[1];
            } catch {
              // CONFIG disabled
            }
            throw Object.assign(
              new Error(`the server has no database ${target.db}${count ? ` (it has ${count}: 0 to ${Number(count) - 1})` : ''}`),
              { code: 'ENODB' },
            );
          }
        }
        return read;
      })(),
      connectTimeout,
      `no answer within ${connectTimeout} ms`,
    );
  } catch (e) {
    probe.disconnect();
    if ((e as NodeJS.ErrnoException).code === 'ENODB') throw new RedisConnectError(target.display, (e as Error).message, 'no-database');
    // "Connection is closed." hides the reason; the client's own error event has it.
    const cause = /Connection is closed|Stream isn't writeable/i.test((e as Error).message) && lastError ? lastError : e;
    if (/^Command timed out/.test((cause as Error).message)) {
      throw new RedisConnectError(
        target.display,
        `connected, but no reply within ${commandTimeout} ms: is it a Redis server?${target.tls ? '' : ' (a TLS server needs rediss://)'}`,
        'timeout',
      );
    }
    return fail(cause);
  }
  probe.disconnect();

  let closing = false;
  let lost: string | undefined;
  const lossListeners: Array<(reason: string, stalled: boolean) => void> = [];
  const planned = (): boolean => !!spawned && (!spawned.running || performance.now() - spawned.upSince < 1000);
  const lose = (reason: string, stalled: boolean): void => {
    if (closing || lost !== undefined || planned()) return;
    lost = reason;
    for (const listener of lossListeners) listener(reason, stalled);
  };
  let lastClientError: Error | undefined;
  const make = (): ScriptClient => {
    const client: ScriptClient = facts.clusterEnabled
      ? new Cluster([{ host: target.host, port: target.port }], {
          enableOfflineQueue: false,
          clusterRetryStrategy: () => 100,
          redisOptions: { ...baseOptions(target), db: 0, maxRetriesPerRequest: 0, commandTimeout, connectTimeout: 5000 },
        })
      : new Redis({
          ...baseOptions(target),
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          commandTimeout,
          connectTimeout: 5000,
          retryStrategy: () => 50,
        });
    // Connection errors during an outage are expected; the limiter reports them per call.
    client.on('error', (e: Error) => (lastClientError = e));
    // A connection that drops outside a planned outage (the server died, restarted, or the
    // network went) makes the run's results meaningless: recorded once, for verify to report.
    client.on('close', () =>
      lose(lastClientError ? describeConnectError(lastClientError, target).reason : 'the server closed the connection', false),
    );
    return client;
  };
  const main = make();
  const pool = Array.from({ length: options.poolSize ?? 4 }, make);
  const all = [main, ...pool];
  try {
    await Promise.all(all.map((c) => waitFor(c, connectTimeout)));
  } catch (e) {
    closing = true;
    all.forEach((c) => c.disconnect());
    fail(lastClientError ?? e);
  }

  // A heartbeat: a server that keeps the connection open but stops answering (stopped, swapping,
  // a network that drops packets) would make every call wait for its timeout; one PING a second
  // notices it within a few seconds instead.
  const beatTimeout = Math.min(commandTimeout, 3000);
  const beat = facts.clusterEnabled
    ? undefined
    : new Redis({
        ...baseOptions(target),
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: beatTimeout,
        connectTimeout: 5000,
        retryStrategy: () => 200,
      });
  beat?.on('error', () => undefined);
  let beating = false;
  const heartbeat = setInterval(() => {
    if (!beat || beating || beat.status !== 'ready') return;
    beating = true;
    beat
      .ping()
      .catch((e: Error) => {
        if (/timed out/i.test(e.message)) lose(`the server stopped answering: no reply to PING within ${beatTimeout} ms`, true);
      })
      .finally(() => (beating = false));
  }, 1000);
  heartbeat.unref();

  const masters = (): Redis[] => (main instanceof Cluster ? main.nodes('master') : [main]);
  return {
    facts,
    address: target.display,
    ...(spawned ? { spawned } : {}),
    main,
    pool,
    async time() {
      const [sec, usec] = (await main.time()) as [string | number, string | number];
      return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    },
    pttl: (key) => main.pttl(key),
    async scan(match) {
      const found = new Set<string>();
      for (const node of masters()) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
          cursor = next;
          for (const k of keys) found.add(k);
        } while (cursor !== '0');
      }
      return [...found];
    },
    async unlink(keys) {
      let removed = 0;
      if (main instanceof Cluster) {
        for (const k of keys) removed += await main.unlink(k);
        return removed;
      }
      for (let i = 0; i < keys.length; i += 500) removed += await main.unlink(...keys.slice(i, i + 500));
      return removed;
    },
    async scriptLoad(source) {
      return Promise.all(masters().map(async (n) => String(await n.script('LOAD', source))));
    },
    async waitReady(timeoutMs) {
      await Promise.all(all.map((c) => waitFor(c, timeoutMs)));
    },
    lost: () => lost,
    onLoss(listener) {
      lossListeners.push(listener);
    },
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(heartbeat);
      beat?.disconnect();
      // QUIT waits for a reply; a server that went away gets a disconnect instead.
      await Promise.all(all.map((c) => withTimeout(c.quit(), 1000, 'quit').catch(() => c.disconnect())));
    },
  };
}

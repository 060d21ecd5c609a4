/**
 * The Redis that verify runs against: either a server the user names with --redis (used as
 * it is: nothing but keys under the run's own prefix is ever written or deleted), or a
 * `redis-server` from PATH that rl-design starts on a free loopback port, in a fresh temporary
 * directory with persistence off, and stops afterwards. Only a server started here is ever
 * stopped (the store-outage scenario stops and restarts it mid-run).
 *
 * The integration tests start their servers with the same code (test/helpers/redis.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { Cluster, Redis, type RedisOptions } from 'ioredis';

export const LOOPBACK = '127.0.0.1';

/** `redis-server` is not on PATH. */
export class RedisServerMissingError extends Error {
  constructor(readonly command: string) {
    super(`${command} was not found on PATH`);
    this.name = 'RedisServerMissingError';
  }
}

/** `redis-server` started but did not come up (bad arguments, port taken...). */
export class RedisServerStartError extends Error {
  constructor(message: string, readonly output: string) {
    super(message);
    this.name = 'RedisServerStartError';
  }
}

/** A TCP port free on loopback right now (the OS picks it). */
export async function freePort(host = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a raw reply (simple string, error, integer or bulk string) has fully arrived. */
function complete(reply: string): boolean {
  const eol = reply.indexOf('\r\n');
  if (eol < 0) return false;
  if (!reply.startsWith('$')) return true;
  const length = Number(reply.slice(1, eol));
  return length < 0 || Buffer.byteLength(reply) >= eol + 2 + length + 2;
}

/** Sends one inline command over a raw socket and returns the raw reply (no client library). */
export function rawCommand(port: number, command: string, timeoutMs = 1000, host = LOOPBACK): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    let reply = '';
    const done = (error?: Error): void => {
      socket.destroy();
      if (error) reject(error);
      else resolve(reply);
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`timeout waiting for "${command}"`)));
    socket.on('error', done);
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (complete(reply)) done();
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Process {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<void>;
  spawnError?: Error;
}

function spawnProcess(command: string, args: string[], cwd: string): Process {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const proc: Process = {
    child,
    output: () => output,
    exited: new Promise<void>((resolve) => child.once('close', () => resolve())),
  };
  child.once('error', (e) => (proc.spawnError = e));
  return proc;
}

async function waitForPing(port: number, proc: Process, command: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.spawnError) {
      if ((proc.spawnError as NodeJS.ErrnoException).code === 'ENOENT') throw new RedisServerMissingError(command);
      throw new RedisServerStartError(`${command} failed to start: ${proc.spawnError.message}`, proc.output());
    }
    if (proc.child.exitCode !== null) {
      throw new RedisServerStartError(`${command} exited with code ${proc.child.exitCode}`, proc.output());
    }
    try {
      // A server with a password answers -NOAUTH: it is up all the same.
      if (/^(\+PONG|-NOAUTH)/.test(await rawCommand(port, 'PING', 500))) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new RedisServerStartError(`${command} on port ${port} did not answer PING`, proc.output());
    await sleep(20);
  }
}

async function killProcess(proc: Process): Promise<void> {
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null || proc.spawnError) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await proc.exited;
  clearTimeout(timer);
}

export interface StartOptions {
  /** Extra redis-server arguments, after the defaults (a later option wins). */
  args?: string[];
  /** The executable (default `redis-server`, looked up on PATH). */
  command?: string;
  /** Port (default: a free one). */
  port?: number;
}

/** A redis-server this process started. */
export interface SpawnedRedis {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Its temporary working directory (removed by stop()). */
  readonly dir: string;
  /** Whether the process is up (false between halt() and restart()). */
  readonly running: boolean;
  /** When it last came up (performance.now()): connections drop around a planned outage, not after. */
  readonly upSince: number;
  /** Stops the process but keeps its port and directory: a store outage. */
  halt(): Promise<void>;
  /** Starts it again on the same port (after halt()), and waits until it answers PING. */
  restart(): Promise<void>;
  /** Stops it for good and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
  /** At once, synchronously (a signal handler, process exit): SIGKILL and remove its directory. */
  killNow(): void;
}

/** The arguments rl-design starts redis-server with: loopback only, no persistence, noeviction. */
export function serverArgs(port: number, dir: string, extra: readonly string[] = []): string[] {
  return [
    '--port', String(port),
    '--bind', LOOPBACK,
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--daemonize', 'no',
    '--maxmemory-policy', 'noeviction',
    ...extra,
  ];
}

/**
 * Starts `redis-server` from PATH on a free loopback port in a fresh temporary directory.
 * Throws RedisServerMissingError when there is none, RedisServerStartError when it does not
 * come up.
 */
export async function startRedisServer(options: StartOptions = {}): Promise<SpawnedRedis> {
  const command = options.command ?? 'redis-server';
  const dir = mkdtempSync(join(tmpdir(), 'rl-verify-redis-'));
  const port = options.port ?? (await freePort());
  const args = serverArgs(port, dir, options.args);
  let proc = spawnProcess(command, args, dir);
  let running = true;
  const killNow = (): void => {
    running = false;
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // However this process ends, its redis-server does not outlive it.
  process.once('exit', killNow);
  try {
    await waitForPing(port, proc, command);
  } catch (error) {
    await killProcess(proc);
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', killNow);
    throw error;
  }
  let stopped: Promise<void> | undefined;
  // No grace at the start: only reconnections right after a planned restart are expected.
  let upSince = Number.NEGATIVE_INFINITY;
  return {
    host: LOOPBACK,
    port,
    url: `redis://${LOOPBACK}:${port}`,
    dir,
    get running() {
      return running;
    },
    get upSince() {
      return upSince;
    },
    async halt() {
      running = false;
      await killProcess(proc);
    },
    async restart() {
      if (stopped) throw new Error('redis-server was stopped for good');
      await killProcess(proc);
      proc = spawnProcess(command, args, dir);
      await waitForPing(port, proc, command);
      upSince = performance.now();
      running = true;
    },
    stop: () =>
      (stopped ??= (async () => {
        running = false;
        await killProcess(proc);
        rmSync(dir, { recursive: true, force: true });
        process.off('exit', killNow);
      })()),
    killNow,
  };
}

/** The parts of a redis:// or rediss:// URL a client needs. */
export interface RedisTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
  /** The URL with any password replaced by ***, for printing. */
  display: string;
}

/**
 * A URL as it may be printed: the password (everything between `//` and the last `@` after
 * a `:`) replaced by ***, so an error about a URL that does not parse never shows it.
 */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/]*)@/i, (_, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return `${scheme}${colon >= 0 ? `${auth.slice(0, colon)}:***` : auth}@`;
  });
}

/** Parses a Redis URL; returns an error text (never holding the password) for anything else. */
export function parseRedisUrl(url: string): RedisTarget | { error: string } {
  const shown = maskUrl(url).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: `"${shown}" is not a URL; use redis://[user:password@]host:port[/db] (percent-encode @ : / # ? in a password)` };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    return { error: `"${u.protocol}" is not a Redis URL scheme; use redis:// or rediss://` };
  }
  if (u.hash || u.search) {
    return { error: `"${shown.replace(/[#?].*$/, '')}..." has a # or ?: a Redis URL has neither; percent-encode them in a password (%23, %3F)` };
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { error: `"${shown}" names no host` };
  const port = u.port ? Number(u.port) : 6379;
  const dbText = u.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!/^\d*$/.test(dbText) || !Number.isSafeInteger(db)) return { error: `"${dbText}" is not a database number` };
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(u.username);
    password = decodeURIComponent(u.password);
  } catch {
    return { error: 'the user name or password is not correctly percent-encoded' };
  }
  return {
    host,
    port,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    db,
    tls: u.protocol === 'rediss:',
    display: `${u.protocol}//${u.username ? `${u.username}${u.password ? ':***' : ''}@` : u.password ? ':***@' : ''}${u.host}${db !== 0 || dbText !== '' ? `/${db}` : ''}`,
  };
}

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

/** One INFO reply as a map (`# Section` headers and blank lines dropped). */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** What verify reads about the server before it writes anything. */
export interface ServerFacts {
  product: 'Redis' | 'Valkey';
  /** The product's own version (valkey_version on Valkey, else redis_version). */
  version: string;
  /** redis_version: the Redis compatibility level (the same as version on Redis). */
  redisVersion: string;
  mode: 'standalone' | 'cluster' | 'sentinel';
  role: 'master' | 'replica';
  clusterEnabled: boolean;
  /** From CONFIG GET, or from INFO memory where CONFIG is disabled; undefined when neither answers. */
  maxmemoryPolicy?: string;
  maxmemoryBytes?: number;
}

export function factsFromInfo(info: Record<string, string>, configPolicy?: string): ServerFacts {
  const valkey = info.valkey_version;
  const redisVersion = info.redis_version ?? 'unknown';
  const clusterEnabled = info.cluster_enabled === '1';
  const modeText = info.server_mode ?? info.redis_mode ?? (clusterEnabled ? 'cluster' : 'standalone');
  const policy = configPolicy ?? info.maxmemory_policy;
  const maxmemory = info.maxmemory !== undefined ? Number(info.maxmemory) : undefined;
  return {
    product: valkey ? 'Valkey' : 'Redis',
    version: valkey ?? redisVersion,
    redisVersion,
    mode: modeText === 'cluster' || clusterEnabled ? 'cluster' : modeText === 'sentinel' ? 'sentinel' : 'standalone',
    role: info.role === 'slave' || info.role === 'replica' ? 'replica' : 'master',
    clusterEnabled,
    ...(policy ? { maxmemoryPolicy: policy } : {}),
    ...(maxmemory !== undefined && Number.isFinite(maxmemory) ? { maxmemoryBytes: maxmemory } : {}),
  };
}

/** Reads the facts through a connected client: INFO (server, replication, cluster, memory) and CONFIG GET. */
export async function readServerFacts(client: Redis): Promise<ServerFacts> {
  const sections = await Promise.all(['server', 'replication', 'cluster', 'memory'].map((s) => client.info(s).catch(() => '')));
  const info = Object.assign({}, ...sections.map(parseInfo)) as Record<string, string>;
  let policy: string | undefined;
  try {
    const reply = (await client.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch {
    // CONFIG is renamed or disabled on many managed services; INFO memory has the policy too.
  }
  return factsFromInfo(info, policy);
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
  /** Calls `listener` once, when a connection drops outside a planned outage. */
  onLoss(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

/** What went wrong when connecting, as verify tells the user. */
export type ConnectProblem = 'refused' | 'unknown-host' | 'auth' | 'tls' | 'timeout' | 'no-database' | 'other';

/** Connection failures verify reports as bad input (exit 2). The reason never holds the password. */
export class RedisConnectError extends Error {
  constructor(readonly address: string, reason: string, readonly kind: ConnectProblem = 'other') {
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
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) return { kind: 'refused', reason: `connection refused: nothing is listening on ${where}` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || /ENOTFOUND|EAI_AGAIN/.test(message)) {
    return { kind: 'unknown-host', reason: `unknown host "${target.host}": the name does not resolve` };
  }
  if (/NOAUTH/.test(message)) return { kind: 'auth', reason: 'authentication required: the server wants a password; put it in the URL (redis://:PASSWORD@host:port)' };
  if (/WRONGPASS|invalid password|invalid username-password|AUTH failed|called without any password configured|ERR AUTH/i.test(message)) {
    return { kind: 'auth', reason: 'authentication failed: the server refused the user name or password' };
  }
  if (/^ERR_SSL|^ERR_TLS|EPROTO|CERT|UNABLE_TO_|SELF_SIGNED/.test(code) || /SSL|TLS|certificate|wrong version number|self[- ]signed/i.test(message)) {
    return { kind: 'tls', reason: `TLS failed: ${message}${target.tls ? ' (rediss:// needs a server that speaks TLS; use redis:// for a plain one)' : ''}` };
  }
  if (target.tls && (code === 'ECONNRESET' || /ECONNRESET|socket disconnected before secure/i.test(message))) {
    return { kind: 'tls', reason: 'TLS failed: the server closed the connection during the TLS handshake (does it speak TLS? use redis:// for a plain server)' };
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
            throw Object.assign(new Error(`connected, but no reply within ${commandTimeout} ms: is it a Redis server? (a TLS server needs rediss://)`), { code: 'ETIMEDOUT' });
          }
          throw e;
        }
        const read = await readServerFacts(probe);
        if (target.db !== 0) {
          if (read.clusterEnabled) throw Object.assign(new Error(`a Redis Cluster has only database 0, and the URL names database ${target.db}`), { code: 'ENODB' });
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
            throw Object.assign(new Error(`the server has no database ${target.db}${count ? ` (it has ${count}: 0 to ${Number(count) - 1})` : ''}`), { code: 'ENODB' });
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
      throw new RedisConnectError(target.display, `connected, but no reply within ${commandTimeout} ms: is it a Redis server?${target.tls ? '' : ' (a TLS server needs rediss://)'}`, 'timeout');
    }
    return fail(cause);
  }
  probe.disconnect();

  let closing = false;
  let lost: string | undefined;
  const lossListeners: Array<(reason: string) => void> = [];
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
    client.on('close', () => {
      if (closing || lost !== undefined) return;
      if (spawned && (!spawned.running || performance.now() - spawned.upSince < 1000)) return;
      lost = lastClientError ? describeConnectError(lastClientError, target).reason : 'the server closed the connection';
      for (const listener of lossListeners) listener(lost);
    });
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
      // QUIT waits for a reply; a server that went away gets a disconnect instead.
      await Promise.all(all.map((c) => withTimeout(c.quit(), 1000, 'quit').catch(() => c.disconnect())));
    },
  };
}

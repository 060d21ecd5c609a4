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
      if ((await rawCommand(port, 'PING', 500)).startsWith('+PONG')) return;
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
  /** Stops the process but keeps its port and directory: a store outage. */
  halt(): Promise<void>;
  /** Starts it again on the same port (after halt()), and waits until it answers PING. */
  restart(): Promise<void>;
  /** Stops it for good and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
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
  try {
    await waitForPing(port, proc, command);
  } catch (error) {
    await killProcess(proc);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  let running = true;
  return {
    host: LOOPBACK,
    port,
    url: `redis://${LOOPBACK}:${port}`,
    dir,
    get running() {
      return running;
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
      running = true;
    },
    stop: () =>
      (stopped ??= (async () => {
        running = false;
        await killProcess(proc);
        rmSync(dir, { recursive: true, force: true });
      })()),
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

/** Parses a Redis URL; returns an error text for anything else. */
export function parseRedisUrl(url: string): RedisTarget | { error: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: `"${url}" is not a URL; use redis://[user:password@]host:port[/db]` };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    return { error: `"${u.protocol}" is not a Redis URL scheme; use redis:// or rediss://` };
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { error: `"${url}" names no host` };
  const port = u.port ? Number(u.port) : 6379;
  const dbText = u.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) return { error: `"${dbText}" is not a database number` };
  const masked = new URL(url);
  if (masked.password) masked.password = '***';
  return {
    host,
    port,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db,
    tls: u.protocol === 'rediss:',
    display: masked.toString().replace(/\/$/, ''),
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
  close(): Promise<void>;
}

/** Connection failures verify reports as bad input (exit 2). */
export class RedisConnectError extends Error {
  constructor(readonly address: string, reason: string) {
    super(reason);
    this.name = 'RedisConnectError';
  }
}

export interface OpenOptions {
  /** Connections in the pool for concurrent calls (default 4). */
  poolSize?: number;
  /** Per-command timeout of the limiter connections, ms (default 5000). */
  commandTimeoutMs?: number;
}

function waitFor(client: ScriptClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`not ready after ${timeoutMs} ms (status ${client.status})`));
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
 * once, and the limiter applies the rule's fail mode.
 */
export async function openStore(target: RedisTarget, spawned?: SpawnedRedis, options: OpenOptions = {}): Promise<Store> {
  const probe = new Redis({ ...baseOptions(target), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 5000 });
  probe.on('error', () => undefined);
  let facts: ServerFacts;
  try {
    await probe.connect();
    facts = await readServerFacts(probe);
  } catch (e) {
    probe.disconnect();
    throw new RedisConnectError(target.display, (e as Error).message);
  }
  probe.disconnect();

  const commandTimeout = options.commandTimeoutMs ?? 5000;
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
    client.on('error', () => undefined);
    return client;
  };
  const main = make();
  const pool = Array.from({ length: options.poolSize ?? 4 }, make);
  const all = [main, ...pool];
  try {
    await Promise.all(all.map((c) => waitFor(c, 10_000)));
  } catch (e) {
    all.forEach((c) => c.disconnect());
    throw new RedisConnectError(target.display, (e as Error).message);
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
    async close() {
      await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}

/**
 * A redis-server that rl-design starts: `redis-server` from PATH on a free loopback port, in a
 * fresh temporary directory with persistence off, stopped afterwards (and killed, its folder
 * removed, however this process ends). Only a server started here is ever stopped (the
 * store-outage scenario stops and restarts it mid-run). The integration tests start their
 * servers with the same code (test/helpers/redis.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

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
  constructor(
    message: string,
    readonly output: string,
  ) {
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

/**
 * Waits until the server answers PING on the port AND says it listens: another process's server
 * that took the same free port first answers PING too, while this one fails to bind and exits.
 * (Its log line is NOTICE level: when the arguments move or quieten the log, PING alone counts.)
 */
async function waitForPing(port: number, proc: Process, command: string, timeoutMs = 10_000, args: readonly string[] = []): Promise<void> {
  const logged = !args.includes('--logfile') && !args.includes('--loglevel');
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
      if (
        /^(\+PONG|-NOAUTH)/.test(await rawCommand(port, 'PING', 500)) &&
        (!logged || proc.output().includes('Ready to accept connections'))
      )
        return;
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
  /** The process id of the server now running (it changes with restart()). */
  readonly pid: number | undefined;
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
    '--port',
    String(port),
    '--bind',
    LOOPBACK,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--maxmemory-policy',
    'noeviction',
    ...extra,
  ];
}

/**
 * Starts `redis-server` from PATH on a free loopback port in a fresh temporary directory.
 * Throws RedisServerMissingError when there is none, RedisServerStartError when it does not
 * come up.
 */
export async function startRedisServer(options: StartOptions = {}): Promise<SpawnedRedis> {
  // a free port can be taken by another process between the probe and the bind: try another
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      const taken = error instanceof RedisServerStartError && /Address already in use/i.test(error.output ?? '');
      if (!taken || options.port !== undefined || attempt >= 5) throw error;
    }
  }
}

async function startOnce(options: StartOptions): Promise<SpawnedRedis> {
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
    await waitForPing(port, proc, command, 10_000, args);
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
    get pid() {
      return proc.child.pid;
    },
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
      await waitForPing(port, proc, command, 10_000, args);
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

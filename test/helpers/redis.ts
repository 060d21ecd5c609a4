/**
 * Real Redis servers for the integration tests: a single redis-server, or a 3-master Redis
 * Cluster, each on free loopback ports, in a fresh temporary directory, with persistence off.
 * The tests only ever talk to servers started here. A missing redis-server fails loudly:
 * CI installs it (apt-get install -y redis-server redis-tools).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const HOST = '127.0.0.1';
const MISSING =
  'redis-server was not found on PATH. The Redis tests need a real server: ' +
  'apt-get install -y redis-server redis-tools';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Stops the server and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
}

export interface RedisClusterHandle {
  /** The three masters. */
  readonly nodes: readonly { host: string; port: number }[];
  stop(): Promise<void>;
}

/** A TCP port free on loopback right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Distinct free ports. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Whether a raw reply (simple string, error, integer or bulk string) has fully arrived. */
function complete(reply: string): boolean {
  const eol = reply.indexOf('\r\n');
  if (eol < 0) return false;
  if (!reply.startsWith('$')) return true;
  const length = Number(reply.slice(1, eol));
  return length < 0 || Buffer.byteLength(reply) >= eol + 2 + length + 2;
}

/** Sends one inline command over a raw socket and returns the raw reply. */
export function rawCommand(port: number, command: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: HOST, port });
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

interface Spawned {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<void>;
}

function spawnRedis(args: string[], cwd: string): Spawned {
  const child = spawn('redis-server', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return { child, output: () => output, exited };
}

async function waitForPing(port: number, spawned: Spawned, timeoutMs = 10_000): Promise<void> {
  let spawnError: Error | undefined;
  spawned.child.once('error', (e) => (spawnError = e));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError) {
      const code = (spawnError as NodeJS.ErrnoException).code;
      throw new Error(code === 'ENOENT' ? MISSING : `redis-server failed to start: ${spawnError.message}`);
    }
    if (spawned.child.exitCode !== null) {
      throw new Error(`redis-server exited (code ${spawned.child.exitCode}):\n${spawned.output()}`);
    }
    try {
      if ((await rawCommand(port, 'PING', 500)).startsWith('+PONG')) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`redis-server on port ${port} did not answer PING:\n${spawned.output()}`);
    }
    await sleep(25);
  }
}

async function kill(spawned: Spawned): Promise<void> {
  const { child } = spawned;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await spawned.exited;
  clearTimeout(timer);
}

function baseArgs(port: number, dir: string): string[] {
  return [
    '--port', String(port),
    '--bind', HOST,
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--daemonize', 'no',
    '--maxmemory-policy', 'noeviction',
  ];
}

/** Starts a standalone redis-server on a free loopback port. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-redis-'));
  const port = await freePort();
  const spawned = spawnRedis(baseArgs(port, dir), dir);
  try {
    await waitForPing(port, spawned);
  } catch (error) {
    await kill(spawned);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    stop: () =>
      (stopped ??= kill(spawned).then(() => rmSync(dir, { recursive: true, force: true }))),
  };
}

/**
 * Starts a Redis Cluster of three masters (no replicas) on loopback: three
 * `redis-server --cluster-enabled yes` in temporary directories, joined with
 * `redis-cli --cluster create`, and waits until every node reports cluster_state:ok.
 */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const ports = await freePorts(6);
  const nodes: { port: number; dir: string; spawned: Spawned }[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => kill(n.spawned)));
    for (const n of nodes) rmSync(n.dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = ports[i]!;
      const busPort = ports[i + 3]!;
      const dir = mkdtempSync(join(tmpdir(), 'rl-redis-cluster-'));
      const args = [
        ...baseArgs(port, dir),
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, 'nodes.conf'),
        '--cluster-port', String(busPort),
        '--cluster-node-timeout', '5000',
      ];
      const spawned = spawnRedis(args, dir);
      nodes.push({ port, dir, spawned });
      await waitForPing(port, spawned);
    }
    const addresses = nodes.map((n) => `${HOST}:${n.port}`);
    try {
      await promisify(execFile)(
        'redis-cli',
        ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
        { timeout: 30_000 },
      );
    } catch (error) {
      const e = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
      if (e.code === 'ENOENT') throw new Error(MISSING.replace('redis-server', 'redis-cli'));
      throw new Error(`redis-cli --cluster create failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
    const deadline = Date.now() + 20_000;
    for (const n of nodes) {
      for (;;) {
        const info = await rawCommand(n.port, 'CLUSTER INFO').catch(() => '');
        if (info.includes('cluster_state:ok') && info.includes('cluster_known_nodes:3')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${n.port} not ready:\n${info}`);
        await sleep(50);
      }
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    nodes: nodes.map((n) => ({ host: HOST, port: n.port })),
    stop: () => (stopped ??= stopAll()),
  };
}

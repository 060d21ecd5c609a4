/**
 * A throwaway redis-server for the benches (bench/lua, bench/middleware): started from PATH
 * (or the binary REDIS_SERVER names, e.g. a build of Redis's own source beside Debian's package)
 * on a free loopback port, without persistence, in its own temporary directory; stop()
 * ends it and removes the directory. Needs only Node (the readiness probe is a raw PING).
 *
 *   import { startRedis, redisInfo } from '../redis.mjs';
 *   const redis = await startRedis();            // { host, port, version, stop() }
 *   ...
 *   await redis.stop();
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const HOST = '127.0.0.1';
const SERVER = process.env.REDIS_SERVER || 'redis-server';

/** A port nothing listens on right now (the OS picks it). */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether a Redis answers PING on the port. */
function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port }, () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * Starts redis-server and waits until it answers PING (10 s at most, or readyMs).
 * extraArgs: more redis-server options, e.g. ['--maxmemory-policy', 'noeviction'].
 * wrapper: a command to run redis-server under, e.g. ['valgrind', '--tool=callgrind', ...]
 * (then allow more time to answer: readyMs).
 */
export async function startRedis({ extraArgs = [], wrapper = [], readyMs = 10_000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-redis-'));
  const port = await freePort();
  const serverArgs = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs];
  const child =
    wrapper.length > 0
      ? spawn(wrapper[0], [...wrapper.slice(1), SERVER, ...serverArgs], { stdio: 'ignore' })
      : spawn(SERVER, serverArgs, { stdio: 'ignore' });
  const closed = new Promise((resolve) => child.once('close', resolve));
  let spawnError;
  child.once('error', (e) => (spawnError = e));
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (spawnError) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`cannot start redis-server (apt-get install -y redis-server): ${spawnError.message}`);
    }
    if (await ping(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not answer PING within ${readyMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const { stdout } = await promisify(execFile)(SERVER, ['--version']);
  return {
    host: HOST,
    port,
    /** The server's process id (valgrind's, which runs it, under a wrapper). */
    pid: child.pid,
    version: /v=(\S+)/.exec(stdout)?.[1] ?? '?',
    async stop() {
      child.kill('SIGTERM');
      await closed;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One INFO section as { field: value } (values as strings). `client`: an ioredis client. */
export async function redisInfo(client, section) {
  return Object.fromEntries(
    (await client.info(section))
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

/** Redis's own CPU time so far (user + system), in microseconds. */
export async function redisCpuUs(client) {
  const cpu = await redisInfo(client, 'cpu');
  return (Number(cpu.used_cpu_user ?? 0) + Number(cpu.used_cpu_sys ?? 0)) * 1e6;
}

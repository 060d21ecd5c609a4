/**
 * verify under faults, each made real: a TCP server that accepts and never answers, a port
 * with nothing on it, a host name that does not resolve, a wrong password, TLS against a
 * plain server, a database the server does not have, the Redis killed mid-run and killed
 * then restarted, SIGINT and SIGTERM while verify runs its own redis-server.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runVerify } from '../../src/commands/verify.js';
import { UserError } from '../../src/messages.js';
import { openStore, startRedisServer, type SpawnedRedis } from '../../src/verify/redis.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';
import { freePort, rawCommand, startRedis, type RedisServer } from '../helpers/redis.js';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function cli(args: string[], env: Record<string, string> = {}): { done: Promise<Run>; pid: number } {
  const t0 = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 })),
  );
  return { done, pid: child.pid as number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Keys of verify runs on a server (SCAN over a raw socket, no client library). */
async function runKeyCount(port: number): Promise<number> {
  const reply = await rawCommand(port, "EVAL \"return #redis.call('keys', 'rl-verify:*')\" 0", 2000).catch(() => ':-1');
  return Number(/^:(-?\d+)/.exec(reply)?.[1] ?? -1);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function childrenOf(pid: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

describe('verify connects with a deadline and says what went wrong', () => {
  let silent: Server;
  let silentPort: number;
  const sockets: Socket[] = [];
  let secured: RedisServer;
  beforeAll(async () => {
    silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    silentPort = (silent.address() as { port: number }).port;
    secured = await startRedis(['--requirepass', 'r1ght-Pass']);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    silent.close();
    await secured?.stop();
  });

  it('a server that accepts the connection and never replies: exit 2 within the deadline, naming it', async () => {
    const r = await cli(['verify', '--example', 'minimal-generic', '--redis', `redis://127.0.0.1:${silentPort}`]).done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`Cannot connect to Redis at redis://127.0.0.1:${silentPort}: connected, but no reply within 5000 ms`);
    expect(r.ms).toBeLessThan(20_000);
  });

  // Each says what went wrong in one line, never "Connection is closed.", never the password.
  for (const [what, url, expected] of [
    ['refused', (p: number) => `redis://127.0.0.1:${p}`, (p: number) => `connection refused: nothing is listening on 127.0.0.1:${p}`],
    ['unknown host', () => 'redis://no-such-host.invalid:6379', () => 'unknown host "no-such-host.invalid"'],
    ['wrong password', () => 'redis://:wr0ng%40Secret@127.0.0.1:{secured}', () => 'authentication failed'],
    ['no password', () => 'redis://127.0.0.1:{secured}', () => 'authentication required'],
    ['TLS to a plain server', () => 'rediss://127.0.0.1:{secured}', () => 'TLS failed'],
  ] as const) {
    it(`${what}: exit 2, a message of its own, no password shown`, async () => {
      const port = await freePort();
      const target = url(port).replace('{secured}', String(secured.port));
      const r = await cli(['verify', '--example', 'minimal-generic', '--redis', target]).done;
      expect(r.code, `${target}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(expected(port));
      expect(r.stderr).not.toContain('Connection is closed');
      expect(r.stderr).not.toMatch(/wr0ng|Secret/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });
  }

  it('a password with an unencoded # never shows, even in part', async () => {
    const r = await cli(['verify', '--example', 'minimal-generic', '--redis', `redis://app:sec#ret-Tail@127.0.0.1:${secured.port}`]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/sec|ret-Tail/);
    expect(r.stderr).toContain('percent-encode');
  });

  it('a database the server does not have is an error, not database 0', async () => {
    const r = await cli(['verify', '--example', 'minimal-generic', '--redis', `redis://:r1ght-Pass@127.0.0.1:${secured.port}/99`]).done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('the server has no database 99 (it has 16: 0 to 15)');
    expect(r.stderr).not.toContain('r1ght-Pass');
  });
});

describe('losing Redis mid-run', () => {
  it('killed: exit 2 with one line naming the key prefix left behind', async () => {
    const server = await startRedisServer();
    try {
      const run = cli(['verify', '--example', 'saas-platform', '--redis', server.url]);
      await until('the run to write keys', async () => (await runKeyCount(server.port)) > 0);
      await server.halt();
      const r = await run.done;
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^rl-design: Lost Redis at ${server.url} during the run \\(.+\\): the results are discarded\\. It could not delete the keys it wrote, all under the prefix rl-verify:[0-9a-f]{16}:\\. Delete them with: redis-cli`,
        ),
      );
      expect(r.stdout).not.toContain('FAILED');
      expect(r.ms).toBeLessThan(30_000);
    } finally {
      await server.stop();
    }
  });

  it('stalled (SIGSTOP: the connection stays open, nothing answers): exit 2 within seconds, naming the prefix left behind', async () => {
    const server = await startRedisServer();
    const pid = server.pid as number;
    try {
      const run = cli(['verify', '--example', 'saas-platform', '--redis', server.url]);
      await until('the run to write keys', async () => (await runKeyCount(server.port)) > 0);
      process.kill(pid, 'SIGSTOP');
      const stoppedAt = Date.now();
      const r = await run.done;
      const waited = Date.now() - stoppedAt;
      process.kill(pid, 'SIGCONT');
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        /Lost Redis at redis:\/\/127\.0\.0\.1:\d+ during the run \(the server stopped answering: no reply to PING within 3000 ms\): the results are discarded\. It could not delete the keys it wrote, all under the prefix (rl-verify:[0-9a-f]{16}:)/,
      );
      expect(waited).toBeLessThan(20_000);
      // the keys it names are the ones left
      const prefix = /prefix (rl-verify:[0-9a-f]{16}:)/.exec(r.stderr)?.[1] as string;
      const left = await rawCommand(server.port, `EVAL "return #redis.call('keys', '${prefix}*')" 0`);
      expect(Number(/^:(\d+)/.exec(left)?.[1])).toBe(await runKeyCount(server.port));
    } finally {
      process.kill(pid, 'SIGCONT');
      await server.stop();
    }
  });

  it('killed and restarted: it reconnects, deletes what it wrote, and still exits 2 (the results are discarded)', async () => {
    const server: SpawnedRedis = await startRedisServer();
    try {
      // keys of another run, which must survive
      await rawCommand(server.port, 'SET keep:me 1');
      const run = cli(['verify', '--example', 'saas-platform', '--redis', server.url]);
      await until('the run to write keys', async () => (await runKeyCount(server.port)) > 0);
      await server.restart();
      await rawCommand(server.port, 'SET keep:me 1');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /Lost Redis at .* during the run .*It came back, and no key of this run \(prefix rl-verify:[0-9a-f]{16}:\) remains\./,
      );
      expect(await runKeyCount(server.port)).toBe(0);
      expect(await rawCommand(server.port, 'GET keep:me')).toContain('1');
    } finally {
      await server.stop();
    }
  });

  it('its own redis-server killed under it: exit 2, not an unexpected error', async () => {
    const tmp = tempDir('rl-verify-tmp-');
    const run = cli(['verify', '--example', 'saas-platform'], { TMPDIR: tmp });
    let redisPid = 0;
    await until('redis-server to start', () => {
      redisPid = childrenOf(run.pid)[0] ?? 0;
      return redisPid > 0 && readdirSync(tmp).length > 0;
    });
    await sleep(1500);
    process.kill(redisPid, 'SIGKILL');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('Lost Redis at');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('keys it could not delete (UNLINK denied by an ACL) are named, never reported as deleted silently', async () => {
    const server = await startRedisServer();
    try {
      expect(await rawCommand(server.port, 'ACL SETUSER limited on >l1mited ~* &* +@all -unlink -del')).toContain('+OK');
      const r = await cli(['verify', '--example', 'minimal-generic', '--redis', `redis://limited:l1mited@127.0.0.1:${server.port}`]).done;
      expect(r.stderr).toMatch(
        /^WARNING: It could not delete the keys it wrote, all under the prefix rl-verify:[0-9a-f]{16}:\. Delete them with: redis-cli --scan --pattern 'rl-verify:[0-9a-f]{16}:\*'/m,
      );
      expect(r.stderr).not.toContain('l1mited');
      expect(await runKeyCount(server.port)).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });

  it('the whole run is bounded', async () => {
    const server = await startRedisServer();
    try {
      let err = '';
      const t0 = Date.now();
      const run = runVerify(
        { cwd: ROOT, stdout: () => undefined, stderr: (t) => (err += t), today: () => '2026-12-02' },
        { example: 'saas-platform', redis: server.url },
        { stderrIsTTY: false, startServer: () => startRedisServer(), openStore: (t, s) => openStore(t, s), runTimeoutMs: 800 },
      );
      await expect(run).rejects.toBeInstanceOf(UserError);
      await expect(run).rejects.toThrow(
        /verify did not finish within 1 s against redis:\/\/127\.0\.0\.1:\d+: the results are discarded\. .*prefix rl-verify:[0-9a-f]{16}:/,
      );
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(err).toBe('');
    } finally {
      await server.stop();
    }
  });
});

describe('signals: its own redis-server and temporary folder never outlive verify', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal}: exit ${code}, redis-server gone, temporary folder removed`, async () => {
      const tmp = tempDir('rl-verify-tmp-');
      mkdirSync(path.join(tmp, 'x'));
      const run = cli(['verify', '--example', 'saas-platform'], { TMPDIR: tmp });
      let redisPid = 0;
      await until('redis-server to start', () => {
        redisPid = childrenOf(run.pid)[0] ?? 0;
        return redisPid > 0 && readdirSync(tmp).some((n) => n.startsWith('rl-verify-redis-'));
      });
      await sleep(1000);
      process.kill(run.pid, signal);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(`${signal}: verify stopped; nothing was written.`);
      await until('redis-server to exit', () => !alive(redisPid), 5000);
      expect(readdirSync(tmp)).toEqual(['x']);
    });
  }
});

describe('starting a server on a port another server took', () => {
  it("never mistakes the other server's PING for its own: a given port fails, naming it; a chosen one moves on", async () => {
    const other = await startRedisServer();
    try {
      await expect(startRedisServer({ port: other.port })).rejects.toThrow(/exited with code|did not answer/);
      const own = await startRedisServer();
      try {
        expect(own.port).not.toBe(other.port);
        const pid = /process_id:(\d+)/.exec(await rawCommand(own.port, 'INFO server'))?.[1];
        expect(Number(pid)).toBe(own.pid);
      } finally {
        await own.stop();
      }
    } finally {
      await other.stop();
    }
  });
});

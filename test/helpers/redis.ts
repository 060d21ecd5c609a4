/**
 * Real Redis servers for the integration tests: a single redis-server, or a 3-master Redis
 * Cluster, each on free loopback ports, in a fresh temporary directory, with persistence off.
 * The servers are started by the product's own code (src/verify/redis.ts, which `verify` uses
 * when no --redis is given). The tests only ever talk to servers started here. A missing
 * redis-server fails loudly: CI installs it (apt-get install -y redis-server redis-tools).
 * useRedisServer() and useRedisCluster() give a test file its server (or cluster) and clients
 * for all its tests, started before them and stopped after them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { freePort, LOOPBACK, rawCommand, RedisServerMissingError, startRedisServer, type SpawnedRedis } from '../../src/verify/redis.js';

export { freePort, rawCommand };

const HOST = LOOPBACK;
const MISSING = 'redis-server was not found on PATH. The Redis tests need a real server: ' + 'apt-get install -y redis-server redis-tools';

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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function start(args: string[] = [], port?: number): Promise<SpawnedRedis> {
  try {
    return await startRedisServer({ args, ...(port !== undefined ? { port } : {}) });
  } catch (error) {
    if (error instanceof RedisServerMissingError) throw new Error(MISSING);
    const e = error as Error & { output?: string };
    throw new Error(`${e.message}${e.output ? `:\n${e.output}` : ''}`);
  }
}

/** Starts a standalone redis-server on a free loopback port (extra redis-server arguments allowed). */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const s = await start(args);
  return { host: s.host, port: s.port, url: s.url, stop: () => s.stop() };
}

/** Distinct free ports. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Starts a Redis Cluster of three masters (no replicas) on loopback: three
 * `redis-server --cluster-enabled yes` in temporary directories, joined with
 * `redis-cli --cluster create`, and waits until every node reports cluster_state:ok.
 */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const ports = await freePorts(6);
  const nodes: SpawnedRedis[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < 3; i++) {
      const args = [
        '--cluster-enabled',
        'yes',
        // relative to --dir, the node's own temporary directory
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-port',
        String(ports[i + 3]!),
        '--cluster-node-timeout',
        '5000',
      ];
      nodes.push(await start(args, ports[i]!));
    }
    const addresses = nodes.map((n) => `${HOST}:${n.port}`);
    try {
      await promisify(execFile)('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
        timeout: 30_000,
      });
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

/** A test file's redis-server and a client on it, set before its first test (see useRedisServer). */
export interface RedisForTests {
  readonly server: RedisServer;
  /** ioredis, one retry per command. */
  readonly redis: Redis;
}

/**
 * A redis-server (with extra redis-server arguments, if any) and a client on it for the tests
 * of the calling file or describe block: started in its beforeAll, quit and stopped in its afterAll.
 */
export function useRedisServer(args: string[] = []): RedisForTests {
  const store = {} as { server: RedisServer; redis: Redis };
  beforeAll(async () => {
    store.server = await startRedis(args);
    store.redis = new Redis(store.server.port, store.server.host, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await store.redis?.quit();
    await store.server?.stop();
  });
  return store;
}

/** A test file's Redis Cluster, a cluster client and a client on each master (see useRedisCluster). */
export interface RedisClusterForTests {
  readonly cluster: RedisClusterHandle;
  /** ioredis Cluster over the three masters, one retry per command. */
  readonly client: Cluster;
  /** One ioredis client per master, in the order of cluster.nodes. */
  readonly masters: readonly Redis[];
}

/** A 3-master Redis Cluster (startRedisCluster) and its clients for the tests of the calling file or describe block. */
export function useRedisCluster(): RedisClusterForTests {
  const store = {} as { cluster: RedisClusterHandle; client: Cluster; masters: Redis[] };
  beforeAll(async () => {
    store.cluster = await startRedisCluster();
    store.client = new Cluster(
      store.cluster.nodes.map((n) => ({ host: n.host, port: n.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    store.masters = store.cluster.nodes.map((n) => new Redis(n.port, n.host, { maxRetriesPerRequest: 1 }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([store.client, ...(store.masters ?? [])].filter(Boolean).map((c) => c.quit().catch(() => undefined)));
    await store.cluster?.stop();
  });
  return store;
}

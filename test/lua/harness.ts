/**
 * Shared plumbing for the Lua script suites: a real redis-server per suite, a pool of
 * ioredis connections (so concurrent calls really arrive on different connections), script
 * calls through EVALSHA with the EVAL fallback on NOSCRIPT, and the "every key has a TTL"
 * check run after each scenario.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { type Cluster, Redis } from 'ioredis';
import { luaScript, type LuaScriptName } from '../../src/lua.js';
import { gcraNumbers } from '../../src/runtime/middleware/store.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

export type Client = Redis | Cluster;
export type Reply = number[];

/** gcra.lua's ARGV for a bucket, as the runtime sends them: tolerance, increment, interval (µs). */
export function gcraArgv(burst: number, rate: number, periodMs: number, cost = 1): [number, number, number] {
  const { interval, tolerance } = gcraNumbers(burst, rate, periodMs);
  return [tolerance, cost * interval, interval];
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs a script by EVALSHA, loading it with EVAL when the server answers NOSCRIPT. */
export async function run(
  client: Client,
  name: LuaScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<Reply> {
  const script = luaScript(name);
  try {
    return (await client.evalsha(script.sha1, keys.length, ...keys, ...args)) as Reply;
  } catch (error) {
    if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
    return (await client.eval(script.source, keys.length, ...keys, ...args)) as Reply;
  }
}

/** Fires `count` calls at once, spread over the connections; returns every reply. */
export function race(clients: readonly Client[], count: number, call: (client: Client, i: number) => Promise<Reply>): Promise<Reply[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => call(clients[i % clients.length]!, i)));
}

/** Every key on the node must carry a TTL. Returns how many keys were checked. */
export async function expectEveryKeyHasTtl(client: Redis): Promise<number> {
  let cursor = '0';
  let checked = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const pttl = await client.pttl(key);
      // -1 is a key without TTL. -2 (gone since SCAN) and 0 (expiring this millisecond) are fine.
      expect(pttl === -2 || pttl >= 0, `key ${key} has PTTL ${pttl}`).toBe(true);
      checked++;
    }
  } while (cursor !== '0');
  return checked;
}

export interface Suite {
  server: RedisServer;
  /** Main connection. */
  redis: Redis;
  /** Eight connections, for races. */
  pool: Redis[];
}

/**
 * Starts one redis-server for the calling test file, stops it afterwards, and checks
 * after every test that no key lacks a TTL.
 */
export function useRedis(): Suite {
  const suite = {} as Suite;
  beforeAll(async () => {
    suite.server = await startRedis();
    suite.redis = new Redis(suite.server.port, suite.server.host, { maxRetriesPerRequest: 1 });
    suite.pool = Array.from({ length: 8 }, () => new Redis(suite.server.port, suite.server.host, { maxRetriesPerRequest: 1 }));
  });
  afterEach(async () => {
    await expectEveryKeyHasTtl(suite.redis);
  });
  afterAll(async () => {
    await Promise.all([suite.redis, ...(suite.pool ?? [])].filter(Boolean).map((c) => c.quit()));
    await suite.server?.stop();
  });
  return suite;
}

let counter = 0;
/** A fresh hash-tagged key prefix per scenario, e.g. "rl:{t3}:". */
export function freshTag(label = 't'): string {
  counter++;
  return `rl:{${label}${counter}}:`;
}

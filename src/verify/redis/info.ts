/** What verify reads about a server before it writes anything: INFO and CONFIG GET, parsed. */
import type { Redis } from 'ioredis';

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

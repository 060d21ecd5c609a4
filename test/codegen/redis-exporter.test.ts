/**
 * The store half of the monitoring: a real redis-server started with the redis.conf lines the
 * design states (maxmemory, noeviction, persistence), scraped by a real oliver006/redis_exporter
 * (Debian's prometheus-redis-exporter, which scripts/setup.sh installs). Every metric the design
 * credits to redis_exporter is exported, with the labels the alert rules select on, and the
 * values the design stated: maxmemory, policy, the key count of db0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Design } from '../../src/design/model.js';
import { exampleDesign } from '../helpers/examples.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';

function exporterBinary(): string {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    for (const name of ['prometheus-redis-exporter', 'redis_exporter']) {
      try {
        accessSync(join(d, name), constants.X_OK);
        return join(d, name);
      } catch {
        // next
      }
    }
  }
  throw new Error('redis_exporter not found: run scripts/setup.sh (apt-get install -y prometheus-redis-exporter)');
}

/** The design's redis.conf lines as redis-server arguments (a later argument wins). */
function configArgs(config: string): string[] {
  const args: string[] = [];
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [key, ...rest] = line.split(/\s+/);
    args.push(`--${key}`, ...rest.map((v) => (v === '""' ? '' : v)));
  }
  return args;
}

async function scrape(redis: RedisServer): Promise<string> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    exporterBinary(),
    [`--redis.addr=redis://${redis.host}:${redis.port}`, `--web.listen-address=127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        const text = await res.text();
        if (/^redis_up 1$/m.test(text)) return text;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`redis_exporter did not answer: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    child.kill('SIGTERM');
  }
}

const servers: RedisServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe('redis_exporter exports what the store alerts read, from a store configured as the design says', () => {
  for (const name of ['saas-platform', 'consumer-auth']) {
    it(`${name}: redis.conf lines accepted; maxmemory, noeviction, persistence, key count`, async () => {
      const design: Design = exampleDesign(name);
      const store = design.monitoring.store;
      expect(store.config).toBeDefined();
      const server = await startRedis(configArgs(store.config as string));
      servers.push(server);
      const client = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
      try {
        expect(await client.config('GET', 'maxmemory')).toEqual(['maxmemory', String(store.maxmemoryBytes)]);
        expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
        const quotas = design.rules.some((r) => r.tier === 'quota');
        expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', quotas ? 'yes' : 'no']);
        if (quotas) expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', 'everysec']);
        for (let i = 0; i < 7; i++) await client.set(`rl:{t:${i}}:req`, '1', 'PX', 60_000);
        const text = await scrape(server);
        for (const m of design.monitoring.metrics.filter((x) => x.emittedBy?.includes('redis-exporter'))) {
          expect(text, m.name).toMatch(new RegExp(`^${m.name}(\\{| )`, 'm'));
        }
        expect(text).toMatch(/^redis_db_keys\{db="db0"\} 7$/m);
        expect(Number(/^redis_memory_max_bytes (\S+)$/m.exec(text)?.[1])).toBe(store.maxmemoryBytes);
        expect(text).toMatch(/^redis_instance_info\{[^}]*maxmemory_policy="noeviction"[^}]*role="master"/m);
        expect(text).toMatch(/^redis_memory_used_bytes \S+$/m);
      } finally {
        await client.quit();
      }
    });
  }
});

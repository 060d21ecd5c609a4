/**
 * verify on a real 3-master Redis Cluster: it detects cluster mode, runs every script through
 * a cluster client (each call's keys in one slot, or Redis would answer CROSSSLOT), computes
 * the same slots as the servers, and deletes its keys on every master.
 */
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/context.js';
import { runVerify } from '../../src/commands/verify.js';
import { openStore, startRedisServer } from '../../src/verify/redis.js';
import { keySlot } from '../../src/verify/slots.js';
import type { VerifyReport } from '../../src/verify/types.js';
import { exampleDesign, ROOT } from '../helpers/examples.js';
import { useRedisCluster } from '../helpers/redis.js';

const store = useRedisCluster();

describe('verify on a Redis Cluster', () => {
  it('computes the slots the cluster computes, for every key pattern of the design', async () => {
    const keys = exampleDesign('saas-platform').rules.flatMap((r) =>
      r.key ? [r.key, `rl-verify:0123456789abcdef:r1:burst-1:${r.key}`] : [],
    );
    for (const key of [...keys, 'foo', '{user1000}.following', 'a{}b', 'x{{y}}z']) {
      expect(keySlot(key), key).toBe(await store.masters[0]!.cluster('KEYSLOT', key));
    }
  });

  it('passes the saas-platform design, reports cluster mode and one slot per auth script, and cleans up on every master', async () => {
    let out = '';
    const ctx: CommandContext = { cwd: ROOT, stdout: (t) => (out += t), stderr: () => undefined, today: () => '2026-12-02' };
    const node = store.cluster.nodes[0]!;
    const code = await runVerify(
      ctx,
      { example: 'saas-platform', redis: `redis://${node.host}:${node.port}`, json: true },
      {
        stderrIsTTY: false,
        startServer: () => startRedisServer(),
        openStore: (t, s) => openStore(t, s),
      },
    );
    const report = JSON.parse(out) as VerifyReport;
    expect(report.results.filter((r) => r.status === 'failed').map((r) => `${r.ruleId} ${r.scenario}: ${r.measured} ${r.detail}`)).toEqual(
      [],
    );
    expect(code).toBe(0);
    expect(report.server.mode).toBe('cluster');
    expect(report.checks.find((c) => c.id === 'cluster')).toMatchObject({
      level: 'ok',
      message: expect.stringMatching(/^Cluster mode is on/),
    });
    expect(report.checks.filter((c) => c.id === 'hash-slots').map((c) => c.level)).toEqual(['ok', 'ok', 'ok']);
    expect(report.results.filter((r) => r.scenario === 'dual-key-auth').every((r) => r.status === 'passed')).toBe(true);
    expect(report.results.filter((r) => r.scenario === 'store-outage').every((r) => r.status === 'skipped')).toBe(true);
    for (const m of store.masters) {
      const [, left] = await m.scan('0', 'MATCH', 'rl-verify:*', 'COUNT', 10_000);
      expect(left).toEqual([]);
    }
    expect(report.keysDeleted).toBeGreaterThan(0);
  }, 60_000);
});

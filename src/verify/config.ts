/**
 * The server's configuration read against the design: version (scripts need effect
 * replication and TIME inside scripts), eviction policy (an evicted limiter key silently
 * resets a limit), cluster mode, and whether each multi-key script keeps its keys in one slot.
 * Pure: facts and design in, checks out.
 */
import type { Design, MatrixRule } from '../design/model.js';
import type { ServerFacts } from './redis.js';
import { hashTag, keySlot } from './slots.js';

export type CheckLevel = 'ok' | 'info' | 'warn' | 'fail';

export interface ConfigCheck {
  id: 'role' | 'version' | 'eviction' | 'cluster' | 'hash-slots' | 'scripts';
  level: CheckLevel;
  message: string;
}

function versionParts(v: string): [number, number] {
  const m = /^(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Redis 5 made effect replication the default for scripts; 7 made it the only mode. */
export function versionCheck(facts: ServerFacts): ConfigCheck {
  const [major] = versionParts(facts.redisVersion);
  const name = facts.product === 'Valkey' ? `Valkey ${facts.version} (Redis ${facts.redisVersion} compatible)` : `Redis ${facts.version}`;
  if (major >= 7) {
    return {
      id: 'version',
      level: 'ok',
      message: `${name}: scripts replicate their effects (the only mode), so redis.call('TIME') inside a script is safe on replicas.`,
    };
  }
  if (major >= 5) {
    return {
      id: 'version',
      level: 'ok',
      message: `${name}: scripts replicate their effects by default since Redis 5, so redis.call('TIME') inside a script is safe on replicas.`,
    };
  }
  return {
    id: 'version',
    level: 'fail',
    message: `${name} is older than Redis 5: scripts are replicated verbatim by default, and a script that reads TIME would compute different results on a replica. The scripts need Redis 5 or newer; upgrade the store.`,
  };
}

export function evictionCheck(facts: ServerFacts): ConfigCheck {
  const policy = facts.maxmemoryPolicy;
  if (policy === undefined) {
    return {
      id: 'eviction',
      level: 'warn',
      message:
        'Could not read maxmemory-policy (CONFIG GET is disabled and INFO memory does not show it). Make sure it is noeviction: an evicted limiter key silently resets that limit.',
    };
  }
  if (policy === 'noeviction') {
    return {
      id: 'eviction',
      level: 'ok',
      message:
        'maxmemory-policy noeviction: limiter keys are never evicted; at the memory limit writes fail loudly and each rule applies its fail mode.',
    };
  }
  return {
    id: 'eviction',
    level: 'warn',
    message: `EVICTION POLICY ${policy}: under memory pressure Redis evicts limiter keys, and an evicted key is a full bucket: limits silently reset (an invisible fail-open that no metric catches)${policy.startsWith('volatile') ? '; every limiter key has a TTL, so volatile-* policies evict them too' : ''}. Run the limiter on a dedicated Redis with maxmemory-policy noeviction, as the design's store section says.`,
  };
}

/** Placeholders in a key pattern: `<tenant-id>`, `<client-ip>` ... */
const PLACEHOLDER = /<[^<>]*>/;

/** Auth rules checked together in one script call: per identity + per IP on the same endpoints. */
export function dualKeyPairs(rules: readonly MatrixRule[]): { identity: MatrixRule; ip: MatrixRule }[] {
  const auth = rules.filter((r) => r.tier === 'security' && r.algorithm === 'sliding-window-log' && r.primitive === 'redis-lua');
  const pairs: { identity: MatrixRule; ip: MatrixRule }[] = [];
  for (const identity of auth.filter((r) => r.identity !== 'ip')) {
    const endpoints = [...identity.endpoints].sort().join('\n');
    const ip = auth.find((r) => r.identity === 'ip' && [...r.endpoints].sort().join('\n') === endpoints && !pairs.some((p) => p.ip === r));
    if (ip) pairs.push({ identity, ip });
  }
  return pairs;
}

/** Whether the two key patterns of a dual-key script always hash to the same slot. */
export function pairSlot(a: string, b: string): { sameSlot: boolean; tag?: string; slot?: number; why: string } {
  const ta = hashTag(a);
  const tb = hashTag(b);
  if (ta === undefined || tb === undefined) {
    return { sameSlot: false, why: `${ta === undefined ? a : b} has no hash tag, so the two keys hash on their whole names` };
  }
  if (ta !== tb) return { sameSlot: false, why: `the tags differ ({${ta}} and {${tb}})` };
  if (PLACEHOLDER.test(ta)) return { sameSlot: true, tag: ta, why: `both keys carry the tag {${ta}}` };
  return { sameSlot: true, tag: ta, slot: keySlot(`{${ta}}`), why: `both keys carry the tag {${ta}} (slot ${keySlot(`{${ta}}`)})` };
}

export function clusterChecks(facts: ServerFacts, design: Design): ConfigCheck[] {
  const checks: ConfigCheck[] = [];
  const wantsCluster = design.scope.store === 'redis-cluster';
  if (facts.clusterEnabled) {
    checks.push({
      id: 'cluster',
      level: 'ok',
      message: `Cluster mode is on: every script call must keep its keys in one slot (checked below).`,
    });
  } else {
    checks.push({
      id: 'cluster',
      level: 'info',
      message: `Standalone server${wantsCluster ? " (the design targets a Redis Cluster: the slot rules below were checked by computing each key's slot, CRC16 of its hash tag)" : ''}.`,
    });
  }
  for (const { identity, ip } of dualKeyPairs(design.rules)) {
    if (!identity.key || !ip.key) continue;
    const s = pairSlot(identity.key, ip.key);
    if (s.sameSlot) {
      checks.push({ id: 'hash-slots', level: 'ok', message: `${identity.id} + ${ip.id}: one script call, one slot: ${s.why}.` });
    } else {
      checks.push({
        id: 'hash-slots',
        level: facts.clusterEnabled || wantsCluster ? 'fail' : 'warn',
        message: `${identity.id} + ${ip.id}: the dual-key script's keys can land in different slots: ${s.why}. On a Redis Cluster the call fails with CROSSSLOT; give both keys the same tag, placed before any user-supplied text.`,
      });
    }
  }
  return checks;
}

/** Every check on the facts (the script load check is added by the run). */
export function checkServer(facts: ServerFacts, design: Design): ConfigCheck[] {
  return [
    {
      id: 'role',
      level: facts.role === 'replica' ? 'fail' : 'ok',
      message:
        facts.role === 'replica'
          ? 'The server is a replica: it refuses writes, and verify only runs against a primary.'
          : `Role ${facts.role}.`,
    },
    versionCheck(facts),
    evictionCheck(facts),
    ...clusterChecks(facts, design),
  ];
}

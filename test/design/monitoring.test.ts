/**
 * The monitoring and store advice of the design: the memory bound prices in each rule's real
 * key length, maxmemory is sized from it, persistence follows from whether quotas live in the
 * store, a logical database is never offered as protection from eviction, the key alert's
 * threshold is the stated bound, and a plan that lets calls pass past its quota gets a ticket
 * (not a page) when its callers are in overage, the same in the document and the rules file.
 */
import { describe, expect, it } from 'vitest';
import { buildDesign } from '../../src/design/build.js';
import {
  BYTES_PER_KEY,
  keyNameBytes,
  keyNameExtraBytes,
  maxKeyChars,
  MEASURED_KEY_CHARS,
  storeBytesPerKey,
} from '../../src/design/matrix.js';
import { formatNumber } from '../../src/format.js';
import { maxmemoryFor, storeBound } from '../../src/design/monitoring.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { exampleInput, inputFromAnswers } from '../render/fixtures.js';
import { generateAlerts } from '../../src/codegen/alerts.js';
import { parse as parseYaml } from 'yaml';

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
};

describe('key length in the memory bound', () => {
  it('prices a key name as Redis allocates it: the sds string rounded up to its size class', () => {
    // what a scratch run measured on Redis 7.0.15 (jemalloc 5.3, 100,000 gcra keys whose value
    // was an integer past the shared ones): bytes per key 133 at 15 and 24 characters, 149 at
    // 31-40, 165 at 52, 181 at 64, 197 at 92, 213 at 100, 261 at 128 and 145, 293 at 160; gcra
    // keys now hold a shared small integer, 16 B less at every length (117 at 15, bench/lua)
    const measured: [number, number][] = [
      [15, 117],
      [24, 117],
      [31, 133],
      [40, 133],
      [52, 149],
      [64, 165],
      [92, 181],
      [100, 197],
      [128, 245],
      [145, 245],
      [160, 277],
    ];
    for (const [chars, bytes] of measured) expect(BYTES_PER_KEY.gcra + keyNameExtraBytes(chars), `${chars} characters`).toBe(bytes);
    expect(keyNameBytes(MEASURED_KEY_CHARS)).toBe(32);
    expect(keyNameExtraBytes(MEASURED_KEY_CHARS)).toBe(0);
  });

  it('fills each placeholder at its longest: sha256 64, client IP 24 (IPv6 /64), opaque ids 128, the longest label', () => {
    const base = { tier: 'security' as const, id: 'x', identity: 'username' as const, algorithm: 'sliding-window-log' as const };
    expect(maxKeyChars({ ...base, key: 'rl:{auth:password-reset}:un:<sha256(e-mail-address)>' })).toBe(92);
    expect(maxKeyChars({ ...base, key: 'rl:{auth:password-reset}:ip:<client-ip>' })).toBe(28 + 24);
    // a tenant slot may be filled by a caller counted by another identity, under the rule's label and its own ("t~ak:")
    const tenant = { ...base, identity: 'tenant' as const };
    expect(maxKeyChars({ ...tenant, tier: 'fairness', algorithm: 'gcra', key: 'rl:{t:<tenant-id>}:req:pro' })).toBe(
      'rl:{'.length + 't~ak:'.length + 128 + '}:req:pro'.length,
    );
    expect(maxKeyChars({ ...tenant, tier: 'quota', algorithm: 'fixed-window', key: 'rl:{t:<tenant-id>}:quota:<yyyy-mm>' })).toBe(
      'rl:{'.length + 't~ak:'.length + 128 + '}:quota:'.length + 7,
    );
    // a rolling quota key gets ":rolling" appended by the middleware
    expect(maxKeyChars({ ...tenant, tier: 'quota', algorithm: 'fixed-window', key: 'rl:{t:<tenant-id>}:quota:rolling' })).toBe(
      'rl:{'.length + 't~ak:'.length + 128 + '}:quota:rolling'.length + ':rolling'.length,
    );
    // an API-key rule's caller counted by its address: "ak~ip:", the longest label; a label-less slot "~ak:"
    expect(maxKeyChars({ ...base, identity: 'api-key', tier: 'fairness', algorithm: 'gcra', key: 'rl:{ak:<api-key-id>}:req' })).toBe(
      'rl:{'.length + 'ak~ip:'.length + 128 + '}:req'.length,
    );
    expect(maxKeyChars({ ...base, identity: 'user', tier: 'fairness', algorithm: 'gcra', key: 'rl:{<user-id>}:req' })).toBe(
      'rl:{'.length + '~ak:'.length + 128 + '}:req'.length,
    );
    expect(maxKeyChars({ ...base, tier: 'ceiling', algorithm: 'gcra', key: 'rl:{global}:ceiling' })).toBe(19);
  });

  it('every store rule of every example carries its key length in bytesPerKey; edge and in-process rules none', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      for (const r of d.rules) {
        if (r.layer === 'edge' || r.primitive !== 'redis-lua') {
          expect(r.keyChars, r.id).toBeUndefined();
          continue;
        }
        // (a rule kept in its identity's hash: the hash's key, which names no window)
        expect(r.keyChars, r.id).toBe(maxKeyChars(r.field ? { ...r, algorithm: 'gcra' } : r));
        expect((r.keyChars ?? 0) > MEASURED_KEY_CHARS || r.keyChars === undefined).toBe(true);
      }
    }
  });

  it('one pricing for every rule the store holds, generated or hand-written; a bucket kept in each instance is not in the store', () => {
    for (const name of exampleNames()) {
      for (const r of exampleDesign(name).rules) {
        if (r.field !== undefined) continue;
        const script = storeBytesPerKey(r);
        if (script === undefined) expect(r.bytesPerKey, r.id).toBeUndefined();
        else expect(r.bytesPerKey, r.id).toBe(script + keyNameExtraBytes(r.keyChars ?? 0));
      }
    }
    const answers = exampleAnswers('saas-platform');
    const outbound = (answers.outbound ?? []).map((p) => ({ ...p, bucket: 'per-instance' as const }));
    const d = buildDesign({ ...answers, outbound } as typeof answers, { date: '2026-12-02' });
    const stripe = rule(d, 'outbound-stripe');
    expect(stripe.primitive).toBe('in-process');
    expect(stripe.bytesPerKey).toBeUndefined();
    expect(storeBound(d.rules).bytes).toBe(storeBound(d.rules.filter((r) => r.tier !== 'outbound')).bytes);
  });

  it('the example bounds: saas-platform 7.6 GiB (2 nginx nodes sharing the ceiling), consumer-auth 947.6 MiB (was 749.8)', () => {
    const saas = exampleDesign('saas-platform').monitoring.store;
    const auth = exampleDesign('consumer-auth').monitoring.store;
    // saas: the worst endpoint (password-reset, 4,800 req/s x 1 h, two keys a request) dominates;
    // the penalty box's keys share its traffic (tested below), and the tenant's hash is counted once
    // per tenant (357 B: 706,800 B less than its six rule rows each counting every tenant)
    // saas states stack.gatewayNodes 2: the two nginx nodes share the 4,800 req/s ceiling
    expect(saas.estimatedBytes).toBe(8_152_268_666);
    expect(auth.estimatedBytes).toBe(993_600_117);
    // (was the rules' bound plus the penalty rows added on top: 9,527,756,666)
    expect(saas.estimatedBytes).toBeLessThan(storeBound(exampleDesign('saas-platform').rules).bytes + (saas.penalty?.bytes ?? 0));
    expect(rule(exampleDesign('consumer-auth'), 'auth-login-per-identity').bytesPerKey).toBe(182 + 64);
  });
});

describe('the memory of an identity hash', () => {
  it('saas-platform: one row for the tenant hash, priced once per tenant, in place of its six rules', () => {
    const d = exampleDesign('saas-platform');
    const text = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]?.content ?? '';
    const hash = d.monitoring.store.hashes?.[0];
    expect(hash?.ruleIds).toEqual(['fairness-free', 'fairness-pro', 'fairness-enterprise', 'quota-free', 'quota-pro', 'quota-enterprise']);
    // 138 characters: rl:{t~ak:<128-character API key>}, a caller counted by its API key (fallbackLabel)
    expect(text).toContain(`| hash \`rl:{t:<tenant-id>}\` | 1,200 | 138 | ${hash?.bytesPerKey} |`);
    for (const id of hash?.ruleIds ?? []) expect(text).not.toContain(`| \`${id}\` | 1,200 | 138 |`);
    expect(text).toContain('one per tenant, at most 1,200, each holding the fields of fairness-free');
    expect(text).toContain('the hash is counted once per tenant, not once per rule.');
  });
});

describe('store advice', () => {
  it('a dedicated instance; a logical database is no protection from eviction; Redis Cluster has only db 0', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      const text = d.monitoring.store.recommendation;
      expect(text).not.toMatch(/or at least a dedicated logical database/);
      expect(text).toMatch(/logical database .* does not protect from eviction/);
      if (d.scope.store === 'redis-cluster') expect(text).toContain('Redis Cluster has only database 0');
    }
  });

  it('maxmemory is the bound plus headroom, in the redis.conf lines, and what happens at it is stated', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      const s = d.monitoring.store;
      expect(s.maxmemoryBytes).toBe(maxmemoryFor(s.estimatedBytes));
      expect(s.maxmemoryBytes).toBeGreaterThanOrEqual(s.estimatedBytes * 1.5);
      expect(s.config).toContain(`maxmemory ${(s.maxmemoryBytes as number) / 1024 / 1024}mb\n`);
      expect(s.config).toContain('maxmemory-policy noeviction\n');
      expect(s.memoryText).toMatch(/refuses, with an OOM error/);
      expect(s.memoryText).toMatch(/RateLimitStoreMemoryHigh pages at 80% of maxmemory/);
      expect(d.monitoring.alerts.map((a) => a.name)).toEqual(
        expect.arrayContaining(['RateLimitStoreMemoryHigh', 'RateLimitStoreMisconfigured', 'RateLimitKeyCardinality']),
      );
    }
    const saas = exampleDesign('saas-platform').monitoring.store;
    expect(saas.memoryText).toContain(
      // the example answers failure.fallback = memory: its fail-open rules count in memory, not unchecked
      "the fail-open rules with the memory fallback (fairness-free, fairness-pro, fairness-enterprise, webhooks-per-source, quota-free, quota-pro, quota-enterprise) count in each instance's memory instead",
    );
    expect(saas.memoryText).not.toContain('admit requests unchecked');
    expect(saas.memoryText).toContain('the sliding-window logs (auth-login-per-identity');
    expect(saas.memoryText).toContain('Set it on every node');
  });

  it('persistence: AOF everysec when quota counters live in the store, optional otherwise', () => {
    const saas = exampleDesign('saas-platform').monitoring.store;
    expect(saas.persistence?.mode).toBe('aof-everysec');
    expect(saas.persistence?.text).toMatch(/fresh quota/);
    expect(saas.config).toMatch(/appendonly yes\nappendfsync everysec\n/);
    const auth = exampleDesign('consumer-auth').monitoring.store;
    expect(auth.persistence?.mode).toBe('optional');
    expect(auth.persistence?.text).not.toMatch(/only resets limits/);
    expect(auth.config).toContain('appendonly no');
  });

  it('the key alert reads redis_exporter and its threshold is 80% of the stated bound', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      const a = d.monitoring.alerts.find((x) => x.name === 'RateLimitKeyCardinality');
      expect(a?.expr).toContain('redis_db_keys{job="ratelimit-redis",db="db0"}');
      expect(a?.expr).toMatch(new RegExp(`> ${Math.ceil(d.monitoring.store.estimatedKeys * 0.8)}$`));
    }
  });

  it('the document does not call a shared-ceiling total "the sum of the per-rule bounds"; it shows the new advice', () => {
    expect(exampleDesign('saas-platform').monitoring.store.sharedCeiling).toBeDefined();
    const text = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]?.content ?? '';
    expect(text).not.toContain('sum of the per-rule bounds');
    expect(text).toMatch(/not as the sum\s+of\s+their\s+rows/);
    expect(text).toContain(`maxmemory ${Math.round((exampleDesign('saas-platform').monitoring.store.maxmemoryBytes ?? 0) / 1048576)}mb`);
    expect(text).toContain('job_name: ratelimit-redis');
    expect(text).toContain('monitoring/nginx-ratelimit.mtail');
    expect(text).toMatch(/\| `ratelimit_near_limit_total` \| counter \| `rule` \| middleware \|/);
    expect(text).toMatch(/\| `auth-password-reset-per-identity` \| 17,280,000 \| 92 \| 246 \|/);
  });

  it('a design without a shared store gets no store alerts and no redis.conf', () => {
    const answers = exampleAnswers('minimal-generic');
    const d = buildDesign({ ...answers, stack: { ...answers.stack, store: 'none' } } as typeof answers, { date: '2026-12-02' });
    expect(d.monitoring.store.config).toBeUndefined();
    expect(d.monitoring.alerts.map((a) => a.name)).not.toContain('RateLimitKeyCardinality');
    expect(d.monitoring.metrics.some((m) => m.emittedBy?.includes('redis-exporter'))).toBe(false);
  });
});

describe('the access lists in the monitoring', () => {
  it('counts what the lists did: one counter, its outcomes only for the lists the design has', () => {
    const saas = exampleDesign('saas-platform').monitoring;
    const access = saas.metrics.find((m) => m.name === 'ratelimit_access_total');
    expect(access).toMatchObject({ type: 'counter', labels: ['outcome'], emittedBy: ['middleware'] });
    expect(access?.help).toContain('outcome=denied');
    expect(access?.help).toContain('outcome=penalty_box');
    expect(access?.help).toContain('outcome=allowlisted');
    const answers = exampleAnswers('saas-platform');
    const denyOnly = buildDesign({ ...answers, access: { deny: answers.access?.deny } } as typeof answers, {
      date: '2026-12-02',
    }).monitoring;
    const help = denyOnly.metrics.find((m) => m.name === 'ratelimit_access_total')?.help ?? '';
    expect(help).toContain('outcome=denied');
    expect(help).not.toContain('penalty_box');
    expect(denyOnly.alerts.map((a) => a.name)).not.toContain('RateLimitPenaltyBoxSpike');
    expect(denyOnly.store.penalty).toBeUndefined();
    // no list, no counter (the examples without access answers)
    for (const name of ['consumer-auth', 'minimal-generic']) {
      expect(exampleDesign(name).monitoring.metrics.map((m) => m.name)).not.toContain('ratelimit_access_total');
    }
  });

  it('alerts on a burst of penalty-box refusals against the same hour yesterday', () => {
    const alert = exampleDesign('saas-platform').monitoring.alerts.find((a) => a.name === 'RateLimitPenaltyBoxSpike');
    expect(alert?.metric).toBe('ratelimit_access_total');
    expect(alert?.expr).toContain('ratelimit_access_total{outcome="penalty_box"}');
    expect(alert?.expr).toContain('offset 1d');
    expect(alert?.severity).toBe('page');
  });

  it("prices the penalty box's keys into the memory bound: ceiling x window counters, ceiling x (window + block) / refusals boxes, not both at once", () => {
    const d = exampleDesign('saas-platform');
    const store = d.monitoring.store;
    const p = d.access?.penalty;
    expect(p).toBeDefined();
    // 4,800 req/s x 900 s counters; a box's 5 refusals lie within the 900 s before it shut and
    // the 1,800 s it stays shut: 4,800 x 2,700 s / 5 boxes; but a refusal counts toward one key
    // only, so 4,800 x (900 s + 1,800 s / 5) together
    // (the 2 nginx nodes of stack.gatewayNodes share the 4,800 req/s ceiling)
    const strikes = 4800 * 900;
    const boxes = (4800 * 2700) / 5;
    const together = 4800 * 900 + (4800 * 1800) / 5;
    expect(store.penalty?.keys).toBe(together);
    const chars = (key: string) => maxKeyChars({ key: key.replace('<identity>', 'ak:<identity>'), id: 'penalty', tier: 'security' });
    expect(chars(p?.keys.strikes ?? '')).toBe('rl:{pb:'.length + 3 + 128 + '}:strikes'.length);
    // (both key names price alike: 261 B)
    expect(chars(p?.keys.box ?? '')).toBe(chars(p?.keys.strikes ?? '') - 4);
    expect(store.penalty?.bytes).toBe(together * (BYTES_PER_KEY['fixed-window'] + keyNameExtraBytes(chars(p?.keys.strikes ?? ''))));
    // the rules' keys and the box's share the ceiling's traffic: less than the two added up
    expect(store.estimatedKeys).toBeLessThan(storeBound(d.rules).keys + together);
    expect(store.estimatedKeys).toBe(storeBound(d.rules).keys);
    expect(store.penalty?.text).toMatch(
      /^Penalty box: at most 4,320,000 refusal counters .* and 2,592,000 boxes .* but 6,048,000 keys together/,
    );
    const text = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]?.content ?? '';
    expect(text).toContain('Penalty box: at most 4,320,000 refusal counters');
    // and a row per key kind in the memory table, whose total counts them
    const bytesPerKey = (key: string) => store.penalty!.rows.find((r) => r.key === key)!.bytesPerKey;
    expect(text).toContain(`| penalty box \`rl:{pb:<identity>}:strikes\` | 4,320,000 | 147 | ${bytesPerKey(p!.keys.strikes)} |`);
    expect(text).toContain(`| penalty box \`rl:{pb:<identity>}:box\` | ${formatNumber(boxes)} | 143 | ${bytesPerKey(p!.keys.box)} |`);
    expect(text).toContain(`${formatNumber(strikes)} | 147 |`);
    // the total: the rules' keys and the box's sharing the traffic (was 40,609,202 with the box's added on top)
    expect(text).toMatch(/\| \*\*Total\*\* \| \*\*34,561,202\*\* \|/);
    expect(text).toContain(
      'and a\nrequest refused by a rule the penalty box follows adds none to that rule (no script writes on a refusal) and one penalty\nkey at most.',
    );
    // a design whose state stays in each process keeps the box there too: no store keys
    const answers = exampleAnswers('saas-platform');
    const stack = { ...answers.stack, store: 'none', topology: 'single', instances: 1 };
    const local = buildDesign({ ...answers, stack } as typeof answers, { date: '2026-12-02' });
    expect(local.scope.store).toBe('none');
    expect(local.monitoring.store.penalty).toBeUndefined();
  });
});

describe('soft-quota overage', () => {
  const OVERAGE = 'sum by (rule, plan) (increase(ratelimit_quota_exhausted_total{rule=~"quota-pro|quota-enterprise"}[1h])) > 0';
  const withPlans = (exhaustion: (name: string) => 'hard' | 'soft-warning' | 'pay-per-overage') => {
    const answers = exampleAnswers('saas-platform');
    return { ...answers, plans: answers.plans?.map((p) => ({ ...p, exhaustion: exhaustion(p.name) })) } as typeof answers;
  };

  it('saas-platform: a ticket on the soft quotas (quota-pro, quota-enterprise), not on the hard one (quota-free)', () => {
    const d = exampleDesign('saas-platform');
    const alert = d.monitoring.alerts.find((a) => a.name === 'RateLimitQuotaOverage');
    expect(alert).toMatchObject({ metric: 'ratelimit_quota_exhausted_total', expr: OVERAGE, for: '5m', severity: 'ticket' });
    expect(alert?.expr).not.toContain('quota-free');
    expect(alert?.condition).toContain('quota-pro (plan Pro: quota 1,000,000, refused past 1,200,000)');
    expect(alert?.condition).toContain('quota-enterprise (plan Enterprise: quota 20,000,000, refused past 60,000,000)');
    // what the operator does: find the tenants (the counter names none) and reach them before the hard stop
    expect(alert?.why).toContain('no tenant label');
    expect(alert?.why).toMatch(/find the tenants in overage in the usage records the invoices come from/);
    expect(alert?.why).toMatch(/before the hard stop/);
    expect(alert?.why).toContain('ratelimit_throttled_total{rule=~"quota-pro|quota-enterprise",mode="enforce"}');
    expect(alert?.why).toContain('soft-warning');
    expect(alert?.why).toContain('pay-per-overage');
  });

  it('the rules file ships the same alert: name, expression, hold time and severity; the document states the same', () => {
    const input = exampleInput('saas-platform');
    const alert = input.design.monitoring.alerts.find((a) => a.name === 'RateLimitQuotaOverage');
    const rules = (parseYaml(generateAlerts(input.design).content) as { groups: { rules: Record<string, any>[] }[] }).groups[0]?.rules;
    const rule = rules?.find((r) => r.alert === 'RateLimitQuotaOverage');
    expect(rule).toMatchObject({ expr: OVERAGE, for: '5m', labels: { severity: 'ticket', component: 'ratelimit' } });
    expect(rule?.annotations.description).toBe(alert?.why);
    const text = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const row = text.split('\n').find((l) => l.startsWith('| RateLimitQuotaOverage |'));
    expect(row).toBeDefined();
    expect(row).toContain(`| \`${OVERAGE.replace('|', '\\|')}\` | 5m | ticket |`);
  });

  it('one soft plan: the alert reads that rule alone and says what its plan does past the quota', () => {
    const d = buildDesign(
      withPlans((n) => (n === 'Pro' ? 'soft-warning' : 'hard')),
      { date: '2026-12-02' },
    );
    const alert = d.monitoring.alerts.find((a) => a.name === 'RateLimitQuotaOverage');
    expect(alert?.expr).toBe('sum by (rule, plan) (increase(ratelimit_quota_exhausted_total{rule=~"quota-pro"}[1h])) > 0');
    expect(alert?.why).toContain('soft-warning');
    expect(alert?.why).not.toContain('pay-per-overage');
  });

  it('no alert without a soft quota: every plan hard, no quotas at all, or a cap at the quota itself', () => {
    const hard = buildDesign(
      withPlans(() => 'hard'),
      { date: '2026-12-02' },
    );
    expect(hard.rules.some((r) => r.tier === 'quota')).toBe(true);
    expect(hard.monitoring.alerts.map((a) => a.name)).not.toContain('RateLimitQuotaOverage');
    expect(generateAlerts(hard).content).not.toContain('RateLimitQuotaOverage');
    const hardText = renderMarkdown(inputFromAnswers(withPlans(() => 'hard')), { layout: 'single' })[0]?.content ?? '';
    expect(hardText).toContain('| RateLimitNearLimit |');
    expect(hardText).not.toContain('RateLimitQuotaOverage');
    for (const name of ['consumer-auth', 'minimal-generic']) {
      expect(exampleDesign(name).monitoring.alerts.map((a) => a.name)).not.toContain('RateLimitQuotaOverage');
    }
    // a soft-warning plan whose cap is its quota refuses at the quota: nothing passes past it
    const answers = withPlans((n) => (n === 'Pro' ? 'soft-warning' : 'hard'));
    const capped = {
      ...answers,
      plans: answers.plans?.map((p) => (p.name === 'Pro' ? { ...p, overageCap: p.quota } : p)),
    } as typeof answers;
    const d = buildDesign(capped, { date: '2026-12-02' });
    expect(d.monitoring.alerts.map((a) => a.name)).not.toContain('RateLimitQuotaOverage');
  });
});

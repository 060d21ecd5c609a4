/**
 * The Prometheus alerting rules: valid YAML with the rules-file structure, one rule per
 * designed alert, hostile text inert; and `promtool check rules` accepts the file
 * (promtool comes from Debian's prometheus package, which scripts/setup.sh installs).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ALERTS_PATH, alertRuleNames, generateAlerts } from '../../src/codegen/alerts.js';
import { promTemplateText } from '../../src/escape/index.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';
import { exampleAnswers, exampleDesign, exampleNames, reviewDesign } from '../helpers/examples.js';
import { EVIL, hostileDesign } from './support/hostile.js';
import { metricsOf } from '../../src/constraints/artefacts.js';
import { expectPromtoolPasses, firesAt, minuteTest, promtool, quietAt } from '../helpers/promtool.js';

const DURATION = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;

/** One NestJS process, no store (test/fixtures/review): every limit in the process's memory. */
const STORE_NONE = 'nestjs-memory-quotas';
/** The metrics of the middleware's calls to a shared store. */
const STORE_CALL_METRICS = ['ratelimit_store_latency_ms', 'ratelimit_store_failures_total', 'ratelimit_fail_open_events_total'];

/** The metric names the rules file's header says some component exports. */
function headerMetrics(content: string): Set<string> {
  const lines = content.split('\n').filter((l) => l.startsWith('# - '));
  return new Set(lines.flatMap((l) => l.slice(l.lastIndexOf(': ') + 2).split(', ')));
}

type Obj = Record<string, any>;

function checkStructure(design: Design): Obj {
  const file = generateAlerts(design);
  expect(file.path).toBe(ALERTS_PATH);
  expect(file.language).toBe('yaml');
  const doc = parseYaml(file.content) as Obj;
  expect(parseYaml(file.content, { version: '1.1' })).toEqual(doc);
  expect(Object.keys(doc)).toEqual(['groups']);
  expect(doc.groups).toHaveLength(1);
  const group = doc.groups[0];
  expect(group.name).toMatch(/^[a-z0-9-]+-ratelimit$/);
  expect(group.rules).toHaveLength(design.monitoring.alerts.length);
  const names = new Set<string>();
  group.rules.forEach((rule: Obj, i: number) => {
    const alert = design.monitoring.alerts[i]!;
    expect(rule.alert).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
    names.add(rule.alert);
    expect(rule.expr).toBe(alert.expr);
    expect(rule.for).toMatch(DURATION);
    expect(rule.labels.severity).toBe(alert.severity);
    expect(rule.annotations.summary).toBe(promTemplateText(`${alert.metric}: ${alert.condition}`));
    expect(rule.annotations.description).toBe(promTemplateText(alert.why));
  });
  expect(names.size).toBe(group.rules.length);
  return doc;
}

describe('Prometheus alerting rules', () => {
  for (const name of exampleNames()) {
    it(`example ${name}: structure`, () => {
      checkStructure(exampleDesign(name));
    });
  }

  it('hostile alert text stays one inert string; {{ never opens a template action', () => {
    const design = hostileDesign();
    const doc = checkStructure(design);
    const evil = doc.groups[0].rules.at(-1);
    expect(evil.alert).toBe('Evil_Alert_____Labels___');
    expect(evil.annotations.description).toBe(EVIL.replace('{{', '{{ "{{" }}'));
  });

  const tool = promtool();
  it('promtool is installed (scripts/setup.sh installs Debian prometheus for it)', () => {
    expect(tool, 'promtool not found: run scripts/setup.sh').toBeDefined();
  });

  it('promtool check rules accepts every example, a design without a store and the hostile design', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-alerts-'));
    try {
      const designs = [...exampleNames().map(exampleDesign), reviewDesign(STORE_NONE), hostileDesign()];
      for (const [i, design] of designs.entries()) {
        const path = join(dir, `rules-${i}.yaml`);
        writeFileSync(path, generateAlerts(design).content);
        const { stdout } = await promisify(execFile)(tool as string, ['check', 'rules', path], { timeout: 30_000 });
        expect(stdout).toContain('SUCCESS');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------
// Every metric an alert reads is exported by someone the design names
// ---------------------------------------------------------------------------

describe('every metric an alert reads has a producer', () => {
  it('the extractor finds metric names and nothing else', () => {
    expect(metricsOf('sum by (rule) (rate(a_total{rule=~"x|y"}[5m] offset 1d)) / on (instance) b{job="j"} > 0.2')).toEqual([
      'a_total',
      'b',
    ]);
    expect(metricsOf('histogram_quantile(0.99, sum by (le) (rate(h_ms_bucket[5m]))) > 5')).toEqual(['h_ms_bucket']);
  });

  const designs: [string, Design][] = [
    ...exampleNames().map((n): [string, Design] => [n, exampleDesign(n)]),
    [STORE_NONE, reviewDesign(STORE_NONE)],
  ];
  for (const [name, design] of designs) {
    it(`example ${name}: each alert's metrics are in the design's metric table, each with a producer the document names`, () => {
      const table = new Map(design.monitoring.metrics.map((m) => [m.name, m]));
      for (const alert of design.monitoring.alerts) {
        const used = metricsOf(alert.expr);
        expect(used.length, alert.name).toBeGreaterThan(0);
        expect(
          used.map((u) => u.replace(/_(bucket|sum|count)$/, '')),
          `${alert.name} names its main metric`,
        ).toContain(alert.metric);
        for (const raw of used) {
          const metric = table.get(raw) ?? table.get(raw.replace(/_(bucket|sum|count)$/, ''));
          expect(metric, `${alert.name} reads ${raw}, which no metric of the design is`).toBeDefined();
          expect(metric?.emittedBy?.length, `${raw} has no producer`).toBeGreaterThan(0);
          if (metric?.type === 'histogram') expect(raw).toMatch(/_(bucket|sum|count)$/);
        }
      }
    });
  }

  it('no metric nobody emits: the old near-limit gauge and key-cardinality gauge are gone', () => {
    for (const name of exampleNames()) {
      const names = exampleDesign(name).monitoring.metrics.map((m) => m.name);
      expect(names).not.toContain('ratelimit_near_limit_ratio');
      expect(names).not.toContain('ratelimit_key_cardinality');
    }
  });

  for (const [name, design] of designs) {
    it(`${name}: the rules file holds the document's alerts, in order, and its header the metric table's metrics`, () => {
      const content = generateAlerts(design).content;
      const rules = (parseYaml(content) as Obj).groups[0].rules as Obj[];
      expect(rules.map((r) => r.alert)).toEqual(alertRuleNames(design.monitoring.alerts));
      expect(rules.map((r) => r.expr)).toEqual(design.monitoring.alerts.map((a) => a.expr));
      const table = design.monitoring.metrics.filter((m) => !m.emittedBy?.every((s) => s === 'envoy' || s === 'envoy-ratelimit-service'));
      expect(headerMetrics(content)).toEqual(new Set(table.map((m) => m.name)));
    });
  }

  it('a design without a store: no store-call metric in the table, the alerts or the rules file, and the document says why', () => {
    const design = reviewDesign(STORE_NONE);
    const content = generateAlerts(design).content;
    const names = design.monitoring.metrics.map((m) => m.name);
    for (const metric of STORE_CALL_METRICS) {
      expect(names).not.toContain(metric);
      expect(content).not.toContain(metric);
      for (const a of design.monitoring.alerts) expect(a.expr, a.name).not.toContain(metric);
      expect(design.monitoring.storeMetricsLeftOut).toContain(metric);
    }
    expect(design.monitoring.storeMetricsLeftOut).toContain('with no store call to fail or to time they stay at 0');
    // a design with a store keeps them, and their alerts
    const saas = exampleDesign('saas-platform').monitoring;
    expect(saas.metrics.map((m) => m.name)).toEqual(expect.arrayContaining(STORE_CALL_METRICS));
    expect(saas.alerts.map((a) => a.name)).toEqual(
      expect.arrayContaining(['RateLimitStoreSlow', 'RateLimitStoreFailures', 'RateLimitFailOpen']),
    );
    expect(saas.storeMetricsLeftOut).toBeUndefined();
  });

  it('the rules file names where each metric comes from', () => {
    const content = generateAlerts(exampleDesign('saas-platform')).content;
    expect(content).toMatch(/# - the generated middleware \(its prom-client registry\): .*ratelimit_near_limit_total/);
    expect(content).toMatch(/# - the generated outbound client, with onEvent: outboundMetrics\(promClient\)/);
    expect(content).toMatch(/# - monitoring\/nginx-ratelimit\.mtail .* global-ceiling, anonymous-per-ip: ratelimit_throttled_total/);
    expect(content).toMatch(
      /# - oliver006\/redis_exporter on every node of the limiter store, scraped as job "ratelimit-redis": redis_db_keys/,
    );
  });

  it('an edge the rules cannot see (Envoy) is left out of the throttle alerts and the file says what to wire', () => {
    const base = exampleAnswers('saas-platform');
    const design = buildDesign({ ...base, stack: { ...base.stack, gateway: 'envoy' } } as typeof base, { date: '2026-12-02' });
    expect(design.monitoring.edge?.countedBy).toBe('gateway');
    const rare = design.monitoring.alerts.find((a) => a.name === 'RateLimitRareRuleFiring');
    expect(rare?.expr).not.toContain('global-ceiling');
    expect(rare?.expr).toContain('outbound-stripe');
    const content = generateAlerts(design).content;
    // Envoy's own series, under the names Prometheus sees them, each read by an alert
    expect(content).toContain('envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="rl_edge_local"}');
    expect(design.monitoring.alerts.map((a) => a.name)).toContain('RateLimitEdgeCeilingFiring');
    const throttled = design.monitoring.metrics.find((m) => m.name === 'ratelimit_throttled_total');
    expect(throttled?.emittedBy).not.toContain('nginx-log');
  });
});

// ---------------------------------------------------------------------------
// promtool test rules: the alerts fire on the series the generated code exports
// ---------------------------------------------------------------------------

describe('promtool test rules: the alerts fire (and stay quiet) on realistic series', () => {
  const design = exampleDesign('saas-platform');
  const alert = (name: string) => {
    const a = design.monitoring.alerts.find((x) => x.name === name);
    if (!a) throw new Error(`no alert ${name}`);
    return a;
  };
  const bound = design.monitoring.store.estimatedKeys;
  const max = design.monitoring.store.maxmemoryBytes as number;
  const over = Math.ceil(bound * 0.8) + 10;
  const failOpen = alert('RateLimitFailOpen');
  const overage = alert('RateLimitQuotaOverage');
  const spike = alert('RateLimitThrottleSpike');
  const penaltyBox = alert('RateLimitPenaltyBoxSpike');
  const nearLimit = alert('RateLimitNearLimit');
  const keys = alert('RateLimitKeyCardinality');

  /** Each case: what it shows, what the alert itself states (if anything), and promtool's unit tests. */
  const CASES: { title: string; states?: () => void; tests: Obj[] }[] = [
    {
      title: 'RateLimitFailOpen pages on a single fail-open event of a series that starts at 0, and never without one',
      states: () => expect(failOpen.for).toBe('1m'),
      tests: [
        minuteTest(
          [
            // pre-initialised at 0 by the middleware, one event at minute 10
            { series: 'ratelimit_fail_open_events_total{rule="fairness-pro",instance="a"}', values: '0x9 1x20' },
            // a quiet rule: zero all along
            { series: 'ratelimit_fail_open_events_total{rule="fairness-free",instance="a"}', values: '0x30' },
            // a fresh process whose first scrape already shows an event
            { series: 'ratelimit_fail_open_events_total{rule="quota-pro",instance="b"}', values: '_x14 2x15' },
          ],
          [
            quietAt('5m', failOpen),
            firesAt('12m', failOpen, { rule: 'fairness-pro' }),
            firesAt('17m', failOpen, { rule: 'quota-pro' }),
            quietAt('29m', failOpen),
          ],
        ),
      ],
    },
    {
      title: 'RateLimitQuotaOverage opens a ticket per soft quota whose callers go past the plan quota, not for a hard quota',
      states: () => expect(overage.severity).toBe('ticket'),
      tests: [
        minuteTest(
          [
            // pre-initialised at 0, then 3 calls a minute past Pro's quota for 20 minutes, then none
            { series: 'ratelimit_quota_exhausted_total{rule="quota-pro",plan="Pro",instance="a"}', values: '0x9 0+3x20 60x100' },
            { series: 'ratelimit_quota_exhausted_total{rule="quota-pro",plan="Pro",instance="b"}', values: '0x130' },
            // a soft quota nobody reaches
            { series: 'ratelimit_quota_exhausted_total{rule="quota-enterprise",plan="Enterprise",instance="a"}', values: '0x130' },
            // Free's quota is hard: its refusals are not overage (RateLimitThrottleSpike watches those)
            { series: 'ratelimit_quota_exhausted_total{rule="quota-free",plan="Free",instance="a"}', values: '0+50x130' },
          ],
          [
            quietAt('9m', overage),
            firesAt('20m', overage, { rule: 'quota-pro', plan: 'Pro' }),
            // an hour after the last call past the quota
            quietAt('95m', overage),
          ],
        ),
      ],
    },
    {
      title: 'RateLimitThrottleSpike fires on a first attack (yesterday at 0, or no series yesterday), not on steady throttling',
      tests: [
        minuteTest(
          [
            // 0 all yesterday (pre-initialised), then 120 refusals a minute (2 req/s)
            { series: 'ratelimit_throttled_total{rule="auth-login-per-ip",mode="enforce"}', values: '0x1440 0+120x60' },
            // steady 2 req/s today and yesterday: not a spike (it did fire in the first day, with no
            // yesterday to compare against)
            { series: 'ratelimit_throttled_total{rule="fairness-pro",mode="enforce"}', values: '0+120x1500' },
            // outbound waits follow batch jobs: left to RateLimitRareRuleFiring
            { series: 'ratelimit_throttled_total{rule="outbound-stripe",mode="enforce"}', values: '0x1440 0+1200x60' },
          ],
          [firesAt('1480m', spike, { rule: 'auth-login-per-ip' })],
        ),
        minuteTest(
          [
            // a brand-new deployment: no series a day ago
            { series: 'ratelimit_throttled_total{rule="auth-login-per-ip",mode="enforce"}', values: '0+120x60' },
          ],
          [firesAt('40m', spike, { rule: 'auth-login-per-ip' })],
        ),
      ],
    },
    {
      title: 'RateLimitPenaltyBoxSpike fires when penalty-box refusals burst (over 1 req/s, 3x yesterday or new), not on a steady trickle',
      tests: [
        minuteTest(
          [
            // pre-initialised at 0 all yesterday, then 120 boxed refusals a minute (2 req/s)
            { series: 'ratelimit_access_total{outcome="penalty_box",instance="a"}', values: '0x1440 0+120x60' },
            // the deny list refusing a lot is not the box
            { series: 'ratelimit_access_total{outcome="denied",instance="a"}', values: '0x1440 0+6000x60' },
          ],
          [quietAt('1445m', penaltyBox), firesAt('1480m', penaltyBox)],
        ),
        minuteTest(
          [
            // 2 req/s yesterday and today: the usual, not an attack
            { series: 'ratelimit_access_total{outcome="penalty_box",instance="a"}', values: '0+120x1500' },
          ],
          [quietAt('1480m', penaltyBox)],
        ),
        minuteTest(
          [
            // a few boxed callers retrying now and then, on a brand-new deployment: under 1 req/s
            { series: 'ratelimit_access_total{outcome="penalty_box",instance="a"}', values: '0+30x60' },
          ],
          [quietAt('40m', penaltyBox)],
        ),
      ],
    },
    {
      title: 'RateLimitNearLimit fires when over 20% of admitted calls are near the limit for an hour, not below',
      tests: [
        minuteTest(
          [
            { series: 'ratelimit_decisions_total{rule="fairness-pro",result="allowed"}', values: '0+100x200' },
            { series: 'ratelimit_near_limit_total{rule="fairness-pro"}', values: '0+30x200' },
            { series: 'ratelimit_decisions_total{rule="fairness-free",result="allowed"}', values: '0+100x200' },
            { series: 'ratelimit_near_limit_total{rule="fairness-free"}', values: '0+10x200' },
            // security rules are left out: brute force is not a capacity signal
            { series: 'ratelimit_decisions_total{rule="auth-login-per-ip",result="allowed"}', values: '0+100x200' },
            { series: 'ratelimit_near_limit_total{rule="auth-login-per-ip"}', values: '0+90x200' },
          ],
          [firesAt('150m', nearLimit, { rule: 'fairness-pro' })],
        ),
      ],
    },
    {
      title: 'the store alerts read redis_exporter series: key count over 80% of the bound (masters only), memory, policy',
      tests: [
        minuteTest(
          [
            { series: 'redis_db_keys{job="ratelimit-redis",instance="m1",db="db0"}', values: `${over}x60` },
            // a replica holds the same keys: not counted twice
            { series: 'redis_db_keys{job="ratelimit-redis",instance="r1",db="db0"}', values: `${over}x60` },
            {
              series: 'redis_instance_info{job="ratelimit-redis",instance="m1",role="master",maxmemory_policy="noeviction"}',
              values: '1x60',
            },
            {
              series: 'redis_instance_info{job="ratelimit-redis",instance="r1",role="slave",maxmemory_policy="allkeys-lru"}',
              values: '1x60',
            },
            { series: 'redis_memory_max_bytes{job="ratelimit-redis",instance="m1"}', values: `${max}x60` },
            { series: 'redis_memory_used_bytes{job="ratelimit-redis",instance="m1"}', values: `${Math.ceil(max * 0.85)}x60` },
            { series: 'redis_memory_max_bytes{job="ratelimit-redis",instance="r1"}', values: `${max}x60` },
            { series: 'redis_memory_used_bytes{job="ratelimit-redis",instance="r1"}', values: `${Math.ceil(max * 0.5)}x60` },
          ],
          [
            firesAt('45m', keys),
            firesAt('45m', alert('RateLimitStoreMemoryHigh'), { instance: 'm1' }),
            firesAt('45m', alert('RateLimitStoreMisconfigured'), { instance: 'r1' }),
          ],
        ),
        minuteTest(
          [
            // just under 80% on the master; the replica's copy would push a naive sum over it
            { series: 'redis_db_keys{job="ratelimit-redis",instance="m1",db="db0"}', values: `${Math.floor(bound * 0.79)}x60` },
            { series: 'redis_db_keys{job="ratelimit-redis",instance="r1",db="db0"}', values: `${Math.floor(bound * 0.79)}x60` },
            {
              series: 'redis_instance_info{job="ratelimit-redis",instance="m1",role="master",maxmemory_policy="noeviction"}',
              values: '1x60',
            },
            {
              series: 'redis_instance_info{job="ratelimit-redis",instance="r1",role="slave",maxmemory_policy="noeviction"}',
              values: '1x60',
            },
          ],
          [quietAt('45m', keys)],
        ),
      ],
    },
  ];

  for (const { title, states, tests } of CASES) {
    it(title, async () => {
      states?.();
      await expectPromtoolPasses(generateAlerts(design).content, tests);
    });
  }
});

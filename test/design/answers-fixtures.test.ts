/**
 * Designs a reviewer signs without edits, from answers files of different kinds of API
 * (test/design/fixtures/*.answers.json): every number traced to an answer or a listed
 * assumption, per-IP limits sized per address, product decisions never made silently, fail
 * modes as answered, and sections that state one fact once.
 */
import { readFileSync } from 'node:fs';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { buildDesign } from '../../src/design/build.js';
import { checkDesign } from '../../src/constraints/index.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';

const DATE = '2026-12-03';

function fixture(name: string): { design: Design; md: string } {
  const file = new URL(`./fixtures/${name}.answers.json`, import.meta.url);
  const answers = parseAnswers(readFileSync(file, 'utf8'), `${name}.answers.json`);
  const design = buildDesign(answers, { date: DATE });
  const md = renderMarkdown({ design, checks: checkDesign(design) }, { layout: 'single' })[0]?.content ?? '';
  return { design, md };
}

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};

/** Rows of the first table whose header starts with the given cells. */
function rows(markdown: string, ...header: string[]): string[][] {
  const table = Lexer.lex(markdown, { gfm: true }).find(
    (t): t is Tokens.Table => t.type === 'table' && header.every((h, i) => (t as Tokens.Table).header[i]?.text === h),
  );
  if (!table) throw new Error(`no table ${header.join(' | ')}`);
  return table.rows.map((r) => r.map((c) => c.text));
}

/** Every rule with a rate says where its numbers come from, and every assumption it rests on names it. */
function expectTraced(d: Design, md: string): void {
  const assumedFields = new Set(d.assumptions.flatMap((a) => a.field.split(', ')));
  for (const r of d.rules.filter((x) => x.source === 'generated' && x.rate)) {
    expect(r.derivation, r.id).toBeTruthy();
    expect(md).toContain(`- \`${r.id}\`: `);
    for (const f of r.inputs ?? []) {
      if (!assumedFields.has(f)) continue;
      const a = d.assumptions.find((x) => x.field.split(', ').includes(f));
      expect(a?.ruleIds ?? [], `${f} feeds ${r.id}`).toContain(r.id);
    }
  }
}

describe('anonymous, IP-only read API behind a CDN and nginx, CGNAT users, 20,000 req/s peak, no API keys', () => {
  const { design, md } = fixture('anonymous-cgnat');

  it('sizes the per-IP limit per address (client rate x clients behind one address), not from an API-key population', () => {
    const anon = rule(design, 'anonymous-per-ip');
    expect(anon.rate).toEqual({ requests: 200, periodSeconds: 1 });
    expect(anon.derivation).toBe('1 req/s per client x 200 clients behind one address = 200 req/s; burst 2,000 = 10 s of rate');
    // one address is 1% of the peak, not a quarter of it
    expect(anon.rationale).toContain('One address can take at most 1% of the 20,000 req/s peak');
    expect(md).not.toMatch(/clients \(API keys\)|1,000 clients|per-API-key/);
    expect(design.scope.traffic.distinctClients).toBe(0);
    expect(design.assumptions.map((a) => a.field)).not.toContain('traffic.distinctClients');
  });

  it('sizes and watches no store when every rule runs in the gateway, though the answers name Redis', () => {
    expect(design.monitoring.store.config).toBeUndefined();
    expect(design.monitoring.alerts.map((a) => a.name)).not.toContain('RateLimitStoreSlow');
    expect(md).toContain('No rule keeps its state in the store');
    expect(md).not.toContain('redis.conf');
  });

  it('states per-client rate and clients per address as answers, unmarked, and traces every rule', () => {
    const qa = rows(md, 'Question', 'Answer');
    expect(qa.find((r) => r[0] === 'Per client address')?.[1]).toBe(
      '1 req/s per client at its busiest, 200 clients active behind one address',
    );
    expectTraced(design, md);
  });

  it('lists the per-address numbers as assumptions, with the rules they feed, when they are not answered', () => {
    const answers = JSON.parse(readFileSync(new URL('./fixtures/anonymous-cgnat.answers.json', import.meta.url), 'utf8'));
    delete answers.traffic.clientPeakRps;
    delete answers.traffic.clientsPerAddress;
    const d = buildDesign(parseAnswers(JSON.stringify(answers), 'x.json'), { date: DATE });
    const per = d.assumptions.find((a) => a.field === 'traffic.clientsPerAddress');
    expect(per?.text).toMatch(/assumed 25, an office or a mobile carrier's NAT/);
    // search-stops (search, cost 5 by its class) counts at the edge in a rule of its own, sized from the same numbers
    expect(per?.ruleIds).toEqual(['anonymous-per-ip', 'anonymous-per-ip-cost-5']);
    expect(rule(d, 'anonymous-per-ip').derivation).toMatch(
      /^2 req\/s per client \(assumed\) x 25 clients behind one address \(assumed\) = 50 req\/s/,
    );
  });
});

describe('every answer unknown', () => {
  const { design, md } = fixture('unknown-everything');

  it('marks the invented peak and every rule it feeds; no number appears without its source', () => {
    const traffic = design.assumptions.find((a) => a.field === 'traffic.typicalRps, traffic.peakRps');
    expect(traffic?.text).toContain('150 requests/s peak, a placeholder');
    expect(traffic?.ruleIds).toEqual(['global-ceiling', 'fairness-per-api-key']);
    expect(rule(design, 'global-ceiling').derivation).toBe('225 req/s = peak 150 req/s (assumed) x headroom 1.5 (assumed)');
    expect(md).toContain('Feeds: `global-ceiling`, `fairness-per-api-key`.');
    const keys = design.assumptions.find((a) => a.field === 'traffic.distinctClients');
    expect(keys?.text).toMatch(/placeholder/);
    expect(keys?.ruleIds).toEqual(['fairness-per-api-key']);
    expectTraced(design, md);
  });
});

describe('mixed fail modes with plans and exports (reads open, writes and exports closed)', () => {
  const { design, md } = fixture('mixed-fail-modes');

  it('splits each plan rule by fail mode, one bucket (the same key) for both halves', () => {
    const open = rule(design, 'fairness-starter-fail-open');
    const closed = rule(design, 'fairness-starter-fail-closed');
    expect(open).toMatchObject({ failMode: 'open', endpoints: ['list-entries', 'get-entry'] });
    expect(closed).toMatchObject({ failMode: 'closed', endpoints: ['post-entry', 'export-ledger'] });
    expect(open.key).toBe(closed.key);
    expect(closed.burst).toBe(open.burst);
    expect(open.rationale).toContain('Split by fail mode');
    expect(design.rules.some((r) => r.id === 'fairness-starter')).toBe(false);
    // one bucket, so its keys are counted once in the memory bound
    // (and the rules kept in one hash per identity hold one key per identity between them)
    const counted = design.rules.filter((r) => r.layer !== 'edge' && !r.id.endsWith('-fail-closed'));
    const hashes = new Map<string, number>();
    for (const r of counted) if (r.field) hashes.set(r.key ?? '', Math.max(hashes.get(r.key ?? '') ?? 0, r.cardinality?.bound ?? 0));
    expect(design.monitoring.store.estimatedKeys).toBe(
      counted.filter((r) => !r.field).reduce((n, r) => n + (r.cardinality?.bound ?? 0), 0) +
        [...hashes.values()].reduce((n, k) => n + k, 0),
    );
    // both halves are one field of the identity's hash, which the hash row counts once: no pair sentence
    expect(open.field).toBe(closed.field);
    expect(md).not.toContain('the total counts each pair once');
    expect(md).toMatch(/\| hash `rl:\{[^`]+\}` \|/);
  });

  it('never makes an endpoint fail differently from its class, and shows the effective mode per class', () => {
    for (const f of design.failModes ?? []) expect(f.effective, f.endpointClass).toBe(f.answered);
    const table = rows(md, 'Class', 'Answered', 'Effective');
    expect(table.map((r) => [r[0], r[1], r[2]])).toEqual([
      ['read', 'fail open', 'fail open'],
      ['write', 'fail closed', 'fail closed'],
      ['export', 'fail closed', 'fail closed'],
    ]);
    // no closed rule covers a read endpoint: a store outage never answers 503 on GET
    const reads = design.scope.endpoints.filter((e) => e.class === 'read').map((e) => e.name);
    const closedOnReads = design.rules.filter(
      (r) => r.failMode === 'closed' && r.layer === 'middleware' && r.endpoints.some((e) => reads.includes(e)),
    );
    expect(closedOnReads.map((r) => r.id)).toEqual([]);
  });

  it('a hand-written rule that makes reads fail closed is shown as differing from the answers, in bold', () => {
    const answers = JSON.parse(readFileSync(new URL('./fixtures/mixed-fail-modes.answers.json', import.meta.url), 'utf8'));
    const d = buildDesign(
      parseAnswers(JSON.stringify({ ...answers, rules: [{ id: 'fairness-business-fail-open', failMode: 'closed' }] }), 'x.json'),
      { date: DATE },
    );
    expect(d.failModes?.find((f) => f.endpointClass === 'read')).toMatchObject({ answered: 'open', effective: 'closed' });
    const out = renderMarkdown({ design: d, checks: checkDesign(d) }, { layout: 'single' })[0]?.content ?? '';
    expect(out).toContain('| read | fail open | **fail closed** |');
    expect(out).toContain('**Fail mode differs from the answers** for read');
  });

  it('a hand-written override of the base id applies to both halves', () => {
    const answers = JSON.parse(readFileSync(new URL('./fixtures/mixed-fail-modes.answers.json', import.meta.url), 'utf8'));
    const d = buildDesign(parseAnswers(JSON.stringify({ ...answers, rules: [{ id: 'fairness-starter', burst: 60 }] }), 'x.json'), {
      date: DATE,
    });
    expect(rule(d, 'fairness-starter-fail-open')).toMatchObject({ burst: 60, source: 'overridden' });
    expect(rule(d, 'fairness-starter-fail-closed')).toMatchObject({ burst: 60, source: 'overridden' });
    expect(d.rules.some((r) => r.id === 'fairness-starter')).toBe(false);
  });

  it('derives the API-key population from the stated tenants, never an invented 1,000', () => {
    expect(design.scope.traffic.distinctTenants).toBe(40000);
    expect(md).not.toContain('1,000 clients');
    expect(checkDesign(design).every((c) => c.passed)).toBe(true);
  });
});

describe('rolling 30-day quotas with soft overage, and a plan without a quota', () => {
  const { design, md } = fixture('rolling-soft-overage');

  it('labels the rolling quota as what it is in the matrix and the algorithms, and describes it the same way in the quota section', () => {
    // the algorithm in each rule's details under the matrix
    for (const id of ['quota-growth', 'quota-scale']) {
      const details = md.slice(md.indexOf(`#### Rule \`${id}\``));
      expect(details.slice(0, details.indexOf('\n- **Tier:**') + 200)).toContain('**Algorithm:** rolling window of daily counters.');
    }
    expect(design.algorithms.find((a) => a.limitClass === 'quota')?.label).toBe('rolling window of daily counters');
    expect(md).toContain('A rolling 30-day window: usage is counted in one bucket per day (UTC)');
    expect(md).not.toMatch(/quota[^\n]*fixed window/i);
    expect(rule(design, 'quota-growth').rationale).toContain('summed over the last 30 days');
  });

  it('never invents an overage cap silently: a stated cap is used, a missing one is an open decision with the rule it feeds', () => {
    expect(rule(design, 'quota-scale')).toMatchObject({ rate: { requests: 7500000 }, quotaBackstop: { quota: 5000000, assumed: false } });
    expect(rule(design, 'quota-scale').derivation).toContain('stated overage cap');
    const cap = design.assumptions.find((a) => a.field === 'plans.overageCap');
    expect(cap?.text).toMatch(/^Open product decision: Growth lets calls pass past the quota/);
    expect(cap?.ruleIds).toEqual(['quota-growth']);
    expect(md).toContain(
      'The limiter refuses calls past 1,200,000 for Growth (an assumed cap, an open product decision: see the assumptions)',
    );
    expect(md).toContain('7,500,000 for Scale (the overage cap the answers set)');
  });

  it('shows no exhaustion behaviour for a plan that has no quota', () => {
    const plans = rows(md, 'Plan', 'Promised rate');
    expect(plans.find((r) => r[0] === 'Free')?.[4]).toBe('no quota: nothing to exhaust');
    expect(plans.find((r) => r[0] === 'Growth')?.[4]).toBe('soft-warning; refused past 1,200,000 (assumed)');
    expect(plans.find((r) => r[0] === 'Scale')?.[4]).toBe('pay-per-overage; refused past 7,500,000');
  });
});

describe('a framework without an adapter, one instance, no shared store', () => {
  const { design, md } = fixture('koa-in-process');

  it('never says time comes from Redis TIME when there is no Redis', () => {
    expect(design.rules.every((r) => r.primitive !== 'redis-lua')).toBe(true);
    expect(md).not.toContain('Redis TIME');
    expect(design.enforcement.atomicityNote).toContain('one Node thread');
  });

  it('says a kill switch is a flag read on every request (middleware rules), without a deploy', () => {
    for (const k of design.rollout.killSwitches) expect(k.how).toMatch(/without a deploy/);
    expectTraced(design, md);
  });
});

describe('kill switches and the example nginx: the wording matches the artefact', () => {
  const { design } = fixture('anonymous-cgnat');

  it('an edge rule is turned off by commenting out its limit_req line and reloading nginx, in the document and in the config', () => {
    const how = design.rollout.killSwitches.find((k) => k.ruleId === 'anonymous-per-ip')?.how;
    expect(how).toBe('comment out its limit_req line in gateway/nginx-server.conf and reload nginx (a reload, no application deploy)');
    const server = generateNginx(design).find((f) => f.path.endsWith('nginx-server.conf'))?.content ?? '';
    // the config says it in the document's own words
    expect(server).toContain(`anonymous-per-ip (kill switch: ${how})`);
    // an edge rule has no runtime flag, and the config does not pretend it has one
    expect(server).not.toContain('ratelimit.anonymous-per-ip.mode');
    expect(server).toMatch(/limit_req zone=rl_anonymous_per_ip burst=2000 nodelay;/);
  });
});

describe('the example 429 is what the layer that refuses sends', () => {
  it('an all-edge design shows the body and Retry-After of the generated nginx, not a middleware body it never sends', () => {
    const { design, md } = fixture('anonymous-cgnat');
    const server = generateNginx(design).find((f) => f.path.endsWith('nginx-server.conf'))?.content ?? '';
    const sent = JSON.parse(JSON.parse(`"${/return 429 "((?:[^"\\]|\\.)*)";/.exec(server)?.[1] ?? ''}"`));
    const retryAfter = /add_header Retry-After (\d+) always;/.exec(server)?.[1];
    const block =
      /```http\nHTTP\/1\.1 429 Too Many Requests\nContent-Type: application\/problem\+json\nRetry-After: (\d+)\nCache-Control: no-store\n\n([\s\S]*?)\n```/.exec(
        md,
      );
    expect(block?.[1]).toBe(retryAfter);
    expect(JSON.parse(block?.[2] ?? 'null')).toEqual(sent);
    expect(md).not.toContain('"rule": "default"');
  });
});

describe('dual-key auth on a Redis Cluster: the hot slot stated with numbers', () => {
  const { design } = fixture('cluster-auth');

  it('says every key of a flow sits on one shard and sizes its worst case from the design itself', () => {
    const text = design.enforcement.dualKeyAuth ?? '';
    expect(text).not.toMatch(/fine for auth volumes|no hot spot/);
    expect(text).toContain('2 flows ({auth:login}, {auth:signup}) on at most 2 shards');
    const ceiling = rule(design, 'global-ceiling');
    expect(text).toContain(
      `all the traffic the ceiling admits goes to one flow (the ceiling admits ${ceiling.rate!.requests.toLocaleString('en-US')} req/s)`,
    );
    expect(text).toMatch(/the flow's keys can reach [\d.,]+ (MiB|GiB)/);
  });
});

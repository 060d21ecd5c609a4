/**
 * The review answers (test/fixtures/review/): what the document states about rules the answers
 * wrote by hand must match what the complete-rules check accepts and what the code runs.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { generateCode } from '../../src/codegen/index.js';
import { compileDesign } from '../../src/codegen/middleware/compile.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { inputFromAnswers } from './fixtures.js';

const review = (name: string): unknown => {
  const raw = JSON.parse(readFileSync(new URL(`../fixtures/review/${name}.answers.json`, import.meta.url), 'utf8'));
  delete raw.$schema;
  return raw;
};

describe('hand-written window rules', () => {
  const input = inputFromAnswers(review('express-cloudflare'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const details = (id: string): string => md.slice(md.indexOf(`#### Rule \`${id}\``)).split('\n#### ')[0] ?? '';

  it('pass the complete-rules check without a burst', () => {
    expect(input.checks.find((c) => c.id === 'complete-rules')?.passed).toBe(true);
  });

  it('say they have no burst, as a window, instead of flagging it as not stated', () => {
    for (const id of ['export-per-tenant', 'mfa-per-user']) {
      expect(details(id), id).toContain('**Burst:** none (window).');
      expect(md).toMatch(new RegExp(`\\| \\[\`${id}\`\\][^\\n]*, no burst \\(window\\) \\|`));
    }
    expect(md).not.toContain(', burst not stated |');
    expect(md).not.toContain('**Burst:** **not stated**');
  });
});

describe('memory bound of rules sharing one identity hash', () => {
  const input = inputFromAnswers(review('graphql-hono'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';

  it("counts the API key's hash once per key, with every field it can hold (each plan's quota in the one field quota)", () => {
    const store = input.design.monitoring.store;
    const hash = store.hashes?.find((h) => h.key === 'rl:{ak:<api-key-id>}');
    expect(hash?.keys).toBe(2_000);
    const inHash = input.design.rules.filter((r) => r.key === 'rl:{ak:<api-key-id>}');
    // the plans' quotas share the field quota: one field, not one per plan
    expect(new Set(inHash.filter((r) => r.tier === 'quota').map((r) => r.field))).toEqual(new Set(['quota']));
    for (const r of inHash) expect(r.bytesPerKey).toBe(hash?.bytesPerKey);
    expect(md).toContain(`The bound is a worst case: ${store.estimatedBytes.toLocaleString('en-US')} bytes`);
  });
});

describe('rollout of nginx edge rules', () => {
  it('says the edge rules have no flag and leave shadow mode together, under one limit_req_dry_run', () => {
    const input = inputFromAnswers(review('graphql-hono'));
    const step = input.design.rollout.steps.find((s) => s.title === 'Enforce general limits')!;
    expect(step.ruleIds).toEqual(expect.arrayContaining(['global-ceiling', 'anonymous-per-ip']));
    expect(step.detail).toContain(
      'The edge rules (global-ceiling, anonymous-per-ip) have no flag and leave shadow mode together: gateway/nginx-server.conf runs them under one limit_req_dry_run',
    );
    const files = generateCode(input.design);
    const server = files.find((f) => f.path === 'gateway/nginx-server.conf')!.content;
    expect(server.match(/^limit_req_dry_run on;$/gm)).toHaveLength(1);
  });
});

describe('cost-weighted scenario on a rule with no cost-1 endpoint', () => {
  it('calls the cheapest endpoint the rule has, not a cost-1 endpoint that does not exist', () => {
    const input = inputFromAnswers(review('graphql-hono'));
    const s = input.design.scenarios.find((x) => x.id === 'cost-weighted-exhaustion')!;
    expect(s.ruleIds).toEqual(['fairness-starter-fail-open']);
    expect(s.steps).toEqual([
      'Call graphql-search until refused.',
      // the public endpoint counts an API key too (it allows anonymous callers as well)
      'Then call graphql-public (cost 2), the cheapest endpoint of this rule.',
    ]);
    expect(s.expected).toContain('a call to graphql-public (cost 2) sent right after is refused too');
    expect(s.expected).toContain('the refused call waits for 20 tokens, graphql-public for 2');
    expect(s.expected).not.toContain('a cost-1 call sent');
  });
});

describe('the rollout intro against the gateway file as shipped', () => {
  const rolloutIntro = (md: string): string => md.slice(md.indexOf('## 9. Rollout'), md.indexOf('### 9.1 Steps'));

  it('does not promise shadow mode for edge rules the generated kong.yaml enforces from its first deploy', () => {
    const input = inputFromAnswers(review('fastify-kong'));
    const kong = parseYaml(generateCode(input.design).find((f) => f.path === 'gateway/kong.yaml')!.content);
    const plugins = [
      ...(kong.plugins ?? []),
      ...kong.services.flatMap((s: any) => [...(s.plugins ?? []), ...(s.routes ?? []).flatMap((r: any) => r.plugins ?? [])]),
    ];
    const enforcing = plugins
      .filter((p: any) => p.enabled !== false && (p.tags ?? []).some((t: string) => t.startsWith('rule-')))
      .map((p: any) => (p.tags as string[]).find((t) => t.startsWith('rule-'))!.slice('rule-'.length));
    expect(enforcing).toContain('global-ceiling');
    const intro = rolloutIntro(renderMarkdown(input, { layout: 'single' })[0]?.content ?? '');
    expect(intro).not.toContain('Every rule starts in shadow mode');
    expect(intro).toContain('Every rule of the middleware and the outbound client starts in shadow mode for 7 days');
    for (const id of enforcing) expect(intro).toMatch(new RegExp(`The edge rules \\([^)]*\`${id}\`[^)]*\\) refuse from the first deploy`));
    expect(intro).toContain('gateway/kong.yaml ships each plugin enabled');
  });

  it('keeps the plain promise where the generated nginx file runs the edge rules in dry-run', () => {
    const input = inputFromAnswers(review('graphql-hono'));
    const server = generateCode(input.design).find((f) => f.path === 'gateway/nginx-server.conf')!.content;
    expect(server).toMatch(/^limit_req_dry_run on;$/m);
    expect(rolloutIntro(renderMarkdown(input, { layout: 'single' })[0]?.content ?? '')).toContain(
      'Every rule starts in shadow mode for 7 days: it is evaluated and measured,\nbut rejects nothing.',
    );
  });
});

describe('the Fastify API behind Kong: one set of numbers in the matrix, design.ts and kong.yaml', () => {
  const input = inputFromAnswers(review('fastify-kong'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const files = generateCode(input.design);

  it('every middleware rule of the matrix is compiled with its numbers, fail mode, headers and plan', () => {
    const compiled = compileDesign(input.design).rules;
    const middleware = input.design.rules.filter((r) => r.layer === 'middleware');
    expect(compiled.map((r) => r.id).sort()).toEqual(middleware.map((r) => r.id).sort());
    for (const r of middleware) {
      const c = compiled.find((x) => x.id === r.id)!;
      expect([c.limit, c.periodSeconds, c.burst, c.failMode, c.headers, c.plan], r.id).toEqual([
        r.rate?.requests,
        r.rate?.periodSeconds,
        typeof r.burst === 'number' ? r.burst : null,
        r.failMode,
        r.headers,
        r.plan ?? null,
      ]);
      expect(md, r.id).toContain(`| [\`${r.id}\`](#rule-${r.id}) |`);
    }
    // export-project's cost 5 is charged by the fairness rows, not by the quotas (which count calls)
    expect(compiled.find((x) => x.id === 'fairness-partner-fail-open')?.costByEndpoint).toEqual([['export-project', 5]]);
    expect(compiled.find((x) => x.id === 'quota-partner')?.costByEndpoint).toEqual([]);
  });

  it("the ceiling's 1,800 per second is the number in kong.yaml and in the document", () => {
    const kong = parseYaml(files.find((f) => f.path === 'gateway/kong.yaml')!.content);
    const ceiling = kong.services.flatMap((s: any) => s.plugins ?? []).find((p: any) => (p.tags ?? []).includes('rule-global-ceiling'));
    expect([ceiling.config.limit, ceiling.config.window_size]).toEqual([[1800], [1]]);
    expect(md).toContain(
      '| [`global-ceiling`](#rule-global-ceiling) | all requests | global | 1,800 / 1 s, no burst (window) | fail open | edge |',
    );
  });

  it('the header names the document lists are the x-ratelimit ones the runtime sends', () => {
    expect(input.design.contract.headers.map((h) => h.name)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(input.design.contract.quotaHeaders.map((h) => h.name)).toEqual([
      'X-RateLimit-Quota-Limit',
      'X-RateLimit-Quota-Remaining',
      'X-RateLimit-Quota-Reset',
      'Quota-Exceeded',
    ]);
    expect(files.find((f) => f.path === 'middleware/design.ts')!.content).toContain('headerConvention: "x-ratelimit"');
  });
});

describe('Hono behind Cloudflare: plans with calendar-month quotas, the memory fallback, a hybrid read rule, an outbound tokens-per-minute limit', () => {
  const raw = review('hono-cloudflare-quotas') as Record<string, any>;
  const input = inputFromAnswers(raw);
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const files = generateCode(input.design);
  const file = (path: string): string => files.find((f) => f.path === path)?.content ?? '';
  const alerts = parseYaml(file('monitoring/ratelimit-alerts.yaml'));
  const alert = (name: string): any => alerts.groups.flatMap((g: any) => g.rules).find((r: any) => r.alert === name);

  it('says the fail-open rules the memory fallback covers count in memory when the store refuses writes, not that they admit unchecked', () => {
    const fallback = input.design.enforcement.fallback?.ruleIds ?? [];
    expect(fallback).toContain('reads-per-key');
    // the runtime shipped decides those rules in memory on any store failure, an OOM refusal included
    expect(file('middleware/design.ts')).toContain('memoryFallback: true');
    const store = md.slice(md.indexOf('Reaching it means the bound was wrong'));
    expect(store).toContain(
      `the fail-open rules with the memory fallback (${fallback.join(', ')}) count in each instance's memory instead`,
    );
    expect(store.split('\n')[0]).not.toContain('admit requests unchecked');
    expect(alert('RateLimitStoreFailures').annotations.description).not.toContain('fail-open rules are unprotected');
    expect(alert('RateLimitStoreMemoryHigh').annotations.description).not.toContain('fail-open rules stop limiting');
    // without the fallback the rules do admit unchecked, and the document says so
    const bare = inputFromAnswers({ ...raw, failure: { byClass: raw.failure.byClass } });
    const bareMd = renderMarkdown(bare, { layout: 'single' })[0]?.content ?? '';
    expect(bareMd).toContain('reads-per-key) admit requests unchecked and count ratelimit_fail_open_events_total');
    expect(bareMd).toContain('| Fail-closed rules are refusing traffic and fail-open rules are unprotected. |');
  });

  it("counts the hybrid's local buckets in the migration's new worst case, as the worst-case table does", () => {
    const hybrid = input.design.enforcement.hybrid!;
    expect(hybrid.ruleIds).toEqual(['reads-per-key']);
    // the over-admission the shipped runtime is built with (design.ts: hybrid.overAdmission)
    expect(file('middleware/design.ts')).toMatch(
      new RegExp(`hybrid: \\{\\s*localBurst: ${hybrid.localBurst},\\s*instances: 5,\\s*overAdmission: ${hybrid.overAdmission},`),
    );
    const items = input.design.migration!.items.filter((i) => i.endpoint?.name === 'list-metrics' || i.endpoint?.name === 'get-metric');
    expect(items).toHaveLength(2);
    // burst 500 + 100/s x 60 s, plus the fleet's local buckets
    for (const i of items) expect(i.newWithinWindow).toBe(500 + 100 * 60 + hybrid.overAdmission);
    expect(md).toContain(
      `| reads-per-key: 100 per 1 s, burst 500, + ${hybrid.overAdmission} from the instances' local buckets (6,550) | 6,550 | WARNING: looser |`,
    );
  });

  it('tells the outbound caller that the bucket counts calls unless each passes its tokens as its cost, as the shipped client does', () => {
    const client = file('outbound/client.ts');
    expect(client).toContain('readonly cost?: number;');
    expect(client).toContain("'COST_TOO_HIGH'");
    expect(file('outbound/providers.ts')).toContain('burst: 1200');
    expect(md).toContain('the bucket counts calls.');
    expect(md).toContain('schedule(provider, fn, \\{ cost \\})');
    expect(md).toContain("A call costing more than the bucket's burst (OpenAI 1,200) never fits: it is refused at once with COST_TOO_HIGH");
  });
});

/**
 * Review answers unlike the examples (test/fixtures/review/): Fastify behind nginx with no API
 * keys, Express behind four Envoy nodes with plans and an existing limiter, Koa behind AWS API
 * Gateway with an edge rule split by endpoint cost. What the document states must be what the
 * shipped files do.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { generateCode } from '../../src/codegen/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { rateLimitHeaders } from '../../src/runtime/middleware/responses.js';
import { inputFromAnswers } from './fixtures.js';

const review = (name: string): unknown => {
  const raw = JSON.parse(readFileSync(new URL(`../fixtures/review/${name}.answers.json`, import.meta.url), 'utf8'));
  delete raw.$schema;
  return raw;
};

describe('Koa behind AWS API Gateway: the per-IP edge rule split by endpoint cost', () => {
  const input = inputFromAnswers(review('koa-aws-costs'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const aws = JSON.parse(generateCode(input.design).find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);
  const details = (id: string): string => md.slice(md.indexOf(`#### Rule \`${id}\``)).split('\n#### ')[0] ?? '';

  it('states for each part the fail mode of the classes it keeps, in the matrix, its details and the WAF rule', () => {
    const parts = ['anonymous-per-ip', 'anonymous-per-ip-cost-4', 'anonymous-per-ip-cost-20'];
    const modes = parts.map((id) => input.design.rules.find((r) => r.id === id)?.failMode);
    // tile (read) and geocode (search) are answered open, route-plan (expensive) closed
    expect(modes).toEqual(['open', 'open', 'closed']);
    parts.forEach((id, i) => {
      const mode = modes[i]!;
      expect(md, id).toMatch(new RegExp(`\\| \\[\`${id}\`\\]\\(#rule-${id}\\) \\|[^\\n]*\\| fail ${mode} \\| edge \\|`));
      const stated = [...details(id).matchAll(/It states fail (open|closed)/g)].map((m) => m[1]);
      expect(stated, id).toEqual([mode]);
      const waf = aws.wafRateBasedRules.find(
        (w: { VisibilityConfig: { MetricName: string } }) => w.VisibilityConfig.MetricName === `rl_${id}`,
      );
      expect(waf._note, id).toContain(`${id}: fail ${mode} if its count moves to a shared store`);
    });
    // a part that keeps one class names that class alone, not the classes of the rule it was split from
    expect(details('anonymous-per-ip-cost-4')).toContain("It states fail open, the answers' mode for search:");
    expect(md).not.toContain("the strictest of the answers' modes for its classes (expensive closed, read and search open)");
  });
});

describe('Express behind four Envoy nodes, x-ratelimit headers', () => {
  const input = inputFromAnswers(review('express-envoy-plans'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const envoy = parseYaml(generateCode(input.design).find((f) => f.path === 'gateway/envoy-local-ratelimit.yaml')!.content);

  it('ships an Envoy that adds no rate-limit headers, as the document says of the edge rules', () => {
    expect(input.design.contract.convention).toBe('x-ratelimit');
    expect(md).toContain('The gateway exposes no remaining count: these rules send\nno rate-limit headers, on refusals or otherwise.');
    const filters = envoy.http_connection_manager.http_filters as { name: string; typed_config: Record<string, unknown> }[];
    const service = filters.find((f) => f.name === 'envoy.filters.http.ratelimit')!.typed_config;
    // DRAFT_VERSION_03 appends Envoy's own X-RateLimit-* values to the application's, on every response the service counted
    expect(service.enable_x_ratelimit_headers).toBe('OFF');
    // the only header the edge adds is Retry-After on its 429s
    const added = JSON.stringify(envoy).match(/"key":"[^"]+"/g) ?? [];
    expect(new Set(added)).toEqual(new Set(['"key":"retry-after"']));
  });
});

describe('words for identities the design has', () => {
  it('a design with sessions only (no API keys, tenants, plans or quotas) is not told its middleware rules need them', () => {
    const input = inputFromAnswers(review('fastify-nginx-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const layer = md.split('\n').find((l) => l.startsWith('| middleware | fastify middleware'))!;
    expect(layer).toContain("| Limits that need the caller's identity (session), weighted costs or exact auth counting.");
    expect(layer).not.toMatch(/API key|tenant|plan|quota/);
    const atomic = md.slice(md.indexOf('### 4.1 Atomic check-and-consume'), md.indexOf('### 4.2 '));
    expect(atomic).toContain("The limits of one identity (one hash tag, such as one session's fairness bucket) are checked");
    expect(atomic).not.toMatch(/tenant|quota/);
  });

  it('the overage alert of a design whose quotas count API keys sends the on-call to find API keys, not tenants', () => {
    const input = inputFromAnswers(review('express-envoy-plans'));
    const alerts = parseYaml(generateCode(input.design).find((f) => f.path === 'monitoring/ratelimit-alerts.yaml')!.content);
    const overage = alerts.groups
      .flatMap((g: { rules: unknown[] }) => g.rules)
      .find((r: { alert: string }) => r.alert === 'RateLimitQuotaOverage');
    expect(overage.annotations.description).toContain('The counter has no API key label');
    expect(overage.annotations.description).toContain('find the API keys in overage');
    expect(overage.annotations.description).not.toContain('tenant');
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    expect(md.split('\n').find((l) => l.startsWith('| RateLimitQuotaOverage |'))).toContain('find the API keys in overage');
  });
});

describe('Kong edge rules counted in the Redis the design names', () => {
  it("are not said to be independent of the limiter's store, where kong.yaml counts them there", () => {
    const raw = JSON.parse(readFileSync(new URL('../fixtures/edge-cost/kong-search.answers.json', import.meta.url), 'utf8'));
    delete raw.$schema;
    const input = inputFromAnswers(raw);
    const kong = generateCode(input.design).find((f) => f.path === 'gateway/kong.yaml')!.content;
    expect(kong).toContain('replace http://app.internal:3000 and redis.internal with your upstream and limiter Redis');
    expect(parseYaml(kong).services[0].routes[0].plugins[0].config.policy).toBe('redis');
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const failModes = md.slice(md.indexOf('### 2.2 Fail mode per endpoint class'), md.indexOf('### 2.3 '));
    expect(failModes).not.toContain("Edge rules do not depend on the limiter's store");
    expect(failModes).toContain("`anonymous-per-ip`: It keeps its count in the design's store");
  });
});

describe('weighted calls of other classes', () => {
  it('are called costlier, not expensive (the name of a class they are not in)', () => {
    const input = inputFromAnswers(review('fastify-nginx-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    // save-favourite is a write of cost 2
    expect(md).toContain('Costlier calls draw more tokens from the same bucket (save-favourite = 2)');
    expect(md).not.toContain('Expensive calls draw more tokens');
  });
});

describe('Hono behind AWS API Gateway on Valkey: sessions, users and anonymous visitors', () => {
  const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const aws = JSON.parse(generateCode(input.design).find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);

  it("never sends a WAF-blocked client back before WAF stops blocking: Retry-After is the window plus AWS's stated detection delay", () => {
    const rules = aws.wafRateBasedRules as {
      Statement: { RateBasedStatement: { EvaluationWindowSec: number } };
      Action: { Block: { CustomResponse: { ResponseHeaders: { Name: string; Value: string }[] } } };
    }[];
    expect(rules.map((r) => r.Statement.RateBasedStatement.EvaluationWindowSec)).toEqual([60, 60]);
    for (const r of rules) {
      const sent = Number(r.Action.Block.CustomResponse.ResponseHeaders.find((h) => h.Name === 'Retry-After')?.Value);
      // AWS: WAF may go on blocking for up to ~30 s after the rate over the window has fallen
      expect(sent).toBeGreaterThanOrEqual(r.Statement.RateBasedStatement.EvaluationWindowSec + 30);
    }
    const body = JSON.parse(aws.wafCustomResponseBodies['rl-too-many-requests'].Content);
    expect(body.retryAfterSeconds).toBe(90);
    // the document's example of the WAF refusal states what the file sends
    const example = md.slice(md.indexOf('When `anonymous-per-ip`, `anonymous-per-ip-cost-5` refuse a call at the edge'));
    expect(example).toContain('Retry-After: 90\n');
    expect(example).toContain('so Retry-After is the longest window plus 30 s');
  });
});

describe('an MFA step in a design with sessions', () => {
  it('warns that its per-identity row counts per session, which every sign-in renews, unless identify() names the account', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const dual = md.slice(md.indexOf('### 4.5 Dual-key auth limits'), md.indexOf('### 4.6 '));
    expect(input.design.scope.identities).toContain('session');
    expect(dual).toContain('auth-mfa-per-identity counts per session, not per account');
    expect(dual).toContain('auth-login-per-identity admits 10 per 15 min for each username');
    expect(dual).toContain('the userId of the account the code is for');
    // a design without sessions is not told so
    const noSessions = inputFromAnswers({ ...(review('hono-valkey-aws-sessions') as Record<string, unknown>), identities: ['user', 'ip'] });
    const other = renderMarkdown(noSessions, { layout: 'single' })[0]?.content ?? '';
    expect(other).not.toContain('counts per session, not per account');
  });
});

describe('callers known by a session alone', () => {
  it('are browsers that have not signed in where the design knows users: a signed-in caller is counted per user', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const text = input.design.identityFallback!.explanation;
    expect(text).toContain('in the order user, session, client IP');
    expect(text).toContain('a caller identified by a session alone (a browser with a session cookie that has not signed in, say)');
    expect(text).not.toContain('a browser signed in with a session cookie');
  });
});

describe('a daily fixed window of the middleware', () => {
  it('says when its window starts again: at 00:00 UTC, where the runtime aligns it on the epoch', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const row = md.split('\n').find((l) => l.startsWith('| `comments-per-user-daily` | middleware | fixed window |'))!;
    expect(row).toContain('2 x 200');
    expect(row).toContain('a new one starts each day at 00:00 UTC');
  });
});

describe('where the time of a decision comes from', () => {
  it("names the fixed window the instance's own clock names, where the section says no decision reads an application clock", () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const atomic = md.slice(md.indexOf('### 4.1 Atomic check-and-consume'), md.indexOf('### 4.2 '));
    expect(atomic).toContain('never from application clocks');
    expect(atomic).toContain(
      'Not so for the fixed window of comments-per-user-daily: the instance names the current window from its own clock',
    );
  });
});

describe('where the AWS edge refusals are counted', () => {
  it('sends the on-call to the WAF metric the AWS file names for the per-IP rules, and to API Gateway for its throttle', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const aws = JSON.parse(generateCode(input.design).find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);
    const names = (aws.wafRateBasedRules as { VisibilityConfig: { MetricName: string } }[]).map((w) => w.VisibilityConfig.MetricName);
    expect(names).toEqual(['rl_anonymous-per-ip', 'rl_anonymous-per-ip-cost-5']);
    const text = input.design.monitoring.edge!.text;
    expect(text).toContain('AWS/WAFV2 BlockedRequests');
    for (const n of names) expect(text).toContain(n);
    expect(text).toContain('throttles (global-ceiling) in CloudWatch');
  });
});

describe('x-ratelimit headers', () => {
  it('say the reset is a delay, which is what the runtime sends, not the Unix time some users of the names send', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    const convention = md.slice(md.indexOf('### 5.1 Header convention'), md.indexOf('### 5.2 '));
    const sent = rateLimitHeaders(
      'x-ratelimit',
      {
        id: 'r',
        limitHeader: ['X-RateLimit-Limit', '10'],
        s: { limit: 10, remaining: 0, resetSeconds: 5, windowSeconds: 5, overQuota: 0 },
      },
      null,
    );
    expect(new Map(sent).get('X-RateLimit-Reset')).toBe('5');
    expect(convention).not.toContain('(GitHub, Twitter style)');
    expect(convention).toContain('X-RateLimit-Reset counts seconds from now, not the Unix time');
  });
});

describe('rollout of edge rules that have no flag', () => {
  it('says how the AWS edge rules held back in shadow are enforced, where the step tells the rules to switch to "enforce"', () => {
    const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
    const step = input.design.rollout.steps.find((s) => s.title === 'Enforce general limits')!;
    const edge = input.design.rules.filter((r) => r.layer === 'edge').map((r) => r.id);
    expect(edge).toEqual(['global-ceiling', 'anonymous-per-ip', 'anonymous-per-ip-cost-5']);
    for (const id of edge) expect(step.ruleIds).toContain(id);
    // the shadow step held the WAF rules at Count and the stage throttle out: this step undoes both
    const shadow = input.design.rollout.steps[0]!.detail;
    expect(shadow).toContain("set the WAF rules' action to Count until this step is over");
    expect(step.detail).toContain('The edge rules (global-ceiling, anonymous-per-ip, anonymous-per-ip-cost-5) have no flag');
    expect(step.detail).toContain("set the WAF rules' action back to Block and add the stage throttle the shadow step held back");
  });
});

describe('what API Gateway admits under a stage throttle sizes the key bounds', () => {
  const input = inputFromAnswers(review('hono-valkey-aws-sessions'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const aws = JSON.parse(generateCode(input.design).find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);
  const rule = (id: string) => input.design.rules.find((x) => x.id === id)!;

  it("counts the shipped stage throttle once per API method, as the worst-case table does: each row gets its own methods' buckets", () => {
    const stage = (aws.stageMethodSettings as { ResourcePath: string; HttpMethod: string; ThrottlingRateLimit: number }[])[0]!;
    expect(stage).toMatchObject({ ResourcePath: '/*', HttpMethod: '*', ThrottlingRateLimit: 2100 });
    // every endpoint but the health check is an API method with a bucket of its own
    expect(input.design.scope.endpoints.filter((e) => e.class !== 'health')).toHaveLength(8);
    expect(md.split('\n').find((l) => l.startsWith('| `global-ceiling` | edge |'))).toContain('x 8 API methods');
    // a row on one method: 2,100/s reach it; the fairness row's three methods: 6,300/s (not the 2,100 the API was said to admit)
    for (const id of ['webhooks-per-source', 'auth-password-reset-per-ip', 'auth-login-per-identity']) {
      expect(rule(id).cardinality?.bound, id).toBe(Math.ceil(2100 * rule(id).ttlSeconds!));
    }
    expect(rule('fairness-per-user').cardinality?.bound).toBe(Math.min(180_000, 3 * 2100 * rule('fairness-per-user').ttlSeconds!));
    expect(md).toContain('API Gateway admits up to 6,300 req/s to search, feed and post-comment');
    expect(md).not.toContain('the ceiling admits 2,100 req/s');
  });

  it('adds the rows up: every auth flow has a method of its own, so all of them fill at once', () => {
    const store = input.design.rules.filter((r) => r.layer === 'middleware' && r.field === undefined);
    const rows = store.reduce((n, r) => n + (r.cardinality?.bound ?? 0), 0);
    const hash = input.design.monitoring.store.hashes?.reduce((n, h) => n + h.keys, 0) ?? 0;
    expect(input.design.monitoring.store.sharedCeiling).toBeUndefined();
    expect(input.design.monitoring.store.estimatedKeys).toBe(rows + hash);
    expect(md).not.toContain('reached when all traffic under the');
  });
});

describe('NestJS behind Kong on six instances: express-rate-limit in each instance’s memory', () => {
  const input = inputFromAnswers(review('nestjs-kong-cluster-overage'));
  const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
  const items = input.design.migration!.items;
  const item = (existing: string, endpoint: string) =>
    items.find((i) => i.existing.startsWith(`express-rate-limit ${existing}`) && i.endpoint?.name === endpoint)!;

  it('counts the old limiter once per instance (its default MemoryStore), as the fleet-wide new rules are counted', () => {
    expect(input.design.scope.instances).toBe(6);
    // loginLimiter: 10 per 15 min per IP in each of 6 processes: 60 per window, 120 across a reset
    const login = item('loginLimiter', 'login');
    expect(login.oldPerWindow).toBe(60);
    expect(login.oldWithinWindow).toBe(120);
    expect(login.oldNodes).toEqual({ k: 6, each: 20, unit: 'instance', known: true });
    // compared fleet with fleet, the flow's default (100 per 15 min, counted once in Redis) is not
    // looser than the old 120, so nothing is taken over: tighter, but only across a reset (60 per window)
    expect(login.verdict).toBe('tighter');
    expect(login.acrossResetOnly).toBe(true);
    expect(login.newWithinWindow).toBe(100);
    expect(login.note).toContain(
      "in each application instance's memory (its default in-memory store: set store to shared in the answers if it uses a shared one), 120 across the 6 application instances (stack.instances), each counting on its own",
    );
    expect(md).toContain(
      '| 120 across a reset (60 per window): 20 in each of 6 instances | auth-login-per-ip: 100 per 15 min (100) | 100 | WARNING: tighter across a reset only |',
    );
    // globalLimiter on token: 300 per minute per instance, so the new 300 per minute is tighter in every window, not across a reset only
    const token = item('globalLimiter', 'token');
    expect(token.oldWithinWindow).toBe(3600);
    expect(token.verdict).toBe('tighter');
    expect(token.acrossResetOnly).toBeUndefined();
    expect(md).toContain('| 3,600 across a reset (1,800 per window): 600 in each of 6 instances |');
    // the row keeps the flow's default: one instance's 10 per 15 min, counted once for the fleet,
    // would have cut the fleet's 120 to 10
    const row = input.design.rules.find((r) => r.id === 'auth-login-per-ip')!;
    expect(row.rate).toEqual({ requests: 100, periodSeconds: 900 });
    expect(row.rationale).not.toContain('Taken over');
  });

  it('takes the old limit over where it is tighter for the fleet, and says by how much the row tightens it', () => {
    const raw = review('nestjs-kong-cluster-overage') as { stack: { instances: number } };
    // 2 instances: 20 per window, 40 across a reset for the fleet, under the default's 100
    raw.stack.instances = 2;
    const two = inputFromAnswers(raw);
    const row = two.design.rules.find((r) => r.id === 'auth-login-per-ip')!;
    expect(row.rate).toEqual({ requests: 10, periodSeconds: 900 });
    expect(row.rationale).toContain('Taken over from the limiter already in place, express-rate-limit loginLimiter');
    expect(row.rationale).toContain('It is tighter than before, though: each of the 2 instances counted it in its own memory');
  });

  it('counts a limiter the answers say is shared (a Redis store) once', () => {
    const raw = review('nestjs-kong-cluster-overage') as { existing: { limiters: Record<string, unknown>[] } };
    for (const l of raw.existing.limiters) l.store = 'shared';
    const shared = inputFromAnswers(raw).design.migration!.items;
    const login = shared.find((i) => i.existing.startsWith('express-rate-limit loginLimiter'))!;
    expect(login.oldWithinWindow).toBe(20);
    expect(login.oldNodes).toBeUndefined();
  });
});

describe('mounting in NestJS, where app.use() runs before Nest parses bodies and before its guards', () => {
  const input = inputFromAnswers(review('nestjs-kong-cluster-overage'));
  const md = renderMarkdown({ ...input, codeFiles: generateCode(input.design) }, { layout: 'single' })[0]?.content ?? '';
  const mount = md.split('\n').find((l) => l.startsWith('**Mounting in NestJS.**'))!;
  const readme = generateCode(input.design)
    .find((f) => f.path === 'README.md')!
    .content.replace(/\n/g, ' ')
    .replace(/`/g, '');

  it('has the body parsed first: Nest registers its own parsers only at start-up, so the login and token rows would see no account name', () => {
    for (const text of [mount, readme]) {
      expect(text).toContain('Nest adds its own body parsers only when the application starts');
      expect(text).toContain('app.use(express.json()) and app.use(express.urlencoded(');
      expect(text).toContain('Without them auth-login-per-identity and auth-token-per-identity never see an account name');
    }
    // the MFA step's row is keyed on the account the request belongs to, not on a body field
    expect(mount).not.toMatch(/Without them[^.]*auth-mfa-per-identity/);
  });

  it("says identify() cannot read a guard's work, and what the tenant rows and quotas do when it does", () => {
    for (const text of [mount, readme]) {
      expect(text).toContain("identify() runs before Nest's guards too");
      expect(text).toContain(
        'quota-scale then count each caller by its client IP, the quotas count nothing, and every caller takes plan Starter',
      );
    }
  });
});

/**
 * Endpoints that allow anonymous callers serve identified ones too: a partner presenting its API
 * key on a public read is limited by its plan's fairness row and counted by its quota there, as on
 * every other endpoint, while an anonymous caller stays the per-IP row's. The matrix, the compiled
 * middleware's routes and the document say the same (the middleware's behaviour itself runs over
 * HTTP in test/middleware/anonymous-endpoints.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { parseAnswers } from '../../src/answers/load.js';
import { generateCode } from '../../src/codegen/index.js';
import { compileDesign } from '../../src/codegen/middleware/compile.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { DATE, exampleAnswers, exampleDesign } from '../helpers/examples.js';

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${d.rules.map((x) => x.id).join(', ')}`);
  return r;
};

/** The compiled rules covering a route, by id, and the route as design.ts holds it. */
function routeOf(d: Design, method: string, route: string) {
  const c = compileDesign(d);
  const index = c.routes.findIndex((r) => r.method === method && r.route === route);
  expect(index, `${method} ${route}`).toBeGreaterThanOrEqual(0);
  return { spec: c.routes[index], ruleIds: c.rules.filter((r) => r.routes.includes(index)).map((r) => r.id) };
}

const doc = (d: Design): string => renderMarkdown({ design: d, checks: checkDesign(d) }, { layout: 'single' })[0]?.content ?? '';

describe('saas-platform: public-catalog allows anonymous callers', () => {
  const saas = exampleDesign('saas-platform');
  const plansRows = ['fairness-free', 'fairness-pro', 'fairness-enterprise', 'quota-free', 'quota-pro', 'quota-enterprise'];

  it("every plan's fairness and quota row covers it, beside the per-IP row for anonymous callers", () => {
    for (const id of plansRows) {
      expect(rule(saas, id).endpoints, id).toContain('public-catalog');
      expect(rule(saas, id).routes, id).toContainEqual({ method: 'GET', route: '/v1/catalog' });
    }
    expect(rule(saas, 'anonymous-per-ip')).toMatchObject({ endpoints: ['public-catalog'], identity: 'ip', layer: 'edge' });
    // the other anonymous endpoints keep their own rows: a webhook is its provider's, a health check exempt
    for (const id of plansRows) expect(rule(saas, id).endpoints, id).not.toContain('stripe-webhook');
  });

  it('the middleware routes it to the plan rows, and marks it anonymous', () => {
    const catalog = routeOf(saas, 'GET', '/v1/catalog');
    expect(catalog.spec).toMatchObject({ endpoint: 'public-catalog', exempt: false, anonymous: true });
    expect(catalog.ruleIds).toEqual(plansRows);
    const orders = routeOf(saas, 'GET', '/v1/orders');
    expect(orders.spec).toMatchObject({ endpoint: 'list-orders', anonymous: false });
    expect(orders.ruleIds).toEqual(plansRows);
  });

  it('the document says who counts which caller there', () => {
    const md = doc(saas);
    const paragraph = md.split('\n').find((l) => l.startsWith("**Callers without the rule's identity.**")) ?? '';
    expect(paragraph).toContain(
      'public-catalog allows anonymous callers: there these rows count a caller with a tenant or an API key or a user as on any other endpoint, and never a caller with none of them, not even by its address: only anonymous-per-ip counts it.',
    );
    expect(paragraph).toContain('a request with no identity at all per address (quotas aside), except where callers may be anonymous.');
    expect(rule(saas, 'anonymous-per-ip').rationale).toContain(
      "It counts identified callers too, by their address; a caller with a tenant or an API key or a user is also counted by its plan's fairness and quota rows there, as on every other endpoint.",
    );
    expect(saas.identityFallback?.anonymousEndpoints).toEqual([{ name: 'public-catalog', method: 'GET', route: '/v1/catalog' }]);
  });
});

describe('a partner API on plans without a gateway (test/fixtures/anonymous/partner-plans)', () => {
  const file = new URL('../fixtures/anonymous/partner-plans.answers.json', import.meta.url);
  const design = buildDesign(parseAnswers(readFileSync(file, 'utf8'), 'partner-plans.answers.json'), { date: DATE });

  it('the plan rows and the per-IP row all run in the middleware on the public route', () => {
    const pub = routeOf(design, 'GET', '/v1/public');
    expect(pub.spec).toMatchObject({ endpoint: 'public', anonymous: true });
    // (the ceiling sits on the catch-all route, over every request)
    expect(pub.ruleIds).toEqual(['fairness-partner', 'fairness-trial', 'anonymous-per-ip', 'quota-partner', 'quota-trial']);
    expect(routeOf(design, 'GET', '/v1/items').ruleIds).toEqual(['fairness-partner', 'fairness-trial', 'quota-partner', 'quota-trial']);
    // one bucket per API key for both endpoints: the same key on either route
    expect(rule(design, 'fairness-partner')).toMatchObject({
      key: 'rl:{ak:<api-key-id>}',
      field: 'req:partner',
      endpoints: ['public', 'list-items'],
    });
    expect(checkDesign(design).every((c) => c.passed !== false)).toBe(true);
  });

  it("the document says an anonymous caller there is the per-IP row's alone", () => {
    expect(doc(design)).toContain(
      'public allows anonymous callers: there these rows count a caller with an API key as on any other endpoint, and never a caller with none, not even by its address: only anonymous-per-ip counts it.',
    );
  });
});

describe("the code README's identify() fields and the port guide", () => {
  it('name the routes where a caller without an identity is not counted by address', () => {
    const readme = generateCode(exampleDesign('saas-platform')).find((f) => f.path === 'README.md')?.content ?? '';
    expect(readme).toContain(
      '- `userId`: callers without `tenantId` or `apiKey` are counted by it (the answers list users); left out, they are counted per client IP, and by no quota, except on `GET /v1/catalog` (callers may be anonymous there), where only the per-IP rows count them.',
    );
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/go-envoy-anonymous.answers.json', import.meta.url), 'utf8'));
    delete raw.$schema;
    const go = buildDesign(Answers.parse(raw), { date: DATE });
    const guide = generateCode(go).find((f) => f.path === 'README.md')?.content ?? '';
    expect(guide).toContain('## Calling the scripts from Go');
    expect(guide.replace(/\n/g, ' ')).toContain(
      'On `GET /v2/datasets`, `GET /v2/datasets/{datasetId}`, `GET /v2/datasets/{datasetId}/records/{recordId}`, `GET /v2/search`, whose callers may be anonymous, a caller with none of those identities is not counted by those rules at all, not by its client IP: only the rules keyed on the client IP count it.',
    );
  });
});

describe('designs keyed on nothing but the address', () => {
  it('keep the per-IP fairness row off the anonymous endpoints, which the anonymous per-IP row counts', () => {
    const answers = exampleAnswers('saas-platform');
    const d = buildDesign(Answers.parse({ ...answers, identities: ['ip'], plans: [], quotas: undefined }), { date: DATE });
    expect(rule(d, 'fairness-per-ip').endpoints).not.toContain('public-catalog');
    expect(rule(d, 'anonymous-per-ip').endpoints).toEqual(['public-catalog']);
    expect(d.identityFallback).toBeUndefined();
  });
});

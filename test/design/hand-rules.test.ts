/**
 * What a hand-written rule leaves out, the design decides once, so the document, the constraint
 * check, the hash decision and the middleware read the same: its key (the design's pattern for
 * its identity) and its cost (from its endpoints, when each states one).
 */
import { describe, expect, it } from 'vitest';
import { compileDesign } from '../../src/codegen/middleware/compile.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { exampleAnswers } from '../helpers/examples.js';

const DATE = '2026-12-03';

function design(rules: Record<string, unknown>[]): Design {
  const answers = exampleAnswers('saas-platform');
  return buildDesign({ ...answers, rules: [...(answers.rules ?? []), ...rules] } as typeof answers, { date: DATE });
}

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
};

const base = { identity: 'tenant', algorithm: 'gcra', rate: { requests: 20, per: 'minute' }, burst: 25, failMode: 'open' };
const complete = (d: Design) => checkDesign(d).find((c) => c.id === 'complete-rules');

describe('a hand-written rule without a key or a cost', () => {
  // export-orders states its cost (25); search-orders takes its class's (5, assumed)
  const d = design([
    { ...base, id: 'export-per-tenant', endpoints: ['export-orders'], layer: 'middleware', primitive: 'redis-lua', ttlSeconds: 60 },
    { ...base, id: 'search-per-tenant', endpoints: ['search-orders'], layer: 'middleware', primitive: 'redis-lua', ttlSeconds: 60 },
  ]);

  it('takes its cost from endpoints that state theirs, and the middleware charges what the document says', () => {
    const r = rule(d, 'export-per-tenant');
    expect(r.cost).toEqual({ default: 1, byEndpoint: [{ endpoint: 'export-orders', cost: 25 }] });
    expect(r.derivation).toContain('cost from the costs its endpoints state (export-orders = 25)');
    const compiled = compileDesign(d).rules.find((x) => x.id === 'export-per-tenant');
    expect(compiled?.costByEndpoint).toEqual([['export-orders', 25]]);
    const messages = complete(d)?.messages ?? [];
    expect(messages.filter((m) => m.includes('export-per-tenant'))).toEqual([]);
  });

  it('keeps failing constraint 1 when an endpoint it covers states no cost, and says which', () => {
    expect(rule(d, 'search-per-tenant').cost).toBeUndefined();
    const messages = complete(d)?.messages ?? [];
    expect(messages.some((m) => m.includes('search-per-tenant') && m.includes('search-orders has only its class weight'))).toBe(true);
  });

  it("gets the design's key for its identity, so it joins the identity's hash, and the middleware uses that key", () => {
    const r = rule(d, 'export-per-tenant');
    // the tenant's hash (its fairness and quota rows) takes the rule as one more field
    expect(r.key).toBe('rl:{t:<tenant-id>}');
    expect(r.field).toBe('export-per-tenant');
    expect(r.derivation).toContain("key rl:{t:<tenant-id>}:export-per-tenant (the design's pattern for its identity)");
    const hash = d.monitoring.store.hashes?.find((h) => h.key === 'rl:{t:<tenant-id>}');
    expect(hash?.ruleIds).toContain('export-per-tenant');
    const compiled = compileDesign(d).rules.find((x) => x.id === 'export-per-tenant');
    expect(compiled).toMatchObject({ key: '{t:<tenant-id>}', field: 'export-per-tenant', identity: 'tenant' });
    // the shipped data module carries it as the design states it
    const data = generateCode(d).find((f) => f.path === 'middleware/design.ts')?.content ?? '';
    expect(data).toContain('field: "export-per-tenant"');
  });

  it('a rule with neither identity nor key is keyed on the client IP, stated in the design as the middleware runs it', () => {
    const d2 = design([
      {
        id: 'anon-export',
        endpoints: ['export-orders'],
        algorithm: 'gcra',
        rate: { requests: 5, per: 'minute' },
        burst: 5,
        layer: 'middleware',
      },
    ]);
    const r = rule(d2, 'anon-export');
    expect(r.identity).toBe('ip');
    expect(r.key).toBe('rl:{ip:<client-ip>}:anon-export');
    expect(compileDesign(d2).rules.find((x) => x.id === 'anon-export')).toMatchObject({
      identity: 'ip',
      key: '{ip:<client-ip>}:anon-export',
    });
  });
});

describe('a hand-written store key without the runtime prefix', () => {
  it('is stated as Redis holds it (rl: before it, as the runtime writes it), and compiles to the same pattern', async () => {
    const { readFileSync } = await import('node:fs');
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/express-cloudflare.answers.json', import.meta.url), 'utf8'));
    delete raw.$schema;
    const { Answers } = await import('../../src/answers/schema.js');
    const { buildDesign } = await import('../../src/design/build.js');
    const { compileDesign } = await import('../../src/codegen/middleware/index.js');
    const design = buildDesign(Answers.parse(raw), { date: '2026-12-03' });
    const written = (raw.rules as { id: string; key?: string }[]).find((r) => r.id === 'search-per-tenant')?.key;
    expect(written).toBe('{o:<org-id>}:search');
    const rule = design.rules.find((r) => r.id === 'search-per-tenant');
    expect(rule?.key?.startsWith('rl:{o:<org-id>}')).toBe(true);
    // the runtime's pattern is the design's key without its prefix: the key Redis sees is unchanged
    const compiled = compileDesign(design).rules.find((r: { id: string }) => r.id === 'search-per-tenant') as { key: string } | undefined;
    expect(compiled?.key.startsWith('{o:<org-id>}')).toBe(true);
  });
});

describe('a hand-written rule covering only auth endpoints', () => {
  it('is a silent security rule without being told its class, as the generated auth rows are, and passes the checks', async () => {
    const { readFileSync } = await import('node:fs');
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/express-cloudflare.answers.json', import.meta.url), 'utf8'));
    delete raw.$schema;
    const mfa = (raw.rules as Record<string, unknown>[]).find((r) => r.id === 'mfa-per-user') as Record<string, unknown>;
    delete mfa.endpointClass;
    delete mfa.headers;
    const { Answers } = await import('../../src/answers/schema.js');
    const { buildDesign } = await import('../../src/design/build.js');
    const { generateCode } = await import('../../src/codegen/index.js');
    const { checkDesign } = await import('../../src/constraints/index.js');
    const design = buildDesign(Answers.parse(raw), { date: '2026-12-03' });
    const rule = design.rules.find((r) => r.id === 'mfa-per-user');
    expect(rule).toMatchObject({ tier: 'security', headers: 'silent', endpointClass: 'auth' });
    expect(rule?.derivation).toContain('every endpoint it covers is an auth endpoint');
    expect(
      checkDesign(design, generateCode(design))
        .filter((c) => !c.passed)
        .map((c) => c.messages),
    ).toEqual([]);
  });
});

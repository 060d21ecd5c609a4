/**
 * What the document says a rule keyed on an API key does with a caller that has none (a browser
 * with a session cookie, a request with no identity) is what the compiled middleware does: the
 * review design of a Fastify API behind Kong, browsers on sessions and partners on API keys, run
 * against a real redis-server.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { buildDesign } from '../../src/design/build.js';
import { FALLBACK_ORDER } from '../../src/design/identity-fallback.js';
import { checkDesign } from '../../src/constraints/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { useRedisServer } from '../helpers/redis.js';
import { allFiles, freshPrefix, useCompiledMiddleware } from './harness.js';

const raw = JSON.parse(readFileSync(new URL('../fixtures/review/fastify-kong.answers.json', import.meta.url), 'utf8'));
delete raw.$schema;
const design = buildDesign(Answers.parse(raw), { date: '2026-12-03' });
const md = renderMarkdown({ design, checks: checkDesign(design) }, { layout: 'single' })[0]?.content ?? '';
const paragraph = md.split('\n').find((l) => l.startsWith("**Callers without the rule's identity.**")) ?? '';

interface Decision {
  status: number;
  outcomes: readonly { ruleId: string }[];
}
interface Core {
  DESIGN: { defaultPlan: string | null };
  createLimiter(options: Record<string, unknown>): {
    check(input: Record<string, unknown>): Promise<Decision>;
    close(): void;
  };
}

const store = useRedisServer();
const scratch = useCompiledMiddleware(() => ({ review: allFiles(design) }));
let core: Core;

beforeAll(async () => {
  core = await scratch.load<Core>('review', 'ratelimit-core');
});

/** One call to GET /api/v1/projects (a Team and Partner fairness row and both quotas cover it) as the given caller; the keys it wrote. */
async function callAs(identity: Record<string, string>): Promise<Record<string, Record<string, string>>> {
  const prefix = freshPrefix('fb');
  const limiter = core.createLimiter({
    redis: store.redis,
    keyPrefix: prefix,
    defaultMode: 'enforce',
    registry: null,
    identify: () => identity,
  });
  try {
    const d = await limiter.check({ method: 'GET', url: '/api/v1/projects', remoteAddress: '203.0.113.9', req: {} });
    expect(d.status).toBe(200);
  } finally {
    limiter.close();
  }
  const keys = await store.redis.keys(`${prefix}:*`);
  const out: Record<string, Record<string, string>> = {};
  for (const k of keys) out[k.slice(prefix.length + 1)] = await store.redis.hgetall(k);
  return out;
}

describe('callers without the identity a rule is keyed on', () => {
  it('the document names the plan such a caller counts as, the one the shipped design.ts holds', () => {
    expect(design.identityFallback?.defaultPlan).toBe('Team');
    expect(core.DESIGN.defaultPlan).toBe('Team');
    expect(paragraph).toContain('is counted as plan Team, the first plan of the answers');
    expect(paragraph).toContain(`in the order ${['API key', 'user', 'tenant', 'session', 'client IP'].join(', ')}`);
    expect(FALLBACK_ORDER).toEqual(['api-key', 'user', 'tenant', 'session', 'ip']);
  });

  it('a browser session is counted per session by the Team rows, its quota included, as the document says', async () => {
    expect(paragraph).toContain('a caller identified by a session alone');
    expect(paragraph).toContain('is limited per session by these rows, quotas included');
    // the bounds are per API key (800 of them): the session keys are not in them, and the document says so
    expect(design.rules.find((r) => r.id === 'quota-team')?.cardinality?.bound).toBe(800);
    expect(paragraph).toContain(
      "The cardinality bounds and the memory estimate count these rows' keys per API key only: the keys of callers counted by a session or an address come on top",
    );
    const keys = await callAs({ sessionId: 'sess-1' });
    // under the rows' own label and the session's: never a key a session-keyed row could use
    expect(Object.keys(keys)).toEqual(['{ak~s:sess-1}']);
    expect(Object.keys(keys['{ak~s:sess-1}'] ?? {}).sort()).toEqual(['quota', 'req:team']);
  });

  it('a request with no identity is counted per address, by no quota', async () => {
    expect(paragraph).toContain('a request with no identity at all per address (quotas aside)');
    expect(paragraph).toContain('a caller known only by its address is counted by no quota');
    const keys = await callAs({});
    expect(Object.keys(keys)).toEqual(['{ak~ip:203.0.113.9}']);
    expect(Object.keys(keys['{ak~ip:203.0.113.9}'] ?? {})).toEqual(['req:team']);
  });

  it('tries the identities in the order the document gives', async () => {
    expect(Object.keys(await callAs({ tenantId: 't-1', sessionId: 's-1' }))).toEqual(['{ak~t:t-1}']);
    expect(Object.keys(await callAs({ userId: 'u-1', tenantId: 't-1' }))).toEqual(['{ak~u:u-1}']);
    expect(Object.keys(await callAs({ apiKey: 'k-1', userId: 'u-1', plan: 'Partner' }))).toEqual(['{ak:k-1}']);
  });
});

describe("the code README's identify() fields", () => {
  const readme = generateCode(design).find((f) => f.path === 'README.md')?.content ?? '';

  it('name the session a browser must be identified by, and the plan names the rows compare with', async () => {
    expect(readme).toContain(
      '- `sessionId`: callers without `apiKey` are counted by it (the answers list sessions); left out, they are counted per client IP, and by no quota.',
    );
    expect(readme).toContain('- `plan`: one of "Team", "Partner", exactly as written; a caller without one is counted as "Team".');
    // as the compiled middleware does: a session caller's own key, and a caller on Partner counted by Partner's rows
    expect(Object.keys(await callAs({ sessionId: 'readme-s' }))).toEqual(['{ak~s:readme-s}']);
    const partner = await callAs({ apiKey: 'readme-k', plan: 'Partner' });
    expect(Object.keys(partner['{ak:readme-k}'] ?? {}).sort()).toEqual(['quota', 'req:partner']);
  });
});

/**
 * The response contract's examples on a rule whose every endpoint is weighted (a GraphQL-style
 * API: no call costs 1), with a burst above the policy's q (7 per minute, burst 10: q=7;w=60).
 * Over real HTTP against a real redis-server, the first call's headers and the drained
 * bucket's 429 are byte for byte what the document shows, for the cheapest endpoint's cost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnswersInput } from '../../src/answers/schema.js';
import type { Design } from '../../src/design/model.js';
import { useRedisServer } from '../helpers/redis.js';
import { DOCS } from './designs.js';
import { allFiles, designFrom, expectTtlsUnder, freshPrefix, hit, serve, useCompiledMiddleware, type Served } from './harness.js';

const WEIGHTED: AnswersInput = {
  project: { name: 'weighted contract API' },
  goals: ['fairness'],
  stack: { language: 'TypeScript', framework: 'express', topology: 'single', gateway: 'none', store: 'redis', trustedProxies: [] },
  identities: ['api-key'],
  endpoints: [
    { name: 'query', method: 'GET', route: '/v1/items', class: 'read', cost: 3 },
    { name: 'lookup', method: 'GET', route: '/v1/items/:id', class: 'read', cost: 4 },
  ],
  traffic: { typicalRps: 10, peakRps: 100, burstiness: 'moderate' },
  headers: { convention: 'ietf-structured', docsUrl: DOCS },
  rules: [{ id: 'fairness-per-api-key', rate: { requests: 7, per: 'minute' }, burst: 10 }],
};

const design: Design = designFrom(WEIGHTED);
const store = useRedisServer();
const scratch = useCompiledMiddleware(() => ({ weighted: allFiles(design) }), 180_000);
let served: Served;
const prefix = freshPrefix('cc');

beforeAll(async () => {
  served = await serve('express', await scratch.load('weighted', 'express'), { redis: store.redis, keyPrefix: prefix });
});

afterAll(async () => {
  await served?.close();
  if (store.redis) await expectTtlsUnder(store.redis, prefix);
});

describe('examples of a weighted rule', () => {
  it('make the call at its cheapest endpoint, and the document says so', () => {
    expect(design.contract.rateLimitedExample?.situation).toContain('a call to query (cost 3), its cheapest endpoint');
    expect(design.contract.rateLimitedExample?.situation).toContain('1 token left');
  });

  it("the first call's headers and the drained bucket's 429 are the document's, to the byte", async () => {
    const key = { 'x-test-key': 'weighted-1' };
    const first = await hit(served.url, 'GET', '/v1/items', key);
    expect(first.status).toBe(200);
    for (const h of design.contract.headers) expect(first.headers.get(h.name), h.name).toBe(h.example);

    // 10 tokens at 3 per call: two more calls admitted, 1 token left, the fourth call refused
    for (let i = 0; i < 2; i++) expect((await hit(served.url, 'GET', '/v1/items', key)).status).toBe(200);
    const res = await fetch(`${served.url}/v1/items`, { headers: key });
    const body = await res.text();
    expect(res.status).toBe(429);
    const example = design.contract.rateLimitedExample!;
    expect(example.headers.find((h) => h.name === 'Retry-After')?.value).toBe('18');
    for (const h of example.headers) expect(res.headers.get(h.name), h.name).toBe(h.value);
    expect(body).toBe(JSON.stringify(design.contract.rateLimitedBody));
  });
});

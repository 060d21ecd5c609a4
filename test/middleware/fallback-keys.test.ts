/**
 * A rule keyed on a user counts a caller known only by its API key under that key: on a real
 * redis-server, through the compiled middleware generated into a scratch project, such a key
 * never meets the key or identity hash of a rule keyed on API keys. The design has an API-key
 * hash (the plan's fairness bucket and quota), a user log keyed as rl:{u:<user-id>} (the
 * hash's shape, for a user), and an export log per API key and per user with the same tail.
 * Counted under the API key's own label, the user log would be sent to the API key's hash
 * (WRONGTYPE, a store failure on every search) and the two export logs would be one (each
 * export counted twice). The document states the keys the middleware writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { buildDesign } from '../../src/design/build.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';
import { useRedisServer } from '../helpers/redis.js';
import { allFiles, freshPrefix, useCompiledMiddleware } from './harness.js';

const FIXTURE = path.join(ROOT, 'test', 'design', 'fixtures', 'fallback-collision.answers.json');
const design = buildDesign(parseAnswers(readFileSync(FIXTURE, 'utf8'), 'fallback-collision.answers.json'), { date: '2026-12-03' });

interface Decision {
  status: number;
  outcomes: readonly { ruleId: string; source?: string }[];
}
interface Core {
  createLimiter(options: Record<string, unknown>): { check(input: Record<string, unknown>): Promise<Decision>; close(): void };
}

const store = useRedisServer();
const scratch = useCompiledMiddleware(() => ({ ledger: allFiles(design) }));
let core: Core;

beforeAll(async () => {
  core = await scratch.load<Core>('ledger', 'ratelimit-core');
});

/** `n` calls as one caller; each decision, the store failures and the keys written (without the prefix) with their types. */
async function calls(identity: Record<string, string>, method: string, url: string, n: number) {
  const prefix = freshPrefix('fk');
  const failures: unknown[] = [];
  const limiter = core.createLimiter({
    redis: store.redis,
    keyPrefix: prefix,
    defaultMode: 'enforce',
    registry: null,
    identify: () => identity,
    onStoreError: (e: unknown) => failures.push(e),
    timeoutMs: 5000,
  });
  const decisions: Decision[] = [];
  try {
    for (let i = 0; i < n; i++) decisions.push(await limiter.check({ method, url, remoteAddress: '203.0.113.9', req: {} }));
  } finally {
    limiter.close();
  }
  const types: Record<string, string> = {};
  // (the ceiling's key aside: one for every caller)
  for (const k of (await store.redis.keys(`${prefix}:*`)).sort())
    if (!k.includes('{global}')) types[k.slice(prefix.length + 1)] = await store.redis.type(k);
  return { decisions, failures, types };
}

describe('a user rule counting a caller known by its API key', () => {
  it('the design has both: an API-key hash and user rules whose own keys have its shape', () => {
    const rule = (id: string) => design.rules.find((r) => r.id === id);
    expect(rule('fairness-standard')).toMatchObject({ key: 'rl:{ak:<api-key-id>}', field: 'req:standard' });
    expect(rule('quota-standard')).toMatchObject({ key: 'rl:{ak:<api-key-id>}', field: 'quota' });
    expect(rule('search-log-per-user')?.key).toBe('rl:{u:<user-id>}');
    expect(rule('export-per-key')?.key).toBe('rl:{ak:<api-key-id>}:export');
    expect(rule('export-per-user')?.key).toBe('rl:{u:<user-id>}:export');
  });

  it("never reaches the API key's hash: no WRONGTYPE, every search decided by the store", async () => {
    const { decisions, failures, types } = await calls({ apiKey: 'k-1', plan: 'Standard' }, 'GET', '/v1/entries/search', 3);
    expect(failures).toEqual([]);
    for (const d of decisions) {
      expect(d.status).toBe(200);
      expect(d.outcomes.map((o) => o.source)).not.toContain('fallback');
    }
    expect(types).toEqual({
      '{ak:k-1}': 'hash',
      '{u~ak:k-1}': 'zset',
      '{u~ak:k-1}:req': 'string',
    });
    expect((await store.redis.keys('*{ak:k-1}')).length).toBe(1);
  });

  it('keeps its own export log: the API key gets its 5 exports an hour, not half of them', async () => {
    const { decisions, failures, types } = await calls({ apiKey: 'k-2', plan: 'Standard' }, 'POST', '/v1/entries/export', 6);
    expect(failures).toEqual([]);
    expect(decisions.map((d) => d.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(types['{ak:k-2}:export']).toBe('zset');
    expect(types['{u~ak:k-2}:export']).toBe('zset');
  });

  it("a caller with a user id is counted under the user's own key, as before", async () => {
    const { failures, types } = await calls({ apiKey: 'k-3', userId: 'ada', plan: 'Standard' }, 'GET', '/v1/entries/search', 1);
    expect(failures).toEqual([]);
    expect(Object.keys(types).sort()).toEqual(['{ak:k-3}', '{u:ada}', '{u:ada}:req']);
  });
});

describe('the document states the keys the middleware writes', () => {
  it('names the fallback keys, and that they never meet the API-key rows', () => {
    const dir = tempDir('rl-fallback-keys-');
    const out = path.join(dir, 'design.md');
    writeFileSync(path.join(dir, 'answers.json'), readFileSync(FIXTURE, 'utf8').replace(/"\$schema": "[^"]*",/, ''));
    const r = runCli([
      'generate',
      '--answers',
      path.join(dir, 'answers.json'),
      '--out',
      out,
      '--format',
      'markdown',
      '--layout',
      'single',
      '--date',
      '2026-12-03',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(out, 'utf8');
    // (Markdown escapes braces and angle brackets)
    const paragraph = (md.split('\n').find((l) => l.startsWith("**Callers without the rule's identity.**")) ?? '').replace(
      /\\([{}<>~])/g,
      '$1',
    );
    expect(paragraph).toContain(
      "fairness-standard's rl:{ak:<api-key-id>} becomes rl:{ak~u:<user-id>} for a caller counted by its user and rl:{ak~ip:<client-ip>} by its client IP",
    );
    // the key the runtime wrote above for a caller known by its API key
    expect(paragraph).toContain(
      "search-per-user's rl:{u:<user-id>}:req becomes rl:{u~ak:<api-key-id>}:req for a caller counted by its API key and rl:{u~ip:<client-ip>}:req by its client IP",
    );
    expect(paragraph).toContain('a fallback key is never the key or identity hash of a row keyed on the identity the caller is counted by');
  });
});

/**
 * On a real redis-server, through the shipped runtime: a hand-written rule spelled {u:<user>}
 * shares the user's hash with the design's {u:<user-id>} rule (one identity-limits call), and a
 * hand-written rule keyed as that hash keeps its own key, so neither ever meets the other's
 * type (no WRONGTYPE, no store failure).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { compileDesign, designData } from '../../src/codegen/middleware/index.js';
import { buildDesign } from '../../src/design/build.js';
import { createLimiter } from '../../src/runtime/middleware/limiter.js';
import { useRedisServer } from '../helpers/redis.js';
import { freshPrefix } from './harness.js';

const FIXTURE = path.join(import.meta.dirname, '..', 'design', 'fixtures', 'hand-keys.answers.json');

const redisServer = useRedisServer();

/** Calls of the scripts Redis has run so far (EVALSHA and EVAL). */
async function scriptCalls(): Promise<number> {
  const info = await redisServer.redis.info('commandstats');
  return [...info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('hand-written keys and the identity hash on a real Redis', () => {
  for (const spelling of ['rl:{u:<user>}:search', 'rl:{u:<user-id>}:search']) {
    it(`search-per-user keyed ${spelling}: one hash call, the log under its own key, no store failure`, async () => {
      const answers = parseAnswers(readFileSync(FIXTURE, 'utf8'), 'hand-keys.answers.json');
      const rules = (answers.rules ?? []).map((r) => (r.id === 'search-per-user' ? { ...r, key: spelling } : r));
      const design = buildDesign({ ...answers, rules } as Answers, { date: '2026-12-03' });
      const prefix = freshPrefix('ik');
      const failures: unknown[] = [];
      const limiter = createLimiter(designData(compileDesign(design)), {
        redis: redisServer.redis,
        registry: new Registry(),
        keyPrefix: prefix,
        identify: () => ({ userId: 'ada' }),
        onStoreError: (e: unknown) => failures.push(e),
        // (a loaded machine must not turn a slow first call into a fallback whose calls land later, in the count below)
        timeoutMs: 5000,
      });
      try {
        const search = () =>
          limiter.check({ method: 'GET', url: '/v1/notes/search', remoteAddress: '10.0.0.1', forwardedFor: undefined, req: {} });
        await search(); // loads the scripts
        const before = await scriptCalls();
        const d = await search();
        // the ceiling, the user's hash (fairness and search), the log
        expect((await scriptCalls()) - before).toBe(3);
        expect(d.status).toBe(200);
        expect(d.outcomes.map((o) => [o.ruleId, o.source])).toEqual(
          expect.arrayContaining([
            ['fairness-per-user', 'store'],
            ['search-per-user', 'store'],
            ['search-log-per-user', 'store'],
          ]),
        );
        expect(failures).toEqual([]);
        expect(await redisServer.redis.type(`${prefix}:{u:ada}`)).toBe('hash');
        expect((await redisServer.redis.hkeys(`${prefix}:{u:ada}`)).sort()).toEqual(['req', 'search']);
        expect(await redisServer.redis.type(`${prefix}:{u:ada}:search-log-per-user`)).toBe('zset');
      } finally {
        limiter.close();
      }
    });
  }
});

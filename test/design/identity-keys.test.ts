/**
 * An identity's hash is grouped by what its rules' keys render to, not by how they are spelled:
 * a hand-written {u:<user>} and the design's {u:<user-id>} are the same slot at runtime (any
 * <name> holds the rule's identity value). A rule outside the hash whose key would be the hash's
 * key takes a key of its own, so no command meets the hash with another type.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { compileDesign } from '../../src/codegen/middleware/compile.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderedPattern } from '../../src/design/placement.js';
import { exampleAnswers } from '../helpers/examples.js';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'hand-keys.answers.json');
const handKeysAnswers = (): Answers => parseAnswers(readFileSync(FIXTURE, 'utf8'), 'hand-keys.answers.json');

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
};

describe('identity hashes group on the rendered key', () => {
  it('renderedPattern: identity placeholders by the identity they hold, period placeholders kept', () => {
    expect(renderedPattern('rl:{u:<user>}:x', 'user')).toBe(renderedPattern('rl:{u:<user-id>}:x', 'user'));
    expect(renderedPattern('rl:{u:<user>}', 'user')).not.toBe(renderedPattern('rl:{u:<user>}', 'api-key'));
    expect(renderedPattern('rl:{t:<tenant-id>}:q:<yyyy-mm>', 'tenant')).toBe('rl:{t:<tenant>}:q:<yyyy-mm>');
  });

  const d = buildDesign(handKeysAnswers(), { date: '2026-12-03' });

  it("a hand-written rule keyed {u:<user>} joins the design's {u:<user-id>} hash: one hash, one call", () => {
    expect(d.monitoring.store.hashes?.map((h) => [h.key, h.ruleIds])).toEqual([
      ['rl:{u:<user-id>}', ['fairness-per-user', 'search-per-user']],
    ]);
    expect(rule(d, 'search-per-user')).toMatchObject({ key: 'rl:{u:<user-id>}', field: 'search' });
    expect(rule(d, 'fairness-per-user')).toMatchObject({ key: 'rl:{u:<user-id>}', field: 'req' });
    // the middleware runs both as fields of one identity-limits call
    const compiled = compileDesign(d).rules.filter((r) => r.field !== null);
    expect(compiled.map((r) => [r.id, r.key, r.field])).toEqual([
      ['fairness-per-user', '{u:<user-id>}', 'req'],
      ['search-per-user', '{u:<user-id>}', 'search'],
    ]);
  });

  it('a hand-written rule keyed as the hash itself takes its own key, and says why', () => {
    const log = rule(d, 'search-log-per-user');
    expect(log.field).toBeUndefined();
    expect(log.key).toBe('rl:{u:<user-id>}:search-log-per-user');
    expect(log.derivation).toContain("not rl:{u:<user-id>}: that is the key of the identity's hash rl:{u:<user-id>}");
    // no rule outside a hash renders to a hash's key
    const hashKeys = new Set((d.monitoring.store.hashes ?? []).map((h) => renderedPattern(h.key, 'user')));
    for (const r of d.rules.filter((x) => x.field === undefined && x.key))
      expect(hashKeys.has(renderedPattern(r.key!, r.identity))).toBe(false);
  });

  it("the same in the saas example: a tenant rule keyed {t:<tenant>} joins the tenant's hash; one keyed as the hash moves", () => {
    const answers = exampleAnswers('saas-platform');
    const base = {
      identity: 'tenant',
      rate: { requests: 20, per: 'minute' },
      burst: 25,
      failMode: 'open',
      layer: 'middleware',
      primitive: 'redis-lua',
      ttlSeconds: 60,
    };
    const saas = buildDesign(
      {
        ...answers,
        rules: [
          ...(answers.rules ?? []),
          { ...base, id: 'export-spelled', algorithm: 'gcra', endpoints: ['export-orders'], key: 'rl:{t:<tenant>}:exports' },
          { ...base, id: 'search-log', algorithm: 'sliding-window-log', endpoints: ['search-orders'], key: 'rl:{t:<tenant-id>}' },
        ],
      } as Answers,
      { date: '2026-12-03' },
    );
    const tenant = saas.monitoring.store.hashes?.find((h) => h.key === 'rl:{t:<tenant-id>}');
    expect(tenant?.ruleIds).toContain('export-spelled');
    expect(rule(saas, 'export-spelled')).toMatchObject({ key: 'rl:{t:<tenant-id>}', field: 'exports' });
    expect(rule(saas, 'search-log').key).toBe('rl:{t:<tenant-id>}:search-log');
  });
});

/** checkDesign, formatFinding and summarise; and no check throws on a malformed design. */
import { describe, expect, it } from 'vitest';
import { checkDesign, formatFinding, summarise } from '../../src/constraints/index.js';
import type { Design } from '../../src/design/model.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';

describe('checkDesign', () => {
  it('passes the reference design on all nine constraints, each applicable', () => {
    const results = checkDesign(validDesign());
    expect(results.map((r) => r.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of results) {
      expect(r, r.id).toMatchObject({ passed: true, applicable: true, findings: [], messages: [] });
    }
    expect(summarise(results)).toEqual({ passed: 9, failed: 0 });
  });

  it('marks the conditional constraints not applicable, and passed, when there is nothing to check', () => {
    const design = mutate(validDesign(), (d) => {
      d.scope.endpoints = d.scope.endpoints.filter((e) => e.class !== 'auth');
      d.scope.outbound = [];
      for (const plan of d.scope.plans) delete plan.quota;
      d.rules = d.rules.filter((r) => r.tier !== 'quota');
      delete d.quotas;
    });
    const notApplicable = checkDesign(design).filter((r) => !r.applicable);
    expect(notApplicable.map((r) => r.id)).toEqual(['auth-dual-key', 'quota-billing-separation', 'shared-outbound']);
    for (const r of notApplicable) expect(r.passed).toBe(true);
  });

  it('reports a failing constraint with its findings rendered, rule id first', () => {
    const design = mutate(validDesign(), (d) => {
      getRule(d, 'api-per-api-key').primitive = 'incr-then-expire';
      d.contract.retryAfter.onEvery429 = false;
    });
    const results = checkDesign(design);
    const atomic = results.find((r) => r.id === 'atomic-check');
    expect(atomic?.passed).toBe(false);
    expect(atomic?.messages).toEqual([
      'rule api-per-api-key: incr-then-expire is not atomic: concurrent requests can both read the last token and both be admitted. Use a Lua script or a gateway-native limiter.',
    ]);
    expect(results.find((r) => r.id === 'response-contract')?.messages).toEqual([
      'The response contract does not put Retry-After on every 429.',
    ]);
    expect(summarise(results)).toEqual({ passed: 7, failed: 2 });
  });
});

describe('formatFinding', () => {
  it('fills every placeholder from the data', () => {
    expect(formatFinding({ constraintId: 'complete-rules', messageId: 'missingField', data: { field: 'burst' }, ruleId: 'r1' })).toBe(
      'rule r1: The rule does not state its burst.',
    );
  });

  it('leaves a placeholder without data visible rather than inventing a value', () => {
    expect(formatFinding({ constraintId: 'complete-rules', messageId: 'missingField', data: {} })).toBe(
      'The rule does not state its {{field}}.',
    );
  });

  it('still says something for a finding no module defines', () => {
    expect(formatFinding({ constraintId: 'nope', messageId: 'toString', data: { a: 1 } })).toBe('nope/toString {"a":1}');
  });
});

/** Every path in a JSON-like value, as lists of keys. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    return [path, ...paths(child, path)];
  });
}

function replaced(design: Design, path: (string | number)[], replacement: unknown): Design {
  const copy = structuredClone(design) as unknown as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = replacement;
  return copy as unknown as Design;
}

describe('robustness: no check throws', () => {
  const malformed: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['an empty object', {}],
    ['a string', 'design'],
    [
      'lists of junk',
      { rules: [null, 1, 'x', {}], scope: { endpoints: [null, { class: 'auth' }], outbound: [null, {}], plans: [null, { quota: 5 }] } },
    ],
  ];
  for (const [name, design] of malformed) {
    it(`on ${name}`, () => {
      expect(() => checkDesign(design as Design).flatMap((r) => r.messages)).not.toThrow();
    });
  }

  it('with any one field of the reference design replaced by a value of the wrong type', () => {
    const design = validDesign();
    const replacements = [undefined, null, 'x', -1, [], {}, [null]];
    const thrown: string[] = [];
    let runs = 0;
    for (const path of paths(design)) {
      for (const replacement of replacements) {
        const broken = replaced(design, path, replacement);
        try {
          checkDesign(broken);
        } catch (error) {
          thrown.push(`${path.join('.')} = ${JSON.stringify(replacement)}: ${String(error)}`);
        }
        runs += 1;
      }
    }
    expect(thrown).toEqual([]);
    expect(runs).toBeGreaterThan(1000);
  });
});

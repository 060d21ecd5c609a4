/**
 * "Admitted" with several ceiling rows: each counts the requests it covers, so what passes is at
 * most their sum. The key-count bounds (buildMatrix), the monitoring and the hybrid's choice read
 * it through one function, ceilingsAdmission, and none stops at the first row.
 */
import { describe, expect, it } from 'vitest';
import { ceilingsAdmission, fleetAdmission } from '../../src/design/gateway-behaviour.js';
import { buildMatrix } from '../../src/design/matrix.js';
import type { MatrixRule } from '../../src/design/model.js';
import { exampleDesign } from '../helpers/examples.js';

const scope = exampleDesign('consumer-auth').scope;
const row = (id: string, requests: number): Pick<MatrixRule, 'id' | 'identity' | 'routes' | 'layer' | 'rate' | 'burst'> => ({
  id,
  identity: 'global',
  routes: [],
  layer: 'middleware',
  rate: { requests, periodSeconds: 1 },
  burst: requests,
});

describe('what several ceiling rows admit', () => {
  it('is the sum of what each admits, one row its own admission, none undefined', () => {
    const a = row('global-ceiling', 600);
    const b = row('reads-ceiling', 200);
    expect(ceilingsAdmission(scope, [a])).toEqual(fleetAdmission(scope, a));
    const both = ceilingsAdmission(scope, [a, b]);
    expect(both?.rps).toBe(800);
    expect(both?.text).toBe('the 2 ceilings admit 800 req/s together (global-ceiling: 600 req/s, reads-ceiling: 200 req/s)');
    expect(ceilingsAdmission(scope, [])).toBeUndefined();
  });

  it('sizes the key-count bounds of the matrix from every ceiling row, not the first', () => {
    const a = row('global-ceiling', 600);
    const b = row('reads-ceiling', 200);
    const ctx = { scope, ceilingRps: 600, burstSeconds: 5, ceiling: a, ceilings: [a, b] };
    const anon = buildMatrix(ctx, []).rules.find((r) => r.id === 'anonymous-per-ip');
    expect(anon?.cardinality?.basis).toContain('the 2 ceilings admit 800 req/s together');
    expect(anon?.cardinality?.bound).toBe(800 * (anon?.ttlSeconds ?? 0));
  });
});

/**
 * Cost-weighted exhaustion: for every weight the rule carries, a fresh bucket is spent by
 * requests to an endpoint of that weight (the runtime picks the cost from the rule's own
 * table) until one is refused, then by cost-1 requests. A bucket of burst B admits
 * floor(B / cost) weighted calls and then exactly the B mod cost leftover tokens; a call that
 * costs more than the whole bucket is refused with Retry-After -1 (never).
 */
import type { MatrixRule } from '../../design/model.js';
import { shapeFor } from '../shapes.js';
import { sendUntilRefused, type Outcome, type RuleContext } from './context.js';

/** The rule's weights above 1, heaviest first, with the endpoints that carry them. */
export function weightsOf(rule: MatrixRule): { cost: number; endpoints: string[] }[] {
  const byCost = new Map<number, string[]>();
  for (const w of rule.cost?.byEndpoint ?? []) {
    if (w.cost > 1) byCost.set(w.cost, [...(byCost.get(w.cost) ?? []), w.endpoint]);
  }
  return [...byCost.entries()].sort(([a], [b]) => b - a).map(([cost, endpoints]) => ({ cost, endpoints }));
}

export async function costWeightedExhaustion(ctx: RuleContext): Promise<Outcome> {
  const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'exact', Date.now());
  const burst = shape.capacity;
  const base = { params: shape.params, ...(shape.scaling ? { scaling: shape.scaling } : {}) };
  const parts: string[] = [];
  const wants: string[] = [];
  const problems: string[] = [];
  const numbers: Record<string, number> = {};
  for (const { cost, endpoints } of weightsOf(ctx.rule)) {
    const probe = ctx.inbound([{ spec: ctx.spec!, shape, number: ctx.number }], `cost${cost}`);
    const endpoint = endpoints[0]!;
    const wantWeighted = cost > burst ? 0 : Math.floor(burst / cost);
    const wantSingles = burst - wantWeighted * cost;
    const weighted = await sendUntilRefused(() => probe.endpoint(endpoint), wantWeighted + 1);
    if (weighted.error) return { ...base, passed: false, expected: wants.join('; '), measured: weighted.error };
    const singles = await sendUntilRefused(() => probe.call(1), wantSingles + 1);
    if (singles.error) return { ...base, passed: false, expected: wants.join('; '), measured: singles.error };
    const label = `cost ${cost} (${endpoints.join(', ')})`;
    wants.push(`${label}: ${wantWeighted} then ${wantSingles} cost-1`);
    parts.push(`${label}: ${weighted.admitted.length} then ${singles.admitted.length} cost-1`);
    numbers[`cost${cost}Admitted`] = weighted.admitted.length;
    numbers[`cost${cost}Expected`] = wantWeighted;
    numbers[`cost${cost}LeftoverAdmitted`] = singles.admitted.length;
    numbers[`cost${cost}LeftoverExpected`] = wantSingles;
    if (weighted.admitted.length !== wantWeighted)
      problems.push(`${label}: ${weighted.admitted.length} weighted calls admitted, expected ${wantWeighted}`);
    if (singles.admitted.length !== wantSingles)
      problems.push(`${label}: ${singles.admitted.length} cost-1 calls admitted after it, expected ${wantSingles}`);
    if (cost > burst && weighted.refused && weighted.refused.retryAfterMs !== -1) {
      problems.push(`${label}: a call that can never fit got Retry-After ${weighted.refused.retryAfterMs} ms instead of -1 (never)`);
    }
  }
  return {
    ...base,
    passed: problems.length === 0,
    expected: wants.join('; '),
    measured: parts.join('; '),
    ...(problems.length ? { detail: problems.join('; ') } : {}),
    numbers,
  };
}

/**
 * Concurrent requests racing for the last tokens: drain a fresh key to 10 left, then fire 200
 * requests at once for the same identity, through one runtime limiter per connection (as
 * several app instances would). Exactly 10 are admitted: the check-and-consume is one atomic script call,
 * so no two requests spend the same token.
 */
import { performance } from 'node:perf_hooks';
import { shapeFor } from '../shapes.js';
import { errorOf, type Outcome, type RuleContext } from './context.js';

export const RACE_REQUESTS = 200;
export const RACE_LEFT = 10;

export async function concurrentRace(ctx: RuleContext): Promise<Outcome> {
  const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'exact', Date.now());
  const left = Math.min(RACE_LEFT, shape.capacity);
  const probe = ctx.probe(shape, 'race', { pool: true, costs: shape.capacity > left ? [shape.capacity - left] : [] });
  const base = { params: shape.params, ...(shape.scaling ? { scaling: shape.scaling } : {}) };
  const connections = probe.connections;
  const expected = `exactly ${left} of ${RACE_REQUESTS} admitted`;
  if (shape.capacity > left) {
    const d = await probe.call(shape.capacity - left);
    if (!d.allowed || d.remaining !== left) {
      return {
        ...base,
        passed: false,
        expected,
        measured: d.error
          ? `a limiter call failed: ${d.error}`
          : `draining to ${left} left failed (${d.allowed ? `${d.remaining} left` : 'refused'})`,
      };
    }
  }
  const started = performance.now();
  const decisions = await Promise.all(Array.from({ length: RACE_REQUESTS }, (_, i) => probe.call(1, i % connections)));
  const ms = performance.now() - started;
  const error = errorOf(decisions);
  if (error) return { ...base, passed: false, expected, measured: error };
  const admitted = decisions.filter((d) => d.allowed).length;
  const passed = admitted === left;
  return {
    ...base,
    passed,
    expected,
    measured: `${admitted} admitted, ${RACE_REQUESTS - admitted} refused (${RACE_REQUESTS} at once over ${connections} connections, ${Math.round(ms)} ms)`,
    ...(passed
      ? {}
      : {
          detail:
            admitted > left
              ? `${admitted - left} requests over the limit were admitted: the check and the consume are not one atomic step`
              : `${left - admitted} requests that should have passed were refused`,
        }),
    numbers: { admitted, expected: left, refused: RACE_REQUESTS - admitted, requests: RACE_REQUESTS, connections },
  };
}

/**
 * Burst at the limit boundary: a fresh identity sends the whole burst (or the whole limit)
 * back to back through the shipped runtime, one request at a time, then one more. Every request of the burst passes with
 * the remaining count falling by one to 0; the next is refused with a Retry-After that points
 * at the next free unit (for a quota: the end of the period in the plan's time zone).
 */
import { performance } from 'node:perf_hooks';
import { formatRetry, MAX_EXACT, shapeFor } from '../shapes.js';
import { plural, type Outcome, type RuleContext } from './context.js';

/**
 * gcra.lua answers a fast denial (a key past its limit) from the key's TTL plus 2 ms, an upper
 * bound it documents (the TTL lags the stored arrival time by up to 1 ms): so much over one
 * unit's recovery is the script's contract, not an error.
 */
const GCRA_FAST_DENIAL_SLACK_MS = 2;

/** Slack allowed between the Retry-After and the clock-derived expectation, ms. */
const CLOCK_SLACK_MS = 2000;

export async function burstAtBoundary(ctx: RuleContext): Promise<Outcome> {
  const shape = shapeFor(ctx.driver, ctx.rule, ctx.design, 'exact', Date.now());
  const cap = shape.capacity;
  const sent = Math.min(cap, MAX_EXACT);
  const probe = ctx.probe(shape, 'burst', { costs: cap > sent ? [cap - sent] : [] });
  const call = (cost: number) => probe.call(cost);
  const base = { params: shape.params, ...(shape.scaling ? { scaling: shape.scaling } : {}) };
  const expected = `${plural(sent, 'request')} admitted with remaining falling to 0, #${sent + 1} refused with Retry-After`;

  let drained = 0;
  if (cap > sent) {
    const d = await call(cap - sent);
    if (!d.allowed) {
      return {
        ...base,
        passed: false,
        expected,
        measured: d.error ? `a limiter call failed: ${d.error}` : `a first call of cost ${cap - sent} was refused`,
        numbers: { admitted: 0, expected: sent },
      };
    }
    drained = cap - sent;
  }
  const started = performance.now();
  let admitted = 0;
  const wrongRemaining: string[] = [];
  for (let i = 0; i < sent; i++) {
    const d = await call(1);
    if (d.error) return { ...base, passed: false, expected, measured: `a limiter call failed: ${d.error}` };
    if (!d.allowed) break;
    admitted++;
    const want = cap - drained - admitted;
    if (d.remaining !== want && wrongRemaining.length < 3) wrongRemaining.push(`#${admitted} said ${d.remaining} left, expected ${want}`);
  }
  const extra = await call(1);
  const elapsed = performance.now() - started;
  if (extra.error) return { ...base, passed: false, expected, measured: `a limiter call failed: ${extra.error}` };

  const problems: string[] = [];
  if (admitted < sent) problems.push(`only ${admitted} of ${sent} admitted`);
  if (extra.allowed) problems.push(`#${sent + 1} was admitted: the burst let through more than its capacity`);
  if (wrongRemaining.length) problems.push(`remaining count wrong: ${wrongRemaining.join('; ')}`);
  let retryNote = '';
  if (!extra.allowed) {
    const r = extra.retryAfterMs;
    // the header the client reads: whole seconds, never before the limiter's own wait
    const header = extra.retryAfterHeader;
    if (ctx.driver !== 'outbound' && (header === undefined || !Number.isInteger(header) || header < 1 || header * 1000 < r)) {
      problems.push(`the 429 carried Retry-After: ${header ?? '(none)'} for a wait of ${r} ms`);
    }
    if (r < 1) problems.push(`the refusal carried Retry-After ${r} ms (wanted >= 1 ms)`);
    else if (shape.period) {
      const want = shape.period.endMs - (await ctx.store.time());
      if (Math.abs(r - want) > CLOCK_SLACK_MS + elapsed)
        problems.push(`Retry-After ${r} ms does not point at the end of the period (${want} ms away)`);
      retryNote = `, the end of ${shape.period.description}`;
    } else if (r > shape.recoverMs + GCRA_FAST_DENIAL_SLACK_MS) {
      problems.push(`Retry-After ${r} ms is longer than one unit takes to come back (${Math.ceil(shape.recoverMs)} ms)`);
    }
  }
  const measured =
    `${admitted}/${sent} admitted${drained ? ` (after one call of cost ${drained.toLocaleString('en-US')})` : ''}` +
    (wrongRemaining.length ? ', remaining count off' : ', remaining fell to 0') +
    `, #${sent + 1} ${extra.allowed ? 'ADMITTED' : `refused (Retry-After ${formatRetry(extra.retryAfterMs)}${retryNote})`}`;
  return {
    ...base,
    passed: problems.length === 0,
    expected,
    measured,
    ...(problems.length ? { detail: problems.join('; ') } : {}),
    numbers: { admitted, expected: sent, refused: extra.allowed ? 0 : 1, retryAfterMs: extra.retryAfterMs, drained },
  };
}

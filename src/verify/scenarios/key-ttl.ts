/**
 * TTL on every key: after the scenarios, every key the run wrote for a rule (the keys it was
 * handed, and anything else SCAN finds under the rule's prefix: one SCAN for the whole run,
 * so a big keyspace is walked once) carries a TTL, no longer than the parameters allow. A key without a TTL is a memory leak: idle identities never go away.
 */
import { formatMs } from '../shapes.js';
import type { Outcome, RuleContext } from './context.js';

/** Slack on the upper bound, ms (rounding inside the scripts). */
const SLACK_MS = 1000;

export async function keyTtl(ctx: RuleContext): Promise<Outcome> {
  const issued = ctx.keys.issuedFor(ctx.number);
  const prefix = ctx.keys.rulePrefix(ctx.number);
  const found = (await ctx.runKeys()).filter((k) => k.startsWith(prefix));
  const all = new Set([...issued.keys(), ...found]);
  const missing: string[] = [];
  const tooLong: string[] = [];
  let live = 0;
  let gone = 0;
  let longest = 0;
  for (const key of all) {
    const pttl = await ctx.store.pttl(key);
    if (pttl === -2) {
      gone++;
      continue;
    }
    if (pttl === -1) {
      missing.push(key);
      continue;
    }
    live++;
    longest = Math.max(longest, pttl);
    const max = issued.get(key);
    if (max !== undefined && pttl > max + SLACK_MS) tooLong.push(`${key} (${formatMs(pttl)} > ${formatMs(max)})`);
  }
  const problems: string[] = [];
  if (missing.length) problems.push(`${missing.length} key(s) without a TTL, e.g. ${missing.slice(0, 2).join(', ')}`);
  if (tooLong.length)
    problems.push(
      `${tooLong.length} key(s) with a TTL longer than the parameters allow (state past the burst or limit: more was admitted than the key could hold), e.g. ${tooLong.slice(0, 2).join(', ')}`,
    );
  if (live + missing.length + tooLong.length === 0 && gone === 0) problems.push('the scenarios wrote no key to check');
  return {
    passed: problems.length === 0,
    expected: 'every key has a TTL within its bound',
    measured:
      `${live + missing.length} live key(s): ${missing.length ? `${missing.length} WITHOUT TTL` : 'all with a TTL'}${live ? ` (longest ${formatMs(longest)})` : ''}` +
      `${tooLong.length ? `, ${tooLong.length} LONGER than the parameters allow` : ''}${gone ? `; ${gone} already expired` : ''}`,
    ...(problems.length ? { detail: problems.join('; ') } : {}),
    numbers: { keys: all.size, live, withoutTtl: missing.length, tooLong: tooLong.length, expired: gone, longestTtlMs: longest },
  };
}

/**
 * Constraint 6: every key expires, and the number of keys is bounded and stated. TTLs bound
 * the store's memory; eviction must not be the bound. The one state kept without a TTL is the
 * outbound client's in-process bucket (inProcessOutbound): an entry of its own Map per provider,
 * never dropped while the client lives, so the providers bound it, not time. It is judged by
 * that bound, and a TTL stated for it is reported, since nothing would apply it.
 */
import { inProcessOutbound, type MatrixRule } from '../design/model.js';
import { joinAnd } from '../format.js';
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, ruleIdOf, rulesOf } from './guards.js';
import { shippedLua } from './artefacts.js';

/** Slack for floating-point error in the lifetime arithmetic. */
const EPSILON = 1e-6;

/**
 * Seconds a rule's state must survive idle before dropping it changes no decision:
 * a full refill for buckets, the window (two for the counter's previous window) otherwise.
 * Undefined when the rule's numbers are not all there (constraint 1 reports that).
 */
function stateLifetimeSeconds(rule: MatrixRule): number | undefined {
  const period = rule.rate?.periodSeconds;
  const requests = rule.rate?.requests;
  if (!isPositiveNumber(period) || !isPositiveNumber(requests)) return undefined;
  switch (rule.algorithm) {
    case 'token-bucket':
    case 'leaky-bucket':
    case 'gcra':
      return isPositiveNumber(rule.burst) ? (rule.burst * period) / requests : undefined;
    case 'sliding-window-counter':
      return 2 * period;
    case 'sliding-window-log':
    case 'fixed-window':
      return period;
    default:
      return undefined;
  }
}

export default defineConstraint({
  meta: {
    id: 'bounded-keys',
    number: 6,
    title: 'Every key has a TTL; key cardinality is bounded and stated',
    description:
      "Each rule states its key pattern, a TTL on every key it writes (long enough to keep its state), and a finite bound on how many keys it creates, with the basis of that bound. The outbound client's in-process bucket is the exception: it keeps one entry per provider for as long as the client lives, so it states no TTL and is judged by that bound alone.",
    messages: {
      missingKey: 'The rule states no key pattern, so its keys cannot be bounded.',
      missingTtl: 'The rule sets no TTL on its keys; idle keys would stay in the store forever.',
      ttlNeverApplied:
        "The rule states a TTL of {{ttl}}s, but its bucket is an entry of the outbound client's own Map, which the client keeps while it lives and never expires: state no TTL (its bound is one entry per provider).",
      ttlTooShort:
        'TTL {{ttl}}s is shorter than the {{needed}}s that {{algorithm}} state must live; keys would expire early and reset the limit.',
      unboundedCardinality: 'The rule states no finite bound on how many keys it creates.',
      cardinalityNotStated: 'The rule bounds its keys at {{bound}} but does not say what the bound is based on.',
      penaltyWithoutTtl:
        'The penalty box keeps its {{key}} key without a positive lifetime ({{field}}); its keys would stay in the store forever.',
      luaWithoutTtl:
        'lua/{{file}} writes keys but never sets their expiry (no PEXPIRE, EXPIRE or SET ... PX): its keys would live for ever.',
    },
  },
  check(design, report) {
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      if (!isNonEmptyString(rule.key)) report({ messageId: 'missingKey', ruleId });

      if (inProcessOutbound(rule)) {
        // no TTL applies: the bound below, one entry per provider, is what keeps it finite
        if (rule.ttlSeconds !== undefined) report({ messageId: 'ttlNeverApplied', ruleId, data: { ttl: String(rule.ttlSeconds) } });
      } else if (!isPositiveNumber(rule.ttlSeconds)) {
        report({ messageId: 'missingTtl', ruleId });
      } else {
        const needed = stateLifetimeSeconds(rule);
        if (needed !== undefined && rule.ttlSeconds < needed - EPSILON) {
          report({
            messageId: 'ttlTooShort',
            ruleId,
            data: { ttl: rule.ttlSeconds, needed: Math.ceil(needed), algorithm: String(rule.algorithm) },
          });
        }
      }

      const bound = rule.cardinality?.bound;
      if (!isPositiveNumber(bound)) {
        report({ messageId: 'unboundedCardinality', ruleId });
      } else if (!isNonEmptyString(rule.cardinality?.basis)) {
        report({ messageId: 'cardinalityNotStated', ruleId, data: { bound } });
      }
    }
    // the penalty box writes two keys per caller: the refusal counter and the box, each with its lifetime
    const penalty = design?.access?.penalty;
    if (penalty) {
      if (!isPositiveNumber(penalty.withinSeconds))
        report({ messageId: 'penaltyWithoutTtl', data: { key: 'strikes', field: 'withinSeconds' } });
      if (!isPositiveNumber(penalty.blockSeconds)) report({ messageId: 'penaltyWithoutTtl', data: { key: 'box', field: 'blockSeconds' } });
    }
  },
  passNote(design) {
    // the outbound client's in-process buckets pass by their bound, not a TTL: say so
    const held = rulesOf(design).filter((r) => inProcessOutbound(r) && r.ttlSeconds === undefined);
    if (held.length === 0) return undefined;
    const ids = joinAnd(held.map((r) => String(r.id)));
    return `${ids} ${held.length === 1 ? 'has' : 'have'} no TTL: one in-process entry per provider, bounded by the providers`;
  },
  checkFiles(_design, files, report) {
    for (const [file, source] of shippedLua(files)) {
      const code = source.replace(/--[^\n]*/g, '');
      const writes = /redis\.call\(\s*'(?:SET|HSET|HMSET|INCRBY|INCR|ZADD|RPUSH|LPUSH|HINCRBY)'/i.test(code);
      const expires = /redis\.call\(\s*'(?:PEXPIRE|EXPIRE|PEXPIREAT|EXPIREAT)'/i.test(code) || /'PX'|'EX'/.test(code);
      if (writes && !expires) report({ messageId: 'luaWithoutTtl', data: { file } });
    }
  },
});

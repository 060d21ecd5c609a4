/**
 * Who a rule keyed on an account identity counts when the caller lacks that identity: the
 * middleware counts such a caller under the next identity it has (the same numbers, that
 * identity's own key label), a quota never by address, and a plan row only callers of its plan,
 * the first plan standing in for a caller whose plan identify() does not name. The document
 * states it beside the matrix, whose Identity column names only the rule's own identity.
 */
import { joinAnd } from '../format.js';
import { fallbackLabel } from '../runtime/middleware/keys.js';
import { coveredEndpoints } from './matrix.js';
import type { IdentityFallback, MatrixRule, RuleIdentity, Scope } from './model.js';

/** The order the middleware tries a caller's identities in (src/runtime/middleware/limiter.ts, FALLBACK_ORDER). */
export const FALLBACK_ORDER = ['api-key', 'user', 'tenant', 'session', 'ip'] as const;

import { ACCOUNT_IDENTITIES } from './naming.js';

export { ACCOUNT_IDENTITIES };

const WORD: Record<(typeof FALLBACK_ORDER)[number], string> = {
  'api-key': 'API key',
  user: 'user',
  tenant: 'tenant',
  session: 'session',
  ip: 'client IP',
};

const WITH_ARTICLE: Record<(typeof FALLBACK_ORDER)[number], string> = {
  'api-key': 'an API key',
  user: 'a user',
  tenant: 'a tenant',
  session: 'a session',
  ip: 'an address',
};

/** What fills the identity slot of a key for a caller counted by each identity. */
const PLACEHOLDER: Record<(typeof FALLBACK_ORDER)[number], string> = {
  'api-key': '<api-key-id>',
  user: '<user-id>',
  tenant: '<tenant-id>',
  session: '<session-id>',
  ip: '<client-ip>',
};

/**
 * A rule's key pattern as the middleware fills it for a caller counted by `kind` instead of the
 * rule's own identity (fallbackLabel, the runtime's own function): rl:{u:<user-id>}:req and an
 * API key give rl:{u~ak:<api-key-id>}:req.
 */
export function fallbackKeyPattern(pattern: string, kind: (typeof FALLBACK_ORDER)[number]): string {
  const re = /([A-Za-z0-9_-]+:)?<([^<>]*)>/g;
  for (let m = re.exec(pattern); m !== null; m = re.exec(pattern)) {
    if (/yyyy/i.test(m[2] ?? '')) continue;
    return pattern.slice(0, m.index) + fallbackLabel(m[1] ?? '', kind) + PLACEHOLDER[kind] + pattern.slice(re.lastIndex);
  }
  // a pattern without an identity slot gets one key per identity after it
  return `${pattern}:${fallbackLabel('', kind)}${PLACEHOLDER[kind]}`;
}

/**
 * The keys such a caller is counted under, as the middleware writes them: for the first row of
 * each identity, its key for each identity a caller may be counted by instead; and, where the
 * design has rows keyed on one of those identities, that the two never meet.
 */
function fallbackKeysText(keyed: readonly MatrixRule[], rules: readonly MatrixRule[], answered: ReadonlySet<string>): string {
  const firsts = keyed.filter((r, i) => keyed.findIndex((x) => x.identity === r.identity) === i);
  const met = new Set<string>();
  const examples = firsts.map((rule) => {
    const own = rule.identity as (typeof FALLBACK_ORDER)[number];
    const kinds = FALLBACK_ORDER.filter((k) => k !== own && (k === 'ip' ? rule.tier !== 'quota' : answered.has(k)));
    for (const k of kinds) met.add(k);
    const each = kinds.map(
      (k, i) => `${fallbackKeyPattern(rule.key ?? '', k)} ${i === 0 ? 'for a caller counted by its' : 'by its'} ${WORD[k]}`,
    );
    return `${rule.id}'s ${rule.key} becomes ${joinAnd(each)}`;
  });
  const meets = rules.some((r) => r.layer === 'middleware' && r.key !== undefined && r.identity !== undefined && met.has(r.identity));
  return `Such a caller's key keeps the row's own label and adds, after a "~" that no identity value contains, the label of the identity it is counted by: ${examples.join('; ')}.${meets ? ' So a fallback key is never the key or identity hash of a row keyed on the identity the caller is counted by: no two rows share a counter, and no key meets a command for another type.' : ''}`;
}

/** The plan a caller counts as when identify() names none: the first plan (the runtime's defaultPlan). */
export function defaultPlanOf(scope: Pick<Scope, 'plans'>): string | undefined {
  return scope.plans[0]?.name;
}

export function buildIdentityFallback(scope: Scope, rules: readonly MatrixRule[]): IdentityFallback | undefined {
  const keyed = rules.filter((r) => r.layer === 'middleware' && r.identity !== undefined && ACCOUNT_IDENTITIES.includes(r.identity));
  if (keyed.length === 0) return undefined;
  const identities = [...new Set(keyed.map((r) => r.identity as RuleIdentity))];
  const quotas = keyed.filter((r) => r.tier === 'quota');
  const planRules = keyed.filter((r) => r.plan !== undefined);
  const defaultPlan = planRules.length > 0 ? defaultPlanOf(scope) : undefined;
  const answered = new Set<string>(scope.identities);
  // where callers may be anonymous, the middleware counts no caller by address under these rows
  // (RouteSpec.anonymous): only the per-IP rows covering those endpoints count such a caller
  const anonymous = scope.endpoints.filter(
    (e) => e.anonymous && e.class !== 'health' && keyed.some((r) => coveredEndpoints(r, scope).includes(e)),
  );
  const perIp = rules.filter((r) => r.identity === 'ip' && anonymous.some((e) => coveredEndpoints(r, scope).includes(e)));
  const parts: string[] = [];
  // the order names the design's identities (and the client IP, always there); the middleware
  // tries every kind identify() returns, so one the answers leave out is named apart
  const listed = FALLBACK_ORDER.filter((k) => k === 'ip' || answered.has(k));
  const unlisted = FALLBACK_ORDER.filter((k) => k !== 'ip' && !answered.has(k));
  parts.push(
    `The rows keyed on ${joinAnd(identities.map((i) => WITH_ARTICLE[i as keyof typeof WITH_ARTICLE]))} (${joinAnd(keyed.map((r) => r.id))}) count a caller that identify() gives no such identity under the first other one it has, in the order ${listed.map((k) => WORD[k]).join(', ')}, with the same numbers${
      unlisted.length > 0
        ? ` (the answers list no ${orList(unlisted.map((k) => WORD[k]))}; should identify() return one anyway, the middleware tries it in its place in the order ${FALLBACK_ORDER.map((k) => WORD[k]).join(', ')})`
        : ''
    }.`,
  );
  const keys = fallbackKeysText(keyed, rules, answered);
  parts.push(keys);
  if (quotas.length > 0) {
    parts.push(
      `A quota (${joinAnd(quotas.map((r) => r.id))}) stops before the client IP: a caller known only by its address is counted by no quota.`,
    );
  }
  const others = FALLBACK_ORDER.filter((k) => k !== 'ip' && answered.has(k) && !identities.includes(k));
  if (others.length > 0) {
    parts.push(
      `So a caller identified by ${others.map((k) => WITH_ARTICLE[k]).join(' or ')} alone (${others.includes('session') ? (answered.has('user') ? 'a browser with a session cookie that has not signed in, say' : 'a browser signed in with a session cookie, say') : 'one of the identities the answers list'}) is limited per ${others.map((k) => WORD[k]).join(' or per ')} by these rows${quotas.length > 0 ? ', quotas included' : ''}, and a request with no identity at all per address${quotas.length > 0 ? ' (quotas aside)' : ''}${anonymous.length > 0 ? `, except where callers may be anonymous` : ''}.`,
    );
  }
  if (anonymous.length > 0) {
    const names = joinAnd(anonymous.map((e) => e.name));
    const ids = [...identities, ...others].map((k) => WITH_ARTICLE[k as keyof typeof WITH_ARTICLE]);
    parts.push(
      `${names} ${anonymous.length === 1 ? 'allows' : 'allow'} anonymous callers: there these rows count a caller with ${ids.join(' or ')} as on any other endpoint, and never a caller with ${ids.length > 1 ? 'none of them' : 'none'}, not even by its address: ${perIp.length > 0 ? `only ${joinAnd(perIp.map((r) => r.id))} ${perIp.length === 1 ? 'counts' : 'count'} it` : `no rule keyed on the client IP covers ${anonymous.length === 1 ? 'it' : 'them'}, so nothing limits such a caller there (add one)`}.`,
    );
  }
  parts.push(
    `The cardinality bounds and the memory estimate count these rows' keys per ${joinAnd(identities.map((i) => WORD[i as keyof typeof WORD]))} only: the keys of callers counted by ${[...others, 'ip' as const].map((k) => WITH_ARTICLE[k]).join(' or ')} come on top, so size the store and the key-count alert for them where such callers are many.`,
  );
  if (defaultPlan !== undefined) {
    parts.push(
      `The plan rows (${joinAnd(planRules.map((r) => r.id))}) count only callers of their plan, the plan identify() returns; a caller it names no plan for${others.length > 0 ? `, such as one known by ${others.map((k) => WITH_ARTICLE[k]).join(' or ')} alone,` : ''} is counted as plan ${defaultPlan}, the first plan of the answers (the limiter's defaultPlan option names another).`,
    );
  }
  return {
    ruleIds: keyed.map((r) => r.id),
    ...(defaultPlan !== undefined ? { defaultPlan } : {}),
    keys,
    anonymousEndpoints: anonymous.map((e) => ({ name: e.name, method: e.method, route: e.route })),
    explanation: parts.join(' '),
  };
}

/** "a", "a or b", "a, b or c". */
function orList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

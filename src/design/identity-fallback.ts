/**
 * Who a rule keyed on an account identity counts when the caller lacks that identity: the
 * middleware counts such a caller under the next identity it has (the same numbers, that
 * identity's own key label), a quota never by address, and a plan row only callers of its plan,
 * the first plan standing in for a caller whose plan identify() does not name. The document
 * states it beside the matrix, whose Identity column names only the rule's own identity.
 */
import { joinAnd } from '../format.js';
import type { IdentityFallback, MatrixRule, RuleIdentity, Scope } from './model.js';

/** The order the middleware tries a caller's identities in (src/runtime/middleware/limiter.ts, FALLBACK_ORDER). */
export const FALLBACK_ORDER = ['api-key', 'user', 'tenant', 'session', 'ip'] as const;

/** The identities whose rules fall back to another one. */
const ACCOUNT: readonly RuleIdentity[] = ['api-key', 'user', 'tenant', 'session'];

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

const LABEL: Record<(typeof FALLBACK_ORDER)[number], string> = {
  'api-key': 'ak:<api-key-id>',
  user: 'u:<user-id>',
  tenant: 't:<tenant-id>',
  session: 's:<session-id>',
  ip: 'ip:<client-ip>',
};

/** The plan a caller counts as when identify() names none: the first plan (the runtime's defaultPlan). */
export function defaultPlanOf(scope: Pick<Scope, 'plans'>): string | undefined {
  return scope.plans[0]?.name;
}

export function buildIdentityFallback(scope: Scope, rules: readonly MatrixRule[]): IdentityFallback | undefined {
  const keyed = rules.filter((r) => r.layer === 'middleware' && r.identity !== undefined && ACCOUNT.includes(r.identity));
  if (keyed.length === 0) return undefined;
  const identities = [...new Set(keyed.map((r) => r.identity as RuleIdentity))];
  const quotas = keyed.filter((r) => r.tier === 'quota');
  const planRules = keyed.filter((r) => r.plan !== undefined);
  const defaultPlan = planRules.length > 0 ? defaultPlanOf(scope) : undefined;
  const answered = new Set<string>(scope.identities);
  const parts: string[] = [];
  parts.push(
    `The rows keyed on ${joinAnd(identities.map((i) => WITH_ARTICLE[i as keyof typeof WITH_ARTICLE]))} (${joinAnd(keyed.map((r) => r.id))}) count a caller that identify() gives no such identity under the first other one it has, in the order ${FALLBACK_ORDER.map((k) => WORD[k]).join(', ')}, with that identity's own label in the key (rl:{${LABEL.session}}, rl:{${LABEL.ip}}) and the same numbers.`,
  );
  if (quotas.length > 0) {
    parts.push(
      `A quota (${joinAnd(quotas.map((r) => r.id))}) stops before the client IP: a caller known only by its address is counted by no quota.`,
    );
  }
  const others = FALLBACK_ORDER.filter((k) => k !== 'ip' && answered.has(k) && !identities.includes(k));
  if (others.length > 0) {
    parts.push(
      `So a caller identified by ${others.map((k) => WITH_ARTICLE[k]).join(' or ')} alone (${others.includes('session') ? 'a browser signed in with a session cookie, say' : 'one of the identities the answers list'}) is limited per ${others.map((k) => WORD[k]).join(' or per ')} by these rows${quotas.length > 0 ? ', quotas included' : ''}, and a request with no identity at all per address${quotas.length > 0 ? ' (quotas aside)' : ''}.`,
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
    explanation: parts.join(' '),
  };
}

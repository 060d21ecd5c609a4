/**
 * Access lists and outage behaviour beyond the rules: who skips rules (allowlist), who is refused
 * before any rule (deny list), who is blocked for a while after repeated refusals (penalty box),
 * which identities the application computes with its own function, and the in-memory fallback
 * fail-open rules use while the store is down. Pure: answers and rules in, data out.
 */
import type { Answers } from '../answers/schema.js';
import { formatNumber, joinAnd, secondsWords } from '../format.js';
import type { AccessDesign, Enforcement, MatrixRule, RuleTier, Scope } from './model.js';
import { KEY_PREFIX } from './naming.js';
import { perCounter } from './worst-case.js';
import { deniedFields } from '../runtime/middleware/access.js';
import { silentProblemFields } from '../runtime/middleware/responses.js';

/** Tiers an allowlisted request skips unless the answers say otherwise: per-caller limits, not the ceiling or the auth rows. */
const DEFAULT_ALLOW_TIERS: readonly RuleTier[] = ['fairness', 'quota'];
/** Tiers whose refusals feed the penalty box unless the answers say otherwise: the auth rows. */
const DEFAULT_PENALTY_TIERS: readonly RuleTier[] = ['security'];
/** The status a denied request gets unless the answers say otherwise. */
const DEFAULT_DENY_STATUS = 403;

/** The option of createLimiter (and of every adapter) that takes the function for each identity kind. */
const CUSTOM_IDENTITY_OPTION: Readonly<Record<string, string>> = {
  'api-key': "identities['api-key']",
  user: 'identities.user',
  tenant: 'identities.tenant',
  session: 'identities.session',
  ip: 'identities.ip',
  username: 'identities.username',
};

/** Rules the middleware runs on the store: the ones an allowlist can skip and a penalty box can follow. */
function middlewareRules(rules: readonly MatrixRule[]): MatrixRule[] {
  return rules.filter((r) => r.tier !== 'outbound' && r.layer !== 'edge' && r.layer !== 'outbound-client' && r.identity !== 'provider');
}

function identityText(i: { kind: string; value: string }): string {
  return `${i.kind} ${JSON.stringify(i.value)}`;
}

function whoText(cidrs: readonly string[], identities: readonly { kind: string; value: string }[], routes: readonly string[] = []): string {
  const parts: string[] = [
    ...(cidrs.length > 0 ? [`client addresses in ${joinAnd(cidrs)}`] : []),
    ...(identities.length > 0 ? [`the verified ${joinAnd(identities.map(identityText))}`] : []),
    ...(routes.length > 0 ? [`requests to ${joinAnd(routes)}`] : []),
  ];
  const text = joinAnd(parts);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function buildAccess(answers: Answers, rules: readonly MatrixRule[], docsUrl: string): AccessDesign | undefined {
  const a = answers.access;
  if (!a) return undefined;
  const own = middlewareRules(rules);
  const out: AccessDesign = { customIdentities: [] };
  if (a.allow && ((a.allow.cidrs?.length ?? 0) > 0 || (a.allow.identities?.length ?? 0) > 0 || (a.allow.routes?.length ?? 0) > 0)) {
    const tiers = [...(a.allow.tiers ?? DEFAULT_ALLOW_TIERS)];
    const cidrs = [...(a.allow.cidrs ?? [])];
    const identities = (a.allow.identities ?? []).map((i) => ({ kind: i.kind, value: i.value }));
    const routes = (a.allow.routes ?? []).map((r) => ({ method: r.method, route: r.route }));
    const ruleIds = own.filter((r) => tiers.includes(r.tier)).map((r) => r.id);
    const kept = own.filter((r) => !tiers.includes(r.tier)).map((r) => r.id);
    const edge = rules.filter((r) => r.layer === 'edge').map((r) => r.id);
    out.allow = {
      cidrs,
      identities,
      routes,
      tiers,
      ruleIds,
      ...(a.allow.reason ? { reason: a.allow.reason } : {}),
      text: `${whoText(
        cidrs,
        identities,
        routes.map((r) => `${r.method} ${r.route}`),
      )} ${identities.length === 1 && cidrs.length + routes.length === 0 ? 'skips' : 'skip'} the ${joinAnd(tiers)} rules (${ruleIds.length > 0 ? joinAnd(ruleIds) : 'none in the middleware'}) without a store call${a.allow.reason ? `: ${a.allow.reason}` : ''}. ${kept.length > 0 ? `${joinAnd(kept)} still count${kept.length === 1 ? 's' : ''} ${identities.length === 1 && cidrs.length + routes.length === 0 ? 'it' : 'them'}. ` : ''}${edge.length > 0 ? `Edge rules (${joinAnd(edge)}) run in the gateway, which does not read this list. ` : ''}Addresses are matched after the trusted-proxy walk (an address a client writes in X-Forwarded-For is never read), identities as identify() returns them.`,
    };
  }
  if (a.deny && ((a.deny.cidrs?.length ?? 0) > 0 || (a.deny.identities?.length ?? 0) > 0)) {
    const status = a.deny.status ?? DEFAULT_DENY_STATUS;
    const cidrs = [...(a.deny.cidrs ?? [])];
    const identities = (a.deny.identities ?? []).map((i) => ({ kind: i.kind, value: i.value }));
    out.deny = {
      cidrs,
      identities,
      status,
      text: `${whoText(cidrs, identities)} get ${status} on every route the middleware covers, before any rule and without a store call (exempt endpoints such as health checks excepted). The deny list holds when a rule is switched off or in shadow mode, and the allowlist never overrides it.`,
      body: deniedFields(docsUrl, status),
    };
  }
  if (a.penalty) {
    const tiers = [...(a.penalty.tiers ?? DEFAULT_PENALTY_TIERS)];
    const ruleIds = own.filter((r) => tiers.includes(r.tier)).map((r) => r.id);
    const p = a.penalty;
    out.penalty = {
      tiers,
      ruleIds,
      refusals: p.refusals,
      withinSeconds: p.withinSeconds,
      blockSeconds: p.blockSeconds,
      keys: { strikes: `${KEY_PREFIX}:{pb:<identity>}:strikes`, box: `${KEY_PREFIX}:{pb:<identity>}:box` },
      text: `A caller refused ${p.refusals === 1 ? 'once' : `${formatNumber(p.refusals)} times`} within ${secondsWords(p.withinSeconds)} by ${ruleIds.length > 0 ? joinAnd(ruleIds) : `a ${joinAnd(tiers)} rule`} is blocked for ${secondsWords(p.blockSeconds)} on the routes of those rules: each request gets a silent 429 whose Retry-After is the time left, without reaching the rules. The caller is its own identity (API key, user, tenant, session, else the client address), never the account name being tried, so nobody can lock another person out. A request on those routes costs one more store call (the box is read before the rules), and a refusal one more. One Lua script (penalty.lua) counts the refusal and shuts the box atomically; the counter expires after ${secondsWords(p.withinSeconds)} and the box after ${secondsWords(p.blockSeconds)}.`,
      body: silentProblemFields(docsUrl, p.blockSeconds),
    };
  }
  out.customIdentities = (a.customIdentities ?? []).map((c) => ({
    kind: c.kind,
    from: c.from,
    option: CUSTOM_IDENTITY_OPTION[c.kind] ?? c.kind,
  }));
  if (out.customIdentities.length > 0) {
    out.customText = `Pass one function per identity kind in the options of the adapter (or createLimiter): ${joinAnd(out.customIdentities.map((c) => `${c.option}: (req) => string | undefined`))}. Each answer replaces what identify() gives for that kind${out.customIdentities.some((c) => c.kind === 'ip') ? ', and identities.ip replaces the trusted-proxy walk' : ''}; the limiter refuses to start without them. Return only values your application has verified.`;
  }
  if (!out.allow && !out.deny && !out.penalty && out.customIdentities.length === 0) return undefined;
  return out;
}

/** The most one counter of the rule admits within any stretch of its period (the worst-case table's own formula). */
function perWindow(rule: MatrixRule): number {
  if (rule.rate === undefined || rule.algorithm === undefined) return rule.rate?.requests ?? 0;
  return perCounter({ ...rule, rate: rule.rate, algorithm: rule.algorithm }).worstCase;
}

/** The in-memory fallback of fail-open rules while the store is down (answers failure.fallback = memory). */
export function buildFallback(answers: Answers, scope: Scope, rules: readonly MatrixRule[]): Enforcement['fallback'] {
  if (answers.failure?.fallback !== 'memory') return undefined;
  const covered = rules.filter(
    (r) => r.layer === 'middleware' && r.primitive === 'redis-lua' && r.failMode === 'open' && r.tier !== 'outbound' && r.rate,
  );
  if (covered.length === 0) return undefined;
  const n = scope.topology === 'horizontal' ? scope.instances : 1;
  const list = covered.map((r) => {
    const normalMost = perWindow(r);
    return { ruleId: r.id, window: secondsWords(r.rate?.periodSeconds ?? 1), normalMost, outageMost: n * normalMost };
  });
  return {
    ruleIds: covered.map((r) => r.id),
    instances: n,
    rules: list,
    explanation: `While the store is unreachable, the fail-open rules ${joinAnd(covered.map((r) => r.id))} count in each instance's memory with the same algorithm instead of admitting unchecked. Each instance counts on its own, from zero, so one identity can get ${n === 1 ? 'what one bucket admits' : `up to ${n} x what one bucket admits`} per window during the outage${n === 1 ? '' : ` (${n} instances)`}; once the store answers again, its counts decide. Store failures are still counted and alerted on.`,
  };
}

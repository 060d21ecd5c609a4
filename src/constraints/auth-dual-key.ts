/**
 * Constraint 4: every auth endpoint is limited per identity (stops targeted brute force from
 * a botnet) and per IP (stops credential stuffing across many usernames).
 */
import type { MatrixRule, ResolvedEndpoint, RuleIdentity } from '../design/model.js';
import { defineConstraint } from './define.js';
import { isNonEmptyString, objects, ruleIdOf, rulesOf, strings } from './guards.js';

const PER_IDENTITY: readonly RuleIdentity[] = ['username', 'user', 'api-key', 'session'];

/** Names of the auth endpoints in scope, each once. */
function authEndpointNames(endpoints: readonly ResolvedEndpoint[] | undefined): string[] {
  const names = objects(endpoints)
    .filter((e) => e.class === 'auth' && isNonEmptyString(e.name))
    .map((e) => e.name);
  return [...new Set(names)];
}

function covers(rule: MatrixRule, endpoint: string): boolean {
  const names = strings(rule.endpoints);
  return rule.endpointClass === 'auth' && (names.length === 0 || names.includes(endpoint));
}

export default defineConstraint({
  meta: {
    id: 'auth-dual-key',
    number: 4,
    title: 'Auth endpoints are limited per identity and per IP',
    description:
      'Each auth endpoint has a per-identity limit (username, user, API key or session) and a per-IP limit; one without the other leaves a documented bypass.',
    messages: {
      allowlistSkipsAuth:
        'The allowlist lets {{who}} skip this auth row: a leaked allowlisted key, or anyone behind an allowlisted address, could guess passwords without limit. Leave security out of access.allow.tiers.',
      missingDimension:
        'Auth endpoint {{endpoint}} has no {{missing}} limit; with only one of the two keys, brute force has a way around it.',
    },
  },
  applies: (design) => authEndpointNames(design?.scope?.endpoints).length > 0,
  check(design, report) {
    const rules = rulesOf(design);
    for (const endpoint of authEndpointNames(design?.scope?.endpoints)) {
      const covering = rules.filter((r) => covers(r, endpoint));
      const perIdentity = covering.find((r) => r.identity !== undefined && PER_IDENTITY.includes(r.identity));
      const perIp = covering.find((r) => r.identity === 'ip');
      if (perIdentity === undefined) {
        report({
          messageId: 'missingDimension',
          ruleId: perIp && ruleIdOf(perIp),
          data: { endpoint, missing: 'per-identity' },
        });
      }
      if (perIp === undefined) {
        report({
          messageId: 'missingDimension',
          ruleId: perIdentity && ruleIdOf(perIdentity),
          data: { endpoint, missing: 'per-ip' },
        });
      }
    }
    // an allowlist must not lift the auth rows: they are what stands between a guesser and an account
    const allow = design?.access?.allow;
    if (allow) {
      const who = [
        ...strings(allow.cidrs).map((c) => `addresses in ${c}`),
        ...objects(allow.identities).map((i) => `${String(i.kind)} ${JSON.stringify(String(i.value))}`),
        ...objects(allow.routes).map((r) => `requests to ${String(r.method)} ${String(r.route)}`),
      ].join(', ');
      for (const rule of rules) {
        if (rule.tier === 'security' && strings(allow.ruleIds).includes(rule.id)) {
          report({ messageId: 'allowlistSkipsAuth', ruleId: ruleIdOf(rule), data: { who: who || 'allowlisted callers' } });
        }
      }
    }
  },
});

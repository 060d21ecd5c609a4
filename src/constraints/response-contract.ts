/**
 * Constraint 3: every 429 carries Retry-After; rate-limit headers follow one documented
 * convention on every response, except security limits, which stay silent.
 */
import { HEADER_CONVENTIONS } from '../answers/choices.js';
import type { HeaderConvention } from '../design/model.js';
import { defineConstraint } from './define.js';
import { isSecurityRule, objects, ruleIdOf, rulesOf, show, strings } from './guards.js';

/** The headers each convention requires. */
const REQUIRED: Record<HeaderConvention, readonly string[]> = {
  'ietf-structured': ['RateLimit', 'RateLimit-Policy'],
  'ietf-trio': ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  'x-ratelimit': ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
};

/** Whether a rate-limit header (lower case) belongs to a convention. */
function belongsTo(name: string, convention: HeaderConvention): boolean {
  switch (convention) {
    case 'ietf-structured':
      return name === 'ratelimit' || name === 'ratelimit-policy';
    case 'ietf-trio':
      // RateLimit-Policy was introduced alongside the trio in the earlier drafts; the quota
      // trio is the contract's documented extension for a plan quota beside the tightest limit.
      return [
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'ratelimit-policy',
        'ratelimit-quota-limit',
        'ratelimit-quota-remaining',
        'ratelimit-quota-reset',
      ].includes(name);
    case 'x-ratelimit':
      return name.startsWith('x-ratelimit-');
  }
}

/** RateLimit, RateLimit-*, X-RateLimit-*: headers some convention claims (Retry-After is not one). */
function isRateLimitHeader(name: string): boolean {
  return /^(x-)?ratelimit(-|$)/.test(name);
}

export default defineConstraint({
  meta: {
    id: 'response-contract',
    number: 3,
    title: 'Retry-After on every 429, one header convention, silent security limits',
    description:
      'Every 429 carries Retry-After; rate-limit headers follow exactly one documented convention on every client response; security limits suppress them. A rule enforced only at the edge is marked and listed as such (the gateway sends Retry-After but no rate-limit headers); every rule the application enforces sends the full headers.',
    messages: {
      retryAfterMissing: 'The response contract does not put Retry-After on every 429.',
      noConvention: 'The response contract names no header convention (one of {{allowed}}); found {{value}}.',
      noHeaders: 'The response contract lists no rate-limit headers.',
      missingHeader: 'The {{convention}} convention needs the {{header}} header, which the contract does not list.',
      mixedConventions:
        'Header {{header}} is not part of the {{convention}} convention: the contract would emit two conventions.',
      securityNotSilent: 'Security limits must suppress rate-limit headers (headers: silent), but this rule sends {{headers}}.',
      securityNotListed: 'The security rule is missing from the contract list of silent rules.',
      headersNotFull: 'Non-security limits send rate-limit headers on every response (headers: full), but this rule sends {{headers}}.',
      unexpectedSilent: 'The contract lists this non-security rule as silent; only security limits suppress headers.',
      edgeClaimsHeaders:
        'The rule is enforced only at the edge, whose 429 carries Retry-After but no rate-limit headers; the matrix claims {{headers}} (edge rules are marked headers: edge).',
      edgeNotListed: 'The edge-only rule is missing from the contract list of rules enforced at the edge.',
    },
  },
  check(design, report) {
    const contract = design?.contract;
    if (contract?.retryAfter?.onEvery429 !== true) report({ messageId: 'retryAfterMissing' });

    const headerNames = [...objects(contract?.headers), ...objects(contract?.quotaHeaders)]
      .map((h) => h.name)
      .filter((n): n is string => typeof n === 'string')
      .map((n) => n.trim());
    const convention = HEADER_CONVENTIONS.find((c) => c === contract?.convention);

    if (convention === undefined) {
      report({
        messageId: 'noConvention',
        data: { allowed: HEADER_CONVENTIONS.join(', '), value: show(contract?.convention ?? 'none') },
      });
    }
    if (headerNames.length === 0) {
      report({ messageId: 'noHeaders' });
    } else if (convention !== undefined) {
      const lower = headerNames.map((n) => n.toLowerCase());
      for (const header of REQUIRED[convention].filter((h) => !lower.includes(h.toLowerCase()))) {
        report({ messageId: 'missingHeader', data: { convention, header } });
      }
      for (const header of headerNames) {
        const name = header.toLowerCase();
        if (isRateLimitHeader(name) && !belongsTo(name, convention)) {
          report({ messageId: 'mixedConventions', data: { header, convention } });
        }
      }
    }

    // Outbound rules answer no client, so the header policy does not concern them.
    const silentIds = strings(contract?.silentRuleIds);
    const edgeIds = strings(contract?.edgeRuleIds);
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      const listed = ruleId !== undefined && silentIds.includes(ruleId);
      if (isSecurityRule(rule)) {
        if (rule.headers !== 'silent') {
          report({ messageId: 'securityNotSilent', ruleId, data: { headers: show(rule.headers ?? 'none') } });
        }
        if (!listed) report({ messageId: 'securityNotListed', ruleId });
      } else if (rule.tier !== 'outbound') {
        if (rule.layer === 'edge') {
          // the gateway's 429 has Retry-After (checked above for the contract) and no counts:
          // the matrix must say so rather than promise headers nobody sends
          if (rule.headers !== 'edge') {
            report({ messageId: 'edgeClaimsHeaders', ruleId, data: { headers: show(rule.headers ?? 'none') } });
          }
          if (ruleId !== undefined && !edgeIds.includes(ruleId)) report({ messageId: 'edgeNotListed', ruleId });
        } else if (rule.headers !== 'full') {
          report({ messageId: 'headersNotFull', ruleId, data: { headers: show(rule.headers ?? 'none') } });
        }
        if (listed) report({ messageId: 'unexpectedSilent', ruleId });
      }
    }
  },
});

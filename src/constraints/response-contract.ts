/**
 * Constraint 3: every 429 carries Retry-After; rate-limit headers follow one documented
 * convention on every response, except security limits, which stay silent.
 */
import { HEADER_CONVENTIONS } from '../answers/choices.js';
import type { CodeFile } from '../codegen/types.js';
import type { HeaderConvention } from '../design/model.js';
import { FRAMEWORK_ADAPTERS } from '../answers/choices.js';
import { gatewayEdgeRefusals, gatewayRetryAfterFindings } from '../codegen/gateway/index.js';
import { EDGE_BODY_FILES, shippedEdgeBodies, shippedEnvoyUnavailable } from '../codegen/gateway/shipped.js';
import { HEADER_NAMES, headerNamesOf } from '../runtime/middleware/responses.js';
import { DESIGN_DATA_FILE, fileOf, REFUSAL_FILE, shippedDesign } from './artefacts.js';
import { defineConstraint } from './define.js';
import { isSecurityRule, objects, ruleIdOf, rulesOf, show, strings } from './guards.js';

/** The headers each convention requires on every client response: the runtime's own names. */
function required(convention: HeaderConvention): readonly string[] {
  if (convention === 'ietf-structured') return [HEADER_NAMES[convention].policy, HEADER_NAMES[convention].state];
  const n = HEADER_NAMES[convention];
  return [n.limit, n.remaining, n.reset];
}

/**
 * Whether a rate-limit header belongs to a convention: one the runtime sends under it (the
 * quota trio and Quota-Exceeded included), any X-RateLimit-* header under the X- convention,
 * and RateLimit-Policy beside the trio (introduced with it in the earlier drafts). Whether the
 * code sends a listed header is the artefact check's question.
 */
function belongsTo(name: string, convention: HeaderConvention): boolean {
  const names = headerNamesOf(convention).map((h) => h.toLowerCase());
  if (names.includes(name)) return true;
  if (convention === 'x-ratelimit') return name.startsWith('x-ratelimit-');
  return convention === 'ietf-trio' && name === 'ratelimit-policy';
}

/** RateLimit, RateLimit-*, X-RateLimit-*: headers some convention claims (Retry-After is not one). */
function isRateLimitHeader(name: string): boolean {
  return /^(x-)?ratelimit(-|$)/.test(name);
}

/** A body's leaf fields by dotted path (arrays are one field); a body that is not an object is one field, the whole body. */
function fields(value: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    out.set(prefix || '(the whole body)', value);
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    const at = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [p, x] of fields(v, at)) out.set(p, x);
    else out.set(at, v);
  }
  return out;
}

type BodyReport = (f: { messageId: 'edgeBodyUnreadable' | 'edgeBodyMissing' | 'edgeBodyField'; data: Record<string, string> }) => void;

/**
 * The body of each edge 429 the gateway files write, read as the gateway reads it and parsed as
 * JSON, against the body the response contract shows for it (gatewayEdgeRefusals, the examples
 * of the document): every field, the error code, the documentation URL and the retry hint among them.
 */
function edgeBodyFindings(design: Parameters<typeof gatewayEdgeRefusals>[0], files: readonly CodeFile[], report: BodyReport): void {
  const expected = gatewayEdgeRefusals(design);
  const shipped = shippedEdgeBodies(files);
  const shown = (v: unknown): string => (v === undefined ? 'absent' : JSON.stringify(v));
  const unreadable = new Set<string>();
  for (const refusal of expected) {
    const found = shipped.filter((b) => b.writtenBy === refusal.writtenBy);
    // a place two refusals share (Envoy's one mapper for both filters) is read once
    if (expected.find((r) => r.writtenBy === refusal.writtenBy) !== refusal) continue;
    if (found.length === 0) {
      const file = EDGE_BODY_FILES[refusal.writtenBy];
      if (files.some((f) => f.path === file))
        report({ messageId: 'edgeBodyMissing', data: { file, rules: refusal.ruleIds.join(', '), where: refusal.by } });
      continue;
    }
    const want = fields(refusal.body);
    for (const b of found) {
      if (b.unreadable !== undefined) {
        // a file no reader can parse is one finding, whatever bodies it holds
        const key = `${b.file}\n${b.where}\n${b.unreadable}`;
        if (!unreadable.has(key)) report({ messageId: 'edgeBodyUnreadable', data: { file: b.file, where: b.where, reason: b.unreadable } });
        unreadable.add(key);
        continue;
      }
      const got = fields(b.body);
      for (const field of new Set([...want.keys(), ...got.keys()])) {
        const d = want.get(field);
        const g = got.get(field);
        if (JSON.stringify(d) !== JSON.stringify(g))
          report({ messageId: 'edgeBodyField', data: { file: b.file, where: b.where, field, design: shown(d), shipped: shown(g) } });
      }
    }
  }
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
      mixedConventions: 'Header {{header}} is not part of the {{convention}} convention: the contract would emit two conventions.',
      securityNotSilent: 'Security limits must suppress rate-limit headers (headers: silent), but this rule sends {{headers}}.',
      securityNotListed: 'The security rule is missing from the contract list of silent rules.',
      headersNotFull: 'Non-security limits send rate-limit headers on every response (headers: full), but this rule sends {{headers}}.',
      unexpectedSilent: 'The contract lists this non-security rule as silent; only security limits suppress headers.',
      edgeClaimsHeaders:
        'The rule is enforced only at the edge, whose 429 carries Retry-After but no rate-limit headers; the matrix claims {{headers}} (edge rules are marked headers: edge).',
      edgeNotListed: 'The edge-only rule is missing from the contract list of rules enforced at the edge.',
      retryAfterNotShipped: '{{file}} can answer 429 at the {{layer}} without a Retry-After header a client can trust: {{missing}}.',
      unavailableReplyNotShipped:
        '{{file}} refuses with 503 while the rate limit service is unreachable (failure_mode_deny true), and the contract gives that 503 Retry-After {{seconds}} and a problem+json body, but {{missing}}.',
      conventionNotShipped: '{{file}} sends the {{shipped}} header convention while the contract documents {{convention}}.',
      headerNotProduced: 'The contract promises the {{header}} header, but {{file}} never sends it.',
      headersNotShipped: '{{file}} sends {{shipped}} rate-limit headers for the rule while the matrix says {{headers}}.',
      hardStopNotShipped:
        "The document's 429 for the soft quota states plan quota {{quota}} and hard stop {{hardStop}}, but {{file}} {{shipped}}.",
      adapterNotShipped:
        "The design runs on {{framework}}, but the code folder has no {{file}}: the document's middleware has no code to mount.",
      edgeBodyUnreadable: "{{file}} answers an edge 429 ({{where}}) with a body a client cannot read as the contract's JSON: {{reason}}.",
      edgeBodyMissing: '{{file}} writes no body for the edge 429 of {{rules}}: the contract shows one ({{where}}).',
      edgeBodyField:
        "{{file}} answers an edge 429 ({{where}}) whose body field {{field}} is {{shipped}}, while the design's response contract says {{design}}.",
      neutralCallNotShown: 'No adapter exists for {{framework}}, and {{file}} does not show how to call createLimiter(DESIGN) from it.',
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
      for (const header of required(convention).filter((h) => !lower.includes(h.toLowerCase()))) {
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
  checkFiles(design, files, report) {
    const rules = rulesOf(design);
    const middlewareRules = rules.filter((r) => r.layer === 'middleware');
    const data = shippedDesign(files);
    if (middlewareRules.length > 0) {
      const framework = design.scope?.framework;
      const adapter = framework === undefined ? undefined : FRAMEWORK_ADAPTERS[framework];
      if (framework !== undefined && adapter !== undefined) {
        if (adapter !== null && fileOf(files, `middleware/${adapter}`) === undefined) {
          report({ messageId: 'adapterNotShipped', data: { framework, file: `middleware/${adapter}` } });
        }
        if (adapter === null && !(fileOf(files, 'README.md')?.content.includes('createLimiter(DESIGN') ?? false)) {
          report({ messageId: 'neutralCallNotShown', data: { framework, file: 'README.md' } });
        }
      }
      const refusals = fileOf(files, REFUSAL_FILE)?.content ?? '';
      if (!refusals.includes("['Retry-After', String(retryAfter)]")) {
        report({
          messageId: 'retryAfterNotShipped',
          data: { file: REFUSAL_FILE, layer: 'middleware', missing: 'its refusals carry no Retry-After' },
        });
      }
      const convention = design.contract?.convention;
      if (data && convention !== undefined && data.headerConvention !== convention) {
        report({ messageId: 'conventionNotShipped', data: { file: DESIGN_DATA_FILE, shipped: show(data.headerConvention), convention } });
      }
      const responses = fileOf(files, 'middleware/responses.ts')?.content ?? '';
      const promised = [...objects(design.contract?.headers), ...objects(design.contract?.quotaHeaders)].map((h) => h.name);
      for (const header of promised) {
        if (typeof header === 'string' && isRateLimitHeader(header.toLowerCase()) && !responses.includes(`'${header}'`)) {
          report({ messageId: 'headerNotProduced', data: { header, file: 'middleware/responses.ts' } });
        }
      }
      // a soft quota's refusal as the document shows it: the shipped rule refuses at the stated
      // hard stop with the stated plan quota, and the shipped body builder writes both fields
      for (const body of [design.contract?.quotaExceededBody, design.contract?.overageExceededBody]) {
        const limit = body?.limit as Record<string, unknown> | undefined;
        if (typeof limit !== 'object' || limit === null || !Object.hasOwn(limit, 'hardStop')) continue;
        const ruleId = typeof limit.rule === 'string' ? limit.rule : undefined;
        const shipped = data?.rules.find((r) => r.id === ruleId);
        const stated = { quota: show(limit.quota), hardStop: show(limit.hardStop) };
        const problems: string[] = [];
        if (data && !shipped) problems.push(`has no rule ${show(ruleId ?? 'none')}`);
        if (shipped && shipped.limit !== limit.hardStop) problems.push(`refuses at ${shipped.limit}`);
        if (shipped && shipped.quota !== limit.quota) problems.push(`holds plan quota ${show(shipped.quota)}`);
        for (const field of ['hardStop', 'overageAllowance'].filter((f) => Object.hasOwn(limit, f) && !responses.includes(`${f}: `))) {
          problems.push(`(middleware/responses.ts) never writes the body field limit.${field}`);
        }
        if (problems.length > 0) {
          report({ messageId: 'hardStopNotShipped', ruleId, data: { ...stated, file: DESIGN_DATA_FILE, shipped: problems.join(', ') } });
        }
      }
      for (const rule of middlewareRules) {
        const ruleId = ruleIdOf(rule);
        const shipped = data?.rules.find((r) => r.id === ruleId);
        if (ruleId === undefined || !shipped) continue;
        const want = rule.headers === 'silent' ? 'silent' : 'full';
        if (shipped.headers !== want)
          report({
            messageId: 'headersNotShipped',
            ruleId,
            data: { file: DESIGN_DATA_FILE, shipped: show(shipped.headers), headers: want },
          });
      }
    }
    // the edge: every gateway file set that can answer 429 sends Retry-After
    const gateway = files.filter((f) => f.path.startsWith('gateway/'));
    if (gateway.length > 0 && rules.some((r) => r.layer === 'edge')) {
      // the nginx directives the user's configuration already sets, which the generated files leave
      // out, and its limit_req zones, whose refusals the generated error_page 429 answers too
      for (const { file, layer, missing } of gatewayRetryAfterFindings(
        gateway,
        objects(design?.migration?.nginxDirectives),
        objects(design?.migration?.nginxLimits),
      )) {
        report({ messageId: 'retryAfterNotShipped', data: { file, layer, missing } });
      }
      edgeBodyFindings(design, gateway, report);
      // Envoy failing closed: the 503 for want of its rate limit service is the contract's limiter-unavailable 503
      const unavailable = shippedEnvoyUnavailable(gateway);
      const seconds = design.contract?.storeUnavailable?.retryAfterSeconds;
      if (unavailable?.deny) {
        const m = unavailable.mapper;
        const missing: string[] = [];
        if (!m) missing.push('no local reply mapper matches that refusal (response flag RLSE)');
        else {
          if (m.retryAfter === null) missing.push('its local reply mapper adds no Retry-After');
          else if (m.retryAfter !== String(seconds)) missing.push(`its local reply mapper sends Retry-After ${m.retryAfter}`);
          if (
            m.body?.status !== 503 ||
            m.body?.retryAfterSeconds !== seconds ||
            !String(m.contentType).startsWith('application/problem+json')
          )
            missing.push('its local reply mapper does not write that body (application/problem+json, status 503, retryAfterSeconds)');
        }
        if (missing.length > 0)
          report({
            messageId: 'unavailableReplyNotShipped',
            data: { file: unavailable.file, seconds: show(seconds ?? 'none'), missing: missing.join('; ') },
          });
      }
    }
  },
});

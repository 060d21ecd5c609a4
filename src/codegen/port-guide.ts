/**
 * The code README's guide for an application that can not run the shipped TypeScript runtime
 * (Go, Python, ...): for each store-backed rule of the middleware, the EVALSHA call the runtime
 * makes (script, SHA1, KEYS and ARGV in the order the script reads them, with this design's
 * numbers worked out), how to read the reply, and the headers and statuses to answer with; the
 * outbound buckets' calls; the mode flags and the metric names the alert rules read.
 *
 * Every number comes from the same functions the runtime uses (gcraNumbers, the header
 * conventions of responses.ts), so the guide states what the shipped limiter sends.
 */
import type { Design } from '../design/model.js';
import { mdCode, mdText } from '../escape/markup.js';
import { luaScript } from '../lua.js';
import { joinOr } from '../format.js';
import { USERNAME_FIELDS } from '../runtime/middleware/account-name.js';
import { hashTag } from '../runtime/middleware/keys.js';
import { HEADER_NAMES, limitHeader, policyWindowSeconds } from '../runtime/middleware/responses.js';
import { gcraNumbers } from '../runtime/middleware/store.js';
import type { RuleSpec } from '../runtime/middleware/types.js';
import { compileDesign } from './middleware/index.js';
import { outboundProviders } from './outbound/client.js';

/** The runtime's default key prefix (LimiterOptions.keyPrefix). */
const PREFIX = 'rl';

function costLine(rule: RuleSpec, unit: (cost: number) => string): string {
  const byEndpoint = rule.costByEndpoint.map(([e, c]) => `${mdText(e)} ${c} (${unit(c)})`);
  return `cost ${rule.costDefault} (${unit(rule.costDefault)})${byEndpoint.length > 0 ? `; ${byEndpoint.join(', ')}` : ''}`;
}

function costText(rule: RuleSpec): string {
  return [`${rule.costDefault}`, ...rule.costByEndpoint.map(([e, c]) => `${mdText(e)} ${c}`)].join('; ');
}

function endpointsOf(design: ReturnType<typeof compileDesign>, rule: RuleSpec): string {
  const names = rule.routes.map((i) => design.routes[i]).filter((r) => r !== undefined);
  if (names.length === 0) return 'every route but the exempt ones';
  return names.map((r) => `${r.method} ${mdCode(r.route)}`).join(', ');
}

/** What a full-header rule's responses carry, in the design's convention. */
function headerLines(convention: Design['contract']['convention'], rule: RuleSpec): string[] {
  if (rule.headers === 'silent') {
    return ['  No rate-limit headers at all (a silent security rule): on a refusal only `Retry-After` and the generic 429 body.'];
  }
  const [policyName, policyValue] = limitHeader(convention, rule, policyWindowSeconds(rule));
  if (convention === 'ietf-structured') {
    const names = HEADER_NAMES[convention];
    return [
      `  On every response it counts: ${mdCode(`${policyName}: ${policyValue}`)} and ${mdCode(`${names.state}: "${rule.id}";r=<remaining>;t=<ceil(reset_ms / 1000)>`)}` +
        ' (when several rules count a call, the one with the fewest remaining, then the latest reset).',
    ];
  }
  const names = HEADER_NAMES[convention];
  return [
    `  On every response it counts: ${mdCode(`${policyName}: ${policyValue}`)}, ${mdCode(`${names.remaining}: <remaining>`)}, ${mdCode(`${names.reset}: <ceil(reset_ms / 1000)>`)}.`,
  ];
}

function statusLines(rules: readonly RuleSpec[], storeRetryAfter: number, defaultMode: string): string[] {
  const rule = rules[0] as RuleSpec;
  const period = [...new Set(rules.map((r) => `${Math.max(1, Math.ceil(r.periodSeconds))} s`))].join(' or ');
  return [
    '  Refused: status 429, `Retry-After: <max(1, ceil(retry_after_ms / 1000))>` (retry_after_ms -1: the request can never fit; ' +
      `one period of the refusing rule, ${period}), and the problem+json body of section 5.5 of the design document${rule.headers === 'silent' ? ' (its generic form: no rule, no counts)' : ''}.`,
    rule.failMode === 'closed'
      ? `  Store error or timeout: fail closed, status 503 with \`Retry-After: ${storeRetryAfter}\`, never a silent pass.`
      : '  Store error or timeout: fail open, admit the request and count `ratelimit_fail_open_events_total`.',
    `  Mode flag${rules.length > 1 ? 's' : ''} ${rules.map((r) => mdCode(r.flag ?? '(none)')).join(', ')}${rules.length > 1 ? ' (one per rule)' : ''}: enforce, shadow (call the script, never refuse, count the would-be refusal with mode="shadow") or off; unset means ${mdCode(defaultMode)} (the rollout's first step).`,
  ];
}

function gcraSection(design: Design, compiled: ReturnType<typeof compileDesign>, rule: RuleSpec): string[] {
  const script = luaScript('gcra');
  const burst = rule.burst ?? rule.limit;
  const { interval, tolerance } = gcraNumbers(burst, rule.limit, rule.periodSeconds * 1000);
  return [
    `- ${mdCode(rule.id)} (${mdText(rule.title)}; ${endpointsOf(compiled, rule)}${rule.plan !== null ? `; only callers of plan ${mdText(rule.plan)}` : ''}): ${mdCode(`lua/${script.file}`)}, SHA1 ${mdCode(script.sha1)}.`,
    `  ${mdCode(`EVALSHA ${script.sha1} 1 ${PREFIX}:${rule.key} ${tolerance} <cost x ${interval}> ${interval}`)}`,
    `  KEYS[1] the bucket; ARGV[1] tolerance = burst ${burst} x T, ARGV[2] increment = cost x T, ARGV[3] T = ceil(${rule.periodSeconds * 1000} ms x 1000 / ${rule.limit}) = ${interval} microseconds; ${costLine(rule, (c) => `ARGV[2] ${c * interval}`)}.`,
    `  Reply: one integer r. r > 0 admitted with ahead = r; r < 0 refused with ahead = -r - 1. remaining = floor((${tolerance} - ahead) / ${interval}); reset_ms = ceil(ahead / 1000); when refused, retry_after_ms = ceil((ahead + increment - ${tolerance}) / 1000), or -1 when increment > ${tolerance}.`,
    ...headerLines(design.contract.convention, rule),
    ...(rule.hybrid && compiled.hybrid
      ? [
          `  The shipped runtime keeps an in-process bucket of ${compiled.hybrid.localBurst} token(s) per key in front of this call (section 4.4 of the design document); a port may leave it out, and the limit is then exact.`,
        ]
      : []),
    ...statusLines([rule], compiled.storeUnavailableRetryAfter, compiled.defaultMode),
  ];
}

function logSection(design: Design, compiled: ReturnType<typeof compileDesign>, rules: RuleSpec[]): string[] {
  const script = luaScript('sliding-window-log');
  const keys = rules.map((r) => `${PREFIX}:${r.key}`);
  const argv = rules.flatMap((r) => [String(r.limit), String(r.periodSeconds * 1000)]);
  const lines = [
    `- ${rules.map((r) => mdCode(r.id)).join(' + ')} (${endpointsOf(compiled, rules[0] as RuleSpec)}): ${mdCode(`lua/${script.file}`)}, SHA1 ${mdCode(script.sha1)}, all keys in ONE call${rules.length > 1 ? ` (they share the hash tag ${mdCode(`{${hashTag(rules[0]?.key ?? '') ?? ''}}`)}, so one cluster slot)` : ''}.`,
    `  ${mdCode(`EVALSHA ${script.sha1} ${keys.length} ${keys.join(' ')} ${argv.join(' ')} <cost>`)}`,
    `  KEYS in this order; ARGV per key its limit and window in ms, then the cost (${costText(rules[0] as RuleSpec)}).`,
  ];
  const withoutName = rules.filter((r) => r.identity !== 'username');
  if (withoutName.length > 0 && withoutName.length < rules.length) {
    lines.push(
      `  A request that names no account passes only the other keys, with their arguments: ${mdCode(
        `EVALSHA ${script.sha1} ${withoutName.length} ${withoutName.map((r) => `${PREFIX}:${r.key}`).join(' ')} ${withoutName.flatMap((r) => [r.limit, r.periodSeconds * 1000]).join(' ')} <cost>`,
      )}.`,
    );
  }
  lines.push(
    '  Reply: {allowed, remaining, retry_after_ms, reset_ms, denied_by}; denied_by is the 1-based index of the key that refused (its rule is the one refused).',
    ...headerLines(design.contract.convention, rules[0] as RuleSpec),
    ...statusLines(rules, compiled.storeUnavailableRetryAfter, compiled.defaultMode),
  );
  return lines;
}

function outboundLines(design: Design): string[] {
  const providers = outboundProviders(design).filter((p) => p.shared);
  if (providers.length === 0) return [];
  const script = luaScript('outbound-bucket');
  return [
    `Outbound calls (${mdCode(`lua/${script.file}`)}, SHA1 ${mdCode(script.sha1)}): before each call to a provider reserve a slot, and wait the reply's wait_ms before calling; on a provider 429 pause the bucket with its Retry-After in ms. The key is KEYS[1]; ARGV as the script's header lists them:`,
    '',
    ...providers.flatMap((p) => [
      `- ${mdText(p.name)} (${mdCode(p.ruleId)}): ${mdCode(`EVALSHA ${script.sha1} 1 ${p.key} reserve ${p.burst} ${p.rate} ${p.periodMs} <cost> <max_wait_ms>`)}; on a 429: ${mdCode(`EVALSHA ${script.sha1} 1 ${p.key} pause ${p.burst} ${p.rate} ${p.periodMs} <retry_after_ms>`)}.`,
    ]),
    '',
    'Reply {reserved, wait_ms, remaining, reset_ms}: reserved 0 books nothing (the wait would pass max_wait_ms); wait_ms -1 means the cost never fits. A store error books nothing: do not call the provider (fail closed).',
    '',
  ];
}

/** The README section for a port: empty when the design has no store-backed middleware rule and no shared outbound bucket. */
export function portGuideLines(design: Design, language: string): string[] {
  const compiled = compileDesign(design);
  const rules = compiled.rules.filter((r) => r.store === 'redis');
  const body: string[] = [];
  const logGroups = new Map<string, RuleSpec[]>();
  const other: RuleSpec[] = [];
  for (const r of rules) {
    if (r.script === 'gcra' && r.field === null) body.push(...gcraSection(design, compiled, r));
    else if (r.script === 'sliding-window-log') {
      const tag = hashTag(r.key) ?? r.key;
      logGroups.set(tag, [...(logGroups.get(tag) ?? []), r]);
    } else other.push(r);
  }
  for (const group of logGroups.values()) body.push(...logSection(design, compiled, group));
  if (other.length > 0) {
    body.push(
      `- ${other.map((r) => mdCode(r.id)).join(', ')}: see the header of their script under \`lua/\` for KEYS and ARGV, and \`scriptArgs\` in \`middleware/limiter.ts\` for the values the runtime passes.`,
    );
  }
  const outbound = outboundLines(design);
  if (body.length === 0 && outbound.length === 0) return [];
  const ipv6 = 'an IPv6 client by its /64 network, written as RFC 5952 text with "/64"';
  const metrics = design.monitoring.metrics.filter((m) =>
    (m.emittedBy ?? ['middleware']).some((s) => s === 'middleware' || s === 'outbound-client'),
  );
  return [
    `## Calling the scripts from ${mdText(language)}`,
    '',
    'Load each script once (SCRIPT LOAD) and call it with EVALSHA and the SHA1 below; on a NOSCRIPT reply send EVAL with the',
    "file's source, which loads it again. Every key below starts with the prefix `rl:`; in a key, `<client-ip>` is the",
    `trusted client IP (the TCP peer; when the peer is a trusted proxy${design.enforcement.clientIp.trustedProxies.length > 0 ? ` (${design.enforcement.clientIp.trustedProxies.map((c) => mdCode(c)).join(', ')})` : ''}, the first X-Forwarded-For entry from the right outside them; ${ipv6}),`,
    `\`<sha256(...)>\` the hex sha256 of the account name tried (as your authentication knows it, else the body field ${joinOr(USERNAME_FIELDS)},`,
    "else an HTTP Basic Authorization header's user-id: base64-decoded, the text before the first ':', then form-urlencoded",
    'decoded), trimmed, NFKC-normalised and lower-cased, and any other',
    'identity value has its braces, `%`, `~`, spaces and control characters percent-encoded (and is replaced by `~` and',
    'its sha256 when longer than 128 characters), so no value can open or close a hash tag.',
    ...(design.identityFallback
      ? [
          'A caller without the identity a rule is keyed on is counted under the first other identity it has (API key, user,',
          `tenant, session, client IP). ${mdText(design.identityFallback.keys)}`,
          ...(design.identityFallback.anonymousEndpoints.length > 0
            ? [
                `On ${design.identityFallback.anonymousEndpoints.map((e) => mdCode(`${e.method} ${e.route}`)).join(', ')}, whose callers may be anonymous, a caller with none of`,
                'those identities is not counted by those rules at all, not by its client IP: only the rules keyed on the client IP count it.',
              ]
            : []),
        ]
      : []),
    ...(compiled.defaultPlan !== null
      ? [
          `A rule of a plan counts only callers of that plan; a caller whose plan is unknown counts as plan ${mdText(compiled.defaultPlan)}.`,
        ]
      : []),
    '',
    ...body,
    '',
    ...outbound,
    'The alert rules read these series; a port emits them under these names and labels, the outbound buckets under their rule ids',
    'too (a call the bucket held back counts in `ratelimit_throttled_total` with mode="enforce"). Label values are rule ids,',
    "provider names and the values listed, never text from a request; create every counter's series at 0 when the process",
    'starts (each rule with each outcome), so the first event is an increase the alerts see:',
    '',
    ...metrics.map(
      (m) =>
        `- ${mdCode(m.name)} (${m.type}${m.labels.length > 0 ? `; ${m.labels.map((l) => mdCode(l)).join(', ')}` : ''}): ${mdText(m.help)}`,
    ),
    '',
  ];
}

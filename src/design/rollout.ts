/** Rollout: shadow first, allowlist, enforcement order (security, general, quotas), kill switches. */
import { joinAnd } from '../format.js';
import { algorithmLabel } from './algorithms.js';
import { isNginxLimiter } from './migration.js';
import { edgeAllowlistHow, edgeEnforceHow, edgeKillSwitchHow, edgeShadowHow, edgeShadowSignal } from './gateway-behaviour.js';
import type { AccessDesign, Gateway, MatrixRule, Migration, Rollout } from './model.js';

/**
 * What turning a rule off takes, as the artefact that enforces it allows. `port`: the language of
 * an application that can not run the shipped runtime, whose own port must read the flags.
 */
export function killSwitchHow(rule: MatrixRule, gateway: Gateway, port?: string): string {
  if (rule.layer === 'edge') return edgeKillSwitchHow(rule, gateway);
  if (port !== undefined)
    return `set the flag to "shadow" (or "off"): the ${port} port reads it on every ${rule.layer === 'outbound-client' ? 'call' : 'decision'} as the code README specifies (the shipped TypeScript runtime does; a port must), so it takes effect at once, without a deploy`;
  if (rule.layer === 'outbound-client')
    return 'set the flag to "shadow" (or "off"): the outbound client reads it on every call, so it takes effect at once, without a deploy';
  return 'set the flag to "shadow" (or "off"): the middleware reads it on every decision, so it takes effect at once, without a deploy';
}

/** Off Node.js, the shadow step of the rules with a flag rests on the application's port of the runtime. */
function portShadow(rules: readonly MatrixRule[], port: string | undefined): string {
  if (port === undefined) return '';
  const flagged = rules.filter((r) => r.layer !== 'edge').map((r) => r.id);
  if (flagged.length === 0) return '';
  return ` The runtime that reads these flags ships as TypeScript: in this ${port} service ${flagged.join(', ')} count in shadow only once its port reads each rule's flag and, in shadow, calls the script and refuses nothing (the code README lists the flags); no generated file runs them in ${port}.`;
}

/** "ceiling, fairness and outbound rules", naming only the kinds the design has. */
function generalKinds(rules: MatrixRule[]): string {
  const kinds = (['ceiling', 'fairness', 'outbound'] as const).filter((t) => rules.some((r) => r.tier === t));
  if (kinds.length === 0) return 'general rules';
  const names = kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')} and ${kinds[kinds.length - 1]}`;
  return `${names} rules`;
}

/** The allowlist step: what the answers already allowlist, and where to add the offenders shadow mode finds. */
function allowlistDetail(access: AccessDesign | undefined, rules: readonly MatrixRule[], gateway: Gateway): string {
  if (!rules.some((r) => r.layer !== 'edge')) {
    // access.allow is applied by the middleware, which this design does not run
    return `Fix or allowlist the legitimate offenders found in shadow mode (internal service accounts, monitoring probes, partner batch jobs). Every rule here runs at the edge, and the answers' access lists are applied by the middleware, which this design does not run: allowlist at the gateway instead: ${edgeAllowlistHow(gateway)}. Or move the rules that need an allowlist into the middleware. Allowlist on an address your own proxies vouch for or an authenticated identity, never on a header a client can write.`;
  }
  const base =
    'Fix or allowlist the legitimate offenders found in shadow mode (internal service accounts, monitoring probes, partner batch jobs): add them to access.allow in the answers (identities, cidrs or routes) and generate again; the middleware then skips their rules without a store call. Allowlist on authenticated identity, never on an address a client can claim.';
  if (!access?.allow) return base;
  return `${base} Allowlisted now: ${access.allow.text}`;
}

/**
 * One line for the limits kept in one hash per identity in the store: a deploy that moves them
 * there starts them fresh. Limits kept in the process instead start fresh on every deploy, hash
 * or not: that line says so, and no earlier deploy's keys exist to copy.
 */
function hashRollout(rules: readonly MatrixRule[]): string {
  const inProcess = rules.filter((r) => r.layer === 'middleware' && r.primitive === 'in-process');
  const restart =
    inProcess.length === 0
      ? ''
      : ` The middleware keeps the state of ${inProcess.length === rules.filter((r) => r.layer === 'middleware').length ? 'every rule' : joinAnd(inProcess.map((r) => r.id))} in the process's memory: every deploy and every restart starts the buckets full and the counters at 0${inProcess.some((r) => r.tier === 'quota') ? ', quotas included (see the quotas section)' : ''}, and shadow mode ends by switching the flags, not by a deploy.`;
  const inHash = rules.filter((r) => r.field !== undefined && r.primitive === 'redis-lua').map((r) => r.id);
  if (inHash.length === 0) return restart;
  const rolling = rules.find((r) => r.field !== undefined && algorithmLabel(r) !== undefined);
  return ` The limits kept in one hash per identity (${inHash.join(', ')}) do not read the per-limit keys an earlier deploy wrote: where this layout replaces them, buckets start full and counters at 0 (a quota gives each identity a fresh period once), so deploy it at a period boundary or copy the counts into the hash's fields first.${rolling ? ` A rolling quota has no boundary: copy each day of its old hash (field <epoch-day>, its count) into the identity's hash as the field ${rolling.field}:<epoch-day>, keeping the later of the two expiries (the first call then sums them into the window's total), or each identity starts a fresh window.` : ''}${restart}`;
}

/**
 * The edge rules have no flag: nginx runs them under one limit_req_dry_run of the server block,
 * so they leave shadow mode together; the other gateways' rules leave it as edgeEnforceHow says.
 */
function edgeEnforce(rules: readonly MatrixRule[], gateway: Gateway): string {
  const edge = rules.filter((r) => r.layer === 'edge' && (r.tier === 'ceiling' || r.tier === 'fairness')).map((r) => r.id);
  if (edge.length === 0 || gateway === 'none') return '';
  // the other gateways: what the shadow step held back is undone by hand, apart from the flags
  if (gateway !== 'nginx')
    return ` The edge ${edge.length === 1 ? `rule ${edge[0]} has` : `rules (${edge.join(', ')}) have`} no flag: to enforce ${edge.length === 1 ? 'it' : 'them'}, ${edgeEnforceHow(gateway)}; do it as a step of its own, apart from the middleware's rules, and watch the gateway's refusals after it.`;
  return edge.length === 1
    ? ` The edge rule ${edge[0]} has no flag: set limit_req_dry_run to off in gateway/nginx-server.conf and reload nginx to enforce it.`
    : ` The edge rules (${edge.join(', ')}) have no flag and leave shadow mode together: gateway/nginx-server.conf runs them under one limit_req_dry_run, so setting it to off (and reloading nginx) enforces all of them at once. Switch them as one step, apart from the middleware's rules, and watch their refusals (monitoring/nginx-ratelimit.mtail) after it.`;
}

/**
 * Why the generated configuration of a gateway enforces its edge rules from the first deploy;
 * absent where it ships them counting without refusing (nginx's limit_req_dry_run, Envoy's 0%
 * enforcement and shadow_mode).
 */
const EDGE_ENFORCES_AS_SHIPPED: Partial<Record<Gateway, string>> = {
  kong: "Kong's rate limit plugins have no report-only mode, and gateway/kong.yaml ships each plugin enabled",
  cloudflare: 'the generated Cloudflare rules ship with the action "block"',
  'aws-api-gateway':
    'the generated AWS throttles and WAF rules refuse from the start (stage and usage-plan throttles have no report-only mode)',
};

/**
 * What the limiters already in place do while the new rules are in shadow mode: they keep
 * enforcing, except nginx limit_req lines in a server that includes the generated
 * nginx-server.conf, whose limit_req_dry_run puts them in dry run too (migration.dryRun).
 */
function inPlaceDuringShadow(migration: Migration, shadowDays: number): string {
  const names = (pred: (kind: string) => boolean) => [...new Set(migration.items.filter((i) => pred(i.kind)).map((i) => i.existing))];
  const dry = migration.dryRun.length > 0 ? names((kind) => isNginxLimiter({ kind })) : [];
  if (dry.length === 0)
    return `The limiters already in place keep enforcing through the ${shadowDays}-day shadow period, so nothing is unprotected while the new rules only measure.`;
  const others = names((kind) => !isNginxLimiter({ kind }));
  const why = `the limit_req_dry_run on of gateway/nginx-server.conf covers every limit_req of the server that includes it, and of its locations that set no limit_req_dry_run of their own, so ${joinAnd(dry)} only log what they would refuse until the edge rules are enforced; in the shadow period the new rules refuse nothing either (the migration section says how to keep the old ones refusing).`;
  return others.length > 0
    ? `The limiters already in place outside nginx (${joinAnd(others)}) keep enforcing through the ${shadowDays}-day shadow period. The nginx ones do not: ${why}`
    : `The limiters already in place do not keep enforcing through the ${shadowDays}-day shadow period: ${why}`;
}

export function buildRollout(
  rules: MatrixRule[],
  shadowDays: number,
  gateway: Gateway = 'none',
  migration?: Migration,
  access?: AccessDesign,
  port?: string,
): Rollout {
  const ids = (pred: (r: MatrixRule) => boolean) => rules.filter(pred).map((r) => r.id);
  const security = ids((r) => r.tier === 'security');
  const general = ids((r) => r.tier === 'ceiling' || r.tier === 'fairness' || r.tier === 'outbound');
  const quotas = ids((r) => r.tier === 'quota');
  const steps = [
    {
      title: 'Shadow mode',
      detail: rules.every((r) => r.layer === 'edge')
        ? `For ${shadowDays} days the rules count would-be refusals and refuse nothing, as far as the gateway allows. Every rule runs at the edge, with no flag: ${edgeShadowHow(gateway, false)}. Study ${edgeShadowSignal(gateway)} to learn who would be throttled: cron jobs, partner integrations and probes always show up.`
        : `Deploy every rule with its flag at "shadow" for ${shadowDays} days: decisions are evaluated, metrics and headers emitted, nothing is rejected.${rules.some((r) => r.layer === 'edge') ? ` Edge rules have no flag; ${edgeShadowHow(gateway)}.` : ''} Study ratelimit_throttled_total{mode="shadow"}${rules.some((r) => r.layer === 'edge') && gateway !== 'nginx' ? ` (and, for the edge rules, ${edgeShadowSignal(gateway)})` : ''} to learn who would be throttled: cron jobs, partner integrations and probes always show up.${portShadow(rules, port)}${hashRollout(rules)}`,
      ruleIds: rules.map((r) => r.id),
    },
    {
      title: 'Allowlist pass',
      detail: allowlistDetail(access, rules, gateway),
      ruleIds: access?.allow?.ruleIds ?? [],
    },
    {
      title: 'Announce',
      detail:
        'Publish the limits and the header contract in the API documentation, with the 429 body and backoff guidance, before anything is enforced.',
      ruleIds: [],
    },
    ...(security.length > 0
      ? [
          {
            title: 'Enforce abuse-sensitive limits',
            detail: 'Switch the auth rules to "enforce" first: they protect accounts and their legitimate volume is tiny.',
            ruleIds: security,
          },
        ]
      : []),
    {
      title: 'Enforce general limits',
      detail: rules.every((r) => r.layer === 'edge')
        ? `Enforce the ${generalKinds(rules)} at the gateway, undoing the shadow step one rule at a time where the configuration allows, and watch the gateway's refusal counters after each.`
        : `Switch the ${generalKinds(rules)} to "enforce", one rule at a time, watching throttle and near-limit metrics after each.${edgeEnforce(rules, gateway)}`,
      ruleIds: general,
    },
    ...(quotas.length > 0
      ? [
          {
            title: 'Enforce quotas',
            detail: 'Enforce plan quotas last, after customers have seen their remaining quota in headers for a full period.',
            ruleIds: quotas,
          },
        ]
      : []),
    ...(migration && migration.items.length > 0
      ? [
          {
            title: 'Retire the existing limiters',
            detail: `${inPlaceDuringShadow(migration, shadowDays)} Once the rules that replace them enforce, remove each old one: ${[...new Set(migration.items.map((i) => i.existing))].map((name) => `${name}${migration.items.some((i) => i.existing === name && (i.verdict === 'uncovered' || i.verdict === 'looser')) ? ' (only after its warnings in the migration table are resolved)' : ''}`).join('; ')}. Remove one at a time and watch the throttle metrics of its replacements.`,
            ruleIds: [...new Set(migration.items.flatMap((i) => i.replacements.map((r) => r.ruleId)))],
          },
        ]
      : []),
  ];
  const edge = ids((r) => r.layer === 'edge');
  const enforcing = edge.length > 0 ? EDGE_ENFORCES_AS_SHIPPED[gateway] : undefined;
  return {
    startsInShadow: true,
    shadowDays,
    ...(enforcing ? { edgeEnforcing: { ruleIds: edge, why: enforcing } } : {}),
    steps: steps.map((s, i) => ({ order: i + 1, ...s })),
    killSwitches: rules
      .filter((r) => r.killSwitch)
      .map((r) => ({ ruleId: r.id, flag: (r.killSwitch as { flag: string }).flag, how: killSwitchHow(r, gateway, port) })),
  };
}

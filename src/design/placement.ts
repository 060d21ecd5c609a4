/** Enforcement placement: which layer owns which rule, the atomic primitive, client IP, hybrid. */
import { formatNumber, joinAnd, joinOr, ratePer, rpsText, secondsWords } from '../format.js';
import type { Diagram, Enforcement, LayerAssignment, MatrixRule, ResolvedEndpoint, Scope } from './model.js';
import { USERNAME_FIELDS } from '../runtime/middleware/account-name.js';
import { hashTag } from '../runtime/middleware/keys.js';
import { algorithmLabel, luaScriptFor } from './algorithms.js';
import {
  awsPerMethod,
  awsRuleMethods,
  countedPerNode,
  edgeCounter,
  edgeMatchingGap,
  wafPathNote,
  edgeSlowestText,
  ceilingsAdmission,
  fleetOverStated,
  fleetRaisedWarning,
  gatewayNodeName,
  gatewayNodes,
  UNEVEN_BALANCE_TEXT,
} from './gateway-behaviour.js';
import { ACCOUNT_IDENTITIES, identityLabel, middlewareComponent, outboundComponent, runsOnNode, storeServerName } from './naming.js';

/**
 * What runs the edge rules, from each rule's own counter (edgeCounter): one component, or each
 * with the rules it runs ("Envoy local rate limit filter for global-ceiling; ... for
 * anonymous-per-ip"); `withRules` false names the components only (the diagram's box).
 */
function edgeComponent(scope: Scope, rules: readonly MatrixRule[], withRules = true): string {
  const by = new Map<string, string[]>();
  for (const r of rules) {
    const c = edgeCounter(r, scope).component;
    by.set(c, [...(by.get(c) ?? []), r.id]);
  }
  if (by.size === 0) return scope.gateway;
  if (by.size === 1 || !withRules) return [...by.keys()].join('; ');
  return [...by].map(([c, ids]) => `${c} for ${ids.join(', ')}`).join('; ');
}

/** Where the gateway keeps each edge rule's count (edgeCounter's where), one sentence per place. */
function edgeCountsWhere(scope: Scope, rules: readonly MatrixRule[]): string {
  const by = new Map<string, string[]>();
  for (const r of rules.filter((x) => x.layer === 'edge')) {
    const where = edgeCounter(r, scope).where;
    by.set(where, [...(by.get(where) ?? []), r.id]);
  }
  return [...by].map(([where, ids]) => `${joinAnd(ids)} ${ids.length === 1 ? 'keeps its count' : 'keep their counts'} ${where}.`).join(' ');
}

/** The per-node sentences of the fleet-wide edge rules each gateway node counts (nodeShareText), after a space; '' when none. */
function nodeShares(scope: Scope, rules: readonly MatrixRule[]): string {
  const texts = rules
    .filter((x) => x.layer === 'edge' && x.identity === 'global' && x.rate && countedPerNode(x, scope))
    .map((x) => nodeShareText(scope, x))
    .filter((t) => t !== '');
  return texts.length > 0 ? ` ${texts.join(' ')}` : '';
}

/** AWS API Gateway's throttles of no identity over several API methods: what they pass in total, and where the document says how to cap it. */
function methodTotals(scope: Scope, rules: readonly MatrixRule[], limited: readonly ResolvedEndpoint[]): string {
  if (scope.gateway !== 'aws-api-gateway') return '';
  const texts = rules
    .filter((x) => x.layer === 'edge' && x.identity === 'global')
    .map((x) => ({ rule: x, per: awsPerMethod(x, awsRuleMethods(x, rules, limited)) }))
    .filter((x) => x.per !== undefined)
    .map(({ rule, per }) => `${per?.total}${rule.tier === 'ceiling' ? ` The rule details of ${rule.id} say how to cap the total.` : ''}`);
  return texts.length > 0 ? ` ${texts.join(' ')}` : '';
}

/** A fleet-wide edge rule counted in each node: the stated figure, what each node ships, and what the fleet then admits. */
function nodeShareText(scope: Scope, rule: MatrixRule): string {
  const rate = rule.rate as { requests: number; periodSeconds: number };
  const name = gatewayNodeName(scope.gateway);
  const p = rule.perNode;
  if (p)
    return `${rule.id} states ${ratePer(rate)} for the fleet; each of the ${formatNumber(p.nodes)} ${name} nodes ships ${ratePer(p.rate)}${p.burst !== null ? `, burst ${formatNumber(p.burst)}` : ''}, so together they admit ${ratePer({ requests: p.rate.requests * p.nodes, periodSeconds: p.rate.periodSeconds })}${p.burst !== null ? `, burst ${formatNumber(p.burst * p.nodes)}` : ''}${fleetOverStated(rule) ? `. ${fleetRaisedWarning(rule, scope.gateway)}` : ` (${UNEVEN_BALANCE_TEXT}).`}`;
  const { k, stated } = gatewayNodes(scope);
  if (stated || k <= 1) return '';
  return `${rule.id} ships ${formatNumber(rate.requests)} per ${secondsWords(rate.periodSeconds)} on each ${name} node: the answers do not give the node count (stack.gatewayNodes), so K = ${formatNumber(k)} nodes (assumed) admit up to ${formatNumber(rate.requests * k)} per ${secondsWords(rate.periodSeconds)}, and the key counts and memory here are sized for that.`;
}

function fmtMiB(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1024 ? `${formatNumber(Math.round((mib / 1024) * 10) / 10)} GiB` : `${formatNumber(Math.ceil(mib))} MiB`;
}

const STORE_NAME: Record<string, string> = { redis: 'Redis', 'redis-cluster': 'Redis Cluster', valkey: 'Valkey', none: 'the process' };

/** Peak rate above which a horizontally scaled API gets the local + distributed hybrid. */
export const HYBRID_PEAK_RPS = 1000;

/**
 * The rate at which the given middleware rules meet requests at the traffic's peak, for the
 * hybrid's choice: the stated peak, or what the ceiling lets through when it runs at the edge in
 * front of the middleware over every endpoint the rules cover (ceilingsAdmission: the gateway fleet
 * as its files ship it), whichever is lower. A ceiling in the middleware sees the whole peak: its
 * check goes out together with the other rate limits of a request, so they meet every request
 * it refuses too.
 */
function middlewarePeak(scope: Scope, rules: readonly MatrixRule[], checked: readonly MatrixRule[]): { rps: number; text: string } {
  const peak = scope.traffic.peakRps;
  const atPeak = { rps: peak, text: `${rpsText(peak)} peak` };
  const ceilings = rules.filter((r) => r.tier === 'ceiling' && r.layer === 'edge' && r.identity === 'global' && r.rate);
  if (ceilings.length === 0) return atPeak;
  const names = new Set(ceilings.flatMap((r) => r.endpoints));
  const covers =
    ceilings.some((r) => r.endpoints.length === 0) ||
    checked.every((r) => r.endpoints.length > 0 && r.endpoints.every((e) => names.has(e)));
  if (!covers) return atPeak;
  const admits = ceilingsAdmission(scope, ceilings)?.rps ?? peak;
  if (admits >= peak) return atPeak;
  return {
    rps: admits,
    text: `the ${rpsText(admits)} that the edge's ceiling (${joinAnd(ceilings.map((r) => r.id))}) lets through to the middleware at the ${rpsText(peak)} peak`,
  };
}

const SCRIPT_ALGORITHM = { gcra: 'gcra', 'sliding-window-log': 'sliding-window-log', 'fixed-window': 'fixed-window' } as const;

/** A counter kept in a hash holds its count in 9 digits (identity-limits.lua): limits below this join. */
const HASH_COUNT_LIMIT = 1_000_000_000;

/**
 * Redis keeps a hash as a compact listpack up to this many fields (hash-max-listpack-entries,
 * default 128); past it the hash becomes a hashtable, several times the memory per field. A
 * rolling window's daily buckets are fields of their own, so a window whose buckets and its
 * identity's other fields would pass this keeps a key of its own.
 */
export const HASH_LISTPACK_ENTRIES = 128;

/** A rolling window's length in daily buckets (one per UTC day, as the runtime counts it). */
function rollingBuckets(rule: MatrixRule): number {
  return Math.max(1, Math.ceil((rule.rate?.periodSeconds ?? 86400) / 86400));
}

/**
 * The field a rule's state takes in its identity's hash: its key after the hash tag, less the
 * window (the value names the window; a rolling window's buckets are named after the field and
 * their day), e.g. "req:pro" or "quota"; the rule id when nothing is left. So the field is as
 * stable as the key was, and rules that shared a key (a rule split by fail mode, the plans'
 * quotas) share a field. Null for a key that can not become a field.
 */
function hashField(rule: MatrixRule, rolling: boolean): string | null {
  const key = rule.key ?? '';
  if (hashTag(key) === null) return null;
  let tail = key
    .slice(key.indexOf('}') + 1)
    .replace(/:?<[^<>]*yyyy[^<>]*>/gi, '')
    .replace(/^:/, '');
  if (rolling) tail = tail.replace(/:?rolling$/, '');
  if (/[<>{}\s]/.test(tail)) return null;
  return tail.length > 0 ? tail : rule.id;
}

/**
 * A key pattern as the runtime fills it: every identity placeholder holds the rule's identity
 * value whatever it is called (<user> and <user-id> are the same slot; see parseKeyPattern in
 * the runtime), so two spellings that render to the same key compare equal; a period
 * placeholder (one naming yyyy) stays as written.
 */
export function renderedPattern(key: string, identity: string | undefined): string {
  return key.replace(/<([^<>]*)>/g, (whole, name: string) => (/yyyy/i.test(name) ? whole : `<${identity ?? 'identity'}>`));
}

/** The hash tag of a rule's key as the runtime fills it (renderedPattern), or null. */
function renderedTag(rule: MatrixRule): string | null {
  const tag = hashTag(rule.key ?? '');
  return tag === null ? null : renderedPattern(tag, rule.identity);
}

type FieldKind = 'gcra' | 'window' | 'rolling';

/** One identity kind whose limits share a hash: its key pattern and each field's rules. */
export interface IdentityHash {
  /** The hash's key pattern: the key prefix and the hash tag, e.g. rl:{t:<tenant-id>}. */
  key: string;
  /**
   * Each field: a GCRA bucket, a counter's window, or a rolling window, whose state is one
   * field per live daily bucket (buckets of them at most), named field:<day id>.
   */
  fields: { field: string; kind: FieldKind; ruleIds: string[]; buckets?: number }[];
}

/**
 * Which limits keep their state as fields of ONE hash per identity, checked and charged in one
 * identity-limits call, all or nothing: decided per identity kind (a key's hash-tag pattern,
 * e.g. {t:<tenant-id>}), never per route. A kind whose middleware GCRA rules, calendar or
 * fixed-window counters and rolling windows give one identity two or more fields at once (those
 * of no plan and those of its plan) keeps all of them in the hash, and every request
 * that checks any of them uses it, whichever of them its route carries: a limit's state is never
 * split between a key and a field. A kind with one such limit keeps its own key (gcra.lua's
 * layout costs less memory and CPU for one limit). A rolling window whose daily buckets would
 * take the hash past HASH_LISTPACK_ENTRIES fields keeps its own key. Rules kept in a hash are
 * never hybrid: their identity's call goes to the store on every request anyway.
 */
export function identityHashes(rules: readonly MatrixRule[]): IdentityHash[] {
  type Member = { rule: MatrixRule; field: string; kind: FieldKind };
  // grouped by what the key renders to, so a hand-written {u:<user>} meets the design's {u:<user-id>}
  const groups = new Map<string, { key: string; rules: Member[] }>();
  for (const r of rules) {
    if (r.layer !== 'middleware' || r.tier === 'outbound' || (r.primitive !== 'redis-lua' && r.primitive !== 'in-process')) continue;
    const gcra = luaScriptFor(r.algorithm) === 'gcra';
    const counted = r.algorithm === 'fixed-window';
    // (a counter or a rolling window's total keeps its count in 9 digits)
    const fits = counted && (r.rate?.requests ?? 0) < HASH_COUNT_LIMIT;
    const rolling = fits && algorithmLabel(r) !== undefined;
    const window = fits && algorithmLabel(r) === undefined;
    const field = gcra || window || rolling ? hashField(r, rolling) : null;
    if (field === null) continue;
    const key = (r.key ?? '').slice(0, (r.key ?? '').indexOf('}') + 1);
    const id = `${r.primitive} ${renderedPattern(key, r.identity)}`;
    const group = groups.get(id) ?? { key, rules: [] };
    // the hash is spelled as the design's own rules spell it
    if (r.source === 'generated' && group.rules.every((m) => m.rule.source !== 'generated')) group.key = key;
    group.rules.push({ rule: r, field, kind: gcra ? 'gcra' : rolling ? 'rolling' : 'window' });
    groups.set(id, group);
  }
  const out: IdentityHash[] = [];
  /** The hash of one identity kind for these members, or null when they do not make one. */
  const hashOf = (key: string, members: readonly Member[]): IdentityHash | null => {
    const fields: IdentityHash['fields'] = [];
    // (two rules on one key with different algorithms can not share a field: such a kind keeps its keys)
    let mixed = false;
    for (const m of members) {
      const f = fields.find((x) => x.field === m.field);
      if (!f)
        fields.push({
          field: m.field,
          kind: m.kind,
          ruleIds: [m.rule.id],
          ...(m.kind === 'rolling' ? { buckets: rollingBuckets(m.rule) } : {}),
        });
      else {
        f.ruleIds.push(m.rule.id);
        if (f.kind !== m.kind) mixed = true;
        if (f.buckets !== undefined) f.buckets = Math.max(f.buckets, rollingBuckets(m.rule));
      }
    }
    // (a rolling window's bucket names, field:<digits>, must not be another field's name)
    const rollingNames = fields.filter((f) => f.kind === 'rolling').map((f) => `${f.field}:`);
    if (fields.some((f) => rollingNames.some((n) => f.field.startsWith(n) && /^\d+$/.test(f.field.slice(n.length))))) mixed = true;
    // the fields one identity holds at once: the rules of no plan, and those of its plan
    const plans = [...new Set(members.map((m) => m.rule.plan))];
    let live = 0;
    let entries = 0;
    for (const plan of plans) {
      const held = new Set(members.filter((m) => m.rule.plan === undefined || m.rule.plan === plan).map((m) => m.field));
      live = Math.max(live, held.size);
      entries = Math.max(
        entries,
        fields.filter((f) => held.has(f.field)).reduce((n, f) => n + (f.buckets === undefined ? 1 : f.buckets + 1), 0),
      );
    }
    return live >= 2 && !mixed && entries <= HASH_LISTPACK_ENTRIES ? { key, fields } : null;
  };
  for (const { key, rules: members } of groups.values()) {
    // a rolling window too long for the listpack keeps its own key; the others may still share one
    const hash =
      hashOf(key, members) ??
      hashOf(
        key,
        members.filter((m) => m.kind !== 'rolling'),
      );
    if (hash !== null) out.push(hash);
  }
  return out;
}

/**
 * The store rules that share an identity's hash tag with another limit of that identity yet keep a
 * key of their own (a rolling quota's daily counters, a counter too large for a hash field): a
 * request they cover makes one more call for that identity. A dual-key auth pair is one call of its
 * own script and is not listed.
 */
function apartFromIdentity(rules: readonly MatrixRule[]): MatrixRule[] {
  const store = rules.filter(
    (r) => r.layer === 'middleware' && r.primitive === 'redis-lua' && r.tier !== 'outbound' && r.algorithm !== 'sliding-window-log',
  );
  // what one call covers: the identity's hash (every field), or one key
  const unit = (r: MatrixRule): string => (r.field !== undefined ? '(hash)' : (r.key ?? r.id));
  const apart = new Set<MatrixRule>();
  const tags = new Set(store.map(renderedTag).filter((t): t is string => t !== null));
  for (const tag of tags) {
    const members = store.filter((r) => renderedTag(r) === tag);
    // an identity holds one plan at a time: the rules of no plan, and those of its plan
    for (const plan of new Set(members.map((r) => r.plan))) {
      const held = members.filter((r) => r.plan === undefined || r.plan === plan);
      // the first call: the hash, else the first rate limit's key; every other unit is a call apart
      const first = held.find((r) => r.field !== undefined) ?? held.find((r) => r.tier !== 'quota') ?? held[0];
      if (first === undefined) continue;
      for (const r of held) if (unit(r) !== unit(first)) apart.add(r);
    }
  }
  return store.filter((r) => apart.has(r));
}

/** ", except ...": the rules of an identity checked in a call apart, and what that costs; '' when none. */
function apartText(rules: readonly MatrixRule[]): string {
  const apart = apartFromIdentity(rules);
  if (apart.length === 0) return '';
  const what = [...new Set(apart.map((r) => algorithmLabel(r) ?? r.algorithm))].join(', ');
  const ids = apart.map((r) => `${r.id}`).join(', ');
  const quota = apart.some((r) => r.tier === 'quota');
  return `, except ${ids} (${what}), which keep${apart.length === 1 ? 's' : ''} a key of ${apart.length === 1 ? 'its' : 'their'} own: a request ${apart.length === 1 ? 'it covers' : 'they cover'} makes a second call for that identity${quota ? ", sent once the identity's rate limits have admitted, so a quota refusal there leaves those rate limits charged" : ''}`;
}

/**
 * A rule's field in its identity's hash as the document names it: the field, or for a rolling
 * window its running total and the pattern of its daily buckets' fields, e.g.
 * "quota (total), quota:<epoch-day> (up to 30)".
 */
export function hashFieldText(rule: MatrixRule): string {
  if (rule.field === undefined) return '';
  return algorithmLabel(rule) !== undefined
    ? `${rule.field} (total), ${rule.field}:<epoch-day> (up to ${rollingBuckets(rule)})`
    : rule.field;
}

/** What the atomicity note says of the rolling windows kept in a hash; '' when none. */
function rollingText(rules: readonly MatrixRule[]): string {
  const rolling = rules.filter((r) => r.field !== undefined && r.primitive === 'redis-lua' && algorithmLabel(r) !== undefined);
  if (rolling.length === 0) return '';
  const fields = [...new Set(rolling.map(hashFieldText))].join(', ');
  return ` A rolling window (${rolling.map((r) => r.id).join(', ')}) keeps one field per UTC day it counted and the window's running total beside them (${fields}), the days named by their number since 1970-01-01 on the server's clock: a call reads the total and today's field, not the whole window; a day's first call takes the days that have left the window off the total (deleting their fields when it charges), and a refusal reads the oldest days, only until enough of them would have left, to say when that is. The hash lives until its newest day leaves the window.`;
}

function failLabel(r: MatrixRule): string {
  return `${r.id} (fail ${r.failMode ?? 'unstated'})`;
}

/** Up to this many rules a layer's box names each one; past it, the box counts them per tier. */
const NAMED_RULES = 3;

/**
 * The lines of a layer's box: its component and rule count, then each rule by name (a few),
 * or a count per tier with the tier's fail modes (the matrix names them all).
 */
function layerLabel(component: string, rules: MatrixRule[]): string[] {
  const head = `${component}: ${formatNumber(rules.length)} rule${rules.length === 1 ? '' : 's'}`;
  if (rules.length <= NAMED_RULES) return [head, ...rules.map(failLabel)];
  const tiers = [...new Set(rules.map((r) => r.tier))];
  return [
    head,
    ...tiers.map((tier) => {
      const of = rules.filter((r) => r.tier === tier);
      const modes = [...new Set(of.map((r) => r.failMode ?? 'unstated'))].map((m) => `fail ${m}`).join(' / ');
      return `${formatNumber(of.length)} ${tier}, ${modes}`;
    }),
  ];
}

function placementDiagram(scope: Scope, rules: MatrixRule[]): Diagram {
  const edge = rules.filter((r) => r.layer === 'edge');
  const mw = rules.filter((r) => r.layer === 'middleware');
  const out = rules.filter((r) => r.layer === 'outbound-client');
  const nodes: Diagram['nodes'] = [{ id: 'client', label: ['client'], shape: 'round' }];
  const edges: Diagram['edges'] = [];
  let prev = 'client';
  if (edge.length > 0) {
    nodes.push({ id: 'edge', label: layerLabel(`edge: ${edgeComponent(scope, edge, false)}`, edge), shape: 'box' });
    edges.push({ from: prev, to: 'edge' });
    prev = 'edge';
  }
  if (mw.length > 0) {
    nodes.push({
      id: 'mw',
      label: layerLabel(
        `app middleware (${!runsOnNode(scope.language) ? `${scope.language} port` : scope.framework === 'other' ? 'framework-neutral limiter' : scope.framework})`,
        mw,
      ),
      shape: 'box',
    });
    edges.push({ from: prev, to: 'mw' });
    prev = 'mw';
  }
  nodes.push({ id: 'app', label: ['application handlers'], shape: 'box' });
  edges.push({ from: prev, to: 'app' });
  const usesStore = rules.some((r) => r.primitive === 'redis-lua');
  if (usesStore) {
    nodes.push({ id: 'store', label: [`${scope.store} (dedicated, noeviction)`], shape: 'store' });
    if (mw.some((r) => r.primitive === 'redis-lua')) edges.push({ from: 'mw', to: 'store', label: 'EVALSHA', dashed: true });
  }
  if (out.length > 0) {
    nodes.push({ id: 'outc', label: layerLabel('outbound client', out), shape: 'box' });
    nodes.push({ id: 'provider', label: ['third-party APIs'], shape: 'round' });
    edges.push({ from: 'app', to: 'outc' });
    edges.push({ from: 'outc', to: 'provider' });
    if (usesStore && out.some((r) => r.primitive === 'redis-lua'))
      edges.push({ from: 'outc', to: 'store', label: 'shared bucket', dashed: true });
  }
  return { kind: 'flowchart', direction: 'LR', title: 'Enforcement placement', nodes, edges };
}

/**
 * The edge rules the gateway does not count everywhere they apply (Kong's one instance per
 * route, AWS's one usage plan throttle per method), for the layer table.
 */
function edgeUncountedNote(scope: Scope, rules: readonly MatrixRule[]): string {
  const holder = scope.gateway === 'aws-api-gateway' ? "the usage plan carries another rule's throttle" : 'Kong counts another rule';
  const none = rules.filter((r) => r.notEnforced?.all).map((r) => r.id);
  const some = rules.filter((r) => r.notEnforced && !r.notEnforced.all);
  const parts = [
    ...(none.length > 0
      ? [
          `${none.join(', ')} ${none.length > 1 ? 'are' : 'is'} not enforced: ${holder} in ${none.length > 1 ? 'their place' : 'its place'}, and nothing else counts ${none.length > 1 ? 'them' : 'it'}`,
        ]
      : []),
    ...some.map((r) => `${r.id} is not counted on ${r.notEnforced?.routes.join(', ')}`),
  ];
  return parts.length > 0 ? ` ${parts.join('; ')} (see each rule).` : '';
}

/**
 * An example of the limits one hash tag groups, from the design's own rules: one account's fairness
 * bucket, with its quota where a quota counts the same account; none where no rule is per account.
 */
function hashTagExample(rules: readonly MatrixRule[]): string {
  const store = rules.filter((r) => r.primitive === 'redis-lua' && r.identity !== undefined && ACCOUNT_IDENTITIES.includes(r.identity));
  const fairness = store.find((r) => r.tier === 'fairness');
  if (!fairness?.identity) return '';
  const quota = store.some((r) => r.tier === 'quota' && r.identity === fairness.identity);
  return `, such as one ${identityLabel(fairness.identity)}'s fairness bucket${quota ? ' and its quota' : ''}`;
}

/**
 * Why the middleware runs its rules: what those rules need that the edge cannot see, named from
 * the rules themselves (a design without API keys, plans or quotas is not told it has them).
 */
function middlewareNeeds(rules: readonly MatrixRule[]): string {
  const accounts = [
    ...new Set(rules.flatMap((r) => (r.identity !== undefined && ACCOUNT_IDENTITIES.includes(r.identity) ? [r.identity] : []))),
  ];
  const needs = [
    ...(accounts.length > 0
      ? [`the caller's identity (${joinAnd(accounts.map(identityLabel))}${rules.some((r) => r.plan !== undefined) ? ' and its plan' : ''})`]
      : []),
    ...(rules.some((r) => (r.cost?.byEndpoint.length ?? 0) > 0) ? ['weighted costs'] : []),
    ...(rules.some((r) => r.tier === 'quota') ? ['quotas'] : []),
    ...(rules.some((r) => r.tier === 'security') ? ['exact auth counting'] : []),
  ];
  const list = needs.length <= 1 ? needs.join('') : `${needs.slice(0, -1).join(', ')} or ${needs[needs.length - 1]}`;
  return needs.length > 0 ? `Limits that need ${list}.` : 'Limits the application counts itself, with the store the design names.';
}

/**
 * The window rules whose window the instance names from its own clock (limiter.ts windowOf: a
 * plain fixed window or a calendar period, whose end the script is passed); a rolling window
 * reads the server's clock.
 */
function callerClockWindows(rules: readonly MatrixRule[]): string {
  const named = rules.filter(
    (r) => r.layer === 'middleware' && r.primitive === 'redis-lua' && r.algorithm === 'fixed-window' && algorithmLabel(r) === undefined,
  );
  if (named.length === 0) return '';
  return ` Not so for the fixed ${named.length === 1 ? 'window' : 'windows'} of ${joinAnd(named.map((r) => r.id))}: the instance names the current window from its own clock and passes its end to the script, so keep the instances' clocks in step (NTP): around a window's end, instances whose clocks differ by d seconds disagree for up to d seconds on which window counts, and a Retry-After one of them computed can be early by d on another.`;
}

/**
 * The per-identity rows of MFA steps where callers have sessions: a step that carries no account
 * name is counted per session when identify() gives only a session, and every sign-in makes a
 * new session, so the row counts per account only when identify() names the account there.
 */
function sessionKeyedSteps(scope: Scope, auth: readonly MatrixRule[]): string {
  if (!scope.identities.includes('session')) return '';
  const mfa = scope.endpoints.filter((e) => e.class === 'auth' && e.authKind === 'mfa');
  const rows = auth.filter((r) => r.identity === 'username' && mfa.some((e) => r.endpoints.includes(e.name)));
  if (rows.length === 0) return '';
  const covered = mfa.filter((e) => rows.some((r) => r.endpoints.includes(e.name)));
  const login = auth.find(
    (r) => r.identity === 'username' && scope.endpoints.some((e) => e.authKind === 'login' && r.endpoints.includes(e.name)),
  );
  return ` Where identify() gives the ${joinAnd(covered.map((e) => e.name))} step a session but no userId (a browser half-way through signing in), ${joinAnd(rows.map((r) => r.id))} ${rows.length === 1 ? 'counts' : 'count'} per session, not per account: each sign-in with the password starts a new session and so a fresh count${login?.rate ? ` (${login.id} admits ${ratePer(login.rate)} for each username)` : ''}. Return from identify() on ${covered.length === 1 ? 'that route' : 'those routes'} the userId of the account the code is for.`;
}

export function buildEnforcement(scope: Scope, rules: MatrixRule[], exempt: ResolvedEndpoint[]): Enforcement {
  const byLayer = new Map<string, MatrixRule[]>();
  for (const r of rules) {
    const layer = r.layer ?? 'unstated';
    byLayer.set(layer, [...(byLayer.get(layer) ?? []), r]);
  }
  const layers: LayerAssignment[] = [];
  const edgeRules = byLayer.get('edge') ?? [];
  if (edgeRules.length > 0) {
    layers.push({
      layer: 'edge',
      component: edgeComponent(scope, edgeRules),
      ruleIds: edgeRules.map((r) => r.id),
      why: `Coarse limits that need no identity beyond the client address: rejected before the request costs the application anything.${edgeUncountedNote(scope, edgeRules)}${edgeMatchingGap(scope.gateway, edgeRules) ? ` ${edgeMatchingGap(scope.gateway, edgeRules)}.` : ''}${wafPathNote(scope.gateway, edgeRules) ? ` ${wafPathNote(scope.gateway, edgeRules)}.` : ''}${nodeShares(scope, edgeRules)}${methodTotals(
        scope,
        edgeRules,
        scope.endpoints.filter((e) => e.class !== 'health'),
      )}`,
    });
  }
  const mwRules = byLayer.get('middleware') ?? [];
  if (mwRules.length > 0) {
    layers.push({
      layer: 'middleware',
      component: middlewareComponent(scope.framework, scope.language),
      ruleIds: mwRules.map((r) => r.id),
      why: `${middlewareNeeds(mwRules)}${
        edgeSlowestText(scope.gateway)
          ? ` Also any limit slower than the edge counts (${edgeSlowestText(scope.gateway)}): at the edge it would run more leniently than stated, so a rules entry that places one there is refused, and so are answers from which the design would derive one for the edge (its per-IP rule or a split of it by endpoint cost, its ceiling), naming the field to change or the rules entry that keeps the rule here.`
          : ''
      }`,
    });
  }
  const outRules = byLayer.get('outbound-client') ?? [];
  if (outRules.length > 0) {
    layers.push({
      layer: 'outbound-client',
      component: outboundComponent(scope.language),
      ruleIds: outRules.map((r) => r.id),
      why: 'Calls this service makes to third parties, limited before they leave.',
    });
  }

  // A rule is owned by exactly one layer; two rules with the same key at different layers count twice.
  const keyLayers = new Map<string, Set<string>>();
  for (const r of rules) {
    if (!r.key || !r.layer) continue;
    keyLayers.set(r.key, (keyLayers.get(r.key) ?? new Set()).add(r.layer));
  }
  const doubleCounted = rules.filter((r) => r.key && (keyLayers.get(r.key)?.size ?? 0) > 1).map((r) => r.id);

  const usesLua = rules.some((r) => r.primitive === 'redis-lua');
  const usesGateway = rules.some((r) => r.primitive === 'gateway-native');
  const primitiveParts: string[] = [];
  if (usesLua)
    primitiveParts.push(
      `one Redis Lua script per decision (EVALSHA), check and consume in a single atomic step on ${STORE_NAME[scope.store] ?? scope.store}`,
    );
  if (usesGateway) {
    const native = rules.filter((r) => r.primitive === 'gateway-native');
    primitiveParts.push(`the gateway's native limiter (${edgeComponent(scope, native, false)}) at the edge`);
  }
  if (rules.some((r) => r.primitive === 'in-process'))
    primitiveParts.push('an in-process bucket, atomic because Node runs each decision to completion on one thread');
  const primitive = primitiveParts.join('; ') || 'none stated';

  const xff = scope.trustedProxies.length > 0;
  const clientIp: Enforcement['clientIp'] = {
    source: xff ? 'x-forwarded-for' : 'connection',
    trustedProxies: scope.trustedProxies,
    explanation: xff
      ? `Walk X-Forwarded-For from the right, skipping addresses inside the trusted ranges (${scope.trustedProxies.join(', ')}); the first address outside them is the client. Entries left of it were written by the client and are ignored, so rotating the header cannot change the key.${scope.gateway === 'nginx' ? ' nginx does the same with set_real_ip_from + real_ip_recursive on.' : ''}`
      : 'No trusted proxy is configured, so the TCP peer address is taken as the client and X-Forwarded-For, which any client can write, is ignored entirely. This is right only if nothing sits in front of the application: behind a load balancer or proxy, every client would share its address, so list its ranges as trusted proxies.',
  };

  let hybrid: Enforcement['hybrid'];
  // (a rule kept in its identity's hash is checked on the store with the rest of its identity)
  const inHash = rules.filter((r) => r.tier === 'fairness' && r.field !== undefined && r.primitive === 'redis-lua');
  const fairness = rules.filter(
    (r) => r.tier === 'fairness' && r.layer === 'middleware' && r.primitive === 'redis-lua' && typeof r.burst === 'number' && !r.field,
  );
  const seen = middlewarePeak(scope, rules, fairness);
  if (scope.topology === 'horizontal' && seen.rps >= HYBRID_PEAK_RPS && fairness.length > 0) {
    const minBurst = Math.min(...fairness.map((r) => r.burst as number));
    const server = storeServerName(scope.store);
    // the fleet together admits at most a tenth of the smallest burst before the store has counted
    const localBurst = Math.max(1, Math.floor(minBurst / (10 * scope.instances)));
    hybrid = {
      ruleIds: fairness.map((r) => r.id),
      localBurst,
      instances: scope.instances,
      overAdmission: localBurst * scope.instances,
      explanation: `At ${seen.text} on ${scope.instances} instances, each instance keeps a small in-process bucket (${formatNumber(localBurst)} ${localBurst === 1 ? 'token' : 'tokens'} per identity, sized so the whole fleet holds at most a tenth of the smallest burst, ${formatNumber(minBurst)}, or 1 token per instance) in front of the shared ${server} bucket: micro-bursts are absorbed without a network hop, and ${server} keeps the fleet-wide count. The price, a firm bound: each instance holds at most ${formatNumber(localBurst)} admitted ${localBurst === 1 ? 'request' : 'requests'} per identity that ${server} has not yet counted, so within any stretch of time the fleet admits at most ${scope.instances} x ${formatNumber(localBurst)} = ${formatNumber(localBurst * scope.instances)} extra requests per identity beyond what the shared bucket allows. Under contention a local charge ${server} refuses is never dropped: it stays owed and is retried at the Retry-After ${server} returns; the instance refuses the identity until then, and admits nothing on local credit (every request asks ${server}) until the charge is paid.${closedText(fairness, localBurst)}${inHash.length > 0 ? ` The fairness rules kept in their identity's hash (${inHash.map((r) => r.id).join(', ')}) have no local bucket: their identity's call goes to the store on every request anyway, so they stay exact.` : ''}`,
    };
  }

  const multiLayer = layers.filter((l) => l.layer !== 'outbound-client').length > 1 || (layers.length > 1 && outRules.length > 0);
  const scripts: Enforcement['scripts'] = (['gcra', 'sliding-window-log', 'fixed-window'] as const)
    .map((name) => ({
      name,
      file: `lua/${name}.lua`,
      algorithm: SCRIPT_ALGORITHM[name],
      ruleIds: rules
        // (a rule kept as a field of its identity's hash runs in identity-limits.lua, below)
        .filter(
          (r) =>
            luaScriptFor(r.algorithm) === name &&
            r.primitive === 'redis-lua' &&
            r.tier !== 'outbound' &&
            r.layer !== 'edge' &&
            r.field === undefined,
        )
        .map((r) => r.id),
    }))
    .filter((s) => s.ruleIds.length > 0);
  const joined = rules.filter((r) => r.field !== undefined && r.primitive === 'redis-lua');
  if (joined.length > 0) {
    const hashes = [...new Set(joined.map((r) => r.key ?? ''))].map((key) => {
      const fields = [...new Set(joined.filter((r) => r.key === key).map((r) => hashFieldText(r)))];
      return `${key} (fields ${fields.join(', ')})`;
    });
    const kinds = [
      ...(joined.some((r) => luaScriptFor(r.algorithm) === 'gcra') ? ['GCRA'] : []),
      ...(joined.some((r) => r.algorithm === 'fixed-window' && algorithmLabel(r) === undefined) ? ['counter windows'] : []),
      ...(joined.some((r) => algorithmLabel(r) !== undefined) ? ['rolling windows of daily counters'] : []),
    ];
    scripts.push({
      name: 'identity-limits',
      file: 'lua/identity-limits.lua',
      algorithm: 'gcra',
      label: `the limits of one identity (${kinds.join(', ').replace(/, ([^,]*)$/, ' and $1')}) kept in one hash per identity, ${hashes.join('; ')}, checked and charged in one call`,
      ruleIds: joined.map((r) => r.id),
    });
  }
  const outboundRedis = outRules.filter((r) => r.primitive === 'redis-lua');
  if (outboundRedis.length > 0) {
    scripts.push({ name: 'outbound-bucket', file: 'lua/outbound-bucket.lua', algorithm: 'gcra', ruleIds: outboundRedis.map((r) => r.id) });
  }

  const auth = rules.filter((r) => r.tier === 'security' && r.algorithm === 'sliding-window-log');
  // what the gateway fleet admits under the ceiling rows, as its files ship them (the key-count bounds' figure)
  const fleet = ceilingsAdmission(
    scope,
    rules.filter((r) => r.tier === 'ceiling'),
  );
  const flows = [...new Set(auth.map((r) => /\{([^}]*)\}/.exec(r.key ?? '')?.[1]).filter((t): t is string => t !== undefined))];
  const flowLoad = flows.map((tag) => {
    const rows = auth.filter((r) => (r.key ?? '').includes(`{${tag}}`));
    const bytes = rows.reduce((n, r) => n + (r.cardinality?.bound ?? 0) * (r.bytesPerKey ?? 0), 0);
    return { tag, bytes };
  });
  const worst = flowLoad.reduce<(typeof flowLoad)[number] | undefined>((a, b) => (a && a.bytes >= b.bytes ? a : b), undefined);
  const slotText =
    scope.store === 'redis-cluster'
      ? ` The shared tag keeps both keys in one cluster slot, which a multi-key script requires, and so every key of a flow sits on one shard: ${flows.length} flow${flows.length === 1 ? '' : 's'} (${flows.map((t) => `{${t}}`).join(', ')}) on at most ${flows.length} shard${flows.length === 1 ? '' : 's'}. That shard is a hot spot under attack: nothing but the ceiling bounds auth traffic, so in the worst case all the traffic the ceiling admits goes to one flow${fleet ? ` (${fleet.text})` : ''}, one script call (two keys) per request on that shard${worst ? `, and the flow's keys can reach ${fmtMiB(worst.bytes)} (${worst.tag === flows[0] && flows.length === 1 ? 'its' : `{${worst.tag}}'s`} two rows' bound in the memory estimate)` : ''}. Size each shard for that load and memory, not for the everyday auth volume.`
      : ` The shared tag also lets the script run unchanged on ${scope.store === 'valkey' ? 'Valkey in cluster mode (Redis Cluster)' : 'Redis Cluster'}, where a multi-key script needs its keys in one slot (every key of a flow would then live on one shard, which takes the whole of that flow's traffic under attack).`;
  return {
    primitive,
    atomicityNote: usesLua
      ? `Reading the counter and writing it back as two commands races: two instances both see "1 left" and both admit. Every decision here is one indivisible operation, and the store-backed decisions take their time from the store (its clock, read inside the script: TIME, or a bucket key's expiry, on ${STORE_NAME[scope.store] ?? scope.store}), never from application clocks, so instance clock skew cannot bend the refill maths.${callerClockWindows(rules)} The limits of one identity (one hash tag${hashTagExample(rules)}) are checked and charged in one script call, all or nothing${apartText(rules)}; the calls for different identities go out together, so a rate limit of one identity may be charged for a request another identity's limit refuses${rules.some((r) => r.tier === 'quota') ? ', never a quota, whose call goes only once every rate limit has admitted' : ''}.${rules.some((r) => r.field !== undefined && r.primitive === 'redis-lua') ? ` Where an identity has several such limits they are fields of one hash (one key per identity instead of one per limit; its TTL only ever extended, to the latest moment any field's state matters); the price is one read of the server clock (TIME) per call, as a hash field has no expiry of its own to keep a bucket's state in.${rollingText(rules)}` : ''}`
      : usesGateway && !rules.some((r) => r.primitive === 'in-process')
        ? `Every decision is made inside the gateway by its native limiter: no counter is read and written back by the application. ${edgeCountsWhere(scope, rules)}`
        : 'Reading the counter and writing it back as two steps would race; here every decision runs to completion on the one Node thread that owns the in-process buckets, so nothing interleaves, and the time is the process clock (one instance, so no clock skew between deciders).',
    layers,
    doubleCounted,
    clientIp,
    ...(hybrid ? { hybrid } : {}),
    ...(multiLayer ? { placementDiagram: placementDiagram(scope, rules) } : {}),
    exempt: {
      endpoints: exempt.map((e) => e.name),
      why:
        exempt.length > 0
          ? 'Health and readiness probes are never limited: a throttled probe takes a healthy instance out of rotation.'
          : 'No endpoint is exempt.',
    },
    scripts,
    ...(auth.length > 0
      ? {
          dualKeyAuth: `${
            auth.every((r) => r.primitive === 'in-process')
              ? 'Both auth rows of a flow are checked in one step in the process: the per-identity and per-IP logs are read together, and the step admits only when both are under their limits, so neither row can be spent without the other being checked.'
              : `Both auth rows of a flow are checked in one script call: the per-identity and per-IP logs share a hash tag (the flow, e.g. {auth:login}), and the script admits only when both are under their limits, so neither row can be spent without the other being checked.${slotText}`
          } The account of the per-identity row is the name being tried, read from the request (the identify() hook, else the body fields ${joinOr(USERNAME_FIELDS)}, else the user-id of an HTTP Basic Authorization header, which is how OAuth clients send their client_id to a token endpoint; a header that does not decode names no account); steps that carry no name, such as an MFA code, are keyed on the account or session the request already belongs to (identify()'s userId, else sessionId). A request with none of these meets only the per-IP row: make identify() return the account for every auth route whose form names it differently.${sessionKeyedSteps(scope, auth)}`,
        }
      : {}),
  };
}

/**
 * What a fail-closed rule with a local bucket admits while the store is unreachable: the credit
 * an instance already holds is spent locally until the charge behind it fails (within the call's
 * deadline, or at once on a refused connection); from then on its requests ask the store, and fail closed.
 */
function closedText(hybridRules: MatrixRule[], localBurst: number): string {
  const closed = hybridRules.filter((r) => r.failMode === 'closed').map((r) => r.id);
  if (closed.length === 0) return '';
  return ` A store outage meets the fail-closed ${closed.length === 1 ? 'rule' : 'rules'} here (${closed.join(', ')}) one step late: an instance still admits what local credit it holds, at most ${formatNumber(localBurst)} ${localBurst === 1 ? 'request' : 'requests'} per identity, until the charge for it fails (within the store call's deadline, or at once when the connection is refused); from then on every request of that identity asks the store and is refused with the 503.`;
}

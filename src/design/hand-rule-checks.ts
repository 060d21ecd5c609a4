/**
 * What a hand-written rule asks for that the design cannot do as written, found once the design
 * is built: a rule id the design derives itself (an edge rule split by request cost), a removal
 * naming no rule, and a hand-written key that can be the same Redis key as another rule's. Each
 * is a problem with the JSON path of the field, what is allowed, and no output; none is silently
 * dropped or relabelled, since the user wrote these names and keys to match something they know.
 * Also an edge rule, written or derived, that its gateway would count more leniently than stated
 * (edgeRateProblems).
 */
import type { Answers } from '../answers/schema.js';
import { luaScriptFor } from './algorithms.js';
import { buildDesign } from './build.js';
import { edgeCounter, FLEET_RAISED_LIMIT, fleetRaised, gatewayNodeName, secondsText } from './gateway-behaviour.js';
import type { Design, MatrixRule } from './model.js';
import { PERIOD_SECONDS } from './scope.js';
import { formatNumber, joinAnd, ratePer } from '../format.js';

/** One problem: `  $.rules[2].id: ...`, as the answers' other problems are listed. */
export function handRuleProblems(answers: Answers, design: Design): string[] {
  const hand = answers.rules ?? [];
  if (hand.length === 0) return [];
  // the rows the design generates, before any rules entry: the ids an entry can change or remove
  // (built again only when an entry removes one or names a derived id)
  let generated: readonly MatrixRule[] | undefined;
  const generatedRules = (): readonly MatrixRule[] => {
    generated ??= buildDesign({ ...answers, rules: [] }, { date: design.meta.date }).rules;
    return generated;
  };
  return [
    ...idProblems(hand, generatedRules, design.rules),
    ...layerProblems(hand, design),
    ...keyProblems(hand, design.rules, design.access?.penalty !== undefined),
  ];
}

/**
 * A rules entry whose row would be documented where nothing enforces it: at the edge with no
 * gateway (no gateway file counts it, and the middleware leaves edge rows to the gateway), or in
 * the middleware with the gateway's own primitive (a row moved off the edge that keeps the
 * gateway's limiter and key pattern, which the middleware does not run).
 */
function layerProblems(hand: NonNullable<Answers['rules']>, design: Design): string[] {
  const problems: string[] = [];
  hand.forEach((h, i) => {
    if (h.remove) return;
    const rows = rulesOfEntry(h.id, design.rules);
    if (design.scope.gateway === 'none' && rows.some((r) => r.layer === 'edge')) {
      problems.push(
        `  $.rules[${i}].layer: "edge" places ${h.id} at the gateway, but stack.gateway is "none": no gateway file would count it and the middleware leaves edge rules to the gateway, so nothing would enforce it. Allowed: "middleware" (or no layer), or the gateway that runs in front of the API in stack.gateway`,
      );
    }
    // the outbound client counts calls to a provider (outbound/providers.ts): a row of any other
    // tier there limits requests the client never sees, so no shipped file would count it
    const outbound = rows.find((r) => r.layer === 'outbound-client' && r.tier !== 'outbound');
    if (outbound) {
      problems.push(
        `  $.rules[${i}].layer: "outbound-client" places ${h.id} in the outbound client, which counts the calls this API makes to a provider (the outbound rows, one per outbound entry); ${h.id} is a ${outbound.tier} row that limits requests to this API, which the outbound client never sees, so nothing would enforce it. Allowed: ${design.scope.gateway === 'none' ? '"middleware" (or no layer)' : '"edge" or "middleware" (or no layer)'}; a provider's limit goes in outbound`,
      );
    }
    const moved = rows.find((r) => r.layer === 'middleware' && r.primitive === 'gateway-native');
    if (moved) {
      const field = h.primitive === 'gateway-native' ? 'primitive' : 'layer';
      problems.push(
        `  $.rules[${i}].${field}: ${h.id} is counted in the middleware (layer "middleware") but its primitive is gateway-native, the gateway's own limiter, which the middleware does not run (its key ${moved.key ?? ''} is the gateway's too): the document would name a primitive and key the shipped files do not use. Allowed: with layer "middleware", a primitive the middleware runs (redis-lua, or in-process on a single instance) and a key of the store's (e.g. {ip:<client-ip>}:${h.id}); or layer "edge"`,
      );
    }
  });
  return problems;
}

/**
 * Edge rules the gateway can only count more leniently than the design states (nginx's limit_req
 * counts no fewer than 1 per minute, an AWS WAF rule no fewer than 10 per 10 minutes): the shipped
 * file would admit more than the document says, so the design is refused rather than shipped
 * laxer, whether a rules entry placed the rate there or the design derived it (the per-IP rule,
 * its splits by endpoint cost, the ceiling). A rules entry is named by its field; a derived rule
 * by the answers field its rate comes from. Either can state a rate the gateway counts, or keep
 * the rule in the application (layer "middleware"), whose limiter counts any rate. A fleet-wide
 * rule whose per-node share was raised so far that the gateway nodes together admit more than
 * FLEET_RAISED_LIMIT times its figure is refused naming stack.gatewayNodes.
 */
export function edgeRateProblems(answers: Answers, design: Design): string[] {
  const scope = design.scope;
  if (scope.gateway === 'none') return [];
  const hand = answers.rules ?? [];
  let generated: readonly MatrixRule[] | undefined;
  const generatedRules = (): readonly MatrixRule[] => {
    generated ??= buildDesign({ ...answers, rules: [] }, { date: design.meta.date }).rules;
    return generated;
  };
  const problems: string[] = [];
  const reported = new Set<string>();
  hand.forEach((h, i) => {
    if (h.remove) return;
    const named = (id: string): boolean => id === h.id || id === `${h.id}-fail-open` || id === `${h.id}-fail-closed`;
    const rows = design.rules.filter((r) => r.layer === 'edge' && (named(r.id) || (r.edgeCost !== undefined && named(r.edgeCost.of))));
    const r = rows.find((x) => x.edgeLaxer !== undefined);
    if (!r?.edgeLaxer) return;
    // the rate the entry asks for: its own, else the generated row's (a row the entry moves to the edge)
    const moved = h.rate ? undefined : generatedRules().find((g) => named(g.id));
    const asked = h.rate
      ? { requests: h.rate.requests, periodSeconds: PERIOD_SECONDS[h.rate.per] }
      : moved?.layer !== 'edge'
        ? moved?.rate
        : undefined;
    if (!asked) return;
    for (const x of rows) reported.add(x.id);
    problems.push(
      `  $.rules[${i}].${h.rate ? 'rate' : 'layer'}: ${rateText(asked)}${costPart(r)} at the edge ${laxerText(r, scope)}, ${formatNumber(Math.round(r.edgeLaxer.times * 10) / 10)} times what the entry asks. Allowed: a rate ${edgeCounter(r, scope).component} can count, or layer "middleware" (${IN_APP})`,
    );
  });
  for (const r of design.rules) {
    if (r.layer !== 'edge' || reported.has(r.id)) continue;
    if (r.edgeLaxer && r.edgeLaxer.overTime > 1 + 1e-9) {
      problems.push(derivedLaxerProblem(answers, r, design));
      continue;
    }
    const raised = fleetRaised(r);
    if (raised && raised.times > FLEET_RAISED_LIMIT && r.perNode && r.rate) {
      const p = r.perNode;
      const most = Math.max(
        1,
        Math.floor((FLEET_RAISED_LIMIT * r.rate.requests) / r.rate.periodSeconds / (p.rate.requests / p.rate.periodSeconds) + 1e-9),
      );
      problems.push(
        `  $.stack.gatewayNodes: ${formatNumber(p.nodes)} ${gatewayNodeName(scope.gateway)} nodes each count ${r.id} (${rateText(r.rate)} for the fleet) on their own, and a node admits no less than ${rateText(p.rate)}, so together they would admit ${rateText(raised)}, ${formatNumber(Math.round(raised.times * 10) / 10)} times the stated figure (more than ${FLEET_RAISED_LIMIT} times). Allowed: at most ${formatNumber(most)} nodes for this figure, or a figure for ${r.id} of at least ${rateText({ requests: p.rate.requests * p.nodes, periodSeconds: p.rate.periodSeconds })}${r.inputs?.length ? ` (from ${inputNames(answers, r, design).join(', ')})` : ''}, or a rules entry for ${r.id} with layer "middleware", which counts it once for every node (${IN_APP})`,
      );
    }
  }
  return problems;
}

/** What a rule kept in the application must state (a rules entry with layer "middleware"). */
const IN_APP =
  "the application's limiter counts any rate; state its algorithm, primitive, cost, failMode, ttlSeconds and cardinalityBound there";

const rateText = (r: { requests: number; periodSeconds: number }): string => ratePer(r, true);

/** " (1 per 100 s for x-cost-100, whose endpoints cost 100)": the part of a rule its costly endpoints count in. */
function costPart(r: MatrixRule): string {
  const units = r.edgeCost && r.edgeCost.units > 1 ? r.edgeCost.units : 1;
  return units > 1 && r.edgeLaxer ? ` (${rateText(r.edgeLaxer.stated)} for ${r.id}, whose endpoints cost ${formatNumber(units)})` : '';
}

/**
 * "cannot be counted by nginx limit_req: ..., so its file would admit 1 per minute", and whether
 * all of them may come within one of the rule's periods (`withinOne`).
 */
function laxerText(r: MatrixRule, scope: Design['scope'], withinOne = true): string {
  const l = r.edgeLaxer as NonNullable<MatrixRule['edgeLaxer']>;
  return `cannot be counted by ${edgeCounter(r, scope).component}: ${l.fitted ?? 'it counts other windows'}, so its file would admit ${rateText(l.shipped)}${withinOne && l.shipped.periodSeconds > l.stated.periodSeconds ? ` (all of them may come within one ${secondsText(l.stated.periodSeconds)})` : ''}`;
}

/**
 * The answers fields a rule's numbers come from (its inputs), as a refusal names them: the
 * ceiling's rate set by a rules entry (ceilingInputs' "rules", for the ceiling and the rows sized
 * from it) is that entry's field, rules[i].rate (the last entry for the ceiling that sets a rate,
 * the one that applies).
 */
function inputNames(answers: Answers, r: MatrixRule, design: Design): string[] {
  const ceiling = design.rules.find((x) => x.tier === 'ceiling' && x.source === 'overridden');
  const hand = answers.rules ?? [];
  let at = -1;
  hand.forEach((h, i) => {
    if (h.id === ceiling?.id && !h.remove && h.rate !== undefined) at = i;
  });
  return (r.inputs ?? []).map((f) => (f === 'rules' && at >= 0 ? `rules[${at}].rate` : f));
}

/**
 * A rule the design derives for the edge that its gateway would count more leniently: named by
 * the answers field its rate comes from (an endpoint's cost for a split by cost, else the first
 * of the rule's inputs), with what to change.
 */
function derivedLaxerProblem(answers: Answers, r: MatrixRule, design: Design): string {
  const l = r.edgeLaxer as NonNullable<MatrixRule['edgeLaxer']>;
  const scope = design.scope;
  const component = edgeCounter(r, scope).component;
  const units = r.edgeCost && r.edgeCost.units > 1 ? r.edgeCost.units : 1;
  const base = r.edgeCost?.of ?? r.id;
  const endpointAt = units > 1 ? (answers.endpoints ?? []).findIndex((e) => r.endpoints.includes(e.name)) : -1;
  const inputs = inputNames(answers, r, design);
  const field = endpointAt >= 0 ? `$.endpoints[${endpointAt}].cost` : `$.${inputs[0] ?? 'rules'}`;
  const from =
    units > 1
      ? `${r.id} counts ${joinAnd(r.endpoints)} at ${base}'s ${rateText(r.edgeCost?.unitRate ?? l.stated)} divided by ${r.endpoints.length === 1 ? 'its' : 'their'} cost of ${formatNumber(units)}: ${rateText(l.stated)}`
      : `${r.id} states ${rateText(l.stated)}${r.derivation ? ` (${r.derivation.split('; ')[0]})` : ''}`;
  const change =
    units > 1
      ? `a lower cost for ${r.endpoints.length === 1 ? 'this endpoint' : 'these endpoints'} or a higher rate for ${base}${r.edgeCost && inputs.length > 0 ? ` (${inputs.join(', ')})` : ''}, so that ${component} can count it`
      : `answers that give ${r.id} a rate ${component} can count${inputs.length > 0 ? ` (${inputs.join(', ')})` : ''}`;
  return `  ${field}: the design's edge rule ${from}, which ${laxerText(r, scope, false)}, ${formatNumber(Math.round(l.overTime * 10) / 10)} times the rate the design states. Allowed: ${change}; or keep ${base} in the application with a rules entry {"id": "${base}", "layer": "middleware", ...} (${IN_APP})`;
}

const derived = (r: MatrixRule): boolean => r.edgeCost !== undefined && r.edgeCost.of !== r.id;

/** The ids a rules entry can override or remove: the generated rows, a row split by fail mode by its base id too. */
function overridable(generated: readonly MatrixRule[]): string[] {
  const ids = generated.filter((r) => !derived(r)).map((r) => r.id);
  const bases = ids.map((id) => /^(.+)-fail-(?:open|closed)$/.exec(id)?.[1]).filter((b): b is string => b !== undefined);
  return [...new Set([...ids, ...bases])];
}

function idProblems(
  hand: NonNullable<Answers['rules']>,
  generatedRules: () => readonly MatrixRule[],
  rules: readonly MatrixRule[],
): string[] {
  const allowed = (): string => `ids a rules entry can override or remove: ${overridable(generatedRules()).join(', ')}`;
  // the rules split by cost at the edge: <id>-cost-<units>, numbered -2, -3 ... when taken
  const derivedFrom = (id: string, list: readonly MatrixRule[]): string | undefined =>
    [...new Set(list.flatMap((r) => (r.edgeCost ? [r.edgeCost.of] : [])))].find((b) => new RegExp(`^${b}-cost-\\d+(?:-\\d+)?$`).test(id));
  const problems: string[] = [];
  hand.forEach((h, i) => {
    const base = derivedFrom(h.id, rules) ?? (/-cost-\d+(?:-\d+)?$/.test(h.id) ? derivedFrom(h.id, generatedRules()) : undefined);
    if (base !== undefined) {
      const part = [...rules, ...generatedRules()].find((r) => r.edgeCost?.of === base && r.id === h.id)?.edgeCost;
      const what = part ? ` (its endpoints of cost ${part.units}, counted at the edge at ${base}'s rate divided by their cost)` : '';
      problems.push(
        `  $.rules[${i}].id: "${h.id}" is a rule the design derives from ${base}${what}, because the gateway counts requests, not cost; it follows ${base} and the endpoints' costs, and cannot be ${h.remove ? 'removed' : 'changed'} on its own. Write the entry for ${base} (its rate, burst or fail mode), change the endpoints' cost, or give a new rule an id of its own; ${allowed()}`,
      );
      return;
    }
    if (h.remove && !overridable(generatedRules()).includes(h.id)) {
      problems.push(
        `  $.rules[${i}].id: "${h.id}" is removed, but the design generates no rule with this id, so nothing would change; ${allowed()}`,
      );
    }
  });
  return problems;
}

/**
 * A key pattern as the runtime fills it: the text before the identity value (the slot's label
 * included; a pattern without a slot gets ":" and the value after it) and the text after it, or
 * one fixed key for a rule counting everyone together.
 */
type KeyForm = { head: string; tail: string } | { fixed: string };

function keyForm(r: MatrixRule): KeyForm | undefined {
  const key = r.key;
  if (!key) return undefined;
  if (r.identity === 'global') return { fixed: key };
  const re = /([A-Za-z0-9_-]+:)?<([^<>]*)>/g;
  for (let m = re.exec(key); m !== null; m = re.exec(key)) {
    if (/yyyy/i.test(m[2] ?? '')) continue;
    return { head: key.slice(0, m.index) + (m[1] ?? ''), tail: key.slice(m.index + m[0].length) };
  }
  return { head: `${key}:`, tail: '' };
}

/** Text an identity value can hold (the runtime percent-encodes braces, '%', '~', spaces and control characters). */
const valueText = (s: string): boolean => /^[^\s{}%~\u0000-\u001f\u007f]*$/.test(s);

/**
 * A key two patterns can both produce, with the value each puts in it, or undefined when none:
 * one head must start the other (the longer one's extra text then opens the shorter one's value)
 * and one tail must end the other, the extra text being text a value can hold.
 */
function sharedKey(a: KeyForm, b: KeyForm): { key: string; a?: string; b?: string } | undefined {
  if ('fixed' in a && 'fixed' in b) return a.fixed === b.fixed ? { key: a.fixed } : undefined;
  if ('fixed' in a || 'fixed' in b) {
    const [fixed, open, swap] =
      'fixed' in a ? [a.fixed, b as { head: string; tail: string }, true] : [(b as { fixed: string }).fixed, a, false];
    if (!fixed.startsWith(open.head) || !fixed.endsWith(open.tail) || fixed.length <= open.head.length + open.tail.length) return undefined;
    const value = fixed.slice(open.head.length, fixed.length - open.tail.length);
    if (!valueText(value)) return undefined;
    return swap ? { key: fixed, b: value } : { key: fixed, a: value };
  }
  let va = '42';
  let vb = '42';
  if (b.head.startsWith(a.head) && valueText(b.head.slice(a.head.length))) va = b.head.slice(a.head.length) + va;
  else if (a.head.startsWith(b.head) && valueText(a.head.slice(b.head.length))) vb = a.head.slice(b.head.length) + vb;
  else return undefined;
  if (b.tail.endsWith(a.tail) && valueText(b.tail.slice(0, b.tail.length - a.tail.length)))
    va += b.tail.slice(0, b.tail.length - a.tail.length);
  else if (a.tail.endsWith(b.tail) && valueText(a.tail.slice(0, a.tail.length - b.tail.length)))
    vb += a.tail.slice(0, a.tail.length - b.tail.length);
  else return undefined;
  return { key: a.head + va + a.tail, a: va, b: vb };
}

/** A rule's numbers, as one text: two rules sharing a counter must count the same. */
function numbersOf(r: MatrixRule): string {
  return `${r.rate ? `${r.rate.requests} per ${r.rate.periodSeconds} s` : 'no rate'}${typeof r.burst === 'number' ? `, burst ${r.burst}` : ''}`;
}

/** What keeps a rule's state under its key: its script, or the identity's hash the design keeps its fields in. */
function stateOf(r: MatrixRule): string {
  return r.field !== undefined ? 'a field of its identity hash (identity-limits)' : luaScriptFor(r.algorithm);
}

const IDENTITY_WORDS: Record<string, string> = {
  'api-key': 'an API key id',
  user: 'a user id',
  tenant: 'a tenant id',
  session: 'a session id',
  ip: 'a client IP',
  username: 'an account name hash',
  caller: 'a caller (its identity label and value)',
};

const LABELS: Record<string, string> = {
  'api-key': 'ak:<api-key-id>',
  user: 'u:<user-id>',
  tenant: 't:<tenant-id>',
  session: 's:<session-id>',
  ip: 'ip:<client-ip>',
  username: 'un:<sha256(username)>',
};

/** Which design rules a rules entry states the key of: its id, or both halves of a row split by fail mode. */
function rulesOfEntry(id: string, rules: readonly MatrixRule[]): MatrixRule[] {
  const own = rules.filter((r) => r.id === id);
  return own.length > 0 ? own : rules.filter((r) => r.id === `${id}-fail-open` || r.id === `${id}-fail-closed`);
}

const PENALTY = 'penalty-box';

/**
 * The penalty box's two keys per caller (rl:{pb:<label><value>}:strikes and :box, a counter and
 * a flag), which a hand-written key must not meet either; as rule-shaped entries for the check.
 */
const PENALTY_KEYS: readonly MatrixRule[] = ['strikes', 'box'].map(
  (what) =>
    ({
      id: PENALTY,
      identity: 'caller',
      key: `rl:{pb:<caller>}:${what}`,
      layer: 'middleware',
      primitive: 'redis-lua',
      algorithm: 'fixed-window',
    }) as unknown as MatrixRule,
);
function keyProblems(hand: NonNullable<Answers['rules']>, rules: readonly MatrixRule[], penalty: boolean): string[] {
  const stored = [
    ...rules.filter(
      (r) => r.layer === 'middleware' && r.tier !== 'outbound' && (r.primitive === 'redis-lua' || r.primitive === 'in-process') && r.key,
    ),
    ...(penalty ? PENALTY_KEYS : []),
  ];
  const entryOf = new Map<string, number>();
  hand.forEach((h, i) => {
    if (h.key && !h.remove) for (const r of rulesOfEntry(h.id, stored)) if (r.id !== PENALTY) entryOf.set(r.id, i);
  });
  const problems: string[] = [];
  for (const a of stored) {
    const i = entryOf.get(a.id);
    if (i === undefined) continue;
    const fa = keyForm(a);
    if (!fa) continue;
    // every rule a's key can meet; a pair of entries is reported once, at the later one
    const meets: { b: MatrixRule; j: number | undefined; shared: NonNullable<ReturnType<typeof sharedKey>> }[] = [];
    for (const b of stored) {
      if (b === a || b.primitive !== a.primitive) continue;
      const j = entryOf.get(b.id);
      if (j !== undefined && (j > i || (j === i && b.id > a.id))) continue;
      const fb = keyForm(b);
      if (!fb) continue;
      const shared = sharedKey(fa, fb);
      if (!shared) continue;
      // one identity, one key, one script, the same numbers: one counter the rules share on purpose
      // (a row split by fail mode does); fields of one identity hash are apart when their names are
      if (a.identity === b.identity && JSON.stringify(fa) === JSON.stringify(fb) && stateOf(a) === stateOf(b)) {
        if (a.field !== undefined && b.field !== undefined && a.field !== b.field) continue;
        if (numbersOf(a) === numbersOf(b)) continue;
      }
      meets.push({ b, j, shared });
    }
    // another entry first: the pair the user wrote is the clearest to show
    meets.sort((x, y) => (x.j === undefined ? 1 : 0) - (y.j === undefined ? 1 : 0));
    const first = meets[0];
    if (!first) continue;
    const { b, j, shared } = first;
    const others = meets.slice(1).map((m) => m.b.id);
    const also = others.length > 0 ? ` (it can also meet the keys of ${others.join(', ')})` : '';
    const other = j !== undefined ? `rules[${j}] (${b.id})` : b.id === PENALTY ? 'the penalty box' : `the design's rule ${b.id}`;
    const field = `  $.rules[${i}].key`;
    const aKey = a.key as string;
    const bKey = b.key as string;
    const labels = [...new Set([a.identity, b.identity])].flatMap((x) =>
      x !== undefined && x in LABELS ? [`{${LABELS[x]}} for ${x}`] : [],
    );
    const fix = `The design does not relabel a key you wrote, so this is refused: put the identity's label in the key's identity slot, as the design's own keys do (${labels.join(', ')}), or give the keys different fixed text.`;
    const wrong =
      stateOf(a) !== stateOf(b) ? `, and the store would refuse one of the two (${stateOf(a)}; ${stateOf(b)}) with WRONGTYPE` : '';
    const caller = (r: MatrixRule, v: string | undefined): string =>
      v === undefined
        ? `${r.id} (one key for everyone)`
        : `${r.id} counting ${IDENTITY_WORDS[r.identity ?? ''] ?? `a ${r.identity}`} "${v}"`;
    if (a.identity !== b.identity) {
      problems.push(
        `${field}: "${aKey}" (rule ${a.id}, per ${a.identity}) and ${other}'s "${bKey}" (per ${b.identity}) can name the same Redis key: ${caller(a, shared.a)} and ${caller(b, shared.b)} both use ${shared.key}, so two different callers would share one counter${wrong}${also}. ${fix}`,
      );
    } else if (JSON.stringify(fa) === JSON.stringify(keyForm(b)) && stateOf(a) === stateOf(b)) {
      problems.push(
        `${field}: "${aKey}" (rule ${a.id}, ${numbersOf(a)}) and ${other}'s "${bKey}" (${numbersOf(b)}) both count per ${a.identity} in one ${stateOf(a)} state with different numbers: each would count the other's requests and judge them by its own limit${stateOf(a) === 'sliding-window-log' ? ' (and the shorter window trims the entries the longer one still needs)' : ''}${also}. Give one of the two keys different fixed text (e.g. "${aKey}:${a.id}"), or the same numbers if they are meant to share one count.`,
      );
    } else if (JSON.stringify(fa) === JSON.stringify(keyForm(b))) {
      problems.push(
        `${field}: "${aKey}" (rule ${a.id}) and ${other}'s "${bKey}" both count per ${a.identity} under one key, but with different state (${stateOf(a)}; ${stateOf(b)}): one would read the other's state as its own, or the store would refuse it with WRONGTYPE${also}. Give one of the two keys different fixed text (e.g. "${aKey}:${a.id}").`,
      );
    } else {
      problems.push(
        `${field}: "${aKey}" (rule ${a.id}) and ${other}'s "${bKey}" count per ${a.identity} under keys that can meet: ${caller(a, shared.a)} and ${caller(b, shared.b)} both use ${shared.key}, so two different callers would share one counter${wrong}${also}. ${fix}`,
      );
    }
  }
  return problems;
}

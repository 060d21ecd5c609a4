/**
 * View models for the section templates: the Design's data arranged and formatted for
 * reading (numbers with separators, durations, display names, joined lists). Every string
 * here is raw text; templates escape it with the helper of the place it goes to.
 */
import { conventionName, QUOTA_EXCEEDED_HEADER } from '../../design/contract.js';
import { FRAMEWORK_ADAPTERS } from '../../answers/choices.js';
import { isJavaScript, runsOnNode, storeConfFile, storeServerName } from '../../design/naming.js';
import { edgeCounter, edgeStateNote } from '../../design/gateway-behaviour.js';
import { type Design, inProcessOutbound, keepsStateInStore, type MatrixRule, type MetricSource } from '../../design/model.js';
import { fmtBytes, fmtDuration, fmtNumber, fmtPercent, joinAnd, lineCount } from '../format.js';
import { mdHref } from '../helpers.js';
import { formatNumber, rateFigure, rpsText } from '../../format.js';
import type { RenderInput } from '../types.js';
import { worstCaseView } from './worst-case.js';
import { outboundPeak, quotaStop } from '../../design/scope.js';
import { algorithmLabel, runAsGcraLabel, runBurst } from '../../design/algorithms.js';
import { outboundHeapBytes } from '../../design/matrix.js';
import { gatewayEdgeRefusals } from '../../codegen/gateway/index.js';
import { adapterFor, javascriptBuild, nestjsMount, typescriptFolders } from '../../codegen/middleware/index.js';
import { OVERLAY_PATH } from '../../codegen/openapi/index.js';
import { algorithmName, frameworkName, gatewayName, goalName, layerName, primitiveName, storeName, tierName } from './labels.js';

const NOT_STATED = 'not stated';

/** "600 / 60 s", or "10,000 / calendar month (Europe/Berlin)" when the period has a name; "" without a rate. */
function rateText(rate: MatrixRule['rate']): string {
  return rate ? rateFigure(rate) : '';
}

/**
 * The Rate cell of a matrix row. A quota rule with a backstop shows the plan's quota and,
 * apart from it, the count where the limiter refuses: they are different numbers.
 */
function ruleRateText(rule: MatrixRule): string {
  const b = rule.quotaBackstop;
  if (!b || !rule.rate) return rateText(rule.rate);
  const factor = b.factor < 2 ? `${fmtNumber(Math.round(b.factor * 100))}% of the quota` : `${fmtNumber(b.factor)}x the quota`;
  return `quota ${rateFigure({ ...rule.rate, requests: b.quota })}; refused past ${fmtNumber(rule.rate.requests)} (${factor}${b.assumed ? ', an assumed cap' : ', stated cap'})`;
}

/** The burst the application runs a bucket with when the rule states none (its rate), or null. */
function defaultedBurst(rule: MatrixRule): number | null {
  return rule.layer !== 'edge' && typeof rule.burst !== 'number' ? runBurst(rule) : null;
}

/**
 * A window algorithm has no burst, so a rule that states none (a hand-written window rule
 * leaves it out, as the complete-rules check asks) is complete, not missing one.
 */
function windowed(rule: MatrixRule): boolean {
  return (
    rule.burst === null ||
    rule.algorithm === 'fixed-window' ||
    rule.algorithm === 'sliding-window-log' ||
    (rule.layer === 'edge' && rule.algorithm === 'sliding-window-counter')
  );
}

function burstText(rule: MatrixRule): string {
  const runs = defaultedBurst(rule);
  if (runs !== null) return `${fmtNumber(runs)} (the rate: none stated)`;
  if (rule.burst === undefined && !windowed(rule)) return '';
  if (rule.burst === null || rule.burst === undefined) return 'none (window)';
  return fmtNumber(rule.burst);
}

/** Rate and burst in one cell; an unstated part says so. */
function rateBurstText(rule: MatrixRule): string {
  const rate = rule.rate ? ruleRateText(rule) : `rate ${NOT_STATED}`;
  const runs = defaultedBurst(rule);
  if (runs !== null) return `${rate}, burst ${fmtNumber(runs)} (the rate: none stated)`;
  if (rule.burst === undefined && !windowed(rule)) return `${rate}, burst ${NOT_STATED}`;
  const units = rule.edgeCost ? ` (requests of cost ${fmtNumber(rule.edgeCost.units)})` : '';
  if (rule.burst === null || rule.burst === undefined) return `${rate}, no burst (window)${units}`;
  return `${rate}, burst ${fmtNumber(rule.burst)}${units}`;
}

function costText(rule: MatrixRule): string {
  if (!rule.cost) return '';
  const e = rule.edgeCost;
  if (e) {
    const burst = e.unitBurst === null ? '' : `, burst ${fmtNumber(e.unitBurst)}`;
    return `1 per request (the gateway counts requests): each call costs ${fmtNumber(e.units)} units, so the rate and burst are ${e.of}'s ${rateText(e.unitRate)}${burst} in units divided by ${fmtNumber(e.units)}, rounded down`;
  }
  if (rule.layer === 'edge' && rule.cost.default === 1 && rule.cost.byEndpoint.length === 0)
    return '1 per request (the gateway counts requests)';
  const weights = rule.cost.byEndpoint.map((w) => `${w.endpoint} = ${fmtNumber(w.cost)}`);
  return weights.length === 0 ? fmtNumber(rule.cost.default) : `${fmtNumber(rule.cost.default)}; ${weights.join(', ')}`;
}

function appliesTo(rule: MatrixRule): string {
  if (rule.tier === 'outbound' || rule.layer === 'outbound-client') return 'outbound calls';
  if (rule.endpoints.length === 0) return rule.endpointClass === 'all' ? 'all requests' : `all ${rule.endpointClass} endpoints`;
  const names = rule.endpoints.join(', ');
  return rule.endpointClass === 'all' ? names : `${rule.endpointClass}: ${names}`;
}

function headersText(rule: MatrixRule): string {
  switch (rule.headers) {
    case 'silent':
      return 'silent';
    case 'none':
      return 'none (not client-facing)';
    case 'edge':
      return '429 + Retry-After only (edge)';
    default:
      return 'full';
  }
}

function failModeText(mode: string | undefined): string {
  return mode === undefined ? '' : `fail ${mode}`;
}

interface RuleRow {
  id: string;
  title: string;
  source: string;
  tier: string;
  appliesTo: string;
  identity: string;
  plan: string;
  algorithm: string;
  primitive: string;
  key: string;
  /** Its field in its identity's hash ('' when it keeps a key of its own). */
  field: string;
  rate: string;
  /** The rate with the burst beside it, for the compact matrix ("60 / 60 s, burst 25"). */
  rateBurst: string;
  burst: string;
  cost: string;
  failMode: string;
  layer: string;
  ttl: string;
  bound: string;
  basis: string;
  headers: string;
  killSwitch: string;
  /** An edge rule's switch is the gateway configuration: what turning it off takes there. */
  killSwitchHow: string;
  rationale: string;
  handWritten: boolean;
  /** Allowlist, penalty box and memory fallback as they concern this rule ('' when none does). */
  access: string;
}

/** What the access lists and the outage fallback do to one rule, in one line. */
function accessNote(rule: MatrixRule, design: Design | undefined): string {
  if (!design) return '';
  const notes: string[] = [];
  const a = design.access;
  if (a?.allow?.ruleIds.includes(rule.id)) notes.push('allowlisted callers skip it (see the enforcement section)');
  if (a?.penalty?.ruleIds.includes(rule.id)) {
    notes.push(
      `its refusals feed the penalty box: ${fmtNumber(a.penalty.refusals)} within ${fmtDuration(a.penalty.withinSeconds)} block the caller for ${fmtDuration(a.penalty.blockSeconds)}`,
    );
  }
  const fb = design.enforcement.fallback?.rules.find((r) => r.ruleId === rule.id);
  if (fb) {
    notes.push(
      `while the store is down it counts in each instance's memory: at most ${fmtNumber(fb.outageMost)} per ${fb.window} per identity across ${instancesText(design.enforcement.fallback?.instances ?? 1)}, against ${fmtNumber(fb.normalMost)} normally`,
    );
  }
  return notes.length === 0 ? '' : `${notes.join('; ')}.`;
}

/**
 * A rule's TTL; for a field of an identity's hash, also how long the hash itself lives (its longest
 * field's); none for an in-process outbound bucket, which its providers bound.
 */
function ttlText(rule: MatrixRule, design?: Design): string {
  if (rule.ttlSeconds === undefined)
    return inProcessOutbound(rule) ? 'none: the outbound client keeps one entry per provider while it lives (the cardinality bound)' : '';
  const own = fmtDuration(rule.ttlSeconds);
  if (rule.field === undefined || design === undefined) return own;
  const longest = Math.max(...design.rules.filter((r) => r.field !== undefined && r.key === rule.key).map((r) => r.ttlSeconds ?? 0));
  return longest > rule.ttlSeconds ? `${own} for its field; the hash lives as long as its longest field, ${fmtDuration(longest)}` : own;
}

export function ruleRow(rule: MatrixRule, killSwitchHow = '', design?: Design): RuleRow {
  return {
    id: rule.id,
    title: rule.title,
    source: rule.source,
    tier: tierName(rule.tier),
    appliesTo: appliesTo(rule),
    identity: rule.identity ?? '',
    plan: rule.plan ?? '',
    algorithm: algorithmLabel(rule) ?? runAsGcraLabel(rule) ?? algorithmName(rule.algorithm),
    primitive: primitiveName(rule.primitive),
    key: rule.key ?? '',
    // (a rolling window's state: its running total, and a field per UTC day named after the rule's field and the day)
    field: rule.field === undefined ? '' : algorithmLabel(rule) !== undefined ? `${rule.field}, ${rule.field}:<epoch-day>` : rule.field,
    rate: ruleRateText(rule),
    rateBurst: rateBurstText(rule),
    burst: burstText(rule),
    cost: costText(rule),
    failMode: failModeText(rule.failMode),
    layer: rule.notEnforced
      ? rule.notEnforced.all
        ? `${layerName(rule.layer)}: not enforced (${design?.scope.gateway === 'aws-api-gateway' ? "the usage plan carries another rule's throttle" : 'Kong counts another rule'} in its place)`
        : `${layerName(rule.layer)}, not on ${rule.notEnforced.routes.join(', ')}`
      : layerName(rule.layer),
    ttl: ttlText(rule, design),
    bound:
      rule.cardinality?.bound === undefined ? '' : `${fmtNumber(rule.cardinality.bound)} key${rule.cardinality.bound === 1 ? '' : 's'}`,
    basis: rule.cardinality?.basis ?? '',
    headers: headersText(rule),
    // an edge rule has no runtime flag (as the rollout section says): its switch is the gateway's
    killSwitch: rule.layer === 'edge' ? '' : (rule.killSwitch?.flag ?? ''),
    killSwitchHow: rule.layer === 'edge' && rule.killSwitch ? killSwitchHow : '',
    rationale: rule.rationale,
    handWritten: rule.source !== 'generated',
    access: accessNote(rule, design),
  };
}

// ---------------------------------------------------------------------------------------
// Section views

/** Appended to a value the answers did not give (each such value has a line in the assumptions). */
const ASSUMED = '(assumed)';

export function scopeView(input: RenderInput) {
  const { scope, meta, assumptions } = input.design;
  const t = scope.traffic;
  const usedClasses = [...new Set(scope.endpoints.map((e) => e.class))];
  const fields = new Set(assumptions.flatMap((a) => a.field.split(', ')));
  /** The value, marked when any of the answers fields behind it was assumed. */
  const mark = (value: string, ...from: string[]): string => (from.some((f) => fields.has(f)) ? `${value} ${ASSUMED}` : value);
  const usesAddress =
    fields.has('traffic.clientPeakRps') ||
    fields.has('traffic.clientsPerAddress') ||
    input.design.rules.some((r) => r.inputs?.includes('traffic.clientsPerAddress'));
  const population = [
    t.distinctClients > 0 ? mark(`${fmtNumber(t.distinctClients)} clients`, 'traffic.distinctClients') : '',
    t.distinctTenants > 0 ? mark(`${fmtNumber(t.distinctTenants)} tenants`, 'traffic.distinctTenants') : '',
    t.distinctUsers > 0 ? mark(`${fmtNumber(t.distinctUsers)} users`, 'traffic.distinctUsers') : '',
  ].filter(Boolean);
  const facts = [
    { what: 'Protects against', answer: mark(scope.goals.map(goalName).join(', ') || NOT_STATED, 'goals') },
    { what: 'Stack', answer: `${mark(scope.language, 'stack.language')}, ${mark(frameworkName(scope.framework), 'stack.framework')}` },
    {
      what: 'Topology',
      answer:
        scope.topology === 'horizontal'
          ? `${mark('horizontally scaled', 'stack.topology')}, ${mark(`${fmtNumber(scope.instances)} instances`, 'stack.topology', 'stack.instances')}`
          : mark('single instance', 'stack.topology'),
    },
    { what: 'Gateway / reverse proxy', answer: mark(gatewayName(scope.gateway), 'stack.gateway') },
    { what: 'Limiter store', answer: mark(storeName(scope.store), 'stack.store') },
    { what: 'Trusted proxies', answer: mark(scope.trustedProxies.join(', ') || 'none', 'stack.trustedProxies') },
    { what: 'Identities', answer: mark(scope.identities.join(', ') || 'none', 'identities', 'identities.ip') },
    {
      what: 'Traffic',
      answer:
        `${mark(`${rpsText(t.typicalRps)} typical`, 'traffic.typicalRps')}` +
        `, ${mark(`${rpsText(t.peakRps)} peak`, 'traffic.peakRps')}` +
        (t.capacityRps !== undefined ? `, backend capacity ${rpsText(t.capacityRps)}` : '') +
        `, ${mark(`headroom x${fmtNumber(t.headroom)}`, 'traffic.headroom')}`,
    },
    {
      what: 'Burstiness',
      answer: mark(t.burstSources.length > 0 ? `${t.burstiness}: ${t.burstSources.join('; ')}` : t.burstiness, 'traffic.burstiness'),
    },
    { what: 'Population', answer: population.join(', ') || NOT_STATED },
    ...(usesAddress
      ? [
          {
            what: 'Per client address',
            answer: `${mark(`${rpsText(t.clientPeakRps)} per client at its busiest`, 'traffic.clientPeakRps')}, ${mark(`${fmtNumber(t.clientsPerAddress)} clients active behind one address`, 'traffic.clientsPerAddress')}`,
          },
        ]
      : []),
    {
      what: 'Promised limits',
      answer: scope.plans.length > 0 ? scope.plans.map((p) => `${p.name} ${p.rateText}`).join(', ') : mark('none', 'plans'),
    },
    {
      what: 'Failure posture',
      answer: mark(
        usedClasses.map((c) => mark(`${c} fail ${scope.failureByClass[c]}`, `failure.byClass.${c}`)).join(', ') || NOT_STATED,
        'failure.byClass',
      ),
    },
    {
      what: 'Outbound APIs',
      answer: scope.outbound.length > 0 ? scope.outbound.map((p) => `${p.name} (${p.limitText})`).join(', ') : mark('none', 'outbound'),
    },
  ];
  const endpointAssumed = (e: (typeof scope.endpoints)[number], f: 'anonymous' | 'cost' | 'authKind'): boolean =>
    e.assumed?.includes(f) ?? false;
  return {
    generic: meta.generic,
    hasAnonymous: scope.endpoints.some((e) => e.anonymous),
    projectName: scope.projectName,
    description: scope.description ?? '',
    facts,
    anyAssumed: facts.some((f) => f.answer.includes(ASSUMED)),
    endpoints: scope.endpoints.map((e) => ({
      name: e.name,
      method: e.method,
      route: e.route,
      class: e.authKind ? `${e.class} (${e.authKind}${endpointAssumed(e, 'authKind') ? `, ${ASSUMED.slice(1, -1)}` : ''})` : e.class,
      anonymous: `${e.anonymous ? 'yes' : 'no'}${endpointAssumed(e, 'anonymous') ? ` ${ASSUMED}` : ''}`,
      cost: `${fmtNumber(e.cost)}${endpointAssumed(e, 'cost') && e.cost !== 1 ? ` ${ASSUMED}` : ''}`,
    })),
    endpointsAssumed: scope.endpoints.some((e) => (e.assumed?.length ?? 0) > 0),
    plans: scope.plans.map((p) => ({
      name: p.name,
      rate: p.rateText,
      burst: `${fmtNumber(p.burst)}${p.assumed?.includes('burst') ? ` ${ASSUMED}` : ''}`,
      quota: p.quota === undefined ? 'none' : fmtNumber(p.quota),
      exhaustion:
        p.quota === undefined
          ? 'no quota: nothing to exhaust'
          : `${p.exhaustion}${p.assumed?.includes('exhaustion') ? ` ${ASSUMED}` : ''}${p.exhaustion !== 'hard' ? `; refused past ${p.overageCap !== undefined ? fmtNumber(p.overageCap) : `${fmtNumber(quotaStop(p.quota, p.exhaustion))} ${ASSUMED}`}` : ''}`,
    })),
    assumptions: assumptions.map((a) => ({ field: a.field, text: a.text, ruleIds: a.ruleIds ?? [] })),
  };
}

/**
 * Edge rules whose count the gateway nodes share through something that can be unreachable (Envoy's
 * rate limit service, Kong's Redis): each with what it does then, and the answered fail modes it does not honour.
 */
function edgeSharedCounts(design: Design): { id: string; note: string }[] {
  const classOf = new Map(design.scope.endpoints.map((e) => [e.name, e.class]));
  return design.rules
    .filter((r) => r.layer === 'edge')
    .flatMap((r) => {
      const counter = edgeCounter(r, design.scope);
      if (!counter.unreachable) return [];
      const classes = r.endpoints.flatMap((n) => {
        const c = classOf.get(n);
        return c ? [c] : [];
      });
      return [{ id: r.id, note: edgeStateNote(counter, design.scope, classes) }];
    });
}

/** The one line that says what the edge does with a cost above 1; '' when no edge rule divides by one. */
function edgeCostLine(rules: readonly MatrixRule[]): string {
  const costed = rules.filter((r) => r.edgeCost !== undefined);
  if (costed.length === 0) return '';
  const each = costed.map((r) => `${r.id}: ${r.endpoints.join(', ') || 'its endpoints'}, cost ${fmtNumber(r.edgeCost?.units ?? 1)}`);
  return `Gateways count requests, not cost: where an edge rule's endpoints cost more than 1 unit a call, those endpoints count in an edge rule whose request rate and burst are the rule's, in units, divided by the cost and rounded down, so the edge never admits more units than the rule states (${each.join('; ')}).`;
}

/**
 * Per endpoint class, the edge rules covering it whose count nothing can make unreachable (each
 * node's own, or the provider's), with the mode each states: the answers' for its classes, the
 * strictest where they differ; the ceiling open. `stricter` names the classes answered open that
 * a per-client rule stating closed covers (that rule covers a class answered closed too).
 */
function edgeLocalModes(design: Design): {
  rows: { endpointClass: string; answered: string; rules: string }[];
  stricter: string;
  stricterMany: boolean;
} {
  const local = design.rules.filter((r) => r.layer === 'edge' && !edgeCounter(r, design.scope).unreachable);
  if (local.length === 0) return { rows: [], stricter: '', stricterMany: false };
  const classes = [...new Set(design.scope.endpoints.map((e) => e.class))].filter((c) => c !== 'health');
  const covers = (r: MatrixRule, c: string): boolean =>
    r.endpoints.length > 0
      ? design.scope.endpoints.some((e) => e.class === c && r.endpoints.includes(e.name))
      : r.endpointClass === 'all' || r.endpointClass === c;
  const edge = design.rules.filter((r) => r.layer === 'edge');
  const rows = classes.map((c) => {
    const of = edge.filter((r) => covers(r, c));
    return {
      endpointClass: c,
      answered: `fail ${design.scope.failureByClass[c]}`,
      rules: of.map((r) => `${r.id} (${r.failMode ?? 'unstated'}${r.notEnforced?.all ? ', not enforced' : ''})`).join(', ') || 'none',
      stricter:
        design.scope.failureByClass[c] !== 'closed' &&
        of.some((r) => local.includes(r) && r.failMode === 'closed' && r.identity !== 'global'),
    };
  });
  const stricter = rows.filter((r) => r.stricter).map((r) => r.endpointClass);
  return {
    rows: rows.map((r) => ({ endpointClass: r.endpointClass, answered: r.answered, rules: r.rules })),
    stricter: joinAnd(stricter),
    stricterMany: stricter.length > 1,
  };
}

export function matrixView(input: RenderInput) {
  const { rules, monitoring } = input.design;
  const fields = new Set(input.design.assumptions.flatMap((a) => a.field.split(', ')));
  const tiers = [...new Set(rules.map((r) => tierName(r.tier)))];
  const storeRules = rules.filter((r) => r.layer !== 'edge');
  const failModes = (input.design.failModes ?? []).map((f) => ({
    endpointClass: f.endpointClass,
    answered: `fail ${f.answered}${fields.has('failure.byClass') || fields.has(`failure.byClass.${f.endpointClass}`) ? ` ${ASSUMED}` : ''}`,
    effective: f.rules.length === 0 ? 'no store-backed rule' : `fail ${f.effective}`,
    mismatch: f.rules.length > 0 && f.effective !== f.answered,
    rules: f.rules.map((r) => `${r.id} (${r.failMode})`).join(', ') || 'none',
  }));
  return {
    derivations: rules.map((r) => ({
      id: r.id,
      text: r.derivation ?? (r.source === 'generated' ? 'not stated' : 'stated in a hand-written rule'),
    })),
    failModes,
    identityFallback: input.design.identityFallback?.explanation ?? '',
    storeBacked: rules.some(keepsStateInStore),
    failModeMismatch: joinAnd(failModes.filter((f) => f.mismatch).map((f) => f.endpointClass)),
    anyEdge: rules.some((r) => r.layer === 'edge'),
    edgeShared: edgeSharedCounts(input.design),
    edgeLocal: edgeLocalModes(input.design),
    count: rules.length,
    tiers: joinAnd(tiers),
    hasAnonymous: rules.some((r) => r.identity === 'ip' && r.tier !== 'security'),
    edgeCost: edgeCostLine(rules),
    rows: rules.map((r) => ruleRow(r, input.design.rollout.killSwitches.find((k) => k.ruleId === r.id)?.how, input.design)),
    fallback: fallbackView(input.design),
    // a rule kept in its identity's hash is priced in the hash's row (hashMemory)
    memory: storeRules
      .filter((r) => r.field === undefined)
      .map((r) => {
        const bound = r.cardinality?.bound;
        // an outbound bucket kept in each instance beside a store: in that instance's heap, not the store's total
        const heap = r.bytesPerKey === undefined ? outboundHeapBytes(r) : undefined;
        const bytes = heap?.bytesPerKey ?? r.bytesPerKey;
        const keyChars = heap?.keyChars ?? r.keyChars;
        return {
          id: r.id,
          keys: bound === undefined ? NOT_STATED : fmtNumber(bound),
          keyChars: keyChars === undefined ? NOT_STATED : fmtNumber(keyChars),
          bytesPerKey: bytes === undefined ? NOT_STATED : `${fmtNumber(bytes)}${heap ? ' (heap)' : ''}`,
          memory:
            bound === undefined || bytes === undefined
              ? NOT_STATED
              : `${fmtBytes(bound * bytes)}${heap ? " in each instance's heap, not the store" : ''}`,
        };
      }),
    /** Outbound buckets kept in each instance beside a store: their rows are of the heap, outside the store's total. */
    heapOutbound:
      input.design.scope.store === 'none'
        ? []
        : storeRules.filter((r) => r.bytesPerKey === undefined && outboundHeapBytes(r)).map((r) => r.id),
    memoryRows: storeRules.length > 0,
    // no store: the state, and so the estimate, is of the process's heap (memory-store.ts)
    inProcessMemory: input.design.scope.store === 'none',
    // the outbound client's in-process buckets: no TTL, one entry per provider while the client lives
    noTtl: storeRules.filter(inProcessOutbound).map((r) => r.id),
    hashMemory: (monitoring.store.hashes ?? []).map((h) => ({
      key: h.key,
      keys: fmtNumber(h.keys),
      keyChars: fmtNumber(h.keyChars),
      bytesPerKey: fmtNumber(h.bytesPerKey),
      memory: fmtBytes(h.keys * h.bytesPerKey),
      text: h.text,
    })),
    // the penalty box's counters and boxes, in the total too
    penaltyMemory: (monitoring.store.penalty?.rows ?? []).map((r) => ({
      key: r.key,
      keys: fmtNumber(r.keys),
      keyChars: fmtNumber(r.keyChars),
      bytesPerKey: fmtNumber(r.bytesPerKey),
      memory: fmtBytes(r.keys * r.bytesPerKey),
    })),
    penaltyText: monitoring.store.penalty?.text,
    edgeRules: rules.filter((r) => r.layer === 'edge').map((r) => r.id),
    // edge rules whose gateway keeps their counts in the design's store (Kong's policy redis)
    edgeInStore: rules.filter((r) => r.layer === 'edge' && edgeCounter(r, input.design.scope).inDesignStore).map((r) => r.id),
    // the Redis of Envoy's rate limit service: not this store, sized in its own paragraph
    edgeServiceRedis: monitoring.store.edgeServiceRedis,
    splitTwins: rules
      .filter((r) => r.layer !== 'edge' && r.field === undefined && r.id.endsWith('-fail-closed'))
      .filter((r) => rules.some((x) => x.id === `${r.id.slice(0, -'-fail-closed'.length)}-fail-open` && x.key === r.key))
      .map((r) => r.id),
    // rules on another rule's key pattern (the fail-mode halves have their own line)
    sameKey: (monitoring.store.sameKey ?? [])
      .filter((k) => !(k.ruleId.endsWith('-fail-closed') && k.keptWith === `${k.ruleId.slice(0, -'-fail-closed'.length)}-fail-open`))
      .map((k) => ({ ruleId: k.ruleId, keptWith: k.keptWith })),
    // the server the user runs, for the sentence on how its bytes per key were measured
    storeServer: storeServerName(input.design.scope.store),
    storeIsValkey: input.design.scope.store === 'valkey',
    totalKeys: fmtNumber(monitoring.store.estimatedKeys),
    totalBytes: fmtBytes(monitoring.store.estimatedBytes),
    totalBytesExact: fmtNumber(monitoring.store.estimatedBytes),
    ...(monitoring.store.sharedCeiling
      ? {
          sharedCeiling: {
            rules: monitoring.store.sharedCeiling.rules,
            rowKeys: fmtNumber(monitoring.store.sharedCeiling.rowKeys),
            keys: fmtNumber(monitoring.store.sharedCeiling.keys),
            bytes: fmtBytes(monitoring.store.sharedCeiling.bytes),
            endpoint: monitoring.store.sharedCeiling.endpoint,
            penalty: monitoring.store.sharedCeiling.penalty === true,
          },
        }
      : {}),
  };
}

/** "1 instance", "3 instances". */
function instancesText(n: number): string {
  return `${fmtNumber(n)} instance${n === 1 ? '' : 's'}`;
}

/** The in-memory fallback of fail-open rules during a store outage, with its numbers. */
function fallbackView(design: Design) {
  const f = design.enforcement.fallback;
  if (!f) return undefined;
  return {
    explanation: f.explanation,
    instances: instancesText(f.instances),
    rules: f.rules.map((r) => ({
      ruleId: r.ruleId,
      window: r.window,
      normalMost: fmtNumber(r.normalMost),
      outageMost: fmtNumber(r.outageMost),
    })),
  };
}

/** The problem+json response a denied or boxed caller gets, as sent. */
function accessResponse(status: number, title: string, headers: string[], body: Record<string, unknown>): string {
  return [
    `HTTP/1.1 ${status} ${title}`,
    'Content-Type: application/problem+json; charset=utf-8',
    ...headers,
    '',
    JSON.stringify(body, null, 2),
  ].join('\n');
}

/** The access lists and custom identities, for the enforcement section. */
function accessView(design: Design) {
  const a = design.access;
  if (!a) return undefined;
  return {
    allow: a.allow ? { text: a.allow.text } : undefined,
    deny: a.deny ? { text: a.deny.text } : undefined,
    penalty: a.penalty
      ? {
          text: a.penalty.text,
          strikesKey: a.penalty.keys.strikes,
          boxKey: a.penalty.keys.box,
          strikesTtl: fmtDuration(a.penalty.withinSeconds),
          boxTtl: fmtDuration(a.penalty.blockSeconds),
        }
      : undefined,
    customIdentities: a.customIdentities.map((c) => ({ kind: c.kind, from: c.from, option: c.option })),
    customText: a.customText ?? '',
  };
}

export function algorithmsView(input: RenderInput) {
  return {
    decisions: input.design.algorithms.map((d) => ({
      limitClass: tierName(d.limitClass),
      algorithm: d.label ?? algorithmName(d.algorithm),
      ruleIds: d.ruleIds,
      why: d.why,
      tradeoff: d.tradeoff,
      alternatives: d.alternatives.map((a) => ({ algorithm: algorithmName(a.algorithm), whyNot: a.whyNot })),
    })),
    worstCase: worstCaseView(input.design),
  };
}

export function enforcementView(input: RenderInput) {
  const { enforcement: e, output, rules, scope } = input.design;
  const ip = e.clientIp;
  const codeParts = [
    e.scripts.length > 0 ? 'the Lua scripts' : '',
    rules.some((r) => r.layer === 'middleware')
      ? !runsOnNode(scope.language)
        ? `the reference TypeScript limiter (to port to ${scope.language})`
        : FRAMEWORK_ADAPTERS[scope.framework] === null
          ? 'the framework-neutral limiter (no adapter exists for this framework)'
          : `the ${frameworkName(scope.framework)} middleware`
      : '',
    scope.gateway !== 'none' && rules.some((r) => r.layer === 'edge') ? `the ${gatewayName(scope.gateway)} configuration` : '',
    rules.some((r) => r.layer === 'outbound-client') ? 'the outbound client wrapper' : '',
  ].filter(Boolean);
  return {
    codeParts: joinAnd(codeParts.length > 0 ? codeParts : ['the enforcement code']),
    primitive: e.primitive,
    atomicityNote: e.atomicityNote,
    layers: e.layers.map((l) => ({ layer: layerName(l.layer), component: l.component, ruleIds: l.ruleIds, why: l.why })),
    doubleCounted: e.doubleCounted,
    clientIp: {
      source:
        ip.source === 'connection'
          ? 'the TCP peer address'
          : ip.source === 'gateway-header'
            ? 'the header the gateway sets'
            : 'the rightmost untrusted X-Forwarded-For entry',
      trustedProxies: ip.trustedProxies,
      explanation: ip.explanation,
    },
    hybrid: e.hybrid
      ? {
          ruleIds: e.hybrid.ruleIds,
          localBurst: fmtNumber(e.hybrid.localBurst),
          instances: fmtNumber(e.hybrid.instances),
          overAdmission: fmtNumber(e.hybrid.overAdmission),
          explanation: e.hybrid.explanation,
        }
      : undefined,
    dualKeyAuth: e.dualKeyAuth ?? '',
    access: accessView(input.design),
    nestjs:
      scope.framework === 'nestjs' && rules.some((r) => r.layer === 'middleware')
        ? nestjsMount(input.design).join(' ').replace(/`/g, '')
        : '',
    javascript: javascriptView(input),
    exempt: e.exempt,
    scripts: e.scripts.map((s) => ({ name: s.name, file: s.file, algorithm: s.label ?? algorithmName(s.algorithm), ruleIds: s.ruleIds })),
    placementDiagram: e.placementDiagram,
    layerCount: new Set(rules.map((r) => r.layer).filter(Boolean)).size,
    codeDir: output.codeDir ?? '',
    ...codeView(input),
  };
}

/** The code files the document prints: the Lua scripts and the gateway configuration. */
function printed(path: string): boolean {
  return path.startsWith('lua/') || path.startsWith('gateway/');
}

/** The design's own rules in the generated data module (middleware/design.ts): its `rules` list, one commented entry per rule. */
function rulesExcerpt(content: string): { from: number; to: number; text: string } | undefined {
  const lines = content.split('\n');
  const start = lines.findIndex((l) => /^ {2}rules: \[/.test(l));
  if (start < 0) return undefined;
  const end = lines[start]?.endsWith('[],') ? start : lines.findIndex((l, i) => i > start && l === '  ],');
  if (end < 0) return undefined;
  return { from: start + 1, to: end + 1, text: `${lines.slice(start, end + 1).join('\n')}\n` };
}

/** The href of a code file from the document's pages, or '' when the code folder is not known. */
function codeFileHref(input: RenderInput, path: string): string {
  if (input.codeBase === undefined) return '';
  const base = input.codeBase.replace(/\/+$/, '');
  return base === '' || base === '.' ? path : `${base}/${path}`;
}

/** Every link the enforcement section makes to a code file (the link checker accepts exactly these). */
export function codeLinks(input: RenderInput): string[] {
  // as the page writes them: percent-encoded where a path needs it
  return linkedCode(input)
    .map((f) => f.href)
    .filter(Boolean)
    .map(mdHref);
}

function linkedCode(input: RenderInput): { path: string; href: string; size: string; description: string }[] {
  return (input.codeFiles ?? [])
    .filter((f) => f.path !== 'README.md')
    .map((f) => ({
      path: f.path,
      href: codeFileHref(input, f.path),
      size: `${fmtNumber(lineCount(f.content))} lines, ${fmtBytes(Buffer.byteLength(f.content, 'utf8'))}`,
      description: f.description ?? '',
    }));
}

/**
 * What the enforcement section shows of the code: the design's rules (an excerpt of the
 * module that compiles them in), every Lua script and gateway file in full, and a linked
 * list of every file with its size and purpose; the middleware and client runtimes are
 * read in the code folder, not in the document.
 */
/** A JavaScript project compiles the shipped TypeScript once: the command, and what it then imports. */
function javascriptView(input: RenderInput): { command: string; entry: string } | undefined {
  const ts = typescriptFolders((input.codeFiles ?? []).map((f) => f.path));
  if (!isJavaScript(input.design.scope.language) || ts.length === 0) return undefined;
  return javascriptBuild(ts, adapterFor(input.design.scope.framework)?.path);
}

function codeView(input: RenderInput) {
  const files = input.codeFiles ?? [];
  const rules = files
    .map((f) => ({ f, excerpt: f.path === 'middleware/design.ts' ? rulesExcerpt(f.content) : undefined }))
    .find((x) => x.excerpt !== undefined);
  return {
    hasCode: files.length > 0,
    rulesModule: rules?.excerpt
      ? {
          path: rules.f.path,
          from: fmtNumber(rules.excerpt.from),
          to: fmtNumber(rules.excerpt.to),
          content: rules.excerpt.text,
          language: rules.f.language,
        }
      : undefined,
    printedFiles: files
      .filter((f) => printed(f.path))
      .map((f) => ({ path: f.path, language: f.language, content: f.content, description: f.description ?? '' })),
    linkedFiles: linkedCode(input),
  };
}

/** An example response: the situation in words, and the status line and headers as the client receives them. */
function exampleView(
  e: Design['contract']['rateLimitedExample'],
  body: Record<string, unknown> | undefined,
): { ruleId: string; situation: string; response: string } | undefined {
  if (!e || !body) return undefined;
  return {
    ruleId: e.ruleId,
    situation: e.situation,
    response: [
      `HTTP/1.1 ${e.status} Too Many Requests`,
      ...e.headers.map((h) => `${h.name}: ${h.value}`),
      '',
      JSON.stringify(body, null, 2),
    ].join('\n'),
  };
}

/**
 * The 429s the design's gateway file returns for its edge rules, one per distinct shape, read
 * from the same value the generator writes the file from: the status line, the headers as the
 * gateway serves them (Content-Type first), the body, and what the example cannot show.
 */
function edgeExamples(design: Design): { rules: string[]; by: string; notes: string; response: string }[] {
  return gatewayEdgeRefusals(design).map((r) => ({
    rules: r.ruleIds,
    by: r.by,
    notes: r.notes.join(' '),
    response: [
      'HTTP/1.1 429 Too Many Requests',
      ...r.headers.map((h) => `${h.name}: ${h.value}`),
      '',
      JSON.stringify(r.body, null, 2),
    ].join('\n'),
  }));
}

export function contractView(input: RenderInput) {
  const c = input.design.contract;
  const edge429s = edgeExamples(input.design);
  // no client-facing rule in the middleware: every refusal a client sees is the gateway's
  const middlewareAnswers = input.design.rules.some((r) => r.layer === 'middleware' && r.headers !== 'none');
  // an edge rule counted where nothing can be unreachable refuses nothing for a store outage, whatever it states
  const closed = input.design.rules
    .filter((r) => r.failMode === 'closed' && r.headers !== 'none')
    .filter((r) => r.layer !== 'edge' || edgeCounter(r, input.design.scope).unreachable !== undefined)
    .map((r) => r.id);
  const overlay = (input.codeFiles ?? []).some((f) => f.path === OVERLAY_PATH)
    ? { path: OVERLAY_PATH, href: codeFileHref(input, OVERLAY_PATH) }
    : undefined;
  return {
    openapiOverlay: overlay,
    convention: conventionName(c.convention),
    specReference: c.specReference,
    headers: c.headers,
    retryAfter: {
      onEvery429: c.retryAfter.onEvery429,
      unit: c.retryAfter.unit,
      jitterGuidance: c.retryAfter.jitterGuidance,
      clockGuidance: c.retryAfter.clockGuidance,
    },
    quotaHeaders: c.quotaHeaders ?? [],
    silentRuleIds: c.silentRuleIds,
    edgeRuleIds: c.edgeRuleIds ?? [],
    edgeRefusalBody: c.edgeRefusalBody,
    storeBacked: input.design.rules.some(keepsStateInStore),
    // the convention's headers come only from rules the application counts
    sendsHeaders: input.design.rules.some((r) => r.headers === 'full' && r.layer !== 'edge' && r.tier !== 'outbound'),
    onlyEdge: input.design.rules.length > 0 && input.design.rules.every((r) => r.layer === 'edge'),
    edgeShared: edgeSharedCounts(input.design),
    edgeOnlyEndpoints: c.edgeOnlyEndpoints ?? [],
    edgeOnlyAnonymous: c.edgeOnlyAnonymous ?? [],
    rateLimitedBody: JSON.stringify(c.rateLimitedBody, null, 2),
    edgeExamples: edge429s,
    // a gateway whose 429 at the edge is not problem+json (Kong's own JSON, application/json at Cloudflare and AWS)
    edgeNotProblemJson: gatewayEdgeRefusals(input.design).some(
      (r) => !/problem\+json/.test(r.headers.find((h) => h.name.toLowerCase() === 'content-type')?.value ?? ''),
    ),
    middlewareAnswers,
    rateLimitedExample: exampleView(c.rateLimitedExample, c.rateLimitedBody),
    quotaExceededBody: c.quotaExceededBody ? JSON.stringify(c.quotaExceededBody, null, 2) : '',
    quotaExceededExample: exampleView(c.quotaExceededExample, c.quotaExceededBody),
    overageExceededExample: exampleView(c.overageExceededExample, c.overageExceededBody),
    // the fields of a soft quota's refusal at its hard stop, when the document shows one
    quotaExceededHeader: QUOTA_EXCEEDED_HEADER,
    softQuotaRefusal: [c.quotaExceededBody, c.overageExceededBody].some(
      (b) => typeof b?.limit === 'object' && b.limit !== null && Object.hasOwn(b.limit, 'hardStop'),
    ),
    storeUnavailable: { status: c.storeUnavailable.status, retryAfter: fmtNumber(c.storeUnavailable.retryAfterSeconds) },
    closedRuleIds: closed,
    fallbackRuleIds: input.design.enforcement.fallback?.ruleIds ?? [],
    denied: input.design.access?.deny
      ? {
          status: fmtNumber(input.design.access.deny.status),
          response: accessResponse(
            input.design.access.deny.status,
            input.design.access.deny.status === 403 ? 'Forbidden' : 'Client Error',
            [],
            input.design.access.deny.body,
          ),
        }
      : undefined,
    boxed: input.design.access?.penalty
      ? {
          response: accessResponse(
            429,
            'Too Many Requests',
            [`Retry-After: ${input.design.access.penalty.blockSeconds}`],
            input.design.access.penalty.body,
          ),
        }
      : undefined,
    docsUrl: c.docsUrl,
    clientBehaviour: c.clientBehaviour,
    sequenceDiagram: c.sequenceDiagram,
  };
}

export function quotasView(input: RenderInput) {
  const q = input.design.quotas;
  if (!q) return {};
  const used = [...new Set(q.plans.map((p) => p.exhaustion))];
  return {
    reset:
      q.reset.kind === 'calendar'
        ? `every calendar ${q.reset.period} in ${q.reset.timeZone}`
        : `a rolling window of ${fmtNumber(q.reset.days)} days`,
    resetDescription: q.reset.description,
    plans: q.plans.map((p) => ({ name: p.name, quota: fmtNumber(p.quota), exhaustion: p.exhaustion, ruleId: p.ruleId })),
    exhaustion: used.map((k) => ({ kind: k, text: q.exhaustionText[k] })),
    billingFromLimiter: q.billingSource === 'limiter-counters',
    separation: q.separation,
    inProcess: q.inProcess ?? null,
    remainingExposure: q.remainingExposure,
  };
}

export function outboundView(input: RenderInput) {
  const o = input.design.outbound;
  if (!o) return {};
  const oneInstance = input.design.scope.instances === 1;
  return {
    intro: o.intro,
    providers: o.providers.map((p) => ({
      name: p.name,
      limit: p.limitText,
      fraction: `${fmtPercent(p.safetyFraction)}${p.assumed?.includes('safetyFraction') ? ` ${ASSUMED}` : ''}`,
      bucketRate: rateFigure({ requests: p.bucketPerSecond, periodSeconds: 1 }),
      burst: `${fmtNumber(p.burst)}${p.assumed?.includes('burst') ? ` ${ASSUMED}` : ''}`,
      // one instance's bucket of its own is simply in-process: per instance only means something with several
      bucket: p.bucket === 'per-instance' && oneInstance ? 'in-process' : p.bucket,
      ruleId: p.ruleId,
      key: p.key,
    })),
    perInstance: oneInstance ? [] : o.providers.filter((p) => p.bucket !== 'shared').map((p) => p.name),
    overLimit: o.providers.flatMap((p) => {
      const { peak, over, rate } = outboundPeak(p);
      if (over === 0) return [];
      const per = fmtDuration(p.limit.periodSeconds);
      return [
        // a bucket rate is whole calls or thousandths (outboundRate): three decimals show it exactly
        `${p.name}: burst ${fmtNumber(p.burst)} + ${formatNumber(rate, 3)} refilled per ${per} = up to ${fmtNumber(peak)} calls in ${per}, against a limit of ${p.limitText}; lower the burst to at most ${fmtNumber(Math.max(1, p.limit.requests - rate))}`,
      ];
    }),
    on429: o.on429,
    circuit: { description: o.circuit.description },
    circuitDiagram: o.circuitDiagram,
  };
}

export function monitoringView(input: RenderInput) {
  const m = input.design.monitoring;
  // off Node.js the shipped TypeScript runs nowhere: the application's port emits these series
  const language = input.design.scope.language;
  const port = runsOnNode(language) ? '' : ` (its ${language} port)`;
  const SOURCE: Record<MetricSource, string> = {
    middleware: `middleware${port}`,
    'outbound-client': `outbound client${port}`,
    'nginx-log': 'nginx error log (mtail)',
    'redis-exporter': 'redis_exporter',
    envoy: 'Envoy (/stats/prometheus)',
    'envoy-ratelimit-service': 'rate limit service (statsd_exporter)',
  };
  return {
    metrics: m.metrics.map((x) => ({ ...x, source: (x.emittedBy ?? ['middleware']).map((s) => SOURCE[s] ?? s).join(', ') })),
    // the middleware's counters exist only where the middleware does
    middlewareMetrics: m.metrics.some((x) => (x.emittedBy ?? ['middleware']).includes('middleware')),
    storeMetricsLeftOut: m.storeMetricsLeftOut,
    alerts: m.alerts,
    store: {
      policy: m.store.maxmemoryPolicy,
      keys: fmtNumber(m.store.estimatedKeys),
      bytes: fmtBytes(m.store.estimatedBytes),
      // the rules bounded by the ceiling's traffic share it: the total is then less than the rows' sum
      shared: m.store.sharedCeiling !== undefined,
      // the penalty box's keys, counted in keys and bytes: their bound in one line
      penalty: m.store.penalty?.text,
      recommendation: m.store.recommendation,
      edgeServiceRedis: m.store.edgeServiceRedis,
      // a store the answers name but no rule uses: nothing to size or configure
      unused: m.store.estimatedKeys === 0 && m.store.config === undefined && input.design.scope.store !== 'none',
      // no store: the estimate is of the process's heap, and no store is configured or called
      inProcess: input.design.scope.store === 'none',
      memoryText: m.store.memoryText,
      persistence: m.store.persistence?.text,
      config:
        m.store.config ??
        `# ${storeConfFile(input.design.scope.store)} of the limiter's dedicated store\nmaxmemory-policy ${m.store.maxmemoryPolicy}\n`,
      exporter: m.store.exporter,
    },
    edge: m.edge,
    p99: fmtNumber(m.latencyBudgetMs.p99),
  };
}

export function rolloutView(input: RenderInput) {
  const r = input.design.rollout;
  return {
    startsInShadow: r.startsInShadow,
    shadowDays: fmtNumber(r.shadowDays),
    edgeEnforcing: r.edgeEnforcing ?? null,
    onlyEdge: input.design.rules.every((x) => x.layer === 'edge'),
    steps: [...r.steps].sort((a, b) => a.order - b.order),
    killSwitches: r.killSwitches.map((k) => ({
      ...k,
      // an edge rule has no runtime flag: its switch is the gateway configuration
      flag: input.design.rules.find((x) => x.id === k.ruleId)?.layer === 'edge' ? '' : k.flag,
      how: k.how ?? '',
    })),
    migration: input.design.migration
      ? {
          items: input.design.migration.items.map((i) => ({
            existing: i.existing,
            route: i.endpoint ? `${i.endpoint.method} ${i.endpoint.route} (${i.endpoint.name})` : `${i.covers}: no endpoint of the design`,
            keyedOn: i.keyedOn,
            limitText: `${i.limitText} (${i.algorithm})`,
            oldWithin: `${
              i.oldWithinWindow > i.oldPerWindow
                ? `${fmtNumber(i.oldWithinWindow)} across a reset (${fmtNumber(i.oldPerWindow)} per window)`
                : fmtNumber(i.oldWithinWindow)
            }${
              !i.oldNodes
                ? ''
                : !i.oldNodes.known
                  ? ' at one nginx node (node count not known)'
                  : `: ${fmtNumber(i.oldNodes.each)} ${i.oldNodes.unit === 'instance' ? 'in each' : 'at each'} of ${fmtNumber(i.oldNodes.k)} ${i.oldNodes.unit === 'instance' ? 'instances' : 'nginx nodes'}`
            }`,
            newWithin: i.newWithinWindow === undefined ? 'none' : fmtNumber(i.newWithinWindow),
            replacements:
              i.replacements.length > 0
                ? i.replacements
                    .map(
                      (x) =>
                        `${x.ruleId}: ${x.limitText} (${fmtNumber(x.withinWindow)}${x.nodes ? `: ${fmtNumber(x.nodes.each)} at each of ${fmtNumber(x.nodes.k)} nodes` : ''})`,
                    )
                    .join('; ')
                : 'none',
            verdict:
              i.verdict === 'kept'
                ? `kept (taken over)${i.keptMove ? `, WARNING: ${i.keptMove}` : ''}`
                : i.verdict === 'uncovered'
                  ? 'WARNING: not replaced'
                  : i.verdict === 'same'
                    ? 'same'
                    : `WARNING: ${i.verdict}${i.acrossResetOnly ? ' across a reset only' : ''}`,
            note: i.note,
          })),
          handWritten: input.design.migration.handWritten,
          nginxConflicts: input.design.migration.nginxConflicts,
          shadowedLocations: input.design.migration.shadowedLocations,
          dryRun: input.design.migration.dryRun,
        }
      : undefined,
    missingKillSwitch: input.design.rules.filter((rule) => !r.killSwitches.some((k) => k.ruleId === rule.id)).map((x) => x.id),
  };
}

export function scenariosView(input: RenderInput) {
  return {
    scenarios: input.design.scenarios.map((s) => ({
      ...s,
      verdict: !s.applicable ? 'not applicable' : s.result ? (s.result.passed ? 'passed' : 'FAILED') : 'not run yet',
    })),
    anyResult: input.design.scenarios.some((s) => s.result),
  };
}

export function constraintsView(input: RenderInput) {
  const checks = [...input.checks].sort((a, b) => a.number - b.number);
  const failed = checks.filter((c) => !c.passed);
  return {
    checks: checks.map((c) => ({
      number: c.number,
      id: c.id,
      title: c.title,
      verdict: c.passed ? (c.applicable ? (c.note !== undefined ? `pass (${c.note})` : 'pass') : 'pass (does not apply)') : 'FAIL',
      passed: c.passed,
      ruleIds: [...new Set(c.findings.map((f) => f.ruleId).filter((id): id is string => id !== undefined))],
      messages: c.messages,
    })),
    passedCount: checks.length - failed.length,
    total: checks.length,
    failed: failed.length > 0,
  };
}

/** One line per section for the folder index: what the reader finds there. */
export function sectionSummary(id: string, design: Design, input: RenderInput): string {
  const d = design;
  switch (id) {
    case 'scope':
      return `What is protected and from what, the stack and traffic, and ${d.assumptions.length} assumption${d.assumptions.length === 1 ? '' : 's'}${d.meta.generic ? ' (generic design)' : ''}.`;
    case 'matrix':
      return `${d.rules.length} rules (${joinAnd([...new Set(d.rules.map((r) => tierName(r.tier)))])}) with key, rate, burst, cost, fail mode, layer, TTL and cardinality bound.`;
    case 'algorithms':
      return `Algorithm per limit class: ${joinAnd([...new Set(d.algorithms.map((a) => algorithmName(a.algorithm)))])}, with the trade-offs and the worst case per identity.`;
    case 'enforcement':
      return `The atomic primitive, which layer owns which rule, the trusted client IP${d.enforcement.hybrid ? ', the local + distributed hybrid' : ''}${input.codeFiles?.length ? ' and the enforcement code' : ''}.`;
    case 'contract':
      return `429 and Retry-After, the ${conventionName(d.contract.convention)}, error bodies and client backoff.`;
    case 'quotas':
      return `Quota reset semantics, exhaustion behaviour and the separation from billing.`;
    case 'outbound': {
      const providers = d.outbound?.providers ?? [];
      const shared = providers.filter((p) => p.bucket === 'shared').length;
      const kind = shared === providers.length ? 'Shared buckets' : shared === 0 ? 'In-process buckets' : 'Buckets';
      return `${kind} for ${joinAnd(providers.map((p) => p.name))}, provider 429 handling and the circuit.`;
    }
    case 'monitoring':
      return `${d.monitoring.metrics.length} metrics, ${d.monitoring.alerts.length} alerts and the store configuration.`;
    case 'rollout':
      return `Shadow mode for ${fmtNumber(d.rollout.shadowDays)} days, allowlist pass, enforcement order and kill switches${d.migration ? ', and the migration from the limiters already in place' : ''}.`;
    case 'scenarios':
      return `${d.scenarios.filter((s) => s.applicable).length} test scenarios tied to the rules they exercise${d.scenarios.some((s) => s.result) ? ', with results' : ''}.`;
    case 'constraints': {
      const passed = input.checks.filter((c) => c.passed).length;
      return `The nine testable constraints: ${passed} of ${input.checks.length} pass.`;
    }
    default:
      return '';
  }
}

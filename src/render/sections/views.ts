/**
 * View models for the section templates: the Design's data arranged and formatted for
 * reading (numbers with separators, durations, display names, joined lists). Every string
 * here is raw text; templates escape it with the helper of the place it goes to.
 */
import type { Design, MatrixRule } from '../../design/model.js';
import { fmtBytes, fmtDuration, fmtNumber, fmtPercent, joinAnd } from '../format.js';
import type { RenderInput } from '../types.js';
import {
  algorithmName,
  frameworkName,
  gatewayName,
  goalName,
  layerName,
  primitiveName,
  storeName,
  tierName,
} from './labels.js';

export const NOT_STATED = 'not stated';

/** "600 / 60 s", or "10,000 / calendar month (Europe/Berlin)" when the period has a name. */
export function rateText(rate: MatrixRule['rate']): string {
  if (!rate) return '';
  const period = rate.periodText ?? fmtDuration(rate.periodSeconds);
  return `${fmtNumber(rate.requests)} / ${period}`;
}

function burstText(rule: MatrixRule): string {
  if (rule.burst === undefined) return '';
  if (rule.burst === null) return 'none (window)';
  return fmtNumber(rule.burst);
}

function costText(rule: MatrixRule): string {
  if (!rule.cost) return '';
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
    default:
      return 'full';
  }
}

function failModeText(mode: string | undefined): string {
  return mode === undefined ? '' : `fail ${mode}`;
}

export interface RuleRow {
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
  rate: string;
  burst: string;
  cost: string;
  failMode: string;
  layer: string;
  ttl: string;
  bound: string;
  basis: string;
  headers: string;
  killSwitch: string;
  rationale: string;
  handWritten: boolean;
}

export function ruleRow(rule: MatrixRule): RuleRow {
  return {
    id: rule.id,
    title: rule.title,
    source: rule.source,
    tier: tierName(rule.tier),
    appliesTo: appliesTo(rule),
    identity: rule.identity ?? '',
    plan: rule.plan ?? '',
    algorithm: algorithmName(rule.algorithm),
    primitive: primitiveName(rule.primitive),
    key: rule.key ?? '',
    rate: rateText(rule.rate),
    burst: burstText(rule),
    cost: costText(rule),
    failMode: failModeText(rule.failMode),
    layer: layerName(rule.layer),
    ttl: rule.ttlSeconds === undefined ? '' : fmtDuration(rule.ttlSeconds),
    bound: rule.cardinality?.bound === undefined ? '' : fmtNumber(rule.cardinality.bound),
    basis: rule.cardinality?.basis ?? '',
    headers: headersText(rule),
    killSwitch: rule.killSwitch?.flag ?? '',
    rationale: rule.rationale,
    handWritten: rule.source !== 'generated',
  };
}

// ---------------------------------------------------------------------------------------
// Section views

export function scopeView(input: RenderInput): Record<string, unknown> {
  const { scope, meta, assumptions } = input.design;
  const t = scope.traffic;
  const usedClasses = [...new Set(scope.endpoints.map((e) => e.class))];
  const population = [
    t.distinctClients > 0 ? `${fmtNumber(t.distinctClients)} clients` : '',
    t.distinctTenants > 0 ? `${fmtNumber(t.distinctTenants)} tenants` : '',
    t.distinctUsers > 0 ? `${fmtNumber(t.distinctUsers)} users` : '',
  ].filter(Boolean);
  return {
    generic: meta.generic,
    hasAnonymous: scope.endpoints.some((e) => e.anonymous),
    projectName: scope.projectName,
    description: scope.description ?? '',
    facts: [
      { what: 'Protects against', answer: scope.goals.map(goalName).join(', ') || NOT_STATED },
      { what: 'Stack', answer: `${scope.language}, ${frameworkName(scope.framework)}` },
      {
        what: 'Topology',
        answer: scope.topology === 'horizontal' ? `horizontally scaled, ${fmtNumber(scope.instances)} instances` : 'single instance',
      },
      { what: 'Gateway / reverse proxy', answer: gatewayName(scope.gateway) },
      { what: 'Limiter store', answer: storeName(scope.store) },
      { what: 'Trusted proxies', answer: scope.trustedProxies.join(', ') || 'none' },
      { what: 'Identities', answer: scope.identities.join(', ') || 'none' },
      {
        what: 'Traffic',
        answer:
          `${fmtNumber(t.typicalRps)} req/s typical, ${fmtNumber(t.peakRps)} req/s peak` +
          (t.capacityRps !== undefined ? `, backend capacity ${fmtNumber(t.capacityRps)} req/s` : '') +
          `, headroom x${fmtNumber(t.headroom)}`,
      },
      {
        what: 'Burstiness',
        answer: t.burstSources.length > 0 ? `${t.burstiness}: ${t.burstSources.join('; ')}` : t.burstiness,
      },
      { what: 'Population', answer: population.join(', ') || NOT_STATED },
      {
        what: 'Promised limits',
        answer: scope.plans.length > 0 ? scope.plans.map((p) => `${p.name} ${p.rateText}`).join(', ') : 'none',
      },
      {
        what: 'Failure posture',
        answer: usedClasses.map((c) => `${c} fail ${scope.failureByClass[c]}`).join(', ') || NOT_STATED,
      },
      {
        what: 'Outbound APIs',
        answer: scope.outbound.length > 0 ? scope.outbound.map((p) => `${p.name} (${p.limitText})`).join(', ') : 'none',
      },
    ],
    endpoints: scope.endpoints.map((e) => ({
      name: e.name,
      method: e.method,
      route: e.route,
      class: e.authKind ? `${e.class} (${e.authKind})` : e.class,
      anonymous: e.anonymous ? 'yes' : 'no',
      cost: fmtNumber(e.cost),
    })),
    plans: scope.plans.map((p) => ({
      name: p.name,
      rate: p.rateText,
      burst: fmtNumber(p.burst),
      quota: p.quota === undefined ? 'none' : fmtNumber(p.quota),
      exhaustion: p.exhaustion,
    })),
    assumptions: assumptions.map((a) => ({ field: a.field, text: a.text })),
  };
}

export function matrixView(input: RenderInput): Record<string, unknown> {
  const { rules, monitoring } = input.design;
  const tiers = [...new Set(rules.map((r) => tierName(r.tier)))];
  const storeRules = rules.filter((r) => r.layer !== 'edge');
  return {
    count: rules.length,
    tiers: joinAnd(tiers),
    hasAnonymous: rules.some((r) => r.identity === 'ip' && r.tier !== 'security'),
    rows: rules.map(ruleRow),
    memory: storeRules.map((r) => {
      const bound = r.cardinality?.bound;
      const bytes = r.bytesPerKey;
      return {
        id: r.id,
        keys: bound === undefined ? NOT_STATED : fmtNumber(bound),
        bytesPerKey: bytes === undefined ? NOT_STATED : fmtNumber(bytes),
        memory: bound === undefined || bytes === undefined ? NOT_STATED : fmtBytes(bound * bytes),
      };
    }),
    edgeRules: rules.filter((r) => r.layer === 'edge').map((r) => r.id),
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
          },
        }
      : {}),
  };
}

export function algorithmsView(input: RenderInput): Record<string, unknown> {
  return {
    decisions: input.design.algorithms.map((d) => ({
      limitClass: tierName(d.limitClass),
      algorithm: algorithmName(d.algorithm),
      ruleIds: d.ruleIds,
      why: d.why,
      tradeoff: d.tradeoff,
      alternatives: d.alternatives.map((a) => ({ algorithm: algorithmName(a.algorithm), whyNot: a.whyNot })),
    })),
  };
}

export function enforcementView(input: RenderInput): Record<string, unknown> {
  const { enforcement: e, output, rules, scope } = input.design;
  const ip = e.clientIp;
  const codeParts = [
    e.scripts.length > 0 ? 'the Lua scripts' : '',
    rules.some((r) => r.layer === 'middleware') ? `the ${frameworkName(scope.framework)} middleware` : '',
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
    exempt: e.exempt,
    scripts: e.scripts.map((s) => ({ name: s.name, file: s.file, algorithm: algorithmName(s.algorithm), ruleIds: s.ruleIds })),
    placementDiagram: e.placementDiagram,
    layerCount: new Set(rules.map((r) => r.layer).filter(Boolean)).size,
    codeDir: output.codeDir ?? '',
    codeFiles: (input.codeFiles ?? []).map((f) => ({ path: f.path, language: f.language, content: f.content })),
  };
}

function conventionName(convention: string): string {
  switch (convention) {
    case 'ietf-structured':
      return 'IETF structured fields (RateLimit and RateLimit-Policy)';
    case 'ietf-trio':
      return 'IETF draft header trio (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset)';
    case 'x-ratelimit':
      return 'legacy X-RateLimit-* headers';
    default:
      return convention;
  }
}

export function contractView(input: RenderInput): Record<string, unknown> {
  const c = input.design.contract;
  const closed = input.design.rules.filter((r) => r.failMode === 'closed' && r.headers !== 'none').map((r) => r.id);
  return {
    convention: conventionName(c.convention),
    specReference: c.specReference,
    headers: c.headers,
    retryAfter: {
      onEvery429: c.retryAfter.onEvery429,
      unit: c.retryAfter.unit,
      jitterGuidance: c.retryAfter.jitterGuidance,
    },
    silentRuleIds: c.silentRuleIds,
    rateLimitedBody: JSON.stringify(c.rateLimitedBody, null, 2),
    quotaExceededBody: c.quotaExceededBody ? JSON.stringify(c.quotaExceededBody, null, 2) : '',
    storeUnavailable: { status: c.storeUnavailable.status, retryAfter: fmtNumber(c.storeUnavailable.retryAfterSeconds) },
    closedRuleIds: closed,
    docsUrl: c.docsUrl,
    clientBehaviour: c.clientBehaviour,
    sequenceDiagram: c.sequenceDiagram,
  };
}

export function quotasView(input: RenderInput): Record<string, unknown> {
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
    remainingExposure: q.remainingExposure,
  };
}

export function outboundView(input: RenderInput): Record<string, unknown> {
  const o = input.design.outbound;
  if (!o) return {};
  return {
    providers: o.providers.map((p) => ({
      name: p.name,
      limit: p.limitText,
      fraction: fmtPercent(p.safetyFraction),
      bucketRate: `${fmtNumber(p.bucketPerSecond)} / s`,
      burst: fmtNumber(p.burst),
      bucket: p.bucket,
      ruleId: p.ruleId,
      key: p.key,
    })),
    perInstance: o.providers.filter((p) => p.bucket !== 'shared').map((p) => p.name),
    on429: o.on429,
    circuit: {
      failureThreshold: fmtNumber(o.circuit.failureThreshold),
      openSeconds: fmtDuration(o.circuit.openSeconds),
      halfOpenProbes: fmtNumber(o.circuit.halfOpenProbes),
      description: o.circuit.description,
    },
    circuitDiagram: o.circuitDiagram,
  };
}

export function monitoringView(input: RenderInput): Record<string, unknown> {
  const m = input.design.monitoring;
  return {
    metrics: m.metrics,
    alerts: m.alerts,
    store: {
      policy: m.store.maxmemoryPolicy,
      keys: fmtNumber(m.store.estimatedKeys),
      bytes: fmtBytes(m.store.estimatedBytes),
      recommendation: m.store.recommendation,
      config: `# redis.conf of the limiter's dedicated store\nmaxmemory-policy ${m.store.maxmemoryPolicy}\n`,
    },
    p99: fmtNumber(m.latencyBudgetMs.p99),
  };
}

export function rolloutView(input: RenderInput): Record<string, unknown> {
  const r = input.design.rollout;
  return {
    startsInShadow: r.startsInShadow,
    shadowDays: fmtNumber(r.shadowDays),
    steps: [...r.steps].sort((a, b) => a.order - b.order),
    killSwitches: r.killSwitches,
    missingKillSwitch: input.design.rules.filter((rule) => !r.killSwitches.some((k) => k.ruleId === rule.id)).map((x) => x.id),
  };
}

export function scenariosView(input: RenderInput): Record<string, unknown> {
  return {
    scenarios: input.design.scenarios.map((s) => ({
      ...s,
      verdict: !s.applicable ? 'not applicable' : s.result ? (s.result.passed ? 'passed' : 'FAILED') : 'not run yet',
    })),
    anyResult: input.design.scenarios.some((s) => s.result),
  };
}

export function constraintsView(input: RenderInput): Record<string, unknown> {
  const checks = [...input.checks].sort((a, b) => a.number - b.number);
  const failed = checks.filter((c) => !c.passed);
  return {
    checks: checks.map((c) => ({
      number: c.number,
      id: c.id,
      title: c.title,
      verdict: c.passed ? (c.applicable ? 'pass' : 'pass (does not apply)') : 'FAIL',
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
      return `Algorithm per limit class: ${joinAnd([...new Set(d.algorithms.map((a) => algorithmName(a.algorithm)))])}, with the trade-offs.`;
    case 'enforcement':
      return `The atomic primitive, which layer owns which rule, the trusted client IP${d.enforcement.hybrid ? ', the local + distributed hybrid' : ''}${input.codeFiles?.length ? ' and the enforcement code' : ''}.`;
    case 'contract':
      return `429 and Retry-After, the ${conventionName(d.contract.convention)}, error bodies and client backoff.`;
    case 'quotas':
      return `Quota reset semantics, exhaustion behaviour and the separation from billing.`;
    case 'outbound':
      return `Shared buckets for ${joinAnd(d.outbound?.providers.map((p) => p.name) ?? [])}, provider 429 handling and the circuit.`;
    case 'monitoring':
      return `${d.monitoring.metrics.length} metrics, ${d.monitoring.alerts.length} alerts and the store configuration.`;
    case 'rollout':
      return `Shadow mode for ${fmtNumber(d.rollout.shadowDays)} days, allowlist pass, enforcement order and kill switches.`;
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

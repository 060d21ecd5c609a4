/**
 * The design builder: a pure function from validated Answers (and a date) to a Design.
 * No clock, no file system, no terminal: the date is an input.
 */
import { BURST_SECONDS, resolveAnswers } from './scope.js';
import type { Answers } from '../answers/schema.js';
import { TOOL_VERSION } from '../version.js';
import { buildAccess, buildFallback } from './access.js';
import { buildAlgorithms } from './algorithms.js';
import { buildContract } from './contract.js';
import { buildIdentityFallback } from './identity-fallback.js';
import { authDefaultsText, buildMatrix } from './matrix.js';
import { buildMigration } from './migration.js';
import {
  type Assumption,
  type ClassFailMode,
  type Design,
  type FailMode,
  keepsStateInStore,
  type MatrixRule,
  type Scope,
} from './model.js';
import { ceilingsAdmission, envoyClosedRules } from './gateway-behaviour.js';
import { buildMonitoring } from './monitoring.js';
import { buildOutbound } from './outbound.js';
import { buildEnforcement } from './placement.js';
import { buildQuotas } from './quotas.js';
import { buildRollout } from './rollout.js';
import { runsOnNode } from './naming.js';
import { formatNumber, rpsText } from '../format.js';
import { buildScenarios } from './scenarios.js';

interface BuildOptions {
  /** YYYY-MM-DD: the generation date shown in the document. */
  date: string;
}

/** The global protective ceiling in requests per second. */
export function ceilingOf(traffic: { capacityRps?: number; peakRps: number; headroom: number }): number {
  return Math.ceil(traffic.capacityRps ?? traffic.peakRps * traffic.headroom);
}

export function buildDesign(answers: Answers, options: BuildOptions): Design {
  const resolved = resolveAnswers(answers);
  const ceilingRps = ceilingOf(resolved.scope.traffic);
  const assumed = new Set(resolved.assumptions.flatMap((a) => a.field.split(', ')));
  const existing = answers.existing?.limiters ?? [];
  const matrixOf = (s: Scope) =>
    buildMatrix(
      {
        scope: s,
        ceilingRps,
        ...(resolved.quotaReset ? { quotaReset: resolved.quotaReset } : {}),
        burstSeconds: BURST_SECONDS[s.traffic.burstiness],
        assumed,
        existing,
      },
      answers.rules ?? [],
    );
  // Envoy's one failure_mode_deny: true when a rule its rate limit service counts is asked to
  // fail closed; the matrix is then built again, every such rule stating what Envoy does
  const first = matrixOf(resolved.scope);
  const deny = envoyClosedRules(resolved.scope, first.rules, answers.rules ?? []);
  const scope: Scope = deny.length > 0 ? { ...resolved.scope, envoyDenyRules: deny } : resolved.scope;
  const { rules, exempt } = deny.length > 0 ? matrixOf(scope) : first;
  const quotas = buildQuotas(scope, rules, resolved.quotaReset, resolved.billingSource, resolved.headers.convention);
  const outbound = buildOutbound(scope, rules);
  const fallback = buildFallback(answers, scope, rules);
  const access = buildAccess(answers, rules, resolved.headers.docsUrl);
  const placed = buildEnforcement(scope, rules, exempt);
  const migration = buildMigration(scope, rules, existing, answers.existing?.nginx ?? [], placed.hybrid, placed.exempt.endpoints);
  // the penalty box's script runs beside the rules' scripts, when they run on the store
  const penaltyScript =
    access?.penalty && placed.scripts.length > 0
      ? [
          {
            name: 'penalty',
            file: 'lua/penalty.lua',
            algorithm: 'fixed-window' as const,
            label: 'penalty box: refusals counted in a window from the first, then a block',
            ruleIds: access.penalty.ruleIds,
          },
        ]
      : [];
  const identityFallback = buildIdentityFallback(scope, rules);
  const enforcement = { ...placed, scripts: [...placed.scripts, ...penaltyScript], ...(fallback ? { fallback } : {}) };
  return {
    meta: { tool: 'rl-design', toolVersion: TOOL_VERSION, date: options.date, generic: resolved.generic },
    output: resolved.output,
    scope,
    assumptions: withRules(
      [...resolved.assumptions.map((a) => ceilingSetByHand(a, rules, ceilingRps, scope.traffic.headroom)), ...authAssumption(scope, rules)],
      rules,
    ),
    rules,
    algorithms: buildAlgorithms(rules),
    enforcement,
    contract: buildContract(rules, resolved.headers.convention, resolved.headers.docsUrl, {
      ...(resolved.quotaReset ? { quotaReset: resolved.quotaReset } : {}),
      endpoints: scope.endpoints,
      gateway: scope.gateway,
    }),
    ...(quotas ? { quotas } : {}),
    ...(outbound ? { outbound } : {}),
    // the penalty box is sized from the traffic the gateway fleet admits, as the key counts are
    monitoring: buildMonitoring(scope, rules, {
      access,
      ceilingRps: admittedRps(scope, rules, ceilingRps),
      fallbackRuleIds: fallback?.ruleIds,
      quotas,
    }),
    rollout: buildRollout(
      rules,
      resolved.shadowDays,
      scope.gateway,
      migration,
      access,
      runsOnNode(scope.language) ? undefined : scope.language,
    ),
    scenarios: buildScenarios(rules, {
      topology: scope.topology,
      instances: scope.instances,
      ...(enforcement.hybrid ? { hybrid: enforcement.hybrid } : {}),
      ...(enforcement.fallback ? { fallback: enforcement.fallback } : {}),
    }),
    failModes: classFailModes(scope, rules),
    ...(identityFallback ? { identityFallback } : {}),
    ...(migration ? { migration } : {}),
    ...(access ? { access } : {}),
  };
}

/** Requests per second the ceiling rows admit across the fleet, as the shipped files count them (ceilingsAdmission). */
function admittedRps(scope: Scope, rules: readonly MatrixRule[], ceilingRps: number): number {
  return (
    ceilingsAdmission(
      scope,
      rules.filter((r) => r.tier === 'ceiling'),
    )?.rps ?? ceilingRps
  );
}

/**
 * The answers have no field for auth attempt limits: the flows take built-in defaults, which
 * are stated here (a rules entry with a row's id changes one).
 */
function authAssumption(scope: Scope, rules: readonly MatrixRule[]): Assumption[] {
  const defaulted = rules.filter((r) => r.tier === 'security' && r.source === 'generated' && r.inputs?.includes('rules.auth'));
  if (defaulted.length === 0) return [];
  const kinds = [...new Set(scope.endpoints.filter((e) => e.class === 'auth').map((e) => e.authKind ?? 'login'))].sort();
  return [
    {
      id: 'rules.auth',
      field: 'rules.auth',
      text: `Attempt limits for the auth flows are not among the answers: each flow takes the defaults of its kind (${authDefaultsText(kinds)}), chosen so one person retrying a forgotten password or a shared office address is not locked out while guessing stays slow. Change a row with a rules entry of its id and a rate.`,
    },
  ];
}

/**
 * The headroom assumption when a rules entry sets the ceiling's rate: the ceiling, and the rules
 * sized from it, no longer rest on peak x headroom, and the line says what does.
 */
function ceilingSetByHand(a: Assumption, rules: readonly MatrixRule[], fromTraffic: number, headroom: number): Assumption {
  const ceiling = rules.find((r) => r.tier === 'ceiling' && r.source === 'overridden' && r.rate && !r.inputs?.includes(a.field));
  if (a.field !== 'traffic.headroom' || !ceiling?.rate) return a;
  const set = ceiling.rate.requests / ceiling.rate.periodSeconds;
  return {
    ...a,
    text: `Backend capacity unknown: peak x ${formatNumber(headroom)} headroom would make the global ceiling ${rpsText(fromTraffic)}, but the rules entry for ${ceiling.id} sets ${rpsText(set)}; the ceiling and the rules sized from it follow that, so no rule rests on this headroom.`,
  };
}

/** Each assumption with the rules whose numbers or behaviour rest on it. */
function withRules(assumptions: readonly Assumption[], rules: readonly MatrixRule[]): Assumption[] {
  return assumptions.map((a) => {
    const fields = a.field.split(', ');
    const ruleIds = rules.filter((r) => r.inputs?.some((f) => fields.includes(f))).map((r) => r.id);
    return ruleIds.length > 0 ? { ...a, ruleIds } : { ...a };
  });
}

/**
 * What a store outage does to each endpoint class in use: a request is refused when any rule
 * it meets fails closed and cannot reach the store, so the class's effective mode is closed
 * when any store-backed rule covering it fails closed. Edge and outbound rules do not count.
 */
function classFailModes(scope: Scope, rules: readonly MatrixRule[]): ClassFailMode[] {
  const classes = [...new Set(scope.endpoints.map((e) => e.class))].filter((c) => c !== 'health');
  return classes.map((c) => {
    const eps = scope.endpoints.filter((e) => e.class === c);
    const covering = rules.filter(
      (r) =>
        keepsStateInStore(r) &&
        r.failMode !== undefined &&
        eps.some((e) => (r.endpoints.length > 0 ? r.endpoints.includes(e.name) : r.endpointClass === 'all' || r.endpointClass === c)),
    );
    const effective = covering.some((r) => r.failMode === 'closed') ? 'closed' : 'open';
    return {
      endpointClass: c,
      answered: scope.failureByClass[c],
      effective,
      rules: covering.map((r) => ({ id: r.id, failMode: r.failMode as FailMode })),
    };
  });
}

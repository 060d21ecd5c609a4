/**
 * Migration from the limiters already in place: each one beside the rules that replace it,
 * the numbers side by side within the old limiter's own window, a warning wherever the new
 * limit is looser or tighter, and the clashes the generated nginx files would have with the
 * scanned nginx configuration.
 */
import type { ExistingLimiterT, ExistingNginxDirectiveT } from '../answers/schema.js';
import { formatNumber, secondsWords } from '../format.js';
import { admittedWithin } from './algorithms.js';
import type { MatrixRule, Migration, MigrationItem, ResolvedEndpoint, RuleIdentity, Scope } from './model.js';

/** A route with its parameters made comparable: /v1/orders/:id and /v1/orders/{id} read the same. */
function normaliseRoute(route: string): string {
  return route.replace(/\{[^}/]+\}|:[A-Za-z_][\w]*/g, ':p').replace(/\/+$/, '') || '/';
}

/** Whether an existing limiter covers an endpoint (method and path; no path covers every route). */
function coversEndpoint(l: ExistingLimiterT, e: ResolvedEndpoint): boolean {
  if (l.match === 'unknown') return false;
  if (l.method && l.method !== 'ANY' && e.method !== 'ANY' && l.method !== e.method) return false;
  if (!l.path) return true;
  const path = normaliseRoute(l.path);
  const route = normaliseRoute(e.route.replace(/\*$/, ''));
  if (l.match === 'exact') return route === path;
  return path === '/' || route === path || route.startsWith(`${path}/`);
}

/** What an existing limiter counts per, as the rule identities that count the same thing. */
const SAME_KEY: Record<NonNullable<ExistingLimiterT['keyedOn']>, RuleIdentity[]> = {
  ip: ['ip'],
  'api-key': ['api-key'],
  user: ['user', 'username', 'session'],
  tenant: ['tenant'],
  global: ['global'],
  other: [],
};

/** The most an existing limiter admits within its own window: its limit plus any burst. */
function existingWithin(l: ExistingLimiterT): number {
  return Math.floor(l.limit + (l.burst ?? 0));
}

export function existingLimitText(l: ExistingLimiterT): string {
  if (l.kind === 'nginx' && (l.windowSeconds === 1 || l.windowSeconds === 60)) {
    return `${formatNumber(l.limit)}r/${l.windowSeconds === 1 ? 's' : 'm'}${l.burst !== undefined ? `, burst ${formatNumber(l.burst)}` : ''}`;
  }
  return `${formatNumber(l.limit)} per ${secondsWords(l.windowSeconds)}${l.burst !== undefined ? `, burst ${formatNumber(l.burst)}` : ''}`;
}

export function existingName(l: ExistingLimiterT): string {
  return `${l.kind}${l.name ? ` ${l.name}` : ''}${l.source ? ` (${l.source})` : ''}`;
}

function joinWords(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function coversText(l: ExistingLimiterT): string {
  if (l.match === 'unknown') return l.scope ?? 'routes the scan could not name';
  const method = l.method && l.method !== 'ANY' ? `${l.method} ` : '';
  if (!l.path) return method ? `every ${method.trim()} request` : 'every request';
  return l.match === 'exact' ? `${method}${l.path}` : `${method ? `${method}requests` : 'every route'} under ${l.path}`;
}

function ruleLimitText(r: MatrixRule): string {
  if (!r.rate) return 'no rate';
  const per = r.rate.periodText ?? secondsWords(r.rate.periodSeconds);
  return `${formatNumber(r.rate.requests)} per ${per}${typeof r.burst === 'number' ? `, burst ${formatNumber(r.burst)}` : ''}`;
}

/** Whether a rule counts the endpoint (an empty endpoint list covers every endpoint of its class). */
function ruleCovers(r: MatrixRule, e: ResolvedEndpoint): boolean {
  if (r.tier === 'outbound' || r.layer === 'outbound-client') return false;
  if (r.endpoints.length > 0) return r.endpoints.includes(e.name);
  return r.endpointClass === 'all' ? e.class !== 'health' : r.endpointClass === e.class;
}

/**
 * Requests to one endpoint a rule admits within a stretch: what it admits in tokens, over the
 * tokens one call to that endpoint takes (a rule counting cost 5 per call admits a fifth as many
 * calls), so an old limiter counting requests is compared with calls, not tokens.
 */
function requestsWithin(r: MatrixRule, e: ResolvedEndpoint, seconds: number): number | undefined {
  const tokens = admittedWithin(r, seconds);
  if (tokens === undefined) return undefined;
  const cost = r.cost ? (r.cost.byEndpoint.find((w) => w.endpoint === e.name)?.cost ?? r.cost.default) : 1;
  return Math.floor(tokens / Math.max(1, cost));
}

/**
 * The tighter existing limit an auth flow's per-IP row (a sliding log) takes over, so a limit
 * already in force is never loosened silently: the limiters keyed on the client IP that cover one
 * of the flow's endpoints and admit fewer within their window than the new row would, and no more
 * within the row's own window.
 */
export function tighterExisting(
  existing: readonly ExistingLimiterT[],
  endpoints: readonly ResolvedEndpoint[],
  row: { requests: number; periodSeconds: number },
): ExistingLimiterT | undefined {
  let best: { l: ExistingLimiterT; perSecond: number } | undefined;
  for (const l of existing) {
    if ((l.keyedOn ?? 'ip') !== 'ip') continue;
    if (!endpoints.some((e) => coversEndpoint(l, e))) continue;
    const within = admittedWithin({ algorithm: 'sliding-window-log', rate: row, layer: 'middleware', burst: null }, l.windowSeconds) ?? 0;
    if (l.limit >= within) continue;
    // tighter within its own window is not enough: over the row's longer window the old limit
    // must not admit more either (30 per second is 27,000 per 15 min against the row's 300);
    // when neither is tighter over both, the row stays and the migration table warns
    if (l.limit * Math.ceil(row.periodSeconds / l.windowSeconds - 1e-9) > row.requests) continue;
    const perSecond = l.limit / l.windowSeconds;
    if (!best || perSecond < best.perSecond) best = { l, perSecond };
  }
  return best?.l;
}

/** Directives the generated http-level nginx file sets, and those of the server-level file. */
const GENERATED_NGINX_HTTP = ['real_ip_header', 'real_ip_recursive', 'limit_req_status', 'limit_req_log_level'] as const;
const GENERATED_NGINX_SERVER = ['limit_req_dry_run'] as const;

/** Directives of the scanned configuration that the generated files would set a second time at the same level. */
function nginxDuplicates(directives: readonly ExistingNginxDirectiveT[]): ExistingNginxDirectiveT[] {
  return directives.filter(
    (d) =>
      (d.context === 'http' && (GENERATED_NGINX_HTTP as readonly string[]).includes(d.name)) ||
      (d.context === 'server' && (GENERATED_NGINX_SERVER as readonly string[]).includes(d.name)),
  );
}

export function buildMigration(
  scope: Scope,
  rules: readonly MatrixRule[],
  existing: readonly ExistingLimiterT[],
  nginx: readonly ExistingNginxDirectiveT[],
): Migration | undefined {
  if (existing.length === 0 && nginx.length === 0) return undefined;
  // nginx: a location with a limit_req of its own does not inherit the server's limit_req lines
  const locations = existing.filter((x) => x.kind === 'nginx' && x.location && x.path);
  const hiddenFrom = (l: ExistingLimiterT, e: ResolvedEndpoint): boolean =>
    l.kind === 'nginx' && !l.location && locations.some((x) => coversEndpoint(x, e));
  const items: MigrationItem[] = existing.flatMap((l) => {
    const endpoints = scope.endpoints.filter((e) => e.class !== 'health' && coversEndpoint(l, e) && !hiddenFrom(l, e));
    const keyedOn = l.keyedOn ?? 'ip';
    const same = SAME_KEY[keyedOn];
    const oldWithin = existingWithin(l);
    const w = secondsWords(l.windowSeconds);
    const base = {
      existing: existingName(l),
      kind: l.kind,
      ...(l.source ? { source: l.source } : {}),
      covers: coversText(l),
      keyedOn,
      limitText: existingLimitText(l),
      oldWithinWindow: oldWithin,
    };
    if (keyedOn === 'other') {
      return [
        {
          ...base,
          replacements: [],
          verdict: 'uncovered' as const,
          note: `Counts per a key the scan could not read (a key generator, or a key chosen in code)${endpoints.length > 0 ? ` on ${endpoints.map((e) => e.name).join(', ')}` : ''}: no rule can be set beside it automatically. Compare it with the rules on those routes by hand before retiring it.`,
        },
      ];
    }
    if (endpoints.length === 0) {
      return [
        {
          ...base,
          replacements: [],
          verdict: 'uncovered' as const,
          note:
            l.match === 'unknown'
              ? `Applies to ${l.scope ?? 'routes the scan could not name'}, which the design cannot match to its endpoints: compare it with the rules on those routes by hand before retiring it.`
              : 'Covers no endpoint of this design: list its routes as endpoints, or confirm they need no limit before retiring it.',
        },
      ];
    }
    return endpoints.map((e): MigrationItem => {
      const candidates = rules.filter((r) => r.identity && same.includes(r.identity) && ruleCovers(r, e));
      const replacements = candidates
        .map((r) => ({ ruleId: r.id, limitText: ruleLimitText(r), withinWindow: requestsWithin(r, e, l.windowSeconds) }))
        .filter((x): x is { ruleId: string; limitText: string; withinWindow: number } => x.withinWindow !== undefined);
      const kept = candidates.find((r) => r.keptFrom === existingName(l));
      // a request must pass every rule on the route that counts it, so the tightest one decides
      const tightest = replacements.reduce<(typeof replacements)[number] | undefined>(
        (a, b) => (a && a.withinWindow <= b.withinWindow ? a : b),
        undefined,
      );
      const endpoint = { name: e.name, method: e.method, route: e.route };
      const at = `${e.method} ${e.route}`;
      if (kept) {
        return {
          ...base,
          endpoint,
          replacements,
          ...(tightest ? { newWithinWindow: tightest.withinWindow } : {}),
          verdict: 'kept',
          note: `${at}: the new rule ${kept.id} takes over this limit (${existingLimitText(l)}); the design's default would have admitted more, and a limit in force is not loosened without a decision.`,
        };
      }
      if (!tightest) {
        // the route may still have rules keyed on something else (an anonymous auth flow's per-IP
        // and per-account rows): retiring the old limiter removes its per-key limit, not every limit
        const others = rules.filter((r) => r.layer !== 'edge' && ruleCovers(r, e) && r.identity && !same.includes(r.identity));
        const kept =
          others.length > 0
            ? ` The route keeps the new rules counting per ${joinWords([...new Set(others.map((r) => r.identity as string))])} (${others.map((r) => r.id).join(', ')})${e.anonymous && keyedOn !== 'ip' && keyedOn !== 'global' ? `; its callers are anonymous, so they bring no ${keyedOn} to count` : ''}.`
            : '';
        return {
          ...base,
          endpoint,
          replacements,
          verdict: 'uncovered',
          note: `${at}: warning, no new rule counts per ${keyedOn} here. Retiring this limiter removes ${others.length > 0 ? `its per-${keyedOn} limit` : 'the limit'} on this route; keep it, or add a rule keyed on ${keyedOn} (a rules entry) first.${kept}`,
        };
      }
      const looserNote = `Confirm the looser limit is wanted before retiring this limiter, or keep it, or add a rules entry with the old numbers.`;
      const tighterNote = `Clients that live near the old limit will be refused: check shadow mode's would-be refusals for them before enforcing.`;
      // rules of different plans never count the same caller: within each plan the tightest of
      // its rules (and of the rules every plan meets) decides, and the plans can differ
      const plans = [...new Set(candidates.flatMap((r) => (r.plan === undefined ? [] : [r.plan])))];
      if (plans.length > 1) {
        const planOf = new Map(candidates.map((r) => [r.id, r.plan]));
        const perPlan = plans.flatMap((plan) => {
          const own = replacements.filter((x) => {
            const p = planOf.get(x.ruleId);
            return p === undefined || p === plan;
          });
          const t = own.reduce<(typeof own)[number] | undefined>((a, b) => (a && a.withinWindow <= b.withinWindow ? a : b), undefined);
          if (!t) return [];
          const v: 'same' | 'looser' | 'tighter' =
            t.withinWindow === oldWithin ? 'same' : t.withinWindow > oldWithin ? 'looser' : 'tighter';
          return [{ plan, tightest: t, verdict: v }];
        });
        const most = Math.max(...perPlan.map((p) => p.tightest.withinWindow));
        const verdict = perPlan.some((p) => p.verdict === 'looser')
          ? 'looser'
          : perPlan.some((p) => p.verdict === 'tighter')
            ? 'tighter'
            : 'same';
        const common = { ...base, endpoint, replacements, newWithinWindow: most };
        if (verdict === 'same') {
          return {
            ...common,
            verdict,
            note: `${at}: the same within ${w} on every plan, ${formatNumber(oldWithin)} requests per ${keyedOn}, old and new.`,
          };
        }
        const each = perPlan
          .map(
            (p) =>
              `plan ${p.plan} ${formatNumber(p.tightest.withinWindow)} (${p.tightest.ruleId}, ${p.verdict === 'same' ? 'the same' : p.verdict})`,
          )
          .join('; ');
        const kinds = (['looser', 'tighter'] as const).filter((k) => perPlan.some((p) => p.verdict === k));
        return {
          ...common,
          verdict,
          note: `${at}: warning, ${kinds.join(' and ')}. Within ${w} one ${keyedOn} could send ${formatNumber(oldWithin)} requests before, whatever its plan; a caller meets only its own plan's rules, and per plan the new rules admit: ${each}. ${kinds.map((k) => (k === 'looser' ? looserNote : tighterNote)).join(' ')}`,
        };
      }
      const common = { ...base, endpoint, replacements, newWithinWindow: tightest.withinWindow };
      if (tightest.withinWindow === oldWithin) {
        return {
          ...common,
          verdict: 'same',
          note: `${at}: the same within ${w}, ${formatNumber(oldWithin)} requests per ${keyedOn}, old and new.`,
        };
      }
      if (tightest.withinWindow > oldWithin) {
        return {
          ...common,
          verdict: 'looser',
          note: `${at}: warning, looser. Within ${w} one ${keyedOn} could send ${formatNumber(oldWithin)} requests before; the new rules admit ${formatNumber(tightest.withinWindow)} (${tightest.ruleId}). ${looserNote}`,
        };
      }
      return {
        ...common,
        verdict: 'tighter',
        note: `${at}: warning, tighter. Within ${w} one ${keyedOn} could send ${formatNumber(oldWithin)} requests before; the new rules admit ${formatNumber(tightest.withinWindow)} (${tightest.ruleId}). ${tighterNote}`,
      };
    });
  });

  const hasEdge = rules.some((r) => r.layer === 'edge') && scope.gateway === 'nginx';
  const duplicates = hasEdge ? nginxDuplicates(nginx) : [];
  const nginxConflicts = duplicates.map(
    (d) =>
      `${d.source ?? 'your nginx configuration'} sets "${d.name} ${d.value}" in the ${d.context} block; the generated ${d.context === 'http' ? 'gateway/nginx.conf' : 'gateway/nginx-server.conf'} would set it a second time at the same level, which nginx -t refuses ("${d.name}" directive is duplicate). The generated file leaves its own line commented out, so yours stays in force${d.name === 'real_ip_header' ? ': check that it names the header your trusted proxies set' : ''}.`,
  );
  const shadowedLocations = hasEdge
    ? existing
        .filter((l) => l.kind === 'nginx' && l.location)
        .map(
          (l) =>
            `location ${l.path ?? '(unnamed)'}${l.source ? ` (${l.source})` : ''} has its own limit_req (zone ${l.name ?? 'unnamed'}): nginx then ignores every limit_req of the server level inside it, the generated edge rules included. Copy the limit_req lines of gateway/nginx-server.conf into that location next to its own, or the location stays unprotected by them.`,
        )
    : [];
  return { items, nginxConflicts, shadowedLocations, nginxDirectives: duplicates };
}

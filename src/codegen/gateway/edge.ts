/**
 * The edge rules of a design, in the shape every gateway generator needs: which requests a
 * rule counts (method + route patterns, or everything but the exempt endpoints), what it is
 * keyed on, and its rate, burst, fail mode and kill switch.
 */
import {
  bySpecificity,
  edgeMethods,
  edgePathBody,
  fleetOverStated,
  fleetRaisedWarning,
  gatewayNodeName,
  gatewayNodes,
  owns,
  UNEVEN_BALANCE_TEXT,
} from '../../design/gateway-behaviour.js';
export { bySpecificity, owns };
import { formatNumber, ratePer } from '../../format.js';
import type { Design, FailMode, MatrixRule, RuleIdentity } from '../../design/model.js';
import { jsonCharEscape, regexLiteral } from '../../escape/index.js';
import { compileRoute } from '../../runtime/middleware/routes.js';

/** What an edge counter is keyed on, as far as a gateway can see it. */
type EdgeKey = 'global' | 'ip' | 'api-key' | 'unsupported';

export interface EdgeRoute {
  method: string;
  route: string;
  /** Methods that match (GET also matches HEAD, as the frameworks do); null = any method. */
  methods: string[] | null;
  /** Regex for the path, no anchors: parameters match one segment, a trailing slash is optional. */
  pathBody: string;
  /** pathBody anchored at both ends. */
  pathRegex: string;
  /**
   * pathRegex of the route spelled in lower case (A-Z only): for a gateway that lowercases the
   * request path before it compares (AWS WAF's LOWERCASE transformation), so that /PARTS/abc
   * counts as /parts/abc does, as the middleware matches paths in any letter case.
   */
  lowerPathRegex: string;
  /** Regex for the method, no anchors: `(?:GET|HEAD)`, or `[A-Za-z]+` for any method. */
  methodBody: string;
  /** True when the route has no parameters or wildcards (exact-match capable). */
  literal: boolean;
  /**
   * The design's routes that own some of the requests this pattern matches: more specific
   * routes of other endpoints (a static segment beats a parameter, as the middleware's router
   * picks), most specific first. A gateway counts a request under this route only when none of
   * them matches it. Empty from edgeRoute(); the design's edge rules fill it (ownedRoutes).
   */
  excluding: EdgeRoute[];
}

export interface EdgeRule {
  rule: MatrixRule;
  id: string;
  title: string;
  identity?: RuleIdentity;
  key: EdgeKey;
  /** What each node's file configures: the rule's numbers, or each node's share of them (perNode). */
  rate: { requests: number; periodSeconds: number };
  burst: number | null;
  /** Empty: every request except the exempt endpoints. */
  routes: EdgeRoute[];
  failMode: FailMode;
  killSwitch?: string;
  /** Seconds a refused client should wait before a retry can pass: one emission interval, at least 1. */
  retryAfterSeconds: number;
  cardinalityBound?: number;
}

/**
 * A layer of a generated gateway file that can answer 429 without Retry-After: the file, the
 * layer (gateway and component), and what is missing.
 */
export interface RetryAfterFinding {
  file: string;
  layer: string;
  missing: string;
}

/**
 * One header of a gateway's edge 429. `byGateway` says why the gateway sends it of its own
 * accord (no line of the shipped file sets it); a header without it is one the file writes.
 */
export interface RefusalHeader {
  name: string;
  value: string;
  byGateway?: string;
}

/**
 * The 429 a gateway's shipped file answers for some of its edge rules, as a client receives it:
 * the headers (Content-Type first, as the gateway serves it), the body, and what the example
 * cannot show literally (`notes`, whole sentences). A gateway whose rules answer in different
 * shapes (Envoy's local and global filters, Kong's two plugins, API Gateway and AWS WAF) has one
 * per shape. The generator writes its file from the same value, so the document's example and
 * the file cannot say different things.
 */
export interface EdgeRefusal {
  /** The part of the gateway that answers ("Envoy's local rate limit filter"). */
  by: string;
  /** The place in the gateway file that writes the body (shippedEdgeBodies reads each back from the file). */
  writtenBy: EdgeBodyPlace;
  ruleIds: string[];
  headers: RefusalHeader[];
  body: Record<string, unknown>;
  notes: string[];
}

/**
 * Where a gateway file writes the body of an edge 429: nginx's error_page location, Envoy's 429
 * local reply mapper (both filters answer through it), each Kong plugin's error_message, API
 * Gateway's THROTTLED gateway response, AWS WAF's custom response body, each Cloudflare rule's
 * custom response.
 */
export type EdgeBodyPlace =
  | 'nginx-error-page'
  | 'envoy-local-reply'
  | 'kong-rate-limiting-advanced'
  | 'kong-rate-limiting'
  | 'aws-throttled-response'
  | 'aws-waf-custom-response'
  | 'cloudflare-rule-response';

/** A refusal's header by name (any letter case). */
export function refusalHeader(refusal: Pick<EdgeRefusal, 'headers'>, name: string): RefusalHeader | undefined {
  return refusal.headers.find((h) => h.name.toLowerCase() === name.toLowerCase());
}

/** The header the edge reads an API key from when a rule is keyed on it. */
export const API_KEY_HEADER = 'x-api-key';

function keyOf(identity: RuleIdentity | undefined): EdgeKey {
  if (identity === 'global') return 'global';
  if (identity === 'ip') return 'ip';
  if (identity === 'api-key') return 'api-key';
  return 'unsupported';
}

/** A text with its ASCII capitals lowercased, as the gateways' lowercase functions and transformations do (lower(), LOWERCASE). */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** A route's path regex body, no anchors, a trailing slash optional (`spell`: as edgePathBody). */
export function routeBody(route: string, spell?: (text: string) => string): string {
  const body = edgePathBody(route, spell);
  return body === '/' || body === '' ? '/' : `${body}/?`;
}

export function edgeRoute(method: string, route: string): EdgeRoute {
  const methods = edgeMethods(method);
  const pathBody = routeBody(route);
  return {
    method,
    route,
    methods,
    pathBody,
    pathRegex: `^${pathBody}$`,
    lowerPathRegex: `^${routeBody(asciiLower(route))}$`,
    methodBody: methods ? `(?:${methods.map(regexLiteral).join('|')})` : '[A-Za-z]+',
    literal: !/[:*{]/.test(route),
    excluding: [],
  };
}

/**
 * A route with the design's routes that take some of its requests (EdgeRoute.excluding): every
 * endpoint route more specific than it that a request can match beside it.
 */
export function ownedRoute(design: Design, method: string, route: string): EdgeRoute {
  const base = edgeRoute(method, route);
  const seen = new Set<string>();
  const others = design.scope.endpoints.filter((e) => {
    const k = `${e.method.toUpperCase()} ${e.route}`;
    if (seen.has(k) || k === `${method.toUpperCase()} ${route}`) return false;
    seen.add(k);
    return owns(e, { method, route });
  });
  return { ...base, excluding: bySpecificity(others).map((e) => edgeRoute(e.method, e.route)) };
}

function dedupeRoutes(design: Design, routes: { method: string; route: string }[]): EdgeRoute[] {
  const seen = new Set<string>();
  const out: EdgeRoute[] = [];
  for (const r of routes) {
    const k = `${r.method} ${r.route}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(ownedRoute(design, r.method, r.route));
  }
  return out;
}

/**
 * The map entries that give a set of routes exactly the requests they own, for a gateway that
 * tries patterns in order and stops at the first match (nginx's map): the catch-alls of the set
 * first (their rules apply beside the owner's), then the set's routes and every route that takes
 * requests from them, most specific first, each marked whether it belongs to the set.
 */
export function firstMatchOrder(routes: readonly EdgeRoute[]): { route: EdgeRoute; own: boolean }[] {
  const own = new Set(routes.map((r) => `${r.method} ${r.route}`));
  const seen = new Set<string>();
  const all: EdgeRoute[] = [];
  for (const r of [...routes, ...routes.flatMap((x) => x.excluding)]) {
    const k = `${r.method} ${r.route}`;
    if (seen.has(k)) continue;
    seen.add(k);
    all.push(r);
  }
  const wild = all.filter((r) => compileRoute({ method: r.method, route: r.route, endpoint: null, exempt: false }, 0).wildcard);
  const plain = all.filter((r) => !wild.includes(r));
  return [...wild, ...bySpecificity(plain)].map((route) => ({ route, own: own.has(`${route.method} ${route.route}`) }));
}

/** Rules the design places at the edge that have a rate to enforce, in matrix order. */
export function edgeRules(design: Design): EdgeRule[] {
  return design.rules
    .filter((r) => r.layer === 'edge' && r.rate && r.rate.requests > 0 && r.rate.periodSeconds > 0)
    .map((r) => {
      // a rule counted in each node with K given ships each node's share (perNode)
      const rate = (r.perNode?.rate ?? r.rate) as { requests: number; periodSeconds: number };
      const given = r.perNode ? r.perNode.burst : r.burst;
      const burst = typeof given === 'number' && given > 0 ? Math.ceil(given) : null;
      return {
        rule: r,
        id: r.id,
        title: r.title,
        ...(r.identity ? { identity: r.identity } : {}),
        key: keyOf(r.identity),
        rate: { requests: rate.requests, periodSeconds: rate.periodSeconds },
        burst,
        routes: dedupeRoutes(design, r.routes),
        failMode: r.failMode ?? 'open',
        ...(r.killSwitch ? { killSwitch: r.killSwitch.flag } : {}),
        retryAfterSeconds: Math.max(1, Math.ceil(rate.periodSeconds / rate.requests)),
        ...(r.cardinality?.bound !== undefined ? { cardinalityBound: r.cardinality.bound } : {}),
      };
    });
}

/** Rules placed at the edge that no gateway config can carry (no rate). */
export function edgeRulesWithoutRate(design: Design): MatrixRule[] {
  return design.rules.filter((r) => r.layer === 'edge' && !(r.rate && r.rate.requests > 0 && r.rate.periodSeconds > 0));
}

export function hasEdgeRules(design: Design): boolean {
  return design.rules.some((r) => r.layer === 'edge');
}

/** Routes of the endpoints the design exempts (health probes): never counted at the edge. */
export function exemptRoutes(design: Design): EdgeRoute[] {
  const names = new Set(design.enforcement.exempt.endpoints);
  return dedupeRoutes(
    design,
    design.scope.endpoints.filter((e) => names.has(e.name)),
  );
}

/**
 * The Retry-After the edge sends on every 429: the longest any edge rule needs, and any other
 * limit that answers through the same 429 (`others`, in seconds: the nginx limit_req zones
 * already in place, whose refusals go through the generated error_page 429).
 */
export function edgeRetryAfter(rules: EdgeRule[], others: readonly number[] = []): number {
  return Math.max(1, ...rules.map((r) => r.retryAfterSeconds), ...others);
}

/**
 * The problem+json body an edge 429 carries (the gateway cannot tell which rule refused): every
 * edge rule, and the nginx limit_req zones already in place that answer through the same page.
 */
export function edgeProblemBody(design: Design, rules: EdgeRule[], retryAfter: number): Record<string, unknown> {
  const docs = design.contract.docsUrl;
  const zones = (design.migration?.nginxLimits ?? []).map((z) => z.zone);
  return {
    type: `${docs}#rate-limited`,
    title: 'Too many requests',
    status: 429,
    code: 'RATE_LIMITED',
    detail: 'An edge rate limit was exceeded; retry after the time in Retry-After, with jitter.',
    limit: {
      layer: 'edge',
      rules: rules.map((r) => r.id),
      // the limit_req zones already in the user's nginx answer through the same error_page 429
      ...(zones.length > 0 ? { zones } : {}),
    },
    retryAfterSeconds: retryAfter,
    documentation: docs,
  };
}

/**
 * The note of a refusal whose file writes some characters of the body as JSON \u escapes,
 * because `reader` (the gateway) would act on them (jsonEscaping): none when the body holds none.
 */
export function escapedBodyNote(body: unknown, chars: string, reader: string): string[] {
  const text = JSON.stringify(body);
  const found = [...chars].filter((c) => text.includes(c));
  if (found.length === 0) return [];
  const escapes = found.map((c) => `${c} as ${jsonCharEscape(c)}`);
  return [`${reader}, so the file writes ${escapes.join(' and ')} (JSON escapes): a JSON parser reads the body shown here.`];
}

/** "5 req/s", "600 req/min", "10 req per 900 s". */
export function rateText(rate: { requests: number; periodSeconds: number }): string {
  if (rate.periodSeconds === 1) return `${rate.requests} req/s`;
  if (rate.periodSeconds === 60) return `${rate.requests} req/min`;
  if (rate.periodSeconds === 3600) return `${rate.requests} req/h`;
  return `${rate.requests} req per ${rate.periodSeconds} s`;
}

/**
 * An edge rule's kill switch as the gateway files state it: the flag the design names and what
 * turning it off takes at this gateway, the same words as the document's rollout section.
 */
export function killSwitchNote(design: Design, rule: Pick<EdgeRule, 'id'>): string | undefined {
  const k = design.rollout.killSwitches.find((x) => x.ruleId === rule.id);
  return k ? `kill switch: ${k.how ?? 'change the gateway configuration'}` : undefined;
}

/**
 * An edge rule's fail mode as the gateway files state it, in the words of the document's fail-mode
 * section: the mode it keeps if its count moves to a shared store, and why nothing can fail now
 * (`where`: who counts it, e.g. "each Envoy node counts it").
 */
export function failStatement(rule: Pick<EdgeRule, 'failMode'>, where: string): string {
  return `fail ${rule.failMode} if its count moves to a shared store (here ${where}: no store to fail)`;
}

/**
 * The fail-mode statements in a piece of a gateway file: "fail open if its count moves ...",
 * "fail closed: while ...", Kong's "Fail closed (fault_tolerant false)". A rule's title alone
 * ("... (fail closed)") is not one.
 */
export const FAIL_STATEMENT = /\bfail (open|closed)(?= if its (?:count|policy) moves to| \(fault_tolerant (?:true|false)\)|: while )/gi;

/** Every fail mode a piece of a gateway file states (FAIL_STATEMENT), lowercased. */
export function statedFailModes(text: string): ('open' | 'closed')[] {
  return [...text.matchAll(FAIL_STATEMENT)].map((m) => (m[1] as string).toLowerCase() as 'open' | 'closed');
}

/**
 * The sentence a gateway file gives a rule of no identity counted in each node: each node's
 * share of the fleet figure when the answers give K, else the fleet figure on every node and
 * what K nodes then admit (the K the document assumes).
 */
export function perNodeNote(design: Design, r: EdgeRule): string {
  const name = gatewayNodeName(design.scope.gateway);
  const fleet = r.rule.rate as { requests: number; periodSeconds: number };
  const fleetText = `${ratePer(fleet)}${typeof r.rule.burst === 'number' && r.rule.burst > 0 ? `, burst ${formatNumber(r.rule.burst)}` : ''}`;
  const p = r.rule.perNode;
  if (p) {
    const here = `${ratePer(p.rate)}${p.burst !== null ? `, burst ${formatNumber(p.burst)}` : ''} here`;
    return `Per node: ${
      fleetOverStated(r.rule)
        ? `the fleet's ${fleetText}; ${here}. ${fleetRaisedWarning(r.rule, design.scope.gateway)}`
        : `the fleet's ${fleetText} divided by the ${p.nodes} ${name} nodes (stack.gatewayNodes), rounded down: ${here}; ${UNEVEN_BALANCE_TEXT}.`
    } Change these numbers when the node count changes.`;
  }
  const { k, stated } = gatewayNodes(design.scope);
  if (stated) return `Per node: one ${name} node (stack.gatewayNodes) counts the whole ${fleetText}.`;
  return `Per node: each ${name} node counts the full ${fleetText}, so K nodes admit K times it; the document sizes key counts and memory for K = ${k} (assumed, stack.gatewayNodes not given). With K known, set the rate and burst to the figure divided by K.`;
}

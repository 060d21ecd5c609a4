/**
 * What the generated gateway files enforce for each edge rule, read back from the files
 * themselves (nginx directives, Envoy and Kong YAML, the AWS and Cloudflare JSON): the count,
 * the period and the burst each product is told. The checks compare these with the numbers the
 * document states, so a file that says something else than its design does not pass.
 */
import { parse as parseYaml } from 'yaml';
import { awsKeyPlan, edgeMethods, envoyCounter } from '../../design/gateway-behaviour.js';
import { compileRoute, RouteTable } from '../../runtime/middleware/routes.js';
import type { Design } from '../../design/model.js';
import { PERIOD_SECONDS } from '../../design/scope.js';
import type { CodeFile } from '../types.js';
import { AWS_PATH, awsUsagePlanName, CLOUDFLARE_PATH, cfRuleExpression } from './cloud.js';
import {
  durationMs,
  ENVOY_FILTER_PATH,
  ENVOY_SERVICE_PATH,
  GLOBAL_FILTER,
  LOCAL_FILTER,
  RLS_ERROR_FLAG,
  RULE_DESCRIPTOR_KEY,
} from './envoy.js';
import { asciiLower, edgeRules, exemptRoutes, ownedRoute, statedFailModes, type EdgeBodyPlace } from './edge.js';
import { KONG_CEILING_PLUGIN, KONG_PATH, KONG_RULE_PLUGIN, kongRoutePath } from './kong.js';
import { kongRouterPathError, kongSelect } from './kong-router.js';
import { NGINX_HTTP_PATH, NGINX_SERVER_PATH, nginxZones } from './nginx.js';
import {
  apiGatewayTemplateRead,
  envoyFormatRead,
  envoyJsonFormatRead,
  nginxDirectives,
  nginxReturnRead,
  type NginxDirective,
} from './reading.js';

export interface ShippedEdgeLimit {
  ruleId: string;
  file: string;
  /** What the file says, in its own words ("limit_req_zone rate=5r/s, limit_req burst=50"). */
  text: string;
  requests: number;
  periodSeconds: number;
  /**
   * A count per window (Kong, envoyproxy/ratelimit, AWS WAF, Cloudflare): the period is part of
   * the limit. False for a bucket, where only the rate (requests / period) is.
   */
  window: boolean;
  /** What the product admits at once beyond the rate: its burst, bucket size or throttle burst; null for none. */
  burst: number | null;
  /** Envoy's bucket never holds less than one fill: a rule stating no burst runs with this. */
  burstFloor?: number;
  /**
   * A bucket per API method the document lets the user lower by hand (an API Gateway stage or
   * method throttle: API Gateway has no stage-wide total): its rate and burst agree at or below
   * the rule's, and only a figure above them differs.
   */
  atMost?: true;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = PERIOD_SECONDS;

function code(content: string): string {
  return content.replace(/#[^\n]*/g, '');
}

function readYaml(content: string): any {
  try {
    return parseYaml(content);
  } catch {
    return undefined;
  }
}

function readJson(content: string): any {
  try {
    return JSON.parse(content);
  } catch {
    return undefined;
  }
}

function nginxLimits(design: Design, files: readonly CodeFile[]): ShippedEdgeLimit[] {
  const http = files.find((f) => f.path === NGINX_HTTP_PATH);
  const server = files.find((f) => f.path === NGINX_SERVER_PATH);
  if (!http || !server) return [];
  const out: ShippedEdgeLimit[] = [];
  const httpCode = code(http.content);
  const serverCode = code(server.content);
  for (const { ruleId, zone } of nginxZones(design)) {
    const z = new RegExp(`limit_req_zone\\s+\\S+\\s+zone=${zone}:\\d+[mk]\\s+rate=(\\d+)r/([sm])\\s*;`).exec(httpCode);
    if (!z) continue;
    const l = new RegExp(`^\\s*limit_req\\s+zone=${zone}(?:\\s+burst=(\\d+))?(?:\\s+nodelay)?\\s*;`, 'm').exec(serverCode);
    const burst = l?.[1] !== undefined ? Number(l[1]) : null;
    out.push({
      ruleId,
      file: http.path,
      text: `limit_req_zone rate=${z[1]}r/${z[2]}${l ? (burst !== null ? `, limit_req burst=${burst}` : ', limit_req without burst') : ', no limit_req for its zone'}`,
      requests: Number(z[1]),
      periodSeconds: z[2] === 's' ? 1 : 60,
      window: false,
      // a zone no limit_req uses counts nothing: no burst to compare, and the rate alone is not enough
      burst: l ? burst : -1,
    });
  }
  return out;
}

function envoyBucket(ruleId: string, file: string, b: any, what: string): ShippedEdgeLimit | undefined {
  const perFill = Number(b?.tokens_per_fill);
  const ms = durationMs(String(b?.fill_interval ?? ''));
  const max = Number(b?.max_tokens);
  if (!(perFill > 0) || !(ms > 0) || !(max > 0)) return undefined;
  return {
    ruleId,
    file,
    text: `${what}: ${perFill} tokens every ${b.fill_interval}, max_tokens ${max}`,
    requests: perFill,
    periodSeconds: ms / 1000,
    window: false,
    burst: max,
    burstFloor: perFill,
  };
}

function envoyLimits(design: Design, files: readonly CodeFile[]): ShippedEdgeLimit[] {
  const out: ShippedEdgeLimit[] = [];
  const filter = files.find((f) => f.path === ENVOY_FILTER_PATH);
  const doc = filter ? readYaml(filter.content) : undefined;
  if (filter && doc) {
    const filters: any[] = doc?.http_connection_manager?.http_filters ?? [];
    const local = filters.find((f) => f?.name === LOCAL_FILTER)?.typed_config;
    // the filter-wide bucket is the ceiling's: the local rule that covers every route
    const ceiling = edgeRules(design).find((r) => r.key !== 'unsupported' && envoyCounter(r.rule) === 'local' && r.routes.length === 0);
    if (local && ceiling) {
      const b = envoyBucket(ceiling.id, filter.path, local.token_bucket, 'local filter token_bucket');
      if (b) out.push(b);
    }
    for (const d of (local?.descriptors as any[]) ?? []) {
      const id = (d?.entries as any[])?.find((e) => e?.key === RULE_DESCRIPTOR_KEY)?.value;
      if (typeof id !== 'string') continue;
      const b = envoyBucket(id, filter.path, d.token_bucket, 'local descriptor token_bucket');
      if (b) out.push(b);
    }
  }
  const service = files.find((f) => f.path === ENVOY_SERVICE_PATH);
  const sdoc = service ? readYaml(service.content) : undefined;
  for (const d of (sdoc?.descriptors as any[]) ?? []) {
    if (d?.key !== RULE_DESCRIPTOR_KEY || typeof d.value !== 'string') continue;
    const limit = (d.descriptors as any[])?.[0]?.rate_limit;
    const seconds = UNIT_SECONDS[String(limit?.unit)];
    if (!service || seconds === undefined || !(Number(limit?.requests_per_unit) > 0)) continue;
    out.push({
      ruleId: d.value,
      file: service.path,
      text: `rate limit service: ${limit.requests_per_unit} per ${limit.unit}`,
      requests: Number(limit.requests_per_unit),
      periodSeconds: seconds,
      window: true,
      burst: null,
    });
  }
  return out;
}

function kongLimits(files: readonly CodeFile[]): ShippedEdgeLimit[] {
  const file = files.find((f) => f.path === KONG_PATH);
  const doc = file ? readYaml(file.content) : undefined;
  if (!file || !doc) return [];
  const out: ShippedEdgeLimit[] = [];
  const plugins: any[] = [
    ...((doc.plugins as any[]) ?? []),
    ...((doc.services as any[]) ?? []).flatMap((s) => [
      ...((s?.plugins as any[]) ?? []),
      ...((s?.routes as any[]) ?? []).flatMap((r) => (r?.plugins as any[]) ?? []),
    ]),
  ];
  for (const p of plugins) {
    const ids = ((p?.tags as any[]) ?? []).filter((t) => typeof t === 'string' && t.startsWith('rule-')).map((t: string) => t.slice(5));
    if (p?.name === 'rate-limiting') {
      for (const [unit, seconds] of Object.entries(UNIT_SECONDS)) {
        const n = Number(p.config?.[unit]);
        if (!(n > 0)) continue;
        for (const id of ids)
          out.push({
            ruleId: id,
            file: file.path,
            text: `rate-limiting ${p.instance_name ?? ''}: ${n} per ${unit}`.replace('  ', ' '),
            requests: n,
            periodSeconds: seconds,
            window: true,
            burst: null,
          });
      }
    } else if (p?.name === 'rate-limiting-advanced') {
      const limits: any[] = p.config?.limit ?? [];
      const sizes: any[] = p.config?.window_size ?? [];
      ids.forEach((id: string, i: number) => {
        if (!(Number(limits[i]) > 0) || !(Number(sizes[i]) > 0)) return;
        out.push({
          ruleId: id,
          file: file.path,
          text: `rate-limiting-advanced: limit ${limits[i]}, window_size ${sizes[i]}`,
          requests: Number(limits[i]),
          periodSeconds: Number(sizes[i]),
          window: true,
          burst: null,
        });
      });
    }
  }
  return out;
}

function awsLimits(design: Design, files: readonly CodeFile[]): ShippedEdgeLimit[] {
  const file = files.find((f) => f.path === AWS_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file || !doc) return [];
  const out: ShippedEdgeLimit[] = [];
  for (const m of (doc.stageMethodSettings as any[]) ?? []) {
    if (typeof m?._rule !== 'string' || !(Number(m.ThrottlingRateLimit) > 0)) continue;
    out.push({
      ruleId: m._rule,
      file: file.path,
      text: `stage throttle ${m.HttpMethod} ${m.ResourcePath}: ThrottlingRateLimit ${m.ThrottlingRateLimit}, ThrottlingBurstLimit ${m.ThrottlingBurstLimit}`,
      requests: Number(m.ThrottlingRateLimit),
      periodSeconds: 1,
      window: false,
      burst: typeof m.ThrottlingBurstLimit === 'number' ? m.ThrottlingBurstLimit : null,
      atMost: true,
    });
  }
  const ids = new Set(edgeRules(design).map((r) => r.id));
  // the design's one usage plan: its own Throttle carries the rule over every endpoint, each
  // method throttle of its API stage the rule the design ships there (awsKeyPlan)
  const plan = awsKeyPlan(design.rules);
  const bucket = (ruleId: string, what: string, t: any): void => {
    if (!(Number(t?.RateLimit) > 0)) return;
    out.push({
      ruleId,
      file: file.path,
      text: `${what}: RateLimit ${t.RateLimit}, BurstLimit ${t.BurstLimit}`,
      requests: Number(t.RateLimit),
      periodSeconds: 1,
      window: false,
      burst: typeof t.BurstLimit === 'number' ? t.BurstLimit : null,
    });
  };
  for (const u of (doc.usagePlans as any[]) ?? []) {
    if (plan.planLevel !== undefined) bucket(plan.planLevel, 'usage plan Throttle (every method of the stage)', u?.Throttle);
    for (const stage of (u?.ApiStages as any[]) ?? []) {
      const throttle = stage?.Throttle;
      if (!throttle || typeof throttle !== 'object') continue;
      for (const [key, ruleId] of plan.methods) bucket(ruleId, `usage plan method throttle ${key}`, throttle[key]);
    }
  }
  for (const w of (doc.wafRateBasedRules as any[]) ?? []) {
    const metric = String(w?.VisibilityConfig?.MetricName ?? '');
    const id = [...ids].find((x) => metric === `rl_${x}`.replace(/[.~]/g, '_'));
    const s = w?.Statement?.RateBasedStatement;
    if (id === undefined || !(Number(s?.Limit) > 0) || !(Number(s?.EvaluationWindowSec) > 0)) continue;
    out.push({
      ruleId: id,
      file: file.path,
      text: `WAF rate-based rule ${w.Name}: Limit ${s.Limit}, EvaluationWindowSec ${s.EvaluationWindowSec}`,
      requests: Number(s.Limit),
      periodSeconds: Number(s.EvaluationWindowSec),
      window: true,
      burst: null,
    });
  }
  return out;
}

function cloudflareLimits(design: Design, files: readonly CodeFile[]): ShippedEdgeLimit[] {
  const file = files.find((f) => f.path === CLOUDFLARE_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file || !doc) return [];
  const ids = edgeRules(design).map((r) => r.id);
  const out: ShippedEdgeLimit[] = [];
  for (const r of (doc.rules as any[]) ?? []) {
    const id = ids.find((x) => String(r?.description ?? '').startsWith(`${x}: `));
    const l = r?.ratelimit;
    if (id === undefined || !(Number(l?.requests_per_period) > 0) || !(Number(l?.period) > 0)) continue;
    out.push({
      ruleId: id,
      file: file.path,
      text: `rate limiting rule: requests_per_period ${l.requests_per_period}, period ${l.period}`,
      requests: Number(l.requests_per_period),
      periodSeconds: Number(l.period),
      window: true,
      burst: null,
    });
  }
  return out;
}

/** Every limit the design's gateway files enforce, one entry per place a rule is configured. */
export function shippedEdgeLimits(design: Design, files: readonly CodeFile[]): ShippedEdgeLimit[] {
  return [
    ...nginxLimits(design, files),
    ...envoyLimits(design, files),
    ...kongLimits(files),
    ...awsLimits(design, files),
    ...cloudflareLimits(design, files),
  ];
}

/** Where a gateway file limits other endpoints than the document says a rule does. */
export interface ShippedScopeMismatch {
  ruleId?: string;
  file: string;
  /** What the document states ("bulk-per-key limits POST /v1/exports per API key"). */
  stated: string;
  /** What the file does instead, as a verb phrase ("has no usage plan throttle on /v1/exports/POST"). */
  shipped: string;
}

/**
 * The usage plans of gateway/aws-api-gateway.json against the design's one plan (awsKeyPlan):
 * one usage plan for the stage (a key joins one per stage), its own Throttle only for a rule
 * over every endpoint, and a method throttle on exactly the methods the document's rules name.
 */
function awsScope(design: Design, files: readonly CodeFile[]): ShippedScopeMismatch[] {
  const file = files.find((f) => f.path === AWS_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file || !doc) return [];
  const out: ShippedScopeMismatch[] = [];
  const plan = awsKeyPlan(design.rules);
  const plans: any[] = Array.isArray(doc.usagePlans) ? doc.usagePlans : [];
  const expected = plan.planLevel !== undefined || plan.methods.size > 0;
  if (plans.length > 1) {
    out.push({
      file: file.path,
      stated: `one usage plan (${awsUsagePlanName(design)}) for every rule keyed on the API key, since an API key joins one usage plan per stage`,
      shipped: `has ${plans.length} usage plans (${plans.map((u) => String(u?.UsagePlanName ?? '?')).join(', ')}), and a key can join only one of them on the stage`,
    });
  }
  if (expected && plans.length === 0) {
    out.push({
      file: file.path,
      stated: `a usage plan for the rules keyed on the API key (${[...new Set([...(plan.planLevel ? [plan.planLevel] : []), ...plan.methods.values()])].join(', ')})`,
      shipped: 'has no usage plan',
    });
    return out;
  }
  const methodsOf = (id: string): string[] => [...plan.methods].filter(([, r]) => r === id).map(([k]) => k);
  const names = (us: any[]): string => us.map((u) => String(u?.UsagePlanName ?? '?')).join(', ');
  const own = plans.filter((u) => u?.Throttle);
  if (own.length > 0 && plan.planLevel === undefined) {
    const named = [...new Set(plan.methods.values())];
    out.push({
      ...(named.length === 1 ? { ruleId: named[0] as string } : {}),
      file: file.path,
      stated: `that no rule keyed on the API key covers every endpoint${named.length > 0 ? ` (${named.map((id) => `${id} limits ${methodsOf(id).join(', ')}`).join('; ')})` : ''}`,
      shipped: `gives usage plan${own.length > 1 ? 's' : ''} ${names(own)} ${own.length > 1 ? 'Throttles of their own' : 'a Throttle of its own'}, which every method of the stage counts against`,
    });
  } else if (own.length === 0 && plan.planLevel !== undefined) {
    out.push({
      ruleId: plan.planLevel,
      file: file.path,
      stated: `that ${plan.planLevel} limits every endpoint per API key (the usage plan's own Throttle)`,
      shipped: `gives usage plan ${names(plans)} no Throttle of its own`,
    });
  }
  // the method throttles of every plan's API stages, together
  const shipped = new Set(
    plans.flatMap((u) =>
      ((Array.isArray(u?.ApiStages) ? u.ApiStages : []) as any[]).flatMap((st) =>
        st?.Throttle && typeof st.Throttle === 'object' ? Object.keys(st.Throttle) : [],
      ),
    ),
  );
  for (const id of new Set(plan.methods.values())) {
    const missing = methodsOf(id).filter((k) => !shipped.has(k));
    if (missing.length > 0)
      out.push({
        ruleId: id,
        file: file.path,
        stated: `that ${id} limits ${methodsOf(id).join(', ')} per API key (method throttles of the usage plan)`,
        shipped: `has no method throttle on ${missing.join(', ')}`,
      });
  }
  const extra = [...shipped].filter((k) => !plan.methods.has(k));
  if (extra.length > 0)
    out.push({
      file: file.path,
      stated: `no rule keyed on the API key on ${extra.join(', ')}`,
      shipped: `throttles ${extra.length > 1 ? 'them' : 'it'} per API key (method throttle${extra.length > 1 ? 's' : ''} of usage plan ${names(plans)})`,
    });
  return out;
}

/** A Rules-language string literal's text ("\\" and "\"" unescaped). */
function cfLiteral(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\(.)/g, '$1');
}

const CF_STRING = /"(?:[^"\\]|\\.)*"/.source;
/** A set of string literals, `{"a" "b"}`, its inside captured. */
const CF_SET = `\\{((?:\\s*${CF_STRING})*)\\s*\\}`;

/** An expression's parts joined by a top-level `or` (outside strings and parentheses). */
function cfClauses(expression: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && /\sor\s/.test(expression.slice(i - 1, i + 3)) && c === 'o') {
      out.push(expression.slice(start, i));
      start = i + 2;
    }
  }
  out.push(expression.slice(start));
  return out.map((x) => x.trim()).filter(Boolean);
}

/** The index of the `)` that closes the `(` at `open`, strings skipped; -1 when none does. */
function cfClosing(text: string, open: number): number {
  let depth = 0;
  let quoted = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * One clause's comparisons: its method set, each path compared with `eq`/`in` (lowercased or
 * not), each `matches` regex, and each `not (...)` inside it (the requests another endpoint
 * owns) as one term of what it leaves out.
 */
function cfClauseTerms(clause: string): string[] {
  const terms: string[] = [];
  for (;;) {
    // found outside string literals: a path may hold the words
    const not = /\bnot\s*\(/.exec(clause.replace(new RegExp(CF_STRING, 'g'), (m) => `"${'_'.repeat(m.length - 2)}"`));
    const open = not ? (not.index ?? 0) + not[0].length - 1 : -1;
    const close = open >= 0 ? cfClosing(clause, open) : -1;
    if (!not || close < 0) break;
    terms.push(`not [${cfExpressionTerms(clause.slice(open + 1, close)).join(' | ')}]`);
    clause = `${clause.slice(0, not.index)}${clause.slice(close + 1)}`;
  }
  const strings = (set: string): string[] => [...set.matchAll(new RegExp(CF_STRING, 'g'))].map((m) => cfLiteral(m[0]));
  for (const m of clause.matchAll(new RegExp(`http\\.request\\.method\\s+in\\s+${CF_SET}`, 'g')))
    terms.push(
      `method ${strings(m[1] ?? '')
        .sort()
        .join(' ')}`,
    );
  const path = /(lower\(\s*http\.request\.uri\.path\s*\)|http\.request\.uri\.path)/.source;
  const field = (m: RegExpMatchArray): string => (m[1]?.startsWith('lower') ? 'lower(path)' : 'path');
  for (const m of clause.matchAll(new RegExp(`${path}\\s+(?:eq|==)\\s+(${CF_STRING})`, 'g')))
    terms.push(`${field(m)} ${cfLiteral(m[2] ?? '""')}`);
  for (const m of clause.matchAll(new RegExp(`${path}\\s+in\\s+${CF_SET}`, 'g')))
    for (const x of strings(m[2] ?? '')) terms.push(`${field(m)} ${x}`);
  for (const m of clause.matchAll(new RegExp(`${path}\\s+(?:matches|~)\\s+(${CF_STRING})`, 'g')))
    terms.push(`regex ${cfLiteral(m[2] ?? '""')}`);
  return [...new Set(terms)].sort();
}

/**
 * What a Cloudflare expression matches, as sorted text whatever its spacing or order: `not`
 * when it matches every request but some, then one entry per `or` clause with its method set,
 * its paths (`eq`/`in`) and its regexes (`matches`); `true` for every request.
 */
export function cfExpressionTerms(expression: string): string[] {
  let e = expression.trim();
  const negated = /^not\s*\(/.test(e) && e.endsWith(')');
  if (negated) e = e.replace(/^not\s*\(/, '').slice(0, -1);
  const clauses = cfClauses(e).map((c) => {
    const inner = c.startsWith('(') && c.endsWith(')') ? c.slice(1, -1) : c;
    const terms = cfClauseTerms(inner);
    return terms.length > 0 ? terms.join(' and ') : inner;
  });
  return [...(negated ? ['not'] : []), ...clauses.sort()];
}

/**
 * The Cloudflare rules against the routes the document gives each edge rule: a rule whose
 * expression names other paths, methods or patterns than the design's (in its `eq`/`in` sets
 * or its `matches` regexes) limits other endpoints than the document says.
 */
function cloudflareScope(design: Design, files: readonly CodeFile[]): ShippedScopeMismatch[] {
  const file = files.find((f) => f.path === CLOUDFLARE_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file || !doc) return [];
  const rules = edgeRules(design).filter((r) => r.key !== 'unsupported');
  const exempt = exemptRoutes(design);
  const out: ShippedScopeMismatch[] = [];
  for (const shipped of (doc.rules as any[]) ?? []) {
    const r = rules.find((x) => String(shipped?.description ?? '').startsWith(`${x.id}: `));
    if (!r) continue;
    const expected = cfRuleExpression(r, exempt);
    const actual = String(shipped?.expression ?? '');
    const want = cfExpressionTerms(expected);
    const got = cfExpressionTerms(actual);
    if (want.join('\n') === got.join('\n')) continue;
    const routes = r.routes.length > 0 ? r.routes.map((x) => `${x.method} ${x.route}`).join(', ') : 'every request';
    const missing = want.filter((t) => !got.includes(t));
    const extra = got.filter((t) => !want.includes(t));
    out.push({
      ruleId: r.id,
      file: file.path,
      stated: `that ${r.id} limits ${routes}${r.routes.length === 0 && exempt.length > 0 ? ` but ${exempt.map((x) => `${x.method} ${x.route}`).join(', ')}` : ''}, the expression ${expected}`,
      shipped: `gives it the expression ${actual}${missing.length > 0 ? `; it lacks [${missing.join('] [')}]` : ''}${extra.length > 0 ? `; [${extra.join('] [')}] is not the design's` : ''}`,
    });
  }
  return out;
}

/** A request on one endpoint's route: its first method (GET for any), each parameter a sample segment. */
export function endpointSample(e: { method: string; route: string }): { method: string; path: string } | undefined {
  if (/\*|\{\*/.test(e.route)) return undefined;
  const path = e.route.replace(/:[A-Za-z0-9_]+\??|\{[A-Za-z0-9_]+\}/g, 'rl-sample');
  return { method: edgeMethods(e.method)?.[0] ?? 'GET', path: path === '' ? '/' : path };
}

/** A gateway regex (PCRE or RE2) in JavaScript: a leading (?i) as the i flag; undefined when JavaScript cannot read it. */
function jsRegex(source: string, insensitive = false): RegExp | undefined {
  const i = source.startsWith('(?i)');
  try {
    return new RegExp(i ? source.slice(4) : source, i || insensitive ? 'i' : '');
  } catch {
    return undefined;
  }
}

/** A request the read-back sends through the shipped files, and how it relates to the endpoint it was made for. */
interface Sample {
  method: string;
  path: string;
  /** "GET /parts/RL-SAMPLE (GET /parts/:sku, the path in upper case)". */
  label: string;
}

/** Methods tried on an endpoint's path that it does not take, the first it does not name. */
const OTHER_METHODS = ['POST', 'GET', 'PUT', 'DELETE', 'PATCH'] as const;

/**
 * The requests the read-back tries for one endpoint: its sample as written, the same path in
 * upper case, HEAD where the route takes GET, and a method the route does not take on the same
 * path. The middleware matches the first three to the endpoint and the last elsewhere.
 */
function endpointSamples(e: { method: string; route: string }): Sample[] {
  const s = endpointSample(e);
  if (!s) return [];
  const route = `${e.method} ${e.route}`;
  const methods = edgeMethods(e.method);
  const other = methods ? OTHER_METHODS.find((m) => !methods.includes(m)) : undefined;
  const upper = s.path.toUpperCase();
  return [
    { ...s, label: `${s.method} ${s.path} (${route})` },
    ...(upper !== s.path ? [{ method: s.method, path: upper, label: `${s.method} ${upper} (${route}, the path in upper case)` }] : []),
    ...(methods?.includes('HEAD') && s.method !== 'HEAD'
      ? [{ method: 'HEAD', path: s.path, label: `HEAD ${s.path} (${route}, which takes HEAD as GET)` }]
      : []),
    ...(other ? [{ method: other, path: s.path, label: `${other} ${s.path} (${route}'s path, another method)` }] : []),
  ];
}

/**
 * The edge rules that count a request as the middleware matches it (routes.ts: by method, GET
 * also HEAD, the path in any letter case, the most specific route owning it, catch-alls beside
 * it): the rules over every endpoint and those of the matched routes, none for an exempt endpoint.
 */
function middlewareCounts(design: Design): (method: string, path: string) => { rules: Set<string>; owner?: string } {
  const exempt = new Set(design.enforcement.exempt.endpoints);
  const table = new RouteTable(
    design.scope.endpoints.map((e, i) =>
      compileRoute({ method: e.method.toUpperCase(), route: e.route, endpoint: e.name, exempt: exempt.has(e.name) }, i),
    ),
    (m) => m,
  );
  const rules = edgeRules(design);
  return (method, path) => {
    const m = table.lookup(method, path);
    const owner = m.best ? { owner: `${m.best.method} ${m.best.spec.route}` } : {};
    if (m.exempt) return { rules: new Set(), ...owner };
    const matched = [...(m.best ? [m.best] : []), ...m.wildcards];
    const counted = rules.filter(
      (r) =>
        r.routes.length === 0 || r.routes.some((x) => matched.some((c) => c.method === x.method.toUpperCase() && c.spec.route === x.route)),
    );
    return { rules: new Set(counted.map((r) => r.id)), ...owner };
  };
}

/** A gateway regex matched against a whole value, as RE2 and Envoy's safe_regex do. */
function fullMatch(source: string, value: string): boolean {
  const i = source.startsWith('(?i)');
  return jsRegex(`^(?:${i ? source.slice(4) : source})$`, i)?.test(value) ?? false;
}

/** nginx: the rules whose map gives a sample a key (the map's first matching regex decides). */
function nginxCounts(design: Design, files: readonly CodeFile[]): ((method: string, path: string) => string[]) | undefined {
  const http = files.find((f) => f.path === NGINX_HTTP_PATH);
  if (!http) return undefined;
  const maps = new Map<string, { regex: RegExp | undefined; empty: boolean }[]>();
  const defaults = new Map<string, boolean>();
  for (const m of code(http.content).matchAll(/map\s+"\$request_method \$uri"\s+(\$\w+)\s*\{([^}]*)\}/g)) {
    const entries: { regex: RegExp | undefined; empty: boolean }[] = [];
    for (const line of (m[2] ?? '').split(';')) {
      const t = line.trim();
      const d = /^default\s+(.*)$/.exec(t);
      if (d) defaults.set(m[1] as string, d[1]?.trim() !== '""');
      const e = /^"~(\*?)((?:[^"\\]|\\.)*)"\s+(.*)$/.exec(t);
      if (e) entries.push({ regex: jsRegex((e[2] ?? '').replace(/\\"/g, '"'), e[1] === '*'), empty: e[3]?.trim() === '""' });
    }
    maps.set(m[1] as string, entries);
  }
  const zones = nginxZones(design);
  return (method, path) =>
    zones
      .filter(({ zone }) => {
        const entries = maps.get(`$${zone}_key`);
        if (!entries) return false;
        const hit = entries.find((x) => x.regex?.test(`${method} ${path}`));
        return hit ? !hit.empty : (defaults.get(`$${zone}_key`) ?? false);
      })
      .map((z) => z.ruleId);
}

/** Whether an Envoy header matcher (on :method or :path) fires for a sample. */
function envoyHeaderFires(h: any, method: string, path: string): boolean {
  const value = h?.name === ':path' ? path : h?.name === ':method' ? method : undefined;
  if (value === undefined) return false;
  const regex = h?.string_match?.safe_regex?.regex;
  const exact = h?.string_match?.exact ?? h?.exact_match;
  const hit = typeof regex === 'string' ? fullMatch(regex, value) : typeof exact === 'string' ? exact === value : false;
  return hit !== (h?.invert_match === true);
}

/** The first Envoy route whose match takes a sample (path, prefix or safe_regex, with its header matchers). */
function envoyRoute(routes: readonly any[], method: string, path: string): any {
  return routes.find((r) => {
    const m = r?.match;
    if (!m) return false;
    const insensitive = m.case_sensitive === false;
    const fold = (x: string): string => (insensitive ? x.toLowerCase() : x);
    const onPath =
      typeof m.prefix === 'string'
        ? fold(path).startsWith(fold(m.prefix))
        : typeof m.path === 'string'
          ? fold(path) === fold(m.path)
          : typeof m.safe_regex?.regex === 'string'
            ? fullMatch(m.safe_regex.regex, path)
            : false;
    return onPath && ((m.headers as any[]) ?? []).every((h) => envoyHeaderFires(h, method, path));
  });
}

/**
 * Envoy: the route a sample reaches decides which filters run for it (an exempt route switches
 * the local filter off and has the global one ignore the virtual host's actions); then one rule
 * id per rate_limits entry of a running filter's stage whose header matchers all fire, and the
 * ceiling (the local filter's own bucket) while the local filter runs.
 */
function envoyCounts(design: Design, files: readonly CodeFile[]): ((method: string, path: string) => string[]) | undefined {
  const filter = files.find((f) => f.path === ENVOY_FILTER_PATH);
  const doc = filter ? readYaml(filter.content) : undefined;
  const hcm = doc?.http_connection_manager;
  const hosts: any[] = hcm?.route_config?.virtual_hosts ?? [];
  if (!filter || !doc) return undefined;
  const filters: any[] = hcm?.http_filters ?? [];
  const local = filters.find((f) => f?.name === LOCAL_FILTER)?.typed_config;
  const global = filters.find((f) => f?.name === GLOBAL_FILTER)?.typed_config;
  const ceiling = edgeRules(design).find((r) => r.key !== 'unsupported' && envoyCounter(r.rule) === 'local' && r.routes.length === 0);
  const entries = hosts.flatMap((h) => (h?.rate_limits as any[]) ?? []);
  const routes = hosts.flatMap((h) => (h?.routes as any[]) ?? []);
  return (method, path) => {
    const perFilter = envoyRoute(routes, method, path)?.typed_per_filter_config ?? {};
    const localRuns = local !== undefined && Number(perFilter[LOCAL_FILTER]?.filter_enabled?.default_value?.numerator ?? 100) > 0;
    const globalRuns = global !== undefined && perFilter[GLOBAL_FILTER]?.vh_rate_limits !== 'IGNORE';
    const runs = (stage: number): boolean =>
      (localRuns && stage === Number(local?.stage ?? 0)) || (globalRuns && stage === Number(global?.stage ?? 0));
    return [
      ...entries.flatMap((e) => {
        const m = ((e?.actions as any[]) ?? []).map((a) => a?.header_value_match).find((x) => x?.descriptor_key === RULE_DESCRIPTOR_KEY);
        const g = ((e?.actions as any[]) ?? []).map((a) => a?.generic_key).find((x) => x?.descriptor_key === RULE_DESCRIPTOR_KEY);
        if (!runs(Number(e?.stage ?? 0))) return [];
        if (g) return [String(g.descriptor_value)];
        if (!m) return [];
        const fires = ((m.headers as any[]) ?? []).every((h) => envoyHeaderFires(h, method, path));
        return fires === (m.expect_match !== false) ? [String(m.descriptor_value)] : [];
      }),
      ...(ceiling && localRuns ? [ceiling.id] : []),
    ];
  };
}

/** The text an AWS WAF field to match holds for a sample, after the statement's text transformations; undefined for fields and transformations not read here. */
function wafField(st: any, method: string, path: string): string | undefined {
  const field = st?.FieldToMatch;
  let value = field?.Method !== undefined ? method : field?.UriPath !== undefined ? path : undefined;
  const transforms = ((st?.TextTransformations as any[]) ?? []).slice().sort((a, b) => Number(a?.Priority) - Number(b?.Priority));
  for (const t of transforms) {
    if (value === undefined || t?.Type === 'NONE') continue;
    if (t?.Type === 'LOWERCASE') value = asciiLower(value);
    else value = undefined;
  }
  return value;
}

/** A stage name for the samples AWS WAF sees on the default execute-api endpoint (/{stage}/...). */
const WAF_SAMPLE_STAGE = 'prod';

/** Whether an AWS WAF statement matches a request (RegexMatch and ByteMatch on the method or path, And/Or/Not); anything else does not. */
function wafMatches(st: any, method: string, path: string): boolean {
  if (!st || typeof st !== 'object') return false;
  if (st.AndStatement) return ((st.AndStatement.Statements as any[]) ?? []).every((x) => wafMatches(x, method, path));
  if (st.OrStatement) return ((st.OrStatement.Statements as any[]) ?? []).some((x) => wafMatches(x, method, path));
  if (st.NotStatement) return !wafMatches(st.NotStatement.Statement, method, path);
  if (st.RegexMatchStatement) {
    const value = wafField(st.RegexMatchStatement, method, path);
    return value !== undefined && (jsRegex(String(st.RegexMatchStatement.RegexString ?? ''))?.test(value) ?? false);
  }
  if (st.ByteMatchStatement) {
    const b = st.ByteMatchStatement;
    const value = wafField(b, method, path);
    const wanted = String(b.SearchString ?? '');
    if (value === undefined) return false;
    switch (b.PositionalConstraint) {
      case 'EXACTLY':
        return value === wanted;
      case 'STARTS_WITH':
        return value.startsWith(wanted);
      case 'ENDS_WITH':
        return value.endsWith(wanted);
      case 'CONTAINS':
        return value.includes(wanted);
      default:
        return false;
    }
  }
  return false;
}

/**
 * The names of an AWS file's WAF rate-based rules that count a request: no scope-down, or one that
 * matches it. `path` is the path as WAF sees it (on the default endpoint, with the stage in front).
 */
export function wafCountedNames(doc: any, method: string, path: string): string[] {
  return ((doc?.wafRateBasedRules as any[]) ?? [])
    .filter((r) => {
      const scope = r?.Statement?.RateBasedStatement?.ScopeDownStatement;
      return scope === undefined || wafMatches(scope, method, path);
    })
    .map((r) => String(r?.Name ?? ''));
}

/** AWS WAF: the rate-based rules whose scope-down matches a sample. */
function wafCounts(files: readonly CodeFile[]): ((method: string, path: string) => string[]) | undefined {
  const file = files.find((f) => f.path === AWS_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file || !doc) return undefined;
  return (method, path) => wafCountedNames(doc, method, path);
}

/**
 * Kong: the route a sample reaches as Kong's router picks it (kong-router.ts, a port of Kong's
 * priority), or every route tied at the top; and the route paths Kong refuses (the whole file then).
 */
function kongWinners(files: readonly CodeFile[]):
  | {
      refused: { name: string; path: string; why: string }[];
      /** Whether a route has this path and takes this method. */
      holds: (path: string, method: string) => boolean;
      select: (method: string, path: string) => { name: string; paths: string[]; methods: string[] | null }[];
    }
  | undefined {
  const file = files.find((f) => f.path === KONG_PATH);
  const doc = file ? readYaml(file.content) : undefined;
  if (!file || !doc) return undefined;
  const routes: any[] = ((doc.services as any[]) ?? [])
    .flatMap((s) => (s?.routes as any[]) ?? [])
    .filter((r) => r && typeof r === 'object');
  const refused = routes.flatMap((r) =>
    ((Array.isArray(r.paths) ? r.paths : []) as unknown[]).flatMap((p) => {
      const why = kongRouterPathError(p);
      return why ? [{ name: String(r.name ?? '?'), path: String(p), why }] : [];
    }),
  );
  return {
    refused,
    holds: (path, method) =>
      routes.some(
        (r) =>
          Array.isArray(r.paths) &&
          r.paths.includes(path) &&
          (!Array.isArray(r.methods) || r.methods.length === 0 || r.methods.includes(method)),
      ),
    select: (method, path) =>
      kongSelect(routes, { method, uri: path }).map(({ route: r }) => ({
        name: String(r?.name ?? '?'),
        paths: ((r?.paths as unknown[]) ?? []).map(String),
        methods: Array.isArray(r?.methods) && r.methods.length > 0 ? r.methods.map(String) : null,
      })),
  };
}

/**
 * Each endpoint's sample requests (endpointSamples: as written, in upper case, HEAD for GET,
 * another method) through the shipped nginx maps, Envoy routes and rate_limits, AWS WAF
 * scope-downs and Kong routes: counted under exactly the edge rules the middleware would count
 * it under (middlewareCounts), or the file says otherwise. A file that drops a method condition,
 * a case-insensitive match or an exempt route's method fails here.
 */
function ownershipScope(design: Design, files: readonly CodeFile[]): ShippedScopeMismatch[] {
  const out: ShippedScopeMismatch[] = [];
  const rules = edgeRules(design);
  // the route-scoped rules first, in matrix order, then those over every endpoint
  const order = [...rules.filter((r) => r.routes.length > 0), ...rules.filter((r) => r.routes.length === 0)].map((r) => r.id);
  const ids = new Set(order);
  const sorted = (xs: Iterable<string>): string[] => [...xs].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const expected = middlewareCounts(design);
  const seen = new Set<string>();
  const endpoints = design.scope.endpoints.filter((e) => {
    const k = `${e.method} ${e.route}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const wafId = (name: string): string | undefined =>
    [...ids].sort((a, b) => b.length - a.length).find((id) => name.startsWith(`rl-${id.replace(/[.~]/g, '_')}-`));
  const visible = new Set(rules.filter((r) => r.key !== 'unsupported').map((r) => r.id));
  // which rules each file counts: AWS WAF the per-IP ones (the stage and usage plan throttles are checked above)
  const readers: [string, ((m: string, p: string) => string[]) | undefined, Set<string>][] = [
    [NGINX_HTTP_PATH, nginxCounts(design, files), visible],
    [ENVOY_FILTER_PATH, envoyCounts(design, files), visible],
    [
      AWS_PATH,
      (() => {
        const waf = wafCounts(files);
        return waf ? (m: string, p: string) => waf(m, p).map((n) => wafId(n) ?? n) : undefined;
      })(),
      new Set(rules.filter((r) => r.key === 'ip').map((r) => r.id)),
    ],
  ];
  const kong = kongWinners(files);
  for (const r of kong?.refused ?? []) {
    out.push({
      file: KONG_PATH,
      stated: 'a Kong config that Kong loads',
      shipped: `gives route ${r.name} the path ${r.path}, which Kong refuses (${r.why}), and with it the whole file`,
    });
  }
  for (const e of endpoints) {
    for (const sample of endpointSamples(e)) {
      const { rules: want, owner } = expected(sample.method, sample.path);
      for (const [file, counts, carried] of readers) {
        if (!counts) continue;
        const owed = sorted([...want].filter((id) => carried.has(id)));
        // AWS WAF sees the stage name in front of the path on the default execute-api endpoint
        const seen =
          file === AWS_PATH
            ? [
                sample,
                {
                  ...sample,
                  path: `/${WAF_SAMPLE_STAGE}${sample.path}`,
                  label: `${sample.label} on the default endpoint, where WAF sees it under the stage (/${WAF_SAMPLE_STAGE}${sample.path})`,
                },
              ]
            : [sample];
        for (const { path, label } of seen) {
          const got = sorted(counts(sample.method, path).filter((id) => ids.has(id)));
          const extra = got.filter((id) => !want.has(id));
          const twice = got.filter((id, i) => got.indexOf(id) !== i);
          const missing = owed.filter((id) => !got.includes(id));
          if (extra.length === 0 && twice.length === 0 && missing.length === 0) continue;
          out.push({
            ruleId: (extra[0] ?? twice[0] ?? missing[0]) as string,
            file,
            stated: `that ${label} counts under ${owed.length > 0 ? owed.join(', ') : 'no edge rule of this file'}, as the middleware matches it (its method, GET also HEAD; its path in any letter case; the most specific route; none for an exempt endpoint)`,
            shipped: `counts it under ${got.length > 0 ? [...new Set(got)].join(', ') : 'none'}${twice.length > 0 ? ` (${[...new Set(twice)].join(', ')} more than once)` : ''}`,
          });
        }
      }
      if (!kong) continue;
      const winners = kong.select(sample.method, sample.path);
      const own = kongRoutePath(ownedRoute(design, e.method, e.route));
      // the endpoint's own route: its path, and its methods or none (two endpoints on one path differ in methods)
      const methods = [...(edgeMethods(e.method) ?? [])].sort().join(',');
      const mine = winners.filter((w) => w.paths.includes(own) && (w.methods === null || [...w.methods].sort().join(',') === methods));
      if (owner === `${e.method.toUpperCase()} ${e.route}`) {
        // an endpoint without a Kong route of its own goes to a route of no endpoint (the catch-all: the service's rules)
        const wrong = kong.holds(own, sample.method) ? mine.length !== 1 : winners.some((w) => w.paths.some((p) => p.startsWith('~')));
        if (winners.length > 1 || (winners.length > 0 && wrong)) {
          out.push({
            file: KONG_PATH,
            stated: `that ${sample.label} reaches the Kong route of its own endpoint, the most specific`,
            shipped:
              winners.length > 1
                ? `lets routes ${winners.map((w) => w.name).join(', ')} match it at the same priority: which one counts it is not defined`
                : `sends it to route ${winners[0]?.name}, another endpoint's, which counts it under that endpoint's rules`,
          });
        }
      } else if (mine.length > 0) {
        out.push({
          file: KONG_PATH,
          stated: `that ${sample.label} is not ${e.method} ${e.route}'s request (the middleware matches it ${owner ? `to ${owner}` : 'to no endpoint'})`,
          shipped: `sends it to route ${mine.map((w) => w.name).join(', ')}, which counts it under ${e.method} ${e.route}'s rules`,
        });
      }
    }
  }
  return out;
}

/** Every place a gateway file limits other endpoints than the document states (AWS usage plans, Cloudflare expressions). */
export function shippedEdgeScope(design: Design, files: readonly CodeFile[]): ShippedScopeMismatch[] {
  return [...awsScope(design, files), ...cloudflareScope(design, files), ...ownershipScope(design, files)];
}

/** A fail mode a gateway file states for an edge rule, in a comment, a description or a setting. */
export interface ShippedFailMode {
  ruleId: string;
  file: string;
  /** Null: the file carries the rule and states no fail mode for it. */
  failMode: 'open' | 'closed' | null;
  /** Where it says so ("comment", "fault_tolerant false", "failure_mode_deny false", "description"). */
  where: string;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The comment lines a file gives one rule: the line that starts with "# <id>: " and the comment
 * lines after it, up to a blank comment line, a line that is not a comment, or another rule's.
 */
function commentBlock(content: string, id: string, ids: readonly string[]): string {
  const lines = content.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#\\s?${escapeRe(id)}: `).test(l));
  if (start < 0) return '';
  const others = ids.filter((x) => x !== id).map((x) => new RegExp(`^#\\s?${escapeRe(x)}: `));
  const out = [lines[start] as string];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith('#') || l.trim() === '#' || others.some((re) => re.test(l))) break;
    out.push(l);
  }
  return out.join('\n');
}

/** One entry per stated mode (or one null entry when the text states none). */
function stated(ruleId: string, file: string, text: string, where: string): ShippedFailMode[] {
  const modes = [...new Set(statedFailModes(text))];
  return modes.length > 0 ? modes.map((m) => ({ ruleId, file, failMode: m, where })) : [{ ruleId, file, failMode: null, where }];
}

/**
 * What the gateway files say each edge rule they carry does when its count cannot be reached:
 * nginx's and Envoy's comments, Kong's fault_tolerant and comment, Envoy's failure_mode_deny for
 * the rules its rate limit service counts, the AWS notes and the Cloudflare rule descriptions.
 * Only rules a file carries (shippedEdgeLimits finds their numbers) are listed.
 */
export function shippedEdgeFailModes(design: Design, files: readonly CodeFile[]): ShippedFailMode[] {
  const carried = new Set(shippedEdgeLimits(design, files).map((l) => l.ruleId));
  const ids = design.rules.map((r) => r.id);
  const out: ShippedFailMode[] = [];
  const nginx = files.find((f) => f.path === NGINX_HTTP_PATH);
  if (nginx) {
    for (const { ruleId } of nginxZones(design))
      if (carried.has(ruleId)) out.push(...stated(ruleId, nginx.path, commentBlock(nginx.content, ruleId, ids), 'comment'));
  }
  const envoy = files.find((f) => f.path === ENVOY_FILTER_PATH);
  if (envoy) {
    const doc = readYaml(envoy.content);
    const global = ((doc?.http_connection_manager?.http_filters as any[]) ?? []).find((f) => f?.name === GLOBAL_FILTER)?.typed_config;
    for (const r of edgeRules(design).filter((x) => carried.has(x.id))) {
      out.push(...stated(r.id, envoy.path, commentBlock(envoy.content, r.id, ids), 'comment'));
      // the rules the rate limit service counts fail as the filter's one setting says
      if (envoyCounter(r.rule) === 'service' && global && typeof global.failure_mode_deny === 'boolean') {
        out.push({
          ruleId: r.id,
          file: envoy.path,
          failMode: global.failure_mode_deny ? 'closed' : 'open',
          where: `failure_mode_deny ${global.failure_mode_deny}`,
        });
      }
    }
  }
  const kong = files.find((f) => f.path === KONG_PATH);
  if (kong) {
    for (const id of ids.filter((x) => carried.has(x))) out.push(...stated(id, kong.path, commentBlock(kong.content, id, ids), 'comment'));
    const doc = readYaml(kong.content);
    const plugins: any[] = [
      ...((doc?.plugins as any[]) ?? []),
      ...((doc?.services as any[]) ?? []).flatMap((s) => [
        ...((s?.plugins as any[]) ?? []),
        ...((s?.routes as any[]) ?? []).flatMap((r) => (r?.plugins as any[]) ?? []),
      ]),
    ];
    for (const p of plugins) {
      if (typeof p?.config?.fault_tolerant !== 'boolean') continue;
      for (const t of ((p?.tags as any[]) ?? []).filter((x) => typeof x === 'string' && x.startsWith('rule-'))) {
        const id = (t as string).slice(5);
        if (carried.has(id))
          out.push({
            ruleId: id,
            file: kong.path,
            failMode: p.config.fault_tolerant ? 'open' : 'closed',
            where: `fault_tolerant ${p.config.fault_tolerant}`,
          });
      }
    }
  }
  const cf = files.find((f) => f.path === CLOUDFLARE_PATH);
  const cfDoc = cf ? readJson(cf.content) : undefined;
  if (cf && cfDoc) {
    for (const r of (cfDoc.rules as any[]) ?? []) {
      const description = String(r?.description ?? '');
      const id = ids.find((x) => description.startsWith(`${x}: `));
      if (id !== undefined && carried.has(id)) out.push(...stated(id, cf.path, description, 'description'));
    }
  }
  const aws = files.find((f) => f.path === AWS_PATH);
  const awsDoc = aws ? readJson(aws.content) : undefined;
  if (aws && awsDoc) {
    const notes = new Map<string, string[]>();
    const add = (id: string, text: unknown): void => {
      if (carried.has(id)) notes.set(id, [...(notes.get(id) ?? []), String(text ?? '')]);
    };
    for (const m of (awsDoc.stageMethodSettings as any[]) ?? []) if (typeof m?._rule === 'string') add(m._rule, m._note);
    for (const u of (awsDoc.usagePlans as any[]) ?? [])
      for (const [id, text] of Object.entries((u?._rules as Record<string, unknown>) ?? {})) add(id, text);
    for (const w of (awsDoc.wafRateBasedRules as any[]) ?? []) {
      const metric = String(w?.VisibilityConfig?.MetricName ?? '');
      const id = ids.find((x) => metric === `rl_${x}`.replace(/[.~]/g, '_'));
      if (id !== undefined) add(id, w?._note);
    }
    // each place the file configures a rule states its mode
    for (const [id, texts] of notes) for (const t of texts) out.push(...stated(id, aws.path, t, 'note'));
    for (const id of carried)
      if (!notes.has(id) && edgeRules(design).some((r) => r.id === id)) out.push(...stated(id, aws.path, '', 'note'));
  }
  return out;
}

/** What the Envoy file answers while its rate limit service is unreachable, read back from it. */
export interface ShippedEnvoyUnavailable {
  file: string;
  /** The global rate limit filter's failure_mode_deny: true refuses while the service is unreachable. */
  deny: boolean;
  /**
   * The local reply mapper Envoy applies to that refusal (the first whose filter matches a 503
   * flagged RLSE, as Envoy tries them in order), or null when none does.
   */
  mapper: {
    /** Its Retry-After header value; null when it adds none. */
    retryAfter: string | null;
    /** Its body as a JSON object (body_format_override.json_format), null when it has none. */
    body: Record<string, unknown> | null;
    contentType: string | null;
  } | null;
}

/** Whether an access log filter's status_code_filter matches a reply of this status. */
function matchesStatus(filter: any, status: number): boolean {
  const cmp = filter?.status_code_filter?.comparison;
  if (cmp === undefined) return false;
  const v = Number(cmp?.value?.default_value);
  switch (cmp?.op ?? 'EQ') {
    case 'EQ':
      return v === status;
    case 'GE':
      return status >= v;
    case 'LE':
      return status <= v;
    case 'NE':
      return v !== status;
    default:
      return false;
  }
}

/** Whether an access log filter of a local reply mapper matches the 503 of a failed rate limit service call. */
function matchesServiceError(filter: any): boolean {
  const flags = filter?.response_flag_filter?.flags;
  if (filter?.response_flag_filter !== undefined) return !Array.isArray(flags) || flags.length === 0 || flags.includes(RLS_ERROR_FLAG);
  return matchesStatus(filter, 503);
}

/**
 * The Envoy file's answer while the rate limit service is unreachable: whether the global filter
 * refuses then (failure_mode_deny), and what the local reply mapper that meets the refusal
 * adds. Undefined when the design ships no Envoy file with a global rate limit filter.
 */
export function shippedEnvoyUnavailable(files: readonly CodeFile[]): ShippedEnvoyUnavailable | undefined {
  const file = files.find((f) => f.path === ENVOY_FILTER_PATH);
  const doc = file ? readYaml(file.content) : undefined;
  const hcm = doc?.http_connection_manager;
  const global = ((hcm?.http_filters as any[]) ?? []).find((f) => f?.name === GLOBAL_FILTER)?.typed_config;
  if (!file || !global) return undefined;
  const m = ((hcm?.local_reply_config?.mappers as any[]) ?? []).find((x) => matchesServiceError(x?.filter));
  const header = ((m?.headers_to_add as any[]) ?? []).find((h) => String(h?.header?.key).toLowerCase() === 'retry-after');
  const body = m?.body_format_override?.json_format;
  return {
    file: file.path,
    deny: global.failure_mode_deny === true,
    mapper: m
      ? {
          retryAfter: header ? String(header.header?.value) : null,
          body: body && typeof body === 'object' && !Array.isArray(body) ? body : null,
          contentType: typeof m.body_format_override?.content_type === 'string' ? m.body_format_override.content_type : null,
        }
      : null,
  };
}

/** The body of an edge 429 as a gateway file writes it, read the way its gateway reads the file. */
export interface ShippedEdgeBody {
  file: string;
  writtenBy: EdgeBodyPlace;
  /** Where in the file, in the file's own terms ("return 429 in location @rate_limited"). */
  where: string;
  /** The body a client receives, parsed as JSON (absent when it cannot be: see unreadable). */
  body?: unknown;
  /** Why a client cannot read the body as JSON, or why the file has none there. */
  unreadable?: string;
}

/** The gateway file that writes each place's body. */
export const EDGE_BODY_FILES: Readonly<Record<EdgeBodyPlace, string>> = {
  'nginx-error-page': NGINX_SERVER_PATH,
  'envoy-local-reply': ENVOY_FILTER_PATH,
  'kong-rate-limiting-advanced': KONG_PATH,
  'kong-rate-limiting': KONG_PATH,
  'aws-throttled-response': AWS_PATH,
  'aws-waf-custom-response': AWS_PATH,
  'cloudflare-rule-response': CLOUDFLARE_PATH,
};

/** The JSON a client parses from a body's text, or why it cannot (the gateway's reading throws, or the text is not JSON). */
function bodyOf(file: string, writtenBy: EdgeBodyPlace, where: string, read: () => unknown): ShippedEdgeBody {
  try {
    return { file, writtenBy, where, body: read() };
  } catch (e) {
    return { file, writtenBy, where, unreadable: e instanceof Error ? e.message : String(e) };
  }
}

/** nginx: the return 429 of the location that error_page 429 names (the file is included inside server {}). */
function nginxBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  const file = files.find((f) => f.path === NGINX_SERVER_PATH);
  if (!file) return [];
  const place: EdgeBodyPlace = 'nginx-error-page';
  let directives: NginxDirective[];
  try {
    directives = nginxDirectives(file.content);
  } catch (e) {
    return [{ file: file.path, writtenBy: place, where: 'the file', unreadable: `nginx cannot read it: ${(e as Error).message}` }];
  }
  const page = directives.find((d) => d.name === 'error_page' && d.args.slice(0, -1).includes('429'))?.args.at(-1);
  if (page === undefined)
    return [{ file: file.path, writtenBy: place, where: 'error_page 429', unreadable: 'the file has no error_page 429' }];
  const location = directives.find((d) => d.name === 'location' && d.block && d.args.at(-1) === page);
  const ret = location?.block?.find((d) => d.name === 'return' && d.args[0] === '429');
  const where = `return 429 in location ${page}`;
  if (ret?.args[1] === undefined) return [{ file: file.path, writtenBy: place, where, unreadable: `location ${page} returns no 429 body` }];
  const text = ret.args[1];
  return [bodyOf(file.path, place, where, () => JSON.parse(nginxReturnRead(text)))];
}

/** Envoy: the local reply mapper for 429 (both rate limit filters answer through it). */
function envoyBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  const file = files.find((f) => f.path === ENVOY_FILTER_PATH);
  if (!file) return [];
  const place: EdgeBodyPlace = 'envoy-local-reply';
  const doc = readYaml(file.content);
  const mappers = (doc?.http_connection_manager?.local_reply_config?.mappers as any[]) ?? [];
  // Envoy applies the first mapper whose filter matches
  const mapper = mappers.find((m) => matchesStatus(m?.filter, 429));
  const where = 'the local reply mapper for 429';
  if (!mapper) return [{ file: file.path, writtenBy: place, where, unreadable: 'no local reply mapper matches 429' }];
  const format = mapper.body_format_override;
  if (format?.json_format !== undefined)
    return [bodyOf(file.path, place, `${where} (json_format)`, () => envoyJsonFormatRead(format.json_format))];
  const text = format?.text_format ?? format?.text_format_source?.inline_string;
  if (typeof text === 'string') return [bodyOf(file.path, place, `${where} (text_format)`, () => JSON.parse(envoyFormatRead(text)))];
  return [{ file: file.path, writtenBy: place, where, unreadable: 'the mapper sets no body format, so Envoy sends its own text' }];
}

/** Kong's default error_message for its rate limiting plugins. */
const KONG_DEFAULT_ERROR_MESSAGE = 'API rate limit exceeded';

/**
 * Kong: each rate limiting plugin's error_message, which Kong writes into its own JSON
 * ({"message": ...}; rate-limiting's kong.response.error adds the request id).
 */
function kongBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  const file = files.find((f) => f.path === KONG_PATH);
  const doc = file ? readYaml(file.content) : undefined;
  if (!file || !doc) return [];
  const plugins: any[] = [
    ...((doc.plugins as any[]) ?? []),
    ...((doc.services as any[]) ?? []).flatMap((s) => [
      ...((s?.plugins as any[]) ?? []),
      ...((s?.routes as any[]) ?? []).flatMap((r) => (r?.plugins as any[]) ?? []),
    ]),
  ];
  const out: ShippedEdgeBody[] = [];
  for (const p of plugins) {
    if (p?.name !== KONG_CEILING_PLUGIN && p?.name !== KONG_RULE_PLUGIN) continue;
    const message = p.config?.error_message ?? KONG_DEFAULT_ERROR_MESSAGE;
    out.push({
      file: file.path,
      writtenBy: p.name === KONG_CEILING_PLUGIN ? 'kong-rate-limiting-advanced' : 'kong-rate-limiting',
      where: `the error_message of plugin ${String(p.instance_name ?? p.name)}`,
      body: p.name === KONG_CEILING_PLUGIN ? { message } : { message, request_id: '<request id>' },
    });
  }
  return out;
}

/** AWS: API Gateway's THROTTLED gateway response template, and each WAF custom response body a rate-based rule blocks with. */
function awsBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  const file = files.find((f) => f.path === AWS_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file) return [];
  if (!doc)
    return (['aws-throttled-response', 'aws-waf-custom-response'] as const).map((writtenBy) => ({
      file: AWS_PATH,
      writtenBy,
      where: 'the file',
      unreadable: 'the file is not JSON',
    }));
  const out: ShippedEdgeBody[] = [];
  const throttled = ((doc.gatewayResponses as any[]) ?? []).find((g) => g?.Properties?.ResponseType === 'THROTTLED')?.Properties;
  const templates = throttled?.ResponseTemplates;
  const entries = templates && typeof templates === 'object' ? Object.entries(templates as Record<string, unknown>) : [];
  const [type, template] = entries.find(([t]) => t === 'application/json') ?? entries[0] ?? [];
  const where = `the THROTTLED gateway response${type ? ` (its ${type} template)` : ''}`;
  out.push(
    typeof template === 'string'
      ? bodyOf(file.path, 'aws-throttled-response', where, () => apiGatewayTemplateRead(template))
      : { file: file.path, writtenBy: 'aws-throttled-response', where, unreadable: 'it has no response template' },
  );
  const keys = new Set<string>();
  for (const w of (doc.wafRateBasedRules as any[]) ?? []) {
    const key = w?.Action?.Block?.CustomResponse?.CustomResponseBodyKey;
    if (typeof key === 'string') keys.add(key);
  }
  for (const key of keys) {
    const content = doc.wafCustomResponseBodies?.[key]?.Content;
    const at = `WAF custom response body ${key}`;
    out.push(
      typeof content === 'string'
        ? bodyOf(file.path, 'aws-waf-custom-response', at, () => JSON.parse(content))
        : { file: file.path, writtenBy: 'aws-waf-custom-response', where: at, unreadable: 'wafCustomResponseBodies has no Content for it' },
    );
  }
  return out;
}

/** Cloudflare: each rate limiting rule's custom response, sent as written. */
function cloudflareBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  const file = files.find((f) => f.path === CLOUDFLARE_PATH);
  const doc = file ? readJson(file.content) : undefined;
  if (!file) return [];
  if (!doc)
    return [{ file: CLOUDFLARE_PATH, writtenBy: 'cloudflare-rule-response', where: 'the file', unreadable: 'the file is not JSON' }];
  return ((doc.rules as any[]) ?? []).map((r, i) => {
    const where = `the custom response of rule ${String(r?.description ?? '').split(':')[0] || `#${i + 1}`}`;
    const content = r?.action_parameters?.response?.content;
    return typeof content === 'string'
      ? bodyOf(file.path, 'cloudflare-rule-response', where, () => JSON.parse(content))
      : { file: file.path, writtenBy: 'cloudflare-rule-response' as const, where, unreadable: 'the rule has no custom response content' };
  });
}

/**
 * The body of every edge 429 the gateway files write, read as each gateway reads its file
 * (nginx's quoting and variables, Envoy's format strings, API Gateway's template, Kong's own
 * JSON around error_message) and parsed as the client parses it.
 */
export function shippedEdgeBodies(files: readonly CodeFile[]): ShippedEdgeBody[] {
  return [...nginxBodies(files), ...envoyBodies(files), ...kongBodies(files), ...awsBodies(files), ...cloudflareBodies(files)];
}

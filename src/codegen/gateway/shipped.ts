/**
 * What the generated gateway files enforce for each edge rule, read back from the files
 * themselves (nginx directives, Envoy and Kong YAML, the AWS and Cloudflare JSON): the count,
 * the period and the burst each product is told. The checks compare these with the numbers the
 * document states, so a file that says something else than its design does not pass.
 */
import { parse as parseYaml } from 'yaml';
import { envoyCounter } from '../../design/gateway-behaviour.js';
import type { Design } from '../../design/model.js';
import { PERIOD_SECONDS } from '../../design/scope.js';
import type { CodeFile } from '../types.js';
import { AWS_PATH, CLOUDFLARE_PATH } from './cloud.js';
import { durationMs, ENVOY_FILTER_PATH, ENVOY_SERVICE_PATH, LOCAL_FILTER, RULE_DESCRIPTOR_KEY } from './envoy.js';
import { edgeRules } from './edge.js';
import { KONG_PATH } from './kong.js';
import { NGINX_HTTP_PATH, NGINX_SERVER_PATH, nginxZones } from './nginx.js';

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
    });
  }
  const ids = new Set(edgeRules(design).map((r) => r.id));
  for (const u of (doc.usagePlans as any[]) ?? []) {
    const id = [...ids].find((x) => String(u?.UsagePlanName ?? '').endsWith(`-${x}`) && String(u?.Description ?? '').startsWith(`${x}:`));
    if (id === undefined || !(Number(u?.Throttle?.RateLimit) > 0)) continue;
    out.push({
      ruleId: id,
      file: file.path,
      text: `usage plan throttle: RateLimit ${u.Throttle.RateLimit}, BurstLimit ${u.Throttle.BurstLimit}`,
      requests: Number(u.Throttle.RateLimit),
      periodSeconds: 1,
      window: false,
      burst: typeof u.Throttle.BurstLimit === 'number' ? u.Throttle.BurstLimit : null,
    });
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

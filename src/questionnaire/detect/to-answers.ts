/**
 * Detected facts -> answers defaults. Only fields the answers schema knows are mapped
 * (stack.framework, stack.language, stack.gateway, stack.store, stack.trustedProxies,
 * endpoints, identities, openapi (the document's path), existing: the limiters already in place and the nginx settings generated
 * nginx must not repeat); the informational realIpHeader fact is not.
 * For each field the first fact whose value the schema accepts wins, so pass facts in
 * precedence order (detectProject's `facts` are).
 */
import {
  Answers,
  Endpoint,
  ExistingLimiter as ExistingLimiterSchema,
  ExistingNginxDirective,
  Framework,
  Gateway,
  Identity,
  METHODS,
  OpenApiSource,
  Stack,
  Store,
  TrustedProxy,
  type AnswersInput,
  type ExistingLimiterT,
  type ExistingNginxDirectiveT,
} from '../../answers/schema.js';
import { algorithmOfKind } from '../../design/migration.js';
import { FIELDS, type ExistingLimiter, type Fact, type NginxSetting } from './types.js';

type Parser = { safeParse(value: unknown): { success: boolean; data?: unknown } };

function firstValid(facts: readonly Fact[], field: string, parse: (value: unknown) => unknown): unknown {
  for (const fact of facts) {
    if (fact.field !== field) continue;
    const value = parse(fact.value);
    if (value !== undefined) return value;
  }
  return undefined;
}

function scalar(schema: Parser): (value: unknown) => unknown {
  return (value) => {
    const r = schema.safeParse(value);
    return r.success ? r.data : undefined;
  };
}

/** Keeps the valid items of an array value (deduplicated); undefined when none are valid. */
function items(schema: Parser, key: (item: unknown) => string = (i) => JSON.stringify(i)): (value: unknown) => unknown {
  return (value) => {
    if (!Array.isArray(value)) return undefined;
    const seen = new Set<string>();
    const out: unknown[] = [];
    for (const item of value) {
      const r = schema.safeParse(item);
      if (!r.success) continue;
      const k = key(r.data);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(r.data);
    }
    return out.length ? out : undefined;
  };
}

/** What a detected limiter counts per, from its key as written and its options. */
function keyedOn(l: ExistingLimiter): ExistingLimiterT['keyedOn'] {
  const key = (l.key ?? '').toLowerCase();
  if (key) {
    if (/remote_addr|client_ip|real_ip|\bip\b|remote_address|x-forwarded-for/.test(key)) return 'ip';
    if (/consumer|credential|api.?key|authorization/.test(key)) return 'api-key';
    if (/tenant|org(?:anization)?.?id/.test(key)) return 'tenant';
    if (/user.?id|\buser\b|account.?id/.test(key)) return 'user';
    if (/service|global|route/.test(key)) return 'global';
    return 'other';
  }
  // express-rate-limit, @fastify/rate-limit and hono-rate-limiter key on the client IP unless a keyGenerator says otherwise
  if (/^(?:express-rate-limit|@fastify\/rate-limit|hono-rate-limiter|express-slow-down)$/.test(l.kind)) {
    return (l.otherOptions ?? []).some((o) => /keyGenerator/i.test(o)) ? 'other' : 'ip';
  }
  return 'other';
}

/**
 * Where a detected library limiter keeps its counts, from its options: a store or client option
 * names a shared store; without one, a library with an in-memory default (express-rate-limit's
 * MemoryStore, @fastify/rate-limit's local store, hono-rate-limiter's) counts in each instance;
 * rate-limiter-flexible by its class (RateLimiterMemory in each instance, the others in their
 * store). Undefined where the scan cannot tell: the migration reads the kind's default then.
 */
function storeOf(l: ExistingLimiter): ExistingLimiterT['store'] {
  const options = [...Object.keys(l.settings), ...(l.otherOptions ?? [])];
  if (l.kind === 'rate-limiter-flexible') {
    const cls = l.settings.class;
    if (typeof cls !== 'string') return undefined;
    return /^RateLimiterMemory$/.test(cls) ? 'in-process' : 'shared';
  }
  if (/^(?:express-rate-limit|hono-rate-limiter|@fastify\/rate-limit)$/.test(l.kind)) {
    return options.some((o) => /^(?:store|redis)$/.test(o)) ? 'shared' : 'in-process';
  }
  return undefined;
}

/** Where a detected limiter applies, as method, path and match: from 'POST /login', 'routes under /api/', 'location /api/'. */
function placeOf(
  l: ExistingLimiter,
):
  | { method?: (typeof METHODS)[number]; path?: string; match?: 'exact' | 'prefix' | 'unknown'; scope?: string; location?: boolean }
  | undefined {
  const scope = l.scope ?? '';
  if (scope.startsWith('unused')) return undefined;
  if (scope === '' || /^(?:all routes|global|main|http|server\b)/.test(scope)) return {};
  const route = /^([A-Z]+) (\/\S*)$/.exec(scope);
  if (route && (METHODS as readonly string[]).includes(route[1] as string)) {
    return { method: route[1] as (typeof METHODS)[number], path: route[2] as string, match: 'exact' };
  }
  const under = /^routes under (\/\S*)$/.exec(scope);
  if (under) return { path: under[1] as string, match: 'prefix' };
  const loc = /^location (=\s*)?(\/\S*)$/.exec(scope);
  if (loc) return { path: loc[2] as string, match: loc[1] ? 'exact' : 'prefix', location: true };
  if (scope.startsWith('location')) return { location: true, match: 'unknown', scope: scope.slice(0, 300) };
  // a route, service or consumer the scan cannot map onto paths: kept, and compared by hand
  return { match: 'unknown', scope: scope.slice(0, 300) };
}

/** The detected limiters and nginx settings as the answers' `existing` field; undefined when there are none. */
function existingFrom(facts: readonly Fact[]): AnswersInput['existing'] | undefined {
  const limiters: ExistingLimiterT[] = [];
  for (const fact of facts) {
    if (fact.field !== FIELDS.existingLimiters) continue;
    const l = fact.value as ExistingLimiter;
    if (l.limit === undefined || l.windowSeconds === undefined) continue;
    const place = placeOf(l);
    if (place === undefined) continue;
    const algorithm = l.algorithm ?? algorithmOfKind(l.kind);
    const candidate = {
      kind: l.kind,
      ...(l.name ? { name: l.name } : {}),
      source: `${fact.source}${l.line !== undefined ? `:${l.line}` : ''}`,
      ...place,
      keyedOn: keyedOn(l),
      limit: l.limit,
      windowSeconds: l.windowSeconds,
      ...(l.burst !== undefined ? { burst: l.burst } : {}),
      // in each instance or shared (the migration multiplies an in-process count by the instances)
      ...(storeOf(l) !== undefined ? { store: storeOf(l) } : {}),
      // how it counts, where the detector or the library tells (the migration compares worst cases with it)
      ...(algorithm !== undefined ? { algorithm } : {}),
    };
    const r = ExistingLimiterSchema.safeParse(candidate);
    if (r.success) limiters.push(r.data);
  }
  const nginx: ExistingNginxDirectiveT[] = [];
  for (const fact of facts) {
    if (fact.field !== FIELDS.nginxSetting) continue;
    const s = fact.value as NginxSetting;
    const r = ExistingNginxDirective.safeParse({ name: s.name, value: s.value, context: s.context, source: `${fact.source}:${s.line}` });
    if (r.success) nginx.push(r.data);
  }
  if (limiters.length === 0 && nginx.length === 0) return undefined;
  return { ...(limiters.length ? { limiters } : {}), ...(nginx.length ? { nginx } : {}) };
}

export function factsToAnswers(facts: readonly Fact[]): Partial<AnswersInput> {
  const stack: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) stack[key] = value;
  };
  set('framework', firstValid(facts, FIELDS.framework, scalar(Framework)));
  set('language', firstValid(facts, FIELDS.language, scalar(Stack.shape.language)));
  set('gateway', firstValid(facts, FIELDS.gateway, scalar(Gateway)));
  set('store', firstValid(facts, FIELDS.store, scalar(Store)));
  set('trustedProxies', firstValid(facts, FIELDS.trustedProxies, items(TrustedProxy)));

  const candidate: Record<string, unknown> = {};
  if (Object.keys(stack).length) candidate.stack = stack;
  const endpoints = firstValid(
    facts,
    FIELDS.endpoints,
    items(Endpoint, (e) => (e as { name: string }).name),
  );
  if (endpoints !== undefined) candidate.endpoints = endpoints;
  const identities = firstValid(facts, FIELDS.identities, items(Identity));
  if (identities !== undefined) candidate.identities = identities;
  const openapi = firstValid(facts, FIELDS.openapi, scalar(OpenApiSource));
  if (openapi !== undefined) candidate.openapi = openapi;
  const existing = existingFrom(facts);
  if (existing !== undefined) candidate.existing = existing;

  // Belt and braces: every part was validated above; drop any top-level key the whole schema refuses.
  for (let attempt = 0; attempt < 4; attempt++) {
    const result = Answers.safeParse(candidate);
    if (result.success) return candidate as Partial<AnswersInput>;
    for (const issue of result.error.issues) {
      const top = issue.path[0];
      if (typeof top === 'string') delete candidate[top];
    }
  }
  return {};
}

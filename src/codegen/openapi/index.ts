/**
 * The API's own contract, with the design's limits in it: an OpenAPI Overlay (1.0) that adds
 * to every operation the design limits
 *   - its 429 response: an application/problem+json body (the fields the runtime's 429s carry)
 *     and Retry-After;
 *   - the header convention's rate-limit headers on its 2xx and 4xx responses (and on the 429),
 *     unless a silent security rule applies to it: then only Retry-After, on the 429;
 *   - `x-rate-limit`: the rules that apply, the design endpoint that owns the route, and
 *     whether its responses carry rate-limit headers.
 * and, on request, the document with the overlay applied, with a Spectral ruleset for it: OWASP's
 * API rules, the rate-limit header rule off exactly where the design is silent on purpose.
 *
 * Which rules apply to an operation is decided by the runtime's own route matching
 * (runtime/middleware/routes.ts) over the routes the middleware compiles in, plus the edge
 * rules' routes: the operation's method and path template (under the first server's path)
 * are matched as a request would be, so the overlay says what the shipped code does. Header
 * names and the problem fields come from the runtime (runtime/middleware/responses.ts).
 *
 * Pure: the caller reads the document (io/openapi-source.ts bundles a split one into one).
 */
import { shownRuleOf } from '../../design/contract.js';
import type { Design } from '../../design/model.js';
import { oneLine, toYaml } from '../../escape/index.js';
import { atPointer, followRef, specBasePath, specOperations, specRoute, type SpecOperation } from '../../io/openapi-source.js';
import { HEADER_NAMES, PROBLEM_JSON, problemFields, QUOTA_EXCEEDED_HEADER } from '../../runtime/middleware/responses.js';
import { compileRoute, RouteTable, type RouteMatch } from '../../runtime/middleware/routes.js';
import type { RouteSpec } from '../../runtime/middleware/types.js';
import { TOOL_VERSION } from '../../version.js';
import { edgeProblemBody, edgeRules } from '../gateway/edge.js';
import { type CompiledDesign, compileDesign } from '../middleware/compile.js';
import type { CodeFile } from '../types.js';

export const OVERLAY_PATH = 'openapi/rate-limits.overlay.yaml';
export const MERGED_PATH = 'openapi/openapi.rate-limited.yaml';
export const SPECTRAL_PATH = 'openapi/spectral.yaml';

/** The rules of Spectral's OWASP ruleset about rate-limit headers and 429 responses (API4:2023). */
const OWASP_RATE_LIMIT_RULE = 'owasp:api4:2023-rate-limit';
const OWASP_429_RULE = 'owasp:api4:2023-rate-limit-responses-429';

/** The document the overlay is written for. */
export interface OpenApiInput {
  /** The whole document (split files bundled in, references internal only). */
  document: Record<string, unknown>;
  /** The document as the answers name it (shown in the overlay's header). */
  source: string;
  /** Also write the document with the overlay applied. */
  merged?: boolean;
  /** The document is split across files (the overlay then targets its bundled form). */
  split?: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A rule as an operation sees it. */
export interface AppliedRule {
  id: string;
  tier: string;
  layer: 'middleware' | 'edge';
  headers: 'full' | 'silent' | 'edge';
  plan: string | null;
  /** A plan quota that lets calls pass past it (the Quota-Exceeded header). */
  softQuota: boolean;
}

/** What the design does to one operation of the document. */
interface OperationLimits {
  method: string;
  /** The path template, as the document writes it. */
  path: string;
  /** The route the runtime matches (the first server's path, then the template). */
  route: string;
  /** The design endpoint whose route owns the operation's requests, if one does. */
  endpoint: string | null;
  exempt: boolean;
  rules: AppliedRule[];
  /** full: the convention's headers on 2xx and 4xx; silent: a security rule applies (Retry-After only); none: edge rules only, or no rule. */
  headers: 'full' | 'silent' | 'none';
  at: string[];
}

interface TableRule extends AppliedRule {
  routes: ReadonlySet<number>;
}

/**
 * The rules that apply to each operation of the document, by the runtime's route matching:
 * the middleware's routes and rules as compiled into design.ts, and the edge rules (whose
 * empty route list means every request but the exempt endpoints).
 */
export function operationLimits(design: Design, document: Json, compiled: CompiledDesign = compileDesign(design)): OperationLimits[] {
  const routes: RouteSpec[] = compiled.routes.map((r) => ({ method: r.method, route: r.route, endpoint: r.endpoint, exempt: r.exempt }));
  const routeIndex = (method: string, route: string): number => {
    const at = routes.findIndex((r) => r.method === method.toUpperCase() && r.route === route);
    if (at >= 0) return at;
    routes.push({ method: method.toUpperCase(), route, endpoint: null, exempt: false });
    return routes.length - 1;
  };
  const rules: TableRule[] = compiled.rules.map((r) => ({
    id: r.id,
    tier: r.tier,
    layer: 'middleware',
    headers: r.headers,
    plan: r.plan,
    softQuota: r.tier === 'quota' && r.quota !== null,
    routes: new Set(r.routes),
  }));
  for (const e of edgeRules(design)) {
    const list = e.rule.routes.length > 0 ? e.rule.routes : [{ method: 'ANY', route: '/*' }];
    rules.push({
      id: e.id,
      tier: e.rule.tier,
      layer: 'edge',
      headers: 'edge',
      plan: e.rule.plan ?? null,
      softQuota: false,
      routes: new Set(list.map((r) => routeIndex(r.method, r.route))),
    });
  }
  const table = new RouteTable<{ match: RouteMatch; rules: TableRule[] }>(routes.map(compileRoute), (match) => ({
    match,
    rules: rules.filter(
      (r) => (match.best !== null && r.routes.has(match.best.index)) || match.wildcards.some((w) => r.routes.has(w.index)),
    ),
  }));
  const base = specBasePath(document);
  return specOperations(document).map((op: SpecOperation) => {
    // the template's {param} segments match a route's parameters, never its literal segments
    const found = table.lookup(op.method.toUpperCase(), `${base}${op.path.startsWith('/') ? '' : '/'}${op.path}`);
    const exempt = found.match.exempt;
    const applied = exempt ? [] : found.rules.map(({ routes: _routes, ...rule }) => rule);
    const middleware = applied.filter((r) => r.layer === 'middleware');
    const headers = middleware.length === 0 ? 'none' : middleware.some((r) => r.headers === 'silent') ? 'silent' : 'full';
    return {
      method: op.method.toUpperCase(),
      path: op.path,
      route: specRoute(base, op.path),
      endpoint: found.match.endpoint,
      exempt,
      rules: applied,
      headers,
      at: op.at,
    };
  });
}

// ------------------------------------------------------------------ the schemas and headers

const ASCII_TEXT = '^[\\x20-\\x7E]*$';
/** JSON numbers are exact up to 2^53 - 1: the largest count or number of seconds any header or body states. */
const MAX_EXACT = 9007199254740991;

/** The component names the overlay adds (a namespace of its own, so nothing of the document is overwritten). */
const PROBLEM_SCHEMA = 'RateLimitProblem';
const HEADER_PREFIX = 'RateLimitHeader.';
const RETRY_AFTER = 'Retry-After';

/** The problem bodies a 429 of this design can carry: the runtime's, for every kind of rule, and the edge's. */
function problemSamples(design: Design): Json[] {
  const docs = design.contract.docsUrl;
  const s = { limit: 1, resetSeconds: 1, windowSeconds: 1 };
  const samples: Json[] = [
    problemFields(docs, { id: 'r', headers: 'full', errorCode: 'RATE_LIMITED' }, s, 1),
    problemFields(docs, { id: 'r', headers: 'full', errorCode: 'QUOTA_EXCEEDED' }, s, 1),
    problemFields(docs, { id: 'r', headers: 'silent', errorCode: 'RATE_LIMITED' }, s, 1),
  ];
  // a plan quota that passes calls past it refuses at its hard stop, stating both numbers
  if (design.rules.some((r) => r.tier === 'quota' && r.layer !== 'edge' && shownRuleOf(r)?.quota != null)) {
    samples.push(problemFields(docs, { id: 'r', headers: 'full', errorCode: 'QUOTA_EXCEEDED', quota: 1 }, { ...s, limit: 2 }, 1));
  }
  const edge = edgeRules(design);
  if (edge.length > 0) samples.push(edgeProblemBody(design, edge, 1));
  return samples;
}

/** Keys whose values are a closed set (every value the runtime writes is listed). */
const ENUM_KEYS = new Set(['title', 'code', 'layer']);
const URI_KEYS = new Set(['type', 'documentation']);
const ID_KEYS = new Set(['rule', 'rules', 'violated-policies']);

/** A JSON Schema for values like `samples` (objects merged, every string and number bounded). */
function schemaOf(key: string, samples: unknown[]): Json {
  const present = samples.filter((v) => v !== undefined);
  const first = present[0];
  if (Array.isArray(first)) {
    return {
      type: 'array',
      maxItems: 16,
      items: schemaOf(
        key,
        present.flatMap((v) => (Array.isArray(v) ? v : [])),
      ),
    };
  }
  if (isObject(first)) {
    const objects = present.filter(isObject);
    const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    const required = keys.filter((k) => objects.every((o) => Object.hasOwn(o, k)));
    return {
      type: 'object',
      ...(required.length > 0 ? { required } : {}),
      properties: Object.fromEntries(
        keys.map((k) => [
          k,
          schemaOf(
            k,
            objects.map((o) => o[k]),
          ),
        ]),
      ),
    };
  }
  if (typeof first === 'number') {
    if (key === 'status') return { type: 'integer', format: 'int32', minimum: 429, maximum: 429 };
    return { type: 'integer', format: 'int64', minimum: key === 'retryAfterSeconds' ? 1 : 0, maximum: MAX_EXACT };
  }
  if (ENUM_KEYS.has(key)) return { type: 'string', enum: [...new Set(present.map(String))].sort() };
  if (URI_KEYS.has(key)) return { type: 'string', format: 'uri', maxLength: 2100 };
  if (ID_KEYS.has(key)) return { type: 'string', maxLength: 80, pattern: '^[a-z0-9][a-z0-9-]*$' };
  return { type: 'string', maxLength: 500, pattern: ASCII_TEXT };
}

/** What the fields of a refusal's `limit` object mean (the ones a client must not misread). */
const LIMIT_FIELDS: Record<string, string> = {
  rule: 'The rule that refused the call (a matrix rule id).',
  quota:
    "The refusing rule's count per window: a rate rule's limit, a plan quota's calls per period. For a plan that lets calls pass past its quota, its plan quota; the refusal then came at hardStop.",
  hardStop:
    'Only when a plan that lets calls pass past its quota refuses: the count at which calls are refused (this call was refused at it), above the plan quota in quota. The rate-limit headers state this count as the limit.',
  overageAllowance: 'Only with hardStop: the calls past the plan quota that pass before the hard stop (hardStop minus quota), now used up.',
  windowSeconds: 'The length of the window or quota period, in seconds.',
};

/** The problem+json schema of a 429 of this design. */
function problemSchema(design: Design): Json {
  const schema = schemaOf('', problemSamples(design));
  const limit = (schema.properties as Json | undefined)?.limit as Json | undefined;
  const fields = limit?.properties as Record<string, Json> | undefined;
  if (limit && fields) {
    const { type, ...rest } = limit;
    for (const key of Object.keys(limit)) delete limit[key];
    Object.assign(limit, {
      description: 'What refused the call: the rule and its numbers (at the edge: the layer and its rules).',
      type,
      ...rest,
    });
    for (const [name, field] of Object.entries(fields)) {
      const meaning = LIMIT_FIELDS[name];
      if (meaning) fields[name] = { description: meaning, ...field };
    }
  }
  return {
    description: `The body of a 429 refusal (RFC 9457 problem details). See ${design.contract.docsUrl}.`,
    ...schema,
  };
}

/** The header names a response of an operation carries: the convention's, and the quota's when a quota rule counts the call. */
function headerNames(design: Design, limits: OperationLimits): string[] {
  if (limits.headers !== 'full') return [];
  const names = design.contract.headers.map((h) => h.name);
  const quota = limits.rules.some((r) => r.tier === 'quota' && r.layer === 'middleware');
  if (quota) names.push(...design.contract.quotaHeaders.map((h) => h.name).filter((n) => n !== QUOTA_EXCEEDED_HEADER));
  if (limits.rules.some((r) => r.softQuota)) names.push(QUOTA_EXCEEDED_HEADER);
  return [...new Set(names)];
}

/** The header components: every name some operation uses, with its meaning from the response contract. */
function headerComponents(design: Design, names: readonly string[]): Json {
  const convention = design.contract.convention;
  const structured = new Set<string>(convention === 'ietf-structured' ? Object.values(HEADER_NAMES[convention]) : []);
  const meanings = new Map<string, string[]>();
  for (const h of [...design.contract.headers, ...design.contract.quotaHeaders]) {
    const list = meanings.get(h.name) ?? [];
    if (h.meaning && !list.includes(h.meaning)) list.push(h.meaning);
    meanings.set(h.name, list);
  }
  const out: Json = {
    [HEADER_PREFIX + RETRY_AFTER]: {
      description: `Seconds to wait before a retry can pass. ${design.contract.retryAfter.jitterGuidance}`,
      required: true,
      schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT },
    },
  };
  for (const name of [...names].sort()) {
    const text = name === QUOTA_EXCEEDED_HEADER || structured.has(name);
    out[HEADER_PREFIX + name] = {
      description: (meanings.get(name) ?? []).join(' ') || name,
      schema: text
        ? { type: 'string', maxLength: 1024, pattern: ASCII_TEXT }
        : { type: 'integer', format: 'int64', minimum: 0, maximum: MAX_EXACT },
    };
  }
  return out;
}

// ------------------------------------------------------------------ the overlay

/** A JSONPath (RFC 9535 normalized path) of a place given by its keys. */
export function jsonPath(keys: readonly string[]): string {
  const quote = (k: string): string =>
    k
      .replace(/\\/g, '\\\\')
      .replace(/'/g, "\\'")
      .replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `$${keys.map((k) => `['${quote(k)}']`).join('')}`;
}

interface OverlayAction {
  target: string;
  description?: string;
  update?: Json;
  remove?: true;
}

interface PlannedAction {
  at: string[];
  description?: string;
  update?: Json;
  remove?: true;
}

/** The JSON pointer (`#/a/b~1c`) of a place given by its keys. */
function pointerOf(keys: readonly string[]): string {
  return `#/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/** Which responses the actions change where they are, and which references they replace by a copy. */
interface Changes {
  /** Pointers of responses given headers where they are defined. */
  inPlace: Set<string>;
  /** Pointers of places whose $ref the actions replace by a copy. */
  copied: Set<string>;
}

const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${HEADER_PREFIX}${name}` });
const MEDIA_TYPE = PROBLEM_JSON.split(';')[0] as string;

function ruleList(rules: readonly AppliedRule[]): string {
  return rules.map((r) => r.id).join(', ');
}

/** The x-rate-limit extension of an operation. */
function extensionOf(limits: OperationLimits): Json {
  return {
    ...(limits.endpoint !== null ? { endpoint: limits.endpoint } : {}),
    ...(limits.exempt ? { exempt: true } : {}),
    headers: limits.headers,
    rules: limits.rules.map((r) => ({ id: r.id, tier: r.tier, layer: r.layer, ...(r.plan !== null ? { plan: r.plan } : {}) })),
  };
}

/** Adds what a response lacks: the headers (by name), and for the 429 its problem body. */
function completeResponse(
  document: Json,
  at: string[],
  response: unknown,
  headers: readonly string[],
  body: boolean,
  description: string,
  changes: Changes,
): PlannedAction[] {
  const resolved = followRef(document, response, at);
  if (!resolved || !isObject(resolved.value)) return [];
  const value = resolved.value;
  const actions: PlannedAction[] = [];
  const isRef = isObject(response) && typeof response.$ref === 'string';
  const existing = isObject(value.headers) ? value.headers : {};
  const missing = headers.filter((h) => !Object.keys(existing).some((k) => k.toLowerCase() === h.toLowerCase()));
  const needsBody = body && !isObject(value.content);
  if (missing.length === 0 && !needsBody && !isRef) return [];
  const added: Json = Object.fromEntries(missing.map((h) => [h, headerRef(h)]));
  const content = needsBody ? { content: { [MEDIA_TYPE]: { schema: { $ref: `#/components/schemas/${PROBLEM_SCHEMA}` } } } } : {};
  if (isRef) {
    // a response given by reference may be shared with operations the rule does not cover:
    // this operation gets its own copy, with the headers added
    changes.copied.add(pointerOf(at));
    actions.push({ at: [...at, '$ref'], remove: true, description: `${description}: its own copy of the shared response` });
    const copy = structuredClone(value);
    actions.push({ at, update: { ...copy, headers: { ...existing, ...added }, ...content }, description });
  } else if (missing.length > 0 && isObject(value.headers)) {
    changes.inPlace.add(pointerOf(at));
    actions.push({ at: [...at, 'headers'], update: added, description });
    if (needsBody) actions.push({ at, update: content, description });
  } else {
    changes.inPlace.add(pointerOf(at));
    actions.push({ at, update: { ...(missing.length > 0 ? { headers: added } : {}), ...content }, description });
  }
  return actions;
}

/** Every `$ref` of the document: where it is (keys) and what it points to. */
function references(node: unknown, at: string[] = [], out: { at: string[]; ref: string }[] = []): { at: string[]; ref: string }[] {
  // responses sit a few levels down; nothing a response could share is this deep
  if (at.length > 64) return out;
  if (Array.isArray(node)) node.forEach((v, i) => references(v, [...at, String(i)], out));
  else if (isObject(node)) {
    if (typeof node.$ref === 'string') out.push({ at, ref: node.$ref });
    for (const [k, v] of Object.entries(node)) if (k !== '$ref') references(v, [...at, k], out);
  }
  return out;
}

/**
 * A response that gets headers where it is defined may be referenced from elsewhere (a bundled
 * document keeps a shared response at its first use and points the others to it): each such
 * reference that no other action replaces gets a copy of the response as it was, so only the
 * limited operation's responses change.
 */
function keepReferencesAsTheyWere(document: Json, changes: Changes): PlannedAction[] {
  const actions: PlannedAction[] = [];
  for (const { at, ref } of references(document)) {
    if (!changes.inPlace.has(ref) || changes.copied.has(pointerOf(at))) continue;
    const original = followRef(document, { $ref: ref }, at);
    if (!original || !isObject(original.value)) continue;
    const label = `${ref.slice(1)} as referenced from ${pointerOf(at).slice(1)}`;
    actions.push({ at: [...at, '$ref'], remove: true, description: `${label}: a copy without the added headers` });
    actions.push({ at, update: structuredClone(original.value), description: `${label}: a copy without the added headers` });
  }
  return actions;
}

function operationActions(design: Design, document: Json, limits: OperationLimits, changes: Changes): PlannedAction[] {
  const label = `${limits.method} ${limits.path}`;
  const operation = atPointer(document, pointerOf(limits.at))?.value;
  if (!isObject(operation)) return [];
  const actions: PlannedAction[] = [];
  // an x-rate-limit already there (an earlier merge) is replaced, not merged into
  if (Object.hasOwn(operation, 'x-rate-limit')) {
    actions.push({ at: [...limits.at, 'x-rate-limit'], remove: true, description: `${label}: replaces the earlier x-rate-limit` });
  }
  actions.push({ at: limits.at, update: { 'x-rate-limit': extensionOf(limits) }, description: `${label}: the rules that apply` });
  if (limits.exempt || limits.rules.length === 0) return actions;
  const rateHeaders = headerNames(design, limits);
  // Quota-Exceeded goes on calls admitted past a soft quota, never on a refusal
  const refusalHeaders = [RETRY_AFTER, ...rateHeaders.filter((h) => h !== QUOTA_EXCEEDED_HEADER)];
  const responsesAt = [...limits.at, 'responses'];
  const responses = isObject(operation.responses) ? operation.responses : undefined;
  const why =
    limits.headers === 'silent'
      ? `silent security rule ${ruleList(limits.rules.filter((r) => r.headers === 'silent'))}: Retry-After only`
      : limits.headers === 'none'
        ? `edge rule ${ruleList(limits.rules)}: Retry-After only`
        : `${ruleList(limits.rules)}`;
  const tooMany: Json = {
    description: `Too many requests: a rate limit of this operation refused the call (${why}). Wait at least Retry-After seconds, plus random jitter, before retrying.`,
    headers: Object.fromEntries(refusalHeaders.map((h) => [h, headerRef(h)])),
    content: { [MEDIA_TYPE]: { schema: { $ref: `#/components/schemas/${PROBLEM_SCHEMA}` } } },
  };
  if (!responses) {
    actions.push({ at: limits.at, update: { responses: { '429': tooMany } }, description: `${label}: 429 (${why})` });
    return actions;
  }
  for (const code of Object.keys(responses)) {
    if (code === '429') {
      actions.push(...completeResponse(document, [...responsesAt, code], responses[code], refusalHeaders, true, `${label} 429`, changes));
    } else if (/^[24]/.test(code) && rateHeaders.length > 0) {
      actions.push(
        ...completeResponse(
          document,
          [...responsesAt, code],
          responses[code],
          rateHeaders,
          false,
          `${label} ${code}: rate-limit headers`,
          changes,
        ),
      );
    }
  }
  if (!Object.hasOwn(responses, '429')) {
    actions.push({ at: responsesAt, update: { '429': tooMany }, description: `${label}: 429 (${why})` });
  }
  return actions;
}

/** The overlay's actions for the document's operations, in order: the components first, then each operation in document order. */
function plannedActions(design: Design, document: Json, limits: readonly OperationLimits[]): PlannedAction[] {
  const used = limits.some((l) => l.rules.length > 0 && !l.exempt);
  const names = [...new Set(limits.flatMap((l) => (l.exempt ? [] : headerNames(design, l))))];
  const actions: PlannedAction[] = [];
  if (used) {
    const schemas = { [PROBLEM_SCHEMA]: problemSchema(design) };
    const headers = headerComponents(design, names);
    const components = isObject(document.components) ? document.components : undefined;
    if (!components) {
      actions.push({ at: [], update: { components: { schemas, headers } }, description: 'The 429 body schema and the rate-limit headers' });
    } else {
      for (const [kind, value] of [
        ['schemas', schemas],
        ['headers', headers],
      ] as const) {
        const there = components[kind];
        // a component of ours already there (an earlier merge) is replaced, not merged into
        for (const name of Object.keys(value)) {
          if (isObject(there) && Object.hasOwn(there, name)) {
            actions.push({ at: ['components', kind, name], remove: true, description: `Replaces the earlier ${name}` });
          }
        }
        if (isObject(there)) actions.push({ at: ['components', kind], update: value, description: `Rate-limit ${kind}` });
        else actions.push({ at: ['components'], update: { [kind]: value }, description: `Rate-limit ${kind}` });
      }
    }
  }
  const changes: Changes = { inPlace: new Set(), copied: new Set() };
  for (const l of limits) actions.push(...operationActions(design, document, l, changes));
  actions.push(...keepReferencesAsTheyWere(document, changes));
  return actions;
}

/** The overlay document (plain data). */
export function rateLimitOverlay(design: Design, input: Pick<OpenApiInput, 'document'>): Json {
  return overlayOf(design, input.document, plannedActions(design, input.document, operationLimits(design, input.document)));
}

function overlayOf(design: Design, document: Json, actions: readonly PlannedAction[]): Json {
  const info = isObject(document.info) ? document.info : {};
  const title = typeof info.title === 'string' ? oneLine(info.title) : design.scope.projectName;
  return {
    overlay: '1.0.0',
    info: { title: `Rate limits for ${title}`, version: `${design.meta.date} (rl-design ${TOOL_VERSION})` },
    actions: actions.map(
      (a): OverlayAction => ({
        target: jsonPath(a.at),
        ...(a.description ? { description: oneLine(a.description) } : {}),
        ...(a.update ? { update: a.update } : {}),
        ...(a.remove ? { remove: true as const } : {}),
      }),
    ),
  };
}

/** Recursive merge as Overlay update applies it: objects merged key by key, anything else replaced. */
function merge(target: unknown, update: unknown): unknown {
  if (!isObject(target) || !isObject(update)) return structuredClone(update);
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(update)) out[k] = Object.hasOwn(out, k) ? merge(out[k], v) : structuredClone(v);
  return out;
}

/** The document with the overlay's actions applied (each target is one place, given by its keys). */
export function applyRateLimits(design: Design, document: Json): Json {
  return applyActions(document, plannedActions(design, document, operationLimits(design, document)));
}

function applyActions(document: Json, actions: readonly PlannedAction[]): Json {
  let root: Json = structuredClone(document);
  for (const a of actions) {
    if (a.at.length === 0) {
      if (a.update) root = merge(root, a.update) as Json;
      continue;
    }
    const parentKeys = a.at.slice(0, -1);
    const key = a.at[a.at.length - 1] as string;
    let parent: unknown = root;
    for (const k of parentKeys) parent = isObject(parent) ? parent[k] : undefined;
    if (!isObject(parent) || !Object.hasOwn(parent, key)) continue;
    if (a.remove) delete parent[key];
    else if (a.update) parent[key] = merge(parent[key], a.update);
  }
  return root;
}

/** Plain JSON (no shared objects, so the YAML has no aliases). */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * A Spectral ruleset for the merged document: the OWASP ruleset, with its rate-limit header rule
 * turned off exactly where the design sends no headers on purpose (operations a silent security
 * rule covers, limited only at the edge, or exempt), and its 429 rule off on exempt operations.
 * Spectral reports a shared response where it is defined, so those places are listed too.
 */
function spectralRuleset(design: Design, merged: Json, mergedFile: string, compiled: CompiledDesign = compileDesign(design)): Json {
  const limits = operationLimits(design, merged, compiled);
  const quiet = limits.filter((l) => l.exempt || l.headers !== 'full');
  const full = limits.filter((l) => !l.exempt && l.headers === 'full').map((l) => pointerOf([...l.at, 'responses']));
  const headerOff = new Set<string>();
  const exemptOff = new Set<string>();
  for (const l of quiet) {
    const at = [...l.at, 'responses'];
    headerOff.add(pointerOf(at));
    if (l.exempt || l.rules.length === 0) exemptOff.add(pointerOf(at));
    const responses = atPointer(merged, pointerOf(at))?.value;
    if (!isObject(responses)) continue;
    for (const [code, response] of Object.entries(responses)) {
      const target = followRef(merged, response, [...at, code]);
      const where = target ? pointerOf(target.at) : undefined;
      // a response defined elsewhere, unless it is one of a full operation (which has the headers)
      if (where && !where.startsWith(`${pointerOf(at)}/`) && !full.some((f) => where.startsWith(`${f}/`))) headerOff.add(where);
    }
  }
  // Spectral matches these against its own pointers, which percent-encode all but [A-Za-z0-9_.!~*'()/-]
  const encoded = (pointer: string): string => `#${pointer.slice(1).replace(/[^A-Za-z0-9_.!~*'()/-]/gu, (c) => encodeURIComponent(c))}`;
  const files = (set: Set<string>): string[] => [...set].sort().map((p) => `${mergedFile}${encoded(p)}`);
  const overrides: Json[] = [];
  if (headerOff.size > 0) overrides.push({ files: files(headerOff), rules: { [OWASP_RATE_LIMIT_RULE]: 'off' } });
  if (exemptOff.size > 0) overrides.push({ files: files(exemptOff), rules: { [OWASP_429_RULE]: 'off' } });
  return { extends: ['@stoplight/spectral-owasp-ruleset'], ...(overrides.length > 0 ? { overrides } : {}) };
}

/** The overlay file, and the merged document and its Spectral ruleset when asked for; nothing for a document without operations. */
export function generateOpenApi(design: Design, input: OpenApiInput, compiled: CompiledDesign = compileDesign(design)): CodeFile[] {
  const limits = operationLimits(design, input.document, compiled);
  const actions = plannedActions(design, input.document, limits);
  // an overlay has at least one action: a document without operations gets none
  if (actions.length === 0) return [];
  const overlay = overlayOf(design, input.document, actions);
  const limited = limits.filter((l) => l.rules.length > 0 && !l.exempt).length;
  // endpoints of the answers that own no operation of the document: their limits are not in it
  const owners = new Set(limits.map((l) => l.endpoint));
  const absent = design.scope.endpoints.filter((e) => !owners.has(e.name)).map((e) => `${e.name} (${e.method} ${e.route})`);
  const header = [
    `OpenAPI Overlay 1.0 for ${input.source}: the design's rate limits in the API's own contract.`,
    `Generated by rl-design ${TOOL_VERSION} on ${design.meta.date}; regenerate rather than edit.`,
    `${limited} of ${limits.length} operations limited. Each gets a 429 (problem+json, Retry-After), the rate-limit headers of its`,
    'responses (none where a silent security rule applies), and x-rate-limit naming its rules.',
    ...(input.split ? ['The document is split across files: apply this to its bundled form (every $ref to another file inlined).'] : []),
    ...(absent.length > 0 ? [`Endpoints of the answers with no operation in the document: ${absent.join(', ')}.`] : []),
  ];
  const files: CodeFile[] = [
    {
      path: OVERLAY_PATH,
      language: 'yaml',
      content: toYaml(plain(overlay), header),
      description: `OpenAPI Overlay 1.0 adding each limited operation's 429, Retry-After and rate-limit headers to ${oneLine(input.source)}`,
    },
  ];
  if (input.merged) {
    const merged = applyActions(input.document, actions);
    const mergedName = MERGED_PATH.slice(MERGED_PATH.lastIndexOf('/') + 1);
    files.push({
      path: SPECTRAL_PATH,
      language: 'yaml',
      content: toYaml(plain(spectralRuleset(design, merged, mergedName, compiled)), [
        `Spectral ruleset for ${mergedName}: OWASP's API rules, with the rate-limit header rule off exactly where this design`,
        'sends no rate-limit headers on purpose (silent security rules, limits enforced only at the edge, exempt endpoints).',
        `Run: spectral lint -r ${SPECTRAL_PATH} ${MERGED_PATH} (in the code folder, with @stoplight/spectral-owasp-ruleset installed).`,
      ]),
      description: `Spectral ruleset: the OWASP API rules over ${mergedName}, the design's deliberate silences declared`,
    });
    files.push({
      path: MERGED_PATH,
      language: 'yaml',
      content: toYaml(plain(merged), [
        `${input.source} with ${OVERLAY_PATH} applied: generated by rl-design ${TOOL_VERSION} on ${design.meta.date}.`,
      ]),
      description: `${oneLine(input.source)} with the rate-limit overlay applied`,
    });
  }
  return files;
}

/**
 * OpenAPI detector (OpenAPI 3.x and Swagger 2.0, YAML or JSON): the API's endpoints, each
 * classified from its route, the caller identities its security schemes imply, and the
 * document itself (the answers' `openapi.path`, which generate writes the rate-limit overlay
 * for).
 *
 * Files looked at: any .json/.yaml/.yml whose top level has `openapi:` or `swagger:`. Files named
 * openapi.* or swagger.* that cannot be read as such give a warning. A document split across
 * files is read whole: the files its `$ref`s name (inside the project) are bundled in.
 */
import nodePath from 'node:path';
import { type AUTH_KINDS, Endpoint, OpenApiSource, type EndpointClassT, type Endpoint as EndpointT } from '../../answers/schema.js';
import { bundleSpec, specBasePath, specOperations, specRoute, SpecReadError } from '../../io/openapi-source.js';
import { asString, basename, BIG_FILE_BYTES, isRecord, isTestPath, listAll } from './shared.js';
import { parseStructured } from '../../io/text.js';
import { FIELDS, type Fact, type ProjectFs, type Warn } from './types.js';

type AuthKind = (typeof AUTH_KINDS)[number];
type Method = EndpointT['method'];

const SIGNATURE = /(?:^|[{,])\s*["']?(?:openapi|swagger)["']?\s*:\s*["']?\d/m;

interface RouteClass {
  class: EndpointClassT;
  authKind?: AuthKind;
}

/** Probe routes: the first or last segment one of these (/healthz, /v1/status/ready); the first may also be ping or metrics. */
const HEALTH_LAST = new Set([
  'health',
  'healthz',
  'healthcheck',
  'health-check',
  'ready',
  'readyz',
  'readiness',
  'live',
  'livez',
  'liveness',
]);
const HEALTH_FIRST = new Set([...HEALTH_LAST, 'ping', 'metrics']);
const VERSION_SEG = /^(?:api|v\d+(?:\.\d+)?|rest|public|internal)$/;
/** Last segments that are token operations when the route is about auth (/auth/refresh, /oauth/revoke). */
const TOKEN_LAST = new Set(['refresh', 'refresh-token', 'introspect', 'revoke', 'authorize']);

function words(segments: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const seg of segments) {
    for (const w of seg
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/))
      if (w) out.add(w);
  }
  return out;
}

/**
 * Classifies an endpoint from its method and route (`:param` or `{param}` segments are ignored).
 * Order: health, webhook, auth (non-GET, or an OAuth authorize), export / expensive, search,
 * then read (GET, HEAD, OPTIONS) or write.
 */
export function classifyRoute(method: string, route: string): RouteClass {
  const m = method.toUpperCase();
  const segments = route
    .split('/')
    .filter((s) => s && !s.startsWith(':') && !/^\{.*\}$/.test(s))
    .map((s) => s.toLowerCase());
  const significant = segments.filter((s) => !VERSION_SEG.test(s));
  const first = significant[0] ?? '';
  const last = segments[segments.length - 1] ?? '';
  const w = words(segments);
  const has = (...xs: string[]): boolean => xs.some((x) => w.has(x));
  const readOnly = m === 'GET' || m === 'HEAD' || m === 'OPTIONS';

  if (HEALTH_FIRST.has(first) || HEALTH_LAST.has(last)) return { class: 'health' };
  if (has('webhook', 'webhooks')) return { class: 'webhook' };

  const oauth = has('oauth', 'oauth2', 'openid');
  if (!readOnly || (oauth && last === 'authorize')) {
    const auth = authKind(w, segments, last, oauth);
    if (auth) return { class: 'auth', authKind: auth };
  }

  if (has('report', 'reports', 'reporting', 'analytics', 'stats', 'statistics', 'aggregate', 'aggregates', 'aggregation')) {
    return { class: 'expensive' };
  }
  if (has('export', 'exports', 'download', 'downloads', 'bulk', 'batch')) return { class: 'export' };
  if (has('search', 'autocomplete', 'suggest', 'suggestions', 'typeahead')) return { class: 'search' };
  return { class: readOnly ? 'read' : 'write' };
}

function authKind(w: Set<string>, segments: readonly string[], last: string, oauth: boolean): AuthKind | undefined {
  const has = (...xs: string[]): boolean => xs.some((x) => w.has(x));
  const pair = (a: string, b: string): boolean => segments.some((s) => new RegExp(`(?:^|[^a-z])${a}[-_]?${b}(?:$|[^a-z])`).test(s));
  if (has('logout', 'signout') || pair('log', 'out') || pair('sign', 'out')) return undefined;
  if (has('password', 'passwords', 'passwd') && has('reset', 'forgot', 'forgotten', 'recover', 'recovery')) return 'password-reset';
  if (has('mfa', '2fa', 'otp', 'totp', 'twofactor') || pair('two', 'factor')) return 'mfa';
  if (has('signup', 'register', 'registration', 'registrations') || pair('sign', 'up')) return 'signup';
  if (has('login', 'signin', 'logon', 'authenticate') || pair('log', 'in') || pair('sign', 'in')) return 'login';
  if (last === 'session' || last === 'sessions') return 'login';
  const authContext = oauth || has('auth', 'authentication', 'token', 'tokens', 'session', 'sessions');
  if (oauth || has('token', 'tokens') || (authContext && TOKEN_LAST.has(last))) return 'token';
  if (has('password', 'passwords', 'magic', 'auth', 'authentication') || pair('verify', 'email') || pair('confirm', 'email')) {
    return 'other';
  }
  return undefined;
}

/** '/orders/{id}' -> '/orders/:id' */
export function toRoute(path: string): string {
  return specRoute('', path);
}

function identitiesOf(doc: Record<string, unknown>): { identities: string[]; detail: string[] } {
  const components = isRecord(doc.components) ? doc.components : {};
  const schemes = isRecord(components.securitySchemes)
    ? components.securitySchemes
    : isRecord(doc.securityDefinitions)
      ? doc.securityDefinitions
      : {};
  const identities: string[] = [];
  const detail: string[] = [];
  for (const [name, scheme] of Object.entries(schemes)) {
    if (!isRecord(scheme)) continue;
    const type = asString(scheme.type) ?? '';
    const httpScheme = (asString(scheme.scheme) ?? '').toLowerCase();
    let identity: string | undefined;
    let what = type;
    if (type === 'apiKey') {
      identity = 'api-key';
      what = `apiKey in ${asString(scheme.in) ?? '?'} ${asString(scheme.name) ?? ''}`.trim();
    } else if (type === 'http' || type === 'basic') {
      identity = 'user';
      what = type === 'basic' ? 'basic' : `http ${httpScheme}`;
    } else if (type === 'oauth2' || type === 'openIdConnect') {
      identity = 'user';
    }
    if (!identity) continue;
    detail.push(`${name} (${what}) -> ${identity}`);
    if (!identities.includes(identity)) identities.push(identity);
  }
  return { identities, detail };
}

/** Security requirement lists: [] or [{}] means callers need no credentials. */
function allowsAnonymous(security: unknown): boolean {
  return Array.isArray(security) && (security.length === 0 || security.some((s) => isRecord(s) && Object.keys(s).length === 0));
}

export async function detect(fs: ProjectFs, warn: Warn = () => {}): Promise<Fact[]> {
  const files = (await listAll(fs)).filter((f) => /\.(?:ya?ml|json)$/i.test(f) && !isTestPath(f));
  const facts: Fact[] = [];
  for (const file of files) {
    const named = /^(?:openapi|swagger)\.(?:ya?ml|json)$/i.test(basename(file));
    const text = await fs.read(file, named ? { maxBytes: BIG_FILE_BYTES } : undefined);
    if (text === undefined) {
      if (named) warn({ source: file, message: 'could not be read (unreadable or larger than 8 MB)' });
      continue;
    }
    if (!named && !SIGNATURE.test(text)) continue;
    const parsed = parseStructured(text, file);
    if (!parsed.ok) {
      warn({ source: file, message: `OpenAPI file is ${parsed.error}` });
      continue;
    }
    const doc = parsed.docs[0];
    if (!isRecord(doc) || (doc.openapi === undefined && doc.swagger === undefined)) {
      if (named) warn({ source: file, message: 'no top-level openapi or swagger version: not read as OpenAPI' });
      continue;
    }
    if (!isRecord(doc.paths)) {
      warn({ source: file, message: 'OpenAPI document has no paths object' });
      continue;
    }
    // the files its $refs name, bundled in (a document split across files is read whole)
    let whole: Record<string, unknown> = doc;
    let parts = 1;
    try {
      const bundled = await bundleSpec(file, (rel) => fs.read(rel, { maxBytes: BIG_FILE_BYTES }), { text, document: doc });
      whole = bundled.document;
      parts = bundled.files.length;
    } catch (e) {
      const reason = e instanceof SpecReadError ? `${e.file}: ${e.reason}` : e instanceof Error ? e.message : String(e);
      warn({ source: file, message: `a $ref could not be resolved (${reason}); read without it` });
    }
    facts.push(...specFacts(whole, file, parts));
  }
  return facts;
}

function specFacts(doc: Record<string, unknown>, file: string, parts: number): Fact[] {
  const facts: Fact[] = [];
  const version = doc.openapi !== undefined ? `OpenAPI ${String(doc.openapi)}` : `Swagger ${String(doc.swagger)}`;
  const info = isRecord(doc.info) ? doc.info : {};
  const title = asString(info.title);
  const base = specBasePath(doc);
  const globalAnonymous = doc.security === undefined || allowsAnonymous(doc.security);

  const endpoints: EndpointT[] = [];
  const names = new Set<string>();
  for (const { method, path, operation: op } of specOperations(doc)) {
    if (method === 'trace') continue;
    const route = specRoute(base, path);
    const upper = method.toUpperCase() as Method;
    const cls = classifyRoute(upper, route);
    const opId = asString(op.operationId)?.trim();
    let name = (opId || `${upper} ${route}`).slice(0, 120);
    for (let n = 2; names.has(name); n++) name = `${name.slice(0, 110)} (${n})`;
    const anonymous = cls.class === 'auth' || (op.security !== undefined ? allowsAnonymous(op.security) : globalAnonymous);
    const endpoint = Endpoint.safeParse({
      name,
      method: upper,
      route,
      class: cls.class,
      ...(cls.authKind ? { authKind: cls.authKind } : {}),
      anonymous,
    });
    if (!endpoint.success) continue;
    names.add(name);
    endpoints.push(endpoint.data);
  }
  const split = parts > 1 ? `, with ${parts - 1} referenced file${parts > 2 ? 's' : ''}` : '';
  if (endpoints.length) {
    const counts = new Map<string, number>();
    for (const e of endpoints) counts.set(e.class, (counts.get(e.class) ?? 0) + 1);
    const breakdown = [...counts].map(([c, n]) => `${c} ${n}`).join(', ');
    facts.push({
      field: FIELDS.endpoints,
      value: endpoints,
      source: file,
      detail: `${version}${title ? ` "${title}"` : ''}${split}: ${endpoints.length} operation${endpoints.length > 1 ? 's' : ''} (${breakdown})`,
    });
  }

  const { identities, detail } = identitiesOf(doc);
  if (identities.length) {
    facts.push({
      field: FIELDS.identities,
      value: identities,
      source: file,
      detail: `security schemes: ${detail.join(', ')}`,
    });
  }
  // generate writes the rate-limit overlay for OpenAPI 3.x documents
  if (doc.openapi !== undefined && /^3\./.test(String(doc.openapi))) {
    facts.push({ field: FIELDS.openapi, value: { path: file }, source: file, detail: `${version}${title ? ` "${title}"` : ''}${split}` });
  }
  return facts;
}

/**
 * The answers with the detected OpenAPI document as `openapi.path` (relative to the answers
 * file's folder, as the answers schema reads it), unless they name one already.
 */
export function withDetectedOpenApi<A extends { openapi?: { path: string } | undefined }>(
  answers: A,
  facts: readonly Fact[],
  projectRoot: string,
  answersFile: string,
): A {
  if (answers.openapi !== undefined) return answers;
  const fact = facts.find((f) => f.field === FIELDS.openapi);
  const rel = isRecord(fact?.value) ? asString(fact.value.path) : undefined;
  if (rel === undefined) return answers;
  const abs = nodePath.resolve(projectRoot, ...rel.split('/'));
  const fromAnswers = nodePath
    .relative(nodePath.dirname(nodePath.resolve(projectRoot, answersFile)), abs)
    .split(nodePath.sep)
    .join('/');
  const parsed = OpenApiSource.safeParse({ path: fromAnswers });
  return parsed.success ? { ...answers, openapi: parsed.data } : answers;
}

/**
 * Generated Node middleware: the design's inbound rules, enforced in the application.
 *
 * The code is the shipped runtime (src/runtime/middleware/), real TypeScript checked under its
 * own strict tsconfig and tested by direct import, copied verbatim into middleware/ with one
 * header line. One file is generated: middleware/design.ts, this design's data (rules, routes,
 * Lua scripts with their SHA1s, the response contract, metric names), typed by the runtime's
 * DesignData. The framework adapter (express.ts, fastify.ts, koa.ts or hono.ts) mounts
 * createLimiter(DESIGN). For a framework with no adapter of its own ("other"), none is written:
 * the code README and the document show how to call createLimiter() from it.
 *
 * User-supplied text reaches the generated TypeScript only in design.ts, and only through
 * escape.ts (string literals via JSON.stringify, comments sanitised).
 */
import { FRAMEWORK_ADAPTERS } from '../../answers/choices.js';
import { joinAnd } from '../../format.js';
import type { Design } from '../../design/model.js';
import type { DesignData, RuleSpec } from '../../runtime/middleware/types.js';
import { runtimeHeader, runtimeSource } from '../runtime-files.js';
import type { CodeFile } from '../types.js';
import { compileDesign, type CompiledDesign, type CompiledRule } from './compile.js';
import { tsComment, tsValue } from '../../escape/index.js';

export { compileDesign } from './compile.js';
export { tsComment, tsString, tsValue } from '../../escape/index.js';

export const MIDDLEWARE_DIR = 'middleware';
export const DESIGN_DATA_PATH = 'middleware/design.ts';
export const EXPRESS_PATH = 'middleware/express.ts';
export const FASTIFY_PATH = 'middleware/fastify.ts';
export const KOA_PATH = 'middleware/koa.ts';
export const HONO_PATH = 'middleware/hono.ts';

/** The runtime's framework-independent modules, in the order a reader meets them. */
export const RUNTIME_MODULES = [
  'types.ts',
  'limiter.ts',
  'evaluation.ts',
  'responses.ts',
  'routes.ts',
  'keys.ts',
  'account-name.ts',
  'strings.ts',
  'client-ip.ts',
  'calendar.ts',
  'store.ts',
  'memory-store.ts',
  'local-bucket.ts',
  'metrics.ts',
  'access.ts',
  'penalty.ts',
  'fallback.ts',
] as const;

/** What each runtime module is, for the code README and the document. */
const MODULE_DESCRIPTIONS: Record<string, string> = {
  'types.ts': 'Runtime types: DesignData (what design.ts holds), LimiterOptions, Decision',
  'limiter.ts': 'createLimiter(design, options): a request in, a decision out, every applicable rule in tier order',
  'evaluation.ts': "One request's evaluation: its store calls sent together, their replies read into the decision",
  'responses.ts': 'The rate-limit header conventions, Retry-After, problem+json bodies',
  'routes.ts': 'Route matching: which rules apply to a request path',
  'keys.ts': 'Redis keys: identity values made key-safe, key patterns, hash tags',
  'account-name.ts': "The account name an auth request tries, when identify() gives none: the body's fields, else an HTTP Basic header",
  'strings.ts':
    'Character reads for the per-request loops, fast whatever shape String.prototype is in (ioredis 6 leaves it in dictionary mode)',
  'client-ip.ts': 'Client IP from the trusted hop of X-Forwarded-For; IPv6 per network',
  'calendar.ts': 'Calendar quota periods (day, month) in an IANA time zone',
  'store.ts': 'EVALSHA with EVAL on NOSCRIPT, per-call deadlines, store failure reasons',
  'memory-store.ts': "The Lua scripts' algorithms for in-process rules",
  'local-bucket.ts': 'The optional in-process bucket in front of Redis',
  'metrics.ts': "prom-client metrics under the design's names",
  'access.ts': 'Allowlist and deny list, checked before any rule and any store call; custom identity functions',
  'penalty.ts': 'The penalty box: a caller refused again and again is blocked for a while (penalty.lua)',
  'fallback.ts': 'The in-memory fallback of fail-open rules while the store is down',
};

const ADAPTER_DESCRIPTIONS: Record<string, string> = {
  'express.ts': 'Express middleware (NestJS too, on its Express platform): app.use(rateLimit(options))',
  'fastify.ts': 'Fastify hook: registerRateLimit(app, options)',
  'koa.ts': 'Koa middleware: app.use(rateLimit(options))',
  'hono.ts': 'Hono middleware: app.use(rateLimit(options))',
};

/**
 * How a NestJS application mounts the generated adapter: NestJS runs on Express (the default
 * platform, which the design's files target) or on Fastify (generate with framework fastify).
 * Middleware that main.ts adds with app.use() runs before Nest's own body parsers (which Nest
 * registers when the application starts, in init()) and before every guard: what the design's
 * rules read from the body or from a guard's work is said where the design has such rules.
 */
export function nestjsMount(design: Design): string[] {
  const middleware = design.rules.filter((r) => r.layer === 'middleware');
  const byEndpoint = new Map(design.scope.endpoints.map((e) => [e.name, e]));
  // the auth rows keyed on the account name the body carries (an MFA step's is the account the request belongs to)
  const fromBody = middleware.filter(
    (r) => r.identity === 'username' && r.endpoints.some((n) => (byEndpoint.get(n)?.authKind ?? 'other') !== 'mfa'),
  );
  const accounts = middleware.filter(
    (r) => r.identity === 'api-key' || r.identity === 'user' || r.identity === 'tenant' || r.identity === 'session',
  );
  const fallback = design.identityFallback;
  const lines = [
    'NestJS runs on Express by default: in main.ts, after `const app = await NestFactory.create(AppModule)`, call',
    '`app.use(rateLimit(options))` from middleware/express.ts before `app.listen()`, so it runs ahead of every guard, interceptor and controller.',
  ];
  if (fromBody.length > 0)
    lines.push(
      'Nest adds its own body parsers only when the application starts (app.listen() or app.init()), after every app.use() of main.ts,',
      'so the limiter would see no `req.body`: call `app.use(express.json())` and `app.use(express.urlencoded({ extended: true }))`',
      `just before it (the account name of a form post, such as an OAuth token request, is in the urlencoded body). Without them ${joinAnd(fromBody.map((r) => r.id))}`,
      'never see an account name, and only the per-IP rows count those requests.',
    );
  if (accounts.length > 0)
    lines.push(
      "identify() runs before Nest's guards too: what a guard sets on the request (`req.user` from a Passport AuthGuard, say) is not there yet.",
      'Have identify() read and verify the API key or token itself, or read what an app.use() middleware before the limiter set. One that reads',
      `a guard's work identifies no caller: ${joinAnd(accounts.map((r) => r.id))} then count each caller by its client IP${
        accounts.some((r) => r.tier === 'quota') ? ', the quotas count nothing' : ''
      }${fallback?.defaultPlan !== undefined ? `, and every caller takes plan ${fallback.defaultPlan}'s numbers` : ''}.`,
    );
  lines.push(
    "On the Fastify platform (`@nestjs/platform-fastify`), set the answers' stack.framework to fastify, generate again, and",
    'call `registerRateLimit(app.getHttpAdapter().getInstance(), options)` from middleware/fastify.ts before `app.listen()`.',
  );
  return lines;
}

/**
 * How a JavaScript project uses the shipped TypeScript: compiled once into JavaScript beside
 * it (tsc's NodeNext output follows the project's own module type, ESM or CommonJS). `folders`
 * hold the .ts files; `adapterPath` is the adapter the project imports, or undefined (no
 * adapter for its framework: the limiter itself).
 */
export function javascriptBuild(folders: readonly string[], adapterPath: string | undefined): { command: string; entry: string } {
  const sources = folders.map((f) => `${f}/*.ts`).join(' ');
  return {
    command: `npx -p typescript tsc --outDir js --module nodenext --target es2022 --skipLibCheck ${sources}`,
    entry: `js/${(adapterPath ?? `${MIDDLEWARE_DIR}/limiter.ts`).replace(/\.ts$/, '.js')}`,
  };
}

/** The .ts files' folders among generated files, in order. */
export function typescriptFolders(paths: readonly string[]): string[] {
  return [...new Set(paths.filter((p) => p.endsWith('.ts') && p.includes('/')).map((p) => p.slice(0, p.lastIndexOf('/'))))];
}

/** The adapter written for a framework, or undefined when the runtime has none for it. */
export function adapterFor(framework: string): { file: string; path: string; description: string } | undefined {
  const file = FRAMEWORK_ADAPTERS[framework as keyof typeof FRAMEWORK_ADAPTERS] ?? null;
  return file === null
    ? undefined
    : { file, path: `${MIDDLEWARE_DIR}/${file}`, description: ADAPTER_DESCRIPTIONS[file] ?? 'Framework adapter' };
}

/** `//` comment lines; every line that carries user text has been through tsComment. */
function comment(lines: string[], indent = ''): string {
  return `${lines.map((l) => (l === '' ? `${indent}//` : `${indent}// ${l}`)).join('\n')}\n`;
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 1000) / 1000);
}

function periodText(seconds: number): string {
  if (seconds % 86400 === 0) return `${fmt(seconds / 86400)} d`;
  if (seconds % 3600 === 0) return `${fmt(seconds / 3600)} h`;
  if (seconds % 60 === 0) return `${fmt(seconds / 60)} min`;
  return `${fmt(seconds)} s`;
}

function ruleSummary(r: CompiledRule): string {
  const numbers =
    r.burst !== null
      ? `${fmt(r.limit)} per ${periodText(r.periodSeconds)}, burst ${fmt(r.burst)}`
      : r.quota !== null
        ? `quota ${fmt(r.quota)} per ${r.window === 'calendar' ? 'calendar period' : periodText(r.periodSeconds)}, refused past ${fmt(r.limit)}`
        : `${fmt(r.limit)} per ${r.window === 'calendar' ? 'calendar period' : periodText(r.periodSeconds)}`;
  const parts = [
    r.tier,
    r.script + (r.store === 'memory' ? ' (in-process)' : ''),
    numbers,
    `fail ${r.failMode}`,
    `headers ${r.headers}`,
    ...(r.plan !== null ? [`plan ${r.plan}`] : []),
    ...(r.hybrid ? ['local bucket in front'] : []),
    ...(r.field !== null ? [`field ${r.field} of the identity's hash, identity-limits`] : []),
  ];
  return tsComment(`${r.id} (${parts.join(', ')}): ${r.title}`, 300);
}

/** The runtime's view of a compiled design: exactly what design.ts exports as DESIGN. */
export function designData(c: CompiledDesign): DesignData {
  return {
    project: c.project,
    headerConvention: c.convention,
    docsUrl: c.docsUrl,
    trustedProxies: c.trustedProxies,
    defaultMode: c.defaultMode,
    storeUnavailableRetryAfterSeconds: c.storeUnavailableRetryAfter,
    quotaPeriod: c.quotaPeriod,
    hybrid: c.hybrid,
    metrics: c.metrics,
    plans: c.plans,
    defaultPlan: c.defaultPlan,
    scripts: c.scripts,
    routes: c.routes,
    rules: c.rules.map(ruleSpec),
    ...(c.access !== null ? { access: c.access } : {}),
  };
}

function ruleSpec(r: CompiledRule): RuleSpec {
  return {
    id: r.id,
    title: r.title,
    tier: r.tier,
    identity: r.identity,
    plan: r.plan,
    script: r.script,
    store: r.store,
    key: r.key,
    field: r.field,
    routes: r.routes,
    limit: r.limit,
    periodSeconds: r.periodSeconds,
    burst: r.burst,
    costDefault: r.costDefault,
    costByEndpoint: r.costByEndpoint,
    failMode: r.failMode,
    headers: r.headers,
    errorCode: r.errorCode,
    flag: r.flag,
    window: r.window,
    quota: r.quota,
    hybrid: r.hybrid,
  };
}

/** middleware/design.ts: this design's data, with a summary of what is enforced here and what is not. */
function designModule(c: CompiledDesign): string {
  const head = [
    tsComment(`Rate limiting for ${c.project}: the design's data, read by the runtime beside this file.`),
    tsComment(`Generated by rl-design ${c.toolVersion} on ${c.date} from the design's limit matrix.`),
    'Do not edit: change the answers file and generate again.',
    '',
    'Rules enforced by this middleware, in evaluation order:',
    ...(c.rules.length > 0 ? c.rules.map((r) => `  - ${ruleSummary(r)}`) : ['  (none: every rule of the design runs elsewhere)']),
  ];
  if (c.skipped.length > 0) {
    head.push('', 'Rules of the design NOT enforced here (so no rule is counted twice):');
    for (const s of c.skipped) head.push(`  - ${tsComment(`${s.id}: ${s.reason}`, 300)}`);
  }
  if (c.hybrid !== null) {
    head.push(
      '',
      `In-process bucket in front of Redis for the rules marked "local bucket in front": each instance may admit`,
      `up to ${c.hybrid.localBurst} request(s) per key before Redis has counted them; across ${c.hybrid.instances} instances at most`,
      `${c.hybrid.instances} x ${c.hybrid.localBurst} = ${c.hybrid.overAdmission} extra requests per identity.`,
    );
  }
  if (c.access?.memoryFallback) {
    head.push(
      '',
      'While the store is down, the fail-open rules count in this process (memory fallback): each instance',
      'counts on its own, so a fleet of N admits up to N x what one bucket admits per window (see the design).',
    );
  }
  const data = designData(c);
  const { rules: _rules, access, ...rest } = data;
  const body = tsValue(rest).replace(/\n\}$/, '');
  const rules = c.rules.map((r, i) => {
    const note = r.algorithmNote ? ` (${r.algorithmNote})` : '';
    return `${comment([tsComment(`${r.id}: ${r.title}${note}`, 300)], '    ')}    ${tsValue(data.rules[i], '    ')},`;
  });
  const rulesText = rules.length === 0 ? '  rules: [],' : `  rules: [\n${rules.join('\n')}\n  ],`;
  const accessText = access === undefined ? '' : `\n  access: ${tsValue(access, '  ')},`;
  return `${comment(head)}import type { DesignData } from './types.js';\n\nexport const DESIGN: DesignData = ${body}\n${rulesText}${accessText}\n};\n`;
}

/** The data module of a design. */
export function generateDesignData(design: Design, compiled: CompiledDesign = compileDesign(design)): CodeFile {
  return {
    path: DESIGN_DATA_PATH,
    language: 'typescript',
    content: designModule(compiled),
    description: "This design's rules, routes, Lua scripts (with SHA1s), response contract and metric names, as data for the runtime",
  };
}

/** The runtime's framework-independent modules, copied verbatim. */
function runtimeFiles(toolVersion: string): CodeFile[] {
  return RUNTIME_MODULES.map((file) => ({
    path: `${MIDDLEWARE_DIR}/${file}`,
    language: 'typescript' as const,
    content: runtimeHeader(toolVersion) + runtimeSource('middleware', file),
    description: MODULE_DESCRIPTIONS[file] ?? 'Rate-limit runtime module',
  }));
}

/** The middleware for a framework: runtime, data module, and the framework's adapter when the runtime has one. */
function generateMiddlewareFor(design: Design, framework: string, compiled: CompiledDesign = compileDesign(design)): CodeFile[] {
  const files = [...runtimeFiles(compiled.toolVersion), generateDesignData(design, compiled)];
  const adapter = adapterFor(framework);
  if (adapter) {
    files.push({
      path: adapter.path,
      language: 'typescript',
      content: runtimeHeader(compiled.toolVersion) + runtimeSource('middleware', adapter.file),
      description: adapter.description,
    });
  }
  return files;
}

export function generateExpressMiddleware(design: Design): CodeFile[] {
  return generateMiddlewareFor(design, 'express');
}

export function generateFastifyMiddleware(design: Design): CodeFile[] {
  return generateMiddlewareFor(design, 'fastify');
}

/**
 * The middleware files for the design's framework; none when no rule of the design runs in the
 * application (every rule at the edge or in the outbound client): no code promises what it
 * does not do.
 */
export function generateMiddleware(design: Design, compiled: CompiledDesign = compileDesign(design)): CodeFile[] {
  if (compiled.rules.length === 0) return [];
  return generateMiddlewareFor(design, design.scope.framework, compiled);
}

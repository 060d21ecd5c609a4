/**
 * package.json detector: web framework, language, Redis client, and rate limiters already in
 * use (with their settings when the source writes them as literals). Lockfiles confirm versions.
 *
 * Every package.json in the project is read, shallowest first, so a monorepo's root comes
 * before its packages.
 */
import { blankComments, escapeRe, findCallObjects, parseObjectLiteral, type ObjectLiteral } from './js-literals.js';
import { lockLookup, type LockLookup } from './lockfiles.js';
import {
  asNumber,
  basename,
  describeLimit,
  dirname,
  isRecord,
  isTestPath,
  joinPath,
  listAll,
  parseDuration,
  printable,
  toRate,
} from './shared.js';
import { lineColumn, parseStructured } from '../../io/text.js';
import { FIELDS, type ExistingLimiter, type Fact, type ProjectFs, type SettingValue, type Warn } from './types.js';

/** Framework packages, most specific first (a NestJS app also depends on express or fastify). */
const FRAMEWORK_PACKAGES: ReadonlyArray<readonly [string, string]> = [
  ['@nestjs/core', 'nestjs'],
  ['hono', 'hono'],
  ['fastify', 'fastify'],
  ['koa', 'koa'],
  ['express', 'express'],
];

/** Store clients and the stack.store they imply. */
const STORE_PACKAGES: ReadonlyArray<readonly [string, string]> = [
  ['ioredis', 'redis'],
  ['redis', 'redis'],
  ['@redis/client', 'redis'],
  ['iovalkey', 'valkey'],
  ['@valkey/valkey-glide', 'valkey'],
];

/** Rate limiting libraries. Settings are read from source for the first three. */
const LIMITER_PACKAGES = [
  'express-rate-limit',
  'rate-limiter-flexible',
  '@fastify/rate-limit',
  '@nestjs/throttler',
  'hono-rate-limiter',
  'koa-ratelimit',
  'express-slow-down',
] as const;

const SECTIONS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const;

const SOURCE_RE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const DECLARATION_RE = /\.d\.[cm]?ts$/;
const TEST_RE = /(?:^|\/)(?:test|tests|__tests__|__mocks__|spec|e2e|fixtures)\/|\.(?:test|spec)\.[cm]?[jt]sx?$/;
const MAX_SOURCE_FILES = 2000;

interface Dependency {
  name: string;
  range: string;
  section: string;
}

export async function detect(fs: ProjectFs, warn: Warn = () => {}): Promise<Fact[]> {
  const files = await listAll(fs);
  const fileSet = new Set(files);
  const manifests = files.filter((f) => basename(f) === 'package.json' && !isTestPath(f));
  const sources = new SourceCache(fs, files);
  const facts: Fact[] = [];
  const seenCalls = new Set<string>();
  const typescriptIn = new Map<string, { manifest: string; describe: string }>();
  let languageDone = false;

  for (const manifest of manifests) {
    const text = await fs.read(manifest);
    if (text === undefined) {
      warn({ source: manifest, message: 'could not be read (unreadable or larger than the size cap)' });
      continue;
    }
    const parsed = parseStructured(text, manifest);
    const pkg = parsed.ok ? parsed.docs[0] : undefined;
    if (!isRecord(pkg)) {
      warn({ source: manifest, message: parsed.ok ? 'not a JSON object' : parsed.error });
      continue;
    }
    const dir = dirname(manifest);
    const deps = dependencies(pkg);
    const lock = await lockLookup(fs, fileSet, dir, warn);
    const describe = (dep: Dependency): string => describeDependency(dep, lock);
    const ts = deps.get('typescript');
    if (ts) typescriptIn.set(dir, { manifest, describe: describe(ts) });

    const frameworks = FRAMEWORK_PACKAGES.filter(([name]) => deps.has(name));
    const first = frameworks[0];
    if (first) {
      const dep = deps.get(first[0]) as Dependency;
      const others = frameworks.slice(1).map(([name]) => name);
      facts.push({
        field: FIELDS.framework,
        value: first[1],
        source: manifest,
        detail: describe(dep) + (others.length ? ` (also: ${others.join(', ')})` : ''),
      });
    }

    if (!languageDone || first) {
      languageDone = true;
      facts.push(languageFact(manifest, dir, typescriptIn, fileSet));
    }

    const storeDeps = STORE_PACKAGES.filter(([name]) => deps.has(name));
    const needSources = storeDeps.length > 0 || LIMITER_PACKAGES.some((name) => deps.has(name));
    const pkgSources = needSources ? await sources.under(dir) : [];
    if (storeDeps.length > 0) {
      const cluster = findCluster(pkgSources);
      if (cluster) facts.push(cluster);
      for (const fact of findIncrExpire(pkgSources)) {
        // a root package.json scans its workspaces' sources too: count each counter once
        const key = `incr:${fact.source}:${(fact.value as ExistingLimiter).line ?? 0}`;
        if (seenCalls.has(key)) continue;
        seenCalls.add(key);
        facts.push(fact);
      }
      const [name, store] = storeDeps[0] as readonly [string, string];
      facts.push({ field: FIELDS.store, value: store, source: manifest, detail: describe(deps.get(name) as Dependency) });
    }

    for (const library of LIMITER_PACKAGES) {
      const dep = deps.get(library);
      if (!dep) continue;
      const version = lock(library)?.version ?? dep.range;
      const calls = findLimiterCalls(library, pkgSources, version);
      const found = calls.filter((f) => {
        // A root package.json scans its workspaces' sources too: count each call once.
        const key = `${library}:${f.source}:${(f.value as ExistingLimiter).line ?? 0}`;
        if (seenCalls.has(key)) return false;
        seenCalls.add(key);
        return true;
      });
      if (calls.length > 0) facts.push(...found);
      else {
        const value: ExistingLimiter = { kind: library, version, settings: {} };
        facts.push({
          field: FIELDS.existingLimiters,
          value,
          source: manifest,
          detail: `${describe(dep)}; no literal settings found in source`,
        });
      }
    }
  }
  return facts;
}

function dependencies(pkg: Record<string, unknown>): Map<string, Dependency> {
  const deps = new Map<string, Dependency>();
  for (const section of SECTIONS) {
    const list = pkg[section];
    if (!isRecord(list)) continue;
    for (const [name, range] of Object.entries(list)) {
      if (!deps.has(name)) deps.set(name, { name, range: typeof range === 'string' ? range : String(range), section });
    }
  }
  return deps;
}

/** 'express 5.1.0 in dependencies', plus what the lockfile says when it adds something. */
function describeDependency(dep: Dependency, lock: LockLookup): string {
  const base = `${dep.name} ${dep.range} in ${dep.section}`;
  const locked = lock(dep.name);
  if (!locked) return base;
  return locked.version === dep.range ? `${base}, locked in ${locked.file}` : `${base}, ${locked.version} in ${locked.file}`;
}

/** TypeScript when the package, or a workspace root above it, has typescript or a tsconfig.json. */
function languageFact(
  manifest: string,
  dir: string,
  typescriptIn: ReadonlyMap<string, { manifest: string; describe: string }>,
  files: ReadonlySet<string>,
): Fact {
  for (let d: string | undefined = dir; d !== undefined; d = d === '' ? undefined : dirname(d)) {
    const ts = typescriptIn.get(d);
    if (ts) return { field: FIELDS.language, value: 'TypeScript', source: ts.manifest, detail: ts.describe };
    const tsconfig = joinPath(d, 'tsconfig.json');
    if (files.has(tsconfig)) {
      return { field: FIELDS.language, value: 'TypeScript', source: tsconfig, detail: `${tsconfig} present` };
    }
  }
  return {
    field: FIELDS.language,
    value: 'JavaScript',
    source: manifest,
    detail: 'no typescript dependency and no tsconfig.json',
  };
}

interface SourceFile {
  path: string;
  /** Comments blanked out. */
  text: string;
}

/** Reads the project's JS/TS sources once (tests, declarations and fixtures excluded; capped). */
class SourceCache {
  private readonly loaded = new Map<string, SourceFile | undefined>();
  private readonly candidates: string[];

  constructor(
    private readonly fs: ProjectFs,
    files: readonly string[],
  ) {
    this.candidates = files.filter((f) => SOURCE_RE.test(f) && !DECLARATION_RE.test(f) && !TEST_RE.test(f)).slice(0, MAX_SOURCE_FILES);
  }

  async under(dir: string): Promise<SourceFile[]> {
    const out: SourceFile[] = [];
    for (const path of this.candidates) {
      if (dir !== '' && !path.startsWith(`${dir}/`)) continue;
      if (!this.loaded.has(path)) {
        const text = await this.fs.read(path);
        this.loaded.set(path, text === undefined ? undefined : { path, text: blankComments(text) });
      }
      const file = this.loaded.get(path);
      if (file) out.push(file);
    }
    return out;
  }
}

function importsOf(text: string, library: string): boolean {
  const lib = escapeRe(library);
  return new RegExp(`(?:from\\s*|require\\s*\\(\\s*|import\\s*\\(\\s*|import\\s+)['"]${lib}(?:/[^'"]*)?['"]`).test(text);
}

/**
 * Local names the module's callable export is bound to: `import rateLimit from`, `import { rateLimit as rl }`,
 * `const rl = require(...)`, `const { rateLimit } = require(...)`; namespaces as 'ns.<member>'.
 */
function localNames(text: string, library: string): string[] {
  const lib = escapeRe(library);
  const names = new Set<string>();
  // An import clause never holds quotes: this keeps the match inside one statement without semicolons.
  const imports = new RegExp(`import\\s+(?:type\\s+)?([^;'"\`]*?)\\s+from\\s*['"]${lib}['"]`, 'g');
  for (let m = imports.exec(text); m; m = imports.exec(text)) collectBindings(m[1] ?? '', names);
  const requires = new RegExp(`(?:const|let|var)\\s+([^=;]+?)\\s*=\\s*(?:await\\s+)?require\\s*\\(\\s*['"]${lib}['"]\\s*\\)`, 'g');
  for (let m = requires.exec(text); m; m = requires.exec(text)) collectBindings(m[1] ?? '', names);
  return [...names];
}

function collectBindings(clause: string, names: Set<string>): void {
  const ns = /\*\s*as\s+([A-Za-z_$][\w$]*)/.exec(clause);
  if (ns) names.add(`${ns[1]}.`);
  const braces = /\{([^}]*)\}/.exec(clause);
  if (braces) {
    for (const part of (braces[1] ?? '').split(',')) {
      const alias = /([A-Za-z_$][\w$]*)\s*(?:as|:)\s*([A-Za-z_$][\w$]*)/.exec(part);
      const plain = /^\s*(?:type\s+)?([A-Za-z_$][\w$]*)\s*$/.exec(part);
      const name = alias?.[2] ?? plain?.[1];
      if (name) names.add(name);
    }
  }
  const rest = clause.replace(/\{[^}]*\}/, '').replace(/\*\s*as\s+[A-Za-z_$][\w$]*/, '');
  const plain = /^\s*([A-Za-z_$][\w$]*)\s*,?\s*$/.exec(rest);
  if (plain?.[1]) names.add(plain[1]);
}

function calleePattern(names: readonly string[]): string {
  const alts = names.map((n) => (n.endsWith('.') ? `${escapeRe(n)}[A-Za-z_$][\\w$]*` : escapeRe(n)));
  return `(?<![\\w$.])(?:${alts.join('|')})`;
}

function findLimiterCalls(library: string, sources: readonly SourceFile[], version: string): Fact[] {
  const facts: Fact[] = [];
  for (const file of sources) {
    if (!importsOf(file.text, library)) continue;
    if (library === 'express-rate-limit' || library === 'hono-rate-limiter') {
      const fallback = library === 'express-rate-limit' ? ['rateLimit'] : ['rateLimiter'];
      const names = localNames(file.text, library);
      const callee = `${calleePattern(names.length ? names : fallback)}\\s*\\(`;
      for (const call of findCallObjects(file.text, callee)) {
        facts.push(windowLimiterFact(library, version, file, call));
      }
    } else if (library === 'rate-limiter-flexible') {
      for (const call of findCallObjects(file.text, `new\\s+(?:[\\w$]+\\.)?(?:RateLimiter[A-Z][\\w$]*)\\s*\\(`)) {
        facts.push(flexibleFact(version, file, call));
      }
    } else if (library === '@fastify/rate-limit') {
      const names = localNames(file.text, library);
      const lib = escapeRe(library);
      const plugin = [
        ...(names.length ? [calleePattern(names)] : []),
        `import\\s*\\(\\s*['"]${lib}['"]\\s*\\)`,
        `require\\s*\\(\\s*['"]${lib}['"]\\s*\\)`,
      ].join('|');
      for (const call of findCallObjects(file.text, `\\.register\\s*\\(\\s*(?:${plugin})\\s*,`)) {
        facts.push(fastifyFact(version, file, call, 'plugin'));
      }
      for (const call of findCallObjects(file.text, `(?<![\\w$.])rateLimit\\s*:`)) {
        facts.push(fastifyFact(version, file, call, 'route'));
      }
    }
  }
  return facts;
}

type Call = ReturnType<typeof findCallObjects>[number];

function windowLimiterFact(library: string, version: string, file: SourceFile, call: Call): Fact {
  const obj = parseObjectLiteral(call.objectText);
  const limit = asNumber(obj.settings.limit ?? obj.settings.max);
  const windowMs = asNumber(obj.settings.windowMs);
  const defaulted = windowMs === undefined && !obj.other.includes('windowMs');
  const windowSeconds = windowMs !== undefined ? windowMs / 1000 : defaulted ? 60 : undefined;
  return limiterFact(file, call, obj, {
    kind: library,
    version,
    ...binding(file.text, call.index),
    limit,
    windowSeconds,
    note: defaulted && limit !== undefined ? 'windowMs defaults to 60000' : undefined,
  });
}

function flexibleFact(version: string, file: SourceFile, call: Call): Fact {
  const obj = parseObjectLiteral(call.objectText);
  const cls = /(RateLimiter[A-Z][\w$]*)/.exec(call.callText)?.[1];
  const limit = asNumber(obj.settings.points);
  const duration = asNumber(obj.settings.duration);
  const defaulted = duration === undefined && !obj.other.includes('duration');
  const windowSeconds = duration !== undefined ? (duration > 0 ? duration : undefined) : defaulted ? 1 : undefined;
  return limiterFact(file, call, obj, {
    kind: 'rate-limiter-flexible',
    version,
    ...binding(file.text, call.index),
    limit,
    windowSeconds,
    extra: cls ? { class: cls } : {},
    note: defaulted && limit !== undefined ? 'duration defaults to 1 second' : undefined,
  });
}

function fastifyFact(version: string, file: SourceFile, call: Call, level: 'plugin' | 'route'): Fact {
  const obj = parseObjectLiteral(call.objectText);
  const limit = asNumber(obj.settings.max);
  const tw = obj.settings.timeWindow;
  const defaulted = tw === undefined && !obj.other.includes('timeWindow');
  const windowSeconds = typeof tw === 'number' ? tw / 1000 : typeof tw === 'string' ? parseDuration(tw) : defaulted ? 60 : undefined;
  const global = obj.settings.global;
  return limiterFact(file, call, obj, {
    kind: '@fastify/rate-limit',
    version,
    scope: level === 'route' ? fastifyRoute(file.text, call.index) : global === false ? 'routes that opt in' : 'all routes',
    limit,
    windowSeconds,
    note: defaulted && limit !== undefined ? 'timeWindow defaults to 1 minute' : undefined,
  });
}

/** The route a `config: { rateLimit: {...} }` belongs to: `app.post('/login', { config: { rateLimit` -> 'POST /login'. */
function fastifyRoute(text: string, index: number): string {
  const before = text.slice(Math.max(0, index - 300), index);
  const m = /\.(get|post|put|patch|delete|all|head|options)\s*\(\s*(['"`])([^'"`\n]+)\2\s*,\s*\{[^{}]*?config\s*:\s*\{[^{}]*$/.exec(before);
  if (!m) return 'route config';
  const method = (m[1] ?? '').toUpperCase();
  return `${method === 'ALL' ? 'ANY' : method} ${m[3] ?? ''}`;
}

interface LimiterParts {
  kind: string;
  version: string;
  name?: string;
  scope?: string;
  limit?: number;
  windowSeconds?: number;
  extra?: Record<string, SettingValue>;
  note?: string;
}

function limiterFact(file: SourceFile, call: Call, obj: ObjectLiteral, parts: LimiterParts): Fact {
  const line = lineColumn(file.text, call.index).line;
  const settings: Record<string, SettingValue> = { ...(parts.extra ?? {}), ...obj.settings };
  const other = [...obj.other, ...Object.keys(obj.nested)];
  const rate = toRate(parts.limit, parts.windowSeconds);
  const value: ExistingLimiter = {
    kind: parts.kind,
    version: parts.version,
    ...(parts.name ? { name: parts.name } : {}),
    ...(parts.scope ? { scope: parts.scope } : {}),
    ...(parts.limit !== undefined ? { limit: parts.limit } : {}),
    ...(parts.windowSeconds !== undefined ? { windowSeconds: parts.windowSeconds } : {}),
    ...(rate ? { rate } : {}),
    settings,
    ...(other.length ? { otherOptions: other } : {}),
    line,
  };
  const shown = [
    ...Object.entries(obj.settings).map(([k, v]) => `${k}: ${typeof v === 'string' ? `'${v}'` : String(v)}`),
    ...other.map((k) => `${k}: …`),
  ].join(', ');
  const callee = call.callText.endsWith('(') ? call.callText : `${call.callText} `;
  const where = `${parts.name ? `${parts.name} = ` : ''}${callee}{ ${shown} }${/[(,]$/.test(call.callText) ? ')' : ''}`;
  const tail = [
    rate ? describeLimit(parts.limit, parts.windowSeconds, rate) : 'rate not literal',
    parts.scope ? `on ${parts.scope}` : '',
    parts.note ?? '',
  ].filter(Boolean);
  return {
    field: FIELDS.existingLimiters,
    value,
    source: file.path,
    detail: `${parts.kind} ${parts.version}: ${where} at line ${line}: ${tail.join('; ')}`,
  };
}

/** The variable a limiter is assigned to and where it is mounted (`app.use(x)`, `app.post('/login', x, ...)`). */
function binding(text: string, callIndex: number): { name?: string; scope?: string } {
  const before = text.slice(Math.max(0, callIndex - 200), callIndex);
  const assigned = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:await\s+)?$/.exec(before)?.[1];
  const inlineUse = /\.use\s*\(\s*(?:(['"`])([^'"`\n]+)\1\s*,\s*)?$/.exec(before);
  if (inlineUse) return { scope: inlineUse[2] ? `routes under ${inlineUse[2]}` : 'all routes' };
  if (!assigned) return {};
  return mounted(text, assigned);
}

/** Where a named middleware is mounted: `app.use(x)`, `app.use('/api', x)`, `app.post('/login', x, ...)`. */
function mounted(text: string, assigned: string): { name: string; scope?: string } {
  const name = escapeRe(assigned);
  const used = new RegExp(`\\.use\\s*\\(\\s*(?:(['"\`])([^'"\`\\n]+)\\1\\s*,\\s*)?${name}\\s*[,)]`).exec(text);
  if (used) return { name: assigned, scope: used[2] ? `routes under ${used[2]}` : 'all routes' };
  const route = new RegExp(
    `\\.(get|post|put|patch|delete|all)\\s*\\(\\s*(['"\`])([^'"\`\\n]+)\\2\\s*,[^;]{0,1000}?(?<![\\w$.])${name}(?![\\w$])`,
  ).exec(text);
  if (route) {
    const method = (route[1] ?? '').toUpperCase();
    return { name: assigned, scope: `${method === 'ALL' ? 'ANY' : method} ${route[3] ?? ''}` };
  }
  return { name: assigned };
}

/** The Redis calls of a hand-written counter: INCR of a key, and EXPIRE or PEXPIRE setting its window. */
const INCR_RE = /(?<![\w$])(?:await\s+)?[\w$.]+\.incr\s*\(\s*([^,()]+?)\s*\)/gi;
const EXPIRE_RE = /\.(p?expire)\s*\(\s*[^,()]+?\s*,\s*([\d_]+(?:\s*\*\s*[\d_]+)*)\s*[,)]/i;

/** A whole-number literal, with _ separators and products (15 * 60) evaluated; undefined when not literal. */
function literal(text: string): number | undefined {
  const parts = text.split('*').map((p) => Number(p.trim().replace(/_/g, '')));
  return parts.every((n) => Number.isFinite(n) && n > 0) ? parts.reduce((a, b) => a * b, 1) : undefined;
}

/**
 * Rate limits written by hand on a Redis client: an INCR of a key with an EXPIRE (or PEXPIRE) of
 * it close after, a fixed window that starts at a client's first request. The window is the
 * expiry when literal; the limit is the number the count is compared with (`count > 100`, or a
 * constant holding it); the key as written tells what it counts per; the function around it
 * names it, and where that function is mounted, its routes.
 */
function findIncrExpire(sources: readonly SourceFile[]): Fact[] {
  const facts: Fact[] = [];
  for (const file of sources) {
    INCR_RE.lastIndex = 0;
    for (let m = INCR_RE.exec(file.text); m !== null; m = INCR_RE.exec(file.text)) {
      const after = file.text.slice(m.index, m.index + 800);
      const expire = EXPIRE_RE.exec(after);
      if (!expire) continue;
      const amount = literal(expire[2] ?? '');
      const windowSeconds = amount === undefined ? undefined : (expire[1] ?? '').toLowerCase() === 'pexpire' ? amount / 1000 : amount;
      const before = file.text.slice(Math.max(0, m.index - 200), m.index);
      const counter = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*$/.exec(before)?.[1];
      const limit = counter !== undefined ? comparedWith(file.text, counter, after) : undefined;
      const owner = enclosingName(file.text, m.index);
      const place: { name?: string; scope?: string } = owner !== undefined ? mounted(file.text, owner) : {};
      const line = lineColumn(file.text, m.index).line;
      const rate = toRate(limit, windowSeconds);
      const value: ExistingLimiter = {
        kind: 'redis INCR+EXPIRE',
        ...(place.name ? { name: place.name } : {}),
        ...(place.scope ? { scope: place.scope } : {}),
        key: (m[1] ?? '').slice(0, 200),
        ...(limit !== undefined ? { limit } : {}),
        ...(windowSeconds !== undefined ? { windowSeconds } : {}),
        ...(rate ? { rate } : {}),
        algorithm: 'fixed-window',
        settings: {},
        line,
      };
      facts.push({
        field: FIELDS.existingLimiters,
        value,
        source: file.path,
        detail: `a Redis counter written by hand (INCR ${printable(m[1] ?? '', 80)}, then ${(expire[1] ?? '').toUpperCase()})${place.name ? ` in ${place.name}` : ''} at line ${line}: ${rate ? describeLimit(limit, windowSeconds, rate) : 'limit or window not literal'}${place.scope ? `; on ${place.scope}` : ''}`,
      });
    }
  }
  return facts;
}

/** The limit a counter is compared with: `n > 100` (100), `n >= 100` (99), `n <= 100`, `100 < n`, or a constant holding the number. */
function comparedWith(text: string, counter: string, after: string): number | undefined {
  const c = escapeRe(counter);
  const value = '([\\d_]+|[A-Za-z_$][\\w$.]*)';
  const m =
    new RegExp(`(?<![\\w$.])${c}\\s*(>=|>|<=|<)\\s*${value}`).exec(after) ??
    new RegExp(`${value}\\s*(<=|<|>=|>)\\s*${c}(?![\\w$])`).exec(after);
  if (!m) return undefined;
  const counterFirst = new RegExp(`^${c}`).test(m[0]);
  const op = (counterFirst ? m[1] : m[2]) ?? '';
  const operand = (counterFirst ? m[2] : m[1]) ?? '';
  const constant = /^[A-Za-z_$]/.test(operand)
    ? new RegExp(`(?:const|let|var)\\s+${escapeRe(operand.split('.').pop() ?? '')}\\s*(?::[^=]+)?=\\s*([\\d_]+)\\s*[;\\n]`).exec(text)?.[1]
    : operand;
  const n = constant === undefined ? undefined : literal(constant);
  if (n === undefined) return undefined;
  // refused past the number (count > 100, 100 < count) or at it (count >= 100); allowed up to it (count <= 100) or below it (count < 100)
  const refusedAt = counterFirst ? op === '>=' : op === '<=';
  const allowedBelow = counterFirst ? op === '<' : op === '>';
  return refusedAt || allowedBelow ? n - 1 : n;
}

/** The name of the function a position sits in: `function name(`, `const name = (...) =>`, `const name = async function`. */
function enclosingName(text: string, index: number): string | undefined {
  const re =
    /(?:function\s+([A-Za-z_$][\w$]*)\s*\(|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>))/g;
  let name: string | undefined;
  for (let m = re.exec(text); m !== null && m.index < index; m = re.exec(text)) name = m[1] ?? m[2];
  return name;
}

function findCluster(sources: readonly SourceFile[]): Fact | undefined {
  for (const file of sources) {
    const io = importsOf(file.text, 'ioredis') ? /new\s+(?:[\w$]+\.)?Cluster\s*\(/.exec(file.text) : null;
    const node = importsOf(file.text, 'redis') ? /(?<![\w$])createCluster\s*\(/.exec(file.text) : null;
    const m = io ?? node;
    if (m) {
      return {
        field: FIELDS.store,
        value: 'redis-cluster',
        source: file.path,
        detail: `${io ? 'ioredis Cluster' : 'redis createCluster'} client at line ${lineColumn(file.text, m.index).line}`,
      };
    }
  }
  return undefined;
}

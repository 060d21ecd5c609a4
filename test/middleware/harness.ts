/**
 * Plumbing for the middleware suites: generate the middleware for a set of designs into a
 * scratch project in the OS temp directory (node_modules symlinked to the repo's), compile it
 * with the repo's own tsc under --strict, load the compiled modules, and mount them in real
 * Express and Fastify servers on loopback ports. useCompiledMiddleware() and useServedMiddleware()
 * do the set-up a test file shares across its tests (with a real redis-server: useRedisServer).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import Fastify from 'fastify';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { Answers, type AnswersInput } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';
import {
  EXPRESS_PATH,
  FASTIFY_PATH,
  generateExpressMiddleware,
  generateFastifyMiddleware,
  RUNTIME_MODULES,
} from '../../src/codegen/middleware/index.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { DATE, ROOT } from '../helpers/examples.js';
import { useRedisServer, type RedisForTests } from '../helpers/redis.js';

export const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export const STRICT_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    noImplicitReturns: true,
    noFallthroughCasesInSwitch: true,
    noUnusedLocals: true,
    skipLibCheck: true,
    rootDir: 'src',
    outDir: 'dist',
    types: ['node'],
  },
  include: ['src/**/*.ts'],
};

export function designFrom(input: AnswersInput): Design {
  return buildDesign(Answers.parse(input), { date: DATE });
}

/** Runtime, design data and both adapters (everything but the adapter is the same in both sets). */
export function allFiles(design: Design): CodeFile[] {
  const express = generateExpressMiddleware(design);
  const fastify = generateFastifyMiddleware(design);
  expect(fastify.filter((f) => f.path !== FASTIFY_PATH)).toEqual(express.filter((f) => f.path !== EXPRESS_PATH));
  return [...express, ...fastify.filter((f) => f.path === FASTIFY_PATH)];
}

export interface Scratch {
  readonly dir: string;
  /** tsc's output (empty when it compiled cleanly). */
  readonly output: string;
  readonly ok: boolean;
  /**
   * Compiled module of one design: 'express' | 'fastify' | 'design', or 'ratelimit-core': every
   * runtime module's exports together, the design's data under its old constant names, and
   * createLimiter bound to the design.
   */
  load<T = Record<string, unknown>>(design: string, file: string): Promise<T>;
  remove(): void;
}

/** Writes each design's files under src/<name>/ and compiles the whole scratch project once. */
export async function compileScratch(sets: Record<string, CodeFile[]>): Promise<Scratch> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-mw-'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(STRICT_TSCONFIG, null, 2));
  for (const [name, files] of Object.entries(sets)) {
    for (const f of files) {
      const target = path.join(dir, 'src', name, f.path);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, f.content);
    }
  }
  let output = '';
  let ok = true;
  try {
    const r = await promisify(execFile)(process.execPath, [TSC, '-p', path.join(dir, 'tsconfig.json')], { cwd: dir, timeout: 120_000 });
    output = r.stdout + r.stderr;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    output = `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message;
    ok = false;
  }
  return {
    dir,
    output,
    ok,
    load: async <T>(design: string, file: string) => {
      const mod = async (name: string): Promise<Record<string, unknown>> =>
        (await import(pathToFileURL(path.join(dir, 'dist', design, 'middleware', `${name}.js`)).href)) as Record<string, unknown>;
      if (file !== 'ratelimit-core') return (await mod(file)) as T;
      const data = (await mod('design')).DESIGN as Record<string, unknown>;
      const merged: Record<string, unknown> = Object.assign(
        {},
        ...(await Promise.all(RUNTIME_MODULES.map((m) => mod(m.replace(/\.ts$/, ''))))),
      );
      const create = merged.createLimiter as (d: unknown, o: unknown) => unknown;
      return {
        ...merged,
        DESIGN: data,
        PROJECT: data.project,
        DOCS_URL: data.docsUrl,
        PLANS: data.plans,
        SCRIPTS: data.scripts,
        ROUTES: data.routes,
        RULES: data.rules,
        HEADER_CONVENTION: data.headerConvention,
        QUOTA_PERIOD: data.quotaPeriod,
        createLimiter: (options: unknown) => create(data, options),
      } as T;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

export type Framework = 'express' | 'fastify';

/** The options the generated limiter takes (the parts the tests use). */
export interface TestOptions {
  redis?: unknown;
  identify?: (req: { headers: Record<string, string | string[] | undefined> }) => Record<string, string | undefined>;
  mode?: (ruleId: string, flag: string | null) => string | undefined;
  defaultMode?: string;
  trustedProxies?: string[];
  keyPrefix?: string;
  timeoutMs?: number;
  registry?: Registry | null;
  hybrid?: boolean;
  onStoreError?: (error: unknown, ruleIds: readonly string[]) => void;
  /** The custom identity functions a design may require (options.identities). */
  identities?: Record<string, (req: { headers: Record<string, string | string[] | undefined> }) => string | undefined>;
}

/** The tenant from the test header, for designs that take the tenant from a function of the application's own. */
export const TENANT_FROM_HEADER: NonNullable<TestOptions['identities']> = {
  tenant: (req) => {
    const v = req.headers['x-test-tenant'];
    return typeof v === 'string' ? v : undefined;
  },
};

export interface Served {
  readonly url: string;
  readonly registry: Registry;
  readonly limiter: { close(): void; clientIp(remote: string | undefined, xff: string | undefined): string };
  close(): Promise<void>;
}

/** The routes of the test designs, all answering 200 {"ok":true}. */
export const ROUTES: { method: 'GET' | 'POST'; path: string }[] = [
  { method: 'GET', path: '/v1/items' },
  { method: 'GET', path: '/v1/items/:id' },
  { method: 'POST', path: '/v1/exports' },
  { method: 'POST', path: '/v1/login' },
  { method: 'GET', path: '/v1/public' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/v1/orders' },
];

/** Identity from test headers: x-test-key (an API key id the app "verified"), x-test-tenant, x-test-plan. */
export function testIdentify(req: { headers: Record<string, string | string[] | undefined> }): Record<string, string | undefined> {
  const h = (name: string): string | undefined => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : undefined;
  };
  return { apiKey: h('x-test-key'), tenantId: h('x-test-tenant'), plan: h('x-test-plan') };
}

type Mod = Record<string, (...args: never[]) => unknown>;

export async function serve(framework: Framework, mod: Mod, options: TestOptions): Promise<Served> {
  const registry = options.registry ?? new Registry();
  // a generous store timeout by default: on a loaded CI machine a stalled event loop must not
  // turn a scenario into a fail-open one (the outage scenarios set short timeouts themselves)
  const opts = { identify: testIdentify, defaultMode: 'enforce', timeoutMs: 2000, ...options, registry };
  if (framework === 'express') {
    const app = express();
    app.use(express.json());
    const mw = (mod.rateLimit as unknown as (o: unknown) => express.RequestHandler & { limiter: Served['limiter'] })(opts);
    app.use(mw);
    for (const r of ROUTES) {
      const handler = (_req: express.Request, res: express.Response): void => {
        res.json({ ok: true });
      };
      if (r.method === 'GET') app.get(r.path, handler);
      else app.post(r.path, handler);
    }
    const server = await new Promise<import('node:http').Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const port = (server.address() as AddressInfo).port;
    return {
      url: `http://127.0.0.1:${port}`,
      registry,
      limiter: mw.limiter,
      close: async () => {
        mw.limiter.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  const app = Fastify();
  const limiter = (mod.registerRateLimit as unknown as (a: unknown, o: unknown) => Served['limiter'])(app, opts);
  for (const r of ROUTES) {
    app.route({ method: r.method, url: r.path, handler: async () => ({ ok: true }) });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    registry,
    limiter,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

export interface Hit {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | null;
}

export async function hit(
  base: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Hit> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Value of a counter (summed over series whose labels contain `labels`). */
export async function counter(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const data = await metric.get();
  return data.values
    .filter((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))
    .reduce((n, v) => n + v.value, 0);
}

/** Every key under `prefix:` must carry a TTL. Returns how many keys were checked. */
export async function expectTtlsUnder(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let checked = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const pttl = await redis.pttl(key);
      expect(pttl === -2 || pttl >= 0, `key ${key} has PTTL ${pttl}`).toBe(true);
      checked++;
    }
  } while (cursor !== '0');
  return checked;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let n = 0;
/** A fresh key prefix per scenario, so scenarios never share a bucket. */
export function freshPrefix(label = 't'): string {
  n++;
  return `mwt${process.pid}${label}${n}`;
}

// ---------------------------------------------------------------------------
// A test file's set-up
// ---------------------------------------------------------------------------

/**
 * The scratch project of the calling test file: the sets (design name to its files) are written
 * and compiled in its beforeAll, which fails on any tsc error, and removed in its afterAll. The
 * Scratch returned answers once that beforeAll has run.
 */
export function useCompiledMiddleware(sets: () => Record<string, CodeFile[]>, timeoutMs?: number): Scratch {
  let scratch: Scratch | undefined;
  const compiled = (): Scratch => {
    if (!scratch) throw new Error('the scratch project is compiled in beforeAll: use it in a test or a later hook');
    return scratch;
  };
  beforeAll(async () => {
    scratch = await compileScratch(sets());
    expect(scratch.ok, scratch.output).toBe(true);
  }, timeoutMs);
  afterAll(() => scratch?.remove());
  return {
    get dir() {
      return compiled().dir;
    },
    get output() {
      return compiled().output;
    },
    get ok() {
      return compiled().ok;
    },
    load: (design, file) => compiled().load(design, file),
    remove: () => compiled().remove(),
  };
}

/** A test file's designs served over HTTP against its redis-server (see useServedMiddleware). */
export interface ServedMiddleware extends RedisForTests {
  readonly scratch: Scratch;
  /** The compiled adapter of a design for a framework. */
  adapter(design: string, framework: Framework): Mod;
  /**
   * Serves a design's middleware with the framework for the running test, on a key prefix of its
   * own (options.keyPrefix, or a fresh one) in `client` (the file's Redis by default).
   */
  start(framework: Framework, design: string, options?: TestOptions, client?: unknown): Promise<Served & { prefix: string }>;
}

/**
 * The middleware of each design, compiled once for the calling test file (each design's files
 * and both adapters), a real redis-server and a client on it, and start() to serve a design in
 * a test: after every test the servers it started are closed and every key under their prefixes
 * in the file's Redis must carry a TTL.
 */
export function useServedMiddleware(
  designs: Record<string, Design>,
  { frameworks = ['express', 'fastify'], label = 't' }: { frameworks?: Framework[]; label?: string } = {},
): ServedMiddleware {
  const store = useRedisServer();
  const scratch = useCompiledMiddleware(() => Object.fromEntries(Object.entries(designs).map(([name, d]) => [name, allFiles(d)])));
  const adapters = new Map<string, Mod>();
  const open: Served[] = [];
  const prefixes: string[] = [];
  beforeAll(async () => {
    for (const design of Object.keys(designs)) {
      for (const fw of frameworks) adapters.set(`${design}/${fw}`, await scratch.load<Mod>(design, fw));
    }
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    for (const prefix of prefixes.splice(0)) await expectTtlsUnder(store.redis, prefix);
  });
  const adapter = (design: string, framework: Framework): Mod => {
    const mod = adapters.get(`${design}/${framework}`);
    if (!mod) throw new Error(`no compiled ${framework} adapter for the design ${design}`);
    return mod;
  };
  return {
    get server() {
      return store.server;
    },
    get redis() {
      return store.redis;
    },
    scratch,
    adapter,
    async start(framework, design, options = {}, client = store.redis) {
      const prefix = options.keyPrefix ?? freshPrefix(label);
      prefixes.push(prefix);
      const s = await serve(framework, adapter(design, framework), { redis: client, keyPrefix: prefix, ...options });
      open.push(s);
      return { ...s, prefix };
    },
  };
}

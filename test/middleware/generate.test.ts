/** The middleware generator as a pure function: which files, shared core, escaping, ownership of rules. */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  DESIGN_DATA_PATH,
  EXPRESS_PATH,
  FASTIFY_PATH,
  HONO_PATH,
  KOA_PATH,
  RUNTIME_MODULES,
  compileDesign,
  generateExpressMiddleware,
  generateFastifyMiddleware,
  generateMiddleware,
  tsComment,
  tsString,
  tsValue,
} from '../../src/codegen/middleware/index.js';
import { TOOL_VERSION } from '../../src/version.js';
import { exampleDesign, exampleNames, ROOT } from '../helpers/examples.js';
import { designFrom } from './harness.js';
import { HOSTILE, HOSTILE_TEXT, MAIN } from './designs.js';

const HOSTILE_STRINGS = ['*/', '`', '${', '"', "'", '\n', '</script>', '\u2028', '\\', '/*'];

describe('escaping helpers', () => {
  it('tsString gives a literal holding exactly the input, inert in HTML', () => {
    for (const s of [HOSTILE_TEXT, ...HOSTILE_STRINGS, '__proto__', 'é ü 漢字 😀']) {
      const lit = tsString(s);
      expect(lit.startsWith('"') && lit.endsWith('"')).toBe(true);
      expect(JSON.parse(lit)).toBe(s);
      // eslint-disable-next-line no-new-func
      expect(new Function(`return ${lit};`)()).toBe(s);
      expect(lit).not.toMatch(/[<>\u2028\u2029\n\r]/);
    }
  });

  it('tsComment can not end a // line or close a block comment', () => {
    for (const s of [HOSTILE_TEXT, ...HOSTILE_STRINGS, 'a\r\nb\u2029c\u0085d']) {
      const c = tsComment(s);
      expect(c).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
      expect(c).not.toContain('*/');
      expect(c).not.toContain('/*');
      // eslint-disable-next-line no-new-func
      expect(new Function(`/* ${c} */\n// ${c}\nreturn 1;`)()).toBe(1);
    }
    expect(tsComment('x'.repeat(500), 50).length).toBeLessThanOrEqual(50);
  });

  it('tsValue writes plain data, strings through tsString, and refuses user text as object keys', () => {
    const value = { a: [1, 'x */ y', null, true], b: { c: HOSTILE_TEXT } };
    // eslint-disable-next-line no-new-func
    expect(new Function(`return ${tsValue(value)};`)()).toEqual(value);
    expect(() => tsValue({ ['bad key']: 1 })).toThrow(/identifier/);
    expect(() => tsValue({ ['__proto__']: 1 } as Record<string, number>)).toThrow();
    expect(() => tsValue(Number.NaN)).toThrow();
  });
});

const RUNTIME = path.join(ROOT, 'src', 'runtime', 'middleware');
const HEADER = `// rl-design ${TOOL_VERSION} runtime, copied verbatim from the rl-design package. Do not edit: generate again.\n`;
const RUNTIME_PATHS = RUNTIME_MODULES.map((m) => `middleware/${m}`);

describe('generated files', () => {
  it.each(exampleNames())('%s: the runtime modules, the design data module and the framework adapter', (name) => {
    const design = exampleDesign(name);
    const files = generateMiddleware(design);
    const adapter = design.scope.framework === 'fastify' ? FASTIFY_PATH : EXPRESS_PATH;
    expect(files.map((f) => f.path)).toEqual([...RUNTIME_PATHS, DESIGN_DATA_PATH, adapter]);
    for (const f of files) {
      expect(f.language).toBe('typescript');
      expect(f.description.length).toBeGreaterThan(10);
    }
    expect(generateExpressMiddleware(design).map((f) => f.path)).toEqual([...RUNTIME_PATHS, DESIGN_DATA_PATH, EXPRESS_PATH]);
    expect(generateFastifyMiddleware(design).map((f) => f.path)).toEqual([...RUNTIME_PATHS, DESIGN_DATA_PATH, FASTIFY_PATH]);
    // deterministic
    expect(generateMiddleware(exampleDesign(name))).toEqual(files);
  });

  it("every runtime file and adapter is the runtime folder's file, byte for byte, after one header line", () => {
    const shipped = readdirSync(RUNTIME).filter((f) => f.endsWith('.ts') && f !== 'design.ts');
    // every module of the folder is shipped (no file left out of RUNTIME_MODULES by mistake)
    expect([...RUNTIME_MODULES, 'express.ts', 'fastify.ts', 'koa.ts', 'hono.ts'].sort()).toEqual(shipped.sort());
    const designs = [
      ...exampleNames().map(exampleDesign),
      ...(['fastify', 'koa', 'hono', 'nestjs'] as const).map((framework) => designFrom({ ...MAIN, stack: { ...MAIN.stack, framework } })),
    ];
    for (const design of designs) {
      for (const f of [...generateMiddleware(design), ...generateExpressMiddleware(design), ...generateFastifyMiddleware(design)]) {
        if (f.path === DESIGN_DATA_PATH) continue;
        expect(f.content.startsWith(HEADER), f.path).toBe(true);
        expect(f.content.slice(HEADER.length), f.path).toBe(readFileSync(path.join(RUNTIME, path.basename(f.path)), 'utf8'));
      }
    }
  });

  it('no TypeScript lives in template strings: the generator holds no runtime code', () => {
    const src = path.join(ROOT, 'src');
    // the modules that write generated files (regular expressions holding a backtick, as the
    // escaping helpers have, would confuse this small scanner: they are not among these)
    const sources = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && /^(codegen|design|constraints|verify|commands)\//.test(f.split(path.sep).join('/')),
    );
    expect(sources.length).toBeGreaterThan(50);
    for (const f of sources) {
      const text = readFileSync(path.join(src, f), 'utf8');
      expect(text, f).not.toMatch(/String\.raw`/);
      // a template literal holding a function or class: code kept as text (data declarations, as
      // the generated data modules have, are data)
      for (const body of templateBodies(text)) expect(body, f).not.toMatch(/^\s*(?:export )?(?:async )?(?:function|class) \w/m);
    }
  });

  it('imports nothing but node:crypto, prom-client, the framework and its own modules (never rl-design)', () => {
    const own = new Set([...RUNTIME_MODULES, 'design.ts'].map((m) => `./${m.replace(/\.ts$/, '.js')}`));
    for (const name of exampleNames()) {
      const design = exampleDesign(name);
      for (const f of [...generateExpressMiddleware(design), ...generateFastifyMiddleware(design)]) {
        const specifiers = [...f.content.matchAll(/^(?:import|export)[^'"\n]*from '([^']+)'/gm)].map((m) => m[1] as string);
        for (const s of specifiers) {
          expect(['node:crypto', 'prom-client', 'express', 'fastify', 'koa', 'hono'].includes(s) || own.has(s), `${f.path}: ${s}`).toBe(
            true,
          );
        }
      }
    }
  });

  it('each framework gets its adapter (NestJS the Express one); other gets none, the README saying how to call the limiter', () => {
    const adapters = { express: EXPRESS_PATH, nestjs: EXPRESS_PATH, fastify: FASTIFY_PATH, koa: KOA_PATH, hono: HONO_PATH } as const;
    for (const [framework, adapter] of Object.entries(adapters)) {
      const files = generateMiddleware(designFrom({ ...MAIN, stack: { ...MAIN.stack, framework: framework as keyof typeof adapters } }));
      expect(files.map((f) => f.path)).toEqual([...RUNTIME_PATHS, DESIGN_DATA_PATH, adapter]);
    }
    const other = designFrom({ ...MAIN, stack: { ...MAIN.stack, framework: 'other' } });
    expect(generateMiddleware(other).map((f) => f.path)).toEqual([...RUNTIME_PATHS, DESIGN_DATA_PATH]);
  });
});

describe('which rules the middleware owns', () => {
  it('edge and outbound rules are left to the gateway and the outbound client, and named as such', () => {
    const design = exampleDesign('saas-platform');
    const c = compileDesign(design);
    const edge = design.rules.filter((r) => r.layer === 'edge').map((r) => r.id);
    const outbound = design.rules.filter((r) => r.tier === 'outbound').map((r) => r.id);
    expect(edge.length).toBeGreaterThan(0);
    expect(outbound.length).toBeGreaterThan(0);
    const owned = c.rules.map((r) => r.id);
    for (const id of [...edge, ...outbound]) {
      expect(owned).not.toContain(id);
      expect(c.skipped.map((s) => s.id)).toContain(id);
    }
    expect(owned.sort()).toEqual(
      design.rules
        .filter((r) => r.layer === 'middleware')
        .map((r) => r.id)
        .sort(),
    );
    const core = generateMiddleware(design).find((f) => f.path === DESIGN_DATA_PATH)?.content ?? '';
    expect(core).toMatch(/global-ceiling: edge rule: enforced by the gateway/);
    expect(core).toMatch(/outbound-stripe: outbound limit/);
  });

  it("a soft plan quota's comment states its quota and the count it is refused past, not the cap alone", () => {
    const core = generateMiddleware(exampleDesign('saas-platform')).find((f) => f.path === DESIGN_DATA_PATH)?.content ?? '';
    // Pro: soft-warning on 1,000,000, refused past its assumed backstop; Free: a hard quota of 10,000
    expect(core).toMatch(/\/\/ {3}- quota-pro \(quota, fixed-window, quota 1000000 per calendar period, refused past \d+,/);
    expect(core).toMatch(/\/\/ {3}- quota-free \(quota, fixed-window, 10000 per calendar period,/);
  });

  it('evaluates ceiling first, then security, fairness and quota', () => {
    const order = { ceiling: 0, security: 1, fairness: 2, quota: 3 };
    for (const name of exampleNames()) {
      const tiers = compileDesign(exampleDesign(name)).rules.map((r) => order[r.tier]);
      expect(tiers).toEqual([...tiers].sort((a, b) => a - b));
    }
    expect(compileDesign(exampleDesign('consumer-auth')).rules[0]?.id).toBe('global-ceiling');
  });

  it('carries the design numbers, routes, costs, fail modes, headers, error codes, flags and hybrid marks', () => {
    const c = compileDesign(exampleDesign('saas-platform'));
    const free = c.rules.find((r) => r.id === 'fairness-free');
    expect(free).toMatchObject({
      tier: 'fairness',
      identity: 'tenant',
      plan: 'Free',
      script: 'gcra',
      store: 'redis',
      // kept in the tenant's hash with its quota: the hash's key and its field
      key: '{t:<tenant-id>}',
      field: 'req:free',
      limit: 60,
      periodSeconds: 60,
      burst: 25,
      failMode: 'open',
      headers: 'full',
      errorCode: 'RATE_LIMITED',
      flag: 'ratelimit.fairness-free.mode',
      hybrid: false,
    });
    expect(free?.costByEndpoint).toContainEqual(['export-orders', 25]);
    expect(free?.routes.map((i) => c.routes[i]?.route)).toContain('/v1/orders/:id');
    const pro = c.rules.find((r) => r.id === 'quota-pro');
    expect(pro).toMatchObject({
      errorCode: 'QUOTA_EXCEEDED',
      script: 'fixed-window',
      window: 'calendar',
      limit: 1_200_000,
      quota: 1_000_000,
      key: '{t:<tenant-id>}',
      field: 'quota',
    });
    expect(c.rules.find((r) => r.id === 'webhooks-per-source')).toMatchObject({
      key: '{ip:<client-ip>}:webhook',
      field: null,
      hybrid: true,
    });
    const login = c.rules.filter((r) => r.id.startsWith('auth-login'));
    expect(login.map((r) => r.key)).toEqual(['{auth:login}:un:<sha256(username)>', '{auth:login}:ip:<client-ip>']);
    expect(login.every((r) => r.headers === 'silent' && r.failMode === 'closed')).toBe(true);
    expect(c.routes.find((r) => r.route === '/healthz')).toMatchObject({ exempt: true });
    expect(c.quotaPeriod).toEqual({ kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' });
    expect(c.hybrid).toEqual({ localBurst: 80, instances: 6, overAdmission: 480 });
    expect(c.defaultMode).toBe('shadow');
  });

  it('hostile names reach the design data only as escaped literals and sanitised comments', () => {
    const files = generateMiddleware(designFrom(HOSTILE));
    const data = files.find((f) => f.path === DESIGN_DATA_PATH);
    // the generated module has no block comment (its comments are // lines): user text opens none
    expect(data?.content).not.toMatch(/^\s*\/\*/m);
    for (const f of files) {
      for (const line of f.content.split('\n')) {
        if (line.trimStart().startsWith('//')) {
          expect(line).not.toContain('*/');
          expect(line).not.toContain('/*');
        }
      }
      expect(f.content).not.toContain('</script>');
      expect(f.content).not.toMatch(/[\u2028\u2029]/);
    }
  });
});

/** The text of every template literal in a source file (comments and quoted strings skipped). */
function templateBodies(source: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') i = source.indexOf('\n', i) < 0 ? source.length : source.indexOf('\n', i);
    else if (c === '/' && next === '*') i = source.indexOf('*/', i + 2) < 0 ? source.length : source.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      i = j + 1;
    } else if (c === '`') {
      let j = i + 1;
      let body = '';
      while (j < source.length && source[j] !== '`') {
        if (source[j] === '\\') {
          body += source.slice(j, j + 2);
          j += 2;
        } else if (source[j] === '$' && source[j + 1] === '{') {
          // skip the expression (nested braces counted; a nested template ends it early, which only under-reports)
          let depth = 1;
          j += 2;
          while (j < source.length && depth > 0) {
            if (source[j] === '{') depth++;
            else if (source[j] === '}') depth--;
            j++;
          }
          body += '${}';
        } else body += source[j++];
      }
      out.push(body);
      i = j + 1;
    } else i++;
  }
  return out;
}

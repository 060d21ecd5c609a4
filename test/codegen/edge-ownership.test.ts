/**
 * A parameter route and a fixed path it also matches (GET /parts/:sku and GET /parts/search):
 * every gateway file counts a request under the edge rules of the endpoint that owns it, the
 * most specific route, as the middleware's router picks it. /parts/search counts under the
 * search rule only, /parts/abc under the part rule only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { AWS_PATH, CLOUDFLARE_PATH } from '../../src/codegen/gateway/cloud.js';
import { ENVOY_FILTER_PATH } from '../../src/codegen/gateway/envoy.js';
import { generateGateway } from '../../src/codegen/gateway/index.js';
import { KONG_PATH } from '../../src/codegen/gateway/kong.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign, formatFinding } from '../../src/constraints/index.js';
import { burst, nginxPrefix, nginxTest, startNginx, type NginxPrefix, type RunningNginx } from './support/nginx.js';

const FIXTURE = new URL('../fixtures/edge-cost/kong-search.answers.json', import.meta.url);

function answersFor(gateway: Gateway): Answers {
  const answers = parseAnswers(readFileSync(FIXTURE, 'utf8'), 'kong-search.answers.json');
  return { ...answers, stack: { ...answers.stack, gateway } };
}

function designFor(gateway: Gateway): Design {
  return buildDesign(answersFor(gateway), { date: '2026-12-03' });
}

const PART = 'anonymous-per-ip';
const SEARCH = 'anonymous-per-ip-cost-3';

describe('nginx: a search call is counted in the search zone only', () => {
  const design = designFor('nginx');
  const enforce = (content: string): string => content.replace('limit_req_dry_run on;', 'limit_req_dry_run off;');
  let prefix: NginxPrefix;
  let nginx: RunningNginx;

  beforeAll(async () => {
    prefix = await nginxPrefix(generateNginx(design), enforce);
    nginx = await startNginx(prefix);
  });
  afterAll(async () => {
    await nginx?.stop();
    prefix?.remove();
  });

  it('nginx -t accepts the config', async () => {
    const result = await nginxTest(prefix);
    expect(result.ok, result.output).toBe(true);
  });

  it('a real nginx: the searches a client makes leave its whole part allowance', async () => {
    const part = design.rules.find((r) => r.id === PART)!;
    const search = design.rules.find((r) => r.id === SEARCH)!;
    expect(part.endpoints).toEqual(['part']);
    expect(search.endpoints).toEqual(['search']);
    // the searches pass up to the search zone's burst, then 429
    const searches = await burst(nginx.port, 40, '/parts/search');
    const passed = searches.filter((r) => r.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(1 + (search.burst as number));
    expect(searches.some((r) => r.status === 429)).toBe(true);
    // right after them, the part zone still admits its whole burst at once: no search was counted there
    const parts = await burst(nginx.port, 1 + (part.burst as number), '/parts/abc-123');
    expect(parts.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
  });
});

/** A gateway regex in JavaScript: a leading (?i) as the i flag. */
function re(source: string, insensitive = false): RegExp {
  const i = source.startsWith('(?i)');
  return new RegExp(i ? source.slice(4) : source, i || insensitive ? 'i' : '');
}

const SAMPLES: [string, string, string[]][] = [
  ['GET', '/parts/search', [SEARCH]],
  ['GET', '/parts/search/', [SEARCH]],
  ['GET', '/parts/abc-123', [PART]],
  ['HEAD', '/parts/search', [SEARCH]],
];

function fileOf(gateway: Gateway, path: string): string {
  const f = generateGateway(designFor(gateway)).find((x) => x.path === path);
  if (!f) throw new Error(`no ${path}`);
  return f.content;
}

describe('Envoy: the rate_limits entries that fire for a request', () => {
  const doc = parseYaml(fileOf('envoy', ENVOY_FILTER_PATH));
  const entries: any[] = doc.http_connection_manager.route_config.virtual_hosts[0].rate_limits;
  const counted = (method: string, path: string): string[] =>
    entries.flatMap((e) => {
      const m = e.actions.find((a: any) => a.header_value_match)?.header_value_match;
      if (!m) return [];
      const fires = (m.headers as any[]).every((h) => {
        const value = h.name === ':path' ? path : method;
        return re(h.string_match.safe_regex.regex).test(value) !== (h.invert_match === true);
      });
      return fires ? [m.descriptor_value as string] : [];
    });
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: one descriptor, ${want.join(', ')}`, () => {
      expect(counted(method, path)).toEqual(want);
      expect(counted(method, `${path}?q=1`)).toEqual(want);
    });
});

describe('Cloudflare: the rules whose expression matches a request', () => {
  const doc = JSON.parse(fileOf('cloudflare', CLOUDFLARE_PATH));
  /** The Rules-language expression as a JavaScript predicate (the operators this file uses). */
  const predicate = (expression: string): ((method: string, path: string) => boolean) => {
    const set = (inner: string): string => `[${[...inner.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.stringify(m[1])).join(',')}]`;
    const js = expression
      .replace(/http\.request\.method in \{([^}]*)\}/g, (_, s: string) => `${set(s)}.includes(method)`)
      .replace(/lower\(http\.request\.uri\.path\) in \{([^}]*)\}/g, (_, s: string) => `${set(s)}.includes(path.toLowerCase())`)
      .replace(/lower\(http\.request\.uri\.path\) eq ("(?:[^"\\]|\\.)*")/g, (_, s: string) => `(path.toLowerCase() === ${s})`)
      .replace(
        /http\.request\.uri\.path matches "((?:[^"\\]|\\.)*)"/g,
        (_, s: string) => `re(${JSON.stringify(s.replace(/\\(.)/g, '$1'))}).test(path)`,
      )
      .replace(/\band\b/g, '&&')
      .replace(/\bor\b/g, '||')
      .replace(/\bnot\b/g, '!');
    return new Function('re', 'method', 'path', `return ${js};`).bind(null, re) as (method: string, path: string) => boolean;
  };
  const rules = (doc.rules as any[]).map((r) => ({ id: String(r.description).split(':')[0] as string, test: predicate(r.expression) }));
  const counted = (method: string, path: string): string[] =>
    rules.filter((r) => r.id !== 'global-ceiling' && r.test(method, path)).map((r) => r.id);
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: ${want.join(', ')}`, () => {
      expect(counted(method, path)).toEqual(want);
    });
});

describe('AWS WAF: the rate-based rules whose scope-down matches a request', () => {
  const doc = JSON.parse(fileOf('aws-api-gateway', AWS_PATH));
  const matches = (st: any, method: string, path: string): boolean => {
    if (st.AndStatement) return st.AndStatement.Statements.every((x: any) => matches(x, method, path));
    if (st.OrStatement) return st.OrStatement.Statements.some((x: any) => matches(x, method, path));
    if (st.NotStatement) return !matches(st.NotStatement.Statement, method, path);
    if (st.RegexMatchStatement) return re(st.RegexMatchStatement.RegexString).test(path);
    if (st.ByteMatchStatement) return st.ByteMatchStatement.SearchString === method;
    throw new Error(`unknown statement ${Object.keys(st).join()}`);
  };
  const counted = (method: string, path: string): string[] =>
    (doc.wafRateBasedRules as any[])
      .filter(
        (r) =>
          r.Statement.RateBasedStatement.ScopeDownStatement && matches(r.Statement.RateBasedStatement.ScopeDownStatement, method, path),
      )
      .map((r) => (String(r.Name).startsWith(`rl-${SEARCH}-`) ? SEARCH : String(r.Name).startsWith(`rl-${PART}-`) ? PART : r.Name));
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: ${want.join(', ')}`, () => {
      expect(counted(method, path)).toEqual(want);
    });
});

describe('Kong: the route a request reaches', () => {
  const doc = parseYaml(fileOf('kong', KONG_PATH));
  const routes: any[] = doc.services.flatMap((s: any) => s.routes);
  /** Regex routes that match, highest regex_priority first; the rules their rate-limiting instance carries. */
  const reached = (method: string, path: string): { priority: number; rules: string[] }[] =>
    routes
      .filter(
        (r) =>
          (!r.methods || r.methods.includes(method)) && (r.paths as string[]).some((p) => p.startsWith('~') && re(p.slice(1)).test(path)),
      )
      .map((r) => ({
        priority: r.regex_priority as number,
        rules: (r.plugins ?? []).flatMap((p: any) => (p.tags as string[]).filter((t) => t.startsWith('rule-')).map((t) => t.slice(5))),
      }))
      .sort((a, b) => b.priority - a.priority);
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: one route wins, and it counts ${want.join(', ')}`, () => {
      const [first, second] = reached(method, path);
      expect(first?.rules).toEqual(want);
      // no other route that matches has the same priority (which one wins would not be defined)
      if (second) expect(second.priority).toBeLessThan(first!.priority);
    });
});

describe('validate reads the exclusion back: a hand edit that drops it fails', () => {
  const failing = (gateway: Gateway, edit: (content: string, path: string) => string): string[] => {
    const design = designFor(gateway);
    const files = generateCode(design).map((f) => ({ ...f, content: edit(f.content, f.path) }));
    const rules = checkDesign(design, files).find((r) => r.id === 'complete-rules')!;
    return rules.findings.filter((f) => f.messageId === 'edgeScopeDiffers').map((f) => formatFinding(f));
  };
  it('the generated files pass', () => {
    for (const g of ['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare'] as Gateway[]) expect(failing(g, (c) => c)).toEqual([]);
  });
  it('nginx: the map line that leaves /parts/search out, deleted', () => {
    const found = failing('nginx', (c) => c.replace(/^.*belongs to another endpoint.*\n/m, ''));
    expect(found.join('\n')).toContain('GET /parts/search (GET /parts/search) counts under anonymous-per-ip-cost-3');
  });
  it('Envoy: the inverted :path matcher, deleted', () => {
    const found = failing('envoy', (c, p) => {
      if (p !== ENVOY_FILTER_PATH) return c;
      const doc = parseYaml(c);
      for (const e of doc.http_connection_manager.route_config.virtual_hosts[0].rate_limits)
        for (const a of e.actions)
          if (a.header_value_match) a.header_value_match.headers = a.header_value_match.headers.filter((h: any) => !h.invert_match);
      return stringifyYaml(doc);
    });
    expect(found.join('\n')).toContain('counts it under anonymous-per-ip, anonymous-per-ip-cost-3');
  });
  it('Kong: both routes at regex_priority 100', () => {
    const found = failing('kong', (c) => c.replaceAll(/regex_priority: \d+/g, 'regex_priority: 100'));
    expect(found.join('\n')).toContain('at the same priority');
  });
  it('AWS WAF: the NotStatement, deleted', () => {
    const found = failing('aws-api-gateway', (c, p) => {
      if (p !== AWS_PATH) return c;
      const doc = JSON.parse(c);
      for (const r of doc.wafRateBasedRules) {
        const s = r.Statement.RateBasedStatement;
        if (s.ScopeDownStatement?.AndStatement) s.ScopeDownStatement = s.ScopeDownStatement.AndStatement.Statements[0];
      }
      return JSON.stringify(doc);
    });
    expect(found.join('\n')).toContain('counts it under anonymous-per-ip, anonymous-per-ip-cost-3');
  });
  it('Cloudflare: the "and not (...)", deleted', () => {
    const found = failing('cloudflare', (c, p) => {
      if (p !== CLOUDFLARE_PATH) return c;
      const doc = JSON.parse(c);
      for (const r of doc.rules) r.expression = String(r.expression).replace(/ and not \(.*\)\)$/, ')');
      return JSON.stringify(doc);
    });
    expect(found.join('\n')).toContain('and not [lower(path) /parts/search and lower(path) /parts/search/ and method GET HEAD]');
  });
});

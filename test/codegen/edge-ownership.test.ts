/**
 * A parameter route and a fixed path it also matches (GET /parts/:sku and GET /parts/search):
 * every gateway file counts a request under the edge rules of the endpoint that owns it, the
 * most specific route, as the middleware's router picks it. /parts/search counts under the
 * search rule only, /parts/abc under the part rule only.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { AWS_PATH, CLOUDFLARE_PATH } from '../../src/codegen/gateway/cloud.js';
import { ENVOY_FILTER_PATH } from '../../src/codegen/gateway/envoy.js';
import { generateGateway } from '../../src/codegen/gateway/index.js';
import { KONG_PATH } from '../../src/codegen/gateway/kong.js';
import { kongSelect } from '../../src/codegen/gateway/kong-router.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign, formatFinding } from '../../src/constraints/index.js';
import { wafCountedNames } from '../../src/codegen/gateway/shipped.js';
import { burst, get, nginxTest, useRunningNginx } from './support/nginx.js';

const FIXTURE = new URL('../fixtures/edge-cost/kong-search.answers.json', import.meta.url);
/** GET and POST /items/:id (one per-IP rule) beside GET /items/export (a stricter one): the same rule ids as FIXTURE. */
const METHOD_SPLIT = new URL('../fixtures/edge-cost/method-split.answers.json', import.meta.url);

function answersFor(gateway: Gateway, fixture: URL = FIXTURE): Answers {
  const answers = parseAnswers(readFileSync(fixture, 'utf8'), fixture.pathname.split('/').pop() as string);
  return { ...answers, stack: { ...answers.stack, gateway } };
}

function designFor(gateway: Gateway, fixture: URL = FIXTURE): Design {
  return buildDesign(answersFor(gateway, fixture), { date: '2026-12-03' });
}

const PART = 'anonymous-per-ip';
const SEARCH = 'anonymous-per-ip-cost-3';

describe('nginx: a search call is counted in the search zone only', () => {
  const design = designFor('nginx');
  const enforce = (content: string): string => content.replace('limit_req_dry_run on;', 'limit_req_dry_run off;');
  const running = useRunningNginx(generateNginx(design), enforce);

  it('nginx -t accepts the config', async () => {
    const result = await nginxTest(running.prefix);
    expect(result.ok, result.output).toBe(true);
  });

  it('a real nginx: the searches a client makes leave its whole part allowance', async () => {
    const part = design.rules.find((r) => r.id === PART)!;
    const search = design.rules.find((r) => r.id === SEARCH)!;
    expect(part.endpoints).toEqual(['part']);
    expect(search.endpoints).toEqual(['search']);
    // the searches pass up to the search zone's burst, then 429
    const searches = await burst(running.nginx.port, 40, '/parts/search');
    const passed = searches.filter((r) => r.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(1 + (search.burst as number));
    expect(searches.some((r) => r.status === 429)).toBe(true);
    // right after them, the part zone still admits its whole burst at once: no search was counted there
    const parts = await burst(running.nginx.port, 1 + (part.burst as number), '/parts/abc-123');
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

function fileOf(gateway: Gateway, path: string, fixture: URL = FIXTURE): string {
  const f = generateGateway(designFor(gateway, fixture)).find((x) => x.path === path);
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

/** A Cloudflare Rules-language expression as a JavaScript predicate (the operators the file uses). */
function cfPredicate(expression: string): (method: string, path: string) => boolean {
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
}

/** The Cloudflare rules (by id) whose expression matches a request. */
function cfCounted(doc: any): (method: string, path: string) => string[] {
  const rules = (doc.rules as any[]).map((r) => ({ id: String(r.description).split(':')[0] as string, test: cfPredicate(r.expression) }));
  return (method, path) => rules.filter((r) => r.test(method, path)).map((r) => r.id);
}

describe('Cloudflare: the rules whose expression matches a request', () => {
  const all = cfCounted(JSON.parse(fileOf('cloudflare', CLOUDFLARE_PATH)));
  const counted = (method: string, path: string): string[] => all(method, path).filter((id) => id !== 'global-ceiling');
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: ${want.join(', ')}`, () => {
      expect(counted(method, path)).toEqual(want);
    });
});

/** The rule a WAF rate-based rule carries, by its name. */
const wafRule = (name: string): string =>
  name.startsWith(`rl-${SEARCH}-`) ? SEARCH : name.startsWith(`rl-${PART}-`) ? PART : name.replace(/^rl-(.*)-\d+$/, '$1');

/** The rate-based rules of an AWS file that count a request: no scope-down, or one that matches it. */
function wafCounted(doc: any, method: string, path: string): string[] {
  return wafCountedNames(doc, method, path).map(wafRule);
}

describe('AWS WAF: the rate-based rules whose scope-down matches a request', () => {
  const doc = JSON.parse(fileOf('aws-api-gateway', AWS_PATH));
  const counted = (method: string, path: string): string[] => wafCounted(doc, method, path);
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: ${want.join(', ')}`, () => {
      expect(counted(method, path)).toEqual(want);
    });
});

describe('Kong: the route a request reaches', () => {
  const doc = parseYaml(fileOf('kong', KONG_PATH));
  const routes: any[] = doc.services.flatMap((s: any) => s.routes);
  /** The routes Kong's router puts at the top for a request (kong-router.ts), and the rules their rate-limiting instance carries. */
  const reached = (method: string, path: string): string[][] =>
    kongSelect(routes, { method, uri: path }).map(({ route: r }) =>
      (r.plugins ?? []).flatMap((p: any) => (p.tags as string[]).filter((t) => t.startsWith('rule-')).map((t) => t.slice(5))),
    );
  for (const [method, path, want] of SAMPLES)
    it(`${method} ${path}: one route wins, and it counts ${want.join(', ')}`, () => {
      // one route alone at the top (with two, which one wins would depend on Kong's route ids)
      expect(reached(method, path)).toEqual([want]);
    });
});

/**
 * Method and letter case: every gateway counts a request as the middleware matches it (by
 * method, GET also HEAD; the path in any letter case), and the exempt GET /healthz exempts
 * GET and HEAD only. `every`: whether the rules over every endpoint count it (not on an exempt
 * endpoint's requests).
 */
type Matching = [string, string, string[], boolean][];
const MATCHING: Matching = [
  ['GET', '/parts/abc', [PART], true],
  ['POST', '/parts/abc', [], true],
  ['GET', '/PARTS/abc', [PART], true],
  ['HEAD', '/parts/abc', [PART], true],
  ['GET', '/PARTS/SEARCH', [SEARCH], true],
  ['GET', '/healthz', [], false],
  ['HEAD', '/healthz', [], false],
  ['GET', '/HEALTHZ', [], false],
  ['POST', '/healthz', [], true],
];
const CEILING = 'global-ceiling';

/**
 * GET,POST /items/:id and GET /items/export: the middleware picks the most specific route among
 * those that take the request's method, so POST /items/export belongs to POST /items/:id (the
 * export route does not take POST) and counts under its rule, GET /items/export under export's.
 */
const METHOD_SPLIT_MATCHING: Matching = [
  ['GET', '/items/export', [SEARCH], true],
  ['HEAD', '/items/export', [SEARCH], true],
  ['POST', '/items/export', [PART], true],
  ['POST', '/ITEMS/Export', [PART], true],
  ['GET', '/ITEMS/EXPORT', [SEARCH], true],
  ['GET', '/items/abc', [PART], true],
  ['POST', '/items/abc', [PART], true],
  ['PUT', '/items/export', [], true],
  ['GET', '/healthz', [], false],
  ['POST', '/healthz', [], true],
];

/** A gateway's verdict for each request of a table, against it (the ceiling when it runs at that gateway). */
function matchingCases(counted: (method: string, path: string) => string[], ceiling: boolean, table: Matching): void {
  for (const [method, path, scoped, every] of table) {
    const want = [...scoped, ...(every && ceiling ? [CEILING] : [])];
    it(`${method} ${path}: ${want.length > 0 ? want.join(', ') : 'no rule'}`, () => {
      expect([...counted(method, path)].sort()).toEqual([...want].sort());
    });
  }
}

/** Envoy: the first route whose match takes a request (path, prefix or safe_regex, with its header matchers). */
function envoyRouteOf(routes: any[], method: string, path: string): any {
  const header = (h: any): boolean => {
    const value = h.name === ':method' ? method : h.name === ':path' ? path : undefined;
    if (value === undefined) throw new Error(`header ${h.name}`);
    return (
      re(`^(?:${h.string_match.safe_regex.regex.replace(/^\(\?i\)/, '')})$`, h.string_match.safe_regex.regex.startsWith('(?i)')).test(
        value,
      ) !==
      (h.invert_match === true)
    );
  };
  return routes.find((r) => {
    const m = r.match;
    const fold = (x: string): string => (m.case_sensitive === false ? x.toLowerCase() : x);
    const onPath =
      m.prefix !== undefined
        ? fold(path).startsWith(fold(m.prefix))
        : m.path !== undefined
          ? fold(path) === fold(m.path)
          : re(`^(?:${m.safe_regex.regex.replace(/^\(\?i\)/, '')})$`, m.safe_regex.regex.startsWith('(?i)')).test(path);
    return onPath && (m.headers ?? []).every(header);
  });
}

/** Each gateway's files for a fixture, through every request of its table. */
function gatewayCases(fixture: URL, table: Matching): void {
  describe('nginx (a real nginx reports which zones key the request)', () => {
    const design = designFor('nginx', fixture);
    const zones = ['anonymous_per_ip', 'anonymous_per_ip_cost_3', 'global_ceiling'];
    // each zone's map result as a response header: 1 when the request gets a key (is counted there)
    const expose = (content: string, path: string): string =>
      path.endsWith('nginx-server.conf')
        ? `${content}\n${zones.map((z) => `add_header X-Rl-${z.replaceAll('_', '-')} $rl_${z}_counted always;`).join('\n')}\n`
        : `${content}\n${zones.map((z) => `map $rl_${z}_key $rl_${z}_counted { "" 0; default 1; }`).join('\n')}\n`;
    const running = useRunningNginx(generateNginx(design), expose);
    it('nginx -t accepts the config', async () => {
      const result = await nginxTest(running.prefix);
      expect(result.ok, result.output).toBe(true);
    });
    for (const [method, path, scoped, every] of table) {
      const want = [...scoped, ...(every ? [CEILING] : [])].sort();
      it(`${method} ${path}: ${want.join(', ') || 'no rule'}`, async () => {
        const reply = await get(running.nginx.port, path, {}, method);
        const got = zones.filter((z) => reply.headers[`x-rl-${z.replaceAll('_', '-')}`] === '1').map((z) => z.replaceAll('_', '-'));
        expect(got.sort()).toEqual(want);
      });
    }
  });

  describe('Envoy: the route a request reaches, then the rate_limits entries and the local bucket that count it', () => {
    const doc = parseYaml(fileOf('envoy', ENVOY_FILTER_PATH, fixture));
    const host = doc.http_connection_manager.route_config.virtual_hosts[0];
    const counted = (method: string, path: string): string[] => {
      const off = envoyRouteOf(host.routes, method, path)?.typed_per_filter_config;
      // an exempt route switches the local filter off and has the global filter ignore the virtual host's actions
      const local = off?.['envoy.filters.http.local_ratelimit']?.filter_enabled.default_value.numerator !== 0;
      const global = off?.['envoy.filters.http.ratelimit']?.vh_rate_limits !== 'IGNORE';
      return [
        ...(host.rate_limits as any[]).flatMap((e) => {
          if (!(e.stage === 0 ? local : global)) return [];
          const m = e.actions.find((a: any) => a.header_value_match)?.header_value_match;
          if (!m) return e.actions.find((a: any) => a.generic_key) ? [e.actions[0].generic_key.descriptor_value] : [];
          const fires = (m.headers as any[]).every(
            (h) => re(h.string_match.safe_regex.regex).test(h.name === ':path' ? path : method) !== (h.invert_match === true),
          );
          return fires ? [m.descriptor_value as string] : [];
        }),
        // the ceiling is the local filter's own token bucket
        ...(local ? [CEILING] : []),
      ];
    };
    matchingCases(counted, true, table);
  });

  describe('AWS WAF: the rate-based rules whose scope-down matches (the ceiling is a stage throttle there)', () => {
    const doc = JSON.parse(fileOf('aws-api-gateway', AWS_PATH, fixture));
    matchingCases((method, path) => wafCounted(doc, method, path), false, table);
    if (fixture === FIXTURE)
      it('states what the statements cost, and the cost is what the statements add up to', () => {
        const rules = doc.wafRateBasedRules as any[];
        // part: 2 (rule) + 3 (GET|HEAD) + 13 (path, LOWERCASE) + 13 (search's path, LOWERCASE); search: 2 + 3 + 13
        expect(rules.map((r) => /Capacity: (\d+) WCU/.exec(r._note)?.[1])).toEqual(['31', '18']);
        expect((doc._comment as string[]).join(' ')).toContain('The rate-based rules here take 49 WCU');
      });
  });

  describe('Cloudflare: the rules whose expression matches', () => {
    matchingCases(cfCounted(JSON.parse(fileOf('cloudflare', CLOUDFLARE_PATH, fixture))), true, table);
  });

  describe('Kong: the route a request reaches, and the rate limits of the route and its service', () => {
    const doc = parseYaml(fileOf('kong', KONG_PATH, fixture));
    const counted = (method: string, path: string): string[] => {
      const entries = (doc.services as any[]).flatMap((s) => (s.routes as any[]).map((r) => ({ r, s })));
      const top = kongSelect(
        entries.map((x) => x.r),
        { method, uri: path },
      );
      expect(top.length, `${method} ${path}: routes tied at the top`).toBeLessThanOrEqual(1);
      const hit = entries.find((x) => x.r === top[0]?.route);
      if (!hit) return [];
      const tags = (plugins: any[] | undefined): string[] =>
        (plugins ?? [])
          .filter((p) => String(p.name).startsWith('rate-limiting'))
          .flatMap((p) => (p.tags as string[]).filter((t) => t.startsWith('rule-')).map((t) => t.slice(5)));
      return [...new Set([...tags(hit.r.plugins), ...tags(hit.s.plugins)])];
    };
    matchingCases(counted, true, table);
  });
}

describe('Method and letter case, as the middleware matches them: the rules each gateway counts a request under', () => {
  gatewayCases(FIXTURE, MATCHING);
});

describe('A fixed path beside a parameter route of more methods (GET,POST /items/:id, GET /items/export): each gateway counts POST /items/export under :id', () => {
  gatewayCases(METHOD_SPLIT, METHOD_SPLIT_MATCHING);
  it('validate finds every gateway file right', () => {
    for (const g of ['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare'] as Gateway[]) {
      const design = designFor(g, METHOD_SPLIT);
      const rules = checkDesign(design, generateCode(design)).find((r) => r.id === 'complete-rules')!;
      expect(rules.findings.filter((f) => f.messageId === 'edgeScopeDiffers').map((f) => formatFinding(f))).toEqual([]);
    }
  });
});

describe('where a gateway cannot match as the middleware does, the document says so', () => {
  const why = (gateway: Gateway): string => designFor(gateway).enforcement.layers.find((l) => l.layer === 'edge')?.why ?? '';
  it("AWS: API Gateway's own throttles pick a resource by its path as spelled", () => {
    expect(why('aws-api-gateway')).toContain('API Gateway picks a resource by its path as spelled, letter case included');
    expect(JSON.parse(fileOf('aws-api-gateway', AWS_PATH))._comment.join(' ')).toContain('letter case included');
  });
  it('the other gateways match as the middleware does: no such line', () => {
    for (const g of ['nginx', 'envoy', 'kong', 'cloudflare'] as Gateway[]) expect(why(g)).not.toContain('letter case');
  });
  it('AWS WAF: a per-IP rule over every endpoint leaves the exempt GET /healthz out, not POST /healthz', () => {
    const base = designFor('aws-api-gateway');
    // a per-IP rule with no routes (the generated designs list routes; a hand-set matrix may not)
    const design: Design = { ...base, rules: base.rules.map((r) => (r.id === PART ? { ...r, routes: [] } : r)) };
    const doc = JSON.parse(generateGateway(design).find((f) => f.path === AWS_PATH)!.content);
    const counted = (method: string, path: string): boolean => wafCounted(doc, method, path).includes(PART);
    expect([counted('GET', '/healthz'), counted('HEAD', '/HEALTHZ'), counted('POST', '/healthz'), counted('GET', '/orders')]).toEqual([
      false,
      false,
      true,
      true,
    ]);
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
  /** The AWS file with each WAF statement passed through `edit` (leaves first). */
  const wafEdit = (edit: (st: any) => any) => (c: string, p: string) => {
    if (p !== AWS_PATH) return c;
    const walk = (st: any): any => {
      if (st.AndStatement) st.AndStatement.Statements = st.AndStatement.Statements.map(walk).filter(Boolean);
      if (st.OrStatement) st.OrStatement.Statements = st.OrStatement.Statements.map(walk).filter(Boolean);
      if (st.NotStatement) st.NotStatement.Statement = walk(st.NotStatement.Statement);
      return edit(st);
    };
    const doc = JSON.parse(c);
    for (const r of doc.wafRateBasedRules)
      r.Statement.RateBasedStatement.ScopeDownStatement = walk(r.Statement.RateBasedStatement.ScopeDownStatement);
    return JSON.stringify(doc);
  };
  it('AWS WAF: the method conditions, deleted', () => {
    const found = failing(
      'aws-api-gateway',
      wafEdit((st) => ((st.RegexMatchStatement ?? st.ByteMatchStatement)?.FieldToMatch.Method ? undefined : st)),
    );
    expect(found.join('\n')).toContain(
      "POST /parts/rl-sample (GET /parts/:sku's path, another method) counts under no edge rule of this file",
    );
    expect(found.join('\n')).toContain('counts it under anonymous-per-ip');
  });
  it('AWS WAF: the LOWERCASE transformation, deleted', () => {
    const found = failing(
      'aws-api-gateway',
      wafEdit((st) => {
        if (st.RegexMatchStatement) st.RegexMatchStatement.TextTransformations = [{ Priority: 0, Type: 'NONE' }];
        return st;
      }),
    );
    expect(found.join('\n')).toContain('GET /PARTS/RL-SAMPLE (GET /parts/:sku, the path in upper case) counts under anonymous-per-ip');
  });
  /** The Envoy file with the exempt route's match edited. */
  const envoyExempt = (edit: (match: any) => void) => (c: string, p: string) => {
    if (p !== ENVOY_FILTER_PATH) return c;
    const doc = parseYaml(c);
    for (const r of doc.http_connection_manager.route_config.virtual_hosts[0].routes) if (r.typed_per_filter_config) edit(r.match);
    return stringifyYaml(doc);
  };
  it("Envoy: the exempt route's method matcher, deleted", () => {
    const found = failing(
      'envoy',
      envoyExempt((m) => delete m.headers),
    );
    expect(found.join('\n')).toContain("POST /healthz (GET /healthz's path, another method) counts under global-ceiling");
  });
  it('Envoy: the exempt route matched case-sensitively', () => {
    const found = failing(
      'envoy',
      envoyExempt((m) => (m.safe_regex.regex = m.safe_regex.regex.replace('(?i)', ''))),
    );
    expect(found.join('\n')).toContain('GET /HEALTHZ (GET /healthz, the path in upper case) counts under no edge rule of this file');
  });
  it('nginx: the maps matched case-sensitively (~ for ~*)', () => {
    const found = failing('nginx', (c) => c.replaceAll('"~*^', '"~^'));
    expect(found.join('\n')).toContain('GET /PARTS/RL-SAMPLE (GET /parts/:sku, the path in upper case) counts under anonymous-per-ip');
  });
  it("Kong: the part route's methods, deleted", () => {
    const found = failing('kong', (c, p) => {
      if (p !== KONG_PATH) return c;
      const doc = parseYaml(c);
      for (const s of doc.services) for (const r of s.routes) if (String(r.name).startsWith('anonymous-per-ip-1')) delete r.methods;
      return stringifyYaml(doc);
    });
    expect(found.join('\n')).toContain("POST /parts/rl-sample (GET /parts/:sku's path, another method) is not GET /parts/:sku's request");
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

/**
 * Kong's router as src/codegen/gateway/kong-router.ts ports it, held to what Kong's own source
 * does (github.com/Kong/kong, read at 3.10; the same code since 3.0), then the generated
 * kong.yaml through it: a request reaches the route of the endpoint that owns it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseAnswers } from '../../src/answers/load.js';
import { buildDesign } from '../../src/design/build.js';
import { generateGateway } from '../../src/codegen/gateway/index.js';
import { KONG_PATH } from '../../src/codegen/gateway/kong.js';
import {
  type KongRouteFields,
  kongNormalizePath,
  kongRoutePriority,
  kongRouterPathError,
  kongSelect,
} from '../../src/codegen/gateway/kong-router.js';

describe("kong/router/transform.lua get_priority: the priority Kong's ATC router orders routes by", () => {
  // Expected values: Kong's get_priority itself (transform.lua at 3.10, lines 456-668), run under
  // LuaJIT 2.1 (OpenResty's, as Kong ships) with its requires stubbed. lshift_uint64 rebinds its
  // cdata local to the Lua number it is given, so the weight, header count and regex_priority
  // shifts are 32-bit (LuaJIT bit ops on numbers): the weight lands in bits 29-31, not 61-63.
  const cases: [string, KongRouteFields, bigint][] = [
    [
      'methods + regex, regex_priority 100',
      { methods: ['GET', 'HEAD'], paths: ['~/(?i)parts/[^/]+/?$'], regex_priority: 100 },
      2251800939855872n,
    ],
    [
      'methods + regex, regex_priority 101',
      { methods: ['GET', 'HEAD'], paths: ['~/(?i)parts/search/?$'], regex_priority: 101 },
      2251800940380160n,
    ],
    ['regex alone, regex_priority 100', { paths: ['~/(?i)parts/[^/]+/?$'], regex_priority: 100 }, 2251800402984960n],
    ['regex alone, regex_priority 1023', { paths: ['~/x'], regex_priority: 1023 }, 2251800886902784n],
    ['regex alone, regex_priority 1124 (OR-ed over the weight bit)', { paths: ['~/x'], regex_priority: 1124 }, 2251800402984960n],
    ['regex alone, regex_priority 1125', { paths: ['~/x'], regex_priority: 1125 }, 2251800403509248n],
    ['prefix / (the catch-all)', { paths: ['/'] }, 536870913n],
    ['methods + prefix /parts', { methods: ['GET'], paths: ['/parts'] }, 1073741830n],
    ['prefix /parts, regex_priority 5 (ignored: prefix)', { paths: ['/parts'], regex_priority: 5 }, 536870918n],
    ['methods alone', { methods: ['GET'] }, 536870912n],
    ['plain host + regex', { hosts: ['a.example'], paths: ['~/x'] }, 1155173305494274048n],
  ];
  for (const [what, route, want] of cases) it(`${what}: ${want}`, () => expect(kongRoutePriority(route)).toBe(want));

  it('one more matched field (methods) is worth 1024 of regex_priority: it decides while the priorities of our routes (100 and up, a few apart) differ by less', () => {
    const withMethods = kongRoutePriority({ methods: ['GET'], paths: ['~/a'], regex_priority: 100 });
    expect(withMethods > kongRoutePriority({ paths: ['~/a'], regex_priority: 1023 })).toBe(true);
    expect(withMethods > kongRoutePriority({ paths: ['~/a'], regex_priority: 1124 })).toBe(true);
    expect(withMethods < kongRoutePriority({ paths: ['~/a'], regex_priority: 2149 })).toBe(true);
  });

  it('any regex route beats any prefix route (REGEX_URL_BIT is bit 51, the weight at most bit 31)', () => {
    expect(kongRoutePriority({ paths: ['~/a'] }) > kongRoutePriority({ methods: ['GET'], paths: ['/a/b/c'] })).toBe(true);
  });
});

describe("Kong's own router tests, through the port", () => {
  const select = (routes: KongRouteFields[], method: string, uri: string): number[] =>
    kongSelect(routes, { method, uri }).map((x) => routes.indexOf(x.route));

  it('spec/01-unit/08-router_spec.lua "matches a [uri regex] even if a [prefix uri] got a match"', () => {
    expect(
      select([{ paths: ['/route/persons'] }, { paths: ['~/route/persons/\\d+/profile'] }], 'GET', '/route/persons/123/profile'),
    ).toEqual([1]);
  });
  it('spec/01-unit/08-router_spec.lua "[method] does not supersede [uri prefix]"', () => {
    const routes = [{ methods: ['GET'] }, { paths: ['/example'] }];
    expect(select(routes, 'GET', '/example')).toEqual([1]);
    expect(select(routes, 'GET', '/example/status/200')).toEqual([1]);
  });
  it('spec/02-integration/05-proxy/02-router_spec.lua "depends on the regex_priority field"', () => {
    const routes = [
      { paths: ['~/status/(?P<foo>re)'], regex_priority: 0 },
      { paths: ['~/status/(re)'], regex_priority: 4 },
    ];
    expect(select(routes, 'GET', '/status/re')).toEqual([1]);
  });
  it('a tie is not decided by the config (atc-router src/router.rs: then by route id)', () => {
    expect(select([{ paths: ['~/status/(ab)'] }, { paths: ['~/status/(ab)c?'] }], 'GET', '/status/ab')).toEqual([0, 1]);
  });
});

describe('kong/db/schema/typedefs.lua router_path: the paths Kong takes', () => {
  it('a regex path starts with ~/ (Kong refuses the whole declarative file otherwise)', () => {
    expect(kongRouterPathError('~(?i)^/parts/search/?$')).toBe('should start with: / (fixed path) or ~/ (regex path)');
    expect(kongRouterPathError('~/(?i)parts/search/?$')).toBeUndefined();
    expect(kongRouterPathError('~/$')).toBeUndefined();
  });
  it('no empty segment, and a prefix path in normalized form', () => {
    expect(kongRouterPathError('/a//b')).toBe('must not have empty segments');
    expect(kongRouterPathError('/a/./b')).toBe("non-normalized path, consider use '/a/b' instead");
    expect(kongRouterPathError('/')).toBeUndefined();
  });
});

describe('kong/router/utils.lua strip_uri_args + kong/tools/uri.lua normalize: the path Kong matches', () => {
  const cases: [string, string][] = [
    ['/items/export?x=1', '/items/export'],
    ['/items/%65xport', '/items/export'],
    ['/items//export', '/items/export'],
    ['/items/a%2fb', '/items/a%2Fb'],
    ['/a/./b/../c', '/a/c'],
    ['/ITEMS/Export', '/ITEMS/Export'],
  ];
  for (const [uri, want] of cases) it(`${uri} -> ${want}`, () => expect(kongNormalizePath(uri)).toBe(want));
});

/** The generated kong.yaml of a fixture (gateway kong), its routes with their service. */
function kongFile(fixture: string): { routes: any[]; serviceOf: Map<any, any> } {
  const url = new URL(`../fixtures/edge-cost/${fixture}`, import.meta.url);
  const answers = parseAnswers(readFileSync(url, 'utf8'), fixture);
  const design = buildDesign({ ...answers, stack: { ...answers.stack, gateway: 'kong' } }, { date: '2026-12-03' });
  const doc = parseYaml(generateGateway(design).find((f) => f.path === KONG_PATH)?.content ?? '');
  const serviceOf = new Map<any, any>();
  for (const s of doc.services) for (const r of s.routes) serviceOf.set(r, s);
  return { routes: [...serviceOf.keys()], serviceOf };
}

/** The rule ids a route's own rate-limiting carries, or the service's name for a route without one. */
function reached(file: { routes: any[]; serviceOf: Map<any, any> }, method: string, uri: string): string[] {
  const top = kongSelect(file.routes, { method, uri });
  return top.map(({ route }) => {
    const own = (route.plugins ?? []).flatMap((p: any) => (p.tags as string[]).filter((t) => t.startsWith('rule-')).map((t) => t.slice(5)));
    return own.length > 0 ? own.join('+') : `${file.serviceOf.get(route).name} (no rule of its own)`;
  });
}

describe('the generated kong.yaml through the port: each request reaches the route of the endpoint that owns it', () => {
  for (const fixture of ['kong-search.answers.json', 'method-split.answers.json']) {
    it(`${fixture}: every route path is one Kong takes`, () => {
      const { routes } = kongFile(fixture);
      expect(routes.flatMap((r) => r.paths.map((p: string) => [p, kongRouterPathError(p)]).filter((x: unknown[]) => x[1]))).toEqual([]);
    });
  }

  const search = kongFile('kong-search.answers.json');
  const searchCases: [string, string, string][] = [
    ['GET', '/parts/search', 'anonymous-per-ip-cost-3'],
    ['HEAD', '/parts/search/', 'anonymous-per-ip-cost-3'],
    ['GET', '/PARTS/Search?q=bolt', 'anonymous-per-ip-cost-3'],
    ['GET', '/parts/%73earch', 'anonymous-per-ip-cost-3'],
    ['GET', '/parts//search', 'anonymous-per-ip-cost-3'],
    ['GET', '/parts/abc-123', 'anonymous-per-ip'],
    ['POST', '/parts/abc-123', 'parts-catalogue (no rule of its own)'],
    ['GET', '/healthz', 'parts-catalogue-health (no rule of its own)'],
    ['GET', '/HEALTHZ', 'parts-catalogue-health (no rule of its own)'],
    ['POST', '/healthz', 'parts-catalogue (no rule of its own)'],
  ];
  for (const [method, uri, want] of searchCases)
    it(`search beside :sku: ${method} ${uri} -> ${want}`, () => expect(reached(search, method, uri)).toEqual([want]));

  const split = kongFile('method-split.answers.json');
  const splitCases: [string, string, string][] = [
    ['GET', '/items/export', 'anonymous-per-ip-cost-3'],
    ['HEAD', '/items/export', 'anonymous-per-ip-cost-3'],
    ['POST', '/items/export', 'anonymous-per-ip'],
    ['POST', '/ITEMS/EXPORT', 'anonymous-per-ip'],
    ['GET', '/items/abc', 'anonymous-per-ip'],
    ['POST', '/items/abc', 'anonymous-per-ip'],
    ['PUT', '/items/export', 'item-store (no rule of its own)'],
  ];
  for (const [method, uri, want] of splitCases)
    it(`GET,POST /items/:id beside GET /items/export: ${method} ${uri} -> ${want}`, () =>
      expect(reached(split, method, uri)).toEqual([want]));
});

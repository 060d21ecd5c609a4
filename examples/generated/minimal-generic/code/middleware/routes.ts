// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Route matching: which design routes (and so which rules) a request path falls under,
 * the most specific route owning the request; results cached per path shape.
 */
import type { RouteSpec } from './types.js';
import { charCodeAt } from './strings.js';

interface Segment {
  /** 2 static, 1 parameter: a static segment is more specific. */
  readonly rank: 1 | 2;
  readonly text: string;
}

export interface CompiledRoute {
  readonly index: number;
  readonly spec: RouteSpec;
  readonly method: string;
  readonly segments: readonly Segment[];
  /** Ends in a catch-all (/*): matches the prefix and anything below it. */
  readonly wildcard: boolean;
}

export interface RouteMatch {
  /** The most specific non-wildcard route, as a router would pick it. */
  readonly best: CompiledRoute | null;
  readonly wildcards: readonly CompiledRoute[];
  readonly endpoint: string | null;
  readonly exempt: boolean;
  /** The owning route's endpoint allows anonymous callers (RouteSpec.anonymous). */
  readonly anonymous: boolean;
}

function decodeSegment(segment: string): string {
  if (segment.indexOf('%') < 0) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Path segments of a request URL, decoded and lower-cased, without empty segments: the
 * matching is deliberately looser than any router (case, //, trailing /, %-encoding), so a
 * request can not dodge a limit by spelling the path another way.
 */
export function pathSegments(url: string): string[] {
  let path = url;
  if (!path.startsWith('/')) {
    const scheme = path.indexOf('://');
    if (scheme >= 0) {
      const slash = path.indexOf('/', scheme + 3);
      path = slash >= 0 ? path.slice(slash) : '/';
    }
  }
  let end = path.length;
  const query = path.indexOf('?');
  if (query >= 0) end = query;
  const hash = path.indexOf('#');
  if (hash >= 0 && hash < end) end = hash;
  const out: string[] = [];
  for (const raw of path.slice(0, end).split('/')) {
    if (raw !== '') out.push(decodeSegment(raw).toLowerCase());
  }
  return out;
}

export function compileRoute(spec: RouteSpec, index: number): CompiledRoute {
  const parts = (spec.route.split('?')[0] ?? '').split('/').filter((p) => p !== '');
  const segments: Segment[] = [];
  let wildcard = false;
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    if (last && (part.startsWith('*') || part === '(.*)' || /^\{\*.*\}$/.test(part) || /^:.*[*+]$/.test(part))) {
      wildcard = true;
    } else if (part.startsWith(':') || part.startsWith('*') || (part.startsWith('{') && part.endsWith('}'))) {
      segments.push({ rank: 1, text: '' });
    } else {
      segments.push({ rank: 2, text: decodeSegment(part).toLowerCase() });
    }
  });
  return { index, spec, method: spec.method.toUpperCase(), segments, wildcard };
}

function methodMatches(routeMethod: string, method: string): boolean {
  return routeMethod === 'ANY' || routeMethod === method || (routeMethod === 'GET' && method === 'HEAD');
}

function segmentsMatch(route: readonly Segment[], path: readonly string[]): boolean {
  for (let i = 0; i < route.length; i++) {
    const s = route[i] as Segment;
    if (s.rank === 2 && s.text !== path[i]) return false;
  }
  return true;
}

/**
 * Whether `a` owns the requests it shares with `b` (both plain routes of the same length that
 * a request can match): the first segment where they differ is static in `a`, or, segment for
 * segment alike, `a` names a method and `b` takes any.
 */
export function moreSpecific(a: CompiledRoute, b: CompiledRoute): boolean {
  for (let i = 0; i < a.segments.length && i < b.segments.length; i++) {
    const x = (a.segments[i] as Segment).rank;
    const y = (b.segments[i] as Segment).rank;
    if (x !== y) return x > y;
  }
  return a.method !== 'ANY' && b.method === 'ANY';
}

/**
 * Whether one request can match both routes: plain routes of the same length whose static
 * segments agree wherever both have one, with methods in common (a catch-all never competes:
 * its rules apply beside the owner's).
 */
export function routesOverlap(a: CompiledRoute, b: CompiledRoute): boolean {
  if (a.wildcard || b.wildcard || a.segments.length !== b.segments.length) return false;
  if (!methodMatches(a.method, b.method) && !methodMatches(b.method, a.method)) return false;
  return a.segments.every((s, i) => {
    const t = b.segments[i] as Segment;
    return s.rank === 1 || t.rank === 1 || s.text === t.text;
  });
}

function matchRoutes(routes: readonly CompiledRoute[], method: string, path: readonly string[]): RouteMatch {
  let best: CompiledRoute | null = null;
  const wildcards: CompiledRoute[] = [];
  for (const route of routes) {
    if (!methodMatches(route.method, method)) continue;
    if (route.wildcard) {
      if (path.length >= route.segments.length && segmentsMatch(route.segments, path)) wildcards.push(route);
    } else if (route.segments.length === path.length && segmentsMatch(route.segments, path)) {
      if (best === null || moreSpecific(route, best)) best = route;
    }
  }
  let widest: CompiledRoute | null = null;
  for (const w of wildcards) if (widest === null || w.segments.length > widest.segments.length) widest = w;
  const owner = best ?? widest;
  return {
    best,
    wildcards,
    endpoint: owner ? owner.spec.endpoint : null,
    exempt: owner ? owner.spec.exempt : false,
    anonymous: owner ? owner.spec.anonymous === true : false,
  };
}

/**
 * The request path as the matcher reads it: the segments pathSegments() gives, as bounds
 * into one string, so that matching allocates nothing. A plain path (lower-case ASCII, no
 * %-escapes: nearly every request) is read in one pass over the URL itself; anything else
 * goes through pathSegments() and its decoded segments are joined.
 */
class PathView {
  text = '';
  count = 0;
  /** Segment i is text.slice(starts[i], ends[i]) (plain arrays, reused: no allocation per request). */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  read(url: string): void {
    this.count = 0;
    this.text = url;
    let start = 0;
    if (charCodeAt(url, 0) !== 47 /* / */) {
      const scheme = url.indexOf('://');
      if (scheme >= 0) {
        start = url.indexOf('/', scheme + 3);
        if (start < 0) return;
      }
    }
    let segment = start;
    let plain = true;
    let i = start;
    for (; i < url.length; i++) {
      const c = charCodeAt(url, i);
      if (c === 47 /* / */) {
        if (i > segment) this.push(segment, i);
        segment = i + 1;
      } else if (c === 63 /* ? */ || c === 35 /* # */) {
        break;
      } else if (c === 37 /* % */ || (c >= 65 && c <= 90) /* A-Z */ || c > 127) {
        plain = false;
      }
    }
    if (i > segment) this.push(segment, i);
    if (plain) return;
    this.count = 0;
    let text = '';
    for (const decoded of pathSegments(url)) {
      this.push(text.length, text.length + decoded.length);
      text += decoded;
    }
    this.text = text;
  }

  private push(start: number, end: number): void {
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.count++;
  }

  /** Whether the route's static segments are those of the path (lengths checked by the caller). */
  matches(route: readonly Segment[]): boolean {
    for (let i = 0; i < route.length; i++) {
      const s = route[i] as Segment;
      if (s.rank !== 2) continue;
      const start = this.starts[i] as number;
      if ((this.ends[i] as number) - start !== s.text.length) return false;
      // a plain loop: startsWith(text, position) costs more for segments this short
      for (let j = 0; j < s.text.length; j++) if (charCodeAt(this.text, start + j) !== charCodeAt(s.text, j)) return false;
    }
    return true;
  }
}

interface MatchNode<T> {
  value: T | undefined;
  readonly next: (MatchNode<T> | undefined)[];
}

/**
 * Route matching with the answer cached per combination of matched routes. What applies to
 * a request depends only on which routes it matches (the most specific plain route and the
 * catch-alls), so the answer is worked out once per combination (by matchRoutes) and kept
 * in a small tree, walked one step per matched catch-all and one for the plain route: a
 * request whose combination is known allocates nothing here.
 */
export class RouteTable<T> {
  private readonly routes: readonly CompiledRoute[];
  private readonly build: (match: RouteMatch) => T;
  private readonly root: MatchNode<T> = { value: undefined, next: [] };
  private readonly view = new PathView();

  constructor(routes: readonly CompiledRoute[], build: (match: RouteMatch) => T) {
    this.routes = routes;
    this.build = build;
  }

  /** method: upper case. */
  lookup(method: string, url: string): T {
    const view = this.view;
    view.read(url);
    let node = this.root;
    let best: CompiledRoute | null = null;
    for (const route of this.routes) {
      if (!methodMatches(route.method, method)) continue;
      const length = route.segments.length;
      if ((route.wildcard ? view.count < length : view.count !== length) || !view.matches(route.segments)) continue;
      if (route.wildcard) node = step(node, route.index);
      else if (best === null || moreSpecific(route, best)) best = route;
    }
    // the last step: the plain route (index), or none (one past the last index)
    node = step(node, best === null ? this.routes.length : best.index);
    if (node.value === undefined) node.value = this.build(matchRoutes(this.routes, method, pathSegments(url)));
    return node.value;
  }
}

function step<T>(node: MatchNode<T>, index: number): MatchNode<T> {
  let next = node.next[index];
  if (next === undefined) {
    next = { value: undefined, next: [] };
    node.next[index] = next;
  }
  return next;
}

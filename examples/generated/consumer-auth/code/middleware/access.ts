// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The access lists, checked before any rule and before any store call: the deny list (a
 * refusal with the design's status), the allowlist (the rules of its tiers are skipped), and
 * the penalty box (penalty.ts). Also the custom identity functions (options.identities),
 * joined with identify().
 */
import { inCidr, parseCidr } from './client-ip.js';
import type { Cidr, Client, ClientMemo, IpBytes } from './client-ip.js';
import { IDENTITY_FIELD, identityValue, textOf } from './keys.js';
import { PROBLEM_JSON } from './responses.js';
import { compileRoute, RouteTable } from './routes.js';
import type { AccessMetrics } from './metrics.js';
import type { PenaltyBox } from './penalty.js';
import type {
  AccessIdentitySpec,
  AccessSpec,
  CustomIdentityKind,
  Decision,
  LimiterOptions,
  RequestIdentity,
  RuleMode,
  RuleSpec,
} from './types.js';

/** The fields of the problem+json body a denied request gets. */
export function deniedFields(docsUrl: string, status: number): Record<string, unknown> {
  return {
    type: docsUrl + '#access-denied',
    title: status === 403 ? 'Forbidden' : 'Request refused',
    status,
    code: 'ACCESS_DENIED',
    detail: 'This client may not call this API.',
    documentation: docsUrl,
  };
}

/** An allow or deny list: addresses and identity values. */
class AccessList {
  private readonly cidrs: readonly Cidr[];
  private readonly values: ReadonlyMap<string, ReadonlySet<string>>;
  readonly byAddress: boolean;

  constructor(cidrs: readonly string[], identities: readonly AccessIdentitySpec[]) {
    this.cidrs = cidrs.map(parseCidr);
    this.byAddress = this.cidrs.length > 0;
    const values = new Map<string, Set<string>>();
    for (const i of identities) {
      let set = values.get(i.kind);
      if (!set) values.set(i.kind, (set = new Set()));
      set.add(i.value);
    }
    this.values = values;
  }

  /**
   * Whether the address or an identity value is listed. Values are read as the rules key them
   * (identityValue: 42 is "42", ["k"] is "k"); with eachGiven (the deny list), a value given
   * several times (a repeated header read as an array) also matches when any one of them is
   * listed, so repeating a header does not get a denied value past the list.
   */
  matches(ip: IpBytes | null, identity: RequestIdentity, eachGiven: boolean): boolean {
    if (ip !== null) for (const c of this.cidrs) if (inCidr(ip, c)) return true;
    for (const [kind, set] of this.values) {
      const value = identityValue(kind as AccessIdentitySpec['kind'], identity);
      if (value === undefined) continue;
      if (set.has(value)) return true;
      const given: unknown = identity[IDENTITY_FIELD[kind as AccessIdentitySpec['kind']]];
      if (eachGiven && Array.isArray(given)) for (const v of given) if (set.has(textOf(v) ?? '')) return true;
    }
    return false;
  }
}

/** What the limiter asks of the access lists for one request. */
export interface Gate<TReq> {
  /**
   * Runs the request through the lists, then (unless they decided it) through next with the
   * modes of the rules it skips set to off. specs and modes: the rules that apply, in order.
   */
  run(
    request: ClientMemo<TReq>,
    identity: RequestIdentity,
    specs: readonly RuleSpec[],
    modes: readonly RuleMode[],
    next: (modes: readonly RuleMode[]) => Promise<Decision>,
  ): Promise<Decision>;
}

/**
 * The access lists of a design, or null when it has none (the limiter then calls no hook).
 * clientOf: the request's client, worked out once and shared with the rules (the lists match
 * its address whole, the penalty box keys on its key text).
 */
export function createGate<TReq>(
  spec: AccessSpec | undefined,
  docsUrl: string,
  clientOf: (request: ClientMemo<TReq>) => Client,
  penalty: PenaltyBox | null,
  counts: AccessMetrics,
): Gate<TReq> | null {
  if (!spec || (spec.allow === null && spec.deny === null && penalty === null)) return null;
  const deny = spec.deny === null ? null : new AccessList(spec.deny.cidrs, spec.deny.identities);
  const denied: Decision | null =
    spec.deny === null
      ? null
      : {
          status: spec.deny.status,
          headers: [],
          body: JSON.stringify(deniedFields(docsUrl, spec.deny.status)),
          contentType: PROBLEM_JSON,
          ruleId: null,
          exempt: false,
          outcomes: [],
          access: 'denied',
        };
  const allow = spec.allow === null ? null : new AccessList(spec.allow.cidrs, spec.allow.identities);
  const allowTiers = new Set(spec.allow?.tiers ?? []);
  const allowRoutes =
    spec.allow === null || spec.allow.routes.length === 0
      ? null
      : new RouteTable<boolean>(
          spec.allow.routes.map((r, i) => compileRoute({ method: r.method, route: r.route, endpoint: null, exempt: false }, i)),
          (match) => match.best !== null || match.wildcards.length > 0,
        );
  const byAddress = (deny?.byAddress ?? false) || (allow?.byAddress ?? false);
  return {
    run(request, identity, specs, modes, next) {
      const ip = byAddress ? clientOf(request).address : null;
      if (deny?.matches(ip, identity, true)) {
        counts.denied.inc();
        return Promise.resolve(denied as Decision);
      }
      let effective = modes;
      let allowed = false;
      const input = request.input;
      if (allow !== null && (allow.matches(ip, identity, false) || allowRoutes?.lookup(input.method.toUpperCase(), input.url) === true)) {
        effective = modes.map((m, i) => (allowTiers.has((specs[i] as RuleSpec).tier) ? 'off' : m));
        allowed = true;
        counts.allowlisted.inc();
      }
      const mark = (d: Decision): Decision => (allowed && d.status === 200 ? { ...d, access: 'allowed' } : d);
      if (penalty === null) return allowed ? next(effective).then(mark) : next(effective);
      return penalty.guard(request, identity, specs, effective, clientOf, (m) => next(m).then(mark));
    },
  };
}

/** identify() joined with the custom identity functions, or identify() itself when there are none. */
export function withCustomIdentities<TReq>(
  design: AccessSpec | undefined,
  options: LimiterOptions<TReq>,
): LimiterOptions<TReq>['identify'] {
  const identify = options.identify;
  const kinds: readonly CustomIdentityKind[] = design?.customIdentities ?? [];
  const fns = options.identities ?? {};
  for (const kind of kinds) {
    if (typeof fns[kind] !== 'function') {
      throw new Error(
        "rate limiter: this design takes the '" +
          kind +
          "' identity from a function of your own; pass options.identities['" +
          kind +
          "'] (see the design document, Enforcement)",
      );
    }
  }
  const own = (Object.keys(fns) as CustomIdentityKind[]).filter((k) => k !== 'ip' && typeof fns[k] === 'function');
  if (own.length === 0) return identify;
  const join = (req: TReq, base: RequestIdentity | undefined): RequestIdentity => {
    const out: { -readonly [K in keyof RequestIdentity]: RequestIdentity[K] } = { ...base };
    for (const kind of own) {
      const value = (fns[kind] as (req: TReq) => string | undefined)(req);
      if (value === undefined) continue;
      if (kind === 'api-key') out.apiKey = value;
      else if (kind === 'user') out.userId = value;
      else if (kind === 'tenant') out.tenantId = value;
      else if (kind === 'session') out.sessionId = value;
      else out.username = value;
    }
    return out;
  };
  return (req: TReq) => {
    const base = identify ? identify(req) : undefined;
    if (base !== undefined && base !== null && typeof (base as { then?: unknown }).then === 'function') {
      return (base as Promise<RequestIdentity | undefined>).then((b) => join(req, b));
    }
    return join(req, base as RequestIdentity | undefined);
  };
}

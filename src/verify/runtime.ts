/**
 * The shipped runtime, driven by verify. Every scenario runs its rule through the code users
 * get: createLimiter() of src/runtime/middleware/ for an inbound rule, the OutboundClient of
 * src/runtime/outbound/ for an outbound one, with the Lua scripts this run loaded.
 *
 * The data each limiter is given is the design's own (designData(compileDesign(design)), what
 * the generated design.ts exports) narrowed to the rule under test, with:
 *  - the rule's numbers as the scenario runs them (shapes.ts scales them so counts stay exact
 *    and waits short, and says so);
 *  - its key pattern behind the run's key prefix and a head naming the rule and the scenario
 *    (`rl-verify:<run>:r<n>:<scenario>-<serial>:` + the rule's pattern), so cleanup and the
 *    TTL scan find every key and each probe starts on fresh keys;
 *  - one route per cost the scenario sends (the rule's weighted endpoints keep their names,
 *    so the runtime picks their cost from the rule's own table), every rule in enforce mode,
 *    no in-process bucket in front (the store is what is tested), no trusted proxy.
 * The caller's identity comes from the identify() hook, as in an application.
 *
 * Between the runtime and Redis sits a thin pass-through client: it notes the keys every
 * script call touches (for the TTL check) and the last reply (the outbound client does not
 * expose the bucket's remaining count). With the testing hook's `<name>.consume.lua` it also
 * runs that second script after every admitting call, which is how a limiter whose check and
 * consume are two script calls is modelled.
 */
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { compileDesign, designData } from '../codegen/middleware/index.js';
import { outboundProviders } from '../codegen/outbound/client.js';
import type { Design, MatrixRule } from '../design/model.js';
import { createLimiter } from '../runtime/middleware/limiter.js';
import type {
  DesignData,
  HybridSpec,
  RateLimiter,
  RedisClientLike,
  RequestIdentity,
  RouteSpec,
  RuleSpec,
  ScriptSpec,
} from '../runtime/middleware/types.js';
import { OutboundClient, OutboundLimitError } from '../runtime/outbound/client.js';
import type { ScriptClient } from './redis.js';
import type { ScriptSet } from './scripts.js';
import type { Shape } from './shapes.js';

/** Per store call (the runtime's timeoutMs and the outbound client's storeTimeoutMs): the store connections' own timeout. */
export const STORE_TIMEOUT_MS = 5000;

/** What verify reads from one runtime decision. */
export interface Verdict {
  allowed: boolean;
  /** 200 admitted, 429 refused by the limit, 503 refused because the store failed (fail closed). */
  status: 200 | 429 | 503;
  remaining: number;
  /** ms; 0 when admitted; -1 "never" (the request can not fit); a 503: its Retry-After. */
  retryAfterMs: number;
  resetMs: number;
  /** The Retry-After header of a refusal, seconds. */
  retryAfterHeader?: number;
  /** The rule that refused. */
  deniedBy?: string;
  /** Admitted only because the store failed and the rule fails open. */
  failOpen: boolean;
  /** Decided in the process's memory because the store failed (the memory fallback of a fail-open rule). */
  fallback?: true;
  /** Why the call reached no decision of the store (a store error, or the rule did not apply). */
  error?: string;
  latencyMs: number;
}

/** A documentation address (RFC 5737) for the n-th client. */
export function testIp(n: number): string {
  return `198.51.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** EVALSHA, and EVAL when the server does not have the script. */
async function evalScript(
  client: ScriptClient,
  script: { sha1: string; source: string },
  numKeys: number,
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha1, numKeys, ...args);
  } catch (error) {
    if (!message(error).startsWith('NOSCRIPT')) throw error;
    return await client.eval(script.source, numKeys, ...args);
  }
}

/** The pass-through client: keys and replies noted, the testing hook's consume script run. */
function tap(client: ScriptClient, scripts: ScriptSet, seen: (keys: string[], reply: unknown) => void): RedisClientLike {
  const consumeOf = new Map<string, { sha1: string; source: string }>();
  for (const s of scripts.values()) {
    if (!s.consume) continue;
    consumeOf.set(s.sha1, s.consume);
    consumeOf.set(s.source, s.consume);
  }
  const after = async (id: string, numKeys: number, args: (string | number)[], reply: unknown): Promise<unknown> => {
    seen(args.slice(0, numKeys).map(String), reply);
    const consume = consumeOf.get(id);
    if (consume && Array.isArray(reply) && Number(reply[0]) === 1) await evalScript(client, consume, numKeys, args);
    return reply;
  };
  // ioredis's undecoded variants too (Redis and Cluster have them; the typings list them for
  // Redis only): the runtime calls those when a client has them
  const buffers = client as unknown as Required<Pick<RedisClientLike, 'evalshaBuffer' | 'evalBuffer'>>;
  return {
    evalsha: async (sha1, numKeys, ...args) => after(sha1, numKeys, args, await client.evalsha(sha1, numKeys, ...args)),
    eval: async (source, numKeys, ...args) => after(source, numKeys, args, await client.eval(source, numKeys, ...args)),
    evalshaBuffer: async (sha1, numKeys, ...args) => after(sha1, numKeys, args, await buffers.evalshaBuffer(sha1, numKeys, ...args)),
    evalBuffer: async (source, numKeys, ...args) => after(source, numKeys, args, await buffers.evalBuffer(source, numKeys, ...args)),
  };
}

/** The design's data for verify: its compiled rules, and the rest with this run's scripts and no rules. */
export interface VerifyData {
  /** What the generated design.ts exports, with the run's scripts, no routes and no rules. */
  base: DesignData;
  /** The compiled spec of every rule the middleware enforces, by id. */
  specs: ReadonlyMap<string, RuleSpec>;
}

export function verifyData(design: Design, scripts: ScriptSet): VerifyData {
  const data = designData(compileDesign(design));
  const own: ScriptSpec[] = [];
  // the scripts the generated design.ts ships for its rules (the penalty box's is not run: a probe's
  // caller is never boxed), each from the run's script set
  for (const { name } of data.scripts) {
    if (name === 'penalty') continue;
    const s = scripts.get(name);
    if (s) own.push({ name, file: s.file, sha1: s.sha1, source: s.source });
  }
  return {
    // the rules alone: no access lists or memory fallback (a probe's caller is never allowlisted, denied or boxed)
    base: { ...data, trustedProxies: [], defaultMode: 'enforce', hybrid: null, scripts: own, routes: [], rules: [], access: undefined },
    specs: new Map(data.rules.map((r) => [r.id, r])),
  };
}

/** One rule of a probe: its compiled spec, the numbers it runs with, the key head. */
export interface ProbeRule {
  spec: RuleSpec;
  shape: Shape;
  /** Rule number, for the key head. */
  number: number;
}

/** Who sends a request: the identity serial, and the client address serial (default: the same). */
export interface Who {
  id: number;
  ip?: number;
}

const COST_PREFIX = 'rl-verify-cost-';

function identityOf(rules: readonly RuleSpec[], who: Who): RequestIdentity {
  const v = `verify-${who.id}`;
  const identity: { -readonly [K in keyof RequestIdentity]: RequestIdentity[K] } = {};
  for (const r of rules) {
    if (r.plan !== null) identity.plan = r.plan;
    switch (r.identity) {
      case 'api-key':
        identity.apiKey = v;
        break;
      case 'user':
        identity.userId = v;
        break;
      case 'tenant':
        identity.tenantId = v;
        break;
      case 'session':
        identity.sessionId = v;
        break;
      case 'username':
        identity.username = v;
        break;
      default:
        break;
    }
  }
  return identity;
}

/** What a harness is handed by the run: where keys go, where latencies go. */
export interface ProbeSink {
  /** The run's key prefix (ends in ':'). */
  runPrefix: string;
  /** A fresh serial for keys and identities. */
  serial(): number;
  /** Every key a script call touched, with the longest TTL its rule's parameters allow. */
  wrote(key: string, maxTtlMs: number): void;
  sample(ms: number): void;
  /** Limiters and clients to close when the scenario ends. */
  opened(close: () => void): void;
}

/**
 * createLimiter() on the data of one scenario: the rules under test (one, or the two rows of
 * dual-key auth, checked in one script call), on the main connection and on each pool
 * connection (several app instances sharing one Redis).
 */
export class InboundProbe {
  readonly serial: number;
  /** Every key the runtime's script calls touched, in order. */
  readonly keys: string[] = [];
  lastKeys: string[] = [];
  private readonly limiters: RateLimiter<RequestIdentity>[];
  private readonly errors: unknown[] = [];
  private readonly specs: RuleSpec[];
  private readonly endpoints: string[];

  constructor(
    base: DesignData,
    rules: readonly ProbeRule[],
    scenario: string,
    clients: readonly ScriptClient[],
    scripts: ScriptSet,
    readonly registry: Registry,
    private readonly sink: ProbeSink,
    costs: readonly number[] = [],
    /** The local + Redis hybrid on: each limiter (one per connection, an instance) keeps its own local buckets. */
    hybrid?: HybridSpec,
    /** The memory fallback on: while the store fails, each limiter (an instance) counts fail-open rules itself. */
    memoryFallback = false,
  ) {
    this.serial = sink.serial();
    const allCosts = [...new Set([1, ...costs.map((c) => Math.max(1, Math.round(c)))])];
    this.endpoints = [...new Set(rules.flatMap((r) => r.spec.costByEndpoint.map(([name]) => name)))];
    const routes: RouteSpec[] = [
      ...allCosts.map((c) => ({ method: 'POST', route: `/rl-verify/cost-${c}`, endpoint: `${COST_PREFIX}${c}`, exempt: false })),
      ...this.endpoints.map((name, i) => ({ method: 'POST', route: `/rl-verify/endpoint-${i}`, endpoint: name, exempt: false })),
    ];
    const maxTtl = new Map<string, number>();
    this.specs = rules.map((r) => {
      const head = `r${r.number}:${scenario}-${this.serial}:`;
      maxTtl.set(`${sink.runPrefix}${head}`, r.shape.maxTtlMs);
      return {
        ...r.spec,
        key: head + r.spec.key,
        routes: routes.map((_, i) => i),
        limit: r.shape.limit,
        periodSeconds: r.shape.periodMs / 1000,
        burst: r.shape.burst,
        window: r.shape.window ?? r.spec.window,
        costByEndpoint: [...r.spec.costByEndpoint, ...allCosts.map((c): [string, number] => [`${COST_PREFIX}${c}`, c])],
        store: 'redis',
        hybrid: hybrid !== undefined,
        flag: null,
      };
    });
    const data: DesignData = {
      ...base,
      routes,
      rules: this.specs,
      hybrid: hybrid ?? null,
      ...(memoryFallback ? { access: { allow: null, deny: null, penalty: null, customIdentities: [], memoryFallback: true } } : {}),
    };
    const seen = (keys: string[]): void => {
      this.lastKeys = keys;
      for (const key of keys) {
        this.keys.push(key);
        for (const [head, ttl] of maxTtl) if (key.startsWith(head)) sink.wrote(key, ttl);
      }
    };
    this.limiters = clients.map((client) =>
      createLimiter<RequestIdentity>(data, {
        redis: tap(client, scripts, seen),
        identify: (req) => req,
        defaultMode: 'enforce',
        keyPrefix: sink.runPrefix.slice(0, -1),
        timeoutMs: STORE_TIMEOUT_MS,
        registry,
        hybrid: hybrid !== undefined,
        onStoreError: (error) => this.errors.push(error),
      }),
    );
    for (const l of this.limiters) sink.opened(() => l.close());
  }

  /** Limiters on this many connections (main first). */
  get connections(): number {
    return this.limiters.length;
  }

  /** One request of `cost` (a route whose endpoint costs that much), from the probe's own caller. */
  call(cost: number, connection = 0): Promise<Verdict> {
    return this.as({ id: this.serial }, cost, connection);
  }

  /** One request of `cost` from a given caller. */
  as(who: Who, cost = 1, connection = 0): Promise<Verdict> {
    return this.request(`/rl-verify/cost-${Math.max(1, Math.round(cost))}`, who, connection);
  }

  /** One request to a weighted endpoint of the rule: the runtime picks its cost. */
  endpoint(name: string, who: Who = { id: this.serial }): Promise<Verdict> {
    const i = this.endpoints.indexOf(name);
    if (i < 0) throw new Error(`no route for endpoint ${name}`);
    return this.request(`/rl-verify/endpoint-${i}`, who, 0);
  }

  private async request(url: string, who: Who, connection: number): Promise<Verdict> {
    const limiter = this.limiters[connection % this.limiters.length]!;
    const identity = identityOf(this.specs, who);
    const errorsBefore = this.errors.length;
    const t0 = performance.now();
    const decision = await limiter.check({
      method: 'POST',
      url,
      remoteAddress: testIp(who.ip ?? who.id),
      forwardedFor: undefined,
      req: identity,
    });
    const latencyMs = performance.now() - t0;
    this.sink.sample(latencyMs);
    const ruleId = this.specs[0]!.id;
    const storeError = this.errors.length > errorsBefore ? message(this.errors[errorsBefore]) : undefined;
    const header = decision.headers.find(([name]) => name.toLowerCase() === 'retry-after');
    const retryAfterHeader = header ? Number(header[1]) : undefined;
    const withHeader = retryAfterHeader !== undefined ? { retryAfterHeader } : {};
    if (decision.status === 503) {
      return {
        allowed: false,
        status: 503,
        remaining: 0,
        retryAfterMs: (retryAfterHeader ?? 0) * 1000,
        resetMs: 0,
        ...withHeader,
        ...(decision.ruleId ? { deniedBy: decision.ruleId } : {}),
        failOpen: false,
        error: storeError ?? 'the store failed',
        latencyMs,
      };
    }
    if (decision.status === 429) {
      const denied = decision.outcomes.find((o) => o.ruleId === decision.ruleId && !o.allowed);
      return {
        allowed: false,
        status: 429,
        remaining: denied?.remaining ?? 0,
        retryAfterMs: denied?.retryAfterMs ?? 0,
        resetMs: denied?.resetMs ?? 0,
        ...withHeader,
        ...(decision.ruleId ? { deniedBy: decision.ruleId } : {}),
        failOpen: false,
        ...(denied?.source === 'fallback' ? { fallback: true as const } : {}),
        latencyMs,
      };
    }
    const own = decision.outcomes.find((o) => o.ruleId === ruleId);
    if (!own)
      return {
        allowed: true,
        status: 200,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 0,
        failOpen: false,
        error: `the runtime did not check ${ruleId} for this request`,
        latencyMs,
      };
    const failOpen = own.source === 'store-failed';
    return {
      allowed: true,
      status: 200,
      remaining: own.remaining,
      retryAfterMs: 0,
      resetMs: own.resetMs,
      failOpen,
      ...(failOpen ? { error: storeError ?? 'the store failed' } : {}),
      ...(own.source === 'fallback' ? { fallback: true as const } : {}),
      latencyMs,
    };
  }
}

/** The sum of a counter's series for a rule, as Prometheus would scrape it. */
export async function counted(registry: Registry, name: string, ruleId: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.filter((v) => v.labels.rule === ruleId).reduce((sum, v) => sum + v.value, 0);
}

/**
 * The OutboundClient on one test bucket: the rule's provider as the generated providers.ts
 * holds it, with the scenario's numbers and a fresh key. Every call is scheduled in enforce
 * mode with no wait allowed, so "admitted" means the provider function ran at once, and a
 * refusal carries the wait the bucket asked for. The circuit is left out (its threshold out of
 * reach): it runs in each process and the scenarios test the shared bucket.
 */
export class OutboundProbe {
  readonly serial: number;
  readonly key: string;
  private readonly clients: OutboundClient[];
  private readonly name: string;
  private lastReply: number[] = [];
  /** store_failure events the clients reported. */
  storeFailures = 0;
  private readonly limit: { burst: number; rate: number; periodMs: number };

  constructor(
    design: Design,
    rule: MatrixRule,
    number: number,
    shape: Shape,
    scenario: string,
    clients: readonly ScriptClient[],
    scripts: ScriptSet,
    private readonly sink: ProbeSink,
    maxTtlMs = shape.maxTtlMs,
  ) {
    const provider = outboundProviders(design).find((p) => p.ruleId === rule.id);
    const script = scripts.get('outbound-bucket');
    if (!provider) throw new Error(`no provider of the design is limited by ${rule.id}`);
    if (!script) throw new Error('script outbound-bucket is missing');
    this.serial = sink.serial();
    this.name = provider.name;
    this.key = `${sink.runPrefix}r${number}:${scenario}-${this.serial}:${provider.key || `{out:${provider.name}}:bucket`}`;
    this.limit = { burst: shape.burst ?? shape.capacity, rate: shape.limit, periodMs: shape.periodMs };
    const limit = { name: provider.name, ruleId: rule.id, key: this.key, shared: true, ...this.limit };
    const data = {
      providers: { [provider.name]: limit },
      circuit: { failureThreshold: Number.MAX_SAFE_INTEGER, windowMs: 1, openMs: 1, halfOpenProbes: 1 },
      script: { sha1: script.sha1, source: script.source },
    };
    const seen = (keys: string[], reply: unknown): void => {
      for (const k of keys) sink.wrote(k, maxTtlMs);
      if (Array.isArray(reply)) this.lastReply = reply.map(Number);
    };
    this.clients = clients.map(
      (client) =>
        new OutboundClient(
          {
            redis: tap(client, scripts, seen),
            maxWaitMs: 0,
            storeTimeoutMs: STORE_TIMEOUT_MS,
            defaultMode: 'enforce',
            onEvent: (event) => {
              if (event.type === 'store_failure') this.storeFailures++;
            },
          },
          data,
        ),
    );
  }

  get connections(): number {
    return this.clients.length;
  }

  /** One provider call of `cost` slots; admitted when the client let it run at once. */
  call(cost: number, connection = 0): Promise<Verdict> {
    return this.schedule(() => ({ status: 200 }), cost, connection);
  }

  /** A provider call answered 429 with this Retry-After: the client pauses the shared bucket. */
  provider429(retryAfterMs: number): Promise<Verdict> {
    return this.schedule(() => ({ status: 429, headers: { 'retry-after': String(retryAfterMs / 1000) } }), 1, 0);
  }

  private async schedule(fn: () => unknown, cost: number, connection: number): Promise<Verdict> {
    const client = this.clients[connection % this.clients.length]!;
    let ran = false;
    const t0 = performance.now();
    try {
      await client.schedule(
        this.name as never,
        () => {
          ran = true;
          return fn();
        },
        { cost, maxWaitMs: 0 },
      );
      const latencyMs = performance.now() - t0;
      this.sink.sample(latencyMs);
      return {
        allowed: ran,
        status: 200,
        remaining: this.lastReply[2] ?? 0,
        retryAfterMs: 0,
        resetMs: this.lastReply[3] ?? 0,
        failOpen: false,
        latencyMs,
      };
    } catch (error) {
      const latencyMs = performance.now() - t0;
      this.sink.sample(latencyMs);
      if (!(error instanceof OutboundLimitError))
        return { allowed: ran, status: 200, remaining: 0, retryAfterMs: 0, resetMs: 0, failOpen: false, error: message(error), latencyMs };
      if (error.code === 'STORE_UNAVAILABLE') {
        return {
          allowed: ran,
          status: 503,
          remaining: 0,
          retryAfterMs: 0,
          resetMs: 0,
          failOpen: false,
          error: `${error.code}: ${message(error.storeError)}`,
          latencyMs,
        };
      }
      const retryAfterMs = error.code === 'COST_TOO_HIGH' ? -1 : (error.retryAfterMs ?? 0);
      const refused = {
        allowed: ran,
        status: 429 as const,
        remaining: this.lastReply[2] ?? 0,
        retryAfterMs,
        resetMs: this.lastReply[3] ?? 0,
        failOpen: false,
        latencyMs,
      };
      return error.code === 'WAIT_TOO_LONG' || error.code === 'COST_TOO_HIGH'
        ? refused
        : { ...refused, error: `${error.code}: ${error.message}` };
    }
  }
}

// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The penalty box: a caller refused again and again by the rules it follows (the auth rows, by
 * default) is blocked for a while on their routes. The caller is its own identity (API key,
 * user, tenant, session, else the client address), never the account name being tried. The
 * counter and the box live in Redis (penalty.lua, one atomic call, both keys with a TTL), or
 * in this process when the design keeps no state in Redis.
 */
import type { Client, ClientMemo } from './client-ip.js';
import { IDENTITY_LABEL, identityValue, keyPart } from './keys.js';
import type { CounterCell } from './metrics.js';
import { PROBLEM_JSON, silentProblemFields } from './responses.js';
import { isNoScript, StoreError } from './store.js';
import type { Decision, DesignData, RedisClientLike, RequestIdentity, RuleMode, RuleSpec, RuleTier, ScriptSpec } from './types.js';

export interface PenaltySettings {
  readonly tiers: readonly RuleTier[];
  readonly refusals: number;
  readonly withinSeconds: number;
  readonly blockSeconds: number;
}

interface Entry {
  strikes: number;
  strikesUntil: number;
  boxUntil: number;
}

const CALLER_ORDER = ['api-key', 'user', 'tenant', 'session'] as const;

/**
 * The caller's own identity as a key part: label and value, best first (values as the rules read
 * them). `ip` gives the client's key text, already safe for a key (a formatted address, or the
 * custom client-IP function's text escaped once), so the box and the per-IP rules key it alike.
 */
function callerOf(identity: RequestIdentity, ip: () => string): string {
  for (const kind of CALLER_ORDER) {
    const value = identityValue(kind, identity);
    if (value !== undefined) return IDENTITY_LABEL[kind] + keyPart(value);
  }
  return IDENTITY_LABEL.ip + ip();
}

export class PenaltyBox {
  private readonly settings: PenaltySettings;
  private readonly tiers: ReadonlySet<RuleTier>;
  private readonly script: ScriptSpec | null;
  private readonly redis: RedisClientLike | null;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly docsUrl: string;
  private readonly onError: (error: unknown) => void;
  private readonly refused: CounterCell;
  private readonly memory = new Map<string, Entry>();
  private writes = 0;

  constructor(
    settings: PenaltySettings,
    script: ScriptSpec | null,
    redis: RedisClientLike | null,
    prefix: string,
    timeoutMs: number,
    docsUrl: string,
    onError: (error: unknown) => void,
    refused: CounterCell,
  ) {
    this.settings = settings;
    this.tiers = new Set(settings.tiers);
    this.script = script;
    this.redis = script === null ? null : redis;
    this.prefix = prefix;
    this.timeoutMs = timeoutMs;
    this.docsUrl = docsUrl;
    this.onError = onError;
    this.refused = refused;
  }

  /**
   * A request that meets an enforced rule the box follows: refused at once while its caller is
   * in the box; otherwise decided by next, and a refusal by one of those rules counted.
   */
  guard<TReq>(
    request: ClientMemo<TReq>,
    identity: RequestIdentity,
    specs: readonly RuleSpec[],
    modes: readonly RuleMode[],
    clientOf: (request: ClientMemo<TReq>) => Client,
    next: (modes: readonly RuleMode[]) => Promise<Decision>,
  ): Promise<Decision> {
    let follows = false;
    for (let i = 0; i < specs.length; i++) if (modes[i] === 'enforce' && this.tiers.has((specs[i] as RuleSpec).tier)) follows = true;
    if (!follows) return next(modes);
    const base = this.prefix + ':{pb:' + callerOf(identity, () => clientOf(request).key) + '}';
    return this.call(base, 'check').then((left) => {
      if (left > 0) return this.boxed(left);
      return next(modes).then((decision) => {
        const rule = decision.status === 429 && decision.ruleId !== null ? specs.find((s) => s.id === decision.ruleId) : undefined;
        if (rule === undefined || !this.tiers.has(rule.tier)) return decision;
        return this.call(base, 'strike').then(() => decision);
      });
    });
  }

  private boxed(leftMs: number): Decision {
    const retryAfter = Math.max(1, Math.ceil(leftMs / 1000));
    this.refused.inc();
    return {
      status: 429,
      headers: [['Retry-After', String(retryAfter)]],
      body: JSON.stringify(silentProblemFields(this.docsUrl, retryAfter)),
      contentType: PROBLEM_JSON,
      ruleId: null,
      exempt: false,
      outcomes: [],
      access: 'penalty-box',
    };
  }

  /** ms until the box opens (0: not in it); a store that fails leaves the caller out of the box. */
  private call(base: string, op: 'check' | 'strike'): Promise<number> {
    if (this.redis === null || this.script === null) return Promise.resolve(this.local(base, op));
    const s = this.settings;
    const keys = [base + ':strikes', base + ':box'];
    const args = [op, s.refusals, s.withinSeconds * 1000, s.blockSeconds * 1000];
    const redis = this.redis;
    const script = this.script;
    const sent = redis
      .evalsha(script.sha1, 2, ...keys, ...args)
      .catch((error: unknown) => (isNoScript(error) ? redis.eval(script.source, 2, ...keys, ...args) : Promise.reject(error)));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreError('timeout', 'rate limiter store did not answer within ' + this.timeoutMs + ' ms')),
        this.timeoutMs,
      );
    });
    return Promise.race([sent, deadline]).then(
      (raw) => {
        clearTimeout(timer);
        const reply = raw as readonly unknown[];
        return Array.isArray(reply) && Number(reply[0]) === 1 ? Math.max(1, Number(reply[1])) : 0;
      },
      (error: unknown) => {
        clearTimeout(timer);
        this.onError(error);
        return 0;
      },
    );
  }

  /** The same as penalty.lua, in this process. */
  private local(base: string, op: 'check' | 'strike'): number {
    const now = Date.now();
    let entry = this.memory.get(base);
    if (entry !== undefined && entry.boxUntil <= now && entry.strikesUntil <= now) {
      this.memory.delete(base);
      entry = undefined;
    }
    if (entry !== undefined && entry.boxUntil > now) return entry.boxUntil - now;
    if (op === 'check') return 0;
    if (entry === undefined || entry.strikesUntil <= now) {
      entry = { strikes: 0, strikesUntil: now + this.settings.withinSeconds * 1000, boxUntil: 0 };
      this.memory.set(base, entry);
      if (++this.writes % 1000 === 0) {
        for (const [k, e] of this.memory) if (e.boxUntil <= now && e.strikesUntil <= now) this.memory.delete(k);
      }
    }
    entry.strikes++;
    if (entry.strikes >= this.settings.refusals) {
      entry.strikes = 0;
      entry.strikesUntil = 0;
      entry.boxUntil = now + this.settings.blockSeconds * 1000;
      return this.settings.blockSeconds * 1000;
    }
    return 0;
  }

  clear(): void {
    this.memory.clear();
  }
}

/** The penalty box of a design, or null when it has none. */
export function createPenaltyBox(
  design: DesignData,
  redis: RedisClientLike | null,
  prefix: string,
  timeoutMs: number,
  onStoreError: ((error: unknown, ruleIds: readonly string[]) => void) | undefined,
  refused: CounterCell,
): PenaltyBox | null {
  const spec = design.access?.penalty ?? null;
  if (spec === null) return null;
  const script = design.scripts.find((s) => s.name === 'penalty') ?? null;
  return new PenaltyBox(spec, script, redis, prefix, timeoutMs, design.docsUrl, (error) => onStoreError?.(error, ['penalty-box']), refused);
}

/** What every scenario gets: the rule, and probes that drive the shipped runtime on fresh keys under the run's prefix. */
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import type { Design, FailMode, MatrixRule, WorstCaseMeasurement } from '../../design/model.js';
import type { HybridSpec, RuleSpec } from '../../runtime/middleware/types.js';
import type { Store } from '../redis.js';
import { InboundProbe, OutboundProbe, type ProbeRule, type ProbeSink, type Verdict, type VerifyData } from '../runtime.js';
import type { ScriptSet } from '../scripts.js';
import type { Driver, Shape } from '../shapes.js';

export interface Outcome {
  passed: boolean;
  expected: string;
  measured: string;
  /** Extra sentence for the document (scaling is added by the runner). */
  detail?: string;
  numbers?: Record<string, number>;
  params?: string;
  scaling?: string;
  /** worst-case: the rows measured. */
  measurements?: WorstCaseMeasurement[];
}

/** Keys of one run: `<run prefix>r<rule number>:<scenario>-<serial>:<the rule's key>`, as the runtime wrote them. */
export class RunKeys {
  /** Every key a script call touched, with the longest TTL it may carry. */
  readonly issued = new Map<string, { rule: number; maxTtlMs: number }>();
  private count = 0;

  constructor(readonly runPrefix: string) {}

  rulePrefix(ruleNumber: number): string {
    return `${this.runPrefix}r${ruleNumber}:`;
  }

  /** A fresh serial: each probe's key head and caller identity. */
  serial(): number {
    return ++this.count;
  }

  /** A key the runtime wrote (its rule number is in its head). */
  wrote(key: string, maxTtlMs: number): void {
    if (!key.startsWith(this.runPrefix)) return;
    const m = /^r(\d+):/.exec(key.slice(this.runPrefix.length));
    if (!m) return;
    const prev = this.issued.get(key);
    this.issued.set(key, { rule: Number(m[1]), maxTtlMs: Math.max(prev?.maxTtlMs ?? 0, maxTtlMs) });
  }

  issuedFor(ruleNumber: number): Map<string, number> {
    return new Map([...this.issued].filter(([, v]) => v.rule === ruleNumber).map(([k, v]) => [k, v.maxTtlMs]));
  }
}

/** Every call a scenario makes goes through one of these: the runtime's limiter, or its outbound client. */
export interface Probe {
  readonly serial: number;
  /** Limiters (clients) on this many connections. */
  readonly connections: number;
  /** One request (call) of `cost`, on the limiter of that connection. */
  call(cost: number, connection?: number): Promise<Verdict>;
}

export interface ProbeOptions {
  /** Costs the scenario sends besides 1 (each gets a route). */
  costs?: number[];
  /** A limiter on every pool connection instead of the main one (several app instances). */
  pool?: boolean;
  /** Longest TTL of the keys written (default: the shape's). */
  maxTtlMs?: number;
  /** The local + Redis hybrid on, with these numbers (inbound rules; one instance per connection). */
  hybrid?: HybridSpec;
  /** This many limiters (app instances) on the main connection, instead of one per connection. */
  instances?: number;
  /** The memory fallback on (inbound rules): while the store fails, each limiter counts the rule itself. */
  memoryFallback?: boolean;
}

export interface RuleContext {
  rule: MatrixRule;
  /** 1-based position of the rule in the design (used in keys). */
  number: number;
  design: Design;
  driver: Driver;
  failMode?: FailMode;
  /** The rule's spec as the generated design.ts holds it (inbound rules). */
  spec?: RuleSpec;
  /** A probe on fresh keys: createLimiter() for an inbound rule, the OutboundClient for an outbound one. */
  probe(shape: Shape, scenario: string, options?: ProbeOptions): Probe;
  /** createLimiter() on several rules checked together (dual-key auth). */
  inbound(rules: readonly ProbeRule[], scenario: string, options?: ProbeOptions): InboundProbe;
  /** The counters the runtime exported for this rule's limiters (fail-open events, store failures). */
  registry: Registry;
  data: VerifyData;
  keys: RunKeys;
  store: Store;
  /** Every key under the run's prefix (one SCAN for the whole run, shared by the TTL checks). */
  runKeys: () => Promise<string[]>;
  /** Latency of every runtime call since the last takeSamples(), ms. */
  takeSamples(): number[];
  /** Closes the limiters the scenario opened (their timers). */
  closeProbes(): void;
}

export type RuleBase = Omit<RuleContext, 'probe' | 'inbound' | 'takeSamples' | 'closeProbes'>;

/** The context of one rule: its probes run the shipped runtime on the store's connections. */
export function ruleContext(base: RuleBase, scripts: ScriptSet): RuleContext {
  let samples: number[] = [];
  let open: (() => void)[] = [];
  const sink: ProbeSink = {
    runPrefix: base.keys.runPrefix,
    serial: () => base.keys.serial(),
    wrote: (key, maxTtlMs) => base.keys.wrote(key, maxTtlMs),
    sample: (ms) => samples.push(ms),
    opened: (close) => open.push(close),
  };
  const clients = (options: ProbeOptions) =>
    options.instances !== undefined
      ? Array.from({ length: Math.max(1, options.instances) }, () => base.store.main)
      : options.pool
        ? base.store.pool
        : [base.store.main];
  const inbound = (rules: readonly ProbeRule[], scenario: string, options: ProbeOptions = {}): InboundProbe =>
    new InboundProbe(
      base.data.base,
      rules,
      scenario,
      clients(options),
      scripts,
      base.registry,
      sink,
      options.costs ?? [],
      options.hybrid,
      options.memoryFallback === true,
    );
  return {
    ...base,
    inbound,
    probe(shape, scenario, options = {}) {
      if (base.driver === 'outbound')
        return new OutboundProbe(base.design, base.rule, base.number, shape, scenario, clients(options), scripts, sink, options.maxTtlMs);
      if (!base.spec) throw new Error(`the middleware does not enforce rule ${base.rule.id} (it is not in the generated design.ts)`);
      return inbound([{ spec: base.spec, shape, number: base.number }], scenario, options);
    },
    takeSamples() {
      const s = samples;
      samples = [];
      return s;
    },
    closeProbes() {
      for (const close of open) close();
      open = [];
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until at least `ms` have passed since `since` (performance.now()): never less. */
export async function waitSince(since: number, ms: number): Promise<void> {
  for (;;) {
    const left = since + ms - performance.now();
    if (left <= 0) return;
    await sleep(Math.max(1, Math.ceil(left)));
  }
}

/** The first error among verdicts, as a failure text. */
export function errorOf(verdicts: readonly Verdict[]): string | undefined {
  const d = verdicts.find((x) => x.error !== undefined);
  return d ? `a limiter call failed: ${d.error}` : undefined;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
}

/** Sends `count` requests one after the other; stops at the first refusal. */
export async function sendUntilRefused(
  call: (i: number) => Promise<Verdict>,
  max: number,
): Promise<{ admitted: Verdict[]; refused?: Verdict; error?: string }> {
  const admitted: Verdict[] = [];
  for (let i = 0; i < max; i++) {
    const d = await call(i);
    if (d.error) return { admitted, error: `a limiter call failed: ${d.error}` };
    if (!d.allowed) return { admitted, refused: d };
    admitted.push(d);
  }
  return { admitted };
}

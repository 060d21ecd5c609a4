/** What every scenario gets: the rule, its script's limiter clients, fresh keys under the run's prefix. */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Design, FailMode, MatrixRule } from '../../design/model.js';
import type { Decision, Limiter } from '../limiter.js';
import type { Store } from '../redis.js';
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
}

/** Keys of one run: `<run prefix>r<rule number>:<scenario>-<serial>:<the rule's key, placeholders filled>`. */
export class RunKeys {
  /** Every key handed out, with the longest TTL it may carry. */
  readonly issued = new Map<string, { rule: number; maxTtlMs: number }>();
  private serial = 0;

  constructor(readonly runPrefix: string) {}

  rulePrefix(ruleNumber: number): string {
    return `${this.runPrefix}r${ruleNumber}:`;
  }

  /**
   * A fresh key for the rule: the run prefix (no braces, so the rule's own hash tag stays the
   * tag Redis hashes), then the rule's key pattern with each `<placeholder>` filled in.
   */
  make(rule: MatrixRule, ruleNumber: number, scenario: string, shape: Pick<Shape, 'maxTtlMs' | 'period'>, fill: (placeholder: string) => string | undefined = () => undefined): string {
    const n = ++this.serial;
    const pattern = rule.key ?? `{${rule.id}}`;
    const body = pattern.replace(/<([^<>]*)>/g, (_, inner: string) => fill(inner) ?? defaultFill(inner, n, shape.period?.id));
    const key = `${this.rulePrefix(ruleNumber)}${scenario}-${n}:${body}`;
    const prev = this.issued.get(key);
    this.issued.set(key, { rule: ruleNumber, maxTtlMs: Math.max(prev?.maxTtlMs ?? 0, shape.maxTtlMs) });
    return key;
  }

  issuedFor(ruleNumber: number): Map<string, number> {
    return new Map([...this.issued].filter(([, v]) => v.rule === ruleNumber).map(([k, v]) => [k, v.maxTtlMs]));
  }
}

const PERIOD_PLACEHOLDER = /^y{4}(-m{2}(-d{2})?)?$/i;

/** A documentation address (RFC 5737) for the n-th client. */
export function testIp(n: number): string {
  return `198.51.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

export function defaultFill(inner: string, n: number, periodId?: string): string {
  if (PERIOD_PLACEHOLDER.test(inner)) return periodId ?? 'period';
  if (/ip/i.test(inner)) return testIp(n);
  const hashed = /^sha256\((.*)\)$/.exec(inner);
  if (hashed) return createHash('sha256').update(`verify-${hashed[1]}-${n}`).digest('hex');
  return `verify-${n}`;
}

export interface RuleContext {
  rule: MatrixRule;
  /** 1-based position of the rule in the design (used in keys). */
  number: number;
  design: Design;
  driver: Driver;
  failMode?: FailMode;
  /** Limiter on the main connection. */
  limiter: Limiter;
  /** Limiters on separate connections, for races. */
  pool: readonly Limiter[];
  keys: RunKeys;
  store: Store;
  /** Every key under the run's prefix (one SCAN for the whole run, shared by the TTL checks). */
  runKeys: () => Promise<string[]>;
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

/** The first store error among decisions, as a failure text. */
export function storeErrorOf(decisions: readonly Decision[]): string | undefined {
  const d = decisions.find((x) => x.storeError !== undefined);
  return d ? `a limiter call failed: ${d.storeError}` : undefined;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
}

/** Sends `count` requests one after the other; stops at the first refusal. */
export async function sendUntilRefused(
  call: (i: number) => Promise<Decision>,
  max: number,
): Promise<{ admitted: Decision[]; refused?: Decision; error?: string }> {
  const admitted: Decision[] = [];
  for (let i = 0; i < max; i++) {
    const d = await call(i);
    if (d.storeError) return { admitted, error: `a limiter call failed: ${d.storeError}` };
    if (!d.allowed) return { admitted, refused: d };
    admitted.push(d);
  }
  return { admitted };
}

/**
 * Which script enforces a rule, and the parameters each scenario runs it with.
 *
 * The numbers become the rule's spec in the data verify hands the shipped runtime
 * (src/verify/runtime.ts), exactly as a generated design.ts would hold them.
 *
 * Waits are shortened by choosing parameters, never by faking time: the scripts read the
 * Redis clock, and verify really waits every Retry-After it is told. Where a rule's own
 * numbers would make a scenario slow or inexact, the scenario runs with scaled numbers of the
 * same algorithm and says so (`scaling`):
 *  - exact counts (burst, race, cost): at most MAX_EXACT units, and a refill slow enough that
 *    no unit comes back while the requests are sent;
 *  - recovery: the rule's own burst or limit, with time compressed so Retry-After is about
 *    RECOVERY_MS.
 */
import type { LuaScriptName } from '../lua.js';
import { luaScriptFor, runBurst } from '../design/algorithms.js';
import type { Design, MatrixRule } from '../design/model.js';
import { calendarPeriod } from '../runtime/middleware/calendar.js';

export type Driver = 'gcra' | 'sliding-window-log' | 'fixed-window' | 'outbound';

export const SCRIPT_OF: Record<Driver, LuaScriptName> = {
  gcra: 'gcra',
  'sliding-window-log': 'sliding-window-log',
  'fixed-window': 'fixed-window',
  outbound: 'outbound-bucket',
};

/** Largest count sent one request at a time in the exact scenarios. */
export const MAX_EXACT = 500;
/** Shortest refill interval in the exact scenarios: no unit comes back while they run. */
export const EXACT_INTERVAL_MS = 5000;
/** Target Retry-After in the recovery scenarios. */
export const RECOVERY_MS = 100;
/** Recovery runs on the rule's own numbers when its Retry-After is within this range. */
const RECOVERY_RANGE: [number, number] = [60, 300];
/** Extra lifetime fixed-window.lua gives a calendar counter after its period ends. */
export const CALENDAR_SLACK_MS = 60_000;

const DAY_MS = 86_400_000;

export function formatMs(ms: number): string {
  if (ms >= DAY_MS && ms % DAY_MS === 0) return `${ms / DAY_MS} d`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 2 * DAY_MS) return `${Math.round((ms / DAY_MS) * 10) / 10} d`;
  if (ms >= 2 * 3_600_000) return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
  if (ms >= 1000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms * 10) / 10} ms`;
}

/** A Retry-After for people: exact ms when short, else rounded to a readable unit. */
export function formatRetry(ms: number): string {
  return ms < 10_000 ? `${ms.toLocaleString('en-US')} ms` : formatMs(ms);
}

function fmtNum(x: number): string {
  return Number.isInteger(x) ? x.toLocaleString('en-US') : String(Math.round(x * 1000) / 1000);
}

/** A rule verify can run, or why it can not. */
export type Classified = { ok: true; driver: Driver } | { ok: false; reason: string };

export function classifyRule(rule: MatrixRule, design: Design): Classified {
  if (rule.layer === 'edge' || rule.primitive === 'gateway-native') {
    const component =
      design.enforcement.layers.find((l) => l.ruleIds.includes(rule.id))?.component ??
      (design.scope.gateway !== 'none' ? design.scope.gateway : 'the gateway');
    return { ok: false, reason: `not verifiable here: enforced by ${component}` };
  }
  if (rule.primitive !== 'redis-lua') {
    const what =
      rule.primitive === 'in-process'
        ? 'an in-process counter in each instance, with no shared store to test'
        : rule.primitive
          ? `primitive ${rule.primitive}, which is not an rl-design script`
          : 'the rule names no primitive';
    return { ok: false, reason: `not verifiable here: ${what}` };
  }
  if (rule.layer !== 'middleware' && rule.layer !== 'outbound-client') {
    return { ok: false, reason: `not verifiable here: the rule names no layer that runs the scripts` };
  }
  if (!rule.rate || rule.rate.requests <= 0 || rule.rate.periodSeconds <= 0)
    return { ok: false, reason: 'not verifiable: the rule states no rate' };
  if (rule.tier === 'outbound' || rule.layer === 'outbound-client') {
    if (typeof rule.burst !== 'number' || rule.burst < 1) return { ok: false, reason: 'not verifiable: the outbound rule states no burst' };
    return { ok: true, driver: 'outbound' };
  }
  if (rule.algorithm === undefined) return { ok: false, reason: 'not verifiable here: the rule names no algorithm' };
  // the script the middleware runs it with: every algorithm but the two windows as GCRA
  return { ok: true, driver: luaScriptFor(rule.algorithm) };
}

/** The parameters one scenario runs a rule's script with. */
export interface Shape {
  driver: Driver;
  script: LuaScriptName;
  /** Cost-1 requests a fresh key admits. */
  capacity: number;
  /** Requests (tokens) per period: the bucket's rate, or the window's limit. */
  limit: number;
  /** Refill period (buckets), window (logs, fixed windows), ms; a whole number of ms in seconds too. */
  periodMs: number;
  /** Bucket capacity; null for windows. */
  burst: number | null;
  /** fixed-window: the window the runtime counts in (plan quota period, rolling, or aligned fixed). */
  window: 'calendar' | 'rolling' | 'fixed' | null;
  /** The longest TTL a key written with these parameters may carry, ms. */
  maxTtlMs: number;
  /** When a refused cost-1 request on an exhausted key may pass again: about this many ms. */
  recoverMs: number;
  /** The parameters, e.g. "burst 25, 60 per 1 min". */
  params: string;
  /** How the parameters differ from the rule's, when they do. */
  scaling?: string;
  /** fixed-window: the period the key counts in now, by the runtime's own calendar. */
  period?: { id: string; endMs: number; description: string };
}

/**
 * ms the runtime's spec can carry exactly: it holds seconds and sends seconds * 1000 to the
 * scripts, which need whole ms (PEXPIRE). The smallest such value at or above ms.
 */
export function wholeMs(ms: number): number {
  let m = Math.max(1, Math.round(ms));
  while ((m / 1000) * 1000 !== m) m++;
  return m;
}

export interface BucketNumbers {
  burst: number;
  rate: number;
  periodMs: number;
}

export function bucketShape(driver: 'gcra' | 'outbound', n: BucketNumbers, scaling?: string): Shape {
  const periodMs = wholeMs(n.periodMs);
  const intervalMs = periodMs / n.rate;
  return {
    driver,
    script: SCRIPT_OF[driver],
    capacity: n.burst,
    limit: n.rate,
    periodMs,
    burst: n.burst,
    window: null,
    maxTtlMs: Math.ceil(n.burst * intervalMs) + 1,
    recoverMs: intervalMs,
    params: `burst ${fmtNum(n.burst)}, ${fmtNum(n.rate)} per ${formatMs(periodMs)}`,
    ...(scaling ? { scaling } : {}),
  };
}

function ruleBucket(rule: MatrixRule): BucketNumbers {
  return { burst: runBurst(rule) as number, rate: rule.rate!.requests, periodMs: rule.rate!.periodSeconds * 1000 };
}

export type Purpose = 'exact' | 'recovery';

function bucketFor(driver: 'gcra' | 'outbound', rule: MatrixRule, purpose: Purpose): Shape {
  const own = ruleBucket(rule);
  const ownText = `burst ${fmtNum(own.burst)}, ${fmtNum(own.rate)} per ${formatMs(own.periodMs)}`;
  const interval = own.periodMs / own.rate;
  if (purpose === 'recovery') {
    if (interval >= RECOVERY_RANGE[0] && interval <= RECOVERY_RANGE[1]) return bucketShape(driver, own);
    const periodMs = Math.max(1, Math.round((own.periodMs * RECOVERY_MS) / interval));
    const scaled = { ...own, periodMs };
    return bucketShape(
      driver,
      scaled,
      `time scaled: ${fmtNum(own.rate)} per ${formatMs(periodMs)} instead of per ${formatMs(own.periodMs)} (one token back every ${formatMs(periodMs / own.rate)} instead of ${formatMs(interval)}), burst ${fmtNum(own.burst)} unchanged`,
    );
  }
  const burst = Math.min(own.burst, MAX_EXACT);
  if (burst === own.burst && interval >= EXACT_INTERVAL_MS) return bucketShape(driver, own);
  const notes: string[] = [];
  if (burst < own.burst) notes.push(`burst scaled down from ${fmtNum(own.burst)} to ${fmtNum(burst)}`);
  let n: BucketNumbers = { burst, rate: own.rate * (burst / own.burst), periodMs: own.periodMs };
  if (n.periodMs / n.rate < EXACT_INTERVAL_MS) {
    n = { burst, rate: 1, periodMs: EXACT_INTERVAL_MS };
    notes.push(`refill slowed to 1 token per ${formatMs(EXACT_INTERVAL_MS)} so no token comes back while the requests are sent`);
  }
  return bucketShape(driver, n, `${notes.join('; ')} (the rule: ${ownText})`);
}

function logShape(limit: number, windowMs: number, scaling?: string): Shape {
  const periodMs = wholeMs(windowMs);
  return {
    driver: 'sliding-window-log',
    script: 'sliding-window-log',
    capacity: limit,
    limit,
    periodMs,
    burst: null,
    window: null,
    maxTtlMs: periodMs,
    recoverMs: periodMs,
    params: `${fmtNum(limit)} per ${formatMs(periodMs)} (sliding log)`,
    ...(scaling ? { scaling } : {}),
  };
}

export function logFor(rule: MatrixRule, purpose: Purpose): Shape {
  const limit = rule.rate!.requests;
  const windowMs = rule.rate!.periodSeconds * 1000;
  const own = `${fmtNum(limit)} per ${formatMs(windowMs)}`;
  if (purpose === 'recovery') {
    if (windowMs >= RECOVERY_RANGE[0] && windowMs <= RECOVERY_RANGE[1]) return logShape(limit, windowMs);
    return logShape(
      limit,
      RECOVERY_MS,
      `time scaled: window ${formatMs(windowMs)} run as ${formatMs(RECOVERY_MS)}, limit ${fmtNum(limit)} unchanged`,
    );
  }
  const scaledLimit = Math.min(limit, MAX_EXACT);
  const scaledWindow = Math.max(EXACT_INTERVAL_MS, Math.round((windowMs * scaledLimit) / limit));
  if (scaledLimit === limit && scaledWindow === windowMs) return logShape(limit, windowMs);
  return logShape(
    scaledLimit,
    scaledWindow,
    `limit and window scaled to ${fmtNum(scaledLimit)} per ${formatMs(scaledWindow)} (the rule: ${own})`,
  );
}

/**
 * The window the runtime counts a fixed-window rule in: a plan quota's period (calendar, in
 * its time zone, or rolling), else a plain window aligned to the epoch. `nowMs` is the
 * runtime's clock (Date.now), which names the period the key counts.
 */
function fixedShape(rule: MatrixRule, design: Design, nowMs: number): Shape {
  const limit = rule.rate!.requests;
  const reset = rule.tier === 'quota' ? design.quotas?.reset : undefined;
  const lenMs = rule.rate!.periodSeconds * 1000;
  const base = { driver: 'fixed-window' as const, script: 'fixed-window' as const, capacity: limit, limit, periodMs: lenMs, burst: null };
  if (reset?.kind === 'rolling') {
    // the runtime's rolling window: whole days, counted in daily buckets
    const windowMs = Math.max(DAY_MS, reset.days * DAY_MS);
    return {
      ...base,
      window: 'rolling',
      maxTtlMs: windowMs,
      recoverMs: windowMs,
      params: `${fmtNum(limit)} per rolling ${reset.days} days (daily buckets)`,
      // what is used today leaves the window with today's bucket: at the start of the UTC day
      // window/bucket days from today's (fixed-window.lua counts usage per whole bucket)
      period: {
        id: 'rolling',
        endMs: Math.floor(nowMs / DAY_MS) * DAY_MS + windowMs,
        description: `rolling ${reset.days} days (today's daily bucket leaves the window)`,
      },
    };
  }
  let period: { id: string; endMs: number; description: string };
  if (reset?.kind === 'calendar') {
    const w = calendarPeriod(nowMs, reset.period, reset.timeZone);
    period = {
      id: w.id,
      endMs: w.end,
      description: `calendar ${reset.period} ${w.id} in ${reset.timeZone}, ending ${new Date(w.end).toISOString()}`,
    };
  } else {
    const index = Math.floor(nowMs / lenMs);
    period = {
      id: `w${index}`,
      endMs: (index + 1) * lenMs,
      description: `aligned ${formatMs(lenMs)} window ${index}, ending ${new Date((index + 1) * lenMs).toISOString()}`,
    };
  }
  const endMs = period.endMs;
  return {
    ...base,
    window: reset?.kind === 'calendar' ? 'calendar' : 'fixed',
    maxTtlMs: Math.max(0, endMs - nowMs) + CALENDAR_SLACK_MS,
    recoverMs: Math.max(0, endMs - nowMs),
    params: `${fmtNum(limit)} per ${period.description}`,
    period,
  };
}

/** The parameters for one scenario; `nowMs` (the runtime's clock, Date.now) places a quota's window. */
export function shapeFor(driver: Driver, rule: MatrixRule, design: Design, purpose: Purpose, nowMs: number): Shape {
  switch (driver) {
    case 'gcra':
    case 'outbound':
      return bucketFor(driver, rule, purpose);
    case 'sliding-window-log':
      return logFor(rule, purpose);
    case 'fixed-window':
      return fixedShape(rule, design, nowMs);
  }
}

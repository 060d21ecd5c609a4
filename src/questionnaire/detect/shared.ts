/**
 * Small pure helpers shared by the detectors: path handling, duration and rate arithmetic
 * (parsing YAML and JSON is io/text.ts's).
 */
import { PERIODS, type Rate } from '../../answers/schema.js';
import type { ProjectFs } from './types.js';

/** Default cap for files that detectors read whole (lockfiles and OpenAPI files get more). */
export const BIG_FILE_BYTES = 8 * 1024 * 1024;

/** Makes text from a file safe to print on a terminal: no control or bidi characters, bounded length. */
export function printable(text: string, max = 300): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

export function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** '' for a file at the root. */
export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function joinPath(dir: string, name: string): string {
  return dir === '' || dir === '.' ? name : `${dir}/${name}`;
}

/** Files under test or fixture folders describe other projects (or none): detectors skip them. */
export function isTestPath(path: string): boolean {
  return /(?:^|\/)(?:test|tests|__tests__|__fixtures__|fixtures|__mocks__)\//.test(path);
}

export function depth(path: string): number {
  let n = 0;
  for (const c of path) if (c === '/') n++;
  return n;
}

/** Shallower paths first, then by code unit order: the precedence order within one detector. */
export function comparePaths(a: string, b: string): number {
  const d = depth(a) - depth(b);
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every project file, normalised and in precedence order, whatever order the ProjectFs gives. */
export async function listAll(fs: ProjectFs): Promise<string[]> {
  const files = await fs.list('');
  return [...new Set(files.map((f) => f.replace(/\\/g, '/').replace(/^\.\//, '')))].sort(comparePaths);
}

const PERIOD_SECONDS: Record<(typeof PERIODS)[number], number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86400,
};

/**
 * `limit` requests per `windowSeconds` as a Rate: per the window itself when it is a whole period,
 * else scaled to the smallest period that holds the window (100 per 15 minutes -> 400 per hour).
 */
export function toRate(limit: number | undefined, windowSeconds: number | undefined): Rate | undefined {
  if (limit === undefined || windowSeconds === undefined) return undefined;
  if (!(limit > 0) || !(windowSeconds > 0) || !Number.isFinite(limit) || !Number.isFinite(windowSeconds)) {
    return undefined;
  }
  const per = PERIODS.find((p) => PERIOD_SECONDS[p] >= windowSeconds) ?? 'day';
  const requests = round((limit * PERIOD_SECONDS[per]) / windowSeconds);
  return requests > 0 ? { requests, per } : undefined;
}

export function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(?:ms|msecs?|milliseconds?)$/, 0.001],
  [/^(?:s|secs?|seconds?)$/, 1],
  [/^(?:m|mins?|minutes?)$/, 60],
  [/^(?:h|hrs?|hours?)$/, 3600],
  [/^(?:d|days?)$/, 86400],
  [/^(?:w|weeks?)$/, 604800],
];

/** '1 minute', '15m', '60s', '1.5h', '500ms' -> seconds; undefined when not understood. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = (m[2] ?? '').toLowerCase();
  const found = UNIT_SECONDS.find(([re]) => re.test(unit));
  return found ? Number(m[1]) * found[1] : undefined;
}

/** A window for people: 1 -> 'second', 900 -> '15 minutes', 7200 -> '2 hours', 1.5 -> '1.5 seconds'. */
function describeWindow(seconds: number): string {
  const units: Array<[number, string]> = [
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? unit : `${n} ${unit}s`;
    }
  }
  return seconds < 1 ? `${round(seconds * 1000)} ms` : `${round(seconds)} seconds`;
}

/** A limit as written: '5 per 15 minutes'; falls back to the rate, then to ''. */
export function describeLimit(limit: number | undefined, windowSeconds: number | undefined, rate?: Rate): string {
  if (limit !== undefined && windowSeconds !== undefined && windowSeconds > 0) {
    return `${limit} per ${describeWindow(windowSeconds)}`;
  }
  return describeRate(rate);
}

/** A short, printable rendering of a rate: '100 per minute', '6.667 per second'. */
export function describeRate(rate: Rate | undefined): string {
  return rate ? `${rate.requests} per ${rate.per}` : '';
}

/** Visits every object and array in a parsed document, depth first, with its ancestors. */
export function walk(
  node: unknown,
  visit: (value: Record<string, unknown>, ancestors: readonly unknown[]) => void,
  ancestors: unknown[] = [],
  seen: Set<unknown> = new Set(),
): void {
  if (typeof node !== 'object' || node === null || seen.has(node) || ancestors.length > 64) return;
  seen.add(node);
  if (isRecord(node)) visit(node, ancestors);
  ancestors.push(node);
  for (const child of Array.isArray(node) ? node : Object.values(node)) walk(child, visit, ancestors, seen);
  ancestors.pop();
}

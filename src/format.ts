/** Locale-free number formatting shared by the design text and the renderers: the same text on every machine. */

/** 1234567 -> "1,234,567"; 0.9 -> "0.9"; 2.456 -> "2.46" (at most two decimals, or `decimals`). */
export function formatNumber(value: number, decimals = 2): string {
  if (!Number.isFinite(value)) return String(value);
  const negative = value < 0;
  const abs = Math.abs(value);
  const scale = 10 ** decimals;
  const rounded = Math.round(abs * scale) / scale;
  const [intPart = '0', fracPart] = rounded.toFixed(decimals).split('.');
  const grouped = intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = (fracPart ?? '').replace(/0+$/, '');
  return `${negative && rounded !== 0 ? '-' : ''}${grouped}${frac ? `.${frac}` : ''}`;
}

/** A whole-unit duration: 90 -> "90 s", 600 -> "10 min", 3600 -> "1 h", 86400 -> "1 d". */
export function secondsWords(seconds: number): string {
  if (seconds % 86400 === 0) return `${formatNumber(seconds / 86400)} d`;
  if (seconds % 3600 === 0) return `${formatNumber(seconds / 3600)} h`;
  if (seconds % 60 === 0) return `${formatNumber(seconds / 60)} min`;
  return `${formatNumber(seconds)} s`;
}

const UNITS: [number, string][] = [
  [86_400, 'd'],
  [3_600, 'h'],
  [60, 'min'],
];

/**
 * A duration in seconds, in the largest unit that divides it exactly, keeping short
 * periods in seconds: 1 -> "1 s", 60 -> "60 s", 900 -> "15 min", 3600 -> "1 h",
 * 2764800 -> "32 d", 90 -> "90 s".
 */
export function fmtDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  if (seconds >= 120) {
    for (const [size, unit] of UNITS) {
      if (seconds % size === 0) return `${formatNumber(seconds / size)} ${unit}`;
    }
  }
  return `${formatNumber(seconds)} s`;
}

/** A count that is whole up to rounding noise. */
const isWhole = (n: number): boolean => Math.abs(n - Math.round(n)) < 1e-9;

/**
 * The same rate as a whole number of requests over a whole number of seconds (0.007 per 1 s is
 * 7 per 1,000 s, 0.5 per 1 s is 1 per 2 s); the rate itself when it already is, or when no
 * power of ten up to a million makes it whole.
 */
export function wholeRate(rate: { requests: number; periodSeconds: number }): { requests: number; periodSeconds: number } {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  for (let k = 1; k <= 1_000_000; k *= 10) {
    const n = rate.requests * k;
    const p = rate.periodSeconds * k;
    if (n >= 1 - 1e-9 && isWhole(n) && isWhole(p)) {
      const g = gcd(Math.round(n), Math.round(p));
      return { requests: Math.round(n) / g, periodSeconds: Math.round(p) / g };
    }
  }
  return { requests: rate.requests, periodSeconds: rate.periodSeconds };
}

/**
 * A rate's count and period as the document writes them: as given while formatNumber shows the
 * count exactly (600 per 60 s, 0.5 per 1 s, 2.46 per 1 s), else, for a count below one, over a
 * longer period that makes it whole (0.001 per 1 s is 1 per 1,000 s, 0.003 per 1 min 3 per
 * 1,000 min), so that no rate the design enforces is ever written as 0. Every rate formatter
 * here goes through it.
 */
export function shownRate(requests: number, periodSeconds: number): { requests: number; periodSeconds: number } {
  if (!Number.isFinite(requests) || requests <= 0 || requests >= 1) return { requests, periodSeconds };
  if (Math.abs(Math.round(requests * 100) / 100 - requests) < 1e-9) return { requests, periodSeconds };
  const whole = wholeRate({ requests, periodSeconds });
  if (whole.requests >= 1 - 1e-9) return whole;
  // no power of ten makes it whole: one request per its period, to two decimals
  return { requests: 1, periodSeconds: Math.round((periodSeconds / requests) * 100) / 100 };
}

/**
 * A rate in requests per second, "300 req/s", or over the longer period shownRate picks when
 * that would read 0 ("1 / 1,000 s").
 */
export function rpsText(perSecond: number): string {
  const shown = shownRate(perSecond, 1);
  return shown.periodSeconds === 1 ? `${formatNumber(shown.requests)} req/s` : rateFigure({ requests: perSecond, periodSeconds: 1 });
}

/** A period in words: "second", "minute", "hour", "day", else "N s". */
export function periodName(s: number): string {
  return s === 1 ? 'second' : s === 60 ? 'minute' : s === 3600 ? 'hour' : s === 86400 ? 'day' : `${formatNumber(s)} s`;
}

/**
 * A rate as "N per <period>" over the period shownRate picks: "5 per 1 h", "1 per 1,000 s"
 * (secondsWords), or with `named` "5 per hour", "600 per 300 s" (periodName) while the period
 * is the one given.
 */
export function ratePer(rate: { requests: number; periodSeconds: number }, named = false): string {
  const shown = shownRate(rate.requests, rate.periodSeconds);
  const period = named && shown.periodSeconds === rate.periodSeconds ? periodName(shown.periodSeconds) : secondsWords(shown.periodSeconds);
  return `${formatNumber(shown.requests)} per ${period}`;
}

/**
 * A rate as the document's limit matrix writes it: "600 / 60 s", "5 / 1 h", or
 * "10,000 / calendar month (Europe/Berlin)" when the period has a name. Every message that
 * states a rule's rate (the constraints' findings too) writes it this way.
 */
export function rateFigure(rate: { requests: number; periodSeconds: number; periodText?: string }): string {
  if (rate.periodText !== undefined) return `${formatNumber(rate.requests)} / ${rate.periodText}`;
  const shown = shownRate(rate.requests, rate.periodSeconds);
  return `${formatNumber(shown.requests)} / ${fmtDuration(shown.periodSeconds)}`;
}

/** A rate in words: "10/s", "600/min", "5/h", "100/d", else "100 per 10 min". */
export function rateWords(rawRequests: number, rawPeriodSeconds: number): string {
  const { requests, periodSeconds } = shownRate(rawRequests, rawPeriodSeconds);
  const unit =
    periodSeconds === 1 ? 's' : periodSeconds === 60 ? 'min' : periodSeconds === 3600 ? 'h' : periodSeconds === 86400 ? 'd' : null;
  return unit ? `${formatNumber(requests)}/${unit}` : `${formatNumber(requests)} per ${secondsWords(periodSeconds)}`;
}

/** "a", "a and b", "a, b and c". */
export function joinAnd(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** "a, b or c" */
export function joinOr(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

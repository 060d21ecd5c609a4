/** Locale-free number formatting shared by the design text and the renderers: the same text on every machine. */

/** 1234567 -> "1,234,567"; 0.9 -> "0.9"; 2.456 -> "2.46" (at most two decimals). */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const negative = value < 0;
  const abs = Math.abs(value);
  const rounded = Math.round(abs * 100) / 100;
  const [intPart = '0', fracPart] = rounded.toFixed(2).split('.');
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

/**
 * A rate as the document's limit matrix writes it: "600 / 60 s", "5 / 1 h", or
 * "10,000 / calendar month (Europe/Berlin)" when the period has a name. Every message that
 * states a rule's rate (the constraints' findings too) writes it this way.
 */
export function rateFigure(rate: { requests: number; periodSeconds: number; periodText?: string }): string {
  return `${formatNumber(rate.requests)} / ${rate.periodText ?? fmtDuration(rate.periodSeconds)}`;
}

/** A rate in words: "10/s", "600/min", "5/h", "100/d", else "100 per 10 min". */
export function rateWords(requests: number, periodSeconds: number): string {
  const unit =
    periodSeconds === 1 ? 's' : periodSeconds === 60 ? 'min' : periodSeconds === 3600 ? 'h' : periodSeconds === 86400 ? 'd' : null;
  return unit ? `${formatNumber(requests)}/${unit}` : `${formatNumber(requests)} per ${secondsWords(periodSeconds)}`;
}

/** "a", "a and b", "a, b and c". */
export function joinAnd(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

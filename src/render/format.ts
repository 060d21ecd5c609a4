/**
 * Deterministic number and duration formatting for documents: no locale-dependent API,
 * the same text on every machine. Thousands are separated by commas.
 */

import { formatNumber as fmtNumber } from '../format.js';

export { fmtNumber };

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
      if (seconds % size === 0) return `${fmtNumber(seconds / size)} ${unit}`;
    }
  }
  return `${fmtNumber(seconds)} s`;
}

/** Bytes in binary units with one decimal: 7973112400 -> "7.4 GiB". */
export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i += 1;
  }
  return i === 0 ? `${fmtNumber(bytes)} bytes` : `${(Math.round(value * 10) / 10).toFixed(1)} ${units[i]}`;
}

/** A fraction as a percentage: 0.9 -> "90%". */
/** Lines of a text file, not counting the newline that ends its last line. */
export function lineCount(content: string): number {
  return content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
}

export function fmtPercent(fraction: number): string {
  return `${fmtNumber(fraction * 100)}%`;
}

export { joinAnd } from '../format.js';

/**
 * Deterministic number and duration formatting for documents: no locale-dependent API,
 * the same text on every machine. Thousands are separated by commas.
 */

import { formatNumber as fmtNumber } from '../format.js';

export { fmtNumber };
export { fmtDuration } from '../format.js';

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

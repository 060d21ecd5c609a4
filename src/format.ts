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

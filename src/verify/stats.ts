/** Latency statistics of limiter calls. */

export interface Latency {
  /** Number of limiter calls measured. */
  calls: number;
  /** Median, ms (nearest rank), rounded to 0.01 ms. */
  p50Ms: number;
  /** 99th percentile, ms (nearest rank), rounded to 0.01 ms. */
  p99Ms: number;
}

/** Nearest-rank percentile of the samples (0 < p <= 100). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

export function latencyOf(samples: readonly number[]): Latency | undefined {
  if (samples.length === 0) return undefined;
  return { calls: samples.length, p50Ms: round2(percentile(samples, 50)), p99Ms: round2(percentile(samples, 99)) };
}

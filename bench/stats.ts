// Shared arithmetic of the benchmarks that time requests: percentiles over sorted latencies.

/** The p-th percentile (0–100) of latencies already sorted ascending; 0 for no samples. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The p-th percentile (0–100) of some figures, nearest rank from below (the latency tables' p50, p99). */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * The middle figure; for an even count, the mean of the two middles (the upper one alone would read
 * every ratio of an 8-round benchmark slightly in one side's favour).
 */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

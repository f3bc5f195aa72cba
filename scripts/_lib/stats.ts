/** The p-th percentile (0–100) of some figures, nearest rank from below (the latency tables' p50, p99). */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * The middle figure; for an even count, the mean of the two middles. (Until stop 42 it was the upper
 * of the two, which with 8 rounds read every ratio slightly in the platform's favour.)
 */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

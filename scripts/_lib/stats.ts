/** The p-th percentile (0–100) of some figures, nearest rank from below; the median is percentile(xs, 50). */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The middle figure (the upper one of the two middles for an even count). */
export function median(xs: number[]): number {
  return percentile(xs, 50);
}

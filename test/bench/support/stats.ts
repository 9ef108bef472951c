// Order statistics shared by the benchmarks.

/** The value below which `p` percent of `sorted` (ascending) lie; the upper middle for p = 50. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The middle of `values` (the upper middle of an even count), in any order. */
export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

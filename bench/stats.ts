/** Percentile of a sample (nearest rank). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

export const ms = (x: number) => `${x.toFixed(2)} ms`;

/** One row of figures: p50, p99, mean. */
export function summary(label: string, xs: readonly number[]): string {
  return `${label.padEnd(34)} p50 ${ms(percentile(xs, 50)).padStart(10)}   p99 ${ms(percentile(xs, 99)).padStart(10)}   mean ${ms(mean(xs)).padStart(10)}   n=${xs.length}`;
}

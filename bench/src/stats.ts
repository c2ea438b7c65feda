/** The q-th percentile (0..100) of `xs`, nearest rank; NaN when empty. */
export function percentile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

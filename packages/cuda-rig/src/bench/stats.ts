/** Summary of one phase's samples, in microseconds. */
export interface Stats {
  n: number;
  median: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * The q-quantile (0 <= q <= 1) of ascending `sorted`, interpolating linearly between the two
 * nearest ranks (position q * (n - 1), the usual "type 7" definition). NaN for no samples.
 */
export function quantile(sorted: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q ${q} is outside [0, 1]`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const pos = q * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** median, p90, p99, min, max and mean of `xs` (any order). */
export function summarize(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return {
    n,
    median: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    p99: quantile(s, 0.99),
    min: n ? s[0] : Number.NaN,
    max: n ? s[n - 1] : Number.NaN,
    mean: n ? s.reduce((a, b) => a + b, 0) / n : Number.NaN,
  };
}

/**
 * Step-wise maximum over ranks: element i is the slowest rank's time of step i. A step is done
 * when its slowest rank is, so this is what the bench summarises. Every rank must have the same
 * number of samples (they ran the same steps).
 */
export function maxOverRanks(perRank: readonly (readonly number[])[]): number[] {
  if (perRank.length === 0) return [];
  const n = perRank[0].length;
  for (const [r, xs] of perRank.entries()) {
    if (xs.length !== n)
      throw new RangeError(`maxOverRanks: rank ${r} has ${xs.length} samples, rank 0 has ${n}`);
  }
  return Array.from({ length: n }, (_, i) => Math.max(...perRank.map((xs) => xs[i])));
}

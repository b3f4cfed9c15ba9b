/**
 * Summary statistics for benchmark samples. All inputs and outputs are milliseconds unless a name
 * says otherwise. Percentiles use the nearest-rank method (no interpolation), so p99 of 200 samples
 * is the 198th smallest: a real observed latency, never a blend.
 */

/** Code-unit numeric sort copy. @param {number[]} xs */
function sorted(xs) {
  return [...xs].sort((a, b) => a - b);
}

/**
 * Median; for an even count the mean of the two middle samples. null for no samples.
 * @param {number[]} xs
 * @returns {number | null}
 */
export function median(xs) {
  if (xs.length === 0) return null;
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Nearest-rank percentile `p` in (0, 100]: the ⌈p/100 · n⌉-th smallest sample. null for no samples.
 * @param {number[]} xs
 * @param {number} p
 * @returns {number | null}
 */
export function percentile(xs, p) {
  if (xs.length === 0) return null;
  if (!(p > 0 && p <= 100)) throw new RangeError(`bench: percentile p must be in (0, 100] (got ${p})`);
  const s = sorted(xs);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[rank - 1];
}

/**
 * numerator / denominator, or null when either is missing or the denominator is not positive.
 * @param {number | null | undefined} num
 * @param {number | null | undefined} den
 * @returns {number | null}
 */
export function ratio(num, den) {
  if (num == null || den == null || !Number.isFinite(num) || !Number.isFinite(den) || den <= 0) return null;
  return num / den;
}

/**
 * Round to `digits` significant-ish decimals for reports (keeps JSON small and readable).
 * @param {number | null} x
 * @param {number} [digits=3]
 */
export function round(x, digits = 3) {
  if (x == null) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * Seeded pseudo-random numbers for the benchmark's deterministic inputs (query set, files to edit,
 * seed notes). mulberry32: a 32-bit state generator, fast and good enough for sampling; the same seed
 * always yields the same sequence on every platform (integer arithmetic only through Math.imul).
 */

/**
 * A generator returning floats in [0, 1).
 * @param {number} seed any integer (taken modulo 2^32)
 * @returns {() => number}
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Integer in [0, n) from a generator.
 * @param {() => number} rand
 * @param {number} n
 */
export function randInt(rand, n) {
  return Math.floor(rand() * n);
}

/**
 * `k` distinct indices out of [0, n), in the order drawn (partial Fisher–Yates), deterministic for a
 * given generator state. `k` is clamped to `n`.
 * @param {() => number} rand
 * @param {number} n
 * @param {number} k
 * @returns {number[]}
 */
export function sampleIndices(rand, n, k) {
  const idx = Array.from({ length: n }, (_, i) => i);
  const take = Math.min(k, n);
  for (let i = 0; i < take; i++) {
    const j = i + randInt(rand, n - i);
    const t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  return idx.slice(0, take);
}

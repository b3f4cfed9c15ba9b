/**
 * The seeded dev / held-out split of the eval set. A query's part depends only on its stable id and
 * the seed (FNV-1a over `seed:id`), never on the order the set was built in, so adding queries of one
 * family does not move queries of another between parts. Dev is what one looks at while changing
 * search; held-out is reported next to it and is not to be tuned on (quality is judged on unseen cases).
 */

/** Share of the set, in percent, that falls in the dev part. */
export const DEV_PERCENT = 40;

/**
 * 32-bit FNV-1a hash of a string's UTF-16 code units.
 * @param {string} s
 * @returns {number} an unsigned 32-bit integer
 */
export function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The part a query belongs to.
 * @param {string} id stable query id (family prefix included)
 * @param {number} seed the eval seed
 * @returns {'dev' | 'held_out'}
 */
export function splitOf(id, seed) {
  return fnv1a(`${seed}:${id}`) % 100 < DEV_PERCENT ? 'dev' : 'held_out';
}

/**
 * Retrieval-quality figures of the eval (docs/EVAL.md):
 *
 * - `hit@1`: the first hit is in a target note (the right note first);
 * - `overlap@1`: the first hit's lines overlap a target range (same path, ranges intersect);
 * - `overlap@3`: one of the first three hits does;
 * - `mrr`: mean of 1 / rank of the first overlapping hit within the first 10 (0 when none);
 * - `lines@1`: mean number of lines the first hit cites (how much a citation costs: a whole-note
 *   hit overlaps more often and cites more).
 *
 * Figures are rounded to 4 decimals so results files are byte-stable.
 */

/** @param {number} x */
export const round4 = (x) => Math.round(x * 1e4) / 1e4;

/**
 * Whether a hit overlaps one of the targets.
 * @param {{ path: string, line_start: number, line_end: number }} hit
 * @param {{ path: string, line_start: number, line_end: number }[]} targets
 */
export function overlaps(hit, targets) {
  return targets.some((t) => t.path === hit.path && hit.line_start <= t.line_end && hit.line_end >= t.line_start);
}

/**
 * Per-query outcome of one ranker.
 * @param {{ path: string, line_start: number, line_end: number }[]} hits ranked, at most 10
 * @param {{ path: string, line_start: number, line_end: number }[]} targets
 * @returns {{ hit1: boolean, overlap1: boolean, overlap3: boolean, rank: number | null, lines1: number }}
 *   `rank`: 1-based rank of the first overlapping hit, null when none
 */
export function judge(hits, targets) {
  const first = hits[0];
  const at = hits.findIndex((h) => overlaps(h, targets));
  return {
    hit1: first ? targets.some((t) => t.path === first.path) : false,
    overlap1: at === 0,
    overlap3: at >= 0 && at < 3,
    rank: at >= 0 ? at + 1 : null,
    lines1: first ? first.line_end - first.line_start + 1 : 0,
  };
}

/**
 * Aggregate figures of a list of per-query outcomes.
 * @param {ReturnType<typeof judge>[]} outcomes
 * @returns {{ n: number, 'hit@1': number | null, 'overlap@1': number | null, 'overlap@3': number | null, mrr: number | null, 'lines@1': number | null }}
 *   null figures when `n` is 0
 */
export function summarize(outcomes) {
  const n = outcomes.length;
  if (n === 0) return { n, 'hit@1': null, 'overlap@1': null, 'overlap@3': null, mrr: null, 'lines@1': null };
  const mean = (f) => round4(outcomes.reduce((s, o) => s + f(o), 0) / n);
  return {
    n,
    'hit@1': mean((o) => (o.hit1 ? 1 : 0)),
    'overlap@1': mean((o) => (o.overlap1 ? 1 : 0)),
    'overlap@3': mean((o) => (o.overlap3 ? 1 : 0)),
    mrr: mean((o) => (o.rank ? 1 / o.rank : 0)),
    'lines@1': round4(outcomes.reduce((s, o) => s + o.lines1, 0) / n),
  };
}

/**
 * Recall and precision of one walk against the notes its author cited.
 * @param {string[]} walked vault paths the walk consulted or followed (seeds included)
 * @param {string[]} seeds vault paths of the walk's seeds
 * @param {string[]} cited vault paths the author cited (seeds included)
 * @returns {{ refs: number, recall: number | null, added: number, added_cited: number, precision_added: number | null }}
 *   `recall` = |walked ∩ cited| / |cited|; `precision_added` = share of the non-seed notes the walk
 *   added that are cited (null when it added none)
 */
export function walkFigures(walked, seeds, cited) {
  const citedSet = new Set(cited);
  const seedSet = new Set(seeds);
  const walkedSet = new Set(walked);
  const found = [...citedSet].filter((p) => walkedSet.has(p)).length;
  const added = [...walkedSet].filter((p) => !seedSet.has(p));
  const addedCited = added.filter((p) => citedSet.has(p)).length;
  return {
    refs: walkedSet.size,
    recall: citedSet.size ? round4(found / citedSet.size) : null,
    added: added.length,
    added_cited: addedCited,
    precision_added: added.length ? round4(addedCited / added.length) : null,
  };
}

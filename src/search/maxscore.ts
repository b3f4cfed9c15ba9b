/**
 * Exact top-k pruning for the BM25 pass of `search()`: the MaxScore idea (Turtle & Flood, "Query
 * evaluation: strategies and optimizations", Information Processing & Management 31(6), 1995) applied
 * term-at-a-time to (term, field) posting runs, with bounds that cover everything `search()` multiplies a
 * BM25 score by afterwards (phrase factor, name match, entity prior), so the hits and scores are
 * byte-identical to scoring every matching chunk.
 *
 * A document's score (src/search/engine.ts) is `(sum of its term scores) × (number of query terms it has)`,
 * each term score a sum over fields. So a document found only in a set R of (term, field) runs scores at
 * most `(sum of the runs' largest contributions) × (distinct terms of R)`. Runs are processed in
 * descending order of their largest contribution; once the remaining runs R cannot lift a document that
 * has not been seen yet into the results, they only add to documents already seen, and only to those
 * that can still matter with every remaining run added (`liveDocs`, the same two rules below with the
 * remaining runs' bound). When they are few against a run's postings, each is looked up in the run by
 * galloping search over its doc ids, which are ascending (`addToSeen`: the skipping of Moffat & Zobel's
 * self-indexing inverted files, 1996), instead of an array check per posting; else the run is scanned.
 * Then every seen document's score is computed again in the engine's own order of floating-point
 * operations, and documents that cannot reach the top k are not reported at all.
 *
 * What "cannot reach the top k" means, for a document d with BM25 score s (rounded like every score) and
 * final factor bound F(d) (the walk's own bound in search.ts): with θ = the k-th best BM25 score among
 * documents that pass the filters (a lower bound of the k-th best final score, since factors are ≥ 1),
 * d is dropped only when `round(s × F(d)) < θ` **and** d cannot change which documents are in the phrase
 * re-rank pool (the first `pool` hits in BM25 order, filtered or not): `s < E` where E is the pool-th best
 * BM25 score seen (d is then outside the pool), or `round(s × maxFactor) < θ` (then every document d ranks
 * above in BM25 order is below θ / maxFactor too and cannot be a result either). Under these two rules the
 * pool membership of every document that can be a result is the same as with every document scored, and
 * a document that is not a result never gets a score of θ or more, so the top k is unchanged.
 *
 * What this does not skip: postings of a run before the switch (every one may be a new document), and the
 * copies of a chunk — identical chunks tie exactly, so with a vault of 1,000 copies every copy of a
 * chunk that can reach θ is scored and reported; the work per query grows with the number of copies
 * (docs/PERFORMANCE.md "Round 7"). Block-max bounds (Ding & Suel, "Faster top-k document retrieval using
 * block-max indexes", SIGIR 2011) do not help there either: a block of a duplicated run holds copies of
 * the run's best posting.
 */

/** Score rounding of `search()`: 6 decimals. */
export function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

/** What the caller of the pruned pass knows about its results (search.ts fills it per query). */
export interface PruneGate {
  /** Results wanted (k ≥ 1). */
  k: number;
  /** Size of the re-rank pool (PHRASE_CANDIDATES), 0 when scores are not re-ranked. */
  pool: number;
  /** The search's filters: whether a document may be a result. */
  keep(id: number): boolean;
  /**
   * The largest factor a document with these matched query terms (bit i = `terms[i]`) can get; `id` −1
   * for any document (its note, chunk position and entity prior unknown). Must not decrease when bits
   * are added.
   */
  factor(mask: number, id: number): number;
  /** The largest factor any document can get (≥ every `factor` value). */
  maxFactor: number;
}

/** One (term, field) run of postings, with what BM25 needs to score it. */
export interface PostingRun {
  /** Position of the term in the query terms (its mask bit). */
  term: number;
  /** Field id (0 title, 1 aliases, 2 headings, 3 text). */
  field: number;
  docs: Uint32Array;
  tfs: Uint32Array;
  /** Postings `start … end − 1` of `docs`/`tfs`. */
  start: number;
  end: number;
  /** `weight(tf, field length)` of one posting, exactly as the engine computes it. */
  idf: number;
  boost: number;
  avgLength: number;
  /** The largest `weight` of any posting of the run. */
  max: number;
  /**
   * A run of a common term (a query stop word, docs/INDEX.md "Common terms"): it scores only documents
   * another run found, never a document of its own.
   */
  scoreOnly?: boolean;
}

const BM25 = { k: 1.2, b: 0.7, d: 0.5 };

/** The engine's per-posting BM25 contribution (src/search/engine.ts, same operations in the same order). */
export function postingWeight(run: PostingRun, tf: number, fieldLength: number): number {
  const raw = run.idf * (BM25.d + tf * (BM25.k + 1) / (tf + BM25.k * (1 - BM25.b + BM25.b * fieldLength / run.avgLength)));
  return 1 * 1 * run.boost * 1 * raw;
}

/** The largest {@link postingWeight} of a run: one pass over its postings. */
export function runMax(run: Omit<PostingRun, 'max'>, lengths: Uint32Array, fieldCount: number): number {
  let max = 0;
  const r = run as PostingRun;
  for (let j = run.start; j < run.end; j++) {
    const w = postingWeight(r, run.tfs[j]!, lengths[run.docs[j]! * fieldCount + run.field]!);
    if (w > max) max = w;
  }
  return max;
}

/**
 * Reusable arrays: per document (sized to the doc id range) and per seen document, by its slot (the order
 * it was first seen in; grown on demand and kept, so a query allocates nothing in proportion to its
 * postings). The running sums sit by slot, so the passes over seen documents read them in order.
 */
export interface PruneScratch {
  /** Per document: the query stamp it was last seen in. */
  mark: Uint32Array;
  /** Per document: its slot in the current query (valid when `mark` holds the query's stamp). */
  slot: Int32Array;
  /** Per slot: the running sum of the document's weights. */
  acc: Float64Array;
  /** Per slot: the query terms found so far (bit i = term i). */
  mask: Uint32Array;
  stamp: number;
  /** Per slot: the document (seen documents in the order first seen). */
  seen: Int32Array;
  /** Per seen document, its weight in each (term, field) cell (0 when absent). */
  values: Float64Array;
  /** Per seen document: a working copy of scores (for the selections). */
  work: Float64Array;
}

/** A scratch for documents `0 … n − 1`. */
export function pruneScratch(n: number): PruneScratch {
  return {
    mark: new Uint32Array(n), slot: new Int32Array(n), acc: new Float64Array(1024), mask: new Uint32Array(1024), stamp: 0,
    seen: new Int32Array(1024), values: new Float64Array(1024 * 16), work: new Float64Array(1024),
  };
}

/** Grow the per-seen arrays of `sc` to hold `count` documents of `width` cells. */
function reserve(sc: PruneScratch, count: number, width: number): void {
  if (sc.seen.length < count) {
    const size = Math.max(count, sc.seen.length * 2);
    const seen = new Int32Array(size);
    seen.set(sc.seen);
    sc.seen = seen;
    const acc = new Float64Array(size);
    acc.set(sc.acc);
    sc.acc = acc;
    const mask = new Uint32Array(size);
    mask.set(sc.mask);
    sc.mask = mask;
    sc.work = new Float64Array(size);
  }
  if (sc.values.length < count * width) {
    const values = new Float64Array(Math.max(count * width, sc.values.length * 2));
    values.set(sc.values);
    sc.values = values;
  }
}

/**
 * Order of operations of the engine's score: query-term positions grouped by shard key (groups and the
 * terms in each in the engine's order). See src/search/engine.ts.
 */
export type ScoreOrder = readonly (readonly number[])[];

/** Relative slack for comparing sums computed in a different order (far above float rounding error). */
const SLACK = 1e-9;

/**
 * Score the documents of `runs` with pruning (module comment) and call `visit(id, raw, mask)` for every
 * document that can still be a result or decide the pool: `raw` is exactly the engine's unrounded score,
 * `mask` bit i set when the document has query term i. At most 32 query terms (`termCount`).
 */
export function prunedExact(
  runs: PostingRun[],
  termCount: number,
  order: ScoreOrder,
  lengths: Uint32Array,
  fieldCount: number,
  gate: PruneGate,
  sc: PruneScratch,
  visit: (id: number, raw: number, mask: number) => void,
): void {
  const width = termCount * fieldCount;
  const stamp = ++sc.stamp;
  let count = 0;
  // Common-term runs come last: they find no document, so once they are reached only seen documents
  // are scanned; the suffix bounds of the runs before them include them (a document still unseen may
  // have the common terms too).
  const sorted = runs.map((r, i) => ({ r, i })).sort((a, b) => Number(a.r.scoreOnly === true) - Number(b.r.scoreOnly === true) || b.r.max - a.r.max || a.i - b.i).map((x) => x.r);
  const suffix = suffixBounds(sorted);
  let onlySeen = false;
  // From the switch on: the seen documents that can still matter, by ascending doc id.
  let live: Uint32Array | null = null;
  for (let i = 0; i < sorted.length; i++) {
    const run = sorted[i]!;
    let bounds: Thresholds | null = null;
    if (!onlySeen && run.scoreOnly === true) onlySeen = true;
    if (!onlySeen && i > 0 && suffix.postings[i]! > count) {
      bounds = lowerThresholds(count, sc, gate);
      onlySeen = unseenCannotMatter(suffix, i, bounds, gate);
    }
    if (onlySeen && live === null) live = liveDocs(suffix, i, count, sc, gate, bounds ?? lowerThresholds(count, sc, gate));
    const bit = (1 << run.term) >>> 0;
    const cell = run.term * fieldCount + run.field;
    if (onlySeen) {
      addToSeen(run, live!, bit, cell, width, lengths, fieldCount, stamp, sc);
      continue;
    }
    reserve(sc, count + (run.end - run.start), width);
    const { mark, slot: slots, acc, mask, seen, values } = sc;
    for (let j = run.start; j < run.end; j++) {
      const d = run.docs[j]!;
      let slot: number;
      if (mark[d] !== stamp) {
        mark[d] = stamp;
        slot = count++;
        slots[d] = slot;
        seen[slot] = d;
        // A loop, not values.fill: a built-in call per new document costs more than its few cells.
        for (let c = slot * width, end = c + width; c < end; c++) values[c] = 0;
        acc[slot] = 0;
        mask[slot] = 0;
      } else slot = slots[d]!;
      const w = postingWeight(run, run.tfs[j]!, lengths[d * fieldCount + run.field]!);
      values[slot * width + cell] = w;
      acc[slot] = acc[slot]! + w;
      mask[slot] = (mask[slot]! | bit) >>> 0;
    }
  }
  reportSurvivors(count, width, fieldCount, order, gate, sc, visit);
}

/**
 * The seen documents (slots `0 … count − 1`) that can still matter once only seen documents are scored
 * (from sorted run i on), as doc ids in ascending order. A document is left out when even with every
 * remaining run's largest contribution and every remaining term its score would satisfy the two rules of
 * the module comment against the current θ and E: θ and E only grow as runs add to the running sums, and
 * the survivor pass applies the same rules to the sum the document has (at most that bound) with a factor
 * no larger, so it drops the document whether or not later runs were added to it. Skipping it in those
 * runs therefore changes no reported document and no score.
 */
function liveDocs(suffix: SuffixBounds, i: number, count: number, sc: PruneScratch, gate: PruneGate, { theta, edge }: Thresholds): Uint32Array {
  const { acc, mask, seen } = sc;
  const rest = suffix.maxSum[i]!;
  const restMask = suffix.masks[i]!;
  const out = new Uint32Array(count);
  let n = 0;
  for (let s = 0; s < count; s++) {
    const m = (mask[s]! | restMask) >>> 0;
    const d = seen[s]!;
    if (droppableBy(roundScore((acc[s]! + rest) * popcount(m) * (1 + SLACK)), m, d, gate, theta, edge)) continue;
    out[n++] = d;
  }
  return out.subarray(0, n).sort();
}

/**
 * Add a run's weights to the `live` documents (ascending doc ids) that have a posting in it. Postings of a
 * run are in ascending doc id order (src/search/postings.ts), so when the live documents are few against
 * the run's postings each is found by galloping search from the previous one's position — the skipping of
 * self-indexing inverted files (Moffat & Zobel, "Self-indexing inverted files for fast text retrieval",
 * ACM TOIS 14(4), 1996), with exponential then binary search (Bentley & Yao 1976) in place of stored skip
 * pointers, about `live × log2(postings / live)` steps instead of one per posting. Otherwise the run is
 * scanned. Either way each live document with a posting gets the same weight added to the same running
 * sum, in the same run order.
 */
function addToSeen(
  run: PostingRun,
  live: Uint32Array,
  bit: number,
  cell: number,
  width: number,
  lengths: Uint32Array,
  fieldCount: number,
  stamp: number,
  sc: PruneScratch,
): void {
  const { mark, slot: slots, acc, mask, values } = sc;
  const docs = run.docs;
  const end = run.end;
  const n = end - run.start;
  const m = live.length;
  if (m === 0) return;
  const add = (j: number, d: number) => {
    const slot = slots[d]!;
    const w = postingWeight(run, run.tfs[j]!, lengths[d * fieldCount + run.field]!);
    values[slot * width + cell] = w;
    acc[slot] = acc[slot]! + w;
    mask[slot] = (mask[slot]! | bit) >>> 0;
  };
  if (m * (2 + 2 * Math.log2(1 + n / m)) >= n) {
    for (let j = run.start; j < end; j++) {
      const d = docs[j]!;
      if (mark[d] === stamp) add(j, d);
    }
    return;
  }
  let j = run.start;
  for (let x = 0; x < m && j < end; x++) {
    const d = live[x]!;
    j = gallop(docs, j, end, d);
    if (j < end && docs[j] === d) add(j++, d);
  }
}

/** The first position p in `lo … end − 1` with `docs[p] ≥ d` (`end` when none); `docs` ascending there. */
export function gallop(docs: Uint32Array, lo: number, end: number, d: number): number {
  if (lo >= end || docs[lo]! >= d) return lo;
  // docs[lo] < d: double the step until a posting ≥ d or the end, then binary search the last step.
  let below = lo;
  let step = 1;
  let hi = lo + 1;
  while (hi < end && docs[hi]! < d) {
    below = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > end) hi = end;
  let a = below + 1;
  while (a < hi) {
    const mid = (a + hi) >>> 1;
    if (docs[mid]! < d) a = mid + 1;
    else hi = mid;
  }
  return a;
}

/** Per start position i of the sorted runs: bounds of a document found only in runs i … end. */
interface SuffixBounds {
  /** Sum of the runs' largest contributions. */
  maxSum: Float64Array;
  /** Distinct query terms of the runs. */
  terms: Uint8Array;
  /** Mask of those terms. */
  masks: Uint32Array;
  /** Postings in the runs. */
  postings: Float64Array;
}

function suffixBounds(sorted: readonly PostingRun[]): SuffixBounds {
  const n = sorted.length;
  const out: SuffixBounds = { maxSum: new Float64Array(n + 1), terms: new Uint8Array(n + 1), masks: new Uint32Array(n + 1), postings: new Float64Array(n + 1) };
  for (let i = n - 1; i >= 0; i--) {
    const r = sorted[i]!;
    const bit = (1 << r.term) >>> 0;
    out.maxSum[i] = out.maxSum[i + 1]! + r.max;
    out.masks[i] = (out.masks[i + 1]! | bit) >>> 0;
    out.terms[i] = popcount(out.masks[i]!);
    out.postings[i] = out.postings[i + 1]! + (r.end - r.start);
  }
  return out;
}

/**
 * Whether a document not seen in the runs before position i (so found, if at all, only in runs i …)
 * can be left out: its largest possible final score is below the k-th best lower bound θ of the seen
 * documents that pass the filters, and it cannot be in the pool or ranks below θ / maxFactor.
 */
function unseenCannotMatter(suffix: SuffixBounds, i: number, { theta, edge }: Thresholds, gate: PruneGate): boolean {
  const ubRaw = suffix.maxSum[i]! * suffix.terms[i]! * (1 + SLACK);
  return droppable(roundScore(ubRaw), gate.factor(suffix.masks[i]!, -1), theta, edge, gate.maxFactor);
}

/** θ and E of the seen documents (`thresholds`), from their running sums: lower bounds of their scores. */
function lowerThresholds(count: number, sc: PruneScratch, gate: PruneGate): Thresholds {
  const { acc, mask } = sc;
  // The partial sum over the runs seen so far, times the terms seen so far: a lower bound of the score.
  return thresholds(count, sc, gate, (s) => acc[s]! * popcount(mask[s]!) * (1 - SLACK));
}

/** θ and E (see {@link thresholds}). */
interface Thresholds { theta: number; edge: number }

/**
 * θ (the k-th best of `lower` over seen documents that pass the filters) and E (the pool-th best over
 * every seen document; −∞ without a pool or with fewer documents), `lower(s)` being a lower bound of
 * the unrounded score of the document in slot s.
 */
function thresholds(count: number, sc: PruneScratch, gate: PruneGate, lower: (s: number) => number): Thresholds {
  const work = sc.work.subarray(0, count);
  let kept = 0;
  for (let s = 0; s < count; s++) {
    if (gate.keep(sc.seen[s]!)) work[kept++] = roundScore(lower(s));
  }
  const theta = kthLargest(work.subarray(0, kept), gate.k);
  if (gate.pool === 0 || count < gate.pool) return { theta, edge: -Infinity };
  for (let s = 0; s < count; s++) work[s] = roundScore(lower(s));
  return { theta, edge: kthLargest(work, gate.pool) };
}

/** The module comment's two rules for a document whose BM25 score is at most `bm25` (rounded). */
function droppable(bm25: number, factor: number, theta: number, edge: number, maxFactor: number): boolean {
  return roundScore(bm25 * factor) < theta && (bm25 < edge || roundScore(bm25 * maxFactor) < theta);
}

/**
 * {@link droppable} for a document `d` with matched-term mask `mask` whose BM25 score is at most `bm25`,
 * asking the gate for its factor bound only when the answer depends on it: with the largest factor of
 * any document the rules already hold (dropped), and at or above E with `round(bm25 × maxFactor) ≥ θ`
 * the second rule cannot hold whatever the factor (kept).
 */
function droppableBy(bm25: number, mask: number, d: number, gate: PruneGate, theta: number, edge: number): boolean {
  const most = roundScore(bm25 * gate.maxFactor);
  if (most < theta) return true;
  if (bm25 >= edge) return false;
  return roundScore(bm25 * gate.factor(mask, d)) < theta;
}

/**
 * `visit` for the seen documents the rules keep, with their exact score (the engine's order: groups,
 * terms in group order, fields in field order). The rules are applied to the running sums first (with
 * slack both ways), so only the documents that may be kept are scored again.
 */
function reportSurvivors(
  count: number,
  width: number,
  fieldCount: number,
  order: ScoreOrder,
  gate: PruneGate,
  sc: PruneScratch,
  visit: (id: number, raw: number, mask: number) => void,
): void {
  const { seen, values, acc, mask: masks } = sc;
  const { theta, edge } = lowerThresholds(count, sc, gate);
  for (let s = 0; s < count; s++) {
    const d = seen[s]!;
    const mask = masks[s]!;
    if (droppableBy(roundScore(acc[s]! * popcount(mask) * (1 + SLACK)), mask, d, gate, theta, edge)) continue;
    const base = s * width;
    let raw = 0;
    let terms = 0;
    for (const group of order) {
      let g = 0;
      let q = 0;
      for (const t of group) {
        if ((mask & ((1 << t) >>> 0)) === 0) continue;
        let term = 0;
        for (let f = 0; f < fieldCount; f++) term = term + values[base + t * fieldCount + f]!;
        g = g + term;
        q++;
      }
      if (q === 0) continue;
      raw = raw + (g * q) / q;
      terms = terms + q;
    }
    visit(d, raw * terms, mask);
  }
}

/** Number of set bits of a 32-bit integer. */
function popcount(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The k-th largest value (−∞ when there are fewer than k); reorders `values` in place (quickselect). */
export function kthLargest(values: Float64Array, k: number): number {
  if (k < 1 || values.length < k) return -Infinity;
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target]!;
  }
  return values[target]!;
}

/**
 * The search engine behind `search()`: BM25 over compact term shards (src/search/postings.ts), with
 * MiniSearch's exact scoring arithmetic and a top-k selection, so ranking is MiniSearch's own while a
 * query costs a few nanoseconds per posting instead of about a microsecond per matching chunk.
 *
 * Scoring — identical, operation for operation, to MiniSearch 7 `search(q, { combineWith: 'OR' })`
 * run once per term shard (the layout this engine replaced), so scores did not change:
 * - per term t, document d: `sum over fields f in (title, aliases, headings, text) of
 *   boost[f] * bm25(tf, df_f, N, len[d][f], avg[f])`, bm25 = MiniSearch's `calcBM25Score` (k 1.2, b 0.7, d 0.5),
 *   df_f = documents having t in field f, N = live documents, avg[f] = length sum / N;
 * - per shard group (the query terms sharing a shard key, in query order): `g` = sum of the term scores,
 *   `q` = number of the group's terms the document has; MiniSearch reports `g × q`;
 * - over groups (shard keys in code-unit order): `raw += (g × q) / q`, `terms += q`; score = `raw × terms`.
 * - with a stem weight w > 0 (docs/INDEX.md "Stemmed field"), a term's score also adds, per field, `w ×`
 *   the same field-boosted BM25 of its stemmed term (tokenize.ts `stemTerm`) over the field's stemmed
 *   copy, and a document that has only the stemmed term counts the query term in `q` as MiniSearch counts
 *   a term matched through an expansion. w = 0 is the arithmetic above, unchanged.
 *
 * Prefix and fuzzy expansion (rare: only when exact terms give fewer than k hits) run through a
 * MiniSearch built on demand from the compact shard, exactly as before. Expansion never changes a
 * term's first character (a shard only knows its own terms).
 */
import MiniSearch, { type SearchResult } from 'minisearch';
import { compareCodeUnits } from '../vault/scan.js';
import { combineShards, FIELD_COUNT, shardKey, shardLookup, type CompactShard, type LoadedMeta } from './postings.js';
import { isStemTerm, stemTerm } from './tokenize.js';
import { prunedExact, pruneScratch, runMax, type PostingRun, type PruneGate, type PruneScratch } from './maxscore.js';

/** Indexed fields, in field-id order. */
export const SEARCH_FIELDS = ['title', 'aliases', 'headings', 'text'] as const;

/** Field boosts: title and headings weigh more than body text. */
export const SEARCH_BOOST: Record<(typeof SEARCH_FIELDS)[number], number> = { title: 3, aliases: 2.5, headings: 2, text: 1 };

const BOOSTS = SEARCH_FIELDS.map((f) => SEARCH_BOOST[f]);
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };

/** Where the shards come from: just built (memory) or the persisted index (read on demand). */
export interface ShardSource {
  /** Meta and doc table. */
  meta(): LoadedMeta;
  /** A shard, or null when it cannot be loaded (the caller then rebuilds in memory). */
  load(key: string): CompactShard | null;
  /** Whether the document is in this source (default: every document of the doc table is). */
  holds?(id: number): boolean;
}

/** Raw engine result: document id, combined score (not rounded). */
export interface EngineHit {
  id: number;
  score: number;
}

/**
 * A loaded engine over one {@link ShardSource}. Keeps per-document scratch arrays between queries
 * (reset after each query), and loaded shards for the life of the index object.
 */
export class ShardedEngine {
  private readonly shards = new Map<string, CompactShard | null>();
  private readonly miniSearch = new Map<string, MiniSearch | null>();
  private source: ShardSource;
  private fellBack = false;
  private loadedMeta: LoadedMeta | null = null;
  private scratch: { raw: Float64Array; terms: Uint16Array; group: Float64Array; gq: Uint16Array; term: Float64Array; mark: Uint32Array; mask: Uint32Array; exact: Uint8Array; stamp: number } | null = null;

  private pruneScratch: PruneScratch | null = null;
  /** Per shard: the largest BM25 contribution of each (term, field) run (NaN until computed). */
  private readonly runMaxima = new WeakMap<CompactShard, Float64Array>();

  constructor(source: ShardSource, private readonly fallback: () => ShardSource) {
    this.source = source;
  }

  /**
   * Whether document `id` of the doc table is in this engine: false for a chunk a corpus withholds
   * ({@link restrictedTo}), true otherwise.
   */
  holds(id: number): boolean {
    return this.source.holds?.(id) ?? true;
  }

  /** Meta and doc table of the current source. */
  meta(): LoadedMeta {
    if (!this.loadedMeta) {
      try {
        this.loadedMeta = this.source.meta();
      } catch (e) {
        if (this.fellBack) throw e;
        this.switchToFallback();
        this.loadedMeta = this.source.meta();
      }
    }
    return this.loadedMeta;
  }

  private switchToFallback(): void {
    this.fellBack = true;
    this.source = this.fallback();
    this.loadedMeta = null;
    this.scratch = null;
    this.pruneScratch = null;
    this.shards.clear();
    this.miniSearch.clear();
  }

  private shard(key: string): CompactShard | null {
    if (this.shards.has(key)) return this.shards.get(key)!;
    const meta = this.meta().meta;
    if (!meta.shards.includes(key)) {
      this.shards.set(key, null);
      return null;
    }
    let shard = this.source.load(key);
    if (!shard && !this.fellBack) {
      // Persisted data missing or damaged: switch to an in-memory build (same tokens ⇒ same scores).
      this.switchToFallback();
      return this.shard(key);
    }
    this.shards.set(key, shard);
    return shard;
  }

  private scratchArrays() {
    const n = this.meta().meta.next_id;
    if (!this.scratch || this.scratch.raw.length < n) {
      this.scratch = {
        raw: new Float64Array(n), terms: new Uint16Array(n), group: new Float64Array(n), gq: new Uint16Array(n),
        term: new Float64Array(n), mark: new Uint32Array(n), mask: new Uint32Array(n), exact: new Uint8Array(n), stamp: 0,
      };
    }
    return this.scratch;
  }

  /**
   * An engine over the chunks of the notes at `paths` only, as if the index held nothing else: document
   * count, field length sums (hence average lengths), document frequencies, the vocabulary prefix/fuzzy
   * expansion sees, and the doc table all come from those notes. Its shards are this engine's shards
   * with every other document's postings dropped, filtered when first used, so scores are exactly those
   * of an index built from those notes alone (same arithmetic, same order of operations). Doc ids stay
   * this engine's; if this engine has to switch to its in-memory build, the restricted engine switches
   * to a restriction of that build too (the kept documents are found by path in each). `withheld` leaves
   * single chunks of kept notes out the same way (per path, `chunk_index` = doc id − the note's first id);
   * a note with no chunk left is not in the doc table.
   */
  restrictedTo(paths: ReadonlySet<string>, withheld: ReadonlyMap<string, ReadonlySet<number>> = new Map()): ShardedEngine {
    const restrict = (meta: () => LoadedMeta, load: (key: string) => CompactShard | null, current: () => boolean): ShardSource => {
      let cached: { loaded: LoadedMeta; removed: Uint8Array } | null = null;
      const state = () => {
        if (!cached) {
          const base = meta();
          const removed = new Uint8Array(base.meta.next_id).fill(1);
          const sums = [0, 0, 0, 0];
          let count = 0;
          const notes = base.meta.notes.filter(([path, first, n]) => {
            if (!paths.has(path)) return false;
            const held = withheld.get(path);
            let kept = 0;
            for (let d = first; d < first + n; d++) {
              if (held?.has(d - first)) continue;
              removed[d] = 0;
              count++;
              kept++;
              for (let f = 0; f < FIELD_COUNT; f++) sums[f]! += base.lengths[d * FIELD_COUNT + f]!;
            }
            return kept > 0;
          });
          cached = { removed, loaded: { meta: { ...base.meta, document_count: count, length_sums: sums, notes }, lengths: base.lengths } };
        }
        return cached;
      };
      return {
        meta: () => state().loaded,
        holds: (id) => state().removed[id] === 0,
        load: (key) => {
          const { removed } = state();
          const shard = current() ? load(key) : null;
          return shard && current() ? combineShards(shard, removed, null) : null;
        },
      };
    };
    const generation = this.fellBack;
    return new ShardedEngine(
      restrict(() => this.meta(), (key) => this.shard(key), () => this.fellBack === generation),
      () => {
        const fb = this.fallback();
        return restrict(() => fb.meta(), (key) => fb.load(key), () => true);
      },
    );
  }

  /**
   * Every document that has one of `terms` in one of `fields` (field ids, see {@link SEARCH_FIELDS}):
   * `visit(id)` once per (term, field) posting, so a document may be visited more than once.
   */
  fieldDocs(terms: readonly string[], fields: readonly number[], visit: (id: number) => void): void {
    for (const [key, group] of groupTerms(terms)) {
      const shard = this.shard(key);
      if (!shard) continue;
      const lookup = shardLookup(shard);
      for (const t of group) {
        const ti = lookup.get(t);
        if (ti === undefined) continue;
        for (const f of fields) {
          for (let j = shard.offsets[ti * FIELD_COUNT + f]!; j < shard.offsets[ti * FIELD_COUNT + f + 1]!; j++) visit(shard.docs[j]!);
        }
      }
    }
  }

  /** Load the shards of these terms (a missing persisted shard switches to the in-memory build once). */
  prepare(terms: readonly string[]): void {
    for (const [key] of groupTerms(terms)) this.shard(key);
  }

  /**
   * Score every document matching any exact term (OR). `visit(id, score, mask)` is called once per matching
   * document; bit i of `mask` is set when the document has `terms[i]` in some field (i < 32; later terms
   * have no bit). Documents come in ascending id order of first match (callers must not rely on the order).
   * `stemWeight` (≥ 0, default 0 = off) adds each term's stemmed-copy score at that weight (module doc);
   * a document with only the stemmed form of `terms[i]` is visited but gets no bit i (the mask says which
   * exact terms are there, which is what the phrase bound needs), and `exact` is false for a document
   * that has no exact term at all (only stemmed forms). `scoreOnly` (terms of `terms`, default none): the
   * common terms (docs/INDEX.md "Common terms"), scored and counted only in documents another term of
   * `terms` found (exactly or, with a stem weight, by its stem); they never add a document, nor make one exact.
   */
  exact(terms: readonly string[], visit: (id: number, score: number, mask: number, exact: boolean) => void, stemWeight = 0, scoreOnly: ReadonlySet<string> = NO_TERMS): void {
    const groups = groupTerms(terms);
    const { meta, lengths } = this.meta();
    const N = meta.document_count;
    if (N === 0) return;
    const avg = meta.length_sums.map((s) => s / N);
    const sc = this.scratchArrays();
    const matched = scoreOnly.size > 0 ? this.matchedBy(terms.filter((t) => !scoreOnly.has(t)), stemWeight) : null;
    const position = new Map<string, number>();
    terms.forEach((t, i) => {
      if (i < 32 && !position.has(t)) position.set(t, i);
    });
    const touched: number[] = [];
    const groupDocs: number[] = [];
    const termDocs: number[] = [];
    for (const [key, groupTermsList] of groups) {
      const shard = this.shard(key);
      if (!shard) continue;
      const lookup = shardLookup(shard);
      groupDocs.length = 0;
      for (const t of groupTermsList) {
        const ti = lookup.get(t);
        if (ti === undefined && stemWeight === 0) continue;
        const qi = position.get(t) ?? -1;
        const bit = qi >= 0 && qi < 32 ? (1 << qi) >>> 0 : 0;
        const only = matched !== null && scoreOnly.has(t);
        termDocs.length = 0;
        const stamp = ++sc.stamp;
        // The exact term's postings at weight 1, then its stemmed term's at the stem weight;
        // termDocs[0 … exactCount) have the exact term, the rest only its stemmed form.
        const runs: [shard: CompactShard, term: number, weight: number][] = [];
        if (ti !== undefined) runs.push([shard, ti, 1]);
        const stem = stemWeight > 0 ? this.stemRun(t) : null;
        if (stem) runs.push([stem[0], stem[1], stemWeight]);
        let exactCount = 0;
        for (const [sh, si, weight] of runs) {
          const isExact = sh === shard && si === ti;
          for (let f = 0; f < FIELD_COUNT; f++) {
            const a = sh.offsets[si * FIELD_COUNT + f]!;
            const b = sh.offsets[si * FIELD_COUNT + f + 1]!;
            if (a === b) continue;
            const df = b - a;
            const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
            const boost = BOOSTS[f]!;
            const avgF = avg[f]!;
            for (let j = a; j < b; j++) {
              const d = sh.docs[j]!;
              if (only && matched![d] === 0) continue;
              const tf = sh.tfs[j]!;
              const fieldLength = lengths[d * FIELD_COUNT + f]!;
              const raw = idf * (BM25.d + tf * (BM25.k + 1) / (tf + BM25.k * (1 - BM25.b + BM25.b * fieldLength / avgF)));
              const weighted = 1 * 1 * boost * 1 * raw;
              const scored = isExact ? weighted : weight * weighted;
              if (sc.mark[d] !== stamp) {
                sc.mark[d] = stamp;
                sc.term[d] = scored;
                termDocs.push(d);
              } else sc.term[d] = sc.term[d]! + scored;
            }
          }
          if (isExact) exactCount = termDocs.length;
        }
        for (let x = 0; x < termDocs.length; x++) {
          const d = termDocs[x]!;
          if (x < exactCount) {
            sc.mask[d] = (sc.mask[d]! | bit) >>> 0;
            if (!only) sc.exact[d] = 1;
          }
          if (sc.gq[d] === 0) {
            sc.group[d] = sc.term[d]!;
            groupDocs.push(d);
          } else sc.group[d] = sc.group[d]! + sc.term[d]!;
          sc.gq[d] = sc.gq[d]! + 1;
        }
      }
      for (const d of groupDocs) {
        const q = sc.gq[d]!;
        const reported = sc.group[d]! * q;
        if (sc.terms[d] === 0) {
          sc.raw[d] = reported / q;
          touched.push(d);
        } else sc.raw[d] = sc.raw[d]! + reported / q;
        sc.terms[d] = sc.terms[d]! + q;
        sc.gq[d] = 0;
        sc.group[d] = 0;
      }
    }
    for (const d of touched) {
      visit(d, sc.raw[d]! * sc.terms[d]!, sc.mask[d]!, sc.exact[d] === 1);
      sc.mask[d] = 0;
      sc.exact[d] = 0;
      sc.raw[d] = 0;
      sc.terms[d] = 0;
    }
  }

  /** Per document, 1 when it has one of `terms` (exactly, or its stemmed form with a stem weight). */
  private matchedBy(terms: readonly string[], stemWeight: number): Uint8Array {
    const out = new Uint8Array(this.meta().meta.next_id);
    for (const [key, group] of groupTerms(terms)) {
      const shard = this.shard(key);
      if (!shard) continue;
      const lookup = shardLookup(shard);
      for (const t of group) {
        const runs: [CompactShard, number][] = [];
        const ti = lookup.get(t);
        if (ti !== undefined) runs.push([shard, ti]);
        const stem = stemWeight > 0 ? this.stemRun(t) : null;
        if (stem) runs.push(stem);
        for (const [sh, si] of runs) {
          for (let j = sh.offsets[si * FIELD_COUNT]!; j < sh.offsets[(si + 1) * FIELD_COUNT]!; j++) out[sh.docs[j]!] = 1;
        }
      }
    }
    return out;
  }

  /**
   * The postings of the stemmed term of `term` (its shard and term index), or null when the term has no
   * stem ({@link stemTerm}) or no chunk has it. A stem keeps its word's first letter, so it sits in the
   * same shard as the exact term; it is looked up by its own key all the same.
   */
  private stemRun(term: string): [CompactShard, number] | null {
    const stem = stemTerm(term);
    if (stem === null) return null;
    const shard = this.shard(shardKey(stem));
    if (!shard) return null;
    const si = shardLookup(shard).get(stem);
    return si === undefined ? null : [shard, si];
  }

  /**
   * The same documents and scores as {@link exact}, with exact top-k pruning (src/search/maxscore.ts):
   * `visit` is called only for the documents that can still be among the top `gate.k` after the
   * factors `gate` bounds, or that decide the re-rank pool; for them `score` and `mask` are exactly
   * those of {@link exact} with stem weight 0 (every document visited has an exact term). Queries of more
   * than 32 terms (no mask bit for the rest) are not pruned. `scoreOnly`: as for {@link exact}; their runs
   * are scanned last, for documents already found only.
   */
  exactPruned(terms: readonly string[], gate: PruneGate, visit: (id: number, score: number, mask: number, exact: boolean) => void, scoreOnly: ReadonlySet<string> = NO_TERMS): void {
    if (terms.length > 32) {
      this.exact(terms, visit, 0, scoreOnly);
      return;
    }
    const { meta, lengths } = this.meta();
    const N = meta.document_count;
    if (N === 0) return;
    const avg = meta.length_sums.map((s) => s / N);
    const runs: PostingRun[] = [];
    const order: number[][] = [];
    for (const [key, groupTermsList] of groupTerms(terms)) {
      const shard = this.shard(key);
      if (!shard) continue;
      const lookup = shardLookup(shard);
      const maxima = this.maximaOf(shard);
      const group: number[] = [];
      for (const t of groupTermsList) {
        const ti = lookup.get(t);
        if (ti === undefined) continue;
        const qi = terms.indexOf(t);
        group.push(qi);
        for (let f = 0; f < FIELD_COUNT; f++) {
          const a = shard.offsets[ti * FIELD_COUNT + f]!;
          const b = shard.offsets[ti * FIELD_COUNT + f + 1]!;
          if (a === b) continue;
          const df = b - a;
          const run = {
            term: qi, field: f, docs: shard.docs, tfs: shard.tfs, start: a, end: b,
            idf: Math.log(1 + (N - df + 0.5) / (df + 0.5)), boost: BOOSTS[f]!, avgLength: avg[f]!, max: 0, scoreOnly: scoreOnly.has(t),
          };
          let max = maxima[ti * FIELD_COUNT + f]!;
          if (Number.isNaN(max)) {
            max = runMax(run, lengths, FIELD_COUNT);
            maxima[ti * FIELD_COUNT + f] = max;
          }
          run.max = max;
          runs.push(run);
        }
      }
      if (group.length > 0) order.push(group);
    }
    prunedExact(runs, terms.length, order, lengths, FIELD_COUNT, gate, this.pruneScratchArrays(), (id, score, mask) => visit(id, score, mask, true));
  }

  private maximaOf(shard: CompactShard): Float64Array {
    let m = this.runMaxima.get(shard);
    if (!m) {
      m = new Float64Array(shard.terms.length * FIELD_COUNT).fill(NaN);
      this.runMaxima.set(shard, m);
    }
    return m;
  }

  private pruneScratchArrays(): PruneScratch {
    const n = this.meta().meta.next_id;
    if (!this.pruneScratch || this.pruneScratch.mark.length < n) {
      this.pruneScratch = pruneScratch(n);
    }
    return this.pruneScratch;
  }

  /**
   * The expansion query: OR over exact, prefix (terms ≥ 3 characters, weight 0.375) and fuzzy (terms
   * ≥ 5 characters, 20 % edits, weight 0.45) matches, through MiniSearch (built from the shard on first use).
   */
  expanded(terms: readonly string[]): EngineHit[] {
    const acc = new Map<number, { raw: number; terms: number }>();
    for (const [key, group] of groupTerms(terms)) {
      const ms = this.miniSearchOf(key);
      if (!ms) continue;
      const results: SearchResult[] = ms.search(group.join(' '), {
        boost: SEARCH_BOOST,
        combineWith: 'OR',
        tokenize: identityTokenize,
        processTerm: identityTerm,
        prefix: (t: string) => t.length >= 3,
        fuzzy: (t: string) => (t.length >= 5 ? 0.2 : false),
        weights: { prefix: 0.375, fuzzy: 0.45 },
      });
      for (const r of results) {
        const n = r.queryTerms.length || 1;
        const a = acc.get(r.id as number);
        if (a) {
          a.raw += r.score / n;
          a.terms += n;
        } else acc.set(r.id as number, { raw: r.score / n, terms: n });
      }
    }
    const hits: EngineHit[] = [];
    for (const [id, a] of acc) hits.push({ id, score: a.raw * a.terms });
    return hits;
  }

  private miniSearchOf(key: string): MiniSearch | null {
    if (this.miniSearch.has(key)) return this.miniSearch.get(key)!;
    const shard = this.shard(key);
    if (!shard) {
      this.miniSearch.set(key, null);
      return null;
    }
    const { meta, lengths } = this.meta();
    const documentIds: Record<string, number> = {};
    const fieldLength: Record<string, number[]> = {};
    const index: [string, Record<string, Record<string, number>>][] = [];
    for (let t = 0; t < shard.terms.length; t++) {
      // Stemmed terms are a field of their own, not words: expansion never matches them.
      if (isStemTerm(shard.terms[t]!)) continue;
      const byField: Record<string, Record<string, number>> = {};
      for (let f = 0; f < FIELD_COUNT; f++) {
        const a = shard.offsets[t * FIELD_COUNT + f]!;
        const b = shard.offsets[t * FIELD_COUNT + f + 1]!;
        if (a === b) continue;
        const docs: Record<string, number> = {};
        for (let j = a; j < b; j++) {
          const d = shard.docs[j]!;
          docs[String(d)] = shard.tfs[j]!;
          if (documentIds[String(d)] === undefined) {
            documentIds[String(d)] = d;
            fieldLength[String(d)] = Array.from(lengths.subarray(d * FIELD_COUNT, d * FIELD_COUNT + FIELD_COUNT));
          }
        }
        byField[String(f)] = docs;
      }
      index.push([shard.terms[t]!, byField]);
    }
    const N = meta.document_count;
    const ms = MiniSearch.loadJS(
      {
        documentCount: N,
        nextId: meta.next_id,
        documentIds,
        fieldIds: { title: 0, aliases: 1, headings: 2, text: 3 },
        fieldLength,
        averageFieldLength: meta.length_sums.map((s) => (N ? s / N : 0)),
        storedFields: {},
        dirtCount: 0,
        index,
        serializationVersion: 2,
      },
      { fields: [...SEARCH_FIELDS], tokenize: identityTokenize, processTerm: identityTerm },
    );
    this.miniSearch.set(key, ms);
    return ms;
  }
}

const NO_TERMS: ReadonlySet<string> = new Set();

const identityTokenize = (s: string): string[] => s.split(' ');
const identityTerm = (t: string): string => t;

/** Query terms grouped by shard key; keys in code-unit order, terms in query order. */
function groupTerms(terms: readonly string[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const t of terms) {
    const key = shardKey(t);
    const g = groups.get(key);
    if (g) g.push(t);
    else groups.set(key, [t]);
  }
  return [...groups.entries()].sort((a, b) => compareCodeUnits(a[0], b[0]));
}

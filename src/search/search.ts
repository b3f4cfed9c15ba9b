/**
 * `search(index, query, options)`: BM25 (MiniSearch's arithmetic) over chunks — fields title, aliases,
 * heading path and text, title and headings boosted — re-ranked by phrase evidence, with filters and a
 * deterministic order.
 *
 * Ranking rules (docs/INDEX.md "Search"):
 * 1. Query terms are tokenised and folded like the index (diacritics, apostrophes, case); stop words never
 *    make a chunk a hit unless the query has nothing else. With the phrase re-rank they are *common terms*
 *    (`commonTerms`, docs/INDEX.md "Common terms"): scored by BM25 and counted in its coordination factor,
 *    but only in chunks another query term found (Lucene's CommonTermsQuery rule).
 * 2. Exact terms first: an OR query of the exact terms, scored by BM25. When the query has two or more
 *    terms (stop words counted), each exact hit's score is multiplied by its phrase factor
 *    (src/search/phrase.ts): `1 + 2 × (run − 1) / (n − 1)` for the longest run of consecutive query terms
 *    found consecutively in the chunk's text, a heading or (first chunk) the note's title or an alias
 *    (the first PHRASE_MAX_TERMS = 32 query terms); every chunk of a note whose title or an alias occurs
 *    in the query as a phrase (all its terms, consecutive, stop words included) is multiplied by the
 *    entity prior ENTITY_PRIOR on top. A run lying wholly within such a name where it occurs in the query
 *    is not counted (`namedSpans`: the name is the prior's evidence, not phrase evidence), except that a
 *    note's first chunk whose title or an alias is the whole query has run n (the name match), and ranks
 *    immediately before its note's best-ranked other chunk, with that chunk's score, when that one ranks
 *    above it (a name lookup opens the note at its introduction; `introductionFirst`).
 *    Only the first PHRASE_CANDIDATES (2,000) exact hits in BM25 order (score, then path, chunk_index;
 *    before filters) are re-ranked; the rest keep their BM25 score, so every hit's score depends on the
 *    query alone (not on k or the filters) and a smaller k returns a prefix of a larger k's hits. Candidates are examined in that order until none
 *    could still enter the top k, so the result is exactly the top k of these scores.
 * 3. Only when the exact terms yield fewer than `k` hits (after filters) are the chunks that match only
 *    stemmed forms (rule 5) appended, then, when still fewer than `k`, prefix (terms ≥ 3 characters)
 *    and fuzzy (terms ≥ 5 characters, 20 % edits) expansions consulted, and hits found only that way are
 *    ranked below every exact hit (their scores are scaled under the lowest exact score, keeping their own
 *    order). An inexact match never outranks an exact one.
 * 4. Scores are rounded to 6 decimals; ties are broken by path, then chunk_index (code-unit order).
 * 5. Stemmed field (`stemWeight`, default: the config's `stem_weight`, else 0 = off): each BM25 term also scores its Porter
 *    stem over the stemmed copy of headings and text at that weight (src/search/engine.ts), so a chunk
 *    with `relaying` counts as having `relays`. Exact first twice over: a chunk with at least one exact
 *    query term is an exact hit, scored with the stemmed field added; a chunk with only stemmed forms is
 *    in the tier below every exact hit (rule 3); and within a chunk a word in its exact form scores at
 *    least what it would as a stemmed form (weight ≤ 1).
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, LoreRef, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { isUnderPrefix } from '../refs/ref.js';
import { compareCodeUnits } from '../vault/scan.js';
import { ShardedEngine, type ShardSource } from './engine.js';
import { roundScore as round, type PruneGate } from './maxscore.js';
import { FIELD_COUNT, PostingsBuilder, packTokens, type CompactShard, type DocNote, type LoadedMeta } from './postings.js';
import { commonTerms, hasStemmedField, noteTokens, phraseTerms, queryTerms } from './tokenize.js';
import { ENTITY_PRIOR, longestPhraseRun, NAME_MATCH_FACTOR, namedSpans, nameTerms, occursAsPhrase, PHRASE_MAX_TERMS, phraseFactor, phraseIsName, termPositions } from './phrase.js';

/** Options of {@link search}. */
export interface SearchOptions {
  /** Maximum number of hits, integer ≥ 1; default 10. */
  k?: number;
  /**
   * Keep only chunks whose path is under one of these vault-path prefixes, matched on whole segments:
   * `World/Politics` and `World/Politics/` match `World/Politics/x.md` but not `World/PoliticsOld/x.md`;
   * a prefix naming a file (`World/a.md`) matches only that file; `''` matches everything. A prefix may
   * carry this index's namespace, as refs do (`FixtureLore:World/Politics/` = `World/Politics/`).
   */
  prefixes?: string[];
  /** Keep only chunks of notes that have at least one of these target classes. */
  classes?: string[];
  /** Keep only chunks of these vault paths (the proxy uses this to confine a session). */
  paths?: Iterable<VaultPath>;
  /**
   * Score as if the index held only the notes at these vault paths: the BM25 statistics — document
   * count, document frequency of every term, average field lengths — the phrase re-rank pool and the
   * prefix/fuzzy vocabulary all come from their chunks, and no other note can be a hit. A hit's score is
   * then exactly the score an index built from those notes alone would give it, so a score cannot reveal
   * whether a note outside the set (a hidden or out-of-scope note) contains a word. `paths`, `prefixes`
   * and `classes` still filter inside it. Paths that are not notes of the index are ignored; an empty set
   * gives no hits. Cost: each shard a query touches is filtered to the set once and kept (the last
   * {@link CORPUS_CACHE} sets are cached per index, so a session that keeps one set pays it once per
   * shard). A {@link SearchCorpus} (from {@link searchCorpus}) is the same set prepared once — a session or
   * a walk that asks many queries of one set passes it to skip re-reading the set on every query — and can
   * also leave single chunks out (withheld sections). Default: the whole index.
   */
  corpus?: Iterable<VaultPath> | SearchCorpus;
  /** Allow prefix/fuzzy expansion when exact terms give fewer than `k` hits; default true. */
  expand?: boolean;
  /**
   * Re-rank exact hits by phrase evidence and name matches (rule 2 above); default true. `false` gives
   * plain field-boosted BM25 scores — traversal uses that, so a policy's `min_relevance` stays a ratio of
   * BM25 scores (docs/TRAVERSAL.md).
   */
  phrase?: boolean;
  /**
   * Score the query's stop words ({@link commonTerms}) as BM25 terms in the chunks its other terms found
   * — never a hit of their own (docs/INDEX.md "Common terms"). Default: true with the phrase re-rank, false
   * with `phrase: false`, so that plain BM25 (traversal relevance, a policy's `min_relevance`) stays over the
   * content terms. With `phrase: false` and `commonTerms: true`: the BM25 scores the re-rank multiplies.
   */
  commonTerms?: boolean;
  /**
   * Weight of the stemmed field beside the exact one (docs/INDEX.md "Stemmed field"): each query term's
   * Porter stem is scored over the stemmed copy of the headings and text fields, times this, and added to
   * the term's exact score; a chunk with only a stemmed form of a term (`relaying` for `relays`) matches
   * it. A number from 0 to 1: 0 turns the field off (exact terms only); at most 1, so a word in its exact
   * form never scores less than as a stemmed match. Applies to the BM25 scores of `phrase: false` too.
   * Default: the index's `stem_weight` (loretrace.config.json), else 0 — off by default, as measured in
   * docs/EVAL.md "Stemmed field". Above 0 it needs an index built with a `stem_weight` above 0 (only such
   * an index carries the stemmed copy): `bad_option` otherwise.
   */
  stemWeight?: number;
}

/** One search hit (the `results[]` item of `loretrace search --json`). */
export interface SearchHit {
  /** `Namespace:path#chunkN`. */
  ref: LoreRef;
  path: VaultPath;
  chunk_index: number;
  /** 1-based, inclusive, lines of the original file. */
  line_start: number;
  line_end: number;
  heading_path: string[];
  /** BM25 score rounded to 6 decimals (see the ranking rules above). */
  score: number;
  /** Exact text of lines line_start..line_end joined with "\n". */
  text: string;
}

/** Per index: the engine, the doc table decoded, and where chunk records come from. */
interface SearchState {
  engine: ShardedEngine;
  /** Engines restricted to a corpus (`SearchOptions.corpus`), by sorted path list; least recent first. */
  corpora?: Map<string, SearchState>;
  chunksOfPath: (path: VaultPath) => readonly Chunk[];
  docs?: DocTable;
  /** Title then aliases of a note, read one note at a time (from the indexer's store). */
  namesOfPath?: (path: VaultPath) => readonly string[];
  /** Path → title and aliases from `index.notes`, built on first use when there is no `namesOfPath`. */
  names?: Map<string, string[]>;
  /** SHA-256 (hex) of the bytes a note's records were parsed from, by path: the phrase memo's key ({@link contentClass}). */
  bytesHashOf?: (path: VaultPath) => string | undefined;
}

/** Doc id → note (index into meta.notes) and ordinal (position in `VaultIndex.chunks`). */
interface DocTable {
  meta: LoadedMeta;
  note: Int32Array;
  ord: Int32Array;
  /** Doc id → its position among its note's chunks (its `chunk_index` in the note's chunk list). */
  position: Int32Array;
  /** Largest chunk count of a note (≥ 1): the stride of the phrase memo's integer keys. */
  maxChunks: number;
  /** Note → its content class ({@link contentClass}), filled on first use; −1 not known yet, −2 none. */
  content?: Int32Array;
  /** Content class ids by `sha256 file-name`. */
  contentIds?: Map<string, number>;
  /** Title then aliases by content class, filled on first use ({@link namesOfNote}). */
  classNames?: Map<number, readonly string[]>;
}

const states = new WeakMap<VaultIndex, SearchState>();

/**
 * Attach a shard source to an index (called by indexVault). `chunksOfPath` returns a note's chunks and
 * `namesOfPath` its title then aliases (the indexer reads both lazily from its store, one note at a time,
 * so a search never loads every chunk or note record). `bytesHashOf` gives the SHA-256 (lower-case hex)
 * of the bytes each note's records were parsed from (the manifest's `sha256`), or undefined for a path it
 * does not know: the phrase re-rank then shares one phrase check among the chunks of notes with the same
 * bytes and file name without reading their records ({@link contentClass}). Without a source,
 * the first search builds the shards in memory from `index.notes` and `index.chunks` — same tokens, same
 * scores.
 */
export function attachSearchSource(
  index: VaultIndex,
  source: ShardSource,
  chunksOfPath?: (path: VaultPath) => readonly Chunk[],
  namesOfPath?: (path: VaultPath) => readonly string[],
  bytesHashOf?: (path: VaultPath) => string | undefined,
): void {
  states.set(index, {
    engine: new ShardedEngine(source, () => memorySource(index.notes, index.chunks, hasStemmedField(index.config))),
    chunksOfPath: chunksOfPath ?? defaultChunks(index),
    namesOfPath,
    bytesHashOf,
  });
}

function defaultChunks(index: VaultIndex): (path: VaultPath) => readonly Chunk[] {
  let byPath: Map<string, Chunk[]> | null = null;
  return (path) => {
    if (!byPath) {
      byPath = new Map();
      for (const c of index.chunks) {
        const list = byPath.get(c.path);
        if (list) list.push(c);
        else byPath.set(c.path, [c]);
      }
    }
    return byPath.get(path) ?? [];
  };
}

function stateOf(index: VaultIndex): SearchState {
  let st = states.get(index);
  if (!st) {
    const build = () => memorySource(index.notes, index.chunks, hasStemmedField(index.config));
    st = { engine: new ShardedEngine(build(), build), chunksOfPath: defaultChunks(index) };
    states.set(index, st);
  }
  return st;
}

/** Restricted engines kept per index (`SearchOptions.corpus`); the least recently used is dropped first. */
export const CORPUS_CACHE = 4;

/**
 * A search corpus prepared once: the notes a search may score and find, and the chunks of them it must
 * treat as absent. Pass it as `SearchOptions.corpus`.
 */
export interface SearchCorpus {
  readonly kind: 'search_corpus';
  /** Vault paths of the notes in the corpus. */
  readonly paths: ReadonlySet<VaultPath>;
  /** Per note path, the `chunk_index`es left out of the corpus (as if the index did not hold them). */
  readonly withheld: ReadonlyMap<VaultPath, ReadonlySet<number>>;
  /** Canonical form of the set (sorted paths, then sorted withheld chunks): the cache key of its engine. */
  readonly key: string;
}

/**
 * Prepare a corpus for `SearchOptions.corpus`: the notes at `paths`, minus the chunks `withheld` lists
 * per path (`chunk_index` values; a withheld section of a note is its chunks, docs/PROXY.md "Sections").
 * A withheld chunk adds nothing to the statistics and is never a hit, exactly as if its note had been
 * indexed without it; a note whose every chunk is withheld is out of the corpus. Cost: one sort of the
 * paths (done here once, not per query).
 */
export function searchCorpus(paths: Iterable<VaultPath>, withheld: Iterable<readonly [VaultPath, Iterable<number>]> = []): SearchCorpus {
  const set = new Set<VaultPath>(paths);
  const out = new Map<VaultPath, ReadonlySet<number>>();
  for (const [path, chunks] of withheld) {
    const s = new Set<number>(out.get(path) ?? []);
    for (const c of chunks) s.add(c);
    if (s.size > 0) out.set(path, s);
  }
  const held = [...out].map(([p, c]) => [p, [...c].sort((a, b) => a - b)] as const).sort((a, b) => compareCodeUnits(a[0], b[0]));
  return { kind: 'search_corpus', paths: set, withheld: out, key: JSON.stringify([[...set].sort(compareCodeUnits), held]) };
}

function isSearchCorpus(c: Iterable<VaultPath> | SearchCorpus): c is SearchCorpus {
  return (c as SearchCorpus).kind === 'search_corpus';
}

/** The search state of `st`'s index restricted to a corpus (cached, see {@link CORPUS_CACHE}). */
function corpusState(st: SearchState, given: Iterable<VaultPath> | SearchCorpus): SearchState {
  const corpus = isSearchCorpus(given) ? given : searchCorpus(given);
  const key = corpus.key;
  const corpora = (st.corpora ??= new Map());
  let sub = corpora.get(key);
  if (sub) corpora.delete(key);
  else sub = { engine: st.engine.restrictedTo(corpus.paths, corpus.withheld), chunksOfPath: st.chunksOfPath, namesOfPath: st.namesOfPath, names: st.names, bytesHashOf: st.bytesHashOf };
  corpora.set(key, sub);
  while (corpora.size > CORPUS_CACHE) corpora.delete(corpora.keys().next().value!);
  return sub;
}

function docTable(st: SearchState): DocTable {
  const meta = st.engine.meta();
  if (st.docs && st.docs.meta === meta) return st.docs;
  const n = meta.meta.next_id;
  const note = new Int32Array(n).fill(-1);
  const ord = new Int32Array(n).fill(-1);
  const position = new Int32Array(n).fill(-1);
  let o = 0;
  let maxChunks = 1;
  meta.meta.notes.forEach(([, first, count], i) => {
    if (count > maxChunks) maxChunks = count;
    for (let c = 0; c < count; c++) {
      note[first + c] = i;
      ord[first + c] = o++;
      position[first + c] = c;
    }
  });
  st.docs = { meta, note, ord, position, maxChunks };
  return st.docs;
}

/**
 * In-memory shard source built from notes and chunks (doc id = chunk ordinal): the fallback when the
 * persisted search data is missing, and the source of indexes not built by indexVault. `stemmed`: carry
 * the stemmed copy of headings and text (as the index's config asks, see `hasStemmedField`).
 */
export function memorySource(notes: readonly NoteRecord[], chunks: readonly Chunk[], stemmed = false): ShardSource {
  const byPath = new Map<string, Chunk[]>();
  for (const c of chunks) {
    const list = byPath.get(c.path);
    if (list) list.push(c);
    else byPath.set(c.path, [c]);
  }
  const sorted = [...notes].sort((a, b) => compareCodeUnits(a.path, b.path));
  const builder = new PostingsBuilder();
  const docNotes: DocNote[] = [];
  let next = 0;
  for (const n of sorted) {
    const own = byPath.get(n.path) ?? [];
    builder.addPacked(packTokens([noteTokens(n, own, stemmed)]), next);
    docNotes.push([n.path, next, own.length, n.classes ?? []]);
    next += own.length;
  }
  return sourceFromBuilder(builder, docNotes, next);
}

/** Shards and meta from a builder whose doc ids are 0 … count-1. */
export function sourceFromBuilder(builder: PostingsBuilder, docNotes: DocNote[], count: number): ShardSource & { shards: Map<string, CompactShard>; loaded: LoadedMeta } {
  const shards = builder.buildAll();
  const lengths = new Uint32Array(count * FIELD_COUNT);
  const sums = [0, 0, 0, 0];
  for (const [id, l] of builder.lengths) {
    for (let f = 0; f < FIELD_COUNT; f++) {
      lengths[id * FIELD_COUNT + f] = l[f]!;
      sums[f]! += l[f]!;
    }
  }
  const loaded: LoadedMeta = {
    meta: { document_count: count, next_id: count, length_sums: sums, notes: docNotes, shards: [...shards.keys()] },
    lengths,
  };
  return { shards, loaded, meta: () => loaded, load: (key) => shards.get(key) ?? null };
}

function pathUnderPrefix(path: string, prefix: string): boolean {
  return prefix === '' || isUnderPrefix(path, prefix);
}

/**
 * Search the chunks of `index` for `query`.
 *
 * Example (FixtureLore): `search(index, 'Framgang', { k: 1 })` →
 * `[{ ref: 'FixtureLore:Search/Framgång Charter.md#chunk0', path: 'Search/Framgång Charter.md', chunk_index: 0, … }]`.
 *
 * Cost: one pass over the postings of the query's terms (typed arrays) with exact top-k pruning
 * (src/search/maxscore.ts: (term, field) runs that cannot lift an unseen chunk into the top k are only
 * searched for the chunks already seen that can still matter, and chunks that cannot be a result are
 * never re-ranked; not with a stem weight above 0), then a k-sized heap; only the k returned chunks are
 * materialised. Names and phrase evidence are read once per content class (copies of a note share
 * them). The results are those of scoring every matching chunk ({@link exhaustiveSearch}), byte for byte.
 *
 * @returns at most `k` hits, score descending, then path, then chunk_index (code-unit order).
 * @throws LoretraceError `bad_option` (exit 2) when `k` is not an integer ≥ 1.
 */
export function search(index: VaultIndex, query: string, options: SearchOptions = {}): SearchHit[] {
  return searchWith(index, query, options, true);
}

/**
 * {@link search} with every matching chunk scored (no top-k pruning): the reference the pruned search is
 * tested against (tests/search-prune.test.ts). Same results, byte for byte.
 */
export function exhaustiveSearch(index: VaultIndex, query: string, options: SearchOptions = {}): SearchHit[] {
  return searchWith(index, query, options, false);
}

function searchWith(index: VaultIndex, query: string, options: SearchOptions, prune: boolean): SearchHit[] {
  const k = options.k ?? 10;
  if (!Number.isInteger(k) || k < 1) {
    throw new LoretraceError('bad_option', `search option k must be an integer ≥ 1 (got ${String(k)})`, { expected: 'an integer ≥ 1' }, 2);
  }
  const stemWeight = searchStemWeight(index, options.stemWeight);
  const terms = queryTerms(query);
  if (terms.length === 0) return [];
  const st = options.corpus ? corpusState(stateOf(index), options.corpus) : stateOf(index);
  const engine = st.engine;
  engine.prepare(terms); // loads the query's shards (may switch to the in-memory build, see engine.ts)
  const table = docTable(st);
  const own = `${index.namespace}:`;
  const prefixes = options.prefixes?.map((p) => (p.startsWith(own) ? p.slice(own.length) : p));
  const filter = makeFilter({ ...options, prefixes }, table);
  let ranked: Ranked[];
  // Chunks that match only stemmed forms of the query terms: a tier of their own, below every exact hit.
  const stemOnly = new TopK(k);
  const keepStemOnly = (id: number, score: number, ord: number) => {
    if (stemOnly.accepts(score, ord) && filter(id)) stemOnly.push(id, score, ord);
  };
  const common = (options.commonTerms ?? options.phrase !== false) ? commonTerms(query) : [];
  if (options.phrase === false) {
    const heap = new TopK(k);
    const bm25Terms = [...terms, ...common];
    const scoreOnly = new Set(common);
    const visit = (id: number, raw: number, _mask: number, exact: boolean) => {
      const score = round(raw);
      const ord = table.ord[id]!;
      if (!exact) keepStemOnly(id, score, ord);
      else if (heap.accepts(score, ord) && filter(id)) heap.push(id, score, ord);
    };
    // Pruning covers the exact fields only; with the stemmed field every document is scored.
    if (prune && stemWeight === 0) engine.exactPruned(bm25Terms, { k, pool: 0, keep: filter, factor: () => 1, maxFactor: 1 }, visit, scoreOnly);
    else engine.exact(bm25Terms, visit, stemWeight, scoreOnly);
    ranked = heap.sorted();
  } else {
    ranked = phraseRanked(index, st, table, engine, terms, common, phraseTerms(query), k, filter, stemWeight, keepStemOnly, prune);
  }
  if (ranked.length < k) ranked = appendBelow(ranked, stemOnly.sorted(), table);
  if (ranked.length < k && options.expand !== false) {
    const seen = new Set(ranked.map((h) => h.id));
    const extra = engine.expanded(terms).filter((h) => !seen.has(h.id) && filter(h.id));
    ranked = appendBelow(ranked, order(extra, table), table);
  }
  return ranked.slice(0, k).map((h) => {
    const [path, first] = table.meta.meta.notes[table.note[h.id]!]!;
    const c = st.chunksOfPath(path)[h.id - first]!;
    return {
      ref: `${index.namespace}:${c.path}#chunk${c.chunk_index}`,
      path: c.path,
      chunk_index: c.chunk_index,
      line_start: c.line_start,
      line_end: c.line_end,
      heading_path: c.heading_path,
      score: h.score,
      text: c.text,
    };
  });
}

/**
 * The stem weight of one search: `given` (the `stemWeight` option) or else the index's config
 * `stem_weight`, else 0.
 * @throws LoretraceError `bad_option` (exit 2) when it is not a number from 0 to 1, or is above 0 for an
 *   index without the stemmed copy (its config's `stem_weight` is 0 or absent).
 */
function searchStemWeight(index: VaultIndex, given: number | undefined): number {
  const weight = given ?? index.config?.stem_weight ?? 0;
  if (typeof weight !== 'number' || !(weight >= 0 && weight <= 1)) {
    throw new LoretraceError('bad_option', `search option stemWeight must be a number from 0 to 1 (got ${String(weight)})`, { expected: 'a number from 0 to 1' }, 2);
  }
  if (weight > 0 && !hasStemmedField(index.config)) {
    throw new LoretraceError(
      'bad_option',
      `search option stemWeight ${weight} needs an index with the stemmed field: set "stem_weight" (0 … 1) in loretrace.config.json`,
      { expected: 'stemWeight 0 for an index built without "stem_weight"' },
      2,
    );
  }
  return weight;
}

/**
 * `ranked` followed by the hits of a lower tier (`extra`, in rank order): when the best of `extra` scores
 * half the lowest of `ranked` or more, every score of `extra` is scaled by the same factor so that its best
 * is exactly that half (their own order kept); so a lower tier never outranks a higher one.
 */
function appendBelow(ranked: Ranked[], extra: Ranked[], table: DocTable): Ranked[] {
  if (extra.length === 0) return ranked;
  const floor = ranked.length > 0 ? ranked[ranked.length - 1]!.score : Infinity;
  const top = extra[0]!.score;
  const factor = ranked.length > 0 && top >= floor * 0.5 ? (floor * 0.5) / top : 1;
  const scaled = extra.map((h) => ({ ...h, score: round(h.score * factor) }));
  return ranked.concat(order(scaled, table));
}

/**
 * Size of the phrase re-rank pool: the first this many exact hits in BM25 order (score, then ordinal),
 * before filters, get their phrase and name factors; later hits keep their BM25 score. A bound on the
 * chunk texts one query reads that depends neither on `k` nor on the filters.
 */
export const PHRASE_CANDIDATES = 2000;

/**
 * Exact hits re-ranked by phrase evidence (src/search/phrase.ts): candidates are taken in BM25 order
 * (score, then ordinal); the first PHRASE_CANDIDATES get `round(bm25 × factor)`, the others keep `bm25`;
 * the walk stops when the next candidate could not enter the top k even with the largest factor it can
 * have. A candidate's bound comes from the query terms it matched, so most need no text; chunks with the
 * same text, headings and note names share one phrase computation. `query`: all phrase terms of the
 * query (stop words kept); the phrase is its first PHRASE_MAX_TERMS, and a name match needs the whole query.
 * `stemWeight` goes to the BM25 pass; a chunk with no exact query term (only stemmed forms) is handed to
 * `stemOnly` with its BM25 score instead (the tier below, see {@link appendBelow}).
 */
function phraseRanked(
  index: VaultIndex,
  st: SearchState,
  table: DocTable,
  engine: ShardedEngine,
  content: readonly string[],
  common: readonly string[],
  query: readonly string[],
  k: number,
  filter: (id: number) => boolean,
  stemWeight: number,
  stemOnly: (id: number, score: number, ord: number) => void,
  prune: boolean,
): Ranked[] {
  // The pool is the first PHRASE_CANDIDATES of all exact hits, filtered or not, so a hit's score does not
  // depend on the filters (a proxy confined to some notes scores them as the CLI does). `hitScores` and
  // `hitOrds` hold the (score, ordinal) pairs of all hits, whose PHRASE_CANDIDATES-th best is the pool's
  // edge (one selection after the pass); only filtered hits become candidates.
  const hitScores: number[] = [];
  const hitOrds: number[] = [];
  const ids: number[] = [];
  const scores: number[] = [];
  const masks: number[] = [];
  const phrase = query.slice(0, PHRASE_MAX_TERMS);
  const n = phrase.length;
  // The BM25 terms: the content terms, then the common terms, which score only chunks a content term
  // found (engine.ts `exact`, `scoreOnly`).
  const terms = [...content, ...common];
  const scoreOnly = new Set(common);
  const bound = phraseBound(phrase, terms);
  const { notes: entities, names: entityNames } = entityNotes(index, st, table, engine, content, query, prune);
  const named = namedSpans(query, n, entityNames);
  const priorOf = (id: number) => (entities.has(table.note[id]!) ? ENTITY_PRIOR : 1);
  const maxFactor = phraseFactor(n, n) * NAME_MATCH_FACTOR * (entities.size > 0 ? ENTITY_PRIOR : 1);
  const visit = (id: number, raw: number, mask: number, exact: boolean) => {
    const score = round(raw);
    const ord = table.ord[id]!;
    if (!exact) {
      stemOnly(id, score, ord); // not an exact hit: neither in the pool nor a candidate
      return;
    }
    hitScores.push(score);
    hitOrds.push(ord);
    if (filter(id)) {
      ids.push(id);
      scores.push(score);
      masks.push(mask);
    }
  };
  // Pruning covers the exact fields only; with the stemmed field every document is scored.
  if (prune && stemWeight === 0) engine.exactPruned(terms, factorGate(table, k, filter, phrase, query, bound, entities, maxFactor), visit, scoreOnly);
  else engine.exact(terms, visit, stemWeight, scoreOnly);
  const edge = kthBest(hitScores, hitOrds, PHRASE_CANDIDATES);
  const inPool = (score: number, ord: number) => edge === null || score > edge.score || (score === edge.score && ord <= edge.ord);
  const order = new CandidateHeap(ids, scores, table.ord);
  const heap = new TopK(k);
  const evidenceOf = phraseEvidence(index, st, table, phrase, named, prune);
  while (order.size > 0) {
    const i = order.peek();
    const bm25 = scores[i]!;
    const id = ids[i]!;
    const ord = table.ord[id]!;
    // Past the pool, scores are plain BM25 (factor 1), so the walk ends at the first that cannot enter.
    const pooled = inPool(bm25, ord);
    if (!heap.accepts(round(bm25 * (pooled ? maxFactor : 1)), ord)) break;
    order.pop();
    if (!pooled) {
      heap.push(id, bm25, ord);
      continue;
    }
    const position = table.position[id]!;
    // What the BM25 pass already tells: the longest stretch of phrase terms this chunk can have (from the
    // query terms it matched), hence the largest factor it can get, before any text is read.
    const most = bound(masks[i]!);
    const mayBeName = position === 0 && most === n && query.length === n;
    const prior = priorOf(id);
    // The bound and the factor multiply the same three parts in the same order, each part of the bound
    // at least the actual one, so (rounding being monotonic) the bound is never below the score.
    if (!heap.accepts(round(bm25 * (phraseFactor(most, n) * (mayBeName ? NAME_MATCH_FACTOR : 1) * prior)), ord)) continue;
    let run = 0;
    let isName = false;
    if (most >= 2 || mayBeName) {
      [run, isName] = evidenceOf(id, most >= 2, mayBeName);
      // A name match is the whole phrase matched by the note's own name: run n, although the run lies
      // within the name (which `named` would not count).
      if (isName) run = n;
    }
    const factor = phraseFactor(run, n) * (isName ? NAME_MATCH_FACTOR : 1) * prior;
    const score = round(bm25 * factor);
    if (heap.accepts(score, ord)) heap.push(id, score, ord);
  }
  const lookups = query.length === n ? namedNotes(index, st, table, entities, phrase, prune) : [];
  return introductionFirst(heap.sorted(), lookups, table, engine);
}

/**
 * The notes (doc-table indices, ascending) among `entities` one of whose names (title or an alias) is the
 * whole query phrase — a lookup by name of that note. `memo`: names read once per content class
 * ({@link namesOfNote}), else each note's own.
 */
function namedNotes(index: VaultIndex, st: SearchState, table: DocTable, entities: ReadonlySet<number>, phrase: readonly string[], memo: boolean): number[] {
  const out: number[] = [];
  for (const i of entities) if (phraseIsName(phrase, memo ? namesOfNote(index, st, table, i) : noteNames(index, st, table.meta.meta.notes[i]![0]))) out.push(i);
  return out.sort((a, b) => a - b);
}

/**
 * The name-lookup rule (docs/INDEX.md "Search"): when the whole query is the name of a note, that note's
 * first chunk (its introduction, what the name stands for; Obsidian opens a note found by name at its top)
 * ranks immediately before the best-ranked other chunk of its note, with that chunk's score, whenever that
 * chunk ranks above it — a section headed by the name ("A Life in Framgång") would otherwise outrank the
 * introduction, since the name match's × 1.5 does not outweigh a heading field holding the name. As scores:
 * the first chunk scores the best score of its note's chunks (ties go to it: it is the note's first by
 * path and chunk_index), so the order stays score, then path, then chunk_index. Exact on the top k:
 * `ranked` is the top k by the other scores, and the first chunk only ever moves to just before a hit
 * of `ranked` (its note's best, which is at least as good as anything the first chunk can be lifted to);
 * when it was not among them it enters and the last hit leaves. A first chunk the search does not hold (a
 * corpus withholds it) is not moved.
 */
function introductionFirst(ranked: Ranked[], notes: readonly number[], table: DocTable, engine: ShardedEngine): Ranked[] {
  if (notes.length === 0) return ranked;
  const out = [...ranked];
  for (const note of notes) {
    const first = table.meta.meta.notes[note]![1];
    if (!engine.holds(first)) continue;
    const best = out.findIndex((h) => table.note[h.id] === note);
    if (best < 0 || out[best]!.id === first) continue;
    const at = out.findIndex((h) => h.id === first);
    if (at >= 0) out.splice(at, 1);
    out.splice(best, 0, { id: first, score: out[best]!.score, ord: table.ord[first]! });
  }
  return out.slice(0, ranked.length);
}

/**
 * The phrase evidence of candidate chunks for one query, as `(id, needRun, needName) → [run, isName]`:
 * the chunk's longest phrase run (`longestPhraseRun` over its text, its headings and, for a note's first
 * chunk, the note's title and aliases, runs within the query's entity names `named` not counted) when
 * `needRun`, else 0; whether the whole query is its note's
 * title or an alias when `needName` (a note's first chunk only), else false. With `memo` (the pruned
 * search), chunks of one content class ({@link contentClass}) at the same position share one
 * computation, and a chunk whose class and position were seen is answered without reading its chunk or
 * note record — at ×1000 the pool holds a thousand copies of each top chunk. Without it (the exhaustive
 * reference search) every candidate is computed from its own records.
 */
function phraseEvidence(
  index: VaultIndex,
  st: SearchState,
  table: DocTable,
  phrase: readonly string[],
  named: Uint8Array,
  memo: boolean,
): (id: number, needRun: boolean, needName: boolean) => [number, boolean] {
  const byClass = new Map<number, { run?: number; isName?: boolean }>();
  const byText = new Map<string, { run?: number; isName?: boolean }>();
  return (id, needRun, needName) => {
    const note = table.note[id]!;
    const position = table.position[id]!;
    const path = () => table.meta.meta.notes[note]![0];
    let chunk: Chunk | undefined;
    const chunkOf = () => (chunk ??= st.chunksOfPath(path())[position]!);
    let names: readonly string[] | undefined;
    const namesOf = () => (names ??= position === 0 ? noteNames(index, st, path()) : []);
    let entry: { run?: number; isName?: boolean } = {};
    if (memo) {
      const cls = contentClass(st, table, note);
      // Without a content class (an index not built by indexVault), chunks with the same text, headings
      // and names share one computation, as their records tell.
      const map: Map<number | string, { run?: number; isName?: boolean }> = cls >= 0 ? byClass : byText;
      const key = cls >= 0 ? cls * table.maxChunks + position : JSON.stringify([chunkOf().hash, chunkOf().heading_path, namesOf()]);
      const known = map.get(key);
      if (known) entry = known;
      else map.set(key, entry);
    }
    if (needName && entry.isName === undefined) entry.isName = phraseIsName(phrase, namesOf());
    if (needRun && entry.run === undefined) entry.run = longestPhraseRun(phrase, [chunkOf().text, ...chunkOf().heading_path, ...namesOf()], named);
    return [needRun ? entry.run! : 0, needName ? entry.isName! : false];
  };
}

/**
 * The content class of a note of the doc table: one small integer per (SHA-256 of the note's bytes,
 * file name), interned per table, from the index's `bytesHashOf` (the manifest); −2 when the index gives
 * no hash for the note (an index not built by indexVault). Two notes of one class have the same chunks at
 * every position and the same names, so the same phrase evidence for every query: a note's chunks (text
 * and heading path, in order) are a function of its bytes and the index's config (`parseNote`,
 * src/notes/parse.ts), its names of its bytes and file name (frontmatter `title`, else the file name
 * without `.md`; frontmatter `aliases`). Known without reading any record; one hash lookup per note.
 */
function contentClass(st: SearchState, table: DocTable, note: number): number {
  const content = (table.content ??= new Int32Array(table.meta.meta.notes.length).fill(-1));
  let cls = content[note]!;
  if (cls !== -1) return cls;
  const path = table.meta.meta.notes[note]![0];
  const sha = st.bytesHashOf?.(path);
  if (sha === undefined) cls = -2;
  else {
    const ids = (table.contentIds ??= new Map());
    const key = `${sha} ${path.slice(path.lastIndexOf('/') + 1)}`;
    cls = ids.get(key) ?? ids.size;
    if (cls === ids.size) ids.set(key, cls);
  }
  content[note] = cls;
  return cls;
}

/**
 * The pruning bounds of the phrase re-rank (src/search/maxscore.ts): a chunk's largest factor is the
 * walk's own per-candidate bound below (phrase run bound from its matched terms, name match only for a
 * note's first chunk when the whole query can be a name, its note's entity prior); for a chunk not known
 * yet (`id` −1) the prior of any entity and a possible name match. `maxFactor` is the walk's global bound.
 */
function factorGate(
  table: DocTable,
  k: number,
  filter: (id: number) => boolean,
  phrase: readonly string[],
  query: readonly string[],
  bound: (mask: number) => number,
  entities: ReadonlySet<number>,
  maxFactor: number,
): PruneGate {
  const n = phrase.length;
  const anyPrior = entities.size > 0 ? ENTITY_PRIOR : 1;
  return {
    k,
    pool: PHRASE_CANDIDATES,
    keep: filter,
    maxFactor,
    factor: (mask, id) => {
      const most = bound(mask);
      const note = id >= 0 ? table.note[id]! : -1;
      // A name match needs the whole query and a note's first chunk (position 0; any chunk when unknown).
      const mayBeName = most === n && query.length === n && (note < 0 || table.position[id]! === 0);
      const prior = id < 0 ? anyPrior : entities.size > 0 && entities.has(note) ? ENTITY_PRIOR : 1;
      return phraseFactor(most, n) * (mayBeName ? NAME_MATCH_FACTOR : 1) * prior;
    },
  };
}

/** Fields a note's names are indexed in (title, aliases). */
const NAME_FIELDS = [0, 1];

/**
 * The notes (indices into the doc table) whose title or one of whose aliases occurs in the query as a
 * phrase: all of the name's terms, consecutive and in order, among the query's terms (`query`: all of
 * them, stop words and repeats kept), and those names' terms (for `namedSpans`). Candidates are the notes
 * with a BM25 term of the query in their title or aliases field (a name made only of stop words is never
 * an entity); only their names are read. With `memo` (the pruned search) names are read and checked once
 * per content class ({@link namesOfNote}); without it (the exhaustive reference) each note's own.
 */
function entityNotes(
  index: VaultIndex,
  st: SearchState,
  table: DocTable,
  engine: ShardedEngine,
  terms: readonly string[],
  query: readonly string[],
  memo: boolean,
): { notes: Set<number>; names: string[][] } {
  const candidates = new Set<number>();
  engine.fieldDocs(terms, NAME_FIELDS, (id) => {
    const i = table.note[id]!;
    if (i >= 0) candidates.add(i);
  });
  const out = { notes: new Set<number>(), names: [] as string[][] };
  if (candidates.size === 0) return out;
  const positions = termPositions(query);
  // The names of a note that occur in the query, per content class: the copies of a note (same bytes and
  // file name) have the same names, so at ×1000 one check stands for a thousand notes.
  const byClass = new Map<number, string[][]>();
  for (const i of candidates) {
    const cls = memo ? contentClass(st, table, i) : -1;
    let found = cls >= 0 ? byClass.get(cls) : undefined;
    if (!found) {
      found = [];
      for (const name of memo ? namesOfNote(index, st, table, i) : noteNames(index, st, table.meta.meta.notes[i]![0])) {
        const nt = nameTerms(name);
        if (occursAsPhrase(nt, query, positions)) found.push(nt);
      }
      if (cls >= 0) byClass.set(cls, found);
    }
    if (found.length > 0) out.notes.add(i);
    for (const nt of found) out.names.push(nt);
  }
  return out;
}

/**
 * For one query: a function from a chunk's matched-term mask (`ShardedEngine.exact`) to the longest
 * stretch of consecutive phrase terms the chunk can contain — every phrase term it matched, plus every
 * term BM25 did not look up (stop words dropped from the query, terms past the 32nd), which may be there.
 * An upper bound of `longestPhraseRun`.
 */
function phraseBound(phrase: readonly string[], terms: readonly string[]): (mask: number) => number {
  const bits = phrase.map((t) => {
    const qi = terms.indexOf(t);
    return qi >= 0 && qi < 32 ? (1 << qi) >>> 0 : 0;
  });
  const memo = new Map<number, number>();
  return (mask) => {
    let best = memo.get(mask);
    if (best !== undefined) return best;
    best = 0;
    let cur = 0;
    for (const b of bits) {
      cur = b === 0 || (mask & b) !== 0 ? cur + 1 : 0;
      if (cur > best) best = cur;
    }
    memo.set(mask, best);
    return best;
  };
}

/**
 * Title and aliases of note `note` of the doc table: read once per content class ({@link contentClass}: a
 * note's names are a function of its bytes and file name), so the thousand copies of a note cost one read
 * of its record; a note without a class is read on its own ({@link noteNames}).
 */
function namesOfNote(index: VaultIndex, st: SearchState, table: DocTable, note: number): readonly string[] {
  const cls = contentClass(st, table, note);
  if (cls < 0) return noteNames(index, st, table.meta.meta.notes[note]![0]);
  const cache = (table.classNames ??= new Map());
  let names = cache.get(cls);
  if (!names) cache.set(cls, (names = noteNames(index, st, table.meta.meta.notes[note]![0])));
  return names;
}

/** Title and aliases of the note at `path` (for the phrase check of its first chunk). */
function noteNames(index: VaultIndex, st: SearchState, path: VaultPath): readonly string[] {
  if (st.namesOfPath) return st.namesOfPath(path);
  if (!st.names) {
    st.names = new Map();
    for (const n of index.notes) st.names.set(n.path, [n.title, ...n.aliases]);
  }
  return st.names.get(path) ?? [];
}

/** Candidate positions in a binary max-heap by (score descending, ordinal ascending); O(n) to build. */
class CandidateHeap {
  private readonly heap: Int32Array;
  size: number;

  constructor(private readonly ids: readonly number[], private readonly scores: readonly number[], private readonly ords: Int32Array) {
    this.size = ids.length;
    this.heap = new Int32Array(this.size);
    for (let i = 0; i < this.size; i++) this.heap[i] = i;
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** `a` ranks before `b` (an arrow property: passed to `siftDown` without binding). */
  private readonly before = (a: number, b: number): boolean => {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa > sb || (sa === sb && this.ords[this.ids[a]!]! < this.ords[this.ids[b]!]!);
  };

  peek(): number {
    return this.heap[0]!;
  }

  pop(): number {
    const top = this.heap[0]!;
    this.size--;
    if (this.size > 0) {
      this.heap[0] = this.heap[this.size]!;
      this.down(0);
    }
    return top;
  }

  private down(i: number): void {
    siftDown(this.heap, this.size, i, this.before);
  }
}

/**
 * Restore a binary heap below position `i`: `above(a, b)` is true when `a` belongs nearer the root than
 * `b`. Shared by the top-k heap and the candidate heap.
 */
function siftDown<T>(h: { [i: number]: T }, size: number, i: number, above: (a: T, b: T) => boolean): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < size && above(h[l]!, h[m]!)) m = l;
    if (r < size && above(h[r]!, h[m]!)) m = r;
    if (m === i) return;
    const t = h[i]!;
    h[i] = h[m]!;
    h[m] = t;
    i = m;
  }
}

interface Ranked { id: number; score: number; ord: number }

/**
 * The `k`-th best of the pairs `(scores[i], ords[i])` in rank order (score descending, then ordinal
 * ascending; ordinals are distinct, so the order is total), or null when there are fewer than `k`.
 * Quickselect (Hoare's FIND) over an index array: expected linear in the number of pairs, where keeping a
 * k-sized heap costs a log-k sift for each of the first k pairs and each better one after them.
 */
function kthBest(scores: readonly number[], ords: readonly number[], k: number): { score: number; ord: number } | null {
  const n = scores.length;
  if (k < 1 || n < k) return null;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  const before = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && ords[a]! < ords[b]!);
  let lo = 0;
  let hi = n - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = idx[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (before(idx[i]!, pivot)) i++;
      while (before(pivot, idx[j]!)) j--;
      if (i <= j) {
        const t = idx[i]!;
        idx[i] = idx[j]!;
        idx[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  const at = idx[target]!;
  return { score: scores[at]!, ord: ords[at]! };
}

function order(hits: { id: number; score: number }[], table: DocTable): Ranked[] {
  return hits
    .map((h) => ({ id: h.id, score: round(h.score), ord: table.ord[h.id]! }))
    .sort((a, b) => b.score - a.score || a.ord - b.ord);
}

/** The k best (score descending, then ordinal = path, chunk_index ascending) in a binary heap. */
class TopK {
  private readonly items: Ranked[] = [];
  constructor(private readonly k: number) {}

  /** `a` ranks below `b`. */
  private static worse(a: Ranked, b: Ranked): boolean {
    return a.score < b.score || (a.score === b.score && a.ord > b.ord);
  }

  /** Whether a hit with this score and ordinal would enter the heap. */
  accepts(score: number, ord: number): boolean {
    if (this.items.length < this.k) return true;
    const min = this.items[0]!;
    return score > min.score || (score === min.score && ord < min.ord);
  }

  push(id: number, score: number, ord: number): void {
    const h = this.items;
    const item = { id, score, ord };
    if (h.length < this.k) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!TopK.worse(h[i]!, h[p]!)) break;
        [h[i], h[p]] = [h[p]!, h[i]!];
        i = p;
      }
      return;
    }
    h[0] = item;
    siftDown(h, h.length, 0, TopK.worse);
  }

  sorted(): Ranked[] {
    return [...this.items].sort((a, b) => b.score - a.score || a.ord - b.ord);
  }
}

function makeFilter(options: SearchOptions, table: DocTable): (id: number) => boolean {
  const prefixes = options.prefixes?.length ? options.prefixes : null;
  const classes = options.classes?.length ? new Set(options.classes) : null;
  const paths = options.paths ? new Set<string>(options.paths) : null;
  if (!prefixes && !classes && !paths) return () => true;
  const notes = table.meta.meta.notes;
  const memo = new Int8Array(notes.length);
  return (id) => {
    const i = table.note[id]!;
    if (i < 0) return false;
    const m = memo[i]!;
    if (m !== 0) return m > 0;
    const [path, , , cls] = notes[i]!;
    let ok = true;
    if (paths && !paths.has(path)) ok = false;
    else if (prefixes && !prefixes.some((p) => pathUnderPrefix(path, p))) ok = false;
    else if (classes && !cls.some((c) => classes.has(c))) ok = false;
    memo[i] = ok ? 1 : -1;
    return ok;
  };
}

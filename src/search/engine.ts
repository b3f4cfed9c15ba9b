/**
 * The search engine behind `search()`: MiniSearch BM25, split into *term shards* so a persisted index
 * loads only what a query needs.
 *
 * A shard holds every term whose first character maps to it (`a`…`z`, `num` for digits, `other`), with
 * its postings, plus the document lengths of the chunks those postings mention. The corpus-wide
 * statistics BM25 needs (document count, average field lengths) live in one small {@link SearchMeta}.
 * Each shard is a valid MiniSearch serialisation (`MiniSearch.loadJS`), so scoring is MiniSearch's own
 * BM25; scores of terms in different shards are combined exactly as MiniSearch combines an OR query
 * (sum of term scores × number of matched query terms).
 *
 * Consequence, documented in docs/INDEX.md: prefix and fuzzy expansion never change a term's first
 * character (a shard only knows its own terms). Results never depend on which shards were loaded before.
 */
import MiniSearch, { type SearchResult } from 'minisearch';
import type { Chunk, NoteRecord } from '../types.js';
import { compareCodeUnits } from '../vault/scan.js';
import { noteTokens, type NoteTokens } from './tokenize.js';

/** Indexed fields, in field-id order. */
export const SEARCH_FIELDS = ['title', 'aliases', 'headings', 'text'] as const;

/** Field boosts: title and headings weigh more than body text. */
export const SEARCH_BOOST: Record<(typeof SEARCH_FIELDS)[number], number> = { title: 3, aliases: 2.5, headings: 2, text: 1 };

/** Corpus statistics shared by every shard. Document ids are ordinals into `VaultIndex.chunks`. */
export interface SearchMeta {
  documentCount: number;
  nextId: number;
  averageFieldLength: number[];
  fieldIds: Record<string, number>;
  serializationVersion: 2;
  /** Shard keys that have at least one term, sorted. */
  shards: string[];
}

/** One term shard in MiniSearch's serialised shape (minus the corpus-wide fields of {@link SearchMeta}). */
export interface SearchShard {
  documentIds: Record<string, number>;
  fieldLength: Record<string, number[]>;
  index: [string, Record<string, Record<string, number>>][];
}

/** Where shards come from: in memory (just built) or a loader (persisted index, read on demand). */
export interface ShardSource {
  meta: SearchMeta;
  /** Returns the shard, or null when the shard cannot be loaded (the caller then rebuilds in memory). */
  load(key: string): SearchShard | null;
}

/** Shard key of a term: its first character when `a`–`z`, `num` for a digit, else `other`. */
export function shardKey(term: string): string {
  const c = term.charCodeAt(0);
  if (c >= 97 && c <= 122) return term[0]!;
  if (c >= 48 && c <= 57) return 'num';
  return 'other';
}

/**
 * Build meta and shards from chunks and their token data. `tokensOf(path)` gives the {@link NoteTokens}
 * of a note (from the persisted parse records, or computed on the spot).
 */
export function buildShards(
  notes: readonly NoteRecord[],
  chunks: readonly Chunk[],
  tokensOf: (note: NoteRecord, chunks: Chunk[]) => NoteTokens,
): { meta: SearchMeta; shards: Map<string, SearchShard> } {
  const postings = new Map<string, Map<string, Map<number, Record<string, number>>>>();
  const lengths: number[][] = [];
  const sums = [0, 0, 0, 0];
  const noteOf = new Map(notes.map((n) => [n.path, n]));
  let start = 0;
  while (start < chunks.length) {
    const path = chunks[start]!.path;
    let end = start;
    while (end < chunks.length && chunks[end]!.path === path) end++;
    const own = chunks.slice(start, end);
    const note = noteOf.get(path) ?? ({ path, title: '', aliases: [] } as unknown as NoteRecord);
    const tokens = tokensOf(note, own);
    for (let i = 0; i < own.length; i++) {
      const id = start + i;
      const ct = tokens.chunks[i] ?? { headings: { tf: {}, len: 0 }, text: { tf: {}, len: 0 } };
      const fields = [tokens.title, tokens.aliases, ct.headings, ct.text];
      const len = fields.map((f) => f.len);
      lengths.push(len);
      for (let f = 0; f < 4; f++) {
        sums[f]! += len[f]!;
        for (const [term, tf] of Object.entries(fields[f]!.tf)) {
          const key = shardKey(term);
          let shard = postings.get(key);
          if (!shard) postings.set(key, (shard = new Map()));
          let byDoc = shard.get(term);
          if (!byDoc) shard.set(term, (byDoc = new Map()));
          let entry = byDoc.get(id);
          if (!entry) byDoc.set(id, (entry = {}));
          entry[String(f)] = tf;
        }
      }
    }
    start = end;
  }
  const documentCount = chunks.length;
  const shards = new Map<string, SearchShard>();
  for (const key of [...postings.keys()].sort(compareCodeUnits)) {
    const terms = postings.get(key)!;
    const docs = new Set<number>();
    const index: SearchShard['index'] = [];
    for (const term of [...terms.keys()].sort(compareCodeUnits)) {
      const byField: Record<string, Record<string, number>> = {};
      for (const [doc, perField] of terms.get(term)!) {
        docs.add(doc);
        for (const [f, tf] of Object.entries(perField)) (byField[f] ??= {})[String(doc)] = tf;
      }
      index.push([term, byField]);
    }
    const documentIds: Record<string, number> = {};
    const fieldLength: Record<string, number[]> = {};
    for (const doc of [...docs].sort((a, b) => a - b)) {
      documentIds[String(doc)] = doc;
      fieldLength[String(doc)] = lengths[doc]!;
    }
    shards.set(key, { documentIds, fieldLength, index });
  }
  const meta: SearchMeta = {
    documentCount,
    nextId: documentCount,
    averageFieldLength: sums.map((s) => (documentCount ? s / documentCount : 0)),
    fieldIds: { title: 0, aliases: 1, headings: 2, text: 3 },
    serializationVersion: 2,
    shards: [...shards.keys()],
  };
  return { meta, shards };
}

/** In-memory shard source for an index that has no persisted search data (or whose data failed to load). */
export function memorySource(notes: readonly NoteRecord[], chunks: readonly Chunk[]): ShardSource {
  const { meta, shards } = buildShards(notes, chunks, (n, c) => noteTokens(n, c));
  return { meta, load: (key) => shards.get(key) ?? null };
}

const identityTokenize = (s: string): string[] => s.split(' ');
const identityTerm = (t: string): string => t;

/** Search options one engine call takes (already-normalised terms). */
export interface EngineQuery {
  terms: string[];
  /** Expand terms by prefix and fuzzy matching (lower weights, never across first characters). */
  expand: boolean;
}

/** Raw engine result: document id (chunk ordinal), combined score, matched query terms. */
export interface EngineHit {
  id: number;
  score: number;
  exactTerms: number;
}

/**
 * A loaded engine: caches one MiniSearch per shard. Deterministic: each shard's content is fixed, so
 * results never depend on load order.
 */
export class ShardedEngine {
  private readonly loaded = new Map<string, MiniSearch | null>();
  private current: ShardSource;
  private fellBack = false;

  constructor(source: ShardSource, private readonly fallback: () => ShardSource) {
    this.current = source;
  }

  private shard(key: string): MiniSearch | null {
    if (this.loaded.has(key)) return this.loaded.get(key)!;
    if (!this.current.meta.shards.includes(key)) {
      this.loaded.set(key, null);
      return null;
    }
    let shard = this.current.load(key);
    if (!shard && !this.fellBack) {
      // Persisted data missing or corrupt: switch to an in-memory build (same tokens ⇒ same scores).
      this.fellBack = true;
      this.current = this.fallback();
      this.loaded.clear();
      shard = this.current.load(key);
    }
    if (!shard) return null;
    const meta = this.current.meta;
    const ms = MiniSearch.loadJS(
      {
        documentCount: meta.documentCount,
        nextId: meta.nextId,
        documentIds: shard.documentIds,
        fieldIds: meta.fieldIds,
        fieldLength: shard.fieldLength,
        averageFieldLength: meta.averageFieldLength,
        storedFields: {},
        dirtCount: 0,
        index: shard.index,
        serializationVersion: 2,
      },
      { fields: [...SEARCH_FIELDS], tokenize: identityTokenize, processTerm: identityTerm },
    );
    this.loaded.set(key, ms);
    return ms;
  }

  /** Run one OR query over the terms; returns hits in no particular order. */
  run(query: EngineQuery): EngineHit[] {
    const groups = new Map<string, string[]>();
    for (const t of query.terms) {
      const key = shardKey(t);
      const g = groups.get(key);
      if (g) g.push(t);
      else groups.set(key, [t]);
    }
    const acc = new Map<number, { raw: number; terms: number; exact: number }>();
    for (const key of [...groups.keys()].sort(compareCodeUnits)) {
      const ms = this.shard(key);
      if (!ms) continue;
      const terms = groups.get(key)!;
      const results: SearchResult[] = ms.search(terms.join(' '), {
        boost: SEARCH_BOOST,
        combineWith: 'OR',
        tokenize: identityTokenize,
        processTerm: identityTerm,
        prefix: query.expand ? (t: string) => t.length >= 3 : false,
        fuzzy: query.expand ? (t: string) => (t.length >= 5 ? 0.2 : false) : false,
        weights: { prefix: 0.375, fuzzy: 0.45 },
      });
      for (const r of results) {
        const n = r.queryTerms.length || 1;
        const exact = r.queryTerms.filter((q) => r.terms.includes(q)).length;
        const a = acc.get(r.id as number);
        if (a) {
          a.raw += r.score / n;
          a.terms += n;
          a.exact += exact;
        } else acc.set(r.id as number, { raw: r.score / n, terms: n, exact });
      }
    }
    const hits: EngineHit[] = [];
    for (const [id, a] of acc) hits.push({ id, score: a.raw * a.terms, exactTerms: a.exact });
    return hits;
  }
}

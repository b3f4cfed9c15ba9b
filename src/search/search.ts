/**
 * `search(index, query, options)`: BM25 (MiniSearch) over chunks — fields title, aliases, heading path
 * and text, title and headings boosted — with filters and a deterministic order.
 *
 * Ranking rules (docs/INDEX.md "Search"):
 * 1. Query terms are tokenised and folded like the index (diacritics, apostrophes, case); stop words are
 *    dropped unless the query has nothing else.
 * 2. Exact terms first: an OR query of the exact terms. Only when it yields fewer than `k` hits (after
 *    filters) are prefix (terms ≥ 3 characters) and fuzzy (terms ≥ 5 characters, 20 % edits) expansions
 *    consulted, and hits found only that way are ranked below every exact hit (their scores are scaled
 *    under the lowest exact score, keeping their own order). An inexact match never outranks an exact one.
 * 3. Scores are rounded to 6 decimals; ties are broken by path, then chunk_index (code-unit order).
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, LoreRef, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { isUnderPrefix } from '../refs/ref.js';
import { compareCodeUnits } from '../vault/scan.js';
import { ShardedEngine, memorySource, type ShardSource } from './engine.js';
import { queryTerms } from './tokenize.js';

/** Options of {@link search}. */
export interface SearchOptions {
  /** Maximum number of hits, integer ≥ 1; default 10. */
  k?: number;
  /**
   * Keep only chunks whose path is under one of these vault-path prefixes, matched on whole segments:
   * `World/Politics` and `World/Politics/` match `World/Politics/x.md` but not `World/PoliticsOld/x.md`;
   * a prefix naming a file (`World/a.md`) matches only that file; `''` matches everything.
   */
  prefixes?: string[];
  /** Keep only chunks of notes that have at least one of these target classes. */
  classes?: string[];
  /** Keep only chunks of these vault paths (the proxy uses this to confine a session). */
  paths?: Iterable<VaultPath>;
  /** Allow prefix/fuzzy expansion when exact terms give fewer than `k` hits; default true. */
  expand?: boolean;
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

const engines = new WeakMap<VaultIndex, ShardedEngine>();
const notesByPath = new WeakMap<VaultIndex, Map<string, NoteRecord>>();

/**
 * Attach a persisted shard source to an index (called by indexVault). Without one, the first search
 * builds the shards in memory from `index.chunks` — same tokens, same scores.
 */
export function attachSearchSource(index: VaultIndex, source: ShardSource): void {
  engines.set(index, new ShardedEngine(source, () => memorySource(index.notes, index.chunks)));
}

function engineOf(index: VaultIndex): ShardedEngine {
  let engine = engines.get(index);
  if (!engine) {
    const build = () => memorySource(index.notes, index.chunks);
    engine = new ShardedEngine(build(), build);
    engines.set(index, engine);
  }
  return engine;
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
 * @returns at most `k` hits, score descending, then path, then chunk_index (code-unit order).
 * @throws LoretraceError `bad_option` (exit 2) when `k` is not an integer ≥ 1.
 */
export function search(index: VaultIndex, query: string, options: SearchOptions = {}): SearchHit[] {
  const k = options.k ?? 10;
  if (!Number.isInteger(k) || k < 1) {
    throw new LoretraceError('bad_option', `search option k must be an integer ≥ 1 (got ${String(k)})`, { expected: 'an integer ≥ 1' }, 2);
  }
  const terms = queryTerms(query);
  if (terms.length === 0) return [];
  const filter = makeFilter(index, options);
  const engine = engineOf(index);
  const chunks = index.chunks;

  const exact = engine.run({ terms, expand: false }).filter((h) => filter(chunks[h.id]!));
  let ranked = order(exact, chunks);
  if (ranked.length < k && options.expand !== false) {
    const seen = new Set(exact.map((h) => h.id));
    const extra = engine.run({ terms, expand: true }).filter((h) => !seen.has(h.id) && filter(chunks[h.id]!));
    if (extra.length > 0) {
      const extraRanked = order(extra, chunks);
      const floor = ranked.length > 0 ? ranked[ranked.length - 1]!.score : Infinity;
      const top = extraRanked[0]!.score;
      const factor = ranked.length > 0 && top >= floor * 0.5 ? (floor * 0.5) / top : 1;
      const scaled = extraRanked.map((h) => ({ ...h, score: round(h.score * factor) }));
      ranked = ranked.concat(order(scaled, chunks));
    }
  }
  return ranked.slice(0, k).map((h) => {
    const c = chunks[h.id]!;
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

function round(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

function order(hits: { id: number; score: number }[], chunks: readonly Chunk[]): { id: number; score: number }[] {
  return hits
    .map((h) => ({ id: h.id, score: round(h.score) }))
    .sort((a, b) => b.score - a.score
      || compareCodeUnits(chunks[a.id]!.path, chunks[b.id]!.path)
      || chunks[a.id]!.chunk_index - chunks[b.id]!.chunk_index);
}

function makeFilter(index: VaultIndex, options: SearchOptions): (c: Chunk) => boolean {
  const prefixes = options.prefixes?.length ? options.prefixes : null;
  const classes = options.classes?.length ? new Set(options.classes) : null;
  const paths = options.paths ? new Set<string>(options.paths) : null;
  if (!prefixes && !classes && !paths) return () => true;
  let byPath = notesByPath.get(index);
  if (!byPath && classes) {
    byPath = new Map(index.notes.map((n) => [n.path, n]));
    notesByPath.set(index, byPath);
  }
  return (c) => {
    if (paths && !paths.has(c.path)) return false;
    if (prefixes && !prefixes.some((p) => pathUnderPrefix(c.path, p))) return false;
    if (classes && !(byPath!.get(c.path)?.classes ?? []).some((cl) => classes.has(cl))) return false;
    return true;
  };
}

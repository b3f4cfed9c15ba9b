/**
 * The rankers the eval compares, each a function `query → top-k locations` over one vault index:
 *
 * - `loretrace`: the library's `search(index, query, { k })` (field-boosted BM25 over heading chunks,
 *   phrase and name re-rank, entity prior — docs/INDEX.md "Search").
 * - `plain_bm25`: MiniSearch with default options over the text of the same chunks (the bench's plain
 *   anchor, scripts/bench/plain.mjs): what BM25 alone does with loretrace's chunking.
 * - `whole_note_bm25`: MiniSearch with default options over whole notes (every chunk of a note joined);
 *   a hit is the whole note, lines 1 … line_count — what a note-level index would cite.
 *
 * Ties keep each engine's own deterministic order.
 */
import MiniSearch from 'minisearch';
import { newPlainMiniSearch } from '../bench/plain.mjs';

/** Hits per query every ranker returns (MRR is computed within them). */
export const EVAL_K = 10;

/**
 * @typedef {{ path: string, line_start: number, line_end: number }} Location
 * @typedef {{ id: string, rank: (query: string) => Location[] }} Ranker
 */

/**
 * The three rankers over `index`.
 * @param {any} api loretrace's public API (dist/index.js)
 * @param {any} index a `VaultIndex`
 * @returns {Ranker[]}
 */
export function makeRankers(api, index) {
  const chunkLoc = new Map();
  const plain = newPlainMiniSearch();
  plain.addAll(index.chunks.map((c, i) => {
    chunkLoc.set(i, { path: c.path, line_start: c.line_start, line_end: c.line_end });
    return { id: i, text: c.text };
  }));
  const notes = [...index.notes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const noteText = new Map();
  for (const c of index.chunks) noteText.set(c.path, (noteText.has(c.path) ? noteText.get(c.path) + '\n' : '') + c.text);
  const whole = new MiniSearch({ fields: ['text'] });
  whole.addAll(notes.map((n, i) => ({ id: i, text: noteText.get(n.path) ?? '' })));
  return [
    {
      id: 'loretrace',
      rank: (q) => api.search(index, q, { k: EVAL_K }).map((h) => ({ path: h.path, line_start: h.line_start, line_end: h.line_end })),
    },
    { id: 'plain_bm25', rank: (q) => plain.search(q).slice(0, EVAL_K).map((h) => chunkLoc.get(h.id)) },
    {
      id: 'whole_note_bm25',
      rank: (q) => whole.search(q).slice(0, EVAL_K).map((h) => ({ path: notes[h.id].path, line_start: 1, line_end: notes[h.id].line_count })),
    },
  ];
}

/**
 * Peer rankers: search libraries a user would run instead of loretrace, indexed over loretrace's own
 * chunks (the file the search phase writes) and asked the same queries, each in its own phase child so
 * its peak RSS is its own. FlexSearch (npm `flexsearch`, pinned in package.json) as a `Document` index
 * over the chunk text, in two profiles:
 *
 * - `default`: `new Document({ document: { id, index: 'text' } })` — FlexSearch's defaults (strict
 *   whole-word tokens, every query term required);
 * - `match`: the same field with `preset: 'match'` — the preset FlexSearch documents for the best match
 *   quality (forward prefix tokens, a larger resolution, context scoring).
 *
 * Each profile is asked for 5 results (`limit: 5`), as loretrace is (`k: 5`). Neither ranks by BM25:
 * FlexSearch scores by its own resolution slots, so the quality figures (known-item and name lookups at
 * 5) are what tells whether the speed costs quality.
 */
import { now, gc, runIndices, latencyRuns, readChunkDocs } from './task-kit.mjs';
import { Unavailable } from './loretrace.mjs';

/**
 * FlexSearch's `Document` class, imported when a FlexSearch phase runs (so a checkout whose
 * node_modules predates the pin still runs every other phase).
 * @throws {Unavailable} when the package is not installed
 */
async function flexsearchDocument() {
  try {
    return (await import('flexsearch')).Document;
  } catch (e) {
    throw new Unavailable(`flexsearch is not installed (run npm ci): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The two FlexSearch profiles, by phase id: the field options given to `Document`. */
export const FLEXSEARCH_PROFILES = Object.freeze({
  flexsearch_default_search: Object.freeze({ field: 'text' }),
  flexsearch_match_search: Object.freeze({ field: 'text', preset: 'match' }),
});

/**
 * The ids FlexSearch returns for `query` (the `text` field's list; empty when nothing matches).
 * @param {any} index a FlexSearch Document
 * @param {string} query
 * @returns {string[]}
 */
function flexIds(index, query) {
  const res = index.search(query, { limit: 5 });
  return /** @type {string[]} */ (res[0]?.result ?? []);
}

/**
 * One FlexSearch profile: build the index over the chunks (timed once, `build_ms`), one untimed warm-up
 * query, then p50/p99 of the query set per run; top-5 locations of run 0 and of the note-name queries
 * (untimed) for the quality figures.
 * @param {{ phase: keyof typeof FLEXSEARCH_PROFILES, chunksFile: string, runs: number, queries: string[], nameQueries?: string[] }} p
 */
async function flexsearchSearch({ phase, chunksFile, runs, queries, nameQueries = [] }) {
  const profile = FLEXSEARCH_PROFILES[phase];
  if (!profile) throw new Error(`bench: unknown FlexSearch profile phase ${phase}`);
  const Document = await flexsearchDocument();
  const docs = await readChunkDocs(chunksFile);
  const locs = new Map(docs.map((d) => [d.id, { path: d.path, line_start: d.line_start, line_end: d.line_end }]));
  gc();
  const b0 = now();
  const index = new Document({ document: { id: 'id', index: [profile] } });
  for (const d of docs) index.add({ id: d.id, text: d.text });
  const buildMs = now() - b0;
  flexIds(index, queries[0]);
  const perRun = [];
  const top5loc = [];
  let empty = 0;
  for (const r of runIndices(runs)) {
    gc();
    const samples = [];
    for (const q of queries) {
      const t0 = now();
      const ids = flexIds(index, q);
      samples.push(now() - t0);
      if (r === 0) {
        top5loc.push(ids.slice(0, 5).map((id) => locs.get(id)));
        if (ids.length === 0) empty++;
      }
    }
    perRun.push(samples);
  }
  return {
    phases: { [phase]: { ...latencyRuns(perRun), extra: { chunks: docs.length, build_ms: buildMs, limit: 5, queries_without_hit: empty, profile } } },
    data: { top5loc, nameLoc: nameQueries.map((q) => flexIds(index, q).slice(0, 5).map((id) => locs.get(id))) },
  };
}

/** Peer tasks by name (each fills the phase of the same id). */
export const PEER_TASKS = {
  flexsearch_default_search: (p) => flexsearchSearch({ ...p, phase: 'flexsearch_default_search' }),
  flexsearch_match_search: (p) => flexsearchSearch({ ...p, phase: 'flexsearch_match_search' }),
};

/**
 * Bench extension: the cost of scoring with admitted-set statistics. A research session (and every
 * traversal) searches with `search(index, q, { corpus })`, whose BM25 statistics — document count,
 * document frequencies, average field lengths — come from the admitted notes only, so a score cannot
 * reveal whether a hidden or out-of-scope note contains a word (docs/PROXY.md "Scores"). The phase asks
 * the core search phase's query set with such a corpus and compares its p50 with unrestricted search.
 *
 * The admitted set: every note of the scaled vault but each tenth one in path order (code-unit order,
 * so the choice is deterministic and spread over every folder) — nine notes in ten admitted, the case
 * where the restricted postings are nearly as long as the full ones, so the filtering is not hidden by
 * a small corpus. The corpus is prepared once (`searchCorpus`), as a session and a walk prepare theirs. The restricted shards are built when a query first touches them and cached per
 * corpus (`CORPUS_CACHE`), as in a session; the untimed warm-up query's time is reported as
 * `first_query_ms`, and shards first touched during the timed runs show in p99, not p50.
 */
import { join } from 'node:path';
import { now, gc, runIndices, latencyRuns } from './task-kit.mjs';
import { requireApi, indexWith } from './loretrace.mjs';

/** Every `HIDDEN_EVERY`-th note (path order) is left out of the corpus. */
export const HIDDEN_EVERY = 10;

/**
 * The admitted set of a vault's notes: all paths but every {@link HIDDEN_EVERY}-th in code-unit order.
 * @param {string[]} paths note paths
 * @returns {string[]}
 */
export function admittedPaths(paths) {
  const sorted = [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.filter((_, i) => i % HIDDEN_EVERY !== HIDDEN_EVERY - 1);
}

/**
 * The phase task: index (warm from the core phases' index folder, or built here, untimed), one untimed warm-up query with the
 * corpus, then per run the query set with `{ k: 5, corpus }`; p50/p99 per run.
 * @param {{ root: string, indexDir: string, runs: number, queries: string[], distDir: string }} p
 */
async function admittedSearch({ root, indexDir, runs, queries, distDir }) {
  const api = await requireApi(distDir, ['indexVault', 'search', 'searchCorpus']);
  const index = await indexWith(api, root, indexDir);
  const admitted = admittedPaths(index.notes.map((n) => n.path));
  // Prepared once, as a research session and a traversal do.
  const corpus = api.searchCorpus(admitted);
  const t0 = now();
  api.search(index, queries[0], { k: 5, corpus });
  const firstQueryMs = now() - t0;
  const perRun = [];
  for (const _ of runIndices(runs)) {
    gc();
    const samples = [];
    for (const q of queries) {
      const s = now();
      api.search(index, q, { k: 5, corpus });
      samples.push(now() - s);
    }
    perRun.push(samples);
  }
  return {
    phases: {
      admitted_search: {
        ...latencyRuns(perRun),
        extra: { k: 5, notes: index.notes.length, admitted_notes: admitted.length, hidden_every: HIDDEN_EVERY, first_query_ms: firstQueryMs },
      },
    },
  };
}

/** The extension object (scripts/bench/extensions.mjs). */
export const ADMITTED_SEARCH = {
  name: 'admitted_search',
  phases: [{ id: 'admitted_search', kind: 'loretrace', stat: 'latency', label: 'loretrace search with admitted-set statistics (k=5, corpus = 9 notes in 10)' }],
  ratios: [{ id: 'admitted_search_p50_vs_search', num: ['admitted_search', 'p50_ms'], den: ['search', 'p50_ms'], target: 1.2 }],
  tasks: { admitted_search: admittedSearch },
  taskPhases: { admitted_search: ['admitted_search'] },
  /** @param {(task: string, params: object, deps?: [string, boolean][]) => Promise<unknown>} step @param {Record<string, any>} ctx */
  async run(step, ctx) {
    // The warm index of cold_index, or (with --only admitted_search) one built in the task before timing.
    await step('admitted_search', { ...ctx.common, indexDir: ctx.indexDir ?? join(ctx.workDir, 'admitted-search-index'), queries: ctx.queries });
  },
};

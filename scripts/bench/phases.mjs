/**
 * What the benchmark measures: the phase ids (each a loretrace operation or its floor / plain
 * anchor), the ratios between them and the targets. The JSON schema
 * (schemas/bench-results.schema.json) requires every id listed here, so a result can never silently
 * drop a phase or ratio — a phase that could not run is present with status `unavailable` or `failed`.
 */

/**
 * Phases in run order. `kind`: `loretrace` (the product) or `anchor` (floor / plain pipeline).
 * `stat`: `time` = median of per-run wall times; `latency` = per-call p50/p99 (median over runs).
 */
export const PHASES = [
  { id: 'read_floor', kind: 'anchor', stat: 'time', label: 'read every note (floor)' },
  { id: 'remark_parse', kind: 'anchor', stat: 'time', label: 'remark parse, 1 thread' },
  { id: 'plain_pipeline', kind: 'anchor', stat: 'time', label: 'plain pipeline (read+remark+chunks+MiniSearch+JSON save)' },
  { id: 'cold_index', kind: 'loretrace', stat: 'time', label: 'loretrace cold index' },
  { id: 'plain_warm_start', kind: 'anchor', stat: 'time', label: 'plain MiniSearch.loadJSON + first query' },
  { id: 'warm_start', kind: 'loretrace', stat: 'time', label: 'loretrace warm start (load + first query)' },
  { id: 'plain_search', kind: 'anchor', stat: 'latency', label: 'plain MiniSearch default search' },
  { id: 'search', kind: 'loretrace', stat: 'latency', label: 'loretrace search (k=5)' },
  { id: 'traversal', kind: 'loretrace', stat: 'latency', label: 'loretrace traversal (depth 2, max_refs 12)' },
  { id: 'proxy_floor', kind: 'anchor', stat: 'latency', label: 'read line range + fsync\'d append (floor)' },
  { id: 'proxy_lore_search', kind: 'loretrace', stat: 'latency', label: 'proxy lore_search over HTTP' },
  { id: 'proxy_lore_read', kind: 'loretrace', stat: 'latency', label: 'proxy lore_read over HTTP' },
  { id: 'incremental_1_file', kind: 'loretrace', stat: 'time', label: 'loretrace re-index, 1 file changed' },
  { id: 'incremental_1_percent', kind: 'loretrace', stat: 'time', label: 'loretrace re-index, 1% of files changed' },
];

export const PHASE_IDS = PHASES.map((p) => p.id);

/**
 * Ratios: numerator / denominator of the named statistic (`median_ms`, `p50_ms`, `p99_ms`,
 * `peak_rss_bytes`). `target` is the bound (value must be ≤ target), checked at ×100.
 */
export const RATIOS = [
  { id: 'cold_vs_read_floor', num: ['cold_index', 'median_ms'], den: ['read_floor', 'median_ms'], target: null },
  { id: 'cold_vs_remark_parse', num: ['cold_index', 'median_ms'], den: ['remark_parse', 'median_ms'], target: null },
  { id: 'cold_vs_plain_pipeline', num: ['cold_index', 'median_ms'], den: ['plain_pipeline', 'median_ms'], target: 0.6 },
  { id: 'incremental_1_file_vs_cold', num: ['incremental_1_file', 'median_ms'], den: ['cold_index', 'median_ms'], target: 0.02 },
  { id: 'incremental_1_percent_vs_cold', num: ['incremental_1_percent', 'median_ms'], den: ['cold_index', 'median_ms'], target: null },
  { id: 'warm_start_vs_plain_load', num: ['warm_start', 'median_ms'], den: ['plain_warm_start', 'median_ms'], target: 0.5 },
  { id: 'search_p50_vs_plain', num: ['search', 'p50_ms'], den: ['plain_search', 'p50_ms'], target: null },
  { id: 'search_p99_vs_plain', num: ['search', 'p99_ms'], den: ['plain_search', 'p99_ms'], target: 0.15 },
  { id: 'peak_rss_cold_vs_plain_pipeline', num: ['cold_index', 'peak_rss_bytes'], den: ['plain_pipeline', 'peak_rss_bytes'], target: 0.6 },
  { id: 'peak_rss_search_vs_plain_search', num: ['search', 'peak_rss_bytes'], den: ['plain_search', 'peak_rss_bytes'], target: null },
  { id: 'proxy_lore_search_p50_vs_floor', num: ['proxy_lore_search', 'p50_ms'], den: ['proxy_floor', 'p50_ms'], target: 3 },
  { id: 'proxy_lore_read_p50_vs_floor', num: ['proxy_lore_read', 'p50_ms'], den: ['proxy_floor', 'p50_ms'], target: 3 },
];

export const RATIO_IDS = RATIOS.map((r) => r.id);

/** The scale at which the targets are defined. */
export const TARGET_SCALE = 100;

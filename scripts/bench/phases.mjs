/**
 * What the benchmark measures: the phase ids (each a loretrace operation or its floor / plain
 * anchor), the ratios between them and the targets. The JSON schema
 * (schemas/bench-results.schema.json) requires every id listed here, so a result can never silently
 * drop a phase or ratio — a phase that could not run is present with status `unavailable` or `failed`.
 */
import { EXTENSIONS } from './extensions.mjs';

/**
 * Phases in run order. `kind`: `loretrace` (the product), `anchor` (a floor or the plain pipeline) or
 * `peer` (a tool a user would run instead, from npm, pinned in package.json).
 * `stat`: `time` = median of per-run wall times; `latency` = per-call p50/p99 (median over runs).
 * Phases of bench extensions (scripts/bench/extensions.mjs) follow the core ones.
 */
export const CORE_PHASES = [
  { id: 'read_floor', kind: 'anchor', stat: 'time', label: 'read every note (floor)' },
  { id: 'remark_parse', kind: 'anchor', stat: 'time', label: 'remark parse, 1 thread' },
  { id: 'plain_pipeline', kind: 'anchor', stat: 'time', label: 'plain pipeline (read+remark+chunks+MiniSearch+JSON save)' },
  { id: 'cold_index', kind: 'loretrace', stat: 'time', label: 'loretrace cold index' },
  { id: 'plain_warm_start', kind: 'anchor', stat: 'time', label: 'plain MiniSearch.loadJSON + first query' },
  { id: 'warm_start', kind: 'loretrace', stat: 'time', label: 'loretrace warm start (load + first query)' },
  { id: 'plain_search', kind: 'anchor', stat: 'latency', label: 'plain MiniSearch default search' },
  { id: 'flexsearch_default_search', kind: 'peer', stat: 'latency', label: 'FlexSearch Document, default profile (limit 5)' },
  { id: 'flexsearch_match_search', kind: 'peer', stat: 'latency', label: 'FlexSearch Document, "match" preset (limit 5)' },
  { id: 'search', kind: 'loretrace', stat: 'latency', label: 'loretrace search (k=5)' },
  { id: 'traversal', kind: 'loretrace', stat: 'latency', label: 'loretrace traversal (depth 2, max_refs 12)' },
  { id: 'proxy_floor', kind: 'anchor', stat: 'latency', label: 'read line range + fsync\'d append (floor)' },
  { id: 'http_floor', kind: 'anchor', stat: 'latency', label: 'bare node:http round trip of the same bytes (floor)' },
  { id: 'proxy_lore_search', kind: 'loretrace', stat: 'latency', label: 'proxy lore_search over HTTP' },
  { id: 'proxy_lore_read', kind: 'loretrace', stat: 'latency', label: 'proxy lore_read over HTTP' },
  { id: 'proxy_stdio_lore_read', kind: 'loretrace', stat: 'latency', label: 'proxy lore_read over MCP stdio (loretrace serve --mcp)' },
  { id: 'mcp_filesystem_read', kind: 'peer', stat: 'latency', label: 'MCP filesystem server read_text_file over stdio' },
  { id: 'incremental_1_file', kind: 'loretrace', stat: 'time', label: 'loretrace re-index, 1 file changed' },
  { id: 'incremental_1_percent', kind: 'loretrace', stat: 'time', label: 'loretrace re-index, 1% of files changed' },
];

/**
 * Ratios: numerator / denominator of the named statistic (`median_ms`, `p50_ms`, `p99_ms`,
 * `peak_rss_bytes`). A denominator may be a list of terms, summed (a floor made of two floors).
 * `target` is the bound (value must be ≤ target), checked at ×100; null = informational.
 */
export const CORE_RATIOS = [
  { id: 'cold_vs_read_floor', num: ['cold_index', 'median_ms'], den: ['read_floor', 'median_ms'], target: null },
  { id: 'cold_vs_remark_parse', num: ['cold_index', 'median_ms'], den: ['remark_parse', 'median_ms'], target: null },
  { id: 'cold_vs_plain_pipeline', num: ['cold_index', 'median_ms'], den: ['plain_pipeline', 'median_ms'], target: 0.35 },
  { id: 'incremental_1_file_vs_cold', num: ['incremental_1_file', 'median_ms'], den: ['cold_index', 'median_ms'], target: 0.01 },
  { id: 'incremental_1_percent_vs_cold', num: ['incremental_1_percent', 'median_ms'], den: ['cold_index', 'median_ms'], target: null },
  { id: 'warm_start_vs_plain_load', num: ['warm_start', 'median_ms'], den: ['plain_warm_start', 'median_ms'], target: 0.25 },
  { id: 'search_p50_vs_plain', num: ['search', 'p50_ms'], den: ['plain_search', 'p50_ms'], target: null },
  { id: 'search_p99_vs_plain', num: ['search', 'p99_ms'], den: ['plain_search', 'p99_ms'], target: 0.05 },
  { id: 'search_p99_vs_flexsearch_default', num: ['search', 'p99_ms'], den: ['flexsearch_default_search', 'p99_ms'], target: 1 },
  { id: 'search_p99_vs_flexsearch_match', num: ['search', 'p99_ms'], den: ['flexsearch_match_search', 'p99_ms'], target: 1 },
  { id: 'search_p50_vs_flexsearch_default', num: ['search', 'p50_ms'], den: ['flexsearch_default_search', 'p50_ms'], target: null },
  { id: 'peak_rss_cold_vs_plain_pipeline', num: ['cold_index', 'peak_rss_bytes'], den: ['plain_pipeline', 'peak_rss_bytes'], target: 0.35 },
  { id: 'peak_rss_search_vs_plain_search', num: ['search', 'peak_rss_bytes'], den: ['plain_search', 'peak_rss_bytes'], target: null },
  { id: 'proxy_lore_search_p50_vs_floor', num: ['proxy_lore_search', 'p50_ms'], den: ['proxy_floor', 'p50_ms'], target: null },
  { id: 'proxy_lore_read_p50_vs_floor', num: ['proxy_lore_read', 'p50_ms'], den: ['proxy_floor', 'p50_ms'], target: null },
  {
    id: 'http_lore_read_p50_vs_floor_plus_http', num: ['proxy_lore_read', 'p50_ms'],
    den: [['proxy_floor', 'p50_ms'], ['http_floor', 'p50_ms']], target: 1.5,
  },
  { id: 'stdio_lore_read_p50_vs_filesystem_server', num: ['proxy_stdio_lore_read', 'p50_ms'], den: ['mcp_filesystem_read', 'p50_ms'], target: 1 },
];

/** Core and extension phases, in run order (the schema requires each). */
export const PHASES = [...CORE_PHASES, ...EXTENSIONS.flatMap((e) => e.phases)];

export const PHASE_IDS = PHASES.map((p) => p.id);

/** Core and extension ratios. */
export const RATIOS = [...CORE_RATIOS, ...EXTENSIONS.flatMap((e) => e.ratios)];

export const RATIO_IDS = RATIOS.map((r) => r.id);

/**
 * The denominator terms of a ratio as a list of `[phase, statistic]` pairs (one pair for a plain ratio).
 * @param {{ den: [string, string] | [string, string][] }} def
 * @returns {[string, string][]}
 */
export function denominatorTerms(def) {
  return Array.isArray(def.den[0]) ? /** @type {[string, string][]} */ (def.den) : [/** @type {[string, string]} */ (def.den)];
}

/** The scale at which the targets are defined. */
export const TARGET_SCALE = 100;

/**
 * Checks across scales (issue-level bounds on growth), evaluated when both scales ran:
 * `value` = the statistic at `scale` divided by the same at `base_scale` (kind `growth`), or the
 * statistic itself (kind `bound`, e.g. bytes).
 */
export const SCALE_CHECKS = [
  { id: 'search_p99_x1000_vs_x100', kind: 'growth', phase: 'search', stat: 'p99_ms', scale: 1000, base_scale: 100, target: 3 },
  { id: 'cold_peak_rss_x1000_bytes', kind: 'bound', phase: 'cold_index', stat: 'peak_rss_bytes', scale: 1000, base_scale: null, target: 3 * 2 ** 30 },
];

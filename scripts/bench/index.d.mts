/** Types of scripts/bench/index.mjs (the benchmark's pure building blocks). */
export declare function mulberry32(seed: number): () => number;
export declare function randInt(rand: () => number, n: number): number;
export declare function sampleIndices(rand: () => number, n: number, k: number): number[];
export declare function median(xs: number[]): number | null;
export declare function percentile(xs: number[], p: number): number | null;
export declare function ratio(num: number | null | undefined, den: number | null | undefined): number | null;
export declare function listFiles(root: string, keep?: (rel: string) => boolean): Promise<string[]>;
export declare function buildScaledVault(
  source: string,
  parent: string,
  scale: number,
): Promise<{ root: string; namespace: string; files: number; notes: number; bytes: number; note_bytes: number }>;
export declare function copyName(i: number): string;
export declare function editFiles(root: string, paths: string[], run: number, originals?: Map<string, Buffer>): Promise<Map<string, Buffer>>;
export declare function restoreFiles(root: string, originals: Map<string, Buffer>): Promise<void>;
export declare function collectSentences(root: string, paths: string[]): Promise<{ words: string[]; path: string; line_start: number; line_end: number }[]>;
export declare function generateQueries(sentences: (string[] | { words: string[]; path: string; line_start: number; line_end: number })[], count: number, seed: number): string[];
export interface PlainChunk {
  id: string;
  path: string;
  chunk_index: number;
  line_start: number;
  line_end: number;
  text: string;
}
export declare function headingChunks(path: string, text: string, tree: unknown): PlainChunk[];
export declare function makeProcessor(): { parse(text: string): unknown };
export declare function splitLinesPlain(text: string): string[];
export interface Top5Quality {
  queries_compared: number;
  top5_set_drift: number | null;
  top5_order_drift: number | null;
  mean_top5_overlap: number | null;
}
export declare function compareTop5(lt: string[][] | null, plain: string[][] | null): Top5Quality;
export interface PhaseDef {
  id: string;
  kind: 'loretrace' | 'anchor' | 'peer';
  stat: 'time' | 'latency';
  label: string;
}
export declare const PHASES: PhaseDef[];
export declare const PHASE_IDS: string[];
export interface RatioDef {
  id: string;
  num: [string, string];
  /** one `[phase, statistic]` term, or several summed */
  den: [string, string] | [string, string][];
  target: number | null;
}
export declare function denominatorTerms(def: Pick<RatioDef, 'den'>): [string, string][];
export interface RatioFigure {
  numerator: string;
  denominator: string;
  value: number | null;
  target: number | null;
  met: boolean | null;
}
export declare function computeRatios(phases: Record<string, unknown>): Record<string, RatioFigure>;
export interface ScaleCheckDef {
  id: string;
  kind: 'growth' | 'bound';
  phase: string;
  stat: 'median_ms' | 'p50_ms' | 'p99_ms' | 'peak_rss_bytes';
  scale: number;
  base_scale: number | null;
  target: number;
}
export declare const SCALE_CHECKS: ScaleCheckDef[];
export declare function computeScaleChecks(scales: { scale: number; phases: Record<string, unknown> }[]): (ScaleCheckDef & { value: number | null; met: boolean | null })[];
export declare function renderGrowth(results: unknown): string[];
export declare function renderGrowthSvg(results: unknown): string;
export declare function renderGrowthMarkdown(merged: unknown, files: string[]): string;
/** Merged growth results; `scales[i].phases` by phase id (see bench-results.schema.json). */
export interface MergedResults {
  scales: { scale: number; source_file: string; duration_s: number | null; phases: Record<string, { status: string; reason: string | null } & Record<string, unknown>> }[];
  scale_checks: { id: string; value: number | null }[];
  command: string;
}
export declare function mergeResults(inputs: { file: string; results?: unknown; progress?: unknown }[]): MergedResults;
/** A results file completed with the phases and ratios added to the bench after it was written (`unavailable`, NOT_IN_RUN). */
export declare function withLaterPhases<T>(results: T): T;
/** One scale entry from a stopped run's bench-progress.json (phases not reached: `unavailable`, NOT_REACHED). */
export declare function progressScale(progress: unknown): unknown;
/** True when the JSON is a bench-progress.json rather than a bench-results.json. */
export declare function isProgress(json: unknown): boolean;
export declare const NOT_IN_RUN: string;
export declare const NOT_REACHED: string;
export declare const FLEXSEARCH_PROFILES: Readonly<Record<'flexsearch_default_search' | 'flexsearch_match_search', Readonly<{ field: string; preset?: string }>>>;
export declare function peakRssOf(pid: number | null): number | null;
export declare const RATIOS: RatioDef[];
export declare const RATIO_IDS: string[];
export declare const TARGET_SCALE: number;
export declare const SCHEMA_FILE: string;
export declare function validateResults(results: unknown): Promise<string[]>;
export declare function renderMarkdown(results: unknown): string;
export declare function fmtMs(ms: number | null): string;
export interface QuerySource {
  path: string;
  line_start: number;
  line_end: number;
}
export declare function generateQueryItems(sentences: (string[] | { words: string[]; path: string; line_start: number; line_end: number })[], count: number, seed: number): { query: string; source: QuerySource | null }[];
export declare function knownItemRate(sources: (QuerySource | null)[], tops: QuerySource[][] | null): number | null;

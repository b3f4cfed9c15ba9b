/** Types of scripts/eval/index.mjs (the eval harness's building blocks). */
export interface Target {
  path: string;
  line_start: number;
  line_end: number;
}
export interface EvalQuery {
  id: string;
  family: string;
  split: 'dev' | 'held_out';
  query: string | null;
  query_source?: { file: string; pointer: string };
  targets: Target[];
}
export interface Outcome {
  hit1: boolean;
  overlap1: boolean;
  overlap3: boolean;
  rank: number | null;
  lines1: number;
}
export interface Figures {
  n: number;
  'hit@1': number | null;
  'overlap@1': number | null;
  'overlap@3': number | null;
  mrr: number | null;
  'lines@1': number | null;
}
export interface WalkFigures {
  refs: number;
  recall: number | null;
  added: number;
  added_cited: number;
  precision_added: number | null;
}
export declare const DEV_PERCENT: number;
export declare function fnv1a(s: string): number;
export declare function splitOf(id: string, seed: number): 'dev' | 'held_out';
export declare function overlaps(hit: Target, targets: Target[]): boolean;
export declare function judge(hits: Target[], targets: Target[]): Outcome;
export declare function summarize(outcomes: Outcome[]): Figures;
export declare function walkFigures(walked: string[], seeds: string[], cited: string[]): WalkFigures;
export declare function plainWords(text: string): string[];
export declare function noteSections(index: unknown): { path: string; title: string; heading: string; line_start: number; line_end: number; text: string }[][];
export declare function sectionQueries(index: unknown, options: { seed: number; limit: number }): EvalQuery[];
export declare function requirementQueriesFrom(api: unknown, index: unknown, doc: { pairs: { id: string; query: string; refs: string[] }[] }, seed: number): EvalQuery[];
export declare function slugOf(s: string): string;
export declare const EVAL_K: number;
export declare function makeRankers(api: unknown, index: unknown): { id: string; rank: (query: string) => Target[] }[];
export declare const FAMILIES: string[];
export declare const EVAL_RESULTS_VERSION: string;
export declare const EVAL_SET_VERSION: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export declare function runEval(options: { api: unknown; repo: string; vault: unknown; seed: number; indexDir: string; stemWeight?: number }): Promise<{ results: any; set: any }>;
export declare function renderEvalMarkdown(results: unknown, before?: unknown): string;

/**
 * What every phase task shares (scripts/bench/tasks.mjs, peers.mjs and extension modules): the clock, a
 * forced GC between runs, the per-phase run budget, the latency summary and the chunk file the search
 * phase writes. All times are milliseconds.
 */
import { readFile } from 'node:fs/promises';
import { percentile } from './stats.mjs';

/** Monotonic milliseconds. */
export const now = () => performance.now();

/** A full GC when the child runs with `--expose-gc` (it does), so a run does not pay the previous run's garbage. */
export const gc = () => (typeof globalThis.gc === 'function' ? globalThis.gc() : undefined);

/** Wall-clock budget per phase in milliseconds (set by the child from --phase-budget). */
let phaseBudgetMs = Infinity;

/** Set the per-phase budget: a phase starts no new run once this many milliseconds have passed. @param {number} ms */
export function setPhaseBudget(ms) {
  phaseBudgetMs = ms;
}

/**
 * Run indices 0, 1, … up to `runs - 1`, but no new run once the phase budget is spent (at least one
 * run always happens). Keeps ×100 under its time limit: a 50 s anchor runs once or twice, a 1 s one
 * `runs` times. The number of runs done is recorded per phase.
 * @param {number} runs
 */
export function* runIndices(runs) {
  const t0 = now();
  for (let r = 0; r < runs; r++) {
    if (r > 0 && now() - t0 >= phaseBudgetMs) return;
    yield r;
  }
}

/**
 * Per-run latency summary: nearest-rank p50/p99 of each run's per-call samples.
 * @param {number[][]} perRun
 * @returns {{ p50_ms: number[], p99_ms: number[] }}
 */
export function latencyRuns(perRun) {
  return { p50_ms: perRun.map((s) => percentile(s, 50)), p99_ms: perRun.map((s) => percentile(s, 99)) };
}

/**
 * The chunks loretrace indexed, as the search phase wrote them (JSON lines `{ id: ref, path, line_start,
 * line_end, text }`): the documents every other ranker indexes, so all rank the same units.
 * @param {string} file
 * @returns {Promise<{ id: string, path: string, line_start: number, line_end: number, text: string }[]>}
 */
export async function readChunkDocs(file) {
  return (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

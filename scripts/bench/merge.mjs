/**
 * Merging bench runs for the growth curve (`npm run bench -- --merge a.json,b.json`): a ×1000 run is
 * done on its own (loretrace's phases only, late, it is heavy), and its growth from ×1 is read against the
 * comparative ×1/×10/×100 run. Pure: results in, merged results out; the scales are each run's own figures
 * (never averaged), and the cross-scale checks are recomputed over the merged scales.
 */
import { computeRatios, computeScaleChecks } from './run.mjs';
import { PHASES } from './phases.mjs';

/** The reason a phase gets in a results file written before the bench had that phase. */
export const NOT_IN_RUN = 'not in this run: the bench had no such phase when it was written';

/**
 * A results file written before some phases (or ratios) existed, completed with those as `unavailable`
 * ({@link NOT_IN_RUN}; their ratios without a value), so it validates against today's schema and merges
 * with newer runs. Figures it has are kept as they are. Returns a new object.
 */
export function withLaterPhases(results) {
  const scales = results.scales.map((s) => {
    const phases = { ...s.phases };
    for (const def of PHASES) {
      if (phases[def.id]) continue;
      phases[def.id] = {
        kind: def.kind, label: def.label, status: 'unavailable', reason: NOT_IN_RUN, runs: 0,
        median_ms: null, p50_ms: null, p99_ms: null, calls_per_s: null, samples_ms: [], peak_rss_bytes: null, extra: {},
      };
    }
    return { ...s, phases, ratios: { ...computeRatios(phases), ...s.ratios } };
  });
  return { ...results, scales };
}

/** The reason a phase of a stopped run's progress file gets when it had not been reached. */
export const NOT_REACHED = 'not reached: the run was stopped before this phase ended (figures from its bench-progress.json)';

/**
 * True when `json` is a `bench-progress.json` (what a run writes after every task: `{ scale, vault, phases }`),
 * not a bench-results.json.
 */
export function isProgress(json) {
  return json != null && typeof json === 'object' && !Array.isArray(json.scales) && Number.isInteger(json.scale) && typeof json.phases === 'object';
}

/**
 * One scale entry from a stopped run's `bench-progress.json`: its phases as measured, those still
 * `unavailable` with reason `not run` marked {@link NOT_REACHED}, ratios recomputed from them; no wall
 * time (`duration_s` null: the run did not end) and no quality figures (computed at a run's end).
 * @param {{ scale: number, vault: { notes: number, note_bytes: number }, phases: Record<string, any> }} progress
 */
export function progressScale(progress) {
  const phases = Object.fromEntries(
    Object.entries(progress.phases).map(([id, rec]) => [id, rec.status === 'unavailable' && rec.reason === 'not run' ? { ...rec, reason: NOT_REACHED } : rec]),
  );
  return {
    scale: progress.scale,
    vault: { files: null, bytes: null, plain_chunks: null, ...progress.vault },
    duration_s: null,
    phases,
    ratios: computeRatios(phases),
    quality: {},
    stopped: true,
  };
}

/**
 * @param {{ file: string, results?: any, progress?: any }[]} inputs bench-results objects (`results`) or a
 *   stopped run's bench-progress objects (`progress`, see {@link progressScale}) in order; for a scale
 *   present in several, the last one's figures are kept. At least one must be a results object.
 * @returns {any} a bench-results-shaped object: the last results input's machine and params, `scales`
 *   sorted by scale (each carrying `source_file`), `scale_checks` recomputed, `command` naming the inputs
 */
export function mergeResults(inputs) {
  const full = inputs.filter((i) => i.results != null);
  if (full.length === 0) throw new Error('bench: --merge needs at least one bench-results.json');
  const byScale = new Map();
  for (const { file, results, progress } of inputs) {
    const scales = results ? results.scales : [progressScale(progress)];
    for (const s of scales) byScale.set(s.scale, { ...s, source_file: file });
  }
  const scales = [...byScale.values()].sort((a, b) => a.scale - b.scale);
  const last = full[full.length - 1].results;
  return {
    ...last,
    command: `npm run bench -- --merge ${inputs.map((i) => i.file).join(',')}`,
    scales,
    scale_checks: computeScaleChecks(scales),
  };
}

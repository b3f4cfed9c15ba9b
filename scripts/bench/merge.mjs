/**
 * Merging bench runs for the growth curve (`npm run bench -- --merge a.json,b.json`): a ×1000 run is
 * done on its own (loretrace's phases only, late, it is heavy), and its growth from ×1 is read against the
 * comparative ×1/×10/×100 run. Pure: results in, merged results out; the scales are each run's own figures
 * (never averaged), and the cross-scale checks are recomputed over the merged scales.
 */
import { computeScaleChecks } from './run.mjs';

/**
 * @param {{ file: string, results: any }[]} inputs bench-results objects in order; for a scale present in
 *   several, the last one's figures are kept
 * @returns {any} a bench-results-shaped object: the last input's machine and params, `scales` sorted by
 *   scale (each carrying `source_file`), `scale_checks` recomputed, `command` naming the inputs
 */
export function mergeResults(inputs) {
  if (inputs.length === 0) throw new Error('bench: --merge needs at least one results file');
  const byScale = new Map();
  for (const { file, results } of inputs) for (const s of results.scales) byScale.set(s.scale, { ...s, source_file: file });
  const scales = [...byScale.values()].sort((a, b) => a.scale - b.scale);
  const last = inputs[inputs.length - 1].results;
  return {
    ...last,
    command: `npm run bench -- --merge ${inputs.map((i) => i.file).join(',')}`,
    scales,
    scale_checks: computeScaleChecks(scales),
  };
}

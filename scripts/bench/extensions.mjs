/**
 * Bench extensions: phases that live in their own module under scripts/bench/ and join the run after the
 * core phases of each scale. An extension is an object
 *
 *   {
 *     name: string,                             // for `--only <name>` (scripts/bench.mjs)
 *     phases: PhaseDef[],                       // { id, kind, stat, label }, appended to PHASES
 *     ratios: RatioDef[],                       // { id, num, den, target }, appended to RATIOS
 *     tasks: Record<string, (params, channel) => Promise<TaskResult>>,  // run in a phase child
 *     taskPhases: Record<string, string[]>,     // task name → the phase ids it fills
 *     run(step, ctx): Promise<void>,            // once per scale: `step(task, params, deps?, extra?)` runs a task
 *   }
 *
 * `ctx` holds what the core phases left: `{ scale, root, paths, namespace, workDir, indexDir, queries,
 * nameQueries, common, distDir, repo, reads, options }` (`common` = the params every index task takes; `options` the
 * bench's parsed options, for an extension's own, e.g. `--batch-drafts`). The JSON
 * schema lists every phase and ratio id, so an extension also adds its ids to
 * schemas/bench-results.schema.json (tests/bench.test.ts checks the two lists agree).
 */
import { batchExtension } from './batch.mjs';
import { ADMITTED_SEARCH } from './admitted-search.mjs';

/** The registered extensions, in run order. */
export const EXTENSIONS = [batchExtension, ADMITTED_SEARCH];

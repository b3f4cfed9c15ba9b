/**
 * The eval harness's building blocks, re-exported for tests/eval.test.ts (types in index.d.mts).
 */
export { DEV_PERCENT, fnv1a, splitOf } from './split.mjs';
export { judge, overlaps, summarize, walkFigures } from './metrics.mjs';
export { noteSections, plainWords, sectionQueries, requirementQueriesFrom } from './sets.mjs';
export { slugOf } from './ghostlight.mjs';
export { EVAL_K, makeRankers } from './systems.mjs';
export { runEval, FAMILIES, EVAL_RESULTS_VERSION, EVAL_SET_VERSION } from './run.mjs';
export { renderEvalMarkdown } from './report.mjs';

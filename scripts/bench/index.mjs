/**
 * The benchmark's pure building blocks, re-exported for tests/bench.test.ts (types in index.d.mts).
 */
export { mulberry32, randInt, sampleIndices } from './prng.mjs';
export { median, percentile, ratio } from './stats.mjs';
export { listFiles, buildScaledVault, copyName, editFiles, restoreFiles } from './vault.mjs';
export { collectSentences, generateQueries, generateQueryItems, knownItemRate } from './queries.mjs';
export { headingChunks, makeProcessor, splitLinesPlain } from './plain.mjs';
export { compareTop5, computeRatios, computeScaleChecks } from './run.mjs';
export { PHASES, PHASE_IDS, RATIOS, RATIO_IDS, SCALE_CHECKS, TARGET_SCALE, denominatorTerms } from './phases.mjs';
export { validateResults, SCHEMA_FILE } from './validate.mjs';
export { renderMarkdown, renderGrowth, renderGrowthMarkdown, fmtMs } from './report.mjs';
export { mergeResults, withLaterPhases, progressScale, isProgress, NOT_IN_RUN, NOT_REACHED } from './merge.mjs';
export { renderGrowthSvg } from './plot.mjs';
export { FLEXSEARCH_PROFILES } from './peers.mjs';
export { peakRssOf } from './mcp-stdio-client.mjs';

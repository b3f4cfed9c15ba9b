/** Traversal stage barrel: the best-first policy walk. */
export { traverse, packetQueries, requirementQueries, TRAVERSE_RESULT_VERSION, DEFAULT_EXCERPT_MAX_CHARS, SKIP_REASONS } from './traverse.js';
export type { TraverseOptions, TraverseQuery, TraverseResult, TraverseStats, TraversalDecision, StopReason } from './traverse.js';

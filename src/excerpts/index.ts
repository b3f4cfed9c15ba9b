/** Excerpts stage barrel: verbatim line picking, source_excerpt and research_trace builders. */
export { pickExcerptLines, makeSourceExcerpt, excerptRefId, isContentLine } from './excerpt.js';
export type { ExcerptPick, PickOptions } from './excerpt.js';
export { makeTraceEntry } from './trace.js';
export type { TraceEntryInput } from './trace.js';

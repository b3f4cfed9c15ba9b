/** Packet stage: the packet builder (draft packet + projected context + traversal → retrieval-augmented packet) and batch retrieval over a corpus of drafts (docs/RETRIEVE.md). */
export { buildPacket, queriesFor, renderSourceSection, parseSourceSection, applySourceSection, renderResearchSection, applyResearchSection, RETRIEVAL_LANES } from './build.js';
export type { BuildPacketOptions, BuildPacketResult, CaptureFragment, RetrievalLane, PromptStyle, ResearchSectionInput } from './build.js';
export { retrieveBatch } from './batch.js';
export type { RetrieveBatchOptions, BatchSummary, BatchPacketSummary, BatchStatus } from './batch.js';
export type { RetrieveRunEnv } from './run.js';

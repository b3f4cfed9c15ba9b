/** Packet stage: the packet builder (draft packet + projected context + traversal → retrieval-augmented packet; docs/RETRIEVE.md). */
export { buildPacket, queriesFor, renderSourceSection, parseSourceSection, applySourceSection, renderResearchSection, applyResearchSection, RETRIEVAL_LANES } from './build.js';
export type { BuildPacketOptions, BuildPacketResult, CaptureFragment, RetrievalLane, PromptStyle, ResearchSectionInput } from './build.js';

/**
 * Packet stage: the Ghostlight contracts (responder packet, responder output capture, projected local context)
 * as types and JSON Schemas, their validators, and (helper G) the packet builder and trace verifier.
 */
export type {
  CanonStatus,
  CaptureLoreAccess,
  ContractKind,
  DocumentKind,
  FixtureLane,
  GenerationLane,
  IsolationMethod,
  LoreAccessMode,
  ObservedEvent,
  PacketLoreAccess,
  ParsedResponse,
  ProjectedLocalContext,
  ResearchTraceEntry,
  ResearchTraceStatus,
  ResponderOutputCapture,
  ResponderPacket,
  RetrievalRequirement,
  ReviewStatus,
  SourceExcerpt,
  TextBlock,
  TraceOrigin,
  TraversalPolicy,
  UpdateCandidate,
  ValidateOptions,
  ValidationIssue,
  ValidationReport,
} from './types.js';
export { parseJsonDocument, validateCapture, validateCaptureFragment, validateDocument, validatePacket, validateProjectedContext } from './validate.js';
export { RAW_STATE_MARKERS, VALIDATION_RULES } from './rules.js';
export type { ValidationRule } from './rules.js';
export { createAjv, outputSchema, OUTPUT_SCHEMA_FILES, SCHEMA_FILES } from './schemas.js';
export type { OutputSchemaName } from './schemas.js';
// Packet builder and trace verifier (helper G).
export { buildPacket, queriesFor, renderSourceSection, parseSourceSection, applySourceSection, renderResearchSection, applyResearchSection, RETRIEVAL_LANES } from './build.js';
export type { BuildPacketOptions, BuildPacketResult, CaptureFragment, RetrievalLane, PromptStyle, ResearchSectionInput } from './build.js';
export { verifyTrace, tokenContainment, TRACE_DISPOSITIONS } from './verify-trace.js';
export type { TraceDisposition, TraceFailure, TraceInputKind, TraceEntryVerdict, TraceVerificationReport, TracePolicyCheck, VerifyTraceOptions } from './verify-trace.js';

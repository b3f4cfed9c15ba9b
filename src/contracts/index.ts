/**
 * Contracts stage: the Ghostlight contracts (responder packet, responder output capture, projected local
 * context) and loretrace's own artifacts, as types and JSON Schemas (`schemas/`), with their validators and
 * cross-field rules (docs/VALIDATE.md).
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

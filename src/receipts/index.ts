/**
 * Receipts stage: what proves the research happened — the hash-chained ledger (seed 004's record form,
 * RFC 8785 canonical JSON), the binding of runner_captured trace entries to its records, trace
 * verification against the vault and the ledger, the responder output capture assembled from the run's
 * receipts (with its automated leakage pass), lock files over every output (seed 002), and runner-key
 * signing of ledgers, which says who wrote them (docs/RECEIPTS.md).
 */
export { verifyLedger, parseLedger, hashLedgerRecord, LedgerWriter, GENESIS_HASH, LEDGER_SCHEMA_VERSION, LEDGER_V1_SCHEMA_VERSION } from './ledger.js';
export type {
  LedgerRecord, LedgerRecordBody, LedgerEntry, LedgerKind, LedgerActor, LedgerOutcome, LedgerOkOutcome, LedgerRefusedOutcome, LedgerSessionInfo,
  ServedRange, ReturnedRangeV1, AdmissionVia, LedgerView, LedgerVerifyReport, VerifyLedgerOptions, LoreCheckTotals,
} from './ledger.js';
export { CANONICAL_FORM } from './ledger-record.js';
export { exportLedger, bindTraceToLedger, parseTraceId } from './ledger-export.js';
export type { LedgerExport, LedgerTraceEntry, TraceBinding, LedgerPin, LedgerBindingSet, TraceIdParts, ExportLedgerOptions } from './ledger-export.js';
export { verifyTrace, tokenContainment, TRACE_DISPOSITIONS } from './verify-trace.js';
export type { TraceDisposition, TraceFailure, TraceInputKind, TraceEntryVerdict, TraceVerificationReport, TracePolicyCheck, VerifyTraceOptions } from './verify-trace.js';
export { assembleCapture, CAPTURE_FAILURE_LABELS } from './capture.js';
export type { AssembleCaptureInput, AssembleCaptureResult, AssembledCapture, CaptureLoreSource, CaptureReceipts, CaptureFailureLabel } from './capture.js';
export { auditLeakage, LEAKAGE_FLAGS } from './leakage.js';
export type { LeakageAudit, LeakageFlag, LeakageHit, LeakageResult, AuditLeakageInput } from './leakage.js';
export { buildLock, verifyLock, lockPathFor, LOCK_SCHEMA_VERSION, LOCK_FILE_DISPOSITIONS } from './lock.js';
export type { LockDocument, LockFileEntry, LockStatus, LockCommand, LockTraceBinding, BuildLockInput, LockVerificationReport, LockFileVerdict, LockFileDisposition, LockSnapshotDisposition } from './lock.js';
export { recordRetrieval } from './retrieve-ledger.js';
export type { RetrievalRun, RecordRetrievalOptions, RecordedRetrieval } from './retrieve-ledger.js';
export type { LedgerHeadPin, TraceLedgerInput, TraceLedgerVerdict, LedgerDisposition, SeedVerdict } from './trace-ledger.js';
export { readSigningKey, readTrustedKey, generateRunnerKey } from './signing.js';
export type { LedgerSignature, LedgerSigner, TrustedKey, LedgerAuthorship, AuthorshipStatus, GeneratedRunnerKey, VerificationVerdict } from './signing.js';

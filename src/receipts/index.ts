/**
 * Receipts stage: what proves the research happened — the hash-chained ledger (seed 004's form, RFC 8785
 * canonical JSON), trace verification against the vault, the responder output capture assembled from the
 * run's receipts (with its automated leakage pass), and lock files over every output (seed 002)
 * (docs/RECEIPTS.md).
 */
export { verifyLedger, exportLedger, parseLedger, hashLedgerRecord, LedgerWriter, GENESIS_HASH, LEDGER_SCHEMA_VERSION } from './ledger.js';
export type {
  LedgerRecord, LedgerRecordBody, LedgerOutcome, LedgerOkOutcome, LedgerRefusedOutcome, LedgerSessionInfo, ReturnedRange,
  AdmissionVia, LedgerVerifyReport, VerifyLedgerOptions, LoreCheckTotals, LedgerExport, LedgerTraceEntry,
} from './ledger.js';
export { verifyTrace, tokenContainment, TRACE_DISPOSITIONS } from './verify-trace.js';
export type { TraceDisposition, TraceFailure, TraceInputKind, TraceEntryVerdict, TraceVerificationReport, TracePolicyCheck, VerifyTraceOptions } from './verify-trace.js';
export { assembleCapture, CAPTURE_FAILURE_LABELS } from './capture.js';
export type { AssembleCaptureInput, AssembleCaptureResult, AssembledCapture, CaptureLoreSource, CaptureReceipts, CaptureFailureLabel } from './capture.js';
export { auditLeakage, LEAKAGE_FLAGS } from './leakage.js';
export type { LeakageAudit, LeakageFlag, LeakageHit, LeakageResult, AuditLeakageInput } from './leakage.js';
export { buildLock, verifyLock, lockPathFor, LOCK_SCHEMA_VERSION, LOCK_FILE_DISPOSITIONS } from './lock.js';
export type { LockDocument, LockFileEntry, LockStatus, LockCommand, LockTraceBinding, BuildLockInput, LockVerificationReport, LockFileVerdict, LockFileDisposition, LockSnapshotDisposition } from './lock.js';

/**
 * Receipts stage: what proves the research happened — the hash-chained ledger (seed 004's form, RFC 8785
 * canonical JSON) and trace verification against the vault (docs/RECEIPTS.md).
 */
export { verifyLedger, exportLedger, parseLedger, hashLedgerRecord, LedgerWriter, GENESIS_HASH, LEDGER_SCHEMA_VERSION } from './ledger.js';
export type {
  LedgerRecord, LedgerRecordBody, LedgerOutcome, LedgerOkOutcome, LedgerRefusedOutcome, LedgerSessionInfo, ReturnedRange,
  AdmissionVia, LedgerVerifyReport, VerifyLedgerOptions, LoreCheckTotals, LedgerExport, LedgerTraceEntry,
} from './ledger.js';
export { verifyTrace, tokenContainment, TRACE_DISPOSITIONS } from './verify-trace.js';
export type { TraceDisposition, TraceFailure, TraceInputKind, TraceEntryVerdict, TraceVerificationReport, TracePolicyCheck, VerifyTraceOptions } from './verify-trace.js';

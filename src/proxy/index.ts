/** Proxy stage barrel: the sandboxed research session, its ledger and its limits (issue 5; docs/PROXY.md). */
export { ProxySession, openProxySession } from './session.js';
export type { ProxyResponse, ProxyTransport, ProxyClock, ProxySessionOptions, OpenProxySessionOptions } from './session.js';
export { verifyLedger, exportLedger, parseLedger, hashLedgerRecord, LedgerWriter, GENESIS_HASH, LEDGER_SCHEMA_VERSION } from './ledger.js';
export type {
  LedgerRecord, LedgerRecordBody, LedgerOutcome, LedgerOkOutcome, LedgerRefusedOutcome, LedgerSessionInfo, ReturnedRange,
  AdmissionVia, LedgerVerifyReport, VerifyLedgerOptions, LoreCheckTotals, LedgerExport, LedgerTraceEntry,
} from './ledger.js';
export { DEFAULT_LIMITS, parseLimitOverrides } from './limits.js';
export type { ServerLimits, SessionBudgets, PolicyBudgets } from './limits.js';
export { REFUSAL_CODES } from './refusals.js';
export type { RefusalCode, Refusal } from './refusals.js';
export { TOOL_NAMES, LORE_DATA_NOTICE } from './tools.js';
export type { ToolName, ToolResult } from './tools.js';

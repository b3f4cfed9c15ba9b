/**
 * loretrace public API: the stage functions of the pipeline, their option and result types, and the
 * errors — nothing else (internals are imported from their modules by the tests, never from here).
 *
 *   vault → notes → chunks + links → index → search → policy → traversal → excerpts/trace
 *         → packet → receipts (ledger, trace verification, capture, locks) / proxy / coverage
 *
 * Each name is documented in the README ("Library API") and in its module's docstring. The exact export
 * list is frozen by tests/api.test.ts: adding or removing a name is a deliberate change of both.
 */
export { LoretraceError, isLoretraceError } from './errors.js';
export type { ErrorDetails, Finding, FindingSeverity } from './errors.js';
export type * from './types.js';

// vault → notes → chunks + links
export { scanVault, loadVaultConfig } from './vault/index.js';
export { parseNote, splitLines, sliceLines, chunkNote, extractLinks, resolveLinks, resolveLink, targetClasses, remarkWikiLink } from './notes/index.js';

// index and search
export { indexVault, indexStats, getNote, chunksOf, outgoingLinks, backlinks, readNoteLines, overCapNotes, search, searchCorpus } from './indexer/index.js';
export type * from './indexer/index.js';

// refs, policy, traversal, excerpts/trace
export { parseRef, formatRef, isUnderPrefix, resolveRef } from './refs/index.js';
export type * from './refs/index.js';
export { compilePolicy, checkPath, checkEdge } from './policy/index.js';
export type * from './policy/index.js';
export { traverse } from './traversal/index.js';
export type * from './traversal/index.js';
export { pickExcerptLines, makeSourceExcerpt, makeTraceEntry } from './excerpts/index.js';
export type * from './excerpts/index.js';

// Ghostlight contracts and their validators
export { validatePacket, validateCapture, validateCaptureFragment, validateProjectedContext, validateDocument, parseJsonDocument, createAjv, VALIDATION_RULES } from './contracts/index.js';
export type * from './contracts/index.js';

// packet, receipts
export { buildPacket, retrieveBatch } from './packet/index.js';
export type * from './packet/index.js';
export { verifyTrace, verifyLedger, exportLedger, bindTraceToLedger, parseTraceId, assembleCapture, buildLock, verifyLock, readSigningKey, readTrustedKey, generateRunnerKey } from './receipts/index.js';
export type * from './receipts/index.js';

// the sandboxed research proxy and its transports
export { openProxySession, ProxySession } from './proxy/index.js';
export type * from './proxy/index.js';
export { createMcpServer, serveMcpStdio, startHttpServer } from './server/index.js';
export type * from './server/index.js';

// coverage
export { coverageReport, readArtifacts, loadNoteLines, writeCoverageFiles, renderCoverageMarkdown, renderCoverageHtml } from './coverage/index.js';
export type * from './coverage/index.js';

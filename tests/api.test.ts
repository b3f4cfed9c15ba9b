/**
 * The public API is frozen here (house style, after mdast-util-from-markdown's "exposes the public api"
 * test): adding or removing an export of src/index.ts is a deliberate change that must update this list.
 */
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('loretrace public API', () => {
  it('exposes exactly the documented runtime exports', () => {
    expect(Object.keys(api).sort()).toEqual([
    'CANONICAL_FORM',
    'CAPTURE_FAILURE_LABELS',
    'COVERAGE_SCHEMA_VERSION',
    'DEFAULT_CHUNK_WORD_BUDGET',
    'DEFAULT_EXCERPT_MAX_CHARS',
    'DEFAULT_LIMITS',
    'DEFAULT_LINK_CLASS_SYNONYMS',
    'DEFAULT_MIN_RELEVANCE',
    'GENESIS_HASH',
    'LEAKAGE_FLAGS',
    'LEDGER_SCHEMA_VERSION',
    'LEDGER_V1_SCHEMA_VERSION',
    'LOCK_FILE_DISPOSITIONS',
    'LOCK_SCHEMA_VERSION',
    'LORE_DATA_NOTICE',
    'LedgerWriter',
    'LoretraceError',
    'OUTPUT_SCHEMA_FILES',
    'POLICY_RECEIPT_SCHEMA_VERSION',
    'POSITION_CLASSES',
    'ProxySession',
    'RAW_STATE_MARKERS',
    'REFUSAL_CODES',
    'RETRIEVAL_LANES',
    'SCHEMA_FILES',
    'SKIP_REASONS',
    'STOP_PATTERNS',
    'STOP_TOKENS',
    'SYNTAX_CLASSES',
    'TOOL_NAMES',
    'TRACE_DISPOSITIONS',
    'TRAVERSE_RESULT_VERSION',
    'VALIDATION_RULES',
    'applyResearchSection',
    'applySourceSection',
    'assembleCapture',
    'auditLeakage',
    'backlinks',
    'bindTraceToLedger',
    'buildLinkLookup',
    'buildLock',
    'buildPacket',
    'checkEdge',
    'checkPath',
    'chunkNote',
    'chunksOf',
    'compilePolicy',
    'coverageReport',
    'createAjv',
    'createMcpServer',
    'defaultIndexDir',
    'detectLineEnding',
    'edgeClassLabel',
    'edgeTarget',
    'excerptRefId',
    'exportLedger',
    'extractLinks',
    'formatRef',
    'getNote',
    'hashLedgerRecord',
    'indexStats',
    'indexVault',
    'isContentLine',
    'isLoretraceError',
    'isUnderPrefix',
    'loadNoteLines',
    'loadVaultConfig',
    'lockPathFor',
    'makeSourceExcerpt',
    'makeTraceEntry',
    'mapLinkClassPhrase',
    'openProxySession',
    'outgoingLinks',
    'outputSchema',
    'packetQueries',
    'parseJsonDocument',
    'parseLedger',
    'parseLimitOverrides',
    'parseMarkdown',
    'parseNote',
    'parsePolicyDocument',
    'parseRef',
    'parseSourceSection',
    'parseStopCondition',
    'parseTraceId',
    'parseWikiLinkContent',
    'pickExcerptLines',
    'policyReceiptDocument',
    'queriesFor',
    'readArtifacts',
    'readNoteLines',
    'recogniseArtifact',
    'remarkWikiLink',
    'renderCoverageHtml',
    'renderCoverageMarkdown',
    'renderResearchSection',
    'renderSourceSection',
    'requirementQueries',
    'resolveLink',
    'resolveLinks',
    'resolveRef',
    'scanVault',
    'scopeFolderNotes',
    'search',
    'serveMcpStdio',
    'sliceLines',
    'snapshotId',
    'splitLines',
    'startHttpServer',
    'targetClasses',
    'tokenContainment',
    'traverse',
    'validateCapture',
    'validateCaptureFragment',
    'validateDocument',
    'validatePacket',
    'validateProjectedContext',
    'vaultAssets',
    'verifyLedger',
    'verifyLock',
    'verifyTrace',
    'wikiLinkFromMarkdown',
    'wikiLinkSyntax',
    'writeCoverageFiles',
    ]);
  });

  it('exports every pipeline stage as a function', () => {
    const stages = ['scanVault', 'parseNote', 'chunkNote', 'extractLinks', 'resolveLinks', 'indexVault', 'search', 'parseRef', 'resolveRef', 'compilePolicy', 'traverse', 'makeTraceEntry', 'buildPacket', 'validatePacket', 'verifyTrace', 'openProxySession', 'verifyLedger', 'exportLedger', 'coverageReport'] as const;
    const kinds = stages.map((name) => [name, typeof (api as Record<string, unknown>)[name]]);
    expect(kinds).toEqual(stages.map((name) => [name, 'function']));
  });

  it('throws LoretraceError with a code, never a bare Error, for a bad ref', () => {
    let caught: unknown;
    try {
      api.parseRef('Lore:../etc/passwd.md', { namespace: 'Lore' });
    } catch (e) {
      caught = e;
    }
    expect(api.isLoretraceError(caught)).toBe(true);
    expect((caught as InstanceType<typeof api.LoretraceError>).code).toBe('bad_ref');
  });
});

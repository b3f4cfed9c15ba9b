/** Policy stage barrel: compile a traversal_policy, the one enforcement path, the receipt. */
export { compilePolicy, checkPath, checkEdge, edgeTarget, edgeClassLabel, scopeFolderNotes, SYNTAX_CLASSES, POSITION_CLASSES } from './compile.js';
export type { CompileOptions, PolicyPacketContext, EdgeDirection, ScopeFolderResult } from './compile.js';
export { parsePolicyDocument } from './load.js';
export type { PolicyDocument } from './load.js';
export { DEFAULT_LINK_CLASS_SYNONYMS, mapLinkClassPhrase } from './synonyms.js';
export { STOP_PATTERNS, STOP_TOKENS, DEFAULT_MIN_RELEVANCE, DEFAULT_MIN_RELATIVE_RELEVANCE, DEFAULT_MIN_SCORE_RATIO, parseStopCondition } from './stop-conditions.js';
export type { StopEffect, StopPattern, ParsedStopCondition } from './stop-conditions.js';
export type { CompiledPolicy, PolicyReceiptRow, ReceiptTotals, Disposition, ClauseKind, Budgets, FollowRules, DenyRule, HiddenSection, EdgeSkipReason, CheckResult } from './types.js';
export { policyReceiptDocument, POLICY_RECEIPT_SCHEMA_VERSION } from './receipt.js';
export type { PolicyReceiptDocument } from './receipt.js';

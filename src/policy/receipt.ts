/**
 * The standalone policy receipt document: what a compiled traversal_policy enforces, without walking the vault.
 * Printed by `loretrace traverse --receipt-only --json`; validated by schemas/policy-receipt.schema.json (whose
 * `$defs/rows` is the `policy_receipt` array embedded in traverse results, capture fragments and ledgers).
 * Origin: seed 003 — a bundle records what actually executed, with totals for every disposition, zeros included.
 */
import type { CompiledPolicy, PolicyReceiptRow, ReceiptTotals } from './types.js';

/** `schema_version` of a standalone policy receipt. */
export const POLICY_RECEIPT_SCHEMA_VERSION = 'loretrace.policy_receipt.v1';

/**
 * A standalone policy receipt. Key order is fixed (deterministic JSON).
 * - `source`: the policy/packet file as given, or null when the policy was compiled from a value.
 * - `totals`: rows per disposition, zeros included.
 * - `rows`: {@link CompiledPolicy.receipt}, one row per clause.
 */
export interface PolicyReceiptDocument {
  schema_version: typeof POLICY_RECEIPT_SCHEMA_VERSION;
  namespace: string;
  snapshot_id: string;
  source: string | null;
  totals: ReceiptTotals;
  rows: PolicyReceiptRow[];
}

/**
 * Wrap a compiled policy's receipt as a standalone document (pure; copies the rows).
 * @param source  the file the policy came from, for the reader (default null).
 */
export function policyReceiptDocument(compiled: CompiledPolicy, source: string | null = null): PolicyReceiptDocument {
  return {
    schema_version: POLICY_RECEIPT_SCHEMA_VERSION,
    namespace: compiled.namespace,
    snapshot_id: compiled.snapshot_id,
    source,
    totals: { ...compiled.receipt_totals },
    rows: compiled.receipt.map((r) => ({ ...r })),
  };
}

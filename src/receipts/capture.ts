/**
 * Capture assembly: the Ghostlight responder output capture (`ghostlight.responder_output.v0`, Ghostlight's
 * schemas/responder-output.schema.json) built from the run's own receipts instead of by hand (seed 001,
 * "Output Captures": "The raw output must parse to the reviewed parsed_output exactly"; "If the runner cannot
 * expose a machine-verifiable tool-call or retrieval transcript, label the sample as draft"; "Trust, but make
 * the trust write receipts").
 *
 * {@link assembleCapture} reads as the algorithm:
 * 1. {@link checkPacket} — the packet must satisfy its contract;
 * 2. {@link parseResponderOutput} — `raw_output` is the responder's text byte for byte, `parsed_output` its
 *    JSON parse; not JSON, a missing `output_contract.required_fields` entry or a parse that breaks the
 *    capture schema is a contract failure (an error, or with `allowInvalid` a `draft` with a failure label —
 *    never a repaired output);
 * 3. {@link readLoreReceipts} — the lane's receipts: none (`curated_excerpts_only`), a ledger (verified,
 *    bound to the packet by id and sha256, exported) or a capture fragment (`retrieve --capture-out`,
 *    `ledger export`: not ledger-backed);
 * 4. {@link verifyCaptureTrace} — every research_trace entry of the capture against the vault (the runner's
 *    in `lore_access`, against the ledger too; the responder's in `parsed_output`, whose quotes must be in
 *    the lines they cite) — the same count `capture check` makes;
 * 5. {@link checkRequiredSeeds}, {@link compareClaims} — seeds the receipts never read, refs the responder
 *    claims but the receipts never show;
 * 6. {@link researchSummary} — the responder's own summary, else one built from the receipts;
 * 7. `auditLeakage` (src/receipts/leakage.ts) — the automated first pass of `leakage_audit`, over the packet's
 *    omitted refs and, {@link policyHiddenLore}, every note the session's policy hides (author-only notes,
 *    hidden prefixes, future-era prefixes: a verbatim quote sets author_only_leak / future_branch_leak);
 * 8. {@link decideReview} — `accepted_as_draft` only when every runner_captured entry is ledger-backed and
 *    verified, no responder_reported entry fails its vault check, no seed is unconsulted, no claim is
 *    unbacked and no leakage flag is set, and a ledger source is signed by one of the trusted keys
 *    (`trustedKeys`, src/receipts/signing.ts); else `draft`. Without trusted keys a ledger's authorship is not
 *    checked: the capture is `draft` with `ledger_authorship_not_checked`, and the review notes say why.
 *    `accepted_for_training` is always false: acceptance is a person's decision;
 * 9. the capture is validated with the capture schema and cross-field rules (src/contracts/).
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { LoretraceError } from '../errors.js';
import { lossyValueError, tooDeepError } from '../contracts/json-input.js';
import type { Finding } from '../errors.js';
import type { VaultIndex } from '../types.js';
import type {
  CaptureLoreAccess, ParsedResponse, ResearchTraceEntry, ResearchTraceStatus, ResponderOutputCapture, ResponderPacket, ValidationIssue, ValidationReport,
} from '../contracts/types.js';
import { validateCapture, validateCaptureFragment, validatePacket } from '../contracts/validate.js';
import { hiddenRefNamedBy, jsonDuplicateKey, jsonSyntaxError, lineColumnAt } from '../contracts/rules.js';
import { parseRef } from '../refs/ref.js';
import { verifyLedger } from './ledger.js';
import { exportLedger, refsNotRead } from './ledger-export.js';
import type { LedgerVerifyReport } from './ledger.js';
import { isFailedResponderEntry, verifyTrace } from './verify-trace.js';
import { traceNotePath } from '../excerpts/trace.js';
import type { TraceEntryVerdict, TraceVerificationReport, VerifyTraceOptions } from './verify-trace.js';
import { parseLedger } from './ledger.js';
import { auditLeakage, LEAKAGE_FLAGS } from './leakage.js';
import type { LeakageHit, PolicyHiddenLore } from './leakage.js';
import { compilePolicy } from '../policy/compile.js';
import { AUTHORSHIP_CODES } from './signing.js';
import type { AuthorshipStatus, TrustedKey } from './signing.js';
import { isJsonObject } from '../contracts/json-object.js';

/** Where a retrieval-lane capture's receipts come from: a ledger's JSONL text, or a parsed capture fragment. */
export type CaptureLoreSource =
  | { kind: 'ledger'; text: string; file: string }
  | { kind: 'fragment'; value: unknown; file: string };

/** Inputs of {@link assembleCapture}. */
export interface AssembleCaptureInput {
  /** The vault the receipts are checked against (and whose note names the leakage pass looks for). */
  index: VaultIndex;
  /** The parsed packet. */
  packet: unknown;
  /** The packet file's text as read (its sha256 binds the capture to it; a ledger must pin the same sha256). */
  packetText: string;
  /** The packet file as given (becomes `packet_ref` and `isolation.visible_input_ref`). */
  packetRef: string;
  /** The responder's exact raw output. */
  rawOutput: string;
  /** Name of the raw output for messages (`-` for stdin). */
  rawOutputFile?: string;
  /** Required for coordinator_scoped_retrieval and responder_scoped_repository_search; refused for curated_excerpts_only. */
  source?: CaptureLoreSource;
  /** `isolation.worker_model_family` (required, non-blank; no default is invented). */
  modelFamily: string;
  /** `coordinator_review.reviewer` (required, non-blank). */
  reviewer: string;
  /** Write a `draft` capture with failure labels instead of refusing output that breaks the contract. */
  allowInvalid?: boolean;
  /**
   * Runner public keys (`--trust-key`): given, a ledger source must be signed by one of them for the
   * capture to reach `accepted_as_draft` (else `ledger_unsigned` / `ledger_untrusted_signer`). Absent or
   * empty: authorship is not checked, so a ledger source leaves the capture `draft` with the label
   * `ledger_authorship_not_checked` (anyone can write a consistent chain), and a review note says so plainly.
   * Ignored for fragments (never ledger-backed: draft anyway).
   */
  trustedKeys?: readonly TrustedKey[];
}

/** A capture as assembled: `parsed_output` is absent when the raw output is not JSON (only with `allowInvalid`). */
export type AssembledCapture = Omit<ResponderOutputCapture, 'parsed_output'> & { parsed_output?: ParsedResponse };

/** What the lock file records about a capture run: hashes and bindings that must not sit inside the capture. */
export interface CaptureReceipts {
  /** sha256 (hex) of the packet file's text as UTF-8. */
  packet_sha256: string;
  /** sha256 (hex) of `raw_output` as UTF-8 (equal to the raw output file's bytes). */
  raw_output_sha256: string;
  /** Vault snapshot the trace was verified against. */
  snapshot_id: string;
  /** Snapshot the receipts recorded (null for curated_excerpts_only). */
  recorded_snapshot_id: string | null;
  /** Policy receipt rows of the fragment or ledger session (null when none). */
  policy_receipt: unknown[] | null;
  /**
   * The ledger's head and state (null without a ledger): `valid` is its chain's verdict, `signer_key_id`
   * the key id its signature states (null unsigned), `authorship` who wrote it as checked
   * (src/receipts/signing.ts; `not_checked` without trusted keys).
   */
  ledger: { file: string; head: string | null; records: number; closed: boolean; valid: boolean; signer_key_id: string | null; authorship: AuthorshipStatus } | null;
  /**
   * Per runner_captured entry of `lore_access.research_trace`: its verdict, and `ledger_backed` — true when
   * the receipts are a ledger that verifies and the entry's record in it served exactly its ref, range and text.
   */
  trace_bindings: { trace_id: string; source_ref: string; line_start: number; line_end: number; disposition: string; ledger_backed: boolean }[];
}

/** Result of {@link assembleCapture}. */
export interface AssembleCaptureResult {
  capture: AssembledCapture;
  /** True when the capture passes the capture schema and every cross-field rule. */
  valid: boolean;
  validation: ValidationReport;
  /** The responder output's contract failures (empty unless `allowInvalid` let them through). */
  output_failures: ValidationIssue[];
  /** The action label held to `visible_context.allowed_action_labels` ({@link actionLabelCheck}; null: not checked). */
  action_label: ReturnType<typeof actionLabelCheck>;
  /** Disagreements, unconsulted seeds, unbacked claims, ledger warnings: coded, never printed. */
  findings: Finding[];
  /** Verdicts on the receipts' trace entries (null for curated_excerpts_only). */
  trace: TraceVerificationReport | null;
  /** The ledger verification (null without a ledger). */
  ledger: LedgerVerifyReport | null;
  leakage_hits: LeakageHit[];
  /** The ledger's tool calls and its refused ones by code (`refusalsByCode`); null without a ledger. */
  refusals: { calls: number; refused: number; codes: [string, number][] } | null;
  receipts: CaptureReceipts;
}

/** The failure labels {@link assembleCapture} writes into `coordinator_review.failure_labels`, in this order. */
export const CAPTURE_FAILURE_LABELS = [
  'raw_output_not_json', 'missing_required_fields', 'parsed_output_invalid', 'action_label_not_allowed',
  'ledger_invalid', 'ledger_not_closed', 'ledger_unsigned', 'ledger_untrusted_signer', 'ledger_authorship_not_checked', 'trace_not_ledger_backed', 'trace_not_verified',
  'responder_trace_not_verified', 'hidden_ref_consulted', 'seed_not_consulted', 'claimed_not_read', 'responder_claims_runner_captured',
  'private_state_leak', 'author_only_leak', 'future_branch_leak', 'raw_state_soup', 'prompt_parroting', 'body_or_object_omniscience',
] as const;
/** One failure label of a capture. */
export type CaptureFailureLabel = (typeof CAPTURE_FAILURE_LABELS)[number];

type Obj = Record<string, unknown>;
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const short = (hex: string | null): string => (hex === null ? '?' : hex.slice(0, 12));
const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * Step 1: the packet must validate (schema + packet rules).
 * @throws LoretraceError `invalid_packet` (exit 1) with the validator errors in `details.data.errors`.
 */
export function checkPacket(value: unknown, file: string): ResponderPacket {
  const report = validatePacket(value, { file });
  if (!report.valid) {
    const first = report.errors[0]!;
    throw new LoretraceError('invalid_packet', `${file} is not a valid responder packet (${count(report.errors.length, 'error')}; first at ${first.pointer || '/'}: ${first.message}); nothing assembled`, { file, pointer: first.pointer, expected: 'a packet that passes `loretrace validate packet`', data: { errors: report.errors } });
  }
  return value as ResponderPacket;
}

/**
 * The `duplicate_key` error (exit 2) of a raw output that is JSON but has a key twice in one object, or null.
 * `JSON.parse` keeps only the last value, so `parsed_output` (and the leakage audit over it) would judge
 * another text than the one the responder wrote: the raw output is read as strictly as every other JSON
 * input (src/contracts/json-input.ts), and refused, never repaired. The message names the file, the JSON
 * pointer and the line and column (1-based, in characters) of both occurrences; `details.line` is the second,
 * `details.data` is `{ first_line, first_column, second_line, second_column }`.
 */
export function rawOutputDuplicateKey(raw: string, file: string): LoretraceError | null {
  const dup = jsonDuplicateKey(raw);
  if (dup === null) return null;
  const first = lineColumnAt(raw, dup.first_offset);
  const second = lineColumnAt(raw, dup.offset);
  return new LoretraceError('duplicate_key', `${file} has the key ${dup.pointer} twice (line ${first.line}, column ${first.column} and line ${second.line}, column ${second.column}); parsed_output would keep only the last value, so the leakage audit and the review would judge another text than the responder wrote; nothing assembled (expected each key once per object)`, {
    file, pointer: `/parsed_output${dup.pointer}`, line: second.line, expected: 'each key once per object',
    data: { first_line: first.line, first_column: first.column, second_line: second.line, second_column: second.column },
  }, 2);
}

/**
 * Step 2: parse the raw output and check it against the packet's `output_contract.required_fields`.
 * Returns the parse (undefined when not JSON) and the failures, each with rule
 * `capture.raw_output_not_json` (line and column inside the raw output), `capture.raw_output_not_object` or
 * `capture.missing_required_field` (one per missing field, pointer `/parsed_output/<field>`). A leading
 * byte-order mark is part of the text and makes it not JSON (the raw output is kept byte for byte).
 * `file` names the raw output in messages.
 * @throws LoretraceError `json_too_deep` (exit 2) when the raw output is JSON nested deeper than
 *   `MAX_JSON_DEPTH` (src/contracts/rules.ts) arrays and objects, naming `file`, the line, column and pointer;
 *   `proto_key` / `unsafe_integer` / `non_finite_number` (exit 2) for a `__proto__` key, an integer beyond
 *   2^53 − 1 or a number beyond the largest double (`1e400`) in it.
 */
export function parseResponderOutput(raw: string, packet: ResponderPacket, file = 'the raw output'): { parsed: unknown; failures: ValidationIssue[] } {
  const bad = jsonSyntaxError(raw);
  if (raw === '' || bad) {
    const { line, column } = lineColumnAt(raw, bad?.offset ?? 0);
    const reason = raw === '' ? 'it is empty' : `${raw.charCodeAt(0) === 0xfeff ? 'it starts with a byte-order mark; ' : ''}${bad!.reason} at line ${line}, column ${column}`;
    return { parsed: undefined, failures: [{ rule: 'capture.raw_output_not_json', pointer: '/raw_output', message: `the raw output is not JSON: ${reason}`, expected: 'one JSON object, as output_contract.response_schema asks' }] };
  }
  // Refused even with --allow-invalid: parsed_output could be neither validated nor written (both recurse),
  // nor kept exactly (a __proto__ key or a rounded integer would not be the responder's value).
  const deep = tooDeepError(raw, file);
  if (deep !== null) throw deep;
  const dup = rawOutputDuplicateKey(raw, file);
  if (dup !== null) throw dup;
  const lossy = lossyValueError(raw, file);
  if (lossy !== null) throw lossy;
  const parsed: unknown = JSON.parse(raw);
  if (!isJsonObject(parsed)) {
    return { parsed, failures: [{ rule: 'capture.raw_output_not_object', pointer: '/parsed_output', message: `the raw output is JSON but not an object (got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed})`, expected: 'one JSON object' }] };
  }
  const missing = packet.output_contract.required_fields.filter((f) => !Object.prototype.hasOwnProperty.call(parsed, f));
  const failures = missing.map((f): ValidationIssue => ({ rule: 'capture.missing_required_field', pointer: `/parsed_output/${f}`, message: `the raw output lacks "${f}", one of the packet's output_contract.required_fields`, expected: `every field of output_contract.required_fields: ${packet.output_contract.required_fields.join(', ')}` }));
  return { parsed, failures };
}

/** The lane's receipts, normalised (step 3). */
interface LoreReceipts {
  kind: 'none' | 'fragment' | 'ledger';
  file: string | null;
  consulted: string[];
  followed: string[];
  trace: ResearchTraceEntry[];
  status: ResearchTraceStatus;
  snapshotId: string | null;
  policyReceipt: unknown[] | null;
  ledger: LedgerVerifyReport | null;
  /** True when the trace comes from a ledger whose chain verifies (its authorship is judged apart). */
  ledgerBacked: boolean;
}

/** True when a ledger report has no error but those of authorship: its chain verifies. */
function chainVerifies(report: LedgerVerifyReport): boolean {
  return !report.findings.some((f) => f.severity === 'error' && !(AUTHORSHIP_CODES as readonly string[]).includes(f.code));
}

/**
 * Step 3: read the receipts the lane calls for.
 * - `curated_excerpts_only`: none; a source is refused (`usage`, exit 2). consulted_refs are
 *   `packet_prompt_text` and the distinct `source_excerpts[].source_ref`s, as Ghostlight's packet-only captures list them.
 * - a ledger — a proxy session's (`serve`, responder lane) or `retrieve`'s own (coordinator lane): verified
 *   (`verifyLedger`); its `SESSION_OPENED` record must pin this packet (packet_id and sha256) and this
 *   packet's mode, else `lore_source_mismatch`; then exported (`exportLedger`) — an invalid ledger, a
 *   signature that does not verify included, is `ledger_invalid`; its authorship is checked against
 *   `trustedKeys` (none: not checked) and judged by {@link decideReview}.
 * - a fragment: must validate (`validate capture-fragment`, else `invalid_fragment`), its mode must be the
 *   packet's, and a `packet_id` in it must be the packet's (`lore_source_mismatch`).
 * @throws LoretraceError `usage` (exit 2) when a retrieval lane has no source.
 */
export async function readLoreReceipts(packet: ResponderPacket, packetSha: string, source: CaptureLoreSource | undefined, packetFile: string, index?: VaultIndex, trustedKeys: readonly TrustedKey[] = []): Promise<LoreReceipts> {
  const mode = packet.lore_access.mode;
  if (mode === 'curated_excerpts_only') {
    if (source) throw new LoretraceError('usage', `${packetFile} is a curated_excerpts_only packet: the responder did no lore research, so --${source.kind} ${source.file} has nothing to receipt; give neither --ledger nor --fragment`, { file: source.file }, 2);
    const refs = ['packet_prompt_text', ...new Set(packet.visible_context.source_excerpts.map((e) => e.source_ref))];
    return { kind: 'none', file: null, consulted: refs, followed: [], trace: [], status: 'none', snapshotId: null, policyReceipt: null, ledger: null, ledgerBacked: false };
  }
  if (!source) {
    throw new LoretraceError('usage', `${packetFile} is a ${mode} packet: give its receipts with --ledger <ledger.jsonl> (the run's hash-chained ledger) or --fragment <lore_access.json>`, { file: packetFile, expected: '--ledger or --fragment' }, 2);
  }
  if (source.kind === 'ledger') return readLedgerReceipts(packet, packetSha, source, index, trustedKeys);
  const report = validateCaptureFragment(source.value, { file: source.file });
  if (!report.valid) {
    const first = report.errors[0]!;
    throw new LoretraceError('invalid_fragment', `${source.file} is not a valid capture fragment (${count(report.errors.length, 'error')}; first at ${first.pointer || '/'}: ${first.message})`, { file: source.file, pointer: first.pointer, data: { errors: report.errors } });
  }
  const f = source.value as { mode: string; consulted_refs: string[]; followed_refs: string[]; research_trace: ResearchTraceEntry[]; snapshot_id: string; policy_receipt: unknown[]; packet_id?: string };
  if (f.mode !== mode) {
    throw new LoretraceError('lore_source_mismatch', `${source.file} records mode ${f.mode} but ${packetFile} is a ${mode} packet; expected the receipts of this packet's run`, { file: source.file, pointer: '/mode', expected: mode });
  }
  if (f.packet_id !== undefined && f.packet_id !== packet.packet_id) {
    throw new LoretraceError('lore_source_mismatch', `${source.file} records packet_id ${JSON.stringify(f.packet_id)} but ${packetFile} is ${JSON.stringify(packet.packet_id)}; expected the receipts of this packet's run`, { file: source.file, pointer: '/packet_id', expected: packet.packet_id });
  }
  return { kind: 'fragment', file: source.file, consulted: f.consulted_refs, followed: f.followed_refs, trace: f.research_trace, status: 'runner_captured', snapshotId: f.snapshot_id, policyReceipt: f.policy_receipt, ledger: null, ledgerBacked: false };
}

/** The ledger branch of {@link readLoreReceipts}. */
async function readLedgerReceipts(packet: ResponderPacket, packetSha: string, source: { text: string; file: string }, index: VaultIndex | undefined, trustedKeys: readonly TrustedKey[]): Promise<LoreReceipts> {
  const report = await verifyLedger(source.text, { file: source.file, trustedKeys });
  if (report.packet_id !== null && report.packet_id !== packet.packet_id) {
    throw new LoretraceError('lore_source_mismatch', `ledger ${source.file} pins packet ${JSON.stringify(report.packet_id)}, not ${JSON.stringify(packet.packet_id)}; expected the ledger of this packet's session`, { file: source.file, line: 1, expected: packet.packet_id });
  }
  if (report.packet_sha256 !== null && report.packet_sha256 !== packetSha) {
    throw new LoretraceError('lore_source_mismatch', `ledger ${source.file} pins packet sha256 ${report.packet_sha256}, but the packet file hashes to ${packetSha}: the packet was changed or swapped after the session`, { file: source.file, line: 1, expected: packetSha });
  }
  const exported = await exportLedger(source.text, { file: source.file, ...(index ? { index } : {}) });
  if (exported.mode !== packet.lore_access.mode) {
    throw new LoretraceError('lore_source_mismatch', `ledger ${source.file} records a ${exported.mode} run but the packet is a ${packet.lore_access.mode} packet; expected the ledger of this packet's run`, { file: source.file, line: 1, pointer: '/session/mode', expected: packet.lore_access.mode });
  }
  return {
    kind: 'ledger', file: source.file, consulted: exported.consulted_refs, followed: exported.followed_refs, trace: exported.research_trace,
    status: 'runner_captured', snapshotId: exported.snapshot_id, policyReceipt: exported.policy_receipt, ledger: report, ledgerBacked: chainVerifies(report),
  };
}

/** The note path a ref names (fragment dropped), or null when it is no lore ref of this vault. */
function notePath(ref: string, namespace: string): string | null {
  try {
    const p = parseRef(ref.split('#')[0]!, { namespace });
    return p.is_prefix ? null : p.path;
  } catch {
    return null;
  }
}

/**
 * Step 5a: every `traversal_policy.required_seed_refs` entry must be among the notes the receipts read
 * (consulted or followed, compared by note path). Seed 001: "the responder must consult the seed docs before
 * answering … No consulted refs means the research-enabled response failed at the first hurdle".
 * Returns the seeds never read, in policy order.
 */
export function checkRequiredSeeds(packet: ResponderPacket, read: readonly string[], namespace: string): string[] {
  const seeds = packet.lore_access.traversal_policy?.required_seed_refs ?? [];
  const readPaths = new Set(read.map((r) => notePath(r, namespace)).filter((p): p is string => p !== null));
  return seeds.filter((s) => !readPaths.has(notePath(s, namespace) ?? `\u0000${s}`));
}

/** What the responder claims against what the receipts show (step 5b). */
export interface ClaimComparison {
  /** Refs the responder lists (consulted_refs, followed_refs, research_trace source_refs) that no receipt shows read, as written, distinct, in output order. */
  claimed_not_read: string[];
  /** Notes the receipts show read that the responder does not mention. */
  read_not_claimed: string[];
  /** Pointers of parsed_output.research_trace entries that say `runner_captured` without matching a receipt entry verbatim. */
  unbacked_runner_claims: string[];
}

/**
 * Step 5b: compare the responder's own research fields with the receipts (by note path). A responder's
 * `runner_captured` entry is backed only when a receipt entry of the same file covers its lines and holds
 * exactly its `extracted_constraint` for them.
 */
export function compareClaims(parsed: unknown, receipts: Pick<LoreReceipts, 'consulted' | 'followed' | 'trace'>, namespace: string): ClaimComparison {
  const out: ClaimComparison = { claimed_not_read: [], read_not_claimed: [], unbacked_runner_claims: [] };
  if (!isJsonObject(parsed)) return out;
  const readPaths = new Set([...receipts.consulted, ...receipts.followed].map((r) => notePath(r, namespace)).filter((p): p is string => p !== null));
  const claimed: string[] = [];
  for (const key of ['consulted_refs', 'followed_refs']) {
    const v = parsed[key];
    if (Array.isArray(v)) for (const r of v) if (typeof r === 'string') claimed.push(r);
  }
  const trace = Array.isArray(parsed.research_trace) ? parsed.research_trace : [];
  trace.forEach((e, i) => {
    if (!isJsonObject(e)) return;
    if (typeof e.source_ref === 'string') claimed.push(e.source_ref);
    if (e.origin === 'runner_captured' && !backedByReceipt(e, receipts.trace)) out.unbacked_runner_claims.push(`/parsed_output/research_trace/${i}`);
  });
  // A responder that claims no research at all (the coordinator lane's usual output) has nothing to compare.
  if (claimed.length === 0 && !Array.isArray(parsed.consulted_refs) && !Array.isArray(parsed.followed_refs) && !Array.isArray(parsed.research_trace)) return out;
  const claimedPaths = new Set<string>();
  for (const ref of claimed) {
    const p = notePath(ref, namespace);
    if (p !== null) claimedPaths.add(p);
    if ((p === null || !readPaths.has(p)) && !out.claimed_not_read.includes(ref)) out.claimed_not_read.push(ref);
  }
  for (const ref of [...receipts.consulted, ...receipts.followed]) {
    const p = notePath(ref, namespace);
    if (p !== null && !claimedPaths.has(p) && !out.read_not_claimed.includes(ref)) out.read_not_claimed.push(ref);
  }
  return out;
}

/** True when a receipt entry of the same file covers the claimed lines and holds exactly the claimed text for them. */
function backedByReceipt(claim: Obj, trace: readonly ResearchTraceEntry[]): boolean {
  const { source_path: path, line_start: a, line_end: b, extracted_constraint: text } = claim;
  if (typeof path !== 'string' || typeof a !== 'number' || typeof b !== 'number' || typeof text !== 'string') return false;
  return trace.some((t) => traceNotePath(t.source_path) === traceNotePath(path) && t.line_start <= a && b <= t.line_end
    && t.extracted_constraint.split('\n').slice(a - t.line_start, b - t.line_start + 1).join('\n') === text);
}

/**
 * Step 6: the capture's `research_summary` — the responder's own (a non-blank string in parsed_output), else
 * a deterministic one built from the receipts: seeds read, refs followed, constraints extracted (ref and
 * lines of each runner_captured entry). `from` says which, for a review note.
 */
export function researchSummary(parsed: unknown, receipts: LoreReceipts, packet: ResponderPacket, unconsulted: readonly string[]): { summary: string; from: 'responder' | 'receipts' } {
  if (isJsonObject(parsed) && typeof parsed.research_summary === 'string' && parsed.research_summary.trim() !== '') return { summary: parsed.research_summary, from: 'responder' };
  if (receipts.kind === 'none') {
    return { summary: `No lore research: a ${packet.generation_lane} packet with curated_excerpts_only; the responder saw only the packet (${count(packet.visible_context.source_excerpts.length, 'curated source excerpt')}).`, from: 'receipts' };
  }
  const seeds = packet.lore_access.traversal_policy?.required_seed_refs ?? [];
  const where = receipts.kind === 'ledger' ? `the ledger ${receipts.file}` : `the capture fragment ${receipts.file}`;
  const constraints = receipts.trace.map((t) => `${t.source_ref} L${t.line_start}-L${t.line_end}`);
  return {
    summary: [
      `Built by loretrace from ${where} (the responder gave no research_summary):`,
      `${seeds.length - unconsulted.length} of ${count(seeds.length, 'required seed')} read${unconsulted.length ? ` (never read: ${unconsulted.join(', ')})` : ''};`,
      `${count(receipts.consulted.length, 'note')} consulted, ${count(receipts.followed.length, 'ref')} followed${receipts.followed.length ? ` (${receipts.followed.join(', ')})` : ''};`,
      `${count(constraints.length, 'constraint')} extracted${constraints.length ? `: ${constraints.join('; ')}` : ''}.`,
    ].join(' '),
    from: 'receipts',
  };
}

/** Step 6b: the capture's lore_access — exactly Ghostlight's six keys. */
function buildLoreAccess(packet: ResponderPacket, receipts: LoreReceipts, summary: string): CaptureLoreAccess {
  return {
    mode: packet.lore_access.mode,
    consulted_refs: [...receipts.consulted],
    followed_refs: [...receipts.followed],
    research_trace: receipts.trace.map((t) => ({ ...t })),
    research_trace_status: receipts.status,
    research_summary: summary,
  };
}

/** A receipt ref that names one of the packet's own omitted refs (see {@link consultedHiddenRefs}). */
interface HiddenRefConsulted {
  /** The ref as the receipts give it. */
  ref: string;
  /** The `hidden_context_audit.omitted_context_refs` entry it names. */
  hidden: string;
  /** Where it sits in the capture (`/lore_access/consulted_refs/0`, `/lore_access/research_trace/2/source_ref`). */
  pointer: string;
}

/**
 * Step 5b: every consulted, followed and research_trace source ref of the receipts, and every
 * `research_trace[].source_ref` of the responder's parsed output (`parsed`, any lane: the responder's own
 * trace, whatever origin it states), that names one of the packet's own `hidden_context_audit.omitted_context_refs`
 * ({@link hiddenRefNamedBy}) — the refs `capture.hidden_ref_consulted` holds (src/contracts/rules.ts). The receipts'
 * policy_receipt is not trusted for this: a ledger or fragment whose receipt admitted the omitted note
 * (re-chained, or recorded for another policy) still names it here, and the capture stays draft
 * (`hidden_ref_consulted`). Seed 001: omitted refs are "deliberately omitted" from the responder's research.
 */
function consultedHiddenRefs(packet: ResponderPacket, receipts: Pick<LoreReceipts, 'kind' | 'consulted' | 'followed' | 'trace'>, parsed: unknown): HiddenRefConsulted[] {
  const hidden = packet.hidden_context_audit.omitted_context_refs;
  const out: HiddenRefConsulted[] = [];
  const check = (ref: string, pointer: string) => {
    const hit = hiddenRefNamedBy(ref, hidden);
    if (hit !== null) out.push({ ref, hidden: hit, pointer });
  };
  if (receipts.kind !== 'none') {
    receipts.consulted.forEach((r, i) => check(r, `/lore_access/consulted_refs/${i}`));
    receipts.followed.forEach((r, i) => check(r, `/lore_access/followed_refs/${i}`));
    receipts.trace.forEach((t, i) => check(t.source_ref, `/lore_access/research_trace/${i}/source_ref`));
  }
  const own = isJsonObject(parsed) ? parsed['research_trace'] : undefined;
  if (Array.isArray(own)) own.forEach((t, i) => { if (isJsonObject(t) && typeof t['source_ref'] === 'string') check(t['source_ref'], `/parsed_output/research_trace/${i}/source_ref`); });
  return out;
}

/** The receipts {@link verifyCaptureTrace} checks a capture's trace with (see `VerifyTraceOptions`). */
export type CaptureTraceReceipts = Pick<VerifyTraceOptions, 'ledgers' | 'pins' | 'policyReceipt' | 'packet' | 'packetFile' | 'trustedKeys' | 'emptyRunnerTraceReported'> & {
  /** The snapshot the receipts recorded (a fragment's or ledger's `snapshot_id`): entries failing since then are `drifted`. */
  recordedSnapshot?: string | null;
};

/**
 * Step 4: verify every research_trace entry of a capture — `lore_access.research_trace` (the runner's, against
 * the vault and the ledgers) and `parsed_output.research_trace` (the responder's, whose quotes must be in the
 * lines they cite: `text_mismatch` otherwise, see `isFailedResponderEntry`). `capture` (at assembly, with the
 * receipts it was given) and `capture check` (with the receipts the capture's lock names) both count with this
 * one function, so they print the same totals for the same capture. Async: reads the cited lines.
 * @throws LoretraceError as `verifyTrace` (`no_research_trace` when the capture has no trace array).
 */
export async function verifyCaptureTrace(index: VaultIndex, capture: unknown, file: string | undefined, receipts: CaptureTraceReceipts = {}): Promise<TraceVerificationReport> {
  const { recordedSnapshot, ...options } = receipts;
  const doc = typeof recordedSnapshot === 'string' && isJsonObject(capture) ? { ...capture, snapshot_id: recordedSnapshot } : capture;
  return verifyTrace(index, doc, { ...(file !== undefined ? { file } : {}), ...options });
}

/** The entries of a capture's trace report that are the responder's and fail a vault check (`isFailedResponderEntry`). */
export function failedResponderEntries(trace: TraceVerificationReport | null): TraceEntryVerdict[] {
  return (trace?.entries ?? []).filter(isFailedResponderEntry);
}

/**
 * The refused tool calls of a ledger, by refusal code (sorted by code), and the tool calls in all — the
 * records whose `outcome.status` is `refused` (src/receipts/ledger-record.ts `LedgerRefusedOutcome`). For a
 * review note: a session that was refused 8 of 19 times was steered by the policy, and by which rule.
 */
export function refusalsByCode(text: string, file?: string): { calls: number; refused: number; codes: [string, number][] } {
  const codes = new Map<string, number>();
  let calls = 0;
  let refused = 0;
  for (const r of parseLedger(text, file)) {
    const outcome = r['outcome'];
    if (!isJsonObject(outcome)) continue;
    calls += 1;
    if (outcome['status'] !== 'refused') continue;
    refused += 1;
    const code = typeof outcome['code'] === 'string' ? outcome['code'] : 'unknown';
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return { calls, refused, codes: [...codes.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
}

/**
 * The responder's `action_label` held to the packet's `visible_context.allowed_action_labels` (Ghostlight's
 * `output_contract.response_rules`: "Use exactly one allowed action label"; seed 001: "allowed_action_labels:
 * concrete action labels"), compared exactly as written. Null when the parsed output has no string
 * `action_label` (a contract failure reports that) or the packet lists none.
 */
export function actionLabelCheck(parsed: unknown, packet: ResponderPacket): { label: string; allowed: string[]; ok: boolean } | null {
  const label = isJsonObject(parsed) ? parsed['action_label'] : undefined;
  const allowed = (packet.visible_context as { allowed_action_labels?: unknown } | undefined)?.allowed_action_labels;
  if (typeof label !== 'string' || !Array.isArray(allowed)) return null;
  const list = allowed.filter((a): a is string => typeof a === 'string');
  return { label, allowed: list, ok: list.includes(label) };
}

/** Everything {@link decideReview} weighs. */
interface ReviewInputs {
  outputFailures: ValidationIssue[];
  /** The action label check ({@link actionLabelCheck}); absent or null: not checked. */
  actionLabel?: ReturnType<typeof actionLabelCheck>;
  /** Receipt refs naming the packet's omitted refs (absent: none). */
  hiddenConsulted?: HiddenRefConsulted[];
  receipts: LoreReceipts;
  trace: TraceVerificationReport | null;
  unconsulted: string[];
  claims: ClaimComparison;
  leakage: ReturnType<typeof auditLeakage>['audit'];
  /** Refused tool calls of the ledger receipts (null without a ledger). */
  refusals: ReturnType<typeof refusalsByCode> | null;
}

/**
 * Step 8: the failure labels (in {@link CAPTURE_FAILURE_LABELS} order) and the review status: `accepted_as_draft`
 * when there is none, else `draft`.
 */
export function decideReview(r: ReviewInputs): { status: 'draft' | 'accepted_as_draft'; labels: CaptureFailureLabel[] } {
  const labels = new Set<CaptureFailureLabel>();
  for (const f of r.outputFailures) {
    labels.add(f.rule === 'capture.raw_output_not_json' || f.rule === 'capture.raw_output_not_object' ? 'raw_output_not_json' : f.rule === 'capture.missing_required_field' ? 'missing_required_fields' : 'parsed_output_invalid');
  }
  if (r.actionLabel && !r.actionLabel.ok) labels.add('action_label_not_allowed');
  if (r.receipts.ledger && !chainVerifies(r.receipts.ledger)) labels.add('ledger_invalid');
  if (r.receipts.ledger && !r.receipts.ledger.closed) labels.add('ledger_not_closed');
  // A receipt anyone could write by hand is worthless: with trusted keys, a ledger counts only when one of
  // them signed it. Without them nobody's authorship was checked, and the review notes say so.
  const authorship = r.receipts.ledger?.authorship;
  if (authorship?.status === 'unsigned') labels.add('ledger_unsigned');
  else if (authorship?.status === 'untrusted_signer') labels.add('ledger_untrusted_signer');
  // Without trusted keys a verified chain is integrity only: anyone can write such a ledger and re-hash it,
  // so it cannot make the research accepted (seed 001: without a machine-verifiable transcript, draft).
  else if (r.receipts.ledger && chainVerifies(r.receipts.ledger) && authorship?.status === 'not_checked') labels.add('ledger_authorship_not_checked');
  if (r.receipts.kind !== 'none' && !r.receipts.ledgerBacked) labels.add('trace_not_ledger_backed');
  // An entry that is only unbacked because the receipts are a fragment is trace_not_ledger_backed, not a
  // second failure, and one only untrusted because of the ledger's signer is the authorship label above;
  // every other failed runner_captured entry (vault or ledger check) is trace_not_verified.
  const notBackedOnly = (d: string) => (d === 'unbacked' && !r.receipts.ledgerBacked) || d === 'ledger_untrusted';
  // Only the runner's array: a responder entry labelled runner_captured is responder_claims_runner_captured.
  if (r.trace && r.trace.entries.some((e) => e.pointer.startsWith('/lore_access/') && e.origin === 'runner_captured' && e.disposition !== 'verified' && !notBackedOnly(e.disposition))) labels.add('trace_not_verified');
  if (failedResponderEntries(r.trace).length > 0) labels.add('responder_trace_not_verified');
  if ((r.hiddenConsulted ?? []).length > 0) labels.add('hidden_ref_consulted');
  if (r.unconsulted.length > 0) labels.add('seed_not_consulted');
  if (r.claims.claimed_not_read.length > 0) labels.add('claimed_not_read');
  if (r.claims.unbacked_runner_claims.length > 0) labels.add('responder_claims_runner_captured');
  for (const flag of LEAKAGE_FLAGS) if (r.leakage[flag]) labels.add(flag);
  const ordered = CAPTURE_FAILURE_LABELS.filter((l) => labels.has(l));
  return { status: ordered.length === 0 ? 'accepted_as_draft' : 'draft', labels: ordered };
}

/** The review notes: what loretrace checked, in the order it checked it. */
function reviewNotes(input: AssembleCaptureInput, packetSha: string, rawSha: string, r: ReviewInputs & { summaryFrom: 'responder' | 'receipts'; status: string; labels: string[]; index: VaultIndex }): string[] {
  const notes: string[] = [];
  const bytes = Buffer.byteLength(input.rawOutput, 'utf8');
  notes.push(`Assembled by loretrace capture from packet ${input.packetRef} (sha256 ${packetSha}, also in the lock file) and the responder's raw output ${input.rawOutputFile ?? ''}`.trimEnd() + ` (${bytes} bytes, sha256 ${rawSha}); raw_output is that text byte for byte and parsed_output its JSON parse, unedited.`);
  const a = r.actionLabel;
  const labelNote = !a ? '' : a.ok ? ` Its action_label ${JSON.stringify(a.label)} is one of visible_context.allowed_action_labels.`
    : ` Its action_label ${JSON.stringify(a.label)} is not one of visible_context.allowed_action_labels (${a.allowed.join(', ')}): action_label_not_allowed.`;
  notes.push(r.outputFailures.length === 0
    ? `The raw output is one JSON object with every output_contract.required_fields entry and passes the capture schema.${labelNote} The other response_rules are not checked mechanically.`
    : `The raw output breaks the output contract (${r.outputFailures.map((f) => `${f.pointer}: ${f.message}`).join('; ')}); kept as written with --allow-invalid.${labelNote}`);
  const rc = r.receipts;
  if (rc.kind === 'none') notes.push('curated_excerpts_only: no lore research to receipt; research_trace_status none.');
  else if (rc.kind === 'ledger') {
    const l = rc.ledger!;
    notes.push(`Receipts from ledger ${rc.file}: ${chainVerifies(l) ? 'verifies' : 'does NOT verify'} (${count(l.records, 'record')}, ${l.closed ? 'closed' : 'NOT closed'}, head ${l.head_hash ?? 'none'}); it pins this packet's id and sha256.`);
    const a = l.authorship;
    notes.push(!a.checked
      ? `Authorship not checked (no --trust-key): the chain shows the records hang together, not who wrote them (${a.key_id ? `signed by key ${a.key_id}, not checked against a trusted key` : 'the ledger is unsigned'}); whoever can write the file could have written it, so the capture stays draft (ledger_authorship_not_checked) — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault) to make authorship, and acceptance, possible.`
      : a.status === 'trusted' ? `Authorship: the ledger is ${a.detail}.` : `Authorship FAILED: ${a.detail}.`);
    const f = r.refusals;
    if (f && f.refused > 0) notes.push(`Refused tool calls: ${f.refused} of ${f.calls} (${f.codes.map(([c, n]) => `${c} ${n}`).join(', ')}); the ledger records each one's true reason.`);
  } else notes.push(`Receipts from capture fragment ${rc.file}: not ledger-backed (no hash-chained record of the lookups was given), so the capture stays draft.`);
  if (r.trace) {
    const t = r.trace;
    notes.push(`lore_access.research_trace: ${count(t.runner_captured.checked, 'runner_captured entry', 'runner_captured entries')} checked against ${r.index.namespace} snapshot ${short(t.snapshot.current)}${t.snapshot.drift ? ` (recorded ${short(t.snapshot.recorded)}: DRIFT)` : ''}, ${t.runner_captured.failed} failed (${Object.entries(t.totals).map(([k, v]) => `${k} ${v}`).join(', ')}).`);
  }
  const hiddenRefs = (r.hiddenConsulted ?? []).filter((h) => !h.pointer.startsWith('/parsed_output/'));
  if (hiddenRefs.length > 0) notes.push(`The receipts name the packet's own omitted refs (hidden_context_audit.omitted_context_refs), whatever their policy_receipt says: ${hiddenRefs.map((h) => `${h.ref} at ${h.pointer}`).join(', ')}.`);
  const hiddenCited = (r.hiddenConsulted ?? []).filter((h) => h.pointer.startsWith('/parsed_output/'));
  if (hiddenCited.length > 0) notes.push(`The responder's own research_trace cites the packet's omitted refs (hidden_context_audit.omitted_context_refs): ${hiddenCited.map((h) => `${h.ref} at ${h.pointer}`).join(', ')}.`);
  const seeds = (input.packet as ResponderPacket).lore_access.traversal_policy?.required_seed_refs;
  if (rc.kind !== 'none' && seeds) notes.push(r.unconsulted.length === 0 ? `Required seeds: all ${seeds.length} read.` : `Required seeds never read: ${r.unconsulted.join(', ')}.`);
  const bad = failedResponderEntries(r.trace);
  if (bad.length) notes.push(`responder_reported entries whose cited lines do not hold their text: ${bad.map((e) => `${e.pointer} (${e.trace_id}, ${e.disposition}${e.similarity !== null ? `, token containment ${e.similarity}` : ''})`).join(', ')}.`);
  if (r.claims.claimed_not_read.length) notes.push(`The responder claims refs the receipts never show read: ${r.claims.claimed_not_read.join(', ')}.`);
  if (r.claims.read_not_claimed.length) notes.push(`Read according to the receipts but not mentioned by the responder: ${r.claims.read_not_claimed.join(', ')}.`);
  if (r.claims.unbacked_runner_claims.length) notes.push(`parsed_output entries labelled runner_captured that match no receipt verbatim: ${r.claims.unbacked_runner_claims.join(', ')}; only lore_access.research_trace holds the runner's entries.`);
  if (rc.kind !== 'none') notes.push(r.summaryFrom === 'responder' ? 'research_summary is the responder\'s own (parsed_output.research_summary).' : 'research_summary was built by loretrace from the receipts: the responder gave none.');
  notes.push('leakage_audit is an automated first pass (see its notes); a reviewer must confirm it.');
  notes.push(r.status === 'accepted_as_draft'
    ? `review_status accepted_as_draft: ${rc.kind === 'ledger' && rc.ledger?.authorship.status === 'trusted' ? 'the ledger is signed by a trusted runner key, ' : ''}every runner_captured entry is ledger-backed and verified, every required seed was read, no claim is unbacked and no leakage flag is set. accepted_for_training stays false: acceptance is a person\'s decision.`
    : `review_status draft: ${r.labels.join(', ')}. accepted_for_training stays false.`);
  return notes;
}

/** Findings for the caller (the CLI prints them; a test asserts them). */
function captureFindings(r: ReviewInputs, file: string): Finding[] {
  const out: Finding[] = [];
  for (const h of r.hiddenConsulted ?? []) out.push({ code: 'hidden_ref_consulted', severity: 'error', message: `${h.ref} names the packet's omitted ref ${h.hidden} (hidden_context_audit.omitted_context_refs): ${h.pointer.startsWith('/parsed_output/') ? 'the responder\'s trace cites hidden lore' : 'the receipts consulted hidden lore'}`, path: file, pointer: h.pointer });
  for (const s of r.unconsulted) out.push({ code: 'seed_not_consulted', severity: 'error', message: `required seed ${s} was never read according to the receipts`, path: file });
  if (r.claims.claimed_not_read.length) out.push({ code: 'claimed_not_read', severity: 'warning', message: `the responder claims refs the receipts never show read: ${r.claims.claimed_not_read.join(', ')}`, path: file, pointer: '/parsed_output' });
  for (const p of r.claims.unbacked_runner_claims) out.push({ code: 'responder_claims_runner_captured', severity: 'warning', message: `${p} says origin runner_captured but matches no receipt entry verbatim`, path: file, pointer: p });
  for (const e of failedResponderEntries(r.trace)) out.push({ code: 'responder_trace_not_verified', severity: 'warning', message: `${e.pointer} (${e.trace_id}) is ${e.disposition}: ${e.detail ?? 'its cited lines do not hold its text'}; the capture stays draft`, path: file, pointer: e.pointer });
  for (const f of r.receipts.ledger?.findings ?? []) out.push({ ...f, path: f.path ?? r.receipts.file ?? file });
  return out;
}

/**
 * Split the capture's validation errors: those caused by the responder output, those the receipts cause and
 * the review already labels (`capture.hidden_ref_consulted` ↔ `hidden_ref_consulted`: the capture is written
 * as an invalid draft), and the rest (an assembly bug).
 */
function splitValidation(errors: ValidationIssue[]): { output: ValidationIssue[]; other: ValidationIssue[] } {
  // A hidden ref in the responder's own trace is labelled like one in the receipts (a draft), not a contract failure.
  const fromReceipts = (e: ValidationIssue) => e.rule === 'capture.hidden_ref_consulted';
  const fromOutput = (e: ValidationIssue) => !fromReceipts(e) && (e.pointer.startsWith('/parsed_output') || e.pointer === '/raw_output' || e.rule === 'capture.agent_mismatch');
  return { output: errors.filter(fromOutput), other: errors.filter((e) => !fromOutput(e) && !fromReceipts(e)) };
}

/**
 * The contract failures of a raw output in one phrase, for the one-line `invalid_raw_output` error: one failure
 * as `pointer: message`; missing top-level fields named once, together (`missing 7 fields: action_label, …`,
 * whether `output_contract.required_fields` or the capture schema requires them); any other failures counted,
 * with the first. `details.data.errors` keeps every failure in full.
 */
export function describeContractFailures(failures: readonly ValidationIssue[]): string {
  const first = failures[0]!;
  if (failures.length === 1) return `${first.pointer}: ${first.message}`;
  const field = (f: ValidationIssue): string | null => {
    const m = /^\/parsed_output\/([^/]+)$/.exec(f.pointer);
    return m && (f.rule === 'capture.missing_required_field' || f.rule === 'schema.required') ? m[1]!.replace(/~1/g, '/').replace(/~0/g, '~') : null;
  };
  const missing = [...new Set(failures.map(field).filter((x): x is string => x !== null))];
  const others = failures.filter((f) => field(f) === null);
  if (missing.length === 0) return `${failures.length} contract failures, the first at ${first.pointer}: ${first.message}`;
  const named = `missing ${missing.length === 1 ? '1 field' : `${missing.length} fields`} of parsed_output: ${missing.join(', ')}`;
  if (others.length === 0) return named;
  return `${named}; and ${others.length === 1 ? '1 other failure' : `${others.length} other failures`}, the first at ${others[0]!.pointer}: ${others[0]!.message}`;
}

/**
 * Assemble the responder output capture of one responder turn (see the file comment for the steps).
 * Async: verifies the trace against the vault's files. Deterministic: same inputs → the same capture.
 *
 * `capture_id` is `<packet_id>.capture` (Ghostlight's naming); `packet_ref` and `isolation.visible_input_ref`
 * are `packetRef`; `coordinator_artifact_ref`, `responder_agent_id`, `generation_lane`, `fixture_lane`,
 * `canon_status` and `isolation.isolation_method` come from the packet, `isolation.hidden_context_refs` from
 * `hidden_context_audit.omitted_context_refs`, `isolation.fork_context` is false (the packet demands
 * `no_conversation_context`).
 *
 * @throws LoretraceError `usage` (exit 2: blank modelFamily or reviewer, missing or needless lore source),
 *   `invalid_packet`, `invalid_fragment`, `lore_source_mismatch`, `ledger_invalid` (a ledger that does not
 *   verify cannot be exported), `invalid_raw_output` (the output breaks its contract and `allowInvalid` is
 *   off; `details.data.errors` lists every failure), `capture_invalid` (the assembled capture breaks a rule
 *   outside the responder's output — a bug, reported rather than written).
 */
export async function assembleCapture(input: AssembleCaptureInput): Promise<AssembleCaptureResult> {
  if (input.modelFamily.trim() === '') throw new LoretraceError('usage', 'the worker model family must be non-blank (it becomes isolation.worker_model_family; no default is invented)', { expected: 'e.g. "Codex subagent"' }, 2);
  if (input.reviewer.trim() === '') throw new LoretraceError('usage', 'the reviewer must be non-blank (it becomes coordinator_review.reviewer)', { expected: 'a name' }, 2);
  const packet = checkPacket(input.packet, input.packetRef);
  const packetSha = sha256(input.packetText);
  const rawSha = sha256(input.rawOutput);
  const { parsed, failures } = parseResponderOutput(input.rawOutput, packet, input.rawOutputFile ?? 'the raw output');
  const receipts = await readLoreReceipts(packet, packetSha, input.source, input.packetRef, input.index, input.trustedKeys ?? []);
  const unconsulted = receipts.kind === 'none' ? [] : checkRequiredSeeds(packet, [...receipts.consulted, ...receipts.followed], input.index.namespace);
  const claims = receipts.kind === 'none' ? { claimed_not_read: [], read_not_claimed: [], unbacked_runner_claims: [] } : compareClaims(parsed, receipts, input.index.namespace);
  const { summary, from } = researchSummary(parsed, receipts, packet, unconsulted);
  const policyHidden = policyHiddenLore(packet, input.index, receipts.policyReceipt);
  const leakage = auditLeakage({ rawOutput: input.rawOutput, ...(parsed !== undefined ? { parsed } : {}), packet, index: input.index, ...(policyHidden ? { policyHidden } : {}) });

  const captureWith = (status: string, labels: string[], notes: string[]): AssembledCapture => ({
    schema_version: 'ghostlight.responder_output.v0',
    capture_id: `${packet.packet_id}.capture`,
    review_status: status as AssembledCapture['review_status'],
    fixture_lane: packet.fixture_lane,
    canon_status: packet.canon_status,
    packet_ref: input.packetRef,
    coordinator_artifact_ref: packet.coordinator_artifact_ref,
    responder_agent_id: packet.responder_agent_id,
    generation_lane: packet.generation_lane,
    lore_access: buildLoreAccess(packet, receipts, summary),
    isolation: {
      isolation_method: packet.isolation_requirements.isolation_method,
      fork_context: false,
      visible_input_ref: input.packetRef,
      hidden_context_refs: [...packet.hidden_context_audit.omitted_context_refs],
      worker_model_family: input.modelFamily,
    },
    raw_output: input.rawOutput,
    ...(parsed !== undefined ? { parsed_output: parsed as ParsedResponse } : {}),
    leakage_audit: leakage.audit,
    coordinator_review: { reviewer: input.reviewer, accepted_for_training: false, review_notes: notes, coordinator_interventions: [], failure_labels: labels },
  });

  // The capture schema judges the parsed output too (update candidates, field types): validate once to
  // collect those failures, then decide the review with them.
  const probe = splitValidation(validateCapture(captureWith('draft', [], []), { file: input.packetRef }).errors);
  const outputFailures = [...failures, ...probe.output.filter((e) => !failures.some((f) => f.pointer === e.pointer) && !(failures.length > 0 && parsed === undefined))];
  if (outputFailures.length > 0 && input.allowInvalid !== true) {
    const what = describeContractFailures(outputFailures);
    throw new LoretraceError('invalid_raw_output', `${input.rawOutputFile ?? 'the raw output'} breaks the output contract of ${input.packetRef}: ${what}; nothing written (pass --allow-invalid to write a draft capture with a failure label)`, { file: input.rawOutputFile ?? '', pointer: outputFailures[0]!.pointer, expected: 'the JSON object output_contract asks for', data: { errors: outputFailures } });
  }
  // With --allow-invalid, a parsed output that breaks the schema may hold trace entries verifyTrace cannot
  // read (a missing field): only the runner's entries are verified then, and the contract failure labels it.
  const probeCapture = captureWith('draft', [], []);
  const traced = outputFailures.length > 0 ? { ...probeCapture, parsed_output: undefined } : probeCapture;
  const trace = receipts.kind === 'none' ? null : await verifyCaptureTrace(input.index, traced, receipts.file ?? undefined, {
    recordedSnapshot: receipts.snapshotId,
    ...(receipts.policyReceipt ? { policyReceipt: { pointer: `${receipts.file ?? 'the receipts'} /policy_receipt`, value: receipts.policyReceipt } } : {}),
    // A ledger source backs its own exported entries; a fragment alone backs none (they stay unbacked).
    ...(receipts.kind === 'ledger' && input.source?.kind === 'ledger' ? { ledgers: [{ file: input.source.file, text: input.source.text }] } : {}),
    trustedKeys: input.trustedKeys ?? [],
  });
  const refusals = receipts.kind === 'ledger' && input.source?.kind === 'ledger' ? refusalsByCode(input.source.text, input.source.file) : null;
  const reviewIn: ReviewInputs = { outputFailures, actionLabel: actionLabelCheck(parsed, packet), hiddenConsulted: consultedHiddenRefs(packet, receipts, parsed), receipts, trace, unconsulted, claims, leakage: leakage.audit, refusals };
  const { status, labels } = decideReview(reviewIn);
  const notes = reviewNotes(input, packetSha, rawSha, { ...reviewIn, summaryFrom: from, status, labels, index: input.index });
  const capture = captureWith(status, labels, notes);
  const validation = validateCapture(capture, { file: input.packetRef });
  const split = splitValidation(validation.errors);
  if (split.other.length > 0) {
    const first = split.other[0]!;
    throw new LoretraceError('capture_invalid', `the assembled capture breaks ${first.rule} at ${first.pointer || '/'} (${first.message}): the inputs disagree in a way loretrace does not repair; nothing written`, { pointer: first.pointer, data: { errors: split.other } });
  }
  return {
    capture, valid: validation.valid, validation, output_failures: outputFailures, action_label: reviewIn.actionLabel ?? null,
    findings: captureFindings(reviewIn, input.packetRef), trace, ledger: receipts.ledger, leakage_hits: leakage.hits, refusals,
    receipts: {
      packet_sha256: packetSha, raw_output_sha256: rawSha, snapshot_id: input.index.snapshot_id, recorded_snapshot_id: receipts.snapshotId,
      policy_receipt: receipts.policyReceipt,
      ledger: receipts.ledger ? {
        file: receipts.file!, head: receipts.ledger.head_hash, records: receipts.ledger.records, closed: receipts.ledger.closed, valid: chainVerifies(receipts.ledger),
        signer_key_id: receipts.ledger.authorship.key_id, authorship: receipts.ledger.authorship.status,
      } : null,
      trace_bindings: (trace?.entries ?? []).filter((e) => e.pointer.startsWith('/lore_access/')).map((e) => ({ trace_id: e.trace_id, source_ref: e.source_ref, line_start: e.line_start, line_end: e.line_end, disposition: e.disposition, ledger_backed: receipts.ledgerBacked && e.disposition === 'verified' })),
    },
  };
}

/**
 * Step 7a: what the session's traversal policy hides, for the leakage audit ({@link PolicyHiddenLore}).
 * Re-derived first: the packet's `traversal_policy` compiled against the vault (`compilePolicy`, with the
 * packet's omitted refs and the vault config) — its hidden rules other than the omitted refs (notes marked
 * author-only, config `hidden_prefixes`: `author_only_leak`) and its future-era prefixes with their waivers
 * (`future_branch_leak`). Then the `hidden_note`, `hidden_prefix` and `future_era_prefix` rows of the
 * receipts' own policy receipt (a ledger's signed `SESSION_OPENED`, a fragment's `policy_receipt`) that the
 * re-derivation lacks are added: the record can only widen what is searched, never narrow it. A policy that
 * no longer compiles against this vault (a seed gone) leaves the receipt's rows. Null when the packet has no
 * traversal_policy and the receipts no such row (curated_excerpts_only). Never throws.
 */
export function policyHiddenLore(packet: ResponderPacket, index: VaultIndex, policyReceipt: readonly unknown[] | null): PolicyHiddenLore | null {
  const rules: PolicyHiddenLore['rules'][number][] = [];
  const waivers: string[] = [];
  const add = (prefix: string, flag: 'author_only_leak' | 'future_branch_leak', source: string) => {
    if (!rules.some((r) => r.prefix === prefix && r.flag === flag)) rules.push({ prefix, flag, source });
  };
  const policy = packet.lore_access.traversal_policy;
  if (policy) {
    try {
      const compiled = compilePolicy(policy, { index, packet });
      const rowAt = new Map(compiled.receipt.map((r) => [r.pointer, r] as const));
      for (const h of compiled.hidden) {
        if (h.pointer.startsWith('/hidden_context_audit/')) continue;
        const row = rowAt.get(h.pointer);
        add(h.prefix, 'author_only_leak', row ? `${row.kind} ${row.rule}` : `hidden ${h.prefix} (${h.pointer})`);
      }
      for (const f of compiled.future_era) {
        const row = rowAt.get(f.pointer);
        add(f.prefix, 'future_branch_leak', row ? `${row.kind} ${row.rule}` : `future_era_prefix ${f.prefix} (${f.pointer})`);
      }
      waivers.push(...compiled.future_era_waivers);
    } catch {
      // The policy no longer compiles against this vault: the receipts' own rows below still count.
    }
  }
  for (const row of policyReceipt ?? []) {
    if (!isJsonObject(row) || typeof row.clause !== 'string') continue;
    const kind = row.kind;
    if (kind !== 'hidden_note' && kind !== 'hidden_prefix' && kind !== 'future_era_prefix') continue;
    let path: string;
    try {
      path = parseRef(row.clause, { namespace: index.namespace }).path;
    } catch {
      continue;
    }
    add(path, kind === 'future_era_prefix' ? 'future_branch_leak' : 'author_only_leak', `${kind} ${typeof row.rule === 'string' ? row.rule : row.clause} (the receipts' policy_receipt)`);
  }
  return rules.length === 0 && !policy ? null : { rules, waivers };
}

/** Inputs of {@link recheckCaptureReview}: what the capture's lock lists, read by the caller. */
export interface RecheckReviewInput {
  /** The vault (the same index `capture check` verifies the trace against). */
  index: VaultIndex;
  /** The packet file's text as the lock lists it (its bytes are re-hashed by `capture check` apart). */
  packetText: string;
  /** The packet file's name, for messages. */
  packetFile: string;
  /** The receipts the lock lists (its ledger, or its fragment input); absent for curated_excerpts_only. */
  source?: CaptureLoreSource;
  /** `--trust-key` of the check; without keys the authorship labels cannot be re-derived and are not held. */
  trustedKeys?: readonly TrustedKey[];
}

/** Statuses a person may set after `capture` that never claim more than the derivation (a stricter verdict). */
const STRICTER_STATUSES = new Set(['draft', 'useful_needs_revision', 'rejected', 'superseded']);

/**
 * Re-derive a capture's review from its receipts and compare it with what the capture says (`capture check`).
 * The capture's own `raw_output` is re-assembled with {@link assembleCapture} — the one function `capture`
 * uses: the same parse, receipts, trace verification and leakage audit (`auditLeakage`) — against the packet
 * and the receipts its lock lists, and the result is held against the stored capture. Seed 001: "make the
 * trust write receipts": a `review_status` or a `failure_labels` list edited by hand is not a receipt.
 *
 * Findings (error, `path` = `file`), code `capture_review_mismatch`:
 * - `/review_status`: the stored status claims more than the derived one — `accepted_as_draft` or `accepted`
 *   while the derivation is `draft`, or any other status the derivation does not give, except a person's
 *   stricter later verdict (`draft`, `useful_needs_revision`, `rejected`, `superseded`) and `accepted` over a
 *   derived `accepted_as_draft` (acceptance is a person's decision);
 * - `/coordinator_review/failure_labels`: a derived label the capture lacks, or a loretrace label
 *   ({@link CAPTURE_FAILURE_LABELS}) it carries that the derivation does not give — except
 *   `body_or_object_omniscience` (never decided automatically) and, when the check has no trusted keys, the
 *   authorship labels `ledger_unsigned` / `ledger_untrusted_signer` (they are only derived with keys), and
 *   `ledger_authorship_not_checked` either way (it records what the assembly could not check; a check without
 *   keys re-derives `draft`, so a capture accepted with keys is held through `/review_status` instead);
 * - `/coordinator_review/accepted_for_training`: anything but the derived `false` (step 8: acceptance for
 *   training is never derived; a capture promoted to `true` by hand, its lock re-hashed, is refused here
 *   whatever its review_status);
 * - `/coordinator_review/coordinator_interventions`: anything but the derived `[]` (loretrace edits nothing;
 *   `raw_output` is re-assembled byte for byte, so there is no edit an intervention could record);
 * - `/leakage_audit/<flag>`: a flag the re-run audit sets that the capture clears, or one it sets that the
 *   audit does not (but `body_or_object_omniscience`, a person's call).
 * Not compared: `reviewer` and `isolation.worker_model_family` (inputs of the re-assembly, taken from the
 * capture), and the prose of `review_notes` and `leakage_audit.notes` (they name files as the run was given
 * them and a person may add to them; every machine-readable verdict they describe is compared above).
 * One warning, not a mismatch: `capture_review_authorship_not_checked` (pointer `/review_status`) when the check has
 * no trusted key and the stored `accepted` / `accepted_as_draft` differs from the derivation only by
 * `ledger_authorship_not_checked` — the acceptance rests on authorship the check could not establish (`capture
 * check` says UNAUTHENTICATED and asks for `--trust-key`; `--require-accepted` refuses it).
 * And `capture_review_not_rederived` (error, pointer ''): the re-assembly itself failed (the receipts no
 * longer fit the packet, a ledger that does not verify, a raw output with a key twice, …), its code and
 * message quoted. Returns [] when everything matches. Async: reads the cited lines.
 */
export async function recheckCaptureReview(capture: unknown, file: string, input: RecheckReviewInput): Promise<Finding[]> {
  if (!isJsonObject(capture) || typeof capture.raw_output !== 'string') return [];
  const isolation = isJsonObject(capture.isolation) ? capture.isolation : {};
  const review = isJsonObject(capture.coordinator_review) ? capture.coordinator_review : {};
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : 'unknown');
  let derived: AssembleCaptureResult;
  try {
    derived = await assembleCapture({
      index: input.index, packet: JSON.parse(input.packetText) as unknown, packetText: input.packetText, packetRef: input.packetFile,
      rawOutput: capture.raw_output, rawOutputFile: `${file} /raw_output`, ...(input.source ? { source: input.source } : {}),
      modelFamily: text(isolation.worker_model_family), reviewer: text(review.reviewer), allowInvalid: true, trustedKeys: input.trustedKeys ?? [],
    });
  } catch (e) {
    const code = e instanceof LoretraceError ? e.code : 'error';
    return [{ code: 'capture_review_not_rederived', severity: 'error', path: file, pointer: '', message: `the review could not be re-derived from the receipts its lock lists: ${(e as Error).message} [${code}]` }];
  }
  return compareReview(capture, derived.capture, file, (input.trustedKeys ?? []).length > 0, input.source?.kind === 'ledger');
}

/** The comparison step of {@link recheckCaptureReview}: the stored capture against the re-assembled one. */
function compareReview(stored: Obj, derived: AssembledCapture, file: string, keysGiven: boolean, ledgerBacked: boolean): Finding[] {
  const out: Finding[] = [];
  const mismatch = (pointer: string, message: string) => out.push({ code: 'capture_review_mismatch', severity: 'error', path: file, pointer, message });
  const want = derived.review_status;
  const got = stored.review_status;
  const allowed = got === want || (typeof got === 'string' && STRICTER_STATUSES.has(got)) || (got === 'accepted' && want === 'accepted_as_draft');
  // Without a trusted key a ledger's authorship is unknown, so a capture accepted with keys re-derives as draft
  // with that one label: its acceptance is neither upheld nor refused (an authorship question, not an edit).
  const onlyAuthorship = !keysGiven && want === 'draft' && derived.coordinator_review.failure_labels.length > 0
    && derived.coordinator_review.failure_labels.every((l) => l === 'ledger_authorship_not_checked');
  if (!allowed && onlyAuthorship && (got === 'accepted' || got === 'accepted_as_draft')) {
    out.push({ code: 'capture_review_authorship_not_checked', severity: 'warning', path: file, pointer: '/review_status', message: `review_status ${JSON.stringify(got)} rests on the ledger's authorship, which was not checked (no trusted key): re-derived without one it is draft (ledger_authorship_not_checked), so its acceptance is neither upheld nor refused — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault)` });
  } else if (!allowed) mismatch('/review_status', `review_status is ${JSON.stringify(got)} but the receipts and the re-run leakage audit give ${want}${derived.coordinator_review.failure_labels.length ? ` (${derived.coordinator_review.failure_labels.join(', ')})` : ''}`);
  const review = isJsonObject(stored.coordinator_review) ? stored.coordinator_review : {};
  const labels = Array.isArray(review.failure_labels) ? review.failure_labels.filter((l): l is string => typeof l === 'string') : [];
  const wanted = derived.coordinator_review.failure_labels;
  // `ledger_authorship_not_checked` says what the assembly could not check: true of a capture assembled without
  // keys whoever checks it later, and absent from one assembled with keys (a check without keys then holds its
  // acceptance through /review_status, which it re-derives as draft).
  const personal = new Set<string>(['body_or_object_omniscience', 'ledger_authorship_not_checked', ...(keysGiven ? [] : ['ledger_unsigned', 'ledger_untrusted_signer'])]);
  const missing = wanted.filter((l) => !labels.includes(l) && l !== 'ledger_authorship_not_checked');
  const extra = labels.filter((l) => (CAPTURE_FAILURE_LABELS as readonly string[]).includes(l) && !wanted.includes(l as CaptureFailureLabel) && !personal.has(l));
  if (missing.length || extra.length) {
    mismatch('/coordinator_review/failure_labels', `failure_labels ${JSON.stringify(labels)} differ from the re-derived ${JSON.stringify(wanted)}${missing.length ? `: missing ${missing.join(', ')}` : ''}${extra.length ? `${missing.length ? ';' : ':'} not derived ${extra.join(', ')}` : ''}`);
  }
  // Derived as false and [] on every capture (step 8: acceptance for training is a person's decision and
  // loretrace edits nothing): anything else claims more than the receipts give.
  if (review.accepted_for_training !== derived.coordinator_review.accepted_for_training) {
    mismatch('/coordinator_review/accepted_for_training', `accepted_for_training is ${JSON.stringify(review.accepted_for_training)} but the re-derived review gives false (loretrace never accepts a capture for training; the re-derived review_status is ${want}${wanted.length ? `, failure_labels ${wanted.join(', ')}` : ''})`);
  }
  const interventions = review.coordinator_interventions;
  if (!Array.isArray(interventions) || interventions.length !== derived.coordinator_review.coordinator_interventions.length) {
    mismatch('/coordinator_review/coordinator_interventions', `coordinator_interventions is ${Array.isArray(interventions) ? `a list of ${count(interventions.length, 'intervention')}` : JSON.stringify(interventions)} but the re-derived review gives [] (the raw output is the responder's text byte for byte; loretrace edits nothing)`);
  }
  const audit = isJsonObject(stored.leakage_audit) ? stored.leakage_audit : {};
  for (const flag of LEAKAGE_FLAGS) {
    const set = derived.leakage_audit[flag];
    if (audit[flag] === set || (flag === 'body_or_object_omniscience' && audit[flag] === true)) continue;
    mismatch(`/leakage_audit/${flag}`, `leakage_audit.${flag} is ${JSON.stringify(audit[flag])} but the re-run leakage audit gives ${set}`);
  }
  out.push(...compareDerivedFields(stored, derived, file, ledgerBacked));
  return out;
}

/**
 * The step of {@link recheckCaptureReview} for the fields `assembleCapture` derives from the receipts and the
 * packet rather than from a person: `lore_access.mode`, `research_trace_status` and `research_summary` (the
 * responder's own, else the one built from the receipts — both re-derived from `raw_output`), and
 * `isolation.isolation_method`, `fork_context` (always false) and `hidden_context_refs` (the packet's
 * `omitted_context_refs`) must equal the re-derivation (`capture_review_mismatch`). `consulted_refs` and
 * `followed_refs` must be exactly the receipts' refs: a ref the receipts never served or admitted is
 * `claimed_not_read` (error, pointer of the entry), a receipt ref left out is `capture_review_mismatch`.
 * `capture_id` must be exactly the re-derived `<packet_id>.capture` of the packet the lock lists (for a
 * ledger-backed capture, the one its ledger's `SESSION_OPENED` pins): `capture_id_mismatch` (error, `/capture_id`).
 * `packet_ref` and `isolation.visible_input_ref` must name that same packet ({@link packetRefProblem}):
 * `packet_ref_mismatch` (error, at that pointer). `ledgerBacked` only words the messages.
 * Seed 001: "Trust, but make the trust write receipts" — a read the ledger never recorded is not research.
 * `research_trace` is not compared here: its entries are verified one by one, and dropping one is allowed.
 */
function compareDerivedFields(stored: Obj, derived: AssembledCapture, file: string, ledgerBacked: boolean): Finding[] {
  const out: Finding[] = [];
  const push = (code: string, pointer: string, message: string) => out.push({ code, severity: 'error', path: file, pointer, message });
  const access = isJsonObject(stored.lore_access) ? stored.lore_access : {};
  const isolation = isJsonObject(stored.isolation) ? stored.isolation : {};
  const want = derived.lore_access;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const key of ['mode', 'research_trace_status', 'research_summary'] as const) {
    if (!same(access[key], want[key])) push('capture_review_mismatch', `/lore_access/${key}`, `lore_access.${key} is ${JSON.stringify(access[key])} but the receipts and the packet give ${JSON.stringify(want[key])}`);
  }
  for (const key of ['consulted_refs', 'followed_refs'] as const) {
    const got = Array.isArray(access[key]) ? (access[key] as unknown[]) : [];
    const receipts: readonly string[] = want[key] ?? [];
    for (const r of refsNotRead(key, got, receipts, `/lore_access/${key}`, `lore_access.${key}`)) push('claimed_not_read', r.pointer, r.message);
    const left = receipts.filter((r) => !got.includes(r));
    if (!Array.isArray(access[key]) || left.length > 0) push('capture_review_mismatch', `/lore_access/${key}`, `lore_access.${key} leaves out ${left.join(', ') || 'the list'}, which the receipts give`);
  }
  // A capture is named `<packet_id>.capture` of the packet it answered (Ghostlight's naming, what `capture`
  // writes): the packet is the one the lock lists and its ledger's SESSION_OPENED pins, so an id respelled by
  // hand (a trailing space, `.Capture`, a `.v2` suffix, another packet's id) claims another packet.
  if (stored.capture_id !== derived.capture_id) push('capture_id_mismatch', '/capture_id', `capture_id is ${JSON.stringify(stored.capture_id)} but the packet its receipts answer (packet_id ${JSON.stringify(derived.capture_id.slice(0, -'.capture'.length))}, the packet its lock lists and its ledger pins) gives ${JSON.stringify(derived.capture_id)}: a capture is named <packet_id>.capture of its own packet`);
  // The packet the capture says it answered must be the one re-derived from the lock (and the ledger's signed
  // SESSION_OPENED): a ref to another packet would send a reader of the capture to other visible context.
  const packetId = derived.capture_id.slice(0, -'.capture'.length);
  const pinned = `the packet its lock lists${ledgerBacked ? ' and its ledger pins' : ''}`;
  for (const [pointer, name, value] of [['/packet_ref', 'packet_ref', stored.packet_ref], ['/isolation/visible_input_ref', 'isolation.visible_input_ref', isolation.visible_input_ref]] as const) {
    const problem = packetRefProblem(value, derived.packet_ref, packetId);
    if (problem !== null) push('packet_ref_mismatch', pointer, `${name} is ${JSON.stringify(value)}, which names ${problem}, but the packet the capture answered is ${basename(derived.packet_ref)} (packet_id ${JSON.stringify(packetId)}, ${pinned}): expected a path ending in ${basename(derived.packet_ref)}, or the packet_id ${JSON.stringify(packetId)}`);
  }
  const iso = derived.isolation;
  for (const key of ['isolation_method', 'fork_context', 'hidden_context_refs'] as const) {
    if (!same(isolation[key], iso[key])) push('capture_review_mismatch', `/isolation/${key}`, `isolation.${key} is ${JSON.stringify(isolation[key])} but the packet gives ${JSON.stringify(iso[key])}`);
  }
  return out;
}

/**
 * What a capture's ref to its packet (`packet_ref`, `isolation.visible_input_ref`) names when that is not the packet
 * the check re-derived, or null when it names it. `packetFile` is the packet file as the lock lists it (joined to the
 * lock's folder), `packetId` the packet's id (the ledger's `SESSION_OPENED` for a ledger-backed capture). The ref
 * names the packet when its last path segment (after the last `/`) is the locked file's name, exactly — `capture`
 * writes `--packet` as given, relative to the folder it ran in, which the check does not know, and Ghostlight writes
 * a repository path (`examples/responder-packets/<packet_id>.json`); the bytes are held by the lock's sha256 and the
 * ledger's pin — or when it is the `packet_id` itself. A padded ref (`"x.packet.json "`) names no file the lock lists.
 * A value that is not a string is left to the schema check (null). Pure.
 */
export function packetRefProblem(ref: unknown, packetFile: string, packetId: string): string | null {
  if (typeof ref !== 'string') return null;
  const name = ref.slice(ref.lastIndexOf('/') + 1);
  if (name === basename(packetFile) || ref === packetId) return null;
  return name === '' ? 'no file (it ends in "/")' : `the file ${name}`;
}

/** The lanes in which the responder or the coordinator looked lore up: their captures rest on receipts. */
const RESEARCH_MODES: readonly string[] = ['responder_scoped_repository_search', 'coordinator_scoped_retrieval'];

/**
 * `research_trace_empty` (error, pointer `/lore_access/research_trace`) when a capture states
 * `lore_access.research_trace_status: "runner_captured"` but its `lore_access.research_trace` holds no entry;
 * null otherwise. A runner_captured status is a claim that the runner recorded the lookups; with no entry
 * there is no receipt to check, and a capture with no consulted lore fails (seed 001: "No consulted refs
 * means the research-enabled response failed at the first hurdle"). `capture check` applies it whether or not
 * a lock lists the capture: dropping one entry of a backed trace stays allowed, dropping every one is not.
 */
export function emptyRunnerTrace(capture: unknown, file: string): Finding | null {
  if (!isJsonObject(capture) || !isJsonObject(capture.lore_access)) return null;
  const access = capture.lore_access;
  if (access.research_trace_status !== 'runner_captured') return null;
  if (Array.isArray(access.research_trace) && access.research_trace.length > 0) return null;
  return {
    code: 'research_trace_empty', severity: 'error', path: file, pointer: '/lore_access/research_trace',
    message: `lore_access.research_trace_status is "runner_captured" (mode ${JSON.stringify(access.mode)}) but lore_access.research_trace has no entry: a runner_captured claim with no receipt proves nothing, and a research-enabled response that consulted nothing fails (seed 001)`,
  };
}

/** The leakage flags a capture check can re-derive without the packet: those of hidden names, hidden text and raw state. */
const PACKETLESS_FLAGS = ['private_state_leak', 'author_only_leak', 'future_branch_leak', 'raw_state_soup'] as const;

/**
 * What a capture claims that only receipts could back, each named for messages (in this order): a research lane
 * (`lore_access.mode` `responder_scoped_repository_search` or `coordinator_scoped_retrieval`), a
 * `research_trace_status` other than `none` (`runner_captured` above all), `lore_access.research_trace` or
 * `parsed_output.research_trace` entries, `followed_refs`. [] for a packet-only capture
 * (`curated_excerpts_only`, status `none` or absent, no trace, nothing followed) — Ghostlight's own reviewed
 * captures: its `consulted_refs` name the packet's own visible parts (`packet_prompt_text`, its excerpts'
 * refs), which the packet shows, so no lookup stands behind them to re-derive.
 */
export function receiptClaims(capture: unknown): string[] {
  if (!isJsonObject(capture)) return [];
  const access = isJsonObject(capture.lore_access) ? capture.lore_access : {};
  const parsed = isJsonObject(capture.parsed_output) ? capture.parsed_output : {};
  const out: string[] = [];
  if (RESEARCH_MODES.includes(access.mode as string)) out.push(`lore_access.mode ${String(access.mode)}`);
  if (access.research_trace_status !== undefined && access.research_trace_status !== 'none') out.push(`research_trace_status ${JSON.stringify(access.research_trace_status)}`);
  if (Array.isArray(access.research_trace) && access.research_trace.length > 0) out.push(`${count(access.research_trace.length, 'lore_access.research_trace entry', 'lore_access.research_trace entries')}`);
  if (Array.isArray(parsed.research_trace) && parsed.research_trace.length > 0) out.push(`${count(parsed.research_trace.length, 'parsed_output.research_trace entry', 'parsed_output.research_trace entries')}`);
  if (Array.isArray(access.followed_refs) && access.followed_refs.length > 0) out.push(`${count(access.followed_refs.length, 'followed ref')}`);
  return out;
}

/**
 * What `capture check` holds a capture to when its review cannot be re-derived — no lock lists the capture,
 * or the lock that does lists no packet — so neither its receipts nor the packet it answered are known
 * (`why` says which, for the message). Findings (`path` = `file`):
 * - `capture_review_not_rederived` (error, pointer `/review_status`): when the capture claims receipts
 *   ({@link receiptClaims}: a research lane, a `runner_captured` or other research_trace_status, trace entries,
 *   followed refs). Without them its `review_status`, `failure_labels` and leakage flags are the file's say-so
 *   (seed 001: "a receipt that anyone could write by hand is worthless"), so the capture is never `verified`
 *   and never accepted (`--require-accepted`).
 * - `capture_review_unchecked` (warning, pointer `/review_status`): instead, when it claims none (a packet-only,
 *   `curated_excerpts_only` capture reviewed by a person, as Ghostlight's own): there is nothing to re-derive,
 *   so its `review_status` is the reviewer's own and is neither upheld nor refused — `capture check` reports it
 *   `review_unchecked`, never `verified`, and `--require-accepted` refuses its acceptance.
 * - `capture_review_mismatch` (error, pointer `/leakage_audit/<flag>`), either way: the leakage audit
 *   (`auditLeakage`) re-run over the capture's own `raw_output` (its JSON parse when it is JSON) with what is
 *   known without the packet — the capture's `isolation.hidden_context_refs` (the packet's
 *   `omitted_context_refs`, copied by `capture`) as the hidden refs, their notes' names and text from the vault,
 *   and raw-state markers and scores — sets a flag the capture leaves false. Only the flags of
 *   {@link PACKETLESS_FLAGS} and only in that direction: the packet's visible text (which a responder may
 *   repeat) and its prompt (parroting) are unknown here, so a flag the capture sets is kept, never called a
 *   mismatch.
 * - `claimed_not_read` (error, pointer of the entry): in a research lane (`responder_scoped_repository_search`,
 *   `coordinator_scoped_retrieval`) or under `research_trace_status: "runner_captured"`, every
 *   `lore_access.consulted_refs` / `followed_refs` entry: no receipt shows it read. A ref the packet's policy
 *   denies (hidden, future-era, outside the allowed prefixes) is among them: without receipts nothing is read.
 * Never throws; [] for a value that is not a capture object.
 */
export function unrederivedReview(capture: unknown, file: string, index: VaultIndex, why: string): Finding[] {
  if (!isJsonObject(capture)) return [];
  const out: Finding[] = [];
  const push = (code: string, pointer: string, message: string) => out.push({ code, severity: 'error', path: file, pointer, message });
  const claims = receiptClaims(capture);
  if (claims.length > 0) push('capture_review_not_rederived', '/review_status', `the review was not re-derived: ${why}, so the receipts and the packet it answered are unknown; review_status ${JSON.stringify(capture.review_status)}, its failure_labels and its leakage flags are the file's say-so`);
  else {
    out.push({ code: 'capture_review_unchecked', severity: 'warning', path: file, pointer: '/review_status', message: `review_status ${JSON.stringify(capture.review_status)} is the reviewer's own and was not checked: ${why}, and the capture claims no receipts (lore_access.mode ${JSON.stringify((isJsonObject(capture.lore_access) ? capture.lore_access : {}).mode)}, no research trace, nothing followed), so there is nothing to re-derive; its leakage was re-audited from raw_output with its isolation.hidden_context_refs and the vault` });
  }
  if (typeof capture.raw_output === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(capture.raw_output) as unknown;
    } catch {
      parsed = undefined;
    }
    const isolation = isJsonObject(capture.isolation) ? capture.isolation : {};
    const hidden = Array.isArray(isolation.hidden_context_refs) ? isolation.hidden_context_refs.filter((r): r is string => typeof r === 'string') : [];
    const { audit, hits } = auditLeakage({
      rawOutput: capture.raw_output, ...(parsed !== undefined ? { parsed } : {}), index,
      packet: { hidden_context_audit: { omitted_context_refs: hidden }, packet_prompt_text: '', visible_context: { local_context_prompt: '', source_excerpts: [] }, lore_access: {} },
    });
    const stored = isJsonObject(capture.leakage_audit) ? capture.leakage_audit : {};
    for (const flag of PACKETLESS_FLAGS) {
      if (!audit[flag] || stored[flag] === true) continue;
      const hit = hits.find((h) => h.flag === flag)!;
      push('capture_review_mismatch', `/leakage_audit/${flag}`, `leakage_audit.${flag} is ${JSON.stringify(stored[flag])} but capture check's own leakage audit (without the packet: the capture's isolation.hidden_context_refs and the vault) gives true: ${JSON.stringify(hit.matched)} — ${hit.source}`);
    }
  }
  const access = isJsonObject(capture.lore_access) ? capture.lore_access : {};
  if (RESEARCH_MODES.includes(access.mode as string) || access.research_trace_status === 'runner_captured') {
    for (const key of ['consulted_refs', 'followed_refs'] as const) {
      const refs = Array.isArray(access[key]) ? (access[key] as unknown[]) : [];
      refs.forEach((ref, i) => push('claimed_not_read', `/lore_access/${key}/${i}`, `lore_access.${key} names ${JSON.stringify(ref)}, which no receipt shows ${key === 'consulted_refs' ? 'served' : 'followed'}: ${why}`));
    }
  }
  return out;
}

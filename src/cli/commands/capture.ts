/**
 * `loretrace capture --packet <packet.json> --raw-output <file|-> [--ledger <ledger.jsonl> | --fragment <lore_access.json>]
 *   --lore <dir> --out <capture.json> --model-family <x> --reviewer <name> [--trust-key <public.pem>]... [--allow-invalid] [--force] [--json]`
 * and `loretrace capture check <captures or folders...> --lore <dir> [--trust-key <public.pem>]... [--integrity-only] [--json]`.
 *
 * Trusted keys (`--trust-key`, else `LORETRACE_TRUSTED_KEYS`, else the `trusted_keys` of a `--config` file outside
 * the vault; src/cli/keys.ts):
 * a ledger-backed capture reaches `accepted_as_draft` only when its ledger is signed by one of them; without
 * any it is `draft` (`ledger_authorship_not_checked`) and the output and the review notes say `authorship not
 * checked (no --trust-key)` (docs/RECEIPTS.md "Authorship"). `capture check` without any trusted key says
 * `UNAUTHENTICATED` for a capture whose checks pass on an unchecked ledger and exits 1, unless `--integrity-only`.
 *
 * Thin shell over `assembleCapture` (src/receipts/capture.ts): read the packet, the raw output (bytes, UTF-8),
 * the receipts, index the vault, assemble, then write the capture and `<name>.lock.json` beside it (both or
 * neither). Exit 0 written; 1 invalid input (raw output breaking its contract without --allow-invalid, invalid
 * packet or fragment, receipts of another packet); 2 usage (missing option, both --ledger and --fragment, an
 * existing or locked output, unreadable file).
 *
 * `check` runs, per capture: the capture schema and cross-field rules, `verifyCaptureTrace` (the count `capture` makes) on its research_trace
 * entries (when it has any) and `verifyLock` on the lock that lists it (`findLockFor`: its own
 * `<name>.lock.json`, else the lock of its folder that lists it as an output); the review re-derived from what
 * that lock lists (`recheckCaptureReview`), or — no lock, or a lock listing no packet — the findings of
 * `unrederivedReview` (never verified: its receipts are unknown; one that claims none is `review_unchecked`, exit 0);
 * `emptyRunnerTrace` on every capture. One report, totals with zeros (each capture counted once by its verdict), exit
 * 1 when any capture fails, (without `--integrity-only`) is only integrity-checked, or (with `--require-accepted`)
 * is not accepted — then its verdict is `failed`.
 */
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { assembleCapture, emptyRunnerTrace, recheckCaptureReview, unrederivedReview, verifyCaptureTrace } from '../../receipts/capture.js';
import type { AssembleCaptureResult, CaptureLoreSource, RecheckReviewInput } from '../../receipts/capture.js';
import type { Finding } from '../../errors.js';
import { LEAKAGE_FLAGS } from '../../receipts/leakage.js';
import { findLockFor, lockPathFor, lockedTrace, openingSession, verifyLock } from '../../receipts/lock.js';
import type { LockVerificationReport } from '../../receipts/lock.js';
import type { TraceVerificationReport, VerifyTraceOptions } from '../../receipts/verify-trace.js';
import type { LedgerHeadPin, TraceLedgerInput } from '../../receipts/trace-ledger.js';
import { parseJsonDocument, validateCapture } from '../../contracts/validate.js';
import type { ValidationReport } from '../../contracts/types.js';
import type { VaultIndex } from '../../types.js';
import { decodeUtf8Strict } from '../../contracts/json-input.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { MAX_LEDGER_BYTES, addVaultOptions, openIndex, readInputText, type VaultCliOptions } from '../vault-options.js';
import { documentText, expandInputs, guardOutputs, lockTarget, lockedPacketFile, readInputBytes, writeAllAtomic } from '../outputs.js';
import type { OutputTarget } from '../outputs.js';
import { reportWithErrors, shownPath } from './retrieve.js';
import { renderLockReport } from './lock.js';
import { problemsOutsideEntries, renderPacketFile } from './verify-trace.js';
import { authorshipLine } from './ledger.js';
import { addTrustKeyOption, integrityOnlyVerdict, trustedKeysFromOptions } from '../keys.js';
import type { IntegrityOnlyOption } from '../keys.js';
import { verificationVerdict } from '../../receipts/signing.js';
import type { TrustedKey, VerificationVerdict } from '../../receipts/signing.js';

interface CaptureOptions extends VaultCliOptions {
  packet: string;
  rawOutput: string;
  ledger?: string;
  fragment?: string;
  out: string;
  modelFamily: string;
  reviewer: string;
  allowInvalid?: boolean;
  force?: boolean;
  trustKey?: string[];
}

/**
 * How messages and the capture's review notes name the raw output: the path as given, or `<stdin>` for
 * `--raw-output -` (the name Node and most tools give standard input; a bare `-` reads as a stray dash).
 */
function rawOutputName(rawOutput: string): string {
  return rawOutput === '-' ? '<stdin>' : rawOutput;
}

/** Decode the raw output's bytes as UTF-8 exactly (a BOM is kept as U+FEFF); invalid UTF-8 is refused. */
function decodeRawOutput(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new LoretraceError('raw_output_not_utf8', `${file} is not UTF-8 text; the raw output is kept byte for byte in a JSON string, which holds only Unicode text`, { file, expected: 'the responder output as UTF-8 text' });
  }
}

/** The human summary of one assembled capture. */
function renderCapture(r: AssembleCaptureResult, written: string[]): string {
  const c = r.capture;
  const out: string[] = [];
  out.push(`capture: ${c.capture_id} (${c.lore_access.mode}) review_status ${c.review_status}`);
  const bytes = Buffer.byteLength(c.raw_output, 'utf8');
  // Say exactly what was checked (the other response_rules are prose no mechanical check reads).
  const a = r.action_label;
  const label = a === null ? '' : a.ok ? `, action_label ${JSON.stringify(a.label)} allowed` : `; action_label ${JSON.stringify(a.label)} is NOT one of the packet's allowed_action_labels (${a.allowed.join(', ')}): action_label_not_allowed`;
  out.push(`  raw output: ${bytes} bytes, ${r.output_failures.length === 0 ? `checked: one JSON object, every required field, the capture schema${label}` : `${plural(r.output_failures.length, 'contract failure')} (kept as written: --allow-invalid)${a !== null && !a.ok ? label : ''}`}`);
  for (const f of r.output_failures) out.push(`    ${f.pointer} [${f.rule}] ${f.message}`);
  const l = r.receipts.ledger;
  if (l) {
    out.push(`  receipts: ledger ${l.file} — ${l.valid ? 'verifies' : 'does NOT verify'}, ${plural(l.records, 'record')}, ${l.closed ? 'closed' : 'NOT closed'}; head ${l.head ?? 'none'}`);
    if (r.ledger) out.push(`  ${authorshipLine(r.ledger.authorship)}`);
  } else if (r.trace) out.push(`  receipts: capture fragment (not ledger-backed)`);
  else out.push('  receipts: none (curated_excerpts_only: no lore research)');
  const f = r.refusals;
  if (f && f.refused > 0) out.push(`  refused tool calls: ${f.refused} of ${f.calls} (${f.codes.map(([c, n]) => `${c} ${n}`).join(', ')})`);
  if (r.trace) {
    const t = r.trace;
    out.push(`  research_trace: ${plural(t.runner_captured.checked, 'runner_captured entry', 'runner_captured entries')}, ${t.runner_captured.failed} failed (${Object.entries(t.totals).map(([k, v]) => `${k} ${v}`).join(', ')})`);
  }
  const flags = LEAKAGE_FLAGS.filter((f) => c.leakage_audit[f]);
  out.push(`  leakage (automated first pass): ${flags.length ? flags.join(', ') : 'no flag set'}`);
  out.push(`  failure_labels: ${c.coordinator_review.failure_labels.length ? c.coordinator_review.failure_labels.join(', ') : 'none'}`);
  for (const f of r.findings) out.push(`  ${f.severity} ${f.code}: ${f.message}`);
  out.push(`  validates: ${r.valid ? 'yes' : `NO (${plural(r.validation.errors.length, 'error')})`} (responder-output schema + cross-field rules)`);
  for (const w of written) out.push(`wrote ${w}`);
  return out.join('\n') + '\n';
}

/** The `capture` action: read, assemble, lock, write. */
async function runCapture(ctx: CliContext, opts: CaptureOptions): Promise<number> {
  if (opts.ledger !== undefined && opts.fragment !== undefined) {
    throw new LoretraceError('usage', 'give --ledger or --fragment, not both: the capture\'s receipts come from one source', {}, 2);
  }
  const outAbs = resolve(ctx.cwd, opts.out);
  const lockAbs = lockPathFor(outAbs);
  const inputs = [opts.packet, opts.ledger, opts.fragment, opts.rawOutput === '-' ? undefined : opts.rawOutput].filter((f): f is string => f !== undefined);
  for (const f of inputs) {
    if (resolve(ctx.cwd, f) === outAbs || resolve(ctx.cwd, f) === lockAbs) throw new LoretraceError('usage', `--out ${opts.out} names the input ${f}; expected a new file for the capture (nothing written)`, { file: opts.out }, 2);
  }
  await guardOutputs([{ abs: outAbs, option: '--out' }, { abs: lockAbs, option: 'the lock file' }], opts.force === true);
  const trustedKeys = await trustedKeysFromOptions(ctx, opts);
  const packetIn = await readInputBytes(ctx, opts.packet, 'JSON responder packet');
  // Strict UTF-8 as every input (a lossy decode would turn a bad byte into U+FFFD and call it "not JSON").
  const packetText = decodeUtf8Strict(packetIn.bytes, opts.packet);
  const packet = parseJsonDocument(packetText, opts.packet);
  const rawName = rawOutputName(opts.rawOutput);
  const rawIn = opts.rawOutput === '-' ? { abs: null, bytes: Buffer.from(await ctx.readStdin()) } : await readInputBytes(ctx, opts.rawOutput, 'responder raw output');
  const rawOutput = decodeRawOutput(rawIn.bytes, rawName);
  let source: CaptureLoreSource | undefined;
  let sourceIn: { abs: string; bytes: Buffer } | undefined;
  if (opts.ledger !== undefined) {
    sourceIn = await readInputBytes(ctx, opts.ledger, 'ledger (JSONL)', MAX_LEDGER_BYTES);
    source = { kind: 'ledger', text: decodeUtf8Strict(sourceIn.bytes, opts.ledger), file: opts.ledger };
  } else if (opts.fragment !== undefined) {
    sourceIn = await readInputBytes(ctx, opts.fragment, 'JSON capture fragment');
    source = { kind: 'fragment', value: parseJsonDocument(decodeUtf8Strict(sourceIn.bytes, opts.fragment), opts.fragment), file: opts.fragment };
  }
  const index = await openIndex(ctx, opts);
  const result = await assembleCapture({
    index, packet, packetText, packetRef: opts.packet, rawOutput, rawOutputFile: rawName,
    ...(source ? { source } : {}), modelFamily: opts.modelFamily, reviewer: opts.reviewer, allowInvalid: opts.allowInvalid === true, trustedKeys,
  });
  const captureTarget: OutputTarget = { abs: outAbs, text: documentText(result.capture), option: '--out' };
  const lock = lockTarget(outAbs, {
    status: result.valid ? 'ready_for_next_role' : 'draft',
    command: 'capture',
    files: [
      { abs: outAbs, role: 'output', content: captureTarget.text },
      { abs: packetIn.abs, role: 'input', content: packetIn.bytes },
      ...(rawIn.abs !== null ? [{ abs: rawIn.abs, role: 'input' as const, content: rawIn.bytes }] : []),
      ...(sourceIn ? [{ abs: sourceIn.abs, role: 'input' as const, content: sourceIn.bytes }] : []),
    ],
    // A ledger-backed capture's run is the ledger's session: the lock records the snapshot its SESSION_OPENED
    // pins (lock verify holds it to that record), so a vault changed since the session is drift.
    snapshot: { namespace: index.namespace, snapshot_id: result.receipts.ledger && sourceIn && result.receipts.recorded_snapshot_id !== null ? result.receipts.recorded_snapshot_id : index.snapshot_id },
    policyReceipt: result.receipts.policy_receipt,
    ledger: result.receipts.ledger && sourceIn ? {
      abs: sourceIn.abs, head: result.receipts.ledger.head, records: result.receipts.ledger.records, closed: result.receipts.ledger.closed, signer_key_id: result.receipts.ledger.signer_key_id,
    } : null,
    rawOutputSha256: result.receipts.raw_output_sha256,
    traceBindings: result.receipts.trace_bindings,
  });
  await writeAllAtomic([captureTarget, lock]);
  const written = [shownPath(ctx, outAbs), shownPath(ctx, lock.abs)];
  if (opts.json) {
    printJson(ctx, {
      ok: true, capture_id: result.capture.capture_id, review_status: result.capture.review_status, valid: result.valid,
      output_failures: result.output_failures, failure_labels: result.capture.coordinator_review.failure_labels,
      leakage: Object.fromEntries(LEAKAGE_FLAGS.map((f) => [f, result.capture.leakage_audit[f]])),
      trace_totals: result.trace?.totals ?? null, findings: result.findings, validation_errors: result.validation.errors, written,
    });
  } else ctx.stdout(renderCapture(result, written));
  return 0;
}

/** One capture's verdict in `capture check`. */
export interface CaptureCheck {
  file: string;
  validation: ValidationReport | null;
  /** Null when the capture has no trace entries (a packet_only capture) or is not JSON. */
  trace: TraceVerificationReport | null;
  /** Null when no lock lists it (`findLockFor`). */
  lock: LockVerificationReport | null;
  /** Why the file could not be checked at all (not JSON, not readable); null otherwise. */
  error: string | null;
  /**
   * The code of {@link error}: `file_not_found` (missing, a folder, or a FIFO, device or socket — refused on
   * the open handle, never read), `input_too_large`, `not_utf8`, `bad_json`, `duplicate_key`, `bad_lock`, …;
   * null when there is no error (or for an error without a code).
   */
  error_code: string | null;
  /**
   * The capture's verdict, one per capture (the totals count each capture under exactly one of `ok`,
   * `integrity_only`, `review_unchecked`, `failed`): `failed` when any check failed — and, under
   * `--require-accepted`, when {@link not_accepted} is set; `integrity_only` when every check passed but its
   * trace or lock rests on a ledger whose authorship was not checked (no trusted key); `review_unchecked` when
   * every check passed but the capture claims no receipts and no lock lists its packet, so its `review_status`
   * is the reviewer's own (`capture_review_unchecked` in {@link review_unchecked}); else `verified`.
   */
  verdict: CaptureVerdict;
  /** True only when `verdict` is `verified`. */
  ok: boolean;
  /**
   * Why the capture is a draft, not ready for the next role (empty when it is not): its
   * `review_status: draft`, each of its `coordinator_review.failure_labels`, an unclosed ledger. A draft
   * that passes every check is `ok (draft: …)`, exit 0: the checks hold, the capture says it is not final.
   */
  draft: string[];
  /**
   * What the capture claims beyond what the check derives, every one an error: `research_trace_empty`
   * (`emptyRunnerTrace`: runner_captured with no trace entry; its trace then carries no `no_runner_captured_entries`
   * for the same cause), then the review re-derived from the receipts the
   * lock lists (`recheckCaptureReview`: one `capture_review_mismatch` per stored field that claims more than the
   * receipts and the re-run leakage audit give — `/review_status`, `/coordinator_review/failure_labels`,
   * `/leakage_audit/<flag>`, … —, `claimed_not_read`, `capture_id_mismatch`, `packet_ref_mismatch`, or `capture_review_not_rederived`,
   * `capture_packet_not_locked`, `capture_packet_mismatch`), or, when no lock lists the capture or its lock
   * lists no packet, `unrederivedReview`'s findings (`capture_review_not_rederived` always). Empty only when the
   * review was re-derived and matches (or the packet drifted under its lock, a failure reported as `packet_file`).
   */
  review: Finding[];
  /**
   * Why its `review_status` was neither upheld nor refused (a warning, not a failure), or null:
   * `capture_review_unchecked` — it claims no receipts and no lock lists its packet, so the status is the
   * reviewer's own (`unrederivedReview`); `capture_review_authorship_not_checked` — it is accepted over a ledger
   * and the check has no trusted key (`recheckCaptureReview`: pass `--trust-key`).
   */
  review_unchecked: Finding | null;
  /** {@link notAcceptedReason} of the capture, its {@link review} and {@link review_unchecked}: what `--require-accepted` fails it for, or null. */
  not_accepted: string | null;
}

/**
 * A `capture check` verdict: the three of src/receipts/signing.ts `VerificationVerdict`, and `review_unchecked`
 * — every check passed, nothing claims a receipt, and the review is a person's that the check could not
 * re-derive (neither `verified` nor a failure; exit 0 unless `--require-accepted`).
 */
export type CaptureVerdict = VerificationVerdict | 'review_unchecked';

/**
 * Why `capture check --require-accepted` refuses a capture, or null when it passes that gate: its
 * `review_status` is neither `accepted` nor `accepted_as_draft` (seed 001: only a reviewed capture moves on),
 * named with its `coordinator_review.failure_labels` — e.g. `not accepted: review_status draft (failure_labels
 * author_only_leak, raw_state_soup)`; or it says it is accepted but `review` (the check's findings on what it
 * claims, {@link CaptureCheck.review}) is not empty — the status was not re-derived or claims more than the
 * receipts give — named with the distinct codes in order: `not accepted: review_status accepted_as_draft is not
 * upheld by the receipts (capture_review_not_rederived, claimed_not_read)`; or the check could neither uphold nor
 * refuse it (`unchecked`, {@link CaptureCheck.review_unchecked}: the reviewer's own status with no receipts to
 * re-derive, or authorship not checked for want of a trusted key): `not accepted: review_status accepted_as_draft
 * was not checked (capture_review_unchecked): it is the reviewer's own, with no receipts to re-derive`. A status typed
 * by hand is not a receipt. A capture that is not JSON has no status: `review_status missing`.
 */
export function notAcceptedReason(doc: unknown, review: readonly Finding[] = [], unchecked: Finding | null = null): string | null {
  const d = doc as { review_status?: unknown; coordinator_review?: { failure_labels?: unknown } } | null;
  const status = d?.review_status;
  if (status === 'accepted' || status === 'accepted_as_draft') {
    if (review.length > 0) return `not accepted: review_status ${status} is not upheld by the receipts (${[...new Set(review.map((f) => f.code))].join(', ')})`;
    if (unchecked === null) return null;
    return `not accepted: review_status ${status} was not checked (${unchecked.code}): ${unchecked.code === 'capture_review_authorship_not_checked' ? 'pass --trust-key to check the ledger\'s authorship' : 'it is the reviewer\'s own, with no receipts to re-derive'}`;
  }
  const labels = Array.isArray(d?.coordinator_review?.failure_labels) ? (d.coordinator_review.failure_labels as unknown[]).map(String) : [];
  const named = typeof status === 'string' ? `review_status ${status}` : 'review_status missing';
  return `not accepted: ${named} (${labels.length > 0 ? `failure_labels ${labels.join(', ')}` : 'no failure_labels'})`;
}

/** The reasons of {@link CaptureCheck.draft}. */
function draftReasons(doc: unknown, trace: TraceVerificationReport | null): string[] {
  const d = doc as { review_status?: unknown; coordinator_review?: { failure_labels?: unknown } };
  const out: string[] = [];
  if (d?.review_status === 'draft') out.push('review_status draft');
  const labels = d?.coordinator_review?.failure_labels;
  if (Array.isArray(labels)) for (const l of labels) out.push(`failure_label ${String(l)}`);
  if (trace?.draft) out.push('ledger not closed');
  return out;
}

/** What a capture's lock hands `verifyTrace`: the ledger, its pinned head, the policy receipt, the packet's sha256 and the packet file re-hashed. */
interface LockedReceipts {
  ledgers: TraceLedgerInput[];
  pins: LedgerHeadPin[];
  policyReceipt?: { pointer: string; value: unknown };
  packet?: { packet_id: string; packet_sha256: string | null; source: string };
  packetFile?: NonNullable<VerifyTraceOptions['packetFile']>;
}

/**
 * What the capture's lock holds the capture to, read as `verify-trace` reads it (`lockedTrace`,
 * src/receipts/lock.ts): the ledger it names (`ledger.path`, relative to the lock's folder) as a
 * verify-trace ledger input — the receipts a ledger-backed capture was assembled from — and the head the
 * lock pins, so a ledger cut at a record boundary since the capture fails as `ledger_broken` (a capture
 * cannot carry the head itself: Ghostlight's capture schema is closed); the lock's `policy_receipt` (a
 * capture carries none); and the capture's packet (the `files` input named like its `packet_ref`): the
 * backing ledger's SESSION_OPENED must pin the sha256 the lock records, and the file is re-hashed
 * (`packet_file`: `unchanged`, `packet_changed`, `packet_missing`). Empty when there is no readable lock;
 * without a readable ledger its entries stay unbacked (`lock verify` reports the missing file).
 */
async function lockedLedger(ctx: CliContext, lockFile: string, doc: unknown): Promise<LockedReceipts> {
  return (await lockedInputs(ctx, lockFile, doc, lockFile)).receipts;
}

/**
 * What the capture's lock lists, read once: the receipts `verifyTrace` holds the capture to
 * ({@link lockedLedger}) and the inputs its review is re-derived from (`recheckCaptureReview`,
 * src/receipts/capture.ts): the packet's text, and the ledger the lock names — else, for a capture assembled
 * from a fragment, the one `files` input that is neither the packet, the raw output (its sha256 is
 * `raw_output_sha256`) nor a ledger. `recheck` is null when the lock cannot be read or lists no packet: the
 * review is then not re-derived, and the other checks say why.
 */
async function lockedInputs(ctx: CliContext, lockFile: string, doc: unknown, file: string): Promise<{ receipts: LockedReceipts; recheck: Omit<RecheckReviewInput, 'index' | 'trustedKeys'> | null; problem: Finding | null; noPacket?: true }> {
  let locked: ReturnType<typeof lockedTrace>;
  let lockDoc: { files?: unknown; raw_output_sha256?: unknown };
  let session: Record<string, unknown> | null = null;
  try {
    // Through the CLI's one input reader: a lock or ledger that is now a FIFO or device is refused on the open
    // handle, never read (a plain readFile would block on a FIFO forever); `lock verify` below reports it.
    lockDoc = JSON.parse(await readInputText(ctx, lockFile, 'JSON lock')) as typeof lockDoc;
    // The packet is the one the ledger's SESSION_OPENED pins (never a name the capture could respell).
    const ledger = lockedTrace(lockDoc, lockFile, doc).ledger;
    if (ledger !== null) session = await readInputText(ctx, ledger, 'ledger (JSONL)', MAX_LEDGER_BYTES).then(openingSession, () => null);
    locked = lockedTrace(lockDoc, lockFile, doc, session);
  } catch {
    return { receipts: { ledgers: [], pins: [] }, recheck: null, problem: null };
  }
  const receipts = await lockedReceipts(ctx, lockFile, locked);
  const fail = (code: string, message: string): Finding => ({ code, severity: 'error', path: file, pointer: '/packet_ref', message });
  if (locked.packetProblem) return { receipts, recheck: null, problem: fail(locked.packetProblem.code, locked.packetProblem.message) };
  if (!locked.packet) return { receipts, recheck: null, problem: null, noPacket: true };
  try {
    const packetText = await readInputText(ctx, locked.packet.file, 'locked packet (JSON)');
    const sha = createHash('sha256').update(packetText, 'utf8').digest('hex');
    const pinned = typeof session?.['packet_sha256'] === 'string' ? session['packet_sha256'] : null;
    // A ledger-backed capture's review is always re-derived: a packet that is not the pinned bytes is a
    // failure of its own, never a reason to skip. Otherwise a packet no longer the locked bytes is already the
    // capture's failure (packet_file packet_changed, lock drift); re-deriving would only repeat it.
    if (pinned !== null && sha !== pinned) return { receipts, recheck: null, problem: fail('capture_packet_mismatch', `the packet ${locked.packet.file} has sha256 ${sha}, but the ledger ${locked.ledger} pins sha256 ${pinned}: the review cannot be re-derived against the packet the run answered`) };
    if (sha !== locked.packet.sha256) return { receipts, recheck: null, problem: null };
    const recheck: Omit<RecheckReviewInput, 'index' | 'trustedKeys'> = { packetText, packetFile: locked.packet.file };
    if (receipts.ledgers.length > 0) recheck.source = { kind: 'ledger', text: receipts.ledgers[0]!.text, file: locked.ledger ?? lockFile };
    else {
      const fragment = lockedFragment(lockDoc, lockFile, locked.packet.file);
      if (fragment !== null) recheck.source = { kind: 'fragment', value: parseJsonDocument(await readInputText(ctx, fragment, 'JSON capture fragment'), fragment), file: fragment };
    }
    return { receipts, recheck, problem: null };
  } catch (e) {
    return { receipts, recheck: null, problem: { code: pinsPacket(session) ? 'capture_packet_not_locked' : 'capture_review_not_rederived', severity: 'error', path: file, pointer: '', message: `the review could not be re-derived: ${(e as Error).message}${codeOf(e) ? ` [${codeOf(e)}]` : ''}` } };
  }
}

/** True when a ledger session pins a packet sha256. */
function pinsPacket(session: Record<string, unknown> | null): boolean {
  return typeof session?.['packet_sha256'] === 'string';
}

/** The fragment input of a capture lock: the one `files` input that is not the packet, the raw output or a `.jsonl` ledger; null otherwise. */
function lockedFragment(lock: { files?: unknown; raw_output_sha256?: unknown }, lockFile: string, packetFile: string): string | null {
  const rows = (Array.isArray(lock.files) ? lock.files : []) as { path?: unknown; sha256?: unknown; role?: unknown }[];
  const hits = rows.filter((f) => f.role === 'input' && typeof f.path === 'string' && join(dirname(lockFile), f.path) !== packetFile
    && f.sha256 !== lock.raw_output_sha256 && !f.path.endsWith('.jsonl'));
  return hits.length === 1 ? join(dirname(lockFile), hits[0]!.path as string) : null;
}

/** The verify-trace half of {@link lockedInputs}. */
async function lockedReceipts(ctx: CliContext, lockFile: string, locked: ReturnType<typeof lockedTrace>): Promise<LockedReceipts> {
  const out: LockedReceipts = { ledgers: [], pins: [] };
  if (locked.policyReceipt) out.policyReceipt = locked.policyReceipt;
  if (locked.packet) {
    out.packet = { packet_id: locked.packet.packet_id, packet_sha256: locked.packet.sha256, source: locked.packet.source };
    out.packetFile = await lockedPacketFile(ctx, locked.packet, lockFile);
  }
  if (locked.ledger === null) return out;
  try {
    out.ledgers = [{ file: resolve(ctx.cwd, locked.ledger), text: await readInputText(ctx, locked.ledger, 'ledger (JSONL)', MAX_LEDGER_BYTES) }];
    if (locked.head !== null) out.pins = [{ head: locked.head, source: `lock ${lockFile}` }];
  } catch {
    // An unreadable ledger backs nothing; `lock verify` names it.
  }
  return out;
}

/** The code of a LoretraceError, else null. */
function codeOf(e: unknown): string | null {
  return isLoretraceError(e) ? e.code : null;
}

/** Check one capture file (see the file comment). Unreadable or non-JSON files are reported, not thrown. */
async function checkOne(ctx: CliContext, file: string, index: VaultIndex, trustedKeys: readonly TrustedKey[]): Promise<CaptureCheck> {
  let doc: unknown;
  try {
    doc = parseJsonDocument(await readInputText(ctx, file, 'JSON capture'), file);
  } catch (e) {
    return { file, validation: null, trace: null, lock: null, error: (e as Error).message, error_code: codeOf(e), verdict: 'failed', ok: false, draft: [], review: [], review_unchecked: null, not_accepted: notAcceptedReason(undefined) };
  }
  const validation = validateCapture(doc, { file });
  const d = doc as { lore_access?: { research_trace?: unknown[] }; parsed_output?: { research_trace?: unknown[] } };
  const entries = (Array.isArray(d?.lore_access?.research_trace) ? d.lore_access.research_trace.length : 0) + (Array.isArray(d?.parsed_output?.research_trace) ? d.parsed_output.research_trace.length : 0);
  let trace: TraceVerificationReport | null = null;
  let error: string | null = null;
  let errorCode: string | null = null;
  let lockFile: string | null;
  try {
    lockFile = await findLockFor(file, ctx.cwd);
  } catch (e) {
    return { file, validation, trace: null, lock: null, error: (e as Error).message, error_code: codeOf(e), verdict: 'failed', ok: false, draft: [], review: [], review_unchecked: null, not_accepted: notAcceptedReason(doc) };
  }
  const fromLock = lockFile === null ? null : await lockedInputs(ctx, lockFile, doc, file);
  // A capture no lock lists, or whose lock lists no packet, has no known receipts: its review is not
  // re-derived, so it is never verified, and what can be checked without the packet is (leakage, refs).
  const unknown = lockFile === null ? `no lock lists ${file} (neither ${basename(lockPathFor(file))} nor a *.lock.json of its folder)`
    : fromLock?.noPacket ? `its lock ${shownPath(ctx, lockFile)} lists no packet` : null;
  const empty = emptyRunnerTrace(doc, file);
  if (entries > 0) {
    try {
      // An emptied runner trace is reported once, as research_trace_empty (in review), not again by the trace.
      trace = await verifyCaptureTrace(index, doc, file, { ...(fromLock?.receipts ?? {}), trustedKeys, emptyRunnerTraceReported: empty !== null });
    } catch (e) {
      error = (e as Error).message;
      errorCode = codeOf(e);
    }
  }
  // The review is the receipts' verdict, not the file's say-so: re-derive it from what the lock lists.
  const found: Finding[] = [
    ...(empty ? [empty] : []),
    ...(fromLock?.recheck ? await recheckCaptureReview(doc, file, { ...fromLock.recheck, index, trustedKeys })
      : fromLock?.problem ? [fromLock.problem] : unknown !== null ? unrederivedReview(doc, file, index, unknown) : []),
  ];
  // Errors are what the capture claims beyond the check; a warning says what the check could not decide.
  const review = found.filter((f) => f.severity === 'error');
  const unchecked = found.find((f) => f.severity !== 'error') ?? null;
  let lock: LockVerificationReport | null = null;
  if (lockFile !== null) {
    try {
      lock = await verifyLock(await readInputText(ctx, lockFile, 'JSON lock'), lockFile, { currentSnapshot: index.snapshot_id, cwd: ctx.cwd, trustedKeys });
    } catch (e) {
      if (error === null) {
        error = (e as Error).message;
        errorCode = codeOf(e);
      }
    }
  }
  const integrityOk = error === null && validation.valid && (trace === null || trace.integrity_ok) && (lock === null || lock.integrity_ok) && review.length === 0;
  const checked = verificationVerdict(integrityOk, trace?.verdict === 'integrity_only' || lock?.verdict === 'integrity_only');
  // Never vouched for: a review the check could not re-derive is not `verified`, even when nothing failed.
  const verdict: CaptureVerdict = checked === 'verified' && unchecked?.code === 'capture_review_unchecked' ? 'review_unchecked' : checked;
  return { file, validation, trace, lock, error, error_code: errorCode, verdict, ok: verdict === 'verified', draft: draftReasons(doc, trace), review, review_unchecked: unchecked, not_accepted: notAcceptedReason(doc, review, unchecked) };
}

/**
 * The trace line of one capture: runner_captured entry counts, then — kept apart from them — failing entries of
 * other origins and session-level problems (`problemsOutsideEntries`, as `verify-trace` words them), then the
 * totals of every disposition.
 */
function traceSummary(t: TraceVerificationReport): string {
  const { entries, session } = problemsOutsideEntries(t);
  const parts = [`${plural(t.runner_captured.checked, 'runner_captured entry', 'runner_captured entries')}: ${t.runner_captured.ledger_backed} ledger-backed and verified, ${t.runner_captured.failed} failed`];
  if (entries.length > 0) parts.push(`other entries: ${entries.join(', ')}`);
  if (session.length > 0) parts.push(`session: ${session.join(', ')}`);
  return `${parts.join('; ')} (${Object.entries(t.totals).map(([k, v]) => `${k} ${v}`).join(', ')})`;
}

/** The human form of a `capture check` report. */
function renderChecks(checks: CaptureCheck[], totals: Record<string, number>, integrityOnly: boolean, requireAccepted: boolean): string {
  const out: string[] = [];
  for (const c of checks) {
    const verdict = c.verdict === 'verified' ? 'ok' : c.verdict === 'integrity_only' ? integrityOnlyVerdict(integrityOnly)
      : c.verdict === 'review_unchecked' ? 'REVIEW NOT CHECKED — every check passed; it claims no receipts and no lock lists its packet, so its review_status is the reviewer\'s own' : 'FAILED';
    out.push(`${c.file}: ${verdict}${c.draft.length > 0 ? ` (draft: ${c.draft.join(', ')})` : ''}`);
    if (c.error) out.push(`  error: ${c.error}${c.error_code ? ` [${c.error_code}]` : ''}`);
    if (requireAccepted && c.not_accepted !== null) out.push(`  ${c.not_accepted} — FAILED (--require-accepted)`);
    if (c.validation) {
      out.push(`  validation: ${c.validation.valid ? 'valid' : `invalid (${plural(c.validation.errors.length, 'error')})`}`);
      for (const e of c.validation.errors) out.push(`    ${e.pointer || '/'} [${e.rule}] ${e.message}`);
    }
    out.push(c.trace ? `  trace: ${traceSummary(c.trace)}` : '  trace: no research_trace entries');
    if (c.trace?.packet_file) out.push(renderPacketFile(c.trace.packet_file));
    for (const f of c.review) out.push(`  review: ${f.path ?? c.file} ${f.pointer || '/'}: ${f.message} [${f.code}]`);
    if (c.review_unchecked) out.push(`  review: not checked — ${c.review_unchecked.message} [${c.review_unchecked.code}]`);
    if (c.trace && c.trace.ledgers.length > 0) {
      out.push(c.trace.authorship.checked
        ? `  authorship: ${c.trace.ledgers.map((l) => `${l.authorship.status === 'trusted' ? 'signed by trusted key' : l.disposition} ${l.authorship.key_id ?? '(unsigned)'}`).join(', ')}`
        : `  ${c.trace.authorship.note}`);
    }
    if (c.lock) out.push(...renderLockReport(c.lock, integrityOnly).trimEnd().split('\n').map((l) => `  ${l}`));
    else out.push('  lock: none beside it');
  }
  out.push(`totals: ${Object.entries(totals).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return out.join('\n') + '\n';
}

/** Register `capture` (and `capture check`) on the program. */
export function register(program: Command, ctx: CliContext): void {
  const capture: Command = addVaultOptions(program
    .command('capture')
    .description('assemble the Ghostlight responder output capture of a responder turn from the packet, the raw output and the run\'s receipts; write it with a lock file'), { required: false })
    .option('--packet <packet.json>', 'the responder packet the responder answered (required)')
    .option('--raw-output <file>', 'the responder\'s exact raw output (a file, or - for stdin) (required)')
    .option('--ledger <ledger.jsonl>', 'the hash-chained ledger of the run: the serve session\'s (responder lane) or the one retrieve wrote beside the packet (coordinator lane)')
    .option('--fragment <lore_access.json>', 'a capture fragment (retrieve --capture-out, ledger export); not ledger-backed, so the capture stays draft')
    .option('--out <capture.json>', 'where to write the capture; its lock goes to <name>.lock.json beside it (required)')
    .option('--model-family <name>', 'isolation.worker_model_family: the model family that produced the raw output (required)')
    .option('--reviewer <name>', 'coordinator_review.reviewer (required)')
    .option('--allow-invalid', 'write a draft capture with a failure label when the raw output breaks its contract, instead of refusing')
    .option('--force', 'replace an existing output that no lock lists (a file another tool wrote, or one whose lock was deleted); never a rerun\'s locked output: use a new --out')
    .option('--json', 'print a JSON summary instead of text');
  addTrustKeyOption(capture).action(
      action(ctx, async (opts: Partial<CaptureOptions> & VaultCliOptions) => {
        try {
          for (const [key, flag] of [['lore', '--lore <dir>'], ['packet', '--packet <packet.json>'], ['rawOutput', '--raw-output <file>'], ['out', '--out <capture.json>'], ['modelFamily', '--model-family <name>'], ['reviewer', '--reviewer <name>']] as const) {
            if (opts[key] === undefined) throw new LoretraceError('usage', `required option '${flag}' not specified`, {}, 2);
          }
          return await runCapture(ctx, opts as CaptureOptions);
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
  addVaultOptions(capture
    .command('check')
    .description('check captures in one report: schema and cross-field rules, research_trace against the vault, and the lock beside each')
    .argument('<paths...>', 'capture files, or folders searched for *.capture.json'), { required: false })
    .option('--json', 'print { captures, totals } as JSON')
    .option('--integrity-only', 'accept integrity-only checking when no trusted key is given (exit 0; the verdict still says authorship was not checked)')
    .option('--require-accepted', 'also exit 1 for a capture whose review_status is not accepted or accepted_as_draft (a draft that passes every check is exit 0 without it); names its status and failure_labels')
    .option('--trust-key <public.pem>', 'trusted runner public key (repeatable; default: LORETRACE_TRUSTED_KEYS)', (v: string, p: string[]) => [...p, v], [] as string[])
    .action(
      action(ctx, async (paths: string[], own: Partial<VaultCliOptions> & IntegrityOnlyOption & { trustKey?: string[]; requireAccepted?: boolean }) => {
        // commander hands options written after `check` that `capture` also defines (--lore, --json, --trust-key, …) to `capture`.
        const parent = capture.opts() as { trustKey?: string[] };
        const opts = { ...parent, ...own, trustKey: [...(parent.trustKey ?? []), ...(own.trustKey ?? [])] } as Partial<VaultCliOptions> & IntegrityOnlyOption & { trustKey: string[]; requireAccepted?: boolean };
        const requireAccepted = opts.requireAccepted === true;
        if (opts.lore === undefined) throw new LoretraceError('usage', "required option '--lore <dir>' not specified", {}, 2);
        const files = await expandInputs(ctx, paths, '.capture.json');
        if (files.length === 0) throw new LoretraceError('usage', `no capture found in ${paths.join(', ')} (folders are searched for *.capture.json)`, {}, 2);
        const trustedKeys = await trustedKeysFromOptions(ctx, opts);
        const index = await openIndex(ctx, opts as VaultCliOptions);
        const checks: CaptureCheck[] = [];
        for (const f of files) {
          const c = await checkOne(ctx, f, index, trustedKeys);
          // Under the gate a capture it refuses is failed, one verdict counted once (never `ok` and FAILED at once).
          checks.push(requireAccepted && c.not_accepted !== null ? { ...c, verdict: 'failed', ok: false } : c);
        }
        const totals = {
          captures: checks.length, ok: checks.filter((c) => c.verdict === 'verified').length,
          integrity_only: checks.filter((c) => c.verdict === 'integrity_only').length, review_unchecked: checks.filter((c) => c.verdict === 'review_unchecked').length,
          failed: checks.filter((c) => c.verdict === 'failed').length,
          invalid: checks.filter((c) => c.validation !== null && !c.validation.valid).length,
          trace_failed: checks.filter((c) => c.trace !== null && !c.trace.integrity_ok).length,
          lock_drift: checks.filter((c) => c.lock !== null && !c.lock.integrity_ok).length,
          review_mismatch: checks.filter((c) => c.review.length > 0).length,
          unreadable: checks.filter((c) => c.validation === null).length,
          // Counted only under the option it gates, so the default report keeps its documented shape.
          ...(requireAccepted ? { not_accepted: checks.filter((c) => c.not_accepted !== null).length } : {}),
        };
        if (opts.json) printJson(ctx, { captures: checks, totals });
        else ctx.stdout(renderChecks(checks, totals, opts.integrityOnly === true, requireAccepted));
        return totals.failed > 0 || (totals.integrity_only > 0 && opts.integrityOnly !== true) || (totals.not_accepted ?? 0) > 0 ? 1 : 0;
      }),
    );
}

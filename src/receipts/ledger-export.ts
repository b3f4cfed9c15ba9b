/**
 * From a verified ledger to the runner_captured receipts of a capture (docs/PROXY.md "ledger export",
 * docs/RECEIPTS.md): the capture fragment, the `trace_id` that ties each entry to the record that served
 * it, and the full binding (record hash, ledger head, snapshot id) a lock file records.
 *
 * `trace_id` form (no new fields in Ghostlight's closed `research_trace_entry`):
 * `<ledger_id>:<seq>:<record_hash prefix>` — the ledger's id, the seq of the record that served the text,
 * and the first {@link TRACE_HASH_PREFIX} hex digits of that record's `record_hash`. A read that served
 * pieces of several chunks gives one entry per piece; piece n > 0 is written `<ledger_id>:<seq>.<n>:<prefix>`.
 * Example: `lt-3f0c9a1b2c4d5e6f:2:81c0d1a7e9b2`.
 */
import { LoretraceError } from '../errors.js';
import type { VaultIndex, VaultPath } from '../types.js';
import { notePathOnDisk } from '../indexer/lookup.js';
import { traceNotePath } from '../excerpts/trace.js';
import type { ResearchTraceEntry } from '../contracts/types.js';
import { readIndexedLines } from '../proxy/safe-read.js';
import { sliceLines } from '../notes/lines.js';
import { readVerifiedLedger } from './ledger.js';
import { sha256Hex } from '../vault/hash.js';
import type { LedgerView, ViewedCall, ViewedRange } from './ledger-record.js';

/** Hex digits of the record_hash kept in a trace_id. */
export const TRACE_HASH_PREFIX = 12;

/** The parts of a ledger-bound trace_id. */
export interface TraceIdParts {
  ledger_id: string;
  /** seq of the record that served the text. */
  seq: number;
  /** Which served piece of that record (0 for the first). */
  piece: number;
  /** The first {@link TRACE_HASH_PREFIX} hex digits of the record's record_hash. */
  hash_prefix: string;
}

const TRACE_ID = /^(lt-[0-9a-f]{16}):(0|[1-9][0-9]{0,15})(?:\.([1-9][0-9]{0,5}))?:([0-9a-f]{12})$/;

/** The trace_id of piece `piece` served by record `seq` (hash `recordHash`) of ledger `ledgerId`. */
export function formatTraceId(ledgerId: string, seq: number, piece: number, recordHash: string): string {
  return `${ledgerId}:${seq}${piece > 0 ? `.${piece}` : ''}:${recordHash.slice(0, TRACE_HASH_PREFIX)}`;
}

/** The parts of a ledger-bound trace_id, or null when `traceId` is not of that form (hand-written ids). */
export function parseTraceId(traceId: string): TraceIdParts | null {
  const m = TRACE_ID.exec(traceId);
  if (!m) return null;
  return { ledger_id: m[1]!, seq: Number(m[2]), piece: m[3] === undefined ? 0 : Number(m[3]), hash_prefix: m[4]! };
}

/** One Ghostlight `research_trace_entry` (responder-output schema `$defs/research_trace_entry`). */
export type LedgerTraceEntry = ResearchTraceEntry & { origin: 'runner_captured' };

/**
 * The capture fragment `loretrace ledger export` writes: the runner-captured part of a capture's
 * `lore_access`, plus `snapshot_id`, `packet_id`, the session's `policy_receipt` and the pinned
 * `ledger_head`, so `verify-trace` can check drift and truncation.
 */
export interface LedgerExport {
  mode: 'responder_scoped_repository_search' | 'coordinator_scoped_retrieval';
  /**
   * Proxy: seed and scope notes whose text was served, as note refs (`Ns:path`), in first-read order.
   * Retrieve: the notes its walk consulted, as its session records them (the fragment's `consulted_refs`).
   */
  consulted_refs: string[];
  /**
   * Proxy: the notes a successful `lore_follow` admitted to the session (its `TOOL_RESULT` says
   * `newly_admitted`), whether or not their text was then read — a follow is the responder walking a link,
   * as the coordinator walk's followed notes are those it walked to — in ledger order; a note already listed
   * as consulted is not listed again. Retrieve: the notes its walk followed.
   */
  followed_refs: string[];
  /** One runner_captured entry per served chunk piece (blank-only pieces skipped). */
  research_trace: LedgerTraceEntry[];
  research_trace_status: 'runner_captured';
  snapshot_id: string;
  packet_id: string;
  policy_receipt: unknown[];
  /** record_hash of the ledger's last record (pin it to detect later truncation). */
  ledger_head: string;
}

/**
 * The full binding of one runner_captured entry to its ledger: what a lock file records per entry
 * (docs/RECEIPTS.md). `record_hash` is the whole hash of the record that served the text; `ledger_head`
 * the record_hash of the ledger's last record when the binding was made; `text_sha256` the hash the
 * record holds for the served text (= sha256 of `extracted_constraint`).
 */
export interface TraceBinding {
  trace_id: string;
  ledger_id: string;
  seq: number;
  piece: number;
  /** `<ledger_id>:<seq>`. */
  record_id: string;
  record_hash: string;
  ledger_head: string;
  snapshot_id: string;
  source_ref: string;
  line_start: number;
  line_end: number;
  text_sha256: string;
}

/** What a lock file pins about one ledger: enough to detect any later edit or truncation. */
export interface LedgerPin {
  ledger_id: string;
  /** record_hash of the last record. */
  head: string;
  /** Number of records. */
  records: number;
  /** True when the last record is the closing one (SESSION_CLOSED / v1 session_end). */
  closed: boolean;
  schema_version: string;
  snapshot_id: string;
  packet_id: string;
  /** `key_id` of the key that signed the closing record (src/receipts/signing.ts), null when unsigned. */
  signer_key_id: string | null;
}

/** A record's arguments as an object (empty when they are not one). */
function argumentsOf(call: ViewedCall): Record<string, unknown> {
  return (typeof call.arguments === 'object' && call.arguments !== null ? call.arguments : {}) as Record<string, unknown>;
}

/** The lookup a trace entry records: `lore_read <ref>` plus the line arguments when given (retrieve: `read <ref>`). */
function lookupText(call: ViewedCall): string {
  const a = argumentsOf(call);
  const ref = typeof a['ref'] === 'string' ? a['ref'] : JSON.stringify(a['ref'] ?? null);
  const lines = a['line_start'] !== undefined || a['line_end'] !== undefined ? ` lines ${String(a['line_start'] ?? '')}-${String(a['line_end'] ?? '')}` : '';
  return `${call.tool} ${ref}${lines}`;
}

/**
 * The served text of `range`, re-derived: v1 ranges carry it; v2 ranges are re-read from the vault
 * (`readIndexedLines`: the file must still be the indexed one) and must hash to the recorded `text_sha256`.
 * @throws LoretraceError `ledger_needs_vault` (v2 without an index), `ledger_lore_missing` (the file is
 *   not a readable indexed note), `ledger_lore_mismatch` (the lines no longer hash to the record's).
 */
async function servedText(range: ViewedRange, seq: number, index: VaultIndex | undefined, cache: Map<string, string[]>, file: string | undefined): Promise<string> {
  const where = { ...(file ? { file } : {}), line: seq + 1 };
  if (index === undefined) {
    if (range.text !== undefined) return range.text;
    throw new LoretraceError('ledger_needs_vault', `ledger ${file ?? '(text)'} records text hashes, not text: re-deriving extracted_constraint needs the vault (pass --lore)`, { ...where, expected: 'the vault the session read' });
  }
  let lines = cache.get(range.path);
  if (lines === undefined) {
    try {
      lines = (await readIndexedLines(index, range.path)).lines;
    } catch (e) {
      throw new LoretraceError('ledger_lore_missing', `seq ${seq}: ${range.path} is not a readable indexed note of vault ${index.namespace} (${(e as Error).message}); expected lines ${range.line_start}-${range.line_end} — nothing exported`, { ...where, pointer: '/outcome/served' });
    }
    cache.set(range.path, lines);
  }
  const text = range.line_end <= lines.length && range.line_start <= range.line_end ? sliceLines(lines, range.line_start, range.line_end) : null;
  if (text === null || sha256Hex(text) !== range.text_sha256) {
    throw new LoretraceError('ledger_lore_mismatch', `seq ${seq}: lines ${range.line_start}-${range.line_end} of ${range.path} no longer hash to the recorded text_sha256 ${range.text_sha256} (vault snapshot ${index.snapshot_id}); the served text cannot be re-derived — nothing exported`, { ...where, pointer: '/outcome/served', expected: `lines whose sha256 is ${range.text_sha256}` });
  }
  return text;
}

/**
 * The `query` and `used_for` of an exported entry. Proxy: the tool call (`lore_read <ref> lines a-b`) and
 * how the text was admitted. Retrieve: the traversal query and the `used_for` its read record carries
 * (the requirement the excerpt serves), so the export is the fragment `retrieve --capture-out` wrote;
 * a retrieve record without them (written before they were recorded) says what is known.
 */
export function entryWording(view: LedgerView, call: ViewedCall, piece: ViewedRange): { query: string; used_for: string } {
  if (view.runner === 'retrieve') {
    const a = argumentsOf(call);
    return {
      query: typeof a['query'] === 'string' ? a['query'] : lookupText(call),
      used_for: typeof a['used_for'] === 'string' ? a['used_for'] : `read by loretrace retrieve for a source excerpt (ledger seq ${call.seq}, reached by the coordinator traversal)`,
    };
  }
  return {
    query: lookupText(call),
    used_for: `returned to the responder by ${call.tool} (ledger seq ${call.seq}, ${piece.via} at depth ${piece.depth}); how the response used it is the responder's or reviewer's to state`,
  };
}

/** Options of {@link exportLedger}. */
export interface ExportLedgerOptions {
  /** Ledger file name used in messages. */
  file?: string;
  /** The vault: needed for v2 ledgers (the served text is re-derived from it and checked against the hash). */
  index?: VaultIndex;
  /** Expected head (`ledger verify --head`); a mismatch refuses the export. */
  head?: string;
}

/**
 * Build the capture fragment from a ledger's text. The ledger is verified first (chain, seq, schema, ids).
 * Every piece of text a read served becomes one `runner_captured` trace entry: `extracted_constraint` is
 * the text re-derived from the vault (v2; it must hash to the record's `text_sha256`) or kept in the
 * record (v1), lines joined with "\n"; `trace_id` binds it to its record ({@link formatTraceId}).
 *
 * @throws LoretraceError `ledger_invalid` when verification finds an error (message: first bad seq and
 *   finding); `ledger_needs_vault`, `ledger_lore_missing`, `ledger_lore_mismatch` (see {@link servedText}).
 */
export async function exportLedger(text: string, options: ExportLedgerOptions = {}): Promise<LedgerExport> {
  const { view } = await readVerifiedLedger(text, { ...(options.file ? { file: options.file } : {}), ...(options.head ? { head: options.head } : {}) });
  const { consulted_refs: consulted, followed_refs: followed } = ledgerReadRefs(view);
  const trace: LedgerTraceEntry[] = [];
  const cache = new Map<string, string[]>();
  for (const call of view.calls) {
    if (call.outcome.status !== 'ok') continue;
    const served = call.outcome.served;
    for (let n = 0; n < served.length; n++) {
      const piece = served[n]!;
      const extracted = await servedText(piece, call.seq, options.index, cache, options.file);
      if (extracted.trim() === '') continue;
      const wording = entryWording(view, call, piece);
      trace.push({
        trace_id: formatTraceId(view.ledger_id, call.seq, n, call.record_hash),
        origin: 'runner_captured',
        query: wording.query,
        source_ref: piece.ref,
        source_path: options.index ? notePathOnDisk(options.index, piece.path as VaultPath) : piece.path,
        chunk_index: piece.chunk_index,
        line_start: piece.line_start,
        line_end: piece.line_end,
        extracted_constraint: extracted,
        used_for: wording.used_for,
      });
    }
  }
  return {
    mode: view.mode as LedgerExport['mode'],
    consulted_refs: consulted,
    followed_refs: followed,
    research_trace: trace,
    research_trace_status: 'runner_captured',
    snapshot_id: view.snapshot_id,
    packet_id: view.packet_id,
    policy_receipt: view.policy_receipt,
    ledger_head: view.head,
  };
}

/**
 * The notes a ledger shows read, as the `consulted_refs` and `followed_refs` of its export (note refs
 * `<namespace>:<path>`, each once, in ledger order). The coordinator walk's session (`runner: retrieve`) lists
 * every note it consulted or followed, read or not (`session.admitted`, `via` `follow` or not). A proxy
 * session's consulted notes are the seed and scope notes whose text a record served; its followed notes are
 * those a successful `lore_follow` admitted (its `TOOL_RESULT` says `newly_admitted`), read or not, and notes
 * served `via: follow`; a note already listed is not listed again. Pure: no text is re-derived.
 */
export function ledgerReadRefs(view: LedgerView): { consulted_refs: string[]; followed_refs: string[] } {
  const consulted: string[] = [];
  const followed: string[] = [];
  if (view.runner === 'retrieve') {
    for (const a of view.admitted) (a.via === 'follow' ? followed : consulted).push(a.ref);
    return { consulted_refs: consulted, followed_refs: followed };
  }
  const seen = new Set<string>();
  for (const call of view.calls) {
    if (call.outcome.status !== 'ok') continue;
    const admitted = call.outcome.admitted;
    if (admitted !== undefined && admitted.newly_admitted !== false) {
      const noteRef = `${view.namespace}:${admitted.path}`;
      if (!seen.has(noteRef)) {
        seen.add(noteRef);
        followed.push(noteRef);
      }
    }
    for (const piece of call.outcome.served) {
      const noteRef = `${view.namespace}:${piece.path}`;
      if (!seen.has(noteRef)) {
        seen.add(noteRef);
        (piece.via === 'follow' ? followed : consulted).push(noteRef);
      }
    }
  }
  return { consulted_refs: consulted, followed_refs: followed };
}

/** A `consulted_refs` / `followed_refs` entry that no receipt shows read (see {@link refsNotRead}). */
export interface RefNotRead {
  /** RFC 6901 pointer of the entry, `<base>/<i>`. */
  pointer: string;
  /** The entry as written (a non-string entry is reported as its JSON). */
  ref: string;
  /** `claimed_not_read: lore_access.consulted_refs names "…", which the receipts never served (they give …)`-style wording. */
  message: string;
}

/**
 * The entries of a claimed `consulted_refs` or `followed_refs` list (`key`) that are not among the receipts'
 * refs of the same key (`ledgerReadRefs`, or a re-assembled capture's `lore_access`): each is a claim of a read
 * no ledger record made. Seed 001: "Trust, but make the trust write receipts" — a read the ledger never recorded
 * is not research. `base` is the list's pointer (`/lore_access/consulted_refs`, `/consulted_refs`), `label` how
 * messages name it (`lore_access.consulted_refs`), `source` what the receipts are (`the receipts`, `ledger x.jsonl`).
 * Used by `capture check` (`recheckCaptureReview`) and `verify-trace` alike, so both say `claimed_not_read` for the
 * same entry. Pure.
 */
export function refsNotRead(key: 'consulted_refs' | 'followed_refs', claimed: readonly unknown[], receipts: readonly string[], base: string, label: string, source = 'the receipts'): RefNotRead[] {
  const out: RefNotRead[] = [];
  claimed.forEach((ref, i) => {
    if (typeof ref === 'string' && receipts.includes(ref)) return;
    out.push({
      pointer: `${base}/${i}`, ref: typeof ref === 'string' ? ref : JSON.stringify(ref),
      message: `${label} names ${JSON.stringify(ref)}, which ${source} never ${key === 'consulted_refs' ? 'served' : 'followed'} (they give ${receipts.length ? receipts.join(', ') : 'none'})`,
    });
  });
  return out;
}

/** The pin of a verified ledger view (what a lock file records about the ledger). */
export function ledgerPin(view: LedgerView): LedgerPin {
  return {
    ledger_id: view.ledger_id, head: view.head, records: view.hashes.length, closed: view.closed,
    schema_version: view.schema_version, snapshot_id: view.snapshot_id, packet_id: view.packet_id, signer_key_id: view.signer_key_id,
  };
}

/**
 * Find the served piece a trace_id names in a ledger view, or say why not: `no_ledger_id` (another
 * ledger), `no_record` (no such seq, or that seq served nothing), `hash_mismatch` (the record's hash does
 * not start with the id's prefix), `no_piece` (the record served fewer pieces).
 */
export function findServedPiece(view: LedgerView, parts: TraceIdParts):
  | { ok: true; call: ViewedCall; range: ViewedRange }
  | { ok: false; why: 'no_ledger_id' | 'no_record' | 'hash_mismatch' | 'no_piece'; detail: string } {
  if (parts.ledger_id !== view.ledger_id) return { ok: false, why: 'no_ledger_id', detail: `ledger ${view.ledger_id} is not ${parts.ledger_id}` };
  const call = view.calls.find((c) => c.seq === parts.seq);
  if (!call || call.outcome.status !== 'ok' || call.outcome.served.length === 0) {
    return { ok: false, why: 'no_record', detail: `ledger ${view.ledger_id} has no record seq ${parts.seq} that served lore text${parts.seq >= view.hashes.length ? ` (it ends at seq ${view.hashes.length - 1})` : ''}` };
  }
  if (!call.record_hash.startsWith(parts.hash_prefix)) {
    return { ok: false, why: 'hash_mismatch', detail: `record seq ${parts.seq} of ledger ${view.ledger_id} has record_hash ${call.record_hash}, which does not start with ${parts.hash_prefix}` };
  }
  const range = call.outcome.served[parts.piece];
  if (!range) return { ok: false, why: 'no_piece', detail: `record seq ${parts.seq} served ${call.outcome.served.length} piece(s), not piece ${parts.piece}` };
  return { ok: true, call, range };
}

/** Result of {@link bindTraceToLedger}: the ledger's pin and one binding per runner_captured entry. */
export interface LedgerBindingSet {
  ledger: LedgerPin;
  bindings: TraceBinding[];
}

/**
 * The full binding of every runner_captured entry of `trace` to the ledger `text` (verified first): for
 * each entry, the record its trace_id names, that record's whole hash, the ledger head and snapshot id,
 * and the served text hash — what a lock file writes beside the capture. Entries of other origins are
 * skipped (they are not bound to any record).
 *
 * @throws LoretraceError `ledger_invalid` (the ledger does not verify); `trace_unbound` when a
 *   runner_captured entry's trace_id is not of the ledger-bound form, names another ledger or a record
 *   that served nothing, or the record served another ref, range or text (message names the entry).
 */
export async function bindTraceToLedger(text: string, trace: readonly ResearchTraceEntry[], options: { file?: string; head?: string } = {}): Promise<LedgerBindingSet> {
  const { view } = await readVerifiedLedger(text, options);
  const bindings: TraceBinding[] = [];
  trace.forEach((entry, i) => {
    if (entry.origin !== 'runner_captured') return;
    const fail = (detail: string): never => {
      throw new LoretraceError('trace_unbound', `research_trace entry ${i} (${entry.trace_id}) is not bound to ledger ${options.file ?? view.ledger_id}: ${detail}`, { pointer: `/research_trace/${i}/trace_id`, expected: 'a trace_id <ledger_id>:<seq>:<record_hash prefix> of a record that served exactly this ref, range and text' });
    };
    const parts = parseTraceId(entry.trace_id) ?? fail('the trace_id is not of the form <ledger_id>:<seq>:<record_hash prefix>');
    const found = findServedPiece(view, parts);
    if (!found.ok) return fail(found.detail);
    const mismatch = servedMismatch(entry, found.range);
    if (mismatch !== null) fail(mismatch);
    bindings.push({
      trace_id: entry.trace_id, ledger_id: view.ledger_id, seq: parts.seq, piece: parts.piece, record_id: `${view.ledger_id}:${parts.seq}`,
      record_hash: found.call.record_hash, ledger_head: view.head, snapshot_id: view.snapshot_id,
      source_ref: found.range.ref, line_start: found.range.line_start, line_end: found.range.line_end, text_sha256: found.range.text_sha256,
    });
  });
  return { ledger: ledgerPin(view), bindings };
}

/**
 * Does a trace entry claim exactly what the record served — source_ref, source_path (in NFC: it names the
 * file as stored on disk, the record the index path), chunk, line range
 * and text (sha256 of `extracted_constraint` = the record's `text_sha256`)? Null when it does, else what differs.
 */
export function servedMismatch(entry: Pick<ResearchTraceEntry, 'source_ref' | 'source_path' | 'chunk_index' | 'line_start' | 'line_end' | 'extracted_constraint'>, range: ViewedRange): string | null {
  const diffs: string[] = [];
  if (entry.source_ref !== range.ref) diffs.push(`source_ref ${entry.source_ref} (served ${range.ref})`);
  if (traceNotePath(entry.source_path) !== range.path) diffs.push(`source_path ${entry.source_path} (served ${range.path})`);
  if (entry.chunk_index !== range.chunk_index) diffs.push(`chunk_index ${entry.chunk_index} (served ${range.chunk_index})`);
  if (entry.line_start !== range.line_start || entry.line_end !== range.line_end) diffs.push(`lines ${entry.line_start}-${entry.line_end} (served ${range.line_start}-${range.line_end})`);
  if (sha256Hex(entry.extracted_constraint) !== range.text_sha256) diffs.push(`extracted_constraint with sha256 ${sha256Hex(entry.extracted_constraint)} (served text ${range.text_sha256})`);
  return diffs.length === 0 ? null : `the entry claims ${diffs.join(', ')}`;
}

/**
 * Trace verification (docs/VALIDATE.md, "Trace verification"): check every `research_trace` entry of a capture,
 * a capture fragment, a traverse result or a proxy ledger export line by line against the vault as it is
 * now and, for `runner_captured` entries, against the ledger that recorded the lookup
 * (src/receipts/trace-ledger.ts), and return a bundle that records what was checked — one disposition per
 * entry, per given ledger and per required seed, and totals for every disposition, zeros included (seed
 * 003: an omitted total is indistinguishable from zero).
 *
 * Pure over its inputs apart from re-reading the cited notes through `readNoteLines` (which checks each
 * file's sha256 against the index manifest). Never prints, never exits.
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, NoteRecord, VaultIndex } from '../types.js';
import type { HiddenSection } from '../policy/types.js';
import { readNoteLines } from '../indexer/lookup.js';
import { sliceLines } from '../notes/lines.js';
import { parseRef } from '../refs/ref.js';
import { preview } from '../contracts/rules.js';
import type { ResearchTraceEntry, TraceOrigin } from '../contracts/types.js';
import { checkBacking, checkSeeds, loadTraceLedgers } from './trace-ledger.js';
import type { LedgerHeadPin, SeedVerdict, TraceLedgerInput, TraceLedgerVerdict } from './trace-ledger.js';
import { entryWording, ledgerReadRefs, parseTraceId, refsNotRead } from './ledger-export.js';
import type { RefNotRead } from './ledger-export.js';
import { readReceiptRules, receiptDenial } from './receipt-rules.js';
import type { ReceiptAt, ReceiptRules } from './receipt-rules.js';
import { AUTHORSHIP_CODES, AUTHORSHIP_NOT_CHECKED, verificationVerdict } from './signing.js';
import type { TrustedKey, VerificationVerdict } from './signing.js';
import { isJsonObject } from '../contracts/json-object.js';
import { hiddenRefNamedBy } from '../contracts/rules.js';
import { lineView } from '../proxy/withhold.js';
import { captureIdPacket } from './lock.js';
import type { LineView } from '../proxy/withhold.js';


/**
 * Outcome of checking one trace entry. Checks run in this order and the first failure decides:
 * 1. `missing_file` — the source_ref does not parse, names another namespace or a folder, or disagrees
 *    with `source_path`;
 * 1a. `policy_violation` — any origin, in any trace array of a capture: the entry's source_ref names one of the
 *    capture's `isolation.hidden_context_refs` (the packet's `hidden_context_audit.omitted_context_refs`, matched
 *    as `capture.hidden_ref_consulted` matches them: `hiddenRefNamedBy`). Seed 001: the omitted refs are
 *    "deliberately omitted", so a trace that cites one — a responder quoting the author-only note verbatim
 *    included — cites lore the packet never gave; never turned into `drifted`;
 * 1b. `policy_violation` — any origin, when the input carries a non-empty
 *    `policy_receipt` (traverse result, capture fragment, ledger export): the entry's path lies outside
 *    every `allowed_prefix` row, or on a deny row (`hidden_ref`, `hidden_prefix`, `hidden_note`,
 *    `future_era_prefix`, an enforced `deny_prefix:` / `deny_class:` stop condition) — the same rules,
 *    in the same order, as `checkPath` (src/policy/compile.ts). Decided by the receipt, not the vault, so
 *    it is never turned into `drifted`;
 * 1c. `missing_file` — the file is not in the current snapshot;
 * 2. `out_of_range` — `line_start < 1`, `line_end < line_start`, `line_end > line_count`, or the range
 *    is not inside a `#Lx-Ly` fragment of the source_ref;
 * 3. `chunk_mismatch` — no chunk `chunk_index` in that file, the line range does not lie inside that
 *    chunk, or a `#chunkN` fragment of the source_ref names another chunk;
 * 4. text — `runner_captured`: `extracted_constraint` must equal the lines verbatim (`verified`, else
 *    `text_mismatch`); `responder_reported`: a quote of the cited lines, not held to verbatim — every word
 *    token of it must occur in them (token containment 1: `unverifiable`, never a pass), else
 *    `text_mismatch` (an invented or misattributed quote, a failure); `coordinator_reconstructed`:
 *    `unverifiable` with a similarity score (never a failure);
 * 5. drift — when the input records a `snapshot_id` different from the vault's now, an entry that failed
 *    any of checks 1, 1c, 2-4 is `drifted` instead (its `cause` keeps the failed check); an entry that passed
 *    keeps `verified` ("still holds") and is listed in `snapshot.holding`;
 * 6. ledger — a `runner_captured` entry whose text verified must be backed by the record that served it
 *    (src/receipts/trace-ledger.ts `checkBacking`): `unbacked` (a hand-written trace_id, no ledger given,
 *    or no such record), `ledger_broken` (the ledger that holds it does not verify up to its pinned head),
 *    `ledger_mismatch` (the record is another, or served another ref, range or text), `ledger_untrusted`
 *    (the ledger verifies but its authorship failed: unsigned or signed by an untrusted key while trusted
 *    keys were given, or a signature that does not verify; src/receipts/signing.ts). `text_verified`
 *    keeps the text verdict: a hand-written entry can be verified for text but never passes. A backed entry
 *    is then held to its ledger (`backedEntryProblem`): the ledger must pin the trace's packet, else
 *    `ledger_mismatch`; whatever receipt the input carries, its path must be admitted by the ledger
 *    session's `policy_receipt`, else `policy_violation`; its `query` must be the record's, and no earlier entry of
 *    the same array may be bound to the same served piece, else `ledger_mismatch`;
 * 7. status — in a trace whose `research_trace_status` is `runner_captured` (a capture's
 *    `lore_access`, a fragment), an entry of another origin is `unbacked`: the status claims the runner
 *    recorded every entry. In a capture, the responder's own trace (`parsed_output.research_trace`) may hold
 *    `responder_reported` entries (its quotes, held to their lines by check 4), but a `coordinator_reconstructed`
 *    entry there is `unbacked` too: under a runner_captured status nothing is the coordinator's reconstruction.
 *
 * More dispositions are counted in `totals` but given to no entry: `seed_not_consulted` (per required
 * seed of a responder-lane ledger never read, an error), `claimed_not_read` (per `consulted_refs` /
 * `followed_refs` entry of a capture fragment or a capture's `lore_access` that the ledgers its entries name
 * never served or followed — `refsNotRead`, the rule `capture check` applies; an error), `ledger_not_closed` (per given ledger without
 * its closing record and with no pinned head, a warning that makes the capture a draft), and per given
 * ledger whose authorship fails, its code — `ledger_unsigned`, `ledger_untrusted_signer` (only with
 * trusted keys), `ledger_signature_invalid` (always) — each an error that fails the file.
 */
export type TraceDisposition =
  | 'verified'
  | 'text_mismatch'
  | 'out_of_range'
  | 'chunk_mismatch'
  | 'missing_file'
  | 'policy_violation'
  | 'drifted'
  | 'unverifiable'
  | 'unbacked'
  | 'ledger_mismatch'
  | 'ledger_broken'
  | 'ledger_untrusted'
  | 'seed_not_consulted'
  | 'claimed_not_read'
  | 'ledger_not_closed'
  | 'ledger_unsigned'
  | 'ledger_untrusted_signer'
  | 'ledger_signature_invalid';

/** Every disposition, in the fixed order `totals` uses. */
export const TRACE_DISPOSITIONS: readonly TraceDisposition[] = [
  'verified',
  'text_mismatch',
  'out_of_range',
  'chunk_mismatch',
  'missing_file',
  'policy_violation',
  'drifted',
  'unverifiable',
  'unbacked',
  'ledger_mismatch',
  'ledger_broken',
  'ledger_untrusted',
  'seed_not_consulted',
  'claimed_not_read',
  'ledger_not_closed',
  'ledger_unsigned',
  'ledger_untrusted_signer',
  'ledger_signature_invalid',
];

/** The check that failed, recorded as `cause` on a `drifted` entry. */
export type TraceFailure = 'text_mismatch' | 'out_of_range' | 'chunk_mismatch' | 'missing_file';

/**
 * Which kind of document was verified, detected by shape:
 * - `capture` — a Ghostlight responder output capture;
 * - `capture_fragment` — the `lore_access` receipts of a capture to be: a document with a top-level
 *   `research_trace` that is none of the others. Both lanes write one: `retrieve --capture-out` (the
 *   coordinator lane's own fragment, its trace_ids bound to retrieve's ledger and its `ledger_head`
 *   pinning it) and `ledger export` (a fragment re-derived from either lane's ledger);
 * - `traverse_result` — `loretrace traverse --json` (`decisions` and `stats`);
 * - `ledger_export` — a document that names itself a ledger (`schema_version` starting `loretrace.ledger`)
 *   or lists ledger `records` with their trace entries;
 * - `proxy_ledger`, `retrieve_ledger` — a raw JSONL ledger of `serve` (responder lane) or of `retrieve`
 *   (coordinator lane), which the caller exported with `exportLedger` first and labels with
 *   `options.inputKind`.
 */
export type TraceInputKind = 'capture' | 'capture_fragment' | 'traverse_result' | 'ledger_export' | 'proxy_ledger' | 'retrieve_ledger';

/** The verdict on one trace entry. */
export interface TraceEntryVerdict {
  /** RFC 6901 pointer of the entry inside the input document, e.g. `/lore_access/research_trace/0`. */
  pointer: string;
  trace_id: string;
  origin: TraceOrigin;
  source_ref: string;
  source_path: string;
  chunk_index: number;
  /** 1-based inclusive, as the entry states them. */
  line_start: number;
  line_end: number;
  disposition: TraceDisposition;
  /** For `drifted`: the check that failed against the current vault; otherwise null. */
  cause: TraceFailure | null;
  /**
   * Token containment of `extracted_constraint` in the cited lines, 0..1 rounded to 4 decimals: the
   * share of the constraint's lower-cased letter/digit word tokens (a multiset) that occur in the lines.
   * Null when the text check did not run (an earlier check failed).
   */
  similarity: number | null;
  /**
   * The vault verdict alone: true when the lines hold the entry's text verbatim (even if the entry then
   * fails as unbacked), false when a location or text check failed, null when the text was not held to
   * verbatim (other origins).
   */
  text_verified: boolean | null;
  /** `<ledger_id>:<seq>` of the record the trace_id names (backing or not), null for unbound trace_ids. */
  ledger_record: string | null;
  /** Why the entry is not plainly `verified` (file, lines, what was expected); null for `verified`. */
  detail: string | null;
}

/** The bundle `verifyTrace` returns (`loretrace verify-trace --json` prints it). */
export interface TraceVerificationReport {
  schema_version: 'loretrace.trace_verification.v1';
  /** The input file as the caller named it, or null. */
  file: string | null;
  input_kind: TraceInputKind;
  /** Namespace of the vault checked against. */
  namespace: string;
  snapshot: {
    /** snapshot_id of the vault now. */
    current: string;
    /** snapshot_id the input recorded, or null when it records none (captures usually do not). */
    recorded: string | null;
    /** True when `recorded` is given and differs from `current`. */
    drift: boolean;
    /** Under drift: trace_ids of the entries that still verify verbatim (in input order); else []. */
    holding: string[];
  };
  /** What the entries' source paths (any origin) were checked against (see {@link TracePolicyCheck}). */
  policy: TracePolicyCheck;
  /** The `research_trace_status` the input states (capture `lore_access`, fragment), or null. */
  research_trace_status: string | null;
  /** One verdict per ledger given (src/receipts/trace-ledger.ts), in the order given. */
  ledgers: TraceLedgerVerdict[];
  /** Responder lane: each required seed of each given ledger and whether it was read. */
  seeds: SeedVerdict[];
  /**
   * Each `consulted_refs` / `followed_refs` entry of the input (a capture fragment's, a capture's `lore_access`)
   * that the ledgers its trace entries name never served or followed (`claimed_not_read`, counted in `totals`),
   * with the ledger(s) it was checked against; [] when every claimed ref is a read the ledgers record, or when
   * no ledger named by an entry verifies (its entries then fail on their own).
   */
  refs_not_read: (RefNotRead & { ledgers: string[] })[];
  /**
   * Whether the ledgers' authorship was checked (trusted keys given, `--trust-key`) and the key ids
   * trusted; `note` is `authorship not checked (no --trust-key)` when it was not, else null.
   */
  authorship: { checked: boolean; trusted_key_ids: string[]; note: string | null };
  /**
   * Count per disposition, every key of {@link TRACE_DISPOSITIONS} always present: entries for the first
   * twelve, seeds for `seed_not_consulted`, claimed refs for `claimed_not_read` ({@link refs_not_read}), ledgers
   * for `ledger_not_closed` and the three authorship codes.
   */
  totals: Record<TraceDisposition, number>;
  /** runner_captured entries checked, how many of them did not pass, and how many are ledger-backed. */
  runner_captured: { checked: number; failed: number; ledger_backed: number };
  /**
   * What the report's success rests on — read this first (src/receipts/signing.ts `VerificationVerdict`):
   * `verified` when `integrity_ok`, at least one entry is ledger-backed (`runner_captured.ledger_backed` > 0)
   * and trusted keys were given (so every ledger is signed by one of them: one that is not fails
   * `integrity_ok`); `integrity_only` when `integrity_ok` but a ledger was given and no trusted key
   * (`authorship.checked` false: anyone can write such a ledger), or when no entry is ledger-backed at all —
   * entries of other origins are checked against the vault only, so nothing shows who wrote them or that the
   * research happened (seed 001: a receipt anyone could write by hand is worthless); `failed` otherwise.
   */
  verdict: VerificationVerdict;
  /** True only when `verdict` is `verified`: a hand-written, re-hashed ledger checked without a trusted key is not ok. */
  ok: boolean;
  /**
   * Every check but authorship passed: at least one entry was checked, a `runner_captured` status has a
   * runner_captured entry under it ({@link runner_claim}), every runner_captured entry is
   * verified and ledger-backed, no entry is `unbacked` or `policy_violation` (whatever its origin), no responder_reported entry fails a vault check
   * (`isFailedResponderEntry`), no required seed is unread, no consulted or followed ref is claimed that the
   * ledgers never recorded (`claimed_not_read`), no given ledger is broken or fails its
   * authorship, and the packet file a lock lists or a named ledger pins (when given) is `unchanged`, and so is the input file
   * itself when a lock lists it as an output.
   */
  integrity_ok: boolean;
  /** True when a given ledger is `ledger_not_closed`: whatever `ok` says, a capture it backs is a draft. */
  draft: boolean;
  entries: TraceEntryVerdict[];
  /**
   * Present when the caller gave the packet file a lock lists ({@link VerifyTraceOptions.packetFile}), or —
   * without it — the packet the `SESSION_OPENED` of a ledger the entries name pins ({@link VerifyTraceOptions.ledgerPackets}).
   */
  packet_file?: TracePacketFileCheck;
  /** Present when the caller gave the sha256 a lock records for the input itself ({@link VerifyTraceOptions.inputFile}). */
  input_file?: TraceInputFileCheck;
  /**
   * Present when the input's `research_trace_status` is `runner_captured` but the trace that status governs
   * (`/lore_access/research_trace` of a capture, `/research_trace` of a fragment) holds no `runner_captured`
   * entry: a claim with no receipt ({@link runnerClaimWithoutEntry}); it fails the report.
   */
  runner_claim?: TraceRunnerClaim;
}

/**
 * A `runner_captured` status with no `runner_captured` entry under it: `code` is always
 * `no_runner_captured_entries`, `pointer` the trace array the status governs, `message` says what is missing.
 * `capture check`'s `research_trace_empty` is the same claim for a capture whose `lore_access.research_trace`
 * is empty, and `capture check` reports only that one then ({@link VerifyTraceOptions.emptyRunnerTraceReported});
 * this one is for a trace that holds only entries of other origins (and, in `verify-trace`, an empty one).
 */
export interface TraceRunnerClaim {
  code: 'no_runner_captured_entries';
  pointer: string;
  message: string;
}

/**
 * The policy check of a report: which `policy_receipt` the entries (any origin) were held to.
 * - `receipt`: JSON pointer of the receipt in the input (`/policy_receipt`, or
 *   `/lore_access/policy_receipt` in a capture), or null when the input carries none (captures usually
 *   do not: a strict capture forbids the field).
 * - `rows`: rows in that receipt.
 * - `checked`: true when the check ran (the receipt has rows); an empty receipt checks nothing.
 * - `allowed_prefixes`: vault paths of its `allowed_prefix` rows, in receipt order.
 * - `deny_rows`: rows that deny paths and were applied (hidden_ref, hidden_prefix, hidden_note,
 *   future_era_prefix, enforced deny_prefix / deny_class stop conditions).
 */
export interface TracePolicyCheck {
  receipt: string | null;
  rows: number;
  checked: boolean;
  allowed_prefixes: string[];
  deny_rows: number;
}

/** Options of {@link verifyTrace}. */
export interface VerifyTraceOptions {
  /** Name of the input file, used in messages and copied to `report.file`. */
  file?: string;
  /**
   * The caller reports a capture's `runner_captured` status over an empty (or absent) `lore_access.research_trace`
   * itself — `capture check`'s `research_trace_empty`, the more specific code for that one cause — so the report
   * gives no `runner_claim` for it. A status over a non-empty array with no runner_captured entry is still
   * `no_runner_captured_entries`. Default false (`verify-trace` reports both cases as `no_runner_captured_entries`).
   */
  emptyRunnerTraceReported?: boolean;
  /**
   * The input is the `exportLedger` export of a raw JSONL ledger (as `loretrace verify-trace
   * session.jsonl` does): `proxy_ledger` for a `serve` session's, `retrieve_ledger` for retrieve's;
   * reported as that `input_kind` instead of `capture_fragment`.
   */
  inputKind?: 'proxy_ledger' | 'retrieve_ledger';
  /** The ledgers that back the runner_captured entries (`--ledger`; for a raw ledger input, that ledger). */
  ledgers?: TraceLedgerInput[];
  /** Pinned heads (`--head`, a lock's `ledger.head`); the input's own `ledger_head` is added to them. */
  pins?: LedgerHeadPin[];
  /**
   * The packet the input answers: a ledger backs an entry only when its SESSION_OPENED pins this
   * packet_id (and, when `packet_sha256` is given, this sha256). Without it, a capture's packet is its
   * `capture_id` minus `.capture` (Ghostlight's `<packet_id>.capture` naming) and a fragment's is its
   * `packet_id`; `source` names where it came from in details.
   */
  packet?: { packet_id: string; packet_sha256?: string | null; source: string };
  /**
   * A policy_receipt kept outside the input (a lock's `policy_receipt`), applied like the input's own
   * when the input carries none. `pointer` names it in details (`lock capture.lock.json /policy_receipt`).
   */
  policyReceipt?: { pointer: string; value: unknown };
  /**
   * The packet file a lock lists for the input's packet, re-hashed by the caller (seed 002: a locked file
   * is checked by its hash): `file` as the lock names it, `locked_sha256` the sha256 the lock records,
   * `sha256` the file's sha256 now (null when it cannot be read), `source` the lock. Reported as
   * `packet_file`; a packet whose bytes are no longer the locked ones fails the report.
   */
  packetFile?: { file: string; locked_sha256: string; sha256: string | null; source: string };
  /**
   * The input file itself, when a lock lists it as an output (seed 002: a locked file is checked by its
   * hash, as `lock verify` and `capture check` do): `file` as given, `locked_sha256` the sha256 the lock
   * records, `sha256` the sha256 of the bytes read now, `source` the lock. Reported as `input_file`; an
   * input whose bytes are no longer the locked ones (`changed`) fails the report.
   */
  inputFile?: { file: string; locked_sha256: string; sha256: string; source: string };
  /**
   * The packet each given ledger's `SESSION_OPENED` pins (`packet_sha256`, `packet_file`), re-hashed by the
   * caller: `ledger_id` the ledger's, the rest as {@link packetFile} with `locked_sha256` the sha256 the ledger
   * pins and `source` naming the ledger. Applied when `packetFile` is not given (no lock holds the input, or
   * its lock lists no packet): the one for the ledger the input's first ledger-bound entry names is reported as
   * `packet_file`, so a packet edited after the run fails the report as it fails `lock verify` (seed 004: the
   * ledger's hashes are the receipt).
   */
  ledgerPackets?: readonly { ledger_id: string; file: string; locked_sha256: string; sha256: string | null; source: string }[];
  /**
   * Runner public keys (`--trust-key`, src/receipts/signing.ts): given, a ledger must be signed by one of
   * them to back anything. Absent or empty: authorship is not checked, and `report.authorship` says so.
   */
  trustedKeys?: readonly TrustedKey[];
}

/**
 * The packet file a lock lists, checked: `unchanged`; `packet_changed` — its bytes hash to another sha256
 * than the lock records (the packet was swapped or edited under its lock); `packet_missing` — it cannot
 * be read.
 */
export interface TracePacketFileCheck {
  file: string;
  source: string;
  locked_sha256: string;
  sha256: string | null;
  disposition: 'unchanged' | 'packet_changed' | 'packet_missing';
}

/**
 * The input file a lock lists as an output, checked against the sha256 the lock records: `unchanged`, or
 * `changed` (lock verify's disposition: the output was edited after the run; write a new version instead).
 */
export interface TraceInputFileCheck {
  file: string;
  source: string;
  locked_sha256: string;
  sha256: string;
  disposition: 'unchanged' | 'changed';
}

/** The packet a ledger must pin to back an entry of the input (see {@link VerifyTraceOptions.packet}). */
interface ExpectedPacket {
  packet_id: string;
  packet_sha256: string | null;
  source: string;
}

/**
 * Why a document holds no trace, for `no_research_trace`: a capture (or its lore_access) may be packet_only; a
 * document of another kind is named by its `schema_version`; a document with no
 * `schema_version` whose keys are a responder output contract's (`responder_agent_id`, `action_label`) is a raw
 * responder output, which verify-trace does not read (`loretrace capture --raw-output` assembles it into a
 * capture first); anything else is named by its keys.
 */
function noTraceReason(kind: string, doc: Record<string, unknown>): string {
  if (kind === 'capture' || doc['mode'] === 'curated_excerpts_only') return 'a packet_only capture has no trace';
  if (typeof doc['schema_version'] === 'string') return `a ${doc['schema_version']} document holds no trace`;
  const keys = Object.keys(doc);
  if (doc['schema_version'] === undefined && 'responder_agent_id' in doc && 'action_label' in doc) {
    return 'this is a raw responder output (no schema_version; keys responder_agent_id, action_label, …), not a capture, capture fragment or ledger export: assemble it into a capture with `loretrace capture --raw-output` first';
  }
  return `expected a capture, a capture fragment (retrieve --capture-out, ledger export) or a traverse result; this document has ${keys.length === 0 ? 'no keys' : `keys ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`}`;
}

/** The expected packet: the caller's, else the one the input names (capture_id, fragment packet_id); null when neither. */
function expectedPacket(doc: unknown, kind: TraceInputKind, options: VerifyTraceOptions): ExpectedPacket | null {
  if (options.packet) return { packet_id: options.packet.packet_id, packet_sha256: options.packet.packet_sha256 ?? null, source: options.packet.source };
  const d = doc as Record<string, unknown>;
  const where = options.file ?? 'the input';
  if (kind === 'capture') {
    // A capture names its packet only as exactly `<packet_id>.capture` (captureIdPacket); a respelled id
    // (padded, re-cased, suffixed) names none, so no ledger of any packet backs its entries.
    const packetId = captureIdPacket(d);
    return packetId !== null
      ? { packet_id: packetId, packet_sha256: null, source: `${where} /capture_id` }
      : { packet_id: '', packet_sha256: null, source: `${where} /capture_id (not <packet_id>.capture: it names no packet)` };
  }
  if (typeof d['packet_id'] === 'string') return { packet_id: d['packet_id'] as string, packet_sha256: null, source: `${where} /packet_id` };
  return null;
}

const ORIGINS: readonly TraceOrigin[] = ['runner_captured', 'coordinator_reconstructed', 'responder_reported'];


interface Located {
  pointer: string;
  entry: Record<string, unknown>;
}

/**
 * Classify the input document and list its trace arrays with their pointers.
 * - capture (`ghostlight.responder_output.v0`, or an object with `parsed_output` and `lore_access`):
 *   `/lore_access/research_trace` and `/parsed_output/research_trace` (both when present; a capture mirrors
 *   the responder's trace into lore_access, and both copies are checked);
 * - traverse result (`decisions` and `stats` present): `/research_trace`;
 * - ledger export (`schema_version` starting `loretrace.ledger`, or a `records` array): `/research_trace`,
 *   else every `records[i].trace_entry` / `records[i].research_trace_entry`;
 * - capture fragment (anything else with a top-level `research_trace`: `retrieve --capture-out`,
 *   `ledger export`).
 */
/**
 * The refusal for a responder packet given as the input: a packet is what the responder is handed, the
 * trace is written afterwards (seed 001: `research_trace` belongs to the output capture), so say what to
 * pass instead — for a research packet (`responder_scoped_repository_search`) its capture or the proxy
 * ledger of its session, for any other its capture or the capture fragment `retrieve --capture-out` wrote.
 */
function packetIsNoTrace(doc: Record<string, unknown>, schemaVersion: string, where: string): LoretraceError {
  const la = doc['lore_access'];
  const mode = isJsonObject(la) && typeof la['mode'] === 'string' ? la['mode'] : null;
  const instead = mode === 'responder_scoped_repository_search'
    ? 'pass its capture or the ledger (loretrace serve --ledger)'
    : 'pass its capture or the capture fragment (loretrace retrieve --capture-out)';
  return new LoretraceError('no_research_trace', `${where} is a responder packet (${schemaVersion}${mode === null ? '' : `, ${mode}`}): a packet carries no trace; ${instead}`, {
    file: where, pointer: '/schema_version', expected: 'a capture, capture fragment, traverse result, ledger export or proxy ledger',
  });
}

function locate(doc: unknown, file: string): { kind: TraceInputKind; recorded: string | null; found: Located[]; receipt: ReceiptAt | null } & StatusAt {
  const located = locateTrace(doc, file);
  return { ...located, ...statusOf(doc, located.kind) };
}

/** The `research_trace_status` an input states, the trace array it governs, and the `ledger_head` it pins. */
interface StatusAt {
  status: string | null;
  statusPointer: string | null;
  ledgerHead: string | null;
}

function statusOf(doc: unknown, kind: TraceInputKind): StatusAt {
  const d = doc as Record<string, unknown>;
  const head = typeof d['ledger_head'] === 'string' ? (d['ledger_head'] as string) : null;
  if (kind === 'capture') {
    const la = isJsonObject(d['lore_access']) ? d['lore_access'] : {};
    const st = la['research_trace_status'];
    return { status: typeof st === 'string' ? st : null, statusPointer: '/lore_access/research_trace/', ledgerHead: head };
  }
  const st = d['research_trace_status'];
  return { status: typeof st === 'string' ? st : null, statusPointer: '/research_trace/', ledgerHead: head };
}

function locateTrace(doc: unknown, file: string): { kind: TraceInputKind; recorded: string | null; found: Located[]; receipt: ReceiptAt | null } {
  const where = file || 'input';
  if (!isJsonObject(doc)) {
    throw new LoretraceError(
      'bad_trace_input',
      `${where}: expected a JSON object (a responder output capture, a capture fragment, a traverse result or a ledger export), got ${Array.isArray(doc) ? 'an array' : doc === null ? 'null' : typeof doc}`,
      { file: where, pointer: '', expected: 'a JSON object with a research_trace array' },
    );
  }
  const arrays: { pointer: string; value: unknown }[] = [];
  let kind: TraceInputKind;
  let recorded: unknown = doc['snapshot_id'];
  let receipt: ReceiptAt | null = 'policy_receipt' in doc ? { pointer: '/policy_receipt', value: doc['policy_receipt'] } : null;
  const schemaVersion = typeof doc['schema_version'] === 'string' ? (doc['schema_version'] as string) : '';
  if (schemaVersion === 'ghostlight.responder_output.v0' || (isJsonObject(doc['parsed_output']) && isJsonObject(doc['lore_access']))) {
    kind = 'capture';
    const la = doc['lore_access'];
    const po = doc['parsed_output'];
    if (isJsonObject(la)) {
      if ('research_trace' in la) arrays.push({ pointer: '/lore_access/research_trace', value: la['research_trace'] });
      if (recorded === undefined) recorded = la['snapshot_id'];
      if (receipt === null && 'policy_receipt' in la) receipt = { pointer: '/lore_access/policy_receipt', value: la['policy_receipt'] };
    }
    if (isJsonObject(po) && 'research_trace' in po) arrays.push({ pointer: '/parsed_output/research_trace', value: po['research_trace'] });
  } else if ('decisions' in doc && 'stats' in doc) {
    kind = 'traverse_result';
    if ('research_trace' in doc) arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
  } else if (schemaVersion.startsWith('loretrace.ledger') || Array.isArray(doc['records'])) {
    kind = 'ledger_export';
    if ('research_trace' in doc) {
      arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
    } else if (Array.isArray(doc['records'])) {
      const found: Located[] = [];
      (doc['records'] as unknown[]).forEach((rec, i) => {
        if (!isJsonObject(rec)) return;
        for (const key of ['trace_entry', 'research_trace_entry']) {
          if (isJsonObject(rec[key])) found.push({ pointer: `/records/${i}/${key}`, entry: rec[key] as Record<string, unknown> });
        }
      });
      if (found.length > 0 || 'records' in doc) {
        return { kind, recorded: checkSnapshot(recorded, where, '/snapshot_id'), found, receipt };
      }
    }
  } else if (schemaVersion.startsWith('ghostlight.responder_packet')) {
    throw packetIsNoTrace(doc, schemaVersion, where);
  } else {
    kind = 'capture_fragment';
    if ('research_trace' in doc) arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
  }
  if (arrays.length === 0) {
    throw new LoretraceError(
      'no_research_trace',
      `${where}: no research_trace to verify (looked at ${kind === 'capture' ? '/lore_access/research_trace and /parsed_output/research_trace' : '/research_trace'}); ${noTraceReason(kind, doc)}`,
      { file: where, pointer: kind === 'capture' ? '/lore_access/research_trace' : '/research_trace', expected: 'an array of research_trace entries' },
    );
  }
  const found: Located[] = [];
  for (const { pointer, value } of arrays) {
    if (!Array.isArray(value)) {
      throw new LoretraceError('bad_trace_input', `${where}: ${pointer} must be an array of research_trace entries`, {
        file: where,
        pointer,
        expected: 'an array',
      });
    }
    value.forEach((entry, i) => {
      if (!isJsonObject(entry)) {
        throw new LoretraceError('bad_trace_entry', `${where}: ${pointer}/${i} must be a research_trace entry object`, {
          file: where,
          pointer: `${pointer}/${i}`,
          expected: 'an object',
        });
      }
      found.push({ pointer: `${pointer}/${i}`, entry });
    });
  }
  const snapshotPointer = kind === 'capture' && doc['snapshot_id'] === undefined ? '/lore_access/snapshot_id' : '/snapshot_id';
  return { kind, recorded: checkSnapshot(recorded, where, snapshotPointer), found, receipt };
}

function checkSnapshot(value: unknown, where: string, pointer: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0) {
    throw new LoretraceError('bad_trace_input', `${where}: ${pointer} must be a non-empty string (a vault snapshot_id)`, {
      file: where,
      pointer,
      expected: 'a snapshot_id string',
    });
  }
  return value;
}

/** The fields of a research_trace entry that the vault checks need (query is checked against the ledger, used_for never). */
type CheckedEntry = Omit<ResearchTraceEntry, 'query' | 'used_for'>;

/** Structural check of one entry: the fields verification needs, with their types. Throws `bad_trace_entry`. */
function checkEntry(entry: Record<string, unknown>, pointer: string, where: string): CheckedEntry {
  const fail = (field: string, expected: string): never => {
    const got = entry[field];
    throw new LoretraceError(
      'bad_trace_entry',
      `${where}: ${pointer}/${field} must be ${expected} (got ${got === undefined ? 'nothing' : preview(got, 100)})`,
      { file: where, pointer: `${pointer}/${field}`, expected, data: { field } },
    );
  };
  const str = (field: string): string => {
    const v = entry[field];
    return typeof v === 'string' && v.length > 0 ? v : fail(field, 'a non-empty string');
  };
  // Safe integers only: a JSON number above 2^53-1 (9007199254740991) has already lost precision when
  // parsed (99999999999999999999 reads as 100000000000000000000), so it can name no line or chunk.
  const int = (field: string, min: number): number => {
    const v = entry[field];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= min) return v;
    const expected = `an integer from ${min} to ${Number.MAX_SAFE_INTEGER}`;
    if (typeof v === 'number' && (!Number.isFinite(v) || (Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER))) {
      throw new LoretraceError(
        'bad_trace_entry',
        `${where}: ${pointer}/${field} must be ${expected} (got ${Number.isFinite(v) ? JSON.stringify(v) : String(v)}, beyond 2^53-1: a JSON number that large is not held exactly)`,
        { file: where, pointer: `${pointer}/${field}`, expected, data: { field } },
      );
    }
    return fail(field, expected);
  };
  const origin = entry['origin'];
  if (typeof origin !== 'string' || !(ORIGINS as readonly string[]).includes(origin)) {
    fail('origin', `one of ${ORIGINS.join(', ')}`);
  }
  return {
    trace_id: str('trace_id'),
    origin: origin as TraceOrigin,
    source_ref: str('source_ref'),
    source_path: str('source_path'),
    chunk_index: int('chunk_index', 0),
    line_start: int('line_start', 1),
    line_end: int('line_end', 1),
    extracted_constraint: str('extracted_constraint'),
  };
}

/**
 * Read the path rules of the input's `policy_receipt` (src/receipts/receipt-rules.ts). Null when the input
 * carries none. Throws `bad_trace_input` with the row's pointer (see {@link readReceiptRules}).
 */
function readReceipt(at: ReceiptAt | null, index: VaultIndex, where: string): ReceiptRules | null {
  return readReceiptRules(at, { namespace: index.namespace, index, where, code: 'bad_trace_input' });
}

/**
 * Does the receipt admit `path` for an entry of `origin`? Null when it does, else the refusing row's detail
 * (its expectation names runner_captured entries for those, any trace entry otherwise).
 */
function policyDetail(rules: ReceiptRules, path: string, note: NoteRecord | undefined, lines: readonly [number, number], origin: TraceOrigin = 'runner_captured'): string | null {
  return receiptDenial(rules, path, note, lines, origin === 'runner_captured' ? 'expected runner_captured entries only from paths the policy admits' : `expected ${origin} entries, as every trace entry, only from paths the policy admits`);
}

/** Lower-cased letter/digit word tokens (Unicode-aware), NFKC-normalised. */
function tokens(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

/**
 * Token containment of `claim` in `source`: |tokens(claim) ∩ tokens(source)| / |tokens(claim)| over
 * multisets, rounded to 4 decimals; 0 when the claim has no tokens. 1 means every word of the claim
 * occurs in the source (as often), which is what a faithful paraphrase or a verbatim quote scores.
 */
export function tokenContainment(claim: string, source: string): number {
  const claimTokens = tokens(claim);
  if (claimTokens.length === 0) return 0;
  const pool = new Map<string, number>();
  for (const t of tokens(source)) pool.set(t, (pool.get(t) ?? 0) + 1);
  let hit = 0;
  for (const t of claimTokens) {
    const n = pool.get(t) ?? 0;
    if (n > 0) {
      hit += 1;
      pool.set(t, n - 1);
    }
  }
  return Math.round((hit / claimTokens.length) * 10000) / 10000;
}

interface Lookup {
  notes: Map<string, NoteRecord>;
  chunks: Map<string, Chunk[]>;
}

function buildLookup(index: VaultIndex): Lookup {
  const notes = new Map<string, NoteRecord>();
  for (const n of index.notes) notes.set(n.path, n);
  const chunks = new Map<string, Chunk[]>();
  for (const c of index.chunks) {
    const list = chunks.get(c.path);
    if (list) list.push(c);
    else chunks.set(c.path, [c]);
  }
  return { notes, chunks };
}

/**
 * Check one entry's location (checks 1-3) and, when `rules` is given, its path against the policy receipt
 * (check 1b, any origin: a responder or coordinator entry citing lore the policy denies cites lore nobody
 * was given). Returns the failure with its detail, or the note when the location holds.
 */
function checkLocation(
  e: CheckedEntry,
  index: VaultIndex,
  lookup: Lookup,
  rules: ReceiptRules | null,
  view?: LineView,
): { failure: TraceFailure | 'policy_violation'; detail: string } | { note: NoteRecord } {
  const ns = index.namespace;
  let parsed: ReturnType<typeof parseRef>;
  try {
    parsed = parseRef(e.source_ref, { namespace: ns, label: 'source_ref' });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return { failure: 'missing_file', detail: `source_ref does not name a file of vault ${ns}: ${msg}` };
  }
  if (parsed.is_prefix) {
    return { failure: 'missing_file', detail: `source_ref ${JSON.stringify(e.source_ref)} names a folder, not a file` };
  }
  const refPath = parsed.path;
  const sourcePath = e.source_path.startsWith(`${ns}/`) && !lookup.notes.has(e.source_path) ? e.source_path.slice(ns.length + 1) : e.source_path;
  if (sourcePath.normalize('NFC') !== refPath) {
    return {
      failure: 'missing_file',
      detail: `source_ref names ${refPath} but source_path names ${e.source_path}; expected both to name the same file`,
    };
  }
  const note = lookup.notes.get(refPath);
  if (rules !== null && rules.rows > 0) {
    const detail = policyDetail(rules, refPath, note, [e.line_start, e.line_end], e.origin);
    if (detail !== null) return { failure: 'policy_violation', detail };
  }
  if (!note) {
    return { failure: 'missing_file', detail: `${refPath} is not in vault ${ns} (snapshot ${index.snapshot_id})` };
  }
  if (e.line_end < e.line_start || e.line_end > note.line_count) {
    return {
      failure: 'out_of_range',
      detail: `lines ${e.line_start}-${e.line_end} are not inside ${refPath}, which has ${note.line_count} line${note.line_count === 1 ? '' : 's'}; expected 1 ≤ line_start ≤ line_end ≤ ${note.line_count}`,
    };
  }
  const frag = parsed.fragment;
  // A `#La-Lb` of a responder's ref in a research session's line view names view lines too: compared at disk lines.
  const fragStart = frag && frag.kind === 'lines' ? (view ? view.firstDisk(frag.start) : frag.start) : 0;
  const fragEnd = frag && frag.kind === 'lines' ? (view ? view.lastDisk(frag.end) : frag.end) : 0;
  if (frag && frag.kind === 'lines' && (e.line_start < fragStart || e.line_end > fragEnd)) {
    return {
      failure: 'out_of_range',
      detail: `lines ${e.line_start}-${e.line_end} are not inside the source_ref's range L${frag.start}-L${frag.end}${view ? ` (disk lines ${fragStart}-${fragEnd})` : ''}`,
    };
  }
  const chunk = (lookup.chunks.get(refPath) ?? []).find((c) => c.chunk_index === e.chunk_index);
  if (!chunk) {
    return {
      failure: 'chunk_mismatch',
      detail: `${refPath} has no chunk ${e.chunk_index} (it has ${note.chunk_count} chunk${note.chunk_count === 1 ? '' : 's'})`,
    };
  }
  if (e.line_start < chunk.line_start || e.line_end > chunk.line_end) {
    return {
      failure: 'chunk_mismatch',
      detail: `lines ${e.line_start}-${e.line_end} are not inside chunk ${e.chunk_index} of ${refPath} (lines ${chunk.line_start}-${chunk.line_end})`,
    };
  }
  if (frag && frag.kind === 'chunk' && frag.index !== e.chunk_index) {
    return {
      failure: 'chunk_mismatch',
      detail: `source_ref names chunk ${frag.index} but chunk_index is ${e.chunk_index}`,
    };
  }
  return { note };
}

/**
 * Verify every research_trace entry of `input` against `index` (the vault now).
 *
 * `input` is a parsed JSON document of one of four kinds (detected by shape, see {@link TraceInputKind}):
 * a Ghostlight responder output capture (`lore_access.research_trace` and `parsed_output.research_trace`
 * are both checked), a capture fragment written by `loretrace retrieve --capture-out`, a traverse result
 * (`loretrace traverse --json`), or a proxy ledger export. Source refs may be namespaced
 * (`FixtureLore:World/A.md#chunk1`) or bare vault paths (`World/A.md`); `source_path` is vault-relative
 * (a leading `<namespace>/` is tolerated). Lines are 1-based inclusive; text of a range is the lines
 * joined with "\n" (src/types.ts). The disposition rules are on {@link TraceDisposition}.
 *
 * `ok` is false when no entry was found in the arrays (an empty bundle proves nothing, seed 003), when a
 * `runner_captured` status has no runner_captured entry under it (`runner_claim`), when
 * any `runner_captured` entry is not `verified` and ledger-backed, when an entry is `unbacked` (a
 * `research_trace_status: runner_captured` trace with entries of another origin), when an entry of any
 * origin cites a hidden or policy-denied ref (`policy_violation`), when a
 * `responder_reported` entry fails a vault check ({@link isFailedResponderEntry}), when a required seed of
 * a responder-lane ledger was never read, or when a given ledger is broken; and it is false (verdict
 * `integrity_only`) when no entry is ledger-backed at all — `unverifiable` entries of other origins never fail
 * the report, but they never make it `verified` either. `draft` is true when a given ledger is not closed.
 *
 * Ledgers (`options.ledgers`) are verified against their pinned heads (`options.pins`, plus the input's
 * own `ledger_head`), so a ledger cut at a record boundary fails as `ledger_broken` whenever anything pins
 * its head; without a pin it is `ledger_not_closed`.
 *
 * When the input carries a non-empty `policy_receipt` (traverse result, capture fragment, ledger export;
 * `lore_access.policy_receipt` in a capture), every entry's path (any origin) must be admitted by
 * it — inside an `allowed_prefix` row and on no deny row — else `policy_violation` (report.policy says
 * what was applied); a capture's entries must also cite none of its `isolation.hidden_context_refs` (check 1a). The receipt is taken as given: it shows a hand-edited trace, not a hand-edited receipt.
 *
 * Errors: `bad_trace_input` (not an object, trace not an array, bad snapshot_id, a policy_receipt that
 * is not an array of rows, a row clause that is not a lore ref of this vault, a non-empty receipt
 * without an allowed_prefix row; pointer given), `no_research_trace` (no trace array at all),
 * `bad_trace_entry` (an entry lacks a field or has the wrong type — line_start/line_end/chunk_index must
 * be safe integers (≤ 2^53-1), ≥ 1 / ≥ 1 / ≥ 0; pointer and field given), `stale_file` (from `readNoteLines`: a cited file changed since the index was built).
 *
 * @example
 *   const report = await verifyTrace(await indexVault('lore-fixtures/FixtureLore'), fragment, { file: 'frag.json' });
 *   report.totals // { verified: 0, …, unbacked: 3, … } — without its ledger, no entry is backed
 *   const backed = await verifyTrace(index, fragment, { ledgers: [{ file: 'run.ledger.jsonl', text }] });
 *   backed.totals // { verified: 3, text_mismatch: 0, …, unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, seed_not_consulted: 0, claimed_not_read: 0, ledger_not_closed: 0 }
 */
export async function verifyTrace(
  index: VaultIndex,
  input: unknown,
  options: VerifyTraceOptions = {},
): Promise<TraceVerificationReport> {
  const where = options.file ?? '';
  const located = locate(input, where);
  const checked = located.found.map(({ pointer, entry }) => ({ pointer, e: checkEntry(entry, pointer, where || 'input'), query: typeof entry['query'] === 'string' ? (entry['query'] as string) : null }));
  const drift = located.recorded !== null && located.recorded !== index.snapshot_id;
  const rules = readReceipt(located.receipt ?? options.policyReceipt ?? null, index, where || 'input');
  const named = checked.map((c) => parseTraceId(c.e.trace_id)?.ledger_id).find((id) => id !== undefined) ?? null;
  const ledgers = await loadLedgersFor(named, located, options);
  const lookup = buildLookup(index);
  const ledgerRules = new Map<string, ReceiptRules | null>();
  const vault = { index, lookup, rules, linesCache: new Map<string, string[]>(), drift, recorded: located.recorded, hiddenRefs: hiddenRefsOf(input, located.kind), views: checked.some((c) => c.e.origin === 'responder_reported') ? sessionLineViews(ledgers, index, lookup, ledgerRules) : new Map<string, SessionView>() };
  const backing: BackingContext = { located, ledgers, packet: expectedPacket(input, located.kind, options), index, lookup, rules, ledgerRules, bound: new Map() };
  const entries: TraceEntryVerdict[] = [];
  for (const { pointer, e, query } of checked) {
    const verdict = await vaultVerdict(e, pointer, vault);
    entries.push(ledgerVerdict(verdict, e, query, backing));
  }
  const notRead = claimedRefsNotRead(input, located.kind, checked.map((c) => c.e), ledgers);
  const claim = options.emptyRunnerTraceReported === true && located.kind === 'capture' && emptyLoreAccessTrace(input) ? null : runnerClaimWithoutEntry(located, checked);
  return summarise({ index, options, kind: located.kind, recorded: located.recorded, drift, rules, status: located.status, entries, ledgers, notRead, named, claim });
}

/** True when a capture's `lore_access.research_trace` holds no entry (empty or absent): `capture check`'s `research_trace_empty` case. */
function emptyLoreAccessTrace(doc: unknown): boolean {
  const access = isJsonObject(doc) ? doc['lore_access'] : undefined;
  const trace = isJsonObject(access) ? access['research_trace'] : undefined;
  return !(Array.isArray(trace) && trace.length > 0);
}

/** The hidden refs of check 1a: a capture's `isolation.hidden_context_refs` (its string entries), else []. */
function hiddenRefsOf(doc: unknown, kind: TraceInputKind): string[] {
  if (kind !== 'capture') return [];
  const iso = (doc as Record<string, unknown>)['isolation'];
  const refs = isJsonObject(iso) ? iso['hidden_context_refs'] : undefined;
  return Array.isArray(refs) ? refs.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * `no_runner_captured_entries` when the input's `research_trace_status` is `runner_captured` and the trace
 * array that status governs (`/lore_access/research_trace` of a capture, `/research_trace` otherwise) holds no
 * `runner_captured` entry — whatever entries of other origins it or `parsed_output.research_trace` hold; null
 * otherwise. The status claims the runner recorded the lookups; with no runner_captured entry there is no
 * receipt to check (seed 001: "runner_captured … is required for accepted gold research-enabled captures"), the
 * claim `capture check` calls `research_trace_empty` when the array is empty.
 */
function runnerClaimWithoutEntry(located: StatusAt, checked: readonly { pointer: string; e: CheckedEntry }[]): TraceRunnerClaim | null {
  if (located.status !== 'runner_captured' || located.statusPointer === null) return null;
  const governed = checked.filter((c) => c.pointer.startsWith(located.statusPointer!));
  if (governed.some((c) => c.e.origin === 'runner_captured')) return null;
  const pointer = located.statusPointer.slice(0, -1);
  const others = checked.length - governed.length;
  const held = governed.length === 0 ? 'holds no entry' : `holds ${governed.length} entr${governed.length === 1 ? 'y' : 'ies'}, none runner_captured`;
  const beside = others > 0 ? ` (the ${others} entr${others === 1 ? 'y' : 'ies'} of /parsed_output/research_trace ${others === 1 ? 'is' : 'are'} the responder's, not the runner's)` : '';
  return {
    code: 'no_runner_captured_entries',
    pointer,
    message: `research_trace_status is "runner_captured" but ${pointer} ${held}${beside}: a runner_captured claim with no receipt proves nothing (seed 001)`,
  };
}

/**
 * The `claimed_not_read` step of {@link verifyTrace}: each `consulted_refs` / `followed_refs` entry of a capture
 * fragment (top level) or a capture (`lore_access`) that the ledgers named by its trace entries (loaded, their
 * records verifying) never served or followed ({@link ledgerReadRefs}, {@link refsNotRead}: the rule `capture
 * check` applies). [] for other inputs, and when no such ledger is loaded (the entries are unbacked then).
 */
function claimedRefsNotRead(doc: unknown, kind: TraceInputKind, entries: readonly CheckedEntry[], ledgers: Awaited<ReturnType<typeof loadTraceLedgers>>): TraceVerificationReport['refs_not_read'] {
  const holder = kind === 'capture_fragment' ? doc : kind === 'capture' ? (doc as Record<string, unknown>)['lore_access'] : null;
  if (!isJsonObject(holder)) return [];
  const ids = new Set(entries.map((e) => parseTraceId(e.trace_id)?.ledger_id).filter((id): id is string => id !== undefined));
  const backing = ledgers.filter((l) => l.view !== null && ids.has(l.view.ledger_id) && l.verdict.disposition !== 'ledger_broken');
  if (backing.length === 0) return [];
  const names = backing.map((l) => l.verdict.file ?? l.view!.ledger_id);
  const base = kind === 'capture' ? '/lore_access' : '';
  const out: TraceVerificationReport['refs_not_read'] = [];
  for (const key of ['consulted_refs', 'followed_refs'] as const) {
    const claimed = holder[key];
    if (!Array.isArray(claimed)) continue;
    const read = [...new Set(backing.flatMap((l) => ledgerReadRefs(l.view!)[key]))];
    const label = `${kind === 'capture' ? 'lore_access.' : ''}${key}`;
    for (const r of refsNotRead(key, claimed, read, `${base}/${key}`, label, `ledger ${names.join(', ')}`)) out.push({ ...r, ledgers: names });
  }
  return out;
}

/** Step 1 of {@link verifyTrace}: verify the given ledgers against every pin, the input's `ledger_head` included. */
function loadLedgersFor(named: string | null, located: StatusAt, options: VerifyTraceOptions): ReturnType<typeof loadTraceLedgers> {
  const pins: LedgerHeadPin[] = [...(options.pins ?? [])];
  if (located.ledgerHead !== null) pins.push({ head: located.ledgerHead, source: `${options.file ?? 'the input'} /ledger_head` });
  return loadTraceLedgers(options.ledgers ?? [], pins, named, options.trustedKeys ?? []);
}

/** What {@link vaultVerdict} checks an entry against. */
interface VaultContext {
  index: VaultIndex;
  lookup: Lookup;
  rules: ReceiptRules | null;
  linesCache: Map<string, string[]>;
  drift: boolean;
  recorded: string | null;
  /** Per note path: the line view a research session served it in (see {@link sessionLineViews}). */
  views: ReadonlyMap<string, SessionView>;
  /** A capture's `isolation.hidden_context_refs` (strings only; [] for other inputs): check 1a. */
  hiddenRefs: readonly string[];
}

/** A note's line view in a research session: the view, and the view line of each hidden section's marker. */
interface SessionView {
  view: LineView;
  markers: number[];
}

/** The policy receipt of a loaded ledger's session, read once per ledger (cached in `cache` by ledger_id). */
function sessionRules(view: NonNullable<Awaited<ReturnType<typeof loadTraceLedgers>>[number]['view']>, where: string, index: VaultIndex, cache: Map<string, ReceiptRules | null>): ReceiptRules | null {
  let rules = cache.get(view.ledger_id);
  if (rules === undefined) {
    rules = readReceipt({ pointer: `${where} SESSION_OPENED /session/policy_receipt`, value: view.policy_receipt }, index, where);
    cache.set(view.ledger_id, rules);
  }
  return rules;
}

/**
 * The line views of the research sessions among the given ledgers (responder lane, `serve`, of this vault's
 * namespace; a ledger whose records do not verify gives none), by note path: a note with hidden sections was served with every section
 * counted as one marker line (docs/PROXY.md "Line numbers", src/proxy/withhold.ts `lineView`), so the line
 * numbers its responder was given, and cites, are view lines. The sections are those the sessions' policy
 * receipts resolve to in this snapshot (`ReceiptRules.sections`), merged per note.
 */
function sessionLineViews(ledgers: Awaited<ReturnType<typeof loadTraceLedgers>>, index: VaultIndex, lookup: Lookup, cache: Map<string, ReceiptRules | null>): Map<string, SessionView> {
  const sections = new Map<string, HiddenSection[]>();
  for (const l of ledgers) {
    if (l.view === null || l.view.mode !== 'responder_scoped_repository_search' || l.verdict.disposition === 'ledger_broken' || l.view.namespace !== index.namespace) continue;
    const rules = sessionRules(l.view, l.verdict.file ?? l.view.ledger_id, index, cache);
    for (const s of rules?.sections ?? []) sections.set(s.path, [...(sections.get(s.path) ?? []), s]);
  }
  const out = new Map<string, SessionView>();
  for (const [path, list] of sections) {
    const note = lookup.notes.get(path);
    if (note === undefined) continue;
    const view = lineView(note.line_count, list);
    out.set(path, { view, markers: [...new Set(list.map((s) => view.toView(s.line_start)))].sort((a, b) => a - b) });
  }
  return out;
}

/**
 * A responder_reported entry's lines read in the line view its research session served ({@link sessionLineViews}):
 * the disk lines they stand for, or why they stand for none — outside the view, or a marker line (the line that
 * stands for a hidden section is no line of the file). Null when the entry's note was served without hidden
 * sections (its view lines are its disk lines). 1-based, inclusive.
 */
function viewedLines(e: CheckedEntry, ctx: VaultContext): { line_start: number; line_end: number; view: LineView } | { failure: 'out_of_range'; detail: string } | null {
  if (e.origin !== 'responder_reported' || ctx.views.size === 0) return null;
  let path: string;
  try {
    path = parseRef(e.source_ref, { namespace: ctx.index.namespace }).path;
  } catch {
    return null;
  }
  const sv = ctx.views.get(path);
  if (sv === undefined) return null;
  const n = sv.view.lineCount;
  if (e.line_end < e.line_start || e.line_end > n) {
    return { failure: 'out_of_range', detail: `lines ${e.line_start}-${e.line_end} are not inside the line view the research session served of ${path}, which has ${n} line${n === 1 ? '' : 's'} (a hidden section counts as one line); expected 1 ≤ line_start ≤ line_end ≤ ${n}` };
  }
  const marker = sv.markers.find((m) => e.line_start <= m && m <= e.line_end);
  if (marker !== undefined) {
    return { failure: 'out_of_range', detail: `line ${marker} of the line view the research session served is the marker that stands for a hidden section of ${path}, not a line of the file; expected lines the session served` };
  }
  return { line_start: sv.view.firstDisk(e.line_start), line_end: sv.view.lastDisk(e.line_end), view: sv.view };
}

/**
 * Step 2 of {@link verifyTrace}: checks 1-5 of {@link TraceDisposition} against the vault as it is now. A
 * responder_reported entry on a note a research session served with hidden sections is checked at the disk
 * lines its view lines stand for ({@link viewedLines}); the verdict keeps the lines the entry states.
 */
async function vaultVerdict(e: CheckedEntry, pointer: string, ctx: VaultContext): Promise<TraceEntryVerdict> {
  const { index } = ctx;
  let disposition: TraceDisposition;
  let failure: TraceFailure | null = null;
  let detail: string | null = null;
  let similarity: number | null = null;
  let textVerified: boolean | null = false;
  const hidden = ctx.hiddenRefs.length > 0 ? hiddenRefNamedBy(e.source_ref, ctx.hiddenRefs) : null;
  if (hidden !== null) {
    const bound = parseTraceId(e.trace_id);
    return {
      pointer, trace_id: e.trace_id, origin: e.origin, source_ref: e.source_ref, source_path: e.source_path, chunk_index: e.chunk_index,
      line_start: e.line_start, line_end: e.line_end, disposition: 'policy_violation', cause: null, similarity: null, text_verified: false,
      ledger_record: bound ? `${bound.ledger_id}:${bound.seq}` : null,
      detail: `source_ref ${preview(e.source_ref, 200)} names the hidden ref ${preview(hidden, 200)} of isolation.hidden_context_refs (the packet's hidden_context_audit.omitted_context_refs); expected trace entries only from lore the packet does not omit`,
    };
  }
  const viewed = viewedLines(e, ctx);
  const d: CheckedEntry = viewed !== null && !('failure' in viewed) ? { ...e, line_start: viewed.line_start, line_end: viewed.line_end } : e;
  const at = d === e ? `lines ${e.line_start}-${e.line_end}` : `lines ${e.line_start}-${e.line_end} of the line view the research session served, disk lines ${d.line_start}-${d.line_end}`;
  const loc = viewed !== null && 'failure' in viewed ? viewed : checkLocation(d, index, ctx.lookup, ctx.rules, viewed === null ? undefined : viewed.view);
  if ('failure' in loc) {
    // policy_violation is decided by the receipt, not the vault: never `drifted`.
    failure = loc.failure === 'policy_violation' ? null : loc.failure;
    detail = loc.detail;
    disposition = loc.failure;
  } else {
    const path = loc.note.path;
    const lines = ctx.linesCache.get(path) ?? (await readNoteLines(index, path));
    ctx.linesCache.set(path, lines);
    const actual = sliceLines(lines, d.line_start, d.line_end);
    similarity = tokenContainment(e.extracted_constraint, actual);
    const exact = actual === e.extracted_constraint;
    if (e.origin === 'runner_captured') {
      if (exact) {
        disposition = 'verified';
        textVerified = true;
      } else {
        failure = 'text_mismatch';
        disposition = 'text_mismatch';
        detail = `extracted_constraint differs from lines ${e.line_start}-${e.line_end} of ${path} (token containment ${similarity}); expected the lines verbatim, joined with "\\n"`;
      }
    } else if (e.origin === 'responder_reported' && similarity < 1) {
      failure = 'text_mismatch';
      disposition = 'text_mismatch';
      detail = `responder_reported entry: ${at} of ${path} do not hold its extracted_constraint (token containment ${similarity}); expected a quote of those lines (every word in them)`;
    } else {
      disposition = 'unverifiable';
      textVerified = null;
      const where = d === e ? '' : ` (${at}: a hidden section counts as one line)`;
      detail = `${e.origin} entry: location checked${where}, text not held to verbatim (${exact ? 'verbatim match' : `token containment ${similarity}`}); not proof of the research path`;
    }
  }
  let cause: TraceFailure | null = null;
  if (ctx.drift && failure !== null) {
    cause = failure;
    disposition = 'drifted';
    detail = `vault changed since the trace was recorded (snapshot ${ctx.recorded} → ${index.snapshot_id}): ${detail}`;
  }
  const bound = parseTraceId(e.trace_id);
  return {
    pointer, trace_id: e.trace_id, origin: e.origin, source_ref: e.source_ref, source_path: e.source_path, chunk_index: e.chunk_index,
    line_start: e.line_start, line_end: e.line_end, disposition, cause, similarity, text_verified: textVerified,
    ledger_record: bound ? `${bound.ledger_id}:${bound.seq}` : null, detail,
  };
}

/** What {@link ledgerVerdict} checks a backed entry against. */
interface BackingContext {
  located: StatusAt;
  ledgers: Awaited<ReturnType<typeof loadTraceLedgers>>;
  packet: ExpectedPacket | null;
  index: VaultIndex;
  lookup: Lookup;
  /** The input's (or the caller's) receipt; when it has rows it is applied already (check 1b), the ledger session's is applied too (6b). */
  rules: ReceiptRules | null;
  /** The receipt of each backing ledger's session, read once (by ledger_id). */
  ledgerRules: Map<string, ReceiptRules | null>;
  /** Per trace array (pointer prefix): served piece `<ledger_id>:<seq>:<piece>` → pointer of the entry first bound to it. */
  bound: Map<string, string>;
}

/**
 * Steps 3 and 4 of {@link verifyTrace}: checks 6 (ledger backing of a runner_captured entry whose text
 * verified — then 6a-6d on the backing ledger: its packet, its session's policy, the entry's query, a
 * duplicate binding) and 7 (an entry of another origin in a trace whose status is runner_captured).
 */
function ledgerVerdict(v: TraceEntryVerdict, e: CheckedEntry, query: string | null, ctx: BackingContext): TraceEntryVerdict {
  const { located } = ctx;
  if (e.origin === 'runner_captured') {
    if (v.disposition !== 'verified') return v;
    const backing = checkBacking(e as ResearchTraceEntry, ctx.ledgers);
    if (!backing.backed) return { ...v, disposition: backing.disposition, ledger_record: backing.record_id, detail: backing.detail };
    const why = backedEntryProblem(v, e, query, backing, ctx);
    if (why !== null) return { ...v, disposition: why.disposition, ledger_record: backing.record_id, detail: why.detail };
    return { ...v, ledger_record: backing.record_id };
  }
  if (v.disposition === 'policy_violation') return v;
  if (located.status === 'runner_captured' && located.statusPointer !== null && v.pointer.startsWith(located.statusPointer)) {
    return { ...v, disposition: 'unbacked', detail: `research_trace_status is runner_captured but this entry's origin is ${e.origin}: every entry of a runner_captured trace must be a ledger-backed runner_captured entry (${v.detail ?? 'text not checked'})` };
  }
  // The responder's own trace of a runner_captured capture holds its quotes (responder_reported, check 4) or
  // the runner's entries; a coordinator reconstruction there is nobody's receipt.
  if (located.status === 'runner_captured' && e.origin === 'coordinator_reconstructed') {
    return { ...v, disposition: 'unbacked', detail: `research_trace_status is runner_captured but this entry's origin is coordinator_reconstructed: in a runner_captured capture an entry is the runner's (ledger-backed) or the responder's own quote (responder_reported), never a reconstruction (${v.detail ?? 'text not checked'})` };
  }
  return v;
}

/**
 * Checks 6a-6d of {@link TraceDisposition} on an entry its ledger record backs; null when all hold.
 * 6a packet: the ledger's SESSION_OPENED must pin the input's packet (id, and sha256 when known) —
 * `ledger_mismatch` naming both packet ids; 6b policy: whatever receipt the input (or its lock) carries,
 * the entry's path must be admitted by the policy_receipt of the ledger's session — `policy_violation`
 * (narrow, never widen: an input's own receipt can refuse more than the session, never admit more);
 * 6c query: the entry's `query` must be the one `exportLedger` derives from the record — `ledger_mismatch`
 * naming the field; 6d duplicate: a second entry of the same trace array bound to the same served piece
 * is `ledger_mismatch` (a capture may cite a subset of the ledger, but each piece once).
 */
function backedEntryProblem(
  v: TraceEntryVerdict, e: CheckedEntry, query: string | null, backing: Extract<ReturnType<typeof checkBacking>, { backed: true }>, ctx: BackingContext,
): { disposition: TraceDisposition; detail: string } | null {
  const view = backing.ledger.view!;
  const where = backing.ledger.verdict.file ?? view.ledger_id;
  const p = ctx.packet;
  if (p !== null && view.packet_id !== p.packet_id) {
    return { disposition: 'ledger_mismatch', detail: `ledger ${where} pins packet ${JSON.stringify(view.packet_id)} but the trace answers packet ${JSON.stringify(p.packet_id)} (${p.source}); a ledger backs only the trace of the packet its session served` };
  }
  if (p !== null && p.packet_sha256 !== null && view.packet_sha256 !== null && view.packet_sha256 !== p.packet_sha256) {
    return { disposition: 'ledger_mismatch', detail: `ledger ${where} pins packet ${JSON.stringify(view.packet_id)} with sha256 ${view.packet_sha256}, but packet ${JSON.stringify(p.packet_id)} (${p.source}) has sha256 ${p.packet_sha256}; a ledger backs only the trace of the packet its session served` };
  }
  // Narrow, never widen: the receipt the input (or its lock) carries may refuse more than the session did,
  // never admit more, so the ledger session's own policy is applied whatever receipt came with the input.
  const rules = sessionRules(view, where, ctx.index, ctx.ledgerRules);
  if (rules !== null && rules.rows > 0) {
    const path = backing.range.path;
    const detail = policyDetail(rules, path, ctx.lookup.notes.get(path), [e.line_start, e.line_end]);
    if (detail !== null) return { disposition: 'policy_violation', detail: `${detail} (the policy of ledger ${where}'s session)` };
  }
  const derived = entryWording(view, backing.call, backing.range).query;
  if (query !== derived) {
    return { disposition: 'ledger_mismatch', detail: `query ${query === null ? 'is missing' : preview(query, 100)}, but record ${backing.record_id} of ${where} derives query ${preview(derived, 100)}; expected the query the record gives (ledger export)` };
  }
  const array = v.pointer.slice(0, v.pointer.lastIndexOf('/'));
  const key = `${array}|${view.ledger_id}:${backing.call.seq}:${backing.piece}`;
  const first = ctx.bound.get(key);
  if (first !== undefined) {
    return { disposition: 'ledger_mismatch', detail: `duplicate binding: piece ${backing.piece} of record ${backing.record_id} already backs ${first}; each served piece backs one entry of a trace` };
  }
  ctx.bound.set(key, v.pointer);
  return null;
}

/** Step 5 of {@link verifyTrace}: seeds, totals (zeros included), verdict and the report. */
/**
 * True for a `responder_reported` entry that fails a vault check: its file is not in the snapshot, its range
 * is outside the file or its chunk, or its lines do not hold its quote (checks 1c-4 of
 * {@link TraceDisposition}; `drifted` when the vault changed since). A responder may paraphrase in
 * `used_for`, never in `extracted_constraint` (seed 001: the trace says which lines constrained the answer),
 * so such an entry fails the report, and `assembleCapture` keeps the capture a draft.
 */
export function isFailedResponderEntry(v: Pick<TraceEntryVerdict, 'origin' | 'disposition'>): boolean {
  return v.origin === 'responder_reported' && (v.disposition === 'text_mismatch' || v.disposition === 'out_of_range' || v.disposition === 'chunk_mismatch' || v.disposition === 'missing_file' || v.disposition === 'drifted');
}

function summarise(r: {
  index: VaultIndex; options: VerifyTraceOptions; kind: TraceInputKind; recorded: string | null; drift: boolean; rules: ReceiptRules | null;
  status: string | null; entries: TraceEntryVerdict[]; ledgers: Awaited<ReturnType<typeof loadTraceLedgers>>;
  notRead: TraceVerificationReport['refs_not_read']; named: string | null; claim: TraceRunnerClaim | null;
}): TraceVerificationReport {
  const { entries, rules } = r;
  const seeds = checkSeeds(r.ledgers);
  const totals = Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, 0])) as Record<TraceDisposition, number>;
  for (const v of entries) totals[v.disposition] += 1;
  totals.seed_not_consulted = seeds.filter((s) => s.disposition === 'seed_not_consulted').length;
  totals.claimed_not_read = r.notRead.length;
  totals.ledger_not_closed = r.ledgers.filter((l) => l.verdict.disposition === 'ledger_not_closed').length;
  for (const code of AUTHORSHIP_CODES) totals[code] = r.ledgers.filter((l) => l.verdict.disposition === code).length;
  const trusted = r.options.trustedKeys ?? [];
  const runner = entries.filter((v) => v.origin === 'runner_captured');
  const failed = runner.filter((v) => v.disposition !== 'verified').length;
  const broken = r.ledgers.some((l) => l.verdict.disposition === 'ledger_broken' || (AUTHORSHIP_CODES as readonly string[]).includes(l.verdict.disposition));
  // Without a lock's packet, the one the named ledger's session pins (a packet edited after the run fails).
  const pf = r.options.packetFile ?? r.options.ledgerPackets?.find((p) => p.ledger_id === r.named);
  const packetFile: TracePacketFileCheck | null = pf === undefined ? null : {
    file: pf.file, source: pf.source, locked_sha256: pf.locked_sha256, sha256: pf.sha256,
    disposition: pf.sha256 === null ? 'packet_missing' : pf.sha256 === pf.locked_sha256 ? 'unchanged' : 'packet_changed',
  };
  const inf = r.options.inputFile;
  const inputFile: TraceInputFileCheck | null = inf === undefined ? null : { ...inf, disposition: inf.sha256 === inf.locked_sha256 ? 'unchanged' : 'changed' };
  const responderFailed = entries.some(isFailedResponderEntry);
  const integrityOk = entries.length > 0 && r.claim === null && failed === 0 && totals.unbacked === 0 && totals.policy_violation === 0 && totals.seed_not_consulted === 0 && totals.claimed_not_read === 0 && !broken && !responderFailed && (packetFile === null || packetFile.disposition === 'unchanged') && (inputFile === null || inputFile.disposition === 'unchanged');
  // A receipt anyone could write by hand is worthless (seed 001): a report that rests on a ledger whose
  // authorship nobody checked is integrity-only, never plain verified.
  // A trace with no ledger-backed entry rests on nothing but its own say-so: never verified.
  const verdict = verificationVerdict(integrityOk, runner.length - failed === 0 || trusted.length === 0);
  return {
    schema_version: 'loretrace.trace_verification.v1',
    file: r.options.file ?? null,
    input_kind: r.options.inputKind !== undefined && r.kind === 'capture_fragment' ? r.options.inputKind : r.kind,
    namespace: r.index.namespace,
    snapshot: {
      current: r.index.snapshot_id,
      recorded: r.recorded,
      drift: r.drift,
      holding: r.drift ? entries.filter((v) => v.text_verified === true).map((v) => v.trace_id) : [],
    },
    policy: {
      receipt: rules?.pointer ?? null,
      rows: rules?.rows ?? 0,
      checked: rules !== null && rules.rows > 0,
      allowed_prefixes: rules?.allowed.map((a) => a.path) ?? [],
      deny_rows: rules ? new Set([...rules.before, ...rules.after].map((d) => d.row)).size : 0,
    },
    research_trace_status: r.status,
    ledgers: r.ledgers.map((l) => l.verdict),
    seeds,
    refs_not_read: r.notRead,
    authorship: { checked: trusted.length > 0, trusted_key_ids: trusted.map((k) => k.key_id), note: trusted.length > 0 ? null : AUTHORSHIP_NOT_CHECKED },
    totals,
    runner_captured: { checked: runner.length, failed, ledger_backed: runner.length - failed },
    verdict,
    ok: verdict === 'verified',
    integrity_ok: integrityOk,
    draft: totals.ledger_not_closed > 0,
    entries,
    ...(packetFile !== null ? { packet_file: packetFile } : {}),
    ...(inputFile !== null ? { input_file: inputFile } : {}),
    ...(r.claim !== null ? { runner_claim: r.claim } : {}),
  };
}

/**
 * The ledger record form (seed 004): what one line of a loretrace ledger holds, how it is hashed, and how
 * the records of every format version read as one view.
 *
 * `loretrace.ledger.v4` (written): the v3 record form below, each line the record's RFC 8785 form byte for byte
 * (keys sorted, no white space) and a line feed ({@link serialiseRecord}), so the bytes of a line are the
 * document its `record_hash` covers and a ledger has one byte form: a line re-saved with CRLF, re-indented or with
 * its keys reordered is refused (`ledger_not_canonical`, src/receipts/ledger.ts).
 *
 * `loretrace.ledger.v3` (read and verified, no longer written; its lines were `JSON.stringify` of the record,
 * keys in the order the writer built them): every record carries `ledger_id`, `seq`, `record_id`
 * (`<ledger_id>:<seq>`), `kind` (`SESSION_OPENED`, `TOOL_CALL`, `TOOL_RESULT`, `TOOL_REFUSED`,
 * `SESSION_CLOSED`), `occurred_on`, `actor`, `canonical_form: "RFC8785"`, `prev_hash` and
 * `record_hash = SHA-256( UTF-8( prev_hash ‖ JCS(record without prev_hash and record_hash) ) )`, where JCS
 * is the RFC 8785 JSON Canonicalization Scheme (package `canonicalize`). Payload hashes, not payloads: a
 * served read records the ref, the line range, the sha256 of the served text and the snapshot id — never
 * the lore text; `payload_hash` is the sha256 of the RFC 8785 form of the exact answer the client got.
 *
 * Two records per tool call (seed 004 names the call and its outcome as kinds of their own): `TOOL_CALL`
 * (tool, transport, the bounded request as `arguments`, who asked, when it arrived) is written before the
 * call runs; its outcome (`TOOL_RESULT` or `TOOL_REFUSED`: tool, transport, `call_record_id` naming the
 * `TOOL_CALL`, `payload_hash`, `outcome`) follows it, and both are fsync'ed once before the answer leaves.
 * The outcome's `seq` is the number the client sees (`Loretrace-Ledger-Seq`,
 * `_meta["loretrace/ledger_seq"]`) and the one a trace_id names: it is the record that served the text.
 *
 * `loretrace.ledger.v2` (read and verified, no longer written): the same form with one record per call —
 * its kind the outcome, carrying the request (`arguments`) itself, no `TOOL_CALL`.
 *
 * `loretrace.ledger.v1` (read and verified, no longer written): `time`, kinds `session_start` /
 * `tool_call` / `session_end`, the served text kept in `outcome.returned[].text`. {@link viewLedger}
 * reads all three into one {@link LedgerView}.
 */
import canonicalize from 'canonicalize';
import { LoretraceError } from '../errors.js';
import type { VaultPath } from '../types.js';
import { sha256Hex } from '../vault/hash.js';
import type { EscapedCharacters, RefusalCode } from '../proxy/refusals.js';

/** `schema_version` of every ledger record written by this version. */
export const LEDGER_SCHEMA_VERSION = 'loretrace.ledger.v4';

/** `schema_version` of the v4 record form written as `JSON.stringify` lines (keys in build order), still read and verified. */
export const LEDGER_V3_SCHEMA_VERSION = 'loretrace.ledger.v3';

/** `schema_version` of the one-record-per-call format (no `TOOL_CALL`), still read and verified. */
export const LEDGER_V2_SCHEMA_VERSION = 'loretrace.ledger.v2';

/** `schema_version` of the first format, still read and verified. */
export const LEDGER_V1_SCHEMA_VERSION = 'loretrace.ledger.v1';

/** `canonical_form` of every v2, v3 and v4 record: the RFC 8785 JSON Canonicalization Scheme. */
export const CANONICAL_FORM = 'RFC8785';

/** `prev_hash` of the first record (seq 0): 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** Record kinds of a v3 or v4 ledger (seed 004's names); a v2 ledger has all but `TOOL_CALL`. */
export type LedgerKind = 'SESSION_OPENED' | 'TOOL_CALL' | 'TOOL_RESULT' | 'TOOL_REFUSED' | 'SESSION_CLOSED';

/** The kinds that record a call's outcome (v2 to v4), and v1's one tool kind. */
export const OUTCOME_KINDS: ReadonlySet<string> = new Set(['TOOL_RESULT', 'TOOL_REFUSED', 'tool_call']);

/**
 * Who performed the recorded action (seed 004 `actor`): `agent` — the responder that asked (its
 * `responder_agent_id` from the packet; the transport does not authenticate it); `system` — the loretrace
 * runner itself (`loretrace-proxy`, `loretrace-retrieve`).
 */
export interface LedgerActor {
  kind: 'agent' | 'system';
  id: string;
}

/** How a note entered the proxy session's admitted set. */
export type AdmissionVia = 'seed' | 'scope' | 'follow';

/** One lore range served to the client, as a v2, v3 or v4 record holds it: location and text hash, no text. */
export interface ServedRange {
  /** Ref of the range: `Ns:path#chunkN` for a whole chunk, else `Ns:path#L<a>-L<b>`. */
  ref: string;
  path: VaultPath;
  /** Chunk containing the range (0 when the line lies before the first chunk, e.g. in frontmatter). */
  chunk_index: number;
  /** 1-based inclusive lines of the original file. */
  line_start: number;
  line_end: number;
  /** SHA-256 (hex) of the whole file as read (equal to the index manifest's). */
  file_sha256: string;
  /** SHA-256 (hex) of the served text: the lines joined with "\n", UTF-8. */
  text_sha256: string;
  /**
   * How the note was admitted and at which link depth (0 for seeds and scope entries); `traversal` for a
   * note the coordinator walk of `retrieve` reached (its `depth` is null: retrieve records what the walk
   * excerpted, not the hops it took).
   */
  via: AdmissionVia | 'traversal';
  depth: number | null;
}

/** A v1 returned range: a {@link ServedRange} plus the text itself. */
export interface ReturnedRangeV1 extends ServedRange {
  text: string;
}

/** Outcome of an admitted tool call. Which optional fields appear depends on the tool. */
export interface LedgerOkOutcome {
  status: 'ok';
  /** Snapshot of the vault the call was served from. */
  snapshot_id: string;
  /** `lore_read` (retrieve: `read`): the ranges served, one per chunk touched. */
  served?: ServedRange[];
  /** retrieve `search`: the traversal query. */
  query?: string;
  /** `lore_search` (retrieve: `search`): the hits returned (no text). */
  results?: { ref: string; path: string; chunk_index: number; line_start: number; line_end: number; score: number }[];
  /** `lore_links`: per link, its target ref (null when unresolved or hidden) and the follow decision. */
  links?: { line: number; column: number; target_ref: string | null; follow: string }[];
  /** `lore_follow`: the admitted target. */
  admitted?: { ref: string; path: string; depth: number; from_ref: string; link_line: number; link_column: number; newly_admitted: boolean };
  /** Characters (UTF-16 code units) of lore text returned by this call. */
  chars_returned: number;
  /**
   * `lore_read`: the invisible characters escaped in the text the client got, as counts and kinds (never
   * the characters themselves); present only when some were. `served[].text_sha256` stays the hash of the
   * vault's text, so coverage and ledger export re-derive it; `payload_hash` covers the escaped answer.
   */
  escaped_characters?: EscapedCharacters;
  /**
   * `lore_read`: the spans of hidden sections the read overlapped and served as a marker line — their
   * lines and the SHA-256 of their text, never the text; present only when some were.
   */
  withheld?: { line_start: number; line_end: number; text_sha256: string }[];
}

/** Outcome of a refused tool call: `code` is what the client saw, `reason` the true reason. */
export interface LedgerRefusedOutcome {
  status: 'refused';
  code: RefusalCode;
  /** The true reason (e.g. `hidden_ref` where the client saw `not_found`). */
  reason: string;
  /** The full message (may name hidden refs; never shown to the client for `not_found`). */
  message: string;
}

/** What a tool record says happened: the refs and ranges served, or the refusal with its true reason. */
export type LedgerOutcome = LedgerOkOutcome | LedgerRefusedOutcome;

/** What the `SESSION_OPENED` record pins. */
export interface LedgerSessionInfo {
  loretrace_version: string;
  /** `proxy` (responder lane, `loretrace serve`) or `retrieve` (coordinator lane). */
  runner: 'proxy' | 'retrieve';
  /** The packet the session serves (proxy) or the run wrote (retrieve): the one the responder is handed. */
  packet_id: string;
  /** SHA-256 (hex) of that packet file's bytes (null when it is not read from or written to a file). */
  packet_sha256: string | null;
  /** That packet file (informational): as given on the command line (proxy), relative to the ledger's folder (retrieve). */
  packet_file: string | null;
  /**
   * Where the vault is, as a verifier needs it: its namespace and content snapshot (every path in the ledger is
   * vault-relative, every served range carries its file's sha256). `loretrace.ledger.v4` records no vault
   * location: an absolute root (`lore_root`, which v1–v3 wrote, informational only — no check ever read it) made
   * the same run on a moved or another machine's vault a different ledger (another ledger_id, every record_hash
   * and trace_id), and handed the runner's file-system layout to whoever got the receipts.
   */
  namespace: string;
  snapshot_id: string;
  mode: 'responder_scoped_repository_search' | 'coordinator_scoped_retrieval';
  policy_receipt: unknown[];
  budgets: Record<string, number | null>;
  limits: Record<string, number>;
  /** The policy's `required_seed_refs` (verify-trace reports any never read as `seed_not_consulted`). */
  required_seeds: { ref: string; path: string }[];
  /**
   * Proxy: the seeds and scope entries admitted at depth 0. Retrieve (written once the walk is complete):
   * every note the walk consulted (`seed`, `scope`) or reached by a link (`follow`), in the fragment's order.
   */
  admitted: { ref: string; path: string; via: AdmissionVia }[];
  /** Seeds and scope entries that were not admitted, with the true reason. */
  not_admitted: { ref: string; reason: string }[];
}

/**
 * The `signature` field of a signed `SESSION_CLOSED` record (src/receipts/signing.ts): Ed25519 over the
 * RFC 8785 form of the record with `prev_hash` and without `signature` and `record_hash`.
 */
export interface LedgerSignature {
  alg: 'ed25519';
  /** First 16 hex digits of SHA-256 over the raw 32-byte public key. */
  key_id: string;
  /** The raw 32-byte Ed25519 public key, base64url without padding (43 characters). */
  public_key: string;
  /** The 64-byte Ed25519 signature, base64url without padding (86 characters). */
  sig: string;
}

/** A signing key as the ledger writers hold it (src/receipts/signing.ts `readSigningKey`). */
export interface LedgerSigner {
  /** The key's id (first 16 hex digits of SHA-256 over the raw public key). */
  key_id: string;
  /** The raw public key, base64url (what the signature record carries). */
  public_key: string;
  /**
   * Sign a record body: `body` is the closing record with `prev_hash` and without `signature` and
   * `record_hash`; returns its {@link LedgerSignature}.
   */
  sign(body: object): LedgerSignature;
}

/** A v4 ledger record without its two hash fields (what is hashed). */
export interface LedgerRecordBody {
  schema_version: typeof LEDGER_SCHEMA_VERSION;
  /** `lt-` + 16 hex digits, the same on every record of one ledger (see {@link ledgerIdOf}). */
  ledger_id: string;
  seq: number;
  /** `<ledger_id>:<seq>`. */
  record_id: string;
  kind: LedgerKind;
  /** ISO 8601 UTC time the record was written. */
  occurred_on: string;
  actor: LedgerActor;
  canonical_form: typeof CANONICAL_FORM;
  /** TOOL_RESULT / TOOL_REFUSED: `record_id` of the `TOOL_CALL` this record answers. */
  call_record_id?: string;
  /** TOOL_*: tool name as requested (unknown names are recorded too); an outcome repeats its call's. */
  tool?: string;
  /** TOOL_*: `mcp`, `http`, `direct` (library call) or `retrieve`. */
  transport?: string;
  /** TOOL_CALL: the arguments as received (long strings digested, see ServerLimits.ledger_max_arg_chars). */
  arguments?: unknown;
  /** TOOL_RESULT / TOOL_REFUSED: SHA-256 of the RFC 8785 form of the answer the client got. */
  payload_hash?: string;
  outcome?: LedgerOutcome;
  /** `SESSION_OPENED` only. */
  session?: LedgerSessionInfo;
  /** `SESSION_CLOSED` only: totals, zeros included (seed 003). */
  totals?: Record<string, number>;
  /**
   * `SESSION_CLOSED` of a ledger written with a signing key only: Ed25519 over the RFC 8785 form of this
   * record with `prev_hash` and without `signature` and `record_hash` (src/receipts/signing.ts). Inside
   * `record_hash`: the record is signed first, then hashed with its signature.
   */
  signature?: LedgerSignature;
}

/** A complete v4 ledger record. */
export interface LedgerRecord extends LedgerRecordBody {
  prev_hash: string;
  record_hash: string;
}

/** What a caller appends: the record's own fields; the chain adds ids, seq, form and hashes. */
export interface LedgerEntry {
  kind: LedgerKind;
  occurred_on: string;
  actor: LedgerActor;
  /** An outcome: the `record_id` of its `TOOL_CALL`. */
  call_record_id?: string;
  tool?: string;
  transport?: string;
  arguments?: unknown;
  /** The answer the client got; recorded as `payload_hash` only. */
  payload?: unknown;
  outcome?: LedgerOutcome;
  session?: LedgerSessionInfo;
  totals?: Record<string, number>;
}

/** A UTF-16 surrogate without its pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The RFC 8785 canonical JSON text of `value`. A string with a lone surrogate (possible in a JSON request,
 * not in UTF-8 text) has no RFC 8785 form; it is made well-formed first (U+FFFD), as UTF-8 output would.
 * @throws LoretraceError `ledger_bad_record` when the value has no JSON form at all (NaN, a cycle).
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = plainCanonicalJson(value);
    if (text !== undefined) return text;
    text = canonicalize(value);
  } catch {
    try {
      text = canonicalize(JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\uFFFD') : v))));
    } catch (e) {
      throw new LoretraceError('ledger_bad_record', `a ledger record has no RFC 8785 canonical JSON form: ${(e as Error).message}`);
    }
  }
  if (text === undefined) throw new LoretraceError('ledger_bad_record', 'a ledger record has no canonical JSON form');
  return text;
}

/** Nesting depth past which {@link plainCanonicalJson} leaves a value to the library (which detects cycles). */
const PLAIN_MAX_DEPTH = 64;

/** A lone surrogate: in a `u` regex a paired surrogate is one code point, so only unpaired ones are `Cs`. */
const HAS_LONE_SURROGATE = /\p{Cs}/u;

/** Thrown inside {@link plainCanonicalJson} when a value is not plain JSON data. */
class NotPlain {}

/**
 * The RFC 8785 form of a value made only of plain JSON data — null, booleans, finite numbers,
 * well-formed strings, arrays and objects without `toJSON` — or `undefined` for anything else (a lone
 * surrogate, NaN, a `toJSON` object, nesting past {@link PLAIN_MAX_DEPTH}), which the `canonicalize`
 * package then handles. For plain data the text is the package's, byte for byte (tests/canonical-json.test.ts
 * compares both on random values and real records): keys sorted by UTF-16 code units (`sort()`),
 * primitives and keys as `JSON.stringify` writes them (RFC 8785 §3.2.2 is ECMAScript's serialisation),
 * `undefined` members left out and `undefined` array items written `null`. The package checks every
 * string character by character in JavaScript; here the output of `JSON.stringify` is scanned for the escape
 * of a lone surrogate ({@link plainString}), which halves what a proxy call spends hashing its ledger record
 * and answer (docs/PERFORMANCE.md, rounds 3 and 5).
 */
export function plainCanonicalJson(value: unknown): string | undefined {
  try {
    return plainText(value, 0);
  } catch (e) {
    if (e instanceof NotPlain) return undefined;
    throw e;
  }
}

/**
 * A string as `JSON.stringify` writes it, which for a well-formed string is its RFC 8785 form (§3.2.2.2).
 * `JSON.stringify` writes a lone surrogate as a lower-case `\udXXX` escape (ECMAScript's well-formed
 * JSON.stringify), so a text without `\ud` had none and is returned as it is; only a text with one (a lone
 * surrogate, or a backslash before `ud` in the value) is checked character by character. One native scan of
 * the output instead of a regular-expression pass over every string: the lore text of a `lore_read` answer is
 * most of what a call hashes.
 */
function plainString(value: string): string {
  const text = JSON.stringify(value);
  if (text.includes('\\ud') && HAS_LONE_SURROGATE.test(value)) throw new NotPlain();
  return text;
}

function plainText(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return plainString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new NotPlain();
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (depth >= PLAIN_MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw new NotPlain();
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (i > 0) out += ',';
          out += item === undefined || typeof item === 'symbol' ? 'null' : plainText(item, depth + 1);
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined || typeof item === 'symbol') continue;
        out += (first ? '' : ',') + plainString(key) + ':' + plainText(item, depth + 1);
        first = false;
      }
      return out + '}';
    }
    default:
      throw new NotPlain();
  }
}

/**
 * `record_hash` of a record given the previous hash (seed 004):
 * SHA-256 over UTF-8(prevHash + JCS(record)), lower-case hex. Hash fields in `body` are ignored.
 */
export function hashLedgerRecord(prevHash: string, body: object): string {
  const { prev_hash: _p, record_hash: _r, ...rest } = body as Record<string, unknown>;
  return sha256Hex(prevHash + canonicalJson(rest));
}

/**
 * The `ledger_id` of a ledger whose first record opens with `occurred_on` and `session`: `lt-` + the first
 * 16 hex digits of SHA-256 over the RFC 8785 form of `{ occurred_on, session }`. Content-addressed, so the
 * same opening gives the same id and a reader can recompute it.
 */
export function ledgerIdOf(occurredOn: string, session: unknown): string {
  return `lt-${sha256Hex(canonicalJson({ occurred_on: occurredOn, session })).slice(0, 16)}`;
}

/** Options of a {@link LedgerChain}. */
export interface LedgerChainOptions {
  /** Sign the `SESSION_CLOSED` record with this runner key (src/receipts/signing.ts); none: unsigned. */
  signer?: LedgerSigner | null;
  /**
   * Keep every committed record in {@link LedgerChain.records} (default true: retrieve reads them back and
   * writes {@link LedgerChain.text} at the end). The file writer passes false: its records are on disk, and a
   * proxy session of 2,000 calls would otherwise hold them all (≈ 10 KB a call) in its heap.
   */
  keepRecords?: boolean;
}

/**
 * An in-memory hash chain of v4 records: assigns `ledger_id` (from the first record, which must be
 * `SESSION_OPENED`), `seq`, `record_id`, `canonical_form`, `payload_hash`, `prev_hash` and `record_hash`,
 * and with a signer the `signature` of the `SESSION_CLOSED` record (before its `record_hash`).
 * {@link LedgerWriter} writes its records to a file; retrieve keeps them and writes the text at the end.
 */
export class LedgerChain {
  private ledgerId: string | null = null;
  private seq = 0;
  private prev = GENESIS_HASH;
  private readonly signer: LedgerSigner | null;
  private readonly keepRecords: boolean;
  /** The committed records, in seq order (empty when the chain was made with `keepRecords: false`). */
  readonly records: LedgerRecord[] = [];

  constructor(options: LedgerChainOptions = {}) {
    this.signer = options.signer ?? null;
    this.keepRecords = options.keepRecords ?? true;
  }

  /** `key_id` of the key that signs the closing record, or null for an unsigned chain. */
  get signerKeyId(): string | null {
    return this.signer?.key_id ?? null;
  }

  /** Next seq to be assigned. */
  get nextSeq(): number {
    return this.seq;
  }

  /** record_hash of the last record (GENESIS_HASH before the first). */
  get headHash(): string {
    return this.prev;
  }

  /** The ledger's id (null before the first record). */
  get id(): string | null {
    return this.ledgerId;
  }

  /**
   * Build the next record without committing it; {@link commit} makes it part of the chain. (The file
   * writer commits only once the line is written.)
   * @throws LoretraceError `ledger_bad_record` when the first record is not `SESSION_OPENED` with a session.
   */
  next(entry: LedgerEntry): LedgerRecord {
    let ledgerId = this.ledgerId;
    if (ledgerId === null) {
      if (entry.kind !== 'SESSION_OPENED' || entry.session === undefined) {
        throw new LoretraceError('ledger_bad_record', `the first record of a ledger must be SESSION_OPENED with its session (got ${entry.kind})`);
      }
      ledgerId = ledgerIdOf(entry.occurred_on, entry.session);
    }
    const { payload, ...fields } = entry;
    const body: LedgerRecordBody = {
      schema_version: LEDGER_SCHEMA_VERSION,
      ledger_id: ledgerId,
      seq: this.seq,
      record_id: `${ledgerId}:${this.seq}`,
      kind: fields.kind,
      occurred_on: fields.occurred_on,
      actor: fields.actor,
      canonical_form: CANONICAL_FORM,
      ...(fields.call_record_id !== undefined ? { call_record_id: fields.call_record_id } : {}),
      ...(fields.tool !== undefined ? { tool: fields.tool } : {}),
      ...(fields.transport !== undefined ? { transport: fields.transport } : {}),
      ...('arguments' in fields ? { arguments: fields.arguments } : {}),
      ...(payload !== undefined ? { payload_hash: sha256Hex(canonicalJson(payload)) } : {}),
      ...(fields.outcome !== undefined ? { outcome: fields.outcome } : {}),
      ...(fields.session !== undefined ? { session: fields.session } : {}),
      ...(fields.totals !== undefined ? { totals: fields.totals } : {}),
    };
    // The closing record is signed with its prev_hash (so the signature covers the chain), then hashed
    // with the signature in it (so a pinned head pins the signer).
    if (body.kind === 'SESSION_CLOSED' && this.signer !== null) body.signature = this.signer.sign({ ...body, prev_hash: this.prev });
    return { ...body, prev_hash: this.prev, record_hash: hashLedgerRecord(this.prev, body) };
  }

  /** Make `record` (from {@link next}) the chain's head. */
  commit(record: LedgerRecord): void {
    this.ledgerId = record.ledger_id;
    this.seq = record.seq + 1;
    this.prev = record.record_hash;
    if (this.keepRecords) this.records.push(record);
  }

  /** {@link next} then {@link commit}. */
  append(entry: LedgerEntry): LedgerRecord {
    const record = this.next(entry);
    this.commit(record);
    return record;
  }

  /** The chain as ledger text: one JSON line per record, LF-terminated. */
  text(): string {
    return this.records.map(serialiseRecord).join('');
  }
}

/**
 * One JSONL line of a `loretrace.ledger.v4` ledger: the record's RFC 8785 form ({@link canonicalJson}: keys sorted
 * by UTF-16 code units, no white space, ECMAScript number and string forms), then a line feed — the one byte form
 * a record has, which `verifyLedger` requires of every v4 line (`ledger_not_canonical`).
 * @throws LoretraceError `ledger_bad_record` when the record has no JSON form (NaN, a cycle).
 */
export function serialiseRecord(record: LedgerRecord): string {
  return canonicalJson(record) + '\n';
}

// ---------------------------------------------------------------------------------------------------------
// One view of every version

/** One served range as read back from any version (`text` only from v1, which kept it). */
export interface ViewedRange extends ServedRange {
  text?: string;
}

/**
 * One tool call as read back from any version: `seq` and `record_hash` are its outcome record's (the
 * record that served the text, which a trace_id names); `call_seq` its v3 `TOOL_CALL` record's (null for
 * v1 and v2, whose one record holds both); `arguments` the request as recorded.
 */
export interface ViewedCall {
  seq: number;
  record_hash: string;
  call_seq: number | null;
  tool: string;
  arguments: unknown;
  outcome: { status: 'ok'; served: ViewedRange[]; results?: { ref: string; path: string; line_start: number; line_end: number }[]; admitted?: { ref: string; path: string; depth: number; newly_admitted?: boolean } }
    | { status: 'refused'; code: string; reason: string };
}

/** A verified ledger read into one shape, whatever its version. */
export interface LedgerView {
  schema_version: typeof LEDGER_SCHEMA_VERSION | typeof LEDGER_V3_SCHEMA_VERSION | typeof LEDGER_V2_SCHEMA_VERSION | typeof LEDGER_V1_SCHEMA_VERSION;
  /** v2, v3, v4: the records' `ledger_id`; v1: `lt-` + the first 16 hex digits of seq 0's record_hash. */
  ledger_id: string;
  namespace: string;
  snapshot_id: string;
  packet_id: string;
  /** SHA-256 (hex) of the packet file the session pinned; null when it pinned none (v1, or no file). */
  packet_sha256: string | null;
  mode: string;
  runner: 'proxy' | 'retrieve';
  policy_receipt: unknown[];
  /** v2 to v4: the session's required seeds; v1: the admitted notes with `via: seed`. */
  required_seeds: { ref: string; path: string }[];
  /** The session's `admitted` list (see {@link LedgerSessionInfo}). */
  admitted: { ref: string; path: string; via: string }[];
  /** Calls that have an outcome, in outcome order (a v3 or v4 `TOOL_CALL` still unanswered is not among them). */
  calls: ViewedCall[];
  /** record_hash per seq. */
  hashes: string[];
  head: string;
  closed: boolean;
  /**
   * `key_id` of the signature the closing record carries, as stated (null when unsigned). Whether it
   * verifies, and whether the key is trusted, is `verifyLedger`'s `authorship`, not the view's.
   */
  signer_key_id: string | null;
}

/**
 * Read verified records (any version) into a {@link LedgerView}. Call only on records that
 * `verifyLedger` accepted (it checks shape, chain, kinds and, for v3 and v4, that every outcome names its call);
 * an empty list is refused. A v3 or v4 outcome takes its `arguments` from the `TOOL_CALL` it names.
 * @throws LoretraceError `ledger_empty` for no records.
 */
export function viewLedger(records: readonly Record<string, unknown>[]): LedgerView {
  const first = records[0];
  if (!first) throw new LoretraceError('ledger_empty', 'the ledger has no records');
  const version = first['schema_version'];
  const v1 = version === LEDGER_V1_SCHEMA_VERSION;
  const session = first['session'] as Record<string, unknown>;
  const admitted = (session['admitted'] ?? []) as { ref: string; path: string; via: string }[];
  const calls: ViewedCall[] = [];
  const requests = new Map<string, { seq: number; arguments: unknown }>();
  for (const r of records) {
    const kind = r['kind'];
    if (kind === 'TOOL_CALL') {
      requests.set(r['record_id'] as string, { seq: r['seq'] as number, arguments: r['arguments'] });
      continue;
    }
    if (!OUTCOME_KINDS.has(kind as string)) continue;
    const request = typeof r['call_record_id'] === 'string' ? requests.get(r['call_record_id']) : undefined;
    calls.push({
      seq: r['seq'] as number, record_hash: r['record_hash'] as string, call_seq: request?.seq ?? null, tool: String(r['tool']),
      arguments: request !== undefined ? request.arguments : r['arguments'], outcome: viewedOutcome(r['outcome'] as Record<string, unknown>, v1),
    });
  }
  const last = records[records.length - 1]!;
  return {
    schema_version: v1 ? LEDGER_V1_SCHEMA_VERSION : version === LEDGER_V2_SCHEMA_VERSION ? LEDGER_V2_SCHEMA_VERSION : version === LEDGER_V3_SCHEMA_VERSION ? LEDGER_V3_SCHEMA_VERSION : LEDGER_SCHEMA_VERSION,
    ledger_id: v1 ? `lt-${(first['record_hash'] as string).slice(0, 16)}` : (first['ledger_id'] as string),
    namespace: session['namespace'] as string,
    snapshot_id: session['snapshot_id'] as string,
    packet_id: session['packet_id'] as string,
    packet_sha256: typeof session['packet_sha256'] === 'string' ? (session['packet_sha256'] as string) : null,
    mode: session['mode'] as string,
    runner: v1 ? 'proxy' : (session['runner'] as 'proxy' | 'retrieve'),
    policy_receipt: session['policy_receipt'] as unknown[],
    required_seeds: v1
      ? admitted.filter((a) => a.via === 'seed').map((a) => ({ ref: a.ref, path: a.path }))
      : (session['required_seeds'] as { ref: string; path: string }[]),
    admitted: admitted.map((a) => ({ ref: a.ref, path: a.path, via: a.via })),
    calls,
    hashes: records.map((r) => r['record_hash'] as string),
    head: last['record_hash'] as string,
    closed: last['kind'] === 'session_end' || last['kind'] === 'SESSION_CLOSED',
    signer_key_id: last['kind'] === 'SESSION_CLOSED' ? ((last['signature'] as { key_id?: string } | undefined)?.key_id ?? null) : null,
  };
}

/** A recorded outcome as the view holds it: served ranges (v1 `returned`), search hits and a follow's target, or the refusal. */
function viewedOutcome(o: Record<string, unknown>, v1: boolean): ViewedCall['outcome'] {
  if (o['status'] !== 'ok') return { status: 'refused', code: String(o['code']), reason: String(o['reason']) };
  const results = o['results'] as { ref: string; path: string; line_start: number; line_end: number }[] | undefined;
  const admitted = o['admitted'] as { ref: string; path: string; depth: number; newly_admitted?: boolean } | undefined;
  return {
    status: 'ok', served: ((v1 ? o['returned'] : o['served']) ?? []) as ViewedRange[],
    ...(results !== undefined ? { results } : {}), ...(admitted !== undefined ? { admitted } : {}),
  };
}

/**
 * The hash-chained trace ledger (docs/PROXY.md "Ledger", docs/RECEIPTS.md; record form and hashing rule
 * from seed 004, see src/receipts/ledger-record.ts): the file writer and the verifier.
 *
 * One JSON object per line (JSONL, UTF-8, LF). Record `seq` n stands on line n+1. The research proxy
 * writes one ledger per session (`SESSION_OPENED`; per request a `TOOL_CALL` and its outcome,
 * `TOOL_RESULT` / `TOOL_REFUSED`; `SESSION_CLOSED` on a clean shutdown); `retrieve` writes one for the
 * coordinator lane's own lookups (src/receipts/retrieve-ledger.ts). Each proxy record is written with a
 * single `write(2)`; a call's two records are made durable together, once, with `fdatasync(2)`, before
 * the response that they record leaves the server ({@link LedgerWriter.flush}).
 *
 * Readers: {@link verifyLedger} (chain, seq, schema, ids, calls and their outcomes, the session's policy,
 * optional re-check against the vault; `loretrace.ledger.v1` to `v4`) and `exportLedger`
 * (src/receipts/ledger-export.ts).
 */
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { LoretraceError } from '../errors.js';
import { openExclusiveNoFollow } from '../safe-write.js';
import { isJsonObject } from '../contracts/json-object.js';
import type { Finding } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { readIndexedLines } from '../proxy/safe-read.js';
import { outputSchema } from '../contracts/schemas.js';
import { MAX_JSON_DEPTH, jsonDuplicateKey, jsonLossyValue, jsonTooDeep, preview, shortPointer } from '../contracts/rules.js';
import { sliceLines } from '../notes/lines.js';
import { sha256Hex } from '../vault/hash.js';
import {
  GENESIS_HASH, LEDGER_SCHEMA_VERSION, LEDGER_V1_SCHEMA_VERSION, LEDGER_V2_SCHEMA_VERSION, LEDGER_V3_SCHEMA_VERSION, LedgerChain, OUTCOME_KINDS, canonicalJson,
  hashLedgerRecord, ledgerIdOf, serialiseRecord, viewLedger,
} from './ledger-record.js';
import type { LedgerEntry, LedgerRecord, LedgerView } from './ledger-record.js';
import { checkLedgerAuthorship, verificationVerdict } from './signing.js';
import type { LedgerAuthorship, LedgerSigner, TrustedKey, VerificationVerdict } from './signing.js';
import { readReceiptRules, receiptDenial } from './receipt-rules.js';
import type { ReceiptRules } from './receipt-rules.js';

export { GENESIS_HASH, LEDGER_SCHEMA_VERSION, LEDGER_V1_SCHEMA_VERSION, LEDGER_V2_SCHEMA_VERSION, LEDGER_V3_SCHEMA_VERSION, hashLedgerRecord };

/** Options of {@link LedgerWriter.flush}. */
export interface LedgerFlushOptions {
  /**
   * Other callers are about to append and flush too (concurrent calls of one session): run the sync on
   * the thread pool, so that the records they append meanwhile are made durable by the same sync (group
   * commit). Default false: when no sync is running, the sync is done inline, on the calling thread.
   */
  groupCommit?: boolean;
}

/**
 * Append-only writer of one ledger file. Not safe for two writers on one file: the file is created with
 * `O_EXCL` (an existing ledger is never appended to or overwritten).
 *
 * {@link append} writes the record synchronously (one `write(2)` of the whole line) and returns it;
 * {@link flush} resolves once everything appended so far is on disk. Callers must await `flush()` before
 * answering the request.
 *
 * Durability is `fdatasync(2)`: the appended bytes and the file size — everything a later read of the
 * ledger needs (POSIX; Linux fdatasync(2): a size change is flushed, timestamps are not); the folder entry
 * was fsync'ed at {@link create}, and {@link close} ends with a full `fsync(2)`. A lone flush syncs inline;
 * with `groupCommit`, or while a sync is running, flushes are coalesced into one sync on the thread pool.
 * The inline form spares one thread-pool round trip per call — on a busy machine a wait for a second
 * thread to be scheduled and another for the event loop to be woken (docs/PERFORMANCE.md, round 4).
 */
export class LedgerWriter {
  private fd: number | null;
  private readonly chain: LedgerChain;
  private written = 0;
  private synced = 0;
  private syncing = false;
  private waiters: { target: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private failed: unknown = null;

  private constructor(readonly path: string, fd: number, signer: LedgerSigner | null) {
    this.fd = fd;
    this.chain = new LedgerChain({ signer, keepRecords: false });
  }

  /** `key_id` of the runner key that signs the closing record, or null when the ledger is unsigned. */
  get signerKeyId(): string | null {
    return this.chain.signerKeyId;
  }

  /**
   * Create a new ledger file (parent folder must exist) and fsync its folder entry. With
   * `options.signer` the `SESSION_CLOSED` record is signed with that runner key (src/receipts/signing.ts).
   * @throws LoretraceError `ledger_exists` when the file already exists, `output_symlink` when the path is
   *   a symlink or lies under a symlinked folder (src/safe-write.ts), `ledger_unwritable` when it cannot be created.
   */
  static create(path: string, options: { signer?: LedgerSigner | null } = {}): LedgerWriter {
    let fd: number;
    try {
      fd = openExclusiveNoFollow(path);
    } catch (e) {
      if (e instanceof LoretraceError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        throw new LoretraceError('ledger_exists', `ledger ${path} already exists; a ledger is never appended to or overwritten — choose a new file`, { file: path, expected: 'a path that does not exist yet' }, 2);
      }
      throw new LoretraceError('ledger_unwritable', `cannot create ledger ${path}: ${(e as Error).message}`, { file: path });
    }
    try {
      const dfd = openSync(dirname(path), 'r');
      try { fsyncSync(dfd); } finally { closeSync(dfd); }
    } catch {
      // Some platforms cannot fsync a directory; the file's own fsync still applies.
    }
    return new LedgerWriter(path, fd, options.signer ?? null);
  }

  /** Next seq to be written. */
  get nextSeq(): number {
    return this.chain.nextSeq;
  }

  /** record_hash of the last record written (GENESIS_HASH before the first). */
  get headHash(): string {
    return this.chain.headHash;
  }

  /** The ledger's `ledger_id` (null before the first record). */
  get ledgerId(): string | null {
    return this.chain.id;
  }

  /**
   * Append a record: the chain assigns ids, `seq`, `payload_hash`, `prev_hash` and `record_hash`
   * (src/receipts/ledger-record.ts) and the line is written.
   * @throws LoretraceError `ledger_closed` after {@link close}; `ledger_write_failed` on an I/O error
   *   (the writer then refuses every later append: a ledger with a hole must not continue);
   *   `ledger_bad_record` when the first record is not SESSION_OPENED.
   */
  append(entry: LedgerEntry): LedgerRecord {
    if (this.fd === null) throw new LoretraceError('ledger_closed', `ledger ${this.path} is closed`, { file: this.path });
    if (this.failed) throw new LoretraceError('ledger_write_failed', `ledger ${this.path} failed earlier: ${(this.failed as Error).message}`, { file: this.path });
    const record = this.chain.next(entry);
    const buf = Buffer.from(serialiseRecord(record), 'utf8');
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      this.failed = e;
      throw new LoretraceError('ledger_write_failed', `cannot write ledger ${this.path}: ${(e as Error).message}`, { file: this.path });
    }
    this.chain.commit(record);
    this.written += 1;
    return record;
  }

  /**
   * Resolve when every record appended so far is on disk (`fdatasync`, see the class comment): inline when
   * no sync is running and `options.groupCommit` is not set, else on the thread pool with every flush
   * that waits meanwhile. Rejects with `ledger_write_failed` (the writer then refuses every later append).
   */
  flush(options: LedgerFlushOptions = {}): Promise<void> {
    const target = this.written;
    if (this.failed) return Promise.reject(this.failure('failed'));
    if (this.synced >= target) return Promise.resolve();
    if (!options.groupCommit && !this.syncing && this.fd !== null) {
      try {
        fdatasyncSync(this.fd);
      } catch (e) {
        this.failed = e;
        return Promise.reject(this.failure('cannot fsync'));
      }
      this.synced = target;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      if (!this.syncing) this.syncLoop();
    });
  }

  /** The `ledger_write_failed` error of a failed sync or of a writer that failed earlier. */
  private failure(what: 'failed' | 'cannot fsync'): LoretraceError {
    const message = (this.failed as Error).message;
    return new LoretraceError('ledger_write_failed', what === 'failed' ? `ledger ${this.path} failed: ${message}` : `cannot fsync ledger ${this.path}: ${message}`, { file: this.path });
  }

  /** One thread-pool `fdatasync` for every waiter whose records were written before it started, repeated while waiters remain. */
  private syncLoop(): void {
    if (this.fd === null) return;
    this.syncing = true;
    const target = this.written;
    fdatasync(this.fd, (err) => {
      if (err) {
        this.failed = err;
        this.syncing = false;
        const ws = this.waiters;
        this.waiters = [];
        for (const w of ws) w.reject(this.failure('cannot fsync'));
        return;
      }
      this.synced = Math.max(this.synced, target);
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.target <= this.synced ? w.resolve() : still.push(w));
      this.waiters = still;
      if (still.length > 0 || this.synced < this.written) this.syncLoop();
      else this.syncing = false;
    });
  }

  /** fsync and close the file. Safe to call twice. */
  async close(): Promise<void> {
    if (this.fd === null) return;
    await this.flush().catch(() => undefined);
    while (this.syncing) await new Promise((r) => setImmediate(r));
    const fd = this.fd;
    this.fd = null;
    try { fsyncSync(fd); } catch { /* already reported through flush */ }
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Verification

/**
 * Check one parsed line against schemas/ledger-record.schema.json through the shared compiled validator
 * (`outputSchema('ledger_record')` of src/contracts/schemas.ts: one Ajv instance for every loretrace schema, so
 * the session's `policy_receipt` is checked against policy-receipt.schema.json's `$defs/rows`). Reports the
 * first ajv error: its instance pointer and `<ajv message> (<keyword>)`.
 * @throws LoretraceError `schema_missing` when the schema files are absent or do not compile (a broken install).
 */
function validateRecordShape(value: unknown): { ok: true } | { ok: false; pointer: string; message: string } {
  const validate = outputSchema('ledger_record');
  if (validate(value)) return { ok: true };
  const err = validate.errors?.[0];
  return { ok: false, pointer: err?.instancePath || '', message: `${err?.message ?? 'invalid'} (${err?.keyword ?? 'schema'})` };
}

/** Options of {@link verifyLedger}. */
export interface VerifyLedgerOptions {
  /** Ledger file name used in findings. */
  file?: string;
  /**
   * An index of the vault: re-check every returned range's text against the files (`--lore`), and hold
   * reads to the session policy's rows that need the snapshot (hidden sections, denied note classes).
   */
  index?: VaultIndex;
  /** Expected `record_hash` of the last record (pinned elsewhere): detects truncation of whole records. */
  head?: string;
  /**
   * Public keys whose signature proves who wrote the ledger (`--trust-key`, src/receipts/signing.ts). Given
   * (non-empty): an unsigned ledger is `ledger_unsigned`, one signed by another key `ledger_untrusted_signer`.
   * Absent or empty: authorship is not checked (`authorship.checked` false). A signature that does not
   * verify is `ledger_signature_invalid` either way.
   */
  trustedKeys?: readonly TrustedKey[];
}

/** Totals of the `--lore` re-check, zeros included. */
export interface LoreCheckTotals {
  ranges: number;
  matched: number;
  mismatched: number;
  missing: number;
  file_changed: number;
}

/** Result of {@link verifyLedger}. */
export interface LedgerVerifyReport {
  file: string | null;
  /**
   * True when every line is a well-formed record in an intact chain that keeps its session's rules (and the
   * lore re-check, if any, matched), and — with trusted keys — the ledger is signed by one of them. Without
   * trusted keys `valid` is integrity only: read `verdict`.
   */
  valid: boolean;
  /**
   * What `valid` rests on — read this first (src/receipts/signing.ts `VerificationVerdict`): `verified` when
   * the ledger is valid and signed by a trusted key; `integrity_only` when it is valid but no trusted key
   * was given (its authorship was not checked: anyone can write such a chain); `failed` when it is not valid.
   */
  verdict: VerificationVerdict;
  /** Lines that parsed as complete records before the first bad one. */
  records: number;
  /** seq of the last record whose chain verified (null when none did). */
  verified_through_seq: number | null;
  /** seq expected at the first bad line (= its line number − 1), or null. */
  first_bad_seq: number | null;
  /** record_hash of the last verified record. */
  head_hash: string | null;
  /** True when the last verified record closes the session (`SESSION_CLOSED`; v1 `session_end`). */
  closed: boolean;
  /** `schema_version` of the records (`loretrace.ledger.v4`, `v3`, `v2` or `v1`), null when none verified. */
  schema_version: string | null;
  /** The ledger's id (v2 to v4 `ledger_id`; v1: `lt-` + 16 hex digits of seq 0's record_hash), null when none verified. */
  ledger_id: string | null;
  packet_id: string | null;
  packet_sha256: string | null;
  snapshot_id: string | null;
  /**
   * Tool calls by outcome among verified records, zeros included: `tool_calls` counts outcome records
   * (`TOOL_RESULT`, `TOOL_REFUSED`; v1 `tool_call`), `unanswered` v3/v4 `TOOL_CALL` records with no outcome.
   */
  totals: { tool_calls: number; ok: number; refused: number; unanswered: number };
  lore: LoreCheckTotals | null;
  /**
   * Who wrote the ledger (src/receipts/signing.ts `checkLedgerAuthorship`), checked once the chain
   * verifies; while it does not, `status` is `not_checked` and `detail` says so.
   */
  authorship: LedgerAuthorship;
  findings: Finding[];
}

/** Split ledger text into lines, remembering whether the last one ended with "\n". */
function ledgerLines(text: string): { lines: string[]; tornTail: boolean } {
  if (text === '') return { lines: [], tornTail: false };
  const parts = text.split('\n');
  const last = parts.pop()!;
  if (last === '') return { lines: parts, tornTail: false };
  return { lines: [...parts, last], tornTail: true };
}

/**
 * A number in a ledger line that overflows a double (`1e400`, `-1e400`): `JSON.parse` reads it as ±Infinity, which
 * RFC 8785 (and `JSON.stringify`) write as `null`, so a forger's `1e400` in place of a recorded `null` hashes the same
 * as the runner's line. Every JSON input refuses such a number (`non_finite_number`, src/contracts/json-input.ts);
 * a ledger line is refused the same way by every ledger reader ({@link verifyLedger}, {@link parseLedger},
 * `openingSession` in src/receipts/lock.ts, coverage's ledger reader). Returns the pointer, the token and the
 * message naming `file` (or "the ledger"), the 1-based line `index + 1`, its seq and column, or null. Run it on a
 * line that parses.
 */
export function nonFiniteLedgerLine(line: string, index: number, file: string | null | undefined): { pointer: string; token: string; message: string } | null {
  const bad = jsonLossyValue(line, { nonFinite: true });
  if (bad === null || bad.kind !== 'non_finite_number') return null;
  const message = `${file ?? 'the ledger'} line ${index + 1} (seq ${index}): ${bad.pointer} is the number ${bad.token.slice(0, 40)} (column ${bad.offset + 1}), beyond the largest number a JSON reader keeps (±${Number.MAX_VALUE}): JSON.parse reads it as ${bad.token.startsWith('-') ? '-Infinity' : 'Infinity'}, which the record_hash covers as null, so the line shows another value than the one hashed; expected a finite number`;
  return { pointer: bad.pointer, token: bad.token, message };
}

/** What line 1 of every ledger is, for messages. */
const FIRST_RECORD = `SESSION_OPENED record of schema ${LEDGER_SCHEMA_VERSION} (or ${LEDGER_V3_SCHEMA_VERSION}, ${LEDGER_V2_SCHEMA_VERSION}, ${LEDGER_V1_SCHEMA_VERSION}): {"actor":…,"kind":"SESSION_OPENED",…,"schema_version":"${LEDGER_SCHEMA_VERSION}","seq":0,…}`;

/** True for a JSON object whose `schema_version` is one of the ledger versions loretrace reads. */
function isLedgerVersion(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = (value as Record<string, unknown>)['schema_version'];
  return v === LEDGER_SCHEMA_VERSION || v === LEDGER_V3_SCHEMA_VERSION || v === LEDGER_V2_SCHEMA_VERSION || v === LEDGER_V1_SCHEMA_VERSION;
}

/**
 * Why a ledger line is not the byte form its record was written in, or null when it is. A `loretrace.ledger.v4`
 * line must be the record's RFC 8785 form ({@link canonicalJson}, what {@link serialiseRecord} writes); a v1–v3 line
 * `JSON.stringify` of the parsed record (their writer's form: no white space, keys in the order written — which is
 * not known apart from the line, so a v1–v3 line with its keys reordered is not caught; v4 was made for that).
 * Either way the line ends at its line feed, with no carriage return before it. Seed 004: the record_hash covers the
 * canonical form of the record, so a line in any other byte form is another document than the one hashed, and a
 * ledger's sha256 (which a lock pins) would no longer say which bytes were written.
 */
function notCanonical(line: string, record: Record<string, unknown>, version: string): string | null {
  const v4 = version === LEDGER_SCHEMA_VERSION;
  const expected = v4 ? canonicalJson(record) : JSON.stringify(record);
  if (line === expected) return null;
  const form = v4 ? 'the RFC 8785 form of its record (keys sorted, no white space)' : `${version}'s written form (JSON.stringify of its record: no white space)`;
  if (line.endsWith('\r') && line.slice(0, -1) === expected) return `it ends in a carriage return (a CRLF line end); expected ${form} and a line feed alone`;
  let col = 0;
  while (col < line.length && line[col] === expected[col]) col += 1;
  if (v4 && JSON.stringify(record) === line) return `its keys are not in RFC 8785 order (first difference at column ${col + 1}); expected ${form}`;
  return `it differs from ${form} at column ${col + 1} (${JSON.stringify(line.slice(col, col + 12))} where ${JSON.stringify(expected.slice(col, col + 12))} was expected)`;
}

/** A parsed JSON value described for a message: its type, and for an object its schema_version or first keys. */
function describeJson(value: unknown): string {
  if (Array.isArray(value)) return 'a JSON array';
  if (value === null) return 'JSON null';
  if (typeof value !== 'object') return `a JSON ${typeof value}`;
  const o = value as Record<string, unknown>;
  if (typeof o['schema_version'] === 'string') return `an object of schema_version ${preview(o['schema_version'], 60)}`;
  const keys = Object.keys(o);
  if (keys.length === 0) return 'an empty object';
  return `an object without schema_version (keys ${keys.slice(0, 5).map((k) => preview(k, 40)).join(', ')}${keys.length > 5 ? ', …' : ''})`;
}

/**
 * Verify a ledger (`loretrace.ledger.v4`, `v3`, `v2` or `v1`): every line is one JSON record valid against schemas/ledger-record.schema.json,
 * in the byte form it was written in (v4: its RFC 8785 form; v1–v3: `JSON.stringify` of it; no carriage return:
 * `ledger_not_canonical`, see `notCanonical`); `seq`
 * equals its line number − 1; `prev_hash` equals the previous `record_hash` (64 zeros for seq 0);
 * `record_hash` recomputes; every record has the ledger's version and (v2) its `ledger_id` — seq 0's
 * recomputes from its content — and `record_id` `<ledger_id>:<seq>`; seq 0 is the only opening record
 * (`SESSION_OPENED`; v1 `session_start`); nothing follows the closing one (`SESSION_CLOSED`; v1
 * `session_end`). Any edited,
 * deleted, inserted or reordered record breaks one of these; a torn last line (crash mid-write) is
 * reported as `ledger_torn_record`; a truncation of whole records is caught by `options.head` (and a
 * ledger without its closing record gets the warning `ledger_not_closed`). Checking stops at the first bad
 * record, whose expected seq is `first_bad_seq`.
 *
 * With `options.index`, every range a `lore_read` served is re-read from the vault (through the same
 * checked reader the proxy uses) and its sha256 compared to the recorded `text_sha256` (`ledger_lore_mismatch`,
 * `ledger_lore_missing`; a changed file whose range still matches gives `ledger_lore_file_changed` as a
 * warning; a different snapshot_id gives `ledger_snapshot_changed` as a warning).
 *
 * Finding codes (all `error` unless stated): ledger_empty, ledger_bad_json, ledger_not_a_ledger (line 1 is JSON
 * but no loretrace ledger record: no `schema_version` of a ledger version), ledger_bad_record,
 * ledger_seq_mismatch, ledger_prev_hash_mismatch, ledger_record_hash_mismatch, ledger_torn_record,
 * ledger_id_mismatch (a record of another ledger, or a seq 0 whose ledger_id does not recompute),
 * ledger_version_mixed (records of two format versions), ledger_not_canonical (a line that is not its record's
 * written byte form: CRLF, white space, other escapes, v4 keys out of RFC 8785 order; file and line named),
 * ledger_no_session_start, ledger_duplicate_session_start, ledger_record_after_end, ledger_head_mismatch,
 * non_finite_number (a number beyond the largest double, `1e400`: {@link nonFiniteLedgerLine}; file, line and pointer named),
 * ledger_not_closed (warning), plus the lore codes above. Once the chain verifies, the records are held to
 * their session: (v3, v4) each call to its one outcome — ledger_outcome_without_call, ledger_call_answered_twice,
 * ledger_call_tool_mismatch, ledger_call_without_outcome, ledger_call_pending (warning: the last record of
 * an unclosed ledger is a call without an answer), see `checkCallPairing`; (every version) each served
 * range, search hit and followed note to the session's `policy_receipt` — ledger_policy_violation,
 * ledger_depth_exceeded, see `checkServedPolicy`; the first such record is `first_bad_seq`. Then authorship
 * (`options.trustedKeys`, src/receipts/signing.ts): ledger_signature_invalid (always checked when a signature
 * is present), ledger_unsigned and ledger_untrusted_signer (only with trusted keys), reported in `authorship`. A line with a duplicate key anywhere in the
 * record is `ledger_bad_record` (pointer of the second occurrence): the hash covers the last-wins parse,
 * not what a reader of the line sees. A ledger starting with a byte-order mark is `ledger_bad_json`
 * ("starts with a byte-order mark"). Never throws for bad content.
 */
export async function verifyLedger(text: string, options: VerifyLedgerOptions = {}): Promise<LedgerVerifyReport> {
  const file = options.file ?? null;
  const findings: Finding[] = [];
  const at = (line: number): Pick<Finding, 'path' | 'line'> => ({ ...(file ? { path: file } : {}), line });
  const report: LedgerVerifyReport = {
    file, valid: false, verdict: 'failed', records: 0, verified_through_seq: null, first_bad_seq: null, head_hash: null, closed: false,
    schema_version: null, ledger_id: null, packet_id: null, packet_sha256: null, snapshot_id: null,
    totals: { tool_calls: 0, ok: 0, refused: 0, unanswered: 0 }, lore: null,
    authorship: { checked: (options.trustedKeys ?? []).length > 0, status: 'not_checked', key_id: null, detail: 'authorship not checked: the chain does not verify' },
    findings,
  };
  const { lines, tornTail } = ledgerLines(text);
  if (lines.length === 0) {
    findings.push({ code: 'ledger_empty', severity: 'error', message: `ledger ${file ?? '(text)'} has no records; expected a SESSION_OPENED record on line 1`, ...at(1) });
    report.first_bad_seq = 0;
    return report;
  }
  const good: Record<string, unknown>[] = [];
  let version: string | null = null;
  let ledgerId: string | null = null;
  let prev = GENESIS_HASH;
  const fail = (i: number, code: string, message: string, pointer?: string) => {
    findings.push({ code, severity: 'error', message, ...at(i + 1), ...(pointer !== undefined ? { pointer } : {}) });
    report.first_bad_seq = i;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const isTail = tornTail && i === lines.length - 1;
    let value: unknown;
    if (i === 0 && line.charCodeAt(0) === 0xfeff) {
      // The writer never writes a byte-order mark; an editor or a conversion added it. Refused (the bytes
      // are not the ledger that was written), but said plainly rather than "not JSON".
      fail(i, 'ledger_bad_json', `line 1 (seq 0) starts with a byte-order mark (U+FEFF, bytes EF BB BF); a ledger is written without one — it was re-saved by an editor or converted; expected the first record's "{" as the first byte`);
      break;
    }
    try {
      value = JSON.parse(line);
    } catch {
      if (isTail) fail(i, 'ledger_torn_record', `line ${i + 1} (seq ${i}) is an incomplete record with no line break — the writer stopped mid-record; ${i === 0 ? 'no record verifies' : `the ledger verifies through seq ${i - 1}`}`);
      else if (i === 0) fail(i, 'ledger_bad_json', `line 1 (seq 0) is not JSON; expected one ledger record per line, the first a ${FIRST_RECORD}`);
      else fail(i, 'ledger_bad_json', `line ${i + 1} (seq ${i}) is not JSON; expected one ledger record per line`);
      break;
    }
    // Canonical JSON and the schema check recurse: a record nested deeper than any ledger writes is refused first.
    const deep = jsonTooDeep(line);
    if (deep !== null) {
      fail(i, 'ledger_bad_record', `line ${i + 1} (seq ${i}) nests deeper than ${MAX_JSON_DEPTH} arrays and objects at column ${deep.offset + 1} (pointer ${shortPointer(deep.pointer)}); expected a record of schemas/ledger-record.schema.json`, deep.pointer);
      break;
    }
    const infinite = nonFiniteLedgerLine(line, i, file);
    if (infinite !== null) {
      fail(i, 'non_finite_number', infinite.message, infinite.pointer);
      break;
    }
    const lossy = jsonLossyValue(line);
    if (lossy !== null) {
      fail(i, 'ledger_bad_record', lossy.kind === 'proto_key'
        ? `line ${i + 1} (seq ${i}): ${lossy.pointer} is a key named __proto__ (column ${lossy.offset + 1}), which JavaScript readers drop or take for a prototype; expected a record of schemas/ledger-record.schema.json`
        : `line ${i + 1} (seq ${i}): ${lossy.pointer} is the integer ${lossy.token} (column ${lossy.offset + 1}), beyond ±${Number.MAX_SAFE_INTEGER} (2^53 − 1): JSON.parse reads it rounded to ${String(Number(lossy.token))}, so the record_hash would cover another value than the line shows; expected integers a JSON reader keeps exactly`, lossy.pointer);
      break;
    }
    if (i === 0 && !isLedgerVersion(value)) {
      fail(i, 'ledger_not_a_ledger', `${file ?? 'the text'} is not a loretrace ledger: line 1 is ${describeJson(value)}; expected a ${FIRST_RECORD}`, '/schema_version');
      break;
    }
    // JSON.parse keeps the last of two equal keys and the hash covers that parse, so a line with a
    // duplicate key would show a reader a value that was never hashed (`"seq":5,…,"seq":0`). Refused.
    const dup = jsonDuplicateKey(line);
    if (dup !== null) {
      fail(i, 'ledger_bad_record', `line ${i + 1} (seq ${i}): ${dup.pointer} is a duplicate key (column ${dup.offset + 1}); JSON.parse keeps the last value and the record_hash covers only that, so a reader of the line may see a value that was never hashed; expected each key once`, dup.pointer);
      break;
    }
    const shape = validateRecordShape(value);
    if (!shape.ok) {
      fail(i, isTail ? 'ledger_torn_record' : 'ledger_bad_record', `line ${i + 1} (seq ${i}): ${shape.pointer || '/'} ${shape.message}; expected a record of schemas/ledger-record.schema.json`, shape.pointer);
      break;
    }
    const rec = value as Record<string, unknown> & { seq: number; kind: string; prev_hash: string; record_hash: string; schema_version: string };
    if (rec.seq !== i) {
      fail(i, 'ledger_seq_mismatch', `line ${i + 1} has seq ${rec.seq}, expected ${i}: a record was deleted, inserted or reordered before it`, '/seq');
      break;
    }
    if (rec.prev_hash !== prev) {
      fail(i, 'ledger_prev_hash_mismatch', `seq ${i} (line ${i + 1}) has prev_hash ${rec.prev_hash}, expected ${prev} (the record_hash of seq ${i - 1}): the chain is broken here`, '/prev_hash');
      break;
    }
    const recomputed = hashLedgerRecord(prev, rec);
    if (rec.record_hash !== recomputed) {
      fail(i, 'ledger_record_hash_mismatch', `seq ${i} (line ${i + 1}) has record_hash ${rec.record_hash}, but its content hashes to ${recomputed}: the record was edited`, '/record_hash');
      break;
    }
    const reform = notCanonical(line, rec, rec.schema_version);
    if (reform !== null) {
      fail(i, 'ledger_not_canonical', `${file ?? 'the ledger'} line ${i + 1} (seq ${i}) is not the byte form its record was written in: ${reform}; the record_hash covers that form, so these bytes are another document than the one hashed (re-saved or re-formatted after the run)`);
      break;
    }
    const names = kindNames(rec.schema_version);
    if (version !== null && rec.schema_version !== version) {
      fail(i, 'ledger_version_mixed', `seq ${i} (line ${i + 1}) is a ${rec.schema_version} record in a ${version} ledger; expected one format version per ledger`, '/schema_version');
      break;
    }
    version = rec.schema_version;
    if (i === 0 && rec.kind !== names.open) {
      fail(i, 'ledger_no_session_start', `seq 0 is a ${rec.kind} record; expected ${names.open}`, '/kind');
      break;
    }
    if (i > 0 && rec.kind === names.open) {
      fail(i, 'ledger_duplicate_session_start', `seq ${i} is a second ${names.open}; one ledger holds one session`, '/kind');
      break;
    }
    if (good.length > 0 && good[good.length - 1]!['kind'] === names.close) {
      fail(i, 'ledger_record_after_end', `seq ${i} follows the ${names.close} record (seq ${i - 1})`, '/kind');
      break;
    }
    if (version !== LEDGER_V1_SCHEMA_VERSION) {
      const idProblem = checkIds(rec, i, ledgerId);
      if (idProblem !== null) {
        fail(i, 'ledger_id_mismatch', idProblem.message, idProblem.pointer);
        break;
      }
      ledgerId = rec['ledger_id'] as string;
    }
    if (isTail) {
      findings.push({ code: 'ledger_missing_final_newline', severity: 'warning', message: `the last record (seq ${i}) verifies but has no final line break`, ...at(i + 1) });
    }
    good.push(rec);
    prev = rec.record_hash;
  }
  report.records = good.length;
  if (good.length > 0) {
    const last = good[good.length - 1]!;
    report.verified_through_seq = last['seq'] as number;
    report.head_hash = last['record_hash'] as string;
    report.closed = last['kind'] === kindNames(version ?? '').close;
    report.schema_version = version;
    report.ledger_id = version === LEDGER_V1_SCHEMA_VERSION ? `lt-${(good[0]!['record_hash'] as string).slice(0, 16)}` : ledgerId;
    const s = good[0]!['session'] as { packet_id?: string; packet_sha256?: string | null; snapshot_id?: string } | undefined;
    report.packet_id = s?.packet_id ?? null;
    report.packet_sha256 = s?.packet_sha256 ?? null;
    report.snapshot_id = s?.snapshot_id ?? null;
  }
  for (const r of good) {
    if (!OUTCOME_KINDS.has(r['kind'] as string)) continue;
    report.totals.tool_calls += 1;
    if ((r['outcome'] as { status?: string } | undefined)?.status === 'ok') report.totals.ok += 1;
    else report.totals.refused += 1;
  }
  const chainIntact = report.first_bad_seq === null;
  const paired = version === LEDGER_SCHEMA_VERSION || version === LEDGER_V3_SCHEMA_VERSION;
  if (paired) report.totals.unanswered = checkCallPairing(good, !chainIntact ? 'broken' : report.closed ? 'closed' : 'open', findings, at);
  if (paired && chainIntact && report.closed) checkClosingTotals(good[good.length - 1]!, report.totals, findings, at(good.length));
  if (good.length > 0) checkServedPolicy(viewLedger(good), options.index, findings, file);
  if (report.first_bad_seq === null) {
    if (options.head !== undefined && options.head !== report.head_hash) {
      findings.push({ code: 'ledger_head_mismatch', severity: 'error', message: `the last record (seq ${report.verified_through_seq}) has record_hash ${report.head_hash}, expected head ${options.head}: records are missing at the end or the ledger is another one`, ...at(good.length) });
      report.first_bad_seq = good.length;
    } else if (!report.closed) {
      findings.push({ code: 'ledger_not_closed', severity: 'warning', message: `the ledger ends at seq ${report.verified_through_seq} without a ${kindNames(version ?? '').close} record: the runner did not shut down cleanly (or records were cut off at the end; pass --head to check)`, ...at(good.length) });
    }
  }
  if (report.first_bad_seq === null) {
    // Who wrote it: only a chain that verifies (up to its pin) has a closing record worth asking about.
    const closing = report.closed && version !== LEDGER_V1_SCHEMA_VERSION ? good[good.length - 1]! : null;
    const { authorship, finding } = checkLedgerAuthorship(closing, options.trustedKeys ?? [], at(good.length));
    report.authorship = authorship;
    if (finding) findings.push(finding);
  }
  if (options.index && good.length > 0) report.lore = await recheckLore(viewLedger(good), options.index, findings, file);
  report.valid = !findings.some((f) => f.severity === 'error');
  report.verdict = verificationVerdict(report.valid, !report.authorship.checked);
  if (report.first_bad_seq === null && !report.valid) {
    // The chain is intact but a record breaks a rule of the session (a call's outcome, the policy): the
    // first such record is the first bad seq.
    const lines = findings.filter((f) => f.severity === 'error' && SESSION_RULE_CODES.has(f.code) && typeof f.line === 'number').map((f) => f.line! - 1);
    if (lines.length > 0) report.first_bad_seq = Math.min(...lines);
  }
  return report;
}

/** Findings of records that chain correctly but break a rule of their session (they set `first_bad_seq`). */
const SESSION_RULE_CODES: ReadonlySet<string> = new Set([
  'ledger_outcome_without_call', 'ledger_call_answered_twice', 'ledger_call_tool_mismatch', 'ledger_call_without_outcome',
  'ledger_policy_violation', 'ledger_depth_exceeded', 'ledger_totals_mismatch',
]);

/**
 * v3, a closed ledger whose chain verifies: the `tool_calls`, `ok` and `refused` its `SESSION_CLOSED` record
 * states (both writers put them in `totals`: the proxy session, src/proxy/session.ts, and `retrieve`,
 * src/receipts/retrieve-ledger.ts) must be the counts of its outcome records (`TOOL_RESULT` ok, `TOOL_REFUSED`
 * refused) — `counted`, the report's totals. A count that is not the record's is `ledger_totals_mismatch` (error,
 * at the closing record's line): the closing record — and a signature over it — then vouches for another
 * session than the records hold, as a chain re-hashed after a record was inserted or removed does. A total the
 * record does not carry (another writer's) is not compared. Seed 003: totals are part of the receipt.
 */
function checkClosingTotals(closing: Record<string, unknown>, counted: LedgerVerifyReport['totals'], findings: Finding[], at: Pick<Finding, 'path' | 'line'>): void {
  const stated = isJsonObject(closing['totals']) ? closing['totals'] : {};
  const off = (['tool_calls', 'ok', 'refused'] as const).filter((k) => typeof stated[k] === 'number' && stated[k] !== counted[k]);
  if (off.length === 0) return;
  findings.push({
    code: 'ledger_totals_mismatch', severity: 'error', ...at, pointer: '/totals',
    message: `the ${String(closing['kind'])} record's totals say ${off.map((k) => `${k} ${String(stated[k])}`).join(', ')}, but the ledger's outcome records give ${off.map((k) => `${k} ${counted[k]}`).join(', ')}: records were added or removed after the session closed them, or the totals were edited`,
  });
}

/**
 * v3: every `TOOL_CALL` is answered by exactly one later outcome record (`TOOL_RESULT` / `TOOL_REFUSED`)
 * whose `call_record_id` names it and whose `tool` is the call's. Findings (errors, at the outcome's or
 * the call's line): `ledger_outcome_without_call` (the outcome names no earlier `TOOL_CALL` of this
 * ledger), `ledger_call_answered_twice`, `ledger_call_tool_mismatch`, `ledger_call_without_outcome` (a
 * call never answered). The one exception is a call that is the last verified record of a ledger that
 * is not closed: the runner stopped while it ran and its client got no answer — the warning
 * `ledger_call_pending` (the ledger is `ledger_not_closed` as well); when the chain broke right after it
 * (`ending` `broken`), the break is the finding and the call is not reported. Returns the number of
 * unanswered calls.
 */
function checkCallPairing(
  good: readonly Record<string, unknown>[], ending: 'closed' | 'open' | 'broken', findings: Finding[], at: (line: number) => Pick<Finding, 'path' | 'line'>,
): number {
  const calls = new Map<string, { seq: number; tool: string; answeredBy: number | null }>();
  for (const r of good) {
    const seq = r['seq'] as number;
    const kind = r['kind'] as string;
    if (kind === 'TOOL_CALL') {
      calls.set(r['record_id'] as string, { seq, tool: String(r['tool']), answeredBy: null });
      continue;
    }
    if (!OUTCOME_KINDS.has(kind)) continue;
    const callId = String(r['call_record_id']);
    const call = calls.get(callId);
    const tool = String(r['tool']);
    if (call === undefined) {
      findings.push({ code: 'ledger_outcome_without_call', severity: 'error', message: `seq ${seq} (${kind} ${tool}) answers call ${callId}, which is no earlier TOOL_CALL record of this ledger: an outcome without its call`, ...at(seq + 1), pointer: '/call_record_id' });
    } else if (call.answeredBy !== null) {
      findings.push({ code: 'ledger_call_answered_twice', severity: 'error', message: `seq ${seq} (${kind} ${tool}) answers call ${callId} (seq ${call.seq}), which seq ${call.answeredBy} already answered: one call has one outcome`, ...at(seq + 1), pointer: '/call_record_id' });
    } else {
      call.answeredBy = seq;
      if (call.tool !== tool) {
        findings.push({ code: 'ledger_call_tool_mismatch', severity: 'error', message: `seq ${seq} (${kind}) records tool ${JSON.stringify(tool)}, but the call it answers (seq ${call.seq}) asked for ${JSON.stringify(call.tool)}`, ...at(seq + 1), pointer: '/tool' });
      }
    }
  }
  const lastSeq = good.length > 0 ? (good[good.length - 1]!['seq'] as number) : -1;
  let unanswered = 0;
  for (const [callId, call] of calls) {
    if (call.answeredBy !== null) continue;
    unanswered += 1;
    if (call.seq === lastSeq && ending === 'broken') continue;
    if (call.seq === lastSeq && ending === 'open') {
      findings.push({ code: 'ledger_call_pending', severity: 'warning', message: `seq ${call.seq} is a TOOL_CALL ${call.tool} (${callId}) with no outcome, the last record of a ledger that is not closed: the runner stopped while the call ran and its client got no answer`, ...at(call.seq + 1) });
    } else {
      findings.push({ code: 'ledger_call_without_outcome', severity: 'error', message: `seq ${call.seq} is a TOOL_CALL ${call.tool} (${callId}) that no record answers: a call without its outcome (the outcome record was removed, or the call inserted)`, ...at(call.seq + 1), pointer: '/kind' });
    }
  }
  return unanswered;
}

/**
 * Hold every note a verified record served, listed or admitted to the policy its session recorded in
 * `SESSION_OPENED` (`policy_receipt`, read by src/receipts/receipt-rules.ts in `checkPath` order), so a
 * ledger edited by hand and re-chained so that it verifies still fails when it "served" lore the session
 * could not have served. Per record (errors, at its line): `ledger_policy_violation` — a served range
 * (`outcome.served`; v1 `returned`), a search hit (`outcome.results`) or a followed target
 * (`outcome.admitted`) whose path the receipt refuses (outside every allowed prefix, a hidden ref, prefix,
 * note or section, future-era lore, a denied prefix or class); `ledger_depth_exceeded` — a served range
 * or followed target at a link depth beyond the receipt's `max_link_depth` (retrieve records depth null:
 * not checked). A receipt with no rows (v1 fixtures) checks nothing; one that cannot be read is
 * `ledger_bad_record` at seq 0. Without `index`, rows that need the snapshot are left unchecked
 * (hidden sections, denied classes; see {@link readReceiptRules}).
 */
function checkServedPolicy(view: LedgerView, index: VaultIndex | undefined, findings: Finding[], file: string | null): void {
  const where = (seq: number, pointer: string) => ({ ...(file ? { path: file } : {}), line: seq + 1, pointer });
  let rules: ReceiptRules | null;
  try {
    rules = readReceiptRules({ pointer: '/session/policy_receipt', value: view.policy_receipt }, { namespace: view.namespace, ...(index ? { index } : {}), where: file ?? '(text)', code: 'ledger_bad_record' });
  } catch (e) {
    findings.push({ code: 'ledger_bad_record', severity: 'error', message: `seq 0: the session's policy_receipt cannot be read: ${(e as Error).message}`, ...where(0, '/session/policy_receipt') });
    return;
  }
  if (rules === null || rules.rows === 0) return;
  const served = view.schema_version === LEDGER_V1_SCHEMA_VERSION ? '/outcome/returned' : '/outcome/served';
  const notes = index ? new Map(index.notes.map((n) => [n.path as string, n])) : null;
  const expected = 'expected only what the session\'s policy admits';
  const hold = (seq: number, pointer: string, what: string, path: string, lines: readonly [number, number], depth: number | null) => {
    const detail = receiptDenial(rules!, path, notes?.get(path), lines, expected);
    if (detail !== null) {
      findings.push({ code: 'ledger_policy_violation', severity: 'error', message: `seq ${seq} ${what}: ${detail} (the policy_receipt of this ledger's SESSION_OPENED)`, ...where(seq, pointer) });
      return;
    }
    const max = rules!.max_link_depth;
    if (max !== null && depth !== null && depth > max.depth) {
      findings.push({ code: 'ledger_depth_exceeded', severity: 'error', message: `seq ${seq} ${what} at link depth ${depth}, beyond the session's max_link_depth ${max.depth} (policy_receipt row ${max.row}); expected only notes within ${max.depth} hops of a seed or scope note`, ...where(seq, pointer) });
    }
  };
  for (const call of view.calls) {
    if (call.outcome.status !== 'ok') continue;
    call.outcome.served.forEach((r, i) => hold(call.seq, `${served}/${i}`, `served ${r.ref} lines ${r.line_start}-${r.line_end}`, r.path, [r.line_start, r.line_end], typeof r.depth === 'number' ? r.depth : null));
    (call.outcome.results ?? []).forEach((r, i) => hold(call.seq, `/outcome/results/${i}`, `listed search hit ${r.ref}`, r.path, [r.line_start, r.line_end], null));
    // A follow admits a note without reading any of its lines: lines 0-0 overlap no (1-based) hidden
    // section, so only whole-note rules and the depth apply.
    const a = call.outcome.admitted;
    if (a !== undefined) hold(call.seq, '/outcome/admitted', `admitted ${a.ref} by lore_follow`, a.path, [0, 0], a.depth);
  }
}

/** Opening and closing kinds of a format version (v2 to v4 share seed 004's names). */
function kindNames(version: string): { open: string; close: string } {
  return version === LEDGER_V1_SCHEMA_VERSION ? { open: 'session_start', close: 'session_end' } : { open: 'SESSION_OPENED', close: 'SESSION_CLOSED' };
}

/**
 * v2 id checks of record `i`: the same `ledger_id` as seq 0 (whose own id must recompute from its
 * `occurred_on` and `session`, src/receipts/ledger-record.ts `ledgerIdOf`) and `record_id` = `<ledger_id>:<seq>`.
 * Returns the problem, or null.
 */
function checkIds(rec: Record<string, unknown>, i: number, ledgerId: string | null): { message: string; pointer: string } | null {
  const id = rec['ledger_id'] as string;
  if (i === 0) {
    const expected = ledgerIdOf(rec['occurred_on'] as string, rec['session']);
    if (id !== expected) return { message: `seq 0 has ledger_id ${id}, but its occurred_on and session give ${expected}: the opening record was edited or the id was set by hand`, pointer: '/ledger_id' };
  } else if (id !== ledgerId) {
    return { message: `seq ${i} (line ${i + 1}) has ledger_id ${id}, expected ${ledgerId}: a record of another ledger`, pointer: '/ledger_id' };
  }
  if (rec['record_id'] !== `${id}:${i}`) return { message: `seq ${i} (line ${i + 1}) has record_id ${JSON.stringify(rec['record_id'])}, expected ${id}:${i}`, pointer: '/record_id' };
  return null;
}

/** Re-read every served range of a verified ledger from the vault and compare its sha256 with the record's. */
async function recheckLore(view: LedgerView, index: VaultIndex, findings: Finding[], file: string | null): Promise<LoreCheckTotals> {
  const totals: LoreCheckTotals = { ranges: 0, matched: 0, mismatched: 0, missing: 0, file_changed: 0 };
  if (view.snapshot_id !== index.snapshot_id) {
    findings.push({ code: 'ledger_snapshot_changed', severity: 'warning', message: `the vault's snapshot_id is ${index.snapshot_id}, the session ran on ${view.snapshot_id}: files may have changed since; every range is re-checked by its text hash`, ...(file ? { path: file } : {}), line: 1 });
  }
  const pointer = view.schema_version === LEDGER_V1_SCHEMA_VERSION ? '/outcome/returned' : '/outcome/served';
  const cache = new Map<string, { lines: string[]; sha256: string } | null>();
  for (const call of view.calls) {
    if (call.outcome.status !== 'ok') continue;
    for (const range of call.outcome.served) {
      totals.ranges += 1;
      let entry = cache.get(range.path);
      if (entry === undefined) {
        try {
          const got = await readIndexedLines(index, range.path);
          entry = { lines: got.lines, sha256: got.sha256 };
        } catch {
          entry = null;
        }
        cache.set(range.path, entry);
      }
      const where = { ...(file ? { path: file } : {}), line: call.seq + 1, pointer };
      if (!entry) {
        totals.missing += 1;
        findings.push({ code: 'ledger_lore_missing', severity: 'error', message: `seq ${call.seq}: ${range.path} is not a readable indexed note of the vault; expected lines ${range.line_start}-${range.line_end}`, ...where });
        continue;
      }
      const text = range.line_end <= entry.lines.length && range.line_start >= 1 && range.line_start <= range.line_end
        ? sliceLines(entry.lines, range.line_start, range.line_end)
        : null;
      if (text === null || sha256Hex(text) !== range.text_sha256 || (range.text !== undefined && text !== range.text)) {
        totals.mismatched += 1;
        findings.push({ code: 'ledger_lore_mismatch', severity: 'error', message: `seq ${call.seq}: lines ${range.line_start}-${range.line_end} of ${range.path} in the vault differ from the text the proxy returned`, ...where });
        continue;
      }
      totals.matched += 1;
      if (entry.sha256 !== range.file_sha256) {
        totals.file_changed += 1;
        findings.push({ code: 'ledger_lore_file_changed', severity: 'warning', message: `seq ${call.seq}: ${range.path} changed since the session (sha256 ${entry.sha256}, was ${range.file_sha256}) but lines ${range.line_start}-${range.line_end} still match`, ...where });
      }
    }
  }
  return totals;
}

/**
 * Parse ledger text into records without checking the chain (use {@link verifyLedger} first); with `count`, only
 * its first `count` lines (the records {@link verifyLedger} verified, so a bad line after them is not read).
 * @throws LoretraceError `ledger_bad_json` for a line that is not JSON, `ledger_bad_record` for one nested deeper than `MAX_JSON_DEPTH` (line and pointer),
 *   `non_finite_number` for one holding a number beyond the largest double ({@link nonFiniteLedgerLine}: file, line, pointer).
 */
export function parseLedger(text: string, file?: string, count?: number): Record<string, unknown>[] {
  const { lines } = ledgerLines(text);
  return lines.slice(0, count ?? lines.length).map((line, i) => {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new LoretraceError('ledger_bad_json', `line ${i + 1} of ledger ${file ?? '(text)'} is not JSON`, { ...(file ? { file } : {}), line: i + 1 });
    }
    const deep = jsonTooDeep(line);
    if (deep !== null) {
      throw new LoretraceError('ledger_bad_record', `line ${i + 1} (seq ${i}) of ledger ${file ?? '(text)'} nests deeper than ${MAX_JSON_DEPTH} arrays and objects (pointer ${shortPointer(deep.pointer)}); expected a record of schemas/ledger-record.schema.json`, { ...(file ? { file } : {}), line: i + 1, pointer: deep.pointer });
    }
    const infinite = nonFiniteLedgerLine(line, i, file);
    if (infinite !== null) throw new LoretraceError('non_finite_number', infinite.message, { ...(file ? { file } : {}), line: i + 1, pointer: infinite.pointer, expected: 'a finite number' });
    return value;
  });
}

/**
 * Verify a ledger and read it into one {@link LedgerView} (either version), or throw.
 * @throws LoretraceError `ledger_invalid` when {@link verifyLedger} finds an error (the message names the
 *   first bad seq and the finding; `details.data.code` is the finding's code).
 */
export async function readVerifiedLedger(text: string, options: VerifyLedgerOptions = {}): Promise<{ view: LedgerView; report: LedgerVerifyReport }> {
  const report = await verifyLedger(text, options);
  const firstError = report.findings.find((f) => f.severity === 'error');
  if (firstError) {
    throw new LoretraceError('ledger_invalid', `ledger ${options.file ?? '(text)'} does not verify (first bad seq ${report.first_bad_seq}): ${firstError.message}; nothing exported`, {
      ...(options.file ? { file: options.file } : {}), line: firstError.line, data: { code: firstError.code },
    });
  }
  return { view: viewLedger(parseLedger(text, options.file)), report };
}

export type {
  LedgerRecord, LedgerRecordBody, LedgerEntry, LedgerKind, LedgerActor, LedgerOutcome, LedgerOkOutcome, LedgerRefusedOutcome,
  LedgerSessionInfo, ServedRange, ReturnedRangeV1, AdmissionVia, LedgerView,
} from './ledger-record.js';

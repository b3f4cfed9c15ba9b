/**
 * The proxy's hash-chained trace ledger (docs/PROXY.md; hashing rule from seed 004).
 *
 * One JSON object per line (JSONL, UTF-8, LF). Record `seq` n stands on line n+1. Every record carries
 * `prev_hash` (the previous record's `record_hash`; 64 zeros for seq 0) and
 * `record_hash = SHA-256( UTF-8( prev_hash ‖ JCS(record without prev_hash and record_hash) ) )`, lower-case
 * hex, where JCS is the RFC 8785 canonical JSON form (package `canonicalize`) and ‖ is string
 * concatenation of the 64 hex characters and the canonical text.
 *
 * Record kinds: seq 0 is `session_start` (pins packet id + sha256, policy receipt, snapshot_id, budgets
 * and the admitted seeds); then one `tool_call` per request, admitted or refused; then, when the server
 * shut down cleanly, one `session_end`. Each record is written with a single `write(2)` and fsync'ed
 * before the response that it records leaves the server ({@link LedgerWriter.flush}).
 *
 * Readers: {@link verifyLedger} (chain, seq, schema, optional re-check against the vault) and
 * {@link exportLedger} (the capture fragment for `lore_access`). Format reference: docs/PROXY.md
 * ("Ledger") and schemas/ledger-record.schema.json.
 */
import { createHash } from 'node:crypto';
import { closeSync, fsync, fsyncSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import canonicalize from 'canonicalize';
import { LoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import type { VaultIndex, VaultPath } from '../types.js';
import type { ResearchTraceEntry } from '../contracts/types.js';
import type { RefusalCode } from '../proxy/refusals.js';
import { readIndexedLines } from '../proxy/safe-read.js';
import { outputSchema } from '../contracts/schemas.js';
import { jsonDuplicateKey } from '../contracts/rules.js';
import { sliceLines } from '../notes/lines.js';

/** `schema_version` of every ledger record written by this version. */
export const LEDGER_SCHEMA_VERSION = 'loretrace.ledger.v1';

/** `prev_hash` of the first record (seq 0): 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** How a note entered the session's admitted set. */
export type AdmissionVia = 'seed' | 'scope' | 'follow';

/** One lore text range returned by `lore_read`, as recorded in the ledger (text kept for export). */
export interface ReturnedRange {
  /** Ref of the returned range: `Ns:path#chunkN` for a whole chunk, else `Ns:path#L<a>-L<b>`. */
  ref: string;
  path: VaultPath;
  /** Chunk containing `line_start` (0 when the line lies before the first chunk, e.g. in frontmatter). */
  chunk_index: number;
  /** 1-based inclusive lines of the original file. */
  line_start: number;
  line_end: number;
  /** SHA-256 (hex) of the whole file as read (equal to the index manifest's). */
  file_sha256: string;
  /** The returned text: lines joined with "\n". */
  text: string;
  /** SHA-256 (hex) of `text` (UTF-8). */
  text_sha256: string;
  /** How the note was admitted and at which link depth (0 for seeds and scope entries). */
  via: AdmissionVia;
  depth: number;
}

/** Outcome of an admitted tool call. Which optional fields appear depends on the tool. */
export interface LedgerOkOutcome {
  status: 'ok';
  /** `lore_read`: the ranges returned, with their text. */
  returned?: ReturnedRange[];
  /** `lore_search`: the hits returned (no text). */
  results?: { ref: string; path: string; chunk_index: number; line_start: number; line_end: number; score: number }[];
  /** `lore_links`: per link, its target ref (null when unresolved or hidden) and the follow decision. */
  links?: { line: number; column: number; target_ref: string | null; follow: string }[];
  /** `lore_follow`: the admitted target. */
  admitted?: { ref: string; path: string; depth: number; from_ref: string; link_line: number; link_column: number; newly_admitted: boolean };
  /** Characters of lore text returned by this call. */
  chars_returned: number;
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

/** What a `tool_call` record says happened: the refs and ranges returned, or the refusal with its true reason. */
export type LedgerOutcome = LedgerOkOutcome | LedgerRefusedOutcome;

/** What the first record pins. */
export interface LedgerSessionInfo {
  loretrace_version: string;
  packet_id: string;
  /** SHA-256 (hex) of the packet file's bytes. */
  packet_sha256: string;
  /** The packet file as given on the command line (informational). */
  packet_file: string | null;
  namespace: string;
  snapshot_id: string;
  /** Absolute vault root at session start (informational; `verify --lore` takes its own). */
  lore_root: string;
  mode: 'responder_scoped_repository_search';
  policy_receipt: unknown[];
  budgets: Record<string, number | null>;
  limits: Record<string, number>;
  /** Seeds and scope entries admitted at depth 0. */
  admitted: { ref: string; path: string; via: AdmissionVia }[];
  /** Seeds and scope entries that were not admitted, with the true reason. */
  not_admitted: { ref: string; reason: string }[];
}

/** A ledger record without its two hash fields (what is hashed). */
export interface LedgerRecordBody {
  schema_version: typeof LEDGER_SCHEMA_VERSION;
  seq: number;
  /** ISO 8601 UTC time the record was written. */
  time: string;
  kind: 'session_start' | 'tool_call' | 'session_end';
  /** `tool_call`: tool name as requested (unknown names are recorded too). */
  tool?: string;
  /** `tool_call`: `mcp`, `http` or `direct` (library call). */
  transport?: string;
  /** `tool_call`: the arguments as received (long strings digested, see ServerLimits.ledger_max_arg_chars). */
  arguments?: unknown;
  outcome?: LedgerOutcome;
  /** `session_start` only. */
  session?: LedgerSessionInfo;
  /** `session_end` only: totals, zeros included (seed 003). */
  totals?: Record<string, number>;
}

/** A complete ledger record. */
export interface LedgerRecord extends LedgerRecordBody {
  prev_hash: string;
  record_hash: string;
}

/**
 * `record_hash` of a record body given the previous hash (seed 004):
 * SHA-256 over UTF-8(prevHash + JCS(body)), lower-case hex. Hash fields in `body` are ignored.
 */
export function hashLedgerRecord(prevHash: string, body: object): string {
  const { prev_hash: _p, record_hash: _r, ...rest } = body as Record<string, unknown>;
  const canonical = canonicalize(rest);
  if (canonical === undefined) throw new LoretraceError('ledger_bad_record', 'a ledger record has no canonical JSON form');
  return createHash('sha256').update(prevHash + canonical, 'utf8').digest('hex');
}

/** Write one JSONL line: body fields in order, then prev_hash and record_hash. */
function serialise(record: LedgerRecord): string {
  return JSON.stringify(record) + '\n';
}

/**
 * Append-only writer of one ledger file. Not safe for two writers on one file: the file is created with
 * `O_EXCL` (an existing ledger is never appended to or overwritten).
 *
 * {@link append} writes the record synchronously (one `write(2)` of the whole line) and returns it;
 * {@link flush} resolves once everything appended so far is fsync'ed (concurrent flushes are coalesced into
 * one fsync — group commit). Callers must await `flush()` before answering the request.
 */
export class LedgerWriter {
  private fd: number | null;
  private seq = 0;
  private prevHash = GENESIS_HASH;
  private written = 0;
  private synced = 0;
  private syncing = false;
  private waiters: { target: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private failed: unknown = null;

  private constructor(readonly path: string, fd: number) {
    this.fd = fd;
  }

  /**
   * Create a new ledger file (parent folder must exist) and fsync its folder entry.
   * @throws LoretraceError `ledger_exists` when the file already exists, `ledger_unwritable` when it
   *   cannot be created.
   */
  static create(path: string): LedgerWriter {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        throw new LoretraceError('ledger_exists', `ledger ${path} already exists; a ledger is never appended to or overwritten — choose a new file`, { file: path, expected: 'a path that does not exist yet' });
      }
      throw new LoretraceError('ledger_unwritable', `cannot create ledger ${path}: ${(e as Error).message}`, { file: path });
    }
    try {
      const dfd = openSync(dirname(path), 'r');
      try { fsyncSync(dfd); } finally { closeSync(dfd); }
    } catch {
      // Some platforms cannot fsync a directory; the file's own fsync still applies.
    }
    return new LedgerWriter(path, fd);
  }

  /** Next seq to be written. */
  get nextSeq(): number {
    return this.seq;
  }

  /** record_hash of the last record written (GENESIS_HASH before the first). */
  get headHash(): string {
    return this.prevHash;
  }

  /**
   * Append a record: assigns `seq`, `prev_hash` and `record_hash` and writes the line.
   * @throws LoretraceError `ledger_closed` after {@link close}; `ledger_write_failed` on an I/O error
   *   (the writer then refuses every later append: a ledger with a hole must not continue).
   */
  append(body: Omit<LedgerRecordBody, 'seq' | 'schema_version'>): LedgerRecord {
    if (this.fd === null) throw new LoretraceError('ledger_closed', `ledger ${this.path} is closed`, { file: this.path });
    if (this.failed) throw new LoretraceError('ledger_write_failed', `ledger ${this.path} failed earlier: ${(this.failed as Error).message}`, { file: this.path });
    const full: LedgerRecordBody = { schema_version: LEDGER_SCHEMA_VERSION, seq: this.seq, ...body };
    const record: LedgerRecord = { ...full, prev_hash: this.prevHash, record_hash: hashLedgerRecord(this.prevHash, full) };
    const buf = Buffer.from(serialise(record), 'utf8');
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      this.failed = e;
      throw new LoretraceError('ledger_write_failed', `cannot write ledger ${this.path}: ${(e as Error).message}`, { file: this.path });
    }
    this.seq += 1;
    this.prevHash = record.record_hash;
    this.written += 1;
    return record;
  }

  /** Resolve when every record appended so far is on disk (fsync). Rejects with `ledger_write_failed`. */
  flush(): Promise<void> {
    const target = this.written;
    if (this.failed) return Promise.reject(new LoretraceError('ledger_write_failed', `ledger ${this.path} failed: ${(this.failed as Error).message}`, { file: this.path }));
    if (this.synced >= target) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      if (!this.syncing) this.syncLoop();
    });
  }

  private syncLoop(): void {
    if (this.fd === null) return;
    this.syncing = true;
    const target = this.written;
    fsync(this.fd, (err) => {
      if (err) {
        this.failed = err;
        this.syncing = false;
        const ws = this.waiters;
        this.waiters = [];
        for (const w of ws) w.reject(new LoretraceError('ledger_write_failed', `cannot fsync ledger ${this.path}: ${err.message}`, { file: this.path }));
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
  /** An index of the vault: re-check every returned range's text against the files (`--lore`). */
  index?: VaultIndex;
  /** Expected `record_hash` of the last record (pinned elsewhere): detects truncation of whole records. */
  head?: string;
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
  /** True when every line is a well-formed record in an intact chain (and the lore re-check, if any, matched). */
  valid: boolean;
  /** Lines that parsed as complete records before the first bad one. */
  records: number;
  /** seq of the last record whose chain verified (null when none did). */
  verified_through_seq: number | null;
  /** seq expected at the first bad line (= its line number − 1), or null. */
  first_bad_seq: number | null;
  /** record_hash of the last verified record. */
  head_hash: string | null;
  /** True when the last verified record is a `session_end`. */
  closed: boolean;
  packet_id: string | null;
  packet_sha256: string | null;
  snapshot_id: string | null;
  /** Tool calls by outcome among verified records, zeros included. */
  totals: { tool_calls: number; ok: number; refused: number };
  lore: LoreCheckTotals | null;
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
 * Verify a ledger: every line is one JSON record valid against schemas/ledger-record.schema.json; `seq`
 * equals its line number − 1; `prev_hash` equals the previous `record_hash` (64 zeros for seq 0);
 * `record_hash` recomputes; seq 0 is the only `session_start`; nothing follows a `session_end`. Any edited,
 * deleted, inserted or reordered record breaks one of these; a torn last line (crash mid-write) is
 * reported as `ledger_torn_record`; a truncation of whole records is caught by `options.head` (and a
 * ledger without `session_end` gets the warning `ledger_not_closed`). Checking stops at the first bad
 * record, whose expected seq is `first_bad_seq`.
 *
 * With `options.index`, every range a `lore_read` returned is re-read from the vault (through the same
 * checked reader the proxy uses) and compared to the recorded text (`ledger_lore_mismatch`,
 * `ledger_lore_missing`; a changed file whose range still matches gives `ledger_lore_file_changed` as a
 * warning; a different snapshot_id gives `ledger_snapshot_changed` as a warning).
 *
 * Finding codes (all `error` unless stated): ledger_empty, ledger_bad_json, ledger_bad_record,
 * ledger_seq_mismatch, ledger_prev_hash_mismatch, ledger_record_hash_mismatch, ledger_torn_record,
 * ledger_no_session_start, ledger_duplicate_session_start, ledger_record_after_end, ledger_head_mismatch,
 * ledger_not_closed (warning), plus the lore codes above. A line with a duplicate key anywhere in the
 * record is `ledger_bad_record` (pointer of the second occurrence): the hash covers the last-wins parse,
 * not what a reader of the line sees. A ledger starting with a byte-order mark is `ledger_bad_json`
 * ("starts with a byte-order mark"). Never throws for bad content.
 */
export async function verifyLedger(text: string, options: VerifyLedgerOptions = {}): Promise<LedgerVerifyReport> {
  const file = options.file ?? null;
  const findings: Finding[] = [];
  const at = (line: number): Pick<Finding, 'path' | 'line'> => ({ ...(file ? { path: file } : {}), line });
  const report: LedgerVerifyReport = {
    file, valid: false, records: 0, verified_through_seq: null, first_bad_seq: null, head_hash: null, closed: false,
    packet_id: null, packet_sha256: null, snapshot_id: null,
    totals: { tool_calls: 0, ok: 0, refused: 0 }, lore: null, findings,
  };
  const { lines, tornTail } = ledgerLines(text);
  if (lines.length === 0) {
    findings.push({ code: 'ledger_empty', severity: 'error', message: `ledger ${file ?? '(text)'} has no records; expected a session_start record on line 1`, ...at(1) });
    report.first_bad_seq = 0;
    return report;
  }
  const good: LedgerRecord[] = [];
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
      if (isTail) fail(i, 'ledger_torn_record', `line ${i + 1} (seq ${i}) is an incomplete record with no line break — the writer stopped mid-record; the ledger verifies through seq ${i - 1}`);
      else fail(i, 'ledger_bad_json', `line ${i + 1} (seq ${i}) is not JSON; expected one ledger record per line`);
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
    const rec = value as LedgerRecord;
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
    if (i === 0 && rec.kind !== 'session_start') {
      fail(i, 'ledger_no_session_start', `seq 0 is a ${rec.kind} record; expected session_start`, '/kind');
      break;
    }
    if (i > 0 && rec.kind === 'session_start') {
      fail(i, 'ledger_duplicate_session_start', `seq ${i} is a second session_start; one ledger holds one session`, '/kind');
      break;
    }
    if (good.length > 0 && good[good.length - 1]!.kind === 'session_end') {
      fail(i, 'ledger_record_after_end', `seq ${i} follows the session_end record (seq ${i - 1})`, '/kind');
      break;
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
    report.verified_through_seq = last.seq;
    report.head_hash = last.record_hash;
    report.closed = last.kind === 'session_end';
    const s = good[0]!.session;
    report.packet_id = s?.packet_id ?? null;
    report.packet_sha256 = s?.packet_sha256 ?? null;
    report.snapshot_id = s?.snapshot_id ?? null;
  }
  for (const r of good) {
    if (r.kind !== 'tool_call') continue;
    report.totals.tool_calls += 1;
    if (r.outcome?.status === 'ok') report.totals.ok += 1;
    else report.totals.refused += 1;
  }
  if (report.first_bad_seq === null) {
    if (options.head !== undefined && options.head !== report.head_hash) {
      findings.push({ code: 'ledger_head_mismatch', severity: 'error', message: `the last record (seq ${report.verified_through_seq}) has record_hash ${report.head_hash}, expected head ${options.head}: records are missing at the end or the ledger is another one`, ...at(good.length) });
      report.first_bad_seq = good.length;
    } else if (!report.closed) {
      findings.push({ code: 'ledger_not_closed', severity: 'warning', message: `the ledger ends at seq ${report.verified_through_seq} without a session_end record: the server did not shut down cleanly (or records were cut off at the end; pass --head to check)`, ...at(good.length) });
    }
  }
  if (options.index) report.lore = await recheckLore(good, options.index, findings, file);
  report.valid = !findings.some((f) => f.severity === 'error');
  return report;
}

/** Re-read every returned range of `records` from the vault and compare it. */
async function recheckLore(records: LedgerRecord[], index: VaultIndex, findings: Finding[], file: string | null): Promise<LoreCheckTotals> {
  const totals: LoreCheckTotals = { ranges: 0, matched: 0, mismatched: 0, missing: 0, file_changed: 0 };
  const start = records[0]?.session;
  if (start && start.snapshot_id !== index.snapshot_id) {
    findings.push({ code: 'ledger_snapshot_changed', severity: 'warning', message: `the vault's snapshot_id is ${index.snapshot_id}, the session ran on ${start.snapshot_id}: files may have changed since; every range is re-checked by text`, ...(file ? { path: file } : {}), line: 1 });
  }
  const cache = new Map<string, { lines: string[]; sha256: string } | null>();
  for (const r of records) {
    if (r.kind !== 'tool_call' || r.outcome?.status !== 'ok' || !r.outcome.returned) continue;
    for (const range of r.outcome.returned) {
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
      const where = { ...(file ? { path: file } : {}), line: r.seq + 1, pointer: '/outcome/returned' };
      if (!entry) {
        totals.missing += 1;
        findings.push({ code: 'ledger_lore_missing', severity: 'error', message: `seq ${r.seq}: ${range.path} is not a readable indexed note of the vault; expected lines ${range.line_start}-${range.line_end}`, ...where });
        continue;
      }
      const text = range.line_end <= entry.lines.length && range.line_start >= 1 && range.line_start <= range.line_end
        ? sliceLines(entry.lines, range.line_start, range.line_end)
        : null;
      if (text !== range.text) {
        totals.mismatched += 1;
        findings.push({ code: 'ledger_lore_mismatch', severity: 'error', message: `seq ${r.seq}: lines ${range.line_start}-${range.line_end} of ${range.path} in the vault differ from the text the proxy returned`, ...where });
        continue;
      }
      totals.matched += 1;
      if (entry.sha256 !== range.file_sha256) {
        totals.file_changed += 1;
        findings.push({ code: 'ledger_lore_file_changed', severity: 'warning', message: `seq ${r.seq}: ${range.path} changed since the session (sha256 ${entry.sha256}, was ${range.file_sha256}) but lines ${range.line_start}-${range.line_end} still match`, ...where });
      }
    }
  }
  return totals;
}

/**
 * Parse ledger text into records without checking the chain (use {@link verifyLedger} first).
 * @throws LoretraceError `ledger_bad_json` for a line that is not JSON.
 */
export function parseLedger(text: string, file?: string): LedgerRecord[] {
  const { lines } = ledgerLines(text);
  return lines.map((line, i) => {
    try {
      return JSON.parse(line) as LedgerRecord;
    } catch {
      throw new LoretraceError('ledger_bad_json', `line ${i + 1} of ledger ${file ?? '(text)'} is not JSON`, { ...(file ? { file } : {}), line: i + 1 });
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// Export

/** One Ghostlight `research_trace_entry` (responder-output schema `$defs/research_trace_entry`). */
export type LedgerTraceEntry = ResearchTraceEntry & { origin: 'runner_captured' };

/**
 * The capture fragment `loretrace ledger export` writes: the runner-captured part of a capture's
 * `lore_access`, plus `snapshot_id` and the session's `policy_receipt` so `verify-trace` can check drift.
 */
export interface LedgerExport {
  mode: 'responder_scoped_repository_search';
  /** Seed and scope notes whose text was returned, as note refs (`Ns:path`), in first-read order. */
  consulted_refs: string[];
  /** Notes admitted through `lore_follow` whose text was returned, in first-read order. */
  followed_refs: string[];
  /** One runner_captured entry per chunk a `lore_read` returned lines of (blank-only pieces skipped). */
  research_trace: LedgerTraceEntry[];
  research_trace_status: 'runner_captured';
  snapshot_id: string;
  packet_id: string;
  policy_receipt: unknown[];
  /** record_hash of the ledger's last record (pin it to detect later truncation: `ledger verify --head`). */
  ledger_head: string;
}

/** The lookup a trace entry records: `lore_read <ref>` plus the line arguments when given. */
function lookupText(args: unknown): string {
  const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const ref = typeof a.ref === 'string' ? a.ref : JSON.stringify(a.ref ?? null);
  const lines = a.line_start !== undefined || a.line_end !== undefined ? ` lines ${String(a.line_start ?? '')}-${String(a.line_end ?? '')}` : '';
  return `lore_read ${ref}${lines}`;
}

/**
 * Build the capture fragment from a ledger's text. The ledger is verified first (chain, seq, schema).
 * Every piece of text a `lore_read` returned becomes one `runner_captured` trace entry whose
 * `extracted_constraint` is that text verbatim (lines joined with "\n"); a read spanning several chunks
 * gives one entry per chunk (a trace entry's range must lie inside its chunk). `trace_id` is
 * `ledger-<seq>-<n>`.
 *
 * @throws LoretraceError `ledger_invalid` when verification finds an error (the message names the first
 *   bad seq and the finding); a torn last record is an error too — verify the ledger to see it.
 */
export async function exportLedger(text: string, options: { file?: string } = {}): Promise<LedgerExport> {
  const report = await verifyLedger(text, options);
  const firstError = report.findings.find((f) => f.severity === 'error');
  if (firstError) {
    throw new LoretraceError('ledger_invalid', `ledger ${options.file ?? '(text)'} does not verify (first bad seq ${report.first_bad_seq}): ${firstError.message}; nothing exported`, {
      ...(options.file ? { file: options.file } : {}), line: firstError.line, data: { code: firstError.code },
    });
  }
  const records = parseLedger(text, options.file);
  const start = records[0]!.session!;
  const consulted: string[] = [];
  const followed: string[] = [];
  const seen = new Set<string>();
  const trace: LedgerTraceEntry[] = [];
  for (const r of records) {
    if (r.kind !== 'tool_call' || r.outcome?.status !== 'ok' || !r.outcome.returned) continue;
    r.outcome.returned.forEach((piece, n) => {
      const noteRef = `${start.namespace}:${piece.path}`;
      if (!seen.has(noteRef)) {
        seen.add(noteRef);
        (piece.via === 'follow' ? followed : consulted).push(noteRef);
      }
      if (piece.text.trim() === '') return;
      trace.push({
        trace_id: `ledger-${r.seq}-${n}`,
        origin: 'runner_captured',
        query: lookupText(r.arguments),
        source_ref: piece.ref,
        source_path: piece.path,
        chunk_index: piece.chunk_index,
        line_start: piece.line_start,
        line_end: piece.line_end,
        extracted_constraint: piece.text,
        used_for: `returned to the responder by lore_read (ledger seq ${r.seq}, ${piece.via} at depth ${piece.depth}); how the response used it is the responder's or reviewer's to state`,
      });
    });
  }
  return {
    mode: 'responder_scoped_repository_search',
    consulted_refs: consulted,
    followed_refs: followed,
    research_trace: trace,
    research_trace_status: 'runner_captured',
    snapshot_id: start.snapshot_id,
    packet_id: start.packet_id,
    policy_receipt: start.policy_receipt,
    ledger_head: report.head_hash!,
  };
}

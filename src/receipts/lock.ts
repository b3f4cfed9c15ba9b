/**
 * Locked, versioned artifacts (seed 002, "packet.lock.json Advanced Optional Mode": "The lock detects drift
 * after handoff"; "Historical strict-handoff packets must remain immutable"). Every loretrace run that writes
 * files writes `<name>.lock.json` beside them (schemas/lock.schema.json): the sha256 and size of every output
 * and input file, the vault snapshot, the policy receipt, the ledger head and the trace bindings.
 *
 * - {@link lockPathFor} — where the lock of an output goes;
 * - {@link buildLock} — the lock document of a run (pure: hashes the bytes it is given);
 * - {@link verifyLock} — re-hash every listed file, compare the vault snapshot, one disposition per file and
 *   totals with zeros (seed 003: "an omitted total is indistinguishable from zero"); with trusted keys, check
 *   who signed the ledger the lock names (src/receipts/signing.ts);
 * - {@link lockedPaths} — the files the locks of a folder list, which a run must never overwrite;
 * - {@link findLockFor} — the lock that lists a file as an output (how `capture check` and `verify-trace`
 *   find the ledger behind a capture or a capture fragment).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import { outputSchema } from '../contracts/schemas.js';
import { parseJsonDocument } from '../contracts/validate.js';
import { nonFiniteLedgerLine, parseLedger, verifyLedger } from './ledger.js';
import { viewLedger } from './ledger-record.js';
import type { LedgerView } from './ledger-record.js';
import { findServedPiece, parseTraceId } from './ledger-export.js';
import { AUTHORSHIP_CODES, AUTHORSHIP_NOT_CHECKED, authorshipCode, verificationVerdict } from './signing.js';
import type { AuthorshipStatus, TrustedKey, VerificationVerdict } from './signing.js';
import { isJsonObject } from '../contracts/json-object.js';

/** `schema_version` of a lock written by this version. */
export const LOCK_SCHEMA_VERSION = 'loretrace.lock.v1';

/** Seed 002's manifest statuses that apply to a run's outputs. */
export type LockStatus = 'draft' | 'ready_for_next_role';
/** The commands that write locks. */
export type LockCommand = 'retrieve' | 'capture' | 'ledger export';

/** One file of a lock. `path` is relative to the lock's folder (POSIX); `bytes` its size. */
export interface LockFileEntry {
  path: string;
  sha256: string;
  role: 'output' | 'input';
  bytes: number;
}

/** One runner_captured entry's binding (`record_hash`/`seq` when a ledger record backs it). */
export interface LockTraceBinding {
  trace_id: string;
  source_ref: string;
  line_start: number;
  line_end: number;
  disposition?: string;
  ledger_backed?: boolean;
  record_hash?: string;
  seq?: number;
  [extra: string]: unknown;
}

/** A lock document (schemas/lock.schema.json). Key order is fixed as listed. */
export interface LockDocument {
  schema_version: typeof LOCK_SCHEMA_VERSION;
  status: LockStatus;
  command: LockCommand;
  files: LockFileEntry[];
  snapshot: { namespace: string; snapshot_id: string } | null;
  policy_receipt: unknown[] | null;
  /**
   * The ledger behind the run; `signer_key_id` is the `key_id` of the key that signed its closing record
   * (src/receipts/signing.ts), null when it is unsigned (absent in locks written before signing existed).
   */
  ledger: { path: string; head: string | null; records: number; closed: boolean; ledger_id?: string; schema_version?: string; snapshot_id?: string; packet_id?: string; signer_key_id?: string | null } | null;
  raw_output_sha256?: string;
  trace_bindings: LockTraceBinding[];
}

/** A file handed to {@link buildLock}: absolute path, role and its exact bytes (a string is UTF-8). */
export interface LockInputFile {
  abs: string;
  role: 'output' | 'input';
  content: string | Uint8Array;
}

/** Inputs of {@link buildLock}. Absolute paths; `ledger.abs` is made relative like the files. */
export interface BuildLockInput {
  lockPath: string;
  status: LockStatus;
  command: LockCommand;
  files: LockInputFile[];
  snapshot: { namespace: string; snapshot_id: string } | null;
  policyReceipt: unknown[] | null;
  ledger: { abs: string; head: string | null; records: number; closed: boolean; ledger_id?: string; schema_version?: string; snapshot_id?: string; packet_id?: string; signer_key_id?: string | null } | null;
  rawOutputSha256?: string;
  traceBindings: LockTraceBinding[];
}

const sha256 = (bytes: string | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const posix = (p: string): string => p.split(sep).join('/');

/**
 * The lock of an output: `<out without .json>.lock.json` beside it (`x.capture.json` → `x.capture.lock.json`,
 * `session` → `session.lock.json`).
 */
export function lockPathFor(outPath: string): string {
  return join(dirname(outPath), `${basename(outPath).replace(/\.json$/i, '')}.lock.json`);
}

/** A path relative to the lock's folder, POSIX separators. */
function relToLock(lockPath: string, abs: string): string {
  const rel = posix(relative(dirname(lockPath), abs));
  return rel === '' ? '.' : rel;
}

/**
 * The lock document of a run: files outputs first, each with sha256 and size of the content given (what was
 * written or read), paths relative to the lock's folder. Pure and deterministic. A file listed twice (an
 * output that is also an input) is refused with `usage`: a run never reads and writes one file.
 */
export function buildLock(input: BuildLockInput): LockDocument {
  const ordered = [...input.files.filter((f) => f.role === 'output'), ...input.files.filter((f) => f.role === 'input')];
  const seen = new Set<string>();
  const files = ordered.map((f): LockFileEntry => {
    const path = relToLock(input.lockPath, f.abs);
    if (seen.has(path)) throw new LoretraceError('usage', `${f.abs} is listed twice in the lock of ${input.lockPath}; expected each file once`, { file: f.abs }, 2);
    seen.add(path);
    const bytes = typeof f.content === 'string' ? Buffer.byteLength(f.content, 'utf8') : f.content.byteLength;
    return { path, sha256: sha256(f.content), role: f.role, bytes };
  });
  return {
    schema_version: LOCK_SCHEMA_VERSION,
    status: input.status,
    command: input.command,
    files,
    snapshot: input.snapshot,
    policy_receipt: input.policyReceipt,
    ledger: input.ledger ? (({ abs, ...pin }) => ({ path: relToLock(input.lockPath, abs), ...pin }))(input.ledger) : null,
    ...(input.rawOutputSha256 !== undefined ? { raw_output_sha256: input.rawOutputSha256 } : {}),
    trace_bindings: input.traceBindings,
  };
}

/**
 * Disposition of one listed file: `unchanged` (same sha256), `changed` (drift: other bytes), `missing` (cannot
 * be read as a regular file).
 */
export type LockFileDisposition = 'unchanged' | 'changed' | 'missing';
/** Every file disposition, in the order totals use. */
export const LOCK_FILE_DISPOSITIONS: readonly LockFileDisposition[] = ['unchanged', 'changed', 'missing'];

/**
 * Disposition of the vault snapshot: `unchanged` / `changed` against the vault given, `not_checked` when no
 * vault was given, `other_vault` when the vault given has another namespace than the one the lock records
 * (the snapshots are not comparable: pass the lock's own vault), `not_recorded` when the lock records none.
 */
export type LockSnapshotDisposition = 'unchanged' | 'changed' | 'not_checked' | 'other_vault' | 'not_recorded';

/** Every snapshot disposition, in report order (totals list each one, zeros included — seed 003). */
export const LOCK_SNAPSHOT_DISPOSITIONS: readonly LockSnapshotDisposition[] = ['unchanged', 'changed', 'not_checked', 'other_vault', 'not_recorded'];

/** The verdict on one listed file. */
export interface LockFileVerdict {
  path: string;
  role: 'output' | 'input';
  disposition: LockFileDisposition;
  expected_sha256: string;
  /** sha256 of the file now; null when missing. */
  actual_sha256: string | null;
  /** Why it is not `unchanged`; null otherwise. */
  detail: string | null;
}

/** What {@link verifyLock} returns (`loretrace lock verify --json` prints one per lock). */
export interface LockVerificationReport {
  schema_version: 'loretrace.lock_verification.v1';
  file: string;
  command: LockCommand;
  status: LockStatus;
  files: LockFileVerdict[];
  snapshot: { disposition: LockSnapshotDisposition; recorded: string | null; current: string | null; namespace: string | null; current_namespace: string | null };
  /** Count per file disposition, every key present. */
  totals: Record<LockFileDisposition, number>;
  /** Who signed the ledger the lock names (null when it names none): see {@link LockLedgerAuthorship}. */
  ledger_authorship: LockLedgerAuthorship | null;
  /**
   * What the lock binds that its file hashes alone do not show ({@link lockBindingProblems}): the packet the
   * ledger's `SESSION_OPENED` pins against the lock's entry for it, and a capture's `raw_output` against the
   * lock's `raw_output_sha256` and its locked raw-output input, and every field summarising the ledger (snapshot,
   * record count, closed, signer key id, trace bindings) against the ledger itself. Empty when they agree.
   */
  bindings: Finding[];
  /** True when some file changed or is missing, the snapshot changed, or a binding disagrees. */
  drift: boolean;
  /**
   * What the report's success rests on — read this first (src/receipts/signing.ts `VerificationVerdict`):
   * `verified` when `integrity_ok` and the lock names no ledger or trusted keys were given; `integrity_only`
   * when `integrity_ok` but the lock names a ledger and no trusted key was given (the files hash as locked,
   * and anyone can write such a ledger and re-hash its lock); `failed` otherwise.
   */
  verdict: VerificationVerdict;
  /** True only when `verdict` is `verified`. */
  ok: boolean;
  /** Nothing drifted and, with trusted keys, the ledger is signed by one of them (authorship unchecked aside). */
  integrity_ok: boolean;
}

/**
 * The authorship of a lock's ledger: `recorded_key_id` is the lock's `ledger.signer_key_id` (null when
 * unsigned or not recorded). Without trusted keys `checked` is false and `status` `not_checked`; with
 * them the ledger file is read and verified up to the lock's head: `status` is the ledger's
 * (src/receipts/signing.ts `AuthorshipStatus`), or `ledger_broken` when its chain does not verify up to
 * that head or it cannot be read (its file's drift is reported by the file check too).
 */
export interface LockLedgerAuthorship {
  checked: boolean;
  status: AuthorshipStatus | 'ledger_broken';
  recorded_key_id: string | null;
  /** The key id the ledger's signature states now (null unsigned or not read). */
  key_id: string | null;
  detail: string;
}

/**
 * Parse and schema-check a lock document.
 * @throws LoretraceError `bad_json` (exit 2) for text that is not JSON; `bad_lock` (exit 1) naming the pointer
 *   when it is not a lock of schemas/lock.schema.json.
 */
export function parseLock(text: string, file: string): LockDocument {
  const value = parseJsonDocument(text, file);
  const validate = outputSchema('lock');
  if (!validate(value)) {
    const err = validate.errors?.[0];
    throw new LoretraceError('bad_lock', `${file} is not a loretrace lock: ${err?.instancePath || '/'} ${err?.message ?? 'is invalid'}`, { file, pointer: err?.instancePath ?? '', expected: 'a lock of schemas/lock.schema.json' });
  }
  return value as LockDocument;
}

/**
 * The bytes of one file a lock lists, opened without blocking and checked on the open handle: `'not_regular'`
 * for a FIFO, device, socket or folder (a FIFO would block a plain read forever), `null` when it cannot be
 * opened. Never throws.
 */
async function readListedFile(path: string): Promise<Buffer | 'not_regular' | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EISDIR' ? 'not_regular' : null;
  }
  try {
    if (!(await handle.stat()).isFile()) return 'not_regular';
    return await handle.readFile();
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/**
 * Verify a lock: re-hash every listed file (paths relative to the lock's folder) and compare the recorded
 * vault snapshot with `currentSnapshot` when given (of the vault named `currentNamespace`: a lock of another
 * vault is `other_vault`, not a drift). Reads files; never throws for drift (drift is data).
 * @throws LoretraceError as {@link parseLock}; `bad_lock` for a listed path that is absolute.
 */
export async function verifyLock(text: string, file: string, options: { currentSnapshot?: string; currentNamespace?: string; cwd?: string; trustedKeys?: readonly TrustedKey[] } = {}): Promise<LockVerificationReport> {
  const lock = parseLock(text, file);
  const folder = dirname(resolve(options.cwd ?? process.cwd(), file));
  const files: LockFileVerdict[] = [];
  const contents = new Map<string, Buffer>();
  for (const [i, f] of lock.files.entries()) {
    if (isAbsolute(f.path)) throw new LoretraceError('bad_lock', `${file}: /files/${i}/path ${JSON.stringify(f.path)} is absolute; expected a path relative to the lock's folder`, { file, pointer: `/files/${i}/path` });
    const read = await readListedFile(resolve(folder, f.path));
    if (read !== null && read !== 'not_regular') contents.set(resolve(folder, f.path), read);
    const actual = read === null || read === 'not_regular' ? null : sha256(read);
    const disposition: LockFileDisposition = read === 'not_regular' ? 'changed' : actual === null ? 'missing' : actual === f.sha256 ? 'unchanged' : 'changed';
    const detail = read === 'not_regular' ? `${f.path} is not a regular file (a FIFO, device or folder now stands where the ${f.role} was): it was not read`
      : disposition === 'missing' ? `${f.path} cannot be read (listed as ${f.role})`
        : disposition === 'changed' ? `${f.path} has sha256 ${actual}, the lock recorded ${f.sha256}: the ${f.role} changed after the run (write a new version instead)` : null;
    files.push({ path: f.path, role: f.role, disposition, expected_sha256: f.sha256, actual_sha256: actual, detail });
  }
  const recorded = lock.snapshot?.snapshot_id ?? null;
  const current = options.currentSnapshot ?? null;
  const namespace = lock.snapshot?.namespace ?? null;
  const currentNamespace = options.currentNamespace ?? null;
  const snap: LockSnapshotDisposition = recorded === null ? 'not_recorded' : current === null ? 'not_checked'
    : currentNamespace !== null && namespace !== null && currentNamespace !== namespace ? 'other_vault'
      : recorded === current ? 'unchanged' : 'changed';
  const totals = Object.fromEntries(LOCK_FILE_DISPOSITIONS.map((d) => [d, 0])) as Record<LockFileDisposition, number>;
  for (const v of files) totals[v.disposition] += 1;
  const bindings = await lockBindingProblems(lock, file, folder, contents);
  const drift = totals.changed > 0 || totals.missing > 0 || snap === 'changed' || bindings.length > 0;
  const authorship = lock.ledger ? await lockLedgerAuthorship(lock.ledger, folder, file, options.trustedKeys ?? []) : null;
  const integrityOk = !drift && (authorship === null || !authorship.checked || authorship.status === 'trusted');
  const verdict = verificationVerdict(integrityOk, authorship !== null && !authorship.checked);
  return {
    schema_version: 'loretrace.lock_verification.v1', file, command: lock.command, status: lock.status, files,
    snapshot: { disposition: snap, recorded, current: snap === 'other_vault' ? null : current, namespace, current_namespace: currentNamespace }, totals,
    ledger_authorship: authorship, bindings, drift, verdict, ok: verdict === 'verified', integrity_ok: integrityOk,
  };
}

/** The packet a ledger's `SESSION_OPENED` pins, as {@link pinnedPacketRow} finds it among a lock's files. */
export type PinnedPacketLookup =
  | { kind: 'not_pinned' }
  | { kind: 'found'; path: string; sha256: string; pinned_sha256: string; pinned_id: string | null }
  | { kind: 'not_listed'; pinned_file: string | null; pinned_sha256: string };

/**
 * Find, among a lock's `files`, the packet a ledger session pins (`session.packet_sha256`, `packet_file`,
 * `packet_id`: src/receipts/ledger-record.ts). `retrieve` records `packet_file` relative to the ledger's folder,
 * `serve` its file name: the entry at that path wins, else the one entry with that file name, else the one
 * entry whose sha256 is the pinned one (a packet renamed but byte for byte the pinned one). The lookup never
 * reads the capture's own `packet_ref`, so spacing or renaming it cannot hide the packet (docs/RECEIPTS.md
 * "The packet the ledger pins"). `not_pinned` when the session pins no sha256 (a ledger of no packet).
 * `lockFolder` and `ledgerAbs` are absolute. Pure.
 */
export function pinnedPacketRow(files: readonly { path?: unknown; sha256?: unknown }[], lockFolder: string, ledgerAbs: string, session: Record<string, unknown> | null): PinnedPacketLookup {
  const pinnedSha = session?.['packet_sha256'];
  if (typeof pinnedSha !== 'string' || pinnedSha === '') return { kind: 'not_pinned' };
  const named = typeof session?.['packet_file'] === 'string' && session['packet_file'] !== '' ? session['packet_file'] : null;
  const rows = files.filter((f): f is { path: string; sha256: string } => typeof f.path === 'string' && typeof f.sha256 === 'string' && resolve(lockFolder, f.path) !== ledgerAbs);
  const exact = named === null ? [] : rows.filter((f) => resolve(lockFolder, f.path) === resolve(dirname(ledgerAbs), named));
  const byName = named === null ? [] : rows.filter((f) => basename(f.path) === basename(named));
  const bySha = rows.filter((f) => f.sha256 === pinnedSha);
  const hit = exact.length === 1 ? exact[0] : byName.length === 1 ? byName[0] : bySha.length === 1 ? bySha[0] : undefined;
  const id = typeof session?.['packet_id'] === 'string' ? session['packet_id'] : null;
  return hit === undefined ? { kind: 'not_listed', pinned_file: named, pinned_sha256: pinnedSha } : { kind: 'found', path: hit.path, sha256: hit.sha256, pinned_sha256: pinnedSha, pinned_id: id };
}

/**
 * The step of {@link verifyLock} that holds a lock's bindings, each a drift finding (error, `path` = the lock):
 * - `lock_packet_not_listed` (pointer `/files`): a `retrieve` or `capture` lock names a ledger whose
 *   `SESSION_OPENED` pins a packet, but lists no file that is it ({@link pinnedPacketRow}) — dropping the
 *   packet's entry must not turn off the checks that read it;
 * - `lock_packet_mismatch` (pointer `/files/<i>/sha256`): the lock records another sha256 for that packet
 *   than the ledger pins, or the file's `packet_id` is not the pinned one (seed 004: the ledger's hashes are
 *   the receipt; a packet re-hashed into the lock after the signed run is not the packet the run wrote);
 * - `lock_raw_output_mismatch` (pointer `/raw_output_sha256`): a `capture` lock's `raw_output_sha256` is not
 *   the sha256 of the capture's `raw_output` (UTF-8), or the lock lists a raw-output input file and none of
 *   its inputs has that sha256 (seed 001: the raw output is the responder's text byte for byte).
 * `contents` holds the listed files' bytes by absolute path (what was hashed). An unreadable ledger or
 * output adds nothing here: the file check reports it.
 */
async function lockBindingProblems(lock: LockDocument, file: string, folder: string, contents: ReadonlyMap<string, Buffer>): Promise<Finding[]> {
  const out: Finding[] = [];
  const problem = (code: string, pointer: string, message: string) => out.push({ code, severity: 'error', path: file, pointer, message });
  let packetRow: string | null = null;
  if (lock.ledger && (lock.command === 'retrieve' || lock.command === 'capture') && !isAbsolute(lock.ledger.path)) {
    const ledgerAbs = resolve(folder, lock.ledger.path);
    const bytes = contents.get(ledgerAbs) ?? await readListedFile(ledgerAbs);
    const session = bytes === null || bytes === 'not_regular' ? null : openingSession(bytes.toString('utf8'));
    const found = pinnedPacketRow(lock.files, folder, ledgerAbs, session);
    if (found.kind === 'not_listed') {
      problem('lock_packet_not_listed', '/files', `the ledger ${lock.ledger.path} pins packet ${found.pinned_file ?? '(no file name)'} sha256 ${found.pinned_sha256}, but the lock lists no such file: a lock must list the packet its ledger's session pins`);
    } else if (found.kind === 'found') {
      packetRow = found.path;
      const i = lock.files.findIndex((f) => f.path === found.path);
      if (found.sha256 !== found.pinned_sha256) {
        problem('lock_packet_mismatch', `/files/${i}/sha256`, `the lock records sha256 ${found.sha256} for the packet ${found.path}, but its ledger ${lock.ledger.path} pins sha256 ${found.pinned_sha256}: the packet is not the one the run wrote`);
      } else {
        const text = contents.get(resolve(folder, found.path));
        const id = text === undefined ? null : packetIdOf(text);
        if (text !== undefined && found.pinned_id !== null && id !== found.pinned_id) problem('lock_packet_mismatch', `/files/${i}/path`, `the packet ${found.path} has packet_id ${JSON.stringify(id)}, but the ledger ${lock.ledger.path} pins packet_id ${found.pinned_id}`);
      }
    }
  }
  if (lock.command === 'capture' && typeof lock.raw_output_sha256 === 'string') rawOutputProblems(lock, folder, contents, packetRow, problem);
  if (lock.ledger && !isAbsolute(lock.ledger.path)) await ledgerSummaryProblems(lock, file, folder, contents, problem);
  return out;
}

/**
 * The half of {@link lockBindingProblems} that holds every lock field summarising its ledger to the ledger
 * itself, read and verified (chain, up to the lock's pinned `ledger.head`): the lock file is hashed nowhere, so
 * a field not checked against the ledger is its editor's say-so (seed 002: a lock proves "the snapshot and
 * ledger head it ran on"). Each drift is an error naming the lock, the pointer, the recorded and the actual value:
 * - `lock_snapshot_mismatch` (`/snapshot/snapshot_id`): the lock's snapshot is not the one the ledger's
 *   `SESSION_OPENED` pins (every run writing a ledger-backed lock records its ledger's snapshot);
 * - `lock_ledger_mismatch` (`/ledger/records`, `/ledger/closed`, `/ledger/signer_key_id` and, when recorded,
 *   `/ledger/ledger_id`, `/ledger/schema_version`, `/ledger/snapshot_id`, `/ledger/packet_id`): the record count,
 *   the closing record, the `key_id` the closing record's signature states (whether that key is trusted is
 *   {@link LockLedgerAuthorship}'s question) and the session's ids, as the ledger has them;
 * - `lock_binding_mismatch` (`/trace_bindings/<i>`): a row the ledger and the locked outputs do not produce —
 *   a row claiming `ledger_backed` whose trace_id names no record of this ledger that served exactly its ref
 *   and lines (or whose recorded `record_hash`, `seq`, `ledger_id`, `ledger_head`, `snapshot_id`, `text_sha256`
 *   differ from the record's), a row whose trace_id is an entry of the locked capture or fragment with another
 *   ref or lines, and a row that is neither backed by the ledger nor an entry of a locked output. A row of an
 *   entry later dropped from a capture, still backed by the ledger, stays allowed (docs/RECEIPTS.md).
 * A ledger that cannot be read or does not verify up to the pinned head adds nothing here: the file check
 * reports an edited ledger, `--trust-key` reports a broken one (`ledger_broken`).
 */
async function ledgerSummaryProblems(lock: LockDocument, file: string, folder: string, contents: ReadonlyMap<string, Buffer>, problem: (code: string, pointer: string, message: string) => void): Promise<void> {
  const pin = lock.ledger!;
  const ledgerAbs = resolve(folder, pin.path);
  const bytes = contents.get(ledgerAbs) ?? await readListedFile(ledgerAbs);
  if (bytes === null || bytes === 'not_regular') return;
  const text = bytes.toString('utf8');
  const report = await verifyLedger(text, { file: pin.path, ...(pin.head !== null ? { head: pin.head } : {}) });
  if (report.findings.some((f) => f.severity === 'error' && !(AUTHORSHIP_CODES as readonly string[]).includes(f.code)) || report.records === 0) return;
  let view: LedgerView;
  try {
    view = viewLedger(parseLedger(text, pin.path).slice(0, report.records));
  } catch {
    return;
  }
  const where = `lock ${file}`;
  const differs = (code: string, pointer: string, recorded: unknown, actual: unknown, what: string) => {
    if (recorded !== actual) problem(code, pointer, `${where} ${pointer} records ${JSON.stringify(recorded)}, but the ledger ${pin.path} ${what} ${JSON.stringify(actual)}: the lock was edited after the run or is not this ledger's`);
  };
  if (lock.snapshot !== null) differs('lock_snapshot_mismatch', '/snapshot/snapshot_id', lock.snapshot.snapshot_id, view.snapshot_id, 'pins (SESSION_OPENED) snapshot');
  differs('lock_ledger_mismatch', '/ledger/records', pin.records, report.records, 'has, up to the pinned head, records:');
  differs('lock_ledger_mismatch', '/ledger/closed', pin.closed, view.closed, 'closed (a SESSION_CLOSED record last):');
  if (pin.signer_key_id !== undefined) differs('lock_ledger_mismatch', '/ledger/signer_key_id', pin.signer_key_id, view.signer_key_id, 'is signed by key_id');
  const ids: [keyof NonNullable<LockDocument['ledger']>, unknown][] = [['ledger_id', view.ledger_id], ['schema_version', view.schema_version], ['snapshot_id', view.snapshot_id], ['packet_id', view.packet_id]];
  for (const [key, actual] of ids) if (pin[key] !== undefined) differs('lock_ledger_mismatch', `/ledger/${key}`, pin[key], actual, `has ${key}`);
  const entries = lockedTraceEntries(lock, folder, contents);
  lock.trace_bindings.forEach((row, i) => {
    const pointer = `/trace_bindings/${i}`;
    const bad = (why: string) => problem('lock_binding_mismatch', pointer, `${where} ${pointer} binds ${row.trace_id} (${row.source_ref} lines ${row.line_start}-${row.line_end}${row.ledger_backed === true ? ', ledger_backed' : ''}), but ${why}: a binding must be re-derivable from the ledger and the locked outputs`);
    const entry = entries?.get(row.trace_id);
    if (entry !== undefined && (entry.source_ref !== row.source_ref || entry.line_start !== row.line_start || entry.line_end !== row.line_end)) {
      return bad(`the locked output's entry ${row.trace_id} cites ${String(entry.source_ref)} lines ${String(entry.line_start)}-${String(entry.line_end)}`);
    }
    const parts = parseTraceId(row.trace_id);
    const found = parts === null ? null : findServedPiece(view, parts);
    if (found === null || !found.ok) {
      if (row.ledger_backed === true || entry === undefined) bad(parts === null ? 'its trace_id is not of the ledger-bound form <ledger_id>:<seq>:<record_hash prefix>' : `the ledger ${pin.path} has no such record (${found!.ok ? '' : found!.detail})${entry === undefined ? ' and no locked output holds the entry' : ''}`);
      return;
    }
    const served = { source_ref: found.range.ref, line_start: found.range.line_start, line_end: found.range.line_end, record_hash: found.call.record_hash, seq: found.call.seq, ledger_id: view.ledger_id, ledger_head: view.head, snapshot_id: view.snapshot_id, text_sha256: found.range.text_sha256 };
    for (const [key, actual] of Object.entries(served)) {
      if (key in row && row[key] !== actual) return bad(`record ${view.ledger_id}:${parts!.seq} of ${pin.path} has ${key} ${JSON.stringify(actual)}`);
    }
  });
}

/**
 * The trace entries of a lock's outputs, by trace_id — a capture's `lore_access.research_trace` or a
 * fragment's `research_trace` (every origin) — for {@link ledgerSummaryProblems}; null when no output holds one.
 */
function lockedTraceEntries(lock: LockDocument, folder: string, contents: ReadonlyMap<string, Buffer>): Map<string, { source_ref?: unknown; line_start?: unknown; line_end?: unknown }> | null {
  let out: Map<string, { source_ref?: unknown; line_start?: unknown; line_end?: unknown }> | null = null;
  for (const f of lock.files.filter((r) => r.role === 'output')) {
    const bytes = contents.get(resolve(folder, f.path));
    let doc: unknown;
    try {
      doc = bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8'));
    } catch {
      continue;
    }
    if (!isJsonObject(doc)) continue;
    const trace = isJsonObject(doc['lore_access']) && Array.isArray(doc['lore_access']['research_trace']) ? doc['lore_access']['research_trace'] : Array.isArray(doc['research_trace']) ? doc['research_trace'] : null;
    if (trace === null) continue;
    out ??= new Map();
    for (const e of trace) if (isJsonObject(e) && typeof e['trace_id'] === 'string') out.set(e['trace_id'], e);
  }
  return out;
}

/** The `lock_raw_output_mismatch` half of {@link lockBindingProblems}. */
function rawOutputProblems(lock: LockDocument, folder: string, contents: ReadonlyMap<string, Buffer>, packetRow: string | null, problem: (code: string, pointer: string, message: string) => void): void {
  const pinned = lock.raw_output_sha256!;
  for (const f of lock.files.filter((r) => r.role === 'output')) {
    const bytes = contents.get(resolve(folder, f.path));
    let raw: unknown;
    try {
      raw = bytes === undefined ? undefined : (JSON.parse(bytes.toString('utf8')) as { raw_output?: unknown } | null)?.raw_output;
    } catch {
      raw = undefined;
    }
    if (typeof raw === 'string' && sha256(raw) !== pinned) problem('lock_raw_output_mismatch', '/raw_output_sha256', `${f.path} has a raw_output of sha256 ${sha256(raw)}, but the lock records raw_output_sha256 ${pinned}: the responder's raw output was replaced after the run`);
  }
  // A capture lock's inputs are the packet, the raw output (absent when read from stdin) and the receipts
  // (a ledger, or a fragment): the one input left over beyond the receipts is the raw output file.
  const packetPath = packetRow ?? lockedPacketGuess(lock, folder, contents);
  const others = lock.files.filter((f) => f.role === 'input' && f.path !== packetPath && (lock.ledger === null || resolve(folder, f.path) !== resolve(folder, lock.ledger.path)));
  const receiptFiles = lock.ledger !== null ? 0 : packetPath !== null && packetModeOf(contents.get(resolve(folder, packetPath))) === 'curated_excerpts_only' ? 0 : 1;
  if (others.length > receiptFiles && !others.some((f) => f.sha256 === pinned)) {
    problem('lock_raw_output_mismatch', '/raw_output_sha256', `the lock records raw_output_sha256 ${pinned}, but none of its inputs (${others.map((f) => f.path).join(', ')}) has that sha256: the locked raw-output file is not the raw output the capture holds`);
  }
}

/** A capture lock's packet input when no ledger pins it: the input whose file parses to a packet (`packet_id` and `lore_access`), if exactly one. */
function lockedPacketGuess(lock: LockDocument, folder: string, contents: ReadonlyMap<string, Buffer>): string | null {
  const hits = lock.files.filter((f) => f.role === 'input' && packetModeOf(contents.get(resolve(folder, f.path))) !== null);
  return hits.length === 1 ? hits[0]!.path : null;
}

/** `lore_access.mode` of a packet file's bytes (null when not a packet-shaped JSON object). */
function packetModeOf(bytes: Buffer | undefined): string | null {
  try {
    const d = bytes === undefined ? null : JSON.parse(bytes.toString('utf8')) as { packet_id?: unknown; lore_access?: { mode?: unknown } } | null;
    return typeof d?.packet_id === 'string' && typeof d.lore_access?.mode === 'string' ? d.lore_access.mode : null;
  } catch {
    return null;
  }
}

/** `packet_id` of a packet file's bytes, or null. */
function packetIdOf(bytes: Buffer): string | null {
  try {
    const id = (JSON.parse(bytes.toString('utf8')) as { packet_id?: unknown } | null)?.packet_id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

/**
 * The {@link LockLedgerAuthorship} of a lock's ledger (path relative to the lock's folder `folder`). Reads
 * the ledger only when trusted keys are given. Never throws.
 */
async function lockLedgerAuthorship(ledger: NonNullable<LockDocument['ledger']>, folder: string, lockFile: string, trusted: readonly TrustedKey[]): Promise<LockLedgerAuthorship> {
  const recorded = ledger.signer_key_id ?? null;
  if (trusted.length === 0) {
    return { checked: false, status: 'not_checked', recorded_key_id: recorded, key_id: null, detail: `${AUTHORSHIP_NOT_CHECKED}: who signed the ledger is unknown (the lock's ${recorded === null ? 'claim of no signer' : `claim of signer key ${recorded}`} is unverified)` };
  }
  const read = isAbsolute(ledger.path) ? null : await readListedFile(resolve(folder, ledger.path));
  if (read === null || read === 'not_regular') {
    return { checked: true, status: 'ledger_broken', recorded_key_id: recorded, key_id: null, detail: `the ledger ${ledger.path} the lock names cannot be read, so its signer cannot be checked` };
  }
  const report = await verifyLedger(read.toString('utf8'), { file: ledger.path, ...(ledger.head !== null ? { head: ledger.head } : {}), trustedKeys: trusted });
  const chainError = report.findings.find((f) => f.severity === 'error' && !(AUTHORSHIP_CODES as readonly string[]).includes(f.code));
  if (chainError) {
    return { checked: true, status: 'ledger_broken', recorded_key_id: recorded, key_id: null, detail: `the ledger ${ledger.path} does not verify up to the head lock ${lockFile} pins: [${chainError.code}] ${chainError.message}` };
  }
  const code = authorshipCode(report.authorship.status);
  return { checked: true, status: report.authorship.status, recorded_key_id: recorded, key_id: report.authorship.key_id, detail: code === null ? report.authorship.detail : `[${code}] ${report.authorship.detail}` };
}

/**
 * Absolute paths of every file listed by the loretrace locks (`*.lock.json` with our schema_version) in
 * `folder`, mapped to the lock that lists them, plus the locks themselves. A `*.lock.json` that is not JSON or
 * not ours is not a loretrace lock and is skipped, and so is one that is not a regular file (a FIFO, device or
 * folder: never read). An unreadable folder lists nothing.
 */
export async function lockedPaths(folder: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.endsWith('.lock.json')).sort()) {
    const abs = join(folder, name);
    // Read on a non-blocking handle after fstat: a FIFO or device named *.lock.json is not a lock (a plain
    // readFile of a FIFO would block the writing command forever).
    const bytes = await readListedFile(abs);
    if (bytes === null || bytes === 'not_regular') continue;
    let doc: unknown;
    try {
      doc = JSON.parse(bytes.toString('utf8'));
    } catch {
      continue;
    }
    const d = doc as Partial<LockDocument> | null;
    if (!d || d.schema_version !== LOCK_SCHEMA_VERSION || !Array.isArray(d.files)) continue;
    out.set(abs, abs);
    for (const f of d.files) if (f && typeof f.path === 'string' && !out.has(resolve(folder, f.path))) out.set(resolve(folder, f.path), abs);
  }
  return out;
}

/**
 * The lock of the run that wrote `file`: `<name>.lock.json` beside it (see {@link lockPathFor}) when there is
 * one (whatever it holds: verifying it reports its faults), else the first `*.lock.json` of the same folder,
 * in code-unit name order, that is a loretrace lock listing `file` as an output (`retrieve --out x.packet.json --capture-out x.lore_access.json`
 * writes one lock, `x.packet.lock.json`, for the packet, its ledger and the fragment). Paths are resolved
 * against `cwd` (default `process.cwd()`); the answer keeps the folder `file` was named with. In the scan, a
 * lock that is not JSON, not ours or unreadable is passed over (`lock verify` is where its faults are reported).
 * @returns the lock's path, or null when no lock of the folder lists `file`.
 * @throws LoretraceError `ambiguous_lock` (exit 1) when two or more locks of the folder list `file` as an
 *   output, naming each (`details.data.locks`): a shadow lock must not choose what the file is held to.
 */
export async function findLockFor(file: string, cwd: string = process.cwd()): Promise<string | null> {
  const abs = resolve(cwd, file);
  const folder = dirname(abs);
  let names: string[];
  try {
    names = (await readdir(folder)).filter((n) => n.endsWith('.lock.json')).sort();
  } catch {
    return null;
  }
  const own = basename(lockPathFor(abs));
  const listing: string[] = [];
  for (const name of names) {
    if (name === basename(abs)) continue;
    // A FIFO or device named *.lock.json is passed over unread (a plain readFile of a FIFO blocks forever).
    const bytes = await readListedFile(join(folder, name));
    if (bytes === null || bytes === 'not_regular') continue;
    let doc: Partial<LockDocument> | null;
    try {
      doc = JSON.parse(bytes.toString('utf8')) as Partial<LockDocument> | null;
    } catch {
      continue;
    }
    if (!doc || doc.schema_version !== LOCK_SCHEMA_VERSION || !Array.isArray(doc.files)) continue;
    if (doc.files.some((f) => f && f.role === 'output' && typeof f.path === 'string' && resolve(folder, f.path) === abs)) listing.push(name);
  }
  // One run writes one file: a second lock listing it as an output is a shadow (one that drops the packet's
  // entry and sorts first would choose what the file is held to), never a choice to make by name order.
  if (listing.length > 1) {
    throw new LoretraceError('ambiguous_lock', `${file} is listed as an output by ${listing.length} locks of its folder (${listing.map((n) => join(dirname(file), n)).join(', ')}); one run writes one file, so at most one lock may list it — remove the lock that is not the run's`, { file, expected: 'one lock listing the file as an output', data: { locks: listing.map((n) => join(dirname(file), n)) } });
  }
  if (names.includes(own)) return join(dirname(file), own);
  return listing.length === 1 ? join(dirname(file), listing[0]!) : null;
}

/** What a lock hands trace verification (docs/RECEIPTS.md "Trace verification"): see {@link lockedTrace}. */
export interface LockedTrace {
  /** The ledger the lock names (`ledger.path` joined to the lock's folder), or null. */
  ledger: string | null;
  /** The head the lock pins for that ledger (`ledger.head`), or null. */
  head: string | null;
  /** The lock's `policy_receipt` (a capture carries none), with its pointer for details; null when absent. */
  policyReceipt: { pointer: string; value: unknown } | null;
  /**
   * The trace's packet as the lock lists it, the file joined to the lock's folder with the sha256 recorded
   * for it. A capture's (recognised by {@link isCaptureDocument}): when the lock's ledger pins a packet, the
   * `packet_id` of that ledger's `SESSION_OPENED` (the signed record) and the input it pins; otherwise the
   * packet id its `capture_id` names ({@link captureIdPacket}; '' when it names none, so no ledger backs its
   * entries) and the `files` input named like its `packet_ref`. A capture fragment's (`retrieve --capture-out` locks the packet it wrote with the
   * fragment): its `packet_id` and the `files` entry that is the file the lock's ledger session names as its
   * `packet_file` (relative to the ledger's folder; given as `ledgerSession`). Null when the trace is neither,
   * or the lock lists no single such file (a `ledger export` lock lists no packet).
   */
  packet: { packet_id: string; file: string; sha256: string; source: string } | null;
  /**
   * Why a capture's packet could not be held to its ledger, or null: the lock names a ledger whose
   * `SESSION_OPENED` pins a packet ({@link pinnedPacketRow}) but lists no such file (`capture_packet_not_locked`),
   * or lists it with another sha256 than the ledger pins (`capture_packet_mismatch`). The caller must treat
   * either as a failure: the review cannot be re-derived against the packet the run answered.
   */
  packetProblem: { code: 'capture_packet_not_locked' | 'capture_packet_mismatch'; message: string } | null;
}

/** A lock's `files` entry as read (fields unchecked). */
type LockedFileRow = { path?: unknown; sha256?: unknown; role?: unknown };

/**
 * Read what a lock says about the trace it was written with: the ledger and its pinned head, the policy
 * receipt, and (for a capture) the packet file and its sha256 — so `verify-trace --lock` and `capture
 * check` hold a trace to its lock the same way: ledger-backed entries to the lock's `policy_receipt`, the
 * backing ledger to the lock's packet sha256, and the packet file to its locked bytes (seed 002).
 * `lockFile` is the lock's path as the caller reads it (the lock's paths are relative to its folder);
 * `ledgerSession` is the `session` of the `SESSION_OPENED` record of the ledger the lock names, when the
 * caller read it (a fragment's packet is found through its `packet_file`; without it a fragment gets none).
 * @throws LoretraceError `bad_lock` when the lock is not a JSON object or its `ledger` is not `{ path, head }`.
 */
export function lockedTrace(lock: unknown, lockFile: string, trace: unknown, ledgerSession: unknown = null): LockedTrace {
  if (typeof lock !== 'object' || lock === null || Array.isArray(lock)) {
    throw new LoretraceError('bad_lock', `${lockFile}: a lock file must be a JSON object`, { file: lockFile, pointer: '', expected: 'a lock document (schemas/lock.schema.json)' });
  }
  const l = lock as { ledger?: unknown; policy_receipt?: unknown; files?: unknown };
  const folder = dirname(lockFile);
  const out: LockedTrace = { ledger: null, head: null, policyReceipt: null, packet: null, packetProblem: null };
  if (l.ledger !== null && l.ledger !== undefined) {
    const ledger = l.ledger as Record<string, unknown>;
    if (typeof ledger !== 'object' || typeof ledger['path'] !== 'string' || (ledger['head'] !== null && typeof ledger['head'] !== 'string')) {
      throw new LoretraceError('bad_lock', `${lockFile}: /ledger must be { path, head } with a string path and a head hash or null`, { file: lockFile, pointer: '/ledger', expected: '{ path, head }' });
    }
    out.ledger = join(folder, ledger['path']);
    out.head = typeof ledger['head'] === 'string' ? ledger['head'] : null;
  }
  if (Array.isArray(l.policy_receipt)) out.policyReceipt = { pointer: `lock ${lockFile} /policy_receipt`, value: l.policy_receipt };
  const files = (Array.isArray(l.files) ? l.files : []) as LockedFileRow[];
  const pinned = isCaptureDocument(trace) && out.ledger !== null && isJsonObject(ledgerSession)
    ? pinnedPacketRow(files.filter((f) => f.role === 'input'), resolve(folder), resolve(out.ledger), ledgerSession) : { kind: 'not_pinned' as const };
  if (pinned.kind === 'not_pinned') {
    out.packet = capturePacket(trace, files, folder, lockFile) ?? fragmentPacket(trace, files, folder, lockFile, out.ledger, ledgerSession);
    return out;
  }
  if (pinned.kind === 'not_listed') {
    out.packetProblem = { code: 'capture_packet_not_locked', message: `the ledger ${out.ledger} pins packet ${pinned.pinned_file ?? '(no file name)'} sha256 ${pinned.pinned_sha256}, but lock ${lockFile} lists no such input: the review cannot be re-derived against the packet the run answered` };
    return out;
  }
  // The packet identity is the signed record's (SESSION_OPENED), never the capture's own capture_id.
  const session = ledgerSession as Record<string, unknown>;
  const packetId = typeof session['packet_id'] === 'string' ? session['packet_id'] : captureIdPacket(trace) ?? '';
  out.packet = { packet_id: packetId, file: join(folder, pinned.path), sha256: pinned.sha256, source: `${basename(pinned.path)} as lock ${lockFile} records it` };
  if (pinned.sha256 !== pinned.pinned_sha256) out.packetProblem = { code: 'capture_packet_mismatch', message: `lock ${lockFile} records sha256 ${pinned.sha256} for the packet ${pinned.path}, but the ledger ${out.ledger} pins sha256 ${pinned.pinned_sha256}` };
  return out;
}

/** The `schema_version` of a Ghostlight responder output capture (its schema's `const`). */
const CAPTURE_SCHEMA_VERSION = 'ghostlight.responder_output.v0';

/**
 * True for a responder output capture, recognised by what it is, never by how its `capture_id` is spelled:
 * its `schema_version` is `ghostlight.responder_output.v0`, or it has the responder-output shape (a
 * `lore_access` object with a `parsed_output` object or a `capture_id`, as src/receipts/verify-trace.ts
 * classifies inputs). A `capture_id` with a trailing space, `.Capture` or a `.v2` suffix is still a capture:
 * recognising it by that suffix let a respelled id switch off the packet binding and the review re-derivation.
 */
export function isCaptureDocument(doc: unknown): boolean {
  if (!isJsonObject(doc)) return false;
  if (doc['schema_version'] === CAPTURE_SCHEMA_VERSION) return true;
  return isJsonObject(doc['lore_access']) && (isJsonObject(doc['parsed_output']) || 'capture_id' in doc);
}

/**
 * The packet id a capture's `capture_id` names: the id minus its `.capture` suffix when it is exactly
 * `<packet_id>.capture` (Ghostlight's naming; every capture of /work/shared/ghostlight/captures and every one
 * `capture` writes), else null — then the id names no packet, and a caller that binds ledgers to "the
 * capture's packet" must bind them to none. A capture's real packet is the one its ledger's `SESSION_OPENED`
 * pins ({@link lockedTrace}); this is only what the capture says of itself.
 */
export function captureIdPacket(doc: unknown): string | null {
  const id = isJsonObject(doc) ? doc['capture_id'] : undefined;
  if (typeof id !== 'string' || !id.endsWith('.capture')) return null;
  const packetId = id.slice(0, -'.capture'.length);
  return packetId !== '' && packetId.trim() === packetId ? packetId : null;
}

/**
 * {@link LockedTrace.packet} of a capture whose lock's ledger pins no packet: the one `files` input named
 * like its `packet_ref` (spacing around the ref trimmed, so a padded ref does not dodge the lookup); null otherwise.
 */
function capturePacket(trace: unknown, files: readonly LockedFileRow[], folder: string, lockFile: string): LockedTrace['packet'] {
  const d = trace as { packet_ref?: unknown } | null;
  if (!isCaptureDocument(trace) || typeof d?.packet_ref !== 'string') return null;
  const name = basename(d.packet_ref.trim());
  const inputs = files.filter((f) => f.role === 'input' && typeof f.path === 'string' && basename(f.path) === name && typeof f.sha256 === 'string');
  if (inputs.length !== 1) return null;
  return { packet_id: captureIdPacket(trace) ?? '', file: join(folder, inputs[0]!.path as string), sha256: inputs[0]!.sha256 as string, source: `${name} as lock ${lockFile} records it` };
}

/**
 * {@link LockedTrace.packet} of a capture fragment (a document with a `research_trace` array, no
 * `capture_id`): the one `files` entry, of either role, at the path the lock's ledger session names as
 * `packet_file` (relative to the ledger's folder, as `retrieve` writes it), with the fragment's `packet_id`
 * (else the session's: `retrieve --capture-out` writes none); null otherwise.
 */
function fragmentPacket(trace: unknown, files: readonly LockedFileRow[], folder: string, lockFile: string, ledger: string | null, session: unknown): LockedTrace['packet'] {
  const d = trace as { capture_id?: unknown; packet_id?: unknown; research_trace?: unknown } | null;
  if (d === null || typeof d !== 'object' || d.capture_id !== undefined || !Array.isArray(d.research_trace)) return null;
  const s = session as { packet_file?: unknown; packet_id?: unknown } | null;
  const packetId = typeof d.packet_id === 'string' ? d.packet_id : s?.packet_id;
  const named = s?.packet_file;
  if (ledger === null || typeof named !== 'string' || named === '' || typeof packetId !== 'string') return null;
  const target = resolve(dirname(ledger), named);
  const hits = files.filter((f) => typeof f.path === 'string' && typeof f.sha256 === 'string' && resolve(folder, f.path) === target);
  if (hits.length !== 1) return null;
  const path = hits[0]!.path as string;
  return { packet_id: packetId, file: join(folder, path), sha256: hits[0]!.sha256 as string, source: `${basename(path)} as lock ${lockFile} records it` };
}

/**
 * The `session` of a ledger's opening record (its first line, a `SESSION_OPENED` record: docs/PROXY.md
 * "Ledger"), for {@link lockedTrace}; null when the first line is not a JSON object with a `session` object, or
 * holds a number beyond the largest double (the ledger's own verification reports why: `non_finite_number`). Reads only the first line; `text` is the ledger's JSONL.
 */
export function openingSession(text: string): Record<string, unknown> | null {
  try {
    const line = (text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, '');
    const first = JSON.parse(line) as { session?: unknown } | null;
    // A number that overflows to Infinity is not what was hashed (nonFiniteLedgerLine): no session is read from it.
    if (nonFiniteLedgerLine(line, 0, null) !== null) return null;
    const session = first?.session;
    return isJsonObject(session) ? session : null;
  } catch {
    return null;
  }
}

/**
 * The row of a lock's `files[]` that lists `file` (a path as the caller reads it) as an output — `path`
 * relative to the lock's folder, `sha256` as the lock records it (not checked here) — or null.
 */
export function lockedOutput(lock: unknown, lockFile: string, file: string): { path: string; sha256?: unknown } | null {
  const files = (lock as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) return null;
  const target = resolve(file);
  const row = (files as { path?: unknown; role?: unknown; sha256?: unknown }[]).find((f) => f.role === 'output' && typeof f.path === 'string' && resolve(dirname(lockFile), f.path) === target);
  return row ? (row as { path: string; sha256?: unknown }) : null;
}

/**
 * True when a lock lists `file` (a path as the caller reads it) among its outputs: the lock written with
 * that trace, capture or fragment.
 */
export function lockListsOutput(lock: unknown, lockFile: string, file: string): boolean {
  return lockedOutput(lock, lockFile, file) !== null;
}

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
import { outputSchema } from '../contracts/schemas.js';
import { parseJsonDocument } from '../contracts/validate.js';
import { verifyLedger } from './ledger.js';
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
  /** True when some file changed or is missing, or the snapshot changed. */
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
  for (const [i, f] of lock.files.entries()) {
    if (isAbsolute(f.path)) throw new LoretraceError('bad_lock', `${file}: /files/${i}/path ${JSON.stringify(f.path)} is absolute; expected a path relative to the lock's folder`, { file, pointer: `/files/${i}/path` });
    const read = await readListedFile(resolve(folder, f.path));
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
  const drift = totals.changed > 0 || totals.missing > 0 || snap === 'changed';
  const authorship = lock.ledger ? await lockLedgerAuthorship(lock.ledger, folder, file, options.trustedKeys ?? []) : null;
  const integrityOk = !drift && (authorship === null || !authorship.checked || authorship.status === 'trusted');
  const verdict = verificationVerdict(integrityOk, authorship !== null && !authorship.checked);
  return {
    schema_version: 'loretrace.lock_verification.v1', file, command: lock.command, status: lock.status, files,
    snapshot: { disposition: snap, recorded, current: snap === 'other_vault' ? null : current, namespace, current_namespace: currentNamespace }, totals,
    ledger_authorship: authorship, drift, verdict, ok: verdict === 'verified', integrity_ok: integrityOk,
  };
}

/**
 * The {@link LockLedgerAuthorship} of a lock's ledger (path relative to the lock's folder `folder`). Reads
 * the ledger only when trusted keys are given. Never throws.
 */
async function lockLedgerAuthorship(ledger: NonNullable<LockDocument['ledger']>, folder: string, lockFile: string, trusted: readonly TrustedKey[]): Promise<LockLedgerAuthorship> {
  const recorded = ledger.signer_key_id ?? null;
  if (trusted.length === 0) {
    return { checked: false, status: 'not_checked', recorded_key_id: recorded, key_id: null, detail: `${AUTHORSHIP_NOT_CHECKED}; the lock records ${recorded === null ? 'no signer' : `signer key ${recorded}`}` };
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
 * @returns the lock's path, or null when no lock of the folder lists `file`. Never throws.
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
  if (names.includes(own)) return join(dirname(file), own);
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
    if (doc.files.some((f) => f && f.role === 'output' && typeof f.path === 'string' && resolve(folder, f.path) === abs)) return join(dirname(file), name);
  }
  return null;
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
   * for it. A capture's: its packet id (`capture_id` minus `.capture`) and the `files` input named like its
   * `packet_ref`. A capture fragment's (`retrieve --capture-out` locks the packet it wrote with the
   * fragment): its `packet_id` and the `files` entry that is the file the lock's ledger session names as its
   * `packet_file` (relative to the ledger's folder; given as `ledgerSession`). Null when the trace is neither,
   * or the lock lists no single such file (a `ledger export` lock lists no packet).
   */
  packet: { packet_id: string; file: string; sha256: string; source: string } | null;
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
  const out: LockedTrace = { ledger: null, head: null, policyReceipt: null, packet: null };
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
  out.packet = capturePacket(trace, files, folder, lockFile) ?? fragmentPacket(trace, files, folder, lockFile, out.ledger, ledgerSession);
  return out;
}

/** {@link LockedTrace.packet} of a capture: the one `files` input named like its `packet_ref`; null otherwise. */
function capturePacket(trace: unknown, files: readonly LockedFileRow[], folder: string, lockFile: string): LockedTrace['packet'] {
  const d = trace as { capture_id?: unknown; packet_ref?: unknown } | null;
  if (typeof d?.capture_id !== 'string' || !d.capture_id.endsWith('.capture') || typeof d.packet_ref !== 'string') return null;
  const name = basename(d.packet_ref);
  const inputs = files.filter((f) => f.role === 'input' && typeof f.path === 'string' && basename(f.path) === name && typeof f.sha256 === 'string');
  if (inputs.length !== 1) return null;
  return { packet_id: d.capture_id.slice(0, -'.capture'.length), file: join(folder, inputs[0]!.path as string), sha256: inputs[0]!.sha256 as string, source: `${name} as lock ${lockFile} records it` };
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
 * "Ledger"), for {@link lockedTrace}; null when the first line is not a JSON object with a `session` object
 * (the ledger's own verification reports why). Reads only the first line; `text` is the ledger's JSONL.
 */
export function openingSession(text: string): Record<string, unknown> | null {
  try {
    const first = JSON.parse((text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, '')) as { session?: unknown } | null;
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

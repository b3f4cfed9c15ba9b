/**
 * `loretrace verify-trace --lore <dir> <files or folders...> [--ledger <ledger.jsonl>]... [--head <hash>]
 *   [--lock <lock.json>]... [--trust-key <public.pem>]... [--integrity-only] [--json]`
 *
 * Thin shell over `verifyTrace` (src/receipts/verify-trace.ts): index the vault once, read every capture,
 * capture fragment, traverse result, ledger export or raw ledger (.jsonl, exported first), check every
 * research_trace entry against the vault and the ledgers, print per file one line per entry and the
 * totals for every disposition (zeros included), then — for more than one file — the totals over all
 * files. Folders are walked (sorted, recursively): their `.jsonl` ledgers are inputs and back the other
 * files too, their `*.lock.json` locks pin their ledgers' heads, and files that carry no research trace
 * (packets, projected contexts, locks) are listed as skipped. With no `--ledger`, `--lock` or `--head`, a trace
 * input named on the command line gets the ledger of the lock that lists it (`findLockFor`, the rule
 * `capture check` uses: `retrieve` locks its packet, ledger and fragment together), and the output names that
 * lock (`found_locks` in the JSON). Without a lock's packet, the packet the ledger's `SESSION_OPENED` pins is
 * re-hashed (`ledgerPinnedPackets`), and a fragment's claimed refs are held to the ledger (`claimed_not_read`). Exit 0 when every file passes with established authorship; 1 when any
 * fails (or on invalid input), or when a file passes only on integrity — it rests on a ledger and no trusted
 * key was given, or no entry of it is ledger-backed at all (`UNAUTHENTICATED`; `--integrity-only` accepts it
 * with exit 0, its verdict still saying so);
 * 2 on usage errors (unreadable: `file_not_found`, non-JSON: `bad_json`). The trusted keys (`--trust-key`, else
 * `LORETRACE_TRUSTED_KEYS`, else the config's `trusted_keys`; src/cli/keys.ts) make every ledger prove its runner
 * (docs/RECEIPTS.md "Authorship"); without them each report with a ledger says `authorship not checked (no --trust-key)`.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { TRACE_DISPOSITIONS, isFailedResponderEntry, verifyTrace } from '../../receipts/verify-trace.js';
import type { TraceDisposition, TraceVerificationReport, VerifyTraceOptions } from '../../receipts/verify-trace.js';
import type { LedgerHeadPin, TraceLedgerInput } from '../../receipts/trace-ledger.js';
import type { CliContext } from '../context.js';
import type { VaultIndex } from '../../types.js';
import { action, plural, printJson } from '../context.js';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { parseJsonDocument } from '../../contracts/validate.js';
import { exportLedger } from '../../receipts/ledger-export.js';
import { findLockFor, lockListsOutput, lockedOutput, lockedTrace, openingSession } from '../../receipts/lock.js';
import { lockedPacketFile } from '../outputs.js';
import { MAX_LEDGER_BYTES, addVaultOptions, openIndex, readInputFile, readInputText, type VaultCliOptions } from '../vault-options.js';
import { reportWithErrors } from './retrieve.js';
import { addIntegrityOnlyOption, addTrustKeyOption, integrityOnlyVerdict, trustOrigin, trustedKeysFromOptions, verdictPasses } from '../keys.js';
import type { IntegrityOnlyOption } from '../keys.js';
import type { TrustedKey, VerificationVerdict } from '../../receipts/signing.js';

/** True when a parsed JSON value is a ledger record (a one-record ledger is a single JSON line). */
function isLedgerRecord(v: unknown): boolean {
  const version = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)['schema_version'] : undefined;
  return typeof version === 'string' && version.startsWith('loretrace.ledger');
}

/**
 * The input's text, and whether it is a ledger (JSON Lines whose first record is `loretrace.ledger.*`).
 * `ledger` is a flag of its own, not a null `doc`: a file holding the JSON value `null` is a document of the
 * wrong shape (verifyTrace's `bad_trace_input` names it), never a ledger to hash-check.
 */
async function readTraceText(ctx: CliContext, file: string): Promise<{ text: string; ledger: true } | { text: string; ledger: false; doc: unknown }> {
  const text = await readInputText(ctx, file, 'JSON capture, capture fragment, traverse result, ledger export or proxy ledger (JSONL)');
  try {
    const doc = parseJsonDocument(text, file);
    if (isLedgerRecord(doc) && typeof (doc as Record<string, unknown>)['record_hash'] === 'string') return { text, ledger: true };
    return { text, ledger: false, doc };
  } catch (e) {
    if (!isLoretraceError(e) || e.code !== 'bad_json') throw e;
    let head: unknown;
    try {
      // A BOM-prefixed ledger is still recognised as a ledger, so exportLedger can say what is wrong with it.
      head = JSON.parse((text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, ''));
    } catch {
      throw e;
    }
    if (!isLedgerRecord(head)) throw e;
    return { text, ledger: true };
  }
}

/**
 * The line of a report's `packet_file` (the packet a lock lists, or the one a ledger's session pins, re-hashed),
 * indented two spaces; `capture check` prints it too.
 */
export function renderPacketFile(pf: NonNullable<TraceVerificationReport['packet_file']>): string {
  const underLock = pf.source.startsWith('lock ');
  return pf.disposition === 'unchanged'
    ? `  packet: unchanged         ${pf.file} (sha256 ${pf.locked_sha256.slice(0, 12)} as ${pf.source} ${underLock ? 'records' : 'pins'} it)`
    : `  packet: ${pf.disposition.padEnd(17)} ${pf.file}: ${pf.sha256 === null ? 'cannot be read' : `sha256 now ${pf.sha256}`}, ${pf.source} ${underLock ? 'records' : 'pins'} ${pf.locked_sha256} — the packet was swapped or edited ${underLock ? 'under its lock' : 'after the run'}`;
}

/**
 * The packet each ledger's `SESSION_OPENED` pins (`packet_sha256` and `packet_file`, relative to the ledger's
 * folder as `retrieve` writes it; `serve` records the file name), re-hashed now, for `verifyTrace`'s
 * `ledgerPackets` (used when no lock supplies the packet). A `retrieve` ledger's packet that cannot be read is
 * reported with sha256 null (`packet_missing`: the run wrote it there); a `serve` ledger records only the file's
 * name, so a packet not beside its ledger is not looked for elsewhere (the lock, or `capture check`, holds it).
 */
async function ledgerPinnedPackets(ctx: CliContext, ledgers: readonly TraceLedgerInput[]): Promise<NonNullable<VerifyTraceOptions['ledgerPackets']>> {
  const out: NonNullable<VerifyTraceOptions['ledgerPackets']>[number][] = [];
  for (const l of ledgers) {
    const session = openingSession(l.text);
    let ledgerId: unknown;
    try {
      ledgerId = (JSON.parse((l.text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, '')) as { ledger_id?: unknown } | null)?.ledger_id;
    } catch {
      continue;
    }
    const pinned = session?.['packet_sha256'];
    const named = session?.['packet_file'];
    if (l.file === null || typeof ledgerId !== 'string' || typeof pinned !== 'string' || pinned === '' || typeof named !== 'string' || named === '' || isAbsolute(named)) continue;
    const file = join(dirname(l.file), named);
    const sha256 = await readInputFile(ctx, file, 'packet the ledger pins (JSON)').then((b) => createHash('sha256').update(b).digest('hex'), () => null);
    if (sha256 === null && session?.['runner'] !== 'retrieve') continue;
    out.push({ ledger_id: ledgerId, file, locked_sha256: pinned, sha256, source: `ledger ${l.file} SESSION_OPENED` });
  }
  return out;
}

/**
 * The line of a report's `input_file` when it drifted: the input re-hashed against the lock that lists it as
 * an output, worded as `lock verify` words a changed output (both sha256s).
 */
export function renderInputFile(f: NonNullable<TraceVerificationReport['input_file']>): string {
  return `  input: DRIFT              ${f.file} has sha256 ${f.sha256}, ${f.source} records ${f.locked_sha256}: the output changed after the run (write a new version instead)`;
}

/**
 * Options of {@link renderVerification}: `integrityOnly` is `--integrity-only` (the verdict line's wording);
 * `trustedBy` names where the trusted keys came from (src/cli/keys.ts `trustOrigin`: `--trust-key`,
 * `LORETRACE_TRUSTED_KEYS`, `--config <file>`), printed on the authorship line.
 */
export interface RenderVerificationOptions {
  integrityOnly?: boolean;
  trustedBy?: string;
}

/**
 * What failed outside the runner_captured entries, as `<what> <count>` items: `entries` — entries of other
 * origins that fail (a responder quote not in its lines, an entry of a runner_captured trace that is not the
 * runner's, an entry citing a hidden or policy-denied ref); `session` — what belongs to the run, not to one
 * entry: a runner_captured status with no runner_captured entry (`no_runner_captured_entries`), required seeds
 * never read, ledgers that are broken or fail their authorship, and the packet or input file a lock holds when
 * it drifted.
 */
export function problemsOutsideEntries(report: TraceVerificationReport): { entries: string[]; session: string[] } {
  const other = new Map<string, number>();
  for (const e of report.entries) {
    if (e.origin !== 'runner_captured' && (isFailedResponderEntry(e) || e.disposition === 'unbacked' || e.disposition === 'policy_violation')) other.set(e.disposition, (other.get(e.disposition) ?? 0) + 1);
  }
  const session: string[] = [];
  if (report.runner_claim) session.push(`${report.runner_claim.code} 1`);
  if (report.totals.seed_not_consulted > 0) session.push(`seed_not_consulted ${report.totals.seed_not_consulted}`);
  if (report.totals.claimed_not_read > 0) session.push(`claimed_not_read ${report.totals.claimed_not_read}`);
  const ledgers = new Map<string, number>();
  for (const l of report.ledgers) if (l.disposition !== 'intact' && l.disposition !== 'ledger_not_closed') ledgers.set(l.disposition, (ledgers.get(l.disposition) ?? 0) + 1);
  for (const [d, n] of ledgers) session.push(`${d} ${n}`);
  if (report.packet_file && report.packet_file.disposition !== 'unchanged') session.push(`packet_file ${report.packet_file.disposition}`);
  if (report.input_file && report.input_file.disposition !== 'unchanged') session.push(`input_file ${report.input_file.disposition}`);
  return { entries: [...other].map(([d, n]) => `${d} ${n}`), session };
}

/**
 * The verdict text of an `integrity_only` report in which no entry is ledger-backed (no ledger given, or none
 * backing anything): every entry held up against the vault, but nothing shows who wrote the trace or that the
 * research happened — never plain "ok", whether or not `--integrity-only` accepted it.
 */
export function unbackedVerdict(accepted: boolean): string {
  return `${accepted ? 'INTEGRITY ONLY (--integrity-only)' : 'UNAUTHENTICATED'} — entries checked against the vault, none ledger-backed: nothing shows who wrote the trace or that the research happened`;
}

/**
 * The last line of a report: the runner_captured entry counts, then — kept apart, so "0 failed" never
 * stands beside a FAILED it did not cause — other entries that fail and the session-level problems, then the
 * verdict: `ok`, the integrity-only wording (src/cli/keys.ts `integrityOnlyVerdict`; never plain "ok") when no
 * trusted key was given ({@link unbackedVerdict} when no entry is ledger-backed), or `FAILED`; `(draft: a
 * ledger is not closed)` follows a passing verdict of a draft.
 */
export function verdictLine(report: TraceVerificationReport, options: RenderVerificationOptions = {}): string {
  const rc = report.runner_captured;
  const { entries, session } = problemsOutsideEntries(report);
  const parts = [`runner_captured: ${plural(rc.checked, 'entry', 'entries')}: ${rc.ledger_backed} ledger-backed and verified, ${rc.failed} failed`];
  if (entries.length > 0) parts.push(`other entries: ${entries.join(', ')}`);
  if (session.length > 0) parts.push(`session: ${session.join(', ')}`);
  const draft = report.draft ? ' (draft: a ledger is not closed)' : '';
  const verdict = report.entries.length === 0 ? 'FAILED (no entries: nothing was verified)'
    : report.verdict === 'verified' ? `ok${draft}`
      : report.verdict === 'integrity_only'
        ? `${rc.ledger_backed === 0 ? unbackedVerdict(options.integrityOnly === true) : integrityOnlyVerdict(options.integrityOnly === true)}${draft}` : 'FAILED';
  return `${parts.join('; ')} — ${verdict}`;
}

/** The human form of a report: a header, one line per entry, ledgers and seeds, totals, verdict. */
export function renderVerification(report: TraceVerificationReport, options: RenderVerificationOptions = {}): string {
  const lines: string[] = [];
  lines.push(
    `verify-trace: ${report.file ?? 'input'} (${report.input_kind}) against ${report.namespace} snapshot ${report.snapshot.current.slice(0, 12)}`,
  );
  if (report.snapshot.recorded === null) {
    lines.push('  snapshot: the input records none; no drift check');
  } else if (report.snapshot.drift) {
    lines.push(
      `  snapshot: DRIFT — recorded ${report.snapshot.recorded.slice(0, 12)}, vault now ${report.snapshot.current.slice(0, 12)}; still holding: ${report.snapshot.holding.length ? report.snapshot.holding.join(', ') : 'none'}`,
    );
  } else {
    lines.push('  snapshot: same as recorded');
  }
  const p = report.policy;
  if (p.checked) {
    lines.push(`  policy: entry paths checked against ${p.receipt} (${p.allowed_prefixes.length} allowed_prefix row${p.allowed_prefixes.length === 1 ? '' : 's'}, ${p.deny_rows} deny row${p.deny_rows === 1 ? '' : 's'})`);
  } else {
    lines.push(`  policy: ${p.receipt === null ? 'the input carries no policy_receipt' : `${p.receipt} is empty`}; paths not checked against a policy`);
  }
  if (report.ledgers.length === 0) lines.push('  ledger: none given; no runner_captured entry can be ledger-backed');
  for (const l of report.ledgers) {
    const pin = l.pinned_head ? `, head pinned by ${l.pin_source}` : ', head not pinned';
    const signer = l.authorship.status === 'trusted' ? `, signed by trusted key ${l.authorship.key_id}` : '';
    lines.push(`  ledger: ${l.disposition.padEnd(17)} ${l.file ?? '(text)'} ${l.ledger_id ?? '?'} (${plural(l.records, 'record')}${pin}${signer})`);
    if (l.detail) lines.push(`                 ${l.detail}`);
  }
  if (report.ledgers.length > 0) lines.push(report.authorship.checked ? `  authorship: checked against ${options.trustedBy ?? 'trusted keys'} ${report.authorship.trusted_key_ids.join(', ')}` : `  ${report.authorship.note}`);
  if (report.packet_file) lines.push(renderPacketFile(report.packet_file));
  if (report.input_file && report.input_file.disposition !== 'unchanged') lines.push(renderInputFile(report.input_file));
  for (const s of report.seeds) if (s.disposition === 'seed_not_consulted') lines.push(`  seed_not_consulted ${s.ref}: required seed never read in ledger ${s.ledger_id}`);
  for (const c of report.refs_not_read) lines.push(`  claimed_not_read ${c.pointer}: ${c.message}`);
  if (report.runner_claim) lines.push(`  ${report.runner_claim.code} ${report.runner_claim.pointer}: ${report.runner_claim.message}`);
  for (const e of report.entries) {
    const sim = e.similarity !== null && e.disposition !== 'verified' ? ` similarity ${e.similarity}` : '';
    lines.push(`  ${e.disposition.padEnd(14)} ${e.trace_id} (${e.origin}) ${e.source_ref} L${e.line_start}-L${e.line_end} chunk ${e.chunk_index}${sim}`);
    if (e.detail) lines.push(`                 ${e.detail}`);
  }
  lines.push(`totals: ${TRACE_DISPOSITIONS.map((d) => `${d} ${report.totals[d]}`).join(', ')}`);
  lines.push(verdictLine(report, options));
  return lines.join('\n') + '\n';
}

/** What the command reads: trace inputs, ledgers that back them, pins, and files skipped in folders. */
interface Inputs {
  traces: string[];
  ledgers: string[];
  locks: string[];
  skipped: { file: string; reason: string }[];
}

/**
 * Every file under a folder, sorted by code unit, recursively (symlinked folders are not entered). A FIFO,
 * socket or device is never opened (a FIFO would block the read): it goes to `special` with its kind, for
 * the report's skipped list.
 */
async function walk(dir: string, special: { abs: string; kind: string }[] = []): Promise<string[]> {
  const out: string[] = [];
  const names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of names) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...(await walk(p, special)));
    else if (d.isFile()) out.push(p);
    else if (!d.isSymbolicLink()) special.push({ abs: p, kind: d.isFIFO() ? 'FIFO' : d.isSocket() ? 'socket' : d.isCharacterDevice() ? 'character device' : d.isBlockDevice() ? 'block device' : 'special file' });
  }
  return out;
}

/** True when a file's first line is a loretrace ledger record (a BOM is ignored here; the ledger check reports it). */
async function startsAsLedger(ctx: CliContext, file: string): Promise<boolean> {
  const text = await readInputText(ctx, file, 'ledger (JSONL)', MAX_LEDGER_BYTES);
  try {
    return isLedgerRecord(JSON.parse((text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, '')));
  } catch {
    return false;
  }
}

/**
 * Sort the named files and the files of named folders into trace inputs, ledgers and locks. A folder's
 * `.jsonl` files are ledgers (inputs and backing), its `*.lock.json` files locks, its other `.json` files
 * trace inputs; anything else in a folder is skipped.
 */
async function collectInputs(ctx: CliContext, args: readonly string[], ledgerOpts: readonly string[], lockOpts: readonly string[]): Promise<Inputs> {
  const inputs: Inputs = { traces: [], ledgers: [...ledgerOpts], locks: [...lockOpts], skipped: [] };
  for (const arg of args) {
    const st = await stat(resolve(ctx.cwd, arg)).catch(() => null);
    if (!st || !st.isDirectory()) {
      inputs.traces.push(arg);
      if (/\.jsonl$/i.test(arg) && !inputs.ledgers.includes(arg)) inputs.ledgers.push(arg);
      continue;
    }
    const special: { abs: string; kind: string }[] = [];
    const found = await walk(resolve(ctx.cwd, arg), special);
    for (const s of special) inputs.skipped.push({ file: join(arg, s.abs.slice(resolve(ctx.cwd, arg).length + 1)), reason: `not a regular file (${s.kind}); never opened` });
    for (const abs of found) {
      const file = join(arg, abs.slice(resolve(ctx.cwd, arg).length + 1));
      if (/\.lock\.json$/i.test(file)) inputs.locks.push(file);
      else if (/\.jsonl$/i.test(file)) {
        if (!(await startsAsLedger(ctx, file))) {
          inputs.skipped.push({ file, reason: 'a .jsonl file whose first line is not a loretrace ledger record' });
          continue;
        }
        inputs.traces.push(file);
        if (!inputs.ledgers.includes(file)) inputs.ledgers.push(file);
      } else if (/\.json$/i.test(file)) inputs.traces.push(file);
      else inputs.skipped.push({ file, reason: 'not a .json or .jsonl file' });
    }
  }
  return inputs;
}

/**
 * The pins and extra ledgers a lock file names: `ledger: { path, head }` (schemas/lock.schema.json), the
 * path relative to the lock's folder.
 * @throws LoretraceError `bad_lock` when the lock is not a JSON object or its ledger entry is malformed.
 */
async function readLock(ctx: CliContext, file: string): Promise<{ pin: LedgerHeadPin | null; ledger: string | null }> {
  const doc = parseJsonDocument(await readInputText(ctx, file, 'lock file (JSON)'), file) as Record<string, unknown> | null;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new LoretraceError('bad_lock', `${file}: a lock file must be a JSON object`, { file, pointer: '', expected: 'a lock document (schemas/lock.schema.json)' });
  }
  const l = doc['ledger'];
  if (l === null || l === undefined) return { pin: null, ledger: null };
  const ledger = l as Record<string, unknown>;
  if (typeof ledger['path'] !== 'string' || (ledger['head'] !== null && typeof ledger['head'] !== 'string')) {
    throw new LoretraceError('bad_lock', `${file}: /ledger must be { path, head } with a string path and a head hash or null`, { file, pointer: '/ledger', expected: '{ path, head }' });
  }
  const path = join(dirname(file), ledger['path']);
  return {
    pin: typeof ledger['head'] === 'string' ? { head: ledger['head'], source: `lock ${file}`, ...(typeof ledger['ledger_id'] === 'string' ? { ledger_id: ledger['ledger_id'] } : {}) } : null,
    ledger: path,
  };
}

/** A lock found for a trace input by {@link findLockFor}, and the ledger it names (null when it names none). */
interface FoundLock {
  file: string;
  lock: string;
  ledger: string | null;
}

/**
 * The locks that list the named trace inputs (not folders, whose locks are read anyway, nor raw ledgers),
 * added to `inputs.locks`, with the ledger each one names.
 * @throws LoretraceError `bad_lock` as {@link readLock}.
 */
async function findLocks(ctx: CliContext, files: readonly string[], inputs: Inputs): Promise<FoundLock[]> {
  const found: FoundLock[] = [];
  for (const file of files) {
    if (/\.jsonl$/i.test(file) || !inputs.traces.includes(file)) continue;
    const lock = await findLockFor(file, ctx.cwd);
    if (lock === null) continue;
    if (!inputs.locks.includes(lock)) inputs.locks.push(lock);
    found.push({ file, lock, ledger: (await readLock(ctx, lock)).ledger });
  }
  return found;
}

/** The line that names a found lock, under a report's header. */
function renderFoundLock(f: FoundLock): string {
  return `  lock: ${f.lock} lists ${f.file} as an output; ${f.ledger === null ? 'it names no ledger' : `its ledger ${f.ledger} is used`} (no --ledger, --lock or --head given)`;
}

/** A rendered report with the line of its found lock (if any) after the header line. */
function withFoundLock(rendered: string, file: string, found: readonly FoundLock[]): string {
  const f = found.find((x) => x.file === file);
  if (!f) return rendered;
  const nl = rendered.indexOf('\n');
  return `${rendered.slice(0, nl + 1)}${renderFoundLock(f)}\n${rendered.slice(nl + 1)}`;
}

/** A lock given, found or in a named folder: its file and its document. */
interface HeldLock {
  file: string;
  doc: unknown;
}

/**
 * The lock that holds `file`: the one listing it as an output (`lockListsOutput`), else — when `file` is
 * the only input and locks were named with `--lock` — the first of those.
 */
function lockOf(ctx: CliContext, locks: readonly HeldLock[], file: string, named: readonly string[], only: boolean): HeldLock | null {
  const own = locks.find((l) => lockListsOutput(l.doc, resolve(ctx.cwd, l.file), resolve(ctx.cwd, file)));
  return own ?? (only ? locks.find((l) => named.includes(l.file)) ?? null : null);
}

/**
 * What a lock adds to one input's verification (docs/RECEIPTS.md "Trace verification"; `lockedTrace`,
 * src/receipts/lock.ts): its `policy_receipt` (applied when the input carries none), and for a capture or
 * a capture fragment the packet it lists — a backing ledger must pin its locked sha256, and the file itself
 * is re-hashed (`packet_file`: a packet swapped under its lock fails the report). `ledgers` are the ledger
 * texts read for the run; the lock's own is among them (a fragment's packet is its session's `packet_file`).
 */
async function lockOptions(ctx: CliContext, lock: HeldLock | null, doc: unknown, ledgers: readonly TraceLedgerInput[], input: { file: string; sha256: string }): Promise<Pick<VerifyTraceOptions, 'policyReceipt' | 'packet' | 'packetFile' | 'inputFile'>> {
  if (lock === null) return {};
  // A fragment's packet is the file the lock's ledger session names (packet_file): read that session first.
  const named = lockedTrace(lock.doc, lock.file, doc).ledger;
  const ledger = named === null ? undefined : ledgers.find((l) => typeof l.file === 'string' && resolve(ctx.cwd, l.file) === resolve(ctx.cwd, named));
  const locked = lockedTrace(lock.doc, lock.file, doc, ledger === undefined ? null : openingSession(ledger.text));
  const out: Pick<VerifyTraceOptions, 'policyReceipt' | 'packet' | 'packetFile' | 'inputFile'> = {};
  const lockedSha256 = lockedOutputSha256(ctx, lock, input.file);
  if (lockedSha256 !== null) out.inputFile = { file: input.file, locked_sha256: lockedSha256, sha256: input.sha256, source: `lock ${lock.file}` };
  if (locked.policyReceipt) out.policyReceipt = locked.policyReceipt;
  if (locked.packet) {
    out.packet = { packet_id: locked.packet.packet_id, packet_sha256: locked.packet.sha256, source: locked.packet.source };
    out.packetFile = await lockedPacketFile(ctx, locked.packet, lock.file);
  }
  return out;
}

/** The sha256 a lock records for `file` as one of its outputs (`lockedOutput`), or null when it lists none. */
function lockedOutputSha256(ctx: CliContext, lock: HeldLock, file: string): string | null {
  const sha256 = lockedOutput(lock.doc, resolve(ctx.cwd, lock.file), resolve(ctx.cwd, file))?.sha256;
  return typeof sha256 === 'string' ? sha256 : null;
}

/** One file's outcome in a many-file run. */
type FileOutcome = { file: string; report: TraceVerificationReport } | { file: string; error: { code: string; message: string } };

/** Verify one trace input against the shared ledgers and pins, and against the lock that holds it (if any). */
async function verifyOne(ctx: CliContext, file: string, index: VaultIndex, ledgers: TraceLedgerInput[], pins: LedgerHeadPin[], lock: HeldLock | null, trustedKeys: readonly TrustedKey[]): Promise<TraceVerificationReport> {
  const input = await readTraceText(ctx, file);
  const text = input.text;
  if (input.ledger) {
    const exported = await exportLedger(text, { file, index });
    const own = ledgers.some((l) => l.file === file) ? ledgers : [...ledgers, { file, text }];
    const inputKind = exported.mode === 'coordinator_scoped_retrieval' ? 'retrieve_ledger' : 'proxy_ledger';
    return verifyTrace(index, exported, { file, inputKind, ledgers: own, pins, trustedKeys, ledgerPackets: await ledgerPinnedPackets(ctx, own) });
  }
  // Strict UTF-8 text read with its BOM kept re-encodes to the exact bytes read: their sha256 is the file's.
  const sha256 = createHash('sha256').update(text, 'utf8').digest('hex');
  return verifyTrace(index, input.doc, { file, ledgers, pins, ...(await lockOptions(ctx, lock, input.doc, ledgers, { file, sha256 })), trustedKeys, ledgerPackets: await ledgerPinnedPackets(ctx, ledgers) });
}

/** Totals of a many-file run: see {@link setTotals}. */
type SetTotals = { files: number; ok: number; integrity_only: number; failed: number; skipped: number; draft: number } & Record<TraceDisposition, number>;

/**
 * Totals over every file: files by verdict — `ok` (`verified`), `integrity_only` (every check passed, authorship
 * not checked: no trusted key), `failed` (a check failed, or the file could not be verified) — then skipped and
 * draft files, then every disposition (zeros included, seed 003).
 */
function setTotals(outcomes: readonly FileOutcome[], skipped: number): SetTotals {
  const totals = { files: outcomes.length, ok: 0, integrity_only: 0, failed: 0, skipped, draft: 0, ...Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, 0])) } as SetTotals;
  for (const o of outcomes) {
    if ('error' in o || o.report.verdict === 'failed') totals.failed += 1;
    else if (o.report.verdict === 'integrity_only') totals.integrity_only += 1;
    else totals.ok += 1;
    if ('report' in o) {
      if (o.report.draft) totals.draft += 1;
      for (const d of TRACE_DISPOSITIONS) totals[d] += o.report.totals[d];
    }
  }
  return totals;
}

/** The verdict of a many-file run: `failed` when a file failed (or none was checked), else `integrity_only` when one is, else `verified`. */
function setVerdict(totals: SetTotals): VerificationVerdict {
  return totals.failed > 0 || totals.files === 0 ? 'failed' : totals.integrity_only > 0 ? 'integrity_only' : 'verified';
}

interface VerifyTraceCliOptions extends VaultCliOptions, IntegrityOnlyOption {
  ledger?: string[];
  head?: string;
  lock?: string[];
  trustKey?: string[];
}

/** Register `verify-trace` on the program. */
export function register(program: Command, ctx: CliContext): void {
  addIntegrityOnlyOption(addTrustKeyOption(addVaultOptions(program
    .command('verify-trace')
    .description('check every research_trace entry (capture, capture fragment, traverse result, ledger export or raw ledger .jsonl) line by line against the vault, and runner_captured entries against the ledger that served them')
    .argument('<files...>', 'captures, capture fragments, traverse results, ledger exports (JSON), ledgers (.jsonl), or folders of them'))
    .option('--ledger <ledger.jsonl...>', 'ledger(s) that back the runner_captured entries (repeatable)')
    .option('--head <hash>', 'pinned record_hash of the last ledger record (a ledger cut off at the end then fails)')
    .option('--lock <lock.json...>', 'lock file(s) whose ledger entry pins a ledger head (repeatable)')
    .option('--json', 'print the verification report as JSON')))
    .action(
      action(ctx, async (files: string[], opts: VerifyTraceCliOptions) => {
        const single = files.length === 1 && !(await stat(resolve(ctx.cwd, files[0]!)).then((s) => s.isDirectory()).catch(() => false));
        try {
          const trustedKeys = await trustedKeysFromOptions(ctx, opts);
          const index = await openIndex(ctx, opts);
          const inputs = await collectInputs(ctx, files, opts.ledger ?? [], opts.lock ?? []);
          // As `capture check` and `lock verify`: named folders holding nothing to check are a usage error, not an all-zero "failed" report.
          if (inputs.traces.length === 0) {
            const skipped = inputs.skipped.length ? `; skipped ${plural(inputs.skipped.length, 'file')} (first: ${inputs.skipped[0]!.file}: ${inputs.skipped[0]!.reason})` : '';
            throw new LoretraceError('usage', `nothing to verify in ${files.join(', ')}: folders are searched for *.json and *.jsonl trace inputs and found none${skipped}`, {}, 2);
          }
          const pins: LedgerHeadPin[] = opts.head !== undefined ? [{ head: opts.head, source: '--head' }] : [];
          const explicit = (opts.ledger ?? []).length > 0 || (opts.lock ?? []).length > 0 || opts.head !== undefined;
          const found = explicit ? [] : await findLocks(ctx, files, inputs);
          const held: HeldLock[] = [];
          for (const lock of inputs.locks) {
            const { pin, ledger } = await readLock(ctx, lock);
            if (pin) pins.push(pin);
            if (ledger && !inputs.ledgers.includes(ledger)) inputs.ledgers.push(ledger);
            held.push({ file: lock, doc: parseJsonDocument(await readInputText(ctx, lock, 'lock file (JSON)'), lock) });
          }
          const lockFor = (file: string) => lockOf(ctx, held, file, opts.lock ?? [], single);
          const ledgers: TraceLedgerInput[] = [];
          for (const l of inputs.ledgers) ledgers.push({ file: l, text: await readInputText(ctx, l, 'ledger (JSONL)', MAX_LEDGER_BYTES) });
          if (single) {
            const report = await verifyOne(ctx, files[0]!, index, ledgers, pins, lockFor(files[0]!), trustedKeys);
            if (opts.json) printJson(ctx, found.length > 0 ? { ...report, found_locks: found } : report);
            else ctx.stdout(withFoundLock(renderVerification(report, { ...opts, trustedBy: trustOrigin(trustedKeys) }), files[0]!, found));
            return verdictPasses(report.verdict, opts) ? 0 : 1;
          }
          const outcomes: FileOutcome[] = [];
          for (const file of inputs.traces) {
            try {
              outcomes.push({ file, report: await verifyOne(ctx, file, index, ledgers, pins, lockFor(file), trustedKeys) });
            } catch (e) {
              if (!isLoretraceError(e)) throw e;
              // A folder may hold documents without a trace (packets, projected contexts): skipped, not failed.
              // The reason is the message without its leading file name: the skipped line names the file once.
              if (e.code === 'no_research_trace' && !files.includes(file)) inputs.skipped.push({ file, reason: e.message.startsWith(`${file}: `) ? e.message.slice(file.length + 2) : e.message });
              else outcomes.push({ file, error: { code: e.code, message: e.message } });
            }
          }
          // Folders whose .json files all turn out to hold no trace are the same usage error as an empty folder.
          if (outcomes.length === 0) throw new LoretraceError('usage', `nothing to verify in ${files.join(', ')}: no file found there holds a research_trace; skipped ${plural(inputs.skipped.length, 'file')} (first: ${inputs.skipped[0]!.file}: ${inputs.skipped[0]!.reason})`, {}, 2);
          const totals = setTotals(outcomes, inputs.skipped.length);
          const verdict = setVerdict(totals);
          const ok = verdict === 'verified';
          if (opts.json) {
            printJson(ctx, { schema_version: 'loretrace.trace_verification_set.v1', verdict, ok, totals, skipped: inputs.skipped, ...(found.length > 0 ? { found_locks: found } : {}), files: outcomes });
          } else {
            for (const o of outcomes) ctx.stdout('report' in o ? withFoundLock(renderVerification(o.report, { ...opts, trustedBy: trustOrigin(trustedKeys) }), o.file, found) : `verify-trace: ${o.file}: ERROR [${o.error.code}] ${o.error.message}\n`);
            for (const s of inputs.skipped) ctx.stdout(`skipped ${s.file}: ${s.reason}\n`);
            const said = verdict === 'verified' ? 'ok' : verdict === 'integrity_only' ? integrityOnlyVerdict(opts.integrityOnly === true) : 'FAILED';
            ctx.stdout(`${plural(totals.files, 'file')}: ${totals.ok} ok, ${totals.integrity_only} integrity-only, ${totals.failed} failed, ${totals.skipped} skipped, ${totals.draft} draft — ${said}\n`);
            ctx.stdout(`totals: ${TRACE_DISPOSITIONS.map((d) => `${d} ${totals[d]}`).join(', ')}\n`);
          }
          return verdictPasses(verdict, opts) ? 0 : 1;
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
}

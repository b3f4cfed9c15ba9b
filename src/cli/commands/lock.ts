/**
 * `loretrace lock verify <locks or folders...> [--lore <dir>] [--trust-key <public.pem>]... [--integrity-only] [--json]`
 *
 * Thin shell over `verifyLock` (src/receipts/lock.ts): for every lock (folders are searched for
 * `*.lock.json`), re-hash each listed file and, with `--lore`, compare the vault's snapshot with the one the
 * lock recorded. One report: per lock its file dispositions (`unchanged`, `changed`, `missing`) and snapshot
 * disposition, then totals over every lock, zeros included (seed 003). A lock that cannot be verified (unreadable,
 * not JSON, not a loretrace lock: `bad_lock`) is that one lock's failure, counted in `unreadable`; the other
 * locks are still verified. Exit 0 when nothing drifted, 1 when any file changed or is missing, the snapshot
 * changed, a lock could not be verified or (with `--trust-key`) a lock's ledger is not signed by a trusted key,
 * 2 on usage errors (no lock found).
 * With `--trust-key` (src/cli/keys.ts) the ledger a lock names must be signed by a trusted runner key (else
 * exit 1, `authorship_failed`); without any trusted key (flag, `LORETRACE_TRUSTED_KEYS`, the config's `trusted_keys`)
 * a lock with a ledger says `authorship not checked (no --trust-key)` and is `UNAUTHENTICATED` (exit 1; exit 0
 * with `--integrity-only`, whose verdict still says integrity only).
 */
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import type { VaultIndex } from '../../types.js';
import { LOCK_FILE_DISPOSITIONS, LOCK_SNAPSHOT_DISPOSITIONS, verifyLock } from '../../receipts/lock.js';
import type { LockVerificationReport } from '../../receipts/lock.js';
import type { TrustedKey } from '../../receipts/signing.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { addVaultOptions, openIndex, readInputText, type VaultCliOptions } from '../vault-options.js';
import { expandInputs } from '../outputs.js';
import { addIntegrityOnlyOption, addTrustKeyOption, integrityOnlyVerdict, trustedKeysFromOptions } from '../keys.js';
import type { IntegrityOnlyOption } from '../keys.js';

/**
 * A lock that could not be verified at all — unreadable (missing, a FIFO or device, over the input cap), not
 * UTF-8, not JSON, a key twice, or not a loretrace lock (`bad_lock`) — reported as that one lock's failure
 * while the other locks of the call are still verified (seed 003: the report records what was checked).
 */
export interface LockFailure {
  file: string;
  ok: false;
  /** The error's code and message, as the CLI prints them for a single file. */
  error: { code: string; message: string };
}

/** One entry of the report: a verification, or a lock that could not be verified. */
export type LockReportEntry = LockVerificationReport | LockFailure;

/** True for a {@link LockFailure}. */
export function isLockFailure(r: LockReportEntry): r is LockFailure {
  return 'error' in r;
}

/**
 * The verdict of one lock's report: `ok` (`verified`), the integrity-only wording when the lock names a ledger
 * and no trusted key was given (src/cli/keys.ts `integrityOnlyVerdict`, never plain "ok"; `integrityOnly` is
 * `--integrity-only`), `DRIFT`, or `FAILED (ledger authorship)`.
 */
export function lockVerdict(r: LockVerificationReport, integrityOnly = false): string {
  if (r.verdict === 'verified') return 'ok';
  if (r.verdict === 'integrity_only') return integrityOnlyVerdict(integrityOnly, 'files and hashes intact');
  return r.drift ? 'DRIFT' : 'FAILED (ledger authorship)';
}

/** The human form of one lock's verification: a header line, one line per file, the snapshot line. */
export function renderLockReport(r: LockVerificationReport, integrityOnly = false): string {
  const out: string[] = [];
  out.push(`lock ${r.file} (${r.command}, ${r.status}): ${lockVerdict(r, integrityOnly)}`);
  for (const f of r.files) {
    out.push(`  ${f.disposition.padEnd(9)} ${f.role.padEnd(6)} ${f.path}`);
    if (f.detail) out.push(`            ${f.detail}`);
  }
  const s = r.snapshot;
  if (s.disposition === 'other_vault') out.push(`  snapshot other_vault (the lock is of vault ${s.namespace}, --lore is ${s.current_namespace}: not compared; pass the lock's own vault)`);
  else {
    // A recorded snapshot its own ledger contradicts is no evidence of anything: say so on the line itself.
    const contradicted = r.bindings.some((b) => b.code === 'lock_snapshot_mismatch');
    out.push(`  snapshot ${s.disposition}${s.recorded ? ` (recorded ${s.recorded.slice(0, 12)}${contradicted ? ' — NOT the snapshot its ledger pins, see the binding below' : ''}${s.current ? `, vault now ${s.current.slice(0, 12)}` : ''})` : ''}`);
  }
  for (const b of r.bindings) out.push(`  binding ${b.pointer}: ${b.message} [${b.code}]`);
  const a = r.ledger_authorship;
  if (a) out.push(!a.checked ? `  ${a.detail}` : a.status === 'trusted' ? `  ledger authorship: ${a.detail}` : `  ledger authorship: FAILED — ${a.detail}`);
  out.push(`  files: ${LOCK_FILE_DISPOSITIONS.map((d) => `${d} ${r.totals[d]}`).join(', ')}`);
  return out.join('\n') + '\n';
}

/** The human form of a lock that could not be verified: one line with its code. */
export function renderLockFailure(r: LockFailure): string {
  return `lock ${r.file}: UNREADABLE — ${r.error.message} [${r.error.code}]\n`;
}

/**
 * Totals over many lock reports, every key present (zeros included): `locks` (all of them, failures included),
 * `ok` (verdict `verified`), `integrity_only` (nothing drifted, but the lock names a ledger and no trusted key
 * was given), `drift` (a file or the snapshot drifted), `unreadable` (locks that could not be verified), then the
 * file and snapshot dispositions of the verified ones, then `authorship_failed` (with trusted keys, locks whose
 * ledger is not signed by one of them).
 */
export function lockTotals(reports: readonly LockReportEntry[]): Record<string, number> {
  const totals: Record<string, number> = { locks: reports.length, ok: 0, integrity_only: 0, drift: 0, unreadable: 0 };
  for (const d of LOCK_FILE_DISPOSITIONS) totals[`files_${d}`] = 0;
  for (const s of LOCK_SNAPSHOT_DISPOSITIONS) totals[`snapshot_${s}`] = 0;
  totals['authorship_failed'] = 0;
  for (const r of reports) {
    if (isLockFailure(r)) {
      totals['unreadable']! += 1;
      continue;
    }
    if (r.verdict === 'verified') totals['ok']! += 1;
    if (r.verdict === 'integrity_only') totals['integrity_only']! += 1;
    if (r.drift) totals['drift']! += 1;
    const a = r.ledger_authorship;
    if (a && a.checked && a.status !== 'trusted') totals['authorship_failed']! += 1;
    for (const d of LOCK_FILE_DISPOSITIONS) totals[`files_${d}`]! += r.totals[d];
    totals[`snapshot_${r.snapshot.disposition}`]! += 1;
  }
  return totals;
}

/**
 * Verify one lock of the call; a coded error reading or parsing it (`file_not_found`, `input_too_large`,
 * `not_utf8`, `bad_json`, `duplicate_key`, `bad_lock`) becomes that lock's {@link LockFailure}, so one bad
 * lock in a folder does not stop the report. Other errors (bugs) still propagate.
 */
async function verifyOneLock(ctx: CliContext, file: string, index: VaultIndex | undefined, trustedKeys: readonly TrustedKey[]): Promise<LockReportEntry> {
  try {
    return await verifyLock(await readInputText(ctx, file, 'JSON lock'), file, { cwd: ctx.cwd, trustedKeys, ...(index !== undefined ? { currentSnapshot: index.snapshot_id, currentNamespace: index.namespace } : {}) });
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    return { file, ok: false, error: { code: e.code, message: e.message } };
  }
}

/** Register `loretrace lock verify` on the program. */
export function register(program: Command, ctx: CliContext): void {
  const lock = program.command('lock').description('verify the lock files loretrace writes beside its outputs (seed 002 packet.lock.json)');
  addIntegrityOnlyOption(addTrustKeyOption(addVaultOptions(lock
    .command('verify')
    .description('re-hash every file a lock lists and (with --lore) compare the vault snapshot; one report, exit 1 on any drift')
    .argument('<paths...>', 'lock files, or folders searched for *.lock.json'), { required: false })
    .option('--json', 'print { locks, totals } as JSON')))
    .action(
      action(ctx, async (paths: string[], opts: Partial<VaultCliOptions> & IntegrityOnlyOption & { trustKey?: string[] }) => {
        const trustedKeys = await trustedKeysFromOptions(ctx, opts);
        const files = await expandInputs(ctx, paths, '.lock.json');
        if (files.length === 0) throw new LoretraceError('usage', `no lock file found in ${paths.join(', ')} (folders are searched for *.lock.json)`, {}, 2);
        const index = opts.lore !== undefined ? await openIndex(ctx, { ...opts, lore: opts.lore }) : undefined;
        const reports: LockReportEntry[] = [];
        for (const f of files) reports.push(await verifyOneLock(ctx, f, index, trustedKeys));
        const totals = lockTotals(reports);
        if (opts.json) printJson(ctx, { locks: reports, totals });
        else {
          for (const r of reports) ctx.stdout(isLockFailure(r) ? renderLockFailure(r) : renderLockReport(r, opts.integrityOnly === true));
          ctx.stdout(`totals: ${plural(totals.locks!, 'lock')}, ${Object.entries(totals).filter(([k]) => k !== 'locks').map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
        }
        const passed = totals.ok! + (opts.integrityOnly === true ? totals.integrity_only! : 0);
        return totals.locks !== passed ? 1 : 0;
      }),
    );
}

/**
 * `loretrace lock verify <locks or folders...> [--lore <dir>] [--json]`
 *
 * Thin shell over `verifyLock` (src/receipts/lock.ts): for every lock (folders are searched for
 * `*.lock.json`), re-hash each listed file and, with `--lore`, compare the vault's snapshot with the one the
 * lock recorded. One report: per lock its file dispositions (`unchanged`, `changed`, `missing`) and snapshot
 * disposition, then totals over every lock, zeros included (seed 003). Exit 0 when nothing drifted, 1 when any
 * file changed or is missing or the snapshot changed, 2 on usage errors (unreadable or non-JSON lock).
 */
import type { Command } from 'commander';
import { LoretraceError } from '../../errors.js';
import { LOCK_FILE_DISPOSITIONS, LOCK_SNAPSHOT_DISPOSITIONS, verifyLock } from '../../receipts/lock.js';
import type { LockVerificationReport } from '../../receipts/lock.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { addVaultOptions, openIndex, readInputText, type VaultCliOptions } from '../vault-options.js';
import { expandInputs } from '../outputs.js';

/** The human form of one lock's verification: a header line, one line per file, the snapshot line. */
export function renderLockReport(r: LockVerificationReport): string {
  const out: string[] = [];
  out.push(`lock ${r.file} (${r.command}, ${r.status}): ${r.ok ? 'ok' : 'DRIFT'}`);
  for (const f of r.files) {
    out.push(`  ${f.disposition.padEnd(9)} ${f.role.padEnd(6)} ${f.path}`);
    if (f.detail) out.push(`            ${f.detail}`);
  }
  const s = r.snapshot;
  if (s.disposition === 'other_vault') out.push(`  snapshot other_vault (the lock is of vault ${s.namespace}, --lore is ${s.current_namespace}: not compared; pass the lock's own vault)`);
  else out.push(`  snapshot ${s.disposition}${s.recorded ? ` (recorded ${s.recorded.slice(0, 12)}${s.current ? `, vault now ${s.current.slice(0, 12)}` : ''})` : ''}`);
  out.push(`  files: ${LOCK_FILE_DISPOSITIONS.map((d) => `${d} ${r.totals[d]}`).join(', ')}`);
  return out.join('\n') + '\n';
}

/** Totals over many lock reports, every key present. */
export function lockTotals(reports: readonly LockVerificationReport[]): Record<string, number> {
  const totals: Record<string, number> = { locks: reports.length, ok: 0, drift: 0 };
  for (const d of LOCK_FILE_DISPOSITIONS) totals[`files_${d}`] = 0;
  for (const s of LOCK_SNAPSHOT_DISPOSITIONS) totals[`snapshot_${s}`] = 0;
  for (const r of reports) {
    totals[r.ok ? 'ok' : 'drift']! += 1;
    for (const d of LOCK_FILE_DISPOSITIONS) totals[`files_${d}`]! += r.totals[d];
    totals[`snapshot_${r.snapshot.disposition}`]! += 1;
  }
  return totals;
}

/** Register `loretrace lock verify` on the program. */
export function register(program: Command, ctx: CliContext): void {
  const lock = program.command('lock').description('verify the lock files loretrace writes beside its outputs (seed 002 packet.lock.json)');
  addVaultOptions(lock
    .command('verify')
    .description('re-hash every file a lock lists and (with --lore) compare the vault snapshot; one report, exit 1 on any drift')
    .argument('<paths...>', 'lock files, or folders searched for *.lock.json'), { required: false })
    .option('--json', 'print { locks, totals } as JSON')
    .action(
      action(ctx, async (paths: string[], opts: Partial<VaultCliOptions>) => {
        const files = await expandInputs(ctx, paths, '.lock.json');
        if (files.length === 0) throw new LoretraceError('usage', `no lock file found in ${paths.join(', ')} (folders are searched for *.lock.json)`, {}, 2);
        const index = opts.lore !== undefined ? await openIndex(ctx, { ...opts, lore: opts.lore }) : undefined;
        const reports: LockVerificationReport[] = [];
        for (const f of files) {
          reports.push(await verifyLock(await readInputText(ctx, f, 'JSON lock'), f, { cwd: ctx.cwd, ...(index !== undefined ? { currentSnapshot: index.snapshot_id, currentNamespace: index.namespace } : {}) }));
        }
        const totals = lockTotals(reports);
        if (opts.json) printJson(ctx, { locks: reports, totals });
        else {
          for (const r of reports) ctx.stdout(renderLockReport(r));
          ctx.stdout(`totals: ${plural(totals.locks!, 'lock')}, ${Object.entries(totals).filter(([k]) => k !== 'locks').map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
        }
        return totals.drift! > 0 ? 1 : 0;
      }),
    );
}

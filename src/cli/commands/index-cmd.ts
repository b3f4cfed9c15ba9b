/**
 * `loretrace index --lore <dir> [--namespace N] [--index-dir D] [--config F] [--include G]... [--exclude G]... [--json]`
 *
 * Builds or refreshes the persisted index of a vault and prints its counts: files, notes, chunks, links,
 * unresolved / ambiguous / broken-fragment links, snapshot_id, and how many notes were parsed, reused
 * or removed. Human output also lists the file-level findings (binary or non-UTF-8 notes, oversized or
 * unreadable files, symlinks, bad frontmatter, an empty vault) with their messages, and the broken and
 * ambiguous links (unresolved links, broken fragments, ambiguous names) in file:line:column order, each
 * message naming its file:line:column; each list stops after the first `MAX_LISTED_FINDINGS` (20) with
 * `… and N more (see --json)`; `--json` and `loretrace links` give them all.
 * A progress bar (stderr) is shown on a terminal when more than `PROGRESS_MIN_NOTES` (src/cli/vault-options.ts) notes need parsing.
 * Exit 0 ok (warnings allowed), 1 when any finding has severity `error`, 2 on usage errors.
 *
 * The vault options and `openIndex` are shared by every vault command (src/cli/vault-options.ts); this
 * file also exports the small option helpers `search` uses.
 */
import type { Command } from 'commander';
import { LoretraceError, type Finding } from '../../errors.js';
import { indexStats, vaultAssets } from '../../indexer/build.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, STORE_CODES, type VaultCliOptions } from '../vault-options.js';

/** Parse a positive integer option value or throw a usage error naming the option. */
export function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new LoretraceError('usage', `option ${name} must be an integer ≥ 1 (got ${JSON.stringify(value)})`, { expected: 'an integer ≥ 1' }, 2);
  }
  return n;
}

/** Link findings: the broken and ambiguous links, listed apart from the file-level findings. */
const LINK_CODES = new Set(['unresolved_link', 'broken_fragment', 'ambiguous_link']);
/** Findings of each kind (file-level, link) listed one per line in the human summary, at most this many. */
const MAX_LISTED_FINDINGS = 20;

/** Findings in file, line, column order (then code), the order a reader walks the vault in. */
function byPosition(findings: Finding[]): Finding[] {
  const key = (f: Finding) => [f.path ?? '', f.line ?? 0, f.column ?? 0, f.code] as const;
  return [...findings].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return 0;
  });
}

/** One finding per line (`    <severity> <code>: <message>`), the first {@link MAX_LISTED_FINDINGS}, then a count of the rest. */
function listFindings(findings: Finding[]): string {
  let out = findings.slice(0, MAX_LISTED_FINDINGS).map((f) => `    ${f.severity} ${f.code}: ${f.message}\n`).join('');
  if (findings.length > MAX_LISTED_FINDINGS) out += `    … and ${findings.length - MAX_LISTED_FINDINGS} more (see --json)\n`;
  return out;
}

function countBy(findings: Finding[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of [...findings].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))) out[f.code] = (out[f.code] ?? 0) + 1;
  return out;
}

/** Register `loretrace index` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(program.command('index').description('build or refresh the persisted index of a vault and print its counts'))
    .option('--json', 'print the counts and every finding as JSON')
    .action(action(ctx, async (opts: VaultCliOptions) => {
      const index = await openIndex(ctx, opts);
      const s = indexStats(index)!;
      const errors = index.findings.filter((f) => f.severity === 'error').length;
      if (opts.json) {
        printJson(ctx, {
          namespace: index.namespace,
          root: index.root,
          snapshot_id: index.snapshot_id,
          files: index.manifest.length,
          notes: s.notes,
          chunks: s.chunks,
          links: s.links,
          unresolved: s.unresolved,
          ambiguous: s.ambiguous,
          broken_fragments: s.broken_fragments,
          parsed: s.parsed,
          reused: s.reused,
          removed: s.removed,
          index_dir: s.index_dir,
          findings_by_code: countBy(index.findings),
          findings: index.findings,
        });
      } else {
        const byCode = Object.entries(countBy(index.findings)).map(([c, n]) => `${c} ×${n}`).join(', ');
        const fileFindings = index.findings.filter((f) => !LINK_CODES.has(f.code) && !STORE_CODES.has(f.code));
        const linkFindings = byPosition(index.findings.filter((f) => LINK_CODES.has(f.code)));
        let listed = listFindings(fileFindings);
        if (linkFindings.length > 0) listed += `  broken and ambiguous links (${linkFindings.length})\n${listFindings(linkFindings)}`;
        ctx.stdout(
          `Indexed ${index.namespace} (${index.root})\n` +
          `  files        ${index.manifest.length} (other files ${vaultAssets(index).length})\n` +
          `  notes        ${s.notes}\n` +
          `  chunks       ${s.chunks}\n` +
          `  links        ${s.links} (unresolved ${s.unresolved}, ambiguous ${s.ambiguous}, broken fragments ${s.broken_fragments})\n` +
          `  parsed       ${s.parsed} (reused ${s.reused}, removed ${s.removed})\n` +
          `  snapshot_id  ${index.snapshot_id}\n` +
          `  index dir    ${s.index_dir}\n` +
          `  findings     ${index.findings.length}${byCode ? ` (${byCode})` : ''}\n` +
          listed,
        );
      }
      return errors > 0 ? 1 : 0;
    }));
}

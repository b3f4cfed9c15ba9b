/**
 * `loretrace index --lore <dir> [--namespace N] [--index-dir D] [--config F] [--json]`
 *
 * Builds or refreshes the persisted index of a vault and prints its counts: notes, chunks, links,
 * unresolved / ambiguous / broken-fragment links, snapshot_id, and how many notes were parsed, reused
 * or removed. A progress bar (stderr) is shown on a terminal when more than 200 notes need parsing.
 * Exit 0 ok (warnings allowed), 1 when any finding has severity `error`, 2 on usage errors.
 *
 * Also exports the vault options and {@link openIndex} shared by `search`, `show` and `links`.
 */
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { LoretraceError, type Finding } from '../../errors.js';
import { indexStats, indexVault, type IndexOptions } from '../../indexer/build.js';
import type { VaultIndex } from '../../types.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';

/** Options every vault command takes. */
export interface VaultCliOptions {
  lore: string;
  namespace?: string;
  indexDir?: string;
  config?: string;
  json?: boolean;
}

/** Add `--lore`, `--namespace`, `--index-dir`, `--config` and `--json` to a command. */
export function addVaultOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--lore <dir>', 'vault directory (an Obsidian vault of markdown notes)')
    .option('--namespace <name>', 'ref namespace (default: config namespace, else the vault folder name)')
    .option('--index-dir <dir>', 'where the persisted index lives (default: $LORETRACE_INDEX_DIR, else the user cache)')
    .option('--config <file>', 'vault config file (default: <vault>/loretrace.config.json when present)')
    .option('--json', 'print JSON');
}

/** Findings about the persisted index itself, echoed to stderr by every vault command. */
const STORE_CODES = new Set(['index_rebuilt', 'index_not_saved']);

/**
 * Open (build or refresh) the index for a vault command. Store warnings go to stderr as
 * `loretrace: warning: …`; a TTY gets a progress bar while more than 200 notes are parsed.
 */
export async function openIndex(ctx: CliContext, opts: VaultCliOptions): Promise<VaultIndex> {
  let bar: cliProgress.SingleBar | null = null;
  const options: IndexOptions = {
    namespace: opts.namespace,
    indexDir: opts.indexDir,
    configPath: opts.config,
    env: ctx.env,
    cwd: ctx.cwd,
    onProgress: ctx.isTTY
      ? ({ done, total }) => {
        if (total <= 200) return;
        if (!bar) {
          bar = new cliProgress.SingleBar({ stream: process.stderr, format: 'parsing {bar} {value}/{total} notes', hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic);
          bar.start(total, 0);
        }
        bar.update(done);
        if (done === total) bar.stop();
      }
      : undefined,
  };
  const index = await indexVault(opts.lore, options);
  for (const f of index.findings) if (STORE_CODES.has(f.code)) ctx.stderr(`loretrace: warning: ${f.message} [${f.code}]\n`);
  return index;
}

/** Strip a leading `Namespace:` from a user-given vault path prefix. */
export function stripNamespace(index: VaultIndex, value: string): string {
  return value.startsWith(`${index.namespace}:`) ? value.slice(index.namespace.length + 1) : value;
}

/** Parse a positive integer option value or throw a usage error naming the option. */
export function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new LoretraceError('usage', `option ${name} must be an integer ≥ 1 (got ${JSON.stringify(value)})`, { expected: 'an integer ≥ 1' }, 2);
  }
  return n;
}

function countBy(findings: Finding[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of [...findings].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))) out[f.code] = (out[f.code] ?? 0) + 1;
  return out;
}

export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(program.command('index').description('build or refresh the persisted index of a vault and print its counts'))
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
        ctx.stdout(
          `Indexed ${index.namespace} (${index.root})\n` +
          `  notes        ${s.notes}\n` +
          `  chunks       ${s.chunks}\n` +
          `  links        ${s.links} (unresolved ${s.unresolved}, ambiguous ${s.ambiguous}, broken fragments ${s.broken_fragments})\n` +
          `  parsed       ${s.parsed} (reused ${s.reused}, removed ${s.removed})\n` +
          `  snapshot_id  ${index.snapshot_id}\n` +
          `  index dir    ${s.index_dir}\n` +
          `  findings     ${index.findings.length}${byCode ? ` (${byCode})` : ''}\n`,
        );
      }
      return errors > 0 ? 1 : 0;
    }));
}

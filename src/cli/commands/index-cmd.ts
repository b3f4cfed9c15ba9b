/**
 * `loretrace index --lore <dir> [--namespace N] [--index-dir D] [--config F] [--include G]... [--exclude G]... [--json]`
 *
 * Builds or refreshes the persisted index of a vault and prints its counts: files, notes, chunks, links,
 * unresolved / ambiguous / broken-fragment links, snapshot_id, and how many notes were parsed, reused
 * or removed. Human output also lists the file-level findings (binary or non-UTF-8 notes, oversized or
 * unreadable files, symlinks, bad frontmatter, an empty vault) with their messages; link findings are
 * counted there and listed in full by `--json` and `loretrace links`.
 * A progress bar (stderr) is shown on a terminal when more than {@link PROGRESS_MIN_NOTES} notes need parsing.
 * Exit 0 ok (warnings allowed), 1 when any finding has severity `error`, 2 on usage errors.
 *
 * Also exports the vault options and {@link openIndex} shared by `search`, `show` and `links`.
 */
import { resolve as resolvePath } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { LoretraceError, type Finding } from '../../errors.js';
import { indexStats, indexVault, vaultAssets, type IndexOptions } from '../../indexer/build.js';
import type { VaultConfig, VaultIndex } from '../../types.js';
import { loadVaultConfig } from '../../vault/config.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';

/** Options every vault command takes. */
export interface VaultCliOptions {
  lore: string;
  namespace?: string;
  indexDir?: string;
  config?: string;
  /** `--include` globs (repeatable); replace the config's `include` when given. */
  include?: string[];
  /** `--exclude` globs (repeatable); added to the config's `exclude`. */
  exclude?: string[];
  json?: boolean;
}

const collectGlob = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Add `--lore`, `--namespace`, `--index-dir`, `--config`, `--include`, `--exclude` and `--json` to a command.
 * `--include`/`--exclude` are picomatch globs over vault-relative POSIX paths (docs/INDEX.md "Scan rules").
 */
export function addVaultOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--lore <dir>', 'vault directory (an Obsidian vault of markdown notes)')
    .option('--namespace <name>', 'ref namespace (default: config namespace, else the vault folder name)')
    .option('--index-dir <dir>', 'where the persisted index lives (default: $LORETRACE_INDEX_DIR, else the user cache)')
    .option('--config <file>', 'vault config file (default: <vault>/loretrace.config.json when present)')
    .option('--include <glob>', 'only notes whose vault path matches (repeatable; replaces config include, default **/*.md)', collectGlob)
    .option('--exclude <glob>', 'leave out files whose vault path matches (repeatable; added to config exclude)', collectGlob)
    .option('--json', 'print JSON');
}

/**
 * The vault config with the CLI's `--include` / `--exclude` applied, or undefined when neither is given
 * (then `indexVault` reads the config itself). The config file is found as `indexVault` finds it:
 * `--config`, else `<vault>/loretrace.config.json` when present.
 *
 * @throws LoretraceError `usage` (exit 2) for an empty glob; `config_not_found` / `bad_config` (exit 2).
 */
async function cliConfig(ctx: CliContext, opts: VaultCliOptions): Promise<VaultConfig | undefined> {
  if (!opts.include?.length && !opts.exclude?.length) return undefined;
  for (const [name, globs] of [['--include', opts.include], ['--exclude', opts.exclude]] as const) {
    for (const g of globs ?? []) {
      if (g.trim() === '') throw new LoretraceError('usage', `option ${name} must be a non-empty glob (got ${JSON.stringify(g)})`, { expected: 'a picomatch glob such as "World/**/*.md"' }, 2);
    }
  }
  const { config } = await loadVaultConfig(resolvePath(ctx.cwd, opts.lore), { configPath: opts.config, cwd: ctx.cwd });
  const merged: VaultConfig = { ...config };
  if (opts.include?.length) merged.include = [...opts.include];
  if (opts.exclude?.length) merged.exclude = [...(config.exclude ?? []), ...opts.exclude];
  return merged;
}

/** Notes to parse above which a terminal gets a progress bar. */
export const PROGRESS_MIN_NOTES = 200;

/**
 * A TTY-like stream over `ctx.stderr` for cli-progress (which writes text and ANSI cursor codes through
 * `write` and the readline helpers), so the bar goes where the command's stderr goes.
 */
function progressStream(ctx: CliContext): NodeJS.WritableStream {
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    ctx.stderr(String(chunk));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  };
  return { isTTY: true, columns: process.stderr.columns || 80, write } as unknown as NodeJS.WritableStream;
}

/** Findings about the persisted index itself, echoed to stderr by every vault command. */
const STORE_CODES = new Set(['index_rebuilt', 'index_not_saved']);

/**
 * Open (build or refresh) the index for a vault command. Store warnings go to stderr as
 * `loretrace: warning: …`; when `ctx.isTTY`, a progress bar (`parsing ███░░ 120/480 notes`, on
 * `ctx.stderr`, cleared when done) shows while more than {@link PROGRESS_MIN_NOTES} notes are parsed.
 *
 * @throws whatever `indexVault` throws (`vault_not_found`, `bad_config`, …); the bar is stopped first.
 */
export async function openIndex(ctx: CliContext, opts: VaultCliOptions): Promise<VaultIndex> {
  let bar: cliProgress.SingleBar | null = null;
  const config = await cliConfig(ctx, opts);
  const options: IndexOptions = {
    namespace: opts.namespace,
    indexDir: opts.indexDir,
    configPath: opts.config,
    ...(config ? { config } : {}),
    env: ctx.env,
    cwd: ctx.cwd,
    onProgress: ctx.isTTY
      ? ({ done, total }) => {
        if (total <= PROGRESS_MIN_NOTES) return;
        if (!bar) {
          bar = new cliProgress.SingleBar({ stream: progressStream(ctx), format: 'parsing {bar} {value}/{total} notes', hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic);
          bar.start(total, 0);
        }
        bar.update(done);
        if (done === total) bar.stop();
      }
      : undefined,
  };
  let index: VaultIndex;
  try {
    index = await indexVault(opts.lore, options);
  } finally {
    (bar as cliProgress.SingleBar | null)?.stop(); // no-op when already stopped; never leave its timer running
  }
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

/** Link findings: counted in the human summary, listed by `--json` and `loretrace links`. */
const LINK_CODES = new Set(['unresolved_link', 'broken_fragment', 'ambiguous_link']);
/** File-level findings listed one per line in the human summary, at most this many. */
const MAX_LISTED_FINDINGS = 20;

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
        const fileFindings = index.findings.filter((f) => !LINK_CODES.has(f.code) && !STORE_CODES.has(f.code));
        let listed = fileFindings.slice(0, MAX_LISTED_FINDINGS).map((f) => `    ${f.severity} ${f.code}: ${f.message}\n`).join('');
        if (fileFindings.length > MAX_LISTED_FINDINGS) listed += `    … and ${fileFindings.length - MAX_LISTED_FINDINGS} more (see --json)\n`;
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

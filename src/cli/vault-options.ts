/**
 * The one definition of the vault options every vault-reading command takes (`index`, `search`, `show`,
 * `links`, `traverse`, `retrieve`, `verify-trace`, `serve`, `ledger verify`, `coverage`), the one way to
 * open the index from them, and the one way to read an input file named on the command line.
 *
 * Options (same wording and defaults everywhere): `--lore <dir>` (required, except for `ledger verify`),
 * `--namespace <name>`, `--index-dir <dir>`, `--config <file>`, `--include <glob>`..., `--exclude <glob>`...
 */
import { resolve as resolvePath } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../errors.js';
import { indexVault, type IndexOptions } from '../indexer/build.js';
import { fileFindings } from '../indexer/lookup.js';
import { parseJsonDocument } from '../contracts/validate.js';
import { DEFAULT_MAX_INPUT_BYTES, decodeUtf8Strict, readInputBytes } from '../contracts/json-input.js';
import type { VaultConfig, VaultIndex } from '../types.js';
import { inVaultPolicyWarning, loadVaultConfig, withConfigOrigin } from '../vault/config.js';
import type { CliContext } from './context.js';

/** Options every vault command takes (commander's camelCase names of the flags above). */
export interface VaultCliOptions {
  /** `--lore`: the vault root, relative to the working directory. Absent only where it is optional. */
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

/** How {@link addVaultOptions} declares `--lore`. */
export interface AddVaultOptionsOptions {
  /** `--lore` is required (default true); `ledger verify` takes it optionally. */
  required?: boolean;
}

/** Help text of `--lore`, shared by the required and the optional form. */
export const LORE_HELP = 'vault directory (an Obsidian vault of markdown notes)';

const collectGlob = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Add `--lore`, `--namespace`, `--index-dir`, `--config`, `--include` and `--exclude` to a command
 * (not `--json`: each command describes its own JSON output). `--include`/`--exclude` are picomatch globs
 * over vault-relative POSIX paths (docs/INDEX.md "Scan rules").
 */
export function addVaultOptions(cmd: Command, options: AddVaultOptionsOptions = {}): Command {
  if (options.required === false) cmd.option('--lore <dir>', LORE_HELP);
  else cmd.requiredOption('--lore <dir>', LORE_HELP);
  return cmd
    .option('--namespace <name>', 'ref namespace (default: the config\'s namespace, else the vault folder name)')
    .option('--index-dir <dir>', 'where the persisted index lives (default: $LORETRACE_INDEX_DIR, else the user cache)')
    .option('--config <file>', 'vault config file (default: <vault>/loretrace.config.json when present)')
    .option('--include <glob>', 'only notes whose vault path matches (repeatable; replaces config include, default **/*.md)', collectGlob)
    .option('--exclude <glob>', 'leave out files whose vault path matches (repeatable; added to config exclude)', collectGlob);
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
  const merged: VaultConfig = withConfigOrigin({ ...config }, config);
  if (opts.include?.length) merged.include = [...opts.include];
  if (opts.exclude?.length) merged.exclude = [...(config.exclude ?? []), ...opts.exclude];
  return merged;
}

/**
 * The `indexVault` options the vault options stand for: namespace, index dir (else `$LORETRACE_INDEX_DIR`
 * from `ctx.env`, else the user cache), config file or the config with `--include`/`--exclude` applied,
 * and `ctx.cwd` for relative paths. For callers that index through another API (`openProxySession`).
 *
 * @throws LoretraceError as {@link cliConfig}: `usage`, `config_not_found`, `bad_config` (exit 2).
 */
export async function vaultIndexOptions(ctx: CliContext, opts: VaultCliOptions): Promise<IndexOptions> {
  const config = await cliConfig(ctx, opts);
  await warnInVaultPolicy(ctx, opts, config);
  return {
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
    ...(opts.indexDir !== undefined ? { indexDir: opts.indexDir } : {}),
    ...(opts.config !== undefined ? { configPath: opts.config } : {}),
    ...(config ? { config } : {}),
    env: ctx.env,
    cwd: ctx.cwd,
  };
}

/**
 * Warn (one line on stderr, naming the file; `inVaultPolicyWarning`) when the config the command will use lies
 * inside the vault and tries to replace a policy default it may only add to (`future_era_prefixes`). A config
 * that cannot be read is not reported here (indexing reports it).
 */
async function warnInVaultPolicy(ctx: CliContext, opts: VaultCliOptions, merged: VaultConfig | undefined): Promise<void> {
  let config = merged;
  if (config === undefined) {
    try {
      config = (await loadVaultConfig(resolvePath(ctx.cwd, opts.lore), { configPath: opts.config, cwd: ctx.cwd })).config;
    } catch {
      return;
    }
  }
  const warning = inVaultPolicyWarning(config);
  if (warning !== null) ctx.stderr(`${warning}\n`);
}

/** Notes to parse above which a terminal gets a progress bar. */
export const PROGRESS_MIN_NOTES = 200;

/**
 * A TTY-like stream over `ctx.stderr` for cli-progress (which writes text and ANSI cursor codes through
 * `write` and the readline helpers), so the bar goes where the command's stderr goes.
 */
export function progressStream(ctx: CliContext): NodeJS.WritableStream {
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    (ctx.progress ?? ctx.stderr)(String(chunk));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  };
  return { isTTY: true, columns: process.stderr.columns || 80, write } as unknown as NodeJS.WritableStream;
}

/** Findings about the persisted index itself, echoed to stderr by every vault command. */
export const STORE_CODES: ReadonlySet<string> = new Set(['index_rebuilt', 'index_not_saved']);

/**
 * Open (build or refresh) the index for a vault command: `indexVault` with {@link vaultIndexOptions}.
 * Store warnings go to stderr as `loretrace: warning: …`; when `ctx.isTTY`, a progress bar
 * (`parsing ███░░ 120/480 notes`, on `ctx.stderr`, cleared when done) shows while more than
 * {@link PROGRESS_MIN_NOTES} notes are parsed.
 *
 * @throws whatever `indexVault` throws (`vault_not_found`, `bad_config`, …); the bar is stopped first.
 */
export async function openIndex(ctx: CliContext, opts: VaultCliOptions): Promise<VaultIndex> {
  let bar: cliProgress.SingleBar | null = null;
  const options: IndexOptions = {
    ...(await vaultIndexOptions(ctx, opts)),
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
  // File findings only: the store's are among them, and the links are not resolved for it.
  for (const f of fileFindings(index)) if (STORE_CODES.has(f.code)) ctx.stderr(`loretrace: warning: ${f.message} [${f.code}]\n`);
  return index;
}

/** Largest ledger read (bytes): a ledger of a long session is larger than a document. */
export const MAX_LEDGER_BYTES = 64 * 1024 * 1024;

/**
 * The input cap in force: `LORETRACE_MAX_INPUT_BYTES` (a positive integer, bytes) or the default 8 MiB
 * (`DEFAULT_MAX_INPUT_BYTES`, src/contracts/json-input.ts).
 * @throws LoretraceError `usage` (exit 2) when the variable is set to anything but a positive integer.
 */
export function inputCap(ctx: CliContext): number {
  const raw = ctx.env.LORETRACE_MAX_INPUT_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_MAX_INPUT_BYTES;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw new LoretraceError('usage', `LORETRACE_MAX_INPUT_BYTES must be a positive integer (bytes); got ${JSON.stringify(raw.slice(0, 40))}`, { expected: 'a positive integer' }, 2);
  }
  return n;
}

/**
 * The exact bytes of an input file named on the command line, through the one checked reader
 * (`readInputBytes`, src/contracts/json-input.ts): only a regular file is opened (a FIFO or `/dev/zero`
 * would block or never end) and its size is checked against the cap from `fstat` before a byte is read.
 * The errors name the document the command expected, not "a JSON file".
 *
 * @param file the path as the user gave it (relative to `ctx.cwd`), used in messages.
 * @param what the document expected, for the error's `expected` (e.g. `JSON traversal policy`).
 * @param maxBytes the cap; default {@link inputCap} (ledgers pass {@link MAX_LEDGER_BYTES}).
 * @throws LoretraceError `file_not_found` (exit 2) — `cannot read <file>: no such file` (or `is a
 *   directory`, `not a regular file`, the system's reason); `input_too_large` (exit 2).
 */
export async function readInputFile(ctx: CliContext, file: string, what: string, maxBytes: number = inputCap(ctx)): Promise<Buffer> {
  return readInputBytes(resolvePath(ctx.cwd, file), file, { maxBytes }).catch((e: unknown) => {
    if (isLoretraceError(e) && e.code === 'file_not_found') throw new LoretraceError(e.code, e.message, { file, expected: `a readable ${what} file` }, 2);
    if (isLoretraceError(e) && e.code === 'input_too_large') throw new LoretraceError(e.code, e.message, { file, expected: `a file of at most ${maxBytes} bytes` }, 2);
    throw e;
  });
}

/**
 * Read an input file named on the command line as strict UTF-8 text: {@link readInputFile}, then an
 * invalid UTF-8 byte is an error with its byte offset (src/contracts/json-input.ts).
 *
 * @param what the document expected, for the error's `expected` (e.g. `JSON traversal policy`).
 * @param maxBytes the cap; default {@link inputCap} (ledgers pass {@link MAX_LEDGER_BYTES}).
 * @throws LoretraceError `file_not_found`, `input_too_large`, `not_utf8` (exit 2).
 */
export async function readInputText(ctx: CliContext, file: string, what: string, maxBytes: number = inputCap(ctx)): Promise<string> {
  return decodeUtf8Strict(await readInputFile(ctx, file, what, maxBytes), file);
}

/**
 * Read and parse a JSON input file ({@link readInputText}, then `parseJsonDocument`: BOM-tolerant,
 * duplicate keys refused).
 *
 * @param what the document expected, e.g. `traversal policy` (message: `a readable JSON traversal policy file`).
 * @throws LoretraceError `file_not_found`, `input_too_large`, `not_utf8`, `bad_json` (with line and
 *   column), `duplicate_key` (pointer and both lines) — all exit 2.
 */
export async function readJsonFile(ctx: CliContext, file: string, what: string): Promise<unknown> {
  return parseJsonDocument(await readInputText(ctx, file, `JSON ${what}`), file);
}

/**
 * The key options of the CLI (docs/RECEIPTS.md "Authorship", src/receipts/signing.ts):
 *
 * - `--signing-key <file>` (`serve`, `retrieve`; else the `LORETRACE_SIGNING_KEY` environment variable):
 *   the runner's Ed25519 private key (PKCS #8 PEM, `loretrace keygen`), which signs the ledger's
 *   `SESSION_CLOSED` record;
 * - `--trust-key <public.pem>` (repeatable; `ledger verify`, `verify-trace`, `capture`, `capture check`,
 *   `lock verify`; else `LORETRACE_TRUSTED_KEYS`, a list of files separated by the platform's path
 *   delimiter, `:` on POSIX, unset when empty, an empty entry refused; else the `trusted_keys` of a config file
 *   named with `--config` that is outside the vault): the public keys whose signature proves who wrote a ledger,
 *   one key per file. Flags replace the variable, and the variable the config; they do not add up. The vault's
 *   own `loretrace.config.json` (or a `--config` inside the vault) never supplies trust — a trust anchor read
 *   from the data under verification lets whoever writes the vault vouch for a ledger they forged — and its
 *   `trusted_keys` are ignored with a warning on stderr naming them;
 * - `--integrity-only`: without any trusted key, accept a report whose checks passed but whose ledger
 *   authorship was not checked (exit 0); its verdict still says so.
 */
import { realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { readSigningKey, readTrustedKey } from '../receipts/signing.js';
export { trustOrigin } from '../receipts/signing.js';
import type { LedgerSigner, TrustedKey, VerificationVerdict } from '../receipts/signing.js';
import type { CliContext } from './context.js';
import { LoretraceError, isLoretraceError } from '../errors.js';
import { isInsideFolder, loadVaultConfig } from '../vault/config.js';
import { readInputText } from './vault-options.js';

/** Largest key file read, in bytes: a PEM key is a few hundred bytes. */
const MAX_KEY_BYTES = 64 * 1024;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Add `--signing-key <file>` to a command that writes a ledger. */
export function addSigningKeyOption(cmd: Command): Command {
  return cmd.option('--signing-key <file>', "runner's Ed25519 private key (loretrace keygen) that signs the ledger's SESSION_CLOSED record (default: LORETRACE_SIGNING_KEY)");
}

/** Add `--trust-key <public.pem>` (repeatable) to a command that reads ledgers. */
export function addTrustKeyOption(cmd: Command): Command {
  return cmd.option('--trust-key <public.pem>', 'trusted runner public key (repeatable): the ledger must be signed by one of them (default: LORETRACE_TRUSTED_KEYS, a path list)', collect, []);
}

/**
 * The signer of `--signing-key` (else `LORETRACE_SIGNING_KEY`), or null when neither is given. A key file
 * that others can read gets a warning on stderr (it is not refused: the operator decides).
 * @throws LoretraceError `file_not_found` (exit 2), `bad_signing_key` (exit 2).
 */
export async function signerFromOptions(ctx: CliContext, opts: { signingKey?: string }): Promise<LedgerSigner | null> {
  const file = opts.signingKey ?? (ctx.env['LORETRACE_SIGNING_KEY'] || undefined);
  if (file === undefined) return null;
  const pem = await readInputText(ctx, file, 'PEM private key', MAX_KEY_BYTES);
  const signer = readSigningKey(pem, file);
  try {
    if (process.platform !== 'win32' && (statSync(resolve(ctx.cwd, file)).mode & 0o077) !== 0) {
      ctx.stderr(`loretrace: warning: signing key ${file} can be read by other users (mode ${(statSync(resolve(ctx.cwd, file)).mode & 0o777).toString(8)}); chmod 600 it\n`);
    }
  } catch {
    // Read above; a stat that fails now changes nothing about the key.
  }
  return signer;
}

/**
 * The trusted keys of `--trust-key`, else `LORETRACE_TRUSTED_KEYS`, else the `trusted_keys` of the `--config`
 * file when it is outside the vault ({@link configTrustedKeys}), in the order given; [] when none. Each source
 * replaces the ones after it, they do not add up. Every key's `origin` says which source gave it
 * ({@link trustOrigin}), so reports name the real source of trust.
 * @throws LoretraceError `file_not_found` (exit 2), `bad_trust_key` (exit 2) for a flag's or the variable's file
 *   (a variable's, its message starting `LORETRACE_TRUSTED_KEYS entry <n> of <m>: `); `bad_option` (exit 2) for
 *   a variable with an empty entry ({@link envTrustedKeyFiles});
 *   for a config entry `bad_config` (exit 2: the key file cannot be read) or `bad_trust_key` (exit 2: not an
 *   Ed25519 public key), both naming the config file and the entry's JSON pointer (`/trusted_keys/0`); and
 *   whatever loading the config throws (`config_not_found`, `bad_config`, `bad_json`, …).
 */
export async function trustedKeysFromOptions(ctx: CliContext, opts: { trustKey?: string[]; config?: string; lore?: string }): Promise<TrustedKey[]> {
  if (opts.trustKey && opts.trustKey.length > 0) {
    const keys: TrustedKey[] = [];
    for (const file of opts.trustKey) keys.push({ ...readTrustedKey(await readInputText(ctx, file, 'PEM public key', MAX_KEY_BYTES), file), origin: '--trust-key' });
    return keys;
  }
  const files = envTrustedKeyFiles(ctx.env[TRUSTED_KEYS_VARIABLE]);
  if (files.length === 0) return configTrustedKeys(ctx, opts);
  const keys: TrustedKey[] = [];
  for (const [i, file] of files.entries()) {
    try {
      keys.push({ ...readTrustedKey(await readInputText(ctx, file, 'PEM public key', MAX_KEY_BYTES), file), origin: TRUSTED_KEYS_VARIABLE });
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
      // The same code and exit, the message naming where the file came from: no flag names it.
      throw new LoretraceError(e.code, `${TRUSTED_KEYS_VARIABLE} entry ${i + 1} of ${files.length}: ${e.message}`, e.details, e.exitCode);
    }
  }
  return keys;
}

/** The environment variable that lists trusted key files when no `--trust-key` is given. */
const TRUSTED_KEYS_VARIABLE = 'LORETRACE_TRUSTED_KEYS';

/**
 * The key files `LORETRACE_TRUSTED_KEYS` lists, split on the platform's path delimiter (`:` on POSIX, `;` on
 * Windows, as `PATH`). Unset or the empty string gives [] (the `--config` file's `trusted_keys` then apply): `VAR= cmd`
 * is how a shell clears a variable for one command, and `LORETRACE_SIGNING_KEY` and `SOURCE_DATE_EPOCH` read
 * `''` the same way. A non-empty value with an empty entry (`":"`, `"a.pem:"`, `"a.pem::b.pem"`) is refused:
 * it names no file where one was written, and dropping it would quietly check fewer keys than were meant.
 * @throws LoretraceError `bad_option` (exit 2) naming the variable and the empty entry.
 */
function envTrustedKeyFiles(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  const files = value.split(delimiter);
  const empty = files.findIndex((f) => f === '');
  if (empty >= 0) {
    throw new LoretraceError('bad_option', `${TRUSTED_KEYS_VARIABLE}=${JSON.stringify(value)}: entry ${empty + 1} of ${files.length} is empty; expected public-key PEM files separated by ${JSON.stringify(delimiter)}, each non-empty (unset the variable, or set it to "", to use the config's trusted_keys)`, { expected: `public-key PEM file paths separated by ${JSON.stringify(delimiter)}` }, 2);
  }
  return files;
}

/**
 * The `trusted_keys` of the config file named with `--config`, each path resolved against the config file's
 * folder; [] when there is no `--config` or it lists none. Trust never comes from inside the vault being
 * verified (`--lore`): whoever can write the vault could otherwise plant a key and a config naming it, and every
 * ledger they sign would verify (docs/PROXY.md: the lore itself is untrusted input). So the vault's own
 * `loretrace.config.json`, a `--config` inside the vault, and a `--config` entry whose key file lies inside the
 * vault are ignored, each with a warning on stderr naming the config file, the entry and the key file
 * (`loretrace: warning: …/loretrace.config.json /trusted_keys/0 ".keys/attacker.pub.pem" (…): ignored — …`).
 * A vault config that cannot be read is not reported here (indexing the vault reports it).
 * @throws LoretraceError as {@link trustedKeysFromOptions} for a `--config` entry.
 */
async function configTrustedKeys(ctx: CliContext, opts: { config?: string; lore?: string }): Promise<TrustedKey[]> {
  const vault = opts.lore !== undefined ? resolve(ctx.cwd, opts.lore) : null;
  const ignore = (file: string, pointer: string, entry: string, path: string, why: string) => ctx.stderr(`loretrace: warning: ${file} ${pointer} ${JSON.stringify(entry)} (${path}): ignored — ${why}; a trusted key comes from outside the vault under verification: --trust-key, ${TRUSTED_KEYS_VARIABLE}, or --config <file> outside the vault\n`);
  if (opts.config === undefined) {
    if (vault === null) return [];
    let loaded: Awaited<ReturnType<typeof loadVaultConfig>>;
    try {
      loaded = await loadVaultConfig(vault, { cwd: ctx.cwd });
    } catch {
      return [];
    }
    const { config, file } = loaded;
    if (file !== null) (config.trusted_keys ?? []).forEach((entry, i) => ignore(file, `/trusted_keys/${i}`, entry, resolve(dirname(file), entry), 'the vault\'s own config never supplies trust'));
    return [];
  }
  const { config, file } = await loadVaultConfig(vault ?? ctx.cwd, { configPath: opts.config, cwd: ctx.cwd });
  if (file === null || !config.trusted_keys) return [];
  const keys: TrustedKey[] = [];
  for (const [i, entry] of config.trusted_keys.entries()) {
    const pointer = `/trusted_keys/${i}`;
    const path = resolve(dirname(file), entry);
    if (vault !== null && isInsideFolder(file, vault)) {
      ignore(file, pointer, entry, path, `the config file is inside the vault ${opts.lore}`);
      continue;
    }
    if (vault !== null && isInsideFolder(path, vault)) {
      ignore(file, pointer, entry, path, `the key file is inside the vault ${opts.lore}`);
      continue;
    }
    let pem: string;
    try {
      pem = await readInputText(ctx, path, 'PEM public key', MAX_KEY_BYTES);
    } catch (e) {
      const why = isLoretraceError(e) ? e.message : String(e);
      throw new LoretraceError('bad_config', `config file ${file} ${pointer}: cannot read trusted key ${JSON.stringify(entry)} (${path}): ${why}`, { file, pointer, expected: 'a readable PEM public key file, its path relative to the config file' }, 2);
    }
    try {
      keys.push({ ...readTrustedKey(pem, path), origin: `--config ${file}` });
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
      throw new LoretraceError('bad_trust_key', `config file ${file} ${pointer}: ${e.message}`, { file, pointer, expected: e.details.expected ?? 'an Ed25519 PEM public key' }, 2);
    }
  }
  return keys;
}

/**
 * Add `--integrity-only` to a command that verifies ledgers (`verify-trace`, `capture check`, `lock verify`,
 * `ledger verify`): without a trusted key from any source, a report whose every check passed is
 * `integrity_only` (src/receipts/signing.ts `VerificationVerdict`) and exits 1; with this flag it exits 0,
 * and its verdict still says integrity only.
 */
export function addIntegrityOnlyOption(cmd: Command): Command {
  return cmd.option('--integrity-only', 'accept integrity-only checking when no trusted key is given (exit 0; the verdict still says authorship was not checked)');
}

/** The options {@link addIntegrityOnlyOption} adds. */
export interface IntegrityOnlyOption {
  integrityOnly?: boolean;
}

/**
 * The verdict text of an `integrity_only` report (docs/RECEIPTS.md "Authorship"): never plain "ok", whether or
 * not `--integrity-only` accepted it. `intact` says what was checked (`chain and hashes intact`, a lock's
 * `files and hashes intact`).
 */
export function integrityOnlyVerdict(accepted: boolean, intact = 'chain and hashes intact'): string {
  return `${accepted ? 'INTEGRITY ONLY (--integrity-only)' : 'UNAUTHENTICATED'} — ${intact}, authorship not checked (no trusted key): anyone can write such a ledger`;
}

/** True when a verdict passes the command: `verified`, or `integrity_only` accepted with `--integrity-only`. */
export function verdictPasses(verdict: VerificationVerdict, opts: IntegrityOnlyOption): boolean {
  return verdict === 'verified' || (verdict === 'integrity_only' && opts.integrityOnly === true);
}

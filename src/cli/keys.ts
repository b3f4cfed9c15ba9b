/**
 * The key options of the CLI (docs/RECEIPTS.md "Authorship", src/receipts/signing.ts):
 *
 * - `--signing-key <file>` (`serve`, `retrieve`; else the `LORETRACE_SIGNING_KEY` environment variable):
 *   the runner's Ed25519 private key (PKCS #8 PEM, `loretrace keygen`), which signs the ledger's
 *   `SESSION_CLOSED` record;
 * - `--trust-key <public.pem>` (repeatable; `ledger verify`, `verify-trace`, `capture`, `capture check`,
 *   `lock verify`; else `LORETRACE_TRUSTED_KEYS`, a list of files separated by the platform's path
 *   delimiter, `:` on POSIX): the public keys whose signature proves who wrote a ledger. Flags replace the
 *   variable, they do not add to it.
 */
import { statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import type { Command } from 'commander';
import { readSigningKey, readTrustedKey } from '../receipts/signing.js';
import type { LedgerSigner, TrustedKey } from '../receipts/signing.js';
import type { CliContext } from './context.js';
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
 * The trusted keys of `--trust-key` (else `LORETRACE_TRUSTED_KEYS`), in the order given; [] when none.
 * @throws LoretraceError `file_not_found` (exit 2), `bad_trust_key` (exit 2).
 */
export async function trustedKeysFromOptions(ctx: CliContext, opts: { trustKey?: string[] }): Promise<TrustedKey[]> {
  const files = opts.trustKey && opts.trustKey.length > 0
    ? opts.trustKey
    : (ctx.env['LORETRACE_TRUSTED_KEYS'] ?? '').split(delimiter).filter((f) => f !== '');
  const keys: TrustedKey[] = [];
  for (const file of files) keys.push(readTrustedKey(await readInputText(ctx, file, 'PEM public key', MAX_KEY_BYTES), file));
  return keys;
}

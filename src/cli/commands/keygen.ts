/**
 * `loretrace keygen --out <dir-or-file> [--json]`: make a runner signing key (docs/RECEIPTS.md "Authorship").
 *
 * Writes an Ed25519 key pair (node:crypto) as PEM: the private key (PKCS #8, file mode 0600) and its public
 * key (SPKI) beside it, and prints the key id (first 16 hex digits of SHA-256 over the raw 32-byte public
 * key). `--out` names an existing folder (→ `<dir>/runner.key.pem` and `<dir>/runner.pub.pem`) or the
 * private key file (`x.key.pem` → public `x.pub.pem`; `x.pem` → `x.pub.pem`; else `<name>.pub.pem`).
 * A trailing `/` (or `\`) always means a folder: a missing one is created (mode 0700, its parent must
 * exist), and a path that exists but is no folder is refused (`out_not_folder`, exit 2) — never a key file
 * named like the folder. Without a trailing separator, a missing parent folder of the key file is created.
 * Never overwrites: when either file exists nothing is written (`output_exists`, exit 2). Both files are
 * created with `O_EXCL` and never through a symbolic link (src/safe-write.ts).
 */
import { closeSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError } from '../../errors.js';
import { checkOutputPath, makeOutputFolder, openExclusiveNoFollow } from '../../safe-write.js';
import { generateRunnerKey } from '../../receipts/signing.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { shownPath } from './retrieve.js';

/**
 * The two files of `--out` (see the module comment), and the folder to create first (null: none).
 * `out` is the path as given: its trailing `/` or `\` (a folder) must be seen before `resolve` drops it.
 * @throws LoretraceError `out_not_folder` (exit 2) when `out` ends in a separator but names a file.
 */
export function keygenPaths(out: string, cwd = process.cwd()): { privatePath: string; publicPath: string; createDir: string | null } {
  const wantsDir = /[\\/]$/.test(out);
  const abs = resolve(cwd, out);
  let kind: 'dir' | 'other' | 'missing' = 'missing';
  try {
    kind = statSync(abs).isDirectory() ? 'dir' : 'other';
  } catch {
    kind = 'missing';
  }
  if (wantsDir && kind === 'other') {
    throw new LoretraceError('out_not_folder', `--out ${out} ends in a path separator, so it names a folder, but ${out} exists and is not a folder (nothing written)`, { file: out, expected: 'a folder, or a path that does not exist yet' }, 2);
  }
  if (kind === 'dir' || wantsDir) return { privatePath: join(abs, 'runner.key.pem'), publicPath: join(abs, 'runner.pub.pem'), createDir: kind === 'missing' ? abs : null };
  out = abs;
  const name = basename(out);
  const stem = name.replace(/\.key\.pem$/i, '').replace(/\.pem$/i, '');
  return { privatePath: out, publicPath: join(dirname(out), `${stem}.pub.pem`), createDir: null };
}

/** Write `text` to a new file with `mode`; the error names the file. */
function writeNew(abs: string, shown: string, text: string, mode: number): void {
  let fd: number;
  try {
    fd = openExclusiveNoFollow(abs, mode);
  } catch (e) {
    if (e instanceof LoretraceError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new LoretraceError('output_exists', `${shown} already exists; loretrace keygen never overwrites a key — choose another --out (nothing written)`, { file: shown, expected: 'a path that does not exist yet' }, 2);
    }
    throw new LoretraceError('write_failed', `cannot create ${shown}: ${(e as Error).message}`, { file: shown }, 1);
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Register `loretrace keygen` on the program. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('keygen')
    .description("make a runner signing key: an Ed25519 private key (PEM, mode 0600) and its public key; serve/retrieve --signing-key sign ledgers with it, --trust-key checks them")
    .requiredOption('--out <dir-or-file>', 'a folder (runner.key.pem, runner.pub.pem; a trailing / creates a missing one, mode 0700) or the private key file (x.key.pem → x.pub.pem beside it)')
    .option('--json', 'print { key_id, private_key, public_key, alg } as JSON')
    .action(
      action(ctx, async (opts: { out: string; json?: boolean }) => {
        const { privatePath, publicPath, createDir } = keygenPaths(opts.out, ctx.cwd);
        const shownPrivate = shownPath(ctx, privatePath);
        const shownPublic = shownPath(ctx, publicPath);
        for (const [abs, shown] of [[privatePath, shownPrivate], [publicPath, shownPublic]] as const) {
          let exists = true;
          try { statSync(abs); } catch { exists = false; }
          if (exists) throw new LoretraceError('output_exists', `${shown} already exists; loretrace keygen never overwrites a key — choose another --out (nothing written)`, { file: shown, expected: 'a path that does not exist yet' }, 2);
        }
        // Every refusal comes before the key is made (nothing written): a folder that cannot be made, or
        // one that takes no new entry, is output_unwritable (exit 2), as for every other output.
        if (createDir !== null) {
          const shownDir = shownPath(ctx, createDir);
          if (!statSync(dirname(createDir), { throwIfNoEntry: false })?.isDirectory()) {
            throw new LoretraceError('output_unwritable', `--out ${opts.out}: cannot create ${shownDir}: its parent ${shownPath(ctx, dirname(createDir))} is not an existing folder (a trailing / creates one folder, not its parents); expected an output path whose folder exists or can be created (nothing written)`, { file: shownDir, expected: 'a folder whose parent exists' }, 2);
          }
          checkOutputPath(privatePath, `--out ${opts.out}`);
          makeOutputFolder(createDir, `--out ${opts.out}`, 0o700);
        } else {
          checkOutputPath(privatePath, `--out ${opts.out}`);
          makeOutputFolder(dirname(privatePath), `--out ${opts.out}`);
        }
        const key = generateRunnerKey();
        writeNew(privatePath, shownPrivate, key.private_pem, 0o600);
        writeNew(publicPath, shownPublic, key.public_pem, 0o644);
        if (opts.json) printJson(ctx, { alg: 'ed25519', key_id: key.key_id, private_key: shownPrivate, public_key: shownPublic });
        else ctx.stdout(`key ${key.key_id} (ed25519)\n  private key ${shownPrivate} (mode 0600: keep it with the runner; --signing-key)\n  public key  ${shownPublic} (hand it to reviewers; --trust-key)\n`);
        return 0;
      }),
    );
}

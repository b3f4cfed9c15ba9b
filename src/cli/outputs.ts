/**
 * What the CLI commands share for their files: {@link readInputBytes} (an input's exact bytes, for the lock)
 * and {@link expandInputs} (files and folders named on the command line). How outputs are written — refused
 * when they exist or are locked, all or none, with a lock beside them — is src/receipts/outputs.ts,
 * re-exported here for the commands.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CliContext } from './context.js';
import type { LockedTrace } from '../receipts/lock.js';
import type { VerifyTraceOptions } from '../receipts/verify-trace.js';
import { readInputFile } from './vault-options.js';

export { documentText, guardOutputs, lockTarget, writeAllAtomic } from '../receipts/outputs.js';
export type { OutputTarget } from '../receipts/outputs.js';

/**
 * Read an input file's exact bytes (for hashing into a lock) with the checks every input gets
 * ({@link readInputFile}: a regular file of at most the input cap — `inputCap`: 8 MiB,
 * `LORETRACE_MAX_INPUT_BYTES` — checked before reading; `maxBytes` overrides it, as ledgers do with
 * `MAX_LEDGER_BYTES`). Returns the absolute path and the bytes.
 * @throws LoretraceError `file_not_found` (exit 2) — `cannot read <file>: no such file` (or the reason);
 *   `input_too_large` (exit 2).
 */
export async function readInputBytes(ctx: CliContext, file: string, what: string, maxBytes?: number): Promise<{ abs: string; bytes: Buffer }> {
  return { abs: resolve(ctx.cwd, file), bytes: await readInputFile(ctx, file, what, ...(maxBytes !== undefined ? [maxBytes] : [])) };
}

/**
 * Re-hash the packet file a lock lists for a trace (`lockedTrace(...).packet`, seed 002: a locked file is
 * checked by its hash) into `verifyTrace`'s `packetFile` option: the sha256 of its bytes now, or null when it
 * cannot be read — missing, not a regular file (a FIFO is refused on the open handle, never read), over the
 * input cap — which `verifyTrace` reports as `packet_missing`. `lockFile` names the lock in the report.
 */
export async function lockedPacketFile(ctx: CliContext, packet: NonNullable<LockedTrace['packet']>, lockFile: string): Promise<NonNullable<VerifyTraceOptions['packetFile']>> {
  const now = await readInputFile(ctx, packet.file, 'locked packet (JSON)').then((b) => createHash('sha256').update(b).digest('hex'), () => null);
  return { file: packet.file, locked_sha256: packet.sha256, sha256: now, source: `lock ${lockFile}` };
}

/**
 * Files named by the arguments: files as given, folders walked (dot-entries skipped, names sorted) for files
 * ending in `suffix` (`.capture.json`, `.lock.json`) — a FIFO, socket or device so named too, which the
 * command's reader then reports as not a regular file; a file reached twice is listed once, where first reached.
 */
export async function expandInputs(ctx: CliContext, args: readonly string[], suffix: string): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (shown: string) => {
    const abs = resolve(ctx.cwd, shown);
    if (!seen.has(abs)) {
      seen.add(abs);
      out.push(shown);
    }
  };
  const walk = async (dir: string, shown: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) await walk(join(dir, e.name), `${shown}/${e.name}`);
      // A FIFO, socket or device named like an input is listed too, so the command's checked reader reports
      // it (`not a regular file`, opened without blocking) instead of it vanishing from the report.
      else if ((e.isFile() || (!e.isSymbolicLink() && !e.isDirectory())) && e.name.endsWith(suffix)) add(`${shown}/${e.name}`);
    }
  };
  for (const a of args) {
    let isDir = false;
    try {
      isDir = (await stat(resolve(ctx.cwd, a))).isDirectory();
    } catch {
      isDir = false;
    }
    if (isDir) await walk(resolve(ctx.cwd, a), a.replace(/\/+$/, ''));
    else add(a);
  }
  return out;
}

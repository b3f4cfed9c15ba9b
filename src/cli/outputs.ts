/**
 * What the CLI commands share for their files: {@link readInputBytes} (an input's exact bytes, for the lock)
 * and {@link expandInputs} (files and folders named on the command line). How outputs are written — refused
 * when they exist or are locked, all or none, with a lock beside them — is src/receipts/outputs.ts,
 * re-exported here for the commands.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LoretraceError } from '../errors.js';
import type { CliContext } from './context.js';
import { inputCap } from './vault-options.js';

export { documentText, guardOutputs, lockTarget, writeAllAtomic } from '../receipts/outputs.js';
export type { OutputTarget } from '../receipts/outputs.js';

/**
 * Read an input file's exact bytes (for hashing into a lock) with the checks every input gets: a regular file
 * of at most the input cap (`inputCap`: 8 MiB, `LORETRACE_MAX_INPUT_BYTES`), checked from `stat` before reading
 * (`input_too_large`, exit 2). Returns the absolute path and the bytes.
 * @throws LoretraceError `file_not_found` (exit 2) — `cannot read <file>: no such file` (or the reason).
 */
export async function readInputBytes(ctx: CliContext, file: string, what: string): Promise<{ abs: string; bytes: Buffer }> {
  const abs = resolve(ctx.cwd, file);
  const refuse = (why: string) => new LoretraceError('file_not_found', `cannot read ${file}: ${why}`, { file, expected: `a readable ${what} file` }, 2);
  const reason = (e: unknown): string => {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
  };
  let st;
  try {
    st = await stat(abs);
  } catch (e) {
    throw refuse(reason(e));
  }
  if (st.isDirectory()) throw refuse('is a directory');
  if (!st.isFile()) throw refuse('not a regular file');
  const cap = inputCap(ctx);
  if (st.size > cap) {
    throw new LoretraceError('input_too_large', `${file} is ${st.size} bytes, over the ${cap}-byte input limit; not read (set LORETRACE_MAX_INPUT_BYTES to raise it)`, { file, expected: `a file of at most ${cap} bytes` }, 2);
  }
  try {
    return { abs, bytes: await readFile(abs) };
  } catch (e) {
    throw refuse(reason(e));
  }
}

/**
 * Files named by the arguments: files as given, folders walked (dot-entries skipped, names sorted) for files
 * ending in `suffix` (`.capture.json`, `.lock.json`); a file reached twice is listed once, where first reached.
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
      else if (e.isFile() && e.name.endsWith(suffix)) add(`${shown}/${e.name}`);
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

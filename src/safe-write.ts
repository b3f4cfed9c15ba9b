/**
 * The one way loretrace writes an output file: never through a symbolic link. Every writer — `ledger
 * export --out`, `coverage --out`, `serve --ledger`, `retrieve --out` / `--capture-out` — goes through
 * {@link assertNoSymlinkOnPath} and {@link writeFileNoFollow} / {@link openExclusiveNoFollow}.
 *
 * Why: an output path is often predictable (`out/coverage.json`, `session.jsonl`). Whoever can plant a
 * symlink there — or swap a folder on the way for one — could make loretrace overwrite any file the user
 * can write (`~/.bashrc`, the vault itself), or put the runner's ledger where the responder can edit it.
 *
 * What is checked: the target itself and every existing folder on its absolute path (`lstat` of each
 * component, from the root down): none may be a symlink. Components that do not exist yet are created as
 * real folders. The final write uses `O_CREAT | O_EXCL` on a fresh temp name (a planted link of that name
 * makes the open fail) and `rename`, which replaces a directory entry and never follows a link.
 * Missing folders are made one level at a time ({@link makeOutputFolder}), never with `mkdir -p`'s recursive mode:
 * Node's recursive `mkdir` under a file system that answers ENOENT for a folder it will not create (`/proc`)
 * retries for ever, so `--out /proc/nope/x.json` used to hang. A folder that cannot be made is
 * `output_unwritable` (exit 2) naming the output, the folder and why; {@link checkOutputPath} finds that before
 * a command builds anything.
 * What is not covered: a folder swapped for a symlink between the check and the write by a process racing
 * loretrace (the window is a few system calls), and symlinks on the path to the system's temp or home
 * folders on platforms that have them (macOS `/tmp` → `/private/tmp`): give the real path there.
 */
import fs from 'node:fs';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';
import { LoretraceError } from './errors.js';

/** The `output_symlink` error (exit 2). */
function symlinkRefusal(file: string, component: string): LoretraceError {
  const what = component === resolve(file) ? `${file} is a symbolic link` : `${component} (on the path of ${file}) is a symbolic link`;
  return new LoretraceError('output_symlink', `cannot write ${file}: ${what}; loretrace never writes through a symbolic link — give the real path (nothing written)`, { file, expected: 'an output path with no symbolic link on it' }, 2);
}

/**
 * Refuse an output path that is a symlink or lies under a symlinked folder (module comment).
 * Synchronous (a few `lstat` calls), so the ledger's synchronous create can use it.
 *
 * @param file the output path as the user gave it (absolute, or relative to the process cwd).
 * @throws LoretraceError `output_symlink` (exit 2) naming the first symlinked component.
 */
export function assertNoSymlinkOnPath(file: string): void {
  const abs = resolve(file);
  const root = parse(abs).root;
  const parts = abs.slice(root.length).split(sep).filter((p) => p !== '');
  let current = root;
  for (const part of parts) {
    current = current === root ? root + part : current + sep + part;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(current);
    } catch {
      return; // this component and everything below it do not exist yet
    }
    if (st.isSymbolicLink()) throw symlinkRefusal(file, current);
  }
}

/** Why a system call on an output folder failed, in words, from its errno code. */
function folderReason(e: unknown, parent: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${parent} does not take new entries (ENOENT)`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied in ${parent} (${code})`;
  if (code === 'EROFS') return `${parent} is on a read-only file system (EROFS)`;
  if (code === 'ENOSPC') return `no space left on the device of ${parent} (ENOSPC)`;
  return (e as Error).message;
}

/** The `output_unwritable` error (exit 2): `what` is the option and path as the command names them. */
function unwritable(what: string, folder: string, reason: string): LoretraceError {
  return new LoretraceError('output_unwritable', `${what}: cannot create ${folder}: ${reason}; expected an output path whose folder exists or can be created (nothing written)`, { file: folder, expected: 'a writable folder for the output' }, 2);
}

/**
 * The nearest part of `dir`'s absolute path that exists (`dir` itself when it does), and the parts below it
 * that do not, top first. A part that exists and is not a folder (followed through links: the symlink check
 * is {@link assertNoSymlinkOnPath}) is returned as `blocked`.
 */
function existingAncestor(dir: string): { existing: string; missing: string[]; blocked: boolean } {
  const missing: string[] = [];
  let current = resolve(dir);
  for (;;) {
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(current);
    } catch {
      st = null;
    }
    if (st !== null) return { existing: current, missing, blocked: !st.isDirectory() };
    const up = dirname(current);
    if (up === current) return { existing: current, missing, blocked: false };
    missing.unshift(current);
    current = up;
  }
}

/**
 * Make the folder `dir` and the missing folders above it, one `mkdir` per level (never the recursive mode:
 * module comment), with `mode` (default 0777 before the umask).
 *
 * @param dir the folder to make (absolute, or relative to the process cwd).
 * @param what how the command names the output (`--out /proc/nope/x.json`), for the message.
 * @throws LoretraceError `output_unwritable` (exit 2) naming the first folder that cannot be made and why,
 *   or the file that stands where a folder goes.
 */
export function makeOutputFolder(dir: string, what: string, mode = 0o777): void {
  const { existing, missing, blocked } = existingAncestor(dir);
  if (blocked) throw unwritable(what, resolve(dir), `${existing} is not a folder`);
  for (const folder of missing) {
    try {
      fs.mkdirSync(folder, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory() === true) continue;
      throw unwritable(what, folder, folderReason(e, dirname(folder)));
    }
  }
}

/**
 * Check, before a command reads or builds anything, that `file` can be written: no symlink on its path
 * ({@link assertNoSymlinkOnPath}), no file where one of its folders goes, and the nearest existing folder
 * takes a new entry — tried for real, since permission bits do not tell (root, `/proc`): the first missing
 * folder is made and removed again, or, when the folder exists, a fresh `<file>.<pid>.probe` is created
 * (O_EXCL) and removed. Nothing is left behind.
 *
 * @param file the output file (absolute, or relative to the process cwd).
 * @param what how the command names it (`--out /proc/nope/x.json`).
 * @throws LoretraceError `output_symlink` (exit 2); `output_unwritable` (exit 2) naming the folder and why.
 */
export function checkOutputPath(file: string, what: string): void {
  const abs = resolve(file);
  assertNoSymlinkOnPath(abs);
  const { existing, missing, blocked } = existingAncestor(dirname(abs));
  if (blocked) throw unwritable(what, dirname(abs), `${existing} is not a folder`);
  const first = missing[0];
  if (first !== undefined) {
    try {
      fs.mkdirSync(first);
    } catch (e) {
      throw unwritable(what, first, folderReason(e, existing));
    }
    fs.rmdirSync(first);
    return;
  }
  const probe = join(existing, `.${basename(abs)}.${process.pid}.probe`);
  let fd: number;
  try {
    fd = fs.openSync(probe, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return; // a probe of a concurrent run: the folder takes entries
    throw new LoretraceError('output_unwritable', `${what}: cannot write in ${existing}: ${folderReason(e, existing)}; expected an output path whose folder exists or can be created (nothing written)`, { file: existing, expected: 'a writable folder for the output' }, 2);
  }
  fs.closeSync(fd);
  fs.rmSync(probe, { force: true });
}

/**
 * Write `text` (UTF-8) to `file`, replacing a regular file there, never through a symlink: check the path,
 * create missing folders, write a temp file next to the target with `O_CREAT | O_EXCL`, re-check, rename.
 *
 * @throws LoretraceError `output_symlink` (exit 2); `output_unwritable` (exit 2) when a missing folder cannot
 *   be made ({@link makeOutputFolder}); `write_failed` (exit 1) naming the file for an I/O error (the temp file
 *   is removed).
 */
export async function writeFileNoFollow(file: string, text: string): Promise<void> {
  const abs = resolve(file);
  assertNoSymlinkOnPath(abs);
  const tmp = `${abs}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    makeOutputFolder(dirname(abs), `cannot write ${file}`);
    assertNoSymlinkOnPath(abs);
    await fs.promises.writeFile(tmp, text, { encoding: 'utf8', flag: 'wx' });
    assertNoSymlinkOnPath(abs);
    await fs.promises.rename(tmp, abs);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    if (e instanceof LoretraceError) throw e;
    throw new LoretraceError('write_failed', `cannot write ${file}: ${(e as Error).message} (nothing written)`, { file }, 1);
  }
}

/**
 * Create a new file exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, `mode`, default 0644; a private key is
 * 0600) after checking its path, and return its descriptor. For outputs that must never replace anything
 * (the proxy ledger, `keygen`'s keys).
 *
 * @throws LoretraceError `output_symlink` (exit 2); the system error of `open` otherwise (`EEXIST` …), for
 *   the caller to word.
 */
export function openExclusiveNoFollow(file: string, mode = 0o644): number {
  assertNoSymlinkOnPath(file);
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);
  return fs.openSync(file, flags, mode);
}

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
 * What is not covered: a folder swapped for a symlink between the check and the write by a process racing
 * loretrace (the window is a few system calls), and symlinks on the path to the system's temp or home
 * folders on platforms that have them (macOS `/tmp` → `/private/tmp`): give the real path there.
 */
import fs from 'node:fs';
import { dirname, parse, resolve, sep } from 'node:path';
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

/**
 * Write `text` (UTF-8) to `file`, replacing a regular file there, never through a symlink: check the path,
 * create missing folders, write a temp file next to the target with `O_CREAT | O_EXCL`, re-check, rename.
 *
 * @throws LoretraceError `output_symlink` (exit 2); `write_failed` (exit 1) naming the file for an I/O error
 *   (the temp file is removed).
 */
export async function writeFileNoFollow(file: string, text: string): Promise<void> {
  const abs = resolve(file);
  assertNoSymlinkOnPath(abs);
  const tmp = `${abs}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    await fs.promises.mkdir(dirname(abs), { recursive: true });
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

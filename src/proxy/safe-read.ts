/**
 * The proxy's only way to read lore bytes: by an **indexed** path, with the file re-checked to still be
 * the one the index saw (docs/PROXY.md: it re-checks before reading that the file is still the indexed one).
 *
 * The path is looked up in the index manifest; the request text is never turned into a file-system path
 * (a ref is first parsed and resolved through the index by src/refs; a file stored on disk under another
 * Unicode normalisation is found by comparing NFC names). Then, before any byte is returned:
 *
 * 1. `realpath` of the note's folder must lie inside `realpath(index.root)` (no folder swapped for a link);
 * 2. `lstat` of the file: a regular file (not a symlink, FIFO, socket or device), one hard link only
 *    (`nlink === 1`: a hard link can carry bytes of a file outside the vault);
 * 3. open with `O_RDONLY | O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in between never blocks the server),
 *    `fstat` of the open descriptor must be the same inode as step 2 and a regular file;
 * 4. the bytes' SHA-256 must equal the manifest's (same content as indexed).
 *
 * Failures throw {@link LoretraceError} with the true reason as code: `not_found` (path not indexed),
 * `outside_root`, `not_regular_file`, `symlink`, `hard_link`, `stale_file`. The session shows every one
 * of them to the client as `not_found` and records the true reason in the ledger.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { join, dirname, sep } from 'node:path';
import { LoretraceError } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { splitLines } from '../notes/lines.js';
import { onDiskPath } from '../vault/disk-path.js';

/** Lines of a note read by {@link readIndexedLines}. */
export interface IndexedLines {
  /** Lines of the file (src/notes/lines.ts conventions). */
  lines: string[];
  /** SHA-256 (hex) of the bytes read (equal to the manifest's). */
  sha256: string;
  /** Bytes read. */
  size: number;
}

const realRoots = new Map<string, string>();
/**
 * Read an indexed note's lines after re-checking the file (see the module comment for the four checks).
 *
 * @param index the session's index (built at session start; never rebuilt from request text).
 * @param path  a vault path that must be a key of `index.manifest` (exact, NFC).
 * @throws LoretraceError `not_found`, `outside_root`, `not_regular_file`, `symlink`, `hard_link`, `stale_file`.
 */
export async function readIndexedLines(index: VaultIndex, path: string): Promise<IndexedLines> {
  const entry = index.manifest.find((m) => m.path === path);
  if (!entry) throw new LoretraceError('not_found', `${path} is not an indexed note of vault ${index.namespace}`, { file: path });
  const abs = await onDiskPath(index.root, entry.path);

  let realRoot = realRoots.get(index.root);
  if (realRoot === undefined) {
    try {
      realRoot = await fs.promises.realpath(index.root);
    } catch {
      throw new LoretraceError('stale_file', `the vault root ${index.root} is no longer readable`, { file: path });
    }
    realRoots.set(index.root, realRoot);
  }
  let realDir: string;
  try {
    realDir = await fs.promises.realpath(dirname(abs));
  } catch {
    throw new LoretraceError('stale_file', `the folder of ${path} no longer exists`, { file: path });
  }
  if (realDir !== realRoot && !realDir.startsWith(realRoot + sep)) {
    throw new LoretraceError('outside_root', `the folder of ${path} now resolves outside the vault root`, { file: path });
  }

  let st: fs.Stats;
  try {
    st = await fs.promises.lstat(abs);
  } catch {
    throw new LoretraceError('stale_file', `${path} no longer exists`, { file: path });
  }
  if (st.isSymbolicLink()) throw new LoretraceError('symlink', `${path} is now a symbolic link; only regular files are read`, { file: path });
  if (!st.isFile()) throw new LoretraceError('not_regular_file', `${path} is not a regular file`, { file: path });
  if (st.nlink !== 1) throw new LoretraceError('hard_link', `${path} has ${st.nlink} hard links; a hard-linked file may carry bytes from outside the vault and is not read`, { file: path });

  const flags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(abs, flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new LoretraceError('symlink', `${path} became a symbolic link`, { file: path });
    throw new LoretraceError('stale_file', `${path} cannot be opened (${code ?? 'error'})`, { file: path });
  }
  let bytes: Buffer;
  try {
    const fst = await handle.stat();
    if (!fst.isFile() || fst.ino !== st.ino || fst.dev !== st.dev) {
      throw new LoretraceError('stale_file', `${path} was replaced while being opened`, { file: path });
    }
    if (fst.size !== entry.size) {
      throw new LoretraceError('stale_file', `${path} is ${fst.size} bytes, the index saw ${entry.size}: the file changed since the session started`, { file: path });
    }
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== entry.sha256) {
    throw new LoretraceError('stale_file', `${path} changed since the session started (sha256 ${sha256}, indexed ${entry.sha256})`, { file: path });
  }
  return { lines: splitLines(new TextDecoder('utf-8').decode(bytes)), sha256, size: bytes.length };
}

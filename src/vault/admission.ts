/**
 * The one file-admission rule of loretrace: which files on disk may be lore, decided from `lstat` (and,
 * when reading, `fstat` of the open descriptor) facts only. Every stage that touches note bytes uses it:
 * the scan (`scanVault`, index time: a refused note never enters the index, so search, links, traversal
 * and the proxy never see it) and the checked reader {@link readAdmittedFile} (read time: the proxy's
 * `lore_read`, `readNoteLines` for `show`, coverage and `verify-trace`).
 *
 * A file is admitted when it is a regular file (not a symlink, FIFO, socket or device) with exactly one
 * hard link. A hard link is refused because its bytes may be shared with a file outside the vault (or with
 * a hidden note): the name inside the vault says nothing about where the content lives.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, sep } from 'node:path';
import { LoretraceError } from '../errors.js';
import { onDiskPath } from './disk-path.js';

/** Why a file is not admitted ({@link fileAdmission}). */
export type FileRefusal = 'symlink' | 'not_regular_file' | 'hard_link';

/** The `lstat`/`fstat` facts the rule reads. */
export interface FileFacts {
  isSymbolicLink(): boolean;
  isFile(): boolean;
  /** Number of hard links. */
  nlink: number;
}

/**
 * The admission rule: `null` when the file may be lore, else the reason. Pure.
 * Order: symlink, then not a regular file, then more than one hard link.
 */
export function fileAdmission(st: FileFacts): FileRefusal | null {
  if (st.isSymbolicLink()) return 'symlink';
  if (!st.isFile()) return 'not_regular_file';
  if (st.nlink !== 1) return 'hard_link';
  return null;
}

/** What an index recorded about a note's file (a manifest entry). */
export interface AdmittedEntry {
  /** Vault path (NFC). */
  path: string;
  /** Bytes at index time. */
  size: number;
  /** SHA-256 (hex) at index time. */
  sha256: string;
  /**
   * The file's vault-relative name on disk, when the index recorded it (`notePathOnDisk`,
   * src/indexer/lookup.ts); without it the file is found by {@link onDiskPath}'s NFC match.
   */
  disk_path?: string;
}

/** Bytes of a note read by {@link readAdmittedFile}. */
export interface AdmittedBytes {
  bytes: Buffer;
  /** SHA-256 (hex) of `bytes` (equal to the entry's). */
  sha256: string;
}

const realRoots = new Map<string, string>();

/** Real path of a vault root (cached per root). */
async function realRootOf(root: string, path: string): Promise<string> {
  let real = realRoots.get(root);
  if (real === undefined) {
    try {
      real = await fs.promises.realpath(root);
    } catch {
      throw new LoretraceError('stale_file', `the vault root ${root} is no longer readable`, { file: path });
    }
    realRoots.set(root, real);
  }
  return real;
}

/**
 * Read an indexed note's bytes after re-checking that the file is still the one the index admitted:
 *
 * 1. `realpath(3)` of the note's folder lies inside `realpath(root)` (no folder swapped for a link);
 * 2. `lstat` of the file passes {@link fileAdmission};
 * 3. it is opened `O_RDONLY | O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in never blocks) and `fstat` of the
 *    descriptor is the same inode and passes {@link fileAdmission} again;
 * 4. size and SHA-256 equal the entry's.
 *
 * The checks and the read are synchronous system calls once the on-disk path is known: a note is a small
 * file, normally in the page cache, and each step is a few microseconds on the calling thread, whereas an
 * asynchronous step is a round trip through libuv's thread pool (scheduled behind every other pending fs
 * call, and behind the CPU on a loaded machine). A proxy `lore_read` is six such steps; doing them in one
 * go is what lets it keep up with a plain file server while checking more (docs/PERFORMANCE.md). The
 * O_NONBLOCK open and the regular-file check before any read keep a swapped-in FIFO or device from ever
 * blocking the thread.
 *
 * @param root  the vault root the index was built from.
 * @param entry the index's manifest entry of the note (never a path taken from request text).
 * @throws LoretraceError with the true reason as code: `outside_root`, `not_regular_file`, `symlink`,
 *   `hard_link`, `stale_file` (vanished, replaced, resized or changed since indexing).
 */
export async function readAdmittedFile(root: string, entry: AdmittedEntry): Promise<AdmittedBytes> {
  const path = entry.path;
  const abs = entry.disk_path !== undefined && entry.disk_path !== path ? join(root, ...entry.disk_path.split('/')) : await onDiskPath(root, path);
  const realRoot = await realRootOf(root, path);
  let realDir: string;
  try {
    // realpath(3) in one call; `fs.realpathSync` walks the components with an lstat each in JavaScript.
    realDir = fs.realpathSync.native(dirname(abs));
  } catch {
    throw new LoretraceError('stale_file', `the folder of ${path} no longer exists`, { file: path });
  }
  if (realDir !== realRoot && !realDir.startsWith(realRoot + sep)) {
    throw new LoretraceError('outside_root', `the folder of ${path} now resolves outside the vault root`, { file: path });
  }
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch {
    throw new LoretraceError('stale_file', `${path} no longer exists`, { file: path });
  }
  refuseUnadmitted(fileAdmission(st), path, st.nlink);

  const flags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(abs, flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new LoretraceError('symlink', `${path} became a symbolic link`, { file: path });
    throw new LoretraceError('stale_file', `${path} cannot be opened (${code ?? 'error'})`, { file: path });
  }
  let bytes: Buffer;
  try {
    const fst = fs.fstatSync(fd);
    if (fst.ino !== st.ino || fst.dev !== st.dev) {
      throw new LoretraceError('stale_file', `${path} was replaced while being opened`, { file: path });
    }
    refuseUnadmitted(fileAdmission(fst), path, fst.nlink);
    if (fst.size !== entry.size) {
      throw new LoretraceError('stale_file', `${path} changed since it was indexed (${fst.size} bytes, the index saw ${entry.size})`, { file: path });
    }
    bytes = readExactly(fd, entry.size, path);
  } finally {
    fs.closeSync(fd);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== entry.sha256) {
    throw new LoretraceError('stale_file', `${path} changed since it was indexed (sha256 ${sha256.slice(0, 12)}…, indexed ${entry.sha256.slice(0, 12)}…)`, { file: path, expected: `sha256 ${entry.sha256}` });
  }
  return { bytes, sha256 };
}

/**
 * Read `size` bytes from the start of `fd`, plus one probe byte: a file that grew after its `fstat` is
 * stale (its bytes are not the indexed ones), as is one that ends early.
 * @throws LoretraceError `stale_file`
 */
function readExactly(fd: number, size: number, path: string): Buffer {
  const buf = Buffer.allocUnsafe(size + 1);
  let off = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, off, buf.length - off, off);
    if (n === 0) break;
    off += n;
    if (off > size) throw new LoretraceError('stale_file', `${path} grew while being read (more than the ${size} bytes indexed)`, { file: path });
  }
  if (off !== size) throw new LoretraceError('stale_file', `${path} shrank while being read (${off} of the ${size} bytes indexed)`, { file: path });
  return buf.subarray(0, size);
}

/** Throw the coded error of a refusal from {@link fileAdmission}. */
function refuseUnadmitted(refusal: FileRefusal | null, path: string, nlink: number): void {
  if (refusal === 'symlink') throw new LoretraceError('symlink', `${path} is now a symbolic link; only regular files are read`, { file: path });
  if (refusal === 'not_regular_file') throw new LoretraceError('not_regular_file', `${path} is not a regular file`, { file: path });
  if (refusal === 'hard_link') throw new LoretraceError('hard_link', `${path} has ${nlink} hard links; a hard-linked file may carry bytes from outside the vault and is not read`, { file: path });
}

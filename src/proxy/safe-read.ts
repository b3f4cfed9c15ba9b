/**
 * The proxy's only way to read lore bytes: by an **indexed** path, with the file re-checked to still be
 * the one the index saw (docs/PROXY.md: it re-checks before reading that the file is still the indexed one).
 *
 * The path is looked up in the index manifest; the request text is never turned into a file-system path
 * (a ref is first parsed and resolved through the index by src/refs; a file stored on disk under another
 * Unicode normalisation is opened under the name the scan listed, `notePathOnDisk` in src/indexer/lookup.ts). Then, before any byte is returned, `readAdmittedFile` (src/vault/admission.ts — the same admission rule the
 * scan applied at index time) checks:
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
import { LoretraceError } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { splitLines } from '../notes/lines.js';
import { readAdmittedFile } from '../vault/admission.js';
import { manifestEntry, notePathOnDisk } from '../indexer/lookup.js';

/** Lines of a note read by {@link readIndexedLines}. */
export interface IndexedLines {
  /** Lines of the file (src/notes/lines.ts conventions). */
  lines: string[];
  /** SHA-256 (hex) of the bytes read (equal to the manifest's). */
  sha256: string;
  /** Bytes read. */
  size: number;
}

/**
 * Read an indexed note's lines after re-checking the file (see the module comment for the four checks).
 *
 * @param index the session's index (built at session start; never rebuilt from request text).
 * @param path  a vault path that must be a key of `index.manifest` (exact, NFC).
 * @throws LoretraceError `not_found`, `outside_root`, `not_regular_file`, `symlink`, `hard_link`, `stale_file`.
 */
export async function readIndexedLines(index: VaultIndex, path: string): Promise<IndexedLines> {
  // By the index's path map (src/indexer/lookup.ts), not a scan of the manifest: one lookup at any vault size.
  const entry = manifestEntry(index, path);
  if (!entry) throw new LoretraceError('not_found', `${path} is not an indexed note of vault ${index.namespace}`, { file: path });
  const { bytes, sha256 } = await readAdmittedFile(index.root, { ...entry, disk_path: notePathOnDisk(index, entry.path) });
  return { lines: splitLines(new TextDecoder('utf-8').decode(bytes)), sha256, size: bytes.length };
}

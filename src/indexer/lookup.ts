/**
 * Lookups over a {@link VaultIndex}: notes, chunks, outgoing links and backlinks by path, and the exact
 * lines of a note. Maps are built once per index object (cached in a WeakMap) — O(1) per call after that.
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, LinkRecord, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { splitLines } from '../notes/lines.js';
import { readAdmittedFile } from '../vault/admission.js';

interface Maps {
  notes: Map<string, NoteRecord>;
  chunks: Map<string, Chunk[]>;
  outgoing: Map<string, LinkRecord[]>;
  incoming: Map<string, LinkRecord[]>;
  sha: Map<string, string>;
  size: Map<string, number>;
}

const cache = new WeakMap<VaultIndex, Maps>();

function maps(index: VaultIndex): Maps {
  let m = cache.get(index);
  if (m) return m;
  m = { notes: new Map(), chunks: new Map(), outgoing: new Map(), incoming: new Map(), sha: new Map(), size: new Map() };
  for (const n of index.notes) m.notes.set(n.path, n);
  for (const c of index.chunks) push(m.chunks, c.path, c);
  for (const l of index.links) {
    push(m.outgoing, l.source_path, l);
    const r = l.resolution;
    if (r.status === 'resolved' || r.status === 'ambiguous' || r.status === 'broken_fragment') push(m.incoming, r.path, l);
  }
  for (const f of index.manifest) {
    m.sha.set(f.path, f.sha256);
    m.size.set(f.path, f.size);
  }
  cache.set(index, m);
  return m;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const arr = map.get(key);
  if (arr) arr.push(value);
  else map.set(key, [value]);
}

/** The note at `path`, or undefined. */
export function getNote(index: VaultIndex, path: VaultPath): NoteRecord | undefined {
  return maps(index).notes.get(path);
}

/** Chunks of the note at `path` in chunk_index order (empty when none or no such note). */
export function chunksOf(index: VaultIndex, path: VaultPath): readonly Chunk[] {
  return maps(index).chunks.get(path) ?? [];
}

/** Links standing in the note at `path`, in (line, column) order. */
export function outgoingLinks(index: VaultIndex, path: VaultPath): readonly LinkRecord[] {
  return maps(index).outgoing.get(path) ?? [];
}

/**
 * Backlinks: links from any note whose resolution points at `path` (status `resolved`, `ambiguous`
 * with `path` as the chosen target, or `broken_fragment`), in (source_path, line, column) order.
 */
export function backlinks(index: VaultIndex, path: VaultPath): readonly LinkRecord[] {
  return maps(index).incoming.get(path) ?? [];
}

const diskNames = new WeakMap<VaultIndex, ReadonlyMap<string, string>>();

/**
 * What the index's manifest recorded about the file of `path` (`{ path, size, sha256 }`, bytes and hex), or
 * undefined when `path` is not an indexed file. O(1): the manifest is mapped once per index object.
 */
export function manifestEntry(index: VaultIndex, path: string): { path: string; size: number; sha256: string } | undefined {
  const m = maps(index);
  const sha256 = m.sha.get(path);
  return sha256 === undefined ? undefined : { path, size: m.size.get(path) ?? -1, sha256 };
}

/**
 * Record, for an index `indexVault` built, the vault-relative on-disk names of the notes whose name on
 * disk is not their NFC index path (a file stored under an NFD name, as macOS tools write): what
 * {@link notePathOnDisk} answers. Called once per index by the indexer.
 */
export function recordDiskNames(index: VaultIndex, names: ReadonlyMap<string, string>): void {
  if (names.size > 0) diskNames.set(index, names);
}

/**
 * The note's path as its file is named on disk, vault-relative POSIX: `join(index.root, result)` opens it.
 * Equal to `path` (NFC) except for a note stored under another Unicode normalisation
 * (`Cafe\u0301 Ysolde.md` on disk, `Café Ysolde.md` in refs). Index paths and refs stay NFC for matching;
 * this is the path loretrace writes as `source_path` (research_trace entries, coverage gaps, `links`)
 * and opens (`readNoteLines`, the proxy's reader, verify-trace, coverage staleness) — one lookup for both.
 * The name is the one the scan listed when the index was built; an index not built by `indexVault`
 * answers `path`. Never throws.
 */
export function notePathOnDisk(index: VaultIndex, path: VaultPath): string {
  return diskNames.get(index)?.get(path) ?? path;
}

/**
 * The lines of a note as on disk now (split at CRLF, CR or LF; BOM removed; see src/types.ts), opened under
 * {@link notePathOnDisk} and read by the
 * checked reader `readAdmittedFile` (src/vault/admission.ts: the scan's admission rule applied again — a
 * regular file with one hard link, inside the root — and the sha256 recorded in the index).
 *
 * @throws LoretraceError `not_found` — `path` is not a note of the index;
 *   `stale_file` — the file changed (or vanished) since the index was built; re-run `loretrace index`;
 *   `symlink`, `hard_link`, `not_regular_file`, `outside_root` — the file is no longer admissible.
 */
export async function readNoteLines(index: VaultIndex, path: VaultPath): Promise<string[]> {
  const sha = maps(index).sha.get(path);
  if (sha === undefined) {
    throw new LoretraceError('not_found', `${index.namespace}:${path} is not a note of the index`, { file: path, expected: 'a vault-relative path of an indexed note' });
  }
  const size = maps(index).size.get(path) ?? -1;
  const { bytes } = await readAdmittedFile(index.root, { path, size, sha256: sha, disk_path: notePathOnDisk(index, path) });
  const text = new TextDecoder('utf-8').decode(bytes);
  return splitLines(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
}

/**
 * Lookups over a {@link VaultIndex}: notes, chunks, outgoing links and backlinks by path, and the exact
 * lines of a note. Maps are built once per index object (cached in a WeakMap) — O(1) per call after that.
 */
import { LoretraceError, type Finding } from '../errors.js';
import type { Chunk, LinkRecord, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { splitLines } from '../notes/lines.js';
import { readAdmittedFile } from '../vault/admission.js';
import { onDiskPath } from '../vault/disk-path.js';
import { readLineRange } from '../vault/line-range.js';

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

/** Link resolution's finding codes (src/links/resolve.ts `linkFindings`). */
const LINK_FINDING_CODES: ReadonlySet<string> = new Set(['unresolved_link', 'broken_fragment', 'ambiguous_link']);

const fileFindingsOf = new WeakMap<VaultIndex, () => readonly Finding[]>();

/** Record, for an index `indexVault` loaded lazily, how to read its findings without resolving links. Called once per index by the indexer. */
export function recordFileFindings(index: VaultIndex, read: () => readonly Finding[]): void {
  fileFindingsOf.set(index, read);
}

/**
 * `index.findings` less link resolution's (`unresolved_link`, `broken_fragment`, `ambiguous_link`), in
 * the same order: the scan's, the notes' parse and the store's findings. On an index `indexVault` loaded
 * lazily this does not resolve the vault's links, so a reader that wants frontmatter, text or store
 * findings (policy compile, the proxy, every CLI command) does not pay for one message per link — at
 * 1,000 copies of a vault, minutes and gigabytes. On any other index it filters `index.findings`.
 * Never throws.
 */
export function fileFindings(index: VaultIndex): readonly Finding[] {
  const read = fileFindingsOf.get(index);
  return read ? read() : index.findings.filter((f) => !LINK_FINDING_CODES.has(f.code));
}

/** The indexer's finding codes for a note it lists without text (src/notes/parse.ts: a NUL byte, a byte that is not UTF-8). */
const TEXTLESS_CODES: ReadonlySet<string> = new Set(['binary_file', 'not_utf8']);

const textless = new WeakMap<VaultIndex, ReadonlyMap<string, Finding>>();

/**
 * The index-stage finding (`binary_file` or `not_utf8`) of a note the indexer listed with no text — no
 * lines, chunks or links (src/notes/parse.ts) — or undefined when the note has text. O(1) after one pass
 * over the index's file findings ({@link fileFindings}) per index object. Never throws.
 */
export function textlessNoteFinding(index: VaultIndex, path: string): Finding | undefined {
  let m = textless.get(index);
  if (!m) {
    const built = new Map<string, Finding>();
    for (const f of fileFindings(index)) if (f.path !== undefined && TEXTLESS_CODES.has(f.code) && !built.has(f.path)) built.set(f.path, f);
    textless.set(index, built);
    m = built;
  }
  return m.get(path);
}

/**
 * Refuse a note the indexer listed without text, with the indexer's own finding, so a caller that serves
 * its lines never answers an empty note (1..0) for a file that has bytes on disk.
 *
 * @param shown the ref as the user wrote it, named first in the message.
 * @throws LoretraceError `binary_file` (the file has a NUL byte) or `not_utf8` (a byte that is not UTF-8;
 *   `details.line` is its 1-based line), exit 1, with the file and what was expected (UTF-8 text).
 */
export function assertNoteHasText(index: VaultIndex, path: string, shown: string): void {
  const f = textlessNoteFinding(index, path);
  if (f === undefined) return;
  throw new LoretraceError(f.code, `ref ${shown}: ${f.message}; its lines cannot be served`, {
    file: path, ...(f.line !== undefined ? { line: f.line } : {}), expected: 'a note of UTF-8 text without NUL bytes', data: { ref: shown },
  });
}

/**
 * A note the scan left unparsed because it is over `max_file_bytes` (scan `too_large`, finding
 * `file_too_large`): known and linkable (links resolve `too_large`), but in no chunk, so not searched and
 * without chunk, heading or block refs (docs/PARSING.md "Big notes").
 */
export interface OverCapNote {
  /** Vault path (NFC). */
  path: VaultPath;
  reason: 'too_large';
  /** Size of the file at scan time, in bytes. */
  bytes: number;
}

const overCap = new WeakMap<VaultIndex, ReadonlyMap<string, number>>();

/** Record, for an index `indexVault` built, its scan's over-cap notes (path → bytes). Called once per index by the indexer. */
export function recordOverCapNotes(index: VaultIndex, notes: readonly { path: VaultPath; size: number }[]): void {
  if (notes.length > 0) overCap.set(index, new Map(notes.map((n) => [n.path, n.size])));
}

/**
 * The notes over `max_file_bytes` that the index holds no text of, sorted by path (code-unit order) —
 * what `search` skipped. Empty for an index not built by `indexVault`. Never throws.
 */
export function overCapNotes(index: VaultIndex): OverCapNote[] {
  const m = overCap.get(index);
  if (!m) return [];
  return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, bytes]) => ({ path: path as VaultPath, reason: 'too_large' as const, bytes }));
}

/** The over-cap note at `path`, or undefined when `path` is not one. O(1). */
export function overCapNote(index: VaultIndex, path: string): OverCapNote | undefined {
  const bytes = overCap.get(index)?.get(path);
  return bytes === undefined ? undefined : { path: path as VaultPath, reason: 'too_large', bytes };
}

/**
 * Lines `start..end` (1-based, inclusive) of an over-cap note, read from disk as a stream that stops after
 * line `end` ({@link readLineRange}, src/vault/line-range.ts), so the note's bytes are never all in memory.
 * The file is found by its NFC name ({@link onDiskPath}); there is no sha256 to check it against, since
 * the scan did not read it.
 *
 * @throws LoretraceError `not_found` — `path` is not an over-cap note, or the note has fewer than `end`
 *   lines; `symlink`, `hard_link`, `not_regular_file`, `stale_file` as readLineRange.
 */
export async function readOverCapLines(index: VaultIndex, path: VaultPath, start: number, end: number, shown: string): Promise<string[]> {
  if (!overCapNote(index, path)) {
    throw new LoretraceError('not_found', `${index.namespace}:${path} is not a note over max_file_bytes`, { file: path, expected: 'a vault-relative path of an over-cap note' });
  }
  return readLineRange(await onDiskPath(index.root, path), path, shown, start, end);
}

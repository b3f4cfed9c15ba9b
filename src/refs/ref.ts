/**
 * Refs against an index: {@link resolveRef} turns a lore ref into the note, chunk and lines it names.
 * The grammar itself (`parseRef`, `formatRef`, `isUnderPrefix`) lives in src/refs/grammar.ts, which
 * imports nothing of the index, so the vault scan can ask it whether a path is referenceable
 * (src/vault/ref-name.ts) without a cycle back through the indexer; it is re-exported here so callers
 * that resolve refs import one module.
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { assertNoteHasText, chunksOf, getNote, overCapNote, type OverCapNote } from '../indexer/lookup.js';
import { formatRef, parseRef, type ParsedRef } from './grammar.js';

export { formatRef, isUnderPrefix, parseRef } from './grammar.js';
export type { ParsedRef, ParseRefOptions, RefFragment } from './grammar.js';

/** Where a ref points: a note, a chunk (or null for a whole note / multi-chunk range) and its lines. */
export interface ResolvedRef {
  path: VaultPath;
  /** The chunk the fragment names or starts in; null for a whole note or a range spanning chunks. */
  chunk_index: number | null;
  /**
   * 1-based inclusive lines in the original file. A whole empty text note gives 1..0; a note kept without
   * text (binary, not UTF-8) gives no range at all ({@link resolveRef} refuses it).
   */
  line_start: number;
  line_end: number;
}

/**
 * Resolve a ref against an index. Whole note → lines 1..line_count; `#chunkN` → that chunk's lines;
 * `#Heading` → the heading's section including nested subsections (Obsidian's rule; exact text first,
 * then case-insensitive); `#L10-L20` → those lines (must lie inside the file); `#^id` → the line with
 * the block marker.
 *
 * A note over `max_file_bytes` (not parsed, so without chunks, headings or a known line count) answers
 * only `#L10-L20`, with `chunk_index` null; whether those lines exist is known only when the file is read
 * (`readOverCapLines`, src/indexer/lookup.ts).
 *
 * @throws LoretraceError `bad_ref` (see {@link parseRef}), `not_found` when the note, chunk, heading,
 *   block or line range does not exist, naming which; `note_too_large` for any other ref of an over-cap
 *   note (docs/PARSING.md "Big notes"); `binary_file` / `not_utf8` (exit 1) for any ref of a note the notes
 *   stage listed without text (a NUL byte; a byte that is not UTF-8, `details.line` its line), with the
 *   indexer's finding — the answer `loretrace show` gives for it (src/indexer/lookup.ts `assertNoteHasText`).
 */
export function resolveRef(index: VaultIndex, ref: string | ParsedRef): ResolvedRef {
  const parsed = typeof ref === 'string' ? parseRef(ref, { namespace: index.namespace }) : ref;
  const shown = typeof ref === 'string' ? ref : formatRef(parsed.namespace, parsed.path, parsed.fragment);
  if (parsed.is_prefix) {
    throw new LoretraceError('not_found', `ref ${shown} names a folder, not a note`, { expected: 'a note path ending in .md' });
  }
  const note = findNote(index, parsed.path);
  if (!note) {
    const big = overCapNote(index, parsed.path);
    if (big) return overCapRange(big, parsed, shown);
  }
  if (!note) throw new LoretraceError('not_found', `ref ${shown}: no note ${parsed.path} in vault ${index.namespace}`, { data: { ref: shown } });
  // A note the notes stage kept as non-text (a NUL byte, a byte that is not UTF-8) has no lines to name:
  // refused with the indexer's own finding, as `show` answers it, never the empty range 1..0 of a text note.
  assertNoteHasText(index, note.path, shown);
  const chunks = chunksOfNote(index, note.path);
  const f = parsed.fragment;
  if (f === null) return { path: note.path, chunk_index: null, line_start: 1, line_end: note.line_count };
  switch (f.kind) {
    case 'chunk': {
      const c = chunks.find((x) => x.chunk_index === f.index);
      if (!c) {
        throw new LoretraceError('not_found', `ref ${shown}: ${note.path} has ${chunks.length} chunks (0..${chunks.length - 1}), not chunk${f.index}`, { data: { ref: shown } });
      }
      return { path: note.path, chunk_index: c.chunk_index, line_start: c.line_start, line_end: c.line_end };
    }
    case 'lines': {
      if (f.end > note.line_count) {
        throw new LoretraceError('not_found', `ref ${shown}: ${note.path} has ${note.line_count} lines, so L${f.start}-L${f.end} is outside it`, { data: { ref: shown } });
      }
      const c = chunks.find((x) => x.line_start <= f.start && f.end <= x.line_end);
      return { path: note.path, chunk_index: c ? c.chunk_index : null, line_start: f.start, line_end: f.end };
    }
    case 'block': {
      const b = note.blocks.find((x) => x.id === f.id) ?? note.blocks.find((x) => x.id.toLowerCase() === f.id.toLowerCase());
      if (!b) throw new LoretraceError('not_found', `ref ${shown}: no block ^${f.id} in ${note.path}`, { data: { ref: shown } });
      return { path: note.path, chunk_index: b.chunk_index, line_start: b.line, line_end: b.line };
    }
    case 'heading': {
      const h =
        note.headings.find((x) => x.text === f.text) ??
        note.headings.find((x) => x.text.toLowerCase() === f.text.toLowerCase());
      if (!h) throw new LoretraceError('not_found', `ref ${shown}: no heading ${JSON.stringify(f.text)} in ${note.path}`, { data: { ref: shown } });
      return headingSection(note, chunks, h);
    }
  }
}

/**
 * The section of one heading of a note (Obsidian's heading-link rule): the heading line through the end of the
 * last chunk before the next heading of the same or a shallower depth, so its sub-headings are inside it.
 * `chunks` are the note's chunks in order. Lines 1-based, inclusive.
 */
export function headingSection(note: NoteRecord, chunks: readonly Chunk[], h: NoteRecord['headings'][number]): ResolvedRef {
  const start = chunks.find((x) => x.chunk_index === h.chunk_index);
  let end = start ? start.line_end : h.line;
  // Extend through following chunks until a heading of the same or a shallower depth.
  const later = note.headings.filter((x) => x.line > h.line);
  const stop = later.find((x) => x.depth <= h.depth);
  for (const c of chunks) {
    if (c.line_start > h.line && (stop === undefined || c.line_start < stop.line)) end = Math.max(end, c.line_end);
  }
  return { path: note.path, chunk_index: h.chunk_index, line_start: h.line, line_end: end };
}

/**
 * The range of a ref to an over-cap note: its line range, else `note_too_large` — only line ranges can be
 * served for a note the index holds no text of (a whole note could be gigabytes).
 */
function overCapRange(big: OverCapNote, parsed: ParsedRef, shown: string): ResolvedRef {
  const f = parsed.fragment;
  if (f !== null && f.kind === 'lines') return { path: big.path, chunk_index: null, line_start: f.start, line_end: f.end };
  throw new LoretraceError('note_too_large', `ref ${shown}: ${big.path} is ${big.bytes} bytes, over max_file_bytes, so it is not indexed (no chunk, heading or block refs); only a line range such as #L1-L50 can be served for it`, {
    file: big.path, expected: 'a line range ref (#L1-L50) of this note', data: { ref: shown, bytes: big.bytes },
  });
}

/** Note record by exact path (O(1) through the indexer's lookup maps). */
function findNote(index: VaultIndex, path: string): NoteRecord | undefined {
  return getNote(index, path as VaultPath);
}

function chunksOfNote(index: VaultIndex, path: string): readonly Chunk[] {
  return chunksOf(index, path as VaultPath);
}

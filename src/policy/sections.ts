/**
 * Hidden sections: an omitted ref `Note.md#Heading` (packet `hidden_context_audit.omitted_context_refs`)
 * hides that heading's section of the note, not the whole note (docs/PROXY.md "Hidden sections").
 *
 * The section is what an Obsidian heading link `[[Note#Heading]]` resolves to — the heading line through
 * the line before the next heading of the same or a shallower depth (so its sub-headings are inside it),
 * exactly the range `resolveRef` gives a `#Heading` fragment (src/refs/ref.ts). Since every heading starts
 * a chunk (src/chunks/chunk.ts), the section is a whole number of chunks: the heading's chunk, the pieces a
 * long section was split into, and every sub-heading's chunks. Those chunks are *withheld*: search treats
 * them as absent (their text adds nothing to the BM25 statistics and is never a hit), their links are not
 * edges, reads serve a marker line in their place, and a trace entry citing their lines is a policy
 * violation.
 */
import type { LinkRecord, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { chunksOf } from '../indexer/lookup.js';
import { resolveRef } from '../refs/ref.js';
import type { ParsedRef } from '../refs/ref.js';
import type { CompiledPolicy, HiddenSection } from './types.js';

/**
 * The section an omitted heading ref hides, or null when the note has no such heading (the caller then
 * denies the whole note: a hidden ref that names nothing findable fails closed).
 * @param parsed the omitted ref, parsed; its fragment must be a heading.
 * @param pointer JSON pointer of the omitted ref (`/hidden_context_audit/omitted_context_refs/0`).
 */
export function hiddenSectionOf(index: VaultIndex, note: NoteRecord, parsed: ParsedRef, pointer: string): HiddenSection | null {
  if (parsed.fragment === null || parsed.fragment.kind !== 'heading') return null;
  let range;
  try {
    range = resolveRef(index, { ...parsed, path: note.path });
  } catch {
    return null;
  }
  const chunks = chunksOf(index, note.path)
    .filter((c) => c.line_start >= range.line_start && c.line_start <= range.line_end)
    .map((c) => c.chunk_index);
  return { path: note.path, heading: parsed.fragment.text, line_start: range.line_start, line_end: range.line_end, chunks, pointer };
}

/** The hidden sections of the note at `path` (empty when none), in line order. */
export function sectionsOf(compiled: CompiledPolicy, path: string): readonly HiddenSection[] {
  return compiled.hidden_sections.filter((s) => s.path === path);
}

/**
 * The first hidden section of `path` that lines `start..end` (1-based, inclusive) overlap, or null.
 * Used for reads, excerpts and trace entries: any overlap withholds.
 */
export function sectionOverlapping(compiled: CompiledPolicy, path: string, start: number, end: number): HiddenSection | null {
  for (const s of compiled.hidden_sections) {
    if (s.path === path && start <= s.line_end && end >= s.line_start) return s;
  }
  return null;
}

/** Whether a link stands on a line of a hidden section of its source note (its text and target are hidden). */
export function isWithheldLink(compiled: CompiledPolicy, link: LinkRecord): boolean {
  return sectionOverlapping(compiled, link.source_path, link.line, link.line) !== null;
}

/** The links that do not stand in a hidden section (see {@link isWithheldLink}), in their order. */
export function visibleLinks<L extends LinkRecord>(compiled: CompiledPolicy, links: readonly L[]): L[] {
  if (compiled.hidden_sections.length === 0) return [...links];
  return links.filter((l) => !isWithheldLink(compiled, l));
}

/**
 * The withheld chunks per note path, for `searchCorpus(paths, withheld)` (src/search/search.ts): every
 * chunk of every hidden section.
 */
export function withheldChunks(compiled: CompiledPolicy): [VaultPath, number[]][] {
  const out = new Map<VaultPath, number[]>();
  for (const s of compiled.hidden_sections) out.set(s.path, [...(out.get(s.path) ?? []), ...s.chunks]);
  return [...out];
}

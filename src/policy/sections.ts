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
import { headingSection } from '../refs/ref.js';
import type { ParsedRef } from '../refs/ref.js';
import type { CompiledPolicy, HiddenSection } from './types.js';

/**
 * The sections an omitted heading ref hides, in line order, or an empty list when the note has no such
 * heading (the caller then denies the whole note: a hidden ref that names nothing findable fails closed).
 *
 * **Every** heading of the note whose text matches the fragment — exactly or without case, as a heading link
 * matches — gives a section, not only the first one a link `[[Note#Heading]]` would open: an author who
 * omits "the Sealed Accord section" of a note that has two `## Sealed Accord` headings means both, and
 * hiding only the first would serve the second (fail closed, as every hidden rule is read).
 * @param parsed the omitted ref, parsed; its fragment must be a heading.
 * @param pointer JSON pointer of the omitted ref (`/hidden_context_audit/omitted_context_refs/0`).
 */
export function hiddenSectionsOf(index: VaultIndex, note: NoteRecord, parsed: ParsedRef, pointer: string): HiddenSection[] {
  const f = parsed.fragment;
  if (f === null || f.kind !== 'heading') return [];
  const wanted = f.text.toLowerCase();
  const all = chunksOf(index, note.path);
  return note.headings
    .filter((h) => h.text === f.text || h.text.toLowerCase() === wanted)
    .map((h) => {
      const range = headingSection(note, all, h);
      const chunks = all.filter((c) => c.line_start >= range.line_start && c.line_start <= range.line_end).map((c) => c.chunk_index);
      return { path: note.path, heading: f.text, line_start: range.line_start, line_end: range.line_end, chunks, pointer };
    });
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

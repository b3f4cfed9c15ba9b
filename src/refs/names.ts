/**
 * Notes by name: the note a title, alias, file name or extension-less path names, and "did you mean"
 * suggestions for a name or ref that names none. Used by `loretrace show` so that a user can type what
 * Obsidian shows (`Harbor Neutrality`, an alias such as `Blackout`) instead of a full ref.
 *
 * Names are compared the way Obsidian's quick switcher finds notes: NFC, case-insensitively (and, when no name
 * matches so, with diacritics folded as `search` folds them: `Framgang` names `Framgång`), by title
 * (frontmatter `title`, else the file name), by each frontmatter alias, by file name without `.md`, and by
 * the vault path with or without `.md`. A note over `max_file_bytes` is never parsed, so it has no title or
 * aliases here: it is found by its file name and path only (an NFD file name is found by its NFC spelling). Suggestions rank every such name by edit distance (Levenshtein,
 * in UTF-16 code units, on the lower-cased NFC forms), a name containing the typed text or contained in it
 * counting as distance 1; ties break by path, so the list is deterministic.
 */
import { LoretraceError, isLoretraceError } from '../errors.js';
import { getNote, overCapNote, overCapNotes } from '../indexer/lookup.js';
import type { NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { formatRef, parseRef, type ParsedRef } from './grammar.js';
import { resolveRef, type ResolvedRef } from './ref.js';

/** One note a name matched, and which of its names it was. */
export interface NamedNote {
  /** The note's vault path. */
  path: VaultPath;
  /**
   * The note's record; null for a note over `max_file_bytes`, which the index lists by path and size only
   * (docs/PARSING.md "Big notes"), so only its file name and path are names of it.
   */
  note: NoteRecord | null;
  /** The note's name that matched, as written in the note (title, alias, file name or path). */
  matched: string;
  /** Which kind of name it was. */
  by: 'title' | 'alias' | 'file_name' | 'path';
}

/** Suggestions {@link suggestNotes} returns at most, unless told otherwise. */
export const MAX_SUGGESTIONS = 5;

/** Lower-cased NFC form of a name, the form names are compared in. */
function fold(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

/** A note that can be named: an indexed note, or an over-cap note known by its path alone (`note` null). */
interface Nameable {
  path: VaultPath;
  note: NoteRecord | null;
}

/**
 * Every note of the index that can be named, in path order: the indexed notes and the notes over
 * `max_file_bytes` (`overCapNotes`; their names are file name and path only — their frontmatter title and
 * aliases were never read, since the scan does not parse a note over the cap).
 */
function nameable(index: VaultIndex): Nameable[] {
  const all: Nameable[] = [...index.notes.map((n) => ({ path: n.path, note: n })), ...overCapNotes(index).map((b) => ({ path: b.path, note: null }))];
  return all.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Every name of a note, in the order title, aliases, file name, path (for matching and for suggestions). */
function namesOf(n: Nameable): { name: string; by: NamedNote['by'] }[] {
  const file = n.path.split('/').pop()!.replace(/\.md$/i, '');
  return [
    ...(n.note ? [{ name: n.note.title, by: 'title' as const }, ...n.note.aliases.map((a) => ({ name: a, by: 'alias' as const }))] : []),
    { name: file, by: 'file_name' as const },
    { name: n.path, by: 'path' as const },
    { name: n.path.replace(/\.md$/i, ''), by: 'path' as const },
  ].filter((x) => x.name.trim() !== '');
}

/**
 * The notes whose title, alias, file name or path (with or without `.md`) equals `name`, NFC and
 * case-insensitively; one entry per note (its first matching name), in path order. Empty when none does.
 * `among`, when given, limits the search to the note paths it accepts (the research proxy passes its
 * admitted set, so a name never tells whether a hidden or out-of-scope note has it).
 */
export function notesNamed(index: VaultIndex, name: string, among?: (path: VaultPath) => boolean): NamedNote[] {
  const wanted = fold(name.trim());
  if (wanted === '') return [];
  const notes = nameable(index).filter((x) => among === undefined || among(x.path));
  const exact = namedBy(notes, wanted, fold);
  // As `search` folds terms (src/search/tokenize.ts): `Framgang` names Framgång — only when no name matches exactly.
  return exact.length > 0 ? exact : namedBy(notes, foldMarks(wanted), (t) => foldMarks(fold(t)));
}

/** Lower-cased NFC text with its diacritics (combining marks after NFD) removed: `framgång` → `framgang`. */
function foldMarks(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
}

/** The notes one of whose names, in the form `form` gives, equals `wanted`; one entry per note (its first such name). */
function namedBy(notes: readonly Nameable[], wanted: string, form: (text: string) => string): NamedNote[] {
  const out: NamedNote[] = [];
  for (const n of notes) {
    const hit = namesOf(n).find((x) => form(x.name) === wanted);
    if (hit) out.push({ path: n.path, note: n.note, matched: hit.name, by: hit.by });
  }
  return out;
}

/** Levenshtein distance of two strings (UTF-16 code units), two-row dynamic programme. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * "Did you mean" candidates for a text that names no note: the notes with a name (title, alias, file name
 * or path) within edit distance max(2, ⌊length / 3⌋) of `text`, or containing it, or contained in it (as
 * distance 1), best first (distance, then path), at most `limit` notes. `text` may be a whole ref
 * (`Namespace:path#fragment`): the namespace and fragment are left out before comparing.
 */
export function suggestNotes(index: VaultIndex, text: string, limit = MAX_SUGGESTIONS): NamedNote[] {
  let wanted = text.trim();
  if (wanted.startsWith(`${index.namespace}:`)) wanted = wanted.slice(index.namespace.length + 1);
  const hash = wanted.indexOf('#');
  if (hash >= 0) wanted = wanted.slice(0, hash);
  const q = fold(wanted);
  if (q === '') return [];
  const bound = Math.max(2, Math.floor(q.length / 3));
  const scored: { named: NamedNote; distance: number }[] = [];
  for (const note of nameable(index)) {
    let best: { named: NamedNote; distance: number } | null = null;
    for (const n of namesOf(note)) {
      const f = fold(n.name);
      const distance = f.includes(q) || (f.length >= 3 && q.includes(f)) ? 1 : editDistance(q, f);
      if (distance <= bound && (best === null || distance < best.distance)) best = { named: { path: note.path, note: note.note, matched: n.name, by: n.by }, distance };
    }
    if (best) scored.push(best);
  }
  scored.sort((x, y) => x.distance - y.distance || (x.named.path < y.named.path ? -1 : x.named.path > y.named.path ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.named);
}

/**
 * A typed ref split into the note name and the fragment: the namespace prefix (`FixtureLore:`) dropped,
 * the fragment kept with its `#` (`Harbor Neutrality#L1-L3` → `Harbor Neutrality`, `#L1-L3`).
 */
export function splitNameAndFragment(index: VaultIndex, input: string): { name: string; fragment: string } {
  let text = input.trim();
  if (text.startsWith(`${index.namespace}:`)) text = text.slice(index.namespace.length + 1);
  const hash = text.indexOf('#');
  return { name: hash >= 0 ? text.slice(0, hash) : text, fragment: hash >= 0 ? text.slice(hash) : '' };
}

/**
 * "Did you mean" headings of a note for a `#Heading` fragment it does not have: the headings whose text
 * contains the typed text or is contained in it (case-insensitively, NFC), or lies within edit distance
 * max(2, ⌊length / 3⌋) of it, best first (distance, then line), each once, at most `limit`. `among`
 * limits them (the proxy passes the headings a responder may see). `#Jovian` → `Jovian Space`.
 */
export function suggestHeadings(note: NoteRecord, text: string, among?: (heading: NoteRecord['headings'][number]) => boolean, limit = MAX_SUGGESTIONS): string[] {
  const q = fold(text.trim());
  if (q === '') return [];
  const bound = Math.max(2, Math.floor(q.length / 3));
  const scored: { text: string; line: number; distance: number }[] = [];
  for (const h of note.headings) {
    if (among !== undefined && !among(h)) continue;
    const f = fold(h.text);
    const distance = f.includes(q) || (f.length >= 3 && q.includes(f)) ? 1 : editDistance(q, f);
    if (distance <= bound && !scored.some((x) => x.text === h.text)) scored.push({ text: h.text, line: h.line, distance });
  }
  scored.sort((a, b) => a.distance - b.distance || a.line - b.line);
  return scored.slice(0, limit).map((x) => x.text);
}

/** What {@link resolveRefOrName} found: the ref as resolved, and the note name it was found by (or null). */
export interface RefOrName {
  /** The parsed ref that was resolved (for a name: the note's path with the typed fragment). */
  parsed: ParsedRef;
  range: ResolvedRef;
  /** Set when the input was a note name rather than a ref of an existing note. */
  named: NamedNote | null;
}

/** `FixtureLore:World/Politics/Harbor Neutrality.md ("Harbor Neutrality")`: a suggestion as shown to a user. */
export function describeSuggestion(index: VaultIndex, s: NamedNote): string {
  const ref = formatRef(index.namespace, s.path);
  return s.by === 'path' ? ref : `${ref} (${s.by === 'alias' ? 'alias ' : ''}${JSON.stringify(s.matched)})`;
}

/**
 * Resolve what a user typed as a ref — or, when it names no note of the index, as a note name: a title,
 * alias, file name or extension-less path ({@link notesNamed}), optionally with the namespace in front and
 * a `#fragment` after (`Harbor Neutrality#L1-L6`, `FixtureLore:Blackout#Aftermath`).
 *
 * @throws LoretraceError `not_found` (exit 1) when neither finds a note — the message ends with
 *   `did you mean …?` and `details.data.suggestions` lists the suggested refs ({@link suggestNotes}) when
 *   there are any; `ambiguous_ref` (exit 1) when a name fits several notes (all named, in path order, also in
 *   `details.data.candidates`); `bad_ref` as {@link parseRef} when the text is no ref and names no note;
 *   `not_found` from {@link resolveRef} when the note exists but its fragment does not.
 */
export function resolveRefOrName(index: VaultIndex, input: string): RefOrName {
  let parsed: ParsedRef | null = null;
  let first: unknown;
  try {
    parsed = parseRef(input, { namespace: index.namespace });
    if (parsed.is_prefix || getNote(index, parsed.path as VaultPath) || overCapNote(index, parsed.path)) return { parsed, range: resolveRef(index, parsed), named: null };
    resolveRef(index, parsed); // throws the not_found naming the missing note
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    if (parsed !== null && (getNote(index, parsed.path as VaultPath) || overCapNote(index, parsed.path))) throw withHeadingSuggestions(index, parsed, e); // the note exists; its fragment does not
    first = e;
  }
  const { name, fragment } = splitNameAndFragment(index, input);
  const named = notesNamed(index, name);
  if (named.length === 1) {
    const byName = parseRef(`${formatRef(index.namespace, named[0]!.path)}${fragment}`, { namespace: index.namespace });
    try {
      return { parsed: byName, range: resolveRef(index, byName), named: named[0]! };
    } catch (e) {
      throw isLoretraceError(e) ? withHeadingSuggestions(index, byName, e) : e;
    }
  }
  if (named.length > 1) {
    const candidates = named.map((n) => formatRef(index.namespace, n.path));
    throw new LoretraceError('ambiguous_ref', `${JSON.stringify(name)} names ${named.length} notes: ${named.map((n) => describeSuggestion(index, n)).join(', ')}; give the ref of one`, {
      expected: 'a ref (Namespace:path.md) or a name only one note has', data: { ref: input, candidates },
    });
  }
  const err = first as LoretraceError;
  const suggestions = suggestNotes(index, input);
  if (suggestions.length === 0) {
    if (err.code !== 'not_found') throw err;
    throw new LoretraceError('not_found', `${err.message}; no note has that title or alias either`, err.details);
  }
  const message = `${err.message}; no note has that title or alias either — did you mean ${suggestions.map((s) => describeSuggestion(index, s)).join(', ')}?`;
  throw new LoretraceError(err.code === 'bad_ref' ? 'not_found' : err.code, message, {
    ...err.details, data: { ...(err.details.data as Record<string, unknown> | undefined), ref: input, suggestions: suggestions.map((s) => formatRef(index.namespace, s.path)) },
  });
}

/**
 * A `not_found` for a `#Heading` the note lacks, with "did you mean" headings of that note
 * ({@link suggestHeadings}) appended and listed in `details.data.suggestions`; any other error as it is.
 */
function withHeadingSuggestions(index: VaultIndex, parsed: ParsedRef, e: LoretraceError): LoretraceError {
  const f = parsed.fragment;
  const note = getNote(index, parsed.path as VaultPath);
  if (e.code !== 'not_found' || f === null || f.kind !== 'heading' || !note) return e;
  const headings = suggestHeadings(note, f.text);
  if (headings.length === 0) return e;
  const refs = headings.map((h) => formatRef(index.namespace, note.path, { kind: 'heading', text: h }));
  return new LoretraceError('not_found', `${e.message} — did you mean ${refs.join(', ')}?`, { ...e.details, data: { ...(e.details.data as Record<string, unknown> | undefined), suggestions: refs } });
}

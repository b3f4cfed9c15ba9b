/**
 * Compact excerpts: inside the lines a traversal picked, the most relevant sentences, shown as a reader
 * of the note sees them — wikilink syntax replaced by its display text — while the research_trace keeps
 * the exact lines.
 *
 * Why: seed 001 warns that retrieval "can also make the packet worse if it floods the scene"; a Ghostlight
 * author writes one or two sentences per lore excerpt (the Sella research packet's four lore excerpts are
 * 170–240 characters each), not whole paragraphs with `[[brackets]]`, epigraphs and link lists.
 *
 * Rules:
 * - Only *content* lines may be part of a compact excerpt ({@link excerptLineKind}): never a blank line, a
 *   heading or setext underline, an epigraph (a blockquote line, or a line that is one italic quotation
 *   such as `*"Miracles stayed proprietary."*`), a list of links (a line that, without its links, list
 *   marker, field label and punctuation, has fewer than three words of its own), a metadata field line
 *   (`**Date:** 2719-2724`) or a thematic break. List items may be excerpted, but a prose window wins
 *   over a list window that covers as many query terms.
 * - Candidates are windows of whole sentences inside one paragraph (a run of consecutive content lines).
 *   A sentence ends after `.`, `!` or `?` (closing quotes and brackets included) followed by white space,
 *   or at the end of the paragraph.
 * - The chosen window maximises, in order: fitting in `maxChars` characters, distinct query terms,
 *   prose over list items, total term occurrences (terms folded exactly like search, src/search/tokenize.ts), then fewer
 *   characters, then the earliest start. Without any query term, the first sentences of the first
 *   paragraph that fit are taken (the note's lead).
 * - `text` is the window in display form: verbatim characters of the display lines, cut at sentence
 *   boundaries. `line_start..line_end` are the file lines the window touches, and `exact` is those lines
 *   verbatim (joined with `"\n"`), so a trace entry built from them verifies line by line.
 */
import { processTerm, tokenize } from '../search/tokenize.js';
import { queryTermSet } from './excerpt.js';

/** Default upper bound of a compact excerpt's display text, in characters (UTF-16 code units). */
export const DEFAULT_COMPACT_CHARS = 360;

/** What a line of a note is, for excerpt picking (see the module rules). */
export type ExcerptLineKind = 'content' | 'list_item' | 'blank' | 'heading' | 'epigraph' | 'link_list' | 'field' | 'rule';

const HEADING_RE = /^ {0,3}#{1,6}(?:\s|$)/;
const SETEXT_RE = /^ {0,3}(?:=+|-+)\s*$/;
const RULE_RE = /^ {0,3}(?:(?:\*\s*){3,}|(?:_\s*){3,})$/;
const BLOCKQUOTE_RE = /^ {0,3}>/;
/** One italic quotation on a line: `*"…"*`, `_"…"_`, also with curly quotes and a trailing attribution dash. */
const ITALIC_QUOTE_RE = /^\s*[*_]+\s*["“'‘].*["”'’]\s*[*_]+\s*(?:[—–-].*)?$/;
const LINK_RE = /!?\[\[[^\]\n]*(?:\][^\]\n]+)*\]\]|\[[^\]\n]*\]\([^)\n]*\)/g;
const LIST_MARKER_RE = /^\s*(?:[-*+]|\d+[.)])\s+/;
const FIELD_LABEL_RE = /^\s*\*\*[^*]+:\*\*|^\s*[A-Za-z][\w /-]{0,40}::/;
/** A metadata field line: `**Label:** value` (Aetheria's event notes), or a Dataview-style `Label:: value`. */
const FIELD_LINE_RE = /^\s*(?:[-*+]\s+)?(?:\*\*[^*]{1,40}:\*\*|[A-Za-z][\w /-]{0,40}::)/;

/**
 * Classify one line of a note (see the module rules). A field line such as
 * `**Primary actors:** [[BioElevate]], uplift workers, [[Aeronautics Unlimited]]` is a `link_list`: without
 * its links and label only "uplift workers" is left.
 */
export function excerptLineKind(line: string): ExcerptLineKind {
  if (line.trim() === '') return 'blank';
  if (HEADING_RE.test(line) || SETEXT_RE.test(line)) return 'heading';
  if (RULE_RE.test(line)) return 'rule';
  if (BLOCKQUOTE_RE.test(line) || ITALIC_QUOTE_RE.test(line)) return 'epigraph';
  if (LINK_RE.test(line)) {
    LINK_RE.lastIndex = 0;
    const own = line.replace(LINK_RE, ' ').replace(LIST_MARKER_RE, ' ').replace(FIELD_LABEL_RE, ' ');
    const words = own.split(/[^\p{L}\p{N}'’-]+/u).filter((w) => /[\p{L}\p{N}]/u.test(w));
    if (words.length < 3) return 'link_list';
  }
  LINK_RE.lastIndex = 0;
  if (FIELD_LINE_RE.test(line)) return 'field';
  return LIST_MARKER_RE.test(line) ? 'list_item' : 'content';
}

/** True for the kinds a compact excerpt may contain (`content`, `list_item`). */
export function isExcerptable(kind: ExcerptLineKind): boolean {
  return kind === 'content' || kind === 'list_item';
}

/**
 * A link on a line, as the index records it (src/types.ts `LinkRecord`): 1-based line and column of its
 * first character, its exact text, and its parts. Only wikilinks and embeds are rendered.
 */
export interface DisplayLink {
  line: number;
  column: number;
  raw: string;
  syntax: string;
  target: string;
  fragment: string | null;
  display: string | null;
}

/**
 * How Obsidian shows a wikilink in reading view: its display text (`[[A|b]]` → `b`), else the target with
 * its heading path (`[[A#B]]` → `A > B`; `[[#B]]` → `B`).
 */
export function wikilinkDisplay(link: Pick<DisplayLink, 'target' | 'fragment' | 'display'>): string {
  if (link.display !== null && link.display !== '') return link.display;
  const fragment = link.fragment?.replace(/#/g, ' > ') ?? null;
  if (link.target === '') return fragment ?? '';
  return fragment ? `${link.target} > ${fragment}` : link.target;
}

/**
 * Line `text` (file line `lineNo`) with every wikilink and embed of `links` on that line replaced by
 * {@link wikilinkDisplay}. A link is found at its recorded column, else at the first occurrence of its raw
 * text at or after the previous replacement; one that cannot be found is left as written.
 */
export function displayLine(text: string, lineNo: number, links: readonly DisplayLink[]): string {
  const onLine = links
    .filter((l) => l.line === lineNo && (l.syntax === 'wikilink' || l.syntax === 'embed'))
    .sort((a, b) => a.column - b.column);
  let out = '';
  let at = 0;
  for (const l of onLine) {
    let start = l.column - 1;
    if (start < at || text.slice(start, start + l.raw.length) !== l.raw) start = text.indexOf(l.raw, at);
    if (start < 0) continue;
    out += text.slice(at, start) + wikilinkDisplay(l);
    at = start + l.raw.length;
  }
  return out + text.slice(at);
}

/** A compact excerpt. Lines are 1-based inclusive in the original file; characters are UTF-16 code units. */
export interface CompactPick {
  line_start: number;
  line_end: number;
  /** File lines `line_start..line_end`, verbatim, joined with `"\n"` (what a trace entry records). */
  exact: string;
  /** The chosen sentences in display form (what the prompt shows). */
  text: string;
  /** Characters of `text`. */
  chars: number;
  /** Distinct query terms in `text` (0 for the lead fallback). */
  terms_matched: number;
  /** Query-term occurrences in `text`. */
  hits: number;
}

/** Options of {@link compactExcerpt}. */
export interface CompactOptions {
  /** File line number of `lines[0]` (1-based); default 1. */
  lineOffset?: number;
  /** Upper bound of `text` in characters; default {@link DEFAULT_COMPACT_CHARS}. */
  maxChars?: number;
  /** The note's links (for display text); default none, i.e. lines are shown as written. */
  links?: readonly DisplayLink[];
}

/** A sentence of a paragraph: offsets into the paragraph's display text, and the file lines it touches. */
interface Sentence {
  start: number;
  end: number;
  lineStart: number;
  lineEnd: number;
  terms: Map<string, number>;
}

const SENTENCE_END = /[.!?]["'”’)\]*_]*(?=\s)/g;

/**
 * Split a paragraph (display lines joined with `"\n"`) into sentences with their line spans and terms;
 * with `lineUnits` (a list) every line ends a unit too.
 */
function sentencesOf(paragraph: string, firstLine: number, terms: ReadonlySet<string>, lineUnits = false): Sentence[] {
  const lineStarts = [0];
  for (let i = 0; i < paragraph.length; i++) if (paragraph[i] === '\n') lineStarts.push(i + 1);
  const lineAt = (offset: number): number => {
    let k = 0;
    while (k + 1 < lineStarts.length && (lineStarts[k + 1] as number) <= offset) k++;
    return firstLine + k;
  };
  const cuts: number[] = [];
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(paragraph); m !== null; m = SENTENCE_END.exec(paragraph)) cuts.push(m.index + m[0].length);
  // In a list every item is a unit of its own, ended or not by a full stop.
  if (lineUnits) for (const at of lineStarts.slice(1)) cuts.push(at - 1);
  cuts.push(paragraph.length);
  cuts.sort((x, y) => x - y);
  const out: Sentence[] = [];
  let from = 0;
  for (const cut of cuts) {
    let start = from;
    while (start < cut && /\s/.test(paragraph[start] as string)) start++;
    if (start < cut) {
      const counts = new Map<string, number>();
      for (const tok of tokenize(paragraph.slice(start, cut))) {
        const t = processTerm(tok);
        if (t !== null && terms.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
      }
      out.push({ start, end: cut, lineStart: lineAt(start), lineEnd: lineAt(cut - 1), terms: counts });
    }
    from = cut;
  }
  return out;
}

/** The lead fallback: the first paragraph's first sentences that fit (at least its first sentence). */
function leadOf(first: { para: string; sentences: Sentence[] } | null, maxChars: number): { para: string; sentences: Sentence[]; a: number; b: number; distinct: number; hits: number } | null {
  if (first === null) return null;
  const s = first.sentences;
  let b = 0;
  while (b + 1 < s.length && (s[b + 1] as Sentence).end - (s[0] as Sentence).start <= maxChars) b++;
  return { para: first.para, sentences: s, a: 0, b, distinct: 0, hits: 0 };
}

/**
 * Pick a compact excerpt from `lines` (see the module rules).
 *
 * @param lines the candidate lines, verbatim (for example a trace entry's `extracted_constraint` split on `"\n"`).
 * @param queries query texts; their terms are pooled.
 * @returns the pick, or null when `lines` hold no content line at all.
 */
export function compactExcerpt(lines: readonly string[], queries: readonly string[], options: CompactOptions = {}): CompactPick | null {
  const offset = options.lineOffset ?? 1;
  const maxChars = options.maxChars ?? DEFAULT_COMPACT_CHARS;
  const links = options.links ?? [];
  const terms = new Set(queryTermSet(queries));
  type Cand = { para: string; sentences: Sentence[]; a: number; b: number; fits: boolean; distinct: number; prose: boolean; hits: number; chars: number };
  let best: Cand | null = null;
  let firstPara: { para: string; sentences: Sentence[] } | null = null;
  for (let i = 0; i < lines.length; ) {
    const kind = excerptLineKind(lines[i] as string);
    if (!isExcerptable(kind)) {
      i++;
      continue;
    }
    // A paragraph: consecutive lines of one kind (prose, or list items), so a window never mixes them.
    let j = i;
    while (j + 1 < lines.length && excerptLineKind(lines[j + 1] as string) === kind) j++;
    const prose = kind === 'content';
    const para = lines.slice(i, j + 1).map((l, k) => displayLine(l, offset + i + k, links)).join('\n');
    const sentences = sentencesOf(para, offset + i, terms, !prose);
    if (firstPara === null && sentences.length > 0) firstPara = { para, sentences };
    for (let a = 0; a < sentences.length; a++) {
      const seen = new Map<string, number>();
      for (let b = a; b < sentences.length; b++) {
        for (const [t, c] of (sentences[b] as Sentence).terms) seen.set(t, (seen.get(t) ?? 0) + c);
        const chars = (sentences[b] as Sentence).end - (sentences[a] as Sentence).start;
        const fits = chars <= maxChars;
        if (!fits && b > a) break;
        let hits = 0;
        for (const c of seen.values()) hits += c;
        const cand: Cand = { para, sentences, a, b, fits, distinct: seen.size, prose, hits, chars };
        if (
          best === null ||
          (cand.fits && !best.fits) ||
          (cand.fits === best.fits &&
            (cand.distinct > best.distinct ||
              (cand.distinct === best.distinct &&
                ((cand.prose && !best.prose) ||
                  (cand.prose === best.prose && (cand.hits > best.hits || (cand.hits === best.hits && cand.chars < best.chars)))))))
        ) {
          best = cand;
        }
        if (!fits) break;
      }
    }
    i = j + 1;
  }
  const pick = best !== null && best.distinct > 0 ? best : leadOf(firstPara, maxChars);
  if (pick === null) return null;
  const first = pick.sentences[pick.a] as Sentence;
  const last = pick.sentences[pick.b] as Sentence;
  const text = pick.para.slice(first.start, last.end);
  const exact = lines.slice(first.lineStart - offset, last.lineEnd - offset + 1).join('\n');
  return { line_start: first.lineStart, line_end: last.lineEnd, exact, text, chars: text.length, terms_matched: pick.distinct, hits: pick.hits };
}

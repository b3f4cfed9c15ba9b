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
 * - Only *content* lines may be part of a compact excerpt (`excerptLineKind`, src/excerpts/lines.ts): never
 *   a blank line, a heading or setext underline, an epigraph, a list of links (links, bare URLs and tags
 *   with fewer than three words of the line's own), a navigation line ("See also …", "Related: …"), a
 *   metadata field line (`**Date:** 2719-2724`) or a thematic break. List items may be excerpted, but a
 *   prose window wins over a list window that covers as many query terms, and an item that starts with a
 *   lower-case letter (`- shared clinics and …`: a fragment of its list's lead-in, "Aya's economy centers
 *   on:") is not self-contained.
 * - Self-contained: a window whose first sentence opens with a word pointing back to text before it
 *   (`opensWithReference`: "Instead …", "They …", "Its …", "First, …", "In this way, …", "The answer was …"), or whose last sentence ends with
 *   `:` (a lead-in to a list it does not include: "AU profits from:"), is not self-contained. Every window
 *   is a candidate, so the window extended back over the antecedent sentence(s) of the same paragraph —
 *   still a contiguous line range — competes with it; a self-contained window with a query term that fits
 *   always beats one that is not, so the pick is the extension when it fits, else another sentence. Only
 *   when no self-contained window with a query term fits is the best other window taken (`self_contained:
 *   false`, so the caller can look in another chunk).
 * - Candidates are windows of whole sentences inside one paragraph (a run of consecutive content lines).
 *   A sentence ends after `.`, `!` or `?` (closing quotes and brackets included) followed by white space,
 *   or at the end of the paragraph.
 * - The chosen window maximises, in order: fitting in `maxChars` characters, being self-contained with a
 *   query term, distinct query terms, being self-contained,
 *   prose over list items, total term occurrences (terms folded exactly like search, src/search/tokenize.ts), then fewer
 *   characters, then the earliest start. Without any query term, the first self-contained sentences of
 *   the first paragraph that has one are taken, as many as fit (the note's lead).
 * - `text` is the window in display form: verbatim characters of the display lines, cut at sentence
 *   boundaries. `line_start..line_end` are the file lines the window touches, and `exact` is those lines
 *   verbatim (joined with `"\n"`), so a trace entry built from them verifies line by line.
 */
import { processTerm, tokenize } from '../search/tokenize.js';
import { queryTermSet } from './excerpt.js';
import { excerptLineKind, isExcerptable, opensWithReference } from './lines.js';

/** Default upper bound of a compact excerpt's display text, in characters (UTF-16 code units). */
export const DEFAULT_COMPACT_CHARS = 360;

export { excerptLineKind, hubLineCounts, isExcerptable, isHubNote, opensWithReference } from './lines.js';
export type { ExcerptLineKind } from './lines.js';

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
  /**
   * True when the window stands alone: its first sentence does not point back (`opensWithReference`) and
   * its last does not end with `:` (a lead-in to what follows). False only when no self-contained window
   * with a query term fits (the best other window is returned, and a caller may prefer another chunk).
   */
  self_contained: boolean;
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

/** A paragraph with its sentences, and for each sentence whether a window may start / end there. */
interface Paragraph {
  para: string;
  sentences: Sentence[];
  prose: boolean;
  /** Per sentence: it does not open with a word pointing back ({@link opensWithReference}). */
  canStart: boolean[];
  /** Per sentence: it does not end with `:` (a lead-in to a list or quotation that is not part of the window). */
  canEnd: boolean[];
}

/**
 * The lead fallback, when no window holds a query term: the first sentences, in document order, of the
 * first paragraph that has a sentence able to start a window, as many as fit (at least one), ending on a
 * sentence able to end one where possible; else the first paragraph's first sentence.
 */
function leadOf(paras: readonly Paragraph[], maxChars: number): { p: Paragraph; a: number; b: number; whole: boolean } | null {
  for (const p of paras) {
    const a = p.canStart.indexOf(true);
    if (a < 0) continue;
    let b = a;
    while (b + 1 < p.sentences.length && (p.sentences[b + 1] as Sentence).end - (p.sentences[a] as Sentence).start <= maxChars) b++;
    let e = b;
    while (e > a && !p.canEnd[e]) e--;
    return { p, a, b: e, whole: p.canEnd[e] === true };
  }
  const first = paras[0];
  return first ? { p: first, a: 0, b: 0, whole: false } : null;
}

/**
 * True for a list item that continues its list's lead-in rather than standing alone: its text (after the
 * list marker and leading markup) starts with a lower-case letter — `- shared clinics and rights-oriented
 * research networks` under "Aya's economy centers on:" is a fragment of that sentence, not lore of its own.
 */
function continuesLeadIn(item: string): boolean {
  return /^\p{Ll}/u.test(item.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '').replace(/^[\s*_"“'‘([`]+/u, ''));
}

/** Window ranking key, compared element by element, larger first (see the module rules). */
function windowKey(c: { fits: boolean; whole: boolean; distinct: number; prose: boolean; hits: number; chars: number }): number[] {
  return [c.fits ? 1 : 0, c.whole && c.distinct > 0 ? 1 : 0, c.distinct, c.whole ? 1 : 0, c.prose ? 1 : 0, c.hits, -c.chars];
}

/** True when key `x` ranks strictly before key `y`. */
function ranksBefore(x: readonly number[], y: readonly number[]): boolean {
  for (let i = 0; i < x.length; i++) if ((x[i] as number) !== (y[i] as number)) return (x[i] as number) > (y[i] as number);
  return false;
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
  type Cand = { p: Paragraph; a: number; b: number; fits: boolean; whole: boolean; distinct: number; prose: boolean; hits: number; chars: number };
  let best: Cand | null = null;
  let bestKey: number[] = [];
  const paras: Paragraph[] = [];
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
    const p: Paragraph = {
      para,
      sentences,
      prose,
      canStart: sentences.map((x) => !opensWithReference(para.slice(x.start, x.end)) && (prose || !continuesLeadIn(para.slice(x.start, x.end)))),
      canEnd: sentences.map((x) => !/:[*_]*$/.test(para.slice(x.start, x.end).trimEnd())),
    };
    if (sentences.length > 0) paras.push(p);
    for (let a = 0; a < sentences.length; a++) {
      const seen = new Map<string, number>();
      for (let b = a; b < sentences.length; b++) {
        for (const [t, c] of (sentences[b] as Sentence).terms) seen.set(t, (seen.get(t) ?? 0) + c);
        const chars = (sentences[b] as Sentence).end - (sentences[a] as Sentence).start;
        const fits = chars <= maxChars;
        if (!fits && b > a) break;
        let hits = 0;
        for (const c of seen.values()) hits += c;
        const cand: Cand = { p, a, b, fits, whole: (p.canStart[a] ?? false) && (p.canEnd[b] ?? false), distinct: seen.size, prose, hits, chars };
        const key = windowKey(cand);
        if (best === null || ranksBefore(key, bestKey)) {
          best = cand;
          bestKey = key;
        }
        if (!fits) break;
      }
    }
    i = j + 1;
  }
  const lead = best !== null && best.distinct > 0 ? null : leadOf(paras, maxChars);
  const pick = best !== null && best.distinct > 0 ? best : lead === null ? null : { ...lead, distinct: 0, hits: 0 };
  if (pick === null) return null;
  const first = pick.p.sentences[pick.a] as Sentence;
  const last = pick.p.sentences[pick.b] as Sentence;
  const text = pick.p.para.slice(first.start, last.end);
  const exact = lines.slice(first.lineStart - offset, last.lineEnd - offset + 1).join('\n');
  return { line_start: first.lineStart, line_end: last.lineEnd, exact, text, chars: text.length, terms_matched: pick.distinct, hits: pick.hits, self_contained: pick.whole };
}

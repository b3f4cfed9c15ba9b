/**
 * Excerpt picking: the most relevant run of whole lines, verbatim, bounded in characters.
 *
 * An excerpt is never a paraphrase: its `text` is exactly lines `line_start..line_end` of the original
 * file joined with `"\n"` (the conventions of src/types.ts). Wikilink syntax is **kept as written**
 * (`[[Rossum & Douglas]]`, `[[A|b]]`): the raw lines are the excerpt, so a reviewer — or `verify-trace`
 * — can compare them byte for byte with the file. Display text is not substituted.
 *
 * Relevance of a line = the query terms it contains (tokenised and folded exactly like search: case,
 * diacritics and apostrophes folded, stop words dropped; src/search/tokenize.ts). The chosen run
 * maximises, in order: being self-contained with a query term, distinct query terms covered, being
 * self-contained, total term occurrences, then prefers fewer characters, then the earliest start.
 * *Self-contained* is the compact excerpts' rule (src/excerpts/compact.ts, `opensWithReference`): a run
 * whose first line opens with a word pointing back to text before it ("They …", "Instead …", "Its …") or
 * whose last line ends with `:` (a lead-in to a list it does not hold) does not stand alone; since every run
 * is a candidate, the run extended back over the line before it competes, and a self-contained run with a
 * query term always wins — the excerpt extends back when that fits, else another run is taken. Only lore lines start or end a run, and only their terms count:
 * never a blank line, a heading or setext underline, an epigraph, a list of links (links, bare URLs, tags),
 * a navigation line ("See also …"), a metadata field line or a thematic break (`excerptLineKind`,
 * src/excerpts/lines.ts) — a chunk with no lore line gives no excerpt. Origin: the traversal design in docs/TRAVERSAL.md ("pick the most relevant chunk(s), and inside them the most relevant run of
 * whole lines").
 */
import { processTerm, queryTerms, tokenize } from '../search/tokenize.js';
import type { SourceExcerpt } from '../contracts/types.js';
import { excerptLineKind, isExcerptable, opensWithReference } from './lines.js';

/** A picked run of lines. Lines are 1-based inclusive in the original file; `chars` in UTF-16 code units. */
export interface ExcerptPick {
  line_start: number;
  line_end: number;
  /** The lines joined with `"\n"`, verbatim. */
  text: string;
  /** Characters (UTF-16 code units) of `text`. */
  chars: number;
  /** Distinct query terms covered by the run (0 when no line matched and the fallback run was taken). */
  terms_matched: number;
  /** Total query-term occurrences in the run. */
  hits: number;
}

/** Options of {@link pickExcerptLines}. */
export interface PickOptions {
  /** File line number of `lines[0]` (1-based); default 1, i.e. `lines` is the whole file. */
  lineOffset?: number;
}

const HEADING_RE = /^ {0,3}#{1,6}(?:\s|$)/;
const SETEXT_RE = /^ {0,3}(?:=+|-+)\s*$/;

/** True for a line that is not blank, not a heading and not a setext underline (a line of the note's text). */
export function isContentLine(line: string): boolean {
  return line.trim().length > 0 && !HEADING_RE.test(line) && !SETEXT_RE.test(line);
}

/** True for a lore line, one that may start or end an excerpt (`isExcerptable(excerptLineKind(line))`). */
export function isLoreLine(line: string): boolean {
  return isExcerptable(excerptLineKind(line));
}

/** Query terms of several queries together (union, first-seen order). */
export function queryTermSet(queries: readonly string[]): string[] {
  const out: string[] = [];
  for (const q of queries) for (const t of queryTerms(q)) if (!out.includes(t)) out.push(t);
  return out;
}

/** Per-line term counts: for each line, a map term → occurrences (only query terms). */
function lineTermCounts(lines: readonly string[], terms: ReadonlySet<string>): Map<string, number>[] {
  return lines.map((line) => {
    const m = new Map<string, number>();
    for (const tok of tokenize(line)) {
      const t = processTerm(tok);
      if (t !== null && terms.has(t)) m.set(t, (m.get(t) ?? 0) + 1);
    }
    return m;
  });
}

/**
 * Pick the most relevant run of whole lines whose text (lines joined with `"\n"`) has at most
 * `maxChars` characters (UTF-16 code units).
 *
 * @param lines the candidate lines (a chunk's lines, or a whole file), verbatim.
 * @param queries query texts; their terms are pooled.
 * @param maxChars upper bound on `text.length`, ≥ 1.
 * @returns the best run, or — when no line contains a query term — the first run of content lines of
 *   the first paragraph that fits; `null` when no content line fits in `maxChars` at all (a single line
 *   longer than the bound is never cut: excerpts are whole lines).
 */
export function pickExcerptLines(lines: readonly string[], queries: readonly string[], maxChars: number, options: PickOptions = {}): ExcerptPick | null {
  const offset = options.lineOffset ?? 1;
  const terms = new Set(queryTermSet(queries));
  const content = lines.map(isLoreLine);
  // The compact excerpts' rule (src/excerpts/lines.ts): a run whose first line opens with a word pointing
  // back, or whose last line is a lead-in ending with `:`, does not stand alone.
  const canStart = lines.map((l, i) => content[i] === true && !opensWithReference(l));
  const canEnd = lines.map((l) => !/:[*_]*$/.test(l.trimEnd()));
  const counts = lineTermCounts(lines, terms).map((m, i) => (content[i] ? m : new Map<string, number>()));
  const n = lines.length;
  type Run = { a: number; b: number; whole: boolean; distinct: number; hits: number; chars: number };
  const key = (r: Run): number[] => [r.whole && r.distinct > 0 ? 1 : 0, r.distinct, r.whole ? 1 : 0, r.hits, -r.chars];
  const before = (x: Run, y: Run): boolean => {
    const kx = key(x);
    const ky = key(y);
    for (let i = 0; i < kx.length; i++) if (kx[i] !== ky[i]) return (kx[i] as number) > (ky[i] as number);
    return false;
  };
  let best: Run | null = null;
  for (let a = 0; a < n; a++) {
    if (!content[a]) continue;
    let chars = -1;
    const seen = new Set<string>();
    let hits = 0;
    for (let b = a; b < n; b++) {
      chars += lines[b]!.length + 1;
      if (chars > maxChars) break;
      for (const [t, c] of counts[b]!) {
        seen.add(t);
        hits += c;
      }
      if (!content[b]) continue;
      const cand: Run = { a, b, whole: canStart[a] === true && canEnd[b] === true, distinct: seen.size, hits, chars };
      if (best === null || before(cand, best)) best = cand;
    }
  }
  if (best === null) return null;
  if (best.distinct === 0) {
    // No query term anywhere: the leading content lines that fit of the first paragraph that has a line
    // able to start a run (else of the first paragraph).
    const starts = canStart.indexOf(true);
    const a = starts >= 0 ? starts : content.indexOf(true);
    let b = a;
    let chars = lines[a]!.length;
    while (b + 1 < n && lines[b + 1]!.trim().length > 0 && chars + 1 + lines[b + 1]!.length <= maxChars) {
      b++;
      chars += 1 + lines[b]!.length;
    }
    while (b > a && !content[b]) b--;
    if (chars > maxChars) return null;
    const text = lines.slice(a, b + 1).join('\n');
    return { line_start: offset + a, line_end: offset + b, text, chars: text.length, terms_matched: 0, hits: 0 };
  }
  const text = lines.slice(best.a, best.b + 1).join('\n');
  return { line_start: offset + best.a, line_end: offset + best.b, text, chars: text.length, terms_matched: best.distinct, hits: best.hits };
}

/** Lower-snake slug of a name: NFC, lower case, runs of other characters → `_` (letters kept). */
export function slug(name: string): string {
  return name
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * The readable, stable `ref_id` of an excerpt: `lore.<note-stem slug>.chunk<N>`, for example
 * `lore.cold_wake_panic.chunk0`. Pass `qualify: true` to prefix the parent folder's slug
 * (`lore.events_cold_wake_panic.chunk0`) when two notes share a stem.
 */
export function excerptRefId(path: string, chunkIndex: number, qualify = false): string {
  const parts = path.replace(/\.md$/i, '').split('/');
  const stem = parts[parts.length - 1] ?? path;
  const parent = parts.length > 1 ? parts[parts.length - 2]! : '';
  const name = qualify && parent ? `${slug(parent)}_${slug(stem)}` : slug(stem);
  return `lore.${name || 'note'}.chunk${chunkIndex}`;
}

/**
 * A Ghostlight `source_excerpt` (`{ ref_id, source_ref, text }`, responder-packet schema `$defs`):
 * `source_ref` = `Namespace:path#chunkN`, `text` verbatim.
 */
export function makeSourceExcerpt(args: { namespace: string; path: string; chunk_index: number; text: string; ref_id?: string }): SourceExcerpt {
  return {
    ref_id: args.ref_id ?? excerptRefId(args.path, args.chunk_index),
    source_ref: `${args.namespace}:${args.path}#chunk${args.chunk_index}`,
    text: args.text,
  };
}

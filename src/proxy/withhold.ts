/**
 * Serving a note with hidden sections (docs/PROXY.md "Hidden sections"): the lines of a read that fall in a
 * hidden section are replaced by one neutral marker line per section, so the responder gets the rest of the
 * note, knows that something was withheld, and learns nothing of what (no heading, no words, no link
 * target, no line count). The ledger keeps the hash of each withheld span, never its text.
 */
import { createHash } from 'node:crypto';
import { sliceLines } from '../notes/lines.js';
import type { HiddenSection } from '../policy/types.js';

/** The line that stands where a hidden section was: the same for every section, note and session. */
export const WITHHELD_MARKER = '[withheld: part of this note is not available in this session]';

/** One withheld span of a read, for the ledger: its lines in the original file and the SHA-256 of their text. */
export interface WithheldSpan {
  /** 1-based inclusive lines (the part of the section inside the read). */
  line_start: number;
  line_end: number;
  /** SHA-256 (hex) of those lines joined with `\n` (UTF-8). */
  text_sha256: string;
}

/** The text a read serves and the spans it withheld. */
export interface WithheldText {
  /** The read's lines joined with `\n`, each overlapped section replaced by {@link WITHHELD_MARKER}. */
  text: string;
  /** The withheld spans, in line order (empty when the read overlaps no hidden section). */
  withheld: WithheldSpan[];
}

/**
 * Lines `start..end` (1-based, inclusive) of `lines` with every part that lies in one of `sections` (of
 * this note) replaced by one {@link WITHHELD_MARKER} line.
 */
export function withholdSections(lines: readonly string[], start: number, end: number, sections: readonly HiddenSection[]): WithheldText {
  const spans = sections
    .map((s) => ({ a: Math.max(start, s.line_start), b: Math.min(end, s.line_end) }))
    .filter((s) => s.a <= s.b)
    .sort((x, y) => x.a - y.a);
  if (spans.length === 0) return { text: sliceLines(lines, start, end), withheld: [] };
  const out: string[] = [];
  const withheld: WithheldSpan[] = [];
  let line = start;
  for (const { a, b } of spans) {
    if (b < line) continue;
    const from = Math.max(a, line);
    if (from > line) out.push(sliceLines(lines, line, from - 1));
    out.push(WITHHELD_MARKER);
    withheld.push({ line_start: from, line_end: b, text_sha256: createHash('sha256').update(sliceLines(lines, from, b), 'utf8').digest('hex') });
    line = b + 1;
  }
  if (line <= end) out.push(sliceLines(lines, line, end));
  return { text: out.join('\n'), withheld };
}

/**
 * Whether every line of `start..end` (1-based, inclusive) lies in one of `sections` (nothing of the read would
 * be visible). An empty range (`start > end`, an empty note's 1-0) has no line, so none of it is withheld:
 * false, never the vacuous "every line" that would answer an empty note as a hidden section.
 */
export function whollyWithheld(start: number, end: number, sections: readonly HiddenSection[]): boolean {
  if (start > end) return false;
  let line = start;
  const sorted = [...sections].sort((x, y) => x.line_start - y.line_start);
  for (const s of sorted) {
    if (s.line_start <= line && s.line_end >= line) line = s.line_end + 1;
  }
  return line > end;
}

/**
 * The line numbers the responder sees in a note with hidden sections (docs/PROXY.md "Hidden sections",
 * "Line numbers"): every hidden section — overlapping or nested ones merged — counts as ONE line, the
 * {@link WITHHELD_MARKER} line that stands in its place in a read, so no number the proxy gives (a read's
 * `line_start` / `line_end`, a `#La-Lb` ref, a search hit's lines, a link's line) and no range it accepts or
 * refuses tells how long a hidden section is or where the note ends on disk. In a note without hidden
 * sections view lines are disk lines. All lines are 1-based and inclusive; the ledger keeps disk lines.
 */
export interface LineView {
  /** Lines the responder sees: the note's disk lines less each hidden section's length, plus one marker line per section. */
  readonly lineCount: number;
  /** The view line of a disk line (a line inside a hidden section: its marker line). */
  toView(disk: number): number;
  /** The first disk line of a view line (a marker line: the hidden section's first line). */
  firstDisk(view: number): number;
  /** The last disk line of a view line (a marker line: the hidden section's last line). */
  lastDisk(view: number): number;
}

/**
 * The {@link LineView} of a note of `diskLineCount` lines whose hidden sections are `sections`.
 */
export function lineView(diskLineCount: number, sections: readonly HiddenSection[]): LineView {
  const spans: { a: number; b: number }[] = [];
  for (const s of [...sections].sort((x, y) => x.line_start - y.line_start)) {
    const last = spans[spans.length - 1];
    if (last && s.line_start <= last.b) last.b = Math.max(last.b, s.line_end);
    else spans.push({ a: s.line_start, b: s.line_end });
  }
  const toView = (disk: number): number => {
    let shift = 0;
    for (const { a, b } of spans) {
      if (disk < a) break;
      if (disk <= b) return a - shift;
      shift += b - a;
    }
    return disk - shift;
  };
  const fromView = (view: number, end: boolean): number => {
    let shift = 0;
    for (const { a, b } of spans) {
      if (view < a - shift) break;
      if (view === a - shift) return end ? b : a;
      shift += b - a;
    }
    return view + shift;
  };
  return {
    lineCount: diskLineCount === 0 ? 0 : toView(diskLineCount),
    toView,
    firstDisk: (view) => fromView(view, false),
    lastDisk: (view) => fromView(view, true),
  };
}

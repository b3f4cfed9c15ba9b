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

/** Whether every line of `start..end` lies in one of `sections` (nothing of the read would be visible). */
export function whollyWithheld(start: number, end: number, sections: readonly HiddenSection[]): boolean {
  let line = start;
  const sorted = [...sections].sort((x, y) => x.line_start - y.line_start);
  for (const s of sorted) {
    if (s.line_start <= line && s.line_end >= line) line = s.line_end + 1;
  }
  return line > end;
}

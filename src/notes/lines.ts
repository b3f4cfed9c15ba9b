/**
 * Line conventions shared by every stage (see the header of src/types.ts):
 * lines are 1-based and inclusive, a line break is CRLF, a lone CR or a lone LF (each one break),
 * a UTF-8 BOM is not part of line 1's text, and a final line break does not start an extra line.
 * The text of a range is its lines joined with `"\n"`.
 *
 * Everyone slices note text through {@link splitLines} and {@link sliceLines}, so a chunk, an excerpt
 * and a research_trace entry built from the same range are byte-identical.
 */
import { LoretraceError } from '../errors.js';
import type { LineEnding } from '../types.js';

const BREAK = /\r\n|\r|\n/;

/**
 * Split a note's text into lines.
 *
 * - Breaks: CRLF, lone CR and lone LF each end one line (mixed endings are fine).
 * - A leading U+FEFF (the BOM, as left by a non-BOM-stripping decoder) is dropped from line 1.
 * - A final break does not add a line: `"a\nb\n"` → `["a", "b"]`, `"a\nb"` → `["a", "b"]`,
 *   `"\n"` → `[""]`, `""` → `[]`.
 *
 * @param text decoded note text (UTF-16 string).
 * @returns the lines without their breaks; `result.length` is the note's `line_count`.
 */
export function splitLines(text: string): string[] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return [];
  const lines = text.split(BREAK);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The text of lines `lineStart..lineEnd` (1-based, inclusive) joined with `"\n"`, with no trailing break.
 *
 * @throws LoretraceError `bad_line_range` unless `1 ≤ lineStart ≤ lineEnd ≤ lines.length` and both are
 *   integers. The message names the range and the line count.
 */
export function sliceLines(lines: readonly string[], lineStart: number, lineEnd: number): string {
  if (
    !Number.isInteger(lineStart) ||
    !Number.isInteger(lineEnd) ||
    lineStart < 1 ||
    lineEnd < lineStart ||
    lineEnd > lines.length
  ) {
    throw new LoretraceError(
      'bad_line_range',
      `line range ${lineStart}-${lineEnd} is outside 1-${lines.length}: expected integers with 1 ≤ start ≤ end ≤ ${lines.length}`,
      { expected: `1 ≤ start ≤ end ≤ ${lines.length}` },
    );
  }
  if (lineStart === lineEnd) return lines[lineStart - 1] as string;
  return lines.slice(lineStart - 1, lineEnd).join('\n');
}

/**
 * How a text's lines are terminated: `lf`, `crlf`, `cr`, `mixed` (more than one kind), or `none`
 * (no break at all).
 */
export function detectLineEnding(text: string): LineEnding {
  let lf = false;
  let crlf = false;
  let cr = false;
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
    if (text.charCodeAt(i + 1) === 10) crlf = true;
    else cr = true;
  }
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (text.charCodeAt(i - 1) !== 13) {
      lf = true;
      break;
    }
  }
  const kinds = Number(lf) + Number(crlf) + Number(cr);
  if (kinds === 0) return 'none';
  if (kinds > 1) return 'mixed';
  return lf ? 'lf' : crlf ? 'crlf' : 'cr';
}

/**
 * Offsets (UTF-16 code units) at which each line of `text` starts, for O(log n) offset → line lookups.
 * `text` must already be BOM-free. Index 0 holds line 1's start (always 0). Internal helper.
 */
export function lineStartOffsets(text: string): number[] {
  const starts = [0];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) starts.push(i + 1);
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    }
  }
  // A final break does not start a line.
  if (starts.length > 1 && starts[starts.length - 1] === n) starts.pop();
  return starts;
}

/**
 * 1-based line and column of a code-unit offset, given {@link lineStartOffsets}. Columns count UTF-16
 * code units from the start of the line (after the BOM on line 1). Internal helper.
 */
export function locateOffset(starts: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
}

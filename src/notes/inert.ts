/**
 * Obsidian comments and math: regions of a note whose text is not markdown, so nothing inside them is a
 * link, an embed, a tag, a block marker or a heading.
 *
 * - `%%…%%` is a comment, inline or spanning lines (blank lines included): "Comments are only visible in
 *   Editing view" (Obsidian help, en/Editing and formatting/Basic formatting syntax.md in obsidianmd/obsidian-help → Comments). Obsidian's metadata cache does
 *   not record links inside comments (links in comments are not in backlinks or the graph:
 *   RyotaUshio/obsidian-pdf-plus issue #356, "that's how Obsidian's parser is designed").
 * - `$$…$$` (display) and `$…$` (inline) are MathJax/LaTeX (Obsidian help, "Advanced formatting syntax"
 *   → Math): their content is TeX, so `[[x]]` or a `#` line inside is TeX, not markdown.
 *
 * The regions are found by one linear scan that skips fenced code and code spans (where `%%` and `$` are
 * literal) and backslash escapes, and are then *masked*: every character of a region except line breaks
 * is replaced by {@link MASK}, so the text micromark parses has the same length, lines and offsets as
 * the file. Chunks and link `raw` text are still cut from the original text; only the structure is read
 * from the masked one. An unclosed `%%` or `$$` is literal text (nothing is hidden without its closer).
 * Inline math follows Pandoc's `tex_math_dollars`, which Obsidian's renderer matches: the opening `$` is
 * followed by a non-space, the closing `$` (on the same line) is preceded by a non-space and not followed
 * by a digit — so `costs $5 and $6` is not math.
 */
import { containerPrefix, fenceCloses, fenceOpen } from './pathological.js';

/** The character that replaces masked text: U+E000, private use (no markdown meaning, one code unit). */
export const MASK = '\uE000';

/** A comment or math region: UTF-16 offsets `[start, end)` in the text, delimiters included. */
export interface InertRegion {
  kind: 'comment' | 'math';
  start: number;
  end: number;
}

/** What {@link maskInert} returns: the masked text (same length as the input) and the regions. */
export interface MaskedText {
  text: string;
  regions: InertRegion[];
}

/**
 * Find and mask the comment and math regions of `text` (BOM removed). `lines`/`lineStarts` as in
 * MarkdownSyntax; `bodyStart` = first line after the frontmatter (1 without), so YAML is never masked.
 * Linear in the text's length; returns the text itself when it holds no `%%` and no `$`.
 */
export function maskInert(text: string, lines: readonly string[], lineStarts: readonly number[], bodyStart: number): MaskedText {
  if (!text.includes('%%') && !text.includes('$')) return { text, regions: [] };
  const regions: InertRegion[] = [];
  let open: { kind: 'comment' | 'display'; start: number } | null = null;
  let fence: { ch: number; len: number } | null = null;
  for (let ln = bodyStart; ln <= lines.length; ln++) {
    const line = lines[ln - 1] as string;
    const base = lineStarts[ln - 1] as number;
    if (open === null) {
      const rest = line.slice(containerPrefix(line).rest);
      if (fence) {
        if (fenceCloses(rest, fence)) fence = null;
        continue;
      }
      const f = fenceOpen(rest);
      if (f) {
        fence = f;
        continue;
      }
    }
    open = scanLine(line, base, open, regions);
  }
  if (regions.length === 0) return { text, regions };
  let out = '';
  let at = 0;
  for (const r of regions) {
    out += text.slice(at, r.start) + text.slice(r.start, r.end).replace(/[^\r\n]/g, MASK);
    at = r.end;
  }
  return { text: out + text.slice(at), regions };
}

/** One line's regions; carries an open multi-line comment or display-math region in and out. */
function scanLine(line: string, base: number, open: { kind: 'comment' | 'display'; start: number } | null, regions: InertRegion[]): { kind: 'comment' | 'display'; start: number } | null {
  const n = line.length;
  let i = 0;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (open !== null) {
      const closer = open.kind === 'comment' ? 37 : 36; // `%%` or `$$`
      if (c === closer && line.charCodeAt(i + 1) === closer) {
        regions.push({ kind: open.kind === 'comment' ? 'comment' : 'math', start: open.start, end: base + i + 2 });
        open = null;
        i += 2;
      } else i++;
      continue;
    }
    if (c === 92) {
      i += 2; // a backslash escape: the next character is literal
      continue;
    }
    if (c === 96) {
      i = skipCodeSpan(line, i);
      continue;
    }
    if (c === 37 && line.charCodeAt(i + 1) === 37) {
      open = { kind: 'comment', start: base + i };
      i += 2;
      continue;
    }
    if (c === 36 && line.charCodeAt(i + 1) === 36) {
      open = { kind: 'display', start: base + i };
      i += 2;
      continue;
    }
    if (c === 36) {
      const end = inlineMathEnd(line, i);
      if (end !== -1) {
        regions.push({ kind: 'math', start: base + i, end: base + end });
        i = end;
        continue;
      }
    }
    i++;
  }
  return open;
}

/** After a backtick run at `i`: the index past its matching closer on this line, or past the run when there is none. */
function skipCodeSpan(line: string, i: number): number {
  let j = i;
  while (line.charCodeAt(j) === 96) j++;
  const len = j - i;
  let k = j;
  while (k < line.length) {
    if (line.charCodeAt(k) !== 96) {
      k++;
      continue;
    }
    let m = k;
    while (line.charCodeAt(m) === 96) m++;
    if (m - k === len) return m;
    k = m;
  }
  return j;
}

/** Inline math from the `$` at `i` (Pandoc's rule, see the module doc): the index past the closing `$`, or -1. */
function inlineMathEnd(line: string, i: number): number {
  const first = line.charCodeAt(i + 1);
  if (Number.isNaN(first) || first === 32 || first === 9 || first === 36) return -1;
  for (let k = i + 1; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (c === 92) {
      k++;
      continue;
    }
    if (c !== 36) continue;
    const before = line.charCodeAt(k - 1);
    const after = line.charCodeAt(k + 1);
    if (before === 32 || before === 9) return -1;
    if (after >= 48 && after <= 57) return -1;
    return k + 1;
  }
  return -1;
}

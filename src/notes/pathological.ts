/**
 * Pathological markdown: a deterministic, linear pre-scan that measures the shapes on which micromark
 * (CommonMark's reference tokenizer, under remark-parse) is superlinear, and the degraded line-scan
 * parser used for a note over a threshold. Internal module of the notes stage; docs/PARSING.md has the
 * rules and the measurements behind the thresholds.
 *
 * Why: micromark resolves emphasis, link labels, footnote calls and raw HTML by walking back (or
 * forward) over the events of the whole paragraph for every delimiter, and it re-checks every open
 * container on every line; list preparation walks every nested list's events again. Measured in node 20
 * on this parser stack: `'*_'.repeat(10000)` in one paragraph 3 s; `'a <!--'.repeat(20000)` 36 s;
 * `'] *a* _b_ '.repeat(10000)` 29 s; a 500-line list nested one level deeper per line 7 s; one line of
 * 40,000 `>` 19 s. None of it is a bug in loretrace's code, and none of it shows on real notes.
 *
 * A second cost is linear but heavy: micromark keeps a tokenizer or its events for every table cell,
 * list item, paragraph, line and delimiter of a run until the run ends (about 2–9 KB each), so a 2.5 MB
 * note of one table of 1.25 million tiny cells needs about 8 GB. The parse-unit thresholds (`block_work`,
 * `block_total`) bound that.
 *
 * The guard is never time-based (output must be byte-identical on any machine): it counts characters.
 * The limits are set so the superlinear part stays under about a second, and far above the real vault
 * (AetheriaLore's largest values are asserted in tests/hostile-parse.test.ts).
 */
import type { Code, Heading, List, ListItem, Paragraph, PhrasingContent, Root, RootContent, Table, TableCell, TableRow, Text, Yaml } from 'mdast';
import type { Position } from 'unist';
import { locateOffset } from './lines.js';
import { parseWikiLinkContent, type WikiLink } from './wikilink.js';

/**
 * The thresholds of the pre-scan (N = the note's length in UTF-16 code units, BOM removed).
 *
 * - `inline_work` = Σ over inline blocks of D × L, where an inline block is a paragraph, an ATX heading
 *   line, a list item's first line with its continuation lines, or one table row; D = its count of
 *   `*`, `_`, `[`, `]`, `<` and `` ` `` characters (the delimiters micromark walks the paragraph for) and
 *   L = its length in UTF-16 code units (line breaks included). Limit `50,000,000 + 50 × N`.
 * - `nesting_work` = Σ over lines of d², d = the line's container depth (block quote `>` markers plus
 *   list items: open items by indentation, plus further markers on the same line). Limit
 *   `1,000,000 + 2 × N`.
 *
 * Frontmatter is not measured; fenced code (backtick or tilde fences) counts only its non-blank lines,
 * as parse units ({@link PathologyThreshold}).
 */
export const PATHOLOGY_LIMITS = {
  inlineWorkBase: 50_000_000,
  inlineWorkPerChar: 50,
  nestingWorkBase: 1_000_000,
  nestingWorkPerChar: 2,
  blockWorkRun: 30_000,
  blockTotalBase: 100_000,
  blockTotalCharsPerUnit: 5,
  headingsPerNote: 50_000,
} as const;

/**
 * Which threshold a note exceeded. `headings` counts the note's top-level headings (ATX lines and setext
 * underlines outside code, block quotes and list markers), each of which starts a chunk (src/chunks/chunk.ts):
 * limit {@link PATHOLOGY_LIMITS}`.headingsPerNote` (50,000; an 8 MiB note of ordinary lore has about 19,000
 * chunks). Over it, the degraded parse makes the first 50,000 of them headings and reads the rest as text of the
 * section before them, so a note of nothing but headings (8 MiB of `# h` lines: 2 million) holds at most 50,000
 * chunks and heading nodes instead of one each. `block_work` and `block_total` count parse units: every non-blank line,
 * every block-quote `>` and list marker, every inline block (as for `inline_work`), every inline delimiter
 * (`*` `_` `[` `]` `<` `` ` ``, as for `inline_work`) and every table cell (a table row counts its cells,
 * so a row of 5,000 cells is 5,000 units). micromark keeps a tokenizer and
 * its events for each of them until its run ends (about 2–9 KB of heap per unit, measured), and the mdast
 * tree keeps a node for each to the end of the parse (about 0.5 KB). `block_work` = the units of the
 * largest micromark run (the whole note, or its largest sectioned piece: src/notes/sections.ts), limit
 * 30,000; `block_total` = the note's units, limit `100,000 + N / 5`.
 */
export type PathologyThreshold = 'inline_work' | 'nesting_work' | 'block_work' | 'block_total' | 'headings';

/** One exceeded threshold: the measured value, the limit, and where the largest contribution is. */
export interface PathologyHit {
  threshold: PathologyThreshold;
  /** Measured work (see {@link PATHOLOGY_LIMITS}). */
  value: number;
  /** The note's limit for this threshold. */
  limit: number;
  /** 1-based line where the largest contribution starts (inline block start, or deepest line). */
  line: number;
  /** inline_work: last line of that inline block; nesting_work: same as `line`; block_*: last line of the run or note. */
  line_end: number;
  /**
   * inline_work: delimiters in that block; nesting_work: the container depth of that line; block_*: table
   * cells in the run (block_work) or note (block_total); headings: the note's top-level headings (`line` is
   * then the first past the limit).
   */
  count: number;
  /** inline_work: that block's length in UTF-16 code units; nesting_work and block_*: 0. */
  length: number;
}

/** What the pre-scan measured. */
export interface MarkdownShape {
  inline_work: number;
  nesting_work: number;
  /** Largest single inline block contribution D × L, with its lines, D and L. */
  worst_inline: { line_start: number; line_end: number; delimiters: number; length: number; work: number };
  /** Deepest line (first of equals) and its depth. */
  deepest: { line: number; depth: number };
  /** Parse units of the whole note (see {@link PathologyThreshold}) and its table cells. */
  blocks: { units: number; cells: number; line_start: number; line_end: number };
  /** The micromark run with the most parse units (first of equals): its lines, units and table cells. */
  largest_run: { units: number; cells: number; line_start: number; line_end: number };
  /**
   * Top-level headings (see `headings` in {@link PathologyThreshold}) and the line of the first one past
   * {@link PATHOLOGY_LIMITS}`.headingsPerNote` (0 when there is none).
   */
  headings: { count: number; first_over_limit: number };
}

/** A fence opener on a line's text after its container prefix: marker char and length, or null. */
export function fenceOpen(rest: string): { ch: number; len: number } | null {
  const ch = rest.charCodeAt(0);
  if (ch !== 96 && ch !== 126) return null;
  let n = 0;
  while (rest.charCodeAt(n) === ch) n++;
  if (n < 3) return null;
  if (ch === 96 && rest.indexOf('`', n) !== -1) return null; // backtick info may not contain a backtick
  return { ch, len: n };
}

/** True when `rest` closes a fence opened with `open` (same char, at least as long, then whitespace). */
export function fenceCloses(rest: string, open: { ch: number; len: number }): boolean {
  let n = 0;
  while (rest.charCodeAt(n) === open.ch) n++;
  if (n < open.len) return false;
  for (let i = n; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** Width in columns of leading spaces and tabs (tab = to the next multiple of 4) and the index after them. */
function leadingIndent(line: string): { width: number; end: number } {
  let width = 0;
  let i = 0;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) width++;
    else if (c === 9) width += 4 - (width % 4);
    else break;
  }
  return { width, end: i };
}

/** Length of a list marker (`-`, `+`, `*`, `1.`, `1)`) at `i` followed by a space, tab or end of line; 0 if none. */
function listMarkerAt(line: string, i: number): number {
  const c = line.charCodeAt(i);
  let n = 0;
  if (c === 45 || c === 43 || c === 42) n = 1;
  else {
    while (n < 9 && line.charCodeAt(i + n) >= 48 && line.charCodeAt(i + n) <= 57) n++;
    if (n === 0) return 0;
    const d = line.charCodeAt(i + n);
    if (d !== 46 && d !== 41) return 0;
    n++;
  }
  const after = line.charCodeAt(i + n);
  return Number.isNaN(after) || after === 32 || after === 9 ? n : 0;
}

/**
 * A line's container prefix: block-quote markers and list markers, in any order, with spaces between.
 * Returns the number of each, whether the line starts (after indentation) with a list marker, and the
 * index where the content starts.
 */
export function containerPrefix(line: string): { quotes: number; markers: number; leadingMarker: number; rest: number } {
  let quotes = 0;
  let markers = 0;
  let leadingMarker = 0;
  let i = 0;
  for (;;) {
    while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (line.charCodeAt(i) === 62) {
      quotes++;
      i++;
      continue;
    }
    const m = listMarkerAt(line, i);
    if (m > 0) {
      if (quotes === 0 && markers === 0) leadingMarker = m;
      markers++;
      i += m;
      continue;
    }
    return { quotes, markers, leadingMarker, rest: i };
  }
}

const ATX = /^ {0,3}#{1,6}(?:[ \t]|$)/;
/** A setext heading underline (`===` or `---`, up to 3 spaces of indentation). */
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
/** The start of an HTML comment block: `<!--` after at most 3 spaces. */
const HTML_COMMENT_OPEN = /^ {0,3}<!--/;

/**
 * A GFM table delimiter row (`| --- | :-: |`, `---|---`): cells of `:?-+:?` separated by `|`, at least one
 * `|`. Hand-written and linear (a regex with adjacent optional whitespace runs backtracks quadratically).
 */
function isTableDelimiterRow(s: string): boolean {
  const n = s.length;
  let i = 0;
  let pipes = 0;
  let cells = 0;
  const ws = (): void => {
    while (i < n && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  };
  ws();
  if (s.charCodeAt(i) === 124) {
    pipes++;
    i++;
  }
  for (;;) {
    ws();
    if (i === n) break;
    if (s.charCodeAt(i) === 58) i++;
    const dashes = i;
    while (s.charCodeAt(i) === 45) i++;
    if (i === dashes) return false;
    if (s.charCodeAt(i) === 58) i++;
    cells++;
    ws();
    if (i === n) break;
    if (s.charCodeAt(i) !== 124) return false;
    pipes++;
    i++;
  }
  return cells > 0 && pipes > 0;
}

/**
 * Cells of a table row (`rest` = the line after its container prefix): unescaped `|` separate cells, a
 * leading and a trailing `|` open and close the row (GFM); at least 1.
 */
function tableCells(rest: string): number {
  let pipes = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 124) pipes++;
  }
  if (pipes === 0) return 1;
  const t = rest.trim();
  let cells = pipes + 1;
  if (t.charCodeAt(0) === 124) cells--;
  if (t.length > 1 && t.charCodeAt(t.length - 1) === 124 && t.charCodeAt(t.length - 2) !== 92) cells--;
  return Math.max(cells, 1);
}

/** Delimiters micromark walks a paragraph for: `*`, `_`, `[`, `]`, `<`, `` ` ``. */
function countDelimiters(s: string, from: number): number {
  let d = 0;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 42 || c === 95 || c === 91 || c === 93 || c === 60 || c === 96) d++;
  }
  return d;
}

/**
 * The frontmatter block as remark-frontmatter finds it: line 1 is `---` (trailing spaces allowed) and a
 * later line is `---` too. Returns the 1-based fence lines, or null.
 */
export function frontmatterFences(lines: readonly string[]): { line_start: number; line_end: number } | null {
  const fence = /^---[ \t]*$/;
  if (lines.length < 2 || !fence.test(lines[0] as string)) return null;
  for (let i = 1; i < lines.length; i++) if (fence.test(lines[i] as string)) return { line_start: 1, line_end: i + 1 };
  return null;
}

/**
 * Measure a note (linear in its length). `lines` = `splitLines(text)`; `bodyStart` = the first line after
 * the frontmatter (1 without frontmatter); `runStarts` = the 1-based first lines of the second and later
 * micromark runs, ascending (the sectioned pieces' starts; empty when the note is parsed in one run).
 */
export function measureMarkdown(lines: readonly string[], bodyStart: number, runStarts: readonly number[] = []): MarkdownShape {
  let inlineWork = 0;
  let nestingWork = 0;
  const worst = { line_start: 0, line_end: 0, delimiters: 0, length: 0, work: -1 };
  const deepest = { line: 0, depth: -1 };
  // Parse units (block_work, block_total): of the note, of the current micromark run, of the largest run.
  const blocks = { units: 0, cells: 0, line_start: bodyStart, line_end: lines.length };
  const largest = { units: -1, cells: 0, line_start: 0, line_end: 0 };
  let run = { units: 0, cells: 0, line_start: 1 };
  let nextRun = 0;
  const closeRun = (lastLine: number): void => {
    if (run.units > largest.units) Object.assign(largest, { units: run.units, cells: run.cells, line_start: run.line_start, line_end: lastLine });
  };
  const addUnits = (units: number, cells: number): void => {
    blocks.units += units;
    blocks.cells += cells;
    run.units += units;
    run.cells += cells;
  };

  let segStart = 0; // 0 = no open inline block
  let segEnd = 0;
  let segD = 0;
  let segL = 0;
  const closeSegment = (): void => {
    if (segStart !== 0) {
      const w = segD * segL;
      inlineWork += w;
      if (w > worst.work) Object.assign(worst, { line_start: segStart, line_end: segEnd, delimiters: segD, length: segL, work: w });
    }
    segStart = 0;
    segD = 0;
    segL = 0;
  };
  const addToSegment = (line: number, d: number, l: number): void => {
    if (segStart === 0) {
      segStart = line;
      addUnits(1, 0);
    }
    segEnd = line;
    segD += d;
    segL += l;
  };

  const headings = { count: 0, first_over_limit: 0 };
  const heading = (ln: number): void => {
    headings.count += 1;
    if (headings.count === PATHOLOGY_LIMITS.headingsPerNote + 1) headings.first_over_limit = ln;
  };
  let fence: { ch: number; len: number } | null = null;
  let table = false;
  let prevBlank = true;
  let prevQuotes = 0;
  const listStack: number[] = []; // content columns of open list items (estimated by indentation)

  for (let ln = bodyStart; ln <= lines.length; ln++) {
    while (nextRun < runStarts.length && (runStarts[nextRun] as number) <= ln) {
      closeRun((runStarts[nextRun] as number) - 1);
      run = { units: 0, cells: 0, line_start: runStarts[nextRun] as number };
      nextRun++;
    }
    const line = lines[ln - 1] as string;
    const prefix = containerPrefix(line);
    const rest = line.slice(prefix.rest);
    const blank = rest.trim() === '';

    // Container depth (nesting_work).
    const indent = leadingIndent(line);
    let depth: number;
    if (prefix.leadingMarker > 0) {
      while (listStack.length > 0 && (listStack[listStack.length - 1] as number) > indent.width) listStack.pop();
      listStack.push(indent.width + prefix.leadingMarker + 1);
      depth = listStack.length + prefix.markers - 1 + prefix.quotes;
    } else if (blank && prefix.quotes === 0) {
      depth = listStack.length;
    } else {
      if (indent.width === 0 && prevBlank && prefix.quotes === 0) listStack.length = 0;
      while (listStack.length > 0 && (listStack[listStack.length - 1] as number) > indent.width) listStack.pop();
      depth = listStack.length + prefix.markers + prefix.quotes;
    }
    nestingWork += depth * depth;
    if (depth > deepest.depth) Object.assign(deepest, { line: ln, depth });

    // Inline blocks (inline_work).
    if (fence) {
      // Code lines are parse units too (a line prefix, a value and a line ending each), not inline work.
      if (!blank) addUnits(1, 0);
      if (fenceCloses(rest, fence)) fence = null;
      prevBlank = blank;
      continue;
    }
    const open = fenceOpen(rest);
    if (open) {
      addUnits(1 + prefix.quotes + prefix.markers, 0);
      closeSegment();
      fence = open;
      table = false;
      prevBlank = false;
      continue;
    }
    if (blank) {
      closeSegment();
      table = false;
      prevBlank = true;
      prevQuotes = prefix.quotes;
      continue;
    }
    const l = line.length + 1;
    const d = countDelimiters(line, prefix.rest);
    addUnits(1 + prefix.quotes + prefix.markers + d, 0);
    const topLevel = prefix.quotes === 0 && prefix.markers === 0;
    // A setext underline under a paragraph line makes the paragraph a heading (and a chunk) too; counted only,
    // the other measures read the line as before.
    if (topLevel && segStart !== 0 && !table && SETEXT_UNDERLINE.test(line)) heading(ln);
    if (ATX.test(rest)) {
      if (topLevel) heading(ln);
      closeSegment();
      addToSegment(ln, d, l);
      closeSegment();
      table = false;
    } else if (table) {
      closeSegment();
      addToSegment(ln, d, l);
      closeSegment();
      const cells = tableCells(rest);
      addUnits(cells - 1, cells);
    } else if (rest.includes('|') && isTableDelimiterRow(rest)) {
      // A table's delimiter row: the header row (the open block) ends; each later row is its own block.
      // The header row and the delimiter row each have the delimiter row's cells.
      closeSegment();
      table = true;
      const cells = tableCells(rest);
      addUnits(2 * cells, 2 * cells);
    } else {
      if (prefix.markers > 0 || prefix.quotes !== prevQuotes) closeSegment();
      addToSegment(ln, d, l);
    }
    prevBlank = false;
    prevQuotes = prefix.quotes;
  }
  closeSegment();
  closeRun(lines.length);
  if (worst.work < 0) worst.work = 0;
  if (deepest.depth < 0) deepest.depth = 0;
  return { inline_work: inlineWork, nesting_work: nestingWork, worst_inline: worst, deepest, blocks, largest_run: largest, headings };
}

/**
 * The thresholds a note exceeds (empty for every ordinary note). `textLength` = N in UTF-16 code units.
 */
export function pathologyHits(shape: MarkdownShape, textLength: number): PathologyHit[] {
  const hits: PathologyHit[] = [];
  const inlineLimit = PATHOLOGY_LIMITS.inlineWorkBase + PATHOLOGY_LIMITS.inlineWorkPerChar * textLength;
  if (shape.inline_work > inlineLimit) {
    const w = shape.worst_inline;
    hits.push({ threshold: 'inline_work', value: shape.inline_work, limit: inlineLimit, line: w.line_start, line_end: w.line_end, count: w.delimiters, length: w.length });
  }
  const nestingLimit = PATHOLOGY_LIMITS.nestingWorkBase + PATHOLOGY_LIMITS.nestingWorkPerChar * textLength;
  if (shape.nesting_work > nestingLimit) {
    hits.push({ threshold: 'nesting_work', value: shape.nesting_work, limit: nestingLimit, line: shape.deepest.line, line_end: shape.deepest.line, count: shape.deepest.depth, length: 0 });
  }
  const run = shape.largest_run;
  if (run.units > PATHOLOGY_LIMITS.blockWorkRun) {
    hits.push({ threshold: 'block_work', value: run.units, limit: PATHOLOGY_LIMITS.blockWorkRun, line: run.line_start, line_end: run.line_end, count: run.cells, length: 0 });
  }
  const totalLimit = PATHOLOGY_LIMITS.blockTotalBase + Math.floor(textLength / PATHOLOGY_LIMITS.blockTotalCharsPerUnit);
  if (shape.blocks.units > totalLimit) {
    const b = shape.blocks;
    hits.push({ threshold: 'block_total', value: b.units, limit: totalLimit, line: b.line_start, line_end: b.line_end, count: b.cells, length: 0 });
  }
  if (shape.headings.count > PATHOLOGY_LIMITS.headingsPerNote) {
    const h = shape.headings;
    hits.push({ threshold: 'headings', value: h.count, limit: PATHOLOGY_LIMITS.headingsPerNote, line: h.first_over_limit, line_end: shape.blocks.line_end, count: h.count, length: 0 });
  }
  return hits;
}

const fmt = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ',');

/** The `pathological_markdown` finding message for one hit (path and line first). */
export function pathologyMessage(path: string, hit: PathologyHit): string {
  const tail = '; parsed in degraded mode (headings by line scan, wikilinks and embeds only, no emphasis/list/table structure)';
  if (hit.threshold === 'inline_work') {
    const where = hit.line === hit.line_end ? `line ${hit.line}` : `lines ${hit.line}-${hit.line_end}`;
    return `${path}:${hit.line}: pathological markdown: inline_work ${fmt(hit.value)} exceeds the limit ${fmt(hit.limit)} (${fmt(PATHOLOGY_LIMITS.inlineWorkBase)} + ${PATHOLOGY_LIMITS.inlineWorkPerChar} per character); the largest inline block (${where}) has ${fmt(hit.count)} delimiters (* _ [ ] < \`) in ${fmt(hit.length)} characters${tail}`;
  }
  if (hit.threshold === 'headings') {
    return `${path}:${hit.line}: pathological markdown: ${fmt(hit.value)} top-level headings exceed the limit ${fmt(hit.limit)} (one chunk each); the first ${fmt(hit.limit)} are chunk boundaries and heading targets, the ${fmt(hit.value - hit.limit)} from line ${hit.line} on are read as text of the section before them (lines ${hit.line}-${hit.line_end} are kept, chunked by the word budget)${tail}`;
  }
  if (hit.threshold === 'block_work' || hit.threshold === 'block_total') {
    const units = 'parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < ` delimiters, table cells)';
    const where = hit.line === hit.line_end ? `line ${hit.line}` : `lines ${hit.line}-${hit.line_end}`;
    const cells = hit.count > 0 ? `, ${fmt(hit.count)} of them table cells` : '';
    return hit.threshold === 'block_work'
      ? `${path}:${hit.line}: pathological markdown: block_work ${fmt(hit.value)} exceeds the limit ${fmt(hit.limit)} ${units} in one micromark run; ${where} ${hit.line === hit.line_end ? 'is' : 'are'} one run${cells}${tail}`
      : `${path}:${hit.line}: pathological markdown: block_total ${fmt(hit.value)} exceeds the limit ${fmt(hit.limit)} (${fmt(PATHOLOGY_LIMITS.blockTotalBase)} + 1 per ${PATHOLOGY_LIMITS.blockTotalCharsPerUnit} characters) ${units} in the note (${where})${cells}${tail}`;
  }
  return `${path}:${hit.line}: pathological markdown: nesting_work ${fmt(hit.value)} exceeds the limit ${fmt(hit.limit)} (${fmt(PATHOLOGY_LIMITS.nestingWorkBase)} + ${PATHOLOGY_LIMITS.nestingWorkPerChar} per character); line ${hit.line} is nested ${fmt(hit.count)} containers deep (lists and block quotes)${tail}`;
}

// ---------------------------------------------------------------------------------------------------
// Degraded parse: a linear line scan producing a shallow mdast (yaml, code, heading, paragraph nodes
// with text, inlineCode and wikiLink children) that chunkNote and extractLinks work on unchanged.

/**
 * Parse `text` (BOM removed) without micromark, in linear time. Rules (docs/PARSING.md, "Degraded mode"):
 * frontmatter as remark-frontmatter finds it; fenced code (backticks or tildes, after any container
 * prefix) → `code`; ATX headings (≤ 3 spaces of indentation, closing `#`s stripped) and setext headings
 * (a paragraph of plain lines followed by `===` or `---`) → `heading`; every other run of non-blank lines
 * → `paragraph`, a new one at each list-marker line or block-quote depth change; a paragraph opened by a
 * list marker is wrapped in a one-item `list` (flat: nesting is not rebuilt); a paragraph whose second line
 * is a table delimiter row becomes a one-cell `table`; a line indented 4+ columns that does not continue
 * a list item starts indented `code`. Inline: backslash
 * escapes, code spans (same-length backtick runs) → `inlineCode`, the wikilink grammar → `wikiLink`,
 * everything else text (no emphasis, links, HTML). `options.frontmatter: false` reads a top `---` block as
 * body text, as {@link parseMarkdown} does. `options.maxHeadings` (given when the note exceeds the `headings`
 * threshold): after that many top-level headings, ATX lines and setext underlines are paragraph text (a run of
 * such lines is one paragraph), so the tree and the chunks stay bounded; no line is dropped.
 */
export function degradedRoot(text: string, lines: readonly string[], lineStarts: readonly number[], options: { frontmatter?: boolean; maxHeadings?: number } = {}): Root {
  const n = text.length;
  // Past `maxHeadings` top-level headings (the `headings` threshold), a heading line is paragraph text.
  const maxHeadings = options.maxHeadings ?? Number.POSITIVE_INFINITY;
  let headingCount = 0;
  // Nodes that span the same characters share one position object, and positions share their points: a
  // note of many one-line blocks (each a list, item, paragraph and text node) then holds two points per
  // line instead of eight. Nothing downstream mutates positions.
  const points = new Map<number, { line: number; column: number; offset: number }>();
  const point = (offset: number): { line: number; column: number; offset: number } => {
    let p = points.get(offset);
    if (p === undefined) points.set(offset, (p = { ...locateOffset(lineStarts, offset), offset }));
    return p;
  };
  let last: Position | null = null;
  const position = (from: number, to: number): Position => {
    if (last !== null && last.start.offset === from && last.end.offset === to) return last;
    return (last = { start: point(from), end: point(to) });
  };
  const lineStart = (ln: number): number => lineStarts[ln - 1] as number;
  const lineEnd = (ln: number): number => lineStart(ln) + (lines[ln - 1] as string).length;

  const children: RootContent[] = [];
  let bodyStart = 1;
  const fm = (options.frontmatter ?? true) ? frontmatterFences(lines) : null;
  if (fm) {
    const value = fm.line_end === 2 ? '' : text.slice(lineStart(2), lineEnd(fm.line_end - 1));
    const yaml: Yaml = { type: 'yaml', value, position: position(0, lineEnd(fm.line_end)) };
    children.push(yaml);
    bodyStart = fm.line_end + 1;
  }

  let para: { start: number; end: number; plain: boolean; quotes: number; item: boolean; indented: boolean; noLazy?: boolean } | null = null;
  const flushPara = (): void => {
    if (!para) return;
    const from = lineStart(para.start);
    const to = lineEnd(para.end);
    const node: Paragraph = { type: 'paragraph', children: scanInline(text, from, to, position), position: position(from, to) };
    const second = para.end > para.start ? (lines[para.start] as string) : '';
    if (!para.item && (lines[para.start - 1] as string).includes('|') && second.includes('|') && isTableDelimiterRow(second)) {
      // A GFM table: one cell holding all its rows (so links keep position `table`; cells are not split).
      const cell: TableCell = { type: 'tableCell', children: node.children, position: position(from, to) };
      const row: TableRow = { type: 'tableRow', children: [cell], position: position(from, to) };
      const table: Table = { type: 'table', align: null, children: [row], position: position(from, to) };
      children.push(table);
    } else if (para.item) {
      // A paragraph opened by a list marker: one flat list item (nesting is not rebuilt).
      const item: ListItem = { type: 'listItem', spread: false, checked: null, children: [node], position: position(from, to) };
      const list: List = { type: 'list', ordered: false, start: null, spread: false, children: [item], position: position(from, to) };
      children.push(list);
    } else children.push(node);
    itemContext = para.item || (itemContext && para.indented);
    para = null;
  };
  // True after a list-item paragraph, until a paragraph that is neither an item nor indented: then an
  // indented line continues the item instead of starting indented code.
  let itemContext = false;
  // Content column of the last list item (marker indentation + marker + one space): a line indented at
  // least this far continues the item.
  let itemColumn = Number.POSITIVE_INFINITY;

  let ln = bodyStart;
  while (ln <= lines.length) {
    const line = lines[ln - 1] as string;
    const prefix = containerPrefix(line);
    const rest = line.slice(prefix.rest);
    const open = fenceOpen(rest);
    if (open) {
      flushPara();
      let end = ln + 1;
      while (end <= lines.length) {
        const l = lines[end - 1] as string;
        if (fenceCloses(l.slice(containerPrefix(l).rest), open)) break;
        end++;
      }
      const last = Math.min(end, lines.length);
      const code: Code = { type: 'code', lang: null, meta: null, value: '', position: position(lineStart(ln), lineEnd(last)) };
      children.push(code);
      if (prefix.markers === 0 && leadingIndent(line).width === 0) itemContext = false;
      ln = last + 1;
      continue;
    }
    if (rest.trim() === '') {
      flushPara();
      ln++;
      continue;
    }
    if (prefix.quotes === 0 && prefix.markers === 0 && HTML_COMMENT_OPEN.test(line)) {
      // An HTML comment block (CommonMark HTML block type 2): to the first line holding `-->`, else the
      // end of the note; nothing inside counts (extractLinks skips `html` nodes), as in micromark.
      flushPara();
      if (leadingIndent(line).width < itemColumn) itemContext = false;
      const first = line.indexOf('<!--') + 4;
      let last = ln;
      while (last <= lines.length && !(lines[last - 1] as string).includes('-->', last === ln ? first : 0)) last++;
      last = Math.min(last, lines.length);
      children.push({ type: 'html', value: '', position: position(lineStart(ln), lineEnd(last)) });
      ln = last + 1;
      continue;
    }
    const indent = leadingIndent(line);
    const open_ = para as { item: boolean; indented: boolean } | null;
    const inItem = open_ !== null ? open_.item || (itemContext && open_.indented) : itemContext;
    if (open_ !== null && (para as { noLazy?: boolean }).noLazy && indent.width < itemColumn && prefix.markers === 0) {
      // After a heading inside the item a line left of the item's column is no lazy continuation: the list ends.
      flushPara();
      itemContext = false;
    }
    if (ATX.test(line) && !(indent.width >= itemColumn && inItem) && headingCount < maxHeadings) {
      headingCount += 1;
      // An indented `#` line under a list item is a heading inside the item (micromark): no chunk, so
      // it falls through to the item's paragraph below.
      flushPara();
      itemContext = false;
      children.push(atxHeading(text, line, lineStart(ln), position));
      ln++;
      continue;
    }
    const plain = prefix.quotes === 0 && prefix.markers === 0 && indent.width <= 3;
    const underline = /^ {0,3}(?:=+|-+)[ \t]*$/.exec(line);
    if (underline && para !== null && (para as { plain: boolean }).plain && headingCount < maxHeadings) {
      headingCount += 1;
      const p = para as { start: number; end: number };
      const from = lineStart(p.start);
      const heading: Heading = {
        type: 'heading',
        depth: line.includes('=') ? 1 : 2,
        children: scanInline(text, from + leadingIndent(lines[p.start - 1] as string).end, lineEnd(p.end), position),
        position: position(from, lineEnd(ln)),
      };
      children.push(heading);
      para = null;
      ln++;
      continue;
    }
    if (para !== null && (prefix.markers > 0 || prefix.quotes !== (para as { quotes: number }).quotes)) flushPara();
    if (para === null && indent.width >= 4 && !itemContext && prefix.quotes === 0) {
      // Indented code: this line and the following blank or indented (≥ 4 columns) lines, trailing blanks excluded.
      let last = ln;
      for (let k = ln + 1; k <= lines.length; k++) {
        const l = lines[k - 1] as string;
        if (l.trim() === '') continue;
        if (leadingIndent(l).width < 4) break;
        last = k;
      }
      const code: Code = { type: 'code', lang: null, meta: null, value: '', position: position(lineStart(ln), lineEnd(last)) };
      children.push(code);
      ln = last + 1;
      continue;
    }
    if (prefix.leadingMarker > 0) itemColumn = indent.width + prefix.leadingMarker + 1;
    // A heading inside a list item (the case the ATX branch above leaves to the item); a top-level heading line
    // past `maxHeadings` is plain text and continues the paragraph.
    const itemHeading = ATX.test(line) && indent.width >= itemColumn && inItem;
    if (para === null) para = { start: ln, end: ln, plain, quotes: prefix.quotes, item: prefix.leadingMarker > 0, indented: indent.width > 0 };
    else (para as { end: number }).end = ln;
    if (itemHeading) (para as { noLazy?: boolean }).noLazy = true;
    ln++;
  }
  flushPara();
  return { type: 'root', children, position: position(0, n) };
}

/** An ATX heading node for one line (`from` = the line's offset in the text). */
function atxHeading(text: string, line: string, from: number, position: (a: number, b: number) => Position): Heading {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  let depth = 0;
  while (line.charCodeAt(i) === 35) {
    depth++;
    i++;
  }
  // Content: trimmed; a closing run of `#` preceded by a space or tab (or making up the whole content) dropped.
  let a = i;
  let b = line.length;
  while (a < b && (line.charCodeAt(a) === 32 || line.charCodeAt(a) === 9)) a++;
  while (b > a && (line.charCodeAt(b - 1) === 32 || line.charCodeAt(b - 1) === 9)) b--;
  let h = b;
  while (h > a && line.charCodeAt(h - 1) === 35) h--;
  if (h < b && (h === a || line.charCodeAt(h - 1) === 32 || line.charCodeAt(h - 1) === 9)) {
    b = h;
    while (b > a && (line.charCodeAt(b - 1) === 32 || line.charCodeAt(b - 1) === 9)) b--;
  }
  return {
    type: 'heading',
    depth: depth as Heading['depth'],
    children: a < b ? scanInline(text, from + a, from + b, position) : [],
    position: position(from, from + line.length),
  };
}

/** ASCII punctuation (what a backslash can escape in CommonMark). */
function isAsciiPunct(c: number): boolean {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

/**
 * The end offset (exclusive) of a wikilink starting at `at` (`[[` or `![[`), or -1 — the same decisions as
 * the micromark construct in wikilink.ts: content is not empty, does not start with `]`, `|` or `[`,
 * contains no line ending and no `[[`, and ends at the first `]]`.
 */
export function wikiLinkEnd(text: string, at: number, to: number): number {
  let i = at + (text.charCodeAt(at) === 33 ? 3 : 2);
  const first = text.charCodeAt(i);
  if (i >= to || first === 93 || first === 124 || first === 91 || first === 10 || first === 13) return -1;
  let prev = -1;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return -1;
    if (c === 91 && prev === 91) return -1;
    if (c === 93 && text.charCodeAt(i + 1) === 93 && i + 1 < to) return i + 2;
    prev = c;
  }
  return -1;
}

/**
 * Phrasing nodes for `text[from, to)`: text, inlineCode (code spans) and wikiLink nodes; linear in the
 * length (closing backtick runs are looked up per run length with a forward-only cursor).
 */
function scanInline(text: string, from: number, to: number, position: (a: number, b: number) => Position): PhrasingContent[] {
  // Maximal backtick runs in the range, grouped by length, for code-span closers.
  const runs = new Map<number, { starts: number[]; cursor: number }>();
  for (let i = from; i < to; ) {
    if (text.charCodeAt(i) !== 96) {
      i++;
      continue;
    }
    let j = i;
    while (j < to && text.charCodeAt(j) === 96) j++;
    const len = j - i;
    let r = runs.get(len);
    if (!r) runs.set(len, (r = { starts: [], cursor: 0 }));
    r.starts.push(i);
    i = j;
  }

  const out: PhrasingContent[] = [];
  let textFrom = from;
  const flushText = (upTo: number): void => {
    if (upTo > textFrom) {
      // As in mdast, a backslash escape shows only the escaped character.
      const value = text.slice(textFrom, upTo).replace(/\\([!-/:-@[-`{-~])/g, '$1');
      const t: Text = { type: 'text', value, position: position(textFrom, upTo) };
      out.push(t);
    }
  };
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c === 92 && i + 1 < to && isAsciiPunct(text.charCodeAt(i + 1))) {
      i += 2;
      continue;
    }
    if (c === 96) {
      let j = i;
      while (j < to && text.charCodeAt(j) === 96) j++;
      const r = runs.get(j - i);
      let close = -1;
      if (r) {
        while (r.cursor < r.starts.length && (r.starts[r.cursor] as number) < j) r.cursor++;
        if (r.cursor < r.starts.length) close = r.starts[r.cursor] as number;
      }
      if (close === -1) {
        i = j;
        continue;
      }
      flushText(i);
      const end = close + (j - i);
      let value = text.slice(j, close).replace(/\r\n|\r|\n/g, ' ');
      if (value.startsWith(' ') && value.endsWith(' ') && value.trim() !== '') value = value.slice(1, -1);
      out.push({ type: 'inlineCode', value, position: position(i, end) });
      i = end;
      textFrom = i;
      continue;
    }
    if ((c === 91 && text.charCodeAt(i + 1) === 91) || (c === 33 && text.charCodeAt(i + 1) === 91 && text.charCodeAt(i + 2) === 91)) {
      const end = wikiLinkEnd(text, i, to);
      if (end !== -1) {
        flushText(i);
        const embed = c === 33;
        const value = text.slice(i + (embed ? 3 : 2), end - 2);
        const parts = parseWikiLinkContent(value);
        const node: WikiLink = { type: 'wikiLink', value, embed, ...parts, position: position(i, end) };
        out.push(node);
        i = end;
        textFrom = i;
        continue;
      }
    }
    i++;
  }
  flushText(to);
  return out;
}

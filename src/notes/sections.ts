/**
 * Sectioned parsing of big notes: one micromark run per run of top-level heading sections instead of one
 * run over the whole note, giving the same mdast.
 *
 * Why: micromark keeps every event of the document it is tokenizing, and it rebuilds that whole event
 * list (`EditMap.consume` in micromark-util-edit-map, called by its document tokenizer) each time a
 * container closes on a line that is not its own (a heading right after a list: a "lazy" line). A note
 * of many list-ending sections therefore costs time quadratic in its size, and holds all its events at
 * once: measured with scripts/big-note.mjs (docs/PARSING.md, "Size cap, measured"), a 1 MB note of
 * ordinary lore took 9.3 s of CPU in one parse, 5.3 s with a linear `consume`, and far less in pieces.
 *
 * Where a note may be cut: before a line that starts, in column 1, an ATX heading (`#`–`######` then a
 * space, a tab or the end of the line) and follows a blank line, outside any fenced code block and any
 * HTML block that runs over blank lines (CommonMark HTML block kinds 1–5: `<script`, `<pre`, `<style`,
 * `<textarea`, `<!--`, `<?`, `<!X`, `<![CDATA[`). Such a line ends every open container (CommonMark:
 * list items and block quotes need indentation or a `>` to continue, and an ATX heading is never a
 * paragraph's lazy continuation) and every leaf block (a paragraph, table or HTML block of kinds 6–7
 * ends at the blank line), so the document's blocks from there on do not depend on what came before.
 * The one thing that does cross the cut is a link reference or footnote definition (`[a]: /url`,
 * `[^1]: text`), which is defined for the whole document: a note with anything that may be one is
 * never cut. The scan errs one way only: a line it cannot be sure about is never a cut.
 *
 * Equality with the one-run parse is tested on generated documents and on every fixture note, with
 * the piece size forced small (tests/parse-properties.test.ts).
 */
import type { Root, RootContent } from 'mdast';
import type { Node } from 'unist';

/** Notes shorter than this many UTF-16 code units are parsed in one run. */
export const SECTIONED_PARSE_MIN_CHARS = 128 * 1024;
/** Target size of one piece, in UTF-16 code units: pieces are whole sections of at least this size. */
export const SECTION_PIECE_CHARS = 64 * 1024;

const ATX_START = /^#{1,6}(?:[ \t]|$)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
// HTML block kinds 1-5 (CommonMark 4.6), the ones a blank line does not end, with their end markers.
const HTML_RAW_OPEN = /^ {0,3}<(?:script|pre|style|textarea)(?:[\s>]|$)/i;
const HTML_RAW_END = /<\/(?:script|pre|style|textarea)>/i;
const HTML_OPENERS: { open: RegExp; end: RegExp }[] = [
  { open: HTML_RAW_OPEN, end: HTML_RAW_END },
  { open: /^ {0,3}<!--/, end: /-->/ },
  { open: /^ {0,3}<\?/, end: /\?>/ },
  { open: /^ {0,3}<![A-Za-z]/, end: />/ },
  { open: /^ {0,3}<!\[CDATA\[/, end: /\]\]>/ },
];
// Anything that may be a link reference or footnote definition: `[label]:` with a label free of
// unescaped brackets, anywhere on a line (definitions may stand inside quotes and list items).
const MAYBE_DEFINITION = /\[(?:[^[\]\\]|\\.)+\]:/;

/**
 * 1-based lines where {@link parseInSections} may start a new piece (rules in the module comment), in
 * order, for the lines of the text micromark parses (comments and math already masked). Empty when the
 * note may hold a definition. `bodyStart` is the first line after the frontmatter (1 without).
 */
export function sectionCutLines(lines: readonly string[], bodyStart: number): number[] {
  const cuts: number[] = [];
  let fence: { char: string; length: number } | null = null;
  let html: RegExp | null = null;
  for (let i = bodyStart - 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (MAYBE_DEFINITION.test(line)) return [];
    if (fence) {
      if (closesFence(line, fence)) fence = null;
      continue;
    }
    if (html) {
      if (html.test(line)) html = null;
      continue;
    }
    if (i > bodyStart - 1 && ATX_START.test(line) && /^[ \t]*$/.test(lines[i - 1]!)) cuts.push(i + 1);
    const open = FENCE_OPEN.exec(line);
    if (open) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      continue;
    }
    for (const h of HTML_OPENERS) {
      const m = h.open.exec(line);
      if (m) {
        // The end marker may stand on the opening line itself (`<!-- x -->`), after the opener.
        if (!h.end.test(line.slice(m.index + m[0].length))) html = h.end;
        break;
      }
    }
  }
  return cuts;
}

/** CommonMark's closing fence: ≤ 3 spaces, the opening character at least as many times, then only spaces or tabs. */
function closesFence(line: string, fence: { char: string; length: number }): boolean {
  const m = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
  return m !== null && m[1]![0] === fence.char && m[1]!.length >= fence.length;
}

/**
 * Pieces of at least `pieceChars` code units, cut only at `cuts`: `[startLine, endLine]` pairs covering
 * lines 1..`lineCount`, 1-based inclusive.
 */
export function sectionPieces(cuts: readonly number[], lineStarts: readonly number[], lineCount: number, pieceChars: number): [number, number][] {
  const pieces: [number, number][] = [];
  let start = 1;
  for (const cut of cuts) {
    if (lineStarts[cut - 1]! - lineStarts[start - 1]! >= pieceChars) {
      pieces.push([start, cut - 1]);
      start = cut;
    }
  }
  pieces.push([start, lineCount]);
  return pieces;
}

/**
 * Parse `text` piece by piece with `parse` and join the trees: the children of every piece's root, in
 * order, with their positions moved to the whole text (lines and offsets; columns stay, since every
 * piece starts at a line start). The root spans the whole text.
 *
 * @param parse    one micromark/mdast run (the processor's `parse`).
 * @param text     the text micromark parses (masked).
 * @param lineStarts offset of each line's start in `text` (index 0 = line 1).
 * @param pieces   from {@link sectionPieces}.
 */
export function parseInSections(parse: (text: string) => Root, text: string, lineStarts: readonly number[], pieces: readonly [number, number][]): Root {
  const children: RootContent[] = [];
  for (const [startLine, endLine] of pieces) {
    const from = lineStarts[startLine - 1]!;
    const to = endLine < lineStarts.length ? lineStarts[endLine]! : text.length;
    const piece = parse(text.slice(from, to));
    shiftPositions(piece, startLine - 1, from);
    children.push(...piece.children);
  }
  const end = endPoint(text, lineStarts);
  return { type: 'root', children, position: { start: { line: 1, column: 1, offset: 0 }, end } };
}

/** Move every position in `tree` by `lines` lines and `offset` code units (each point object once). */
function shiftPositions(tree: Node, lines: number, offset: number): void {
  const seen = new Set<object>();
  const stack: Node[] = [...((tree as Root).children as Node[])];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const pos = node.position;
    if (pos) {
      for (const p of [pos.start, pos.end]) {
        if (seen.has(p)) continue;
        seen.add(p);
        p.line += lines;
        if (p.offset !== undefined) p.offset += offset;
      }
    }
    const kids = (node as { children?: Node[] }).children;
    if (kids) for (const k of kids) stack.push(k);
  }
}

/** The point after the last character of `text`, as mdast-util-from-markdown reports a root's end. */
function endPoint(text: string, lineStarts: readonly number[]): { line: number; column: number; offset: number } {
  const line = Math.max(lineStarts.length, 1);
  const lastStart = lineStarts[line - 1] ?? 0;
  // A final line break: micromark's end point is the start of the (empty) next line.
  const endsWithBreak = text.length > 0 && (text.endsWith('\n') || text.endsWith('\r'));
  return endsWithBreak ? { line: line + 1, column: 1, offset: text.length } : { line, column: text.length - lastStart + 1, offset: text.length };
}

/**
 * Chunking: a note becomes heading sections with exact line ranges (docs/PARSING.md).
 *
 * Rules (docs/PARSING.md has the table and examples):
 * 1. Every top-level ATX or setext heading starts a chunk; the text before the first heading is a chunk
 *    too. Frontmatter belongs to no chunk. Headings nested in block quotes or list items do not start
 *    chunks.
 * 2. A heading chunk spans from its heading line (for setext: the text line) to the line before the next
 *    heading (or the last line), with trailing blank lines trimmed. The pre-heading chunk starts at its
 *    first non-blank line. A range with only blank lines is not emitted.
 * 3. A section with more words than the budget is split at block boundaries (top-level blocks; list
 *    items of a top-level list count one by one), greedily, so each piece stays within the budget —
 *    never inside a fenced code block, table, block quote or list item. A single block over the budget
 *    stays whole. Pieces of one section share its `heading_path`.
 */
import { createHash } from 'node:crypto';
import type { Heading, RootContent } from 'mdast';
import { LoretraceError } from '../errors.js';
import type { Chunk, HeadingInfo } from '../types.js';
import { sliceLines } from '../notes/lines.js';
import type { MarkdownSyntax } from '../notes/markdown.js';
import { plainText } from '../notes/text.js';

/** Default word budget of a chunk (words = whitespace-separated runs). */
export const DEFAULT_CHUNK_WORD_BUDGET = 350;

/** Options of {@link chunkNote}. */
export interface ChunkOptions {
  /**
   * A section with more words than this is split at block boundaries. Integer ≥ 1; default
   * {@link DEFAULT_CHUNK_WORD_BUDGET} (350). Config key: `chunk_word_budget`.
   */
  chunkWordBudget?: number;
}

/** Chunks plus the note's top-level headings, each with the chunk it starts. Internal result. */
export interface ChunkResult {
  chunks: Chunk[];
  headings: HeadingInfo[];
}

/**
 * Split a parsed note into chunks (rules in the module doc and docs/PARSING.md).
 *
 * Invariant: for every chunk, `text === sliceLines(syntax.lines, line_start, line_end)`,
 * `1 ≤ line_start ≤ line_end ≤ lines.length`, chunks are in file order and never overlap.
 *
 * @param syntax the note as returned by `parseMarkdown(path, text)`.
 * @returns chunks with `chunk_index` 0.., `heading_path` (outermost heading first), `hash` (sha256 hex of
 *   `text` in UTF-8) and `word_count`.
 * @throws LoretraceError `bad_options` (exit code 2) when `chunkWordBudget` is not an integer ≥ 1.
 */
export function chunkNote(syntax: MarkdownSyntax, options: ChunkOptions = {}): Chunk[] {
  return buildChunks(syntax, options).chunks;
}

/** Validated word budget. @throws LoretraceError `bad_options` */
export function wordBudget(options: ChunkOptions): number {
  const budget = options.chunkWordBudget ?? DEFAULT_CHUNK_WORD_BUDGET;
  if (!Number.isInteger(budget) || budget < 1) {
    throw new LoretraceError(
      'bad_options',
      `chunkWordBudget must be an integer ≥ 1 (got ${String(budget)})`,
      { expected: 'an integer ≥ 1' },
      2,
    );
  }
  return budget;
}

/** Number of whitespace-separated words in a string. */
export function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ws =
      c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
    if (ws) inWord = false;
    else if (!inWord) {
      inWord = true;
      n++;
    }
  }
  return n;
}

/** Chunks and headings in one pass over the top-level blocks. Internal; used by parseNote. */
export function buildChunks(syntax: MarkdownSyntax, options: ChunkOptions = {}): ChunkResult {
  const budget = wordBudget(options);
  const { lines, root, path } = syntax;
  const lineCount = lines.length;
  if (lineCount === 0) return { chunks: [], headings: [] };

  // Prefix sums of words and blank flags per line (1-based).
  const wordsBefore = new Float64Array(lineCount + 1);
  const blank = new Uint8Array(lineCount + 2);
  for (let i = 0; i < lineCount; i++) {
    const line = lines[i] as string;
    const w = countWords(line);
    wordsBefore[i + 1] = (wordsBefore[i] as number) + w;
    blank[i + 1] = w === 0 ? 1 : 0;
  }
  const words = (a: number, b: number): number => (wordsBefore[b] as number) - (wordsBefore[a - 1] as number);

  const bodyStart = syntax.frontmatter ? syntax.frontmatter.line_end + 1 : 1;

  // Top-level headings and unit start lines (block boundaries where a split may happen).
  const headingNodes: { node: Heading; line: number; endLine: number }[] = [];
  const unitStarts: number[] = [];
  for (const child of root.children as RootContent[]) {
    if (child.type === 'yaml' || !child.position) continue;
    if (child.type === 'heading') {
      headingNodes.push({ node: child, line: child.position.start.line, endLine: child.position.end.line });
    } else if (child.type === 'list') {
      for (const item of child.children) if (item.position) unitStarts.push(item.position.start.line);
    } else if (child.type !== 'definition') {
      unitStarts.push(child.position.start.line);
    }
  }

  const chunks: Chunk[] = [];
  const headings: HeadingInfo[] = [];
  let u = 0; // cursor into unitStarts (sorted, file order)

  const emit = (start: number, end: number, headingPath: string[]): void => {
    while (end >= start && blank[end] === 1) end--;
    if (end < start) return;
    const text = sliceLines(lines, start, end);
    chunks.push({
      path,
      chunk_index: chunks.length,
      heading_path: headingPath,
      line_start: start,
      line_end: end,
      text,
      hash: createHash('sha256').update(text, 'utf8').digest('hex'),
      word_count: words(start, end),
    });
  };

  const section = (start: number, end: number, contentFrom: number, headingPath: string[]): void => {
    // Units starting strictly after `contentFrom - 1` and within the section are split candidates.
    while (u < unitStarts.length && (unitStarts[u] as number) < contentFrom) u++;
    const cands: number[] = [];
    while (u < unitStarts.length && (unitStarts[u] as number) <= end) {
      const s = unitStarts[u] as number;
      if (s > start && s !== cands[cands.length - 1]) cands.push(s);
      u++;
    }
    // The first block under a heading stays with it: a heading alone is never a piece.
    if (contentFrom > start) cands.shift();
    if (words(start, end) <= budget || cands.length === 0) {
      emit(start, end, headingPath);
      return;
    }
    let pieceStart = start;
    for (let k = 0; k < cands.length; k++) {
      const cut = cands[k] as number;
      const unitEnd = k + 1 < cands.length ? (cands[k + 1] as number) - 1 : end;
      if (cut > pieceStart && words(pieceStart, unitEnd) > budget) {
        emit(pieceStart, cut - 1, headingPath);
        pieceStart = cut;
      }
    }
    emit(pieceStart, end, headingPath);
  };

  // Pre-heading chunk.
  const firstHeadingLine = headingNodes.length > 0 ? (headingNodes[0] as { line: number }).line : lineCount + 1;
  let preStart = bodyStart;
  while (preStart < firstHeadingLine && blank[preStart] === 1) preStart++;
  if (preStart < firstHeadingLine) section(preStart, firstHeadingLine - 1, preStart, []);

  const stack: { depth: number; text: string }[] = [];
  for (let h = 0; h < headingNodes.length; h++) {
    const { node, line, endLine } = headingNodes[h] as { node: Heading; line: number; endLine: number };
    const end = h + 1 < headingNodes.length ? (headingNodes[h + 1] as { line: number }).line - 1 : lineCount;
    const text = plainText(node);
    while (stack.length > 0 && (stack[stack.length - 1] as { depth: number }).depth >= node.depth) stack.pop();
    stack.push({ depth: node.depth, text });
    headings.push({ text, depth: node.depth, line, chunk_index: chunks.length });
    section(line, end, endLine + 1, stack.map((s) => s.text));
  }
  return { chunks, headings };
}


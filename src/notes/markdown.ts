/**
 * parseMarkdown: a note's decoded text → its one mdast parse ({@link MarkdownSyntax}), the shared input of
 * chunking (src/chunks/chunk.ts) and link collection (src/links/extract.ts). Both import this module and
 * never parseNote, which orchestrates them one level up (src/notes/parse.ts).
 *
 * Parser stack: unified + remark-parse + GFM tables and footnotes + remark-frontmatter + loretrace's
 * wikilink grammar; a linear pre-scan (src/notes/pathological.ts) sends notes micromark is superlinear on
 * to the degraded line scan instead.
 */
import type { Root } from 'mdast';
import { gfmFootnoteFromMarkdown } from 'mdast-util-gfm-footnote';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmFootnote } from 'micromark-extension-gfm-footnote';
import { gfmTable } from 'micromark-extension-gfm-table';
import remarkFrontmatter from 'remark-frontmatter';
import remarkParse from 'remark-parse';
import { unified, type Processor } from 'unified';
import type { VaultPath } from '../types.js';
import { maskInert } from './inert.js';
import { lineStartOffsets, splitLines } from './lines.js';
import { PATHOLOGY_LIMITS, degradedRoot, frontmatterFences, measureMarkdown, pathologyHits, type PathologyHit } from './pathological.js';
import { parseInSections, sectionCutLines, sectionPieces, SECTION_PIECE_CHARS, SECTIONED_PARSE_MIN_CHARS } from './sections.js';
import { remarkWikiLink } from './wikilink.js';

/**
 * A parsed note's syntax: what `chunkNote` and `extractLinks` work on. `text` is the decoded text
 * without the BOM; mdast positions (lines, columns, offsets) are in that text, and its lines are the
 * original file's lines (CRLF, CR and LF each end one line, as in {@link splitLines}).
 */
export interface MarkdownSyntax {
  path: VaultPath;
  /** Decoded text, BOM removed. */
  text: string;
  /** `splitLines(text)`. */
  lines: string[];
  /** UTF-16 offset in `text` where each line starts (index 0 = line 1). */
  lineStarts: number[];
  /**
   * The text micromark parsed: `text` with Obsidian comments (`%%…%%`) and math (`$…$`, `$$…$$`) masked
   * character for character by U+E000 (src/notes/inert.ts) — same length, same lines, same offsets.
   * Equal to `text` when the note has none. Tags, bare URLs and block markers are scanned in this text.
   */
  parsed: string;
  /** The mdast tree, with `wikiLink` nodes. */
  root: Root;
  /** The YAML frontmatter block (both fences included), or null. */
  frontmatter: { value: string; line_start: number; line_end: number } | null;
  /**
   * Thresholds of the pathological-markdown pre-scan this note exceeds (src/notes/pathological.ts);
   * empty for ordinary notes. When not empty, `root` comes from the degraded line scan, not micromark.
   */
  pathology: PathologyHit[];
}

/**
 * The GFM constructs that change document structure: tables (cells, `\|`) and footnotes (so `[^1]: x`
 * is not read as a link definition). remark-gfm's other parts are left out on purpose: its
 * autolink-literal construct costs ~50% of parse time on ordinary notes and is quadratic on long
 * paragraphs (100,000 short lines: 5 s → 100 s); bare `https://` and `www.` URLs are found by the
 * linear scan in src/links/extract.ts instead. Strikethrough and task-list markers carry no links.
 */
function remarkGfmStructure(this: Processor): void {
  const data = this.data();
  (data.micromarkExtensions ??= []).push(gfmTable(), gfmFootnote());
  (data.fromMarkdownExtensions ??= []).push(gfmTableFromMarkdown(), gfmFootnoteFromMarkdown());
}

const processor = unified()
  .use(remarkParse)
  .use(remarkGfmStructure)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkWikiLink)
  .freeze();

/** The same stack without frontmatter: for a note whose `---` block is not valid frontmatter. */
const bodyOnlyProcessor = unified().use(remarkParse).use(remarkGfmStructure).use(remarkWikiLink).freeze();

/** Options of {@link parseMarkdown}. */
export interface MarkdownOptions {
  /**
   * Recognise a YAML frontmatter block at the top (default true). False reads a `---` block as body
   * markdown (thematic breaks, paragraphs, setext headings): parseNote passes false when the block is not
   * valid frontmatter, so its lines are chunked and their links kept (docs/PARSING.md, "Frontmatter").
   */
  frontmatter?: boolean;
  /**
   * Sectioned parsing of big notes (src/notes/sections.ts): a note of at least `minChars` UTF-16 code
   * units (default 131,072) is parsed in pieces of whole top-level heading sections of at least
   * `pieceChars` (default 65,536), giving the same mdast in time linear in the note's size. Tests force
   * small values to check that equality; callers never need to set it.
   */
  sections?: { minChars: number; pieceChars: number };
}

/**
 * Parse markdown text once into {@link MarkdownSyntax}. A leading BOM (U+FEFF) is removed before parsing
 * so positions match the file's lines. Frontmatter is recognised only as a `---` fenced YAML block
 * starting on line 1 and closed by `---` (end of file right after the closing fence is fine); a lone
 * `---` at the top without a closing fence is a thematic break. `options.frontmatter: false` turns
 * frontmatter recognition off (the block is then body markdown).
 *
 * Before micromark runs, a linear pre-scan measures the shapes micromark is superlinear on and the parse
 * units each micromark run would hold (`measureMarkdown` in src/notes/pathological.ts, given the runs of
 * the sectioned parse); a note over a threshold is parsed by the degraded
 * line scan instead (`pathology` lists the thresholds it exceeded; parseNote reports each as a
 * `pathological_markdown` finding). Deterministic: characters are counted, time is never measured.
 */
export function parseMarkdown(path: VaultPath, text: string, options: MarkdownOptions = {}): MarkdownSyntax {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const withFrontmatter = options.frontmatter ?? true;
  const lines = splitLines(text);
  const lineStarts = lineStartOffsets(text);
  const fences = withFrontmatter ? frontmatterFences(lines) : null;
  const bodyStart = fences ? fences.line_end + 1 : 1;
  const parsed = maskInert(text, lines, lineStarts, bodyStart).text;
  const parsedLines = parsed === text ? lines : splitLines(parsed);
  const pieces = micromarkRuns(parsed, parsedLines, lineStarts, bodyStart, options.sections);
  const runStarts = pieces.slice(1).map(([start]) => start);
  const pathology = pathologyHits(measureMarkdown(lines, bodyStart, runStarts), text.length);
  const root =
    pathology.length > 0
      ? degradedRoot(parsed, parsedLines, lineStarts, { frontmatter: withFrontmatter, ...(pathology.some((h) => h.threshold === 'headings') ? { maxHeadings: PATHOLOGY_LIMITS.headingsPerNote } : {}) })
      : micromarkRoot(withFrontmatter ? processor : bodyOnlyProcessor, parsed, lineStarts, pieces);
  const first = root.children[0];
  const frontmatter =
    first && first.type === 'yaml' && first.position
      ? { value: first.value, line_start: first.position.start.line, line_end: first.position.end.line }
      : null;
  return { path, text, lines, lineStarts, parsed, root, frontmatter, pathology };
}

/**
 * The micromark runs of `parsed`, as `[startLine, endLine]` pairs (1-based inclusive): one run over the
 * whole note, or, for a note of at least {@link SECTIONED_PARSE_MIN_CHARS} code units that may be cut
 * (src/notes/sections.ts), one run per piece of whole top-level sections. The pathology pre-scan counts
 * parse units per run (`block_work`), so it sees exactly the runs micromark will make.
 */
function micromarkRuns(
  parsed: string,
  parsedLines: readonly string[],
  lineStarts: readonly number[],
  bodyStart: number,
  sections: MarkdownOptions['sections'],
): [number, number][] {
  const minChars = sections?.minChars ?? SECTIONED_PARSE_MIN_CHARS;
  if (parsed.length < minChars) return [[1, parsedLines.length]];
  return sectionPieces(sectionCutLines(parsedLines, bodyStart), lineStarts, parsedLines.length, sections?.pieceChars ?? SECTION_PIECE_CHARS);
}

/**
 * The micromark/mdast parse of `parsed` over the runs of {@link micromarkRuns}: one run, or one run per
 * piece of whole top-level sections — the same tree, without micromark's cost quadratic in the note's size.
 */
function micromarkRoot(stack: { parse(text: string): unknown }, parsed: string, lineStarts: readonly number[], pieces: readonly [number, number][]): Root {
  const parse = (t: string): Root => stack.parse(t) as Root;
  return pieces.length <= 1 ? parse(parsed) : parseInSections(parse, parsed, lineStarts, pieces);
}

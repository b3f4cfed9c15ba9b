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
import { lineStartOffsets, splitLines } from './lines.js';
import { degradedRoot, frontmatterFences, measureMarkdown, pathologyHits, type PathologyHit } from './pathological.js';
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

/**
 * Parse markdown text once into {@link MarkdownSyntax}. A leading BOM (U+FEFF) is removed before parsing
 * so positions match the file's lines. Frontmatter is recognised only as a `---` fenced YAML block
 * starting on line 1 and closed by `---` (end of file right after the closing fence is fine); a lone
 * `---` at the top without a closing fence is a thematic break.
 *
 * Before micromark runs, a linear pre-scan measures the shapes micromark is superlinear on
 * (`measureMarkdown` in src/notes/pathological.ts); a note over a threshold is parsed by the degraded
 * line scan instead (`pathology` lists the thresholds it exceeded; parseNote reports each as a
 * `pathological_markdown` finding). Deterministic: characters are counted, time is never measured.
 */
export function parseMarkdown(path: VaultPath, text: string): MarkdownSyntax {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = splitLines(text);
  const lineStarts = lineStartOffsets(text);
  const fences = frontmatterFences(lines);
  const pathology = pathologyHits(measureMarkdown(lines, fences ? fences.line_end + 1 : 1), text.length);
  const root = pathology.length === 0 ? (processor.parse(text) as Root) : degradedRoot(text, lines, lineStarts);
  const first = root.children[0];
  const frontmatter =
    first && first.type === 'yaml' && first.position
      ? { value: first.value, line_start: first.position.start.line, line_end: first.position.end.line }
      : null;
  return { path, text, lines, lineStarts, root, frontmatter, pathology };
}

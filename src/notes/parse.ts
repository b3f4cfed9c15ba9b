/**
 * parseNote: one note's bytes → note record, chunks, links and findings. Pure (no I/O, no clock, no
 * shared state), so it runs unchanged inside a worker thread; input and output are plain data.
 *
 * Pipeline, each stage once: UTF-8 decode (fatal) → one mdast parse (`parseMarkdown`, src/notes/markdown.ts:
 * BOM strip, pathology pre-scan, micromark) → frontmatter → chunks (src/chunks/chunk.ts) → one mdast walk
 * for links, tags and blocks (src/links/extract.ts). This module is the orchestration one level above
 * those stages: they import the syntax from src/notes/markdown.ts, never this module.
 */
import { createHash } from 'node:crypto';
import type { Finding } from '../errors.js';
import type { Chunk, LinkRecord, NoteRecord, VaultConfig, VaultPath } from '../types.js';
import { buildChunks } from '../chunks/chunk.js';
import { targetClasses } from '../links/classes.js';
import { collectNoteRefs } from '../links/extract.js';
import { propertyLinks } from '../links/properties.js';
import { frontmatterAliases, frontmatterTags, frontmatterTitle, readFrontmatter } from './frontmatter.js';
import { detectLineEnding } from './lines.js';
import { parseMarkdown, type MarkdownSyntax } from './markdown.js';
import { pathologyMessage } from './pathological.js';

/**
 * Version of the parse rules (docs/PARSING.md). It is part of the persisted index's options hash, so an
 * index written under other rules is rebuilt rather than mixed with records parsed under these.
 * 2: invalid frontmatter is body text, property links, comments and math, nested headings, embed sizes.
 * 3: the parse-unit thresholds (`block_work`, `block_total`) send notes of dense markup to degraded mode.
 * 4: the `headings` threshold: past 50,000 top-level headings a note is degraded and its later headings are text.
 */
export const PARSER_VERSION = 4;

/** Options of {@link parseNote}. All optional. */
export interface ParseOptions {
  /** Word budget for splitting long sections (integer ≥ 1). Default: `config.chunk_word_budget`, else 350. */
  chunkWordBudget?: number;
  /** Vault configuration: `class_rules` feed `note.classes`, `chunk_word_budget` the budget. */
  config?: VaultConfig;
  /** Lower-case hex SHA-256 of `bytes` when the caller already has it (saves hashing twice). */
  sha256?: string;
}

/** What {@link parseNote} returns: plain JSON data. */
export interface ParsedNote {
  note: NoteRecord;
  /** In file order, `chunk_index` 0.. */
  chunks: Chunk[];
  /** In file order; resolution `pending` (to be resolved by `resolveLinks`), `external` or `tag`. */
  links: LinkRecord[];
  /**
   * `not_utf8`, `binary_file`, `pathological_markdown`, `bad_frontmatter`, `duplicate_frontmatter_key`
   * (all severity `warning`), in that order.
   */
  findings: Finding[];
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** 1-based line of a byte offset (CRLF, CR, LF each one break; they are ASCII, so bytes suffice). */
function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) {
    const b = bytes[i];
    if (b === 10) line++;
    else if (b === 13) {
      if (bytes[i + 1] === 10) i++;
      line++;
    }
  }
  return line;
}

function fileTitle(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base.replace(/\.md$/i, '');
}

/**
 * A `displaced_frontmatter` warning, or null, for a `---` block that looks like frontmatter (its YAML is a
 * mapping) but that Obsidian does not read as frontmatter, so its keys are body text and no properties:
 * - the note's text opens with one or more blank lines and then a `---` … `---` (or `...`) block — Obsidian
 *   (like micromark's frontmatter extension) reads frontmatter only from the file's first line; `line` is
 *   the opening `---` (1-based);
 * - the block opens on line 1 but is closed by the YAML document-end marker `...` instead of `---` —
 *   Obsidian and micromark close frontmatter only with `---`; `line` is 1.
 * Either may have been meant as frontmatter and may mark the note author-only: the policy denies such a
 * note under `allowed_prefixes`, fail closed (docs/TRAVERSAL.md `hidden_note`).
 */
function displacedFrontmatter(path: VaultPath, text: string): Finding | null {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  let open = 0;
  while (open < lines.length && lines[open]!.trim() === '') open += 1;
  if (open >= lines.length || !/^---[ \t]*$/.test(lines[open]!)) return null;
  let close = open + 1;
  while (close < lines.length && !/^(---|\.\.\.)[ \t]*$/.test(lines[close]!)) close += 1;
  if (close >= lines.length) return null;
  // On line 1 a `---` close is frontmatter (or bad_frontmatter, reported already); only `...` is displaced.
  if (open === 0 && lines[close]!.startsWith('---')) return null;
  const parsed = readFrontmatter(path, lines.slice(open + 1, close).join('\n'), open + 2);
  if (parsed.data === null) return null;
  const message = open === 0
    ? `${path}:1: a \`---\` block at the top of the note closed by the YAML document-end marker \`...\` (line ${close + 1}) is not frontmatter (Obsidian closes frontmatter only with \`---\`), so its keys are body text; close it with \`---\` to make it frontmatter`
    : `${path}:${open + 1}: a \`---\` block after ${open} blank line${open === 1 ? '' : 's'} at the top of the note is not frontmatter (Obsidian reads frontmatter only from the first line), so its keys are body text; remove the blank lines to make it frontmatter`;
  return { code: 'displaced_frontmatter', severity: 'warning', message, path, line: open + 1 };
}

/**
 * The note's syntax and frontmatter: one mdast parse, then the YAML of its `---` block. A block that is
 * not valid frontmatter (a `bad_frontmatter` finding: YAML that does not parse, is not a mapping, or
 * cannot become JSON) is not frontmatter at all: the text is parsed again with frontmatter recognition
 * off, so those lines are body markdown — chunked, searchable, their links extracted — and every line
 * of the file belongs to valid frontmatter, a chunk, or a blank edge (docs/PARSING.md, "Frontmatter").
 * Findings: `pathological_markdown` per exceeded threshold, then the frontmatter findings (and
 * `displaced_frontmatter`, {@link displacedFrontmatter}, for a block after blank lines).
 */
function readSyntax(path: VaultPath, text: string): { syntax: MarkdownSyntax; frontmatter: Record<string, unknown> | null; findings: Finding[] } {
  let syntax = parseMarkdown(path, text);
  const findings: Finding[] = [];
  let frontmatter: Record<string, unknown> | null = null;
  const frontmatterFindings: Finding[] = [];
  if (syntax.frontmatter) {
    const fm = readFrontmatter(path, syntax.frontmatter.value, syntax.frontmatter.line_start + 1);
    frontmatter = fm.data;
    frontmatterFindings.push(...fm.findings);
    if (fm.findings.some((f) => f.code === 'bad_frontmatter')) syntax = parseMarkdown(path, text, { frontmatter: false });
  }
  if (!syntax.frontmatter) {
    const displaced = displacedFrontmatter(path, text);
    if (displaced) frontmatterFindings.push(displaced);
  }
  for (const hit of syntax.pathology) {
    findings.push({ code: 'pathological_markdown', severity: 'warning', message: pathologyMessage(path, hit), path, line: hit.line });
  }
  findings.push(...frontmatterFindings);
  return { syntax, frontmatter, findings };
}

/**
 * Parse one note. Pure and synchronous; callable in a worker thread.
 *
 * Rules:
 * - Bytes containing a NUL byte → finding `binary_file`; bytes that are not valid UTF-8 → finding
 *   `not_utf8` (with the line of the first bad byte). Either way the note is still listed (title from
 *   the file name, `line_count` 0, `line_ending` `none`) with no chunks and no links: never a crash,
 *   never silently dropped.
 * - Bad YAML frontmatter → finding `bad_frontmatter` with its file line; the note is indexed with
 *   `frontmatter: null` and the block's lines as body text (chunks, links, headings).
 * - Links: the frontmatter's property links first (src/links/properties.ts, position `property`), then
 *   the body's links, each in file order.
 * - `title` = frontmatter `title`, else the file name without `.md`; `aliases` and `tags` from
 *   frontmatter, plus inline `#tags` (not in code or links); `classes` from {@link targetClasses}.
 *
 * @param path vault-relative POSIX NFC path (`Aetheria/Worldbuilding/Territories.md`).
 * @param bytes the raw file (size counted in bytes).
 * @throws LoretraceError `bad_options` (exit 2) for a chunk word budget that is not an integer ≥ 1.
 */
export function parseNote(path: VaultPath, bytes: Uint8Array, options: ParseOptions = {}): ParsedNote {
  const config = options.config ?? {};
  const budget = options.chunkWordBudget ?? config.chunk_word_budget;
  const sha256 = options.sha256 ?? createHash('sha256').update(bytes).digest('hex');
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const findings: Finding[] = [];

  const emptyNote = (): NoteRecord => ({
    path,
    title: fileTitle(path),
    aliases: [],
    tags: [],
    frontmatter: null,
    frontmatter_lines: null,
    size: bytes.length,
    sha256,
    line_count: 0,
    line_ending: 'none',
    bom,
    classes: targetClasses(path, config),
    headings: [],
    blocks: [],
    chunk_count: 0,
  });

  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    findings.push({
      code: 'binary_file',
      severity: 'warning',
      message: `${path} contains a NUL byte at byte ${nul}: expected a text file; it is listed with no chunks and no links`,
      path,
    });
    return { note: emptyNote(), chunks: [], links: [], findings };
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const line = lineOfByte(bytes, Math.max(at, 0));
    findings.push({
      code: 'not_utf8',
      severity: 'warning',
      message: `${path}:${line}: byte ${at} is not valid UTF-8: expected UTF-8 text; the note is listed with no chunks and no links`,
      path,
      line,
    });
    return { note: emptyNote(), chunks: [], links: [], findings };
  }

  const { syntax, frontmatter, findings: syntaxFindings } = readSyntax(path, text);
  findings.push(...syntaxFindings);
  const { chunks, headings } = buildChunks(syntax, budget === undefined ? {} : { chunkWordBudget: budget });
  const refs = collectNoteRefs(syntax, chunks);
  const links = syntax.frontmatter
    ? [...propertyLinks(path, syntax.frontmatter.value, syntax.frontmatter.line_start + 1), ...refs.links]
    : refs.links;

  const tags: string[] = [];
  const seen = new Set<string>();
  for (const t of [...frontmatterTags(frontmatter), ...refs.tags]) {
    const key = t.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      tags.push(t);
    }
  }

  const note: NoteRecord = {
    path,
    title: frontmatterTitle(frontmatter) ?? fileTitle(path),
    aliases: frontmatterAliases(frontmatter),
    tags,
    frontmatter,
    frontmatter_lines: syntax.frontmatter
      ? { line_start: syntax.frontmatter.line_start, line_end: syntax.frontmatter.line_end }
      : null,
    size: bytes.length,
    sha256,
    line_count: syntax.lines.length,
    line_ending: detectLineEnding(text),
    bom,
    classes: targetClasses(path, config, { tags }),
    headings,
    blocks: refs.blocks,
    chunk_count: chunks.length,
  };
  return { note, chunks, links, findings };
}

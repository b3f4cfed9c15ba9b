// Hostile notes for the parser (BREAKER items 5–8): shapes on which micromark is superlinear are caught by a
// deterministic pre-scan and parsed in degraded mode; our own helpers stay linear; duplicate frontmatter keys
// keep the last value. No timing assertions: the 400 KB cases only have to finish within vitest's timeout.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { parseMarkdown, parseNote, sliceLines, splitLines } from '../src/notes/index.js';
import type { ParsedNote } from '../src/notes/index.js';
import { degradedRoot, frontmatterFences, measureMarkdown, PATHOLOGY_LIMITS, pathologyHits, pathologyMessage } from '../src/notes/pathological.js';
import { buildChunks } from '../src/chunks/chunk.js';
import { collectNoteRefs } from '../src/links/extract.js';
import { checkPath, compilePolicy } from '../src/policy/index.js';
import type { VaultIndex } from '../src/types.js';
import { listVault } from './helpers/fixture-notes.js';
import { AETHERIA, FIXTURE_VAULT, hasShared, sharedNotice } from './helpers/shared.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const TAIL = '; parsed in degraded mode (headings by line scan, wikilinks and embeds only, no emphasis/list/table structure)';

/** Chunks as [index, heading_path, line_start, line_end, word_count]. */
const ranges = (r: ParsedNote) => r.chunks.map((c) => [c.chunk_index, c.heading_path, c.line_start, c.line_end, c.word_count]);

/** The chunk invariant of docs/PARSING.md. */
function expectChunkInvariant(text: string, r: ParsedNote): void {
  const lines = splitLines(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  let prevEnd = 0;
  for (const c of r.chunks) {
    expect(c.text).toBe(sliceLines(lines, c.line_start, c.line_end));
    expect(c.line_start).toBeGreaterThan(prevEnd);
    expect(c.line_end).toBeLessThanOrEqual(lines.length);
    prevEnd = c.line_end;
  }
}

const nestedList = (n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += `${'  '.repeat(i)}- item [[Target]]\n`;
  return s;
};

describe('parseNote: pathological markdown (degraded mode)', () => {
  it('parses alternating emphasis delimiters in degraded mode with a pathological_markdown finding', () => {
    const text = `# E\n${'*_'.repeat(5000)}x\n`;
    const r = parseNote('Hostile.md', enc(text));
    expect(r.findings).toEqual([
      {
        code: 'pathological_markdown',
        severity: 'warning',
        message: `Hostile.md:2: pathological markdown: inline_work 100,020,000 exceeds the limit 50,500,300 (50,000,000 + 50 per character); the largest inline block (line 2) has 10,000 delimiters (* _ [ ] < \`) in 10,002 characters${TAIL}`,
        path: 'Hostile.md',
        line: 2,
      },
    ]);
    expect(ranges(r)).toEqual([[0, ['E'], 1, 2, 3]]);
    expect(r.note.headings).toEqual([{ text: 'E', depth: 1, line: 1, chunk_index: 0 }]);
    expect(r.links).toEqual([]);
    expectChunkInvariant(text, r);
  });

  it('parses a list nested one level deeper per line (500 lines) in degraded mode, keeping every wikilink', () => {
    const text = nestedList(500);
    const r = parseNote('Hostile.md', enc(text));
    expect(r.findings).toEqual([
      {
        code: 'pathological_markdown',
        severity: 'warning',
        message: `Hostile.md:500: pathological markdown: nesting_work 41,791,750 exceeds the limit 1,517,000 (1,000,000 + 2 per character); line 500 is nested 500 containers deep (lists and block quotes)${TAIL}`,
        path: 'Hostile.md',
        line: 500,
      },
    ]);
    // Each list-marker line is one flat item, so the 350-word budget splits between items.
    expect(ranges(r)).toEqual([
      [0, [], 1, 116, 348],
      [1, [], 117, 232, 348],
      [2, [], 233, 348, 348],
      [3, [], 349, 464, 348],
      [4, [], 465, 500, 108],
    ]);
    expect(r.links).toHaveLength(500);
    expect(r.links[499]).toEqual({
      source_path: 'Hostile.md', line: 500, column: 1006, chunk_index: 4, syntax: 'wikilink', position: 'list_item',
      raw: '[[Target]]', target: 'Target', fragment: null, display: null, resolution: { status: 'pending' },
    });
    expectChunkInvariant(text, r);
  });

  it('parses 20,000 nested brackets plus 5,000 unclosed link destinations in degraded mode', () => {
    const text = '['.repeat(20000) + ']'.repeat(20000) + '[a]('.repeat(5000);
    const r = parseNote('Hostile.md', enc(text));
    expect(r.findings.map((f) => [f.code, f.line, f.message])).toEqual([
      ['pathological_markdown', 1, `Hostile.md:1: pathological markdown: inline_work 3,000,050,000 exceeds the limit 53,000,000 (50,000,000 + 50 per character); the largest inline block (line 1) has 50,000 delimiters (* _ [ ] < \`) in 60,001 characters${TAIL}`],
      ['pathological_markdown', 1, `Hostile.md:1: pathological markdown: block_work 50,002 exceeds the limit 30,000 parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in one micromark run; line 1 is one run${TAIL}`],
    ]);
    expect(ranges(r)).toEqual([[0, [], 1, 1, 1]]);
    expect(r.links).toEqual([]);
  });

  it('parses one line of 2,000 nested block quotes in degraded mode and still finds its wikilink', () => {
    const text = `${'>'.repeat(2000)} [[Deep]]\n`;
    const r = parseNote('Hostile.md', enc(text));
    expect(r.findings.map((f) => f.message)).toEqual([
      `Hostile.md:1: pathological markdown: nesting_work 4,000,000 exceeds the limit 1,004,020 (1,000,000 + 2 per character); line 1 is nested 2,000 containers deep (lists and block quotes)${TAIL}`,
    ]);
    expect(r.links.map((l) => [l.line, l.column, l.raw, l.position])).toEqual([[1, 2002, '[[Deep]]', 'prose']]);
  });

  it('parses thousands of unclosed HTML comments in one paragraph in degraded mode', () => {
    const r = parseNote('Hostile.md', enc(`# H\n${'a <!--'.repeat(4000)}\n`));
    expect(r.findings.map((f) => f.message)).toEqual([
      `Hostile.md:2: pathological markdown: inline_work 96,004,000 exceeds the limit 51,200,250 (50,000,000 + 50 per character); the largest inline block (line 2) has 4,000 delimiters (* _ [ ] < \`) in 24,001 characters${TAIL}`,
    ]);
    expect(ranges(r)).toEqual([[0, ['H'], 1, 2, 4003]]);
  });

  it('finishes 400 KB of each hostile shape (linear after the guard)', () => {
    const emph = parseNote('E.md', enc(`# E\n${'*_'.repeat(200000)}x\n`));
    expect(emph.findings.map((f) => f.message)).toEqual([
      `E.md:2: pathological markdown: inline_work 160,000,800,000 exceeds the limit 70,000,300 (50,000,000 + 50 per character); the largest inline block (line 2) has 400,000 delimiters (* _ [ ] < \`) in 400,002 characters${TAIL}`,
      `E.md:1: pathological markdown: block_work 400,004 exceeds the limit 30,000 parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in one micromark run; lines 1-2 are one run${TAIL}`,
      `E.md:1: pathological markdown: block_total 400,004 exceeds the limit 180,001 (100,000 + 1 per 5 characters) parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in the note (lines 1-2)${TAIL}`,
    ]);
    expect(ranges(emph)).toEqual([[0, ['E'], 1, 2, 3]]);
    const brackets = parseNote('B.md', enc('['.repeat(150000) + ']'.repeat(150000) + '[a]('.repeat(25000)));
    // inline_work, block_work and block_total (350,000 delimiters on one line).
    expect(brackets.findings.map((f) => [f.code, f.line])).toEqual([['pathological_markdown', 1], ['pathological_markdown', 1], ['pathological_markdown', 1]]);
    expect(ranges(brackets)).toEqual([[0, [], 1, 1, 1]]);
    const list = nestedList(624);
    const nested = parseNote('L.md', enc(list));
    expect(list.length).toBe(399984);
    expect(nested.findings.map((f) => [f.code, f.line])).toEqual([['pathological_markdown', 624]]);
    expect(nested.links).toHaveLength(624);
    expectChunkInvariant(list, nested);
  });

  it('keeps headings, fences, frontmatter, code spans, escapes, embeds, fields and blocks in degraded mode', () => {
    const text = [
      '---',
      'title: Hostile',
      'tags: [lore]',
      '---',
      '# Top **Bold** [[T|shown]] ##',
      'Intro with [[A]] and ![[Map.png|300]].',
      '',
      '```',
      '# not a heading [[InCode]]',
      '```',
      'Setext `[[Code]]` \\[[Esc]] #tag',
      '-----',
      '- **Field:** [[B#H]] ^blk',
      '  - nested [[C#^b1]]',
      `${'*_'.repeat(4000)}x`,
      '',
      '| a | b |',
      '|---|---|',
      '| [[Cell]] | x |',
      '',
      '    [[Indented Code]]',
      '',
      '## Tail',
      'See https://example.org/x).',
    ].join('\n');
    const r = parseNote('Hostile.md', enc(text));
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([['pathological_markdown', 14]]);
    expect(r.note.title).toBe('Hostile');
    expect(r.note.tags).toEqual(['lore', 'tag']);
    expect(r.note.frontmatter_lines).toEqual({ line_start: 1, line_end: 4 });
    expect(r.note.headings).toEqual([
      { text: 'Top **Bold** shown', depth: 1, line: 5, chunk_index: 0 },
      { text: 'Setext [[Code]] [[Esc]] #tag', depth: 2, line: 11, chunk_index: 1 },
      { text: 'Tail', depth: 2, line: 23, chunk_index: 2 },
    ]);
    expect(r.note.blocks).toEqual([{ id: 'blk', line: 13, chunk_index: 1 }]);
    expect(ranges(r).map((c) => c.slice(0, 4))).toEqual([
      [0, ['Top **Bold** shown'], 5, 10],
      [1, ['Top **Bold** shown', 'Setext [[Code]] [[Esc]] #tag'], 11, 21],
      [2, ['Top **Bold** shown', 'Tail'], 23, 24],
    ]);
    expect(r.links.map((l) => [l.line, l.column, l.chunk_index, l.syntax, l.position, l.raw, l.target, l.fragment, l.display])).toEqual([
      [5, 16, 0, 'wikilink', 'heading', '[[T|shown]]', 'T', null, 'shown'],
      [6, 12, 0, 'wikilink', 'prose', '[[A]]', 'A', null, null],
      [6, 22, 0, 'embed', 'prose', '![[Map.png|300]]', 'Map.png', null, null],
      [11, 28, 1, 'tag', 'heading', '#tag', 'tag', null, null],
      [13, 14, 1, 'heading_link', 'field', '[[B#H]]', 'B', 'H', null],
      [14, 12, 1, 'block_link', 'list_item', '[[C#^b1]]', 'C', '^b1', null],
      [19, 3, 1, 'wikilink', 'table', '[[Cell]]', 'Cell', null, null],
      [24, 5, 2, 'external', 'prose', 'https://example.org/x', 'https://example.org/x', null, 'https://example.org/x'],
    ]);
    expectChunkInvariant(text, r);
  });

  it('keeps a note just under the limits on the normal micromark path', () => {
    // 3,500 pairs: inline_work 7,000 × 7,002 = 49,014,000 ≤ 50,000,000 + 50 × 7,006.
    const r = parseNote('Near.md', enc(`# *E*\n${'*_'.repeat(3500)}x\n`));
    expect(r.findings).toEqual([]);
    expect(r.note.headings[0]?.text).toBe('E'); // emphasis parsed: the normal path
    const deep = parseNote('Deep.md', enc(nestedList(140)));
    expect(deep.findings).toEqual([]);
    expect(ranges(deep)).toEqual([[0, [], 1, 140, 420]]); // one top-level list item: never split
  });
});

/** A note with one `cols` × `rows` GFM table (a wikilink in the last row's first cell) between two sections. */
const wideTableNote = (cols: number, rows: number): string =>
  `# Wide\n\nIntro [[Target]].\n\n|${'a|'.repeat(cols)}\n|${'-|'.repeat(cols)}\n${`|${'b|'.repeat(cols)}\n`.repeat(rows - 1)}|[[Cell]]|${'b|'.repeat(cols - 1)}\n\n## After\n\nText [[Other]].\n`;

describe('parseNote: parse units (block_work, block_total)', () => {
  it('sends a wide table over the block_work limit to degraded mode, with exact chunks and links', () => {
    // 1,500 columns × 20 rows: 33,000 cells in 66 KB (far under max_file_bytes). Units: lines 1, 5, 28
    // are 2 each (line + inline block), lines 3 and 30 6 (with the 4 brackets of a wikilink), the
    // delimiter row 1 + 2 × 1,500 (header and delimiter cells), each body row 1 + 1 + 1,499, the last
    // one 4 more → 18 + 3,001 + 20 × 1,501 + 4 = 33,043.
    const text = wideTableNote(1500, 20);
    expect(splitLines(text)).toHaveLength(30);
    const r = parseNote('Wide.md', enc(text));
    expect(r.findings).toEqual([
      {
        code: 'pathological_markdown',
        severity: 'warning',
        message: `Wide.md:1: pathological markdown: block_work 33,043 exceeds the limit 30,000 parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in one micromark run; lines 1-30 are one run, 33,000 of them table cells${TAIL}`,
        path: 'Wide.md',
        line: 1,
      },
    ]);
    expect(r.chunks.map((c) => [c.chunk_index, c.heading_path, c.line_start, c.line_end])).toEqual([
      [0, ['Wide'], 1, 26],
      [1, ['Wide', 'After'], 28, 30],
    ]);
    expect(r.links.map((l) => [l.line, l.column, l.chunk_index, l.position, l.target])).toEqual([
      [3, 7, 0, 'prose', 'Target'],
      [26, 2, 0, 'table', 'Cell'],
      [30, 6, 1, 'prose', 'Other'],
    ]);
    expectChunkInvariant(text, r);
  });

  it('keeps a table just under the block_work limit on the normal path, parsed as a table', () => {
    // 1,300 columns: 18 + (1 + 2,600) + 20 × 1,301 + 4 = 28,643 units ≤ 30,000.
    const text = wideTableNote(1300, 20);
    const syntax = parseMarkdown('Near.md', text);
    expect(syntax.pathology).toEqual([]);
    const table = syntax.root.children.find((n) => n.type === 'table');
    expect(table?.type === 'table' && [table.children.length, table.children[0]?.children.length, table.position?.start.line, table.position?.end.line]).toEqual([21, 1300, 5, 26]);
    // The chunks and links of that one parse (what parseNote does after parseMarkdown).
    const { chunks } = buildChunks(syntax, {});
    expect(chunks.map((c) => [c.heading_path, c.line_start, c.line_end])).toEqual([
      [['Wide'], 1, 26],
      [['Wide', 'After'], 28, 30],
    ]);
    expect(collectNoteRefs(syntax, chunks).links.map((l) => [l.line, l.column, l.position, l.target])).toEqual([
      [3, 7, 'prose', 'Target'],
      [26, 2, 'table', 'Cell'],
      [30, 6, 'prose', 'Other'],
    ]);
  });

  it('parses an ordinary table (Edge/Tables.md) as a table with its cells', () => {
    const text = readFileSync(join(FIXTURE_VAULT, 'Edge/Tables.md'), 'utf8');
    const syntax = parseMarkdown('Edge/Tables.md', text);
    expect(syntax.pathology).toEqual([]);
    const table = syntax.root.children.find((n) => n.type === 'table');
    expect(table?.type === 'table' && table.children.map((row) => row.children.length)).toEqual([2, 2, 2, 2, 2]);
  });

  it('sends a long flat list over the block_work limit to degraded mode', () => {
    // 4,300 items: each line is 7 units (line, marker, inline block, 4 brackets) → 30,100.
    const text = '- item [[Target]]\n'.repeat(4300);
    const r = parseNote('List.md', enc(text));
    expect(r.findings.map((f) => [f.code, f.line, f.message])).toEqual([
      ['pathological_markdown', 1, `List.md:1: pathological markdown: block_work 30,100 exceeds the limit 30,000 parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in one micromark run; lines 1-4300 are one run${TAIL}`],
    ]);
    expect(r.links).toHaveLength(4300);
    expect(r.links.every((l, i) => l.line === i + 1 && l.column === 8 && l.position === 'list_item')).toBe(true);
    expectChunkInvariant(text, r);
  });

  it('counts parse units per micromark run and for the whole note (block_total)', () => {
    // 200 rows of 1,000 cells in runs of 10 rows: each run 10 × 1,001 units (the first also the header
    // and delimiter rows), under block_work; the note 200,200 + 2 + 2,001 units, over 100,000 + N / 5.
    const lines = [`|${'a|'.repeat(1000)}`, `|${'-|'.repeat(1000)}`, ...Array.from({ length: 200 }, () => `|${'b|'.repeat(1000)}`)];
    const n = lines.join('\n').length;
    const runStarts = Array.from({ length: 19 }, (_, i) => 13 + 10 * i);
    const shape = measureMarkdown(lines, 1, runStarts);
    expect(shape.blocks).toEqual({ units: 202203, cells: 202000, line_start: 1, line_end: 202 });
    expect(shape.largest_run).toEqual({ units: 2003 + 10010, cells: 12000, line_start: 1, line_end: 12 });
    expect(pathologyHits(shape, n).map((h) => [h.threshold, h.value, h.limit, h.line, h.line_end, h.count])).toEqual([
      ['block_total', 202203, 100000 + Math.floor(n / 5), 1, 202, 202000],
    ]);
    expect(pathologyMessage('T.md', pathologyHits(shape, n)[0]!)).toBe(
      `T.md:1: pathological markdown: block_total 202,203 exceeds the limit ${(100000 + Math.floor(n / 5)).toLocaleString('en-US')} (100,000 + 1 per 5 characters) parse units (non-blank lines, > and list markers, inline blocks, * _ [ ] < \` delimiters, table cells) in the note (lines 1-202), 202,000 of them table cells${TAIL}`,
    );
    // One run: the same units in one micromark run exceed block_work too.
    expect(pathologyHits(measureMarkdown(lines, 1), n).map((h) => h.threshold)).toEqual(['block_work', 'block_total']);
  });

  it('counts code lines inside fences but not frontmatter', () => {
    const lines = splitLines('---\na: 1\n---\n```\nx\n\ny\n```\n> - q\n');
    expect(measureMarkdown(lines, 4).blocks).toEqual({ units: 1 + 1 + 1 + 1 + 3 + 1, cells: 0, line_start: 4, line_end: 9 });
  });
});

describe('measureMarkdown', () => {
  it('does not measure fenced code or frontmatter, and splits inline blocks at blank lines, items, headings and table rows', () => {
    const lines = splitLines('---\na: [[[[\n---\n```\n]]]]]]\n```\npara [x]\nmore *y*\n\n- i [[A]]\n- j\n# H _z_\n|a|b|\n|-|-|\n|[c]|d|\n');
    const shape = measureMarkdown(lines, 4);
    // blocks: lines 7-8 (D 4, L 18) → 72; line 10 (D 4 after the marker, L 10) → 40; line 11 → 0;
    // line 12 (D 2, L 8) → 16; line 13 header row (D 0); line 15 (D 2, L 8) → 16.
    expect(shape.inline_work).toBe(72 + 40 + 16 + 16);
    expect(shape.worst_inline).toEqual({ line_start: 7, line_end: 8, delimiters: 4, length: 18, work: 72 });
    expect(shape.deepest).toEqual({ line: 10, depth: 1 });
    expect(shape.nesting_work).toBe(2);
  });

  it('counts nesting depth from indentation and markers', () => {
    expect(measureMarkdown(splitLines(nestedList(3)), 1)).toMatchObject({ nesting_work: 1 + 4 + 9, deepest: { line: 3, depth: 3 } });
    expect(measureMarkdown(splitLines('> - > - x\n'), 1)).toMatchObject({ nesting_work: 16, deepest: { line: 1, depth: 4 } });
  });

  it('stays linear on a near-delimiter table row with a long run of spaces (no regex backtracking)', () => {
    // Not a delimiter row (ends in x): one block of 3 lines, D 4, L 6 + 200,004 + 6.
    expect(measureMarkdown(['|[a]|', `|-${' '.repeat(200000)}x`, '|[b]|'], 1).inline_work).toBe(4 * 200016);
    // A delimiter row: header and body rows are separate blocks.
    expect(measureMarkdown(['|[a]|', `|-${' '.repeat(200000)}|`, '|[b]|'], 1).inline_work).toBe(12 + 12);
  });
});

describe.skipIf(!hasShared)(`pathological-markdown guard on the real vault (${hasShared ? 'AetheriaLore' : sharedNotice})`, () => {
  const paths = hasShared ? listVault(AETHERIA).filter((p) => p.endsWith('.md')) : [];
  const texts = paths.map((p) => [p, new TextDecoder().decode(readFileSync(join(AETHERIA, p)))] as const);

  it('keeps all 148 notes on the normal path, far below both limits', () => {
    expect(texts).toHaveLength(148);
    let maxInline = 0;
    let maxNesting = 0;
    let maxDepth = 0;
    let maxRun = 0;
    for (const [p, text] of texts) {
      const lines = splitLines(text);
      const fm = frontmatterFences(lines);
      const shape = measureMarkdown(lines, fm ? fm.line_end + 1 : 1);
      expect(pathologyHits(shape, text.length), p).toEqual([]);
      maxInline = Math.max(maxInline, shape.inline_work);
      maxNesting = Math.max(maxNesting, shape.nesting_work);
      maxDepth = Math.max(maxDepth, shape.deepest.depth);
      maxRun = Math.max(maxRun, shape.largest_run.units);
    }
    // The largest values in the vault: hundreds of times below the base limits.
    expect([maxInline, maxNesting, maxDepth, maxRun]).toEqual([115126, 139, 2, 526]);
    expect(PATHOLOGY_LIMITS.blockWorkRun / maxRun).toBeGreaterThan(50);
    expect(PATHOLOGY_LIMITS.inlineWorkBase / maxInline).toBeGreaterThan(400);
    expect(PATHOLOGY_LIMITS.nestingWorkBase / maxNesting).toBeGreaterThan(7000);
  });

  it('finds frontmatter exactly where remark-frontmatter does', () => {
    for (const [p, text] of texts) {
      const syntax = parseMarkdown(p, text);
      expect(syntax.pathology).toEqual([]);
      expect(frontmatterFences(syntax.lines), p).toEqual(syntax.frontmatter ? { line_start: syntax.frontmatter.line_start, line_end: syntax.frontmatter.line_end } : null);
    }
  });

  it('gives the same chunks as micromark when a real note is forced through degraded mode', () => {
    let same = 0;
    for (const [p, text] of texts) {
      const normal = parseMarkdown(p, text);
      const root = degradedRoot(normal.text, normal.lines, normal.lineStarts);
      const degraded = { ...normal, root };
      const a = buildChunks(normal).chunks.map((c) => [c.line_start, c.line_end, c.heading_path]);
      const b = buildChunks(degraded).chunks;
      for (const c of b) expect(c.text).toBe(sliceLines(normal.lines, c.line_start, c.line_end));
      if (JSON.stringify(a) === JSON.stringify(b.map((c) => [c.line_start, c.line_end, c.heading_path]))) same++;
      // Wikilinks and embeds: identical targets and lines.
      const wl = (s: typeof normal, chunks: ReturnType<typeof buildChunks>['chunks']) =>
        collectNoteRefs(s, chunks).links.filter((l) => ['wikilink', 'heading_link', 'block_link', 'embed'].includes(l.syntax) && l.raw.includes('[[')).map((l) => [l.line, l.column, l.target, l.fragment]);
      expect(wl(degraded, b), p).toEqual(wl(normal, buildChunks(normal).chunks));
    }
    expect(same).toBe(148);
  });
});

describe('parseNote: our own helpers stay linear on hostile lines', () => {
  it('classifies a link after 100,000 spaces of list continuation without regex backtracking', () => {
    const r = parseNote('Sp.md', enc(`- [[A]]\n${' '.repeat(100000)}[[B]]\n`));
    expect(r.findings).toEqual([]);
    expect(r.links.map((l) => [l.line, l.column, l.position, l.raw])).toEqual([
      [1, 3, 'list_item', '[[A]]'],
      [2, 100001, 'list_item', '[[B]]'],
    ]);
  });

  it('trims 100,000 unbalanced closing parentheses from a bare URL in one pass', () => {
    const r = parseNote('Url.md', enc(`See https://example.org/a_(b)${')'.repeat(100000)}.\n`));
    expect(r.links.map((l) => [l.syntax, l.raw, l.target])).toEqual([['external', 'https://example.org/a_(b)', 'https://example.org/a_(b)']]);
  });

  it('reads heading text nested 1,000 emphasis levels deep', () => {
    const r = parseNote('Nest.md', enc(`# ${'*a '.repeat(1000)}x${' b*'.repeat(1000)}\n`));
    expect(r.findings).toEqual([]);
    expect(r.note.headings).toEqual([{ text: `${'a '.repeat(1000)}x${' b'.repeat(1000)}`, depth: 1, line: 1, chunk_index: 0 }]);
  });
});

describe('parseNote: duplicate frontmatter keys', () => {
  it('keeps the last value of a repeated key with a duplicate_frontmatter_key warning per repeat', () => {
    const r = parseNote('Dup.md', enc('---\ntitle: First\nvisibility: public\nnested:\n  a: 1\n  a: 2\nvisibility: author-only\ntitle: Last\n---\n# Dup\n'));
    expect(r.note.frontmatter).toEqual({ title: 'Last', visibility: 'author-only', nested: { a: 2 } });
    expect(r.note.title).toBe('Last');
    expect(r.findings).toEqual([
      { code: 'duplicate_frontmatter_key', severity: 'warning', message: 'Dup.md:6: frontmatter key "a" is repeated; the last value is kept (as Obsidian does)', path: 'Dup.md', line: 6, column: 3 },
      { code: 'duplicate_frontmatter_key', severity: 'warning', message: 'Dup.md:7: frontmatter key "visibility" is repeated; the last value is kept (as Obsidian does)', path: 'Dup.md', line: 7, column: 1 },
      { code: 'duplicate_frontmatter_key', severity: 'warning', message: 'Dup.md:8: frontmatter key "title" is repeated; the last value is kept (as Obsidian does)', path: 'Dup.md', line: 8, column: 1 },
    ]);
  });

  it('still refuses a duplicate key next to invalid YAML, naming the other error', () => {
    const r = parseNote('Bad.md', enc('---\na: 1\na: 2\nb: [unclosed\n---\n'));
    expect(r.note.frontmatter).toBeNull();
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([['bad_frontmatter', 4]]);
  });

  it('still refuses an alias bomb', () => {
    const bomb = '---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n';
    const r = parseNote('Bomb.md', enc(bomb));
    expect(r.note.frontmatter).toBeNull();
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([['bad_frontmatter', 2]]);
  });
});

describe('parseNote: a recursive YAML alias (an anchor used inside itself)', () => {
  it('is one bad_frontmatter line naming the file, the alias\'s line and what was expected', () => {
    for (const [text, line, name] of [['---\ntitle: Cycle\na: &x [*x]\n---\n# Cycle\n\nbody text cycle\n', 3, 'x'], ['---\nvisibility: &v {a: *v}\n---\n# V\n', 2, 'v']] as const) {
      const r = parseNote('a/cycle.md', enc(text));
      expect(r.note.frontmatter).toBeNull();
      expect(r.findings).toEqual([{
        code: 'bad_frontmatter', severity: 'warning', path: 'a/cycle.md', line,
        message: `a/cycle.md:${line}: frontmatter has a recursive alias (*${name} is used inside the node anchored &${name}, which has no JSON form); expected an alias to refer to a node outside itself — its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
      }]);
      expect(r.findings[0]!.message).not.toContain('\n');
    }
  });
});

describe('checkPath: a note with a repeated visibility key stays hidden (fail closed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loretrace-hostile-parse-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let vault: VaultIndex;
  beforeAll(async () => {
    mkdirSync(join(dir, 'Lore', 'In'), { recursive: true });
    writeFileSync(join(dir, 'Lore', 'In', 'Dup.md'), '---\nvisibility: public\nvisibility: author-only\n---\n# Dup\nsecret\n');
    writeFileSync(join(dir, 'Lore', 'In', 'Open.md'), '---\nvisibility: author-only\nvisibility: public\n---\n# Open\nopen\n');
    vault = await indexVault(join(dir, 'Lore'), { persist: false });
  });

  it('denies the last-wins author-only note as hidden_ref and reports the repeat', () => {
    const c = compilePolicy({ max_link_depth: 1, allowed_prefixes: ['Lore:In/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: [] }, { index: vault });
    expect(checkPath(c, 'In/Dup.md')).toMatchObject({ ok: false, reason: 'hidden_ref' });
    // The notes stage keeps the last value (as Obsidian does), but the policy fails closed on any repeated
    // visibility key: author-only followed by public is denied too.
    expect(checkPath(c, 'In/Open.md')).toMatchObject({ ok: false, reason: 'hidden_ref' });
    expect(vault.notes.find((n) => n.path === 'In/Open.md')?.frontmatter).toMatchObject({ visibility: 'public' });
    expect(vault.findings.filter((f) => f.code === 'duplicate_frontmatter_key').map((f) => [f.path, f.line])).toEqual([
      ['In/Dup.md', 3],
      ['In/Open.md', 3],
    ]);
  });
});

describe('parseNote: fixture notes through degraded mode', () => {
  it('keeps the chunk invariant on every FixtureLore note when forced through the line scan', () => {
    const paths = listVault(FIXTURE_VAULT).filter((p) => p.endsWith('.md'));
    let checked = 0;
    for (const p of paths) {
      const bytes = readFileSync(join(FIXTURE_VAULT, p));
      if (bytes.includes(0)) continue;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        continue;
      }
      const normal = parseMarkdown(p, text);
      const degraded = { ...normal, root: degradedRoot(normal.text, normal.lines, normal.lineStarts) };
      const chunks = buildChunks(degraded).chunks;
      for (const c of chunks) expect(c.text, p).toBe(sliceLines(normal.lines, c.line_start, c.line_end));
      expect(chunks.map((c) => [c.line_start, c.line_end]), p).toEqual(buildChunks(normal).chunks.map((c) => [c.line_start, c.line_end]));
      checked++;
    }
    expect(checked).toBe(54);
  });
});

describe('chunk count per note: the headings threshold', () => {
  const limit = PATHOLOGY_LIMITS.headingsPerNote;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'loretrace-headings-'));
    mkdirSync(join(dir, 'Lore'));
    // Generated here, never committed: a note of nothing but headings, 10,000 over the limit, and one at the limit.
    writeFileSync(join(dir, 'Lore', 'Headings.md'), '# h\n'.repeat(limit + 10_000));
    writeFileSync(join(dir, 'Lore', 'At Limit.md'), '# h\n'.repeat(limit));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a note over 50,000 top-level headings: one pathological_markdown finding naming the file, the count and the line; at most 50,000 chunks, every line kept; a note at the limit is untouched', async () => {
    const index = await indexVault(join(dir, 'Lore'), { persist: false, workers: false });
    const over = index.chunks.filter((c) => c.path === 'Headings.md');
    const at = index.chunks.filter((c) => c.path === 'At Limit.md');
    expect(index.findings.filter((f) => f.path === 'Headings.md').map((f) => [f.code, f.severity, f.line, f.message])).toEqual([
      ['pathological_markdown', 'warning', 1, expect.stringMatching(/^Headings\.md:1: pathological markdown: block_work 120,000 exceeds /)],
      ['pathological_markdown', 'warning', limit + 1, `Headings.md:${limit + 1}: pathological markdown: 60,000 top-level headings exceed the limit 50,000 (one chunk each); the first 50,000 are chunk boundaries and heading targets, the 10,000 from line 50001 on are read as text of the section before them (lines 50001-60000 are kept, chunked by the word budget)${TAIL}`],
    ]);
    expect([over.length, over.at(-1)!.line_start, over.at(-1)!.line_end, over.at(-1)!.heading_path]).toEqual([limit, limit, limit + 10_000, ['h']]);
    // No silent loss: the chunks still cover every line of the note, in order.
    expect(over.map((c) => c.text).join('\n')).toBe('# h\n'.repeat(limit + 10_000).slice(0, -1));
    expect(index.notes.find((n) => n.path === 'Headings.md')!.headings.length).toBe(limit);
    expect([at.length, index.findings.filter((f) => f.path === 'At Limit.md' && /headings exceed/.test(f.message))]).toEqual([limit, []]);
  }, 120_000);

  it('counts ATX headings and setext underlines at top level only (not in block quotes, list items or code)', () => {
    const lines = ['# a', 'b', '===', '> # q', '- # l', '```', '# code', '```', 'c', '---', ''];
    expect(measureMarkdown(lines, 1).headings).toEqual({ count: 3, first_over_limit: 0 });
  });
});

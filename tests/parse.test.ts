import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLoretraceError } from '../src/errors.js';
import { detectLineEnding, parseMarkdown, parseNote, parseWikiLinkContent, sliceLines, splitLines } from '../src/notes/index.js';
import { expectGolden, goldenName, listVault, parseVault } from './helpers/fixture-notes.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
/** Notes owned by the parser fixtures: root-level notes and Edge/. */
const OWN = listVault(FIXTURE_VAULT).filter((p) => !p.includes('/') || p.startsWith('Edge/'));
const vault = parseVault(FIXTURE_VAULT, OWN);
const fixture = (path: string) => {
  const r = vault.parsed.get(path);
  if (!r) throw new Error(`fixture ${path} not parsed`);
  return r;
};

describe('splitLines', () => {
  it('splits at LF, CRLF and lone CR, each one break', () => {
    expect(splitLines('a\nb\r\nc\rd')).toEqual(['a', 'b', 'c', 'd']);
  });
  it('does not add a line for a final break', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\nb')).toEqual(['a', 'b']);
    expect(splitLines('a\r\n')).toEqual(['a']);
    expect(splitLines('a\r')).toEqual(['a']);
  });
  it('counts blank lines, including a lone break', () => {
    expect(splitLines('\n')).toEqual(['']);
    expect(splitLines('a\n\n')).toEqual(['a', '']);
    expect(splitLines('\r\n\r\nx')).toEqual(['', '', 'x']);
  });
  it('returns no lines for an empty text', () => {
    expect(splitLines('')).toEqual([]);
  });
  it('drops a BOM from line 1', () => {
    expect(splitLines('\uFEFF# T\nx')).toEqual(['# T', 'x']);
    expect(splitLines('\uFEFF')).toEqual([]);
  });
});

describe('sliceLines', () => {
  const lines = ['one', 'two', 'three'];
  it('joins an inclusive 1-based range with LF', () => {
    expect(sliceLines(lines, 1, 1)).toBe('one');
    expect(sliceLines(lines, 2, 3)).toBe('two\nthree');
  });
  it('throws bad_line_range outside the file', () => {
    expect(() => sliceLines(lines, 0, 1)).toThrow('line range 0-1 is outside 1-3: expected integers with 1 ≤ start ≤ end ≤ 3');
    expect(() => sliceLines(lines, 3, 4)).toThrow(/outside 1-3/);
    expect(() => sliceLines(lines, 3, 2)).toThrow(/outside 1-3/);
    try {
      sliceLines(lines, 2, 9);
    } catch (e) {
      expect(isLoretraceError(e) && e.code).toBe('bad_line_range');
    }
  });
});

describe('detectLineEnding', () => {
  it('names each kind and mixtures', () => {
    expect(detectLineEnding('a\nb')).toBe('lf');
    expect(detectLineEnding('a\r\nb\r\n')).toBe('crlf');
    expect(detectLineEnding('a\rb')).toBe('cr');
    expect(detectLineEnding('a\nb\r\n')).toBe('mixed');
    expect(detectLineEnding('abc')).toBe('none');
  });
});

describe('parseWikiLinkContent', () => {
  it('splits target, fragment and display', () => {
    expect(parseWikiLinkContent('T')).toEqual({ target: 'T', fragment: null, display: null });
    expect(parseWikiLinkContent('T|alias')).toEqual({ target: 'T', fragment: null, display: 'alias' });
    expect(parseWikiLinkContent('T#Heading')).toEqual({ target: 'T', fragment: 'Heading', display: null });
    expect(parseWikiLinkContent('T#^b1')).toEqual({ target: 'T', fragment: '^b1', display: null });
    expect(parseWikiLinkContent('#H')).toEqual({ target: '', fragment: 'H', display: null });
    expect(parseWikiLinkContent('A#B#C|x|y')).toEqual({ target: 'A', fragment: 'B#C', display: 'x|y' });
  });
  it('treats an escaped bar (table cell) as the separator', () => {
    expect(parseWikiLinkContent('Fences\\|the fences')).toEqual({ target: 'Fences', fragment: null, display: 'the fences' });
    expect(parseWikiLinkContent('Map.png\\|300')).toEqual({ target: 'Map.png', fragment: null, display: '300' });
  });
});

describe('parseMarkdown', () => {
  it('reports a frontmatter block closed at end of file without a newline', () => {
    const s = parseMarkdown('x.md', '---\na: 1\n---');
    expect(s.frontmatter).toEqual({ value: 'a: 1', line_start: 1, line_end: 3 });
  });
  it('reads a top `---` without a closing fence as a thematic break', () => {
    const s = parseMarkdown('x.md', '---\n\ntext\n');
    expect(s.frontmatter).toBeNull();
    expect(s.root.children[0]?.type).toBe('thematicBreak');
  });
  it('keeps mdast lines equal to splitLines lines for CR and CRLF', () => {
    const s = parseMarkdown('x.md', 'a\r\rb\r\n\r\n# H\r');
    const h = s.root.children.find((c) => c.type === 'heading');
    expect(h?.position?.start.line).toBe(5);
    expect(s.lines[4]).toBe('# H');
  });
});

describe('parseNote', () => {
  it('matches the golden record of every parser fixture note', () => {
    expect(vault.parsed.size).toBe(24);
    for (const [path, parsed] of vault.parsed) expectGolden(goldenName(path), parsed);
  });

  it('takes title, aliases and tags from frontmatter and keeps its lines out of chunks', () => {
    const { note, chunks } = fixture('Home.md');
    expect(note.title).toBe('Fixture Home');
    expect(note.aliases).toEqual(['Start', 'Front Page']);
    expect(note.tags).toEqual(['MOC']);
    expect(note.frontmatter_lines).toEqual({ line_start: 1, line_end: 5 });
    expect(note.classes).toEqual(['index']);
    expect(chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [6, 6, []],
      [8, 14, ['Edge cases']],
    ]);
  });

  it('gives a frontmatter-only note zero chunks', () => {
    const { note, chunks } = fixture('Edge/Frontmatter Only.md');
    expect(chunks).toEqual([]);
    expect(note.chunk_count).toBe(0);
    expect(note.line_count).toBe(9);
    expect(note.title).toBe('Only Frontmatter');
    expect(note.aliases).toEqual(['Lone Fields']);
    expect(note.tags).toEqual(['edge', 'meta']);
  });

  it('reads frontmatter closed at end of file without a newline', () => {
    const { note, chunks } = fixture('Edge/Frontmatter EOF.md');
    expect(note.frontmatter).toEqual({ title: 'Closed At End', tags: 'edge, eof' });
    expect(note.frontmatter_lines).toEqual({ line_start: 1, line_end: 4 });
    expect(note.tags).toEqual(['edge', 'eof']);
    expect(note.line_count).toBe(4);
    expect(chunks).toEqual([]);
  });

  it('reports bad YAML with its file line and indexes the block as body text', () => {
    const { note, chunks, findings } = fixture('Edge/Bad Frontmatter.md');
    expect(findings).toEqual([
      {
        code: 'bad_frontmatter',
        severity: 'warning',
        message:
          'Edge/Bad Frontmatter.md:3: frontmatter is not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ]); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields',
        path: 'Edge/Bad Frontmatter.md',
        line: 3,
        column: 12,
      },
    ]);
    expect(note.frontmatter).toBeNull();
    expect(note.frontmatter_lines).toBeNull();
    expect(note.title).toBe('Bad Frontmatter');
    // `---` is a thematic break; `title: Broken` / `list: [a, b` over the closing `---` is a setext heading.
    expect(chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 1, []],
      [2, 5, ['title: Broken\nlist: [a, b']],
    ]);
  });

  it('treats a top `---` without a closing fence as a thematic break inside the first chunk', () => {
    const { note, chunks } = fixture('Edge/Thematic Break.md');
    expect(note.frontmatter_lines).toBeNull();
    expect(chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 3, []],
      [5, 7, ['After The Rule']],
    ]);
  });

  it('counts lines of CRLF, lone-CR and mixed files as the file has them', () => {
    const crlf = fixture('Edge/Line Endings CRLF.md');
    expect([crlf.note.line_ending, crlf.note.line_count]).toEqual(['crlf', 9]);
    expect(crlf.chunks.map((c) => [c.line_start, c.line_end])).toEqual([[1, 1], [3, 5], [7, 9]]);
    expect(crlf.links[0]).toMatchObject({ line: 5, column: 5, raw: '[[Line Endings CR]]' });
    const cr = fixture('Edge/Line Endings CR.md');
    expect([cr.note.line_ending, cr.note.line_count]).toEqual(['cr', 5]);
    expect(cr.chunks.map((c) => [c.line_start, c.line_end, c.text])).toEqual([
      [1, 1, 'Line Endings CR uses lone CR breaks throughout.'],
      [3, 5, '# Only\n\nSee [[Line Endings Mixed]] here.'],
    ]);
    const mixed = fixture('Edge/Line Endings Mixed.md');
    expect([mixed.note.line_ending, mixed.note.line_count]).toEqual(['mixed', 7]);
    expect(mixed.chunks.map((c) => [c.line_start, c.line_end])).toEqual([[1, 1], [3, 7]]);
    expect(mixed.links[0]).toMatchObject({ line: 5, column: 5 });
  });

  it('strips a BOM from text but keeps lines and columns of the original file', () => {
    const { note, chunks, links } = fixture('Edge/BOM.md');
    expect(note.bom).toBe(true);
    expect(chunks[0]).toMatchObject({ line_start: 1, line_end: 3, heading_path: ['BOM Heading Links'] });
    expect(chunks[0]?.text.startsWith('# BOM Heading')).toBe(true);
    expect(links[0]).toMatchObject({ line: 1, column: 15, raw: '[[Links]]', position: 'heading' });
  });

  it('ends the last chunk on the last line with or without a final newline', () => {
    const a = fixture('Edge/Final Newline.md');
    const b = fixture('Edge/No Final Newline.md');
    expect([a.note.line_count, b.note.line_count]).toEqual([5, 5]);
    expect(a.chunks.at(-1)).toMatchObject({ line_start: 3, line_end: 5, text: '# Tail\n\nLast line.' });
    expect(b.chunks.at(-1)).toMatchObject({ line_start: 3, line_end: 5, text: '# Tail\n\nLast line.' });
  });

  it('lists an empty note with zero lines and zero chunks', () => {
    const { note, chunks, links, findings } = fixture('Edge/Empty.md');
    expect([note.line_count, note.chunk_count, note.line_ending, chunks.length, links.length, findings.length]).toEqual([0, 0, 'none', 0, 0, 0]);
  });

  it('finds block markers with their lines', () => {
    expect(fixture('Edge/Blocks.md').note.blocks).toEqual([
      { id: 'quote-1', line: 3, chunk_index: 0 },
      { id: 'list-2', line: 6, chunk_index: 0 },
      { id: 'table-3', line: 12, chunk_index: 0 },
    ]);
  });

  it('collects inline tags outside code and links', () => {
    expect(fixture('Edge/Fences.md').note.tags).toEqual(['fenced-real']);
    const tags = parseNote('t.md', enc('#lore and #2024 and a#b and `#code` and [#x](y.md) and #a/b-c_d.\n## Tower #3\n'), {});
    expect(tags.note.tags).toEqual(['lore', 'a/b-c_d']);
    expect(tags.links.filter((l) => l.syntax === 'tag').map((l) => [l.line, l.column, l.raw])).toEqual([
      [1, 1, '#lore'],
      [1, 56, '#a/b-c_d'],
    ]);
  });

  it('takes no heading, link or tag from backtick, tilde, indented or inline code', () => {
    const { note, chunks, links } = fixture('Edge/Fences.md');
    expect(note.headings).toEqual([{ text: 'Real Heading', depth: 1, line: 18, chunk_index: 1 }]);
    expect(chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 16, []],
      [18, 20, ['Real Heading']],
    ]);
    expect(links.map((l) => [l.line, l.column, l.raw])).toEqual([
      [16, 67, '[[Links]]'],
      [20, 29, '[[Headings]]'],
      [20, 51, '#fenced-real'],
    ]);
  });

  it('strips closing ## but keeps C# and Tower #3; reads setext, repeated and linked headings', () => {
    const { note, chunks, links } = fixture('Edge/Headings.md');
    expect(note.headings.map((h) => [h.line, h.depth, h.text, h.chunk_index])).toEqual([
      [3, 1, 'Closing Sequence', 1],
      [5, 2, 'C#', 2],
      [7, 2, 'Tower #3', 3],
      [9, 1, 'Setext Level One', 4],
      [12, 2, 'Setext Level Two', 5],
      [15, 3, 'Repeated', 6],
      [19, 3, 'Repeated', 7],
      [23, 2, 'Heading with a link inside', 8],
    ]);
    expect(chunks.map((c) => [c.chunk_index, c.line_start, c.line_end, c.heading_path.join(' > ')])).toEqual([
      [0, 1, 1, ''],
      [1, 3, 3, 'Closing Sequence'],
      [2, 5, 5, 'Closing Sequence > C#'],
      [3, 7, 7, 'Closing Sequence > Tower #3'],
      [4, 9, 10, 'Setext Level One'],
      [5, 12, 13, 'Setext Level One > Setext Level Two'],
      [6, 15, 17, 'Setext Level One > Setext Level Two > Repeated'],
      [7, 19, 21, 'Setext Level One > Setext Level Two > Repeated'],
      [8, 23, 25, 'Setext Level One > Heading with a link inside'],
    ]);
    expect(chunks[1]?.text).toBe('# Closing Sequence ##');
    expect(chunks[4]?.text).toBe('Setext Level One\n================');
    expect(chunks[8]?.text).toBe('## Heading with [[Links|a link]] inside\n\n####### Seven hashes is a paragraph, not a heading.');
    expect(links.map((l) => [l.line, l.column, l.syntax, l.position, l.raw, l.chunk_index])).toEqual([[23, 17, 'wikilink', 'heading', '[[Links|a link]]', 8]]);
  });

  it('reports a binary file without crashing', () => {
    const r = parseNote('Edge/bin.md', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x0a]), {});
    expect(r.findings).toEqual([
      {
        code: 'binary_file',
        severity: 'warning',
        message: 'Edge/bin.md contains a NUL byte at byte 4: expected a text file; it is listed with no chunks and no links',
        path: 'Edge/bin.md',
      },
    ]);
    expect([r.chunks.length, r.links.length, r.note.title, r.note.size, r.note.line_count]).toEqual([0, 0, 'bin', 6, 0]);
  });

  it('reports invalid UTF-8 with the line of the first bad byte', () => {
    const bytes = new Uint8Array([...enc('ok\nfine\n'), 0xc3, 0x28, ...enc('\n')]);
    const r = parseNote('Edge/latin1.md', bytes, {});
    expect(r.findings).toEqual([
      {
        code: 'not_utf8',
        severity: 'warning',
        message: 'Edge/latin1.md:3: byte 8 is not valid UTF-8: expected UTF-8 text; the note is listed with no chunks and no links',
        path: 'Edge/latin1.md',
        line: 3,
      },
    ]);
    expect(r.chunks).toEqual([]);
    expect(parseNote('x.md', new Uint8Array([0xed, 0xa0, 0x80]), {}).findings[0]?.code).toBe('not_utf8');
  });

  it('keeps a 5 MB single-line note as one chunk', () => {
    const line = 'word '.repeat(1024 * 1024).trimEnd();
    const r = parseNote('big.md', enc(line), {});
    expect(r.note.size).toBe(5 * 1024 * 1024 - 1);
    expect(r.note.line_count).toBe(1);
    expect(r.chunks.map((c) => [c.line_start, c.line_end, c.word_count])).toEqual([[1, 1, 1024 * 1024]]);
    expect(r.chunks[0]?.text.length).toBe(line.length);
  });

  it('extracts 10,000 links on one line with exact columns', () => {
    const parts: string[] = [];
    for (let i = 0; i < 10_000; i++) parts.push(`[[N${i}]]`);
    const text = parts.join(' ');
    const r = parseNote('many.md', enc(text), {});
    expect(r.links.length).toBe(10_000);
    let column = 1;
    for (let i = 0; i < 10_000; i++) {
      const l = r.links[i]!;
      if (l.column !== column || l.target !== `N${i}` || l.line !== 1) throw new Error(`link ${i}: ${JSON.stringify(l)}`);
      column += (parts[i] as string).length + 1;
    }
    expect(r.links[9_999]).toMatchObject({ raw: '[[N9999]]', column: text.length - 8 });
  });

  it('reads seven hashes as a paragraph under the sixth level', () => {
    const { note, chunks } = fixture('Edge/Seven Levels.md');
    expect(note.headings.map((h) => [h.depth, h.text, h.line])).toEqual([
      [1, 'L1', 3], [2, 'L2', 4], [3, 'L3', 5], [4, 'L4', 6], [5, 'L5', 7], [6, 'L6', 8],
    ]);
    expect(chunks.at(-1)).toMatchObject({
      line_start: 8,
      line_end: 10,
      heading_path: ['L1', 'L2', 'L3', 'L4', 'L5', 'L6'],
      text: '###### L6\n####### L7 is a paragraph\nBody of L6.',
    });
  });

  it('throws bad_options for a word budget below 1', () => {
    expect(() => parseNote('x.md', enc('a'), { chunkWordBudget: 0 })).toThrow('chunkWordBudget must be an integer ≥ 1 (got 0)');
  });

  it('uses a precomputed sha256 and the config word budget', () => {
    const r = parseNote('x.md', enc('# A\n\none two\n\nthree four\n'), { sha256: 'f'.repeat(64), config: { chunk_word_budget: 3 } });
    expect(r.note.sha256).toBe('f'.repeat(64));
    expect(r.chunks.map((c) => [c.line_start, c.line_end])).toEqual([[1, 3], [5, 5]]);
  });

  it('decodes the fixture bytes exactly as stored (no newline conversion)', () => {
    const raw = readFileSync(join(FIXTURE_VAULT, 'Edge/Line Endings CRLF.md'));
    expect(raw.includes(Buffer.from('\r\n'))).toBe(true);
    expect(readFileSync(join(FIXTURE_VAULT, 'Edge/BOM.md')).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  });
});

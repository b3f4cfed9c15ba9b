import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../src/types.js';
import { chunkNote, parseMarkdown, parseNote, sliceLines, splitLines } from '../src/notes/index.js';
import { listVault, parseVault } from './helpers/fixture-notes.js';
import { AETHERIA, FIXTURE_VAULT, hasShared, sharedNotice } from './helpers/shared.js';

/** The chunk invariant of src/types.ts, checked against the file's own bytes. */
function checkInvariant(root: string, disk: string, chunks: Chunk[], lineCount: number): void {
  const lines = splitLines(new TextDecoder().decode(readFileSync(join(root, disk))));
  expect(lines.length, disk).toBe(lineCount);
  let previousEnd = 0;
  chunks.forEach((c, i) => {
    expect(c.chunk_index, disk).toBe(i);
    expect(c.line_start, `${disk}#chunk${i}`).toBeGreaterThan(previousEnd);
    expect(c.line_end, `${disk}#chunk${i}`).toBeGreaterThanOrEqual(c.line_start);
    expect(c.line_end, `${disk}#chunk${i}`).toBeLessThanOrEqual(lineCount);
    if (c.text !== sliceLines(lines, c.line_start, c.line_end)) throw new Error(`${disk}#chunk${i}: text differs from lines ${c.line_start}-${c.line_end}`);
    previousEnd = c.line_end;
  });
}

const md = (text: string, budget?: number) =>
  chunkNote(parseMarkdown('n.md', text), budget === undefined ? {} : { chunkWordBudget: budget }).map((c) => [
    c.line_start,
    c.line_end,
    c.heading_path,
  ]);

describe('chunkNote', () => {
  it('starts a chunk at every ATX and setext heading and trims trailing blank lines', () => {
    expect(md('intro\n\n# A\ntext\n\n\nB\n-\n\n## C ##\n\n')).toEqual([
      [1, 1, []],
      [3, 4, ['A']],
      [7, 8, ['A', 'B']],
      [10, 10, ['A', 'C']],
    ]);
  });

  it('starts the pre-heading chunk at its first non-blank line and skips blank-only ranges', () => {
    expect(md('\n\n  \ntext\n# H\n')).toEqual([[4, 4, []], [5, 5, ['H']]]);
    expect(md('\n\n# H\n')).toEqual([[3, 3, ['H']]]);
    expect(md('')).toEqual([]);
    expect(md('\n\n')).toEqual([]);
  });

  it('leaves frontmatter out of every chunk', () => {
    expect(md('---\na: 1\n---\n\nbody\n')).toEqual([[5, 5, []]]);
    expect(md('---\na: 1\n---\n')).toEqual([]);
  });

  it('builds heading paths by depth, keeps same-text headings apart and strips closing hashes', () => {
    expect(md('# A\n### B\n## C #\n## C\n# D ##\n')).toEqual([
      [1, 1, ['A']],
      [2, 2, ['A', 'B']],
      [3, 3, ['A', 'C']],
      [4, 4, ['A', 'C']],
      [5, 5, ['D']],
    ]);
  });

  it('keeps C# and Tower #3 in heading text and shows a link by its display text', () => {
    expect(md('## C#\n## Tower #3\n## See [[Target|the target]] and [[Other#Part]]\n').map((c) => c[2])).toEqual([
      ['C#'],
      ['Tower #3'],
      ['See the target and Other > Part'],
    ]);
  });

  it('ignores # lines inside fenced and indented code', () => {
    expect(md('# A\n```\n# no\n```\n~~~\n# no\n~~~\n\n    # no\n# B\n')).toEqual([
      [1, 9, ['A']],
      [10, 10, ['B']],
    ]);
  });

  it('splits a long section at block boundaries under the word budget, keeping the first block with its heading', () => {
    const text = '# H\n\none two three\n\nfour five six\n\n- a b\n- c d\n\nseven eight\n';
    expect(md(text, 5)).toEqual([
      [1, 3, ['H']],
      [5, 5, ['H']],
      [7, 7, ['H']],
      [8, 10, ['H']],
    ]);
    expect(md(text, 8)).toEqual([
      [1, 5, ['H']],
      [7, 10, ['H']],
    ]);
    expect(md(text, 100)).toEqual([[1, 10, ['H']]]);
  });

  it('never splits inside a fenced code block, table or list item; an oversize block stays whole', () => {
    const text = '# H\n\nintro\n\n```\na b c d e f g h\n\ni j k\n```\n\n| a | b |\n| - | - |\n| c d e | f g h |\n\n- one two\n  three four\n\n  five six\n';
    expect(md(text, 3)).toEqual([
      [1, 3, ['H']],
      [5, 9, ['H']],
      [11, 13, ['H']],
      [15, 18, ['H']],
    ]);
  });

  it('splits the fixture long section into exact pieces', () => {
    const r = parseNote('Edge/Long Section.md', new Uint8Array(readFileSync(join(FIXTURE_VAULT, 'Edge/Long Section.md'))));
    expect(r.chunks.map((c) => [c.line_start, c.line_end, c.word_count, c.heading_path.join('/')])).toEqual([
      [1, 1, 12, ''],
      [3, 12, 313, 'The Long Section'],
      [14, 16, 249, 'The Long Section'],
      [18, 21, 198, 'The Long Section'],
      [23, 25, 240, 'The Long Section'],
      [27, 29, 5, 'Short Tail'],
    ]);
  });

  it('gives each chunk the sha256 of its text and its word count', () => {
    const [c] = chunkNote(parseMarkdown('n.md', 'alpha  beta\tgamma\n'));
    expect(c).toEqual({
      path: 'n.md',
      chunk_index: 0,
      heading_path: [],
      line_start: 1,
      line_end: 1,
      text: 'alpha  beta\tgamma',
      hash: createHash('sha256').update('alpha  beta\tgamma', 'utf8').digest('hex'),
      word_count: 3,
    });
  });

  it('holds the chunk invariant on every note of the fixture vault', () => {
    const paths = listVault(FIXTURE_VAULT).filter((p) => p.endsWith('.md'));
    const v = parseVault(FIXTURE_VAULT, paths);
    expect(v.notes.length).toBeGreaterThanOrEqual(24);
    for (const note of v.notes) {
      checkInvariant(FIXTURE_VAULT, v.disk.get(note.path)!, v.parsed.get(note.path)!.chunks, note.line_count);
    }
  });
});

describe.skipIf(!hasShared)(`chunkNote on the real vault (${hasShared ? 'AetheriaLore' : sharedNotice})`, () => {
  it('holds the chunk invariant on every note of AetheriaLore', () => {
    const paths = listVault(AETHERIA).filter((p) => p.endsWith('.md'));
    const v = parseVault(AETHERIA, paths);
    expect(v.notes.length).toBe(148);
    expect(v.chunks.length).toBe(546);
    for (const note of v.notes) {
      checkInvariant(AETHERIA, v.disk.get(note.path)!, v.parsed.get(note.path)!.chunks, note.line_count);
    }
  });
});

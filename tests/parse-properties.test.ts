/**
 * Property tests of the notes stage over generated documents (fast-check): every line of a file belongs
 * to exactly one of valid frontmatter, a chunk, or a blank edge, and each chunk's text is its lines; and
 * the degraded line scan gives the same chunks and wikilinks as micromark on the documents both handle
 * (docs/PARSING.md, "Degraded mode", lists where they differ and why).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildChunks } from '../src/chunks/chunk.js';
import { collectNoteRefs } from '../src/links/extract.js';
import { parseMarkdown } from '../src/notes/markdown.js';
import { parseNote } from '../src/notes/parse.js';
import { degradedRoot } from '../src/notes/pathological.js';
import { sliceLines, splitLines } from '../src/notes/lines.js';

/** Lines both parsers read alike: headings, paragraphs, flat list items, fences, quotes, tables, comments, math. */
const SHARED_LINES = [
  '# Heading [[A]]', '## Sub', '### Third #tag', 'Para with [[B|b]] and ![[Map.png|300]].', 'More text [[C#H]].', '',
  '- item [[D]]', '* star item', '1. numbered [[E]]', '```', '~~~', 'code [[F]] in a fence?', '> quote [[G]]',
  'x %%comment [[I]]%% y', '%%', '$$', 'math $[[J]]$ here', 'A `code [[K]]` span', '\\[[escaped]]',
  '<!-- [[M]] -->', '<!--', '# Heading in a comment? [[N]]', '-->', '  ### Item heading [[O]]',
];
/** Lines the two parsers read differently on purpose (docs/PARSING.md, "Degraded mode"). */
const OTHER_LINES = ['| a | b |', '|---|---|', '| [[H\\|h]] | x |', 'Setext title', '===', '---', '    indented [[O]]', '  nested [[L]]', '*emphasis [[N]]*', '> # quoted heading', '- # item heading'];
const FRONTMATTER = [[], ['---', 'title: T', 'related: "[[P]]"', '---'], ['---', '', 'not yaml [[Q]]', '', '---'], ['---', 'a: [b', '---']];

const document = (lines: string[]) =>
  fc.record({
    fm: fc.constantFrom(...FRONTMATTER),
    body: fc.array(fc.constantFrom(...lines), { maxLength: 40 }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    final: fc.boolean(),
  }).map(({ fm, body, eol, final }) => [...fm, ...body].join(eol) + (final ? eol : ''));

const enc = new TextEncoder();

describe('parseNote: line ownership', () => {
  it('puts every line in exactly one of valid frontmatter, one chunk, or a blank edge; chunk text is its lines', () => {
    fc.assert(
      fc.property(document([...SHARED_LINES, ...OTHER_LINES]), (text) => {
        const { note, chunks, findings } = parseNote('Gen.md', enc.encode(text));
        const syntax = parseMarkdown('Gen.md', text);
        const owners = new Array<number>(note.line_count + 1).fill(0);
        for (const c of chunks) {
          expect(c.text).toBe(sliceLines(syntax.lines, c.line_start, c.line_end));
          for (let l = c.line_start; l <= c.line_end; l++) owners[l]!++;
        }
        const fm = note.frontmatter_lines;
        if (fm) expect(findings.some((f) => f.code === 'bad_frontmatter')).toBe(false);
        for (let l = 1; l <= note.line_count; l++) {
          const inFm = fm !== null && l >= fm.line_start && l <= fm.line_end;
          const blank = syntax.lines[l - 1]!.trim() === '';
          if (inFm) expect(owners[l], `line ${l} in frontmatter`).toBe(0);
          else if (blank) expect(owners[l]!, `blank line ${l}`).toBeLessThanOrEqual(1);
          else expect(owners[l], `line ${l}: ${JSON.stringify(syntax.lines[l - 1])}`).toBe(1);
        }
      }),
      { numRuns: 200, seed: 13 },
    );
  });
});

describe('degraded mode agrees with micromark', () => {
  it('gives the same chunks and wikilinks on generated documents of the shared constructs', () => {
    fc.assert(
      fc.property(document(SHARED_LINES), (text) => {
        const normal = parseMarkdown('Gen.md', text);
        const degraded = { ...normal, root: degradedRoot(normal.parsed, splitLines(normal.parsed), normal.lineStarts) };
        const a = buildChunks(normal).chunks;
        const b = buildChunks(degraded).chunks;
        expect(b.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual(a.map((c) => [c.line_start, c.line_end, c.heading_path]));
        const wiki = (s: typeof normal, chunks: typeof a) =>
          collectNoteRefs(s, chunks).links.filter((l) => l.raw.includes('[[')).map((l) => [l.line, l.column, l.target, l.fragment, l.chunk_index]);
        expect(wiki(degraded, b)).toEqual(wiki(normal, a));
      }),
      { numRuns: 400, seed: 17 },
    );
  });
});

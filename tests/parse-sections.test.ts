/**
 * Sectioned parsing of big notes (src/notes/sections.ts; docs/PARSING.md, "Big notes"): cutting a note
 * before top-level headings and parsing the pieces one by one gives exactly the mdast of one run — on
 * generated documents of every construct that could cross a cut, on every fixture note, and on every
 * AetheriaLore note when ../shared is present — with the piece size forced to one character so that every
 * permitted cut is taken.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../src/notes/markdown.js';
import { sectionCutLines, sectionPieces, SECTION_PIECE_CHARS, SECTIONED_PARSE_MIN_CHARS } from '../src/notes/sections.js';
import { lineStartOffsets, splitLines } from '../src/notes/lines.js';
import { bigLoreNote } from '../scripts/big-note.mjs';
import { AETHERIA, FIXTURES, hasShared, sharedNotice } from './helpers/shared.js';

const FORCED = { minChars: 0, pieceChars: 1 };
const tree = (text: string, options: { frontmatter?: boolean } = {}, sections?: typeof FORCED) =>
  JSON.parse(JSON.stringify(parseMarkdown('Gen.md', text, { ...options, ...(sections ? { sections } : {}) }).root));

/** Lines chosen to sit on both sides of a cut: containers, leaf blocks that run on, HTML, fences, definitions. */
const LINES = [
  '# Heading [[A]]', '## Sub', '###### Six', '#no space', ' # indented heading', '    # code heading', '', '', '\t',
  'Para with [[B|b]] and ![[Map.png|300]].', 'lazy line', '- item [[D]]', '  continued item', '* star', '1. one',
  '> quote [[G]]', '> # quoted', '```', '~~~', '````', '```js', 'code [[F]]', '| a | b |', '|---|---|', '| c | d |',
  '<div>', '</div>', '<pre>', '</pre>', '<script>', '</script>', '<!--', '-->', '<!-- one line -->', '<?x', '?>',
  '<!DOCTYPE x', '>', '<![CDATA[', ']]>', '%%', 'x %%c%% y', '$$', 'Setext', '===', '---', '[ref]: /url', '[^1]: note',
  'see [ref] and [^1]', '- [[Mara Voss]]: captain', '**Primary actors:** [[X]]',
];
const FRONTMATTER = [[], ['---', 'title: T', '---'], ['---', 'a: [b', '---']];

const document = fc.record({
  fm: fc.constantFrom(...FRONTMATTER),
  body: fc.array(fc.constantFrom(...LINES), { maxLength: 50 }),
  eol: fc.constantFrom('\n', '\r\n', '\r'),
  final: fc.boolean(),
}).map(({ fm, body, eol, final }) => [...fm, ...body].join(eol) + (final ? eol : ''));

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = join(dir, name);
    if (name.startsWith('.')) continue;
    if (statSync(abs).isDirectory()) out.push(...markdownFiles(abs));
    else if (name.endsWith('.md')) out.push(abs);
  }
  return out;
}

describe('sectioned parsing', () => {
  it('cuts only before a column-1 ATX heading after a blank line, outside fences and multi-line HTML', () => {
    const lines = [
      '# Title', '', '## A', 'text', '## Not after a blank', '', '```', '', '# in a fence', '```', '', '# B',
      '', '<pre>', '', '# in pre', '</pre>', '', '#no space', '', '  # indented', '', '#', '', '<!-- x -->', '', '## C',
    ];
    expect(sectionCutLines(lines, 1)).toEqual([3, 12, 23, 27]);
    expect(sectionCutLines(['---', 'a: 1', '---', '# T', '', '# U'], 4)).toEqual([6]);
    expect(sectionCutLines(['# T', '', 'See [a].', '', '# U', '', '[a]: /url'], 1)).toEqual([]);
    expect(sectionCutLines(['# T', '', '- [[Mara Voss]]: captain', '', '# U'], 1)).toEqual([5]);
  });

  it('gives exactly the one-run mdast on generated documents, with every permitted cut taken', () => {
    fc.assert(
      fc.property(document, fc.boolean(), (text, frontmatter) => {
        expect(tree(text, { frontmatter }, FORCED)).toEqual(tree(text, { frontmatter }));
      }),
      { numRuns: 300, seed: 29 },
    );
  });

  it('gives exactly the one-run mdast on every fixture note', () => {
    const files = [...markdownFiles(join(FIXTURES, 'FixtureLore')), ...markdownFiles(join(FIXTURES, 'MarkdownLore'))];
    expect(files.length).toBeGreaterThan(60);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(tree(text, {}, FORCED), f).toEqual(tree(text));
    }
  });

  it.skipIf(!hasShared)(`gives exactly the one-run mdast on every AetheriaLore note (${hasShared ? 'AetheriaLore' : sharedNotice})`, () => {
    const files = markdownFiles(AETHERIA);
    expect(files.length).toBe(148);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(tree(text, {}, FORCED), f).toEqual(tree(text));
    }
  });

  it('cuts a 200 KB generated lore note into pieces of whole sections of at least 64 KiB by default', () => {
    const text = bigLoreNote(200_000);
    const lines = splitLines(text);
    const cuts = sectionCutLines(lines, 1);
    expect(cuts.length).toBe(465);
    expect(cuts[0]).toBe(5);
    expect(text.length).toBeGreaterThan(SECTIONED_PARSE_MIN_CHARS);
    const pieces = sectionPieces(cuts, lineStartOffsets(text), lines.length, SECTION_PIECE_CHARS);
    expect(pieces).toEqual([[1, 1698], [1699, 3370], [3371, 5042], [5043, 5111]]);
    expect(lines.length).toBe(5111);
    expect([1699, 3371, 5043].map((l) => lines[l - 1])).toEqual(['## Year 155 of the Reckoning', '## Year 307 of the Reckoning', '## Year 459 of the Reckoning']);
    const root = parseMarkdown('Big.md', text).root;
    expect(root.children.filter((n) => n.type === 'heading').map((n) => n.position!.start.line).slice(0, 3)).toEqual([1, 5, 16]);
    expect(root.children.at(-1)!.position!.end.line).toBe(lines.length);
  });
});

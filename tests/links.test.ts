import { describe, expect, it } from 'vitest';
import type { NoteRecord } from '../src/types.js';
import { buildLinkLookup, chunkNote, extractLinks, parseMarkdown, parseNote, resolveLink, resolveLinks, targetClasses } from '../src/notes/index.js';
import { expectGolden, listVault, parseVault, resolveVault } from './helpers/fixture-notes.js';
import { AETHERIA, FIXTURE_VAULT, hasShared, sharedNotice } from './helpers/shared.js';

const OWN = listVault(FIXTURE_VAULT).filter((p) => !p.includes('/') || p.startsWith('Edge/'));
const vault = parseVault(FIXTURE_VAULT, OWN);
const resolved = resolveVault(vault);
const linksOf = (path: string) => resolved.links.filter((l) => l.source_path === path);

const extract = (text: string) => {
  const syntax = parseMarkdown('n.md', text);
  return extractLinks(syntax, chunkNote(syntax));
};

describe('extractLinks', () => {
  it('records every syntax class with the line and column of the link itself', () => {
    expect(linksOf('Edge/Links.md').map((l) => [l.line, l.column, l.syntax, l.position, l.raw])).toEqual([
      [5, 7, 'wikilink', 'prose', '[[Headings]]'],
      [5, 29, 'wikilink', 'prose', '[[Fences|code fences]]'],
      [5, 61, 'heading_link', 'prose', '[[Headings#Tower #3]]'],
      [5, 91, 'heading_link', 'prose', '[[Headings#Setext Level One#Setext Level Two]]'],
      [5, 145, 'block_link', 'prose', '[[Blocks#^quote-1]]'],
      [5, 171, 'heading_link', 'prose', '[[#Wikilinks]]'],
      [6, 17, 'wikilink', 'prose', '[[Cycle A]]'],
      [6, 28, 'wikilink', 'prose', '[[Cycle B]]'],
      [8, 21, 'wikilink', 'list_item', '[[Tables]]'],
      [9, 23, 'wikilink', 'field', '[[Home]]'],
      [9, 33, 'wikilink', 'field', '[[Lantern Relay]]'],
      [10, 10, 'wikilink', 'list_item', '[[Blocks]]'],
      [10, 30, 'wikilink', 'field', '[[Seven Levels]]'],
      [12, 21, 'wikilink', 'field', '[[Cycle A]]'],
      [16, 1, 'embed', 'prose', '![[Blocks]]'],
      [16, 17, 'embed', 'prose', '![[Map.png|300]]'],
      [16, 38, 'embed', 'prose', '![[Blocks#^list-2]]'],
      [20, 1, 'markdown_link', 'prose', '[CRLF](Line%20Endings%20CRLF.md)'],
      [20, 35, 'markdown_link', 'prose', '[up](../Home.md)'],
      [20, 53, 'markdown_link', 'prose', '[section](Headings.md#C#)'],
      [20, 80, 'external', 'prose', '[web](https://example.org/a#b)'],
      [20, 112, 'external', 'prose', '<https://example.com/auto>'],
      [20, 140, 'external', 'prose', 'www.example.net'],
      [20, 160, 'tag', 'prose', '#link-tag'],
      [24, 1, 'wikilink', 'prose', '[[Nowhere Note]]'],
      [24, 19, 'heading_link', 'prose', '[[Headings#No Such Heading]]'],
      [24, 49, 'block_link', 'prose', '[[Blocks#^missing]]'],
      [24, 70, 'embed', 'prose', '![[Missing.png]]'],
      [28, 5, 'wikilink', 'prose', '[[Café Noir]]'],
      [28, 27, 'wikilink', 'prose', '[[Cafe\u0301 Noir]]'],
      [28, 51, 'wikilink', 'prose', '[[café noir]]'],
    ]);
  });

  it('splits target, fragment and display text', () => {
    const byRaw = new Map(linksOf('Edge/Links.md').map((l) => [l.raw, [l.target, l.fragment, l.display, l.chunk_index]]));
    expect(byRaw.get('[[Fences|code fences]]')).toEqual(['Fences', null, 'code fences', 1]);
    expect(byRaw.get('[[Headings#Setext Level One#Setext Level Two]]')).toEqual(['Headings', 'Setext Level One#Setext Level Two', null, 1]);
    expect(byRaw.get('[[#Wikilinks]]')).toEqual(['', 'Wikilinks', null, 1]);
    expect(byRaw.get('![[Map.png|300]]')).toEqual(['Map.png', null, null, 2]);
    expect(linksOf('Edge/Links.md').find((l) => l.raw === '![[Map.png|300]]')?.size).toEqual({ width: 300, height: null });
    expect(byRaw.get('[CRLF](Line%20Endings%20CRLF.md)')).toEqual(['Line Endings CRLF.md', null, 'CRLF', 3]);
    expect(byRaw.get('[section](Headings.md#C#)')).toEqual(['Headings.md', 'C#', 'section', 3]);
    expect(byRaw.get('[web](https://example.org/a#b)')).toEqual(['https://example.org/a#b', null, 'web', 3]);
  });

  it('uses the escaped bar in table cells as the alias separator and keeps two links in a cell apart', () => {
    expect(linksOf('Edge/Tables.md').map((l) => [l.line, l.column, l.syntax, l.position, l.target, l.fragment, l.display])).toEqual([
      [5, 11, 'wikilink', 'table', 'Fences', null, 'the fences'],
      [6, 13, 'heading_link', 'table', 'Headings', 'C#', 'sharp'],
      [7, 11, 'embed', 'table', 'Map.png', null, null],
      [8, 9, 'wikilink', 'table', 'Cycle A', null, null],
      [8, 21, 'wikilink', 'table', 'Cycle B', null, null],
    ]);
  });

  it('counts nothing inside backtick, tilde or indented code, or inline code', () => {
    expect(linksOf('Edge/Fences.md').map((l) => [l.line, l.raw])).toEqual([
      [16, '[[Links]]'],
      [20, '[[Headings]]'],
      [20, '#fenced-real'],
    ]);
  });

  it('classes a link in a heading as heading, and a link in a bold label as not a field', () => {
    expect(extract('## See [[A]]\n- **Post-[[B]] Notes**: [[C]]\n> **Label:** [[D]]\n').map((l) => [l.raw, l.position])).toEqual([
      ['[[A]]', 'heading'],
      ['[[B]]', 'list_item'],
      ['[[C]]', 'field'],
      ['[[D]]', 'field'],
    ]);
  });

  it('resolves reference-style links through their definitions and skips footnotes', () => {
    expect(extract('See [the map][m] and [^1].\n\n[m]: Maps/World%20Map.md#North\n[^1]: A footnote [[Note]].\n').map((l) => [l.syntax, l.target, l.fragment, l.raw])).toEqual([
      ['markdown_link', 'Maps/World Map.md', 'North', '[the map][m]'],
      ['wikilink', 'Note', null, '[[Note]]'],
    ]);
  });

  it('finds bare URLs without their trailing punctuation', () => {
    expect(extract('Visit https://example.com/a_(b). Or www.example.org, then (https://x.y/z).\n').map((l) => [l.column, l.raw, l.target])).toEqual([
      [7, 'https://example.com/a_(b)', 'https://example.com/a_(b)'],
      [37, 'www.example.org', 'http://www.example.org'],
      [60, 'https://x.y/z', 'https://x.y/z'],
    ]);
  });

  it('does not start a link on an empty or unclosed bracket pair', () => {
    expect(extract('[[]] [[|x]] [[open\nclose]] [[a [[b]] c]]\n').map((l) => l.raw)).toEqual(['[[b]]']);
  });
});

describe('resolveLink', () => {
  const note = (path: string, headings: [string, number, number][] = [], blocks: [string, number, number][] = []): NoteRecord => ({
    path,
    title: path,
    aliases: [],
    tags: [],
    frontmatter: null,
    frontmatter_lines: null,
    size: 0,
    sha256: '',
    line_count: 0,
    line_ending: 'lf',
    bom: false,
    classes: [],
    headings: headings.map(([text, line, chunk_index]) => ({ text, depth: 2, line, chunk_index })),
    blocks: blocks.map(([id, line, chunk_index]) => ({ id, line, chunk_index })),
    chunk_count: 0,
  });
  const lookup = buildLinkLookup(
    [
      note('Note.md'),
      note('a/b/Note.md', [['Tower #3', 7, 2], ['Setext', 9, 3]], [['quote-1', 4, 1]]),
      note('zzzz/Note.md'),
      note('zzzz/deep/Other.md'),
      note('b/Note.md'),
      note('Lore/Café Noir.md'),
      note('Lore/Index.md'),
      note('long/folder/Dup.md'),
      note('zzzz/Dup.md'),
      note('x/Dup.md'),
    ],
    { files: ['img/Map.png', 'Lore/Map.png'] },
  );

  it.each([
    ['Lore/Index.md', 'Note', { status: 'resolved', path: 'Note.md' }],
    ['zzzz/Other.md', 'Note', { status: 'resolved', path: 'Note.md' }],
    ['Lore/Index.md', 'Dup', { status: 'ambiguous', path: 'x/Dup.md', candidates: ['x/Dup.md', 'zzzz/Dup.md', 'long/folder/Dup.md'] }],
    ['zzzz/deep/Other.md', 'Dup', { status: 'ambiguous', path: 'x/Dup.md', candidates: ['x/Dup.md', 'zzzz/Dup.md', 'long/folder/Dup.md'] }],
    ['zzzz/deep/Other.md', 'b/Note', { status: 'resolved', path: 'b/Note.md' }],
    ['Lore/Index.md', 'a/b/Note.md', { status: 'resolved', path: 'a/b/Note.md' }],
    ['Lore/Index.md', 'NOTE.MD', { status: 'resolved', path: 'Note.md' }],
    ['Lore/Index.md', '/Note', { status: 'resolved', path: 'Note.md' }],
    ['Lore/Index.md', 'cafe\u0301 noir', { status: 'resolved', path: 'Lore/Café Noir.md' }],
    ['Lore/Index.md', 'deep/Other', { status: 'resolved', path: 'zzzz/deep/Other.md' }],
    ['Lore/Index.md', 'eep/Other', { status: 'unresolved' }],
    ['Lore/Index.md', 'Missing', { status: 'unresolved' }],
    ['Lore/Index.md', 'Map.png', { status: 'ambiguous', path: 'Lore/Map.png', candidates: ['Lore/Map.png', 'img/Map.png'] }],
    ['a/b/Note.md', 'Map.png', { status: 'ambiguous', path: 'img/Map.png', candidates: ['img/Map.png', 'Lore/Map.png'] }],
    ['zzzz/deep/Other.md', '../Note', { status: 'resolved', path: 'zzzz/Note.md' }],
    ['zzzz/deep/Other.md', './Nope', { status: 'unresolved' }],
  ])('from %s resolves [[%s]]', (from, target, expected) => {
    expect(resolveLink(from, target, null, lookup)).toEqual(expected);
  });

  it('prefers a note in the source folder over a shorter path elsewhere', () => {
    expect(resolveLink('long/folder/A.md', 'Dup', null, lookup)).toEqual({
      status: 'ambiguous',
      path: 'long/folder/Dup.md',
      candidates: ['long/folder/Dup.md', 'x/Dup.md', 'zzzz/Dup.md'],
    });
  });

  it("keeps each folder's own order when links from several folders share one cached name", () => {
    const fresh = buildLinkLookup(
      [note('long/folder/Dup.md'), note('zzzz/Dup.md'), note('x/Dup.md'), note('long/folder/A.md'), note('zzzz/B.md'), note('Lore/C.md')],
      {},
    );
    const order = (from: string) => (resolveLink(from, 'Dup', null, fresh) as { candidates: string[] }).candidates;
    for (let round = 0; round < 2; round++) {
      expect(order('zzzz/B.md')).toEqual(['zzzz/Dup.md', 'x/Dup.md', 'long/folder/Dup.md']);
      expect(order('Lore/C.md')).toEqual(['x/Dup.md', 'zzzz/Dup.md', 'long/folder/Dup.md']);
      expect(order('long/folder/A.md')).toEqual(['long/folder/Dup.md', 'x/Dup.md', 'zzzz/Dup.md']);
    }
  });

  it('serialises an ambiguous resolution as a plain object and gives each reader its own candidate array', () => {
    const r = resolveLink('zzzz/B.md', 'Dup', null, lookup) as { candidates: string[] };
    expect(JSON.stringify(r)).toBe('{"status":"ambiguous","path":"zzzz/Dup.md","candidates":["zzzz/Dup.md","x/Dup.md","long/folder/Dup.md"]}');
    expect({ ...r }).toEqual({ status: 'ambiguous', path: 'zzzz/Dup.md', candidates: ['zzzz/Dup.md', 'x/Dup.md', 'long/folder/Dup.md'] });
    r.candidates.sort();
    expect(r.candidates).toEqual(['zzzz/Dup.md', 'x/Dup.md', 'long/folder/Dup.md']);
    expect(resolveLink('Lore/C.md', 'Dup', null, lookup)).toEqual({ status: 'ambiguous', path: 'x/Dup.md', candidates: ['x/Dup.md', 'zzzz/Dup.md', 'long/folder/Dup.md'] });
  });

  it('names the first 5 candidates, own folder first, in the ambiguous_link finding of a name with 7 notes', () => {
    const folders = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const notes = [...folders.map((f) => note(`${f}/Same.md`, f === 'f' ? [['Top', 3, 1]] : [])), note('f/From.md')];
    const link = { ...extract('[[Same#Top]]')[0]!, source_path: 'f/From.md' };
    const r = resolveLinks(notes, [], [link]);
    expect(r.links[0]?.resolution).toEqual({ status: 'ambiguous', path: 'f/Same.md', candidates: ['f/Same.md', 'a/Same.md', 'b/Same.md', 'c/Same.md', 'd/Same.md', 'e/Same.md', 'g/Same.md'], chunk_index: 1, line: 3 });
    expect(r.findings.map((f) => f.message)).toEqual([
      'ambiguous heading link [[Same#Top]] in f/From.md:1:1: 7 notes match "Same"; resolved to f/Same.md (candidates: f/Same.md, a/Same.md, b/Same.md, c/Same.md, d/Same.md, … and 2 more)',
    ]);
  });

  it('resolves markdown links relative to the source folder first, then vault-wide', () => {
    expect(resolveLink('a/b/Note.md', '../../Note.md', null, lookup, { markdown: true })).toEqual({ status: 'resolved', path: 'Note.md' });
    expect(resolveLink('zzzz/deep/Other.md', 'Café Noir.md', null, lookup, { markdown: true })).toEqual({ status: 'resolved', path: 'Lore/Café Noir.md' });
  });

  it('resolves heading and block fragments to a chunk and line, else reports them broken', () => {
    expect(resolveLink('x.md', 'a/b/Note', 'tower #3', lookup)).toEqual({ status: 'resolved', path: 'a/b/Note.md', chunk_index: 2, line: 7 });
    expect(resolveLink('x.md', 'a/b/Note', 'Tower 3', lookup)).toEqual({ status: 'resolved', path: 'a/b/Note.md', chunk_index: 2, line: 7 });
    expect(resolveLink('x.md', 'a/b/Note', 'Missing#Setext', lookup)).toEqual({ status: 'resolved', path: 'a/b/Note.md', chunk_index: 3, line: 9 });
    expect(resolveLink('x.md', 'a/b/Note', '^QUOTE-1', lookup)).toEqual({ status: 'resolved', path: 'a/b/Note.md', chunk_index: 1, line: 4 });
    expect(resolveLink('x.md', 'a/b/Note', 'Nope', lookup)).toEqual({ status: 'broken_fragment', path: 'a/b/Note.md', fragment: 'Nope' });
    expect(resolveLink('a/b/Note.md', '', 'Setext', lookup)).toEqual({ status: 'resolved', path: 'a/b/Note.md', chunk_index: 3, line: 9 });
  });
});

describe('resolveLinks', () => {
  it('matches the golden resolution of the parser fixtures', () => {
    expectGolden('_resolved', { links: resolved.links, findings: resolved.findings });
  });

  it('resolves NFC, NFD and case variants of a name to one note', () => {
    expect(linksOf('Edge/Links.md').filter((l) => l.line === 28).map((l) => l.resolution)).toEqual([
      { status: 'resolved', path: 'Edge/Café Noir.md' },
      { status: 'resolved', path: 'Edge/Café Noir.md' },
      { status: 'resolved', path: 'Edge/Café Noir.md' },
    ]);
  });

  it('records duplicate names as ambiguous, own folder first, and keeps the cycle', () => {
    const lantern = resolved.links.filter((l) => l.target === 'Lantern Relay').map((l) => [l.source_path, l.resolution]);
    expect(lantern).toEqual([
      ['Edge/Alpha/Lantern Relay.md', { status: 'ambiguous', path: 'Edge/Alpha/Lantern Relay.md', candidates: ['Edge/Alpha/Lantern Relay.md', 'Edge/Beta/Lantern Relay.md'] }],
      ['Edge/Links.md', { status: 'ambiguous', path: 'Edge/Beta/Lantern Relay.md', candidates: ['Edge/Beta/Lantern Relay.md', 'Edge/Alpha/Lantern Relay.md'] }],
      ['Home.md', { status: 'ambiguous', path: 'Edge/Beta/Lantern Relay.md', candidates: ['Edge/Beta/Lantern Relay.md', 'Edge/Alpha/Lantern Relay.md'] }],
    ]);
    expect(linksOf('Edge/Cycle A.md')[0]?.resolution).toEqual({ status: 'resolved', path: 'Edge/Cycle B.md' });
    expect(linksOf('Edge/Cycle B.md')[0]?.resolution).toEqual({ status: 'resolved', path: 'Edge/Cycle A.md' });
  });

  it('keeps unresolved links and broken fragments as findings with source lines', () => {
    expect(resolved.findings.filter((f) => f.code !== 'ambiguous_link')).toEqual([
      {
        code: 'unresolved_link',
        severity: 'warning',
        message: 'unresolved wikilink [[Nowhere Note]] in Edge/Links.md:24:1: no note or file matches "Nowhere Note"',
        path: 'Edge/Links.md',
        line: 24,
        column: 1,
      },
      {
        code: 'broken_fragment',
        severity: 'warning',
        message: 'broken fragment in heading link [[Headings#No Such Heading]] at Edge/Links.md:24:19: Edge/Headings.md has no heading "No Such Heading"',
        path: 'Edge/Links.md',
        line: 24,
        column: 19,
      },
      {
        code: 'broken_fragment',
        severity: 'warning',
        message: 'broken fragment in block link [[Blocks#^missing]] at Edge/Links.md:24:49: Edge/Blocks.md has no block ^missing',
        path: 'Edge/Links.md',
        line: 24,
        column: 49,
      },
      {
        code: 'unresolved_link',
        severity: 'warning',
        message: 'unresolved embed ![[Missing.png]] in Edge/Links.md:24:70: no note or file matches "Missing.png"',
        path: 'Edge/Links.md',
        line: 24,
        column: 70,
      },
    ]);
  });

  it('resolves image embeds only against the given file list', () => {
    const withoutFiles = resolveVault({ ...vault, files: [] }).links.find((l) => l.raw === '![[Map.png|300]]');
    expect(withoutFiles?.resolution).toEqual({ status: 'unresolved' });
    expect(linksOf('Edge/Links.md').find((l) => l.raw === '![[Map.png|300]]')?.resolution).toEqual({ status: 'resolved', path: 'Edge/Map.png' });
  });
});

describe('resolveLinks, every link form with its line, column, classes and resolution', () => {
  it('resolves each link of the Edge/Links.md fixture exactly', () => {
    const R = (path: string, more: object = {}) => ({ status: 'resolved', path, ...more });
    expect(linksOf('Edge/Links.md').map((l) => [l.line, l.column, l.syntax, l.position, l.chunk_index, l.resolution])).toEqual([
      [5, 7, 'wikilink', 'prose', 1, R('Edge/Headings.md')],
      [5, 29, 'wikilink', 'prose', 1, R('Edge/Fences.md')],
      [5, 61, 'heading_link', 'prose', 1, R('Edge/Headings.md', { chunk_index: 3, line: 7 })],
      [5, 91, 'heading_link', 'prose', 1, R('Edge/Headings.md', { chunk_index: 5, line: 12 })],
      [5, 145, 'block_link', 'prose', 1, R('Edge/Blocks.md', { chunk_index: 0, line: 3 })],
      [5, 171, 'heading_link', 'prose', 1, R('Edge/Links.md', { chunk_index: 1, line: 3 })],
      [6, 17, 'wikilink', 'prose', 1, R('Edge/Cycle A.md')],
      [6, 28, 'wikilink', 'prose', 1, R('Edge/Cycle B.md')],
      [8, 21, 'wikilink', 'list_item', 1, R('Edge/Tables.md')],
      [9, 23, 'wikilink', 'field', 1, R('Home.md')],
      [9, 33, 'wikilink', 'field', 1, { status: 'ambiguous', path: 'Edge/Beta/Lantern Relay.md', candidates: ['Edge/Beta/Lantern Relay.md', 'Edge/Alpha/Lantern Relay.md'] }],
      [10, 10, 'wikilink', 'list_item', 1, R('Edge/Blocks.md')],
      [10, 30, 'wikilink', 'field', 1, R('Edge/Seven Levels.md')],
      [12, 21, 'wikilink', 'field', 1, R('Edge/Cycle A.md')],
      [16, 1, 'embed', 'prose', 2, R('Edge/Blocks.md')],
      [16, 17, 'embed', 'prose', 2, R('Edge/Map.png')],
      [16, 38, 'embed', 'prose', 2, R('Edge/Blocks.md', { chunk_index: 0, line: 6 })],
      [20, 1, 'markdown_link', 'prose', 3, R('Edge/Line Endings CRLF.md')],
      [20, 35, 'markdown_link', 'prose', 3, R('Home.md')],
      [20, 53, 'markdown_link', 'prose', 3, R('Edge/Headings.md', { chunk_index: 2, line: 5 })],
      [20, 80, 'external', 'prose', 3, { status: 'external', url: 'https://example.org/a#b' }],
      [20, 112, 'external', 'prose', 3, { status: 'external', url: 'https://example.com/auto' }],
      [20, 140, 'external', 'prose', 3, { status: 'external', url: 'http://www.example.net' }],
      [20, 160, 'tag', 'prose', 3, { status: 'tag' }],
      [24, 1, 'wikilink', 'prose', 4, { status: 'unresolved' }],
      [24, 19, 'heading_link', 'prose', 4, { status: 'broken_fragment', path: 'Edge/Headings.md', fragment: 'No Such Heading' }],
      [24, 49, 'block_link', 'prose', 4, { status: 'broken_fragment', path: 'Edge/Blocks.md', fragment: '^missing' }],
      [24, 70, 'embed', 'prose', 4, { status: 'unresolved' }],
      [28, 5, 'wikilink', 'prose', 5, R('Edge/Café Noir.md')],
      [28, 27, 'wikilink', 'prose', 5, R('Edge/Café Noir.md')],
      [28, 51, 'wikilink', 'prose', 5, R('Edge/Café Noir.md')],
    ]);
  });

  it('resolves same-note blocks, aliased blocks, sized block embeds, repeated headings, paths and markdown destinations', () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const files: Record<string, string> = {
      'Lore/Index.md': [
        '# Index',
        '',
        'Local block [[#^here]] and [[Twice#Repeated|first of two]] and [[Twice#Heading with a link inside]].',
        'Aliased block [[Twice#^b1|the block]], sized block embed ![[Twice#^b1|200]], by path [[Lore/Sub/Name Two.md]] and [[Sub/Name Two]].',
        'Markdown: [once](Some%2520Name.md), [rel](Sub/Name%20Two.md#Part), [angle](<Sub/Name Two.md>), [wide](Twice.md). ^here',
      ].join('\n') + '\n',
      'Lore/Some%20Name.md': 'A file whose name really contains %20.\n',
      'Lore/Sub/Name Two.md': '# Name Two\n\n## Part\n\nText.\n',
      'Other/Twice.md': '# Twice\n\n## Repeated\n\nOne.\n\n## Repeated\n\nTwo. ^b1\n\n## Heading with [[Index|a link]] inside\n',
    };
    const parsed = Object.entries(files).map(([p, t]) => parseNote(p, enc(t)));
    const r = resolveLinks(parsed.map((p) => p.note), parsed.flatMap((p) => p.chunks), parsed.flatMap((p) => p.links));
    expect(r.links.filter((l) => l.source_path === 'Lore/Index.md').map((l) => [l.line, l.column, l.syntax, l.position, l.target, l.fragment, l.display, l.resolution])).toEqual([
      [3, 13, 'block_link', 'prose', '', '^here', null, { status: 'resolved', path: 'Lore/Index.md', chunk_index: 0, line: 5 }],
      // the first of two same-text headings wins, as in Obsidian
      [3, 28, 'heading_link', 'prose', 'Twice', 'Repeated', 'first of two', { status: 'resolved', path: 'Other/Twice.md', chunk_index: 1, line: 3 }],
      // a heading holding a link is matched by its displayed text
      [3, 64, 'heading_link', 'prose', 'Twice', 'Heading with a link inside', null, { status: 'resolved', path: 'Other/Twice.md', chunk_index: 3, line: 11 }],
      [4, 15, 'block_link', 'prose', 'Twice', '^b1', 'the block', { status: 'resolved', path: 'Other/Twice.md', chunk_index: 2, line: 9 }],
      [4, 58, 'embed', 'prose', 'Twice', '^b1', null, { status: 'resolved', path: 'Other/Twice.md', chunk_index: 2, line: 9 }],
      [4, 86, 'wikilink', 'prose', 'Lore/Sub/Name Two.md', null, null, { status: 'resolved', path: 'Lore/Sub/Name Two.md' }],
      [4, 115, 'wikilink', 'prose', 'Sub/Name Two', null, null, { status: 'resolved', path: 'Lore/Sub/Name Two.md' }],
      // percent-decoded exactly once: %2520 → %20, which names the file literally
      [5, 11, 'markdown_link', 'prose', 'Some%20Name.md', null, 'once', { status: 'resolved', path: 'Lore/Some%20Name.md' }],
      [5, 37, 'markdown_link', 'prose', 'Sub/Name Two.md', 'Part', 'rel', { status: 'resolved', path: 'Lore/Sub/Name Two.md', chunk_index: 1, line: 3 }],
      [5, 68, 'markdown_link', 'prose', 'Sub/Name Two.md', null, 'angle', { status: 'resolved', path: 'Lore/Sub/Name Two.md' }],
      // not beside the note: looked up vault-wide by name
      [5, 96, 'markdown_link', 'prose', 'Twice.md', null, 'wide', { status: 'resolved', path: 'Other/Twice.md' }],
    ]);
    expect(r.findings).toEqual([]);
  });
});

describe('targetClasses', () => {
  it('takes the lower-kebab form of every folder segment', () => {
    expect(targetClasses('Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Sol Dominion.md')).toEqual([
      'aetheria', 'factions', 'major', 'powers', 'pre-elysium', 'worldbuilding',
    ]);
    expect(targetClasses('Timeline/Big Events/X.md')).toEqual(['big-events', 'timeline']);
    expect(targetClasses('Root.md')).toEqual([]);
  });
  it('adds index for index.md, a note named like its folder, and a MOC tag', () => {
    expect(targetClasses('Lore/index.md')).toEqual(['index', 'lore']);
    expect(targetClasses('Factions/Factions.md')).toEqual(['factions', 'index']);
    expect(targetClasses('Home.md', {}, { tags: ['moc'] })).toEqual(['index']);
  });
  it('adds classes from config class_rules by glob', () => {
    expect(targetClasses('Aetheria/Post/Species/Elf.md', { class_rules: [{ glob: 'Aetheria/**/Species/*.md', classes: ['species', 'people'] }] })).toEqual([
      'aetheria', 'people', 'post', 'species',
    ]);
  });
});

describe.skipIf(!hasShared)(`resolveLinks on the real vault (${hasShared ? 'AetheriaLore' : sharedNotice})`, () => {
  it('measures the real counts of notes, chunks, links and resolutions', () => {
    const v = parseVault(AETHERIA, listVault(AETHERIA));
    const r = resolveVault(v);
    const count = (key: (l: (typeof r.links)[number]) => string) => {
      const out: Record<string, number> = {};
      for (const l of r.links) out[key(l)] = (out[key(l)] ?? 0) + 1;
      return out;
    };
    expect([v.notes.length, v.chunks.length, r.links.length, v.files]).toEqual([148, 546, 1430, ['LICENSE']]);
    expect(count((l) => l.syntax)).toEqual({ wikilink: 1407, external: 23 });
    expect(count((l) => l.resolution.status)).toEqual({ resolved: 1401, external: 23, unresolved: 6 });
    expect(count((l) => l.position)).toEqual({ prose: 943, list_item: 325, field: 130, heading: 19, table: 13 });
    expect(r.findings.map((f) => `${f.code} ${f.path}:${f.line}:${f.column}`)).toEqual([
      'unresolved_link Aetheria/Worldbuilding/Politics/PSCC.md:1:523',
      'unresolved_link Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:70:1',
      'unresolved_link Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:72:1',
      'unresolved_link Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:74:1',
      'unresolved_link Aetheria/Worldbuilding/Pre-Elysium/Megas.md:55:56',
      'unresolved_link Aetheria/Worldbuilding/Pre-Elysium/Technology/Bloom.md:48:351',
    ]);
    expect(v.findings).toEqual([]);
  });
});

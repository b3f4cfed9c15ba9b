/** The named steps of collectNoteRefs, each on its own (the pass as a whole is in links.test.ts). */
import { describe, expect, it } from 'vitest';
import {
  chunkLookup, findBareUrls, findBlockMarkers, findTags, IN_HEADING, IN_LIST, IN_TABLE, positionClassifier, splitDestination,
  wikilinkSyntax,
} from '../src/links/extract.js';
import type { Chunk } from '../src/types.js';

const chunk = (chunk_index: number, line_start: number, line_end: number): Chunk => ({
  path: 'n.md', chunk_index, heading_path: [], line_start, line_end, text: '', hash: '', word_count: 0,
});
const span = (raw: string, start = 0, beforeIsSpace = true) => ({ raw, start, beforeIsSpace });

describe('chunkLookup', () => {
  it('maps each 1-based line of a chunk range to its chunk and every other line to null', () => {
    const of = chunkLookup([chunk(0, 2, 3), chunk(1, 5, 5)], 6);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(of)).toEqual([null, null, 0, 0, null, 1, null, null]);
  });
});

describe('positionClassifier', () => {
  const lines = ['plain [[A]]', '- **Primary actors:** [[B]]', '**Label**: [[C]]'];
  const at = positionClassifier(lines);

  it('gives table before heading before field before list_item before prose', () => {
    expect(at(IN_TABLE | IN_HEADING | IN_LIST, 2, 23)).toBe('table');
    expect(at(IN_HEADING | IN_LIST, 2, 23)).toBe('heading');
    expect(at(IN_LIST, 2, 23)).toBe('field');
    expect(at(IN_LIST, 1, 7)).toBe('list_item');
    expect(at(0, 1, 7)).toBe('prose');
  });

  it('reads a field only after the bold label and its colon, in either form', () => {
    expect(at(IN_LIST, 2, 21)).toBe('list_item');
    expect(at(0, 3, 12)).toBe('field');
    expect(at(0, 3, 10)).toBe('prose');
  });
});

describe('wikilinkSyntax', () => {
  it('classes embeds, plain, block and heading wikilinks', () => {
    expect([
      wikilinkSyntax(true, 'H'), wikilinkSyntax(false, null), wikilinkSyntax(false, '^quote-1'), wikilinkSyntax(false, 'Tower #3'),
    ]).toEqual(['embed', 'wikilink', 'block_link', 'heading_link']);
  });
});

describe('splitDestination', () => {
  it('keeps a URL with a scheme verbatim as external', () => {
    expect(splitDestination('obsidian://open?vault=x%20y')).toEqual({ kind: 'external', url: 'obsidian://open?vault=x%20y' });
  });

  it('reads an empty destination as no link', () => {
    expect(splitDestination('')).toEqual({ kind: 'none' });
  });

  it('splits a vault destination at the first # and percent-decodes each side once', () => {
    expect(splitDestination('Old%20Roads.md#The%20Gate#x')).toEqual({ kind: 'vault', target: 'Old Roads.md', fragment: 'The Gate#x' });
    expect(splitDestination('Map.md#')).toEqual({ kind: 'vault', target: 'Map.md', fragment: null });
    expect(splitDestination('%E0%A4%A.md')).toEqual({ kind: 'vault', target: '%E0%A4%A.md', fragment: null });
  });
});

describe('findTags', () => {
  it('gives each tag name and the offset of its # in the note, skipping all-digit names', () => {
    expect(findTags(span('see #lore/north and #42 or #x1', 10))).toEqual([
      { at: 14, name: 'lore/north' },
      { at: 37, name: 'x1' },
    ]);
  });

  it('takes a # at the span start only after whitespace', () => {
    expect(findTags(span('#mid', 5, false))).toEqual([]);
    expect(findTags(span('#mid', 5, true))).toEqual([{ at: 5, name: 'mid' }]);
  });
});

describe('findBareUrls', () => {
  it('trims trailing punctuation and unbalanced parentheses, keeping the offset of the first letter', () => {
    const raw = 'at https://x.y/(a)). and www.z.com, end';
    expect(findBareUrls(span(raw), raw)).toEqual([
      { at: 3, url: 'https://x.y/(a)' },
      { at: 25, url: 'www.z.com' },
    ]);
  });

  it('takes a URL at the span start only after whitespace or *_~( in the note', () => {
    const source = 'ahttps://x.y (https://x.y';
    expect(findBareUrls(span('https://x.y', 1), source)).toEqual([]);
    expect(findBareUrls(span('https://x.y', 14), source)).toEqual([{ at: 14, url: 'https://x.y' }]);
  });

  it('refuses a scheme or www. with nothing after it', () => {
    expect(findBareUrls(span('see https:// and www.'), 'see https:// and www.')).toEqual([]);
  });
});

describe('findBlockMarkers', () => {
  it('gives each ^id that ends its line, with the offset of its ^', () => {
    const source = 'a line ^quote-1\nmid ^no more\nend ^b2  ';
    expect(findBlockMarkers(span(source), source)).toEqual([
      { at: 7, id: 'quote-1' },
      { at: 33, id: 'b2' },
    ]);
  });

  it('refuses a marker whose span ends before its line does', () => {
    const source = 'text ^id*more*';
    expect(findBlockMarkers(span('text ^id'), source)).toEqual([]);
  });
});

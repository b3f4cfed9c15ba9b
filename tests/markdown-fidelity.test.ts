/**
 * Markdown fidelity on lore-fixtures/MarkdownLore (one fault class per note; docs/PARSING.md has the rules
 * and where Obsidian documents each): invalid frontmatter is body text, property links, comments and
 * math, headings nested in callouts / quotes / list items, embed sizes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from './helpers/shared.js';
import { listVault, parseVault, resolveVault } from './helpers/fixture-notes.js';
import { indexVault } from '../src/indexer/build.js';
import { makeVault } from './helpers/temp-vault.js';
import { outgoingLinks, overCapNotes, readOverCapLines } from '../src/indexer/lookup.js';
import { resolveRef } from '../src/refs/ref.js';
import { search } from '../src/search/search.js';
import { splitLines } from '../src/notes/lines.js';
import { checkEdge, compilePolicy } from '../src/policy/index.js';
import type { TraversalPolicy } from '../src/contracts/types.js';

const VAULT = join(FIXTURES, 'MarkdownLore');
const vault = parseVault(VAULT, listVault(VAULT));
const resolved = resolveVault(vault);
const parsed = (path: string) => vault.parsed.get(path)!;
const linksOf = (path: string) => resolved.links.filter((l) => l.source_path === path);

describe('invalid frontmatter is body text', () => {
  const r = parsed('Notes/Invalid Frontmatter.md');

  it('chunks the block, keeps its link and says so in the warning', () => {
    expect(r.note.frontmatter_lines).toBeNull();
    expect(r.chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 5, []],
      [6, 8, ['After the Block']],
    ]);
    expect(r.findings.map((f) => [f.code, f.line, f.message])).toEqual([
      [
        'bad_frontmatter',
        2,
        'Notes/Invalid Frontmatter.md:2: frontmatter is YAML but not a mapping (expected `key: value` lines); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields',
      ],
    ]);
    expect(linksOf('Notes/Invalid Frontmatter.md').map((l) => [l.line, l.column, l.chunk_index, l.raw, l.resolution])).toEqual([
      [3, 59, 0, '[[Target]]', { status: 'resolved', path: 'Notes/Target.md' }],
    ]);
  });
});

describe('frontmatter property links', () => {
  it('records each [[link]] in a property value with its file line, column, class property and key', () => {
    expect(
      linksOf('Notes/Property Links.md').map((l) => [l.line, l.column, l.chunk_index, l.syntax, l.position, l.property ?? null, l.raw, l.display, l.resolution]),
    ).toEqual([
      [2, 11, null, 'wikilink', 'property', 'related', '[[Target]]', null, { status: 'resolved', path: 'Notes/Target.md' }],
      [4, 6, null, 'wikilink', 'property', 'sources', '[[Third|T]]', 'T', { status: 'resolved', path: 'Notes/Third.md' }],
      [7, 14, null, 'heading_link', 'property', 'nested', '[[Target#Section Two]]', null, { status: 'resolved', path: 'Notes/Target.md', chunk_index: 1, line: 5 }],
      [7, 41, null, 'wikilink', 'property', 'nested', '[[Missing Property Note]]', null, { status: 'unresolved' }],
      [11, 12, 0, 'wikilink', 'prose', null, '[[Target]]', null, { status: 'resolved', path: 'Notes/Target.md' }],
    ]);
    expect(resolved.findings.filter((f) => f.path === 'Notes/Property Links.md').map((f) => [f.code, f.line])).toEqual([['unresolved_link', 7]]);
  });
});

describe('comments and math', () => {
  const r = parsed('Notes/Comments and Math.md');

  it('extracts no link, tag or heading inside %%…%%, $…$ or $$…$$, and keeps the ones outside', () => {
    expect(r.links.map((l) => [l.line, l.column, l.raw])).toEqual([
      [3, 14, '[[Target]]'],
      [10, 58, '[[Third]]'],
      [17, 26, '[[Target#Section Two]]'],
    ]);
    expect(r.note.tags).toEqual([]);
    expect(r.note.headings.map((h) => [h.text, h.line, h.chunk_index])).toEqual([
      ['Comments and Math', 1, 0],
      ['Real Heading', 19, 1],
    ]);
  });

  it('keeps every line in a chunk with its exact text', () => {
    expect(r.chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 17, ['Comments and Math']],
      [19, 21, ['Comments and Math', 'Real Heading']],
    ]);
    expect(r.chunks[0]!.text).toContain('%%\n# Not a Heading\nA commented link [[Hidden Block]] and #hidden-tag.\n%%');
  });
});

describe('headings nested in callouts, block quotes and list items', () => {
  it('start no chunk and are not link targets, as in Obsidian', () => {
    const r = parsed('Notes/Nested Headings.md');
    expect(r.chunks.map((c) => [c.line_start, c.line_end, c.heading_path])).toEqual([
      [1, 12, ['Nested Headings']],
      [14, 14, ['Nested Headings', 'Top Level']],
    ]);
    expect(linksOf('Notes/Heading Links.md').map((l) => [l.fragment, l.resolution])).toEqual([
      ['Quoted Heading', { status: 'broken_fragment', path: 'Notes/Nested Headings.md', fragment: 'Quoted Heading' }],
      ['Callout Heading', { status: 'broken_fragment', path: 'Notes/Nested Headings.md', fragment: 'Callout Heading' }],
      ['Item Heading', { status: 'broken_fragment', path: 'Notes/Nested Headings.md', fragment: 'Item Heading' }],
      ['Top Level', { status: 'resolved', path: 'Notes/Nested Headings.md', chunk_index: 1, line: 14 }],
    ]);
  });
});

describe('embed sizes', () => {
  it('parses |W and |WxH into size, never into display text', () => {
    expect(linksOf('Notes/Embed Sizes.md').map((l) => [l.raw, l.display, l.size ?? null, l.resolution.status])).toEqual([
      ['![[Map.png|300]]', null, { width: 300, height: null }, 'resolved'],
      ['![[Map.png|640x480]]', null, { width: 640, height: 480 }, 'resolved'],
      ['![[Map.png|Caption]]', 'Caption', null, 'resolved'],
      ['![[Map.png|Caption|100]]', 'Caption', { width: 100, height: null }, 'resolved'],
      ['![Engelbart|100x145](Map.png)', 'Engelbart', { width: 100, height: 145 }, 'resolved'],
    ]);
  });
});

describe('follow_link_classes: property links', () => {
  it('follows only the property links for "linked properties", and the receipt says how they are treated', async () => {
    const index = await indexVault(VAULT, { persist: false });
    const policy: TraversalPolicy = {
      max_link_depth: 1,
      allowed_prefixes: ['MarkdownLore:Notes/'],
      required_seed_refs: ['MarkdownLore:Notes/Property Links.md'],
      follow_link_classes: ['linked properties', 'property'],
      stop_conditions: [],
    };
    const compiled = compilePolicy(policy, { index });
    expect(compiled.receipt.filter((r) => r.kind === 'follow_link_class').map((r) => [r.clause, r.disposition, r.rule])).toEqual([
      [
        'linked properties',
        'enforced',
        'follow property links (the phrase names them: linked, properties→property): [[links]] in frontmatter property values (position class property), which Obsidian counts as links of the note; a syntax class such as wikilink follows them too, a position class other than property does not',
      ],
      [
        'property',
        'enforced',
        'follow property links: [[links]] in frontmatter property values (position class property), which Obsidian counts as links of the note; a syntax class such as wikilink follows them too, a position class other than property does not',
      ],
    ]);
    const property = outgoingLinks(index, 'Notes/Property Links.md').filter((l) => l.resolution.status === 'resolved');
    expect(property.map((l) => [l.line, l.position, checkEdge(compiled, l, 0).ok])).toEqual([
      [2, 'property', true],
      [4, 'property', true],
      [7, 'property', true],
      [11, 'prose', false],
    ]);
  });
});

describe('notes over the size cap', () => {
  it('stay known: links to them resolve as too_large with the size, and the finding says so', async () => {
    const big = `# Big\n\n${'A long line of lore. '.repeat(20)}\n`;
    const dir = makeVault('BigLore', { 'Big Note.md': big, 'Small.md': '# Small\n\nSee [[Big Note]] and [[Big Note#Big]] and [[Nowhere]].\n' });
    const index = await indexVault(dir, { persist: false, config: { max_file_bytes: 200 } });
    expect(index.notes.map((n) => n.path)).toEqual(['Small.md']);
    expect(index.links.map((l) => [l.raw, l.resolution])).toEqual([
      ['[[Big Note]]', { status: 'too_large', path: 'Big Note.md', size: Buffer.byteLength(big) }],
      ['[[Big Note#Big]]', { status: 'too_large', path: 'Big Note.md', size: Buffer.byteLength(big) }],
      ['[[Nowhere]]', { status: 'unresolved' }],
    ]);
    expect(index.findings.filter((f) => f.code === 'file_too_large').map((f) => f.message)).toEqual([
      `Big Note.md is ${Buffer.byteLength(big)} bytes, over max_file_bytes 200; not parsed, chunked or searched (links to it resolve as too_large)`,
    ]);
  });

  it('are listed by overCapNotes (what search skipped; search returns its hits only)', async () => {
    const index = await indexVault(join(FIXTURES, 'BigNoteLore'), { persist: false });
    expect(overCapNotes(index)).toEqual([{ path: 'Harbor/Tide Ledger.md', reason: 'too_large', bytes: 3246 }]);
    expect(search(index, 'tide ledger entry').map((h) => h.ref)).toEqual(['BigNoteLore:Harbor/Quay.md#chunk0']);
  });

  it('answer only line-range refs: chunk_index null, other fragments note_too_large', async () => {
    const index = await indexVault(join(FIXTURES, 'BigNoteLore'), { persist: false });
    expect(resolveRef(index, 'BigNoteLore:Harbor/Tide Ledger.md#L1-L50')).toEqual({ path: 'Harbor/Tide Ledger.md', chunk_index: null, line_start: 1, line_end: 50 });
    for (const ref of ['BigNoteLore:Harbor/Tide Ledger.md', 'BigNoteLore:Harbor/Tide Ledger.md#chunk0', 'BigNoteLore:Harbor/Tide Ledger.md#Tide Ledger', 'BigNoteLore:Harbor/Tide Ledger.md#^x']) {
      expect(() => resolveRef(index, ref)).toThrow(expect.objectContaining({ code: 'note_too_large', details: expect.objectContaining({ file: 'Harbor/Tide Ledger.md' }) }));
    }
  });

  it('stream a line range with the same lines as splitLines (CRLF, CR, LF, BOM, multi-byte across 64 KiB pieces)', async () => {
    const breaks = ['\n', '\r\n', '\r'];
    const parts: string[] = [];
    for (let i = 0; i < 12_000; i++) parts.push(`line ${i} ${'é€𝄞'.repeat(i % 7)}${breaks[i % 3]}`);
    const text = `\ufeff${parts.join('')}tail without break`;
    const dir = makeVault('StreamLore', { 'Big.md': text });
    const index = await indexVault(dir, { persist: false, config: { max_file_bytes: 1000 } });
    const lines = splitLines(text);
    expect(lines.length).toBe(12_001);
    for (const [a, b] of [[1, 3], [2_999, 3_011], [5_000, 9_000], [11_990, 12_001]] as const) {
      expect(await readOverCapLines(index, 'Big.md', a, b, `Big.md#L${a}-L${b}`)).toEqual(lines.slice(a - 1, b));
    }
    await expect(readOverCapLines(index, 'Big.md', 12_001, 12_002, 'Big.md#L12001-L12002')).rejects.toMatchObject({
      code: 'not_found', message: 'ref Big.md#L12001-L12002: Big.md has 12001 lines, so L12001-L12002 is outside it',
    });
  });
});


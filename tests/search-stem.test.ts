/**
 * The stemmed field of search (docs/INDEX.md "Stemmed field"): a Porter-stemmed copy of the headings and
 * text fields, built when the config's `stem_weight` is above 0 and scored at that weight (or the
 * `stemWeight` option) beside the exact fields. Fixture: lore-fixtures/StemLore (its config sets
 * `stem_weight: 0.25`), where `Beacon Keepers` says only "relaying" (Porter stem `relai`, as "relays")
 * and `Dawn Watch` only "burned" (stem `burn`, as "burning").
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexStats, indexVault } from '../src/indexer/build.js';
import { SEARCH_BOOST } from '../src/search/engine.js';
import { search } from '../src/search/search.js';
import { fieldTokens, hasStemmedField, noteTokens, processTerm, STEM_MARK, stemTerm, tokenize } from '../src/search/tokenize.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES } from './helpers/shared.js';

const VAULT = join(FIXTURES, 'StemLore');
let index: VaultIndex;
let memory: VaultIndex;
let exactOnly: VaultIndex;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lt-stem-'));
  await indexVault(VAULT, { indexDir: dir });
  index = await indexVault(VAULT, { indexDir: dir }); // warm: term shards read from disk
  memory = await indexVault(VAULT, { persist: false });
  exactOnly = await indexVault(VAULT, { persist: false, config: {} }); // no stem_weight: no stemmed copy
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ranked = (q: string, stemWeight: number, opts = {}) => search(index, q, { stemWeight, ...opts }).map((h) => [h.ref, h.score]);

describe('stemTerm', () => {
  it('gives the Porter stem with the stem mark, and null for stop words, short words and non-letters', () => {
    expect(STEM_MARK).toBe('\u0001');
    expect(['relays', 'relaying', 'relayed', 'relay'].map(stemTerm)).toEqual(['relai\u0001', 'relai\u0001', 'relai\u0001', 'relai\u0001']);
    expect(stemTerm('burning')).toBe('burn\u0001');
    expect(stemTerm('harbor')).toBe('harbor\u0001');
    expect(['the', 'which', 'ox', '1990s', 'øre', 'кит'].map(stemTerm)).toEqual([null, null, null, null, null, null]);
  });
});

describe('fieldTokens with the stemmed copy', () => {
  it('adds each stem once with the summed frequency of its words, after the exact terms, and keeps the field length', () => {
    const t = fieldTokens('Relays relaying relay the relays', true);
    expect(t).toEqual({ tf: { relays: 2, relaying: 1, relay: 1, the: 1, 'relai\u0001': 4 }, len: 5 });
    expect(Object.keys(t.tf)).toEqual(['relays', 'relaying', 'relay', 'the', 'relai\u0001']);
    expect(fieldTokens('Relays relaying relay the relays')).toEqual({ tf: { relays: 2, relaying: 1, relay: 1, the: 1 }, len: 5 });
  });

  it('is built only for a config whose stem_weight is above 0, and never for title and aliases', () => {
    expect([undefined, {}, { stem_weight: 0 }, { stem_weight: 0.25 }].map(hasStemmedField)).toEqual([false, false, false, true]);
    const t = noteTokens({ title: 'Signal Relays', aliases: ['Relay Towers'] }, [{ heading_path: ['Signal Relays'], text: 'relaying' }], true);
    expect(t.title.tf).toEqual({ signal: 1, relays: 1 });
    expect(t.aliases.tf).toEqual({ relay: 1, towers: 1 });
    expect(t.chunks[0]!.headings.tf).toEqual({ signal: 1, relays: 1, 'signal\u0001': 1, 'relai\u0001': 1 });
    expect(t.chunks[0]!.text.tf).toEqual({ relaying: 1, 'relai\u0001': 1 });
    expect(noteTokens({ title: 'x', aliases: [] }, [{ heading_path: [], text: 'relaying' }]).chunks[0]!.text.tf).toEqual({ relaying: 1 });
  });
});

describe('search with the stemmed field', () => {
  it('is off by default: without stem_weight only the exact form matches, and stemWeight above 0 is refused', () => {
    expect(search(exactOnly, 'relays').map((h) => [h.ref, h.score])).toEqual([['StemLore:Coast/Signal Relays.md#chunk0', 12.947753]]);
    expect(() => search(exactOnly, 'relays', { stemWeight: 0.25 })).toThrow(
      expect.objectContaining({
        code: 'bad_option',
        exitCode: 2,
        message: 'search option stemWeight 0.25 needs an index with the stemmed field: set "stem_weight" (0 … 1) in loretrace.config.json',
      }),
    );
  });

  it("uses the config's stem_weight by default; stemWeight 0 gives the scores of an index without the copy", () => {
    expect(search(index, 'relays')).toEqual(search(index, 'relays', { stemWeight: 0.25 }));
    for (const q of ['relays', 'harbor burning', 'tide warnings relays', 'relai']) {
      expect(search(index, q, { stemWeight: 0 })).toEqual(search(exactOnly, q));
    }
    expect(ranked('relays', 0)).toEqual([['StemLore:Coast/Signal Relays.md#chunk0', 12.947753]]);
  });

  it('finds a chunk that has only a stemmed form, below the exact hit', () => {
    expect(ranked('relays', 0.25)).toEqual([
      ['StemLore:Coast/Signal Relays.md#chunk0', 14.390152],
      ['StemLore:Coast/Beacon Keepers.md#chunk0', 0.320251],
    ]);
    expect(ranked('relays', 1)).toEqual([
      ['StemLore:Coast/Signal Relays.md#chunk0', 18.717349],
      ['StemLore:Coast/Beacon Keepers.md#chunk0', 1.281005],
    ]);
  });

  it('scores exactly exact BM25 + stemWeight × BM25 of the stem over the stemmed copy (MiniSearch as the reference)', () => {
    // Reference: MiniSearch over the chunks with the four exact fields plus stemmed copies of headings and
    // text (field lengths counted on the raw tokens, as MiniSearch does), one term per query.
    const notes = new Map(index.notes.map((n) => [n.path, n]));
    const docs = index.chunks.map((c, id) => {
      const n = notes.get(c.path)!;
      return { id, title: n.title, aliases: n.aliases.join(' '), headings: c.heading_path.join(' '), text: c.text };
    });
    const ms = new MiniSearch({
      fields: ['title', 'aliases', 'headings', 'text', 'headings_stem', 'text_stem'],
      extractField: (d: Record<string, unknown>, f: string) => (d[f.replace(/_stem$/, '')] as string) ?? '',
      tokenize: (s: string) => tokenize(s),
      processTerm: (t: string, field?: string) => {
        const term = processTerm(t);
        if (term === null || !field?.endsWith('_stem')) return term;
        const stem = stemTerm(term);
        return stem === null ? null : stem.slice(0, -1);
      },
    });
    ms.addAll(docs);
    const bm25 = (term: string, fields: string[], boost: Record<string, number>) =>
      new Map(ms.search(term, { fields, boost, processTerm: (t: string) => t, tokenize: (s: string) => [s] }).map((r) => [r.id as number, r.score]));
    const w = 0.25;
    const exact = bm25('relays', ['title', 'aliases', 'headings', 'text'], SEARCH_BOOST);
    const stem = bm25(stemmer('relays'), ['headings_stem', 'text_stem'], { headings_stem: SEARCH_BOOST.headings, text_stem: SEARCH_BOOST.text });
    const expected = [...stem.keys()].map((id) => [`StemLore:${index.chunks[id]!.path}#chunk0`, Math.round(((exact.get(id) ?? 0) + w * stem.get(id)!) * 1e6) / 1e6]);
    expect(expected.sort((a, b) => (b[1] as number) - (a[1] as number))).toEqual(ranked('relays', w));
  });

  it('keeps exact first: the exact wording outranks the stemmed one, which the stem still lifts', () => {
    expect(ranked('harbor burning', 0)).toEqual([
      ['StemLore:Coast/Night Watch.md#chunk0', 6.785289],
      ['StemLore:Coast/Dawn Watch.md#chunk0', 1.313203],
    ]);
    // Dawn Watch counts "burned" for "burning" (two query terms matched instead of one); Night Watch,
    // which has the exact word, stays first.
    expect(ranked('harbor burning', 0.25)).toEqual([
      ['StemLore:Coast/Night Watch.md#chunk0', 8.098492],
      ['StemLore:Coast/Dawn Watch.md#chunk0', 3.939609],
    ]);
    expect(ranked('tide warnings relays', 0.25).map(([ref]) => ref)).toEqual([
      'StemLore:Coast/Signal Relays.md#chunk0',
      'StemLore:Coast/Tide Clocks.md#chunk0',
      'StemLore:Coast/Beacon Keepers.md#chunk0',
    ]);
  });

  it('ranks chunks with only stemmed forms in a tier below every exact hit', () => {
    // The stem tier is consulted only when the exact hits are fewer than k.
    expect(ranked('relays', 0.25, { k: 1 })).toEqual([['StemLore:Coast/Signal Relays.md#chunk0', 14.390152]]);
    // With phrase: false (traversal's plain BM25) the tiers are the same.
    expect(ranked('relays', 0.25, { phrase: false })).toEqual([
      ['StemLore:Coast/Signal Relays.md#chunk0', 14.390152],
      ['StemLore:Coast/Beacon Keepers.md#chunk0', 0.320251],
    ]);
  });

  it('never lets prefix or fuzzy expansion match a stemmed term', () => {
    // "relai" is a prefix of the stemmed term relai\u0001 but of no word: nothing matches it exactly.
    expect(ranked('relai', 0)).toEqual([]);
    // With the stemmed field on, its own stem (relai) finds both notes, through the stemmed copy only.
    expect(ranked('relai', 0.25)).toEqual([
      ['StemLore:Coast/Signal Relays.md#chunk0', 1.442399],
      ['StemLore:Coast/Beacon Keepers.md#chunk0', 0.320251],
    ]);
  });

  it('gives the same hits from the persisted index and from an in-memory build', () => {
    for (const q of ['relays', 'harbor burning', 'tide warnings relays']) {
      expect(search(memory, q, { stemWeight: 0.25 })).toEqual(search(index, q, { stemWeight: 0.25 }));
    }
  });

  it('keeps the stemmed copy through an incremental update (delta shards)', async () => {
    const vault = mkdtempSync(join(tmpdir(), 'lt-stem-vault-'));
    const cache = mkdtempSync(join(tmpdir(), 'lt-stem-idx-'));
    try {
      cpSync(VAULT, vault, { recursive: true });
      await indexVault(vault, { indexDir: cache });
      writeFileSync(join(vault, 'Coast', 'Beacon Keepers.md'), '# Beacon Keepers\n\nThe keepers relayed tide warnings from tower to tower.\n');
      const updated = await indexVault(vault, { indexDir: cache });
      expect(indexStats(updated)).toMatchObject({ parsed: 1, reused: 4 });
      const fresh = await indexVault(vault, { persist: false });
      for (const q of ['relays', 'relayed', 'tide warnings relays']) expect(search(updated, q)).toEqual(search(fresh, q));
      expect(search(updated, 'relays').map((h) => h.path)).toEqual(['Coast/Signal Relays.md', 'Coast/Beacon Keepers.md']);
    } finally {
      rmSync(vault, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('refuses a stemWeight outside 0 … 1 with bad_option, and a config stem_weight outside it with bad_config', async () => {
    for (const bad of [-0.1, 1.5, Number.NaN, '0.5' as unknown as number]) {
      expect(() => search(index, 'relays', { stemWeight: bad })).toThrow(
        expect.objectContaining({ code: 'bad_option', message: `search option stemWeight must be a number from 0 to 1 (got ${String(bad)})` }),
      );
    }
    const vault = mkdtempSync(join(tmpdir(), 'lt-stem-config-'));
    try {
      writeFileSync(join(vault, 'loretrace.config.json'), '{ "stem_weight": 2 }');
      await expect(indexVault(vault, { persist: false })).rejects.toMatchObject({ code: 'bad_config', message: expect.stringContaining('/stem_weight') });
    } finally {
      rmSync(vault, { recursive: true, force: true });
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { search, searchCorpus } from '../src/search/search.js';
import { commonTerms, processTerm, queryTerms, tokenize } from '../src/search/tokenize.js';
import { longestPhraseRun, PHRASE_MAX_TERMS, PHRASE_WEIGHT, phraseFactor, phraseIsName } from '../src/search/phrase.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT, FIXTURES } from './helpers/shared.js';

let index: VaultIndex;
let memory: VaultIndex;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lt-search-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: dir });
  index = await indexVault(FIXTURE_VAULT, { indexDir: dir }); // warm: search shards read from disk
  memory = await indexVault(FIXTURE_VAULT, { persist: false });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const S = { prefixes: ['Search/'] };
const refs = (q: string, k = 4, opts = S) => search(index, q, { k, ...opts }).map((h) => h.ref);

describe('search', () => {
  it('returns hits with the exact chunk lines, heading path and a 6-decimal score', () => {
    expect(search(index, 'Framgång charter toll', { k: 1, ...S })).toEqual([{
      ref: 'FixtureLore:Search/Framgång Charter.md#chunk0',
      path: 'Search/Framgång Charter.md',
      chunk_index: 0,
      line_start: 1,
      line_end: 3,
      heading_path: ['Framgång Charter'],
      score: expect.any(Number),
      text: '# Framgång Charter\n\nThe Framgång Charter binds the river guilds to a shared toll on every barge.',
    }]);
    for (const h of search(index, 'harbor charter guild', { k: 30 })) expect(Math.round(h.score * 1e6) / 1e6).toBe(h.score);
  });

  it('folds diacritics: Framgang and Framgång give the same hits and scores', () => {
    expect(search(index, 'Framgang', S)).toEqual(search(index, 'Framgång', S));
    expect(refs('Framgang')).toEqual(['FixtureLore:Search/Framgång Charter.md#chunk0']);
  });

  it("drops apostrophes: Keldar, Kel'dar and Kel’dar match the same note", () => {
    for (const q of ['Keldar', "Kel'dar", 'Kel’dar']) expect(refs(q)).toEqual(["FixtureLore:Search/Kel'dar Accord.md#chunk0"]);
  });

  it('never ranks an inexact (prefix/fuzzy) match above an exact one', () => {
    const hits = search(index, 'tidewright', { k: 4, ...S });
    expect(hits.map((h) => h.ref)).toEqual([
      'FixtureLore:Search/Tidewright Almanac.md#chunk1',
      'FixtureLore:Search/Tidewright Almanac.md#chunk0',
      'FixtureLore:Search/Tidewrights Guild.md#chunk1',
      'FixtureLore:Search/Tidewrights Guild.md#chunk0',
    ]);
    // The guild note only says "tidewrights" (a prefix expansion) — three times in a short chunk, so
    // its own BM25 is higher; it still ranks below both exact hits.
    expect(hits[2]!.score).toBeLessThan(hits[1]!.score);
    expect(refs('tidewrights', 1)).toEqual(['FixtureLore:Search/Tidewrights Guild.md#chunk1']);
    expect(search(index, 'tidewright', { k: 2, ...S, expand: false }).map((h) => h.path)).toEqual(['Search/Tidewright Almanac.md', 'Search/Tidewright Almanac.md']);
  });

  it('expands by prefix and fuzzy matching only when exact terms find fewer than k hits', () => {
    expect(refs('tidew', 2)).toEqual(['FixtureLore:Search/Tidewrights Guild.md#chunk1', 'FixtureLore:Search/Tidewright Almanac.md#chunk1']);
    expect(refs('tidew', 2, { ...S, expand: false } as typeof S)).toEqual([]);
    expect(refs('Framgagn')).toEqual(['FixtureLore:Search/Framgång Charter.md#chunk0']);
  });

  it('drops stop words from queries that have other terms, keeps them otherwise', () => {
    expect(queryTerms('the Framgång charter of the')).toEqual(['framgang', 'charter']);
    expect(search(index, 'the Framgång charter of the', S).map((h) => h.ref)).toEqual(search(index, 'Framgång charter', S).map((h) => h.ref));
    expect(queryTerms('the of and')).toEqual(['the', 'of', 'and']);
    expect(refs('the', 2)).toEqual(['FixtureLore:Search/Tidewright Almanac.md#chunk0', 'FixtureLore:Search/Tidewright Almanac.md#chunk1']);
  });

  it('filters by path prefix on whole segments', () => {
    const all = search(index, 'Compact books piers', { k: 50 }).map((h) => h.path);
    expect(all).toContain('World/Pre-Elysium-Extra/Dockside Rumors.md');
    const pre = search(index, 'Compact books piers', { k: 50, prefixes: ['World/Pre-Elysium'] }).map((h) => h.path);
    expect(pre.length).toBeGreaterThan(0);
    expect(pre.every((p) => p.startsWith('World/Pre-Elysium/'))).toBe(true);
    expect(search(index, 'Compact books piers', { k: 50, prefixes: ['World/Pre-Elysium-Extra/'] }).map((h) => h.path))
      .toEqual(['World/Pre-Elysium-Extra/Dockside Rumors.md']);
    expect(search(index, 'Compact', { k: 50, prefixes: ['World/Pre'] })).toEqual([]);
    // The vault's own namespace may prefix the path, as in a ref.
    expect(search(index, 'Compact books piers', { k: 50, prefixes: ['FixtureLore:World/Pre-Elysium-Extra/'] }).map((h) => h.path))
      .toEqual(['World/Pre-Elysium-Extra/Dockside Rumors.md']);
  });

  it('filters by target class and by an explicit set of paths', () => {
    expect(search(index, 'charter', { k: 50, classes: ['search'] }).map((h) => h.ref)).toEqual(['FixtureLore:Search/Framgång Charter.md#chunk0']);
    expect(search(index, 'tidewright', { k: 50, paths: ['Search/Tidewrights Guild.md'] }).map((h) => h.ref))
      .toEqual(['FixtureLore:Search/Tidewrights Guild.md#chunk1', 'FixtureLore:Search/Tidewrights Guild.md#chunk0']);
  });

  it('orders ties by path then chunk_index, and gives identical results from the persisted and the in-memory index', () => {
    const hits = search(index, 'harbor salt guild charter the', { k: 40 });
    for (let i = 1; i < hits.length; i++) {
      const a = hits[i - 1]!;
      const b = hits[i]!;
      expect(a.score > b.score || (a.score === b.score && (a.path < b.path || (a.path === b.path && a.chunk_index < b.chunk_index)))).toBe(true);
    }
    expect(JSON.stringify(search(memory, 'harbor salt guild charter the', { k: 40 }))).toBe(JSON.stringify(hits));
  });

  it('returns nothing for an empty query and rejects k < 1', () => {
    expect(search(index, ' ,;. ')).toEqual([]);
    expect(() => search(index, 'x', { k: 0 })).toThrow(expect.objectContaining({ code: 'bad_option', message: 'search option k must be an integer ≥ 1 (got 0)' }));
  });
});

describe('tokenize', () => {
  it('splits at whitespace, punctuation and symbols after dropping apostrophes', () => {
    expect(tokenize("Kel'dar’s [[Cold Wake]] #tag C# 2892-2895")).toEqual(['Keldar', 'Cold', 'Wake', 'tag', 'C', '2892', '2895']);
  });

  it('removes invisible format characters (soft hyphen, zero-width space) instead of splitting at them', () => {
    expect(tokenize('Soli\u00adton Dri\u200bve \ufeffBloom')).toEqual(['Soliton', 'Drive', 'Bloom']);
  });

  it("drops a possessive 's after a letter, not an 's that starts a word or is followed by more letters", () => {
    expect(tokenize("Zhestokost’s guns, the Navigators' pods, Krr'vax, it's, 's-class, O'sullivan")).toEqual(
      ['Zhestokost', 'guns', 'the', 'Navigators', 'pods', 'Krrvax', 'it', 's', 'class', 'Osullivan'],
    );
  });
});

describe('processTerm', () => {
  it('lower-cases and strips combining marks', () => {
    expect(['Framgång', 'CAFÉ', 'Ärla', 'naïve'].map(processTerm)).toEqual(['framgang', 'cafe', 'arla', 'naive']);
  });
});

describe('search: phrase re-rank', () => {
  // A vault written for this test: the Salt Registry says "brine" and "office" often but never the
  // phrase; the harbour log says "brine office ledger" once, in a longer paragraph.
  let vault: string;
  let phraseIndex: VaultIndex;
  beforeAll(async () => {
    vault = mkdtempSync(join(tmpdir(), 'lt-phrase-'));
    writeFileSync(join(vault, 'Salt Registry.md'), '# Salt Registry\n\nBrine, brine and more brine; the office keeps a ledger; office hours end at dusk.\n');
    writeFileSync(join(vault, 'Harbour Log.md'), '# Harbour Log\n\n## Spring\n\nAt dawn the clerks carried the brine office ledger down to the quay, past the nets and the tar barrels.\n');
    writeFileSync(join(vault, 'Weigh House.md'), '---\naliases: [Salt Office]\n---\n# Charter\n\nFounded after the flood.\n\n## Duties\n\nIt weighs every cask.\n');
    phraseIndex = await indexVault(vault, { persist: false, namespace: 'Salt' });
  });
  afterAll(() => rmSync(vault, { recursive: true, force: true }));

  it('multiplies the BM25 score by 1 + 2 × (run − 1) / (n − 1) for the longest run of consecutive query terms', () => {
    // Same terms in an order that no chunk contains: pure BM25 (factor 1 everywhere).
    const bag = search(phraseIndex, 'office brine ledger', { k: 5 });
    const phrased = search(phraseIndex, 'brine office ledger', { k: 5 });
    const bm25 = new Map(bag.map((h) => [h.ref, h.score]));
    // (Weigh House's alias "Salt Office" is a field of each of its two chunks.)
    expect(bag.map((h) => h.ref)).toEqual(['Salt:Salt Registry.md#chunk0', 'Salt:Harbour Log.md#chunk1', 'Salt:Weigh House.md#chunk0', 'Salt:Weigh House.md#chunk1']);
    expect(phrased.map((h) => h.ref)).toEqual(['Salt:Harbour Log.md#chunk1', 'Salt:Salt Registry.md#chunk0', 'Salt:Weigh House.md#chunk0', 'Salt:Weigh House.md#chunk1']);
    // Harbour Log has all three in a row: factor 3. Salt Registry has "brine" and "office" but never next to
    // each other ("brine; the office"): factor 1. Weigh House has "office" alone (alias "Salt Office"): 1.
    expect(phrased[0]!.score).toBe(Math.round(bm25.get('Salt:Harbour Log.md#chunk1')! * 3 * 1e6) / 1e6);
    expect(phrased[1]!.score).toBe(bm25.get('Salt:Salt Registry.md#chunk0'));
    expect(phrased[2]!.score).toBe(bm25.get('Salt:Weigh House.md#chunk0'));
  });

  it('counts stop words in the phrase, and in BM25 as common terms only', () => {
    const withStop = search(phraseIndex, 'carried the brine', { k: 1 });
    expect(queryTerms('carried the brine')).toEqual(['carried', 'brine']);
    expect(commonTerms('carried the brine')).toEqual(['the']);
    expect(withStop[0]!.ref).toBe('Salt:Harbour Log.md#chunk1');
    // The phrase factor (run 3 of 3) multiplies the BM25 score with the common term "the" scored.
    const common = search(phraseIndex, 'carried the brine', { k: 5, phrase: false, commonTerms: true });
    expect(withStop[0]!.score).toBe(Math.round(common.find((h) => h.ref === withStop[0]!.ref)!.score * 3 * 1e6) / 1e6);
    // Without common terms (plain BM25, phrase: false's default) "the" adds nothing: the scores of the bag of
    // content words.
    const bag = search(phraseIndex, 'brine carried', { k: 5, phrase: false });
    expect(search(phraseIndex, 'carried the brine', { k: 5, phrase: false })).toEqual(bag);
  });

  it("finds a note by its exact title or alias first (name match × 1.5 on the note's first chunk, entity prior × 1.5 on all its chunks)", () => {
    // "Salt Office" is an alias of Weigh House, and Salt Registry says "salt" in its title.
    const byName = search(phraseIndex, 'salt office', { k: 3 });
    const bag = search(phraseIndex, 'office salt', { k: 3 });
    expect(byName[0]!.ref).toBe('Salt:Weigh House.md#chunk0');
    // The alias is the whole phrase: run 2 of 2 (factor 3) × name match 1.5 × entity prior 1.5 (the alias
    // occurs in the query; a name match keeps its whole run although the run lies within the name);
    // "office salt" names no note, so it is plain BM25.
    expect(byName[0]!.score).toBe(Math.round(bag.find((h) => h.ref === 'Salt:Weigh House.md#chunk0')!.score * 6.75 * 1e6) / 1e6);
    expect(search(phraseIndex, 'Weigh House', { k: 1 }).map((h) => h.ref)).toEqual(['Salt:Weigh House.md#chunk0']);
    // A one-word name: factor 1.5 without any phrase.
    const registry = search(phraseIndex, 'Registry', { k: 1 });
    expect(registry.map((h) => h.ref)).toEqual(['Salt:Salt Registry.md#chunk0']);
  });

  it('looks only at the first 32 query terms for the phrase', () => {
    const filler = Array.from({ length: 32 }, (_, i) => `zz${i}`).join(' ');
    const late = search(phraseIndex, `${filler} brine office ledger`, { k: 1 });
    const bag = search(phraseIndex, 'office brine ledger', { k: 1 });
    expect(PHRASE_MAX_TERMS).toBe(32);
    // The phrase starts at term 33: no factor, so BM25's order and score.
    expect(late).toEqual(bag);
    const early = search(phraseIndex, `brine office ledger ${filler}`, { k: 5 }).find((h) => h.ref === 'Salt:Harbour Log.md#chunk1')!;
    // run 3 of 32 phrase terms: 1 + 2 × 2 / 31.
    expect(early.score).toBe(Math.round(search(phraseIndex, 'office brine ledger', { k: 5 }).find((h) => h.ref === early.ref)!.score * (1 + 4 / 31) * 1e6) / 1e6);
  });

  it('answers a 20,000-word query (hostile input) with the same hits as its distinct terms', () => {
    const huge = Array.from({ length: 20_000 }, (_, i) => ['brine', 'the', 'office', 'ledger'][i % 4]).join(' ');
    expect(search(phraseIndex, huge, { k: 3 }).map((h) => h.ref)).toEqual(search(phraseIndex, 'brine the office ledger', { k: 3 }).map((h) => h.ref));
  });

  it('returns the same top k as re-ranking every hit (the early stop is exact)', () => {
    for (const q of ['brine office ledger', 'the office keeps a ledger', 'salt office brine', 'harbor salt guild charter the', 'Compact books piers']) {
      for (const ix of [phraseIndex, index]) {
        const all = search(ix, q, { k: 1000 });
        for (const k of [1, 2, 3, 5]) expect(search(ix, q, { k })).toEqual(all.slice(0, k));
      }
    }
  });
});

describe('longestPhraseRun', () => {
  it('finds the longest run of consecutive query terms inside one text, after folding', () => {
    expect(longestPhraseRun(['soliton', 'drive', 'transport'], ['The Soliton Drive hums.'])).toBe(2);
    expect(longestPhraseRun(['framgang', 'charter', 'binds'], ['the FRAMGÅNG charter; binds'])).toBe(3);
    expect(longestPhraseRun(['a', 'b'], ['b a', 'x'])).toBe(1);
    expect(longestPhraseRun(['a', 'b'], ['c d'])).toBe(0);
  });

  it('never lets a run span two texts', () => {
    expect(longestPhraseRun(['harbour', 'log'], ['the harbour', 'log of ships'])).toBe(1);
  });

  it('handles repeated terms in the phrase', () => {
    expect(longestPhraseRun(['the', 'the', 'end'], ['the the end'])).toBe(3);
    expect(longestPhraseRun(['the', 'the', 'end'], ['the end'])).toBe(2);
  });
});

describe('phraseFactor', () => {
  it('is 1 for one-term phrases and runs under 2, and 1 + 2 × (run − 1) / (n − 1) otherwise', () => {
    expect([phraseFactor(1, 1), phraseFactor(0, 4), phraseFactor(1, 4), phraseFactor(2, 4), phraseFactor(4, 4), phraseFactor(2, 2)]).toEqual([1, 1, 1, 1 + 2 / 3, 3, 3]);
    expect(PHRASE_WEIGHT).toBe(2);
  });
});

describe('phraseIsName', () => {
  it('matches a whole title or alias after folding, not a part of it', () => {
    expect(phraseIsName(['soliton', 'drive'], ['Soliton Drive'])).toBe(true);
    expect(phraseIsName(['framgang', 'charter'], ['Other', 'Framgång-Charter'])).toBe(true);
    expect(phraseIsName(['drive'], ['Soliton Drive'])).toBe(false);
    expect(phraseIsName(['soliton', 'drive', 'x'], ['Soliton Drive'])).toBe(false);
    expect(phraseIsName([], [''])).toBe(false);
  });
});

// lore-fixtures/CommonTermLore: Sentience Rebellion has "sentience" in its title (every chunk carries it in
// the title field) and its text; Machine Rights says "Sentience is not a property …" in its Tests section;
// Foundry Towns says "is not" without "sentience".
describe('search: common terms (stop words score only chunks a content term found)', () => {
  let common: VaultIndex;
  beforeAll(async () => {
    common = await indexVault(join(FIXTURES, 'CommonTermLore'), { persist: false });
  });

  it('finds the paragraph a fragment with stop words was cut from, above the note whose title holds its one rare word', () => {
    const hits = search(common, 'Sentience is not', { k: 10 });
    // Only chunks with "sentience" are hits: Foundry Towns' "the guild is not answerable" matches "is not" alone.
    expect(hits.map((h) => [h.ref, h.line_start, h.line_end])).toEqual([
      ['CommonTermLore:Machine Rights.md#chunk1', 5, 7],
      ['CommonTermLore:Sentience Rebellion.md#chunk0', 1, 3],
      ['CommonTermLore:Sentience Rebellion.md#chunk1', 5, 7],
      ['CommonTermLore:Sentience Rebellion.md#chunk2', 9, 11],
    ]);
    // Machine Rights' score is its BM25 over "sentience", "is" and "not" (× 3 matched terms) times the phrase
    // factor of a run of 3 of 3; without the common terms it was below the title note's chunks.
    const bm25 = search(common, 'Sentience is not', { k: 10, phrase: false, commonTerms: true });
    expect(hits[0]!.score).toBe(Math.round(bm25.find((h) => h.ref === hits[0]!.ref)!.score * 3 * 1e6) / 1e6);
    const contentOnly = search(common, 'Sentience is not', { k: 10, phrase: false });
    expect(contentOnly.map((h) => h.ref)[0]).toBe('CommonTermLore:Sentience Rebellion.md#chunk0');
    expect(contentOnly.find((h) => h.ref === hits[0]!.ref)!.score * 3).toBeLessThan(contentOnly[0]!.score);
  });

  it('leaves plain BM25 (phrase: false) over the content terms, and a query of stop words only as it was', () => {
    expect(search(common, 'Sentience is not', { k: 10, phrase: false })).toEqual(search(common, 'sentience', { k: 10, phrase: false }));
    expect(commonTerms('is not')).toEqual([]);
    expect(queryTerms('is not')).toEqual(['is', 'not']);
    // Both chunks say "is not" (phrase factor 3); Machine Rights' introduction has "is" alone.
    expect(search(common, 'is not', { k: 3 }).map((h) => h.ref)).toEqual(['CommonTermLore:Foundry Towns.md#chunk1', 'CommonTermLore:Machine Rights.md#chunk1', 'CommonTermLore:Machine Rights.md#chunk0']);
  });
});

// lore-fixtures/NameLookupLore: Vellacourt.md has no H1 (an epigraph, then the introduction naming
// [[Vellacourt]]), and a section headed "A Life in Vellacourt" that says the name twice more.
describe('search: a name lookup finds the named note at its introduction', () => {
  let names: VaultIndex;
  beforeAll(async () => {
    names = await indexVault(join(FIXTURES, 'NameLookupLore'), { persist: false });
  });

  it("ranks the note's first chunk before its other chunks, with the best of their scores", () => {
    const hits = search(names, 'Vellacourt', { k: 4 });
    expect(hits.map((h) => [h.ref, h.line_start, h.line_end, h.heading_path])).toEqual([
      ['NameLookupLore:Vellacourt.md#chunk0', 1, 3, []],
      ['NameLookupLore:Vellacourt.md#chunk1', 5, 7, ['A Life in Vellacourt']],
      ['NameLookupLore:Vellacourt.md#chunk2', 9, 11, ['Trade']],
      ['NameLookupLore:River Courts.md#chunk0', 1, 3, ['River Courts']],
    ]);
    // The section's heading field holds the name: by its own score (name match × 1.5, prior × 1.5) the
    // introduction was second; it now takes the section's score.
    expect(hits[0]!.score).toBe(hits[1]!.score);
    const bm25 = new Map(search(names, 'Vellacourt', { k: 4, phrase: false }).map((h) => [h.ref, h.score]));
    expect(bm25.get('NameLookupLore:Vellacourt.md#chunk1')! * 1.5).toBeGreaterThan(bm25.get('NameLookupLore:Vellacourt.md#chunk0')! * 1.5 * 1.5);
    // k = 1: the introduction enters although its own score is below the section's.
    expect(search(names, 'vellacourt', { k: 1 }).map((h) => h.ref)).toEqual(['NameLookupLore:Vellacourt.md#chunk0']);
  });

  it('applies to whole-name queries only, and not to a first chunk the corpus withholds', () => {
    expect(search(names, 'Vellacourt toll', { k: 2 }).map((h) => h.ref)).toEqual(['NameLookupLore:Vellacourt.md#chunk1', 'NameLookupLore:Vellacourt.md#chunk0']);
    const withheld = searchCorpus(names.notes.map((n) => n.path), [['Vellacourt.md', [0]]]);
    expect(search(names, 'Vellacourt', { k: 2, corpus: withheld }).map((h) => h.ref)).toEqual(['NameLookupLore:Vellacourt.md#chunk1', 'NameLookupLore:Vellacourt.md#chunk2']);
  });
});

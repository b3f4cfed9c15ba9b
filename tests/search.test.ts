import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { search } from '../src/search/search.js';
import { processTerm, queryTerms, tokenize } from '../src/search/tokenize.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

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
    expect(search(index, 'the Framgång charter of the', S)).toEqual(search(index, 'Framgång charter', S));
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
    expect(tokenize("Kel'dar’s [[Cold Wake]] #tag C# 2892-2895")).toEqual(['Keldars', 'Cold', 'Wake', 'tag', 'C', '2892', '2895']);
  });
});

describe('processTerm', () => {
  it('lower-cases and strips combining marks', () => {
    expect(['Framgång', 'CAFÉ', 'Ärla', 'naïve'].map(processTerm)).toEqual(['framgang', 'cafe', 'arla', 'naive']);
  });
});

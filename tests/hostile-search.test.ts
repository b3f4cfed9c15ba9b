// Hostile search (phrase re-rank, src/search/search.ts + phrase.ts): findings of the search breaker.
import { describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { search } from '../src/search/search.js';
import { makeVault } from './helpers/temp-vault.js';

const scores = (hits: { ref: string; score: number }[]) => hits.map((h) => [h.ref, h.score]);

describe('search', () => {
  it('scores a chunk by its own headings, whatever other chunks with the same text were examined first', async () => {
    // X.md#chunk1 and Y.md#chunk2 have the same text ("### r …"); X's heading path is ["p\u0001q", "r"],
    // Y's is ["p", "q", "r"]. Only X has "p q" consecutively in one heading. Y's chunk has no run of two
    // query terms, so its score is its plain BM25 score — with or without other notes in the search.
    const root = makeVault('Headings', {
      'X.md': '# p\u0001q\n\n### r\n\nbody text here\n',
      'Y.md': '# p\n\n## q\n\n### r\n\nbody text here\n',
    });
    const index = await indexVault(root, { persist: false });
    expect(scores(search(index, 'p q body', { k: 10, phrase: false, paths: ['Y.md'] }))[0]).toEqual(['Headings:Y.md#chunk2', 6.50487]);
    expect(scores(search(index, 'p q body', { k: 10, paths: ['Y.md'] }))[0]).toEqual(['Headings:Y.md#chunk2', 6.50487]);
    expect(scores(search(index, 'p q body', { k: 10 })).find(([ref]) => ref === 'Headings:Y.md#chunk2')).toEqual(['Headings:Y.md#chunk2', 6.50487]);
  });

  it('gives the name-match factor only when the whole query is the name, also past the first 32 query terms', async () => {
    const alias = Array.from({ length: 32 }, (_, i) => `w${i}`).join(' ');
    const root = makeVault('Names', { 'Long.md': `---\naliases: ["${alias}"]\n---\nBody about ${alias}.\n` });
    const index = await indexVault(root, { persist: false });
    expect(scores(search(index, alias, { k: 1, phrase: false }))).toEqual([['Names:Long.md#chunk0', 1546.578822]]);
    // The alias itself: full phrase (× 3), name match (× 1.5) and entity prior (× 1.5, the alias occurs in the query).
    expect(scores(search(index, alias, { k: 1 }))).toEqual([['Names:Long.md#chunk0', 10439.407049]]);
    // One more word: the query is no longer the alias, so no name match; the entity prior stays (the whole
    // alias still occurs in the query, past term 32 too: × 1.5), and the phrase of its first 32 terms is the
    // alias itself — a run within a name the query names, the prior's evidence, not a phrase (× 1).
    expect(scores(search(index, `${alias} extra`, { k: 1 }))).toEqual([['Names:Long.md#chunk0', 2319.868233]]);
  });

  it('gives the same first hits whatever k when more than 2,000 chunks match (the re-rank pool does not depend on k)', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2100; i++) files[`n${String(i).padStart(4, '0')}.md`] = 'beta gamma alpha\n';
    files['zlong.md'] = `alpha beta ${Array.from({ length: 60 }, (_, i) => `filler${i}`).join(' ')}\n`;
    const index = await indexVault(makeVault('Pool', files), { persist: false });
    const all = search(index, 'alpha beta', { k: 100_000 });
    expect(all).toHaveLength(2101);
    // zlong.md is last by BM25 (longest chunk) — outside the pool, so it keeps its BM25 score and stays last.
    expect(all[0]!.ref).toBe('Pool:n0000.md#chunk0');
    expect(all[2100]!.ref).toBe('Pool:zlong.md#chunk0');
    for (const k of [1, 10, 100, 200, 2000, 2101]) expect(search(index, 'alpha beta', { k })).toEqual(all.slice(0, k));
    // Nor on the filters: confined to zlong.md, it keeps the score it has among all 2,101 hits.
    expect(search(index, 'alpha beta', { k: 1, paths: ['zlong.md'] })).toEqual([all[2100]]);
    expect(search(index, 'alpha beta', { k: 1, prefixes: ['zlong.md'] })).toEqual([all[2100]]);
  });
});

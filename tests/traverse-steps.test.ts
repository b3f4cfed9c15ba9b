/** The named steps of traverse that carry their own logic (the walk as a whole is in traverse.test.ts). */
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { compilePolicy } from '../src/policy/index.js';
import { coordinationNeeded, relevanceTables, walkQueries } from '../src/traversal/traverse.js';
import type { CompiledPolicy } from '../src/policy/index.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

let index: VaultIndex;
let compiled: CompiledPolicy;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
  compiled = compilePolicy({
    max_link_depth: 1,
    allowed_prefixes: ['World/Pre-Elysium/', 'World/Post-Elysium/'],
    required_seed_refs: ['World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md', 'World/Post-Elysium/index.md'],
    follow_link_classes: ['wikilink'],
    stop_conditions: [],
  }, { index });
});

describe('walkQueries', () => {
  it('drops blanks and repeats, keeping the first label', () => {
    const q = walkQueries(index, compiled, [' blackout ', '', { text: 'blackout', used_for: 'second' }, { text: 'rescue', used_for: 'req[0]' }]);
    expect(q).toEqual({ queries: ['blackout', 'rescue'], labels: new Map([['rescue', 'req[0]']]), source: 'given' });
  });

  it('falls back to the seed titles, an index note giving its folder name', () => {
    expect(walkQueries(index, compiled, [])).toEqual({ queries: ['Meridian Compact', 'Post-Elysium'], labels: new Map(), source: 'seed_titles' });
  });
});

describe('relevanceTables', () => {
  it('scores the best chunk of each query 1 and never a refused note', () => {
    const rel = relevanceTables(index, compiled, ['Meridian Compact']);
    expect(Math.max(...rel.note.values())).toBe(1);
    expect([...rel.note.keys()].every((p) => p.startsWith('World/Pre-Elysium/') || p.startsWith('World/Post-Elysium/'))).toBe(true);
    for (const [key, v] of rel.chunk) expect(v.rel).toBeLessThanOrEqual(rel.note.get(key.split('#')[0]!)!);
  });

  it('does not normalise a one-word match up to 1: coordination scales a chunk by the query terms it holds', () => {
    const H = 'World/Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md';
    // "zeppelin" is in no note: the best chunk of "Halcyon zeppelin" holds one of its two terms (½).
    const weak = relevanceTables(index, compiled, ['Halcyon zeppelin']);
    expect([weak.chunk.get(`${H}#0`), weak.chunk.get(`${H}#1`), weak.note.get(H)]).toEqual([
      { rel: 0.5, query: 'Halcyon zeppelin' }, { rel: 0.456507, query: 'Halcyon zeppelin' }, 0.5,
    ]);
    // The one-term query needs one term: the same chunks count in full.
    const full = relevanceTables(index, compiled, ['Halcyon']);
    expect([full.chunk.get(`${H}#0`)?.rel, full.chunk.get(`${H}#1`)?.rel, full.note.get(H)]).toEqual([1, 0.913014, 1]);
  });
});

describe('coordinationNeeded', () => {
  it('asks for two distinct terms, or a fifth of a long query, never more than the query has', () => {
    expect([1, 2, 3, 10, 11, 16, 21].map(coordinationNeeded)).toEqual([1, 2, 2, 2, 3, 4, 5]);
  });
});

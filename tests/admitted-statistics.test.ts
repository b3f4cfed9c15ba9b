/**
 * Traversal (and so `retrieve`, which walks with it) scores with BM25 statistics from the notes the policy
 * admits only: a word that also occurs in a hidden or out-of-scope note changes no relevance, no excerpt
 * choice and no walk order. Oracle: the same walk over a vault without those notes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { compilePolicy } from '../src/policy/index.js';
import { relevanceTables, traverse } from '../src/traversal/traverse.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { makeVault } from './helpers/temp-vault.js';

// One readable note with two chunks: "amber" is dense in the first, "cobalt" alone in the second. With
// admitted statistics both words have the same document frequency (1); the hidden note and the
// out-of-scope note make "amber" common, which would lower its idf and flip the chunk order.
const READABLE = [
  '# Readable',
  '',
  'The amber ledger, amber light and an amber seal rest at the pier. See [[Dock]].',
  '',
  '## Ferry',
  '',
  'A cobalt ferry crosses at dawn.',
  '',
].join('\n');
const DOCK = '# Dock\n\nThe dock keeps one cobalt lantern and an amber rope.\n';
const HIDDEN = '# Hidden Truth\n\nThe amber ledger was forged. Amber, amber, amber.\n';
const OUTSIDE = '# Outside\n\nAmber everywhere: amber walls, amber roofs, amber tides.\n';
const FILES = { 'Lore/Readable.md': READABLE, 'Lore/Dock.md': DOCK, 'Lore/Hidden Truth.md': HIDDEN, 'Elsewhere/Outside.md': OUTSIDE };
const ORACLE = { 'Lore/Readable.md': READABLE, 'Lore/Dock.md': DOCK };

const POLICY: TraversalPolicy = {
  max_link_depth: 1,
  allowed_prefixes: ['Lore/'],
  required_seed_refs: ['Lore/Readable.md'],
  follow_link_classes: ['wikilink'],
  stop_conditions: [],
};
const PACKET = { hidden_context_audit: { omitted_context_refs: ['Probe:Lore/Hidden Truth.md'] } };
const QUERIES = ['amber cobalt', 'cobalt', 'amber'];

let withHidden: VaultIndex;
let oracle: VaultIndex;
beforeAll(async () => {
  withHidden = await indexVault(makeVault('Probe', FILES), { persist: false });
  oracle = await indexVault(makeVault('Probe', ORACLE), { persist: false });
});

const compiledFor = (index: VaultIndex) => compilePolicy(POLICY, { index, packet: PACKET });
const tables = (index: VaultIndex, queries: string[]) => {
  const rel = relevanceTables(index, compiledFor(index), queries);
  return { chunk: [...rel.chunk].sort(), note: [...rel.note].sort() };
};

describe('admitted-set statistics in traversal', () => {
  it('gives every admitted chunk the relevance an index of the admitted notes alone gives it', () => {
    // Readable's chunks each hold one of the two query terms (amber, cobalt): coordination ½ halves their
    // score ratios (0.332445 → 0.166223, 0.27736 → 0.13868); the dock holds both.
    expect(tables(withHidden, ['amber cobalt'])).toEqual({
      chunk: [
        ['Lore/Dock.md#0', { rel: 1, query: 'amber cobalt' }],
        ['Lore/Readable.md#0', { rel: 0.166223, query: 'amber cobalt' }],
        ['Lore/Readable.md#1', { rel: 0.13868, query: 'amber cobalt' }],
      ],
      note: [['Lore/Dock.md', 1], ['Lore/Readable.md', 0.166223]],
    });
    for (const q of QUERIES) expect(tables(withHidden, [q])).toEqual(tables(oracle, [q]));
  });

  it('walks, excerpts and decides exactly as over the admitted notes alone', () => {
    const got = traverse(withHidden, compiledFor(withHidden), { queries: ['amber cobalt'] });
    const want = traverse(oracle, compiledFor(oracle), { queries: ['amber cobalt'] });
    expect(got.source_excerpts).toEqual(want.source_excerpts);
    expect(got.research_trace).toEqual(want.research_trace);
    expect(got.decisions).toEqual(want.decisions);
    // The amber chunk is the seed's excerpt (the hidden and outside notes' "amber" would have made it the cobalt one).
    expect(got.source_excerpts.map((e) => e.source_ref)).toEqual(['Probe:Lore/Readable.md#chunk0', 'Probe:Lore/Dock.md#chunk0']);
    expect(got.decisions.map((d) => [d.to, d.outcome, d.relevance])).toEqual([['Probe:Lore/Dock.md', 'followed', 1]]);
  });
});

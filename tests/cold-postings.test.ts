import { describe, expect, it } from 'vitest';
import { parseBatch } from '../src/indexer/parse-pool.js';
import { ColdPostings, PostingsBuilder, encodeShard, packTokens } from '../src/search/postings.js';
import { noteTokens } from '../src/search/tokenize.js';
import { scanVault } from '../src/vault/scan.js';
import { parseNote } from '../src/notes/parse.js';
import { AETHERIA, FIXTURE_VAULT, hasShared } from './helpers/shared.js';

/** Packed token batches of a vault, `size` notes each, in path order. */
async function packedBatches(root: string, size: number) {
  const scan = await scanVault(root, {});
  const jobs = scan.files.map((f) => ({ path: f.path, sha256: f.sha256, bytes: f.bytes! }));
  const out = [];
  for (let i = 0; i < jobs.length; i += size) out.push(parseBatch(jobs.slice(i, i + size), {}).tokens);
  return { out, notes: scan.files.length };
}

describe('ColdPostings', () => {
  it('builds the same term shards, byte for byte, as PostingsBuilder from the same notes, whatever the batch size', async () => {
    const vault = hasShared ? AETHERIA : FIXTURE_VAULT;
    const reference = new PostingsBuilder();
    const one = await packedBatches(vault, 1_000_000);
    reference.addPacked(one.out[0]!, 0);
    const want = reference.buildAll();
    for (const size of [1, 7, 64]) {
      const { out } = await packedBatches(vault, size);
      const cold = new ColdPostings();
      for (const b of out) cold.add(b);
      expect(cold.keys()).toEqual([...want.keys()]);
      for (const key of cold.keys()) {
        const bytes = encodeShard(want.get(key)!);
        expect(encodeShard(cold.shard(key)).equals(bytes)).toBe(true);
        expect(cold.encode(key).equals(bytes)).toBe(true); // the persisted form, laid out in place
        cold.release(key);
      }
      expect(cold.count).toBe(reference.lengths.size);
      const lengths = cold.lengths();
      expect(lengths.length).toBe(cold.count * 4);
      for (const [id, l] of reference.lengths) expect([...lengths.subarray(id * 4, id * 4 + 4)]).toEqual(l);
    }
  });

  it('numbers documents across batches and sums field lengths: two notes of 1 and 2 chunks', () => {
    const note = (path: string, body: string) => {
      const p = parseNote(path, new TextEncoder().encode(body), { config: {}, sha256: '0'.repeat(64) });
      return packTokens([noteTokens(p.note, p.chunks)]);
    };
    const cold = new ColdPostings();
    cold.add(note('a.md', 'zeta zeta\n'));
    cold.add(note('b.md', '# One\n\nzeta\n\n# Two\n\nzeta omega\n'));
    expect(cold.count).toBe(3);
    const z = cold.shard('z');
    expect(z.terms).toEqual(['zeta']);
    // text field (3): docs 0 (tf 2), 1 and 2 (tf 1 each), in doc order
    expect([...z.docs.subarray(z.offsets[3]!, z.offsets[4]!)]).toEqual([0, 1, 2]);
    expect([...z.tfs.subarray(z.offsets[3]!, z.offsets[4]!)]).toEqual([2, 1, 1]);
    expect(cold.keys()).toEqual(['a', 'b', 'o', 't', 'z']); // titles a, b; headings one, two; omega, zeta
    expect(cold.sums[3]).toBe(1 + 2 + 3); // distinct text terms per chunk (MiniSearch's field length): zeta; one zeta; two zeta omega
    cold.release('z');
    expect(cold.shard('z').docs.length).toBe(0);
  });

  it('keeps large doc ids and term frequencies exact (multi-byte varints): doc 20000 with tf 300', () => {
    const cold = new ColdPostings();
    // 20,000 one-chunk notes without the term, then one with "yak" 300 times, then one with it once.
    cold.add({ terms: ['x'], postings: new Uint32Array([0, 19_999, 3, 1]), lengths: new Uint32Array(20_000 * 4), chunkCounts: Array(20_000).fill(1) });
    cold.add({ terms: ['yak'], postings: new Uint32Array([0, 0, 3, 300, 0, 1, 3, 1]), lengths: new Uint32Array([0, 0, 0, 1, 0, 0, 0, 1]), chunkCounts: [1, 1] });
    const y = cold.shard('y');
    expect(y.terms).toEqual(['yak']);
    expect([...y.docs]).toEqual([20_000, 20_001]);
    expect([...y.tfs]).toEqual([300, 1]);
    expect([...cold.shard('x').docs]).toEqual([19_999]);
    expect(cold.count).toBe(20_002);
  });

  it('keeps a run that spans several 1 MiB pages intact: 700,000 chunks with "qi" (tf 1, then 2 in the last)', () => {
    const n = 700_000;
    const postings = new Uint32Array(n * 4);
    for (let d = 0; d < n; d++) postings.set([0, d, 3, d === n - 1 ? 2 : 1], d * 4);
    const cold = new ColdPostings();
    cold.add({ terms: ['qi'], postings, lengths: new Uint32Array(n * 4), chunkCounts: [n] });
    const q = cold.shard('q');
    expect(q.docs.length).toBe(n);
    expect(q.docs[0]).toBe(0);
    expect(q.docs[n - 1]).toBe(n - 1);
    expect(q.docs.every((d, i) => d === i)).toBe(true);
    expect(q.tfs[n - 2]).toBe(1);
    expect(q.tfs[n - 1]).toBe(2);
  });
});

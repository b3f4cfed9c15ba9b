/**
 * `search(index, q, { corpus })`: BM25 statistics from an admitted set of notes only, so a score cannot
 * tell whether a note outside the set contains a word. Oracle: an index built without those notes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexVault } from '../src/indexer/build.js';
import { search, searchCorpus, type SearchHit } from '../src/search/search.js';
import type { VaultIndex } from '../src/types.js';
import { makeVault } from './helpers/temp-vault.js';

const READABLE = '# Readable\n\nThe quartz lantern, the amber ledger and the cobalt ferry share one pier.\n\n## Tides\n\nAmber light on the quartz pier at low tide.\n';
const OTHER = '# Other Pier\n\nA ferry crosses the bay twice a day.\n';
const HIDDEN = '# Hidden Truth\n\nThe amber ledger was forged. Amber, amber, amber.\n\n## More\n\nAmbergris and quartzite.\n';

const admitted = ['Readable.md', 'Other Pier.md'];
const indexDirs: string[] = [];
const indexDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'lt-corpus-idx-'));
  indexDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of indexDirs) rmSync(d, { recursive: true, force: true });
});
const scores = (hits: SearchHit[]) => hits.map((h) => [h.ref, h.score, h.line_start, h.line_end]);

describe('search: corpus option', () => {
  let withHidden: VaultIndex;
  let without: VaultIndex;
  beforeAll(async () => {
    withHidden = await indexVault(makeVault('Corpus', { 'Readable.md': READABLE, 'Other Pier.md': OTHER, 'Hidden Truth.md': HIDDEN }), { indexDir: indexDir() });
    without = await indexVault(makeVault('Corpus', { 'Readable.md': READABLE, 'Other Pier.md': OTHER }), { indexDir: indexDir() });
  });

  it('leaks through the statistics without it: a filter alone scores the readable chunk differently', () => {
    const only = (q: string) => search(withHidden, q, { k: 1, paths: admitted })[0]!.score;
    const alone = (q: string) => search(without, q, { k: 1 })[0]!.score;
    const inCorpus = (q: string) => search(withHidden, q, { k: 1, corpus: admitted })[0]!.score;
    expect(only('amber')).not.toBe(alone('amber'));
    expect(inCorpus('amber')).toBe(alone('amber'));
    // same chunk, probe words: only their ratio to a word the hidden note lacks could leak, and it no longer does
    expect(inCorpus('amber') / inCorpus('cobalt')).toBe(alone('amber') / alone('cobalt'));
  });

  it('scores the same readable chunk exactly as an index without the hidden note, for each probe word', () => {
    for (const q of ['quartz', 'amber', 'cobalt', 'amber ledger', 'quartz pier tide', 'ferry']) {
      const got = search(withHidden, q, { k: 10, corpus: admitted });
      expect(got.length).toBeGreaterThan(0);
      expect(scores(got)).toEqual(scores(search(without, q, { k: 10 })));
    }
  });

  it('keeps prefix and fuzzy expansion inside the corpus (no hidden vocabulary, same scores)', () => {
    for (const q of ['amb', 'quar', 'ambergris', 'quartzite']) {
      expect(scores(search(withHidden, q, { k: 10, corpus: admitted }))).toEqual(scores(search(without, q, { k: 10 })));
    }
    expect(search(withHidden, 'ambergris', { k: 10, corpus: admitted }).map((h) => h.path)).not.toContain('Hidden Truth.md');
  });

  it('never returns a note outside the corpus, and filters inside it', () => {
    expect(search(withHidden, 'amber forged', { k: 10, corpus: admitted }).map((h) => h.path)).toEqual(['Readable.md', 'Readable.md']);
    expect(search(withHidden, 'ferry', { k: 10, corpus: admitted, paths: ['Other Pier.md'] }).map((h) => h.ref)).toEqual(['Corpus:Other Pier.md#chunk0']);
    expect(search(withHidden, 'amber', { k: 10, corpus: [] })).toEqual([]);
    expect(search(withHidden, 'amber', { k: 10, corpus: ['Nope.md'] })).toEqual([]);
  });

  it('answers each of several corpora from its own statistics (cached per set, not mixed up)', () => {
    const all = ['Readable.md', 'Other Pier.md', 'Hidden Truth.md'];
    for (let i = 0; i < 3; i++) {
      expect(scores(search(withHidden, 'amber', { k: 10, corpus: admitted }))).toEqual(scores(search(without, 'amber', { k: 10 })));
      expect(scores(search(withHidden, 'amber', { k: 10, corpus: all }))).toEqual(scores(search(withHidden, 'amber', { k: 10 })));
      expect(scores(search(withHidden, 'amber', { k: 10, corpus: [...admitted].reverse() }))).toEqual(scores(search(without, 'amber', { k: 10 })));
    }
  });

  it('stays exact on an incrementally updated index (delta shards, removed doc ids)', async () => {
    const files = { 'Readable.md': READABLE, 'Other Pier.md': OTHER, 'Hidden Truth.md': HIDDEN };
    const vault = makeVault('Corpus', files);
    const dir = indexDir();
    await indexVault(vault, { indexDir: dir });
    const changed = OTHER + '\nAn amber buoy marks the quartz channel.\n';
    writeFileSync(join(vault, 'Other Pier.md'), changed);
    const updated = await indexVault(vault, { indexDir: dir });
    const fresh = await indexVault(makeVault('Corpus', { 'Readable.md': READABLE, 'Other Pier.md': changed }), { indexDir: indexDir() });
    for (const q of ['amber', 'quartz channel', 'amb']) {
      expect(scores(search(updated, q, { k: 10, corpus: admitted }))).toEqual(scores(search(fresh, q, { k: 10 })));
    }
  });

  it('leaves withheld chunks out as if their section were not in the note (a prepared corpus)', async () => {
    const readableHead = READABLE.slice(0, READABLE.indexOf('## Tides'));
    const cut = await indexVault(makeVault('Corpus', { 'Readable.md': readableHead, 'Other Pier.md': OTHER }), { indexDir: indexDir() });
    const corpus = searchCorpus(admitted, [['Readable.md', [1]]]);
    expect(corpus.key).toBe('[["Other Pier.md","Readable.md"],[["Readable.md",[1]]]]');
    for (const q of ['quartz', 'amber', 'pier', 'quartz pier tide', 'amb', 'ferry']) {
      expect(scores(search(withHidden, q, { k: 10, corpus }))).toEqual(scores(search(cut, q, { k: 10 })));
    }
    expect(search(withHidden, 'tide', { k: 10, corpus })).toEqual([]);
    expect(search(withHidden, 'low tide', { k: 10, corpus: searchCorpus(admitted) }).map((h) => h.ref)).toEqual(['Corpus:Readable.md#chunk1']);
    // every chunk of a note withheld: the note is out of the corpus
    expect(search(withHidden, 'quartz', { k: 10, corpus: searchCorpus(admitted, [['Readable.md', [0, 1]]]) })).toEqual([]);
  });
});

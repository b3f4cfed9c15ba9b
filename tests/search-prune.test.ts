/**
 * Exact top-k pruning of `search()` (src/search/maxscore.ts): the pruned search returns exactly what
 * scoring every matching chunk returns (`exhaustiveSearch`) — same refs, same order, same scores — for
 * seeded random queries, k, filters and corpora, on a generated vault large enough that the phrase
 * re-rank pool (PHRASE_CANDIDATES) fills, on FixtureLore and (when present) on AetheriaLore.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexVault } from '../src/indexer/build.js';
import { exhaustiveSearch, PHRASE_CANDIDATES, search, searchCorpus, type SearchOptions } from '../src/search/search.js';
import { gallop, kthLargest } from '../src/search/maxscore.js';
import { STOP_WORDS } from '../src/search/tokenize.js';
import type { VaultIndex } from '../src/types.js';
import { AETHERIA, FIXTURE_VAULT, FIXTURES, sharedNotice } from './helpers/shared.js';
import { makeVault } from './helpers/temp-vault.js';
import { prng } from './helpers/prng.js';

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

const CONTENT = ['drive', 'soliton', 'harbor', 'ledger', 'storm', 'pilot', 'guild', 'ember', 'relay', 'vault', 'tide', 'crown', 'signal', 'orbit', 'ash'];
const STOPS = ['the', 'of', 'and', 'a', 'in', 'is', 'not', 'that', 'with', 'for'];
const NAMES = ['Soliton Drive', 'Ember Guild', 'Storm Pilot', 'Tide Relay', 'Crown Signal'];

/**
 * A generated vault of 720 notes × 3 sections (2,160 chunks, more than PHRASE_CANDIDATES): skewed word
 * frequencies (stop words in most chunks, some content words rare), titles and aliases that repeat names,
 * so queries hit thousands of chunks, phrases, name matches and entity priors.
 */
function generatedFiles(): Record<string, string> {
  const rand = prng(11);
  const files: Record<string, string> = {};
  const words = (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = rand();
      out.push(r < 0.45 ? pick(rand, STOPS) : r < 0.9 ? CONTENT[Math.floor(rand() * rand() * CONTENT.length)]! : pick(rand, NAMES));
    }
    return out.join(' ');
  };
  for (let i = 0; i < 720; i++) {
    const title = i % 9 === 0 ? `${pick(rand, NAMES)} ${i}` : `Note ${i} ${pick(rand, CONTENT)}`;
    const alias = i % 5 === 0 ? `aliases: [${pick(rand, NAMES)}]\n` : '';
    const body = [0, 1, 2].map((s) => `## ${s === 0 ? pick(rand, NAMES) : words(2)}\n\n${words(4 + Math.floor(rand() * 30))}.\n`).join('\n');
    files[`${['Alpha', 'Beta', 'Gamma'][i % 3]}/${title}.md`] = `---\n${alias}tags: [t${i % 4}]\n---\n# ${title}\n\n${words(3)}\n\n${body}`;
  }
  return files;
}

/** Seeded queries: runs of words cut from the vault's own chunk texts (stop words kept), and names. */
function queriesOf(index: VaultIndex, count: number, seed: number): string[] {
  const rand = prng(seed);
  const out: string[] = [];
  const chunks = index.chunks.filter((c) => c.text.trim().length > 0);
  while (out.length < count) {
    if (rand() < 0.15) {
      out.push(pick(rand, index.notes).title);
      continue;
    }
    const tokens = pick(rand, chunks).text.split(/\s+/).filter((t) => t.length > 0);
    if (tokens.length === 0) continue;
    const n = 1 + Math.floor(rand() * 6);
    const at = Math.floor(rand() * Math.max(1, tokens.length - n));
    out.push(tokens.slice(at, at + n).join(' '));
  }
  return out;
}

/** Random options: k, phrase on or off (off: common terms scored for an even k), and sometimes a prefix, a path set or a corpus. */
function optionsOf(index: VaultIndex, rand: () => number): SearchOptions {
  const o: SearchOptions = { k: pick(rand, [1, 2, 5, 10, 40]) };
  if (rand() < 0.25) o.phrase = false;
  // Plain BM25 with the common terms scored (the scores the re-rank multiplies), without another draw.
  if (o.phrase === false && o.k! % 2 === 0) o.commonTerms = true;
  const r = rand();
  const paths = index.notes.map((n) => n.path);
  if (r < 0.15) o.prefixes = [paths[Math.floor(rand() * paths.length)]!.split('/')[0]! + '/'];
  else if (r < 0.3) o.paths = paths.filter(() => rand() < 0.3);
  else if (r < 0.45) o.corpus = searchCorpus(paths.filter(() => rand() < 0.8));
  return o;
}

/** Every query with its options, pruned and exhaustive; returns the number of hits compared. */
function compareAll(index: VaultIndex, queries: readonly string[], seed: number): number {
  const rand = prng(seed);
  let hits = 0;
  for (const q of queries) {
    const o = optionsOf(index, rand);
    const pruned = search(index, q, o);
    const full = exhaustiveSearch(index, q, o);
    expect({ q, o: { ...o, corpus: undefined, paths: undefined }, hits: pruned }).toEqual({ q, o: { ...o, corpus: undefined, paths: undefined }, hits: full });
    hits += pruned.length;
  }
  return hits;
}

describe('kthLargest', () => {
  it('is the k-th largest value of any array (−∞ when shorter than k)', () => {
    const rand = prng(5);
    for (let trial = 0; trial < 300; trial++) {
      const n = Math.floor(rand() * 40);
      const values = Array.from({ length: n }, () => Math.floor(rand() * 10));
      const k = 1 + Math.floor(rand() * 45);
      const expected = k <= n ? [...values].sort((a, b) => b - a)[k - 1]! : -Infinity;
      expect(kthLargest(Float64Array.from(values), k)).toBe(expected);
    }
  });
});

describe('gallop', () => {
  it('is the first position at or after lo whose doc id is ≥ d (end when none), as a linear scan finds it', () => {
    const rand = prng(41);
    for (let trial = 0; trial < 400; trial++) {
      const n = Math.floor(rand() * 60);
      const docs = new Uint32Array(n);
      let d = 0;
      for (let i = 0; i < n; i++) docs[i] = d += 1 + Math.floor(rand() * 5);
      const lo = Math.floor(rand() * (n + 1));
      const end = lo + Math.floor(rand() * (n - lo + 1));
      const target = Math.floor(rand() * (d + 4));
      let expected = lo;
      while (expected < end && docs[expected]! < target) expected++;
      expect(gallop(docs, lo, end, target)).toBe(expected);
    }
    // Past every posting, before the first, and exactly on the last.
    const docs = Uint32Array.from([3, 9, 27, 81]);
    expect([gallop(docs, 0, 4, 100), gallop(docs, 0, 4, 0), gallop(docs, 1, 4, 81), gallop(docs, 2, 2, 1)]).toEqual([4, 0, 3, 2]);
  });
});

describe('pruned search = exhaustive search', () => {
  let generated: VaultIndex;
  let fixture: VaultIndex;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lt-prune-'));
    const vault = makeVault('PruneLore', generatedFiles());
    await indexVault(vault, { indexDir: join(dir, 'g') });
    generated = await indexVault(vault, { indexDir: join(dir, 'g') }); // warm: shards read from disk
    fixture = await indexVault(FIXTURE_VAULT, { persist: false });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on a generated vault whose queries fill the re-rank pool', () => {
    expect(generated.chunks.length).toBeGreaterThan(PHRASE_CANDIDATES);
    // The stop-word query matches more chunks than the pool holds: the pool's edge is exercised.
    expect(exhaustiveSearch(generated, 'the of and', { k: 3 }).length).toBe(3);
    const queries = [...queriesOf(generated, 260, 3), 'the of and', 'soliton drive the ledger', 'Soliton Drive', 'ember guild storm pilot tide relay'];
    expect(compareAll(generated, queries, 4)).toBeGreaterThan(1000);
  });

  it('on FixtureLore', () => {
    expect(compareAll(fixture, queriesOf(fixture, 200, 8), 9)).toBeGreaterThan(500);
  });

  it('on EntityLore, with queries that name entities (entity prior and names not counted as phrase runs)', async () => {
    const entity = await indexVault(join(FIXTURES, 'EntityLore'), { persist: false });
    const named = ['Tithe Barges levy dock charter', 'Cetacean Navigators rescue ledgers distress', 'the pod pilots and the lightsail express couriers', 'Cetacean Navigators pilot the deep routes', 'Rescue Ledgers', 'Tithe Barges'];
    expect(compareAll(entity, [...named, ...queriesOf(entity, 80, 14)], 15)).toBeGreaterThan(150);
  });

  it('on CommonTermLore, with fragments whose stop words are common terms', async () => {
    const common = await indexVault(join(FIXTURES, 'CommonTermLore'), { persist: false });
    const fragments = ['Sentience is not', 'is a standing that', 'the guild is not answerable to the river courts', 'is not'];
    expect(compareAll(common, [...fragments, ...queriesOf(common, 60, 21)], 22)).toBeGreaterThan(60);
  });

  it('with every stop word as the query and as part of one', () => {
    const rand = prng(21);
    for (const w of [...STOP_WORDS].slice(0, 40)) {
      const o = optionsOf(generated, rand);
      expect(search(generated, `${w} storm`, o)).toEqual(exhaustiveSearch(generated, `${w} storm`, o));
      expect(search(generated, w, o)).toEqual(exhaustiveSearch(generated, w, o));
    }
  });

});

/**
 * A vault of copies, as the bench scales one (byte-identical notes in folders c00/ … c11/, 2,880 chunks:
 * the re-rank pool fills with copies of the same chunks), plus the cases where one copy must not stand
 * for another: the same bytes under another file name (the title, and so the first chunk's name match
 * and phrase run, differ) and another note's bytes under a copy's file name.
 */
function copiedFiles(): Record<string, string> {
  const base = Object.entries(generatedFiles()).slice(0, 80);
  const files: Record<string, string> = {};
  for (let c = 0; c < 12; c++) for (const [path, body] of base) files[`c${String(c).padStart(2, '0')}/${path}`] = body;
  for (const [path, body] of base.slice(0, 20)) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    files[`renamed/${path.replace(/\.md$/, ' Soliton Drive.md')}`] = body;
    files[`swapped/${name}`] = base[(base.findIndex(([p]) => p === path) + 7) % base.length]![1];
  }
  return files;
}

describe('pruned search = exhaustive search on a vault of copies', () => {
  it('same refs, order and scores when most candidates are copies of one chunk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lt-prune-copies-'));
    try {
      const vault = makeVault('CopyLore', copiedFiles());
      await indexVault(vault, { indexDir: dir });
      const index = await indexVault(vault, { indexDir: dir }); // warm: records read one note at a time
      expect(index.chunks.length).toBeGreaterThan(PHRASE_CANDIDATES);
      const titles = [...new Set(index.notes.map((n) => n.title))];
      const rand = prng(31);
      const names = Array.from({ length: 60 }, () => pick(rand, titles));
      const queries = [...queriesOf(index, 240, 32), ...names, 'Soliton Drive', 'the soliton drive', 'storm pilot of the guild'];
      expect(compareAll(index, queries, 33)).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * High duplication, as the bench's ×1000 vault has it: 6 notes copied 250 times (c000/ … c249/, about 6,000
 * chunks), so every chunk ties with 249 copies (ties at θ and at the pool's edge, which falls inside a
 * set of copies), plus a few notes with rare words, so that a query's first runs see few chunks and its
 * later runs, 250 times longer, are only checked for them (by galloping search).
 */
function duplicatedFiles(): Record<string, string> {
  const base = Object.entries(generatedFiles()).slice(0, 6);
  const files: Record<string, string> = {};
  for (let c = 0; c < 250; c++) for (const [path, body] of base) files[`c${String(c).padStart(3, '0')}/${path}`] = body;
  const RARE = ['quillon', 'marrowgate', 'thessaly', 'brackwater'];
  RARE.forEach((w, i) => {
    const [path, body] = base[i % base.length]!;
    files[`rare/${i}/${path.slice(path.lastIndexOf('/') + 1)}`] = body.replace(/\n\n/, `\n\n${w} ${CONTENT[i]} ${w}\n\n`);
    files[`rare/${i}/Rare ${w}.md`] = `# Rare ${w}\n\n${w} the ${CONTENT[i + 1]} and ${CONTENT[i + 2]} of the ${pick(prng(i), NAMES)}.\n`;
  });
  return files;
}

describe('pruned search = exhaustive search on a highly duplicated vault', () => {
  it('same refs, order and scores with 250 copies of every chunk, rare terms, filters and the pool edge among copies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lt-prune-dup-'));
    try {
      const vault = makeVault('DupLore', duplicatedFiles());
      await indexVault(vault, { indexDir: dir });
      const index = await indexVault(vault, { indexDir: dir }); // warm: the content classes come from the manifest
      expect(index.chunks.length).toBeGreaterThan(2 * PHRASE_CANDIDATES);
      const titles = [...new Set(index.notes.map((n) => n.title))];
      const rand = prng(51);
      const rare = ['quillon', 'marrowgate', 'thessaly', 'brackwater'];
      const mixed = rare.flatMap((w, i) => [`${w} ${CONTENT[i]}`, `the ${CONTENT[i]} ${w} of the ${CONTENT[i + 1]}`, `${w} ${CONTENT[i + 1]} ${CONTENT[i + 2]} storm pilot`, w]);
      const queries = [...queriesOf(index, 120, 52), ...Array.from({ length: 20 }, () => pick(rand, titles)), ...mixed, 'the of and', 'Soliton Drive'];
      expect(compareAll(index, queries, 53)).toBeGreaterThan(500);
      // The same queries with filters that keep a few copies and one rare folder, at every k of the walk.
      for (const q of mixed) {
        const options: SearchOptions[] = [
          { k: 1 }, { k: 7, prefixes: ['c123/', 'rare/2/'] }, { k: 3, paths: index.notes.filter((n, i) => i % 97 === 0).map((n) => n.path) }, { k: 40, phrase: false },
          // Plain BM25 (no pool) with a small k: the rare term's runs decide θ at once, and the long runs
          // of the common content terms and of the stop words are only searched for the chunks seen.
          { k: 1, phrase: false }, { k: 2, phrase: false, commonTerms: true },
        ];
        for (const o of options) {
          expect({ q, o, hits: search(index, q, o) }).toEqual({ q, o, hits: exhaustiveSearch(index, q, o) });
        }
      }
      // Ties at θ: the top hits of a query every copy answers alike are copies, in path order.
      const top = search(index, CONTENT.slice(0, 3).join(' '), { k: 5 });
      expect(new Set(top.map((h) => h.score)).size).toBeLessThan(top.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe.skipIf(!existsSync(AETHERIA))(`pruned search = exhaustive search on AetheriaLore${existsSync(AETHERIA) ? '' : ` (${sharedNotice})`}`, () => {
  it('for seeded queries cut from its notes', async () => {
    const real = await indexVault(AETHERIA, { persist: false });
    expect(compareAll(real, queriesOf(real, 200, 12), 13)).toBeGreaterThan(500);
  }, 120_000);
});

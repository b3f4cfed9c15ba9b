/**
 * The entity prior of `search()` (src/search/phrase.ts ENTITY_PRIOR): a note whose title or an alias
 * occurs in the query as a phrase has all its chunks boosted, and the re-rank's early stop stays exact —
 * checked against a brute-force re-rank of every hit computed from the definitions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexVault } from '../src/indexer/build.js';
import { search, type SearchHit } from '../src/search/search.js';
import { phraseTerms } from '../src/search/tokenize.js';
import {
  ENTITY_PRIOR,
  longestPhraseRun,
  NAME_MATCH_FACTOR,
  namedSpans,
  nameTerms,
  occursAsPhrase,
  PHRASE_MAX_TERMS,
  phraseFactor,
  phraseIsName,
  termPositions,
} from '../src/search/phrase.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT, FIXTURES } from './helpers/shared.js';

// lore-fixtures/EntityLore: the overview (Powers.md) has a short section headed by the entity's name and
// dense in the query's words; the entity's own section says the same in a longer paragraph, as real vaults
// do; other titles share the name's words, so a title match alone is weak evidence. Tithe Barges names
// itself in its introduction, as most entity notes do, and says what a query about its levies asks in
// its second section.
const ENTITY_VAULT = join(FIXTURES, 'EntityLore');

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'lt-entity-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let vault: VaultIndex;
let fixture: VaultIndex;
beforeAll(async () => {
  vault = await indexVault(ENTITY_VAULT, { indexDir: tmp() });
  fixture = await indexVault(FIXTURE_VAULT, { indexDir: tmp() });
});

describe('occursAsPhrase', () => {
  it('finds a name as consecutive query terms, folded like the index', () => {
    const q = phraseTerms("What do the Cetacean Navigators' rescue ledgers record?");
    const at = termPositions(q);
    expect(occursAsPhrase(nameTerms('Cetacean Navigators'), q, at)).toBe(true);
    expect(occursAsPhrase(nameTerms('Rescue Ledgers'), q, at)).toBe(true);
    expect(occursAsPhrase(nameTerms('Navigators Cetacean'), q, at)).toBe(false);
    expect(occursAsPhrase(nameTerms('Kel’dar Accord'), phraseTerms('the keldar accord'), termPositions(phraseTerms('the keldar accord')))).toBe(true);
    expect(occursAsPhrase([], q, at)).toBe(false);
  });
});

describe('namedSpans', () => {
  it("gives, per phrase term, the longest run ending there within a name's occurrence in the query", () => {
    const q = phraseTerms('the Soliton Drive hums near the Tithe Barges of Tithe');
    expect([...namedSpans(q, q.length, [nameTerms('Soliton Drive'), nameTerms('Tithe Barges')])]).toEqual([0, 1, 2, 0, 0, 0, 1, 2, 0, 0]);
    // Overlapping names: the longer containment wins; one-term names are no phrase evidence.
    const o = phraseTerms('red salt road house');
    expect([...namedSpans(o, o.length, [nameTerms('Red Salt Road'), nameTerms('Salt Road House'), nameTerms('Road')])]).toEqual([1, 2, 3, 3]);
    // Clipped to the phrase (the first PHRASE_MAX_TERMS terms).
    expect([...namedSpans(q, 2, [nameTerms('Soliton Drive')])]).toEqual([0, 1]);
  });

  it('keeps longestPhraseRun from counting runs within the spans', () => {
    const q = phraseTerms('the Soliton Drive hums');
    const named = namedSpans(q, q.length, [nameTerms('Soliton Drive')]);
    expect(longestPhraseRun(q, ['A Soliton Drive.'], named)).toBe(1);
    // A run that reaches past the name by any term counts, a stop word included.
    expect(longestPhraseRun(q, ['The Soliton Drive.'], named)).toBe(3);
    expect(longestPhraseRun(q, ['The Soliton Drive.'])).toBe(3);
    expect(longestPhraseRun(q, ['Soliton Drive hums'], named)).toBe(3);
    expect(longestPhraseRun(q, ['the Soliton'], named)).toBe(2);
  });
});

describe('search: entity prior', () => {
  it("ranks the entity's own section above a short section elsewhere that merely names it", () => {
    const q = 'Cetacean Navigators formation weather sanctuary promise';
    const hits = search(vault, q, { k: 2 });
    expect(hits.map((h) => h.ref)).toEqual(['EntityLore:Cetacean Navigators.md#chunk1', 'EntityLore:Powers.md#chunk1']);
    // Plain BM25 puts the overview's short section first, and so would the phrase factor without the prior.
    expect(search(vault, q, { k: 1, phrase: false })[0]!.ref).toBe('EntityLore:Powers.md#chunk1');
    expect(hits[0]!.score / ENTITY_PRIOR).toBeLessThan(hits[1]!.score);
  });

  it('multiplies every chunk of each named note by ENTITY_PRIOR, on top of the phrase factor', () => {
    expect(ENTITY_PRIOR).toBe(1.5);
    const q = 'Cetacean Navigators rescue ledgers distress';
    const bm25 = new Map(search(vault, q, { k: 20, phrase: false }).map((h) => [h.ref, h.score]));
    const got = new Map(search(vault, q, { k: 20 }).map((h) => [h.ref, h.score]));
    // Both notes are named in the query ("Cetacean Navigators", "Rescue Ledgers"); Powers is not.
    // Navigators chunk 1 has "rescue ledgers" in a row in its text and heading, and Powers chunk 1
    // "Cetacean Navigators" in its heading, but each of those runs lies within a name the query names:
    // the prior's evidence, not phrase evidence, so their phrase factor is 1.
    expect(got.get('EntityLore:Cetacean Navigators.md#chunk1')).toBe(Math.round(bm25.get('EntityLore:Cetacean Navigators.md#chunk1')! * (1 * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    expect(got.get('EntityLore:Rescue Ledgers.md#chunk0')).toBe(Math.round(bm25.get('EntityLore:Rescue Ledgers.md#chunk0')! * (1 * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    expect(got.get('EntityLore:Powers.md#chunk1')).toBe(bm25.get('EntityLore:Powers.md#chunk1'));
    // A run reaching past the name counts in full: "ledgers distress" is no name (run 2 of 5 would need it
    // in the text; "rescue ledgers: who answered a distress" breaks it), while a quote of the name and the
    // next word does: "navigators rescue" is not within one name.
    const past = 'Cetacean Navigators pilot the deep routes';
    const bm25Past = search(vault, past, { k: 1, phrase: false, commonTerms: true })[0]!;
    const gotPast = search(vault, past, { k: 1 })[0]!;
    expect(gotPast.ref).toBe('EntityLore:Cetacean Navigators.md#chunk0');
    // "who pilot the deep routes" in its text: run 4 of 6 (pilot the deep routes), past the name.
    expect(gotPast.score).toBe(Math.round(bm25Past.score * (phraseFactor(4, 6) * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
  });

  it("does not count a run within a named entity's name as phrase evidence: the note's section outranks its introduction", () => {
    const q = 'Tithe Barges levy dock charter';
    const bm25 = new Map(search(vault, q, { k: 20, phrase: false }).map((h) => [h.ref, h.score]));
    const hits = search(vault, q, { k: 2 });
    expect(hits.map((h) => h.ref)).toEqual(['EntityLore:Tithe Barges.md#chunk1', 'EntityLore:Tithe Barges.md#chunk0']);
    // The introduction says "The Tithe Barges are …": run 2 of 5, but within the name → factor 1.
    const intro = bm25.get('EntityLore:Tithe Barges.md#chunk0')!;
    const levies = bm25.get('EntityLore:Tithe Barges.md#chunk1')!;
    expect(hits[1]!.score).toBe(Math.round(intro * (1 * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    expect(hits[0]!.score).toBe(Math.round(levies * (1 * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    // Counting the name's run would have put the introduction first (the prior would not move it: it
    // multiplies both chunks of the note alike).
    expect(intro * phraseFactor(2, 5)).toBeGreaterThan(levies);
    expect(intro).toBeLessThan(levies);
  });

  it('takes aliases as names, and needs the whole name in order', () => {
    expect(search(vault, 'pod pilots rescue ledgers distress', { k: 1 })[0]!.path).toBe('Cetacean Navigators.md');
    const reversed = search(vault, 'navigators cetacean ledgers', { k: 20 });
    const bm25 = new Map(search(vault, 'navigators cetacean ledgers', { k: 20, phrase: false }).map((h) => [h.ref, h.score]));
    expect(reversed.find((h) => h.ref === 'EntityLore:Cetacean Navigators.md#chunk1')!.score).toBe(bm25.get('EntityLore:Cetacean Navigators.md#chunk1'));
  });
});

/** Every exact hit re-ranked from the definitions (no pool: these vaults have far fewer than 2,000 hits). */
function bruteForce(index: VaultIndex, q: string): [string, number][] {
  const bm25 = search(index, q, { k: 100_000, phrase: false, commonTerms: true, expand: false });
  const all = phraseTerms(q);
  const phrase = all.slice(0, PHRASE_MAX_TERMS);
  const n = phrase.length;
  const positions = termPositions(all);
  const notes = new Map(index.notes.map((note) => [note.path, note]));
  // Every name of every note that occurs in the query, as the named spans of the phrase.
  const entityNames = index.notes.flatMap((note) => [note.title, ...note.aliases]).map(nameTerms).filter((t) => occursAsPhrase(t, all, positions));
  const named = namedSpans(all, n, entityNames);
  const chunks = new Map(index.chunks.map((c) => [`${c.path}#${c.chunk_index}`, c]));
  const scored = bm25.map((h: SearchHit) => {
    const note = notes.get(h.path)!;
    const names = [note.title, ...note.aliases];
    const first = h.chunk_index === 0;
    const c = chunks.get(`${h.path}#${h.chunk_index}`)!;
    const isName = first && all.length === n && phraseIsName(phrase, names);
    const run = isName ? n : longestPhraseRun(phrase, [c.text, ...c.heading_path, ...(first ? names : [])], named);
    const entity = names.some((name) => occursAsPhrase(nameTerms(name), all, positions));
    const factor = phraseFactor(run, n) * (isName ? NAME_MATCH_FACTOR : 1) * (entity ? ENTITY_PRIOR : 1);
    return { ref: h.ref, path: h.path, chunk: h.chunk_index, score: Math.round(h.score * factor * 1e6) / 1e6 };
  });
  // A name lookup: the named note's first chunk takes the best score of its note's chunks (it wins the tie).
  const best = new Map<string, number>();
  for (const s of scored) best.set(s.path, Math.max(best.get(s.path) ?? -Infinity, s.score));
  for (const s of scored) {
    const note = notes.get(s.path)!;
    if (s.chunk === 0 && all.length === n && phraseIsName(phrase, [note.title, ...note.aliases])) s.score = best.get(s.path)!;
  }
  scored.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.chunk - b.chunk);
  return scored.map((s) => [s.ref, s.score]);
}

describe('search: exact early stop with the entity prior', () => {
  const queries: [() => VaultIndex, string][] = [
    [() => vault, 'Cetacean Navigators rescue ledgers distress'],
    [() => vault, 'rescue ledgers'],
    [() => vault, 'the pod pilots and the lightsail express couriers'],
    [() => fixture, 'Meridian Compact charter distress calls'],
    [() => fixture, 'Halcyon Mutual relay'],
    [() => fixture, 'Quiet Hands count care in beds air food and repair hours'],
    [() => fixture, 'salvage law harbor neutrality arbitration pier'],
    [() => fixture, 'Brinefall Blackout Kestrel Route Accord Open Ledger Society'],
    [() => fixture, 'Kel’dar Accord salt wardens'],
    [() => fixture, 'Tidewright Almanac harbour master'],
  ];
  it('returns exactly the top k of a brute-force re-rank of every hit, for every k', () => {
    for (const [ix, q] of queries) {
      const expected = bruteForce(ix(), q);
      expect(expected.length).toBeGreaterThan(0);
      for (const k of [1, 2, 3, 5, 8, expected.length]) {
        expect(search(ix(), q, { k, expand: false }).map((h) => [h.ref, h.score])).toEqual(expected.slice(0, k));
      }
    }
  });
});

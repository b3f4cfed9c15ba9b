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
  nameTerms,
  occursAsPhrase,
  PHRASE_MAX_TERMS,
  phraseFactor,
  phraseIsName,
  termPositions,
} from '../src/search/phrase.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { makeVault } from './helpers/temp-vault.js';

// The overview has a short section headed by the entity's name and dense in the query's words; the
// entity's own section says the same in a longer paragraph, as real vaults do; other titles share the
// name's words, so a title match alone is weak evidence.
const OVERVIEW = '# Powers\n\n## Cetacean Navigators\n\nNavigators hold formation in weather; a sanctuary promise.\n\n## Lightsail Express\n\nCouriers of the outer routes.\n';
const NAVIGATORS =
  '---\naliases: [The Pod Pilots]\n---\n# Cetacean Navigators\n\nWhales and dolphins who pilot the deep routes between the gas giants.\n\n' +
  '## Rescue Ledgers\n\nEvery pod keeps rescue ledgers: who answered a distress call, who held formation in lethal weather, who kept a sanctuary promise when a paying client wanted otherwise, what that cost the pod in hull time, ' +
  'in credit with the route stewards and in kinship, and which captains never paid their share of the escort fees afterwards.\n';
const FILES: Record<string, string> = {
  'Powers.md': OVERVIEW,
  'Cetacean Navigators.md': NAVIGATORS,
  'Rescue Ledgers.md': '# Rescue Ledgers\n\nA ledger is a book of accounts.\n',
  'Storm Formation.md': '# Storm Formation\n\nFormation, lethal; the weather promise of sanctuary.\n',
  'Cetacean Songs.md': '# Cetacean Songs\n\n## One\n\nSongs.\n\n## Two\n\nMore songs.\n\n## Three\n\nOld songs.\n',
  'Navigators Hall.md': '# Navigators Hall\n\n## One\n\nA hall.\n\n## Two\n\nA bigger hall.\n\n## Three\n\nThe old hall.\n',
  ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`Filler ${i}.md`, `# Filler ${i}\n\nThe routes between harbors carry cargo and crews.\n`])),
};

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
  vault = await indexVault(makeVault('Pods', FILES), { indexDir: tmp() });
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

describe('search: entity prior', () => {
  it("ranks the entity's own section above a short section elsewhere that merely names it", () => {
    const q = 'Cetacean Navigators formation weather sanctuary promise';
    const hits = search(vault, q, { k: 2 });
    expect(hits.map((h) => h.ref)).toEqual(['Pods:Cetacean Navigators.md#chunk1', 'Pods:Powers.md#chunk1']);
    // Plain BM25 puts the overview's short section first, and so would the phrase factor without the prior.
    expect(search(vault, q, { k: 1, phrase: false })[0]!.ref).toBe('Pods:Powers.md#chunk1');
    expect(hits[0]!.score / ENTITY_PRIOR).toBeLessThan(hits[1]!.score);
  });

  it('multiplies every chunk of each named note by ENTITY_PRIOR, on top of the phrase factor', () => {
    expect(ENTITY_PRIOR).toBe(1.5);
    const q = 'Cetacean Navigators rescue ledgers distress';
    const bm25 = new Map(search(vault, q, { k: 20, phrase: false }).map((h) => [h.ref, h.score]));
    const got = new Map(search(vault, q, { k: 20 }).map((h) => [h.ref, h.score]));
    // Both notes are named in the query ("Cetacean Navigators", "Rescue Ledgers"); Powers is not.
    // Navigators chunk 1: "rescue ledgers" in a row in its text and heading → run 2 of 5.
    expect(got.get('Pods:Cetacean Navigators.md#chunk1')).toBe(Math.round(bm25.get('Pods:Cetacean Navigators.md#chunk1')! * (phraseFactor(2, 5) * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    expect(got.get('Pods:Rescue Ledgers.md#chunk0')).toBe(Math.round(bm25.get('Pods:Rescue Ledgers.md#chunk0')! * (phraseFactor(2, 5) * 1 * ENTITY_PRIOR) * 1e6) / 1e6);
    expect(got.get('Pods:Powers.md#chunk1')).toBe(Math.round(bm25.get('Pods:Powers.md#chunk1')! * phraseFactor(2, 5) * 1e6) / 1e6);
  });

  it('takes aliases as names, and needs the whole name in order', () => {
    expect(search(vault, 'pod pilots rescue ledgers distress', { k: 1 })[0]!.path).toBe('Cetacean Navigators.md');
    const reversed = search(vault, 'navigators cetacean ledgers', { k: 20 });
    const bm25 = new Map(search(vault, 'navigators cetacean ledgers', { k: 20, phrase: false }).map((h) => [h.ref, h.score]));
    expect(reversed.find((h) => h.ref === 'Pods:Cetacean Navigators.md#chunk1')!.score).toBe(bm25.get('Pods:Cetacean Navigators.md#chunk1'));
  });
});

/** Every exact hit re-ranked from the definitions (no pool: these vaults have far fewer than 2,000 hits). */
function bruteForce(index: VaultIndex, q: string): [string, number][] {
  const bm25 = search(index, q, { k: 100_000, phrase: false, expand: false });
  const all = phraseTerms(q);
  const phrase = all.slice(0, PHRASE_MAX_TERMS);
  const n = phrase.length;
  const positions = termPositions(all);
  const notes = new Map(index.notes.map((note) => [note.path, note]));
  const chunks = new Map(index.chunks.map((c) => [`${c.path}#${c.chunk_index}`, c]));
  const scored = bm25.map((h: SearchHit) => {
    const note = notes.get(h.path)!;
    const names = [note.title, ...note.aliases];
    const first = h.chunk_index === 0;
    const c = chunks.get(`${h.path}#${h.chunk_index}`)!;
    const run = longestPhraseRun(phrase, [c.text, ...c.heading_path, ...(first ? names : [])]);
    const isName = first && all.length === n && phraseIsName(phrase, names);
    const entity = names.some((name) => occursAsPhrase(nameTerms(name), all, positions));
    const factor = phraseFactor(run, n) * (isName ? NAME_MATCH_FACTOR : 1) * (entity ? ENTITY_PRIOR : 1);
    return { ref: h.ref, path: h.path, chunk: h.chunk_index, score: Math.round(h.score * factor * 1e6) / 1e6 };
  });
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

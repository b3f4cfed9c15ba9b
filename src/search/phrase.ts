/**
 * Phrase evidence for the re-rank step of `search()`.
 *
 * BM25 is a bag of words: for the query `Soliton Drive transport routes with`, the note *Soliton Drive*
 * (two rare words, one of them in its title) outranks the paragraph of *Bloom* that contains all five words
 * in a row. Search must not lose retrieval quality against plain BM25, as measured by a
 * known-item check (a query cut from a paragraph should find that paragraph). The classic remedy is term
 * proximity (Büttcher, Clarke & Lushman, "Term proximity scoring for ad-hoc retrieval on very large text
 * collections", SIGIR 2006); loretrace uses its simplest form, the longest run of consecutive query terms
 * that occurs consecutively in the chunk, so no positions need to be stored in the index.
 *
 * The factor multiplies the BM25 score: `1 + PHRASE_WEIGHT × (run − 1) / (n − 1)` for a query phrase of
 * `n ≥ 2` terms and a longest run `run ≥ 1` (1 when `run ≤ 1` or `n < 2`), so it lies in `[1, 1 + PHRASE_WEIGHT]`.
 * A note's first chunk whose title or an alias *is* the query gets {@link NAME_MATCH_FACTOR} on top, and
 * every chunk of a note whose title or an alias occurs *in* the query gets {@link ENTITY_PRIOR}.
 * The bound `(1 + PHRASE_WEIGHT) × NAME_MATCH_FACTOR × ENTITY_PRIOR` lets `search()` stop examining
 * candidates once none can overtake the k-th result.
 */
import { processTerm, tokenize } from './tokenize.js';

/**
 * Most query terms the phrase check looks at (the first ones, stop words counted): bounds its cost at
 * `PHRASE_MAX_TERMS` steps per token of a candidate chunk, whatever the query.
 */
export const PHRASE_MAX_TERMS = 32;

/** Weight of a whole-phrase match: a chunk containing the full query phrase scores `1 + 2 = 3×` its BM25. */
export const PHRASE_WEIGHT = 2;

/**
 * Extra factor of a note's first chunk when the whole query phrase is the note's title or one of its
 * aliases (after normalisation): a lookup by name finds the note itself before sections that merely
 * carry the name as a heading or quote it (Obsidian's quick switcher ranks exact names first, too).
 */
export const NAME_MATCH_FACTOR = 1.5;

/**
 * Entity prior: every chunk of a note whose title or one of its aliases occurs in the query as a phrase
 * (its terms consecutive in the query's terms, folded like the index) has its score multiplied by this.
 * A query that names an entity and a topic ("Cetacean Navigators rescue ledgers") is about that entity:
 * without the prior, a short section elsewhere that merely names it (an overview's paragraph headed by
 * the name) or a short note dense in the topic's words outranks the entity's own note, since BM25
 * favours short fields. The prior moves whole notes, never the order of a note's own chunks. Entity
 * names as evidence of relevance are the idea behind entity linking in retrieval (e.g. Dalton, Dietz &
 * Allan, "Entity query feature expansion using knowledge base links", SIGIR 2014); here the knowledge
 * base is the vault's own titles and aliases.
 */
export const ENTITY_PRIOR = 1.5;

/** Terms of a name as the index folds them (tokenised, normalised; empty tokens dropped). */
export function nameTerms(name: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(name)) {
    const term = processTerm(token);
    if (term !== null) out.push(term);
  }
  return out;
}

/** Positions of each term in `phrase` (ascending), for {@link occursAsPhrase}. */
export function termPositions(phrase: readonly string[]): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  phrase.forEach((t, i) => {
    const list = positions.get(t);
    if (list) list.push(i);
    else positions.set(t, [i]);
  });
  return positions;
}

/**
 * Whether `terms` (a name's terms, ≥ 1) occur consecutively somewhere in `phrase`, whose term positions
 * are `positions` ({@link termPositions}). Example: `['soliton', 'drive']` in
 * `['the', 'soliton', 'drive', 'hums']` → true; in `['drive', 'soliton']` → false.
 */
export function occursAsPhrase(terms: readonly string[], phrase: readonly string[], positions: ReadonlyMap<string, readonly number[]>): boolean {
  if (terms.length === 0) return false;
  const starts = positions.get(terms[0]!);
  if (!starts) return false;
  for (const p of starts) {
    if (p + terms.length > phrase.length) break;
    let ok = true;
    for (let j = 1; j < terms.length && ok; j++) ok = phrase[p + j] === terms[j];
    if (ok) return true;
  }
  return false;
}

/**
 * Where the query's entity names sit in its phrase: for each phrase term j, the length of the longest
 * run of phrase terms ending at j that lies within one occurrence of one of `names` (each a name's
 * terms, {@link nameTerms}) in `query` (all query terms; `phrase` is its first `phrase`-length terms),
 * 0 when no name covers j. Names of one term are left out (a run of one term is no phrase evidence).
 * Example: query `['the', 'soliton', 'drive', 'hums']`, names `[['soliton', 'drive']]` → `[0, 1, 2, 0]`.
 *
 * Why: a name that occurs in the query is evidence about its note, which the entity prior
 * ({@link ENTITY_PRIOR}) already carries for every chunk of that note. A chunk that only repeats the name
 * (the note's own introduction, a heading or the title of the note, a mention in another note) has not
 * matched the query's wording beyond it; counting that run as phrase evidence would reward the same
 * words twice and reorder a note's own chunks by where the name is written, against the prior's rule
 * that it moves whole notes only.
 */
export function namedSpans(query: readonly string[], phraseLength: number, names: readonly (readonly string[])[]): Uint8Array {
  const named = new Uint8Array(phraseLength);
  const positions = termPositions(query);
  for (const name of names) {
    if (name.length < 2) continue;
    for (const s of positions.get(name[0]!) ?? []) {
      if (s >= phraseLength) break;
      if (s + name.length > query.length) break;
      let ok = true;
      for (let j = 1; j < name.length && ok; j++) ok = query[s + j] === name[j];
      if (!ok) continue;
      const end = Math.min(s + name.length, phraseLength);
      for (let j = s; j < end; j++) named[j] = Math.max(named[j]!, Math.min(255, j - s + 1));
    }
  }
  return named;
}

/**
 * Whether `phrase` (normalised query terms, stop words kept) equals the terms of one of `names`.
 * Example: `['soliton', 'drive']` and `['Soliton Drive']` → true; `['drive']` → false.
 */
export function phraseIsName(phrase: readonly string[], names: readonly string[]): boolean {
  if (phrase.length === 0) return false;
  for (const name of names) {
    const terms: string[] = [];
    for (const token of tokenize(name)) {
      const term = processTerm(token);
      if (term !== null) terms.push(term);
      if (terms.length > phrase.length) break;
    }
    if (terms.length === phrase.length && terms.every((t, i) => t === phrase[i])) return true;
  }
  return false;
}

/**
 * Length of the longest run of consecutive terms of `phrase` (query order) that occurs as consecutive
 * terms in one of `texts`. Each text is tokenised and normalised like the index (src/search/tokenize.ts),
 * and a run never spans two texts (a heading and the body, or two headings).
 *
 * Example: phrase `['soliton', 'drive', 'transport']`, texts `['The Soliton Drive hums.']` → 2.
 *
 * With `named` ({@link namedSpans}), a run lying wholly within an occurrence in `phrase` of a name of
 * one of the query's entities counts as a run of 1 (`named[j]`: the longest such run that ends at phrase
 * term j); a run that reaches past the name by any term (a stop word too) counts in full.
 * Example: phrase `['soliton', 'drive', 'hums']`, named = spans of `Soliton Drive`, texts `['The Soliton
 * Drive.']` → 1; texts `['the Soliton Drive hums']` → 3.
 *
 * @param phrase query terms, stop words kept (`phraseTerms`)
 * @param texts the strings a chunk is known by (body text, each heading, for a note's first chunk its title and aliases)
 * @param named per phrase term, the longest run ending there that lies within a named entity's name (default: none)
 * @returns an integer in `0 … phrase.length` (0: no term of the phrase occurs)
 */
export function longestPhraseRun(phrase: readonly string[], texts: readonly string[], named?: Uint8Array): number {
  const n = phrase.length;
  if (n === 0) return 0;
  const positions = new Map<string, number[]>();
  phrase.forEach((t, j) => {
    const list = positions.get(t);
    if (list) list.push(j);
    else positions.set(t, [j]);
  });
  // run[j]: length of the run of phrase terms ending at phrase[j] and at the current token; `at[j]` is the
  // token index it was set at, so stale entries read as 0 without clearing the array.
  const run = new Uint32Array(n);
  const at = new Int32Array(n).fill(-2);
  const memo = new Map<string, string | null>();
  let best = 0;
  let pos = 0;
  for (const text of texts) {
    pos += 2; // a gap: runs never continue from one text into the next
    for (const token of tokenize(text)) {
      pos++;
      let term = memo.get(token);
      if (term === undefined) {
        term = processTerm(token);
        memo.set(token, term);
      }
      const js = term === null ? undefined : positions.get(term);
      if (!js) continue;
      // Descending j, so run[j - 1] still holds the previous token's value when run[j] reads it.
      for (let x = js.length - 1; x >= 0; x--) {
        const j = js[x]!;
        const r = j > 0 && at[j - 1] === pos - 1 ? run[j - 1]! + 1 : 1;
        run[j] = r;
        at[j] = pos;
        // A run lying within a name the query names is the entity prior's evidence, not phrase evidence:
        // it counts as one term.
        if (r > best) best = named === undefined || r > named[j]! ? r : Math.max(best, 1);
      }
      if (best === n) return n;
    }
  }
  return best;
}

/**
 * The score factor of a chunk whose longest phrase run is `run` for a query phrase of `length` terms:
 * `1 + PHRASE_WEIGHT × (run − 1) / (length − 1)`, or 1 when `length < 2` or `run < 2`.
 */
export function phraseFactor(run: number, length: number): number {
  if (length < 2 || run < 2) return 1;
  return 1 + (PHRASE_WEIGHT * (run - 1)) / (length - 1);
}

/**
 * Terms for search: one tokenizer and one term normaliser, used when indexing (possibly in a worker
 * thread) and when querying, so both sides always agree.
 *
 * - A possessive `'s` is dropped (`Zhestokost’s` = `Zhestokost`), then apostrophes (`'`, `’`, `‘`, `ʼ`,
 *   `` ` ``), so `Kel'dar` and `Keldar` give the same term.
 * - Tokens are split at whitespace, punctuation and symbols (Unicode `Z`, `P`, `S`).
 * - A term is lower-cased, NFD-decomposed and stripped of combining marks, so `Framgång` → `framgang`.
 * - Stop words (English function words) are kept in the index; in a query that has other terms they never
 *   make a chunk a hit (speed and quality: measured 55 → 11 ms p50 on prose queries; docs/PERFORMANCE.md),
 *   and `search()` scores them only in chunks its other terms found ({@link commonTerms}).
 * - With a config `stem_weight` above 0 ({@link hasStemmedField}), the headings and text fields also
 *   carry a *stemmed copy*: each content term of plain ASCII letters
 *   (3 or more, not a stop word) adds its Porter stem (package `stemmer`, M. F. Porter, "An algorithm for
 *   suffix stripping", 1980) as the term `stem + STEM_MARK`, beside the exact term. The copy is a second
 *   field in all but storage: the same field lengths, its own document frequencies (docs/INDEX.md
 *   "Stemmed field").
 */
import { stemmer } from 'stemmer';
import type { Chunk, NoteRecord, VaultConfig } from '../types.js';

/**
 * Bumped whenever tokenisation or field layout changes; part of the index options hash (an index built
 * with another version is rebuilt with an `index_rebuilt` finding). 2: possessive `'s` and Cf characters
 * dropped. (The stemmed copy is asked for by the config's `stem_weight`, which the options hash holds.)
 */
export const TOKENIZER_VERSION = 2;

const APOSTROPHES = /['’‘ʼ`]/g;
/** Invisible format characters (soft hyphen, zero-width space and joiners, BOM): `Soli\u00adton` = `Soliton`. */
const FORMAT = /\p{Cf}+/gu;
/** A possessive `'s` after a letter, at the end of a word: `Zhestokost’s` → `Zhestokost`. */
const POSSESSIVE = /(?<=\p{L})['’ʼ]s(?![\p{L}\p{N}])/gu;
const SEPARATORS = /[\p{Z}\p{P}\p{S}\p{Cc}]+/u;
const COMBINING = /\p{M}+/gu;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Split text into raw tokens: invisible format characters (Unicode Cf: soft hyphen, zero-width space)
 * removed, possessive `'s` removed (`Zhestokost’s` → `Zhestokost`), then apostrophes
 * (`Kel'dar` → `Keldar`), then split at separators. Empty tokens are dropped.
 */
export function tokenize(text: string): string[] {
  return text.replace(FORMAT, '').replace(POSSESSIVE, '').replace(APOSTROPHES, '').split(SEPARATORS).filter((t) => t.length > 0);
}

/** Normalise one raw token into an index term: lower case, diacritics folded. `null` when empty. */
export function processTerm(token: string): string | null {
  const lower = token.toLowerCase();
  const term = ASCII.test(lower) ? lower : lower.normalize('NFD').replace(COMBINING, '').normalize('NFC');
  return term.length > 0 ? term : null;
}

/** English function words: never a query's hit-making terms when it has others ({@link queryTerms}); kept in the index. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be been being but by can could did do does for from had has have he her his how i if in into is it its ' +
    'may me might must my no not of on or our over shall she should so such than that the their them then there these they ' +
    'this those to under was we were what when where which who whom why will with would you your about after before also ' +
    'just any all some')
    .split(' '),
);

/**
 * Suffix of a stemmed term (`relai\u0001` = the stem of `relays`, `relaying`, `relay`): a control
 * character, which the tokenizer always splits at, so no exact term ever ends with it — the two kinds
 * of term share the term shards (same first character) without ever being confused. Prefix and fuzzy
 * expansion never see stemmed terms.
 */
export const STEM_MARK = '\u0001';

/** Only terms of plain ASCII letters are stemmed: the Porter rules are English (`øre`, `кит` are left as they are). */
const STEMMABLE = /^[a-z]{3,}$/;

/**
 * The stemmed term of an index or query term (`relays` → `relai\u0001`), or `null` for a term that has
 * none: not 3 or more ASCII letters (names with diacritics, numbers, short words) or a stop word (stop
 * words are dropped from queries, so their stems would only cost index space).
 */
export function stemTerm(term: string): string | null {
  if (!STEMMABLE.test(term) || STOP_WORDS.has(term)) return null;
  return stemmer(term) + STEM_MARK;
}

/**
 * Whether an index built with `config` carries the stemmed copy: its `stem_weight` is above 0 (default 0,
 * no copy — the index then holds exactly the exact terms).
 */
export function hasStemmedField(config: Pick<VaultConfig, 'stem_weight'> | undefined): boolean {
  return (config?.stem_weight ?? 0) > 0;
}

/** True for a stemmed term (one made by {@link stemTerm}). */
export function isStemTerm(term: string): boolean {
  return term.endsWith(STEM_MARK);
}

/** Term frequencies of one field: term → count. */
export type TermFreqs = Record<string, number>;

/**
 * Search token data of one field: the term frequencies, and the field length as MiniSearch counts
 * it (the number of distinct raw tokens).
 */
export interface FieldTokens {
  tf: TermFreqs;
  len: number;
}

/** Token data of a note: note-level fields (title, aliases) and per-chunk fields (headings, text). */
export interface NoteTokens {
  title: FieldTokens;
  aliases: FieldTokens;
  /** Indexed by chunk_index. */
  chunks: { headings: FieldTokens; text: FieldTokens }[];
}

/**
 * Token data of one field value. Each distinct raw token is normalised once (a field repeats its words
 * a lot); the number of distinct raw tokens is the field length. With `stemmed`, every exact term that
 * has a stem ({@link stemTerm}) also counts for its stemmed term (its frequency is the sum over the
 * field's words with that stem), after all exact terms; the field length stays the same, so the stemmed
 * copy is scored with the lengths of the field it copies.
 */
export function fieldTokens(text: string, stemmed = false): FieldTokens {
  const tokens = tokenize(text);
  const seen = new Map<string, string | null>();
  const tf: TermFreqs = Object.create(null) as TermFreqs;
  for (const token of tokens) {
    let term = seen.get(token);
    if (term === undefined) {
      term = processTerm(token);
      seen.set(token, term);
    }
    if (term === null) continue;
    tf[term] = (tf[term] ?? 0) + 1;
  }
  if (stemmed) {
    const stems: TermFreqs = Object.create(null) as TermFreqs;
    for (const term in tf) {
      const stem = stemTerm(term);
      if (stem !== null) stems[stem] = (stems[stem] ?? 0) + tf[term]!;
    }
    for (const stem in stems) tf[stem] = stems[stem]!;
  }
  return { tf, len: seen.size };
}

/**
 * Token data of a note and its chunks. Pure and deterministic (terms in first-seen order, stemmed terms
 * after the exact ones); runs in the parse worker so the search index is a merge, not a re-tokenisation.
 * With `stemmed` ({@link hasStemmedField} of the config), headings and text carry the stemmed copy; title
 * and aliases never do (names are matched exactly, and the entity prior and name match handle them).
 */
export function noteTokens(note: Pick<NoteRecord, 'title' | 'aliases'>, chunks: Pick<Chunk, 'heading_path' | 'text'>[], stemmed = false): NoteTokens {
  return {
    title: fieldTokens(note.title),
    aliases: fieldTokens(note.aliases.join(' ')),
    chunks: chunks.map((c) => ({ headings: fieldTokens(c.heading_path.join(' '), stemmed), text: fieldTokens(c.text, stemmed) })),
  };
}

/**
 * Query terms: tokenised, normalised, de-duplicated in first-seen order, stop words removed unless
 * every term is one.
 */
export function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const token of tokenize(query)) {
    const term = processTerm(token);
    if (term !== null) seen.add(term);
  }
  const terms = [...seen];
  const content = terms.filter((t) => !STOP_WORDS.has(t));
  return content.length > 0 ? content : terms;
}

/**
 * The common terms of a query: its stop words ({@link STOP_WORDS}), distinct, in first-seen order, when it
 * has other terms too (a query of stop words only has them as its {@link queryTerms}), else none.
 * `search()` scores them like any term, but only in chunks that one of the query's other terms found
 * (docs/INDEX.md "Common terms"): the rule of Lucene's CommonTermsQuery and Elasticsearch's `common`
 * terms query, where high-frequency terms are used for scoring only, so IDF down-weights them and they
 * never make a chunk a hit on their own. Example: `Sentience is not` → `['is', 'not']`; `the of` → `[]`.
 */
export function commonTerms(query: string): string[] {
  const seen = new Set<string>();
  let content = false;
  for (const token of tokenize(query)) {
    const term = processTerm(token);
    if (term === null) continue;
    if (STOP_WORDS.has(term)) seen.add(term);
    else content = true;
  }
  return content ? [...seen] : [];
}

/**
 * The query as a phrase: every term in query order, stop words and repeats kept (`queryTerms` drops
 * them). Used by the phrase re-rank of `search()` (src/search/phrase.ts).
 */
export function phraseTerms(query: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(query)) {
    const term = processTerm(token);
    if (term !== null) out.push(term);
  }
  return out;
}

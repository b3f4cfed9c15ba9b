/**
 * The eval query set, built deterministically from a vault's index (and, for the real vault, the
 * Ghostlight files next to it: scripts/eval/ghostlight.mjs). Families:
 *
 * - `section`: a note's title plus words of one of its heading sections — the section a lore author
 *   means when they name an entity and a topic ("Cetacean Navigators distress formation ledgers").
 * - `section_mixed`: the same, with two words of another section of the same note mixed in (the query
 *   still names more of the target section than of the other).
 * - `requirement`: requirement → excerpt pairs (the text a packet or projected context asks for, and
 *   the ref its source excerpt cites).
 * - `known_item`: 2–6 consecutive words of a paragraph (the bench's seeded prose queries; the
 *   paragraph is the known item) — scripts/bench/queries.mjs, reused as is.
 * - `name`: a note's file name (the bench's note-name lookups; any chunk of the note counts).
 *
 * Every query has a stable `id`, its `split` (scripts/eval/split.mjs) and `targets`: the line ranges
 * (vault path, 1-based inclusive lines) any of which a hit may overlap to count.
 */
import { collectSentences, generateQueryItems, nameQueryItems } from '../bench/queries.mjs';
import { listFiles } from '../bench/vault.mjs';
import { mulberry32, randInt, sampleIndices } from '../bench/prng.mjs';
import { splitOf } from './split.mjs';

/**
 * @typedef {{ path: string, line_start: number, line_end: number }} Target
 * @typedef {{ id: string, family: string, split: 'dev' | 'held_out', query: string | null,
 *   query_source?: { file: string, pointer: string }, targets: Target[] }} EvalQuery
 *   `query` is null in the committed set when the text is read from a Ghostlight file (`query_source`
 *   names it), so the repository never copies the real packets' text.
 */

/** Words of at least this many letters count as content words of a section. */
const MIN_WORD = 4;

/** Words a section query never picks (function words the search drops anyway, and markup residue). */
const SKIP_WORDS = new Set(
  ('about after also another because been before being between both could does down each even every from have here into just ' +
    'more most much must only other over same should some such than that their them then there these they this those through ' +
    'under very were what when where which while will with within without would your http https').split(' '),
);

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

/**
 * Plain words of a chunk's markdown: wikilinks by their display text, markdown links by their label,
 * URLs, embeds, heading markers and emphasis dropped.
 * @param {string} text
 * @returns {string[]}
 */
export function plainWords(text) {
  const plain = text
    .replace(/!\[\[[^\]]*\]\]/g, ' ')
    .replace(/\[\[(?:[^\]|]*\|)?([^\]]*)\]\]/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ');
  return plain.match(WORD) ?? [];
}

/** Lower-cased, diacritic-free form used to compare words. @param {string} w */
const fold = (w) => w.toLowerCase().normalize('NFD').replace(/\p{M}+/gu, '');

/**
 * Content words of a text, distinct by folded form, in first-seen order, minus `exclude` (folded).
 * @param {string} text
 * @param {Set<string>} exclude
 * @returns {string[]}
 */
function contentWords(text, exclude) {
  const seen = new Set();
  const out = [];
  for (const w of plainWords(text)) {
    const f = fold(w);
    if (f.length < MIN_WORD || /^\d/.test(f) || SKIP_WORDS.has(f) || exclude.has(f) || seen.has(f)) continue;
    seen.add(f);
    out.push(w);
  }
  return out;
}

/**
 * Heading sections of every note: consecutive chunks with the same heading path, with their combined
 * line range. Notes in path order (code units), sections in file order.
 * @param {{ notes: { path: string, title: string }[], chunks: { path: string, chunk_index: number,
 *   line_start: number, line_end: number, heading_path: string[], text: string }[] }} index
 * @returns {{ path: string, title: string, heading: string, line_start: number, line_end: number, text: string }[][]}
 */
export function noteSections(index) {
  const byPath = new Map();
  for (const c of index.chunks) {
    const list = byPath.get(c.path);
    if (list) list.push(c);
    else byPath.set(c.path, [c]);
  }
  const notes = [...index.notes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return notes.map((n) => {
    const chunks = (byPath.get(n.path) ?? []).slice().sort((a, b) => a.chunk_index - b.chunk_index);
    const sections = [];
    for (const c of chunks) {
      const heading = c.heading_path.join(' > ');
      const last = sections[sections.length - 1];
      if (last && last.heading === heading) {
        last.line_end = c.line_end;
        last.text += '\n' + c.text;
      } else {
        sections.push({ path: n.path, title: n.title, heading, line_start: c.line_start, line_end: c.line_end, text: c.text });
      }
    }
    return sections;
  });
}

/**
 * Section-finding queries (families `section` and `section_mixed`).
 *
 * A section qualifies when it has at least 6 content words not in the note's title. Up to `limit`
 * qualifying sections are drawn with mulberry32(`seed`); for each, the `section` query is the title
 * plus 4 of its content words, and — when the note has another qualifying section with at least 2
 * words the target lacks — the `section_mixed` query is the title plus 3 target words and 2 words of
 * that other section. Words are drawn with the same generator and kept in text order.
 * @param {Parameters<typeof noteSections>[0]} index
 * @param {{ seed: number, limit: number }} options
 * @returns {EvalQuery[]}
 */
export function sectionQueries(index, { seed, limit }) {
  const rand = mulberry32(seed);
  const all = [];
  for (const sections of noteSections(index)) {
    const titleWords = new Set(plainWords(sections[0]?.title ?? '').map(fold));
    const words = sections.map((s) => contentWords(s.text, titleWords));
    sections.forEach((s, i) => {
      if (words[i].length >= 6) all.push({ s, words: words[i], siblings: sections.map((o, j) => ({ o, w: words[j] })).filter((_, j) => j !== i && words[j].length >= 6) });
    });
  }
  const picked = sampleIndices(rand, all.length, limit).sort((a, b) => a - b);
  const pick = (list, n) => sampleIndices(rand, list.length, n).sort((a, b) => a - b).map((i) => list[i]);
  const out = [];
  for (const i of picked) {
    const { s, words, siblings } = all[i];
    const target = [{ path: s.path, line_start: s.line_start, line_end: s.line_end }];
    const at = `${s.path}#${s.heading || '(top)'}@L${s.line_start}`;
    const pure = `section:${at}`;
    out.push({ id: pure, family: 'section', split: splitOf(pure, seed), query: [s.title, ...pick(words, 4)].join(' '), targets: target });
    const own = new Set(words.map(fold));
    const others = siblings.map(({ o, w }) => ({ o, w: w.filter((x) => !own.has(fold(x))) })).filter((x) => x.w.length >= 2);
    if (others.length === 0) continue;
    const other = others[randInt(rand, others.length)];
    const mixedId = `section_mixed:${at}+L${other.o.line_start}`;
    out.push({
      id: mixedId, family: 'section_mixed', split: splitOf(mixedId, seed),
      query: [s.title, ...pick(words, 3), ...pick(other.w, 2)].join(' '), targets: target,
    });
  }
  return out;
}

/**
 * Known-item and name-lookup queries, exactly as the bench builds them (scripts/bench/queries.mjs) on
 * the vault at `root`.
 * @param {string} root vault folder
 * @param {{ seed: number, knownItems: number, names: number }} options
 * @returns {Promise<EvalQuery[]>}
 */
export async function benchQueries(root, { seed, knownItems, names }) {
  const paths = await listFiles(root);
  const sentences = await collectSentences(root, paths);
  const out = [];
  const seen = new Set();
  generateQueryItems(sentences, knownItems, seed).forEach((q, i) => {
    const id = `known_item:${q.source.path}@L${q.source.line_start}:${q.query}`;
    if (seen.has(id)) return; // a small vault repeats queries to fill the count; each counts once here
    seen.add(id);
    out.push({ id, family: 'known_item', split: splitOf(id, seed), query: q.query, targets: [q.source], n: i });
  });
  for (const q of nameQueryItems(paths, names, seed)) {
    const id = `name:${q.source.path}`;
    out.push({ id, family: 'name', split: splitOf(id, seed), query: q.query, targets: [q.source] });
  }
  return out.map(({ n, ...q }) => q);
}

/**
 * Requirement → excerpt pairs from a committed file (`lore-fixtures/eval/requirements.json`, written
 * for the fixture vault): `{ pairs: [{ id, query, refs }] }`, each ref resolved with the library's
 * `resolveRef` (a `#Heading` ref is its whole section, a bare note ref the whole note).
 * @param {any} api loretrace's public API (dist/index.js)
 * @param {any} index
 * @param {{ pairs: { id: string, query: string, refs: string[] }[] }} doc
 * @param {number} seed
 * @returns {EvalQuery[]}
 */
export function requirementQueriesFrom(api, index, doc, seed) {
  return doc.pairs.map((p) => {
    const id = `requirement:${p.id}`;
    const targets = p.refs.map((ref) => {
      const r = api.resolveRef(index, ref);
      return { path: r.path, line_start: r.line_start, line_end: r.line_end };
    });
    return { id, family: 'requirement', split: splitOf(id, seed), query: p.query, targets };
  });
}

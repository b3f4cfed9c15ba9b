/**
 * The fixed, seeded query set: prose queries of 2–6 consecutive words taken from the vault's own
 * sentences (paragraph text only — no headings, tables, code or frontmatter), picked with a seeded
 * PRNG, so the same source vault and seed always give the same 200 queries at every scale.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeProcessor, decode } from './plain.mjs';
import { mulberry32, randInt } from './prng.mjs';

/** Plain text of an mdast subtree (text and inline code values, wikilink brackets dropped). */
function nodeText(node) {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value;
  if (!node.children) return '';
  return node.children.map(nodeText).join('');
}

/** `[[Target|Alias]]` → `Alias`, `[[Target]]` → `Target`, `![[x]]` → ``. @param {string} s */
function unwiki(s) {
  return s.replace(/!\[\[[^\]]*\]\]/g, ' ').replace(/\[\[(?:[^\]|]*\|)?([^\]]*)\]\]/g, '$1');
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

/**
 * @typedef {{ words: string[], path: string, line_start: number, line_end: number }} Sentence
 *   a sentence's words and the paragraph it stands in (vault path NFC, 1-based inclusive lines)
 */

/**
 * Sentences (≥ 4 words each) of every paragraph of the given notes, in path order, with the line
 * range of their paragraph (the "known item" a query made from the sentence should find).
 * @param {string} root
 * @param {string[]} paths vault-relative, sorted
 * @returns {Promise<Sentence[]>}
 */
export async function collectSentences(root, paths) {
  const processor = makeProcessor();
  const out = [];
  for (const rel of paths) {
    const tree = processor.parse(decode(await readFile(join(root, ...rel.split('/')))));
    const stack = [tree];
    const paragraphs = [];
    while (stack.length) {
      const node = stack.pop();
      if (node.type === 'paragraph') paragraphs.push(node);
      else if (node.children && node.type !== 'table' && node.type !== 'code') {
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
      }
    }
    for (const p of paragraphs) {
      const text = unwiki(nodeText(p)).replace(/\s+/g, ' ');
      for (const sentence of text.split(/(?<=[.!?;:])\s+/)) {
        const words = sentence.match(WORD) ?? [];
        if (words.length >= 4) {
          out.push({ words, path: rel.normalize('NFC'), line_start: p.position?.start.line ?? 0, line_end: p.position?.end.line ?? 0 });
        }
      }
    }
  }
  return out;
}

/**
 * `count` queries from `sentences`: each picks a sentence, a length of 2–6 words (capped by the
 * sentence) and a start position, all from mulberry32(`seed`). Duplicates are redrawn (up to a bound);
 * if the vault is too small for `count` distinct queries, the remainder repeat earlier ones in order.
 * Each item keeps its source paragraph (`null` when sentences are bare word arrays).
 * @param {(Sentence | string[])[]} sentences
 * @param {number} count
 * @param {number} seed
 * @returns {{ query: string, source: { path: string, line_start: number, line_end: number } | null }[]}
 */
export function generateQueryItems(sentences, count, seed) {
  if (sentences.length === 0) throw new Error('bench: the source vault has no prose sentences to build queries from');
  const rand = mulberry32(seed);
  const seen = new Set();
  const out = [];
  let attempts = 0;
  while (out.length < count && attempts < count * 50) {
    attempts++;
    const s = sentences[randInt(rand, sentences.length)];
    const words = Array.isArray(s) ? s : s.words;
    const len = Math.min(words.length, 2 + randInt(rand, 5));
    const start = randInt(rand, words.length - len + 1);
    const q = words.slice(start, start + len).join(' ');
    if (seen.has(q)) continue;
    seen.add(q);
    out.push({ query: q, source: Array.isArray(s) ? null : { path: s.path, line_start: s.line_start, line_end: s.line_end } });
  }
  const unique = out.length;
  for (let i = 0; out.length < count; i++) out.push(out[i % unique]);
  return out;
}

/** The query strings of {@link generateQueryItems}. @returns {string[]} */
export function generateQueries(sentences, count, seed) {
  return generateQueryItems(sentences, count, seed).map((q) => q.query);
}

/**
 * Known-item hit rate at k: the share of queries for which some hit of the top-k lies in the query's
 * source paragraph (same note path once the `cNNN/` copy folder is dropped, overlapping lines). Every
 * copy of the paragraph counts, since the copies are identical.
 * @param {({ path: string, line_start: number, line_end: number } | null)[]} sources
 * @param {{ path: string, line_start: number, line_end: number }[][]} tops hits per query (already cut to k)
 * @returns {number | null} null when nothing is comparable
 */
export function knownItemRate(sources, tops) {
  let n = 0;
  let found = 0;
  for (let i = 0; i < Math.min(sources.length, tops?.length ?? 0); i++) {
    const src = sources[i];
    if (!src) continue;
    n++;
    const hit = tops[i].some(
      (h) => h.path.slice(h.path.indexOf('/') + 1) === src.path && h.line_start <= src.line_end && h.line_end >= src.line_start,
    );
    if (hit) found++;
  }
  return n === 0 ? null : found / n;
}

/**
 * Note-name lookups: the file names (without `.md`) of up to `count` notes whose name is unique in the
 * source vault (so `index` and other repeated names are left out), picked with mulberry32(`seed`) and
 * kept in path order. The known item is the note itself: any of its chunks counts (lines 1 … ∞).
 * @param {string[]} paths vault-relative, sorted
 * @param {number} count
 * @param {number} seed
 * @returns {{ query: string, source: { path: string, line_start: number, line_end: number } }[]}
 */
export function nameQueryItems(paths, count, seed) {
  const stem = (p) => p.slice(p.lastIndexOf('/') + 1).replace(/\.md$/i, '');
  const seen = new Map();
  for (const p of paths) seen.set(stem(p), (seen.get(stem(p)) ?? 0) + 1);
  const unique = paths.filter((p) => seen.get(stem(p)) === 1);
  const rand = mulberry32(seed);
  const picked = new Set();
  while (picked.size < Math.min(count, unique.length)) picked.add(randInt(rand, unique.length));
  return [...picked].sort((a, b) => a - b).map((i) => ({
    query: stem(unique[i]),
    source: { path: unique[i].normalize('NFC'), line_start: 1, line_end: Number.MAX_SAFE_INTEGER },
  }));
}

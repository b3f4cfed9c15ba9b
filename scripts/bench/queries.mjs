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
 * Sentences (as word arrays, ≥ 4 words each) of every paragraph of the given notes, in path order.
 * @param {string} root
 * @param {string[]} paths vault-relative, sorted
 * @returns {Promise<string[][]>}
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
        if (words.length >= 4) out.push(words);
      }
    }
  }
  return out;
}

/**
 * `count` queries from `sentences`: each picks a sentence, a length of 2–6 words (capped by the
 * sentence) and a start position, all from mulberry32(`seed`). Duplicates are redrawn (up to a bound);
 * if the vault is too small for `count` distinct queries, the remainder repeat earlier ones in order.
 * @param {string[][]} sentences
 * @param {number} count
 * @param {number} seed
 * @returns {string[]}
 */
export function generateQueries(sentences, count, seed) {
  if (sentences.length === 0) throw new Error('bench: the source vault has no prose sentences to build queries from');
  const rand = mulberry32(seed);
  const seen = new Set();
  const out = [];
  let attempts = 0;
  while (out.length < count && attempts < count * 50) {
    attempts++;
    const words = sentences[randInt(rand, sentences.length)];
    const len = Math.min(words.length, 2 + randInt(rand, 5));
    const start = randInt(rand, words.length - len + 1);
    const q = words.slice(start, start + len).join(' ');
    if (seen.has(q)) continue;
    seen.add(q);
    out.push(q);
  }
  const unique = out.length;
  for (let i = 0; out.length < count; i++) out.push(out[i % unique]);
  return out;
}

/**
 * The plain-pipeline anchor: what a straightforward markdown search index costs when built with the
 * same well-kept libraries loretrace uses, without any of loretrace's work-saving (worker threads,
 * caching, compact persistence, query pruning). Single-threaded by design:
 *
 *   read every file → unified + remark-parse + remark-gfm + remark-frontmatter → heading chunks
 *   → MiniSearch with default options (fields: ['text']) → JSON.stringify → write file.
 *
 * Heading chunks here: the text before the first top-level heading, then one chunk per top-level
 * heading up to the next one (frontmatter excluded, trailing blank lines trimmed). Chunk ids are
 * `path#chunkN` (N 0-based). Lines split at CRLF, CR or LF, as in loretrace.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkFrontmatter from 'remark-frontmatter';
import MiniSearch from 'minisearch';

/** The remark processor every anchor uses (frozen once). */
export function makeProcessor() {
  return unified().use(remarkParse).use(remarkGfm).use(remarkFrontmatter, ['yaml']).freeze();
}

const utf8 = new TextDecoder('utf-8');

/** Decode bytes as UTF-8 and drop a BOM. @param {Uint8Array} bytes */
export function decode(bytes) {
  const text = utf8.decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Lines of `text` (CRLF | CR | LF; a final break does not start an extra line). @param {string} text */
export function splitLinesPlain(text) {
  if (text === '') return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Heading chunks of one parsed note.
 * @param {string} path vault-relative path (used in ids)
 * @param {string} text the note's text
 * @param {any} tree mdast root of `text`
 * @returns {{ id: string, path: string, chunk_index: number, line_start: number, line_end: number, text: string }[]}
 */
export function headingChunks(path, text, tree) {
  const lines = splitLinesPlain(text);
  let first = 1;
  const starts = [];
  for (const node of tree.children) {
    if (node.type === 'yaml' && node.position) first = node.position.end.line + 1;
    else if (node.type === 'heading' && node.position) starts.push(node.position.start.line);
  }
  const bounds = [];
  if (starts.length === 0 || starts[0] > first) bounds.push(first);
  for (const s of starts) if (s >= first) bounds.push(s);
  const chunks = [];
  for (let i = 0; i < bounds.length; i++) {
    const start = bounds[i];
    let end = i + 1 < bounds.length ? bounds[i + 1] - 1 : lines.length;
    while (end >= start && lines[end - 1].trim() === '') end--;
    if (end < start) continue;
    const chunkText = lines.slice(start - 1, end).join('\n');
    const n = chunks.length;
    chunks.push({ id: `${path}#chunk${n}`, path, chunk_index: n, line_start: start, line_end: end, text: chunkText });
  }
  return chunks;
}

/** MiniSearch with default options over chunk texts (the "plain BM25" of the issue). */
export function newPlainMiniSearch() {
  return new MiniSearch({ fields: ['text'] });
}

/** The options `MiniSearch.loadJSON` needs to revive a {@link newPlainMiniSearch} index. */
export const PLAIN_MINISEARCH_OPTIONS = Object.freeze({ fields: ['text'] });

/**
 * Run the whole plain pipeline once over `paths` (vault-relative) of `root`, saving the index JSON to
 * `outFile`. Returns counts and the stage split in milliseconds.
 * @param {string} root
 * @param {string[]} paths
 * @param {string} outFile
 */
export async function runPlainPipeline(root, paths, outFile) {
  const t0 = performance.now();
  const processor = makeProcessor();
  const ms = newPlainMiniSearch();
  let chunkCount = 0;
  let parseMs = 0;
  for (const rel of paths) {
    const bytes = readFileSync(join(root, ...rel.split('/')));
    const text = decode(bytes);
    const p0 = performance.now();
    const tree = processor.parse(text);
    parseMs += performance.now() - p0;
    const chunks = headingChunks(rel, text, tree);
    chunkCount += chunks.length;
    ms.addAll(chunks.map((c) => ({ id: c.id, text: c.text })));
  }
  const t1 = performance.now();
  const json = JSON.stringify(ms);
  await writeFile(outFile, json);
  const t2 = performance.now();
  return { chunks: chunkCount, json_bytes: Buffer.byteLength(json), parse_ms: parseMs, build_ms: t1 - t0, save_ms: t2 - t1 };
}

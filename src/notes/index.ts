/**
 * Notes stage public surface: lines, parsing, the wikilink grammar, chunks, links.
 * One barrel for src/notes, src/chunks and src/links.
 */
export { splitLines, sliceLines, detectLineEnding } from './lines.js';
export { parseNote } from './parse.js';
export type { ParseOptions, ParsedNote } from './parse.js';
export { parseMarkdown } from './markdown.js';
export type { MarkdownSyntax } from './markdown.js';
export type { PathologyHit, PathologyThreshold } from './pathological.js';
export { wikiLinkSyntax, wikiLinkFromMarkdown, remarkWikiLink, parseWikiLinkContent } from './wikilink.js';
export type { WikiLink, WikiLinkParts } from './wikilink.js';
export { chunkNote, DEFAULT_CHUNK_WORD_BUDGET } from '../chunks/chunk.js';
export type { ChunkOptions } from '../chunks/chunk.js';
export { extractLinks } from '../links/extract.js';
export { resolveLink, resolveLinks, buildLinkLookup } from '../links/resolve.js';
export type { LinkLookup, ResolveOptions } from '../links/resolve.js';
export { targetClasses } from '../links/classes.js';

/**
 * Link extraction: one pass over a note's mdast collects every wikilink, embed, markdown link,
 * external URL and `#tag` (as {@link LinkRecord}s), plus `^block` markers and inline tags for the note
 * record. Nothing inside code (fenced, indented, inline), HTML or frontmatter counts.
 */
import type { ImageReference, LinkReference, Nodes, Parents } from 'mdast';
import type { BlockInfo, Chunk, EmbedSize, LinkPosition, LinkRecord, LinkSyntax } from '../types.js';
import { locateOffset } from '../notes/lines.js';
import type { MarkdownSyntax } from '../notes/markdown.js';
import { plainText } from '../notes/text.js';

/** Context flags of the walk, set on a node's children: inside a table cell, heading, list item, link. */
export const IN_TABLE = 1;
export const IN_HEADING = 2;
export const IN_LIST = 4;
export const IN_LINK = 8;

/** A URL scheme (`https:`, `mailto:`, `obsidian:`): such a destination is an external link. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/**
 * A field line: optional block-quote and list markers, then a bold label ending in a colon
 * (`**Primary actors:**` or `**Primary actors**:`). A link after the label is in position `field`.
 * Written so that no two adjacent parts can match the same characters (each `>` group starts with `>`):
 * the earlier form `[ \t]*(?:>[ \t]?)*[ \t]*` backtracked quadratically on a line of many spaces
 * (a 1,000-line nested list spent 4 s here).
 */
const FIELD = /^[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?\*\*[^*]+?(?::\*\*|\*\*[ \t]*:)/;
/** Inline tag (Obsidian): `#` + letters, digits, `_`, `-`, `/`; at least one non-digit; after whitespace. */
const TAG = /(^|\s)#([\p{L}\p{N}_/-]+)/gu;
/**
 * Bare URL (GFM "extended autolink", linear approximation): `http://`, `https://` or `www.` after the
 * start, whitespace or `*_~(`, up to whitespace or `<`; trailing `?!.,:*_~'"` and unbalanced `)` are
 * not part of it. `www.` URLs get `http://` as GFM does.
 */
const BARE_URL = /(^|[\s*_~(])((?:https?:\/\/|www\.)[^\s<]+)/g;
/** Block marker (Obsidian): ` ^id` at the end of a line; id = Latin letters, digits, dashes. */
const BLOCK = /(^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$/gm;

/** What one pass over a note yields. Internal result of {@link collectNoteRefs}. */
export interface NoteRefs {
  links: LinkRecord[];
  /** Inline tags without `#`, in first-seen order, de-duplicated case-insensitively. */
  tags: string[];
  blocks: BlockInfo[];
}

/**
 * Every link occurrence of a parsed note, in file order (line, then column).
 *
 * Each record has the 1-based line and column (UTF-16 code units) of the link's first character (`[`,
 * `!`, `<`, `#` or the URL's first letter), the chunk containing it, the syntax class (`wikilink`,
 * `heading_link` for `[[T#H]]`/`[[#H]]`, `block_link` for `[[T#^b]]`, `embed` for `![[…]]` and markdown
 * images, `markdown_link`, `external` for destinations with a URL scheme, `tag`), the position class
 * (`table` > `heading` > `field` > `list_item` > `prose`, first that applies), raw text, target,
 * fragment and display text. Resolution is `pending` (wikilinks and markdown links, see
 * `resolveLinks`), `external` or `tag`.
 *
 * @param syntax the note as returned by `parseMarkdown`.
 * @param chunks the note's chunks (from `chunkNote`), used for `chunk_index`.
 */
export function extractLinks(syntax: MarkdownSyntax, chunks: readonly Chunk[]): LinkRecord[] {
  return collectNoteRefs(syntax, chunks).links;
}

/** Obsidian's embed size: `300` or `640x480` (digits only, `x` between). */
const EMBED_SIZE = /^(\d{1,9})(?:x(\d{1,9}))?$/;

/**
 * Split an embed's display into display text and size, as Obsidian reads `![[Map.png|300]]`,
 * `![[Map.png|640x480]]` and `![Engelbart|100x145](url)` (help: "Embed files", "Basic formatting
 * syntax" → external images): a display that is all size is no display text; `alt|size` keeps `alt`.
 */
export function embedDisplay(display: string | null): { display: string | null; size: EmbedSize | null } {
  if (display === null) return { display, size: null };
  const bar = display.lastIndexOf('|');
  const tail = bar === -1 ? display : display.slice(bar + 1).trim();
  const m = EMBED_SIZE.exec(tail);
  if (!m) return { display, size: null };
  const size: EmbedSize = { width: Number(m[1]), height: m[2] === undefined ? null : Number(m[2]) };
  const text = bar === -1 ? '' : display.slice(0, bar).trim();
  return { display: text === '' ? null : text, size };
}

function decodeOnce(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A bare URL without its trailing `?!.,:*_~'"` and unbalanced `)` (GFM's rule). Linear: the parentheses
 * are counted once (cutting with `split` per character was quadratic on a URL ending in many `)`).
 */
function trimUrlTail(url: string): string {
  let opens = 0;
  let closes = 0;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 40) opens++;
    else if (c === 41) closes++;
  }
  let end = url.length;
  while (end > 0) {
    const last = url[end - 1] as string;
    if ('?!.,:*_~\'"'.includes(last)) end--;
    else if (last === ')' && closes > opens) {
      closes--;
      end--;
    } else break;
  }
  return url.slice(0, end);
}

/**
 * One mdast pass over a parsed note: its links, inline tags and block markers. Internal; used by
 * parseNote (src/notes/parse.ts), which runs it after chunking.
 *
 * The algorithm, one named step each:
 * 1. {@link startCollection}: the line → chunk lookup and the position classifier the records need;
 * 2. {@link walkNote}: a pre-order walk in document order; {@link visitNode} records wikilinks, embeds
 *    and markdown links from their nodes, and {@link scanText} finds tags, bare URLs and `^block`
 *    markers in text nodes; reference-style links wait for their definitions;
 * 3. {@link resolveReferenceLinks}: `[text][id]` and `![alt][id]` once every definition is known
 *    (a definition may follow its use);
 * 4. the links sorted by line, then column ({@link byFilePosition}).
 *
 * @param syntax the note as returned by `parseMarkdown`.
 * @param chunks the note's chunks (from `chunkNote`), used for `chunk_index`.
 * @returns links in file order; tags without `#` in first-seen order, de-duplicated case-insensitively;
 *   block markers in file order. Never throws.
 */
export function collectNoteRefs(syntax: MarkdownSyntax, chunks: readonly Chunk[]): NoteRefs {
  const c = startCollection(syntax, chunks);
  walkNote(c);
  resolveReferenceLinks(c);
  c.links.sort(byFilePosition);
  return { links: c.links, tags: c.tags, blocks: c.blocks };
}

/** A reference-style link or image met during the walk, with the context flags at its place. */
interface PendingReference {
  node: LinkReference | ImageReference;
  flags: number;
}

/** The state of one {@link collectNoteRefs} pass: the note, its lookups and what has been collected. */
interface Collection {
  syntax: MarkdownSyntax;
  /** Chunk index of a 1-based line, or null for a line outside every chunk. */
  chunkOf: (line: number) => number | null;
  /** Position class of a link starting at a 1-based line and column, under the walk's context flags. */
  positionOf: (flags: number, line: number, column: number) => LinkPosition;
  links: LinkRecord[];
  tags: string[];
  /** Lower-cased tags already in `tags`. */
  seenTags: Set<string>;
  blocks: BlockInfo[];
  /** Link definitions (`[id]: url`), by normalised identifier. */
  definitions: Map<string, string>;
  references: PendingReference[];
}

/** Step 1: an empty collection over `syntax`, with its chunk lookup and position classifier. */
function startCollection(syntax: MarkdownSyntax, chunks: readonly Chunk[]): Collection {
  return {
    syntax,
    chunkOf: chunkLookup(chunks, syntax.lines.length),
    positionOf: positionClassifier(syntax.lines),
    links: [],
    tags: [],
    seenTags: new Set(),
    blocks: [],
    definitions: new Map(),
    references: [],
  };
}

/**
 * Line → chunk index, for a note of `lineCount` lines whose chunks cover 1-based inclusive
 * `line_start`–`line_end` ranges. Lines outside every chunk (and outside the note) give null.
 */
export function chunkLookup(chunks: readonly Chunk[], lineCount: number): (line: number) => number | null {
  const lineChunk = new Int32Array(lineCount + 2).fill(-1);
  for (const c of chunks) lineChunk.fill(c.chunk_index, c.line_start, c.line_end + 1);
  return (line) => {
    const c = lineChunk[line] ?? -1;
    return c === -1 ? null : c;
  };
}

/**
 * The position class of a link: `table` > `heading` > `field` > `list_item` > `prose`, the first that
 * applies. `flags` are the walk's context bits (inside a table cell, heading, list item); `field` means
 * the link's 1-based `column` lies after a bold label ending in a colon on its line ({@link FIELD}).
 * Each line's label end is computed once.
 *
 * @param lines the note's lines (1-based line `n` is `lines[n - 1]`).
 */
export function positionClassifier(lines: readonly string[]): (flags: number, line: number, column: number) => LinkPosition {
  const fieldEnds = new Map<number, number>();
  const fieldEnd = (line: number): number => {
    let end = fieldEnds.get(line);
    if (end === undefined) {
      const m = FIELD.exec(lines[line - 1] ?? '');
      end = m ? m[0].length : -1;
      fieldEnds.set(line, end);
    }
    return end;
  };
  return (flags, line, column) => {
    if (flags & IN_TABLE) return 'table';
    if (flags & IN_HEADING) return 'heading';
    const fe = fieldEnd(line);
    if (fe !== -1 && column > fe) return 'field';
    if (flags & IN_LIST) return 'list_item';
    return 'prose';
  };
}

/**
 * A link record at a 1-based line and column (UTF-16 code units), with its chunk and position class
 * filled in. Keys are always in the same order, so the note record's JSON is byte-stable.
 */
function linkRecord(
  c: Collection,
  flags: number,
  at: { line: number; column: number },
  fields: Pick<LinkRecord, 'syntax' | 'raw' | 'target' | 'fragment' | 'display' | 'size' | 'resolution'>,
): LinkRecord {
  const { line, column } = at;
  return {
    source_path: c.syntax.path,
    line,
    column,
    chunk_index: c.chunkOf(line),
    syntax: fields.syntax,
    position: c.positionOf(flags, line, column),
    raw: fields.raw,
    target: fields.target,
    fragment: fields.fragment,
    display: fields.display,
    ...(fields.size ? { size: fields.size } : {}),
    resolution: fields.resolution,
  };
}

/**
 * Record a link that is one mdast node (wikilink, embed, markdown link or image): position and raw text
 * from the node; an embed's display is split into text and size ({@link embedDisplay}). `url` non-null
 * makes it an external link.
 */
function pushNodeLink(
  c: Collection,
  node: Nodes,
  flags: number,
  syntaxClass: LinkSyntax,
  target: string,
  fragment: string | null,
  display: string | null,
  url: string | null,
): void {
  const pos = node.position!;
  let size: EmbedSize | null = null;
  if (syntaxClass === 'embed') ({ display, size } = embedDisplay(display));
  c.links.push(
    linkRecord(c, flags, pos.start, {
      syntax: syntaxClass,
      raw: c.syntax.text.slice(pos.start.offset, pos.end.offset),
      target,
      fragment,
      display,
      ...(size ? { size } : {}),
      resolution: url !== null ? { status: 'external', url } : { status: 'pending' },
    }),
  );
}

/**
 * What a markdown link or image destination points at: `external` for a URL with a scheme (kept
 * verbatim), `none` for an empty destination, else a vault target and `#fragment`, each
 * percent-decoded once (a malformed escape is kept as written); an empty fragment is null.
 */
export function splitDestination(
  url: string,
): { kind: 'external'; url: string } | { kind: 'none' } | { kind: 'vault'; target: string; fragment: string | null } {
  if (SCHEME.test(url)) return { kind: 'external', url };
  if (url === '') return { kind: 'none' };
  const hash = url.indexOf('#');
  const dest = hash === -1 ? url : url.slice(0, hash);
  const frag = hash === -1 ? '' : url.slice(hash + 1);
  return { kind: 'vault', target: decodeOnce(dest), fragment: frag === '' ? null : decodeOnce(frag) };
}

/** Record a markdown link (`image` false) or image/embed (`image` true) by its destination. */
function pushDestination(c: Collection, node: Nodes, flags: number, url: string, display: string | null, image: boolean): void {
  const dest = splitDestination(url);
  if (dest.kind === 'external') pushNodeLink(c, node, flags, 'external', url, null, display, url);
  else if (dest.kind === 'vault') pushNodeLink(c, node, flags, image ? 'embed' : 'markdown_link', dest.target, dest.fragment, display, null);
}

/**
 * The syntax class of a wikilink node: `embed` for `![[…]]`, else `wikilink` without a fragment,
 * `block_link` for `[[T#^b]]`, `heading_link` for `[[T#H]]` and `[[#H]]`.
 */
export function wikilinkSyntax(embed: boolean, fragment: string | null): LinkSyntax {
  if (embed) return 'embed';
  if (fragment === null) return 'wikilink';
  return fragment.startsWith('^') ? 'block_link' : 'heading_link';
}

/**
 * Step 2: the iterative pre-order walk (document order, no recursion, so deep nesting cannot overflow
 * the stack), carrying context flags from each node to its children.
 */
function walkNote(c: Collection): void {
  const stack: [Nodes, number][] = [[c.syntax.root, 0]];
  while (stack.length > 0) {
    const [node, flags] = stack.pop()!;
    const childFlags = visitNode(c, node, flags);
    if (childFlags === null || !('children' in node)) continue;
    const children = (node as Parents).children as Nodes[];
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i] as Nodes, childFlags]);
  }
}

/**
 * Record what one node contributes and return the context flags for its children, or null when its
 * children are not visited: code, HTML and frontmatter hold no links; wikilinks, images, definitions and
 * text are leaves here. A link's children are its display text, where tags and URLs do not count.
 */
function visitNode(c: Collection, node: Nodes, flags: number): number | null {
  switch (node.type) {
    case 'code':
    case 'inlineCode':
    case 'html':
    case 'yaml':
      return null;
    case 'definition':
      c.definitions.set(node.identifier, node.url);
      return null;
    case 'wikiLink': {
      const fragment = node.fragment === '' ? null : node.fragment;
      const display = node.display === '' ? null : node.display;
      pushNodeLink(c, node, flags, wikilinkSyntax(node.embed, fragment), node.target, fragment, display, null);
      return null;
    }
    case 'link':
      pushDestination(c, node, flags, node.url, plainText(node) || null, false);
      return flags | IN_LINK;
    case 'image':
      pushDestination(c, node, flags, node.url, node.alt || null, true);
      return null;
    case 'linkReference':
      c.references.push({ node, flags });
      return flags | IN_LINK;
    case 'imageReference':
      c.references.push({ node, flags });
      return null;
    case 'text':
      scanText(c, node, flags);
      return null;
    case 'tableCell':
      return flags | IN_TABLE;
    case 'heading':
      return flags | IN_HEADING;
    case 'listItem':
      return flags | IN_LIST;
    default:
      return flags;
  }
}

/**
 * A text node's span for the scanners: its text as micromark parsed it (comments and math masked, so a
 * tag, URL or block marker inside them is not one), its UTF-16 start offset in the note, and whether
 * the character before it is whitespace (or it starts the note).
 */
export interface TextSpan {
  raw: string;
  start: number;
  beforeIsSpace: boolean;
}

/** Find tags, bare URLs and block markers in one text node and record them. Links' display text has none. */
function scanText(c: Collection, node: Nodes, flags: number): void {
  const pos = node.position;
  if (!pos || pos.start.offset === undefined || pos.end.offset === undefined) return;
  const { parsed, text, lineStarts } = c.syntax;
  const start = pos.start.offset;
  const before = start > 0 ? parsed.charCodeAt(start - 1) : 10;
  const span: TextSpan = {
    raw: parsed.slice(start, pos.end.offset),
    start,
    beforeIsSpace: before === 32 || before === 9 || before === 10 || before === 13,
  };
  if (!(flags & IN_LINK)) {
    for (const { at, name } of findTags(span)) {
      c.links.push(
        linkRecord(c, flags, locateOffset(lineStarts, at), {
          syntax: 'tag', raw: `#${name}`, target: name, fragment: null, display: null, resolution: { status: 'tag' },
        }),
      );
      const key = name.toLowerCase();
      if (!c.seenTags.has(key)) {
        c.seenTags.add(key);
        c.tags.push(name);
      }
    }
    for (const { at, url } of findBareUrls(span, text)) {
      const href = url.startsWith('www.') ? `http://${url}` : url;
      c.links.push(
        linkRecord(c, flags, locateOffset(lineStarts, at), {
          syntax: 'external', raw: url, target: href, fragment: null, display: url, resolution: { status: 'external', url: href },
        }),
      );
    }
  }
  for (const { at, id } of findBlockMarkers(span, text)) {
    const { line } = locateOffset(lineStarts, at);
    c.blocks.push({ id, line, chunk_index: c.chunkOf(line) ?? -1 });
  }
}

/**
 * Inline tags in a text span ({@link TAG}): each tag's name without `#` and the UTF-16 offset of its `#`
 * in the note. A `#` at the span's start counts only after whitespace; an all-digit name (`#42`) is not
 * a tag (Obsidian: "at least one non-numerical character").
 */
export function findTags(span: TextSpan): { at: number; name: string }[] {
  const { raw, start, beforeIsSpace } = span;
  if (!raw.includes('#')) return [];
  const found: { at: number; name: string }[] = [];
  TAG.lastIndex = 0;
  for (let m = TAG.exec(raw); m; m = TAG.exec(raw)) {
    const name = m[2] as string;
    const hashAt = m.index + (m[1] as string).length;
    if (hashAt === 0 && !beforeIsSpace) continue;
    if (/^\d+$/.test(name)) continue;
    found.push({ at: start + hashAt, name });
  }
  return found;
}

/**
 * Bare URLs in a text span ({@link BARE_URL}): each URL without its trailing punctuation
 * ({@link trimUrlTail}) and the UTF-16 offset of its first letter in the note. A URL at the span's start
 * counts only after whitespace or `*_~(` in `source` (the note's text); `www.` or `scheme://` alone is
 * not a URL.
 */
export function findBareUrls(span: TextSpan, source: string): { at: number; url: string }[] {
  const { raw, start } = span;
  if (!raw.includes('://') && !raw.includes('www.')) return [];
  const found: { at: number; url: string }[] = [];
  BARE_URL.lastIndex = 0;
  for (let m = BARE_URL.exec(raw); m; m = BARE_URL.exec(raw)) {
    const at = m.index + (m[1] as string).length;
    if (at === 0 && start > 0 && !/[\s*_~(]/.test(source[start - 1] as string)) continue;
    const url = trimUrlTail(m[2] as string);
    if (url === 'www.' || url.endsWith('://')) continue;
    found.push({ at: start + at, url });
  }
  return found;
}

/**
 * Block markers in a text span ({@link BLOCK}): each `^id` that ends its line in `source` (the note's
 * text), with the UTF-16 offset of its `^` in the note. A `^` at the span's start counts only after
 * whitespace.
 */
export function findBlockMarkers(span: TextSpan, source: string): { at: number; id: string }[] {
  const { raw, start, beforeIsSpace } = span;
  if (!raw.includes('^')) return [];
  const found: { at: number; id: string }[] = [];
  BLOCK.lastIndex = 0;
  for (let m = BLOCK.exec(raw); m; m = BLOCK.exec(raw)) {
    const caretAt = m.index + (m[1] as string).length;
    if (caretAt === 0 && !beforeIsSpace) continue;
    const after = source.charCodeAt(start + m.index + m[0].length);
    if (!(Number.isNaN(after) || after === 10 || after === 13)) continue;
    found.push({ at: start + caretAt, id: m[2] as string });
  }
  return found;
}

/** Step 3: reference-style links and images, resolved against the note's definitions; undefined ids are no link. */
function resolveReferenceLinks(c: Collection): void {
  for (const { node, flags } of c.references) {
    const url = c.definitions.get(node.identifier);
    if (url === undefined) continue;
    if (node.type === 'imageReference') pushDestination(c, node, flags, url, node.alt || null, true);
    else pushDestination(c, node, flags, url, plainText(node) || null, false);
  }
}

/** Step 4's order: by line, then column (both 1-based). */
function byFilePosition(a: LinkRecord, b: LinkRecord): number {
  return a.line - b.line || a.column - b.column;
}

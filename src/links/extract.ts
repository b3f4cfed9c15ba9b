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

const IN_TABLE = 1;
const IN_HEADING = 2;
const IN_LIST = 4;
const IN_LINK = 8;

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

/** One mdast pass: links, inline tags and block markers. Internal; used by parseNote. */
export function collectNoteRefs(syntax: MarkdownSyntax, chunks: readonly Chunk[]): NoteRefs {
  const { path, text: source, parsed, lines, lineStarts, root } = syntax;
  const lineChunk = new Int32Array(lines.length + 2).fill(-1);
  for (const c of chunks) lineChunk.fill(c.chunk_index, c.line_start, c.line_end + 1);
  const chunkOf = (line: number): number | null => {
    const c = lineChunk[line] ?? -1;
    return c === -1 ? null : c;
  };

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
  const positionOf = (flags: number, line: number, column: number): LinkPosition => {
    if (flags & IN_TABLE) return 'table';
    if (flags & IN_HEADING) return 'heading';
    const fe = fieldEnd(line);
    if (fe !== -1 && column > fe) return 'field';
    if (flags & IN_LIST) return 'list_item';
    return 'prose';
  };

  const links: LinkRecord[] = [];
  const tags: string[] = [];
  const seenTags = new Set<string>();
  const blocks: BlockInfo[] = [];
  const definitions = new Map<string, string>();
  const references: { node: LinkReference | ImageReference; flags: number }[] = [];

  const push = (
    node: Nodes,
    flags: number,
    syntaxClass: LinkSyntax,
    target: string,
    fragment: string | null,
    display: string | null,
    url: string | null,
  ): number => {
    const pos = node.position!;
    const line = pos.start.line;
    const column = pos.start.column;
    let size: EmbedSize | null = null;
    if (syntaxClass === 'embed') ({ display, size } = embedDisplay(display));
    links.push({
      source_path: path,
      line,
      column,
      chunk_index: chunkOf(line),
      syntax: syntaxClass,
      position: positionOf(flags, line, column),
      raw: source.slice(pos.start.offset, pos.end.offset),
      target,
      fragment,
      display,
      ...(size ? { size } : {}),
      resolution: url !== null ? { status: 'external', url } : { status: 'pending' },
    });
    return links.length - 1;
  };

  const pushDestination = (node: Nodes, flags: number, url: string, display: string | null, image: boolean): void => {
    if (SCHEME.test(url)) {
      push(node, flags, 'external', url, null, display, url);
      return;
    }
    if (url === '') return;
    const hash = url.indexOf('#');
    const dest = hash === -1 ? url : url.slice(0, hash);
    const frag = hash === -1 ? '' : url.slice(hash + 1);
    push(node, flags, image ? 'embed' : 'markdown_link', decodeOnce(dest), frag === '' ? null : decodeOnce(frag), display, null);
  };

  const scanText = (node: Nodes, flags: number): void => {
    const pos = node.position;
    if (!pos || pos.start.offset === undefined || pos.end.offset === undefined) return;
    const start = pos.start.offset;
    // The masked text: a tag, URL or block marker inside a comment or math is not one.
    const raw = parsed.slice(start, pos.end.offset);
    const before = start > 0 ? parsed.charCodeAt(start - 1) : 10;
    const beforeIsSpace = before === 32 || before === 9 || before === 10 || before === 13;
    if (!(flags & IN_LINK) && raw.includes('#')) {
      TAG.lastIndex = 0;
      for (let m = TAG.exec(raw); m; m = TAG.exec(raw)) {
        const name = m[2] as string;
        const hashAt = m.index + (m[1] as string).length;
        if (hashAt === 0 && !beforeIsSpace) continue;
        if (/^\d+$/.test(name)) continue;
        const { line, column } = locateOffset(lineStarts, start + hashAt);
        links.push({
          source_path: path,
          line,
          column,
          chunk_index: chunkOf(line),
          syntax: 'tag',
          position: positionOf(flags, line, column),
          raw: `#${name}`,
          target: name,
          fragment: null,
          display: null,
          resolution: { status: 'tag' },
        });
        const key = name.toLowerCase();
        if (!seenTags.has(key)) {
          seenTags.add(key);
          tags.push(name);
        }
      }
    }
    if (!(flags & IN_LINK) && (raw.includes('://') || raw.includes('www.'))) {
      BARE_URL.lastIndex = 0;
      for (let m = BARE_URL.exec(raw); m; m = BARE_URL.exec(raw)) {
        const at = m.index + (m[1] as string).length;
        if (at === 0 && start > 0 && !/[\s*_~(]/.test(source[start - 1] as string)) continue;
        const url = trimUrlTail(m[2] as string);
        if (url === 'www.' || url.endsWith('://')) continue;
        const { line, column } = locateOffset(lineStarts, start + at);
        const href = url.startsWith('www.') ? `http://${url}` : url;
        links.push({
          source_path: path,
          line,
          column,
          chunk_index: chunkOf(line),
          syntax: 'external',
          position: positionOf(flags, line, column),
          raw: url,
          target: href,
          fragment: null,
          display: url,
          resolution: { status: 'external', url: href },
        });
      }
    }
    if (raw.includes('^')) {
      BLOCK.lastIndex = 0;
      for (let m = BLOCK.exec(raw); m; m = BLOCK.exec(raw)) {
        const caretAt = m.index + (m[1] as string).length;
        if (caretAt === 0 && !beforeIsSpace) continue;
        const after = source.charCodeAt(start + m.index + m[0].length);
        if (!(Number.isNaN(after) || after === 10 || after === 13)) continue;
        const { line } = locateOffset(lineStarts, start + caretAt);
        blocks.push({ id: m[2] as string, line, chunk_index: chunkOf(line) ?? -1 });
      }
    }
  };

  // Iterative pre-order walk (document order), carrying context flags.
  const stack: [Nodes, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, flags] = stack.pop()!;
    let childFlags = flags;
    switch (node.type) {
      case 'code':
      case 'inlineCode':
      case 'html':
      case 'yaml':
        continue;
      case 'definition':
        definitions.set(node.identifier, node.url);
        continue;
      case 'wikiLink': {
        const fragment = node.fragment === '' ? null : node.fragment;
        const cls: LinkSyntax = node.embed
          ? 'embed'
          : fragment === null
            ? 'wikilink'
            : fragment.startsWith('^')
              ? 'block_link'
              : 'heading_link';
        push(node, flags, cls, node.target, fragment, node.display === '' ? null : node.display, null);
        continue;
      }
      case 'link':
        pushDestination(node, flags, node.url, plainText(node) || null, false);
        childFlags |= IN_LINK;
        break;
      case 'image':
        pushDestination(node, flags, node.url, node.alt || null, true);
        continue;
      case 'linkReference':
        references.push({ node, flags });
        childFlags |= IN_LINK;
        break;
      case 'imageReference':
        references.push({ node, flags });
        continue;
      case 'text':
        scanText(node, flags);
        continue;
      case 'tableCell':
        childFlags |= IN_TABLE;
        break;
      case 'heading':
        childFlags |= IN_HEADING;
        break;
      case 'listItem':
        childFlags |= IN_LIST;
        break;
      default:
        break;
    }
    if ('children' in node) {
      const children = (node as Parents).children as Nodes[];
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i] as Nodes, childFlags]);
    }
  }

  // Reference-style links: resolved against their definitions after the walk (definitions may follow).
  for (const { node, flags } of references) {
    const url = definitions.get(node.identifier);
    if (url === undefined) continue;
    if (node.type === 'imageReference') pushDestination(node, flags, url, node.alt || null, true);
    else pushDestination(node, flags, url, plainText(node) || null, false);
  }

  links.sort((a, b) => a.line - b.line || a.column - b.column);
  return { links, tags, blocks };
}

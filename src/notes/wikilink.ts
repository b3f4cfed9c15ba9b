/**
 * The one wikilink grammar of loretrace: a micromark syntax extension plus an mdast-util-from-markdown
 * extension, so every `[[…]]` and `![[…]]` becomes an mdast `wikiLink` node with an exact position.
 * The indexer, the proxy and the validators all get links from here (house style: "one grammar,
 * defined once", after Quartz's exported `wikilinkRegex`; structure after micromark's own extensions).
 *
 * Why not an existing package: `micromark-extension-wiki-link@0.0.4` predates micromark 4 and has no
 * embeds; `@flowershow/remark-wiki-link` did not install from the registry (a missing peer version).
 * Neither documents positions for `\|` inside GFM table cells.
 *
 * Grammar (Obsidian's, per https://obsidian.md/help/links and https://obsidian.md/help/embeds):
 *
 * ```
 * wikilink  = [ "!" ] "[[" content "]]"        ; "!" makes it an embed
 * content   = target [ "#" fragment ] [ sep display ]
 * sep       = "|" | "\|"                        ; the first one; "\|" is how a GFM table cell writes it
 * fragment  = heading-text *( "#" heading-text ) | "^" block-id
 * ```
 *
 * - `content` is one line (no line ending), is not empty, does not start with `|`, and contains no
 *   `[[` (so `[[a [[b]] c]]` yields the link `[[b]]`). A single `]` inside is kept (`[[Sq]uare]]`
 *   targets `Sq]uare`, as Obsidian does); the first `]]` ends the link.
 * - Target, fragment and display are trimmed of surrounding spaces and tabs. `[[#Heading]]` has the
 *   empty target `''` (a link into the same note). `![[Map.png|300]]` has display `300` (a size).
 * - Being a micromark *text* construct, it never fires inside code (fenced with backticks or tildes,
 *   indented, inline), HTML, autolinks or link destinations. Several links on one line stay separate.
 */
import type { Literal } from 'mdast';
import type {
  CompileContext,
  Extension as FromMarkdownExtension,
  Token,
} from 'mdast-util-from-markdown';
import type { Code, Construct, Effects, Extension, State, TokenizeContext } from 'micromark-util-types';
import type {} from 'remark-parse';
import type { Processor } from 'unified';

/** mdast node for a wikilink or embed. `value` is the raw content between the brackets. */
export interface WikiLink extends Literal {
  type: 'wikiLink';
  /** Raw text between `[[` and `]]`, exactly as written (escapes kept). */
  value: string;
  /** True for `![[…]]`. */
  embed: boolean;
  /** Target before `#` and `|`, trimmed; `''` for `[[#Heading]]`. */
  target: string;
  /** Text after the first `#` (heading path `A#B`, or `^block`), trimmed; null when absent. */
  fragment: string | null;
  /** Text after the separator (alias, or an embed size such as `300`), trimmed; null when absent. */
  display: string | null;
}

declare module 'mdast' {
  interface PhrasingContentMap {
    wikiLink: WikiLink;
  }
  interface RootContentMap {
    wikiLink: WikiLink;
  }
}

declare module 'micromark-util-types' {
  interface TokenTypeMap {
    wikiLink: 'wikiLink';
    wikiLinkMarker: 'wikiLinkMarker';
    wikiLinkData: 'wikiLinkData';
  }
}

/** The parts of a wikilink's content: `T#F|D` → `{ target: 'T', fragment: 'F', display: 'D' }`. */
export interface WikiLinkParts {
  target: string;
  fragment: string | null;
  display: string | null;
}

const trimWs = (s: string): string => s.replace(/^[ \t]+|[ \t]+$/g, '');

/**
 * Split a wikilink's content (the text between `[[` and `]]`) into target, fragment and display,
 * following the grammar above: the first `|` (or `\|`) separates the display; the first `#` before it
 * starts the fragment.
 *
 * @example parseWikiLinkContent('Tower#^b1\\|see') → { target: 'Tower', fragment: '^b1', display: 'see' }
 */
export function parseWikiLinkContent(content: string): WikiLinkParts {
  let head = content;
  let display: string | null = null;
  const bar = content.indexOf('|');
  if (bar !== -1) {
    head = content.slice(0, bar);
    if (head.endsWith('\\')) head = head.slice(0, -1);
    display = trimWs(content.slice(bar + 1));
  }
  let fragment: string | null = null;
  const hash = head.indexOf('#');
  if (hash !== -1) {
    fragment = trimWs(head.slice(hash + 1));
    head = head.slice(0, hash);
  }
  return { target: trimWs(head), fragment, display };
}

const BANG = 33;
const LEFT = 91;
const RIGHT = 93;
const BAR = 124;

function isLineEndingOrEof(code: Code): boolean {
  return code === null || code < -2;
}

/** Partial construct: succeeds when the next two codes are `]]`. */
const closing: Construct = { tokenize: tokenizeClosing, partial: true };

function tokenizeClosing(this: TokenizeContext, effects: Effects, ok: State, nok: State): State {
  return first;
  function first(code: Code): State | undefined {
    if (code !== RIGHT) return nok(code);
    effects.enter('wikiLinkMarker');
    effects.consume(code);
    return second;
  }
  function second(code: Code): State | undefined {
    if (code !== RIGHT) return nok(code);
    effects.consume(code);
    effects.exit('wikiLinkMarker');
    return ok;
  }
}

function tokenizeWikiLink(this: TokenizeContext, effects: Effects, ok: State, nok: State): State {
  let previous: Code = null;
  return start;

  function start(code: Code): State | undefined {
    effects.enter('wikiLink');
    effects.enter('wikiLinkMarker');
    if (code === BANG) {
      effects.consume(code);
      return open1;
    }
    return open1(code);
  }
  function open1(code: Code): State | undefined {
    if (code !== LEFT) return nok(code);
    effects.consume(code);
    return open2;
  }
  function open2(code: Code): State | undefined {
    if (code !== LEFT) return nok(code);
    effects.consume(code);
    effects.exit('wikiLinkMarker');
    return first;
  }
  function first(code: Code): State | undefined {
    // Not empty, not starting with the separator, not `[[[`.
    if (isLineEndingOrEof(code) || code === RIGHT || code === BAR || code === LEFT) return nok(code);
    effects.enter('wikiLinkData');
    return inside(code);
  }
  function inside(code: Code): State | undefined {
    if (isLineEndingOrEof(code)) return nok(code);
    if (code === LEFT && previous === LEFT) return nok(code);
    if (code === RIGHT) return effects.check(closing, close, data)(code);
    return data(code);
  }
  function data(code: Code): State | undefined {
    previous = code;
    effects.consume(code);
    return inside;
  }
  function close(code: Code): State | undefined {
    effects.exit('wikiLinkData');
    effects.enter('wikiLinkMarker');
    effects.consume(code);
    return close2;
  }
  function close2(code: Code): State | undefined {
    effects.consume(code);
    effects.exit('wikiLinkMarker');
    effects.exit('wikiLink');
    return ok;
  }
}

const wikiLinkConstruct: Construct = { name: 'wikiLink', tokenize: tokenizeWikiLink };

/**
 * micromark syntax extension for `[[…]]` and `![[…]]` (text constructs on `[` and `!`, tried before
 * CommonMark's link and image starts).
 */
export function wikiLinkSyntax(): Extension {
  return { text: { [LEFT]: wikiLinkConstruct, [BANG]: wikiLinkConstruct } };
}

/** mdast-util-from-markdown extension turning the `wikiLink` token into a {@link WikiLink} node. */
export function wikiLinkFromMarkdown(): FromMarkdownExtension {
  return {
    enter: {
      wikiLink(this: CompileContext, token: Token) {
        const node: WikiLink = { type: 'wikiLink', value: '', embed: false, target: '', fragment: null, display: null };
        this.enter(node, token);
      },
    },
    exit: {
      wikiLinkData(this: CompileContext, token: Token) {
        const node = this.stack[this.stack.length - 1] as unknown as WikiLink;
        node.value = this.sliceSerialize(token);
      },
      wikiLink(this: CompileContext, token: Token) {
        const node = this.stack[this.stack.length - 1] as unknown as WikiLink;
        node.embed = this.sliceSerialize(token).charCodeAt(0) === BANG;
        const parts = parseWikiLinkContent(node.value);
        node.target = parts.target;
        node.fragment = parts.fragment;
        node.display = parts.display;
        this.exit(token);
      },
    },
  };
}

/**
 * unified plugin registering both extensions on a remark-parse processor:
 * `unified().use(remarkParse).use(remarkGfm).use(remarkWikiLink)`.
 */
export function remarkWikiLink(this: Processor): void {
  const data = this.data();
  (data.micromarkExtensions ??= []).push(wikiLinkSyntax());
  (data.fromMarkdownExtensions ??= []).push(wikiLinkFromMarkdown());
}

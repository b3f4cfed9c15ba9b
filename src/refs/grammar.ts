/**
 * The lore ref grammar — defined once, used by the traversal, the proxy, `show`, the packet builder
 * and the validators.
 *
 * ```
 * ref       = [ namespace ":" ] path [ "#" fragment ]
 * namespace = 1*( ALPHA / DIGIT / "_" / "." / "-" )        ; must equal the vault's namespace
 * path      = segment *( "/" segment ) [ "/" ]             ; vault-relative POSIX, `.md` kept
 * segment   = 1*( any character except "/", "\", "#", control characters )   ; not "." or ".."
 * fragment  = "chunk" 1*DIGIT                               ; a chunk:        #chunk3
 *           / "L" 1*DIGIT [ "-L" 1*DIGIT ]                  ; a line range:   #L10-L20, #L10
 *           / "^" 1*( ALPHA / DIGIT / "-" / "_" )           ; a block id:     #^rescue-ledgers
 *           / 1*char                                        ; a heading text: #Rescue Ledgers
 * ```
 *
 * A path that ends with `/` names a folder: it is a *prefix* (for `allowed_prefixes`, `deny_prefix:`,
 * config `future_era_prefixes` / `hidden_prefixes`) and carries no fragment.
 *
 * Refs are matched against the index, never turned into file-system paths; so anything that could
 * mean something to a file system or a URL parser is refused with `bad_ref`: `..` or `.` segments,
 * empty segments, a backslash, a leading `/`, a drive letter (`C:`), a scheme (`file:`, `https://`),
 * percent-encoding (`%2F`), control characters, NUL, unpaired surrogates, bidirectional controls,
 * leading or trailing whitespace, line or chunk numbers beyond 2^53-1, and a namespace other than the
 * vault's. Unicode is NFC-normalised exactly once, before any check.
 *
 * Origin: the ref shape of Ghostlight packets (`AetheriaLore:Aetheria/Worldbuilding/…md#Heading`,
 * seed 000/001); fragments follow Obsidian (`#Heading`, `#^block`) plus loretrace's `#chunkN` and
 * `#L10-L20`.
 */
import { LoretraceError } from '../errors.js';
import type { LoreRef, VaultPath } from '../types.js';

/** The fragment of a ref. Lines are 1-based and inclusive; chunk indexes are 0-based. */
export type RefFragment =
  | null
  | { kind: 'heading'; text: string }
  | { kind: 'chunk'; index: number }
  | { kind: 'lines'; start: number; end: number }
  | { kind: 'block'; id: string };

/** A parsed ref. `path` is NFC, vault-relative POSIX; `is_prefix` is true when it ends with `/`. */
export interface ParsedRef {
  namespace: string;
  path: VaultPath;
  fragment: RefFragment;
  /** True when the path ends with `/` (a folder prefix). Prefixes never carry a fragment. */
  is_prefix: boolean;
}

/** Options of {@link parseRef}. */
export interface ParseRefOptions {
  /** The vault's namespace: a ref without one gets it, a ref with another one is refused. */
  namespace: string;
  /** What the ref is, for messages (`required_seed_refs[2]`); default `ref`. */
  label?: string;
}

const URL_SCHEMES = new Set([
  'file', 'http', 'https', 'ftp', 'ftps', 'data', 'javascript', 'mailto', 'obsidian', 'vscode', 'app', 'blob', 'ws', 'wss', 'ssh', 'git',
]);
const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001F\u007F-\u009F]/;
const PERCENT_RE = /%[0-9A-Fa-f]{2}/;
/** An unpaired UTF-16 surrogate: not Unicode text, so no file name can hold it. */
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Bidirectional embedding/override/isolate controls (Trojan Source): a ref must read as it is. */
const BIDI_CONTROL_RE = /[\u202A-\u202E\u2066-\u2069]/;
const CHUNK_RE = /^chunk(0|[1-9][0-9]*)$/;
const LINES_RE = /^L([0-9]+)(?:-L([0-9]+))?$/;
const BLOCK_RE = /^\^([A-Za-z0-9_-]+)$/;

function bad(input: string, label: string, why: string, expected: string): LoretraceError {
  return new LoretraceError(
    'bad_ref',
    `${label} ${JSON.stringify(input)} is not a valid lore ref: ${why}`,
    { expected, data: { ref: input } },
  );
}

/**
 * Parse a ref (see the grammar at the top of this file).
 *
 * @param input  `AetheriaLore:Aetheria/Worldbuilding/Territories.md#chunk2`, `World/Politics/`, …
 * @returns `{ namespace, path, fragment, is_prefix }` with `path` NFC-normalised.
 * @throws LoretraceError `bad_ref` for every refused form listed at the top of this file; the message
 *   quotes the input and says what is wrong.
 */
export function parseRef(input: string, options: ParseRefOptions): ParsedRef {
  const label = options.label ?? 'ref';
  if (typeof input !== 'string') throw bad(String(input), label, 'not a string', 'a string');
  const raw = input.normalize('NFC');
  if (raw.length === 0) throw bad(raw, label, 'it is empty', 'Namespace:path/to/note.md');
  if (raw.includes('\u0000')) throw bad(raw, label, 'it contains a NUL character', 'no control characters');
  if (CONTROL_RE.test(raw)) throw bad(raw, label, 'it contains a control character', 'no control characters');
  if (LONE_SURROGATE_RE.test(raw)) throw bad(raw, label, 'it contains an unpaired UTF-16 surrogate (not Unicode text)', 'well-formed Unicode text');
  if (BIDI_CONTROL_RE.test(raw)) throw bad(raw, label, 'it contains a bidirectional control character (U+202A–U+202E, U+2066–U+2069)', 'no bidirectional control characters');
  if (raw.trim() !== raw) throw bad(raw, label, 'it has leading or trailing whitespace', 'no surrounding whitespace');
  if (raw.includes('\\')) throw bad(raw, label, 'it contains a backslash', 'POSIX `/` separators');

  let namespace = options.namespace;
  let rest = raw;
  const colon = raw.indexOf(':');
  if (colon >= 0) {
    const ns = raw.slice(0, colon);
    const after = raw.slice(colon + 1);
    if (/^[A-Za-z]$/.test(ns) && (after.startsWith('/') || after === '')) {
      throw bad(raw, label, `it starts with a drive letter (${ns}:)`, 'a vault-relative path');
    }
    if (after.startsWith('//') || (URL_SCHEMES.has(ns.toLowerCase()) && ns !== options.namespace)) {
      throw bad(raw, label, `it has a URL scheme (${ns}:)`, `a ref in namespace ${options.namespace}`);
    }
    if (!NAMESPACE_RE.test(ns)) {
      throw bad(raw, label, `${JSON.stringify(ns)} before ":" is not a namespace`, 'Namespace:path (no ":" inside paths)');
    }
    if (ns !== options.namespace) {
      throw bad(raw, label, `its namespace ${ns} is not this vault's (${options.namespace})`, `namespace ${options.namespace}`);
    }
    namespace = ns;
    rest = after;
  }

  const hash = rest.indexOf('#');
  const path = hash >= 0 ? rest.slice(0, hash) : rest;
  const fragText = hash >= 0 ? rest.slice(hash + 1) : null;

  if (path.length === 0) throw bad(raw, label, 'its path is empty', 'a vault-relative path');
  if (path.startsWith('/')) throw bad(raw, label, 'it starts with "/"', 'a vault-relative path');
  if (/^[A-Za-z]:/.test(path)) throw bad(raw, label, 'it starts with a drive letter', 'a vault-relative path');
  if (path.includes(':')) throw bad(raw, label, 'its path contains ":"', 'a vault-relative path');
  if (PERCENT_RE.test(path)) throw bad(raw, label, 'it contains percent-encoding', 'the decoded path (spaces as spaces)');
  const isPrefix = path.endsWith('/');
  const segments = (isPrefix ? path.slice(0, -1) : path).split('/');
  for (const s of segments) {
    if (s === '..') throw bad(raw, label, 'it contains a ".." segment', 'a path inside the vault');
    if (s === '.') throw bad(raw, label, 'it contains a "." segment', 'a normalised path');
    if (s === '') throw bad(raw, label, 'it contains an empty segment ("//")', 'a normalised path');
  }

  let fragment: RefFragment = null;
  if (fragText !== null) {
    if (isPrefix) throw bad(raw, label, 'a folder prefix cannot carry a fragment', 'folder/ or note.md#fragment');
    fragment = parseFragment(raw, label, fragText);
  }
  return { namespace, path: path as VaultPath, fragment, is_prefix: isPrefix };
}

function parseFragment(raw: string, label: string, text: string): RefFragment {
  if (text.length === 0) throw bad(raw, label, 'its fragment after "#" is empty', '#Heading, #chunkN, #L10-L20 or #^block');
  const c = CHUNK_RE.exec(text);
  if (c) {
    const index = Number(c[1]);
    if (!Number.isSafeInteger(index)) throw bad(raw, label, `its chunk number ${c[1]} is larger than ${Number.MAX_SAFE_INTEGER}`, '#chunkN with a real chunk number');
    return { kind: 'chunk', index };
  }
  const l = LINES_RE.exec(text);
  if (l) {
    const start = Number(l[1]);
    const end = l[2] === undefined ? start : Number(l[2]);
    for (const [digits, n] of [[l[1]!, start], [l[2] ?? l[1]!, end]] as const) {
      if (!Number.isSafeInteger(n)) throw bad(raw, label, `its line number ${digits} is larger than ${Number.MAX_SAFE_INTEGER}`, '#Lstart-Lend with real line numbers');
    }
    if (start < 1) throw bad(raw, label, 'line numbers start at 1', '#L1 or later');
    if (end < start) throw bad(raw, label, `its line range ends (L${end}) before it starts (L${start})`, '#Lstart-Lend with start ≤ end');
    return { kind: 'lines', start, end };
  }
  if (text.startsWith('^')) {
    const b = BLOCK_RE.exec(text);
    if (!b) throw bad(raw, label, 'its block id has characters other than letters, digits, "-" and "_"', '#^block-id');
    return { kind: 'block', id: b[1]! };
  }
  return { kind: 'heading', text };
}

/**
 * Format a ref: `Namespace:path` plus `#fragment` (`#chunk3`, `#L10-L20`, `#L10` when the range is a
 * single line, `#^id`, `#Heading text`). Inverse of {@link parseRef} for every valid ref.
 */
export function formatRef(namespace: string, path: string, fragment: RefFragment = null): LoreRef {
  return `${namespace}:${path}${formatFragment(fragment)}` as LoreRef;
}

function formatFragment(fragment: RefFragment): string {
  if (fragment === null) return '';
  switch (fragment.kind) {
    case 'chunk':
      return `#chunk${fragment.index}`;
    case 'lines':
      return fragment.start === fragment.end ? `#L${fragment.start}` : `#L${fragment.start}-L${fragment.end}`;
    case 'block':
      return `#^${fragment.id}`;
    case 'heading':
      return `#${fragment.text}`;
  }
}

/**
 * Whole-segment prefix match on vault paths (no namespaces). A prefix ending in `/` admits every path
 * below that folder; a prefix without a trailing `/` admits the path itself and every path below it as
 * a folder. `World/Pre-Elysium/` never admits `World/Pre-Elysium-Extra/x.md`;
 * `World/Politics/Law.md` admits only itself.
 */
export function isUnderPrefix(path: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(prefix + '/');
}

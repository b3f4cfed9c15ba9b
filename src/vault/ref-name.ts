/**
 * Can a vault path be written as a lore ref? (`unreferenceable_name`, docs/INDEX.md "Scan rules").
 *
 * A note is only useful to loretrace if a ref names it: search hits, traversal decisions, proxy
 * lookups, `source_excerpts` and `research_trace` entries all carry `Namespace:path#fragment` refs, and
 * a reviewer verifies them with `parseRef` + `resolveRef` (src/refs/ref.ts). A path that `parseRef`
 * reads back differently (`x#y.md` → note `x`, heading `y.md`) or refuses (`a:b.md`, a newline, `\`,
 * `%45`, leading/trailing whitespace, bidirectional controls) would give refs that never resolve, so
 * the scan keeps such files out of the notes. The rule is exactly parseRef's: a path is referenceable
 * when both `Namespace:path` and the bare `path` parse back to the same path with no fragment — the
 * ref grammar is defined once, in src/refs/grammar.ts, and this module only asks it.
 */
import { formatRef, parseRef } from '../refs/grammar.js';

/** Namespace used for the round trip; any valid namespace gives the same verdict (paths never hold `:`). */
const PROBE_NAMESPACE = 'Vault';

// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001F\u007F-\u009F]/;
const BIDI_RE = /[\u202A-\u202E\u2066-\u2069]/;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PERCENT_RE = /%[0-9A-Fa-f]{2}/;

/** Why a vault path cannot be a ref: the offending character (as shown to users) and the segment holding it. */
export interface RefNameProblem {
  /** The offending character or sequence, printable: `"#"`, `a control character U+000A`, `"%45"`, `leading whitespace`. */
  what: string;
  /** Why a ref cannot carry it, in words (`which a ref reads as the start of a fragment`). */
  why: string;
  /** The path up to and including the segment that holds it (a folder or the file itself). */
  segment: string;
  /** True when `segment` is the file name, false when it is a folder. */
  is_file: boolean;
}

/**
 * The reason `path` cannot be written as a ref, or null when it can (round trip through
 * {@link formatRef} → {@link parseRef}, with and without the namespace, gives the same path, no
 * fragment, not a folder prefix).
 *
 * @param path vault-relative POSIX NFC path of a note.
 * @returns null, or the first problem found (checked in this order: control character, bidirectional
 *   control, unpaired surrogate, backslash, `#`, `:`, percent-encoding, leading / trailing whitespace;
 *   anything else parseRef refuses is reported with parseRef's own reason).
 */
export function refNameProblem(path: string): RefNameProblem | null {
  let reason = 'which a ref cannot name';
  try {
    const full = parseRef(formatRef(PROBE_NAMESPACE, path), { namespace: PROBE_NAMESPACE });
    const bare = parseRef(path, { namespace: PROBE_NAMESPACE });
    const same = (r: typeof full): boolean => r.path === path && r.fragment === null && !r.is_prefix;
    if (same(full) && same(bare)) return null;
  } catch (e) {
    const m = /is not a valid lore ref: (.*)$/.exec((e as Error).message);
    if (m) reason = `which a ref refuses (${m[1]})`;
  }
  const segments = path.split('/');
  const locate = (test: (s: string) => boolean, fallbackLast = true): { segment: string; is_file: boolean } => {
    let i = segments.findIndex(test);
    if (i < 0) i = fallbackLast ? segments.length - 1 : 0;
    return { segment: segments.slice(0, i + 1).join('/'), is_file: i === segments.length - 1 };
  };
  const byChar = (re: RegExp, what: (c: string) => string, why: string): RefNameProblem | null => {
    const m = re.exec(path);
    if (!m) return null;
    return { what: what(m[0]), why, ...locate((s) => new RegExp(re.source).test(s)) };
  };
  return (
    byChar(CONTROL_RE, (c) => `a control character ${codePoint(c)}`, 'which no ref may contain') ??
    byChar(BIDI_RE, (c) => `a bidirectional control character ${codePoint(c)}`, 'which no ref may contain') ??
    byChar(LONE_SURROGATE_RE, (c) => `an unpaired surrogate ${codePoint(c)}`, 'which is not Unicode text') ??
    byChar(/\\/, () => 'a backslash', 'which a ref refuses (only "/" separates folders)') ??
    byChar(/#/, () => '"#"', 'which a ref reads as the start of a fragment') ??
    byChar(/:/, () => '":"', 'which a ref reads as a namespace or drive-letter separator') ??
    byChar(PERCENT_RE, (c) => JSON.stringify(c), 'which a ref refuses as percent-encoding') ??
    (path.trimStart() !== path ? { what: 'leading whitespace', why: 'which a ref refuses', ...locate(() => false, false) } : null) ??
    (path.trimEnd() !== path ? { what: 'trailing whitespace', why: 'which a ref refuses', ...locate(() => false, true) } : null) ??
    { what: 'a form no ref can name', why: reason, ...locate(() => false, true) }
  );
}

/** `U+000A` for one UTF-16 code unit or code point. */
function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * A path as it may appear in a one-line message: JSON-quoted, with every control character,
 * bidirectional control and unpaired surrogate escaped as `\uXXXX` (so a file named with a newline
 * or U+202E cannot break or reorder the line).
 */
export function quotePath(path: string): string {
  return JSON.stringify(path).replace(/[\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

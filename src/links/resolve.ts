/**
 * Link resolution, as Obsidian resolves links (`metadataCache.getFirstLinkpathDest`).
 *
 * Order (first rule that yields a file wins):
 * 1. Empty target (`[[#Heading]]`, `[x](#Heading)`): the source note itself.
 * 2. Relative path: markdown links (always) and wikilinks starting with `./` or `../` are resolved
 *    against the source note's folder (percent-decoded once for markdown links). A markdown link that
 *    misses there falls through to 3–4 (Obsidian looks markdown destinations up vault-wide too);
 *    a `./`/`../` wikilink that misses is unresolved.
 * 3. Exact vault path, with or without `.md` (a leading `/` is dropped), case- and NFC/NFD-insensitive.
 * 4. File name: every note whose base name equals the target's last segment and whose path ends with the
 *    target's whole segments (`[[Politics/index]]` matches `Aetheria/Worldbuilding/Politics/index.md`),
 *    compared case-insensitively after NFC. Several matches → the one in the source note's own folder,
 *    else the shortest path string, else code-unit order; the link is `ambiguous` and lists all
 *    candidates in that order. (Rule observed on Obsidian 1.13.7 through `getFirstLinkpathDest`:
 *    exact vault path, then the source's own folder — an ancestor folder counts for nothing — then
 *    the shortest path string; pvliesdonk/markdown-vault-mcp PR #1380, issue #1350.)
 * 5. Non-markdown files (`![[Map.png|300]]`, `[[Figure 1.png]]`): rules 3–4 against the file list given
 *    in `options.files`; without that list such targets are unresolved.
 *
 * Aliases do not resolve links (Obsidian uses them for suggestions only). Fragments then resolve
 * against the target note: `#Heading` to the first heading whose text matches case-insensitively,
 * ignoring `# | ^ : % [ ] \` and runs of spaces — first the whole fragment (so `#Tower #3` finds the
 * heading `Tower #3`), else, for nested `#A#B`, its last part; `#^block` to the
 * block marker (case-insensitive) — each to its chunk and line — else `broken_fragment`.
 */
import type { Finding } from '../errors.js';
import type { Chunk, HeadingInfo, LinkRecord, LinkResolution, NoteRecord, VaultPath } from '../types.js';

/** Lookup tables built once per vault by {@link buildLinkLookup}; plain Maps, read-only after build. */
export interface LinkLookup {
  /** key(path without `.md`) → note path. */
  notesByPath: Map<string, VaultPath>;
  /** key(base name without `.md`) → note paths, sorted by path length then code-unit order. */
  notesByName: Map<string, VaultPath[]>;
  /** key(path) → non-markdown file path. */
  filesByPath: Map<string, VaultPath>;
  /** key(base name with extension) → file paths, sorted like `notesByName`. */
  filesByName: Map<string, VaultPath[]>;
  /** Note records by path (for fragments). */
  notes: Map<VaultPath, NoteRecord>;
  /** Lazily built: path → normalised heading text → first heading with it. */
  headingIndex: Map<VaultPath, Map<string, HeadingInfo>>;
  /** Notes over the size cap (path → bytes): matched like notes, resolved as `too_large`. */
  tooLarge: Map<VaultPath, number>;
}

/** Options of {@link resolveLinks} and {@link buildLinkLookup}. */
export interface ResolveOptions {
  /** Vault-relative paths of the vault's non-markdown files (images, PDFs), for embeds. */
  files?: readonly VaultPath[];
  /**
   * Notes the scan left unparsed for their size (`file_too_large`): links to them resolve with status
   * `too_large` (path and bytes) instead of `unresolved`, so a big note stays known and linkable.
   */
  tooLarge?: readonly { path: VaultPath; size: number }[];
}

/** Comparison key: NFC, lower case. */
function key(s: string): string {
  return s.normalize('NFC').toLowerCase();
}
function stripMd(s: string): string {
  return /\.md$/i.test(s) ? s.slice(0, -3) : s;
}
function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}
function folderOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i === -1 ? '' : p.slice(0, i);
}
const byLengthThenCode = (a: string, b: string): number => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

/** Normalise `a/./b/../c` (POSIX); null when it climbs above the vault root. */
function normalizePosix(p: string): string | null {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}

/** Heading text as Obsidian compares it in links. */
function headingKey(s: string): string {
  return key(s).replace(/[#|^:%[\]\\]/g, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * Build the lookup tables for a vault's notes (and non-markdown files, from `options.files`).
 * Paths are expected NFC (as `VaultPath` promises); keys are NFC + lower case anyway.
 */
export function buildLinkLookup(notes: readonly NoteRecord[], options: ResolveOptions = {}): LinkLookup {
  const lookup: LinkLookup = {
    notesByPath: new Map(),
    notesByName: new Map(),
    filesByPath: new Map(),
    filesByName: new Map(),
    notes: new Map(),
    headingIndex: new Map(),
    tooLarge: new Map(),
  };
  const add = (byPath: Map<string, VaultPath>, byName: Map<string, VaultPath[]>, path: VaultPath, stem: string): void => {
    if (!byPath.has(key(stem))) byPath.set(key(stem), path);
    const name = key(baseName(stem));
    const list = byName.get(name);
    if (list) list.push(path);
    else byName.set(name, [path]);
  };
  for (const note of notes) {
    lookup.notes.set(note.path, note);
    add(lookup.notesByPath, lookup.notesByName, note.path, stripMd(note.path));
  }
  for (const big of options.tooLarge ?? []) {
    if (lookup.notes.has(big.path)) continue;
    lookup.tooLarge.set(big.path, big.size);
    add(lookup.notesByPath, lookup.notesByName, big.path, stripMd(big.path));
  }
  for (const file of options.files ?? []) {
    if (/\.md$/i.test(file)) continue;
    add(lookup.filesByPath, lookup.filesByName, file, file);
  }
  for (const list of lookup.notesByName.values()) list.sort(byLengthThenCode);
  for (const list of lookup.filesByName.values()) list.sort(byLengthThenCode);
  return lookup;
}

/**
 * A path lookup's hit. An ambiguous name's candidates are kept as the name's one shared list
 * (`matches`, shortest path first) plus `own`, the index in it of the source folder's first candidate
 * (-1: none); the own-folder-first order is built only when read (see {@link ambiguousResolution}).
 */
type PathHit = { path: VaultPath; matches: readonly VaultPath[] | null; own: number; note: boolean };

function byName(
  stem: string,
  fromPath: string,
  byPathMap: Map<string, VaultPath>,
  byNameMap: Map<string, VaultPath[]>,
  stemOf: (p: VaultPath) => string,
  note: boolean,
): PathHit | null {
  const exact = byPathMap.get(key(stem));
  if (exact !== undefined) return { path: exact, matches: null, own: -1, note };
  const suffix = key(stem);
  // Matches depend only on the target's key, so they are computed once per key (not once per link):
  // a vault copied N times would otherwise cost links × N key computations.
  let matches = matchCache.get(byNameMap)?.get(suffix);
  if (matches === undefined) {
    const list = byNameMap.get(key(baseName(stem)));
    matches = list
      ? list.filter((p) => {
          const k = key(stemOf(p));
          return k === suffix || k.endsWith('/' + suffix);
        })
      : [];
    Object.freeze(matches);
    let perMap = matchCache.get(byNameMap);
    if (!perMap) matchCache.set(byNameMap, (perMap = new Map()));
    perMap.set(suffix, matches);
  }
  if (matches.length === 0) return null;
  if (matches.length === 1) return { path: matches[0] as VaultPath, matches: null, own: -1, note };
  // The source note's own folder wins. Only its index is kept, not a reordered copy per (name, folder):
  // at ×1000 (1,000 copies of a vault) such copies held ~260,000 lists of 1,000 paths and ran a
  // traversal out of V8's heap. The folder index is built once per candidate list, so the lookup is O(1).
  const own = folderIndex(matches).get(folderOf(fromPath)) ?? -1;
  return { path: matches[Math.max(own, 0)] as VaultPath, matches, own, note };
}

/** Per name-table cache of name matches (see byName); weak, so it lives exactly as long as its lookup. */
const matchCache = new WeakMap<Map<string, VaultPath[]>, Map<string, readonly VaultPath[]>>();

/** Folder → index of its first candidate, per candidate list (see byName); built once per list. */
const folderIndexCache = new WeakMap<readonly VaultPath[], Map<string, number>>();

/** The index of the first candidate of `matches` in each folder, so the own-folder lookup is O(1). */
function folderIndex(matches: readonly VaultPath[]): Map<string, number> {
  let index = folderIndexCache.get(matches);
  if (!index) {
    index = new Map();
    for (let i = 0; i < matches.length; i++) {
      const f = folderOf(matches[i] as VaultPath);
      if (!index.has(f)) index.set(f, i);
    }
    folderIndexCache.set(matches, index);
  }
  return index;
}

/**
 * The first `n` candidates in own-folder-first order (`matches[own]`, then the others in their
 * shared order), without building the whole order. `n` may exceed the list's length.
 */
function ownFolderFirst(matches: readonly VaultPath[], own: number, n: number = matches.length): VaultPath[] {
  const out: VaultPath[] = [];
  if (own > 0) out.push(matches[own] as VaultPath);
  for (let i = 0; i < matches.length && out.length < n; i++) if (i !== own || own <= 0) out.push(matches[i] as VaultPath);
  return out;
}

/** Where an ambiguous resolution keeps its hit (non-enumerable: JSON, spreads and equality never see it). */
const HIT = Symbol('ambiguous hit');

type AmbiguousResolution = Extract<LinkResolution, { status: 'ambiguous' }> & { readonly [HIT]?: PathHit };

/** The `candidates` getter shared by every ambiguous resolution: the full own-folder-first order, fresh. */
function candidatesOfHit(this: AmbiguousResolution): VaultPath[] {
  const hit = this[HIT] as PathHit;
  return ownFolderFirst(hit.matches ?? [], hit.own);
}

/**
 * An `ambiguous` resolution whose `candidates` (own-folder-first, as the module doc orders them) is an
 * enumerable property computed on each read from the name's shared list: JSON, spreads and equality
 * see the same plain array as before, while a vault of many same-named notes holds one list per name,
 * not one per link or per (name, folder). Each read returns a fresh array (callers may sort it).
 * Keys in the order `status, path, candidates, chunk_index, line`, as the other resolutions.
 */
function ambiguousResolution(hit: PathHit, at?: { chunk_index: number; line: number }): LinkResolution {
  const r = { status: 'ambiguous', path: hit.path } as AmbiguousResolution;
  Object.defineProperty(r, 'candidates', { enumerable: true, get: candidatesOfHit });
  Object.defineProperty(r, HIT, { value: hit });
  if (at) {
    r.chunk_index = at.chunk_index;
    r.line = at.line;
  }
  return r;
}

/**
 * The candidates an `ambiguous_link` finding names: the first 5 in own-folder-first order, then
 * `… and N more` (the full list stays in `resolution.candidates`). Read from the hidden hit when the
 * resolution has one (no full order built), else from `candidates`.
 */
function shownCandidates(r: AmbiguousResolution): { count: number; shown: string } {
  const hit = r[HIT];
  const all = hit?.matches ?? r.candidates;
  const first = hit ? ownFolderFirst(all, hit.own, 5) : all.slice(0, 5);
  const shown = first.join(', ');
  return { count: all.length, shown: all.length > 5 ? `${shown}, … and ${all.length - 5} more` : shown };
}

function findPath(fromPath: VaultPath, target: string, lookup: LinkLookup, markdown: boolean): PathHit | null | 'unresolved' {
  const t = target.normalize('NFC');
  const relative = t.startsWith('./') || t.startsWith('../');
  if (markdown || relative) {
    const folder = folderOf(fromPath);
    const rel = normalizePosix(folder === '' ? t : `${folder}/${t}`);
    if (rel !== null && rel !== '') {
      const n = lookup.notesByPath.get(key(stripMd(rel)));
      if (n !== undefined) return { path: n, matches: null, own: -1, note: true };
      const f = lookup.filesByPath.get(key(rel));
      if (f !== undefined) return { path: f, matches: null, own: -1, note: false };
    }
    if (relative) return 'unresolved';
  }
  const abs = t.replace(/^\/+/, '');
  if (abs === '') return null;
  return (
    byName(stripMd(abs), fromPath, lookup.notesByPath, lookup.notesByName, (p) => stripMd(p), true) ??
    byName(abs, fromPath, lookup.filesByPath, lookup.filesByName, (p) => p, false)
  );
}

function headingsOf(lookup: LinkLookup, path: VaultPath): Map<string, HeadingInfo> {
  let index = lookup.headingIndex.get(path);
  if (!index) {
    index = new Map();
    for (const h of lookup.notes.get(path)?.headings ?? []) {
      const k = headingKey(h.text);
      if (!index.has(k)) index.set(k, h);
    }
    lookup.headingIndex.set(path, index);
  }
  return index;
}

/**
 * Resolve one link target (rules in the module doc).
 *
 * @param fromPath the note the link stands in.
 * @param target the link target without fragment (`''` = the source note itself).
 * @param fragment heading text (`A#B` allowed), `^blockid`, or null.
 * @param lookup from {@link buildLinkLookup}.
 * @param options `markdown: true` for markdown links (relative to the source folder first).
 * @returns `resolved` / `ambiguous` (with `chunk_index` and `line` when a fragment resolved),
 *   `broken_fragment` (the note exists, the fragment does not), `too_large` (the note is over the size
 *   cap; its fragment is not checked), or `unresolved`.
 */
export function resolveLink(
  fromPath: VaultPath,
  target: string,
  fragment: string | null,
  lookup: LinkLookup,
  options: { markdown?: boolean } = {},
): LinkResolution {
  const found: PathHit | null | 'unresolved' =
    target === '' ? { path: fromPath, matches: null, own: -1, note: true } : findPath(fromPath, target, lookup, options.markdown === true);
  if (found === null || found === 'unresolved') return { status: 'unresolved' };
  const hit = found;
  const size = hit.note ? lookup.tooLarge.get(hit.path) : undefined;
  if (size !== undefined) return { status: 'too_large', path: hit.path, size };
  const at = (pos?: { chunk_index: number; line: number }): LinkResolution =>
    hit.matches
      ? ambiguousResolution(hit, pos)
      : pos
        ? { status: 'resolved', path: hit.path, chunk_index: pos.chunk_index, line: pos.line }
        : { status: 'resolved', path: hit.path };
  const frag = fragment?.trim() ?? '';
  if (frag === '' || !hit.note) return at();
  const note = lookup.notes.get(hit.path);
  if (frag.startsWith('^')) {
    const id = frag.slice(1).toLowerCase();
    const block = note?.blocks.find((b) => b.id.toLowerCase() === id);
    return block ? at(block) : { status: 'broken_fragment', path: hit.path, fragment: frag };
  }
  const index = headingsOf(lookup, hit.path);
  const parts = frag.split('#').filter((p) => p.trim() !== '');
  const heading = index.get(headingKey(frag)) ?? index.get(headingKey(parts[parts.length - 1] ?? frag));
  return heading ? at(heading) : { status: 'broken_fragment', path: hit.path, fragment: frag };
}

const KIND: Record<string, string> = {
  wikilink: 'wikilink',
  heading_link: 'heading link',
  block_link: 'block link',
  embed: 'embed',
  markdown_link: 'markdown link',
};

/**
 * Resolve every link of a vault (rules in the module doc). `external` and `tag` records pass through;
 * all other records get a fresh resolution (so re-resolving after an incremental update is safe).
 *
 * @param notes every note of the vault.
 * @param _chunks the vault's chunks (accepted for the indexer contract; fragments resolve through
 *   `note.headings` and `note.blocks`, which carry chunk indexes).
 * @param links link records from `parseNote`, in any order; the output keeps that order.
 * @param options `files`: the vault's non-markdown files, so embeds of images can resolve.
 * @returns new link records plus findings, in link order: `unresolved_link` and `broken_fragment`
 *   (severity `warning`), `ambiguous_link` (severity `info`), each naming source path, line and column
 *   ({@link linkFindings}).
 */
export function resolveLinks(
  notes: readonly NoteRecord[],
  _chunks: readonly Chunk[],
  links: readonly LinkRecord[],
  options: ResolveOptions = {},
): { links: LinkRecord[]; findings: Finding[] } {
  const out = resolveLinkRecords(notes, links, options);
  return { links: out, findings: linkFindings(out) };
}

/**
 * The link records of {@link resolveLinks} without its findings, for a reader that needs the links but
 * may never need the findings (a lazy index builds those only when asked: at 1,000 copies of a vault,
 * 1.4 million `ambiguous_link` messages are about half of the resolved links' memory).
 */
export function resolveLinkRecords(notes: readonly NoteRecord[], links: readonly LinkRecord[], options: ResolveOptions = {}): LinkRecord[] {
  const lookup = buildLinkLookup(notes, options);
  return links.map((link) =>
    link.syntax === 'external' || link.syntax === 'tag'
      ? link
      : {
          ...link,
          resolution: resolveLink(link.source_path, link.target, link.fragment, lookup, {
            markdown: link.syntax === 'markdown_link' || (link.syntax === 'embed' && !link.raw.startsWith('![[')),
          }),
        },
  );
}

/**
 * The findings of resolved link records, in link order: `unresolved_link` and `broken_fragment`
 * (severity `warning`), `ambiguous_link` (severity `info`, naming the first 5 candidates), each naming
 * source path, line and column. Records of other statuses give none.
 */
export function linkFindings(links: readonly LinkRecord[]): Finding[] {
  const findings: Finding[] = [];
  for (const link of links) {
    const resolution = link.resolution;
    const where = `${link.source_path}:${link.line}:${link.column}`;
    const kind = KIND[link.syntax] ?? link.syntax;
    const at = { path: link.source_path, line: link.line, column: link.column };
    if (resolution.status === 'unresolved') {
      findings.push({ code: 'unresolved_link', severity: 'warning', message: `unresolved ${kind} ${link.raw} in ${where}: no note or file matches "${link.target}"`, ...at });
    } else if (resolution.status === 'broken_fragment') {
      const what = resolution.fragment.startsWith('^') ? `no block ${resolution.fragment}` : `no heading "${resolution.fragment}"`;
      findings.push({ code: 'broken_fragment', severity: 'warning', message: `broken fragment in ${kind} ${link.raw} at ${where}: ${resolution.path} has ${what}`, ...at });
    } else if (resolution.status === 'ambiguous') {
      const { count, shown } = shownCandidates(resolution);
      findings.push({
        code: 'ambiguous_link',
        severity: 'info',
        message: `ambiguous ${kind} ${link.raw} in ${where}: ${count} notes match "${link.target}"; resolved to ${resolution.path} (candidates: ${shown})`,
        ...at,
      });
    }
  }
  return findings;
}

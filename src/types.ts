/**
 * Public types shared by every pipeline stage:
 * vault → notes → chunks + links → index → policy → traversal → excerpts/trace → packet / proxy / coverage.
 *
 * Conventions used in every field below (and everywhere in loretrace):
 * - **Lines** are 1-based and inclusive, counted in the *original* file. A line break is CRLF, a lone CR
 *   or a lone LF (each counts as exactly one break). A UTF-8 BOM is not part of line 1's text.
 *   A final line break does not start an extra, empty line: `"a\nb\n"` has 2 lines, `"a\nb"` has 2 lines.
 * - **Text** of a line range is the lines joined with `"\n"` (original breaks normalised to LF, no
 *   trailing break). This is what chunk `text`, excerpt `text` and trace `extracted_constraint` hold.
 * - **Sizes** are in bytes of the file on disk unless a field says characters (UTF-16 code units) or words.
 * - **Paths** are vault-relative POSIX paths, NFC-normalised, with `.md` kept: `Aetheria/Worldbuilding/Territories.md`.
 */

/** Vault-relative POSIX path, NFC-normalised, e.g. `Aetheria/Worldbuilding/Pre-Elysium/Territories.md`. */
export type VaultPath = string & { readonly __brand?: 'VaultPath' };

/**
 * A lore ref: `Namespace:vault/relative/path.md` with an optional `#fragment`
 * (heading text, `chunkN`, `L10-L20` / `L10`, or `^block`). Grammar in src/refs/ref.ts.
 * Example: `AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Territories.md#chunk2`.
 */
export type LoreRef = string & { readonly __brand?: 'LoreRef' };

/** A lore ref whose fragment is `chunkN`: `Namespace:path.md#chunk3`. */
export type ChunkRef = LoreRef & { readonly __chunk?: true };

/** A wikilink target exactly as written between `[[` and `]]`, before `|alias` and after unescaping. */
export type WikiTarget = string & { readonly __brand?: 'WikiTarget' };

/** How a file's lines were terminated. `none` = a single line with no break at all. */
export type LineEnding = 'lf' | 'crlf' | 'cr' | 'mixed' | 'none';

/** One file of the vault as read from disk (stage 1, `scanVault`). */
export interface VaultFile {
  /** Vault-relative path. */
  path: VaultPath;
  /** Absolute path on disk (inside the vault root; symlinks resolved and checked to stay inside). */
  abs_path: string;
  /** Size in bytes. */
  size: number;
  /** Lower-case hex SHA-256 of the raw bytes. */
  sha256: string;
  /** Raw bytes, when read (absent for files skipped by a rule). */
  bytes?: Uint8Array;
}

/** A heading inside a note. */
export interface HeadingInfo {
  /** Heading text as plain text (inline markup and wikilink brackets removed; `[[A|b]]` → `b`). */
  text: string;
  /** 1..6 */
  depth: number;
  /** 1-based line of the heading (for setext headings: the text line, not the underline). */
  line: number;
  /** Chunk the heading starts. */
  chunk_index: number;
}

/** A `^block-id` marker. */
export interface BlockInfo {
  /** Block id without the caret. */
  id: string;
  /** 1-based line the marker stands on. */
  line: number;
  /** Chunk containing that line. */
  chunk_index: number;
}

/** What loretrace knows about one note (one `.md` file). */
export interface NoteRecord {
  path: VaultPath;
  /** Frontmatter `title`, else the file name without `.md`. */
  title: string;
  /** Frontmatter `aliases` (string or list), in file order. */
  aliases: string[];
  /** Frontmatter `tags` plus inline `#tags`, without `#`, de-duplicated, in first-seen order. */
  tags: string[];
  /** Parsed YAML frontmatter, or null when there is none (or it is not a mapping). */
  frontmatter: Record<string, unknown> | null;
  /** Lines covered by the frontmatter block including both `---` fences, or null. */
  frontmatter_lines: { line_start: number; line_end: number } | null;
  /** Size in bytes. */
  size: number;
  /** Lower-case hex SHA-256 of the raw bytes. */
  sha256: string;
  /** Number of lines (see the conventions at the top of this file). 0 for an empty file. */
  line_count: number;
  line_ending: LineEnding;
  /** True when the file starts with a UTF-8 BOM. */
  bom: boolean;
  /** Target classes (folder-derived plus config rules), sorted. See src/links/classes.ts. */
  classes: string[];
  headings: HeadingInfo[];
  blocks: BlockInfo[];
  /** Number of chunks (0 for an empty or frontmatter-only note). */
  chunk_count: number;
}

/**
 * A chunk: a heading section (every ATX or setext heading starts one) or the text before the first
 * heading; a long section is split at block boundaries under the word budget, never inside a fenced
 * code block, table or list item. Frontmatter belongs to no chunk.
 *
 * Invariant (tested on every fixture and the real vault): `text` equals lines `line_start..line_end`
 * of the file joined with `"\n"`; `line_end ≤ line_count`; chunks of a note never overlap and are in
 * file order.
 */
export interface Chunk {
  path: VaultPath;
  /** 0-based, order in the file. */
  chunk_index: number;
  /** Texts of the enclosing headings, outermost first, ending with this chunk's own heading (if any). */
  heading_path: string[];
  line_start: number;
  line_end: number;
  /** Exact text of lines line_start..line_end joined with "\n". */
  text: string;
  /** Lower-case hex SHA-256 of `text` (UTF-8). */
  hash: string;
  /** Whitespace-separated word count of `text`. */
  word_count: number;
}

/** Syntax class of a link (docs/PARSING.md taxonomy). `tag` records are `#tags`, kept for coverage. */
export type LinkSyntax = 'wikilink' | 'markdown_link' | 'embed' | 'heading_link' | 'block_link' | 'external' | 'tag';

/**
 * Position class of a link: where on the page it stands.
 * `field` = a line like `**Primary actors:** [[X]]` (a bold label ending in a colon, then the link).
 * `property` = inside a frontmatter property value (`related: "[[X]]"`; Obsidian's property links).
 */
export type LinkPosition = 'prose' | 'list_item' | 'table' | 'heading' | 'field' | 'property';

/** How a link target resolved (Obsidian's rules; see src/links/resolve.ts). */
export type LinkResolution =
  | { status: 'resolved'; path: VaultPath; chunk_index?: number; line?: number }
  | { status: 'ambiguous'; path: VaultPath; candidates: VaultPath[]; chunk_index?: number; line?: number }
  | { status: 'broken_fragment'; path: VaultPath; fragment: string }
  | { status: 'unresolved' }
  | { status: 'external'; url: string }
  /**
   * The target is a note over `max_file_bytes`: known (so not `unresolved`) but not parsed, so its
   * fragment is not checked. `size` in bytes.
   */
  | { status: 'too_large'; path: VaultPath; size: number }
  /** A `#tag` record (syntax `tag`): not a link to a file, never counted as unresolved. */
  | { status: 'tag' }
  | { status: 'pending' };

/** One link occurrence. */
export interface LinkRecord {
  /** Note the link stands in. */
  source_path: VaultPath;
  /** 1-based line and column of the link's first character (the `[` or `!`). */
  line: number;
  column: number;
  /** Chunk containing the link; null for a property link (frontmatter belongs to no chunk). */
  chunk_index: number | null;
  syntax: LinkSyntax;
  position: LinkPosition;
  /** Property links only: the top-level frontmatter key the link's value stands under (`related`). */
  property?: string;
  /** Exact source text of the link, e.g. `![[Map.png|300]]`. */
  raw: string;
  /** Target without fragment, decoded (markdown links: percent-decoded once). `''` for `[[#Heading]]`. */
  target: string;
  /** Fragment after `#` (heading text, or `^block`), or null. */
  fragment: string | null;
  /** Display text (alias, markdown link text), or null. An embed's size (`|300`) is never display text. */
  display: string | null;
  /**
   * Display size of an embed written `![[Map.png|300]]` / `![[Map.png|640x480]]` or `![alt|640x480](url)`
   * (Obsidian's image dimensions, in CSS pixels; `height` null when only the width is given). Present
   * only on embeds that carry a size.
   */
  size?: EmbedSize;
  resolution: LinkResolution;
}

/** An embed's display size in CSS pixels (integers ≥ 0); `height` null for a width-only `|300`. */
export interface EmbedSize {
  width: number;
  height: number | null;
}

/** One row of the index manifest: a file and its identity. */
export interface ManifestEntry {
  path: VaultPath;
  /** Bytes. */
  size: number;
  /** Lower-case hex SHA-256 of the raw bytes. */
  sha256: string;
}

/**
 * Vault configuration (`loretrace.config.json` in the vault root, or `--config <file>`). Every field is
 * optional; defaults are documented in docs/CONFIG.md.
 */
export interface VaultConfig {
  /** Ref namespace; default: the vault folder's name. */
  namespace?: string;
  /** Globs (picomatch, vault-relative) of files to include; default `["**\/*.md"]`. */
  include?: string[];
  /** Globs of files to exclude (dot-folders and node_modules are always skipped). */
  exclude?: string[];
  /** Files larger than this many bytes are not parsed (finding `file_too_large`). */
  max_file_bytes?: number;
  /** Word budget above which a section is split at block boundaries. */
  chunk_word_budget?: number;
  /** Extra target classes by glob: `[{ "glob": "Aetheria/**\/Species/*.md", "classes": ["species"] }]`. */
  class_rules?: { glob: string; classes: string[] }[];
  /** Prefixes (ref grammar, ending in `/` or naming one file) of future-era lore. */
  future_era_prefixes?: string[];
  /** Prefixes of hidden / author-only lore. */
  hidden_prefixes?: string[];
  /** Extra plain-English → target-class synonyms for `follow_link_classes`: `{ "guild": ["factions"] }`. */
  link_class_synonyms?: Record<string, string[]>;
  /**
   * Weight of search's stemmed field, a number from 0 to 1; default 0 (docs/INDEX.md "Stemmed field").
   * Above 0 the index carries a Porter-stemmed copy of the headings and text fields and `search` scores it
   * at this weight unless its `stemWeight` option says otherwise; 0: no copy, exact terms only.
   */
  stem_weight?: number;
  /**
   * Trusted runner public keys (SPKI PEM files, `loretrace keygen`'s `.pub.pem`), each path relative to the
   * config file's folder (docs/RECEIPTS.md "Authorship"): the commands that verify ledgers use them when no
   * `--trust-key` and no `LORETRACE_TRUSTED_KEYS` is given. Not part of the index (changing them rebuilds nothing).
   */
  trusted_keys?: string[];
}

/**
 * The in-memory vault index (what `indexVault` returns). Arrays are in deterministic order:
 * notes and manifest by path (code-unit order), chunks by (path, chunk_index), links by
 * (source_path, line, column).
 */
export interface VaultIndex {
  schema_version: string;
  /** Ref namespace, e.g. `AetheriaLore`. */
  namespace: string;
  /** Absolute path of the vault root. */
  root: string;
  /** sha256 over the canonical JSON of the sorted manifest (seed 002's lock-file idea). */
  snapshot_id: string;
  manifest: ManifestEntry[];
  notes: NoteRecord[];
  chunks: Chunk[];
  links: LinkRecord[];
  /** Findings from scanning, parsing and resolving (skipped files, unresolved links, ...). */
  findings: import('./errors.js').Finding[];
  config: VaultConfig;
}

/**
 * Types of the compiled traversal policy and its receipt.
 *
 * The input shape, `TraversalPolicy`, is Ghostlight's `lore_access.traversal_policy` (seed 000) and is
 * declared once in src/contracts/types.ts. Compiling it yields a {@link CompiledPolicy}: plain vault paths,
 * class sets and budgets that {@link checkPath} / {@link checkEdge} (src/policy/compile.ts) enforce for
 * both the traversal and the proxy, plus a {@link PolicyReceiptRow} per clause that says what was
 * actually enforced (seed 003: record what executed, not what was merely accepted).
 */
import type { LinkPosition, LinkSyntax, NoteRecord, VaultPath } from '../types.js';

/**
 * `enforced`: loretrace checks this clause on every path / edge it touches (even when it matches
 * nothing in this snapshot — `matches` then says 0). `partially_enforced`: part of the clause is
 * enforced and part is not — a link-class phrase whose class words map ("factions and institutions")
 * while a qualifier does not ("resident Jovian"): the walk follows every note of the mapped classes,
 * and the row's rule names the qualifier words it does not enforce. `advisory`: accepted but not
 * enforced by loretrace (for example "summarize only the constraints…", which is about the answer, or a
 * link-class phrase that maps to no class). `--strict-policy` refuses a policy with any row short of
 * `enforced`.
 */
export type Disposition = 'enforced' | 'partially_enforced' | 'advisory';

/** Receipt rows per disposition, every key present, zeros included (seed 003). */
export interface ReceiptTotals {
  enforced: number;
  partially_enforced: number;
  advisory: number;
}

/** What a receipt row is about. */
export type ClauseKind =
  | 'max_link_depth'
  | 'allowed_prefix'
  | 'seed'
  | 'allowed_scope'
  | 'follow_link_class'
  | 'stop_condition'
  | 'hidden_ref'
  | 'hidden_prefix'
  | 'hidden_note'
  | 'future_era_prefix';

/**
 * One row of the policy receipt.
 * - `clause`: the clause exactly as written (a prefix, a seed ref, a phrase, a token).
 * - `kind`: see {@link ClauseKind}.
 * - `pointer`: RFC 6901 JSON pointer of the clause in its document (`/stop_conditions/1`, or
 *   `/lore_access/traversal_policy/stop_conditions/1` for a packet; `/hidden_context_audit/…`;
 *   `#/config/hidden_prefixes/0` for vault config; `#/default/…` for built-in defaults).
 * - `disposition`: see {@link Disposition}.
 * - `rule`: what loretrace does with it, in words (the mapping of a phrase, the pattern a stop
 *   condition matched, the prefix it denies…).
 * - `matches`: how many notes of this snapshot the rule touches (notes under a prefix, notes of the
 *   mapped classes, notes denied), or null when a count does not apply (depth, budgets, syntax classes).
 */
export interface PolicyReceiptRow {
  clause: string;
  kind: ClauseKind;
  pointer: string;
  disposition: Disposition;
  rule: string;
  matches: number | null;
}

/**
 * Budgets from stop conditions (`max_refs:N` …, or plain-English patterns). null = no limit.
 * - `max_refs`: notes consulted in total, seeds included.
 * - `max_chunks`: source excerpts in total (one excerpt = one run of lines of one chunk).
 * - `max_chars`: characters (UTF-16 code units) of all excerpt texts together.
 * - `min_relevance`: 0..1; a link target is skipped when neither its relevance nor that of a passage linking
 *   it reaches this. null = the default, `DEFAULT_MIN_RELEVANCE` (0.3; docs/TRAVERSAL.md).
 * - `min_relative_relevance`: 0..1; the walk ends when the best remaining candidate scores below this
 *   share of the best followed note's score. null = the default, `DEFAULT_MIN_RELATIVE_RELEVANCE` (0.35).
 * - `min_score_ratio`: 0..1; the walk ends when the best remaining candidate scores below this share of
 *   the note followed just before it. null = the default, `DEFAULT_MIN_SCORE_RATIO` (0.5).
 * - `time_budget_ms`: wall-clock milliseconds for one traversal or proxy session (the only budget whose
 *   effect is not deterministic; when it ends a walk, `stats.stopped_by` says so).
 */
export interface Budgets {
  max_refs: number | null;
  max_chunks: number | null;
  max_chars: number | null;
  min_relevance: number | null;
  min_relative_relevance: number | null;
  min_score_ratio: number | null;
  time_budget_ms: number | null;
}

/** Which links a policy follows. An outbound link is followed when it matches ANY entry (OR). */
export interface FollowRules {
  /** Syntax classes named directly (`wikilink`, `markdown_link`, `embed`, `heading_link`, `block_link`). */
  syntaxes: LinkSyntax[];
  /** Position classes named directly (`prose`, `list_item`, `table`, `field`, `heading`). */
  positions: LinkPosition[];
  /** Target classes (named directly or mapped from phrases): the target note must have one of them. */
  classes: string[];
  /** True when `backlink` is listed: inbound links may be walked in reverse. */
  backlink: boolean;
}

/** A deny rule: a vault path prefix (folder ending in `/`) or one note path, and where it comes from. */
export interface DenyRule {
  /** Vault path (no namespace): `World/Post-Elysium/` or `World/Secrets.md`. */
  prefix: string;
  /** JSON pointer of the clause that created it. */
  pointer: string;
}

/**
 * A hidden section: the lines an omitted heading ref `Note.md#Heading` names in its note (Obsidian's
 * heading-link section: the heading line through the line before the next heading of the same or a
 * shallower depth) and the chunks that make them up. Never sent to a responder.
 */
export interface HiddenSection {
  /** Vault path of the note. */
  path: VaultPath;
  /** The heading text as the omitted ref spells it (for receipts and the ledger only). */
  heading: string;
  /** 1-based inclusive lines of the section in the original file. */
  line_start: number;
  line_end: number;
  /** `chunk_index` of every chunk of the section, ascending. */
  chunks: number[];
  /** JSON pointer of the omitted ref. */
  pointer: string;
}

/**
 * A compiled traversal policy: everything {@link checkPath} and {@link checkEdge} need, precomputed.
 * Arrays are sorted (code-unit order) unless their order is meaningful (seeds, scope: as given).
 */
export interface CompiledPolicy {
  namespace: string;
  snapshot_id: string;
  max_link_depth: number;
  /** Vault paths (no namespace), whole-segment prefixes. */
  allowed_prefixes: string[];
  /** Seed note paths, in policy order. */
  seeds: VaultPath[];
  /** allowed_scope notes that are start points (inside the prefixes, not denied), in packet order. */
  scope: VaultPath[];
  follow: FollowRules;
  /** `deny_prefix:` tokens. */
  denied_prefixes: DenyRule[];
  /**
   * Hidden notes/folders, always denied: packet `hidden_context_audit.omitted_context_refs`, config
   * `hidden_prefixes`, and notes that mark themselves hidden in frontmatter, read fail closed (a
   * `visibility` that is not a public value, a marker key such as `hidden` / `author_only` / `secret` with any
   * value but a false one, a hiding tag; `authorOnlyReason` in src/policy/compile.ts, docs/TRAVERSAL.md).
   */
  hidden: DenyRule[];
  /**
   * Hidden sections of visible notes: an omitted ref `Note.md#Heading` whose heading exists hides that
   * section only (src/policy/sections.ts); in line order per note, notes in omitted-ref order.
   */
  hidden_sections: HiddenSection[];
  /** Future-era prefixes denied by a "stop before post-Elysium…" clause (empty when none). */
  future_era: DenyRule[];
  /** Allowed prefixes that explicitly request lore inside a future-era prefix (waive it below them). */
  future_era_waivers: string[];
  /** `deny_class:` classes, sorted. */
  denied_classes: string[];
  /** `no_expand_class:` classes, sorted: such notes are consulted but their links are not walked. */
  no_expand_classes: string[];
  budgets: Budgets;
  /** One row per clause (see {@link PolicyReceiptRow}). */
  receipt: PolicyReceiptRow[];
  /** Totals of the receipt, zeros included: `{ enforced, partially_enforced, advisory }`. */
  receipt_totals: ReceiptTotals;
  /** Note records by path (from the index the policy was compiled against). */
  readonly notes: ReadonlyMap<string, NoteRecord>;
}

/** Why a path or an edge is refused (also the `reason` of a skipped traversal decision). */
export type EdgeSkipReason =
  | 'prefix_denied'
  | 'class_not_allowed'
  | 'depth_exceeded'
  | 'budget_exhausted'
  | 'below_relevance'
  | 'below_relative_relevance'
  | 'hidden_ref'
  | 'future_era'
  | 'unresolved'
  | 'already_visited'
  | 'not_expanded'
  | 'not_found';

/** Result of {@link checkPath} / {@link checkEdge}. `detail` says which rule refused, in words. */
export type CheckResult = { ok: true } | { ok: false; reason: EdgeSkipReason; detail: string };

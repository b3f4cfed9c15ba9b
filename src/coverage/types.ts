/**
 * Types of the lore coverage report (docs/COVERAGE.md): what lore the packets, captures, traces, ledgers and
 * digests actually cite, and where the vault itself is thin. The lore-side counterpart of Ghostlight's
 * corpus coverage ledger (`corpus-coverage.json`).
 *
 * Conventions as in src/types.ts: lines are 1-based inclusive in the original note file; paths are
 * vault-relative POSIX NFC; every list in a report is sorted with a code-unit compare.
 */
import type { VaultPath } from '../types.js';

/** `schema_version` of `coverage.json` (schemas/coverage-report.schema.json). */
export const COVERAGE_SCHEMA_VERSION = 'loretrace.coverage_report.v2';

/**
 * What kind of artifact a file was recognised as:
 * - `responder_packet` — Ghostlight responder packet (seed 000): `visible_context.source_excerpts[].source_ref`.
 * - `responder_capture` — Ghostlight responder output capture: `lore_access.consulted_refs`,
 *   `followed_refs`, `research_trace`.
 * - `traverse_result` — output of `loretrace traverse` (schemas/traverse-result.schema.json).
 * - `capture_fragment` — the `lore_access` fragment written by `retrieve --capture-out` or `ledger export`.
 * - `proxy_ledger` — the JSONL ledger of a `serve` session (responder lane): a `TOOL_CALL` and its outcome per
 *   tool call (v3), one record per call (v1, v2).
 * - `retrieve_ledger` — the JSONL ledger `retrieve` writes beside its packet (coordinator lane), the same
 *   record form (`session.runner: "retrieve"`).
 * - `lore_grounding_digest` — a Ghostlight lore-grounding digest: `source_refs[{ path, line_start, line_end }]`.
 * - `corpus_coverage_ledger` — Ghostlight's fixture corpus coverage ledger (`corpus-coverage.json`,
 *   `ghostlight.corpus_coverage.*`): it cites no lore itself; its subjects are joined with the citations
 *   (see {@link CorpusCoverage}).
 */
export type ArtifactKind =
  | 'responder_packet'
  | 'responder_capture'
  | 'traverse_result'
  | 'capture_fragment'
  | 'proxy_ledger'
  | 'retrieve_ledger'
  | 'lore_grounding_digest'
  | 'corpus_coverage_ledger';

/** Where inside its artifact a ref was found (the field it came from). */
export type CitationRole =
  | 'source_excerpt'
  | 'consulted_ref'
  | 'followed_ref'
  | 'research_trace'
  | 'ledger_result'
  | 'digest_source_ref';

/**
 * One ref as it stands in an artifact, before it is matched against the vault. A `source_ref` that
 * holds several refs separated by `; ` gives one occurrence per part (same pointer).
 */
export interface RefOccurrence {
  role: CitationRole;
  /** RFC 6901 JSON pointer of the field inside the artifact (inside the record, for a JSONL ledger). */
  pointer: string;
  /** 1-based line of the JSONL record, for ledgers; absent for JSON files. */
  record_line?: number;
  /** The ref text exactly as written (one `; `-separated part), or the digest's `path`. */
  ref: string;
  /** Explicit line range carried next to the ref (research_trace entry, ledger result, digest source_ref). */
  line_start?: number;
  line_end?: number;
  /**
   * Text the artifact claims those lines held, when the artifact records it verbatim
   * (a `runner_captured` trace entry's `extracted_constraint`; a ledger result's `text`).
   * Compared with the current lines to detect `text_changed`.
   */
  verbatim_text?: string;
  /**
   * Lower-case hex SHA-256 of the text the artifact says those lines held (UTF-8 of the lines joined with
   * `"\n"`), when it records a hash instead of the text (a ledger's served range: seed 004's payload
   * hashes). Compared with the current lines like {@link verbatim_text}.
   */
  text_sha256?: string;
  /**
   * The text a packet excerpt carried (`source_excerpts[i].text`). Located inside the ref's range to find
   * the exact lines the excerpt quotes (see docs/COVERAGE.md, "Which lines a citation covers").
   */
  excerpt_text?: string;
  /**
   * Set when the artifact writes `line_start`/`line_end` next to the ref but not as integers (`"3"`,
   * `2.5`, `null`, one of them absent), e.g. `line_start "3", line_end 4`. The citation is then
   * `invalid_range`, never silently widened to the ref's own range.
   */
  bad_range?: string;
  /**
   * The ledger record that served these lines, `<ledger_id>:<seq>`: a ledger result's record (`record_id`),
   * or a research_trace entry's `trace_id` prefix (`<ledger_id>:<seq>[.<n>]:<hash>`, src/receipts/trace.ts).
   * Citations of one record and range are one lookup, counted once (docs/COVERAGE.md "One lookup").
   */
  lookup?: string;
  /**
   * What the lookup asked for, when its ledger call says so: `note` for a `lore_read` of a ref without a
   * fragment, `section` for one of a `#Heading` (neither when the call gave `line_start`/`line_end`). Every range it served is then "note cited" (or section), not lines.
   */
  read_scope?: 'note' | 'section';
  /**
   * Set when the entry is not a ref at all (a number or `null` in `consulted_refs`, an empty string, a
   * trace entry with neither `source_ref` nor `source_path`, a list field that is not an array): the
   * reason in words. `ref` then holds the entry as JSON (at most 80 characters). Reported in
   * `rejected_refs`, so nothing in an artifact is dropped silently.
   */
  not_a_ref?: string;
}

/** One recognised artifact file and the refs found in it. Plain data (what {@link recogniseArtifact} returns). */
export interface CoverageArtifact {
  /** The file as displayed in the report: the input as named (normalised, POSIX), plus the path inside a named folder. */
  file: string;
  kind: ArtifactKind;
  /** The file's `schema_version` (first record's, for a ledger), or null when it has none. */
  schema_version: string | null;
  /** The vault snapshot the artifact records (`snapshot_id`), or null when it records none. */
  snapshot_id: string | null;
  refs: RefOccurrence[];
  /** For a `corpus_coverage_ledger`: its fixtures and their subjects; absent for every other kind. */
  corpus?: CorpusLedgerInput;
}

/** What a Ghostlight corpus coverage ledger contributes: its id and, per fixture, the subjects it names. */
export interface CorpusLedgerInput {
  coverage_id: string | null;
  fixtures: { fixture_id: string; status: string | null; subjects: { name: string; role: CorpusSubjectRole }[] }[];
}

/** How a fixture names a subject: `primary_subjects`, `secondary_subjects`, or its `flashpoint`. */
export type CorpusSubjectRole = 'primary' | 'secondary' | 'flashpoint';

/**
 * Why an input file was not read as an artifact. `not_an_artifact` is a JSON file of no known kind found by
 * walking a named folder (a responder's MCP transcript, a server's answers file): listed and counted, never
 * a failure; the same file named on the command line is `unrecognised`, a failure (docs/COVERAGE.md).
 */
export type SkipReason =
  | 'not_json'
  | 'unrecognised'
  | 'not_an_artifact'
  | 'no_lore_refs'
  | 'unreadable'
  | 'unsupported_extension'
  | 'empty_folder'
  | 'not_found';

/** An input that was listed but not used, with the reason in words (file, line or pointer, what was expected). */
export interface SkippedInput {
  file: string;
  reason: SkipReason;
  message: string;
}

/** Artifacts read from disk plus the inputs that were skipped (what `readArtifacts` returns). */
export interface ArtifactSet {
  artifacts: CoverageArtifact[];
  skipped: SkippedInput[];
}

/**
 * Status of one lore citation against the current vault. Everything except `ok` and `unverifiable` is *stale*:
 * - `missing_path` — no note at that path in the vault now.
 * - `missing_fragment` — the note exists but the `#heading`, `#chunkN` or `#^block` does not.
 * - `range_beyond_eof` — a cited line lies past the note's last line.
 * - `invalid_range` — `line_start < 1` or `line_end < line_start`.
 * - `text_changed` — the artifact recorded the cited text verbatim and the lines now differ.
 * - `unverifiable` — not stale: the ref still resolves, but the artifact records a `snapshot_id` other
 *   than the vault's and no text or hash for the cited range, so nothing shows whether those lines
 *   changed. An edit elsewhere in the vault, or elsewhere in the note, never makes a citation stale.
 */
export type CitationStatus =
  | 'ok'
  | 'missing_path'
  | 'missing_fragment'
  | 'range_beyond_eof'
  | 'invalid_range'
  | 'text_changed'
  | 'unverifiable';

/** Every stale status, in report order (totals list each one, zeros included — seed 003). */
export const STALE_STATUSES = [
  'missing_path',
  'missing_fragment',
  'range_beyond_eof',
  'invalid_range',
  'text_changed',
] as const satisfies readonly Exclude<CitationStatus, 'ok'>[];

/**
 * What a citation covers: `lines` — an explicit line range (a trace entry's `line_start`/`line_end`, a
 * ledger's served range, a digest range, `#L3-L9`, a `#^block`, or the lines a packet excerpt quotes);
 * `section` — a whole `#Heading` or `#chunkN` with no narrower range; `note` — the whole note. Only
 * `lines` citations count as covered lines; the others are shown as "note cited", apart.
 */
export type CitationScope = 'lines' | 'section' | 'note';

/**
 * How the citation was confirmed against the current vault: `recorded_text` (verbatim text compared),
 * `recorded_hash` (sha256 of the range compared), `excerpt_text` (the excerpt's text found in the range),
 * `same_snapshot` (the artifact's snapshot_id is the vault's), `resolved_only` (the artifact records no
 * snapshot and no text: only the ref's resolution was checked), `none` (stale or unverifiable).
 */
export type CitationCheck = 'recorded_text' | 'recorded_hash' | 'excerpt_text' | 'same_snapshot' | 'resolved_only' | 'none';

/** One lore citation in the vault's namespace, matched against the vault. */
export interface Citation {
  artifact: string;
  role: CitationRole;
  pointer: string;
  record_line?: number;
  /** The ref as written. */
  ref: string;
  /** Vault path the ref names (whether or not it exists now). */
  path: VaultPath;
  /** The cited line range in the current note (1-based inclusive), or null when it could not be placed. */
  line_start: number | null;
  line_end: number | null;
  /** What the citation covers (lines, a section, the whole note). */
  cites: CitationScope;
  status: CitationStatus;
  /** How the citation was confirmed current. */
  checked: CitationCheck;
  /** For stale and unverifiable citations: what is wrong, in words. Absent when `ok`. */
  detail?: string;
  /** The ledger record behind the citation, `<ledger_id>:<seq>` ({@link RefOccurrence.lookup}). */
  lookup?: string;
  /**
   * True when an earlier citation (in report order) is the same lookup: same `lookup`, same path, and the same
   * lines (or, for a whole-note or section read, any lines of it). Listed, never counted (docs/COVERAGE.md).
   */
  repeat?: true;
}

/** A ref that is not vault lore, lore of another namespace, or an entry refused as a ref — counted apart. */
export interface ApartRef {
  artifact: string;
  pointer: string;
  record_line?: number;
  ref: string;
  /** For other-namespace refs: the namespace written before `:`. */
  namespace?: string;
  /** For refused refs: the reason (the ref grammar's `bad_ref` message, a folder ref, or an entry that is not a ref). */
  detail?: string;
}

/**
 * Citation figures shared by a note and a group of notes. `line_coverage` = `covered_lines / body_lines`,
 * rounded to 4 decimals; null when `body_lines` is 0.
 */
export interface CitationFigures {
  /** Lore citations (stale and unverifiable ones included). */
  citations: number;
  /** Of those, citations that are neither stale nor `unverifiable` and cite a whole note or section (never counted as lines). */
  whole_citations: number;
  /** Of those, `unverifiable` citations (not stale; see {@link CitationStatus}). */
  unverifiable_citations: number;
  /** Distinct artifact files citing the note (or any note of the group). */
  artifacts: number;
  stale_citations: number;
  /** Non-blank lines outside the frontmatter. */
  body_lines: number;
  /** Of those, lines inside the range of at least one `ok` citation whose {@link CitationScope} is `lines`. */
  covered_lines: number;
  line_coverage: number | null;
}

/** Figures for one note. */
export interface NoteCoverage extends CitationFigures {
  path: VaultPath;
  title: string;
  /** Folder of the note ('' for the vault root). */
  folder: string;
  classes: string[];
  /** Links from other notes that resolve (or ambiguously resolve) to this note. */
  inbound_links: number;
  /** The lines `ok` line citations cover, merged into ascending, disjoint `[line_start, line_end]` ranges (1-based inclusive). */
  cited_ranges: [number, number][];
}

/** Figures aggregated over a group of notes (a folder with its subfolders, or a target class). */
export interface GroupCoverage extends CitationFigures {
  notes: number;
  cited_notes: number;
}

/** Coverage figures of one folder of the vault (citations, distinct artifacts, line coverage of its notes). */
export interface FolderCoverage extends GroupCoverage {
  /**
   * Vault-relative folder path without trailing slash. Figures include every subfolder. Folders are
   * listed in tree order (segment by segment, code-unit order), so a folder's subfolders follow it.
   */
  folder: string;
  /** Nesting depth: 1 for a top-level folder. */
  depth: number;
}

/** Coverage figures of one target class (notes carrying that class, see docs/PARSING.md). */
export interface ClassCoverage extends GroupCoverage {
  /** The target class, e.g. `factions` or `pre-elysium`. */
  class: string;
  /** Paths of the class's notes that no artifact cites (sorted). */
  never_cited: VaultPath[];
}

/** Per-artifact summary row. */
export interface ArtifactSummary {
  file: string;
  kind: ArtifactKind;
  schema_version: string | null;
  snapshot_id: string | null;
  /** true/false when the artifact records a snapshot_id; null when it records none. */
  snapshot_matches: boolean | null;
  lore_citations: number;
  stale_citations: number;
  non_lore_refs: number;
  other_namespace_refs: number;
  rejected_refs: number;
}

/**
 * The vault's own holes (from the index's link graph). `source_path` names the linking note's file as
 * stored on disk (`notePathOnDisk`: it differs from the NFC index path only for a file with an NFD name);
 * `resolved_to`, `candidates` and `path` are NFC index paths.
 */
export interface VaultGaps {
  unresolved_links: { source_path: VaultPath; line: number; column: number; raw: string; target: string }[];
  ambiguous_links: {
    source_path: VaultPath; line: number; column: number; raw: string; target: string;
    resolved_to: VaultPath; candidates: VaultPath[];
  }[];
  broken_fragments: { source_path: VaultPath; line: number; column: number; raw: string; path: VaultPath; fragment: string }[];
  /** Notes no other note links to (sorted). */
  orphan_notes: VaultPath[];
}

/** Totals of a report. Every stale status is listed, zeros included. */
export interface CoverageTotals {
  notes: number;
  artifacts: number;
  skipped_inputs: number;
  /** Lore citations counted: one per lookup (repeats of a lookup are left out; see `repeated_citations`). */
  lore_citations: number;
  /** Citations that repeat an earlier one's lookup (the ledger, fragment and capture of one run): listed, not counted. */
  repeated_citations: number;
  cited_notes: number;
  never_cited_notes: number;
  stale_citations: number;
  stale_by_status: Record<(typeof STALE_STATUSES)[number], number>;
  unverifiable_citations: number;
  whole_citations: number;
  non_lore_refs: number;
  other_namespace_refs: number;
  rejected_refs: number;
  body_lines: number;
  covered_lines: number;
  line_coverage: number | null;
  classes: number;
  untouched_classes: number;
  unresolved_links: number;
  ambiguous_links: number;
  broken_fragments: number;
  orphan_notes: number;
}

/** The whole report, as written to `coverage.json` (schemas/coverage-report.schema.json). Deterministic: no timestamps. */
export interface CoverageReport {
  schema_version: typeof COVERAGE_SCHEMA_VERSION;
  namespace: string;
  snapshot_id: string;
  totals: CoverageTotals;
  artifacts: ArtifactSummary[];
  skipped: SkippedInput[];
  notes: NoteCoverage[];
  folders: FolderCoverage[];
  classes: ClassCoverage[];
  /** Classes none of whose notes is cited (sorted). */
  untouched_classes: string[];
  /** Every lore citation in the vault's namespace: artifacts by file name, then in the order their fields are read (see `recogniseArtifact`). */
  citations: Citation[];
  /** The stale subset of `citations`. */
  stale: Citation[];
  non_lore_refs: ApartRef[];
  other_namespace_refs: ApartRef[];
  /**
   * Refused entries: refs in the vault's namespace the ref grammar refuses (`..`, backslash, ...), folder
   * refs, and entries that are not refs at all (see {@link RefOccurrence.not_a_ref}).
   */
  rejected_refs: ApartRef[];
  gaps: VaultGaps;
  /** The join with Ghostlight's fixture corpus coverage ledger, when one was among the inputs; else null. */
  corpus: CorpusCoverage | null;
}

/**
 * Which subjects of Ghostlight's fixture corpus (`corpus-coverage.json`: each fixture's primary and
 * secondary subjects and its flashpoint) have lore citations in the artifacts, and which have none.
 * A subject is matched to a note by title, alias or file name, folded (case, diacritics, punctuation).
 */
export interface CorpusCoverage {
  /** The ledger file(s) read, sorted. */
  files: string[];
  subjects: CorpusSubject[];
  fixtures: { fixture_id: string; status: string | null; subjects: number; cited_subjects: number; uncited: string[] }[];
  totals: { fixtures: number; subjects: number; matched_subjects: number; cited_subjects: number };
}

/** One corpus subject and its lore citations. */
export interface CorpusSubject {
  /** The subject as the ledger writes it (first spelling seen, in fixture order). */
  subject: string;
  roles: CorpusSubjectRole[];
  /** Fixtures naming it, sorted. */
  fixtures: string[];
  /** The note it names, or null when no note's title, alias or file name matches. */
  path: VaultPath | null;
  /** Further notes with the same folded name (sorted), when the name is ambiguous. */
  other_candidates: VaultPath[];
  /** Lore citations of that note in the artifacts (stale ones included). */
  citations: number;
}

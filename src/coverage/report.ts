/**
 * `coverageReport(index, artifacts, options) → CoverageReport`: which notes, folders and target classes
 * the artifacts cite, how much of each note's text those citations cover, which citations have gone
 * stale, and where the vault itself has holes. Pure: no I/O, no clock, deterministic order.
 *
 * Figures are defined in docs/COVERAGE.md; the short version is in the field docs of ./types.ts.
 */
import { createHash } from 'node:crypto';
import { LoretraceError, isLoretraceError } from '../errors.js';
import { parseRef, resolveRef } from '../refs/index.js';
import type { ParsedRef } from '../refs/index.js';
import type { NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { notePathOnDisk } from '../indexer/lookup.js';
import type {
  ApartRef,
  Citation,
  CitationCheck,
  CitationScope,
  CitationStatus,
  ClassCoverage,
  CorpusCoverage,
  CorpusSubject,
  CorpusSubjectRole,
  CoverageArtifact,
  CoverageReport,
  FolderCoverage,
  GroupCoverage,
  NoteCoverage,
  RefOccurrence,
  SkippedInput,
  VaultGaps,
} from './types.js';
import { COVERAGE_SCHEMA_VERSION, STALE_STATUSES } from './types.js';
import { isJsonObject } from '../contracts/json-object.js';

/** Options of {@link coverageReport}. */
export interface CoverageOptions {
  /**
   * The current lines of each note (as `splitLines` gives them; `readNoteLines` reads them), keyed by
   * vault path. Used to count non-blank lines (frontmatter included in the text, excluded from the
   * figures) and to compare verbatim trace text. When a note is missing here its lines are rebuilt from
   * its chunks' text: lines outside every chunk then count as blank and cannot be compared.
   */
  noteLines?: ReadonlyMap<string, readonly string[]> | Readonly<Record<string, readonly string[]>>;
  /** Inputs that were not read (`readArtifacts(...).skipped`), copied into the report's `skipped` list. */
  skipped?: readonly SkippedInput[];
}

const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const URL_SCHEMES = new Set(['file', 'http', 'https', 'ftp', 'ftps', 'data', 'javascript', 'mailto', 'obsidian', 'vscode', 'app', 'blob', 'ws', 'wss', 'ssh', 'git']);

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const ratio = (covered: number, total: number): number | null => (total === 0 ? null : Math.round((covered / total) * 10000) / 10000);
/** Compare paths segment by segment (tree order: a folder's subfolders right after it). */
const cmpSegments = (a: string, b: string): number => {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = cmp(x[i]!, y[i]!);
    if (c !== 0) return c;
  }
  return x.length - y.length;
};
const folderOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

type RefClass =
  | { kind: 'lore'; text: string }
  | { kind: 'other_namespace'; namespace: string }
  | { kind: 'non_lore' };

/**
 * Sort one ref occurrence into vault lore (namespace = the vault's, or no namespace and a `.md` path or
 * an indexed path), another namespace's lore (`Other:…`), or something that is not lore at all
 * (`examples/x.json#context.y`, `agents.sella_ren.memories…`, `packet_prompt_text`, URLs).
 */
function classifyRef(ref: string, namespace: string, notePaths: ReadonlySet<string>): RefClass {
  const colon = ref.indexOf(':');
  if (colon > 0) {
    const ns = ref.slice(0, colon);
    const after = ref.slice(colon + 1);
    const isScheme = after.startsWith('//') || (URL_SCHEMES.has(ns.toLowerCase()) && ns !== namespace);
    const isDrive = /^[A-Za-z]$/.test(ns) && /^[\\/]/.test(after);
    if (NAMESPACE_RE.test(ns) && !isScheme && !isDrive) {
      return ns === namespace ? { kind: 'lore', text: ref } : { kind: 'other_namespace', namespace: ns };
    }
    if (isScheme) return { kind: 'non_lore' };
  }
  const hash = ref.indexOf('#');
  const path = (hash >= 0 ? ref.slice(0, hash) : ref).normalize('NFC');
  if (/\.md$/i.test(path) || notePaths.has(path)) return { kind: 'lore', text: ref };
  return { kind: 'non_lore' };
}

/** Lines of a note: from options.noteLines, else rebuilt from chunks (unknown lines are `undefined`). */
function linesFor(note: NoteRecord, given: CoverageOptions['noteLines'], chunksByPath: Map<string, VaultIndex['chunks']>): (string | undefined)[] {
  const fromOpt = given instanceof Map ? given.get(note.path) : given ? (given as Record<string, readonly string[]>)[note.path] : undefined;
  if (fromOpt) return [...fromOpt];
  const lines: (string | undefined)[] = new Array(note.line_count).fill(undefined);
  for (const c of chunksByPath.get(note.path) ?? []) {
    c.text.split('\n').forEach((t, i) => {
      if (c.line_start + i - 1 < lines.length) lines[c.line_start + i - 1] = t;
    });
  }
  return lines;
}

interface Placed {
  status: CitationStatus;
  cites: CitationScope;
  line_start: number | null;
  line_end: number | null;
  checked: CitationCheck;
  detail?: string;
}

/**
 * Place a citation in its note: the explicit range next to the ref, else the ref's fragment resolved
 * (`resolveRef`), else the whole note. Stale when the range is not a range, runs past the end of the
 * note, or the fragment no longer exists.
 */
function placeCitation(index: VaultIndex, parsed: ParsedRef, occ: RefOccurrence, note: NoteRecord): Placed {
  const n = note.line_count;
  const cites = scopeOf(parsed, occ);
  const at = (status: CitationStatus, line_start: number | null, line_end: number | null, detail?: string): Placed =>
    ({ status, cites, line_start, line_end, checked: 'none', ...(detail !== undefined ? { detail } : {}) });
  if (occ.bad_range !== undefined) return at('invalid_range', null, null, `${occ.bad_range}: not a line range; expected integers 1 ≤ line_start ≤ line_end`);
  const explicit = occ.line_start !== undefined && occ.line_end !== undefined
    ? { start: occ.line_start, end: occ.line_end, what: `cited lines ${occ.line_start}-${occ.line_end}` }
    : parsed.fragment?.kind === 'lines'
      ? { start: parsed.fragment.start, end: parsed.fragment.end, what: `#L${parsed.fragment.start}-L${parsed.fragment.end}` }
      : null;
  if (explicit) {
    // `what` is the subject of the messages below: "cited lines 3-40" / "#L3-L40".
    if (explicit.start < 1 || explicit.end < explicit.start) return at('invalid_range', null, null, `${explicit.what}: not a line range; expected 1 ≤ line_start ≤ line_end`);
    if (explicit.end > n) return at('range_beyond_eof', explicit.start, explicit.end, `${explicit.what}: line ${explicit.end} is past the end of ${note.path}, which has ${n} lines`);
    return at('ok', explicit.start, explicit.end);
  }
  const f = parsed.fragment;
  if (f === null) return n === 0 ? at('ok', null, null) : at('ok', 1, n);
  if (f.kind === 'chunk' && f.index >= note.chunk_count) {
    return at('missing_fragment', null, null, `${note.path} has ${note.chunk_count} chunks (0..${note.chunk_count - 1}), not chunk${f.index}`);
  }
  try {
    const r = resolveRef(index, parsed);
    return at('ok', r.line_start, r.line_end);
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    const what = f.kind === 'heading' ? `no heading ${JSON.stringify(f.text)}` : f.kind === 'block' ? `no block ^${f.id}` : `no ${f.kind} fragment`;
    return at('missing_fragment', null, null, `${what} in ${note.path}`);
  }
}

function emptyGroup(): GroupCoverage & { artifactSet: Set<string> } {
  return { notes: 0, cited_notes: 0, citations: 0, whole_citations: 0, unverifiable_citations: 0, artifacts: 0, stale_citations: 0, body_lines: 0, covered_lines: 0, line_coverage: null, artifactSet: new Set() };
}

function finishGroup(g: GroupCoverage & { artifactSet: Set<string> }): GroupCoverage {
  const { artifactSet, ...rest } = g;
  return { ...rest, artifacts: artifactSet.size, line_coverage: ratio(rest.covered_lines, rest.body_lines) };
}

/** A value in words for an error message: `the string "a/b"`, `an array`, `null`, `a number`. */
function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 60 ? `${v.slice(0, 59)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * Check the arguments of {@link coverageReport} before anything is computed, so a wrong call (file paths
 * where artifacts belong, say) says what was expected instead of failing with a bare TypeError.
 *
 * @throws LoretraceError `bad_options` (exit 2) naming the argument (`artifacts[0]`, `options.skipped`)
 *   and what was expected.
 */
function checkCoverageArguments(index: unknown, artifacts: unknown, options: unknown): void {
  const bad = (message: string, expected: string) => new LoretraceError('bad_options', `coverageReport: ${message}`, { expected }, 2);
  if (!isJsonObject(index) || typeof index['namespace'] !== 'string' || typeof index['snapshot_id'] !== 'string' || !Array.isArray(index['notes']) || !Array.isArray(index['chunks']) || !Array.isArray(index['links'])) {
    throw bad(`index must be a vault index as indexVault returns it (got ${describeValue(index)})`, 'a VaultIndex from indexVault');
  }
  const artifactHelp = 'recognised artifacts ({ file, kind, schema_version, snapshot_id, refs }) as readArtifacts(...).artifacts returns them; pass file and folder paths to readArtifacts first';
  if (!Array.isArray(artifacts)) throw bad(`artifacts must be an array of ${artifactHelp} (got ${describeValue(artifacts)})`, 'an array of CoverageArtifact');
  artifacts.forEach((a: unknown, i) => {
    if (!isJsonObject(a) || typeof a['file'] !== 'string' || typeof a['kind'] !== 'string' || !Array.isArray(a['refs'])) {
      throw bad(`artifacts[${i}] is ${describeValue(a)}; expected one of the ${artifactHelp}`, 'a CoverageArtifact');
    }
    if (a['snapshot_id'] !== null && typeof a['snapshot_id'] !== 'string') throw bad(`artifacts[${i}].snapshot_id must be a string or null (got ${describeValue(a['snapshot_id'])})`, 'a snapshot_id or null');
    (a['refs'] as unknown[]).forEach((r, j) => {
      if (!isJsonObject(r) || typeof r['ref'] !== 'string' || typeof r['pointer'] !== 'string') {
        throw bad(`artifacts[${i}].refs[${j}] must be a ref occurrence { role, pointer, ref, … } (got ${describeValue(r)})`, 'a RefOccurrence');
      }
    });
  });
  if (!isJsonObject(options)) throw bad(`options must be an object (got ${describeValue(options)})`, '{ noteLines?, skipped? }');
  if (options['skipped'] !== undefined && !Array.isArray(options['skipped'])) throw bad(`options.skipped must be an array of skipped inputs (got ${describeValue(options['skipped'])})`, 'readArtifacts(...).skipped');
  const nl = options['noteLines'];
  if (nl !== undefined && !(nl instanceof Map) && !isJsonObject(nl)) throw bad(`options.noteLines must be a Map or an object of lines per vault path (got ${describeValue(nl)})`, 'loadNoteLines(index)');
}

/**
 * Compute the coverage report of `artifacts` against the vault `index`.
 *
 * Every ref occurrence of every artifact is sorted into: a lore citation in the vault's namespace
 * (`citations`, matched against the vault; stale ones also in `stale`), a ref into another namespace
 * (`other_namespace_refs`), a non-lore ref (`non_lore_refs`), or a ref the grammar refuses
 * (`rejected_refs`, parseRef's `bad_ref` message). Nothing is dropped.
 *
 * The steps: {@link noteTexts} (current lines and body lines per note), {@link citeArtifacts} (every
 * ref placed and checked: {@link placeCitation}, {@link checkContent}), {@link noteRows}, {@link groupRows}
 * (folders and classes), {@link vaultGaps}, {@link corpusCoverage}, {@link reportTotals}.
 *
 * Figures (lines 1-based inclusive; counts of lines, not characters):
 * - one lookup, counted once ({@link markLookups}): citations of one ledger record and range — the ledger, its
 *   fragment and the capture of one run — count once; the others are listed with `repeat: true`
 *   (`totals.repeated_citations`); a `lore_read` of a whole note or `#Heading` makes its record's citations
 *   "note cited" / section, never lines.
 * - per note: `citations` (lookups naming the note, stale included), `artifacts` (distinct files),
 *   `body_lines` (non-blank lines outside frontmatter), `covered_lines` (of those, lines inside an `ok`
 *   citation that cites *lines*: a trace entry's or ledger's range, a digest range, `#L…`, `#^block`, or
 *   the lines a packet excerpt quotes), `whole_citations` (ok citations of a whole note, `#Heading` or
 *   `#chunkN`: "note cited", never counted as lines), `line_coverage` = covered / body, 4 decimals;
 *   `cited_ranges` (the covered lines as merged ranges); `inbound_links` from other notes.
 * - staleness is decided per cited range: a citation is stale only when its own ref no longer resolves or
 *   the text (or hash) it recorded for its lines no longer matches those lines. A different snapshot alone
 *   never makes it stale; with nothing recorded to compare it is `unverifiable`, counted apart.
 * - per folder (recursive: a folder includes its subfolders) and per target class: the same summed,
 *   with `cited_notes` and distinct `artifacts`; per class also the never-cited notes.
 * - gaps: unresolved links, ambiguous links, broken heading/block fragments (from the index's links),
 *   orphan notes (no resolved or ambiguous link from another note).
 * - corpus: when a Ghostlight corpus coverage ledger is among the artifacts, which of its subjects have
 *   lore citations and which have none.
 *
 * @param index the vault index (`indexVault`).
 * @param artifacts recognised artifacts (`readArtifacts(...).artifacts` or `recogniseArtifact`).
 * @param options `noteLines` (current lines per note) and `skipped` (inputs not read); see {@link CoverageOptions}.
 * @returns a deterministic {@link CoverageReport} (no timestamps; lists sorted by code-unit order).
 * @throws LoretraceError `bad_options` (exit 2) when an argument has the wrong shape (e.g. file paths
 *   instead of `readArtifacts(...).artifacts`); nothing for bad artifact content (it becomes report entries).
 */
export function coverageReport(
  index: VaultIndex,
  artifacts: readonly CoverageArtifact[],
  options: CoverageOptions = {},
): CoverageReport {
  checkCoverageArguments(index, artifacts, options);
  const texts = noteTexts(index, options);
  const sortedArtifacts = [...artifacts].sort((a, b) => cmp(a.file, b.file));
  const cited = citeArtifacts(index, sortedArtifacts, texts);
  const notes = noteRows(index, texts, cited.citations);
  const { folders, classes } = groupRows(notes, cited.citations);
  const untouched = classes.filter((c) => c.cited_notes === 0).map((c) => c.class);
  const gaps = vaultGaps(index, notes);
  const stale = cited.citations.filter((c) => isStale(c.status));
  const skipped = [...(options.skipped ?? [])].sort((a, b) => cmp(a.file, b.file) || cmp(a.reason, b.reason));
  return {
    schema_version: COVERAGE_SCHEMA_VERSION,
    namespace: index.namespace,
    snapshot_id: index.snapshot_id,
    totals: reportTotals({ notes, classes, untouched, gaps, cited, stale, artifacts: sortedArtifacts.length, skipped: skipped.length }),
    artifacts: cited.summaries,
    skipped,
    notes,
    folders,
    classes,
    untouched_classes: untouched,
    citations: cited.citations,
    stale,
    non_lore_refs: cited.nonLore,
    other_namespace_refs: cited.otherNs,
    rejected_refs: cited.rejected,
    gaps,
    corpus: corpusCoverage(index, sortedArtifacts, notes),
  };
}

/** True for the statuses that make a citation stale (everything but `ok` and `unverifiable`). */
const isStale = (s: CitationStatus): boolean => s !== 'ok' && s !== 'unverifiable';

/** Current lines and body lines of every note, by path (what every later step reads). */
interface NoteTexts {
  notes: NoteRecord[];
  byPath: Map<string, NoteRecord>;
  lines: Map<string, (string | undefined)[]>;
  /** Non-blank line numbers outside the frontmatter, ascending. */
  body: Map<string, number[]>;
}

/**
 * Step 1: each note's current lines (from `options.noteLines`, else rebuilt from the chunks) and its body
 * lines (non-blank, outside the frontmatter), notes in code-unit order of their paths.
 */
function noteTexts(index: VaultIndex, options: CoverageOptions): NoteTexts {
  const notes = [...index.notes].sort((a, b) => cmp(a.path, b.path));
  const byPath = new Map<string, NoteRecord>(notes.map((n) => [n.path, n]));
  const chunksByPath = new Map<string, VaultIndex['chunks']>();
  for (const c of index.chunks) {
    const list = chunksByPath.get(c.path) ?? [];
    list.push(c);
    chunksByPath.set(c.path, list);
  }
  const lines = new Map<string, (string | undefined)[]>();
  const body = new Map<string, number[]>();
  for (const note of notes) {
    const ls = linesFor(note, options.noteLines, chunksByPath);
    lines.set(note.path, ls);
    const fm = note.frontmatter_lines;
    const b: number[] = [];
    for (let i = 1; i <= note.line_count; i++) {
      if (fm && i >= fm.line_start && i <= fm.line_end) continue;
      const t = ls[i - 1];
      if (t !== undefined && t.trim() !== '') b.push(i);
    }
    body.set(note.path, b);
  }
  return { notes, byPath, lines, body };
}

/** What {@link citeArtifacts} sorts the ref occurrences into. */
interface CitedArtifacts {
  citations: Citation[];
  nonLore: ApartRef[];
  otherNs: ApartRef[];
  rejected: ApartRef[];
  summaries: CoverageReport['artifacts'];
}

/**
 * Step 2: sort every ref occurrence of every artifact (artifacts in file order, refs in the order they
 * were read) into citations and refs counted apart, placing and checking each citation; one summary row
 * per artifact.
 */
function citeArtifacts(index: VaultIndex, artifacts: readonly CoverageArtifact[], texts: NoteTexts): CitedArtifacts {
  const out: CitedArtifacts = { citations: [], nonLore: [], otherNs: [], rejected: [], summaries: [] };
  const notePaths = new Set(texts.byPath.keys());
  for (const art of artifacts) {
    const drift = art.snapshot_id !== null && art.snapshot_id !== index.snapshot_id;
    const sum = { lore: 0, stale: 0, non: 0, other: 0, rej: 0 };
    for (const occ of art.refs) {
      const base = { artifact: art.file, pointer: occ.pointer, ...(occ.record_line !== undefined ? { record_line: occ.record_line } : {}), ref: occ.ref };
      const sorted = sortRef(index, occ, notePaths, texts.byPath);
      if (sorted.kind === 'rejected') {
        out.rejected.push({ ...base, detail: sorted.detail });
        sum.rej++;
      } else if (sorted.kind === 'non_lore') {
        out.nonLore.push(base);
        sum.non++;
      } else if (sorted.kind === 'other_namespace') {
        out.otherNs.push({ ...base, namespace: sorted.namespace });
        sum.other++;
      } else {
        const c = citeOne(index, art, occ, sorted.parsed, sorted.path, texts, drift);
        out.citations.push(c);
        sum.lore++;
        if (isStale(c.status)) sum.stale++;
      }
    }
    out.summaries.push({
      file: art.file,
      kind: art.kind,
      schema_version: art.schema_version,
      snapshot_id: art.snapshot_id,
      snapshot_matches: art.snapshot_id === null ? null : !drift,
      lore_citations: sum.lore,
      stale_citations: sum.stale,
      non_lore_refs: sum.non,
      other_namespace_refs: sum.other,
      rejected_refs: sum.rej,
    });
  }
  markLookups(out.citations, artifacts);
  return out;
}

/** The ledger id of a lookup `<ledger_id>:<seq>`. */
const ledgerOf = (lookup: string): string => lookup.slice(0, lookup.lastIndexOf(':'));

/**
 * The run each artifact belongs to, by ledger id: the one ledger its records or trace entries name (an
 * artifact naming two ledgers belongs to none), and for a packet the run of the ledger `retrieve` wrote beside
 * it (`x.packet.json` → `x.packet.ledger.jsonl`) when that ledger is among the artifacts.
 */
function runsOf(artifacts: readonly CoverageArtifact[]): Map<string, string> {
  const runs = new Map<string, string>();
  for (const art of artifacts) {
    const ids = new Set(art.refs.flatMap((o) => (o.lookup !== undefined ? [ledgerOf(o.lookup)] : [])));
    if (ids.size === 1) runs.set(art.file, [...ids][0]!);
  }
  for (const art of artifacts) {
    if (art.kind !== 'responder_packet' || runs.has(art.file) || !art.file.endsWith('.json')) continue;
    const beside = runs.get(art.file.slice(0, -'.json'.length) + '.ledger.jsonl');
    if (beside !== undefined) runs.set(art.file, beside);
  }
  return runs;
}

/**
 * One lookup, counted once (docs/COVERAGE.md "One lookup"). In place, in report order:
 * - a ledger record's read of a whole note or section (its call's ref had no fragment, or a `#Heading`)
 *   makes every citation of that record "note cited" (or section), never lines;
 * - a citation with a record (`lookup`) whose record, path and lines (any lines, for a whole-note or section
 *   read) equal an earlier one's is a `repeat`: the ledger, its exported fragment and the capture of one run
 *   cite the same read; the first stale citation of a lookup, if any, is the one counted;
 * - a citation without a record in an artifact of a run ({@link runsOf}) is a `repeat` when a citation of the
 *   same run already names its note (a consulted or followed ref, which cites the whole note) or its path and
 *   lines (a packet excerpt the run's ledger read); two such citations of one run with the same path and
 *   lines are one.
 * Every other citation is its own lookup.
 */
function markLookups(citations: Citation[], artifacts: readonly CoverageArtifact[]): void {
  const scopes = new Map<string, 'note' | 'section'>();
  for (const art of artifacts) for (const occ of art.refs) if (occ.lookup !== undefined && occ.read_scope !== undefined) scopes.set(occ.lookup, occ.read_scope);
  const runs = runsOf(artifacts);
  const seen = new Set<string>();
  // The citation counted for each record key; a stale one takes the place of an earlier one that holds (a
  // whole-note read of which one chunk changed is a stale lookup).
  const counted = new Map<string, Citation>();
  // What each run's records read: `run path` and `run path start-end`.
  const read = new Set<string>();
  for (const c of citations) {
    if (c.lookup === undefined) continue;
    const scope = scopes.get(c.lookup);
    if (scope !== undefined && c.cites === 'lines') c.cites = scope;
    const run = ledgerOf(c.lookup);
    read.add(`${run}\u0000${c.path}`);
    read.add(`${run}\u0000${c.path}\u0000${c.line_start}-${c.line_end}`);
    const key = scope !== undefined ? `${c.lookup}\u0000${c.path}` : `${c.lookup}\u0000${c.path}\u0000${c.line_start}-${c.line_end}`;
    const first = counted.get(key);
    if (first === undefined) counted.set(key, c);
    else if (isStale(c.status) && !isStale(first.status)) {
      first.repeat = true;
      counted.set(key, c);
    } else c.repeat = true;
  }
  for (const c of citations) {
    const run = runs.get(c.artifact);
    if (c.lookup !== undefined || run === undefined) continue;
    const lines = `${run}\u0000${c.path}\u0000${c.line_start}-${c.line_end}`;
    const note = `${run}\u0000${c.path}`;
    if (c.cites === 'note' ? read.has(note) || seen.has(note) : read.has(lines) || seen.has(lines)) c.repeat = true;
    else seen.add(c.cites === 'note' ? note : lines);
  }
}

type SortedRef =
  | { kind: 'rejected'; detail: string }
  | { kind: 'non_lore' }
  | { kind: 'other_namespace'; namespace: string }
  | { kind: 'lore'; parsed: ParsedRef; path: string };

/** One occurrence: refused, not lore, another namespace's, or a lore ref of this vault (parsed, path fixed up). */
function sortRef(index: VaultIndex, occ: RefOccurrence, notePaths: ReadonlySet<string>, byPath: ReadonlyMap<string, NoteRecord>): SortedRef {
  const namespace = index.namespace;
  if (occ.not_a_ref !== undefined) return { kind: 'rejected', detail: occ.not_a_ref };
  const cls = classifyRef(occ.ref, namespace, notePaths);
  if (cls.kind === 'non_lore') return { kind: 'non_lore' };
  if (cls.kind === 'other_namespace') return { kind: 'other_namespace', namespace: cls.namespace };
  let parsed: ParsedRef;
  try {
    parsed = parseRef(cls.text, { namespace });
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    return { kind: 'rejected', detail: e.message };
  }
  if (parsed.is_prefix) return { kind: 'rejected', detail: `ref ${JSON.stringify(occ.ref)} names a folder, not a note` };
  let path = parsed.path as string;
  // A digest may write the vault folder in front of the path (`AetheriaLore/Aetheria/...`).
  if (!byPath.has(path) && path.startsWith(namespace + '/') && byPath.has(path.slice(namespace.length + 1)) && cls.text.indexOf(':') < 0) {
    path = path.slice(namespace.length + 1);
    parsed = { ...parsed, path: path as VaultPath };
  }
  return { kind: 'lore', parsed, path };
}

/** One lore citation: placed in the note ({@link placeCitation}), then checked against what the artifact recorded ({@link checkContent}). */
function citeOne(index: VaultIndex, art: CoverageArtifact, occ: RefOccurrence, parsed: ParsedRef, path: string, texts: NoteTexts, drift: boolean): Citation {
  const note = texts.byPath.get(path);
  let placed: Placed;
  if (!note) {
    placed = { status: 'missing_path', cites: scopeOf(parsed, occ), line_start: null, line_end: null, checked: 'none', detail: `no note ${path} in vault ${index.namespace}` };
  } else {
    placed = placeCitation(index, parsed, occ, note);
    if (placed.status === 'ok') placed = checkContent(placed, occ, texts.lines.get(path)!, path, art, index.snapshot_id, drift);
  }
  // Key order is fixed (artifact, role, pointer, record_line?, ref, path, lines, cites, status, checked, detail?) for byte-stable JSON.
  return {
    artifact: art.file, role: occ.role, pointer: occ.pointer,
    ...(occ.record_line !== undefined ? { record_line: occ.record_line } : {}),
    ref: occ.ref, path: path as VaultPath, line_start: placed.line_start, line_end: placed.line_end,
    cites: placed.cites, status: placed.status, checked: placed.checked,
    ...(placed.detail !== undefined ? { detail: placed.detail } : {}),
    ...(occ.lookup !== undefined ? { lookup: occ.lookup } : {}),
  };
}

/** The lines a citation covers as written: explicit ranges, `#L…` and `#^block` are lines; `#Heading`/`#chunkN` a section; no fragment the note. */
function scopeOf(parsed: ParsedRef, occ: RefOccurrence): CitationScope {
  if (occ.line_start !== undefined || occ.bad_range !== undefined) return 'lines';
  const f = parsed.fragment;
  if (f === null) return 'note';
  return f.kind === 'lines' || f.kind === 'block' ? 'lines' : 'section';
}

/** Largest range (in lines) inside which a packet excerpt's text is located; the search is quadratic in it. */
const MAX_LOCATE_LINES = 2000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Check an `ok`, placed citation against what its artifact recorded for it, range by range:
 * verbatim text (`text_changed` when the lines differ), a text hash (likewise), a packet excerpt's text
 * (located inside the range: the citation then covers exactly the lines it quotes), else the snapshot
 * (`same_snapshot`; a different snapshot with nothing recorded is `unverifiable`, not stale).
 */
function checkContent(placed: Placed, occ: RefOccurrence, lines: readonly (string | undefined)[], path: string, art: CoverageArtifact, vaultSnapshot: string, drift: boolean): Placed {
  const { line_start: a, line_end: b } = placed;
  const slice = a !== null && b !== null ? lines.slice(a - 1, b) : [];
  const known = a !== null && slice.every((l) => l !== undefined);
  if (known && (occ.verbatim_text !== undefined || occ.text_sha256 !== undefined)) {
    const now = slice.join('\n');
    if (occ.verbatim_text !== undefined ? now === occ.verbatim_text : sha256(now) === occ.text_sha256) {
      return { ...placed, checked: occ.verbatim_text !== undefined ? 'recorded_text' : 'recorded_hash' };
    }
    let k = 0;
    if (occ.verbatim_text !== undefined) {
      const was = occ.verbatim_text.split('\n');
      while (k < slice.length && slice[k] === was[k]) k++;
    }
    const where = occ.verbatim_text !== undefined ? ` (first difference at line ${a! + k})` : ' (sha256 of the lines differs from the recorded one)';
    return { ...placed, status: 'text_changed', checked: 'none', detail: `${path} lines ${a}-${b} no longer hold the recorded text${where}` };
  }
  // Bounded: an excerpt is located only inside a range of at most MAX_LOCATE_LINES lines (a chunk or section).
  if (known && occ.excerpt_text !== undefined && slice.length <= MAX_LOCATE_LINES) {
    const found = locateExcerpt(slice as string[], occ.excerpt_text);
    if (found !== null) return { ...placed, cites: 'lines', line_start: a! + found[0], line_end: a! + found[1], checked: 'excerpt_text' };
  }
  if (!drift) return { ...placed, checked: art.snapshot_id === vaultSnapshot ? 'same_snapshot' : 'resolved_only' };
  return {
    ...placed,
    status: 'unverifiable',
    checked: 'none',
    detail: `artifact records snapshot ${art.snapshot_id!.slice(0, 12)}, vault is at ${vaultSnapshot.slice(0, 12)}, and no text or hash for these lines; the ref still resolves, but whether its lines changed cannot be told`,
  };
}

/** Fold for locating an excerpt: wikilinks shown as their display text (as a packet prompt shows them), whitespace collapsed. */
function foldForExcerpt(text: string): string {
  return text
    .replace(/!?\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]/g, (_m, target: string, frag: string | undefined, display: string | undefined) => display ?? (target || frag || ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The 0-based offsets `[first, last]` (inclusive) of the smallest run of `lines` whose folded text
 * contains the folded excerpt, or null. Folding (see {@link foldForExcerpt}) lets an excerpt that shows
 * `[[T|D]]` as `D` still be found; an excerpt that is not a verbatim quote of the range is not located.
 */
function locateExcerpt(lines: readonly string[], excerpt: string): [number, number] | null {
  const want = foldForExcerpt(excerpt);
  if (want === '') return null;
  const folded = lines.map(foldForExcerpt);
  const holds = (i: number, j: number): boolean => folded.slice(i, j + 1).filter((t) => t !== '').join(' ').includes(want);
  for (let j = 0; j < folded.length; j++) {
    // j is the first line at which the run from the top holds the excerpt: the excerpt ends on line j.
    if (!holds(0, j)) continue;
    let i = j;
    while (i > 0 && !holds(i, j)) i--;
    return [i, j];
  }
  return null;
}

/** Step 3: per-note figures; lines count as covered only through `ok` citations that cite lines. */
function noteRows(index: VaultIndex, texts: NoteTexts, citations: readonly Citation[]): NoteCoverage[] {
  const inbound = inboundLinks(index, texts.byPath);
  const perNote = new Map<string, { cit: number; stale: number; whole: number; unver: number; arts: Set<string>; covered: Set<number> }>();
  for (const n of texts.notes) perNote.set(n.path, { cit: 0, stale: 0, whole: 0, unver: 0, arts: new Set(), covered: new Set() });
  for (const c of citations) {
    const p = perNote.get(c.path);
    if (!p) continue;
    p.arts.add(c.artifact);
    if (c.repeat === true) continue; // the same lookup as an earlier citation: its lines are already counted
    p.cit++;
    if (isStale(c.status)) p.stale++;
    else if (c.status === 'unverifiable') p.unver++;
    else if (c.cites !== 'lines') p.whole++;
    else if (c.line_start !== null && c.line_end !== null) for (let i = c.line_start; i <= c.line_end; i++) p.covered.add(i);
  }
  return texts.notes.map((n) => {
    const p = perNote.get(n.path)!;
    const b = texts.body.get(n.path)!;
    const covered = b.filter((i) => p.covered.has(i)).length;
    return {
      path: n.path,
      title: n.title,
      folder: folderOf(n.path),
      classes: [...n.classes].sort(cmp),
      citations: p.cit,
      whole_citations: p.whole,
      unverifiable_citations: p.unver,
      artifacts: p.arts.size,
      stale_citations: p.stale,
      body_lines: b.length,
      covered_lines: covered,
      line_coverage: ratio(covered, b.length),
      inbound_links: inbound.get(n.path) ?? 0,
      cited_ranges: mergeRanges(p.covered),
    };
  });
}

/** Ascending, disjoint `[start, end]` runs of a set of line numbers. */
function mergeRanges(lines: ReadonlySet<number>): [number, number][] {
  const sorted = [...lines].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const l of sorted) {
    const last = out[out.length - 1];
    if (last && l === last[1] + 1) last[1] = l;
    else out.push([l, l]);
  }
  return out;
}

/** Links from other notes that resolve (or ambiguously resolve, or resolve to a broken fragment) to each note. */
function inboundLinks(index: VaultIndex, byPath: ReadonlyMap<string, NoteRecord>): Map<string, number> {
  const inbound = new Map<string, number>();
  for (const l of index.links) {
    const r = l.resolution;
    if (r.status !== 'resolved' && r.status !== 'ambiguous' && r.status !== 'broken_fragment') continue;
    if (r.path === l.source_path || !byPath.has(r.path)) continue;
    inbound.set(r.path, (inbound.get(r.path) ?? 0) + 1);
  }
  return inbound;
}

/** Step 4: folders (recursive, tree order) and target classes (code-unit order), figures summed over their notes. */
function groupRows(rows: readonly NoteCoverage[], citations: readonly Citation[]): { folders: FolderCoverage[]; classes: ClassCoverage[] } {
  const artsOf = new Map<string, Set<string>>();
  for (const c of citations) {
    const s = artsOf.get(c.path) ?? new Set<string>();
    s.add(c.artifact);
    artsOf.set(c.path, s);
  }
  const folders = new Map<string, ReturnType<typeof emptyGroup>>();
  const classes = new Map<string, ReturnType<typeof emptyGroup> & { never: string[] }>();
  const addTo = (g: ReturnType<typeof emptyGroup>, row: NoteCoverage): void => {
    g.notes++;
    if (row.citations > 0) g.cited_notes++;
    g.citations += row.citations;
    g.whole_citations += row.whole_citations;
    g.unverifiable_citations += row.unverifiable_citations;
    g.stale_citations += row.stale_citations;
    g.body_lines += row.body_lines;
    g.covered_lines += row.covered_lines;
    for (const a of artsOf.get(row.path) ?? []) g.artifactSet.add(a);
  };
  for (const row of rows) {
    const segs = row.folder === '' ? [] : row.folder.split('/');
    for (let d = 1; d <= segs.length; d++) {
      const f = segs.slice(0, d).join('/');
      if (!folders.has(f)) folders.set(f, emptyGroup());
      addTo(folders.get(f)!, row);
    }
    for (const k of row.classes) {
      if (!classes.has(k)) classes.set(k, { ...emptyGroup(), never: [] });
      const g = classes.get(k)!;
      addTo(g, row);
      if (row.citations === 0) g.never.push(row.path);
    }
  }
  return {
    folders: [...folders.keys()].sort(cmpSegments).map((f) => ({ folder: f, depth: f.split('/').length, ...finishGroup(folders.get(f)!) })),
    classes: [...classes.keys()].sort(cmp).map((k) => {
      const { never, ...rest } = classes.get(k)!;
      return { class: k, ...finishGroup(rest), never_cited: [...never].sort(cmp) as VaultPath[] };
    }),
  };
}

/** Step 7: the report's totals; every stale status listed, zeros included (seed 003). */
function reportTotals(x: {
  notes: readonly NoteCoverage[]; classes: readonly ClassCoverage[]; untouched: readonly string[]; gaps: VaultGaps;
  cited: CitedArtifacts; stale: readonly Citation[]; artifacts: number; skipped: number;
}): CoverageReport['totals'] {
  // Counted: one citation per lookup (repeats listed in `citations` and `stale`, not counted).
  const counted = x.cited.citations.filter((c) => c.repeat !== true);
  const staleBy = Object.fromEntries(STALE_STATUSES.map((s) => [s, counted.filter((c) => c.status === s).length])) as CoverageReport['totals']['stale_by_status'];
  const sum = (f: (r: NoteCoverage) => number): number => x.notes.reduce((s, r) => s + f(r), 0);
  const body = sum((r) => r.body_lines);
  const covered = sum((r) => r.covered_lines);
  const citedNotes = x.notes.filter((r) => r.citations > 0).length;
  return {
    notes: x.notes.length,
    artifacts: x.artifacts,
    skipped_inputs: x.skipped,
    lore_citations: counted.length,
    repeated_citations: x.cited.citations.length - counted.length,
    cited_notes: citedNotes,
    never_cited_notes: x.notes.length - citedNotes,
    stale_citations: counted.filter((c) => isStale(c.status)).length,
    stale_by_status: staleBy,
    unverifiable_citations: counted.filter((c) => c.status === 'unverifiable').length,
    whole_citations: sum((r) => r.whole_citations),
    non_lore_refs: x.cited.nonLore.length,
    other_namespace_refs: x.cited.otherNs.length,
    rejected_refs: x.cited.rejected.length,
    body_lines: body,
    covered_lines: covered,
    line_coverage: ratio(covered, body),
    classes: x.classes.length,
    untouched_classes: x.untouched.length,
    unresolved_links: x.gaps.unresolved_links.length,
    ambiguous_links: x.gaps.ambiguous_links.length,
    broken_fragments: x.gaps.broken_fragments.length,
    orphan_notes: x.gaps.orphan_notes.length,
  };
}

/** A name folded for matching corpus subjects to notes: NFKD without marks, lower case, punctuation as single spaces. */
function foldName(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/**
 * Step 6: the join with Ghostlight's corpus coverage ledger(s) among the artifacts: each subject (primary,
 * secondary, flashpoint) matched to the note whose title, alias or file name folds to the same name, and
 * its citation count; per fixture, how many of its subjects are cited. Null when no ledger was given.
 */
function corpusCoverage(index: VaultIndex, artifacts: readonly CoverageArtifact[], rows: readonly NoteCoverage[]): CorpusCoverage | null {
  const ledgers = artifacts.filter((a) => a.kind === 'corpus_coverage_ledger' && a.corpus);
  if (ledgers.length === 0) return null;
  const byName = new Map<string, string[]>();
  for (const n of [...index.notes].sort((a, b) => cmp(a.path, b.path))) {
    const base = n.path.slice(n.path.lastIndexOf('/') + 1).replace(/\.md$/i, '');
    for (const name of new Set([n.title, base, ...n.aliases].map(foldName).filter((k) => k !== ''))) {
      const list = byName.get(name) ?? [];
      if (!list.includes(n.path)) list.push(n.path);
      byName.set(name, list);
    }
  }
  const citationsOf = new Map(rows.map((r) => [r.path as string, r.citations]));
  const subjects = new Map<string, CorpusSubject>();
  const fixtures: CorpusCoverage['fixtures'] = [];
  for (const led of ledgers) {
    for (const fx of led.corpus!.fixtures) {
      const seen = new Set<string>();
      const uncited: string[] = [];
      let cited = 0;
      for (const { name, role } of fx.subjects) {
        const key = foldName(name);
        if (key === '') continue;
        let subj = subjects.get(key);
        if (!subj) {
          const paths = byName.get(key) ?? [];
          subj = { subject: name, roles: [], fixtures: [], path: (paths[0] ?? null) as VaultPath | null, other_candidates: paths.slice(1) as VaultPath[], citations: paths[0] ? citationsOf.get(paths[0]) ?? 0 : 0 };
          subjects.set(key, subj);
        }
        if (!subj.roles.includes(role)) subj.roles.push(role);
        if (!subj.fixtures.includes(fx.fixture_id)) subj.fixtures.push(fx.fixture_id);
        if (seen.has(key)) continue;
        seen.add(key);
        if (subj.citations > 0) cited++;
        else uncited.push(subj.subject);
      }
      fixtures.push({ fixture_id: fx.fixture_id, status: fx.status, subjects: seen.size, cited_subjects: cited, uncited: uncited.sort(cmp) });
    }
  }
  const roleOrder: CorpusSubjectRole[] = ['primary', 'secondary', 'flashpoint'];
  const list = [...subjects.values()]
    .map((s) => ({ ...s, roles: roleOrder.filter((r) => s.roles.includes(r)), fixtures: [...s.fixtures].sort(cmp) }))
    .sort((a, b) => b.citations - a.citations || cmp(foldName(a.subject), foldName(b.subject)) || cmp(a.subject, b.subject));
  fixtures.sort((a, b) => cmp(a.fixture_id, b.fixture_id));
  return {
    files: ledgers.map((l) => l.file).sort(cmp),
    subjects: list,
    fixtures,
    totals: { fixtures: fixtures.length, subjects: list.length, matched_subjects: list.filter((s) => s.path !== null).length, cited_subjects: list.filter((s) => s.citations > 0).length },
  };
}

/** The vault's own gaps, from the index's link graph (tags and external URLs are not gaps). */
function vaultGaps(index: VaultIndex, rows: readonly NoteCoverage[]): VaultGaps {
  const links = [...index.links].sort((a, b) => cmp(a.source_path, b.source_path) || a.line - b.line || a.column - b.column);
  const gaps: VaultGaps = { unresolved_links: [], ambiguous_links: [], broken_fragments: [], orphan_notes: [] };
  for (const l of links) {
    if (l.syntax === 'tag' || l.syntax === 'external') continue;
    const r = l.resolution;
    const at = { source_path: notePathOnDisk(index, l.source_path), line: l.line, column: l.column, raw: l.raw };
    if (r.status === 'unresolved') gaps.unresolved_links.push({ ...at, target: l.target });
    else if (r.status === 'ambiguous') gaps.ambiguous_links.push({ ...at, target: l.target, resolved_to: r.path, candidates: [...r.candidates].sort(cmp) });
    else if (r.status === 'broken_fragment') gaps.broken_fragments.push({ ...at, path: r.path, fragment: r.fragment });
  }
  gaps.orphan_notes = rows.filter((r) => r.inbound_links === 0).map((r) => r.path);
  return gaps;
}

/**
 * `coverageReport(index, artifacts, options) → CoverageReport`: which notes, folders and target classes
 * the artifacts cite, how much of each note's text those citations cover, which citations have gone
 * stale, and where the vault itself has holes. Pure: no I/O, no clock, deterministic order.
 *
 * Figures are defined in docs/COVERAGE.md; the short version is in the field docs of ./types.ts.
 */
import { LoretraceError, isLoretraceError } from '../errors.js';
import { parseRef, resolveRef } from '../refs/index.js';
import type { ParsedRef } from '../refs/index.js';
import type { NoteRecord, VaultIndex, VaultPath } from '../types.js';
import type {
  ApartRef,
  Citation,
  CitationStatus,
  ClassCoverage,
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
  line_start: number | null;
  line_end: number | null;
  detail?: string;
}

function place(
  index: VaultIndex,
  parsed: ParsedRef,
  occ: RefOccurrence,
  note: NoteRecord,
): Placed {
  const n = note.line_count;
  if (occ.bad_range !== undefined) {
    return { status: 'invalid_range', line_start: null, line_end: null, detail: `${occ.bad_range}: not a line range; expected integers 1 ≤ line_start ≤ line_end` };
  }
  const explicit = occ.line_start !== undefined && occ.line_end !== undefined
    ? { start: occ.line_start, end: occ.line_end, what: `cited lines ${occ.line_start}-${occ.line_end}` }
    : parsed.fragment?.kind === 'lines'
      ? { start: parsed.fragment.start, end: parsed.fragment.end, what: `#L${parsed.fragment.start}-L${parsed.fragment.end}` }
      : null;
  if (explicit) {
    // `what` is the subject of the messages below: "cited lines 3-40" / "#L3-L40".
    if (explicit.start < 1 || explicit.end < explicit.start) {
      return { status: 'invalid_range', line_start: null, line_end: null, detail: `${explicit.what}: not a line range; expected 1 ≤ line_start ≤ line_end` };
    }
    if (explicit.end > n) {
      return { status: 'range_beyond_eof', line_start: explicit.start, line_end: explicit.end, detail: `${explicit.what}: line ${explicit.end} is past the end of ${note.path}, which has ${n} lines` };
    }
    return { status: 'ok', line_start: explicit.start, line_end: explicit.end };
  }
  const f = parsed.fragment;
  if (f === null) return { status: 'ok', line_start: n === 0 ? null : 1, line_end: n === 0 ? null : n };
  if (f.kind === 'chunk' && f.index >= note.chunk_count) {
    return { status: 'missing_fragment', line_start: null, line_end: null, detail: `${note.path} has ${note.chunk_count} chunks (0..${note.chunk_count - 1}), not chunk${f.index}` };
  }
  try {
    const r = resolveRef(index, parsed);
    return { status: 'ok', line_start: r.line_start, line_end: r.line_end };
  } catch (e) {
    if (isLoretraceError(e)) {
      const what = f.kind === 'heading' ? `no heading ${JSON.stringify(f.text)}` : f.kind === 'block' ? `no block ^${f.id}` : `no ${f.kind} fragment`;
      return { status: 'missing_fragment', line_start: null, line_end: null, detail: `${what} in ${note.path}` };
    }
    throw e;
  }
}

function emptyGroup(): GroupCoverage & { artifactSet: Set<string> } {
  return { notes: 0, cited_notes: 0, citations: 0, artifacts: 0, stale_citations: 0, body_lines: 0, covered_lines: 0, line_coverage: null, artifactSet: new Set() };
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

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Check the arguments of {@link coverageReport} before anything is computed, so a wrong call (file paths
 * where artifacts belong, say) says what was expected instead of failing with a bare TypeError.
 *
 * @throws LoretraceError `bad_options` (exit 2) naming the argument (`artifacts[0]`, `options.skipped`)
 *   and what was expected.
 */
function checkCoverageArguments(index: unknown, artifacts: unknown, options: unknown): void {
  const bad = (message: string, expected: string) => new LoretraceError('bad_options', `coverageReport: ${message}`, { expected }, 2);
  if (!isPlainObject(index) || typeof index['namespace'] !== 'string' || typeof index['snapshot_id'] !== 'string' || !Array.isArray(index['notes']) || !Array.isArray(index['chunks']) || !Array.isArray(index['links'])) {
    throw bad(`index must be a vault index as indexVault returns it (got ${describeValue(index)})`, 'a VaultIndex from indexVault');
  }
  const artifactHelp = 'recognised artifacts ({ file, kind, schema_version, snapshot_id, refs }) as readArtifacts(...).artifacts returns them; pass file and folder paths to readArtifacts first';
  if (!Array.isArray(artifacts)) throw bad(`artifacts must be an array of ${artifactHelp} (got ${describeValue(artifacts)})`, 'an array of CoverageArtifact');
  artifacts.forEach((a: unknown, i) => {
    if (!isPlainObject(a) || typeof a['file'] !== 'string' || typeof a['kind'] !== 'string' || !Array.isArray(a['refs'])) {
      throw bad(`artifacts[${i}] is ${describeValue(a)}; expected one of the ${artifactHelp}`, 'a CoverageArtifact');
    }
    if (a['snapshot_id'] !== null && typeof a['snapshot_id'] !== 'string') throw bad(`artifacts[${i}].snapshot_id must be a string or null (got ${describeValue(a['snapshot_id'])})`, 'a snapshot_id or null');
    (a['refs'] as unknown[]).forEach((r, j) => {
      if (!isPlainObject(r) || typeof r['ref'] !== 'string' || typeof r['pointer'] !== 'string') {
        throw bad(`artifacts[${i}].refs[${j}] must be a ref occurrence { role, pointer, ref, … } (got ${describeValue(r)})`, 'a RefOccurrence');
      }
    });
  });
  if (!isPlainObject(options)) throw bad(`options must be an object (got ${describeValue(options)})`, '{ noteLines?, skipped? }');
  if (options['skipped'] !== undefined && !Array.isArray(options['skipped'])) throw bad(`options.skipped must be an array of skipped inputs (got ${describeValue(options['skipped'])})`, 'readArtifacts(...).skipped');
  const nl = options['noteLines'];
  if (nl !== undefined && !(nl instanceof Map) && !isPlainObject(nl)) throw bad(`options.noteLines must be a Map or an object of lines per vault path (got ${describeValue(nl)})`, 'loadNoteLines(index)');
}

/**
 * Compute the coverage report of `artifacts` against the vault `index`.
 *
 * Every ref occurrence of every artifact is sorted into: a lore citation in the vault's namespace
 * (`citations`, matched against the vault; stale ones also in `stale`), a ref into another namespace
 * (`other_namespace_refs`), a non-lore ref (`non_lore_refs`), or a ref the grammar refuses
 * (`rejected_refs`, parseRef's `bad_ref` message). Nothing is dropped.
 *
 * Figures (lines 1-based inclusive; counts of lines, not characters):
 * - per note: `citations` (occurrences naming the note, stale included), `artifacts` (distinct files),
 *   `body_lines` (non-blank lines outside frontmatter), `covered_lines` (of those, lines inside the range
 *   of a non-stale citation: whole note → all lines; `#chunkN` → the chunk; `#Heading` → the heading's
 *   section as `resolveRef` gives it; `#^block` → its line; explicit ranges → those lines),
 *   `line_coverage` = covered / body, 4 decimals; `inbound_links` from other notes.
 * - per folder (recursive: a folder includes its subfolders) and per target class: the same summed,
 *   with `cited_notes` and distinct `artifacts`; per class also the never-cited notes.
 * - gaps: unresolved links, ambiguous links, broken heading/block fragments (from the index's links),
 *   orphan notes (no resolved or ambiguous link from another note).
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
  const namespace = index.namespace;
  const notes = [...index.notes].sort((a, b) => cmp(a.path, b.path));
  const byPath = new Map<string, NoteRecord>(notes.map((n) => [n.path, n]));
  const notePaths = new Set(byPath.keys());
  const chunksByPath = new Map<string, VaultIndex['chunks']>();
  for (const c of index.chunks) {
    const list = chunksByPath.get(c.path) ?? [];
    list.push(c);
    chunksByPath.set(c.path, list);
  }

  // Current lines and body (non-blank, outside frontmatter) line sets per note.
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

  const sortedArtifacts = [...artifacts].sort((a, b) => cmp(a.file, b.file));
  const citations: Citation[] = [];
  const nonLore: ApartRef[] = [];
  const otherNs: ApartRef[] = [];
  const rejected: ApartRef[] = [];
  const summaries: CoverageReport['artifacts'] = [];

  for (const art of sortedArtifacts) {
    const drift = art.snapshot_id !== null && art.snapshot_id !== index.snapshot_id;
    const sum = { lore: 0, stale: 0, non: 0, other: 0, rej: 0 };
    for (const occ of art.refs) {
      const base = { artifact: art.file, pointer: occ.pointer, ...(occ.record_line !== undefined ? { record_line: occ.record_line } : {}), ref: occ.ref };
      if (occ.not_a_ref !== undefined) {
        rejected.push({ ...base, detail: occ.not_a_ref });
        sum.rej++;
        continue;
      }
      const cls = classifyRef(occ.ref, namespace, notePaths);
      if (cls.kind === 'non_lore') {
        nonLore.push(base);
        sum.non++;
        continue;
      }
      if (cls.kind === 'other_namespace') {
        otherNs.push({ ...base, namespace: cls.namespace });
        sum.other++;
        continue;
      }
      let parsed: ParsedRef;
      try {
        parsed = parseRef(cls.text, { namespace });
      } catch (e) {
        if (!isLoretraceError(e)) throw e;
        rejected.push({ ...base, detail: e.message });
        sum.rej++;
        continue;
      }
      if (parsed.is_prefix) {
        rejected.push({ ...base, detail: `ref ${JSON.stringify(occ.ref)} names a folder, not a note` });
        sum.rej++;
        continue;
      }
      let path = parsed.path as string;
      // A digest may write the vault folder in front of the path (`AetheriaLore/Aetheria/...`).
      if (!byPath.has(path) && path.startsWith(namespace + '/') && byPath.has(path.slice(namespace.length + 1)) && cls.text.indexOf(':') < 0) {
        path = path.slice(namespace.length + 1);
        parsed = { ...parsed, path: path as VaultPath };
      }
      const note = byPath.get(path);
      let placed: Placed;
      if (!note) {
        placed = { status: 'missing_path', line_start: null, line_end: null, detail: `no note ${path} in vault ${namespace}` };
      } else {
        placed = place(index, parsed, occ, note);
        if (placed.status === 'ok') {
          let verified = false;
          if (occ.verbatim_text !== undefined && placed.line_start !== null && placed.line_end !== null) {
            const ls = lines.get(path)!;
            const slice = ls.slice(placed.line_start - 1, placed.line_end);
            if (slice.every((l) => l !== undefined)) {
              const now = slice.join('\n');
              if (now === occ.verbatim_text) verified = true;
              else {
                const was = occ.verbatim_text.split('\n');
                let k = 0;
                while (k < slice.length && slice[k] === was[k]) k++;
                placed = {
                  ...placed,
                  status: 'text_changed',
                  detail: `${path} lines ${placed.line_start}-${placed.line_end} no longer hold the recorded text (first difference at line ${placed.line_start + k})`,
                };
              }
            }
          }
          if (placed.status === 'ok' && drift && !verified) {
            placed = {
              ...placed,
              status: 'snapshot_changed',
              detail: `artifact records snapshot ${art.snapshot_id!.slice(0, 12)}, vault is at ${index.snapshot_id.slice(0, 12)}; no recorded text to show the citation still holds`,
            };
          }
        }
      }
      // Key order is fixed (artifact, role, pointer, record_line?, ref, path, lines, status, detail?) for byte-stable JSON.
      const citation: Citation = {
        artifact: base.artifact, role: occ.role, pointer: base.pointer,
        ...(occ.record_line !== undefined ? { record_line: occ.record_line } : {}),
        ref: occ.ref, path: path as VaultPath, line_start: placed.line_start, line_end: placed.line_end, status: placed.status,
        ...(placed.detail !== undefined ? { detail: placed.detail } : {}),
      };
      citations.push(citation);
      sum.lore++;
      if (citation.status !== 'ok') sum.stale++;
    }
    summaries.push({
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

  // Inbound links (from other notes) per note.
  const inbound = new Map<string, number>();
  for (const l of index.links) {
    const r = l.resolution;
    if (r.status !== 'resolved' && r.status !== 'ambiguous' && r.status !== 'broken_fragment') continue;
    if (r.path === l.source_path || !byPath.has(r.path)) continue;
    inbound.set(r.path, (inbound.get(r.path) ?? 0) + 1);
  }

  // Per-note figures.
  const perNote = new Map<string, { cit: number; stale: number; arts: Set<string>; covered: Set<number> }>();
  for (const n of notes) perNote.set(n.path, { cit: 0, stale: 0, arts: new Set(), covered: new Set() });
  for (const c of citations) {
    const p = perNote.get(c.path);
    if (!p) continue;
    p.cit++;
    p.arts.add(c.artifact);
    if (c.status !== 'ok') {
      p.stale++;
      continue;
    }
    if (c.line_start !== null && c.line_end !== null) for (let i = c.line_start; i <= c.line_end; i++) p.covered.add(i);
  }
  const noteRows: NoteCoverage[] = notes.map((n) => {
    const p = perNote.get(n.path)!;
    const b = body.get(n.path)!;
    const covered = b.filter((i) => p.covered.has(i)).length;
    return {
      path: n.path,
      title: n.title,
      folder: folderOf(n.path),
      classes: [...n.classes].sort(cmp),
      citations: p.cit,
      artifacts: p.arts.size,
      stale_citations: p.stale,
      body_lines: b.length,
      covered_lines: covered,
      line_coverage: ratio(covered, b.length),
      inbound_links: inbound.get(n.path) ?? 0,
    };
  });

  // Folders (recursive) and classes.
  const folders = new Map<string, ReturnType<typeof emptyGroup>>();
  const classes = new Map<string, ReturnType<typeof emptyGroup> & { never: string[] }>();
  const addTo = (g: ReturnType<typeof emptyGroup>, row: NoteCoverage): void => {
    g.notes++;
    if (row.citations > 0) g.cited_notes++;
    g.citations += row.citations;
    g.stale_citations += row.stale_citations;
    g.body_lines += row.body_lines;
    g.covered_lines += row.covered_lines;
    for (const a of perNote.get(row.path)!.arts) g.artifactSet.add(a);
  };
  for (const row of noteRows) {
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
  const folderRows: FolderCoverage[] = [...folders.keys()].sort(cmpSegments).map((f) => ({ folder: f, depth: f.split('/').length, ...finishGroup(folders.get(f)!) }));
  const classRows: ClassCoverage[] = [...classes.keys()].sort(cmp).map((k) => {
    const g = classes.get(k)!;
    const { never, ...rest } = g;
    return { class: k, ...finishGroup(rest), never_cited: [...never].sort(cmp) as VaultPath[] };
  });
  const untouched = classRows.filter((c) => c.cited_notes === 0).map((c) => c.class);

  const gaps = vaultGaps(index, noteRows);
  const stale = citations.filter((c) => c.status !== 'ok');
  const staleBy = Object.fromEntries(STALE_STATUSES.map((s) => [s, stale.filter((c) => c.status === s).length])) as CoverageReport['totals']['stale_by_status'];
  const bodyTotal = noteRows.reduce((s, r) => s + r.body_lines, 0);
  const coveredTotal = noteRows.reduce((s, r) => s + r.covered_lines, 0);
  const cited = noteRows.filter((r) => r.citations > 0).length;

  return {
    schema_version: COVERAGE_SCHEMA_VERSION,
    namespace,
    snapshot_id: index.snapshot_id,
    totals: {
      notes: noteRows.length,
      artifacts: sortedArtifacts.length,
      skipped_inputs: options.skipped?.length ?? 0,
      lore_citations: citations.length,
      cited_notes: cited,
      never_cited_notes: noteRows.length - cited,
      stale_citations: stale.length,
      stale_by_status: staleBy,
      non_lore_refs: nonLore.length,
      other_namespace_refs: otherNs.length,
      rejected_refs: rejected.length,
      body_lines: bodyTotal,
      covered_lines: coveredTotal,
      line_coverage: ratio(coveredTotal, bodyTotal),
      classes: classRows.length,
      untouched_classes: untouched.length,
      unresolved_links: gaps.unresolved_links.length,
      ambiguous_links: gaps.ambiguous_links.length,
      broken_fragments: gaps.broken_fragments.length,
      orphan_notes: gaps.orphan_notes.length,
    },
    artifacts: summaries,
    skipped: [...(options.skipped ?? [])].sort((a, b) => cmp(a.file, b.file) || cmp(a.reason, b.reason)),
    notes: noteRows,
    folders: folderRows,
    classes: classRows,
    untouched_classes: untouched,
    citations,
    stale,
    non_lore_refs: nonLore,
    other_namespace_refs: otherNs,
    rejected_refs: rejected,
    gaps,
  };
}

/** The vault's own gaps, from the index's link graph (tags and external URLs are not gaps). */
function vaultGaps(index: VaultIndex, rows: readonly NoteCoverage[]): VaultGaps {
  const links = [...index.links].sort((a, b) => cmp(a.source_path, b.source_path) || a.line - b.line || a.column - b.column);
  const gaps: VaultGaps = { unresolved_links: [], ambiguous_links: [], broken_fragments: [], orphan_notes: [] };
  for (const l of links) {
    if (l.syntax === 'tag' || l.syntax === 'external') continue;
    const r = l.resolution;
    const at = { source_path: l.source_path, line: l.line, column: l.column, raw: l.raw };
    if (r.status === 'unresolved') gaps.unresolved_links.push({ ...at, target: l.target });
    else if (r.status === 'ambiguous') gaps.ambiguous_links.push({ ...at, target: l.target, resolved_to: r.path, candidates: [...r.candidates].sort(cmp) });
    else if (r.status === 'broken_fragment') gaps.broken_fragments.push({ ...at, path: r.path, fragment: r.fragment });
  }
  gaps.orphan_notes = rows.filter((r) => r.inbound_links === 0).map((r) => r.path);
  return gaps;
}

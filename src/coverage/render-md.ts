/**
 * `coverage.md`: the coverage report as Markdown tables a person can read in a terminal or a pull
 * request. Pure string function; same report ⇒ same bytes.
 */
import { citedNotesFirst, pct, rangesText } from './format.js';
import type { Citation, CoverageReport } from './types.js';
import { STALE_STATUSES } from './types.js';

/**
 * Escape a table cell so vault text (note names, aliases, link text) stays text: backslashes and pipes
 * (GFM tables: `\\|` is a literal pipe), line breaks to spaces, and `&`, `<`, `>` and backticks as HTML
 * character references (`&amp;`, `&lt;`, `&gt;`, `&#96;`; CommonMark §6.6 "Entity and numeric character
 * references"), so no inline HTML (`<script>`, `<svg onload=…>`, CommonMark §6.6 raw HTML) and no code span
 * survives in a viewer that renders HTML. A reader sees the same characters.
 */
export function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/`/g, '&#96;')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r\n|\r|\n/g, ' ');
}

function table(head: string[], rows: (string | number | null | undefined)[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [
    `| ${head.map(cell).join(' | ')} |`,
    `| ${sep.join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

const code = (s: string): string => '`' + s.replace(/`/g, 'ˋ') + '`';

function where(c: { artifact: string; pointer: string; record_line?: number }): string {
  return `${c.artifact}${c.record_line !== undefined ? `:${c.record_line}` : ''} ${c.pointer || '/'}`;
}

function citedRange(c: Citation): string {
  return c.line_start === null ? '–' : `${c.line_start}-${c.line_end}`;
}

/**
 * Render a {@link CoverageReport} as Markdown: totals, artifacts, skipped inputs, classes (with the
 * never-cited notes of each), folders, cited notes, stale citations, refs counted apart, vault gaps.
 * Every table is present even when empty (a `_none_` line says so), so a reader sees zeros.
 */
export function renderCoverageMarkdown(report: CoverageReport): string {
  const t = report.totals;
  const out: string[] = [];
  const none = (xs: readonly unknown[]): boolean => {
    if (xs.length === 0) out.push('_none_');
    return xs.length === 0;
  };
  out.push(`# Lore coverage: ${cell(report.namespace)}`, '');
  out.push(`Vault snapshot ${code(report.snapshot_id)} · report ${code(report.schema_version)}`, '');
  out.push('## Totals', '');
  out.push(table(['figure', 'value'], [
    ['notes', t.notes],
    ['notes cited at all', `${t.cited_notes} (${pct(t.notes === 0 ? null : t.cited_notes / t.notes)})`],
    ['notes never cited', t.never_cited_notes],
    ['line coverage (non-blank body lines inside cited line ranges)', `${t.covered_lines} / ${t.body_lines} (${pct(t.line_coverage)})`],
    ['whole-note and whole-section citations ("note cited", not lines)', t.whole_citations],
    ['artifacts read', t.artifacts],
    ['inputs skipped', t.skipped_inputs],
    ['lore citations', t.lore_citations],
    ['stale citations', t.stale_citations],
    ...STALE_STATUSES.map((s) => [`  stale: ${s}`, t.stale_by_status[s]] as [string, number]),
    ['unverifiable citations (other snapshot, nothing recorded to compare; not stale)', t.unverifiable_citations],
    ['non-lore refs (counted apart)', t.non_lore_refs],
    ['other-namespace refs (counted apart)', t.other_namespace_refs],
    ['refused refs (bad_ref, folder, not a ref)', t.rejected_refs],
    ['target classes', t.classes],
    ['untouched classes', t.untouched_classes],
    ['unresolved links', t.unresolved_links],
    ['ambiguous links', t.ambiguous_links],
    ['broken heading/block fragments', t.broken_fragments],
    ['orphan notes', t.orphan_notes],
  ], ['l', 'r']));
  out.push('', '## Artifacts', '');
  if (!none(report.artifacts)) {
    out.push(table(
      ['file', 'kind', 'lore citations', 'stale', 'non-lore', 'other namespace', 'refused', 'snapshot'],
      report.artifacts.map((a) => [a.file, a.kind, a.lore_citations, a.stale_citations, a.non_lore_refs, a.other_namespace_refs, a.rejected_refs,
        a.snapshot_matches === null ? 'not recorded' : a.snapshot_matches ? 'matches' : `differs (${a.snapshot_id!.slice(0, 12)})`]),
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l'],
    ));
  }
  out.push('', '## Skipped inputs', '');
  if (!none(report.skipped)) out.push(table(['file', 'reason', 'message'], report.skipped.map((s) => [s.file, s.reason, s.message])));
  out.push('', '## Target classes', '');
  if (!none(report.classes)) {
    out.push(table(
      ['class', 'notes', 'cited', 'citations', 'artifacts', 'stale', 'line coverage', 'never cited'],
      report.classes.map((c) => [c.class, c.notes, c.cited_notes, c.citations, c.artifacts, c.stale_citations, pct(c.line_coverage), c.never_cited.length]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ));
  }
  out.push('', `Untouched classes (no note cited): ${report.untouched_classes.length === 0 ? '_none_' : report.untouched_classes.map(code).join(', ')}`);
  out.push('', '### Never-cited notes by class', '');
  const withNever = report.classes.filter((c) => c.never_cited.length > 0);
  if (!none(withNever)) {
    for (const c of withNever) out.push(`- ${code(c.class)} (${c.never_cited.length} of ${c.notes}): ${c.never_cited.map(code).join(', ')}`);
  }
  out.push('', '## Folders', '');
  out.push('Figures include subfolders.', '');
  if (!none(report.folders)) {
    out.push(table(
      ['folder', 'notes', 'cited', 'citations', 'artifacts', 'stale', 'line coverage'],
      report.folders.map((f) => [`${'  '.repeat(f.depth - 1)}${f.folder}/`, f.notes, f.cited_notes, f.citations, f.artifacts, f.stale_citations, pct(f.line_coverage)]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ));
  }
  out.push('', '## Cited notes', '');
  out.push('Most cited first. "cited lines" are the ranges of line citations; whole-note and whole-section citations are counted apart ("note cited").', '');
  const cited = citedNotesFirst(report.notes);
  if (!none(cited)) {
    out.push(table(
      ['note', 'citations', 'note cited', 'artifacts', 'stale', 'covered / body lines', 'line coverage', 'cited lines', 'inbound links'],
      cited.map((n) => [n.path, n.citations, n.whole_citations, n.artifacts, n.stale_citations, `${n.covered_lines} / ${n.body_lines}`, pct(n.line_coverage), rangesText(n.cited_ranges), n.inbound_links]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r'],
    ));
  }
  if (report.corpus) {
    const c = report.corpus;
    out.push('', '## Fixture corpus subjects', '');
    out.push(`From ${c.files.map(code).join(', ')}: ${c.totals.cited_subjects} of ${c.totals.subjects} subjects have lore citations (${c.totals.matched_subjects} match a note).`, '');
    out.push(table(['subject', 'roles', 'note', 'citations', 'fixtures'], c.subjects.map((x) => [x.subject, x.roles.join(', '), x.path ?? 'no matching note', x.citations, x.fixtures.join(', ')]), ['l', 'l', 'l', 'r', 'l']));
    out.push('', table(['fixture', 'status', 'subjects', 'cited', 'uncited subjects'], c.fixtures.map((f) => [f.fixture_id, f.status ?? '', f.subjects, f.cited_subjects, f.uncited.join(', ')]), ['l', 'l', 'r', 'r', 'l']));
  }
  out.push('', '## Stale citations', '');
  if (!none(report.stale)) {
    out.push(table(['artifact / pointer', 'ref', 'lines', 'status', 'detail'], report.stale.map((c) => [where(c), c.ref, citedRange(c), c.status, c.detail])));
  }
  out.push('', '## Refs counted apart', '');
  out.push(`- other namespaces: ${report.other_namespace_refs.length}`);
  out.push(`- not vault lore: ${report.non_lore_refs.length}`);
  out.push(`- refused (ref grammar, folder refs, entries that are not refs): ${report.rejected_refs.length}`, '');
  const apart = [
    ...report.other_namespace_refs.map((r) => [where(r), r.ref, `other namespace (${r.namespace})`]),
    ...report.rejected_refs.map((r) => [where(r), r.ref, `refused: ${r.detail}`]),
    ...report.non_lore_refs.map((r) => [where(r), r.ref, 'not vault lore']),
  ];
  if (apart.length > 0) out.push(table(['artifact / pointer', 'ref', 'counted as'], apart));
  out.push('', '## Vault gaps', '');
  out.push(`### Unresolved links (${report.gaps.unresolved_links.length})`, '');
  if (!none(report.gaps.unresolved_links)) {
    out.push(table(['source', 'link', 'target'], report.gaps.unresolved_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.target])));
  }
  out.push('', `### Ambiguous links (${report.gaps.ambiguous_links.length})`, '');
  if (!none(report.gaps.ambiguous_links)) {
    out.push(table(['source', 'link', 'resolved to', 'candidates'], report.gaps.ambiguous_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.resolved_to, g.candidates.join(', ')])));
  }
  out.push('', `### Broken heading/block fragments (${report.gaps.broken_fragments.length})`, '');
  if (!none(report.gaps.broken_fragments)) {
    out.push(table(['source', 'link', 'note', 'fragment'], report.gaps.broken_fragments.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.path, g.fragment])));
  }
  out.push('', `### Orphan notes (${report.gaps.orphan_notes.length})`, '');
  out.push('No other note links to these.', '');
  if (!none(report.gaps.orphan_notes)) for (const p of report.gaps.orphan_notes) out.push(`- ${code(p)}`);
  return out.join('\n') + '\n';
}

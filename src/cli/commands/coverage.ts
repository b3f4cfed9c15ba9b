/**
 * `loretrace coverage --lore <dir> <artifact files or folders...> --out <dir> [--json]`
 *
 * Thin shell: index the vault, read the artifacts, compute the report, write coverage.json /
 * coverage.md / coverage.html, print a summary. One rule for the exit code: 0 when every input named
 * could be used and no citation is stale; 1 when a citation is stale or an input could not be used
 * (missing, unreadable, not JSON, a named file of an unknown kind, an empty folder — each listed as a skipped
 * input with its reason, the same way); 2 on usage errors. Inputs recognised but holding no lore refs
 * (projected contexts, schemas, responder raw outputs, loretrace's own summaries), JSON of no known kind met
 * inside a folder (`not_an_artifact`) and non-JSON files there are skipped for information and do not change
 * the exit code; `unverifiable` citations do not either. The text summary lists each failing skip on its own
 * line and the informational ones as counts by reason (all are in --json, coverage.json and coverage.md). An
 * exit 1 is explained by one line on stderr (`coverageFailure`), with `--json` too.
 */
import { basename, posix, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { checkCoverageOut, coverageReport, loadNoteLines, readArtifacts, writeCoverageFiles } from '../../coverage/index.js';
import type { CoverageReport } from '../../coverage/index.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from '../vault-options.js';

/**
 * Skip reasons that mean "an input could not be used" (exit 1): a named file of no known kind, and any file
 * that is not readable JSON (inside a folder too: a torn artifact must not pass). The others are informational.
 */
const BAD_INPUT = new Set(['not_json', 'unreadable', 'not_found', 'unrecognised', 'empty_folder']);

/** Exit code of a finished report: 1 when something stale or unusable is in it, else 0. */
export function coverageExitCode(report: CoverageReport): number {
  return report.totals.stale_citations > 0 || report.skipped.some((s) => BAD_INPUT.has(s.reason)) ? 1 : 0;
}

/**
 * Why {@link coverageExitCode} is 1, as one line for stderr (`loretrace: coverage exits 1: …`), or null when
 * it is 0: the stale citations (how many, the first with its artifact, pointer and ref) and the inputs
 * that could not be used (how many, the first with its reason). The summary on stdout lists them all.
 */
export function coverageFailure(report: CoverageReport): string | null {
  const parts: string[] = [];
  const stale = report.stale;
  if (report.totals.stale_citations > 0) {
    const c = stale[0];
    parts.push(`${plural(report.totals.stale_citations, 'stale citation')}${c ? ` (first: ${c.artifact} ${c.pointer}: ${c.ref} is ${c.status})` : ''}`);
  }
  const bad = report.skipped.filter((s) => BAD_INPUT.has(s.reason));
  if (bad.length > 0) parts.push(`${plural(bad.length, 'input')} could not be used (first: [${bad[0]!.reason}] ${bad[0]!.message})`);
  return parts.length === 0 ? null : `loretrace: coverage exits 1: ${parts.join('; ')}; the report was written all the same\n`;
}

function summary(report: CoverageReport, files: { json: string; md: string; html: string }): string {
  const t = report.totals;
  const pct = (v: number | null): string => (v === null ? '–' : `${(Math.round(v * 1000) / 10).toFixed(1)}%`);
  const lines = [
    `coverage of ${report.namespace} (snapshot ${report.snapshot_id.slice(0, 12)})`,
    `  artifacts read     ${t.artifacts} (skipped ${t.skipped_inputs})`,
    `  lore citations     ${t.lore_citations} (stale ${t.stale_citations}, unverifiable ${t.unverifiable_citations}${t.repeated_citations > 0 ? `; ${t.repeated_citations} more ${t.repeated_citations === 1 ? 'repeats' : 'repeat'} a lookup, counted once` : ''}; counted apart: ${t.non_lore_refs} non-lore, ${t.other_namespace_refs} other namespace, ${t.rejected_refs} refused)`,
    `  notes cited        ${t.cited_notes} of ${t.notes} (${plural(t.whole_citations, 'whole-note or section citation')}; line coverage ${pct(t.line_coverage)}: ${t.covered_lines} of ${t.body_lines} body lines in cited ranges)`,
    `  untouched classes  ${t.untouched_classes} of ${t.classes}${report.untouched_classes.length ? `: ${report.untouched_classes.slice(0, 12).join(', ')}${report.untouched_classes.length > 12 ? ', …' : ''}` : ''}`,
    `  vault gaps         ${t.unresolved_links} unresolved, ${t.ambiguous_links} ambiguous, ${plural(t.broken_fragments, 'broken fragment')}, ${plural(t.orphan_notes, 'orphan note')}`,
  ];
  for (const s of report.skipped) if (BAD_INPUT.has(s.reason)) lines.push(`  skipped [${s.reason}] ${s.message}`);
  // Informational skips (locks, keys, schemas, transcripts a run leaves in its folder) as counts by reason,
  // so they never bury the summary; every one is listed in --json, coverage.json and coverage.md.
  const info = new Map<string, number>();
  for (const s of report.skipped) if (!BAD_INPUT.has(s.reason)) info.set(s.reason, (info.get(s.reason) ?? 0) + 1);
  if (info.size > 0) {
    const counts = [...info.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([r, n]) => `${r} ${n}`).join(', ');
    lines.push(`  not counted        ${[...info.values()].reduce((a, b) => a + b, 0)} files (${counts}), listed in ${files.md}`);
  }
  for (const c of report.stale) lines.push(`  stale [${c.status}] ${c.artifact} ${c.pointer}: ${c.ref} — ${c.detail ?? ''}`);
  if (report.corpus) {
    const k = report.corpus.totals;
    lines.push(`  corpus subjects    ${k.cited_subjects} of ${k.subjects} with lore citations (${k.matched_subjects} match a note; ${k.fixtures} fixtures)`);
  }
  lines.push(`wrote ${files.json}`, `wrote ${files.md}`, `wrote ${files.html}`);
  return lines.join('\n') + '\n';
}

/** Register `coverage` on the program. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(program
    .command('coverage')
    .description('report which lore notes, folders and classes the artifacts cite, stale citations and vault gaps')
    .argument('<artifacts...>', 'artifact files or folders: responder packets, captures, traverse results, capture fragments, proxy ledgers (.jsonl), lore-grounding digests'))
    .requiredOption('--out <dir>', 'folder to write coverage.json, coverage.md and coverage.html into')
    .option('--json', 'print a JSON summary (files written, totals, untouched classes, skipped inputs) instead of text')
    .action(
      action(ctx, async (inputs: string[], opts: VaultCliOptions & { out: string }) => {
        // A --out that cannot be written is refused before the vault and the artifacts are read.
        await checkCoverageOut(resolve(ctx.cwd, opts.out), opts.out);
        const index = await openIndex(ctx, opts);
        const noteLines = await loadNoteLines(index);
        const { artifacts, skipped } = await readArtifacts(inputs, { cwd: ctx.cwd });
        const report = coverageReport(index, artifacts, { noteLines, skipped });
        const written = await writeCoverageFiles(report, resolve(ctx.cwd, opts.out), { noteLines, index });
        // Written paths as the user named --out (not relative to the cwd), so --json output is the same from any cwd.
        const shown = (p: string): string => posix.join(opts.out.split(sep).join('/'), basename(p));
        const files = { json: shown(written.json), md: shown(written.md), html: shown(written.html) };
        if (opts.json) {
          printJson(ctx, {
            schema_version: report.schema_version,
            namespace: report.namespace,
            snapshot_id: report.snapshot_id,
            files,
            totals: report.totals,
            untouched_classes: report.untouched_classes,
            skipped: report.skipped,
          });
        } else {
          ctx.stdout(summary(report, files));
        }
        const failure = coverageFailure(report);
        if (failure !== null) ctx.stderr(failure);
        return coverageExitCode(report);
      }),
    );
}

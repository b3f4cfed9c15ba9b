/**
 * `loretrace verify-trace --lore <dir> <capture-or-fragment.json> [--json]`
 *
 * Thin shell over `verifyTrace` (src/packet/verify-trace.ts): index the vault, read the capture, capture
 * fragment, traverse result or ledger export, check every research_trace entry, print one line per entry
 * and the totals for every disposition (zeros included). Exit 0 when every runner_captured entry verifies
 * (and at least one entry was checked); 1 otherwise or on invalid input; 2 on usage errors (unreadable or
 * non-JSON file).
 */
import type { Command } from 'commander';
import { TRACE_DISPOSITIONS, verifyTrace } from '../../packet/verify-trace.js';
import type { TraceVerificationReport } from '../../packet/verify-trace.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isLoretraceError } from '../../errors.js';
import { exportLedger } from '../../proxy/ledger.js';
import { indexFromOptions, readJsonFile, reportWithErrors } from './retrieve.js';

/**
 * Read the input: a JSON document, or a proxy ledger (JSON Lines, first record `loretrace.ledger.*`),
 * which is verified and exported to its capture fragment first (`exportLedger`, src/proxy/ledger.ts).
 */
async function readTraceInput(ctx: CliContext, file: string): Promise<unknown> {
  try {
    return await readJsonFile(ctx, file, 'capture, capture fragment, traverse result or ledger export');
  } catch (e) {
    if (!isLoretraceError(e) || e.code !== 'bad_json') throw e;
    const text = await readFile(resolve(ctx.cwd, file), 'utf8');
    const first = text.split('\n', 1)[0] ?? '';
    let head: unknown;
    try {
      head = JSON.parse(first);
    } catch {
      throw e;
    }
    const version = typeof head === 'object' && head !== null ? (head as Record<string, unknown>)['schema_version'] : undefined;
    if (typeof version !== 'string' || !version.startsWith('loretrace.ledger')) throw e;
    return exportLedger(text, { file });
  }
}

/** The human form of a report: a header, one line per entry, totals, verdict. */
export function renderVerification(report: TraceVerificationReport): string {
  const lines: string[] = [];
  lines.push(
    `verify-trace: ${report.file ?? 'input'} (${report.input_kind}) against ${report.namespace} snapshot ${report.snapshot.current.slice(0, 12)}`,
  );
  if (report.snapshot.recorded === null) {
    lines.push('  snapshot: the input records none; no drift check');
  } else if (report.snapshot.drift) {
    lines.push(
      `  snapshot: DRIFT — recorded ${report.snapshot.recorded.slice(0, 12)}, vault now ${report.snapshot.current.slice(0, 12)}; still holding: ${report.snapshot.holding.length ? report.snapshot.holding.join(', ') : 'none'}`,
    );
  } else {
    lines.push('  snapshot: same as recorded');
  }
  for (const e of report.entries) {
    const sim = e.similarity !== null && e.disposition !== 'verified' ? ` similarity ${e.similarity}` : '';
    lines.push(`  ${e.disposition.padEnd(14)} ${e.trace_id} (${e.origin}) ${e.source_ref} L${e.line_start}-L${e.line_end} chunk ${e.chunk_index}${sim}`);
    if (e.detail) lines.push(`                 ${e.detail}`);
  }
  lines.push(`totals: ${TRACE_DISPOSITIONS.map((d) => `${d} ${report.totals[d]}`).join(', ')}`);
  lines.push(
    `runner_captured: ${report.runner_captured.checked} checked, ${report.runner_captured.failed} failed — ${report.ok ? 'ok' : report.entries.length === 0 ? 'FAILED (no entries: nothing was verified)' : 'FAILED'}`,
  );
  return lines.join('\n') + '\n';
}

interface VerifyOptions {
  lore: string;
  indexDir?: string;
  json?: boolean;
}

/** Register `verify-trace` on the program. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('verify-trace')
    .description('Check every research_trace entry (capture, capture fragment, traverse result, ledger export) line by line against the vault')
    .argument('<file>', 'capture, capture fragment (retrieve --capture-out), traverse result, ledger export (JSON) or proxy ledger (.jsonl)')
    .requiredOption('--lore <dir>', 'vault root')
    .option('--index-dir <dir>', 'persisted index folder (default: LORETRACE_INDEX_DIR or the user cache)')
    .option('--json', 'print the verification report as JSON')
    .action(
      action(ctx, async (file: string, opts: VerifyOptions) => {
        try {
          const doc = await readTraceInput(ctx, file);
          const index = await indexFromOptions(ctx, opts);
          const report = await verifyTrace(index, doc, { file });
          if (opts.json) printJson(ctx, report);
          else ctx.stdout(renderVerification(report));
          return report.ok ? 0 : 1;
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
}

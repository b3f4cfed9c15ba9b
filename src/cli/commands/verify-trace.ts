/**
 * `loretrace verify-trace --lore <dir> <capture-or-fragment.json> [--json]`
 *
 * Thin shell over `verifyTrace` (src/receipts/verify-trace.ts): index the vault, read the capture, capture
 * fragment, traverse result, ledger export or raw proxy ledger (.jsonl, exported first), check every research_trace entry, print one line per entry
 * and the totals for every disposition (zeros included). Exit 0 when every runner_captured entry verifies
 * (and at least one entry was checked); 1 otherwise or on invalid input; 2 on usage errors (unreadable:
 * `file_not_found`, or non-JSON file: `bad_json`).
 */
import type { Command } from 'commander';
import { TRACE_DISPOSITIONS, verifyTrace } from '../../receipts/verify-trace.js';
import type { TraceVerificationReport } from '../../receipts/verify-trace.js';
import type { CliContext } from '../context.js';
import type { VaultIndex } from '../../types.js';
import { action, printJson } from '../context.js';
import { isLoretraceError } from '../../errors.js';
import { parseJsonDocument } from '../../contracts/validate.js';
import { exportLedger } from '../../receipts/ledger-export.js';
import { addVaultOptions, openIndex, readInputText, type VaultCliOptions } from '../vault-options.js';
import { reportWithErrors } from './retrieve.js';

/**
 * Read the input: a JSON document, or a proxy ledger (JSON Lines, first record `loretrace.ledger.*`),
 * which is verified and exported to its capture fragment first (`exportLedger`, src/receipts/ledger.ts).
 * `fromLedger` is true for a ledger (the report then says `proxy_ledger`).
 */
async function readTraceInput(ctx: CliContext, file: string, index: VaultIndex): Promise<{ doc: unknown; fromLedger: boolean }> {
  const text = await readInputText(ctx, file, 'JSON capture, capture fragment, traverse result, ledger export or proxy ledger (JSONL)');
  const isLedgerRecord = (v: unknown): boolean => {
    const version = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)['schema_version'] : undefined;
    return typeof version === 'string' && version.startsWith('loretrace.ledger');
  };
  let doc: unknown;
  try {
    doc = parseJsonDocument(text, file);
  } catch (e) {
    if (!isLoretraceError(e) || e.code !== 'bad_json') throw e;
    let head: unknown;
    try {
      // A BOM-prefixed ledger is still recognised as a ledger, so exportLedger can say what is wrong with it.
      head = JSON.parse((text.split('\n', 1)[0] ?? '').replace(/^\uFEFF/, ''));
    } catch {
      throw e;
    }
    if (!isLedgerRecord(head)) throw e;
    return { doc: await exportLedger(text, { file, index }), fromLedger: true };
  }
  // A one-record ledger is a single JSON line: still a ledger, not a document.
  if (isLedgerRecord(doc) && typeof (doc as Record<string, unknown>)['record_hash'] === 'string') return { doc: await exportLedger(text, { file, index }), fromLedger: true };
  return { doc, fromLedger: false };
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
  const p = report.policy;
  if (p.checked) {
    lines.push(`  policy: runner_captured paths checked against ${p.receipt} (${p.allowed_prefixes.length} allowed_prefix row${p.allowed_prefixes.length === 1 ? '' : 's'}, ${p.deny_rows} deny row${p.deny_rows === 1 ? '' : 's'})`);
  } else {
    lines.push(`  policy: ${p.receipt === null ? 'the input carries no policy_receipt' : `${p.receipt} is empty`}; paths not checked against a policy`);
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

/** Register `verify-trace` on the program. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(program
    .command('verify-trace')
    .description('check every research_trace entry (capture, capture fragment, traverse result, ledger export or raw proxy ledger .jsonl) line by line against the vault')
    .argument('<file>', 'capture, capture fragment (retrieve --capture-out), traverse result, ledger export (JSON) or proxy ledger (.jsonl)'))
    .option('--json', 'print the verification report as JSON')
    .action(
      action(ctx, async (file: string, opts: VaultCliOptions) => {
        try {
          const index = await openIndex(ctx, opts);
          const { doc, fromLedger } = await readTraceInput(ctx, file, index);
          const report = await verifyTrace(index, doc, { file, ...(fromLedger ? { inputKind: 'proxy_ledger' as const } : {}) });
          if (opts.json) printJson(ctx, report);
          else ctx.stdout(renderVerification(report));
          return report.ok ? 0 : 1;
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
}

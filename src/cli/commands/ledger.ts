/**
 * `loretrace ledger verify <ledger.jsonl> [--lore <dir>] [--head <hash>] [--trust-key <public.pem>]... [--integrity-only] [--json]` and
 * `loretrace ledger export <ledger.jsonl> --lore <dir> --out <lore_access.json> [--head <hash>] [--json]`.
 *
 * Thin shell over src/receipts/ledger.ts. `verify` exits 0 when the ledger verifies (warnings such as
 * `ledger_not_closed` do not fail it), 1 when it does not (the first bad seq is named), 2 on usage errors
 * (unreadable file: `file_not_found`). `verify` takes the vault options every vault command takes
 * (src/cli/vault-options.ts), `--lore` optional. `export` verifies first, re-derives the served text from
 * the vault (`--lore`; required for a loretrace.ledger.v2 ledger, which records text hashes, not text),
 * writes the capture fragment and exits 0, or 1 when the ledger does not verify or the vault no longer
 * holds the served text (nothing is written). `verify --trust-key` (src/cli/keys.ts) also checks who wrote
 * the ledger (docs/RECEIPTS.md "Authorship"); without any trusted key the report says `authorship not checked (no
 * --trust-key)` and a valid ledger is `UNAUTHENTICATED`, exit 1 (exit 0 with `--integrity-only`, same wording).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseLedger, verifyLedger } from '../../receipts/ledger.js';
import { bindTraceToLedger, exportLedger } from '../../receipts/ledger-export.js';
import type { LedgerVerifyReport } from '../../receipts/ledger.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { MAX_LEDGER_BYTES, addVaultOptions, openIndex, readInputText, type VaultCliOptions } from '../vault-options.js';
import { lockPathFor } from '../../receipts/lock.js';
import { decodeUtf8Strict } from '../../contracts/json-input.js';
import { documentText, guardOutputs, lockTarget, readInputBytes, writeAllAtomic } from '../outputs.js';
import { addIntegrityOnlyOption, addTrustKeyOption, integrityOnlyVerdict, trustedKeysFromOptions, verdictPasses } from '../keys.js';
import type { IntegrityOnlyOption } from '../keys.js';
import { authorshipCode } from '../../receipts/signing.js';
import { LoretraceError } from '../../errors.js';
import type { LedgerAuthorship } from '../../receipts/signing.js';

/**
 * Read a ledger file: `file_not_found` (exit 2) when it cannot be read, like every input file; strict
 * UTF-8; at most `MAX_LEDGER_BYTES` (64 MiB: a long session's ledger is larger than a document).
 */
function readLedgerFile(ctx: CliContext, file: string): Promise<string> {
  return readInputText(ctx, file, 'proxy ledger (JSONL)', MAX_LEDGER_BYTES);
}

/** Name of the closing record in the report's format version. */
function closing(r: LedgerVerifyReport): string {
  return r.schema_version === 'loretrace.ledger.v1' ? 'session_end' : 'SESSION_CLOSED';
}

/**
 * The authorship line of a report: `authorship not checked (no --trust-key); …` without trusted keys,
 * `authorship: signed by trusted key <id> (<file>)`, or `authorship: FAILED [<code>] — <why>`.
 */
export function authorshipLine(a: LedgerAuthorship): string {
  const code = authorshipCode(a.status);
  if (code !== null) return `authorship: FAILED [${code}] — ${a.detail}`;
  return a.status === 'trusted' ? `authorship: ${a.detail}` : a.detail;
}

/**
 * Where a `--head` that is not the ledger's last record_hash stands in it: the seq of the record that has it, or
 * null when no record has it (a head of another ledger, a mistyped one, or records cut off after it).
 */
export interface PinnedHeadLocation {
  head: string;
  seq: number | null;
}

/** Find `head` among the record hashes of a ledger whose chain verified (so every line parses). */
function locatePinnedHead(text: string, head: string, file: string): PinnedHeadLocation {
  const seq = parseLedger(text, file).findIndex((r) => r['record_hash'] === head);
  return { head, seq: seq < 0 ? null : seq };
}

/** The verdict line of a ledger whose only failure is a `--head` that is not its last record's hash. */
function headVerdict(name: string, r: LedgerVerifyReport, pinned: PinnedHeadLocation): string {
  const end = `the ledger ends at seq ${r.verified_through_seq} (head ${r.head_hash})`;
  const where = pinned.seq === null
    ? `the pinned head ${pinned.head} was not found: no record of the ledger has that record_hash; ${end} — records after it were cut off, or the head is another ledger's`
    : `the pinned head ${pinned.head} is the record_hash of seq ${pinned.seq}, not of the last record; ${end}: records were added after the head was pinned`;
  return `${name}: INVALID — ${where}; ${plural(r.records, 'record')} verif${r.records === 1 ? 'ies' : 'y'} (seq 0-${r.verified_through_seq})`;
}

/**
 * Human-readable verify report. `pinned` (from `--head`) words the verdict when the head check is what failed:
 * the pinned head was not found, or names an earlier record, and where the ledger ends — not a "first bad seq"
 * past the last record. A valid ledger checked without a trusted key gets the integrity-only verdict
 * (src/cli/keys.ts `integrityOnlyVerdict`; `integrityOnly` is `--integrity-only`), never plain "ok".
 */
export function renderLedgerReport(r: LedgerVerifyReport, pinned?: PinnedHeadLocation, integrityOnly = false): string {
  const name = r.file ?? 'ledger';
  const out: string[] = [];
  const range = r.verified_through_seq === null ? 'no record verifies' : `seq 0-${r.verified_through_seq}`;
  const firstError = r.findings.find((f) => f.severity === 'error');
  if (!r.valid && pinned !== undefined && firstError?.code === 'ledger_head_mismatch') {
    out.push(headVerdict(name, r, pinned));
  } else if (r.valid) {
    const verdict = r.verdict === 'integrity_only' ? `${integrityOnlyVerdict(integrityOnly)};` : 'ok —';
    out.push(`${name}: ${verdict} ${plural(r.records, 'record')} (${range}), chain intact, ${r.closed ? `closed by ${closing(r)}` : `not closed (no ${closing(r)})`}; head ${r.head_hash}`);
  } else {
    const authorship = authorshipCode(r.authorship.status);
    const where = r.first_bad_seq !== null ? `first bad seq ${r.first_bad_seq}` : authorship !== null ? `chain intact, authorship ${authorship}` : 'first bad seq (lore re-check)';
    out.push(`${name}: INVALID — ${where}; ${plural(r.records, 'record')} verif${r.records === 1 ? 'ies' : 'y'} (${range})`);
  }
  // No verified SESSION_OPENED (a torn or foreign first line): say so rather than print a row of placeholders.
  out.push(r.ledger_id === null && r.packet_id === null
    ? '  ledger: no SESSION_OPENED record verifies, so its ledger id, packet and snapshot are unknown'
    : `  ledger ${r.ledger_id ?? '?'} (${r.schema_version ?? '?'}), packet ${r.packet_id ?? '?'} (sha256 ${r.packet_sha256 ?? '?'}), snapshot ${r.snapshot_id ?? '?'}`);
  out.push(`  tool calls: ${r.totals.tool_calls} (ok ${r.totals.ok}, refused ${r.totals.refused})`);
  out.push(`  ${authorshipLine(r.authorship)}`);
  if (r.lore) {
    out.push(`  lore re-check: ${plural(r.lore.ranges, 'range')}, ${r.lore.matched} matched, ${r.lore.mismatched} mismatched, ${r.lore.missing} missing, ${r.lore.file_changed} in changed files`);
  }
  for (const f of r.findings) out.push(`${f.path ?? name}:${f.line ?? 1}: [${f.code}] ${f.message}${f.severity === 'error' ? '' : ` [${f.severity}]`}`);
  return out.join('\n') + '\n';
}

/**
 * The `--head <record_hash>` value, checked: a record_hash is SHA-256 in lower-case hex (docs/PROXY.md,
 * "Ledger"), so anything else — `""` above all, which no record has — pins no record and is a usage error,
 * not a verdict that records were cut off.
 * @throws LoretraceError `bad_option` (exit 2) naming `--head`, the value and what was expected.
 */
export function headOption(value: string | undefined): string | undefined {
  if (value === undefined || /^[0-9a-f]{64}$/.test(value)) return value;
  throw new LoretraceError('bad_option', `--head ${JSON.stringify(value.slice(0, 80))} is not a record_hash; expected the 64 lower-case hex digits of the last record's record_hash, as ledger verify and ledger export print it`, { expected: 'a record_hash: 64 lower-case hex digits', data: { option: '--head' } }, 2);
}

/** Register `loretrace ledger` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  const ledger = program.command('ledger').description('verify or export a research-proxy ledger (hash-chained JSONL)');
  addIntegrityOnlyOption(addTrustKeyOption(addVaultOptions(ledger
    .command('verify')
    .description('check every record of a ledger (seq, hash chain, schema); with --lore re-check every returned range against the vault; with --trust-key check who signed it')
    .argument('<ledger>', 'ledger file (JSONL)'), { required: false })
    .option('--head <hash>', 'expected record_hash of the last record (detects records cut off at the end)')
    .option('--json', 'print the verification report as JSON')))
    .action(
      action(ctx, async (file: string, opts: Partial<VaultCliOptions> & IntegrityOnlyOption & { head?: string; trustKey?: string[] }) => {
        headOption(opts.head);
        const trustedKeys = await trustedKeysFromOptions(ctx, opts);
        const text = await readLedgerFile(ctx, file);
        let index;
        if (opts.lore !== undefined) index = await openIndex(ctx, { ...opts, lore: opts.lore });
        const report = await verifyLedger(text, { file, ...(index ? { index } : {}), ...(opts.head !== undefined ? { head: opts.head } : {}), trustedKeys });
        if (opts.json) printJson(ctx, report);
        else {
          const headFailed = opts.head !== undefined && report.findings.some((f) => f.code === 'ledger_head_mismatch');
          ctx.stdout(renderLedgerReport(report, headFailed ? locatePinnedHead(text, opts.head!, file) : undefined, opts.integrityOnly === true));
        }
        return verdictPasses(report.verdict, opts) ? 0 : 1;
      }),
    );
  addVaultOptions(ledger
    .command('export')
    .description('write the runner_captured capture fragment (mode, consulted_refs, followed_refs, research_trace, research_trace_status, snapshot_id) of a verified ledger; the served text is re-derived from the vault (--lore) and must match the recorded hashes')
    .argument('<ledger>', 'ledger file (JSONL)'), { required: false })
    .requiredOption('--out <file>', 'where to write the fragment (JSON); its lock goes to <name>.lock.json beside it')
    .option('--head <hash>', 'expected record_hash of the last record (refuse a ledger cut off at the end)')
    .option('--force', 'replace an existing output that no lock lists (a file another tool wrote, or one whose lock was deleted); never a rerun\'s locked output: use a new --out')
    .option('--json', 'print a summary as JSON')
    .action(
      action(ctx, async (file: string, opts: Partial<VaultCliOptions> & { out: string; head?: string; force?: boolean }) => {
        headOption(opts.head);
        const outAbs = resolve(ctx.cwd, opts.out);
        await guardOutputs([{ abs: outAbs, option: '--out' }, { abs: lockPathFor(outAbs), option: 'the lock file' }], opts.force === true);
        // The same cap and strict UTF-8 as `ledger verify` (readLedgerFile): one ledger, one reading of it.
        const ledgerIn = await readInputBytes(ctx, file, 'proxy ledger (JSONL)', MAX_LEDGER_BYTES);
        const text = decodeUtf8Strict(ledgerIn.bytes, file);
        const index = opts.lore !== undefined ? await openIndex(ctx, { ...opts, lore: opts.lore }) : undefined;
        const fragment = await exportLedger(text, { file, ...(index ? { index } : {}), ...(opts.head !== undefined ? { head: opts.head } : {}) });
        const report = await verifyLedger(text, { file });
        const bound = await bindTraceToLedger(text, fragment.research_trace, { file });
        const fragmentText = documentText(fragment);
        await writeAllAtomic([
          { abs: outAbs, text: fragmentText, option: '--out' },
          lockTarget(outAbs, {
            status: 'ready_for_next_role',
            command: 'ledger export',
            files: [{ abs: outAbs, role: 'output', content: fragmentText }, { abs: ledgerIn.abs, role: 'input', content: ledgerIn.bytes }],
            snapshot: { namespace: (parseLedger(text, file)[0]!['session'] as { namespace: string }).namespace, snapshot_id: fragment.snapshot_id },
            policyReceipt: fragment.policy_receipt,
            ledger: { abs: ledgerIn.abs, head: report.head_hash, records: report.records, closed: report.closed },
            traceBindings: bound.bindings.map((b) => ({ ...b, ledger_backed: true })),
          }),
        ]);
        const summary = {
          out: opts.out, research_trace: fragment.research_trace.length, consulted_refs: fragment.consulted_refs.length,
          followed_refs: fragment.followed_refs.length, snapshot_id: fragment.snapshot_id, ledger_head: fragment.ledger_head,
        };
        if (opts.json) printJson(ctx, summary);
        else ctx.stdout(`wrote ${opts.out}: ${plural(summary.research_trace, 'trace entry', 'trace entries')}, ${plural(summary.consulted_refs, 'consulted ref')}, ${plural(summary.followed_refs, 'followed ref')} (snapshot ${summary.snapshot_id}; ledger head ${summary.ledger_head})\n`);
        return 0;
      }),
    );
}

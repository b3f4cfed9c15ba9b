/**
 * `loretrace retrieve --lore <dir> --packet <draft.json> [--projected-context <ctx.json>]
 *   [--lane coordinator_scoped_retrieval|responder_scoped_repository_search] [--policy <policy.json>]
 *   [--strict-policy] [--allow-off-scene-policy] --out <packet.json> [--capture-out <lore_access.json>] [--ledger <ledger.jsonl>]
 *   [--signing-key <file>] [--json]`
 * `loretrace retrieve --lore <dir> --batch <dir-or-list> --out-dir <dir> [--policy <policy.json>]
 *   [--concurrency N] [--lane …] [--strict-policy] [--allow-off-scene-policy] [--force] [--signing-key <file>] [--json]`
 *
 * `--signing-key` (or `LORETRACE_SIGNING_KEY`, src/cli/keys.ts) signs the coordinator lane's ledger
 * (docs/RECEIPTS.md "Authorship"); Ed25519 is deterministic, so with SOURCE_DATE_EPOCH a signed re-run is
 * byte-identical as well.
 *
 * Thin shell over the run of src/packet/run.ts (`buildPacket`, then for the coordinator lane
 * `recordRetrieval`, src/receipts/retrieve-ledger.ts) and, with `--batch`, over `retrieveBatch`
 * (src/packet/batch.ts). A single run checks its output paths, reads the draft, projected context and
 * policy, indexes the vault, builds, records the run's lookups in a hash-chained ledger, and only then
 * writes — the packet, for the coordinator lane the ledger (default `<out>.ledger.jsonl`, `.json` dropped)
 * and the capture fragment whose trace_ids are bound to it, and `<out name>.lock.json` beside the packet
 * (src/receipts/lock.ts). `SOURCE_DATE_EPOCH` (seconds, the reproducible-builds convention) fixes the
 * ledger's `occurred_on`, so a re-run gives byte-identical files. Nothing is written when anything fails;
 * an existing output is refused unless --force, a locked one always, an existing ledger always
 * (src/receipts/outputs.ts). Exit 0 ok; 1 invalid input (draft or output violates the contract, policy
 * refused, ref out of scope, ledger exists); 2 usage (unknown lane, unreadable or non-JSON file, no policy,
 * --capture-out or --ledger on the responder lane).
 *
 * A batch opens the index once and runs every draft of the corpus (docs/RETRIEVE.md "Batch"); it prints one
 * summary, and exits 0 when no draft failed (skipped ones included), 1 when any failed, 2 for a usage error
 * of the batch itself (unreadable corpus, no draft in it, single-run options given with --batch). A
 * progress bar goes to stderr only when it is a terminal.
 */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { relative, sep } from 'node:path';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { RETRIEVAL_LANES } from '../../packet/build.js';
import type { BuildPacketResult, RetrievalLane } from '../../packet/build.js';
import { checkRetrieveTargets, planRetrieveOutputs, readRetrieveInputs } from '../../packet/run.js';
import type { RetrievePlan, RetrieveRequest, RetrieveRunEnv } from '../../packet/run.js';
import { DEFAULT_BATCH_CONCURRENCY, retrieveBatch } from '../../packet/batch.js';
import type { BatchSummary } from '../../packet/batch.js';
import type { ValidationIssue } from '../../contracts/types.js';
import type { VaultIndex } from '../../types.js';
import type { CliContext } from '../context.js';
import { action, errorWhere, plural, printJson, reportError } from '../context.js';
import { addVaultOptions, inputCap, openIndex, progressStream, type VaultCliOptions } from '../vault-options.js';
import { writeAllAtomic } from '../outputs.js';
import { addSigningKeyOption, signerFromOptions } from '../keys.js';

export { defaultLedgerPath, policyFromFile } from '../../packet/run.js';

/** A path as shown to the user: relative to the working directory, POSIX separators. */
export function shownPath(ctx: CliContext, abs: string): string {
  const rel = relative(ctx.cwd, abs);
  return (rel.startsWith('..') ? abs : rel).split(sep).join('/');
}

/** The JSON text loretrace writes for a document: 2-space indent, trailing newline, keys in insertion order. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** Print a refusal that carries validator errors: the one-line error, then one line per validator error. */
export function reportWithErrors(ctx: CliContext, e: unknown, json: boolean): number {
  if (json && isLoretraceError(e)) printJson(ctx, { ok: false, error: e.toJSON() });
  const code = reportError(ctx, e);
  // invalid_raw_output names every failure in its one line already (missing fields once, not per field).
  if (!json && isLoretraceError(e) && e.code !== 'invalid_raw_output') {
    const errors = (e.details.data?.['errors'] ?? []) as ValidationIssue[];
    for (const err of errors) ctx.stderr(`  ${err.pointer || '/'} [${err.rule}] ${err.message}${err.expected ? ` (expected ${err.expected})` : ''}\n`);
  }
  return code;
}

/** commander's options of `retrieve` (single run and `--batch`). */
interface RetrieveOptions extends VaultCliOptions {
  packet?: string;
  projectedContext?: string;
  lane?: string;
  policy?: string;
  strictPolicy?: boolean;
  allowOffScenePolicy?: boolean;
  out?: string;
  captureOut?: string;
  force?: boolean;
  ledger?: string;
  batch?: string;
  outDir?: string;
  policyDir?: string;
  concurrency?: string;
  signingKey?: string;
}

/** Options of the single run that a batch names per draft itself, so they cannot be given with `--batch`. */
const SINGLE_ONLY: readonly [keyof RetrieveOptions, string][] = [
  ['packet', '--packet'], ['projectedContext', '--projected-context'], ['out', '--out'], ['captureOut', '--capture-out'], ['ledger', '--ledger'],
];

/**
 * `--concurrency`: an integer from 1 to 64 (default {@link DEFAULT_BATCH_CONCURRENCY}).
 * @throws LoretraceError `usage` (exit 2) otherwise.
 */
function concurrencyOption(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_BATCH_CONCURRENCY;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || n < 1 || n > 64) {
    throw new LoretraceError('usage', `--concurrency must be an integer from 1 to 64 (got ${JSON.stringify(raw)})`, { expected: 'an integer from 1 to 64' }, 2);
  }
  return n;
}

/**
 * Check the option combination: a single run needs `--packet` and `--out` (commander's wording), a batch
 * needs `--out-dir` and takes none of {@link SINGLE_ONLY}; `--out-dir`, `--policy-dir` and `--concurrency` need `--batch`.
 * @throws LoretraceError `usage` (exit 2).
 */
function checkModeOptions(opts: RetrieveOptions): void {
  if (opts.batch === undefined) {
    if (opts.packet === undefined) throw new LoretraceError('usage', "required option '--packet <draft.json>' not specified (or --batch <dir-or-list>)", {}, 2);
    if (opts.out === undefined) throw new LoretraceError('usage', "required option '--out <packet.json>' not specified", {}, 2);
    for (const [key, flag] of [['outDir', '--out-dir'], ['policyDir', '--policy-dir'], ['concurrency', '--concurrency']] as const) {
      if (opts[key] !== undefined) throw new LoretraceError('usage', `${flag} applies to --batch only; a single run writes --out`, {}, 2);
    }
    return;
  }
  for (const [key, flag] of SINGLE_ONLY) {
    if (opts[key] !== undefined) throw new LoretraceError('usage', `${flag} cannot be combined with --batch: a batch finds each draft's files by their names and writes under --out-dir`, {}, 2);
  }
  if (opts.outDir === undefined) throw new LoretraceError('usage', "required option '--out-dir <dir>' not specified (--batch writes every draft's outputs under it)", {}, 2);
}

/**
 * The clock of the run's ledger: `SOURCE_DATE_EPOCH` (integer seconds since 1970, reproducible-builds.org)
 * when set, else the wall clock.
 * @throws LoretraceError `usage` (exit 2) for a SOURCE_DATE_EPOCH that is not a non-negative integer.
 */
function ledgerClock(env: NodeJS.ProcessEnv): () => Date {
  const raw = env['SOURCE_DATE_EPOCH'];
  if (raw === undefined || raw === '') return () => new Date();
  if (!/^\d{1,12}$/.test(raw)) {
    throw new LoretraceError('usage', `SOURCE_DATE_EPOCH=${JSON.stringify(raw)} is not a whole number of seconds; expected an integer such as 1735689600`, { expected: 'an integer ≥ 0' }, 2);
  }
  const fixed = new Date(Number(raw) * 1000);
  return () => fixed;
}

function humanSummary(r: BuildPacketResult, index: VaultIndex, written: string[]): string {
  const lines: string[] = [];
  lines.push(`retrieve: ${r.lane} over ${index.namespace} (snapshot ${index.snapshot_id.slice(0, 12)}) → packet ${r.packet.packet_id}`);
  if (r.queries.length) {
    lines.push(`  queries (${r.queries.length}):`);
    for (const q of r.queries) lines.push(`    ${JSON.stringify(q)}`);
  }
  lines.push(
    `  excerpts: ${r.stats.excerpts_kept} kept from the draft, ${plural(r.stats.excerpts_added, 'lore excerpt')} added${r.stats.excerpts_verified > 0 ? ` (${r.stats.excerpts_verified} verified against the refs the draft's lore excerpts cite)` : ''}, ${plural(r.stats.excerpts_dropped, 'draft lore excerpt')} replaced`,
  );
  if (r.budget) {
    lines.push(`  budget: ${plural(r.budget.count, 'lore excerpt')}, ${r.budget.chars} characters (${r.budget.count_source}; ${r.budget.chars_source}); ${r.stats.excerpts_cut} cut, ${r.stats.excerpts_withheld} withheld`);
  }
  for (const ex of r.packet.visible_context.source_excerpts) lines.push(`    ${ex.ref_id}  ${ex.source_ref}`);
  if (r.capture) {
    lines.push(`  consulted refs (${r.capture.consulted_refs.length}):`);
    for (const ref of r.capture.consulted_refs) lines.push(`    ${ref}`);
    lines.push(`  followed refs (${r.capture.followed_refs.length}):`);
    for (const ref of r.capture.followed_refs) lines.push(`    ${ref}`);
    lines.push(`  research trace: ${plural(r.capture.research_trace.length, 'runner_captured entry', 'runner_captured entries')}`);
  } else {
    lines.push(`  research: the responder searches through the proxy (## Required Lore Research rendered); no lore pre-fetched`);
  }
  lines.push(`  packet validates: yes (${r.validation.errors.length} errors)`);
  for (const f of r.findings) lines.push(`  ${f.severity} ${f.code}: ${f.message}`);
  for (const w of written) lines.push(`wrote ${w}`);
  return lines.join('\n') + '\n';
}

/**
 * The text form of a batch summary: one line per draft with its warnings (and errors) under it, as a single
 * run prints them, then the totals (`ok 4 (2 with warnings)`).
 */
function batchText(summary: BatchSummary): string {
  const lines = [`retrieve --batch: ${summary.corpus} over ${summary.namespace} (snapshot ${summary.snapshot_id.slice(0, 12)}) → ${summary.out_dir}`];
  for (const p of summary.packets) {
    if (p.status === 'ok') {
      const what = p.lane === 'coordinator_scoped_retrieval'
        ? `${plural(p.stats?.['excerpts_added'] ?? 0, 'lore excerpt')}, ${plural(p.stats?.['trace_entries'] ?? 0, 'trace entry', 'trace entries')}`
        : 'research through the proxy';
      lines.push(`  ok       ${p.packet} → ${p.written?.[0] ?? ''} (${p.lane}, ${what})`);
      // Every warning a single run prints is shown under its draft's line (infos stay in --json).
      for (const f of p.findings ?? []) if (f.severity !== 'info') lines.push(`           ${f.severity} ${f.code}: ${f.message}`);
    } else if (p.status === 'failed') {
      const message = String(p.error?.['message'] ?? '');
      // The file the error belongs to (a policy beside the draft, say) is named as the single run names it.
      const text = message.includes(p.packet) ? message : `${p.packet}: ${message}`;
      lines.push(`  failed   ${text}${errorWhere(text, p.error ?? {})} [${String(p.error?.['code'] ?? '')}]`);
    } else {
      lines.push(`  skipped  ${p.packet}: ${p.reason ?? ''}`);
    }
  }
  const t = summary.totals;
  const warned = summary.packets.filter((p) => p.status === 'ok' && (p.findings ?? []).some((f) => f.severity !== 'info')).length;
  lines.push(`totals: packets ${t.packets}, ok ${t.ok}${warned > 0 ? ` (${warned} with warnings)` : ''}, failed ${t.failed}, skipped ${t.skipped} — ${summary.ok ? 'ok' : 'failed'}`);
  return lines.join('\n') + '\n';
}

/**
 * `retrieve --batch`: one index, {@link retrieveBatch}, one summary; a progress bar
 * (`retrieve ███░░ 12/50 packets`) on stderr only when it is a terminal. Exit 0 when no draft failed, else 1.
 */
async function runBatch(ctx: CliContext, opts: RetrieveOptions, env: RetrieveRunEnv): Promise<number> {
  const concurrency = concurrencyOption(opts.concurrency);
  const index = await openIndex(ctx, opts);
  let bar: cliProgress.SingleBar | null = null;
  try {
    const summary = await retrieveBatch(index, {
      corpus: opts.batch as string,
      outDir: opts.outDir as string,
      ...(opts.policy !== undefined ? { policy: opts.policy } : {}),
      ...(opts.policyDir !== undefined ? { policyDir: opts.policyDir } : {}),
      ...(opts.lane !== undefined ? { lane: opts.lane as RetrievalLane } : {}),
      strictPolicy: opts.strictPolicy === true,
      force: opts.force === true,
      ...(opts.allowOffScenePolicy === true ? { allowOffScenePolicy: true } : {}),
      concurrency,
      ...(ctx.isTTY ? {
        onProgress: ({ done, total }: { done: number; total: number }) => {
          if (!bar) {
            bar = new cliProgress.SingleBar({ stream: progressStream(ctx), format: 'retrieve {bar} {value}/{total} packets', hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic);
            bar.start(total, 0);
          }
          bar.update(done);
          if (done === total) bar.stop();
        },
      } : {}),
    }, env);
    if (opts.json) printJson(ctx, summary);
    else ctx.stdout(batchText(summary));
    return summary.ok ? 0 : 1;
  } finally {
    (bar as cliProgress.SingleBar | null)?.stop();
  }
}

/** One single run: the steps of src/packet/run.ts around one index load, then the summary. */
async function runSingle(ctx: CliContext, opts: RetrieveOptions, env: RetrieveRunEnv): Promise<number> {
  const request: RetrieveRequest = {
    packet: opts.packet as string,
    ...(opts.projectedContext !== undefined ? { projectedContext: opts.projectedContext } : {}),
    ...(opts.policy !== undefined ? { policy: opts.policy } : {}),
    ...(opts.lane !== undefined ? { lane: opts.lane as RetrievalLane } : {}),
    strictPolicy: opts.strictPolicy === true,
    out: opts.out as string,
    ...(opts.captureOut !== undefined ? { captureOut: opts.captureOut } : {}),
    ...(opts.ledger !== undefined ? { ledger: opts.ledger } : {}),
    force: opts.force === true,
    ...(opts.allowOffScenePolicy === true ? { allowOffScenePolicy: true } : {}),
  };
  await checkRetrieveTargets(request, env);
  const inputs = await readRetrieveInputs(request, env);
  const index = await openIndex(ctx, opts);
  const plan: RetrievePlan = await planRetrieveOutputs(index, inputs, request, env);
  await writeAllAtomic(plan.targets);
  const { result, recorded } = plan;
  const written = plan.targets.map((t) => shownPath(ctx, t.abs));
  if (opts.json) {
    printJson(ctx, {
      ok: true,
      lane: result.lane,
      namespace: index.namespace,
      snapshot_id: index.snapshot_id,
      queries: result.queries,
      stats: result.stats,
      budget: result.budget,
      unmet_requirements: result.unmet_requirements,
      source_refs: result.packet.visible_context.source_excerpts.map((e) => e.source_ref),
      consulted_refs: result.capture?.consulted_refs ?? [],
      followed_refs: result.capture?.followed_refs ?? [],
      ledger_head: recorded?.capture.ledger_head ?? null,
      findings: result.findings,
      written,
    });
  } else {
    ctx.stdout(humanSummary(result, index, written));
  }
  return 0;
}

/** Register `retrieve` on the program. */
export function register(program: Command, ctx: CliContext): void {
  const cmd = addVaultOptions(program
    .command('retrieve')
    .description('build a retrieval_augmented responder packet from a draft (coordinator traversal or responder research lane), or every draft of a corpus with --batch'))
    .option('--packet <draft.json>', 'draft responder packet (must already satisfy the packet contract); required without --batch')
    .option('--projected-context <ctx.json>', 'projected local context: its runtime_retrieval_requirements become traversal queries')
    .option('--lane <lane>', `${RETRIEVAL_LANES.join(' | ')} (default: the draft's mode when it is one of them, else coordinator_scoped_retrieval)`)
    .option('--policy <policy.json>', "traversal policy, used when the draft's lore_access has none (with --batch: for every draft without its own <id>.policy.json or one in --policy-dir)")
    .option('--policy-dir <dir>', 'with --batch: per-draft policies, <dir>/<id>.policy.json, else the policy of the longest dotted prefix of <id> (<scene>.policy.json for every turn of a Ghostlight scene); before --policy')
    .option('--strict-policy', 'refuse a policy with any clause short of enforced (partially enforced or advisory)')
    .option('--allow-off-scene-policy', "build even when --policy (or a batch's per-draft policy) has no seed on the draft's scene (policy_seed_off_scene stays a warning); without it that run fails with policy_off_scene")
    .option('--out <packet.json>', 'where to write the packet; required without --batch')
    .option('--capture-out <lore_access.json>', 'coordinator lane: where to write the capture fragment (consulted refs, runner_captured research_trace bound to the ledger, snapshot, policy receipt, ledger head)')
    .option('--force', 'replace an existing output that no lock lists: a file another tool wrote, or an output whose lock was deleted. It never applies to a rerun into the same place (every output is listed in the lock beside it: output_locked); use a new --out/--out-dir instead')
    .option('--ledger <ledger.jsonl>', "coordinator lane: where to write the hash-chained ledger of retrieve's own lookups (default: beside --out, <out>.ledger.jsonl); never overwritten")
    .option('--batch <dir-or-list>', 'every draft of a corpus: a folder searched recursively for *.packet.json, or a list file of draft paths (one a line); projected contexts and per-draft policies found by name (docs/RETRIEVE.md)')
    .option('--out-dir <dir>', "with --batch: where every draft's outputs go (<id>.packet.json, .packet.lore_access.json, .packet.ledger.jsonl, .packet.lock.json), mirroring the corpus folders")
    .option('--concurrency <n>', `with --batch: drafts run at once, 1 to 64 (default ${DEFAULT_BATCH_CONCURRENCY}); the results never depend on it`)
    .option('--json', 'print a JSON summary instead of text');
  addSigningKeyOption(cmd).action(
      action(ctx, async (opts: RetrieveOptions) => {
        try {
          if (opts.lane !== undefined && !(RETRIEVAL_LANES as readonly string[]).includes(opts.lane)) {
            throw new LoretraceError('usage', `unknown lane ${JSON.stringify(opts.lane)} for --lane; expected ${RETRIEVAL_LANES.join(' or ')}`, { expected: RETRIEVAL_LANES.join(', ') }, 2);
          }
          if (opts.captureOut !== undefined && opts.lane === 'responder_scoped_repository_search') {
            throw new LoretraceError('usage', '--capture-out applies to the coordinator_scoped_retrieval lane only: in responder_scoped_repository_search the proxy ledger records the trace (loretrace ledger export)', {}, 2);
          }
          if (opts.ledger !== undefined && opts.lane === 'responder_scoped_repository_search') {
            throw new LoretraceError('usage', '--ledger applies to the coordinator_scoped_retrieval lane only: in responder_scoped_repository_search the proxy writes the ledger (loretrace serve --ledger)', {}, 2);
          }
          checkModeOptions(opts);
          const env: RetrieveRunEnv = { cwd: ctx.cwd, maxInputBytes: inputCap(ctx), now: ledgerClock(ctx.env), signer: await signerFromOptions(ctx, opts) };
          return opts.batch !== undefined ? await runBatch(ctx, opts, env) : await runSingle(ctx, opts, env);
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
}

/**
 * `loretrace retrieve --lore <dir> --packet <draft.json> [--projected-context <ctx.json>]
 *   [--lane coordinator_scoped_retrieval|responder_scoped_repository_search] [--policy <policy.json>]
 *   [--strict-policy] --out <packet.json> [--capture-out <lore_access.json>] [--ledger <ledger.jsonl>] [--json]`
 *
 * Thin shell over `buildPacket` (src/packet/build.ts) and, for the coordinator lane, `recordRetrieval`
 * (src/receipts/retrieve-ledger.ts): read the draft, projected context and policy, index the vault, build,
 * record the run's lookups in a hash-chained ledger, and only then write — the packet, for the coordinator
 * lane the ledger (default `<out>.ledger.jsonl`, `.json` dropped) and the capture fragment whose trace_ids
 * are bound to it, and `<out name>.lock.json` beside the packet (src/receipts/lock.ts: every output and input
 * with its sha256, the snapshot, the policy receipt, the ledger pin, the trace bindings). `SOURCE_DATE_EPOCH`
 * (seconds, the reproducible-builds convention) fixes the ledger's `occurred_on`, so a re-run gives
 * byte-identical files. Nothing is written when anything fails; an existing output is refused unless
 * --force, a locked one always, an existing ledger always (src/cli/outputs.ts). Exit 0 ok; 1 invalid input
 * (draft or output violates the contract, policy refused, ref out of scope, ledger exists); 2 usage (unknown
 * lane, unreadable or non-JSON file, no policy, --capture-out or --ledger on the responder lane).
 */
import { createHash } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { buildPacket, RETRIEVAL_LANES } from '../../packet/build.js';
import type { BuildPacketResult, RetrievalLane } from '../../packet/build.js';
import type { TraversalPolicy, ValidationIssue } from '../../contracts/types.js';
import type { VaultIndex } from '../../types.js';
import { recordRetrieval } from '../../receipts/retrieve-ledger.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson, reportError } from '../context.js';
import { addVaultOptions, inputCap, openIndex, type VaultCliOptions } from '../vault-options.js';
import { decodeJsonDocument } from '../../contracts/json-input.js';
import { lockPathFor } from '../../receipts/lock.js';
import type { LockInputFile } from '../../receipts/lock.js';
import { guardOutputs, lockTarget, readInputBytes, writeAllAtomic, type OutputTarget } from '../outputs.js';
import { assertNoSymlinkOnPath } from '../../safe-write.js';

/** Read a JSON input's bytes (hashed into the lock) and parse them: errors as every JSON input's. */
async function readJsonInput(ctx: CliContext, file: string, what: string): Promise<{ value: unknown; lock: LockInputFile }> {
  const { abs, bytes } = await readInputBytes(ctx, file, `JSON ${what}`);
  return { value: decodeJsonDocument(bytes, file, { maxBytes: inputCap(ctx) }), lock: { abs, role: 'input', content: bytes } };
}

/** A path as shown to the user: relative to the working directory, POSIX separators. */
export function shownPath(ctx: CliContext, abs: string): string {
  const rel = relative(ctx.cwd, abs);
  return (rel.startsWith('..') ? abs : rel).split(sep).join('/');
}

/** The JSON text loretrace writes for a document: 2-space indent, trailing newline, keys in insertion order. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** The responder packet's `schema_version` (Ghostlight's responder-packet schema). */
const PACKET_SCHEMA_VERSION = 'ghostlight.responder_packet.v0';

/** Other Ghostlight documents a user may pass to `--packet` by mistake, and what to do instead. */
const OTHER_DOCUMENTS: Readonly<Record<string, string>> = {
  'ghostlight.responder_output.v0': 'a responder output capture; pass the draft packet it was made from',
  'ghostlight.projected_local_context.v0': 'a projected local context; pass it with --projected-context and the draft with --packet',
};

/**
 * Refuse a `--packet` document that is another kind of document (its `schema_version` is a string other
 * than the responder packet's) in one line naming that schema_version, before the packet contract would
 * list every field the two kinds do not share. A draft without `schema_version` is left to `buildPacket`.
 * @throws LoretraceError `invalid_draft` (exit 1), pointer `/schema_version`.
 */
function assertDraftKind(draft: unknown, file: string): void {
  if (typeof draft !== 'object' || draft === null || Array.isArray(draft)) return;
  const version = (draft as Record<string, unknown>)['schema_version'];
  if (typeof version !== 'string' || version === PACKET_SCHEMA_VERSION) return;
  const what = OTHER_DOCUMENTS[version] ?? 'not a responder packet';
  throw new LoretraceError('invalid_draft', `${file} has schema_version ${JSON.stringify(version)}, ${what}; --packet takes a draft responder packet (schema_version "${PACKET_SCHEMA_VERSION}")`, {
    file, pointer: '/schema_version', expected: PACKET_SCHEMA_VERSION,
  });
}

/** The identity of an existing file (device + inode), or null when it does not exist. */
async function fileId(abs: string): Promise<string | null> {
  try {
    const st = await stat(abs);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/**
 * Refuse output paths that would lose data or cannot be written, before anything is built (`usage`,
 * exit 2): `--out` and `--capture-out` naming the same file (the fragment would overwrite the packet);
 * an output naming an input (`--packet`, `--projected-context`, `--policy`: the draft would be
 * overwritten), also through a hard link; an output that is a symlink or lies under a symlinked folder
 * (`output_symlink`, src/safe-write.ts: never written through); an output that exists and is not a regular file
 * (a directory, FIFO, socket or device); a parent path that exists and is not a directory.
 */
async function checkOutputTargets(ctx: CliContext, outputs: readonly [string, string][], inputs: readonly [string, string][]): Promise<void> {
  const ids = new Map<string, string>();
  for (const [option, file] of inputs) {
    const id = await fileId(resolve(ctx.cwd, file));
    if (id !== null) ids.set(id, option);
  }
  const seen = new Map<string, string>();
  for (const [option, file] of outputs) {
    const abs = resolve(ctx.cwd, file);
    const same = seen.get(abs);
    if (same !== undefined) {
      throw new LoretraceError('usage', `${option} ${file} is the same file as ${same}; expected two different files (nothing written)`, { file, expected: 'distinct output files' }, 2);
    }
    seen.set(abs, option);
    assertNoSymlinkOnPath(abs);
    let st: Awaited<ReturnType<typeof lstat>> | null = null;
    try {
      st = await lstat(abs);
    } catch {
      st = null;
    }
    if (st !== null) {
      if (!st.isFile()) {
        throw new LoretraceError('usage', `${option} ${file} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}; expected the path of a JSON file to write (nothing written)`, { file, expected: 'a regular file path' }, 2);
      }
      const input = ids.get(`${st.dev}:${st.ino}`);
      if (input !== undefined) {
        throw new LoretraceError('usage', `${option} ${file} is the file given with ${input}; expected a different output file, so that the input stays as it was (nothing written)`, { file, expected: 'an output path that is not an input' }, 2);
      }
      const other = [...seen.entries()].find(([p, o]) => o !== option && p !== abs);
      if (other !== undefined && (await fileId(other[0])) === `${st.dev}:${st.ino}`) {
        throw new LoretraceError('usage', `${option} ${file} is the same file as ${other[1]}; expected two different files (nothing written)`, { file, expected: 'distinct output files' }, 2);
      }
    }
    for (let dir = dirname(abs); ; dir = dirname(dir)) {
      let ds: Awaited<ReturnType<typeof stat>> | null = null;
      try {
        ds = await stat(dir);
      } catch {
        ds = null;
      }
      if (ds !== null) {
        if (!ds.isDirectory()) {
          throw new LoretraceError('usage', `${option} ${file}: ${dir} is not a directory; expected a writable folder for the output (nothing written)`, { file, expected: 'a folder path' }, 2);
        }
        break;
      }
      if (dirname(dir) === dir) break;
    }
  }
}

/**
 * A policy file is either a bare traversal_policy (`{ max_link_depth, allowed_prefixes, ... }`) or an
 * object with `traversal_policy` (and optionally `allowed_scope`) — the `lore_access` shape of a packet.
 */
export function policyFromFile(value: unknown, file: string): { policy: TraversalPolicy; allowedScope?: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LoretraceError('bad_policy', `${file}: a policy file must be a JSON object (a traversal_policy, or { traversal_policy, allowed_scope? })`, { file, pointer: '', expected: 'a JSON object' });
  }
  const obj = value as Record<string, unknown>;
  if ('traversal_policy' in obj) {
    const scope = obj['allowed_scope'];
    if (scope !== undefined && !(Array.isArray(scope) && scope.every((s) => typeof s === 'string' && s.length > 0))) {
      throw new LoretraceError('bad_policy', `${file}: /allowed_scope must be a list of non-empty strings`, { file, pointer: '/allowed_scope', expected: 'a list of refs' });
    }
    return { policy: obj['traversal_policy'] as TraversalPolicy, ...(scope !== undefined ? { allowedScope: scope as string[] } : {}) };
  }
  const { $schema: _schema, ...rest } = obj;
  return { policy: rest as unknown as TraversalPolicy };
}

/** Print a refusal that carries validator errors: the one-line error, then one line per validator error. */
export function reportWithErrors(ctx: CliContext, e: unknown, json: boolean): number {
  if (json && isLoretraceError(e)) printJson(ctx, { ok: false, error: e.toJSON() });
  const code = reportError(ctx, e);
  if (!json && isLoretraceError(e)) {
    const errors = (e.details.data?.['errors'] ?? []) as ValidationIssue[];
    for (const err of errors) ctx.stderr(`  ${err.pointer || '/'} [${err.rule}] ${err.message}${err.expected ? ` (expected ${err.expected})` : ''}\n`);
  }
  return code;
}

interface RetrieveOptions extends VaultCliOptions {
  packet: string;
  projectedContext?: string;
  lane?: string;
  policy?: string;
  strictPolicy?: boolean;
  out: string;
  captureOut?: string;
  force?: boolean;
  ledger?: string;
}

/** Default ledger path of a coordinator run: beside `--out`, `.json` replaced by `.ledger.jsonl`. */
export function defaultLedgerPath(out: string): string {
  return out.replace(/\.json$/i, '') + '.ledger.jsonl';
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
    `  excerpts: ${r.stats.excerpts_kept} kept from the draft, ${plural(r.stats.excerpts_added, 'lore excerpt')} added, ${plural(r.stats.excerpts_dropped, 'draft lore excerpt')} replaced`,
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

/** Register `retrieve` on the program. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(program
    .command('retrieve')
    .description('build a retrieval_augmented responder packet from a draft (coordinator traversal or responder research lane)'))
    .requiredOption('--packet <draft.json>', 'draft responder packet (must already satisfy the packet contract)')
    .option('--projected-context <ctx.json>', 'projected local context: its runtime_retrieval_requirements become traversal queries')
    .option('--lane <lane>', `${RETRIEVAL_LANES.join(' | ')} (default: the draft's mode when it is one of them, else coordinator_scoped_retrieval)`)
    .option('--policy <policy.json>', "traversal policy, used when the draft's lore_access has none")
    .option('--strict-policy', 'refuse a policy with advisory (unenforced) clauses')
    .requiredOption('--out <packet.json>', 'where to write the packet')
    .option('--capture-out <lore_access.json>', 'coordinator lane: where to write the capture fragment (consulted refs, runner_captured research_trace bound to the ledger, snapshot, policy receipt, ledger head)')
    .option('--force', 'replace an existing output that no lock lists (outputs and their <name>.lock.json are otherwise never overwritten)')
    .option('--ledger <ledger.jsonl>', "coordinator lane: where to write the hash-chained ledger of retrieve's own lookups (default: beside --out, <out>.ledger.jsonl); never overwritten")
    .option('--json', 'print a JSON summary instead of text')
    .action(
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
          const now = ledgerClock(ctx.env);
          const ledgerFile = opts.ledger ?? defaultLedgerPath(opts.out);
          await checkOutputTargets(
            ctx,
            [['--out', opts.out], ...(opts.captureOut !== undefined ? [['--capture-out', opts.captureOut] as [string, string]] : []), ['--ledger', ledgerFile]],
            [['--packet', opts.packet], ...(opts.projectedContext !== undefined ? [['--projected-context', opts.projectedContext] as [string, string]] : []), ...(opts.policy !== undefined ? [['--policy', opts.policy] as [string, string]] : [])],
          );
          const outAbs = resolve(ctx.cwd, opts.out);
          const captureAbs = opts.captureOut !== undefined ? resolve(ctx.cwd, opts.captureOut) : undefined;
          await guardOutputs([{ abs: outAbs, option: '--out' }, ...(captureAbs ? [{ abs: captureAbs, option: '--capture-out' }] : []), { abs: lockPathFor(outAbs), option: 'the lock file' }], opts.force === true);
          const draftIn = await readJsonInput(ctx, opts.packet, 'draft responder packet');
          const projectedIn = opts.projectedContext !== undefined ? await readJsonInput(ctx, opts.projectedContext, 'projected local context') : undefined;
          const policyIn = opts.policy !== undefined ? await readJsonInput(ctx, opts.policy, 'traversal policy') : undefined;
          const draft = draftIn.value;
          assertDraftKind(draft, opts.packet);
          const projected = projectedIn?.value;
          const policyFile = policyIn !== undefined && opts.policy !== undefined ? policyFromFile(policyIn.value, opts.policy) : undefined;
          const index = await openIndex(ctx, opts);
          const result = await buildPacket(index, draft, {
            ...(opts.lane !== undefined ? { lane: opts.lane as RetrievalLane } : {}),
            ...(projected !== undefined ? { projectedContext: projected, projectedContextFile: opts.projectedContext } : {}),
            ...(policyFile ? { policy: policyFile.policy, policyFile: opts.policy, ...(policyFile.allowedScope ? { allowedScope: policyFile.allowedScope } : {}) } : {}),
            strictPolicy: opts.strictPolicy === true,
            file: opts.packet,
          });
          if (opts.captureOut !== undefined && result.capture === null) {
            throw new LoretraceError('usage', `--capture-out applies to the coordinator_scoped_retrieval lane only; ${opts.packet} was built for ${result.lane} (nothing written)`, {}, 2);
          }
          if (opts.ledger !== undefined && result.capture === null) {
            throw new LoretraceError('usage', `--ledger applies to the coordinator_scoped_retrieval lane only; ${opts.packet} was built for ${result.lane} (nothing written)`, {}, 2);
          }
          const targets: OutputTarget[] = [{ abs: outAbs, text: jsonText(result.packet), option: '--out' }];
          let recorded: ReturnType<typeof recordRetrieval> | null = null;
          let ledgerAbs: string | null = null;
          if (result.capture) {
            ledgerAbs = resolve(ctx.cwd, ledgerFile);
            if (await fileId(ledgerAbs) !== null) {
              throw new LoretraceError('ledger_exists', `ledger ${ledgerFile} already exists; a ledger is never appended to or overwritten — choose a new file with --ledger (nothing written)`, { file: ledgerFile, expected: 'a path that does not exist yet' }, 1);
            }
            const draftSha256 = createHash('sha256').update(draftIn.lock.content).digest('hex');
            recorded = recordRetrieval(index, result as { capture: NonNullable<BuildPacketResult['capture']>; queries: string[] }, {
              packetId: (draft as { packet_id?: unknown }).packet_id as string, packetSha256: draftSha256, packetFile: opts.packet, now,
            });
            targets.push({ abs: ledgerAbs, text: recorded.ledgerText, option: '--ledger' });
          }
          if (captureAbs !== undefined && recorded) {
            targets.push({ abs: captureAbs, text: jsonText(recorded.capture), option: '--capture-out' });
          }
          targets.push(lockTarget(outAbs, {
            status: 'ready_for_next_role',
            command: 'retrieve',
            files: [...targets.map((t): LockInputFile => ({ abs: t.abs, role: 'output', content: t.text })), ...[draftIn, projectedIn, policyIn].flatMap((i) => (i ? [i.lock] : []))],
            snapshot: { namespace: index.namespace, snapshot_id: index.snapshot_id },
            policyReceipt: result.capture?.policy_receipt ?? null,
            ledger: recorded && ledgerAbs !== null ? { abs: ledgerAbs, ...recorded.binding.ledger } : null,
            traceBindings: (recorded?.binding.bindings ?? []).map((b) => ({ ...b, ledger_backed: true })),
          }));
          await writeAllAtomic(targets);
          const written = targets.map((t) => shownPath(ctx, t.abs));
          if (opts.json) {
            printJson(ctx, {
              ok: true,
              lane: result.lane,
              namespace: index.namespace,
              snapshot_id: index.snapshot_id,
              queries: result.queries,
              stats: result.stats,
              budget: result.budget,
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
        } catch (e) {
          return reportWithErrors(ctx, e, opts.json === true);
        }
      }),
    );
}

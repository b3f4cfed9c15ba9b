/**
 * `loretrace retrieve --lore <dir> --packet <draft.json> [--projected-context <ctx.json>]
 *   [--lane coordinator_scoped_retrieval|responder_scoped_repository_search] [--policy <policy.json>]
 *   [--strict-policy] --out <packet.json> [--capture-out <lore_access.json>] [--json]`
 *
 * Thin shell over `buildPacket` (src/packet/build.ts): read the draft, projected context and policy,
 * index the vault, build, and only then write — the packet, and for the coordinator lane the capture
 * fragment. Nothing is written when anything fails. Exit 0 ok; 1 invalid input (draft or output violates
 * the contract, policy refused, ref out of scope); 2 usage (unknown lane, unreadable or non-JSON file,
 * no policy, --capture-out on the responder lane).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { buildPacket, RETRIEVAL_LANES } from '../../packet/build.js';
import type { BuildPacketResult, RetrievalLane } from '../../packet/build.js';
import type { TraversalPolicy, ValidationIssue } from '../../packet/types.js';
import type { VaultIndex } from '../../types.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson, reportError } from '../context.js';
import { addVaultOptions, openIndex, readJsonFile, type VaultCliOptions } from '../vault-options.js';

/** A path as shown to the user: relative to the working directory, POSIX separators. */
export function shownPath(ctx: CliContext, abs: string): string {
  const rel = relative(ctx.cwd, abs);
  return (rel.startsWith('..') ? abs : rel).split(sep).join('/');
}

/** The JSON text loretrace writes for a document: 2-space indent, trailing newline, keys in insertion order. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** Write a file atomically (temp file in the same folder, then rename), creating the folder. */
async function writeAtomic(abs: string, text: string): Promise<void> {
  await mkdir(dirname(abs), { recursive: true });
  const tmp = `${abs}.${process.pid}.tmp`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, abs);
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
}

function humanSummary(r: BuildPacketResult, index: VaultIndex, written: string[]): string {
  const lines: string[] = [];
  lines.push(`retrieve: ${r.lane} over ${index.namespace} (snapshot ${index.snapshot_id.slice(0, 12)})`);
  if (r.queries.length) {
    lines.push(`  queries (${r.queries.length}):`);
    for (const q of r.queries) lines.push(`    ${JSON.stringify(q)}`);
  }
  lines.push(
    `  excerpts: ${r.stats.excerpts_kept} kept from the draft, ${plural(r.stats.excerpts_added, 'lore excerpt')} added, ${plural(r.stats.excerpts_dropped, 'draft lore excerpt')} replaced`,
  );
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
    .option('--capture-out <lore_access.json>', 'coordinator lane: where to write the capture fragment (consulted refs, runner_captured research_trace, snapshot, policy receipt)')
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
          const draft = await readJsonFile(ctx, opts.packet, 'draft responder packet');
          const projected = opts.projectedContext !== undefined ? await readJsonFile(ctx, opts.projectedContext, 'projected local context') : undefined;
          const policyFile = opts.policy !== undefined ? policyFromFile(await readJsonFile(ctx, opts.policy, 'traversal policy'), opts.policy) : undefined;
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
          const outAbs = resolve(ctx.cwd, opts.out);
          const written: string[] = [];
          await writeAtomic(outAbs, jsonText(result.packet));
          written.push(shownPath(ctx, outAbs));
          if (opts.captureOut !== undefined && result.capture) {
            const capAbs = resolve(ctx.cwd, opts.captureOut);
            await writeAtomic(capAbs, jsonText(result.capture));
            written.push(shownPath(ctx, capAbs));
          }
          if (opts.json) {
            printJson(ctx, {
              ok: true,
              lane: result.lane,
              namespace: index.namespace,
              snapshot_id: index.snapshot_id,
              queries: result.queries,
              stats: result.stats,
              source_refs: result.packet.visible_context.source_excerpts.map((e) => e.source_ref),
              consulted_refs: result.capture?.consulted_refs ?? [],
              followed_refs: result.capture?.followed_refs ?? [],
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

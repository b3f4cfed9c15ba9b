/**
 * `loretrace traverse --lore <dir> (--policy <policy.json> | --packet <packet.json>) [--query TEXT]...
 *  [--projected-context <ctx.json>] [--strict-policy] [--receipt-only] [--json]`
 *
 * Compiles the traversal_policy (a bare policy file, or the packet's own with its allowed_scope and
 * hidden_context_audit), walks the vault and prints the result. `--json` prints the TraverseResult
 * (schemas/traverse-result.schema.json); byte-identical for identical inputs and snapshot. `--receipt-only`
 * compiles the policy and prints only its receipt, without walking (`--json`: the standalone receipt document of
 * schemas/policy-receipt.schema.json).
 * Queries: every `--query`, plus one per runtime retrieval requirement of `--projected-context`; with
 * none, a packet's observed event and source excerpts; with no packet either, the seed titles.
 * Exit 0 ok; 1 bad policy, missing seed, strict-policy refusal, malformed packet/projected-context
 * field (`bad_input`, with its pointer); 2 usage errors (missing/duplicate --policy/--packet,
 * unreadable or non-regular file, projected context that is not JSON: `bad_json`).
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { parseJsonDocument } from '../../packet/validate.js';
import { compilePolicy } from '../../policy/compile.js';
import { parsePolicyDocument } from '../../policy/load.js';
import { policyReceiptDocument } from '../../policy/receipt.js';
import { packetQueries, requirementQueries, traverse, type TraverseQuery } from '../../traversal/traverse.js';
import type { PolicyReceiptRow } from '../../policy/types.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from './index-cmd.js';

interface TraverseCliOptions extends VaultCliOptions {
  policy?: string;
  packet?: string;
  query: string[];
  projectedContext?: string;
  strictPolicy?: boolean;
  receiptOnly?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** Largest policy / packet / projected-context file read (bytes); these are small JSON documents. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * Read an input file as UTF-8. Only regular files are opened: a FIFO or `/dev/zero` would block or
 * never end, a directory is not a document. Exit 2 (`usage`) for all of these and for read errors.
 */
async function readText(ctx: CliContext, file: string, option: string): Promise<string> {
  const abs = resolve(ctx.cwd, file);
  const refuse = (why: string) => new LoretraceError('usage', `cannot read ${option} ${file}: ${why}`, { file, expected: 'a readable JSON file' }, 2);
  let st;
  try {
    st = await stat(abs);
  } catch (e) {
    throw refuse((e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
  if (st.isDirectory()) throw refuse('EISDIR');
  if (!st.isFile()) throw refuse('not a regular file');
  if (st.size > MAX_INPUT_BYTES) throw refuse(`${st.size} bytes is larger than the ${MAX_INPUT_BYTES}-byte limit`);
  try {
    return await readFile(abs, 'utf8');
  } catch (e) {
    throw refuse((e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
}

export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('traverse')
      .description('apply a traversal_policy to a vault: receipt, excerpts, research_trace and decisions')
      .option('--policy <file>', 'a JSON file holding a bare traversal_policy object')
      .option('--packet <file>', 'a responder packet; its lore_access.traversal_policy, allowed_scope and hidden_context_audit apply')
      .option('--query <text>', 'a query (scene query or retrieval requirement; repeatable)', collect, [])
      .option('--projected-context <file>', 'projected local context: its runtime_retrieval_requirements become queries')
      .option('--strict-policy', 'refuse a policy with any advisory clause')
      .option('--receipt-only', 'compile the policy and print only its receipt (no walk)'),
  ).action(action(ctx, async (opts: TraverseCliOptions) => {
    if ((opts.policy === undefined) === (opts.packet === undefined)) {
      throw new LoretraceError('usage', 'traverse needs exactly one of --policy <file> or --packet <file>', { expected: '--policy or --packet' }, 2);
    }
    const file = (opts.policy ?? opts.packet)!;
    const doc = parsePolicyDocument(await readText(ctx, file, opts.policy ? '--policy' : '--packet'), file, opts.policy ? 'policy' : 'packet');
    const queries: TraverseQuery[] = opts.query.map((q, i) => ({ text: q, used_for: `--query[${i}]` }));
    if (opts.projectedContext) {
      const text = await readText(ctx, opts.projectedContext, '--projected-context');
      // BOM-tolerant; `bad_json` (exit 2) with line and column, like `validate` and `retrieve`.
      const pc = parseJsonDocument(text, opts.projectedContext);
      try {
        queries.push(...requirementQueries(pc as Parameters<typeof requirementQueries>[0]));
      } catch (e) {
        if (isLoretraceError(e)) e.details.file = opts.projectedContext;
        throw e;
      }
    }
    if (queries.length === 0 && doc.packet) {
      try {
        queries.push(...packetQueries(doc.packet as Parameters<typeof packetQueries>[0]));
      } catch (e) {
        if (isLoretraceError(e)) e.details.file = file;
        throw e;
      }
    }
    const index = await openIndex(ctx, opts);
    const compiled = compilePolicy(doc.policy, {
      index,
      packet: doc.packet ?? undefined,
      strict: Boolean(opts.strictPolicy),
      pointerBase: doc.pointer,
      file,
    });
    if (opts.receiptOnly) {
      const doc = policyReceiptDocument(compiled, file);
      if (opts.json) printJson(ctx, doc);
      else ctx.stdout(`snapshot ${doc.snapshot_id}\n\n${receiptText(doc.rows, doc.totals)}`);
      return 0;
    }
    const result = traverse(index, compiled, { queries });
    if (opts.json) {
      printJson(ctx, result);
      return 0;
    }
    const s = result.stats;
    let out = `snapshot ${result.snapshot_id}\n\n${receiptText(result.policy_receipt, s.receipt_totals)}`;
    out += `\nConsulted (${result.consulted_refs.length}):\n${result.consulted_refs.map((r) => `  ${r}\n`).join('')}`;
    out += `Followed (${result.followed_refs.length}):\n${result.followed_refs.map((r) => `  ${r}\n`).join('')}`;
    out += `\nExcerpts (${s.excerpts}, ${s.excerpt_chars} chars):\n`;
    for (const t of result.research_trace) {
      out += `  ${t.source_ref} lines ${t.line_start}-${t.line_end}\n`;
      for (const l of t.extracted_constraint.split('\n').slice(0, 2)) out += `    │ ${l.length > 100 ? `${l.slice(0, 99)}…` : l}\n`;
    }
    const reasons = Object.entries(s.skipped_by_reason).map(([k, v]) => `${k} ${v}`).join(', ');
    out += `\nDecisions: ${s.decisions.followed} followed, ${s.decisions.skipped} skipped (${reasons}); stopped by ${s.stopped_by}\n`;
    ctx.stdout(out);
    return 0;
  }));
}

/** The human rendering of a receipt: a heading with the totals, then two lines per row. */
function receiptText(rows: readonly PolicyReceiptRow[], totals: { enforced: number; advisory: number }): string {
  let out = `Policy receipt (${totals.enforced} enforced, ${totals.advisory} advisory):\n`;
  for (const r of rows) out += `  ${r.disposition === 'enforced' ? 'enforced' : 'ADVISORY'}  ${r.pointer}  ${r.clause}\n            → ${r.rule}${r.matches === null ? '' : ` [${r.matches} note${r.matches === 1 ? '' : 's'}]`}\n`;
  return out;
}

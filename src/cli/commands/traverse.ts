/**
 * `loretrace traverse --lore <dir> (--policy <policy.json> | --packet <packet.json> | both) [--query TEXT]...
 *  [--projected-context <ctx.json>] [--strict-policy] [--receipt-only] [--json]`
 *
 * Compiles the traversal_policy (a bare policy file, or the packet's own with its allowed_scope and
 * hidden_context_audit; with both, the packet's when it has one, else the file's — retrieve's precedence,
 * so a draft's walk can be previewed), walks the vault and prints the result. `--json` prints the TraverseResult
 * (schemas/traverse-result.schema.json); byte-identical for identical inputs and snapshot. `--receipt-only`
 * compiles the policy and prints only its receipt, without walking (`--json`: the standalone receipt document of
 * schemas/policy-receipt.schema.json).
 * Queries: every `--query`, plus one per runtime retrieval requirement of `--projected-context`; with
 * none, a packet's observed event and source excerpts; with no packet either, the seed titles.
 * Exit 0 ok; 1 bad policy, missing seed, strict-policy refusal, malformed packet/projected-context
 * field (`bad_input`, with its pointer); 2 usage errors (neither --policy nor --packet; `file_not_found`
 * for an unreadable or non-regular file; projected context that is not JSON: `bad_json`).
 */
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { retrievalScope } from '../../packet/build.js';
import { parseJsonDocument } from '../../contracts/validate.js';
import { compilePolicy } from '../../policy/compile.js';
import { parsePolicyDocument, type PolicyDocument } from '../../policy/load.js';
import { policyReceiptDocument } from '../../policy/receipt.js';
import { packetQueries, requirementQueries, traverse, type TraverseQuery } from '../../traversal/traverse.js';
import type { PolicyReceiptRow, ReceiptTotals } from '../../policy/types.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, readInputText, readJsonFile, type VaultCliOptions } from '../vault-options.js';
import { isJsonObject } from '../../contracts/json-object.js';

interface TraverseCliOptions extends VaultCliOptions {
  policy?: string;
  packet?: string;
  query: string[];
  projectedContext?: string;
  strictPolicy?: boolean;
  receiptOnly?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * The policy to apply and where it comes from. `--packet` alone: the packet's own traversal_policy.
 * `--policy` alone: the bare policy. Both (as in `retrieve`): the packet's traversal_policy when it has one
 * (a `policy_option_ignored` warning says --policy was not used), else the --policy file's, applied with
 * the packet's hidden_context_audit and the allowed_scope `retrieve` would use (`retrievalScope`).
 *
 * @throws LoretraceError `usage` (exit 2) with neither option; `file_not_found` / `bad_json` (exit 2);
 *   `bad_policy` (exit 1) from `parsePolicyDocument`.
 */
async function loadPolicy(ctx: CliContext, opts: TraverseCliOptions): Promise<{ doc: PolicyDocument; file: string }> {
  if (opts.packet === undefined) {
    if (opts.policy === undefined) {
      throw new LoretraceError('usage', 'traverse needs --policy <file>, --packet <file>, or both (a packet without a traversal_policy takes the --policy one)', { expected: '--policy and/or --packet' }, 2);
    }
    const doc = parsePolicyDocument(await readInputText(ctx, opts.policy, 'JSON traversal policy'), opts.policy, 'policy');
    // A policy file's own allowed_scope gives the start points, as `retrieve --policy` uses it.
    if (doc.allowed_scope !== null) doc.packet = { lore_access: { allowed_scope: doc.allowed_scope } };
    return { doc, file: opts.policy };
  }
  const packetText = await readInputText(ctx, opts.packet, 'JSON responder packet');
  try {
    const doc = parsePolicyDocument(packetText, opts.packet, 'packet');
    if (opts.policy !== undefined) {
      ctx.stderr(`loretrace: warning: ${opts.packet} carries /lore_access/traversal_policy, which takes precedence; the policy given with --policy (${opts.policy}) was not used [policy_option_ignored]\n`);
    }
    return { doc, file: opts.packet };
  } catch (e) {
    // Only "this packet has no traversal_policy" falls back to --policy; the text already parsed as JSON.
    if (opts.policy === undefined || !isLoretraceError(e) || e.code !== 'bad_policy' || e.details.pointer !== '/lore_access/traversal_policy') throw e;
    const packet = parseJsonDocument(packetText, opts.packet);
    if (typeof packet !== 'object' || packet === null || Array.isArray(packet)) throw e;
    const file = parsePolicyDocument(await readInputText(ctx, opts.policy, 'JSON traversal policy'), opts.policy, 'policy');
    // The draft's scope as retrieve computes it (placeholders dropped, else the policy file's
    // allowed_scope, else the policy's seeds). The policy's shape is checked first, as retrieve's
    // compilePolicy would, so a malformed policy is a bad_policy naming its clause.
    const la = (packet as { lore_access?: unknown }).lore_access;
    const loreAccess = isJsonObject(la) ? la : {};
    const policy = file.policy as unknown as Record<string, unknown> | null;
    const lists = policy !== null && typeof policy === 'object' && Array.isArray(policy.required_seed_refs) && Array.isArray(policy.allowed_prefixes);
    const allowedScope = lists ? retrievalScope(loreAccess as Parameters<typeof retrievalScope>[0], file.policy, file.allowed_scope ?? undefined) : [];
    const context = { ...packet, lore_access: { ...loreAccess, allowed_scope: allowedScope } };
    return { doc: { ...file, packet: context as PolicyDocument['packet'] }, file: opts.policy };
  }
}

/** Register `loretrace traverse` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('traverse')
      .description('apply a traversal_policy to a vault: receipt, excerpts, research_trace and decisions')
      .option('--policy <file>', 'a policy file: a bare traversal_policy object, or { traversal_policy, allowed_scope } as retrieve --policy takes (with --packet: used when the packet has none)')
      .option('--packet <file>', 'a responder packet (a draft for retrieve, say); its lore_access.traversal_policy, allowed_scope and hidden_context_audit apply')
      .option('--query <text>', 'a query (scene query or retrieval requirement; repeatable)', collect, [])
      .option('--projected-context <file>', 'projected local context: its runtime_retrieval_requirements become queries')
      .option('--strict-policy', 'refuse a policy with any clause short of enforced (partially enforced or advisory)')
      .option('--receipt-only', 'compile the policy and print only its receipt (no walk)'),
  ).option('--json', 'print the traverse result (with --receipt-only: the policy receipt document) as JSON').action(action(ctx, async (opts: TraverseCliOptions) => {
    const { doc, file } = await loadPolicy(ctx, opts);
    const queries: TraverseQuery[] = opts.query.map((q, i) => ({ text: q, used_for: `--query[${i}]` }));
    if (opts.projectedContext) {
      // BOM-tolerant; `bad_json` (exit 2) with line and column, like `validate` and `retrieve`.
      const pc = await readJsonFile(ctx, opts.projectedContext, 'projected local context');
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
        if (isLoretraceError(e)) e.details.file = opts.packet;
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
    // A walk starts only from seeds and allowed_scope notes; --query ranks what the walk reaches but never
    // starts it (docs/TRAVERSAL.md "Walk"). Say so instead of an empty result that looks like "no lore".
    if (compiled.seeds.length === 0 && compiled.scope.length === 0) {
      ctx.stderr(`loretrace: warning: ${file}: the policy has no required_seed_refs and no allowed_scope note it admits, so there is nothing to walk from (a --query ranks what the walk reaches; it does not start it): add a note to /required_seed_refs (a Namespace:path ref under allowed_prefixes), or give allowed_scope notes (a policy file of { traversal_policy, allowed_scope }, or --packet) [no_start_notes]\n`);
    }
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
function receiptText(rows: readonly PolicyReceiptRow[], totals: ReceiptTotals): string {
  let out = `Policy receipt (${totals.enforced} enforced, ${totals.partially_enforced} partially enforced, ${totals.advisory} advisory):\n`;
  const label = { enforced: 'enforced', partially_enforced: 'PARTIAL ', advisory: 'ADVISORY' } as const;
  for (const r of rows) out += `  ${label[r.disposition]}  ${r.pointer}  ${r.clause}\n            → ${r.rule}${r.matches === null ? '' : ` [${r.matches} note${r.matches === 1 ? '' : 's'}]`}\n`;
  return out;
}

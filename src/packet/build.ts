/**
 * The packet builder (docs/RETRIEVE.md): a draft responder packet goes in, a validated
 * `retrieval_augmented` packet comes out — for either retrieval lane — plus, for
 * `coordinator_scoped_retrieval`, the capture fragment whose runner_captured research_trace a reviewer can
 * check line by line (`verifyTrace`).
 *
 * Pure function of (index, draft, projected context, policy, options): no clock, no randomness, no I/O
 * beyond what the traversal reads through the index. Same inputs ⇒ deep-equal outputs, and the CLI
 * serialises them with a fixed format (2-space JSON, trailing newline, the draft's key order), so two runs
 * write byte-identical files.
 *
 * The algorithm, one named step each ({@link buildPacket} reads as this list): check the draft, read the
 * projected context, choose the lane and the policy, compile the policy with the retrieval scope, guard
 * every ref the draft brings along, gather the excerpts of the lane (the coordinator traversal, or the
 * draft's own for the responder lane), assemble lore_access, the prompt and the packet, and validate the
 * outputs. Prompt rendering lives in prompt.ts, the scope guards in scope.ts.
 */
import { LoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { checkPath, compilePolicy } from '../policy/compile.js';
import type { CompiledPolicy, PolicyReceiptRow } from '../policy/types.js';
import { traverse } from '../traversal/traverse.js';
import type { TraverseResult } from '../traversal/traverse.js';
import type {
  PacketLoreAccess,
  ProjectedLocalContext,
  ResearchTraceEntry,
  ResponderPacket,
  SourceExcerpt,
  TraversalPolicy,
  ValidationReport,
} from '../contracts/types.js';
import { validateCaptureFragment, validatePacket, validateProjectedContext } from '../contracts/validate.js';
import { hiddenTextForm, hiddenTextIn } from '../contracts/rules.js';
import { formatRef, isUnderPrefix } from '../refs/ref.js';
import { applyResearchSection, coordinatorResearchSection, LORE_USE_HEADING, loreLabel, noteDisplayTitle, mergeSourceSection, parseSourceSection, reconcileLaneLines, renderResearchSection, renderSourceSection, researchSectionLines, RESEARCH_OUTPUT_FIELDS } from './prompt.js';
import { excerptBudget, requirementOverlap, sceneRequirements, selectWithinBudget, servedRequirement, unmetRequirements } from './requirements.js';
import type { BudgetCandidate, DraftLoreRequirement, ExcerptBudget, SceneRequirement, UnmetRequirement } from './requirements.js';
import { compactExcerpt, hubLineCounts, isHubNote } from '../excerpts/compact.js';
import type { CompactPick } from '../excerpts/compact.js';
import { makeTraceEntry, traceNotePath } from '../excerpts/trace.js';
import { chunksOf, getNote, outgoingLinks } from '../indexer/lookup.js';
import { sectionsOf } from '../policy/sections.js';
import { processTerm, tokenize } from '../search/tokenize.js';
import { queryTermSet } from '../excerpts/excerpt.js';
import type { Chunk } from '../types.js';
import { assertInScope, assertNoHiddenText, bareVaultPath, refuse, sourceParts, summarizeErrors, withholdReason } from './scope.js';
import { admittedCorpus, draftCitations, verifyCitation } from './draft-citations.js';
import { offSceneSeeds } from './scene-seeds.js';
import type { CitationOutcome, VerifiedExcerpt } from './draft-citations.js';

// The hidden-text comparison lives in rules.ts (the validator's prompt rules use it too); re-exported here.
export { hiddenTextForm, hiddenTextIn };
// The prompt renderers live in prompt.ts; re-exported so that build.ts stays the packet stage's one entry.
export {
  applyResearchSection,
  applySourceSection,
  coordinatorResearchSection,
  loreLabel,
  mergeSourceSection,
  parseSourceSection,
  reconcileLaneLines,
  promptStyle,
  PROXY_TOOLS,
  renderResearchSection,
  renderSourceSection,
  RESEARCH_OUTPUT_FIELDS,
} from './prompt.js';
export type { LaneLineInput, PromptStyle, ResearchLineChange, ResearchSectionInput, RewrittenLine } from './prompt.js';
export type { ExcerptBudget, SceneRequirement, UnmetRequirement } from './requirements.js';

/** The two retrieval-augmented lanes `loretrace retrieve` builds (seed 001, "two retrieval-augmented modes"). */
export type RetrievalLane = 'coordinator_scoped_retrieval' | 'responder_scoped_repository_search';

/** Both lanes, in documentation order. */
export const RETRIEVAL_LANES: readonly RetrievalLane[] = ['coordinator_scoped_retrieval', 'responder_scoped_repository_search'];

/**
 * The capture fragment `loretrace retrieve --capture-out` writes for `coordinator_scoped_retrieval`: the
 * `lore_access` receipts of the later responder output capture (Ghostlight `responder_output.lore_access`),
 * plus the snapshot and policy receipt they were taken under. Key order is fixed as listed.
 */
export interface CaptureFragment {
  mode: 'coordinator_scoped_retrieval';
  /** Refs of every note the traversal consulted (seeds first), `Namespace:path`. */
  consulted_refs: string[];
  /** Refs of the notes reached by following links. */
  followed_refs: string[];
  /** One runner_captured entry per lore excerpt's line run. */
  research_trace: ResearchTraceEntry[];
  research_trace_status: 'runner_captured';
  /** snapshot_id of the vault the trace was taken from (verify-trace reports drift against it). */
  snapshot_id: string;
  /** What each policy clause did (enforced / advisory), from the policy compiler. */
  policy_receipt: PolicyReceiptRow[];
}

/** Options of {@link buildPacket}. */
export interface BuildPacketOptions {
  /**
   * Lane to build. Default: the draft's `lore_access.mode` when it is one of the two lanes, else
   * `coordinator_scoped_retrieval`.
   */
  lane?: RetrievalLane;
  /** The projected local context (parsed JSON); its `runtime_retrieval_requirements` become queries. */
  projectedContext?: unknown;
  /** Traversal policy to use when the draft's `lore_access` carries none (`--policy`). */
  policy?: TraversalPolicy;
  /** `allowed_scope` to declare when the draft declares no lore scope (a policy file may carry one). */
  allowedScope?: string[];
  /** Refuse a policy with any clause short of `enforced`, partially enforced or advisory (`--strict-policy`, passed to compilePolicy). */
  strictPolicy?: boolean;
  /**
   * Version number in the new `packet_id` (`<draft id>.loretrace-<coordinator|research>.v<version>`),
   * an integer ≥ 1; default 1. A new run over a locked packet writes the next version.
   */
  version?: number;
  /** File names, for messages and reports. */
  file?: string;
  projectedContextFile?: string;
  policyFile?: string;
}

/** Result of {@link buildPacket}. */
export interface BuildPacketResult {
  lane: RetrievalLane;
  /** The packet, valid by `validatePacket` (it was checked before being returned). */
  packet: ResponderPacket;
  /** The capture fragment (coordinator lane), or null (responder lane). */
  capture: CaptureFragment | null;
  /**
   * Queries the run searched (coordinator lane), in order: the traversal's ({@link queriesFor}), then the
   * text of each draft lore excerpt whose cited refs were searched for it (src/packet/draft-citations.ts;
   * exact duplicates dropped); [] for the responder lane. The ledger records one search per query.
   */
  queries: string[];
  /** What changed that a reader should know (draft lore excerpts replaced, prompt lines rewritten, ...). */
  findings: Finding[];
  /**
   * Counts: draft excerpts kept, lore excerpts added, of them verified excerpts of the refs the draft's lore
   * excerpts cite (src/packet/draft-citations.ts), draft lore excerpts dropped (a paraphrase never reaches
   * the packet; verified excerpts of its cited refs stand in for it), traversal excerpts withheld (they link to hidden lore or contain an omitted ref, a raw-state
   * marker or raw numeric state), traversal excerpts cut by the excerpt budget, trace entries in the
   * capture fragment.
   */
  stats: { excerpts_kept: number; excerpts_added: number; excerpts_verified: number; excerpts_dropped: number; excerpts_withheld: number; excerpts_cut: number; trace_entries: number };
  /** The lore excerpt budget applied (coordinator lane), or null (responder lane: no lore is fetched). */
  budget: ExcerptBudget | null;
  /**
   * Counted scene requirements (runtime retrieval and latent pressure) that no lore excerpt of the packet
   * serves ({@link unmetRequirements}), in requirement order, each with its `kind`; also reported as a
   * `requirements_unmet` warning (runtime) and a `latent_requirements_unmet` info finding (latent). [] for
   * the responder lane (the responder researches).
   */
  unmet_requirements: UnmetRequirement[];
  /** The validator's report on the output (always valid). */
  validation: ValidationReport;
}

type Obj = Record<string, unknown>;

/** Default research instructions when the draft has none (responder lane). */
export const DEFAULT_RESEARCH_INSTRUCTIONS: readonly string[] = [
  'Consult every required seed ref before answering; do not rely only on the packet excerpts.',
  'Follow links only when they matter to your local action, institution, relationships or material stakes, and only within the traversal policy.',
  'Treat retrieved lore as world constraint and cultural pressure, not as access to another character\'s hidden intent.',
  'Record consulted seed refs, followed refs, research trace entries and a short research summary in your JSON object.',
  'Each research trace entry names the query or lookup, source ref, source path, chunk index, line range, extracted constraint (the exact lines) and how it shaped the response.',
];

const PLACEHOLDER_SCOPE = new Set(['packet-local excerpts only']);

/** Pointers of the projected context the builder reads; a contract violation there is fatal. */
const READ_POINTERS = ['/context/local_agent_id', '/context/runtime_retrieval_requirements', '/context/latent_pressure_requirements'];

/**
 * Rebuild an object with the keys of `template` first (in its order, values from `values`), then the
 * remaining keys of `order` that `values` has. Keeps the draft's key order (which is the schema's).
 */
function ordered(template: Obj | undefined, values: Obj, order: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of Object.keys(template ?? {})) if (values[k] !== undefined) out[k] = values[k];
  for (const k of order) if (!(k in out) && values[k] !== undefined) out[k] = values[k];
  return out;
}

const LORE_ACCESS_ORDER = ['mode', 'allowed_scope', 'research_instructions', 'traversal_policy', 'required_provenance'];
const POLICY_ORDER = ['max_link_depth', 'allowed_prefixes', 'required_seed_refs', 'follow_link_classes', 'stop_conditions'];

/** Code-unit order (STYLE: never localeCompare). */
function codeUnitCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The allowed_scope the coordinator traversal starts from: the draft's own lore scope when it declares one
 * (mode other than `curated_excerpts_only`, placeholder entries such as "Packet-local excerpts only"
 * ignored), else `optionScope` (a policy file's `allowed_scope`), else the policy's `required_seed_refs`,
 * else its `allowed_prefixes`. Shared with `loretrace traverse --packet <draft> --policy <file>`, which
 * previews this walk.
 */
export function retrievalScope(
  loreAccess: { mode?: unknown; allowed_scope?: readonly string[] },
  policy: TraversalPolicy,
  optionScope?: readonly string[],
): string[] {
  const own = Array.isArray(loreAccess.allowed_scope) ? loreAccess.allowed_scope : [];
  const declared = own.filter((s) => typeof s === 'string' && !PLACEHOLDER_SCOPE.has(s.trim().toLowerCase()));
  if (loreAccess.mode !== 'curated_excerpts_only' && declared.length > 0) return [...own];
  if (optionScope && optionScope.length > 0) return [...optionScope];
  return policy.required_seed_refs.length > 0 ? [...policy.required_seed_refs] : [...policy.allowed_prefixes];
}

/**
 * Queries for the coordinator traversal, in order: one per projected-context
 * `runtime_retrieval_requirements` entry (`"<trigger>: <compact_fact>"`), then the observed event's
 * `observable_action`. Duplicates (exact) are dropped, first kept.
 */
export function queriesFor(draft: ResponderPacket, projectedContext?: ProjectedLocalContext): string[] {
  const out: string[] = [];
  for (const r of projectedContext?.context?.runtime_retrieval_requirements ?? []) {
    out.push(`${r.trigger}: ${r.compact_fact}`);
  }
  out.push(draft.visible_context.observed_event.observable_action);
  return [...new Set(out)];
}


// ---------------------------------------------------------------------------------------------------------
// The steps of buildPacket, in the order it runs them
// ---------------------------------------------------------------------------------------------------------

/** Counts reported in {@link BuildPacketResult.stats}; filled by the excerpt step of the lane. */
type BuildStats = BuildPacketResult['stats'];

/**
 * What every step after the policy knows: the index and its namespace, the draft (a private copy), the file
 * name for messages, the compiled policy and where it came from, the findings collected so far.
 */
interface BuildContext {
  index: VaultIndex;
  ns: string;
  file: string;
  draft: ResponderPacket;
  options: BuildPacketOptions;
  policy: TraversalPolicy;
  /** JSON pointer of the policy in the draft (`/lore_access/traversal_policy`), or `''` for `--policy`. */
  policyPointerBase: string;
  compiled: CompiledPolicy;
  allowedScope: string[];
  /** The draft's `hidden_context_audit.omitted_context_refs`. */
  omitted: readonly string[];
  findings: Finding[];
}

/** What an excerpt step of a lane hands to the assembly steps. */
interface LaneExcerpts {
  excerpts: SourceExcerpt[];
  /**
   * Draft lore excerpts a verified excerpt in the packet stands in for ({@link reportDraftLore}): their
   * prompt bullets go; a draft lore excerpt without one leaves `source_excerpts` but keeps its prompt lines.
   */
  replaced: SourceExcerpt[];
  /** Lore excerpts loretrace added (rendered into the prompt's source section). */
  added: SourceExcerpt[];
  /** ref_id → the display label of the note an added lore excerpt comes from ({@link loreLabel}). */
  labels: Map<string, string>;
  budget: ExcerptBudget | null;
  unmet: UnmetRequirement[];
  capture: CaptureFragment | null;
  queries: string[];
  researchInstructions: string[] | undefined;
  stats: BuildStats;
}

/**
 * Step 1: the draft must satisfy the packet contract (`validatePacket`); returns a private deep copy.
 * Repeated ref_ids are left to {@link guardDraftExcerpt} (a more precise message): a draft lore excerpt the
 * coordinator lane drops may share its ref_id with a kept one.
 * @throws LoretraceError `invalid_draft` with every validator error in `details.data.errors`;
 *   `already_built` ({@link refuseBuiltPacket}).
 */
function checkDraft(draftInput: unknown, file: string): ResponderPacket {
  const draftReport = validatePacket(draftInput, { file });
  const draftErrors = draftReport.errors.filter((e) => e.rule !== 'excerpt.duplicate_ref_id');
  if (draftErrors.length > 0) {
    throw refuse(
      'invalid_draft',
      `${file}: the draft violates the responder packet contract (${draftErrors.length} error${draftErrors.length === 1 ? '' : 's'}): ${summarizeErrors(draftErrors)}`,
      file,
      draftErrors[0]?.pointer,
      draftErrors,
    );
  }
  refuseBuiltPacket(draftInput as ResponderPacket, file);
  return structuredClone(draftInput) as ResponderPacket;
}

/** The `review.reviewer` of every packet {@link buildPacket} writes ({@link freshReview}). */
export const BUILT_REVIEWER = 'loretrace retrieve';

/**
 * True when a packet's `review.reviewer` says loretrace retrieve built it: the output of an earlier run,
 * not a draft (seed 001: the coordinator writes a packet from a draft; the result is handed on, not fed back).
 */
export function builtByRetrieve(value: unknown): boolean {
  const review = (value as { review?: { reviewer?: unknown } } | null)?.review;
  return typeof review === 'object' && review !== null && review.reviewer === BUILT_REVIEWER;
}

/**
 * Refuse a packet loretrace retrieve already built. Building from it again would render its lore excerpts
 * a second time in `packet_prompt_text` (its draft lines already contain them) and give the result the same
 * `packet_id` as its input — two different packets under one id. `retrieveBatch` skips such a file; a
 * single run refuses it so the user passes the draft it was built from.
 * @throws LoretraceError `already_built` (exit 1), pointer `/review/reviewer`, expected a draft packet.
 */
function refuseBuiltPacket(draft: ResponderPacket, file: string): void {
  if (!builtByRetrieve(draft)) return;
  throw new LoretraceError('already_built', `${file} is a packet loretrace retrieve already built (/review/reviewer is "${BUILT_REVIEWER}", packet_id ${draft.packet_id}); expected a draft responder packet — pass the draft it was built from (nothing written)`, {
    file, pointer: '/review/reviewer', expected: 'a draft responder packet (review.reviewer other than "loretrace retrieve")',
  });
}

/**
 * Step 2: read the projected context, when given. Only the parts the builder reads must be valid; other
 * violations become `projected_context_invalid` warnings (real Ghostlight projected contexts carry e.g. an
 * array `projection_controls` the schema types as object). Its local agent must be the draft's responder.
 * @throws LoretraceError `invalid_projected_context`, `projected_context_mismatch`.
 */
function readProjectedContext(draft: ResponderPacket, options: BuildPacketOptions, findings: Finding[]): ProjectedLocalContext | undefined {
  if (options.projectedContext === undefined) return undefined;
  const pcFile = options.projectedContextFile ?? '<projected-context>';
  const pcReport = validateProjectedContext(options.projectedContext, { file: pcFile });
  const fatal = pcReport.errors.filter((e) => READ_POINTERS.some((p) => e.pointer === p || e.pointer.startsWith(`${p}/`)) || e.pointer === '' || e.pointer === '/context');
  if (fatal.length > 0) {
    throw refuse(
      'invalid_projected_context',
      `${pcFile}: the projected context is unusable (${fatal.length} error${fatal.length === 1 ? '' : 's'} in the parts the builder reads): ${summarizeErrors(fatal)}`,
      pcFile,
      fatal[0]?.pointer,
      fatal,
    );
  }
  for (const e of pcReport.errors) {
    findings.push({
      code: 'projected_context_invalid',
      severity: 'warning',
      message: `${pcFile}: ${e.pointer} [${e.rule}] ${e.message} (not read by the builder: only /context/local_agent_id, /context/runtime_retrieval_requirements and /context/latent_pressure_requirements are)`,
      path: pcFile,
      pointer: e.pointer,
    });
  }
  const projected = options.projectedContext as ProjectedLocalContext;
  if (projected.context.local_agent_id !== draft.responder_agent_id) {
    throw refuse(
      'projected_context_mismatch',
      `${pcFile}: /context/local_agent_id is ${JSON.stringify(projected.context.local_agent_id)} but the draft's responder_agent_id is ${JSON.stringify(draft.responder_agent_id)}; expected the projected context of the same responder`,
      pcFile,
      '/context/local_agent_id',
    );
  }
  return projected;
}

/** Step 3: the lane — `options.lane`, else the draft's mode when it is one of the two lanes, else the coordinator lane. */
function chooseLane(draft: ResponderPacket, options: BuildPacketOptions): RetrievalLane {
  const draftMode = draft.lore_access.mode;
  return options.lane ?? (draftMode === 'responder_scoped_repository_search' ? draftMode : 'coordinator_scoped_retrieval');
}

/**
 * Step 4: the traversal policy — the draft's `lore_access.traversal_policy` (a `--policy` given as well is
 * ignored with a `policy_option_ignored` warning), else `options.policy`; keys in the schema's order.
 * Returns the policy and its pointer base (`/lore_access/traversal_policy`, or `''` for `--policy`).
 * @throws LoretraceError `no_policy` (exit 2) when neither is present.
 */
function choosePolicy(draft: ResponderPacket, options: BuildPacketOptions, lane: RetrievalLane, file: string, findings: Finding[]): { policy: TraversalPolicy; policyPointerBase: string } {
  let policy: TraversalPolicy;
  let policyPointerBase: string;
  if (draft.lore_access.traversal_policy) {
    policy = draft.lore_access.traversal_policy;
    policyPointerBase = '/lore_access/traversal_policy';
    if (options.policy) {
      findings.push({
        code: 'policy_option_ignored',
        severity: 'warning',
        message: `${file} carries /lore_access/traversal_policy, which takes precedence; the policy given with --policy${options.policyFile ? ` (${options.policyFile})` : ''} was not used`,
        path: file,
        pointer: '/lore_access/traversal_policy',
      });
    }
  } else if (options.policy) {
    policy = options.policy;
    policyPointerBase = '';
  } else {
    throw refuse(
      'no_policy',
      `${file} has no /lore_access/traversal_policy and no --policy was given; expected a traversal policy (max_link_depth, allowed_prefixes, required_seed_refs, follow_link_classes, stop_conditions) for lane ${lane}`,
      file,
      '/lore_access/traversal_policy',
      undefined,
      2,
    );
  }
  policy = ordered(policy as unknown as Obj, policy as unknown as Obj, POLICY_ORDER) as unknown as TraversalPolicy;
  return { policy, policyPointerBase };
}

/**
 * Step 5: compile the policy (`compilePolicy`) with the retrieval scope ({@link retrievalScope}) as the
 * packet's start points and the draft's hidden_context_audit as hidden refs.
 * @throws whatever compilePolicy raises (`bad_policy`, `seed_not_found`, `strict_policy`, ...).
 */
function compileForDraft(
  index: VaultIndex,
  draft: ResponderPacket,
  options: BuildPacketOptions,
  file: string,
  findings: Finding[],
  chosen: { policy: TraversalPolicy; policyPointerBase: string },
): BuildContext {
  const { policy, policyPointerBase } = chosen;
  const allowedScope = retrievalScope(draft.lore_access, policy, options.allowedScope);
  const compiled = compilePolicy(policy, {
    index,
    packet: { lore_access: { allowed_scope: allowedScope }, hidden_context_audit: draft.hidden_context_audit },
    strict: options.strictPolicy ?? false,
    pointerBase: policyPointerBase,
    file: policyPointerBase === '' ? (options.policyFile ?? '<policy>') : file,
  });
  return {
    index,
    ns: index.namespace,
    file,
    draft,
    options,
    policy,
    policyPointerBase,
    compiled,
    allowedScope,
    omitted: draft.hidden_context_audit.omitted_context_refs,
    findings,
  };
}

/**
 * Refs found in a ref-like string may reach the packet: every lore part is in scope ({@link assertInScope}),
 * and a non-namespaced part that names a vault note (or a hidden folder) is held to the same rule, so
 * hidden and out-of-prefix lore never reaches the packet under another spelling. With `foreignMessage`, a
 * ref of another namespace is refused with its own message; `folderOk` admits folder refs (allowed_scope).
 * @throws LoretraceError `ref_out_of_scope` naming the pointer.
 */
function guardRefLike(ctx: BuildContext, notesByLower: ReadonlyMap<string, string>, value: string, pointer: string, foreignMessage: boolean, folderOk = false): void {
  const { compiled, ns, file, policy } = ctx;
  const { kind, lore, other } = sourceParts(value, ns);
  if (kind === 'foreign' && foreignMessage) {
    throw refuse('ref_out_of_scope', `${file}: ${pointer} ${JSON.stringify(value)} names another lore namespace than ${ns}; it cannot be checked against this vault`, file, pointer);
  }
  for (const ref of kind === 'foreign' ? [value] : lore) assertInScope(ref, compiled, ns, file, pointer, policy.allowed_prefixes, folderOk);
  for (const part of other) {
    const bare = bareVaultPath(part, compiled, ns, notesByLower);
    if (bare === null) continue;
    const why = !bare.note
      ? `it is hidden lore (${bare.hiddenBy})`
      : !compiled.allowed_prefixes.some((p) => isUnderPrefix(bare.path, p))
        ? `it is outside allowed_prefixes (${policy.allowed_prefixes.join(', ')})`
        : (() => {
            const check = checkPath(compiled, bare.path);
            return check.ok ? null : `${check.reason} (${check.detail})`;
          })();
    if (why !== null) {
      throw refuse(
        'ref_out_of_scope',
        `${file}: ${pointer} ${JSON.stringify(value)} names the vault ${bare.note ? 'note' : 'path'} ${bare.path} without the ${ns}: namespace, and it may not reach a packet: ${why}`,
        file,
        pointer,
      );
    }
  }
}

/**
 * Step 5′: a policy given from outside the draft (`--policy`; a batch's per-draft policy) whose required
 * seeds share nothing with the draft's own scene ({@link offSceneSeeds}: none is named by its allowed_scope
 * or source_excerpts, and no term of a seed's title or aliases occurs in its prompt) is reported
 * (`policy_seed_off_scene`, warning, naming the policy file and `/required_seed_refs`): the walk would start
 * from another scene's lore. The draft's own policy is the author's and is not second-guessed.
 */
function reportOffSceneSeeds(ctx: BuildContext): void {
  if (ctx.policyPointerBase !== '') return;
  const off = offSceneSeeds(ctx.index, ctx.draft, ctx.policy);
  if (off.length === 0) return;
  const policyFile = ctx.options.policyFile ?? '<policy>';
  ctx.findings.push({
    code: 'policy_seed_off_scene',
    severity: 'warning',
    message: `${policyFile}: none of the policy's required seeds (${off.join(', ')}) is on the scene of ${ctx.file}: no allowed_scope entry or source_excerpt names ${off.length === 1 ? 'it' : 'them'}, and no word of ${off.length === 1 ? 'its' : 'their'} title or aliases occurs in the draft's prompt; is this the policy of another scene?`,
    path: policyFile,
    pointer: '/required_seed_refs',
  });
}

/** The guards of step 6, bound to one build: ref-like strings and the draft excerpts the output keeps. */
interface DraftGuard {
  /** {@link guardRefLike} for this build. */
  refLike: (value: string, pointer: string, foreignMessage: boolean, folderOk?: boolean) => void;
  /** {@link guardDraftExcerpt} for this build; remembers kept ref_ids. */
  keptExcerpt: (ex: SourceExcerpt, i: number) => void;
  /** ref_id → index in the draft's source_excerpts of every kept draft excerpt. */
  keptIds: Map<string, number>;
}

/**
 * Step 6: guard what the draft brings along — every allowed_scope entry (in scope, folders allowed, no
 * hidden text) and every required seed ref (in scope) — and return the guards the lane steps use for
 * the draft excerpts they keep.
 * @throws LoretraceError `ref_out_of_scope`, `hidden_ref_in_output`.
 */
function guardDraft(ctx: BuildContext): DraftGuard {
  const { compiled, ns, file, policy, policyPointerBase, omitted } = ctx;
  const notesByLower = new Map<string, string>();
  for (const p of [...compiled.notes.keys()].sort(codeUnitCompare)) if (!notesByLower.has(p.toLowerCase())) notesByLower.set(p.toLowerCase(), p);
  const refLike = (value: string, pointer: string, foreignMessage: boolean, folderOk = false): void => guardRefLike(ctx, notesByLower, value, pointer, foreignMessage, folderOk);
  ctx.allowedScope.forEach((s, i) => {
    refLike(s, `/lore_access/allowed_scope/${i}`, false, true);
    assertNoHiddenText(s, omitted, file, `/lore_access/allowed_scope/${i}`, 'allowed_scope entry');
  });
  policy.required_seed_refs.forEach((s, i) => assertInScope(s, compiled, ns, file, `${policyPointerBase}/required_seed_refs/${i}`, policy.allowed_prefixes));
  const keptIds = new Map<string, number>();
  const keptExcerpt = (ex: SourceExcerpt, i: number): void => guardDraftExcerpt(ctx, refLike, keptIds, ex, i);
  return { refLike, keptExcerpt, keptIds };
}

/**
 * A draft excerpt the output keeps: its refs in scope, no hidden text in any field, a unique ref_id
 * (recorded in `keptIds`).
 * @throws LoretraceError `ref_out_of_scope`, `hidden_ref_in_output`, `duplicate_ref_id`.
 */
function guardDraftExcerpt(ctx: BuildContext, refLike: DraftGuard['refLike'], keptIds: Map<string, number>, ex: SourceExcerpt, i: number): void {
  const { file, omitted } = ctx;
  const pointer = `/visible_context/source_excerpts/${i}`;
  refLike(ex.source_ref, `${pointer}/source_ref`, true);
  assertNoHiddenText(ex.ref_id, omitted, file, `${pointer}/ref_id`, 'excerpt ref_id');
  assertNoHiddenText(ex.source_ref, omitted, file, `${pointer}/source_ref`, 'excerpt source_ref');
  assertNoHiddenText(ex.text, omitted, file, `${pointer}/text`, 'excerpt text');
  const first = keptIds.get(ex.ref_id);
  if (first !== undefined) {
    throw refuse('duplicate_ref_id', `${file}: ${pointer}/ref_id ${JSON.stringify(ex.ref_id)} repeats /visible_context/source_excerpts/${first}/ref_id; expected unique ref_ids (the prompt and the responder cite excerpts by ref_id)`, file, `${pointer}/ref_id`);
  }
  keptIds.set(ex.ref_id, i);
}

/** Fresh zero counts. */
function emptyStats(): BuildStats {
  return { excerpts_kept: 0, excerpts_added: 0, excerpts_verified: 0, excerpts_dropped: 0, excerpts_withheld: 0, excerpts_cut: 0, trace_entries: 0 };
}

/**
 * Coordinator step a: the draft's non-lore excerpts are kept (guarded); its lore excerpts are dropped (lore
 * in this lane always comes with a runner_captured receipt; {@link reportDraftLore} says what stands in
 * for each).
 * @throws LoretraceError `ref_out_of_scope` for a ref of another namespace, and the guards' errors.
 */
function keepDraftNonLore(ctx: BuildContext, guard: DraftGuard, stats: BuildStats): { kept: SourceExcerpt[]; replaced: SourceExcerpt[] } {
  const { ns, file } = ctx;
  const kept: SourceExcerpt[] = [];
  const replaced: SourceExcerpt[] = [];
  ctx.draft.visible_context.source_excerpts.forEach((ex, i) => {
    const { kind } = sourceParts(ex.source_ref, ns);
    const pointer = `/visible_context/source_excerpts/${i}`;
    if (kind === 'other') {
      guard.keptExcerpt(ex, i);
      kept.push(ex);
      return;
    }
    if (kind === 'foreign') {
      throw refuse('ref_out_of_scope', `${file}: ${pointer}/source_ref ${JSON.stringify(ex.source_ref)} names another lore namespace than ${ns}; it cannot be checked against this vault`, file, `${pointer}/source_ref`);
    }
    stats.excerpts_dropped += 1;
    replaced.push(ex);
  });
  stats.excerpts_kept = kept.length;
  return { kept, replaced };
}

/**
 * Coordinator step a′: verify the draft's lore excerpts against the refs they cite
 * (src/packet/draft-citations.ts): each cited vault ref the policy admits is searched for the excerpt's
 * text, and the best supporting line run becomes a verified excerpt. A ref the policy refuses is reported
 * (`draft_lore_excerpt_ref_refused`, warning, pointer of the source_ref) and not read; a ref with no
 * supporting run is reported (`draft_lore_excerpt_unsupported`, warning, pointer of the excerpt). Returns
 * every outcome, in citation order, and the number of cited refs the policy admits (budget requirements).
 */
function verifyDraftLore(ctx: BuildContext, kept: readonly SourceExcerpt[]): { outcomes: CitationOutcome[]; admitted: number } {
  const citations = draftCitations(ctx.draft, ctx.ns);
  if (citations.length === 0) return { outcomes: [], admitted: 0 };
  const cctx = { index: ctx.index, compiled: ctx.compiled, draft: ctx.draft, corpus: admittedCorpus(ctx.index, ctx.compiled), usedIds: new Set(kept.map((e) => e.ref_id)) };
  const outcomes = citations.map((c) => verifyCitation(cctx, c));
  for (const o of outcomes) {
    if (o.kind === 'refused') {
      ctx.findings.push({
        code: 'draft_lore_excerpt_ref_refused',
        severity: 'warning',
        message: `${ctx.file}: ${o.citation.pointer} (${JSON.stringify(o.citation.ref_id)}) cites ${JSON.stringify(o.citation.ref)}, which the policy does not admit, so it was not read and verifies nothing: ${o.detail}`,
        path: ctx.file,
        pointer: `${o.citation.pointer}/source_ref`,
      });
    } else if (o.kind === 'unsupported') {
      ctx.findings.push({
        code: 'draft_lore_excerpt_unsupported',
        severity: 'warning',
        message: `${ctx.file}: ${o.citation.pointer} (${JSON.stringify(o.citation.ref_id)}): nothing in its cited ref ${JSON.stringify(o.citation.ref)} supports its text: ${o.detail}`,
        path: ctx.file,
        pointer: o.citation.pointer,
      });
    }
  }
  return { outcomes, admitted: outcomes.filter((o) => o.kind !== 'refused').length };
}

/**
 * The draft's lore excerpts as scene requirements ({@link sceneRequirements}): each lore excerpt with a text
 * (in draft order) is the author's statement of what lore the scene needs, so a note's excerpt is chosen by
 * it as by a projected-context requirement. One whose text contains an omitted ref or a raw-state marker is
 * left out (an excerpt's `used_for` may quote the requirement it serves; {@link verifyCitation} does not
 * search it either).
 */
function draftLoreRequirements(ctx: BuildContext): DraftLoreRequirement[] {
  const out: DraftLoreRequirement[] = [];
  ctx.draft.visible_context.source_excerpts.forEach((ex, index) => {
    if (sourceParts(ex.source_ref, ctx.ns).kind !== 'lore' || ex.text.trim() === '') return;
    if (hiddenTextIn(ex.text, ctx.omitted) !== null) return;
    out.push({ index, ref_id: ex.ref_id, text: ex.text });
  });
  return out;
}

/**
 * Coordinator step f: one `draft_lore_excerpt_dropped` finding per draft lore excerpt, saying what stands in
 * for its paraphrase in the packet: the verified excerpts of its cited refs the budget kept (ref_id, ref,
 * lines), or that none does (its refs were refused, supported nothing, or their excerpts were cut) — and
 * then that its prompt lines stay verbatim. Returns the draft lore excerpts a verified excerpt in the packet
 * stands in for: only their prompt bullets may go (seed 001: retrieval can make a packet worse; a draft
 * line is deleted only when loretrace replaced its excerpt by a verified one; a paraphrase with no stand-in
 * is still the author's statement of the scene's lore, so its lines stay although the excerpt object,
 * which would need a runner_captured receipt, leaves `source_excerpts`).
 */
function reportDraftLore(ctx: BuildContext, replaced: readonly SourceExcerpt[], outcomes: readonly CitationOutcome[], added: readonly SourceExcerpt[]): SourceExcerpt[] {
  const inPacket = new Set(added.map((e) => e.ref_id));
  const draftExcerpts = ctx.draft.visible_context.source_excerpts;
  const stoodIn: SourceExcerpt[] = [];
  for (const ex of replaced) {
    const i = draftExcerpts.indexOf(ex);
    const pointer = `/visible_context/source_excerpts/${i}`;
    const mine = outcomes.filter((o) => (o.kind === 'verified' ? o.verified.citation.index : o.citation.index) === i);
    const standIns = mine.flatMap((o) => (o.kind === 'verified' && inPacket.has(o.verified.excerpt.ref_id) ? [o.verified] : []));
    const what =
      standIns.length > 0
        ? `verified by ${standIns.map((v) => `${v.excerpt.ref_id} (${v.trace.source_ref} L${v.trace.line_start}-L${v.trace.line_end}, ${v.shared} of its ${v.wanted} terms)`).join(', ')}, the line run${standIns.length === 1 ? '' : 's'} of its cited ref${standIns.length === 1 ? '' : 's'} that support${standIns.length === 1 ? 's' : ''} it`
        : mine.length === 0
          ? 'it cites no note of the vault, so nothing verifies it'
          : 'no verified excerpt of its cited refs stands in for it (see the findings above: refused, unsupported or cut by the budget)';
    if (standIns.length > 0) stoodIn.push(ex);
    const lines = standIns.length > 0 ? '' : '; its lines in packet_prompt_text are kept verbatim, since nothing loretrace verified replaces them';
    ctx.findings.push({
      code: 'draft_lore_excerpt_dropped',
      severity: 'info',
      message: `${ctx.file}: ${pointer} (${JSON.stringify(ex.ref_id)}, ${JSON.stringify(ex.source_ref)}) is a paraphrase, left out: lore excerpts in a coordinator_scoped_retrieval packet come with a runner_captured trace entry; ${what}${lines}`,
      path: ctx.file,
      pointer,
    });
  }
  return stoodIn;
}

/**
 * Coordinator step b: the traversal queries ({@link queriesFor}); they are written into every trace entry
 * of the capture fragment, so none may carry hidden text — nor may a latent pressure requirement, whose
 * text an excerpt's `used_for` may quote.
 * @throws LoretraceError `hidden_ref_in_output` naming the requirement or the observable action.
 */
function traversalQueries(ctx: BuildContext, projected: ProjectedLocalContext | undefined): string[] {
  const { draft, omitted, file, options } = ctx;
  const queries = queriesFor(draft, projected);
  const pcFile = options.projectedContextFile ?? '<projected-context>';
  (projected?.context?.runtime_retrieval_requirements ?? []).forEach((r, i) => {
    assertNoHiddenText(`${r.trigger}: ${r.compact_fact}`, omitted, pcFile, `/context/runtime_retrieval_requirements/${i}`, 'a traversal query, written into the capture fragment');
  });
  const latent = projected?.context?.latent_pressure_requirements;
  (Array.isArray(latent) ? latent : []).forEach((r, i) => {
    if (typeof r?.text === 'string') assertNoHiddenText(r.text, omitted, pcFile, `/context/latent_pressure_requirements/${i}/text`, 'a requirement an excerpt\'s used_for names, written into the capture fragment');
  });
  assertNoHiddenText(draft.visible_context.observed_event.observable_action, omitted, file, '/visible_context/observed_event/observable_action', 'a traversal query, written into the capture fragment');
  return queries;
}

/** A traversal excerpt made compact, with the requirement it serves and its rebuilt trace entry. */
interface LoreCandidate {
  excerpt: SourceExcerpt;
  trace: ResearchTraceEntry;
  served: { index: number; terms: number } | null;
  seed: boolean;
  /** Set for a verified excerpt of a ref a draft lore excerpt cites (chosen first by the budget). */
  verified?: VerifiedExcerpt;
  /** True for a pick from a section of the note that serves a scene requirement ({@link servingSection}). */
  bySection?: boolean;
}

/**
 * The `used_for` of a compact excerpt's trace entry, kept consistent with the entry's `query`: the query is
 * the one the traversal ranked the chunk by (it is what the ledger's read record carries, so it is never
 * rewritten), and `used_for` says which requirement the excerpt's own text serves ({@link servedRequirement})
 * and, when the query is a requirement's (a runtime retrieval requirement or the observed event), names that
 * requirement too:
 * - text serves the query's requirement: `serves <label>`;
 * - text serves another one: `serves <label> (found by the query of <label>)`;
 * - text serves none but the query is a requirement's: `found by the query of <label>, but shares only N of
 *   its M terms (K needed to serve it); context for the scene's seed <ref>`;
 * - otherwise: `context for the scene's seed <ref>`.
 * `contextOf` replaces "the scene's seed <ref>" (a start point's lead names the allowed_scope note instead).
 */
export function compactUsedFor(
  text: string,
  query: string,
  requirements: readonly SceneRequirement[],
  seedRef: string,
  contextOf = `the scene's seed ${seedRef}`,
): { purpose: string; served: { index: number; terms: number } | null } {
  const served = servedRequirement(text, requirements);
  const byQuery = requirements.findIndex((r) => r.query && r.text === query);
  const label = (i: number): string => (requirements[i] as SceneRequirement).label;
  if (served !== null) {
    const also = byQuery >= 0 && byQuery !== served.index ? ` (found by the query of ${label(byQuery)})` : '';
    return { purpose: `serves ${label(served.index)}${also}`, served };
  }
  if (byQuery >= 0) {
    const { shared, wanted, needed } = requirementOverlap(text, requirements[byQuery] as SceneRequirement);
    return {
      purpose: `found by the query of ${label(byQuery)}, but shares only ${shared} of its ${wanted} terms (${needed} needed to serve it); context for ${contextOf}`,
      served: null,
    };
  }
  return { purpose: `context for ${contextOf}`, served: null };
}

/**
 * The chunks a compact excerpt of a note may come from, in the order tried: the chunk the traversal chose,
 * then the note's other chunks (hidden sections left out, as the traversal leaves them out) by the focus
 * terms they contain, most first, then chunk order. A chunk whose lines hold no lore (a list of links, a
 * navigation line, an epigraph) or whose pick may not reach the packet gives way to the next one, so a note
 * whose matched section is a "See also" line is still cited by its lore lines.
 */
function candidateChunks(ctx: BuildContext, path: string, chosen: number, focus: readonly string[]): Chunk[] {
  const withheld = new Set(sectionsOf(ctx.compiled, path).flatMap((s) => s.chunks));
  const terms = new Set(queryTermSet([...focus]));
  const score = (c: Chunk): number => {
    const seen = new Set<string>();
    for (const tok of tokenize(c.text)) {
      const t = processTerm(tok);
      if (t !== null && terms.has(t)) seen.add(t);
    }
    return seen.size;
  };
  const all = chunksOf(ctx.index, path);
  const first = all.filter((c) => c.chunk_index === chosen);
  const rest = all
    .filter((c) => c.chunk_index !== chosen && !withheld.has(c.chunk_index))
    .map((c) => ({ c, n: score(c) }))
    .sort((x, y) => y.n - x.n || x.c.chunk_index - y.c.chunk_index)
    .map((x) => x.c);
  return [...first, ...rest];
}

/**
 * The chunk of `chunks` whose text (a heading section of the note) serves a scene requirement
 * ({@link servedRequirement}: the terms serving takes), the most requirement terms first, then the earlier in
 * `chunks`; null when none does.
 */
function servingSection(chunks: readonly Chunk[], requirements: readonly SceneRequirement[]): { chunk: Chunk; served: { index: number; terms: number } } | null {
  let best: { chunk: Chunk; served: { index: number; terms: number } } | null = null;
  for (const chunk of chunks) {
    const served = servedRequirement(chunk.text, requirements);
    if (served !== null && (best === null || served.terms > best.served.terms)) best = { chunk, served };
  }
  return best;
}

/** How a finding names a chunk: its last heading in quotation marks (`"Jovian Space"`), else `chunk N`. */
function sectionName(chunk: Chunk): string {
  const heading = chunk.heading_path[chunk.heading_path.length - 1];
  return heading !== undefined && heading !== '' ? `${JSON.stringify(heading)} (chunk ${chunk.chunk_index})` : `chunk ${chunk.chunk_index}`;
}

/** Most chunks of one note {@link compactCandidate} tries (the traversal's chunk and the best others). */
const MAX_CHUNKS_TRIED = 8;

/** The ref_id / trace_id of an excerpt moved from chunk `from` to chunk `to` of the same note. */
function moveChunkId(id: string, from: number, to: number): string {
  return from === to ? id : id.replace(new RegExp(`chunk${from}(?=(?:\\.\\d+)?$)`), `chunk${to}`);
}

/**
 * The budget candidate of a compact pick of `chunk` standing in for the traversal's excerpt `ex` / `trace`:
 * the excerpt (ref_id and source_ref moved to that chunk, the pick's display text) and a trace entry over
 * exactly the pick's lines (`text` the exact file lines), with the traversal's query and `used_for`.
 */
function pickCandidate(
  ctx: BuildContext,
  ex: SourceExcerpt,
  trace: ResearchTraceEntry,
  chunk: Chunk,
  pick: CompactPick,
  usedFor: string,
  served: LoreCandidate['served'],
  seed: boolean,
): LoreCandidate {
  const path = traceNotePath(trace.source_path);
  const rebuilt = makeTraceEntry({
    trace_id: moveChunkId(trace.trace_id, trace.chunk_index, chunk.chunk_index),
    origin: trace.origin,
    query: trace.query,
    namespace: ctx.ns,
    path,
    disk_path: trace.source_path,
    chunk_index: chunk.chunk_index,
    line_start: pick.line_start,
    line_end: pick.line_end,
    text: pick.exact,
    used_for: usedFor,
  });
  const excerpt = { ref_id: moveChunkId(ex.ref_id, trace.chunk_index, chunk.chunk_index), source_ref: formatRef(ctx.ns, path, { kind: 'chunk', index: chunk.chunk_index }), text: pick.text };
  return { excerpt, trace: rebuilt, served, seed };
}

/**
 * Coordinator step c: make one traversal excerpt compact ({@link compactExcerpt}: the most relevant
 * self-contained sentences of the chunk, wikilinks as display text) and rebuild its trace entry over
 * exactly the lines those sentences touch, with a `used_for` from {@link compactUsedFor}; the traversal's own
 * note on how the note was reached follows after `; reached: `. The chunks are tried in
 * {@link candidateChunks} order (at most {@link MAX_CHUNKS_TRIED}): of the picks that may reach the packet
 * ({@link withholdReason}), the first self-contained one with a query term wins, else the first
 * self-contained one, else the first one. When the traversal's lines serve no scene requirement and another
 * of these chunks does ({@link servingSection}), that chunk is tried first and its sentences are chosen by
 * that requirement (the pick is marked `bySection`, and its `used_for` names the section when the sentences
 * alone hold too few of the requirement's terms). Why: the traversal ranks a note's chunks by its walk
 * queries alone, and a chunk that shares a word or two with one of them (on Sella, Territories' Earth
 * section, by "clean" and "shared" in the observed event) is not what the scene needs when another section
 * of the same note serves one of its requirements (the Jovian section, the Ganymede Route Compact
 * paraphrase). Returns the candidate, or null with the reason of the first chunk that failed (`withheld`).
 */
function compactCandidate(
  ctx: BuildContext,
  ex: SourceExcerpt,
  trace: ResearchTraceEntry,
  requirements: readonly SceneRequirement[],
  seedRef: string,
  usedIds: ReadonlySet<string>,
): { cand: LoreCandidate | null; withheld: string | null; moved: string | null } {
  const served = servedRequirement(trace.extracted_constraint, requirements);
  let focus = served !== null ? [(requirements[served.index] as SceneRequirement).text] : requirements.map((r) => r.text);
  const path = traceNotePath(trace.source_path);
  const seed = ctx.compiled.seeds.includes(path);
  const ownSeed = seed ? formatRef(ctx.ns, path) : seedRef;
  const links = outgoingLinks(ctx.index, path);
  let firstReason: string | null = null;
  // Why the traversal's own chunk gave way (null while it has not).
  let ownChunk: string | null = null;
  // Best kept so far: rank 2 = self-contained with a query term (taken at once), 1 = self-contained, 0 = other.
  let kept: { cand: LoreCandidate; rank: number } | null = null;
  let tried = candidateChunks(ctx, path, trace.chunk_index, focus).slice(0, MAX_CHUNKS_TRIED);
  // Set when a section of the note that serves a requirement is tried first: its chunk and what it serves.
  let serving: { chunk: number; says: string } | null = null;
  if (served === null) {
    // The traversal's lines serve no requirement: a section of the note that does is tried first, for that requirement.
    const section = servingSection(tried, requirements);
    if (section !== null && section.chunk.chunk_index !== trace.chunk_index) {
      const r = requirements[section.served.index] as SceneRequirement;
      const { wanted } = requirementOverlap(section.chunk.text, r);
      focus = [r.text];
      tried = [section.chunk, ...tried.filter((c) => c !== section.chunk)];
      const what = `${r.label.split(' (')[0]} (${section.served.terms} of its ${wanted} terms)`;
      serving = { chunk: section.chunk.chunk_index, says: `the note's section ${sectionName(section.chunk)}, which serves ${what}` };
      ownChunk = `its section serves no scene requirement; the note's section ${sectionName(section.chunk)} serves ${what}`;
    }
  }
  for (const chunk of tried) {
    const refId = moveChunkId(ex.ref_id, trace.chunk_index, chunk.chunk_index);
    if (chunk.chunk_index !== trace.chunk_index && usedIds.has(refId)) continue;
    // The whole chunk, not only the traversal's line pick: its best sentences may lie elsewhere in it.
    const pick = compactExcerpt(chunk.text.split('\n'), focus, { lineOffset: chunk.line_start, links });
    const own = chunk.chunk_index === trace.chunk_index;
    if (pick === null) {
      firstReason ??= 'its chunk holds no lore line (only epigraphs, headings, fields, navigation lines or lists of links)';
      if (own) ownChunk = firstReason;
      continue;
    }
    const used = compactUsedFor(pick.text, trace.query, requirements, ownSeed);
    const { served: servedNow } = used;
    // A pick of the serving section that holds too few terms of the requirement itself still says why it was taken.
    const purpose = serving !== null && serving.chunk === chunk.chunk_index && servedNow === null ? `from ${serving.says}; ${used.purpose}` : used.purpose;
    const cand = pickCandidate(ctx, ex, trace, chunk, pick, `${purpose}; reached: ${trace.used_for}`, servedNow, seed);
    if (serving !== null && serving.chunk === chunk.chunk_index) cand.bySection = true;
    const reason = withholdReason(cand.excerpt, cand.trace, ctx.draft, ctx.compiled, ctx.index);
    if (reason !== null) {
      firstReason ??= reason;
      if (own) ownChunk = reason;
      continue;
    }
    const rank = pick.self_contained ? (pick.terms_matched > 0 ? 2 : 1) : 0;
    if (own && rank < 2) ownChunk = rank === 1 ? 'its pick holds no query term' : `its pick is not self-contained (${JSON.stringify(pick.text.slice(0, 60))}…)`;
    if (rank === 2) return { cand, withheld: null, moved: own ? null : ownChunk };
    if (kept === null || rank > kept.rank) kept = { cand, rank };
  }
  if (kept !== null) return { cand: kept.cand, withheld: null, moved: kept.cand.trace.chunk_index === trace.chunk_index ? null : ownChunk };
  return { cand: null, withheld: firstReason ?? 'its note has no chunk', moved: null };
}

/**
 * The lines of a note that link to one of the scene's seeds, as a compact pick, for a note whose best pick
 * serves no scene requirement (its `used_for` would say only "context for the scene's seed"). A note reached
 * as context for a seed is cited where it speaks of that seed: the paragraph holding its link to the seed (an
 * Obsidian backlink of the seed), chosen by the seed's title words — e.g. Aeronautics Unlimited, a primary
 * actor of the Pallas Species Strikes, is cited by "The [[Pallas Species Strikes]] exposed how much …", not by
 * a line that shares one word with a requirement. Chunks are tried in chunk order; hidden sections are left
 * out as everywhere. Returns null when no chunk of the note links to a seed, or no such pick is self-contained,
 * names the seed and may reach the packet ({@link withholdReason}).
 */
function seedPassageCandidate(
  ctx: BuildContext,
  ex: SourceExcerpt,
  trace: ResearchTraceEntry,
  requirements: readonly SceneRequirement[],
  usedIds: ReadonlySet<string>,
): { cand: LoreCandidate; seedRef: string } | null {
  const path = traceNotePath(trace.source_path);
  const seeds = new Set(ctx.compiled.seeds);
  if (seeds.has(path)) return null;
  const links = outgoingLinks(ctx.index, path);
  const withheld = new Set(sectionsOf(ctx.compiled, path).flatMap((s) => s.chunks));
  for (const chunk of chunksOf(ctx.index, path)) {
    if (withheld.has(chunk.chunk_index)) continue;
    const toSeed = links.find((l) => {
      const r = l.resolution;
      return l.chunk_index === chunk.chunk_index && (r.status === 'resolved' || r.status === 'ambiguous') && seeds.has(r.path) && r.path !== path;
    });
    if (toSeed === undefined) continue;
    const seedPath = (toSeed.resolution as { path: string }).path;
    const title = getNote(ctx.index, seedPath)?.title ?? seedPath;
    const refId = moveChunkId(ex.ref_id, trace.chunk_index, chunk.chunk_index);
    if (chunk.chunk_index !== trace.chunk_index && usedIds.has(refId)) continue;
    const pick = compactExcerpt(chunk.text.split('\n'), [title], { lineOffset: chunk.line_start, links });
    if (pick === null || !pick.self_contained || pick.terms_matched === 0) continue;
    if (toSeed.line < pick.line_start || toSeed.line > pick.line_end) continue;
    const seedRef = formatRef(ctx.ns, seedPath);
    const usedFor = `context for the scene's seed ${seedRef}: the note's passage that links it (line ${toSeed.line}); reached: ${trace.used_for}`;
    const cand = pickCandidate(ctx, ex, trace, chunk, pick, usedFor, servedRequirement(pick.text, requirements), false);
    if (withholdReason(cand.excerpt, cand.trace, ctx.draft, ctx.compiled, ctx.index) !== null) continue;
    return { cand, seedRef };
  }
  return null;
}

/**
 * A start point's lead as a compact pick, for a seed note — or an allowed_scope note none of whose passages
 * links a seed ({@link seedPassageCandidate}) — whose best pick serves no scene requirement and none of whose
 * sections does ({@link servingSection}): in the first chunk (chunk order, hidden sections left out)
 * that gives a self-contained pick that may reach the packet ({@link withholdReason}), the sentence that
 * names the note — the most words of its title, then the fewest characters ({@link compactExcerpt} with the
 * title as its query) — else its opening sentences, as many as fit. Why: a seed is the scene's subject, named
 * by the author; when nothing in it serves a requirement it is context, and a note given as context is cited
 * for what it is — the definition it opens with, as an encyclopedia's lead sentence defines its subject — not
 * for a sentence that shares a word with the observed event (one shared word is a coincidence more often than
 * a reason: `MIN_SERVED_TERMS`). An allowed_scope note is a start point the author named as well. `used_for`
 * says so: `…; context for the scene's seed <ref>: its lead; reached: …` (`the scene's allowed_scope note
 * <ref>` for a scope note). Null when no chunk gives one.
 */
function leadCandidate(
  ctx: BuildContext,
  ex: SourceExcerpt,
  trace: ResearchTraceEntry,
  requirements: readonly SceneRequirement[],
  usedIds: ReadonlySet<string>,
): LoreCandidate | null {
  const path = traceNotePath(trace.source_path);
  const seed = ctx.compiled.seeds.includes(path);
  const title = getNote(ctx.index, path)?.title ?? path;
  const links = outgoingLinks(ctx.index, path);
  const withheld = new Set(sectionsOf(ctx.compiled, path).flatMap((s) => s.chunks));
  for (const chunk of chunksOf(ctx.index, path)) {
    if (withheld.has(chunk.chunk_index)) continue;
    if (chunk.chunk_index !== trace.chunk_index && usedIds.has(moveChunkId(ex.ref_id, trace.chunk_index, chunk.chunk_index))) continue;
    const lines = chunk.text.split('\n');
    const named = compactExcerpt(lines, [title], { lineOffset: chunk.line_start, links });
    const pick = named !== null && named.terms_matched > 0 && named.self_contained ? named : compactExcerpt(lines, [], { lineOffset: chunk.line_start, links });
    if (pick === null || !pick.self_contained) continue;
    const ref = formatRef(ctx.ns, path);
    const { purpose, served } = compactUsedFor(pick.text, trace.query, requirements, ref, seed ? undefined : `the scene's allowed_scope note ${ref}`);
    const usedFor = served === null ? `${purpose}: its lead; reached: ${trace.used_for}` : `${purpose}; reached: ${trace.used_for}`;
    const cand = pickCandidate(ctx, ex, trace, chunk, pick, usedFor, served, seed);
    if (withholdReason(cand.excerpt, cand.trace, ctx.draft, ctx.compiled, ctx.index) !== null) continue;
    return cand;
  }
  return null;
}

/**
 * The verified excerpts as budget candidates ({@link verifyCitation} built them; src/packet/draft-citations.ts):
 * each serves the requirement of the draft lore excerpt it verifies ({@link draftLoreRequirements}), is a seed's when
 * its note is a seed, and is recorded in `seen` / `ids`. Two citations verified by the same lines of the
 * same chunk give one excerpt, whose `used_for` names both draft excerpts.
 */
function verifiedCandidates(ctx: BuildContext, verified: readonly VerifiedExcerpt[], seen: Set<string>, ids: Set<string>, requirements: readonly SceneRequirement[]): LoreCandidate[] {
  const out: LoreCandidate[] = [];
  const byKey = new Map<string, LoreCandidate>();
  for (const v of verified) {
    const key = `${v.excerpt.source_ref}\u0000${v.excerpt.text}`;
    const same = byKey.get(key);
    if (same) {
      same.trace = { ...same.trace, used_for: `${same.trace.used_for}; ${v.trace.used_for}` };
      continue;
    }
    const own = requirements.findIndex((r) => r.draft_excerpt === v.citation.index);
    const cand: LoreCandidate = { excerpt: v.excerpt, trace: v.trace, served: own >= 0 ? { index: own, terms: v.shared } : null, seed: ctx.compiled.seeds.includes(v.path), verified: v };
    byKey.set(key, cand);
    seen.add(key);
    ids.add(v.excerpt.ref_id);
    out.push(cand);
  }
  return out;
}

/**
 * The link and lore line counts of a hub note ({@link isHubNote}, over its chunks' lines), or null for any
 * other note. A hub — a map of content, a folder's index — is a seed or start point for the notes it lists:
 * the walk reads its links, and its paragraph of framing ("Pre-Elysium factions are the durable collective
 * forms …") is rarely what an author cites, so it gives an excerpt only when that serves a scene requirement.
 */
function hubNote(ctx: BuildContext, path: string): { link_lines: number; lore_lines: number } | null {
  const lines = chunksOf(ctx.index, path).flatMap((c) => c.text.split('\n'));
  return isHubNote(lines) ? hubLineCounts(lines) : null;
}

/**
 * Coordinator step d: turn the traversal's excerpts into packet excerpts. Each is checked in scope and made
 * compact ({@link compactCandidate}); one that may not reach the packet ({@link withholdReason}, judged on
 * the compact text and lines) is withheld with its trace entry (`excerpt_withheld`); a hub note's pick that
 * serves no requirement is left out ({@link hubNote}, `excerpt_hub_note`); exact duplicates of a
 * kept excerpt are skipped; the rest go through the excerpt budget ({@link selectWithinBudget}), and what it
 * cuts is reported (`excerpt_budget_cut`, with each cut excerpt's ref and lines) and left out of the packet
 * and the capture. Trace entries past the excerpts are kept. Returns the added excerpts and kept trace.
 * @throws LoretraceError `ref_out_of_scope`, `duplicate_ref_id` (a traversal ref_id a draft excerpt uses).
 */
function mergeTraversalExcerpts(
  ctx: BuildContext,
  guard: DraftGuard,
  result: TraverseResult,
  kept: readonly SourceExcerpt[],
  requirements: readonly SceneRequirement[],
  budget: ExcerptBudget,
  stats: BuildStats,
  verified: readonly VerifiedExcerpt[],
  replaced: readonly SourceExcerpt[],
): { added: SourceExcerpt[]; trace: ResearchTraceEntry[]; labels: Map<string, string>; redundant: SourceExcerpt[] } {
  const { compiled, ns, file, policy, findings } = ctx;
  const seen = new Set(kept.map((e) => `${e.source_ref}\u0000${e.text}`));
  const ids = new Set(kept.map((e) => e.ref_id));
  const seedRef = policy.required_seed_refs[0] ?? result.consulted_refs[0] ?? ctx.allowedScope[0] ?? '(none)';
  const verifiedCands = verifiedCandidates(ctx, verified, seen, ids, requirements);
  // A chunk a verified excerpt comes from gives no second excerpt (one excerpt per chunk, as ref_ids say).
  const verifiedChunks = new Map(verifiedCands.map((c) => [c.excerpt.source_ref, c.excerpt.ref_id]));
  const candidates: LoreCandidate[] = [];
  result.source_excerpts.forEach((ex, i) => {
    assertInScope(ex.source_ref, compiled, ns, 'traversal result', `/source_excerpts/${i}/source_ref`, policy.allowed_prefixes);
    const trace = result.research_trace[i];
    if (!trace) return;
    const compacted = compactCandidate(ctx, ex, trace, requirements, seedRef, ids);
    const { withheld } = compacted;
    let { cand, moved } = compacted;
    // A pick that serves no requirement is context for a seed: cite the note where it speaks of that seed.
    let bySeed: { cand: LoreCandidate; seedRef: string } | null = null;
    if (cand !== null && cand.served === null && !cand.seed) {
      bySeed = seedPassageCandidate(ctx, ex, trace, requirements, ids);
      if (bySeed !== null) {
        moved = bySeed.cand.trace.chunk_index === trace.chunk_index ? null : `its pick serves no scene requirement; the note's passage that links the seed ${bySeed.seedRef} does`;
        cand = bySeed.cand;
      }
    }
    // A start point (a seed, an allowed_scope note) whose pick serves no requirement, no section of which does
    // and, for a scope note, no passage of which links a seed, is cited by its lead: what the note is.
    const startPoint = cand !== null && (cand.seed || compiled.scope.includes(traceNotePath(cand.trace.source_path)));
    if (cand !== null && startPoint && cand.served === null && cand.bySection !== true && bySeed === null) {
      const lead = leadCandidate(ctx, ex, trace, requirements, ids);
      if (lead !== null) {
        moved = lead.trace.chunk_index === trace.chunk_index ? null : `its pick serves no scene requirement; the ${lead.seed ? 'seed' : 'allowed_scope note'} is cited by its lead`;
        cand = lead;
      }
    }
    // A hub note (a map of content) was read for its links; its framing serves no requirement.
    const hub = cand !== null && cand.served === null ? hubNote(ctx, traceNotePath(trace.source_path)) : null;
    if (hub !== null) {
      findings.push({
        code: 'excerpt_hub_note',
        severity: 'info',
        message: `${ex.source_ref} (${ex.ref_id}) was consulted for its links and gives no excerpt: it is a hub note (${hub.link_lines} lines that list links, ${hub.lore_lines} lore line${hub.lore_lines === 1 ? '' : 's'}), and its best pick serves no scene requirement (${JSON.stringify((cand as LoreCandidate).excerpt.text.slice(0, 60))}…)`,
        path: ex.source_ref,
      });
      return;
    }
    if (cand !== null && moved !== null) {
      findings.push({
        code: 'excerpt_chunk_moved',
        severity: 'info',
        message: `${ex.source_ref} (${ex.ref_id}): the traversal's chunk gave no usable compact excerpt (${moved}), so the excerpt is ${cand.excerpt.source_ref} L${cand.trace.line_start}-L${cand.trace.line_end} of the same note`,
        path: ex.source_ref,
      });
    }
    if (cand === null) {
      stats.excerpts_withheld += 1;
      findings.push({
        code: 'excerpt_withheld',
        severity: 'warning',
        message: `${ex.source_ref} (${ex.ref_id}) was consulted but not put in the packet, and its trace entry is left out of the capture: ${withheld}`,
        path: ex.source_ref,
      });
      return;
    }
    const key = `${cand.excerpt.source_ref}\u0000${cand.excerpt.text}`;
    if (seen.has(key)) return;
    const sameChunk = verifiedChunks.get(cand.excerpt.source_ref);
    if (sameChunk !== undefined) {
      findings.push({
        code: 'excerpt_redundant',
        severity: 'info',
        message: `${cand.trace.source_ref} L${cand.trace.line_start}-L${cand.trace.line_end} (${cand.excerpt.ref_id}) was left out: the verified excerpt ${sameChunk} of a draft lore excerpt's cited ref comes from the same chunk`,
        path: cand.trace.source_ref,
      });
      return;
    }
    if (ids.has(cand.excerpt.ref_id)) {
      const at = guard.keptIds.get(cand.excerpt.ref_id);
      const pointer = at !== undefined ? `/visible_context/source_excerpts/${at}/ref_id` : '/visible_context/source_excerpts';
      throw refuse('duplicate_ref_id', `${file}: the traversal's excerpt ref_id ${JSON.stringify(cand.excerpt.ref_id)} (${cand.excerpt.source_ref}) is already used by ${pointer}; rename the draft's excerpt`, file, pointer);
    }
    seen.add(key);
    ids.add(cand.excerpt.ref_id);
    candidates.push(cand);
  });
  result.research_trace.forEach((t, i) => assertInScope(t.source_ref, compiled, ns, 'traversal result', `/research_trace/${i}/source_ref`, policy.allowed_prefixes));
  result.consulted_refs.forEach((r, i) => assertInScope(r, compiled, ns, 'traversal result', `/consulted_refs/${i}`, policy.allowed_prefixes));
  result.followed_refs.forEach((r, i) => assertInScope(r, compiled, ns, 'traversal result', `/followed_refs/${i}`, policy.allowed_prefixes));

  const fresh = dropRedundant(ctx, candidates, kept, requirements, replaced);
  const redundant = candidates.filter((c) => !fresh.includes(c)).map((c) => c.excerpt);
  candidates.splice(0, candidates.length, ...verifiedCands, ...fresh);
  const budgetInput: BudgetCandidate[] = candidates.map((c) => ({
    chars: c.excerpt.text.length,
    requirement: c.served?.index ?? null,
    terms: c.verified ? c.verified.shared : (c.served?.terms ?? 0),
    seed: c.seed,
    path: traceNotePath(c.trace.source_path),
    verified: c.verified !== undefined,
  }));
  const chosen = new Set(selectWithinBudget(budgetInput, requirements.length, budget));
  const cut = candidates.filter((_, i) => !chosen.has(i));
  stats.excerpts_cut = cut.length;
  if (cut.length > 0) {
    findings.push({
      code: 'excerpt_budget_cut',
      severity: 'info',
      message: `${file}: the excerpt budget (${budget.count} excerpts, ${budget.chars} characters; ${budget.count_source}; ${budget.chars_source}) cut ${cut.length} lore excerpt${cut.length === 1 ? '' : 's'}, left out of the packet and the capture: ${cut.map((c) => `${c.trace.source_ref} L${c.trace.line_start}-L${c.trace.line_end} (${c.excerpt.text.length} characters)`).join(', ')}`,
      path: file,
      pointer: '/visible_context/source_excerpts',
    });
  }
  const added = candidates.filter((_, i) => chosen.has(i));
  stats.excerpts_added = added.length;
  stats.excerpts_verified = added.filter((c) => c.verified).length;
  const trace = added.map((c) => c.trace);
  for (const t of result.research_trace.slice(result.source_excerpts.length)) trace.push(t);
  const labels = new Map<string, string>();
  for (const c of added) {
    const path = traceNotePath(c.trace.source_path);
    const chunk = chunksOf(ctx.index, path).find((k) => k.chunk_index === c.trace.chunk_index);
    labels.set(c.excerpt.ref_id, loreLabel(noteDisplayTitle(getNote(ctx.index, path)?.title ?? path, path), chunk?.heading_path ?? []));
  }
  return { added: added.map((c) => c.excerpt), trace, labels, redundant };
}

/**
 * Requirement terms of `text`: the distinct terms of requirement `r` it contains (folded like search).
 */
function requirementTermsIn(text: string, r: SceneRequirement): Set<string> {
  const wanted = new Set(queryTermSet([r.text]));
  const out = new Set<string>();
  for (const tok of tokenize(text)) {
    const t = processTerm(tok);
    if (t !== null && wanted.has(t)) out.add(t);
  }
  return out;
}

/**
 * Coordinator step d′: leave out lore excerpts that restate what the draft already carries. Redundancy is
 * measured against the scene requirement the excerpt serves: an excerpt is redundant when a line the draft
 * already gives the responder — a bullet of the draft prompt's source section, or a draft excerpt the
 * packet keeps — serves the same requirement ({@link servedRequirement}) and contains every term of that
 * requirement the excerpt contains, so the excerpt grounds the requirement with nothing the draft's line
 * does not. A bullet rendering a draft lore excerpt the packet replaces is not such a line (it leaves the
 * prompt). Excerpts that serve no requirement (context for the seed) are never redundant. Each one left
 * out is reported (`excerpt_redundant`, naming the draft line), and its budget slot goes to the next
 * candidate.
 */
function dropRedundant(ctx: BuildContext, candidates: readonly LoreCandidate[], kept: readonly SourceExcerpt[], requirements: readonly SceneRequirement[], replaced: readonly SourceExcerpt[]): LoreCandidate[] {
  // A bullet rendering a replaced draft lore excerpt leaves the prompt: it does not count as what the draft gives.
  const gone = new Set(replaced.map((e) => e.text));
  const bullets = parseSourceSection(ctx.draft.packet_prompt_text)?.items.map((i) => i.text).filter((t) => !gone.has(t)) ?? [];
  const draftLines = [...bullets, ...kept.map((e) => e.text)];
  const out: LoreCandidate[] = [];
  for (const c of candidates) {
    const served = c.served;
    const same =
      served === null
        ? undefined
        : draftLines.find((line) => {
            if (servedRequirement(line, requirements)?.index !== served.index) return false;
            const r = requirements[served.index] as SceneRequirement;
            const own = requirementTermsIn(line, r);
            return [...requirementTermsIn(c.excerpt.text, r)].every((t) => own.has(t));
          });
    if (same === undefined) {
      out.push(c);
      continue;
    }
    ctx.findings.push({
      code: 'excerpt_redundant',
      severity: 'info',
      message: `${c.trace.source_ref} L${c.trace.line_start}-L${c.trace.line_end} (${c.excerpt.ref_id}) was left out: it serves ${(requirements[(served as { index: number }).index] as SceneRequirement).label} with no term of it that the draft's line ${JSON.stringify(same)} does not already carry`,
      path: c.trace.source_ref,
    });
  }
  return out;
}

/**
 * Coordinator step e: the counted requirements no lore excerpt serves ({@link unmetRequirements}), so a
 * reader sees which part of the scene got no lore, each with the draft's own non-lore excerpts that cover
 * it, if any. Unmet runtime retrieval requirements are one `requirements_unmet` warning: seed 001's packet
 * builder consumes `runtime_retrieval_requirements`, so one that got no lore is retrieval that fell short.
 * Unmet latent pressure requirements are one `latent_requirements_unmet` info finding: they label excerpts
 * (`used_for`) but are not retrieval requirements, and many are about speech or manner that no lore can
 * serve ("Mara's speech should stay practical and short."), so a warning on every run would say nothing.
 */
function reportUnmet(ctx: BuildContext, requirements: readonly SceneRequirement[], lore: readonly SourceExcerpt[], draftOwn: readonly SourceExcerpt[]): UnmetRequirement[] {
  const unmet = unmetRequirements(requirements, lore, draftOwn);
  const list = (us: readonly UnmetRequirement[]): string =>
    us.map((u) => `${u.label}${u.covered_by_draft.length > 0 ? ` (the draft's own ${u.covered_by_draft.join(', ')} covers it)` : ''}`).join('; ');
  const runtime = unmet.filter((u) => u.kind === 'runtime');
  const latent = unmet.filter((u) => u.kind === 'latent');
  if (runtime.length > 0) {
    ctx.findings.push({
      code: 'requirements_unmet',
      severity: 'warning',
      message: `${ctx.file}: ${runtime.length} runtime retrieval requirement${runtime.length === 1 ? '' : 's'} got no lore excerpt that serves ${runtime.length === 1 ? 'it' : 'them'}: ${list(runtime)}`,
      path: ctx.file,
      pointer: '/visible_context/source_excerpts',
    });
  }
  if (latent.length > 0) {
    ctx.findings.push({
      code: 'latent_requirements_unmet',
      severity: 'info',
      message: `${ctx.file}: ${latent.length} latent pressure requirement${latent.length === 1 ? '' : 's'} got no lore excerpt that serves ${latent.length === 1 ? 'it' : 'them'} (they label excerpts but are not retrieval requirements; speech or manner is not lore): ${list(latent)}`,
      path: ctx.file,
      pointer: '/visible_context/source_excerpts',
    });
  }
  return unmet;
}

/**
 * The policy the coordinator lane walks with: the compiled policy without its `max_chunks` / `max_chars`
 * budgets, which bound the packet's lore excerpts instead ({@link excerptBudget}). Why: the walk's excerpts are
 * whole lines, longer than the compact excerpts the packet carries, so a `max_chars:200` the packet's
 * excerpts meet would stop the walk before its first note; and a walk stopped at `max_chunks:2` would leave
 * the budget nothing to choose from — each requirement's best excerpt first — nor anything to report as cut
 * (`excerpt_budget_cut`). Every other rule (prefixes, depth, classes, `max_refs`, the relevance floors and
 * stop, the time budget) applies to the walk unchanged, and the receipt is the compiled one.
 */
export function walkPolicy(compiled: CompiledPolicy): CompiledPolicy {
  if (compiled.budgets.max_chunks === null && compiled.budgets.max_chars === null) return compiled;
  return { ...compiled, budgets: { ...compiled.budgets, max_chunks: null, max_chars: null } };
}

/**
 * The coordinator lane's excerpts: keep the draft's non-lore excerpts, run the traversal with the
 * requirement queries, merge its excerpts, and build the capture fragment (runner_captured trace,
 * snapshot, policy receipt). A draft's research_instructions are dropped with a finding.
 * @throws LoretraceError `no_lore_excerpts` when the traversal added no lore, and the steps' errors.
 */
async function coordinatorExcerpts(ctx: BuildContext, guard: DraftGuard, projected: ProjectedLocalContext | undefined): Promise<LaneExcerpts> {
  const { file, policy, findings, draft } = ctx;
  const stats = emptyStats();
  const { kept, replaced } = keepDraftNonLore(ctx, guard, stats);
  const walkQueries = traversalQueries(ctx, projected);
  const { outcomes, admitted } = verifyDraftLore(ctx, kept);
  const verified = outcomes.flatMap((o) => (o.kind === 'verified' ? [o.verified] : []));
  const requirements = sceneRequirements(draft, projected, draftLoreRequirements(ctx));
  const budget = excerptBudget(draft, requirements, policy.required_seed_refs.length, ctx.compiled.budgets, admitted);
  const result = await traverse(ctx.index, walkPolicy(ctx.compiled), { queries: walkQueries });
  const { added, trace, labels, redundant } = mergeTraversalExcerpts(ctx, guard, result, kept, requirements, budget, stats, verified, replaced);
  const stoodIn = reportDraftLore(ctx, replaced, outcomes, added);
  // The ledger records one search per query: the walk's, then each verification search (its paraphrase).
  const searched = outcomes.flatMap((o) => (o.kind === 'verified' ? [o.verified.citation.text] : o.kind === 'unsupported' && o.searched ? [o.citation.text] : []));
  const queries = [...new Set([...walkQueries, ...searched])];
  // A note read only to verify a draft excerpt is consulted too (the capture lists every note read).
  const listed = new Set([...result.consulted_refs, ...result.followed_refs]);
  const consulted = [...result.consulted_refs];
  for (const t of trace) {
    const ref = formatRef(ctx.ns, traceNotePath(t.source_path));
    if (!listed.has(ref)) {
      listed.add(ref);
      consulted.push(ref);
    }
  }
  if (stats.excerpts_added === 0) {
    throw refuse(
      'no_lore_excerpts',
      `${file}: the traversal (queries: ${queries.map((q) => JSON.stringify(q)).join(', ')}) returned no lore excerpts under ${policy.allowed_prefixes.join(', ')}; a coordinator_scoped_retrieval packet without lore would be packet_only in disguise`,
      file,
      '/visible_context/source_excerpts',
    );
  }
  stats.trace_entries = trace.length;
  const capture: CaptureFragment = {
    mode: 'coordinator_scoped_retrieval',
    consulted_refs: consulted,
    followed_refs: result.followed_refs,
    research_trace: trace,
    research_trace_status: 'runner_captured',
    snapshot_id: result.snapshot_id,
    policy_receipt: result.policy_receipt,
  };
  if (draft.lore_access.research_instructions) {
    findings.push({
      code: 'research_instructions_dropped',
      severity: 'info',
      message: `${file}: /lore_access/research_instructions dropped: in coordinator_scoped_retrieval the responder does not research`,
      path: file,
      pointer: '/lore_access/research_instructions',
    });
  }
  // An excerpt left out as redundant grounds its requirement through the draft's own line: it counts as met.
  const unmet = reportUnmet(ctx, requirements, [...added, ...redundant], kept);
  return { excerpts: [...kept, ...added], replaced: stoodIn, added, labels, budget, unmet, capture, queries, researchInstructions: undefined, stats };
}

/**
 * The responder lane's excerpts: no lore is fetched; the draft's excerpts are kept (each guarded) and the
 * research instructions are the draft's, else {@link DEFAULT_RESEARCH_INSTRUCTIONS} (no hidden text).
 * @throws LoretraceError the guards' errors, `hidden_ref_in_output` in a research instruction.
 */
function responderExcerpts(ctx: BuildContext, guard: DraftGuard): LaneExcerpts {
  const { draft, omitted, file } = ctx;
  const stats = emptyStats();
  const excerpts = draft.visible_context.source_excerpts.slice();
  excerpts.forEach((ex, i) => guard.keptExcerpt(ex, i));
  stats.excerpts_kept = excerpts.length;
  const own = draft.lore_access.research_instructions;
  const researchInstructions = own && own.length > 0 ? own : [...DEFAULT_RESEARCH_INSTRUCTIONS];
  researchInstructions.forEach((r, i) => assertNoHiddenText(r, omitted, file, `/lore_access/research_instructions/${i}`, 'research instruction'));
  return { excerpts, replaced: [], added: [], labels: new Map(), budget: null, unmet: [], capture: null, queries: [], researchInstructions, stats };
}

/** Assembly step 1: `lore_access` in the draft's key order, then the schema's (`required_provenance: true`). */
function assembleLoreAccess(ctx: BuildContext, lane: RetrievalLane, researchInstructions: string[] | undefined): PacketLoreAccess {
  const loreValues: Obj = {
    mode: lane,
    allowed_scope: ctx.allowedScope,
    research_instructions: researchInstructions,
    traversal_policy: ctx.policy,
    required_provenance: true,
  };
  return ordered(ctx.draft.lore_access as unknown as Obj, loreValues, LORE_ACCESS_ORDER) as unknown as PacketLoreAccess;
}

/**
 * Assembly step 2: the prompt, merged into the draft's, never regenerated over it. The source section
 * keeps every draft line except the bullets of draft lore excerpts replaced by verified ones
 * (`prompt_lines_replaced`, listing them) and gains the added lore excerpts ({@link mergeSourceSection});
 * draft lines that contradict the packet as built are rewritten ({@link reconcileLaneLines},
 * `prompt_lines_rewritten`, listing old and new); then the `## Required Lore Research` section is kept or
 * rendered (responder lane, {@link researchPrompt}) or, in the coordinator lane, where the responder does
 * not research, reconciled with the lane ({@link coordinatorResearchSection}): its heading becomes
 * `## Using Retrieved Lore` and only its lines that contradict the lane (lookups, research tools, research
 * output the packet does not require) are rewritten or removed, each listed (`prompt_research_section_rewritten`);
 * every other line stays verbatim where the section was. No other draft line changes.
 */
function assemblePrompt(ctx: BuildContext, lane: RetrievalLane, lanes: LaneExcerpts, built: { fields: readonly string[]; packetId: string }): { prompt: string; localContext: string } {
  const { draft, file, findings } = ctx;
  const ownLocal = draft.visible_context.local_context_prompt;
  const draftRefIds = new Set(draft.visible_context.source_excerpts.map((ex) => ex.ref_id));
  const merged = mergeSourceSection(draft.packet_prompt_text, { replaced: lanes.replaced, added: lanes.added, labels: lanes.labels, localContext: ownLocal, draftRefIds });
  const { prompt: withSources, removed } = merged;
  const mergedLocal = merged.localContext ?? ownLocal;
  if (removed.length > 0) {
    const inLocal = mergedLocal !== ownLocal ? ' (the same lines of visible_context.local_context_prompt, which the prompt contains, were changed with them)' : '';
    findings.push({
      code: 'prompt_lines_replaced',
      severity: 'info',
      message: `${file}: ${removed.length} line${removed.length === 1 ? '' : 's'} of the prompt rendered draft lore excerpts that verified excerpts of their cited refs replace in the packet and ${removed.length === 1 ? 'was' : 'were'} removed${inLocal}: ${removed.map((l) => JSON.stringify(l)).join(', ')}`,
      path: file,
      pointer: '/packet_prompt_text',
    });
  }
  const research = lane === 'responder_scoped_repository_search';
  const laneLines = reconcileLaneLines(withSources, {
    repoAccess: research,
    draftFields: draft.output_contract.required_fields,
    fields: built.fields,
    draftPacketId: draft.packet_id,
    packetId: built.packetId,
    localContext: mergedLocal,
  });
  const { prompt: reconciled, rewritten } = laneLines;
  const localContext = laneLines.localContext ?? mergedLocal;
  if (rewritten.length > 0) {
    findings.push({
      code: 'prompt_lines_rewritten',
      severity: 'info',
      message: `${file}: ${rewritten.length} draft prompt line${rewritten.length === 1 ? '' : 's'} contradicted the packet as built and ${rewritten.length === 1 ? 'was' : 'were'} rewritten${localContext !== mergedLocal ? ' (the same lines of visible_context.local_context_prompt, which the prompt contains, were rewritten with them)' : ''}: ${rewritten.map((r) => `${JSON.stringify(r.from)} → ${JSON.stringify(r.to)} (${r.reason})`).join(', ')}`,
      path: file,
      pointer: '/packet_prompt_text',
    });
  }
  const required = requiredPromptLines(ctx, merged.inserted, reconciled, localContext, built.fields);
  if (research) return { prompt: assertMergeKept(ctx, reconciled, researchPrompt(ctx, reconciled, lanes.researchInstructions ?? []), required), localContext };
  const gone = researchSectionLines(reconciled);
  if (gone.length === 0) return { prompt: reconciled, localContext };
  const { lines: section, changes } = coordinatorResearchSection(gone, built.fields);
  findings.push({
    code: 'prompt_research_section_rewritten',
    severity: 'info',
    message: `${file}: the draft prompt's ${JSON.stringify(gone[0])} section (${gone.length} lines): in coordinator_scoped_retrieval the responder has no repository access and does not research, so ${changes.length === 1 ? '1 line that contradicts the lane was' : `${changes.length} lines that contradict the lane were`} changed${section.length === 0 ? ' and the section removed' : `; every other line is kept verbatim under ${JSON.stringify(LORE_USE_HEADING)}`}: ${changes.map((c) => `${JSON.stringify(c.from)} → ${c.to === null ? 'removed' : JSON.stringify(c.to)} (${c.reason})`).join(', ')}`,
    path: file,
    pointer: '/packet_prompt_text',
  });
  const after = applyResearchSection(reconciled, section.length === 0 ? null : section);
  return { prompt: assertMergeKept(ctx, reconciled, after, required), localContext };
}

/**
 * The prompt lines the research-section step must keep: the lines the validator or the responder needs
 * from the draft — each line of the local context (`prompt.missing_local_context`), the observed action's
 * lines (`prompt.missing_observed_action`), the action-label line (`Allowed action labels: …`), the
 * output-contract header and the line naming the required fields — and the lines of the excerpt
 * rendering the source merge just inserted (`inserted`, {@link mergeSourceSection}).
 */
function requiredPromptLines(ctx: BuildContext, inserted: readonly string[], merged: string, localContext: string, fields: readonly string[]): string[] {
  const observed = ctx.draft.visible_context.observed_event?.observable_action;
  const contract = merged.split('\n').filter((l) => /^(?:##\s+)?(?:Output contract|Allowed action labels)\b/i.test(l) || (fields.length > 0 && l.includes(fields.join(', '))));
  return [
    ...(localContext === '' ? [] : localContext.split('\n')),
    ...(typeof observed === 'string' && observed !== '' ? observed.split('\n') : []),
    ...contract,
    ...inserted,
  ].filter((l) => l.trim() !== '');
}

/**
 * Guard of the research-section step ({@link applyResearchSection}): `after` must keep every line of
 * `required` ({@link requiredPromptLines}) that `before` had. The step may only replace or remove the
 * section's own lines; if it would drop one of these, loretrace's merge (not the draft) is at fault, and
 * the build is refused rather than written with a prompt that lost its contract (hostile trial s8 §1).
 * @throws LoretraceError `prompt_merge_dropped_lines` (exit 1; `details.data.lines` lists them).
 */
function assertMergeKept(ctx: BuildContext, before: string, after: string, required: readonly string[]): string {
  const had = new Set(before.split('\n'));
  const kept = new Set(after.split('\n'));
  const lost = [...new Set(required)].filter((l) => had.has(l) && !kept.has(l));
  if (lost.length === 0) return after;
  throw new LoretraceError(
    'prompt_merge_dropped_lines',
    `${ctx.file}: loretrace's merge of the "## Required Lore Research" section would drop ${lost.length} line${lost.length === 1 ? '' : 's'} the packet needs (local context, observed action, action labels, output contract or the lore excerpts just inserted); this is a fault in loretrace's merge, not in the draft, so nothing is written: ${lost.map((l) => JSON.stringify(l)).join(', ')}`,
    { file: ctx.file, pointer: '/packet_prompt_text', expected: 'a research section that ends before the lines of the next draft section', data: { lines: lost } },
  );
}

/**
 * The responder lane's research section. A draft that already carries a `## Required Lore Research` section
 * naming every allowed_scope entry, every allowed prefix and every line of every research instruction
 * keeps it verbatim (it is the author's wording of the same research); otherwise loretrace's section
 * ({@link renderResearchSection}) is put in, and the draft section's lines it replaces are listed
 * (`prompt_research_section_replaced`).
 */
function researchPrompt(ctx: BuildContext, prompt: string, instructions: readonly string[]): string {
  const own = researchSectionLines(prompt);
  if (own.length > 0) {
    const text = own.join('\n');
    const needed = [...ctx.allowedScope, ...ctx.policy.allowed_prefixes, ...instructions.flatMap((i) => i.split('\n').map((l) => l.trim()))];
    if (needed.every((n) => n === '' || text.includes(n))) return prompt;
  }
  const rendered = applyResearchSection(prompt, renderResearchSection({ allowed_scope: ctx.allowedScope, traversal_policy: ctx.policy, research_instructions: instructions }));
  const kept = new Set(rendered.split('\n'));
  const gone = own.filter((l) => l.trim() !== '' && !kept.has(l));
  if (gone.length > 0) {
    ctx.findings.push({
      code: 'prompt_research_section_replaced',
      severity: 'info',
      message: `${ctx.file}: the draft prompt's "## Required Lore Research" section does not name every allowed_scope entry, allowed prefix and research instruction of the packet, so loretrace's section replaced it; replaced lines: ${gone.map((l) => JSON.stringify(l)).join(', ')}`,
      path: ctx.file,
      pointer: '/packet_prompt_text',
    });
  }
  return rendered;
}

/** `output_contract.required_fields` of the built packet: the responder lane adds the research output fields. */
function builtRequiredFields(draft: ResponderPacket, lane: RetrievalLane): string[] {
  const own = draft.output_contract.required_fields;
  return lane === 'responder_scoped_repository_search' ? [...own, ...RESEARCH_OUTPUT_FIELDS.filter((f) => !own.includes(f))] : [...own];
}

/** Lane names in packet ids: `loretrace-coordinator`, `loretrace-research`. */
const LANE_ID_SUFFIX: Record<RetrievalLane, string> = {
  coordinator_scoped_retrieval: 'loretrace-coordinator',
  responder_scoped_repository_search: 'loretrace-research',
};

/**
 * The built packet's `packet_id`: the draft's id (without a previous loretrace suffix, so a built packet
 * rebuilt does not stack suffixes) plus `.loretrace-<coordinator|research>.v<version>`. Deterministic.
 * Seed 002: a changed artifact is a new version, never the old one edited in place.
 * @throws LoretraceError `usage` (exit 2) when `version` is not an integer ≥ 1.
 */
export function builtPacketId(draftPacketId: string, lane: RetrievalLane, version = 1): string {
  if (!Number.isInteger(version) || version < 1) {
    throw refuse('usage', `packet version must be an integer ≥ 1 (got ${version})`, '<options>', undefined, undefined, 2);
  }
  const base = draftPacketId.replace(/\.loretrace-(?:coordinator|research)\.v\d+$/, '');
  return `${base}.${LANE_ID_SUFFIX[lane]}.v${version}`;
}

/**
 * The built packet's fresh `review` block (seed 001: a packet is a draft until a person accepts it): reviewer
 * `loretrace retrieve`, `accepted_for_sandbox_use: false`, no failure labels, and notes naming what
 * produced it — the draft's id and the lane, the policy receipt summary (rows per disposition), the vault
 * snapshot. The draft's own review notes describe another run and are not carried over.
 */
function freshReview(ctx: BuildContext, lane: RetrievalLane): ResponderPacket['review'] {
  const counts = new Map<string, number>();
  for (const row of ctx.compiled.receipt) counts.set(row.disposition, (counts.get(row.disposition) ?? 0) + 1);
  const summary = [...counts.entries()].sort((a, b) => codeUnitCompare(a[0], b[0])).map(([d, n]) => `${n} ${d}`).join(', ');
  return {
    reviewer: BUILT_REVIEWER,
    review_notes: [
      `Built by loretrace retrieve (${lane}) from draft packet ${ctx.draft.packet_id}; not yet reviewed by a person.`,
      `Policy receipt: ${ctx.compiled.receipt.length} clause rows (${summary || 'none'}).`,
      `Vault snapshot: ${ctx.index.namespace} ${ctx.index.snapshot_id}.`,
    ],
    accepted_for_sandbox_use: false,
    failure_labels: [],
  };
}

/**
 * Assembly step 3: the packet, in the draft's key order — a new `packet_id` ({@link builtPacketId}),
 * `review_status: draft`, `generation_lane: retrieval_augmented`, the new lore_access, the excerpts, the
 * output contract's required fields ({@link builtRequiredFields}), `no_repo_access` (false only for the
 * responder lane), the prompt and a fresh review block ({@link freshReview}).
 */
function assemblePacket(ctx: BuildContext, lane: RetrievalLane, lanes: LaneExcerpts, loreAccess: PacketLoreAccess, built: { fields: string[]; packetId: string; prompt: string; localContext: string }): ResponderPacket {
  const { draft } = ctx;
  const packetValues: Obj = {
    ...(draft as unknown as Obj),
    packet_id: built.packetId,
    review_status: 'draft',
    generation_lane: 'retrieval_augmented',
    lore_access: loreAccess,
    visible_context: { ...draft.visible_context, ...(built.localContext !== undefined ? { local_context_prompt: built.localContext } : {}), source_excerpts: lanes.excerpts },
    output_contract: { ...draft.output_contract, required_fields: built.fields },
    isolation_requirements: { ...draft.isolation_requirements, no_repo_access: lane !== 'responder_scoped_repository_search' },
    packet_prompt_text: built.prompt,
    review: freshReview(ctx, lane),
  };
  return ordered(draft as unknown as Obj, packetValues, []) as unknown as ResponderPacket;
}

/**
 * Last step: the packet must pass `validatePacket` and the capture fragment `validateCaptureFragment`;
 * returns the packet's report.
 * @throws LoretraceError `invalid_output` (nothing is written).
 */
function validateOutputs(file: string, packet: ResponderPacket, capture: CaptureFragment | null): ValidationReport {
  const validation = validatePacket(packet, { file: `${file} (built)` });
  if (!validation.valid) {
    throw refuse(
      'invalid_output',
      `${file}: the built packet would violate the responder packet contract, so nothing is written (${validation.errors.length} error${validation.errors.length === 1 ? '' : 's'}): ${summarizeErrors(validation.errors)}`,
      file,
      validation.errors[0]?.pointer,
      validation.errors,
    );
  }
  if (capture) {
    const fragmentReport = validateCaptureFragment(capture, { file: `${file} (capture fragment)` });
    if (!fragmentReport.valid) {
      throw refuse(
        'invalid_output',
        `${file}: the capture fragment would violate schemas/capture-fragment.schema.json, so nothing is written: ${summarizeErrors(fragmentReport.errors)}`,
        file,
        fragmentReport.errors[0]?.pointer,
        fragmentReport.errors,
      );
    }
  }
  return validation;
}

/**
 * Build a retrieval-augmented responder packet from a draft.
 *
 * `coordinator_scoped_retrieval`: compiles the policy (the draft's `lore_access.traversal_policy`, else
 * `options.policy`, else refuses with `no_policy`), runs `traverse` with {@link queriesFor}, keeps the
 * draft's non-lore excerpts, drops its lore excerpts (finding `draft_lore_excerpt_dropped`: lore must come
 * with a receipt), and adds the traversal's excerpts made compact, each naming the requirement it serves,
 * within the default excerpt budget (src/packet/requirements.ts; no duplicate source_ref+text, no duplicate
 * ref_id); sets `generation_lane: retrieval_augmented`, `lore_access` (mode, allowed_scope,
 * traversal_policy, `required_provenance: true`; research_instructions dropped), `no_repo_access: true`,
 * merges the lore excerpts into the prompt's source section ({@link mergeSourceSection}) and removes any
 * `## Required Lore Research` section. Returns the capture fragment.
 *
 * `responder_scoped_repository_search`: no lore is fetched; the draft's excerpts are kept (each lore one
 * must be in scope); sets `lore_access` (mode, allowed_scope, research_instructions — the draft's or
 * {@link DEFAULT_RESEARCH_INSTRUCTIONS} — traversal_policy, required_provenance), adds the research output
 * fields to `output_contract.required_fields`, `no_repo_access: false`, and keeps the draft's research
 * section or renders `## Required Lore Research` ({@link renderResearchSection}).
 *
 * Both lanes: a new `packet_id` ({@link builtPacketId}), `review_status: draft`, a fresh `review`; every
 * draft prompt line survives except replaced excerpt bullets and lines that contradict the packet as built
 * ({@link reconcileLaneLines}), each listed in a finding.
 *
 * `allowed_scope`: the draft's when it declares a lore scope (not `Packet-local excerpts only`), else
 * `options.allowedScope`, else the policy's `required_seed_refs` (else its `allowed_prefixes`). It is
 * passed to compilePolicy as the packet's scope (start points), with the draft's hidden_context_audit.
 *
 * Guarantees: every lore ref in the output (excerpts, allowed_scope, seeds) parses, is under an allowed
 * prefix and passes the policy's path check (hidden / future-era / denied refs never reach it); the
 * output passes `validatePacket`. Errors (LoretraceError codes): `invalid_draft` (the draft fails the
 * validator; `details.data.errors` lists them), `invalid_projected_context` (a violation in the parts read — `/context/local_agent_id`,
 * `/context/runtime_retrieval_requirements`, `/context/latent_pressure_requirements` — others become `projected_context_invalid` warnings), `projected_context_mismatch`
 * (its local agent is not the draft's responder), `no_policy` (exit 2), `bad_policy` and friends (from
 * compilePolicy), `ref_out_of_scope` (also a non-namespaced part naming a hidden or out-of-prefix vault
 * note), `hidden_ref_in_output` (a kept excerpt, allowed_scope entry, research instruction or query
 * contains an omitted ref or raw-state marker, {@link hiddenTextForm}), `duplicate_ref_id` (traversal vs
 * draft, or two kept draft excerpts), `no_lore_excerpts` (the traversal returned
 * nothing), `usage` (a `version` that is not an integer ≥ 1), `invalid_output` (should not happen; the
 * output is refused rather than returned).
 */
export async function buildPacket(index: VaultIndex, draftInput: unknown, options: BuildPacketOptions = {}): Promise<BuildPacketResult> {
  const file = options.file ?? '<draft>';
  const findings: Finding[] = [];
  const draft = checkDraft(draftInput, file);
  const projected = readProjectedContext(draft, options, findings);
  const lane = chooseLane(draft, options);
  const ctx = compileForDraft(index, draft, options, file, findings, choosePolicy(draft, options, lane, file, findings));
  reportOffSceneSeeds(ctx);
  const guard = guardDraft(ctx);
  const lanes = lane === 'coordinator_scoped_retrieval' ? await coordinatorExcerpts(ctx, guard, projected) : responderExcerpts(ctx, guard);
  const loreAccess = assembleLoreAccess(ctx, lane, lanes.researchInstructions);
  const fields = builtRequiredFields(draft, lane);
  const packetId = builtPacketId(draft.packet_id, lane, options.version);
  const { prompt, localContext } = assemblePrompt(ctx, lane, lanes, { fields, packetId });
  const packet = assemblePacket(ctx, lane, lanes, loreAccess, { fields, packetId, prompt, localContext });
  const validation = validateOutputs(file, packet, lanes.capture);
  return { lane, packet, capture: lanes.capture, queries: lanes.queries, findings, stats: lanes.stats, budget: lanes.budget, unmet_requirements: lanes.unmet, validation };
}

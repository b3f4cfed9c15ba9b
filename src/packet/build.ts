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
 * The prompt renderers ({@link renderSourceSection}, {@link renderResearchSection}) are exported so that a
 * reviewer (or a test) can re-render a packet's prompt and compare.
 */
import { LoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { isUnderPrefix, parseRef } from '../refs/ref.js';
import { checkPath, compilePolicy, scopeFolderNotes } from '../policy/compile.js';
import type { CompiledPolicy, PolicyReceiptRow } from '../policy/types.js';
import { traverse } from '../traversal/traverse.js';
import type {
  PacketLoreAccess,
  ProjectedLocalContext,
  ResearchTraceEntry,
  ResponderPacket,
  SourceExcerpt,
  TraversalPolicy,
  ValidationIssue,
  ValidationReport,
} from '../contracts/types.js';
import { validateCaptureFragment, validatePacket, validateProjectedContext } from '../contracts/validate.js';
import { hiddenTextForm, hiddenTextIn } from '../contracts/rules.js';

// The hidden-text comparison lives in rules.ts (the validator's prompt rules use it too); re-exported here.
export { hiddenTextForm, hiddenTextIn };

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
  /** Refuse a policy with advisory (unenforced) clauses (`--strict-policy`, passed to compilePolicy). */
  strictPolicy?: boolean;
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
  /** Queries the traversal ran (coordinator lane), in order; [] for the responder lane. */
  queries: string[];
  /** What changed that a reader should know (draft lore excerpts replaced, prompt lines rewritten, ...). */
  findings: Finding[];
  /**
   * Counts: draft excerpts kept, lore excerpts added, draft lore excerpts dropped (replaced by traced
   * ones), traversal excerpts withheld (they link to hidden lore or contain an omitted ref or a raw-state
   * marker), trace entries in the capture fragment.
   */
  stats: { excerpts_kept: number; excerpts_added: number; excerpts_dropped: number; excerpts_withheld: number; trace_entries: number };
  /** The validator's report on the output (always valid). */
  validation: ValidationReport;
}

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------
// Prompt rendering
// ---------------------------------------------------------------------------------------------------------

/**
 * How a prompt lays out its sections. `markdown`: `## Heading` lines (Ghostlight's research packets);
 * `plain`: `Heading:` lines (Ghostlight's packet_only packets). A prompt with any line starting `## ` is
 * markdown.
 */
export type PromptStyle = 'markdown' | 'plain';

/** Detect the {@link PromptStyle} of a prompt. */
export function promptStyle(prompt: string): PromptStyle {
  return /^## /m.test(prompt) ? 'markdown' : 'plain';
}

const SOURCE_HEADER_MD = /^##\s+Source (?:Excerpts|Constraints)\s*$/i;
const SOURCE_HEADER_PLAIN = /^Source (?:constraints|excerpts):\s*$/i;
const OUTPUT_HEADER_MD = /^##\s+Output Contract\s*$/i;
const OUTPUT_HEADER_PLAIN = /^Output contract:\s*$/i;
const RESEARCH_HEADER = /^##\s+Required Lore Research\s*$/;
const BULLET_LINE = /^(?:- |  )/;
/**
 * Everything some reader treats as a line break: CRLF, LF, CR, and the separators Python's
 * `str.splitlines()` also splits on (VT, FF, FS, GS, RS, NEL, U+2028, U+2029).
 */
const LINE_BREAKS = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;
/** Line breaks other than LF: inside an excerpt they would start a prompt line the renderer cannot indent. */
const OTHER_LINE_BREAK = /[\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * Render the source-constraint section body: one bullet per excerpt, in order.
 * - markdown style: `- <ref_id>: <text>` (Ghostlight research packets' `## Source Excerpts`);
 * - plain style: `- <text>` (Ghostlight packet_only packets' `Source constraints:`).
 * A multi-line text continues on lines indented by two spaces (an empty line becomes `"  "`), so the
 * section is a single run of `- ` / two-space lines and {@link parseSourceSection} recovers each text exactly.
 */
export function renderSourceSection(excerpts: readonly SourceExcerpt[], style: PromptStyle): string[] {
  const out: string[] = [];
  for (const ex of excerpts) {
    const lines = ex.text.split('\n');
    const first = style === 'markdown' ? `- ${ex.ref_id}: ${lines[0] ?? ''}` : `- ${lines[0] ?? ''}`;
    out.push(first);
    for (const l of lines.slice(1)) out.push(`  ${l}`);
  }
  return out;
}

/** Line index of the first line matching `re` at or after `from`, or -1. */
function findLine(lines: readonly string[], re: RegExp, from = 0): number {
  for (let i = from; i < lines.length; i++) if (re.test(lines[i] as string)) return i;
  return -1;
}

/** End (exclusive) of the bullet run that starts right after `header`. */
function bulletRunEnd(lines: readonly string[], header: number): number {
  let end = header + 1;
  while (end < lines.length && BULLET_LINE.test(lines[end] as string)) end++;
  return end;
}

/**
 * Read back the source section of a prompt: the texts of its bullets (and, in markdown style, their
 * ref_ids), or null when the prompt has no source section. Inverse of {@link renderSourceSection} for text
 * without a `": "` in a markdown ref_id.
 */
export function parseSourceSection(prompt: string): { style: PromptStyle; items: { ref_id: string | null; text: string }[] } | null {
  const lines = prompt.split('\n');
  let header = findLine(lines, SOURCE_HEADER_MD);
  let style: PromptStyle = 'markdown';
  if (header < 0) {
    header = findLine(lines, SOURCE_HEADER_PLAIN);
    style = 'plain';
  }
  if (header < 0) return null;
  const end = bulletRunEnd(lines, header);
  const items: { ref_id: string | null; text: string }[] = [];
  for (let i = header + 1; i < end; i++) {
    const line = lines[i] as string;
    if (line.startsWith('- ')) {
      let body = line.slice(2);
      let refId: string | null = null;
      if (style === 'markdown') {
        const colon = body.indexOf(': ');
        if (colon > 0) {
          refId = body.slice(0, colon);
          body = body.slice(colon + 2);
        }
      }
      items.push({ ref_id: refId, text: body });
    } else {
      const last = items[items.length - 1];
      if (last) last.text += '\n' + line.slice(2);
    }
  }
  return { style, items };
}

/**
 * Replace (or insert) the source-constraint section of `prompt` so that it lists exactly `excerpts`.
 *
 * Rules: the section is the header line (`## Source Excerpts` / `## Source Constraints`, or
 * `Source constraints:` / `Source excerpts:`) and the run of bullet lines right after it (lines starting
 * `- ` or two spaces); everything else in the prompt is kept byte for byte. Without a section, one is
 * inserted in the prompt's style before the output-contract header (`## Output Contract` /
 * `Output contract:`), else appended at the end, separated by one blank line. With no excerpts, the
 * section is removed. Returns the new prompt and the old bullet lines that did not survive (reported as a
 * finding, never dropped silently).
 */
export function applySourceSection(prompt: string, excerpts: readonly SourceExcerpt[]): { prompt: string; removed: string[] } {
  const lines = prompt.split('\n');
  let header = findLine(lines, SOURCE_HEADER_MD);
  let style: PromptStyle;
  if (header >= 0) style = 'markdown';
  else {
    header = findLine(lines, SOURCE_HEADER_PLAIN);
    style = header >= 0 ? 'plain' : promptStyle(prompt);
  }
  const body = renderSourceSection(excerpts, style);
  if (header >= 0) {
    const end = bulletRunEnd(lines, header);
    const old = lines.slice(header + 1, end);
    const kept = new Set(body);
    const removed = old.filter((l) => !kept.has(l));
    if (excerpts.length === 0) {
      // Drop the header, its bullets and one separating blank line after them.
      const after = end < lines.length && lines[end] === '' ? end + 1 : end;
      lines.splice(header, after - header);
    } else {
      lines.splice(header + 1, end - header - 1, ...body);
    }
    return { prompt: lines.join('\n'), removed };
  }
  if (excerpts.length === 0) return { prompt, removed: [] };
  const headerLine = style === 'markdown' ? '## Source Excerpts' : 'Source constraints:';
  const block = [headerLine, ...body];
  const output = findLine(lines, style === 'markdown' ? OUTPUT_HEADER_MD : OUTPUT_HEADER_PLAIN);
  if (output >= 0) {
    lines.splice(output, 0, ...block, '');
    return { prompt: lines.join('\n'), removed: [] };
  }
  const trimmed = prompt.replace(/\n+$/, '');
  return { prompt: `${trimmed}\n\n${block.join('\n')}`, removed: [] };
}

/** What the `## Required Lore Research` section needs. */
export interface ResearchSectionInput {
  allowed_scope: readonly string[];
  traversal_policy: TraversalPolicy;
  research_instructions: readonly string[];
}

/** The search proxy's tools as the prompt names them (src/proxy/tools.ts TOOL_NAMES, same order). */
export const PROXY_TOOLS: readonly (readonly [string, string])[] = [
  ['lore_search', 'find refs by words'],
  ['lore_read', 'exact lines with their provenance'],
  ['lore_links', 'the links of an admitted note'],
  ['lore_follow', 'follow a link inside the policy'],
  ['research_status', 'what you consulted and the budgets left'],
];

/** Output fields a research-enabled responder must add (seed 001, Output Captures). */
export const RESEARCH_OUTPUT_FIELDS: readonly string[] = ['consulted_refs', 'followed_refs', 'research_trace', 'research_summary'];

/**
 * Render the `## Required Lore Research` section (responder_scoped_repository_search, seed 001: "The packet
 * must include a Required Lore Research section, allowed_scope, and research_instructions"): what to do,
 * the seed scope (every allowed_scope entry), the traversal policy (depth, every allowed prefix, seeds,
 * link classes, stop conditions), the research instructions, and how to reach the loretrace search proxy
 * (`loretrace serve --lore <vault> --packet <packet.json> --ledger <ledger.jsonl> --mcp`, or
 * `--http 127.0.0.1:<port>` instead of `--mcp`; src/cli/commands/serve.ts). Empty lists render as `- (none)`;
 * a multi-line item continues on lines indented two spaces deeper (line breaks: {@link LINE_BREAKS}), so
 * no item starts a prompt line of its own. Returns lines, the first being the heading.
 */
export function renderResearchSection(input: ResearchSectionInput): string[] {
  // A multi-line item continues on lines indented two spaces deeper, so no item can start a prompt line
  // of its own (a `## Output Contract` inside a stop condition stays inside its bullet, and the section's
  // end stays where applyResearchSection looks for it: a second run gives the same prompt).
  const list = (items: readonly string[], indent = ''): string[] =>
    items.length === 0
      ? [`${indent}- (none)`]
      : items.flatMap((s) => s.split(LINE_BREAKS).map((l, i) => (i === 0 ? `${indent}- ${l}` : `${indent}  ${l}`)));
  const tp = input.traversal_policy;
  return [
    '## Required Lore Research',
    'Before answering, consult the seed research scope below and follow relevant links only within the traversal policy.',
    'Use what you find to constrain behavior, affordances, institutions, vocabulary, material stakes, territory and social pressure. Do not use research to learn hidden character state, author-only answers or future branches.',
    'When a source contradicts this packet, follow the packet for what your character knows and name the contradiction in unresolved_hooks.',
    `Add ${RESEARCH_OUTPUT_FIELDS.join(', ')} to your JSON object; an answer with no consulted refs is a failed research-enabled response.`,
    '',
    'Seed research scope:',
    ...list(input.allowed_scope),
    '',
    'Traversal policy:',
    `- Max link depth: ${tp.max_link_depth}`,
    '- Allowed prefixes:',
    ...list(tp.allowed_prefixes, '  '),
    '- Required seed refs:',
    ...list(tp.required_seed_refs, '  '),
    '- Follow link classes:',
    ...list(tp.follow_link_classes, '  '),
    '- Stop conditions:',
    ...list(tp.stop_conditions, '  '),
    '',
    'Research instructions:',
    ...list(input.research_instructions),
    '',
    'Lore search proxy:',
    '- Your only lore access is the loretrace search proxy. It enforces this traversal policy, refuses anything outside it, and records every lookup as a runner_captured research trace entry.',
    '- The runner starts it with `loretrace serve --lore <vault> --packet <this packet> --ledger <ledger.jsonl> --mcp` (MCP over stdio), or with `--http 127.0.0.1:<port>` instead of `--mcp` (loopback HTTP; port 0 picks a free one).',
    `- Its tools: ${PROXY_TOOLS.map((t) => `${t[0]} (${t[1]})`).join(', ')}.`,
    '- Cite each source you use by the ref, chunk and line range the proxy returned.',
  ];
}

/**
 * Replace (or insert) the `## Required Lore Research` section. The section runs from its heading to the
 * next `#`/`##` heading or the end of the prompt. Without one: in a markdown prompt it goes right before
 * the first `## ` heading; in a plain prompt it is appended at the end (so its end stays unambiguous).
 */
export function applyResearchSection(prompt: string, section: readonly string[] | null): string {
  const lines = prompt.split('\n');
  const at = findLine(lines, RESEARCH_HEADER);
  if (at >= 0) {
    let end = at + 1;
    while (end < lines.length && !/^#{1,2} /.test(lines[end] as string)) end++;
    // keep one blank line before the next heading
    let stop = end;
    while (stop > at + 1 && lines[stop - 1] === '') stop--;
    if (section === null) {
      lines.splice(at, end - at);
      return lines.join('\n');
    }
    lines.splice(at, stop - at, ...section);
    return lines.join('\n');
  }
  if (section === null) return prompt;
  if (promptStyle(prompt) === 'markdown') {
    const first = findLine(lines, /^## /);
    lines.splice(first, 0, ...section, '');
    return lines.join('\n');
  }
  return `${prompt.replace(/\n+$/, '')}\n\n${section.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------------------

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
const READ_POINTERS = ['/context/local_agent_id', '/context/runtime_retrieval_requirements'];

function refuse(code: string, message: string, file: string, pointer: string | undefined, errors?: ValidationIssue[], exitCode: 1 | 2 = 1): LoretraceError {
  return new LoretraceError(code, message, {
    file,
    ...(pointer !== undefined ? { pointer } : {}),
    ...(errors ? { data: { errors } } : {}),
  }, exitCode);
}

function summarizeErrors(errors: readonly ValidationIssue[]): string {
  const shown = errors.slice(0, 3).map((e) => `${e.pointer || '/'} [${e.rule}] ${e.message}`);
  return shown.join('; ') + (errors.length > 3 ? `; and ${errors.length - 3} more` : '');
}

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

/** `Namespace:` prefix that is not a URL scheme (`https://`). */
const NAMESPACED = /^([A-Za-z0-9][A-Za-z0-9_.-]*):(?!\/\/)/;

/**
 * Is `sourceRef` a lore ref? Yes when it starts with `<namespace>:`. A ref with another namespace is
 * returned as `foreign` (it cannot be checked against this vault, so it may not reach the packet).
 */
function loreKind(sourceRef: string, namespace: string): 'lore' | 'foreign' | 'other' {
  const m = NAMESPACED.exec(sourceRef);
  if (!m) return 'other';
  return m[1] === namespace ? 'lore' : 'foreign';
}

/**
 * The parts of a source_ref: Ghostlight joins several sources with `"; "`
 * (`AetheriaLore:…/Aya Collective.md; agents.sella_ren.memories.memory-care-is-capacity`); any `;` splits
 * (white space after it belongs to the separator). Each part is classified by {@link loreKind} after
 * NFKC, dropping format characters (zero-width, bidi) and trimming, so `" FixtureLore:…"` or
 * `"\u200bFixtureLore:…"` is still a lore part (and then fails to parse as a ref: refused, never kept as
 * non-lore). The excerpt is `foreign` when any part is, else `lore` when any part is. `lore` lists the
 * lore parts as written; `other` the remaining parts.
 */
function sourceParts(sourceRef: string, namespace: string): { kind: 'lore' | 'foreign' | 'other'; lore: string[]; other: string[] } {
  const parts = sourceRef.split(/;[ \t]*/);
  const kinds = parts.map((p) => loreKind(p.normalize('NFKC').replace(/\p{Cf}/gu, '').trim(), namespace));
  const kind = kinds.includes('foreign') ? 'foreign' : kinds.includes('lore') ? 'lore' : 'other';
  return { kind, lore: parts.filter((_, i) => kinds[i] === 'lore'), other: parts.filter((_, i) => kinds[i] === 'other') };
}

/**
 * The vault path a non-namespaced source part names, or null. The part is read as a vault path: its
 * `#fragment` dropped, NFC, a leading `<namespace>/` dropped (verify-trace tolerates that form too). It
 * names lore when it is a note of the snapshot or lies under a hidden rule's prefix, compared ignoring
 * case (Obsidian resolves names case-insensitively). `World/Pre-Elysium/Author Notes/Brinefall Truth.md`
 * in a draft's source_ref is a hidden ref even without `FixtureLore:` in front.
 */
function bareVaultPath(part: string, compiled: CompiledPolicy, namespace: string, notesByLower: ReadonlyMap<string, string>): { path: string; note: boolean; hiddenBy?: string } | null {
  let path = part.trim().normalize('NFC');
  const hash = path.indexOf('#');
  if (hash >= 0) path = path.slice(0, hash);
  if (path.startsWith(`${namespace}/`)) path = path.slice(namespace.length + 1);
  path = path.replace(/^\.\//, '');
  if (path === '') return null;
  const note = compiled.notes.has(path) ? path : notesByLower.get(path.toLowerCase());
  if (note !== undefined) return { path: note, note: true };
  const lower = path.toLowerCase();
  const folder = lower.endsWith('/') ? lower : `${lower}/`;
  const rule = compiled.hidden.find((h) => isUnderPrefix(lower, h.prefix.toLowerCase()) || isUnderPrefix(folder, h.prefix.toLowerCase()));
  return rule ? { path, note: false, hiddenBy: `${rule.prefix}, ${rule.pointer}` } : null;
}

/** Refuse (`hidden_ref_in_output`) a string the builder would write when it contains hidden text. */
function assertNoHiddenText(text: string, omittedRefs: readonly string[], file: string, pointer: string, what: string): void {
  const found = hiddenTextIn(text, omittedRefs);
  if (found !== null) {
    throw refuse(
      'hidden_ref_in_output',
      `${file}: ${pointer} (${what}) contains ${found}; expected no hidden_context_audit.omitted_context_refs entry and no raw-state marker (compared ignoring case, white space runs, format characters and compatibility forms)`,
      file,
      pointer,
    );
  }
}

/**
 * Check that a lore ref may reach a packet: it parses, lies under an allowed prefix (whole segments),
 * and the compiled policy's path check passes (not hidden, not future-era, not denied). With `folderOk`
 * (allowed_scope entries) a folder ref `Namespace:folder/` passes when compilePolicy would make start
 * points of it ({@link scopeFolderNotes}). Throws `ref_out_of_scope` naming the pointer otherwise.
 */
function assertInScope(ref: string, compiled: CompiledPolicy, namespace: string, file: string, pointer: string, declared: readonly string[], folderOk = false): void {
  let path: string;
  let folder = false;
  try {
    const parsed = parseRef(ref, { namespace, label: pointer });
    path = parsed.path;
    folder = folderOk && parsed.is_prefix;
  } catch (e) {
    throw refuse('ref_out_of_scope', `${file}: ${pointer} ${JSON.stringify(ref)} is not a ref of vault ${namespace}: ${(e as Error).message}`, file, pointer);
  }
  if (!compiled.allowed_prefixes.some((p) => isUnderPrefix(path, p))) {
    throw refuse(
      'ref_out_of_scope',
      `${file}: ${pointer} ${JSON.stringify(ref)} is outside allowed_prefixes (${declared.join(', ')})`,
      file,
      pointer,
    );
  }
  const check = folder ? scopeFolderNotes(compiled, path) : checkPath(compiled, path);
  if (!check.ok) {
    throw refuse('ref_out_of_scope', `${file}: ${pointer} ${JSON.stringify(ref)} may not reach a packet: ${check.reason} (${check.detail})`, file, pointer);
  }
}

/**
 * Why a traversal excerpt may not reach the packet even though its note may be consulted, or null:
 * a link on its lines resolves to a note the policy hides (`hidden_ref`) — the link text would name
 * hidden lore —, or its text (or its trace entry's `used_for`, which quotes the link that reached it)
 * contains an entry of `hidden_context_audit.omitted_context_refs` or a raw-state marker (the validator's
 * `prompt.hidden_ref` / `prompt.raw_state_marker`, compared in {@link hiddenTextForm}), or its text
 * contains a line break other than LF (CR, VT, FF, FS/GS/RS, NEL, U+2028, U+2029: Python's
 * `splitlines()` breaks there, so vault text could start its own prompt line, e.g. a heading).
 */
function withholdReason(
  ex: SourceExcerpt,
  trace: ResearchTraceEntry | undefined,
  draft: ResponderPacket,
  compiled: CompiledPolicy,
  index: VaultIndex,
): string | null {
  if (trace) {
    for (const link of index.links) {
      if (link.source_path !== trace.source_path || link.line < trace.line_start || link.line > trace.line_end) continue;
      const r = link.resolution;
      if (r.status !== 'resolved' && r.status !== 'ambiguous' && r.status !== 'broken_fragment') continue;
      const check = checkPath(compiled, r.path);
      if (!check.ok && check.reason === 'hidden_ref') {
        return `line ${link.line} links ${link.raw} to hidden lore (${check.detail})`;
      }
    }
  }
  const omitted = draft.hidden_context_audit.omitted_context_refs;
  const inText = hiddenTextIn(ex.text, omitted);
  if (inText !== null) return `its text contains ${inText}`;
  if (trace) {
    const inUse = hiddenTextIn(trace.used_for, omitted);
    if (inUse !== null) return `its trace entry's used_for ${JSON.stringify(trace.used_for)} contains ${inUse}`;
  }
  const brk = OTHER_LINE_BREAK.exec(ex.text);
  if (brk) {
    return `its text contains U+${(brk[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, a line break to some readers, which would let lore start a prompt line of its own`;
  }
  return null;
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

/**
 * Build a retrieval-augmented responder packet from a draft.
 *
 * `coordinator_scoped_retrieval`: compiles the policy (the draft's `lore_access.traversal_policy`, else
 * `options.policy`, else refuses with `no_policy`), runs `traverse` with {@link queriesFor}, keeps the
 * draft's non-lore excerpts, drops its lore excerpts (finding `draft_lore_excerpt_dropped`: lore must come
 * with a receipt), appends the traversal's lore excerpts (no duplicate source_ref+text, no duplicate
 * ref_id), sets `generation_lane: retrieval_augmented`, `lore_access` (mode, allowed_scope,
 * traversal_policy, `required_provenance: true`; research_instructions dropped), `no_repo_access: true`,
 * re-renders the prompt's source section from the excerpts ({@link applySourceSection}) and removes any
 * `## Required Lore Research` section. Returns the capture fragment.
 *
 * `responder_scoped_repository_search`: no lore is fetched; the draft's excerpts are kept (each lore one
 * must be in scope); sets `lore_access` (mode, allowed_scope, research_instructions — the draft's or
 * {@link DEFAULT_RESEARCH_INSTRUCTIONS} — traversal_policy, required_provenance), adds the research output
 * fields to `output_contract.required_fields`, `no_repo_access: false`, and renders
 * `## Required Lore Research` ({@link renderResearchSection}).
 *
 * `allowed_scope`: the draft's when it declares a lore scope (not `Packet-local excerpts only`), else
 * `options.allowedScope`, else the policy's `required_seed_refs` (else its `allowed_prefixes`). It is
 * passed to compilePolicy as the packet's scope (start points), with the draft's hidden_context_audit.
 *
 * Guarantees: every lore ref in the output (excerpts, allowed_scope, seeds) parses, is under an allowed
 * prefix and passes the policy's path check (hidden / future-era / denied refs never reach it); the
 * output passes `validatePacket`. Errors (LoretraceError codes): `invalid_draft` (the draft fails the
 * validator; `details.data.errors` lists them), `invalid_projected_context` (a violation in the parts read — `/context/local_agent_id`,
 * `/context/runtime_retrieval_requirements` — others become `projected_context_invalid` warnings), `projected_context_mismatch`
 * (its local agent is not the draft's responder), `no_policy` (exit 2), `bad_policy` and friends (from
 * compilePolicy), `ref_out_of_scope` (also a non-namespaced part naming a hidden or out-of-prefix vault
 * note), `hidden_ref_in_output` (a kept excerpt, allowed_scope entry, research instruction or query
 * contains an omitted ref or raw-state marker, {@link hiddenTextForm}), `duplicate_ref_id` (traversal vs
 * draft, or two kept draft excerpts), `no_lore_excerpts` (the traversal returned
 * nothing), `invalid_output` (should not happen; the output is refused rather than returned).
 */
export async function buildPacket(index: VaultIndex, draftInput: unknown, options: BuildPacketOptions = {}): Promise<BuildPacketResult> {
  const file = options.file ?? '<draft>';
  const ns = index.namespace;
  const findings: Finding[] = [];

  const draftReport = validatePacket(draftInput, { file });
  // Repeated ref_ids are judged on the excerpts the output keeps (`duplicate_ref_id` below, a more precise
  // message): a draft lore excerpt the coordinator lane drops may share its ref_id with a kept one.
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
  const draft = structuredClone(draftInput) as ResponderPacket;

  let projected: ProjectedLocalContext | undefined;
  if (options.projectedContext !== undefined) {
    const pcFile = options.projectedContextFile ?? '<projected-context>';
    const pcReport = validateProjectedContext(options.projectedContext, { file: pcFile });
    // Only the parts the builder reads must be valid; other violations are reported, not fatal (real
    // Ghostlight projected contexts carry e.g. an array `projection_controls` the schema types as object).
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
        message: `${pcFile}: ${e.pointer} [${e.rule}] ${e.message} (not read by the builder: only /context/local_agent_id and /context/runtime_retrieval_requirements are)`,
        path: pcFile,
        pointer: e.pointer,
      });
    }
    projected = options.projectedContext as ProjectedLocalContext;
    if (projected.context.local_agent_id !== draft.responder_agent_id) {
      throw refuse(
        'projected_context_mismatch',
        `${pcFile}: /context/local_agent_id is ${JSON.stringify(projected.context.local_agent_id)} but the draft's responder_agent_id is ${JSON.stringify(draft.responder_agent_id)}; expected the projected context of the same responder`,
        pcFile,
        '/context/local_agent_id',
      );
    }
  }

  const draftMode = draft.lore_access.mode;
  const lane: RetrievalLane = options.lane ?? (draftMode === 'responder_scoped_repository_search' ? draftMode : 'coordinator_scoped_retrieval');

  // Policy: the draft's, else --policy, else refuse.
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

  const allowedScope = retrievalScope(draft.lore_access, policy, options.allowedScope);
  const compiled = compilePolicy(policy, {
    index,
    packet: { lore_access: { allowed_scope: allowedScope }, hidden_context_audit: draft.hidden_context_audit },
    strict: options.strictPolicy ?? false,
    pointerBase: policyPointerBase,
    file: policyPointerBase === '' ? (options.policyFile ?? '<policy>') : file,
  });
  const omitted = draft.hidden_context_audit.omitted_context_refs;
  const notesByLower = new Map<string, string>();
  for (const p of [...compiled.notes.keys()].sort(codeUnitCompare)) if (!notesByLower.has(p.toLowerCase())) notesByLower.set(p.toLowerCase(), p);
  /**
   * Every lore part of a ref-like string must be in scope, and a non-namespaced part that names a vault
   * note (or a hidden folder) is held to the same rule: hidden and out-of-prefix lore never reaches the
   * packet under another spelling.
   */
  const assertRefLike = (value: string, pointer: string, foreignMessage: boolean, folderOk = false): void => {
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
  };
  allowedScope.forEach((s, i) => {
    assertRefLike(s, `/lore_access/allowed_scope/${i}`, false, true);
    assertNoHiddenText(s, omitted, file, `/lore_access/allowed_scope/${i}`, 'allowed_scope entry');
  });
  policy.required_seed_refs.forEach((s, i) => assertInScope(s, compiled, ns, file, `${policyPointerBase}/required_seed_refs/${i}`, policy.allowed_prefixes));
  /** A draft excerpt the output keeps: its refs in scope, no hidden text in any field, a unique ref_id. */
  const keptDraftIds = new Map<string, number>();
  const assertKeptDraftExcerpt = (ex: SourceExcerpt, i: number): void => {
    const pointer = `/visible_context/source_excerpts/${i}`;
    assertRefLike(ex.source_ref, `${pointer}/source_ref`, true);
    assertNoHiddenText(ex.ref_id, omitted, file, `${pointer}/ref_id`, 'excerpt ref_id');
    assertNoHiddenText(ex.source_ref, omitted, file, `${pointer}/source_ref`, 'excerpt source_ref');
    assertNoHiddenText(ex.text, omitted, file, `${pointer}/text`, 'excerpt text');
    const first = keptDraftIds.get(ex.ref_id);
    if (first !== undefined) {
      throw refuse('duplicate_ref_id', `${file}: ${pointer}/ref_id ${JSON.stringify(ex.ref_id)} repeats /visible_context/source_excerpts/${first}/ref_id; expected unique ref_ids (the prompt and the responder cite excerpts by ref_id)`, file, `${pointer}/ref_id`);
    }
    keptDraftIds.set(ex.ref_id, i);
  };

  const draftExcerpts = draft.visible_context.source_excerpts;
  let excerpts: SourceExcerpt[];
  let capture: CaptureFragment | null = null;
  let queries: string[] = [];
  const stats = { excerpts_kept: 0, excerpts_added: 0, excerpts_dropped: 0, excerpts_withheld: 0, trace_entries: 0 };
  let researchInstructions: string[] | undefined;

  if (lane === 'coordinator_scoped_retrieval') {
    excerpts = [];
    draftExcerpts.forEach((ex, i) => {
      const { kind } = sourceParts(ex.source_ref, ns);
      const pointer = `/visible_context/source_excerpts/${i}`;
      if (kind === 'other') {
        assertKeptDraftExcerpt(ex, i);
        excerpts.push(ex);
        return;
      }
      if (kind === 'foreign') {
        throw refuse('ref_out_of_scope', `${file}: ${pointer}/source_ref ${JSON.stringify(ex.source_ref)} names another lore namespace than ${ns}; it cannot be checked against this vault`, file, `${pointer}/source_ref`);
      }
      stats.excerpts_dropped += 1;
      findings.push({
        code: 'draft_lore_excerpt_dropped',
        severity: 'info',
        message: `${file}: ${pointer} (${JSON.stringify(ex.ref_id)}, ${JSON.stringify(ex.source_ref)}) was replaced by the traversal's excerpts: lore excerpts in a coordinator_scoped_retrieval packet come with a runner_captured trace entry`,
        path: file,
        pointer,
      });
    });
    stats.excerpts_kept = excerpts.length;
    queries = queriesFor(draft, projected);
    // Queries are written into every trace entry of the capture fragment: no hidden text in them.
    (projected?.context?.runtime_retrieval_requirements ?? []).forEach((r, i) => {
      assertNoHiddenText(`${r.trigger}: ${r.compact_fact}`, omitted, options.projectedContextFile ?? '<projected-context>', `/context/runtime_retrieval_requirements/${i}`, 'a traversal query, written into the capture fragment');
    });
    assertNoHiddenText(draft.visible_context.observed_event.observable_action, omitted, file, '/visible_context/observed_event/observable_action', 'a traversal query, written into the capture fragment');
    const result = await traverse(index, compiled, { queries });
    const seen = new Set(excerpts.map((e) => `${e.source_ref}\u0000${e.text}`));
    const ids = new Set(excerpts.map((e) => e.ref_id));
    const keptTrace: ResearchTraceEntry[] = [];
    result.source_excerpts.forEach((ex, i) => {
      assertInScope(ex.source_ref, compiled, ns, 'traversal result', `/source_excerpts/${i}/source_ref`, policy.allowed_prefixes);
      const trace = result.research_trace[i];
      const withheld = withholdReason(ex, trace, draft, compiled, index);
      if (withheld !== null) {
        stats.excerpts_withheld += 1;
        findings.push({
          code: 'excerpt_withheld',
          severity: 'warning',
          message: `${ex.source_ref} (${ex.ref_id}) was consulted but not put in the packet, and its trace entry is left out of the capture: ${withheld}`,
          path: ex.source_ref,
        });
        return;
      }
      if (trace) keptTrace.push(trace);
      const key = `${ex.source_ref}\u0000${ex.text}`;
      if (seen.has(key)) return;
      if (ids.has(ex.ref_id)) {
        const at = keptDraftIds.get(ex.ref_id);
        const pointer = at !== undefined ? `/visible_context/source_excerpts/${at}/ref_id` : '/visible_context/source_excerpts';
        throw refuse('duplicate_ref_id', `${file}: the traversal's excerpt ref_id ${JSON.stringify(ex.ref_id)} (${ex.source_ref}) is already used by ${pointer}; rename the draft's excerpt`, file, pointer);
      }
      seen.add(key);
      ids.add(ex.ref_id);
      excerpts.push({ ref_id: ex.ref_id, source_ref: ex.source_ref, text: ex.text });
      stats.excerpts_added += 1;
    });
    result.research_trace.forEach((t, i) => assertInScope(t.source_ref, compiled, ns, 'traversal result', `/research_trace/${i}/source_ref`, policy.allowed_prefixes));
    result.consulted_refs.forEach((r, i) => assertInScope(r, compiled, ns, 'traversal result', `/consulted_refs/${i}`, policy.allowed_prefixes));
    result.followed_refs.forEach((r, i) => assertInScope(r, compiled, ns, 'traversal result', `/followed_refs/${i}`, policy.allowed_prefixes));
    for (const t of result.research_trace.slice(result.source_excerpts.length)) keptTrace.push(t);
    if (stats.excerpts_added === 0) {
      throw refuse(
        'no_lore_excerpts',
        `${file}: the traversal (queries: ${queries.map((q) => JSON.stringify(q)).join(', ')}) returned no lore excerpts under ${policy.allowed_prefixes.join(', ')}; a coordinator_scoped_retrieval packet without lore would be packet_only in disguise`,
        file,
        '/visible_context/source_excerpts',
      );
    }
    stats.trace_entries = keptTrace.length;
    capture = {
      mode: 'coordinator_scoped_retrieval',
      consulted_refs: result.consulted_refs,
      followed_refs: result.followed_refs,
      research_trace: keptTrace,
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
  } else {
    excerpts = draftExcerpts.slice();
    excerpts.forEach((ex, i) => assertKeptDraftExcerpt(ex, i));
    stats.excerpts_kept = excerpts.length;
    researchInstructions =
      draft.lore_access.research_instructions && draft.lore_access.research_instructions.length > 0
        ? draft.lore_access.research_instructions
        : [...DEFAULT_RESEARCH_INSTRUCTIONS];
    researchInstructions.forEach((r, i) => assertNoHiddenText(r, omitted, file, `/lore_access/research_instructions/${i}`, 'research instruction'));
  }

  // lore_access, in the draft's key order, then the schema's.
  const loreValues: Obj = {
    mode: lane,
    allowed_scope: allowedScope,
    research_instructions: researchInstructions,
    traversal_policy: policy,
    required_provenance: true,
  };
  const loreAccess = ordered(draft.lore_access as unknown as Obj, loreValues, LORE_ACCESS_ORDER) as unknown as PacketLoreAccess;

  // prompt
  const { prompt: withSources, removed } = applySourceSection(draft.packet_prompt_text, excerpts);
  if (removed.length > 0) {
    findings.push({
      code: 'prompt_lines_replaced',
      severity: 'info',
      message: `${file}: ${removed.length} line${removed.length === 1 ? '' : 's'} of the prompt's source section did not match an excerpt and ${removed.length === 1 ? 'was' : 'were'} replaced by the rendered excerpts: ${removed.map((l) => JSON.stringify(l)).join(', ')}`,
      path: file,
      pointer: '/packet_prompt_text',
    });
  }
  const prompt =
    lane === 'responder_scoped_repository_search'
      ? applyResearchSection(withSources, renderResearchSection({ allowed_scope: allowedScope, traversal_policy: policy, research_instructions: researchInstructions ?? [] }))
      : applyResearchSection(withSources, null);

  const outputContract = draft.output_contract;
  const requiredFields =
    lane === 'responder_scoped_repository_search'
      ? [...outputContract.required_fields, ...RESEARCH_OUTPUT_FIELDS.filter((f) => !outputContract.required_fields.includes(f))]
      : outputContract.required_fields;

  const packetValues: Obj = {
    ...(draft as unknown as Obj),
    generation_lane: 'retrieval_augmented',
    lore_access: loreAccess,
    visible_context: { ...draft.visible_context, source_excerpts: excerpts },
    output_contract: { ...outputContract, required_fields: requiredFields },
    isolation_requirements: { ...draft.isolation_requirements, no_repo_access: lane !== 'responder_scoped_repository_search' },
    packet_prompt_text: prompt,
  };
  const packet = ordered(draft as unknown as Obj, packetValues, []) as unknown as ResponderPacket;

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
  return { lane, packet, capture, queries, findings, stats, validation };
}

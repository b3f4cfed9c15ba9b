/**
 * The policy compiler and the ONE enforcement code path.
 *
 * `compilePolicy` turns a Ghostlight `traversal_policy` (seed 000; semantics in seed 001: "the permitted
 * link depth, allowed repo prefixes, required seed refs, link classes to follow, and stop conditions")
 * plus, when given, the packet's `allowed_scope` and `hidden_context_audit` and the vault config into a
 * {@link CompiledPolicy} with a receipt row per clause. `checkPath` and `checkEdge` are the only places a
 * path or a link is admitted or refused — the traversal (src/traversal) and the proxy (src/proxy) both
 * call them, so the walk and the responder's own lookups obey the same rules.
 *
 * Receipts follow seed 003 ("record what EXECUTED, not merely what passed"): every clause gets a row
 * saying whether loretrace enforces it, by which rule, and how many notes of this snapshot it touches.
 */
import { LoretraceError, isLoretraceError } from '../errors.js';
import type { LinkPosition, LinkRecord, LinkSyntax, NoteRecord, VaultConfig, VaultIndex, VaultPath } from '../types.js';
import type { TraversalPolicy } from '../contracts/types.js';
import { isUnderPrefix, parseRef, resolveRef } from '../refs/ref.js';
import type { ParsedRef } from '../refs/ref.js';
import { cmp, mapLinkClassPhrase, phrasePositionClass, unenforcedQualifiers } from './synonyms.js';
import { preview } from '../contracts/rules.js';
import { DEFAULT_MIN_RELATIVE_RELEVANCE, DEFAULT_MIN_RELEVANCE, DEFAULT_MIN_SCORE_RATIO, STOP_PATTERNS, parseStopCondition } from './stop-conditions.js';
import type { StopEffect } from './stop-conditions.js';
import type { Budgets, CheckResult, CompiledPolicy, DenyRule, Disposition, EdgeSkipReason, FollowRules, HiddenSection, PolicyReceiptRow, ReceiptTotals } from './types.js';
import { hiddenSectionsOf } from './sections.js';
import { isJsonObject } from '../contracts/json-object.js';
import { fileFindings } from '../indexer/lookup.js';
import { configOrigin } from '../vault/config.js';

/** Syntax class names a `follow_link_classes` entry may use directly. */
export const SYNTAX_CLASSES: readonly LinkSyntax[] = ['wikilink', 'markdown_link', 'embed', 'heading_link', 'block_link'];
/** Position class names a `follow_link_classes` entry may use directly. */
export const POSITION_CLASSES: readonly LinkPosition[] = ['prose', 'list_item', 'table', 'field', 'heading', 'property'];

/** The receipt's rule for following a position class (`property` says what property links are). */
function positionRule(position: LinkPosition, via = ''): string {
  if (position === 'property') {
    return `follow property links${via}: [[links]] in frontmatter property values (position class property), which Obsidian counts as links of the note; a syntax class such as wikilink follows them too, a position class other than property does not`;
  }
  return `follow links that stand in a ${position} position (position class)`;
}

/** The parts of a packet the compiler reads (a full `ResponderPacket` fits). */
export interface PolicyPacketContext {
  lore_access?: { allowed_scope?: string[] };
  hidden_context_audit?: { omitted_context_refs?: string[] };
}

/** Options of {@link compilePolicy}. */
export interface CompileOptions {
  /** The index the policy is compiled against (seeds must exist in it). */
  index: VaultIndex;
  /** The packet the policy comes from: its `allowed_scope` gives start points, its hidden refs are denied. */
  packet?: PolicyPacketContext;
  /** Refuse a policy with any clause short of `enforced` — `partially_enforced` or `advisory` (`strict_policy`). */
  strict?: boolean;
  /** Vault config; default `index.config`. */
  config?: VaultConfig;
  /**
   * JSON pointer of the policy inside its document; default `/lore_access/traversal_policy` when
   * `packet` is given, else `` (a bare policy file).
   */
  pointerBase?: string;
  /** File name for error details. */
  file?: string;
  /**
   * Compile the receipt a responder is shown (the proxy's `research_status`) instead of the runner's. Every
   * row's `matches` counts only the notes `admits` accepts (the proxy passes the first compilation's
   * `checkPath`: the notes the policy admits), so a count never includes a hidden, omitted, denied or
   * future-era note; and the rule of a stop condition that denies hidden lore names no number of hidden refs,
   * prefixes, author-only notes or sections and is `enforced` whether or not anything is hidden (docs/PROXY.md
   * promises the responder learns nothing of hidden refs, not even that there are some). The rules themselves
   * (what `checkPath` and `checkEdge` enforce) are the same as without this option. Default: the runner's
   * receipt, counts over every note of the snapshot (the one the ledger and `traverse` record).
   */
  responderView?: { admits: (path: VaultPath) => boolean };
}

const POLICY_KEYS = ['max_link_depth', 'allowed_prefixes', 'required_seed_refs', 'follow_link_classes', 'stop_conditions'] as const;

/**
 * A value as it appears in a message: JSON, at most 120 characters (a 1 MB clause or a 100 000-deep
 * array must not become the message), non-finite numbers as written (`Infinity`, which is what
 * `1e309` parses to; JSON.stringify would say `null`).
 */
function show(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return preview(v, 120);
}

/**
 * A packet field the compiler reads must be a list when present: `allowed_scope`,
 * `hidden_context_audit.omitted_context_refs`. Anything else is a malformed packet, refused with its
 * pointer (`bad_policy`), never silently read as "no entries".
 */
function packetList(packet: PolicyPacketContext | undefined, path: readonly [string, string], fail: (pointer: string, message: string, expected?: string) => never): unknown[] {
  const pointer = `/${path[0]}/${path[1]}`;
  const outer = (packet as Record<string, unknown> | undefined)?.[path[0]];
  if (outer === undefined || outer === null) return [];
  if (typeof outer !== 'object' || Array.isArray(outer)) fail(`/${path[0]}`, `packet /${path[0]} must be an object (got ${show(outer)})`, 'a JSON object');
  const v = (outer as Record<string, unknown>)[path[1]];
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(pointer, `packet ${pointer} must be a list of strings (got ${show(v)})`, 'a list of strings');
  return v as unknown[];
}

/** RFC 6901 escaping of one pointer token. */
function tok(s: string | number): string {
  return String(s).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Raise `bad_policy` (or another code) naming the clause's pointer and what was expected. */
type Fail = (pointer: string, message: string, expected?: string, code?: string) => never;

/**
 * What every compile step reads: the index, config, namespace, the packet, and the shared helpers
 * (`fail` with the file name, `ptr` for pointers under the policy's base, `refOrFail` for refs whose
 * `bad_ref` must become a `bad_policy` naming the clause).
 */
export interface CompileContext {
  index: VaultIndex;
  config: VaultConfig;
  ns: string;
  packet: PolicyPacketContext | undefined;
  file: string | undefined;
  notes: Map<string, NoteRecord>;
  /** Every target class some note of the index has. */
  indexClasses: Set<string>;
  fail: Fail;
  /** JSON pointer of a policy clause: the base pointer, then the RFC 6901-escaped parts. */
  ptr: (...parts: (string | number)[]) => string;
  /** parseRef in the policy's namespace; a bad ref is `bad_policy` at `pointer`. */
  refOrFail: (input: string, pointer: string, label: string) => ParsedRef;
  /** Notes of the snapshot under a prefix (whole segments). */
  countUnder: (prefix: string) => number;
  /** Notes of the snapshot that have one of the classes. */
  classNotes: (cls: readonly string[]) => number;
  /** The notes a row's `matches` counts: every note, or in a responder view only the admitted ones. */
  counted: readonly NoteRecord[];
  /** True when compiling the responder's receipt ({@link CompileOptions.responderView}). */
  responderView: boolean;
}

/** The policy's five fields, checked for shape (see {@link readPolicyFields}). */
export interface PolicyFields {
  depth: number;
  prefixes: string[];
  seeds: string[];
  follow: string[];
  stops: string[];
}

/** One parsed stop condition, by its index in `stop_conditions`. */
interface ParsedStop {
  i: number;
  effects: StopEffect[];
  patterns: string[] | null;
  form: string;
  /** Plain English: content words no matched pattern accounts for (stop-conditions.ts `unaccountedStopWords`). */
  dropped: string[];
  /** Plain English: exceptions ("unless …") no matched pattern implements. */
  exceptions: string[];
}

/** What the stop conditions compile to: budgets (and the clause each came from) and deny rules. */
export interface StopRules {
  parsed: ParsedStop[];
  budgets: Budgets;
  /** Index in `stop_conditions` of the clause that set each budget (the tightest one). */
  budgetSource: Partial<Record<keyof Budgets, number>>;
  deniedPrefixes: DenyRule[];
  deniedClasses: Set<string>;
  noExpand: Set<string>;
  /** A clause asks to deny future-era lore. */
  futureOn: boolean;
}

/** Hidden deny rules and their receipt rows (packet refs, config prefixes, author-only notes). */
interface HiddenRules {
  hidden: DenyRule[];
  /** Sections an omitted `Note.md#Heading` ref hides (the rest of the note stays visible). */
  sections: HiddenSection[];
  rows: PolicyReceiptRow[];
  /** Notes of the snapshot any hidden rule denies. */
  noteCount: number;
}

/** Future-era deny rules, the allowed prefixes that waive them, and their receipt rows. */
interface FutureRules {
  future: DenyRule[];
  waivers: string[];
  rows: PolicyReceiptRow[];
}

/**
 * Compile a traversal policy. The steps, in order (each a function below): check the shape; the depth
 * row; the prefixes; parse the stop conditions (before seeds: a seed must not be denied); the hidden
 * refs; the future-era prefixes; the seeds; the packet's `allowed_scope`; the link classes; the stop
 * condition rows; the receipt totals and the strict check.
 *
 * @returns a {@link CompiledPolicy} (`.receipt`, `.budgets`, rule tables for {@link checkPath}/{@link checkEdge}).
 * @throws LoretraceError
 *   - `bad_policy` (exit 1): not an object; unknown or missing field; `max_link_depth` not an integer
 *     ≥ 0; empty `allowed_prefixes`; a list that is not a list of strings; a prefix or seed that is not a
 *     valid ref (the `bad_ref` reason is quoted); a malformed or unknown structured stop token; a seed
 *     outside `allowed_prefixes` or denied by a stop condition / hidden ref; `max_refs` smaller than the
 *     number of seeds. `details.pointer` names the clause (`/max_link_depth`, `/stop_conditions/2`).
 *   - `seed_not_found` (exit 1): a seed (or its fragment) is not in the index; the message names it.
 *   - `strict_policy` (exit 1): `strict` is set and the receipt has a row short of `enforced`
 *     (`partially_enforced` or `advisory`); lists each with its pointer and disposition.
 */
export function compilePolicy(policy: TraversalPolicy, options: CompileOptions): CompiledPolicy {
  const ctx = compileContext(options);
  const fields = readPolicyFields(ctx, policy);
  const receipt: PolicyReceiptRow[] = [depthRow(ctx, fields.depth)];
  const prefixes = compilePrefixes(ctx, fields.prefixes);
  receipt.push(...prefixes.rows);
  const stops = compileStopEffects(ctx, fields.stops);
  const hidden = compileHidden(ctx, prefixes.allowed);
  const future = compileFutureEra(ctx, stops.futureOn, prefixes.allowed);
  const rules: PathRules = {
    allowed_prefixes: [...new Set(prefixes.allowed)].sort(cmp),
    denied_prefixes: stops.deniedPrefixes,
    hidden: hidden.hidden,
    hidden_sections: hidden.sections,
    future_era: future.future,
    future_era_waivers: [...new Set(future.waivers)].sort(cmp),
    denied_classes: [...stops.deniedClasses].sort(cmp),
    notes: ctx.notes,
  };
  const seeds = compileSeeds(ctx, rules, fields.seeds, stops);
  receipt.push(...seeds.rows);
  const scope = compileScope(ctx, rules, seeds.seeds);
  receipt.push(...scope.rows);
  const follow = compileFollowClasses(ctx, fields.follow);
  receipt.push(...follow.rows);
  receipt.push(...stopConditionRows(ctx, fields.stops, stops, rules, hidden, future));
  receipt.push(...hidden.rows, ...future.rows);
  const totals = receiptTotals(receipt);
  if (options.strict) refuseNotEnforced(ctx, receipt);
  return {
    namespace: ctx.ns,
    ...rules,
    snapshot_id: ctx.index.snapshot_id,
    max_link_depth: fields.depth,
    seeds: seeds.seeds,
    scope: scope.scope,
    follow: follow.follow,
    no_expand_classes: [...stops.noExpand].sort(cmp),
    budgets: stops.budgets,
    receipt,
    receipt_totals: totals,
  };
}

/**
 * The shared state of one compilation (see {@link CompileContext}). The base pointer is
 * `options.pointerBase`, else `/lore_access/traversal_policy` when a packet is given, else `` (a bare
 * policy file).
 */
export function compileContext(options: CompileOptions): CompileContext {
  const { index } = options;
  const config = options.config ?? index.config ?? {};
  const base = options.pointerBase ?? (options.packet ? '/lore_access/traversal_policy' : '');
  const ns = index.namespace;
  const file = options.file;
  const fail: Fail = (pointer, message, expected, code = 'bad_policy') => {
    throw new LoretraceError(code, message, { ...(file ? { file } : {}), pointer, ...(expected ? { expected } : {}) });
  };
  const notes = new Map<string, NoteRecord>();
  for (const n of index.notes) notes.set(n.path, n);
  const view = options.responderView;
  const counted = view ? index.notes.filter((n) => view.admits(n.path)) : index.notes;
  // The responder's view knows only the classes of notes it may see: a class only hidden or future-era notes
  // have would otherwise show in a rule ("maps to target classes …", "(no note has it)") and tell they exist.
  const indexClasses = new Set<string>();
  for (const n of counted) for (const c of n.classes) indexClasses.add(c);
  return {
    index,
    config,
    ns,
    packet: options.packet,
    file,
    notes,
    indexClasses,
    fail,
    ptr: (...parts) => base + parts.map((p) => '/' + tok(p)).join(''),
    refOrFail: (input, pointer, label) => {
      try {
        return parseRef(input, { namespace: ns, label });
      } catch (e) {
        if (isLoretraceError(e)) return fail(pointer, `traversal_policy ${pointer}: ${e.message}`, e.details.expected);
        throw e;
      }
    },
    countUnder: (prefix) => counted.reduce((a, n) => a + (isUnderPrefix(n.path, prefix) ? 1 : 0), 0),
    classNotes: (cls) => counted.filter((n) => n.classes.some((c) => cls.includes(c))).length,
    counted,
    responderView: view !== undefined,
  };
}

/**
 * Check the policy's shape: an object with exactly the five fields; `max_link_depth` a safe integer
 * ≥ 0; the four lists lists of non-empty strings; `allowed_prefixes` not empty. Every shape problem is
 * collected before anything is thrown, so one run names them all (a user fixing them one by one would
 * otherwise need a run per field).
 * @throws LoretraceError `bad_policy`: one problem — its own message and pointer; several —
 *   `traversal_policy has N problems: <message>; <message> …` with the first problem's pointer and every
 *   problem in `details.data.problems` (`{ pointer, message, expected }`, in the order checked).
 */
export function readPolicyFields(ctx: CompileContext, policy: TraversalPolicy): PolicyFields {
  const { fail, ptr } = ctx;
  const base = ptr();
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy)) {
    fail(base, `traversal_policy at ${base || '/'} must be an object with ${POLICY_KEYS.join(', ')}`, 'a JSON object');
  }
  const problems: PolicyShapeProblem[] = [];
  const problem = (pointer: string, message: string, expected: string) => void problems.push({ pointer, message, expected });
  const raw = policy as unknown as Record<string, unknown>;
  for (const k of Object.keys(raw).sort(cmp)) {
    if (!(POLICY_KEYS as readonly string[]).includes(k)) {
      problem(ptr(k), `traversal_policy has an unknown field ${ptr(k)}; expected only ${POLICY_KEYS.join(', ')}`, POLICY_KEYS.join(', '));
    }
  }
  const missing = new Set<string>();
  for (const k of POLICY_KEYS) {
    if (!(k in raw)) {
      missing.add(k);
      problem(ptr(k), `traversal_policy is missing ${ptr(k)}`, k === 'max_link_depth' ? 'an integer ≥ 0' : 'a list of strings');
    }
  }
  const depth = raw.max_link_depth;
  if (!missing.has('max_link_depth') && (typeof depth !== 'number' || !Number.isSafeInteger(depth) || depth < 0)) {
    const tooBig = typeof depth === 'number' && Number.isInteger(depth) && depth > 0;
    problem(ptr('max_link_depth'), `traversal_policy ${ptr('max_link_depth')} must be an integer ≥ 0${tooBig ? ` no larger than ${Number.MAX_SAFE_INTEGER}` : ''} (got ${show(depth)})`, `an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  const strList = (k: (typeof POLICY_KEYS)[number]): string[] => {
    if (missing.has(k)) return [];
    const v = raw[k];
    if (!Array.isArray(v)) {
      problem(ptr(k), `traversal_policy ${ptr(k)} must be a list of strings (got ${show(v)})`, 'a list of strings');
      return [];
    }
    (v as unknown[]).forEach((x, i) => {
      if (typeof x !== 'string' || x.length === 0) problem(ptr(k, i), `traversal_policy ${ptr(k, i)} must be a non-empty string (got ${show(x)})`, 'a non-empty string');
    });
    return v as string[];
  };
  const fields: PolicyFields = {
    depth: depth as number,
    prefixes: strList('allowed_prefixes'),
    seeds: strList('required_seed_refs'),
    follow: strList('follow_link_classes'),
    stops: strList('stop_conditions'),
  };
  if (!missing.has('allowed_prefixes') && Array.isArray(raw.allowed_prefixes) && fields.prefixes.length === 0) {
    problem(ptr('allowed_prefixes'), `traversal_policy ${ptr('allowed_prefixes')} is empty, so it admits no lore at all`, 'at least one prefix such as Namespace:folder/');
  }
  if (problems.length === 1) fail(problems[0]!.pointer, problems[0]!.message, problems[0]!.expected);
  if (problems.length > 1) throw shapeProblems(ctx, problems);
  return fields;
}

/** One shape problem of a traversal_policy: its pointer, the sentence naming it, and what was expected. */
interface PolicyShapeProblem {
  pointer: string;
  message: string;
  expected: string;
}

/** The one `bad_policy` error listing several shape problems (see {@link readPolicyFields}). */
function shapeProblems(ctx: CompileContext, problems: readonly PolicyShapeProblem[]): LoretraceError {
  const first = problems[0]!;
  return new LoretraceError('bad_policy', `traversal_policy has ${problems.length} problems: ${problems.map((p) => `${p.message} (expected ${p.expected})`).join('; ')}`, {
    ...(ctx.file ? { file: ctx.file } : {}), pointer: first.pointer, expected: first.expected, data: { problems: problems.map((p) => ({ ...p })) },
  });
}

/** The receipt row of `max_link_depth` (always enforced: checkEdge counts hops from the start notes). */
function depthRow(ctx: CompileContext, depth: number): PolicyReceiptRow {
  return {
    clause: String(depth),
    kind: 'max_link_depth',
    pointer: ctx.ptr('max_link_depth'),
    disposition: 'enforced',
    rule: `follow links at most ${depth} hop${depth === 1 ? '' : 's'} from a seed or scope note (those are depth 0)`,
    matches: null,
  };
}

/**
 * `allowed_prefixes` → vault paths (a folder, or one note when it ends in `.md`), each with its row
 * and the number of notes under it.
 * @throws LoretraceError `bad_policy` for a bad ref or a prefix with a `#fragment`.
 */
export function compilePrefixes(ctx: CompileContext, prefixesIn: readonly string[]): { allowed: string[]; rows: PolicyReceiptRow[] } {
  const { fail, ptr } = ctx;
  const allowed: string[] = [];
  const rows: PolicyReceiptRow[] = [];
  prefixesIn.forEach((p, i) => {
    const r = ctx.refOrFail(p, ptr('allowed_prefixes', i), `allowed_prefixes[${i}]`);
    if (r.fragment) fail(ptr('allowed_prefixes', i), `traversal_policy ${ptr('allowed_prefixes', i)} ${show(p)} is a prefix and cannot carry a #fragment`, 'Namespace:folder/ or Namespace:note.md');
    allowed.push(r.path);
    const m = ctx.countUnder(r.path);
    rows.push({
      clause: p,
      kind: 'allowed_prefix',
      pointer: ptr('allowed_prefixes', i),
      disposition: 'enforced',
      rule: r.is_prefix || !r.path.endsWith('.md')
        ? `admit paths under ${r.path.endsWith('/') ? r.path : r.path + '/'} (whole path segments)${m === 0 ? '; no note of this snapshot is under it' : ''}`
        : `admit the one note ${r.path}${m === 0 ? '; it is not in this snapshot' : ''}`,
      matches: m,
    });
  });
  return { allowed, rows };
}

/**
 * Parse every stop condition (src/policy/stop-conditions.ts) and fold the effects: the tightest budget
 * wins (smallest `max_*`/`time_budget_ms`, largest `min_relevance`/`min_relative_relevance`), deny prefixes and classes and
 * no-expand classes accumulate, and a future-era clause switches the future-era rules on.
 * @throws LoretraceError `bad_policy` for a malformed token or a `deny_prefix:` that is not a ref.
 */
export function compileStopEffects(ctx: CompileContext, stopsIn: readonly string[]): StopRules {
  const { fail, ptr } = ctx;
  const parsed: ParsedStop[] = [];
  stopsIn.forEach((s, i) => {
    const p = parseStopCondition(s);
    if (p.form === 'bad_token') fail(ptr('stop_conditions', i), `traversal_policy ${ptr('stop_conditions', i)} ${show(s)}: ${p.error}`, p.expected);
    else if (p.form === 'english') parsed.push({ i, effects: p.effects, patterns: p.patterns, form: p.form, dropped: p.dropped, exceptions: p.exceptions });
    else parsed.push({ i, effects: p.effects, patterns: null, form: p.form, dropped: [], exceptions: [] });
  });
  const out: StopRules = {
    parsed,
    budgets: { max_refs: null, max_chunks: null, max_chars: null, min_relevance: null, min_relative_relevance: null, min_score_ratio: null, time_budget_ms: null },
    budgetSource: {},
    deniedPrefixes: [],
    deniedClasses: new Set<string>(),
    noExpand: new Set<string>(),
    futureOn: false,
  };
  const { budgets, budgetSource } = out;
  for (const { i, effects } of parsed) {
    for (const e of effects) {
      switch (e.kind) {
        case 'max_refs':
        case 'max_chunks':
        case 'max_chars':
        case 'time_budget_ms': {
          const cur = budgets[e.kind];
          if (cur === null || e.value < cur) { budgets[e.kind] = e.value; budgetSource[e.kind] = i; }
          break;
        }
        case 'min_relevance':
        case 'min_relative_relevance':
        case 'min_score_ratio': {
          const cur = budgets[e.kind];
          if (cur === null || e.value > cur) { budgets[e.kind] = e.value; budgetSource[e.kind] = i; }
          break;
        }
        case 'deny_prefix': {
          const r = ctx.refOrFail(e.value, ptr('stop_conditions', i), `deny_prefix in stop_conditions[${i}]`);
          out.deniedPrefixes.push({ prefix: r.path, pointer: ptr('stop_conditions', i) });
          break;
        }
        case 'deny_class':
          out.deniedClasses.add(e.value);
          break;
        case 'no_expand_class':
          out.noExpand.add(e.value);
          break;
        case 'deny_future_era':
          out.futureOn = true;
          break;
        case 'deny_hidden':
          break;
      }
    }
  }
  return out;
}

/**
 * The notes a hidden ref names when read loosely, for refs that name no path exactly (fail closed: a
 * misspelt hidden ref must not leave its note visible). The value is trimmed, stripped of wikilink
 * brackets and a `|display` / `#fragment` part, percent-decoded where that decodes, backslashes read as
 * `/`, NFC-normalised and compared case-insensitively (Obsidian resolves links without regard to case)
 * with every note path, with and without `.md`, with and without the `<namespace>:` prefix; a value with
 * no `/` also matches a note by its file name, as a wikilink would. Returns vault paths, sorted; empty
 * when nothing matches.
 */
export function looseHiddenMatches(index: VaultIndex, ns: string, value: string): VaultPath[] {
  let v = value.trim().replace(/^!?\[\[/, '').replace(/\]\]$/, '');
  v = v.split('|')[0] ?? v;
  v = v.split('#')[0] ?? v;
  try {
    v = decodeURIComponent(v);
  } catch {
    // Not percent-encoded text: keep it as written.
  }
  v = v.replace(/\\/g, '/').normalize('NFC').trim();
  const lower = v.toLowerCase();
  const nsLower = `${ns.toLowerCase()}:`;
  const bare = (lower.startsWith(nsLower) ? lower.slice(nsLower.length) : lower).replace(/^\/+/, '').replace(/\.md$/, '');
  if (bare === '') return [];
  const out: VaultPath[] = [];
  for (const n of index.notes) {
    const path = n.path.toLowerCase().replace(/\.md$/, '');
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (path === bare || (!bare.includes('/') && name === bare)) out.push(n.path);
  }
  return out.sort(cmp);
}

/**
 * Hidden lore, always denied whatever the stop conditions say: the packet's
 * `hidden_context_audit.omitted_context_refs` (a value that is not a lore ref is an advisory row: there
 * is nothing in the vault to deny; a `Note.md#Heading` ref whose heading exists hides that section only,
 * src/policy/sections.ts, and one whose heading does not exist hides the whole note), the vault config's `hidden_prefixes`, and notes marked author-only
 * in frontmatter ({@link authorOnlyReason}).
 * @throws LoretraceError `bad_policy` for a malformed packet list or a config prefix that is not a ref.
 */
export function compileHidden(ctx: CompileContext, allowed: readonly string[]): HiddenRules {
  const { index, ns, config } = ctx;
  const hidden: DenyRule[] = [];
  const sections: HiddenSection[] = [];
  const rows: PolicyReceiptRow[] = [];
  packetList(ctx.packet, ['hidden_context_audit', 'omitted_context_refs'], ctx.fail).forEach((hv, i) => {
    const h = typeof hv === 'string' ? hv : show(hv);
    const pointer = `/hidden_context_audit/omitted_context_refs/${i}`;
    let r: ParsedRef;
    try {
      r = parseRef(hv as string, { namespace: ns, label: `omitted_context_refs[${i}]` });
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
      const loose = typeof hv === 'string' ? looseHiddenMatches(index, ns, hv) : [];
      if (loose.length > 0) {
        for (const p of loose) hidden.push({ prefix: p, pointer });
        rows.push({ clause: h, kind: 'hidden_ref', pointer, disposition: 'enforced', rule: `never consult ${loose.join(' or ')} (not a lore ref as written; matched loosely — case, separators, percent-encoding, wikilink brackets — so the note is denied rather than left visible)`, matches: loose.length });
        return;
      }
      rows.push({ clause: h, kind: 'hidden_ref', pointer, disposition: 'advisory', rule: `not a lore ref of ${ns} (${e.message.replace(/^.*is not a valid lore ref: /, '')}); there is nothing in the vault to deny`, matches: null });
      return;
    }
    const prefixes = [r.path as string];
    if (!r.is_prefix && !r.path.endsWith('.md') && ctx.notes.has(r.path + '.md')) prefixes.push(r.path + '.md');
    const sectionNote = r.fragment?.kind === 'heading' ? prefixes.map((p) => ctx.notes.get(p)).find((n) => n !== undefined) : undefined;
    const found = sectionNote ? hiddenSectionsOf(index, sectionNote, r, pointer) : [];
    if (found.length > 0) {
      sections.push(...found);
      // Every heading of that name is hidden (hiddenSectionsOf): the row names each section's lines and chunks.
      const where = found.map((x) => `lines ${x.line_start}-${x.line_end}, chunk${x.chunks.length === 1 ? '' : 's'} ${x.chunks.join(', ')}`).join('; ');
      rows.push({
        clause: h, kind: 'hidden_ref', pointer, disposition: 'enforced',
        rule: found.length === 1
          ? `never consult the section ${JSON.stringify(found[0]!.heading)} of ${found[0]!.path} (${where}): withheld from search, links, traversal and reads; the rest of the note stays readable`
          : `never consult the ${found.length} sections headed ${JSON.stringify(found[0]!.heading)} of ${found[0]!.path} (${where}): every heading of that name is withheld from search, links, traversal and reads; the rest of the note stays readable`,
        matches: 1,
      });
      return;
    }
    // A heading fragment that names no heading of the note hides the whole note (fail closed).
    let m = index.notes.filter((n) => prefixes.some((p) => isUnderPrefix(n.path, p))).length;
    if (m === 0 && typeof hv === 'string') {
      // Fail closed: a hidden ref that names no path exactly still hides the notes it names loosely.
      const loose = looseHiddenMatches(index, ns, hv);
      if (loose.length > 0) {
        for (const p of loose) hidden.push({ prefix: p, pointer });
        rows.push({ clause: h, kind: 'hidden_ref', pointer, disposition: 'enforced', rule: `never consult ${loose.join(' or ')} (${prefixes.join(' or ')} names no path exactly; matched loosely — case, separators, percent-encoding, wikilink brackets — so the note is denied rather than left visible)`, matches: loose.length });
        return;
      }
    }
    for (const p of prefixes) hidden.push({ prefix: p, pointer });
    m = index.notes.filter((n) => prefixes.some((p) => isUnderPrefix(n.path, p))).length;
    rows.push({
      clause: h,
      kind: 'hidden_ref',
      pointer,
      disposition: 'enforced',
      rule: `never consult ${prefixes.join(' or ')}${m === 0 ? ` (no note or folder of ${ns} has this path, so 0 notes are denied)` : ''}`,
      matches: m,
    });
  });
  (config.hidden_prefixes ?? []).forEach((h, i) => {
    const pointer = `#/config/hidden_prefixes/${i}`;
    const r = ctx.refOrFail(h, pointer, `config hidden_prefixes[${i}]`);
    hidden.push({ prefix: r.path, pointer });
    const m = ctx.countUnder(r.path);
    rows.push({ clause: h, kind: 'hidden_prefix', pointer, disposition: 'enforced', rule: `never consult ${r.path} (vault config: author-only lore)`, matches: m });
  });
  const failClosed = failClosedFrontmatter(index);
  const bodyTags = bodyTagsByNote(index);
  for (const n of index.notes) {
    const hit = authorOnlyReason(n, failClosed, allowed, bodyTags.get(n.path) ?? []);
    if (hit === null) continue;
    const pointer = hit.body ? `#/tags/${tok(n.path)}/${tok(hit.key)}` : `#/frontmatter/${tok(n.path)}/${hit.key}`;
    hidden.push({ prefix: n.path, pointer });
    rows.push({ clause: n.path, kind: 'hidden_note', pointer, disposition: 'enforced', rule: `never consult ${n.path} (${hit.why})`, matches: 1 });
  }
  const noteCount = ctx.counted.filter((n) => hidden.some((d) => isUnderPrefix(n.path, d.prefix))).length;
  return { hidden, sections, rows, noteCount };
}

/**
 * The `visibility` values that leave a note visible (lower-cased and trimmed before the comparison). Any
 * other value — `author only`, `secret`, `draft`, an empty value, a number, a list with one non-public item —
 * hides the note: an unknown answer to "may the responder see this?" must not resolve to visible.
 */
export const PUBLIC_VISIBILITY_VALUES: readonly string[] = ['public', 'visible', 'shared', 'player', 'players', 'everyone', 'all', 'open'];

/**
 * Frontmatter keys that mark a note hidden when their value is anything but a false one
 * ({@link FALSE_MARKER_VALUES}), compared with case, `-`, `_` and spaces removed: `hidden`, `author_only`,
 * `author-only`, `authorOnly`, `authoronly`, `private`, `secret`, `spoiler`, `gm_only` (and `gm-only`,
 * `gmOnly`) — the words of the hidden stop condition (src/policy/stop-conditions.ts `HIDDEN_KEYWORD_RE`).
 */
const MARKER_KEYS: readonly string[] = ['hidden', 'authoronly', 'private', 'secret', 'spoiler', 'gmonly'];

/**
 * Values of the `publish` key that leave the note visible: YAML `true`, `1`, and the strings `true`, `yes`,
 * `on`, `1` (case-insensitive). `publish: false` is Obsidian Publish's opt-out (the note is ignored when
 * publishing; Obsidian help, Obsidian Publish → "Publish and unpublish notes" → Ignore notes): the author
 * says the note is not for readers, so it is hidden like an author-only note; any other value (an empty one,
 * `draft`) hides too (fail closed).
 */
const TRUE_PUBLISH_VALUES: readonly string[] = ['true', 'yes', 'on', '1'];

/**
 * Values of a {@link MARKER_KEYS} key that leave the note visible: YAML `false`, `0`, null, and the strings
 * `false`, `no`, `off`, `0`, `` (case-insensitive). Every other value — `true`, `yes`, `on`, `1`, `yes?`, a
 * sentence — hides the note (fail closed).
 */
const FALSE_MARKER_VALUES: readonly string[] = ['false', 'no', 'off', '0', ''];

/**
 * Tags that hide a note, compared as keys are, at any segment of a nested tag (`lore/hidden`,
 * `status/secret`, `hidden/draft`): the words of the hidden stop condition (`author-only`, `hidden`,
 * `secret`, `spoiler(s)`, `gm-only`, `private`; src/policy/stop-conditions.ts `HIDDEN_KEYWORD_RE`). A
 * `spoilers` tag says the note holds spoilers, so it hides; `secrets` is a topic (lore about secrets) and
 * does not.
 * Read in frontmatter `tags` / `tag` (a list or a comma- or space-separated string) and in the body's
 * inline `#tags`, which Obsidian counts as the note's tags (its tag pane and `tag:` search); a `#tag` in a
 * code span, a code block or a `%%comment%%` is no tag (src/links/extract.ts).
 */
const HIDING_TAGS: readonly string[] = ['authoronly', 'hidden', 'secret', 'spoiler', 'spoilers', 'gmonly', 'private'];

/** Whether a tag (as written, `#` optional) hides its note: one of its `/` segments is a {@link HIDING_TAGS} word. */
function isHidingTag(tag: string): boolean {
  return tag.replace(/^#/, '').split('/').some((seg) => HIDING_TAGS.includes(markerName(seg)));
}

/** The body's `#tag` records of each note (syntax `tag`, in file order), as the notes stage extracted them. */
function bodyTagsByNote(index: VaultIndex): Map<string, LinkRecord[]> {
  const out = new Map<string, LinkRecord[]>();
  for (const l of index.links) {
    if (l.syntax !== 'tag' || l.position === 'property') continue;
    const list = out.get(l.source_path);
    if (list) list.push(l);
    else out.set(l.source_path, [l]);
  }
  return out;
}

/** A frontmatter key or tag as compared: lower case, without `-`, `_`, spaces or a leading `#`. */
function markerName(name: string): string {
  return name.trim().replace(/^#/, '').toLowerCase().replace(/[-_\s]/g, '');
}

/** Whether a frontmatter key (as written) is one the hidden-note rule reads: visibility, a marker key, tags. */
function isVisibilityKey(key: string): boolean {
  const k = markerName(key);
  return k === 'visibility' || k === 'tags' || k === 'tag' || k === 'publish' || MARKER_KEYS.includes(k);
}

/** A frontmatter value as the receipt shows it: strings as written, anything else as JSON; cut to 64 characters. */
function shownValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

/**
 * Notes whose frontmatter cannot be trusted to say "visible": a block that does not parse
 * (`bad_frontmatter`: invalid YAML, duplicate keys, an alias bomb), a repeated key the hidden-note rule
 * reads (`visibility`, a marker key, `tags`; also one a `<<` merge key sets again), and a
 * `displaced_frontmatter` block (after blank lines at the top: Obsidian reads it as body text, its author
 * likely meant frontmatter). A repeated key keeps its last value (as Obsidian does), but two
 * contradicting answers to "is this note hidden?" must not resolve to visible.
 */
function failClosedFrontmatter(index: VaultIndex): { bad: Set<string>; repeatedVisibility: Set<string>; displaced: Map<string, number> } {
  // The parse's findings only: reading link resolution's would resolve every link of a lazy index.
  const found = fileFindings(index);
  const bad = new Set(found.filter((f) => f.code === 'bad_frontmatter' && typeof f.path === 'string').map((f) => f.path as string));
  const displaced = new Map(found.filter((f) => f.code === 'displaced_frontmatter' && typeof f.path === 'string').map((f) => [f.path as string, f.line ?? 0] as const));
  const repeatedVisibility = new Set(
    found
      .filter((f) => {
        if (f.code !== 'duplicate_frontmatter_key' || typeof f.path !== 'string') return false;
        const key = /frontmatter key ("(?:[^"\\]|\\.)*") is repeated/.exec(f.message)?.[1];
        return key !== undefined && isVisibilityKey(JSON.parse(key) as string);
      })
      .map((f) => f.path as string),
  );
  return { bad, repeatedVisibility, displaced };
}

/** The first value of a `visibility` key (a list is read item by item) that is not a public one, or undefined. */
function nonPublicVisibility(value: unknown): unknown {
  const items = Array.isArray(value) ? (value.length === 0 ? [value] : value) : [value];
  return items.find((v) => typeof v !== 'string' || !PUBLIC_VISIBILITY_VALUES.includes(v.trim().toLowerCase()));
}

/** Whether a `publish` value leaves the note visible ({@link TRUE_PUBLISH_VALUES}; a list: every item). */
function isTruePublish(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(isTruePublish);
  if (value === true || value === 1) return true;
  return typeof value === 'string' && TRUE_PUBLISH_VALUES.includes(value.trim().toLowerCase());
}

/** Whether a marker key's value leaves the note visible (a false value, or a list of only false values). */
function isFalseMarker(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isFalseMarker);
  if (value === false || value === null || value === 0) return true;
  return typeof value === 'string' && FALSE_MARKER_VALUES.includes(value.trim().toLowerCase());
}

/** The tags of a `tags` / `tag` value: a list's strings, or a string split at commas and spaces. */
function tagsOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((v) => (typeof v === 'string' ? v.split(/[,\s]+/) : [])).filter((t) => t !== '');
}

/**
 * Why a note is author-only, or null (docs/TRAVERSAL.md "hidden_note"). Keys are compared without case,
 * `-`, `_` or spaces, and the frontmatter is read fail closed:
 * - `visibility` with any value that is not one of {@link PUBLIC_VISIBILITY_VALUES} (a list: any item);
 * - a marker key (`hidden`, `author_only` / `author-only` / `authorOnly` / `authoronly`, `private`, `secret`,
 *   `gm_only`) with any value but a false one (`false`, `no`, `off`, `0`, empty);
 * - `publish` with any value but a true one (`publish: false`, Obsidian Publish's opt-out; {@link TRUE_PUBLISH_VALUES});
 * - a tag of {@link HIDING_TAGS} (also with `_`, `#`, as any segment of a nested tag: `lore/hidden`,
 *   `hidden/draft`) in `tags` / `tag`, or as an inline `#tag` of the body (`bodyTags`; Obsidian counts
 *   them as the note's tags);
 * - any of those keys in a nested mapping, or a mapping inside a list ({@link markerIn}); `<<` merge keys
 *   are resolved by the notes stage before (src/notes/frontmatter.ts);
 * - under `allowed_prefixes`, frontmatter that repeats one of those keys (also through a `<<` merge), does
 *   not parse, or is displaced below blank lines (`displaced_frontmatter`): it may say the note is
 *   author-only, so it is denied — a parse error must never turn hidden lore visible. (Outside the
 *   prefixes the prefix rule refuses it anyway.) A `displaced` entry maps the note to the line of its
 *   `---`: line 1 is a block closed by the YAML end marker `...`, a later line one after blank lines.
 * @param bodyTags the note's inline `#tag` records (syntax `tag`), in file order; none when omitted.
 * @returns `key`: the frontmatter key as written, or for a body tag the tag (the receipt pointer names it,
 *   `#/frontmatter/<path>/<key>` or, `body` set, `#/tags/<path>/<tag>`); `why`: the rule's words, naming the
 *   key and its value (a body tag: the tag and its line).
 */
export function authorOnlyReason(
  n: NoteRecord,
  failClosed: { bad: ReadonlySet<string>; repeatedVisibility: ReadonlySet<string>; displaced?: ReadonlyMap<string, number> },
  allowed: readonly string[],
  bodyTags: readonly LinkRecord[] = [],
): { key: string; why: string; body?: true } | null {
  const fm = n.frontmatter;
  const inside = () => allowed.some((a) => isUnderPrefix(n.path, a));
  if (failClosed.repeatedVisibility.has(n.path) && inside()) {
    return { key: 'visibility', why: 'its frontmatter repeats a visibility key, so one of its values may mark it author-only; denied until the repeat is removed (fail closed)' };
  }
  if (!fm) {
    // A `---` block that is not valid frontmatter is indexed as body text (frontmatter_lines null), but
    // it may still have been meant to mark the note author-only.
    if (failClosed.bad.has(n.path) && inside()) {
      return { key: 'frontmatter', why: 'its frontmatter block cannot be parsed (bad_frontmatter), so it may be marked author-only; denied until it parses (fail closed)' };
    }
    const displacedAt = failClosed.displaced?.get(n.path);
    if (displacedAt === 1 && inside()) {
      return { key: 'frontmatter', why: 'its `---` block at the top is closed by the YAML end marker `...` (displaced_frontmatter): Obsidian does not read it as frontmatter, but it may be meant to mark the note author-only; denied until it is closed with `---` (fail closed)' };
    }
    if (displacedAt !== undefined && inside()) {
      return { key: 'frontmatter', why: 'its text opens with blank lines and then a `---` block (displaced_frontmatter): Obsidian does not read it as frontmatter, but it may be meant to mark the note author-only; denied until the blank lines are removed (fail closed)' };
    }
  }
  const hit = fm ? markerIn(fm, []) : null;
  if (hit !== null) return hit;
  const tag = bodyTags.find((t) => isHidingTag(t.target));
  return tag ? { key: tag.target, why: `its body tags it #${tag.target} (line ${tag.line})`, body: true } : null;
}

/**
 * The first marker of the hidden-note rule in a frontmatter mapping, searched depth first in key order: a
 * top-level key, then the keys of every nested mapping and of the mappings inside lists (`meta: {visibility:
 * author-only}`, `notes: [{secret: yes}]`). A nested marker hides the note like a top-level one (fail closed:
 * a reader cannot know which level its author meant Obsidian or a plugin to read). `key` is the path of keys
 * and list indices joined by `/` (`meta/visibility`), as the receipt pointer names it.
 */
function markerIn(map: Record<string, unknown>, at: string[], depth = 0): { key: string; why: string } | null {
  for (const key of Object.keys(map)) {
    const name = markerName(key);
    const value = map[key];
    const path = [...at, key].join('/');
    const where = at.length === 0 ? key : `${path.replace(/\//g, '.')}`;
    if (name === 'visibility') {
      const bad = nonPublicVisibility(value);
      if (bad !== undefined) return { key: path, why: `its frontmatter marks it ${where}: ${shownValue(bad)}` };
    } else if (MARKER_KEYS.includes(name)) {
      if (!isFalseMarker(value)) return { key: path, why: `its frontmatter marks it ${where}: ${shownValue(value)}` };
    } else if (name === 'publish') {
      if (!isTruePublish(value)) return { key: path, why: `its frontmatter marks it ${where}: ${shownValue(value)} (Obsidian Publish's opt-out)` };
    } else if (name === 'tags' || name === 'tag') {
      const tag = tagsOf(value).find(isHidingTag);
      if (tag !== undefined) return { key: path, why: `its frontmatter tags it ${where}: ${shownValue(tag)}` };
    }
    if (depth >= 32) continue;
    const nested = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : isJsonObject(value) ? [['', value] as const] : [];
    for (const [i, v] of nested) {
      if (!isJsonObject(v)) continue;
      const hit = markerIn(v, i === '' ? [...at, key] : [...at, key, i], depth + 1);
      if (hit !== null) return hit;
    }
  }
  return null;
}

/**
 * A folder name as the future-era rule compares it, read fail closed like the hidden rules (docs/TRAVERSAL.md
 * `hidden_ref`: Obsidian resolves names without regard to case): NFKD with every combining mark dropped
 * (`Élysium` is `elysium`; NFC and NFD spellings alike), format characters dropped, lower case, and every `-`,
 * `_`, white space and Unicode dash (`\p{Pd}`: U+2010 HYPHEN, en and em dashes…) dropped — so `post-elysium`,
 * `POST-ELYSIUM`, `Post Elysium`, `Post_Elysium`, `Post‐Elysium`, `Post-Élysium`, `Post-Elysium ` (a trailing
 * space) and `PostElysium` are all `postelysium`. Other characters stay: `Post-Elysium.d` is another folder.
 */
export function foldFolderName(name: string): string {
  return name.normalize('NFKD').replace(/[\p{M}\p{Cf}]/gu, '').toLowerCase().replace(/[\s\p{Pd}_]+/gu, '');
}

/** The default future-era folder name, folded ({@link foldFolderName}). */
const FUTURE_ERA_FOLDER = foldFolderName('Post-Elysium');

/** How the receipt says the default future-era folder name is compared. */
const FOLDED_WORDS = 'names compared folded (case, accents, -, _, spaces and Unicode dashes ignored)';

/**
 * Future-era prefixes, when a stop condition denies future-era lore: every `Post-Elysium/` folder of the
 * snapshot and a config's `future_era_prefixes` — a config outside the vault (`--config`, or one a caller
 * builds in code) replaces the default with its list; the vault's own config (or a `--config` inside the vault,
 * `configOrigin`) only adds to it, never removes it, and each row names the config it came from. The folder name is compared folded
 * ({@link foldFolderName}: `post-elysium/`, `Post Elysium/`, `Post-Élysium/` are future-era too). An allowed prefix inside one
 * requests that lore explicitly and waives the rule below it.
 * @throws LoretraceError `bad_policy` for a config prefix that is not a ref.
 */
export function compileFutureEra(ctx: CompileContext, futureOn: boolean, allowed: readonly string[]): FutureRules {
  const out: FutureRules = { future: [], waivers: [], rows: [] };
  if (!futureOn) return out;
  const { config, index } = ctx;
  const origin = configOrigin(config);
  const inVault = origin?.inside_vault === true;
  const configured = (config.future_era_prefixes ?? []).map((p, i) => ({
    prefix: ctx.refOrFail(p, `#/config/future_era_prefixes/${i}`, `config future_era_prefixes[${i}]`).path,
    pointer: `#/config/future_era_prefixes/${i}`,
    from: origin === undefined
      ? 'config future_era_prefixes, given by the caller: replaces the default'
      : inVault
        ? `the vault's own config ${origin.file} future_era_prefixes: added to the default, which a config inside the vault never removes`
        : `--config ${origin.file} future_era_prefixes, outside the vault: replaces the default`,
  }));
  let list: { prefix: string; pointer: string; from: string }[] = [];
  // A config outside the vault (or given in code) may replace the default; one inside the vault only adds to it:
  // the lore under protection never switches its own protection off (docs/RECEIPTS.md "the vault never vouches for itself").
  if (configured.length === 0 || inVault) {
    const found = new Set<string>();
    for (const n of index.notes) {
      const segs = n.path.split('/');
      for (let k = 0; k < segs.length - 1; k++) if (foldFolderName(segs[k]!) === FUTURE_ERA_FOLDER) found.add(segs.slice(0, k + 1).join('/') + '/');
    }
    list = [...found].sort(cmp).map((p, i) => ({ prefix: p, pointer: `#/default/future_era_prefixes/${i}`, from: `default: every Post-Elysium/ folder, ${FOLDED_WORDS}` }));
  }
  for (const c of configured) if (!list.some((l) => l.prefix === c.prefix)) list.push(c);
  for (const f of list) {
    out.future.push({ prefix: f.prefix, pointer: f.pointer });
    const w = allowed.filter((a) => isUnderPrefix(a, f.prefix));
    out.waivers.push(...w);
    const m = ctx.counted.filter((n) => isUnderPrefix(n.path, f.prefix) && !w.some((x) => isUnderPrefix(n.path, x))).length;
    out.rows.push({
      clause: f.prefix,
      kind: 'future_era_prefix',
      pointer: f.pointer,
      disposition: 'enforced',
      rule: `never consult ${f.prefix} (${f.from})${w.length ? `, except under ${w.join(', ')}, which allowed_prefixes requests explicitly` : ''}`,
      matches: m,
    });
  }
  return out;
}

/**
 * `required_seed_refs` → seed note paths, in policy order: each must be one existing note (its fragment
 * must resolve) that the policy's own path rules admit; `max_refs` must leave room for every seed.
 * @throws LoretraceError `bad_policy` (a folder, a refused seed, `max_refs` too small), `seed_not_found`.
 */
export function compileSeeds(ctx: CompileContext, rules: PathRules, seedsIn: readonly string[], stops: StopRules): { seeds: VaultPath[]; rows: PolicyReceiptRow[] } {
  const { fail, ptr, ns, index } = ctx;
  const seeds: VaultPath[] = [];
  const rows: PolicyReceiptRow[] = [];
  seedsIn.forEach((s, i) => {
    const pointer = ptr('required_seed_refs', i);
    const r = ctx.refOrFail(s, pointer, `required_seed_refs[${i}]`);
    if (r.is_prefix) fail(pointer, `traversal_policy ${pointer} ${show(s)} names a folder; a seed must be one note`, 'Namespace:path/to/note.md');
    if (!ctx.notes.has(r.path)) {
      fail(pointer, `required seed ${s} (${pointer}) is not in vault ${ns}: no note ${r.path}`, 'an existing note', 'seed_not_found');
    }
    if (r.fragment) {
      try {
        resolveRef(index, r);
      } catch (e) {
        if (isLoretraceError(e)) fail(pointer, `required seed ${s} (${pointer}): ${e.message}`, 'an existing heading, chunk, block or line range', 'seed_not_found');
        throw e;
      }
    }
    const chk = checkPathRules(rules, r.path);
    if (!chk.ok) {
      fail(pointer, `required seed ${s} (${pointer}) is refused by the policy itself: ${chk.detail}`, 'seeds inside allowed_prefixes and not denied');
    }
    seeds.push(r.path);
    rows.push({
      clause: s,
      kind: 'seed',
      pointer,
      disposition: 'enforced',
      rule: `consult ${r.path} first, at depth 0${seeds.indexOf(r.path) < seeds.length - 1 ? ' (duplicate: consulted once)' : ''}`,
      matches: 1,
    });
  });
  const { budgets, budgetSource } = stops;
  const distinct = new Set(seeds).size;
  if (budgets.max_refs !== null && budgets.max_refs < distinct) {
    const at = ptr('stop_conditions', budgetSource.max_refs ?? 0);
    fail(at, `traversal_policy ${at}: max_refs ${budgets.max_refs} is smaller than the ${distinct} required seeds`, `max_refs ≥ ${distinct}`);
  }
  return { seeds, rows };
}

/**
 * The packet's `lore_access.allowed_scope` → start points at depth 0, in packet order after the seeds
 * (seed 001: the allowed_scope is where research starts). A folder gives every note below it the
 * policy admits ({@link scopeFolderNotes}); an entry that is not a ref, names no note, or is refused is
 * an advisory row (not a start point), never an error: the scope is the packet's, not the policy's.
 * @throws LoretraceError `bad_policy` when `allowed_scope` is not a list.
 */
export function compileScope(ctx: CompileContext, rules: PathRules, seeds: readonly VaultPath[]): { scope: VaultPath[]; rows: PolicyReceiptRow[] } {
  const { ns } = ctx;
  const scope: VaultPath[] = [];
  const rows: PolicyReceiptRow[] = [];
  packetList(ctx.packet, ['lore_access', 'allowed_scope'], ctx.fail).forEach((sv, i) => {
    const s = typeof sv === 'string' ? sv : show(sv);
    const pointer = `/lore_access/allowed_scope/${i}`;
    const row = (disposition: 'enforced' | 'advisory', rule: string, matches: number) => rows.push({ clause: s, kind: 'allowed_scope', pointer, disposition, rule, matches });
    let r: ParsedRef | null = null;
    let why = '';
    try {
      r = parseRef(sv as string, { namespace: ns, label: `allowed_scope[${i}]` });
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
      why = e.message.replace(/^.*is not a valid lore ref: /, '');
    }
    if (r && r.is_prefix) {
      // A folder: every note under it the policy admits is a start point (scopeFolderNotes, shared with retrieve).
      const f = scopeFolderNotes(rules, r.path);
      if (!f.ok) { row('advisory', `not a start point: ${scopeRefusalDetail(ctx, r.path, f)}`, 0); return; }
      const known = new Set([...seeds, ...scope]);
      const fresh = f.notes.filter((p) => !known.has(p));
      scope.push(...fresh);
      const n = f.notes.length;
      const dups = n - fresh.length;
      row('enforced', `a folder: its ${n} note${n === 1 ? '' : 's'} the policy admits ${n === 1 ? 'is a start point' : 'are start points'} at depth 0, consulted best-first within the budgets${dups > 0 ? ` (${dups} already a seed or listed earlier)` : ''}`, n);
      return;
    }
    if (!r || !ctx.notes.has(r.path)) {
      row('advisory', r ? `no note ${r.path} in ${ns}; not a start point` : `not a lore ref of ${ns} (${why}); not a start point`, 0);
      return;
    }
    const chk = checkPathRules(rules, r.path);
    if (!chk.ok) { row('advisory', `not a start point: ${scopeRefusalDetail(ctx, r.path, chk)}`, 0); return; }
    const dup = seeds.includes(r.path) || scope.includes(r.path);
    if (!dup) scope.push(r.path);
    row('enforced', dup ? `start point ${r.path} (already a seed or listed earlier)` : `start point ${r.path} at depth 0, consulted best-first within the budgets`, 1);
  });
  return { scope, rows };
}

/**
 * Why an `allowed_scope` entry is not a start point, as its receipt row says it. The runner's receipt gives the
 * check's detail; the responder's view ({@link CompileOptions.responderView}) says of a hidden entry what it
 * says of a missing one, and of a folder with no admissible note no count of the notes it refuses, so the
 * row cannot tell the responder that hidden lore is there.
 */
function scopeRefusalDetail(ctx: CompileContext, path: string, check: { reason: string; detail: string }): string {
  if (!ctx.responderView) return check.detail;
  if (check.reason === 'hidden_ref' || check.reason === 'not_found') return path.endsWith('/') ? `folder ${path} has no note that may be a start point` : `no note ${path} in this snapshot`;
  return check.detail;
}

/**
 * `follow_link_classes` → {@link FollowRules}. An entry is, in this order: a syntax class, `backlink`,
 * a position class, `external`/`tag` (advisory: they never lead to a note), a target class of the
 * index, or a plain-English phrase mapped word by word (src/policy/synonyms.ts; advisory when no word
 * maps, partially_enforced when a qualifier word maps to nothing: "resident Jovian factions" follows
 * every faction note, so "resident" and "Jovian" are named as not enforced). An empty list follows no
 * link at all (enforced).
 */
export function compileFollowClasses(ctx: CompileContext, followIn: readonly string[]): { follow: FollowRules; rows: PolicyReceiptRow[] } {
  const { ptr, indexClasses, config } = ctx;
  const follow: FollowRules = { syntaxes: [], positions: [], classes: [], backlink: false };
  const rows: PolicyReceiptRow[] = [];
  if (followIn.length === 0) {
    rows.push({ clause: '[]', kind: 'follow_link_class', pointer: ptr('follow_link_classes'), disposition: 'enforced', rule: 'no link class is listed, so no link is followed (only seeds and scope notes are consulted)', matches: 0 });
  }
  followIn.forEach((f, i) => {
    const pointer = ptr('follow_link_classes', i);
    const name = f.trim();
    const row = (disposition: Disposition, rule: string, matches: number | null) =>
      rows.push({ clause: f, kind: 'follow_link_class', pointer, disposition, rule, matches });
    if ((SYNTAX_CLASSES as readonly string[]).includes(name)) {
      follow.syntaxes.push(name as LinkSyntax);
      row('enforced', `follow ${name} links (syntax class)`, null);
    } else if (name === 'backlink') {
      follow.backlink = true;
      row('enforced', 'walk inbound links in reverse (backlink)', null);
    } else if ((POSITION_CLASSES as readonly string[]).includes(name)) {
      follow.positions.push(name as LinkPosition);
      row('enforced', positionRule(name as LinkPosition), null);
    } else if (name === 'external' || name === 'tag') {
      row('advisory', `${name} links never lead to a lore note; nothing to follow`, 0);
    } else if (indexClasses.has(name)) {
      follow.classes.push(name);
      row('enforced', `follow links into notes of target class ${name}`, ctx.classNotes([name]));
    } else if (phrasePositionClass(name)) {
      const named = phrasePositionClass(name)!;
      follow.positions.push(named.position);
      row('enforced', positionRule(named.position, ` (the phrase names them: ${named.words.join(', ')}→${named.position})`), null);
    } else {
      const mapped = mapLinkClassPhrase(name, indexClasses, config.link_class_synonyms ?? {});
      if (mapped.classes.length === 0) {
        row('advisory', 'no word of this phrase maps to a link class or target class (see the synonym table); it adds nothing to what is followed', 0);
      } else {
        follow.classes.push(...mapped.classes);
        const how = mapped.words.map((w) => `${w.word}→${w.classes.join('+')}${w.via === 'synonym' ? '' : ` (${w.via === 'config' ? 'vault config' : 'index class'})`}`).join(', ');
        const absent = mapped.classes.filter((c) => !indexClasses.has(c));
        const dropped = unenforcedQualifiers(name, mapped);
        row(
          dropped.length > 0 ? 'partially_enforced' : 'enforced',
          `maps to target classes ${mapped.classes.join(', ')} (${how}); follow links into notes of these classes${absent.length ? `; no note has class ${absent.join(', ')}` : ''}${dropped.length ? `; not enforced: ${dropped.join(', ')} (every note of these classes is followed, whatever it says)` : ''}`,
          ctx.classNotes(mapped.classes),
        );
      }
    }
  });
  follow.syntaxes = [...new Set(follow.syntaxes)].sort(cmp);
  follow.positions = [...new Set(follow.positions)].sort(cmp);
  follow.classes = [...new Set(follow.classes)].sort(cmp);
  return { follow, rows };
}

/**
 * One receipt row per stop condition, saying what each effect does in this snapshot: a budget (and
 * whether a tighter clause wins), the prefix or class it denies with its note count, the future-era
 * and hidden rules it switched on. A clause whose every effect denies nothing here (no future-era
 * folder, nothing hidden) is advisory; a clause that matches no token and no pattern is advisory. A
 * plain-English clause whose patterns leave content words or an exception unaccounted for
 * (stop-conditions.ts `unaccountedStopWords`) is partially_enforced, and the rule names them:
 * "stop after 12 notes unless the scene needs more" enforces `max_refs:12` in every case, so the rule ends
 * `not enforced: "unless the scene needs more" (…)`.
 */
export function stopConditionRows(ctx: CompileContext, stopsIn: readonly string[], stops: StopRules, rules: PathRules, hidden: HiddenRules, future: FutureRules): PolicyReceiptRow[] {
  const { ptr, config, indexClasses } = ctx;
  const { budgets, budgetSource } = stops;
  const rows: PolicyReceiptRow[] = [];
  for (const { i, effects, patterns, form, dropped, exceptions } of stops.parsed) {
    const clause = stopsIn[i]!;
    const pointer = ptr('stop_conditions', i);
    if (form === 'unrecognised') {
      rows.push({ clause, kind: 'stop_condition', pointer, disposition: 'advisory', rule: 'matches no structured token and no documented plain-English pattern; not enforced by the walk (it constrains the answer, not the lookup)', matches: null });
      continue;
    }
    const parts: string[] = [];
    let enforced = false;
    let matches: number | null = null;
    for (const e of effects) {
      switch (e.kind) {
        case 'max_refs':
        case 'max_chunks':
        case 'max_chars':
        case 'time_budget_ms':
        case 'min_relevance':
        case 'min_relative_relevance':
        case 'min_score_ratio': {
          const tight = budgetSource[e.kind] === i;
          parts.push(`${e.kind}:${e.value}${tight ? '' : ` (a tighter ${e.kind} from another clause wins: ${budgets[e.kind]})`}`);
          enforced = true;
          break;
        }
        case 'deny_prefix': {
          const d = rules.denied_prefixes.find((x) => x.pointer === pointer)!;
          matches = ctx.countUnder(d.prefix);
          parts.push(`never consult ${d.prefix}`);
          enforced = true;
          break;
        }
        case 'deny_class':
          matches = ctx.classNotes([e.value]);
          parts.push(`never consult notes of class ${e.value}${indexClasses.has(e.value) ? '' : ' (no note has it)'}`);
          enforced = true;
          break;
        case 'no_expand_class':
          matches = ctx.classNotes([e.value]);
          parts.push(`consult notes of class ${e.value} but do not walk their links`);
          enforced = true;
          break;
        case 'deny_future_era': {
          const m = future.rows.reduce((a, r) => a + (r.matches ?? 0), 0);
          matches = (matches ?? 0) + m;
          // The responder's view names no future-era prefix and says nothing of whether one exists: the default
          // list is read from the vault's folders, so naming it would tell that future-era lore exists.
          if (ctx.responderView) parts.push(`deny future-era lore: every future-era prefix (every Post-Elysium/ folder, ${FOLDED_WORDS}, and a config's future_era_prefixes, which only a config outside the vault may put in the default's place) is denied (the prefixes are enforced but not listed here)`);
          else if (future.future.length === 0) parts.push(`deny future-era lore: no future-era prefix is configured and no Post-Elysium/ folder exists (${FOLDED_WORDS}), so nothing is denied`);
          else { parts.push(`deny future-era prefixes ${future.future.map((f) => f.prefix).join(', ')}${future.waivers.length ? ` except explicitly allowed ${[...new Set(future.waivers)].join(', ')}` : ''}`); }
          enforced = enforced || future.future.length > 0 || ctx.responderView;
          break;
        }
        case 'deny_hidden': {
          const nRefs = packetList(ctx.packet, ['hidden_context_audit', 'omitted_context_refs'], ctx.fail).length;
          const nPref = (config.hidden_prefixes ?? []).length;
          const nNotes = hidden.rows.filter((r) => r.kind === 'hidden_note').length;
          matches = (matches ?? 0) + hidden.noteCount;
          const nSections = hidden.sections.length;
          if (ctx.responderView) {
            // The responder's view: no count of hidden refs, prefixes, notes or sections, not even whether there are any.
            parts.push('deny hidden lore: every hidden_context_audit ref, config hidden_prefix and note marked author-only is denied (the hidden rows are enforced but not listed here)');
            enforced = true;
          } else if (hidden.hidden.length === 0 && nSections === 0) {
            parts.push(`deny hidden lore: nothing is known to be hidden (${nRefs} hidden_context_audit refs, ${nPref} config hidden_prefixes, no note marked author-only)`);
          } else {
            parts.push(`deny hidden lore: ${hidden.hidden.length} deny rule(s) and ${nSections} hidden section(s) from ${nRefs} hidden_context_audit ref(s), ${nPref} config hidden_prefix(es) and ${nNotes} note(s) marked author-only (always denied; see the hidden rows)`);
            enforced = true;
          }
          break;
        }
      }
    }
    const how = form === 'token' ? 'structured token' : `pattern ${patterns!.join(' + ')}`;
    const notEnforced: string[] = [];
    if (exceptions.length > 0) notEnforced.push(`${exceptions.map((x) => JSON.stringify(x)).join(', ')} (the rule applies in every case; loretrace does not evaluate the exception)`);
    if (dropped.length > 0) {
      const why = patterns!.includes('not_relevant') ? 'relevance is measured against the walk\'s queries, not against these words' : 'the rule applies whatever these words say';
      notEnforced.push(`${dropped.join(', ')} (${why})`);
    }
    const disposition: Disposition = !enforced ? 'advisory' : notEnforced.length > 0 ? 'partially_enforced' : 'enforced';
    rows.push({ clause, kind: 'stop_condition', pointer, disposition, rule: `${how}: ${parts.join('; ')}${notEnforced.length ? `; not enforced: ${notEnforced.join('; ')}` : ''}`, matches });
  }
  return rows;
}

/** Rows per disposition, zeros included (seed 003). */
export function receiptTotals(receipt: readonly PolicyReceiptRow[]): ReceiptTotals {
  const count = (d: Disposition) => receipt.filter((r) => r.disposition === d).length;
  return { enforced: count('enforced'), partially_enforced: count('partially_enforced'), advisory: count('advisory') };
}

/**
 * `--strict-policy`: refuse a receipt with any row short of `enforced` (`partially_enforced` or
 * `advisory`).
 * @throws LoretraceError `strict_policy` listing every such row (pointer, clause, disposition);
 *   `details.data.not_enforced` carries the rows.
 */
function refuseNotEnforced(ctx: CompileContext, receipt: readonly PolicyReceiptRow[]): void {
  const short = receipt.filter((r) => r.disposition !== 'enforced');
  if (short.length === 0) return;
  throw new LoretraceError(
    'strict_policy',
    `--strict-policy refuses this policy: ${short.length} clause${short.length === 1 ? ' is' : 's are'} not fully enforced: ${short.map((r) => `${r.pointer} ${show(r.clause)} (${r.disposition})`).join('; ')}`,
    { ...(ctx.file ? { file: ctx.file } : {}), pointer: short[0]!.pointer, expected: 'every clause enforced', data: { not_enforced: short } },
  );
}

type PathRules = Pick<CompiledPolicy, 'allowed_prefixes' | 'denied_prefixes' | 'hidden' | 'hidden_sections' | 'future_era' | 'future_era_waivers' | 'denied_classes' | 'notes'>;

/**
 * The prefix checks a note path and a scope folder share, in checkPath's order: hidden prefixes
 * (`hidden_ref`), future-era prefixes unless waived (`future_era`), `allowed_prefixes` and `deny_prefix:`
 * (`prefix_denied`). `path` is a vault-relative note path or a folder path ending in `/`.
 */
function checkPrefixRules(c: PathRules, path: string): CheckResult {
  for (const h of c.hidden) {
    if (isUnderPrefix(path, h.prefix)) return { ok: false, reason: 'hidden_ref', detail: `${path} is hidden (${h.prefix}, ${h.pointer})` };
  }
  return checkScopeRules(c, path);
}

/**
 * The scope part of {@link checkPrefixRules}, hidden rules left out: future-era prefixes unless waived
 * (`future_era`), `allowed_prefixes` and `deny_prefix:` (`prefix_denied`). Whether a path is "not yours"
 * must not depend on whether it is hidden, or the answer would tell hidden lore from absent lore.
 */
function checkScopeRules(c: PathRules, path: string): CheckResult {
  for (const f of c.future_era) {
    if (isUnderPrefix(path, f.prefix) && !c.future_era_waivers.some((w) => isUnderPrefix(path, w))) {
      return { ok: false, reason: 'future_era', detail: `${path} is future-era lore (${f.prefix}, ${f.pointer})` };
    }
  }
  if (!c.allowed_prefixes.some((p) => isUnderPrefix(path, p))) {
    return { ok: false, reason: 'prefix_denied', detail: `${path} is outside allowed_prefixes (${c.allowed_prefixes.join(', ')})` };
  }
  for (const d of c.denied_prefixes) {
    if (isUnderPrefix(path, d.prefix)) return { ok: false, reason: 'prefix_denied', detail: `${path} is under denied prefix ${d.prefix} (${d.pointer})` };
  }
  return { ok: true };
}

function checkPathRules(c: PathRules, path: string): CheckResult {
  const note = c.notes.get(path);
  if (!note) return { ok: false, reason: 'not_found', detail: `no note ${path} in this snapshot` };
  const prefixes = checkPrefixRules(c, path);
  if (!prefixes.ok) return prefixes;
  for (const cls of note.classes) {
    if (c.denied_classes.includes(cls)) return { ok: false, reason: 'class_not_allowed', detail: `${path} has denied class ${cls} (deny_class)` };
  }
  return { ok: true };
}

/**
 * May this note be consulted? The one path check used by the traversal and the proxy. Pure and cheap
 * (a few prefix comparisons). Checks, in order: the note exists in the compiled snapshot (`not_found`);
 * hidden refs and hidden prefixes (`hidden_ref`); future-era prefixes when a stop condition denies them
 * (`future_era`); `allowed_prefixes` and `deny_prefix:` (`prefix_denied`); `deny_class:` (`class_not_allowed`).
 *
 * @param path vault-relative note path (no namespace; parse refs with `parseRef` first).
 */
export function checkPath(compiled: CompiledPolicy, path: string): CheckResult {
  return checkPathRules(compiled, path);
}

/**
 * The scope-only part of {@link checkPath}: future-era prefixes (`future_era`), `allowed_prefixes` and
 * `deny_prefix:` (`prefix_denied`) — whether or not a note exists at `path` and whether or not it is hidden
 * (hidden refs, config `hidden_prefixes` and author-only notes are not consulted). The proxy answers "not
 * yours" from it, so an existing, an absent and a hidden out-of-prefix ref are indistinguishable to the
 * client (one code, one message shape); the ledger keeps the real reason from checkPath.
 */
export function checkPathPrefixes(compiled: CompiledPolicy, path: string): CheckResult {
  return checkScopeRules(compiled, path);
}

/** What a folder entry of `allowed_scope` gives: its start points, or why it gives none. */
export type ScopeFolderResult = { ok: true; notes: VaultPath[] } | { ok: false; reason: EdgeSkipReason; detail: string };

/**
 * The start points a folder entry of a packet's `allowed_scope` (`Namespace:folder/`, seed 001: the
 * allowed_scope is where research starts) gives: every note below the folder (whole segments) that
 * {@link checkPath} admits, in code-unit path order, each at depth 0 like a listed note. The folder itself
 * is checked first, in checkPath's order, so a scope entry never names refused lore: not under a hidden
 * prefix (`hidden_ref`), not future-era unless waived (`future_era`), inside `allowed_prefixes` and not
 * under a `deny_prefix:` (`prefix_denied`); a folder with no admissible note gives `not_found`. Notes
 * below it that the policy refuses (a hidden note, a denied class) are simply not start points.
 * The one rule for folder scope: compilePolicy turns it into `scope` (and its receipt row), buildPacket
 * (`retrieve`) refuses an entry it rejects with `ref_out_of_scope`, and the proxy session admits
 * `compiled.scope`.
 *
 * @param folder vault-relative folder path ending in `/` (no namespace), as parseRef returns it.
 */
export function scopeFolderNotes(compiled: PathRules, folder: string): ScopeFolderResult {
  const prefixes = checkPrefixRules(compiled, folder);
  if (!prefixes.ok) return prefixes;
  const under = [...compiled.notes.keys()].filter((p) => isUnderPrefix(p, folder)).sort(cmp);
  const notes = under.filter((p) => checkPathRules(compiled, p).ok);
  if (notes.length === 0) {
    const why = under.length === 0 ? 'no note in this snapshot is under it' : `the policy refuses all ${under.length} note${under.length === 1 ? '' : 's'} under it`;
    return { ok: false, reason: 'not_found', detail: `folder ${folder} has no note that may be a start point: ${why}` };
  }
  return { ok: true, notes };
}

/** Direction of an edge: `outbound` follows a link to its target; `inbound` walks a backlink to its source. */
export type EdgeDirection = 'outbound' | 'inbound';

/** The class label of an edge as shown in traversal decisions: `wikilink/field`, `backlink(wikilink/prose)`. */
export function edgeClassLabel(link: Pick<LinkRecord, 'syntax' | 'position'>, direction: EdgeDirection = 'outbound'): string {
  const base = `${link.syntax}/${link.position}`;
  return direction === 'inbound' ? `backlink(${base})` : base;
}

/** The note an edge leads to, or null when the link does not resolve to a note. */
export function edgeTarget(link: LinkRecord, direction: EdgeDirection = 'outbound'): VaultPath | null {
  if (direction === 'inbound') return link.source_path;
  const r = link.resolution;
  if (r.status === 'resolved' || r.status === 'ambiguous' || r.status === 'broken_fragment') return r.path;
  return null;
}

/**
 * May the walk (or the proxy's `follow_link`) cross this edge from a note at `depthOfSource`?
 * Checks, in order: the link resolves to a note (`unresolved`: unresolved, external or pending links);
 * `depthOfSource + 1 ≤ max_link_depth` (`depth_exceeded`); {@link checkPath} on the target
 * (`hidden_ref`, `future_era`, `prefix_denied`, `class_not_allowed`, `not_found`); the edge matches a
 * `follow_link_classes` entry (`class_not_allowed`): an outbound link matches when its syntax, its
 * position, or one of its target's classes is listed (entries are alternatives); an inbound link is
 * walked only when `backlink` is listed.
 */
export function checkEdge(compiled: CompiledPolicy, link: LinkRecord, depthOfSource: number, direction: EdgeDirection = 'outbound'): CheckResult {
  const target = edgeTarget(link, direction);
  if (target === null) {
    const r = link.resolution;
    const what = r.status === 'external' ? `external link ${r.url}` : `${r.status} link ${link.raw}`;
    return { ok: false, reason: 'unresolved', detail: `${what} at ${link.source_path}:${link.line} leads to no note` };
  }
  if (depthOfSource + 1 > compiled.max_link_depth) {
    return { ok: false, reason: 'depth_exceeded', detail: `depth ${depthOfSource + 1} > max_link_depth ${compiled.max_link_depth}` };
  }
  const p = checkPathRules(compiled, target);
  if (!p.ok) return p;
  const f = compiled.follow;
  if (direction === 'inbound') {
    return f.backlink ? { ok: true } : { ok: false, reason: 'class_not_allowed', detail: 'backlink is not in follow_link_classes' };
  }
  if (f.syntaxes.includes(link.syntax) || f.positions.includes(link.position)) return { ok: true };
  const classes = compiled.notes.get(target)?.classes ?? [];
  if (classes.some((c) => f.classes.includes(c))) return { ok: true };
  return {
    ok: false,
    reason: 'class_not_allowed',
    detail: `${edgeClassLabel(link)} link into classes [${classes.join(', ')}] matches no follow_link_classes entry`,
  };
}

/** Documented plain-English stop patterns (re-exported for docs and the receipt). */
export { STOP_PATTERNS, DEFAULT_MIN_RELEVANCE, DEFAULT_MIN_RELATIVE_RELEVANCE, DEFAULT_MIN_SCORE_RATIO };

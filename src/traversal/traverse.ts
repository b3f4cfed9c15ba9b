/**
 * The best-first walk: apply a compiled traversal_policy to a vault index and return verbatim
 * `source_excerpts`, `runner_captured` `research_trace` entries, and a decision for every candidate edge.
 *
 * Walk order (docs/TRAVERSAL.md "Walk"):
 * 1. Seeds (`required_seed_refs`) are consulted first, in policy order, at depth 0 — always.
 * 2. `allowed_scope` notes (packet) are start points at depth 0, consulted next, best-first.
 * 3. Then link targets, best-first by: relevance (desc), field-line links to it (desc), mentions
 *    (desc), depth (asc), path (code-unit order). A note is consulted at most once.
 * 4. Consulting a note at depth d enumerates its links (and backlinks when `backlink` is listed) as
 *    candidate edges to depth d+1; each goes through `checkEdge` (src/policy), the relevance floor and
 *    the visited set, and is recorded in `decisions`.
 * 5. Budgets (`max_refs`, `max_chunks`, `max_chars`, `time_budget_ms`) end the walk; what was still
 *    queued is recorded as `budget_exhausted`. `max_chars` also ends it as soon as an excerpt that
 *    would fit the per-excerpt bound no longer fits the remaining characters.
 *
 * Relevance of a note (0..1): for each query, B's `search` (MiniSearch BM25, exact terms) restricted to
 * the notes the policy admits; a chunk's score divided by the best score of that query; a note's
 * relevance is its best chunk's. With no queries, the seed notes' titles are the query.
 *
 * Pure: reads only the index (chunk texts are the verbatim lines, by the chunk invariant); same index +
 * policy + queries ⇒ identical result (the one exception is a `time_budget_ms` that runs out).
 */
import type { Chunk, LinkRecord, LoreRef, VaultIndex, VaultPath } from '../types.js';
import type { ResearchTraceEntry, SourceExcerpt } from '../contracts/types.js';
import { LoretraceError } from '../errors.js';
import { backlinks, chunksOf, getNote, outgoingLinks } from '../indexer/lookup.js';
import { search } from '../search/search.js';
import { checkEdge, checkPath, edgeClassLabel, edgeTarget } from '../policy/compile.js';
import type { EdgeDirection } from '../policy/compile.js';
import type { CompiledPolicy, PolicyReceiptRow, EdgeSkipReason } from '../policy/types.js';
import { cmp } from '../policy/synonyms.js';
import { formatRef, resolveRef } from '../refs/ref.js';
import { excerptRefId, pickExcerptLines } from '../excerpts/excerpt.js';
import { makeTraceEntry } from '../excerpts/trace.js';

/** Version of the traverse result shape (schemas/traverse-result.schema.json). */
export const TRAVERSE_RESULT_VERSION = 'loretrace.traverse_result.v1';

/** Default upper bound on one excerpt's text, in characters (UTF-16 code units). */
export const DEFAULT_EXCERPT_MAX_CHARS = 900;

/** Options of {@link traverse}. */
export interface TraverseOptions {
  /**
   * Queries: the scene query and each runtime retrieval requirement, as text or `{ text, used_for }`
   * (`used_for` names what asked for it, e.g. `runtime_retrieval_requirements[0] turn-06.lucent-lore`,
   * and is appended to the trace entries it produced). Empty → the seed notes' titles
   * (an `index` note contributes its folder's name).
   */
  queries?: readonly TraverseQuery[];
  /** Upper bound on one excerpt (characters); default {@link DEFAULT_EXCERPT_MAX_CHARS}. */
  excerptMaxChars?: number;
  /** Excerpts per consulted note (its most relevant chunks); default 1. */
  excerptsPerNote?: number;
  /** Clock for `time_budget_ms` (milliseconds); default `performance.now`. */
  now?: () => number;
}

/** A query: plain text, or text plus what asked for it. */
export type TraverseQuery = string | { text: string; used_for?: string };

/** Every reason a candidate edge can be skipped (all appear in `stats.skipped_by_reason`, zeros included). */
export const SKIP_REASONS: readonly EdgeSkipReason[] = [
  'prefix_denied', 'class_not_allowed', 'depth_exceeded', 'budget_exhausted', 'below_relevance',
  'hidden_ref', 'future_era', 'unresolved', 'already_visited', 'not_expanded', 'not_found',
];

/**
 * One candidate edge and what happened to it. Links from one note to one target with the same class
 * are one decision (their lines listed).
 * - `from`: `Namespace:path` of the source (for an `allowed_scope` start point: `allowed_scope`).
 * - `to`: `Namespace:path` of the target, or the raw link text when it resolves to no note.
 * - `link_class`: `syntax/position` (`wikilink/field`), `backlink(syntax/position)`, or `allowed_scope`.
 * - `lines`: 1-based lines where the link stands — in `from` for an outbound link, in `to` for a
 *   backlink; empty for scope start points.
 * - `depth`: link hops from a seed the target would have.
 * - `outcome`/`reason`: `followed` (reason null) or `skipped` with a {@link EdgeSkipReason}.
 * - `relevance`: the target's relevance (0..1, 6 decimals) when known, else null.
 * - `detail`: the rule that decided, in words.
 */
export interface TraversalDecision {
  from: string;
  to: string;
  link_class: string;
  lines: number[];
  depth: number;
  outcome: 'followed' | 'skipped';
  reason: EdgeSkipReason | null;
  relevance: number | null;
  detail: string;
}

/** Why the walk ended. */
export type StopReason = 'frontier_exhausted' | 'max_refs' | 'max_chunks' | 'max_chars' | 'time_budget_ms';

/** Counters of a walk — every total present, zeros included (seed 003). */
export interface TraverseStats {
  /** The query texts actually used (given queries, or the seed-title fallback). */
  queries: string[];
  query_source: 'given' | 'seed_titles';
  notes_consulted: number;
  seeds_consulted: number;
  scope_consulted: number;
  followed: number;
  excerpts: number;
  /** Characters (UTF-16 code units) of all excerpt texts. */
  excerpt_chars: number;
  /** Consulted notes for which no excerpt was produced (budget, or no line fits the bound). */
  consulted_without_excerpt: number;
  decisions: { total: number; followed: number; skipped: number };
  skipped_by_reason: Record<EdgeSkipReason, number>;
  /** Link records not treated as edges: external URLs and #tags. */
  links_ignored: { external: number; tag: number };
  /** Deepest depth actually consulted. */
  max_depth_reached: number;
  stopped_by: StopReason;
  budgets: CompiledPolicy['budgets'];
  receipt_totals: { enforced: number; advisory: number };
}

/** What {@link traverse} returns (and `loretrace traverse --json` prints). */
export interface TraverseResult {
  schema_version: typeof TRAVERSE_RESULT_VERSION;
  snapshot_id: string;
  policy_receipt: PolicyReceiptRow[];
  /** Start notes (seeds, then scope notes) actually read, `Namespace:path`, in consult order. */
  consulted_refs: LoreRef[];
  /** Notes reached by links beyond the start notes, `Namespace:path`, in consult order. */
  followed_refs: LoreRef[];
  source_excerpts: SourceExcerpt[];
  research_trace: ResearchTraceEntry[];
  decisions: TraversalDecision[];
  stats: TraverseStats;
}

interface Candidate {
  path: VaultPath;
  depth: number;
  tier: 0 | 1; // 0 = allowed_scope start point, 1 = link target
  relevance: number;
  field: number;
  mentions: number;
  /** Indexes into decisions of the edges proposing this candidate (pending until it is popped). */
  pending: number[];
  usedFor: string;
  /** Chunk a link fragment points at, preferred when no chunk is relevant. */
  linkChunk: number | null;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/**
 * Walk the vault under a compiled policy.
 *
 * @param index the vault index the policy was compiled against (same snapshot).
 * @param compiled from `compilePolicy`.
 * @returns the {@link TraverseResult}; `research_trace[i]` belongs to `source_excerpts[i]`.
 * @throws LoretraceError `snapshot_mismatch` when the policy was compiled against another snapshot.
 */
export function traverse(index: VaultIndex, compiled: CompiledPolicy, options: TraverseOptions = {}): TraverseResult {
  if (compiled.snapshot_id !== index.snapshot_id) {
    throw new LoretraceError('snapshot_mismatch', `the policy was compiled against snapshot ${compiled.snapshot_id}, not ${index.snapshot_id}; compile it again for this index`);
  }
  const ns = index.namespace;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const excerptMax = options.excerptMaxChars ?? DEFAULT_EXCERPT_MAX_CHARS;
  const perNote = options.excerptsPerNote ?? 1;
  const budgets = compiled.budgets;
  const noteRef = (p: string) => formatRef(ns, p);

  // ---- queries and relevance ---------------------------------------------------------------------
  const queryLabel = new Map<string, string>();
  const given: string[] = [];
  for (const q of options.queries ?? []) {
    const text = (typeof q === 'string' ? q : q.text).trim();
    if (text.length === 0 || given.includes(text)) continue;
    given.push(text);
    if (typeof q !== 'string' && q.used_for) queryLabel.set(text, q.used_for);
  }
  const queries = given.length > 0 ? given : [...new Set(compiled.seeds.map((s) => seedTitle(index, s)))];
  const admitted = index.notes.filter((n) => checkPath(compiled, n.path).ok).map((n) => n.path);
  const admittedChunks = admitted.reduce((a, p) => a + chunksOf(index, p).length, 0);
  const chunkRel = new Map<string, { rel: number; query: string }>();
  const noteRel = new Map<string, number>();
  if (admittedChunks > 0) {
    for (const q of queries) {
      const hits = search(index, q, { k: admittedChunks, paths: admitted, expand: false, phrase: false });
      const top = hits[0]?.score ?? 0;
      if (top <= 0) continue;
      for (const h of hits) {
        const rel = round6(h.score / top);
        const key = `${h.path}#${h.chunk_index}`;
        const cur = chunkRel.get(key);
        if (!cur || rel > cur.rel) chunkRel.set(key, { rel, query: q });
        if (rel > (noteRel.get(h.path) ?? 0)) noteRel.set(h.path, rel);
      }
    }
  }
  const relOf = (p: string) => noteRel.get(p) ?? 0;

  // ---- state -------------------------------------------------------------------------------------
  const decisions: TraversalDecision[] = [];
  const consulted = new Map<string, number>(); // path → depth
  const consultedRefs: LoreRef[] = [];
  const followedRefs: LoreRef[] = [];
  const excerpts: SourceExcerpt[] = [];
  const trace: ResearchTraceEntry[] = [];
  const usedRefIds = new Set<string>();
  const frontier = new Map<string, Candidate>();
  let chars = 0;
  let stoppedBy: StopReason = 'frontier_exhausted';
  let seedsConsulted = 0;
  let scopeConsulted = 0;
  let withoutExcerpt = 0;
  let charsBlocked = false; // an excerpt did not fit only because max_chars is nearly spent
  let maxDepth = 0;
  const ignored = { external: 0, tag: 0 };

  const budgetReached = (): StopReason | null => {
    if (budgets.max_refs !== null && consulted.size >= budgets.max_refs) return 'max_refs';
    if (budgets.max_chunks !== null && excerpts.length >= budgets.max_chunks) return 'max_chunks';
    if (budgets.max_chars !== null && (chars >= budgets.max_chars || charsBlocked)) return 'max_chars';
    if (budgets.time_budget_ms !== null && now() - started > budgets.time_budget_ms) return 'time_budget_ms';
    return null;
  };

  // ---- excerpts ----------------------------------------------------------------------------------
  const excerptNote = (path: VaultPath, usedFor: string, preferred: { chunk: number | null; lines: [number, number] | null }) => {
    const chunks = chunksOf(index, path);
    let ranked: Chunk[];
    if (preferred.lines) {
      const [a, b] = preferred.lines;
      ranked = chunks.filter((c) => c.line_end >= a && c.line_start <= b);
    } else {
      ranked = [...chunks].sort((x, y) => {
        const rx = chunkRel.get(`${path}#${x.chunk_index}`)?.rel ?? 0;
        const ry = chunkRel.get(`${path}#${y.chunk_index}`)?.rel ?? 0;
        if (ry !== rx) return ry - rx;
        const px = x.chunk_index === preferred.chunk ? 0 : 1;
        const py = y.chunk_index === preferred.chunk ? 0 : 1;
        return px - py || x.chunk_index - y.chunk_index;
      });
    }
    let made = 0;
    for (const c of ranked) {
      if (made >= perNote) break;
      if (budgets.max_chunks !== null && excerpts.length >= budgets.max_chunks) break;
      const room = budgets.max_chars === null ? excerptMax : Math.min(excerptMax, budgets.max_chars - chars);
      if (room < 1) { charsBlocked = true; break; }
      let lines = c.text.split('\n');
      let offset = c.line_start;
      if (preferred.lines) {
        const a = Math.max(preferred.lines[0], c.line_start);
        const b = Math.min(preferred.lines[1], c.line_end);
        lines = lines.slice(a - c.line_start, b - c.line_start + 1);
        offset = a;
      }
      const pick = pickExcerptLines(lines, queries, room, { lineOffset: offset });
      if (!pick) {
        if (room < excerptMax && pickExcerptLines(lines, queries, excerptMax, { lineOffset: offset })) charsBlocked = true;
        continue;
      }
      const rel = chunkRel.get(`${path}#${c.chunk_index}`);
      let refId = excerptRefId(path, c.chunk_index);
      if (usedRefIds.has(refId)) refId = excerptRefId(path, c.chunk_index, true);
      for (let k = 2; usedRefIds.has(refId); k++) refId = `${excerptRefId(path, c.chunk_index, true)}.${k}`;
      usedRefIds.add(refId);
      const sourceRef = formatRef(ns, path, { kind: 'chunk', index: c.chunk_index });
      const query = pick.terms_matched > 0 && rel ? rel.query : `lookup ${sourceRef}`;
      const label = queryLabel.get(query);
      excerpts.push({ ref_id: refId, source_ref: sourceRef, text: pick.text });
      trace.push(makeTraceEntry({
        trace_id: `trace.${refId.replace(/^lore\./, '')}`,
        query,
        namespace: ns,
        path,
        chunk_index: c.chunk_index,
        line_start: pick.line_start,
        line_end: pick.line_end,
        text: pick.text,
        used_for: label ? `${usedFor}; query from ${label}` : usedFor,
      }));
      chars += pick.chars;
      made++;
    }
    if (made === 0) withoutExcerpt++;
  };

  // ---- consult + expand --------------------------------------------------------------------------
  const consult = (path: VaultPath, depth: number, usedFor: string, preferred: { chunk: number | null; lines: [number, number] | null }) => {
    consulted.set(path, depth);
    maxDepth = Math.max(maxDepth, depth);
    excerptNote(path, usedFor, preferred);
    expand(path, depth);
  };

  const expand = (path: VaultPath, depth: number) => {
    const note = getNote(index, path)!;
    const noExpand = note.classes.find((c) => compiled.no_expand_classes.includes(c));
    type Group = { link: LinkRecord; dir: EdgeDirection; lines: number[]; field: number; target: string | null };
    const groups = new Map<string, Group>();
    const add = (link: LinkRecord, dir: EdgeDirection) => {
      if (link.syntax === 'tag') { if (dir === 'outbound') ignored.tag++; return; }
      if (link.syntax === 'external' || link.resolution.status === 'external') { if (dir === 'outbound') ignored.external++; return; }
      const target = edgeTarget(link, dir);
      const label = edgeClassLabel(link, dir);
      const key = `${dir}\u0000${target ?? 'unresolved:' + link.target}\u0000${label}`;
      const g = groups.get(key);
      const line = link.line;
      if (g) {
        if (!g.lines.includes(line)) g.lines.push(line);
        if (link.position === 'field') g.field++;
      } else {
        groups.set(key, { link, dir, lines: [line], field: link.position === 'field' ? 1 : 0, target });
      }
    };
    for (const l of outgoingLinks(index, path)) add(l, 'outbound');
    if (compiled.follow.backlink) for (const l of backlinks(index, path)) if (l.source_path !== path) add(l, 'inbound');

    for (const g of groups.values()) {
      const from = noteRef(path);
      const to = g.target !== null ? noteRef(g.target) : g.link.raw;
      const label = edgeClassLabel(g.link, g.dir);
      const base = { from, to, link_class: label, lines: g.lines, depth: depth + 1 };
      const skip = (reason: EdgeSkipReason, detail: string, relevance: number | null = null) =>
        decisions.push({ ...base, outcome: 'skipped', reason, relevance, detail });
      if (noExpand) {
        skip('not_expanded', `${path} has class ${noExpand} (no_expand_class): its links are not walked`);
        continue;
      }
      const chk = checkEdge(compiled, g.link, depth, g.dir);
      if (!chk.ok) {
        skip(chk.reason, chk.detail, g.target !== null && chk.reason !== 'unresolved' ? round6(relOf(g.target)) : null);
        continue;
      }
      const target = g.target as VaultPath;
      const rel = round6(relOf(target));
      if (target === path || consulted.has(target)) {
        skip('already_visited', `${target} was already consulted`, rel);
        continue;
      }
      const cand = frontier.get(target);
      const mentionCount = g.lines.length;
      const idx = decisions.length;
      if (cand) {
        decisions.push({ ...base, outcome: 'skipped', reason: null, relevance: rel, detail: 'pending' });
        cand.pending.push(idx);
        cand.mentions += mentionCount;
        cand.field += g.field;
        if (depth + 1 < cand.depth) cand.depth = depth + 1;
        continue;
      }
      if (budgets.min_relevance !== null && rel < budgets.min_relevance) {
        skip('below_relevance', `relevance ${rel} < min_relevance ${budgets.min_relevance}`, rel);
        continue;
      }
      decisions.push({ ...base, outcome: 'skipped', reason: null, relevance: rel, detail: 'pending' });
      const frag = g.dir === 'outbound' && g.link.resolution.status !== 'unresolved' && 'chunk_index' in g.link.resolution ? g.link.resolution.chunk_index ?? null : null;
      frontier.set(target, {
        path: target,
        depth: depth + 1,
        tier: 1,
        relevance: rel,
        field: g.field,
        mentions: mentionCount,
        pending: [idx],
        usedFor: `${g.dir === 'inbound' ? 'backlink' : 'link'} ${g.link.raw} (${label}) ${g.dir === 'inbound' ? 'to' : 'from'} ${from} line ${g.link.line}, depth ${depth + 1}`,
        linkChunk: frag,
      });
    }
  };

  // ---- 1. seeds: all read first (so links between seeds are already_visited), then expanded --------
  const seedRows = compiled.receipt.filter((r) => r.kind === 'seed');
  const seedOrder: VaultPath[] = [];
  compiled.seeds.forEach((seed, i) => {
    if (consulted.has(seed)) return;
    // A seed fragment (`#Rescue Ledgers`) narrows the excerpt to that section.
    const raw = seedRows[i]?.clause ?? noteRef(seed);
    let lines: [number, number] | null = null;
    if (raw.includes('#')) {
      const r = resolveRef(index, raw);
      lines = [r.line_start, r.line_end];
    }
    seedsConsulted++;
    consultedRefs.push(noteRef(seed));
    consulted.set(seed, 0);
    seedOrder.push(seed);
    excerptNote(seed, `required_seed_refs[${i}] ${raw}`, { chunk: null, lines });
  });

  // ---- 2. scope start points (registered before any link is seen) -------------------------------
  compiled.scope.forEach((p) => {
    if (consulted.has(p)) return;
    const idx = decisions.length;
    decisions.push({ from: 'allowed_scope', to: noteRef(p), link_class: 'allowed_scope', lines: [], depth: 0, outcome: 'skipped', reason: null, relevance: round6(relOf(p)), detail: 'pending' });
    frontier.set(p, { path: p, depth: 0, tier: 0, relevance: relOf(p), field: 0, mentions: 0, pending: [idx], usedFor: `allowed_scope ${noteRef(p)}`, linkChunk: null });
  });
  for (const seed of seedOrder) expand(seed, 0);

  // ---- 3. best-first -----------------------------------------------------------------------------
  const better = (a: Candidate, b: Candidate): boolean => {
    if (a.tier !== b.tier) return a.tier < b.tier;
    if (a.relevance !== b.relevance) return a.relevance > b.relevance;
    if (a.field !== b.field) return a.field > b.field;
    if (a.mentions !== b.mentions) return a.mentions > b.mentions;
    if (a.depth !== b.depth) return a.depth < b.depth;
    return cmp(a.path, b.path) < 0;
  };
  while (frontier.size > 0) {
    const stop = budgetReached();
    if (stop) { stoppedBy = stop; break; }
    let best: Candidate | null = null;
    for (const c of frontier.values()) if (best === null || better(c, best)) best = c;
    const c = best!;
    frontier.delete(c.path);
    // The shallowest, earliest proposing edge is the one followed; the others reached a visited note.
    const viaIdx = [...c.pending].sort((x, y) => decisions[x]!.depth - decisions[y]!.depth || x - y)[0]!;
    for (const k of c.pending) {
      const d = decisions[k]!;
      if (k === viaIdx) {
        d.outcome = 'followed';
        d.reason = null;
        d.detail = `consulted #${consulted.size + 1} (relevance ${round6(c.relevance)}, ${c.field} field link(s), ${c.mentions} mention(s))`;
      } else {
        d.reason = 'already_visited';
        d.detail = `${c.path} consulted via another edge`;
      }
    }
    const via = decisions[viaIdx]!;
    if (c.tier === 0) {
      scopeConsulted++;
      consultedRefs.push(noteRef(c.path));
    } else {
      followedRefs.push(noteRef(c.path));
    }
    consult(c.path, via.depth, c.usedFor, { chunk: c.linkChunk, lines: null });
  }
  for (const c of frontier.values()) {
    for (const k of c.pending) {
      const d = decisions[k]!;
      d.reason = 'budget_exhausted';
      d.detail = `the walk stopped (${stoppedBy}) before reaching it`;
    }
  }

  const skipped = decisions.filter((d) => d.outcome === 'skipped');
  const byReason = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<EdgeSkipReason, number>;
  for (const d of skipped) byReason[d.reason!]++;
  return {
    schema_version: TRAVERSE_RESULT_VERSION,
    snapshot_id: index.snapshot_id,
    policy_receipt: compiled.receipt,
    consulted_refs: consultedRefs,
    followed_refs: followedRefs,
    source_excerpts: excerpts,
    research_trace: trace,
    decisions,
    stats: {
      queries,
      query_source: given.length > 0 ? 'given' : 'seed_titles',
      notes_consulted: consulted.size,
      seeds_consulted: seedsConsulted,
      scope_consulted: scopeConsulted,
      followed: followedRefs.length,
      excerpts: excerpts.length,
      excerpt_chars: chars,
      consulted_without_excerpt: withoutExcerpt,
      decisions: { total: decisions.length, followed: decisions.length - skipped.length, skipped: skipped.length },
      skipped_by_reason: byReason,
      links_ignored: ignored,
      max_depth_reached: maxDepth,
      stopped_by: stoppedBy,
      budgets: { ...budgets },
      receipt_totals: { ...compiled.receipt_totals },
    },
  };
}

/** Fallback query text for a seed: its title, or for an `index` note its folder's name. */
function seedTitle(index: VaultIndex, path: VaultPath): string {
  const note = getNote(index, path);
  const title = note?.title ?? path;
  if (title.toLowerCase() === 'index') {
    const parts = path.split('/');
    return parts.length > 1 ? parts[parts.length - 2]! : title;
  }
  return title;
}

/** `bad_input` for a malformed packet / projected-context field (pointer + what was expected). */
function badShape(doc: string, pointer: string, expected: string, got: unknown): LoretraceError {
  const shown = typeof got === 'string' ? JSON.stringify(got.length > 60 ? got.slice(0, 59) + '…' : got) : got === null ? 'null' : Array.isArray(got) ? 'an array' : typeof got;
  return new LoretraceError('bad_input', `${doc} ${pointer} must be ${expected} (got ${shown})`, { pointer, expected });
}
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Default queries for a packet (used by `loretrace traverse --packet` when no `--query` is given):
 * the observed event's `observable_action` and `spoken_text`, then the text of each
 * `visible_context.source_excerpts` entry — what the scene shows the responder.
 * @throws LoretraceError `bad_input` when a field it reads has the wrong shape (`visible_context` not an
 *   object, `observable_action` not a string, `source_excerpts` not a list of objects, an excerpt `text`
 *   not a string); the message names the JSON pointer. Absent fields simply give no query.
 */
export function packetQueries(packet: {
  visible_context?: { observed_event?: { observable_action?: string; spoken_text?: string }; source_excerpts?: { ref_id: string; text: string }[] };
}): { text: string; used_for: string }[] {
  const out: { text: string; used_for: string }[] = [];
  if (!isPlainObject(packet)) throw badShape('packet', '/', 'a JSON object', packet);
  const vc: unknown = packet.visible_context;
  if (vc === undefined) return out;
  if (!isPlainObject(vc)) throw badShape('packet', '/visible_context', 'an object', vc);
  const ev: unknown = vc.observed_event;
  if (ev !== undefined) {
    if (!isPlainObject(ev)) throw badShape('packet', '/visible_context/observed_event', 'an object', ev);
    for (const k of ['observable_action', 'spoken_text'] as const) {
      const t = ev[k];
      if (t !== undefined && typeof t !== 'string') throw badShape('packet', `/visible_context/observed_event/${k}`, 'a string', t);
      if (t) out.push({ text: t, used_for: `visible_context.observed_event.${k}` });
    }
  }
  const se: unknown = vc.source_excerpts;
  if (se === undefined) return out;
  if (!Array.isArray(se)) throw badShape('packet', '/visible_context/source_excerpts', 'a list of excerpt objects', se);
  se.forEach((e: unknown, i) => {
    if (!isPlainObject(e)) throw badShape('packet', `/visible_context/source_excerpts/${i}`, 'an excerpt object', e);
    if (e.text !== undefined && typeof e.text !== 'string') throw badShape('packet', `/visible_context/source_excerpts/${i}/text`, 'a string', e.text);
    if (e.text) out.push({ text: e.text, used_for: `visible_context.source_excerpts[${i}] ${typeof e.ref_id === 'string' ? e.ref_id : ''}`.trimEnd() });
  });
  return out;
}

/**
 * Queries from a projected local context (`--projected-context`): one per
 * `context.runtime_retrieval_requirements[i]`, text = `trigger` + ": " + `compact_fact`.
 * @throws LoretraceError `bad_input` when the document is not an object, `context` is not an object,
 *   `runtime_retrieval_requirements` is not a list, or an entry is not an object with string `trigger`
 *   and `compact_fact`; the message names the JSON pointer. No requirements (absent list) → no query.
 */
export function requirementQueries(context: {
  context?: { runtime_retrieval_requirements?: { requirement_id: string; trigger: string; compact_fact: string }[] };
}): { text: string; used_for: string }[] {
  const doc = 'projected context';
  if (!isPlainObject(context)) throw badShape(doc, '/', 'a JSON object', context);
  const ctx: unknown = context.context;
  if (ctx === undefined) return [];
  if (!isPlainObject(ctx)) throw badShape(doc, '/context', 'an object', ctx);
  const reqs: unknown = ctx.runtime_retrieval_requirements;
  if (reqs === undefined) return [];
  if (!Array.isArray(reqs)) throw badShape(doc, '/context/runtime_retrieval_requirements', 'a list of requirement objects', reqs);
  return reqs.map((r: unknown, i) => {
    const at = `/context/runtime_retrieval_requirements/${i}`;
    if (!isPlainObject(r)) throw badShape(doc, at, 'a requirement object', r);
    for (const k of ['trigger', 'compact_fact'] as const) {
      if (typeof r[k] !== 'string') throw badShape(doc, `${at}/${k}`, 'a string', r[k]);
    }
    return {
      text: `${r.trigger as string}: ${r.compact_fact as string}`,
      used_for: `runtime_retrieval_requirements[${i}] ${typeof r.requirement_id === 'string' ? r.requirement_id : ''}`.trimEnd(),
    };
  });
}

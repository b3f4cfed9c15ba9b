/**
 * The best-first walk: apply a compiled traversal_policy to a vault index and return verbatim
 * `source_excerpts`, `runner_captured` `research_trace` entries, and a decision for every candidate edge.
 *
 * Walk (docs/TRAVERSAL.md "Walk"), in the spirit of fish-search / shark-search (De Bra & Post 1994;
 * Hersovici et al. 1998), with the whole link graph known from the index instead of fetched:
 * 1. Seeds (`required_seed_refs`) are consulted first, in policy order, at depth 0 — always.
 * 2. The link graph the policy allows is read from the seeds and `allowed_scope` notes (depth 0) out to
 *    `max_link_depth`: every link of every note reached (consulted or not) is a candidate edge, checked
 *    by `checkEdge` (src/policy) and recorded in `decisions`.
 * 3. Each edge gets a link score: the parent's score × the relevance of the passage (chunk) the link
 *    stands in × {@link LINK_DECAY} per hop; a note's score mixes its best link score with its own
 *    relevance ({@link LINK_MIX}). Seeds score 1; scope notes their own relevance.
 * 4. Scope notes, then link targets, are consulted best-first by score (optionally lowered for notes
 *    like those already followed: `diversity`, MMR-style). A note is consulted at most once.
 * 5. Stops: `max_refs`, `max_chunks`, `max_chars`, `time_budget_ms`; the evidence floor (`min_relevance`,
 *    default {@link DEFAULT_MIN_RELEVANCE}): a link target is dropped when neither it nor a passage linking
 *    it reaches that relevance, so the relative stops below never admit what merely matches least badly;
 *    and two relevance stops: the
 *    relevance stop (`min_relative_relevance`, default {@link DEFAULT_MIN_RELATIVE_RELEVANCE}): a link
 *    target is consulted only while its score is at least that share of the best followed note's score,
 *    and the walk ends when no remaining one is; the score-drop stop (`min_score_ratio`, default
 *    {@link DEFAULT_MIN_SCORE_RATIO}): the walk ends when the best remaining target scores under that
 *    share of the note followed just before it (a knee in the scores) — so `max_refs` is a ceiling, not
 *    a target. What was still queued is recorded with the reason that stopped it.
 *
 * Relevance of a chunk (0..1): for each query, `search` (BM25, exact terms) with the notes the policy
 * admits as its corpus (BM25 statistics from them alone), divided by the best score of that query and
 * scaled by the chunk's coordination (the share of the query's distinct terms it holds, counted in full
 * from {@link coordinationNeeded} terms), so a weak best match stays weak; a note's relevance is its
 * best chunk's. With no queries, the seed notes' titles are the query.
 *
 * Pure: reads only the index (chunk texts are the verbatim lines, by the chunk invariant); same index +
 * policy + queries ⇒ identical result (the one exception is a `time_budget_ms` that runs out).
 */
import type { Chunk, LinkRecord, LoreRef, VaultIndex, VaultPath } from '../types.js';
import type { ResearchTraceEntry, SourceExcerpt } from '../contracts/types.js';
import { LoretraceError } from '../errors.js';
import { backlinks, chunksOf, getNote, notePathOnDisk, outgoingLinks } from '../indexer/lookup.js';
import { search, searchCorpus } from '../search/search.js';
import { DEFAULT_MIN_RELATIVE_RELEVANCE, DEFAULT_MIN_RELEVANCE, DEFAULT_MIN_SCORE_RATIO, checkEdge, checkPath, edgeClassLabel, edgeTarget } from '../policy/compile.js';
import type { EdgeDirection } from '../policy/compile.js';
import type { CompiledPolicy, PolicyReceiptRow, EdgeSkipReason, ReceiptTotals } from '../policy/types.js';
import { cmp } from '../policy/synonyms.js';
import { processTerm, queryTerms, tokenize } from '../search/tokenize.js';
import { sectionsOf, visibleLinks, withheldChunks } from '../policy/sections.js';
import { formatRef, resolveRef } from '../refs/ref.js';
import { excerptRefId, pickExcerptLines } from '../excerpts/excerpt.js';
import { makeTraceEntry } from '../excerpts/trace.js';
import { isJsonObject } from '../contracts/json-object.js';

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
  /**
   * MMR-style diversity, 0..1 (default 0: off): a candidate's score is multiplied by
   * `1 − diversity × s`, where s is its greatest similarity to a note already followed (Jaccard of their
   * target classes, or 1 for two notes of one folder with no class), so one faction's notes do not fill
   * the budget. The relevance stop compares the undiminished scores.
   */
  diversity?: number;
}

/** Per-hop decay of a link score (shark-search's δ): a link two hops out counts at most 0.5² of a seed's. */
export const LINK_DECAY = 0.5;

/**
 * Weight of the link score against the target's own relevance in a note's score (shark-search's γ):
 * score = LINK_MIX × best link score + (1 − LINK_MIX) × relevance.
 */
export const LINK_MIX = 0.5;

/** A query: plain text, or text plus what asked for it. */
export type TraverseQuery = string | { text: string; used_for?: string };

/** Every reason a candidate edge can be skipped (all appear in `stats.skipped_by_reason`, zeros included). */
export const SKIP_REASONS: readonly EdgeSkipReason[] = [
  'prefix_denied', 'class_not_allowed', 'depth_exceeded', 'budget_exhausted', 'below_relevance', 'below_relative_relevance',
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
 * - `relevance`: the target's own relevance (0..1, 6 decimals) when known, else null.
 * - `link_score`: what this edge gives its target (parent's score × relevance of the chunk the link
 *   stands in × {@link LINK_DECAY}, 6 decimals), or null for an edge refused before it is scored and for
 *   scope start points.
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
  link_score: number | null;
  detail: string;
}

/** Why the walk ended. */
export type StopReason = 'frontier_exhausted' | 'max_refs' | 'max_chunks' | 'max_chars' | 'time_budget_ms' | 'min_relative_relevance' | 'min_score_ratio';

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
  /** The evidence floor applied (`budgets.min_relevance`, else the default 0.3); 0 = off. */
  min_relevance: number;
  /** The relevance stop applied (`budgets.min_relative_relevance`, else the default); 0 = off. */
  min_relative_relevance: number;
  /** Score of the best followed note (the reference of the relevance stop), or null when none was followed. */
  best_followed_score: number | null;
  /** The score-drop stop applied (`budgets.min_score_ratio`, else the default); 0 = off. */
  min_score_ratio: number;
  /** Score of the note followed last (the reference of the score-drop stop), or null when none was followed. */
  last_followed_score: number | null;
  receipt_totals: ReceiptTotals;
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
  /** Link hops from the nearest start note (BFS over the allowed graph). */
  depth: number;
  tier: 0 | 1; // 0 = allowed_scope start point, 1 = link target
  /** Own relevance (0..1). */
  relevance: number;
  /** Walk score (0..1): see the module doc, step 3. */
  score: number;
  /** The link part of the score: the best link score of the edges to it (0 for scope notes). */
  link: number;
  /** The best relevance of the passages its links stand in (0..1; 0 for scope notes). */
  context: number;
  field: number;
  mentions: number;
  /** Indexes into decisions of the edges proposing this candidate (pending until the walk ends). */
  pending: number[];
  /** The decision index of the edge that gives the best link score, or null (scope start points). */
  best: number | null;
  usedFor: string;
  /** Chunk a link fragment points at, preferred when no chunk is relevant. */
  linkChunk: number | null;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** The queries of a walk: their texts in order, the label of each given one, and where they came from. */
interface WalkQueries {
  queries: string[];
  /** `used_for` of a given query, by its text. */
  labels: Map<string, string>;
  source: 'given' | 'seed_titles';
}

/** Relevance tables of a walk (see {@link relevanceTables}). */
interface Relevance {
  /** `path#chunk_index` → best relative score over the queries, and the query that gave it. */
  chunk: Map<string, { rel: number; query: string }>;
  /** path → its best chunk's relevance. */
  note: Map<string, number>;
}

/** Where an excerpt of a note should come from: a seed fragment's lines, or a link fragment's chunk. */
interface Preferred {
  chunk: number | null;
  lines: [number, number] | null;
}

/** Everything one walk reads and writes; the step functions below share it. */
interface Walk {
  index: VaultIndex;
  compiled: CompiledPolicy;
  ns: string;
  q: WalkQueries;
  rel: Relevance;
  excerptMax: number;
  perNote: number;
  now: () => number;
  started: number;
  decisions: TraversalDecision[];
  /** path → depth it was consulted at. */
  consulted: Map<string, number>;
  consultedRefs: LoreRef[];
  followedRefs: LoreRef[];
  /** Vault paths of followedRefs, in order. */
  followedPaths: VaultPath[];
  excerpts: SourceExcerpt[];
  trace: ResearchTraceEntry[];
  usedRefIds: Set<string>;
  /** Every candidate of the allowed graph, by path (start notes excluded, scope notes included). */
  frontier: Map<string, Candidate>;
  /** Score of each note of the graph (seeds 1). */
  scores: Map<string, number>;
  diversity: number;
  bestFollowed: number | null;
  /** Score of the note followed last (reference of the score-drop stop). */
  lastFollowed: number | null;
  chars: number;
  stoppedBy: StopReason;
  seedsConsulted: number;
  scopeConsulted: number;
  withoutExcerpt: number;
  /** An excerpt did not fit only because max_chars is nearly spent. */
  charsBlocked: boolean;
  maxDepth: number;
  ignored: { external: number; tag: number };
}

/**
 * Walk the vault under a compiled policy. The steps: the queries; the relevance of every admitted
 * chunk; the seeds (all read first, so links between seeds are `already_visited`); the scope start
 * points; the allowed link graph out to `max_link_depth`, every edge scored; the `min_relevance` floor;
 * then best-first until the frontier, a budget or the relevance stop ends it; what was left queued is
 * recorded with the reason; the counters.
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
  const q = walkQueries(index, compiled, options.queries ?? []);
  const walk = startWalk(index, compiled, q, relevanceTables(index, compiled, q.queries), options);
  const seeds = consultSeeds(walk);
  registerScope(walk);
  readLinkGraph(walk, seeds);
  dropBelowFloor(walk);
  walkBestFirst(walk);
  settleFrontier(walk);
  return walkResult(walk);
}

/**
 * The query texts of a walk: the given ones (trimmed, blanks and repeats dropped, first label kept), or,
 * when none is given, the seed notes' titles ({@link seedTitle}).
 */
export function walkQueries(index: VaultIndex, compiled: CompiledPolicy, given: readonly TraverseQuery[]): WalkQueries {
  const labels = new Map<string, string>();
  const texts: string[] = [];
  for (const q of given) {
    const text = (typeof q === 'string' ? q : q.text).trim();
    if (text.length === 0 || texts.includes(text)) continue;
    texts.push(text);
    if (typeof q !== 'string' && q.used_for) labels.set(text, q.used_for);
  }
  if (texts.length > 0) return { queries: texts, labels, source: 'given' };
  return { queries: [...new Set(compiled.seeds.map((s) => seedTitle(index, s)))], labels, source: 'seed_titles' };
}

/**
 * Coordination floor of the relevance (absolute-aware relevance): a chunk must contain at least this many
 * distinct terms of a query, and {@link COORDINATION_MIN_SHARE} of them, for its score ratio to count in
 * full. The same rule as the coordinator lane's "an excerpt serves a requirement" (src/packet/requirements.ts
 * `MIN_SERVED_TERMS`): one shared word is a coincidence more often than a reason.
 */
export const COORDINATION_MIN_TERMS = 2;

/** Least share of a query's distinct terms a chunk must contain to count in full (src/packet/requirements.ts `MIN_SERVED_SHARE`). */
export const COORDINATION_MIN_SHARE = 0.2;

/**
 * Distinct terms a chunk must contain for a query of `terms` distinct terms to count in full:
 * `min(terms, max(COORDINATION_MIN_TERMS, ceil(COORDINATION_MIN_SHARE × terms)))` — 1 for a one-term
 * query, 2 up to 10 terms, 5 for 21.
 */
export function coordinationNeeded(terms: number): number {
  return Math.min(terms, Math.max(COORDINATION_MIN_TERMS, Math.ceil(COORDINATION_MIN_SHARE * terms)));
}

/**
 * Relevance of every chunk the policy admits (0..1, 6 decimals): for each query, `search` (BM25, exact
 * terms, no phrase re-rank) over the admitted notes as its corpus — document count, document
 * frequencies and average lengths from those notes only, hidden sections' chunks left out, so no
 * relevance (and no choice made from it) depends on hidden or out-of-scope text. A chunk's relevance to
 * a query is its score divided by the best score of that query, times its **coordination**
 * `min(1, matched / coordinationNeeded(terms))`, matched = the distinct query terms (`queryTerms`, folded
 * like search) in the fields search scores (the note's title and aliases, the chunk's heading path and
 * text). So the best chunk of a query that matches it by one word only ("food" of "Care is … beds, food,
 * air …") is not relevance 1: a weak match stays weak, and the relevance stop fires when nothing really
 * matches. A chunk keeps its best over the queries, a note its best chunk's.
 */
export function relevanceTables(index: VaultIndex, compiled: CompiledPolicy, queries: readonly string[]): Relevance {
  const admitted = index.notes.filter((n) => checkPath(compiled, n.path).ok).map((n) => n.path);
  const admittedChunks = admitted.reduce((a, p) => a + chunksOf(index, p).length, 0);
  const chunk = new Map<string, { rel: number; query: string }>();
  const note = new Map<string, number>();
  if (admittedChunks === 0) return { chunk, note };
  const corpus = searchCorpus(admitted, withheldChunks(compiled));
  const allTerms = new Set(queries.flatMap((q) => queryTerms(q)));
  const termsIn = new Map<string, ReadonlySet<string>>();
  for (const q of queries) {
    const hits = search(index, q, { k: admittedChunks, corpus, expand: false, phrase: false });
    const top = hits[0]?.score ?? 0;
    if (top <= 0) continue;
    const terms = queryTerms(q);
    const needed = coordinationNeeded(terms.length);
    for (const h of hits) {
      const key = `${h.path}#${h.chunk_index}`;
      let present = termsIn.get(key);
      if (!present) {
        present = chunkQueryTerms(index, h, allTerms);
        termsIn.set(key, present);
      }
      const matched = terms.reduce((n, t) => n + (present.has(t) ? 1 : 0), 0);
      const rel = round6((h.score / top) * Math.min(1, matched / needed));
      const cur = chunk.get(key);
      if (!cur || rel > cur.rel) chunk.set(key, { rel, query: q });
      if (rel > (note.get(h.path) ?? 0)) note.set(h.path, rel);
    }
  }
  return { chunk, note };
}

/** The terms of `wanted` that occur in what search scores for a chunk: its note's title and aliases, its heading path, its text. */
function chunkQueryTerms(index: VaultIndex, hit: { path: VaultPath; heading_path: readonly string[]; text: string }, wanted: ReadonlySet<string>): ReadonlySet<string> {
  const n = getNote(index, hit.path);
  const out = new Set<string>();
  for (const field of [n?.title ?? '', ...(n?.aliases ?? []), ...hit.heading_path, hit.text]) {
    for (const tok of tokenize(field)) {
      const t = processTerm(tok);
      if (t !== null && wanted.has(t)) out.add(t);
    }
  }
  return out;
}

/** The empty state of a walk. */
function startWalk(index: VaultIndex, compiled: CompiledPolicy, q: WalkQueries, rel: Relevance, options: TraverseOptions): Walk {
  const now = options.now ?? (() => performance.now());
  return {
    index, compiled, ns: index.namespace, q, rel,
    excerptMax: options.excerptMaxChars ?? DEFAULT_EXCERPT_MAX_CHARS,
    perNote: options.excerptsPerNote ?? 1,
    now,
    started: now(),
    decisions: [],
    consulted: new Map(),
    consultedRefs: [],
    followedRefs: [],
    followedPaths: [],
    excerpts: [],
    trace: [],
    usedRefIds: new Set(),
    frontier: new Map(),
    scores: new Map(),
    diversity: Math.min(1, Math.max(0, options.diversity ?? 0)),
    bestFollowed: null,
    lastFollowed: null,
    chars: 0,
    stoppedBy: 'frontier_exhausted',
    seedsConsulted: 0,
    scopeConsulted: 0,
    withoutExcerpt: 0,
    charsBlocked: false,
    maxDepth: 0,
    ignored: { external: 0, tag: 0 },
  };
}

const relOf = (w: Walk, p: string): number => w.rel.note.get(p) ?? 0;
const noteRef = (w: Walk, p: string): string => formatRef(w.ns, p);

/** The budget that ends the walk now, or null: `max_refs`, `max_chunks`, `max_chars`, `time_budget_ms`. */
function budgetReached(w: Walk): StopReason | null {
  const b = w.compiled.budgets;
  if (b.max_refs !== null && w.consulted.size >= b.max_refs) return 'max_refs';
  if (b.max_chunks !== null && w.excerpts.length >= b.max_chunks) return 'max_chunks';
  if (b.max_chars !== null && (w.chars >= b.max_chars || w.charsBlocked)) return 'max_chars';
  if (b.time_budget_ms !== null && w.now() - w.started > b.time_budget_ms) return 'time_budget_ms';
  return null;
}

/**
 * Excerpt a consulted note: its most relevant chunks (or the preferred lines / chunk), at most
 * `perNote`, each cut by `pickExcerptLines` to the per-excerpt bound and what `max_chars` leaves; one
 * `source_excerpts` entry and one `research_trace` entry per excerpt, ref ids unique within the walk.
 */
function excerptNote(w: Walk, path: VaultPath, usedFor: string, preferred: Preferred): void {
  const budgets = w.compiled.budgets;
  const ranked = rankChunksForExcerpt(w, path, preferred);
  let made = 0;
  for (const c of ranked) {
    if (made >= w.perNote) break;
    if (budgets.max_chunks !== null && w.excerpts.length >= budgets.max_chunks) break;
    const room = budgets.max_chars === null ? w.excerptMax : Math.min(w.excerptMax, budgets.max_chars - w.chars);
    if (room < 1) { w.charsBlocked = true; break; }
    let lines = c.text.split('\n');
    let offset = c.line_start;
    if (preferred.lines) {
      const a = Math.max(preferred.lines[0], c.line_start);
      const b = Math.min(preferred.lines[1], c.line_end);
      lines = lines.slice(a - c.line_start, b - c.line_start + 1);
      offset = a;
    }
    const pick = pickExcerptLines(lines, w.q.queries, room, { lineOffset: offset });
    if (!pick) {
      if (room < w.excerptMax && pickExcerptLines(lines, w.q.queries, w.excerptMax, { lineOffset: offset })) w.charsBlocked = true;
      continue;
    }
    const rel = w.rel.chunk.get(`${path}#${c.chunk_index}`);
    const refId = uniqueRefId(w, path, c.chunk_index);
    const sourceRef = formatRef(w.ns, path, { kind: 'chunk', index: c.chunk_index });
    const query = pick.terms_matched > 0 && rel ? rel.query : `lookup ${sourceRef}`;
    const label = w.q.labels.get(query);
    w.excerpts.push({ ref_id: refId, source_ref: sourceRef, text: pick.text });
    w.trace.push(makeTraceEntry({
      trace_id: `trace.${refId.replace(/^lore\./, '')}`,
      query,
      namespace: w.ns,
      path,
      disk_path: notePathOnDisk(w.index, path),
      chunk_index: c.chunk_index,
      line_start: pick.line_start,
      line_end: pick.line_end,
      text: pick.text,
      used_for: label ? `${usedFor}; query from ${label}` : usedFor,
    }));
    w.chars += pick.chars;
    made++;
  }
  if (made === 0) w.withoutExcerpt++;
}

/**
 * The chunks an excerpt of a note is taken from, best first: the chunks overlapping the preferred
 * lines; else by relevance (desc), the link fragment's chunk first among equals, then chunk order.
 */
function rankChunksForExcerpt(w: Walk, path: VaultPath, preferred: Preferred): Chunk[] {
  // A hidden section's chunks are never excerpted (src/policy/sections.ts).
  const withheld = new Set(sectionsOf(w.compiled, path).flatMap((s) => s.chunks));
  const chunks = chunksOf(w.index, path).filter((c) => !withheld.has(c.chunk_index));
  if (preferred.lines) {
    const [a, b] = preferred.lines;
    return chunks.filter((c) => c.line_end >= a && c.line_start <= b);
  }
  return [...chunks].sort((x, y) => {
    const rx = w.rel.chunk.get(`${path}#${x.chunk_index}`)?.rel ?? 0;
    const ry = w.rel.chunk.get(`${path}#${y.chunk_index}`)?.rel ?? 0;
    if (ry !== rx) return ry - rx;
    const px = x.chunk_index === preferred.chunk ? 0 : 1;
    const py = y.chunk_index === preferred.chunk ? 0 : 1;
    return px - py || x.chunk_index - y.chunk_index;
  });
}

/** An excerpt ref id not yet used in this walk (`lore.…`, then the long form, then `.2`, `.3` …). */
function uniqueRefId(w: Walk, path: VaultPath, chunkIndex: number): string {
  let refId = excerptRefId(path, chunkIndex);
  if (w.usedRefIds.has(refId)) refId = excerptRefId(path, chunkIndex, true);
  for (let k = 2; w.usedRefIds.has(refId); k++) refId = `${excerptRefId(path, chunkIndex, true)}.${k}`;
  w.usedRefIds.add(refId);
  return refId;
}

/** Consult a note: mark it and excerpt it (its links were read with the graph). */
function consultNote(w: Walk, path: VaultPath, depth: number, usedFor: string, preferred: Preferred): void {
  w.consulted.set(path, depth);
  w.maxDepth = Math.max(w.maxDepth, depth);
  excerptNote(w, path, usedFor, preferred);
}

/** The candidate edges of one note: its links (and backlinks), grouped by direction, target and class. */
interface EdgeGroup {
  link: LinkRecord;
  dir: EdgeDirection;
  lines: number[];
  field: number;
  target: string | null;
}

/**
 * The edges of a note, one group per (direction, target, class label), lines in link order; external
 * links and tags are counted in `ignored`, not edges. Backlinks only when `backlink` is followed.
 */
function edgeGroups(w: Walk, path: VaultPath): EdgeGroup[] {
  const groups = new Map<string, EdgeGroup>();
  const add = (link: LinkRecord, dir: EdgeDirection) => {
    if (link.syntax === 'tag') { if (dir === 'outbound') w.ignored.tag++; return; }
    if (link.syntax === 'external' || link.resolution.status === 'external') { if (dir === 'outbound') w.ignored.external++; return; }
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
  // Links standing in a hidden section are absent: not edges, not decisions (their targets are hidden text).
  for (const l of visibleLinks(w.compiled, outgoingLinks(w.index, path))) add(l, 'outbound');
  if (w.compiled.follow.backlink) for (const l of visibleLinks(w.compiled, backlinks(w.index, path))) if (l.source_path !== path) add(l, 'inbound');
  return [...groups.values()];
}

/**
 * Relevance of the passage a link stands in: the best relevance of the chunks of the note holding the
 * link (the source, for a backlink too) that contain one of its lines; 0 when none matches a query.
 */
export function linkContextRelevance(index: VaultIndex, chunkRel: Relevance['chunk'], holder: VaultPath, lines: readonly number[]): number {
  let best = 0;
  for (const c of chunksOf(index, holder)) {
    if (!lines.some((l) => l >= c.line_start && l <= c.line_end)) continue;
    best = Math.max(best, chunkRel.get(`${holder}#${c.chunk_index}`)?.rel ?? 0);
  }
  return best;
}

/**
 * A note's walk score from its best link score and its own relevance (module doc, step 3):
 * `LINK_MIX × link + (1 − LINK_MIX) × relevance`, 6 decimals.
 */
export function noteScore(bestLink: number, relevance: number): number {
  return round6(LINK_MIX * bestLink + (1 - LINK_MIX) * relevance);
}

/**
 * Read the allowed link graph breadth-first from the start notes (seeds, then scope notes, depth 0)
 * out to `max_link_depth`: every edge group of every note reached becomes a decision. An edge is
 * skipped at once when its note is `no_expand_class`, when `checkEdge` refuses it, or when it leads to
 * a start note or back to its own note; otherwise it is pending on its target's candidate. Notes are
 * scored layer by layer: an edge from a note of depth d to one of depth d + 1 carries
 * `parent score × context relevance × LINK_DECAY`; edges that do not go one layer out are recorded but
 * carry no score (their target is already as close as they would bring it).
 */
function readLinkGraph(w: Walk, seeds: readonly VaultPath[]): void {
  const { compiled, decisions, frontier } = w;
  const start = new Set<string>([...w.consulted.keys(), ...frontier.keys()]);
  for (const s of seeds) w.scores.set(s, 1);
  let layer: VaultPath[] = [...seeds, ...[...frontier.keys()] as VaultPath[]];
  const depthOf = new Map<string, number>(layer.map((p) => [p, 0]));
  for (let depth = 0; layer.length > 0; depth++) {
    const next: VaultPath[] = [];
    for (const path of layer) {
      const parentScore = w.scores.get(path) ?? 0;
      const note = getNote(w.index, path)!;
      const noExpand = note.classes.find((c) => compiled.no_expand_classes.includes(c));
      const from = noteRef(w, path);
      for (const g of edgeGroups(w, path)) {
        const to = g.target !== null ? noteRef(w, g.target) : g.link.raw;
        const label = edgeClassLabel(g.link, g.dir);
        const base = { from, to, link_class: label, lines: g.lines, depth: depth + 1 };
        const skip = (reason: EdgeSkipReason, detail: string, relevance: number | null = null, linkScore: number | null = null) =>
          decisions.push({ ...base, outcome: 'skipped', reason, relevance, link_score: linkScore, detail });
        if (noExpand) {
          skip('not_expanded', `${path} has class ${noExpand} (no_expand_class): its links are not walked`);
          continue;
        }
        const chk = checkEdge(compiled, g.link, depth, g.dir);
        if (!chk.ok) {
          skip(chk.reason, chk.detail, g.target !== null && chk.reason !== 'unresolved' ? round6(relOf(w, g.target)) : null);
          continue;
        }
        const target = g.target as VaultPath;
        const rel = round6(relOf(w, target));
        const holder = g.dir === 'inbound' ? g.link.source_path : path;
        const context = linkContextRelevance(w.index, w.rel.chunk, holder, g.lines);
        const targetDepth = depthOf.get(target);
        const outward = targetDepth === undefined || targetDepth === depth + 1;
        const linkScore = outward ? round6(parentScore * context * LINK_DECAY) : null;
        // A note naming itself (`[[Reality Architects]] are …` in Reality Architects.md) leads nowhere new.
        if (target === path) {
          skip('already_visited', `${target} links to itself`, rel, linkScore);
          continue;
        }
        if (start.has(target) && !(frontier.get(target)?.tier === 0)) {
          skip('already_visited', `${target} is a start note, consulted first`, rel, linkScore);
          continue;
        }
        const idx = decisions.length;
        decisions.push({ ...base, outcome: 'skipped', reason: null, relevance: rel, link_score: linkScore, detail: 'pending' });
        let cand = frontier.get(target);
        if (!cand) {
          depthOf.set(target, depth + 1);
          next.push(target);
          cand = { path: target, depth: depth + 1, tier: 1, relevance: rel, score: 0, link: 0, context: 0, field: 0, mentions: 0, pending: [], best: null, usedFor: '', linkChunk: null };
          frontier.set(target, cand);
        }
        cand.pending.push(idx);
        if (context > cand.context) cand.context = context;
        cand.mentions += g.lines.length;
        cand.field += g.field;
        if (cand.tier === 1 && linkScore !== null && (cand.best === null || linkScore > decisions[cand.best]!.link_score!)) {
          cand.best = idx;
          cand.usedFor = `${g.dir === 'inbound' ? 'backlink' : 'link'} ${g.link.raw} (${label}) ${g.dir === 'inbound' ? 'to' : 'from'} ${from} line ${g.link.line}, depth ${depth + 1}`;
          cand.linkChunk = g.dir === 'outbound' && g.link.resolution.status !== 'unresolved' && 'chunk_index' in g.link.resolution ? g.link.resolution.chunk_index ?? null : null;
        }
      }
    }
    // The next layer's scores are final once every note of this layer has been read.
    for (const p of next) {
      const c = frontier.get(p)!;
      c.link = c.best === null ? 0 : decisions[c.best]!.link_score!;
      c.score = noteScore(c.link, c.relevance);
      w.scores.set(p, c.score);
    }
    layer = next;
  }
}

/**
 * The evidence floor applied by a walk: the policy's `min_relevance`, else {@link DEFAULT_MIN_RELEVANCE}
 * (0.3, the floor of the plain-English "not relevant" stop). It is on by default because both relevance
 * stops are relative — a share of the best or the last followed score — so on their own they admit
 * whatever is least weak when nothing really matches the scene; the floor is the absolute part of the
 * stop rule. `min_relevance:0` turns it off.
 */
export function evidenceFloor(compiled: CompiledPolicy): number {
  return compiled.budgets.min_relevance ?? DEFAULT_MIN_RELEVANCE;
}

/**
 * The evidence floor ({@link evidenceFloor}): a link target leaves the frontier (`below_relevance`) when
 * neither it nor any passage a link to it stands in reaches the floor — a link is not relevant when
 * neither where it points nor where it stands matches the queries. Its own links stay in the graph (read
 * before), so the walk still looks ahead through it.
 */
function dropBelowFloor(w: Walk): void {
  const floor = evidenceFloor(w.compiled);
  const source = w.compiled.budgets.min_relevance === null ? ' (the default evidence floor)' : '';
  for (const c of [...w.frontier.values()]) {
    const linkRelevance = Math.max(c.relevance, c.context);
    if (c.tier !== 1 || linkRelevance >= floor) continue;
    for (const k of c.pending) {
      const d = w.decisions[k]!;
      d.reason = 'below_relevance';
      d.detail = `relevance ${c.relevance} and passage relevance ${round6(c.context)} < min_relevance ${floor}${source}`;
    }
    w.frontier.delete(c.path);
  }
}

/**
 * Read every seed first, in policy order, at depth 0 (a seed fragment such as `#Rescue Ledgers`
 * narrows the excerpt to that section); a repeated seed is read once.
 * @returns the seeds read, in order, to be expanded once the scope is registered.
 */
function consultSeeds(w: Walk): VaultPath[] {
  const seedRows = w.compiled.receipt.filter((r) => r.kind === 'seed');
  const order: VaultPath[] = [];
  w.compiled.seeds.forEach((seed, i) => {
    if (w.consulted.has(seed)) return;
    const raw = seedRows[i]?.clause ?? noteRef(w, seed);
    let lines: [number, number] | null = null;
    if (raw.includes('#')) {
      const r = resolveRef(w.index, raw);
      lines = [r.line_start, r.line_end];
    }
    w.seedsConsulted++;
    w.consultedRefs.push(noteRef(w, seed));
    w.consulted.set(seed, 0);
    order.push(seed);
    excerptNote(w, seed, `required_seed_refs[${i}] ${raw}`, { chunk: null, lines });
  });
  return order;
}

/** Put the `allowed_scope` start points on the frontier at depth 0 (tier 0: before any link target), scored by their own relevance. */
function registerScope(w: Walk): void {
  w.compiled.scope.forEach((p) => {
    if (w.consulted.has(p)) return;
    const idx = w.decisions.length;
    const rel = round6(relOf(w, p));
    w.decisions.push({ from: 'allowed_scope', to: noteRef(w, p), link_class: 'allowed_scope', lines: [], depth: 0, outcome: 'skipped', reason: null, relevance: rel, link_score: null, detail: 'pending' });
    w.frontier.set(p, { path: p, depth: 0, tier: 0, relevance: rel, score: rel, link: 0, context: 0, field: 0, mentions: 0, pending: [idx], best: idx, usedFor: `allowed_scope ${noteRef(w, p)}`, linkChunk: null });
    w.scores.set(p, rel);
  });
}

/**
 * Frontier order: scope start points first, then score (desc; lowered by `diversity`), field-line
 * links (desc), mentions (desc), depth (asc), path (code-unit order).
 */
function better(a: Candidate, b: Candidate, sa: number, sb: number): boolean {
  if (a.tier !== b.tier) return a.tier < b.tier;
  if (sa !== sb) return sa > sb;
  if (a.field !== b.field) return a.field > b.field;
  if (a.mentions !== b.mentions) return a.mentions > b.mentions;
  if (a.depth !== b.depth) return a.depth < b.depth;
  return cmp(a.path, b.path) < 0;
}

/**
 * Similarity of two notes for `diversity`: Jaccard of their target classes; two notes without classes
 * are alike when they share a folder.
 */
export function noteSimilarity(a: { path: string; classes: readonly string[] }, b: { path: string; classes: readonly string[] }): number {
  if (a.classes.length === 0 && b.classes.length === 0) return a.path.slice(0, a.path.lastIndexOf('/') + 1) === b.path.slice(0, b.path.lastIndexOf('/') + 1) ? 1 : 0;
  const sa = new Set(a.classes);
  const inter = b.classes.filter((c) => sa.has(c)).length;
  const union = new Set([...a.classes, ...b.classes]).size;
  return union === 0 ? 0 : inter / union;
}

/** A candidate's score for ordering: its score, lowered by `diversity` against the notes already followed. */
function orderScore(w: Walk, c: Candidate): number {
  if (w.diversity === 0 || c.tier === 0 || w.followedRefs.length === 0) return c.score;
  const note = getNote(w.index, c.path)!;
  let sim = 0;
  for (const p of w.followedPaths) sim = Math.max(sim, noteSimilarity(note, getNote(w.index, p)!));
  return round6(c.score * (1 - w.diversity * sim));
}

/**
 * The two relevance stops of a walk, as floors on a link target's (undiminished) score: the relevance
 * stop `min_relative_relevance` × the best followed score, and the score-drop stop `min_score_ratio` ×
 * the score of the note followed last. Null before any link target has been followed (a share of
 * nothing); a stop set to 0 is off.
 */
interface StopFloors {
  relative: number | null;
  drop: number | null;
  relativeShare: number;
  dropShare: number;
}

function stopFloors(w: Walk): StopFloors {
  const relativeShare = w.compiled.budgets.min_relative_relevance ?? DEFAULT_MIN_RELATIVE_RELEVANCE;
  const dropShare = w.compiled.budgets.min_score_ratio ?? DEFAULT_MIN_SCORE_RATIO;
  return {
    relative: w.bestFollowed === null ? null : relativeShare * w.bestFollowed,
    drop: w.lastFollowed === null ? null : dropShare * w.lastFollowed,
    relativeShare,
    dropShare,
  };
}

/**
 * Consult the best candidate ({@link better}, {@link orderScore}) until the frontier is empty, a budget is
 * reached, or a relevance stop applies ({@link StopFloors}): a link target is eligible only while its
 * score is at least `min_relative_relevance` × the best score followed so far, and the walk ends when
 * none is (`min_relative_relevance`); it also ends when the best eligible target scores less than
 * `min_score_ratio` × the score of the note followed just before it (`min_score_ratio`: the scores fell
 * off a knee, so the rest are weaker than one more hop of decay). The edge with the best link score is
 * the one followed (the earliest among equals; the earliest edge for a scope note); the other edges to it
 * reached a visited note.
 */
function walkBestFirst(w: Walk): void {
  const { decisions, frontier } = w;
  while (frontier.size > 0) {
    const stop = budgetReached(w);
    if (stop) { w.stoppedBy = stop; break; }
    const floors = stopFloors(w);
    let best: Candidate | null = null;
    let bestOrder = 0;
    let bestLinkScore = -1;
    for (const c of frontier.values()) {
      if (c.tier === 1 && floors.relative !== null && c.score < floors.relative) continue;
      if (c.tier === 1) bestLinkScore = Math.max(bestLinkScore, c.score);
      const o = orderScore(w, c);
      if (best === null || better(c, best, o, bestOrder)) { best = c; bestOrder = o; }
    }
    if (best === null) { w.stoppedBy = 'min_relative_relevance'; break; }
    if (best.tier === 1 && floors.drop !== null && bestLinkScore < floors.drop) { w.stoppedBy = 'min_score_ratio'; break; }
    const c = best;
    frontier.delete(c.path);
    const viaIdx = c.best ?? c.pending[0]!;
    for (const k of c.pending) {
      const d = decisions[k]!;
      if (k === viaIdx) {
        d.outcome = 'followed';
        d.reason = null;
        d.detail = `consulted #${w.consulted.size + 1} (score ${c.score}${c.tier === 1 ? ` = ${LINK_MIX} × link ${d.link_score ?? 0} + ${round6(1 - LINK_MIX)} × relevance ${c.relevance}${bestOrder !== c.score ? `; ${bestOrder} after diversity` : ''}` : ''}, ${c.field} field link(s), ${c.mentions} mention(s))`;
      } else {
        d.reason = 'already_visited';
        d.detail = `${c.path} consulted via another edge`;
      }
    }
    if (c.tier === 0) {
      w.scopeConsulted++;
      w.consultedRefs.push(noteRef(w, c.path));
    } else {
      w.followedRefs.push(noteRef(w, c.path));
      w.followedPaths.push(c.path);
      if (w.bestFollowed === null || c.score > w.bestFollowed) w.bestFollowed = c.score;
      w.lastFollowed = c.score;
    }
    consultNote(w, c.path, c.depth, c.usedFor, { chunk: c.linkChunk, lines: null });
  }
}

/**
 * Every edge still pending when the walk ended gets its reason: `below_relative_relevance` for a link
 * target one of the relevance stops had ruled out (under `min_relative_relevance` × the best followed
 * score, or — when the score-drop stop ended the walk — under `min_score_ratio` × the last followed
 * score), `budget_exhausted` for the rest.
 */
function settleFrontier(w: Walk): void {
  const floors = stopFloors(w);
  const dropEnded = w.stoppedBy === 'min_score_ratio';
  for (const c of w.frontier.values()) {
    for (const k of c.pending) {
      const d = w.decisions[k]!;
      if (c.tier === 1 && floors.relative !== null && c.score < floors.relative) {
        d.reason = 'below_relative_relevance';
        d.detail = `score ${c.score} < min_relative_relevance ${floors.relativeShare} × best followed score ${w.bestFollowed}`;
      } else if (c.tier === 1 && dropEnded && floors.drop !== null && c.score < floors.drop) {
        d.reason = 'below_relative_relevance';
        d.detail = `score ${c.score} < min_score_ratio ${floors.dropShare} × last followed score ${w.lastFollowed}`;
      } else {
        d.reason = 'budget_exhausted';
        d.detail = `the walk stopped (${w.stoppedBy}) before reaching it`;
      }
    }
  }
}

/** The result document of a finished walk, with every counter (zeros included). */
function walkResult(w: Walk): TraverseResult {
  const { decisions, compiled } = w;
  const skipped = decisions.filter((d) => d.outcome === 'skipped');
  const byReason = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<EdgeSkipReason, number>;
  for (const d of skipped) byReason[d.reason!]++;
  return {
    schema_version: TRAVERSE_RESULT_VERSION,
    snapshot_id: w.index.snapshot_id,
    policy_receipt: compiled.receipt,
    consulted_refs: w.consultedRefs,
    followed_refs: w.followedRefs,
    source_excerpts: w.excerpts,
    research_trace: w.trace,
    decisions,
    stats: {
      queries: w.q.queries,
      query_source: w.q.source,
      notes_consulted: w.consulted.size,
      seeds_consulted: w.seedsConsulted,
      scope_consulted: w.scopeConsulted,
      followed: w.followedRefs.length,
      excerpts: w.excerpts.length,
      excerpt_chars: w.chars,
      consulted_without_excerpt: w.withoutExcerpt,
      decisions: { total: decisions.length, followed: decisions.length - skipped.length, skipped: skipped.length },
      skipped_by_reason: byReason,
      links_ignored: w.ignored,
      max_depth_reached: w.maxDepth,
      stopped_by: w.stoppedBy,
      budgets: { ...compiled.budgets },
      min_relevance: evidenceFloor(compiled),
      min_relative_relevance: compiled.budgets.min_relative_relevance ?? DEFAULT_MIN_RELATIVE_RELEVANCE,
      best_followed_score: w.bestFollowed,
      min_score_ratio: compiled.budgets.min_score_ratio ?? DEFAULT_MIN_SCORE_RATIO,
      last_followed_score: w.lastFollowed,
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
  if (!isJsonObject(packet)) throw badShape('packet', '/', 'a JSON object', packet);
  const vc: unknown = packet.visible_context;
  if (vc === undefined) return out;
  if (!isJsonObject(vc)) throw badShape('packet', '/visible_context', 'an object', vc);
  const ev: unknown = vc.observed_event;
  if (ev !== undefined) {
    if (!isJsonObject(ev)) throw badShape('packet', '/visible_context/observed_event', 'an object', ev);
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
    if (!isJsonObject(e)) throw badShape('packet', `/visible_context/source_excerpts/${i}`, 'an excerpt object', e);
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
  if (!isJsonObject(context)) throw badShape(doc, '/', 'a JSON object', context);
  const ctx: unknown = context.context;
  if (ctx === undefined) return [];
  if (!isJsonObject(ctx)) throw badShape(doc, '/context', 'an object', ctx);
  const reqs: unknown = ctx.runtime_retrieval_requirements;
  if (reqs === undefined) return [];
  if (!Array.isArray(reqs)) throw badShape(doc, '/context/runtime_retrieval_requirements', 'a list of requirement objects', reqs);
  return reqs.map((r: unknown, i) => {
    const at = `/context/runtime_retrieval_requirements/${i}`;
    if (!isJsonObject(r)) throw badShape(doc, at, 'a requirement object', r);
    for (const k of ['trigger', 'compact_fact'] as const) {
      if (typeof r[k] !== 'string') throw badShape(doc, `${at}/${k}`, 'a string', r[k]);
    }
    return {
      text: `${r.trigger as string}: ${r.compact_fact as string}`,
      used_for: `runtime_retrieval_requirements[${i}] ${typeof r.requirement_id === 'string' ? r.requirement_id : ''}`.trimEnd(),
    };
  });
}

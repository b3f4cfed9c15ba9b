/**
 * What the coordinator lane's lore is for, and how much of it a packet may carry.
 *
 * Seed 001: "Retrieval can also make the packet worse if it floods the scene with faction or event
 * context and starves the character's own relevant pressures." So every lore excerpt names the scene
 * requirement it serves — a projected-context `runtime_retrieval_requirements` entry (trigger and compact
 * fact), a `latent_pressure_requirements` entry, the observed event, or a lore excerpt of the draft (the
 * author's own statement of what lore the scene needs, src/packet/draft-citations.ts) — or says that it is
 * context for the scene's seed; and a default budget, scaled to the draft, bounds how many excerpts and
 * characters of lore reach the prompt.
 *
 * Default budget (overridden by the policy's `max_chunks:N` / `max_chars:N` stop conditions):
 * - count: requirements (runtime + latent, plus the admitted vault refs the draft's lore excerpts cite) plus
 *   required seed refs, at least 1;
 * - characters: {@link DEFAULT_LORE_SHARE} of the draft prompt's characters, at least
 *   {@link MIN_LORE_CHARS}.
 * Selection under the budget, in rounds: the verified excerpts of the refs the draft's own lore excerpts
 * cite (src/packet/draft-citations.ts; the author's declared requirements), in order; each requirement's
 * best excerpt (requirement order; a requirement an excerpt chosen before already serves is done: a draft
 * lore excerpt's own verified excerpts serve it); each seed note's first excerpt (a seed note a verified
 * excerpt already comes from is done); then the rest by relevance (distinct requirement terms, then
 * traversal order). Kept excerpts stay in order: verified ones first, then the traversal's.
 */
import { processTerm, tokenize } from '../search/tokenize.js';
import { queryTermSet } from '../excerpts/excerpt.js';
import type { ProjectedLocalContext, ResponderPacket } from '../contracts/types.js';

/** Share of the draft prompt's characters that lore excerpts may take by default (0.25 = a quarter). */
export const DEFAULT_LORE_SHARE = 0.25;

/** Floor of the default character budget, so a short prompt still gets one compact excerpt. */
export const MIN_LORE_CHARS = 600;

/** A scene requirement an excerpt can serve. */
export interface SceneRequirement {
  /** Where it comes from and what it says, for `used_for`: `runtime_retrieval_requirements[0] turn-01.lore.pallas (scene grounding: …)`. */
  label: string;
  /** The text whose terms an excerpt is matched against. */
  text: string;
  /** Counted in the default budget (runtime and latent requirements) or not (the observed event). */
  counted: boolean;
  /** True when `text` is one of the traversal's queries (runtime requirements and the observed event; latent requirements and draft lore excerpts are matched, not walked). */
  query: boolean;
  /** For a draft lore excerpt's requirement: the excerpt's index in the draft's `visible_context.source_excerpts`. */
  draft_excerpt?: number;
  /**
   * Where it comes from: a projected-context `runtime_retrieval_requirements` entry (`runtime`), a
   * `latent_pressure_requirements` entry (`latent`), the observed event (`event`) or a draft lore excerpt
   * (`draft_lore`). Seed 001: the packet builder consumes `runtime_retrieval_requirements`; latent pressure
   * requirements label excerpts (`used_for`) but are not retrieval requirements, so an unmet one is info
   * (`latent_requirements_unmet`), an unmet runtime one a warning (`requirements_unmet`).
   */
  kind: 'runtime' | 'latent' | 'event' | 'draft_lore';
}

/** A lore excerpt of the draft, as a requirement: its index in `visible_context.source_excerpts`, ref_id and text (the paraphrase). */
export interface DraftLoreRequirement {
  index: number;
  ref_id: string;
  text: string;
}

/**
 * The scene requirements, in order: every `runtime_retrieval_requirements` entry (`"<trigger>:
 * <compact_fact>"`), every `latent_pressure_requirements` entry (its `text`), the observed event's
 * `observable_action` (not counted in the budget), then each of `draftLore` — the draft's lore excerpts,
 * whose paraphrases say what lore the author wanted the scene to carry (labelled
 * `visible_context.source_excerpts[6] <ref_id> (<text>)`; not counted here, since the budget counts the refs
 * they cite, and not walked: each is searched within its cited refs instead).
 */
export function sceneRequirements(draft: ResponderPacket, projected?: ProjectedLocalContext, draftLore: readonly DraftLoreRequirement[] = []): SceneRequirement[] {
  const out: SceneRequirement[] = [];
  const ctx = projected?.context;
  (ctx?.runtime_retrieval_requirements ?? []).forEach((r, i) => {
    const text = `${r.trigger}: ${r.compact_fact}`;
    out.push({ label: `runtime_retrieval_requirements[${i}] ${r.requirement_id} (${text})`, text, counted: true, query: true, kind: 'runtime' });
  });
  const latent = (ctx as { latent_pressure_requirements?: unknown } | undefined)?.latent_pressure_requirements;
  if (Array.isArray(latent)) {
    latent.forEach((r: unknown, i) => {
      if (typeof r !== 'object' || r === null) return;
      const { pressure_id: id, text } = r as { pressure_id?: unknown; text?: unknown };
      if (typeof text !== 'string' || text.trim() === '') return;
      out.push({ label: `latent_pressure_requirements[${i}]${typeof id === 'string' ? ` ${id}` : ''} (${text})`, text, counted: true, query: false, kind: 'latent' });
    });
  }
  out.push({ label: 'visible_context.observed_event.observable_action', text: draft.visible_context.observed_event.observable_action, counted: false, query: true, kind: 'event' });
  for (const d of draftLore) {
    out.push({ label: `visible_context.source_excerpts[${d.index}] ${d.ref_id} (${d.text})`, text: d.text, counted: false, query: false, draft_excerpt: d.index, kind: 'draft_lore' });
  }
  return out;
}

/** Distinct query terms of `requirement` that `text` contains (folded like search). */
function termsServed(text: string, requirementTerms: ReadonlySet<string>): number {
  const seen = new Set<string>();
  for (const tok of tokenize(text)) {
    const t = processTerm(tok);
    if (t !== null && requirementTerms.has(t)) seen.add(t);
  }
  return seen.size;
}

/**
 * Fewest distinct terms of a requirement an excerpt must contain to be said to serve it. One shared word
 * ("pressure", "service") is a coincidence more often than a reason.
 */
export const MIN_SERVED_TERMS = 2;

/** Least share of a requirement's distinct terms an excerpt must contain to serve it (long texts such as an observed event need more than two words in common). */
export const MIN_SERVED_SHARE = 0.2;

/**
 * How much of one requirement `text` covers: `shared` distinct requirement terms in `text`, of the
 * requirement's `wanted` distinct terms; `needed` is what serving it takes (at least
 * {@link MIN_SERVED_TERMS} and {@link MIN_SERVED_SHARE} of `wanted`).
 */
export function requirementOverlap(text: string, requirement: Pick<SceneRequirement, 'text'>): { shared: number; wanted: number; needed: number } {
  const wanted = new Set(queryTermSet([requirement.text]));
  return { shared: termsServed(text, wanted), wanted: wanted.size, needed: Math.max(MIN_SERVED_TERMS, Math.ceil(wanted.size * MIN_SERVED_SHARE)) };
}

/**
 * The requirement an excerpt serves: the one whose terms it contains most (distinct terms, at least
 * {@link MIN_SERVED_TERMS} and {@link MIN_SERVED_SHARE} of the requirement's terms; ties go to the earlier
 * requirement), with that count; null when none qualifies.
 */
export function servedRequirement(text: string, requirements: readonly SceneRequirement[]): { index: number; terms: number } | null {
  let best: { index: number; terms: number } | null = null;
  requirements.forEach((r, index) => {
    const { shared: terms, needed } = requirementOverlap(text, r);
    if (terms >= needed && (best === null || terms > best.terms)) best = { index, terms };
  });
  return best;
}

/** The lore excerpt budget of one packet: at most `count` excerpts and `chars` characters of excerpt text. */
export interface ExcerptBudget {
  count: number;
  chars: number;
  /** Where each bound comes from: `default (…)` or the policy's stop condition. */
  count_source: string;
  chars_source: string;
}

/**
 * The budget for a draft (see the module doc). `policyBudgets` are the compiled policy's
 * `max_chunks` / `max_chars` (null when the policy sets none). `citedRefs`: the vault refs the draft's lore
 * excerpts cite that the policy admits (src/packet/draft-citations.ts) — each is a requirement too, counted
 * whether or not it was verified, as a scene requirement counts whether or not it is met.
 */
export function excerptBudget(
  draft: ResponderPacket,
  requirements: readonly SceneRequirement[],
  seedCount: number,
  policyBudgets: { max_chunks: number | null; max_chars: number | null },
  citedRefs = 0,
): ExcerptBudget {
  const scene = requirements.filter((r) => r.counted).length;
  const counted = scene + citedRefs;
  const defaultCount = Math.max(1, counted + seedCount);
  const what = citedRefs === 0 ? '' : ` (${scene > 0 ? `${scene} of the scene, ` : ''}${citedRefs} ref${citedRefs === 1 ? '' : 's'} cited by the draft's lore excerpts)`;
  const defaultChars = Math.max(MIN_LORE_CHARS, Math.floor(draft.packet_prompt_text.length * DEFAULT_LORE_SHARE));
  return {
    count: policyBudgets.max_chunks ?? defaultCount,
    chars: policyBudgets.max_chars ?? defaultChars,
    count_source: policyBudgets.max_chunks !== null ? `stop condition max_chunks:${policyBudgets.max_chunks}` : `default: ${counted} requirement${counted === 1 ? '' : 's'}${what} + ${seedCount} seed${seedCount === 1 ? '' : 's'}`,
    chars_source:
      policyBudgets.max_chars !== null
        ? `stop condition max_chars:${policyBudgets.max_chars}`
        : `default: ${DEFAULT_LORE_SHARE * 100} % of the draft prompt's ${draft.packet_prompt_text.length} characters (at least ${MIN_LORE_CHARS})`,
  };
}

/** A candidate lore excerpt for {@link selectWithinBudget}. */
export interface BudgetCandidate {
  /** Characters the excerpt adds to the prompt. */
  chars: number;
  /** Index into the requirements it serves, or null. */
  requirement: number | null;
  /** Distinct requirement terms it contains (0 without a requirement). */
  terms: number;
  /** True for an excerpt of a seed note. */
  seed: boolean;
  /** The seed note's path, for one-per-seed selection. */
  path: string;
  /** True for a verified excerpt of a draft lore excerpt's cited ref: chosen first, in order. */
  verified?: boolean;
}

/**
 * Choose which candidates fit the budget (see the module doc for the rounds). Returns the chosen indexes
 * in ascending (traversal) order. A candidate that does not fit the characters left is skipped, and a
 * smaller later one may still fit.
 */
export function selectWithinBudget(candidates: readonly BudgetCandidate[], requirementCount: number, budget: ExcerptBudget): number[] {
  const chosen = new Set<number>();
  let chars = 0;
  const take = (i: number): void => {
    if (chosen.has(i) || chosen.size >= budget.count) return;
    const c = candidates[i] as BudgetCandidate;
    if (chars + c.chars > budget.chars) return;
    chosen.add(i);
    chars += c.chars;
  };
  const byRelevance = (a: number, b: number): number => (candidates[b] as BudgetCandidate).terms - (candidates[a] as BudgetCandidate).terms || a - b;
  const all = candidates.map((_, i) => i);
  const seedsDone = new Set<string>();
  for (const i of all) {
    const c = candidates[i] as BudgetCandidate;
    if (!c.verified) continue;
    take(i);
    if (chosen.has(i) && c.seed) seedsDone.add(c.path);
  }
  for (let r = 0; r < requirementCount; r++) {
    const serving = all.filter((i) => candidates[i]?.requirement === r).sort(byRelevance);
    if (serving.some((i) => chosen.has(i))) continue;
    for (const i of serving) {
      const before = chosen.size;
      take(i);
      if (chosen.size > before) break;
    }
  }
  for (const i of all) {
    const c = candidates[i] as BudgetCandidate;
    if (!c.seed || seedsDone.has(c.path)) continue;
    const before = chosen.size;
    take(i);
    if (chosen.size > before || chosen.has(i)) seedsDone.add(c.path);
  }
  for (const i of [...all].sort(byRelevance)) take(i);
  return [...chosen].sort((a, b) => a - b);
}

/** A counted scene requirement no lore excerpt of the packet serves (reported as `requirements_unmet`). */
export interface UnmetRequirement {
  /** Index into the scene requirements ({@link sceneRequirements}). */
  index: number;
  /** Its label, as `used_for` would name it. */
  label: string;
  /** ref_ids of the draft's non-lore excerpts that do serve it (the draft's own grounding), if any. */
  covered_by_draft: string[];
  /**
   * `runtime` (a `runtime_retrieval_requirements` entry: the lore the builder was asked to retrieve; a
   * `requirements_unmet` warning) or `latent` (a `latent_pressure_requirements` entry, often about speech
   * or manner that no lore can serve; a `latent_requirements_unmet` info finding). Seed 001.
   */
  kind: 'runtime' | 'latent';
}

/**
 * The counted requirements (runtime and latent) that no lore excerpt serves — none shares the terms serving
 * takes ({@link requirementOverlap}: at least {@link MIN_SERVED_TERMS} and {@link MIN_SERVED_SHARE} of the
 * requirement's distinct terms; `used_for` names the best such requirement, this counts every one) — in
 * requirement order, each with the draft's non-lore excerpts that serve it. The observed event is not
 * counted: it is the scene's query, not a fact to ground.
 */
export function unmetRequirements(
  requirements: readonly SceneRequirement[],
  lore: readonly { text: string }[],
  draftOwn: readonly { ref_id: string; text: string }[],
): UnmetRequirement[] {
  const met = new Set<number>();
  for (const ex of lore) {
    requirements.forEach((r, i) => {
      const o = requirementOverlap(ex.text, r);
      if (o.shared >= o.needed) met.add(i);
    });
  }
  const out: UnmetRequirement[] = [];
  requirements.forEach((r, index) => {
    if (!r.counted || met.has(index)) return;
    const covered = draftOwn.filter((ex) => servedRequirement(ex.text, requirements)?.index === index).map((ex) => ex.ref_id);
    out.push({ index, label: r.label, covered_by_draft: covered, kind: r.kind === 'latent' ? 'latent' : 'runtime' });
  });
  return out;
}

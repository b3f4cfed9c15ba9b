/**
 * Off-scene seeds (docs/RETRIEVE.md, "Policy"): a traversal policy given from outside the draft (`--policy`,
 * a batch's `--policy-dir` or `<id>.policy.json`) starts the walk at its required seeds; when none of them
 * has anything to do with the draft's own scene, the packet is grounded in another scene's lore (a Pallas
 * strike policy applied to the Lucent hostage feed). The check is deliberately loose — it asks only whether
 * a seed shares *anything* with the scene — so it flags a wrong mapping, never a debatable one.
 *
 * A seed is on the draft's scene when the draft names it: an `allowed_scope` entry is the seed or a folder
 * holding it, a `source_excerpts` entry cites it (a `;`-joined part of its `source_ref`), or a term of the
 * seed note's title or of one of its aliases (folded like search, stop words dropped) occurs in the draft's
 * prompt, local context or observed event — as itself or by its Porter stem (the index's stemmed field,
 * `stemTerm`), so "Harbor Neutrality" is on a scene about a "neutral pier".
 */
import type { VaultIndex, VaultPath } from '../types.js';
import type { ResponderPacket, TraversalPolicy } from '../contracts/types.js';
import { getNote } from '../indexer/lookup.js';
import { isUnderPrefix, parseRef } from '../refs/ref.js';
import { phraseTerms, queryTerms, stemTerm } from '../search/tokenize.js';
import { sourceParts } from './scope.js';

/** The vault path a ref names (folders keep their trailing `/`), or null when it is not a ref of this vault. */
function refPath(ref: string, namespace: string): { path: string; folder: boolean } | null {
  try {
    const r = parseRef(ref.trim(), { namespace });
    return { path: r.path, folder: r.is_prefix };
  } catch {
    return null;
  }
}

/**
 * Why the draft names the seed at `path` (`allowed_scope/<i>`, `source_excerpts/<i>`, `term "<t>"`), or null
 * when it shares nothing with the draft's scene.
 */
export function seedNamedBy(index: VaultIndex, draft: ResponderPacket, path: VaultPath): string | null {
  const ns = index.namespace;
  const scope = Array.isArray(draft.lore_access.allowed_scope) ? draft.lore_access.allowed_scope : [];
  for (const [i, s] of scope.entries()) {
    const r = typeof s === 'string' ? refPath(s, ns) : null;
    if (r !== null && (r.folder ? isUnderPrefix(path, r.path) : r.path === path)) return `allowed_scope/${i}`;
  }
  for (const [i, ex] of draft.visible_context.source_excerpts.entries()) {
    for (const part of sourceParts(ex.source_ref, ns).lore) if (refPath(part, ns)?.path === path) return `source_excerpts/${i}`;
  }
  const note = getNote(index, path);
  if (!note) return null;
  const vc = draft.visible_context;
  const scene = new Set<string>();
  for (const t of phraseTerms([draft.packet_prompt_text, vc.local_context_prompt, vc.observed_event.observable_action, vc.observed_event.spoken_text ?? ''].join('\n'))) {
    scene.add(t);
    const stem = stemTerm(t);
    if (stem !== null) scene.add(stem);
  }
  for (const name of [note.title, ...note.aliases]) {
    const hit = queryTerms(name).find((t) => scene.has(t) || scene.has(stemTerm(t) ?? '\u0000'));
    if (hit !== undefined) return `term ${JSON.stringify(hit)}`;
  }
  return null;
}

/**
 * The policy's required seeds when none of them is on the draft's scene ({@link seedNamedBy}), as refs in
 * policy order; [] when at least one is, or the policy has none. Seeds that are not notes of this vault are
 * left to compilePolicy (`seed_not_found`).
 */
export function offSceneSeeds(index: VaultIndex, draft: ResponderPacket, policy: TraversalPolicy): string[] {
  const seeds = policy.required_seed_refs.flatMap((ref) => {
    const r = refPath(ref, index.namespace);
    return r !== null && !r.folder ? [{ ref, path: r.path as VaultPath }] : [];
  });
  if (seeds.length === 0) return [];
  return seeds.some((s) => seedNamedBy(index, draft, s.path) !== null) ? [] : seeds.map((s) => s.ref);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { backlinks, outgoingLinks } from '../src/indexer/lookup.js';
import { checkEdge, compilePolicy, edgeClassLabel, edgeTarget } from '../src/policy/index.js';
import type { CompiledPolicy } from '../src/policy/index.js';
import { visibleLinks } from '../src/policy/sections.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import { traverse } from '../src/traversal/index.js';
import type { TraverseResult } from '../src/traversal/index.js';
import { LINK_DECAY, LINK_MIX, linkContextRelevance, relevanceTables } from '../src/traversal/traverse.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';

// An oracle for the walk's graph and scores, rebuilt here from the index and the policy alone: which edges
// exist, how deep each lies, what `checkEdge` says of it, and what link score the passage it stands in gives
// it. The walk must agree on every edge of every note it reached, consulted or not (docs/TRAVERSAL.md "Walk",
// steps 3–4).

const WORLD = JSON.parse(readFileSync(join(FIXTURES, 'policies', 'world-blackout.policy.json'), 'utf8')) as TraversalPolicy;
const NS = 'FixtureLore:';
const QUERIES = ['sanctuary capacity during a blackout', 'rescue obligations'];
/** The reasons only `checkEdge` gives (refusals before an edge is scored). */
const CHECK_REASONS = new Set(['unresolved', 'depth_exceeded', 'hidden_ref', 'future_era', 'prefix_denied', 'class_not_allowed', 'not_found']);

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
});

const strip = (ref: string) => (ref.startsWith(NS) ? ref.slice(NS.length) : ref);
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

interface ExpectedEdge { key: string; from: string; depth: number; reason: string | null; holder: string; lines: number[] }

/**
 * Breadth-first over the links the policy's notes hold, from the start notes at depth 0: every edge group
 * (direction, target, class label) of every reached note, with `checkEdge`'s verdict at the source's depth.
 * A target first reached at depth d is at depth d (shortest hop count from a start note).
 */
function expectedGraph(compiled: CompiledPolicy, start: readonly string[]): { edges: Map<string, ExpectedEdge>; depth: Map<string, number> } {
  const depth = new Map<string, number>(start.map((p) => [p, 0]));
  const edges = new Map<string, ExpectedEdge>();
  let layer = [...start];
  for (let d = 0; layer.length > 0; d++) {
    const next: string[] = [];
    for (const path of layer) {
      const links = [
        ...visibleLinks(compiled, outgoingLinks(index, path)).map((l) => ({ l, dir: 'outbound' as const })),
        ...(compiled.follow.backlink ? visibleLinks(compiled, backlinks(index, path)).filter((l) => l.source_path !== path).map((l) => ({ l, dir: 'inbound' as const })) : []),
      ];
      for (const { l, dir } of links) {
        if (l.syntax === 'tag' || l.syntax === 'external' || l.resolution.status === 'external') continue;
        const target = edgeTarget(l, dir);
        const to = target ?? l.raw;
        const key = `${path} -> ${to} ${edgeClassLabel(l, dir)}`;
        const chk = checkEdge(compiled, l, d, dir);
        const e = edges.get(key);
        if (e) { if (!e.lines.includes(l.line)) e.lines.push(l.line); continue; }
        edges.set(key, { key, from: path, depth: d + 1, reason: chk.ok ? null : chk.reason, holder: dir === 'inbound' ? l.source_path : path, lines: [l.line] });
        if (chk.ok && target !== null && !depth.has(target)) { depth.set(target, d + 1); next.push(target); }
      }
    }
    layer = next;
  }
  return { edges, depth };
}

function startNotes(compiled: CompiledPolicy): string[] {
  return [...compiled.seeds, ...compiled.scope.filter((p) => !compiled.seeds.includes(p))];
}

function walk(p: TraversalPolicy, queries: readonly string[], packet?: Packet) {
  const compiled = compilePolicy(p, { index, packet });
  return { compiled, r: traverse(index, compiled, { queries }) };
}

type Packet = Parameters<typeof compilePolicy>[1]['packet'];
const CASES: [string, TraversalPolicy, string[], Packet?][] = [
  ['the world policy (plain-English link classes, depth 2)', WORLD, QUERIES],
  ['all links and backlinks, depth 3, no relevance stops', {
    max_link_depth: 3, allowed_prefixes: ['World/Pre-Elysium/', 'World/Politics/'],
    required_seed_refs: ['World/Pre-Elysium/index.md'], follow_link_classes: ['wikilink', 'markdown_link', 'embed', 'backlink'],
    stop_conditions: ['stop before post-Elysium lore', 'min_relevance:0', 'min_relative_relevance:0', 'min_score_ratio:0'],
  }, ['harbor charter rescue']],
  ['the world policy with a scope folder (every Politics note a start point at depth 0)', WORLD, QUERIES,
    { lore_access: { allowed_scope: ['FixtureLore:World/Politics/'] } }],
];

describe('the walk against an oracle of the allowed link graph (lore-fixtures)', () => {
  it.each(CASES)('%s: every edge of every reached note is a decision, refused exactly where checkEdge refuses it, at its depth from the start notes', (_name, p, queries, packet) => {
    const { compiled, r } = walk(p, queries, packet);
    // The scope folder really adds start points: the Politics notes the policy admits.
    if (packet) expect(compiled.scope).toEqual(['World/Politics/Harbor Neutrality.md', 'World/Politics/Salvage Law.md']);
    const { edges } = expectedGraph(compiled, startNotes(compiled));
    const actual = r.decisions.filter((d) => d.link_class !== 'allowed_scope');
    expect(actual.map((d) => `${strip(d.from)} -> ${strip(d.to)} ${d.link_class}`).sort()).toEqual([...edges.keys()].sort());
    for (const d of actual) {
      const e = edges.get(`${strip(d.from)} -> ${strip(d.to)} ${d.link_class}`)!;
      expect([d.depth, d.lines]).toEqual([e.depth, e.lines]);
      // checkEdge's refusals are the walk's, and no other edge carries a checkEdge reason.
      if (e.reason !== null) expect(d.reason).toBe(e.reason);
      else expect(CHECK_REASONS.has(d.reason ?? '')).toBe(false);
    }
  });

  it('reads links of notes it never consulted: their edges are candidates, scored and decided', () => {
    const { r } = walk(WORLD, QUERIES);
    const consulted = new Set([...r.consulted_refs, ...r.followed_refs]);
    const unread = r.decisions.filter((d) => d.depth === 2 && !consulted.has(d.from) && d.link_score !== null);
    // Meridian Compact and Halcyon Mutual, linked from the seed's field line, are never consulted (under the
    // relevance stop), yet their links are the depth-2 candidates, each scored from its passage.
    const MJ = 'World/Pre-Elysium/Factions/Powers/Major/';
    expect(unread.map((d) => [strip(d.from).replace(MJ, ''), strip(d.to), d.reason, d.link_score])).toEqual([
      ['Meridian Compact.md', `${MJ}Saltglass Syndicate.md`, 'below_relative_relevance', 0.00359],
      ['Meridian Compact.md', 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md', 'below_relevance', 0.000558],
      ['Meridian Compact.md', 'World/Politics/Salvage Law.md', 'below_relevance', 0.000558],
      ['Meridian Compact.md', 'World/Pre-Elysium/Technology/Heat Sink Lattice.md', 'below_relevance', 0],
      ['Halcyon Mutual.md', `${MJ}Saltglass Syndicate.md`, 'below_relative_relevance', 0.03721],
    ]);
  });

  it.each(CASES)('%s: every link score is parent score × passage relevance × LINK_DECAY, every followed score LINK_MIX × best link + (1 − LINK_MIX) × relevance', (_name, p, queries, packet) => {
    const { compiled, r } = walk(p, queries, packet);
    const rel = relevanceTables(index, compiled, queries);
    const { depth } = expectedGraph(compiled, startNotes(compiled));
    const seeds = new Set(compiled.seeds as readonly string[]);
    // A note's score from the edges one layer closer to the start notes (seeds score 1, scope notes their relevance).
    const score = new Map<string, number>();
    const scoreOf = (path: string): number => {
      if (seeds.has(path)) return 1;
      const known = score.get(path);
      if (known !== undefined) return known;
      const own = round6(rel.note.get(path) ?? 0);
      if (depth.get(path) === 0) { score.set(path, own); return own; }
      let best = 0;
      for (const d of r.decisions) {
        if (strip(d.to) !== path || d.depth !== depth.get(path) || d.link_class === 'allowed_scope' || CHECK_REASONS.has(d.reason ?? '')) continue;
        if (depth.get(strip(d.from)) !== d.depth - 1) continue;
        best = Math.max(best, linkScore(d));
      }
      const s = round6(LINK_MIX * best + (1 - LINK_MIX) * own);
      score.set(path, s);
      return s;
    };
    const linkScore = (d: TraverseResult['decisions'][number]): number => {
      const holder = d.link_class.startsWith('backlink(') ? strip(d.to) : strip(d.from);
      return round6(scoreOf(strip(d.from)) * linkContextRelevance(index, rel.chunk, holder as never, d.lines) * LINK_DECAY);
    };
    let checked = 0;
    for (const d of r.decisions) {
      if (d.link_class === 'allowed_scope' || CHECK_REASONS.has(d.reason ?? '') || d.link_score === null) continue;
      expect(d.link_score).toBe(linkScore(d));
      checked++;
      if (d.outcome === 'followed') expect(d.detail).toContain(`(score ${scoreOf(strip(d.to))} = ${LINK_MIX} × link ${d.link_score} + ${round6(1 - LINK_MIX)} × relevance ${round6(rel.note.get(strip(d.to)) ?? 0)}`);
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('treats the budget as a ceiling: with max_refs:12 the relevance stop ends the walk after three notes', () => {
    const { r } = walk({ ...WORLD, stop_conditions: [...WORLD.stop_conditions, 'max_refs:12'] }, QUERIES);
    expect([r.stats.notes_consulted, r.stats.stopped_by, r.stats.budgets.max_refs]).toEqual([3, 'min_relative_relevance', 12]);
  });

  it.each(CASES)('%s: gives byte-identical results from a rebuilt index, with and without diversity', async (_name, p, queries, packet) => {
    const again = await indexVault(FIXTURE_VAULT, { persist: false });
    for (const diversity of [0, 1]) {
      const a = traverse(index, compilePolicy(p, { index, packet }), { queries, diversity });
      const b = traverse(again, compilePolicy(p, { index: again, packet }), { queries, diversity });
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    }
  });
});

describe('self-links (lore-fixtures/WalkLore)', () => {
  it('records a note naming itself as already_visited "links to itself", a seed and a followed note alike', async () => {
    // Lore notes open by naming themselves ("The [[Tide Wardens]] keep …"): such a link leads nowhere new and
    // says so, rather than calling the note a start note.
    const walkIndex = await indexVault(join(FIXTURES, 'WalkLore'), { persist: false });
    const compiled = compilePolicy({
      max_link_depth: 2, allowed_prefixes: ['WalkLore:Harbor/'], required_seed_refs: ['WalkLore:Harbor/Quay.md'],
      follow_link_classes: ['wikilink'], stop_conditions: [],
    }, { index: walkIndex });
    const r = traverse(walkIndex, compiled, { queries: ['storm lamps'] });
    expect(r.followed_refs).toEqual(['WalkLore:Harbor/Tide Wardens.md', 'WalkLore:Harbor/Lamp Guild.md']);
    expect(r.decisions.map((d) => `${d.from.replace('WalkLore:Harbor/', '')} -> ${d.to.replace('WalkLore:Harbor/', '')} L${d.lines.join(',')} d${d.depth} ${d.reason ?? 'followed'}: ${d.detail}`)).toEqual([
      'Quay.md -> Quay.md L3 d1 already_visited: Harbor/Quay.md links to itself',
      'Quay.md -> Tide Wardens.md L3 d1 followed: consulted #2 (score 0.706346 = 0.5 × link 0.470897 + 0.5 × relevance 0.941794, 0 field link(s), 1 mention(s))',
      'Tide Wardens.md -> Tide Wardens.md L3 d2 already_visited: Harbor/Tide Wardens.md links to itself',
      'Tide Wardens.md -> Quay.md L3 d2 already_visited: Harbor/Quay.md is a start note, consulted first',
      'Tide Wardens.md -> Lamp Guild.md L3 d2 followed: consulted #3 (score 0.666308 = 0.5 × link 0.332616 + 0.5 × relevance 1, 0 field link(s), 1 mention(s))',
      // checkEdge comes first: at the depth limit even a self-link is depth_exceeded.
      'Lamp Guild.md -> Lamp Guild.md L3 d3 depth_exceeded: depth 3 > max_link_depth 2',
    ]);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { indexVault } from '../src/indexer/build.js';
import { splitLines, sliceLines } from '../src/notes/lines.js';
import { checkPath, compilePolicy } from '../src/policy/index.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import { packetQueries, requirementQueries, traverse } from '../src/traversal/index.js';
import type { TraverseResult, TraversalDecision } from '../src/traversal/index.js';
import type { VaultIndex } from '../src/types.js';
import { AETHERIA, FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';
import { makeTraceEntry, pickExcerptLines } from '../src/excerpts/index.js';
import { outputSchema } from '../src/contracts/schemas.js';

const WORLD_POLICY = join(FIXTURES, 'policies', 'world-blackout.policy.json');
const SELLA = join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json');
const F = 'FixtureLore:World/';
const MC = 'Pre-Elysium/Factions/Powers/Major/Meridian Compact.md';

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
});

function policy(over: Partial<TraversalPolicy> = {}): TraversalPolicy {
  return {
    max_link_depth: 1,
    allowed_prefixes: ['World/Pre-Elysium/', 'World/Politics/', 'World/Technology/'],
    required_seed_refs: [`World/${MC}`],
    follow_link_classes: ['wikilink', 'markdown_link', 'embed'],
    stop_conditions: ['stop before post-Elysium lore'],
    ...over,
  };
}

function run(p: TraversalPolicy, queries: string[], packet?: Parameters<typeof compilePolicy>[1]['packet']): TraverseResult {
  return traverse(index, compilePolicy(p, { index, packet }), { queries });
}

/** Decisions as `outcome reason from -> to class lines depth`, fixture prefix stripped. */
function brief(r: TraverseResult): string[] {
  const s = (x: string) => x.replace(F, '');
  return r.decisions.map((d: TraversalDecision) => `${d.outcome}${d.reason ? ` ${d.reason}` : ''} ${s(d.from)} -> ${s(d.to)} ${d.link_class} L${d.lines.join(',')} d${d.depth}`);
}

function traceLines(r: TraverseResult): string[] {
  return r.research_trace.map((t) => `${t.source_ref.replace(F, '')} L${t.line_start}-${t.line_end}`);
}

describe('traverse', () => {
  it('walks the world policy best-first by link context and skips irrelevant links (below_relevance, already_visited)', () => {
    const p = JSON.parse(readFileSync(WORLD_POLICY, 'utf8')) as TraversalPolicy;
    const r = run(p, ['sanctuary capacity during a blackout', 'rescue obligations']);
    expect(r.consulted_refs).toEqual([`${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md`, `${F}Pre-Elysium/Territories.md`]);
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Timeline/Events/Kestrel Route Accord.md`]);
    expect(traceLines(r)).toEqual([
      'Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1 L11-12',
      'Pre-Elysium/Territories.md#chunk2 L14-14',
      'Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0 L6-6',
    ]);
    expect(r.research_trace[2]).toEqual({
      trace_id: 'trace.kestrel_route_accord.chunk0',
      origin: 'runner_captured',
      query: 'rescue obligations',
      source_ref: `${F}Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0`,
      source_path: 'World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
      chunk_index: 0,
      line_start: 6,
      line_end: 6,
      extracted_constraint: 'The Kestrel Route Accord ties rescue obligations to convoy rights: a harbor that refuses a distress call loses its convoy slots for a season.',
      used_for: `link [[Kestrel Route Accord]] (wikilink/prose) from ${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md line 13, depth 1`,
    });
    expect(r.source_excerpts[1]).toEqual({
      ref_id: 'lore.territories.chunk2',
      source_ref: `${F}Pre-Elysium/Territories.md#chunk2`,
      text: '- The reach went dark during the [[Brinefall Blackout]].',
    });
    // The link to Kestrel stands in the seed's best-matching passage (context 1 → link 0.5) and Kestrel
    // matches "rescue obligations" (relevance 1): score 0.75. The field line linking Meridian Compact and
    // Halcyon Mutual matches one query word (coordination ½: link 0.066514), so both score under 0.35 × 0.75
    // and the walk stops.
    expect(brief(r).slice(0, 6)).toEqual([
      `skipped below_relative_relevance Pre-Elysium/Timeline/Events/Brinefall Blackout.md -> ${MC} wikilink/field L5 d1`,
      'skipped below_relative_relevance Pre-Elysium/Timeline/Events/Brinefall Blackout.md -> Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md wikilink/field L5 d1',
      'followed Pre-Elysium/Timeline/Events/Brinefall Blackout.md -> Pre-Elysium/Timeline/Events/Kestrel Route Accord.md wikilink/prose L13 d1',
      `skipped below_relative_relevance Pre-Elysium/Territories.md -> ${MC} wikilink/prose L7 d1`,
      'skipped already_visited Pre-Elysium/Territories.md -> Pre-Elysium/Timeline/Events/Kestrel Route Accord.md wikilink/list_item L13 d1',
      'skipped already_visited Pre-Elysium/Territories.md -> Pre-Elysium/Timeline/Events/Brinefall Blackout.md wikilink/list_item L14 d1',
    ]);
    expect(r.decisions.map((d) => [d.relevance, d.link_score]).slice(0, 3)).toEqual([[0.091111, 0.066514], [0.353969, 0.066514], [1, 0.5]]);
    expect(r.decisions[1]!.detail).toBe('score 0.210242 < min_relative_relevance 0.35 × best followed score 0.75');
    expect(r.decisions[2]!.detail).toBe('consulted #3 (score 0.75 = 0.5 × link 0.5 + 0.5 × relevance 1, 0 field link(s), 2 mention(s))');
    // Links of notes the walk never consulted are candidates too (the whole allowed graph, depth from the
    // seeds); min_relevance (0.3 here) drops a target only when neither it nor the passage linking it reaches it.
    const quiet = r.decisions.find((d) => d.to === `${F}Pre-Elysium/Factions/Movements/Quiet Hands.md`)!;
    expect([quiet.from, quiet.depth, quiet.reason, quiet.relevance, quiet.link_score, quiet.detail]).toEqual([
      `${F}${MC}`, 2, 'below_relevance', 0.137099, 0.000558, 'relevance 0.137099 and passage relevance 0.014169 < min_relevance 0.3',
    ]);
    expect(r.stats.skipped_by_reason).toEqual({
      prefix_denied: 1, class_not_allowed: 0, depth_exceeded: 8, budget_exhausted: 0, below_relevance: 3, below_relative_relevance: 10,
      hidden_ref: 1, future_era: 1, unresolved: 1, already_visited: 2, not_expanded: 0, not_found: 0,
    });
    expect([r.stats.stopped_by, r.stats.best_followed_score, r.stats.min_relative_relevance]).toEqual(['min_relative_relevance', 0.75, 0.35]);
  });

  it('ranks links by the passage they stand in: links of the matching section outrank the rest', () => {
    const r = run(policy({ stop_conditions: ['min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0'] }), ['answer distress calls and storm warnings']);
    // Quiet Hands and Salvage Law are linked from the Charter section, which matches the query; neither
    // note matches it itself, yet both come before the notes linked from the field lines and Equipment.
    expect(r.followed_refs.map((x) => x.replace(F, ''))).toEqual([
      'Politics/Salvage Law.md',
      'Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md',
      'Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md',
      'Pre-Elysium/Technology/Heat Sink Lattice.md',
    ]);
    expect(r.decisions.slice(0, 5).map((d) => [d.to.replace(F, ''), d.relevance, d.link_score])).toEqual([
      ['Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md', 0.015474, 0],
      ['Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md', 0, 0],
      ['Pre-Elysium/Factions/Movements/Quiet Hands.md', 0, 0.5],
      ['Politics/Salvage Law.md', 0.017993, 0.5],
      ['Pre-Elysium/Technology/Heat Sink Lattice.md', 0, 0],
    ]);
  });

  it('ends the walk when no candidate scores min_relative_relevance × the best followed one (default 0.35)', () => {
    // With the evidence floor off, the relevance stop is what ends this walk.
    const r = run(policy({ stop_conditions: ['stop before post-Elysium lore', 'min_relevance:0'] }), ['answer distress calls and storm warnings']);
    expect(r.followed_refs.map((x) => x.replace(F, ''))).toEqual(['Politics/Salvage Law.md', 'Pre-Elysium/Factions/Movements/Quiet Hands.md']);
    expect([r.stats.stopped_by, r.stats.best_followed_score, r.stats.min_relative_relevance, r.stats.skipped_by_reason.below_relative_relevance]).toEqual(['min_relative_relevance', 0.258997, 0.35, 3]);
    expect(r.decisions[0]!.detail).toBe('score 0.007737 < min_relative_relevance 0.35 × best followed score 0.258997');
    // By default the evidence floor (min_relevance 0.3) drops the same three before the walk starts: neither
    // they (relevance ≤ 0.015474) nor the field line and Equipment passages linking them match the query.
    const floor = run(policy(), ['answer distress calls and storm warnings']);
    expect(floor.followed_refs).toEqual(r.followed_refs);
    expect([floor.stats.stopped_by, floor.stats.min_relevance, floor.stats.skipped_by_reason.below_relevance, floor.stats.skipped_by_reason.below_relative_relevance]).toEqual(['frontier_exhausted', 0.3, 3, 0]);
    expect(floor.decisions[0]!.detail).toBe('relevance 0.015474 and passage relevance 0 < min_relevance 0.3 (the default evidence floor)');
    const off = run(policy({ stop_conditions: ['min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0'] }), ['answer distress calls and storm warnings']);
    expect([off.stats.stopped_by, off.followed_refs.length]).toEqual(['frontier_exhausted', 5]);
  });

  it('keeps a one-word match weak: coordination halves the relevance of a note holding one of two query terms', () => {
    // "zeppelin" is in no note, so Halcyon Mutual's chunks hold one of the two terms of the query: relevance
    // 0.5, not 1 (by BM25 ratio alone it is the query's best chunk).
    const r = run(policy(), ['Halcyon zeppelin']);
    expect(r.consulted_refs).toEqual([`${F}${MC}`]);
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`]);
    const halcyon = r.decisions.find((d) => d.outcome === 'followed')!;
    expect([halcyon.relevance, halcyon.link_score, halcyon.detail]).toEqual([
      0.5, 0.020104, 'consulted #2 (score 0.260052 = 0.5 × link 0.020104 + 0.5 × relevance 0.5, 1 field link(s), 1 mention(s))',
    ]);
    // The other four targets match neither the query nor through their passage: the evidence floor drops them.
    expect([r.stats.stopped_by, r.stats.best_followed_score, r.stats.skipped_by_reason.below_relevance, r.stats.skipped_by_reason.below_relative_relevance]).toEqual(['frontier_exhausted', 0.260052, 4, 0]);
  });

  it('applies the evidence floor by default (min_relevance 0.3); the policy can lower, raise or turn it off', () => {
    // A scene that matches the vault by one word ("Halcyon"): the relative stops compare with that weak best.
    const byDefault = run(policy(), ['Halcyon zeppelin']);
    const off = run(policy({ stop_conditions: ['stop before post-Elysium lore', 'min_relevance:0'] }), ['Halcyon zeppelin']);
    const high = run(policy({ stop_conditions: ['stop before post-Elysium lore', 'min_relevance:0.6'] }), ['Halcyon zeppelin']);
    const counts = (r: TraverseResult) => [r.stats.min_relevance, r.followed_refs.length, r.stats.skipped_by_reason.below_relevance, r.stats.skipped_by_reason.below_relative_relevance, r.stats.stopped_by];
    expect(counts(byDefault)).toEqual([0.3, 1, 4, 0, 'frontier_exhausted']);
    expect(counts(off)).toEqual([0, 1, 0, 4, 'min_relative_relevance']);
    expect(counts(high)).toEqual([0.6, 0, 5, 0, 'frontier_exhausted']);
    expect(off.followed_refs).toEqual(byDefault.followed_refs);
    // The policy's own floor says so without "(the default evidence floor)".
    expect(high.decisions.find((d) => d.reason === 'below_relevance')!.detail).toMatch(/< min_relevance 0\.6$/);
  });

  it('ends the walk at a score drop: the best candidate under min_score_ratio × the note followed last (default 0.5)', () => {
    // The salvage-dispute scene of lore-fixtures/eval/traversal.json: Halcyon Mutual matches the insurer
    // query (score 0.740464); Meridian Compact is linked from the same passage but matches nothing (0.260441),
    // a drop steeper than one hop of decay, so the walk ends there although the relevance stop
    // (0.35 × 0.740464 = 0.259162) would still admit it.
    const salvage = policy({
      max_link_depth: 2, allowed_prefixes: ['FixtureLore:World/Pre-Elysium/', 'FixtureLore:World/Politics/'],
      required_seed_refs: ['FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md'], follow_link_classes: ['wikilink'], stop_conditions: ['max_refs:12'],
    });
    const queries = ['who owns a wreck and where salvage claims are heard', 'insurers refuse to underwrite syndicate convoys'];
    const r = run(salvage, queries);
    expect(r.consulted_refs).toEqual([`${F}Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md`]);
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`]);
    expect([r.stats.stopped_by, r.stats.min_score_ratio, r.stats.last_followed_score, r.stats.best_followed_score]).toEqual(['min_score_ratio', 0.5, 0.740464, 0.740464]);
    const meridian = r.decisions.filter((d) => d.to === `${F}${MC}`);
    expect(meridian.map((d) => [d.reason, d.link_score, d.detail])).toEqual([
      ['below_relative_relevance', 0.5, 'score 0.260441 < min_score_ratio 0.5 × last followed score 0.740464'],
      ['below_relative_relevance', null, 'score 0.260441 < min_score_ratio 0.5 × last followed score 0.740464'],
      ['depth_exceeded', null, 'depth 3 > max_link_depth 2'],
    ]);
    const ledger = r.decisions.find((d) => d.to === `${F}Pre-Elysium/Factions/Movements/Open Ledger Society.md`)!;
    expect([ledger.reason, ledger.detail]).toEqual(['below_relative_relevance', 'score 0.25 < min_relative_relevance 0.35 × best followed score 0.740464']);
    // min_score_ratio:0 turns the score-drop stop off: Meridian Compact is followed and the relevance stop ends the walk.
    const off = run({ ...salvage, stop_conditions: ['max_refs:12', 'min_score_ratio:0'] }, queries);
    expect(off.followed_refs).toEqual([`${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`, `${F}${MC}`]);
    expect([off.stats.stopped_by, off.stats.min_score_ratio, off.stats.last_followed_score]).toEqual(['min_relative_relevance', 0, 0.260441]);
  });

  it('takes candidates from the whole allowed graph: a note reached only through a note never consulted', () => {
    const r = run(policy({ required_seed_refs: ['World/Pre-Elysium/index.md'], max_link_depth: 2, follow_link_classes: ['wikilink'], stop_conditions: [] }), ['open ledger society']);
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Factions/Movements/Open Ledger Society.md`]);
    const via = r.decisions.find((d) => d.outcome === 'followed')!;
    expect([via.from, via.depth, via.link_class]).toEqual([`${F}Pre-Elysium/Factions/index.md`, 2, 'wikilink/list_item']);
    expect(r.consulted_refs).not.toContain(`${F}Pre-Elysium/Factions/index.md`);
    expect(r.research_trace[1]!.used_for).toBe(`link [[Open Ledger Society]] (wikilink/list_item) from ${F}Pre-Elysium/Factions/index.md line ${via.lines[0]}, depth 2`);
  });

  it('spreads the budget over unlike notes with diversity (MMR-style)', () => {
    const p = policy({ stop_conditions: ['min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0', 'max_refs:3'] });
    const plain = traverse(index, compilePolicy(p, { index }), { queries: ['harbor rivals'] });
    const diverse = traverse(index, compilePolicy(p, { index }), { queries: ['harbor rivals'], diversity: 1 });
    // Halcyon Mutual and Saltglass Syndicate are both major powers (classes factions, powers, major: similarity 1).
    expect(plain.followed_refs.map((x) => x.replace(F, ''))).toEqual(['Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md', 'Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md']);
    expect(diverse.followed_refs.map((x) => x.replace(F, ''))).toEqual(['Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md', 'Politics/Salvage Law.md']);
  });

  it('records prefix_denied, unresolved, future_era and hidden_ref edges and follows markdown links and embeds', () => {
    // The relevance stops and the evidence floor are off here: this case is about which edges are followed or refused.
    const r = run(policy({ stop_conditions: ['stop before post-Elysium lore', 'min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0'] }), ['harbor charter rescue']);
    expect(r.followed_refs.map((x) => x.replace(F, ''))).toEqual([
      'Politics/Salvage Law.md',
      'Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md',
      'Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md',
      'Pre-Elysium/Technology/Heat Sink Lattice.md',
    ]);
    expect(brief(r).slice(0, 9)).toEqual([
      `followed ${MC} -> Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md wikilink/field L5 d1`,
      `followed ${MC} -> Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md wikilink/field L5 d1`,
      `followed ${MC} -> Pre-Elysium/Factions/Movements/Quiet Hands.md wikilink/prose L12 d1`,
      `followed ${MC} -> Politics/Salvage Law.md markdown_link/prose L13 d1`,
      `followed ${MC} -> Pre-Elysium/Technology/Heat Sink Lattice.md embed/prose L17 d1`,
      `skipped prefix_denied ${MC} -> Pre-Elysium-Extra/Dockside Rumors.md wikilink/prose L22 d1`,
      `skipped unresolved ${MC} -> [[Drowned Archive]] wikilink/prose L22 d1`,
      `skipped future_era ${MC} -> Post-Elysium/Veil Drive.md wikilink/prose L23 d1`,
      `skipped hidden_ref ${MC} -> Pre-Elysium/Author Notes/Brinefall Truth.md wikilink/prose L24 d1`,
    ]);
    expect(r.stats.links_ignored).toEqual({ external: 1, tag: 1 });
    expect(traceLines(r)[2]).toBe('Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md#chunk0 L6-6');
  });

  it('skips links whose target class is not listed (class_not_allowed)', () => {
    const r = run(policy({ follow_link_classes: ['events'] }), ['harbor']);
    expect(r.followed_refs).toEqual([]);
    expect(r.stats.skipped_by_reason.class_not_allowed).toBe(5);
    expect(brief(r)[3]).toBe(`skipped class_not_allowed ${MC} -> Politics/Salvage Law.md markdown_link/prose L13 d1`);
    expect(traceLines(r)).toEqual([`${MC}#chunk0 L7-7`]);
  });

  it('skips every edge of a seed when max_link_depth is 0 (depth_exceeded)', () => {
    const r = run(policy({ max_link_depth: 0 }), ['harbor']);
    expect(r.followed_refs).toEqual([]);
    expect(r.stats.skipped_by_reason).toMatchObject({ depth_exceeded: 8, unresolved: 1 });
    expect(r.stats.max_depth_reached).toBe(0);
    expect(brief(r).filter((d) => /Salvage Law|Heat Sink|Veil Drive|Brinefall Truth/.test(d))).toEqual([
      `skipped depth_exceeded ${MC} -> Politics/Salvage Law.md markdown_link/prose L13 d1`,
      `skipped depth_exceeded ${MC} -> Pre-Elysium/Technology/Heat Sink Lattice.md embed/prose L17 d1`,
      `skipped depth_exceeded ${MC} -> Post-Elysium/Veil Drive.md wikilink/prose L23 d1`,
      `skipped depth_exceeded ${MC} -> Pre-Elysium/Author Notes/Brinefall Truth.md wikilink/prose L24 d1`,
    ]);
    expect(r.decisions.find((d) => d.reason === 'depth_exceeded')?.detail).toBe('depth 1 > max_link_depth 0');
    expect(traceLines(r)).toEqual([`${MC}#chunk0 L7-7`]);
  });

  it('ends the walk at max_refs and records the queue as budget_exhausted', () => {
    const r = run(policy({ stop_conditions: ['max_refs:2', 'min_relevance:0'] }), ['storm insurance']);
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`]);
    expect(r.stats.stopped_by).toBe('max_refs');
    expect(r.stats.notes_consulted).toBe(2);
    // Queued targets the relevance stop had already ruled out (score < 0.35 × 0.5) say so; the rest ran out of budget.
    expect(brief(r).filter((d) => d.startsWith('skipped budget_exhausted') || d.startsWith('skipped below_relative_relevance'))).toEqual([
      `skipped below_relative_relevance ${MC} -> Pre-Elysium/Factions/Powers/Major/Saltglass Syndicate.md wikilink/field L5 d1`,
      `skipped budget_exhausted ${MC} -> Pre-Elysium/Factions/Movements/Quiet Hands.md wikilink/prose L12 d1`,
      `skipped budget_exhausted ${MC} -> Politics/Salvage Law.md markdown_link/prose L13 d1`,
      `skipped below_relative_relevance ${MC} -> Pre-Elysium/Technology/Heat Sink Lattice.md embed/prose L17 d1`,
    ]);
    expect(traceLines(r)).toEqual([`${MC}#chunk1 L11-11`, 'Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md#chunk1 L11-11']);
  });

  it('ends the walk when max_chars is spent', () => {
    const r = run(policy({ max_link_depth: 2, stop_conditions: ['max_chars:200'] }), ['storm insurance']);
    expect(r.stats.stopped_by).toBe('max_chars');
    expect(r.stats.excerpt_chars).toBe(118);
    // Halcyon Mutual's line 4 is a field line (no excerpt), and its prose line 6 does not fit the 82 characters left.
    expect(traceLines(r)).toEqual([`${MC}#chunk1 L11-11`]);
  });

  it('ends the walk at max_chunks', () => {
    const r = run(policy({ stop_conditions: ['max_chunks:2', 'min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0'] }), ['harbor']);
    expect(r.stats.stopped_by).toBe('max_chunks');
    // Field lines (3-5, "**Founded:** … harbor reckoning") carry no excerpt: the prose line 7 is the pick.
    expect(traceLines(r)).toEqual([`${MC}#chunk0 L7-7`, 'Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md#chunk0 L6-6']);
    expect(r.stats.skipped_by_reason.budget_exhausted).toBe(4);
  });

  it('consults but does not expand notes of a no_expand_class (not_expanded)', () => {
    const r = run(policy({
      required_seed_refs: ['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
      max_link_depth: 2,
      follow_link_classes: ['wikilink'],
      stop_conditions: ['no_expand_class:powers'],
    }), ['blackout']);
    expect(r.followed_refs.slice(0, 2)).toEqual([`${F}${MC}`, `${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`]);
    expect(r.stats.skipped_by_reason.not_expanded).toBe(14);
    expect(r.decisions.find((d) => d.reason === 'not_expanded')).toMatchObject({
      from: `${F}${MC}`, to: `${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`, detail: `World/${MC} has class powers (no_expand_class): its links are not walked`,
    });
  });

  it('walks inbound links in reverse only when backlink is listed', () => {
    const r = run(policy({ required_seed_refs: ['World/Pre-Elysium/Factions/Movements/Quiet Hands.md'], follow_link_classes: ['backlink'], stop_conditions: ['min_relative_relevance:0', 'min_score_ratio:0', 'min_relevance:0'] }), ['sanctuary beds']);
    expect(r.followed_refs.map((x) => x.replace(F, ''))).toEqual([MC, 'Pre-Elysium/Factions/Movements/Open Ledger Society.md', 'Pre-Elysium/Factions/index.md']);
    expect(brief(r).slice(0, 5)).toEqual([
      'skipped class_not_allowed Pre-Elysium/Factions/Movements/Quiet Hands.md -> Pre-Elysium/Factions/Movements/Open Ledger Society.md wikilink/prose L12 d1',
      `skipped class_not_allowed Pre-Elysium/Factions/Movements/Quiet Hands.md -> ${MC} wikilink/prose L12 d1`,
      'followed Pre-Elysium/Factions/Movements/Quiet Hands.md -> Pre-Elysium/Factions/Movements/Open Ledger Society.md backlink(block_link/prose) L8 d1',
      `followed Pre-Elysium/Factions/Movements/Quiet Hands.md -> ${MC} backlink(wikilink/prose) L12 d1`,
      'followed Pre-Elysium/Factions/Movements/Quiet Hands.md -> Pre-Elysium/Factions/index.md backlink(wikilink/list_item) L13 d1',
    ]);
  });

  it('consults allowed_scope start points best-first within the budgets', () => {
    const r = run(
      policy({ required_seed_refs: ['World/Pre-Elysium/Territories.md'], follow_link_classes: [], stop_conditions: ['max_refs:3'] }),
      ['salvage neutral pier'],
      { lore_access: { allowed_scope: ['World/Politics/Salvage Law.md', 'World/Politics/Harbor Neutrality.md', 'World/Technology/Signal Masking.md'] } },
    );
    expect(r.consulted_refs.map((x) => x.replace(F, ''))).toEqual(['Pre-Elysium/Territories.md', 'Politics/Salvage Law.md', 'Politics/Harbor Neutrality.md']);
    expect(brief(r).slice(0, 3)).toEqual([
      'followed allowed_scope -> Politics/Salvage Law.md allowed_scope L d0',
      'followed allowed_scope -> Politics/Harbor Neutrality.md allowed_scope L d0',
      'skipped budget_exhausted allowed_scope -> Technology/Signal Masking.md allowed_scope L d0',
    ]);
    expect(r.research_trace[1]!.used_for).toBe(`allowed_scope ${F}Politics/Salvage Law.md`);
    expect(r.stats.scope_consulted).toBe(2);
  });

  it('narrows a seed with a heading fragment to that section and falls back to seed titles as the query', () => {
    const r = run(policy({ required_seed_refs: ['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#Aftermath'], follow_link_classes: [] }), []);
    expect(r.stats.queries).toEqual(['Brinefall Blackout']);
    expect(r.stats.query_source).toBe('seed_titles');
    expect(r.research_trace).toEqual([{
      trace_id: 'trace.brinefall_blackout.chunk1',
      origin: 'runner_captured',
      query: 'Brinefall Blackout',
      source_ref: `${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1`,
      source_path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md',
      chunk_index: 1,
      line_start: 11,
      line_end: 11,
      extracted_constraint: 'Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.',
      used_for: 'required_seed_refs[0] World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#Aftermath',
    }]);
  });

  it('names the requirement a query came from in used_for', () => {
    const r = traverse(index, compilePolicy(policy({ follow_link_classes: [] }), { index }), {
      queries: [{ text: 'salvage disputes arbitration', used_for: 'runtime_retrieval_requirements[0] req.salvage' }],
    });
    expect(r.research_trace[0]!.used_for).toBe(`required_seed_refs[0] World/${MC}; query from runtime_retrieval_requirements[0] req.salvage`);
    expect(traceLines(r)).toEqual([`${MC}#chunk1 L13-13`]);
  });

  it('writes trace entries with exactly Ghostlight fields whose text equals the file lines', () => {
    const r = run(policy({ max_link_depth: 2 }), ['harbor charter rescue', 'storm']);
    for (const t of r.research_trace) {
      expect(Object.keys(t)).toEqual(['trace_id', 'origin', 'query', 'source_ref', 'source_path', 'chunk_index', 'line_start', 'line_end', 'extracted_constraint', 'used_for']);
      const lines = splitLines(readFileSync(join(FIXTURE_VAULT, t.source_path), 'utf8'));
      expect(t.extracted_constraint).toBe(sliceLines(lines, t.line_start, t.line_end));
    }
    expect(r.source_excerpts.map((e) => e.text)).toEqual(r.research_trace.map((t) => t.extracted_constraint));
  });

  it('ends the walk when time_budget_ms runs out (clock injected)', () => {
    let t = 0;
    const r = traverse(index, compilePolicy(policy({ stop_conditions: ['time_budget_ms:5', 'min_relevance:0'] }), { index }), { queries: ['harbor'], now: () => (t += 3) });
    expect(r.stats.stopped_by).toBe('time_budget_ms');
    expect(r.stats.notes_consulted).toBe(2);
  });

  it('passes --strict-policy with a token-only policy file', () => {
    const p = JSON.parse(readFileSync(join(FIXTURES, 'policies', 'world-tokens.policy.json'), 'utf8')) as TraversalPolicy;
    const c = compilePolicy(p, { index, strict: true });
    expect(c.receipt_totals).toEqual({ enforced: 13, partially_enforced: 0, advisory: 0 });
    const r = traverse(index, c, { queries: ['storm insurance salvage'] });
    expect(r.stats.notes_consulted).toBeLessThanOrEqual(4);
    expect(r.stats.excerpt_chars).toBeLessThanOrEqual(1200);
  });

  it('is deterministic', () => {
    const p = JSON.parse(readFileSync(WORLD_POLICY, 'utf8')) as TraversalPolicy;
    const a = JSON.stringify(run(p, ['sanctuary capacity']));
    const b = JSON.stringify(run(p, ['sanctuary capacity']));
    expect(a).toBe(b);
  });

  it('refuses a policy compiled against another snapshot', () => {
    const c = compilePolicy(policy(), { index });
    expect(() => traverse({ ...index, snapshot_id: 'other' }, c)).toThrow(`the policy was compiled against snapshot ${index.snapshot_id}, not other; compile it again for this index`);
  });
});

describe('packetQueries and requirementQueries', () => {
  it('take the observed event and excerpts of a packet, and the requirements of a projected context', () => {
    expect(packetQueries({ visible_context: { observed_event: { observable_action: 'Maer routes a packet.', spoken_text: '' }, source_excerpts: [{ ref_id: 'x', text: 'Beds are full.' }] } })).toEqual([
      { text: 'Maer routes a packet.', used_for: 'visible_context.observed_event.observable_action' },
      { text: 'Beds are full.', used_for: 'visible_context.source_excerpts[0] x' },
    ]);
    expect(requirementQueries({ context: { runtime_retrieval_requirements: [{ requirement_id: 'r1', trigger: 'scene grounding', compact_fact: 'Salvage law rules wrecks.' }] } })).toEqual([
      { text: 'scene grounding: Salvage law rules wrecks.', used_for: 'runtime_retrieval_requirements[0] r1' },
    ]);
  });
});

/** A fresh index dir per test run, so a persisted index of an older layout never adds a rebuild warning. */
const cliIndexDir = mkdtempSync(join(tmpdir(), 'loretrace-d-traverse-cli-'));
afterAll(() => rmSync(cliIndexDir, { recursive: true, force: true }));

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const env = { ...process.env, LORETRACE_INDEX_DIR: cliIndexDir };
  const code = await main(argv, { stdout: (t) => { out += t; }, stderr: (t) => { err += t; }, env, cwd: FIXTURES, isTTY: false });
  return { code, out, err };
}

describe('loretrace traverse (CLI)', () => {
  it('prints byte-identical JSON on two runs', async () => {
    const argv = ['traverse', '--lore', 'FixtureLore', '--policy', 'policies/world-blackout.policy.json', '--query', 'sanctuary capacity during a blackout', '--json'];
    const a = await cli(argv);
    const b = await cli(argv);
    expect(a.code).toBe(0);
    expect(a.err).toBe('');
    expect(b.out).toBe(a.out);
    const r = JSON.parse(a.out) as TraverseResult;
    expect(Object.keys(r)).toEqual(['schema_version', 'snapshot_id', 'policy_receipt', 'consulted_refs', 'followed_refs', 'source_excerpts', 'research_trace', 'decisions', 'stats']);
    // Kestrel Route Accord does not match the query itself (relevance 0), but its link stands in the
    // seed's passage that does, so min_relevance 0.3 keeps it (link 0.5, score 0.25).
    expect(r.followed_refs).toEqual([`${F}Pre-Elysium/Timeline/Events/Kestrel Route Accord.md`, `${F}Pre-Elysium/Factions/Powers/Major/Halcyon Mutual.md`]);
    expect([r.stats.skipped_by_reason.below_relevance, r.stats.skipped_by_reason.below_relative_relevance, r.stats.stopped_by]).toEqual([8, 3, 'min_relative_relevance']);
  }, 30_000);

  it('takes a { traversal_policy, allowed_scope } policy file as retrieve does, with a draft and alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loretrace-d-'));
    const file = join(dir, 'wrapped.policy.json');
    const policy = JSON.parse(readFileSync(join(FIXTURES, 'packets', 'brinefall-intake.policy.json'), 'utf8'));
    writeFileSync(file, JSON.stringify({ traversal_policy: policy, allowed_scope: ['FixtureLore:World/Pre-Elysium/Territories.md'] }));
    const withDraft = await cli(['traverse', '--lore', 'FixtureLore', '--packet', 'packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', '--policy', file, '--receipt-only', '--json']);
    expect([withDraft.code, withDraft.err]).toEqual([0, '']);
    const rows = (JSON.parse(withDraft.out) as { rows: { kind: string; pointer: string; clause: string }[] }).rows;
    expect(rows.filter((r) => r.kind === 'allowed_scope' || r.kind === 'seed').map((r) => [r.pointer, r.clause])).toEqual([
      ['/traversal_policy/required_seed_refs/0', 'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
      ['/lore_access/allowed_scope/0', 'FixtureLore:World/Pre-Elysium/Territories.md'],
    ]);
    expect(rows.filter((r) => r.kind === 'hidden_ref').map((r) => r.clause)).toEqual(['FixtureLore:World/Pre-Elysium/Author Notes/', 'Brinefall Truth', 'future branch continuation', 'coordinator review rationale']);
    const alone = await cli(['traverse', '--lore', 'FixtureLore', '--policy', file, '--json']);
    expect([alone.code, alone.err]).toEqual([0, '']);
    const r = JSON.parse(alone.out) as TraverseResult;
    expect(r.consulted_refs).toEqual([`${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md`, `${F}Pre-Elysium/Territories.md`]);
    // A file with only { traversal_policy } walks as the bare policy does, with a draft too (the draft's
    // placeholder scope is dropped as retrieve drops it, so the policy's seeds are the scope).
    writeFileSync(file, JSON.stringify({ traversal_policy: policy }));
    const draftArgs = ['--packet', 'packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', '--query', 'sanctuary berths during the blackout', '--json'];
    const onlyPolicy = await cli(['traverse', '--lore', 'FixtureLore', ...draftArgs, '--policy', file]);
    const bare = await cli(['traverse', '--lore', 'FixtureLore', ...draftArgs, '--policy', 'packets/brinefall-intake.policy.json']);
    expect([onlyPolicy.code, onlyPolicy.err, bare.code]).toEqual([0, '', 0]);
    const [o, b] = [JSON.parse(onlyPolicy.out) as TraverseResult, JSON.parse(bare.out) as TraverseResult];
    expect(o.consulted_refs).toEqual([`${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md`]);
    expect([o.consulted_refs, o.followed_refs, o.research_trace]).toEqual([b.consulted_refs, b.followed_refs, b.research_trace]);
    writeFileSync(file, JSON.stringify({ traversal_policy: { ...policy, max_link_depth: -1 } }));
    const bad = await cli(['traverse', '--lore', 'FixtureLore', '--packet', 'packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', '--policy', file]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('traversal_policy /traversal_policy/max_link_depth must be an integer ≥ 0 (got -1)');
  }, 30_000);

  it('turns projected-context requirements into queries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loretrace-d-'));
    const ctxFile = join(dir, 'ctx.json');
    writeFileSync(ctxFile, JSON.stringify({ context: { runtime_retrieval_requirements: [{ requirement_id: 'req.rescue', trigger: 'scene grounding', compact_fact: 'rescue obligations decide convoy rights' }] } }));
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', 'policies/world-blackout.policy.json', '--projected-context', ctxFile, '--json']);
    expect(r.code).toBe(0);
    const res = JSON.parse(r.out) as TraverseResult;
    expect(res.stats.queries).toEqual(['scene grounding: rescue obligations decide convoy rights']);
    expect(res.research_trace.map((t) => [t.source_ref.replace(F, ''), t.query])).toEqual([
      ['Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk0', `lookup ${F}Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk0`],
      ['Pre-Elysium/Territories.md#chunk1', 'scene grounding: rescue obligations decide convoy rights'],
      ['Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0', 'scene grounding: rescue obligations decide convoy rights'],
    ]);
    expect(res.research_trace[1]!.used_for).toBe(`required_seed_refs[1] ${F}Pre-Elysium/Territories.md; query from runtime_retrieval_requirements[0] req.rescue`);
  }, 30_000);

  it('warns no_start_notes when the policy has no seed and no scope note, even with --query (exit 0, nothing walked)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loretrace-d-'));
    const file = join(dir, 'noseeds.policy.json');
    writeFileSync(file, JSON.stringify({ max_link_depth: 2, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: ['max_refs:3'] }));
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', file, '--query', 'sanctuary capacity', '--json']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(`loretrace: warning: ${file}: the policy has no required_seed_refs and no allowed_scope note it admits, so there is nothing to walk from (a --query ranks what the walk reaches; it does not start it): add a note to /required_seed_refs (a Namespace:path ref under allowed_prefixes), or give allowed_scope notes (a policy file of { traversal_policy, allowed_scope }, or --packet) [no_start_notes]\n`);
    expect(JSON.parse(r.out)).toMatchObject({ consulted_refs: [], research_trace: [] });
    // A scope note is a start point: no warning.
    writeFileSync(file, JSON.stringify({ traversal_policy: { max_link_depth: 2, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: ['max_refs:3'] }, allowed_scope: ['FixtureLore:World/Pre-Elysium/Territories.md'] }));
    const scoped = await cli(['traverse', '--lore', 'FixtureLore', '--policy', file, '--json']);
    expect([scoped.code, scoped.err]).toEqual([0, '']);
    expect(JSON.parse(scoped.out).consulted_refs[0]).toBe('FixtureLore:World/Pre-Elysium/Territories.md');
  });

  it('exits 2 with neither --policy nor --packet', async () => {
    const r = await cli(['traverse', '--lore', 'FixtureLore']);
    expect(r).toEqual({ code: 2, out: '', err: 'loretrace: traverse needs --policy <file>, --packet <file>, or both (a packet without a traversal_policy takes the --policy one); see \'loretrace traverse --help\' [usage]\n' });
  });

  it('exits 2 naming the file for a policy that is not JSON (bad_json, as for every command)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loretrace-d-'));
    const bad = join(dir, 'bad.policy.json');
    writeFileSync(bad, '{ "max_link_depth": 2, ');
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', bad]);
    expect(r).toEqual({ code: 2, out: '', err: `loretrace: ${bad} is not JSON: unexpected end of input at line 1, column 24 [bad_json]\n` });
  });

  it('names, and refuses under --strict-policy, what plain-English stop conditions leave unenforced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loretrace-d-'));
    const file = join(dir, 'partial-stops.policy.json');
    writeFileSync(file, JSON.stringify({
      max_link_depth: 2,
      allowed_prefixes: ['FixtureLore:World/'],
      required_seed_refs: ['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
      follow_link_classes: ['wikilink'],
      stop_conditions: ['stop after 12 notes unless the scene needs more', "stop when a link is not relevant to Nara's labor grievances", 'never follow future lore about Jovian colonies only'],
    }));
    const receipt = await cli(['traverse', '--lore', 'FixtureLore', '--policy', file, '--receipt-only', '--json']);
    expect(receipt.code).toBe(0);
    const doc = JSON.parse(receipt.out) as { totals: unknown; rows: { kind: string; disposition: string; rule: string }[] };
    // depth, prefix, seed, wikilink, the author-only Brinefall Truth note and the future-era prefix are enforced.
    expect(doc.totals).toEqual({ enforced: 6, partially_enforced: 3, advisory: 0 });
    expect(doc.rows.filter((r) => r.kind === 'stop_condition').map((r) => [r.disposition, r.rule.slice(r.rule.indexOf('not enforced: '))])).toEqual([
      ['partially_enforced', 'not enforced: "unless the scene needs more" (the rule applies in every case; loretrace does not evaluate the exception)'],
      ['partially_enforced', "not enforced: nara, labor, grievances (relevance is measured against the walk's queries, not against these words)"],
      ['partially_enforced', 'not enforced: jovian, colonies, only (the rule applies whatever these words say)'],
    ]);
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', file, '--strict-policy']);
    expect(r).toEqual({
      code: 1,
      out: '',
      err: 'loretrace: --strict-policy refuses this policy: 3 clauses are not fully enforced: ' +
        '/stop_conditions/0 "stop after 12 notes unless the scene needs more" (partially_enforced); ' +
        '/stop_conditions/1 "stop when a link is not relevant to Nara\'s labor grievances" (partially_enforced); ' +
        '/stop_conditions/2 "never follow future lore about Jovian colonies only" (partially_enforced) ' +
        `(${file}, pointer /stop_conditions/0) [strict_policy]\n`,
    });
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 1 under --strict-policy when a clause is advisory or partially enforced', async () => {
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', 'policies/world-blackout.policy.json', '--strict-policy']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'loretrace: --strict-policy refuses this policy: 5 clauses are not fully enforced: ' +
        '/follow_link_classes/0 "resident harbor factions and institutions" (partially_enforced); ' +
        '/follow_link_classes/1 "social movements shaping a visible faction\'s values" (partially_enforced); ' +
        '/follow_link_classes/2 "territory, politics, and technology docs that explain material constraints" (partially_enforced); ' +
        '/follow_link_classes/3 "event docs that explain local precedent" (partially_enforced); ' +
        '/stop_conditions/3 "summarize only the constraints that affected the response" (advisory) ' +
        '(policies/world-blackout.policy.json, pointer /follow_link_classes/0) [strict_policy]\n',
    );
  });
});

describe.skipIf(!hasShared)(`traverse on the real Sella packet (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  let real: VaultIndex;
  let r: TraverseResult;
  const A = 'AetheriaLore:Aetheria/Worldbuilding/';
  beforeAll(async () => {
    real = await indexVault(AETHERIA, { indexDir: mkdtempSync(join(tmpdir(), 'loretrace-d-traverse-aetheria-')) });
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    r = traverse(real, compilePolicy(packet.lore_access.traversal_policy, { index: real, packet }), { queries: packetQueries(packet) });
  }, 120_000);

  it('consults the seeds and scope notes, and follows only refs inside the three prefixes', () => {
    expect(r.consulted_refs.map((x) => x.replace(A, ''))).toEqual(SELLA_CONSULTED);
    expect(r.followed_refs.map((x) => x.replace(A, ''))).toEqual(SELLA_FOLLOWED);
    const prefixes = ['Aetheria/Worldbuilding/Pre-Elysium/', 'Aetheria/Worldbuilding/Politics/', 'Aetheria/Worldbuilding/Technology/'];
    for (const t of r.research_trace) expect(prefixes.some((p) => t.source_path.startsWith(p))).toBe(true);
  });

  it('never consults Post-Elysium lore, which the compiled policy refuses as future_era', () => {
    const all = [...r.consulted_refs, ...r.followed_refs, ...r.research_trace.map((t) => t.source_ref)];
    expect(all.filter((x) => x.includes('/Post-Elysium/'))).toEqual([]);
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    const c = compilePolicy(packet.lore_access.traversal_policy, { index: real, packet });
    const post = real.notes.filter((n) => n.path.startsWith('Aetheria/Worldbuilding/Post-Elysium/'));
    expect(post.length).toBe(17);
    for (const n of post) expect(checkPath(c, n.path)).toMatchObject({ ok: false, reason: 'future_era' });
    expect(r.stats.skipped_by_reason).toEqual({
      prefix_denied: 0, class_not_allowed: 50, depth_exceeded: 183, budget_exhausted: 0, below_relevance: 306, below_relative_relevance: 84,
      hidden_ref: 0, future_era: 1, unresolved: 6, already_visited: 248, not_expanded: 0, not_found: 0,
    });
  });

  it('validates against schemas/traverse-result.schema.json', () => {
    const validate = outputSchema('traverse_result');
    expect(validate(JSON.parse(JSON.stringify(r)))).toBe(true);
    expect(r.stats).toMatchObject({ notes_consulted: 27, excerpts: 27, excerpt_chars: 16580, stopped_by: 'min_relative_relevance', best_followed_score: 0.717781, receipt_totals: { enforced: 32, partially_enforced: 5, advisory: 1 } });
  });

  it('keeps every excerpt verbatim', () => {
    for (const t of r.research_trace) {
      const lines = splitLines(readFileSync(join(AETHERIA, t.source_path), 'utf8'));
      expect(t.extracted_constraint).toBe(sliceLines(lines, t.line_start, t.line_end));
    }
    expect(r.research_trace[0]).toMatchObject({
      source_ref: `${A}Pre-Elysium/Timeline/Events/Cold Wake Panic.md#chunk0`, line_start: 7, line_end: 9,
    });
  });
});

const SELLA_CONSULTED = [
  'Pre-Elysium/Timeline/Events/Cold Wake Panic.md',
  'Pre-Elysium/Territories.md',
  'Pre-Elysium/Factions/index.md',
  'Pre-Elysium/Factions/Powers/Major/Pan-Solar Consortium.md',
  'Pre-Elysium/Factions/Powers/Major/Aya Collective.md',
  'Pre-Elysium/Factions/Powers/Major/Cetacean Navigators.md',
  'Pre-Elysium/Timeline/Events/Ganymede Route Compact.md',
  'Pre-Elysium/Technology/Neuromorphic Firmware.md',
  'Pre-Elysium/Megas.md',
  'Politics/Thermal Signature Warfare.md',
  'Pre-Elysium/Factions/Powers/Minor/Lightsail Express.md',
  'Pre-Elysium/Factions/Powers/index.md',
  'Politics/Restrictions on Warfare.md',
  'Pre-Elysium/index.md',
  'Pre-Elysium/Factions/Movements/index.md',
];
const SELLA_FOLLOWED = [
  'Pre-Elysium/Factions/Powers/Minor/Cognitum.md',
  'Pre-Elysium/Factions/Movements/Free Neural Network.md',
  'Pre-Elysium/Factions/Powers/Major/Cryonix.md',
  'Pre-Elysium/Timeline/Events/Food Security Wars.md',
  'Pre-Elysium/Factions/Powers/Minor/Rossum & Douglas.md',
  'Pre-Elysium/Factions/Powers/Major/Sol Dominion.md',
  'Pre-Elysium/Timeline/Events/Triton Sanctuary Accords.md',
  'Pre-Elysium/Factions/Powers/Major/Zhestokost.md',
  'Pre-Elysium/Factions/Powers/Minor/Ewan Hart.md',
  'Pre-Elysium/Factions/Powers/Major/Finch Cybernetics.md',
  'Pre-Elysium/Timeline/Events/Hellas Mutual Defense Congress.md',
  'Pre-Elysium/Factions/Powers/Minor/Elephant Enclave.md',
];

describe('pickExcerptLines', () => {
  const lines = ['## Limits', '', 'The cells must be dumped within a day.', 'Crews call the stored heat a debt.', '', 'Unrelated closing line.'];

  it('picks the run covering the most query terms, with file line numbers', () => {
    expect(pickExcerptLines(lines, ['heat debt dumped'], 200, { lineOffset: 5 })).toEqual({
      line_start: 7, line_end: 8, text: 'The cells must be dumped within a day.\nCrews call the stored heat a debt.', chars: 73, terms_matched: 3, hits: 3,
    });
  });

  it('never cuts a line: a bound too small for the best run gives the best single line that fits', () => {
    expect(pickExcerptLines(lines, ['heat debt dumped'], 40)).toMatchObject({ line_start: 4, line_end: 4, terms_matched: 2 });
    expect(pickExcerptLines(lines, ['heat debt dumped'], 10)).toBeNull();
  });

  it('falls back to the first content lines when no line matches, skipping headings and blanks', () => {
    expect(pickExcerptLines(lines, ['zeppelin'], 200)).toMatchObject({ line_start: 3, line_end: 4, terms_matched: 0 });
  });

  it('folds diacritics and case like search', () => {
    expect(pickExcerptLines(['Plain line.', 'The Framgång charter.'], ['framgang'], 100)).toMatchObject({ line_start: 2, line_end: 2 });
  });
});

describe('makeTraceEntry', () => {
  it('refuses an inverted line range', () => {
    expect(() => makeTraceEntry({ trace_id: 't', query: 'q', namespace: 'N', path: 'a.md', chunk_index: 0, line_start: 5, line_end: 4, text: 'x', used_for: 'u' })).toThrow(
      'research_trace entry t: lines 5-4 are not a 1-based inclusive range',
    );
  });
});

describe('traverse result schema', () => {
  it('validates the fixture walk and the empty-trace walk against schemas/traverse-result.schema.json', () => {
    const validate = outputSchema('traverse_result');
    const p = JSON.parse(readFileSync(WORLD_POLICY, 'utf8')) as TraversalPolicy;
    for (const r of [run(p, ['sanctuary capacity']), run(policy({ max_link_depth: 0, stop_conditions: ['max_chars:1'] }), [])]) {
      expect(validate(JSON.parse(JSON.stringify(r)))).toBe(true);
      expect(validate.errors ?? null).toBeNull();
    }
  });
});

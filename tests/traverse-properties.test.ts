import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { chunksOf } from '../src/indexer/lookup.js';
import { splitLines, sliceLines } from '../src/notes/lines.js';
import { checkPath, compilePolicy } from '../src/policy/index.js';
import { isUnderPrefix } from '../src/refs/index.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import { traverse } from '../src/traversal/index.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

const PREFIXES = [
  'World/', 'World/Pre-Elysium/', 'World/Politics/', 'World/Technology/', 'World/Pre-Elysium/Factions/',
  'World/Post-Elysium/', 'World/Pre-Elysium-Extra/', 'World/Politics/Salvage Law.md', 'World/Pre-Elysium',
];
const CLASSES = [
  'wikilink', 'markdown_link', 'embed', 'heading_link', 'block_link', 'backlink', 'field', 'prose', 'list_item', 'table',
  'heading', 'factions', 'events', 'politics', 'technology', 'referenced social movements', 'territory and law docs', 'vibes',
];
const STOPS = [
  fc.integer({ min: 1, max: 8 }).map((n) => `max_refs:${n}`),
  fc.integer({ min: 1, max: 6 }).map((n) => `max_chunks:${n}`),
  fc.integer({ min: 1, max: 900 }).map((n) => `max_chars:${n}`),
  fc.integer({ min: 0, max: 10 }).map((n) => `min_relevance:${n === 10 ? '1' : `0.${n}`}`),
  fc.constantFrom(
    'deny_prefix:World/Pre-Elysium/Factions/Movements/', 'deny_class:events', 'no_expand_class:index', 'no_expand_class:powers',
    'stop before post-Elysium lore', 'stop before author-only notes', 'stop when a link is not relevant', 'summarize only what matters',
  ),
];
const QUERIES = ['sanctuary capacity', 'rescue obligations', 'storm insurance', 'salvage wreck', 'heat debt', 'harbor charter'];

let index: VaultIndex;
let world: string[];
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
  world = index.notes.filter((n) => n.path.startsWith('World/')).map((n) => n.path);
});

const arbPolicy = fc.record({
  depth: fc.integer({ min: 0, max: 3 }),
  prefixes: fc.subarray(PREFIXES, { minLength: 1 }),
  seedPicks: fc.array(fc.nat(), { maxLength: 3 }),
  follow: fc.subarray(CLASSES),
  stops: fc.array(fc.oneof(...STOPS), { maxLength: 4 }),
  queries: fc.subarray(QUERIES),
  hidden: fc.boolean(),
  excerptMax: fc.integer({ min: 40, max: 900 }),
});

describe('traverse (properties over random policies on lore-fixtures)', () => {
  it('stays inside the policy, its depth and its budgets, and every trace entry is verbatim', () => {
    const walked = { followed: 0, excerpts: 0 };
    const fileLines = new Map<string, string[]>();
    const linesOf = (p: string) => {
      let l = fileLines.get(p);
      if (!l) { l = splitLines(readFileSync(join(FIXTURE_VAULT, p), 'utf8')); fileLines.set(p, l); }
      return l;
    };
    fc.assert(
      fc.property(arbPolicy, (a) => {
        const packet = a.hidden ? { hidden_context_audit: { omitted_context_refs: ['FixtureLore:World/Politics/Harbor Neutrality.md'] } } : undefined;
        const draft: TraversalPolicy = { max_link_depth: a.depth, allowed_prefixes: a.prefixes, required_seed_refs: [], follow_link_classes: a.follow, stop_conditions: a.stops };
        let probe;
        try {
          probe = compilePolicy(draft, { index, packet });
        } catch {
          return; // e.g. max_refs smaller than the seeds: refused at compile time, nothing to walk
        }
        const admitted = world.filter((p) => checkPath(probe, p).ok);
        const seeds = [...new Set(a.seedPicks.filter(() => admitted.length > 0).map((k) => admitted[k % admitted.length]!))];
        let compiled;
        try {
          compiled = compilePolicy({ ...draft, required_seed_refs: seeds }, { index, packet });
        } catch (e) {
          expect((e as { code: string }).code).toBe('bad_policy');
          expect((e as Error).message).toMatch(/max_refs \d+ is smaller than the \d+ required seeds/);
          return;
        }
        const r = traverse(index, compiled, { queries: a.queries, excerptMaxChars: a.excerptMax });
        walked.followed += r.followed_refs.length;
        walked.excerpts += r.source_excerpts.length;
        const consulted = [...r.consulted_refs, ...r.followed_refs].map((x) => x.replace('FixtureLore:', ''));
        // never outside allowed_prefixes, never inside a denied ref
        for (const p of consulted) {
          expect(checkPath(compiled, p)).toEqual({ ok: true });
          expect(compiled.allowed_prefixes.some((pre) => isUnderPrefix(p, pre))).toBe(true);
          if (a.hidden) expect(p).not.toBe('World/Politics/Harbor Neutrality.md');
        }
        expect(new Set(consulted).size).toBe(consulted.length);
        // depth never exceeds max_link_depth
        expect(r.stats.max_depth_reached).toBeLessThanOrEqual(a.depth);
        for (const d of r.decisions) if (d.outcome === 'followed') expect(d.depth).toBeLessThanOrEqual(a.depth);
        // budgets never exceeded
        const b = compiled.budgets;
        if (b.max_refs !== null) expect(r.stats.notes_consulted).toBeLessThanOrEqual(b.max_refs);
        if (b.max_chunks !== null) expect(r.source_excerpts.length).toBeLessThanOrEqual(b.max_chunks);
        const chars = r.source_excerpts.reduce((n, e) => n + e.text.length, 0);
        expect(chars).toBe(r.stats.excerpt_chars);
        if (b.max_chars !== null) expect(chars).toBeLessThanOrEqual(b.max_chars);
        // trace entries: lines inside the file and the chunk, text equal to those lines
        expect(r.research_trace.length).toBe(r.source_excerpts.length);
        r.research_trace.forEach((t, i) => {
          expect(t.extracted_constraint.length).toBeLessThanOrEqual(a.excerptMax);
          const lines = linesOf(t.source_path);
          expect(t.line_start).toBeGreaterThanOrEqual(1);
          expect(t.line_end).toBeLessThanOrEqual(lines.length);
          expect(t.extracted_constraint).toBe(sliceLines(lines, t.line_start, t.line_end));
          const chunk = chunksOf(index, t.source_path).find((c) => c.chunk_index === t.chunk_index)!;
          expect(chunk.line_start <= t.line_start && t.line_end <= chunk.line_end).toBe(true);
          expect(r.source_excerpts[i]!.text).toBe(t.extracted_constraint);
          expect(consulted).toContain(t.source_path);
        });
        // every decision is settled
        for (const d of r.decisions) expect(d.outcome === 'followed' ? d.reason === null : d.reason !== null).toBe(true);
      }),
      { numRuns: 300, seed: 20240603 },
    );
    // The generator is not vacuous: with this seed many walks follow links and cut excerpts.
    expect(walked.followed).toBeGreaterThan(50);
    expect(walked.excerpts).toBeGreaterThan(200);
  });
});

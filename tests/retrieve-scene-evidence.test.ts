/**
 * The scene's evidence decides which part of a consulted note is cited (docs/RETRIEVE.md, "Requirement" and
 * "Another chunk of the note"): the draft's own lore excerpts are scene requirements, and a note whose
 * traversal chunk serves none is cited from the section that serves one. Fixture: lore-fixtures/SceneLore
 * with lore-fixtures/packets/shelf-rescue.turn-01.mara-voss.draft.packet.json, whose one lore excerpt
 * paraphrases the Rescue Compact; the seed Shelf Regions matches the observed event only in its "Inner
 * Docks" section ("manifest", "officer"), while its "Outer Shelf" section is about the Rescue Compact; the
 * hub note Regions/index.md lists the region notes under one line of framing; the seed Meridian League
 * matches the observed event only by "convoy" and "dark" in its "Why It Exists" section.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket } from '../src/packet/build.js';
import type { BuildPacketResult } from '../src/packet/build.js';
import { sceneRequirements, selectWithinBudget } from '../src/packet/requirements.js';
import { hubLineCounts, isHubNote } from '../src/excerpts/lines.js';
import type { ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import { recordRetrieval } from '../src/receipts/retrieve-ledger.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES } from './helpers/shared.js';

const VAULT = join(FIXTURES, 'SceneLore');
const DRAFT_FILE = join(FIXTURES, 'packets', 'shelf-rescue.turn-01.mara-voss.draft.packet.json');
const REGIONS = 'SceneLore:Regions/Shelf Regions.md';
const COMPACT = 'SceneLore:Events/Rescue Compact.md';
const PARAPHRASE = 'The Rescue Compact binds every pilot to answer a distress call, records each answer in the shelf ledger, and ties berth credit to that record.';

const policy: TraversalPolicy = {
  max_link_depth: 1,
  allowed_prefixes: ['SceneLore:Regions/', 'SceneLore:Events/'],
  required_seed_refs: [REGIONS],
  follow_link_classes: ['wikilink'],
  stop_conditions: ['max_refs:4'],
};

let tmp: string;
let index: VaultIndex;
let draft: ResponderPacket;
let r: BuildPacketResult;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-scene-evidence-'));
  index = await indexVault(VAULT, { indexDir: join(tmp, 'index') });
  draft = JSON.parse(readFileSync(DRAFT_FILE, 'utf8')) as ResponderPacket;
  r = await buildPacket(index, draft, { policy, file: 'draft.json' });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the draft\'s lore excerpts as scene requirements', () => {
  it('follow the observed event, uncounted and not walked', () => {
    const reqs = sceneRequirements(draft, undefined, [{ index: 1, ref_id: 'lore.rescue_compact', text: PARAPHRASE }]);
    expect(reqs.map((q) => [q.label, q.counted, q.query, q.draft_excerpt])).toEqual([
      ['visible_context.observed_event.observable_action', false, true, undefined],
      [`visible_context.source_excerpts[1] lore.rescue_compact (${PARAPHRASE})`, false, false, 1],
    ]);
  });
});

describe('a seed whose traversal chunk serves no requirement', () => {
  it('is cited from its section that serves the draft\'s lore excerpt, not from a two-word match of the observed event', () => {
    expect(r.capture!.research_trace.map((t) => [t.source_ref, t.line_start, t.line_end])).toEqual([
      [`${COMPACT}#chunk0`, 3, 3],
      [`${REGIONS}#chunk2`, 11, 11],
    ]);
    const seed = r.capture!.research_trace[1]!;
    expect(seed.extracted_constraint).toBe('The outer shelf lives by the [[Rescue Compact]]. Pilots there answer every distress call, keep the shelf ledger of who answered, and earn berth credit by that record.');
    expect(seed.used_for).toBe(
      `serves visible_context.source_excerpts[1] lore.rescue_compact (${PARAPHRASE}) (found by the query of visible_context.observed_event.observable_action); reached: required_seed_refs[0] ${REGIONS}`,
    );
    expect(r.findings.filter((f) => f.code === 'excerpt_chunk_moved').map((f) => f.message)).toEqual([
      `${REGIONS}#chunk1 (lore.shelf_regions.chunk1): the traversal's chunk gave no usable compact excerpt (its section serves no scene requirement; the note's section "Outer Shelf" (chunk 2) serves visible_context.source_excerpts[1] lore.rescue_compact (11 of its 16 terms)), so the excerpt is ${REGIONS}#chunk2 L11-L11 of the same note`,
    ]);
  });

  it('keeps every entry verifiable line by line and backed by the run\'s ledger', async () => {
    const recorded = recordRetrieval(index, { capture: r.capture!, queries: r.queries }, { packetId: 'draft', packetSha256: null, now: () => new Date(Date.UTC(2025, 0, 1)) });
    const report = await verifyTrace(index, recorded.capture, { ledgers: [{ file: 'run.ledger.jsonl', text: recorded.ledgerText }] });
    expect(report.totals).toMatchObject({ verified: 2, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, unbacked: 0, ledger_broken: 0 });
  });
});

const LEAGUE = 'SceneLore:Factions/Meridian League.md';

describe('a seed whose pick serves no requirement and no section of which does', () => {
  it('is cited by its lead, the sentence that names it, not by a sentence that shares two words with the observed event', async () => {
    const withLeague = await buildPacket(index, draft, {
      policy: { ...policy, allowed_prefixes: [...policy.allowed_prefixes, 'SceneLore:Factions/'], required_seed_refs: [REGIONS, LEAGUE] },
      file: 'draft.json',
    });
    const entry = withLeague.capture!.research_trace.find((t) => t.source_ref.startsWith(LEAGUE))!;
    expect([entry.source_ref, entry.line_start, entry.line_end, entry.extracted_constraint]).toEqual([
      `${LEAGUE}#chunk0`, 3, 3, 'The Meridian League is a federation of harbor masters who certify hulls along the shelf.',
    ]);
    expect(entry.used_for).toBe(
      `found by the query of visible_context.observed_event.observable_action, but shares only 2 of its 20 terms (4 needed to serve it); context for the scene's seed ${LEAGUE}: its lead; reached: required_seed_refs[1] ${LEAGUE}`,
    );
    expect(withLeague.findings.filter((f) => f.code === 'excerpt_chunk_moved' && f.path?.startsWith(LEAGUE)).map((f) => f.message)).toEqual([
      `${LEAGUE}#chunk1 (lore.meridian_league.chunk1): the traversal's chunk gave no usable compact excerpt (its pick serves no scene requirement; the seed is cited by its lead), so the excerpt is ${LEAGUE}#chunk0 L3-L3 of the same note`,
    ]);
  });
});

describe('an allowed_scope note whose pick serves no requirement and that links no seed', () => {
  it('is cited by its lead too, named as the scope note it is context for', async () => {
    const scoped = await buildPacket(index, draft, {
      // max_chunks:3 so that the budget (1 cited ref + 1 seed by default) does not cut the scope note's excerpt.
      policy: { ...policy, allowed_prefixes: [...policy.allowed_prefixes, 'SceneLore:Factions/'], stop_conditions: ['max_refs:4', 'max_chunks:3'] },
      allowedScope: [REGIONS, LEAGUE],
      file: 'draft.json',
    });
    const entry = scoped.capture!.research_trace.find((t) => t.source_ref.startsWith(LEAGUE))!;
    expect([entry.source_ref, entry.line_start, entry.line_end]).toEqual([`${LEAGUE}#chunk0`, 3, 3]);
    expect(entry.used_for).toBe(
      `found by the query of visible_context.observed_event.observable_action, but shares only 2 of its 20 terms (4 needed to serve it); context for the scene's allowed_scope note ${LEAGUE}: its lead; reached: allowed_scope ${LEAGUE}`,
    );
    expect(scoped.findings.filter((f) => f.code === 'excerpt_chunk_moved' && f.path?.startsWith(LEAGUE)).map((f) => f.message)).toEqual([
      `${LEAGUE}#chunk1 (lore.meridian_league.chunk1): the traversal's chunk gave no usable compact excerpt (its pick serves no scene requirement; the allowed_scope note is cited by its lead), so the excerpt is ${LEAGUE}#chunk0 L3-L3 of the same note`,
    ]);
  });
});

describe('a hub note (a map of content)', () => {
  const HUB = 'SceneLore:Regions/index.md';
  const lines = (rel: string): string[] => readFileSync(join(FIXTURES, rel), 'utf8').split('\n');

  it('is told by its lines: at least twice as many that list links as lines of lore, and at least two', () => {
    expect(hubLineCounts(lines('SceneLore/Regions/index.md'))).toEqual({ link_lines: 4, lore_lines: 1 });
    expect(isHubNote(lines('SceneLore/Regions/index.md'))).toBe(true);
    expect(isHubNote(lines('MarkerLore/Harbor/Harbor Board.md'))).toBe(true);
    // An event note's field line of links beside its paragraph is no map of content.
    expect(hubLineCounts(lines('SeedContextLore/Events/Harbor Strike.md'))).toEqual({ link_lines: 1, lore_lines: 1 });
    expect(isHubNote(lines('SeedContextLore/Events/Harbor Strike.md'))).toBe(false);
    expect(isHubNote(lines('SceneLore/Regions/Shelf Regions.md'))).toBe(false);
  });

  it('is consulted as a seed for its links but gives no excerpt when its framing serves no requirement', async () => {
    const withHub = await buildPacket(index, draft, { policy: { ...policy, required_seed_refs: [REGIONS, HUB] }, file: 'draft.json' });
    expect(withHub.capture!.consulted_refs).toEqual([REGIONS, HUB, COMPACT]);
    expect(withHub.capture!.research_trace.map((t) => t.source_ref)).toEqual([`${COMPACT}#chunk0`, `${REGIONS}#chunk2`]);
    expect(withHub.packet.visible_context.source_excerpts.map((e) => e.ref_id)).toEqual(['local.capacity_board', 'lore.rescue_compact.chunk0', 'lore.shelf_regions.chunk2']);
    expect(withHub.findings.filter((f) => f.code === 'excerpt_hub_note').map((f) => [f.severity, f.message])).toEqual([
      ['info', `${HUB}#chunk0 (lore.index.chunk0) was consulted for its links and gives no excerpt: it is a hub note (4 lines that list links, 1 lore line), and its best pick serves no scene requirement ("The regions of the shelf are the harbors, docks and reefs th"…)`],
    ]);
  });
});

describe('selectWithinBudget: a requirement a verified excerpt serves', () => {
  it('gets no second excerpt in the requirement round, so the seed round keeps its slot', () => {
    const c = (requirement: number | null, terms: number, seed = false, path = 'n.md', verified = false) => ({ chars: 100, requirement, terms, seed, path, verified });
    const candidates = [c(0, 12, false, 'compact.md', true), c(0, 5), c(null, 0, true, 'seed.md')];
    expect(selectWithinBudget(candidates, 1, { count: 2, chars: 1000, count_source: '', chars_source: '' })).toEqual([0, 2]);
  });
});

/**
 * A note reached as context for a seed is cited where it speaks of that seed (docs/RETRIEVE.md, "Context for a
 * seed, cited where it names the seed"): on lore-fixtures/SeedContextLore the walk from Harbor Strike follows
 * its two primary actors; Tide Guild's traversal chunk ("Guild pilots swear to guide any hull …") shares one
 * word with the requirement and serves none, so its excerpt moves to the paragraph that links the seed; Lamp
 * Wardens has no such paragraph and keeps its pick.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket } from '../src/packet/build.js';
import type { BuildPacketResult } from '../src/packet/build.js';
import type { ProjectedLocalContext, ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import { recordRetrieval } from '../src/receipts/retrieve-ledger.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const VAULT = join(FIXTURES, 'SeedContextLore');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;
const STRIKE = 'SeedContextLore:Events/Harbor Strike.md';
const GUILD = 'SeedContextLore:Factions/Tide Guild.md';
const WARDENS = 'SeedContextLore:Factions/Lamp Wardens.md';

const policy: TraversalPolicy = {
  max_link_depth: 1,
  allowed_prefixes: ['SeedContextLore:Events/', 'SeedContextLore:Factions/'],
  required_seed_refs: [STRIKE],
  follow_link_classes: ['wikilink'],
  stop_conditions: ['max_refs:3'],
};

let tmp: string;
let index: VaultIndex;
let r: BuildPacketResult;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-seed-context-'));
  index = await indexVault(VAULT, { indexDir: join(tmp, 'index') });
  // The fixture draft of the brinefall scene, its hidden folder moved to this vault's namespace.
  const draft = JSON.parse(
    readFileSync(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'), 'utf8').replaceAll('FixtureLore:World/Pre-Elysium/Author Notes/', 'SeedContextLore:Author Notes/'),
  ) as ResponderPacket;
  const ctx = readJson<ProjectedLocalContext>(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'));
  ctx.context.runtime_retrieval_requirements = [
    { requirement_id: 'turn-01.lore.strike', trigger: 'scene grounding', compact_fact: 'Saltmere dockers refuse any hull that skipped the tide tithe.', source_refs: ['harbor-digest'], prompt_role: 'source_excerpt' },
  ] as ProjectedLocalContext['context']['runtime_retrieval_requirements'];
  r = await buildPacket(index, draft, { policy, projectedContext: ctx, file: 'draft.json' });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('an excerpt that is context for a seed', () => {
  it('is taken from the paragraph of the note that links the seed, not from a one-word match', () => {
    const trace = r.capture!.research_trace;
    expect(trace.map((t) => [t.source_ref, t.line_start, t.line_end])).toEqual([
      [`${STRIKE}#chunk0`, 5, 5],
      [`${GUILD}#chunk2`, 11, 11],
      [`${WARDENS}#chunk0`, 3, 3],
    ]);
    expect(trace[1]!.extracted_constraint).toBe("The [[Harbor Strike]] broke the guild's hold on the night shifts, and its pilots have bargained with the dockers ever since.");
    expect(trace[1]!.used_for).toBe(
      `context for the scene's seed ${STRIKE}: the note's passage that links it (line 11); reached: link [[Tide Guild]] (wikilink/field) from ${STRIKE} line 3, depth 1`,
    );
    // The prompt shows the wikilink as its display text; the trace keeps the exact line.
    expect(r.packet.visible_context.source_excerpts.find((e) => e.source_ref === `${GUILD}#chunk2`)?.text).toBe(
      "The Harbor Strike broke the guild's hold on the night shifts, and its pilots have bargained with the dockers ever since.",
    );
  });

  it('reports the move from the traversal chunk, and leaves a note with no passage linking a seed as it was', () => {
    const moved = r.findings.filter((f) => f.code === 'excerpt_chunk_moved');
    expect(moved.map((f) => f.message)).toEqual([
      `${GUILD}#chunk1 (lore.tide_guild.chunk1): the traversal's chunk gave no usable compact excerpt (its pick serves no scene requirement; the note's passage that links the seed ${STRIKE} does), so the excerpt is ${GUILD}#chunk2 L11-L11 of the same note`,
    ]);
    expect(r.capture!.research_trace[2]!.used_for).toMatch(/^found by the query of visible_context\.observed_event\.observable_action, but shares only 1 of its 20 terms \(4 needed to serve it\); context for the scene's seed SeedContextLore:Events\/Harbor Strike\.md; reached: link \[\[Lamp Wardens\]\]/);
  });

  it('keeps every entry verifiable line by line and backed by the run\'s ledger', async () => {
    const recorded = recordRetrieval(index, { capture: r.capture!, queries: r.queries }, { packetId: 'draft', packetSha256: null, now: () => new Date(Date.UTC(2025, 0, 1)) });
    const report = await verifyTrace(index, recorded.capture, { ledgers: [{ file: 'run.ledger.jsonl', text: recorded.ledgerText }] });
    expect(report.totals).toMatchObject({ verified: 3, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, unbacked: 0, ledger_broken: 0 });
    // The run's ledger is unsigned and no trusted key is given: every check passed, integrity only.
    expect([report.integrity_ok, report.verdict]).toEqual([true, 'integrity_only']);
  });
});

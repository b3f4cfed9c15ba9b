/**
 * buildPacket (src/packet/build.ts), the prompt renderers, and `loretrace retrieve` on the FixtureLore
 * draft in lore-fixtures/packets/: both lanes, exact excerpts and refs, validity, determinism, refusals.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { main } from '../src/cli/main.js';
import {
  applyResearchSection,
  applySourceSection,
  buildPacket,
  parseSourceSection,
  PROXY_TOOLS,
  queriesFor,
  renderResearchSection,
  renderSourceSection,
} from '../src/packet/build.js';
import type { BuildPacketResult } from '../src/packet/build.js';
import { TOOL_NAMES } from '../src/proxy/tools.js';
import { isUnderPrefix, parseRef } from '../src/refs/ref.js';
import type { ProjectedLocalContext, ResponderPacket, SourceExcerpt, TraversalPolicy } from '../src/contracts/types.js';
import { validatePacket } from '../src/contracts/validate.js';
import { recordRetrieval } from '../src/receipts/retrieve-ledger.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT, REPO } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const DRAFT_FILE = join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
const CONTEXT_FILE = join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json');
const POLICY_FILE = join(PACKETS, 'brinefall-intake.policy.json');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;

let tmp: string;
let index: VaultIndex;
let draft: ResponderPacket;
let context: ProjectedLocalContext;
let policy: TraversalPolicy;
let coordinator: BuildPacketResult;

const PREFIXES = ['World/Pre-Elysium/', 'World/Politics/'];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-retrieve-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
  draft = readJson(DRAFT_FILE);
  context = readJson(CONTEXT_FILE);
  policy = readJson(POLICY_FILE);
  coordinator = await buildPacket(index, draft, { projectedContext: context, policy, file: 'draft.json' });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('buildPacket', () => {
  it('adds traced lore excerpts after the draft\'s non-lore excerpts (coordinator_scoped_retrieval)', () => {
    const p = coordinator.packet;
    expect(coordinator.lane).toBe('coordinator_scoped_retrieval');
    expect(p.visible_context.source_excerpts.map((e) => [e.ref_id, e.source_ref])).toEqual([
      ['local.capacity_board', 'lore-fixtures/packets/brinefall-intake.turn-01.scene-digest.json#capacity'],
      ['lore.brinefall_blackout.chunk1', 'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1'],
      ['lore.meridian_compact.chunk0', 'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk0'],
      ['lore.quiet_hands.chunk1', 'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md#chunk1'],
    ]);
    // The walk matched Meridian Compact's "Rumors and Gaps" chunk, whose only lore-free line left (25) is a
    // "See also" navigation line with a URL and a tag: never an excerpt. The note is cited by its lead (line 7).
    expect(p.visible_context.source_excerpts[2]?.text).toBe('The Meridian Compact is a league of harbor masters who rent berths, certify hulls and hold the keys to the dry docks.');
    expect(JSON.stringify(p)).not.toContain('notice board');
    // Compact: the most relevant sentence of the chunk, verbatim (the ^oath block id is not a sentence of its own).
    expect(p.visible_context.source_excerpts[3]?.text).toBe('Care is counted in beds, air, food and repair hours, and no berth is promised that cannot be kept.');
    expect(coordinator.stats).toEqual({ excerpts_kept: 1, excerpts_added: 3, excerpts_verified: 0, excerpts_dropped: 0, excerpts_withheld: 0, excerpts_cut: 1, trace_entries: 3 });
    expect(coordinator.budget).toEqual({
      count: 4,
      chars: 600,
      count_source: 'default: 3 requirements + 1 seed',
      chars_source: "default: 25 % of the draft prompt's 1944 characters (at least 600)",
    });
    expect(coordinator.queries).toEqual([
      'scene grounding: The Brinefall Blackout silenced the relay buoys and the Meridian Compact promised sanctuary berths to crews caught in it.',
      'institutional pressure: Quiet Hands count care in beds, air, food and repair hours and refuse intake when beds run out.',
      draft.visible_context.observed_event.observable_action,
    ]);
  });

  it('sets the lane fields: generation_lane, lore_access with traversal_policy, no_repo_access true', () => {
    const p = coordinator.packet;
    expect(p.generation_lane).toBe('retrieval_augmented');
    expect(p.lore_access).toEqual({
      mode: 'coordinator_scoped_retrieval',
      allowed_scope: ['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
      required_provenance: true,
      traversal_policy: policy,
    });
    expect(Object.keys(p.lore_access)).toEqual(['mode', 'allowed_scope', 'required_provenance', 'traversal_policy']);
    expect(p.isolation_requirements.no_repo_access).toBe(true);
    expect(Object.keys(p)).toEqual(Object.keys(draft));
  });

  it('writes the capture fragment: consulted and followed refs, runner_captured trace, snapshot, receipt', async () => {
    const c = coordinator.capture!;
    expect(Object.keys(c)).toEqual(['mode', 'consulted_refs', 'followed_refs', 'research_trace', 'research_trace_status', 'snapshot_id', 'policy_receipt']);
    expect(c.consulted_refs).toEqual(['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md']);
    expect(c.followed_refs).toEqual([
      'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md',
      'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
    ]);
    expect(c.research_trace.map((t) => [t.trace_id, t.origin, t.source_path, t.chunk_index, t.line_start, t.line_end])).toEqual([
      ['trace.brinefall_blackout.chunk1', 'runner_captured', 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', 1, 11, 12],
      ['trace.meridian_compact.chunk0', 'runner_captured', 'World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md', 0, 7, 7],
      ['trace.quiet_hands.chunk1', 'runner_captured', 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md', 1, 7, 7],
    ]);
    expect(c.research_trace.map((t) => t.used_for.split('; reached: ')[0])).toEqual([
      'serves runtime_retrieval_requirements[0] turn-01.lore.blackout (scene grounding: The Brinefall Blackout silenced the relay buoys and the Meridian Compact promised sanctuary berths to crews caught in it.)',
      'serves visible_context.observed_event.observable_action',
      'serves runtime_retrieval_requirements[1] turn-01.lore.capacity (institutional pressure: Quiet Hands count care in beds, air, food and repair hours and refuse intake when beds run out.)',
    ]);
    expect(c.research_trace_status).toBe('runner_captured');
    expect(c.snapshot_id).toBe(index.snapshot_id);
    // Unbound, the builder's entries are unbacked; recorded in the run's ledger, every one is verified and backed.
    expect((await verifyTrace(index, c)).totals.unbacked).toBe(3);
    const recorded = recordRetrieval(index, { capture: c, queries: coordinator.queries }, { packetId: 'draft', packetSha256: null, now: () => new Date(Date.UTC(2025, 0, 1)) });
    const report = await verifyTrace(index, recorded.capture, { ledgers: [{ file: 'run.ledger.jsonl', text: recorded.ledgerText }] });
    expect(report.totals).toMatchObject({ verified: 3, unbacked: 0, ledger_broken: 0, ledger_not_closed: 0 });
    // Every check passed; the ledger is unsigned and no trusted key is given, so that is integrity only.
    expect([report.integrity_ok, report.verdict]).toEqual([true, 'integrity_only']);
    expect(recorded.capture.research_trace.map((t) => t.trace_id.replace(/^lt-[0-9a-f]{16}:(\d+):[0-9a-f]{12}$/, '$1'))).toEqual(
      // Each lookup is a TOOL_CALL then its TOOL_RESULT: the searches take seqs 1 … 2q, read i's result is 2q + 2i + 2.
      c.research_trace.map((_t, i) => String(2 * coordinator.queries.length + 2 * i + 2)),
    );
    expect(recorded.binding.bindings.map((b) => [b.seq, b.ledger_head === recorded.capture.ledger_head])).toEqual(c.research_trace.map((_t, i) => [2 * coordinator.queries.length + 2 * i + 2, true]));
  });

  it('withholds compact lines that link to hidden lore: the excerpt moves to another chunk of the note', async () => {
    // A requirement in the words of line 24 ("… is recorded in [[Brinefall Truth]]") makes that line the compact pick.
    const ctx = structuredClone(context);
    ctx.context.runtime_retrieval_requirements.push({ ...ctx.context.runtime_retrieval_requirements[0]!, requirement_id: 'turn-01.lore.night', trigger: 'night record', compact_fact: 'What really happened on the night of the blackout is recorded.' });
    const r = await buildPacket(index, draft, { projectedContext: ctx, policy, file: 'draft.json' });
    expect(r.findings.filter((f) => f.code === 'excerpt_withheld')).toEqual([]);
    const moved = r.findings.filter((f) => f.code === 'excerpt_chunk_moved');
    expect(moved.map((f) => f.path)).toEqual(['FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk3']);
    expect(moved[0]?.message).toContain('line 24 links [[Brinefall Truth]] to hidden lore');
    expect(moved[0]?.message).toContain('so the excerpt is FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk0 L7-L7 of the same note');
    for (const built of [r, coordinator]) {
      const shown = JSON.stringify([built.packet.visible_context, built.packet.packet_prompt_text, built.capture?.research_trace]);
      expect(shown).not.toContain('Author Notes');
      expect(shown).not.toContain('Brinefall Truth');
    }
  });

  it('lets no lore ref outside allowed_prefixes reach the packet', () => {
    for (const ex of coordinator.packet.visible_context.source_excerpts.filter((e) => e.source_ref.startsWith('FixtureLore:'))) {
      const { path } = parseRef(ex.source_ref, { namespace: 'FixtureLore' });
      expect(PREFIXES.some((p) => isUnderPrefix(path, p))).toBe(true);
    }
  });

  it('merges the lore excerpts into the source section and keeps every draft line (hand-written constraints too)', () => {
    const section = parseSourceSection(coordinator.packet.packet_prompt_text);
    expect(section?.style).toBe('plain');
    expect(section?.items.map((i) => i.text)).toEqual([
      'The sanctuary board shows nine of fourteen cots taken.',
      'Old hand-written constraint that no excerpt backs.',
      // Each lore bullet names its note, and the heading of its chunk (display form; the trace keeps the lines).
      ...['Brinefall Blackout › Aftermath', 'Meridian Compact', 'Quiet Hands › Oath'].map((label, i) => `${label}: ${coordinator.packet.visible_context.source_excerpts[i + 1]!.text}`),
    ]);
    expect(coordinator.findings.find((f) => f.code === 'prompt_lines_replaced')).toBeUndefined();
    const kept = new Set(coordinator.packet.packet_prompt_text.split('\n'));
    const rewritten = ['Packet id: brinefall-intake.turn-01.mara-voss.packet'];
    expect(draft.packet_prompt_text.split('\n').filter((l) => l.trim() !== '' && !kept.has(l))).toEqual(rewritten);
    expect(coordinator.findings.find((f) => f.code === 'prompt_lines_rewritten')?.message).toBe(
      'draft.json: 1 draft prompt line contradicted the packet as built and was rewritten: "Packet id: brinefall-intake.turn-01.mara-voss.packet" → "Packet id: brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1" (the packet has a new packet_id)',
    );
    expect(validatePacket(coordinator.packet).valid).toBe(true);
  });

  it('removes only the bullet of a draft lore excerpt a verified excerpt in the packet replaced, and lists it in full however long', async () => {
    const long = "Salvage law decides who owns a wreck: the first hull to fix a line to it, unless a harbor's charter says otherwise. Claims are heard at the nearest neutral pier, and a salvor who ignores a distress call to reach a wreck forfeits the claim.";
    const edited = structuredClone(draft);
    edited.visible_context.source_excerpts.push({ ref_id: 'lore.hand', source_ref: 'FixtureLore:World/Politics/Salvage Law.md', text: long });
    edited.packet_prompt_text = edited.packet_prompt_text.replace('- Old hand-written constraint that no excerpt backs.', `- Old hand-written constraint that no excerpt backs.\n- ${long}`);
    const r = await buildPacket(index, edited, { projectedContext: context, policy, file: 'draft.json' });
    // The stand-in: a verified excerpt of the cited note, in the packet with its trace entry.
    const standIn = r.packet.visible_context.source_excerpts.find((e) => e.source_ref.startsWith('FixtureLore:World/Politics/Salvage Law.md#'));
    expect(standIn?.ref_id).toMatch(/^lore\.salvage_law\.chunk\d+$/);
    expect(r.capture!.research_trace.map((t) => t.source_ref)).toContain(standIn!.source_ref);
    expect(r.findings.find((f) => f.code === 'prompt_lines_replaced')?.message).toBe(
      `draft.json: 1 line of the prompt rendered draft lore excerpts that verified excerpts of their cited refs replace in the packet and was removed: ${JSON.stringify(`- ${long}`)}`,
    );
    expect(r.packet.packet_prompt_text).toContain('\n- Old hand-written constraint that no excerpt backs.\n');
    expect(r.packet.packet_prompt_text).not.toContain(`- ${long}`);
  });

  it('keeps verbatim the bullet of a draft lore excerpt that nothing verified replaces, and says so', async () => {
    const unsupported = `${'A hand-written lore line that runs on and on. '.repeat(6).trim()}`;
    const edited = structuredClone(draft);
    edited.visible_context.source_excerpts.push({ ref_id: 'lore.hand', source_ref: 'FixtureLore:World/Politics/Salvage Law.md', text: unsupported });
    edited.packet_prompt_text = edited.packet_prompt_text.replace('- Old hand-written constraint that no excerpt backs.', `- Old hand-written constraint that no excerpt backs.\n- ${unsupported}`);
    const r = await buildPacket(index, edited, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.findings.find((f) => f.code === 'draft_lore_excerpt_unsupported')?.pointer).toBe('/visible_context/source_excerpts/1');
    expect(r.findings.find((f) => f.code === 'draft_lore_excerpt_dropped')?.message).toMatch(/no verified excerpt of its cited refs stands in for it \(see the findings above: refused, unsupported or cut by the budget\); its lines in packet_prompt_text are kept verbatim, since nothing loretrace verified replaces them$/);
    expect(r.findings.find((f) => f.code === 'prompt_lines_replaced')).toBeUndefined();
    expect(r.packet.packet_prompt_text).toContain(`\n- Old hand-written constraint that no excerpt backs.\n- ${unsupported}\n`);
    // The excerpt object itself leaves source_excerpts (lore there comes with a runner_captured receipt).
    expect(r.packet.visible_context.source_excerpts.map((e) => e.ref_id)).not.toContain('lore.hand');
    expect(validatePacket(r.packet).valid).toBe(true);
  });

  it('gives byte-identical output on two runs', async () => {
    const again = await buildPacket(index, readJson(DRAFT_FILE), { projectedContext: readJson(CONTEXT_FILE), policy: readJson(POLICY_FILE), file: 'draft.json' });
    expect(JSON.stringify(again.packet, null, 2)).toBe(JSON.stringify(coordinator.packet, null, 2));
    expect(JSON.stringify(again.capture, null, 2)).toBe(JSON.stringify(coordinator.capture, null, 2));
  });

  it('replaces the draft\'s lore excerpts in the coordinator lane (finding draft_lore_excerpt_dropped)', async () => {
    const d = structuredClone(draft);
    d.visible_context.source_excerpts.push({ ref_id: 'lore.hand', source_ref: 'FixtureLore:World/Politics/Salvage Law.md', text: 'Salvage law decides who owns a wreck.' });
    const r = await buildPacket(index, d, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.stats.excerpts_dropped).toBe(1);
    expect(r.findings.find((f) => f.code === 'draft_lore_excerpt_dropped')?.pointer).toBe('/visible_context/source_excerpts/1');
    expect(r.packet.visible_context.source_excerpts.map((e) => e.ref_id)).not.toContain('lore.hand');
  });

  it('builds the responder_scoped_repository_search lane: no lore fetched, research section, no_repo_access false', async () => {
    const r = await buildPacket(index, draft, { lane: 'responder_scoped_repository_search', policy, file: 'draft.json' });
    const p = r.packet;
    expect(r.capture).toBeNull();
    expect(r.queries).toEqual([]);
    expect(p.visible_context.source_excerpts).toEqual(draft.visible_context.source_excerpts);
    expect(p.lore_access.mode).toBe('responder_scoped_repository_search');
    expect(p.lore_access.research_instructions?.length).toBe(5);
    expect(p.isolation_requirements.no_repo_access).toBe(false);
    expect(p.output_contract.required_fields.slice(-4)).toEqual(['consulted_refs', 'followed_refs', 'research_trace', 'research_summary']);
    const prompt = p.packet_prompt_text;
    expect(prompt).toContain('\n\n## Required Lore Research\n');
    expect(prompt).toContain('- FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md\n');
    expect(prompt).toContain('  - FixtureLore:World/Pre-Elysium/\n  - FixtureLore:World/Politics/\n');
    // What the responder may do, not how the runner starts the proxy.
    expect(prompt).not.toContain('loretrace serve');
    expect(prompt).toContain('\n- Your only lore access is the loretrace search proxy.');
    // The packet_only draft's "no repository access" contradicts the lane: rewritten and listed.
    expect(prompt).toContain('You have no conversation context, repository access only through the lore search described under Required Lore Research, and no hidden author context.');
    expect(prompt).toContain('Return a JSON object with these exact keys: responder_agent_id, action_label, visible_action, spoken_text, private_interpretation, intended_effect, state_update_candidates, relationship_update_candidates, unresolved_hooks, consulted_refs, followed_refs, research_trace, research_summary.');
    expect(r.findings.find((f) => f.code === 'prompt_lines_rewritten')?.message).toMatch(/^draft\.json: 3 draft prompt lines contradicted the packet as built and were rewritten: "You are a sandboxed Ghostlight character responder\. You have no conversation context, no repository access, .* \(the packet grants scoped repository research \(no_repo_access: false\)\), "Packet id: .* \(the packet has a new packet_id\), "Return a JSON object .* \(output_contract\.required_fields changed\)$/);
    expect(validatePacket(p).valid).toBe(true);
    // Every other draft line is kept, byte for byte and in order; the research section follows them.
    const draftLines = draft.packet_prompt_text.split('\n');
    const rewritten = new Map([
      [draftLines[0], 'You are a sandboxed Ghostlight character responder. You have no conversation context, repository access only through the lore search described under Required Lore Research, and no hidden author context. Use only this packet. Output JSON only, with no Markdown fence and no commentary.'],
      ['Packet id: brinefall-intake.turn-01.mara-voss.packet', 'Packet id: brinefall-intake.turn-01.mara-voss.packet.loretrace-research.v1'],
      [draftLines.find((l) => l.startsWith('Return a JSON object')), 'Return a JSON object with these exact keys: responder_agent_id, action_label, visible_action, spoken_text, private_interpretation, intended_effect, state_update_candidates, relationship_update_candidates, unresolved_hooks, consulted_refs, followed_refs, research_trace, research_summary.'],
    ]);
    const lines = prompt.split('\n');
    expect(lines.slice(0, draftLines.length)).toEqual(draftLines.map((l) => rewritten.get(l) ?? l));
    expect(lines.slice(draftLines.length, draftLines.length + 2)).toEqual(['', '## Required Lore Research']);
    expect(r.findings.filter((f) => f.code.startsWith('prompt_')).map((f) => f.code)).toEqual(['prompt_lines_rewritten']);
  });

  it('uses the draft\'s traversal_policy over --policy, with a warning', async () => {
    const d = structuredClone(draft);
    d.lore_access.traversal_policy = { ...policy, stop_conditions: ['max_refs:2'] };
    const r = await buildPacket(index, d, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.findings.find((f) => f.code === 'policy_option_ignored')?.severity).toBe('warning');
    expect(r.capture?.consulted_refs.length).toBe(1);
    expect(r.capture?.followed_refs.length).toBe(1);
  });

  it('refuses a draft that violates the contract, with the validator errors', async () => {
    const d = structuredClone(draft) as unknown as Record<string, unknown>;
    d['generation_lane'] = 'retrieval_augmented';
    await expect(buildPacket(index, d, { policy, file: 'draft.json' })).rejects.toMatchObject({
      code: 'invalid_draft',
      message:
        'draft.json: the draft violates the responder packet contract (1 error): /lore_access/mode [lane.retrieval_augmented_requires_scoped_mode] generation_lane is retrieval_augmented but lore_access.mode is curated_excerpts_only',
      details: { pointer: '/lore_access/mode' },
    });
  });

  it('refuses under strictPolicy a policy whose link-class phrase is only partially enforced, naming the words it drops', async () => {
    const partial = { ...policy, follow_link_classes: ['wikilink', 'resident harbor factions'] };
    await expect(buildPacket(index, draft, { projectedContext: context, policy: partial, strictPolicy: true, file: 'draft.json' })).rejects.toMatchObject({
      code: 'strict_policy',
      exitCode: 1,
      message: '--strict-policy refuses this policy: 1 clause is not fully enforced: /follow_link_classes/1 "resident harbor factions" (partially_enforced)',
      details: { pointer: '/follow_link_classes/1' },
    });
    // Without strict the packet is built and its receipt says which words are not enforced.
    const r = await buildPacket(index, draft, { projectedContext: context, policy: partial, file: 'draft.json' });
    const row = r.capture!.policy_receipt.find((x) => x.pointer === '/follow_link_classes/1');
    expect([row?.disposition, row?.rule.endsWith('not enforced: resident, harbor (every note of these classes is followed, whatever it says)')]).toEqual(['partially_enforced', true]);
  });

  it('refuses without a policy (exit code 2)', async () => {
    await expect(buildPacket(index, draft, { file: 'draft.json' })).rejects.toMatchObject({
      code: 'no_policy',
      exitCode: 2,
      message:
        'draft.json has no /lore_access/traversal_policy and no --policy was given; expected a traversal policy (max_link_depth, allowed_prefixes, required_seed_refs, follow_link_classes, stop_conditions) for lane coordinator_scoped_retrieval',
    });
  });

  it('refuses a responder-lane draft whose lore excerpt lies outside allowed_prefixes', async () => {
    const d = structuredClone(draft);
    d.visible_context.source_excerpts.push({ ref_id: 'lore.veil', source_ref: 'FixtureLore:World/Post-Elysium/Veil Drive.md', text: 'x' });
    await expect(buildPacket(index, d, { lane: 'responder_scoped_repository_search', policy, file: 'draft.json' })).rejects.toMatchObject({
      code: 'ref_out_of_scope',
      message:
        'draft.json: /visible_context/source_excerpts/1/source_ref "FixtureLore:World/Post-Elysium/Veil Drive.md" is outside allowed_prefixes (FixtureLore:World/Pre-Elysium/, FixtureLore:World/Politics/)',
    });
  });

  it('refuses a projected context of another responder', async () => {
    const c = structuredClone(context);
    c.context.local_agent_id = 'idris_kell';
    await expect(buildPacket(index, draft, { projectedContext: c, policy, file: 'draft.json', projectedContextFile: 'ctx.json' })).rejects.toMatchObject({
      code: 'projected_context_mismatch',
      details: { pointer: '/context/local_agent_id' },
    });
  });
});

describe('queriesFor', () => {
  it('is one query per runtime retrieval requirement, then the observable action, without duplicates', () => {
    expect(queriesFor(draft)).toEqual([draft.visible_context.observed_event.observable_action]);
    expect(queriesFor(draft, context)).toHaveLength(3);
  });
});

describe('renderSourceSection', () => {
  const ex: SourceExcerpt[] = [
    { ref_id: 'a', source_ref: 'x.json', text: 'one' },
    { ref_id: 'lore.b', source_ref: 'FixtureLore:B.md#chunk0', text: 'two\n\n- three' },
  ];
  it('renders plain bullets or ref_id bullets, continuing lines with two spaces', () => {
    expect(renderSourceSection(ex, 'plain')).toEqual(['- one', '- two', '  ', '  - three']);
    expect(renderSourceSection(ex, 'markdown')).toEqual(['- a: one', '- lore.b: two', '  ', '  - three']);
  });
  it('round-trips through parseSourceSection', () => {
    const prompt = ['# P', '', '## Source Excerpts', ...renderSourceSection(ex, 'markdown'), '', '## Output Contract', 'x'].join('\n');
    expect(parseSourceSection(prompt)?.items).toEqual([
      { ref_id: 'a', text: 'one' },
      { ref_id: 'lore.b', text: 'two\n\n- three' },
    ]);
  });
});

describe('applySourceSection', () => {
  const ex: SourceExcerpt[] = [{ ref_id: 'a', source_ref: 'x.json', text: 'one' }];
  it('replaces only the bullet run after the header', () => {
    const r = applySourceSection('Intro\n\nSource constraints:\n- old\n- older\n\nOutput contract:\nJSON', ex);
    expect(r).toEqual({ prompt: 'Intro\n\nSource constraints:\n- one\n\nOutput contract:\nJSON', removed: ['- old', '- older'] });
  });
  it('inserts a section before the output contract when there is none, in the prompt\'s style', () => {
    expect(applySourceSection('# T\n\n## Output Contract\nJSON', ex).prompt).toBe('# T\n\n## Source Excerpts\n- a: one\n\n## Output Contract\nJSON');
    expect(applySourceSection('Intro', ex).prompt).toBe('Intro\n\nSource constraints:\n- one');
  });
  it('removes the section when there are no excerpts', () => {
    expect(applySourceSection('A\n\nSource constraints:\n- old\n\nOutput contract:\nJSON', []).prompt).toBe('A\n\nOutput contract:\nJSON');
  });
});

describe('applyResearchSection', () => {
  const section = renderResearchSection({ allowed_scope: ['N:a.md'], traversal_policy: { max_link_depth: 1, allowed_prefixes: ['N:'], required_seed_refs: [], follow_link_classes: [], stop_conditions: [] }, research_instructions: ['Look.'] });
  it('renders every list, with (none) for empty ones, and names the proxy tools', () => {
    expect(section[0]).toBe('## Required Lore Research');
    expect(section).toContain('- Required seed refs:');
    expect(section).toContain('  - (none)');
    expect(PROXY_TOOLS.map((t) => t[0])).toEqual([...TOOL_NAMES]);
  });
  it('says what the responder may do with the proxy, not how the runner starts it', () => {
    expect(section.filter((l) => l.includes('loretrace serve'))).toEqual([]);
    expect(section.slice(-4)).toEqual([
      'Lore search proxy:',
      '- Your only lore access is the loretrace search proxy. It enforces this traversal policy, refuses anything outside it, and records every lookup as a runner_captured research trace entry.',
      '- Its tools: lore_search (find refs by words), lore_read (exact lines with their provenance), lore_links (the links of an admitted note), lore_follow (follow a link inside the policy), research_status (what you consulted and the budgets left).',
      '- Cite each source you use by the ref, chunk and line range the proxy returned.',
    ]);
  });
  it('goes before the first ## heading of a markdown prompt and is replaced in place on a second run', () => {
    const once = applyResearchSection('# P\nIntro\n\n## Local\nctx', section);
    expect(once).toBe(['# P', 'Intro', '', ...section, '', '## Local', 'ctx'].join('\n'));
    expect(applyResearchSection(once, section)).toBe(once);
    expect(applyResearchSection(once, null)).toBe('# P\nIntro\n\n## Local\nctx');
  });
  it('is appended to a plain prompt', () => {
    expect(applyResearchSection('Intro\n', section)).toBe(['Intro', '', ...section].join('\n'));
  });
});

describe('buildPacket on a built packet', () => {
  it('throws already_built naming the file, /review/reviewer and a draft as expected, for either lane', async () => {
    for (const lane of ['coordinator_scoped_retrieval', 'responder_scoped_repository_search'] as const) {
      const built = lane === 'coordinator_scoped_retrieval' ? coordinator.packet : (await buildPacket(index, draft, { projectedContext: context, policy, lane, file: 'draft.json' })).packet;
      const e = await buildPacket(index, built, { policy, file: 'built.json' }).then(() => null, (x: unknown) => x);
      expect(e).toMatchObject({
        code: 'already_built',
        exitCode: 1,
        details: { file: 'built.json', pointer: '/review/reviewer', expected: 'a draft responder packet (review.reviewer other than "loretrace retrieve")' },
      });
    }
  });
});

describe('loretrace retrieve', () => {
  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index'), SOURCE_DATE_EPOCH: '1735689600' }, cwd: REPO });
    return { code, out, err };
  }
  const base = (out: string): string[] => [
    'retrieve', '--lore', FIXTURE_VAULT, '--packet', DRAFT_FILE, '--projected-context', CONTEXT_FILE, '--policy', POLICY_FILE, '--out', out,
  ];

  it('writes the packet and the capture fragment, byte-identical on a second run', async () => {
    const a = join(tmp, 'a', 'packet.json');
    const b = join(tmp, 'b', 'packet.json');
    const first = await run([...base(a), '--capture-out', join(tmp, 'a', 'lore_access.json')]);
    expect(first.code).toBe(0);
    expect(first.out).toContain('retrieve: coordinator_scoped_retrieval over FixtureLore');
    expect(first.out).toContain('  excerpts: 1 kept from the draft, 3 lore excerpts added, 0 draft lore excerpts replaced\n');
    expect(first.out).toContain('  research trace: 3 runner_captured entries\n');
    expect((await run([...base(b), '--capture-out', join(tmp, 'b', 'lore_access.json')])).code).toBe(0);
    const text = readFileSync(a, 'utf8');
    expect(readFileSync(b, 'utf8')).toBe(text);
    expect(readFileSync(join(tmp, 'b', 'lore_access.json'), 'utf8')).toBe(readFileSync(join(tmp, 'a', 'lore_access.json'), 'utf8'));
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toBe(JSON.stringify(coordinator.packet, null, 2) + '\n');
  });

  it('exits 1 under --strict-policy on plain-English stop conditions it enforces only in part, and writes nothing', async () => {
    const file = join(tmp, 'partial-stops.policy.json');
    writeFileSync(file, JSON.stringify({
      ...policy,
      stop_conditions: ['stop after 12 notes unless the scene needs more', "stop when a link is not relevant to Nara's labor grievances", 'never follow future lore about Jovian colonies only'],
    }));
    const out = join(tmp, 'partial-stops', 'packet.json');
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', DRAFT_FILE, '--projected-context', CONTEXT_FILE, '--policy', file, '--out', out, '--strict-policy']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('--strict-policy refuses this policy: 3 clauses are not fully enforced: ' +
      '/stop_conditions/0 "stop after 12 notes unless the scene needs more" (partially_enforced); ' +
      '/stop_conditions/1 "stop when a link is not relevant to Nara\'s labor grievances" (partially_enforced); ' +
      '/stop_conditions/2 "never follow future lore about Jovian colonies only" (partially_enforced)');
    expect(r.err).toMatch(/\[strict_policy\]\n$/);
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 on an unknown lane and writes nothing', async () => {
    const out = join(tmp, 'lane', 'packet.json');
    const r = await run([...base(out), '--lane', 'packet_only']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('loretrace: unknown lane "packet_only" for --lane; expected coordinator_scoped_retrieval or responder_scoped_repository_search; see \'loretrace retrieve --help\' [usage]\n');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 on a draft that is not JSON', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{ "schema_version": ');
    const out = join(tmp, 'nj', 'packet.json');
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', bad, '--policy', POLICY_FILE, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not JSON: .* at line 1, column 21 \[bad_json\]\n$/);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a packet it already built (already_built, /review/reviewer), exit 1, and writes nothing', async () => {
    const built = join(tmp, 'built', 'packet.json');
    expect((await run(base(built))).code).toBe(0);
    const again = join(tmp, 'built', 'again.json');
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', built, '--policy', POLICY_FILE, '--out', again]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(`loretrace: ${built} is a packet loretrace retrieve already built (/review/reviewer is "loretrace retrieve", packet_id brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1); expected a draft responder packet — pass the draft it was built from (nothing written) [already_built]\n`);
    expect(existsSync(again)).toBe(false);
    expect(existsSync(join(tmp, 'built', 'again.ledger.jsonl'))).toBe(false);
    expect(existsSync(join(tmp, 'built', 'again.lock.json'))).toBe(false);
  });

  it('exits 1 on a draft violating the contract, listing every validator error, and writes nothing', async () => {
    const d = structuredClone(draft) as unknown as Record<string, unknown>;
    d['generation_lane'] = 'retrieval_augmented';
    (d['isolation_requirements'] as Record<string, unknown>)['no_repo_access'] = false;
    const file = join(tmp, 'violating.json');
    writeFileSync(file, JSON.stringify(d));
    const out = join(tmp, 'viol', 'packet.json');
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', file, '--policy', POLICY_FILE, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.err.split('\n').slice(1)).toEqual([
      '  /isolation_requirements/no_repo_access [isolation.requires_no_repo_access] lore_access.mode curated_excerpts_only sets no_repo_access false; only responder_scoped_repository_search may give the responder repo access (expected true)',
      '  /lore_access/mode [lane.retrieval_augmented_requires_scoped_mode] generation_lane is retrieval_augmented but lore_access.mode is curated_excerpts_only (expected coordinator_scoped_retrieval or responder_scoped_repository_search)',
      '',
    ]);
    expect(r.err).toMatch(/^loretrace: .*violating\.json: the draft violates the responder packet contract \(2 errors\)/);
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 without a policy', async () => {
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', DRAFT_FILE, '--out', join(tmp, 'np', 'p.json')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('[no_policy]');
  });

  it('exits 2 for --capture-out on the responder lane', async () => {
    const r = await run([...base(join(tmp, 'rl', 'p.json')), '--lane', 'responder_scoped_repository_search', '--capture-out', join(tmp, 'rl', 'c.json')]);
    expect(r.code).toBe(2);
    expect(existsSync(join(tmp, 'rl'))).toBe(false);
  });

  it('runs from the built binary (node bin/loretrace.js) with --json', () => {
    const out = join(tmp, 'bin', 'packet.json');
    const stdout = execFileSync(process.execPath, [join(REPO, 'bin', 'loretrace.js'), ...base(out), '--json'], {
      env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp, 'index') },
      encoding: 'utf8',
    });
    const summary = JSON.parse(stdout) as { ok: boolean; stats: unknown; written: string[] };
    expect(summary.ok).toBe(true);
    expect(summary.stats).toEqual(coordinator.stats);
    expect(readFileSync(out, 'utf8')).toBe(JSON.stringify(coordinator.packet, null, 2) + '\n');
  });
});

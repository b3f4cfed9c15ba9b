/**
 * The coordinator lane's lore bullets in the prompt (src/packet/prompt.ts, src/packet/build.ts): each names
 * its note (title › heading) in display form while the trace keeps the exact lines; an excerpt that restates
 * a line the draft already carries is left out (`excerpt_redundant`) and its budget slot goes to the next one;
 * requirements no lore excerpt serves are reported (`requirements_unmet` for runtime ones, `latent_requirements_unmet`
 * as info for latent ones, `unmet_requirements`); the excerpt
 * budget — default or the policy's `max_chunks` / `max_chars` — and what it cut (`excerpt_budget_cut`).
 * Fixture: the Brinefall intake draft over lore-fixtures/FixtureLore.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket, type BuildPacketResult } from '../src/packet/build.js';
import { loreLabel, noteDisplayTitle, renderSourceSection } from '../src/packet/prompt.js';
import type { ProjectedLocalContext, ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;
const draft = readJson<ResponderPacket>(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'));
const context = readJson<ProjectedLocalContext>(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'));
const policy = readJson<TraversalPolicy>(join(PACKETS, 'brinefall-intake.policy.json'));

let tmp: string;
let index: VaultIndex;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-coordinator-prompt-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('loreLabel and labelled bullets', () => {
  it('names the note and the heading path, without a heading that repeats the title, wikilinks as display text', () => {
    expect(loreLabel('Aeronautics Unlimited', ['Aeronautics Unlimited', 'Territory and Everyday Life'])).toBe('Aeronautics Unlimited › Territory and Everyday Life');
    expect(loreLabel('Halcyon Mutual', ['Halcyon Mutual', 'Relations with [[Saltglass Syndicate]]'])).toBe('Halcyon Mutual › Relations with Saltglass Syndicate');
    expect(loreLabel('Quiet  Hands', [])).toBe('Quiet Hands');
  });
  it('puts the label before the text in either prompt style, and only for labelled excerpts', () => {
    const ex = [
      { ref_id: 'lore.a.chunk0', source_ref: 'FixtureLore:A.md#chunk0', text: 'They keep the beds.' },
      { ref_id: 'local.x', source_ref: 'digest.json', text: 'Nine cots taken.' },
    ];
    const labels = new Map([['lore.a.chunk0', 'Quiet Hands › Oath']]);
    expect(renderSourceSection(ex, 'plain', labels)).toEqual(['- Quiet Hands › Oath: They keep the beds.', '- Nine cots taken.']);
    expect(renderSourceSection(ex, 'markdown', labels)).toEqual(['- lore.a.chunk0: Quiet Hands › Oath: They keep the beds.', '- local.x: Nine cots taken.']);
  });
});

describe('redundant excerpts and unmet requirements (Brinefall intake draft)', () => {
  it('leaves out the Quiet Hands excerpt when the draft already carries its requirement terms, and takes the next candidate', async () => {
    const d = structuredClone(draft);
    d.packet_prompt_text = d.packet_prompt_text.replace(
      '- Old hand-written constraint that no excerpt backs.',
      '- Old hand-written constraint that no excerpt backs.\n- Quiet Hands count care in beds, air, food and repair hours.',
    );
    const r = await buildPacket(index, d, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.packet.visible_context.source_excerpts.map((e) => e.ref_id)).toEqual([
      'local.capacity_board',
      'lore.brinefall_blackout.chunk1',
      'lore.meridian_compact.chunk0',
      'lore.kestrel_route_accord.chunk0',
    ]);
    const redundant = r.findings.filter((f) => f.code === 'excerpt_redundant');
    expect(redundant.map((f) => f.message)).toEqual([
      'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md#chunk1 L7-L7 (lore.quiet_hands.chunk1) was left out: it serves runtime_retrieval_requirements[1] turn-01.lore.capacity (institutional pressure: Quiet Hands count care in beds, air, food and repair hours and refuse intake when beds run out.) with no term of it that the draft\'s line "Quiet Hands count care in beds, air, food and repair hours." does not already carry',
    ]);
    // The draft's line grounds requirement [1]: it is not reported unmet.
    expect(r.unmet_requirements.map((u) => u.index)).toEqual([2]);
    expect(r.capture!.research_trace.map((t) => t.source_path)).not.toContain('World/Pre-Elysium/Factions/Movements/Quiet Hands.md');
  });

  it('reports the latent requirement no lore excerpt serves in the result and as info, not as a warning', async () => {
    const r = await buildPacket(index, draft, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.unmet_requirements).toEqual([{ index: 2, label: "latent_pressure_requirements[0] turn-01.speech.review (Mara's speech should stay practical and short.)", covered_by_draft: [], kind: 'latent' }]);
    expect(r.findings.filter((f) => f.code === 'requirements_unmet')).toEqual([]);
    expect(r.findings.filter((f) => f.code === 'latent_requirements_unmet').map((f) => [f.severity, f.pointer, f.message])).toEqual([
      [
        'info',
        '/visible_context/source_excerpts',
        "draft.json: 1 latent pressure requirement got no lore excerpt that serves it (they label excerpts but are not retrieval requirements; speech or manner is not lore): latent_pressure_requirements[0] turn-01.speech.review (Mara's speech should stay practical and short.)",
      ],
    ]);
    expect(r.findings.filter((f) => f.severity === 'warning').map((f) => f.code)).toEqual([]);
  });

  it('keeps an unmet runtime retrieval requirement a warning, beside the latent one as info', async () => {
    const ctx = structuredClone(context);
    ctx.context.runtime_retrieval_requirements = [
      ...(ctx.context.runtime_retrieval_requirements ?? []),
      { requirement_id: 'turn-01.orbit.zenith', trigger: 'orbital mechanics', compact_fact: 'Zenith tethers precess every ninety minutes over the equatorial spindle.', source_refs: ['brinefall-lore-digest'], prompt_role: 'source_excerpt' },
    ];
    const r = await buildPacket(index, draft, { projectedContext: ctx, policy, file: 'draft.json' });
    expect(r.unmet_requirements.map((u) => [u.index, u.kind])).toEqual([
      [2, 'runtime'],
      [3, 'latent'],
    ]);
    expect(r.findings.filter((f) => f.code === 'requirements_unmet').map((f) => [f.severity, f.message])).toEqual([
      ['warning', 'draft.json: 1 runtime retrieval requirement got no lore excerpt that serves it: runtime_retrieval_requirements[2] turn-01.orbit.zenith (orbital mechanics: Zenith tethers precess every ninety minutes over the equatorial spindle.)'],
    ]);
    expect(r.findings.filter((f) => f.code === 'latent_requirements_unmet').map((f) => f.severity)).toEqual(['info']);
  });
});

describe('the excerpt budget (Brinefall intake draft)', () => {
  const withStops = (...stops: string[]): TraversalPolicy => ({ ...policy, stop_conditions: [...policy.stop_conditions, ...stops] });
  const cutFinding = (r: BuildPacketResult) => r.findings.filter((f) => f.code === 'excerpt_budget_cut').map((f) => [f.severity, f.path, f.pointer, f.message]);
  const lore = (r: BuildPacketResult) => r.packet.visible_context.source_excerpts.filter((e) => e.source_ref.startsWith('FixtureLore:')).map((e) => [e.ref_id, e.text.length]);

  it('by default (4 excerpts, 600 characters for this draft) cuts Kestrel Route Accord and says so: ref, lines, characters, the budget and its source', async () => {
    const r = await buildPacket(index, draft, { projectedContext: context, policy, file: 'draft.json' });
    expect(lore(r)).toEqual([['lore.brinefall_blackout.chunk1', 225], ['lore.meridian_compact.chunk0', 117], ['lore.quiet_hands.chunk1', 98]]);
    expect(cutFinding(r)).toEqual([[
      'info', 'draft.json', '/visible_context/source_excerpts',
      "draft.json: the excerpt budget (4 excerpts, 600 characters; default: 3 requirements + 1 seed; default: 25 % of the draft prompt's 1944 characters (at least 600)) cut 1 lore excerpt, left out of the packet and the capture: FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0 L6-L7 (219 characters)",
    ]]);
    expect(r.stats.excerpts_cut).toBe(1);
    expect(r.capture!.research_trace.map((t) => t.source_path)).not.toContain('World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md');
  });

  it('takes max_chunks / max_chars from the policy instead, and reports what they cut', async () => {
    const r = await buildPacket(index, draft, { projectedContext: context, policy: withStops('max_chunks:2'), file: 'draft.json' });
    expect(r.budget).toEqual({ count: 2, chars: 600, count_source: 'stop condition max_chunks:2', chars_source: "default: 25 % of the draft prompt's 1944 characters (at least 600)" });
    // Each requirement's best excerpt first: the blackout's and the capacity requirement's.
    expect(lore(r)).toEqual([['lore.brinefall_blackout.chunk1', 225], ['lore.quiet_hands.chunk1', 98]]);
    expect(cutFinding(r)).toEqual([[
      'info', 'draft.json', '/visible_context/source_excerpts',
      "draft.json: the excerpt budget (2 excerpts, 600 characters; stop condition max_chunks:2; default: 25 % of the draft prompt's 1944 characters (at least 600)) cut 2 lore excerpts, left out of the packet and the capture: FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk0 L7-L7 (117 characters), FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0 L6-L7 (219 characters)",
    ]]);
    expect(r.stats.excerpts_cut).toBe(2);
    const wide = await buildPacket(index, draft, { projectedContext: context, policy: withStops('max_chunks:9', 'max_chars:5000'), file: 'draft.json' });
    expect([wide.budget?.count_source, wide.budget?.chars_source, wide.stats.excerpts_cut]).toEqual(['stop condition max_chunks:9', 'stop condition max_chars:5000', 0]);
    expect(lore(wide)).toEqual([['lore.brinefall_blackout.chunk1', 225], ['lore.meridian_compact.chunk0', 117], ['lore.quiet_hands.chunk1', 98], ['lore.kestrel_route_accord.chunk0', 219]]);
  });

  it('bounds the compact excerpts with max_chars, not the walk: a budget below the walk\'s whole-line excerpts still gives lore', async () => {
    const r = await buildPacket(index, draft, { projectedContext: context, policy: withStops('max_chars:200'), file: 'draft.json' });
    expect(r.budget?.chars_source).toBe('stop condition max_chars:200');
    // The walk's own excerpt of the seed alone is longer than 200 characters; the compact ones are not.
    expect(lore(r)).toEqual([['lore.quiet_hands.chunk1', 98]]);
    expect(cutFinding(r)).toEqual([[
      'info', 'draft.json', '/visible_context/source_excerpts',
      'draft.json: the excerpt budget (4 excerpts, 200 characters; default: 3 requirements + 1 seed; stop condition max_chars:200) cut 3 lore excerpts, left out of the packet and the capture: FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1 L11-L12 (225 characters), FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk0 L7-L7 (117 characters), FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md#chunk0 L6-L7 (219 characters)',
    ]]);
  });
});

describe('noteDisplayTitle: what a lore bullet calls its note', () => {
  it('names an index note by its folder, never the bare file name, and leaves other titles alone', () => {
    expect(noteDisplayTitle('index', 'World/Pre-Elysium/Factions/index.md')).toBe('Factions');
    expect(noteDisplayTitle('Index', 'Aetheria/Worldbuilding/Pre-Elysium/index.md')).toBe('Pre-Elysium');
    expect(noteDisplayTitle('index', 'index.md')).toBe('index');
    expect(noteDisplayTitle('Quiet Hands', 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md')).toBe('Quiet Hands');
    // With its chunk's heading, the folder name that repeats the heading is said once.
    expect(loreLabel(noteDisplayTitle('index', 'World/Pre-Elysium/Factions/index.md'), ['Factions'])).toBe('Factions');
  });
});

/**
 * The coordinator lane's lore bullets in the prompt (src/packet/prompt.ts, src/packet/build.ts): each names
 * its note (title › heading) in display form while the trace keeps the exact lines; an excerpt that restates
 * a line the draft already carries is left out (`excerpt_redundant`) and its budget slot goes to the next one;
 * requirements no lore excerpt serves are reported (`requirements_unmet`, `unmet_requirements`).
 * Fixture: the Brinefall intake draft over lore-fixtures/FixtureLore.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket } from '../src/packet/build.js';
import { loreLabel, renderSourceSection } from '../src/packet/prompt.js';
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

  it('reports the latent requirement no lore excerpt serves, in the result and as one warning', async () => {
    const r = await buildPacket(index, draft, { projectedContext: context, policy, file: 'draft.json' });
    expect(r.unmet_requirements).toEqual([{ index: 2, label: "latent_pressure_requirements[0] turn-01.speech.review (Mara's speech should stay practical and short.)", covered_by_draft: [] }]);
    expect(r.findings.filter((f) => f.code === 'requirements_unmet').map((f) => [f.severity, f.message])).toEqual([
      ['warning', "draft.json: 1 scene requirement got no lore excerpt that serves it: latent_pressure_requirements[0] turn-01.speech.review (Mara's speech should stay practical and short.)"],
    ]);
  });
});

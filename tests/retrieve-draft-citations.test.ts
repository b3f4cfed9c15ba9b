/**
 * The draft's own lore excerpts as requirements (src/packet/draft-citations.ts, docs/RETRIEVE.md "Draft lore
 * excerpts"): on lore-fixtures/packets/brinefall-intake.turn-02.mara-voss.paraphrase.draft.packet.json — four
 * paraphrased lore excerpts citing a note section (`#Practice`), a note joined with a non-lore source by
 * `;`, a note that does not support the paraphrase, and a note outside the policy's prefixes — exact
 * verified excerpts, trace entries, findings, budget and prompt.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket, mergeSourceSection } from '../src/packet/build.js';
import type { BuildPacketResult } from '../src/packet/build.js';
import { draftCitations } from '../src/packet/draft-citations.js';
import { selectWithinBudget } from '../src/packet/requirements.js';
import type { ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import { validatePacket } from '../src/contracts/validate.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const DRAFT_FILE = join(PACKETS, 'brinefall-intake.turn-02.mara-voss.paraphrase.draft.packet.json');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;

let tmp: string;
let index: VaultIndex;
let draft: ResponderPacket;
let r: BuildPacketResult;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-draft-citations-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
  draft = readJson(DRAFT_FILE);
  r = await buildPacket(index, draft, { policy: readJson<TraversalPolicy>(join(PACKETS, 'brinefall-intake.policy.json')), file: 'draft.json' });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const QUIET = 'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md';
const HARBOR = 'FixtureLore:World/Politics/Harbor Neutrality.md';
const MERIDIAN = 'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md';

describe('draftCitations', () => {
  it('lists every lore part of every lore excerpt, skipping non-lore parts and non-lore excerpts', () => {
    expect(draftCitations(draft, 'FixtureLore').map((c) => [c.pointer, c.ref_id, c.ref])).toEqual([
      ['/visible_context/source_excerpts/1', 'lore.quiet_hands_intake', `${QUIET}#Practice`],
      ['/visible_context/source_excerpts/2', 'lore.pier_levy', HARBOR],
      ['/visible_context/source_excerpts/3', 'lore.compact_gardens', MERIDIAN],
      ['/visible_context/source_excerpts/4', 'lore.veil_drive', 'FixtureLore:World/Post-Elysium/Veil Drive.md'],
    ]);
  });
});

describe('verified excerpts of the cited refs', () => {
  it('puts the verified excerpts first, then the walk\'s, and counts the admitted cited refs as requirements', () => {
    expect(r.packet.visible_context.source_excerpts).toEqual([
      draft.visible_context.source_excerpts[0],
      // Searched within the cited "## Practice" section only: the Oath section (line 7) also counts beds.
      { ref_id: 'lore.quiet_hands.chunk2', source_ref: `${QUIET}#chunk2`, text: 'Quiet Hands volunteers keep a capacity board at every sanctuary berth and refuse intake when the beds run out.' },
      {
        ref_id: 'lore.harbor_neutrality.chunk0',
        source_ref: `${HARBOR}#chunk0`,
        text: 'Neutral piers are funded by a levy on every insured hull, collected by Halcyon Mutual.\nBreaking neutrality is the one crime every harbor agrees to punish, and the precedent is Salvage Law.',
      },
      {
        ref_id: 'lore.brinefall_blackout.chunk1',
        source_ref: 'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1',
        text: 'Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.\nThe promise strained the sanctuary capacity of every harbor on the shelf.',
      },
    ]);
    expect(r.stats).toEqual({ excerpts_kept: 1, excerpts_added: 3, excerpts_verified: 2, excerpts_dropped: 4, excerpts_withheld: 0, excerpts_cut: 1, trace_entries: 3 });
    // Three cited refs the policy admits (the refused one is not a requirement loretrace can serve).
    expect(r.budget).toEqual({
      count: 4,
      chars: 600,
      count_source: "default: 3 requirements (3 refs cited by the draft's lore excerpts) + 1 seed",
      chars_source: "default: 25 % of the draft prompt's 1930 characters (at least 600)",
    });
  });

  it('gives each a runner_captured trace entry over the exact lines, whose used_for names the draft excerpt it verifies', async () => {
    const t = r.capture!.research_trace;
    expect(t.slice(0, 2).map((e) => [e.origin, e.query, e.source_ref, e.line_start, e.line_end, e.used_for])).toEqual([
      [
        'runner_captured',
        'Quiet Hands crews keep a capacity board at each sanctuary berth and refuse intake once the beds run out.',
        `${QUIET}#chunk2`,
        11,
        11,
        `verifies /visible_context/source_excerpts/1 lore.quiet_hands_intake, which cites ${QUIET}#Practice: shares 12 of its 15 terms (3 needed to support it)`,
      ],
      [
        'runner_captured',
        'Neutral piers are paid for by a levy on every insured hull, and Halcyon Mutual collects it.',
        `${HARBOR}#chunk0`,
        5,
        6,
        `verifies /visible_context/source_excerpts/2 lore.pier_levy, which cites ${HARBOR}: shares 8 of its 10 terms (2 needed to support it)`,
      ],
    ]);
    expect(t[1]?.extracted_constraint).toBe('Neutral piers are funded by a levy on every insured hull, collected by [[Halcyon Mutual]].\nBreaking neutrality is the one crime every harbor agrees to punish, and the precedent is [[Salvage Law]].');
    // The searched paraphrases are queries of the run (the ledger records one search each); the refused one is not.
    expect(r.queries).toEqual([
      draft.visible_context.observed_event.observable_action,
      'Quiet Hands crews keep a capacity board at each sanctuary berth and refuse intake once the beds run out.',
      'Neutral piers are paid for by a levy on every insured hull, and Halcyon Mutual collects it.',
      'Orbital kelp gardens of the Compact grow under violet lamps along the rim.',
    ]);
    const report = await verifyTrace(index, r.capture!);
    expect(report.entries.map((e) => e.text_verified)).toEqual([true, true, true]);
    expect(r.capture!.consulted_refs).toEqual(['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', QUIET, HARBOR]);
  });

  it('reports the cited ref that supports nothing and the one the policy refuses, each with its pointer', () => {
    const f = (code: string) => r.findings.filter((x) => x.code === code).map((x) => ({ severity: x.severity, pointer: x.pointer, message: x.message }));
    expect(f('draft_lore_excerpt_unsupported')).toEqual([
      {
        severity: 'warning',
        pointer: '/visible_context/source_excerpts/3',
        message: `draft.json: /visible_context/source_excerpts/3 ("lore.compact_gardens"): nothing in its cited ref "${MERIDIAN}" supports its text: no self-contained line run of ${MERIDIAN} L1-L25 that may reach the packet shares enough of its terms (closest: ${MERIDIAN}#chunk0 L7-L7, 1 of its 9 terms; 2 needed)`,
      },
    ]);
    expect(f('draft_lore_excerpt_ref_refused')).toEqual([
      {
        severity: 'warning',
        pointer: '/visible_context/source_excerpts/4/source_ref',
        message: 'draft.json: /visible_context/source_excerpts/4 ("lore.veil_drive") cites "FixtureLore:World/Post-Elysium/Veil Drive.md", which the policy does not admit, so it was not read and verifies nothing: it is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/)',
      },
    ]);
    expect(r.findings.filter((x) => x.code === 'draft_lore_excerpt_dropped').map((x) => [x.pointer, x.message.split('trace entry; ')[1]])).toEqual([
      ['/visible_context/source_excerpts/1', `verified by lore.quiet_hands.chunk2 (${QUIET}#chunk2 L11-L11, 12 of its 15 terms), the line run of its cited ref that supports it`],
      ['/visible_context/source_excerpts/2', `verified by lore.harbor_neutrality.chunk0 (${HARBOR}#chunk0 L5-L6, 8 of its 10 terms), the line run of its cited ref that supports it`],
      ['/visible_context/source_excerpts/3', 'no verified excerpt of its cited refs stands in for it (see the findings above: refused, unsupported or cut by the budget); its lines in packet_prompt_text are kept verbatim, since nothing loretrace verified replaces them'],
      ['/visible_context/source_excerpts/4', 'no verified excerpt of its cited refs stands in for it (see the findings above: refused, unsupported or cut by the budget); its lines in packet_prompt_text are kept verbatim, since nothing loretrace verified replaces them'],
    ]);
  });
});

describe('the prompt renders the packet\'s lore once, in the draft\'s lore section', () => {
  it('replaces the verified paraphrases in "## Retrieved Lore To Keep In View" and "## Source Excerpts", keeping the author\'s own line and the paraphrases nothing verified replaces', () => {
    const prompt = r.packet.packet_prompt_text;
    const lines = prompt.split('\n');
    const lore = r.packet.visible_context.source_excerpts.slice(1);
    for (const e of lore) expect(lines.filter((l) => l.includes((e.text.split('\n')[0]) as string))).toHaveLength(1);
    // Verified stand-ins in the packet: excerpts 1 and 2 go. Excerpt 3 supports nothing and 4 cites a ref the
    // policy refuses: no stand-in, so their lines stay (the excerpt objects leave source_excerpts).
    for (const e of draft.visible_context.source_excerpts.slice(1, 3)) expect(prompt).not.toContain(e.text);
    for (const e of draft.visible_context.source_excerpts.slice(3)) {
      expect(lines).toContain(`- ${e.text}`);
      expect(lines).toContain(`- ${e.ref_id}: ${e.text}`);
    }
    expect(r.packet.visible_context.source_excerpts.map((e) => e.ref_id)).not.toContain('lore.veil_drive');
    const at = lines.indexOf('## Retrieved Lore To Keep In View');
    expect(lines.slice(at, at + 10)).toEqual([
      '## Retrieved Lore To Keep In View',
      '- Keep lore as pressure on the choice, not as exposition.',
      '- Orbital kelp gardens of the Compact grow under violet lamps along the rim.',
      '- A veil drive folds a ship out of sight of every relay buoy.',
      '- Quiet Hands › Practice: Quiet Hands volunteers keep a capacity board at every sanctuary berth and refuse intake when the beds run out.',
      '- Harbor Neutrality: Neutral piers are funded by a levy on every insured hull, collected by Halcyon Mutual.',
      '  Breaking neutrality is the one crime every harbor agrees to punish, and the precedent is Salvage Law.',
      '- Brinefall Blackout › Aftermath: Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.',
      '  The promise strained the sanctuary capacity of every harbor on the shelf.',
      '',
    ]);
    const src = lines.indexOf('## Source Excerpts');
    expect(lines.slice(src, src + 5)).toEqual([
      '## Source Excerpts',
      '- local.capacity_board: The sanctuary board shows nine of fourteen cots taken.',
      '- lore.compact_gardens: Orbital kelp gardens of the Compact grow under violet lamps along the rim.',
      '- lore.veil_drive: A veil drive folds a ship out of sight of every relay buoy.',
      '',
    ]);
    // The prompt still contains the (merged) local context verbatim, and the packet is valid.
    expect(prompt).toContain(r.packet.visible_context.local_context_prompt);
    expect(r.packet.visible_context.local_context_prompt).toContain('- Quiet Hands › Practice: ');
    expect(validatePacket(r.packet).errors).toEqual([]);
    // Every other non-blank draft line survives; the removed ones are listed.
    const now = new Set(lines);
    const lost = draft.packet_prompt_text.split('\n').filter((l) => l.trim() !== '' && !now.has(l));
    const listed = r.findings.find((x) => x.code === 'prompt_lines_replaced')!.message;
    expect(lost).toHaveLength(4);
    for (const l of lost) expect(listed).toContain(JSON.stringify(l));
  });

  it('mergeSourceSection: without a lore section elsewhere the added excerpts go to the source section', () => {
    const prompt = 'Intro.\n\n## Source Excerpts\n- a: Old.\n- b: Kept.\n\n## Output Contract\nx';
    const out = mergeSourceSection(prompt, { replaced: [{ ref_id: 'a', source_ref: 'L:x.md', text: 'Old.' }], added: [{ ref_id: 'n', source_ref: 'L:y.md#chunk0', text: 'New.' }] });
    expect(out).toEqual({ prompt: 'Intro.\n\n## Source Excerpts\n- b: Kept.\n- n: New.\n\n## Output Contract\nx', removed: ['- a: Old.'], inserted: ['- n: New.'] });
  });

  it('mergeSourceSection: the added bullets carry a ref_id only where the bullets of the run they join carry the draft\'s ids', () => {
    const ex = { replaced: [{ ref_id: 'lore.a', source_ref: 'L:x.md', text: 'Old.' }], added: [{ ref_id: 'lore.n.chunk2', source_ref: 'L:y.md#chunk2', text: 'New.' }], labels: new Map([['lore.n.chunk2', 'Quiet Hands › Practice']]) };
    const draftRefIds = new Set(['lore.a', 'local.b']);
    // A lore section of bare bullets: the added bullet has no id, its label stays.
    const bare = '## Lore To Keep In View\n- Old.\n- Own line.\n\n## Source Excerpts\n- lore.a: Old.\n- local.b: Kept.\n\n## Output Contract\nx';
    expect(mergeSourceSection(bare, { ...ex, draftRefIds })).toEqual({
      prompt: '## Lore To Keep In View\n- Own line.\n- Quiet Hands › Practice: New.\n\n## Source Excerpts\n- local.b: Kept.\n\n## Output Contract\nx',
      removed: ['- Old.', '- lore.a: Old.'],
      inserted: ['- Quiet Hands › Practice: New.'],
    });
    // A source section whose bullets carry the draft's ids: the added one does too.
    const ids = '## Source Excerpts\n- lore.a: Old.\n- local.b: Kept.\n\n## Output Contract\nx';
    expect(mergeSourceSection(ids, { ...ex, draftRefIds }).inserted).toEqual(['- lore.n.chunk2: Quiet Hands › Practice: New.']);
    // "Note: …" is not an id unless the draft has an excerpt of that ref_id.
    const colon = '## Source Excerpts\n- Note: the berths are few.\n- Old.\n\n## Output Contract\nx';
    expect(mergeSourceSection(colon, { ...ex, draftRefIds: new Set(['lore.a']) }).inserted).toEqual(['- Quiet Hands › Practice: New.']);
  });
});

describe('selectWithinBudget', () => {
  it('takes verified excerpts first, and a seed note a verified excerpt comes from is done', () => {
    const c = (chars: number, requirement: number | null, terms: number, seed = false, path = 'n.md', verified = false) => ({ chars, requirement, terms, seed, path, verified });
    const candidates = [c(100, null, 5, true, 'seed.md', true), c(100, null, 0, true, 'seed.md'), c(100, 0, 3), c(100, null, 1)];
    expect(selectWithinBudget(candidates, 1, { count: 2, chars: 1000, count_source: '', chars_source: '' })).toEqual([0, 2]);
  });
});

/**
 * The packet builder may change only its own lines of a draft's prompt (promise 2; seed 001: retrieval can
 * make a packet worse). Drafts derived from lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.draft
 * by inserting the lines a hostile trial used (s8 §1): a `## Required Lore Research` heading in a plain
 * prompt, whose sections are `Label:` lines.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { applyResearchSection, buildPacket, PROXY_TOOLS, renderResearchSection, RESEARCH_OUTPUT_FIELDS } from '../src/packet/build.js';
import { coordinatorResearchSection, reconcileLaneLines, researchSectionLines } from '../src/packet/prompt.js';
import { repositoryAccessDenials } from '../src/contracts/rules.js';
import type { ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import { validatePacket } from '../src/contracts/validate.js';
import { LoretraceError } from '../src/errors.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;
const DRAFT: ResponderPacket = readJson(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'));
const POLICY: TraversalPolicy = readJson(join(PACKETS, 'brinefall-intake.policy.json'));
const LANES = ['coordinator_scoped_retrieval', 'responder_scoped_repository_search'] as const;

/** The fixture draft with its prompt edited by `edit` (local context and observed event unchanged). */
function derived(edit: (prompt: string) => string): ResponderPacket {
  const d = structuredClone(DRAFT);
  d.packet_prompt_text = edit(d.packet_prompt_text);
  return d;
}

/** The draft lines from `from` (a line's start) to the end of the prompt. */
function tail(prompt: string, from: string): string[] {
  const lines = prompt.split('\n');
  return lines.slice(lines.findIndex((l) => l.startsWith(from)));
}

let tmp: string;
let index: VaultIndex;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-prompt-merge-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a Required Lore Research heading in a plain prompt ends at the draft\'s next block', () => {
  const heading = derived((p) => p.replace('Allowed action labels:', '## Required Lore Research\nMara always checks the tide tables before promising a berth.\n\nAllowed action labels:'));
  const draftTail = tail(DRAFT.packet_prompt_text, 'Allowed action labels:');

  it('reads the section as the heading and its own block only', () => {
    expect(researchSectionLines(heading.packet_prompt_text)).toEqual(['## Required Lore Research', 'Mara always checks the tide tables before promising a berth.']);
    // The first block after the heading is the section's own, even after a blank line.
    expect(researchSectionLines('Intro:\nx\n\n## Required Lore Research\n\nOwn line.\n\nNext: y')).toEqual(['## Required Lore Research', '', 'Own line.']);
  });

  it('coordinator lane: renames the section and keeps its line, which does not contradict the lane; the action labels, source constraints and output contract stay', async () => {
    const r = await buildPacket(index, heading, { lane: 'coordinator_scoped_retrieval', policy: POLICY, file: 'draft4.json' });
    const prompt = r.packet.packet_prompt_text;
    expect(prompt).not.toContain('Required Lore Research');
    const lines = tail(prompt, 'Allowed action labels:');
    expect(tail(prompt, '## Using Retrieved Lore').slice(0, 4)).toEqual(['## Using Retrieved Lore', 'Mara always checks the tide tables before promising a berth.', '', draftTail[0]]);
    expect(lines.slice(0, 3)).toEqual(draftTail.slice(0, 3));
    expect(lines.slice(-5)).toEqual(draftTail.slice(-5));
    expect(lines).toContain('- Brinefall Blackout › Aftermath: Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.');
    expect(r.findings.find((f) => f.code === 'prompt_research_section_rewritten')?.message).toBe(
      'draft4.json: the draft prompt\'s "## Required Lore Research" section (2 lines): in coordinator_scoped_retrieval the responder has no repository access and does not research, so 1 line that contradicts the lane was changed; every other line is kept verbatim under "## Using Retrieved Lore": "## Required Lore Research" → "## Using Retrieved Lore" (in coordinator_scoped_retrieval the responder does not research; the section keeps its lines on how lore is used)',
    );
    expect(validatePacket(r.packet).valid).toBe(true);
  });

  it('research lane: replaces only the section, and a second build of the result\'s prompt finds the same section', async () => {
    const r = await buildPacket(index, heading, { lane: 'responder_scoped_repository_search', policy: POLICY, file: 'draft4.json' });
    const prompt = r.packet.packet_prompt_text;
    const section = renderResearchSection({ allowed_scope: r.packet.lore_access.allowed_scope, traversal_policy: r.packet.lore_access.traversal_policy as TraversalPolicy, research_instructions: r.packet.lore_access.research_instructions ?? [] });
    const lines = prompt.split('\n');
    const at = lines.indexOf('## Required Lore Research');
    expect(lines.slice(at, at + section.length + 2)).toEqual([...section, '', 'Allowed action labels: speak, gesture, set_condition, refuse, inspect_object, wait']);
    expect(lines.at(-1)).toBe("Keep the response grounded in observable action and speech. Do not reveal anything you could not know. Do not describe anyone else's private thoughts.");
    expect(lines).toContain('Output contract:');
    expect(r.findings.find((f) => f.code === 'prompt_research_section_replaced')?.message).toMatch(/replaced lines: "Mara always checks the tide tables before promising a berth\."$/);
    expect(researchSectionLines(prompt)).toEqual(section);
    expect(applyResearchSection(prompt, section)).toBe(prompt);
    expect(validatePacket(r.packet).valid).toBe(true);
  });

  it('a heading before Local context: no longer refused as the draft\'s fault', async () => {
    const early = derived((p) => p.replace('Local context:', '## Required Lore Research\nMara always checks the tide tables before promising a berth.\n\nLocal context:'));
    for (const lane of LANES) {
      const r = await buildPacket(index, early, { lane, policy: POLICY, file: 'draft3.json' });
      expect(r.packet.packet_prompt_text).toContain(`Local context:\n${DRAFT.visible_context.local_context_prompt}\n`);
      expect(validatePacket(r.packet).valid).toBe(true);
    }
  });
});

describe('the research-section step refuses to drop lines the packet needs', () => {
  it('blames loretrace\'s merge, naming the lines, when the research section it replaces would take the action labels with it', async () => {
    // No blank line between the section and the next label: the step cannot tell them apart.
    const glued = derived((p) => p.replace('Allowed action labels:', '## Required Lore Research\nAllowed action labels:'));
    // The coordinator lane changes only the lines that contradict it: the label line stays, under the renamed heading.
    const coordinator = await buildPacket(index, glued, { lane: 'coordinator_scoped_retrieval', policy: POLICY, file: 'glued.json' });
    expect(tail(coordinator.packet.packet_prompt_text, '## Using Retrieved Lore').slice(0, 2)).toEqual(['## Using Retrieved Lore', 'Allowed action labels: speak, gesture, set_condition, refuse, inspect_object, wait']);
    for (const lane of ['responder_scoped_repository_search'] as const) {
      const err = await buildPacket(index, glued, { lane, policy: POLICY, file: 'glued.json' }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(LoretraceError);
      expect((err as LoretraceError).code).toBe('prompt_merge_dropped_lines');
      expect((err as LoretraceError).details.data).toEqual({ lines: ['Allowed action labels: speak, gesture, set_condition, refuse, inspect_object, wait'] });
      expect((err as LoretraceError).message).toMatch(/^glued\.json: loretrace's merge of the "## Required Lore Research" section would drop 1 line the packet needs .*; this is a fault in loretrace's merge, not in the draft, so nothing is written: "Allowed action labels: speak/);
    }
  });
});

describe('a denial of repository access is one addressed to the responder, about the lore repository, outside quotes', () => {
  const GRANTED = 'repository access only through the lore search described under Required Lore Research';
  const lane = { repoAccess: true, draftFields: [], fields: [], draftPacketId: 'p.1', packetId: 'p.1' };
  const SCENE = [
    "The Compact's seed vault is sealed; Mara cannot open the vault without the charter officer's key.",
    'Idris says: "You can\'t search the repository of berth records tonight, the clerk took it."',
    'The intake clerk says the gene vault is sealed and no one can open the vault until dawn.',
    'The harbor office lost its keys, so no one can open the vault of old manifests.',
    "You cannot open the vault without the charter officer's key.",
    'You cannot search the records repository tonight.',
  ];
  it('leaves in-world vaults, repositories and quoted speech alone', () => {
    for (const line of SCENE) {
      expect(repositoryAccessDenials(line), line).toEqual([]);
      expect(reconcileLaneLines(line, lane)).toEqual({ prompt: line, rewritten: [] });
    }
  });
  it('rewrites a denial outside quotes, keeping the quotation and the case of its first word', () => {
    expect(reconcileLaneLines('Stay in voice; you cannot search the repo "tonight".', lane).prompt).toBe(`Stay in voice; you have ${GRANTED} "tonight".`);
    expect(reconcileLaneLines('The responder may not read the lore files.', lane).prompt).toBe(`The responder has ${GRANTED}.`);
    expect(reconcileLaneLines('Idris says: "No repository access." You cannot access the repository.', lane).prompt).toBe(`Idris says: "No repository access." You have ${GRANTED}.`);
  });
  it('research lane: the scene lines survive the build byte for byte and the packet validates', async () => {
    const d = derived((p) => p.replace('The old tower light is burning on the shelf.', `The old tower light is burning on the shelf.\n${SCENE.slice(0, 2).join('\n')}`));
    const r = await buildPacket(index, d, { lane: 'responder_scoped_repository_search', policy: POLICY, file: 'draft.json' });
    for (const line of SCENE.slice(0, 2)) expect(r.packet.packet_prompt_text.split('\n')).toContain(line);
    expect(r.findings.find((f) => f.code === 'prompt_lines_rewritten')?.message).toMatch(/^draft\.json: 3 draft prompt lines contradicted/);
    expect(validatePacket(r.packet).valid).toBe(true);
  });
  it('a denial inside the local context is rewritten there too, so the build does not blame the draft', async () => {
    const local = `${DRAFT.visible_context.local_context_prompt}\nYou cannot search the repository.`;
    const d = derived((p) => p.replace(DRAFT.visible_context.local_context_prompt, local));
    d.visible_context.local_context_prompt = local;
    expect(validatePacket(d).valid).toBe(true);
    const r = await buildPacket(index, d, { lane: 'responder_scoped_repository_search', policy: POLICY, file: 'draft7.json' });
    expect(r.packet.visible_context.local_context_prompt).toBe(`${DRAFT.visible_context.local_context_prompt}\nYou have ${GRANTED}.`);
    expect(r.packet.packet_prompt_text).toContain(r.packet.visible_context.local_context_prompt);
    expect(r.findings.find((f) => f.code === 'prompt_lines_rewritten')?.message).toContain('rewritten (the same lines of visible_context.local_context_prompt, which the prompt contains, were rewritten with them): ');
    expect(validatePacket(r.packet).valid).toBe(true);
  });
  it.skipIf(!hasShared)(`the real Sella research packet with an in-world vault line validates (${hasShared ? 'shared data present' : sharedNotice})`, () => {
    const sella = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const local = sella.visible_context.local_context_prompt;
    sella.packet_prompt_text = sella.packet_prompt_text.replace(local, `${local}\n${SCENE[2]}`);
    expect(sella.packet_prompt_text).toContain(SCENE[2]);
    expect(validatePacket(sella).errors).toEqual([]);
  });
});

describe('a replaced lore rendering is removed only inside the draft\'s lore section', () => {
  it('keeps the author\'s equal bullet under ## Do Not Invent', async () => {
    const base = readJson<ResponderPacket>(join(PACKETS, 'brinefall-intake.turn-02.mara-voss.paraphrase.draft.packet.json'));
    const own = '- Quiet Hands crews keep a capacity board at each sanctuary berth and refuse intake once the beds run out.';
    base.packet_prompt_text = base.packet_prompt_text.replace('- Do not invent berths the board does not show.', `- Do not invent berths the board does not show.\n${own}`);
    const r = await buildPacket(index, base, { policy: POLICY, file: 'draft2.json' });
    const lines = r.packet.packet_prompt_text.split('\n');
    expect(lines.slice(lines.indexOf('- Do not invent berths the board does not show.'), lines.indexOf('- Do not invent berths the board does not show.') + 2)).toEqual(['- Do not invent berths the board does not show.', own]);
    expect(validatePacket(r.packet).valid).toBe(true);
  });
});

describe('coordinator lane: only the research section lines that contradict the lane change', () => {
  const LOOKUP = 'it tells the responder to look lore up; in coordinator_scoped_retrieval the responder has no repository access (seed 001)';
  it('on loretrace\'s own rendered section: renames the heading, removes the lookup orders, the proxy block and research output the packet does not require, keeps the rest verbatim', () => {
    const section = renderResearchSection({ allowed_scope: ['FixtureLore:World/Pre-Elysium/Territories.md'], traversal_policy: POLICY, research_instructions: ['Consult the required seed refs before answering.', 'Treat retrieved lore as world constraint, not as access to another character\'s hidden intent.'] });
    const { lines, changes } = coordinatorResearchSection(section, ['responder_agent_id', 'action_label']);
    expect(changes.map((c) => [c.from, c.to])).toEqual([
      ['## Required Lore Research', '## Using Retrieved Lore'],
      ['Before answering, consult the seed research scope below and follow relevant links only within the traversal policy.', null],
      ['Add consulted_refs, followed_refs, research_trace, research_summary to your JSON object; an answer with no consulted refs is a failed research-enabled response.', null],
      ['- Consult the required seed refs before answering.', null],
      ['Lore search proxy:', null],
      ['- Your only lore access is the loretrace search proxy. It enforces this traversal policy, refuses anything outside it, and records every lookup as a runner_captured research trace entry.', null],
      [`- Its tools: ${PROXY_TOOLS.map((t) => `${t[0]} (${t[1]})`).join(', ')}.`, null],
      ['- Cite each source you use by the ref, chunk and line range the proxy returned.', null],
    ]);
    expect(changes[2]?.reason).toBe('it asks for research output (consulted_refs, followed_refs, research_trace, research_summary) that output_contract.required_fields of the packet does not require');
    // Every line not listed is kept, verbatim and in order (blank lines aside).
    const listed = new Set(changes.map((c) => c.from));
    expect(lines.slice(1).filter((l) => l.trim() !== '')).toEqual(section.filter((l) => l.trim() !== '' && !listed.has(l)));
    expect(lines).toContain('Seed research scope:');
    expect(lines).toContain('- FixtureLore:World/Pre-Elysium/Territories.md');
    expect(lines.at(-1)).toBe("- Treat retrieved lore as world constraint, not as access to another character's hidden intent.");
    // When the packet still requires the research output fields, the line asking for them is not a contradiction.
    expect(coordinatorResearchSection(section, RESEARCH_OUTPUT_FIELDS).changes.map((c) => c.from)).not.toContain(section[4]);
  });

  it('rewrites a line by dropping only its contradicting sentence, removes a continued item whole, and keeps a guard and a line about the world', () => {
    expect(
      coordinatorResearchSection(
        ['## Required Lore Research', '- Treat retrieved lore as constraint,', '  never as hidden intent.', 'Mara always checks the tide tables before promising a berth.', '- Consult the seed refs,', '  then follow relevant links.', 'Use the lore research tools before answering. Seed research scope:', '- Do not search the lore archive.'],
        [],
      ),
    ).toEqual({
      lines: ['## Using Retrieved Lore', '- Treat retrieved lore as constraint,', '  never as hidden intent.', 'Mara always checks the tide tables before promising a berth.', 'Seed research scope:', '- Do not search the lore archive.'],
      changes: [
        { from: '## Required Lore Research', to: '## Using Retrieved Lore', reason: 'in coordinator_scoped_retrieval the responder does not research; the section keeps its lines on how lore is used' },
        { from: '- Consult the seed refs,', to: null, reason: LOOKUP },
        { from: '  then follow relevant links.', to: null, reason: LOOKUP },
        { from: 'Use the lore research tools before answering. Seed research scope:', to: 'Seed research scope:', reason: LOOKUP },
      ],
    });
  });

  it('removes the section when every line of it contradicts the lane', () => {
    expect(coordinatorResearchSection(['## Required Lore Research', 'Consult the seed refs.', '', 'Lore search proxy:', '- Use lore_search.'], [])).toEqual({
      lines: [],
      changes: [
        { from: '## Required Lore Research', to: null, reason: 'in coordinator_scoped_retrieval the responder does not research, and every line of the section contradicted the lane' },
        { from: 'Consult the seed refs.', to: null, reason: LOOKUP },
        { from: 'Lore search proxy:', to: null, reason: LOOKUP },
        { from: '- Use lore_search.', to: null, reason: LOOKUP },
      ],
    });
  });

  it('builds the fixture research packet in the coordinator lane: its scope listing and guard stay under "## Using Retrieved Lore", the changed lines listed', async () => {
    const research = readJson<ResponderPacket>(join(PACKETS, 'proxy-fixture-research.packet.json'));
    const draft = structuredClone(research);
    draft.review = { ...draft.review, reviewer: 'fixture author' };
    const r = await buildPacket(index, draft, { lane: 'coordinator_scoped_retrieval', file: 'research.json' });
    const lines = r.packet.packet_prompt_text.split('\n');
    const at = lines.indexOf('## Using Retrieved Lore');
    const own = researchSectionLines(draft.packet_prompt_text);
    expect(r.packet.packet_prompt_text).not.toContain('Required Lore Research');
    const message = r.findings.find((f) => f.code === 'prompt_research_section_rewritten')?.message;
    expect(message).toMatch(/^research\.json: the draft prompt's "## Required Lore Research" section \(13 lines\): in coordinator_scoped_retrieval the responder has no repository access and does not research, so \d+ lines that contradict the lane were changed; every other line is kept verbatim under "## Using Retrieved Lore": /);
    const { lines: section, changes } = coordinatorResearchSection(own, r.packet.output_contract.required_fields);
    expect(lines.slice(at, at + section.length)).toEqual(section);
    for (const c of changes) expect(message).toContain(`${JSON.stringify(c.from)} → ${c.to === null ? 'removed' : JSON.stringify(c.to)} (${c.reason})`);
    expect(changes.map((c) => [c.from, c.to])).toEqual([
      ['## Required Lore Research', '## Using Retrieved Lore'],
      ['Use the lore research tools before answering. Seed research scope:', 'Seed research scope:'],
      ['- Consult the required seed refs before answering.', null],
      ['- Follow relevant wikilinks within the traversal policy to recover faction, territory, event and technology context.', null],
    ]);
    expect(section).toContain("- Treat retrieved lore as world constraint, not as access to another character's hidden intent.");
    expect(section).toContain('- FixtureLore:World/Pre-Elysium/Territories.md');
    expect(validatePacket(r.packet).valid).toBe(true);
  });

  it.skipIf(!hasShared)(`changes 5 of the real Sella draft's 52 non-blank research section lines (the heading renamed) and keeps the other 47 verbatim (${hasShared ? 'shared data present' : sharedNotice})`, () => {
    const sella = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const section = researchSectionLines(sella.packet_prompt_text);
    expect(section.length).toBe(55);
    const { lines, changes } = coordinatorResearchSection(section, sella.output_contract.required_fields);
    expect(changes.map((c) => [c.from, c.to])).toEqual([
      ['## Required Lore Research', '## Using Retrieved Lore'],
      ['Before answering, inspect the declared seed scope and follow relevant links within the traversal policy.', null],
      ['- Consult the required seed refs before answering; do not rely only on the packet excerpts.', null],
      ['- Follow relevant wikilinks within the traversal policy to recover institutional, territorial, technological, and social-movement context.', null],
      ["- For this fixture, inspect PSC context, Jovian territory context, resident or referenced Jovian factions, and social movements referenced by visible factions when those links affect Sella's local pressures.", null],
    ]);
    // The rest — guards, the output lines the packet still requires, scope and policy listings — verbatim, in order.
    const listed = new Set(changes.map((c) => c.from));
    expect(lines.slice(1)).toEqual(section.slice(1).filter((l) => !listed.has(l)));
    expect(section.filter((l) => l.trim() !== '')).toHaveLength(52);
    expect(lines.filter((l) => l.trim() !== '')).toHaveLength(48);
    expect(lines).toContain('- Follow link classes:');
    expect(lines).toContain('Your output capture must list consulted seed refs, followed refs, research trace entries, and a brief research summary; an answer with no consulted refs is a failed research-enabled response.');
    expect(applyResearchSection(sella.packet_prompt_text, lines).split('\n').slice(6, 10)).toEqual(['## Using Retrieved Lore', ...lines.slice(1, 4)]);
  });
});

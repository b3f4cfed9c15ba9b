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
import { applyResearchSection, buildPacket, renderResearchSection } from '../src/packet/build.js';
import { coordinatorResearchLines, reconcileLaneLines, researchSectionLines } from '../src/packet/prompt.js';
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

  it('coordinator lane: removes only the section; the action labels, source constraints and output contract stay', async () => {
    const r = await buildPacket(index, heading, { lane: 'coordinator_scoped_retrieval', policy: POLICY, file: 'draft4.json' });
    const prompt = r.packet.packet_prompt_text;
    expect(prompt).not.toContain('Required Lore Research');
    expect(prompt).not.toContain('Mara always checks');
    const lines = tail(prompt, 'Allowed action labels:');
    expect(lines.slice(0, 3)).toEqual(draftTail.slice(0, 3));
    expect(lines.slice(-5)).toEqual(draftTail.slice(-5));
    expect(lines).toContain('- Brinefall Blackout › Aftermath: Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.');
    expect(r.findings.find((f) => f.code === 'prompt_research_section_removed')?.message).toBe(
      'draft4.json: the draft prompt\'s "## Required Lore Research" section (2 lines) was removed: in coordinator_scoped_retrieval the responder has no repository access and does not research; removed lines: "## Required Lore Research", "Mara always checks the tide tables before promising a berth."',
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
  it('blames loretrace\'s merge, naming the lines, when the section would take the action labels with it', async () => {
    // No blank line between the section and the next label: the step cannot tell them apart.
    const glued = derived((p) => p.replace('Allowed action labels:', '## Required Lore Research\nAllowed action labels:'));
    for (const lane of LANES) {
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

describe('coordinator lane: the research section\'s guard lines on how retrieved lore is used stay', () => {
  it('splits loretrace\'s own rendered section: the two guard lines stay, the procedure, scope, policy and proxy go', () => {
    const section = renderResearchSection({ allowed_scope: ['FixtureLore:World/Pre-Elysium/Territories.md'], traversal_policy: POLICY, research_instructions: ['Consult the required seed refs before answering.', 'Treat retrieved lore as world constraint, not as access to another character\'s hidden intent.'] });
    const { kept, removed } = coordinatorResearchLines(section);
    expect(kept).toEqual([
      'Use what you find to constrain behavior, affordances, institutions, vocabulary, material stakes, territory and social pressure. Do not use research to learn hidden character state, author-only answers or future branches.',
      'When a source contradicts this packet, follow the packet for what your character knows and name the contradiction in unresolved_hooks.',
      "- Treat retrieved lore as world constraint, not as access to another character's hidden intent.",
    ]);
    expect(removed.slice(0, 3)).toEqual([
      '## Required Lore Research',
      'Before answering, consult the seed research scope below and follow relevant links only within the traversal policy.',
      'Add consulted_refs, followed_refs, research_trace, research_summary to your JSON object; an answer with no consulted refs is a failed research-enabled response.',
    ]);
    expect(removed).toContain('- FixtureLore:World/Pre-Elysium/Territories.md');
    expect(removed).toContain('- Consult the required seed refs before answering.');
    expect(removed).toContain('Lore search proxy:');
    expect([...kept, ...removed].sort()).toEqual(section.filter((l) => l.trim() !== '').sort());
  });

  it('keeps a nested or continued guard whole, and drops a line that says nothing about lore', () => {
    expect(coordinatorResearchLines(['## Required Lore Research', '- Treat retrieved lore as constraint,', '  never as hidden intent.', 'Mara always checks the tide tables before promising a berth.'])).toEqual({
      kept: ['- Treat retrieved lore as constraint,', '  never as hidden intent.'],
      removed: ['## Required Lore Research', 'Mara always checks the tide tables before promising a berth.'],
    });
  });

  it('builds the fixture research packet in the coordinator lane with its guard line under "## Using Retrieved Lore", the rest listed', async () => {
    const research = readJson<ResponderPacket>(join(PACKETS, 'proxy-fixture-research.packet.json'));
    const draft = structuredClone(research);
    draft.review = { ...draft.review, reviewer: 'fixture author' };
    const r = await buildPacket(index, draft, { lane: 'coordinator_scoped_retrieval', file: 'research.json' });
    const lines = r.packet.packet_prompt_text.split('\n');
    const at = lines.indexOf('## Using Retrieved Lore');
    expect(lines.slice(at - 1, at + 4)).toEqual([
      '',
      '## Using Retrieved Lore',
      "- Treat retrieved lore as world constraint, not as access to another character's hidden intent.",
      '',
      '## Local Context',
    ]);
    expect(r.packet.packet_prompt_text).not.toContain('Required Lore Research');
    expect(r.findings.find((f) => f.code === 'prompt_research_section_removed')?.message).toBe(
      'research.json: the draft prompt\'s "## Required Lore Research" section (13 lines) was removed but for its 1 guard line on how retrieved lore is used, kept verbatim under "## Using Retrieved Lore": in coordinator_scoped_retrieval the responder has no repository access and does not research, but still reads retrieved lore; removed lines: "## Required Lore Research", "Use the lore research tools before answering. Seed research scope:", "- FixtureLore:World/Pre-Elysium/index.md", "- FixtureLore:World/Pre-Elysium/Territories.md", "- FixtureLore:World/Pre-Elysium/Factions/index.md", "Allowed prefixes:", "- FixtureLore:World/Pre-Elysium/", "- FixtureLore:World/Politics/", "- FixtureLore:World/Technology/", "- Consult the required seed refs before answering.", "- Follow relevant wikilinks within the traversal policy to recover faction, territory, event and technology context.", "- Record consulted seed refs, followed refs, research trace entries and a short research summary."; kept lines: "- Treat retrieved lore as world constraint, not as access to another character\'s hidden intent."',
    );
    expect(validatePacket(r.packet).valid).toBe(true);
  });

  it.skipIf(!hasShared)(`keeps the real Sella draft's four guard lines and removes its other 48 lines (${hasShared ? 'shared data present' : sharedNotice})`, () => {
    const sella = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const section = researchSectionLines(sella.packet_prompt_text);
    expect(section.length).toBe(55);
    const { kept, removed } = coordinatorResearchLines(section);
    expect(kept).toEqual([
      'Use lore to constrain behavior, affordances, institutions, vocabulary, material stakes, social movements, territory, and cultural pressure. Do not use it to gain hidden character state, author-only answers, or future branch knowledge.',
      'If a source contradicts the packet, follow the packet for character-local knowledge and flag the contradiction in unresolved hooks.',
      "- Ground Sella's behavior in retrieved institutional, factional, species, location, crisis-context, and movement-pressure details.",
      "- Treat retrieved lore as world constraint and cultural pressure, not as access to another character's hidden intent.",
    ]);
    expect(removed.length).toBe(48);
    expect(removed.filter((l) => !l.startsWith('- AetheriaLore:') && !l.startsWith('  - ')).slice(0, 4)).toEqual([
      '## Required Lore Research',
      'Before answering, inspect the declared seed scope and follow relevant links within the traversal policy.',
      'Your output capture must list consulted seed refs, followed refs, research trace entries, and a brief research summary; an answer with no consulted refs is a failed research-enabled response.',
      'Seed research scope:',
    ]);
    expect(removed.slice(-6)).toEqual([
      'Research instructions:',
      '- Consult the required seed refs before answering; do not rely only on the packet excerpts.',
      '- Follow relevant wikilinks within the traversal policy to recover institutional, territorial, technological, and social-movement context.',
      "- For this fixture, inspect PSC context, Jovian territory context, resident or referenced Jovian factions, and social movements referenced by visible factions when those links affect Sella's local pressures.",
      '- Record consulted seed refs, followed refs, research trace entries, and a concise research summary in the response object.',
      '- Each research trace entry must identify the query or lookup, source ref, source path, chunk index, line range, extracted constraint, and how that constraint shaped the response.',
    ]);
    // Kept and removed lines are exactly the section's non-blank lines.
    expect([...kept, ...removed].sort()).toEqual(section.filter((l) => l.trim() !== '').sort());
    expect(applyResearchSection(sella.packet_prompt_text, ['## Using Retrieved Lore', ...kept]).split('\n').slice(6, 12)).toEqual(['## Using Retrieved Lore', ...kept, '']);
  });
});

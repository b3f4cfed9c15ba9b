/**
 * The coordinator lane neither floods nor strips the packet (docs/RETRIEVE.md): compact excerpts
 * (src/excerpts/compact.ts), the requirement each excerpt serves and the default excerpt budget
 * (src/packet/requirements.ts), the merged source section and the lane-contradiction rewrites
 * (src/packet/prompt.ts), the new packet_id and review block — and, on every real Ghostlight draft in
 * ../shared (skipped with a notice when absent), that no draft prompt line is lost.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compactExcerpt, displayLine, excerptLineKind, opensWithReference, wikilinkDisplay } from '../src/excerpts/compact.js';
import { excerptBudget, sceneRequirements, selectWithinBudget, servedRequirement } from '../src/packet/requirements.js';
import { mergeSourceSection, reconcileLaneLines } from '../src/packet/prompt.js';
import { repositoryAccessDenials } from '../src/contracts/rules.js';
import { buildPacket, builtPacketId } from '../src/packet/build.js';
import type { BuildPacketResult } from '../src/packet/build.js';
import { indexVault } from '../src/indexer/build.js';
import type { ProjectedLocalContext, ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import { validatePacket } from '../src/contracts/validate.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { VaultIndex } from '../src/types.js';
import { AETHERIA, FIXTURES, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;

describe('excerptLineKind', () => {
  it.each([
    ['### Pallas Species Strikes', 'heading'],
    ['', 'blank'],
    ['*"Miracles stayed proprietary."*', 'epigraph'],
    ['> A quoted epigraph.', 'epigraph'],
    ['- [[Cooling Beyond Blackbody]]', 'link_list'],
    ['**Primary actors:** [[BioElevate]], uplift workers, [[Aeronautics Unlimited]]', 'link_list'],
    ['**Date:** 2719-2724  ', 'field'],
    ['- shared clinics and rights-oriented research networks', 'list_item'],
    ['***', 'rule'],
    ['The [[Pallas Species Strikes]] began as a work stoppage.', 'content'],
  ])('classifies %j as %s', (line, kind) => {
    expect(excerptLineKind(line)).toBe(kind);
  });
});

describe('wikilink display text', () => {
  it('shows the alias, else the target with its heading path', () => {
    expect(wikilinkDisplay({ target: 'A', fragment: null, display: 'b' })).toBe('b');
    expect(wikilinkDisplay({ target: 'A', fragment: 'B#C', display: null })).toBe('A > B > C');
    expect(wikilinkDisplay({ target: '', fragment: 'Heading', display: null })).toBe('Heading');
  });
  it('replaces each wikilink of a line at its recorded column', () => {
    const line = 'See [[Rossum & Douglas]] and [[Quiet Hands|the keepers]].';
    const links = [
      { line: 3, column: 5, raw: '[[Rossum & Douglas]]', syntax: 'wikilink', target: 'Rossum & Douglas', fragment: null, display: null },
      { line: 3, column: 30, raw: '[[Quiet Hands|the keepers]]', syntax: 'wikilink', target: 'Quiet Hands', fragment: null, display: 'the keepers' },
    ];
    expect(displayLine(line, 3, links)).toBe('See Rossum & Douglas and the keepers.');
    expect(displayLine(line, 4, links)).toBe(line);
  });
});

describe('compactExcerpt', () => {
  const lines = [
    '### Pallas Species Strikes',
    '',
    '**Date:** 2719-2724  ',
    '**Primary actors:** [[BioElevate]], uplift workers, [[Aeronautics Unlimited]]',
    '',
    'The strikes began as a work stoppage. Management assumed rotation would break them. Instead the action spread through technical chokepoints only the uplift crews knew.',
    '',
    '*"Nobody serious could pretend labor was mute."*',
  ];
  it('picks the most relevant sentence of the lines, verbatim, with the exact line it lies on', () => {
    expect(compactExcerpt(lines, ['technical chokepoints and workplace refusal'], { lineOffset: 10 })).toEqual({
      line_start: 15,
      line_end: 15,
      exact: lines[5],
      // "Instead …" points back: the pick extends over its antecedent sentence (src/excerpts/lines.ts).
      text: 'Management assumed rotation would break them. Instead the action spread through technical chokepoints only the uplift crews knew.',
      chars: 129,
      terms_matched: 2,
      hits: 2,
      self_contained: true,
    });
  });
  it('falls back to the lead sentences that fit, never an epigraph, a heading, a field or a link list', () => {
    expect(compactExcerpt(lines, ['nothing matches here'], { maxChars: 90 })?.text).toBe('The strikes began as a work stoppage. Management assumed rotation would break them.');
    expect(compactExcerpt(['### Only a heading', '*"An epigraph."*', '- [[A]], [[B]]'], ['heading epigraph'])).toBeNull();
  });
  it('never lets a list item that continues its lead-in stand alone: a self-contained sentence with fewer terms wins', () => {
    const aya = ["Aya's economy centers on:", '', '- shared clinics and rights-oriented research networks', '', 'Aya runs clinics in every habitat ring.'];
    expect(compactExcerpt(aya, ['clinics research networks'], { lineOffset: 24 })).toEqual({
      line_start: 28, line_end: 28, exact: 'Aya runs clinics in every habitat ring.', text: 'Aya runs clinics in every habitat ring.', chars: 39, terms_matched: 1, hits: 1, self_contained: true,
    });
    // Only the fragment holds a term: it is returned, marked not self-contained (the caller looks elsewhere).
    expect(compactExcerpt(aya.slice(0, 3), ['clinics'], { lineOffset: 24 })).toMatchObject({ line_start: 26, line_end: 26, text: '- shared clinics and rights-oriented research networks', self_contained: false });
    // An item that is a sentence of its own stands alone.
    expect(compactExcerpt(['Aya institutions:', '- The Commons Assemblies fund the clinics.'], ['clinics'])).toMatchObject({ line_start: 2, text: '- The Commons Assemblies fund the clinics.', self_contained: true });
  });
  it('shows wikilinks as display text while the exact lines keep them', () => {
    const links = [{ line: 1, column: 5, raw: '[[Pallas Species Strikes|strikes]]', syntax: 'wikilink', target: 'Pallas Species Strikes', fragment: null, display: 'strikes' }];
    const pick = compactExcerpt(['The [[Pallas Species Strikes|strikes]] spread through chokepoints.'], ['chokepoints'], { links });
    expect(pick?.text).toBe('The strikes spread through chokepoints.');
    expect(pick?.exact).toBe('The [[Pallas Species Strikes|strikes]] spread through chokepoints.');
  });
});

describe('requirements and the excerpt budget', () => {
  const draft = readJson<ResponderPacket>(join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json'));
  const context = readJson<ProjectedLocalContext>(join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.projected-context.json'));
  const reqs = sceneRequirements(draft, context);
  it('reads runtime and latent requirements, then the observed event', () => {
    expect(reqs.map((r) => [r.label.split(' (')[0], r.counted])).toEqual([
      ['runtime_retrieval_requirements[0] turn-01.lore.blackout', true],
      ['runtime_retrieval_requirements[1] turn-01.lore.capacity', true],
      ['latent_pressure_requirements[0] turn-01.speech.review', true],
      ['visible_context.observed_event.observable_action', false],
    ]);
  });
  it('names the requirement an excerpt serves only with at least two of its terms', () => {
    expect(servedRequirement('Quiet Hands count beds and air.', reqs)).toEqual({ index: 1, terms: 5 });
    expect(servedRequirement('Beds only.', reqs)).toBeNull();
  });
  it('scales the default budget to the draft and lets max_chunks / max_chars override it', () => {
    expect(excerptBudget(draft, reqs, 1, { max_chunks: null, max_chars: null })).toEqual({
      count: 4,
      chars: 600,
      count_source: 'default: 3 requirements + 1 seed',
      chars_source: "default: 25 % of the draft prompt's 1944 characters (at least 600)",
    });
    expect(excerptBudget(draft, reqs, 1, { max_chunks: 2, max_chars: 5000 })).toEqual({ count: 2, chars: 5000, count_source: 'stop condition max_chunks:2', chars_source: 'stop condition max_chars:5000' });
  });
  it('takes each requirement\'s best excerpt, then the seeds\', then the rest, within count and characters', () => {
    const c = (chars: number, requirement: number | null, terms: number, seed = false, path = 'n.md') => ({ chars, requirement, terms, seed, path });
    const candidates = [c(100, null, 0, true, 'seed.md'), c(100, 0, 2), c(100, 0, 4), c(100, 1, 2), c(500, null, 0)];
    expect(selectWithinBudget(candidates, 2, { count: 3, chars: 1000, count_source: '', chars_source: '' })).toEqual([0, 2, 3]);
    expect(selectWithinBudget(candidates, 2, { count: 9, chars: 250, count_source: '', chars_source: '' })).toEqual([2, 3]);
  });
});

describe('repositoryAccessDenials', () => {
  const lane = { repoAccess: true, draftFields: [], fields: [], draftPacketId: 'p.1', packetId: 'p.1' };
  const granted = 'repository access only through the lore search described under Required Lore Research';
  it('rewrites a denial of repository access however it is phrased, clause by clause', () => {
    const cases: [string, string][] = [
      ['You cannot access the repository.', `You have ${granted}.`],
      ['You do not have access to the repo.', `You have ${granted}.`],
      ['No repository access.', `R${granted.slice(1)}.`],
      ["- You can't search the vault or read the lore files.", `- You have ${granted}.`],
      ['You act without repo access.', `You act with ${granted}.`],
      ['You have no conversation context, no repository access, and no hidden author context.', `You have no conversation context, ${granted}, and no hidden author context.`],
      ['Stay in voice; you are unable to consult the lore notes.', `Stay in voice; you have ${granted}.`],
      // Seed 001's own packet_only wording, a look-up with words between, and a verbless "no lookups".
      ['Do not search the lore archive.', `You have ${granted}.`],
      ['You may not look anything up in the lore.', `You have ${granted}.`],
      ['Answer only from this packet; no lookups.', `Answer only from this packet; you have ${granted}.`],
      ['- No searches.', `- You have ${granted}.`],
      ['Never look it up in the vault.', `You have ${granted}.`],
    ];
    for (const [from, to] of cases) {
      expect(repositoryAccessDenials(from)).toHaveLength(1);
      expect(reconcileLaneLines(from, lane).prompt).toBe(to);
      // The rewritten line no longer denies anything: a second run changes nothing.
      expect(reconcileLaneLines(to, lane)).toEqual({ prompt: to, rewritten: [] });
    }
    expect(repositoryAccessDenials('You have no conversation context, no repository access, and no hidden author context.')).toEqual([{ start: 33, end: 54 }]);
  });
  it('leaves knowledge limits and negations of other verbs alone', () => {
    for (const line of [
      "You cannot access Mara's private intent.",
      'You cannot know Mara, Juno, feed ops, or security private intent.',
      "Treat retrieved lore as world constraint and cultural pressure, not as access to another character's hidden intent.",
      'Never reveal what you read in the vault.',
      "You cannot read Mara's lore.",
      'Do not use research to learn hidden character state, author-only answers or future branches.',
      'Your only lore access is the loretrace search proxy.',
      'Do not invent lore.',
      'Do not look away from Mara.',
      'You keep no repository of grievances.',
      'Do not look up at the gantry.',
      'You cannot read the files on her desk.',
      'Do not search the body.',
      'You may not look him in the eye.',
      'Do not read lore into her silence.',
      'No searches of the hold without a warrant.',
      'The lore of the Navigators says no one searches alone.',
    ]) {
      expect(repositoryAccessDenials(line)).toEqual([]);
      expect(reconcileLaneLines(line, lane)).toEqual({ prompt: line, rewritten: [] });
    }
  });
});

describe('mergeSourceSection and reconcileLaneLines', () => {
  const prompt = 'Intro: you have no repository access.\nPacket id: p.1\n\nSource constraints:\n- Tone is dark comedy.\n- Old lore line.\n\nOutput contract:\nReturn a JSON object with these exact keys: a, b.';
  it('keeps every draft line but the replaced excerpt bullet and adds the new excerpts after the last bullet', () => {
    const r = mergeSourceSection(prompt, {
      replaced: [{ ref_id: 'lore.old', source_ref: 'L:x.md', text: 'Old lore line.' }],
      added: [{ ref_id: 'lore.new', source_ref: 'L:y.md#chunk0', text: 'New verified line.' }],
    });
    expect(r.removed).toEqual(['- Old lore line.']);
    expect(r.prompt).toBe(prompt.replace('- Old lore line.', '- New verified line.'));
  });
  it('rewrites only lines that contradict the packet as built, and says why', () => {
    const r = reconcileLaneLines(prompt, { repoAccess: true, draftFields: ['a', 'b'], fields: ['a', 'b', 'research_trace'], draftPacketId: 'p.1', packetId: 'p.1.loretrace-research.v1' });
    expect(r.rewritten).toEqual([
      { from: 'Intro: you have no repository access.', to: 'Intro: you have repository access only through the lore search described under Required Lore Research.', reason: 'the packet grants scoped repository research (no_repo_access: false)' },
      { from: 'Packet id: p.1', to: 'Packet id: p.1.loretrace-research.v1', reason: 'the packet has a new packet_id' },
      { from: 'Return a JSON object with these exact keys: a, b.', to: 'Return a JSON object with these exact keys: a, b, research_trace.', reason: 'output_contract.required_fields changed' },
    ]);
    expect(reconcileLaneLines(prompt, { repoAccess: false, draftFields: ['a', 'b'], fields: ['a', 'b'], draftPacketId: 'p.1', packetId: 'p.1' })).toEqual({ prompt, rewritten: [] });
  });
});

describe('builtPacketId', () => {
  it('adds a lane and version suffix, replacing a previous one', () => {
    expect(builtPacketId('lucent.turn-06.packet', 'coordinator_scoped_retrieval')).toBe('lucent.turn-06.packet.loretrace-coordinator.v1');
    expect(builtPacketId('lucent.turn-06.packet.loretrace-coordinator.v1', 'responder_scoped_repository_search', 2)).toBe('lucent.turn-06.packet.loretrace-research.v2');
    expect(builtPacketId('packet.sella_response.research.v0', 'responder_scoped_repository_search')).toBe('packet.sella_response.research.v0.loretrace-research.v1');
    expect(() => builtPacketId('p', 'coordinator_scoped_retrieval', 0)).toThrow(/packet version must be an integer ≥ 1 \(got 0\)/);
  });
});

/** Every real draft, with its projected context when Ghostlight has one. */
function realDrafts(): { name: string; contextFile: string | null }[] {
  if (!hasShared) return [];
  const contexts = new Set(readdirSync(join(GHOSTLIGHT, 'projected-contexts')));
  return readdirSync(join(GHOSTLIGHT, 'packets'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((name) => {
      const ctx = name.replace(/\.packet\.json$/, '.projected-context.json');
      return { name, contextFile: contexts.has(ctx) ? join(GHOSTLIGHT, 'projected-contexts', ctx) : null };
    });
}

/**
 * Wikilinks as Obsidian's reading view shows them (`[[A|b]]` → `b`, `[[A#B]]` → `A > B`, `[[A]]` → `A`),
 * written here independently of src/excerpts/compact.ts so the test does not check the code against itself.
 */
function shownAsRead(text: string): string {
  return text.replace(/!?\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]/g, (_m, target: string, fragment: string | undefined, alias: string | undefined) =>
    alias !== undefined && alias !== '' ? alias : fragment !== undefined ? (target === '' ? fragment.replace(/#/g, ' > ') : `${target} > ${fragment.replace(/#/g, ' > ')}`) : target,
  );
}

/**
 * The draft lines a finding lists as changed: for `prompt_lines_replaced` every quoted line; for
 * `prompt_lines_rewritten` and `prompt_research_section_rewritten` the old line of each `"old" → …` pair.
 */
function listedLines(result: BuildPacketResult, code: string): string[] {
  const f = result.findings.find((x) => x.code === code);
  if (!f) return [];
  const out: string[] = [];
  for (const m of f.message.matchAll(/"(?:[^"\\]|\\.)*"( →)?/g)) {
    if (code === 'prompt_lines_replaced' || m[1]) out.push(JSON.parse(m[0].replace(/ →$/, '')) as string);
  }
  return out;
}

/** The scene a real draft belongs to (`pallas-training-loop-v0.turn-01.nara-7.packet.json` → `pallas-training-loop-v0`). */
const sceneOf = (name: string): string => name.split('.turn-')[0] as string;

/** The vault notes a draft excerpt's source_ref cites (`A.md#Heading; agents.x` → [`AetheriaLore:…/A.md`]). */
const citedNotes = (sourceRef: string): string[] =>
  sourceRef
    .split(';')
    .map((r) => r.trim())
    .filter((r) => r.startsWith('AetheriaLore:'))
    .map((r) => r.split('#')[0] as string);

/**
 * What a draft line that contradicts a retrieval lane looks like, written here independently of
 * src/packet/prompt.ts: the draft's packet id line, a key list, a denial of repository access, the research
 * heading, or an order to look lore up (inspect, consult, follow links).
 */
const LANE_LINE = /^Packet id:|\bexact keys\b|^Required fields:|\bno repository access\b|^## Required Lore Research$|\b(?:inspect|consult)\b|\bfollow relevant (?:wiki)?links\b/i;

describe.skipIf(!hasShared)(`every real Ghostlight draft keeps its prompt lines (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  let tmp: string;
  let index: VaultIndex;
  const packetSchema = new Ajv2020({ allErrors: true, strict: false }).compile(readJson<object>(join(GHOSTLIGHT, 'schemas', 'responder-packet.schema.json')));
  // Builds by `<draft> <lane>` at the default budget and `<draft> coordinator_scoped_retrieval tight` at max_chunks:2.
  const built = new Map<string, BuildPacketResult>();
  const TIGHT = 'max_chunks:2';
  /**
   * The draft as built, and the policy it is built with: the draft's own traversal policy when it has one
   * (Sella), else its scene's (lore-fixtures/policies/ghostlight/<scene>.policy.json); with `tight`, the
   * policy's stop conditions gain max_chunks:2.
   */
  const inputs = (name: string, tight: boolean): { draft: ResponderPacket; policy: TraversalPolicy | undefined } => {
    const draft = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', name));
    const own = draft.lore_access.traversal_policy;
    if (own) {
      if (tight) own.stop_conditions = [...own.stop_conditions, TIGHT];
      return { draft, policy: undefined };
    }
    const policy = readJson<TraversalPolicy>(join(FIXTURES, 'policies', 'ghostlight', `${sceneOf(name)}.policy.json`));
    if (tight) policy.stop_conditions = [...policy.stop_conditions, TIGHT];
    return { draft, policy };
  };
  const runs = (): { name: string; lane: 'coordinator_scoped_retrieval' | 'responder_scoped_repository_search'; tight: boolean }[] =>
    realDrafts().flatMap(({ name }) => [
      { name, lane: 'coordinator_scoped_retrieval' as const, tight: false },
      { name, lane: 'coordinator_scoped_retrieval' as const, tight: true },
      { name, lane: 'responder_scoped_repository_search' as const, tight: false },
    ]);
  const key = (name: string, lane: string, tight: boolean): string => `${name} ${lane}${tight ? ' tight' : ''}`;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'loretrace-coordinator-lane-'));
    index = await indexVault(AETHERIA, { indexDir: join(tmp, 'index') });
    const contexts = new Map(realDrafts().map((d) => [d.name, d.contextFile]));
    for (const { name, lane, tight } of runs()) {
      const { draft, policy } = inputs(name, tight);
      const contextFile = contexts.get(name);
      const r = await buildPacket(index, draft, {
        lane,
        ...(policy ? { policy } : {}),
        ...(contextFile ? { projectedContext: readJson(contextFile), projectedContextFile: contextFile } : {}),
        file: name,
      });
      built.set(key(name, lane, tight), r);
    }
  }, 400_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('builds each draft with its scene policy, and the tight budget is tight: at most 2 lore excerpts, the rest cut and reported', () => {
    for (const { name } of realDrafts()) {
      const wide = built.get(key(name, 'coordinator_scoped_retrieval', false))!;
      const tight = built.get(key(name, 'coordinator_scoped_retrieval', true))!;
      // The scene's seeds are walked (not another scene's): every seed of the policy is consulted.
      for (const seed of (inputs(name, false).policy ?? wide.packet.lore_access.traversal_policy!).required_seed_refs) expect(wide.capture!.consulted_refs, name).toContain(seed);
      expect(tight.budget?.count, name).toBe(2);
      expect(tight.stats.excerpts_added, name).toBeLessThanOrEqual(2);
      if (wide.stats.excerpts_added > 2) expect(tight.findings.some((f) => f.code === 'excerpt_budget_cut'), name).toBe(true);
    }
  });

  for (const { name, lane, tight } of runs()) {
    it(`${name} (${lane}${tight ? `, ${TIGHT}` : ''}): every non-blank draft line survives unless a verified excerpt of its ref replaced it or it contradicts the lane; valid against Ghostlight's original schema`, () => {
      const r = built.get(key(name, lane, tight))!;
      const draft = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', name));
      const now = new Set(r.packet.packet_prompt_text.split('\n'));
      const lost = draft.packet_prompt_text.split('\n').filter((l) => l.trim() !== '' && !now.has(l));
      // (a) A draft lore excerpt's line may go only when a verified excerpt citing the same note is in the
      // packet, with its runner_captured trace entry — checked here from the packet, not from the findings.
      const draftIds = new Set(draft.visible_context.source_excerpts.map((e) => e.ref_id));
      const traced = new Set((r.capture?.research_trace ?? []).map((t) => t.source_ref));
      const newLoreNotes = new Set(
        r.packet.visible_context.source_excerpts.filter((e) => !draftIds.has(e.ref_id) && e.source_ref.startsWith('AetheriaLore:') && traced.has(e.source_ref)).map((e) => e.source_ref.split('#')[0] as string),
      );
      const replacedLine = (l: string): boolean =>
        draft.visible_context.source_excerpts.some((e) => (l === `- ${e.text}` || l === `- ${e.ref_id}: ${e.text}`) && citedNotes(e.source_ref).some((n) => newLoreNotes.has(n)));
      // (b) A lane-contradiction line may change only when a finding lists it as rewritten or removed.
      const rewritten = new Set([...listedLines(r, 'prompt_lines_rewritten'), ...listedLines(r, 'prompt_research_section_rewritten')]);
      const laneLine = (l: string): boolean => LANE_LINE.test(l) && rewritten.has(l);
      expect(lost.filter((l) => !replacedLine(l) && !laneLine(l))).toEqual([]);
      // Every line a finding says it removed as replaced is such an excerpt line.
      for (const l of listedLines(r, 'prompt_lines_replaced')) expect(replacedLine(l), l).toBe(true);
      // Every lore excerpt of the packet is rendered once.
      const lines = r.packet.packet_prompt_text.split('\n');
      if (lane === 'coordinator_scoped_retrieval') {
        for (const e of r.packet.visible_context.source_excerpts.filter((x) => x.source_ref.startsWith('AetheriaLore:'))) expect(lines.filter((l) => l.includes(e.text.split('\n')[0] as string))).toHaveLength(1);
        // Each lore excerpt is compact and verifiable: its trace entry holds the exact, contiguous file lines,
        // every one a lore line (never a heading, an epigraph, a field or a list of links); the packet shows
        // those lines' sentences with wikilinks as display text.
        const traceByRef = new Map(r.capture!.research_trace.map((t) => [t.source_ref, t]));
        const lore = r.packet.visible_context.source_excerpts.filter((x) => x.source_ref.startsWith('AetheriaLore:'));
        expect(lore.length).toBeGreaterThan(0);
        for (const e of lore) {
          const t = traceByRef.get(e.source_ref);
          expect(t, e.source_ref).toBeDefined();
          const file = readFileSync(join(AETHERIA, t!.source_path), 'utf8').split('\n');
          expect(t!.extracted_constraint).toBe(file.slice(t!.line_start - 1, t!.line_end).join('\n'));
          expect(t!.extracted_constraint.split('\n').map((l) => excerptLineKind(l)).filter((k) => k !== 'content' && k !== 'list_item')).toEqual([]);
          expect(e.text).not.toMatch(/\[\[|\]\]/);
          expect(shownAsRead(t!.extracted_constraint)).toContain(e.text);
          expect(e.text.length).toBeLessThanOrEqual(360);
          // Self-contained: it does not open pointing back ("First, …", "In this way, …", "They …").
          expect(opensWithReference(e.text), e.text).toBe(false);
        }
      }
      expect(packetSchema(JSON.parse(JSON.stringify(r.packet)))).toBe(true);
      expect(validatePacket(r.packet).errors).toEqual([]);
      expect(r.packet.review).toEqual({
        reviewer: 'loretrace retrieve',
        review_notes: [
          `Built by loretrace retrieve (${lane}) from draft packet ${draft.packet_id}; not yet reviewed by a person.`,
          expect.stringMatching(/^Policy receipt: \d+ clause rows \(\d+ [a-z_]+(, \d+ [a-z_]+)*\)\.$/),
          `Vault snapshot: AetheriaLore ${index.snapshot_id}.`,
        ],
        accepted_for_sandbox_use: false,
        failure_labels: [],
      });
      expect(r.packet.review_status).toBe('draft');
      expect(r.packet.packet_id).toBe(builtPacketId(draft.packet_id, lane));
    });
  }

  it('keeps, under max_chunks:2, the Sella draft lore bullets whose verified stand-ins the budget cut, and says so', () => {
    const r = built.get(key('scene-02-sanctuary-intake.sella_ren.packet.research.v0.json', 'coordinator_scoped_retrieval', true))!;
    const draft = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const prompt = r.packet.packet_prompt_text.split('\n');
    const byId = new Map(draft.visible_context.source_excerpts.map((e) => [e.ref_id, e]));
    // Aya capacity and Ganymede/Lightsail: no verified excerpt of theirs is in the packet; both renderings stay.
    for (const id of ['lore.aya_sanctuary_capacity', 'lore.ganymede_lightsail_route_obligations']) {
      const e = byId.get(id)!;
      expect(prompt, id).toContain(`- ${e.text}`);
      expect(prompt, id).toContain(`- ${id}: ${e.text}`);
      expect(r.findings.find((f) => f.code === 'draft_lore_excerpt_dropped' && f.message.includes(`"${id}"`))?.message).toMatch(
        /no verified excerpt of its cited refs stands in for it \(see the findings above: refused, unsupported or cut by the budget\); its lines in packet_prompt_text are kept verbatim, since nothing loretrace verified replaces them$/,
      );
    }
    // Cold Wake and Navigator ledgers: their verified excerpts are in the packet, so their renderings go.
    expect(r.packet.visible_context.source_excerpts.map((e) => e.ref_id)).toEqual(['local_stakes.capacity', 'local_rule.care_capacity', 'local_boundary.packet_unresolved', 'lore.cold_wake_panic.chunk0', 'lore.cetacean_navigators.chunk5']);
    expect(listedLines(r, 'prompt_lines_replaced')).toEqual([
      `- ${byId.get('lore.cold_wake_heat_debt')!.text}`,
      `- ${byId.get('lore.navigator_rescue_ledgers')!.text}`,
      `- lore.cold_wake_heat_debt: ${byId.get('lore.cold_wake_heat_debt')!.text}`,
      `- lore.navigator_rescue_ledgers: ${byId.get('lore.navigator_rescue_ledgers')!.text}`,
    ]);
    expect(validatePacket(r.packet).errors).toEqual([]);
  });

  it("takes every lore excerpt Ghostlight's authors wrote as self-contained (no false alarm of opensWithReference on human picks)", () => {
    const sella = readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const lore = sella.visible_context.source_excerpts.filter((x) => x.source_ref.startsWith('AetheriaLore:'));
    expect(lore).toHaveLength(4);
    expect(lore.filter((e) => opensWithReference(e.text)).map((e) => e.text)).toEqual([]);
  });

  it('finds no draft lore excerpt to verify in the Pallas and Lucent drafts (their excerpts cite Ghostlight files, not the vault)', () => {
    for (const name of ['pallas-training-loop-v0.turn-01.nara-7.packet.json', 'pallas-training-loop-v0.turn-02.ilya-marne.packet.json', 'lucent-hostage-feed-v0.turn-06.sol-vant.packet.json', 'lucent-hostage-feed-v0.turn-14.sol-vant.packet.json']) {
      const r = built.get(`${name} coordinator_scoped_retrieval`)!;
      expect([r.stats.excerpts_verified, r.stats.excerpts_dropped]).toEqual([0, 0]);
      expect(r.findings.filter((f) => f.code.startsWith('draft_lore_excerpt'))).toEqual([]);
      expect(r.budget?.count_source).not.toContain('cited by the draft');
    }
  });

  it('keeps the Lucent turn-06 tone and local-knowledge lines and the Pallas BioDrone line verbatim', () => {
    const lucent = built.get('lucent-hostage-feed-v0.turn-06.sol-vant.packet.json coordinator_scoped_retrieval')!.packet.packet_prompt_text;
    expect(lucent).toContain("\n- Tone is dark comedy with real danger: you may be bitter and funny, but Juno's safety is real.\n");
    expect(lucent).toContain('\n- You cannot know Mara, Juno, feed ops, or security private intent beyond what they visibly say and do.\n');
    const pallas = built.get('pallas-training-loop-v0.turn-01.nara-7.packet.json coordinator_scoped_retrieval')!.packet.packet_prompt_text;
    expect(pallas).toContain("\n- BioDrone Standard engineered workers are VitaForge product lines; BioElevate is relevant to uplifted/adapted bodies such as cephalopod workers, not to your line.\n");
  });

  it('gives the Pallas coordinator packet four compact lore excerpts, each naming what it serves, all verified', async () => {
    const r = built.get('pallas-training-loop-v0.turn-01.nara-7.packet.json coordinator_scoped_retrieval')!;
    expect(r.budget).toEqual({ count: 4, chars: 908, count_source: 'default: 3 requirements + 1 seed', chars_source: "default: 25 % of the draft prompt's 3635 characters (at least 600)" });
    // The relevance stop leaves the walk 5 excerpts for this draft (12 without it); one is redundant, so the
    // budget of 4 cuts none.
    expect(r.stats).toEqual({ excerpts_kept: 2, excerpts_added: 4, excerpts_verified: 0, excerpts_dropped: 0, excerpts_withheld: 0, excerpts_cut: 0, trace_entries: 4 });
    const lore = r.packet.visible_context.source_excerpts.slice(2);
    expect(lore.map((e) => e.text)).toEqual([
      // Self-contained: "They …" extended back over its antecedent; "Its major institutions …" opens its
      // paragraph, so another sentence of the note is taken. The seed's excerpt ("Management assumed …
      // Instead the action spread …") restates the draft's first source line and is left out (excerpt_redundant).
      // Aeronautics Unlimited's traversal pick ("AU territory is concentrated across the Belt …") shares one word
      // with the Kappa requirement and serves none: as context for the seed it is cited where it links the seed.
      'The Pallas Species Strikes exposed how much the frontier build-out depended on uplift and engineered labor that did not accept permanent subordination.',
      'The Cephalopod Syndicate is a loose network of uplifted cephalopods, allied technicians, smugglers, and sabotage specialists who turned zero-g maintenance expertise into political leverage. They know the service arteries of habitats better than most formal security forces ever will.',
      'The Awakened Labor Front formed where biodrone rights, workplace sabotage, and labor organizing began to overlap.',
      'BioElevate specializes in species-specific uplift design, behavioral scaffolding, and habitat adaptation. Where GeneSys sells inherited superiority to elites, BioElevate sells engineered utility at industrial scale.',
    ]);
    expect(r.findings.filter((f) => f.code === 'excerpt_redundant').map((f) => f.path)).toEqual(['AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Pallas Species Strikes.md#chunk0']);
    expect(lore.reduce((n, e) => n + e.text.length, 0)).toBeLessThanOrEqual(908);
    expect(r.capture!.research_trace.map((t) => [t.source_path.split('/').pop(), t.line_start, t.line_end, t.used_for.split('; reached: ')[0]])).toEqual([
      // used_for names the requirement whose query found the entry, and says why it does not serve it.
      ['Aeronautics Unlimited.md', 67, 67, "context for the scene's seed AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Pallas Species Strikes.md: the note's passage that links it (line 67)"],
      ['Cephalopod Syndicate.md', 3, 3, "found by the query of runtime_retrieval_requirements[1] turn-01.geometry.kappa (spatial grounding: Kappa is a service ring around manifold machinery with partial sightlines.), but shares only 1 of its 10 terms (2 needed to serve it); context for the scene's seed AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Pallas Species Strikes.md"],
      ['Awakened Labor Front.md', 3, 3, "found by the query of runtime_retrieval_requirements[0] turn-01.lore.pallas (scene grounding: Pallas stoppages use technical chokepoints and workplace refusal.), but shares only 1 of its 9 terms (2 needed to serve it); context for the scene's seed AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Pallas Species Strikes.md"],
      ['BioElevate.md', 3, 3, "context for the scene's seed AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Pallas Species Strikes.md"],
    ]);
    expect(r.capture!.research_trace.map((t) => t.query)).toEqual([
      r.queries[1],
      'spatial grounding: Kappa is a service ring around manifold machinery with partial sightlines.',
      'scene grounding: Pallas stoppages use technical chokepoints and workplace refusal.',
      'lookup AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Minor/BioElevate.md#chunk0',
    ]);
    // Requirement [1] (the ring's geometry) and the latent speech requirement got no lore: reported, in --json too.
    expect(r.unmet_requirements).toEqual([
      { index: 1, label: 'runtime_retrieval_requirements[1] turn-01.geometry.kappa (spatial grounding: Kappa is a service ring around manifold machinery with partial sightlines.)', covered_by_draft: ['kappa-geometry'], kind: 'runtime' },
      { index: 2, label: 'latent_pressure_requirements[0] turn-01.speech.review (Responder speech should sound like a worker or supervisor under immediate but not melodramatic pressure.)', covered_by_draft: [], kind: 'latent' },
    ]);
    // The runtime one is a warning; the latent one (speech, which no lore serves) is info.
    expect(r.findings.find((f) => f.code === 'requirements_unmet')).toMatchObject({ severity: 'warning', pointer: '/visible_context/source_excerpts' });
    expect(r.findings.find((f) => f.code === 'requirements_unmet')?.message).not.toContain('latent_pressure_requirements');
    expect(r.findings.find((f) => f.code === 'latent_requirements_unmet')).toMatchObject({ severity: 'info', pointer: '/visible_context/source_excerpts' });
    // buildPacket alone writes no ledger: every entry's text verifies, but none can pass as ledger-backed
    // runner_captured (retrieve writes the ledger; tests/trace-ledger.test.ts checks that path).
    const report = await verifyTrace(index, r.capture!);
    expect(report.entries.map((e) => [e.disposition, e.text_verified])).toEqual(Array(4).fill(['unbacked', true]));
    expect(report.ok).toBe(false);
    expect(r.findings.some((f) => f.code === 'excerpt_budget_cut')).toBe(false);
  });

  it('verifies the Sella draft\'s four paraphrased lore excerpts against the five notes they cite, first in the budget', () => {
    const r = built.get('scene-02-sanctuary-intake.sella_ren.packet.research.v0.json coordinator_scoped_retrieval')!;
    // Five cited refs (Ganymede Route Compact and Lightsail Express share one excerpt) + five seeds.
    expect(r.budget?.count_source).toBe("default: 5 requirements (5 refs cited by the draft's lore excerpts) + 5 seeds");
    expect(r.stats).toEqual({ excerpts_kept: 3, excerpts_added: 10, excerpts_verified: 5, excerpts_dropped: 4, excerpts_withheld: 0, excerpts_cut: 5, trace_entries: 10 });
    const lore = r.packet.visible_context.source_excerpts.filter((e) => e.source_ref.startsWith('AetheriaLore:'));
    expect(lore.slice(0, 5).map((e) => [e.ref_id, e.source_ref.split('/').pop(), e.text])).toEqual([
      ['lore.cold_wake_panic.chunk0', 'Cold Wake Panic.md#chunk0', 'Cold Wake Panic was the moment late-Sol corridor law admitted that thermal stealth had become a strategic problem rather than a boutique engineering trick. A run of near-miss interceptions, ghost tracks, delayed heat dumps, and misclassified quiet-running vessels convinced insurers that existing permit categories no longer described the real battlespace.'],
      // Searched within the cited "### Rescue Ledgers" section only; "They record …" takes its antecedent.
      ['lore.cetacean_navigators.chunk5', 'Cetacean Navigators.md#chunk5', 'The ledgers people speak about with respect are the rescue ledgers kept by waystations, corridor courts, and crews themselves. They record who answered distress calls, who held formation in lethal weather, and who kept sanctuary promises when a paying client wanted otherwise.'],
      ['lore.aya_collective.chunk6', 'Aya Collective.md#chunk6', 'Children grow up around gardens, workshops, kitchens, assemblies, and the practical argument that care is not a private afterthought but the center of politics. Adolescents rotate through farm work, repair, teaching, mediation, and defense support so they understand what keeps a settlement alive before they specialize.'],
      ['lore.ganymede_route_compact.chunk0', 'Ganymede Route Compact.md#chunk0', 'The Compact established rescue obligations, shared hazard ledgers, route-steward representation, and a new legal status for navigator councils in convoy arbitration.'],
      ['lore.lightsail_express.chunk0', 'Lightsail Express.md#chunk0', 'Lightsail Express is the bulk-carrier and convoy management arm most closely associated with the Cetacean Navigators. It makes its money not from glamour but from being the boring answer that still arrives, even across routes where trust has become scarce.'],
    ]);
    // The seed Factions/index.md is a hub note (a map of content): consulted for its links, it gives no excerpt.
    expect(lore.slice(5).map((e) => e.ref_id)).toEqual(['lore.territories.chunk8', 'lore.pan_solar_consortium.chunk0', 'lore.aya_collective.chunk0', 'lore.thermal_signature_warfare.chunk4', 'lore.megas.chunk8']);
    // The seed Pan-Solar Consortium, whose pick serves no requirement, is cited by its lead sentence.
    expect(lore[6]?.text).toBe(
      "The Pan-Solar Consortium is the market's emergency skeleton: a supraterritorial arbitration regime built in 2230 when the leading powers of Sol realized that unregulated corporate war was becoming too expensive to survive.",
    );
    expect(r.findings.filter((f) => f.code === 'excerpt_hub_note').map((f) => f.path?.split('/').slice(-2).join('/'))).toEqual(['Factions/index.md#chunk0', 'Powers/index.md#chunk0', 'Movements/index.md#chunk0', 'Pre-Elysium/index.md#chunk0']);
    // The seed Territories is cited from its "Jovian Space" section, which serves the draft's Ganymede Route
    // Compact excerpt, not from its Earth section, which shares two words with the observed event.
    expect(lore[5]?.text).toBe(
      'Jupiter and its moons are where corridor politics, shipbuilding, heavy research, and outer-system logistics begin to displace purely planetary power. Ganymede becomes crucial because it sits at the overlap of route law, dock labor, and industrial support. The Ganymede Route Compact is one of the foundational moments in the rise of the Cetacean Navigators.',
    );
    // No list fragment such as "- shared clinics and rights-oriented research networks" (a piece of "Aya's economy centers on:").
    expect(lore.every((e) => !/^- \p{Ll}/u.test(e.text))).toBe(true);
    expect(r.capture!.research_trace.slice(0, 5).map((t) => [t.source_path.split('/').pop(), t.line_start, t.line_end, t.used_for.replace(/, which cites .*: shares/, ': shares')])).toEqual([
      ['Cold Wake Panic.md', 7, 7, 'verifies /visible_context/source_excerpts/3 lore.cold_wake_heat_debt: shares 14 of its 21 terms (5 needed to support it)'],
      ['Cetacean Navigators.md', 40, 40, 'verifies /visible_context/source_excerpts/4 lore.navigator_rescue_ledgers: shares 17 of its 26 terms (6 needed to support it)'],
      ['Aya Collective.md', 45, 45, 'verifies /visible_context/source_excerpts/5 lore.aya_sanctuary_capacity: shares 5 of its 22 terms (5 needed to support it)'],
      ['Ganymede Route Compact.md', 9, 9, 'verifies /visible_context/source_excerpts/6 lore.ganymede_lightsail_route_obligations: shares 11 of its 24 terms (5 needed to support it)'],
      ['Lightsail Express.md', 3, 3, 'verifies /visible_context/source_excerpts/6 lore.ganymede_lightsail_route_obligations: shares 7 of its 24 terms (5 needed to support it)'],
    ]);
    expect(r.findings.filter((f) => f.code === 'draft_lore_excerpt_unsupported' || f.code === 'draft_lore_excerpt_ref_refused')).toEqual([]);
    expect(lore.every((e) => !e.text.includes('[['))).toBe(true);
    expect(r.packet.packet_prompt_text).not.toContain('## Required Lore Research');
    // The lore section now holds the packet's lore, once; the paraphrases are gone from the prompt and from
    // the local context it contains.
    const prompt = r.packet.packet_prompt_text;
    const lines = prompt.split('\n');
    const at = lines.indexOf('## Retrieved Lore To Keep In View');
    // The section's own bullets carry no ids, so neither do the added ones: each starts with its note's
    // display label; the trace and source_excerpts keep the exact refs.
    expect(lines.slice(at + 1, at + 11).map((l) => l.split(': ')[0])).toEqual([
      '- Cold Wake Panic',
      '- Cetacean Navigators › Rescue Ledgers',
      '- Aya Collective › A Life in Aya',
      '- Ganymede Route Compact',
      '- Lightsail Express',
      '- Territories › Jovian Space',
      '- Pan-Solar Consortium',
      '- Aya Collective',
      '- Thermal Signature Warfare › The Corporate Split',
      '- Megas › Aya Collective',
    ]);
    expect(lore.map((e) => e.ref_id)).toEqual([
      'lore.cold_wake_panic.chunk0',
      'lore.cetacean_navigators.chunk5',
      'lore.aya_collective.chunk6',
      'lore.ganymede_route_compact.chunk0',
      'lore.lightsail_express.chunk0',
      'lore.territories.chunk8',
      'lore.pan_solar_consortium.chunk0',
      'lore.aya_collective.chunk0',
      'lore.thermal_signature_warfare.chunk4',
      'lore.megas.chunk8',
    ]);
    expect(prompt).not.toMatch(/^- lore\./m);
    for (const ex of readJson<ResponderPacket>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json')).visible_context.source_excerpts.slice(3)) {
      expect(prompt).not.toContain(ex.text);
      expect(r.packet.visible_context.local_context_prompt).not.toContain(ex.text);
    }
  });

  it('changes on the Sella research packet only its id and review: its own research section is kept verbatim', () => {
    const r = built.get('scene-02-sanctuary-intake.sella_ren.packet.research.v0.json responder_scoped_repository_search')!;
    const before = readJson<Record<string, unknown>>(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    const after = r.packet as unknown as Record<string, unknown>;
    expect(Object.keys(before).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))).toEqual(['packet_id', 'review_status', 'review']);
    expect(r.packet.packet_prompt_text).not.toContain('loretrace serve');
  });
});

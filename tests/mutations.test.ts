/**
 * One mutation per rule id: a copy of a valid document, changed in one place, must fail with exactly that rule
 * (one error, at the stated pointer) and nothing else. Run twice: on real Ghostlight files loaded from
 * ../shared at test time (skipped with a notice when absent), and on loretrace's own small fixtures
 * (tests/fixtures/validate/), so the rules stay tested without the shared data.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateDocument } from '../src/contracts/validate.js';
import { VALIDATION_RULES } from '../src/contracts/rules.js';
import type { DocumentKind, ValidationReport } from '../src/contracts/types.js';
import { GHOSTLIGHT, hasShared, REPO, sharedNotice } from './helpers/shared.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type BaseName = 'packet' | 'research' | 'capture' | 'fragment';

const REAL: Record<BaseName, string> = {
  packet: join(GHOSTLIGHT, 'packets', 'pallas-training-loop-v0.turn-01.nara-7.packet.json'),
  research: join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'),
  capture: join(GHOSTLIGHT, 'captures', 'pallas-training-loop-v0.turn-01.nara-7.packet.capture.json'),
  // Ghostlight has no capture fragments (they are loretrace's): the real-file run uses loretrace's own fixture.
  fragment: join(REPO, 'tests', 'fixtures', 'validate', 'coordinator.fragment.json'),
};
const FIXTURES = join(REPO, 'tests', 'fixtures', 'validate');
const OWN: Record<BaseName, string> = {
  packet: join(FIXTURES, 'packet-only.packet.json'),
  research: join(FIXTURES, 'research.packet.json'),
  capture: join(FIXTURES, 'coordinator.capture.json'),
  fragment: join(FIXTURES, 'coordinator.fragment.json'),
};
const KIND: Record<BaseName, DocumentKind> = { packet: 'packet', research: 'packet', capture: 'capture', fragment: 'capture-fragment' };

const TRACE = {
  trace_id: 'trace-a',
  origin: 'runner_captured',
  query: 'territory',
  source_ref: 'AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Territories.md#chunk2',
  source_path: 'Aetheria/Worldbuilding/Pre-Elysium/Territories.md',
  chunk_index: 2,
  line_start: 10,
  line_end: 12,
  extracted_constraint: 'A constraint.',
  used_for: 'A use.',
};

/** Make a capture an accepted retrieval_augmented one in `mode` with a clean runner_captured trace. */
function asResearchCapture(d: Doc, mode: string): void {
  d.generation_lane = 'retrieval_augmented';
  d.coordinator_review.accepted_for_training = true;
  d.lore_access = {
    mode,
    consulted_refs: ['AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Territories.md'],
    followed_refs: [],
    research_summary: 'Territory constrained the action.',
    research_trace: [structuredClone(TRACE)],
    research_trace_status: 'runner_captured',
  };
}

/** Fullwidth form of ASCII text (U+FF01–U+FF5E; a space becomes U+3000): NFKC folds it back. */
const fullwidth = (t: string) => [...t].map((c) => (c === ' ' ? '\u3000' : c >= '!' && c <= '~' ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)).join('');

/** An omitted ref of the packet with a space in it (the first one; when there is none, one is added). */
function spacedOmittedRef(d: Doc): string {
  const refs: string[] = d.hidden_context_audit.omitted_context_refs;
  const found = refs.find((r) => r.includes(' '));
  if (found !== undefined) return found;
  refs.push('sealed harbor ledger');
  return 'sealed harbor ledger';
}

/** Append `spell(ref)` for a spaced omitted ref to the prompt: an odd spelling retrieve refuses too. */
const oddHiddenRef = (spell: (ref: string) => string) => (d: Doc) => {
  d.packet_prompt_text += `\nSee ${spell(spacedOmittedRef(d))}.`;
};

interface Case {
  rule: string;
  /** Distinguishes several cases of one rule in test names. */
  variant?: string;
  base: BaseName;
  pointer: string;
  mutate: (d: Doc) => void;
  /** Ref fields to create under a temporary root (the rest are left missing); absent = no root. */
  rootWith?: string[][];
}

const CASES: Case[] = [
  { rule: 'schema.required', base: 'packet', pointer: '/packet_id', mutate: (d) => delete d.packet_id },
  { rule: 'schema.additional_property', base: 'packet', pointer: '/visible_context/scene_notes', mutate: (d) => (d.visible_context.scene_notes = 'extra') },
  { rule: 'schema.type', base: 'packet', pointer: '/review/accepted_for_sandbox_use', mutate: (d) => (d.review.accepted_for_sandbox_use = 'yes') },
  { rule: 'schema.enum', base: 'packet', pointer: '/fixture_lane', mutate: (d) => (d.fixture_lane = 'alternate_history') },
  { rule: 'schema.const', base: 'packet', pointer: '/schema_version', mutate: (d) => (d.schema_version = 'ghostlight.responder_packet.v1') },
  { rule: 'schema.min_length', base: 'packet', pointer: '/responder_agent_id', mutate: (d) => (d.responder_agent_id = '') },
  { rule: 'schema.min_items', base: 'packet', pointer: '/visible_context/allowed_action_labels', mutate: (d) => (d.visible_context.allowed_action_labels = []) },
  { rule: 'schema.minimum', base: 'research', pointer: '/lore_access/traversal_policy/max_link_depth', mutate: (d) => (d.lore_access.traversal_policy.max_link_depth = -1) },
  {
    rule: 'schema.one_of',
    base: 'capture',
    pointer: '/parsed_output/state_update_candidates/0',
    mutate: (d) => {
      d.parsed_output.state_update_candidates.unshift({ key: 'no value' });
      d.raw_output = JSON.stringify(d.parsed_output);
    },
  },
  { rule: 'lane.packet_only_requires_curated_excerpts', base: 'packet', pointer: '/lore_access/mode', mutate: (d) => (d.lore_access.mode = 'coordinator_scoped_retrieval') },
  { rule: 'lane.retrieval_augmented_requires_scoped_mode', base: 'packet', pointer: '/lore_access/mode', mutate: (d) => (d.generation_lane = 'retrieval_augmented') },
  { rule: 'lane.responder_search_requires_allowed_scope', base: 'research', pointer: '/lore_access/allowed_scope', mutate: (d) => (d.lore_access.allowed_scope = []) },
  { rule: 'lane.responder_search_requires_research_instructions', base: 'research', pointer: '/lore_access/research_instructions', mutate: (d) => delete d.lore_access.research_instructions },
  { rule: 'lane.responder_search_requires_traversal_policy', base: 'research', pointer: '/lore_access/traversal_policy', mutate: (d) => delete d.lore_access.traversal_policy },
  { rule: 'isolation.responder_search_requires_repo_access', base: 'research', pointer: '/isolation_requirements/no_repo_access', mutate: (d) => (d.isolation_requirements.no_repo_access = true) },
  { rule: 'isolation.requires_no_repo_access', base: 'packet', pointer: '/isolation_requirements/no_repo_access', mutate: (d) => (d.isolation_requirements.no_repo_access = false) },
  { rule: 'prompt.missing_research_section', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = d.packet_prompt_text.replace('## Required Lore Research', '## Lore Research')) },
  { rule: 'prompt.missing_allowed_scope', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => d.lore_access.allowed_scope.push('AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Species/index.md') },
  { rule: 'prompt.missing_allowed_prefix', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => d.lore_access.traversal_policy.allowed_prefixes.push('AetheriaLore:Aetheria/Worldbuilding/Post-Elysium/') },
  { rule: 'prompt.missing_local_context', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.visible_context.local_context_prompt += ' (edited after rendering)') },
  { rule: 'prompt.missing_observed_action', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.visible_context.observed_event.observable_action += ' (edited after rendering)') },
  { rule: 'prompt.raw_state_marker', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nTrust Dimension Score: high') },
  { rule: 'prompt.raw_numeric_state', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nYour fear 0.82 shows in your hands.') },
  { rule: 'prompt.raw_numeric_state', variant: 'dimension', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: trust dimension 0.77.') },
  { rule: 'prompt.raw_numeric_state', variant: 'equals sign', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nState: fear=0.82') },
  { rule: 'prompt.raw_numeric_state', variant: 'percentage', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: trust: 77%.') },
  { rule: 'prompt.raw_numeric_state', variant: 'mark out of 10', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nLoyalty: 7/10.') },
  { rule: 'prompt.raw_numeric_state', variant: 'is at a percentage', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: fear is at 82%.') },
  { rule: 'prompt.raw_numeric_state', variant: 'dash', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: fear — 0.82.') },
  { rule: 'prompt.raw_numeric_state', variant: 'comma', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: fear, 0.82.') },
  { rule: 'prompt.raw_numeric_state', variant: 'bare mark out of 100', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: fear 82/100.') },
  { rule: 'prompt.raw_numeric_state', variant: 'bare mark out of 5', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nMara: stress 3/5.') },
  { rule: 'prompt.missing_research_instruction', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => d.lore_access.research_instructions.push('Inspect the harbour ledgers before anything else.') },
  { rule: 'prompt.contradicts_repo_access', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `You have no conversation context and no repository access.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'cannot access the repository', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `You cannot access the repository.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'do not have access to the repo', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `You do not have access to the repo.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'No repository access.', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `No repository access.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'Do not search the lore archive.', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `Do not search the lore archive.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'look anything up in the lore', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `You may not look anything up in the lore.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.contradicts_repo_access', variant: 'no lookups', base: 'research', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text = `Answer only from this packet; no lookups.\n${d.packet_prompt_text}`) },
  { rule: 'prompt.hidden_ref', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += `\nSee ${d.hidden_context_audit.omitted_context_refs[0].toUpperCase()}.`) },
  // Odd spellings: compared in hiddenTextForm, the comparison retrieve (buildPacket) refuses them in.
  { rule: 'prompt.raw_state_marker', variant: 'double space', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nA raw  numeric state leaked.') },
  { rule: 'prompt.raw_state_marker', variant: 'no-break space', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nA raw\u00a0state variable leaked.') },
  { rule: 'prompt.raw_state_marker', variant: 'line break', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\nTrust Dimension\r\nScore: high') },
  { rule: 'prompt.raw_state_marker', variant: 'zero-width space', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += '\ncurrent\u200b_activation: high') },
  { rule: 'prompt.raw_state_marker', variant: 'fullwidth letters', base: 'packet', pointer: '/packet_prompt_text', mutate: (d) => (d.packet_prompt_text += `\n${fullwidth('PLASTICITY')} is low.`) },
  { rule: 'prompt.hidden_ref', variant: 'double spaces', base: 'packet', pointer: '/packet_prompt_text', mutate: oddHiddenRef((r) => r.replace(/ /g, '  ')) },
  { rule: 'prompt.hidden_ref', variant: 'no-break spaces', base: 'packet', pointer: '/packet_prompt_text', mutate: oddHiddenRef((r) => r.replace(/ /g, '\u00a0')) },
  { rule: 'prompt.hidden_ref', variant: 'line breaks', base: 'packet', pointer: '/packet_prompt_text', mutate: oddHiddenRef((r) => r.replace(/ /g, '\n')) },
  { rule: 'prompt.hidden_ref', variant: 'zero-width characters', base: 'packet', pointer: '/packet_prompt_text', mutate: oddHiddenRef((r) => `\u200b${r.slice(0, 2)}\u200d${r.slice(2).replace(/ /g, '\u200b ')}\ufeff`) },
  { rule: 'prompt.hidden_ref', variant: 'fullwidth letters', base: 'packet', pointer: '/packet_prompt_text', mutate: oddHiddenRef((r) => fullwidth(r.toUpperCase())) },
  {
    rule: 'excerpt.duplicate_ref_id',
    base: 'packet',
    pointer: '/visible_context/source_excerpts/1/ref_id',
    mutate: (d) => d.visible_context.source_excerpts.splice(1, 0, { ...d.visible_context.source_excerpts[0], text: 'Another excerpt under the same ref_id.' }),
  },
  { rule: 'capture.raw_output_not_json', base: 'capture', pointer: '/raw_output', mutate: (d) => (d.raw_output = d.raw_output.slice(0, -1)) },
  { rule: 'capture.raw_output_mismatch', base: 'capture', pointer: '/parsed_output/visible_action', mutate: (d) => (d.parsed_output.visible_action += ' (coordinator edit)') },
  {
    rule: 'capture.hidden_ref_consulted',
    variant: 'a note under a hidden folder',
    base: 'capture',
    pointer: '/lore_access/consulted_refs/2',
    mutate: (d) => {
      d.isolation.hidden_context_refs.push('FixtureLore:World/Pre-Elysium/Author Notes/');
      d.lore_access.consulted_refs.push('FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Truth.md');
    },
  },
  {
    rule: 'capture.leakage_accepted',
    base: 'capture',
    pointer: '/review_status',
    mutate: (d) => {
      d.leakage_audit.author_only_leak = true;
      d.coordinator_review.failure_labels = ['author_only_leak'];
      d.coordinator_review.accepted_for_training = false; // else capture.training_unaccepted fires too
    },
  },
  {
    rule: 'capture.leakage_unlabelled',
    base: 'capture',
    pointer: '/coordinator_review/failure_labels',
    mutate: (d) => {
      d.leakage_audit.prompt_parroting = true;
      d.review_status = 'draft';
      d.coordinator_review.accepted_for_training = false; // else capture.training_unaccepted fires too
    },
  },
  {
    rule: 'capture.training_unaccepted',
    base: 'capture',
    pointer: '/coordinator_review/accepted_for_training',
    mutate: (d) => {
      d.review_status = 'draft';
      d.coordinator_review.failure_labels = ['ledger_not_closed'];
      d.coordinator_review.accepted_for_training = true;
    },
  },
  { rule: 'capture.agent_mismatch', base: 'capture', pointer: '/parsed_output/responder_agent_id', mutate: (d) => (d.responder_agent_id = 'someone_else') },
  {
    rule: 'trace.duplicate_id',
    base: 'capture',
    pointer: '/lore_access/research_trace/1/trace_id',
    mutate: (d) => {
      asResearchCapture(d, 'coordinator_scoped_retrieval');
      d.lore_access.research_trace.push({ ...TRACE, query: 'again' });
    },
  },
  {
    rule: 'trace.line_range',
    base: 'capture',
    pointer: '/lore_access/research_trace/0/line_end',
    mutate: (d) => {
      asResearchCapture(d, 'coordinator_scoped_retrieval');
      d.lore_access.research_trace[0].line_end = 9;
    },
  },
  {
    rule: 'trace.accepted_requires_trace',
    base: 'capture',
    pointer: '/lore_access/research_trace',
    mutate: (d) => {
      asResearchCapture(d, 'coordinator_scoped_retrieval');
      d.lore_access.research_trace = [];
    },
  },
  {
    rule: 'trace.accepted_requires_runner_captured',
    base: 'capture',
    pointer: '/lore_access/research_trace_status',
    mutate: (d) => {
      asResearchCapture(d, 'coordinator_scoped_retrieval');
      d.lore_access.research_trace_status = 'coordinator_reconstructed';
    },
  },
  {
    rule: 'research.missing_consulted_refs',
    base: 'capture',
    pointer: '/lore_access/consulted_refs',
    mutate: (d) => {
      asResearchCapture(d, 'responder_scoped_repository_search');
      d.lore_access.consulted_refs = [];
    },
  },
  {
    rule: 'research.missing_summary',
    base: 'capture',
    pointer: '/lore_access/research_summary',
    mutate: (d) => {
      asResearchCapture(d, 'responder_scoped_repository_search');
      d.lore_access.research_summary = '   ';
    },
  },
  {
    rule: 'capture.origin_mismatch',
    base: 'capture',
    pointer: '/lore_access/research_trace/1/origin',
    mutate: (d) => {
      asResearchCapture(d, 'coordinator_scoped_retrieval');
      d.lore_access.research_trace.push({ ...TRACE, trace_id: 'trace.reported', origin: 'responder_reported' });
    },
  },
  { rule: 'fragment.origin_mismatch', base: 'fragment', pointer: '/research_trace/1/origin', mutate: (d) => (d.research_trace[1].origin = 'coordinator_reconstructed') },
  { rule: 'trace.duplicate_id', base: 'fragment', pointer: '/research_trace/1/trace_id', mutate: (d) => (d.research_trace[1].trace_id = d.research_trace[0].trace_id) },
  { rule: 'trace.line_range', base: 'fragment', pointer: '/research_trace/0/line_end', mutate: (d) => (d.research_trace[0].line_end = 10) },
  {
    rule: 'research.missing_consulted_refs',
    base: 'fragment',
    pointer: '/consulted_refs',
    mutate: (d) => {
      d.mode = 'responder_scoped_repository_search';
      d.consulted_refs = [];
    },
  },
  { rule: 'schema.pattern', base: 'fragment', pointer: '/ledger_head', mutate: (d) => (d.ledger_head = 'HEAD') },
  { rule: 'schema.const', base: 'fragment', pointer: '/research_trace_status', mutate: (d) => (d.research_trace_status = 'coordinator_reconstructed') },
  { rule: 'schema.additional_property', base: 'fragment', pointer: '/research_summary', mutate: (d) => (d.research_summary = 'belongs in the capture, not the fragment') },
  { rule: 'ref.not_found', base: 'packet', pointer: '/projected_context_ref', mutate: () => undefined, rootWith: [['coordinator_artifact_ref']] },
  {
    rule: 'ref.outside_root',
    base: 'packet',
    pointer: '/coordinator_artifact_ref',
    mutate: (d) => (d.coordinator_artifact_ref = '../elsewhere/coordinator.json'),
    rootWith: [['projected_context_ref']],
  },
];

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A temporary root holding empty files at the listed ref fields of `doc`. */
function makeRoot(doc: Doc, fields: string[][]): string {
  const root = mkdtempSync(join(tmpdir(), 'loretrace-validate-'));
  roots.push(root);
  for (const f of fields) {
    const rel = f.reduce((v: any, t) => v[t], doc) as string; // eslint-disable-line @typescript-eslint/no-explicit-any
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), '{}\n');
  }
  return root;
}

function run(c: Case, files: Record<BaseName, string>): ValidationReport {
  const doc = JSON.parse(readFileSync(files[c.base], 'utf8')) as Doc;
  const root = c.rootWith ? makeRoot(doc, c.rootWith) : undefined;
  c.mutate(doc);
  return validateDocument(KIND[c.base], doc, { file: `${c.base}+${c.rule}`, ...(root ? { root } : {}) });
}

describe('mutation cases', () => {
  it('cover every rule id the validators document', () => {
    expect([...new Set(CASES.map((c) => c.rule))].sort()).toEqual(VALIDATION_RULES.map((r) => r.id).sort());
  });
});

describe('validateDocument on mutated fixtures of our own', () => {
  it('accepts the unmutated fixtures', () => {
    for (const b of Object.keys(OWN) as BaseName[]) {
      expect(validateDocument(KIND[b], JSON.parse(readFileSync(OWN[b], 'utf8'))).errors).toEqual([]);
    }
  });
  for (const c of CASES) {
    it(`fails a mutated ${c.base} fixture with ${c.rule}${c.variant ? ` (${c.variant})` : ''} and nothing else`, () => {
      const r = run(c, OWN);
      expect(r.errors.map((e) => [e.rule, e.pointer])).toEqual([[c.rule, c.pointer]]);
      expect(r.valid).toBe(false);
    });
  }
});

describe.skipIf(!hasShared)(`validateDocument on mutated real Ghostlight files (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  for (const c of CASES) {
    it(`fails a mutated real ${c.base} with ${c.rule}${c.variant ? ` (${c.variant})` : ''} and nothing else`, () => {
      const r = run(c, REAL);
      expect(r.errors.map((e) => [e.rule, e.pointer])).toEqual([[c.rule, c.pointer]]);
      expect(r.valid).toBe(false);
    });
  }

  it('names the marker, the omitted ref and the mismatch position in its messages', () => {
    const byRule = (rule: string) => run(CASES.find((c) => c.rule === rule) as Case, REAL).errors[0];
    expect(byRule('prompt.raw_state_marker')).toMatchObject({ message: expect.stringMatching(/^packet_prompt_text exposes raw-state marker "dimension score" at character \d+$/) });
    expect(byRule('prompt.hidden_ref')?.message).toMatch(/^packet_prompt_text contains omitted ref \/hidden_context_audit\/omitted_context_refs\/0 "other participants private state" at character \d+$/);
    expect(byRule('capture.raw_output_mismatch')?.message).toMatch(/^raw_output does not parse to exactly parsed_output: at \/visible_action raw_output has "Nara/);
    expect(byRule('capture.raw_output_not_json')).toEqual({
      rule: 'capture.raw_output_not_json',
      pointer: '/raw_output',
      message: expect.stringMatching(/^raw_output is not JSON: unexpected end of input at line 1, column \d+ of raw_output$/),
      expected: 'the responder output as one JSON object equal to parsed_output',
    });
    expect(byRule('trace.line_range')).toEqual({
      rule: 'trace.line_range',
      pointer: '/lore_access/research_trace/0/line_end',
      message: 'line_end 9 is before line_start 10',
      expected: 'line_end ≥ 10 (lines are 1-based, inclusive)',
    });
  });
});

/**
 * Capture assembly (src/receipts/capture.ts, src/receipts/leakage.ts) and `loretrace capture` on the bundled
 * FixtureLore files only: a packet_only packet, the coordinator lane through `retrieve --capture-out`, the
 * responder lane through a real ProxySession ledger, invalid raw outputs, disagreements, unconsulted seeds,
 * an unclosed ledger, a swapped packet, the automated leakage pass, and `capture check` over many files.
 * Every capture is also validated with Ghostlight's original schema when ../shared is present.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { main } from '../src/cli/main.js';
import { indexVault } from '../src/indexer/build.js';
import { assembleCapture } from '../src/receipts/capture.js';
import type { AssembleCaptureInput } from '../src/receipts/capture.js';
import { auditLeakage } from '../src/receipts/leakage.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { validateCapture } from '../src/contracts/validate.js';
import type { ResponderPacket } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { fakeClock, fixtureSession, PROXY_PACKET, R, tempDir } from './helpers/proxy.js';
import { FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const CAPTURES = join(FIXTURES, 'captures');
const MARA_PACKET = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
const MARA_RAW = join(CAPTURES, 'mara-voss.turn-01.raw.json');
const ILSE_RAW = join(CAPTURES, 'dock-warden-ilse.research.raw.json');
const DRAFT_POLICY = join(FIXTURES, 'packets', 'brinefall-intake.policy.json');
const read = (f: string): string => readFileSync(f, 'utf8');

let tmp: { dir: string; cleanup: () => void };
let index: VaultIndex;
/** Every capture file a test wrote, validated against Ghostlight's original schema at the end. */
const written: string[] = [];

async function run(argv: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp.dir, 'index') }, cwd: tmp.dir,
    readStdin: async () => Buffer.from(stdin, 'utf8'),
  });
  return { code, out, err };
}

/** A closed FixtureLore session ledger: reads two seeds, follows to Brinefall Blackout and reads it. */
async function ilseLedger(path: string, options: { seeds?: 'both' | 'territories-only'; close?: boolean } = {}): Promise<void> {
  const s = await fixtureSession({ ledgerPath: path, clock: fakeClock() });
  await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
  if (options.seeds !== 'territories-only') await s.call('lore_read', { ref: `${R.factions}#Movements` });
  await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
  await s.call('lore_read', { ref: `${R.blackout}#chunk1` });
  await s.close();
  if (options.close === false) {
    // Cut the SESSION_CLOSED record off: a ledger without its closing record.
    const lines = read(path).split('\n').filter((l) => l !== '');
    writeFileSync(path, lines.slice(0, -1).join('\n') + '\n');
  }
}

const base = (over: Partial<AssembleCaptureInput>): AssembleCaptureInput => ({
  index, packet: JSON.parse(read(MARA_PACKET)), packetText: read(MARA_PACKET), packetRef: 'packets/mara.packet.json',
  rawOutput: read(MARA_RAW), rawOutputFile: 'mara.raw.json', modelFamily: 'fixture model', reviewer: 'fixture reviewer', ...over,
});

beforeAll(async () => {
  tmp = tempDir('loretrace-capture-');
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp.dir, 'index') });
  copyFileSync(MARA_PACKET, join(tmp.dir, 'mara.packet.json'));
  copyFileSync(MARA_RAW, join(tmp.dir, 'mara.raw.json'));
  copyFileSync(PROXY_PACKET, join(tmp.dir, 'ilse.packet.json'));
  copyFileSync(ILSE_RAW, join(tmp.dir, 'ilse.raw.json'));
  await ilseLedger(join(tmp.dir, 'ilse.jsonl'));
});
afterAll(() => tmp?.cleanup());

describe('assembleCapture on a packet_only packet (curated_excerpts_only)', () => {
  it('fills every field from its source of truth and keeps the raw output byte for byte', async () => {
    const r = await assembleCapture(base({}));
    const c = r.capture;
    expect(c.schema_version).toBe('ghostlight.responder_output.v0');
    expect(c.capture_id).toBe('brinefall-intake.turn-01.mara-voss.packet.capture');
    expect(c.review_status).toBe('accepted_as_draft');
    expect([c.fixture_lane, c.canon_status, c.generation_lane, c.responder_agent_id]).toEqual(['historical_grounded', 'draft', 'packet_only', 'mara_voss']);
    expect(c.packet_ref).toBe('packets/mara.packet.json');
    expect(c.coordinator_artifact_ref).toBe('lore-fixtures/packets/brinefall-intake.turn-01.coordinator.json');
    expect(c.isolation).toEqual({
      isolation_method: 'subagent_no_fork', fork_context: false, visible_input_ref: 'packets/mara.packet.json',
      hidden_context_refs: ['FixtureLore:World/Pre-Elysium/Author Notes/', 'Brinefall Truth', 'future branch continuation', 'coordinator review rationale'],
      worker_model_family: 'fixture model',
    });
    expect(c.raw_output).toBe(read(MARA_RAW));
    expect(c.parsed_output).toEqual(JSON.parse(read(MARA_RAW)));
    expect(c.lore_access).toEqual({
      mode: 'curated_excerpts_only',
      consulted_refs: ['packet_prompt_text', 'lore-fixtures/packets/brinefall-intake.turn-01.scene-digest.json#capacity'],
      followed_refs: [],
      research_trace: [],
      research_trace_status: 'none',
      research_summary: 'No lore research: a packet_only packet with curated_excerpts_only; the responder saw only the packet (1 curated source excerpt).',
    });
    expect(Object.keys(c.lore_access)).toEqual(['mode', 'consulted_refs', 'followed_refs', 'research_trace', 'research_trace_status', 'research_summary']);
    expect(c.coordinator_review.accepted_for_training).toBe(false);
    expect(c.coordinator_review.reviewer).toBe('fixture reviewer');
    expect(c.coordinator_review.failure_labels).toEqual([]);
    expect(c.leakage_audit).toMatchObject({ private_state_leak: false, author_only_leak: false, future_branch_leak: false, raw_state_soup: false, prompt_parroting: false, body_or_object_omniscience: false });
    expect(r.valid).toBe(true);
    expect(validateCapture(c).errors).toEqual([]);
    expect(r.trace).toBeNull();
  });

  it('is deterministic: the same inputs give the same capture', async () => {
    expect(JSON.stringify((await assembleCapture(base({}))).capture)).toBe(JSON.stringify((await assembleCapture(base({}))).capture));
  });

  it('refuses a lore source for a packet that did no research', async () => {
    await expect(assembleCapture(base({ source: { kind: 'fragment', value: {}, file: 'f.json' } }))).rejects.toMatchObject({ code: 'usage', exitCode: 2 });
  });

  it('refuses a blank model family or reviewer (no invented default)', async () => {
    await expect(assembleCapture(base({ modelFamily: ' ' }))).rejects.toMatchObject({ code: 'usage' });
    await expect(assembleCapture(base({ reviewer: '' }))).rejects.toMatchObject({ code: 'usage' });
  });
});

describe('assembleCapture: raw output that breaks its contract', () => {
  it('refuses output that is not JSON, naming line and column', async () => {
    await expect(assembleCapture(base({ rawOutput: '{"responder_agent_id": "mara_voss",\n  oops}' }))).rejects.toMatchObject({
      code: 'invalid_raw_output',
      message: 'mara.raw.json breaks the output contract of packets/mara.packet.json: /raw_output: the raw output is not JSON: expected a property name in double quotes, found "o" at line 2, column 3; nothing written (pass --allow-invalid to write a draft capture with a failure label)',
    });
  });

  it('refuses output that lacks output_contract.required_fields, naming each missing field', async () => {
    const partial = JSON.stringify({ ...JSON.parse(read(MARA_RAW)), intended_effect: undefined, unresolved_hooks: undefined });
    const e = await assembleCapture(base({ rawOutput: partial })).catch((x: unknown) => x as { code: string; details: { data: { errors: { pointer: string; rule: string }[] } } });
    expect((e as { code: string }).code).toBe('invalid_raw_output');
    expect((e as { details: { data: { errors: { pointer: string; rule: string }[] } } }).details.data.errors.map((x) => [x.pointer, x.rule])).toEqual([
      ['/parsed_output/intended_effect', 'capture.missing_required_field'],
      ['/parsed_output/unresolved_hooks', 'capture.missing_required_field'],
    ]);
  });

  it('names the missing fields once, in one line, when many are missing (CLI: no line per field)', async () => {
    writeFileSync(join(tmp.dir, 'min.raw.json'), '{"responder_agent_id":"dock_warden_ilse"}');
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'min.raw.json', '--ledger', 'ilse.jsonl', '--out', 'min.capture.json', '--model-family', 'm', '--reviewer', 'r']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('loretrace: min.raw.json breaks the output contract of ilse.packet.json: missing 12 fields of parsed_output: action_label, visible_action, spoken_text, consulted_refs, followed_refs, research_trace, research_summary, intended_effect, private_interpretation, relationship_update_candidates, state_update_candidates, unresolved_hooks; nothing written (pass --allow-invalid to write a draft capture with a failure label) [invalid_raw_output]\n');
    const json = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'min.raw.json', '--ledger', 'ilse.jsonl', '--out', 'min.capture.json', '--model-family', 'm', '--reviewer', 'r', '--json']);
    expect(JSON.parse(json.out).error.code).toBe('invalid_raw_output');
  });

  it('refuses a parse that breaks the capture schema (an update candidate without value)', async () => {
    const raw = JSON.stringify({ ...JSON.parse(read(MARA_RAW)), relationship_update_candidates: [{ target: 'Idris', update: 'trusts less' }] });
    await expect(assembleCapture(base({ rawOutput: raw }))).rejects.toMatchObject({ code: 'invalid_raw_output', details: { pointer: '/parsed_output/relationship_update_candidates/0' } });
  });

  it('with allowInvalid writes a draft with failure labels and never repairs the output', async () => {
    const notJson = 'Mara says: five cots.';
    const r = await assembleCapture(base({ rawOutput: notJson, allowInvalid: true }));
    expect(r.capture.review_status).toBe('draft');
    expect(r.capture.raw_output).toBe(notJson);
    expect('parsed_output' in r.capture).toBe(false);
    expect(r.capture.coordinator_review.failure_labels).toEqual(['raw_output_not_json']);
    expect(r.valid).toBe(false);
    expect(r.validation.errors.map((e) => [e.pointer, e.rule])).toEqual([['/parsed_output', 'schema.required'], ['/raw_output', 'capture.raw_output_not_json']]);
    const partial = JSON.stringify({ ...JSON.parse(read(MARA_RAW)), unresolved_hooks: undefined });
    const p = await assembleCapture(base({ rawOutput: partial, allowInvalid: true }));
    expect(p.capture.coordinator_review.failure_labels).toEqual(['missing_required_fields']);
    expect(p.capture.parsed_output).toEqual(JSON.parse(partial));
  });
});

describe('a raw output with a key twice (read as strictly as every other JSON input)', () => {
  const hidden = '"spoken_text":"The Brinefall Truth: the blackout was staged by relay keepers.",';
  const twice = (): string => read(ILSE_RAW).replace('"spoken_text"', `${hidden}"spoken_text"`);

  it('is refused with duplicate_key naming the file, the pointer and the line and column of both keys, even with --allow-invalid; nothing is written', async () => {
    writeFileSync(join(tmp.dir, 'twice.raw.json'), twice());
    const raw = twice();
    const first = raw.indexOf('"spoken_text"');
    const second = raw.indexOf('"spoken_text"', first + 1);
    const at = (o: number) => ({ line: raw.slice(0, o).split('\n').length, column: o - raw.lastIndexOf('\n', o - 1) });
    const [a, b] = [at(first), at(second)];
    for (const extra of [[], ['--allow-invalid']]) {
      const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'twice.raw.json', '--ledger', 'ilse.jsonl', '--out', 'twice.capture.json', '--model-family', 'm', '--reviewer', 'r', ...extra]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`loretrace: twice.raw.json has the key /spoken_text twice (line ${a.line}, column ${a.column} and line ${b.line}, column ${b.column}); parsed_output would keep only the last value, so the leakage audit and the review would judge another text than the responder wrote; nothing assembled (expected each key once per object) [duplicate_key]\n`);
      expect(existsSync(join(tmp.dir, 'twice.capture.json'))).toBe(false);
    }
    await expect(assembleCapture(base({
      packet: JSON.parse(read(PROXY_PACKET)), packetText: read(PROXY_PACKET), packetRef: 'ilse.packet.json', rawOutput: raw, rawOutputFile: 'twice.raw.json',
      source: { kind: 'ledger', text: read(join(tmp.dir, 'ilse.jsonl')), file: 'ilse.jsonl' },
    }))).rejects.toMatchObject({ code: 'duplicate_key', exitCode: 2, details: { file: 'twice.raw.json', pointer: '/parsed_output/spoken_text', line: b.line, data: { first_line: a.line, first_column: a.column, second_line: b.line, second_column: b.column } } });
  });
});

describe('assembleCapture in responder_scoped_repository_search (a real ProxySession ledger)', () => {
  const ilse = (over: Partial<AssembleCaptureInput> = {}): AssembleCaptureInput => base({
    packet: JSON.parse(read(PROXY_PACKET)), packetText: read(PROXY_PACKET), packetRef: 'ilse.packet.json',
    rawOutput: read(ILSE_RAW), rawOutputFile: 'ilse.raw.json', source: { kind: 'ledger', text: read(join(tmp.dir, 'ilse.jsonl')), file: 'ilse.jsonl' }, ...over,
  });

  it('mirrors the ledger into lore_access, keeps the responder\'s research fields in parsed_output, and without a trusted key stays draft (ledger_authorship_not_checked)', async () => {
    const r = await assembleCapture(ilse());
    const exported = await exportLedger(read(join(tmp.dir, 'ilse.jsonl')), { index });
    const c = r.capture;
    expect(c.lore_access).toEqual({
      mode: 'responder_scoped_repository_search',
      consulted_refs: [R.territories, R.factions],
      followed_refs: [R.blackout],
      research_trace: exported.research_trace,
      research_trace_status: 'runner_captured',
      research_summary: JSON.parse(read(ILSE_RAW)).research_summary,
    });
    expect(c.lore_access.research_trace!.map((t) => [t.source_ref, t.line_start, t.line_end])).toEqual([
      [`${R.territories}#chunk1`, 5, 8],
      [`${R.factions}#chunk2`, 11, 14],
      [`${R.blackout}#chunk1`, 9, 13],
    ]);
    expect(c.parsed_output).toEqual(JSON.parse(read(ILSE_RAW)));
    // The responder's two responder_reported quotes (parsed_output) are counted too, as capture check counts them.
    expect(r.trace!.totals).toEqual({ verified: 3, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, missing_file: 0, policy_violation: 0, drifted: 0, unverifiable: 2, unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, ledger_untrusted: 0, seed_not_consulted: 0, claimed_not_read: 0, ledger_not_closed: 0, ledger_unsigned: 0, ledger_untrusted_signer: 0, ledger_signature_invalid: 0 });
    expect(r.trace!.runner_captured).toEqual({ checked: 3, failed: 0, ledger_backed: 3 });
    expect(r.ledger).toMatchObject({ valid: true, closed: true, records: 10 });
    // Every receipt check passed, but nobody checked who wrote the (unsigned) ledger: a draft, never accepted.
    expect(c.review_status).toBe('draft');
    expect(c.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
    expect(c.coordinator_review.accepted_for_training).toBe(false);
    expect(c.coordinator_review.review_notes.at(-1)).toBe('review_status draft: ledger_authorship_not_checked. accepted_for_training stays false.');
    expect(c.coordinator_review.review_notes).toContain('research_summary is the responder\'s own (parsed_output.research_summary).');
    expect(r.findings).toEqual([]);
    expect(r.valid).toBe(true);
    expect(r.receipts.ledger).toEqual({ file: 'ilse.jsonl', head: exported.ledger_head, records: 10, closed: true, valid: true, signer_key_id: null, authorship: 'not_checked' });
    expect(c.coordinator_review.review_notes).toContain('Authorship not checked (no --trust-key): the chain shows the records hang together, not who wrote them (the ledger is unsigned); whoever can write the file could have written it, so the capture stays draft (ledger_authorship_not_checked) — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault) to make authorship, and acceptance, possible.');
  });

  it('reports refs the responder claims but the ledger never shows read, by name, and stays draft', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    raw.consulted_refs.push('FixtureLore:World/Politics/Harbor Neutrality.md');
    const r = await assembleCapture(ilse({ rawOutput: JSON.stringify(raw) }));
    expect(r.capture.review_status).toBe('draft');
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'claimed_not_read']);
    expect(r.findings).toEqual([{ code: 'claimed_not_read', severity: 'warning', message: 'the responder claims refs the receipts never show read: FixtureLore:World/Politics/Harbor Neutrality.md', path: 'ilse.packet.json', pointer: '/parsed_output' }]);
    expect(r.capture.coordinator_review.review_notes).toContain('The responder claims refs the receipts never show read: FixtureLore:World/Politics/Harbor Neutrality.md.');
    expect(r.capture.parsed_output).toEqual(raw);
  });

  it('never lets a responder-written runner_captured entry pass unless a ledger entry holds its exact lines', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    raw.research_trace[0].origin = 'runner_captured';
    raw.research_trace.push({ ...raw.research_trace[0], trace_id: 'ilse.exact', line_start: 8, line_end: 8, extracted_constraint: 'Salvage rights on the shelf are sold by the hour, and a crew that overstays pays in fuel.' });
    const r = await assembleCapture(ilse({ rawOutput: JSON.stringify(raw) }));
    expect(r.findings.map((f) => [f.code, f.pointer])).toEqual([['responder_claims_runner_captured', '/parsed_output/research_trace/0']]);
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'responder_claims_runner_captured']);
    expect(r.capture.review_status).toBe('draft');
  });

  it('names receipts that consulted the packet\'s own omitted note (hidden_ref_consulted) whatever their policy_receipt says, and stays draft', async () => {
    // A fragment exported from the real ledger, with the omitted note added as the receipts' own: its
    // policy_receipt is taken from the receipts, so only the packet's hidden_context_audit can catch it.
    const fragment = await exportLedger(read(join(tmp.dir, 'ilse.jsonl')), { index }) as unknown as Record<string, any>;
    fragment.consulted_refs.push(R.truth);
    fragment.followed_refs.push(`${R.truth}#chunk1`);
    const r = await assembleCapture(ilse({ source: { kind: 'fragment', value: fragment, file: 'forged.lore_access.json' } }));
    expect(r.capture.review_status).toBe('draft');
    expect(r.capture.coordinator_review.failure_labels).toEqual(['trace_not_ledger_backed', 'hidden_ref_consulted']);
    expect(r.findings.filter((f) => f.code === 'hidden_ref_consulted')).toEqual([
      { code: 'hidden_ref_consulted', severity: 'error', message: `${R.truth} names the packet's omitted ref ${R.truth} (hidden_context_audit.omitted_context_refs): the receipts consulted hidden lore`, path: 'ilse.packet.json', pointer: '/lore_access/consulted_refs/2' },
      { code: 'hidden_ref_consulted', severity: 'error', message: `${R.truth}#chunk1 names the packet's omitted ref ${R.truth} (hidden_context_audit.omitted_context_refs): the receipts consulted hidden lore`, path: 'ilse.packet.json', pointer: '/lore_access/followed_refs/1' },
    ]);
    expect(r.capture.coordinator_review.review_notes).toContain(`The receipts name the packet's own omitted refs (hidden_context_audit.omitted_context_refs), whatever their policy_receipt says: ${R.truth} at /lore_access/consulted_refs/2, ${R.truth}#chunk1 at /lore_access/followed_refs/1.`);
    // The written capture breaks the cross-field rule too, so validate refuses it on its own.
    expect(r.valid).toBe(false);
    expect(r.validation.errors.map((e) => [e.rule, e.pointer])).toEqual([
      ['capture.hidden_ref_consulted', '/lore_access/consulted_refs/2'],
      ['capture.hidden_ref_consulted', '/lore_access/followed_refs/1'],
    ]);
  });

  it('keeps a capture whose responder_reported quote is not in its cited lines a draft (text_mismatch), with a finding and a note', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    // Lines 11-12 of Brinefall Blackout.md hold 4 of these 16 words: an invented quote (token containment 0.25).
    raw.research_trace[1].extracted_constraint = 'the harbor council swore every frozen crew one free berth plus fuel until spring came back';
    const r = await assembleCapture(ilse({ rawOutput: JSON.stringify(raw) }));
    expect(r.capture.review_status).toBe('draft');
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'responder_trace_not_verified']);
    expect(r.trace!.totals).toMatchObject({ verified: 3, text_mismatch: 1, unverifiable: 1 });
    const bad = r.trace!.entries.find((e) => e.trace_id === 'ilse.blackout_promise')!;
    expect([bad.pointer, bad.disposition, bad.similarity]).toEqual(['/parsed_output/research_trace/1', 'text_mismatch', 0.25]);
    expect(r.findings).toEqual([{
      code: 'responder_trace_not_verified', severity: 'warning', path: 'ilse.packet.json', pointer: '/parsed_output/research_trace/1',
      message: '/parsed_output/research_trace/1 (ilse.blackout_promise) is text_mismatch: responder_reported entry: lines 11-12 of World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md do not hold its extracted_constraint (token containment 0.25); expected a quote of those lines (every word in them); the capture stays draft',
    }]);
    expect(r.capture.coordinator_review.review_notes).toContain('responder_reported entries whose cited lines do not hold their text: /parsed_output/research_trace/1 (ilse.blackout_promise, text_mismatch, token containment 0.25).');
    expect(r.capture.coordinator_review.review_notes.at(-1)).toBe('review_status draft: ledger_authorship_not_checked, responder_trace_not_verified. accepted_for_training stays false.');
  });

  it('summarises the refused tool calls of the session in the review notes, counts by code', async () => {
    const path = join(tmp.dir, 'ilse-refused.jsonl');
    const s = await fixtureSession({ ledgerPath: path, clock: fakeClock() });
    await s.call('lore_read', { ref: R.neutrality });
    await s.call('lore_read', { ref: R.blackout });
    await s.call('lore_read', { ref: R.veilDrive });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.call('lore_read', { ref: `${R.factions}#Movements` });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    await s.call('lore_read', { ref: `${R.blackout}#chunk1` });
    await s.close();
    const r = await assembleCapture(ilse({ source: { kind: 'ledger', text: read(path), file: 'ilse-refused.jsonl' } }));
    expect(r.refusals).toEqual({ calls: 7, refused: 3, codes: [['not_reached', 2], ['out_of_scope', 1]] });
    expect(r.capture.coordinator_review.review_notes).toContain('Refused tool calls: 3 of 7 (not_reached 2, out_of_scope 1); the ledger records each one\'s true reason.');
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
    const clean = await assembleCapture(ilse());
    expect(clean.refusals).toEqual({ calls: 4, refused: 0, codes: [] });
    expect(clean.capture.coordinator_review.review_notes.some((n) => n.startsWith('Refused tool calls'))).toBe(false);
  });

  it('names a required seed the ledger never read (seed_not_consulted) and stays draft', async () => {
    const ledger = join(tmp.dir, 'ilse-one-seed.jsonl');
    await ilseLedger(ledger, { seeds: 'territories-only' });
    const raw = JSON.parse(read(ILSE_RAW));
    raw.consulted_refs = [R.territories];
    const r = await assembleCapture(ilse({ rawOutput: JSON.stringify(raw), source: { kind: 'ledger', text: read(ledger), file: 'ilse-one-seed.jsonl' } }));
    expect(r.findings).toContainEqual({ code: 'seed_not_consulted', severity: 'error', message: `required seed ${R.factions} was never read according to the receipts`, path: 'ilse.packet.json' });
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'seed_not_consulted']);
    expect(r.capture.coordinator_review.review_notes).toContain(`Required seeds never read: ${R.factions}.`);
  });

  it('makes a capture from a ledger without its closing record draft (ledger_not_closed)', async () => {
    const ledger = join(tmp.dir, 'ilse-open.jsonl');
    await ilseLedger(ledger, { close: false });
    const r = await assembleCapture(ilse({ source: { kind: 'ledger', text: read(ledger), file: 'ilse-open.jsonl' } }));
    expect(r.ledger).toMatchObject({ valid: true, closed: false, records: 9 });
    expect(r.capture.review_status).toBe('draft');
    expect(r.capture.coordinator_review.failure_labels).toEqual(['ledger_not_closed', 'ledger_authorship_not_checked']);
    expect(r.findings.map((f) => f.code)).toEqual(['ledger_not_closed']);
  });

  it('refuses a ledger whose session pinned another packet (the packet file was swapped)', async () => {
    const swapped = read(PROXY_PACKET).replace('Two sanctuary berths remain', 'Three sanctuary berths remain');
    expect(swapped).not.toBe(read(PROXY_PACKET));
    await expect(assembleCapture(ilse({ packet: JSON.parse(swapped), packetText: swapped }))).rejects.toMatchObject({ code: 'lore_source_mismatch' });
  });

  it('refuses a ledger that does not verify (an edited record)', async () => {
    const edited = read(join(tmp.dir, 'ilse.jsonl')).replace('"line_end":8', '"line_end":7');
    await expect(assembleCapture(ilse({ source: { kind: 'ledger', text: edited, file: 'edited.jsonl' } }))).rejects.toMatchObject({ code: 'ledger_invalid' });
  });

  it('without a ledger or fragment is a usage error naming both options', async () => {
    await expect(assembleCapture(ilse({ source: undefined }))).rejects.toMatchObject({ code: 'usage', message: 'ilse.packet.json is a responder_scoped_repository_search packet: give its receipts with --ledger <ledger.jsonl> (the run\'s hash-chained ledger) or --fragment <lore_access.json>' });
  });
});

describe('the leakage audit searches every note the session\'s policy hides, not only the omitted refs', () => {
  it('sets author_only_leak for a verbatim quote of a note marked visibility: author-only and future_branch_leak for one of a Post-Elysium note', async () => {
    const vault = join(tmp.dir, 'policy-hidden', 'FixtureLore');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    mkdirSync(join(vault, 'World/Pre-Elysium/Harbor Secrets'), { recursive: true });
    writeFileSync(join(vault, 'World/Pre-Elysium/Harbor Secrets/Keeper Ledger.md'), '---\nvisibility: author-only\n---\n# Keeper Ledger\n\nThe relay keepers buried the convoy manifest under the third pylon of the sunken tower at low tide.\n');
    const ledger = join(tmp.dir, 'policy-hidden', 's.jsonl');
    const s = await fixtureSession({ ledgerPath: ledger, clock: fakeClock(), lore: vault });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.call('lore_read', { ref: `${R.factions}#Movements` });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    await s.call('lore_read', { ref: `${R.blackout}#chunk1` });
    await s.close();
    const vindex = await indexVault(vault, { persist: false, workers: false });
    const capture = async (spoken: string) => {
      const raw = { ...JSON.parse(read(ILSE_RAW)), spoken_text: spoken };
      return assembleCapture(base({
        index: vindex, packet: JSON.parse(read(PROXY_PACKET)), packetText: read(PROXY_PACKET), packetRef: 'ilse.packet.json',
        rawOutput: JSON.stringify(raw), rawOutputFile: 'raw.json', source: { kind: 'ledger', text: read(ledger), file: 's.jsonl' },
      }));
    };
    const auth = await capture('Between us: the relay keepers buried the convoy manifest under the third pylon of the sunken tower at low tide.');
    expect(auth.leakage_hits.filter((h) => h.flag !== null)).toEqual([{
      flag: 'author_only_leak', matched: 'the relay keepers buried the convoy manifest under',
      source: 'policy hidden_note never consult World/Pre-Elysium/Harbor Secrets/Keeper Ledger.md (its frontmatter marks it visibility: author-only): text of World/Pre-Elysium/Harbor Secrets/Keeper Ledger.md lines 4-6 quoted verbatim',
    }]);
    expect(auth.capture.review_status).toBe('draft');
    expect(auth.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'author_only_leak']);
    const fut = await capture('Mark me: the veil drive folds a ship\'s path through still water, and no harbor can tax a crossing that takes no time.');
    expect(fut.leakage_hits.filter((h) => h.flag !== null).map((h) => [h.flag, h.matched, h.source.replace(/ \(.*\):/, ':')])).toEqual([
      ['future_branch_leak', 'the veil drive folds a ship s path', 'policy future_era_prefix never consult World/Post-Elysium/: text of World/Post-Elysium/Veil Drive.md lines 1-4 quoted verbatim'],
    ]);
    expect(fut.capture.leakage_audit.future_branch_leak).toBe(true);
    expect(fut.capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked', 'future_branch_leak']);
    // The same words, not verbatim (seven in a row at most), set nothing.
    const loose = await capture('The veil drive folds a path, they say; no harbor can tax such a crossing.');
    expect(loose.leakage_hits.filter((h) => h.flag !== null)).toEqual([]);
  });
});

describe('auditLeakage (automated first pass)', () => {
  const packet = (): ResponderPacket => JSON.parse(read(MARA_PACKET)) as ResponderPacket;
  const audit = (over: Record<string, unknown>, p: ResponderPacket = packet()) => {
    const parsed = { ...JSON.parse(read(MARA_RAW)), ...over };
    return auditLeakage({ rawOutput: JSON.stringify(parsed), parsed, packet: p, index });
  };

  it('finds nothing in the clean fixture output and says which flags a reviewer must confirm', () => {
    const r = audit({});
    expect(r.hits).toEqual([]);
    expect(r.audit.notes.at(-1)).toBe('Left false because the pass found nothing: private_state_leak, author_only_leak, future_branch_leak, raw_state_soup, prompt_parroting (private, author-only and future-branch leaks only by the omitted refs\' names). Never decided automatically: body_or_object_omniscience (false). A reviewer must confirm every flag left false.');
    expect(r.audit.notes[0]).toMatch(/^Automated first pass by loretrace/);
  });

  it('sets author_only_leak for an omitted ref and the title of a hidden note under an omitted prefix', () => {
    const r = audit({ private_interpretation: 'The brinefall  TRUTH is that the tower light was a signal.' });
    expect(r.audit.author_only_leak).toBe(true);
    expect(r.hits).toEqual([
      { flag: 'author_only_leak', matched: 'Brinefall Truth', source: 'hidden_context_audit.omitted_context_refs/0 ("FixtureLore:World/Pre-Elysium/Author Notes/")' },
      { flag: 'author_only_leak', matched: 'Brinefall Truth', source: 'hidden_context_audit.omitted_context_refs/1 ("Brinefall Truth")' },
    ]);
  });

  it('finds an omitted title obfuscated by zero-width characters, separators and case: both sides in the same token form', () => {
    const both = [
      { flag: 'author_only_leak', matched: 'Brinefall Truth', source: 'hidden_context_audit.omitted_context_refs/0 ("FixtureLore:World/Pre-Elysium/Author Notes/")' },
      { flag: 'author_only_leak', matched: 'Brinefall Truth', source: 'hidden_context_audit.omitted_context_refs/1 ("Brinefall Truth")' },
    ];
    for (const spelled of [
      'Brine\u200bfall Tru\u200cth', 'Brinefall\u200dTruth', 'Brinefall\u2060Truth', 'Brine\ufefffall\u200b\u200bTruth', 'brinefall-truth', 'BRINEFALL_TRUTH',
      'brinefall.truth', 'Brinefall - _ . Truth', 'BrinefallTruth', '\uff22\uff32\uff29\uff2e\uff25\uff26\uff21\uff2c\uff2c\uff0e\uff34\uff32\uff35\uff34\uff28',
    ]) {
      const r = audit({ private_interpretation: `What I heard: ${spelled}, and nothing more.` });
      expect([spelled, r.audit.author_only_leak, r.hits]).toEqual([spelled, true, both]);
    }
    // Whole tokens only: a longer word is not the title.
    expect(audit({ private_interpretation: 'Brinefall Truthful accounts differ.' }).hits).toEqual([]);
  });

  it('finds a hidden note\'s text quoted verbatim (a run of 8 words), however spaced, cased or split by zero-width characters', () => {
    const source = 'hidden_context_audit.omitted_context_refs/0 ("FixtureLore:World/Pre-Elysium/Author Notes/"): text of World/Pre-Elysium/Author Notes/Brinefall Truth.md lines 4-7 quoted verbatim';
    for (const quote of ['They whisper the blackout was staged by relay keepers paid to sink a rival convoy.', 'the BLACKOUT was\u200b staged by relay-keepers paid to sink']) {
      const r = audit({ spoken_text: quote });
      expect([quote, r.audit.author_only_leak, r.hits]).toEqual([quote, true, [{ flag: 'author_only_leak', matched: 'the blackout was staged by relay keepers paid', source }]]);
    }
    expect(audit({ spoken_text: 'the blackout was staged, some say' }).hits).toEqual([]);
    // Invisible marks and fillers inside words (U+034F, a variation selector, U+17B4, U+3164) and visible
    // diacritics carry no weight: the words are the hidden note's words all the same.
    for (const mark of ['\u034f', '\ufe0f', '\u17b4', '\u3164', '\u0301']) {
      const quote = `Truth is, the blackout wa${mark}s staged by relay keepers pa${mark}id to sink a rival convoy.`;
      const r = audit({ spoken_text: quote });
      expect([quote, r.audit.author_only_leak, r.hits]).toEqual([quote, true, [{ flag: 'author_only_leak', matched: 'the blackout was staged by relay keepers paid', source }]]);
    }
    // A whole sentence of the note (8 words) is a run too; seven of its words are not.
    expect(audit({ spoken_text: 'No character in the harbor era knows this.' }).hits.map((h) => h.matched)).toEqual(['no character in the harbor era knows this']);
    expect(audit({ spoken_text: 'No character in the harbor era knows.' }).hits).toEqual([]);
    // What the packet itself shows the responder may be repeated: a run also in its source_excerpts is not a leak.
    const shown = packet();
    shown.visible_context.source_excerpts.push({ ref_id: 'local.rumour', source_ref: 'local.rumour', text: 'Rumour has it no character in the harbor era knows this.' });
    expect(audit({ spoken_text: 'No character in the harbor era knows this.' }, shown).hits).toEqual([]);
  });

  it('folds look-alike letters of Cyrillic, Greek and Armenian to Latin: a hidden quote with homoglyphs is still quoted, a hidden name still named', () => {
    const source = 'hidden_context_audit.omitted_context_refs/0 ("FixtureLore:World/Pre-Elysium/Author Notes/"): text of World/Pre-Elysium/Author Notes/Brinefall Truth.md lines 4-7 quoted verbatim';
    // U+0430 CYRILLIC SMALL LETTER A in four words, one every fewer than 8 words: every 8-word run is broken without the fold.
    const cyrillic = 'Truth is, the blackout was st\u0430ged by relay keepers p\u0430id to sink a riv\u0430l convoy. No character in the h\u0430rbor era knows this.';
    const r = audit({ spoken_text: cyrillic });
    expect([r.audit.author_only_leak, r.hits[0]]).toEqual([true, { flag: 'author_only_leak', matched: 'the blackout was staged by relay keepers paid', source }]);
    // Greek ο, ν, ι, α and capitals, Armenian օ, ս, ո, and Latin dotless ı, in a mixed-script word or a whole one.
    const greek = 'THE BL\u0391CK\u039fUT W\u0391S STAGED by relay keepers pa\u03b9d to sink a r\u03b9\u03bdal c\u03bfn\u03bdoy.';
    expect(audit({ spoken_text: greek }).hits[0]).toEqual({ flag: 'author_only_leak', matched: 'the blackout was staged by relay keepers paid', source });
    const armenian = 'the blackout was staged by relay keepers paid t\u0585 s\u0131nk a rival c\u0585\u0578voy';
    expect(audit({ spoken_text: armenian }).hits[0]!.flag).toBe('author_only_leak');
    expect(audit({ private_interpretation: 'I heard of the Brin\u0435f\u0430ll Truth.' }).hits.map((h) => h.matched)).toEqual(['Brinefall Truth', 'Brinefall Truth']);
    // A letter that looks different (Cyrillic л for l) is another word.
    expect(audit({ private_interpretation: 'I heard of the Brinefa\u043b\u043b Truth.' }).hits).toEqual([]);
  });

  it('sets future_branch_leak for an omitted future-branch ref and raw_state_soup for markers and dimension scores', () => {
    const r = audit({ spoken_text: 'Per the future branch continuation, my trust 0.77 and current_activation say no.' });
    expect([r.audit.future_branch_leak, r.audit.raw_state_soup, r.audit.private_state_leak]).toEqual([true, true, false]);
    expect(r.hits.map((h) => [h.flag, h.matched])).toEqual([
      ['future_branch_leak', 'future branch continuation'],
      ['raw_state_soup', 'current_activation'],
      ['raw_state_soup', 'trust 0.77'],
    ]);
  });

  it('holds an answer to the prompt rule on numeric state: percentages and marks out of 10 are raw_state_soup too', () => {
    const r = audit({ spoken_text: 'My trust: 77% says no, loyalty: 7/10, and fear 0.82 is showing.' });
    expect(r.audit.raw_state_soup).toBe(true);
    expect(r.hits.map((h) => [h.flag, h.matched, h.source])).toEqual([
      ['raw_state_soup', 'fear 0.82', 'numeric dimension score'],
      ['raw_state_soup', 'trust: 77%', 'numeric state score (prompt.raw_numeric_state)'],
      ['raw_state_soup', 'loyalty: 7/10', 'numeric state score (prompt.raw_numeric_state)'],
    ]);
    expect(audit({ spoken_text: 'The reactors achieved 85% efficiency before the strike.' }).hits).toEqual([]);
  });

  it('does not read a short identifier glued to a number (a trace id r.1, q.2) as a dimension score; a named score still is', () => {
    expect(audit({ spoken_text: 'See r.1 and q.2 in my trace; v1.2 of the board.' }).hits).toEqual([]);
    expect(audit({ spoken_text: 'ego=0.4, the fear:0.82 and grief .5 stay.' }).hits.map((h) => [h.flag, h.matched, h.source])).toEqual([
      ['raw_state_soup', 'ego=0.4', 'numeric dimension score'],
      ['raw_state_soup', 'fear:0.82', 'numeric dimension score'],
      ['raw_state_soup', 'grief .5', 'numeric dimension score'],
    ]);
  });

  it('sets prompt_parroting for a long prompt line repeated verbatim', () => {
    const line = 'The sanctuary berth is a raft deck of cots under tarpaulin, a galley stove, a repair bench and the chalk capacity board. Nine of fourteen cots are taken. The old tower light is burning on the shelf.';
    const r = audit({ spoken_text: line });
    expect(r.audit.prompt_parroting).toBe(true);
    expect(r.hits).toEqual([{ flag: 'prompt_parroting', matched: line, source: 'packet_prompt_text line 11' }]);
  });

  it('only reports (no flag) the name of a note outside the policy\'s allowed_prefixes', () => {
    const research = JSON.parse(read(PROXY_PACKET)) as ResponderPacket;
    const r = audit({ spoken_text: 'Not even the Veil Drive could cross the reach tonight.' }, research);
    expect(r.hits).toEqual([{ flag: null, matched: 'Veil Drive', source: 'note World/Post-Elysium/Veil Drive.md (outside allowed_prefixes)' }]);
    expect(Object.values(r.audit).filter((v) => v === true)).toEqual([]);
    expect(r.audit.notes).toContain('Names "Veil Drive" — note World/Post-Elysium/Veil Drive.md (outside allowed_prefixes); not necessarily a leak, a reviewer must confirm.');
  });

  it('matches whole phrases only', () => {
    expect(audit({ spoken_text: 'Brinefall Truthfulness is a virtue.' }).hits).toEqual([]);
  });
});

describe('loretrace capture (CLI)', () => {
  it('writes the capture and its lock, then refuses to overwrite (exists; locked even with --force)', async () => {
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--out', 'mara.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    written.push(join(tmp.dir, 'mara.capture.json'));
    expect(r.out).toBe([
      'capture: brinefall-intake.turn-01.mara-voss.packet.capture (curated_excerpts_only) review_status accepted_as_draft',
      `  raw output: ${Buffer.byteLength(read(MARA_RAW))} bytes, checked: one JSON object, every required field, the capture schema, action_label "refuse" allowed`,
      '  receipts: none (curated_excerpts_only: no lore research)',
      '  leakage (automated first pass): no flag set',
      '  failure_labels: none',
      '  validates: yes (responder-output schema + cross-field rules)',
      'wrote mara.capture.json',
      'wrote mara.capture.lock.json',
      '',
    ].join('\n'));
    const lock = JSON.parse(read(join(tmp.dir, 'mara.capture.lock.json')));
    expect(lock.files.map((f: { path: string; role: string }) => [f.path, f.role])).toEqual([['mara.capture.json', 'output'], ['mara.packet.json', 'input'], ['mara.raw.json', 'input']]);
    const again = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--out', 'mara.capture.json', '--model-family', 'm', '--reviewer', 'r']);
    expect(again.code).toBe(2);
    expect(again.err).toBe(`loretrace: --out ${join(tmp.dir, 'mara.capture.json')} is listed in the lock ${join(tmp.dir, 'mara.capture.lock.json')}; a locked file is never overwritten, not even with --force: write the new version elsewhere (a new --out or --out-dir), or delete the earlier run's outputs together with the lock ${join(tmp.dir, 'mara.capture.lock.json')} (nothing written) [output_locked]\n`);
    writeFileSync(join(tmp.dir, 'plain.capture.json'), '{}\n');
    const exists = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--out', 'plain.capture.json', '--model-family', 'm', '--reviewer', 'r']);
    expect(exists.code).toBe(2);
    expect(exists.err).toBe(`loretrace: --out ${join(tmp.dir, 'plain.capture.json')} already exists; outputs are never overwritten silently: pass --force to replace an unlocked file, or choose a new name (nothing written) [output_exists]\n`);
    const forced = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--out', 'plain.capture.json', '--model-family', 'm', '--reviewer', 'r', '--force']);
    expect(forced.code).toBe(0);
    written.push(join(tmp.dir, 'plain.capture.json'));
  });

  it('reads the raw output from stdin with --raw-output - (the lock records its sha256)', async () => {
    const raw = read(MARA_RAW);
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', '-', '--out', 'stdin.capture.json', '--model-family', 'm', '--reviewer', 'r', '--json'], raw);
    expect(r.code).toBe(0);
    expect(JSON.parse(read(join(tmp.dir, 'stdin.capture.json'))).raw_output).toBe(raw);
    const lock = JSON.parse(read(join(tmp.dir, 'stdin.capture.lock.json')));
    expect(lock.files.map((f: { path: string }) => f.path)).toEqual(['stdin.capture.json', 'mara.packet.json']);
    expect(lock.raw_output_sha256).toBe((await import('node:crypto')).createHash('sha256').update(raw).digest('hex'));
    written.push(join(tmp.dir, 'stdin.capture.json'));
  });

  it('prints the contract failures of an invalid raw output and writes nothing; --allow-invalid writes a draft', async () => {
    writeFileSync(join(tmp.dir, 'bad.raw.txt'), 'Mara says: five cots.');
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'bad.raw.txt', '--out', 'bad.capture.json', '--model-family', 'm', '--reviewer', 'r']);
    expect(r.code).toBe(1);
    expect(r.err).toBe([
      'loretrace: bad.raw.txt breaks the output contract of mara.packet.json: /raw_output: the raw output is not JSON: expected a JSON value, found "M" at line 1, column 1; nothing written (pass --allow-invalid to write a draft capture with a failure label) [invalid_raw_output]',
      '',
    ].join('\n'));
    expect(existsSync(join(tmp.dir, 'bad.capture.json'))).toBe(false);
    const d = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'bad.raw.txt', '--out', 'bad.capture.json', '--model-family', 'm', '--reviewer', 'r', '--allow-invalid', '--json']);
    expect(d.code).toBe(0);
    expect(JSON.parse(d.out)).toMatchObject({ ok: true, review_status: 'draft', valid: false, failure_labels: ['raw_output_not_json'] });
    expect(JSON.parse(read(join(tmp.dir, 'bad.capture.lock.json'))).status).toBe('draft');
  });

  it('refuses --ledger together with --fragment, and a missing --model-family', async () => {
    const both = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'ilse.jsonl', '--fragment', 'x.json', '--out', 'x.capture.json', '--model-family', 'm', '--reviewer', 'r']);
    expect(both.code).toBe(2);
    expect(both.err).toBe("loretrace: give --ledger or --fragment, not both: the capture's receipts come from one source; see 'loretrace capture --help' [usage]\n");
    const noModel = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--out', 'y.capture.json', '--reviewer', 'r']);
    expect(noModel.code).toBe(2);
    expect(noModel.err).toBe("loretrace: required option '--model-family <name>' not specified; see 'loretrace capture --help' [usage]\n");
  });

  it('assembles the responder lane from the session ledger', async () => {
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'ilse.jsonl', '--out', 'ilse.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('review_status draft');
    expect(r.out).toContain('  failure_labels: ledger_authorship_not_checked\n');
    expect(r.out).toContain('research_trace: 3 runner_captured entries, 0 failed');
    written.push(join(tmp.dir, 'ilse.capture.json'));
    const lock = JSON.parse(read(join(tmp.dir, 'ilse.capture.lock.json')));
    expect(lock.ledger).toMatchObject({ path: 'ilse.jsonl', records: 10, closed: true });
    const ids = JSON.parse(read(join(tmp.dir, 'ilse.capture.json'))).lore_access.research_trace.map((t: { trace_id: string }) => t.trace_id);
    expect(ids.length).toBe(3);
    expect(lock.trace_bindings.map((b: { trace_id: string; disposition: string; ledger_backed: boolean }) => [b.trace_id, b.disposition, b.ledger_backed])).toEqual(ids.map((id: string) => [id, 'verified', true]));
  });

  it('checks the action label against visible_context.allowed_action_labels: one outside it is action_label_not_allowed, a draft, and capture check re-derives the label', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    raw.action_label = 'inspect';
    writeFileSync(join(tmp.dir, 'ilse-inspect.raw.json'), JSON.stringify(raw));
    const c = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse-inspect.raw.json', '--ledger', 'ilse.jsonl', '--out', 'ilse-inspect.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect(c.code).toBe(0);
    written.push(join(tmp.dir, 'ilse-inspect.capture.json'));
    const bytes = Buffer.byteLength(JSON.stringify(raw));
    expect(c.out.split('\n').slice(0, 2)).toEqual([
      'capture: proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0.capture (responder_scoped_repository_search) review_status draft',
      `  raw output: ${bytes} bytes, checked: one JSON object, every required field, the capture schema; action_label "inspect" is NOT one of the packet's allowed_action_labels (speak, refuse, set_condition, wait): action_label_not_allowed`,
    ]);
    expect(c.out).toContain('  failure_labels: action_label_not_allowed, ledger_authorship_not_checked\n');
    const doc = JSON.parse(read(join(tmp.dir, 'ilse-inspect.capture.json')));
    expect([doc.review_status, doc.coordinator_review.failure_labels]).toEqual(['draft', ['action_label_not_allowed', 'ledger_authorship_not_checked']]);
    expect(doc.coordinator_review.review_notes[1]).toBe('The raw output is one JSON object with every output_contract.required_fields entry and passes the capture schema. Its action_label "inspect" is not one of visible_context.allowed_action_labels (speak, refuse, set_condition, wait): action_label_not_allowed. The other response_rules are not checked mechanically.');
    // capture check re-derives the label: dropping it by hand is a review mismatch.
    const check = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse-inspect.capture.json', '--json']);
    expect(JSON.parse(check.out).captures[0].review).toEqual([]);
    // The honest output names what was checked.
    const ok = await assembleCapture(base({ packet: JSON.parse(read(PROXY_PACKET)), packetText: read(PROXY_PACKET), packetRef: 'ilse.packet.json', rawOutput: read(ILSE_RAW), rawOutputFile: 'ilse.raw.json', source: { kind: 'ledger', text: read(join(tmp.dir, 'ilse.jsonl')), file: 'ilse.jsonl' } }));
    expect(ok.capture.coordinator_review.review_notes[1]).toBe('The raw output is one JSON object with every output_contract.required_fields entry and passes the capture schema. Its action_label "set_condition" is one of visible_context.allowed_action_labels. The other response_rules are not checked mechanically.');
  });

  it('capture and capture check count the same (one function): an invented responder quote is text_mismatch in both, and capture check fails it', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    raw.research_trace[1].extracted_constraint = 'the harbor council swore every frozen crew one free berth plus fuel until spring came back';
    writeFileSync(join(tmp.dir, 'ilse-invented.raw.json'), JSON.stringify(raw));
    const totals = 'verified 3, text_mismatch 1, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 1, unbacked 0, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0';
    const c = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse-invented.raw.json', '--ledger', 'ilse.jsonl', '--out', 'ilse-invented.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect(c.code).toBe(0);
    expect(c.out.split('\n').slice(0, 7)).toEqual([
      'capture: proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0.capture (responder_scoped_repository_search) review_status draft',
      '  raw output: 2215 bytes, checked: one JSON object, every required field, the capture schema, action_label "set_condition" allowed',
      expect.stringMatching(/^  receipts: ledger ilse\.jsonl — verifies, 10 records, closed; head [0-9a-f]{64}$/),
      '  authorship not checked (no --trust-key); the ledger is unsigned',
      `  research_trace: 3 runner_captured entries, 0 failed (${totals})`,
      '  leakage (automated first pass): no flag set',
      '  failure_labels: ledger_authorship_not_checked, responder_trace_not_verified',
    ]);
    written.push(join(tmp.dir, 'ilse-invented.capture.json'));
    const check = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse-invented.capture.json']);
    expect(check.code).toBe(1);
    expect(check.out.split('\n').slice(0, 3)).toEqual([
      'ilse-invented.capture.json: FAILED (draft: review_status draft, failure_label ledger_authorship_not_checked, failure_label responder_trace_not_verified)',
      '  validation: valid',
      `  trace: 3 runner_captured entries: 3 ledger-backed and verified, 0 failed; other entries: text_mismatch 1 (${totals})`,
    ]);
    const clean = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse.capture.json']);
    expect(clean.out.split('\n')[2]).toBe('  trace: 3 runner_captured entries: 3 ledger-backed and verified, 0 failed (verified 3, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 2, unbacked 0, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0)');
  });

  it('assembles the coordinator lane from retrieve --capture-out (not ledger-backed: draft, summary built from the receipts)', async () => {
    const ret = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--policy', DRAFT_POLICY, '--out', 'mara.retrieved.packet.json', '--capture-out', 'mara.lore_access.json']);
    expect(ret.code).toBe(0);
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.retrieved.packet.json', '--raw-output', 'mara.raw.json', '--fragment', 'mara.lore_access.json', '--out', 'mara.retrieved.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    written.push(join(tmp.dir, 'mara.retrieved.capture.json'));
    const c = JSON.parse(read(join(tmp.dir, 'mara.retrieved.capture.json')));
    const fragment = JSON.parse(read(join(tmp.dir, 'mara.lore_access.json')));
    expect(c.review_status).toBe('draft');
    expect(c.coordinator_review.failure_labels).toEqual(['trace_not_ledger_backed']);
    expect(c.lore_access.research_trace).toEqual(fragment.research_trace);
    expect(c.lore_access.consulted_refs).toEqual(fragment.consulted_refs);
    // The draft names no runtime requirement, so retrieve's default excerpt budget is 1 excerpt (0 requirements
    // + 1 seed): one trace entry, Brinefall Blackout's lines 11-12.
    expect(fragment.research_trace.map((t: { source_ref: string; line_start: number; line_end: number }) => [t.source_ref, t.line_start, t.line_end])).toEqual([['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1', 11, 12]]);
    expect(c.lore_access.research_summary).toBe(`Built by loretrace from the capture fragment mara.lore_access.json (the responder gave no research_summary): 1 of 1 required seed read; ${fragment.consulted_refs.length} note${fragment.consulted_refs.length === 1 ? '' : 's'} consulted, ${fragment.followed_refs.length} ref${fragment.followed_refs.length === 1 ? '' : 's'} followed (${fragment.followed_refs.join(', ')}); 1 constraint extracted: ${fragment.research_trace.map((t: { source_ref: string; line_start: number; line_end: number }) => `${t.source_ref} L${t.line_start}-L${t.line_end}`).join('; ')}.`);
    expect(c.coordinator_review.review_notes).toContain('research_summary was built by loretrace from the receipts: the responder gave none.');
  });
});

describe('loretrace capture check (many files, one report)', () => {
  it('checks every capture of a folder and its lock, with totals, and fails on a swapped packet', async () => {
    const ok = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse.capture.json', 'mara.capture.json', '--json']);
    // ilse's ledger is unsigned and no key is given: integrity only (exit 1); mara's packet-only capture has no ledger.
    expect(ok.code).toBe(1);
    expect(JSON.parse(ok.out).totals).toEqual({ captures: 2, ok: 1, integrity_only: 1, review_unchecked: 0, failed: 0, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 0, unreadable: 0 });
    expect((await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse.capture.json', 'mara.capture.json', '--integrity-only'])).code).toBe(0);
    writeFileSync(join(tmp.dir, 'mara.packet.json'), read(PROXY_PACKET));
    const bad = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'ilse.capture.json', 'mara.capture.json']);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('mara.capture.json: FAILED');
    expect(bad.out).toContain('  lock mara.capture.lock.json (capture, ready_for_next_role): DRIFT');
    expect(bad.out.trimEnd().split('\n').at(-1)).toBe('totals: captures 2, ok 0, integrity_only 1, review_unchecked 0, failed 1, invalid 0, trace_failed 0, lock_drift 1, review_mismatch 0, unreadable 0');
    copyFileSync(MARA_PACKET, join(tmp.dir, 'mara.packet.json'));
  });

  it('reports a draft capture as a draft, naming its review_status and failure_labels', async () => {
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'bad.capture.json', 'mara.capture.json']);
    expect(r.out.split('\n').filter((l) => l.startsWith('bad.capture.json') || l.startsWith('mara.capture.json'))).toEqual(['bad.capture.json: FAILED (draft: review_status draft, failure_label raw_output_not_json)', 'mara.capture.json: ok']);
    const j = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'bad.capture.json', 'mara.capture.json', '--json']);
    expect(JSON.parse(j.out).captures.map((c: { draft: string[] }) => c.draft)).toEqual([['review_status draft', 'failure_label raw_output_not_json'], []]);
  });
});

describe('capture check re-derives the review from the receipts (a hand-promoted leak fails)', () => {
  /** Edit a capture and re-hash its entry in the lock, as a forger with write access would. */
  const promote = (name: string, edit: (c: Record<string, any>) => void): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const c = JSON.parse(read(join(tmp.dir, name)));
    edit(c);
    const text = JSON.stringify(c, null, 2) + '\n';
    writeFileSync(join(tmp.dir, name), text);
    const lockPath = join(tmp.dir, name.replace(/\.json$/, '.lock.json'));
    const lock = JSON.parse(read(lockPath));
    const row = lock.files.find((f: { path: string }) => f.path === name);
    row.sha256 = createHash('sha256').update(text).digest('hex');
    row.bytes = Buffer.byteLength(text);
    writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
  };

  it('fails a capture whose leakage_audit found a leak but was edited to accepted_as_draft, naming file and pointers; validate capture refuses it too', async () => {
    writeFileSync(join(tmp.dir, 'leak.raw.json'), read(ILSE_RAW).replace(/"spoken_text": *"[^"]*"/, '"spoken_text": "Heard of Brinefall Truth? Nobody should."'));
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'leak.raw.json', '--ledger', 'ilse.jsonl', '--out', 'leak.capture.json', '--model-family', 't', '--reviewer', 'r', '--json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.out)).toMatchObject({ review_status: 'draft', failure_labels: ['ledger_authorship_not_checked', 'author_only_leak'] });
    const honest = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'leak.capture.json', '--integrity-only']);
    expect(honest.code).toBe(0);
    expect(honest.out.split('\n')[0]).toBe('leak.capture.json: INTEGRITY ONLY (--integrity-only) — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger (draft: review_status draft, failure_label ledger_authorship_not_checked, failure_label author_only_leak)');

    promote('leak.capture.json', (c) => {
      c.review_status = 'accepted_as_draft';
      c.coordinator_review.failure_labels = [];
    });
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'leak.capture.json']);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter((l) => l.startsWith('leak.capture.json') || l.startsWith('  review:'))).toEqual([
      'leak.capture.json: FAILED',
      '  review: leak.capture.json /review_status: review_status is "accepted_as_draft" but the receipts and the re-run leakage audit give draft (ledger_authorship_not_checked, author_only_leak) [capture_review_mismatch]',
      '  review: leak.capture.json /coordinator_review/failure_labels: failure_labels [] differ from the re-derived ["ledger_authorship_not_checked","author_only_leak"]: missing author_only_leak [capture_review_mismatch]',
    ]);
    expect(r.out.trimEnd().split('\n').at(-1)).toBe('totals: captures 1, ok 0, integrity_only 0, review_unchecked 0, failed 1, invalid 1, trace_failed 0, lock_drift 0, review_mismatch 1, unreadable 0');
    const v = await run(['validate', 'capture', 'leak.capture.json', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.out).reports[0].errors.map((e: { rule: string; pointer: string }) => [e.rule, e.pointer])).toEqual([
      ['capture.leakage_unlabelled', '/coordinator_review/failure_labels'], ['capture.leakage_accepted', '/review_status'],
    ]);

    // Clearing the flag as well passes validate (nothing in the file says leak), but not capture check: the audit is re-run.
    promote('leak.capture.json', (c) => {
      c.leakage_audit.author_only_leak = false;
    });
    const cleared = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'leak.capture.json', '--json']);
    expect(cleared.code).toBe(1);
    const check = JSON.parse(cleared.out).captures[0];
    expect(check.validation.valid).toBe(true);
    expect(check.review.map((f: { code: string; pointer: string; path: string }) => [f.code, f.path, f.pointer])).toEqual([
      ['capture_review_mismatch', 'leak.capture.json', '/review_status'],
      ['capture_review_mismatch', 'leak.capture.json', '/coordinator_review/failure_labels'],
      ['capture_review_mismatch', 'leak.capture.json', '/leakage_audit/author_only_leak'],
    ]);
    expect(check.review[2].message).toBe('leakage_audit.author_only_leak is false but the re-run leakage audit gives true');
  });

  it('fails a capture promoted to accepted_for_training true (or given interventions), whatever its review_status; validate capture refuses the rejected one', async () => {
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'ilse.jsonl', '--out', 'train.capture.json', '--model-family', 't', '--reviewer', 'r', '--json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.out)).toMatchObject({ review_status: 'draft', failure_labels: ['ledger_authorship_not_checked'] });
    promote('train.capture.json', (c) => {
      c.review_status = 'accepted_as_draft';
      c.coordinator_review.failure_labels = [];
      c.coordinator_review.accepted_for_training = true;
    });
    const lines = (out: string) => out.split('\n').filter((l) => l.startsWith('train.capture.json') || l.startsWith('  review:'));
    // Without a key its acceptance is an authorship question (not checked), accepted_for_training an edit (failed).
    const promoted = [
      'train.capture.json: FAILED',
      '  review: train.capture.json /coordinator_review/accepted_for_training: accepted_for_training is true but the re-derived review gives false (loretrace never accepts a capture for training; the re-derived review_status is draft, failure_labels ledger_authorship_not_checked) [capture_review_mismatch]',
      '  review: not checked — review_status "accepted_as_draft" rests on the ledger\'s authorship, which was not checked (no trusted key): re-derived without one it is draft (ledger_authorship_not_checked), so its acceptance is neither upheld nor refused — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault) [capture_review_authorship_not_checked]',
    ];
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'train.capture.json']);
    expect([r.code, lines(r.out)]).toEqual([1, promoted]);
    // Ghostlight's own accepted captures look like this one (accepted_as_draft, no label, true): valid on its own.
    expect((await run(['validate', 'capture', 'train.capture.json'])).code).toBe(0);

    promote('train.capture.json', (c) => {
      c.review_status = 'rejected';
      c.coordinator_review.coordinator_interventions = [{ field: 'spoken_text', reason: 'tidied' }];
    });
    const rejected = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'train.capture.json', '--json']);
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.out).captures[0].review.map((f: { code: string; pointer: string; message: string }) => [f.code, f.pointer, f.message])).toEqual([
      ['capture_review_mismatch', '/coordinator_review/accepted_for_training', 'accepted_for_training is true but the re-derived review gives false (loretrace never accepts a capture for training; the re-derived review_status is draft, failure_labels ledger_authorship_not_checked)'],
      ['capture_review_mismatch', '/coordinator_review/coordinator_interventions', 'coordinator_interventions is a list of 1 intervention but the re-derived review gives [] (the raw output is the responder\'s text byte for byte; loretrace edits nothing)'],
    ]);
    const v = await run(['validate', 'capture', 'train.capture.json', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.out).reports[0].errors.filter((e: { rule: string }) => e.rule === 'capture.training_unaccepted').map((e: { pointer: string; message: string }) => [e.pointer, e.message])).toEqual([
      ['/coordinator_review/accepted_for_training', 'accepted_for_training is true on a capture that is not accepted (review_status rejected)'],
    ]);
  });

  it('fails a draft capture (its ledger cut before the closing record) promoted to accepted_for_training true, with and without --trust-key', async () => {
    const keys = join(tmp.dir, 'train-keys');
    expect((await run(['keygen', '--out', `${keys}/`])).code).toBe(0);
    await ilseLedger(join(tmp.dir, 'cut.jsonl'), { close: false });
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'cut.jsonl', '--out', 'cut.capture.json', '--model-family', 't', '--reviewer', 'r', '--json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.out)).toMatchObject({ review_status: 'draft', failure_labels: ['ledger_not_closed', 'ledger_authorship_not_checked'] });
    promote('cut.capture.json', (c) => {
      c.coordinator_review.accepted_for_training = true;
    });
    const want = 'accepted_for_training is true but the re-derived review gives false (loretrace never accepts a capture for training; the re-derived review_status is draft, failure_labels ledger_not_closed, ledger_authorship_not_checked)';
    for (const trust of [[], ['--trust-key', join(keys, 'runner.pub.pem')]]) {
      const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'cut.capture.json', ...trust, '--json']);
      expect(r.code).toBe(1);
      const review = JSON.parse(r.out).captures[0].review.map((f: { pointer: string; message: string }) => [f.pointer, f.message]);
      expect(review).toContainEqual(['/coordinator_review/accepted_for_training', trust.length ? want.replace('ledger_authorship_not_checked', 'ledger_unsigned') : want]);
    }
    const v = await run(['validate', 'capture', 'cut.capture.json', '--json']);
    expect(JSON.parse(v.out).reports[0].errors.map((e: { rule: string; pointer: string; message: string }) => [e.rule, e.pointer, e.message])).toEqual([
      ['capture.training_unaccepted', '/coordinator_review/accepted_for_training', 'accepted_for_training is true on a capture that is not accepted (review_status draft; failure_labels ledger_not_closed, ledger_authorship_not_checked)'],
    ]);
  });
});

describe('loretrace capture check on FIFOs (refused on the open handle, never blocking)', () => {
  it('reports a capture, a lock and a locked ledger that are FIFOs as coded failures of their capture, and checks the rest', async () => {
    const dir = join(tmp.dir, 'fifo');
    mkdirSync(dir);
    for (const f of ['ilse.capture.json', 'ilse.capture.lock.json', 'ilse.packet.json', 'ilse.raw.json']) copyFileSync(join(tmp.dir, f), join(dir, f));
    copyFileSync(join(tmp.dir, 'mara.capture.json'), join(dir, 'lonely.capture.json'));
    execFileSync('mkfifo', [join(dir, 'ilse.jsonl')]);
    execFileSync('mkfifo', [join(dir, 'pipe.capture.json')]);
    execFileSync('mkfifo', [join(dir, 'lonely.capture.lock.json')]);
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'fifo/pipe.capture.json', 'fifo/lonely.capture.json', 'fifo/ilse.capture.json', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.captures.map((c: { file: string; ok: boolean; error: string | null; error_code: string | null }) => [c.file, c.ok, c.error, c.error_code])).toEqual([
      ['fifo/pipe.capture.json', false, 'cannot read fifo/pipe.capture.json: not a regular file', 'file_not_found'],
      ['fifo/lonely.capture.json', false, 'cannot read fifo/lonely.capture.lock.json: not a regular file', 'file_not_found'],
      ['fifo/ilse.capture.json', false, null, null],
    ]);
    const ilse = report.captures[2];
    expect(ilse.lock.files.find((f: { path: string }) => f.path === 'ilse.jsonl')).toMatchObject({ disposition: 'changed', actual_sha256: null, detail: 'ilse.jsonl is not a regular file (a FIFO, device or folder now stands where the input was): it was not read' });
    expect(report.totals).toEqual({ captures: 3, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 3, invalid: 0, trace_failed: 1, lock_drift: 1, review_mismatch: 1, unreadable: 1 });
    const text = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'fifo/pipe.capture.json']);
    expect(text.out.split('\n').slice(0, 2)).toEqual(['fifo/pipe.capture.json: FAILED', '  error: cannot read fifo/pipe.capture.json: not a regular file [file_not_found]']);
    rmSync(dir, { recursive: true });
  });
});

describe.skipIf(!hasShared)(`every capture written above validates with Ghostlight's original schema${hasShared ? '' : ` (${sharedNotice})`}`, () => {
  it('passes ../shared/ghostlight/schemas/responder-output.schema.json', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validate = ajv.compile(JSON.parse(read(join(GHOSTLIGHT, 'schemas', 'responder-output.schema.json'))));
    expect(written.length).toBe(7);
    for (const f of written) {
      const ok = validate(JSON.parse(read(f)));
      expect({ f, ok, errors: validate.errors ?? null }).toEqual({ f, ok: true, errors: null });
    }
  });
});

describe('a capture held to its lock: verify-trace --lock and capture check', () => {
  const at = (f: string) => join(tmp.dir, 'locked', f);
  const sha = (t: string | Buffer) => createHash('sha256').update(t).digest('hex');
  const totals = (counts: Record<string, number>) => ({
    verified: 0, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, missing_file: 0, policy_violation: 0, drifted: 0, unverifiable: 0,
    unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, ledger_untrusted: 0, seed_not_consulted: 0, claimed_not_read: 0, ledger_not_closed: 0,
    ledger_unsigned: 0, ledger_untrusted_signer: 0, ledger_signature_invalid: 0, ...counts,
  });
  beforeAll(async () => {
    mkdirSync(join(tmp.dir, 'locked'));
    copyFileSync(PROXY_PACKET, at('ilse.packet.json'));
    copyFileSync(ILSE_RAW, at('ilse.raw.json'));
    await ilseLedger(at('ilse.jsonl'));
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'locked/ilse.packet.json', '--raw-output', 'locked/ilse.raw.json', '--ledger', 'locked/ilse.jsonl', '--out', 'locked/ilse.capture.json', '--model-family', 'fixture model', '--reviewer', 'fixture reviewer']);
    expect([r.code, r.err]).toEqual([0, '']);
  });

  it('verify-trace --lock holds the backed entries to the lock\'s policy_receipt and re-hashes the packet it lists: a packet swapped under the lock is packet_changed', async () => {
    const packet = read(at('ilse.packet.json'));
    const args = ['verify-trace', '--lore', FIXTURE_VAULT, 'locked/ilse.capture.json', '--lock', 'locked/ilse.capture.lock.json'];
    const ok = await run([...args, '--json', '--integrity-only']);
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.out);
    expect(report.policy).toMatchObject({ receipt: 'lock locked/ilse.capture.lock.json /policy_receipt', checked: true });
    expect(report.packet_file).toEqual({ file: 'locked/ilse.packet.json', source: 'lock locked/ilse.capture.lock.json', locked_sha256: sha(packet), sha256: sha(packet), disposition: 'unchanged' });
    expect([report.integrity_ok, report.verdict, report.runner_captured]).toEqual([true, 'integrity_only', { checked: 3, failed: 0, ledger_backed: 3 }]);
    const swapped = packet.replace('Two sanctuary berths remain', 'Three sanctuary berths remain');
    expect(swapped).not.toBe(packet);
    writeFileSync(at('ilse.packet.json'), swapped);
    try {
      const bad = await run([...args, '--json']);
      expect(bad.code).toBe(1);
      const r = JSON.parse(bad.out);
      expect(r.packet_file).toEqual({ file: 'locked/ilse.packet.json', source: 'lock locked/ilse.capture.lock.json', locked_sha256: sha(packet), sha256: sha(swapped), disposition: 'packet_changed' });
      // The entries themselves still verify (the ledger pins the locked packet); the swapped file fails the report.
      expect([r.ok, r.totals]).toEqual([false, totals({ verified: 3, unverifiable: 2 })]);
      const text = await run(args);
      expect(text.out).toContain(`  packet: packet_changed    locked/ilse.packet.json: sha256 now ${sha(swapped)}, lock locked/ilse.capture.lock.json records ${sha(packet)} — the packet was swapped or edited under its lock\n`);
    } finally {
      writeFileSync(at('ilse.packet.json'), packet);
    }
  });

  it('capture check re-hashes the packet the capture\'s lock lists and reports packet_file: unchanged, packet_changed, packet_missing', async () => {
    const packet = read(at('ilse.packet.json'));
    const args = ['capture', 'check', '--lore', FIXTURE_VAULT, 'locked/ilse.capture.json'];
    const ok = await run([...args, '--json', '--integrity-only']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).captures[0].trace.packet_file).toEqual({ file: 'locked/ilse.packet.json', source: 'lock locked/ilse.capture.lock.json', locked_sha256: sha(packet), sha256: sha(packet), disposition: 'unchanged' });
    expect((await run(args)).out).toContain(`\n  packet: unchanged         locked/ilse.packet.json (sha256 ${sha(packet).slice(0, 12)} as lock locked/ilse.capture.lock.json records it)\n`);
    const swapped = packet.replace('Two sanctuary berths remain', 'Three sanctuary berths remain');
    writeFileSync(at('ilse.packet.json'), swapped);
    try {
      const bad = await run([...args, '--json']);
      expect(bad.code).toBe(1);
      const c = JSON.parse(bad.out).captures[0];
      expect([c.ok, c.trace.ok, c.trace.packet_file.disposition, c.trace.packet_file.sha256]).toEqual([false, false, 'packet_changed', sha(swapped)]);
      expect((await run(args)).out).toContain(`\n  packet: packet_changed    locked/ilse.packet.json: sha256 now ${sha(swapped)}, lock locked/ilse.capture.lock.json records ${sha(packet)} — the packet was swapped or edited under its lock\n`);
      rmSync(at('ilse.packet.json'));
      const gone = JSON.parse((await run([...args, '--json'])).out).captures[0];
      expect([gone.ok, gone.trace.packet_file.disposition, gone.trace.packet_file.sha256]).toEqual([false, 'packet_missing', null]);
    } finally {
      writeFileSync(at('ilse.packet.json'), packet);
    }
  });

  it('verify-trace re-hashes the packet of a capture fragment held to retrieve\'s lock (the file its ledger session names): packet_changed, packet_missing', async () => {
    mkdirSync(join(tmp.dir, 'fraglocked'));
    const f = (n: string) => join(tmp.dir, 'fraglocked', n);
    const ret = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--policy', DRAFT_POLICY, '--out', 'fraglocked/m.packet.json', '--capture-out', 'fraglocked/m.lore_access.json']);
    expect(ret.code).toBe(0);
    const packet = read(f('m.packet.json'));
    const args = ['verify-trace', '--lore', FIXTURE_VAULT, 'fraglocked/m.lore_access.json'];
    const ok = JSON.parse((await run([...args, '--json'])).out);
    expect([ok.integrity_ok, ok.policy.receipt]).toEqual([true, '/policy_receipt']);
    expect(ok.packet_file).toEqual({ file: 'fraglocked/m.packet.json', source: 'lock fraglocked/m.packet.lock.json', locked_sha256: sha(packet), sha256: sha(packet), disposition: 'unchanged' });
    writeFileSync(f('m.packet.json'), `${packet} `);
    try {
      const bad = await run(args);
      expect(bad.code).toBe(1);
      expect(bad.out).toContain(`\n  packet: packet_changed    fraglocked/m.packet.json: sha256 now ${sha(`${packet} `)}, lock fraglocked/m.packet.lock.json records ${sha(packet)} — the packet was swapped or edited under its lock\n`);
      expect(bad.out).toContain('runner_captured: 1 entry: 1 ledger-backed and verified, 0 failed; session: packet_file packet_changed — FAILED\n');
      rmSync(f('m.packet.json'));
      const gone = JSON.parse((await run([...args, '--json'])).out);
      expect([gone.ok, gone.packet_file.disposition, gone.packet_file.sha256]).toEqual([false, 'packet_missing', null]);
    } finally {
      writeFileSync(f('m.packet.json'), packet);
    }
  });

  it('capture check: a lock whose ledger was swapped for another packet\'s ledger leaves every entry unbacked and the ledger broken against the pinned head', async () => {
    const ledger = read(at('ilse.jsonl'));
    const otherPacket = at('other.packet.json');
    writeFileSync(otherPacket, JSON.stringify({ ...JSON.parse(read(PROXY_PACKET)), packet_id: 'another.packet.v0' }, null, 2));
    const s = await fixtureSession({ ledgerPath: at('other.jsonl'), packetPath: otherPacket, clock: fakeClock() });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.call('lore_read', { ref: `${R.factions}#Movements` });
    await s.close();
    writeFileSync(at('ilse.jsonl'), read(at('other.jsonl')));
    try {
      const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'locked/ilse.capture.json', '--json']);
      expect(r.code).toBe(1);
      const report = JSON.parse(r.out);
      expect(report.totals).toEqual({ captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 1, lock_drift: 1, review_mismatch: 1, unreadable: 0 });
      const trace = report.captures[0].trace;
      expect(trace.totals).toEqual(totals({ unbacked: 3, unverifiable: 2 }));
      expect(trace.ledgers.map((l: { disposition: string; pin_source: string }) => [l.disposition, l.pin_source])).toEqual([['ledger_broken', 'lock locked/ilse.capture.lock.json']]);
      expect(report.captures[0].lock.files.filter((f: { disposition: string }) => f.disposition !== 'unchanged').map((f: { path: string; disposition: string }) => [f.path, f.disposition])).toEqual([['ilse.jsonl', 'changed']]);
    } finally {
      writeFileSync(at('ilse.jsonl'), ledger);
    }
  });
});

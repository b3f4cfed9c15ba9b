/**
 * The Ghostlight loop end to end on the real files of ../shared (skipped, with a notice, when absent):
 * - the Pallas and Lucent packets through `retrieve` (coordinator lane) and then `capture` with the real raw
 *   outputs of Ghostlight's captures (read from them at test time, never copied into the repo);
 * - Lucent's `raw_output_exact` (the subagent's own text, whose relationship updates break the capture schema)
 *   refused, and with --allow-invalid written as a draft;
 * - the Sella research packet through a real ProxySession on the AetheriaLore vault, then `capture --ledger`
 *   with a responder output built from what the session returned;
 * - every capture validated with Ghostlight's ORIGINAL schemas/responder-output.schema.json;
 * - `lock verify` on every lock, then on a swapped packet.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { main } from '../src/cli/main.js';
import { openProxySession } from '../src/proxy/session.js';
import type { ProxyResponse } from '../src/proxy/session.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { fakeClock, tempDir } from './helpers/proxy.js';
import { AETHERIA, FIXTURES, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const PALLAS = 'pallas-training-loop-v0.turn-01.nara-7';
const LUCENT = 'lucent-hostage-feed-v0.turn-06.sol-vant';
const SELLA = join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json');
const A = (p: string) => `AetheriaLore:Aetheria/Worldbuilding/${p}`;
const read = (f: string): string => readFileSync(f, 'utf8');

describe.skipIf(!hasShared)(`capture on the real Ghostlight files (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  let tmp: { dir: string; cleanup: () => void };
  let original: ValidateFunction;
  const at = (f: string) => join(tmp.dir, f);

  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: at('index') }, cwd: tmp.dir });
    return { code, out, err };
  }
  const originalErrors = (file: string) => (original(JSON.parse(read(file))) ? null : original.errors);
  const rawOf = (name: string, key: 'raw_output' | 'raw_output_exact'): string => JSON.parse(read(join(GHOSTLIGHT, 'captures', `${name}.packet.capture.json`)))[key];

  async function retrieveAndCapture(name: string, policy: string, key: 'raw_output' | 'raw_output_exact' = 'raw_output', extra: string[] = []) {
    writeFileSync(at(`${name}.${key}.txt`), rawOf(name, key));
    const r = await run([
      'retrieve', '--lore', AETHERIA, '--packet', join(GHOSTLIGHT, 'packets', `${name}.packet.json`),
      '--projected-context', join(GHOSTLIGHT, 'projected-contexts', `${name}.projected-context.json`),
      '--lane', 'coordinator_scoped_retrieval', '--policy', join(FIXTURES, 'policies', policy),
      '--out', `${name}.${key}.packet.json`, '--capture-out', `${name}.${key}.lore_access.json`,
    ]);
    expect(r.code).toBe(0);
    return run([
      'capture', '--lore', AETHERIA, '--packet', `${name}.${key}.packet.json`, '--raw-output', `${name}.${key}.txt`,
      '--fragment', `${name}.${key}.lore_access.json`, '--out', `${name}.${key}.capture.json`, '--model-family', 'Codex subagent', '--reviewer', 'loretrace e2e', ...extra,
    ]);
  }

  beforeAll(() => {
    tmp = tempDir('loretrace-capture-real-');
    original = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(read(join(GHOSTLIGHT, 'schemas', 'responder-output.schema.json'))));
  });
  afterAll(() => tmp?.cleanup());

  it('Pallas: retrieve then capture — the raw output byte for byte, the fragment mirrored, valid by Ghostlight\'s original schema', async () => {
    const r = await retrieveAndCapture(PALLAS, 'pallas-strikes.policy.json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const c = JSON.parse(read(at(`${PALLAS}.raw_output.capture.json`)));
    const fragment = JSON.parse(read(at(`${PALLAS}.raw_output.lore_access.json`)));
    expect(originalErrors(at(`${PALLAS}.raw_output.capture.json`))).toBeNull();
    expect(c.raw_output).toBe(rawOf(PALLAS, 'raw_output'));
    expect(c.parsed_output).toEqual(JSON.parse(rawOf(PALLAS, 'raw_output')));
    expect(c.capture_id).toBe(`${JSON.parse(read(at(`${PALLAS}.raw_output.packet.json`))).packet_id}.capture`);
    expect(c.lore_access.research_trace).toEqual(fragment.research_trace);
    expect(c.lore_access.consulted_refs).toEqual([A('Pre-Elysium/Timeline/Events/Pallas Species Strikes.md')]);
    expect(c.lore_access.research_trace_status).toBe('runner_captured');
    expect(c.isolation.hidden_context_refs).toEqual(['other participants private state', 'future branch continuation', 'coordinator review rationale']);
    // A fragment is not a ledger: the capture stays draft, and says why.
    expect(c.review_status).toBe('draft');
    expect(c.coordinator_review.failure_labels).toEqual(['trace_not_ledger_backed']);
    // Without the ledger every entry is unbacked (its text still verifies: no trace_not_verified label above).
    const n = fragment.research_trace.length;
    expect(r.out).toContain(`research_trace: ${n} runner_captured entries, ${n} failed (verified 0, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked ${n}, ledger_mismatch 0, ledger_broken 0, seed_not_consulted 0, ledger_not_closed 0)`);
  });

  it('Lucent: retrieve then capture with the normalised raw output — valid by the original schema, no leakage flag', async () => {
    const r = await retrieveAndCapture(LUCENT, 'lucent-media.policy.json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const file = at(`${LUCENT}.raw_output.capture.json`);
    expect(originalErrors(file)).toBeNull();
    const c = JSON.parse(read(file));
    expect(c.lore_access.consulted_refs[0]).toBe(A('Pre-Elysium/Factions/Powers/Major/Lucent Media.md'));
    expect(Object.values(c.leakage_audit).filter((v) => v === true)).toEqual([]);
    expect(c.coordinator_review.failure_labels).toEqual(['trace_not_ledger_backed']);
  });

  it('Lucent\'s exact subagent text is refused (relationship updates without value), and with --allow-invalid is a draft that keeps it unrepaired', async () => {
    const refused = await retrieveAndCapture(LUCENT, 'lucent-media.policy.json', 'raw_output_exact');
    expect(refused.code).toBe(1);
    expect(refused.err.split('\n')[0]).toMatch(/breaks the output contract of .*: 4 contract failures, the first at \/parsed_output\/relationship_update_candidates\/0: .* matches none of the allowed shapes; nothing written .* \[invalid_raw_output\]$/);
    const drafted = await run([
      'capture', '--lore', AETHERIA, '--packet', `${LUCENT}.raw_output_exact.packet.json`, '--raw-output', `${LUCENT}.raw_output_exact.txt`,
      '--fragment', `${LUCENT}.raw_output_exact.lore_access.json`, '--out', `${LUCENT}.raw_output_exact.capture.json`, '--model-family', 'Codex subagent', '--reviewer', 'loretrace e2e', '--allow-invalid', '--json',
    ]);
    expect(drafted.code).toBe(0);
    const c = JSON.parse(read(at(`${LUCENT}.raw_output_exact.capture.json`)));
    expect(c.raw_output).toBe(rawOf(LUCENT, 'raw_output_exact'));
    expect(c.review_status).toBe('draft');
    expect(c.coordinator_review.failure_labels).toEqual(['parsed_output_invalid', 'trace_not_ledger_backed']);
    // Ghostlight's own schema refuses exactly what loretrace refused.
    expect((originalErrors(at(`${LUCENT}.raw_output_exact.capture.json`)) ?? []).filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath)).toEqual([0, 1, 2, 3].map((i) => `/parsed_output/relationship_update_candidates/${i}`));
  });

  it('Sella: a real ProxySession ledger, then capture --ledger — ledger-backed, every seed read, accepted_as_draft at most', async () => {
    const ledger = at('sella.jsonl');
    const session = await openProxySession({ lore: AETHERIA, packetPath: SELLA, ledgerPath: ledger, indexOptions: { persist: false }, clock: fakeClock() });
    const packet = JSON.parse(read(SELLA));
    const data = (r: ProxyResponse) => {
      if (!r.ok) throw new Error(`refused ${r.refusal.code}: ${r.refusal.message}`);
      return (r.result as { data: { ref: string; path: string; chunk_index: number; line_start: number; line_end: number; content: string } }).data;
    };
    const reads = [];
    for (const ref of packet.lore_access.traversal_policy.required_seed_refs as string[]) reads.push(data(await session.call('lore_read', { ref })));
    await session.call('lore_follow', { from_ref: A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md'), target: 'Cryonix' });
    const cryonix = data(await session.call('lore_read', { ref: `${A('Pre-Elysium/Factions/Powers/Major/Cryonix.md')}#chunk0` }));
    await session.close();
    const first = reads[0]!;
    const firstLine = first.content.split('\n')[0]!;
    const raw = JSON.stringify({
      responder_agent_id: 'sella_ren', action_label: packet.visible_context.allowed_action_labels[0],
      visible_action: 'Sella keeps one hand on the intake rail and points the tug toward the last repair cradle.',
      spoken_text: 'One cradle. Heat first, questions after.',
      private_interpretation: 'Maer may be telling the truth about the packet; I cannot know that from here.',
      intended_effect: 'Take the packet in without promising more capacity than the sanctuary has.',
      state_update_candidates: ['The last repair cradle is assigned to Maer\'s tug.'],
      relationship_update_candidates: [{ target_agent_id: 'maer_tidecall', value: 'Sella extends provisional trust, conditioned on heat discipline.' }],
      unresolved_hooks: ['Whether the packet holds a person remains open.'],
      consulted_refs: packet.lore_access.traversal_policy.required_seed_refs,
      followed_refs: [A('Pre-Elysium/Factions/Powers/Major/Cryonix.md')],
      research_trace: [{ trace_id: 'sella.cold_wake', origin: 'responder_reported', query: 'Cold Wake pressure', source_ref: first.ref, source_path: first.path, chunk_index: first.chunk_index, line_start: first.line_start, line_end: first.line_start, extracted_constraint: firstLine, used_for: 'Heat discipline shapes the intake.' }],
      research_summary: 'Cold Wake heat debt and Aya sanctuary capacity constrain the intake to one cradle; Cryonix frames heat as a political cost.',
    });
    writeFileSync(at('sella.raw.json'), raw);
    const r = await run(['capture', '--lore', AETHERIA, '--packet', SELLA, '--raw-output', 'sella.raw.json', '--ledger', 'sella.jsonl', '--out', 'sella.capture.json', '--model-family', 'fixture responder', '--reviewer', 'loretrace e2e']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const c = JSON.parse(read(at('sella.capture.json')));
    expect(originalErrors(at('sella.capture.json'))).toBeNull();
    const exported = await exportLedger(read(ledger), { index: session.index });
    expect(c.lore_access.research_trace).toEqual(exported.research_trace);
    expect(c.lore_access.consulted_refs).toEqual(exported.consulted_refs);
    expect(c.lore_access.followed_refs).toEqual([A('Pre-Elysium/Factions/Powers/Major/Cryonix.md')]);
    expect(c.parsed_output).toEqual(JSON.parse(raw));
    expect(c.lore_access.research_summary).toBe(JSON.parse(raw).research_summary);
    expect(c.review_status).toBe('accepted_as_draft');
    expect(c.coordinator_review.accepted_for_training).toBe(false);
    expect(c.coordinator_review.failure_labels).toEqual([]);
    expect(cryonix.line_start).toBe(1);
    const lock = JSON.parse(read(at('sella.capture.lock.json')));
    expect(lock.ledger).toMatchObject({ path: 'sella.jsonl', head: exported.ledger_head, closed: true });
    expect(lock.trace_bindings.every((b: { disposition: string; ledger_backed: boolean }) => b.disposition === 'verified' && b.ledger_backed)).toBe(true);
  });

  it('lock verify: every lock of the run is ok; a swapped packet file is reported as changed', async () => {
    const ok = await run(['lock', 'verify', '.', '--lore', AETHERIA, '--json']);
    expect(ok.code).toBe(0);
    const totals = JSON.parse(ok.out).totals;
    expect([totals.drift, totals.files_changed, totals.files_missing, totals.snapshot_changed]).toEqual([0, 0, 0, 0]);
    writeFileSync(at(`${PALLAS}.raw_output.packet.json`), read(join(GHOSTLIGHT, 'packets', `${PALLAS}.packet.json`)));
    const swapped = await run(['lock', 'verify', `${PALLAS}.raw_output.packet.lock.json`, `${PALLAS}.raw_output.capture.lock.json`, '--json']);
    expect(swapped.code).toBe(1);
    const reports = JSON.parse(swapped.out).locks as { files: { path: string; disposition: string }[] }[];
    expect(reports.map((l) => l.files.filter((f) => f.disposition !== 'unchanged').map((f) => [f.path, f.disposition]))).toEqual([
      [[`${PALLAS}.raw_output.packet.json`, 'changed']],
      [[`${PALLAS}.raw_output.packet.json`, 'changed']],
    ]);
  });
});

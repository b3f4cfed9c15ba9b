/**
 * The Ghostlight loop end to end on the real files of ../shared (skipped, with a notice, when absent):
 * - the Pallas and Lucent packets through `retrieve` (coordinator lane) and then `capture` with the real raw
 *   outputs of Ghostlight's captures (read from them at test time, never copied into the repo): with the
 *   fragment (`--fragment`: not ledger-backed, draft) and with retrieve's own ledger (`--ledger`: every entry
 *   ledger-backed, then verify-trace and lock verify);
 * - Lucent's `raw_output_exact` (the subagent's own text, whose relationship updates break the capture schema)
 *   refused, and with --allow-invalid written as a draft;
 * - the Sella research packet through a real ProxySession on the AetheriaLore vault, and through the real
 *   `serve --mcp` process (JSON-RPC over stdio), then `capture --ledger` with a responder output built from
 *   what the session returned;
 * - every capture validated with Ghostlight's ORIGINAL schemas/responder-output.schema.json;
 * - `lock verify` on every lock, then on a swapped packet.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { main } from '../src/cli/main.js';
import { openProxySession } from '../src/proxy/session.js';
import type { ProxyResponse } from '../src/proxy/session.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { BIN, fakeClock, tempDir } from './helpers/proxy.js';
import { AETHERIA, FIXTURES, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

const PALLAS = 'pallas-training-loop-v0.turn-01.nara-7';
const LUCENT = 'lucent-hostage-feed-v0.turn-06.sol-vant';
const SELLA = join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json');
const A = (p: string) => `AetheriaLore:Aetheria/Worldbuilding/${p}`;
const read = (f: string): string => readFileSync(f, 'utf8');

/** What a Sella research session returned for one read (the tool result's `data`). */
interface SellaRead { ref: string; path: string; chunk_index: number; line_start: number; line_end: number; content: string }

/**
 * Sella's responder output after a research session: its own consulted/followed refs (the seeds, Cryonix),
 * one responder_reported entry quoting the first line of its first read, and its own research_summary.
 */
function sellaRawOutput(packet: { visible_context: { allowed_action_labels: string[] }; lore_access: { traversal_policy: { required_seed_refs: string[] } } }, first: SellaRead): string {
  return JSON.stringify({
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
    research_trace: [{ trace_id: 'sella.cold_wake', origin: 'responder_reported', query: 'Cold Wake pressure', source_ref: first.ref, source_path: first.path, chunk_index: first.chunk_index, line_start: first.line_start, line_end: first.line_start, extracted_constraint: first.content.split('\n')[0], used_for: 'Heat discipline shapes the intake.' }],
    research_summary: 'Cold Wake heat debt and Aya sanctuary capacity constrain the intake to one cradle; Cryonix frames heat as a political cost.',
  });
}

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

  /**
   * The coordinator lane with its own receipts: `retrieve` writes `<out>.ledger.jsonl`, and `capture --ledger`
   * assembles from it; then `verify-trace` (ledger and the capture's lock) and `lock verify` on both locks.
   */
  async function retrieveAndCaptureFromLedger(name: string, policy: string) {
    const at2 = (suffix: string) => `${name}.ledger-lane.${suffix}`;
    writeFileSync(at(at2('raw.txt')), rawOf(name, 'raw_output'));
    const r = await run([
      'retrieve', '--lore', AETHERIA, '--packet', join(GHOSTLIGHT, 'packets', `${name}.packet.json`),
      '--projected-context', join(GHOSTLIGHT, 'projected-contexts', `${name}.projected-context.json`),
      '--lane', 'coordinator_scoped_retrieval', '--policy', join(FIXTURES, 'policies', policy),
      '--out', at2('packet.json'), '--capture-out', at2('lore_access.json'),
    ]);
    expect(r.code).toBe(0);
    const captured = await run([
      'capture', '--lore', AETHERIA, '--packet', at2('packet.json'), '--raw-output', at2('raw.txt'), '--ledger', at2('packet.ledger.jsonl'),
      '--out', at2('capture.json'), '--model-family', 'Codex subagent', '--reviewer', 'loretrace e2e',
    ]);
    // retrieve ran unsigned here: the checks are integrity only, accepted as such (docs/RECEIPTS.md "Authorship").
    const verified = await run(['verify-trace', '--lore', AETHERIA, at2('capture.json'), '--ledger', at2('packet.ledger.jsonl'), '--lock', at2('capture.lock.json'), '--json', '--integrity-only']);
    const locks = await run(['lock', 'verify', at2('packet.lock.json'), at2('capture.lock.json'), '--lore', AETHERIA, '--json', '--integrity-only']);
    return { captured, verified, locks, file: at(at2('capture.json')), fragment: JSON.parse(read(at(at2('lore_access.json')))), lock: JSON.parse(read(at(at2('capture.lock.json')))) };
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
    expect(r.out).toContain(`research_trace: ${n} runner_captured entries, ${n} failed (verified 0, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked ${n}, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0)`);
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

  // Lucent: the turn's queries match no passage of Lucent Media that links anything (passage relevance ≤ 0.21)
  // and no linked note by itself, so the walk's evidence floor (min_relevance 0.3 by default, docs/TRAVERSAL.md)
  // follows nothing and the seed's excerpt is the one entry; before the floor the walk followed five era and
  // faction notes the draft does not cite (Zhestokost, EternaMind, Corporate Exodus, …), two of them excerpted.
  for (const [name, policy, entries] of [[PALLAS, 'pallas-strikes.policy.json', 4], [LUCENT, 'lucent-media.policy.json', 1]] as const) {
    it(`${name.split('-')[0]}: retrieve then capture --ledger <out>.ledger.jsonl — every entry ledger-backed, accepted_as_draft at most, valid by the original schema; verify-trace and lock verify pass`, async () => {
      const r = await retrieveAndCaptureFromLedger(name, policy);
      expect(r.captured.err).toBe('');
      expect(r.captured.code).toBe(0);
      expect(originalErrors(r.file)).toBeNull();
      const c = JSON.parse(read(r.file));
      expect(c.raw_output).toBe(rawOf(name, 'raw_output'));
      expect(c.lore_access.research_trace).toEqual(r.fragment.research_trace);
      expect(c.lore_access.consulted_refs).toEqual(r.fragment.consulted_refs);
      expect(c.lore_access.followed_refs).toEqual(r.fragment.followed_refs);
      expect(c.lore_access.research_trace.length).toBe(entries);
      // Every receipt check passes; the unsigned ledger's authorship was not checked, so the capture stays a draft.
      expect(c.review_status).toBe('draft');
      expect(c.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
      expect(c.coordinator_review.accepted_for_training).toBe(false);
      expect(r.lock.trace_bindings.map((b: { disposition: string; ledger_backed: boolean }) => [b.disposition, b.ledger_backed])).toEqual(Array(entries).fill(['verified', true]));
      expect(r.verified.code).toBe(0);
      const report = JSON.parse(r.verified.out);
      expect(report.runner_captured).toEqual({ checked: entries, failed: 0, ledger_backed: entries });
      expect(report.ledgers.map((l: { disposition: string; closed: boolean }) => [l.disposition, l.closed])).toEqual([['intact', true]]);
      expect(r.locks.code).toBe(0);
      const t = JSON.parse(r.locks.out).totals;
      expect([t.locks, t.ok, t.integrity_only, t.drift, t.files_changed, t.files_missing, t.snapshot_changed]).toEqual([2, 0, 2, 0, 0, 0, 0]);
    });
  }

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
    const raw = sellaRawOutput(packet, reads[0]!);
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
    expect(c.review_status).toBe('draft');
    expect(c.coordinator_review.accepted_for_training).toBe(false);
    expect(c.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
    expect(cryonix.line_start).toBe(1);
    const lock = JSON.parse(read(at('sella.capture.lock.json')));
    expect(lock.ledger).toMatchObject({ path: 'sella.jsonl', head: exported.ledger_head, closed: true });
    expect(lock.trace_bindings.every((b: { disposition: string; ledger_backed: boolean }) => b.disposition === 'verified' && b.ledger_backed)).toBe(true);
  });

  it.skipIf(!existsSync(join(REPO, 'dist', 'cli', 'main.js')))('Sella through `serve --mcp` (the real CLI over stdio, real tool calls), then capture --ledger, verify-trace and lock verify', async () => {
    const packet = JSON.parse(read(SELLA));
    const seeds = packet.lore_access.traversal_policy.required_seed_refs as string[];
    const cryonix = A('Pre-Elysium/Factions/Powers/Major/Cryonix.md');
    const calls: [string, Record<string, unknown>][] = [
      ...seeds.map((ref): [string, Record<string, unknown>] => ['lore_read', { ref }]),
      ['lore_follow', { from_ref: A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md'), target: 'Cryonix' }],
      ['lore_read', { ref: `${cryonix}#chunk0` }],
    ];
    const requests = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sella responder', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      ...calls.map(([name, args], i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name, arguments: args } })),
    ].map((m) => JSON.stringify(m) + '\n').join('');
    const served = spawnSync(process.execPath, [BIN, 'serve', '--lore', AETHERIA, '--packet', SELLA, '--ledger', at('sella-mcp.jsonl'), '--mcp'], {
      input: requests, cwd: tmp.dir, encoding: 'utf8', env: { ...process.env, LORETRACE_INDEX_DIR: at('serve-index') }, timeout: 120_000,
    });
    expect(served.status).toBe(0);
    const replies = served.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    // Every request answered, no JSON-RPC error and no refused tool call.
    expect(replies.map((r) => [r.id, r.error ?? null, r.result?.isError === true])).toEqual([[0, null, false], ...calls.map((_c, i) => [i + 1, null, false])]);
    const reads = replies.filter((r) => r.result?.structuredContent?.data?.content !== undefined).map((r) => r.result.structuredContent.data);
    expect(reads.map((d) => d.ref)).toEqual([`${A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md')}#chunk0`, ...seeds.slice(1), `${cryonix}#chunk0`]);
    const raw = sellaRawOutput(packet, reads[0]);
    writeFileSync(at('sella-mcp.raw.json'), raw);
    const c = await run(['capture', '--lore', AETHERIA, '--packet', SELLA, '--raw-output', 'sella-mcp.raw.json', '--ledger', 'sella-mcp.jsonl', '--out', 'sella-mcp.capture.json', '--model-family', 'fixture responder', '--reviewer', 'loretrace e2e']);
    expect(c.err).toBe('');
    expect(c.code).toBe(0);
    expect(originalErrors(at('sella-mcp.capture.json'))).toBeNull();
    const capture = JSON.parse(read(at('sella-mcp.capture.json')));
    expect(capture.review_status).toBe('draft');
    expect(capture.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
    expect(capture.lore_access.followed_refs).toEqual([cryonix]);
    // One entry per chunk piece a read served (a whole-note read serves every chunk), covering exactly the notes read.
    const trace = capture.lore_access.research_trace as { source_path: string; line_start: number; line_end: number }[];
    expect([...new Set(trace.map((t) => t.source_path))]).toEqual(reads.map((d) => d.path));
    for (const d of reads) {
      const pieces = trace.filter((t) => t.source_path === d.path);
      expect([pieces[0]!.line_start, pieces.at(-1)!.line_end]).toEqual([d.line_start, d.line_end]);
    }
    const v = await run(['verify-trace', '--lore', AETHERIA, 'sella-mcp.capture.json', '--lock', 'sella-mcp.capture.lock.json', '--json']);
    // serve ran without --signing-key and nothing is trusted: integrity only, exit 1.
    expect([v.code, JSON.parse(v.out).verdict]).toEqual([1, 'integrity_only']);
    const report = JSON.parse(v.out);
    expect(report.runner_captured).toEqual({ checked: trace.length, failed: 0, ledger_backed: trace.length });
    expect(report.seeds.map((sd: { disposition: string }) => sd.disposition)).toEqual(seeds.map(() => 'consulted'));
    expect(report.ledgers.map((l: { disposition: string; pin_source: string }) => [l.disposition, l.pin_source])).toEqual([['intact', 'lock sella-mcp.capture.lock.json']]);
    const lock = await run(['lock', 'verify', 'sella-mcp.capture.lock.json', '--lore', AETHERIA, '--integrity-only']);
    expect(lock.code).toBe(0);
  });

  it('lock verify: every lock of the run is ok; a swapped packet file is reported as changed', async () => {
    const ok = await run(['lock', 'verify', '.', '--lore', AETHERIA, '--json', '--integrity-only']);
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

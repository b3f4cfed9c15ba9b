/**
 * verifyTrace (src/receipts/verify-trace.ts) and `loretrace verify-trace`: every disposition on tampered
 * entries against the FixtureLore vault, input kinds, drift, totals with zeros, bad input.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { main } from '../src/cli/main.js';
import { TRACE_DISPOSITIONS, tokenContainment, verifyTrace } from '../src/receipts/verify-trace.js';
import type { TraceVerificationReport } from '../src/receipts/verify-trace.js';
import type { ResearchTraceEntry } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';
import { buildPacket } from '../src/packet/build.js';
import { openProxySession } from '../src/proxy/session.js';
import { DEFAULT_LIMITS } from '../src/proxy/limits.js';
import { readFileSync } from 'node:fs';

let tmp: string;
let index: VaultIndex;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-verify-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const QUIET = 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md';
const BLACKOUT = 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md';
const OATH = 'Care is counted in beds, air, food and repair hours, and no berth is promised that cannot be kept. ^oath';
const AFTERMATH =
  'Halcyon Mutual rewrote its storm clauses to price thermal posture, and the Meridian Compact promised sanctuary berths to any crew caught in a blackout.\n' +
  'The promise strained the sanctuary capacity of every harbor on the shelf.';

/** A correct runner_captured entry for Quiet Hands line 7 (chunk 1, lines 5-7). */
function oath(over: Partial<ResearchTraceEntry> = {}): ResearchTraceEntry {
  return {
    trace_id: 'T-oath',
    origin: 'runner_captured',
    query: 'sanctuary capacity',
    source_ref: `FixtureLore:${QUIET}#chunk1`,
    source_path: QUIET,
    chunk_index: 1,
    line_start: 7,
    line_end: 7,
    extracted_constraint: OATH,
    used_for: 'capacity pressure',
    ...over,
  };
}

/** A correct runner_captured entry for Brinefall Blackout lines 11-12 (chunk 1, lines 9-13). */
function aftermath(over: Partial<ResearchTraceEntry> = {}): ResearchTraceEntry {
  return {
    trace_id: 'T-aftermath',
    origin: 'runner_captured',
    query: 'blackout sanctuary promise',
    source_ref: `FixtureLore:${BLACKOUT}#chunk1`,
    source_path: BLACKOUT,
    chunk_index: 1,
    line_start: 11,
    line_end: 12,
    extracted_constraint: AFTERMATH,
    used_for: 'scene grounding',
    ...over,
  };
}

function fragment(trace: ResearchTraceEntry[], snapshot?: string): Record<string, unknown> {
  return {
    mode: 'coordinator_scoped_retrieval',
    consulted_refs: [`FixtureLore:${BLACKOUT}`],
    followed_refs: [`FixtureLore:${QUIET}`],
    research_trace: trace,
    research_trace_status: 'runner_captured',
    snapshot_id: snapshot ?? index.snapshot_id,
    policy_receipt: [],
  };
}

const zeroTotals = Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, 0]));

describe('verifyTrace', () => {
  it('checks hand-written runner_captured entries for text (text_verified) but fails them as unbacked, with totals for every disposition', async () => {
    const report = await verifyTrace(index, fragment([oath(), aftermath()]), { file: 'frag.json' });
    expect(report.input_kind).toBe('capture_fragment');
    expect(report.file).toBe('frag.json');
    expect(report.totals).toEqual({ ...zeroTotals, unbacked: 2 });
    expect(Object.keys(report.totals)).toEqual([
      'verified', 'text_mismatch', 'out_of_range', 'chunk_mismatch', 'missing_file', 'policy_violation', 'drifted', 'unverifiable',
      'unbacked', 'ledger_mismatch', 'ledger_broken', 'ledger_untrusted', 'seed_not_consulted', 'claimed_not_read', 'ledger_not_closed', 'ledger_unsigned', 'ledger_untrusted_signer', 'ledger_signature_invalid',
    ]);
    expect(report.runner_captured).toEqual({ checked: 2, failed: 2, ledger_backed: 0 });
    expect(report.ok).toBe(false);
    expect(report.entries.map((e) => e.text_verified)).toEqual([true, true]);
    expect(report.snapshot).toEqual({ current: index.snapshot_id, recorded: index.snapshot_id, drift: false, holding: [] });
    expect(report.policy).toEqual({ receipt: '/policy_receipt', rows: 0, checked: false, allowed_prefixes: [], deny_rows: 0 });
    const unbound = (id: string) => `trace_id "${id}" is not bound to a ledger record (expected <ledger_id>:<seq>:<record_hash prefix>): a hand-written entry can be checked for text but never passes as runner_captured`;
    expect(report.entries.map((e) => [e.pointer, e.trace_id, e.disposition, e.similarity, e.detail])).toEqual([
      ['/research_trace/0', 'T-oath', 'unbacked', 1, unbound('T-oath')],
      ['/research_trace/1', 'T-aftermath', 'unbacked', 1, unbound('T-aftermath')],
    ]);
  });

  it('reports text_mismatch when a runner_captured constraint is not verbatim', async () => {
    const report = await verifyTrace(index, fragment([oath({ extracted_constraint: OATH.replace('beds', 'cots') })]));
    const [e] = report.entries;
    expect(e?.disposition).toBe('text_mismatch');
    expect(e?.similarity).toBe(0.95);
    expect(e?.detail).toBe(
      `extracted_constraint differs from lines 7-7 of ${QUIET} (token containment 0.95); expected the lines verbatim, joined with "\\n"`,
    );
    expect(report.totals).toEqual({ ...zeroTotals, text_mismatch: 1 });
    expect(report.ok).toBe(false);
    expect(report.runner_captured).toEqual({ checked: 1, failed: 1, ledger_backed: 0 });
    expect(e?.text_verified).toBe(false);
  });

  it('reports out_of_range when the lines lie outside the file', async () => {
    const report = await verifyTrace(index, fragment([oath({ line_start: 12, line_end: 14 })]));
    expect(report.entries[0]?.disposition).toBe('out_of_range');
    expect(report.entries[0]?.detail).toBe(
      `lines 12-14 are not inside ${QUIET}, which has 12 lines; expected 1 ≤ line_start ≤ line_end ≤ 12`,
    );
    expect(report.entries[0]?.similarity).toBeNull();
  });

  it('reports out_of_range when line_end is before line_start', async () => {
    const report = await verifyTrace(index, fragment([oath({ line_start: 7, line_end: 6 })]));
    expect(report.entries[0]?.disposition).toBe('out_of_range');
  });

  it('reports chunk_mismatch when the range does not lie inside chunk_index', async () => {
    const report = await verifyTrace(index, fragment([oath({ chunk_index: 2, source_ref: `FixtureLore:${QUIET}#chunk2` })]));
    expect(report.entries[0]?.disposition).toBe('chunk_mismatch');
    expect(report.entries[0]?.detail).toBe(`lines 7-7 are not inside chunk 2 of ${QUIET} (lines 9-12)`);
  });

  it('reports chunk_mismatch when the chunk does not exist', async () => {
    const report = await verifyTrace(index, fragment([oath({ chunk_index: 7, source_ref: `FixtureLore:${QUIET}` })]));
    expect(report.entries[0]?.detail).toBe(`${QUIET} has no chunk 7 (it has 3 chunks)`);
  });

  it('reports chunk_mismatch when the #chunkN fragment disagrees with chunk_index', async () => {
    const report = await verifyTrace(index, fragment([oath({ source_ref: `FixtureLore:${QUIET}#chunk0` })]));
    expect(report.entries[0]?.disposition).toBe('chunk_mismatch');
    expect(report.entries[0]?.detail).toBe('source_ref names chunk 0 but chunk_index is 1');
  });

  it('reports missing_file for a file that is not in the snapshot', async () => {
    const gone = 'World/Pre-Elysium/Factions/Movements/Loud Hands.md';
    const report = await verifyTrace(index, fragment([oath({ source_ref: `FixtureLore:${gone}#chunk1`, source_path: gone })]));
    expect(report.entries[0]?.disposition).toBe('missing_file');
    expect(report.entries[0]?.detail).toBe(`${gone} is not in vault FixtureLore (snapshot ${index.snapshot_id})`);
  });

  it('reports missing_file when source_ref and source_path name different files', async () => {
    const report = await verifyTrace(index, fragment([oath({ source_path: BLACKOUT })]));
    expect(report.entries[0]?.disposition).toBe('missing_file');
    expect(report.entries[0]?.detail).toBe(`source_ref names ${QUIET} but source_path names ${BLACKOUT}; expected both to name the same file`);
  });

  it('reports missing_file for a source_ref of another namespace', async () => {
    const report = await verifyTrace(index, fragment([oath({ source_ref: `AetheriaLore:${QUIET}` })]));
    expect(report.entries[0]?.disposition).toBe('missing_file');
    expect(report.entries[0]?.detail).toMatch(/^source_ref does not name a file of vault FixtureLore: /);
  });

  it('accepts a bare vault path as source_ref', async () => {
    const report = await verifyTrace(index, fragment([oath({ source_ref: QUIET })]));
    expect([report.entries[0]?.disposition, report.entries[0]?.text_verified]).toEqual(['unbacked', true]);
  });

  it('marks coordinator_reconstructed and responder_reported entries unverifiable with a similarity score: never failing, never verified', async () => {
    const paraphrase = 'Care counts beds and air; no berth promised that cannot be kept.';
    const report = await verifyTrace(index, {
      ...fragment([
        oath({ trace_id: 'R1', origin: 'coordinator_reconstructed', extracted_constraint: paraphrase }),
        aftermath({ trace_id: 'R2', origin: 'responder_reported' }),
      ]),
      research_trace_status: 'coordinator_reconstructed',
    });
    expect(report.entries.map((e) => [e.trace_id, e.disposition, e.similarity])).toEqual([
      ['R1', 'unverifiable', 0.9167],
      ['R2', 'unverifiable', 1],
    ]);
    expect(report.entries[1]?.detail).toBe('responder_reported entry: location checked, text not held to verbatim (verbatim match); not proof of the research path');
    expect(report.totals).toEqual({ ...zeroTotals, unverifiable: 2 });
    expect(report.runner_captured).toEqual({ checked: 0, failed: 0, ledger_backed: 0 });
    // Nothing is ledger-backed: every check passed, but nothing shows who wrote the trace.
    expect([report.integrity_ok, report.verdict, report.ok]).toEqual([true, 'integrity_only', false]);
  });

  it('reports drift and which entries still hold when the recorded snapshot differs', async () => {
    const old = 'f'.repeat(64);
    const report = await verifyTrace(index, fragment([oath(), aftermath({ line_start: 10 })], old));
    expect(report.snapshot).toEqual({ current: index.snapshot_id, recorded: old, drift: true, holding: ['T-oath'] });
    expect(report.entries.map((e) => [e.trace_id, e.disposition, e.cause])).toEqual([
      ['T-oath', 'unbacked', null],
      ['T-aftermath', 'drifted', 'text_mismatch'],
    ]);
    expect(report.entries[1]?.detail).toMatch(new RegExp(`^vault changed since the trace was recorded \\(snapshot ${old} → ${index.snapshot_id}\\): extracted_constraint differs from lines 10-12`));
    expect(report.totals).toEqual({ ...zeroTotals, unbacked: 1, drifted: 1 });
    expect(report.ok).toBe(false);
  });

  it('checks both trace arrays of a full capture, with their pointers', async () => {
    const capture = {
      schema_version: 'ghostlight.responder_output.v0',
      lore_access: { mode: 'responder_scoped_repository_search', consulted_refs: [`FixtureLore:${QUIET}`], research_trace: [oath()], research_trace_status: 'runner_captured' },
      parsed_output: { responder_agent_id: 'mara_voss', research_trace: [oath({ trace_id: 'P1', origin: 'responder_reported' })] },
    };
    const report = await verifyTrace(index, capture);
    expect(report.input_kind).toBe('capture');
    expect(report.snapshot.recorded).toBeNull();
    expect(report.entries.map((e) => [e.pointer, e.disposition])).toEqual([
      ['/lore_access/research_trace/0', 'unbacked'],
      ['/parsed_output/research_trace/0', 'unverifiable'],
    ]);
  });

  it('recognises a traverse result and a ledger export', async () => {
    const traverse = { schema_version: 'loretrace.traverse_result.v1', snapshot_id: index.snapshot_id, research_trace: [oath()], decisions: [], stats: {} };
    expect((await verifyTrace(index, traverse)).input_kind).toBe('traverse_result');
    const ledger = { schema_version: 'loretrace.ledger_export.v1', snapshot_id: index.snapshot_id, research_trace: [aftermath()] };
    const report = await verifyTrace(index, ledger);
    expect(report.input_kind).toBe('ledger_export');
    expect(report.totals.unbacked).toBe(1);
  });

  it('is not ok for an empty trace: an empty bundle proves nothing', async () => {
    const report = await verifyTrace(index, fragment([]));
    expect(report.entries).toEqual([]);
    expect(report.totals).toEqual(zeroTotals);
    expect(report.ok).toBe(false);
  });

  it('refuses input that is not an object, has no trace, or has a malformed entry', async () => {
    await expect(verifyTrace(index, [1, 2], { file: 'x.json' })).rejects.toMatchObject({
      code: 'bad_trace_input',
      message: 'x.json: expected a JSON object (a responder output capture, a capture fragment, a traverse result or a ledger export), got an array',
    });
    await expect(verifyTrace(index, { mode: 'curated_excerpts_only', consulted_refs: [] }, { file: 'y.json' })).rejects.toMatchObject({
      code: 'no_research_trace',
      message: 'y.json: no research_trace to verify (looked at /research_trace); a packet_only capture has no trace',
    });
    // A raw responder output is named as one, with the step that makes it verifiable.
    await expect(verifyTrace(index, { responder_agent_id: 'mara_voss', action_label: 'speak', spoken_text: 'Hold the berth.' }, { file: 'raw.json' })).rejects.toMatchObject({
      code: 'no_research_trace',
      message: 'raw.json: no research_trace to verify (looked at /research_trace); this is a raw responder output (no schema_version; keys responder_agent_id, action_label, …), not a capture, capture fragment or ledger export: assemble it into a capture with `loretrace capture --raw-output` first',
    });
    await expect(verifyTrace(index, { a: 1 }, { file: 'a.json' })).rejects.toMatchObject({
      code: 'no_research_trace',
      message: 'a.json: no research_trace to verify (looked at /research_trace); expected a capture, a capture fragment (retrieve --capture-out, ledger export) or a traverse result; this document has keys a',
    });
    const bad = fragment([oath()]);
    (bad['research_trace'] as Record<string, unknown>[])[0]!['line_start'] = '7';
    await expect(verifyTrace(index, bad, { file: 'z.json' })).rejects.toMatchObject({
      code: 'bad_trace_entry',
      message: 'z.json: /research_trace/0/line_start must be an integer from 1 to 9007199254740991 (got "7")',
      details: { pointer: '/research_trace/0/line_start' },
    });
  });
});

describe('tokenContainment', () => {
  it('is the share of the claim tokens found in the source, as a multiset, rounded to 4 decimals', () => {
    expect(tokenContainment('beds and air', 'air, beds, food and water')).toBe(1);
    expect(tokenContainment('beds beds air', 'beds air')).toBe(0.6667);
    expect(tokenContainment('Café NOIR', 'cafe noir')).toBe(0.5);
    expect(tokenContainment('...', 'anything')).toBe(0);
  });
});

describe('loretrace verify-trace', () => {
  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index') }, cwd: tmp });
    return { code, out, err };
  }

  it('prints one line per entry and the totals; a hand-written entry without a ledger exits 1', async () => {
    const file = join(tmp, 'ok.json');
    writeFileSync(file, JSON.stringify(fragment([oath()])));
    const { code, out } = await run(['verify-trace', '--lore', FIXTURE_VAULT, file]);
    expect(code).toBe(1);
    expect(out).toContain('  policy: /policy_receipt is empty; paths not checked against a policy\n');
    expect(out).toContain('  ledger: none given; no runner_captured entry can be ledger-backed\n');
    expect(out).toContain(`  unbacked       T-oath (runner_captured) FixtureLore:${QUIET}#chunk1 L7-L7 chunk 1 similarity 1\n`);
    expect(out).toContain('totals: verified 0, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked 1, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0\n');
    expect(out).toContain('runner_captured: 1 entry: 0 ledger-backed and verified, 1 failed — FAILED\n');
  });

  it('exits 1 with --json when a runner_captured entry fails', async () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(file, JSON.stringify(fragment([oath({ line_end: 99 })])));
    const { code, out } = await run(['verify-trace', '--lore', FIXTURE_VAULT, file, '--json']);
    expect(code).toBe(1);
    const report = JSON.parse(out) as TraceVerificationReport;
    expect(report.totals).toEqual({ ...zeroTotals, out_of_range: 1 });
    expect(report.ok).toBe(false);
  });

  it('exits 2 on a file that is not JSON', async () => {
    const file = join(tmp, 'broken.json');
    writeFileSync(file, '{"research_trace": [}');
    const { code, err } = await run(['verify-trace', '--lore', FIXTURE_VAULT, file]);
    expect(code).toBe(2);
    expect(err).toMatch(/^loretrace: .*broken\.json is not JSON: .* at line 1, column 21 \[bad_json\]\n$/);
  });

  it('verifies a proxy ledger (.jsonl) of a packet built for the responder lane', async () => {
    const draft = JSON.parse(readFileSync(join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json'), 'utf8')) as unknown;
    const policy = JSON.parse(readFileSync(join(FIXTURES, 'packets', 'brinefall-intake.policy.json'), 'utf8')) as import('../src/contracts/types.js').TraversalPolicy;
    const built = await buildPacket(index, draft, { lane: 'responder_scoped_repository_search', policy });
    const packetPath = join(tmp, 'research.packet.json');
    writeFileSync(packetPath, JSON.stringify(built.packet, null, 2) + '\n');
    const ledgerPath = join(tmp, 'session.ledger.jsonl');
    const session = await openProxySession({ lore: FIXTURE_VAULT, packetPath, ledgerPath, limits: DEFAULT_LIMITS, indexOptions: { indexDir: join(tmp, 'index') } });
    const read = await session.call('lore_read', { ref: `FixtureLore:${BLACKOUT}#chunk1` });
    expect(read.ok).toBe(true);
    await session.close();
    const { code, out } = await run(['verify-trace', '--lore', FIXTURE_VAULT, ledgerPath, '--json']);
    const report = JSON.parse(out) as TraceVerificationReport;
    expect(report.input_kind).toBe('proxy_ledger');
    expect(report.entries.map((e) => [e.source_path, e.chunk_index, e.line_start, e.line_end, e.disposition])).toEqual([[BLACKOUT, 1, 9, 13, 'verified']]);
    // An unsigned ledger checked without a trusted key: every check passed, authorship not checked — exit 1.
    expect([report.verdict, report.integrity_ok, code]).toEqual(['integrity_only', true, 1]);
  });
});

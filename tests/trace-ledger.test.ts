/**
 * runner_captured bound to the run (src/receipts/trace-ledger.ts through verifyTrace): every ledger
 * disposition with its exact value — a forged entry, no ledger, a mixed-origin trace, a truncated ledger
 * with and without a pinned head, an edited ledger, a record that served another range, a required seed
 * never read — on a real proxy session over FixtureLore.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import type { TraceDisposition } from '../src/receipts/verify-trace.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import type { LedgerExport } from '../src/receipts/ledger-export.js';
import type { VaultIndex } from '../src/types.js';
import { main } from '../src/cli/main.js';
import { renderVerification } from '../src/cli/commands/verify-trace.js';
import { FIXTURE_VAULT, PROXY_PACKET, PROXY_PACKET_ID, R, fixtureSession, tempDir } from './helpers/proxy.js';
import { canonicalJson, hashLedgerRecord, ledgerIdOf } from '../src/receipts/ledger-record.js';

let index: VaultIndex;
let tmp: { dir: string; cleanup: () => void };
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
});
beforeEach(() => {
  tmp = tempDir('loretrace-trace-ledger-');
});
afterEach(() => tmp.cleanup());

/** A closed session that reads both required seeds (or only the first); its ledger text and export. */
async function session(readBothSeeds = true): Promise<{ path: string; text: string; fragment: LedgerExport }> {
  const path = join(tmp.dir, 'session.jsonl');
  const s = await fixtureSession({ ledgerPath: path });
  await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
  if (readBothSeeds) await s.call('lore_read', { ref: `${R.factions}#chunk0` });
  await s.close();
  const text = readFileSync(path, 'utf8');
  return { path, text, fragment: await exportLedger(text, { index }) };
}

/** totals with every disposition, zeros included, and the given counts. */
function totals(counts: Partial<Record<TraceDisposition, number>>): Record<TraceDisposition, number> {
  return {
    verified: 0, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, missing_file: 0, policy_violation: 0, drifted: 0, unverifiable: 0,
    unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, ledger_untrusted: 0, seed_not_consulted: 0, claimed_not_read: 0, ledger_not_closed: 0,
    ledger_unsigned: 0, ledger_untrusted_signer: 0, ledger_signature_invalid: 0, ...counts,
  };
}

const SHELF_LINES_5_6 = '## Brinefall Shelf\n';
const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

describe('verifyTrace against the ledger', () => {
  it('passes an exported fragment with its ledger: every entry verified and ledger-backed, the ledger intact and pinned by /ledger_head', async () => {
    const { path, text, fragment } = await session();
    const r = await verifyTrace(index, fragment, { file: 'f.json', ledgers: [{ file: path, text }] });
    expect(r.totals).toEqual(totals({ verified: 2 }));
    expect([r.integrity_ok, r.draft, r.runner_captured]).toEqual([true, false, { checked: 2, failed: 0, ledger_backed: 2 }]);
    // Every check passed, but nobody checked who wrote the ledger: integrity only, never plain ok.
    expect([r.verdict, r.ok]).toEqual(['integrity_only', false]);
    const id = fragment.research_trace[0]!.trace_id.split(':')[0]!;
    // Each entry names the TOOL_RESULT that served it (seq 2, 4), not the TOOL_CALL before it (seq 1, 3).
    expect(r.entries.map((e) => [e.disposition, e.ledger_record, e.text_verified])).toEqual([['verified', `${id}:2`, true], ['verified', `${id}:4`, true]]);
    expect(r.ledgers).toEqual([{
      file: path, ledger_id: id, schema_version: 'loretrace.ledger.v4', records: 6, head: fragment.ledger_head,
      pinned_head: fragment.ledger_head, pin_source: 'f.json /ledger_head', closed: true, disposition: 'intact', detail: null,
      authorship: { checked: false, status: 'not_checked', key_id: null, detail: 'authorship not checked (no --trust-key); the ledger is unsigned' },
    }]);
    expect(r.authorship).toEqual({ checked: false, trusted_key_ids: [], note: 'authorship not checked (no --trust-key)' });
    expect(r.seeds).toEqual([
      { ref: R.territories, ledger_id: id, disposition: 'consulted' },
      { ref: R.factions, ledger_id: id, disposition: 'consulted' },
    ]);
  });

  it('fails every entry as unbacked when no ledger is given, keeping the text verdict', async () => {
    const { fragment } = await session();
    const r = await verifyTrace(index, fragment, { file: 'f.json' });
    expect(r.totals).toEqual(totals({ unbacked: 2 }));
    expect([r.ok, r.runner_captured]).toEqual([false, { checked: 2, failed: 2, ledger_backed: 0 }]);
    expect(r.entries.every((e) => e.text_verified === true)).toBe(true);
    expect(r.entries[0]!.detail).toBe(`ledger ${fragment.research_trace[0]!.trace_id.split(':')[0]} is not among the ledgers given (none: pass --ledger); nothing backs record ${fragment.research_trace[0]!.trace_id.split(':').slice(0, 2).join(':')}`);
  });

  it('fails a forged entry (hand-written, labelled runner_captured, text correct) as unbacked', async () => {
    const { path, text, fragment } = await session();
    const forged = { ...fragment.research_trace[0]!, trace_id: 'trace.forged' };
    const r = await verifyTrace(index, { ...fragment, research_trace: [...fragment.research_trace, forged] }, { ledgers: [{ file: path, text }] });
    expect(r.totals).toEqual(totals({ verified: 2, unbacked: 1 }));
    expect(r.ok).toBe(false);
    expect(r.entries[2]).toMatchObject({
      trace_id: 'trace.forged', disposition: 'unbacked', text_verified: true, ledger_record: null,
      detail: 'trace_id "trace.forged" is not bound to a ledger record (expected <ledger_id>:<seq>:<record_hash prefix>): a hand-written entry can be checked for text but never passes as runner_captured',
    });
  });

  it('fails the other-origin entry of a runner_captured trace (mixed origins) as unbacked', async () => {
    const { path, text, fragment } = await session();
    const reported = { ...fragment.research_trace[0]!, trace_id: 'reported.1', origin: 'responder_reported' as const };
    const r = await verifyTrace(index, { ...fragment, research_trace: [...fragment.research_trace, reported] }, { ledgers: [{ file: path, text }] });
    expect(r.research_trace_status).toBe('runner_captured');
    expect(r.totals).toEqual(totals({ verified: 2, unbacked: 1 }));
    expect(r.ok).toBe(false);
    expect(r.entries[2]!.detail).toMatch(/^research_trace_status is runner_captured but this entry's origin is responder_reported: every entry of a runner_captured trace must be a ledger-backed runner_captured entry/);
    // The same entry in a trace that does not claim runner_captured is only unverifiable.
    const relabelled = await verifyTrace(index, { ...fragment, research_trace_status: 'responder_reported', research_trace: [reported] }, { ledgers: [{ file: path, text }] });
    expect(relabelled.totals).toEqual(totals({ unverifiable: 1 }));
  });

  it('fails a ledger cut at a record boundary when the fragment pins its head (no --head), and marks it not closed without a pin', async () => {
    const { path, text, fragment } = await session();
    const cut = text.split('\n').slice(0, 5).join('\n') + '\n'; // SESSION_OPENED, two reads (call and result each); SESSION_CLOSED gone
    writeFileSync(path, cut);
    const pinned = await verifyTrace(index, fragment, { file: 'f.json', ledgers: [{ file: path, text: cut }] });
    expect(pinned.totals).toEqual(totals({ ledger_broken: 2 }));
    expect(pinned.ok).toBe(false);
    expect(pinned.ledgers[0]).toMatchObject({ disposition: 'ledger_broken', records: 5, pinned_head: fragment.ledger_head, pin_source: 'f.json /ledger_head', closed: false });
    expect(pinned.ledgers[0]!.detail).toMatch(/^\[ledger_head_mismatch\] the last record \(seq 4\) has record_hash [0-9a-f]{64}, expected head [0-9a-f]{64}: records are missing at the end or the ledger is another one \(head pinned by f\.json \/ledger_head\)$/);
    const { ledger_head: _h, ...unpinned } = fragment;
    const open = await verifyTrace(index, unpinned, { ledgers: [{ file: path, text: cut }] });
    expect(open.totals).toEqual(totals({ verified: 2, ledger_not_closed: 1 }));
    expect([open.integrity_ok, open.verdict, open.draft, open.ledgers[0]!.disposition]).toEqual([true, 'integrity_only', true, 'ledger_not_closed']);
    // A pin from elsewhere (--head, a lock) fails it too.
    const viaHead = await verifyTrace(index, unpinned, { ledgers: [{ file: path, text: cut }], pins: [{ head: fragment.ledger_head, source: '--head' }] });
    expect(viaHead.totals).toEqual(totals({ ledger_broken: 2 }));
  });

  it('fails every entry of an edited ledger as ledger_broken', async () => {
    const { path, text, fragment } = await session();
    const lines = text.split('\n');
    expect(lines[4]).toContain('"line_end":3,');
    lines[4] = lines[4]!.replace('"line_end":3,', '"line_end":2,');
    const r = await verifyTrace(index, fragment, { ledgers: [{ file: path, text: lines.join('\n') }] });
    expect(r.totals).toEqual(totals({ ledger_broken: 2 }));
    expect(r.ledgers[0]).toMatchObject({ disposition: 'ledger_broken', records: 4 });
    expect(r.ledgers[0]!.detail).toMatch(/^\[ledger_record_hash_mismatch\] seq 4 \(line 5\) has record_hash [0-9a-f]{64}, but its content hashes to [0-9a-f]{64}: the record was edited$/);
  });

  it('fails an entry whose record served another range as ledger_mismatch, though its text is in the vault', async () => {
    const { path, text, fragment } = await session();
    const first = fragment.research_trace[0]!;
    expect([first.source_ref, first.line_start, first.line_end]).toEqual([`${R.territories}#chunk1`, 5, 8]);
    const narrowed = { ...first, source_ref: `${R.territories}#L5-L6`, line_end: 6, extracted_constraint: SHELF_LINES_5_6 };
    const r = await verifyTrace(index, { ...fragment, research_trace: [narrowed, fragment.research_trace[1]!] }, { ledgers: [{ file: path, text }] });
    expect(r.totals).toEqual(totals({ verified: 1, ledger_mismatch: 1 }));
    expect(r.entries[0]).toMatchObject({ disposition: 'ledger_mismatch', text_verified: true });
    expect(r.entries[0]!.detail).toBe(
      `record ${first.trace_id.split(':').slice(0, 2).join(':')} of ${path} served ${R.territories}#chunk1 lines 5-8, but the entry claims source_ref ${R.territories}#L5-L6 (served ${R.territories}#chunk1), lines 5-6 (served 5-8), extracted_constraint with sha256 ${sha(SHELF_LINES_5_6)} (served text ${sha(first.extracted_constraint)})`,
    );
    // A record_hash prefix that is not the record's is ledger_mismatch too.
    const [id, seq] = first.trace_id.split(':');
    const wrongHash = { ...first, trace_id: `${id}:${seq}:000000000000` };
    const w = await verifyTrace(index, { ...fragment, research_trace: [wrongHash] }, { ledgers: [{ file: path, text }] });
    expect(w.totals).toEqual(totals({ ledger_mismatch: 1 }));
  });

  it('reports a required seed never read as seed_not_consulted, naming it', async () => {
    const { path, text, fragment } = await session(false);
    const r = await verifyTrace(index, fragment, { ledgers: [{ file: path, text }] });
    expect(r.totals).toEqual(totals({ verified: 1, seed_not_consulted: 1 }));
    expect(r.ok).toBe(false);
    expect(r.seeds.map((s) => [s.ref, s.disposition])).toEqual([[R.territories, 'consulted'], [R.factions, 'seed_not_consulted']]);
    // The verdict line names the cause when every entry passed: never a bare "0 failed — FAILED".
    expect([r.verdict, r.integrity_ok]).toEqual(['failed', false]);
    expect(renderVerification(r).split('\n').at(-2)).toBe('runner_captured: 1 entry: 1 ledger-backed and verified, 0 failed; session: seed_not_consulted 1 — FAILED');
  });
});

/** The same closed session as {@link session}, for a copy of the proxy packet whose packet_id is `packetId`. */
async function otherPacketSession(packetId: string): Promise<{ path: string; text: string; fragment: LedgerExport }> {
  const packetPath = join(tmp.dir, 'other.packet.json');
  const packet = JSON.parse(readFileSync(PROXY_PACKET, 'utf8')) as Record<string, unknown>;
  writeFileSync(packetPath, JSON.stringify({ ...packet, packet_id: packetId }, null, 2));
  const path = join(tmp.dir, 'other.jsonl');
  const s = await fixtureSession({ ledgerPath: path, packetPath });
  await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
  await s.call('lore_read', { ref: `${R.factions}#chunk0` });
  await s.close();
  const text = readFileSync(path, 'utf8');
  return { path, text, fragment: await exportLedger(text, { index }) };
}

/** Re-chain a ledger after `edit` changed its SESSION_OPENED session: new ledger_id, record_ids, call_record_ids and hashes (a forger's ledger that verifies). */
function rechain(text: string, edit: (session: Record<string, unknown>) => void): string {
  const records = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  edit(records[0]!['session'] as Record<string, unknown>);
  const id = ledgerIdOf(records[0]!['occurred_on'] as string, records[0]!['session']);
  let prev = records[0]!['prev_hash'] as string;
  return records.map((r) => {
    r['ledger_id'] = id;
    r['record_id'] = `${id}:${r['seq'] as number}`;
    if (typeof r['call_record_id'] === 'string') r['call_record_id'] = `${id}:${(r['call_record_id'] as string).split(':')[1]}`;
    r['prev_hash'] = prev;
    r['record_hash'] = hashLedgerRecord(prev, r);
    prev = r['record_hash'] as string;
    return canonicalJson(r);
  }).join('\n') + '\n';
}

/** `trace` re-pointed at the same seqs of `forgedText` (its ledger_id and record hashes): what a forger would hand over with it. */
function rebind(trace: LedgerExport['research_trace'], forgedText: string): LedgerExport['research_trace'] {
  const records = forgedText.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { ledger_id: string; record_hash: string });
  return trace.map((e) => {
    const seq = e.trace_id.split(':')[1]!;
    const r = records[Number(seq)]!;
    return { ...e, trace_id: `${r.ledger_id}:${seq}:${r.record_hash.slice(0, 12)}` };
  });
}

describe('verifyTrace holds a backing ledger to the trace: its packet, its policy, the entry query, one entry per piece', () => {
  it('fails entries backed by a closed ledger of another packet as ledger_mismatch, naming both packet ids', async () => {
    const own = await session();
    const other = await otherPacketSession('another.packet.v0');
    // The fragment of the own packet, its trace swapped for the other session's entries (no ledger_head pin).
    const { ledger_head: _h, ...doc } = { ...own.fragment, research_trace: other.fragment.research_trace };
    const r = await verifyTrace(index, doc, { file: 'f.json', ledgers: [{ file: own.path, text: own.text }, { file: other.path, text: other.text }] });
    expect(r.totals).toEqual(totals({ ledger_mismatch: 2 }));
    expect(r.ok).toBe(false);
    expect(r.entries[0]!.detail).toBe(`ledger ${other.path} pins packet "another.packet.v0" but the trace answers packet "${PROXY_PACKET_ID}" (f.json /packet_id); a ledger backs only the trace of the packet its session served`);
    // A capture names its packet by capture_id (<packet_id>.capture); a caller-given sha256 must match the pinned one.
    const capture = { capture_id: `${PROXY_PACKET_ID}.capture`, parsed_output: {}, lore_access: { research_trace: own.fragment.research_trace } };
    const c = await verifyTrace(index, capture, { file: 'c.json', ledgers: [{ file: own.path, text: own.text }] });
    expect(c.totals).toEqual(totals({ verified: 2 }));
    const s = await verifyTrace(index, capture, { file: 'c.json', ledgers: [{ file: own.path, text: own.text }], packet: { packet_id: PROXY_PACKET_ID, packet_sha256: '0'.repeat(64), source: 'the lock' } });
    expect(s.totals).toEqual(totals({ ledger_mismatch: 2 }));
    expect(s.entries[0]!.detail).toMatch(new RegExp(`^ledger ${own.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} pins packet "${PROXY_PACKET_ID.replace(/\./g, '\\.')}" with sha256 [0-9a-f]{64}, but packet "${PROXY_PACKET_ID.replace(/\./g, '\\.')}" \\(the lock\\) has sha256 0{64}; a ledger backs only the trace of the packet its session served$`));
  });

  it('fails every entry of a forged, re-chained ledger whose session policy hides a note it served: the ledger itself breaks (ledger_policy_violation)', async () => {
    const own = await session();
    const forged = rechain(own.text, (sess) => {
      (sess['policy_receipt'] as unknown[]).push({ clause: R.factions, kind: 'hidden_note', pointer: '/lore_access/hidden_context_audit/0', disposition: 'enforced', rule: `hide ${R.factions}`, matches: 1 });
    });
    await expect(exportLedger(forged, { index })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 5, data: { code: 'ledger_policy_violation' } } });
    const { policy_receipt: _p, ...doc } = { ...own.fragment, research_trace: rebind(own.fragment.research_trace, forged) };
    const r = await verifyTrace(index, doc, { file: 'f.json', ledgers: [{ file: own.path, text: forged }] });
    expect(r.totals).toEqual(totals({ ledger_broken: 2 }));
    const row = (JSON.parse(forged.split('\n')[0]!) as { session: { policy_receipt: unknown[] } }).session.policy_receipt.length - 1;
    expect(r.ledgers[0]!.detail).toBe(`[ledger_policy_violation] seq 4 served ${R.factions}#chunk0 lines 1-3: World/Pre-Elysium/Factions/index.md is hidden lore: policy_receipt row /session/policy_receipt/${row} (hidden_note "${R.factions}") denies it; expected only what the session's policy admits (the policy_receipt of this ledger's SESSION_OPENED)`);
  });

  it('holds ledger-backed entries of a trace without a policy_receipt to the policy of the ledger session: a row only the vault decides (a hidden section)', async () => {
    const own = await session();
    const hide = `${R.factions}#Factions`;
    const forged = rechain(own.text, (sess) => {
      (sess['policy_receipt'] as unknown[]).push({ clause: hide, kind: 'hidden_ref', pointer: '/hidden_context_audit/omitted_context_refs/9', disposition: 'enforced', rule: `never consult ${hide}`, matches: 1 });
    });
    // Without the vault the section cannot be resolved, so the ledger verifies; verify-trace, which has the vault, refuses the entry.
    const fragment = await exportLedger(forged, { index });
    const { policy_receipt: _p, ...doc } = fragment;
    const r = await verifyTrace(index, doc, { file: 'f.json', ledgers: [{ file: own.path, text: forged }] });
    expect(r.totals).toEqual(totals({ verified: 1, policy_violation: 1 }));
    expect(r.ok).toBe(false);
    const row = (JSON.parse(forged.split('\n')[0]!) as { session: { policy_receipt: unknown[] } }).session.policy_receipt.length - 1;
    expect(r.entries[1]!.detail).toBe(`World/Pre-Elysium/Factions/index.md is hidden lore (lines 1-14 are a hidden section): policy_receipt row ${own.path} SESSION_OPENED /session/policy_receipt/${row} (hidden_ref "${hide}") denies it; expected runner_captured entries only from paths the policy admits (the policy of ledger ${own.path}'s session)`);
    // A lock's policy_receipt given by the caller is applied like the input's own.
    const withLock = await verifyTrace(index, doc, { file: 'f.json', ledgers: [{ file: own.path, text: forged }], policyReceipt: { pointer: 'lock x.lock.json /policy_receipt', value: (JSON.parse(forged.split('\n')[0]!) as { session: { policy_receipt: unknown[] } }).session.policy_receipt } });
    expect(withLock.totals).toEqual(totals({ verified: 1, policy_violation: 1 }));
    expect(withLock.policy.receipt).toBe('lock x.lock.json /policy_receipt');
  });

  it('holds ledger-backed entries to the ledger session\'s policy even when the input carries a wider receipt of its own (narrow, never widen)', async () => {
    const own = await session();
    const hide = `${R.factions}#Factions`;
    const forged = rechain(own.text, (sess) => {
      (sess['policy_receipt'] as unknown[]).push({ clause: hide, kind: 'hidden_ref', pointer: '/hidden_context_audit/omitted_context_refs/9', disposition: 'enforced', rule: `never consult ${hide}`, matches: 1 });
    });
    const fragment = await exportLedger(forged, { index });
    // The input keeps the unforged session's receipt, which admits the Factions note: it must not widen the ledger's.
    const wide = own.fragment.policy_receipt;
    const doc = { ...fragment, policy_receipt: wide };
    const r = await verifyTrace(index, doc, { file: 'f.json', ledgers: [{ file: own.path, text: forged }] });
    expect(r.policy.receipt).toBe('/policy_receipt');
    expect(r.totals).toEqual(totals({ verified: 1, policy_violation: 1 }));
    expect(r.ok).toBe(false);
    const row = (JSON.parse(forged.split('\n')[0]!) as { session: { policy_receipt: unknown[] } }).session.policy_receipt.length - 1;
    expect(r.entries[1]!.detail).toBe(`World/Pre-Elysium/Factions/index.md is hidden lore (lines 1-14 are a hidden section): policy_receipt row ${own.path} SESSION_OPENED /session/policy_receipt/${row} (hidden_ref "${hide}") denies it; expected runner_captured entries only from paths the policy admits (the policy of ledger ${own.path}'s session)`);
    // A lock's receipt (the caller's) cannot widen it either.
    const { policy_receipt: _p, ...bare } = doc;
    const withLock = await verifyTrace(index, bare, { file: 'f.json', ledgers: [{ file: own.path, text: forged }], policyReceipt: { pointer: 'lock x.lock.json /policy_receipt', value: wide } });
    expect(withLock.totals).toEqual(totals({ verified: 1, policy_violation: 1 }));
  });

  it('fails a rewritten query and a second entry bound to the same served piece as ledger_mismatch; a dropped entry is allowed', async () => {
    const { path, text, fragment } = await session();
    const [a, b] = fragment.research_trace as [LedgerExport['research_trace'][number], LedgerExport['research_trace'][number]];
    const rewritten = { ...a, query: 'lore_read something else' };
    const q = await verifyTrace(index, { ...fragment, research_trace: [rewritten, b] }, { ledgers: [{ file: path, text }] });
    expect(q.totals).toEqual(totals({ verified: 1, ledger_mismatch: 1 }));
    expect(q.entries[0]!.detail).toBe(`query "lore_read something else", but record ${a.trace_id.split(':').slice(0, 2).join(':')} of ${path} derives query ${JSON.stringify(a.query)}; expected the query the record gives (ledger export)`);
    const d = await verifyTrace(index, { ...fragment, research_trace: [a, b, a] }, { ledgers: [{ file: path, text }] });
    expect(d.totals).toEqual(totals({ verified: 2, ledger_mismatch: 1 }));
    expect(d.entries[2]!.detail).toBe(`duplicate binding: piece 0 of record ${a.trace_id.split(':').slice(0, 2).join(':')} already backs /research_trace/0; each served piece backs one entry of a trace`);
    const dropped = await verifyTrace(index, { ...fragment, research_trace: [b] }, { ledgers: [{ file: path, text }] });
    expect([dropped.totals, dropped.integrity_ok]).toEqual([totals({ verified: 1 }), true]);
  });
});

describe('loretrace verify-trace with ledgers', () => {
  async function cli(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: tmp.dir, env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, '..', `${tmp.dir.split('/').pop()}-idx`) } });
    return { code, stdout, stderr };
  }

  it('verifies many files and folders in one call: per file its dispositions, then totals; exit 1 if any file fails', async () => {
    const { path, fragment } = await session();
    writeFileSync(join(tmp.dir, 'notes.jsonl'), '{"not":"a ledger"}\n');
    writeFileSync(join(tmp.dir, 'good.json'), JSON.stringify(fragment));
    writeFileSync(join(tmp.dir, 'forged.json'), JSON.stringify({ ...fragment, research_trace: [{ ...fragment.research_trace[0]!, trace_id: 'trace.forged' }] }));
    // A FIFO in the folder is never opened (it would block the read) and is listed as skipped, not left out.
    execFileSync('mkfifo', [join(tmp.dir, 'pipe.json')]);
    const one = await cli(['verify-trace', '--lore', FIXTURE_VAULT, 'good.json', '--ledger', path, '--json', '--integrity-only']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ verdict: 'integrity_only', ok: false, integrity_ok: true, totals: totals({ verified: 2 }) });
    const many = await cli(['verify-trace', '--lore', FIXTURE_VAULT, '.', '--json']);
    expect(many.code).toBe(1);
    const set = JSON.parse(many.stdout);
    expect(set.files.filter((f: { error?: unknown }) => f.error)).toEqual([]);
    expect(set.files.map((f: { file: string; report: { verdict: string; input_kind: string } }) => [f.file, f.report.input_kind, f.report.verdict])).toEqual([
      ['forged.json', 'capture_fragment', 'failed'], ['good.json', 'capture_fragment', 'integrity_only'], ['session.jsonl', 'proxy_ledger', 'integrity_only'],
    ]);
    expect(set.skipped).toEqual([{ file: 'pipe.json', reason: 'not a regular file (FIFO); never opened' }, { file: 'notes.jsonl', reason: 'a .jsonl file whose first line is not a loretrace ledger record' }]);
    rmSync(join(tmp.dir, 'pipe.json'));
    expect(set.totals).toEqual({ files: 3, ok: 0, integrity_only: 2, failed: 1, skipped: 2, draft: 0, ...totals({ verified: 4, unbacked: 1 }) });
    const text = await cli(['verify-trace', '--lore', FIXTURE_VAULT, 'good.json', 'forged.json', '--ledger', path]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('2 files: 0 ok, 1 integrity-only, 1 failed, 0 skipped, 0 draft — FAILED\n');
    expect(text.stdout).toContain('totals: verified 2, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked 1, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0\n');
  });
});

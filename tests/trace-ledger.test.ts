/**
 * runner_captured bound to the run (src/receipts/trace-ledger.ts through verifyTrace): every ledger
 * disposition with its exact value — a forged entry, no ledger, a mixed-origin trace, a truncated ledger
 * with and without a pinned head, an edited ledger, a record that served another range, a required seed
 * never read — on a real proxy session over FixtureLore.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
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
import { FIXTURE_VAULT, R, fixtureSession, tempDir } from './helpers/proxy.js';

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
    unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, seed_not_consulted: 0, ledger_not_closed: 0, ...counts,
  };
}

const SHELF_LINES_5_6 = '## Brinefall Shelf\n';
const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

describe('verifyTrace against the ledger', () => {
  it('passes an exported fragment with its ledger: every entry verified and ledger-backed, the ledger intact and pinned by /ledger_head', async () => {
    const { path, text, fragment } = await session();
    const r = await verifyTrace(index, fragment, { file: 'f.json', ledgers: [{ file: path, text }] });
    expect(r.totals).toEqual(totals({ verified: 2 }));
    expect([r.ok, r.draft, r.runner_captured]).toEqual([true, false, { checked: 2, failed: 0, ledger_backed: 2 }]);
    const id = fragment.research_trace[0]!.trace_id.split(':')[0]!;
    expect(r.entries.map((e) => [e.disposition, e.ledger_record, e.text_verified])).toEqual([['verified', `${id}:1`, true], ['verified', `${id}:2`, true]]);
    expect(r.ledgers).toEqual([{
      file: path, ledger_id: id, schema_version: 'loretrace.ledger.v2', records: 4, head: fragment.ledger_head,
      pinned_head: fragment.ledger_head, pin_source: 'f.json /ledger_head', closed: true, disposition: 'intact', detail: null,
    }]);
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
    const cut = text.split('\n').slice(0, 3).join('\n') + '\n'; // SESSION_OPENED, two reads; SESSION_CLOSED gone
    writeFileSync(path, cut);
    const pinned = await verifyTrace(index, fragment, { file: 'f.json', ledgers: [{ file: path, text: cut }] });
    expect(pinned.totals).toEqual(totals({ ledger_broken: 2 }));
    expect(pinned.ok).toBe(false);
    expect(pinned.ledgers[0]).toMatchObject({ disposition: 'ledger_broken', records: 3, pinned_head: fragment.ledger_head, pin_source: 'f.json /ledger_head', closed: false });
    expect(pinned.ledgers[0]!.detail).toMatch(/^\[ledger_head_mismatch\] the last record \(seq 2\) has record_hash [0-9a-f]{64}, expected head [0-9a-f]{64}: records are missing at the end or the ledger is another one \(head pinned by f\.json \/ledger_head\)$/);
    const { ledger_head: _h, ...unpinned } = fragment;
    const open = await verifyTrace(index, unpinned, { ledgers: [{ file: path, text: cut }] });
    expect(open.totals).toEqual(totals({ verified: 2, ledger_not_closed: 1 }));
    expect([open.ok, open.draft, open.ledgers[0]!.disposition]).toEqual([true, true, 'ledger_not_closed']);
    // A pin from elsewhere (--head, a lock) fails it too.
    const viaHead = await verifyTrace(index, unpinned, { ledgers: [{ file: path, text: cut }], pins: [{ head: fragment.ledger_head, source: '--head' }] });
    expect(viaHead.totals).toEqual(totals({ ledger_broken: 2 }));
  });

  it('fails every entry of an edited ledger as ledger_broken', async () => {
    const { path, text, fragment } = await session();
    const lines = text.split('\n');
    expect(lines[2]).toContain('"line_end":3,');
    lines[2] = lines[2]!.replace('"line_end":3,', '"line_end":2,');
    const r = await verifyTrace(index, fragment, { ledgers: [{ file: path, text: lines.join('\n') }] });
    expect(r.totals).toEqual(totals({ ledger_broken: 2 }));
    expect(r.ledgers[0]).toMatchObject({ disposition: 'ledger_broken', records: 2 });
    expect(r.ledgers[0]!.detail).toMatch(/^\[ledger_record_hash_mismatch\] seq 2 \(line 3\) has record_hash [0-9a-f]{64}, but its content hashes to [0-9a-f]{64}: the record was edited$/);
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
    expect(renderVerification(r).split('\n').at(-2)).toBe('runner_captured: 1 checked, 1 ledger-backed, 0 failed — FAILED (seed_not_consulted 1)');
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
    const one = await cli(['verify-trace', '--lore', FIXTURE_VAULT, 'good.json', '--ledger', path, '--json']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ ok: true, totals: totals({ verified: 2 }) });
    const many = await cli(['verify-trace', '--lore', FIXTURE_VAULT, '.', '--json']);
    expect(many.code).toBe(1);
    const set = JSON.parse(many.stdout);
    expect(set.files.filter((f: { error?: unknown }) => f.error)).toEqual([]);
    expect(set.files.map((f: { file: string; report: { ok: boolean; input_kind: string } }) => [f.file, f.report.input_kind, f.report.ok])).toEqual([
      ['forged.json', 'capture_fragment', false], ['good.json', 'capture_fragment', true], ['session.jsonl', 'proxy_ledger', true],
    ]);
    expect(set.skipped).toEqual([{ file: 'notes.jsonl', reason: 'a .jsonl file whose first line is not a loretrace ledger record' }]);
    expect(set.totals).toEqual({ files: 3, ok: 2, failed: 1, skipped: 1, draft: 0, ...totals({ verified: 4, unbacked: 1 }) });
    const text = await cli(['verify-trace', '--lore', FIXTURE_VAULT, 'good.json', 'forged.json', '--ledger', path]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('2 files: 1 ok, 1 failed, 0 skipped, 0 draft — FAILED\n');
    expect(text.stdout).toContain('totals: verified 2, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked 1, ledger_mismatch 0, ledger_broken 0, seed_not_consulted 0, ledger_not_closed 0\n');
  });
});

/**
 * The proxy ledger (seed 004): record hashing, the writer, verification of tampered ledgers,
 * the `--lore` re-check, the capture-fragment export, and the `loretrace ledger` command.
 */
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, LedgerWriter, hashLedgerRecord, verifyLedger } from '../src/receipts/ledger.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { indexVault } from '../src/indexer/build.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { validateDocument } from '../src/contracts/validate.js';
import { main } from '../src/cli/main.js';
import { FIXTURE_VAULT, R, fixtureSession, tempDir } from './helpers/proxy.js';
import { REPO } from './helpers/shared.js';
import type { LedgerSessionInfo } from '../src/receipts/ledger-record.js';

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('loretrace-ledger-');
});
afterEach(() => tmp.cleanup());

/** A closed ledger of a short research session on FixtureLore (or on `lore`); returns its path. */
async function sessionLedger(lore = FIXTURE_VAULT): Promise<string> {
  const path = join(tmp.dir, 'session.jsonl');
  const s = await fixtureSession({ ledgerPath: path, lore });
  await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
  await s.call('lore_read', { ref: R.truth });
  await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
  await s.call('lore_read', { ref: R.blackout, line_start: 5, line_end: 11 });
  await s.close();
  return path;
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').slice(0, -1);
}

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: tmp.dir, env: { ...process.env } });
  return { code, stdout, stderr };
}

describe('hashLedgerRecord', () => {
  it('hashes prev_hash followed by the RFC 8785 form of the record without its hash fields', () => {
    const body = { seq: 1, b: 'é', a: [1, 2], prev_hash: 'x', record_hash: 'y' };
    const expected = createHash('sha256').update(GENESIS_HASH + '{"a":[1,2],"b":"é","seq":1}', 'utf8').digest('hex');
    expect(canonicalize({ seq: 1, b: 'é', a: [1, 2] })).toBe('{"a":[1,2],"b":"é","seq":1}');
    expect(hashLedgerRecord(GENESIS_HASH, body)).toBe(expected);
    expect(hashLedgerRecord(GENESIS_HASH, { a: [1, 2], seq: 1, b: 'é' })).toBe(expected);
  });
});

describe('LedgerWriter', () => {
  it('chains v2 records from the genesis hash, derives ledger_id and record_id, and never opens an existing file', async () => {
    const path = join(tmp.dir, 'w.jsonl');
    const w = LedgerWriter.create(path);
    const system = { kind: 'system' as const, id: 'loretrace-proxy' };
    expect(() => w.append({ kind: 'SESSION_CLOSED', occurred_on: '2025-01-01T00:00:00.000Z', actor: system, totals: {} })).toThrow(expect.objectContaining({ code: 'ledger_bad_record' }));
    const session = { packet_id: 'p' } as unknown as LedgerSessionInfo;
    const a = w.append({ kind: 'SESSION_OPENED', occurred_on: '2025-01-01T00:00:00.000Z', actor: system, session });
    const b = w.append({ kind: 'SESSION_CLOSED', occurred_on: '2025-01-01T00:00:01.000Z', actor: system, totals: { tool_calls: 0 } });
    await w.flush();
    await w.close();
    const id = `lt-${createHash('sha256').update('{"occurred_on":"2025-01-01T00:00:00.000Z","session":{"packet_id":"p"}}', 'utf8').digest('hex').slice(0, 16)}`;
    expect(a).toMatchObject({ schema_version: 'loretrace.ledger.v2', ledger_id: id, seq: 0, record_id: `${id}:0`, canonical_form: 'RFC8785', prev_hash: GENESIS_HASH });
    expect(b).toMatchObject({ ledger_id: id, seq: 1, record_id: `${id}:1`, prev_hash: a.record_hash });
    expect(Object.keys(b)).toEqual(['schema_version', 'ledger_id', 'seq', 'record_id', 'kind', 'occurred_on', 'actor', 'canonical_form', 'totals', 'prev_hash', 'record_hash']);
    expect(lines(path).map((l) => JSON.parse(l).record_hash)).toEqual([a.record_hash, b.record_hash]);
    expect(() => LedgerWriter.create(path)).toThrow(expect.objectContaining({ code: 'ledger_exists' }));
  });
});

describe('verifyLedger', () => {
  it('accepts a closed session ledger and reports its head, totals and packet', async () => {
    const path = await sessionLedger();
    const r = await verifyLedger(readFileSync(path, 'utf8'), { file: 'session.jsonl' });
    expect(r).toMatchObject({
      valid: true, records: 6, verified_through_seq: 5, first_bad_seq: null, closed: true,
      packet_id: 'proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0',
      totals: { tool_calls: 4, ok: 3, refused: 1 }, findings: [],
    });
    expect(r.head_hash).toBe(JSON.parse(lines(path)[5]!).record_hash);
  });

  it('names the first bad seq of an edited record', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    // The record of a read served lines 5-8; claim it served 5-9.
    expect(ls[1]).toContain('"line_end":8,');
    ls[1] = ls[1]!.replace('"line_end":8,', '"line_end":9,');
    const r = await verifyLedger(ls.join('\n') + '\n', { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 1, verified_through_seq: 0, records: 1 });
    expect(r.findings[0]).toMatchObject({ code: 'ledger_record_hash_mismatch', line: 2, path: 'x.jsonl', pointer: '/record_hash' });
  });

  it('catches an edited record whose own hash was recomputed at the next record', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    const rec = JSON.parse(ls[2]!);
    rec.outcome.code = 'not_reached';
    rec.record_hash = hashLedgerRecord(rec.prev_hash, rec);
    ls[2] = JSON.stringify(rec);
    const r = await verifyLedger(ls.join('\n') + '\n');
    expect(r.first_bad_seq).toBe(3);
    expect(r.findings[0]!.code).toBe('ledger_prev_hash_mismatch');
  });

  const TAMPER: { name: string; edit: (ls: string[]) => string[]; seq: number; message: string }[] = [
    {
      name: 'a deleted record', edit: (ls) => [...ls.slice(0, 2), ...ls.slice(3)], seq: 2,
      message: 'line 3 has seq 3, expected 2: a record was deleted, inserted or reordered before it',
    },
    {
      name: 'an inserted record (a copy of seq 2 after itself)', edit: (ls) => [...ls.slice(0, 3), ls[2]!, ...ls.slice(3)], seq: 3,
      message: 'line 4 has seq 2, expected 3: a record was deleted, inserted or reordered before it',
    },
    {
      name: 'two reordered records', edit: (ls) => [ls[0]!, ls[2]!, ls[1]!, ...ls.slice(3)], seq: 1,
      message: 'line 2 has seq 2, expected 1: a record was deleted, inserted or reordered before it',
    },
    {
      // The forged record itself chains correctly; the record after it (the old seq 2) no longer fits.
      name: 'a forged record inserted with a valid seq and hash', seq: 3,
      edit: (ls) => {
        const forged = JSON.parse(ls[2]!);
        forged.kind = 'TOOL_RESULT';
        forged.outcome = { status: 'ok', snapshot_id: forged.outcome.snapshot_id ?? 'x', chars_returned: 0 };
        forged.record_hash = hashLedgerRecord(forged.prev_hash, forged);
        return [...ls.slice(0, 2), JSON.stringify(forged), ...ls.slice(2)];
      },
      message: 'line 4 has seq 2, expected 3: a record was deleted, inserted or reordered before it',
    },
  ];

  it.each(TAMPER)('names the first bad seq of $name', async ({ edit, seq, message }) => {
    const r = await verifyLedger(edit(lines(await sessionLedger())).join('\n') + '\n', { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: seq, verified_through_seq: seq - 1, records: seq });
    expect(r.findings[0]).toMatchObject({ code: 'ledger_seq_mismatch', line: seq + 1, message, pointer: '/seq', path: 'x.jsonl' });
  });

  it('checks SESSION_OPENED policy_receipt rows against the policy-receipt row schema, even with a recomputed hash', async () => {
    const ls = lines(await sessionLedger());
    const start = JSON.parse(ls[0]!);
    expect(start.session.policy_receipt[1]).toEqual({
      clause: 'FixtureLore:World/Pre-Elysium/', kind: 'allowed_prefix', pointer: '/lore_access/traversal_policy/allowed_prefixes/0',
      disposition: 'enforced', rule: 'admit paths under World/Pre-Elysium/ (whole path segments)', matches: 13,
    });
    const forge = (edit: (rows: Record<string, unknown>[]) => void) => {
      const rec = JSON.parse(ls[0]!);
      edit(rec.session.policy_receipt);
      rec.record_hash = hashLedgerRecord(rec.prev_hash, rec);
      return [JSON.stringify(rec), ...ls.slice(1)].join('\n') + '\n';
    };
    const missing = await verifyLedger(forge((rows) => delete rows[1]!.disposition), { file: 'x.jsonl' });
    expect(missing).toMatchObject({ valid: false, first_bad_seq: 0, records: 0 });
    expect(missing.findings).toEqual([{
      code: 'ledger_bad_record', severity: 'error', path: 'x.jsonl', line: 1, pointer: '/session/policy_receipt/1',
      message: "line 1 (seq 0): /session/policy_receipt/1 must have required property 'disposition' (required); expected a record of schemas/ledger-record.schema.json",
    }]);
    const relabelled = await verifyLedger(forge((rows) => (rows[0]!.disposition = 'ignored')), { file: 'x.jsonl' });
    expect(relabelled.findings[0]).toMatchObject({
      code: 'ledger_bad_record', pointer: '/session/policy_receipt/0/disposition',
      message: 'line 1 (seq 0): /session/policy_receipt/0/disposition must be equal to one of the allowed values (enum); expected a record of schemas/ledger-record.schema.json',
    });
  });

  it('refuses a line with a duplicate key whose last value is the hashed one, naming seq and pointer', async () => {
    const ls = lines(await sessionLedger());
    // A reader of line 2 sees seq 5 first; JSON.parse (and so the hash) keeps the last value, 1.
    expect(ls[1]!).toMatch(/^\{"schema_version":"loretrace\.ledger\.v2","ledger_id":"lt-[0-9a-f]{16}","seq":1,/);
    const top = [ls[0]!, ls[1]!.replace('"seq":1,', '"seq":5,"seq":1,'), ...ls.slice(2)];
    const r = await verifyLedger(top.join('\n') + '\n', { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 1, verified_through_seq: 0, records: 1 });
    expect(r.findings).toEqual([{
      code: 'ledger_bad_record', severity: 'error', path: 'x.jsonl', line: 2, pointer: '/seq',
      message: 'line 2 (seq 1): /seq is a duplicate key (column 83); JSON.parse keeps the last value and the record_hash covers only that, so a reader of the line may see a value that was never hashed; expected each key once',
    }]);
    // Nested: a second "ref" inside the arguments of seq 2 (the hash still matches the last-wins parse).
    const ref = JSON.parse(ls[2]!).arguments.ref as string;
    const nested = [...ls.slice(0, 2), ls[2]!.replace(`"arguments":{"ref":${JSON.stringify(ref)}`, `"arguments":{"ref":"FixtureLore:Home.md","ref":${JSON.stringify(ref)}`), ...ls.slice(3)];
    expect(nested[2]).not.toBe(ls[2]);
    const n = await verifyLedger(nested.join('\n') + '\n');
    expect(n.findings.map((f) => [f.code, f.line, f.pointer])).toEqual([['ledger_bad_record', 3, '/arguments/ref']]);
    expect(n.first_bad_seq).toBe(2);
    await expect(exportLedger(nested.join('\n') + '\n', { file: 'x.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 3, data: { code: 'ledger_bad_record' } } });
  });

  it('says a ledger starts with a byte-order mark instead of calling line 1 not JSON', async () => {
    const text = readFileSync(await sessionLedger(), 'utf8');
    const r = await verifyLedger('\uFEFF' + text, { file: 'bom.jsonl' });
    expect(r).toMatchObject({ valid: false, records: 0, verified_through_seq: null, first_bad_seq: 0 });
    expect(r.findings).toEqual([{
      code: 'ledger_bad_json', severity: 'error', path: 'bom.jsonl', line: 1,
      message: 'line 1 (seq 0) starts with a byte-order mark (U+FEFF, bytes EF BB BF); a ledger is written without one — it was re-saved by an editor or converted; expected the first record\'s "{" as the first byte',
    }]);
  });

  it('reports a torn last record and verifies everything before it', async () => {
    const text = readFileSync(await sessionLedger(), 'utf8');
    const cut = text.slice(0, text.length - 40);
    const r = await verifyLedger(cut);
    expect(r).toMatchObject({ valid: false, records: 5, verified_through_seq: 4, first_bad_seq: 5 });
    expect(r.findings[0]!.code).toBe('ledger_torn_record');
  });

  it('detects records cut off at the end against a pinned head, and warns about a ledger never closed', async () => {
    const ls = lines(await sessionLedger());
    const head = JSON.parse(ls[5]!).record_hash as string;
    const shortened = ls.slice(0, 4).join('\n') + '\n';
    const plain = await verifyLedger(shortened);
    expect(plain).toMatchObject({ valid: true, closed: false, verified_through_seq: 3 });
    expect(plain.findings.map((f) => [f.code, f.severity])).toEqual([['ledger_not_closed', 'warning']]);
    const pinned = await verifyLedger(shortened, { head });
    expect(pinned).toMatchObject({ valid: false, first_bad_seq: 4 });
    expect(pinned.findings[0]!.code).toBe('ledger_head_mismatch');
  });

  it('re-checks every returned range against the vault with an index, and finds a changed line', async () => {
    const vault = join(tmp.dir, 'FixtureLore');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    const path = await sessionLedger(vault);
    const text = readFileSync(path, 'utf8');
    const same = await verifyLedger(text, { index: await indexVault(vault, { persist: false, workers: false }) });
    expect(same.valid).toBe(true);
    expect(same.lore).toEqual({ ranges: 3, matched: 3, mismatched: 0, missing: 0, file_changed: 0 });
    const note = join(vault, 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md');
    writeFileSync(note, readFileSync(note, 'utf8').replace('Three convoys were lost', 'Four convoys were lost'));
    const changed = await verifyLedger(text, { index: await indexVault(vault, { persist: false, workers: false }) });
    expect(changed.valid).toBe(false);
    expect(changed.lore).toEqual({ ranges: 3, matched: 2, mismatched: 1, missing: 0, file_changed: 1 });
    expect(changed.findings.map((f) => f.code)).toEqual(['ledger_snapshot_changed', 'ledger_lore_mismatch', 'ledger_lore_file_changed']);
    expect(changed.findings[1]!.message).toBe('seq 4: lines 5-7 of World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md in the vault differ from the text the proxy returned');
    // A returned note deleted from the vault is `ledger_lore_missing`.
    rmSync(join(vault, 'World/Pre-Elysium/Territories.md'));
    const gone = await verifyLedger(text, { index: await indexVault(vault, { persist: false, workers: false }) });
    expect(gone.lore).toEqual({ ranges: 3, matched: 1, mismatched: 1, missing: 1, file_changed: 1 });
    expect(gone.findings.find((f) => f.code === 'ledger_lore_missing')).toMatchObject({
      line: 2, pointer: '/outcome/served',
      message: 'seq 1: World/Pre-Elysium/Territories.md is not a readable indexed note of the vault; expected lines 5-8',
    });
  });
});

describe('exportLedger', () => {
  it('writes one runner_captured entry per served chunk piece, re-derived from the vault and bound to its record, and the fragment verifies', async () => {
    const path = await sessionLedger();
    const index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
    const records = lines(path).map((l) => JSON.parse(l));
    const id = records[0].ledger_id as string;
    const prefix = (seq: number) => (records[seq].record_hash as string).slice(0, 12);
    const fragment = await exportLedger(readFileSync(path, 'utf8'), { index });
    expect(fragment.mode).toBe('responder_scoped_repository_search');
    expect(fragment.research_trace_status).toBe('runner_captured');
    expect(fragment.consulted_refs).toEqual([R.territories]);
    expect(fragment.followed_refs).toEqual([R.blackout]);
    expect(fragment.research_trace.map((e) => [e.trace_id, e.source_ref, e.chunk_index, e.line_start, e.line_end])).toEqual([
      [`${id}:1:${prefix(1)}`, `${R.territories}#chunk1`, 1, 5, 8],
      [`${id}:4:${prefix(4)}`, `${R.blackout}#L5-L7`, 0, 5, 7],
      [`${id}:4.1:${prefix(4)}`, `${R.blackout}#L9-L11`, 1, 9, 11],
    ]);
    expect(id).toMatch(/^lt-[0-9a-f]{16}$/);
    // No lore text in the ledger: a served read holds ref, range and the text's sha256.
    expect(readFileSync(path, 'utf8')).not.toContain('Three convoys were lost');
    expect(records[4].outcome.served[0]).toEqual({
      ref: `${R.blackout}#L5-L7`, path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', chunk_index: 0, line_start: 5, line_end: 7,
      file_sha256: index.manifest.find((f) => f.path === 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md')!.sha256,
      text_sha256: createHash('sha256').update(fragment.research_trace[1]!.extracted_constraint, 'utf8').digest('hex'), via: 'follow', depth: 1,
    });
    expect(fragment.research_trace[1]).toMatchObject({
      origin: 'runner_captured',
      query: `lore_read ${R.blackout} lines 5-11`,
      extracted_constraint: '**Primary actors:** [[Meridian Compact]], [[Halcyon Mutual]], relay keepers\n\nFor nine nights the relay buoys of Kestrel Reach went silent and ships running cold could not be found. Three convoys were lost before the harbors agreed to light the old towers by hand.',
    });
    const verdict = await verifyTrace(index, fragment, { file: 'fragment.json', ledgers: [{ file: path, text: readFileSync(path, 'utf8') }] });
    // Every entry verifies and is backed by its record; the session never read the packet's second required
    // seed, so the file as a whole does not pass (seed_not_consulted names it).
    expect(verdict.totals).toMatchObject({ verified: 3, unbacked: 0, ledger_mismatch: 0, ledger_broken: 0, seed_not_consulted: 1, ledger_not_closed: 0 });
    expect(verdict.runner_captured).toEqual({ checked: 3, failed: 0, ledger_backed: 3 });
    expect(verdict.seeds).toEqual([
      { ref: R.territories, ledger_id: id, disposition: 'consulted' },
      { ref: 'FixtureLore:World/Pre-Elysium/Factions/index.md', ledger_id: id, disposition: 'seed_not_consulted' },
    ]);
    expect(verdict.ok).toBe(false);
  });

  it('produces entries that are valid Ghostlight research_trace entries inside a capture lore_access', async () => {
    const fragment = await exportLedger(readFileSync(await sessionLedger(), 'utf8'), { index: await indexVault(FIXTURE_VAULT, { persist: false, workers: false }) });
    const { snapshot_id: _s, packet_id: _p, policy_receipt: _r, ledger_head: _h, ...loreAccess } = fragment;
    const report = validateDocument('capture', { lore_access: { ...loreAccess, research_summary: 'x' } });
    expect(report.errors.filter((e) => e.pointer.startsWith('/lore_access'))).toEqual([]);
  });

  it('refuses to export when the vault no longer holds the served text (ledger_lore_mismatch), or without the vault (ledger_needs_vault)', async () => {
    const vault = join(tmp.dir, 'FixtureLore');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    const text = readFileSync(await sessionLedger(vault), 'utf8');
    await expect(exportLedger(text, { file: 's.jsonl' })).rejects.toMatchObject({ code: 'ledger_needs_vault' });
    const note = join(vault, 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md');
    writeFileSync(note, readFileSync(note, 'utf8').replace('Three convoys were lost', 'Four convoys were lost'));
    const err = await exportLedger(text, { file: 's.jsonl', index: await indexVault(vault, { persist: false, workers: false }) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ledger_lore_mismatch', details: { file: 's.jsonl', line: 5, pointer: '/outcome/served' } });
    expect((err as Error).message).toMatch(/^seq 4: lines 5-7 of World\/Pre-Elysium\/Timeline\/Events\/Brinefall Blackout\.md no longer hash to the recorded text_sha256 [0-9a-f]{64} \(vault snapshot [0-9a-f]{64}\); the served text cannot be re-derived — nothing exported$/);
  });

  it('still reads, verifies and exports a loretrace.ledger.v1 ledger (text kept in the record)', async () => {
    const text = readFileSync(join(REPO, 'lore-fixtures/artifacts/ledger.harbor.jsonl'), 'utf8');
    const report = await verifyLedger(text, { file: 'ledger.harbor.jsonl' });
    const head = JSON.parse(text.trim().split('\n').at(-1)!).record_hash as string;
    expect(report).toMatchObject({ valid: true, schema_version: 'loretrace.ledger.v1', ledger_id: 'lt-24635f649f04a74e', records: 4, closed: false, head_hash: head });
    expect(report.findings.map((f) => [f.code, f.severity, f.message])).toEqual([
      ['ledger_not_closed', 'warning', 'the ledger ends at seq 3 without a session_end record: the runner did not shut down cleanly (or records were cut off at the end; pass --head to check)'],
    ]);
    const fragment = await exportLedger(text);
    const second = JSON.parse(text.split('\n')[1]!).record_hash as string;
    expect(fragment.research_trace.map((e) => [e.trace_id, e.source_ref, e.extracted_constraint])).toEqual([
      [`lt-24635f649f04a74e:1:${second.slice(0, 12)}`, 'FixtureLore:Coverage/Harbor Ledger.md#L5-L5', 'The Harbor Ledger records every berth granted at Saltmere.'],
    ]);
    expect(fragment.ledger_head).toBe(head);
  });

  it('refuses to export a ledger that does not verify', async () => {
    const ls = lines(await sessionLedger());
    await expect(exportLedger([ls[0], ls[2], ls[1]].join('\n') + '\n', { file: 'bad.jsonl' })).rejects.toMatchObject({
      code: 'ledger_invalid',
      message: expect.stringContaining('ledger bad.jsonl does not verify (first bad seq 1)'),
    });
  });
});

describe('loretrace ledger', () => {
  it('verify prints ok and exits 0; --json gives the report', async () => {
    const path = await sessionLedger();
    const text = await cli(['ledger', 'verify', path]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ok — 6 records \\(seq 0-5\\), chain intact, closed by SESSION_CLOSED; head [0-9a-f]{64}\\n`));
    const json = await cli(['ledger', 'verify', path, '--json', '--lore', FIXTURE_VAULT]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, records: 6, lore: { ranges: 3, matched: 3 } });
  });

  it('verify exits 1 and names the first bad seq of a tampered ledger; a missing file is a usage error', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    writeFileSync(path, [ls[0], ls[1], ls[3], ls[4], ls[5]].join('\n') + '\n');
    const r = await cli(['ledger', 'verify', path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${path}: INVALID — first bad seq 2; 2 records verify (seq 0-1)`);
    expect(r.stdout).toContain(`${path}:3: [ledger_seq_mismatch] line 3 has seq 3, expected 2`);
    const missing = await cli(['ledger', 'verify', join(tmp.dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`loretrace: cannot read ${join(tmp.dir, 'nope.jsonl')}: no such file [file_not_found]\n`);
  });

  it('export writes the capture fragment', async () => {
    const path = await sessionLedger();
    const out = join(tmp.dir, 'lore_access.json');
    const r = await cli(['ledger', 'export', path, '--lore', FIXTURE_VAULT, '--out', out, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ out, research_trace: 3, consulted_refs: 1, followed_refs: 1 });
    const fragment = JSON.parse(readFileSync(out, 'utf8'));
    expect(Object.keys(fragment)).toEqual([
      'mode', 'consulted_refs', 'followed_refs', 'research_trace', 'research_trace_status', 'snapshot_id', 'packet_id', 'policy_receipt', 'ledger_head',
    ]);
    // The written file is what `verify-trace` checks: every runner_captured entry verifies against the vault
    // and is backed by the ledger; the session skipped a required seed, so verify-trace exits 1 for that alone.
    const vt = await cli(['verify-trace', '--lore', FIXTURE_VAULT, out, '--ledger', path, '--json']);
    expect(vt.code).toBe(1);
    expect(JSON.parse(vt.stdout)).toMatchObject({ ok: false, runner_captured: { checked: 3, failed: 0, ledger_backed: 3 }, totals: { verified: 3, text_mismatch: 0, unbacked: 0, seed_not_consulted: 1 } });
    // And what `validate` checks for a fragment (schemas/capture-fragment.schema.json + rules).
    const v = await cli(['validate', 'capture-fragment', out, '--json']);
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ kind: 'capture-fragment', totals: { files: 1, valid: 1, invalid: 0, errors: 0, warnings: 0 } });
  });

  it('verify --head names the first missing seq of a ledger cut off after whole records', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    const head = JSON.parse(ls[5]!).record_hash as string;
    writeFileSync(path, ls.slice(0, 3).join('\n') + '\n');
    const plain = await cli(['ledger', 'verify', path]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('[ledger_not_closed]');
    const pinned = await cli(['ledger', 'verify', path, '--head', head]);
    expect(pinned.code).toBe(1);
    expect(pinned.stdout).toContain(`${path}: INVALID — first bad seq 3; 3 records verify (seq 0-2)`);
  });
});
